// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE responder: requests arriving at a QP. RC checks PSNs (NAK on a
 * gap, replay on a duplicate), places SENDs into posted receives and
 * WRITEs into registered memory after the key check, answers READs and
 * atomics from memory and keeps them as responder resources so that a
 * duplicate request is answered again rather than executed twice.
 * UC places without acknowledging; UD takes single-packet SENDs.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>

#include "roce.h"

/*
 * A reply of up to ROCE_RD_SOFTIRQ_PKTS packets goes out from the receive
 * softirq; longer ones from rd_work, ROCE_RD_WORK_PKTS per run, so that
 * one small request never holds a CPU with bottom halves off for long.
 */
#define ROCE_RD_SOFTIRQ_PKTS	32
#define ROCE_RD_WORK_PKTS	64
/* Longest wait before a reply that found no memory tries again. */
#define ROCE_RD_BACKOFF_MAX_MS	100
/* IBTA's largest message, advertised as max_msg_sz (query.c) */
#define ROCE_MAX_MSG		BIT(31)

static void roce_send_nak(struct srdma_qp *qp, u8 code, u32 psn)
{
	roce_send_ack(qp, ROCE_AETH_NAK | code, psn);
}

static int roce_send_atomic_ack(struct srdma_qp *qp, struct roce_rdres *res)
{
	struct roce_aeth *aeth;
	struct roce_atmack *ack;
	struct sk_buff *skb;

	skb = roce_alloc_skb(qp, &qp->attr.av,
			     roce_ops[ROCE_ATOMIC_ACK].hdr_len, 0);
	if (!skb)
		return -ENOMEM;
	roce_fill_bth((void *)skb->data, ROCE_OP_RC | ROCE_ATOMIC_ACK, 0,
		      qp->attr.dest_qpn, res->first_psn, 0);
	aeth = (void *)skb->data + sizeof(struct roce_bth);
	aeth->smsn = htonl((u32)res->syndrome << 24 |
			   (to_rqp(qp)->msn & 0xffffff));
	ack = (void *)(aeth + 1);
	ack->orig = cpu_to_be64(res->orig);
	return roce_xmit(qp, &qp->attr.av, skb);
}

static void roce_res_sent(struct roce_qp *rqp, struct roce_rdres *res)
{
	res->pending = false;
	rqp->rd_pending--;
}

/* Forget every reply still to send (error, reset, destroy). Lock held. */
void roce_rd_cancel(struct roce_qp *rqp)
{
	u32 i;

	for (i = 0; i < rqp->nres; i++)
		rqp->res[i].pending = false;
	rqp->rd_pending = 0;
}

/*
 * Send READ response packets of @res from res->next_psn on, at most
 * *@budget of them. The key is checked again on every run, and a copy
 * that fails (a window unbound or invalidated since) ends the reply:
 * a packet is sent only with bytes actually read from memory. Each
 * packet asks the QP's rate limiter first (cc.c): READ responses are
 * what a READ-heavy QP sends, and what the CNPs its requester peer
 * returns for them are about. Returns 0, -EACCES (NAK it), -ENOMEM (the
 * requester will ask again) or -EAGAIN (the rate limit: the pace timer
 * resumes rd_work). Lock held.
 */
static int roce_read_resp_run(struct roce_qp *rqp, struct roce_rdres *res,
			      u32 *budget)
{
	struct srdma_qp *qp = rqp->qp;
	u64 off = (u64)psn_diff(res->next_psn, res->first_psn) * res->mtu;
	u32 n = min_t(u32, *budget,
		      psn_diff(res->last_psn, res->next_psn) + 1);
	u64 len = min_t(u64, (u64)n * res->mtu, res->length - off);
	struct srdma_mem *mem = NULL;
	int err = 0;

	if (len) {
		mem = srdma_rkey_check(qp, res->rkey, res->va + off, len,
				       IB_ACCESS_REMOTE_READ, &err);
		if (!mem)
			return -EACCES;
	}
	while (n--) {
		u32 psn = res->next_psn;
		u32 paylen = min_t(u64, res->mtu, res->length - off);
		bool first = psn == res->first_psn, last = psn == res->last_psn;
		u8 op = first && last ? ROCE_READ_RESP_ONLY :
			first ? ROCE_READ_RESP_FIRST :
			last ? ROCE_READ_RESP_LAST : ROCE_READ_RESP_MIDDLE;
		u32 hdr_len = roce_ops[op].hdr_len;
		struct sk_buff *skb;

		if (!roce_cc_resp_ok(rqp)) {
			err = -EAGAIN;
			break;
		}
		skb = roce_alloc_skb(qp, &qp->attr.av, hdr_len, paylen);
		if (!skb) {
			err = -ENOMEM;
			break;
		}
		roce_fill_bth((void *)skb->data, ROCE_OP_RC | op, paylen,
			      qp->attr.dest_qpn, psn, 0);
		if (roce_ops[op].flags & ROCE_F_AETH) {
			struct roce_aeth *aeth = (void *)skb->data +
						 sizeof(struct roce_bth);

			aeth->smsn = htonl(ROCE_AETH_CREDIT_INVALID << 24 |
					   (rqp->msn & 0xffffff));
		}
		/*
		 * The whole key check again with each packet's copy: a rereg
		 * narrowing access or moving the MR to another PD during the
		 * run stops the reply at the next packet.
		 */
		if (paylen && srdma_rkey_copy(qp, mem, res->rkey,
					      res->va + off,
					      skb->data + hdr_len, paylen,
					      IB_ACCESS_REMOTE_READ,
					      SRDMA_FROM_MEM)) {
			kfree_skb(skb);
			err = -EACCES;
			break;
		}
		roce_xmit(qp, &qp->attr.av, skb);
		roce_cc_sent(rqp, hdr_len + paylen);
		off += paylen;
		(*budget)--;
		if (last) {
			roce_res_sent(rqp, res);
			break;
		}
		res->next_psn = psn_add(psn, 1);
	}
	if (mem)
		srdma_mem_put(mem);
	return err;
}

