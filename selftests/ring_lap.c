// SPDX-License-Identifier: GPL-2.0
/*
 * A send queue's producer index moved past the WQEs still in flight.
 *
 * librxe keeps the SQ ring (struct rxe_queue_buf, mmapped from the uverbs
 * fd) and rings the doorbell with a POST_SEND command of zero WRs. A
 * process can write that ring itself: here it claims more new WQEs than
 * there are free slots, so taking them would overwrite the kernel's copies
 * of WQEs the transport is still sending. The kernel must refuse: the QP
 * goes to the error state (QP_FATAL) and the WQEs in flight are flushed,
 * in order. A ring filled to the last free slot is not lapped.
 *
 * The requester's peer is a QP left in INIT, which drops everything, so
 * that the WQEs stay in flight (the retransmit timeout is seconds).
 *
 * Environment: SRDMA_DEV (default sroce0) and SRDMA_GID (GID index of a
 * RoCE v2 address of that device, default 1).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "kselftest_harness.h"
#include "verbs_util.h"

#define SQ_WR		15	/* a 16-slot ring, one slot kept empty */
#define SQ_SLOTS	16
#define RQ_WR		1
#define WAIT_MS		5000

FIXTURE(lap) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *req;	/* requester: its SQ ring is the one we lap */
	struct ibv_qp *sink;	/* stays in INIT: drops what it is sent */
	struct rxe_queue_buf *sq;
};

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Start addresses of the uverbs mappings, at most @max of them. */
static int uverbs_maps(unsigned long *start, int max)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f))
		if (strstr(line, "/dev/infiniband/uverbs") &&
		    sscanf(line, "%lx-", &start[n]) == 1)
			n++;
	fclose(f);
	return n;
}

/*
 * The SQ ring of a QP created between two uverbs_maps() calls: the new
 * mapping whose header says SQ_SLOTS slots (its RQ has two).
 */
static struct rxe_queue_buf *find_sq(const unsigned long *before, int nb,
				     const unsigned long *after, int na)
{
	int i, j;

	for (i = 0; i < na; i++) {
		struct rxe_queue_buf *q = (void *)after[i];

		for (j = 0; j < nb && before[j] != after[i]; j++)
			;
		if (j == nb && q->index_mask == SQ_SLOTS - 1)
			return q;
	}
	return NULL;
}

static struct rxe_send_wqe *sq_slot(struct rxe_queue_buf *q, uint32_t i)
{
	return (void *)(q->data + ((size_t)(i & q->index_mask) <<
				   q->log2_elem_size));
}

static uint32_t sq_prod(struct rxe_queue_buf *q)
{
	return __atomic_load_n(&q->producer_index, __ATOMIC_ACQUIRE);
}

static void sq_set_prod(struct rxe_queue_buf *q, uint32_t prod)
{
	__atomic_store_n(&q->producer_index, prod & q->index_mask,
			 __ATOMIC_RELEASE);
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SQ_WR, .max_recv_wr = RQ_WR,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};

	return ibv_create_qp(pd, &init);
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* INIT -> RTR -> RTS towards @dqpn, with a retransmit timeout of ~4 s. */
static int to_rts(struct ibv_qp *qp, uint32_t dqpn, int gid_index,
		  union ibv_gid *gid)
{
	return qp_rtr_rts(qp, dqpn, gid_index, gid, 1, 20);
}

/* The QP's state, or -1 if it cannot be queried. */
static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

/* Post @n signaled 8-byte inline SENDs with wr_id first, first + 1, ... */
static int post_sends(struct ibv_qp *qp, int n, uint64_t first)
{
	static char msg[8] = "lapping";
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = sizeof(msg) };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
	}, *bad;
	int i, err;

	for (i = 0; i < n; i++) {
		wr.wr_id = first + i;
		err = ibv_post_send(qp, &wr, &bad);
		if (err)	/* librxe 44 says ENOMEM as -ENOMEM */
			return err < 0 ? err : -err;
	}
	return 0;
}

