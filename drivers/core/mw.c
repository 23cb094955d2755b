// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows (type 1 and type 2) and invalidation. Binds arrive as
 * send WQEs (librxe turns ibv_bind_mw() into one), so they run in the
 * SQ in order with the QP's other work; binds, invalidations (local or
 * remote, from any QP) and deallocation of one window are serialised by
 * the window's lock, and an MR's window count changes under the MR's.
 * The two locks are never held together.
 */
#include "srdma.h"
#include "transport.h"

int srdma_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibmw->device);
	struct srdma_mw *mw = to_smw(ibmw);
	struct srdma_mem *mem;
	int err;

	if (atomic_inc_return(&dev->num_mw) > SRDMA_MAX_MW) {
		err = -ENOMEM;
		goto err_count;
	}
	mem = srdma_mem_alloc(SRDMA_MEM_MW, GFP_KERNEL);
	if (!mem) {
		err = -ENOMEM;
		goto err_count;
	}
	mem->mw_type = ibmw->type;
	mem->pd = ibmw->pd;
	err = srdma_key_add(dev, mem);
	if (err) {
		srdma_mem_free(mem);
		goto err_count;
	}
	mw->index = mem->key >> 8;
	ibmw->rkey = mem->key;
	return 0;

err_count:
	atomic_dec(&dev->num_mw);
	return err;
}

/*
 * Detach the window from its MR with the window's lock held for writing:
 * no copy through it is under way, and none can start. Returns the MR
 * for srdma_mw_release_mr() once the lock is dropped.
 */
static struct srdma_mem *srdma_mw_detach(struct srdma_mem *mw)
{
	struct srdma_mem *mr = mw->mr;

	if (mw->state == SRDMA_MEM_VALID)
		mw->state = SRDMA_MEM_INVALID;
	mw->mr = NULL;
	mw->qp = NULL;
	mw->qpn = 0;
	return mr;
}

static void srdma_mw_release_mr(struct srdma_mem *mr)
{
	if (mr) {
		atomic_dec(&mr->bound_mws);
		srdma_mem_put(mr);
	}
}

int srdma_dealloc_mw(struct ib_mw *ibmw)
{
	struct srdma_dev *dev = to_sdev(ibmw->device);
	struct srdma_mw *mw = to_smw(ibmw);
	struct srdma_mem *mem, *mr;
	unsigned long flags;

	/* whichever object a bind left in the table is this window's */
	mem = xa_erase_irq(&dev->keys, mw->index);
	if (!WARN_ON_ONCE(!mem)) {
		write_lock_irqsave(&mem->lock, flags);
		mr = srdma_mw_detach(mem);
		mem->state = SRDMA_MEM_DEAD;
		write_unlock_irqrestore(&mem->lock, flags);
		srdma_mw_release_mr(mr);
		srdma_mem_put(mem);	/* the table's reference */
	}
	atomic_dec(&dev->num_mw);
	return 0;
}

/*
 * Check the MR side of a bind (IBTA o10-36.2.x) and count the window on
 * the MR, under the MR's lock so that dereg, rereg and invalidate see
 * it. Returns 0 or -errno.
 */
static int srdma_bind_hold_mr(struct srdma_qp *qp, struct srdma_mem *mr,
			      u32 lkey, u64 addr, u64 length, int access)
{
	unsigned long flags;
	int err = 0;

	write_lock_irqsave(&mr->lock, flags);
	if (mr->key != lkey || mr->type == SRDMA_MEM_MW ||
	    mr->state != SRDMA_MEM_VALID || mr->pd != qp->ibqp.pd ||
	    mr->replacing)
		err = -EINVAL;
	else if (!(mr->access & IB_ACCESS_MW_BIND))
		err = -EACCES;
	/* remote write or atomic through a window needs local write */
	else if ((access & (IB_ACCESS_REMOTE_WRITE |
			    IB_ACCESS_REMOTE_ATOMIC)) &&
		 !(mr->access & IB_ACCESS_LOCAL_WRITE))
		err = -EACCES;
	else if (mr->access & IB_ZERO_BASED)
		err = -EINVAL;
	else if (!srdma_mem_in_range(mr, addr, length))
		err = -ERANGE;
	else
		atomic_inc(&mr->bound_mws);
	write_unlock_irqrestore(&mr->lock, flags);
	return err;
}

/* The window side of a bind, with its lock held for writing. */
static int srdma_bind_check_mw(struct srdma_qp *qp, struct srdma_mem *mw,
			       const struct srdma_swqe *wqe)
{
	const typeof(wqe->wr.wr.mw) *b = &wqe->wr.wr.mw;

	if (mw->key != b->mw_rkey || mw->state == SRDMA_MEM_DEAD ||
	    mw->pd != qp->ibqp.pd)
		return -EINVAL;
	/* the new key keeps the window's index; only its byte may change */
	if ((b->rkey >> 8) != (mw->key >> 8))
		return -EINVAL;
	/* type 2: bound once, through a QP of the same PD */
	if (mw->mw_type == IB_MW_TYPE_2 &&
	    (mw->state == SRDMA_MEM_VALID || !b->length))
		return -EINVAL;
	return 0;
}

