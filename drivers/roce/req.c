// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE requester: turns send WQEs into packets at the path MTU, assigns
 * PSNs, keeps at most ROCE_WINDOW packets unacknowledged, and runs the
 * retransmit and RNR timers. Runs from post_send (process context) and
 * from ACK reception (softirq), always under the QP's protocol lock.
 */
#include "roce.h"

/* Packets in flight before we wait for an ACK. */
#define ROCE_WINDOW		256
/*
 * A READ takes all its PSNs at once, and fewer than 2^23 may be out
 * (IBTA 9.7.1): with the window on top, 2^22 for one READ, i.e. READs
 * over 1 GiB fail at a 256-byte path MTU (2 GiB is the largest message).
 */
#define ROCE_RD_MAX_PKTS	BIT(22)
/* Ask for an ACK at least this often inside long messages. */
#define ROCE_ACKREQ_EVERY	32
/*
 * Packets one run of the requester sends with bottom halves off; more
 * go from tx_work. UC and UD have no window, and one doorbell can post
 * thousands of 2 GiB messages.
 */
#define ROCE_TX_BUDGET		128
/* an skb allocation failed: try again after this, not at once */
#define ROCE_NOMEM_RETRY_NS	(2 * NSEC_PER_MSEC)

u32 roce_wqe_npkts(struct srdma_qp *qp, const struct srdma_swqe *w)
{
	u32 mtu = roce_mtu(qp);

	switch (w->wr.opcode) {
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return 1;
	default:
		return max_t(u32, 1, DIV_ROUND_UP(w->length, mtu));
	}
}

static u8 roce_service(struct srdma_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UC:
		return ROCE_OP_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return ROCE_OP_UD;
	default:
		return ROCE_OP_RC;
	}
}

/* Which opcode carries bytes [sent, sent + paylen) of @w. */
static u8 roce_req_opcode(struct srdma_swqe *w, bool first, bool last)
{
	bool imm = w->wr.opcode == IB_WR_SEND_WITH_IMM ||
		   w->wr.opcode == IB_WR_RDMA_WRITE_WITH_IMM;

	switch (w->wr.opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		if (first && last)
			return imm ? ROCE_WRITE_ONLY_IMM : ROCE_WRITE_ONLY;
		if (first)
			return ROCE_WRITE_FIRST;
		if (last)
			return imm ? ROCE_WRITE_LAST_IMM : ROCE_WRITE_LAST;
		return ROCE_WRITE_MIDDLE;
	case IB_WR_RDMA_READ:
		return ROCE_READ_REQ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return ROCE_CMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return ROCE_FETCH_ADD;
	case SRDMA_WR_ATOMIC_WRITE:
		return ROCE_ATOMIC_WRITE;
	default:
		if (w->wr.opcode == IB_WR_SEND_WITH_INV) {
			if (last)
				return first ? ROCE_SEND_ONLY_INV :
					       ROCE_SEND_LAST_INV;
		}
		if (first && last)
			return imm ? ROCE_SEND_ONLY_IMM : ROCE_SEND_ONLY;
		if (first)
			return ROCE_SEND_FIRST;
		if (last)
			return imm ? ROCE_SEND_LAST_IMM : ROCE_SEND_LAST;
		return ROCE_SEND_MIDDLE;
	}
}

/* @flags: ROCE_FILL_SE and ROCE_FILL_ACKREQ set those BTH bits. */
void roce_fill_bth(struct roce_bth *bth, u8 opcode, u32 paylen, u32 dqpn,
		   u32 psn, unsigned int flags)
{
	bth->opcode = opcode;
	bth->flags = (flags & ROCE_FILL_SE ? ROCE_BTH_SE : 0) |
		     ((((-paylen) & 3) << ROCE_BTH_PAD_SHIFT) &
		      ROCE_BTH_PAD_MASK);
	bth->pkey = htons(ROCE_DEFAULT_PKEY);
	bth->qpn = htonl(dqpn & ROCE_QPN_MASK);
	bth->apsn = htonl((psn & ROCE_PSN_MASK) |
			  (flags & ROCE_FILL_ACKREQ ? ROCE_BTH_ACKREQ : 0));
}

/*
 * Payloads from this size on are sent from the user's pages rather than
 * copied: below it a copy costs less than the page references and the
 * fragment for the ICRC.
 */
#define ROCE_LEND_MIN 1024

/*
 * Whether packet @psn of @w may carry its payload by page reference
 * (roce_alloc_skb_lent()). Only on RC, and only the first time @psn is
 * sent: an ACK that covers it means that transmission has left the host,
 * so the network is done with the pages before the WQE completes and the
 * consumer has its buffer back (unreliable services complete as they
 * send; a resent packet may still be queued when the ACK of an earlier
 * copy comes). Only a user QP's memory is lent: kernel consumers post
 * kernel memory, not user MRs. Only through a device that takes page
 * fragments: the stack would copy the fragments anyway, into a new head;
 * and not to this host itself, through lo, where the stack copies them
 * before our receiver gets them (unless roce_lend_local is set).
 */
