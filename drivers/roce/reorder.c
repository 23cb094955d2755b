// SPDX-License-Identifier: GPL-2.0
/*
 * RC responder reorder queue. IBTA has the responder drop every packet
 * after a PSN gap and NAK the gap, so one lost or late packet costs a
 * window of retransmissions. Nothing on the wire forbids holding those
 * packets instead: they are processed, in PSN order, once the gap fills.
 * The requester never sees the difference except that its cumulative ACK
 * jumps past everything held, which lets ours resend the missing packet
 * alone (req.c, roce_req_recover) rather than all that followed it.
 */
#include <linux/skbuff.h>

#include "roce.h"

/* Packets held per QP: our requester never has more in flight. */
#define ROCE_REORDER_MAX	256

struct roce_reorder_cb {
	u32 psn;
};

static u32 roce_held_psn(const struct sk_buff *skb)
{
	return ((const struct roce_reorder_cb *)skb->cb)->psn;
}

/*
 * Keep @pkt, which is ahead of the expected PSN, sorted by PSN; a copy
 * already held is dropped by the caller. True when the skb was taken.
 * Lock held.
 */
bool roce_reorder_hold(struct roce_qp *rqp, struct roce_pkt *pkt)
{
	struct sk_buff_head *q = &rqp->reorder;
	struct sk_buff *pos;

	u32 mtu = roce_mtu(rqp->qp);

	/*
	 * Only what a requester can send: no more than the MTU, and all of
	 * it but in a message's last packet. One QP could otherwise be made
	 * to hold 256 reassembled 64 KiB datagrams for as long as it lives.
	 */
	if (skb_queue_len(q) >= ROCE_REORDER_MAX ||
	    psn_diff(pkt->psn, rqp->epsn) > 2 * ROCE_REORDER_MAX ||
	    pkt->paylen > mtu ||
	    (!(pkt->flags & ROCE_F_LAST) && pkt->paylen != mtu))
		return false;
	BUILD_BUG_ON(sizeof(struct roce_reorder_cb) > sizeof(pkt->skb->cb));
	skb_queue_reverse_walk(q, pos) {
		s32 d = psn_diff(pkt->psn, roce_held_psn(pos));

		if (!d)
			return false;
		if (d > 0)
			break;
	}
	((struct roce_reorder_cb *)pkt->skb->cb)->psn = pkt->psn;
	/*
	 * Kept past this softirq: let go now of what it holds of the stack
	 * (the input route, a conntrack entry, the device it came in on,
	 * which may go away first); the BTH on is all we read again.
	 */
	skb_dst_drop(pkt->skb);
	nf_reset_ct(pkt->skb);
	pkt->skb->dev = NULL;
	if (pos == (struct sk_buff *)q)
		__skb_queue_head(q, pkt->skb);
	else
		__skb_queue_after(q, pos, pkt->skb);
	pkt->skb = NULL;
	roce_count(pkt->dev, ROCE_CNT_RX_REORDER_HELD);
	return true;
}

/*
 * The held packet that is now in sequence, if any; held packets the
 * sequence has passed (their retransmission came first) are dropped.
 * Lock held.
 */
struct sk_buff *roce_reorder_next(struct roce_qp *rqp)
{
	struct sk_buff *skb;

	while ((skb = skb_peek(&rqp->reorder))) {
		s32 d = psn_diff(roce_held_psn(skb), rqp->epsn);

		if (d > 0)
			return NULL;
		__skb_unlink(skb, &rqp->reorder);
		if (!d)
			return skb;
		kfree_skb(skb);
	}
	return NULL;
}

bool roce_reorder_empty(struct roce_qp *rqp)
{
	return skb_queue_empty(&rqp->reorder);
}

/* Is the next packet in sequence already held? Lock held. */
bool roce_reorder_ready(struct roce_qp *rqp)
{
	struct sk_buff *skb = skb_peek(&rqp->reorder);

	return skb && roce_held_psn(skb) == rqp->epsn;
}

/* Forget everything held (reset, error, destroy). Lock held. */
void roce_reorder_purge(struct roce_qp *rqp)
{
	__skb_queue_purge(&rqp->reorder);
}
