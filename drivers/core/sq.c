// SPDX-License-Identifier: GPL-2.0
/*
 * Send queue processing shared by both transports.
 *
 * Each ring slot has a kernel copy (struct srdma_swqe). The doorbell
 * copies new WQEs out of the ring (user memory is never trusted twice),
 * validates them, runs the local operations (bind, invalidate, fast
 * register) and hands the rest to the transport. WQEs complete strictly
 * in order; a slot returns to the producer only when its WQE completed.
 */
#include <linux/error-injection.h>

#include "srdma.h"
#include "transport.h"

/*
 * One kernel copy per ring slot, each as large as the QP's own SGE and
 * inline limits need: 104 bytes and 16 per SGE. Only UD and GSI WQEs
 * carry an address (96 bytes), after the SGEs: a connected QP's copies
 * are the smaller for it.
 */
int srdma_swqe_alloc(struct srdma_qp *qp)
{
	u32 payload = max_t(u32, qp->sq.max_sge * sizeof(struct ib_sge),
			    qp->sq.max_inline);
	u32 size = ALIGN(sizeof(struct srdma_swqe) + payload, 8);

	BUILD_BUG_ON(__alignof__(struct srdma_av) > 8);
	qp->swqe_av_off = 0;
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		qp->swqe_av_off = size;
		size = ALIGN(size + sizeof(struct srdma_av), 8);
	}
	qp->swqe_size = size;
	qp->swqe_buf = kvcalloc(srdma_queue_slots(&qp->sq.q), qp->swqe_size,
				GFP_KERNEL);
	if (!qp->swqe_buf)
		return -ENOMEM;

	/*
	 * The receive side's copy: the SGE list of the one receive being
	 * placed, as long as the receives this QP can be given. 16 bytes for
	 * one SGE instead of 512 for SRDMA_MAX_SGE, per QP.
	 */
	qp->recv_max_sge = max_t(u32, qp->srq ? qp->srq->rq.max_sge :
					      qp->rq.max_sge, 1);
	qp->recv_sge = kcalloc(qp->recv_max_sge, sizeof(*qp->recv_sge),
			       GFP_KERNEL);
	if (!qp->recv_sge) {
		srdma_swqe_free(qp);
		return -ENOMEM;
	}
	return 0;
}
ALLOW_ERROR_INJECTION(srdma_swqe_alloc, ERRNO);

void srdma_swqe_free(struct srdma_qp *qp)
{
	kvfree(qp->swqe_buf);
	qp->swqe_buf = NULL;
	kfree(qp->recv_sge);
	qp->recv_sge = NULL;
}

/* One of the RC opcodes that only some transports carry. */
static bool srdma_tp_rc_opcode(struct srdma_qp *qp, u32 opcode)
{
	u32 ops = qp_dev(qp)->tp->rc_opcodes;

	return opcode < BITS_PER_TYPE(ops) && (ops & BIT(opcode));
}

bool srdma_opcode_ok(struct srdma_qp *qp, u32 opcode)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM;
	case IB_QPT_UC:
		return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM ||
		       opcode == IB_WR_RDMA_WRITE ||
		       opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
		       opcode == IB_WR_LOCAL_INV || opcode == IB_WR_BIND_MW ||
		       (opcode == IB_WR_REG_MR && !qp->is_user);
	case IB_QPT_RC:
		switch (opcode) {
		case IB_WR_SEND:
		case IB_WR_SEND_WITH_INV:
		case IB_WR_RDMA_WRITE:
		case IB_WR_RDMA_READ:
		case IB_WR_LOCAL_INV:
		case IB_WR_BIND_MW:
			return true;
		case IB_WR_ATOMIC_CMP_AND_SWP:
		case IB_WR_ATOMIC_FETCH_AND_ADD:
			return qp_dev(qp)->ibdev.attrs.atomic_cap !=
			       IB_ATOMIC_NONE;
		case SRDMA_WR_ATOMIC_WRITE:
			return qp->is_user && srdma_tp_rc_opcode(qp, opcode);
		case IB_WR_REG_MR:
			/* carries a kernel pointer: never from user rings */
			return !qp->is_user;
		case IB_WR_RDMA_READ_WITH_INV:
		case IB_WR_SEND_WITH_IMM:	/* iWARP has no immediate data */
		case IB_WR_RDMA_WRITE_WITH_IMM:
			return srdma_tp_rc_opcode(qp, opcode);
		default:
			return false;
		}
	default:
		return false;
	}
}

