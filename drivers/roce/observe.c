// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE observability: the tracepoints and counters of the requester's
 * recovery (retransmits, NAKs, RNR waits) and the QP's protocol state
 * for rdma res. Called with rqp->lock held unless said otherwise; none
 * of this is on the per-packet path (net.c and recv.c trace packets).
 */
#include <rdma/restrack.h>
#include <rdma/rdma_netlink.h>

#include "roce.h"
#include "trace.h"

const char *const roce_counter_names[ROCE_CNT_MAX] = {
	[ROCE_CNT_RX_BAD_QP] = "rx_bad_qp",
	[ROCE_CNT_RETRANSMITS] = "retransmits",
	[ROCE_CNT_RX_DUPLICATE] = "rx_duplicate",
	[ROCE_CNT_SEQ_NAK_SENT] = "seq_nak_sent",
	[ROCE_CNT_RNR_NAK_SENT] = "rnr_nak_sent",
	[ROCE_CNT_RETRY_EXCEEDED] = "retry_exceeded",
	[ROCE_CNT_RX_REORDER_HELD] = "rx_reorder_held",
	[ROCE_CNT_RETRANSMIT_PROBES] = "retransmit_probes",
	[ROCE_CNT_RETRANSMIT_TIMEOUTS] = "retransmit_timeouts",
	[ROCE_CNT_RNR_RETRY_EXCEEDED] = "rnr_retry_exceeded",
	[ROCE_CNT_ACCESS_NAK_SENT] = "access_nak_sent",
	[ROCE_CNT_INV_REQ_NAK_SENT] = "inv_req_nak_sent",
	[ROCE_CNT_REM_OP_NAK_SENT] = "rem_op_nak_sent",
	[ROCE_CNT_SEQ_NAK_RCVD] = "seq_nak_rcvd",
	[ROCE_CNT_RNR_NAK_RCVD] = "rnr_nak_rcvd",
	[ROCE_CNT_ACCESS_NAK_RCVD] = "access_nak_rcvd",
	[ROCE_CNT_INV_REQ_NAK_RCVD] = "inv_req_nak_rcvd",
	[ROCE_CNT_REM_OP_NAK_RCVD] = "rem_op_nak_rcvd",
	[ROCE_CNT_RX_DROP_MALFORMED] = "rx_malformed",
	[ROCE_CNT_RX_DROP_PKEY] = "rx_bad_pkey",
	[ROCE_CNT_RX_DROP_SERVICE] = "rx_bad_service",
	[ROCE_CNT_RX_DROP_PATH] = "rx_bad_path",
	[ROCE_CNT_RD_NOMEM] = "read_resp_nomem",
	[ROCE_CNT_CC_CE_RX] = "cc_ce_rx",
	[ROCE_CNT_CC_CNP_TX] = "cc_cnp_tx",
	[ROCE_CNT_CC_CNP_RX] = "cc_cnp_rx",
	[ROCE_CNT_CC_RATE_DEC] = "cc_rate_dec",
	[ROCE_CNT_CC_RATE_INC] = "cc_rate_inc",
	[ROCE_CNT_ACK_SENT] = "ack_sent",
	[ROCE_CNT_RX_PAGED] = "rx_paged",
	[ROCE_CNT_TX_QUEUE_FULL] = "tx_queue_full",
	[ROCE_CNT_TX_PAGED] = "tx_paged",
	[ROCE_CNT_TX_TRAINS] = "tx_trains",
	[ROCE_CNT_TX_TRAIN_PKTS] = "tx_train_packets",
};

/* The requester goes back to una_psn (req.c, roce_req_rewind). */
void roce_obs_rewind(struct roce_qp *rqp)
{
	struct srdma_qp *qp = rqp->qp;

	qp->stats.retransmits++;
	trace_srdma_retransmit(&qp->ibqp, "go-back", rqp->una_psn,
			       rqp->next_psn, rqp->retry_left);
}

/* ...or resends the one packet a NAK named (roce_req_recover). */
void roce_obs_probe(struct roce_qp *rqp, u32 psn)
{
	struct srdma_qp *qp = rqp->qp;

	qp->stats.probes++;
	trace_srdma_retransmit(&qp->ibqp, "probe", psn, rqp->next_psn,
			       rqp->retry_left);
}

