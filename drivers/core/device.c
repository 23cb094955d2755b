// SPDX-License-Identifier: GPL-2.0
/*
 * Device life cycle: `rdma link add` creates an srdma device on a netdev,
 * netdev events keep its port in step, and `rdma link del`, netdev
 * unregister or module unload remove it.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <net/addrconf.h>
#include <rdma/ib_verbs.h>

#include "srdma.h"
#include "transport.h"

static struct lock_class_key srdma_qps_lock_key;
static struct lock_class_key srdma_keys_lock_key;
static struct lock_class_key srdma_ahs_lock_key;

/* All srdma devices; the netdev notifier walks it under rtnl. */
static LIST_HEAD(srdma_devices);
static DEFINE_MUTEX(srdma_devices_lock);

enum ib_port_state srdma_port_state(struct srdma_dev *dev)
{
	if (netif_running(dev->ndev) && netif_carrier_ok(dev->ndev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

static int srdma_enable_driver(struct ib_device *ibdev)
{
	struct srdma_dev *dev = to_sdev(ibdev);

	mutex_lock(&srdma_devices_lock);
	list_add_tail(&dev->list, &srdma_devices);
	mutex_unlock(&srdma_devices_lock);
	return 0;
}

/* The last reference to the device is gone: free what the device owns. */
static void srdma_dealloc_driver(struct ib_device *ibdev)
{
	struct srdma_dev *dev = to_sdev(ibdev);

	mutex_lock(&srdma_devices_lock);
	if (!list_empty(&dev->list))
		list_del_init(&dev->list);
	mutex_unlock(&srdma_devices_lock);

	if (dev->tp_ready && dev->tp->dev_fini)
		dev->tp->dev_fini(dev);
	WARN_ON(!xa_empty(&dev->qps));
	WARN_ON(!xa_empty(&dev->keys));
	WARN_ON(!xa_empty(&dev->ahs));
	xa_destroy(&dev->qps);
	xa_destroy(&dev->keys);
	xa_destroy(&dev->ahs);
	netdev_put(dev->ndev, &dev->ndev_tracker);
	srdma_counters_fini(dev);
}

static int srdma_get_port_immutable(struct ib_device *ibdev, u32 port,
				    struct ib_port_immutable *imm)
{
	struct srdma_dev *dev = to_sdev(ibdev);
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	imm->pkey_tbl_len = attr.pkey_tbl_len;
	imm->gid_tbl_len = attr.gid_tbl_len;
	imm->core_cap_flags = dev->tp->core_cap_flags;
	imm->max_mad_size = dev->tp->max_mad_size;
	return 0;
}

static enum rdma_link_layer srdma_get_link_layer(struct ib_device *ibdev,
						 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static const struct ib_device_ops srdma_core_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = SRDMA_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = srdma_alloc_hw_port_stats,
	.alloc_mr = srdma_alloc_mr,
	.alloc_mw = srdma_alloc_mw,
	.alloc_pd = srdma_alloc_pd,
	.alloc_ucontext = srdma_alloc_ucontext,
	.create_ah = srdma_create_ah,
	.create_cq = SRDMA_CREATE_CQ_OP,
	.create_qp = srdma_create_qp,
	.create_srq = srdma_create_srq,
	.create_user_ah = srdma_create_ah,
	.dealloc_driver = srdma_dealloc_driver,
	.dealloc_mw = srdma_dealloc_mw,
	.dealloc_pd = srdma_dealloc_pd,
	.dealloc_ucontext = srdma_dealloc_ucontext,
	.dereg_mr = srdma_dereg_mr,
	.destroy_ah = srdma_destroy_ah,
	.destroy_cq = srdma_destroy_cq,
	.destroy_qp = srdma_destroy_qp,
	.destroy_srq = srdma_destroy_srq,
	.enable_driver = srdma_enable_driver,
	.fill_res_mr_entry = srdma_fill_res_mr_entry,
	.fill_res_qp_entry = srdma_fill_res_qp_entry,
	.get_dev_fw_str = srdma_get_dev_fw_str,
	.get_dma_mr = srdma_get_dma_mr,
	.get_hw_stats = srdma_get_hw_stats,
	.get_link_layer = srdma_get_link_layer,
	.get_port_immutable = srdma_get_port_immutable,
	.map_mr_sg = srdma_map_mr_sg,
	.mmap = srdma_mmap,
	.mmap_free = srdma_mmap_free,
	.modify_device = srdma_modify_device,
	.modify_port = srdma_modify_port,
	.modify_qp = srdma_modify_qp,
	.modify_srq = srdma_modify_srq,
	.poll_cq = srdma_poll_cq,
	.post_recv = srdma_post_recv,
	.post_send = srdma_post_send,
	.post_srq_recv = srdma_post_srq_recv,
	.pre_destroy_cq = srdma_pre_destroy_cq,
	.query_ah = srdma_query_ah,
	.query_device = srdma_query_device,
	.query_pkey = srdma_query_pkey,
	.query_port = srdma_query_port,
	.query_qp = srdma_query_qp,
	.query_srq = srdma_query_srq,
	.reg_user_mr = srdma_reg_user_mr,
	.req_notify_cq = srdma_req_notify_cq,
	.rereg_user_mr = srdma_rereg_user_mr,
	.resize_cq = srdma_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, srdma_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, srdma_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, srdma_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, srdma_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, srdma_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, srdma_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, srdma_ucontext, ibuc),
};

/* One device of each kind per netdev, as with rdma_rxe and siw. */
static bool srdma_kind_on_netdev(const struct srdma_transport *tp,
				 struct net_device *ndev)
{
	struct srdma_dev *dev;
	bool found = false;

	mutex_lock(&srdma_devices_lock);
	list_for_each_entry(dev, &srdma_devices, list)
		if (dev->ndev == ndev && dev->tp == tp)
			found = true;
	mutex_unlock(&srdma_devices_lock);
	return found;
}

int srdma_newlink(const struct srdma_transport *tp, const char *name,
		  struct net_device *ndev)
{
	struct srdma_dev *dev;
	struct ib_device *ibdev;
	int err;

	if (ndev->type != ARPHRD_ETHER) {
		netdev_err(ndev, "srdma: %s: not an Ethernet device\n", name);
		return -EINVAL;
	}
	if (srdma_kind_on_netdev(tp, ndev)) {
		netdev_err(ndev, "srdma: %s: already has an %s device\n", name,
			   tp->link_type);
		return -EEXIST;
	}

	/* the transport's device struct, if any, embeds ours at its start */
	ibdev = _ib_alloc_device(max(sizeof(*dev), tp->dev_size));
	if (!ibdev)
		return -ENOMEM;
	dev = to_sdev(ibdev);
	dev->tp = tp;
	dev->ndev = ndev;
	netdev_hold(ndev, &dev->ndev_tracker, GFP_KERNEL);
	INIT_LIST_HEAD(&dev->list);
	xa_init_flags(&dev->qps, XA_FLAGS_ALLOC);
	xa_init_flags(&dev->keys, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	/*
	 * xa_init_flags() gives every xarray initialised in one file the
	 * same lockdep class, so the QP table's process-context lock would
	 * look like the key and AH tables' irq-safe one: lockdep reported
	 * an irq-safe -> irq-unsafe order that cannot deadlock. One class
	 * each.
	 */
	lockdep_set_class(&dev->qps.xa_lock, &srdma_qps_lock_key);
	lockdep_set_class(&dev->keys.xa_lock, &srdma_keys_lock_key);
	lockdep_set_class(&dev->ahs.xa_lock, &srdma_ahs_lock_key);
	dev->next_qpn = SRDMA_FIRST_QPN;
	dev->last_state = srdma_port_state(dev);
	err = srdma_counters_init(dev);
	if (err)
		goto err_dealloc;

	ibdev->node_type = tp->node_type;
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    ndev->dev_addr);
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	/* librxe rings the send doorbell and arms CQs through these. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	strscpy(ibdev->node_desc, "srdma", sizeof(ibdev->node_desc));

	ib_set_device_ops(ibdev, tp->ops);
	ib_set_device_ops(ibdev, &srdma_core_ops);

	if (tp->dev_init) {
		err = tp->dev_init(dev);
		if (err)
			goto err_dealloc;
	}
	dev->tp_ready = true;

	err = ib_device_set_netdev(ibdev, ndev, 1);
	if (err)
		goto err_dealloc;

	err = ib_register_device(ibdev, name, NULL);
	if (err) {
		netdev_err(ndev, "srdma: %s: ib_register_device failed: %d\n",
			   name, err);
		goto err_dealloc;
	}
	ibdev_info(ibdev, "srdma %s device on %s\n", tp->link_type,
		   ndev->name);
	return 0;

err_dealloc:
	/* runs srdma_dealloc_driver, which undoes dev_init */
	ib_dealloc_device(ibdev);
	return err;
}

static void srdma_port_event(struct srdma_dev *dev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

static void srdma_netdev_changed(struct srdma_dev *dev, unsigned long event)
{
	enum ib_port_state state;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* The netdev is going: so is the device (asynchronously). */
		ib_unregister_device_queued(&dev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		state = srdma_port_state(dev);
		if (state == dev->last_state)
			break;
		dev->last_state = state;
		srdma_port_event(dev, state == IB_PORT_ACTIVE ?
				 IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
		break;
	case NETDEV_CHANGEMTU:
		/* query_port derives the MTU from the netdev each time */
		srdma_port_event(dev, IB_EVENT_PORT_ACTIVE);
		break;
	case NETDEV_CHANGEADDR:
		srdma_port_event(dev, IB_EVENT_GID_CHANGE);
		break;
	default:
		break;
	}
}

static int srdma_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct srdma_dev *dev;

	mutex_lock(&srdma_devices_lock);
	list_for_each_entry(dev, &srdma_devices, list)
		if (dev->ndev == ndev)
			srdma_netdev_changed(dev, event);
	mutex_unlock(&srdma_devices_lock);
	return NOTIFY_OK;
}

static struct notifier_block srdma_netdev_nb = {
	.notifier_call = srdma_netdev_event,
};

int srdma_netdev_notifier_register(void)
{
	return register_netdevice_notifier(&srdma_netdev_nb);
}

void srdma_netdev_notifier_unregister(void)
{
	unregister_netdevice_notifier(&srdma_netdev_nb);
}
