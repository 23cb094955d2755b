// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 UDP port 4791: one pair of kernel sockets (IPv4, IPv6) per
 * network namespace, shared by the sroce devices whose netdev lives there.
 * The initial namespace's pair is held for as long as the module is
 * loaded: the distro's rdma_rxe binds the same port when it loads, so
 * whichever comes second fails cleanly instead of the two meeting.
 */
#include <linux/module.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/addrconf.h>
#include <net/udp_tunnel.h>

#include "roce.h"

struct srdma_net {
	struct kref ref;		/* pernet + each device */
	struct mutex lock;		/* users, sockets, dead */
	struct net *net;
	struct socket *sock4;
	struct socket *sock6;
	int users;
	bool dead;			/* namespace is going away */
	struct list_head devs;		/* sroce devices here, RCU */
};

static unsigned int srdma_net_id;
static struct srdma_net *srdma_init_hold;

static int srdma_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct srdma_net *snet = rcu_dereference_sk_user_data(sk);

	if (!snet) {
		kfree_skb(skb);
		return 0;
	}
	return srdma_roce_rcv(snet, skb);
}

static struct socket *srdma_udp_open(struct srdma_net *snet, bool ipv6)
{
	struct udp_tunnel_sock_cfg tnl = {
		.sk_user_data = snet,
		.encap_type = 1,
		.encap_rcv = srdma_encap_rcv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(ROCE_UDP_PORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
		cfg.local_ip.s_addr = htonl(INADDR_ANY);
	}
	err = udp_sock_create(snet->net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(snet->net, sock, &tnl);
	return sock;
}

static void srdma_udp_close(struct srdma_net *snet)
{
	if (snet->sock6)
		udp_tunnel_sock_release(snet->sock6);
	if (snet->sock4)
		udp_tunnel_sock_release(snet->sock4);
	snet->sock6 = NULL;
	snet->sock4 = NULL;
}

static int srdma_udp_open_all(struct srdma_net *snet)
{
	struct socket *sock;

	sock = srdma_udp_open(snet, false);
	if (IS_ERR(sock)) {
		if (PTR_ERR(sock) == -EADDRINUSE)
			pr_err("UDP port %d is already in use in this network namespace%s\n",
			       ROCE_UDP_PORT,
			       net_eq(snet->net, &init_net) ?
			       " (is rdma_rxe loaded? srdma replaces it)" : "");
		return PTR_ERR(sock);
	}
	snet->sock4 = sock;

	/* IPv6 may be disabled or absent; RoCE over IPv4 still works */
	sock = srdma_udp_open(snet, true);
	if (IS_ERR(sock)) {
		if (PTR_ERR(sock) == -EADDRINUSE) {
			pr_err("UDP port %d (IPv6) is already in use\n",
			       ROCE_UDP_PORT);
			srdma_udp_close(snet);
			return -EADDRINUSE;
		}
		sock = NULL;
	}
	snet->sock6 = sock;
	return 0;
}

static void srdma_net_release(struct kref *ref)
{
	kfree(container_of(ref, struct srdma_net, ref));
}

struct srdma_net *srdma_net_get(struct net *net)
{
	struct srdma_net *snet = *(struct srdma_net **)net_generic(net,
								  srdma_net_id);
	int err = 0;

	mutex_lock(&snet->lock);
	if (snet->dead)
		err = -ENODEV;
	else if (!snet->users)
		err = srdma_udp_open_all(snet);
	if (!err) {
		snet->users++;
		kref_get(&snet->ref);
	}
	mutex_unlock(&snet->lock);
	return err ? ERR_PTR(err) : snet;
}

/* An sroce device joins its namespace: socket held, device findable. */
int srdma_net_attach(struct srdma_dev *dev)
{
	struct srdma_net *snet = srdma_net_get(dev_net(dev->ndev));
	struct roce_dev *rdev = to_rdev(dev);

	if (IS_ERR(snet))
		return PTR_ERR(snet);
	mutex_lock(&snet->lock);
	list_add_tail_rcu(&rdev->snet_node, &snet->devs);
	mutex_unlock(&snet->lock);
	rdev->snet = snet;
	return 0;
}

void srdma_net_detach(struct srdma_dev *dev)
{
	struct roce_dev *rdev = to_rdev(dev);
	struct srdma_net *snet = rdev->snet;

	mutex_lock(&snet->lock);
	list_del_rcu(&rdev->snet_node);
	mutex_unlock(&snet->lock);
	synchronize_net();	/* receivers in flight still see the device */
	rdev->snet = NULL;
	srdma_net_put(snet);
}

/* Under RCU: the device of this namespace on @ndev, if any. */
struct srdma_dev *srdma_net_find_dev(struct srdma_net *snet,
				     const struct net_device *ndev)
{
	struct roce_dev *rdev;

	list_for_each_entry_rcu(rdev, &snet->devs, snet_node)
		if (rdev->dev.ndev == ndev)
			return &rdev->dev;
	return NULL;
}

/* Under RCU: the netdev of one of our devices that owns @addr. */
struct net_device *srdma_net_find_dev6(struct srdma_net *snet,
				       const struct in6_addr *addr)
{
	struct roce_dev *rdev;

	list_for_each_entry_rcu(rdev, &snet->devs, snet_node)
		if (ipv6_chk_addr(snet->net, addr, rdev->dev.ndev, 0))
			return rdev->dev.ndev;
	return NULL;
}

void srdma_net_put(struct srdma_net *snet)
{
	mutex_lock(&snet->lock);
	if (!--snet->users)
		srdma_udp_close(snet);
	mutex_unlock(&snet->lock);
	kref_put(&snet->ref, srdma_net_release);
}

static __net_init int srdma_pernet_init(struct net *net)
{
	struct srdma_net *snet = kzalloc(sizeof(*snet), GFP_KERNEL);

	if (!snet)
		return -ENOMEM;
	kref_init(&snet->ref);
	mutex_init(&snet->lock);
	INIT_LIST_HEAD(&snet->devs);
	snet->net = net;
	*(struct srdma_net **)net_generic(net, srdma_net_id) = snet;
	return 0;
}

/*
 * Devices in a dying namespace may still be on their way out (netdev
 * unregister removes them asynchronously): close the sockets now, the
 * devices only drop their reference later.
 */
static __net_exit void srdma_pernet_exit(struct net *net)
{
	struct srdma_net *snet = *(struct srdma_net **)net_generic(net,
								  srdma_net_id);

	mutex_lock(&snet->lock);
	snet->dead = true;
	srdma_udp_close(snet);
	mutex_unlock(&snet->lock);
	kref_put(&snet->ref, srdma_net_release);
}

static struct pernet_operations srdma_net_ops = {
	.init = srdma_pernet_init,
	.exit = srdma_pernet_exit,
	.id = &srdma_net_id,
	.size = sizeof(struct srdma_net *),
};

int srdma_net_init(void)
{
	struct srdma_net *snet;
	int err;

	err = register_pernet_subsys(&srdma_net_ops);
	if (err)
		return err;
	snet = srdma_net_get(&init_net);
	if (IS_ERR(snet)) {
		unregister_pernet_subsys(&srdma_net_ops);
		return PTR_ERR(snet);
	}
	srdma_init_hold = snet;
	return 0;
}

void srdma_net_exit(void)
{
	srdma_net_put(srdma_init_hold);
	unregister_pernet_subsys(&srdma_net_ops);
}
