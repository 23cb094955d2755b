// SPDX-License-Identifier: GPL-2.0
/*
 * bench-scale: N RC connections through rdma_cm between two hosts, for the
 * scale mode of `make bench` (tools/bench.sh --scale). It measures, in one
 * run:
 *
 *  - set-up rate: connections per second from the first rdma_create_id to
 *    the last ESTABLISHED, with at most -b connections in set-up at once
 *    (address and route resolution, QP creation, connect);
 *  - aggregate bandwidth of 4 KiB RDMA WRITEs for -t seconds with every QP
 *    keeping -d WRITEs outstanding, completions on a few shared CQs; every
 *    QP must have moved data (client: completions; server: each QP writes
 *    its own 4 KiB slot of the server's buffer with its own pattern, and
 *    the server checks every byte of every slot);
 *  - teardown time: rdma_disconnect of all N, then rdma_destroy_qp and
 *    rdma_destroy_id of each as its DISCONNECTED arrives;
 *  - kernel memory per idle connected QP, from /proc/meminfo before the
 *    first connection and after all N are connected and idle (see
 *    mem_sample()).
 *
 * The client prints one line, the server one line, both "scale role=...
 * key=value ...". Exit status 0 only if everything above worked; any
 * failed call ends the run with the call's name and errno. Every wait has
 * a deadline, and a watchdog (-w) ends a run that hangs in a call.
 *
 *   bench-scale -s ADDR [-p PORT] [-n N] [-l LABEL] ...      server
 *   bench-scale -c ADDR [-p PORT] [-n N] [-l LABEL] [-b INFLIGHT]
 *               [-t SECS] [-d DEPTH] [-q SQ_WRS] ...         client
 *
 * Both sides need the same -n. The client and server synchronise over
 * QP 0 (the client's connection index 0): the server SENDs "go" once it
 * has sampled its memory, the client SENDs "done" when its WRITEs are
 * drained.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define SLOT		4096		/* bytes per WRITE, and per QP's slot */
#define MAGIC		0x5ca1ab1eU
#define EV_TIMEOUT_MS	30000		/* no rdma_cm event for this long */
#define RESOLVE_MS	5000		/* rdma_resolve_addr, _route */
#define QPS_PER_CQ	256		/* client: QPs sharing one CQ */
#define WR_GO		(1ULL << 62)	/* wr_id tags: control messages */
#define WR_DONE		(1ULL << 61)

struct conn_req {		/* client -> server, connect private data */
	uint32_t magic;
	uint32_t idx;
	uint32_t n;
};

struct conn_rep {		/* server -> client, accept private data */
	uint64_t addr;
	uint32_t rkey;
	uint32_t magic;
	uint32_t n;
};

struct conn {
	struct rdma_cm_id *id;
	uint32_t idx;
	int state;
	uint64_t writes;	/* completed */
	unsigned int outstanding;
	struct ibv_cq *cq;
};

enum { C_NONE, C_SETUP, C_UP, C_DOWN, C_GONE };

struct ev {
	enum rdma_cm_event_type type;
	int status;
	struct rdma_cm_id *id;
	uint8_t pdata[64];
	uint8_t pd_len;
	double t;
};

struct mem {
	long long memfree, cached, buffers, slab, pagetables;	/* kB */
	long long rss_anon, ring_rss;				/* kB */
};

static int stat_refreshed = 1;	/* /proc/sys/vm/stat_refresh was writable */

static struct {
	const char *addr, *port, *label;
	int server;
	uint32_t n, inflight, depth, sq_wr;
	double secs, settle;
	unsigned int watchdog;
} opt = {
	.port = "7480", .label = "-", .n = 1, .inflight = 32, .depth = 8,
	.sq_wr = 16, .secs = 5, .settle = 1, .watchdog = 600,
};

static const char *volatile phase = "start";

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench-scale %s [%s]: ", opt.server ? "server" : "client",
		phase);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* A failed call: its name and errno (librdmacm and libibverbs set it). */
#define FAIL_ERRNO(name) die("%s: %s (errno %d)", name, strerror(errno), errno)

static void watchdog(int sig)
{
	static const char msg[] = "bench-scale: watchdog: time limit (-w) reached in phase ";
	const char *p = phase;

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, p, strlen(p)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(1);
	_exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap(double secs)
{
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The 64-bit word that fills QP idx's slot. */
static uint64_t slot_word(uint32_t idx)
{
	return 0x9e3779b97f4a7c15ULL * (idx + 1) ^ MAGIC;
}

static void fill_slot(uint64_t *p, uint32_t idx)
{
	size_t i;

	for (i = 0; i < SLOT / 8; i++)
		p[i] = slot_word(idx);
}

/* -------- memory ------------------------------------------------------- */

static long long meminfo_field(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	long long v;

	if (!p || sscanf(p + strlen(key), " %lld", &v) != 1)
		die("/proc/meminfo: no %s", key);
	return v;
}

static char *slurp(const char *path)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	FILE *f = fopen(path, "r");
	size_t got;

	if (!buf || !f)
		die("read %s: %s", path, strerror(errno));
	while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				die("realloc: %s", strerror(errno));
		}
	}
	if (ferror(f))
		die("read %s: %s", path, strerror(errno));
	fclose(f);
	buf[len] = 0;
	return buf;
}

