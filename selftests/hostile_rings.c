// SPDX-License-Identifier: GPL-2.0
/*
 * hostile_rings: a hostile user of the rdma_rxe ring ABI.
 *
 * librxe and the kernel share each queue as a mapping of the uverbs file:
 * a struct rxe_queue_buf header (producer index at byte 128, consumer at
 * 256) and a power-of-two ring of slots. Nothing stops a process from
 * writing anything there. This program finds the rings of its own CQs,
 * QPs and SRQ (the uverbs mappings that appear in /proc/self/maps across
 * each create; of a QP's two, the SQ is the one with the larger slots:
 * a send WQE is over 200 bytes, a receive WQE with four SGEs 104, and
 * mmap offsets are reused lowest-hole-first, so their order says
 * nothing), then, from a seed, writes
 * malformed WQEs (undefined opcodes, num_sge beyond the QP's limit, huge
 * and inline lengths, bad keys and AH numbers, stray flags) and arbitrary
 * indices into them and rings the send doorbell (librxe's: a POST_SEND
 * command with no WRs) while a second thread keeps rewriting slots and
 * indices as the kernel fetches them.
 *
 * Each epoch builds fresh objects: an RC pair connected through rdma_cm
 * (the server side on an SRQ), a "loose" RC QP (RoCE: connected to itself;
 * iWARP: moved to RTS with no connection) and on RoCE a UD QP sending to
 * itself. Some epochs start with a "chase": the second thread keeps the
 * loose QP's RQ producer one behind the consumer the kernel publishes and
 * its CQ drained while the QP is moved to ERR; a kernel that flushes the
 * RQ without a budget spins there (under a spinlock) for as long as the
 * chase lasts.
 *
 * It fails (exit 1) when a ring cannot be identified, when a setup step
 * fails, or when one verbs call stayed in the kernel longer than the
 * slow limit (-T ms): the kernel must bound its work however the user
 * writes the rings. Kernel crashes are the calling script's business
 * (dmesg scan, rmmod, a byte-checked transfer afterwards).
 *
 *   hostile_rings -d DEV -a ADDR [-g GIDIDX] [-n WQES] [-s SEED] [-p PORT]
 *                 [-e WQES_PER_EPOCH] [-T SLOW_MS] [-C CHASE_MS]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_user_rxe.h>
#include <rdma/rdma_verbs.h>

#include "fuzz_rng.h"
#include "verbs_util.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_MAPS	4096
#define MAX_RINGS	16
#define BUF_SIZE	65536

enum ring_kind { SQ, RQ, SRQ, CQ };
static const char *const kind_name[] = { "SQ", "RQ", "SRQ", "CQ" };

struct ring {
	struct rxe_queue_buf *buf;	/* the shared mapping */
	uint32_t mask;			/* as the kernel told us at create */
	uint32_t log2;
	uint32_t max_sge;		/* what the QP/SRQ was created with */
	enum ring_kind kind;
	struct ibv_qp *qp;		/* SQ/RQ: the owner, for doorbells */
};

struct map {
	unsigned long start, end, off;
};

static void rng_seed(struct rng *r, uint64_t seed)
{
	r->s = seed * 0x9e3779b97f4a7c15ULL + 0x6a09e667f3bcc909ULL;
	if (!r->s)
		r->s = 1;
	rnd64(r);
}

/* Everything one epoch creates. */
struct epoch {
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct ibv_mr *mr, *mr2;
	struct ibv_mw *mw;
	struct ibv_cq *scq, *rcq, *ccq;
	struct ibv_srq *srq;
	struct rdma_cm_id *cli, *srv;
	struct ibv_qp *loose, *ud;
	struct ibv_ah *ah;
	uint8_t *buf, *buf2;
	struct ring rings[MAX_RINGS];
	int nrings;
	struct ring *loose_rq, *ccq_ring;
};

static const char *dev_name, *addr, *port = "7474";
static int gid_index = -1, iwarp;
static uint64_t seed = 1;
static uint64_t total_wqes = 20000, epoch_wqes = 1000;
static long slow_ms = 1000, chase_ms = 3000;
static struct rdma_cm_id *listen_id;
static union ibv_gid gid;

/* results */
static uint64_t wqes_written, rewrites, doorbells, doorbell_errs, modifies;
static long worst_ms;
static char worst_call[128];
static int slow_calls, failed;

/* the rewriting thread */
static atomic_int rw_stop;
static struct epoch *rw_ep;
static uint64_t rw_seed;
static atomic_int chase_on;
static uint64_t chase_seen, chase_best;	/* receives flushed meanwhile */

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Note how long one call spent in the kernel; too long fails the run. */
static void timed(long t0, const char *what, uint64_t ep)
{
	long ms = now_ms() - t0;

	if (ms > worst_ms) {
		worst_ms = ms;
		snprintf(worst_call, sizeof(worst_call), "%s (epoch %" PRIu64 ")",
			 what, ep);
	}
	if (ms > slow_ms) {
		slow_calls++;
		printf("SLOW: %s took %ld ms in the kernel (seed %" PRIu64
		       ", epoch %" PRIu64 ")\n", what, ms, seed, ep);
	}
}

