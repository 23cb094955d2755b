// SPDX-License-Identifier: GPL-2.0
/*
 * iWARP receive: the TCP byte stream is cut into MPA FPDUs and each
 * DDP segment is placed straight from the socket buffers into its
 * destination - registered memory for tagged segments (WRITE, READ
 * response), a posted receive for untagged SENDs. Runs from the
 * socket's data_ready callback (softirq, or process context with the
 * socket owned), always under the socket lock, so rx state needs no
 * lock of its own.
 *
 * What an RDMAP opcode is - its segment kind, header length, DDP queue
 * and the steps that check, place and complete it - is one row of
 * iwarp_rx_ops[]; the byte-stream state machine at the bottom only walks
 * FPDUs and calls those steps.
 *
 * Any protocol or access violation ends the stream: rx stops placing,
 * a Terminate is queued and the QP goes to the error state (the path a
 * Terminate takes from here is described in terminate.c).
 *
 * Remote access rights are the STag's alone (RNIC verbs): rdma_cm leaves
 * an active-side iWARP QP with no access flags, so they are not checked.
 */
#include <linux/crc32c.h>
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "iwarp.h"
#include "trace.h"

void iwarp_rx_release(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;

	if (rx->mem) {
		srdma_mem_put(rx->mem);
		rx->mem = NULL;
	}
}

void iwarp_rx_reset(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;
	int i;

	iwarp_rx_release(iqp);
	memset(rx, 0, sizeof(*rx));
	rx->state = IWARP_RX_HDR;
	for (i = 0; i < DDP_QN_COUNT; i++)
		rx->msn[i] = 1;
}

/*
 * The receive rx holds for a SEND in progress (rx.recv) is flushed by the
 * core's flush too (iwarp_rx_recv_flush()), before the ring's receives:
 * the consumer's drain must find it completed, not have it complete
 * later from the close work. rx may be in the middle of
 * an skb then, so it takes, fills and completes the receive under
 * recv_lock, and only while the QP is not in ERR.
 */
static bool iwarp_rx_open(struct iwarp_qp *iqp)
{
	lockdep_assert_held(&iqp->recv_lock);
	return READ_ONCE(iqp->qp->state) != IB_QPS_ERR;
}

/* The QP failed under rx: nothing more lands; the flush has the rest. */
static void iwarp_rx_stop(struct iwarp_qp *iqp)
{
	iwarp_rx_release(iqp);
	iqp->rx.state = IWARP_RX_DEAD;
}

/* srdma_recv_fail() of the held receive, if any. */
static void iwarp_rx_recv_fail(struct iwarp_qp *iqp, enum ib_wc_status status)
{
	spin_lock_bh(&iqp->recv_lock);
	srdma_recv_fail(iqp->qp, &iqp->rx.recv, status);
	spin_unlock_bh(&iqp->recv_lock);
}

/*
 * From srdma_flush() (the transport's recv_flush), before the ring's
 * receives. Any context but a hard interrupt, interrupts perhaps off (see
 * roce_resp_flush()). Only in ERR: a reset since has dealt with the
 * receive.
 */
void iwarp_rx_recv_flush(struct iwarp_qp *iqp)
{
	unsigned long flags;

	spin_lock_irqsave(&iqp->recv_lock, flags);
	if (!iwarp_rx_open(iqp))
		srdma_recv_flush(iqp->qp, &iqp->rx.recv);
	spin_unlock_irqrestore(&iqp->recv_lock, flags);
}

static u32 iwarp_rx_ulpdu_hdr_len(struct iwarp_rx *rx)
{
	return rx->hdr_need - MPA_LEN_SIZE;
}

/*
 * Stop the stream with a Terminate (RFC 5040 5.4): rx discards from
 * here on, and the QP's error path closes the connection after sending
 * it. A receive in progress completes with @recv_status. @with_hdr
 * quotes the offending DDP/RDMAP header back to the peer.
 */
static void __iwarp_rx_fail(struct iwarp_qp *iqp, u8 layer, u8 etype, u8 code,
			    bool with_hdr, enum ib_wc_status recv_status)
{
	struct iwarp_rx *rx = &iqp->rx;
	struct srdma_qp *qp = iqp->qp;
	u32 hdr_len = 0;

	if (rx->state == IWARP_RX_DEAD)
		return;
	if (with_hdr && rx->hdr_have >= 4)
		hdr_len = min_t(u32, rx->hdr_have, rx->hdr_need);
	iwarp_rx_release(iqp);
	rx->state = IWARP_RX_DEAD;
	srdma_count(qp_dev(qp), SRDMA_CNT_RX_DROPPED);
	ibdev_dbg_ratelimited(&qp_dev(qp)->ibdev,
			      "QP %u: terminate layer %u type %u code %#x\n",
			      qp->ibqp.qp_num, layer, etype, code);

	/*
	 * A fault of another message (a WRITE's bad STag inside a SEND's
	 * segments) says nothing of the held receive: its message never
	 * finished, and the close that follows flushes it. Completing it
	 * with the caller's IB_WC_SUCCESS would report a message that was
	 * never received.
	 */
	if (recv_status != IB_WC_SUCCESS)
		iwarp_rx_recv_fail(iqp, recv_status);
	iwarp_terminate(iqp, layer, etype, code, rx->hdr, hdr_len);
}

