// SPDX-License-Identifier: GPL-2.0
/*
 * Remote access rules over one RDMA device: two RC QPs connected to each
 * other; the "remote" buffer is registered with the access a case needs,
 * filled with a pattern, and must come out of every refused access
 * unchanged while the requester gets the right completion error.
 * Memory windows (bound on the responder QP) and invalidation too, and
 * that successive keys are not sequential. Then what a refused or
 * cut-short operation leaves behind: the responder's receive completes, a
 * READ through a window invalidated midway brings back only real bytes,
 * SQD drains before it says so, a UD message longer than the path MTU
 * fails locally, and a receive taken from an SRQ comes back flushed when
 * the QP holding it is reset or destroyed. And rereg adding write
 * access: the write lands through the keys the rereg answers, but not in
 * memory the process may only read.
 *
 * Environment: SRDMA_DEV (default sroce0) and SRDMA_GID (GID index of a
 * RoCE v2 address of that device, default 1).
 */
#define _GNU_SOURCE		/* memfd_create, F_ADD_SEALS */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "verbs_util.h"

#define BUF_LEN		4096
#define PATTERN		0xab
#define POLL_MS		10000
#define BIG_LEN		(4 << 20)

FIXTURE(ra) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_pd *pd2;
	struct ibv_cq *cq;
	struct ibv_cq *rcq;	/* the responder's */
	struct ibv_qp *req;	/* requester */
	struct ibv_qp *resp;	/* responder */
	uint8_t *local;
	uint8_t *remote;
	struct ibv_mr *lmr;
	struct ibv_mr *rmr;
	union ibv_gid gid;
	int gid_index;
};

/* A QP on @cq taking its receives from @srq, if not NULL. */
static struct ibv_qp *make_srq_qp(struct ibv_pd *pd, struct ibv_cq *cq,
				  enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.qp_type = type,
		.cap = { .max_send_wr = 8, .max_recv_wr = srq ? 0 : 8,
			 .max_send_sge = 1, .max_recv_sge = srq ? 0 : 1 },
	};

	return ibv_create_qp(pd, &init);
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      enum ibv_qp_type type)
{
	return make_srq_qp(pd, cq, type, NULL);
}

/* RESET -> INIT -> RTR -> RTS, connected to @dqpn on our own GID. */
static int connect_qp(struct ibv_qp *qp, uint32_t dqpn, int gid_index,
		      union ibv_gid *gid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	return qp_rtr_rts(qp, dqpn, gid_index, gid, 4, 14);
}

FIXTURE_SETUP(ra)
{
	const char *dev = getenv("SRDMA_DEV") ?: "sroce0";
	int gid_index = atoi(getenv("SRDMA_GID") ?: "1");
	union ibv_gid gid;

	self->ctx = open_dev(dev);
	ASSERT_NE(NULL, self->ctx) TH_LOG("cannot open %s", dev);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, gid_index, &gid));
	self->gid = gid;
	self->gid_index = gid_index;
	self->pd = ibv_alloc_pd(self->ctx);
	self->pd2 = ibv_alloc_pd(self->ctx);
	self->cq = ibv_create_cq(self->ctx, 32, NULL, NULL, 0);
	self->rcq = ibv_create_cq(self->ctx, 32, NULL, NULL, 0);
	ASSERT_NE(NULL, self->pd);
	ASSERT_NE(NULL, self->pd2);
	ASSERT_NE(NULL, self->cq);
	ASSERT_NE(NULL, self->rcq);
	self->req = make_qp(self->pd, self->cq, IBV_QPT_RC);
	self->resp = make_qp(self->pd, self->rcq, IBV_QPT_RC);
	ASSERT_NE(NULL, self->req);
	ASSERT_NE(NULL, self->resp);
	ASSERT_EQ(0, connect_qp(self->req, self->resp->qp_num, gid_index, &gid));
	ASSERT_EQ(0, connect_qp(self->resp, self->req->qp_num, gid_index, &gid));

	self->local = aligned_alloc(4096, BUF_LEN);
	self->remote = aligned_alloc(4096, BUF_LEN);
	ASSERT_NE(NULL, self->local);
	ASSERT_NE(NULL, self->remote);
	memset(self->local, 0x5a, BUF_LEN);
	memset(self->remote, PATTERN, BUF_LEN);
	self->lmr = ibv_reg_mr(self->pd, self->local, BUF_LEN,
			       IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->lmr);
	self->rmr = NULL;
}

FIXTURE_TEARDOWN(ra)
{
	if (self->req)
		ibv_destroy_qp(self->req);
	if (self->resp)
		ibv_destroy_qp(self->resp);
	if (self->rmr)
		ibv_dereg_mr(self->rmr);
	if (self->lmr)
		ibv_dereg_mr(self->lmr);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->rcq)
		ibv_destroy_cq(self->rcq);
	if (self->pd2)
		ibv_dealloc_pd(self->pd2);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	free(self->local);
	free(self->remote);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The next completion on @cq within POLL_MS; 0 or -ETIMEDOUT. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (ibv_poll_cq(cq, 1, wc) > 0)
			return 0;
	} while (ms_since(&t0) < POLL_MS);
	return -ETIMEDOUT;
}