/* The retransmit timer fired with packets unacknowledged. */
void roce_obs_timeout(struct roce_qp *rqp)
{
	struct srdma_qp *qp = rqp->qp;

	qp->stats.timeouts++;
	roce_count(qp_dev(qp), ROCE_CNT_RETRANSMIT_TIMEOUTS);
	trace_srdma_retransmit(&qp->ibqp, "timeout", rqp->una_psn,
			       rqp->next_psn, rqp->retry_left);
}

/* An RNR NAK: wait @delay_us, or give up (rnr_retry used up). */
void roce_obs_rnr(struct roce_qp *rqp, u32 delay_us, bool give_up)
{
	struct srdma_qp *qp = rqp->qp;

	if (give_up)
		roce_count(qp_dev(qp), ROCE_CNT_RNR_RETRY_EXCEEDED);
	trace_srdma_rnr_wait(&qp->ibqp, rqp->una_psn, delay_us, rqp->rnr_left,
			     give_up);
}

/* An ACK or NAK leaves the responder (ack.c); NAKs are counted by kind. */
void roce_obs_ack_sent(struct srdma_qp *qp, u8 syndrome, u32 psn)
{
	struct srdma_dev *dev = qp_dev(qp);

	if ((syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK) {
		roce_count(dev, ROCE_CNT_ACK_SENT);
		return;
	}
	qp->stats.naks_sent++;
	trace_srdma_nak_send(&qp->ibqp, syndrome, psn);
	/* sequence and RNR NAKs are counted where resp.c decides on them */
	if ((syndrome & ROCE_AETH_TYPE_MASK) != ROCE_AETH_NAK)
		return;
	switch (syndrome & 0x1f) {
	case ROCE_NAK_REMOTE_ACCESS:
		roce_count(dev, ROCE_CNT_ACCESS_NAK_SENT);
		break;
	case ROCE_NAK_INVALID_REQ:
	case ROCE_NAK_INVALID_RD_REQ:
		roce_count(dev, ROCE_CNT_INV_REQ_NAK_SENT);
		break;
	case ROCE_NAK_REMOTE_OP:
		roce_count(dev, ROCE_CNT_REM_OP_NAK_SENT);
		break;
	default:
		break;
	}
}

/* An ACK packet reached the completer with @syndrome (comp.c). */
void roce_obs_aeth_rcvd(struct roce_qp *rqp, const struct roce_pkt *pkt,
			u8 syndrome)
{
	struct srdma_qp *qp = rqp->qp;
	struct srdma_dev *dev = qp_dev(qp);
	enum roce_counter c;

	switch (syndrome & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_RNR_NAK:
		c = ROCE_CNT_RNR_NAK_RCVD;
		qp->stats.rnr_naks_rcvd++;
		break;
	case ROCE_AETH_NAK:
		switch (syndrome & 0x1f) {
		case ROCE_NAK_PSN_SEQ:
			c = ROCE_CNT_SEQ_NAK_RCVD;
			break;
		case ROCE_NAK_REMOTE_ACCESS:
			c = ROCE_CNT_ACCESS_NAK_RCVD;
			break;
		case ROCE_NAK_REMOTE_OP:
			c = ROCE_CNT_REM_OP_NAK_RCVD;
			break;
		default:
			c = ROCE_CNT_INV_REQ_NAK_RCVD;
			break;
		}
		break;
	default:
		return;
	}
	qp->stats.naks_rcvd++;
	roce_count(dev, c);
	trace_srdma_nak_recv(&qp->ibqp, syndrome, pkt->psn);
}

/* rdma res show qp -dd: requester and responder state. Process context. */
int roce_fill_res_qp(struct sk_buff *msg, struct srdma_qp *qp)
{
	struct roce_qp *rqp = to_rqp(qp);
	const struct srdma_qp_stats *st = &qp->stats;
	u32 next_psn, una_psn, epsn, msn, rd_inflight, rd_pending, held;
	u32 in_flight, retransmits, probes, timeouts, naks_s, naks_r, rnr_r;
	bool rnr_wait, recovering, peer_drops, timer, nak_out, cc_limited;
	u32 cc_rate, cc_target, cc_alpha, lent;
	u8 retry_left, rnr_left;
	bool sq_held;

	spin_lock_bh(&rqp->lock);
	next_psn = rqp->next_psn;
	una_psn = rqp->una_psn;
	epsn = rqp->epsn;
	msn = rqp->msn;
	rd_inflight = rqp->rd_inflight;
	rd_pending = rqp->rd_pending;
	held = skb_queue_len(&rqp->reorder);
	in_flight = rqp->req_cur - rqp->req_ack;
	retry_left = rqp->retry_left;
	rnr_left = rqp->rnr_left;
	rnr_wait = rqp->rnr_wait;
	recovering = rqp->recovering;
	peer_drops = rqp->peer_drops;
	nak_out = rqp->nak_sent;
	timer = timer_pending(&rqp->retrans_timer);
	retransmits = st->retransmits;
	probes = st->probes;
	timeouts = st->timeouts;
	naks_s = st->naks_sent;
	naks_r = st->naks_rcvd;
	rnr_r = st->rnr_naks_rcvd;
	cc_limited = rqp->cc.limited;
	cc_rate = cc_limited ? rqp->cc.dcqcn.rc : 0;
	cc_target = cc_limited ? rqp->cc.dcqcn.rt : 0;
	cc_alpha = cc_limited ? rqp->cc.dcqcn.alpha : 0;
	spin_unlock_bh(&rqp->lock);
	lent = roce_txq_lent(rqp);
	/* a snapshot: the core's flag, read without its lock */
	sq_held = READ_ONCE(qp->sq_held);

	if (rdma_nl_put_driver_u32_hex(msg, "next_psn", next_psn) ||
	    rdma_nl_put_driver_u32_hex(msg, "una_psn", una_psn) ||
	    rdma_nl_put_driver_u32_hex(msg, "expected_psn", epsn) ||
	    rdma_nl_put_driver_u32(msg, "msn", msn) ||
	    rdma_nl_put_driver_u32(msg, "wqes_unacked", in_flight) ||
	    rdma_nl_put_driver_u32(msg, "reads_outstanding", rd_inflight) ||
	    rdma_nl_put_driver_u32(msg, "max_rd_atomic",
				   qp->attr.max_rd_atomic) ||
	    rdma_nl_put_driver_u32(msg, "read_replies_pending", rd_pending) ||
	    rdma_nl_put_driver_u32(msg, "reorder_held", held) ||
	    rdma_nl_put_driver_u32(msg, "retry_left", retry_left) ||
	    rdma_nl_put_driver_u32(msg, "retry_cnt", qp->attr.retry_cnt) ||
	    rdma_nl_put_driver_u32(msg, "rnr_left", rnr_left) ||
	    rdma_nl_put_driver_u32(msg, "rnr_retry", qp->attr.rnr_retry) ||
	    rdma_nl_put_driver_u32(msg, "rnr_waiting", rnr_wait) ||
	    rdma_nl_put_driver_u32(msg, "retrans_timer", timer) ||
	    rdma_nl_put_driver_u32(msg, "recovering", recovering) ||
	    rdma_nl_put_driver_u32(msg, "go_back_n_peer", peer_drops) ||
	    rdma_nl_put_driver_u32(msg, "seq_nak_outstanding", nak_out) ||
	    rdma_nl_put_driver_u32(msg, "retransmits", retransmits) ||
	    rdma_nl_put_driver_u32(msg, "probes", probes) ||
	    rdma_nl_put_driver_u32(msg, "timeouts", timeouts) ||
	    rdma_nl_put_driver_u32(msg, "naks_sent", naks_s) ||
	    rdma_nl_put_driver_u32(msg, "naks_rcvd", naks_r) ||
	    rdma_nl_put_driver_u32(msg, "rnr_naks_rcvd", rnr_r) ||
	    rdma_nl_put_driver_u32(msg, "cc_limited", cc_limited) ||
	    rdma_nl_put_driver_u32(msg, "cc_rate_kbps", cc_rate) ||
	    rdma_nl_put_driver_u32(msg, "cc_target_kbps", cc_target) ||
	    rdma_nl_put_driver_u32(msg, "cc_alpha", cc_alpha) ||
	    rdma_nl_put_driver_u32(msg, "lent_packets", lent) ||
	    rdma_nl_put_driver_u32(msg, "completions_held", sq_held))
		return -EMSGSIZE;
	return 0;
}
