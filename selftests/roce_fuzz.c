// SPDX-License-Identifier: GPL-2.0
/*
 * roce_fuzz: RoCEv2 packets with a valid ICRC aimed at the live QPs of one
 * sroce device. The program creates its own targets on the device (an RC
 * pair over IPv4 and one over IPv6, an RC requester whose requests go
 * nowhere so that responses have a window to land in, a UC pair, a UD QP
 * joined to an IPv4 and an IPv6 group, a type 2 memory window) and sends
 * hand-made packets to the device's own addresses through raw IP sockets
 * (IP_HDRINCL): the kernel delivers them over loopback to the device's UDP
 * tunnel socket exactly as if they came from the wire, with any source
 * address we choose. QP1 (the GSI QP of the kernel's MAD layer) is a
 * target too.
 *
 * Packets are either coherent messages (a SEND/WRITE/READ/atomic at the
 * expected PSN, with real keys and addresses) that may then be mutated,
 * or random ones: every 8-bit opcode, truncation, bad pad counts, RETH
 * lengths and VAs at the extremes, AETH syndromes, IETH on live keys,
 * wrong Q_Keys, P_Keys and transport versions, spoofed sources, IPv6 and
 * multicast. A sweep first sends every opcode at every short length. A
 * quarter of the unicast packets from the QPs' own path go through a UDP
 * socket instead, their IB bytes in two or three pieces with MSG_MORE:
 * the kernel then keeps the first piece in the skb's head and the rest in
 * a page fragment, split at a random byte (even inside the BTH), as a
 * NIC's receive pages leave a big packet. QPs
 * that a packet moved to the error state are brought back at once, so the
 * traffic keeps meeting live state. At the end the RC pair is brought up
 * fresh and must pass a byte-checked WRITE, SEND and READ.
 *
 *   roce_fuzz -d DEV -i NETDEV -4 IP4 -g GID4 [-6 IP6 -G GID6]
 *             [-m fuzz|spoof|qp1] [-n PACKETS] [-s SEED] [-w DUMPFILE]
 *
 * -m spoof (issue 15, defect 5): RC and UC requests at the exact expected
 *   PSN with live keys, from a source that is not the QP's path; none may
 *   consume a receive, change memory or move a PSN: a legitimate transfer
 *   afterwards must arrive intact.
 * -m qp1 (defect 21): -n UD SEND-only packets to QP1 with the GSI Q_Key,
 *   a valid ICRC and 300 bytes of payload (the script then checks rdma_cm).
 * -w FILE: append every packet sent, in hex with its number, to FILE (to
 *   reproduce a crash: rerun with the same -s and -n).
 *
 * Exit 0 when the run completed and its checks passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "verbs_util.h"

#define ROCE_PORT	4791
#define GSI_QKEY	0x80010000u
#define UD_QKEY		0x11111111u
#define MCAST_QPN	0xffffffu
#define DEAD_QPN	0xfffff0u	/* no QP: the stuck requester's peer */
#define MTU		1024		/* path MTU of the connected QPs */
#define PKT_MAX		9216
#define MCAST_IB_MAX	1400		/* multicast leaves through the netdev */
#define TMR_LEN		65536		/* the memory remote keys reach */
#define MW_OFF		8192
#define MW_LEN		8192
#define RBUF_LEN	2048		/* one receive buffer */
#define RQ_DEPTH	256
#define CQ_DEPTH	8192
#define BATCH		32
#define CHECK_LEN	32768

#define PSN_MASK	0xffffffu
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* BTH, extension headers (IBTA Vol. 1, 9.2-9.3) */
#define BTH_LEN		12
#define RETH_LEN	16
#define AETH_LEN	4
#define ATMETH_LEN	28
#define ATMACK_LEN	8
#define IMM_LEN		4
#define IETH_LEN	4
#define DETH_LEN	8

enum {
	X_RETH = 1, X_AETH = 2, X_ATMETH = 4, X_ATMACK = 8, X_IMM = 16,
	X_IETH = 32, X_PAY = 64, X_ATMWR = 128,
};

/* What the low five opcode bits carry; anything else is undefined. */
static const uint8_t op_ext[32] = {
	[0x00] = X_PAY, [0x01] = X_PAY, [0x02] = X_PAY,
	[0x03] = X_PAY | X_IMM, [0x04] = X_PAY, [0x05] = X_PAY | X_IMM,
	[0x06] = X_PAY | X_RETH, [0x07] = X_PAY, [0x08] = X_PAY,
	[0x09] = X_PAY | X_IMM, [0x0a] = X_PAY | X_RETH,
	[0x0b] = X_PAY | X_RETH | X_IMM, [0x0c] = X_RETH,
	[0x0d] = X_PAY | X_AETH, [0x0e] = X_PAY, [0x0f] = X_PAY | X_AETH,
	[0x10] = X_PAY | X_AETH, [0x11] = X_AETH,
	[0x12] = X_AETH | X_ATMACK, [0x13] = X_ATMETH, [0x14] = X_ATMETH,
	[0x16] = X_PAY | X_IETH, [0x17] = X_PAY | X_IETH,
	[0x1d] = X_PAY | X_RETH | X_ATMWR,
};

enum svc { SVC_RC = 0x00, SVC_UC = 0x20, SVC_UD = 0x60 };

/* The QPs the packets are aimed at. */
enum tgt_id { T_RCA, T_RCB, T_RCC, T_RCA6, T_RCB6, T_UCA, T_UCB, T_UD,
	      T_NUM };

struct tgt {
	const char *name;
	struct ibv_qp *qp;
	enum ibv_qp_type type;
	bool v6;
	int peer;		/* target index of the peer, or -1 */
	uint32_t dqpn;		/* connected peer QPN */
	uint32_t epsn;		/* our guess of the responder's next PSN */
	uint32_t sq_psn;
	uint32_t req_next;	/* requester's next PSN (stuck requester) */
	int posted;		/* receives outstanding */
	unsigned int rearms;
	/* a coherent multi-packet message in progress */
	int msg_left;
	uint8_t msg_op;		/* low five bits of the next packet's opcode */
	uint64_t msg_va;
	uint32_t msg_len;
};

struct pkt {
	uint8_t b[PKT_MAX];
	size_t len;		/* IP packet */
	bool v6;
	bool mcast;
	bool paged;		/* sent in pieces through g.u4 or g.u6 */
};

static struct {
	const char *dev, *netdev, *ip4s, *ip6s, *mode, *dump;
	int gid4, gid6;
	unsigned long npkts;
	uint64_t seed;
} opt = { .dev = "sroce0", .netdev = "eth0", .mode = "fuzz",
	  .gid4 = -1, .gid6 = -1, .npkts = 50000 };

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *tmr;	/* remote keys reach this */
	struct ibv_mr *lmr;	/* receive and local buffers */
	uint8_t *tbuf, *lbuf;
	struct ibv_mw *mw;
	uint32_t mw_rkey;
	bool mw_valid;
	int mw_fail;
	int stuck_out;		/* the stuck requester's WQEs outstanding */
	union ibv_gid gid4, gid6;
	struct in_addr ip4;
	struct in6_addr ip6;
	bool have6;
	struct tgt t[T_NUM];
	int s4, s6, s4m, s6m;
	int u4, u6;		/* UDP sockets for paged packets */
	uint16_t u4port, u6port;
	struct in_addr grp4;
	struct in6_addr grp6;
	FILE *dump;
} g;

static struct {
	unsigned long sent, send_err, by_kind[16], mcast, v6, spoofed,
		truncated, bad_icrc, bad_pad, undefined, qp1, cqe, cqe_err,
		rearms, paged;
} st;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* ---- randomness: xorshift64*, seeded from -s so a run can be repeated */

static uint64_t rng_state;

static uint64_t rnd64(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd(uint32_t n)	/* 0 .. n-1 */
{
	return n ? (uint32_t)((rnd64() >> 32) % n) : 0;
}

static bool chance(unsigned int percent)
{
	return rnd(100) < percent;
}

static uint32_t pick32(const uint32_t *v, size_t n)
{
	return v[rnd(n)];
}

/*
 * The ICRC (IBTA Annex A17.8): CRC-32 as zlib's, over eight 0xff bytes
 * standing in for the LRH, the IP and UDP headers and the BTH with their
 * variant fields set to ones, then the rest of the packet.
 */

static uint32_t crc_tab[256];

static void crc_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		for (c = i, j = 0; j < 8; j++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_tab[i] = c;
	}
}

