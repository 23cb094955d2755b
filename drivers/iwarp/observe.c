// SPDX-License-Identifier: GPL-2.0
/*
 * iWARP observability: connection events (counters and the srdma_iw_cm
 * tracepoint) and the connection's state for rdma res, for a QP and for
 * the rdma_cm id that owns it. FPDUs are traced where they are framed
 * (tx.c) and parsed (rx.c).
 */
#include <net/tcp_states.h>
#include <rdma/rdma_cm.h>
#include <rdma/restrack.h>
#include <rdma/rdma_netlink.h>

#include "iwarp.h"
#include "trace.h"

const char *const iwarp_counter_names[IWARP_CNT_MAX] = {
	[IWARP_CNT_CONNECTIONS] = "iwarp_connections",
	[IWARP_CNT_CRC_CONNECTIONS] = "iwarp_crc_connections",
	[IWARP_CNT_TERMINATE_SENT] = "iwarp_terminate_sent",
	[IWARP_CNT_TERMINATE_RCVD] = "iwarp_terminate_rcvd",
	[IWARP_CNT_SETUP_REFUSED] = "iwarp_setup_refused",
	[IWARP_CNT_SETUP_TIMEOUT] = "iwarp_setup_timeout",
	[IWARP_CNT_CONNECTS] = "iwarp_connects",
	[IWARP_CNT_ACCEPTS] = "iwarp_accepts",
	[IWARP_CNT_REJECTS_SENT] = "iwarp_rejects_sent",
	[IWARP_CNT_REJECTS_RCVD] = "iwarp_rejects_rcvd",
	[IWARP_CNT_MPA_FAILURES] = "iwarp_mpa_failures",
	[IWARP_CNT_ABORTS] = "iwarp_aborts",
	[IWARP_CNT_BACKLOG_REFUSED] = "iwarp_backlog_refused",
	[IWARP_CNT_ACCEPT_PAUSED] = "iwarp_accept_paused",
	[IWARP_CNT_TX_SPLICED_BYTES] = "iwarp_tx_spliced_bytes",
	[IWARP_CNT_TX_COPIED_BYTES] = "iwarp_tx_copied_bytes",
};

static void iwarp_obs_trace(struct iwarp_ep *ep, const char *step, int err)
{
	trace_srdma_iw_cm(&ep->dev->ibdev, step, err, &ep->raddr, ep->rev,
			  ep->conn.crc, ep->conn.ird, ep->conn.ord);
}

/* iw_cm asked for a connection (srdma_iw_connect). */
void iwarp_obs_connect(struct iwarp_ep *ep)
{
	iwarp_count(ep->dev, IWARP_CNT_CONNECTS);
	iwarp_obs_trace(ep, "connect", 0);
}

/* An MPA request, reply or reject went out (mpa.c); returns @err. */
int iwarp_obs_mpa_sent(struct iwarp_ep *ep, bool request, bool reject, int err)
{
	if (reject)
		iwarp_count(ep->dev, IWARP_CNT_REJECTS_SENT);
	else if (!request && !err)
		iwarp_count(ep->dev, IWARP_CNT_ACCEPTS);
	iwarp_obs_trace(ep, request ? "mpa request sent" :
			 reject ? "mpa reject sent" : "mpa reply sent", err);
	return err;
}

/* Set-up ended, @err from TCP connect or the MPA exchange (cm.c). */
void iwarp_obs_setup(struct iwarp_ep *ep, int err)
{
	const char *step;

	if (!err) {
		step = ep->active ? "mpa reply received" :
				    "mpa request received";
	} else if (err == -ECONNREFUSED && ep->state == IWARP_EP_SETUP) {
		iwarp_count(ep->dev, IWARP_CNT_REJECTS_RCVD);
		step = "mpa reject received";
	} else if (err == -EPROTO || err == -EOPNOTSUPP) {
		iwarp_count(ep->dev, IWARP_CNT_MPA_FAILURES);
		step = "mpa frame refused";
	} else {
		step = "set-up failed";
	}
	iwarp_obs_trace(ep, step, err);
}

/* The close work is about to shut the socket down (cm.c). */
void iwarp_obs_close(struct iwarp_ep *ep)
{
	if (ep->abort)
		iwarp_count(ep->dev, IWARP_CNT_ABORTS);
	iwarp_obs_trace(ep, ep->abort ? "abort" : "close", 0);
}

static const char *const iwarp_ep_state_names[] = {
	[IWARP_EP_CONNECTING] = "connecting",
	[IWARP_EP_SETUP] = "mpa",
	[IWARP_EP_AWAIT_ACCEPT] = "await_accept",
	[IWARP_EP_CONNECTED] = "connected",
	[IWARP_EP_DRAINING] = "draining",
	[IWARP_EP_CLOSING] = "closing",
	[IWARP_EP_CLOSED] = "closed",
};

