// SPDX-License-Identifier: GPL-2.0
/*
 * rc_xfer: a verified bulk transfer over one RC connection (rdma_cm).
 * Each round the client RDMA WRITEs a buffer of pseudo-random bytes into
 * the server's memory and then SENDs a message of the same size carrying
 * the round number; the server checks every byte of both, that rounds
 * arrive exactly once and in order, and answers so the next round may
 * overwrite the buffer. Exit status 0 only if every byte was right.
 * With -r the client also READs the written buffer back, posting WRITE,
 * READ and SEND at once, and checks what it read: a READ with a request
 * queued behind it, whose loss or NAK must not skip the READ (all rounds
 * but the last, which the server's disconnect follows).
 * With -e MS the client instead posts one WRITE and moves its QP to the
 * error state at once: the WRITE's flush completion must take at least MS
 * milliseconds, the time its packets are held in a queue (the test delays
 * them): a completion gives the consumer its buffer back, and a packet
 * sent from the buffer's pages still reads them (sroce's zero-copy
 * transmit). A server given -e (MS unused) only accepts and waits for
 * the disconnect.
 *
 *   rc_xfer -s ADDR [-p PORT] [-n ROUNDS] [-z BYTES] [-e MS]     server
 *   rc_xfer -c ADDR [-p PORT] [-n ROUNDS] [-z BYTES] [-r|-e MS]  client
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
#include "fill_pattern.h"

struct peer_info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

/* The bytes of round @round: xorshift64, never all zero. */
static void pattern(uint8_t *buf, size_t len, uint32_t round, uint32_t salt)
{
	fill_pattern(buf, len, 0x9e3779b97f4a7c15ULL * (round + 1) ^ salt);
}

static size_t first_bad(const uint8_t *got, uint8_t *want, size_t len,
			uint32_t round, uint32_t salt)
{
	size_t i;

	pattern(want, len, round, salt);
	for (i = 0; i < len; i++)
		if (got[i] != want[i])
			return i;
	return len;
}

static int wait_comp(struct rdma_cm_id *id, int recv, const char *what)
{
	struct ibv_wc wc;
	int n = recv ? rdma_get_recv_comp(id, &wc) : rdma_get_send_comp(id, &wc);

	if (n <= 0) {
		fprintf(stderr, "%s: no completion (%s)\n", what, strerror(errno));
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "%s: completion status %s (%d)\n", what,
			ibv_wc_status_str(wc.status), wc.status);
		return -1;
	}
	return 0;
}

static struct rdma_cm_id *setup(const char *addr, const char *port, int server)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};

	return cm_sync_endpoint(addr, port, server, &attr);
}

/* Register @data for the peer's WRITEs and READs, offered through @cp. */
static struct ibv_mr *offer_buffer(struct rdma_cm_id *id, void *data,
				   size_t size, struct peer_info *info,
				   struct rdma_conn_param *cp)
{
	struct ibv_mr *mr = ibv_reg_mr(id->pd, data, size,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ);

	if (!mr)
		return NULL;
	info->addr = (uintptr_t)data;
	info->rkey = mr->rkey;
	info->len = size;
	cp->private_data = info;
	cp->private_data_len = sizeof(*info);
	return mr;
}

/* The buffer the server offered, if it holds @size bytes. */
static const struct peer_info *offered_buffer(struct rdma_cm_id *id,
					      size_t size)
{
	const struct peer_info *info =
		id->event ? id->event->param.conn.private_data : NULL;

	if (!info || info->len < size) {
		fprintf(stderr, "no usable buffer from the server\n");
		return NULL;
	}
	return info;
}