/* Terminate, quoting the header of the FPDU at fault. */
static void iwarp_rx_fail(struct iwarp_qp *iqp, u8 layer, u8 etype, u8 code,
			  enum ib_wc_status recv_status)
{
	__iwarp_rx_fail(iqp, layer, etype, code, true, recv_status);
}

/*
 * Terminate without quoting a header: too little of it arrived, the MPA
 * framing or CRC failed, or the fault is local rather than the peer's.
 */
static void iwarp_rx_fail_nohdr(struct iwarp_qp *iqp, u8 layer, u8 etype,
				u8 code, enum ib_wc_status recv_status)
{
	__iwarp_rx_fail(iqp, layer, etype, code, false, recv_status);
}

/* Map a key check error to the Terminate a tagged access gets. */
static void iwarp_rx_tagged_fail(struct iwarp_qp *iqp, int err)
{
	switch (err) {
	case -ERANGE:
		iwarp_rx_fail(iqp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
			      TERM_DDP_T_BASE_BOUNDS, IB_WC_SUCCESS);
		break;
	case -EACCES:
		iwarp_rx_fail(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_PROTECTION,
			      TERM_RDMAP_ACCESS, IB_WC_SUCCESS);
		break;
	case -EPERM:
		iwarp_rx_fail(iqp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
			      TERM_DDP_T_NOT_ASSOC, IB_WC_SUCCESS);
		break;
	default:
		iwarp_rx_fail(iqp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
			      TERM_DDP_T_INVALID_STAG, IB_WC_SUCCESS);
		break;
	}
}

/*
 * The RDMAP protection error code for a key check error: what a Read
 * Request or an atomic (untagged requests naming an STag) gets, on
 * arrival or when its response is sent.
 */
u8 iwarp_rdmap_key_code(int err)
{
	return err == -ERANGE ? TERM_RDMAP_BASE_BOUNDS :
	       err == -EACCES ? TERM_RDMAP_ACCESS :
	       err == -EPERM ? TERM_RDMAP_STAG_NOT_ASSOC :
			       TERM_RDMAP_INVALID_STAG;
}

static void iwarp_rx_rdmap_key_fail(struct iwarp_qp *iqp, int err)
{
	iwarp_rx_fail(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_PROTECTION,
		      iwarp_rdmap_key_code(err), IB_WC_SUCCESS);
}

/* The oldest READ/atomic WQE still waiting for its answer, or NULL. */
static struct srdma_swqe *iwarp_rx_orq_head(struct iwarp_qp *iqp)
{
	struct srdma_swqe *w = NULL;

	spin_lock_bh(&iqp->lock);
	if (iqp->orq_head != iqp->orq_tail)
		w = srdma_swqe_at(iqp->qp, *iwarp_orq_at(iqp, iqp->orq_head));
	spin_unlock_bh(&iqp->lock);
	return w;
}

static void iwarp_rx_orq_pop(struct iwarp_qp *iqp)
{
	spin_lock_bh(&iqp->lock);
	iqp->orq_head++;
	spin_unlock_bh(&iqp->lock);
	iwarp_tx_kick(iqp);		/* an ORD credit came back */
}

/*
 * Room for one more answer within this connection's IRD? rx alone adds
 * to the ring and tx only takes from it, so room seen here is still
 * there when rx pushes.
 */
static bool iwarp_rx_ird_room(struct iwarp_qp *iqp)
{
	bool ok;

	spin_lock_bh(&iqp->lock);
	ok = iqp->ird_tail - iqp->ird_head < iqp->ird_max;
	spin_unlock_bh(&iqp->lock);
	return ok;
}

/* Queue what we owe the peer; false when it sent more than our IRD. */
static bool iwarp_rx_ird_push(struct iwarp_qp *iqp, const struct iwarp_rresp *r)
{
	bool ok;

	spin_lock_bh(&iqp->lock);
	ok = iqp->ird_tail - iqp->ird_head < iqp->ird_max;
	if (ok) {
		*iwarp_ird_at(iqp, iqp->ird_tail) = *r;
		iqp->ird_tail++;
	}
	spin_unlock_bh(&iqp->lock);
	if (ok)
		iwarp_tx_kick(iqp);
	return ok;
}

/* A Read Request is in: count it and queue the response we owe. */
static void iwarp_rx_read_req(struct iwarp_qp *iqp)
{
	struct srdma_qp *qp = iqp->qp;
	const struct rdmap_read_req *rr = (const void *)(iqp->rx.hdr +
		MPA_LEN_SIZE + sizeof(struct ddp_untagged_hdr));
	struct iwarp_rresp r = {
		.src_stag = be32_to_cpu(rr->src_stag),
		.src_to = be64_to_cpu(rr->src_to),
		.size = be32_to_cpu(rr->size),
		.sink_stag = be32_to_cpu(rr->sink_stag),
		.sink_to = be64_to_cpu(rr->sink_to),
	};
	int err;

	iqp->rx.msn[DDP_QN_READ_REQ]++;
	trace_srdma_iw_read_req(&qp->ibqp, false, rr);
	if (r.size) {
		r.mem = srdma_rkey_check(qp, r.src_stag, r.src_to, r.size,
					 IB_ACCESS_REMOTE_READ, &err);
		if (!r.mem) {
			iwarp_rx_rdmap_key_fail(iqp, err);
			return;
		}
	}
	if (!iwarp_rx_ird_push(iqp, &r)) {
		if (r.mem)
			srdma_mem_put(r.mem);
		iwarp_rx_fail(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_OPERATION,
			      TERM_RDMAP_STREAM, IB_WC_SUCCESS);
	}
}

