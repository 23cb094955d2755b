// SPDX-License-Identifier: GPL-2.0
/*
 * sq_local_mix: local WQEs among SENDs in a full send queue (rdma_cm, RC).
 *
 * The kernel completes a local WQE (here: bind a type 2 memory window,
 * invalidate it) itself once the WQEs before it have completed, and the
 * slot goes back to the producer at once. The transport, walking the
 * queue, may not have stepped past that slot yet: if it then reads the
 * slot's kernel copy after the kernel refilled it from a newer post, it
 * sends the newer WQE early and again in its turn. A tiny send queue kept
 * full, each SEND between a bind and an invalidate, makes that as likely
 * as it can be. The server checks that every SEND arrives exactly once,
 * in order, with its bytes; the client that every SEND completes once, in
 * order, and no local WQE completes (they are unsignaled).
 *
 *   sq_local_mix -s ADDR [-p PORT] [-n MSGS]   server
 *   sq_local_mix -c ADDR [-p PORT] [-n MSGS]   client
 *
 * Flow control, because iWARP has no RNR: the server posts 2 * WINDOW
 * receives and answers every WINDOW messages once it has reposted their
 * receives; the client sends message k only once it holds the answers
 * that make room for it.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "cm_util.h"

#define WINDOW		16
#define SQ_WR		4	/* the smallest ring: always full */
#define WAIT_MS		20000
#define MSG_SLOTS	(2 * WINDOW)

struct msg {
	uint64_t seq;
	uint64_t check;		/* ~seq: a torn or stale copy shows */
};

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* One completion from @cq, busy-polled for at most WAIT_MS. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	long end = now_ms() + WAIT_MS;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0 && now_ms() < end)
		;
	if (n < 0) {
		fprintf(stderr, "%s: poll failed\n", what);
		return -1;
	}
	if (n == 0) {
		fprintf(stderr, "%s: no completion in %d ms\n", what, WAIT_MS);
		return -1;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "%s: status %s (%d), wr_id %llu\n", what,
			ibv_wc_status_str(wc->status), wc->status,
			(unsigned long long)wc->wr_id);
		return -1;
	}
	return 0;
}

/* Post receive @i, of the @len bytes at @buf, its index as its wr_id. */
static int post_recv(struct rdma_cm_id *id, int i, void *buf, size_t len,
		     struct ibv_mr *mr)
{
	if (rdma_post_recv(id, (void *)(uintptr_t)i, buf, len, mr)) {
		perror("post_recv");
		return -1;
	}
	return 0;
}

static struct rdma_cm_id *setup(const char *addr, const char *port, int server)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = server ? 1 : SQ_WR,
			 .max_recv_wr = server ? MSG_SLOTS : 2,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = sizeof(struct msg) },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};

	return cm_sync_endpoint(addr, port, server, &attr);
}

static int run_server(struct rdma_cm_id *id, uint64_t msgs)
{
	static struct msg slot[MSG_SLOTS];
	struct rdma_conn_param cp = { .rnr_retry_count = 7 };
	uint64_t seq, answer = 0;
	struct ibv_mr *mr, *amr;
	struct ibv_wc wc;
	long end;
	int i;

	mr = rdma_reg_msgs(id, slot, sizeof(slot));
	amr = rdma_reg_msgs(id, &answer, sizeof(answer));
	if (!mr || !amr) {
		perror("register");
		return 1;
	}
	for (i = 0; i < MSG_SLOTS; i++)
		if (post_recv(id, i, &slot[i], sizeof(slot[i]), mr))
			return 1;
	if (rdma_accept(id, &cp)) {
		perror("rdma_accept");
		return 1;
	}
	for (seq = 0; seq < msgs; seq++) {
		struct msg m;

		if (poll_one(id->recv_cq, &wc, "server recv")) {
			fprintf(stderr, "server: waiting for message %llu\n",
				(unsigned long long)seq);
			return 1;
		}
		i = (int)wc.wr_id;
		if (i < 0 || i >= MSG_SLOTS || wc.byte_len != sizeof(m)) {
			fprintf(stderr, "message %llu: wr_id %llu, %u bytes\n",
				(unsigned long long)seq,
				(unsigned long long)wc.wr_id, wc.byte_len);
			return 1;
		}
		memcpy(&m, &slot[i], sizeof(m));
		if (m.seq != seq || m.check != ~seq) {
			fprintf(stderr, "message %llu arrived as %llu (check %#llx): %s\n",
				(unsigned long long)seq,
				(unsigned long long)m.seq,
				(unsigned long long)m.check,
				m.seq < seq ? "sent twice" : "out of order or lost");
			return 1;
		}
		if (post_recv(id, i, &slot[i], sizeof(slot[i]), mr))
			return 1;
		if ((seq + 1) % WINDOW)
			continue;
		answer = seq + 1;
		if (rdma_post_send(id, NULL, &answer, sizeof(answer), amr,
				   IBV_SEND_SIGNALED) ||
		    poll_one(id->send_cq, &wc, "server answer"))
			return 1;
	}
	/* a SEND sent twice late would arrive after the last one */
	end = now_ms() + 500;
	while (now_ms() < end) {
		int n = ibv_poll_cq(id->recv_cq, 1, &wc);

		if (n) {
			fprintf(stderr, "a message after the last one (status %d, %u bytes)\n",
				wc.status, wc.byte_len);
			return 1;
		}
	}
	printf("server: %llu messages, each once and in order\n",
	       (unsigned long long)msgs);
	rdma_disconnect(id);
	return 0;
}

