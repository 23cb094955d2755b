// SPDX-License-Identifier: GPL-2.0
/*
 * Self-test of the order in which modify_qp publishes a RoCE QP's new
 * state. A doorbell, a packet, ring_work or a timer on another CPU acts
 * on the state as soon as it is stored, before the transport's
 * qp_state_changed hook runs: the requester (RTS) and the responder
 * (RTR) must already be reset for the PSNs this modify set, not left at
 * those of the QP's last incarnation. So the test looks at the RoCE QP
 * the moment the state is stored, as one of them would (under its
 * protocol lock), before RoCE's own hook runs.
 *
 * A synthetic RC QP with empty rings, of a device that is never
 * registered, driven through srdma_modify_qp_locked() with the RoCE
 * transport's hooks, wrapped. Its state rules are waived: the path
 * attributes they ask for need a GID table, and the PSNs are the point.
 */
#include <linux/slab.h>

#include "../roce/roce.h"
#include "selftest.h"

#define ST_SLOTS	4
#define ST_ELEM_SHIFT	10	/* 1 KiB per slot: more than any WQE here */

/* What the wrapped hooks saw during one modify. */
struct srdma_st_pub_seen {
	bool changing;			/* qp_state_changing ran */
	enum ib_qp_state changing_state;	/* ...with the QP in this */
	bool changed;			/* qp_state_changed ran */
	enum ib_qp_state changed_state;	/* ...with the QP in this */
	u32 next_psn, una_psn, epsn;	/* ...and these before RoCE's hook */
	bool fail;			/* qp_state_changing: a fatal error */
};

static struct srdma_st_pub_seen srdma_st_seen __initdata;
static struct srdma_transport srdma_st_pub_tp __initdata;

static bool __init srdma_st_pub_ok(struct srdma_qp *qp, enum ib_qp_state cur,
				   enum ib_qp_state *next, int mask)
{
	return true;
}

static void __init srdma_st_pub_changing(struct srdma_qp *qp,
					 enum ib_qp_state cur,
					 enum ib_qp_state next)
{
	srdma_st_seen.changing = true;
	srdma_st_seen.changing_state = READ_ONCE(qp->state);
	srdma_roce_transport.qp_state_changing(qp, cur, next);
	/* srdma_qp_to_err() needs no modify_lock: it can come any time */
	if (srdma_st_seen.fail)
		srdma_qp_error(qp);
}

/*
 * The state is stored: what would a requester or responder that saw it
 * find now? RoCE's hook has not run yet.
 */
static void __init srdma_st_pub_changed(struct srdma_qp *qp,
					enum ib_qp_state old)
{
	struct roce_qp *rqp = to_rqp(qp);

	srdma_st_seen.changed = true;
	srdma_st_seen.changed_state = READ_ONCE(qp->state);
	spin_lock_bh(&rqp->lock);
	srdma_st_seen.next_psn = rqp->next_psn;
	srdma_st_seen.una_psn = rqp->una_psn;
	srdma_st_seen.epsn = rqp->epsn;
	spin_unlock_bh(&rqp->lock);
	srdma_roce_transport.qp_state_changed(qp, old);
}

/* Move @qp to @next; @psn for whichever of the PSNs the move sets. */
static int __init srdma_st_pub_modify(struct srdma_qp *qp,
				      enum ib_qp_state next, u32 psn)
{
	struct ib_qp_attr attr = {
		.qp_state = next,
		.rq_psn = psn,
		.sq_psn = psn,
	};
	int mask = IB_QP_STATE;
	int err;

	if (next == IB_QPS_RTR)
		mask |= IB_QP_RQ_PSN;
	else if (next == IB_QPS_RTS && qp->state != IB_QPS_SQD)
		mask |= IB_QP_SQ_PSN;
	srdma_st_seen = (struct srdma_st_pub_seen){
		.fail = srdma_st_seen.fail,
	};
	mutex_lock(&qp->modify_lock);
	err = srdma_modify_qp_locked(qp, &attr, mask);
	mutex_unlock(&qp->modify_lock);
	return err;
}

/* A modify that must succeed: both hooks ran, the first still in @cur. */
static bool __init srdma_st_pub_to(struct srdma_st *st, struct srdma_qp *qp,
				   enum ib_qp_state next, u32 psn)
{
	enum ib_qp_state cur = qp->state;
	int err = srdma_st_pub_modify(qp, next, psn);

	return ST_CHECK(st, !err && qp->state == next &&
			srdma_st_seen.changing &&
			srdma_st_seen.changing_state == cur &&
			srdma_st_seen.changed &&
			srdma_st_seen.changed_state == next,
			"%d to %d: err %d, state %d; prepared in %d (ran %d), told in %d (ran %d)",
			cur, next, err, qp->state,
			srdma_st_seen.changing_state, srdma_st_seen.changing,
			srdma_st_seen.changed_state, srdma_st_seen.changed);
}

/* One incarnation: RESET, INIT, RTR at @rq_psn, RTS at @sq_psn. */
static void __init srdma_st_pub_connect(struct srdma_st *st,
					struct srdma_qp *qp, u32 rq_psn,
					u32 sq_psn)
{
	if (qp->state != IB_QPS_RESET &&
	    !srdma_st_pub_to(st, qp, IB_QPS_RESET, 0))
		return;
	if (!srdma_st_pub_to(st, qp, IB_QPS_INIT, 0) ||
	    !srdma_st_pub_to(st, qp, IB_QPS_RTR, rq_psn))
		return;
	ST_CHECK(st, srdma_st_seen.epsn == rq_psn,
		 "RTR at rq_psn %#x: a packet taken as it is published expects %#x",
		 rq_psn, srdma_st_seen.epsn);
	if (!srdma_st_pub_to(st, qp, IB_QPS_RTS, sq_psn))
		return;
	ST_CHECK(st, srdma_st_seen.next_psn == sq_psn &&
		 srdma_st_seen.una_psn == sq_psn,
		 "RTS at sq_psn %#x: a WQE started as it is published gets %#x (una %#x)",
		 sq_psn, srdma_st_seen.next_psn, srdma_st_seen.una_psn);
}

