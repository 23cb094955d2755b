// SPDX-License-Identifier: GPL-2.0
/*
 * srdma module entry: the transports, the rdma_rxe guard, shared state.
 *
 * srdma registers its devices with driver_id RDMA_DRIVER_RXE so that the
 * stock librxe provider drives them. The distro's rdma_rxe casts every
 * device of that id to its own struct, so the two must never be loaded
 * together: we refuse to load beside it and veto its load beside us.
 */
#include <linux/module.h>
#include <linux/workqueue.h>
#include <rdma/rdma_netlink.h>

#include "srdma.h"
#include "transport.h"
#include "../selftest/selftest.h"

/*
 * srdma's deferred work runs on these two and nowhere else: any CPU
 * (unbound) or the CPU the work was queued on (cpu).
 */
struct workqueue_struct *srdma_unbound_wq;
struct workqueue_struct *srdma_cpu_wq;

/* The transports: set up in this order at load, ended in reverse. */
static const struct srdma_transport *const srdma_transports[] = {
	&srdma_roce_transport,
	&srdma_iwarp_transport,
};

static void srdma_transports_exit(unsigned int n)
{
	while (n--)
		if (srdma_transports[n]->exit)
			srdma_transports[n]->exit();
}

static int srdma_transports_init(void)
{
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(srdma_transports); i++) {
		if (!srdma_transports[i]->init)
			continue;
		err = srdma_transports[i]->init();
		if (err) {
			srdma_transports_exit(i);
			return err;
		}
	}
	return 0;
}

/* Each `rdma link add ... type NAME` entry the transports list, to @fn. */
static void srdma_link_types_each(void (*fn)(struct rdma_link_ops *ops))
{
	struct rdma_link_ops *const *ops;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(srdma_transports); i++)
		for (ops = srdma_transports[i]->link_ops; *ops; ops++)
			fn(*ops);
}

/*
 * Some kernels' rdma_rxe bind UDP 4791 only when a device is added, so
 * holding the port is not enough to keep it out: veto its load here.
 */
static int srdma_module_notify(struct notifier_block *nb, unsigned long action,
			       void *data)
{
	struct module *mod = data;

	if (action != MODULE_STATE_COMING || strcmp(mod->name, "rdma_rxe"))
		return NOTIFY_DONE;
	pr_err("refusing to load rdma_rxe while srdma is loaded: both drive RDMA_DRIVER_RXE devices; rmmod srdma first\n");
	return notifier_from_errno(-EBUSY);
}

static struct notifier_block srdma_module_nb = {
	.notifier_call = srdma_module_notify,
};

static int __init srdma_init(void)
{
	int err;

	/* selftest=1: the pure-logic tests, before anything is set up */
	err = srdma_selftest();
	if (err)
		return err;

	/*
	 * High priority: the data path runs here (iWARP transmit; RoCE
	 * sending once an ACK opens the window), and an application that
	 * busy-polls its CQ on the same CPU would otherwise take half of it.
	 * Measured: 64 KiB WRITE 18 -> 33 MB/s (siwarp), 19 -> 30 (sroce).
	 */
	srdma_unbound_wq = alloc_workqueue("srdma", WQ_UNBOUND | WQ_HIGHPRI |
					   WQ_MEM_RECLAIM, 0);
	if (!srdma_unbound_wq)
		return -ENOMEM;
	/*
	 * Work that must stay on the CPU it was queued on (RoCE READ
	 * replies: over loopback, packets sent from two CPUs can overtake
	 * each other). On srdma_unbound_wq the scheduler picks the CPU.
	 */
	srdma_cpu_wq = alloc_workqueue("srdma_cpu", WQ_HIGHPRI |
				       WQ_MEM_RECLAIM, 0);
	if (!srdma_cpu_wq) {
		err = -ENOMEM;
		goto err_wq;
	}

	err = srdma_counters_setup(srdma_transports,
				   ARRAY_SIZE(srdma_transports));
	if (err)
		goto err_cpu_wq;

	err = srdma_transports_init();
	if (err)
		goto err_counters;

	err = register_module_notifier(&srdma_module_nb);
	if (err)
		goto err_tp;

	err = srdma_netdev_notifier_register();
	if (err)
		goto err_mod;

	srdma_link_types_each(rdma_link_register);
	pr_info("loaded: link types sroce and rxe (RoCEv2), siwarp (iWARP)\n");
	return 0;

err_mod:
	unregister_module_notifier(&srdma_module_nb);
err_tp:
	srdma_transports_exit(ARRAY_SIZE(srdma_transports));
err_counters:
	srdma_counters_cleanup();
err_cpu_wq:
	destroy_workqueue(srdma_cpu_wq);
err_wq:
	destroy_workqueue(srdma_unbound_wq);
	return err;
}

static void __exit srdma_exit(void)
{
	srdma_link_types_each(rdma_link_unregister);
	/* Removes every srdma device; waits for their users to go. */
	ib_unregister_driver(RDMA_DRIVER_RXE);
	srdma_netdev_notifier_unregister();
	unregister_module_notifier(&srdma_module_nb);
	srdma_transports_exit(ARRAY_SIZE(srdma_transports));
	/* the hw stats names, which no registered device lists any more */
	srdma_counters_cleanup();
	/*
	 * Last, with every device gone: all of srdma's deferred work
	 * (iWARP set-up and close, transmit, READ replies) runs on these
	 * two and nowhere else, so draining them leaves nothing to run in
	 * the unloaded module.
	 */
	destroy_workqueue(srdma_cpu_wq);
	destroy_workqueue(srdma_unbound_wq);
	/* memory keys are freed from RCU callbacks in this module's text */
	rcu_barrier();
	pr_info("unloaded\n");
}

module_init(srdma_init);
module_exit(srdma_exit);

MODULE_DESCRIPTION("Software RDMA: RoCEv2 and iWARP over any Ethernet netdev");
MODULE_LICENSE("GPL");
