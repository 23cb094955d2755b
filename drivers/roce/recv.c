// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 receive entry, called from the UDP tunnel socket in softirq.
 * The InfiniBand transport that parses and places packets is not built
 * yet: until it is, every packet is dropped (and the drop counted).
 */
#include <linux/skbuff.h>

#include "../core/srdma.h"

static atomic64_t srdma_roce_unhandled = ATOMIC64_INIT(0);

int srdma_roce_rcv(struct srdma_net *snet, struct sk_buff *skb)
{
	atomic64_inc(&srdma_roce_unhandled);
	kfree_skb(skb);
	return 0;
}
