// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues. The kernel produces completions; user space (librxe)
 * or a kernel consumer (poll_cq) consumes them. User CQ slots hold
 * struct ib_uverbs_wc, kernel ones struct ib_wc. Indices read back from
 * user memory are masked and never trusted for anything but fullness.
 */
#include "srdma.h"
#include "transport.h"

static u32 srdma_cq_elem_size(bool is_user)
{
	return is_user ? sizeof(struct ib_uverbs_wc) : sizeof(struct ib_wc);
}

/* What srdma_cq_post() left for the tasklet to call: bits of cq->due. */
enum {
	SRDMA_CQ_COMP_DUE,		/* the armed notification fired */
	SRDMA_CQ_ERR_DUE,		/* the CQ overflowed: IB_EVENT_CQ_ERR */
};

/*
 * The consumer's handlers run here, in softirq, with no lock of srdma's
 * held. srdma_cq_post() runs under the transports' locks (RoCE's
 * responder's, iWARP's recv_lock) and the QP's state_lock, while a
 * handler may post, poll and re-arm on the CQ and its QPs: a ULP with a
 * comp_handler of its own may post a SEND from it, which on RoCE takes
 * the responder's lock again. A tasklet costs one softirq hop, run at
 * the end of the receive softirq that posted the completion, where a
 * work item would wait for a worker; and it never runs on two CPUs at
 * once, so a CQ's handlers are not re-entered. User CQs take the same
 * path: ib_uverbs' handlers only queue an event and wake its reader, who
 * then waits for a context switch far longer than the hop.
 *
 * A notification is one-shot, armed by req_notify_cq. One fired while
 * the tasklet is pending joins that call; one fired while it runs
 * schedules it again: every arming that fired gets a call after the
 * completion that fired it.
 */
static void srdma_cq_tasklet(struct tasklet_struct *t)
{
	struct srdma_cq *cq = from_tasklet(cq, t, tasklet);
	unsigned long due = xchg(&cq->due, 0);

	if ((due & BIT(SRDMA_CQ_COMP_DUE)) && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	if ((due & BIT(SRDMA_CQ_ERR_DUE)) && cq->ibcq.event_handler) {
		struct ib_event ev = {
			.device = cq->ibcq.device,
			.element.cq = &cq->ibcq,
			.event = IB_EVENT_CQ_ERR,
		};

		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
}

/* Leave a handler call to the tasklet; any context, cq->lock held. */
static void srdma_cq_defer(struct srdma_cq *cq, unsigned int what)
{
	lockdep_assert_held(&cq->lock);
	set_bit(what, &cq->due);
	tasklet_schedule(&cq->tasklet);
}

int srdma_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibcq->device);
	struct srdma_cq *cq = to_scq(ibcq);
	struct rxe_create_cq_resp resp = {};
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SRDMA_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&dev->num_cq) > SRDMA_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&cq->lock);
	tasklet_setup(&cq->tasklet, srdma_cq_tasklet);
	cq->is_user = !!udata;
	err = srdma_queue_init(dev, &cq->q, attr->cqe,
			       srdma_cq_elem_size(cq->is_user), udata,
			       &resp.mi);
	if (err)
		goto err_count;
	ibcq->cqe = srdma_queue_slots(&cq->q) - 1;

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	srdma_queue_fini(&cq->q);
err_count:
	atomic_dec(&dev->num_cq);
	return err;
}

/*
 * ib_free_cq() calls this before it stops the polling its comp_handler
 * schedules (irq_poll, cq->work): a handler call still pending must be
 * over by then, or it would schedule that polling again on a CQ about to
 * be freed. ib_core refuses to get here while QPs use the CQ, and only
 * their completions schedule the tasklet, so once tasklet_kill() has
 * waited for a pending or running call, none can follow. Process context.
 */
int srdma_pre_destroy_cq(struct ib_cq *ibcq)
{
	tasklet_kill(&to_scq(ibcq)->tasklet);
	return 0;
}

int srdma_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct srdma_cq *cq = to_scq(ibcq);

	/*
	 * ib_core refuses while QPs or SRQs still use this CQ. Other paths
	 * than ib_free_cq() come here without srdma_pre_destroy_cq(): no
	 * handler call may come once the consumer is told the CQ is gone.
	 */
	srdma_pre_destroy_cq(ibcq);
	srdma_queue_fini(&cq->q);
	atomic_dec(&to_sdev(ibcq->device)->num_cq);
	return 0;
}

static u32 srdma_cq_cons(struct srdma_cq *cq)
{
	/* the consumer is done with the slot: pairs with its release */
	return smp_load_acquire(&cq->q.buf->consumer_index) & cq->q.index_mask;
}

static u32 srdma_cq_count(struct srdma_cq *cq)
{
	return (cq->prod - srdma_cq_cons(cq)) & cq->q.index_mask;
}

/*
 * struct ib_uverbs_wc has no field for the network header type of a RoCE
 * UD receive. mlx5 puts it in the SL (bits 2:0: 1 IPv6, 2 IPv4), and UCX
 * before 1.19 (Debian 12 ships 1.13) reads it from there on every verbs
 * device to find the destination address in the GRH area: with SL 0 it
 * takes an IPv4 packet for IPv6, compares bytes of the IPv4 header with
 * its GIDs and drops every UD packet, so its UD wire-up times out (as on
 * rdma_rxe). RoCE v2 carries no SL (srdma sends no VLAN tag): user space
 * gets the type there the same way. The flag itself stays in the kernel:
 * in user space its bit means IBV_WC_TM_DATA_VALID.
 */