/* Post one RDMA op of @len bytes at @addr with @rkey; return its status. */
static int one_op(FIXTURE_DATA(ra) *self, enum ibv_wr_opcode op,
		  uint64_t addr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)self->local,
		.length = len,
		.lkey = self->lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct timespec t0, t;
	struct ibv_wc wc;
	int n, err;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = addr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = addr;
		wr.wr.rdma.rkey = rkey;
	}
	err = ibv_post_send(self->req, &wr, &bad);
	if (err)
		return -err;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n = ibv_poll_cq(self->cq, 1, &wc);
		if (n > 0 && wc.qp_num == self->req->qp_num)
			return wc.status;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < POLL_MS);
	return -ETIMEDOUT;
}

static int bytes_are(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static int remote_untouched(FIXTURE_DATA(ra) *self)
{
	return bytes_are(self->remote, BUF_LEN, PATTERN);
}

static struct ibv_mr *reg_remote(FIXTURE_DATA(ra) *self, struct ibv_pd *pd,
				 int access)
{
	self->rmr = ibv_reg_mr(pd, self->remote, BUF_LEN,
			       IBV_ACCESS_LOCAL_WRITE | access);
	return self->rmr;
}

#define RADDR(self) ((uintptr_t)(self)->remote)
#define ALL_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_ATOMIC)

/* The control: a permitted write lands, so the refusals below mean it. */
TEST_F(ra, valid_write_lands)
{
	ASSERT_NE(NULL, reg_remote(self, self->pd, ALL_REMOTE));
	ASSERT_EQ(IBV_WC_SUCCESS, one_op(self, IBV_WR_RDMA_WRITE, RADDR(self),
					 self->rmr->rkey, 64));
	ASSERT_EQ(0, memcmp(self->remote, self->local, 64));
	ASSERT_EQ(PATTERN, self->remote[64]);
}

TEST_F(ra, wrong_rkey)
{
	ASSERT_NE(NULL, reg_remote(self, self->pd, ALL_REMOTE));
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_RDMA_WRITE, RADDR(self),
			 self->rmr->rkey ^ 0x100, 64));
	ASSERT_TRUE(remote_untouched(self));
}

TEST_F(ra, rkey_of_another_pd)
{
	ASSERT_NE(NULL, reg_remote(self, self->pd2, ALL_REMOTE));
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_RDMA_WRITE, RADDR(self),
			 self->rmr->rkey, 64));
	ASSERT_TRUE(remote_untouched(self));
}

TEST_F(ra, out_of_bounds)
{
	ASSERT_NE(NULL, reg_remote(self, self->pd, ALL_REMOTE));
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_RDMA_WRITE, RADDR(self) + BUF_LEN - 32,
			 self->rmr->rkey, 64));
	ASSERT_TRUE(remote_untouched(self));
}

TEST_F(ra, address_wraps_around)
{
	ASSERT_NE(NULL, reg_remote(self, self->pd, ALL_REMOTE));
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_RDMA_WRITE, UINT64_MAX - 16,
			 self->rmr->rkey, 64));
	ASSERT_TRUE(remote_untouched(self));
}

TEST_F(ra, write_without_remote_write)
{
	ASSERT_NE(NULL, reg_remote(self, self->pd, IBV_ACCESS_REMOTE_READ));
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_RDMA_WRITE, RADDR(self),
			 self->rmr->rkey, 64));
	ASSERT_TRUE(remote_untouched(self));
}

TEST_F(ra, read_without_remote_read)
{
	ASSERT_NE(NULL, reg_remote(self, self->pd, IBV_ACCESS_REMOTE_WRITE));
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_RDMA_READ, RADDR(self),
			 self->rmr->rkey, 64));
	ASSERT_EQ(0x5a, self->local[0]);	/* nothing came back */
	ASSERT_TRUE(remote_untouched(self));
}

TEST_F(ra, atomic_without_remote_atomic)
{
	ASSERT_NE(NULL, reg_remote(self, self->pd, IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ));
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_ATOMIC_FETCH_AND_ADD, RADDR(self),
			 self->rmr->rkey, 8));
	ASSERT_TRUE(remote_untouched(self));
}

TEST_F(ra, deregistered_mr)
{
	uint32_t rkey;

	ASSERT_NE(NULL, reg_remote(self, self->pd, ALL_REMOTE));
	rkey = self->rmr->rkey;
	ASSERT_EQ(0, ibv_dereg_mr(self->rmr));
	self->rmr = NULL;
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_RDMA_WRITE, RADDR(self), rkey, 64));
	ASSERT_TRUE(remote_untouched(self));
}

/*
 * Rereg adding write access (issue 15, defect 18). srdma changed access
 * in place, so write access could be added to a umem that ib_umem_get()
 * pinned for reading only; now such a rereg pins the memory again for
 * writing (drivers/core/mr.c), as a new MR that ib_uverbs swaps in.
 *
 * Not tested through COW after fork(): neither kernel pins a COW-shared
 * page for a read-only MR. 6.1 pins every umem with FOLL_WRITE (plus
 * FOLL_FORCE when read-only), which breaks COW at registration; 6.12 pins
 * read-only without FOLL_WRITE, but a read-only FOLL_LONGTERM pin unshares
 * a COW-shared anonymous page or a page of a private file mapping
 * (gup_must_unshare()). Either way the pinned page is the process's own,
 * and a write through it would pass with or without the fix. What the
 * re-pin adds that both kernels show is the permission check: memory the
 * process may only read cannot be registered for writing, nor reach
 * write access by a rereg.
 */
