// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_misuse: random sequences of verbs with invalid attributes and in
 * wrong orders, each checked against what the verbs specification and
 * the uverbs ABI promise: a call with invalid input fails, with an errno
 * from a small expected set, and changes nothing (a QP keeps its state,
 * a CQ its completions, an object in use stays usable); a valid call
 * succeeds. Seeded and reproducible; prints the seed and operation of
 * every mismatch and counts per kind of operation.
 *
 * The modify_qp oracle does not replay ib_core's whole table: it walks a
 * pool of QPs along the valid path (RESET, INIT, RTR, RTS, SQD, ERR) and
 * at each step either takes it (must succeed, query must show the new
 * state), injects exactly one defect into it (must fail as listed, the
 * state must not move) or sends a random state/mask/values (may succeed
 * or fail, but only with a listed errno, and the state must agree).
 *
 *   verbs_misuse -d DEV [-g GIDIDX] [-n OPS] [-s SEED]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fuzz_rng.h"
#include "verbs_util.h"

#define NQP	4

static struct rng g;
static struct ibv_context *ctx;
static struct ibv_device_attr dattr;
static struct ibv_port_attr pattr;
static union ibv_gid gid;
static int gid_index = -1, iwarp;
static uint64_t seed = 1, nops = 2000, op;
static int mismatches;

static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_srq *srq;
static struct ibv_qp *qps[NQP];
static enum ibv_qp_state qstate[NQP];

enum {
	C_MODIFY_OK, C_MODIFY_BAD, C_MODIFY_RANDOM, C_CREATE_QP, C_CQ,
	C_RESIZE, C_MR, C_MW, C_ORDER, C_SRQ, C_AH, C_NCAT
};
static const char *const cat_name[] = {
	"valid modify_qp steps", "modify_qp with one defect",
	"random modify_qp", "create_qp (bad caps/type) and destroy",
	"create_cq (bad cqe)", "resize_cq below outstanding",
	"reg_mr (bad access/length/address)", "alloc/bind MW misuse",
	"destroy in a wrong order", "SRQ create/modify misuse",
	"create_ah misuse",
};
static uint64_t cat_count[C_NCAT];

/* errno sets */
#define E_INVAL		(1U << 0)
#define E_OPNOTSUPP	(1U << 1)
#define E_NODATA	(1U << 2)
#define E_NOENT		(1U << 3)
#define E_NOMEM		(1U << 4)
#define E_FAULT		(1U << 5)
#define E_BUSY		(1U << 6)
#define E_PERM		(1U << 7)
#define E_AV		(E_INVAL | E_NODATA | E_NOENT)

static uint32_t errbit(int e)
{
	switch (e) {
	case EINVAL:
		return E_INVAL;
	case EOPNOTSUPP:
		return E_OPNOTSUPP;
	case ENODATA:
		return E_NODATA;
	case ENOENT:
		return E_NOENT;
	case ENOMEM:
		return E_NOMEM;
	case EFAULT:
		return E_FAULT;
	case EBUSY:
		return E_BUSY;
	case EPERM:
		return E_PERM;
	default:
		return 1U << 31;
	}
}