/* Up to @max completions, waiting at most @ms for each. */
static int reap(struct ibv_cq *cq, struct ibv_wc *wc, int max, long ms)
{
	long t0 = now_ms();
	int n = 0, r;

	while (n < max && now_ms() - t0 < ms) {
		r = ibv_poll_cq(cq, max - n, wc + n);
		if (r < 0)
			return r;
		if (r)
			t0 = now_ms();
		n += r;
	}
	return n;
}

/* Wait for @type on @qp among the async events; 0 when seen. */
static int wait_event(struct ibv_context *ctx, struct ibv_qp *qp,
		      enum ibv_event_type type)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	long t0 = now_ms();
	int found = 0;

	while (!found && now_ms() - t0 < WAIT_MS) {
		if (poll(&p, 1, WAIT_MS) != 1 || ibv_get_async_event(ctx, &ev))
			return -1;
		found = ev.event_type == type && ev.element.qp == qp;
		ibv_ack_async_event(&ev);
	}
	return found ? 0 : -1;
}

FIXTURE_SETUP(lap)
{
	const char *dev = getenv("SRDMA_DEV") ?: "sroce0";
	int gid_index = atoi(getenv("SRDMA_GID") ?: "1");
	unsigned long before[64], after[64];
	union ibv_gid gid;
	int nb, na;

	self->ctx = open_dev(dev);
	ASSERT_NE(NULL, self->ctx) TH_LOG("cannot open %s", dev);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, gid_index, &gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->sink = make_qp(self->pd, self->cq);
	ASSERT_NE(NULL, self->sink);

	nb = uverbs_maps(before, 64);
	self->req = make_qp(self->pd, self->cq);
	na = uverbs_maps(after, 64);
	ASSERT_NE(NULL, self->req);
	ASSERT_LE(0, nb);
	ASSERT_LT(nb, na) TH_LOG("no new uverbs mapping for the QP's rings");
	self->sq = find_sq(before, nb, after, na);
	ASSERT_NE(NULL, self->sq) TH_LOG("SQ ring not found in /proc/self/maps");
	ASSERT_EQ(0u, sq_prod(self->sq));

	ASSERT_EQ(0, to_init(self->sink));
	ASSERT_EQ(0, to_init(self->req));
	ASSERT_EQ(0, to_rts(self->req, self->sink->qp_num, gid_index, &gid));
}

FIXTURE_TEARDOWN(lap)
{
	if (self->req)
		ibv_destroy_qp(self->req);
	if (self->sink)
		ibv_destroy_qp(self->sink);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
}

/* Every free slot used, none more: the QP stays in RTS. */
TEST_F(lap, full_ring_is_not_lapped)
{
	struct ibv_wc wc[SQ_SLOTS];

	ASSERT_EQ(0, post_sends(self->req, SQ_WR, 1));
	/* librxe agrees the ring is full */
	ASSERT_EQ(-ENOMEM, post_sends(self->req, 1, 99));
	ASSERT_EQ((uint32_t)SQ_WR, sq_prod(self->sq));
	ASSERT_EQ(0, rxe_doorbell(self->req));
	EXPECT_EQ(0, reap(self->cq, wc, SQ_SLOTS, 200))
		TH_LOG("a WQE completed though the peer drops everything");
	EXPECT_EQ(IBV_QPS_RTS, qp_state(self->req));
}

/*
 * Ring the doorbell on a lapped ring: the QP must go to error, and the
 * @in_flight WQEs complete with a flush error, in order, nothing else.
 */
static void lap_and_check(struct __test_metadata *_metadata,
			  struct ibv_qp *qp, struct ibv_cq *cq, int in_flight,
			  const uint64_t *wr_ids)
{
	struct ibv_wc wc[2 * SQ_SLOTS];
	int i, n;

	ASSERT_EQ(0, rxe_doorbell(qp));
	ASSERT_EQ(0, wait_event(qp->context, qp, IBV_EVENT_QP_FATAL))
		TH_LOG("no QP_FATAL after the producer lapped the ring");
	EXPECT_EQ(IBV_QPS_ERR, qp_state(qp));
	n = reap(cq, wc, 2 * SQ_SLOTS, 500);
	ASSERT_EQ(in_flight, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(wr_ids[i], wc[i].wr_id);
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, (int)wc[i].status)
			TH_LOG("wr_id %llu: %s",
			       (unsigned long long)wc[i].wr_id,
			       ibv_wc_status_str(wc[i].status));
		EXPECT_EQ(qp->qp_num, wc[i].qp_num);
	}
}

