/* SPDX-License-Identifier: GPL-2.0 */
/* Small libibverbs helpers shared by the C selftests. */
#ifndef SRDMA_SELFTEST_VERBS_UTIL_H
#define SRDMA_SELFTEST_VERBS_UTIL_H

#include <string.h>
#include <infiniband/verbs.h>

/* Open the RDMA device called @name, or NULL. */
static inline struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

#endif