/*
 * Free memory in kB: the zones' free pages and the pages in their per-CPU
 * free lists, which MemFree leaves out (up to several MB on a small VM,
 * as much as a hundred QPs take).
 */
static long long free_kb(void)
{
	char *buf = slurp("/proc/zoneinfo"), *line, *save = NULL;
	long long pages = 0, v;

	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, " pages free %lld", &v) == 1 ||
		    sscanf(line, " count: %lld", &v) == 1)
			pages += v;
	}
	free(buf);
	return pages * (sysconf(_SC_PAGESIZE) / 1024);
}

/*
 * What the kernel and this process hold. The device's user rings (SQ, RQ,
 * CQ) are kernel pages mapped into the process: free memory falls by
 * them, and the Rss of the process's mappings of /dev/infiniband/uverbs*
 * counts them, which is where they are summed (ring_rss) to be excluded.
 * The process's anonymous memory (RssAnon: what librdmacm and libibverbs
 * allocate per id and QP) is user memory, excluded too, as is any page
 * cache (Cached, Buffers) that grows meanwhile. The kernel's per-CPU
 * counter deltas are folded first (stat_refresh, root only).
 */
static void mem_sample(struct mem *m)
{
	char *buf, *line, *save = NULL;
	int in_ring = 0, fd;
	long long v;

	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	if (fd < 0 || write(fd, "1\n", 2) != 2)
		stat_refreshed = 0;
	if (fd >= 0)
		close(fd);
	m->memfree = free_kb();
	buf = slurp("/proc/meminfo");
	m->cached = meminfo_field(buf, "\nCached:");
	m->buffers = meminfo_field(buf, "\nBuffers:");
	m->slab = meminfo_field(buf, "\nSlab:");
	m->pagetables = meminfo_field(buf, "\nPageTables:");
	free(buf);
	buf = slurp("/proc/self/status");
	m->rss_anon = meminfo_field(buf, "\nRssAnon:");
	free(buf);
	buf = slurp("/proc/self/smaps");
	m->ring_rss = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in_ring = strstr(line, " /dev/infiniband/uverbs") != NULL;
			continue;
		}
		if (in_ring && sscanf(line, "Rss: %lld kB", &v) == 1)
			m->ring_rss += v;
	}
	free(buf);
}

/* " kmem_per_qp=... slab_per_qp=... ring_per_qp=... user_per_qp=..." */
static void mem_report(char *out, size_t len, const struct mem *a,
		       const struct mem *b, uint32_t n)
{
	long long dfree = a->memfree - b->memfree;	/* grows with use */
	long long dcache = (b->cached - a->cached) + (b->buffers - a->buffers);
	long long danon = b->rss_anon - a->rss_anon;
	long long dring = b->ring_rss - a->ring_rss;
	long long kmem = dfree - dcache - danon - dring;

	snprintf(out, len,
		 " kmem_per_qp=%.0f slab_per_qp=%.0f pgtable_per_qp=%.0f ring_per_qp=%.0f user_per_qp=%.0f stat_refresh=%d",
		 kmem * 1024.0 / n, (b->slab - a->slab) * 1024.0 / n,
		 (b->pagetables - a->pagetables) * 1024.0 / n,
		 dring * 1024.0 / n, danon * 1024.0 / n, stat_refreshed);
}

/*
 * What the kernel still holds once the connections are gone (a leak, or
 * deferred frees: informational).
 */
static long long mem_left_kb(const struct mem *a, const struct mem *c)
{
	return (a->memfree - c->memfree) - (c->cached - a->cached) -
	       (c->buffers - a->buffers) - (c->rss_anon - a->rss_anon) -
	       (c->ring_rss - a->ring_rss);
}

/* -------- rdma_cm events ----------------------------------------------- */

/*
 * The next event on ch within ms, copied and acknowledged (so the id may
 * be destroyed at once). 0, or -1 if none came in time.
 */
static int next_event(struct rdma_event_channel *ch, int ms, struct ev *e)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int r;

	r = poll(&p, 1, ms);
	if (r < 0 && errno != EINTR)
		FAIL_ERRNO("poll(rdma_cm channel)");
	if (r <= 0)
		return -1;
	if (rdma_get_cm_event(ch, &ev))
		FAIL_ERRNO("rdma_get_cm_event");
	e->t = now();
	e->type = ev->event;
	e->status = ev->status;
	e->id = ev->id;
	e->pd_len = 0;
	if (ev->param.conn.private_data && ev->param.conn.private_data_len) {
		e->pd_len = ev->param.conn.private_data_len < sizeof(e->pdata) ?
			    ev->param.conn.private_data_len : sizeof(e->pdata);
		memcpy(e->pdata, ev->param.conn.private_data, e->pd_len);
	}
	if (rdma_ack_cm_event(ev))
		FAIL_ERRNO("rdma_ack_cm_event");
	return 0;
}