static int run_server(struct rdma_cm_id *id, uint32_t rounds, size_t size)
{
	uint8_t *data = malloc(size), *msg = malloc(size), *want = malloc(size);
	struct rdma_conn_param cp = { .responder_resources = 1 };
	struct ibv_mr *dmr, *mmr, *amr;
	struct peer_info info;
	uint32_t round, ack = 0;
	size_t bad;

	if (!data || !msg || !want)
		return 1;
	memset(data, 0, size);
	dmr = offer_buffer(id, data, size, &info, &cp);
	mmr = rdma_reg_msgs(id, msg, size);
	amr = rdma_reg_msgs(id, &ack, sizeof(ack));
	if (!dmr || !mmr || !amr) {
		perror("register");
		return 1;
	}
	if (rdma_post_recv(id, NULL, msg, size, mmr) || rdma_accept(id, &cp)) {
		perror("recv/accept");
		return 1;
	}
	for (round = 0; round < rounds; round++) {
		if (wait_comp(id, 1, "server recv"))
			return 1;
		bad = first_bad(msg, want, size, round, 0x5e4d);
		if (bad != size) {
			fprintf(stderr, "round %u: SEND byte %zu wrong\n", round, bad);
			return 1;
		}
		bad = first_bad(data, want, size, round, 0x3a17);
		if (bad != size) {
			fprintf(stderr, "round %u: WRITE byte %zu wrong\n", round, bad);
			return 1;
		}
		ack = round;
		if (rdma_post_recv(id, NULL, msg, size, mmr) ||
		    rdma_post_send(id, NULL, &ack, sizeof(ack), amr, 0) ||
		    wait_comp(id, 0, "server ack"))
			return 1;
	}
	printf("server: %u rounds, %zu bytes written and %zu sent, all verified\n",
	       rounds, (size_t)rounds * size, (size_t)rounds * size);
	rdma_disconnect(id);
	return 0;
}

/* WRITE, READ it back and SEND, posted at once; then their completions. */
static int write_read_send(struct rdma_cm_id *id, const struct peer_info *info,
			   void *wbuf, struct ibv_mr *wmr, void *rbuf,
			   struct ibv_mr *rmr, void *msg, struct ibv_mr *mmr,
			   size_t size)
{
	if (rdma_post_write(id, NULL, wbuf, size, wmr, 0, info->addr,
			    info->rkey) ||
	    rdma_post_read(id, NULL, rbuf, size, rmr, 0, info->addr,
			   info->rkey) ||
	    rdma_post_send(id, NULL, msg, size, mmr, 0)) {
		perror("post");
		return -1;
	}
	return wait_comp(id, 0, "client write") ||
	       wait_comp(id, 0, "client read") ||
	       wait_comp(id, 0, "client send") ? -1 : 0;
}