static bool roce_req_lends(struct roce_qp *rqp, const struct srdma_swqe *w,
			   u32 psn, u32 paylen)
{
	const struct ib_qp *ibqp = &rqp->qp->ibqp;

	return paylen >= ROCE_LEND_MIN && ibqp->qp_type == IB_QPT_RC &&
	       !rdma_is_kernel_res(&ibqp->res) && !w->inlined &&
	       psn_diff(psn, rqp->sent_psn) >= 0 && READ_ONCE(rqp->route_sg);
}

/*
 * The skb for one packet of @w: its payload lent where it may be, else
 * room left for a copy. An ERR_PTR: -ENOMEM, or a key check's error.
 */
static struct sk_buff *roce_req_alloc_skb(struct roce_qp *rqp,
					  const struct srdma_swqe *w,
					  const struct srdma_av *av, u32 psn,
					  u32 hdr_len, u32 off, u32 paylen)
{
	struct srdma_qp *qp = rqp->qp;
	struct sk_buff *skb;

	if (roce_req_lends(rqp, w, psn, paylen)) {
		skb = roce_alloc_skb_lent(qp, av, w, hdr_len, off, paylen);
		if (!IS_ERR(skb)) {
			roce_count(qp_dev(qp), ROCE_CNT_TX_PAGED);
			return skb;
		}
		if (PTR_ERR(skb) != -EOPNOTSUPP)
			return skb;
	}
	skb = roce_alloc_skb(qp, av, hdr_len, paylen);
	return skb ?: ERR_PTR(-ENOMEM);
}

/* What one packet of a send WQE carries (roce_req_plan()). */
struct roce_req_pkt {
	const struct srdma_av *av;	/* its path */
	u32 off;			/* its payload's first byte in the WQE */
	u32 paylen;
	u32 hdr_len;			/* BTH to the payload */
	u8 op;				/* opcode, without the service */
	unsigned int bth_flags;		/* ROCE_FILL_* */
};

/*
 * Lay out @w's packet @psn; ROCE_FILL_ACKREQ in @flags forces an ACK
 * request.
 */
static void roce_req_plan(struct roce_qp *rqp, struct srdma_swqe *w,
			  u32 psn, unsigned int flags, struct roce_req_pkt *p)
{
	struct srdma_qp *qp = rqp->qp;
	struct roce_swqe *rw = to_rswqe(w);
	u32 mtu = roce_mtu(qp);
	u32 idx = psn_diff(psn, rw->first_psn);
	bool ud = roce_service(qp) == ROCE_OP_UD;
	bool rd = roce_is_rd(w->wr.opcode);
	bool last = rd || psn == rw->last_psn;

	p->off = idx * mtu;
	p->paylen = rd ? 0 : min(mtu, w->length - min(p->off, w->length));
	p->op = roce_req_opcode(w, idx == 0, last);
	p->av = ud ? srdma_swqe_av(qp, w) : &qp->attr.av;
	p->hdr_len = roce_ops[p->op].hdr_len +
		     (ud ? sizeof(struct roce_deth) : 0);
	p->bth_flags = 0;
	/*
	 * Paced (cc.c), packets leave slowly: every one asks for an ACK, or
	 * ROCE_ACKREQ_EVERY of them could outlast the retransmit timeout.
	 * ack.c sends one ACK per receive batch, not one per request. A
	 * message's first packet never asks: the last packet before it did.
	 */
	if (roce_service(qp) == ROCE_OP_RC &&
	    ((flags & ROCE_FILL_ACKREQ) || last || rqp->cc.limited ||
	     (idx && !(idx % ROCE_ACKREQ_EVERY))))
		p->bth_flags |= ROCE_FILL_ACKREQ;
	if (last && (w->wr.send_flags & IB_SEND_SOLICITED))
		p->bth_flags |= ROCE_FILL_SE;
}