#define SRDMA_WR_SAME(field) \
	BUILD_BUG_ON(offsetof(struct srdma_wr, field) != \
		     offsetof(struct rxe_send_wr, field) || \
		     sizeof_field(struct srdma_wr, field) != \
		     sizeof_field(struct rxe_send_wr, field))

/* struct srdma_wr is the head of struct rxe_send_wr, copied as one. */
static __always_inline void srdma_wr_layout_check(void)
{
	SRDMA_WR_SAME(wr_id);
	SRDMA_WR_SAME(opcode);
	SRDMA_WR_SAME(send_flags);
	SRDMA_WR_SAME(ex);
	SRDMA_WR_SAME(wr.rdma.remote_addr);
	SRDMA_WR_SAME(wr.rdma.rkey);
	SRDMA_WR_SAME(wr.atomic.remote_addr);
	SRDMA_WR_SAME(wr.atomic.compare_add);
	SRDMA_WR_SAME(wr.atomic.swap);
	SRDMA_WR_SAME(wr.atomic.rkey);
	SRDMA_WR_SAME(wr.ud.remote_qpn);
	SRDMA_WR_SAME(wr.ud.remote_qkey);
	SRDMA_WR_SAME(wr.ud.pkey_index);
	SRDMA_WR_SAME(wr.ud.ah_num);
	SRDMA_WR_SAME(wr.mw.addr);
	SRDMA_WR_SAME(wr.mw.length);
	SRDMA_WR_SAME(wr.mw.mr_lkey);
	SRDMA_WR_SAME(wr.mw.mw_rkey);
	SRDMA_WR_SAME(wr.mw.rkey);
	SRDMA_WR_SAME(wr.mw.access);
	BUILD_BUG_ON(sizeof(struct srdma_wr) > sizeof(struct rxe_send_wr));
}

/* Copy ring slot @index into its kernel WQE; returns a WC status. */
static enum ib_wc_status srdma_fetch(struct srdma_qp *qp, u32 index,
				     struct srdma_swqe *w)
{
	const struct rxe_send_wqe *slot = srdma_queue_addr(&qp->sq.q, index);
	u32 i, num_sge;
	u64 total = 0;

	srdma_wr_layout_check();
	memcpy(&w->wr, &slot->wr, sizeof(w->wr));
	w->iova = READ_ONCE(slot->iova);
	num_sge = READ_ONCE(slot->dma.num_sge);
	WRITE_ONCE(w->state, SRDMA_WQE_POSTED);
	w->status = IB_WC_SUCCESS;
	w->signaled = qp->sig_all || (w->wr.send_flags & IB_SEND_SIGNALED);
	w->sent = 0;
	w->done = 0;
	memset(w->tp_priv, 0, sizeof(w->tp_priv));
	w->num_sge = 0;
	w->length = 0;
	w->inlined = false;

	if (!srdma_opcode_ok(qp, w->wr.opcode))
		return IB_WC_LOC_QP_OP_ERR;
	if (w->wr.opcode == IB_WR_REG_MR || w->wr.opcode == IB_WR_BIND_MW ||
	    w->wr.opcode == IB_WR_LOCAL_INV)
		return IB_WC_SUCCESS;

