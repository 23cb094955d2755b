// SPDX-License-Identifier: GPL-2.0
/*
 * modify_qp: the IB state machine with its per-transition attribute rules
 * (ib_modify_qp_is_ok) unless the transport has rules of its own (iWARP's
 * looser RNIC ones, where iw_cm drives the connection), and value checks
 * for every attribute.
 */
#include "srdma.h"
#include "transport.h"
#include "trace.h"

#define SRDMA_QP_ACCESS (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE | \
			 IB_ACCESS_MW_BIND)

static int srdma_check_values(struct srdma_qp *qp, struct ib_qp_attr *attr,
			      int mask, struct srdma_av *av)
{
	struct srdma_dev *dev = qp_dev(qp);

	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SRDMA_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SRDMA_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SRDMA_MAX_QPN)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SRDMA_QP_ACCESS))
		return -EINVAL;
	if (mask & IB_QP_ALT_PATH)
		return -EOPNOTSUPP;	/* no automatic path migration */
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EOPNOTSUPP;
	if (mask & IB_QP_AV) {
		if (!dev->tp->uses_av)
			return -EINVAL;
		return srdma_av_from_attr(dev, av, &attr->ah_attr);
	}
	return 0;
}

static void srdma_apply_values(struct srdma_qp *qp, struct ib_qp_attr *attr,
			       int mask, const struct srdma_av *av)
{
	struct srdma_qp_attr *a = &qp->attr;

	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->access = attr->qp_access_flags;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_AV) {
		a->av = *av;
		a->ah_attr = attr->ah_attr;
		/* we hold no reference on the source GID entry */
		a->ah_attr.grh.sgid_attr = NULL;
	}
}

/*
 * The QP's async events reach the consumer from event_work, with no lock
 * of srdma's held: they are found under the transports' locks, with
 * interrupts off in a kernel ULP's post, or in modify_qp under
 * modify_lock, while the handler may call verbs on the QP. The work
 * holds a QP reference, which destroy_qp waits for: no handler runs
 * after destroy returns. None is to be had once destroy has begun; an
 * event then is not raised, as the consumer is done with the QP. An
 * event that comes again before the work ran is raised once: QP_FATAL
 * and SQ_DRAINED each tell of a state, not a count.
 */
static void srdma_qp_event(struct srdma_qp *qp, enum ib_event_type type)
{
	/* a synthetic QP of the self-tests has neither handler nor work */
	if (!qp->ibqp.event_handler)
		return;
	if (WARN_ON_ONCE(type >= BITS_PER_LONG))
		return;
	set_bit(type, &qp->events);
	srdma_qp_queue_work(qp, &qp->event_work);
}

void srdma_qp_event_work(struct work_struct *work)
{
	struct srdma_qp *qp = container_of(work, struct srdma_qp, event_work);
	unsigned long events = xchg(&qp->events, 0);
	unsigned int type;

	for_each_set_bit(type, &events, BITS_PER_LONG) {
		struct ib_event ev = {
			.device = qp->ibqp.device,
			.element.qp = &qp->ibqp,
			.event = type,
		};

		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
	srdma_qp_put(qp);
}

/*
 * A QP on an SRQ that enters ERR has taken the last receive WQE it will
 * (the flush ended the one in progress): IBTA's Last WQE Reached event,
 * which a consumer waits for before it destroys the QP. ib_drain_qp()
 * does from 6.10 on, a minute long before it gives up.
 */
static void srdma_qp_last_wqe(struct srdma_qp *qp)
{
	if (qp->ibqp.srq)
		srdma_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/* RESET empties both rings without completions (IBTA 10.3.1). */
static void srdma_qp_reset_rings(struct srdma_qp *qp)
{
	qp->sq_fetch = 0;
	qp->sq_cons = 0;
	qp->sq.q.buf->producer_index = 0;
	qp->sq.q.buf->consumer_index = 0;
	if (!qp->srq) {
		qp->rq_cons = 0;
		qp->rq.q.buf->producer_index = 0;
		qp->rq.q.buf->consumer_index = 0;
	}
}

/*
 * modify_qp with qp->modify_lock held: a caller that must decide on the
 * QP's state and change it in one step (iWARP's attach, which must not
 * act on a QP reset and re-initialised meanwhile) holds it across both.
 */
int srdma_modify_qp_locked(struct srdma_qp *qp, struct ib_qp_attr *attr,
			   int mask)
{
	struct srdma_dev *dev = qp_dev(qp);
	struct ib_qp *ibqp = &qp->ibqp;
	enum ib_qp_state cur, next;
	struct srdma_av av;
	unsigned long flags;
	bool drained = false;
	int err;

	lockdep_assert_held(&qp->modify_lock);
	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	cur = qp->state;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur &&
	    !(cur == IB_QPS_SQE || attr->cur_qp_state == IB_QPS_SQE)) {
		err = -EINVAL;
		goto out;
	}
	next = mask & IB_QP_STATE ? attr->qp_state : cur;

	if (dev->tp->modify_qp_ok ?
	    !dev->tp->modify_qp_ok(qp, cur, &next, mask) :
	    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out;
	}
	err = srdma_check_values(qp, attr, mask, &av);
	if (err)
		goto out;
	if (dev->tp->modify_qp_prepare) {
		err = dev->tp->modify_qp_prepare(qp, attr, mask);
		if (err)
			goto out;
	}
	srdma_apply_values(qp, attr, mask, &av);
	/* nothing may still use the rings that RESET empties */
	if (next == IB_QPS_RESET && cur != IB_QPS_RESET && dev->tp->qp_reset)
		dev->tp->qp_reset(qp);
	/*
	 * The transport readies itself for the new state before it is
	 * stored: from then on doorbells, packets and timers act on it.
	 */
	if (dev->tp->qp_state_changing && next != cur)
		dev->tp->qp_state_changing(qp, cur, next);

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state != cur && next != IB_QPS_RESET) {
		/*
		 * A fatal error (srdma_qp_to_err(), which takes no
		 * modify_lock) moved the QP to ERR since cur was read, and
		 * flushed it: only a reset leaves ERR.
		 */
		spin_unlock_irqrestore(&qp->state_lock, flags);
		err = next == IB_QPS_ERR ? 0 : -EINVAL;
		goto out;
	}
	qp->state = next;
	if (next == IB_QPS_RESET)
		srdma_qp_reset_rings(qp);
	if (next == IB_QPS_SQD && dev->tp->sqd_drains) {
		/* the transport says when (srdma_qp_sq_drained) */
		if (cur != IB_QPS_SQD)
			qp->attr.sq_draining = true;
	} else if (next == IB_QPS_SQD) {
		/* nothing is on the wire between WQEs: drained at once */
		qp->attr.sq_draining = false;
		drained = cur != IB_QPS_SQD && qp->attr.en_sqd_async_notify;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	trace_srdma_qp_state(ibqp, cur, next);

	if (dev->tp->qp_state_changed && next != cur)
		dev->tp->qp_state_changed(qp, cur);
	if (next == IB_QPS_ERR) {
		srdma_flush(qp, true);
		srdma_qp_last_wqe(qp);
	} else if (next == IB_QPS_RTS) {
		srdma_sq_run(qp, true);	/* WQEs posted before RTS */
	}
	if (drained)
		srdma_qp_event(qp, IB_EVENT_SQ_DRAINED);
out:
	return err;
}

int srdma_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	int err;

	mutex_lock(&qp->modify_lock);
	err = srdma_modify_qp_locked(qp, attr, mask);
	mutex_unlock(&qp->modify_lock);
	return err;
}

