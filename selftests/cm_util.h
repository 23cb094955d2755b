/* SPDX-License-Identifier: GPL-2.0 */
/* Small librdmacm helpers shared by the C selftests. */
#ifndef SRDMA_SELFTEST_CM_UTIL_H
#define SRDMA_SELFTEST_CM_UTIL_H

#include <poll.h>
#include <stdio.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

/*
 * The next event on @ch within @ms, acknowledged: its type, or -1 if none
 * came. @id and @status, where not NULL, get the event's id and status.
 */
static inline int cm_next_event(struct rdma_event_channel *ch, int ms,
				struct rdma_cm_id **id, int *status)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&p, 1, ms) != 1 || rdma_get_cm_event(ch, &ev))
		return -1;
	type = ev->event;
	if (id)
		*id = ev->id;
	if (status)
		*status = ev->status;
	rdma_ack_cm_event(ev);
	return type;
}

/*
 * A synchronous RC endpoint (rdma_create_ep) on @addr:@port with a QP
 * made from @attr: a client's id, not yet connected, or a server's first
 * connection request, not yet accepted. NULL, said on stderr, on failure.
 */
static inline struct rdma_cm_id *cm_sync_endpoint(const char *addr,
						  const char *port, int server,
						  struct ibv_qp_init_attr *attr)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_cm_id *id, *listen_id;

	if (server)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(addr, port, &hints, &res)) {
		perror("rdma_getaddrinfo");
		return NULL;
	}
	if (rdma_create_ep(server ? &listen_id : &id, res, NULL,
			   server ? NULL : attr)) {
		perror("rdma_create_ep");
		rdma_freeaddrinfo(res);
		return NULL;
	}
	rdma_freeaddrinfo(res);
	if (!server)
		return id;
	if (rdma_listen(listen_id, 1) || rdma_get_request(listen_id, &id)) {
		perror("rdma_listen/get_request");
		return NULL;
	}
	if (rdma_create_qp(id, NULL, attr)) {
		perror("rdma_create_qp");
		return NULL;
	}
	return id;
}

/*
 * The last message's receiver must keep its QP until the sender has seen
 * the ACK: that ACK may be lost and the SEND retried. So a server
 * disconnects once its final SEND completed, and its client waits for
 * that (a synchronous rdma_cm id still has its own event channel). True
 * if the disconnect arrived, with no more than @ms between events.
 */
static inline int cm_await_disconnect(struct rdma_cm_id *id, int ms)
{
	int type;

	do {
		type = cm_next_event(id->channel, ms, NULL, NULL);
	} while (type >= 0 && type != RDMA_CM_EVENT_DISCONNECTED);
	if (type < 0)
		fprintf(stderr, "client: no disconnect from the server\n");
	return type >= 0;
}

#endif
