// SPDX-License-Identifier: GPL-2.0
/* Protection domains: every key check compares the PD of key and QP. */
#include "srdma.h"

int srdma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibpd->device);

	if (atomic_inc_return(&dev->num_pd) > SRDMA_MAX_PD) {
		atomic_dec(&dev->num_pd);
		return -ENOMEM;
	}
	return 0;
}

int srdma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->num_pd);
	return 0;
}