/* After a failure: what the send queue completed, errors included. */
static void dump_sends(struct rdma_cm_id *id)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 4096 && ibv_poll_cq(id->send_cq, 1, &wc) == 1; i++)
		if (wc.status != IBV_WC_SUCCESS)
			fprintf(stderr, "send queue: completion %d: wr_id %llu opcode %d status %s\n",
				i, (unsigned long long)wc.wr_id, wc.opcode,
				ibv_wc_status_str(wc.status));
}

/* @wc is the completion of the oldest SEND not yet completed: count it. */
static int take_send(const struct ibv_wc *wc, uint64_t *completed)
{
	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_SEND ||
	    wc->wr_id != *completed) {
		fprintf(stderr, "completion %llu: opcode %d, wr_id %llu, status %s\n",
			(unsigned long long)*completed, wc->opcode,
			(unsigned long long)wc->wr_id,
			ibv_wc_status_str(wc->status));
		return -1;
	}
	(*completed)++;
	return 0;
}

/* Reap one signaled completion, waiting for it. */
static int reap_send(struct rdma_cm_id *id, uint64_t *completed)
{
	struct ibv_wc wc;

	if (poll_one(id->send_cq, &wc, "client send"))
		return -1;
	return take_send(&wc, completed);
}

/*
 * Reap what completed already. The send CQ is as small as the send queue
 * (rdma_create_ep sizes it so): a SEND completes whether we look or not,
 * and completions left unreaped would overflow it.
 */
static int reap_ready(struct rdma_cm_id *id, uint64_t *completed,
		      uint64_t posted)
{
	struct ibv_wc wc;
	int n;

	while (*completed < posted) {
		n = ibv_poll_cq(id->send_cq, 1, &wc);
		if (n <= 0)
			return n;
		if (take_send(&wc, completed))
			return -1;
	}
	return 0;
}

/* Post @wr; while the ring is full, make room by reaping a SEND. */
static int post(struct rdma_cm_id *id, struct ibv_send_wr *wr,
		uint64_t *completed, uint64_t posted)
{
	struct ibv_send_wr *bad;
	int err;

	if (reap_ready(id, completed, posted))
		return -1;
	/* a full ring: librxe 44 says -ENOMEM, others ENOMEM */
	while ((err = abs(ibv_post_send(id->qp, wr, &bad))) == ENOMEM) {
		if (*completed == posted) {
			fprintf(stderr, "ring full with no SEND in it\n");
			return -1;
		}
		if (reap_send(id, completed))
			return -1;
	}
	if (err) {
		fprintf(stderr, "post_send opcode %d: %s\n", wr->opcode,
			strerror(err));
		return -1;
	}
	return 0;
}

