// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE completer: what comes back to the requester - ACKs, NAKs, RDMA
 * READ responses and atomic ACKs. ACKs are cumulative (IBTA 9.7.5.1), so
 * one ACK may complete many WQEs; a response to a READ implicitly
 * acknowledges everything before it.
 */
#include "roce.h"

/*
 * Oldest WQE still waiting for the peer, or NULL: one the requester has
 * moved past, or the one it is on if it started it. A message longer
 * than the window stays the requester's with packets out, and a NAK, a
 * retry or RNR limit must fail it there, or the QP hangs silently.
 * Lock held.
 */
struct srdma_swqe *roce_oldest(struct roce_qp *rqp)
{
	u32 fetch = roce_req_catch_up(rqp);

	while (rqp->req_ack != fetch) {
		struct srdma_swqe *w = srdma_sq_pending(rqp->qp, rqp->req_ack,
							fetch);

		if (rqp->req_ack == rqp->req_cur)
			return w && to_rswqe(w)->started ? w : NULL;
		if (w)
			return w;
		rqp->req_ack++;
	}
	return NULL;
}

/* @w, the oldest, is done with @status; the requester moves past it. */
void roce_wqe_finish(struct roce_qp *rqp, struct srdma_swqe *w,
		     enum ib_wc_status status)
{
	struct srdma_qp *qp = rqp->qp;

	if (roce_is_rd(w->wr.opcode) && rqp->rd_inflight)
		rqp->rd_inflight--;
	if (rqp->req_cur == rqp->req_ack)
		rqp->req_cur++;
	rqp->req_ack++;
	srdma_sq_wqe_done(qp, w, status);
}

/*
 * Everything up to and including @psn arrived. A READ's PSNs count only as
 * far as its responses were placed; a READ or atomic whose PSNs are all
 * covered but whose responses we lack was lost: ask again, once for each
 * missing PSN (every later response would otherwise resend every READ
 * outstanding; the retransmit timer asks again if that is lost too).
 * una_psn never passes such a READ, or a go-back would skip it.
 */
static void roce_ack_upto(struct roce_qp *rqp, u32 psn)
{
	u32 limit = psn_add(psn, 1);
	struct srdma_swqe *w;

	while ((w = roce_oldest(rqp))) {
		struct roce_swqe *rw = to_rswqe(w);
		bool covered = psn_diff(rw->last_psn, psn) <= 0;

		if (roce_is_rd(w->wr.opcode)) {
			u32 got = psn_add(rw->first_psn,
					  w->done / roce_mtu(rqp->qp));

			if (covered) {
				rqp->una_psn = got;
				if (rqp->reread_psn != got) {
					rqp->reread_psn = got;
					roce_req_rewind(rqp);
				}
				return;
			}
			if (psn_diff(limit, got) > 0)
				limit = got;
			break;
		}
		if (!covered)
			break;
		roce_wqe_finish(rqp, w, IB_WC_SUCCESS);
	}
	if (psn_diff(limit, rqp->una_psn) > 0)
		rqp->una_psn = limit;
}

