/* SPDX-License-Identifier: GPL-2.0 */
/* Small librdmacm helpers shared by the C selftests. */
#ifndef SRDMA_SELFTEST_CM_UTIL_H
#define SRDMA_SELFTEST_CM_UTIL_H

#include <poll.h>
#include <rdma/rdma_cma.h>

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

#endif
