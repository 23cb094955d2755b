// SPDX-License-Identifier: GPL-2.0
/*
 * iw_owner: who owns an iWARP connection request, and a READ reply, once
 * someone else holds it. Three modes, each against iwarp_bad_peer.py:
 *
 *   iw_owner unanswered ADDR PORT
 *	Listen and take a connection request without ever answering it
 *	(as iw_cm does with a request it drops). The peer sees its request
 *	rejected and the connection closed by siwarp's accept deadline;
 *	an accept after that must fail, not connect. Exit 0 if it did.
 *
 *   iw_owner hoard ADDR PORT BACKLOG EXTRA FLAG
 *	Listen with BACKLOG and take requests without answering them until
 *	BACKLOG of them are held. siwarp must offer no more while they are:
 *	the peer's EXTRA other connections wait, unanswered and not reset,
 *	until the peer has seen that and creates FLAG. Then answer the held
 *	ones (reject, private data "held") and serve the EXTRA that reach us
 *	now (reject, "served"), which the peer looks for. Exit 0 if no
 *	request came while BACKLOG were held and all EXTRA came after.
 *
 *   iw_owner read-rereg ADDR PORT FLAG
 *	Connect to the peer, register 16 MiB (0xAA) for remote reads and
 *	advertise it (buf, rkey, size, big endian, as rping does). Once
 *	the peer's READ of all of it is stuck behind a full socket, take
 *	REMOTE_READ away with rereg, overwrite the buffer with 0xBB and
 *	create FLAG: the peer must get no 0xBB byte, and a Terminate.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/ib_user_verbs.h>

#include "cm_util.h"
#include "verbs_util.h"

#define STEP_MS		10000
#define READ_SIZE	(16 << 20)
#define HOARD_MAX	64
#define HOARD_PDATA	"served"
#define HOARD_HELD	"held"
#define HOARD_WAIT_MS	20000	/* for the peer's FLAG */

/* A PD, a CQ and an RC QP on @id. */
static int make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd = ibv_alloc_pd(id->verbs);
	struct ibv_cq *cq = pd ? ibv_create_cq(id->verbs, 16, NULL, NULL, 0) :
				 NULL;

	if (!cq)
		return -1;
	attr.send_cq = cq;
	attr.recv_cq = cq;
	return rdma_create_qp(id, pd, &attr);
}

static int unanswered(struct rdma_addrinfo *res)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_cm_id *lid, *id = NULL;
	int ev, err;

	if (!ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, res->ai_src_addr) || rdma_listen(lid, 4)) {
		perror("listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	if (cm_next_event(ch, 60000, &id, NULL) !=
	    RDMA_CM_EVENT_CONNECT_REQUEST) {
		fprintf(stderr, "no connection request\n");
		return 1;
	}
	printf("connection request: never answered\n");
	fflush(stdout);
	/* the peer has 10 s of deadline and a margin to see it closed */
	ev = cm_next_event(ch, 25000, NULL, NULL);
	if (ev >= 0) {
		fprintf(stderr, "unexpected event %s\n", rdma_event_str(ev));
		return 1;
	}
	if (make_qp(id)) {
		perror("create qp");
		return 1;
	}
	err = rdma_accept(id, &cp) ? errno : 0;
	printf("accept after the deadline: %s\n",
	       err ? strerror(err) : "succeeded");
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
	return err ? 0 : 1;
}

/* The next event within @ms must be a connection request: its id. */
static struct rdma_cm_id *next_request(struct rdma_event_channel *ch, int ms)
{
	struct rdma_cm_id *id = NULL;
	int ev = cm_next_event(ch, ms, &id, NULL);

	if (ev == RDMA_CM_EVENT_CONNECT_REQUEST)
		return id;
	fprintf(stderr, "no connection request: %s\n",
		ev < 0 ? "none came" : rdma_event_str(ev));
	return NULL;
}

static int reject(struct rdma_cm_id *id, const char *pdata)
{
	if (!rdma_reject(id, pdata, strlen(pdata)))
		return 0;
	perror("rdma_reject");
	return -1;
}

/*
 * Read every request at once, so that ucma's count of unread ones never
 * holds any back: only siwarp's count of unanswered ones can.
 */