/* RFC 7306 atomics: executed on arrival, answered in order by tx. */
static void iwarp_rx_atomic_req(struct iwarp_qp *iqp)
{
	struct srdma_qp *qp = iqp->qp;
	const struct rdmap_atomic_req *a = (const void *)(iqp->rx.hdr +
		MPA_LEN_SIZE + sizeof(struct ddp_untagged_hdr));
	u64 va = be64_to_cpu(a->to);
	u32 op = be32_to_cpu(a->opcode) & 0xf;
	struct srdma_atomic_args args = {
		.cmp_swap = op == RDMAP_ATOMIC_CMP_SWAP,
		.swap_add = be64_to_cpu(a->add_or_swap),
		.swap_mask = be64_to_cpu(a->add_or_swap_mask),
		.compare = be64_to_cpu(a->compare),
		.compare_mask = be64_to_cpu(a->compare_mask),
	};
	struct iwarp_rresp r = {
		.atomic = true,
		.req_id = be32_to_cpu(a->req_id),
	};
	struct srdma_mem *mem;
	int err;

	iqp->rx.msn[DDP_QN_READ_REQ]++;
	if (!iqp->conn.atomics ||
	    (op != RDMAP_ATOMIC_CMP_SWAP && op != RDMAP_ATOMIC_FETCH_ADD)) {
		iwarp_rx_fail(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_OPERATION,
			      TERM_RDMAP_OPCODE, IB_WC_SUCCESS);
		return;
	}
	/* over the IRD: refused before it changes memory */
	if ((va & 7) || !iwarp_rx_ird_room(iqp)) {
		iwarp_rx_fail(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_OPERATION,
			      TERM_RDMAP_STREAM, IB_WC_SUCCESS);
		return;
	}
	mem = srdma_rkey_check(qp, be32_to_cpu(a->stag), va, 8,
			       IB_ACCESS_REMOTE_ATOMIC, &err);
	if (!mem) {
		iwarp_rx_rdmap_key_fail(iqp, err);
		return;
	}
	err = srdma_atomic_op(mem, va, &args, &r.orig);
	srdma_mem_put(mem);
	if (err || !iwarp_rx_ird_push(iqp, &r))
		iwarp_rx_fail(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_OPERATION,
			      TERM_RDMAP_STREAM, IB_WC_SUCCESS);
}

static void iwarp_rx_atomic_resp(struct iwarp_qp *iqp)
{
	struct srdma_qp *qp = iqp->qp;
	const struct rdmap_atomic_resp *a = (const void *)(iqp->rx.hdr +
		MPA_LEN_SIZE + sizeof(struct ddp_untagged_hdr));
	struct srdma_swqe *w = iwarp_rx_orq_head(iqp);

	iqp->rx.msn[DDP_QN_ATOMIC_RESP]++;
	if (!w || (w->wr.opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
		   w->wr.opcode != IB_WR_ATOMIC_FETCH_AND_ADD) ||
	    be32_to_cpu(a->req_id) != to_iwswqe(w)->atomic_req_id) {
		iwarp_rx_fail(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_OPERATION,
			      TERM_RDMAP_OPCODE, IB_WC_SUCCESS);
		return;
	}
	iwarp_rx_orq_pop(iqp);
	srdma_sq_wqe_done(qp, w, srdma_swqe_atomic_result(qp, w,
							  be64_to_cpu(a->orig)));
}

/* The peer gave up on the stream: fail the oldest WQE with its reason. */
static void iwarp_rx_terminate(struct iwarp_qp *iqp)
{
	struct srdma_qp *qp = iqp->qp;
	const struct rdmap_term *t = (const void *)(iqp->rx.hdr +
		MPA_LEN_SIZE + sizeof(struct ddp_untagged_hdr));
	u32 ctrl = be32_to_cpu(t->ctrl);
	u8 layer = ctrl >> TERM_LAYER_SHIFT;
	u8 etype = (ctrl >> TERM_ETYPE_SHIFT) & 0xf;
	enum ib_wc_status status = IB_WC_REM_OP_ERR;

	ibdev_dbg_ratelimited(&qp_dev(qp)->ibdev,
			      "QP %u: peer terminated: layer %u type %u code %#x\n",
			      qp->ibqp.qp_num, layer, etype,
			      (ctrl >> TERM_CODE_SHIFT) & 0xff);
	iqp->rx.state = IWARP_RX_DEAD;
	iwarp_count(qp_dev(qp), IWARP_CNT_TERMINATE_RCVD);
	trace_srdma_iw_terminate(&qp->ibqp, false, ctrl);
	if ((layer == TERM_LAYER_RDMAP && etype == TERM_RDMAP_PROTECTION) ||
	    (layer == TERM_LAYER_DDP && etype == TERM_DDP_TAGGED))
		status = IB_WC_REM_ACCESS_ERR;
	else if (layer == TERM_LAYER_DDP && etype == TERM_DDP_UNTAGGED)
		status = IB_WC_REM_INV_REQ_ERR;

	srdma_sq_fail_head(qp, status);
}

/*
 * Header steps, one per kind of message: run once the common checks of
 * the header passed, they check what is the opcode's own and set up
 * where its payload goes. A failure Terminates (rx goes dead).
 */