/* The pending reply with the oldest PSN: replies go out in PSN order. */
static struct roce_rdres *roce_rd_next(struct roce_qp *rqp)
{
	struct roce_rdres *best = NULL;
	u32 i;

	for (i = 0; i < rqp->nres; i++) {
		struct roce_rdres *res = &rqp->res[i];

		if (res->pending &&
		    (!best || psn_diff(res->next_psn, best->next_psn) < 0))
			best = res;
	}
	return best;
}

/* A READ reply's key no longer holds: NAK it, end them all. Lock held. */
static void roce_rd_refused(struct roce_qp *rqp, struct roce_rdres *res)
{
	struct srdma_qp *qp = rqp->qp;

	ibdev_dbg_ratelimited(&qp_dev(qp)->ibdev,
			      "QP %u: READ reply at PSN %#x: key %#x no longer valid\n",
			      qp->ibqp.qp_num, res->next_psn, res->rkey);
	srdma_count(qp_dev(qp), SRDMA_CNT_REMOTE_KEY_ERR);
	roce_send_nak(qp, ROCE_NAK_REMOTE_ACCESS, res->next_psn);
	roce_rd_cancel(rqp);
	rqp->fatal = true;
}

/*
 * Send what @budget allows of the pending READ responses and atomic ACKs,
 * oldest first. An ACK held back behind them (roce_send_ack) goes once
 * none is left. Returns -ENOMEM when a packet could not be allocated,
 * -EAGAIN when the rate limit holds the reply back (either way it stays
 * pending), else 0. Lock held.
 */
static int roce_rd_run(struct roce_qp *rqp, u32 budget)
{
	struct srdma_qp *qp = rqp->qp;
	struct roce_rdres *res = NULL;
	int err = 0;

	while (budget && (res = roce_rd_next(rqp))) {
		if (res->atomic) {
			/* sent or lost on the way: a duplicate asks again */
			err = roce_send_atomic_ack(qp, res) == -ENOMEM ?
			      -ENOMEM : 0;
			if (!err) {
				roce_res_sent(rqp, res);
				budget--;
			}
		} else {
			err = roce_read_resp_run(rqp, res, &budget);
		}
		if (err)
			break;
	}
	if (err == -EACCES) {
		roce_rd_refused(rqp, res);
		return 0;
	}
	/* more to send (rd_work's), or no memory (sent again later) */
	if (err || rqp->rd_pending)
		return err;
	if (rqp->ack_due) {
		rqp->ack_due = false;
		roce_send_ack(qp, ROCE_AETH_CREDIT_INVALID, rqp->ack_psn);
	}
	return 0;
}

/*
 * Queue rd_work again on the CPU its replies are kept on: at once while
 * they move, after a delay that doubles up to ROCE_RD_BACKOFF_MAX_MS
 * while no packet can be allocated. Retrying at once would spin a
 * worker for as long as memory stays short. A delay already set is
 * kept (queueing a pending work changes nothing), so duplicate READs
 * arriving meanwhile do not shorten it. Lock held.
 */
static void roce_rd_requeue(struct roce_qp *rqp, bool nomem)
{
	unsigned long max = msecs_to_jiffies(ROCE_RD_BACKOFF_MAX_MS);

	if (nomem) {
		rqp->rd_backoff = clamp(rqp->rd_backoff * 2, 1UL, max);
		roce_count(qp_dev(rqp->qp), ROCE_CNT_RD_NOMEM);
	} else {
		rqp->rd_backoff = 0;
	}
	queue_delayed_work_on(rqp->rd_cpu, srdma_cpu_wq, &rqp->rd_work,
			      rqp->rd_backoff);
}

static void roce_rd_work(struct work_struct *work)
{
	struct roce_qp *rqp = container_of(to_delayed_work(work),
					   struct roce_qp, rd_work);
	struct srdma_qp *qp = rqp->qp;
	bool fatal;
	int err = 0;

	spin_lock_bh(&rqp->lock);
	/*
	 * Resetting: the QP is still RTS, but what it owed goes with the
	 * reset, and a reply sent now could arm the pace timer again after
	 * the reset cancelled it.
	 */
	if (rqp->dead || rqp->resetting ||
	    !roce_resp_open(READ_ONCE(qp->state)))
		roce_rd_cancel(rqp);
	else
		err = roce_rd_run(rqp, ROCE_RD_WORK_PKTS);
	if (rqp->rd_pending) {
		/* paced: the pace timer queues us (roce_rd_resume) */
		if (err != -EAGAIN)
			roce_rd_requeue(rqp, err == -ENOMEM);
	} else {
		rqp->rd_queued = false;
		rqp->rd_backoff = 0;
	}
	fatal = rqp->fatal;
	rqp->fatal = false;
	spin_unlock_bh(&rqp->lock);
	if (fatal)
		srdma_qp_error(qp);
}