static int read_maps(struct map *m, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx %*s %lx", &m[n].start, &m[n].end,
			   &m[n].off) == 3)
			n++;
	}
	fclose(f);
	return n;
}

static struct map before[MAX_MAPS], after[MAX_MAPS];
static int nbefore;

static void maps_snapshot(void)
{
	nbefore = read_maps(before, MAX_MAPS);
}

static uint32_t map_log2(const struct map *m)
{
	return ((const struct rxe_queue_buf *)m->start)->log2_elem_size;
}

/* The uverbs mappings made since maps_snapshot(), largest slots first. */
static int maps_new(struct map *out, int max)
{
	int na = read_maps(after, MAX_MAPS), n = 0, i, j;

	for (i = 0; i < na; i++) {
		for (j = 0; j < nbefore; j++)
			if (before[j].start == after[i].start &&
			    before[j].off == after[i].off)
				break;
		if (j == nbefore && n < max)
			out[n++] = after[i];
	}
	for (i = 1; i < n; i++)		/* insertion sort */
		for (j = i; j > 0 && map_log2(&out[j]) > map_log2(&out[j - 1]);
		     j--) {
			struct map t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

static uint32_t log2_ceil(uint32_t v)
{
	uint32_t l = 0;

	while ((1U << l) < v)
		l++;
	return l;
}

static struct ring *add_ring(struct epoch *e, const struct map *m,
			     enum ring_kind kind, struct ibv_qp *qp,
			     uint32_t max_sge)
{
	struct ring *r = &e->rings[e->nrings++];

	r->buf = (struct rxe_queue_buf *)m->start;
	r->mask = r->buf->index_mask;
	r->log2 = r->buf->log2_elem_size;
	r->kind = kind;
	r->qp = qp;
	r->max_sge = max_sge;
	return r;
}

/*
 * Take the @want new mappings of one create as rings: @kinds by slot size,
 * largest first, each checked against the least slot size that kind needs.
 */
static int take_rings(struct epoch *e, const char *what, int want,
		      const enum ring_kind *kinds, struct ibv_qp *qp,
		      uint32_t send_sge, uint32_t recv_sge,
		      struct ring **first)
{
	struct map m[8];
	int n = maps_new(m, 8), i;

	if (n != want) {
		printf("%s: %d new uverbs mappings, expected %d\n", what, n, want);
		return -1;
	}
	if (n == 2 && map_log2(&m[0]) == map_log2(&m[1])) {
		printf("%s: SQ and RQ slots of one size (2^%u): cannot tell them apart\n",
		       what, map_log2(&m[0]));
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct rxe_queue_buf *b = (void *)m[i].start;
		uint32_t min_log2 = 0;
		struct ring *r;

		switch (kinds[i]) {
		case SQ:
			min_log2 = log2_ceil(sizeof(struct rxe_send_wqe) +
					     send_sge * sizeof(struct rxe_sge));
			break;
		case RQ:
		case SRQ:
			min_log2 = log2_ceil(sizeof(struct rxe_recv_wqe) +
					     (recv_sge ? recv_sge : 1) *
					     sizeof(struct rxe_sge));
			break;
		case CQ:
			min_log2 = log2_ceil(sizeof(struct ib_uverbs_wc));
			break;
		}
		if (b->log2_elem_size < min_log2 || b->log2_elem_size > 16 ||
		    (b->index_mask & (b->index_mask + 1)) ||
		    sizeof(*b) + (((size_t)b->index_mask + 1) << b->log2_elem_size) >
		    m[i].end - m[i].start) {
			printf("%s: mapping %d (offset %#lx) is no %s ring (log2 %u, mask %#x, %lu bytes)\n",
			       what, i, m[i].off, kind_name[kinds[i]],
			       b->log2_elem_size, b->index_mask,
			       m[i].end - m[i].start);
			return -1;
		}
		r = add_ring(e, &m[i], kinds[i], qp,
			     kinds[i] == SQ ? send_sge : recv_sge);
		if (!i && first)
			*first = r;
	}
	return 0;
}

static void *slot_at(const struct ring *r, uint32_t idx)
{
	return (uint8_t *)r->buf + sizeof(struct rxe_queue_buf) +
	       ((size_t)(idx & r->mask) << r->log2);
}

/* ---- what goes into the slots ------------------------------------ */

static uint32_t pick_key(struct rng *g, struct epoch *e)
{
	switch (rnd(g, 9)) {
	case 0:
	case 1:
	case 2:
		return e->mr->lkey;
	case 3:
		return e->mr->rkey;
	case 4:
		return e->mr2->lkey;
		/* another PD's */;
	case 5:
		return e->mw ? e->mw->rkey : 0;
	case 6:
		return e->mr->lkey ^ (1 + rnd(g, 255));
		/* neighbour */;
	case 7:
		return 0;
	default:
		return (uint32_t)rnd64(g);
	}
}

static uint64_t pick_addr(struct rng *g, struct epoch *e)
{
	uint64_t base = (uintptr_t)e->buf;

	switch (rnd(g, 9)) {
	case 0:
	case 1:
	case 2:
		return base + rnd(g, BUF_SIZE / 8) * 8;
	case 3:
		return base + rnd(g, BUF_SIZE);
		/* misaligned */;
	case 4:
		return base + BUF_SIZE - rnd(g, 16);
		/* at the end */;
	case 5:
		return base - 1 - rnd(g, 4096);
		/* before */;
	case 6:
		return 0;
	case 7:
		return ~0ULL - rnd(g, 64);
	default:
		return rnd64(g);
	}
}

static uint32_t pick_len(struct rng *g)
{
	static const uint32_t odd[] = {
		0, 1, 7, 8, 4095, 4096, 4097, BUF_SIZE, BUF_SIZE + 1,
		0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 1 << 20,
	};

	if (rnd(g, 3))
		return rnd(g, 2) ? rnd(g, 256) : rnd(g, BUF_SIZE);
	return odd[rnd(g, ARRAY_SIZE(odd))];
}

static uint32_t pick_num_sge(struct rng *g, uint32_t max)
{
	switch (rnd(g, 8)) {
	case 0:
	case 1:
	case 2:
		return 1;
	case 3:
		return rnd(g, max + 1);
	case 4:
		return max + 1;
	case 5:
		return max + 1 + rnd(g, 64);
	case 6:
		return 0;
	default:
		return (uint32_t)rnd64(g);
	}
}

static uint32_t pick_opcode(struct rng *g)
{
	static const uint32_t ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV,
		IBV_WR_TSO, 11, 12, 13, 14, 15 /* atomic write */, 16,
		0x20 /* kernel REG_MR: carries a kernel pointer */, 0x21,
		0xf0, 0xf9, 0xff, 0x7fffffff, 0xffffffff,
	};

	if (rnd(g, 3))
		return rnd(g, 2) ? IBV_WR_SEND : rnd(g, IBV_WR_SEND_WITH_INV + 1);
	return ops[rnd(g, ARRAY_SIZE(ops))];
}

static uint32_t pick_qpn(struct rng *g, struct epoch *e)
{
	switch (rnd(g, 6)) {
	case 0:
	case 1:
		return e->ud ? e->ud->qp_num : 1;
	case 2:
		return 1;
		/* GSI */;
	case 3:
		return e->cli->qp->qp_num;
	case 4:
		return 0xffffff;
	default:
		return (uint32_t)rnd64(g);
	}
}

static void fill_random(struct rng *g, void *p, size_t len)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)rnd64(g);
}