/* RDMA WRITE: the STag must allow writing all of this segment. */
static void iwarp_rx_write_start(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;
	const struct ddp_tagged_hdr *th = (const void *)(rx->hdr + 2);
	u64 to = be64_to_cpu(th->to);
	int err;

	/* a zero-length WRITE touches nothing */
	if (!rx->data_left)
		return;
	rx->mem = srdma_rkey_check(iqp->qp, be32_to_cpu(th->stag), to,
				   rx->data_left, IB_ACCESS_REMOTE_WRITE, &err);
	if (!rx->mem) {
		iwarp_rx_tagged_fail(iqp, err);
		return;
	}
	rx->stag = be32_to_cpu(th->stag);
	rx->iova = to;
}

/* READ response: it answers our oldest READ and fits what is left of it. */
static void iwarp_rx_read_resp_start(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;
	struct srdma_swqe *w = iwarp_rx_orq_head(iqp);

	if (!w || !iwarp_wr_is_read(w->wr.opcode)) {
		iwarp_rx_fail(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_OPERATION,
			      TERM_RDMAP_OPCODE, IB_WC_SUCCESS);
		return;
	}
	if (!rx->rd_active) {
		srdma_sge_cursor_init(&rx->rd_cur, w->sge, w->num_sge);
		rx->rd_active = true;
	}
	if (rx->data_left > w->length - w->done)
		iwarp_rx_fail(iqp, TERM_LAYER_DDP, TERM_DDP_TAGGED,
			      TERM_DDP_T_BASE_BOUNDS, IB_WC_SUCCESS);
}

/*
 * SEND: its first segment takes a posted receive, the others continue
 * it at the offset where the previous one ended.
 */
static void iwarp_rx_send_start(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;
	const struct ddp_untagged_hdr *uh = (const void *)(rx->hdr + 2);
	u32 mo = be32_to_cpu(uh->mo);
	bool open, held, taken = false;

	spin_lock_bh(&iqp->recv_lock);
	open = iwarp_rx_open(iqp);
	held = rx->recv.held;
	if (open && !held && !mo)
		taken = srdma_recv_take(iqp->qp, &rx->recv);
	spin_unlock_bh(&iqp->recv_lock);

	if (!open) {
		iwarp_rx_stop(iqp);
		return;
	}
	if (held) {
		if (mo != rx->recv.len)
			iwarp_rx_fail(iqp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
				      TERM_DDP_U_INVALID_MO,
				      IB_WC_LOC_QP_OP_ERR);
		return;
	}
	if (mo)
		iwarp_rx_fail(iqp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
			      TERM_DDP_U_INVALID_MO, IB_WC_SUCCESS);
	else if (!taken)
		iwarp_rx_fail(iqp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
			      TERM_DDP_U_NO_BUFFER, IB_WC_SUCCESS);
}

/*
 * Read Request, Terminate, atomics: one-segment messages whose fixed
 * header is all there is; a Terminate's payload (the headers it quotes)
 * is read and dropped.
 */
static void iwarp_rx_ctrl_start(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;
	const struct ddp_untagged_hdr *uh = (const void *)(rx->hdr + 2);

	if (be32_to_cpu(uh->mo) || !rx->last ||
	    (rx->data_left && rx->opcode != RDMAP_TERMINATE)) {
		iwarp_rx_fail(iqp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
			      TERM_DDP_U_INVALID_MO, IB_WC_SUCCESS);
		return;
	}
	rx->discard = true;
}

/*
 * RDMA WRITE: place at the STag's address. The segment's bytes may come
 * long after its header was checked (a peer can stall mid-FPDU), so the
 * STag is checked again with each part, under the hold of the memory's
 * lock that copies it: nothing lands after a rereg, dereg or invalidate
 * that took the access away has returned.
 */
static void iwarp_rx_place_write(struct iwarp_qp *iqp, const u8 *p, u32 len)
{
	struct iwarp_rx *rx = &iqp->rx;
	int err;

	err = srdma_rkey_copy(iqp->qp, rx->mem, rx->stag, rx->iova, (void *)p,
			      len, IB_ACCESS_REMOTE_WRITE, SRDMA_TO_MEM);
	rx->iova += len;
	if (err)
		iwarp_rx_tagged_fail(iqp, err);
}

/* READ response: place into the oldest outstanding READ's SGEs. */
static void iwarp_rx_place_read_resp(struct iwarp_qp *iqp, const u8 *p, u32 len)
{
	struct iwarp_rx *rx = &iqp->rx;
	struct srdma_qp *qp = iqp->qp;
	struct srdma_swqe *w = iwarp_rx_orq_head(iqp);
	int err;

	if (!w) {		/* the header found one: never */
		iwarp_rx_fail_nohdr(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_OPERATION,
				    TERM_RDMAP_OPCODE, IB_WC_SUCCESS);
		return;
	}
	err = srdma_swqe_place(qp, w, &rx->rd_cur, p, len);
	if (err == -ECANCELED)
		return;		/* flushed: the buffer is not ours any more */
	w->done += len;
	if (err) {
		ibdev_dbg_ratelimited(&qp_dev(qp)->ibdev,
				      "QP %u: read response placement: %d\n",
				      qp->ibqp.qp_num, err);
		/* our own READ's buffer is bad: fail it locally */
		iwarp_rx_orq_pop(iqp);
		rx->rd_active = false;
		srdma_sq_wqe_done(qp, w, IB_WC_LOC_PROT_ERR);
		iwarp_rx_fail_nohdr(iqp, TERM_LAYER_RDMAP,
				    TERM_RDMAP_CATASTROPHIC, 0, IB_WC_SUCCESS);
	}
}

