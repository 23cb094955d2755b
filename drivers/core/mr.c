// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: user MRs pinned with ib_umem, the kernel's DMA MR
 * (virtual DMA: an iova is a kernel address), and fast-register MRs whose
 * page list is set by ib_map_mr_sg() and made valid by an IB_WR_REG_MR.
 */
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>

#include "srdma.h"
#include "transport.h"

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

/* The srdma_mr's own memory; its srdma_mem lives on until the last put. */
static void srdma_mr_free(struct srdma_dev *dev, struct srdma_mr *mr,
			  u64 *live_kvas)
{
	if (mr->umem)
		ib_umem_release(mr->umem);
	kfree(live_kvas);
	kfree(mr->map_kvas);
	kfree(mr);
	atomic_dec(&dev->num_mr);
}

/* Free an MR whose key was never published. */
static void srdma_mr_discard(struct srdma_dev *dev, struct srdma_mr *mr)
{
	u64 *kvas = mr->mem->type == SRDMA_MEM_FAST ? mr->mem->kvas : NULL;

	srdma_mem_free(mr->mem);
	srdma_mr_free(dev, mr, kvas);
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
 * A new MR replaces @mr, which ib_uverbs then deregisters. IB: an MR with
 * windows bound to it cannot be re-registered, and a bind must not come
 * in between the check and the dereg (which would then fail, leaving the
 * old MR to the context's close): binds refuse an MR being replaced.
 */
static struct ib_mr *srdma_rereg_replace(struct srdma_mr *mr, int flags,
					 u64 start, u64 length, u64 iova,
					 int access, struct ib_pd *ibpd,
					 struct ib_udata *udata)
{
	struct srdma_mem *mem = mr->mem;
	unsigned long irqflags;
	struct ib_mr *new;

	if (!(flags & IB_MR_REREG_TRANS)) {
		/* the same memory, pinned again for writing */
		start = mr->umem->address;
		length = mr->umem->length;
		iova = mem->iova;
	}
	write_lock_irqsave(&mem->lock, irqflags);
	if (atomic_read(&mem->bound_mws) || mem->replacing) {
		write_unlock_irqrestore(&mem->lock, irqflags);
		return ERR_PTR(-EBUSY);
	}
	mem->replacing = true;
	write_unlock_irqrestore(&mem->lock, irqflags);

	new = srdma_reg_user_mr(ibpd, start, length, iova, access, udata);
	if (IS_ERR(new)) {
		write_lock_irqsave(&mem->lock, irqflags);
		mem->replacing = false;
		write_unlock_irqrestore(&mem->lock, irqflags);
	}
	return new;
}

/*
 * PD and access change in place (the key stays); a new translation
 * gets a new MR, which ib_uverbs swaps in for the old one. So does write
 * access added to memory that was pinned for reading only: it must be
 * pinned again, for writing (ib_umem_get decides how to pin by access).
 */
struct ib_mr *srdma_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srdma_mr *mr = to_smr(ibmr);
	struct srdma_mem *mem = mr->mem;
	unsigned long irqflags;
	int err = 0;

	if (flags & ~IB_MR_REREG_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	if (mem->type != SRDMA_MEM_USER)
		return ERR_PTR(-EINVAL);
	/* only this call and dereg (never at once) change these two */
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mem->access;
	if (!(flags & IB_MR_REREG_PD))
		ibpd = mem->pd;
	if (access & ~SRDMA_MR_ACCESS)
		return ERR_PTR(-EINVAL);
	if (flags & IB_MR_REREG_TRANS)
		return srdma_rereg_replace(mr, flags, start, length, iova,
					   access, ibpd, udata);
	if ((access ^ mem->access) & IB_ZERO_BASED)
		return ERR_PTR(-EINVAL);
	if (ib_access_writable(access) && !mr->umem->writable)
		return srdma_rereg_replace(mr, flags, start, length, iova,
					   access, ibpd, udata);

	/* a bind may have come in meanwhile: decide under the MR's lock */
	write_lock_irqsave(&mem->lock, irqflags);
	if (atomic_read(&mem->bound_mws)) {
		err = -EBUSY;
	} else {
		mem->pd = ibpd;
		mem->access = access;
	}
	write_unlock_irqrestore(&mem->lock, irqflags);
	return err ? ERR_PTR(err) : NULL;
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
	mr->map_kvas = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->mem->kvas || !mr->map_kvas) {
		srdma_mr_discard(dev, mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_pages = max_num_sg;
	return srdma_mr_publish(dev, mr);
}

static int srdma_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct srdma_mr *mr = to_smr(ibmr);

	if (mr->map_npages >= mr->max_pages)
		return -ENOMEM;
	mr->map_kvas[mr->map_npages++] = addr;
	return 0;
}

/*
 * The page list is staged apart from the live one, as an RNIC stages it
 * for its REG_MR: mapping never changes what a valid key reaches.
 */
int srdma_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int nents,
		    unsigned int *sg_offset)
{
	struct srdma_mr *mr = to_smr(ibmr);

	if (mr->mem->type != SRDMA_MEM_FAST)
		return -EINVAL;
	mr->map_npages = 0;
	return ib_sg_to_pages(ibmr, sg, nents, sg_offset, srdma_set_page);
}

/* Does the staged page list of @mr cover what ib_sg_to_pages set? */
static bool srdma_frmr_fits(struct srdma_mr *mr, int access)
{
	struct ib_mr *ibmr = &mr->ibmr;
	unsigned int shift;
	u64 end, span;

	if (access & ~SRDMA_MR_ACCESS || (access & IB_ZERO_BASED) ||
	    !is_power_of_2(ibmr->page_size) || ibmr->page_size < 512)
		return false;
	shift = ilog2(ibmr->page_size);
	if (check_add_overflow(ibmr->iova & (ibmr->page_size - 1),
			       ibmr->length, &end))
		return false;
	if (check_shl_overflow((u64)mr->map_npages, shift, &span))
		return false;
	return end <= span;
}

/* Make @mem the live registration of @mr's staged list; lock held. */
static void srdma_frmr_fill(struct srdma_mr *mr, struct srdma_mem *mem,
			    u32 key, int access)
{
	struct ib_mr *ibmr = &mr->ibmr;

	mem->access = access;
	mem->iova = ibmr->iova;
	mem->length = ibmr->length;
	mem->page_shift = ilog2(ibmr->page_size);
	mem->page_offset = ibmr->iova & (ibmr->page_size - 1);
	mem->kvas = mr->map_kvas;
	mem->npages = mr->map_npages;
	mem->key = key;
	mem->state = SRDMA_MEM_VALID;
}

/*
 * IB_WR_REG_MR: the page list from map_mr_sg becomes a valid key. If
 * the MR is still held from its last registration (a transfer that was
 * under way when it was invalidated), a fresh object takes its place in
 * the key table, so that the holder never reaches the new pages.
 */
int srdma_reg_mr_wqe(struct srdma_qp *qp, struct ib_mr *ibmr, u32 key,
		     int access)
{
	struct srdma_mr *mr = to_smr(ibmr);
	struct srdma_mem *mem = mr->mem, *new = NULL;
	unsigned long flags;
	u64 *old_live;
	int err = 0;

	write_lock_irqsave(&mem->lock, flags);
	if (mem->type != SRDMA_MEM_FAST || mem->pd != qp->ibqp.pd ||
	    (key >> 8) != (mem->key >> 8) ||
	    mem->state != SRDMA_MEM_INVALID || !srdma_frmr_fits(mr, access)) {
		err = -EINVAL;
		goto out;
	}
	old_live = mem->kvas;
	if (refcount_read(&mem->ref) > 1) {
		new = srdma_mem_alloc(SRDMA_MEM_FAST, GFP_ATOMIC);
		if (!new) {
			err = -ENOMEM;
			goto out;
		}
		new->pd = mem->pd;
		srdma_frmr_fill(mr, new, key, access);
		if (!srdma_mem_replace(qp_dev(qp), mem, new)) {
			srdma_mem_free(new);
			new = NULL;
			err = -EINVAL;
			goto out;
		}
		mr->mem = new;
	} else {
		srdma_frmr_fill(mr, mem, key, access);
	}
	/* the list that was live is where the next map_mr_sg writes */
	mr->map_kvas = old_live;
	mr->map_npages = 0;
	ibmr->lkey = key;
	ibmr->rkey = key;
out:
	write_unlock_irqrestore(&mem->lock, flags);
	if (new)
		srdma_mem_put(mem);	/* the table's reference on the old */
	return err;
}

int srdma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibmr->device);
	struct srdma_mr *mr = to_smr(ibmr);
	struct srdma_mem *mem = mr->mem;
	u64 *live_kvas = NULL;
	unsigned long flags;

	write_lock_irqsave(&mem->lock, flags);
	/* IB: an MR with windows bound to it cannot be deregistered */
	if (atomic_read(&mem->bound_mws)) {
		write_unlock_irqrestore(&mem->lock, flags);
		return -EBUSY;
	}
	/* copies under way are done; later ones through holders fail */
	mem->state = SRDMA_MEM_DEAD;
	if (mem->type == SRDMA_MEM_FAST) {
		live_kvas = mem->kvas;
		mem->kvas = NULL;
	}
	write_unlock_irqrestore(&mem->lock, flags);
	srdma_key_remove(dev, mem);
	srdma_mr_free(dev, mr, live_kvas);
	return 0;
}