static void mismatch(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void mismatch(const char *what, const char *fmt, ...)
{
	va_list ap;

	mismatches++;
	printf("MISMATCH seed %" PRIu64 " op %" PRIu64 ": %s: ", seed, op, what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* A call that must fail: rc is 0 on success, else the errno. */
static void expect_fail(const char *what, int rc, uint32_t set)
{
	if (!rc)
		mismatch(what, "succeeded on invalid input");
	else if (!(errbit(rc) & set))
		mismatch(what, "errno %d (%s) not in the expected set %#x", rc,
			 strerror(rc), set);
}

static void expect_ok(const char *what, int rc)
{
	if (rc)
		mismatch(what, "failed on valid input: %s", strerror(rc));
}

/* ---- modify_qp ---------------------------------------------------- */

static int is_ud(int i)
{
	return qps[i]->qp_type == IBV_QPT_UD;
}

/* The valid next step from @s and its attributes. */
static enum ibv_qp_state valid_step(int i, enum ibv_qp_state s,
				    struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	*mask = IBV_QP_STATE;
	switch (s) {
	case IBV_QPS_RESET:
		a->qp_state = IBV_QPS_INIT;
		a->port_num = 1;
		a->pkey_index = 0;
		a->qkey = 0x11111111;
		a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_WRITE;
		*mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			 (is_ud(i) ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
		break;
	case IBV_QPS_INIT:
		a->qp_state = IBV_QPS_RTR;
		if (is_ud(i) || iwarp)
			break;
		a->path_mtu = IBV_MTU_1024;
		a->dest_qp_num = qps[i]->qp_num;
		a->rq_psn = rnd(&g, 1 << 24);
		a->max_dest_rd_atomic = 1;
		a->min_rnr_timer = 12;
		a->ah_attr.is_global = 1;
		a->ah_attr.grh.dgid = gid;
		a->ah_attr.grh.sgid_index = gid_index;
		a->ah_attr.grh.hop_limit = 1;
		a->ah_attr.port_num = 1;
		*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			 IBV_QP_MIN_RNR_TIMER;
		break;
	case IBV_QPS_RTR:
		a->qp_state = IBV_QPS_RTS;
		if (iwarp)
			break;
		a->sq_psn = rnd(&g, 1 << 24);
		*mask |= IBV_QP_SQ_PSN;
		if (is_ud(i))
			break;
		a->timeout = 14;
		a->retry_cnt = 7;
		a->rnr_retry = 7;
		a->max_rd_atomic = 1;
		*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			 IBV_QP_MAX_QP_RD_ATOMIC;
		break;
	case IBV_QPS_RTS:
		/* an RNIC's SQD is a disconnect: not on an unconnected QP */
		a->qp_state = rnd(&g, 2) && !iwarp ? IBV_QPS_SQD : IBV_QPS_ERR;
		break;
	case IBV_QPS_SQD:
		a->qp_state = rnd(&g, 2) ? IBV_QPS_RTS : IBV_QPS_ERR;
		break;
	default:
		a->qp_state = IBV_QPS_RESET;
		break;
	}
	return a->qp_state;
}

static enum ibv_qp_state query_state(int i)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qps[i], &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

static void check_state(int i, const char *what, enum ibv_qp_state want)
{
	enum ibv_qp_state s = query_state(i);

	if (s != want)
		mismatch(what, "QP %u in state %d, expected %d",
			 qps[i]->qp_num, s, want);
	qstate[i] = s;
}

/* A state the valid path never takes from @s (per transport). */
static enum ibv_qp_state wrong_next(enum ibv_qp_state s)
{
	static const enum ibv_qp_state roce[][3] = {
		[IBV_QPS_RESET] = { IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD },
		[IBV_QPS_INIT] = { IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPS_SQD },
		[IBV_QPS_RTR] = { IBV_QPS_SQD, IBV_QPS_INIT, IBV_QPS_INIT },
		[IBV_QPS_RTS] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_INIT },
		[IBV_QPS_SQD] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_INIT },
		[IBV_QPS_SQE] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_SQD },
		[IBV_QPS_ERR] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS },
	};
	static const enum ibv_qp_state rnic[][3] = {
		[IBV_QPS_RESET] = { IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD },
		[IBV_QPS_INIT] = { IBV_QPS_SQD, IBV_QPS_SQD, IBV_QPS_SQD },
		[IBV_QPS_RTR] = { IBV_QPS_SQD, IBV_QPS_INIT, IBV_QPS_INIT },
		[IBV_QPS_RTS] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_INIT },
		[IBV_QPS_SQD] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_INIT },
		[IBV_QPS_SQE] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_SQD },
		[IBV_QPS_ERR] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS },
	};

	return (iwarp ? rnic : roce)[s][rnd(&g, 3)];
}

/*
 * Put one defect into the valid step @a/@mask from state @s. Returns the
 * errno set the failure must come from, or 0 if no defect applies here.
 */