/* Place @len bytes of an untagged SEND into its receive. */
static void iwarp_rx_place_recv(struct iwarp_qp *iqp, const u8 *p, u32 len)
{
	struct srdma_qp *qp = iqp->qp;
	enum ib_wc_status status = IB_WC_WR_FLUSH_ERR;

	spin_lock_bh(&iqp->recv_lock);
	if (iwarp_rx_open(iqp) && iqp->rx.recv.held)
		status = srdma_recv_place(qp, &iqp->rx.recv, p, len);
	spin_unlock_bh(&iqp->recv_lock);
	if (status == IB_WC_SUCCESS)
		return;
	if (status == IB_WC_WR_FLUSH_ERR) {
		iwarp_rx_stop(iqp);
		return;
	}
	ibdev_dbg_ratelimited(&qp_dev(qp)->ibdev,
			      "QP %u: receive placement: %s\n",
			      qp->ibqp.qp_num, ib_wc_status_msg(status));
	if (status == IB_WC_LOC_LEN_ERR)
		iwarp_rx_fail(iqp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
			      TERM_DDP_U_TOO_LONG, status);
	else
		iwarp_rx_fail_nohdr(iqp, TERM_LAYER_RDMAP,
				    TERM_RDMAP_CATASTROPHIC, 0, status);
}

static void iwarp_rx_write_done(struct iwarp_qp *iqp)
{
	iwarp_rx_release(iqp);
}

/*
 * The last Read Response of @w is in. A Read with Local Invalidate
 * (rdma_rw's READ into an MR on iWARP) then invalidates its sink, as a
 * LOCAL_INV would: its consumer registers the MR again without one.
 * The sink is the first SGE's key, as on RNICs and siw: rdma_rw's
 * invalidate_rkey is the key from before the REG_MR it posts ahead.
 */
static enum ib_wc_status iwarp_rx_read_status(struct srdma_qp *qp,
					      struct srdma_swqe *w)
{
	if (w->done != w->length)
		return IB_WC_LOC_LEN_ERR;
	if (w->wr.opcode == IB_WR_RDMA_READ_WITH_INV &&
	    (!w->num_sge || srdma_invalidate(qp, w->sge[0].lkey)))
		return IB_WC_MW_BIND_ERR;
	return IB_WC_SUCCESS;
}

static void iwarp_rx_read_resp_done(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;
	struct srdma_swqe *w;

	if (!rx->last)
		return;
	w = iwarp_rx_orq_head(iqp);
	if (!w)
		return;
	/* placement stopped at the error (srdma_swqe_place()): flushed */
	if (READ_ONCE(iqp->qp->state) == IB_QPS_ERR)
		return;
	rx->rd_active = false;
	iwarp_rx_orq_pop(iqp);
	srdma_sq_wqe_done(iqp->qp, w, iwarp_rx_read_status(iqp->qp, w));
}

/* The last segment of a SEND is in: complete its receive. */
static void iwarp_rx_send_done(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;
	struct srdma_qp *qp = iqp->qp;
	const struct ddp_untagged_hdr *uh = (const void *)(rx->hdr + 2);
	struct ib_wc wc = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.byte_len = rx->recv.len,
	};
	bool inv = rx->opcode == RDMAP_SEND_INV ||
		   rx->opcode == RDMAP_SEND_SE_INV;
	bool se = rx->opcode == RDMAP_SEND_SE ||
		  rx->opcode == RDMAP_SEND_SE_INV;
	bool overflow;

	if (!rx->last)
		return;
	rx->msn[DDP_QN_SEND]++;
	if (inv && srdma_recv_invalidate(qp, &wc, be32_to_cpu(uh->ulp))) {
		/* iwarp_rx_fail() completes the receive with the error */
		iwarp_rx_fail(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_OPERATION,
			      TERM_RDMAP_CANNOT_INV, IB_WC_REM_INV_REQ_ERR);
		return;
	}
	spin_lock_bh(&iqp->recv_lock);
	/* in ERR the receive is the flush's */
	overflow = iwarp_rx_open(iqp) &&
		   srdma_recv_complete(qp, &rx->recv, &wc, se);
	spin_unlock_bh(&iqp->recv_lock);
	if (overflow)
		srdma_qp_error(qp);
}

/*
 * What each RDMAP opcode (RFC 5040 4.3, RFC 7306 5.1) is on receive: one
 * row per opcode instead of a switch in every step. An opcode with no
 * row (immediate data, 0xc-0xf) is not one a peer may send us; its
 * header length is refused before anything else of the FPDU is read.
 */
struct iwarp_rx_op {
	bool tagged;		/* DDP segment kind; the other is refused */
	u8 hdr_len;		/* MPA length field, DDP and RDMAP headers */
	u8 qn;			/* untagged: the DDP queue it arrives on */
	void (*start)(struct iwarp_qp *iqp);	/* its header step (above) */
	/* payload bytes; NULL: none kept (the header step discards) */
	void (*place)(struct iwarp_qp *iqp, const u8 *p, u32 len);
	void (*done)(struct iwarp_qp *iqp);	/* FPDU in, CRC good */
};

#define IWARP_HDR_T	(MPA_LEN_SIZE + sizeof(struct ddp_tagged_hdr))
#define IWARP_HDR_U	(MPA_LEN_SIZE + sizeof(struct ddp_untagged_hdr))
#define IWARP_OP_T(st, pl, dn) \
	{ .tagged = true, .hdr_len = IWARP_HDR_T, \
	  .start = (st), .place = (pl), .done = (dn) }