/*
 * The rate limiter's bucket holds tokens again (cc.c's pace timer) for
 * replies that waited on it: run rd_work on the CPU they are kept on.
 * Lock held.
 */
void roce_rd_resume(struct roce_qp *rqp)
{
	queue_delayed_work_on(rqp->rd_cpu, srdma_cpu_wq, &rqp->rd_work, 0);
}

void roce_resp_init(struct roce_qp *rqp)
{
	INIT_DELAYED_WORK(&rqp->rd_work, roce_rd_work);
}

/*
 * The expected PSN moves on to @epsn. PSNs are 24 bits and wrap: the laps
 * are counted so that a responder resource is known by its age too, not
 * only by a PSN range that the sequence comes round to again.
 */
static void roce_resp_advance(struct roce_qp *rqp, u32 epsn)
{
	if (epsn < rqp->epsn)
		rqp->epsn_laps++;
	rqp->epsn = epsn;
}

/* Whether @res answers a duplicate at @psn (behind epsn). */
static bool roce_res_holds(const struct roce_qp *rqp,
			   const struct roce_rdres *res, u32 psn)
{
	return psn_lap_holds(rqp->epsn_laps, rqp->epsn, res->lap,
			     res->first_psn, res->last_psn, psn);
}

/* A new resource for the request at epsn. */
static struct roce_rdres *roce_res_new(struct roce_qp *rqp)
{
	struct roce_rdres *res = &rqp->res[rqp->res_head];

	rqp->res_head = (rqp->res_head + 1) % rqp->nres;
	/* a replay still going this far back is abandoned */
	if (res->pending)
		rqp->rd_pending--;
	memset(res, 0, sizeof(*res));
	res->valid = true;
	res->lap = rqp->epsn_laps;
	return res;
}

/*
 * Each reply leaves from one context, in order: over loopback, packets
 * sent on two CPUs can overtake each other, and a requester takes READ
 * responses only in order. So the softirq sends a reply whole, and only
 * when no other is waiting; the rest goes from rd_work, kept on one CPU
 * while it has replies to send (srdma_cpu_wq: queue_delayed_work_on()
 * on an unbound queue would pick only a node). A reply the softirq
 * could not allocate a packet for goes to rd_work too, after a delay.
 * Lock held.
 */
static void roce_rd_kick(struct roce_qp *rqp)
{
	struct roce_rdres *res = roce_rd_next(rqp);
	int err;

	if (!res)
		return;
	if (!rqp->rd_queued && rqp->rd_pending == 1 &&
	    psn_diff(res->last_psn, res->next_psn) < ROCE_RD_SOFTIRQ_PKTS) {
		err = roce_rd_run(rqp, ROCE_RD_SOFTIRQ_PKTS);
		if (!err)
			return;
		rqp->rd_queued = true;
		rqp->rd_cpu = raw_smp_processor_id();
		rqp->rd_backoff = 0;
		/* paced: the rest from rd_work when the pace timer says */
		if (err != -EAGAIN)
			roce_rd_requeue(rqp, true);
		return;
	}
	if (!rqp->rd_queued) {
		rqp->rd_queued = true;
		rqp->rd_cpu = raw_smp_processor_id();
		rqp->rd_backoff = 0;
	}
	queue_delayed_work_on(rqp->rd_cpu, srdma_cpu_wq, &rqp->rd_work, 0);
}

/* Queue @res's reply (again) from @psn and start sending it. */
static void roce_res_queue(struct roce_qp *rqp, struct roce_rdres *res,
			   u32 psn)
{
	if (!res->pending) {
		res->pending = true;
		rqp->rd_pending++;
		res->next_psn = psn;
	} else if (psn_diff(psn, res->next_psn) < 0) {
		/* one reply per request: a replay moves it back, never doubles it */
		res->next_psn = psn;
	}
	roce_rd_kick(rqp);
}

/* A request we already executed: answer it again, never redo it. */
static void roce_resp_duplicate(struct roce_qp *rqp, struct roce_pkt *pkt)
{
	struct srdma_qp *qp = rqp->qp;
	u32 i;

	/* newest first: the one a retried request most likely names */
	for (i = 1; i <= rqp->nres; i++) {
		struct roce_rdres *res =
			&rqp->res[(rqp->res_head + rqp->nres - i) % rqp->nres];

		if (!res->valid || !roce_res_holds(rqp, res, pkt->psn))
			continue;
		if (res->atomic && (pkt->flags & ROCE_F_ATOMIC)) {
			roce_res_queue(rqp, res, res->first_psn);
			return;
		}
		if (!res->atomic && (pkt->flags & ROCE_F_READ)) {
			ibdev_dbg_ratelimited(&qp_dev(qp)->ibdev,
					      "QP %u: READ replay from %#x (%#x-%#x, %u bytes)\n",
					      qp->ibqp.qp_num, pkt->psn,
					      res->first_psn, res->last_psn,
					      res->length);
			roce_res_queue(rqp, res, pkt->psn);
			return;
		}
		break;		/* not the request it was: acknowledge */
	}
	ibdev_dbg_ratelimited(&qp_dev(qp)->ibdev,
			      "QP %u: duplicate opcode %#x PSN %#x, expecting %#x\n",
			      qp->ibqp.qp_num, pkt->opcode, pkt->psn,
			      rqp->epsn);
	/* SEND or WRITE seen before: acknowledge what we have */
	roce_send_ack(qp, ROCE_AETH_CREDIT_INVALID,
		      psn_add(rqp->epsn, ROCE_PSN_MASK));
}