/* One malformed (or now and then well-formed) send WQE into @idx. */
static void fuzz_send_wqe(struct rng *g, struct epoch *e, struct ring *r,
			  uint32_t idx, uint64_t wr_id)
{
	size_t esz = (size_t)1 << r->log2;
	struct rxe_send_wqe *w = slot_at(r, idx);
	size_t room = (esz - sizeof(*w)) / sizeof(struct rxe_sge);
	uint32_t i, n;

	if (!rnd(g, 16)) {
		fill_random(g, w, esz);
		return;
	}
	if (rnd(g, 2))
		memset(w, 0, esz);
	w->wr.wr_id = wr_id;
	w->wr.opcode = pick_opcode(g);
	w->wr.send_flags = rnd(g, 4) ? rnd(g, 32) : (uint32_t)rnd64(g);
	w->wr.ex.invalidate_rkey = rnd(g, 2) ? pick_key(g, e) :
					       (uint32_t)rnd64(g);
	switch (rnd(g, 4)) {
	case 0:
		w->wr.wr.rdma.remote_addr = pick_addr(g, e);
		w->wr.wr.rdma.rkey = pick_key(g, e);
		break;
	case 1:
		w->wr.wr.atomic.remote_addr = pick_addr(g, e);
		w->wr.wr.atomic.compare_add = rnd64(g);
		w->wr.wr.atomic.swap = rnd64(g);
		w->wr.wr.atomic.rkey = pick_key(g, e);
		break;
	case 2:
		w->wr.wr.ud.remote_qpn = pick_qpn(g, e);
		w->wr.wr.ud.remote_qkey = rnd(g, 2) ? 0x11111111 :
						       (uint32_t)rnd64(g);
		w->wr.wr.ud.pkey_index = rnd(g, 4) ? 0 : (uint16_t)rnd64(g);
		w->wr.wr.ud.ah_num = rnd(g, 2) ? rnd(g, 4) : (uint32_t)rnd64(g);
		break;
	default:
		w->wr.wr.mw.addr = pick_addr(g, e);
		w->wr.wr.mw.length = rnd(g, 2) ? pick_len(g) : rnd64(g);
		w->wr.wr.mw.mr_lkey = pick_key(g, e);
		w->wr.wr.mw.mw_rkey = pick_key(g, e);
		w->wr.wr.mw.rkey = pick_key(g, e);
		w->wr.wr.mw.access = rnd(g, 2) ? rnd(g, 64) : (uint32_t)rnd64(g);
		break;
	}
	w->iova = rnd(g, 2) ? w->wr.wr.rdma.remote_addr : pick_addr(g, e);
	w->status = (uint32_t)rnd64(g);
	w->state = (uint32_t)rnd64(g);
	n = pick_num_sge(g, r->max_sge);
	w->dma.num_sge = n;
	w->dma.length = pick_len(g);
	w->dma.resid = rnd(g, 2) ? w->dma.length : (uint32_t)rnd64(g);
	w->dma.cur_sge = rnd(g, 4) ? 0 : (uint32_t)rnd64(g);
	w->dma.sge_offset = rnd(g, 4) ? 0 : (uint32_t)rnd64(g);
	if (w->wr.send_flags & IBV_SEND_INLINE) {
		/* inline bytes where the SGEs would be; length as picked */
		fill_random(g, w->dma.inline_data, esz - sizeof(*w));
		return;
	}
	for (i = 0; i < n && i < room; i++) {
		w->dma.sge[i].addr = pick_addr(g, e);
		w->dma.sge[i].length = pick_len(g);
		w->dma.sge[i].lkey = pick_key(g, e);
	}
}