#define IWARP_OP_U(q, rdmap_len, st, pl, dn) \
	{ .hdr_len = IWARP_HDR_U + (rdmap_len), .qn = (q), \
	  .start = (st), .place = (pl), .done = (dn) }
#define IWARP_OP_SEND IWARP_OP_U(DDP_QN_SEND, 0, iwarp_rx_send_start, \
			   iwarp_rx_place_recv, iwarp_rx_send_done)
#define IWARP_OP_CTRL(q, rdmap_hdr, dn) \
	IWARP_OP_U(q, sizeof(struct rdmap_hdr), iwarp_rx_ctrl_start, NULL, dn)

static const struct iwarp_rx_op iwarp_rx_ops[RDMAP_OPCODE_MASK + 1] = {
	[RDMAP_WRITE] = IWARP_OP_T(iwarp_rx_write_start, iwarp_rx_place_write,
				iwarp_rx_write_done),
	[RDMAP_READ_REQ] = IWARP_OP_CTRL(DDP_QN_READ_REQ, rdmap_read_req,
				      iwarp_rx_read_req),
	[RDMAP_READ_RESP] = IWARP_OP_T(iwarp_rx_read_resp_start,
				    iwarp_rx_place_read_resp,
				    iwarp_rx_read_resp_done),
	[RDMAP_SEND] = IWARP_OP_SEND,
	[RDMAP_SEND_INV] = IWARP_OP_SEND,
	[RDMAP_SEND_SE] = IWARP_OP_SEND,
	[RDMAP_SEND_SE_INV] = IWARP_OP_SEND,
	[RDMAP_TERMINATE] = IWARP_OP_CTRL(DDP_QN_TERMINATE, rdmap_term,
				       iwarp_rx_terminate),
	[RDMAP_ATOMIC_REQ] = IWARP_OP_CTRL(DDP_QN_READ_REQ, rdmap_atomic_req,
					iwarp_rx_atomic_req),
	[RDMAP_ATOMIC_RESP] = IWARP_OP_CTRL(DDP_QN_ATOMIC_RESP,
					 rdmap_atomic_resp,
					 iwarp_rx_atomic_resp),
};

/* The row of the current FPDU's opcode; rx->opcode is masked to fit. */
static const struct iwarp_rx_op *iwarp_rx_op_of(const struct iwarp_rx *rx)
{
	return &iwarp_rx_ops[rx->opcode];
}

/*
 * The header length (MPA length field, DDP and RDMAP headers) of an FPDU
 * whose DDP and RDMAP control bytes are @ddp and @rdmap, or -EPROTO.
 */
int iwarp_rx_hdr_len(u8 ddp, u8 rdmap)
{
	const struct iwarp_rx_op *op = &iwarp_rx_ops[rdmap & RDMAP_OPCODE_MASK];

	if (!op->hdr_len || op->tagged != !!(ddp & DDP_TAGGED))
		return -EPROTO;
	return op->hdr_len;
}

/*
 * The MPA length must cover the headers; what it leaves is payload, then
 * pad and CRC. Sets up the FPDU's walk through the state machine.
 */
static bool iwarp_rx_frame(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;
	struct srdma_qp *qp = iqp->qp;
	u32 mpa_len = get_unaligned_be16(rx->hdr);
	u32 ulpdu_hdr = iwarp_rx_ulpdu_hdr_len(rx);
	u32 payload;

	trace_srdma_iw_rx(&qp->ibqp, rx->hdr + MPA_LEN_SIZE, mpa_len);
	srdma_count_pkt(qp, false, mpa_len);
	if (mpa_len < ulpdu_hdr) {
		iwarp_rx_fail_nohdr(iqp, TERM_LAYER_LLP, 0, TERM_LLP_MARKER,
				    IB_WC_LOC_LEN_ERR);
		return false;
	}
	payload = mpa_len - ulpdu_hdr;
	rx->data_left = payload;
	rx->trailer_have = 0;
	rx->trailer_need = mpa_pad(mpa_len) + MPA_CRC_SIZE;
	rx->opcode = rx->hdr[3] & RDMAP_OPCODE_MASK;
	rx->last = rx->hdr[2] & DDP_LAST;
	rx->discard = false;
	rx->state = payload ? IWARP_RX_DATA : IWARP_RX_TRAILER;
	return true;
}

/* DDP (RFC 5041 5.1) and RDMAP (RFC 5040 4.2) version 1 only. */
static bool iwarp_rx_versions_ok(struct iwarp_qp *iqp)
{
	u8 ddp = iqp->rx.hdr[2], rdmap = iqp->rx.hdr[3];

	if ((ddp & DDP_VERSION_MASK) != DDP_VERSION) {
		iwarp_rx_fail(iqp, TERM_LAYER_DDP, ddp & DDP_TAGGED ?
			   TERM_DDP_TAGGED : TERM_DDP_UNTAGGED,
			   ddp & DDP_TAGGED ? TERM_DDP_T_VERSION :
					      TERM_DDP_U_VERSION,
			   IB_WC_LOC_QP_OP_ERR);
		return false;
	}
	if ((rdmap & RDMAP_VERSION_MASK) != RDMAP_VERSION) {
		iwarp_rx_fail(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_OPERATION,
			      TERM_RDMAP_VERSION, IB_WC_LOC_QP_OP_ERR);
		return false;
	}
	return true;
}

