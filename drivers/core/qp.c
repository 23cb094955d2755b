// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs: creation with their rings, lookup by QPN for the
 * transports' receive paths, query and destroy.
 */
#include <rdma/uverbs_ioctl.h>

#include "srdma.h"
#include "transport.h"

static int srdma_qp_check_init(struct srdma_dev *dev,
			       struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (init->qp_type >= BITS_PER_TYPE(dev->tp->qp_types) ||
	    !(dev->tp->qp_types & BIT(init->qp_type)))
		return -EOPNOTSUPP;
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (cap->max_send_wr > SRDMA_MAX_QP_WR ||
	    cap->max_send_sge > SRDMA_MAX_SGE ||
	    cap->max_inline_data > SRDMA_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > SRDMA_MAX_QP_WR ||
			   cap->max_recv_sge > SRDMA_MAX_SGE))
		return -EINVAL;
	return 0;
}

static int srdma_qp_rings(struct srdma_qp *qp, struct ib_qp_init_attr *init,
			  struct ib_udata *udata,
			  struct rxe_create_qp_resp *resp)
{
	struct srdma_dev *dev = qp_dev(qp);
	struct ib_qp_cap *cap = &init->cap;
	u32 payload, elem;
	int err;

	/* one slot carries either the SGE list or the inline bytes */
	payload = max_t(u32, cap->max_send_sge * sizeof(struct rxe_sge),
			cap->max_inline_data);
	payload = max_t(u32, payload, sizeof(struct rxe_sge));
	elem = roundup_pow_of_two(sizeof(struct rxe_send_wqe) + payload);
	err = srdma_queue_init(dev, &qp->sq.q, max_t(u32, cap->max_send_wr, 1),
			       elem, udata, &resp->sq_mi);
	if (err)
		return err;
	/*
	 * The slot is rounded up to a power of two, but the limits stay
	 * those asked for (at least one SGE): the kernel copy of each WQE
	 * (srdma_swqe_alloc()) is sized by them, so a QP that asked for one
	 * SGE does not pay for the three its slot could hold.
	 */
	qp->sq.max_wr = srdma_queue_slots(&qp->sq.q) - 1;
	qp->sq.max_sge = max_t(u32, cap->max_send_sge, 1);
	qp->sq.max_inline = cap->max_inline_data;
	spin_lock_init(&qp->sq.lock);
	cap->max_send_wr = qp->sq.max_wr;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;

	if (init->srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return 0;
	}
	elem = roundup_pow_of_two(sizeof(struct rxe_recv_wqe) +
				  max_t(u32, cap->max_recv_sge, 1) *
				  sizeof(struct rxe_sge));
	err = srdma_queue_init(dev, &qp->rq.q, max_t(u32, cap->max_recv_wr, 1),
			       elem, udata, &resp->rq_mi);
	if (err) {
		srdma_queue_fini(&qp->sq.q);
		return err;
	}
	qp->rq.max_wr = srdma_queue_slots(&qp->rq.q) - 1;
	qp->rq.max_sge = min_t(u32, (elem - sizeof(struct rxe_recv_wqe)) /
			       sizeof(struct rxe_sge), SRDMA_MAX_SGE);
	spin_lock_init(&qp->rq.lock);
	cap->max_recv_wr = qp->rq.max_wr;
	cap->max_recv_sge = qp->rq.max_sge;
	return 0;
}

static void srdma_qp_free_rings(struct srdma_qp *qp)
{
	srdma_swqe_free(qp);
	if (qp->rq.q.buf)
		srdma_queue_fini(&qp->rq.q);
	srdma_queue_fini(&qp->sq.q);
}

static int srdma_qp_number(struct srdma_dev *dev, struct srdma_qp *qp)
{
	u32 qpn;
	int err;

	if (qp->ibqp.qp_type == IB_QPT_GSI) {
		/* reserve QP1 now; it becomes visible in srdma_create_qp */
		err = xa_insert(&dev->qps, SRDMA_GSI_QPN, NULL, GFP_KERNEL);
		qpn = SRDMA_GSI_QPN;
	} else {
		err = xa_alloc_cyclic(&dev->qps, &qpn, NULL,
				      XA_LIMIT(SRDMA_FIRST_QPN, SRDMA_MAX_QPN),
				      &dev->next_qpn, GFP_KERNEL);
	}
	if (err < 0)
		return err;
	qp->ibqp.qp_num = qpn;
	return 0;
}

/* The QP's entry in dev->qps, holding the QP's own reference. */
static struct srdma_qp_handle *srdma_qp_handle_alloc(struct srdma_qp *qp)
{
	struct srdma_qp_handle *h = kzalloc(sizeof(*h), GFP_KERNEL);

	if (!h)
		return NULL;
	refcount_set(&h->ref, 1);
	init_completion(&h->released);
	h->qp = qp;
	return h;
}

