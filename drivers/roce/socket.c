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

struct roce_net {
	struct kref ref;		/* pernet + each device */
	struct mutex lock;		/* users, sockets, dead */
	struct net *net;
	struct socket *sock4;
	struct socket *sock6;
	int users;
	bool dead;			/* namespace is going away */
	struct list_head devs;		/* sroce devices here, RCU */
};

static unsigned int roce_net_id;
static struct roce_net *roce_init_hold;

static int roce_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct roce_net *rnet = rcu_dereference_sk_user_data(sk);

	if (!rnet) {
		kfree_skb(skb);
		return 0;
	}
	return srdma_roce_rcv(rnet, skb);
}

static struct socket *roce_udp_open(struct roce_net *rnet, bool ipv6)
{
	struct udp_tunnel_sock_cfg tnl = {
		.sk_user_data = rnet,
		.encap_type = 1,
		.encap_rcv = roce_encap_rcv,
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
	err = udp_sock_create(rnet->net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(rnet->net, sock, &tnl);
	return sock;
}

static void roce_udp_close(struct roce_net *rnet)
{
	if (rnet->sock6)
		udp_tunnel_sock_release(rnet->sock6);
	if (rnet->sock4)
		udp_tunnel_sock_release(rnet->sock4);
	rnet->sock6 = NULL;
	rnet->sock4 = NULL;
}

static int roce_udp_open_all(struct roce_net *rnet)
{
	struct socket *sock;

	sock = roce_udp_open(rnet, false);
	if (IS_ERR(sock)) {
		if (PTR_ERR(sock) == -EADDRINUSE)
			pr_err("UDP port %d is already in use in this network namespace%s\n",
			       ROCE_UDP_PORT,
			       net_eq(rnet->net, &init_net) ?
			       " (is rdma_rxe loaded? srdma replaces it)" : "");
		return PTR_ERR(sock);
	}
	rnet->sock4 = sock;

	/* IPv6 may be disabled or absent; RoCE over IPv4 still works */
	sock = roce_udp_open(rnet, true);
	if (IS_ERR(sock)) {
		if (PTR_ERR(sock) == -EADDRINUSE) {
			pr_err("UDP port %d (IPv6) is already in use\n",
			       ROCE_UDP_PORT);
			roce_udp_close(rnet);
			return -EADDRINUSE;
		}
		sock = NULL;
	}
	rnet->sock6 = sock;
	return 0;
}

static void roce_net_release(struct kref *ref)
{
	kfree(container_of(ref, struct roce_net, ref));
}

struct roce_net *roce_net_get(struct net *net)
{
	struct roce_net *rnet = *(struct roce_net **)net_generic(net,
								  roce_net_id);
	int err = 0;

	mutex_lock(&rnet->lock);
	if (rnet->dead)
		err = -ENODEV;
	else if (!rnet->users)
		err = roce_udp_open_all(rnet);
	if (!err) {
		rnet->users++;
		kref_get(&rnet->ref);
	}
	mutex_unlock(&rnet->lock);
	return err ? ERR_PTR(err) : rnet;
}

/* An sroce device joins its namespace: socket held, device findable. */
int roce_net_attach(struct srdma_dev *dev)
{
	struct roce_net *rnet = roce_net_get(dev_net(dev->ndev));
	struct roce_dev *rdev = to_rdev(dev);

	if (IS_ERR(rnet))
		return PTR_ERR(rnet);
	mutex_lock(&rnet->lock);
	list_add_tail_rcu(&rdev->rnet_node, &rnet->devs);
	mutex_unlock(&rnet->lock);
	rdev->rnet = rnet;
	return 0;
}

void roce_net_detach(struct srdma_dev *dev)
{
	struct roce_dev *rdev = to_rdev(dev);
	struct roce_net *rnet = rdev->rnet;

	mutex_lock(&rnet->lock);
	list_del_rcu(&rdev->rnet_node);
	mutex_unlock(&rnet->lock);
	synchronize_net();	/* receivers in flight still see the device */
	rdev->rnet = NULL;
	roce_net_put(rnet);
}

/* Under RCU: the device of this namespace on @ndev, if any. */
struct srdma_dev *roce_net_find_dev(struct roce_net *rnet,
				    const struct net_device *ndev)
{
	struct roce_dev *rdev;

	list_for_each_entry_rcu(rdev, &rnet->devs, rnet_node)
		if (rdev->dev.ndev == ndev)
			return &rdev->dev;
	return NULL;
}

/* Under RCU: the netdev of one of our devices that owns @addr. */
struct net_device *roce_net_find_dev6(struct roce_net *rnet,
				      const struct in6_addr *addr)
{
	struct roce_dev *rdev;

	list_for_each_entry_rcu(rdev, &rnet->devs, rnet_node)
		if (ipv6_chk_addr(rnet->net, addr, rdev->dev.ndev, 0))
			return rdev->dev.ndev;
	return NULL;
}

void roce_net_put(struct roce_net *rnet)
{
	mutex_lock(&rnet->lock);
	if (!--rnet->users)
		roce_udp_close(rnet);
	mutex_unlock(&rnet->lock);
	kref_put(&rnet->ref, roce_net_release);
}

static __net_init int roce_pernet_init(struct net *net)
{
	struct roce_net *rnet = kzalloc(sizeof(*rnet), GFP_KERNEL);

	if (!rnet)
		return -ENOMEM;
	kref_init(&rnet->ref);
	mutex_init(&rnet->lock);
	INIT_LIST_HEAD(&rnet->devs);
	rnet->net = net;
	*(struct roce_net **)net_generic(net, roce_net_id) = rnet;
	return 0;
}

/*
 * Devices in a dying namespace may still be on their way out (netdev
 * unregister removes them asynchronously): close the sockets now, the
 * devices only drop their reference later.
 */
static __net_exit void roce_pernet_exit(struct net *net)
{
	struct roce_net *rnet = *(struct roce_net **)net_generic(net,
								  roce_net_id);

	mutex_lock(&rnet->lock);
	rnet->dead = true;
	roce_udp_close(rnet);
	mutex_unlock(&rnet->lock);
	kref_put(&rnet->ref, roce_net_release);
}

static struct pernet_operations roce_net_ops = {
	.init = roce_pernet_init,
	.exit = roce_pernet_exit,
	.id = &roce_net_id,
	.size = sizeof(struct roce_net *),
};

int roce_net_init(void)
{
	struct roce_net *rnet;
	int err;

	err = register_pernet_subsys(&roce_net_ops);
	if (err)
		return err;
	rnet = roce_net_get(&init_net);
	if (IS_ERR(rnet)) {
		unregister_pernet_subsys(&roce_net_ops);
		return PTR_ERR(rnet);
	}
	roce_init_hold = rnet;
	return 0;
}

void roce_net_exit(void)
{
	roce_net_put(roce_init_hold);
	unregister_pernet_subsys(&roce_net_ops);
}