/*
 * The transport's SQ has drained in SQD: nothing started is outstanding
 * any more. Reported once per entry to SQD. Any context: the event is
 * raised from event_work.
 */
void srdma_qp_sq_drained(struct srdma_qp *qp)
{
	unsigned long flags;
	bool notify;

	spin_lock_irqsave(&qp->state_lock, flags);
	notify = qp->state == IB_QPS_SQD && qp->attr.sq_draining;
	if (notify)
		qp->attr.sq_draining = false;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (notify && qp->attr.en_sqd_async_notify)
		srdma_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

static void srdma_qp_error_finish(struct srdma_qp *qp, bool fatal,
				  bool may_sleep)
{
	if (qp_dev(qp)->tp->qp_error)
		qp_dev(qp)->tp->qp_error(qp);
	srdma_flush(qp, may_sleep);
	if (fatal)
		srdma_qp_event(qp, IB_EVENT_QP_FATAL);
	srdma_qp_last_wqe(qp);
}

/* srdma_qp_error() from a hard interrupt, finished in process context. */
void srdma_qp_error_work(struct work_struct *work)
{
	struct srdma_qp *qp = container_of(work, struct srdma_qp, error_work);
	unsigned long flags;
	bool err;

	/* a reset since has emptied what the error would have flushed */
	spin_lock_irqsave(&qp->state_lock, flags);
	err = qp->state == IB_QPS_ERR;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (err)
		srdma_qp_error_finish(qp, true, true);
	srdma_qp_put(qp);
}

/*
 * To ERR, flush, and for a fatal error tell the consumer. Any context:
 * a kernel ULP's post_send may fail a WQE with interrupts off, or from a
 * hard interrupt. The transports' qp_error hooks take locks that others
 * hold with only bottom halves off, which a hard interrupt may have
 * interrupted on this CPU: from there the rest goes to error_work, which
 * holds a reference that destroy_qp waits for. None is to be had once
 * destroy has begun, and destroy completes nothing but what it must.
 * (Only fatal errors come from post verbs: a closed connection is
 * reported from process context.)
 */
static void srdma_qp_to_err(struct srdma_qp *qp, bool fatal)
{
	unsigned long flags;
	enum ib_qp_state old;
	bool was_err;

	spin_lock_irqsave(&qp->state_lock, flags);
	old = qp->state;
	was_err = qp->state == IB_QPS_ERR;
	qp->state = IB_QPS_ERR;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (was_err)
		return;
	trace_srdma_qp_state(&qp->ibqp, old, IB_QPS_ERR);
	if (in_hardirq()) {
		srdma_qp_queue_work(qp, &qp->error_work);
		return;
	}
	srdma_qp_error_finish(qp, fatal, false);
}

/* A fatal error on the QP: to ERR, flush, tell the consumer. */
void srdma_qp_error(struct srdma_qp *qp)
{
	srdma_qp_to_err(qp, true);
}

/*
 * The connection under the QP is gone (iWARP: its stream closed, by
 * either side): to ERR and flush, with no QP_FATAL. The consumer hears
 * of it from its CM (DISCONNECT, CLOSE), and kernel ULPs take a QP
 * event for a failure: nvmet-rdma logs "QP fatal error" at every
 * disconnect, svcrdma closes the transport. An error that caused the
 * close (a Terminate either way) raised the event already.
 */
void srdma_qp_closed(struct srdma_qp *qp)
{
	srdma_qp_to_err(qp, false);
}
