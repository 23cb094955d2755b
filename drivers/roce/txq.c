// SPDX-License-Identifier: GPL-2.0
/*
 * How many of a QP's packets are still in this host: handed to IP but
 * not yet sent by the device, standing in a qdisc or a transmit ring.
 *
 * Without a bound a requester fills whatever queue is in front of it,
 * and when that queue is the host's own egress (a shaped uplink, a
 * congested NIC) it grows past any AQM's target: every other flow then
 * waits behind it, and TCP, which keeps about a millisecond of its own
 * rate there (TCP small queues), gives way to it. So a QP keeps at most
 * ROCE_TXQ_MAX packets here, and when congestion control paces it, a
 * millisecond of its rate (at least two packets): a local bottleneck
 * then holds it back as it holds TCP back.
 *
 * Each packet's skb carries a counted reference to the QP's roce_txq in
 * skb_shinfo()->destructor_arg; its destructor, run when the device is
 * done with it (or a qdisc drops it), uncounts it. A GSO train (train.c)
 * is one skb for several packets, counted and uncounted together: their
 * number, less one, is kept in the low bits of destructor_arg, since the
 * stack may rewrite the skb's own GSO fields on the way. The count outlives
 * the QP while packets still hold it, so a packet in a stuck queue holds
 * neither the QP nor its destruction. A QP that found no room is woken
 * by the destructor that takes the count to half its limit, through the
 * pace timer (cc.c), which runs both the requester and the READ
 * responder; destroy detaches the QP from the count before it cancels
 * that timer. RESET and ERR leave it attached: a wake then runs a
 * requester that finds the QP's state and returns.
 *
 * A packet whose payload is lent, the user's pages in its fragments
 * (roce_alloc_skb_lent()), is counted by its zero-copy callback instead
 * (struct roce_lent, in destructor_arg): the stack calls it once no
 * skb refers to those pages any more, the device done with them or a
 * copy made in their place, which the stack makes before it clones the
 * skb for a packet tap or delivers it to a local receiver. Until every
 * lent packet of the QP has been called back, the consumer must not have
 * its buffers back early: an error completion or a flush (the ACK that
 * completes a WQE normally means its packets have left), nor, after the
 * QP resent a packet, any completion (the resend's ACK may come while
 * the first transmission still waits in some other queue). The core asks
 * roce_txq_sq_held() before each completion, and the callback that
 * takes the count to zero resumes them.
 */
#include "roce.h"

enum {
	ROCE_TXQ_WAITING,		/* the QP waits for room */
	ROCE_TXQ_HOLDING,		/* the core holds completions */
	ROCE_TXQ_RESENT,		/* resent while packets were lent */
};

struct roce_txq {
	refcount_t ref;			/* the QP's + one per skb here */
	atomic_t pkts;			/* packets in this host */
	atomic_t lent;			/* ...of them lent, not called back */
	u32 limit;			/* the most the QP may have here */
	unsigned long flags;		/* ROCE_TXQ_* */
	spinlock_t lock;		/* rqp */
	struct roce_qp *rqp;		/* NULL once destroy has begun */
};

/* The zero-copy state of one lent packet, or of a train of them. */
struct roce_lent {
	struct ubuf_info ubuf;
	struct roce_txq *txq;
	u32 pkts;
};

/* The packets a QP not paced may keep in this host... */
#define ROCE_TXQ_MAX		64
/* ...and the fewest a paced one may */
#define ROCE_TXQ_MIN		2
/* A paced QP keeps this much of its rate here. */
#define ROCE_TXQ_PACED_NS	NSEC_PER_MSEC
/* IPv6, UDP, BTH and extension headers, ICRC: more than any packet's */
#define ROCE_TXQ_HDR_BYTES	128
/* destructor_arg's low bits: the packets of a train, less one */
#define ROCE_TXQ_PKTS_MASK	(ROCE_TRAIN_MAX - 1UL)
/* kmalloc() aligns a power-of-two size to itself: room for the bits */
#define ROCE_TXQ_ALLOC		roundup_pow_of_two(max_t(size_t, \
					sizeof(struct roce_txq), \
					ROCE_TXQ_PKTS_MASK + 1))

int roce_txq_init(struct roce_qp *rqp)
{
	struct roce_txq *txq = kzalloc(ROCE_TXQ_ALLOC, GFP_KERNEL);

	BUILD_BUG_ON(!is_power_of_2(ROCE_TRAIN_MAX));
	if (!txq)
		return -ENOMEM;
	if (WARN_ON_ONCE((unsigned long)txq & ROCE_TXQ_PKTS_MASK)) {
		kfree(txq);
		return -ENOMEM;
	}
	refcount_set(&txq->ref, 1);
	txq->limit = ROCE_TXQ_MAX;
	spin_lock_init(&txq->lock);
	txq->rqp = rqp;
	rqp->txq = txq;
	return 0;
}