static enum ib_wc_status roce_nak_status(u8 code)
{
	switch (code) {
	case ROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case ROCE_NAK_REMOTE_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/* The responder lacks @psn and has everything before it: go back to it. */
static void roce_seq_nak(struct roce_qp *rqp, u32 psn)
{
	ibdev_dbg_ratelimited(&qp_dev(rqp->qp)->ibdev,
			      "QP %u: NAK %#x una %#x next %#x\n",
			      rqp->qp->ibqp.qp_num, psn, rqp->una_psn,
			      rqp->next_psn);
	rqp->una_psn = psn;
	roce_req_recover(rqp, psn);
}

/*
 * A NAK acknowledges everything before its PSN, but a READ before it
 * whose responses went missing is not done: roce_ack_upto() asked for it
 * again and left una_psn on it. The NAK's request is resent after it and
 * draws the NAK again; acting on this one would skip the READ.
 */
static bool roce_nak_blocked(struct roce_qp *rqp, struct roce_pkt *pkt)
{
	roce_ack_upto(rqp, psn_add(pkt->psn, ROCE_PSN_MASK));
	return rqp->una_psn != pkt->psn;
}

static void roce_comp_aeth(struct roce_qp *rqp, struct roce_pkt *pkt,
			   u8 syndrome)
{
	struct srdma_swqe *w;

	roce_obs_aeth_rcvd(rqp, pkt, syndrome);
	switch (syndrome & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		roce_ack_upto(rqp, pkt->psn);
		break;
	case ROCE_AETH_RNR_NAK:
		if (roce_nak_blocked(rqp, pkt))
			break;
		roce_req_rnr(rqp, syndrome);
		break;
	case ROCE_AETH_NAK:
		if (roce_nak_blocked(rqp, pkt))
			break;
		if ((syndrome & 0x1f) == ROCE_NAK_PSN_SEQ) {
			roce_seq_nak(rqp, pkt->psn);
			break;
		}
		w = roce_oldest(rqp);
		if (w)
			roce_wqe_finish(rqp, w, roce_nak_status(syndrome & 0x1f));
		break;
	default:
		break;
	}
}

struct roce_read_place {
	struct srdma_qp *qp;
	struct srdma_swqe *w;
};

static int roce_read_piece(void *arg, u32 off, const void *buf, u32 n)
{
	struct roce_read_place *rp = arg;

	return srdma_swqe_place_at(rp->qp, rp->w, rp->w->done + off, buf, n);
}

/* Place one READ response packet; the WQE completes on the last one. */
static void roce_comp_read(struct roce_qp *rqp, struct roce_pkt *pkt)
{
	struct srdma_qp *qp = rqp->qp;
	struct srdma_swqe *w;
	u32 mtu = roce_mtu(qp);
	u32 expect;
	int err;

	roce_ack_upto(rqp, psn_add(pkt->psn, ROCE_PSN_MASK));
	w = roce_oldest(rqp);
	if (!w || w->wr.opcode != IB_WR_RDMA_READ)
		return;
	expect = psn_add(to_rswqe(w)->first_psn, w->done / mtu);
	if (pkt->psn != expect) {
		/* a response went missing: ask again from it, once */
		if (psn_diff(pkt->psn, expect) > 0 &&
		    rqp->reread_psn != expect) {
			rqp->reread_psn = expect;
			rqp->una_psn = expect;
			roce_req_rewind(rqp);
		}
		return;
	}
	if (pkt->paylen > w->length - w->done ||
	    (!(pkt->flags & ROCE_F_LAST) && pkt->paylen != mtu)) {
		roce_wqe_finish(rqp, w, IB_WC_BAD_RESP_ERR);
		return;
	}
	err = roce_pkt_payload_each(pkt, roce_read_piece,
				    &(struct roce_read_place){ qp, w });
	if (err == -ECANCELED)
		return;		/* flushed: the buffer is not ours any more */
	if (err) {
		roce_wqe_finish(rqp, w, srdma_sge_err_status(err));
		return;
	}
	w->done += pkt->paylen;
	rqp->una_psn = psn_add(pkt->psn, 1);
	if (pkt->flags & ROCE_F_LAST) {
		if (w->done != w->length) {
			roce_wqe_finish(rqp, w, IB_WC_BAD_RESP_ERR);
			return;
		}
		roce_wqe_finish(rqp, w, IB_WC_SUCCESS);
	}
}

static void roce_comp_atomic(struct roce_qp *rqp, struct roce_pkt *pkt)
{
	struct roce_atmack *ack = pkt->ext + sizeof(struct roce_aeth);
	enum ib_wc_status status;
	struct srdma_swqe *w;

	roce_ack_upto(rqp, psn_add(pkt->psn, ROCE_PSN_MASK));
	w = roce_oldest(rqp);
	if (!w || to_rswqe(w)->first_psn != pkt->psn ||
	    (w->wr.opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
	     w->wr.opcode != IB_WR_ATOMIC_FETCH_AND_ADD))
		return;
	status = srdma_swqe_atomic_result(rqp->qp, w, be64_to_cpu(ack->orig));
	rqp->una_psn = psn_add(pkt->psn, 1);
	roce_wqe_finish(rqp, w, status);
}

void roce_comp_rcv(struct roce_pkt *pkt)
{
	struct srdma_qp *qp = pkt->qp;
	struct roce_qp *rqp = to_rqp(qp);
	u8 op = pkt->opcode & ~ROCE_OP_SERVICE_MASK;
	enum ib_qp_state state = READ_ONCE(qp->state);
	u8 syndrome = 0;
	u32 una;

	if (qp->ibqp.qp_type != IB_QPT_RC)
		return;
	spin_lock_bh(&rqp->lock);
	/* SQD still takes the ACKs for what it is draining */
	if (rqp->dead || rqp->resetting ||
	    (state != IB_QPS_RTS && state != IB_QPS_SQD))
		goto out;
	/* only responses to what is in flight count */
	if (psn_diff(pkt->psn, rqp->una_psn) < 0 ||
	    psn_diff(pkt->psn, rqp->next_psn) >= 0)
		goto out;
	if (pkt->flags & ROCE_F_AETH)
		syndrome = be32_to_cpu(((struct roce_aeth *)pkt->ext)->smsn) >> 24;
	una = rqp->una_psn;

	switch (op) {
	case ROCE_ACK:
		roce_comp_aeth(rqp, pkt, syndrome);
		break;
	case ROCE_ATOMIC_ACK:
		roce_comp_atomic(rqp, pkt);
		break;
	default:
		roce_comp_read(rqp, pkt);
		break;
	}
	/* the retry budgets count failures in a row, not per connection */
	if (psn_diff(rqp->una_psn, una) > 0) {
		rqp->retry_left = qp->attr.retry_cnt;
		rqp->rnr_left = qp->attr.rnr_retry;
	}
	roce_req_recover_ack(rqp);
	roce_req_rearm(rqp);
	roce_req_defer(rqp);
out:
	spin_unlock_bh(&rqp->lock);
	roce_req_sqd_check(rqp);
}