static uint32_t crc_raw(uint32_t c, const uint8_t *p, size_t n)
{
	while (n--)
		c = crc_tab[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

/*
 * @ip: the IP header (20 or 40 bytes), then UDP, BTH, ...; @ib_len: bytes
 * from the BTH up to the ICRC.
 */
static uint32_t icrc(const uint8_t *ip, bool v6, size_t ib_len)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };
	size_t iplen = v6 ? 40 : 20;
	uint8_t h[40 + 8 + BTH_LEN];
	uint32_t c = 0xffffffffu;
	size_t bth = ib_len < BTH_LEN ? ib_len : BTH_LEN;

	memcpy(h, ip, iplen + 8 + bth);
	if (v6) {
		h[0] |= 0x0f;		/* traffic class, flow label */
		h[1] = h[2] = h[3] = 0xff;
		h[7] = 0xff;		/* hop limit */
	} else {
		h[1] = 0xff;		/* TOS */
		h[8] = 0xff;		/* TTL */
		h[10] = h[11] = 0xff;	/* header checksum */
	}
	h[iplen + 6] = h[iplen + 7] = 0xff;	/* UDP checksum */
	if (bth >= 5)
		h[iplen + 8 + 4] = 0xff;	/* FECN, BECN, resv6 */
	c = crc_raw(c, ones, sizeof(ones));
	c = crc_raw(c, h, iplen + 8 + bth);
	c = crc_raw(c, ip + iplen + 8 + bth, ib_len - bth);
	return ~c;
}

static uint16_t csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t csum_add(uint32_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

/* ---- verbs: the targets */

static void tgt_def(enum tgt_id id, const char *name, enum ibv_qp_type type,
		    bool v6, int peer)
{
	struct tgt *t = &g.t[id];
	struct ibv_qp_init_attr ia = {
		.send_cq = g.cq,
		.recv_cq = g.cq,
		.qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = RQ_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	t->name = name;
	t->type = type;
	t->v6 = v6;
	t->peer = peer;
	t->qp = ibv_create_qp(g.pd, &ia);
	if (!t->qp)
		die("create %s QP: %s", name, strerror(errno));
}

static uint64_t wrid(int id, int kind, uint32_t n)
{
	return (uint64_t)kind << 40 | (uint64_t)id << 32 | n;
}

enum { WR_RECV = 1, WR_REQ, WR_BIND, WR_CHECK };

static void post_recvs(enum tgt_id id)
{
	struct tgt *t = &g.t[id];

	while (t->posted < RQ_DEPTH) {
		uint32_t slot = (uint32_t)t->posted;
		struct ibv_sge sge = {
			.addr = (uintptr_t)g.lbuf + (uint64_t)id * RQ_DEPTH *
				RBUF_LEN / 4 + (slot % 4) * RBUF_LEN,
			.length = RBUF_LEN,
			.lkey = g.lmr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = wrid(id, WR_RECV, slot),
			.sg_list = &sge,
			.num_sge = 1,
		}, *bad;

		if (ibv_post_recv(t->qp, &wr, &bad))
			return;
		t->posted++;
	}
}

/* RESET -> INIT -> RTR -> RTS, expecting @rq_psn and sending from @sq_psn. */
static int bring_up(enum tgt_id id, uint32_t rq_psn, uint32_t sq_psn)
{
	struct tgt *t = &g.t[id];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int gidx = t->v6 ? opt.gid6 : opt.gid4;
	union ibv_gid *gid = t->v6 ? &g.gid6 : &g.gid4;
	int mask;

	if (ibv_modify_qp(t->qp, &a, IBV_QP_STATE))
		return -1;
	t->posted = 0;
	t->msg_left = 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (t->type == IBV_QPT_UD) {
		a.qkey = UD_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (t->type == IBV_QPT_RC)
			a.qp_access_flags |= IBV_ACCESS_REMOTE_READ |
					     IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ibv_modify_qp(t->qp, &a, mask))
		return -1;
	post_recvs(id);

	t->epsn = rq_psn & PSN_MASK;
	t->sq_psn = sq_psn & PSN_MASK;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (t->type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = t->dqpn;
		a.rq_psn = t->epsn;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = *gid;
		a.ah_attr.grh.sgid_index = gidx;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (t->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(t->qp, &a, mask))
		return -1;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = t->sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (t->type == IBV_QPT_RC) {
		/* the stuck requester keeps its window open for seconds */
		a.timeout = id == T_RCC ? 18 : 12;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(t->qp, &a, mask))
		return -1;
	t->req_next = t->sq_psn;
	return 0;
}

/* Both ends of a connected pair, each expecting what the other sends. */
static int pair_up(enum tgt_id a, enum tgt_id b)
{
	uint32_t pa = rnd(PSN_MASK + 1), pb = rnd(PSN_MASK + 1);

	return bring_up(a, pa, pb) || bring_up(b, pb, pa);
}

static int post_send1(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, wr, &bad);
}

/*
 * The stuck requester: requests to a QPN nobody has, so they stay
 * unacknowledged and forged responses find WQEs waiting for them.
 */
static void stuck_requests(void)
{
	struct tgt *t = &g.t[T_RCC];
	uint8_t *lb = g.lbuf + (uint64_t)T_NUM * RQ_DEPTH * RBUF_LEN / 4;
	static const struct { enum ibv_wr_opcode op; uint32_t len; } rq[] = {
		{ IBV_WR_RDMA_READ, 4096 }, { IBV_WR_SEND, 512 },
		{ IBV_WR_RDMA_WRITE, 2048 }, { IBV_WR_ATOMIC_CMP_AND_SWP, 8 },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, 8 }, { IBV_WR_RDMA_READ, 1024 },
		{ IBV_WR_SEND, 3000 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rq); i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)lb + i * 4096,
			.length = rq[i].len,
			.lkey = g.lmr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = wrid(T_RCC, WR_REQ, i),
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = rq[i].op,
			.send_flags = IBV_SEND_SIGNALED,
		};

		if (rq[i].op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    rq[i].op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = 0x10000;
			wr.wr.atomic.rkey = 0x1234;
			wr.wr.atomic.compare_add = 1;
		} else {
			wr.wr.rdma.remote_addr = 0x10000;
			wr.wr.rdma.rkey = 0x1234;
		}
		if (post_send1(t->qp, &wr))
			break;
		g.stuck_out++;
		t->req_next = (t->req_next + (rq[i].len + MTU - 1) / MTU) &
			      PSN_MASK;
	}
}

/* (Re)bind the type 2 window over part of the target MR, through RCA. */
static void mw_bind(void)
{
	struct ibv_send_wr wr = {
		.wr_id = wrid(T_RCA, WR_BIND, 0),
		.opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	};

	if (!g.mw || g.mw_fail > 3)
		return;
	g.mw_rkey = ibv_inc_rkey(g.mw_rkey);
	wr.bind_mw.mw = g.mw;
	wr.bind_mw.rkey = g.mw_rkey;
	wr.bind_mw.bind_info.mr = g.tmr;
	wr.bind_mw.bind_info.addr = (uintptr_t)g.tbuf + MW_OFF;
	wr.bind_mw.bind_info.length = MW_LEN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (post_send1(g.t[T_RCA].qp, &wr))
		g.mw_fail++;
	else
		g.mw_valid = true;	/* until a completion says otherwise */
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return IBV_QPS_ERR;
	return a.qp_state;
}

static void drain_cq(void)
{
	struct ibv_wc wc[64];
	int n, i;

	while ((n = ibv_poll_cq(g.cq, 64, wc)) > 0) {
		for (i = 0; i < n; i++) {
			int kind = wc[i].wr_id >> 40;
			int id = (wc[i].wr_id >> 32) & 0xff;

			st.cqe++;
			if (wc[i].status != IBV_WC_SUCCESS)
				st.cqe_err++;
			if (kind == WR_RECV && id < T_NUM && g.t[id].posted)
				g.t[id].posted--;
			if (kind == WR_REQ && g.stuck_out)
				g.stuck_out--;
			if (kind == WR_BIND && wc[i].status != IBV_WC_SUCCESS) {
				g.mw_valid = false;
				g.mw_fail++;
			}
			if (kind == WR_RECV &&
			    (wc[i].wc_flags & IBV_WC_WITH_INV) &&
			    wc[i].invalidated_rkey == g.mw_rkey)
				g.mw_valid = false;
		}
	}
}