static void fuzz_recv_wqe(struct rng *g, struct epoch *e, struct ring *r,
			  uint32_t idx, uint64_t wr_id)
{
	size_t esz = (size_t)1 << r->log2;
	struct rxe_recv_wqe *w = slot_at(r, idx);
	size_t room = (esz - sizeof(*w)) / sizeof(struct rxe_sge);
	uint32_t i, n;

	if (!rnd(g, 16)) {
		fill_random(g, w, esz);
		return;
	}
	w->wr_id = wr_id;
	n = pick_num_sge(g, r->max_sge);
	w->dma.num_sge = n;
	w->dma.length = pick_len(g);
	w->dma.resid = (uint32_t)rnd64(g);
	w->dma.cur_sge = rnd(g, 4) ? 0 : (uint32_t)rnd64(g);
	for (i = 0; i < n && i < room; i++) {
		w->dma.sge[i].addr = pick_addr(g, e);
		w->dma.sge[i].length = pick_len(g);
		w->dma.sge[i].lkey = pick_key(g, e);
	}
}

/* A new index for a ring: mostly a plausible advance, else anything. */
static uint32_t pick_index(struct rng *g, uint32_t cur, uint32_t other,
			   uint32_t mask, uint32_t k)
{
	switch (rnd(g, 10)) {
	case 0:
	case 1:
	case 2:
	case 3:
		return (cur + k) & mask;
	case 4:
		return cur + k;
		/* unmasked */;
	case 5:
		return (other - 1) & mask;
		/* full */;
	case 6:
		return other;
		/* empty */;
	case 7:
		return cur + mask + rnd(g, 4);
		/* lapped */;
	case 8:
		return rnd(g, mask + 1);
	default:
		return (uint32_t)rnd64(g);
	}
}

