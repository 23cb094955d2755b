// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE responder acknowledgements. Every RC packet that asks for an ACK
 * gets one, but not one each: the responder notes the newest such PSN
 * and a tasklet sends one ACK for all of them once the receive softirq
 * has finished its batch of packets. The ACK is cumulative (IBTA 9.7.5.1),
 * so a window of small SENDs that arrived together costs the wire and
 * the requester one ACK instead of one per message, and the last ACK of
 * a message waits for nothing but the end of the batch it arrived in.
 */
#include <linux/interrupt.h>

#include "roce.h"

/*
 * ACK, RNR NAK or NAK (@syndrome) for @psn, sent now. Each of them
 * acknowledges every PSN before @psn, so an ACK still pending for one of
 * those is no longer needed. An ACK waits while READ responses or atomic
 * ACKs for earlier PSNs are still to go (resp.c sends it after them):
 * overtaking them it would tell the requester they were lost. Lock held.
 */
int roce_send_ack(struct srdma_qp *qp, u8 syndrome, u32 psn)
{
	struct roce_qp *rqp = to_rqp(qp);
	struct roce_aeth *aeth;
	struct sk_buff *skb;

	if (rqp->rd_pending &&
	    (syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK) {
		if (!rqp->ack_due || psn_diff(psn, rqp->ack_psn) > 0)
			rqp->ack_psn = psn;
		rqp->ack_due = true;
		return 0;
	}
	if (rqp->ack_due && psn_diff(psn, rqp->ack_psn) >= 0)
		rqp->ack_due = false;
	skb = roce_alloc_skb(qp, &qp->attr.av, roce_ops[ROCE_ACK].hdr_len, 0);
	if (!skb)
		return -ENOMEM;
	roce_fill_bth((void *)skb->data, ROCE_OP_RC | ROCE_ACK, 0,
		      qp->attr.dest_qpn, psn, 0);
	aeth = (void *)skb->data + sizeof(struct roce_bth);
	aeth->smsn = htonl((u32)syndrome << 24 | (rqp->msn & 0xffffff));
	roce_obs_ack_sent(qp, syndrome, psn);
	return roce_xmit(qp, &qp->attr.av, skb);
}

/* @psn asked for an ACK: send it at the end of this batch. Lock held. */
void roce_ack_later(struct roce_qp *rqp, u32 psn)
{
	rqp->ack_psn = psn;
	if (!rqp->ack_due) {
		rqp->ack_due = true;
		tasklet_schedule(&rqp->ack_tasklet);
	}
}

static void roce_ack_flush(struct tasklet_struct *t)
{
	struct roce_qp *rqp = from_tasklet(rqp, t, ack_tasklet);
	struct srdma_qp *qp = rqp->qp;

	spin_lock(&rqp->lock);
	if (rqp->ack_due) {
		/* roce_send_ack() may hold it again, behind READ responses */
		rqp->ack_due = false;
		if (!rqp->dead && roce_resp_open(READ_ONCE(qp->state)))
			roce_send_ack(qp, ROCE_AETH_CREDIT_INVALID,
				      rqp->ack_psn);
	}
	spin_unlock(&rqp->lock);
}

void roce_ack_init(struct roce_qp *rqp)
{
	tasklet_setup(&rqp->ack_tasklet, roce_ack_flush);
}

/* After the QP is marked dead: no ACK can be scheduled any more. */
void roce_ack_fini(struct roce_qp *rqp)
{
	tasklet_kill(&rqp->ack_tasklet);
}
