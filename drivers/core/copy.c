// SPDX-License-Identifier: GPL-2.0
/*
 * Moving bytes between a checked memory key and a kernel buffer, or
 * lending the pages that hold them. Each access re-checks the key's state
 * and range under its lock (keys.c: what "in flight" means), then walks
 * the MR's page list one page (or fast-register page) at a time.
 */
#include <linux/highmem.h>

#include "srdma.h"
#include "transport.h"

static void srdma_copy_chunk(void *va, void *buf, size_t n,
			     enum srdma_copy_dir dir)
{
	if (dir == SRDMA_TO_MEM)
		memcpy(va, buf, n);
	else
		memcpy(buf, va, n);
}

/* Walk the page list of MR @mem; the range is already checked. */
static int srdma_copy_pages(const struct srdma_mem *mem, u64 iova, void *buf,
			    u64 length, enum srdma_copy_dir dir)
{
	u64 off, page_size;

	if (mem->type == SRDMA_MEM_DMA) {
		srdma_copy_chunk((void *)(uintptr_t)iova, buf, length, dir);
		return 0;
	}

	off = iova - mem->iova + mem->page_offset;
	page_size = 1ULL << mem->page_shift;
	while (length) {
		u64 idx = off >> mem->page_shift;
		u64 in = off & (page_size - 1);
		size_t n = min_t(u64, length, page_size - in);

		if (idx >= mem->npages)
			return -EFAULT;
		if (mem->type == SRDMA_MEM_USER) {
			void *va = kmap_local_page(mem->pages[idx]);

			srdma_copy_chunk(va + in, buf, n, dir);
			kunmap_local(va);
		} else {
			srdma_copy_chunk((void *)(uintptr_t)(mem->kvas[idx] + in),
					 buf, n, dir);
		}
		buf += n;
		off += n;
		length -= n;
	}
	return 0;
}

/*
 * What one checked access does with its bytes: copy them between memory
 * and @buf, or, reading only, lend the pages that hold them to @lend.
 */
struct srdma_mem_io {
	void *buf;
	enum srdma_copy_dir dir;
	srdma_lend_fn lend;
	void *arg;
};

/*
 * Hand the pages under a checked range to @io->lend, one piece per page.
 * Only a user MR's pages are pinned and counted: they may be lent beyond
 * this call. Other memory is copied instead (-EOPNOTSUPP).
 */
static int srdma_lend_pages(const struct srdma_mem *mem, u64 iova,
			    u64 length, const struct srdma_mem_io *io)
{
	u64 off;

	if (mem->type != SRDMA_MEM_USER || mem->page_shift != PAGE_SHIFT)
		return -EOPNOTSUPP;
	off = iova - mem->iova + mem->page_offset;
	while (length) {
		u64 idx = off >> PAGE_SHIFT;
		u32 in = off & ~PAGE_MASK;
		u32 n = min_t(u64, length, PAGE_SIZE - in);
		int err;

		if (idx >= mem->npages)
			return -EFAULT;
		err = io->lend(io->arg, mem->pages[idx], in, n);
		if (err)
			return err;
		off += n;
		length -= n;
	}
	return 0;
}

/* The access once the key's state and range were checked, mem->lock held. */
static int srdma_mem_io_checked(const struct srdma_mem *mem, u64 iova,
				u64 length, const struct srdma_mem_io *io)
{
	/*
	 * A window addresses its MR's memory with the MR's iova. The bound
	 * MR cannot be invalidated, deregistered or re-registered while the
	 * window holds it, and it is unbound only under our lock.
	 */
	if (mem->type == SRDMA_MEM_MW)
		mem = mem->mr;
	if (io->lend)
		return srdma_lend_pages(mem, iova, length, io);
	return srdma_copy_pages(mem, iova, io->buf, length, io->dir);
}

/*
 * Copy with mem->lock held for reading: the key must still be valid and
 * cover the range, or nothing is touched (-EINVAL once invalidated).
 */
int srdma_mem_copy_locked(struct srdma_mem *mem, u64 iova, void *buf,
			  u64 length, enum srdma_copy_dir dir)
{
	struct srdma_mem_io io = { .buf = buf, .dir = dir };

	if (mem->state != SRDMA_MEM_VALID)
		return -EINVAL;
	if (!srdma_mem_in_range(mem, iova, length))
		return -ERANGE;
	return srdma_mem_io_checked(mem, iova, length, &io);
}

