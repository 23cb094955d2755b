// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows (type 1 and type 2) and invalidation. Binds arrive as
 * send WQEs (librxe turns ibv_bind_mw() into one), so they run in the
 * SQ in order with the QP's other work.
 */
#include "srdma.h"

int srdma_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibmw->device);
	struct srdma_mw *mw = to_smw(ibmw);
	int err;

	if (atomic_inc_return(&dev->num_mw) > SRDMA_MAX_MW) {
		err = -ENOMEM;
		goto err_count;
	}
	mw->mem = srdma_mem_alloc(SRDMA_MEM_MW, GFP_KERNEL);
	if (!mw->mem) {
		err = -ENOMEM;
		goto err_count;
	}
	mw->mem->mw_type = ibmw->type;
	mw->mem->pd = ibmw->pd;
	err = srdma_key_add(dev, mw->mem);
	if (err) {
		srdma_mem_free(mw->mem);
		goto err_count;
	}
	ibmw->rkey = mw->mem->key;
	return 0;

err_count:
	atomic_dec(&dev->num_mw);
	return err;
}

/* Drop the window's hold on its MR; the caller serialises. */
static void srdma_mw_unbind(struct srdma_mem *mw)
{
	struct srdma_mem *mr = mw->mr;

	WRITE_ONCE(mw->state, SRDMA_MEM_INVALID);
	mw->mr = NULL;
	WRITE_ONCE(mw->qp, NULL);
	if (mr) {
		atomic_dec(&mr->bound_mws);
		srdma_mem_put(mr);
	}
}

int srdma_dealloc_mw(struct ib_mw *ibmw)
{
	struct srdma_dev *dev = to_sdev(ibmw->device);
	struct srdma_mw *mw = to_smw(ibmw);

	srdma_key_remove(dev, mw->mem);
	srdma_mw_unbind(mw->mem);
	srdma_mem_free(mw->mem);
	atomic_dec(&dev->num_mw);
	return 0;
}

/* Check the MR side of a bind (IBTA o10-36.2.x): returns 0 or -errno. */
static int srdma_bind_check_mr(struct srdma_qp *qp, struct srdma_mem *mr,
			       u64 addr, u64 length, int access)
{
	if (mr->type == SRDMA_MEM_MW || mr->state != SRDMA_MEM_VALID ||
	    mr->pd != qp->ibqp.pd)
		return -EINVAL;
	if (!(mr->access & IB_ACCESS_MW_BIND))
		return -EACCES;
	/* remote write or atomic through a window needs local write */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	if (mr->access & IB_ZERO_BASED)
		return -EINVAL;
	if (addr < mr->iova || length > mr->length ||
	    addr - mr->iova > mr->length - length)
		return -ERANGE;
	return 0;
}

int srdma_bind_mw(struct srdma_qp *qp, const struct srdma_swqe *wqe)
{
	struct srdma_dev *dev = qp_dev(qp);
	const typeof(wqe->wr.wr.mw) *b = &wqe->wr.wr.mw;
	struct srdma_mem *mw, *mr = NULL;
	int access = b->access;
	int err = -EINVAL;

	mw = srdma_key_get(dev, b->mw_rkey);
	if (!mw || mw->type != SRDMA_MEM_MW || mw->pd != qp->ibqp.pd)
		goto out;
	/* the new key keeps the window's index; only its byte may change */
	if ((b->rkey >> 8) != (mw->key >> 8))
		goto out;
	/* local write is meaningless on a window but commonly passed */
	if (access & ~(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
		       IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE))
		goto out;
	if (mw->mw_type == IB_MW_TYPE_2) {
		/* type 2: bound once, through a QP of the same PD */
		if (mw->state == SRDMA_MEM_VALID || !b->length)
			goto out;
	}

	if (b->length || mw->mw_type == IB_MW_TYPE_2) {
		mr = srdma_key_get(dev, b->mr_lkey);
		if (!mr)
			goto out;
		err = srdma_bind_check_mr(qp, mr, b->addr, b->length, access);
		if (err)
			goto out;
	}

	srdma_mw_unbind(mw);
	if (mr) {
		atomic_inc(&mr->bound_mws);
		mw->mr = mr;		/* keeps our reference */
		mr = NULL;
		mw->access = access;
		mw->iova = b->addr;
		mw->length = b->length;
		if (mw->mw_type == IB_MW_TYPE_2)
			WRITE_ONCE(mw->qp, qp);
		WRITE_ONCE(mw->key, b->rkey);
		/* the window fields before the state that makes them valid */
		smp_store_release(&mw->state, SRDMA_MEM_VALID);
	} else {
		WRITE_ONCE(mw->key, b->rkey);	/* type 1 zero-length unbind */
	}
	err = 0;
out:
	if (mr)
		srdma_mem_put(mr);
	if (mw)
		srdma_mem_put(mw);
	return err;
}

/*
 * Local invalidate, or the remote one carried by Send with Invalidate:
 * fast-register MRs and type 2 windows only.
 */
int srdma_invalidate(struct srdma_qp *qp, u32 key)
{
	struct srdma_mem *mem = srdma_key_get(qp_dev(qp), key);
	int err = -EINVAL;

	if (!mem)
		return err;
	if (mem->pd != qp->ibqp.pd || mem->state != SRDMA_MEM_VALID)
		goto out;
	if (mem->type == SRDMA_MEM_FAST) {
		if (atomic_read(&mem->bound_mws))
			goto out;
		WRITE_ONCE(mem->state, SRDMA_MEM_INVALID);
		err = 0;
	} else if (mem->type == SRDMA_MEM_MW &&
		   mem->mw_type == IB_MW_TYPE_2) {
		srdma_mw_unbind(mem);
		err = 0;
	}
out:
	srdma_mem_put(mem);
	return err;
}
