// SPDX-License-Identifier: GPL-2.0
/*
 * Self-test of how srdma calls its consumers' handlers: a CQ's
 * completion handler and CQ error event, and an SRQ's limit event, come
 * after srdma_cq_post() or srdma_srq_pop() returned, with none of the
 * locks held that those ran under, from where the handler may call verbs
 * on the same objects; a pending call comes before destroy returns, none
 * after.
 *
 * A CQ and an SRQ of a synthetic device that is never registered, made
 * and destroyed by the driver's own verbs. A lock of the test's stands
 * for a transport's (RoCE's responder lock): completions are posted and
 * receives taken under it, with bottom halves off as the responder has
 * them, and the handlers try to take it and the object's own lock.
 */
#include <linux/completion.h>
#include <linux/slab.h>

#include "transport.h"
#include "selftest.h"

#define ST_CQE		3	/* a four-slot ring: three completions fit */
#define ST_SRQ_WR	4
#define ST_WAIT		(10 * HZ)

/* What the handlers saw; the test thread checks it once they are done. */
struct srdma_st_hd {
	spinlock_t tp_lock;		/* stands for a transport's lock */
	struct srdma_cq *cq;
	struct srdma_srq *srq;
	struct completion called;	/* the handler the step waits for */
	bool reenter;			/* the completion handler posts again */
	unsigned int comp_calls, err_calls, limit_calls;
	unsigned int comp_at_post;	/* calls when the post returned */
	bool locked;			/* a lock was held around a handler */
	bool irqs_off;
	u64 polled[ST_CQE + 1];		/* wr_ids, in the order polled */
	unsigned int npolled;
	int verb_err;			/* a verb called from a handler failed */
};

static struct srdma_st_hd srdma_st_hd __initdata;

/* Neither the transport's lock nor @obj_lock held around the handler. */
static void __init srdma_st_hd_locks(struct srdma_st_hd *hd,
				     spinlock_t *obj_lock)
{
	if (irqs_disabled())
		hd->irqs_off = true;
	if (spin_trylock(&hd->tp_lock))
		spin_unlock(&hd->tp_lock);
	else
		hd->locked = true;
	if (spin_trylock(obj_lock))
		spin_unlock(obj_lock);
	else
		hd->locked = true;
}

static void __init srdma_st_hd_poll(struct srdma_st_hd *hd)
{
	struct ib_wc wc;

	while (srdma_poll_cq(&hd->cq->ibcq, 1, &wc) == 1 &&
	       hd->npolled < ARRAY_SIZE(hd->polled))
		hd->polled[hd->npolled++] = wc.wr_id;
}

static int __init srdma_st_hd_post(struct srdma_cq *cq, u64 wr_id)
{
	struct ib_wc wc = { .wr_id = wr_id, .opcode = IB_WC_RECV };

	return srdma_cq_post(cq, &wc, false);
}

/*
 * As a ULP's comp_handler that posts on its own QP: poll, re-arm, and a
 * completion of its own on the same CQ, which calls it once more.
 */
static void __init srdma_st_hd_comp(struct ib_cq *ibcq, void *ctx)
{
	struct srdma_st_hd *hd = ctx;

	srdma_st_hd_locks(hd, &hd->cq->lock);
	hd->comp_calls++;
	srdma_st_hd_poll(hd);
	if (hd->reenter) {
		hd->reenter = false;
		if (srdma_req_notify_cq(ibcq, IB_CQ_NEXT_COMP) < 0 ||
		    srdma_st_hd_post(hd->cq, 2))
			hd->verb_err = -EIO;
		return;
	}
	complete(&hd->called);
}

/* IB_EVENT_CQ_ERR: re-arm the CQ and drain it, as a ULP would. */
static void __init srdma_st_hd_cq_event(struct ib_event *ev, void *ctx)
{
	struct srdma_st_hd *hd = ctx;

	srdma_st_hd_locks(hd, &hd->cq->lock);
	if (ev->event != IB_EVENT_CQ_ERR || ev->element.cq != &hd->cq->ibcq)
		hd->verb_err = -EINVAL;
	hd->err_calls++;
	if (srdma_req_notify_cq(&hd->cq->ibcq, IB_CQ_NEXT_COMP) < 0)
		hd->verb_err = -EIO;
	srdma_st_hd_poll(hd);
	complete(&hd->called);
}

/* IB_EVENT_SRQ_LIMIT_REACHED: post a receive and arm the limit again. */
static void __init srdma_st_hd_srq_event(struct ib_event *ev, void *ctx)
{
	struct srdma_st_hd *hd = ctx;
	struct ib_srq_attr attr = { .srq_limit = 1 };
	struct ib_sge sge = { .addr = 0x1000, .length = 8 };
	struct ib_recv_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;

	srdma_st_hd_locks(hd, &hd->srq->cons_lock);
	if (ev->event != IB_EVENT_SRQ_LIMIT_REACHED ||
	    ev->element.srq != &hd->srq->ibsrq)
		hd->verb_err = -EINVAL;
	hd->limit_calls++;
	if (srdma_post_srq_recv(&hd->srq->ibsrq, &wr, &bad) ||
	    srdma_modify_srq(&hd->srq->ibsrq, &attr, IB_SRQ_LIMIT, NULL))
		hd->verb_err = -EIO;
	complete(&hd->called);
}