/* Bring back whatever the last packets moved to the error state. */
static void service(void)
{
	int id;

	drain_cq();
	for (id = 0; id < T_NUM; id++) {
		struct tgt *t = &g.t[id];
		enum ibv_qp_state s = qp_state(t->qp);

		if (s != IBV_QPS_RTS) {
			if (bring_up(id, rnd(PSN_MASK + 1),
				     rnd(PSN_MASK + 1)))
				die("%s: cannot bring the QP back up: %s",
				    t->name, strerror(errno));
			t->rearms++;
			st.rearms++;
			if (id == T_RCC) {
				g.stuck_out = 0;
				stuck_requests();
			}
			if (id == T_RCA)
				g.mw_valid = false;
		} else if (t->type != IBV_QPT_RC || id != T_RCC) {
			post_recvs(id);
		}
	}
	/* forged ACKs completed them all: give the responses a target */
	if (!g.stuck_out)
		stuck_requests();
	if (!g.mw_valid)
		mw_bind();
}

static uint32_t hw_counter(const char *name)
{
	char path[256];
	unsigned long v = 0;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 opt.dev, name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%lu", &v) != 1)
		v = 0;
	fclose(f);
	return (uint32_t)v;
}

static void setup_verbs(void)
{
	struct ibv_device_attr da;
	int i;

	g.ctx = open_dev(opt.dev);
	if (!g.ctx)
		die("cannot open %s", opt.dev);
	if (ibv_query_gid(g.ctx, 1, opt.gid4, &g.gid4))
		die("no GID %d", opt.gid4);
	if (g.have6 && ibv_query_gid(g.ctx, 1, opt.gid6, &g.gid6))
		die("no GID %d", opt.gid6);
	g.pd = ibv_alloc_pd(g.ctx);
	g.cq = ibv_create_cq(g.ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!g.pd || !g.cq)
		die("PD/CQ: %s", strerror(errno));
	g.tbuf = aligned_alloc(4096, TMR_LEN);
	g.lbuf = aligned_alloc(4096, (size_t)T_NUM * RQ_DEPTH * RBUF_LEN / 4 +
			       65536);
	if (!g.tbuf || !g.lbuf)
		die("out of memory");
	memset(g.tbuf, 0xab, TMR_LEN);
	g.tmr = ibv_reg_mr(g.pd, g.tbuf, TMR_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	g.lmr = ibv_reg_mr(g.pd, g.lbuf, (size_t)T_NUM * RQ_DEPTH *
			   RBUF_LEN / 4 + 65536, IBV_ACCESS_LOCAL_WRITE);
	if (!g.tmr || !g.lmr)
		die("reg_mr: %s", strerror(errno));

	tgt_def(T_RCA, "RC-A", IBV_QPT_RC, false, T_RCB);
	tgt_def(T_RCB, "RC-B", IBV_QPT_RC, false, T_RCA);
	tgt_def(T_RCC, "RC-stuck", IBV_QPT_RC, false, -1);
	tgt_def(T_RCA6, "RC-A6", IBV_QPT_RC, g.have6, T_RCB6);
	tgt_def(T_RCB6, "RC-B6", IBV_QPT_RC, g.have6, T_RCA6);
	tgt_def(T_UCA, "UC-A", IBV_QPT_UC, false, T_UCB);
	tgt_def(T_UCB, "UC-B", IBV_QPT_UC, false, T_UCA);
	tgt_def(T_UD, "UD", IBV_QPT_UD, false, -1);
	for (i = 0; i < T_NUM; i++) {
		struct tgt *t = &g.t[i];

		t->dqpn = t->peer >= 0 ? g.t[t->peer].qp->qp_num : DEAD_QPN;
		if (t->peer >= 0 && t->peer < i)
			continue;
		if (t->peer >= 0 ? pair_up(i, t->peer) :
		    bring_up(i, rnd(PSN_MASK + 1), rnd(PSN_MASK + 1)))
			die("%s: bring-up: %s", t->name, strerror(errno));
	}
	stuck_requests();

	if (!ibv_query_device(g.ctx, &da) && da.max_mw) {
		g.mw = ibv_alloc_mw(g.pd, IBV_MW_TYPE_2);
		if (g.mw) {
			g.mw_rkey = g.mw->rkey;
			mw_bind();
		}
	}

	/* the UD QP listens on a group of each family */
	inet_pton(AF_INET, "239.1.2.3", &g.grp4);
	inet_pton(AF_INET6, "ff0e::1:2:3", &g.grp6);
	{
		union ibv_gid mg = { .raw = { [10] = 0xff, [11] = 0xff } };

		memcpy(mg.raw + 12, &g.grp4, 4);
		if (ibv_attach_mcast(g.t[T_UD].qp, &mg, 0))
			fprintf(stderr, "attach %s: %s\n", "239.1.2.3",
				strerror(errno));
		memcpy(mg.raw, &g.grp6, 16);
		if (g.have6 && ibv_attach_mcast(g.t[T_UD].qp, &mg, 0))
			fprintf(stderr, "attach %s: %s\n", "ff0e::1:2:3",
				strerror(errno));
	}
	usleep(100000);
	service();
}

/* ---- sockets */

/*
 * A UDP socket bound to the device's own address, for the paged packets.
 * Unconnected and with DF, IPv4 sends them with an ID of 0, so the
 * header the kernel writes is one wrap() can seal an ICRC over.
 */
static int udp_socket(int family, uint16_t *port)
{
	struct sockaddr_storage ss = { .ss_family = family };
	socklen_t sl = family == AF_INET ? sizeof(struct sockaddr_in) :
					   sizeof(struct sockaddr_in6);
	int fd = socket(family, SOCK_DGRAM, IPPROTO_UDP);
	int pmtu = IP_PMTUDISC_DO;

	if (fd < 0)
		die("UDP socket: %s", strerror(errno));
	if (family == AF_INET) {
		((struct sockaddr_in *)&ss)->sin_addr = g.ip4;
		if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu,
			       sizeof(pmtu)))
			die("IP_MTU_DISCOVER: %s", strerror(errno));
	} else {
		((struct sockaddr_in6 *)&ss)->sin6_addr = g.ip6;
	}
	if (bind(fd, (void *)&ss, sl) || getsockname(fd, (void *)&ss, &sl))
		die("bind UDP: %s", strerror(errno));
	*port = ntohs(family == AF_INET ?
		      ((struct sockaddr_in *)&ss)->sin_port :
		      ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

static void setup_sockets(void)
{
	int ifindex = if_nametoindex(opt.netdev);
	struct ip_mreqn mr = { .imr_ifindex = ifindex };

	if (!ifindex)
		die("no netdev %s", opt.netdev);
	g.s4 = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	g.s4m = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (g.s4 < 0 || g.s4m < 0)
		die("raw socket: %s (needs CAP_NET_RAW)", strerror(errno));
	if (setsockopt(g.s4m, IPPROTO_IP, IP_MULTICAST_IF, &mr, sizeof(mr)))
		die("IP_MULTICAST_IF: %s", strerror(errno));
	g.u4 = udp_socket(AF_INET, &g.u4port);
	g.s6 = g.s6m = g.u6 = -1;
	if (!g.have6)
		return;
	g.s6 = socket(AF_INET6, SOCK_RAW, IPPROTO_RAW);
	g.s6m = socket(AF_INET6, SOCK_RAW, IPPROTO_RAW);
	if (g.s6 < 0 || g.s6m < 0)
		die("raw IPv6 socket: %s", strerror(errno));
	if (setsockopt(g.s6m, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex,
		       sizeof(ifindex)))
		die("IPV6_MULTICAST_IF: %s", strerror(errno));
	g.u6 = udp_socket(AF_INET6, &g.u6port);
}

static void dump_pkt(const struct pkt *p)
{
	size_t i;

	if (!g.dump)
		return;
	fprintf(g.dump, "%lu %s%s%s ", st.sent, p->v6 ? "v6" : "v4",
		p->mcast ? "m" : "", p->paged ? "p" : "");
	for (i = 0; i < p->len; i++)
		fprintf(g.dump, "%02x", p->b[i]);
	fputc('\n', g.dump);
}

/*
 * The UDP payload of @p through a UDP socket, in two or three pieces: all
 * but the last with MSG_MORE, so that the kernel builds one datagram whose
 * first piece is in the head and the rest in a page fragment.
 */
static ssize_t send_paged(struct pkt *p, const struct sockaddr *to,
			  socklen_t tolen)
{
	size_t iplen = p->v6 ? 40 : 20;
	const uint8_t *pay = p->b + iplen + 8;
	size_t len = p->len - iplen - 8, cut[3], at = 0;
	int fd = p->v6 ? g.u6 : g.u4, i, k = chance(70) ? 2 : 3;
	ssize_t n, sent = 0;

	cut[0] = rnd(len + 1);
	cut[1] = cut[0] + rnd(len - cut[0] + 1);
	cut[k - 1] = len;
	for (i = 0; i < k; i++) {
		n = sendto(fd, pay + at, cut[i] - at,
			   MSG_DONTWAIT | (i < k - 1 ? MSG_MORE : 0), to,
			   tolen);
		if (n < 0)
			return n;
		sent += n;
		at = cut[i];
	}
	st.paged++;
	return sent + iplen + 8;
}

static void send_pkt(struct pkt *p)
{
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	int fd;
	ssize_t n;

	dump_pkt(p);
	if (p->paged) {
		s4.sin_port = s6.sin6_port = htons(ROCE_PORT);
		memcpy(&s6.sin6_addr, p->b + 24, 16);
		memcpy(&s4.sin_addr, p->b + 16, 4);
		n = p->v6 ? send_paged(p, (void *)&s6, sizeof(s6)) :
			    send_paged(p, (void *)&s4, sizeof(s4));
	} else if (p->v6) {
		fd = p->mcast ? g.s6m : g.s6;
		memcpy(&s6.sin6_addr, p->b + 24, 16);
		n = sendto(fd, p->b, p->len, MSG_DONTWAIT, (void *)&s6,
			   sizeof(s6));
	} else {
		fd = p->mcast ? g.s4m : g.s4;
		memcpy(&s4.sin_addr, p->b + 16, 4);
		n = sendto(fd, p->b, p->len, MSG_DONTWAIT, (void *)&s4,
			   sizeof(s4));
	}
	st.sent++;
	if (n != (ssize_t)p->len) {
		st.send_err++;
		if (errno == ENOBUFS || errno == EAGAIN)
			usleep(1000);
	}
}

/* ---- packet construction */

/* The IB packet (from the BTH) as the generator decided it. */
struct ib {
	size_t hdr;		/* BTH and extension headers */
	size_t pay;		/* payload bytes */
	uint8_t pad;		/* pad bytes actually present */
	bool v6, mcast;
	bool spoof;
	bool paged;		/* through a UDP socket: see send_paged() */
	bool bad_icrc;
	int trunc;		/* -1: none; else IB bytes kept, ICRC included */
	int trailer;		/* bytes after the UDP datagram's end */
	uint32_t qpn;
	uint8_t b[PKT_MAX];	/* last: only its head is cleared */
};

static const uint32_t src4_spoof[] = {
	0xc0000263, /* 192.0.2.99 */ 0x0a000001, 0x7f000001, 0x00000000,
	0xffffffff, 0xe0000001, 0xc000020c, /* 192.0.2.12 */
};

/* Wrap @ib in UDP and IP, seal it with an ICRC, into @p. */
static void wrap(struct ib *ib, struct pkt *p)
{
	size_t iplen = ib->v6 ? 40 : 20;
	size_t ib_len = ib->hdr + ib->pay + ib->pad;	/* before the ICRC */
	size_t dgram, total;
	uint8_t *ip = p->b, *udp = p->b + iplen;
	uint32_t c;

	if (ib_len > PKT_MAX - 60 - 4 - 64)
		ib_len = PKT_MAX - 60 - 4 - 64;
	memcpy(udp + 8, ib->b, ib_len);
	if (ib->trunc >= 0 && (size_t)ib->trunc < ib_len + 4) {
		st.truncated++;
		ib_len = ib->trunc >= 4 ? ib->trunc - 4 : 0;
	}
	dgram = 8 + ib_len + (ib->trunc >= 0 && ib->trunc < 4 ?
			      (size_t)ib->trunc : 4);
	total = iplen + dgram + ib->trailer;
	memset(ip, 0, iplen + 8);
	if (ib->v6) {
		ip[0] = 0x60 | rnd(16);
		ip[1] = rnd(256);
		put16(ip + 2, rnd(65536));
		put16(ip + 4, dgram + ib->trailer);
		ip[6] = IPPROTO_UDP;
		ip[7] = 1 + rnd(255);
		if (ib->mcast)
			memcpy(ip + 24, &g.grp6, 16);
		else
			memcpy(ip + 24, &g.ip6, 16);
		memcpy(ip + 8, &g.ip6, 16);
		if (ib->spoof) {
			ip[8 + 15] ^= 1 + rnd(255);
			if (chance(30))
				ip[8 + rnd(15)] ^= 1 + rnd(255);
		}
	} else {
		uint32_t src = ntohl(g.ip4.s_addr);

		ip[0] = 0x45;
		ip[1] = rnd(256);
		put16(ip + 2, total);
		/* 0 would be rewritten; a paged packet's is 0 */
		put16(ip + 4, ib->paged ? 0 : 1 + rnd(65535));
		ip[6] = 0x40;			/* DF */
		ip[8] = 1 + rnd(255);
		ip[9] = IPPROTO_UDP;
		if (ib->spoof)
			src = chance(50) ? pick32(src4_spoof,
					sizeof(src4_spoof) / 4) : (uint32_t)rnd64();
		put32(ip + 12, src);
		memcpy(ip + 16, ib->mcast ? (void *)&g.grp4 : (void *)&g.ip4,
		       4);
	}
	if (ib->paged)
		put16(udp, ib->v6 ? g.u6port : g.u4port);
	else
		put16(udp, chance(80) ? 0xc000 + rnd(0x4000) : rnd(65536));
	put16(udp + 2, ROCE_PORT);
	put16(udp + 4, dgram);
	if (ib->trunc < 0 || (size_t)ib->trunc >= 4) {
		c = icrc(ip, ib->v6, ib_len);
		if (ib->bad_icrc)
			c ^= 1u << rnd(32);
		/* the ICRC is sent least significant byte first */
		udp[8 + ib_len] = c;
		udp[8 + ib_len + 1] = c >> 8;
		udp[8 + ib_len + 2] = c >> 16;
		udp[8 + ib_len + 3] = c >> 24;
	} else {
		memcpy(udp + 8 + ib_len, ib->b, ib->trunc);
	}
	if (ib->trailer)
		memset(udp + dgram, 0x5a, ib->trailer);
	/*
	 * UDP checksum: none over IPv4; IPv6 requires one (or the tunnel
	 * socket's zero-checksum allowance)
	 */
	if (ib->v6 && chance(90)) {
		uint32_t s = csum_add(0, ip + 8, 32);
		uint16_t k;

		s += dgram + IPPROTO_UDP;
		s = csum_add(s, udp, dgram);
		k = csum_fold(s);
		put16(udp + 6, k ? k : 0xffff);
	}
	p->len = total;
	p->v6 = ib->v6;
	p->mcast = ib->mcast;
	p->paged = ib->paged;
}

static uint64_t pick_va(uint32_t len)
{
	uint64_t base = (uintptr_t)g.tbuf;

	switch (rnd(14)) {
	case 0:
		return 0;
	case 1:
		return ~0ULL;
	case 2:
		return ~0ULL - rnd(4096);
	case 3:
		return 1ULL << 63;
	case 4:
		return base + TMR_LEN;
	case 5:
		return base + TMR_LEN - len;
	case 6:
		return base + TMR_LEN - len + 1 + rnd(8);
	case 7:
		return base - 1 - rnd(64);
	case 8:
		return rnd64();
	case 9:
		return base + MW_OFF + rnd(MW_LEN);
	case 10:
		return (base + MW_OFF + MW_LEN - 8) & ~7ULL;
	default:
		return base + rnd(len < TMR_LEN ? TMR_LEN - len : 1);
	}
}

static uint32_t pick_rkey(void)
{
	switch (rnd(12)) {
	case 0:
		return 0;
	case 1:
		return (uint32_t)rnd64();
	case 2: return g.tmr->rkey ^ (1 + rnd(255));	/* other key byte */
	case 3: return g.tmr->rkey + 256;		/* next index */
	case 4:
		return g.tmr->lkey;
	case 5:
	case 6:
	case 7:
		return g.mw ? g.mw_rkey : g.tmr->rkey;
	default:
		return g.tmr->rkey;
	}
}

static uint32_t pick_len(void)
{
	static const uint32_t v[] = {
		0, 1, 7, 8, 9, MTU - 1, MTU, MTU + 1, 2 * MTU, 4096,
		TMR_LEN, TMR_LEN + 1, MW_LEN, 0x7fffffff, 0x80000000,
		0xffffffff, 0xfffffffc,
	};

	return chance(75) ? pick32(v, sizeof(v) / 4) : (uint32_t)rnd64();
}

static size_t pick_pay(uint8_t ext, uint8_t low)
{
	static const uint32_t v[] = { 0, 1, 2, 3, 4, 5, 8, 255, 256, 257,
				      MTU - 1, MTU, MTU + 1, 1500, 2048,
				      4096, 4097, 8000 };

	if (!(ext & X_PAY))
		return chance(90) ? 0 : rnd(64);
	if (ext & X_ATMWR)
		return chance(80) ? 8 : rnd(32);
	/* first and middle packets carry exactly one MTU */
	if ((low == 0x00 || low == 0x01 || low == 0x06 || low == 0x07 ||
	     low == 0x0d || low == 0x0e) && chance(60))
		return MTU;
	if (chance(50))
		return 1 + rnd(MTU);
	return pick32(v, sizeof(v) / 4);
}

static uint8_t pick_syndrome(void)
{
	switch (rnd(8)) {
	case 0:
	case 1:
		return rnd(32);			/* ACK + credits */
	case 2:
		return 0x1f;			/* invalid credit */
	case 3:
		return 0x20 | rnd(32);		/* RNR NAK */
	case 4:
	case 5:
		return 0x60 | rnd(5);		/* NAK codes */
	case 6:
		return 0x60 | rnd(32);		/* reserved NAKs */
	default:
		return rnd(256);		/* reserved types */
	}
}

/* Fill extension headers for @low at @h; returns the bytes used. */
static size_t fill_ext(uint8_t *h, uint8_t ext, uint64_t va, uint32_t rkey,
		       uint32_t len)
{
	uint8_t *p = h;

	if (ext & X_RETH) {
		put64(p, va);
		put32(p + 8, rkey);
		put32(p + 12, len);
		p += RETH_LEN;
	}
	if (ext & X_AETH) {
		put32(p, (uint32_t)pick_syndrome() << 24 | rnd(1 << 24));
		p += AETH_LEN;
	}
	if (ext & X_ATMETH) {
		put64(p, va);
		put32(p + 8, rkey);
		put64(p + 12, rnd64());
		put64(p + 20, chance(50) ? 0xababababababababULL : rnd64());
		p += ATMETH_LEN;
	}
	if (ext & X_ATMACK) {
		put64(p, rnd64());
		p += ATMACK_LEN;
	}
	if (ext & X_IMM) {
		put32(p, (uint32_t)rnd64());
		p += IMM_LEN;
	}
	if (ext & X_IETH) {
		put32(p, chance(80) ? pick_rkey() : (uint32_t)rnd64());
		p += IETH_LEN;
	}
	return p - h;
}

static void fill_bth(struct ib *ib, uint8_t opcode, uint32_t qpn,
		     uint32_t psn)
{
	uint8_t *b = ib->b;
	uint8_t flags = chance(20) ? 0x80 : 0;	/* solicited event */

	if (chance(5))
		flags |= 0x40;			/* MigReq */
	if (chance(3))
		flags |= 1 + rnd(15);		/* transport version */
	b[0] = opcode;
	b[1] = flags;
	if (chance(95))
		put16(b + 2, 0xffff);
	else
		put16(b + 2, chance(50) ? 0x7fff : rnd(65536));
	put32(b + 4, qpn & PSN_MASK);
	if (chance(10))
		b[4] = rnd(256);		/* FECN, BECN, resv6 */
	put32(b + 8, psn & PSN_MASK);
	if (chance(30))
		b[8] = 0x80;			/* AckReq */
	if (chance(2))
		b[8] |= rnd(128);		/* reserved bits */
	ib->qpn = qpn;
}

/* Payload bytes and the pad; the BTH's PadCnt normally matches. */
static void fill_payload(struct ib *ib, size_t pay)
{
	uint8_t padcnt;

	if (ib->hdr + pay > PKT_MAX - 128)
		pay = PKT_MAX - 128 - ib->hdr;
	ib->pay = pay;
	padcnt = (-pay) & 3;
	ib->pad = padcnt;
	if (chance(8)) {
		st.bad_pad++;
		padcnt = rnd(4);
		if (chance(50))
			ib->pad = padcnt;	/* pad bytes present, size odd */
	}
	ib->b[1] = (ib->b[1] & ~0x30) | padcnt << 4;
	if (pay)
		memset(ib->b + ib->hdr, (uint8_t)rnd(256), pay);
	if (pay > 8)
		put64(ib->b + ib->hdr, rnd64());
	memset(ib->b + ib->hdr + pay, 0, ib->pad);
}

static uint32_t psn_near(uint32_t expected)
{
	switch (rnd(10)) {
	case 0: return expected + 1 + rnd(4);		/* a gap */
	case 1: return expected + 1 + rnd(600);		/* past the queue */
	case 2: return expected - 1 - rnd(8);		/* duplicate */
	case 3:
		return (uint32_t)rnd64();
	default:
		return expected;
	}
}

/* One packet of a well-formed message to RC/UC target @t at its PSN. */
static void gen_coherent(struct ib *ib, struct tgt *t, uint8_t svc)
{
	static const uint8_t starts_rc[] = { 0x00, 0x04, 0x05, 0x17, 0x06,
					     0x0a, 0x0b, 0x0c, 0x13, 0x14,
					     0x1d };
	static const uint8_t starts_uc[] = { 0x00, 0x04, 0x05, 0x06, 0x0a,
					     0x0b };
	uint8_t low, ext;
	uint32_t pay, len = 0, npk;

	if (!t->msg_left) {
		low = svc == SVC_RC ?
		      starts_rc[rnd(sizeof(starts_rc))] :
		      starts_uc[rnd(sizeof(starts_uc))];
		npk = low == 0x00 || low == 0x06 ? 2 + rnd(3) : 1;
		t->msg_len = low == 0x0c ? 1 + rnd(3 * MTU) :
			     low == 0x1d ? 8 :
			     (npk - 1) * MTU + 1 + rnd(MTU);
		if (low == 0x13 || low == 0x14)
			t->msg_len = 8;
		t->msg_va = (uintptr_t)g.tbuf +
			    (rnd(TMR_LEN - t->msg_len) & ~7u);
		if (chance(20))
			t->msg_va = (uintptr_t)g.tbuf + MW_OFF +
				    (rnd(MW_LEN - (t->msg_len < MW_LEN ?
						    t->msg_len : MW_LEN - 8)) &
				     ~7u);
		t->msg_left = npk;
		t->msg_op = low;
		len = t->msg_len;
	} else {
		low = t->msg_op;
	}
	ext = op_ext[low];
	if (low == 0x0c || low == 0x13 || low == 0x14 || low == 0x1d)
		pay = low == 0x1d ? 8 : 0;
	else if (t->msg_left > 1)
		pay = MTU;
	else
		pay = t->msg_len - (t->msg_len - 1) / MTU * MTU;
	fill_bth(ib, svc | low, t->qp->qp_num, t->epsn);
	ib->b[1] &= ~0x0f;			/* keep TVer 0 here */
	put16(ib->b + 2, 0xffff);
	ib->hdr = BTH_LEN + fill_ext(ib->b + BTH_LEN, ext, t->msg_va,
				      (t->msg_va >= (uintptr_t)g.tbuf + MW_OFF &&
				       t->msg_va < (uintptr_t)g.tbuf + MW_OFF +
				       MW_LEN && g.mw) ? g.mw_rkey :
				      g.tmr->rkey, len);
	fill_payload(ib, pay);
	t->epsn = (t->epsn + (low == 0x0c ? (t->msg_len + MTU - 1) / MTU :
			      1)) & PSN_MASK;
	if (--t->msg_left) {
		/* next: middle or last of the same kind */
		if (low == 0x00 || low == 0x01)
			t->msg_op = t->msg_left > 1 ? 0x01 :
				    chance(30) ? 0x03 : chance(30) ? 0x16 :
				    0x02;
		else
			t->msg_op = t->msg_left > 1 ? 0x07 :
				    chance(30) ? 0x09 : 0x08;
		if (svc == SVC_UC && t->msg_op == 0x16)
			t->msg_op = 0x02;
	}
}

/* A packet with random fields from pools of extremes. */
static void gen_random(struct ib *ib, uint8_t opcode, uint32_t qpn,
		       uint32_t psn)
{
	uint8_t low = opcode & 0x1f, svc = opcode & 0xe0;
	uint8_t ext = op_ext[low];
	size_t deth = 0;

	if (!ext && low != 0x11)
		st.undefined++;
	if (svc != SVC_RC && svc != SVC_UC && svc != SVC_UD)
		st.undefined++;
	fill_bth(ib, opcode, qpn, psn);
	if (svc == SVC_UD) {
		uint8_t *d = ib->b + BTH_LEN;
		static const uint32_t qk[] = { UD_QKEY, GSI_QKEY, 0,
					       0x80000000, 0xffffffff };

		put32(d, chance(80) ? (qpn == 1 ? GSI_QKEY : UD_QKEY) :
			 chance(70) ? pick32(qk, 5) : (uint32_t)rnd64());
		put32(d + 4, chance(90) ? rnd(1 << 24) : (uint32_t)rnd64());
		deth = DETH_LEN;
	}
	ib->hdr = BTH_LEN + deth;
	ib->hdr += fill_ext(ib->b + ib->hdr, ext, pick_va(256),
			    pick_rkey(), pick_len());
	fill_payload(ib, pick_pay(ext, low));
}

/* A PSN for a response to @t's requests: mostly inside its window. */
static uint32_t id_psn_window(struct tgt *t)
{
	if (chance(85))
		return t->req_next - 1 - rnd(24);
	return psn_near(t->req_next);
}

static uint8_t rc_request_op(void)
{
	static const uint8_t ops[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
				       0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
				       0x0c, 0x13, 0x14, 0x16, 0x17, 0x1d };

	return ops[rnd(sizeof(ops))];
}

/* The next packet of the random phase. */
static void gen_one(struct ib *ib)
{
	uint32_t r = rnd(100);
	struct tgt *t;
	enum tgt_id id;

	memset(ib, 0, offsetof(struct ib, b) + 64);
	ib->trunc = -1;
	ib->spoof = chance(5);
	ib->bad_icrc = chance(4);
	if (ib->bad_icrc)
		st.bad_icrc++;

	if (r < 8) {				/* QP1: MADs and junk */
		st.qp1++;
		gen_random(ib, SVC_UD | (chance(80) ? 0x04 : rnd(32)), 1, 0);
		if (chance(60)) {
			/* something shaped like a MAD */
			uint8_t *m = ib->b + ib->hdr;
			static const uint8_t cls[] = { 0x01, 0x03, 0x04, 0x07,
						       0x81, 0x0a, 0x21 };

			fill_payload(ib, chance(70) ? 256 : 1 + rnd(600));
			if (ib->pay >= 4) {
				m[0] = 1;
				m[1] = cls[rnd(sizeof(cls))];
				m[2] = 1 + rnd(2);
				m[3] = rnd(256);
			}
		}
	} else if (r < 14) {			/* multicast to the UD QP */
		st.mcast++;
		ib->mcast = true;
		ib->v6 = g.have6 && chance(40);
		gen_random(ib, chance(85) ? SVC_UD | 0x04 : (uint8_t)rnd(256),
			   chance(90) ? MCAST_QPN : rnd(1 << 24), 0);
		if (ib->hdr + ib->pay > MCAST_IB_MAX)
			fill_payload(ib, rnd(MCAST_IB_MAX - ib->hdr));
	} else if (r < 22) {			/* unicast UD */
		t = &g.t[T_UD];
		gen_random(ib, chance(85) ? SVC_UD | (chance(70) ? 0x04 : 0x05)
			   : (uint8_t)rnd(256), t->qp->qp_num, rnd(1 << 24));
	} else if (r < 34) {			/* responses to the requester */
		static const uint8_t resp[] = { 0x0d, 0x0e, 0x0f, 0x10, 0x11,
						0x11, 0x11, 0x12 };
		uint32_t psn;

		t = &g.t[chance(85) ? T_RCC : T_RCB];
		psn = id_psn_window(t);
		gen_random(ib, SVC_RC | resp[rnd(sizeof(resp))],
			   t->qp->qp_num, psn);
	} else if (r < 36) {			/* nobody's QPN */
		gen_random(ib, (uint8_t)rnd(256), chance(50) ? rnd(64) :
			   rnd(1 << 24), rnd(1 << 24));
	} else {				/* requests to RC/UC responders */
		static const enum tgt_id ids[] = { T_RCA, T_RCA, T_RCA, T_RCA6,
						   T_UCA, T_RCC, T_RCB };
		uint8_t svc;

		id = ids[rnd(ARRAY_SIZE(ids))];
		if (id == T_RCA6 && !g.have6)
			id = T_RCA;
		t = &g.t[id];
		svc = t->type == IBV_QPT_UC ? SVC_UC : SVC_RC;
		ib->v6 = t->v6;
		if (chance(5))
			ib->v6 = g.have6 && !ib->v6;	/* not its path */
		if (chance(55)) {
			gen_coherent(ib, t, svc);
		} else if (chance(80)) {
			gen_random(ib, svc | rc_request_op(), t->qp->qp_num,
				   psn_near(t->epsn));
		} else {
			gen_random(ib, (uint8_t)rnd(256), t->qp->qp_num,
				   psn_near(t->epsn));
		}
	}
	if (!ib->mcast && r >= 14 && r < 36 && g.have6 && chance(15))
		ib->v6 = true;
	if (ib->v6)
		st.v6++;
	if (ib->spoof)
		st.spoofed++;
	/* mutations of an otherwise good packet */
	if (chance(6))
		ib->trunc = rnd(ib->hdr + ib->pay + ib->pad + 4);
	if (chance(4) && ib->hdr)
		ib->b[rnd(ib->hdr)] ^= 1 << rnd(8);
	if (chance(1))
		ib->trailer = 1 + rnd(16);
}

/* Sweep: every opcode at every IB length from 0 to 71, valid ICRC. */
static void gen_sweep(struct ib *ib, unsigned long n)
{
	uint8_t opcode = n / 72;
	unsigned int len = n % 72;
	uint8_t svc = opcode & 0xe0;
	uint32_t qpn = svc == SVC_UC ? g.t[T_UCA].qp->qp_num :
		       svc == SVC_UD ? (n & 1 ? 1 : g.t[T_UD].qp->qp_num) :
		       (opcode & 0x1f) >= 0x0d && (opcode & 0x1f) <= 0x12 ?
		       g.t[T_RCC].qp->qp_num : g.t[T_RCA].qp->qp_num;
	struct tgt *t = NULL;
	int i;

	for (i = 0; i < T_NUM; i++)
		if (g.t[i].qp->qp_num == qpn)
			t = &g.t[i];
	memset(ib, 0, offsetof(struct ib, b) + 64);
	ib->trunc = -1;
	gen_random(ib, opcode, qpn, !t ? 0 : t == &g.t[T_RCC] ?
		   id_psn_window(t) : t->epsn);
	/* pad as the length leaves it; payload bytes fill up to @len */
	if (len + 0u > ib->hdr + 4) {
		ib->pay = len - 4 - ib->hdr;
		ib->pad = 0;
		ib->b[1] = (ib->b[1] & ~0x30) | (n & 3) << 4;
	} else {
		ib->pay = 0;
		ib->pad = 0;
		ib->trunc = len;
	}
}

static void run_fuzz(void)
{
	unsigned long sweep = 256 * 72, i;
	struct ib *ib = malloc(sizeof(*ib));
	struct pkt *p = malloc(sizeof(*p));
	time_t t0 = time(NULL);

	if (!ib || !p)
		die("out of memory");
	if (sweep > opt.npkts / 2)
		sweep = opt.npkts / 2;
	for (i = 0; i < opt.npkts; i++) {
		if (i < sweep)
			gen_sweep(ib, i * (256 * 72) / sweep);
		else
			gen_one(ib);
		/* the kernel writes a paged packet's IP and UDP headers */
		ib->paged = !ib->spoof && !ib->mcast && !ib->trailer &&
			    chance(25);
		wrap(ib, p);
		send_pkt(p);
		if (i % BATCH == BATCH - 1)
			service();
		if (i % 10000 == 9999) {
			printf("sent %lu packets (%lds), %lu QP re-arms\n",
			       i + 1, (long)(time(NULL) - t0), st.rearms);
			fflush(stdout);
		}
	}
	usleep(200000);
	service();
	free(ib);
	free(p);
}

/* ---- checks */

static void pattern(uint8_t *b, size_t n, uint64_t salt)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ salt;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = x >> 24;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Wait up to @secs for @nsend successful send completions of kind
 * WR_CHECK and @nrecv receives on @rid; copy the first receive's buffer
 * address and length out. Other completions are counted and ignored.
 */
static int wait_check(int nsend, enum tgt_id rid, int nrecv, double secs,
		      uint8_t **rbuf, uint32_t *rlen)
{
	double end = now_s() + secs;
	struct ibv_wc wc;

	while ((nsend > 0 || nrecv > 0) && now_s() < end) {
		int kind, id;

		if (ibv_poll_cq(g.cq, 1, &wc) <= 0) {
			usleep(1000);
			continue;
		}
		kind = wc.wr_id >> 40;
		id = (wc.wr_id >> 32) & 0xff;
		if (kind == WR_CHECK) {
			if (wc.status != IBV_WC_SUCCESS) {
				fprintf(stderr, "check WR %u: %s\n",
					(unsigned int)wc.wr_id,
					ibv_wc_status_str(wc.status));
				return -1;
			}
			nsend--;
		} else if (kind == WR_RECV && id == (int)rid) {
			uint32_t slot = wc.wr_id & 0xffffffff;

			if (wc.status != IBV_WC_SUCCESS) {
				fprintf(stderr, "%s receive: %s\n",
					g.t[rid].name,
					ibv_wc_status_str(wc.status));
				return -1;
			}
			if (rbuf && nrecv > 0) {
				*rbuf = g.lbuf + (uint64_t)rid * RQ_DEPTH *
					RBUF_LEN / 4 + (slot % 4) * RBUF_LEN;
				*rlen = wc.byte_len;
			}
			nrecv--;
		}
	}
	if (nsend > 0 || nrecv > 0) {
		fprintf(stderr, "check: %d sends and %d receives still missing\n",
			nsend, nrecv);
		return -1;
	}
	return 0;
}

/* Drain everything pending (forged traffic's completions) quietly. */
static void quiesce(void)
{
	usleep(300000);
	drain_cq();
}

/*
 * The RC pair @a/@b (brought up fresh if @fresh, else as it is): @b
 * WRITEs, SENDs and READs back; every byte must be where it belongs.
 */
static int check_transfer(enum tgt_id a, enum tgt_id b, bool fresh)
{
	uint8_t *cbuf = aligned_alloc(4096, CHECK_LEN);
	uint8_t *sbuf = aligned_alloc(4096, 2 * CHECK_LEN);
	uint8_t *want = malloc(CHECK_LEN), *rb = NULL;
	struct ibv_mr *cmr, *smr;
	uint32_t rlen = 0;
	int err = -1;

	if (!cbuf || !sbuf || !want)
		die("out of memory");
	memset(cbuf, 0, CHECK_LEN);
	memset(sbuf + CHECK_LEN, 0, CHECK_LEN);
	pattern(sbuf, CHECK_LEN, 0x5eed);
	memcpy(want, sbuf, CHECK_LEN);
	cmr = ibv_reg_mr(g.pd, cbuf, CHECK_LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	smr = ibv_reg_mr(g.pd, sbuf, 2 * CHECK_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!cmr || !smr)
		die("check reg_mr: %s", strerror(errno));
	if (fresh)
		quiesce();
	if (fresh && pair_up(a, b)) {
		fprintf(stderr, "check: bring-up: %s\n", strerror(errno));
		goto out;
	}
	{
		struct ibv_sge s1 = { (uintptr_t)sbuf, CHECK_LEN, smr->lkey };
		struct ibv_sge s2 = { (uintptr_t)sbuf + 100, 2000, smr->lkey };
		struct ibv_sge s3 = { (uintptr_t)sbuf + CHECK_LEN, CHECK_LEN,
				      smr->lkey };
		struct ibv_send_wr w3 = {
			.wr_id = wrid(b, WR_CHECK, 3), .sg_list = &s3,
			.num_sge = 1, .opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)cbuf, cmr->rkey },
		};
		struct ibv_send_wr w2 = {
			.wr_id = wrid(b, WR_CHECK, 2), .next = &w3,
			.sg_list = &s2, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		};
		struct ibv_send_wr w1 = {
			.wr_id = wrid(b, WR_CHECK, 1), .next = &w2,
			.sg_list = &s1, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)cbuf, cmr->rkey },
		};

		if (post_send1(g.t[b].qp, &w1)) {
			fprintf(stderr, "check: post_send: %s\n",
				strerror(errno));
			goto out;
		}
	}
	if (wait_check(3, a, 1, 20, &rb, &rlen))
		goto out;
	if (memcmp(cbuf, want, CHECK_LEN)) {
		fprintf(stderr, "check: WRITE data wrong\n");
		goto out;
	}
	if (rlen != 2000 || !rb || memcmp(rb, want + 100, 2000)) {
		fprintf(stderr, "check: SEND data wrong (%u bytes)\n", rlen);
		goto out;
	}
	if (memcmp(sbuf + CHECK_LEN, want, CHECK_LEN)) {
		fprintf(stderr, "check: READ data wrong\n");
		goto out;
	}
	printf("%s <- %s: %u-byte WRITE, 2000-byte SEND, %u-byte READ, every byte right\n",
	       g.t[a].name, g.t[b].name, CHECK_LEN, CHECK_LEN);
	err = 0;