static void set_index(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static uint32_t get_index(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* librxe's send doorbell, counted. */
static int doorbell(struct ibv_qp *qp)
{
	doorbells++;
	if (rxe_doorbell(qp)) {
		doorbell_errs++;
		return -1;
	}
	return 0;
}

/* ---- the second thread -------------------------------------------- */

static void rewrite_one(struct rng *g, struct epoch *e)
{
	struct ring *r = &e->rings[rnd(g, e->nrings)];
	uint32_t prod = get_index(&r->buf->producer_index);
	uint32_t cons = get_index(&r->buf->consumer_index);
	uint32_t idx;

	switch (rnd(g, 12)) {
	case 0:		/* indices */
		if (r->kind == CQ)
			set_index(&r->buf->consumer_index, rnd(g, 2) ? prod :
				  pick_index(g, cons, prod, r->mask, 1));
		else
			set_index(&r->buf->producer_index,
				  pick_index(g, prod, cons, r->mask, 1));
		return;
	case 1:
		/* the header librxe trusts; the kernel must not */
		if (!rnd(g, 8)) {
			r->buf->log2_elem_size = (uint32_t)rnd64(g);
			r->buf->index_mask = (uint32_t)rnd64(g);
		}
		return;
	default:
		break;
	}
	/* mostly the slots the kernel is about to fetch */
	idx = rnd(g, 4) ? cons + rnd(g, 4) : rnd(g, r->mask + 1);
	switch (r->kind) {
	case SQ:
		fuzz_send_wqe(g, e, r, idx, rnd64(g));
		break;
	case RQ:
	case SRQ:
		fuzz_recv_wqe(g, e, r, idx, rnd64(g));
		break;
	case CQ:
		fill_random(g, slot_at(r, idx), (size_t)1 << r->log2);
		break;
	}
	rewrites++;
}

/*
 * The chase: keep the loose QP's RQ non-empty by moving its producer to
 * just behind what the kernel last consumed, and its CQ drained, so an
 * RQ flush bounded only by these indices never ends while we run.
 */
static void chase(struct epoch *e, long until)
{
	struct ring *rq = e->loose_rq, *cq = e->ccq_ring;
	uint32_t last = get_index(&rq->buf->consumer_index);

	chase_seen = 0;
	while (!atomic_load(&rw_stop) && now_ms() < until) {
		uint32_t c = get_index(&rq->buf->consumer_index);

		chase_seen += (c - last) & rq->mask;
		last = c;
		set_index(&rq->buf->producer_index, (c - 1) & rq->mask);
		set_index(&cq->buf->consumer_index,
			  get_index(&cq->buf->producer_index));
	}
}

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *rewriter(void *arg)
{
	struct epoch *e = rw_ep;
	struct rng g;

	rng_seed(&g, rw_seed);
	/* beside the main thread (CPU 0), never behind it */
	pin_cpu(1);
	if (atomic_load(&chase_on)) {
		chase(e, now_ms() + chase_ms);
		return NULL;
	}
	while (!atomic_load(&rw_stop)) {
		rewrite_one(&g, e);
		if (!rnd(&g, 64))
			sched_yield();
	}
	return NULL;
}

static int rw_start(pthread_t *t, struct epoch *e, uint64_t s, int chasing)
{
	rw_ep = e;
	rw_seed = s;
	atomic_store(&rw_stop, 0);
	atomic_store(&chase_on, chasing);
	return pthread_create(t, NULL, rewriter, NULL);
}

static void rw_join(pthread_t t)
{
	atomic_store(&rw_stop, 1);
	pthread_join(t, NULL);
}

/* ---- objects ------------------------------------------------------ */

struct connect_arg {
	struct rdma_cm_id *id;
	int err;
};

static void *do_connect(void *p)
{
	struct connect_arg *a = p;
	struct rdma_conn_param cp = { .initiator_depth = 1,
				      .responder_resources = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };

	a->err = rdma_connect(a->id, &cp);
	if (a->err)
		a->err = errno;
	return NULL;
}

static void qp_attr_init(struct ibv_qp_init_attr *a, struct epoch *e,
			 enum ibv_qp_type type, struct ibv_cq *rcq,
			 struct ibv_srq *srq)
{
	memset(a, 0, sizeof(*a));
	a->qp_type = type;
	a->send_cq = e->scq;
	a->recv_cq = rcq;
	a->srq = srq;
	a->cap.max_send_wr = 64;
	a->cap.max_recv_wr = srq ? 0 : 64;
	a->cap.max_send_sge = 4;
	a->cap.max_recv_sge = srq ? 0 : 4;
	a->cap.max_inline_data = 64;
}

/* RoCE: RESET -> INIT -> RTR -> RTS towards @dqpn on our own GID. */
static int qp_to_rts(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = {};
	int ud = qp->qp_type == IBV_QPT_UD;

	a.qp_state = IBV_QPS_RESET;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qkey = 0x11111111;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS)))
		return -1;
	if (iwarp) {
		/* an RNIC QP the user may move to RTS, with no connection */
		a.qp_state = IBV_QPS_RTS;
		return ibv_modify_qp(qp, &a, IBV_QP_STATE) ? -1 : 0;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ud) {
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
			return -1;
	} else {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = dqpn;
		a.rq_psn = 0;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = gid;
		a.ah_attr.grh.sgid_index = gid_index;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.port_num = 1;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
			return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 4;
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (ud ? 0 : IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)) ?
	       -1 : 0;
}

#define CHECK(cond, what) do {						\
	if (!(cond)) {							\
		printf("setup: %s failed: %s\n", what, strerror(errno)); \
		return -1;						\
	}								\
} while (0)

static int make_cq(struct epoch *e, struct ibv_cq **cq, int n,
		   struct ring **ring)
{
	static const enum ring_kind k[] = { CQ };

	maps_snapshot();
	*cq = ibv_create_cq(e->ctx, n, NULL, NULL, 0);
	CHECK(*cq, "create_cq");
	return take_rings(e, "create_cq", 1, k, NULL, 0, 0, ring);
}

