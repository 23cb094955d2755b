// SPDX-License-Identifier: GPL-2.0
/*
 * Receive placement for the transports' responders: the receive WQE a
 * message lands in, taken off the QP's receive queue or its SRQ, the
 * bytes placed into its SGE list as they arrive, and its completion -
 * successful, in error, or flushed. Both transports place SENDs (and
 * RoCE its WRITEs with immediate) through these, so every receive they
 * take completes the same way.
 */
#include "srdma.h"
#include "transport.h"

bool srdma_recv_take(struct srdma_qp *qp, struct srdma_recv *r)
{
	if (!srdma_rq_pop(qp, &r->wqe, qp->recv_sge, qp->recv_max_sge))
		return false;
	r->sge = qp->recv_sge;
	srdma_recv_restart(r);
	r->held = true;
	return true;
}

void srdma_recv_restart(struct srdma_recv *r)
{
	srdma_sge_cursor_init(&r->cur, r->sge, r->wqe.dma.num_sge);
	r->len = 0;
}

u64 srdma_recv_room(const struct srdma_recv *r)
{
	u64 room = 0;
	u32 i;

	for (i = 0; i < r->wqe.dma.num_sge; i++)
		room += r->sge[i].length;
	return room;
}

enum ib_wc_status srdma_recv_place(struct srdma_qp *qp, struct srdma_recv *r,
				   const void *buf, u32 len)
{
	int err;

	/* no message is longer than max_msg_sz (2^31): nor may r->len wrap */
	if (len > SRDMA_MAX_MSG - r->len)
		return IB_WC_LOC_LEN_ERR;
	/* SRDMA_TO_MEM only reads the buffer */
	err = srdma_sge_copy(qp, &r->cur, (void *)buf, len, SRDMA_TO_MEM);
	if (!err)
		r->len += len;
	return srdma_sge_err_status(err);
}

int srdma_recv_invalidate(struct srdma_qp *qp, struct ib_wc *wc, u32 rkey)
{
	int err = srdma_invalidate(qp, rkey);

	if (err)
		return err;
	wc->ex.invalidate_rkey = rkey;
	wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	return 0;
}

int srdma_recv_complete(struct srdma_qp *qp, struct srdma_recv *r,
			struct ib_wc *wc, bool solicited)
{
	wc->wr_id = r->wqe.wr_id;
	wc->qp = &qp->ibqp;
	r->held = false;
	return srdma_cq_post(qp->rcq, wc, solicited);
}

void srdma_recv_fail(struct srdma_qp *qp, struct srdma_recv *r,
		     enum ib_wc_status status)
{
	struct ib_wc wc = {
		.status = status,
		.opcode = IB_WC_RECV,
	};

	if (!r->held)
		return;
	/*
	 * An overflow is not passed on: the CQ raised its error event, and
	 * the caller deals with the QP for the failure itself.
	 */
	srdma_recv_complete(qp, r, &wc, false);
}

void srdma_recv_flush(struct srdma_qp *qp, struct srdma_recv *r)
{
	srdma_recv_fail(qp, r, IB_WC_WR_FLUSH_ERR);
}

/*
 * A receive from the QP's own ring goes with the ring, uncompleted, as
 * RESET empties it (IBTA 10.3.1). One taken from an SRQ is not the QP's
 * to drop: the SRQ's consumer posted it for any QP and expects every
 * receive back, completed or still in the SRQ. It cannot go back (the
 * ring is the consumer's, its slot may be reused), so it completes
 * flushed on the QP's receive CQ, as if the QP had gone through ERR; a
 * consumer that does (ERR, then destroy) sees nothing new. Like every
 * CQE a QP leaves in its CQ, it may name a QP gone by the time it is
 * polled.
 */
void srdma_recv_drop(struct srdma_qp *qp, struct srdma_recv *r)
{
	if (qp->srq)
		srdma_recv_flush(qp, r);
	r->held = false;
}