int srdma_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibqp->device);
	struct srdma_qp *qp = to_sqp(ibqp);
	struct rxe_create_qp_resp resp = {};
	int err;

	err = srdma_qp_check_init(dev, init);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&dev->num_qp) > SRDMA_MAX_QP) {
		err = -ENOMEM;
		goto err_count;
	}

	qp->handle = srdma_qp_handle_alloc(qp);
	if (!qp->handle) {
		err = -ENOMEM;
		goto err_count;
	}
	mutex_init(&qp->modify_lock);
	spin_lock_init(&qp->state_lock);
	INIT_WORK(&qp->error_work, srdma_qp_error_work);
	INIT_WORK(&qp->ring_work, srdma_ring_work);
	INIT_WORK(&qp->event_work, srdma_qp_event_work);
	qp->is_user = !!udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->scq = to_scq(init->send_cq);
	qp->rcq = to_scq(init->recv_cq);
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->state = dev->tp->qp_init_state;
	qp->attr.path_mtu = srdma_mtu_for_netdev(dev);
	qp->attr.pkey_index = 0;

	err = srdma_qp_number(dev, qp);
	if (err)
		goto err_handle;
	err = srdma_qp_rings(qp, init, udata, &resp);
	if (err)
		goto err_qpn;
	err = srdma_swqe_alloc(qp);
	if (err)
		goto err_rings;
	if (dev->tp->qp_init) {
		err = dev->tp->qp_init(qp);
		if (err)
			goto err_rings;
	}
	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_tp;
	}
	xa_store(&dev->qps, ibqp->qp_num, qp->handle, GFP_KERNEL);
	return 0;

err_tp:
	if (dev->tp->qp_destroy)
		dev->tp->qp_destroy(qp);
err_rings:
	srdma_qp_free_rings(qp);
err_qpn:
	xa_erase(&dev->qps, ibqp->qp_num);
err_handle:
	/* never published: nobody else can hold it */
	kfree(qp->handle);
	qp->handle = NULL;
err_count:
	atomic_dec(&dev->num_qp);
	return err;
}

/* For the transports' receive paths: a referenced QP or NULL. */
struct srdma_qp *srdma_qp_get(struct srdma_dev *dev, u32 qpn)
{
	struct srdma_qp_handle *h;
	struct srdma_qp *qp = NULL;

	rcu_read_lock();
	h = xa_load(&dev->qps, qpn);
	if (h && refcount_inc_not_zero(&h->ref))
		qp = h->qp;
	rcu_read_unlock();
	return qp;
}

bool srdma_qp_tryget(struct srdma_qp *qp)
{
	return refcount_inc_not_zero(&qp->handle->ref);
}

/*
 * Queue one of the QP's work items on srdma_unbound_wq holding a QP
 * reference, which the work drops and destroy_qp waits for. None is to
 * be had once destroy has begun: then nothing is queued.
 */
void srdma_qp_queue_work(struct srdma_qp *qp, struct work_struct *work)
{
	if (srdma_qp_tryget(qp) && !queue_work(srdma_unbound_wq, work))
		srdma_qp_put(qp);
}

void srdma_qp_put(struct srdma_qp *qp)
{
	struct srdma_qp_handle *h = qp->handle;

	if (refcount_dec_and_test(&h->ref))
		complete(&h->released);
}

int srdma_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibqp->device);
	struct srdma_qp *qp = to_sqp(ibqp);
	unsigned long flags;

	/* an rdma res dump may still come, and must not look inside */
	mutex_lock(&qp->modify_lock);
	qp->destroying = true;
	mutex_unlock(&qp->modify_lock);
	if (dev->tp->qp_release)
		dev->tp->qp_release(qp);
	/*
	 * No new lookups, then no users. A lookup still in flight may see
	 * the handle until a grace period has passed, but only a count of
	 * zero, and kfree_rcu() keeps the handle until then.
	 */
	xa_erase(&dev->qps, ibqp->qp_num);
	srdma_qp_put(qp);
	wait_for_completion(&qp->handle->released);

	if (dev->tp->qp_destroy)
		dev->tp->qp_destroy(qp);
	spin_lock_irqsave(&qp->state_lock, flags);
	qp->state = IB_QPS_RESET;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	srdma_qp_free_rings(qp);
	/* last: a srdma_qp_tryget() until here finds the count at zero */
	kfree_rcu(qp->handle, rcu);
	atomic_dec(&dev->num_qp);
	return 0;
}

int srdma_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct srdma_qp_attr *a = &qp->attr;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	mutex_lock(&qp->modify_lock);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = a->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = a->qkey;
	attr->rq_psn = a->rq_psn;
	attr->sq_psn = a->sq_psn;
	attr->dest_qp_num = a->dest_qpn;
	attr->qp_access_flags = a->access;
	attr->cap.max_send_wr = qp->sq.max_wr;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;
	if (qp->srq) {
		attr->cap.max_recv_wr = 0;
		attr->cap.max_recv_sge = 0;
	} else {
		attr->cap.max_recv_wr = qp->rq.max_wr;
		attr->cap.max_recv_sge = qp->rq.max_sge;
	}
	attr->ah_attr = a->ah_attr;
	attr->pkey_index = a->pkey_index;
	attr->en_sqd_async_notify = a->en_sqd_async_notify;
	attr->sq_draining = qp->state == IB_QPS_SQD && a->sq_draining;
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->port_num = 1;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	mutex_unlock(&qp->modify_lock);

	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->qp_type = ibqp->qp_type;
	init->port_num = 1;
	return 0;
}