static void srdma_fill_uwc_l3(struct ib_uverbs_wc *uwc, const struct ib_wc *wc)
{
	if (!(wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE))
		return;
	uwc->wc_flags &= ~IB_WC_WITH_NETWORK_HDR_TYPE;
	if (wc->network_hdr_type == RDMA_NETWORK_IPV4)
		uwc->sl = 2;
	else if (wc->network_hdr_type == RDMA_NETWORK_IPV6)
		uwc->sl = 1;
}

static void srdma_fill_uwc(struct ib_uverbs_wc *uwc, const struct ib_wc *wc)
{
	memset(uwc, 0, sizeof(*uwc));
	uwc->wr_id = wc->wr_id;
	uwc->status = wc->status;
	uwc->opcode = wc->opcode;
	uwc->vendor_err = wc->vendor_err;
	uwc->byte_len = wc->byte_len;
	uwc->ex.imm_data = wc->ex.imm_data;
	uwc->qp_num = wc->qp->qp_num;
	uwc->src_qp = wc->src_qp;
	uwc->wc_flags = wc->wc_flags;
	uwc->pkey_index = wc->pkey_index;
	uwc->slid = wc->slid;
	uwc->sl = wc->sl;
	uwc->dlid_path_bits = wc->dlid_path_bits;
	uwc->port_num = wc->port_num;
	srdma_fill_uwc_l3(uwc, wc);
}

/*
 * Post one completion. Returns -ENOSPC on overflow, the CQ error event
 * left to the tasklet as the completion handler is; the caller then
 * moves its QP to the error state.
 */
int srdma_cq_post(struct srdma_cq *cq, const struct ib_wc *wc, bool solicited)
{
	struct srdma_dev *dev = to_sdev(cq->ibcq.device);
	unsigned long flags;
	bool notify;
	void *slot;

	spin_lock_irqsave(&cq->lock, flags);
	if (unlikely(cq->overflowed ||
		     ((cq->prod + 1) & cq->q.index_mask) == srdma_cq_cons(cq))) {
		/* one event per overflow: it lasts until a resize */
		if (!cq->overflowed)
			srdma_cq_defer(cq, SRDMA_CQ_ERR_DUE);
		cq->overflowed = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		srdma_count(dev, SRDMA_CNT_CQ_OVERFLOW);
		return -ENOSPC;
	}

	slot = srdma_queue_addr(&cq->q, cq->prod);
	if (cq->is_user)
		srdma_fill_uwc(slot, wc);
	else
		memcpy(slot, wc, sizeof(*wc));
	cq->prod = (cq->prod + 1) & cq->q.index_mask;
	/* slot written before the consumer may see it */
	smp_store_release(&cq->q.buf->producer_index, cq->prod);

	notify = cq->notify == IB_CQ_NEXT_COMP ||
		 (cq->notify == IB_CQ_SOLICITED &&
		  (solicited || wc->status != IB_WC_SUCCESS));
	if (notify) {
		cq->notify = 0;
		srdma_cq_defer(cq, SRDMA_CQ_COMP_DUE);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return 0;
}

int srdma_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct srdma_cq *cq = to_scq(ibcq);
	struct rxe_queue_buf *buf;
	unsigned long flags;
	int n = 0;

	/*
	 * Kernel CQs only: a user CQ's slots hold struct ib_uverbs_wc for
	 * librxe, and ib_uverbs never polls them (POLL_CQ is not enabled).
	 */
	if (cq->is_user)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	buf = cq->q.buf;	/* a resize replaces it under the lock */
	while (n < num) {
		u32 cons = buf->consumer_index & cq->q.index_mask;

		if (cons == cq->prod)
			break;
		memcpy(&wc[n++], srdma_queue_addr(&cq->q, cons), sizeof(*wc));
		/* done with the slot before the producer may reuse it */
		smp_store_release(&buf->consumer_index,
				  (cons + 1) & cq->q.index_mask);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int srdma_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct srdma_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && srdma_cq_count(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/* Grow or shrink; the entries not yet polled move to the new ring. */
int srdma_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibcq->device);
	struct srdma_cq *cq = to_scq(ibcq);
	struct rxe_resize_cq_resp resp = {};
	struct srdma_queue nq, oq;
	unsigned long flags;
	u32 count, cons, i;
	int err;

	if (cqe < 1 || cqe > SRDMA_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = srdma_queue_init(dev, &nq, cqe, cq->q.elem_size, udata,
			       &resp.mi);
	if (err)
		return err;

	spin_lock_irqsave(&cq->lock, flags);
	/* the consumer index once: count and copy agree on where to start */
	cons = srdma_cq_cons(cq);
	count = (cq->prod - cons) & cq->q.index_mask;
	if (count > nq.index_mask) {
		spin_unlock_irqrestore(&cq->lock, flags);
		srdma_queue_fini(&nq);
		return -EINVAL;
	}
	for (i = 0; i < count; i++)
		memcpy(srdma_queue_addr(&nq, i),
		       srdma_queue_addr(&cq->q, cons + i), cq->q.elem_size);
	nq.buf->producer_index = count;
	nq.buf->consumer_index = 0;
	oq = cq->q;
	cq->q = nq;
	cq->prod = count;
	cq->overflowed = false;
	ibcq->cqe = nq.index_mask;
	spin_unlock_irqrestore(&cq->lock, flags);

	srdma_queue_fini(&oq);
	if (udata) {
		/* the old ring is gone either way; report the new one */
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			return err;
	}
	return 0;
}
