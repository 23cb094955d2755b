// SPDX-License-Identifier: GPL-2.0
/*
 * iw_reset_connected: an iWARP QP moved to RESET while it is connected
 * lets go of its connection first. One process holds both ends, over
 * rdma_cm on one siwarp device: the active side posts a stream of RDMA
 * WRITEs to its peer (64 of 256 KiB, all at once) and, with most of them
 * still outstanding, moves its QP to RESET, from RTS or from SQD (a
 * graceful close under way). Then:
 *
 *   - the modify returns 0 within 5 s and the QP is in RESET;
 *   - the peer's WRITE into the reset side's MR and its READ of that MR,
 *     posted as soon as the modify returned, are not served: the MR is
 *     unchanged byte for byte, the READ's sink keeps its fill and the
 *     READ completes in error (an iWARP WRITE completes once TCP has its
 *     bytes, so its status proves nothing);
 *   - both ends hear DISCONNECTED within 10 s;
 *   - the reset QP goes to INIT again, and it and everything else are
 *     destroyed without error.
 *
 * Before the stream, the peer WRITEs into the MR and READs from it once,
 * and both work: what is refused after the reset is refused because of
 * it. Without the fix, the reset emptied the rings under a connection
 * that stayed attached: the peer's WRITE and READ were served on a RESET
 * QP, the peer never heard of a disconnect, and the transmit walk went
 * from its old index to the reset one, round the whole index space.
 * Every wait is bounded; the limits are multiplied by SRDMA_TIMEOUT_SCALE
 * (lib.sh). Exit 0 only if all of that held.
 *
 *   iw_reset_connected ADDR PORT rts|sqd
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "cm_util.h"
#include "fill_pattern.h"

#define STEP_MS		10000
#define RESET_MS	5000	/* the modify to RESET, at most */
#define STREAM_WRS	64
#define STREAM_LEN	(256 << 10)
#define SBUF_LEN	(4 * STREAM_LEN)	/* the peer's MR, the stream's target */
#define CBUF_LEN	(256 << 10)	/* the reset side's MR, the peer's target */
#define PROBE_LEN	4096
#define SINK_FILL	0xee
#define CQ_DEPTH	256

/* the peer's WRITEs and READs into the reset side's MR, at these offsets */
#define OK_WRITE_AT	0
#define OK_READ_AT	(64 << 10)
#define LATE_WRITE_AT	(128 << 10)
#define LATE_READ_AT	(192 << 10)

enum { WR_WRITE = 1, WR_READ };

struct side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

static int scale = 1;
static int failures;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A time limit of @ms, for this kernel (lib.sh's SRDMA_TIMEOUT_SCALE). */
static int limit_ms(int ms)
{
	return ms * scale;
}

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		failures++;
}

/* Events on @ch until one of @type, at most @ms in all; its id in @id. */
static bool await_event(struct rdma_event_channel *ch, int type, int ms,
			struct rdma_cm_id **id)
{
	double end = now() + ms / 1000.0;
	int ev, left;

	for (;;) {
		left = (end - now()) * 1000;
		if (left <= 0)
			break;
		ev = cm_next_event(ch, left, id, NULL);
		if (ev == type)
			return true;
		if (ev < 0)
			break;
		printf("(while waiting for %s: %s)\n", rdma_event_str(type),
		       rdma_event_str(ev));
	}
	printf("no %s within %d ms\n", rdma_event_str(type), ms);
	return false;
}

/* Up to @n completions of @cq within @ms, polled: how many came. */
static int poll_wc(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	double end = now() + ms / 1000.0;
	int got = 0, r;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return got;
		got += r;
		if (got < n && now() > end)
			break;
		if (got < n)
			usleep(1000);
	}
	return got;
}

/* A PD, a CQ and an RC QP (@send_wr deep, every WQE signaled) on @x. */
static int make_qp(struct side *x, int send_wr)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	x->pd = ibv_alloc_pd(x->id->verbs);
	x->cq = x->pd ? ibv_create_cq(x->id->verbs, CQ_DEPTH, NULL, NULL, 0) :
			NULL;
	if (!x->cq)
		return -1;
	attr.send_cq = x->cq;
	attr.recv_cq = x->cq;
	return rdma_create_qp(x->id, x->pd, &attr);
}