	if (w->wr.opcode == SRDMA_WR_ATOMIC_WRITE) {
		/* eight bytes carried in the WQE, like inline data */
		if (w->iova & 7)
			return IB_WC_LOC_QP_OP_ERR;
		w->inlined = true;
		memcpy(w->sge, slot->dma.inline_data, 8);
		w->length = 8;
		return IB_WC_SUCCESS;
	}
	if (w->wr.send_flags & IB_SEND_INLINE) {
		u32 len = READ_ONCE(slot->dma.length);

		if (len > qp->sq.max_inline)
			return IB_WC_LOC_LEN_ERR;
		w->inlined = true;
		memcpy(w->sge, slot->dma.inline_data, len);
		w->length = len;
	} else {
		if (num_sge > qp->sq.max_sge)
			return IB_WC_LOC_LEN_ERR;
		for (i = 0; i < num_sge; i++) {
			w->sge[i].addr = READ_ONCE(slot->dma.sge[i].addr);
			w->sge[i].length = READ_ONCE(slot->dma.sge[i].length);
			w->sge[i].lkey = READ_ONCE(slot->dma.sge[i].lkey);
			total += w->sge[i].length;
		}
		if (total > SRDMA_MAX_MSG)
			return IB_WC_LOC_LEN_ERR;
		w->num_sge = num_sge;
		w->length = total;
	}

	if (w->wr.opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    w->wr.opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		if (w->length < 8 || (w->iova & 7))
			return IB_WC_LOC_QP_OP_ERR;
	}
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		if (srdma_ah_copy_av(qp_dev(qp), w->wr.wr.ud.ah_num,
				     qp->ibqp.pd, srdma_swqe_av(qp, w)))
			return IB_WC_LOC_QP_OP_ERR;
	}
	return IB_WC_SUCCESS;
}

/* Local operations finish when fetched; returns a WC status. */
static enum ib_wc_status srdma_run_local(struct srdma_qp *qp,
					 struct srdma_swqe *w)
{
	switch (w->wr.opcode) {
	case IB_WR_LOCAL_INV:
		return srdma_invalidate(qp, w->wr.ex.invalidate_rkey) ?
		       IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
	case IB_WR_BIND_MW:
		return srdma_bind_mw(qp, w) ? IB_WC_MW_BIND_ERR :
					      IB_WC_SUCCESS;
	case IB_WR_REG_MR:
		/* kernel QPs only (srdma_opcode_ok()): the MR's pointer */
		return srdma_reg_mr_wqe(qp,
					(struct ib_mr *)(uintptr_t)w->wr.wr.mw.addr,
					w->wr.wr.mw.rkey,
					w->wr.wr.mw.access) ?
		       IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
	default:
		return IB_WC_GENERAL_ERR;
	}
}

static bool srdma_is_local(u32 opcode)
{
	return opcode == IB_WR_LOCAL_INV || opcode == IB_WR_BIND_MW ||
	       opcode == IB_WR_REG_MR;
}

static enum ib_wc_opcode srdma_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case SRDMA_WR_ATOMIC_WRITE:
		return SRDMA_WC_ATOMIC_WRITE;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Complete finished WQEs from the oldest on, in order, at most
 * SRDMA_RING_BATCH of them; called with state_lock held. Returns true if
 * a completion overflowed its CQ.
 */
static bool srdma_sq_complete_locked(struct srdma_qp *qp)
{
	const struct srdma_transport *tp = qp_dev(qp)->tp;
	u32 budget = SRDMA_RING_BATCH;
	bool overflow = false;

	qp->sq_held = false;
	while (qp->sq_cons != qp->sq_fetch && budget--) {
		struct srdma_swqe *w = srdma_swqe_at(qp, qp->sq_cons);
		struct ib_wc wc = { .qp = &qp->ibqp };
		bool post;

		if (w->state != SRDMA_WQE_DONE)
			break;
		/* the transport calls srdma_sq_resume() when it may go */
		if (tp->sq_held && tp->sq_held(qp, w->status == IB_WC_SUCCESS)) {
			qp->sq_held = true;
			break;
		}
		post = w->signaled || w->status != IB_WC_SUCCESS;
		wc.wr_id = w->wr.wr_id;
		wc.status = w->status;
		wc.opcode = srdma_wc_opcode(w->wr.opcode);
		wc.byte_len = w->length;
		WRITE_ONCE(qp->sq_cons, qp->sq_cons + 1);
		/* done with the slot before the producer may reuse it */
		smp_store_release(&qp->sq.q.buf->consumer_index,
				  qp->sq_cons & qp->sq.q.index_mask);
		/*
		 * Only now the completion: a consumer that reaps it and posts
		 * again at once must find the slot free, or a full send queue
		 * (one WQE deep in latency tests) fails that post with ENOMEM.
		 */
		if (post && srdma_cq_post(qp->scq, &wc, false))
			overflow = true;
	}
	return overflow;
}

