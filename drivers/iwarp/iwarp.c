// SPDX-License-Identifier: GPL-2.0
/*
 * The iWARP transport's hooks into the core: an RNIC whose port GID is
 * its MAC address, the iw_cm operations (cm.c), and the per-QP state
 * that follows the QP through its states.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "iwarp.h"

bool srdma_iw_crc;
module_param_named(iwarp_crc, srdma_iw_crc, bool, 0644);
MODULE_PARM_DESC(iwarp_crc,
		 "Ask for MPA CRC32c on new iWARP connections (default: off; a peer that asks gets it)");

static int srdma_iw_query_gid(struct ib_device *ibdev, u32 port, int index,
			      union ib_gid *gid)
{
	struct srdma_dev *dev = to_sdev(ibdev);

	if (port != 1 || index != 0)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	memcpy(gid->raw, dev->ndev->dev_addr, ETH_ALEN);
	return 0;
}

/* Right after srdma_iw_get_qp(), which the consumer's QP came from. */
static void srdma_iw_add_ref(struct ib_qp *ibqp)
{
	WARN_ON_ONCE(!srdma_qp_tryget(to_sqp(ibqp)));
}

static void srdma_iw_rem_ref(struct ib_qp *ibqp)
{
	srdma_qp_put(to_sqp(ibqp));
}

/* iw_cm takes its own reference with iw_add_ref right after this. */
static struct ib_qp *srdma_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct srdma_qp_handle *h;
	struct srdma_qp *qp;

	rcu_read_lock();
	h = xa_load(&to_sdev(ibdev)->qps, qpn);
	qp = h ? h->qp : NULL;
	rcu_read_unlock();
	return qp ? &qp->ibqp : NULL;
}

static int iwarp_dev_init(struct srdma_dev *dev)
{
	/* iw_cm talks to us directly, no iwpmd port mapping */
	dev->ibdev.iw_driver_flags = IW_F_NO_PORT_MAP;
	memcpy(dev->ibdev.iw_ifname, dev->ndev->name,
	       sizeof(dev->ibdev.iw_ifname));
	return 0;
}

/*
 * The device is going: iw_cm will not answer the requests it still has
 * (it rejected every one it had delivered), so end them here.
 */
static void iwarp_dev_fini(struct srdma_dev *dev)
{
	iwarp_requests_flush(dev);
}

static int iwarp_qp_init(struct srdma_qp *qp)
{
	struct iwarp_qp *iqp = kzalloc(sizeof(*iqp), GFP_KERNEL);

	if (!iqp)
		return -ENOMEM;
	iqp->qp = qp;
	spin_lock_init(&iqp->lock);
	spin_lock_init(&iqp->recv_lock);
	init_waitqueue_head(&iqp->detach_wq);
	INIT_WORK(&iqp->tx_work, iwarp_tx_work);
	mutex_init(&iqp->tx_mutex);
	iwarp_rx_reset(iqp);
	iwarp_tx_reset(iqp);
	qp->tp_priv = iqp;
	return 0;
}

static void iwarp_qp_destroy(struct srdma_qp *qp)
{
	struct iwarp_qp *iqp = to_iwqp(qp);

	cancel_work_sync(&iqp->tx_work);
	iwarp_rx_release(iqp);
	iwarp_tx_release(iqp);
	iwarp_tx_buf_free(iqp);
	iwarp_tx_tables_free(iqp);
	kfree(iqp);
	qp->tp_priv = NULL;
}

/* Close the connection the QP is attached to, if any. Any context. */
static void iwarp_qp_close(struct srdma_qp *qp, bool abort)
{
	struct iwarp_qp *iqp = to_iwqp(qp);
	unsigned long flags;

	spin_lock_irqsave(&iqp->lock, flags);
	if (iqp->ep)
		iwarp_ep_close(iqp->ep, abort && !iqp->term_pending);
	spin_unlock_irqrestore(&iqp->lock, flags);
}

static void iwarp_qp_error(struct srdma_qp *qp)
{
	iwarp_qp_close(qp, true);
}

/* The QP is in ERR: the receive rx holds goes before the ring's. */
static void iwarp_qp_recv_flush(struct srdma_qp *qp)
{
	if (qp->tp_priv)
		iwarp_rx_recv_flush(to_iwqp(qp));
}

static void iwarp_qp_release(struct srdma_qp *qp)
{
	struct iwarp_qp *iqp = to_iwqp(qp);

	/* under the lock that attach checks it under: never attach again */
	spin_lock_bh(&iqp->lock);
	iqp->released = true;
	spin_unlock_bh(&iqp->lock);
	/* a set-up in progress ends now, not when its peer gives up */
	iwarp_qp_detach(qp);
}

/* To RESET: first off the connection, so that rx and tx are quiet. */
static void iwarp_qp_reset(struct srdma_qp *qp)
{
	iwarp_qp_detach(qp);
	cancel_work_sync(&to_iwqp(qp)->tx_work);
}

/*
 * iw_cm disconnects through modify_qp: SQD asks for a graceful close
 * (FIN once the send queue is out), ERR for an abortive one.
 */
