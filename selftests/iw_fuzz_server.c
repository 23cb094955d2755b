// SPDX-License-Identifier: GPL-2.0
/*
 * iw_fuzz_server: the srdma side of the iWARP fuzzer (iwarp_fuzz.py). An
 * rdma_cm server that accepts connections in a loop and exposes live
 * memory to whoever connects:
 *
 *   rw     a window with remote read, write and atomic access
 *   ro     remote read only: its bytes must never change
 *   other  an MR of another PD: no QP here may reach it
 *   dead   the key of an MR that was registered and deregistered
 *
 * The accept's private data tells the peer these keys and addresses, the
 * receive length and depth (struct srv_info, big endian), so the fuzzer
 * hits live STags. Each connection gets RQ_DEPTH receives of two SGEs
 * with guard bytes between and around them, never reposted, so that the
 * peer knows exactly how many SENDs find a receive. If the peer's request
 * carries a struct fz_info, the server RDMA READs from the peer's STag
 * and, when the peer offered atomics, sends it a fetch-and-add (a WQE
 * that fails locally would move the QP to the error state), so that
 * the peer's READ and atomic responses reach srdma's receive path.
 *
 * Every guard byte (around the windows, between and after the receive
 * SGEs, after each READ's length) is checked when a connection is gone
 * and at exit; SENDs carrying the fuzzer's magic are checked byte for
 * byte. SIGTERM or SIGINT end the server: it prints its counts and exits
 * 0 only if no check failed.
 *
 *   iw_fuzz_server -a ADDR [-p PORT]
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <rdma/rdma_cma.h>

#define MAGIC		0x49574653u	/* "IWFS" */
#define FZ_MAGIC	0x49574643u	/* "IWFC" */
#define FZ_ATOMICS	1
#define MAXC		64		/* connections at once */
#define RQ_DEPTH	32
#define SGE0_LEN	256
#define SGE1_LEN	768
#define RECV_LEN	(SGE0_LEN + SGE1_LEN)
#define GAP		64		/* guard bytes after each SGE */
#define RECV_SLOT	(SGE0_LEN + GAP + SGE1_LEN + GAP)
#define READ_MAX	4096
#define READ_SLOT	(READ_MAX + GAP)
#define ATOMIC_SLOT	64
#define CONN_SLOT	(RQ_DEPTH * RECV_SLOT + READ_SLOT + ATOMIC_SLOT)
#define RW_LEN		65536
#define RO_LEN		4096
#define OTHER_LEN	4096
#define GUARD		4096
#define REMOTE_LEN	(GUARD + RW_LEN + GUARD + RO_LEN + GUARD + OTHER_LEN + \
			 GUARD)
#define CQ_DEPTH	(MAXC * (RQ_DEPTH + 4))
#define GUARD_BYTE	0xa5

/* the accept's private data, big endian; no padding in either struct */
struct srv_info {
	uint32_t magic;
	uint32_t recv_len;
	uint32_t rq_depth;
	uint32_t dead_rkey;
	uint64_t rw_addr;
	uint32_t rw_rkey;
	uint32_t rw_len;
	uint64_t ro_addr;
	uint32_t ro_rkey;
	uint32_t ro_len;
	uint64_t other_addr;
	uint32_t other_rkey;
	uint32_t other_len;
};

/* struct fz_info: the start of the peer's private data, big endian */
struct fz_info {
	uint32_t magic;
	uint32_t pd_len;	/* all of its private data; the rest a pattern */
	uint32_t stag;		/* its memory for our READ and atomic */
	uint32_t read_len;
	uint64_t to;
	uint32_t flags;		/* FZ_ATOMICS: it offered atomics */
	uint32_t reserved;
};

struct conn {
	struct rdma_cm_id *id;
	uint32_t gen;
	bool established;
	struct fz_info fz;
};

static struct {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *cq;
	uint8_t *remote, *local;
	struct ibv_mr *rw, *ro, *other, *lmr;
	uint32_t dead_rkey;
	struct conn conn[MAXC];
	uint32_t gen;
	/* counts */
	unsigned long requests, accepted, rejected, established, closed;
	unsigned long recv_ok, recv_checked, recv_err, reads_ok, reads_err;
	unsigned long atomics_ok, atomics_err, bad_pdata;
	unsigned long failures;
} s;