static uint32_t inject(int i, enum ibv_qp_state s, struct ibv_qp_attr *a,
		       int *mask, const char **what)
{
	int rc_roce = !iwarp && !is_ud(i);
	uint32_t c;

	switch (rnd(&g, 16)) {
	case 0:
		*what = "port_num out of range";
		a->port_num = rnd(&g, 2) ? 0 : 2 + rnd(&g, 254);
		*mask |= IBV_QP_PORT;
		return s == IBV_QPS_RESET || iwarp ? E_INVAL : 0;
	case 1:
		*what = "pkey_index beyond the table";
		c = dattr.max_pkeys ? dattr.max_pkeys : 1;
		a->pkey_index = c + rnd(&g, 0xffff - c);
		*mask |= IBV_QP_PKEY_INDEX;
		return s == IBV_QPS_RESET || iwarp ? E_INVAL : 0;
	case 2:
		*what = "unknown access flag";
		a->qp_access_flags |= 1U << (8 + rnd(&g, 23));
		*mask |= IBV_QP_ACCESS_FLAGS;
		return (s == IBV_QPS_RESET && !is_ud(i)) || iwarp ? E_INVAL : 0;
	case 3:
		*what = "path_mtu out of range";
		a->path_mtu = rnd(&g, 2) ? 0 : 6 + rnd(&g, 250);
		*mask |= IBV_QP_PATH_MTU;
		return (s == IBV_QPS_INIT && rc_roce) || iwarp ? E_INVAL : 0;
	case 4:
		*what = "dest_qp_num over 24 bits";
		a->dest_qp_num = (1U << 24) + rnd(&g, 1000);
		*mask |= IBV_QP_DEST_QPN;
		return (s == IBV_QPS_INIT && rc_roce) || iwarp ? E_INVAL : 0;
	case 5:
		*what = "min_rnr_timer over 31";
		a->min_rnr_timer = 32 + rnd(&g, 224);
		*mask |= IBV_QP_MIN_RNR_TIMER;
		return (s == IBV_QPS_INIT && rc_roce) || iwarp ? E_INVAL : 0;
	case 6:
		*what = "max_dest_rd_atomic over the device's";
		if (dattr.max_qp_rd_atom >= 255)
			return 0;
		a->max_dest_rd_atomic = dattr.max_qp_rd_atom + 1 +
			rnd(&g, 255 - dattr.max_qp_rd_atom);
		*mask |= IBV_QP_MAX_DEST_RD_ATOMIC;
		return (s == IBV_QPS_INIT && rc_roce) || iwarp ? E_INVAL : 0;
	case 7:
		*what = "retry_cnt/rnr_retry over 7 or timeout over 31";
		switch (rnd(&g, 3)) {
		case 0:
			a->retry_cnt = 8 + rnd(&g, 248);
			*mask |= IBV_QP_RETRY_CNT;
			break;
		case 1:
			a->rnr_retry = 8 + rnd(&g, 248);
			*mask |= IBV_QP_RNR_RETRY;
			break;
		default:
			a->timeout = 32 + rnd(&g, 224);
			*mask |= IBV_QP_TIMEOUT;
			break;
		}
		return (s == IBV_QPS_RTR && rc_roce) || iwarp ? E_INVAL : 0;
	case 8:
		*what = "max_rd_atomic over the device's";
		if (dattr.max_qp_init_rd_atom >= 255)
			return 0;
		a->max_rd_atomic = dattr.max_qp_init_rd_atom + 1 +
			rnd(&g, 255 - dattr.max_qp_init_rd_atom);
		*mask |= IBV_QP_MAX_QP_RD_ATOMIC;
		return (s == IBV_QPS_RTR && rc_roce) || iwarp ? E_INVAL : 0;
	case 9:
		*what = "AV with a bad GID index, no GRH or a bad port";
		if (!(s == IBV_QPS_INIT && rc_roce) || pattr.gid_tbl_len >= 255)
			return 0;
		switch (rnd(&g, 3)) {
		case 0:
			a->ah_attr.grh.sgid_index = pattr.gid_tbl_len +
				rnd(&g, 256 - pattr.gid_tbl_len);
			break;
		case 1:
			a->ah_attr.is_global = 0;
			break;
		default:
			a->ah_attr.port_num = 2 + rnd(&g, 254);
			break;
		}
		return E_AV;
	case 10:
		*what = "a transition the state table forbids";
		a->qp_state = wrong_next(s);
		*mask |= IBV_QP_STATE;
		return E_INVAL;
	case 11:
		*what = "a required attribute left out";
		if (!rc_roce || s == IBV_QPS_RTS || s == IBV_QPS_SQD ||
		    s == IBV_QPS_ERR || s == IBV_QPS_SQE)
			return 0;
		{
			int req = *mask & ~IBV_QP_STATE, bit;

			do
				bit = 1 << rnd(&g, 21);
			while (!(req & bit));
			*mask &= ~bit;
		}
		return E_INVAL;
	case 12:
		*what = "an attribute this transition does not take";
		if (!rc_roce || s == IBV_QPS_RTS || s == IBV_QPS_SQD)
			return 0;
		*mask |= s == IBV_QPS_RTR ? IBV_QP_PATH_MTU : IBV_QP_SQ_PSN;
		a->path_mtu = IBV_MTU_1024;
		return E_INVAL;
	case 13:
		*what = "a wrong current state";
		*mask |= IBV_QP_CUR_STATE;
		a->cur_qp_state = (s + 1 + rnd(&g, 4)) % (IBV_QPS_ERR + 1);
		if (a->cur_qp_state == IBV_QPS_SQE)
			a->cur_qp_state = s == IBV_QPS_RTR ? IBV_QPS_INIT :
							      IBV_QPS_RTR;
		return E_INVAL;
	case 14:
		*what = "qp_state beyond ERR";
		a->qp_state = IBV_QPS_ERR + 1 + rnd(&g, 249);	/* a u8 */
		return E_INVAL;
	default:
		*what = "an unknown attribute mask bit";
		*mask |= 1 << (21 + rnd(&g, 5));
		return E_INVAL | E_OPNOTSUPP;
	}
}