/*
 * An untagged segment (RFC 5041 5.2) comes on its opcode's queue with
 * that queue's next message sequence number.
 */
static bool iwarp_rx_untagged_ok(struct iwarp_qp *iqp,
				 const struct iwarp_rx_op *op)
{
	struct iwarp_rx *rx = &iqp->rx;
	const struct ddp_untagged_hdr *uh = (const void *)(rx->hdr + 2);

	if (be32_to_cpu(uh->qn) != op->qn) {
		iwarp_rx_fail(iqp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
			      TERM_DDP_U_INVALID_QN, IB_WC_LOC_QP_OP_ERR);
		return false;
	}
	if (be32_to_cpu(uh->msn) != rx->msn[op->qn]) {
		iwarp_rx_fail(iqp, TERM_LAYER_DDP, TERM_DDP_UNTAGGED,
			      TERM_DDP_U_MSN_RANGE, IB_WC_LOC_QP_OP_ERR);
		return false;
	}
	return true;
}

/*
 * Header complete (its length, from the opcode, was accepted): check it
 * and decide where the payload goes.
 */
static void iwarp_rx_hdr_done(struct iwarp_qp *iqp)
{
	const struct iwarp_rx_op *op;

	if (!iwarp_rx_frame(iqp) || !iwarp_rx_versions_ok(iqp))
		return;
	op = iwarp_rx_op_of(&iqp->rx);
	if (!op->tagged && !iwarp_rx_untagged_ok(iqp, op))
		return;
	op->start(iqp);
}

/* Place @len payload bytes of the current FPDU. */
static void iwarp_rx_place(struct iwarp_qp *iqp, const u8 *p, u32 len)
{
	const struct iwarp_rx_op *op = iwarp_rx_op_of(&iqp->rx);

	if (!iqp->rx.discard && op->place)
		op->place(iqp, p, len);
}

/* A whole FPDU arrived and its CRC (if any) is good. */
static void iwarp_rx_fpdu_done(struct iwarp_qp *iqp)
{
	const struct iwarp_rx_op *op = iwarp_rx_op_of(&iqp->rx);

	if (op->done)
		op->done(iqp);
}

static void iwarp_rx_crc(struct iwarp_qp *iqp, const u8 *p, u32 len)
{
	if (iqp->conn.crc)
		iqp->rx.crc = crc32c(iqp->rx.crc, p, len);
}

/*
 * The byte stream state machine: each step below takes what it can of
 * the bytes in hand for its part of the FPDU - MPA length and headers,
 * payload, pad and CRC - and says how many it took. A step that fails
 * the stream leaves rx dead; the walk stops there.
 */

/*
 * The first four bytes of a header are in: its length follows from the
 * DDP segment kind and the RDMAP opcode.
 */
static bool iwarp_rx_hdr_sized(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;
	int hl = iwarp_rx_hdr_len(rx->hdr[2], rx->hdr[3]);

	if (hl < 0) {
		rx->hdr_need = 4;
		/* too little of it to quote back */
		iwarp_rx_fail_nohdr(iqp, TERM_LAYER_RDMAP, TERM_RDMAP_OPERATION,
				    TERM_RDMAP_OPCODE, IB_WC_LOC_QP_OP_ERR);
		return false;
	}
	rx->hdr_need = hl;
	return true;
}

/*
 * MPA length field, DDP and RDMAP headers: collected in rx->hdr, as a
 * header may come split over any number of segments.
 */
static u32 iwarp_rx_hdr_bytes(struct iwarp_qp *iqp, const u8 *p, u32 len)
{
	struct iwarp_rx *rx = &iqp->rx;
	u32 n;

	if (!rx->hdr_have)
		rx->crc = ~0U;
	n = min(len, (rx->hdr_need ? rx->hdr_need : 4) - rx->hdr_have);
	memcpy(rx->hdr + rx->hdr_have, p, n);
	iwarp_rx_crc(iqp, p, n);
	rx->hdr_have += n;
	if (!rx->hdr_need && rx->hdr_have == 4 && !iwarp_rx_hdr_sized(iqp))
		return n;
	if (rx->hdr_need && rx->hdr_have == rx->hdr_need)
		iwarp_rx_hdr_done(iqp);
	return n;
}

/* Payload: placed as it comes, where the header step decided. */
static u32 iwarp_rx_data_bytes(struct iwarp_qp *iqp, const u8 *p, u32 len)
{
	struct iwarp_rx *rx = &iqp->rx;
	u32 n = min(len, rx->data_left);

	iwarp_rx_place(iqp, p, n);
	iwarp_rx_crc(iqp, p, n);
	rx->data_left -= n;
	/* a placement that failed the stream left rx dead: it stays so */
	if (!rx->data_left && rx->state == IWARP_RX_DATA)
		rx->state = IWARP_RX_TRAILER;
	return n;
}

/* The MPA CRC (RFC 5044 6.2), where negotiated: FPDU and pad. */
static bool iwarp_rx_crc_ok(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;
	u32 pad = rx->trailer_need - MPA_CRC_SIZE;
	u32 crc;

	if (!iqp->conn.crc)
		return true;
	crc = crc32c(rx->crc, rx->trailer, pad);
	if (~crc == get_unaligned_le32(rx->trailer + pad))
		return true;
	srdma_count(qp_dev(iqp->qp), SRDMA_CNT_RX_BAD_CRC);
	iwarp_rx_fail_nohdr(iqp, TERM_LAYER_LLP, 0, TERM_LLP_CRC,
			    IB_WC_LOC_QP_OP_ERR);
	return false;
}