/* Write @p's headers, BTH on, at @buf; returns where its payload goes. */
static void *roce_req_headers(struct roce_qp *rqp, const struct srdma_swqe *w,
			      u32 psn, const struct roce_req_pkt *p, void *buf)
{
	struct srdma_qp *qp = rqp->qp;
	bool ud = roce_service(qp) == ROCE_OP_UD;
	bool rd = roce_is_rd(w->wr.opcode);
	void *h = buf + sizeof(struct roce_bth);

	roce_fill_bth(buf, p->op | roce_service(qp), p->paylen,
		      ud ? w->wr.wr.ud.remote_qpn : qp->attr.dest_qpn, psn,
		      p->bth_flags);
	if (ud) {
		struct roce_deth *deth = h;
		u32 qkey = w->wr.wr.ud.remote_qkey;

		/* a Q_Key with the high bit set means "use the QP's own" */
		if (qkey & 0x80000000)
			qkey = qp->attr.qkey;
		deth->qkey = htonl(qkey);
		deth->sqpn = htonl(qp->ibqp.qp_num & ROCE_QPN_MASK);
		h += sizeof(*deth);
	}
	if (roce_ops[p->op].flags & ROCE_F_RETH) {
		struct roce_reth *reth = h;

		reth->va = cpu_to_be64(w->wr.wr.rdma.remote_addr + p->off);
		reth->rkey = htonl(w->wr.wr.rdma.rkey);
		reth->len = htonl(rd ? w->length - p->off : w->length);
		h += sizeof(*reth);
	}
	if (roce_ops[p->op].flags & ROCE_F_ATMETH) {
		struct roce_atmeth *a = h;

		a->va = cpu_to_be64(w->wr.wr.atomic.remote_addr);
		a->rkey = htonl(w->wr.wr.atomic.rkey);
		a->swap_add = cpu_to_be64(w->wr.opcode ==
					  IB_WR_ATOMIC_CMP_AND_SWP ?
					  w->wr.wr.atomic.swap :
					  w->wr.wr.atomic.compare_add);
		a->compare = cpu_to_be64(w->wr.wr.atomic.compare_add);
		h += sizeof(*a);
	}
	if (roce_ops[p->op].flags & ROCE_F_IMM) {
		((struct roce_immdt *)h)->imm = w->wr.ex.imm_data;
		h += sizeof(struct roce_immdt);
	}
	if (roce_ops[p->op].flags & ROCE_F_IETH) {
		((struct roce_ieth *)h)->rkey = htonl(w->wr.ex.invalidate_rkey);
		h += sizeof(struct roce_ieth);
	}
	return h;
}

/*
 * Build and send @w's packet @psn (its next one, or an earlier one sent
 * again); ROCE_FILL_ACKREQ in @flags forces an ACK request. Returns 0,
 * -ENOMEM when no packet could be allocated (nothing was sent; a later
 * try may succeed), or -EIO when @w's SGEs do not give the payload (too
 * short, or a key check fails), with *@status the WC error that ends @w.
 */
static int roce_send_psn(struct roce_qp *rqp, struct srdma_swqe *w, u32 psn,
			 unsigned int flags, enum ib_wc_status *status)
{
	struct srdma_qp *qp = rqp->qp;
	struct roce_req_pkt p;
	struct sk_buff *skb;
	void *h;

	/* the netdev's MTU shrank since roce_req_run() let it start */
	if (roce_service(qp) == ROCE_OP_UD && w->length > roce_mtu(qp)) {
		*status = IB_WC_LOC_LEN_ERR;
		return -EIO;
	}
	if (psn_diff(psn, rqp->sent_psn) < 0)
		roce_txq_resend(rqp);
	roce_req_plan(rqp, w, psn, flags, &p);
	skb = roce_req_alloc_skb(rqp, w, p.av, psn, p.hdr_len, p.off,
				 p.paylen);
	if (IS_ERR(skb)) {
		if (PTR_ERR(skb) == -ENOMEM)
			return -ENOMEM;
		*status = srdma_sge_err_status(PTR_ERR(skb));
		return -EIO;
	}
	h = roce_req_headers(rqp, w, psn, &p, skb->data);
	if (p.paylen && !skb_is_nonlinear(skb)) {
		int err = srdma_swqe_read(qp, w, p.off, h, p.paylen);

		if (err) {
			kfree_skb(skb);
			*status = srdma_sge_err_status(err);
			return -EIO;
		}
	}

	roce_xmit(qp, p.av, skb);	/* a lost packet is retransmitted */
	roce_cc_sent(rqp, p.hdr_len + p.paylen);
	return 0;
}

/* The bytes of @w's packet @psn, BTH to ICRC, were it sent in a train. */
static u32 roce_req_pkt_len(struct roce_qp *rqp, struct srdma_swqe *w,
			    u32 psn, struct roce_req_pkt *p)
{
	roce_req_plan(rqp, w, psn, 0, p);
	return p->hdr_len + ALIGN(p->paylen, 4) + ROCE_ICRC_BYTES;
}

/*
 * Send @w's packets from next_psn, at most @max of them, as one GSO train
 * (train.c): each the size of the first but the message's last, which may
 * be shorter; their payloads lent where the first one's may be
 * (roce_req_lends()), else copied. Only where the route takes trains
 * whole, and only at full speed (a paced QP sends packet by packet).
 * Returns how many were sent: 0 when a train does not apply or could not
 * be built, and the caller sends one packet as usual, which meets any
 * error the payload holds. Lock held.
 */
