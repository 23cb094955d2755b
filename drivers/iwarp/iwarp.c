// SPDX-License-Identifier: GPL-2.0
/*
 * The iWARP transport: an RNIC whose port GID is its MAC address, and
 * the iw_cm hooks. MPA connection set-up is not built yet: connect,
 * accept and listen fail with EOPNOTSUPP so rdma_cm users get a clear
 * error.
 */
#include "../core/srdma.h"

static int srdma_iw_query_gid(struct ib_device *ibdev, u32 port, int index,
			      union ib_gid *gid)
{
	struct srdma_dev *dev = to_sdev(ibdev);

	if (port != 1 || index != 0)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	memcpy(gid->raw, dev->ndev->dev_addr, ETH_ALEN);
	return 0;
}

static void srdma_iw_add_ref(struct ib_qp *ibqp)
{
	refcount_inc(&to_sqp(ibqp)->ref);
}

static void srdma_iw_rem_ref(struct ib_qp *ibqp)
{
	srdma_qp_put(to_sqp(ibqp));
}

/* iw_cm takes its own reference with iw_add_ref right after this. */
static struct ib_qp *srdma_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct srdma_qp *qp = xa_load(&to_sdev(ibdev)->qps, qpn);

	return qp ? &qp->ibqp : NULL;
}

static int srdma_iw_connect(struct iw_cm_id *id,
			    struct iw_cm_conn_param *param)
{
	return -EOPNOTSUPP;
}

static int srdma_iw_accept(struct iw_cm_id *id,
			   struct iw_cm_conn_param *param)
{
	return -EOPNOTSUPP;
}

static int srdma_iw_reject(struct iw_cm_id *id, const void *pdata,
			   u8 pdata_len)
{
	return -EOPNOTSUPP;
}

static int srdma_iw_create_listen(struct iw_cm_id *id, int backlog)
{
	return -EOPNOTSUPP;
}

static int srdma_iw_destroy_listen(struct iw_cm_id *id)
{
	return 0;
}

static const struct ib_device_ops srdma_iwarp_ops = {
	.owner = THIS_MODULE,
	.iw_accept = srdma_iw_accept,
	.iw_add_ref = srdma_iw_add_ref,
	.iw_connect = srdma_iw_connect,
	.iw_create_listen = srdma_iw_create_listen,
	.iw_destroy_listen = srdma_iw_destroy_listen,
	.iw_get_qp = srdma_iw_get_qp,
	.iw_reject = srdma_iw_reject,
	.iw_rem_ref = srdma_iw_rem_ref,
	.query_gid = srdma_iw_query_gid,
};

const struct srdma_transport srdma_iwarp_transport = {
	.link_type = "siwarp",
	.kind = SRDMA_IWARP,
	.ops = &srdma_iwarp_ops,
};