static const char *const iwarp_tcp_state_names[] = {
	[TCP_ESTABLISHED] = "ESTABLISHED",
	[TCP_SYN_SENT] = "SYN_SENT",
	[TCP_SYN_RECV] = "SYN_RECV",
	[TCP_FIN_WAIT1] = "FIN_WAIT1",
	[TCP_FIN_WAIT2] = "FIN_WAIT2",
	[TCP_TIME_WAIT] = "TIME_WAIT",
	[TCP_CLOSE] = "CLOSE",
	[TCP_CLOSE_WAIT] = "CLOSE_WAIT",
	[TCP_LAST_ACK] = "LAST_ACK",
	[TCP_LISTEN] = "LISTEN",
	[TCP_CLOSING] = "CLOSING",
};

static const char *const iwarp_rx_state_names[] = {
	[IWARP_RX_HDR] = "header",
	[IWARP_RX_DATA] = "payload",
	[IWARP_RX_TRAILER] = "trailer",
	[IWARP_RX_DEAD] = "dead",
};

static const char *iwarp_name(const char *const *tbl, size_t n, int i)
{
	return i >= 0 && i < n && tbl[i] ? tbl[i] : "?";
}

#define IWARP_EP_STATE(i) iwarp_name(iwarp_ep_state_names, \
				ARRAY_SIZE(iwarp_ep_state_names), (i))
#define IWARP_TCP_STATE(i) iwarp_name(iwarp_tcp_state_names, \
				 ARRAY_SIZE(iwarp_tcp_state_names), (i))
#define IWARP_RX_STATE(i) iwarp_name(iwarp_rx_state_names, \
				ARRAY_SIZE(iwarp_rx_state_names), (i))

/* What rdma res shows of a QP's connection: a snapshot. */
struct iwarp_obs_snap {
	bool attached;
	int ep_state;
	int tcp_state;
	u32 sk_wmem, sk_rmem;
	u8 rev;
	bool enhanced, crc, atomics;
	u16 ird, ord;
	u32 msn_send, msn_rreq, msn_term, msn_aresp;
	u32 rx_msn[DDP_QN_COUNT];
	int rx_state;
	u32 orq, ird_queued, tx_pending, max_payload;
	bool term_pending, draining, fin_sent;
};

static void iwarp_obs_snapshot(struct iwarp_qp *iqp, struct iwarp_obs_snap *s)
{
	unsigned long flags;
	struct iwarp_ep *ep;
	int i;

	memset(s, 0, sizeof(*s));
	/* as iwarp_qp_close takes it, from any context */
	spin_lock_irqsave(&iqp->lock, flags);
	ep = iqp->ep;
	if (ep) {
		s->attached = true;
		spin_lock(&ep->lock);
		s->ep_state = ep->state;
		spin_unlock(&ep->lock);
		s->rev = ep->rev;
		s->enhanced = ep->enhanced;
	}
	/* close work clears iqp->sock under this lock before releasing it */
	if (iqp->sock) {
		struct sock *sk = iqp->sock->sk;

		s->tcp_state = READ_ONCE(sk->sk_state);
		s->sk_wmem = READ_ONCE(sk->sk_wmem_queued);
		s->sk_rmem = atomic_read(&sk->sk_rmem_alloc);
	} else {
		s->tcp_state = -1;
	}
	s->crc = iqp->conn.crc;
	s->atomics = iqp->conn.atomics;
	s->ird = iqp->conn.ird;
	s->ord = iqp->conn.ord;
	s->orq = iqp->orq_tail - iqp->orq_head;
	s->ird_queued = iqp->ird_tail - iqp->ird_head;
	s->term_pending = iqp->term_pending;
	spin_unlock_irqrestore(&iqp->lock, flags);

	/*
	 * The transmit (tx_mutex) and receive (socket lock) sides' own:
	 * looked at without their locks, so a value may be a packet old.
	 */
	s->msn_send = READ_ONCE(iqp->msn_send);
	s->msn_rreq = READ_ONCE(iqp->msn_rreq);
	s->msn_term = READ_ONCE(iqp->msn_term);
	s->msn_aresp = READ_ONCE(iqp->msn_aresp);
	s->tx_pending = READ_ONCE(iqp->tx_len) - READ_ONCE(iqp->tx_off);
	s->max_payload = READ_ONCE(iqp->max_payload);
	s->draining = READ_ONCE(iqp->draining);
	s->fin_sent = READ_ONCE(iqp->fin_sent);
	s->rx_state = READ_ONCE(iqp->rx.state);
	for (i = 0; i < DDP_QN_COUNT; i++)
		s->rx_msn[i] = READ_ONCE(iqp->rx.msn[i]);
}

static int iwarp_obs_put(struct sk_buff *msg, const struct iwarp_obs_snap *s)
{
	if (rdma_nl_put_driver_string(msg, "conn", !s->attached ? "none" :
			IWARP_EP_STATE(s->ep_state)) ||
	    rdma_nl_put_driver_string(msg, "tcp_state", s->tcp_state < 0 ?
			"none" : IWARP_TCP_STATE(s->tcp_state)) ||
	    rdma_nl_put_driver_u32(msg, "tcp_send_queued", s->sk_wmem) ||
	    rdma_nl_put_driver_u32(msg, "tcp_recv_queued", s->sk_rmem) ||
	    rdma_nl_put_driver_u32(msg, "mpa_rev", s->rev) ||
	    rdma_nl_put_driver_u32(msg, "mpa_enhanced", s->enhanced) ||
	    rdma_nl_put_driver_u32(msg, "mpa_crc", s->crc) ||
	    rdma_nl_put_driver_u32(msg, "mpa_markers", 0) ||
	    rdma_nl_put_driver_u32(msg, "atomics", s->atomics) ||
	    rdma_nl_put_driver_u32(msg, "ird", s->ird) ||
	    rdma_nl_put_driver_u32(msg, "ord", s->ord))
		return -EMSGSIZE;
	return 0;
}