static void fail(const char *fmt, ...)
{
	va_list ap;

	s.failures++;
	va_start(ap, fmt);
	fprintf(stderr, "FAIL: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The fuzzer's SEND payload after its 12-byte header. */
static uint8_t pattern_byte(uint32_t seed, uint32_t i)
{
	return (uint8_t)((((seed + i) % 251) * 37) % 251);
}

static uint8_t *conn_area(int c)
{
	return s.local + (size_t)c * CONN_SLOT;
}

static bool all_guard(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != GUARD_BYTE)
			return false;
	return true;
}

/* Everything of slot @c that no SGE covers must still be guard bytes. */
static void check_conn_area(int c)
{
	uint8_t *a = conn_area(c), *rd = a + RQ_DEPTH * RECV_SLOT;
	uint32_t rlen = be32toh(s.conn[c].fz.read_len);
	int i;

	if (rlen > READ_MAX)
		rlen = 0;
	for (i = 0; i < RQ_DEPTH; i++) {
		uint8_t *r = a + i * RECV_SLOT;

		if (!all_guard(r + SGE0_LEN, GAP) ||
		    !all_guard(r + SGE0_LEN + GAP + SGE1_LEN, GAP))
			fail("conn %d: guard after receive %d overwritten",
			     c, i);
	}
	if (!all_guard(rd + rlen, READ_SLOT - rlen))
		fail("conn %d: guard after its READ of %u bytes overwritten",
		     c, rlen);
	if (!all_guard(rd + READ_SLOT + 8, ATOMIC_SLOT - 8))
		fail("conn %d: guard after its atomic result overwritten", c);
	memset(a, GUARD_BYTE, CONN_SLOT);
}

static void check_remote(void)
{
	uint8_t *p = s.remote;
	size_t i;

	if (!all_guard(p, GUARD) || !all_guard(p + GUARD + RW_LEN, GUARD) ||
	    !all_guard(p + 2 * GUARD + RW_LEN + RO_LEN, GUARD) ||
	    !all_guard(p + REMOTE_LEN - GUARD, GUARD))
		fail("guard bytes around the remote windows overwritten");
	p += 2 * GUARD + RW_LEN;
	for (i = 0; i < RO_LEN; i++)
		if (p[i] != (uint8_t)(i * 7))
			break;
	if (i != RO_LEN)
		fail("read-only MR written at byte %zu", i);
	p += RO_LEN + GUARD;
	for (i = 0; i < OTHER_LEN; i++)
		if (p[i] != (uint8_t)(i * 13))
			break;
	if (i != OTHER_LEN)
		fail("other PD's MR written at byte %zu", i);
}

static int setup_memory(void)
{
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mr *dead;
	uint8_t *p;
	size_t i;

	s.pd = ibv_alloc_pd(s.ctx);
	s.pd2 = ibv_alloc_pd(s.ctx);
	s.cq = ibv_create_cq(s.ctx, CQ_DEPTH, NULL, NULL, 0);
	s.remote = aligned_alloc(4096, REMOTE_LEN);
	s.local = aligned_alloc(4096, (size_t)MAXC * CONN_SLOT);
	if (!s.pd || !s.pd2 || !s.cq || !s.remote || !s.local)
		return -1;
	memset(s.remote, GUARD_BYTE, REMOTE_LEN);
	memset(s.local, GUARD_BYTE, (size_t)MAXC * CONN_SLOT);
	p = s.remote + GUARD;
	memset(p, 0, RW_LEN);
	s.rw = ibv_reg_mr(s.pd, p, RW_LEN, rw);
	p += RW_LEN + GUARD;
	for (i = 0; i < RO_LEN; i++)
		p[i] = i * 7;
	s.ro = ibv_reg_mr(s.pd, p, RO_LEN, IBV_ACCESS_REMOTE_READ);
	p += RO_LEN + GUARD;
	for (i = 0; i < OTHER_LEN; i++)
		p[i] = i * 13;
	s.other = ibv_reg_mr(s.pd2, p, OTHER_LEN, rw);
	s.lmr = ibv_reg_mr(s.pd, s.local, (size_t)MAXC * CONN_SLOT,
			   IBV_ACCESS_LOCAL_WRITE);
	dead = ibv_reg_mr(s.pd, s.remote, GUARD, IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_LOCAL_WRITE);
	if (!s.rw || !s.ro || !s.other || !s.lmr || !dead)
		return -1;
	s.dead_rkey = dead->rkey;
	return ibv_dereg_mr(dead);
}

static uint64_t wr_id(int c, int what)
{
	return (uint64_t)s.conn[c].gen << 32 | (uint32_t)c << 16 | what;
}

static int post_recvs(int c)
{
	struct ibv_recv_wr wr = { .num_sge = 2 }, *bad;
	struct ibv_sge sge[2];
	int i;

	wr.sg_list = sge;
	for (i = 0; i < RQ_DEPTH; i++) {
		uint8_t *r = conn_area(c) + i * RECV_SLOT;

		sge[0] = (struct ibv_sge){ (uintptr_t)r, SGE0_LEN, s.lmr->lkey };
		sge[1] = (struct ibv_sge){ (uintptr_t)(r + SGE0_LEN + GAP),
					   SGE1_LEN, s.lmr->lkey };
		wr.wr_id = wr_id(c, i);
		if (ibv_post_recv(s.conn[c].id->qp, &wr, &bad))
			return -1;
	}
	return 0;
}

/* What the peer asked us to READ and add to, once it is connected. */
static void post_requests(int c)
{
	struct conn *cn = &s.conn[c];
	uint8_t *rd = conn_area(c) + RQ_DEPTH * RECV_SLOT;
	uint32_t len = be32toh(cn->fz.read_len);
	struct ibv_send_wr wr = { .num_sge = 1, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_sge sge;

	if (be32toh(cn->fz.magic) != FZ_MAGIC || len > READ_MAX)
		return;
	wr.sg_list = &sge;
	sge = (struct ibv_sge){ (uintptr_t)rd, len, s.lmr->lkey };
	wr.wr_id = wr_id(c, 0x100);
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = be64toh(cn->fz.to);
	wr.wr.rdma.rkey = be32toh(cn->fz.stag);
	if (ibv_post_send(cn->id->qp, &wr, &bad) ||
	    !(be32toh(cn->fz.flags) & FZ_ATOMICS))
		return;
	sge = (struct ibv_sge){ (uintptr_t)(rd + READ_SLOT), 8, s.lmr->lkey };
	wr.wr_id = wr_id(c, 0x200);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = be64toh(cn->fz.to) & ~7ULL;
	wr.wr.atomic.rkey = be32toh(cn->fz.stag);
	wr.wr.atomic.compare_add = 1;
	ibv_post_send(cn->id->qp, &wr, &bad);
}

/* A SEND with the fuzzer's magic: header, then the pattern. */
static void check_send(int c, int i, uint32_t len)
{
	uint8_t *r = conn_area(c) + i * RECV_SLOT, msg[RECV_LEN];
	uint32_t magic, mlen, seed, k;

	memcpy(msg, r, SGE0_LEN);
	memcpy(msg + SGE0_LEN, r + SGE0_LEN + GAP, SGE1_LEN);
	if (len < 12)
		return;
	memcpy(&magic, msg, 4);
	if (be32toh(magic) != FZ_MAGIC)
		return;
	memcpy(&mlen, msg + 4, 4);
	memcpy(&seed, msg + 8, 4);
	mlen = be32toh(mlen);
	seed = be32toh(seed);
	s.recv_checked++;
	if (mlen != len)
		fail("SEND of %u bytes received as %u", mlen, len);
	for (k = 12; k < len && k < RECV_LEN; k++)
		if (msg[k] != pattern_byte(seed, k - 12))
			break;
	if (k < len && k < RECV_LEN)
		fail("SEND byte %u of %u wrong", k, len);
}

static void poll_cq(void)
{
	struct ibv_wc wc[64];
	int n, i;

	while ((n = ibv_poll_cq(s.cq, 64, wc)) > 0) {
		for (i = 0; i < n; i++) {
			int c = (wc[i].wr_id >> 16) & 0xffff;
			int what = wc[i].wr_id & 0xffff;
			bool ok = wc[i].status == IBV_WC_SUCCESS;

			if (c >= MAXC || !s.conn[c].id ||
			    s.conn[c].gen != wc[i].wr_id >> 32)
				continue;
			if (what == 0x100) {
				ok ? s.reads_ok++ : s.reads_err++;
			} else if (what == 0x200) {
				ok ? s.atomics_ok++ : s.atomics_err++;
			} else if (ok) {
				s.recv_ok++;
				check_send(c, what, wc[i].byte_len);
			} else {
				s.recv_err++;
			}
		}
	}
}

static void conn_free(int c)
{
	struct conn *cn = &s.conn[c];

	if (cn->id->qp)
		rdma_destroy_qp(cn->id);
	/* nothing of the QP is left: its completions, then its memory */
	poll_cq();
	rdma_destroy_id(cn->id);
	cn->id = NULL;
	check_conn_area(c);
	s.closed++;
}

static void conn_request(struct rdma_cm_id *id, const void *pd, uint8_t pd_len)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = s.cq, .recv_cq = s.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = RQ_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 2 },
		.sq_sig_all = 1,
	};
	struct srv_info info = {
		.magic = htobe32(MAGIC),
		.recv_len = htobe32(RECV_LEN),
		.rq_depth = htobe32(RQ_DEPTH),
		.dead_rkey = htobe32(s.dead_rkey),
		.rw_addr = htobe64((uintptr_t)s.rw->addr),
		.rw_rkey = htobe32(s.rw->rkey),
		.rw_len = htobe32(RW_LEN),
		.ro_addr = htobe64((uintptr_t)s.ro->addr),
		.ro_rkey = htobe32(s.ro->rkey),
		.ro_len = htobe32(RO_LEN),
		.other_addr = htobe64((uintptr_t)s.other->addr),
		.other_rkey = htobe32(s.other->rkey),
		.other_len = htobe32(OTHER_LEN),
	};
	struct rdma_conn_param cp = {
		.private_data = &info, .private_data_len = sizeof(info),
		.responder_resources = 16, .initiator_depth = 4,
	};
	struct fz_info fz;
	struct conn *cn;
	uint32_t k;
	int c;

	s.requests++;
	for (c = 0; c < MAXC && s.conn[c].id; c++)
		;
	if (c == MAXC) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		s.rejected++;
		return;
	}
	cn = &s.conn[c];
	memset(&cn->fz, 0, sizeof(cn->fz));
	if (pd_len >= sizeof(fz))
		memcpy(&fz, pd, sizeof(fz));
	if (pd_len >= sizeof(fz) && be32toh(fz.magic) == FZ_MAGIC) {
		cn->fz = fz;
		/* the private data arrived whole: length and pattern */
		if (be32toh(fz.pd_len) != pd_len)
			s.bad_pdata++;
		for (k = sizeof(fz); k < pd_len; k++)
			if (((const uint8_t *)pd)[k] != pattern_byte(7, k))
				break;
		if (k < pd_len)
			s.bad_pdata++;
	}
	cn->id = id;
	cn->gen = ++s.gen;
	cn->established = false;
	id->context = cn;
	if (rdma_create_qp(id, s.pd, &qa) || post_recvs(c)) {
		perror("create qp / post recv");
		rdma_reject(id, NULL, 0);
		conn_free(c);
		return;
	}
	if (rdma_accept(id, &cp)) {
		/* the peer is gone already: its events may still come */
		perror("rdma_accept");
		conn_free(c);
		return;
	}
	s.accepted++;
}