static void must_event(struct rdma_event_channel *ch, struct ev *e,
		       const char *what, uint32_t done, uint32_t n)
{
	if (next_event(ch, EV_TIMEOUT_MS, e))
		die("no rdma_cm event for %d s while %s (%u of %u done)",
		    EV_TIMEOUT_MS / 1000, what, done, n);
}

static void unexpected(const struct ev *e, const struct conn *c)
{
	die("connection %d: unexpected rdma_cm event %s (status %d: %s)",
	    c ? (int)c->idx : -1, rdma_event_str(e->type), e->status,
	    strerror(e->status < 0 ? -e->status : e->status));
}

/* -------- completions -------------------------------------------------- */

static void check_wc(const struct ibv_wc *wc, const char *what)
{
	if (wc->status != IBV_WC_SUCCESS)
		die("%s: completion status %s (%d), wr_id %#" PRIx64 ", vendor_err %u",
		    what, ibv_wc_status_str(wc->status), wc->status,
		    (uint64_t)wc->wr_id, wc->vendor_err);
}

/*
 * One completion from cq within deadline, sleeping on its channel. Also
 * watches the rdma_cm channel: an event there goes to on_event.
 */
static void wait_wc(struct ibv_cq *cq, struct ibv_comp_channel *cc,
		    struct rdma_event_channel *ch, double deadline,
		    struct ibv_wc *wc, const char *what,
		    void (*on_event)(const struct ev *e))
{
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = cc->fd, .events = POLLIN },
			{ .fd = ch->fd, .events = POLLIN },
		};
		struct ibv_cq *ecq;
		void *ectx;
		int r, ms;

		r = ibv_poll_cq(cq, 1, wc);
		if (r < 0)
			die("ibv_poll_cq: %d", r);
		if (r == 1) {
			check_wc(wc, what);
			return;
		}
		if (ibv_req_notify_cq(cq, 0))
			FAIL_ERRNO("ibv_req_notify_cq");
		r = ibv_poll_cq(cq, 1, wc);
		if (r < 0)
			die("ibv_poll_cq: %d", r);
		if (r == 1) {
			check_wc(wc, what);
			return;
		}
		ms = (int)((deadline - now()) * 1000);
		if (ms <= 0)
			die("%s: no completion in time", what);
		r = poll(p, 2, ms);
		if (r < 0 && errno != EINTR)
			FAIL_ERRNO("poll(completion channel)");
		if (p[1].revents) {
			struct ev e;

			if (!next_event(ch, 0, &e))
				on_event(&e);
		}
		if (p[0].revents) {
			if (ibv_get_cq_event(cc, &ecq, &ectx))
				FAIL_ERRNO("ibv_get_cq_event");
			ibv_ack_cq_events(ecq, 1);
		}
	}
}

/* -------- common set-up ------------------------------------------------ */

struct res {
	struct rdma_event_channel *ch;
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;	/* server */
	struct ibv_cq **cqs;
	unsigned int ncq;
	struct ibv_cq *pad_cq;		/* see pad_cq() */
	void *buf;			/* N slots */
	struct ibv_mr *mr;
	uint64_t ctl;			/* "go" / "done" messages */
	struct ibv_mr *ctl_mr;
	struct conn *conns;
	struct mem m0, m1, m2;
	uint32_t down;			/* server: peers that disconnected */
	double t_down0;
};

static struct res *srv;

static void qp_attr(struct ibv_qp_init_attr *a, struct ibv_cq *cq)
{
	memset(a, 0, sizeof(*a));
	a->send_cq = cq;
	a->recv_cq = cq;
	a->qp_type = IBV_QPT_RC;
	a->cap.max_send_wr = opt.sq_wr;
	a->cap.max_recv_wr = 1;		/* QP 0's control message */
	a->cap.max_send_sge = 1;
	a->cap.max_recv_sge = 1;
	a->sq_sig_all = 1;
}

/*
 * siw (6.1) hands libsiw (rdma-core 44) each ring's mmap key as a byte
 * offset, page by page from 0 in each process, and libsiw takes the key
 * 0x90000 (SIW_INVAL_UOBJ_KEY) for "no mapping": whichever QP's ring lands
 * on page offset 144, about the 70th QP, cannot be created, and errno
 * says nothing. A CQ of more than 144 pages, the process's first mapped
 * object, covers that offset. Made on every device alike; it exists
 * before the first memory sample, like the other CQs.
 */