#define RW_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ)

/*
 * The control, and the path the fix added: writable memory registered
 * for remote reads only, then rereg adding write access. A WRITE through
 * the rkey the rereg answered lands, and so does a READ's reply placed
 * through its lkey (local write is new too); if the rereg made a new MR
 * (new keys: srdma does once the pin was read-only), the old key is gone.
 */
TEST_F(ra, rereg_adding_write_lands)
{
	struct ibv_sge sge = { .addr = RADDR(self) + 2048, .length = 64 };
	struct ibv_send_wr wr = {
		.wr_id = 10,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	uint32_t rkey;

	self->rmr = ibv_reg_mr(self->pd, self->remote, BUF_LEN,
			       IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, self->rmr);
	rkey = self->rmr->rkey;
	ASSERT_EQ(0, rereg_mr_access(self->rmr, RW_ACCESS));
	TH_LOG("rkey %#x -> %#x", rkey, self->rmr->rkey);
	ASSERT_EQ(IBV_WC_SUCCESS, one_op(self, IBV_WR_RDMA_WRITE, RADDR(self),
					 self->rmr->rkey, 64));
	ASSERT_EQ(0, memcmp(self->remote, self->local, 64));
	ASSERT_EQ(PATTERN, self->remote[64]);

	/* read those 64 bytes back into the same MR, 2 KiB further */
	sge.lkey = self->rmr->lkey;
	wr.wr.rdma.remote_addr = RADDR(self);
	wr.wr.rdma.rkey = self->rmr->rkey;
	ASSERT_EQ(0, ibv_post_send(self->req, &wr, &bad));
	ASSERT_EQ(0, wait_wc(self->cq, &wc)) TH_LOG("READ never completed");
	ASSERT_EQ(10ULL, wc.wr_id);
	ASSERT_EQ(IBV_WC_SUCCESS, (int)wc.status);
	ASSERT_EQ(0, memcmp(self->remote + 2048, self->local, 64));

	if (self->rmr->rkey != rkey) {
		memset(self->remote, PATTERN, BUF_LEN);
		ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
			  one_op(self, IBV_WR_RDMA_WRITE, RADDR(self), rkey, 64));
		ASSERT_TRUE(remote_untouched(self));
	}
}

/*
 * @buf: BUF_LEN bytes of PATTERN the process may only read (@fd, if not
 * -1, the file under them), registered for remote reads as self->rmr.
 * A rereg adding write access must be refused, as a registration with
 * write access is, and leave the MR as it was; no WRITE may reach @buf.
 * Without the fix the rereg succeeded and the WRITE landed.
 */
static void rereg_write_refused(FIXTURE_DATA(ra) *self,
				struct __test_metadata *_metadata,
				uint8_t *buf, int fd)
{
	uint8_t file[BUF_LEN];
	struct ibv_mr *mr;
	uint32_t rkey;
	int err, st;

	/* the MR reaches @buf: a READ through it brings PATTERN back */
	ASSERT_EQ(IBV_WC_SUCCESS, one_op(self, IBV_WR_RDMA_READ,
					 (uintptr_t)buf, self->rmr->rkey, 64));
	ASSERT_EQ(PATTERN, self->local[0]);
	memset(self->local, 0x5a, BUF_LEN);

	/* the rule: this memory cannot be registered for writing */
	mr = ibv_reg_mr(self->pd, buf, BUF_LEN, RW_ACCESS);
	if (mr)
		ibv_dereg_mr(mr);
	ASSERT_EQ(NULL, mr) TH_LOG("read-only memory registered for writing");

	rkey = self->rmr->rkey;
	err = rereg_mr_access(self->rmr, RW_ACCESS);
	if (!err) {
		st = one_op(self, IBV_WR_RDMA_WRITE, (uintptr_t)buf,
			    self->rmr->rkey, 64);
		TH_LOG("rereg added write access; a WRITE through it: status %d",
		       st);
	}
	ASSERT_TRUE(bytes_are(buf, BUF_LEN, PATTERN))
		TH_LOG("a WRITE changed memory the process may only read");
	if (fd >= 0) {
		ASSERT_EQ(BUF_LEN, pread(fd, file, BUF_LEN, 0));
		ASSERT_TRUE(bytes_are(file, BUF_LEN, PATTERN))
			TH_LOG("a WRITE changed the file");
	}
	ASSERT_NE(0, err) TH_LOG("rereg added write access");
	TH_LOG("rereg refused: %s", strerror(-err));

	/* the MR is as it was: its key still reads, and still cannot write */
	ASSERT_EQ(rkey, self->rmr->rkey);
	ASSERT_EQ(IBV_WC_SUCCESS, one_op(self, IBV_WR_RDMA_READ,
					 (uintptr_t)buf, rkey, 64));
	ASSERT_EQ(PATTERN, self->local[0]);
	memset(self->local, 0x5a, BUF_LEN);
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR, one_op(self, IBV_WR_RDMA_WRITE,
						(uintptr_t)buf, rkey, 64));
	ASSERT_TRUE(bytes_are(buf, BUF_LEN, PATTERN));
}

/*
 * Private anonymous memory made read-only with mprotect(). Fails without
 * the fix on 6.1 and on 6.12: both pin it for a read-only MR (6.1 with
 * FOLL_FORCE), and the rereg in place let the WRITE through.
 */