static void iwarp_qp_state_changed(struct srdma_qp *qp, enum ib_qp_state old)
{
	struct iwarp_qp *iqp = to_iwqp(qp);

	switch (READ_ONCE(qp->state)) {
	case IB_QPS_ERR:
		iwarp_qp_close(qp, true);
		break;
	case IB_QPS_SQD:
		WRITE_ONCE(iqp->draining, true);
		/* the close timer runs from now, even if the SQ never drains */
		spin_lock_bh(&iqp->lock);
		if (iqp->ep)
			iwarp_ep_drain(iqp->ep);
		spin_unlock_bh(&iqp->lock);
		iwarp_tx_kick(iqp);
		break;
	case IB_QPS_RESET:
		/* iwarp_qp_reset detached the connection: no rx or tx runs */
		spin_lock_bh(&iqp->lock);
		if (!iqp->ep) {
			iwarp_rx_reset(iqp);
			iwarp_tx_reset(iqp);
		}
		spin_unlock_bh(&iqp->lock);
		break;
	default:
		break;
	}
}

/*
 * The connection manager moves the QP to RTS and the stack to ERR; users
 * move it to INIT, RESET or ERR. No attribute masks apply.
 */
static bool iwarp_modify_qp_ok(struct srdma_qp *qp, enum ib_qp_state cur,
			       enum ib_qp_state *next, int mask)
{
	/* a graceful disconnect of a connection that already failed */
	if (cur == IB_QPS_ERR && *next == IB_QPS_SQD)
		*next = IB_QPS_ERR;

	switch (*next) {
	case IB_QPS_RESET:
	case IB_QPS_ERR:
		return true;
	case IB_QPS_INIT:
		return cur == IB_QPS_RESET || cur == IB_QPS_INIT;
	case IB_QPS_RTR:
		return cur == IB_QPS_INIT || cur == IB_QPS_RTR;
	case IB_QPS_RTS:
		return cur == IB_QPS_INIT || cur == IB_QPS_RTR ||
		       cur == IB_QPS_RTS || cur == IB_QPS_SQD;
	case IB_QPS_SQD:
		return cur == IB_QPS_RTS || cur == IB_QPS_SQD;
	default:
		return false;
	}
}

static void iwarp_sq_kick(struct srdma_qp *qp)
{
	iwarp_tx_post(to_iwqp(qp));
}

static const struct ib_device_ops srdma_iwarp_ops = {
	.owner = THIS_MODULE,
	.iw_accept = srdma_iw_accept,
	.iw_add_ref = srdma_iw_add_ref,
	.iw_connect = srdma_iw_connect,
	.iw_create_listen = srdma_iw_create_listen,
	.iw_destroy_listen = srdma_iw_destroy_listen,
	.iw_get_qp = srdma_iw_get_qp,
	.iw_reject = srdma_iw_reject,
	.iw_rem_ref = srdma_iw_rem_ref,
	.fill_res_cm_id_entry = iwarp_fill_res_cm_id_entry,
	.query_gid = srdma_iw_query_gid,
};

/* Every device, QP and connection is gone: free the spare buffers too. */
static void iwarp_exit(void)
{
	srdma_iw_net_exit();
	iwarp_tx_pool_drain();
}

static int iwarp_newlink(const char *name, struct net_device *ndev)
{
	return srdma_newlink(&srdma_iwarp_transport, name, ndev);
}

static struct rdma_link_ops iwarp_link_ops = {
	.type = "siwarp",
	.newlink = iwarp_newlink,
};

static struct rdma_link_ops *const iwarp_link_types[] = {
	&iwarp_link_ops,
	NULL,
};

MODULE_ALIAS_RDMA_LINK("siwarp");

const struct srdma_transport srdma_iwarp_transport = {
	.link_type = "siwarp",
	.link_ops = iwarp_link_types,
	.ops = &srdma_iwarp_ops,
	/*
	 * Sockets per namespace; the exit ends what is left of them
	 * (lingering closes) everywhere.
	 */
	.init = srdma_iw_net_init,
	.exit = iwarp_exit,
	.node_type = RDMA_NODE_RNIC,
	.vendor_part_id = 2,
	.core_cap_flags = RDMA_CORE_PORT_IWARP,
	.gid_tbl_len = 1,
	.port_cap_flags = IB_PORT_DEVICE_MGMT_SUP,
	/* TCP segments by itself: only the netdev MTU bounds a message */
	.mtu_overhead = 0,
	.qp_types = BIT(IB_QPT_RC),
	/* a QP starts out ready for its connection (RNIC IDLE) */
	.qp_init_state = IB_QPS_INIT,
	/* RDMAP's Read with Local Invalidate: rdma_rw uses it on iWARP */
	.rc_opcodes = BIT(IB_WR_RDMA_READ_WITH_INV),
	.modify_qp_ok = iwarp_modify_qp_ok,
	.dev_init = iwarp_dev_init,
	.dev_fini = iwarp_dev_fini,
	.qp_init = iwarp_qp_init,
	.qp_destroy = iwarp_qp_destroy,
	.qp_error = iwarp_qp_error,
	.recv_flush = iwarp_qp_recv_flush,
	.qp_release = iwarp_qp_release,
	.qp_reset = iwarp_qp_reset,
	.qp_state_changed = iwarp_qp_state_changed,
	.sq_kick = iwarp_sq_kick,
	.fill_res_qp = iwarp_fill_res_qp,
	.counter_names = iwarp_counter_names,
	.num_counters = IWARP_CNT_MAX,
};