static int iwarp_obs_put_qp(struct sk_buff *msg, const struct iwarp_obs_snap *s)
{
	if (iwarp_obs_put(msg, s) ||
	    rdma_nl_put_driver_u32(msg, "tx_msn_send", s->msn_send) ||
	    rdma_nl_put_driver_u32(msg, "tx_msn_read_req", s->msn_rreq) ||
	    rdma_nl_put_driver_u32(msg, "tx_msn_terminate", s->msn_term) ||
	    rdma_nl_put_driver_u32(msg, "tx_msn_atomic_resp", s->msn_aresp) ||
	    rdma_nl_put_driver_u32(msg, "rx_msn_send",
				   s->rx_msn[DDP_QN_SEND]) ||
	    rdma_nl_put_driver_u32(msg, "rx_msn_read_req",
				   s->rx_msn[DDP_QN_READ_REQ]) ||
	    rdma_nl_put_driver_u32(msg, "rx_msn_atomic_resp",
				   s->rx_msn[DDP_QN_ATOMIC_RESP]) ||
	    rdma_nl_put_driver_string(msg, "rx_state",
				      IWARP_RX_STATE(s->rx_state)) ||
	    rdma_nl_put_driver_u32(msg, "reads_outstanding", s->orq) ||
	    rdma_nl_put_driver_u32(msg, "read_replies_queued",
				   s->ird_queued) ||
	    rdma_nl_put_driver_u32(msg, "tx_buffered", s->tx_pending) ||
	    rdma_nl_put_driver_u32(msg, "max_payload", s->max_payload) ||
	    rdma_nl_put_driver_u32(msg, "terminate_pending", s->term_pending) ||
	    rdma_nl_put_driver_u32(msg, "draining", s->draining) ||
	    rdma_nl_put_driver_u32(msg, "fin_sent", s->fin_sent))
		return -EMSGSIZE;
	return 0;
}

/* rdma res show qp -dd (restrack.c opens the table). */
int iwarp_fill_res_qp(struct sk_buff *msg, struct srdma_qp *qp)
{
	struct iwarp_obs_snap s;

	iwarp_obs_snapshot(to_iwqp(qp), &s);
	return iwarp_obs_put_qp(msg, &s);
}

/*
 * Is @qp the one rdma_cm id @id connected? A kernel ULP's id names its
 * QP; for a user's id (librdmacm creates the QP through uverbs) only the
 * iw_cm id of the QP's connection leads back: rdma_cm makes its private
 * id, whose first member is the rdma_cm_id, the iw_cm id's context. The
 * pointers are compared, never followed. With a reference on the QP:
 * destroy frees tp_priv only once the last one is dropped.
 */
static bool iwarp_obs_qp_of(struct srdma_qp *qp, struct rdma_cm_id *id)
{
	struct iwarp_qp *iqp = qp->tp_priv;
	unsigned long flags;
	bool match;

	if (&qp->ibqp == READ_ONCE(id->qp))
		return true;
	if (!iqp)
		return false;
	/* close work detaches the ep here before it lets go of its cm_id */
	spin_lock_irqsave(&iqp->lock, flags);
	match = iqp->ep && iqp->ep->cm_id &&
		iqp->ep->cm_id->context == (void *)id;
	spin_unlock_irqrestore(&iqp->lock, flags);
	return match;
}

/* rdma res show cm_id -dd: the connection of the QP the id owns. */
int iwarp_fill_res_cm_id_entry(struct sk_buff *msg, struct rdma_cm_id *id)
{
	struct srdma_dev *dev = to_sdev(id->device);
	struct srdma_qp *qp, *found = NULL;
	struct srdma_qp_handle *h;
	struct iwarp_obs_snap s;
	struct nlattr *table;
	unsigned long index;
	u32 qpn;

	rcu_read_lock();
	xa_for_each(&dev->qps, index, h) {
		/* the reference first: it keeps the QP and its tp_priv */
		if (!refcount_inc_not_zero(&h->ref))
			continue;
		qp = h->qp;
		if (iwarp_obs_qp_of(qp, id)) {
			found = qp;
			break;
		}
		srdma_qp_put(qp);
	}
	rcu_read_unlock();
	if (!found)
		return 0;
	if (!found->tp_priv) {
		srdma_qp_put(found);
		return 0;
	}
	iwarp_obs_snapshot(to_iwqp(found), &s);
	qpn = found->ibqp.qp_num;
	srdma_qp_put(found);

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "qpn", qpn) || iwarp_obs_put(msg, &s)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}