static int setup_pair(struct epoch *e)
{
	static const enum ring_kind sq_rq[] = { SQ, RQ }, sq[] = { SQ };
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr qa;
	struct connect_arg ca = {};
	pthread_t t;

	CHECK(!rdma_getaddrinfo(addr, port, &hints, &res), "rdma_getaddrinfo");
	CHECK(!rdma_create_ep(&e->cli, res, NULL, NULL), "rdma_create_ep");
	rdma_freeaddrinfo(res);
	CHECK(e->cli->verbs == e->ctx, "client on the listener's device");
	qp_attr_init(&qa, e, IBV_QPT_RC, e->rcq, NULL);
	maps_snapshot();
	CHECK(!rdma_create_qp(e->cli, e->pd, &qa), "client create_qp");
	if (take_rings(e, "client QP", 2, sq_rq, e->cli->qp, 4, 4, NULL))
		return -1;
	ca.id = e->cli;
	CHECK(!pthread_create(&t, NULL, do_connect, &ca), "pthread_create");
	if (rdma_get_request(listen_id, &e->srv)) {
		printf("setup: rdma_get_request: %s\n", strerror(errno));
		pthread_join(t, NULL);
		return -1;
	}
	qp_attr_init(&qa, e, IBV_QPT_RC, e->rcq, e->srq);
	maps_snapshot();
	if (rdma_create_qp(e->srv, e->pd, &qa) ||
	    take_rings(e, "server QP", 1, sq, e->srv->qp, 4, 0, NULL)) {
		printf("setup: server QP: %s\n", strerror(errno));
		rdma_reject(e->srv, NULL, 0);
		pthread_join(t, NULL);
		return -1;
	}
	{
		struct rdma_conn_param cp = { .initiator_depth = 1,
					      .responder_resources = 1,
					      .rnr_retry_count = 7 };

		if (rdma_accept(e->srv, &cp))
			printf("setup: rdma_accept: %s\n", strerror(errno));
	}
	pthread_join(t, NULL);
	if (ca.err) {
		printf("setup: rdma_connect: %s\n", strerror(ca.err));
		return -1;
	}
	return 0;
}

static int setup(struct epoch *e)
{
	static const enum ring_kind sq_rq[] = { SQ, RQ }, srq[] = { SRQ };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 4 } };
	struct ibv_qp_init_attr qa;
	struct ring *first;

	memset(e, 0, sizeof(*e));
	e->ctx = listen_id->verbs;
	e->buf = aligned_alloc(4096, BUF_SIZE);
	e->buf2 = aligned_alloc(4096, 4096);
	CHECK(e->buf && e->buf2, "malloc");
	memset(e->buf, 0x5a, BUF_SIZE);
	e->pd = ibv_alloc_pd(e->ctx);
	e->pd2 = ibv_alloc_pd(e->ctx);
	CHECK(e->pd && e->pd2, "alloc_pd");
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	e->mr2 = ibv_reg_mr(e->pd2, e->buf2, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(e->mr && e->mr2, "reg_mr");
	e->mw = ibv_alloc_mw(e->pd, IBV_MW_TYPE_2);	/* optional */
	if (make_cq(e, &e->scq, 256, NULL) || make_cq(e, &e->rcq, 256, NULL) ||
	    make_cq(e, &e->ccq, 256, &e->ccq_ring))
		return -1;
	maps_snapshot();
	e->srq = ibv_create_srq(e->pd, &sa);
	CHECK(e->srq, "create_srq");
	if (take_rings(e, "create_srq", 1, srq, NULL, 0, 4, NULL))
		return -1;
	if (setup_pair(e))
		return -1;

	qp_attr_init(&qa, e, IBV_QPT_RC, e->ccq, NULL);
	maps_snapshot();
	e->loose = ibv_create_qp(e->pd, &qa);
	CHECK(e->loose, "create_qp (loose)");
	if (take_rings(e, "loose QP", 2, sq_rq, e->loose, 4, 4, &first))
		return -1;
	e->loose_rq = first + 1;
	CHECK(!qp_to_rts(e->loose, e->loose->qp_num), "loose QP to RTS");

	if (iwarp)
		return 0;
	qp_attr_init(&qa, e, IBV_QPT_UD, e->rcq, NULL);
	maps_snapshot();
	e->ud = ibv_create_qp(e->pd, &qa);
	CHECK(e->ud, "create_qp (UD)");
	if (take_rings(e, "UD QP", 2, sq_rq, e->ud, 4, 4, NULL))
		return -1;
	CHECK(!qp_to_rts(e->ud, 0), "UD QP to RTS");
	{
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };

		aa.grh.dgid = gid;
		aa.grh.sgid_index = gid_index;
		aa.grh.hop_limit = 1;
		e->ah = ibv_create_ah(e->pd, &aa);
		CHECK(e->ah, "create_ah");
	}
	return 0;
}