static void random_attr(struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	*mask = rnd64(&g) & ((1 << 21) - 1) & ~IBV_QP_ALT_PATH;
	if (rnd(&g, 2))
		*mask |= IBV_QP_STATE;
	a->qp_state = rnd(&g, IBV_QPS_ERR + 1);
	a->cur_qp_state = rnd(&g, IBV_QPS_ERR + 1);
	a->path_mtu = rnd(&g, 8);
	a->qkey = rnd64(&g);
	a->rq_psn = rnd64(&g);
	a->sq_psn = rnd64(&g);
	a->dest_qp_num = rnd(&g, 2) ? rnd(&g, 64) : (uint32_t)rnd64(&g);
	a->qp_access_flags = rnd(&g, 2) ? rnd(&g, 32) : (uint32_t)rnd64(&g);
	a->pkey_index = rnd(&g, 4);
	a->en_sqd_async_notify = rnd(&g, 2);
	a->max_rd_atomic = rnd(&g, 256);
	a->max_dest_rd_atomic = rnd(&g, 256);
	a->min_rnr_timer = rnd(&g, 40);
	a->port_num = rnd(&g, 3);
	a->timeout = rnd(&g, 40);
	a->retry_cnt = rnd(&g, 10);
	a->rnr_retry = rnd(&g, 10);
	a->path_mig_state = rnd(&g, 3);
	a->ah_attr.is_global = rnd(&g, 4) != 0;
	a->ah_attr.grh.dgid = gid;
	a->ah_attr.grh.sgid_index = rnd(&g, 2) ? (uint32_t)gid_index : rnd(&g, 256);
	a->ah_attr.grh.hop_limit = rnd(&g, 256);
	a->ah_attr.port_num = rnd(&g, 3);
}

static void do_modify(int i)
{
	enum ibv_qp_state s = qstate[i], next;
	struct ibv_qp_attr a;
	const char *what = NULL;
	uint32_t set;
	int mask, rc;
	char desc[160];

	next = valid_step(i, s, &a, &mask);
	switch (rnd(&g, 3)) {
	case 0:
		cat_count[C_MODIFY_OK]++;
		rc = ibv_modify_qp(qps[i], &a, mask);
		snprintf(desc, sizeof(desc), "modify_qp %d->%d (valid, mask %#x)",
			 s, next, mask);
		expect_ok(desc, rc);
		check_state(i, desc, rc ? s : next);
		return;
	case 1:
		set = inject(i, s, &a, &mask, &what);
		if (!set)
			return;
		cat_count[C_MODIFY_BAD]++;
		rc = ibv_modify_qp(qps[i], &a, mask);
		snprintf(desc, sizeof(desc), "modify_qp from %d to %d: %s (mask %#x)",
			 s, a.qp_state, what, mask);
		expect_fail(desc, rc, set);
		check_state(i, desc, s);
		return;
	default:
		cat_count[C_MODIFY_RANDOM]++;
		random_attr(&a, &mask);
		rc = ibv_modify_qp(qps[i], &a, mask);
		snprintf(desc, sizeof(desc), "random modify_qp from %d (mask %#x)",
			 s, mask);
		if (rc && !(errbit(rc) & (E_INVAL | E_OPNOTSUPP | E_AV)))
			mismatch(desc, "errno %d (%s) not expected", rc,
				 strerror(rc));
		next = rc || !(mask & IBV_QP_STATE) ? s : a.qp_state;
		if (iwarp && s == IBV_QPS_ERR && next == IBV_QPS_SQD)
			next = IBV_QPS_ERR;	/* a disconnect of a failed one */
		check_state(i, desc, next);
		return;
	}
}