static int post_rdma(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		     void *buf, uint32_t len, uint32_t lkey, uint64_t raddr,
		     uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* The first byte where @a and @b differ, or @len. */
static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len && a[i] == b[i]; i++)
		;
	return i;
}

static bool all_fill(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len && p[i] == SINK_FILL; i++)
		;
	return i == len;
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_conn_param cp = { .responder_resources = 4,
				      .initiator_depth = 4, .retry_count = 7 };
	struct rdma_addrinfo *pres, *ares;
	struct ibv_send_wr wr[STREAM_WRS], *bad;
	struct ibv_sge sge[STREAM_WRS];
	struct ibv_wc wc[CQ_DEPTH];
	struct ibv_mr *cmr, *wmr, *smr, *pmr, *kmr;
	struct rdma_cm_id *lid;
	struct ibv_qp_attr a;
	struct side c = { 0 }, s = { 0 };
	uint8_t *cbuf, *before, *wsrc, *sbuf, *spat, *ssink;
	const char *env = getenv("SRDMA_TIMEOUT_SCALE");
	bool sqd, late_posted, read_done = false, read_ok = false;
	int i, n, rc, ok_n = 0, flushed_n = 0;
	size_t bad_at;
	double t0, took;

	if (argc != 4 || (strcmp(argv[3], "rts") && strcmp(argv[3], "sqd"))) {
		fprintf(stderr, "usage: %s ADDR PORT rts|sqd\n", argv[0]);
		return 2;
	}
	sqd = !strcmp(argv[3], "sqd");
	if (env && atoi(env) > 0)
		scale = atoi(env);

	cbuf = aligned_alloc(4096, CBUF_LEN);
	before = malloc(CBUF_LEN);
	wsrc = aligned_alloc(4096, STREAM_LEN);
	sbuf = aligned_alloc(4096, SBUF_LEN);
	spat = aligned_alloc(4096, PROBE_LEN);
	ssink = aligned_alloc(4096, 2 * PROBE_LEN);
	if (!cbuf || !before || !wsrc || !sbuf || !spat || !ssink)
		return 1;
	fill_pattern(cbuf, CBUF_LEN, 0xc0ffee);
	fill_pattern(wsrc, STREAM_LEN, 0x5eed);
	fill_pattern(spat, PROBE_LEN, 0xbadcafe);
	memset(sbuf, 0, SBUF_LEN);
	memset(ssink, SINK_FILL, 2 * PROBE_LEN);

	/* the peer: a listener on ADDR:PORT */
	hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(argv[1], argv[2], &hints, &pres)) {
		perror("rdma_getaddrinfo (passive)");
		return 1;
	}
	hints.ai_flags = 0;
	if (rdma_getaddrinfo(argv[1], argv[2], &hints, &ares)) {
		perror("rdma_getaddrinfo (active)");
		return 1;
	}
	s.ch = rdma_create_event_channel();
	c.ch = rdma_create_event_channel();
	if (!s.ch || !c.ch || rdma_create_id(s.ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, pres->ai_src_addr) || rdma_listen(lid, 1)) {
		perror("listen");
		return 1;
	}

	/* the side to be reset: connects, with its MR for the peer */
	if (rdma_create_id(c.ch, &c.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(c.id, NULL, ares->ai_dst_addr, 2000) ||
	    !await_event(c.ch, RDMA_CM_EVENT_ADDR_RESOLVED, limit_ms(STEP_MS),
			 NULL) ||
	    rdma_resolve_route(c.id, 2000) ||
	    !await_event(c.ch, RDMA_CM_EVENT_ROUTE_RESOLVED, limit_ms(STEP_MS),
			 NULL) ||
	    make_qp(&c, STREAM_WRS)) {
		perror("resolve/create qp");
		return 1;
	}
	cmr = ibv_reg_mr(c.pd, cbuf, CBUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	wmr = ibv_reg_mr(c.pd, wsrc, STREAM_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!cmr || !wmr) {
		perror("ibv_reg_mr");
		return 1;
	}
	if (rdma_connect(c.id, &cp)) {
		perror("rdma_connect");
		return 1;
	}
	if (!await_event(s.ch, RDMA_CM_EVENT_CONNECT_REQUEST,
			 limit_ms(STEP_MS), &s.id) ||
	    make_qp(&s, 8)) {
		perror("connection request/create qp");
		return 1;
	}
	smr = ibv_reg_mr(s.pd, sbuf, SBUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	pmr = ibv_reg_mr(s.pd, spat, PROBE_LEN, IBV_ACCESS_LOCAL_WRITE);
	kmr = ibv_reg_mr(s.pd, ssink, 2 * PROBE_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!smr || !pmr || !kmr) {
		perror("ibv_reg_mr");
		return 1;
	}
	if (rdma_accept(s.id, &cp) ||
	    !await_event(c.ch, RDMA_CM_EVENT_ESTABLISHED, limit_ms(STEP_MS),
			 NULL) ||
	    !await_event(s.ch, RDMA_CM_EVENT_ESTABLISHED, limit_ms(STEP_MS),
			 NULL)) {
		fprintf(stderr, "connection not established\n");
		return 1;
	}
	printf("connected: QP %u (to be reset from %s) and its peer QP %u\n",
	       c.id->qp->qp_num, sqd ? "SQD" : "RTS", s.id->qp->qp_num);

	/* before: the peer's WRITE and READ of the MR are served */
	if (post_rdma(s.id->qp, IBV_WR_RDMA_WRITE, WR_WRITE, spat, PROBE_LEN,
		      pmr->lkey, (uintptr_t)cbuf + OK_WRITE_AT, cmr->rkey) ||
	    post_rdma(s.id->qp, IBV_WR_RDMA_READ, WR_READ, ssink, PROBE_LEN,
		      kmr->lkey, (uintptr_t)cbuf + OK_READ_AT, cmr->rkey)) {
		perror("post (before)");
		return 1;
	}
	n = poll_wc(s.cq, wc, 2, limit_ms(STEP_MS));
	check(n == 2 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[1].status == IBV_WC_SUCCESS &&
	      !memcmp(cbuf + OK_WRITE_AT, spat, PROBE_LEN) &&
	      !memcmp(ssink, cbuf + OK_READ_AT, PROBE_LEN),
	      "before the reset the peer's WRITE and READ are served (%d completions: %s, %s)",
	      n, n > 0 ? ibv_wc_status_str(wc[0].status) : "-",
	      n > 1 ? ibv_wc_status_str(wc[1].status) : "-");
	if (failures)
		return 1;
	memcpy(before, cbuf, CBUF_LEN);

	/* the stream: 16 MiB of WRITEs in one post, most still to go */
	for (i = 0; i < STREAM_WRS; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)wsrc, STREAM_LEN,
					   wmr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = 1000 + i, .sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.next = i + 1 < STREAM_WRS ? &wr[i + 1] : NULL,
			.wr.rdma = {
				.remote_addr = (uintptr_t)sbuf +
					       (i % 4) * STREAM_LEN,
				.rkey = smr->rkey,
			},
		};
	}
	if (ibv_post_send(c.id->qp, wr, &bad)) {
		perror("post the WRITE stream");
		return 1;
	}
	if (sqd) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_SQD;
		rc = ibv_modify_qp(c.id->qp, &a, IBV_QP_STATE);
		check(rc == 0, "RTS -> SQD under the stream: %s",
		      rc ? strerror(rc) : "done");
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	t0 = now();
	rc = ibv_modify_qp(c.id->qp, &a, IBV_QP_STATE);
	took = now() - t0;
	check(rc == 0 && took < limit_ms(RESET_MS) / 1000.0,
	      "%s -> RESET under the stream: %s after %.3f s",
	      sqd ? "SQD" : "RTS", rc ? strerror(rc) : "done", took);
	check(qp_state(c.id->qp) == IBV_QPS_RESET, "the QP is in RESET");

	/* after: the peer WRITEs into the MR and READs it at once */
	late_posted =
		!post_rdma(s.id->qp, IBV_WR_RDMA_WRITE, WR_WRITE, spat,
			   PROBE_LEN, pmr->lkey,
			   (uintptr_t)cbuf + LATE_WRITE_AT, cmr->rkey) &&
		!post_rdma(s.id->qp, IBV_WR_RDMA_READ, WR_READ,
			   ssink + PROBE_LEN, PROBE_LEN, kmr->lkey,
			   (uintptr_t)cbuf + LATE_READ_AT, cmr->rkey);
	printf("the peer's WRITE and READ after the reset: %s\n",
	       late_posted ? "posted" : "refused at post time");
	if (late_posted) {
		/* its QP fails with the connection: the READ is flushed */
		n = poll_wc(s.cq, wc, 2, limit_ms(STEP_MS));
		for (i = 0; i < n; i++) {
			printf("peer's %s: %s\n",
			       wc[i].wr_id == WR_READ ? "READ" : "WRITE",
			       ibv_wc_status_str(wc[i].status));
			if (wc[i].wr_id == WR_READ) {
				read_done = true;
				read_ok = wc[i].status == IBV_WC_SUCCESS;
			}
		}
		check(read_done && !read_ok,
		      "the peer's READ after the reset completes in error");
	}
	check(await_event(s.ch, RDMA_CM_EVENT_DISCONNECTED, limit_ms(STEP_MS),
			  NULL), "the peer hears DISCONNECTED");
	check(await_event(c.ch, RDMA_CM_EVENT_DISCONNECTED, limit_ms(STEP_MS),
			  NULL), "the reset side hears DISCONNECTED");
	bad_at = first_diff(cbuf, before, CBUF_LEN);
	check(bad_at == CBUF_LEN,
	      "the reset side's MR is unchanged byte for byte (first change at %zu)",
	      bad_at);
	check(all_fill(ssink + PROBE_LEN, PROBE_LEN),
	      "the peer's READ sink got nothing");

	/* what the stream completed or flushed before the reset: told only */
	n = poll_wc(c.cq, wc, CQ_DEPTH, 200);
	for (i = 0; i < n; i++)
		wc[i].status == IBV_WC_SUCCESS ? ok_n++ : flushed_n++;
	printf("stream of %d WRITEs: %d completed, %d in error, the rest dropped by the reset\n",
	       STREAM_WRS, ok_n, flushed_n);

	/* as rdma_cm takes an iWARP QP to INIT */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	rc = ibv_modify_qp(c.id->qp, &a, IBV_QP_STATE | IBV_QP_PORT |
			   IBV_QP_ACCESS_FLAGS);
	check(rc == 0 && qp_state(c.id->qp) == IBV_QPS_INIT,
	      "RESET -> INIT again: %s", rc ? strerror(rc) : "done");

	/* everything goes; rdma res must then show nothing (the script) */
	rc = ibv_destroy_qp(c.id->qp);
	c.id->qp = NULL;
	check(rc == 0, "the reset QP destroyed: %s", rc ? strerror(rc) : "done");
	rc = ibv_destroy_qp(s.id->qp);
	s.id->qp = NULL;
	rc |= rdma_destroy_id(c.id) | rdma_destroy_id(s.id) |
	      rdma_destroy_id(lid);
	rc |= ibv_dereg_mr(cmr) | ibv_dereg_mr(wmr) | ibv_dereg_mr(smr) |
	      ibv_dereg_mr(pmr) | ibv_dereg_mr(kmr);
	rc |= ibv_destroy_cq(c.cq) | ibv_destroy_cq(s.cq) |
	      ibv_dealloc_pd(c.pd) | ibv_dealloc_pd(s.pd);
	check(rc == 0, "the rest destroyed");
	rdma_destroy_event_channel(c.ch);
	rdma_destroy_event_channel(s.ch);
	rdma_freeaddrinfo(pres);
	rdma_freeaddrinfo(ares);
	printf("%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
