// SPDX-License-Identifier: GPL-2.0
/*
 * Device counters (rdma statistic show, hw_counters in sysfs): per-CPU,
 * so that counting a packet costs one unshared add on the data path;
 * reading sums the CPUs. Meanings: Documentation/debugging.rst.
 *
 * A device counts the core's counters (enum srdma_counter) and its
 * transport's (@counter_names, @num_counters), in one per-CPU array.
 * Every device lists the same names: the core's, then each transport's
 * in the order main.c registers them; another transport's read 0. So a
 * script reads any counter of any srdma device.
 */
#include <linux/percpu.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "srdma.h"
#include "transport.h"

static const char *const srdma_core_counter_names[SRDMA_CNT_MAX] = {
	[SRDMA_CNT_RX_DROPPED] = "rx_dropped",
	[SRDMA_CNT_RX_BAD_CRC] = "rx_bad_crc",
	[SRDMA_CNT_CQ_OVERFLOW] = "cq_overflow",
	[SRDMA_CNT_LOCAL_KEY_ERR] = "local_key_err",
	[SRDMA_CNT_REMOTE_KEY_ERR] = "remote_key_err",
	[SRDMA_CNT_TX_PACKETS] = "tx_packets",
	[SRDMA_CNT_TX_BYTES] = "tx_bytes",
	[SRDMA_CNT_RX_PACKETS] = "rx_packets",
	[SRDMA_CNT_RX_BYTES] = "rx_bytes",
};

/*
 * The hw stats every device lists, set up at module load and freed at
 * unload once every device is gone (ib_core keeps a pointer to them).
 */
static struct rdma_stat_desc *srdma_stat_descs;
static unsigned int srdma_num_stats;
static const struct srdma_transport *const *srdma_stat_tps;
static unsigned int srdma_num_stat_tps;

void srdma_counters_cleanup(void)
{
	kfree(srdma_stat_descs);
	srdma_stat_descs = NULL;
}

int srdma_counters_setup(const struct srdma_transport *const *tps,
			 unsigned int num_tps)
{
	unsigned int i, j, n = SRDMA_CNT_MAX;

	for (i = 0; i < num_tps; i++)
		n += tps[i]->num_counters;
	srdma_stat_descs = kcalloc(n, sizeof(*srdma_stat_descs), GFP_KERNEL);
	if (!srdma_stat_descs)
		return -ENOMEM;
	for (n = 0; n < SRDMA_CNT_MAX; n++)
		srdma_stat_descs[n].name = srdma_core_counter_names[n];
	for (i = 0; i < num_tps; i++) {
		for (j = 0; j < tps[i]->num_counters; j++) {
			/* a hole in the transport's table */
			if (WARN_ON(!tps[i]->counter_names[j])) {
				srdma_counters_cleanup();
				return -EINVAL;
			}
			srdma_stat_descs[n++].name = tps[i]->counter_names[j];
		}
	}
	srdma_num_stats = n;
	srdma_stat_tps = tps;
	srdma_num_stat_tps = num_tps;
	return 0;
}

int srdma_counters_init(struct srdma_dev *dev)
{
	size_t n = SRDMA_CNT_MAX + dev->tp->num_counters;

	dev->counters = __alloc_percpu(n * sizeof(u64), __alignof__(u64));
	return dev->counters ? 0 : -ENOMEM;
}

void srdma_counters_fini(struct srdma_dev *dev)
{
	free_percpu(dev->counters);
	dev->counters = NULL;
}

static u64 srdma_counter_read(struct srdma_dev *dev, unsigned int c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*per_cpu_ptr(dev->counters + c, cpu));
	return sum;
}

struct rdma_hw_stats *srdma_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	return rdma_alloc_hw_stats_struct(srdma_stat_descs, srdma_num_stats,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int srdma_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct srdma_dev *dev = to_sdev(ibdev);
	const struct srdma_transport *tp;
	unsigned int i, j, n = 0;

	for (; n < SRDMA_CNT_MAX; n++)
		stats->value[n] = srdma_counter_read(dev, n);
	for (i = 0; i < srdma_num_stat_tps; i++) {
		tp = srdma_stat_tps[i];
		for (j = 0; j < tp->num_counters; j++, n++)
			stats->value[n] = tp == dev->tp ?
				srdma_counter_read(dev, SRDMA_CNT_MAX + j) : 0;
	}
	return n;
}
