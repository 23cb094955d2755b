// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 multicast: UD QPs attached to a multicast GID receive what is
 * sent to the matching IP group. Attaching the first QP joins the group
 * on the netdev (IGMP/MLD, so the NIC and IP accept it); a packet for
 * the multicast QPN goes to every attached QP. Sending needs nothing
 * special: an AH with a multicast GID routes to the group, and IP loops
 * a copy back, so QPs on this very device receive too.
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/ipv6.h>

#include "roce.h"

/* A group and the QPNs attached to it; replaced, never changed, under RCU. */
struct roce_mcg {
	struct list_head node;		/* on rdev->mcast_groups */
	struct rcu_head rcu;
	union ib_gid gid;
	u32 nqp;
	u32 qpn[SRDMA_MAX_MCAST_QP_ATTACH];
};

static bool roce_gid_v4(const union ib_gid *gid)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)gid->raw);
}

static bool roce_gid_is_mcast(const union ib_gid *gid)
{
	if (roce_gid_v4(gid))
		return ipv4_is_multicast(*(__be32 *)(gid->raw + 12));
	return ipv6_addr_is_multicast((const struct in6_addr *)gid->raw);
}

static int roce_mcast_ip4(struct net_device *ndev, __be32 addr, bool join)
{
	struct in_device *in_dev = __in_dev_get_rtnl(ndev);

	if (!in_dev)
		return -ENODEV;
	if (join)
		ip_mc_inc_group(in_dev, addr);
	else
		ip_mc_dec_group(in_dev, addr);
	return 0;
}

/*
 * Join or leave the IP group of @gid on the device's netdev. Both
 * families count users, so rdma_cm's own IPv4 join does not clash.
 */
static int roce_mcast_ip(struct srdma_dev *dev, const union ib_gid *gid,
			 bool join)
{
	const struct in6_addr *a6 = (const struct in6_addr *)gid->raw;
	int err;

	rtnl_lock();
	if (roce_gid_v4(gid))
		err = roce_mcast_ip4(dev->ndev, *(__be32 *)(gid->raw + 12),
				     join);
	else if (join)
		err = ipv6_dev_mc_inc(dev->ndev, a6);
	else
		err = ipv6_dev_mc_dec(dev->ndev, a6);
	rtnl_unlock();
	return err;
}

static struct roce_mcg *roce_mcg_find(struct srdma_dev *dev,
				      const union ib_gid *gid)
{
	struct roce_dev *rdev = to_rdev(dev);
	struct roce_mcg *g;

	list_for_each_entry_rcu(g, &rdev->mcast_groups, node,
				lockdep_is_held(&rdev->mcast_lock))
		if (!memcmp(&g->gid, gid, sizeof(*gid)))
			return g;
	return NULL;
}

int roce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct srdma_dev *dev = qp_dev(qp);
	struct roce_dev *rdev = to_rdev(dev);
	struct roce_mcg *old, *g;
	u32 i;
	int err;

	if (ibqp->qp_type != IB_QPT_UD)
		return -EINVAL;
	if (!roce_gid_is_mcast(gid))
		return -EINVAL;
	mutex_lock(&rdev->mcast_lock);
	old = roce_mcg_find(dev, gid);
	if (old) {
		for (i = 0; i < old->nqp; i++)
			if (old->qpn[i] == ibqp->qp_num) {
				err = 0;	/* attached already */
				goto out;
			}
		err = -ENOMEM;
		if (old->nqp == SRDMA_MAX_MCAST_QP_ATTACH)
			goto out;
	} else {
		err = -ENOMEM;
		if (rdev->nmcast == SRDMA_MAX_MCAST_GRP)
			goto out;
	}
	g = old ? kmemdup(old, sizeof(*g), GFP_KERNEL) :
		  kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		goto out;
	if (!old) {
		g->gid = *gid;
		err = roce_mcast_ip(dev, gid, true);
		if (err) {
			kfree(g);
			goto out;
		}
	}
	g->qpn[g->nqp++] = ibqp->qp_num;
	if (old) {
		list_replace_rcu(&old->node, &g->node);
		kfree_rcu(old, rcu);
	} else {
		list_add_tail_rcu(&g->node, &rdev->mcast_groups);
		rdev->nmcast++;
	}
	err = 0;