out:
	ibv_dereg_mr(cmr);
	ibv_dereg_mr(smr);
	free(cbuf);
	free(sbuf);
	free(want);
	return err;
}

/* A request to @t as its peer would send it, but from @spoof's source. */
static void spoof_one(struct tgt *t, uint8_t low, uint32_t psn, bool v6,
		      const void *src, struct pkt *p)
{
	struct ib ib;

	memset(&ib, 0, offsetof(struct ib, b) + 64);
	ib.trunc = -1;
	ib.v6 = v6;
	ib.b[0] = (t->type == IBV_QPT_UC ? SVC_UC : SVC_RC) | low;
	put16(ib.b + 2, 0xffff);
	put32(ib.b + 4, t->qp->qp_num);
	put32(ib.b + 8, 0x80000000u | (psn & PSN_MASK));
	ib.hdr = BTH_LEN;
	if (low == 0x0a) {
		put64(ib.b + ib.hdr, (uintptr_t)g.tbuf);
		put32(ib.b + ib.hdr + 8, g.tmr->rkey);
		put32(ib.b + ib.hdr + 12, 64);
		ib.hdr += RETH_LEN;
	}
	ib.pay = 64;
	memset(ib.b + ib.hdr, 0xee, 64);
	wrap(&ib, p);
	st.spoofed++;
	/* the source: not the QP's path */
	if (v6)
		memcpy(p->b + 8, src, 16);
	else
		memcpy(p->b + 12, src, 4);
	if (!v6) {
		/* the source moved after wrap() sealed it: seal again */
		uint32_t c = icrc(p->b, false, p->len - 20 - 8 - 4);
		uint8_t *ic = p->b + p->len - 4;

		ic[0] = c;
		ic[1] = c >> 8;
		ic[2] = c >> 16;
		ic[3] = c >> 24;
	} else {
		uint32_t c = icrc(p->b, true, p->len - 40 - 8 - 4);
		uint8_t *ic = p->b + p->len - 4;
		uint8_t *udp = p->b + 40;
		uint32_t s;
		uint16_t k;

		ic[0] = c;
		ic[1] = c >> 8;
		ic[2] = c >> 16;
		ic[3] = c >> 24;
		put16(udp + 6, 0);
		s = csum_add(0, p->b + 8, 32) + (p->len - 40) + IPPROTO_UDP;
		s = csum_add(s, udp, p->len - 40);
		k = csum_fold(s);
		put16(udp + 6, k ? k : 0xffff);
	}
	send_pkt(p);
}