TEST_F(ra, rereg_adding_write_to_readonly_memory)
{
	uint8_t *buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, PATTERN, BUF_LEN);
	ASSERT_EQ(0, mprotect(buf, BUF_LEN, PROT_READ));
	self->rmr = ibv_reg_mr(self->pd, buf, BUF_LEN, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, self->rmr);
	rereg_write_refused(self, _metadata, buf, -1);
	ibv_dereg_mr(self->rmr);
	self->rmr = NULL;
	munmap(buf, BUF_LEN);
}

/*
 * A shared read-only mapping of a memfd sealed against writes: there a
 * read-only MR pins the file's own page, so without the fix a WRITE went
 * into a file nobody may write. Fails without the fix on 6.12; 6.1 pins
 * every umem with FOLL_WRITE, which a shared read-only mapping refuses
 * even for a read-only MR: skipped there.
 */
TEST_F(ra, rereg_adding_write_to_sealed_file)
{
	uint8_t page[BUF_LEN];
	uint8_t *buf;
	int fd, err;

	memset(page, PATTERN, BUF_LEN);
	fd = memfd_create("srdma-remote-access", MFD_ALLOW_SEALING);
	ASSERT_LE(0, fd);
	ASSERT_EQ(BUF_LEN, pwrite(fd, page, BUF_LEN, 0));
	ASSERT_EQ(0, fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK |
			   F_SEAL_GROW | F_SEAL_SEAL));
	buf = mmap(NULL, BUF_LEN, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, buf);
	self->rmr = ibv_reg_mr(self->pd, buf, BUF_LEN, IBV_ACCESS_REMOTE_READ);
	if (!self->rmr) {
		err = errno;
		munmap(buf, BUF_LEN);
		close(fd);
		SKIP(return, "%s: this kernel pins a read-only MR for writing",
		     strerror(err));
	}
	rereg_write_refused(self, _metadata, buf, fd);
	ibv_dereg_mr(self->rmr);
	self->rmr = NULL;
	munmap(buf, BUF_LEN);
	close(fd);
}

/* The status of @qp's next completion (others on its CQ are dropped). */
static int qp_wc_status(FIXTURE_DATA(ra) *self, struct ibv_qp *qp)
{
	struct ibv_cq *cq = qp == self->resp ? self->rcq : self->cq;
	struct ibv_wc wc;
	int err;

	do {
		err = wait_wc(cq, &wc);
		if (err)
			return err;
	} while (wc.qp_num != qp->qp_num);
	return wc.status;
}

/* Post a type 2 bind (or @mw's invalidation when !@bind) on the responder. */
static int resp_mw_op(FIXTURE_DATA(ra) *self, struct ibv_mw *mw, int bind,
		      uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 2,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	if (bind) {
		wr.opcode = IBV_WR_BIND_MW;
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = rkey;
		wr.bind_mw.bind_info.mr = self->rmr;
		wr.bind_mw.bind_info.addr = (uintptr_t)self->remote;
		wr.bind_mw.bind_info.length = BUF_LEN;
		wr.bind_mw.bind_info.mw_access_flags = ALL_REMOTE;
	} else {
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.invalidate_rkey = rkey;
	}
	err = ibv_post_send(self->resp, &wr, &bad);
	if (err)
		return -err;
	return qp_wc_status(self, self->resp);
}

/*
 * A window is a key like any other, until it is invalidated: then every
 * access through it fails with a protection error and the memory under
 * it is untouched. Each case proves the window worked first.
 */
static int mw_type2_bound(FIXTURE_DATA(ra) *self,
			  struct __test_metadata *_metadata,
			  struct ibv_mw **mw, uint32_t *rkey)
{
	ASSERT_NE(NULL, reg_remote(self, self->pd, ALL_REMOTE |
				   IBV_ACCESS_MW_BIND));
	*mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	if (!*mw)
		SKIP(return 0, "no type 2 memory windows");
	*rkey = ibv_inc_rkey((*mw)->rkey);
	ASSERT_EQ(IBV_WC_SUCCESS, resp_mw_op(self, *mw, 1, *rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, one_op(self, IBV_WR_RDMA_WRITE, RADDR(self),
					 *rkey, 64));
	ASSERT_EQ(0, memcmp(self->remote, self->local, 64));
	memset(self->remote, PATTERN, BUF_LEN);
	ASSERT_EQ(IBV_WC_SUCCESS, resp_mw_op(self, *mw, 0, *rkey));
	return 1;
}

TEST_F(ra, write_through_invalidated_window)
{
	struct ibv_mw *mw = NULL;
	uint32_t rkey = 0;

	if (!mw_type2_bound(self, _metadata, &mw, &rkey))
		return;
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_RDMA_WRITE, RADDR(self), rkey, 64));
	ASSERT_TRUE(remote_untouched(self));
	ibv_dealloc_mw(mw);
}

TEST_F(ra, read_through_invalidated_window)
{
	struct ibv_mw *mw = NULL;
	uint32_t rkey = 0;

	if (!mw_type2_bound(self, _metadata, &mw, &rkey))
		return;
	memset(self->local, 0x5a, BUF_LEN);
	/* several packets at MTU 1024: none may come back */
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_RDMA_READ, RADDR(self), rkey, BUF_LEN));
	ASSERT_EQ(0x5a, self->local[0]);
	ASSERT_EQ(0x5a, self->local[BUF_LEN - 1]);
	ASSERT_TRUE(remote_untouched(self));
	ibv_dealloc_mw(mw);
}