/* ---- objects ------------------------------------------------------ */

static struct ibv_qp *create_qp(enum ibv_qp_type type, int use_srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.srq = use_srq ? srq : NULL,
		.cap = { .max_send_wr = 8, .max_recv_wr = use_srq ? 0 : 32,
			 .max_send_sge = 1, .max_recv_sge = use_srq ? 0 : 1 },
	};

	return ibv_create_qp(pd, &ia);
}

static void refill_qp(int i)
{
	enum ibv_qp_type type = !iwarp && rnd(&g, 3) == 0 ? IBV_QPT_UD :
							    IBV_QPT_RC;

	qps[i] = create_qp(type, rnd(&g, 2));
	if (!qps[i]) {
		mismatch("create_qp (valid)", "failed: %s", strerror(errno));
		return;
	}
	qstate[i] = query_state(i);
	if (qstate[i] != (iwarp ? IBV_QPS_INIT : IBV_QPS_RESET))
		mismatch("create_qp", "new QP in state %d", qstate[i]);
}

static void do_create_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	uint32_t set = E_INVAL;
	struct ibv_qp *qp;
	const char *what;
	int i;

	cat_count[C_CREATE_QP]++;
	switch (rnd(&g, 7)) {
	case 0:
		what = "max_send_wr over the device's";
		ia.cap.max_send_wr = dattr.max_qp_wr + 1 + rnd(&g, 1 << 20);
		break;
	case 1:
		what = "max_recv_wr over the device's";
		ia.cap.max_recv_wr = rnd(&g, 2) ? 0xffffffff :
					(uint32_t)dattr.max_qp_wr + 1;
		break;
	case 2:
		what = "max_send_sge over the device's";
		ia.cap.max_send_sge = dattr.max_sge + 1 + rnd(&g, 1000);
		break;
	case 3:
		what = "max_recv_sge over the device's";
		ia.cap.max_recv_sge = dattr.max_sge + 1 + rnd(&g, 1000);
		break;
	case 4:
		what = "max_inline_data far too large";
		ia.cap.max_inline_data = 1 << (16 + rnd(&g, 15));
		break;
	case 5:
		what = "a QP type the device does not have";
		ia.qp_type = iwarp ? (rnd(&g, 2) ? IBV_QPT_UD : IBV_QPT_UC) :
				     IBV_QPT_RAW_PACKET;
		set = E_INVAL | E_OPNOTSUPP | E_PERM;
		break;
	default:
		/* destroy one pool QP and make a fresh one */
		i = rnd(&g, NQP);
		expect_ok("destroy_qp", ibv_destroy_qp(qps[i]));
		refill_qp(i);
		return;
	}
	errno = 0;
	qp = ibv_create_qp(pd, &ia);
	expect_fail(what, qp ? 0 : errno, set);
	if (qp)
		ibv_destroy_qp(qp);
}

static void do_cq(void)
{
	struct ibv_cq *c;
	int n;

	cat_count[C_CQ]++;
	n = rnd(&g, 2) ? dattr.max_cqe + 1 + (int)rnd(&g, 1 << 20) :
	    (rnd(&g, 2) ? 0 : -1 - (int)rnd(&g, 100));
	errno = 0;
	c = ibv_create_cq(ctx, n, NULL, NULL, 0);
	expect_fail("create_cq with cqe 0, negative or over the device's",
		    c ? 0 : errno, E_INVAL);
	if (c)
		ibv_destroy_cq(c);
}

