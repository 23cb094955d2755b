// SPDX-License-Identifier: GPL-2.0
/*
 * The RoCEv2 transport: device set-up on the namespace's UDP socket and
 * the per-QP protocol state that follows the QP through its states.
 */
#include <linux/module.h>
#include <linux/udp.h>
#include <net/ipv6.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pack.h>
#include <rdma/rdma_netlink.h>

#include "roce.h"

/* the core allocates a roce_dev as if it were an srdma_dev */
static_assert(offsetof(struct roce_dev, dev) == 0);

static int srdma_roce_dev_init(struct srdma_dev *dev)
{
	roce_cc_dev_init(dev);
	roce_mcast_init(dev);
	return roce_net_attach(dev);
}

static void srdma_roce_dev_fini(struct srdma_dev *dev)
{
	roce_net_detach(dev);
	roce_mcast_fini(dev);
}

static int roce_qp_init(struct srdma_qp *qp)
{
	struct roce_qp *rqp = kzalloc(sizeof(*rqp), GFP_KERNEL);
	int err;

	if (!rqp)
		return -ENOMEM;
	rqp->qp = qp;
	spin_lock_init(&rqp->lock);
	spin_lock_init(&rqp->rwqe_lock);
	__skb_queue_head_init(&rqp->reorder);
	roce_req_timers_init(rqp);
	roce_cc_qp_init(rqp);
	roce_ack_init(rqp);
	roce_resp_init(rqp);
	err = roce_qp_net_init(rqp);
	if (err)
		goto err_free;
	err = roce_txq_init(rqp);
	if (err)
		goto err_net;
	if (qp->ibqp.qp_type == IB_QPT_RC) {
		/* one until modify_qp sets max_dest_rd_atomic (INIT to RTR) */
		err = roce_resp_grow(rqp, 1);
		if (err)
			goto err_txq;
	}
	qp->tp_priv = rqp;
	return 0;

err_txq:
	roce_txq_fini(rqp);
err_net:
	roce_qp_net_fini(rqp);
err_free:
	kfree(rqp);
	return err;
}

static void roce_qp_destroy(struct srdma_qp *qp)
{
	struct roce_qp *rqp = to_rqp(qp);

	spin_lock_bh(&rqp->lock);
	rqp->dead = true;
	roce_reorder_purge(rqp);
	spin_unlock_bh(&rqp->lock);
	roce_txq_detach(rqp);		/* before the pace timer stops */
	del_timer_sync(&rqp->retrans_timer);
	del_timer_sync(&rqp->rnr_timer);
	roce_cc_stop_sync(rqp);		/* before tx_work: it queues that */
	cancel_work_sync(&rqp->tx_work);
	cancel_delayed_work_sync(&rqp->rd_work);
	roce_ack_fini(rqp);
	roce_resp_destroy(rqp);
	roce_qp_net_fini(rqp);
	roce_txq_fini(rqp);
	kfree(rqp->res);
	kfree(rqp);
	qp->tp_priv = NULL;
}

static int roce_modify_qp_prepare(struct srdma_qp *qp,
				  const struct ib_qp_attr *attr, int mask)
{
	if (qp->ibqp.qp_type != IB_QPT_RC ||
	    !(mask & IB_QP_MAX_DEST_RD_ATOMIC))
		return 0;
	return roce_resp_grow(to_rqp(qp), attr->max_dest_rd_atomic);
}

/*
 * A new incarnation's responder (RTR) or requester (RTS from INIT or RTR)
 * starts from the PSNs just set, and is reset here, before the state is
 * stored: a packet, a doorbell, ring_work or a timer acts on the new
 * state as soon as it is, and each checks the state under (or before it
 * takes) rqp->lock, so finds the reset done. (The RNR timer checks
 * nothing, but runs only from RTS or SQD until a reset stops it.) The QP
 * is still in @cur, which runs neither: INIT (RTR's only way in) takes
 * no packets, RTR starts no WQEs and takes no responses.
 */