static void roce_txq_put(struct roce_txq *txq)
{
	if (refcount_dec_and_test(&txq->ref))
		kfree(txq);
}

/*
 * Destroy: no packet's destructor touches the QP after this. Called
 * before the pace timer is cancelled, which one may have just started.
 */
void roce_txq_detach(struct roce_qp *rqp)
{
	struct roce_txq *txq = rqp->txq;
	unsigned long flags;

	spin_lock_irqsave(&txq->lock, flags);
	txq->rqp = NULL;
	spin_unlock_irqrestore(&txq->lock, flags);
}

void roce_txq_fini(struct roce_qp *rqp)
{
	roce_txq_put(rqp->txq);
	rqp->txq = NULL;
}

/* The QP waits for room and half its packets have left: run it. */
static void roce_txq_wake(struct roce_txq *txq)
{
	unsigned long flags;

	spin_lock_irqsave(&txq->lock, flags);
	if (txq->rqp)
		hrtimer_start(&txq->rqp->cc.pace_timer, 0,
			      HRTIMER_MODE_REL_SOFT);
	spin_unlock_irqrestore(&txq->lock, flags);
}

/* @pkts packets of the QP, in one skb, left this host. Any context. */
static void roce_txq_uncount(struct roce_txq *txq, u32 pkts)
{
	int left = atomic_sub_return(pkts, &txq->pkts);

	/* pairs with roce_txq_room(): the count fell, or the bit is seen */
	if (left <= READ_ONCE(txq->limit) / 2 &&
	    test_and_clear_bit(ROCE_TXQ_WAITING, &txq->flags))
		roce_txq_wake(txq);
	roce_txq_put(txq);
}

/* Any context the network stack frees an skb in. */
static void roce_txq_skb_done(struct sk_buff *skb)
{
	unsigned long arg = (unsigned long)skb_shinfo(skb)->destructor_arg;

	roce_txq_uncount((void *)(arg & ~ROCE_TXQ_PKTS_MASK),
			 (arg & ROCE_TXQ_PKTS_MASK) + 1);
}

/* The core may complete again what roce_txq_sq_held() held. */
static void roce_txq_resume(struct roce_txq *txq)
{
	unsigned long flags;

	spin_lock_irqsave(&txq->lock, flags);
	if (txq->rqp)
		srdma_sq_resume(txq->rqp->qp);
	spin_unlock_irqrestore(&txq->lock, flags);
}

/*
 * The stack let go of a lent packet's pages: the skb freed (@ok), or a
 * copy made in their place. Any context the stack frees or copies in.
 */
static void roce_lent_done(struct sk_buff *skb, struct ubuf_info *ubuf,
			   bool ok)
{
	struct roce_lent *lent = container_of(ubuf, struct roce_lent, ubuf);
	struct roce_txq *txq = lent->txq;
	u32 pkts = lent->pkts;

	if (!refcount_dec_and_test(&ubuf->refcnt))
		return;
	kfree(lent);
	if (atomic_sub_and_test(pkts, &txq->lent)) {
		clear_bit(ROCE_TXQ_RESENT, &txq->flags);
		/* pairs with roce_txq_sq_held(): the count, or the bit */
		if (test_and_clear_bit(ROCE_TXQ_HOLDING, &txq->flags))
			roce_txq_resume(txq);
	}
	roce_txq_uncount(txq, pkts);
}

SRDMA_UBUF_OPS(roce_lent_ops, roce_lent_done);

/**
 * roce_txq_lend() - count a packet whose payload is lent, or a train
 * @rqp: its QP
 * @skb: the packet, the user's pages in its fragments
 * @pkts: the packets it carries: 1, or a train's (train.c)
 *
 * From here on the QP's completions may wait for it (roce_txq_sq_held()),
 * and roce_txq_own() leaves it alone: its zero-copy callback uncounts it.
 * Lock held.
 *
 * Return: 0, or -ENOMEM (nothing counted: free the packet, or copy).
 */
