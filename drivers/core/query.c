// SPDX-License-Identifier: GPL-2.0
/* Device, port and P_Key queries: honest limits, port state from the netdev. */
#include <linux/ethtool.h>
#include <rdma/ib_mad.h>

#include "srdma.h"
#include "transport.h"

#define SRDMA_FW_VERSION "1.0.0"

/*
 * Largest IB MTU whose packets fit the netdev once the transport's
 * headers (tp->mtu_overhead) are in.
 */
enum ib_mtu srdma_mtu_for_netdev(struct srdma_dev *dev)
{
	int mtu = READ_ONCE(dev->ndev->mtu);

	mtu -= dev->tp->mtu_overhead;
	if (mtu >= 4096)
		return IB_MTU_4096;
	if (mtu >= 2048)
		return IB_MTU_2048;
	if (mtu >= 1024)
		return IB_MTU_1024;
	if (mtu >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

int srdma_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 1ULL << 32;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = SRDMA_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE | SZ_2M;
	attr->vendor_id = 0xffffff;	/* no OUI: a software device */
	attr->vendor_part_id = dev->tp->vendor_part_id;
	attr->hw_ver = 1;
	attr->max_qp = SRDMA_MAX_QP;
	attr->max_qp_wr = SRDMA_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SRQ_RESIZE |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = SRDMA_MAX_SGE;
	attr->max_recv_sge = SRDMA_MAX_SGE;
	attr->max_sge_rd = SRDMA_MAX_SGE;
	attr->max_cq = SRDMA_MAX_CQ;
	attr->max_cqe = SRDMA_MAX_CQE;
	attr->max_mr = SRDMA_MAX_MR;
	attr->max_mw = SRDMA_MAX_MW;
	attr->max_pd = SRDMA_MAX_PD;
	attr->max_qp_rd_atom = SRDMA_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SRDMA_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SRDMA_MAX_RD_ATOMIC * SRDMA_MAX_QP;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = dev->tp->uses_av ? SRDMA_MAX_AH : 0;
	attr->max_srq = SRDMA_MAX_SRQ;
	attr->max_srq_wr = SRDMA_MAX_SRQ_WR;
	attr->max_srq_sge = SRDMA_MAX_SRQ_SGE;
	attr->max_fast_reg_page_list_len = SRDMA_MAX_FRMR_PAGES;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 15;
	if (dev->tp->query_device)
		dev->tp->query_device(dev, attr);
	return 0;
}

int srdma_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct srdma_dev *dev = to_sdev(ibdev);
	u16 speed;
	u8 width;

	if (port != 1)
		return -EINVAL;

	/* ib_core zeroes *attr before calling us */
	attr->state = srdma_port_state(dev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = srdma_mtu_for_netdev(dev);
	attr->gid_tbl_len = dev->tp->gid_tbl_len;
	attr->port_cap_flags = IB_PORT_CM_SUP | dev->tp->port_cap_flags;
	attr->max_msg_sz = SRDMA_MAX_MSG;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;

	if (ib_get_eth_speed(ibdev, port, &speed, &width)) {
		speed = IB_SPEED_SDR;
		width = IB_WIDTH_1X;
	}
	attr->active_speed = speed;
	attr->active_width = width;
	return 0;
}

int srdma_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index > 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

void srdma_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", SRDMA_FW_VERSION);
}

int srdma_modify_device(struct ib_device *ibdev, int mask,
			struct ib_device_modify *attr)
{
	if (mask & ~(IB_DEVICE_MODIFY_SYS_IMAGE_GUID |
		     IB_DEVICE_MODIFY_NODE_DESC))
		return -EOPNOTSUPP;
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, attr->node_desc,
		       sizeof(ibdev->node_desc));
	if (mask & IB_DEVICE_MODIFY_SYS_IMAGE_GUID)
		ibdev->attrs.sys_image_guid = cpu_to_be64(attr->sys_image_guid);
	return 0;
}

int srdma_modify_port(struct ib_device *ibdev, u32 port, int mask,
		      struct ib_port_modify *attr)
{
	if (port != 1)
		return -EINVAL;
	/* Nothing to shut down or reset on a software port. */
	if (mask & IB_PORT_SHUTDOWN)
		return -EOPNOTSUPP;
	return 0;
}