/* A type 1 window unbound by a zero-length bind refuses its old key. */
TEST_F(ra, write_through_unbound_window)
{
	struct ibv_mw_bind bind = { .wr_id = 3, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_mw *mw;
	uint32_t rkey;

	ASSERT_NE(NULL, reg_remote(self, self->pd, ALL_REMOTE |
				   IBV_ACCESS_MW_BIND));
	mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	if (!mw)
		SKIP(return, "no type 1 memory windows");
	bind.bind_info.mr = self->rmr;
	bind.bind_info.addr = (uintptr_t)self->remote;
	bind.bind_info.length = BUF_LEN;
	bind.bind_info.mw_access_flags = ALL_REMOTE;
	ASSERT_EQ(0, ibv_bind_mw(self->resp, mw, &bind));
	ASSERT_EQ(IBV_WC_SUCCESS, qp_wc_status(self, self->resp));
	rkey = mw->rkey;
	ASSERT_EQ(IBV_WC_SUCCESS, one_op(self, IBV_WR_RDMA_WRITE, RADDR(self),
					 rkey, 64));
	ASSERT_EQ(0, memcmp(self->remote, self->local, 64));
	memset(self->remote, PATTERN, BUF_LEN);

	/* librxe wants the MR even for a zero-length bind, as pyverbs does */
	bind.bind_info.length = 0;
	ASSERT_EQ(0, ibv_bind_mw(self->resp, mw, &bind));
	ASSERT_EQ(IBV_WC_SUCCESS, qp_wc_status(self, self->resp));
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_RDMA_WRITE, RADDR(self), rkey, 64));
	ASSERT_TRUE(remote_untouched(self));
	ibv_dealloc_mw(mw);
}

/* An MR with a window bound to it cannot be deregistered. */
TEST_F(ra, dereg_with_bound_window)
{
	struct ibv_mw *mw = NULL;
	uint32_t rkey = 0;

	ASSERT_NE(NULL, reg_remote(self, self->pd, ALL_REMOTE |
				   IBV_ACCESS_MW_BIND));
	mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	if (!mw)
		SKIP(return, "no type 2 memory windows");
	rkey = ibv_inc_rkey(mw->rkey);
	ASSERT_EQ(IBV_WC_SUCCESS, resp_mw_op(self, mw, 1, rkey));
	ASSERT_NE(0, ibv_dereg_mr(self->rmr));
	ASSERT_EQ(IBV_WC_SUCCESS, resp_mw_op(self, mw, 0, rkey));
	ASSERT_EQ(0, ibv_dealloc_mw(mw));
}

/*
 * Keys must not be guessable from one another: before, each new key was
 * the last one plus 0x101 (next index, next key byte).
 */
#define NKEYS 16
TEST_F(ra, keys_not_sequential)
{
	struct ibv_mr *mr[NKEYS];
	int i, next_index = 0, next_byte = 0, same = 0;

	for (i = 0; i < NKEYS; i++) {
		mr[i] = ibv_reg_mr(self->pd, self->remote, BUF_LEN,
				   IBV_ACCESS_REMOTE_READ);
		ASSERT_NE(NULL, mr[i]);
	}
	for (i = 1; i < NKEYS; i++) {
		uint32_t a = mr[i - 1]->rkey, b = mr[i]->rkey;

		next_index += (b >> 8) == (a >> 8) + 1;
		next_byte += (uint8_t)b == (uint8_t)(a + 1);
		same += (uint8_t)b == (uint8_t)a;
	}
	for (i = 0; i < NKEYS; i++)
		ibv_dereg_mr(mr[i]);
	/* by chance: ~1 in 16 and 1 in 256 per pair */
	EXPECT_LT(next_index, NKEYS / 2) TH_LOG("%d of %d", next_index, NKEYS - 1);
	EXPECT_LT(next_byte, NKEYS / 2) TH_LOG("%d of %d", next_byte, NKEYS - 1);
	EXPECT_LT(same, NKEYS / 2) TH_LOG("%d of %d", same, NKEYS - 1);
}

/* librxe refuses a misaligned atomic at post time, before the wire. */
TEST_F(ra, misaligned_atomic)
{
	int st;

	ASSERT_NE(NULL, reg_remote(self, self->pd, ALL_REMOTE));
	st = one_op(self, IBV_WR_ATOMIC_FETCH_AND_ADD, RADDR(self) + 4,
		    self->rmr->rkey, 8);
	ASSERT_TRUE(st == -EINVAL || st == IBV_WC_REM_INV_REQ_ERR)
		TH_LOG("status %d", st);
	ASSERT_TRUE(remote_untouched(self));
}

/*
 * A WRITE with immediate takes a receive before its key is checked; when
 * the check fails that receive completes in error (it used to vanish:
 * popped off the ring, it was neither completed nor flushed).
 */