static void pad_cq(struct res *r, const struct ibv_device_attr *da)
{
	int cqe = 160 * 4096 / 32;

	if (cqe > da->max_cqe)
		cqe = da->max_cqe;
	r->pad_cq = ibv_create_cq(r->verbs, cqe, NULL, NULL, 0);
	if (!r->pad_cq)
		FAIL_ERRNO("ibv_create_cq(pad)");
}

static void alloc_common(struct res *r, size_t bytes, int access)
{
	struct ibv_device_attr da;

	if (ibv_query_device(r->verbs, &da))
		FAIL_ERRNO("ibv_query_device");
	r->pd = ibv_alloc_pd(r->verbs);
	if (!r->pd)
		FAIL_ERRNO("ibv_alloc_pd");
	pad_cq(r, &da);
	r->buf = aligned_alloc(4096, bytes);
	if (!r->buf)
		die("aligned_alloc(%zu): %s", bytes, strerror(errno));
	memset(r->buf, 0, bytes);
	r->mr = ibv_reg_mr(r->pd, r->buf, bytes, access);
	if (!r->mr)
		FAIL_ERRNO("ibv_reg_mr");
	r->ctl_mr = ibv_reg_mr(r->pd, &r->ctl, sizeof(r->ctl),
			       IBV_ACCESS_LOCAL_WRITE);
	if (!r->ctl_mr)
		FAIL_ERRNO("ibv_reg_mr(control)");
	r->conns = calloc(opt.n, sizeof(*r->conns));
	if (!r->conns)
		die("calloc: %s", strerror(errno));
}

static void free_common(struct res *r)
{
	unsigned int i;

	for (i = 0; i < r->ncq; i++)
		if (ibv_destroy_cq(r->cqs[i]))
			FAIL_ERRNO("ibv_destroy_cq");
	if (r->cc && ibv_destroy_comp_channel(r->cc))
		FAIL_ERRNO("ibv_destroy_comp_channel");
	if (ibv_destroy_cq(r->pad_cq))
		FAIL_ERRNO("ibv_destroy_cq(pad)");
	if (ibv_dereg_mr(r->ctl_mr) || ibv_dereg_mr(r->mr))
		FAIL_ERRNO("ibv_dereg_mr");
	if (ibv_dealloc_pd(r->pd))
		FAIL_ERRNO("ibv_dealloc_pd");
	free(r->cqs);
	free(r->conns);
	free(r->buf);
}

static void post_ctl_recv(struct rdma_cm_id *id, struct res *r, uint64_t tag)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&r->ctl, .length = sizeof(r->ctl),
		.lkey = r->ctl_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = tag, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	errno = abs(ibv_post_recv(id->qp, &wr, &bad));
	if (errno)
		FAIL_ERRNO("ibv_post_recv");
}

static void post_ctl_send(struct rdma_cm_id *id, struct res *r, uint64_t tag)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&r->ctl, .length = sizeof(r->ctl),
		.lkey = r->ctl_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = tag, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	r->ctl = tag;
	errno = abs(ibv_post_send(id->qp, &wr, &bad));
	if (errno)
		FAIL_ERRNO("ibv_post_send(control)");
}

static void destroy_conn(struct conn *c)
{
	rdma_destroy_qp(c->id);
	if (rdma_destroy_id(c->id))
		FAIL_ERRNO("rdma_destroy_id");
	c->id = NULL;
	c->state = C_GONE;
}

static struct rdma_addrinfo *getaddr(int passive)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;

	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(opt.addr, opt.port, &hints, &res))
		FAIL_ERRNO("rdma_getaddrinfo");
	return res;
}

/* -------- server ------------------------------------------------------- */

static void no_event(const struct ev *e)
{
	unexpected(e, e->id ? e->id->context : NULL);
}

/*
 * The client's disconnects may overtake its "done" on QP 0 (iWARP
 * completes a SEND once it is in TCP, and each connection has its own):
 * noted, and the ids destroyed once the slots are checked.
 */
static void peer_down(const struct ev *e)
{
	struct conn *c = e->id ? e->id->context : NULL;

	if (!c || c->state != C_UP || e->type != RDMA_CM_EVENT_DISCONNECTED)
		unexpected(e, c);
	c->state = C_DOWN;
	if (!srv->down++)
		srv->t_down0 = e->t;
}