enum roce_verdict {
	ROCE_OK,		/* processed; ACK if asked */
	ROCE_RNR,		/* no receive posted */
	ROCE_NAK_INV,		/* invalid request: QP to error */
	ROCE_NAK_ACC,		/* remote access error: QP to error */
	ROCE_NAK_OP,		/* remote operational error */
	ROCE_DONE,		/* answered already (READ/atomic) */
};

/* Complete the receive of the message as @wc says (opcode, length). */
static void roce_complete_recv(struct srdma_qp *qp, struct roce_pkt *pkt,
			       struct ib_wc *wc)
{
	struct roce_qp *rqp = to_rqp(qp);

	wc->port_num = 1;
	if (pkt->flags & ROCE_F_IMM) {
		struct roce_immdt *imm = pkt->ext +
			((pkt->flags & ROCE_F_RETH) ? sizeof(struct roce_reth) : 0);

		wc->ex.imm_data = imm->imm;
		wc->wc_flags |= IB_WC_WITH_IMM;
	}
	/* an overflowed CQ ends the QP, once rwqe_lock is let go */
	if (srdma_recv_complete(qp, &rqp->recv, wc,
				pkt->bth->flags & ROCE_BTH_SE))
		rqp->fatal = true;
}

/*
 * The QP went to error: a receive held for a message in progress is
 * flushed before the ring's own (srdma_flush). Any context but a hard
 * interrupt (srdma_qp_error() defers those): a kernel ULP's post_send
 * can get here with interrupts off, where spin_unlock_bh() would let
 * softirqs run inside the caller's irq-off section. So interrupts go
 * off for the lock; spinning on it is safe, as the responder holding it
 * then runs on another CPU. Only while the QP is in error: a reset since
 * has dealt with the receive (a deferred call comes late). The state,
 * set first, keeps the responder from taking another (roce_resp_rcv).
 */
void roce_resp_flush(struct roce_qp *rqp)
{
	unsigned long flags;

	spin_lock_irqsave(&rqp->rwqe_lock, flags);
	if (READ_ONCE(rqp->qp->state) == IB_QPS_ERR)
		srdma_recv_flush(rqp->qp, &rqp->recv);
	spin_unlock_irqrestore(&rqp->rwqe_lock, flags);
}

/*
 * An RC QP keeps one responder resource per READ or atomic a requester
 * within max_dest_rd_atomic can have outstanding (at least one): those
 * are all a duplicate can ask for again. Grown when modify_qp raises the
 * limit, never shrunk, so that an SQD modify forgets no reply still
 * owed; the old ones move over oldest first, for res_head to go on
 * reusing the oldest. Process context.
 */
int roce_resp_grow(struct roce_qp *rqp, u32 max_dest_rd_atomic)
{
	u32 n = max_t(u32, max_dest_rd_atomic, 1);
	struct roce_rdres *res, *old;
	u32 i;

	if (n <= rqp->nres)
		return 0;
	res = kcalloc(n, sizeof(*res), GFP_KERNEL);
	if (!res)
		return -ENOMEM;
	spin_lock_bh(&rqp->lock);
	old = rqp->res;
	for (i = 0; i < rqp->nres; i++)
		res[i] = old[(rqp->res_head + i) % rqp->nres];
	rqp->res_head = rqp->nres;
	rqp->res = res;
	rqp->nres = n;
	spin_unlock_bh(&rqp->lock);
	kfree(old);
	return 0;
}

/*
 * Destroy: no packet or work can reach the responder any more. A
 * receive held for a message in progress goes as on RESET.
 */
void roce_resp_destroy(struct roce_qp *rqp)
{
	unsigned long flags;

	spin_lock_irqsave(&rqp->rwqe_lock, flags);
	srdma_recv_drop(rqp->qp, &rqp->recv);
	spin_unlock_irqrestore(&rqp->rwqe_lock, flags);
}