/*
 * Copy between a checked memory key and @buf. This is one access in
 * flight: an invalidation of @mem waits for it, and it fails once @mem
 * was invalidated (the caller ends the operation with a protection error).
 */
int srdma_mem_copy(struct srdma_mem *mem, u64 iova, void *buf, u64 length,
		   enum srdma_copy_dir dir)
{
	unsigned long flags;
	int err;

	read_lock_irqsave(&mem->lock, flags);
	err = srdma_mem_copy_locked(mem, iova, buf, length, dir);
	read_unlock_irqrestore(&mem->lock, flags);
	return err;
}

/*
 * Check one access through @key in full (state, key, PD, access, bounds,
 * a window's QP) and copy or lend, under one hold of mem->lock: once a
 * rereg that narrows access or moves the MR to another PD, a dereg, an
 * unbind or an invalidate has returned, no byte more moves through the
 * old check (a page lent before stays lent: srdma_swqe_lend()). Returns 0
 * or srdma_rkey_check()'s errors, with memory untouched, or -EOPNOTSUPP
 * when pages cannot be lent.
 */
static int srdma_key_io_held(struct srdma_qp *qp, struct srdma_mem *mem,
			     u32 key, u64 iova, u64 length, int access,
			     bool remote, const struct srdma_mem_io *io)
{
	unsigned long flags;
	int err;

	read_lock_irqsave(&mem->lock, flags);
	err = srdma_key_check_locked(mem, qp, key, iova, length, access,
				     remote);
	if (!err)
		err = srdma_mem_io_checked(mem, iova, length, io);
	read_unlock_irqrestore(&mem->lock, flags);
	if (err && err != -EOPNOTSUPP)
		srdma_count(qp_dev(qp), remote ? SRDMA_CNT_REMOTE_KEY_ERR :
						 SRDMA_CNT_LOCAL_KEY_ERR);
	return err;
}

/*
 * srdma_key_io_held() after looking @key up: one lookup and one lock
 * hold for the check and the copy, the data path's cost per packet.
 */
static int srdma_key_io(struct srdma_qp *qp, u32 key, u64 iova, u64 length,
			int access, bool remote, const struct srdma_mem_io *io)
{
	struct srdma_mem *mem = srdma_key_get(qp_dev(qp), key);
	int err;

	if (!mem) {
		srdma_count(qp_dev(qp), remote ? SRDMA_CNT_REMOTE_KEY_ERR :
						 SRDMA_CNT_LOCAL_KEY_ERR);
		return -EINVAL;
	}
	err = srdma_key_io_held(qp, mem, key, iova, length, access, remote,
				io);
	srdma_mem_put(mem);
	return err;
}

/* For an access that outlives its first check: see transport.h. */
int srdma_rkey_copy(struct srdma_qp *qp, struct srdma_mem *mem, u32 rkey,
		    u64 iova, void *buf, u64 length, int access,
		    enum srdma_copy_dir dir)
{
	struct srdma_mem_io io = { .buf = buf, .dir = dir };

	return srdma_key_io_held(qp, mem, rkey, iova, length, access, true,
				 &io);
}

int srdma_rkey_check_copy(struct srdma_qp *qp, u32 rkey, u64 iova, void *buf,
			  u64 length, int access, enum srdma_copy_dir dir)
{
	struct srdma_mem_io io = { .buf = buf, .dir = dir };

	return srdma_key_io(qp, rkey, iova, length, access, true, &io);
}

/*
 * Copy @len bytes between io->buf and the SGE list at @c, or lend their
 * pages, checking each lkey (local write access when writing into
 * memory) and advancing @c. Returns 0, -ENOSPC when the list is too
 * short, a key check error or -EOPNOTSUPP (lending only).
 */
static int srdma_sge_io(struct srdma_qp *qp, struct srdma_sge_cursor *c,
			u32 len, struct srdma_mem_io *io)
{
	int access = !io->lend && io->dir == SRDMA_TO_MEM ?
		     IB_ACCESS_LOCAL_WRITE : 0;

	while (len) {
		const struct ib_sge *sge;
		u32 n;
		int err;

		if (c->idx >= c->num_sge)
			return -ENOSPC;
		sge = &c->sge[c->idx];
		if (c->off >= sge->length) {
			c->idx++;
			c->off = 0;
			continue;
		}
		n = min(len, sge->length - c->off);
		err = srdma_key_io(qp, sge->lkey, sge->addr + c->off, n,
				   access, false, io);
		if (err)
			return err;
		if (!io->lend)
			io->buf += n;
		len -= n;
		c->off += n;
	}
	return 0;
}