/*
 * Defect 5: RC and UC requests at the expected PSN with live keys, from
 * addresses that are not the QP's path. Nothing may land.
 */
static int run_spoof(void)
{
	struct pkt *p = malloc(sizeof(*p));
	struct in_addr other4;
	struct in6_addr other6;
	enum tgt_id ids[] = { T_RCA, T_UCA, T_RCA6 };
	uint32_t psn0[3];
	int i, k, n = (int)opt.npkts, landed = 0, err = 0;
	struct ibv_wc wc;

	if (!p)
		die("out of memory");
	inet_pton(AF_INET, "192.0.2.99", &other4);
	inet_pton(AF_INET6, "2001:db8::99", &other6);
	quiesce();
	if (pair_up(T_RCA, T_RCB) || pair_up(T_UCA, T_UCB) ||
	    pair_up(T_RCA6, T_RCB6))
		die("bring-up: %s", strerror(errno));
	memset(g.tbuf, 0xab, TMR_LEN);
	for (k = 0; k < 3; k++)
		psn0[k] = g.t[ids[k]].epsn;
	for (i = 0; i < n; i++) {
		for (k = 0; k < 3; k++) {
			struct tgt *t = &g.t[ids[k]];
			uint8_t low = i & 1 ? 0x0a : 0x04;

			if (ids[k] == T_RCA6 && !g.have6)
				continue;
			if (!t->v6) {
				/*
				 * a neighbour's address; and our own IPv6
				 * address, the wrong family for this QP
				 */
				spoof_one(t, low, psn0[k] + i, false, &other4, p);
				if (g.have6)
					spoof_one(t, low, psn0[k] + i, true,
						  &g.ip6, p);
			} else {
				spoof_one(t, low, psn0[k] + i, true, &other6, p);
				spoof_one(t, low, psn0[k] + i, false, &g.ip4,
					  p);
			}
		}
	}
	printf("sent %lu spoofed SEND/WRITE-only packets at the expected PSNs\n",
	       st.sent);
	usleep(300000);
	while (ibv_poll_cq(g.cq, 1, &wc) > 0) {
		int kind = wc.wr_id >> 40, id = (wc.wr_id >> 32) & 0xff;

		if (kind == WR_RECV) {
			landed++;
			fprintf(stderr, "%s: a spoofed SEND took a receive (status %s, %u bytes)\n",
				id < T_NUM ? g.t[id].name : "?",
				ibv_wc_status_str(wc.status), wc.byte_len);
		}
	}
	for (i = 0; i < TMR_LEN; i++)
		if (g.tbuf[i] != 0xab) {
			fprintf(stderr, "a spoofed WRITE changed memory at offset %d\n",
				i);
			err = -1;
			break;
		}
	for (k = 0; k < 3; k++)
		if (qp_state(g.t[ids[k]].qp) != IBV_QPS_RTS) {
			fprintf(stderr, "%s left RTS\n", g.t[ids[k]].name);
			err = -1;
		}
	if (landed)
		err = -1;
	/* the QPs' own peers are still understood: PSNs did not move */
	if (!err) {
		err = check_transfer(T_RCA, T_RCB, false);
		if (!err && g.have6)
			err = check_transfer(T_RCA6, T_RCB6, false);
	}
	free(p);
	return err;
}