/*
 * A finished WQE waits at the head: more for srdma_sq_complete_locked(),
 * unless the transport holds it.
 */
static bool srdma_sq_head_done(struct srdma_qp *qp)
{
	return qp->sq_cons != qp->sq_fetch && !qp->sq_held &&
	       srdma_swqe_at(qp, qp->sq_cons)->state == SRDMA_WQE_DONE;
}

/*
 * How many WQEs user space (or post_send) added since the last fetch, at
 * most the free slots: those from sq_cons to sq_fetch hold WQEs the
 * transport may still be sending, and their kernel copies must not be
 * fetched over. Returns false if the producer index claims more than
 * that: it lapped its own WQEs in flight, which librxe never does.
 */
static bool srdma_sq_new(struct srdma_qp *qp, u32 *count)
{
	/* slot contents before the index: pairs with the producer */
	u32 prod = smp_load_acquire(&qp->sq.q.buf->producer_index);
	u32 mask = qp->sq.q.index_mask;
	u32 busy = qp->sq_fetch - qp->sq_cons;
	u32 room = busy < mask ? mask - busy : 0;
	u32 n = (prod - qp->sq_fetch) & mask;

	*count = min(n, room);
	return n <= room;
}

/*
 * The rest of a ring walk that stopped at its batch, in process context.
 * Once destroy has begun nothing needs completing (srdma_qp_queue_work).
 */
static void srdma_ring_defer(struct srdma_qp *qp)
{
	srdma_qp_queue_work(qp, &qp->ring_work);
}

/*
 * Batches one caller may run with breaks in between before it hands the
 * rest to ring_work: a user who keeps posting must not hold a doorbell,
 * or the work, for ever.
 */
static u32 srdma_ring_rounds(struct srdma_qp *qp)
{
	u32 slots = srdma_queue_slots(&qp->sq.q);

	if (!qp->srq)
		slots = max(slots, srdma_queue_slots(&qp->rq.q));
	return slots / SRDMA_RING_BATCH + 2;
}

enum srdma_sq_next { SRDMA_SQ_IDLE, SRDMA_SQ_MORE, SRDMA_SQ_FLUSH };

/*
 * One batch of srdma_sq_run(): fetch up to SRDMA_RING_BATCH new WQEs (in
 * RTS only; before RTS, posted WQEs wait in the ring, as librxe may post
 * before the QP is connected), complete up to as many finished ones.
 */
static enum srdma_sq_next srdma_sq_step(struct srdma_qp *qp)
{
	const struct srdma_transport *tp = qp_dev(qp)->tp;
	bool fatal = false, kick = false, more;
	unsigned long flags;
	u32 todo = 0, n;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state == IB_QPS_ERR) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return SRDMA_SQ_FLUSH;
	}
	if (qp->state == IB_QPS_RTS && !srdma_sq_new(qp, &todo)) {
		/* a user error: fetch nothing of it, flush what is queued */
		ibdev_dbg(&qp_dev(qp)->ibdev,
			  "QP %u: SQ producer index lapped its WQEs in flight\n",
			  qp->ibqp.qp_num);
		todo = 0;
		fatal = true;
	}
	n = min_t(u32, todo, SRDMA_RING_BATCH);
	while (n--) {
		struct srdma_swqe *w = srdma_swqe_at(qp, qp->sq_fetch);
		bool local;

		todo--;
		w->status = srdma_fetch(qp, qp->sq_fetch, w);
		local = srdma_is_local(w->wr.opcode);
		if (w->status == IB_WC_SUCCESS && local)
			w->status = srdma_run_local(qp, w);
		/* a transport without sq_kick sends nothing: fail, never hang */
		if (w->status == IB_WC_SUCCESS && !local && !tp->sq_kick)
			w->status = IB_WC_LOC_QP_OP_ERR;
		if (w->status != IB_WC_SUCCESS || local)
			WRITE_ONCE(w->state, SRDMA_WQE_DONE);
		/*
		 * The transport reads sq_fetch without our lock, from softirq
		 * too: publish the WQE only once its state is final, or a
		 * local WQE could be taken for one to send.
		 */
		smp_store_release(&qp->sq_fetch, qp->sq_fetch + 1);
		if (w->status != IB_WC_SUCCESS) {
			fatal = true;
			break;
		}
		kick |= !local;
	}
	if (srdma_sq_complete_locked(qp))
		fatal = true;
	more = !fatal && (todo || srdma_sq_head_done(qp));
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (fatal) {
		srdma_qp_error(qp);
		return SRDMA_SQ_IDLE;
	}
	if (kick && tp->sq_kick)
		tp->sq_kick(qp);
	return more ? SRDMA_SQ_MORE : SRDMA_SQ_IDLE;
}