/* Destroy in an order ib_core accepts; every destroy must succeed. */
static int teardown(struct epoch *e, uint64_t ep)
{
	int bad = 0;
	long t0 = now_ms();

#define DESTROY(obj, fn) do {						\
	if (obj && fn(obj)) {						\
		printf("teardown: %s failed: %s\n", #fn, strerror(errno)); \
		bad = 1;						\
	}								\
} while (0)
	if (e->srv) {
		if (e->srv->qp)
			rdma_destroy_qp(e->srv);
		DESTROY(e->srv, rdma_destroy_id);
	}
	if (e->cli) {
		if (e->cli->qp)
			rdma_destroy_qp(e->cli);
		DESTROY(e->cli, rdma_destroy_id);
	}
	DESTROY(e->ud, ibv_destroy_qp);
	DESTROY(e->loose, ibv_destroy_qp);
	DESTROY(e->ah, ibv_destroy_ah);
	DESTROY(e->srq, ibv_destroy_srq);
	DESTROY(e->scq, ibv_destroy_cq);
	DESTROY(e->rcq, ibv_destroy_cq);
	DESTROY(e->ccq, ibv_destroy_cq);
	DESTROY(e->mw, ibv_dealloc_mw);
	DESTROY(e->mr, ibv_dereg_mr);
	DESTROY(e->mr2, ibv_dereg_mr);
	DESTROY(e->pd, ibv_dealloc_pd);
	DESTROY(e->pd2, ibv_dealloc_pd);
	free(e->buf);
	free(e->buf2);
	timed(t0, "teardown", ep);
	return bad ? -1 : 0;
}

/* ---- the storm ---------------------------------------------------- */

static struct ibv_qp *pick_qp(struct rng *g, struct epoch *e)
{
	switch (rnd(g, e->ud ? 4 : 3)) {
	case 0:
		return e->cli->qp;
	case 1:
		return e->srv->qp;
	case 2:
		return e->loose;
	default:
		return e->ud;
	}
}

/* One burst: K WQEs into one ring, an index, a doorbell. */
static void burst(struct rng *g, struct epoch *e, uint64_t ep)
{
	struct ring *r = &e->rings[rnd(g, e->nrings)];
	uint32_t prod = get_index(&r->buf->producer_index);
	uint32_t cons = get_index(&r->buf->consumer_index);
	uint32_t k = 1 + rnd(g, r->mask < 32 ? r->mask : 32), i;
	struct ibv_qp *qp;
	long t0;

	if (r->kind == CQ) {
		/* the user consumes completions: drained, or anything */
		set_index(&r->buf->consumer_index, rnd(g, 2) ? prod :
			  pick_index(g, cons, prod, r->mask, k));
		return;
	}
	for (i = 0; i < k; i++) {
		if (r->kind == SQ)
			fuzz_send_wqe(g, e, r, prod + i, wqes_written);
		else
			fuzz_recv_wqe(g, e, r, prod + i, wqes_written);
		wqes_written++;
	}
	set_index(&r->buf->producer_index, pick_index(g, prod, cons, r->mask, k));
	/* receives are taken when a send arrives: ring some SQ */
	qp = r->kind == SQ && rnd(g, 4) ? r->qp : pick_qp(g, e);
	t0 = now_ms();
	doorbell(qp);
	timed(t0, "doorbell", ep);
}

/* Now and then a state change while the rings are garbage. */
static void state_change(struct rng *g, struct epoch *e, uint64_t ep)
{
	struct ibv_qp *qp = pick_qp(g, e);
	struct ibv_qp_attr a = {};
	long t0 = now_ms();

	modifies++;
	switch (rnd(g, 3)) {
	case 0:
		a.qp_state = IBV_QPS_ERR;
		ibv_modify_qp(qp, &a, IBV_QP_STATE);
		timed(t0, "modify_qp(ERR)", ep);
		break;
	case 1:
		if (qp == e->loose || qp == e->ud) {
			qp_to_rts(qp, qp == e->loose ? qp->qp_num : 0);
			timed(t0, "modify_qp(RESET..RTS)", ep);
		}
		break;
	default:
		ibv_req_notify_cq(rnd(g, 2) ? e->scq : e->rcq, rnd(g, 2));
		timed(t0, "req_notify_cq", ep);
		break;
	}
}