/* Make @mw a window onto @mr (which it now holds) as @b says. */
static void srdma_mw_fill(struct srdma_qp *qp, struct srdma_mem *mw,
			  struct srdma_mem *mr, const struct srdma_swqe *wqe)
{
	const typeof(wqe->wr.wr.mw) *b = &wqe->wr.wr.mw;

	mw->mr = mr;
	mw->access = b->access;
	mw->iova = b->addr;
	mw->length = b->length;
	if (mw->mw_type == IB_MW_TYPE_2) {
		mw->qp = qp;
		mw->qpn = qp->ibqp.qp_num;
	}
	mw->key = b->rkey;
	mw->state = SRDMA_MEM_VALID;
}

/*
 * Bind @mr (held, counted) to the window @mw, whose lock is held for
 * writing. If someone still holds @mw from an earlier binding (a READ
 * reply in flight, say), a fresh object takes its place in the table so
 * that they can never use the new binding; @mw stays dead and *@retired
 * says so. Returns 0 or -ENOMEM/-EINVAL, and then @mr is not used.
 */
static int srdma_mw_bind_locked(struct srdma_qp *qp, struct srdma_mem *mw,
				struct srdma_mem *mr,
				const struct srdma_swqe *wqe,
				struct srdma_mem **old_mr, bool *retired)
{
	struct srdma_mem *new;

	/* the table's reference and ours: nobody else holds it */
	if (refcount_read(&mw->ref) <= 2) {
		*old_mr = srdma_mw_detach(mw);
		srdma_mw_fill(qp, mw, mr, wqe);
		return 0;
	}
	new = srdma_mem_alloc(SRDMA_MEM_MW, GFP_ATOMIC);
	if (!new)
		return -ENOMEM;
	new->mw_type = mw->mw_type;
	new->pd = mw->pd;
	srdma_mw_fill(qp, new, mr, wqe);
	if (!srdma_mem_replace(qp_dev(qp), mw, new)) {
		srdma_mem_free(new);
		return -EINVAL;
	}
	*old_mr = srdma_mw_detach(mw);
	*retired = true;
	return 0;
}

int srdma_bind_mw(struct srdma_qp *qp, const struct srdma_swqe *wqe)
{
	struct srdma_dev *dev = qp_dev(qp);
	const typeof(wqe->wr.wr.mw) *b = &wqe->wr.wr.mw;
	struct srdma_mem *mw, *mr = NULL, *old_mr = NULL;
	bool retired = false;
	unsigned long flags;
	int err;

	/* local write is meaningless on a window but commonly passed */
	if (b->access & ~(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	mw = srdma_key_get(dev, b->mw_rkey);
	if (!mw)
		return -EINVAL;
	if (mw->type != SRDMA_MEM_MW) {
		err = -EINVAL;
		goto out;
	}
	if (b->length || mw->mw_type == IB_MW_TYPE_2) {
		mr = srdma_key_get(dev, b->mr_lkey);
		if (!mr) {
			err = -EINVAL;
			goto out;
		}
		err = srdma_bind_hold_mr(qp, mr, b->mr_lkey, b->addr,
					 b->length, b->access);
		if (err) {
			srdma_mem_put(mr);
			goto out;
		}
	}

	write_lock_irqsave(&mw->lock, flags);
	err = srdma_bind_check_mw(qp, mw, wqe);
	if (!err && mr) {
		err = srdma_mw_bind_locked(qp, mw, mr, wqe, &old_mr, &retired);
	} else if (!err) {
		/* type 1 zero-length bind: unbind, the key byte moves on */
		old_mr = srdma_mw_detach(mw);
		mw->key = b->rkey;
	}
	write_unlock_irqrestore(&mw->lock, flags);

	if (err)
		srdma_mw_release_mr(mr);	/* the count and reference */
	srdma_mw_release_mr(old_mr);
	if (retired)
		srdma_mem_put(mw);		/* the table's reference */
out:
	srdma_mem_put(mw);
	return err;
}

/*
 * Local invalidate, or the remote one carried by Send with Invalidate:
 * fast-register MRs and type 2 windows only. Once this returns, no copy
 * through @key is under way and none will start (keys.c).
 */
int srdma_invalidate(struct srdma_qp *qp, u32 key)
{
	struct srdma_mem *mem = srdma_key_get(qp_dev(qp), key);
	struct srdma_mem *mr = NULL;
	unsigned long flags;
	int err = -EINVAL;

	if (!mem)
		return err;
	write_lock_irqsave(&mem->lock, flags);
	if (mem->key != key || mem->pd != qp->ibqp.pd ||
	    mem->state != SRDMA_MEM_VALID)
		goto out;
	if (mem->type == SRDMA_MEM_FAST) {
		/* windows bound to it keep it valid */
		if (atomic_read(&mem->bound_mws))
			goto out;
		mem->state = SRDMA_MEM_INVALID;
		err = 0;
	} else if (mem->type == SRDMA_MEM_MW &&
		   mem->mw_type == IB_MW_TYPE_2) {
		mr = srdma_mw_detach(mem);
		err = 0;
	}
out:
	write_unlock_irqrestore(&mem->lock, flags);
	srdma_mw_release_mr(mr);
	srdma_mem_put(mem);
	return err;
}
