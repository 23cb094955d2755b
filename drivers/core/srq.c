// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues, with the limit event: armed by modify_srq
 * (IB_SRQ_LIMIT), fired once when the posted count drops below it.
 */
#include <linux/uaccess.h>

#include "srdma.h"

/*
 * The limit event, raised in softirq with no lock of srdma's held: the
 * transports take receives under their own locks, and the consumer's
 * handler may post to the SRQ and re-arm it at once. A tasklet, not a
 * work item: the consumer has to refill the SRQ before its senders run
 * into RNR, and one softirq hop is the least delay.
 */
static void srdma_srq_limit_tasklet(struct tasklet_struct *t)
{
	struct srdma_srq *srq = from_tasklet(srq, t, limit_tasklet);
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

static int srdma_srq_ring(struct srdma_dev *dev, struct srdma_srq *srq,
			  u32 max_wr, u32 max_sge, struct ib_udata *udata,
			  struct mminfo *mi)
{
	u32 elem = roundup_pow_of_two(sizeof(struct rxe_recv_wqe) +
				      max_t(u32, max_sge, 1) *
				      sizeof(struct rxe_sge));
	int err;

	err = srdma_queue_init(dev, &srq->rq.q, max_t(u32, max_wr, 1), elem,
			       udata, mi);
	if (err)
		return err;
	srq->rq.max_wr = srdma_queue_slots(&srq->rq.q) - 1;
	srq->rq.max_sge = min_t(u32, (elem - sizeof(struct rxe_recv_wqe)) /
				sizeof(struct rxe_sge), SRDMA_MAX_SRQ_SGE);
	srq->cons = 0;
	return 0;
}

int srdma_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibsrq->device);
	struct srdma_srq *srq = to_ssrq(ibsrq);
	struct rxe_create_srq_resp resp = {};
	struct ib_srq_attr *a = &init->attr;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (a->max_wr > SRDMA_MAX_SRQ_WR || a->max_sge > SRDMA_MAX_SRQ_SGE ||
	    a->srq_limit > a->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&dev->num_srq) > SRDMA_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&srq->rq.lock);
	spin_lock_init(&srq->cons_lock);
	tasklet_setup(&srq->limit_tasklet, srdma_srq_limit_tasklet);
	srq->is_user = !!udata;
	srq->limit = a->srq_limit;
	err = srdma_srq_ring(dev, srq, a->max_wr, a->max_sge, udata, &resp.mi);
	if (err)
		goto err_count;
	a->max_wr = srq->rq.max_wr;
	a->max_sge = srq->rq.max_sge;
	srq->srq_num = atomic_inc_return(&dev->srq_seq) & 0xffffff;
	if (udata) {
		resp.srq_num = srq->srq_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	return 0;

err_ring:
	srdma_queue_fini(&srq->rq.q);
err_count:
	atomic_dec(&dev->num_srq);
	return err;
}

static u32 srdma_srq_count(struct srdma_srq *srq)
{
	/* slot contents before the index: pairs with the producer */
	u32 prod = smp_load_acquire(&srq->rq.q.buf->producer_index);

	return (prod - srq->cons) & srq->rq.q.index_mask;
}

/* Resize: the posted receives move to a new ring (rxe ABI: new mminfo). */
static int srdma_srq_resize(struct srdma_srq *srq, u32 max_wr,
			    struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(srq->ibsrq.device);
	struct rxe_modify_srq_cmd cmd = {};
	struct srdma_srq tmp = {};
	struct srdma_queue old;
	struct mminfo mi = {};
	unsigned long flags;
	u32 count, i;
	int err;

	if (udata) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
	}
	err = srdma_srq_ring(dev, &tmp, max_wr, srq->rq.max_sge, udata, &mi);
	if (err)
		return err;
	if (udata && copy_to_user(u64_to_user_ptr(cmd.mmap_info_addr), &mi,
				  sizeof(mi))) {
		srdma_queue_fini(&tmp.rq.q);
		return -EFAULT;
	}

	spin_lock_irqsave(&srq->rq.lock, flags);
	spin_lock(&srq->cons_lock);
	count = srdma_srq_count(srq);
	if (count > tmp.rq.max_wr) {
		spin_unlock(&srq->cons_lock);
		spin_unlock_irqrestore(&srq->rq.lock, flags);
		srdma_queue_fini(&tmp.rq.q);
		return -EINVAL;
	}
	for (i = 0; i < count; i++)
		memcpy(srdma_queue_addr(&tmp.rq.q, i),
		       srdma_queue_addr(&srq->rq.q, srq->cons + i),
		       min(tmp.rq.q.elem_size, srq->rq.q.elem_size));
	tmp.rq.q.buf->producer_index = count;
	old = srq->rq.q;
	srq->rq.q = tmp.rq.q;
	srq->rq.max_wr = tmp.rq.max_wr;
	srq->cons = 0;
	spin_unlock(&srq->cons_lock);
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	srdma_queue_fini(&old);
	return 0;
}

int srdma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR) {
		if (attr->max_wr > SRDMA_MAX_SRQ_WR || !attr->max_wr)
			return -EINVAL;
		if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > attr->max_wr)
			return -EINVAL;
		err = srdma_srq_resize(srq, attr->max_wr, udata);
		if (err)
			return err;
	}
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->rq.max_wr)
			return -EINVAL;
		spin_lock_irqsave(&srq->cons_lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->cons_lock, flags);
	}
	return 0;
}

int srdma_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

int srdma_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);

	/*
	 * ib_core refuses while QPs still use this SRQ, and only their
	 * receives schedule the limit tasklet: once tasklet_kill() has waited
	 * for a pending or running event, none can follow.
	 */
	tasklet_kill(&srq->limit_tasklet);
	srdma_queue_fini(&srq->rq.q);
	atomic_dec(&to_sdev(ibsrq->device)->num_srq);
	return 0;
}

int srdma_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&srq->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = srdma_post_one_recv(&srq->rq, wr);
		if (err)
			break;
	}
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/* Take one receive for a transport; fires the limit event when due. */
bool srdma_srq_pop(struct srdma_srq *srq, struct rxe_recv_wqe *out,
		   struct ib_sge *sge, u32 max_sge)
{
	unsigned long flags;
	u32 count;

	spin_lock_irqsave(&srq->cons_lock, flags);
	/*
	 * The producer index is read once: the limit below is judged on the
	 * count this pop saw, not on one user space moved meanwhile.
	 */
	count = srdma_srq_count(srq);
	if (!count) {
		spin_unlock_irqrestore(&srq->cons_lock, flags);
		return false;
	}
	srdma_recv_wqe_copy(srdma_queue_addr(&srq->rq.q, srq->cons),
			    min(srq->rq.max_sge, max_sge), out, sge);
	srq->cons = (srq->cons + 1) & srq->rq.q.index_mask;
	/* done with the slot before the producer may reuse it */
	smp_store_release(&srq->rq.q.buf->consumer_index, srq->cons);
	if (srq->limit && count - 1 < srq->limit) {
		srq->limit = 0;		/* one event per arming */
		tasklet_schedule(&srq->limit_tasklet);
	}
	spin_unlock_irqrestore(&srq->cons_lock, flags);
	return true;
}
