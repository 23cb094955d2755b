// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: user MRs pinned with ib_umem, the kernel's DMA MR
 * (virtual DMA: an iova is a kernel address), and fast-register MRs whose
 * page list is set by ib_map_mr_sg() and made valid by an IB_WR_REG_MR.
 */
#include <linux/log2.h>
#include <linux/scatterlist.h>

#include "srdma.h"

#define SRDMA_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | IB_ZERO_BASED | \
			 IB_ACCESS_RELAXED_ORDERING)

static struct srdma_mr *srdma_mr_new(struct ib_pd *ibpd,
				     enum srdma_mem_type type)
{
	struct srdma_dev *dev = to_sdev(ibpd->device);
	struct srdma_mr *mr;

	if (atomic_inc_return(&dev->num_mr) > SRDMA_MAX_MR)
		goto err_count;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		goto err_count;
	mr->mem = srdma_mem_alloc(type, GFP_KERNEL);
	if (!mr->mem) {
		kfree(mr);
		goto err_count;
	}
	mr->mem->pd = ibpd;
	return mr;

err_count:
	atomic_dec(&dev->num_mr);
	return NULL;
}

/* Free an MR whose key was never published. */
static void srdma_mr_discard(struct srdma_dev *dev, struct srdma_mr *mr)
{
	if (mr->umem)
		ib_umem_release(mr->umem);
	srdma_mem_free(mr->mem);
	kfree(mr);
	atomic_dec(&dev->num_mr);
}

static struct ib_mr *srdma_mr_publish(struct srdma_dev *dev,
				      struct srdma_mr *mr)
{
	int err = srdma_key_add(dev, mr->mem);

	if (err) {
		srdma_mr_discard(dev, mr);
		return ERR_PTR(err);
	}
	mr->ibmr.lkey = mr->mem->key;
	mr->ibmr.rkey = mr->mem->key;
	return &mr->ibmr;
}

struct ib_mr *srdma_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct srdma_dev *dev = to_sdev(ibpd->device);
	struct srdma_mr *mr = srdma_mr_new(ibpd, SRDMA_MEM_DMA);

	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->mem->access = access;
	mr->mem->iova = 0;
	mr->mem->length = U64_MAX;
	mr->mem->state = SRDMA_MEM_VALID;
	return srdma_mr_publish(dev, mr);
}

static int srdma_pin_user(struct srdma_dev *dev, struct srdma_mr *mr,
			  u64 start, u64 length, u64 iova, int access)
{
	struct srdma_mem *mem = mr->mem;
	struct sg_page_iter sg_iter;
	struct ib_umem *umem;
	size_t n = 0;

	umem = ib_umem_get(&dev->ibdev, start, length, access);
	if (IS_ERR(umem))
		return PTR_ERR(umem);
	mem->npages = ib_umem_num_pages(umem);
	mem->pages = kvmalloc_array(mem->npages, sizeof(*mem->pages),
				    GFP_KERNEL);
	if (!mem->pages) {
		ib_umem_release(umem);
		return -ENOMEM;
	}
	for_each_sgtable_page(&umem->sgt_append.sgt, &sg_iter, 0) {
		if (n >= mem->npages)
			break;
		mem->pages[n++] = sg_page_iter_page(&sg_iter);
	}
	mem->npages = n;
	mem->page_offset = ib_umem_offset(umem);
	mem->iova = access & IB_ZERO_BASED ? 0 : iova;
	mem->length = length;
	mem->access = access;
	mr->umem = umem;
	return 0;
}

struct ib_mr *srdma_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibpd->device);
	struct srdma_mr *mr;
	int err;

	if (access & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EOPNOTSUPP);
	if (access & ~SRDMA_MR_ACCESS)
		return ERR_PTR(-EINVAL);
	if (!length || length > SRDMA_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);

	mr = srdma_mr_new(ibpd, SRDMA_MEM_USER);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = srdma_pin_user(dev, mr, start, length, iova, access);
	if (err) {
		srdma_mr_discard(dev, mr);
		return ERR_PTR(err);
	}
	mr->mem->state = SRDMA_MEM_VALID;
	return srdma_mr_publish(dev, mr);
}