static u32 roce_send_train(struct roce_qp *rqp, struct srdma_swqe *w,
			   u32 max)
{
	struct srdma_qp *qp = rqp->qp;
	struct roce_swqe *rw = to_rswqe(w);
	u32 train_bytes = READ_ONCE(rqp->route_train_bytes);
	u32 psn = rqp->next_psn;
	u32 bytes = 0, len, next;
	struct roce_train t;
	struct roce_req_pkt p;
	bool lent;
	int err;

	if (!train_bytes || rqp->cc.limited ||
	    roce_service(qp) == ROCE_OP_UD || roce_is_rd(w->wr.opcode))
		return 0;
	max = min3(max, (u32)ROCE_TRAIN_MAX,
		   (u32)psn_diff(rw->last_psn, psn) + 1);
	if (max < 2)
		return 0;
	/* a WRITE's first packet, longer by its RETH, goes alone */
	next = roce_req_pkt_len(rqp, w, psn_add(psn, 1), &p);
	len = roce_req_pkt_len(rqp, w, psn, &p);
	if (next > len || (next < len && psn_add(psn, 1) != rw->last_psn))
		return 0;
	lent = roce_req_lends(rqp, w, psn, p.paylen);
	if (roce_train_start(qp, &t, lent, train_bytes))
		return 0;
	while (t.n < max) {
		void *h;

		len = roce_req_pkt_len(rqp, w, psn, &p);
		/* a shorter packet ends a train: only the message's last */
		if (t.n && len < t.pkt_len && psn != rw->last_psn)
			break;
		if (lent) {
			if (!roce_req_lends(rqp, w, psn, p.paylen))
				break;
			h = roce_train_add_lent(&t, qp, w, p.hdr_len, p.off,
						p.paylen, &err);
			if (err)
				goto abort;
			if (!h && !t.n) {
				/* its pages cannot be lent: copy them all */
				lent = false;
				t.lent = false;
				continue;
			}
			if (!h)
				break;
			roce_req_headers(rqp, w, psn, &p, h);
		} else {
			h = roce_train_add(&t, len);
			if (!h)
				break;
			h = roce_req_headers(rqp, w, psn, &p, h);
			if (srdma_swqe_read(qp, w, p.off, h, p.paylen))
				goto abort;
			memset(h + p.paylen, 0, ALIGN(p.paylen, 4) - p.paylen);
		}
		bytes += p.hdr_len + p.paylen;
		psn = psn_add(psn, 1);
	}
	if (t.n < 2 || roce_train_finish(qp, &t))
		goto abort;
	if (lent)
		srdma_tp_count_add(qp_dev(qp), ROCE_CNT_TX_PAGED, t.n);
	if (psn_diff(rqp->next_psn, rqp->sent_psn) < 0)
		roce_txq_resend(rqp);
	roce_train_xmit(qp, p.av, &t);	/* lost packets are retransmitted */
	roce_cc_sent(rqp, bytes);
	return psn_diff(psn, rqp->next_psn);
abort:
	roce_train_abort(&t);
	return 0;
}

/*
 * Send the next packets of @w, at most @max (a train, or one), and move
 * on. Returns how many were sent, or an error of roce_send_psn().
 */
static int roce_send_next(struct roce_qp *rqp, struct srdma_swqe *w, u32 max,
			  enum ib_wc_status *status)
{
	struct roce_swqe *rw = to_rswqe(w);
	u32 psn = rqp->next_psn;
	u32 n = roce_send_train(rqp, w, max);
	int err;

	if (!n) {
		err = roce_send_psn(rqp, w, psn, 0, status);
		if (err)
			return err;
		n = 1;
	}
	if (roce_is_rd(w->wr.opcode)) {
		rqp->next_psn = psn_add(rw->last_psn, 1);
		w->sent = w->length;
	} else {
		rqp->next_psn = psn_add(psn, n);
		w->sent = min(w->length, (psn_diff(psn, rw->first_psn) + n) *
					 roce_mtu(rqp->qp));
	}
	if (psn_diff(rqp->next_psn, rqp->sent_psn) > 0)
		rqp->sent_psn = rqp->next_psn;
	return n;
}

static unsigned long roce_timeout_jiffies(u8 timeout)
{
	/* 4.096 us * 2^timeout (IBTA 9.7.6.1.3), at least two ticks */
	u64 us = (4096ULL << min_t(u8, timeout, 31)) / 1000;

	return max_t(unsigned long, usecs_to_jiffies(us), 2);
}

static void roce_arm_retrans(struct roce_qp *rqp)
{
	struct srdma_qp *qp = rqp->qp;

	if (qp->ibqp.qp_type != IB_QPT_RC || !qp->attr.timeout)
		return;
	if (rqp->una_psn == rqp->next_psn)
		return;
	if (!timer_pending(&rqp->retrans_timer))
		mod_timer(&rqp->retrans_timer,
			  jiffies + roce_timeout_jiffies(qp->attr.timeout));
}

/*
 * No packet could be allocated, nothing was sent: run again shortly. An
 * ACK need not come to bring the requester back, since the packets in
 * flight may none of them ask for one; nor the retransmit timer, which
 * would spend one of the QP's retries on our own shortage. Lock held.
 */