TEST_F(ra, write_imm_bad_rkey_completes_recv)
{
	struct ibv_recv_wr rwr = { .wr_id = 77 }, *rbad;
	struct ibv_wc wc;

	ASSERT_NE(NULL, reg_remote(self, self->pd, ALL_REMOTE));
	ASSERT_EQ(0, ibv_post_recv(self->resp, &rwr, &rbad));
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR,
		  one_op(self, IBV_WR_RDMA_WRITE_WITH_IMM, RADDR(self),
			 self->rmr->rkey ^ 0x100, 64));
	ASSERT_TRUE(remote_untouched(self));
	ASSERT_EQ(0, wait_wc(self->rcq, &wc)) TH_LOG("receive never completed");
	ASSERT_EQ(77ULL, wc.wr_id);
	ASSERT_NE(IBV_WC_SUCCESS, (int)wc.status);
}

static int post_wait(struct ibv_qp *qp, struct ibv_cq *cq,
		     struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int err = ibv_post_send(qp, wr, &bad);

	if (err)
		return -err;
	if (wait_wc(cq, &wc))
		return -ETIMEDOUT;
	return wc.status;
}

/*
 * A long READ through a type 2 window that the responder invalidates
 * while the reply is on its way: the READ completes, or fails with a
 * remote access error, but every byte it placed is one it read (before,
 * the packets after the invalidate carried whatever the skb held).
 */
TEST_F(ra, read_window_invalidated_midway)
{
	uint8_t *src = aligned_alloc(4096, BIG_LEN);
	uint8_t *dst = aligned_alloc(4096, BIG_LEN);
	struct ibv_send_wr wr, *bad;
	struct ibv_mr *smr, *dmr;
	struct ibv_sge sge;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	uint32_t rkey;
	size_t i;
	int st;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	memset(src, PATTERN, BIG_LEN);
	memset(dst, 0x5a, BIG_LEN);
	smr = ibv_reg_mr(self->pd, src, BIG_LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	dmr = ibv_reg_mr(self->pd, dst, BIG_LEN, IBV_ACCESS_LOCAL_WRITE);
	mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, smr);
	ASSERT_NE(NULL, dmr);
	ASSERT_NE(NULL, mw);

	rkey = ibv_inc_rkey(mw->rkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = smr;
	wr.bind_mw.bind_info.addr = (uintptr_t)src;
	wr.bind_mw.bind_info.length = BIG_LEN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	ASSERT_EQ(IBV_WC_SUCCESS, post_wait(self->resp, self->rcq, &wr));

	sge.addr = (uintptr_t)dst;
	sge.length = BIG_LEN;
	sge.lkey = dmr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 3;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)src;
	wr.wr.rdma.rkey = rkey;
	ASSERT_EQ(0, ibv_post_send(self->req, &wr, &bad));

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 4;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	ASSERT_EQ(IBV_WC_SUCCESS, post_wait(self->resp, self->rcq, &wr));

	ASSERT_EQ(0, wait_wc(self->cq, &wc)) TH_LOG("READ never completed");
	st = wc.status;
	TH_LOG("READ status %d", st);
	ASSERT_TRUE(st == IBV_WC_SUCCESS || st == IBV_WC_REM_ACCESS_ERR);
	for (i = 0; i < BIG_LEN; i++)
		if (dst[i] != PATTERN && (st == IBV_WC_SUCCESS || dst[i] != 0x5a))
			break;
	ASSERT_EQ((size_t)BIG_LEN, i) TH_LOG("byte %zu is %#x", i, dst[i]);

	ibv_dealloc_mw(mw);
	ibv_dereg_mr(dmr);
	ibv_dereg_mr(smr);
	free(dst);
	free(src);
}

/*
 * SQD on a QP with a WRITE on the wire: SQ_DRAINED comes only once the
 * WRITE is acknowledged, so its completion is already there (before,
 * the event came at once and ACKs were ignored in SQD: the WRITE hung).
 */
TEST_F(ra, sqd_drains_after_acks)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_SQD,
		.en_sqd_async_notify = 1,
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)self->local,
		.length = BUF_LEN,
		.lkey = self->lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 5,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct pollfd pfd = { .fd = self->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct ibv_wc wc;
	int flags;

	ASSERT_NE(NULL, reg_remote(self, self->pd, ALL_REMOTE));
	wr.wr.rdma.remote_addr = RADDR(self);
	wr.wr.rdma.rkey = self->rmr->rkey;
	flags = fcntl(pfd.fd, F_GETFL);
	ASSERT_EQ(0, fcntl(pfd.fd, F_SETFL, flags | O_NONBLOCK));

	ASSERT_EQ(0, ibv_post_send(self->req, &wr, &bad));
	ASSERT_EQ(0, ibv_modify_qp(self->req, &a, IBV_QP_STATE |
				   IBV_QP_EN_SQD_ASYNC_NOTIFY));
	ASSERT_EQ(1, poll(&pfd, 1, POLL_MS)) TH_LOG("no SQ_DRAINED event");
	ASSERT_EQ(0, ibv_get_async_event(self->ctx, &ev));
	ibv_ack_async_event(&ev);
	ASSERT_EQ(IBV_EVENT_SQ_DRAINED, (int)ev.event_type);
	ASSERT_EQ(self->req, ev.element.qp);
	ASSERT_EQ(1, ibv_poll_cq(self->cq, 1, &wc))
		TH_LOG("drained with the WRITE still outstanding");
	ASSERT_EQ(5ULL, wc.wr_id);
	ASSERT_EQ(IBV_WC_SUCCESS, (int)wc.status);
	ASSERT_EQ(0, memcmp(self->remote, self->local, BUF_LEN));
}