static bool __init srdma_st_hd_wait(struct srdma_st *st,
				    struct srdma_st_hd *hd, const char *what)
{
	return ST_CHECK(st, wait_for_completion_timeout(&hd->called, ST_WAIT),
			"%s: the handler was not called", what);
}

/* After each step: no lock was held around a handler, its verbs worked. */
static void __init srdma_st_hd_clean(struct srdma_st *st,
				     struct srdma_st_hd *hd, const char *what)
{
	ST_CHECK(st, !hd->locked && !hd->irqs_off,
		 "%s: a handler ran with a lock held (%d) or interrupts off (%d)",
		 what, hd->locked, hd->irqs_off);
	ST_CHECK(st, !hd->verb_err, "%s: a verb in the handler failed: %d",
		 what, hd->verb_err);
}

/*
 * A completion posted under the transport's lock: its handler is not
 * called from inside the post, but after, and posts one of its own,
 * which calls it again.
 */
static void __init srdma_st_hd_comp_case(struct srdma_st *st,
					 struct srdma_st_hd *hd)
{
	struct srdma_cq *cq = hd->cq;
	int err;

	reinit_completion(&hd->called);
	hd->reenter = true;
	srdma_req_notify_cq(&cq->ibcq, IB_CQ_NEXT_COMP);
	spin_lock_bh(&hd->tp_lock);
	err = srdma_st_hd_post(cq, 1);
	hd->comp_at_post = hd->comp_calls;
	spin_unlock_bh(&hd->tp_lock);
	ST_CHECK(st, !err && !hd->comp_at_post,
		 "completion: post %d; the handler ran inside it (%u)", err,
		 hd->comp_at_post);
	if (!srdma_st_hd_wait(st, hd, "completion"))
		return;
	ST_CHECK(st, hd->comp_calls == 2 && hd->npolled == 2 &&
		 hd->polled[0] == 1 && hd->polled[1] == 2,
		 "completion: %u calls polled %u completions, want 2 and 2 (wr_ids 1, 2)",
		 hd->comp_calls, hd->npolled);
	srdma_st_hd_clean(st, hd, "completion");
}

/*
 * The completion that overflows the CQ, posted under the transport's
 * lock: the error event comes after, once, and its handler re-arms and
 * polls the CQ.
 */
static void __init srdma_st_hd_err_case(struct srdma_st *st,
					struct srdma_st_hd *hd)
{
	struct srdma_cq *cq = hd->cq;
	unsigned int err_at_post;
	int i, err = 0;

	reinit_completion(&hd->called);
	hd->npolled = 0;
	for (i = 0; i < ST_CQE && !err; i++)
		err = srdma_st_hd_post(cq, 10 + i);
	if (!ST_CHECK(st, !err, "CQ error: filling the CQ: %d", err))
		return;
	spin_lock_bh(&hd->tp_lock);
	err = srdma_st_hd_post(cq, 20);
	err_at_post = hd->err_calls;
	spin_unlock_bh(&hd->tp_lock);
	ST_CHECK(st, err == -ENOSPC && !err_at_post,
		 "CQ error: overflowing post %d, want -ENOSPC; the event came inside it (%u)",
		 err, err_at_post);
	if (!srdma_st_hd_wait(st, hd, "CQ error"))
		return;
	ST_CHECK(st, hd->npolled == ST_CQE,
		 "CQ error: the handler polled %u completions, want %d",
		 hd->npolled, ST_CQE);
	/* still overflowed: no second event */
	err = srdma_st_hd_post(cq, 21);
	ST_CHECK(st, err == -ENOSPC, "CQ error: post after overflow %d", err);
	srdma_st_hd_clean(st, hd, "CQ error");
}

/* A pending completion handler is called before destroy returns. */
static void __init srdma_st_hd_destroy_case(struct srdma_st *st,
					    struct srdma_st_hd *hd)
{
	struct srdma_cq *cq = hd->cq;
	unsigned int before = hd->comp_calls;
	unsigned long flags;
	int err;

	/* a resize ends the overflow */
	err = srdma_resize_cq(&cq->ibcq, ST_CQE, NULL);
	if (!ST_CHECK(st, !err, "destroy: resize %d", err))
		return;
	reinit_completion(&hd->called);
	srdma_req_notify_cq(&cq->ibcq, IB_CQ_NEXT_COMP);
	/* no softirq runs on the way out of an irq-off section */
	local_irq_save(flags);
	err = srdma_st_hd_post(cq, 30);
	local_irq_restore(flags);
	srdma_destroy_cq(&cq->ibcq, NULL);
	hd->cq = NULL;
	ST_CHECK(st, !err && hd->comp_calls == before + 1 &&
		 completion_done(&hd->called),
		 "destroy: post %d, %u handler calls by its return, want 1",
		 err, hd->comp_calls - before);
	ST_CHECK(st, hd->err_calls == 1, "CQ error: %u events, want 1",
		 hd->err_calls);
	srdma_st_hd_clean(st, hd, "destroy");
}