static void roce_req_nomem(struct roce_qp *rqp)
{
	roce_req_wake_in(rqp, ROCE_NOMEM_RETRY_NS);
}

/* Progress was made: restart the retransmit timer (or stop it). */
void roce_req_rearm(struct roce_qp *rqp)
{
	struct srdma_qp *qp = rqp->qp;

	if (rqp->una_psn == rqp->next_psn) {
		del_timer(&rqp->retrans_timer);
		return;
	}
	if (!qp->attr.timeout || rqp->rnr_wait)
		return;
	mod_timer(&rqp->retrans_timer,
		  jiffies + roce_timeout_jiffies(qp->attr.timeout));
}

/*
 * Move past what the core completed on its own (srdma_sq_catch_up()), the
 * two positions against one reading of sq_cons, so that req_ack never
 * passes req_cur. Returns the sq_fetch it went by. Lock held.
 */
u32 roce_req_catch_up(struct roce_qp *rqp)
{
	/* pairs with srdma_sq_run(): the WQE copies are complete */
	u32 fetch = smp_load_acquire(&rqp->qp->sq_fetch);
	u32 oldest = srdma_sq_oldest(rqp->qp, fetch);

	rqp->req_cur = srdma_sq_catch_up(rqp->req_cur, oldest, fetch);
	rqp->req_ack = srdma_sq_catch_up(rqp->req_ack, oldest, fetch);
	return fetch;
}

/*
 * Send what the window, the read/atomic limit and the budget allow. In
 * SQD a WQE already started is finished (and retransmitted) but no new
 * one starts (IBTA 10.3.1.3). Lock held.
 */
void roce_req_run(struct roce_qp *rqp)
{
	struct srdma_qp *qp = rqp->qp;
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	bool ud = roce_service(qp) == ROCE_OP_UD;
	u32 max_rd = max_t(u32, qp->attr.max_rd_atomic, 1);
	u32 budget = ROCE_TX_BUDGET;

	if (rqp->dead || rqp->resetting || rqp->rnr_wait ||
	    (state != IB_QPS_RTS && state != IB_QPS_SQD))
		return;

	roce_req_catch_up(rqp);
	for (;;) {
		/* pairs with srdma_sq_run(): the WQE copies are complete */
		u32 fetch = smp_load_acquire(&qp->sq_fetch);
		struct srdma_swqe *w;
		struct roce_swqe *rw;
		enum ib_wc_status status;
		u32 max;
		int sent;

		if (rqp->req_cur == fetch)
			break;
		/*
		 * Never more than a ring behind the fetch position: anything
		 * else is a ring emptied under us, whose stale slots we would
		 * walk for up to 2^32 iterations.
		 */
		if (fetch - rqp->req_cur > srdma_queue_slots(&qp->sq.q))
			break;
		w = srdma_sq_pending(qp, rqp->req_cur, fetch);
		if (!w) {
			/* local WQEs, finished: a ring of them is a long walk */
			if (!budget--) {
				queue_work(srdma_unbound_wq, &rqp->tx_work);
				break;
			}
			rqp->req_cur++;
			continue;
		}
		rw = to_rswqe(w);
		/* unsigned: a READ's PSNs may put next far past una */
		if (rc && ((rqp->next_psn - rqp->una_psn) & ROCE_PSN_MASK) >=
			  ROCE_WINDOW)
			break;
		if (!rw->started) {
			if (state == IB_QPS_SQD)
				break;
			if (roce_is_rd(w->wr.opcode) &&
			    roce_wqe_npkts(qp, w) > ROCE_RD_MAX_PKTS) {
				rqp->req_cur++;
				srdma_sq_wqe_done(qp, w, IB_WC_LOC_LEN_ERR);
				return;
			}
			/* a UD message is one packet (IBTA 9.8.2 C9-60) */
			if (ud && w->length > roce_mtu(qp)) {
				rqp->req_cur++;
				rqp->req_ack = rqp->req_cur;
				srdma_sq_wqe_done(qp, w, IB_WC_LOC_LEN_ERR);
				return;
			}
			if (roce_is_rd(w->wr.opcode) && rqp->rd_inflight >= max_rd)
				break;
			if ((w->wr.send_flags & IB_SEND_FENCE) && rqp->rd_inflight)
				break;
			if (roce_is_rd(w->wr.opcode))
				rqp->rd_inflight++;
			rw->started = true;
			rw->first_psn = rqp->next_psn;
			rw->last_psn = psn_add(rw->first_psn,
					       roce_wqe_npkts(qp, w) - 1);
		}
		/* congestion control: the pace timer runs us again */
		if (!roce_cc_tx_ok(rqp))
			break;
		if (!budget) {
			queue_work(srdma_unbound_wq, &rqp->tx_work);
			break;
		}
		max = rc ? ROCE_WINDOW -
			   ((rqp->next_psn - rqp->una_psn) & ROCE_PSN_MASK) :
			   U32_MAX;
		sent = roce_send_next(rqp, w, min(budget, max), &status);
		if (sent == -ENOMEM) {
			roce_req_nomem(rqp);
			break;
		}
		if (sent < 0) {
			rqp->req_cur++;
			srdma_sq_wqe_done(qp, w, status);
			return;
		}
		budget -= sent;
		if (psn_diff(rqp->next_psn, rw->last_psn) > 0) {
			rqp->req_cur++;
			if (!rc) {
				/* UD and UC: done once on the wire */
				rqp->req_ack = rqp->req_cur;
				srdma_sq_wqe_done(qp, w, IB_WC_SUCCESS);
			}
		}
	}
	if (rc)
		roce_arm_retrans(rqp);
}

