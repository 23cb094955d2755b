// SPDX-License-Identifier: GPL-2.0
/*
 * UD multicast over one RoCE device: two receiving QPs attached to a
 * group get every message a third QP sends to the group's GID, byte for
 * byte and from the right source QP; a detached QP gets nothing more;
 * the netdev joins the IP group with the first attach and leaves it with
 * the last detach. IPv4 (a v4-mapped GID) and IPv6. Bad attach/detach
 * arguments fail with EINVAL.
 *
 * Environment: SRDMA_DEV (default sroce0), SRDMA_NETDEV (eth0), SRDMA_GID
 * and SRDMA_GID6 (GID indexes of the device's IPv4 and IPv6 addresses).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "verbs_util.h"

#define MSG_LEN		256
#define GRH_LEN		40
#define SLOT		(GRH_LEN + MSG_LEN)
#define NMSG		8
#define QKEY		0x11111111
#define MCAST_QPN	0xffffff

enum { TX, RX1, RX2, NQP };

FIXTURE(mc) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[NQP];
	struct ibv_qp *qp[NQP];
	uint8_t *buf;		/* NQP x NMSG slots */
	struct ibv_mr *mr;
};

static const char *env(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static int ud_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* Is @addr among the netdev's multicast addresses (ip maddr)? */
static int netdev_in_group(const char *addr)
{
	char cmd[128], line[256];
	int found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ip maddr show dev %s",
		 env("SRDMA_NETDEV", "eth0"));
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *w = strstr(line, addr);

		if (w && (w[strlen(addr)] == ' ' || w[strlen(addr)] == '\n'))
			found = 1;
	}
	pclose(p);
	return found;
}

static int post_recv(FIXTURE_DATA(mc) *self, int q, int slot)
{
	uint8_t *b = self->buf + (q * NMSG + slot) * SLOT;
	struct ibv_sge sge = {
		.addr = (uintptr_t)b, .length = SLOT, .lkey = self->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	memset(b, 0, SLOT);
	return ibv_post_recv(self->qp[q], &wr, &bad);
}

static void fill(uint8_t *p, int msg)
{
	int i;

	for (i = 0; i < MSG_LEN; i++)
		p[i] = (uint8_t)(msg * 31 + i * 7 + 1);
}

/* One completion on @q's CQ within @ms, or 0 when none came. */
static int poll_one(FIXTURE_DATA(mc) *self, int q, struct ibv_wc *wc, int ms)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n = ibv_poll_cq(self->cq[q], 1, wc);
		if (n)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return 0;
}

static int send_msg(FIXTURE_DATA(mc) *self, struct ibv_ah *ah, int msg)
{
	uint8_t *b = self->buf + (TX * NMSG + (msg % NMSG)) * SLOT;
	struct ibv_sge sge = {
		.addr = (uintptr_t)b, .length = MSG_LEN,
		.lkey = self->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = msg, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = MCAST_QPN,
			   .remote_qkey = QKEY },
	}, *bad;
	struct ibv_wc wc;

	fill(b, msg);
	if (ibv_post_send(self->qp[TX], &wr, &bad))
		return -1;
	if (poll_one(self, TX, &wc, 5000) != 1 || wc.status != IBV_WC_SUCCESS)
		return -1;
	return 0;
}