static int run_client(struct rdma_cm_id *id, uint32_t rounds, size_t size,
		      int read_back)
{
	uint8_t *wbuf = malloc(size), *msg = malloc(size);
	uint8_t *rbuf = malloc(size), *want = malloc(size);
	struct rdma_conn_param cp = { .initiator_depth = 1, .retry_count = 7 };
	struct ibv_mr *wmr, *mmr, *amr, *rmr;
	const struct peer_info *info;
	uint32_t round, ack;
	size_t bad;

	if (!wbuf || !msg || !rbuf || !want)
		return 1;
	wmr = rdma_reg_write(id, wbuf, size);
	mmr = rdma_reg_msgs(id, msg, size);
	amr = rdma_reg_msgs(id, &ack, sizeof(ack));
	rmr = rdma_reg_msgs(id, rbuf, size);
	if (!wmr || !mmr || !amr || !rmr) {
		perror("register");
		return 1;
	}
	if (rdma_post_recv(id, NULL, &ack, sizeof(ack), amr) ||
	    rdma_connect(id, &cp)) {
		perror("recv/connect");
		return 1;
	}
	info = offered_buffer(id, size);
	if (!info)
		return 1;
	for (round = 0; round < rounds; round++) {
		pattern(wbuf, size, round, 0x3a17);
		pattern(msg, size, round, 0x5e4d);
		/*
		 * Not the last round: the server disconnects once it has
		 * answered the last SEND, and a READ ahead of that SEND may
		 * still be waiting for responses lost on the way.
		 */
		if (read_back && round + 1 < rounds) {
			memset(rbuf, 0, size);
			if (write_read_send(id, info, wbuf, wmr, rbuf, rmr,
					    msg, mmr, size))
				return 1;
		} else if (rdma_post_write(id, NULL, wbuf, size, wmr, 0,
					   info->addr, info->rkey) ||
			   wait_comp(id, 0, "client write") ||
			   rdma_post_send(id, NULL, msg, size, mmr, 0) ||
			   wait_comp(id, 0, "client send")) {
			return 1;
		}
		if (wait_comp(id, 1, "client ack"))
			return 1;
		bad = read_back && round + 1 < rounds ?
		      first_bad(rbuf, want, size, round, 0x3a17) : size;
		if (bad != size) {
			fprintf(stderr, "round %u: READ byte %zu wrong\n", round,
				bad);
			return 1;
		}
		if (ack != round) {
			fprintf(stderr, "round %u acknowledged as %u\n", round, ack);
			return 1;
		}
		if (rdma_post_recv(id, NULL, &ack, sizeof(ack), amr))
			return 1;
	}
	printf("client: %u rounds of %zu bytes written%s and sent\n", rounds,
	       size, read_back ? ", read back" : "");
	/*
	 * No rdma_disconnect once disconnected: on a synchronous id it waits
	 * for one more event, and iWARP has none after DISCONNECTED (IB has
	 * TIMEWAIT_EXIT). Destroying the id ends our side.
	 */
	if (!cm_await_disconnect(id, 60000))
		return 1;
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* -e: accept, and wait for the client to go. */
static int flush_server(struct rdma_cm_id *id, size_t size)
{
	uint8_t *data = calloc(1, size);
	struct rdma_conn_param cp = { .responder_resources = 1 };
	struct peer_info info;

	if (!data)
		return 1;
	if (!offer_buffer(id, data, size, &info, &cp)) {
		perror("register");
		return 1;
	}
	if (rdma_accept(id, &cp)) {
		perror("accept");
		return 1;
	}
	return cm_await_disconnect(id, 60000) ? 0 : 1;
}

/* -e MS: one WRITE, the QP to ERR, its flush completion no sooner than MS. */
static int flush_client(struct rdma_cm_id *id, size_t size, long min_ms)
{
	struct rdma_conn_param cp = { .initiator_depth = 1, .retry_count = 7 };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	uint8_t *wbuf = malloc(size);
	const struct peer_info *info;
	struct ibv_mr *wmr;
	struct ibv_wc wc;
	long t0, ms;

	if (!wbuf)
		return 1;
	pattern(wbuf, size, 0, 0x3a17);
	wmr = rdma_reg_write(id, wbuf, size);
	if (!wmr || rdma_connect(id, &cp)) {
		perror("register/connect");
		return 1;
	}
	info = offered_buffer(id, size);
	if (!info)
		return 1;
	if (rdma_post_write(id, NULL, wbuf, size, wmr, 0, info->addr,
			    info->rkey)) {
		perror("post");
		return 1;
	}
	t0 = now_ms();
	if (ibv_modify_qp(id->qp, &attr, IBV_QP_STATE)) {
		perror("modify to ERR");
		return 1;
	}
	if (rdma_get_send_comp(id, &wc) <= 0) {
		perror("no completion");
		return 1;
	}
	ms = now_ms() - t0;
	printf("client: WRITE of %zu bytes completed %s after %ld ms in ERR\n",
	       size, ibv_wc_status_str(wc.status), ms);
	/* the buffer is ours again: what a packet still read would change */
	memset(wbuf, 0, size);
	rdma_disconnect(id);
	if (wc.status != IBV_WC_WR_FLUSH_ERR) {
		fprintf(stderr, "expected a flush error\n");
		return 1;
	}
	if (ms < min_ms) {
		fprintf(stderr, "completed before its packets left (%ld < %ld ms)\n",
			ms, min_ms);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = "7471";
	uint32_t rounds = 16;
	size_t size = 1 << 20;
	struct rdma_cm_id *id;
	int server = -1, read_back = 0, flush = 0, c;
	long min_ms = 0;

	while ((c = getopt(argc, argv, "s:c:p:n:z:re:")) != -1) {
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
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 'z':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			read_back = 1;
			break;
		case 'e':
			flush = 1;
			min_ms = strtol(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (server < 0 || !size) {
		fprintf(stderr, "usage: %s -s|-c ADDR [-p PORT] [-n ROUNDS] [-z BYTES] [-r|-e MS]\n",
			argv[0]);
		return 2;
	}
	id = setup(addr, port, server);
	if (!id)
		return 1;
	if (flush)
		return server ? flush_server(id, size) :
				flush_client(id, size, min_ms);
	return server ? run_server(id, rounds, size) :
			run_client(id, rounds, size, read_back);
}