/* A UD message is one packet: longer than the path MTU, it fails locally. */
TEST_F(ra, ud_message_over_path_mtu)
{
	struct ibv_ah_attr aha = {
		.is_global = 1,
		.grh = { .dgid = self->gid, .sgid_index = self->gid_index,
			 .hop_limit = 64 },
		.port_num = 1,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = 0x11111111,
	};
	struct ibv_port_attr port;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge;
	struct ibv_qp *ud;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	uint32_t mtu;
	int err;

	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &port));
	mtu = 128u << port.active_mtu;
	if (mtu >= BUF_LEN)
		SKIP(return, "path MTU %u: no message of %u bytes exceeds it",
		     mtu, BUF_LEN);
	ud = make_qp(self->pd, self->cq, IBV_QPT_UD);
	ah = ibv_create_ah(self->pd, &aha);
	ASSERT_NE(NULL, ud);
	ASSERT_NE(NULL, ah);
	ASSERT_EQ(0, ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_QKEY));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	ASSERT_EQ(0, ibv_modify_qp(ud, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_RTS;
	ASSERT_EQ(0, ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN));

	sge.addr = (uintptr_t)self->local;
	sge.length = mtu + 4;
	sge.lkey = self->lmr->lkey;
	wr.wr_id = 6;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = ud->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	err = ibv_post_send(ud, &wr, &bad);
	if (!err) {
		ASSERT_EQ(0, wait_wc(self->cq, &wc));
		ASSERT_EQ(6ULL, wc.wr_id);
		ASSERT_EQ(IBV_WC_LOC_LEN_ERR, (int)wc.status);
	} else {
		ASSERT_EQ(EINVAL, err);
	}
	ibv_destroy_qp(ud);
	ibv_destroy_ah(ah);
}

/*
 * A receive taken from an SRQ belongs to the SRQ's consumer, not to the
 * QP that took it: whatever becomes of that QP, it comes back, at the
 * latest as a flush. Before, a RoCE QP reset or destroyed while it held
 * one (a SEND in progress) dropped it without a completion.
 */
enum cut { CUT_ERROR, CUT_RESET, CUT_DESTROY };

/* @qp reset or destroyed (then NULL) as @how says; 0 or -1. */
static int cut_qp(struct ibv_qp **qp, enum cut how)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	switch (how) {
	case CUT_ERROR:
		return ibv_modify_qp(*qp, &a, IBV_QP_STATE) ? -1 : 0;
	case CUT_RESET:
		a.qp_state = IBV_QPS_RESET;
		return ibv_modify_qp(*qp, &a, IBV_QP_STATE) ? -1 : 0;
	default:
		if (ibv_destroy_qp(*qp))
			return -1;
		*qp = NULL;
		return 0;
	}
}

struct srq_send {
	struct ibv_srq *srq;
	struct ibv_qp *rq;	/* requester */
	struct ibv_qp *rs;	/* responder, on the SRQ */
	uint8_t *src, *dst;
	struct ibv_mr *smr, *dmr;
};

static void srq_send_free(struct srq_send *t)
{
	if (t->rq)
		ibv_destroy_qp(t->rq);
	if (t->rs)
		ibv_destroy_qp(t->rs);
	if (t->srq)
		ibv_destroy_srq(t->srq);
	if (t->smr)
		ibv_dereg_mr(t->smr);
	if (t->dmr)
		ibv_dereg_mr(t->dmr);
	free(t->src);
	free(t->dst);
	memset(t, 0, sizeof(*t));
}

/*
 * An RC pair whose responder takes receives from its own SRQ and sends
 * its ACKs to a QPN that does not exist: the requester stops when its
 * window is full and a long SEND stays in progress, its receive held by
 * the responder, for as long as we like. 0 or -1.
 */
#define NO_QPN	0xfffff0
static int srq_send_setup(FIXTURE_DATA(ra) *self, struct srq_send *t)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };

	memset(t, 0, sizeof(*t));
	t->src = aligned_alloc(4096, BIG_LEN);
	t->dst = aligned_alloc(4096, BIG_LEN);
	if (!t->src || !t->dst)
		return -1;
	memset(t->src, PATTERN, BIG_LEN);
	memset(t->dst, 0x5a, BIG_LEN);
	t->smr = ibv_reg_mr(self->pd, t->src, BIG_LEN, IBV_ACCESS_LOCAL_WRITE);
	t->dmr = ibv_reg_mr(self->pd, t->dst, BIG_LEN, IBV_ACCESS_LOCAL_WRITE);
	t->srq = ibv_create_srq(self->pd, &sa);
	if (!t->smr || !t->dmr || !t->srq)
		return -1;
	t->rq = make_qp(self->pd, self->cq, IBV_QPT_RC);
	t->rs = make_srq_qp(self->pd, self->rcq, IBV_QPT_RC, t->srq);
	if (!t->rq || !t->rs)
		return -1;
	if (connect_qp(t->rq, t->rs->qp_num, self->gid_index, &self->gid) ||
	    connect_qp(t->rs, NO_QPN, self->gid_index, &self->gid))
		return -1;
	return 0;
}

/*
 * A BIG_LEN SEND into the SRQ's one receive, cut with @how once it has
 * begun and stalled; its receive must come back flushed.
 */
