// SPDX-License-Identifier: GPL-2.0
/*
 * Self-tests of how a transport walks the send queue (transport.h):
 * catching up with what the core completed on its own, and never taking
 * a completed slot's copy, which the core may have refilled, for the WQE
 * it held. On a synthetic four-slot queue that no device holds. And
 * reading a WQE's inline bytes never past its length.
 */
#include <linux/slab.h>

#include "transport.h"
#include "selftest.h"

#define ST_SLOTS 4

struct srdma_st_catch_up_case {
	u32 pos, oldest, fetch, want;
	const char *what;
};

struct srdma_st_read_case {
	u32 off, len;
	int want;
};

struct srdma_st_oldest_case {
	u32 cons, fetch, want;
	const char *what;
};

static void __init srdma_st_catch_up(struct srdma_st *st)
{
	static const struct srdma_st_catch_up_case cases[] __initconst = {
		{ 5, 5, 9, 5, "at the oldest" },
		{ 7, 5, 9, 7, "past the oldest" },
		{ 9, 5, 9, 9, "at the fetch position" },
		{ 4, 5, 9, 5, "one behind" },
		{ 0x10, 0x8000001a, 0x8000001b, 0x8000001a,
		  "2^31 + 10 behind, a signed difference says ahead" },
		{ 0, U32_MAX, U32_MAX, U32_MAX, "2^32 - 1 behind" },
		{ 0xfffffffe, 1, 3, 1, "behind, across the wrap" },
		{ 2, 0xfffffffe, 3, 2, "ahead, across the wrap" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u32 got = srdma_sq_catch_up(cases[i].pos, cases[i].oldest,
					    cases[i].fetch);

		ST_CHECK(st, got == cases[i].want,
			 "catch up %#x (oldest %#x, fetch %#x), %s: %#x, want %#x",
			 cases[i].pos, cases[i].oldest, cases[i].fetch,
			 cases[i].what, got, cases[i].want);
	}
}

static void __init srdma_st_oldest(struct srdma_st *st, struct srdma_qp *qp)
{
	static const struct srdma_st_oldest_case cases[] __initconst = {
		{ 6, 9, 6, "three outstanding" },
		{ 9, 9, 9, "none outstanding" },
		{ 5, 9, 5, "a full ring" },
		{ 11, 9, 9, "sq_cons past the fetch read before it" },
		{ 1, 0xfffffffe, 0xfffffffe, "sq_cons past it, across the wrap" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u32 got;

		qp->sq_cons = cases[i].cons;
		got = srdma_sq_oldest(qp, cases[i].fetch);
		ST_CHECK(st, got == cases[i].want,
			 "oldest (cons %#x, fetch %#x), %s: %#x, want %#x",
			 cases[i].cons, cases[i].fetch, cases[i].what, got,
			 cases[i].want);
	}
}

/* srdma_sq_pending() of slot @pos after setting its state and sq_cons. */
static bool __init srdma_st_pends(struct srdma_qp *qp, u32 pos, u32 cons,
				  u32 fetch, enum srdma_wqe_state state)
{
	struct srdma_swqe *w = srdma_swqe_at(qp, pos);

	w->state = state;
	qp->sq_cons = cons;
	return srdma_sq_pending(qp, pos, fetch) == w;
}

static void __init srdma_st_pending(struct srdma_st *st, struct srdma_qp *qp)
{
	ST_CHECK(st, srdma_st_pends(qp, 6, 5, 8, SRDMA_WQE_POSTED),
		 "a WQE in flight is the transport's");
	ST_CHECK(st, srdma_st_pends(qp, 5, 5, 8, SRDMA_WQE_POSTED),
		 "the oldest WQE in flight is the transport's");
	ST_CHECK(st, !srdma_st_pends(qp, 6, 5, 8, SRDMA_WQE_DONE),
		 "a local WQE, finished, is skipped");
	/* slot 4 is slot 8's copy: the core refilled it after completing 4 */
	ST_CHECK(st, !srdma_st_pends(qp, 4, 5, 9, SRDMA_WQE_POSTED),
		 "a completed slot refilled with a newer WQE is skipped");
	ST_CHECK(st, !srdma_st_pends(qp, 5, 9, 9, SRDMA_WQE_POSTED),
		 "a slot the flush completed is skipped");
	ST_CHECK(st, !srdma_st_pends(qp, 0x7ffffff0, 0, 1,
				     SRDMA_WQE_POSTED),
		 "a slot 2^31 + 16 behind is skipped");
	ST_CHECK(st, srdma_st_pends(qp, U32_MAX, U32_MAX, 1, SRDMA_WQE_POSTED),
		 "a WQE in flight across the wrap is the transport's");
}

/* An inline WQE's bytes are read within its length, whatever is asked. */
static void __init srdma_st_read_inline(struct srdma_st *st)
{
	static const struct srdma_st_read_case cases[] __initconst = {
		{ 0, 8, 0 }, { 3, 5, 0 }, { 8, 0, 0 }, { 3, 6, -ENOSPC },
		{ 9, 0, -ENOSPC }, { 8, U32_MAX, -ENOSPC },
		{ U32_MAX, 1, -ENOSPC }, { 1, U32_MAX, -ENOSPC },
	};
	static const u8 bytes[8] __initconst = "01234567";
	struct srdma_swqe *w = kzalloc(sizeof(*w) + 16, GFP_KERNEL);
	unsigned int i;

	if (!ST_ALLOCATED(st, w))
		return;
	w->inlined = true;
	w->length = sizeof(bytes);
	memcpy(w->sge, bytes, sizeof(bytes));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u8 out[8] = {};
		/* @out holds every length that may succeed */
		int got = srdma_swqe_read(NULL, w, cases[i].off, out,
					  cases[i].len);

		ST_CHECK(st, got == cases[i].want &&
			 (got || !memcmp(out, bytes + cases[i].off,
					 cases[i].len)),
			 "inline read of %u bytes at %u: %d, want %d",
			 cases[i].len, cases[i].off, got, cases[i].want);
	}
	kfree(w);
}

void __init srdma_st_sq(struct srdma_st *st)
{
	struct srdma_qp *qp = kzalloc(sizeof(*qp), GFP_KERNEL);

	srdma_st_catch_up(st);
	srdma_st_read_inline(st);
	if (!ST_ALLOCATED(st, qp))
		return;
	qp->sq.q.index_mask = ST_SLOTS - 1;
	qp->swqe_size = sizeof(struct srdma_swqe);
	qp->swqe_buf = kcalloc(ST_SLOTS, qp->swqe_size, GFP_KERNEL);
	if (ST_ALLOCATED(st, qp->swqe_buf)) {
		srdma_st_oldest(st, qp);
		srdma_st_pending(st, qp);
	}
	kfree(qp->swqe_buf);
	kfree(qp);
}