int srdma_sge_copy(struct srdma_qp *qp, struct srdma_sge_cursor *c,
		   void *buf, u32 len, enum srdma_copy_dir dir)
{
	struct srdma_mem_io io = { .buf = buf, .dir = dir };

	return srdma_sge_io(qp, c, len, &io);
}

/* Advance @c by @len bytes without touching memory. */
int srdma_sge_skip(struct srdma_sge_cursor *c, u32 len)
{
	while (len) {
		u32 n;

		if (c->idx >= c->num_sge)
			return -ENOSPC;
		if (c->off >= c->sge[c->idx].length) {
			c->idx++;
			c->off = 0;
			continue;
		}
		n = min(len, c->sge[c->idx].length - c->off);
		c->off += n;
		len -= n;
	}
	return 0;
}

/*
 * Read or lend @len bytes of @w's SGE list from byte @off on. Like
 * srdma_swqe_place(), only while @w is outstanding: the flush's
 * completion hands the buffers back to the consumer, and a kernel ULP may
 * free them then.
 */
static int srdma_swqe_io(struct srdma_qp *qp, const struct srdma_swqe *w,
			 u32 off, u32 len, struct srdma_mem_io *io)
{
	struct srdma_sge_cursor c;
	unsigned long flags;
	int err;

	srdma_sge_cursor_init(&c, w->sge, w->num_sge);
	err = srdma_sge_skip(&c, off);
	if (err)
		return err;
	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state != IB_QPS_ERR && w->state != SRDMA_WQE_DONE)
		err = srdma_sge_io(qp, &c, len, io);
	else
		err = -ECANCELED;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return err;
}

/* Read @len bytes of @w's payload from byte @off on; see transport.h. */
int srdma_swqe_read(struct srdma_qp *qp, const struct srdma_swqe *w, u32 off,
		    void *buf, u32 len)
{
	struct srdma_mem_io io = { .buf = buf, .dir = SRDMA_FROM_MEM };

	if (w->inlined) {
		if (len > w->length || off > w->length - len)
			return -ENOSPC;
		memcpy(buf, srdma_swqe_inline(w) + off, len);
		return 0;
	}
	return srdma_swqe_io(qp, w, off, len, &io);
}

/* Lend the pages of @len bytes of @w's payload; see transport.h. */
int srdma_swqe_lend(struct srdma_qp *qp, const struct srdma_swqe *w, u32 off,
		    u32 len, srdma_lend_fn lend, void *arg)
{
	struct srdma_mem_io io = { .lend = lend, .arg = arg };

	if (w->inlined)
		return -EOPNOTSUPP;
	return srdma_swqe_io(qp, w, off, len, &io);
}

/*
 * Write what came back for a send WQE into its buffers; see transport.h.
 * The flush of a QP in ERR marks WQEs done and posts their completions
 * under state_lock, after which their buffers are the consumer's (a
 * kernel ULP may free them at once): the check and the copy share one
 * hold of it.
 */
int srdma_swqe_place(struct srdma_qp *qp, const struct srdma_swqe *w,
		     struct srdma_sge_cursor *c, const void *buf, u32 len)
{
	unsigned long flags;
	int err = -ECANCELED;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state != IB_QPS_ERR && w->state != SRDMA_WQE_DONE)
		err = srdma_sge_copy(qp, c, (void *)buf, len, SRDMA_TO_MEM);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return err;
}

/* srdma_swqe_place() from byte @off of @w's SGE list on. */
int srdma_swqe_place_at(struct srdma_qp *qp, const struct srdma_swqe *w,
			u32 off, const void *buf, u32 len)
{
	struct srdma_sge_cursor c;

	srdma_sge_cursor_init(&c, w->sge, w->num_sge);
	return srdma_sge_skip(&c, off) ?:
	       srdma_swqe_place(qp, w, &c, buf, len);
}

/*
 * An atomic's answer: its original value goes into the first eight bytes
 * of the WQE's SGE list. Any failure is a protection error, whatever the
 * reason (both transports complete it so), but a WQE the flush completed
 * meanwhile stays flushed.
 */
enum ib_wc_status srdma_swqe_atomic_result(struct srdma_qp *qp,
					   const struct srdma_swqe *w,
					   u64 orig)
{
	int err = srdma_swqe_place_at(qp, w, 0, &orig, sizeof(orig));

	if (err == -ECANCELED)
		return IB_WC_WR_FLUSH_ERR;
	return err ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}