static void roce_qp_state_changing(struct srdma_qp *qp, enum ib_qp_state cur,
				   enum ib_qp_state next)
{
	struct roce_qp *rqp = to_rqp(qp);

	switch (next) {
	case IB_QPS_RTR:
		spin_lock_bh(&rqp->lock);
		roce_resp_reset(rqp);
		roce_qp_src_port(qp);
		dst_cache_reset(&rqp->dst_cache);
		spin_unlock_bh(&rqp->lock);
		break;
	case IB_QPS_RTS:
		if (cur != IB_QPS_RTR && cur != IB_QPS_INIT)
			break;
		spin_lock_bh(&rqp->lock);
		roce_req_reset(rqp);
		roce_qp_src_port(qp);
		spin_unlock_bh(&rqp->lock);
		break;
	default:
		break;
	}
}

static void roce_qp_state_changed(struct srdma_qp *qp, enum ib_qp_state old)
{
	struct roce_qp *rqp = to_rqp(qp);
	enum ib_qp_state state = READ_ONCE(qp->state);

	/*
	 * The line rate congestion control climbs back to (sleeps; asks
	 * the NIC driver, so not on every connection while CC is off).
	 */
	if (state == IB_QPS_RTS && old != IB_QPS_SQD &&
	    READ_ONCE(to_rdev(qp_dev(qp))->cc.enable))
		roce_cc_refresh_speed(qp_dev(qp));
	spin_lock_bh(&rqp->lock);
	switch (state) {
	case IB_QPS_RESET:
		rqp->req_cur = 0;
		rqp->req_ack = 0;
		rqp->resetting = false;
		roce_resp_reset(rqp);
		break;
	case IB_QPS_RTS:
		/* back from SQD: start what waited there */
		if (old == IB_QPS_SQD)
			roce_req_run(rqp);
		break;
	default:
		break;
	}
	spin_unlock_bh(&rqp->lock);
	if (state == IB_QPS_SQD)
		roce_req_sqd_check(rqp);
	if (state == IB_QPS_ERR || state == IB_QPS_RESET) {
		del_timer_sync(&rqp->retrans_timer);
		del_timer_sync(&rqp->rnr_timer);
		roce_cc_stop_sync(rqp);
		spin_lock_bh(&rqp->lock);
		rqp->rnr_wait = false;
		rqp->req_cur = qp->sq_cons;
		rqp->req_ack = qp->sq_cons;
		roce_reorder_purge(rqp);
		roce_rd_cancel(rqp);
		spin_unlock_bh(&rqp->lock);
	}
}

/*
 * To RESET, before the core empties the rings: the requester and the
 * completer must not walk them meanwhile, or one that is under way
 * when sq_fetch drops back to 0 follows its old position round the
 * whole counter space (2^32 slots, bottom halves off), and sends and
 * completes stale WQEs. They stop here until the RESET is through.
 */
static void roce_qp_reset(struct srdma_qp *qp)
{
	struct roce_qp *rqp = to_rqp(qp);

	spin_lock_bh(&rqp->lock);
	rqp->resetting = true;
	spin_unlock_bh(&rqp->lock);
	del_timer_sync(&rqp->retrans_timer);
	del_timer_sync(&rqp->rnr_timer);
	roce_cc_stop_sync(rqp);		/* before tx_work: it queues that */
	cancel_work_sync(&rqp->tx_work);
}

/*
 * The QP is in ERR (a fatal error, maybe from under rqp->lock or with
 * interrupts off, or a modify): only the receive held for a message in
 * progress needs us, before the core flushes the ring; the rest stops
 * on the state.
 */
static void roce_qp_recv_flush(struct srdma_qp *qp)
{
	struct roce_qp *rqp = to_rqp(qp);

	if (rqp)
		roce_resp_flush(rqp);
}

/* What only RoCE offers: P_Key and Q_Key violation counts, multicast. */
static void roce_query_device(struct srdma_dev *dev,
			      struct ib_device_attr *attr)
{
	attr->device_cap_flags |= IB_DEVICE_BAD_PKEY_CNTR |
				  IB_DEVICE_BAD_QKEY_CNTR;
	attr->max_mcast_grp = SRDMA_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SRDMA_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach =
		SRDMA_MAX_MCAST_GRP * SRDMA_MAX_MCAST_QP_ATTACH;
}