/*
 * An ACK opened the window: send what it allows from srdma_unbound_wq's
 * high-priority worker rather than from this softirq. A window's worth
 * of packets overruns the softirq time budget, which hands every later
 * softirq to ksoftirqd, and ksoftirqd gets only a fair share of a CPU
 * that the application is busy-polling its CQ on (perftest does): the
 * requester then idles for whole scheduler slices. Lock held.
 */
void roce_req_defer(struct roce_qp *rqp)
{
	/* the caller's roce_req_rearm() already set the retransmit timer */
	if (rqp->dead || rqp->req_cur == READ_ONCE(rqp->qp->sq_fetch))
		return;
	/* paced and waiting for tokens: the pace timer queues it */
	if (rqp->cc.limited && hrtimer_is_queued(&rqp->cc.pace_timer))
		return;
	queue_work(srdma_unbound_wq, &rqp->tx_work);
}

/*
 * New WQEs. A kernel ULP may post with interrupts off, or from a hard
 * interrupt: sending needs bottom halves (ip_local_out), and
 * spin_unlock_bh() would let softirqs run inside the caller's irq-off
 * section. Send from tx_work then.
 */
void roce_sq_kick(struct srdma_qp *qp)
{
	struct roce_qp *rqp = to_rqp(qp);

	if (irqs_disabled()) {
		queue_work(srdma_unbound_wq, &rqp->tx_work);
		return;
	}
	spin_lock_bh(&rqp->lock);
	roce_req_run(rqp);
	spin_unlock_bh(&rqp->lock);
	roce_req_sqd_check(rqp);
}

static void roce_req_work(struct work_struct *work)
{
	roce_sq_kick(container_of(work, struct roce_qp, tx_work)->qp);
}

/*
 * Nothing of the send queue is on the wire or waiting for its ACK: WQEs
 * start and complete in order, so the oldest one not completed tells.
 * Lock held.
 */
static bool roce_req_idle(struct roce_qp *rqp)
{
	struct srdma_qp *qp = rqp->qp;
	struct srdma_swqe *w;
	u32 fetch, oldest;

	fetch = smp_load_acquire(&qp->sq_fetch);	/* pairs with srdma_sq_run() */
	oldest = srdma_sq_oldest(qp, fetch);
	if (oldest == fetch)
		return true;
	/* a finished one waits for the core to complete it: not yet idle */
	w = srdma_sq_pending(qp, oldest, fetch);
	return w && !to_rswqe(w)->started;
}

/*
 * In SQD, raise IB_EVENT_SQ_DRAINED (through the core, which delivers it
 * from the QP's event work) once what was started before has been
 * acknowledged. Lock not held.
 */
void roce_req_sqd_check(struct roce_qp *rqp)
{
	struct srdma_qp *qp = rqp->qp;
	bool idle;

	if (READ_ONCE(qp->state) != IB_QPS_SQD ||
	    !READ_ONCE(qp->attr.sq_draining))
		return;
	spin_lock_bh(&rqp->lock);
	idle = !rqp->dead && roce_req_idle(rqp);
	spin_unlock_bh(&rqp->lock);
	if (idle)
		srdma_qp_sq_drained(qp);
}

/*
 * Go back to the oldest unacknowledged PSN and send again from there;
 * packetisation is deterministic, so every WQE keeps its PSNs.
 */
void roce_req_rewind(struct roce_qp *rqp)
{
	struct srdma_qp *qp = rqp->qp;
	u32 fetch, i;

	fetch = roce_req_catch_up(rqp);
	for (i = rqp->req_ack; i != rqp->req_cur; i++) {
		struct srdma_swqe *w = srdma_sq_pending(qp, i, fetch);

		if (w && psn_diff(to_rswqe(w)->last_psn, rqp->una_psn) >= 0)
			break;
	}
	roce_obs_rewind(rqp);
	rqp->req_cur = i;
	rqp->next_psn = rqp->una_psn;
	rqp->recovering = false;
	roce_count(qp_dev(qp), ROCE_CNT_RETRANSMITS);
}

/* The SEND or WRITE WQE in flight that carries @psn, or NULL. */
static struct srdma_swqe *roce_wqe_of_psn(struct roce_qp *rqp, u32 psn)
{
	struct srdma_qp *qp = rqp->qp;
	u32 fetch, i;