/*
 * Defect 21: UD SEND-only packets to QP1 with the GSI Q_Key, a valid
 * ICRC and 300 bytes of payload (a MAD is 256).
 */
static void run_qp1(void)
{
	struct pkt *p = malloc(sizeof(*p));
	struct ib ib;
	unsigned long i;

	if (!p)
		die("out of memory");
	for (i = 0; i < opt.npkts; i++) {
		memset(&ib, 0, offsetof(struct ib, b) + 64);
		ib.trunc = -1;
		ib.b[0] = SVC_UD | 0x04;
		put16(ib.b + 2, 0xffff);
		put32(ib.b + 4, 1);
		put32(ib.b + 8, i & PSN_MASK);
		put32(ib.b + BTH_LEN, GSI_QKEY);
		put32(ib.b + BTH_LEN + 4, 1);
		ib.hdr = BTH_LEN + DETH_LEN;
		ib.pay = 300;
		memset(ib.b + ib.hdr, 0, 300);
		ib.b[ib.hdr] = 1;		/* base version */
		ib.b[ib.hdr + 1] = 0x07;	/* CM class */
		ib.b[ib.hdr + 2] = 2;
		ib.b[ib.hdr + 3] = 0x03;	/* Send */
		put64(ib.b + ib.hdr + 8, rnd64());	/* transaction ID */
		wrap(&ib, p);
		send_pkt(p);
	}
	printf("sent %lu UD SEND-only packets of 300 bytes to QP1\n", st.sent);
	free(p);
}

