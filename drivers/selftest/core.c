// SPDX-License-Identifier: GPL-2.0
/*
 * Self-tests of the core: memory key bounds and access checks
 * (keys.c) on synthetic keys that no device holds.
 */
#include <linux/slab.h>

#include "srdma.h"
#include "selftest.h"

static struct ib_pd srdma_st_pd[2] __initdata;

/* One range case on @mem: [iova, iova + len) is inside or not. */
static void __init srdma_st_range(struct srdma_st *st,
				  const struct srdma_mem *mem, u64 iova,
				  u64 len, bool inside)
{
	ST_CHECK(st, srdma_mem_in_range(mem, iova, len) == inside,
		 "MR [%#llx +%#llx): [%#llx +%#llx) %s", mem->iova,
		 mem->length, iova, len, inside ? "inside" : "outside");
}

static void __init srdma_st_ranges(struct srdma_st *st, struct srdma_mem *mem)
{
	/* an ordinary MR at 0x10000, 0x1000 long */
	mem->iova = 0x10000;
	mem->length = 0x1000;
	srdma_st_range(st, mem, 0x10000, 0x1000, true);
	srdma_st_range(st, mem, 0x10000, 0, true);
	srdma_st_range(st, mem, 0x11000, 0, true);	/* empty, at the end */
	srdma_st_range(st, mem, 0x11001, 0, false);
	srdma_st_range(st, mem, 0xffff, 0, false);
	srdma_st_range(st, mem, 0xffff, 1, false);
	srdma_st_range(st, mem, 0x10fff, 1, true);
	srdma_st_range(st, mem, 0x10fff, 2, false);	/* one past the end */
	srdma_st_range(st, mem, 0x10001, 0x1000, false);
	srdma_st_range(st, mem, 0x10000, 0x1001, false);
	/* iova + len wraps to inside the MR: must not pass */
	srdma_st_range(st, mem, 0x10800, U64_MAX - 0x7ff, false);
	srdma_st_range(st, mem, 0x10800, U64_MAX, false);
	srdma_st_range(st, mem, U64_MAX, 2, false);

	/* an MR ending at the top of the address space */
	mem->iova = U64_MAX - 0xfff;
	mem->length = 0x1000;
	srdma_st_range(st, mem, U64_MAX - 0xfff, 0x1000, true);
	srdma_st_range(st, mem, U64_MAX, 1, true);
	srdma_st_range(st, mem, U64_MAX, 2, false);
	srdma_st_range(st, mem, U64_MAX, 0, true);
	srdma_st_range(st, mem, U64_MAX - 0xfff, 0x1001, false);
	srdma_st_range(st, mem, 0, 1, false);

	/* a zero-length MR: holds the empty range at its start only */
	mem->iova = 0x2000;
	mem->length = 0;
	srdma_st_range(st, mem, 0x2000, 0, true);
	srdma_st_range(st, mem, 0x2000, 1, false);
	srdma_st_range(st, mem, 0x2001, 0, false);

	/* the whole address space (a DMA MR's shape) */
	mem->iova = 0;
	mem->length = U64_MAX;
	srdma_st_range(st, mem, 0, U64_MAX, true);
	srdma_st_range(st, mem, 1, U64_MAX - 1, true);
	srdma_st_range(st, mem, 1, U64_MAX, false);
}

/* srdma_mem_check's and srdma_key_check_locked's verdicts, in order. */
static void __init srdma_st_checks(struct srdma_st *st, struct srdma_mem *mem,
				   struct srdma_qp *qp, struct srdma_qp *other)
{
	const int rw = IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE;
	struct ib_pd *pd = &srdma_st_pd[0];
	int err;

	mem->type = SRDMA_MEM_USER;
	mem->state = SRDMA_MEM_VALID;
	mem->key = 0x1234;
	mem->pd = pd;
	mem->access = rw;
	mem->iova = 0x10000;
	mem->length = 0x1000;