static int run_server(void)
{
	struct rdma_addrinfo *ai = getaddr(1);
	struct rdma_cm_id *listen_id;
	struct res r = { 0 };
	struct conn_rep rep = { 0 };
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.private_data = &rep, .private_data_len = sizeof(rep),
	};
	struct ibv_qp_init_attr attr;
	struct ibv_wc wc;
	uint32_t requests = 0, up = 0, gone = 0, i;
	double t_first = 0, t_last = 0, t_down1, deadline;
	char mem[256];
	struct ev e;

	phase = "listen";
	srv = &r;
	r.ch = rdma_create_event_channel();
	if (!r.ch)
		FAIL_ERRNO("rdma_create_event_channel");
	if (rdma_create_id(r.ch, &listen_id, NULL, RDMA_PS_TCP))
		FAIL_ERRNO("rdma_create_id(listen)");
	if (rdma_bind_addr(listen_id, ai->ai_src_addr))
		FAIL_ERRNO("rdma_bind_addr");
	rdma_freeaddrinfo(ai);
	if (!listen_id->verbs)
		die("%s is not an RDMA device's address", opt.addr);
	r.verbs = listen_id->verbs;
	alloc_common(&r, (size_t)opt.n * SLOT,
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	r.cc = ibv_create_comp_channel(r.verbs);
	if (!r.cc)
		FAIL_ERRNO("ibv_create_comp_channel");
	r.ncq = 1;
	r.cqs = calloc(1, sizeof(*r.cqs));
	if (!r.cqs)
		die("calloc: %s", strerror(errno));
	/* only QP 0's two control messages complete here */
	r.cqs[0] = ibv_create_cq(r.verbs, 16, NULL, r.cc, 0);
	if (!r.cqs[0])
		FAIL_ERRNO("ibv_create_cq");
	rep.addr = (uintptr_t)r.buf;
	rep.rkey = r.mr->rkey;
	rep.magic = MAGIC;
	rep.n = opt.n;
	if (rdma_listen(listen_id, 1024))
		FAIL_ERRNO("rdma_listen");
	mem_sample(&r.m0);
	printf("listening on %s port %s for %u connections\n", opt.addr,
	       opt.port, opt.n);
	fflush(stdout);

	phase = "accept";
	while (up < opt.n) {
		struct conn_req req;
		struct conn *c;

		/* the first request may be a while: the client starts later */
		if (next_event(r.ch, requests ? EV_TIMEOUT_MS : 120000, &e))
			die("no rdma_cm event in time (%u of %u connected)", up,
			    opt.n);
		if (e.type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			if (!requests++)
				t_first = e.t;
			if (e.pd_len < sizeof(req))
				die("connect request without our private data (%u bytes)",
				    e.pd_len);
			memcpy(&req, e.pdata, sizeof(req));
			if (req.magic != MAGIC || req.n != opt.n ||
			    req.idx >= opt.n || r.conns[req.idx].state != C_NONE)
				die("bad connect request: magic %#x n %u idx %u",
				    req.magic, req.n, req.idx);
			c = &r.conns[req.idx];
			c->idx = req.idx;
			c->id = e.id;
			c->state = C_SETUP;
			e.id->context = c;
			qp_attr(&attr, r.cqs[0]);
			if (rdma_create_qp(e.id, r.pd, &attr))
				die("rdma_create_qp for connection %u: %s (errno %d)",
				    req.idx, strerror(errno), errno);
			if (req.idx == 0)
				post_ctl_recv(e.id, &r, WR_DONE);
			if (rdma_accept(e.id, &cp))
				FAIL_ERRNO("rdma_accept");
			continue;
		}
		c = e.id->context;
		if (e.type != RDMA_CM_EVENT_ESTABLISHED || !c ||
		    c->state != C_SETUP)
			unexpected(&e, c);
		c->state = C_UP;
		up++;
		t_last = e.t;
	}

	/* idle, connected: sample, then tell the client to go */
	phase = "idle";
	nap(opt.settle);
	mem_sample(&r.m1);
	mem_report(mem, sizeof(mem), &r.m0, &r.m1, opt.n);
	post_ctl_send(r.conns[0].id, &r, WR_GO);
	deadline = now() + 60;
	wait_wc(r.cqs[0], r.cc, r.ch, deadline, &wc, "server: SEND go", no_event);
	if (wc.wr_id != WR_GO)
		die("server: unexpected completion %#" PRIx64, (uint64_t)wc.wr_id);

	phase = "traffic";
	deadline = now() + opt.secs + 120 + opt.n / 10.0;
	wait_wc(r.cqs[0], r.cc, r.ch, deadline, &wc, "server: RECV done",
		peer_down);
	if (wc.wr_id != WR_DONE)
		die("server: unexpected completion %#" PRIx64, (uint64_t)wc.wr_id);

	/*
	 * Every slot filled with its QP's pattern. A WRITE may complete at
	 * the client before it is placed here (iWARP completes it once it is
	 * in TCP), and "done" comes over QP 0 only: give the rest a while.
	 */
	phase = "verify";
	deadline = now() + 20;
	for (i = 0; i < opt.n; i++) {
		const uint64_t *p = (uint64_t *)((char *)r.buf + (size_t)i * SLOT);
		size_t w;

		for (w = 0; w < SLOT / 8; w++)
			if (p[w] != slot_word(i))
				break;
		if (w == SLOT / 8)
			continue;
		if (now() >= deadline)
			die("QP %u's slot, word %zu: %#" PRIx64 ", want %#" PRIx64,
			    i, w, p[w], slot_word(i));
		nap(0.05);
		i--;		/* again, until it is there */
	}

	/*
	 * The peer's disconnects: destroying an id answers it (IB's DREP,
	 * iWARP's close), no rdma_disconnect of our own.
	 */
	phase = "teardown";
	for (i = 0; i < opt.n; i++) {
		if (r.conns[i].state == C_DOWN) {
			destroy_conn(&r.conns[i]);
			gone++;
		}
	}
	while (gone < opt.n) {
		struct conn *c;

		must_event(r.ch, &e, "waiting for disconnects", gone, opt.n);
		peer_down(&e);
		c = e.id->context;
		destroy_conn(c);
		gone++;
	}
	t_down1 = now();
	/* what the connections left behind (before the rest goes) */
	nap(opt.settle);
	mem_sample(&r.m2);
	free_common(&r);
	if (rdma_destroy_id(listen_id))
		FAIL_ERRNO("rdma_destroy_id(listen)");
	rdma_destroy_event_channel(r.ch);
	printf("scale role=server system=%s n=%u setup_s=%.3f setup_cps=%.1f",
	       opt.label, opt.n, t_last - t_first,
	       t_last > t_first ? opt.n / (t_last - t_first) : 0.0);
	printf(" verified=%u teardown_s=%.3f%s kmem_left_kB=%lld\n", opt.n,
	       t_down1 - r.t_down0, mem, mem_left_kb(&r.m0, &r.m2));
	return 0;
}

