// SPDX-License-Identifier: GPL-2.0
/*
 * Device counters (rdma statistic show, hw_counters in sysfs): per-CPU,
 * so that counting a packet costs one unshared add on the data path;
 * reading sums the CPUs. Names and meanings: query.c's table and
 * Documentation/debugging.rst.
 */
#include <linux/percpu.h>

#include "srdma.h"

int srdma_counters_init(struct srdma_dev *dev)
{
	dev->counters = alloc_percpu(struct srdma_counters);
	return dev->counters ? 0 : -ENOMEM;
}

void srdma_counters_fini(struct srdma_dev *dev)
{
	free_percpu(dev->counters);
	dev->counters = NULL;
}

u64 srdma_counter_read(struct srdma_dev *dev, enum srdma_counter c)
{
	u64 sum = 0;
	int cpu;

	if (!dev->counters)
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(dev->counters, cpu)->c[c]);
	return sum;
}