out:
	mutex_unlock(&rdev->mcast_lock);
	return err;
}

int roce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct srdma_dev *dev = qp_dev(qp);
	struct roce_dev *rdev = to_rdev(dev);
	struct roce_mcg *old, *g = NULL;
	int err = -EINVAL;
	u32 i;

	mutex_lock(&rdev->mcast_lock);
	old = roce_mcg_find(dev, gid);
	if (!old)
		goto out;
	for (i = 0; i < old->nqp && old->qpn[i] != ibqp->qp_num; i++)
		;
	if (i == old->nqp)
		goto out;
	if (old->nqp > 1) {
		g = kmemdup(old, sizeof(*g), GFP_KERNEL);
		if (!g) {
			/*
			 * A detach must not fail (a dead process's cannot be
			 * retried): in place then. A reader meanwhile may
			 * miss the QP moved into the slot, or see it twice:
			 * a UD datagram lost or duplicated, nothing worse.
			 */
			WRITE_ONCE(old->qpn[i], old->qpn[old->nqp - 1]);
			WRITE_ONCE(old->nqp, old->nqp - 1);
			err = 0;
			goto out;
		}
		g->qpn[i] = g->qpn[--g->nqp];
		list_replace_rcu(&old->node, &g->node);
	} else {
		list_del_rcu(&old->node);
		rdev->nmcast--;
		roce_mcast_ip(dev, gid, false);
	}
	kfree_rcu(old, rcu);
	err = 0;
out:
	mutex_unlock(&rdev->mcast_lock);
	return err;
}

/*
 * A packet for the multicast QPN: every UD QP attached to the group of its
 * destination address gets it. Called under RCU; the skb stays the
 * caller's (UD receive copies the payload out).
 */
void roce_mcast_rcv(struct roce_pkt *pkt)
{
	struct srdma_dev *dev = pkt->dev;
	union ib_gid gid;
	struct roce_mcg *g;
	u32 i;

	if (pkt->ipv6)
		memcpy(gid.raw, &pkt->ip6->daddr, sizeof(gid.raw));
	else
		ipv6_addr_set_v4mapped(pkt->ip4->daddr,
				       (struct in6_addr *)gid.raw);
	rcu_read_lock();
	g = roce_mcg_find(dev, &gid);
	if (!g) {
		rcu_read_unlock();
		roce_count(dev, ROCE_CNT_RX_BAD_QP);
		return;
	}
	/* a detach short of memory changes a group in place (above) */
	for (i = 0; i < READ_ONCE(g->nqp); i++) {
		pkt->qp = srdma_qp_get(dev, READ_ONCE(g->qpn[i]));
		if (!pkt->qp)
			continue;
		if (pkt->qp->ibqp.qp_type == IB_QPT_UD)
			roce_resp_rcv(pkt);
		srdma_qp_put(pkt->qp);
	}
	rcu_read_unlock();
	pkt->qp = NULL;
}

void roce_mcast_init(struct srdma_dev *dev)
{
	struct roce_dev *rdev = to_rdev(dev);

	INIT_LIST_HEAD(&rdev->mcast_groups);
	mutex_init(&rdev->mcast_lock);
}

/* The device goes: drop groups a kernel consumer left attached. */
void roce_mcast_fini(struct srdma_dev *dev)
{
	struct roce_dev *rdev = to_rdev(dev);
	struct roce_mcg *g, *tmp;

	list_for_each_entry_safe(g, tmp, &rdev->mcast_groups, node) {
		list_del_rcu(&g->node);
		roce_mcast_ip(dev, &g->gid, false);
		kfree_rcu(g, rcu);
	}
	rdev->nmcast = 0;
	mutex_destroy(&rdev->mcast_lock);
}
