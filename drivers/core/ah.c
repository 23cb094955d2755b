// SPDX-License-Identifier: GPL-2.0
/*
 * Address handles (RoCE only). Each AH gets a number that librxe puts in
 * UD send WQEs; the SQ fetch copies the AH's address vector into the WQE
 * under the table lock, so an AH may be destroyed (even from atomic
 * context) while sends that used it are still in flight.
 */
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "srdma.h"
#include "transport.h"

int srdma_av_from_attr(struct srdma_dev *dev, struct srdma_av *av,
		       const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	switch (rdma_gid_attr_network_type(sgid_attr)) {
	case RDMA_NETWORK_IPV4:
		av->network_type = RXE_NETWORK_TYPE_IPV4;
		break;
	case RDMA_NETWORK_IPV6:
		av->network_type = RXE_NETWORK_TYPE_IPV6;
		break;
	default:
		return -EINVAL;		/* RoCE v1 is not spoken here */
	}
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	av->sl = rdma_ah_get_sl(attr);
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = grh->flow_label;
	av->sgid_index = grh->sgid_index;
	av->dgid = grh->dgid;
	rdma_gid2ip((struct sockaddr *)&av->saddr, &sgid_attr->gid);
	rdma_gid2ip((struct sockaddr *)&av->daddr, &grh->dgid);
	return 0;
}

int srdma_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct srdma_dev *dev = to_sdev(ibah->device);
	struct srdma_ah *ah = to_sah(ibah);
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							    GFP_ATOMIC;
	struct rxe_create_ah_resp resp = {};
	unsigned long flags;
	int err;

	if (!dev->tp->uses_av)
		return -EOPNOTSUPP;
	err = srdma_av_from_attr(dev, &ah->av, init->ah_attr);
	if (err)
		return err;
	if (atomic_inc_return(&dev->num_ah) > SRDMA_MAX_AH) {
		err = -ENOMEM;
		goto err_count;
	}

	xa_lock_irqsave(&dev->ahs, flags);
	err = __xa_alloc(&dev->ahs, &ah->ah_num, ah, xa_limit_31b, gfp);
	xa_unlock_irqrestore(&dev->ahs, flags);
	if (err)
		goto err_count;

	if (udata && udata->outlen >= sizeof(resp)) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	xa_lock_irqsave(&dev->ahs, flags);
	__xa_erase(&dev->ahs, ah->ah_num);
	xa_unlock_irqrestore(&dev->ahs, flags);
err_count:
	atomic_dec(&dev->num_ah);
	return err;
}

int srdma_ah_copy_av(struct srdma_dev *dev, u32 ah_num, struct ib_pd *pd,
		     struct srdma_av *av)
{
	struct srdma_ah *ah;
	unsigned long flags;
	int err = -EINVAL;

	xa_lock_irqsave(&dev->ahs, flags);
	ah = xa_load(&dev->ahs, ah_num);
	if (ah && ah->ibah.pd == pd) {
		*av = ah->av;
		err = 0;
	}
	xa_unlock_irqrestore(&dev->ahs, flags);
	return err;
}

int srdma_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct srdma_ah *ah = to_sah(ibah);

	memset(attr, 0, sizeof(*attr));
	attr->type = ibah->type;
	rdma_ah_set_sl(attr, ah->av.sl);
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_grh(attr, &ah->av.dgid, ah->av.flow_label,
			ah->av.sgid_index, ah->av.hop_limit,
			ah->av.traffic_class);
	memcpy(attr->roce.dmac, ah->av.dmac, ETH_ALEN);
	return 0;
}

int srdma_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct srdma_dev *dev = to_sdev(ibah->device);
	struct srdma_ah *ah = to_sah(ibah);
	unsigned long irqflags;

	xa_lock_irqsave(&dev->ahs, irqflags);
	__xa_erase(&dev->ahs, ah->ah_num);
	xa_unlock_irqrestore(&dev->ahs, irqflags);
	atomic_dec(&dev->num_ah);
	return 0;
}