static void __init srdma_st_pub_run(struct srdma_st *st, struct srdma_qp *qp)
{
	struct roce_qp *rqp = to_rqp(qp);
	u32 next, una;
	int err;

	srdma_st_pub_connect(st, qp, 0x123456, 0xabcdef);
	/* traffic moved both sides on */
	spin_lock_bh(&rqp->lock);
	rqp->una_psn = psn_add(0xabcdef, 3);
	rqp->next_psn = psn_add(0xabcdef, 7);
	rqp->epsn = psn_add(0x123456, 9);
	una = rqp->una_psn;
	next = rqp->next_psn;
	spin_unlock_bh(&rqp->lock);
	if (srdma_st_pub_to(st, qp, IB_QPS_SQD, 0) &&
	    srdma_st_pub_to(st, qp, IB_QPS_RTS, 0))
		ST_CHECK(st, srdma_st_seen.next_psn == next &&
			 srdma_st_seen.una_psn == una &&
			 srdma_st_seen.epsn == psn_add(0x123456, 9),
			 "SQD to RTS goes on from next %#x una %#x: %#x %#x",
			 next, una, srdma_st_seen.next_psn,
			 srdma_st_seen.una_psn);

	/* the next incarnation, across the wrap from the last one's PSNs */
	srdma_st_pub_connect(st, qp, 0xfffffe, 0x000002);
	srdma_st_pub_connect(st, qp, 0x000001, 0xffffff);

	/*
	 * A fatal error while RoCE readies itself for RTS: the modify fails,
	 * and the QP stays in ERR, to leave it only by a reset.
	 */
	if (!srdma_st_pub_to(st, qp, IB_QPS_RESET, 0) ||
	    !srdma_st_pub_to(st, qp, IB_QPS_INIT, 0) ||
	    !srdma_st_pub_to(st, qp, IB_QPS_RTR, 0x555555))
		return;
	srdma_st_seen.fail = true;
	err = srdma_st_pub_modify(qp, IB_QPS_RTS, 0x666666);
	srdma_st_seen.fail = false;
	ST_CHECK(st, err == -EINVAL && qp->state == IB_QPS_ERR &&
		 srdma_st_seen.changing && !srdma_st_seen.changed,
		 "RTS while an error comes in: err %d, state %d, told %d",
		 err, qp->state, srdma_st_seen.changed);
	srdma_st_pub_to(st, qp, IB_QPS_RESET, 0);
}

/* An empty ring of ST_SLOTS slots, header first (rdma_user_rxe.h). */
static bool __init srdma_st_pub_ring(struct srdma_st *st,
				     struct srdma_queue *q)
{
	q->buf = kzalloc(sizeof(*q->buf) + (ST_SLOTS << ST_ELEM_SHIFT),
			 GFP_KERNEL);
	if (!ST_ALLOCATED(st, q->buf))
		return false;
	q->elem_size = 1 << ST_ELEM_SHIFT;
	q->log2_elem_size = ST_ELEM_SHIFT;
	q->index_mask = ST_SLOTS - 1;
	return true;
}

void __init srdma_st_publish(struct srdma_st *st)
{
	struct roce_dev *rdev = kzalloc(sizeof(*rdev), GFP_KERNEL);
	struct srdma_qp *qp = kzalloc(sizeof(*qp), GFP_KERNEL);

	if (!ST_ALLOCATED(st, rdev) || !ST_ALLOCATED(st, qp))
		goto out;
	srdma_st_pub_tp = srdma_roce_transport;
	srdma_st_pub_tp.modify_qp_ok = srdma_st_pub_ok;
	srdma_st_pub_tp.qp_state_changing = srdma_st_pub_changing;
	srdma_st_pub_tp.qp_state_changed = srdma_st_pub_changed;
	rdev->dev.tp = &srdma_st_pub_tp;
	/* the QP state tracepoint names the device */
	rdev->dev.ibdev.dev.init_name = "srdma_selftest";

	qp->ibqp.device = &rdev->dev.ibdev;
	qp->ibqp.qp_type = IB_QPT_RC;
	qp->ibqp.qp_num = 17;
	mutex_init(&qp->modify_lock);
	spin_lock_init(&qp->state_lock);
	qp->state = IB_QPS_RESET;
	qp->swqe_size = sizeof(struct srdma_swqe);
	qp->swqe_buf = kcalloc(ST_SLOTS, qp->swqe_size, GFP_KERNEL);
	if (!ST_ALLOCATED(st, qp->swqe_buf) ||
	    !srdma_st_pub_ring(st, &qp->sq.q) ||
	    !srdma_st_pub_ring(st, &qp->rq.q))
		goto out;
	if (!ST_CHECK(st, !srdma_roce_transport.qp_init(qp),
		      "a RoCE QP's transport state"))
		goto out;
	srdma_st_pub_run(st, qp);
	srdma_roce_transport.qp_destroy(qp);
out:
	if (qp) {
		kfree(qp->rq.q.buf);
		kfree(qp->sq.q.buf);
		kfree(qp->swqe_buf);
	}
	kfree(qp);
	kfree(rdev);
}