/* Flush completions into a small CQ, then shrink it below them. */
static void do_resize(void)
{
	struct ibv_cq *c = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_wc wc[32];
	int i, n, posted = 4 + rnd(&g, 12), got = 0;

	cat_count[C_RESIZE]++;
	if (!c) {
		mismatch("create_cq(32)", "%s", strerror(errno));
		return;
	}
	ia.send_cq = ia.recv_cq = c;
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp) {
		mismatch("create_qp for resize", "%s", strerror(errno));
		ibv_destroy_cq(c);
		return;
	}
	/* librxe refuses receives before INIT, even on an RNIC QP */
	expect_ok("modify_qp to INIT",
		  ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT |
				IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS));
	for (i = 0; i < posted; i++) {
		wr.wr_id = 1000 + i;
		expect_ok("post_recv", ibv_post_recv(qp, &wr, &bad));
	}
	a.qp_state = IBV_QPS_ERR;
	expect_ok("modify_qp to ERR", ibv_modify_qp(qp, &a, IBV_QP_STATE));
	/* every posted receive is now a flush completion in @c */
	expect_fail("resize_cq below the completions it holds",
		    ibv_resize_cq(c, 1 + rnd(&g, 2)), E_INVAL);
	expect_ok("resize_cq above them", ibv_resize_cq(c, 64));
	while ((n = ibv_poll_cq(c, 32, wc)) > 0) {
		for (i = 0; i < n; i++, got++)
			if (wc[i].wr_id != (uint64_t)1000 + got ||
			    wc[i].status != IBV_WC_WR_FLUSH_ERR)
				mismatch("completions after resize",
					 "#%d: wr_id %" PRIu64 " status %d",
					 got, wc[i].wr_id, wc[i].status);
	}
	if (got != posted)
		mismatch("completions after resize", "%d of %d", got, posted);
	expect_ok("destroy_qp", ibv_destroy_qp(qp));
	expect_ok("destroy_cq", ibv_destroy_cq(c));
}

static char mrbuf[65536] __attribute__((aligned(4096)));

static void do_mr(void)
{
	struct ibv_mr *mr = NULL;
	const char *what;
	uint32_t set;
	void *hole;

	cat_count[C_MR]++;
	errno = 0;
	switch (rnd(&g, 5)) {
	case 0:
		what = "remote write without local write";
		mr = ibv_reg_mr(pd, mrbuf, 4096, rnd(&g, 2) ?
				IBV_ACCESS_REMOTE_WRITE :
				IBV_ACCESS_REMOTE_ATOMIC);
		set = E_INVAL;
		break;
	case 1:
		what = "an unknown access flag";
		/* not the optional range (bits 20-29): those may be ignored */
		mr = ibv_reg_mr(pd, mrbuf, 4096, IBV_ACCESS_LOCAL_WRITE |
				(rnd(&g, 4) ? 1U << (10 + rnd(&g, 10)) : 1U << 30));
		set = E_INVAL | E_OPNOTSUPP;
		break;
	case 2:
		what = "a length far beyond the buffer";
		mr = ibv_reg_mr(pd, mrbuf, (size_t)1 << (32 + rnd(&g, 16)),
				IBV_ACCESS_LOCAL_WRITE);
		set = E_INVAL | E_NOMEM | E_FAULT;
		break;
	case 3:
		what = "an unmapped address";
		hole = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		munmap(hole, 8192);
		mr = ibv_reg_mr(pd, hole, 8192, IBV_ACCESS_LOCAL_WRITE);
		set = E_FAULT | E_INVAL | E_NOMEM;
		break;
	default:
		what = "address + length wrapping";
		mr = ibv_reg_mr(pd, (void *)(uintptr_t)(~0ULL - 4095),
				8192, IBV_ACCESS_LOCAL_WRITE);
		set = E_FAULT | E_INVAL | E_NOMEM;
		break;
	}
	expect_fail(what, mr ? 0 : errno, set);
	if (mr)
		ibv_dereg_mr(mr);
}

