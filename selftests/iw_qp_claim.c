// SPDX-License-Identifier: GPL-2.0
/*
 * iw_qp_claim: one iWARP QP may carry one connection. Against a peer
 * that accepts TCP and then stays silent (iwarp_bad_peer.py ... silent),
 * a first rdma_connect on a QP is left in MPA set-up; a second
 * rdma_connect, from another id naming the same QP, must be refused
 * (EBUSY), and destroying the QP must not wait for the peer: it ends the
 * set-up at once, and the first id hears that its connect failed. Before
 * all that, another process naming the QP by number in its own connect
 * must be refused (EACCES) and leave the QP unclaimed. Exit status 0 only
 * if all of that held.
 *
 *   iw_qp_claim ADDR PORT
 *   iw_qp_claim ADDR PORT QPN   (the other process: connect naming QPN)
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <rdma/rdma_cma.h>

#include "cm_util.h"

#define STEP_MS	10000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* An id on @ch with its address and route resolved to ADDR:PORT. */
static struct rdma_cm_id *resolved_id(struct rdma_event_channel *ch,
				      const char *addr, const char *port)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_cm_id *id;
	int st;

	if (rdma_getaddrinfo(addr, port, &hints, &res)) {
		perror("rdma_getaddrinfo");
		return NULL;
	}
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		perror("rdma_create_id");
		rdma_freeaddrinfo(res);
		return NULL;
	}
	if (rdma_resolve_addr(id, NULL, res->ai_dst_addr, 2000) ||
	    cm_next_event(ch, STEP_MS, NULL, &st) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(id, 2000) ||
	    cm_next_event(ch, STEP_MS, NULL, &st) != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		fprintf(stderr, "address/route resolution failed\n");
		rdma_destroy_id(id);
		id = NULL;
	}
	rdma_freeaddrinfo(res);
	return id;
}

/* The other process: connect on a fresh id naming someone else's QP. */
static int intrude(const char *addr, const char *port, const char *qpn)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	int err;

	if (!ch) {
		perror("rdma_create_event_channel");
		return 1;
	}
	id = resolved_id(ch, addr, port);
	if (!id)
		return 1;
	cp.qp_num = strtoul(qpn, NULL, 0);
	err = rdma_connect(id, &cp) ? errno : 0;
	printf("another process's connect on QP %u: %s\n", cp.qp_num,
	       err ? strerror(err) : "accepted");
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return err == EACCES ? 0 : 1;
}

/* Run intrude() in a process of its own; 0 if it was refused. */
static int intruder_refused(const char *addr, const char *port, uint32_t qpn)
{
	char num[16], *args[] = { "iw_qp_claim", (char *)addr, (char *)port,
				  num, NULL };
	extern char **environ;
	int status;
	pid_t pid;

	snprintf(num, sizeof(num), "%u", qpn);
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ)) {
		perror("posix_spawn");
		return 1;
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ch1, *ch2;
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_cm_id *id1, *id2;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int rc = 1, ev, st, err;
	double t0, took;

	if (argc == 4)
		return intrude(argv[1], argv[2], argv[3]);
	if (argc != 3) {
		fprintf(stderr, "usage: %s ADDR PORT [QPN]\n", argv[0]);
		return 2;
	}
	ch1 = rdma_create_event_channel();
	ch2 = rdma_create_event_channel();
	if (!ch1 || !ch2) {
		perror("rdma_create_event_channel");
		return 1;
	}
	id1 = resolved_id(ch1, argv[1], argv[2]);
	id2 = resolved_id(ch2, argv[1], argv[2]);
	if (!id1 || !id2)
		return 1;
	pd = ibv_alloc_pd(id1->verbs);
	cq = pd ? ibv_create_cq(id1->verbs, 8, NULL, NULL, 0) : NULL;
	if (!cq) {
		perror("ibv_alloc_pd/ibv_create_cq");
		return 1;
	}
	attr.send_cq = cq;
	attr.recv_cq = cq;
	if (rdma_create_qp(id1, pd, &attr)) {
		perror("rdma_create_qp");
		return 1;
	}
	if (intruder_refused(argv[1], argv[2], id1->qp->qp_num)) {
		fprintf(stderr, "another process could claim QP %u\n",
			id1->qp->qp_num);
		return 1;
	}
	if (rdma_connect(id1, &cp)) {
		perror("first rdma_connect");
		return 1;
	}
	printf("first connect on QP %u under way\n", id1->qp->qp_num);

	/* id2 has no QP of its own: librdmacm passes qp_num as given */
	cp.qp_num = id1->qp->qp_num;
	err = rdma_connect(id2, &cp) ? errno : 0;
	printf("second connect on QP %u: %s\n", cp.qp_num,
	       err ? strerror(err) : "accepted");
	if (err != EBUSY) {
		fprintf(stderr, "expected EBUSY\n");
		goto out;
	}

	t0 = now();
	rdma_destroy_qp(id1);
	took = now() - t0;
	printf("destroy_qp during set-up took %.2f s\n", took);
	ev = cm_next_event(ch1, STEP_MS, NULL, &st);
	printf("first id's event: %s (status %d)\n",
	       ev < 0 ? "none" : rdma_event_str(ev), st);
	/* ended by the destroy, not by the set-up timeout (10 s) */
	if (took < 3 && ev >= 0 && ev != RDMA_CM_EVENT_ESTABLISHED)
		rc = 0;
out:
	rdma_destroy_id(id2);
	rdma_destroy_id(id1);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(ch2);
	rdma_destroy_event_channel(ch1);
	return rc;
}