	fetch = roce_req_catch_up(rqp);
	for (i = rqp->req_ack; i != rqp->req_cur + 1; i++) {
		struct srdma_swqe *w;
		struct roce_swqe *rw;

		if (i == fetch)
			return NULL;	/* a slot not fetched is stale */
		w = srdma_sq_pending(qp, i, fetch);
		if (!w)
			continue;
		rw = to_rswqe(w);
		if (!rw->started)
			return NULL;
		if (psn_diff(psn, rw->first_psn) < 0)
			return NULL;
		if (psn_diff(psn, rw->last_psn) <= 0)
			return roce_is_rd(w->wr.opcode) ? NULL : w;
	}
	return NULL;
}

/*
 * Resend packet @psn alone, asking for an ACK, and note it as the probe
 * roce_req_recover_ack() judges the next ACK against. False where that
 * cannot work (READs and atomics are answered, not held; no packet could
 * be built): the caller goes back instead. Lock held.
 */
static bool roce_req_probe(struct roce_qp *rqp, u32 psn, bool on_timeout)
{
	enum ib_wc_status status;
	struct srdma_swqe *w;

	w = roce_wqe_of_psn(rqp, psn);
	if (!w || roce_send_psn(rqp, w, psn, ROCE_FILL_ACKREQ, &status))
		return false;
	if (!rqp->recovering) {
		rqp->recover_psn = rqp->next_psn;
		rqp->probe_moved = false;
	}
	rqp->recovering = true;
	rqp->probe_psn = psn;
	rqp->probe_on_timeout = on_timeout;
	roce_count(qp_dev(rqp->qp), ROCE_CNT_RETRANSMIT_PROBES);
	roce_obs_probe(rqp, psn);
	return true;
}

/*
 * The responder NAKed @psn (una_psn is already there). Resend that packet
 * alone: a responder that held what followed (ours does, reorder.c) then
 * acknowledges past all of it. Lock held.
 */
void roce_req_recover(struct roce_qp *rqp, u32 psn)
{
	if (rqp->recovering && rqp->probe_psn == psn)
		return;		/* the same hole again: already resent */
	if (rqp->peer_drops || !roce_req_probe(rqp, psn, false))
		roce_req_rewind(rqp);
}

/*
 * An ACK arrived while recovering. Past everything that was in flight at
 * the NAK: done, the one resend was all it took. Past the resent packet
 * but short of that: another hole. Without SACK each further probe would
 * cost a round trip, so go back from it: one pass refills every hole left
 * and the responder drops what it already holds. Exactly the resent
 * packet and no further: the responder kept nothing after the gap (IBTA's
 * rule, rdma_rxe's way), or the next packet was lost as well; go back. A
 * peer that does so three times in a row is taken to hold nothing, and
 * gets plain go-back-N from then on (probing it costs a round trip per
 * loss).
 *
 * After a timeout the first ACK short of the mark may not be the probe's
 * answer at all: ACKs that were late (their lateness is what timed out)
 * can still arrive after the probe left. It gets the benefit of the
 * doubt once: probe again from where it leaves off, and judge the next.
 * Lock held.
 */
void roce_req_recover_ack(struct roce_qp *rqp)
{
	bool exact;

	if (!rqp->recovering || psn_diff(rqp->una_psn, rqp->probe_psn) <= 0)
		return;
	exact = rqp->una_psn == psn_add(rqp->probe_psn, 1);
	if (psn_diff(rqp->una_psn, rqp->recover_psn) >= 0) {
		rqp->recovering = false;
		if (!exact)
			rqp->exact_acks = 0;
		return;
	}
	if (rqp->probe_on_timeout && !rqp->probe_moved) {
		rqp->probe_moved = true;
		if (roce_req_probe(rqp, rqp->una_psn, true))
			return;
	}
	if (!exact)
		rqp->exact_acks = 0;
	/* after a timeout the rest was lost: says nothing of the peer */
	else if (!rqp->probe_on_timeout && ++rqp->exact_acks >= 3)
		rqp->peer_drops = true;
	roce_req_rewind(rqp);
}

/* Give up on the oldest WQE in flight with @status. */
static void roce_req_fail(struct roce_qp *rqp, enum ib_wc_status status)
{
	struct srdma_swqe *w = roce_oldest(rqp);

	if (w)
		roce_wqe_finish(rqp, w, status);
}

/*
 * Nothing was acknowledged for a whole timeout. With no NAK heard, the
 * packets most often arrived and what was lost is their ACK, or the
 * time went to a stalled host (a paced requester's ACKs are sparse):
 * going back N would send the whole window again for nothing. Resend the
 * oldest alone, as TCP's retransmission timeout does; the responder's
 * ACK for it covers all it holds, and roce_req_recover_ack() goes back
 * only from where that stops. A timeout's probe that timed out in turn
 * is resent alone again, as TCP's next timeout does: ACKs still lost or
 * late say nothing of the packets, and retry_cnt runs down all the same.
 * A NAK's probe lost, a peer that holds nothing, or a READ or atomic at
 * the head: go back N at once. Lock held.
 */