static void do_mw(void)
{
	struct ibv_mw *mw;
	struct ibv_mr *mr;
	struct ibv_mw_bind b = {};
	int i = rnd(&g, NQP), rc;

	cat_count[C_MW]++;
	errno = 0;
	mw = ibv_alloc_mw(pd, (enum ibv_mw_type)(rnd(&g, 2) ? 0 : 3 + rnd(&g, 100)));
	expect_fail("alloc_mw of an unknown type", mw ? 0 : errno,
		    E_INVAL | E_OPNOTSUPP);
	if (mw)
		ibv_dealloc_mw(mw);
	/* a type 1 bind to an MR without MW_BIND, on a QP not in RTS */
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!mw)
		return;		/* no type 1 windows: nothing to bind */
	mr = ibv_reg_mr(pd, mrbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		mismatch("reg_mr (valid)", "%s", strerror(errno));
		ibv_dealloc_mw(mw);
		return;
	}
	b.wr_id = 1;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info.mr = mr;
	b.bind_info.addr = (uintptr_t)mrbuf;
	b.bind_info.length = rnd(&g, 2) ? 4096 : 1 << 20;
	b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	if (qstate[i] == IBV_QPS_RESET || qstate[i] == IBV_QPS_INIT ||
	    qstate[i] == IBV_QPS_RTR) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

		rc = ibv_bind_mw(qps[i], mw, &b);
		expect_fail("bind_mw on a QP before RTS", rc,
			    E_INVAL | E_OPNOTSUPP);
		/* the refused WQE may sit in the ring: RESET empties it */
		expect_ok("modify_qp to RESET", ibv_modify_qp(qps[i], &a,
							      IBV_QP_STATE));
		check_state(i, "modify_qp to RESET", IBV_QPS_RESET);
	}
	expect_ok("dereg_mr", ibv_dereg_mr(mr));
	expect_ok("dealloc_mw", ibv_dealloc_mw(mw));
}

/* Destroying what something else still uses must fail with EBUSY. */
static void do_order(void)
{
	struct ibv_mr *mr;
	int rc;

	cat_count[C_ORDER]++;
	switch (rnd(&g, 3)) {
	case 0:
		mr = ibv_reg_mr(pd, mrbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
		rc = ibv_dealloc_pd(pd);
		expect_fail("dealloc_pd with MRs and QPs on it", rc, E_BUSY);
		if (mr)
			expect_ok("dereg_mr", ibv_dereg_mr(mr));
		break;
	case 1:
		expect_fail("destroy_cq with QPs on it", ibv_destroy_cq(cq),
			    E_BUSY);
		break;
	default:
		/* keeps a QP on the SRQ (pool QPs may not use it) */
		{
			struct ibv_qp *qp = create_qp(IBV_QPT_RC, 1);

			expect_fail("destroy_srq with a QP on it",
				    ibv_destroy_srq(srq), E_BUSY);
			if (qp)
				expect_ok("destroy_qp", ibv_destroy_qp(qp));
		}
		break;
	}
}

static void do_srq(void)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq_attr a = {};
	struct ibv_srq *s;
	const char *what;

	cat_count[C_SRQ]++;
	switch (rnd(&g, 6)) {
	case 0:
		what = "create_srq: max_wr over the device's";
		ia.attr.max_wr = dattr.max_srq_wr + 1 + rnd(&g, 1 << 20);
		break;
	case 1:
		what = "create_srq: max_sge over the device's";
		ia.attr.max_sge = dattr.max_srq_sge + 1 + rnd(&g, 100);
		break;
	case 2:
		what = "create_srq: srq_limit over max_wr";
		ia.attr.srq_limit = 17 + rnd(&g, 1000);
		break;
	case 3:
		a.srq_limit = 1000 + rnd(&g, 1 << 20);
		expect_fail("modify_srq: limit over max_wr",
			    ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), E_INVAL);
		return;
	case 4:
		a.max_wr = rnd(&g, 2) ? 0 : dattr.max_srq_wr + 1;
		expect_fail("modify_srq: max_wr 0 or over the device's",
			    ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR),
			    E_INVAL | E_OPNOTSUPP);
		return;
	default:
		expect_fail("modify_srq: unknown mask bit",
			    ibv_modify_srq(srq, &a, 1 << (2 + rnd(&g, 20))),
			    E_INVAL | E_OPNOTSUPP);
		return;
	}
	errno = 0;
	s = ibv_create_srq(pd, &ia);
	expect_fail(what, s ? 0 : errno, E_INVAL);
	if (s)
		ibv_destroy_srq(s);
}

