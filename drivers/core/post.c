// SPDX-License-Identifier: GPL-2.0
/*
 * Posting from kernel consumers: work requests are written into the same
 * rings librxe writes, so one SQ/RQ path serves kernel and user QPs. For
 * user QPs post_send is librxe's doorbell (a POST_SEND with no WRs).
 */
#include "srdma.h"
#include "transport.h"

static int srdma_write_send_wqe(struct srdma_qp *qp, const struct ib_send_wr *wr,
				struct rxe_send_wqe *slot)
{
	struct rxe_send_wr *k = &slot->wr;
	u64 length = 0;		/* 32 SGEs of 4 GiB must not wrap */
	u8 *inl;
	u32 i;

	/*
	 * A kernel ULP's mistake is its post's error, as IB requires, not
	 * a fatal error of the QP when srdma_fetch() refuses the WQE.
	 */
	if (wr->num_sge > qp->sq.max_sge || !srdma_opcode_ok(qp, wr->opcode))
		return -EINVAL;
	memset(k, 0, sizeof(*k));
	k->wr_id = wr->wr_id;
	k->opcode = wr->opcode;
	k->send_flags = wr->send_flags;
	k->ex.imm_data = wr->ex.imm_data;

	switch (wr->opcode) {
	case IB_WR_RDMA_READ_WITH_INV:
		k->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		k->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		k->wr.rdma.rkey = rdma_wr(wr)->rkey;
		slot->iova = rdma_wr(wr)->remote_addr;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		k->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		k->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		k->wr.atomic.swap = atomic_wr(wr)->swap;
		k->wr.atomic.rkey = atomic_wr(wr)->rkey;
		slot->iova = atomic_wr(wr)->remote_addr;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		k->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	case IB_WR_REG_MR:
		/* kernel-only: the slot carries the MR pointer */
		k->wr.mw.addr = (uintptr_t)reg_wr(wr)->mr;
		k->wr.mw.rkey = reg_wr(wr)->key;
		k->wr.mw.access = reg_wr(wr)->access;
		break;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		if (qp->ibqp.qp_type == IB_QPT_UD ||
		    qp->ibqp.qp_type == IB_QPT_GSI) {
			k->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
			k->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
			k->wr.ud.pkey_index = ud_wr(wr)->pkey_index;
			k->wr.ud.ah_num = to_sah(ud_wr(wr)->ah)->ah_num;
		}
		break;
	default:
		break;	/* srdma_fetch() rejects what this QP cannot do */
	}

	for (i = 0; i < wr->num_sge; i++)
		length += wr->sg_list[i].length;
	/* as srdma_fetch() checks them: aligned, with room for the answer */
	if ((wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	     wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) &&
	    ((slot->iova & 7) || length < 8))
		return -EINVAL;
	if (wr->send_flags & IB_SEND_INLINE) {
		if (length > qp->sq.max_inline)
			return -EINVAL;
		inl = slot->dma.inline_data;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(inl, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			inl += wr->sg_list[i].length;
		}
	} else {
		/* struct ib_sge and struct rxe_sge share one layout */
		memcpy(slot->dma.sge, wr->sg_list,
		       wr->num_sge * sizeof(struct rxe_sge));
	}
	slot->dma.length = length;
	slot->dma.resid = length;
	slot->dma.num_sge = wr->num_sge;
	slot->dma.cur_sge = 0;
	slot->dma.sge_offset = 0;
	return 0;
}

int srdma_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct rxe_queue_buf *buf = qp->sq.q.buf;
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;
	int err = 0;

	/* IBTA 10.8.2: no sends before RTS */
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->is_user) {
		srdma_sq_run(qp, true);	/* librxe's doorbell: a syscall */
		return 0;
	}

	spin_lock_irqsave(&qp->sq.lock, flags);
	for (; wr; wr = wr->next) {
		u32 prod = buf->producer_index & qp->sq.q.index_mask;

		if (srdma_queue_full(&qp->sq.q, prod)) {
			err = -ENOMEM;
			break;
		}
		err = srdma_write_send_wqe(qp, wr,
					   srdma_queue_addr(&qp->sq.q, prod));
		if (err)
			break;
		/* slot written before the consumer may see it */
		smp_store_release(&buf->producer_index,
				  (prod + 1) & qp->sq.q.index_mask);
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (err)
		*bad_wr = wr;
	/* a kernel ULP may post with interrupts off */
	srdma_sq_run(qp, false);
	return err;
}

/* One receive into @wq's ring; the caller holds wq->lock. */
int srdma_post_one_recv(struct srdma_wq *wq, const struct ib_recv_wr *wr)
{
	struct rxe_queue_buf *buf = wq->q.buf;
	u32 prod = buf->producer_index & wq->q.index_mask;
	struct rxe_recv_wqe *slot;
	u32 i, length = 0;

	if (wr->num_sge > wq->max_sge)
		return -EINVAL;
	if (srdma_queue_full(&wq->q, prod))
		return -ENOMEM;
	slot = srdma_queue_addr(&wq->q, prod);
	slot->wr_id = wr->wr_id;
	for (i = 0; i < wr->num_sge; i++)
		length += wr->sg_list[i].length;
	memcpy(slot->dma.sge, wr->sg_list, wr->num_sge * sizeof(struct rxe_sge));
	slot->dma.length = length;
	slot->dma.resid = length;
	slot->dma.num_sge = wr->num_sge;
	slot->dma.cur_sge = 0;
	slot->dma.sge_offset = 0;
	/* slot written before the consumer may see it */
	smp_store_release(&buf->producer_index, (prod + 1) & wq->q.index_mask);
	return 0;
}

int srdma_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (qp->srq || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = srdma_post_one_recv(&qp->rq, wr);
		if (err)
			break;
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (err)
		*bad_wr = wr;
	/* in ERR, receives complete at once with a flush error */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		srdma_flush(qp, qp->is_user);
	return err;
}