static void __srdma_flush(struct srdma_qp *qp, bool may_sleep, bool defer);

/*
 * Fetch everything posted and start it; complete what finished; in ERR
 * flush. The lock is held with interrupts off for one batch at a time.
 * What is left after srdma_ring_rounds() goes to ring_work if @defer,
 * which is false for ring_work itself: one pass there covers a whole
 * ring, so what is still left was written since, and waits for the
 * verb that comes with it (a doorbell, a post, a modify). Otherwise a
 * user who keeps moving a ring's indices from user space, without a
 * single system call, would keep the work running for ever.
 */
static void __srdma_sq_run(struct srdma_qp *qp, bool may_sleep, bool defer)
{
	u32 rounds = srdma_ring_rounds(qp);

	for (;;) {
		switch (srdma_sq_step(qp)) {
		case SRDMA_SQ_IDLE:
			return;
		case SRDMA_SQ_FLUSH:
			__srdma_flush(qp, may_sleep, defer);
			return;
		case SRDMA_SQ_MORE:
			break;
		}
		if (!may_sleep || !--rounds) {
			if (defer)
				srdma_ring_defer(qp);
			return;
		}
		cond_resched();
	}
}

void srdma_sq_run(struct srdma_qp *qp, bool may_sleep)
{
	__srdma_sq_run(qp, may_sleep, true);
}

/* The transport finished a WQE (successfully or not). */
void srdma_sq_wqe_done(struct srdma_qp *qp, struct srdma_swqe *wqe,
		       enum ib_wc_status status)
{
	unsigned long flags;
	bool fatal, more;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (wqe->state == SRDMA_WQE_DONE) {
		/*
		 * Flushed meanwhile: its completion is posted, keep it as
		 * it is. An error is still the QP's.
		 */
		spin_unlock_irqrestore(&qp->state_lock, flags);
		if (status != IB_WC_SUCCESS)
			srdma_qp_error(qp);
		return;
	}
	wqe->status = status;
	WRITE_ONCE(wqe->state, SRDMA_WQE_DONE);
	fatal = srdma_sq_complete_locked(qp) || status != IB_WC_SUCCESS;
	more = !fatal && srdma_sq_head_done(qp);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (fatal)
		srdma_qp_error(qp);
	else if (more)
		srdma_ring_defer(qp);
}

/* The oldest WQE not yet complete fails with @status (a peer's Terminate). */
void srdma_sq_fail_head(struct srdma_qp *qp, enum ib_wc_status status)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->sq_cons != qp->sq_fetch) {
		struct srdma_swqe *w = srdma_swqe_at(qp, qp->sq_cons);

		if (w->state != SRDMA_WQE_DONE) {
			w->status = status;
			WRITE_ONCE(w->state, SRDMA_WQE_DONE);
			srdma_sq_complete_locked(qp);
		}
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	srdma_qp_error(qp);
}

/*
 * One batch of flushed receives; state_lock held. The producer is read
 * once: one that user space keeps moving is caught up with by the next
 * batch, or the next post_recv. Returns true if receives are left.
 */