static void do_ah(void)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_ah *ah;
	const char *what;
	uint32_t set = E_AV;

	cat_count[C_AH]++;
	aa.grh.dgid = gid;
	aa.grh.sgid_index = gid_index < 0 ? 0 : gid_index;
	aa.grh.hop_limit = 1;
	if (iwarp) {
		what = "create_ah on iWARP";
		set = E_OPNOTSUPP | E_INVAL;
	} else {
		switch (rnd(&g, 3)) {
		case 0:
			what = "create_ah: GID index beyond the table";
			aa.grh.sgid_index = pattr.gid_tbl_len +
				rnd(&g, 256 - pattr.gid_tbl_len);
			break;
		case 1:
			what = "create_ah: no GRH on RoCE";
			aa.is_global = 0;
			break;
		default:
			what = "create_ah: port 0 or beyond";
			aa.port_num = rnd(&g, 2) ? 0 : 2 + rnd(&g, 254);
			break;
		}
	}
	errno = 0;
	ah = ibv_create_ah(pd, &aa);
	expect_fail(what, ah ? 0 : errno, set | E_OPNOTSUPP);
	if (ah)
		ibv_destroy_ah(ah);
}

int main(int argc, char **argv)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	const char *dev = NULL;
	int c, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:g:n:s:")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'n':
			nops = strtoull(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (!dev) {
		fprintf(stderr, "usage: %s -d DEV [-g GIDIDX] [-n OPS] [-s SEED]\n",
			argv[0]);
		return 2;
	}
	g.s = seed * 0x9e3779b97f4a7c15ULL + 0x6a09e667f3bcc909ULL;
	ctx = open_dev(dev);
	if (!ctx || ibv_query_device(ctx, &dattr) ||
	    ibv_query_port(ctx, 1, &pattr)) {
		printf("cannot open or query %s\n", dev);
		return 1;
	}
	iwarp = ctx->device->transport_type == IBV_TRANSPORT_IWARP;
	if (!iwarp && (gid_index < 0 || ibv_query_gid(ctx, 1, gid_index, &gid))) {
		printf("RoCE needs -g GIDIDX of a valid GID\n");
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	srq = pd ? ibv_create_srq(pd, &sa) : NULL;
	if (!pd || !cq || !srq) {
		printf("setup: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < NQP; i++)
		refill_qp(i);
	printf("verbs_misuse: %s (%s), seed %" PRIu64 ", %" PRIu64 " operations\n",
	       dev, iwarp ? "iWARP" : "RoCE", seed, nops);
	for (op = 0; op < nops; op++) {
		for (i = 0; i < NQP && qps[i]; i++)
			;
		if (i < NQP) {
			refill_qp(i);
			continue;
		}
		{
			struct ibv_wc wc[16];

			while (ibv_poll_cq(cq, 16, wc) > 0)
				;
		}
		switch (rnd(&g, 16)) {
		case 0:
			do_create_qp();
			break;
		case 1:
			do_cq();
			break;
		case 2:
			if (!rnd(&g, 4))
				do_resize();
			break;
		case 3:
			do_mr();
			break;
		case 4:
			do_mw();
			break;
		case 5:
			do_order();
			break;
		case 6:
			do_srq();
			break;
		case 7:
			do_ah();
			break;
		default:
			do_modify(rnd(&g, NQP));
			break;
		}
	}
	for (i = 0; i < NQP; i++)
		if (qps[i])
			expect_ok("destroy_qp", ibv_destroy_qp(qps[i]));
	expect_ok("destroy_srq", ibv_destroy_srq(srq));
	expect_ok("destroy_cq", ibv_destroy_cq(cq));
	expect_ok("dealloc_pd", ibv_dealloc_pd(pd));
	ibv_close_device(ctx);
	for (i = 0; i < C_NCAT; i++)
		printf("%8" PRIu64 "  %s\n", cat_count[i], cat_name[i]);
	printf("%" PRIu64 " operations, %d mismatches\n", nops, mismatches);
	return mismatches ? 1 : 0;
}