/* -------- client ------------------------------------------------------- */

static void post_write(struct conn *c, struct res *r, const struct conn_rep *rep)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)r->buf + (size_t)c->idx * SLOT,
		.length = SLOT, .lkey = r->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = c->idx, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = rep->addr + (uint64_t)c->idx * SLOT,
			     .rkey = rep->rkey },
	};
	struct ibv_send_wr *bad;

	errno = abs(ibv_post_send(c->id->qp, &wr, &bad));	/* libsiw: < 0 */
	if (errno)
		die("ibv_post_send(WRITE) on QP %u: %s (errno %d)", c->idx,
		    strerror(errno), errno);
	c->outstanding++;
}

/* Start connection c's set-up: create its id, resolve the address. */
static void start_conn(struct res *r, struct conn *c, struct rdma_addrinfo *ai)
{
	if (rdma_create_id(r->ch, &c->id, c, RDMA_PS_TCP))
		FAIL_ERRNO("rdma_create_id");
	c->state = C_SETUP;
	if (rdma_resolve_addr(c->id, NULL, ai->ai_dst_addr, RESOLVE_MS))
		FAIL_ERRNO("rdma_resolve_addr");
}

static int run_client(void)
{
	struct rdma_addrinfo *ai = getaddr(0);
	struct res r = { 0 };
	struct conn_rep rep = { 0 };
	struct conn_req req = { .magic = MAGIC, .n = opt.n };
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
		.private_data = &req, .private_data_len = sizeof(req),
	};
	struct ibv_qp_init_attr attr;
	struct ibv_device_attr dattr;
	struct rdma_cm_id *probe;
	struct ibv_wc wc[64];
	uint32_t next = 0, inflight = 0, up = 0, gone = 0, i, per_cq;
	uint64_t writes = 0, minw = UINT64_MAX, maxw = 0, outstanding = 0;
	double t_conn0, t_last = 0, t0, t_end, t_stop, deadline, t_next_cm;
	double t_down0, t_down1;
	int have_go = 0;
	char mem[256];
	struct ev e;

	if (opt.depth > opt.sq_wr)
		die("-d %u exceeds the send queue (-q %u)", opt.depth, opt.sq_wr);
	phase = "resources";
	r.ch = rdma_create_event_channel();
	if (!r.ch)
		FAIL_ERRNO("rdma_create_event_channel");
	/* which device: resolve once with a throw-away id */
	if (rdma_create_id(r.ch, &probe, NULL, RDMA_PS_TCP))
		FAIL_ERRNO("rdma_create_id(probe)");
	if (rdma_resolve_addr(probe, NULL, ai->ai_dst_addr, RESOLVE_MS))
		FAIL_ERRNO("rdma_resolve_addr(probe)");
	must_event(r.ch, &e, "resolving the peer's address", 0, 1);
	if (e.type != RDMA_CM_EVENT_ADDR_RESOLVED || e.id != probe)
		unexpected(&e, NULL);
	r.verbs = probe->verbs;
	if (ibv_query_device(r.verbs, &dattr))
		FAIL_ERRNO("ibv_query_device");
	/* (kept to the end: it holds librdmacm's reference on the device) */
	alloc_common(&r, (size_t)opt.n * SLOT, IBV_ACCESS_LOCAL_WRITE);
	/* a few CQs, each for up to QPS_PER_CQ QPs' outstanding WRITEs */
	per_cq = QPS_PER_CQ;
	while (per_cq > 1 && per_cq * (opt.depth + 1) + 16 > (uint32_t)dattr.max_cqe)
		per_cq /= 2;
	r.ncq = (opt.n + per_cq - 1) / per_cq;
	r.cqs = calloc(r.ncq, sizeof(*r.cqs));
	if (!r.cqs)
		die("calloc: %s", strerror(errno));
	for (i = 0; i < r.ncq; i++) {
		uint32_t qps = opt.n < per_cq ? opt.n : per_cq;

		r.cqs[i] = ibv_create_cq(r.verbs, qps * (opt.depth + 1) + 16,
					 NULL, NULL, 0);
		if (!r.cqs[i])
			FAIL_ERRNO("ibv_create_cq");
	}
	for (i = 0; i < opt.n; i++) {
		r.conns[i].idx = i;
		r.conns[i].cq = r.cqs[i / per_cq];
		fill_slot((uint64_t *)((char *)r.buf + (size_t)i * SLOT), i);
	}
	nap(opt.settle);
	mem_sample(&r.m0);

	/* connect all, at most opt.inflight in set-up at once */
	phase = "connect";
	t_conn0 = now();
	while (up < opt.n) {
		struct conn *c;

		while (inflight < opt.inflight && next < opt.n) {
			start_conn(&r, &r.conns[next++], ai);
			inflight++;
		}
		must_event(r.ch, &e, "connecting", up, opt.n);
		c = e.id->context;
		if (!c || c->state != C_SETUP)
			unexpected(&e, c);
		switch (e.type) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (rdma_resolve_route(c->id, RESOLVE_MS))
				FAIL_ERRNO("rdma_resolve_route");
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			qp_attr(&attr, c->cq);
			if (rdma_create_qp(c->id, r.pd, &attr))
				die("rdma_create_qp for connection %u: %s (errno %d)",
				    c->idx, strerror(errno), errno);
			if (c->idx == 0)
				post_ctl_recv(c->id, &r, WR_GO);
			req.idx = c->idx;
			if (rdma_connect(c->id, &cp))
				FAIL_ERRNO("rdma_connect");
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			if (e.pd_len < sizeof(rep))
				die("connection %u: %u bytes of private data from the server",
				    c->idx, e.pd_len);
			if (!up) {
				memcpy(&rep, e.pdata, sizeof(rep));
				if (rep.magic != MAGIC || rep.n != opt.n)
					die("server's magic %#x, n %u: not ours",
					    rep.magic, rep.n);
			} else if (memcmp(&rep, e.pdata, sizeof(rep))) {
				die("connection %u: other buffer from the server",
				    c->idx);
			}
			c->state = C_UP;
			up++;
			inflight--;
			t_last = e.t;
			break;
		default:
			unexpected(&e, c);
		}
	}
	rdma_freeaddrinfo(ai);

	/* idle, connected: sample; then wait for the server's "go" */
	phase = "idle";
	nap(opt.settle);
	mem_sample(&r.m1);
	mem_report(mem, sizeof(mem), &r.m0, &r.m1, opt.n);
	deadline = now() + 60;
	while (!have_go) {
		int n = ibv_poll_cq(r.conns[0].cq, 1, wc);

		if (n < 0)
			die("ibv_poll_cq: %d", n);
		if (n == 1) {
			check_wc(&wc[0], "client: RECV go");
			if (wc[0].wr_id != WR_GO)
				die("client: unexpected completion %#" PRIx64,
				    (uint64_t)wc[0].wr_id);
			have_go = 1;
		} else if (now() > deadline) {
			die("no \"go\" from the server in 60 s");
		} else {
			nap(0.001);
		}
	}

	/* every QP keeps opt.depth WRITEs outstanding until t_end */
	phase = "traffic";
	t0 = now();
	t_end = t0 + opt.secs;
	for (i = 0; i < opt.n; i++) {
		unsigned int k;

		for (k = 0; k < opt.depth; k++)
			post_write(&r.conns[i], &r, &rep);
	}
	outstanding = (uint64_t)opt.n * opt.depth;
	t_stop = t0;
	t_next_cm = t0 + 0.1;
	deadline = t_end + 60;
	while (outstanding) {
		double t = now();
		unsigned int q;

		for (q = 0; q < r.ncq; q++) {
			int n = ibv_poll_cq(r.cqs[q], 64, wc);
			int k;

			if (n < 0)
				die("ibv_poll_cq: %d", n);
			for (k = 0; k < n; k++) {
				struct conn *c;

				check_wc(&wc[k], "WRITE");
				if (wc[k].wr_id >= opt.n)
					die("completion for wr_id %#" PRIx64,
					    (uint64_t)wc[k].wr_id);
				c = &r.conns[wc[k].wr_id];
				c->outstanding--;
				c->writes++;
				writes++;
				outstanding--;
				t_stop = t;
				if (t < t_end) {
					post_write(c, &r, &rep);
					outstanding++;
				}
			}
		}
		if (t > t_next_cm) {
			/* nothing may happen to a connection meanwhile */
			if (!next_event(r.ch, 0, &e))
				unexpected(&e, e.id ? e.id->context : NULL);
			t_next_cm = t + 0.1;
			if (t > deadline)
				die("%" PRIu64 " WRITEs still outstanding %.0f s after the end",
				    outstanding, t - t_end);
		}
	}
	for (i = 0; i < opt.n; i++) {
		if (!r.conns[i].writes)
			die("QP %u moved no data", i);
		minw = r.conns[i].writes < minw ? r.conns[i].writes : minw;
		maxw = r.conns[i].writes > maxw ? r.conns[i].writes : maxw;
	}

	/* tell the server, which checks every slot */
	phase = "done";
	post_ctl_send(r.conns[0].id, &r, WR_DONE);
	deadline = now() + 60;
	for (;;) {
		int n = ibv_poll_cq(r.conns[0].cq, 1, wc);

		if (n < 0)
			die("ibv_poll_cq: %d", n);
		if (n == 1) {
			check_wc(&wc[0], "client: SEND done");
			if (wc[0].wr_id != WR_DONE)
				die("client: unexpected completion %#" PRIx64,
				    (uint64_t)wc[0].wr_id);
			break;
		}
		if (now() > deadline)
			die("SEND done: no completion in 60 s");
		nap(0.001);
	}

	/* disconnect all, destroy each as its DISCONNECTED comes */
	phase = "teardown";
	t_down0 = now();
	for (i = 0; i < opt.n; i++) {
		if (rdma_disconnect(r.conns[i].id))
			FAIL_ERRNO("rdma_disconnect");
		r.conns[i].state = C_DOWN;
	}
	while (gone < opt.n) {
		struct conn *c;

		must_event(r.ch, &e, "disconnecting", gone, opt.n);
		c = e.id->context;
		if (!c || c->state != C_DOWN || e.type != RDMA_CM_EVENT_DISCONNECTED)
			unexpected(&e, c);
		destroy_conn(c);
		gone++;
	}
	t_down1 = now();
	nap(opt.settle);
	mem_sample(&r.m2);
	free_common(&r);
	if (rdma_destroy_id(probe))
		FAIL_ERRNO("rdma_destroy_id(probe)");
	rdma_destroy_event_channel(r.ch);
	printf("scale role=client system=%s n=%u inflight=%u depth=%u sq_wr=%u cqs=%u",
	       opt.label, opt.n, opt.inflight, opt.depth, opt.sq_wr, r.ncq);
	printf(" setup_s=%.3f setup_cps=%.1f bw_MBps=%.2f secs=%.2f",
	       t_last - t_conn0, opt.n / (t_last - t_conn0),
	       writes * (double)SLOT / (t_stop - t0) / 1e6, t_stop - t0);
	printf(" writes=%" PRIu64 " min_qp_writes=%" PRIu64 " max_qp_writes=%" PRIu64,
	       writes, minw, maxw);
	printf(" teardown_s=%.3f%s kmem_left_kB=%lld\n", t_down1 - t_down0, mem,
	       mem_left_kb(&r.m0, &r.m2));
	return 0;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s -s|-c ADDR [-p PORT] [-n CONNECTIONS] [-l LABEL]\n"
		"          [-b INFLIGHT] [-t SECS] [-d DEPTH] [-q SQ_WRS]\n"
		"          [-S SETTLE_SECS] [-w WATCHDOG_SECS]\n", argv0);
	exit(2);
}