static int hoard(struct rdma_addrinfo *res, int backlog, int extra,
		 const char *flag)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lid, *held[HOARD_MAX], *id;
	int i, n = 0, served = 0, waited = 0, rc = 1;

	if (backlog < 1 || backlog > HOARD_MAX || extra < 0) {
		fprintf(stderr, "backlog %d: 1 to %d; extra %d\n", backlog,
			HOARD_MAX, extra);
		return 1;
	}
	if (!ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, res->ai_src_addr) ||
	    rdma_listen(lid, backlog)) {
		perror("listen");
		return 1;
	}
	printf("listening, backlog %d\n", backlog);
	fflush(stdout);
	while (n < backlog) {
		held[n] = next_request(ch, 60000);
		if (!held[n])
			goto out;
		n++;
	}
	printf("%d requests held\n", n);
	fflush(stdout);
	/*
	 * Nothing more may reach us while they are held; the peer looks at
	 * its waiting connections meanwhile. Held ones past siwarp's accept
	 * deadline (10 s) would be gone: the rejects below would fail.
	 */
	while (access(flag, F_OK)) {
		if (waited++ == HOARD_WAIT_MS / 100) {
			fprintf(stderr, "the peer never created %s\n", flag);
			goto out;
		}
		if (cm_next_event(ch, 100, &id, NULL) >= 0) {
			fprintf(stderr, "an event while %d were held\n", n);
			goto out;
		}
	}
	for (i = 0; i < n; i++)
		if (reject(held[i], HOARD_HELD))
			goto out;
	printf("%d held requests answered\n", n);
	fflush(stdout);
	/* the waiting ones come now: SYN retries may take a while */
	while (served < extra) {
		id = next_request(ch, 45000);
		if (!id || reject(id, HOARD_PDATA))
			goto out;
		rdma_destroy_id(id);
		served++;
	}
	rc = 0;
out:
	printf("served %d of %d after the held ones\n", served, extra);
	for (i = 0; i < n; i++)
		rdma_destroy_id(held[i]);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
	return rc;
}

static int read_rereg(struct rdma_addrinfo *res, const char *flag)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct { uint64_t buf; uint32_t rkey, size; } adv;
	struct ibv_mr *mr, *amr;
	struct rdma_cm_id *id;
	struct ibv_wc wc;
	uint8_t *buf;
	int i, n, ev, fd;

	buf = malloc(READ_SIZE);
	if (!ch || !buf || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, res->ai_dst_addr, 2000) ||
	    cm_next_event(ch, STEP_MS, NULL, NULL) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(id, 2000) ||
	    cm_next_event(ch, STEP_MS, NULL, NULL) != RDMA_CM_EVENT_ROUTE_RESOLVED ||
	    make_qp(id)) {
		perror("resolve/create qp");
		return 1;
	}
	memset(buf, 0xAA, READ_SIZE);
	mr = ibv_reg_mr(id->pd, buf, READ_SIZE, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	amr = ibv_reg_mr(id->pd, &adv, sizeof(adv), 0);
	if (!mr || !amr) {
		perror("ibv_reg_mr");
		return 1;
	}
	if (rdma_connect(id, &cp) ||
	    cm_next_event(ch, 30000, NULL, NULL) != RDMA_CM_EVENT_ESTABLISHED) {
		fprintf(stderr, "connect failed\n");
		return 1;
	}
	adv.buf = htobe64((uintptr_t)buf);
	adv.rkey = htobe32(mr->rkey);
	adv.size = htobe32(READ_SIZE);
	if (rdma_post_send(id, NULL, &adv, sizeof(adv), amr, IBV_SEND_SIGNALED)) {
		perror("post send");
		return 1;
	}
	/* the peer's READ arrives and stalls: it reads nothing for now */
	sleep(3);
	if (rereg_mr_access(mr, IBV_ACCESS_LOCAL_WRITE)) {
		perror("rereg (drop REMOTE_READ)");
		return 1;
	}
	/* no byte of this may reach the peer any more */
	memset(buf, 0xBB, READ_SIZE);
	fd = open(flag, O_CREAT | O_WRONLY, 0644);
	if (fd < 0) {
		perror(flag);
		return 1;
	}
	close(fd);
	printf("REMOTE_READ taken away, buffer rewritten\n");
	fflush(stdout);
	/* the reply fails: the QP errors, the connection closes */
	ev = cm_next_event(ch, 30000, NULL, NULL);
	printf("event after rereg: %s\n", ev < 0 ? "none" : rdma_event_str(ev));
	do {
		n = ibv_poll_cq(id->qp->send_cq, 1, &wc);
		for (i = 0; i < n; i++)
			printf("completion: %s\n", ibv_wc_status_str(wc.status));
	} while (n > 0);
	rdma_disconnect(id);
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(amr);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return ev == RDMA_CM_EVENT_DISCONNECTED ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	int server, rc;

	if (argc < 4 || (!strcmp(argv[1], "read-rereg") && argc < 5) ||
	    (!strcmp(argv[1], "hoard") && argc < 7) ||
	    (strcmp(argv[1], "unanswered") && strcmp(argv[1], "read-rereg") &&
	     strcmp(argv[1], "hoard"))) {
		fprintf(stderr,
			"usage: %s unanswered ADDR PORT | read-rereg ADDR PORT FLAG | hoard ADDR PORT BACKLOG EXTRA FLAG\n",
			argv[0]);
		return 2;
	}
	server = strcmp(argv[1], "read-rereg");
	if (server)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(argv[2], argv[3], &hints, &res)) {
		perror("rdma_getaddrinfo");
		return 1;
	}
	if (!strcmp(argv[1], "hoard"))
		rc = hoard(res, atoi(argv[4]), atoi(argv[5]), argv[6]);
	else
		rc = server ? unanswered(res) : read_rereg(res, argv[4]);
	rdma_freeaddrinfo(res);
	return rc;
}