static void report(void)
{
	printf("packets: %lu sent (%lu send errors), %lu IPv6, %lu multicast, %lu to QP1, %lu spoofed, %lu paged, %lu truncated, %lu bad pad, %lu bad ICRC, %lu undefined\n",
	       st.sent, st.send_err, st.v6, st.mcast, st.qp1, st.spoofed,
	       st.paged, st.truncated, st.bad_pad, st.bad_icrc, st.undefined);
	printf("completions: %lu (%lu with an error status); QPs re-armed %lu times\n",
	       st.cqe, st.cqe_err, st.rearms);
	printf("device counters: rx_dropped %u rx_bad_crc %u rx_bad_qp %u remote_key_err %u rx_duplicate %u\n",
	       hw_counter("rx_dropped"), hw_counter("rx_bad_crc"),
	       hw_counter("rx_bad_qp"), hw_counter("remote_key_err"),
	       hw_counter("rx_duplicate"));
}

int main(int argc, char **argv)
{
	int c, err = 0;

	opt.seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	while ((c = getopt(argc, argv, "d:i:4:6:g:G:m:n:s:w:")) != -1) {
		switch (c) {
		case 'd':
			opt.dev = optarg;
			break;
		case 'i':
			opt.netdev = optarg;
			break;
		case '4':
			opt.ip4s = optarg;
			break;
		case '6':
			opt.ip6s = optarg;
			break;
		case 'g':
			opt.gid4 = atoi(optarg);
			break;
		case 'G':
			opt.gid6 = atoi(optarg);
			break;
		case 'm':
			opt.mode = optarg;
			break;
		case 'n':
			opt.npkts = strtoul(optarg, NULL, 0);
			break;
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			opt.dump = optarg;
			break;
		default:
			die("usage: %s -d DEV -i NETDEV -4 IP4 -g GID4 [-6 IP6 -G GID6] [-m fuzz|spoof|qp1] [-n N] [-s SEED] [-w FILE]",
			    argv[0]);
		}
	}
	if (!opt.ip4s || inet_pton(AF_INET, opt.ip4s, &g.ip4) != 1)
		die("-4: an IPv4 address of the device's netdev");
	if (opt.ip6s) {
		if (inet_pton(AF_INET6, opt.ip6s, &g.ip6) != 1 ||
		    opt.gid6 < 0)
			die("-6 needs an IPv6 address and -G its GID index");
		g.have6 = true;
	}
	rng_state = opt.seed ? opt.seed : 1;
	printf("roce_fuzz: mode %s, seed %#llx, %lu packets\n", opt.mode,
	       (unsigned long long)opt.seed, opt.npkts);
	fflush(stdout);
	crc_init();
	if (opt.dump) {
		g.dump = fopen(opt.dump, "a");
		if (!g.dump)
			die("%s: %s", opt.dump, strerror(errno));
		setvbuf(g.dump, NULL, _IOLBF, 0);
	}
	setup_sockets();
	if (!strcmp(opt.mode, "qp1")) {
		run_qp1();
		return 0;
	}
	if (opt.gid4 < 0)
		die("-g: the GID index of the IPv4 address");
	setup_verbs();
	if (!strcmp(opt.mode, "spoof")) {
		err = run_spoof();
	} else if (!strcmp(opt.mode, "fuzz")) {
		run_fuzz();
		err = check_transfer(T_RCA, T_RCB, true);
		if (!err && g.have6)
			err = check_transfer(T_RCA6, T_RCB6, true);
	} else {
		die("unknown mode %s", opt.mode);
	}
	report();
	return err ? 1 : 0;
}
