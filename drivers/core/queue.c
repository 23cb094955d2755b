// SPDX-License-Identifier: GPL-2.0
/*
 * Rings in the rdma_rxe layout (struct rxe_queue_buf): a header with the
 * producer and consumer indices on their own cache lines, then a
 * power-of-two number of power-of-two-sized slots, one kept empty.
 * User rings are mmapped through rdma_user_mmap entries; the mapping holds
 * its own references on the pages, so destroy never waits for munmap.
 */
#include <linux/error-injection.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "srdma.h"

struct srdma_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
};

int srdma_queue_init(struct srdma_dev *dev, struct srdma_queue *q,
		     u32 min_elems, u32 elem_size, struct ib_udata *udata,
		     struct mminfo *mi)
{
	struct srdma_ucontext *uctx;
	struct srdma_mmap_entry *me;
	u32 slots = roundup_pow_of_two(min_elems + 1);
	int err;

	q->elem_size = roundup_pow_of_two(elem_size);
	q->log2_elem_size = ilog2(q->elem_size);
	q->index_mask = slots - 1;
	q->buf_size = PAGE_ALIGN(sizeof(*q->buf) + (size_t)slots * q->elem_size);
	q->mentry = NULL;
	q->buf = vmalloc_user(q->buf_size);
	if (!q->buf)
		return -ENOMEM;
	q->buf->log2_elem_size = q->log2_elem_size;
	q->buf->index_mask = q->index_mask;

	if (!udata)
		return 0;

	uctx = rdma_udata_to_drv_context(udata, struct srdma_ucontext, ibuc);
	me = kzalloc(sizeof(*me), GFP_KERNEL);
	if (!me) {
		err = -ENOMEM;
		goto err_free;
	}
	me->buf = q->buf;
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &me->rdma, q->buf_size);
	if (err) {
		kfree(me);
		goto err_free;
	}
	q->mentry = &me->rdma;
	mi->offset = rdma_user_mmap_get_offset(&me->rdma);
	mi->size = q->buf_size;
	return 0;

err_free:
	vfree(q->buf);
	q->buf = NULL;
	return err;
}
ALLOW_ERROR_INJECTION(srdma_queue_init, ERRNO);

/* After this the kernel must not touch q->buf again. */
void srdma_queue_fini(struct srdma_queue *q)
{
	if (q->mentry)
		rdma_user_mmap_entry_remove(q->mentry);	/* frees in mmap_free */
	else
		vfree(q->buf);
	q->buf = NULL;
	q->mentry = NULL;
}

int srdma_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct srdma_mmap_entry *me;
	int err;

	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	me = container_of(entry, struct srdma_mmap_entry, rdma);
	err = remap_vmalloc_range(vma, me->buf, 0);
	rdma_user_mmap_entry_put(entry);
	return err;
}

void srdma_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct srdma_mmap_entry *me =
		container_of(entry, struct srdma_mmap_entry, rdma);

	vfree(me->buf);
	kfree(me);
}

int srdma_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	return 0;
}

void srdma_dealloc_ucontext(struct ib_ucontext *uctx)
{
}