/*
 * PD and access change in place (the key stays); a new translation
 * gets a new MR, which ib_uverbs swaps in for the old one.
 */
struct ib_mr *srdma_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srdma_mr *mr = to_smr(ibmr);
	struct srdma_mem *mem = mr->mem;

	if (flags & ~IB_MR_REREG_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	if (mem->type != SRDMA_MEM_USER)
		return ERR_PTR(-EINVAL);
	if (atomic_read(&mem->bound_mws))
		return ERR_PTR(-EBUSY);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mem->access;
	if (!(flags & IB_MR_REREG_PD))
		ibpd = mem->pd;
	if (access & ~SRDMA_MR_ACCESS)
		return ERR_PTR(-EINVAL);

	if (flags & IB_MR_REREG_TRANS)
		return srdma_reg_user_mr(ibpd, start, length, iova, access,
					 udata);
	if ((access ^ mem->access) & IB_ZERO_BASED)
		return ERR_PTR(-EINVAL);
	WRITE_ONCE(mem->pd, ibpd);
	WRITE_ONCE(mem->access, access);
	return NULL;
}

struct ib_mr *srdma_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct srdma_dev *dev = to_sdev(ibpd->device);
	struct srdma_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SRDMA_MAX_FRMR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = srdma_mr_new(ibpd, SRDMA_MEM_FAST);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->mem->kvas = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->mem->kvas) {
		srdma_mr_discard(dev, mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->mem->max_pages = max_num_sg;
	return srdma_mr_publish(dev, mr);
}

static int srdma_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct srdma_mem *mem = to_smr(ibmr)->mem;

	if (mem->npages >= mem->max_pages)
		return -ENOMEM;
	mem->kvas[mem->npages++] = addr;
	return 0;
}

int srdma_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int nents,
		    unsigned int *sg_offset)
{
	struct srdma_mem *mem = to_smr(ibmr)->mem;

	if (mem->type != SRDMA_MEM_FAST)
		return -EINVAL;
	mem->npages = 0;
	return ib_sg_to_pages(ibmr, sg, nents, sg_offset, srdma_set_page);
}

/* IB_WR_REG_MR: the page list from map_mr_sg becomes a valid key. */
int srdma_reg_mr_wqe(struct srdma_qp *qp, struct ib_mr *ibmr, u32 key,
		     int access)
{
	struct srdma_mem *mem = to_smr(ibmr)->mem;

	if (mem->type != SRDMA_MEM_FAST || mem->pd != qp->ibqp.pd ||
	    (key >> 8) != (mem->key >> 8) ||
	    mem->state == SRDMA_MEM_VALID || !is_power_of_2(ibmr->page_size))
		return -EINVAL;
	mem->access = access;
	mem->iova = ibmr->iova;
	mem->length = ibmr->length;
	mem->page_shift = ilog2(ibmr->page_size);
	mem->page_offset = ibmr->iova & (ibmr->page_size - 1);
	WRITE_ONCE(mem->key, key);
	ibmr->lkey = key;
	ibmr->rkey = key;
	/* fields above before the state that makes them visible */
	smp_store_release(&mem->state, SRDMA_MEM_VALID);
	return 0;
}

int srdma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibmr->device);
	struct srdma_mr *mr = to_smr(ibmr);

	/* IB: an MR with windows bound to it cannot be deregistered */
	if (atomic_read(&mr->mem->bound_mws))
		return -EBUSY;
	srdma_key_remove(dev, mr->mem);
	if (mr->umem)
		ib_umem_release(mr->umem);
	srdma_mem_free(mr->mem);
	kfree(mr);
	atomic_dec(&dev->num_mr);
	return 0;
}