static int run_client(struct rdma_cm_id *id, uint64_t msgs)
{
	static struct msg slot[MSG_SLOTS];
	static uint8_t window_buf[4096];
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	uint64_t seq, answered = 0, completed = 0;
	struct ibv_mr *mr, *amr, *wmr;
	/* two: the server may answer twice before we look */
	static uint64_t answer[2];
	struct ibv_mw *mw;
	int i;
	uint32_t rkey;
	struct ibv_wc wc;

	mr = rdma_reg_msgs(id, slot, sizeof(slot));
	amr = rdma_reg_msgs(id, answer, sizeof(answer));
	wmr = ibv_reg_mr(id->pd, window_buf, sizeof(window_buf),
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(id->pd, IBV_MW_TYPE_2);
	if (!mr || !amr || !wmr || !mw) {
		perror("register/alloc_mw");
		return 1;
	}
	rkey = mw->rkey;
	for (i = 0; i < 2; i++)
		if (post_recv(id, i, &answer[i], sizeof(answer[i]), amr))
			return 1;
	if (rdma_connect(id, &cp)) {
		perror("rdma_connect");
		return 1;
	}
	for (seq = 0; seq < msgs; seq++) {
		struct msg *m = &slot[seq % MSG_SLOTS];
		struct ibv_sge sge = {
			.addr = (uintptr_t)m, .length = sizeof(*m),
			.lkey = mr->lkey,
		};
		struct ibv_send_wr bind = {
			.opcode = IBV_WR_BIND_MW,
			.bind_mw = {
				.mw = mw,
				.rkey = ibv_inc_rkey(rkey),
				.bind_info = {
					.mr = wmr,
					.addr = (uintptr_t)window_buf,
					.length = sizeof(window_buf),
					.mw_access_flags = IBV_ACCESS_REMOTE_READ,
				},
			},
		};
		struct ibv_send_wr send = {
			.wr_id = seq, .opcode = IBV_WR_SEND,
			.sg_list = &sge, .num_sge = 1,
			/* inline and gathered both: either copy may be stale */
			.send_flags = IBV_SEND_SIGNALED |
				      (seq & 1 ? IBV_SEND_INLINE : 0),
		};
		struct ibv_send_wr inv = {
			.opcode = IBV_WR_LOCAL_INV,
		};

		/* room at the server for this one: see the header */
		while (seq >= answered + MSG_SLOTS) {
			if (poll_one(id->recv_cq, &wc, "client answer")) {
				fprintf(stderr, "client: %llu sent, %llu completed, %llu answered\n",
					(unsigned long long)seq,
					(unsigned long long)completed,
					(unsigned long long)answered);
				dump_sends(id);
				return 1;
			}
			i = wc.wr_id & 1;
			if (answer[i] != answered + WINDOW) {
				fprintf(stderr, "answer %llu after %llu\n",
					(unsigned long long)answer[i],
					(unsigned long long)answered);
				return 1;
			}
			answered = answer[i];
			if (post_recv(id, i, &answer[i], sizeof(answer[i]),
				      amr))
				return 1;
		}
		/* the last SEND's slot may be reused once it completed */
		while (completed + MSG_SLOTS <= seq)
			if (reap_send(id, &completed))
				return 1;
		m->seq = seq;
		m->check = ~seq;
		rkey = bind.bind_mw.rkey;
		inv.invalidate_rkey = rkey;
		if (post(id, &bind, &completed, seq))
			return 1;
		/* the key a type 2 bind names is the window's current one */
		mw->rkey = rkey;
		if (post(id, &send, &completed, seq) ||
		    post(id, &inv, &completed, seq + 1))
			return 1;
	}
	while (completed < msgs)
		if (reap_send(id, &completed))
			return 1;
	printf("client: %llu SENDs, each between a bind and an invalidate, completed once and in order\n",
	       (unsigned long long)msgs);
	if (!cm_await_disconnect(id, WAIT_MS))
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = "7473";
	uint64_t msgs = 20000;
	struct rdma_cm_id *id;
	int server = -1, c;

	while ((c = getopt(argc, argv, "s:c:p:n:")) != -1) {
		switch (c) {
		case 's':
		case 'c':
			server = c == 's';
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'n':
			msgs = strtoull(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (server < 0 || !msgs || msgs % WINDOW) {
		fprintf(stderr, "usage: %s -s|-c ADDR [-p PORT] [-n MSGS, a multiple of %d]\n",
			argv[0], WINDOW);
		return 2;
	}
	id = setup(addr, port, server);
	if (!id)
		return 1;
	return server ? run_server(id, msgs) : run_client(id, msgs);
}