static bool srdma_flush_rq_locked(struct srdma_qp *qp)
{
	struct rxe_queue_buf *buf = qp->rq.q.buf;
	u32 prod, n;

	/* slot contents before the index: pairs with the producer */
	prod = smp_load_acquire(&buf->producer_index);
	n = (prod - qp->rq_cons) & qp->rq.q.index_mask;
	if (n > SRDMA_RING_BATCH)
		n = SRDMA_RING_BATCH;
	while (n--) {
		const struct rxe_recv_wqe *r =
			srdma_queue_addr(&qp->rq.q, qp->rq_cons);
		struct ib_wc wc = {
			.wr_id = READ_ONCE(r->wr_id),
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = IB_WC_RECV,
			.qp = &qp->ibqp,
		};

		/* a CQ overflowed is in error: the rest waits for a post */
		if (srdma_cq_post(qp->rcq, &wc, false))
			return false;
		qp->rq_cons = (qp->rq_cons + 1) & qp->rq.q.index_mask;
		/* done with the slot before the producer may reuse it */
		smp_store_release(&buf->consumer_index, qp->rq_cons);
	}
	return qp->rq_cons != (prod & qp->rq.q.index_mask);
}

/*
 * Up to @todo WQEs posted in ERR complete with a flush error straight from
 * their ring slots, once all before them have: a transport that has not
 * seen the error yet may still be reading the kernel copies of those,
 * which are therefore never rewritten in ERR. sq_cons moves before
 * sq_fetch, so that a transport never finds a fetched slot whose copy it
 * could take for a new WQE. State_lock held. Returns true if any are left.
 */
static bool srdma_flush_new_locked(struct srdma_qp *qp, u32 todo)
{
	u32 n;

	if (qp->sq_cons != qp->sq_fetch)
		return true;
	n = min_t(u32, todo, SRDMA_RING_BATCH);
	while (n--) {
		const struct rxe_send_wqe *slot =
			srdma_queue_addr(&qp->sq.q, qp->sq_fetch);
		struct ib_wc wc = {
			.wr_id = READ_ONCE(slot->wr.wr_id),
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = srdma_wc_opcode(READ_ONCE(slot->wr.opcode)),
			.qp = &qp->ibqp,
		};

		/* a CQ overflowed is in error: the rest waits for a post */
		if (srdma_cq_post(qp->scq, &wc, false))
			return false;
		todo--;
		WRITE_ONCE(qp->sq_cons, qp->sq_cons + 1);
		/* sq_cons first: pairs with the transports' acquire */
		smp_store_release(&qp->sq_fetch, qp->sq_cons);
		/* done with the slot before the producer may reuse it */
		smp_store_release(&qp->sq.q.buf->consumer_index,
				  qp->sq_cons & qp->sq.q.index_mask);
	}
	return todo != 0;
}

/*
 * One batch of srdma_flush(): fail up to SRDMA_RING_BATCH outstanding
 * WQEs and complete them, then flush up to as many posted since, and as
 * many receives. Returns true if any are left.
 */
static bool srdma_flush_step(struct srdma_qp *qp)
{
	unsigned long flags;
	u32 i, todo;
	bool more;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state != IB_QPS_ERR) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return false;
	}
	/*
	 * Counted before the outstanding ones free their slots: a producer
	 * that lapped them has only what fits flushed, the rest at the next
	 * doorbell.
	 */
	srdma_sq_new(qp, &todo);
	/* after the one that failed, which keeps its own status */
	for (i = 0; i < SRDMA_RING_BATCH && qp->sq_cons + i != qp->sq_fetch;
	     i++) {
		struct srdma_swqe *w = srdma_swqe_at(qp, qp->sq_cons + i);

		if (w->state != SRDMA_WQE_DONE) {
			w->status = IB_WC_WR_FLUSH_ERR;
			WRITE_ONCE(w->state, SRDMA_WQE_DONE);
		}
	}
	srdma_sq_complete_locked(qp);
	/* what the transport holds it resumes (srdma_sq_resume()) */
	more = !qp->sq_held && srdma_flush_new_locked(qp, todo);
	if (!qp->srq && srdma_flush_rq_locked(qp))
		more = true;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return more;
}