static void cm_events(void)
{
	struct rdma_cm_event *ev;
	struct conn *cn;

	while (!rdma_get_cm_event(s.ch, &ev)) {
		struct rdma_cm_id *id = ev->id;
		enum rdma_cm_event_type type = ev->event;
		const void *pd = ev->param.conn.private_data;
		uint8_t pd_len = ev->param.conn.private_data_len;

		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			uint8_t copy[256];

			if (pd_len)
				memcpy(copy, pd, pd_len);
			rdma_ack_cm_event(ev);
			conn_request(id, copy, pd_len);
			continue;
		}
		rdma_ack_cm_event(ev);
		cn = id->context;
		if (id == s.listen || !cn || cn->id != id)
			continue;
		if (type == RDMA_CM_EVENT_ESTABLISHED) {
			cn->established = true;
			s.established++;
			post_requests(cn - s.conn);
			continue;
		}
		/* disconnected, connect error, unreachable, device removal */
		poll_cq();
		conn_free(cn - s.conn);
	}
}

static int start(const char *addr, const char *port)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
				       .ai_port_space = RDMA_PS_TCP }, *res;
	int fl;

	s.ch = rdma_create_event_channel();
	if (!s.ch || rdma_getaddrinfo(addr, port, &hints, &res) ||
	    rdma_create_id(s.ch, &s.listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(s.listen, res->ai_src_addr)) {
		perror("rdma_cm set-up");
		return -1;
	}
	rdma_freeaddrinfo(res);
	s.ctx = s.listen->verbs;
	if (!s.ctx || setup_memory()) {
		perror("memory set-up");
		return -1;
	}
	if (rdma_listen(s.listen, MAXC)) {
		perror("rdma_listen");
		return -1;
	}
	fl = fcntl(s.ch->fd, F_GETFL);
	return fcntl(s.ch->fd, F_SETFL, fl | O_NONBLOCK);
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = "7500";
	struct pollfd p[2];
	sigset_t sigs;
	int c;

	while ((c = getopt(argc, argv, "a:p:")) != -1) {
		if (c == 'a')
			addr = optarg;
		else if (c == 'p')
			port = optarg;
		else
			return 2;
	}
	if (!addr) {
		fprintf(stderr, "usage: %s -a ADDR [-p PORT]\n", argv[0]);
		return 2;
	}
	/* SIGTERM and SIGINT end the loop below, then the checks run */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	p[1] = (struct pollfd){ .fd = signalfd(-1, &sigs, 0), .events = POLLIN };
	if (p[1].fd < 0 || start(addr, port))
		return 1;
	printf("listening on %s port %s: rw rkey %#x, ro %#x, other %#x, dead %#x\n",
	       addr, port, s.rw->rkey, s.ro->rkey, s.other->rkey, s.dead_rkey);
	fflush(stdout);
	p[0] = (struct pollfd){ .fd = s.ch->fd, .events = POLLIN };
	while (!(p[1].revents & POLLIN)) {
		poll(p, 2, 100);
		cm_events();
		poll_cq();
	}
	for (c = 0; c < MAXC; c++) {
		if (!s.conn[c].id)
			continue;
		rdma_disconnect(s.conn[c].id);
		conn_free(c);
	}
	rdma_destroy_id(s.listen);
	check_remote();
	printf("requests %lu accepted %lu rejected %lu established %lu closed %lu\n",
	       s.requests, s.accepted, s.rejected, s.established, s.closed);
	printf("receives: %lu ok (%lu checked), %lu failed; ",
	       s.recv_ok, s.recv_checked, s.recv_err);
	printf("READs %lu ok, %lu failed; atomics %lu ok, %lu failed\n",
	       s.reads_ok, s.reads_err, s.atomics_ok, s.atomics_err);
	printf("private data not intact: %lu; check failures: %lu\n",
	       s.bad_pdata, s.failures);
	ibv_dereg_mr(s.rw);
	ibv_dereg_mr(s.ro);
	ibv_dereg_mr(s.other);
	ibv_dereg_mr(s.lmr);
	ibv_destroy_cq(s.cq);
	ibv_dealloc_pd(s.pd);
	ibv_dealloc_pd(s.pd2);
	rdma_destroy_event_channel(s.ch);
	return s.failures || s.bad_pdata ? 1 : 0;
}