static void roce_req_timeout_resend(struct roce_qp *rqp)
{
	if ((!rqp->recovering || rqp->probe_on_timeout) && !rqp->peer_drops &&
	    roce_req_probe(rqp, rqp->una_psn, true)) {
		roce_arm_retrans(rqp);
		return;
	}
	roce_req_rewind(rqp);
	roce_req_run(rqp);
}

static void roce_retrans_timeout(struct timer_list *t)
{
	struct roce_qp *rqp = from_timer(rqp, t, retrans_timer);
	struct srdma_qp *qp = rqp->qp;
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct srdma_swqe *oldest;

	spin_lock_bh(&rqp->lock);
	/*
	 * An RNR NAK or a reset may have come while this callback waited for
	 * the lock (their del_timer() misses a running callback): the RNR
	 * timer or the reset owns the requester now.
	 */
	if (rqp->dead || rqp->resetting || rqp->rnr_wait ||
	    (state != IB_QPS_RTS && state != IB_QPS_SQD) ||
	    rqp->una_psn == rqp->next_psn)
		goto out;
	oldest = srdma_sq_pending(qp, rqp->req_ack, roce_req_catch_up(rqp));
	if (oldest)
		ibdev_dbg_ratelimited(&qp_dev(qp)->ibdev,
				      "QP %u: timeout una %#x next %#x retries left %u, oldest opcode %u len %u done %u psn %#x-%#x\n",
				      qp->ibqp.qp_num, rqp->una_psn,
				      rqp->next_psn, rqp->retry_left,
				      oldest->wr.opcode, oldest->length,
				      oldest->done,
				      to_rswqe(oldest)->first_psn,
				      to_rswqe(oldest)->last_psn);
	roce_obs_timeout(rqp);
	if (!rqp->retry_left) {
		roce_count(qp_dev(qp), ROCE_CNT_RETRY_EXCEEDED);
		roce_req_fail(rqp, IB_WC_RETRY_EXC_ERR);
		goto out;
	}
	rqp->retry_left--;
	roce_req_timeout_resend(rqp);
out:
	spin_unlock_bh(&rqp->lock);
	roce_req_sqd_check(rqp);
}

static void roce_rnr_timeout(struct timer_list *t)
{
	struct roce_qp *rqp = from_timer(rqp, t, rnr_timer);

	spin_lock_bh(&rqp->lock);
	rqp->rnr_wait = false;
	if (!rqp->dead) {
		roce_req_rewind(rqp);
		roce_req_run(rqp);
	}
	spin_unlock_bh(&rqp->lock);
	roce_req_sqd_check(rqp);
}

/* Back off after an RNR NAK, or fail once rnr_retry is used up. */
void roce_req_rnr(struct roce_qp *rqp, u8 code)
{
	/* IBTA 9.7.5.2.8, table 45: RNR timer codes in microseconds */
	static const u32 rnr_us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480,
		640, 960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360,
		20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760,
		327680, 491520,
	};
	struct srdma_qp *qp = rqp->qp;

	if (qp->attr.rnr_retry != 7) {
		if (!rqp->rnr_left) {
			roce_obs_rnr(rqp, 0, true);
			roce_req_fail(rqp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		rqp->rnr_left--;
	}
	rqp->rnr_wait = true;
	del_timer(&rqp->retrans_timer);
	mod_timer(&rqp->rnr_timer,
		  jiffies + max_t(unsigned long,
				  usecs_to_jiffies(rnr_us[code & 0x1f]), 1));
	roce_obs_rnr(rqp, rnr_us[code & 0x1f], false);
}

void roce_req_timers_init(struct roce_qp *rqp)
{
	timer_setup(&rqp->retrans_timer, roce_retrans_timeout, 0);
	timer_setup(&rqp->rnr_timer, roce_rnr_timeout, 0);
	INIT_WORK(&rqp->tx_work, roce_req_work);
}

/*
 * To RTS from INIT or RTR: start sending from sq_psn. Before the state is
 * stored (roce_qp_state_changing). Lock held.
 */
void roce_req_reset(struct roce_qp *rqp)
{
	struct srdma_qp *qp = rqp->qp;

	rqp->next_psn = qp->attr.sq_psn;
	rqp->sent_psn = qp->attr.sq_psn;
	rqp->una_psn = qp->attr.sq_psn;
	rqp->retry_left = qp->attr.retry_cnt;
	rqp->rnr_left = qp->attr.rnr_retry;
	rqp->rnr_wait = false;
	rqp->rd_inflight = 0;
	rqp->recovering = false;
	rqp->exact_acks = 0;
	rqp->peer_drops = false;
	roce_cc_reset(rqp);
}