/*
 * In the error state every outstanding WQE completes with a flush error,
 * one batch per hold of state_lock.
 */
static void __srdma_flush(struct srdma_qp *qp, bool may_sleep, bool defer)
{
	const struct srdma_transport *tp = qp_dev(qp)->tp;
	u32 rounds = srdma_ring_rounds(qp);

	/*
	 * The receive a transport holds is older than any in the ring. Not
	 * from a hard interrupt (a kernel ULP's post_recv in ERR): the
	 * transport holds its lock with only bottom halves off.
	 */
	if (tp->recv_flush && !in_hardirq())
		tp->recv_flush(qp);
	while (srdma_flush_step(qp)) {
		if (!may_sleep || !--rounds) {
			if (defer)
				srdma_ring_defer(qp);
			return;
		}
		cond_resched();
	}
}

void srdma_flush(struct srdma_qp *qp, bool may_sleep)
{
	__srdma_flush(qp, may_sleep, true);
}

void srdma_sq_resume(struct srdma_qp *qp)
{
	srdma_ring_defer(qp);
}

/* A ring walk that stopped at its batch goes on here, for one pass. */
void srdma_ring_work(struct work_struct *work)
{
	struct srdma_qp *qp = container_of(work, struct srdma_qp, ring_work);
	const struct srdma_transport *tp = qp_dev(qp)->tp;

	__srdma_sq_run(qp, true, false);
	/*
	 * The completions this pass posted may be the last an SQD drain
	 * waited for: the transport looked before they were posted.
	 */
	if (tp->sqd_drains && tp->sq_kick && READ_ONCE(qp->state) == IB_QPS_SQD)
		tp->sq_kick(qp);
	srdma_qp_put(qp);
}

/*
 * Copy the receive WQE in ring slot @r, each field read once. One with
 * more SGEs than the ring was made for was written past librxe, which
 * refuses it at post time: it is taken with no SGEs at all, so that a
 * message with any payload fails on it with a local length error (and
 * the QP goes to error) instead of landing in a list cut short.
 */
void srdma_recv_wqe_copy(const struct rxe_recv_wqe *r, u32 max_sge,
			 struct rxe_recv_wqe *out, struct ib_sge *sge)
{
	u32 i, n = READ_ONCE(r->dma.num_sge);

	out->wr_id = READ_ONCE(r->wr_id);
	if (n > max_sge)
		n = 0;
	out->dma.num_sge = n;
	for (i = 0; i < n; i++) {
		sge[i].addr = READ_ONCE(r->dma.sge[i].addr);
		sge[i].length = READ_ONCE(r->dma.sge[i].length);
		sge[i].lkey = READ_ONCE(r->dma.sge[i].lkey);
	}
}

/*
 * For srdma_recv_take(): take the next posted receive, copied and checked.
 * @sge has room for @max_sge entries; a receive with more is taken with
 * none (and fails as too short). Returns false when the receive queue is
 * empty.
 */
bool srdma_rq_pop(struct srdma_qp *qp, struct rxe_recv_wqe *out,
		  struct ib_sge *sge, u32 max_sge)
{
	struct rxe_queue_buf *buf = qp->rq.q.buf;
	unsigned long flags;

	if (qp->srq)
		return srdma_srq_pop(qp->srq, out, sge, max_sge);

	spin_lock_irqsave(&qp->state_lock, flags);
	/* slot contents before the index: pairs with the producer */
	if (qp->rq_cons == (smp_load_acquire(&buf->producer_index) &
			    qp->rq.q.index_mask)) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return false;
	}
	srdma_recv_wqe_copy(srdma_queue_addr(&qp->rq.q, qp->rq_cons),
			    min(qp->rq.max_sge, max_sge), out, sge);
	qp->rq_cons = (qp->rq_cons + 1) & qp->rq.q.index_mask;
	/* done with the slot before the producer may reuse it */
	smp_store_release(&buf->consumer_index, qp->rq_cons);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return true;
}