int roce_txq_lend(struct roce_qp *rqp, struct sk_buff *skb, u32 pkts)
{
	struct roce_lent *lent = kmalloc(sizeof(*lent), GFP_ATOMIC);
	struct roce_txq *txq = rqp->txq;
	bool have_ref = true;

	if (!lent)
		return -ENOMEM;
	srdma_ubuf_set_ops(&lent->ubuf, roce_lent_ops);
	refcount_set(&lent->ubuf.refcnt, 1);
	/* the stack copies the pages before a clone or a local receiver */
	lent->ubuf.flags = SKBFL_ZEROCOPY_FRAG;
	lent->txq = txq;
	lent->pkts = pkts;
	refcount_inc(&txq->ref);
	atomic_add(pkts, &txq->pkts);
	atomic_add(pkts, &txq->lent);
	/* the skb takes our reference to the ubuf */
	skb_zcopy_set(skb, &lent->ubuf, &have_ref);
	return 0;
}

/*
 * The QP sends @psn again. If packets are lent, the first transmission
 * of this one may be among them, and the resend's ACK overtake it: every
 * completion then waits for them (roce_txq_sq_held()). Lock held.
 */
void roce_txq_resend(struct roce_qp *rqp)
{
	struct roce_txq *txq = rqp->txq;

	if (atomic_read(&txq->lent) &&
	    !test_bit(ROCE_TXQ_RESENT, &txq->flags))
		set_bit(ROCE_TXQ_RESENT, &txq->flags);
}

/*
 * The transport's sq_held: must a completion of status @success wait for
 * lent packets? If so, the callback that takes the count to zero resumes
 * it. state_lock held, any context.
 */
bool roce_txq_sq_held(struct srdma_qp *qp, bool success)
{
	struct roce_txq *txq = to_rqp(qp)->txq;

	if (!atomic_read(&txq->lent) ||
	    (success && !test_bit(ROCE_TXQ_RESENT, &txq->flags)))
		return false;
	set_bit(ROCE_TXQ_HOLDING, &txq->flags);
	/* pairs with roce_lent_done(): see its decrement, or it our bit */
	smp_mb__after_atomic();
	return atomic_read(&txq->lent) != 0;
}

/* For rdma res: lent packets not yet called back. Any context. */
u32 roce_txq_lent(struct roce_qp *rqp)
{
	return atomic_read(&rqp->txq->lent);
}

/*
 * Count @skb, about to be handed to IP, as the QP's @pkts packets (one,
 * or a train's, at most ROCE_TRAIN_MAX) until the stack frees it. The
 * skb has no socket: its destructor is ours alone. A lent packet was
 * counted when it was lent, and its destructor_arg is not ours.
 */
void roce_txq_own(struct roce_qp *rqp, struct sk_buff *skb, u32 pkts)
{
	struct roce_txq *txq = rqp->txq;

	if (skb_zcopy(skb))
		return;
	refcount_inc(&txq->ref);
	atomic_add(pkts, &txq->pkts);
	skb_shinfo(skb)->destructor_arg =
		(void *)((unsigned long)txq | ((pkts - 1) & ROCE_TXQ_PKTS_MASK));
	skb->destructor = roce_txq_skb_done;
}

/* A packet of the QP's path MTU, IP header to ICRC, at most. */
static u32 roce_txq_pkt_bytes(struct roce_qp *rqp)
{
	return roce_mtu(rqp->qp) + ROCE_TXQ_HDR_BYTES;
}

/*
 * May the QP add a packet to those in this host? If not, the destructor
 * of the packet that leaves half the limit behind runs the requester and
 * the READ responder again. A GSO train added after a yes may take the
 * count up to ROCE_TRAIN_MAX - 1 past the limit. Lock held.
 */
bool roce_txq_room(struct roce_qp *rqp)
{
	struct roce_txq *txq = rqp->txq;
	int pkts = atomic_read(&txq->pkts);
	u32 limit = ROCE_TXQ_MAX;

	/* the common case, with no division: below any QP's limit */
	if (pkts < ROCE_TXQ_MIN)
		return true;
	if (rqp->cc.limited) {
		/* kbit/s x ns / 8e6 = bytes */
		limit = div_u64((u64)rqp->cc.dcqcn.rc * ROCE_TXQ_PACED_NS,
				8000000ULL * roce_txq_pkt_bytes(rqp));
		limit = clamp_t(u32, limit, ROCE_TXQ_MIN, ROCE_TXQ_MAX);
	}
	if (pkts < limit)
		return true;
	/* the destructors' wake threshold: only read while we wait */
	WRITE_ONCE(txq->limit, limit);
	set_bit(ROCE_TXQ_WAITING, &txq->flags);
	/* pairs with roce_txq_skb_done(): see its decrement, or it our bit */
	smp_mb__after_atomic();
	if (atomic_read(&txq->pkts) < limit)
		return true;
	roce_count(qp_dev(rqp->qp), ROCE_CNT_TX_QUEUE_FULL);
	return false;
}