static int run_epoch(uint64_t ep, uint64_t quota)
{
	struct rng g;
	struct epoch e;
	pthread_t t;
	uint64_t end = wqes_written + quota;
	int err = 0;

	rng_seed(&g, seed ^ (ep * 0x100000001b3ULL));
	if (setup(&e)) {
		teardown(&e, ep);
		return -1;
	}
	/* every fourth epoch starts with the chase on the loose QP's RQ */
	if (!(ep % 4)) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
		long t0;

		if (rw_start(&t, &e, 0, 1)) {
			teardown(&e, ep);
			return -1;
		}
		usleep(20000);
		t0 = now_ms();
		ibv_modify_qp(e.loose, &a, IBV_QP_STATE);
		timed(t0, "modify_qp(ERR) during the RQ chase", ep);
		rw_join(t);
		if (chase_seen > chase_best)
			chase_best = chase_seen;
	}
	if (rw_start(&t, &e, rnd64(&g), 0)) {
		teardown(&e, ep);
		return -1;
	}
	while (wqes_written < end) {
		if (!rnd(&g, 64)) {
			/* librxe reads the header in modify_qp: restore it */
			rw_join(t);
			for (int i = 0; i < e.nrings; i++) {
				e.rings[i].buf->index_mask = e.rings[i].mask;
				e.rings[i].buf->log2_elem_size = e.rings[i].log2;
			}
			state_change(&g, &e, ep);
			if (rw_start(&t, &e, rnd64(&g), 0)) {
				err = -1;
				break;
			}
		}
		burst(&g, &e, ep);
	}
	if (!err)
		rw_join(t);
	if (teardown(&e, ep))
		err = -1;
	return err;
}

static int listen_setup(void)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP,
				       .ai_flags = RAI_PASSIVE }, *res;
	struct ibv_port_attr pa;

	CHECK(!rdma_getaddrinfo(addr, port, &hints, &res), "rdma_getaddrinfo");
	CHECK(!rdma_create_ep(&listen_id, res, NULL, NULL), "rdma_create_ep");
	rdma_freeaddrinfo(res);
	CHECK(!rdma_listen(listen_id, 4), "rdma_listen");
	CHECK(listen_id->verbs, "listener bound to a device");
	if (strcmp(ibv_get_device_name(listen_id->verbs->device), dev_name)) {
		printf("setup: %s belongs to %s, not %s\n", addr,
		       ibv_get_device_name(listen_id->verbs->device), dev_name);
		return -1;
	}
	iwarp = listen_id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
	CHECK(!ibv_query_port(listen_id->verbs, 1, &pa), "query_port");
	if (!iwarp) {
		if (gid_index < 0) {
			printf("setup: RoCE needs -g GIDIDX\n");
			return -1;
		}
		CHECK(!ibv_query_gid(listen_id->verbs, 1, gid_index, &gid),
		      "query_gid");
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t ep = 0;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:a:g:n:s:p:e:T:C:")) != -1) {
		switch (c) {
		case 'd':
			dev_name = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'n':
			total_wqes = strtoull(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			port = optarg;
			break;
		case 'e':
			epoch_wqes = strtoull(optarg, NULL, 0);
			break;
		case 'T':
			slow_ms = atol(optarg);
			break;
		case 'C':
			chase_ms = atol(optarg);
			break;
		default:
			return 2;
		}
	}
	if (!dev_name || !addr || !epoch_wqes) {
		fprintf(stderr, "usage: %s -d DEV -a ADDR [-g GIDIDX] [-n WQES] [-s SEED] [-p PORT] [-e PER_EPOCH] [-T SLOW_MS] [-C CHASE_MS]\n",
			argv[0]);
		return 2;
	}
	printf("hostile_rings: %s (%s), seed %" PRIu64 ", %" PRIu64
	       " WQEs, %" PRIu64 " per epoch\n", dev_name, addr, seed,
	       total_wqes, epoch_wqes);
	if (listen_setup())
		return 1;
	printf("transport %s\n", iwarp ? "iWARP" : "RoCE");
	pin_cpu(0);
	while (wqes_written < total_wqes) {
		uint64_t quota = total_wqes - wqes_written;

		if (quota > epoch_wqes)
			quota = epoch_wqes;
		if (run_epoch(ep, quota)) {
			printf("epoch %" PRIu64 " failed (seed %" PRIu64 ")\n",
			       ep, seed);
			failed = 1;
			break;
		}
		ep++;
	}
	rdma_destroy_ep(listen_id);
	printf("%" PRIu64 " malformed WQEs written by the main thread, %" PRIu64
	       " slot rewrites by the second, %" PRIu64 " doorbells (%" PRIu64
	       " refused), %" PRIu64 " state changes, %" PRIu64 " epochs\n",
	       wqes_written, rewrites, doorbells, doorbell_errs, modifies, ep);
	printf("longest call: %ld ms, %s\n", worst_ms, worst_call);
	printf("RQ chase: at most %" PRIu64 " receives flushed in one modify_qp(ERR) (the RQ has 128 slots)\n",
	       chase_best);
	if (slow_calls)
		printf("FAIL: %d call(s) stayed in the kernel over %ld ms: it loops on user-written ring indices without a budget\n",
		       slow_calls, slow_ms);
	if (wqes_written < total_wqes)
		printf("FAIL: only %" PRIu64 " of %" PRIu64 " WQEs written\n",
		       wqes_written, total_wqes);
	return failed || slow_calls || wqes_written < total_wqes;
}