FIXTURE_SETUP(mc)
{
	int i;

	self->ctx = open_dev(env("SRDMA_DEV", "sroce0"));
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->buf = calloc(NQP * NMSG, SLOT);
	ASSERT_NE(NULL, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, NQP * NMSG * SLOT,
			      IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->mr);
	for (i = 0; i < NQP; i++) {
		struct ibv_qp_init_attr init = {
			.qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = NMSG, .max_recv_wr = NMSG,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		self->cq[i] = ibv_create_cq(self->ctx, 2 * NMSG, NULL, NULL, 0);
		ASSERT_NE(NULL, self->cq[i]);
		init.send_cq = self->cq[i];
		init.recv_cq = self->cq[i];
		self->qp[i] = ibv_create_qp(self->pd, &init);
		ASSERT_NE(NULL, self->qp[i]);
		ASSERT_EQ(0, ud_to_rts(self->qp[i]));
	}
}

FIXTURE_TEARDOWN(mc)
{
	int i;

	for (i = 0; i < NQP; i++) {
		if (self->qp[i])
			ibv_destroy_qp(self->qp[i]);
		if (self->cq[i])
			ibv_destroy_cq(self->cq[i]);
	}
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	free(self->buf);
}

/* RX1 and RX2 get all of TX's messages to @group; then RX1 leaves. */
static void group_traffic(struct __test_metadata *_metadata,
			  FIXTURE_DATA(mc) *self, const char *group,
			  const char *gid_env)
{
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1 };
	union ibv_gid mgid;
	struct in6_addr a6;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	uint8_t want[MSG_LEN];
	int m, q;

	if (strchr(group, ':')) {
		ASSERT_EQ(1, inet_pton(AF_INET6, group, &a6));
	} else {
		memset(&a6, 0, sizeof(a6));
		a6.s6_addr[10] = a6.s6_addr[11] = 0xff;
		ASSERT_EQ(1, inet_pton(AF_INET, group, &a6.s6_addr[12]));
	}
	memcpy(mgid.raw, &a6, sizeof(mgid.raw));
	ah_attr.grh.dgid = mgid;
	ah_attr.grh.sgid_index = atoi(env(gid_env, "1"));
	ah_attr.grh.hop_limit = 1;
	ah = ibv_create_ah(self->pd, &ah_attr);
	ASSERT_NE(NULL, ah);

	ASSERT_EQ(0, netdev_in_group(group));
	for (q = RX1; q <= RX2; q++) {
		ASSERT_EQ(0, ibv_attach_mcast(self->qp[q], &mgid, 0));
		for (m = 0; m < NMSG; m++)
			ASSERT_EQ(0, post_recv(self, q, m));
	}
	/* a second attach of the same QP changes nothing */
	ASSERT_EQ(0, ibv_attach_mcast(self->qp[RX1], &mgid, 0));
	ASSERT_EQ(1, netdev_in_group(group));

	for (m = 0; m < NMSG; m++)
		ASSERT_EQ(0, send_msg(self, ah, m));
	for (q = RX1; q <= RX2; q++) {
		for (m = 0; m < NMSG; m++) {
			uint8_t *b;

			ASSERT_EQ(1, poll_one(self, q, &wc, 5000));
			ASSERT_EQ((int)IBV_WC_SUCCESS, (int)wc.status);
			ASSERT_EQ((uint32_t)(GRH_LEN + MSG_LEN), wc.byte_len);
			ASSERT_EQ(self->qp[TX]->qp_num, wc.src_qp);
			ASSERT_EQ((uint64_t)m, wc.wr_id);	/* in order, once each */
			b = self->buf + (q * NMSG + m) * SLOT;
			fill(want, m);
			ASSERT_EQ(0, memcmp(b + GRH_LEN, want, MSG_LEN));
		}
		ASSERT_EQ(0, poll_one(self, q, &wc, 100));
	}

	/* RX1 leaves: only RX2 hears the next message */
	ASSERT_EQ(0, ibv_detach_mcast(self->qp[RX1], &mgid, 0));
	ASSERT_EQ(1, netdev_in_group(group));
	ASSERT_EQ(0, post_recv(self, RX1, 0));
	ASSERT_EQ(0, post_recv(self, RX2, 0));
	ASSERT_EQ(0, send_msg(self, ah, NMSG));
	ASSERT_EQ(1, poll_one(self, RX2, &wc, 5000));
	ASSERT_EQ((int)IBV_WC_SUCCESS, (int)wc.status);
	ASSERT_EQ(0, poll_one(self, RX1, &wc, 500));

	/* the last one leaves: so does the netdev */
	ASSERT_EQ(0, ibv_detach_mcast(self->qp[RX2], &mgid, 0));
	ASSERT_EQ(0, netdev_in_group(group));
	ASSERT_EQ(EINVAL, ibv_detach_mcast(self->qp[RX2], &mgid, 0));
	ibv_destroy_ah(ah);
}

TEST_F(mc, ipv4_group)
{
	group_traffic(_metadata, self, "239.1.2.4", "SRDMA_GID");
}

TEST_F(mc, ipv6_group)
{
	group_traffic(_metadata, self, "ff0e::db8:6", "SRDMA_GID6");
}

TEST_F(mc, bad_arguments)
{
	struct ibv_qp_init_attr init = {
		.send_cq = self->cq[TX], .recv_cq = self->cq[TX],
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	union ibv_gid unicast = {}, group = {};
	struct ibv_qp *rc;

	/* ::ffff:192.0.2.1 is no group; ff0e::db8:7 is */
	unicast.raw[10] = unicast.raw[11] = 0xff;
	unicast.raw[12] = 192;
	unicast.raw[14] = 2;
	unicast.raw[15] = 1;
	group.raw[0] = 0xff;
	group.raw[1] = 0x0e;
	group.raw[15] = 7;
	EXPECT_EQ(EINVAL, ibv_attach_mcast(self->qp[RX1], &unicast, 0));
	EXPECT_EQ(EINVAL, ibv_detach_mcast(self->qp[RX1], &group, 0));
	rc = ibv_create_qp(self->pd, &init);
	ASSERT_NE(NULL, rc);
	EXPECT_EQ(EINVAL, ibv_attach_mcast(rc, &group, 0));
	ibv_destroy_qp(rc);
}

TEST_HARNESS_MAIN