static void srq_send_cut(FIXTURE_DATA(ra) *self,
			 struct __test_metadata *_metadata, enum cut how)
{
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 88, .sg_list = &sge, .num_sge = 1 };
	struct ibv_send_wr wr = {
		.wr_id = 8,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint8_t *dst;
	struct ibv_recv_wr *rbad;
	struct srq_send t;
	struct timespec t0;
	struct ibv_wc wc;

	ASSERT_EQ(0, srq_send_setup(self, &t));
	sge.addr = (uintptr_t)t.dst;
	sge.length = BIG_LEN;
	sge.lkey = t.dmr->lkey;
	ASSERT_EQ(0, ibv_post_srq_recv(t.srq, &rwr, &rbad));
	sge.addr = (uintptr_t)t.src;
	sge.lkey = t.smr->lkey;
	ASSERT_EQ(0, ibv_post_send(t.rq, &wr, &bad));

	/*
	 * The first packet placed: the receive is the responder's now. The
	 * kernel writes dst under us: a read after usleep() (a call) cannot
	 * be one the compiler kept from before.
	 */
	dst = t.dst;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (dst[0] != PATTERN && ms_since(&t0) < POLL_MS)
		usleep(1000);
	ASSERT_EQ(PATTERN, dst[0]) TH_LOG("the SEND never began");
	usleep(200 * 1000);
	ASSERT_NE(PATTERN, dst[BIG_LEN - 1]) TH_LOG("the SEND did not stall");
	ASSERT_EQ(0, ibv_poll_cq(self->rcq, 1, &wc))
		TH_LOG("receive %llu completed early, status %d",
		       (unsigned long long)wc.wr_id, wc.status);

	ASSERT_EQ(0, cut_qp(&t.rs, how));
	ASSERT_EQ(0, wait_wc(self->rcq, &wc))
		TH_LOG("the receive taken from the SRQ vanished");
	ASSERT_EQ(88ULL, wc.wr_id);
	ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, (int)wc.status);
	srq_send_free(&t);
}

/* The control: a QP that goes to error flushes what it holds. */
TEST_F(ra, srq_recv_held_flushed_on_error)
{
	srq_send_cut(self, _metadata, CUT_ERROR);
}

TEST_F(ra, srq_recv_held_flushed_on_reset)
{
	srq_send_cut(self, _metadata, CUT_RESET);
}

TEST_F(ra, srq_recv_held_flushed_on_destroy)
{
	srq_send_cut(self, _metadata, CUT_DESTROY);
}

/* The device's rx_dropped counter, or -1. */
static long hw_rx_dropped(FIXTURE_DATA(ra) *self)
{
	char path[256];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/rx_dropped",
		 ibv_get_device_name(self->ctx->device));
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/*
 * The same without timing: a UD message too long for the receive is
 * dropped and the receive stays with the QP for the next one (UD is
 * unreliable). Destroying the QP then must give it back.
 */
TEST_F(ra, srq_recv_held_by_ud_flushed_on_destroy)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_ah_attr aha = {
		.is_global = 1,
		.grh = { .dgid = self->gid, .sgid_index = self->gid_index,
			 .hop_limit = 64 },
		.port_num = 1,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = 0x11111111,
	};
	struct ibv_sge rsge = {
		.addr = (uintptr_t)self->local + 2048,
		.length = 16,		/* not even the GRH fits */
		.lkey = self->lmr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 99, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_sge sge = {
		.addr = (uintptr_t)self->local,
		.length = 100,
		.lkey = self->lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 9,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_recv_wr *rbad;
	struct timespec t0;
	struct ibv_srq *srq;
	struct ibv_qp *ud;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	long dropped;

	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	ud = make_srq_qp(self->pd, self->rcq, IBV_QPT_UD, srq);
	ah = ibv_create_ah(self->pd, &aha);
	ASSERT_NE(NULL, ud);
	ASSERT_NE(NULL, ah);
	ASSERT_EQ(0, ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_QKEY));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	ASSERT_EQ(0, ibv_modify_qp(ud, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_RTS;
	ASSERT_EQ(0, ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN));
	ASSERT_EQ(0, ibv_post_srq_recv(srq, &rwr, &rbad));

	dropped = hw_rx_dropped(self);
	ASSERT_LE(0, dropped) TH_LOG("no rx_dropped counter");
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = ud->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	ASSERT_EQ(0, ibv_post_send(ud, &wr, &bad));
	ASSERT_EQ(0, wait_wc(self->rcq, &wc));
	ASSERT_EQ(9ULL, wc.wr_id);
	ASSERT_EQ(IBV_WC_SUCCESS, (int)wc.status);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (hw_rx_dropped(self) == dropped && ms_since(&t0) < POLL_MS)
		usleep(1000);
	ASSERT_LT(dropped, hw_rx_dropped(self)) TH_LOG("the message never came");
	ASSERT_EQ(0, ibv_poll_cq(self->rcq, 1, &wc))
		TH_LOG("receive %llu completed, status %d",
		       (unsigned long long)wc.wr_id, wc.status);

	ASSERT_EQ(0, ibv_destroy_qp(ud));
	ASSERT_EQ(0, wait_wc(self->rcq, &wc))
		TH_LOG("the receive taken from the SRQ vanished");
	ASSERT_EQ(99ULL, wc.wr_id);
	ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, (int)wc.status);
	ibv_destroy_ah(ah);
	ASSERT_EQ(0, ibv_destroy_srq(srq));
}

TEST_HARNESS_MAIN