static enum ib_wc_status roce_verdict_status(enum roce_verdict v)
{
	switch (v) {
	case ROCE_NAK_INV:
		return IB_WC_REM_INV_REQ_ERR;
	case ROCE_NAK_ACC:
		return IB_WC_REM_ACCESS_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

struct roce_recv_place {
	struct srdma_qp *qp;
	struct srdma_recv *r;
};

static int roce_recv_piece(void *arg, u32 off, const void *buf, u32 n)
{
	struct roce_recv_place *rp = arg;

	return srdma_recv_place(rp->qp, rp->r, buf, n);
}

/* srdma_recv_place() of @pkt's payload, as many pieces as it is in */
static enum ib_wc_status roce_recv_place(struct srdma_qp *qp,
					 struct srdma_recv *r,
					 const struct roce_pkt *pkt)
{
	int ret = roce_pkt_payload_each(pkt, roce_recv_piece,
					&(struct roce_recv_place){ qp, r });

	/* < 0: the skb ended early, which roce_parse() rules out */
	return ret < 0 ? IB_WC_LOC_LEN_ERR : (enum ib_wc_status)ret;
}

/* The last packet of a SEND is placed: invalidate if asked, complete. */
static enum roce_verdict roce_resp_send_last(struct roce_qp *rqp,
					     struct roce_pkt *pkt)
{
	struct srdma_qp *qp = rqp->qp;
	struct ib_wc wc = {
		.opcode = IB_WC_RECV,
		.byte_len = rqp->recv.len,
	};

	if (pkt->flags & ROCE_F_IETH) {
		struct roce_ieth *ieth = pkt->ext;

		if (srdma_recv_invalidate(qp, &wc, be32_to_cpu(ieth->rkey))) {
			srdma_recv_fail(qp, &rqp->recv, IB_WC_LOC_QP_OP_ERR);
			return ROCE_NAK_INV;
		}
	}
	roce_complete_recv(qp, pkt, &wc);
	return ROCE_OK;
}

static enum roce_verdict roce_resp_send(struct roce_qp *rqp,
					struct roce_pkt *pkt)
{
	struct srdma_qp *qp = rqp->qp;
	struct srdma_recv *r = &rqp->recv;
	enum ib_wc_status status;

	if (pkt->flags & ROCE_F_FIRST) {
		if (r->held) {
			/* UC: a message was abandoned; its receive is reused */
			srdma_recv_restart(r);
		} else if (!srdma_recv_take(qp, r)) {
			return ROCE_RNR;
		}
	}
	if (!r->held)
		return ROCE_NAK_INV;
	status = roce_recv_place(qp, r, pkt);
	if (status != IB_WC_SUCCESS) {
		srdma_recv_fail(qp, r, status);
		return status == IB_WC_LOC_LEN_ERR ? ROCE_NAK_INV : ROCE_NAK_OP;
	}
	if (pkt->flags & ROCE_F_LAST)
		return roce_resp_send_last(rqp, pkt);
	return ROCE_OK;
}

/*
 * A piece of a WRITE packet's payload at its place, the key checked for
 * it. Of a packet in several pieces, those before one that fails the
 * check have landed: all inside the key's range, and a failed WRITE
 * leaves its target's contents undefined (the QP goes to error).
 */
static int roce_write_piece(void *arg, u32 off, const void *buf, u32 n)
{
	struct roce_qp *rqp = arg;

	return srdma_rkey_check_copy(rqp->qp, rqp->wrkey, rqp->wva + off,
				     (void *)buf, n, IB_ACCESS_REMOTE_WRITE,
				     SRDMA_TO_MEM);
}

static enum roce_verdict roce_resp_write(struct roce_qp *rqp,
					 struct roce_pkt *pkt)
{
	struct srdma_qp *qp = rqp->qp;

	if (pkt->flags & ROCE_F_FIRST) {
		struct roce_reth *reth = pkt->ext;

		if (!(qp->attr.access & IB_ACCESS_REMOTE_WRITE))
			return ROCE_NAK_ACC;
		rqp->wva = be64_to_cpu(reth->va);
		rqp->wrkey = be32_to_cpu(reth->rkey);
		rqp->wlen = be32_to_cpu(reth->len);
		rqp->wresid = rqp->wlen;
		if (rqp->wlen > ROCE_MAX_MSG)
			return ROCE_NAK_INV;
	}
	if (pkt->paylen > rqp->wresid ||
	    ((pkt->flags & ROCE_F_LAST) && pkt->paylen != rqp->wresid))
		return ROCE_NAK_INV;
	/* WRITE with immediate needs its receive before any byte lands */
	if ((pkt->flags & ROCE_F_IMM) && !rqp->recv.held &&
	    !srdma_recv_take(qp, &rqp->recv))
		return ROCE_RNR;
	/*
	 * Checked per packet (an invalidate may land mid-message), under the
	 * hold of the memory's lock that copies: no byte lands after a rereg
	 * or invalidate returned.
	 */
	if (roce_pkt_payload_each(pkt, roce_write_piece, rqp))
		return ROCE_NAK_ACC;
	rqp->wva += pkt->paylen;
	rqp->wresid -= pkt->paylen;
	if ((pkt->flags & ROCE_F_LAST) && (pkt->flags & ROCE_F_IMM)) {
		struct ib_wc wc = {
			.opcode = IB_WC_RECV_RDMA_WITH_IMM,
			.byte_len = rqp->wlen,
		};

		roce_complete_recv(qp, pkt, &wc);
	}
	return ROCE_OK;
}

/*
 * A requester keeps at most max_dest_rd_atomic READs and atomics
 * outstanding and completes them in order, so when a new one arrives,
 * at most max_dest_rd_atomic - 1 older ones can still be waiting for
 * their replies: the newest. A pending reply older than those is a
 * replay of a duplicate whose request the requester has since completed
 * (the first reply got there after all); abandon it, oldest first. This
 * also bounds what a peer that ignores the limit can queue. Lock held.
 */
static void roce_rd_make_room(struct roce_qp *rqp)
{
	u32 max = clamp_t(u32, rqp->qp->attr.max_dest_rd_atomic, 1, rqp->nres);

	while (rqp->rd_pending >= max) {
		struct roce_rdres *oldest = NULL;
		u32 i;

		for (i = 0; i < rqp->nres; i++) {
			struct roce_rdres *res = &rqp->res[i];

			if (!res->pending)
				continue;
			if (!oldest ||
			    psn_diff(res->first_psn, oldest->first_psn) < 0)
				oldest = res;
		}
		if (!oldest)
			break;
		roce_res_sent(rqp, oldest);
	}
}

static enum roce_verdict roce_resp_read(struct roce_qp *rqp,
					struct roce_pkt *pkt)
{
	struct srdma_qp *qp = rqp->qp;
	struct roce_reth *reth = pkt->ext;
	struct roce_rdres *res;
	struct srdma_mem *mem;
	u32 len = be32_to_cpu(reth->len);
	u64 va = be64_to_cpu(reth->va);
	int err;

	if (!(qp->attr.access & IB_ACCESS_REMOTE_READ))
		return ROCE_NAK_ACC;
	if (len > ROCE_MAX_MSG)
		return ROCE_NAK_INV;
	if (len) {
		mem = srdma_rkey_check(qp, be32_to_cpu(reth->rkey), va, len,
				       IB_ACCESS_REMOTE_READ, &err);
		if (!mem)
			return ROCE_NAK_ACC;
		srdma_mem_put(mem);
	}
	roce_rd_make_room(rqp);
	res = roce_res_new(rqp);
	res->mtu = roce_mtu(qp);
	res->first_psn = pkt->psn;
	res->last_psn = psn_add(pkt->psn,
				max_t(u32, 1, DIV_ROUND_UP(len, res->mtu)) - 1);
	res->va = va;
	res->rkey = be32_to_cpu(reth->rkey);
	res->length = len;
	roce_resp_advance(rqp, psn_add(res->last_psn, 1));
	rqp->msn++;
	roce_res_queue(rqp, res, res->first_psn);
	return ROCE_DONE;
}

static enum roce_verdict roce_resp_atomic(struct roce_qp *rqp,
					  struct roce_pkt *pkt)
{
	struct srdma_qp *qp = rqp->qp;
	struct roce_atmeth *a = pkt->ext;
	u64 va = be64_to_cpu(a->va);
	struct srdma_atomic_args args;
	struct roce_rdres *res;
	struct srdma_mem *mem;
	u64 orig;
	int err;

	if (!(qp->attr.access & IB_ACCESS_REMOTE_ATOMIC))
		return ROCE_NAK_ACC;
	if (va & 7)
		return ROCE_NAK_INV;
	mem = srdma_rkey_check(qp, be32_to_cpu(a->rkey), va, 8,
			       IB_ACCESS_REMOTE_ATOMIC, &err);
	if (!mem)
		return ROCE_NAK_ACC;

	args.cmp_swap = (pkt->opcode & ~ROCE_OP_SERVICE_MASK) == ROCE_CMP_SWAP;
	args.swap_add = be64_to_cpu(a->swap_add);
	/* IB atomics are unmasked: the whole word compares and swaps */
	args.swap_mask = args.cmp_swap ? ~0ULL : 0;
	args.compare = be64_to_cpu(a->compare);
	args.compare_mask = ~0ULL;
	err = srdma_atomic_op(mem, va, &args, &orig);
	srdma_mem_put(mem);
	if (err)
		return ROCE_NAK_ACC;

	roce_rd_make_room(rqp);
	res = roce_res_new(rqp);
	res->atomic = true;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->orig = orig;
	res->syndrome = ROCE_AETH_CREDIT_INVALID;
	roce_resp_advance(rqp, psn_add(pkt->psn, 1));
	rqp->msn++;
	roce_res_queue(rqp, res, res->first_psn);
	return ROCE_DONE;
}

/* RDMA ATOMIC WRITE: eight bytes stored at once, acknowledged like WRITE. */
static enum roce_verdict roce_resp_atomic_write(struct roce_qp *rqp,
						struct roce_pkt *pkt)
{
	struct srdma_qp *qp = rqp->qp;
	struct roce_reth *reth = pkt->ext;
	u64 va = be64_to_cpu(reth->va);
	struct srdma_mem *mem;
	int err;

	if (!(qp->attr.access & IB_ACCESS_REMOTE_WRITE))
		return ROCE_NAK_ACC;
	/* a packet this short is whole in the skb's head (roce_parse()) */
	if ((va & 7) || pkt->paylen != 8 || be32_to_cpu(reth->len) != 8 ||
	    !pkt->payload)
		return ROCE_NAK_INV;
	mem = srdma_rkey_check(qp, be32_to_cpu(reth->rkey), va, 8,
			       IB_ACCESS_REMOTE_WRITE, &err);
	if (!mem)
		return ROCE_NAK_ACC;
	err = srdma_atomic_store(mem, va, pkt->payload);
	srdma_mem_put(mem);
	return err ? ROCE_NAK_ACC : ROCE_OK;
}

/* Is @flags a legal next packet given the message in progress? */
static bool roce_in_sequence(struct roce_qp *rqp, u32 flags)
{
	u16 kind = flags & (ROCE_F_SEND | ROCE_F_WRITE);

	if (rqp->in_msg)
		return kind == rqp->in_msg &&
		       (flags & (ROCE_F_MIDDLE | ROCE_F_LAST));
	return flags & ROCE_F_FIRST;
}

static enum roce_verdict roce_resp_dispatch(struct roce_qp *rqp,
					    struct roce_pkt *pkt)
{
	u32 mtu = roce_mtu(rqp->qp);
	enum roce_verdict v;

	if (!roce_in_sequence(rqp, pkt->flags))
		return ROCE_NAK_INV;
	/* every packet of a message but its last fills the path MTU */
	if (pkt->paylen > mtu ||
	    ((pkt->flags & ROCE_F_PAYLOAD) && !(pkt->flags & ROCE_F_LAST) &&
	     pkt->paylen != mtu))
		return ROCE_NAK_INV;
	if (pkt->flags & ROCE_F_READ)
		return roce_resp_read(rqp, pkt);
	if (pkt->flags & ROCE_F_ATOMIC)
		return roce_resp_atomic(rqp, pkt);
	if (pkt->flags & ROCE_F_SEND)
		v = roce_resp_send(rqp, pkt);
	else if (pkt->flags & ROCE_F_ATMWR)
		v = roce_resp_atomic_write(rqp, pkt);
	else
		v = roce_resp_write(rqp, pkt);
	if (v == ROCE_OK) {
		if (pkt->flags & ROCE_F_LAST) {
			rqp->in_msg = 0;
			rqp->msn++;
		} else {
			rqp->in_msg = pkt->flags & (ROCE_F_SEND | ROCE_F_WRITE);
		}
	}
	return v;
}

static void roce_resp_rc(struct roce_qp *rqp, struct roce_pkt *pkt)
{
	struct srdma_qp *qp = rqp->qp;
	s32 diff = psn_diff(pkt->psn, rqp->epsn);
	enum roce_verdict v;

	if (diff > 0) {
		/* a gap: keep what came early, ask once for the missing PSN */
		roce_reorder_hold(rqp, pkt);
		if (!rqp->nak_sent) {
			rqp->nak_sent = true;
			roce_count(pkt->dev, ROCE_CNT_SEQ_NAK_SENT);
			roce_send_nak(qp, ROCE_NAK_PSN_SEQ, rqp->epsn);
		}
		return;
	}
	if (diff < 0) {
		roce_count(pkt->dev, ROCE_CNT_RX_DUPLICATE);
		roce_resp_duplicate(rqp, pkt);
		return;
	}
	rqp->nak_sent = false;

	v = roce_resp_dispatch(rqp, pkt);
	switch (v) {
	case ROCE_OK:
		roce_resp_advance(rqp, psn_add(pkt->psn, 1));
		/*
		 * A packet that fills a gap before held ones is acknowledged
		 * with them (roce_resp_drain): an ACK for it alone would tell
		 * the requester that nothing was held.
		 */
		if (pkt->ackreq && !roce_reorder_ready(rqp))
			roce_ack_later(rqp, pkt->psn);
		break;
	case ROCE_DONE:
		break;
	case ROCE_RNR:
		roce_count(pkt->dev, ROCE_CNT_RNR_NAK_SENT);
		roce_send_ack(qp, ROCE_AETH_RNR_NAK |
			      (qp->attr.min_rnr_timer & 0x1f), pkt->psn);
		break;
	default:
		ibdev_dbg_ratelimited(&pkt->dev->ibdev,
				      "QP %u: NAK (verdict %d) opcode %#x PSN %#x\n",
				      qp->ibqp.qp_num, v, pkt->opcode,
				      pkt->psn);
		roce_send_nak(qp, v == ROCE_NAK_INV ? ROCE_NAK_INVALID_REQ :
			      v == ROCE_NAK_ACC ? ROCE_NAK_REMOTE_ACCESS :
			      ROCE_NAK_REMOTE_OP, pkt->psn);
		/* the receive of a message cut short completes in error */
		srdma_recv_fail(qp, &rqp->recv, roce_verdict_status(v));
		/* class B/C errors end the responder's QP too */
		rqp->fatal = true;
		break;
	}
}

/*
 * Process held packets that the last one put in sequence, then answer
 * once for all of them: a cumulative ACK, and a NAK if a gap remains
 * behind packets already here (the one missing is then surely late).
 */
static void roce_resp_drain(struct roce_qp *rqp, struct roce_pkt *from)
{
	struct srdma_qp *qp = rqp->qp;
	struct sk_buff *skb;
	bool any = false;

	while (!rqp->fatal && (skb = roce_reorder_next(rqp))) {
		struct roce_pkt pkt = {
			.skb = skb, .dev = from->dev, .qp = from->qp,
		};

		if (!roce_parse(&pkt)) {
			pkt.ackreq = false;
			roce_resp_rc(rqp, &pkt);
			any = true;
		}
		consume_skb(pkt.skb);
	}
	if (!any || rqp->fatal)
		return;
	roce_send_ack(qp, ROCE_AETH_CREDIT_INVALID,
		      psn_add(rqp->epsn, ROCE_PSN_MASK));
	if (!roce_reorder_empty(rqp) && !rqp->nak_sent) {
		rqp->nak_sent = true;
		roce_count(from->dev, ROCE_CNT_SEQ_NAK_SENT);
		roce_send_nak(qp, ROCE_NAK_PSN_SEQ, rqp->epsn);
	}
}

/* UC: no ACKs; a gap drops the message in progress (IBTA 9.8.3). */
static void roce_resp_uc(struct roce_qp *rqp, struct roce_pkt *pkt)
{
	if (pkt->psn != rqp->epsn && rqp->in_msg) {
		/* lost packets: abandon the message, keep its receive */
		rqp->in_msg = 0;
		rqp->rerr = true;
	}
	roce_resp_advance(rqp, psn_add(pkt->psn, 1));
	if (rqp->rerr) {
		if (!(pkt->flags & ROCE_F_FIRST))
			return;
		rqp->rerr = false;
	}
	if (roce_resp_dispatch(rqp, pkt) != ROCE_OK) {
		rqp->in_msg = 0;
		rqp->rerr = !(pkt->flags & ROCE_F_LAST);
	}
}

/* UD: one packet, one message; the receive gets a 40-byte GRH first. */
static void roce_resp_ud(struct roce_qp *rqp, struct roce_pkt *pkt)
{
	struct srdma_qp *qp = rqp->qp;
	struct srdma_recv *r = &rqp->recv;
	enum ib_wc_status status;
	u8 grh[40] = {};
	struct ib_wc wc = {
		.opcode = IB_WC_RECV,
		.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE,
		.src_qp = be32_to_cpu(pkt->deth->sqpn) & ROCE_QPN_MASK,
		.byte_len = pkt->paylen + sizeof(grh),
	};

	if (be32_to_cpu(pkt->deth->qkey) != qp->attr.qkey) {
		ibdev_dbg_ratelimited(&pkt->dev->ibdev,
				      "QP %u: Q_Key %#x, expected %#x\n",
				      qp->ibqp.qp_num,
				      be32_to_cpu(pkt->deth->qkey),
				      qp->attr.qkey);
		srdma_count(pkt->dev, SRDMA_CNT_RX_DROPPED);
		return;
	}
	if (!(pkt->flags & ROCE_F_FIRST) || !(pkt->flags & ROCE_F_LAST))
		return;
	if (!r->held && !srdma_recv_take(qp, r))
		return;		/* UD drops when nothing is posted */
	/*
	 * UD is unreliable: a message too long for the receive is dropped
	 * and counted, and the receive waits for the next one. Completing
	 * it in error would let any host use up a QP's receives: QP1's MAD
	 * layer never reposts a receive that completed in error.
	 */
	if (srdma_recv_room(r) < (u64)pkt->paylen + sizeof(grh)) {
		ibdev_dbg_ratelimited(&pkt->dev->ibdev,
				      "QP %u: %u-byte UD message, receive too short\n",
				      qp->ibqp.qp_num, pkt->paylen);
		srdma_count(pkt->dev, SRDMA_CNT_RX_DROPPED);
		return;
	}
	srdma_recv_restart(r);
	if (pkt->ipv6) {
		memcpy(grh, pkt->ip6, sizeof(grh));
		wc.network_hdr_type = RDMA_NETWORK_IPV6;
	} else {
		memcpy(grh + 20, pkt->ip4, sizeof(struct iphdr));
		wc.network_hdr_type = RDMA_NETWORK_IPV4;
	}
	status = srdma_recv_place(qp, r, grh, sizeof(grh));
	if (status == IB_WC_SUCCESS)
		status = roce_recv_place(qp, r, pkt);
	if (status != IB_WC_SUCCESS) {
		/* UD goes on: an overflow here is left to the CQ's event */
		wc.status = status;
		srdma_recv_complete(qp, r, &wc, false);
		return;
	}
	roce_complete_recv(qp, pkt, &wc);
}

void roce_resp_rcv(struct roce_pkt *pkt)
{
	struct srdma_qp *qp = pkt->qp;
	struct roce_qp *rqp = to_rqp(qp);
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool fatal;

	if (!roce_resp_open(state))
		return;
	spin_lock_bh(&rqp->lock);
	if (rqp->dead) {
		spin_unlock_bh(&rqp->lock);
		return;
	}
	/*
	 * The receive in use stays ours until this packet is placed. A QP
	 * error sets the state before it flushes that receive under
	 * rwqe_lock: looked at again here, no receive is taken after it.
	 */
	spin_lock(&rqp->rwqe_lock);
	if (!roce_resp_open(READ_ONCE(qp->state)))
		goto unlock;
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		roce_resp_rc(rqp, pkt);
		roce_resp_drain(rqp, pkt);
		break;
	case IB_QPT_UC:
		roce_resp_uc(rqp, pkt);
		break;
	default:
		roce_resp_ud(rqp, pkt);
		break;
	}
unlock:
	spin_unlock(&rqp->rwqe_lock);
	fatal = rqp->fatal;
	rqp->fatal = false;
	spin_unlock_bh(&rqp->lock);
	if (fatal)
		srdma_qp_error(qp);
}

/*
 * RTR: expect rq_psn next, reset before the state is stored
 * (roce_qp_state_changing); RESET: forget the last connection. Lock held.
 */
void roce_resp_reset(struct roce_qp *rqp)
{
	struct srdma_qp *qp = rqp->qp;
	u32 i;

	rqp->epsn = qp->attr.rq_psn;
	rqp->epsn_laps = 0;
	rqp->msn = 0;
	rqp->nak_sent = false;
	rqp->ack_due = false;
	rqp->in_msg = 0;
	spin_lock(&rqp->rwqe_lock);
	srdma_recv_drop(qp, &rqp->recv);
	spin_unlock(&rqp->rwqe_lock);
	rqp->rerr = false;
	roce_reorder_purge(rqp);
	for (i = 0; i < rqp->nres; i++)
		rqp->res[i].valid = false;
	roce_rd_cancel(rqp);
	rqp->res_head = 0;
}