	err = srdma_mem_check(mem, pd, IB_ACCESS_REMOTE_WRITE, 0x10000, 16);
	ST_CHECK(st, err == 0, "valid access: %d, want 0", err);
	err = srdma_mem_check(mem, pd, IB_ACCESS_REMOTE_ATOMIC, 0x10000, 8);
	ST_CHECK(st, err == -EACCES, "access not granted: %d, want -EACCES",
		 err);
	err = srdma_mem_check(mem, &srdma_st_pd[1], IB_ACCESS_REMOTE_READ,
			      0x10000, 8);
	ST_CHECK(st, err == -EPERM, "other PD: %d, want -EPERM", err);
	err = srdma_mem_check(mem, pd, IB_ACCESS_REMOTE_READ, 0x10ff8, 16);
	ST_CHECK(st, err == -ERANGE, "beyond the MR: %d, want -ERANGE", err);
	err = srdma_mem_check(mem, pd, IB_ACCESS_REMOTE_READ, 0x10800,
			      U64_MAX - 0x7ff);
	ST_CHECK(st, err == -ERANGE, "iova + len wraps: %d, want -ERANGE",
		 err);
	mem->state = SRDMA_MEM_INVALID;
	err = srdma_mem_check(mem, pd, IB_ACCESS_REMOTE_READ, 0x10000, 8);
	ST_CHECK(st, err == -EINVAL, "invalidated key: %d, want -EINVAL",
		 err);
	mem->state = SRDMA_MEM_DEAD;
	err = srdma_mem_check(mem, pd, IB_ACCESS_REMOTE_READ, 0x10000, 8);
	ST_CHECK(st, err == -EINVAL, "dead key: %d, want -EINVAL", err);
	mem->state = SRDMA_MEM_VALID;

	qp->ibqp.pd = pd;
	qp->ibqp.qp_num = 17;
	other->ibqp.pd = pd;
	other->ibqp.qp_num = 18;
	err = srdma_key_check_locked(mem, qp, 0x1234, 0x10000, 8,
				     IB_ACCESS_REMOTE_READ, true);
	ST_CHECK(st, err == 0, "MR through its key: %d, want 0", err);
	err = srdma_key_check_locked(mem, qp, 0x1235, 0x10000, 8,
				     IB_ACCESS_REMOTE_READ, true);
	ST_CHECK(st, err == -EINVAL, "stale key byte: %d, want -EINVAL", err);

	/* a type 2 window: remote only, and only through its own QP */
	mem->type = SRDMA_MEM_MW;
	mem->mw_type = IB_MW_TYPE_2;
	mem->qp = qp;
	mem->qpn = 17;
	err = srdma_key_check_locked(mem, qp, 0x1234, 0x10000, 8,
				     IB_ACCESS_REMOTE_READ, true);
	ST_CHECK(st, err == 0, "type 2 MW through its QP: %d, want 0", err);
	err = srdma_key_check_locked(mem, other, 0x1234, 0x10000, 8,
				     IB_ACCESS_REMOTE_READ, true);
	ST_CHECK(st, err == -EPERM, "type 2 MW through another QP: %d, want -EPERM",
		 err);
	mem->qpn = 18;
	err = srdma_key_check_locked(mem, qp, 0x1234, 0x10000, 8,
				     IB_ACCESS_REMOTE_READ, true);
	ST_CHECK(st, err == -EPERM, "type 2 MW, QP number reused: %d, want -EPERM",
		 err);
	err = srdma_key_check_locked(mem, qp, 0x1234, 0x10000, 8,
				     IB_ACCESS_LOCAL_WRITE, false);
	ST_CHECK(st, err == -EINVAL, "MW as an lkey: %d, want -EINVAL", err);
	mem->mw_type = IB_MW_TYPE_1;
	err = srdma_key_check_locked(mem, other, 0x1234, 0x10000, 8,
				     IB_ACCESS_REMOTE_READ, true);
	ST_CHECK(st, err == 0, "type 1 MW through any QP of its PD: %d, want 0",
		 err);
}

void __init srdma_st_keys(struct srdma_st *st)
{
	struct srdma_qp *qp, *other;
	struct srdma_mem *mem;

	mem = kzalloc(sizeof(*mem), GFP_KERNEL);
	qp = kzalloc(sizeof(*qp), GFP_KERNEL);
	other = kzalloc(sizeof(*other), GFP_KERNEL);
	if (ST_ALLOCATED(st, mem && qp && other)) {
		srdma_st_ranges(st, mem);
		srdma_st_checks(st, mem, qp, other);
	}
	kfree(other);
	kfree(qp);
	kfree(mem);
}
