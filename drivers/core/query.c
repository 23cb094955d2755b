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
	attr->max_msg_sz = 1U << 31;
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

static const struct rdma_stat_desc srdma_counter_descs[SRDMA_CNT_MAX] = {
	[SRDMA_CNT_RX_DROPPED].name = "rx_dropped",
	[SRDMA_CNT_RX_BAD_CRC].name = "rx_bad_crc",
	[SRDMA_CNT_RX_BAD_QP].name = "rx_bad_qp",
	[SRDMA_CNT_CQ_OVERFLOW].name = "cq_overflow",
	[SRDMA_CNT_LOCAL_KEY_ERR].name = "local_key_err",
	[SRDMA_CNT_REMOTE_KEY_ERR].name = "remote_key_err",
	[SRDMA_CNT_RETRANSMITS].name = "retransmits",
	[SRDMA_CNT_RX_DUPLICATE].name = "rx_duplicate",
	[SRDMA_CNT_SEQ_NAK_SENT].name = "seq_nak_sent",
	[SRDMA_CNT_RNR_NAK_SENT].name = "rnr_nak_sent",
	[SRDMA_CNT_RETRY_EXCEEDED].name = "retry_exceeded",
	[SRDMA_CNT_RX_REORDER_HELD].name = "rx_reorder_held",
	[SRDMA_CNT_RETRANSMIT_PROBES].name = "retransmit_probes",
	[SRDMA_CNT_IW_CONNECTIONS].name = "iwarp_connections",
	[SRDMA_CNT_IW_CRC_CONNECTIONS].name = "iwarp_crc_connections",
	[SRDMA_CNT_IW_TERMINATE_SENT].name = "iwarp_terminate_sent",
	[SRDMA_CNT_IW_TERMINATE_RCVD].name = "iwarp_terminate_rcvd",
	[SRDMA_CNT_IW_SETUP_REFUSED].name = "iwarp_setup_refused",
	[SRDMA_CNT_IW_SETUP_TIMEOUT].name = "iwarp_setup_timeout",
	[SRDMA_CNT_TX_PACKETS].name = "tx_packets",
	[SRDMA_CNT_TX_BYTES].name = "tx_bytes",
	[SRDMA_CNT_RX_PACKETS].name = "rx_packets",
	[SRDMA_CNT_RX_BYTES].name = "rx_bytes",
	[SRDMA_CNT_RETRANSMIT_TIMEOUTS].name = "retransmit_timeouts",
	[SRDMA_CNT_RNR_RETRY_EXCEEDED].name = "rnr_retry_exceeded",
	[SRDMA_CNT_ACCESS_NAK_SENT].name = "access_nak_sent",
	[SRDMA_CNT_INV_REQ_NAK_SENT].name = "inv_req_nak_sent",
	[SRDMA_CNT_REM_OP_NAK_SENT].name = "rem_op_nak_sent",
	[SRDMA_CNT_SEQ_NAK_RCVD].name = "seq_nak_rcvd",
	[SRDMA_CNT_RNR_NAK_RCVD].name = "rnr_nak_rcvd",
	[SRDMA_CNT_ACCESS_NAK_RCVD].name = "access_nak_rcvd",
	[SRDMA_CNT_INV_REQ_NAK_RCVD].name = "inv_req_nak_rcvd",
	[SRDMA_CNT_REM_OP_NAK_RCVD].name = "rem_op_nak_rcvd",
	[SRDMA_CNT_RX_DROP_MALFORMED].name = "rx_malformed",
	[SRDMA_CNT_RX_DROP_PKEY].name = "rx_bad_pkey",
	[SRDMA_CNT_RX_DROP_SERVICE].name = "rx_bad_service",
	[SRDMA_CNT_RX_DROP_PATH].name = "rx_bad_path",
	[SRDMA_CNT_IW_CONNECTS].name = "iwarp_connects",
	[SRDMA_CNT_IW_ACCEPTS].name = "iwarp_accepts",
	[SRDMA_CNT_IW_REJECTS_SENT].name = "iwarp_rejects_sent",
	[SRDMA_CNT_IW_REJECTS_RCVD].name = "iwarp_rejects_rcvd",
	[SRDMA_CNT_IW_MPA_FAILURES].name = "iwarp_mpa_failures",
	[SRDMA_CNT_IW_ABORTS].name = "iwarp_aborts",
	[SRDMA_CNT_RD_NOMEM].name = "read_resp_nomem",
	[SRDMA_CNT_CC_CE_RX].name = "cc_ce_rx",
	[SRDMA_CNT_CC_CNP_TX].name = "cc_cnp_tx",
	[SRDMA_CNT_CC_CNP_RX].name = "cc_cnp_rx",
	[SRDMA_CNT_CC_RATE_DEC].name = "cc_rate_dec",
	[SRDMA_CNT_CC_RATE_INC].name = "cc_rate_inc",
};

struct rdma_hw_stats *srdma_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	return rdma_alloc_hw_stats_struct(srdma_counter_descs, SRDMA_CNT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int srdma_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct srdma_dev *dev = to_sdev(ibdev);
	int i;

	for (i = 0; i < SRDMA_CNT_MAX; i++)
		stats->value[i] = srdma_counter_read(dev, i);
	return SRDMA_CNT_MAX;
}
