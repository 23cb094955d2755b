// SPDX-License-Identifier: GPL-2.0
/*
 * Create and destroy verbs objects on one device while the kernel fails
 * allocations (srdma_fault.sh arms failslab, fail_page_alloc or
 * fail_function for this task only). Every create must either succeed or
 * fail with an errno, every destroy must succeed, and the caller then
 * checks that nothing leaked.
 *
 *   fault_objects DEV GID_INDEX ROUNDS [--make-it-fail] [--may-pass]
 *
 * --make-it-fail marks this task for the injectors' task filter once the
 * device is open. Written in C rather than Python because the injectors
 * also fail the task's own syscalls: the heap is grown and every page
 * locked beforehand, so that no later page fault has to read the 9p root
 * the VM runs on and no malloc needs a new mapping.
 * Prints "ROUNDS rounds: CREATED created, FAILED failed"; exits 1 on a
 * bad errno, a failed destroy, or when nothing failed at all (the
 * injection never reached the kernel, so the run proved nothing) unless
 * --may-pass is given.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "verbs_util.h"

#define MR_BYTES	65536
#define MAX_OBJS	16
/* a destroy refused for memory is retried, as a careful user would */
#define DESTROY_TRIES	200

enum kind { K_PD, K_CQ, K_MR, K_MW, K_SRQ, K_QP, K_AH };

struct obj {
	enum kind kind;
	void *p;
};

static unsigned long created, failed, bad;
static struct obj objs[MAX_OBJS];
static int nobjs;
static char mr_buf[MR_BYTES];

/* Record one create: a result, or a NULL whose errno must be a real one. */
static void *note(enum kind kind, void *p, const char *what)
{
	int err = errno;

	if (!p) {
		failed++;
		if (err <= 0 || err > 4095) {
			bad++;
			fprintf(stderr, "%s failed without an errno (%d)\n",
				what, err);
		}
		return NULL;
	}
	created++;
	objs[nobjs].kind = kind;
	objs[nobjs++].p = p;
	return p;
}

static int destroy_one(struct obj *o)
{
	switch (o->kind) {
	case K_PD: return ibv_dealloc_pd(o->p);
	case K_CQ: return ibv_destroy_cq(o->p);
	case K_MR: return ibv_dereg_mr(o->p);
	case K_MW: return ibv_dealloc_mw(o->p);
	case K_SRQ: return ibv_destroy_srq(o->p);
	case K_QP: return ibv_destroy_qp(o->p);
	case K_AH: return ibv_destroy_ah(o->p);
	}
	return -1;
}

/* Newest first, so that nothing is destroyed while something uses it. */
static void destroy_all(void)
{
	int i, t, rc;

	for (i = nobjs - 1; i >= 0; i--) {
		for (t = 0; t < DESTROY_TRIES; t++) {
			rc = destroy_one(&objs[i]);
			if (rc != ENOMEM && rc != -ENOMEM)
				break;
		}
		if (rc) {
			bad++;
			fprintf(stderr, "destroy of object kind %d failed: %d\n",
				objs[i].kind, rc);
		}
	}
	nobjs = 0;
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_RC;
	a.send_cq = cq;
	a.recv_cq = cq;
	a.srq = srq;
	a.cap.max_send_wr = 64;
	a.cap.max_send_sge = 2;
	a.cap.max_recv_wr = srq ? 0 : 64;
	a.cap.max_recv_sge = srq ? 0 : 2;
	return ibv_create_qp(pd, &a);
}

static void one_round(struct ibv_context *ctx, int gid_index,
		      const union ibv_gid *gid)
{
	struct ibv_srq_init_attr sa;
	struct ibv_ah_attr ah;
	struct ibv_srq *srq;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	pd = note(K_PD, ibv_alloc_pd(ctx), "alloc_pd");
	cq = note(K_CQ, ibv_create_cq(ctx, 16, NULL, NULL, 0), "create_cq");
	if (!pd || !cq)
		goto out;
	note(K_MR, ibv_reg_mr(pd, mr_buf, MR_BYTES, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND),
	     "reg_mr");
	note(K_MW, ibv_alloc_mw(pd, IBV_MW_TYPE_2), "alloc_mw");
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 64;
	sa.attr.max_sge = 2;
	srq = note(K_SRQ, ibv_create_srq(pd, &sa), "create_srq");
	note(K_QP, make_qp(pd, cq, NULL), "create_qp");
	if (srq)
		note(K_QP, make_qp(pd, cq, srq), "create_qp(srq)");
	if (gid) {
		memset(&ah, 0, sizeof(ah));
		ah.is_global = 1;
		ah.grh.dgid = *gid;
		ah.grh.sgid_index = gid_index;
		ah.grh.hop_limit = 64;
		ah.port_num = 1;
		note(K_AH, ibv_create_ah(pd, &ah), "create_ah");
	}
out:
	destroy_all();
}

static int make_it_fail(const char *v)
{
	int fd = open("/proc/self/make-it-fail", O_WRONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, v, 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/*
 * Grow the heap once and keep it (no trimming, no mmap for big blocks),
 * then lock every page: later mallocs and page faults need no kernel
 * allocation the injectors could fail.
 */
static void prepare_memory(void)
{
	void *p;

	mallopt(M_MMAP_MAX, 0);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	p = malloc(16 << 20);
	if (p) {
		memset(p, 0, 16 << 20);
		free(p);
	}
	if (mlockall(MCL_CURRENT))
		perror("mlockall (continuing)");
}

int main(int argc, char **argv)
{
	int gid_index, rounds, i, fail = 0, may_pass = 0;
	struct ibv_context *ctx;
	union ibv_gid gid;
	int have_gid;

	if (argc < 4) {
		fprintf(stderr, "usage: %s DEV GID_INDEX ROUNDS [--make-it-fail] [--may-pass]\n",
			argv[0]);
		return 2;
	}
	gid_index = atoi(argv[2]);
	rounds = atoi(argv[3]);
	for (i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--make-it-fail"))
			fail = 1;
		else if (!strcmp(argv[i], "--may-pass"))
			may_pass = 1;
	}
	ctx = open_dev(argv[1]);
	if (!ctx) {
		fprintf(stderr, "cannot open %s\n", argv[1]);
		return 1;
	}
	/* iWARP has no address handles */
	have_gid = ctx->device->node_type != IBV_NODE_RNIC &&
		   !ibv_query_gid(ctx, 1, gid_index, &gid);
	if (fail) {
		prepare_memory();
		if (make_it_fail("1")) {
			perror("make-it-fail");
			return 1;
		}
	}
	for (i = 0; i < rounds; i++)
		one_round(ctx, gid_index, have_gid ? &gid : NULL);
	if (fail)
		make_it_fail("0");
	ibv_close_device(ctx);
	printf("%d rounds: %lu created, %lu failed\n", rounds, created, failed);
	if (bad)
		return 1;
	if (!failed && !may_pass) {
		printf("nothing failed: the injection never reached the kernel\n");
		return 1;
	}
	return 0;
}
