// SPDX-License-Identifier: GPL-2.0
/*
 * Moving bytes between a checked memory key and a kernel buffer. The
 * range must already have passed srdma_mem_check(); this walks the MR's
 * page list one page (or fast-register page) at a time.
 */
#include <linux/highmem.h>

#include "srdma.h"

static void srdma_copy_chunk(void *va, void *buf, size_t n,
			     enum srdma_copy_dir dir)
{
	if (dir == SRDMA_TO_MEM)
		memcpy(va, buf, n);
	else
		memcpy(buf, va, n);
}

int srdma_mem_copy(struct srdma_mem *mem, u64 iova, void *buf, u64 length,
		   enum srdma_copy_dir dir)
{
	u64 off, page_size;

	/* a window addresses its MR's memory with the MR's iova */
	if (mem->type == SRDMA_MEM_MW)
		mem = mem->mr;
	if (!mem)
		return -EINVAL;

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
