// SPDX-License-Identifier: GPL-2.0
/* The RoCEv2 transport: device set-up on the namespace's UDP socket. */
#include "../core/srdma.h"

static int srdma_roce_dev_init(struct srdma_dev *dev)
{
	struct srdma_net *snet = srdma_net_get(dev_net(dev->ndev));

	if (IS_ERR(snet))
		return PTR_ERR(snet);
	dev->snet = snet;
	return 0;
}

static void srdma_roce_dev_fini(struct srdma_dev *dev)
{
	srdma_net_put(dev->snet);
	dev->snet = NULL;
}

static const struct ib_device_ops srdma_roce_ops = {
	.owner = THIS_MODULE,
};

const struct srdma_transport srdma_roce_transport = {
	.link_type = "sroce",
	.kind = SRDMA_ROCE,
	.ops = &srdma_roce_ops,
	.dev_init = srdma_roce_dev_init,
	.dev_fini = srdma_roce_dev_fini,
};
