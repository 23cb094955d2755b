// SPDX-License-Identifier: GPL-2.0
/*
 * A QP reset while its own process keeps posting to it.
 *
 * RESET empties the send ring (its counters go back to 0) while the
 * transport may be walking it on another CPU. A requester that went on
 * from its old position would follow it round the whole counter space
 * (2^32 slots with bottom halves off: a soft lockup) and send stale
 * WQEs. UC is the sharp case: its WQEs are done as soon as they are
 * sent, so the walk has nothing to stop at. One thread posts sends on a
 * one-slot UC ring, the other cycles the QP RESET -> INIT -> RTR -> RTS;
 * afterwards the QP must still send. The harness's kernel log scan
 * catches a lockup or a stall.
 *
 * Environment: SRDMA_DEV (default sroce0) and SRDMA_GID (GID index of a
 * RoCE v2 address of that device, default 1).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "verbs_util.h"

#define RACE_MS		8000
#define WAIT_MS		5000

FIXTURE(race) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;	/* UC, one send slot: the ring we reset */
	struct ibv_qp *sink;	/* UC in INIT: drops what it is sent */
	union ibv_gid gid;
	int gid_index;
	volatile int stop;
	long posted;
};

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static struct ibv_qp *uc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.qp_type = IBV_QPT_UC,
		.sq_sig_all = 1,
	};

	return ibv_create_qp(pd, &init);
}

static int uc_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* RESET -> INIT -> RTR -> RTS towards the sink; 0 or an errno. */
static int uc_cycle(FIXTURE_DATA(race) *self)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	err = ibv_modify_qp(self->qp, &a, IBV_QP_STATE);
	if (!err)
		err = uc_init(self->qp);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = self->sink->qp_num;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = self->gid;
	a.ah_attr.grh.sgid_index = self->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	err = ibv_modify_qp(self->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(self->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int post_one(struct ibv_qp *qp)
{
	static const char msg[8] = "reset!?";
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = sizeof(msg) };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE |
						IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* Post as fast as the ring lets us; every refusal is expected here. */
static void *poster(void *arg)
{
	FIXTURE_DATA(race) *self = arg;
	struct ibv_wc wc[16];

	while (!self->stop) {
		if (!post_one(self->qp))
			self->posted++;
		while (ibv_poll_cq(self->cq, 16, wc) > 0)
			;
	}
	return NULL;
}

FIXTURE_SETUP(race)
{
	const char *dev = getenv("SRDMA_DEV") ?: "sroce0";

	self->gid_index = atoi(getenv("SRDMA_GID") ?: "1");
	self->ctx = open_dev(dev);
	ASSERT_NE(NULL, self->ctx) TH_LOG("cannot open %s", dev);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, self->gid_index,
				   &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->sink = uc_qp(self->pd, self->cq);
	ASSERT_NE(NULL, self->sink);
	ASSERT_EQ(0, uc_init(self->sink));
	self->qp = uc_qp(self->pd, self->cq);
	ASSERT_NE(NULL, self->qp);
	ASSERT_EQ(0, uc_cycle(self));
}

FIXTURE_TEARDOWN(race)
{
	if (self->qp)
		ibv_destroy_qp(self->qp);
	if (self->sink)
		ibv_destroy_qp(self->sink);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
}

TEST_F(race, reset_while_posting)
{
	long t0 = now_ms(), cycles = 0;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;
	pthread_t th;
	int n = 0;

	ASSERT_EQ(0, pthread_create(&th, NULL, poster, self));
	while (now_ms() - t0 < RACE_MS) {
		if (uc_cycle(self))
			break;
		cycles++;
	}
	self->stop = 1;
	pthread_join(th, NULL);
	TH_LOG("%ld resets, %ld sends posted in %ld ms", cycles, self->posted,
	       now_ms() - t0);
	ASSERT_LT(now_ms() - t0, RACE_MS + WAIT_MS);
	ASSERT_GT(cycles, 10);

	/* still a working QP: in RTS, and a send completes */
	ASSERT_EQ(0, uc_cycle(self));
	while (ibv_poll_cq(self->cq, 1, &wc) > 0)
		;
	ASSERT_EQ(0, ibv_query_qp(self->qp, &attr, IBV_QP_STATE, &init));
	ASSERT_EQ((int)IBV_QPS_RTS, (int)attr.qp_state);
	ASSERT_EQ(0, post_one(self->qp));
	for (t0 = now_ms(); !n && now_ms() - t0 < WAIT_MS;)
		n = ibv_poll_cq(self->cq, 1, &wc);
	ASSERT_EQ(1, n) TH_LOG("the send after the resets never completed");
	ASSERT_EQ((int)IBV_WC_SUCCESS, (int)wc.status);
}

TEST_HARNESS_MAIN