/* 15 WQEs in flight, no slot free; the producer claims 4 more. */
TEST_F(lap, lapped_full_ring_errors_qp)
{
	uint64_t ids[SQ_WR];
	int i;

	for (i = 0; i < SQ_WR; i++)
		ids[i] = i + 1;
	ASSERT_EQ(0, post_sends(self->req, SQ_WR, 1));
	/* producer past the consumer: slots 0..2 are still in flight */
	sq_set_prod(self->sq, sq_prod(self->sq) + 4);
	lap_and_check(_metadata, self->req, self->cq, SQ_WR, ids);
}

/*
 * 10 in flight leave 5 slots: 5 WQEs written into the ring by hand are
 * taken (zero-length RDMA WRITEs, dropped by the peer like the rest);
 * one more than that laps.
 */
TEST_F(lap, lap_by_one_slot_errors_qp)
{
	uint64_t ids[SQ_WR];
	uint32_t prod;
	int i;

	ASSERT_EQ(0, post_sends(self->req, 10, 1));
	for (i = 0; i < 10; i++)
		ids[i] = i + 1;
	prod = sq_prod(self->sq);
	for (i = 0; i < 5; i++) {
		struct rxe_send_wqe *w = sq_slot(self->sq, prod + i);

		memset(w, 0, 1u << self->sq->log2_elem_size);
		w->wr.wr_id = 100 + i;
		w->wr.opcode = IBV_WR_RDMA_WRITE;
		w->wr.send_flags = IBV_SEND_SIGNALED;
		ids[10 + i] = 100 + i;
	}
	sq_set_prod(self->sq, prod + 5);
	ASSERT_EQ(0, rxe_doorbell(self->req));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(self->req));

	/* one more: the slot it claims is the oldest WQE in flight */
	sq_set_prod(self->sq, prod + 6);
	lap_and_check(_metadata, self->req, self->cq, SQ_WR, ids);
}

/* @n completions on @cq: wr_ids from @first on, flushed SENDs, in order. */
static void expect_flushed(struct __test_metadata *_metadata,
			   struct ibv_qp *qp, struct ibv_cq *cq, int n,
			   uint64_t first)
{
	struct ibv_wc wc[2 * SQ_SLOTS];
	int i, got;

	got = reap(cq, wc, 2 * SQ_SLOTS, 500);
	ASSERT_EQ(n, got);
	for (i = 0; i < got; i++) {
		EXPECT_EQ(first + i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, (int)wc[i].status);
		EXPECT_EQ(IBV_WC_SEND, (int)wc[i].opcode);
		EXPECT_EQ(qp->qp_num, wc[i].qp_num);
	}
}

/*
 * The QP moved to ERR with WQEs in flight: they flush, in order; WQEs
 * posted afterwards, a whole ring of them too, flush from their ring
 * slots, in order, each once.
 */
TEST_F(lap, posts_in_error_flush_in_order)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	ASSERT_EQ(0, post_sends(self->req, 5, 1));
	ASSERT_EQ(0, ibv_modify_qp(self->req, &a, IBV_QP_STATE));
	expect_flushed(_metadata, self->req, self->cq, 5, 1);
	ASSERT_EQ(0, post_sends(self->req, 7, 10));
	expect_flushed(_metadata, self->req, self->cq, 7, 10);
	ASSERT_EQ(0, post_sends(self->req, SQ_WR, 20));
	expect_flushed(_metadata, self->req, self->cq, SQ_WR, 20);
	EXPECT_EQ(IBV_QPS_ERR, qp_state(self->req));
}

TEST_HARNESS_MAIN