static const struct ib_device_ops srdma_roce_ops = {
	.owner = THIS_MODULE,
	/* sysfs cc/: congestion control tunables (cc.c) */
	.device_group = &roce_cc_group,
	.attach_mcast = roce_attach_mcast,
	.detach_mcast = roce_detach_mcast,
};

static int roce_newlink(const char *name, struct net_device *ndev)
{
	return srdma_newlink(&srdma_roce_transport, name, ndev);
}

static struct rdma_link_ops roce_link_ops = {
	.type = "sroce",
	.newlink = roce_newlink,
};

/*
 * A drop-in for rdma_rxe: scripts say "rdma link add NAME type rxe" and
 * get an sroce device. The type is free whenever srdma is loaded, since
 * rdma_rxe then cannot be. No MODULE_ALIAS for it: rdma_rxe's own alias
 * would race ours; the installed modprobe.d file points "rdma-link-rxe"
 * and "rdma_rxe" at srdma instead (tools/modprobe.d/srdma.conf).
 */
static struct rdma_link_ops roce_rxe_link_ops = {
	.type = "rxe",
	.newlink = roce_newlink,
};

static int roce_init(void)
{
	int err;

	roce_crc32_init();
	err = roce_net_init();
	if (err) {
		roce_crc32_exit();
		return err;
	}
	pr_info("sroce: ICRC by %s\n", roce_crc32_impl());
	return 0;
}

static void roce_exit(void)
{
	roce_net_exit();
	roce_crc32_exit();
}

static struct rdma_link_ops *const roce_link_types[] = {
	&roce_link_ops,
	&roce_rxe_link_ops,
	NULL,
};

MODULE_ALIAS_RDMA_LINK("sroce");

const struct srdma_transport srdma_roce_transport = {
	.link_type = "sroce",
	.link_ops = roce_link_types,
	.ops = &srdma_roce_ops,
	/* holds UDP 4791 in the initial namespace; fails beside rdma_rxe */
	.init = roce_init,
	.exit = roce_exit,
	.dev_size = sizeof(struct roce_dev),
	.node_type = RDMA_NODE_IB_CA,
	.vendor_part_id = 1,
	.core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP,
	.max_mad_size = IB_MGMT_MAD_SIZE,
	.gid_tbl_len = SRDMA_GID_TABLE_LEN,
	/* IPv6, UDP, BTH, the largest extension header, ICRC */
	.mtu_overhead = sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
			IB_BTH_BYTES + IB_EXT_ATOMICETH_BYTES + IB_ICRC_BYTES,
	.uses_av = true,
	.query_device = roce_query_device,
	.qp_types = BIT(IB_QPT_RC) | BIT(IB_QPT_UC) | BIT(IB_QPT_UD) |
		    BIT(IB_QPT_GSI),
	.qp_init_state = IB_QPS_RESET,
	.rc_opcodes = BIT(SRDMA_WR_ATOMIC_WRITE) | BIT(IB_WR_SEND_WITH_IMM) |
		      BIT(IB_WR_RDMA_WRITE_WITH_IMM),
	.modify_qp_prepare = roce_modify_qp_prepare,
	.dev_init = srdma_roce_dev_init,
	.dev_fini = srdma_roce_dev_fini,
	.qp_init = roce_qp_init,
	.qp_destroy = roce_qp_destroy,
	.qp_state_changing = roce_qp_state_changing,
	.qp_state_changed = roce_qp_state_changed,
	.recv_flush = roce_qp_recv_flush,
	.sq_held = roce_txq_sq_held,
	.qp_reset = roce_qp_reset,
	.sq_kick = roce_sq_kick,
	.sqd_drains = true,
	.fill_res_qp = roce_fill_res_qp,
	.counter_names = roce_counter_names,
	.num_counters = ROCE_CNT_MAX,
};