/*
 * Receives taken under the transport's lock, down past the SRQ limit:
 * the event comes after, and its handler posts to the SRQ and arms the
 * limit again.
 */
static void __init srdma_st_hd_srq_case(struct srdma_st *st,
					struct srdma_st_hd *hd)
{
	struct ib_srq_attr attr = { .srq_limit = 2 };
	struct ib_sge sge = { .addr = 0x1000, .length = 8 };
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct srdma_srq *srq = hd->srq;
	const struct ib_recv_wr *bad;
	struct rxe_recv_wqe out;
	unsigned int at_pop;
	struct ib_sge got;
	bool popped;
	int i, err = 0;

	reinit_completion(&hd->called);
	for (i = 0; i < 3 && !err; i++) {
		wr.wr_id = i;
		err = srdma_post_srq_recv(&srq->ibsrq, &wr, &bad);
	}
	err = err ?: srdma_modify_srq(&srq->ibsrq, &attr, IB_SRQ_LIMIT, NULL);
	if (!ST_CHECK(st, !err, "SRQ limit: posting and arming: %d", err))
		return;
	/* 3 posted: 2 left is not below the limit, 1 is */
	spin_lock_bh(&hd->tp_lock);
	popped = srdma_srq_pop(srq, &out, &got, 1) &&
		 srdma_srq_pop(srq, &out, &got, 1);
	at_pop = hd->limit_calls;
	spin_unlock_bh(&hd->tp_lock);
	ST_CHECK(st, popped && !at_pop,
		 "SRQ limit: popped %d; the event came inside the pop (%u)",
		 popped, at_pop);
	if (!srdma_st_hd_wait(st, hd, "SRQ limit"))
		return;
	ST_CHECK(st, hd->limit_calls == 1 && srq->limit == 1,
		 "SRQ limit: %u events, limit %u after, want 1 and 1 (re-armed)",
		 hd->limit_calls, srq->limit);
	srdma_st_hd_clean(st, hd, "SRQ limit");
}

static void __init srdma_st_hd_cq(struct srdma_st *st, struct srdma_dev *dev,
				  struct srdma_st_hd *hd)
{
	struct ib_cq_init_attr attr = { .cqe = ST_CQE };
	struct srdma_cq *cq = kzalloc(sizeof(*cq), GFP_KERNEL);
	int err;

	if (!ST_ALLOCATED(st, cq))
		return;
	cq->ibcq.device = &dev->ibdev;
	cq->ibcq.comp_handler = srdma_st_hd_comp;
	cq->ibcq.event_handler = srdma_st_hd_cq_event;
	cq->ibcq.cq_context = hd;
	err = srdma_create_cq(&cq->ibcq, &attr, NULL);
	if (!ST_CHECK(st, !err && cq->ibcq.cqe == ST_CQE,
		      "creating a CQ: %d, %d entries", err, cq->ibcq.cqe)) {
		if (!err)
			srdma_destroy_cq(&cq->ibcq, NULL);
		kfree(cq);
		return;
	}
	hd->cq = cq;
	srdma_st_hd_comp_case(st, hd);
	srdma_st_hd_err_case(st, hd);
	srdma_st_hd_destroy_case(st, hd);
	if (hd->cq)
		srdma_destroy_cq(&cq->ibcq, NULL);
	kfree(cq);
}

static void __init srdma_st_hd_srq(struct srdma_st *st, struct srdma_dev *dev,
				   struct srdma_st_hd *hd)
{
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = ST_SRQ_WR, .max_sge = 1 },
	};
	struct srdma_srq *srq = kzalloc(sizeof(*srq), GFP_KERNEL);
	int err;

	if (!ST_ALLOCATED(st, srq))
		return;
	srq->ibsrq.device = &dev->ibdev;
	srq->ibsrq.event_handler = srdma_st_hd_srq_event;
	srq->ibsrq.srq_context = hd;
	err = srdma_create_srq(&srq->ibsrq, &init, NULL);
	if (ST_CHECK(st, !err, "creating an SRQ: %d", err)) {
		hd->srq = srq;
		srdma_st_hd_srq_case(st, hd);
		srdma_destroy_srq(&srq->ibsrq, NULL);
		hd->srq = NULL;
	}
	kfree(srq);
}

void __init srdma_st_handlers(struct srdma_st *st)
{
	struct srdma_dev *dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	struct srdma_st_hd *hd = &srdma_st_hd;

	if (!ST_ALLOCATED(st, dev))
		return;
	/* the CQ overflow counter */
	dev->tp = &srdma_roce_transport;
	if (!ST_CHECK(st, !srdma_counters_init(dev), "device counters")) {
		kfree(dev);
		return;
	}
	*hd = (struct srdma_st_hd){};
	spin_lock_init(&hd->tp_lock);
	init_completion(&hd->called);
	srdma_st_hd_cq(st, dev, hd);
	srdma_st_hd_srq(st, dev, hd);
	srdma_counters_fini(dev);
	kfree(dev);
}