/* Pad and CRC: the FPDU ends once its CRC is good; the next may begin. */
static u32 iwarp_rx_trailer_bytes(struct iwarp_qp *iqp, const u8 *p, u32 len)
{
	struct iwarp_rx *rx = &iqp->rx;
	u32 n = min(len, rx->trailer_need - rx->trailer_have);

	memcpy(rx->trailer + rx->trailer_have, p, n);
	rx->trailer_have += n;
	if (rx->trailer_have < rx->trailer_need || !iwarp_rx_crc_ok(iqp))
		return n;
	iwarp_rx_fpdu_done(iqp);
	/* completing the FPDU may have failed the stream */
	if (rx->state == IWARP_RX_DEAD)
		return n;
	rx->state = IWARP_RX_HDR;
	rx->hdr_have = 0;
	rx->hdr_need = 0;
	return n;
}

/* Walk @len bytes of the stream through the steps, up to where rx dies. */
static void iwarp_rx_bytes(struct iwarp_qp *iqp, const u8 *p, u32 len)
{
	struct iwarp_rx *rx = &iqp->rx;
	u32 n;

	while (len) {
		switch (rx->state) {
		case IWARP_RX_HDR:
			n = iwarp_rx_hdr_bytes(iqp, p, len);
			break;
		case IWARP_RX_DATA:
			n = iwarp_rx_data_bytes(iqp, p, len);
			break;
		case IWARP_RX_TRAILER:
			n = iwarp_rx_trailer_bytes(iqp, p, len);
			break;
		case IWARP_RX_DEAD:
		default:
			return;
		}
		p += n;
		len -= n;
	}
}

static int iwarp_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
			  unsigned int off, size_t len)
{
	struct iwarp_qp *iqp = desc->arg.data;
	struct skb_seq_state st;
	unsigned int done = 0, n;
	const u8 *data;

	/* after a flush nothing may land in memory or the CQ */
	if (READ_ONCE(iqp->qp->state) == IB_QPS_ERR)
		iqp->rx.state = IWARP_RX_DEAD;
	if (iqp->rx.state == IWARP_RX_DEAD)
		return len;

	skb_prepare_seq_read(skb, off, off + len, &st);
	while ((n = skb_seq_read(done, &data, &st)) != 0) {
		iwarp_rx_bytes(iqp, data, n);
		done += n;
	}
	return len;
}

static void iwarp_rx_read_sock(struct sock *sk, struct iwarp_qp *iqp)
{
	read_descriptor_t desc = { .arg.data = iqp, .count = 1 };

	tcp_read_sock(sk, &desc, iwarp_rx_actor);
}

void iwarp_rx_data_ready(struct sock *sk)
{
	struct iwarp_ep *ep;

	read_lock_bh(&sk->sk_callback_lock);
	ep = sk->sk_user_data;
	if (ep && ep->qp)
		iwarp_rx_read_sock(sk, to_iwqp(ep->qp));
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Data that arrived before the callbacks were ours. Process context,
 * before the endpoint can close (see iwarp_ep_attach).
 */
void iwarp_rx_start(struct iwarp_qp *iqp, struct socket *s)
{
	lock_sock(s->sk);
	iwarp_rx_read_sock(s->sk, iqp);
	release_sock(s->sk);
}

/*
 * The connection is closing. rx has its part in the close work (cm.c,
 * process context) at two points, with the Terminate in between (see
 * terminate.c for the whole path):
 *
 *  - iwarp_rx_drain() while the socket's callbacks are still ours: a FIN
 *    may come with the last data, and the close work may run before
 *    data_ready did. A fault found there queues its Terminate in time
 *    for the close work to send it.
 *  - iwarp_rx_flush() once rx cannot run any more (callbacks given back)
 *    and the Terminate, if any, is out: rx gives back what it held.
 *
 * One call cannot do both: the drain must come before the close work
 * takes the pending Terminate, and what the drain leaves held must stay
 * held until the Terminate is sent.
 */

/*
 * Read what the socket still has, unless @read is false (the close
 * aborts: it goes with the socket) or the QP failed (nothing lands in
 * memory or the CQ after the flush; the bytes stay in the socket). The
 * socket lock is taken either way: its release runs the backlog, rx
 * included, before the callbacks go.
 */
void iwarp_rx_drain(struct iwarp_qp *iqp, struct sock *sk, bool read)
{
	lock_sock(sk);
	if (read && READ_ONCE(iqp->qp->state) != IB_QPS_ERR)
		iwarp_rx_read_sock(sk, iqp);
	release_sock(sk);
}

/*
 * rx is quiet: a receive taken for a SEND that never finished is
 * flushed, and rx places nothing more (not even the rest of a READ
 * response) until a reset.
 */
void iwarp_rx_flush(struct iwarp_qp *iqp)
{
	struct iwarp_rx *rx = &iqp->rx;

	spin_lock_bh(&iqp->recv_lock);
	srdma_recv_flush(iqp->qp, &rx->recv);
	spin_unlock_bh(&iqp->recv_lock);
	rx->rd_active = false;
	rx->state = IWARP_RX_DEAD;
	iwarp_rx_release(iqp);
}