static unsigned long num(const char *s, unsigned long lo, unsigned long hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v < lo || v > hi)
		die("bad number %s (%lu..%lu)", s, lo, hi);
	return v;
}

int main(int argc, char **argv)
{
	int c;

	opt.server = -1;
	while ((c = getopt(argc, argv, "s:c:p:n:l:b:t:d:q:S:w:")) != -1) {
		switch (c) {
		case 's':
		case 'c':
			opt.server = c == 's';
			opt.addr = optarg;
			break;
		case 'p':
			opt.port = optarg;
			break;
		case 'n':
			opt.n = num(optarg, 1, 100000);
			break;
		case 'l':
			opt.label = optarg;
			break;
		case 'b':
			opt.inflight = num(optarg, 1, 100000);
			break;
		case 't':
			opt.secs = num(optarg, 1, 3600);
			break;
		case 'd':
			opt.depth = num(optarg, 1, 4096);
			break;
		case 'q':
			opt.sq_wr = num(optarg, 1, 4096);
			break;
		case 'S':
			opt.settle = num(optarg, 0, 60);
			break;
		case 'w':
			opt.watchdog = num(optarg, 1, 86400);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (opt.server < 0 || optind != argc)
		usage(argv[0]);
	signal(SIGALRM, watchdog);
	alarm(opt.watchdog);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return opt.server ? run_server() : run_client();
}
