// SPDX-License-Identifier: GPL-2.0
/*
 * iWARP transmit, one work item per QP: read responses and atomic
 * responses owed to the peer first, then the send queue in order. FPDUs
 * are built back to back in a buffer and handed to TCP without blocking;
 * when the socket is full the work stops and write_space restarts it.
 *
 * SEND and WRITE complete once TCP has taken all of their bytes (TCP
 * delivers them or the connection dies); READ and atomics complete when
 * their answer arrives (rx.c).
 *
 * The buffer is held only while it holds bytes TCP has not taken: a run
 * takes one when it has something to send and gives it back when it ends
 * with nothing left, or as soon as TCP has taken its pages (they are
 * TCP's then); one stopped by a full socket keeps it. An idle connection
 * holds none, which matters with a thousand of them.
 */
#include <linux/crc32c.h>
#include <linux/sched/mm.h>
#include <net/tcp.h>

#include "iwarp.h"
#include "trace.h"

/*
 * Spare transmit buffers, one list per size (IWARP_TX_BUF_MIN to
 * IWARP_TX_BUF_SIZE, powers of two), so that a run pays for a short
 * spinlock rather than a page allocation: a QP gives its buffer back
 * whenever it goes idle, which a stream of small messages does after
 * every post. Each list keeps at most IWARP_TX_POOL_BYTES. Only buffers
 * nobody else holds are kept: pages TCP took by reference go back to the
 * allocator once TCP is done with them. Process context only (tx_mutex
 * holders), so a plain spinlock does.
 */
#define IWARP_TX_POOL_LISTS \
	(ilog2(IWARP_TX_BUF_SIZE) - ilog2(IWARP_TX_BUF_MIN) + 1)
#define IWARP_TX_POOL_BYTES	(256 * 1024)

/* Kept in the spare buffer itself. */
struct iwarp_tx_spare {
	struct iwarp_tx_spare *next;
	struct page *page;		/* compound pages; NULL: kvmalloc */
};

static struct iwarp_tx_pool {
	spinlock_t lock;		/* head, count */
	struct iwarp_tx_spare *head;
	u32 count;
} iwarp_tx_pool[IWARP_TX_POOL_LISTS] = {
	[0 ... IWARP_TX_POOL_LISTS - 1] = {
		.lock = __SPIN_LOCK_UNLOCKED(iwarp_tx_pool.lock),
	},
};

static struct iwarp_tx_pool *iwarp_tx_pool_of(u32 size)
{
	return &iwarp_tx_pool[ilog2(size) - ilog2(IWARP_TX_BUF_MIN)];
}

static void iwarp_tx_spare_free(void *buf, struct page *page)
{
	if (page)
		put_page(page);
	else
		kvfree(buf);
}

/*
 * A buffer of @size bytes, or NULL; *@page is its compound pages, or NULL
 * for a kvmalloc one. It is whole pages of our own when it can be, so
 * that TCP takes the FPDUs by reference (see iwarp_tx_push); a fragmented
 * system gets a kvmalloc buffer that TCP copies from instead.
 *
 * Storage ULPs (nvme-rdma, NFS) write back through this path: the
 * allocations must not wait for I/O, which may be our own. Only the scope,
 * not a GFP_NOIO mask, keeps kvmalloc's vmalloc fallback from doing I/O.
 */
static void *iwarp_tx_pool_get(u32 size, struct page **page)
{
	struct iwarp_tx_pool *p = iwarp_tx_pool_of(size);
	struct iwarp_tx_spare *f;
	unsigned int noio;
	void *buf;

	spin_lock(&p->lock);
	f = p->head;
	if (f) {
		p->head = f->next;
		p->count--;
	}
	spin_unlock(&p->lock);
	if (f) {
		*page = f->page;
		return f;
	}
	noio = memalloc_noio_save();
	/* no reclaim or compaction for it: kvmalloc is the fallback */
	*page = alloc_pages((GFP_KERNEL & ~__GFP_DIRECT_RECLAIM) | __GFP_COMP |
			    __GFP_NOWARN, get_order(size));
	buf = *page ? page_address(*page) : kvmalloc(size, GFP_KERNEL);
	memalloc_noio_restore(noio);
	return buf;
}

/*
 * Keep @buf if nobody else holds it and its list has room. Once a buffer
 * was spliced, only TCP drops references to it (nothing else can take
 * one), so a count of one stays one.
 */
static void iwarp_tx_pool_put(void *buf, struct page *page, u32 size)
{
	struct iwarp_tx_pool *p = iwarp_tx_pool_of(size);
	struct iwarp_tx_spare *f = buf;
	bool kept = false;

	if (!page || page_count(page) == 1) {
		spin_lock(&p->lock);
		if ((p->count + 1) * size <= IWARP_TX_POOL_BYTES) {
			f->next = p->head;
			f->page = page;
			p->head = f;
			p->count++;
			kept = true;
		}
		spin_unlock(&p->lock);
	}
	if (!kept)
		iwarp_tx_spare_free(buf, page);
}

/* Module exit, every QP gone: free what the lists keep. */
void iwarp_tx_pool_drain(void)
{
	u32 i;

	for (i = 0; i < IWARP_TX_POOL_LISTS; i++) {
		struct iwarp_tx_pool *p = &iwarp_tx_pool[i];
		struct iwarp_tx_spare *f;

		spin_lock(&p->lock);
		f = p->head;
		p->head = NULL;
		p->count = 0;
		spin_unlock(&p->lock);
		while (f) {
			struct iwarp_tx_spare *next = f->next;

			iwarp_tx_spare_free(f, f->page);
			f = next;
		}
	}
}

/* A buffer for a run that has bytes to build; false without one. */
static bool iwarp_tx_buf_take(struct iwarp_qp *iqp)
{
	lockdep_assert_held(&iqp->tx_mutex);
	if (iqp->tx_buf)
		return true;
	iqp->tx_buf = iwarp_tx_pool_get(iqp->tx_buf_size, &iqp->tx_page);
	return iqp->tx_buf;
}

/*
 * Give the buffer back once TCP has taken every byte in it. Pages TCP
 * took by reference stay until it is done with them: ours is one
 * reference only, and such a buffer is not kept for reuse.
 */
static void iwarp_tx_buf_give(struct iwarp_qp *iqp)
{
	lockdep_assert_held(&iqp->tx_mutex);
	if (!iqp->tx_buf || iqp->tx_len)
		return;
	iwarp_tx_pool_put(iqp->tx_buf, iqp->tx_page, iqp->tx_buf_size);
	iqp->tx_page = NULL;
	iqp->tx_buf = NULL;
}

/* Room one more FPDU of @max_payload needs in the buffer, at worst. */
static u32 iwarp_fpdu_room_for(u32 max_payload)
{
	return max_payload + IWARP_MAX_HDR + 3 + MPA_CRC_SIZE;
}

static u32 iwarp_fpdu_room(struct iwarp_qp *iqp)
{
	return iwarp_fpdu_room_for(iqp->max_payload);
}

/* Start an FPDU in the buffer: returns where its ULPDU begins. */
static u8 *iwarp_fpdu_begin(struct iwarp_qp *iqp)
{
	return iqp->tx_buf + iqp->tx_len + MPA_LEN_SIZE;
}

/*
 * Frame the @ulpdu_len bytes at @start + MPA_LEN_SIZE as an FPDU: length
 * field, zero pad and the CRC32c (or zero without @crc). Returns the
 * length of the whole FPDU.
 */
u32 iwarp_fpdu_seal(u8 *start, u32 ulpdu_len, bool crc)
{
	u32 len = MPA_LEN_SIZE + ulpdu_len + mpa_pad(ulpdu_len);

	put_unaligned_be16(ulpdu_len, start);
	memset(start + MPA_LEN_SIZE + ulpdu_len, 0, mpa_pad(ulpdu_len));
	put_unaligned_le32(crc ? ~crc32c(~0U, start, len) : 0, start + len);
	return len + MPA_CRC_SIZE;
}

/* Length, pad and CRC around the @ulpdu_len bytes just written. */
static void iwarp_fpdu_end(struct iwarp_qp *iqp, u32 ulpdu_len)
{
	u8 *start = iqp->tx_buf + iqp->tx_len;

	iqp->tx_len += iwarp_fpdu_seal(start, ulpdu_len, iqp->conn.crc);
	trace_srdma_iw_tx(&iqp->qp->ibqp, start + MPA_LEN_SIZE, ulpdu_len);
	srdma_count_pkt(iqp->qp, true, ulpdu_len);
}

static void iwarp_untagged(struct ddp_untagged_hdr *h, u8 op, bool last,
			   u32 qn, u32 msn, u32 mo, u32 ulp)
{
	h->ddp = DDP_VERSION | (last ? DDP_LAST : 0);
	h->rdmap = RDMAP_VERSION | op;
	h->ulp = cpu_to_be32(ulp);
	h->qn = cpu_to_be32(qn);
	h->msn = cpu_to_be32(msn);
	h->mo = cpu_to_be32(mo);
}

static void iwarp_tagged(struct ddp_tagged_hdr *h, u8 op, bool last, u32 stag,
			 u64 to)
{
	h->ddp = DDP_TAGGED | DDP_VERSION | (last ? DDP_LAST : 0);
	h->rdmap = RDMAP_VERSION | op;
	h->stag = cpu_to_be32(stag);
	h->to = cpu_to_be64(to);
}

static u8 iwarp_send_opcode(const struct srdma_swqe *w)
{
	bool se = w->wr.send_flags & IB_SEND_SOLICITED;

	if (w->wr.opcode == IB_WR_SEND_WITH_INV)
		return se ? RDMAP_SEND_SE_INV : RDMAP_SEND_INV;
	return se ? RDMAP_SEND_SE : RDMAP_SEND;
}

/* One FPDU of a SEND or WRITE; returns a WC status. */
static enum ib_wc_status iwarp_tx_data(struct iwarp_qp *iqp,
				       struct srdma_swqe *w)
{
	struct srdma_qp *qp = iqp->qp;
	bool write = w->wr.opcode == IB_WR_RDMA_WRITE;
	u32 n = min(w->length - w->sent, iqp->max_payload);
	bool last = w->sent + n == w->length;
	u8 *p = iwarp_fpdu_begin(iqp);
	u32 hlen;

	if (write) {
		iwarp_tagged((void *)p, RDMAP_WRITE, last, w->wr.wr.rdma.rkey,
			     w->wr.wr.rdma.remote_addr + w->sent);
		hlen = sizeof(struct ddp_tagged_hdr);
	} else {
		iwarp_untagged((void *)p, iwarp_send_opcode(w), last,
			       DDP_QN_SEND, iqp->msn_send, w->sent,
			       w->wr.opcode == IB_WR_SEND_WITH_INV ?
			       w->wr.ex.invalidate_rkey : 0);
		hlen = sizeof(struct ddp_untagged_hdr);
	}
	if (n) {
		int err = srdma_swqe_read(qp, w, w->sent, p + hlen, n);

		if (err)
			return srdma_sge_err_status(err);
	}
	iwarp_fpdu_end(iqp, hlen + n);
	w->sent += n;
	if (last && !write)
		iqp->msn_send++;
	return IB_WC_SUCCESS;
}

static void iwarp_tx_read_req(struct iwarp_qp *iqp, struct srdma_swqe *w)
{
	u8 *p = iwarp_fpdu_begin(iqp);
	struct rdmap_read_req *rr = (void *)(p + sizeof(struct ddp_untagged_hdr));

	iwarp_untagged((void *)p, RDMAP_READ_REQ, true, DDP_QN_READ_REQ,
		       iqp->msn_rreq++, 0, 0);
	/* responses are placed by our orq, not by this STag; it is echoed */
	rr->sink_stag = cpu_to_be32(w->num_sge ? w->sge[0].lkey : 0);
	rr->sink_to = cpu_to_be64(w->num_sge ? w->sge[0].addr : 0);
	rr->size = cpu_to_be32(w->length);
	rr->src_stag = cpu_to_be32(w->wr.wr.rdma.rkey);
	rr->src_to = cpu_to_be64(w->wr.wr.rdma.remote_addr);
	trace_srdma_iw_read_req(&iqp->qp->ibqp, true, rr);
	iwarp_fpdu_end(iqp, sizeof(struct ddp_untagged_hdr) + sizeof(*rr));
}

static void iwarp_tx_atomic_req(struct iwarp_qp *iqp, struct srdma_swqe *w)
{
	u8 *p = iwarp_fpdu_begin(iqp);
	struct rdmap_atomic_req *a = (void *)(p + sizeof(struct ddp_untagged_hdr));
	struct iwarp_swqe *iws = to_iwswqe(w);
	bool cas = w->wr.opcode == IB_WR_ATOMIC_CMP_AND_SWP;

	iwarp_untagged((void *)p, RDMAP_ATOMIC_REQ, true, DDP_QN_READ_REQ,
		       iqp->msn_rreq++, 0, 0);
	/* the response echoes it */
	iws->atomic_req_id = iqp->next_req_id++;
	a->opcode = cpu_to_be32(cas ? RDMAP_ATOMIC_CMP_SWAP :
				      RDMAP_ATOMIC_FETCH_ADD);
	a->req_id = cpu_to_be32(iws->atomic_req_id);
	a->stag = cpu_to_be32(w->wr.wr.atomic.rkey);
	a->to = cpu_to_be64(w->wr.wr.atomic.remote_addr);
	if (cas) {
		a->add_or_swap = cpu_to_be64(w->wr.wr.atomic.swap);
		a->add_or_swap_mask = cpu_to_be64(~0ULL);
		a->compare = cpu_to_be64(w->wr.wr.atomic.compare_add);
		a->compare_mask = cpu_to_be64(~0ULL);
	} else {
		a->add_or_swap = cpu_to_be64(w->wr.wr.atomic.compare_add);
		a->add_or_swap_mask = 0;
		a->compare = 0;
		a->compare_mask = cpu_to_be64(~0ULL);
	}
	iwarp_fpdu_end(iqp, sizeof(struct ddp_untagged_hdr) + sizeof(*a));
}

/* One FPDU of the oldest response we owe; false if we owe none. */
static bool iwarp_tx_response(struct iwarp_qp *iqp)
{
	struct iwarp_rresp *r;
	bool last;
	int err;
	u8 *p;
	u32 n;

	spin_lock_bh(&iqp->lock);
	r = iqp->ird_head != iqp->ird_tail ?
	    iwarp_ird_at(iqp, iqp->ird_head) : NULL;
	spin_unlock_bh(&iqp->lock);
	if (!r)
		return false;

	p = iwarp_fpdu_begin(iqp);
	if (r->atomic) {
		struct rdmap_atomic_resp *a =
			(void *)(p + sizeof(struct ddp_untagged_hdr));

		iwarp_untagged((void *)p, RDMAP_ATOMIC_RESP, true,
			       DDP_QN_ATOMIC_RESP, iqp->msn_aresp++, 0, 0);
		a->req_id = cpu_to_be32(r->req_id);
		a->orig = cpu_to_be64(r->orig);
		iwarp_fpdu_end(iqp,
			       sizeof(struct ddp_untagged_hdr) + sizeof(*a));
		last = true;
	} else {
		n = min(r->size - r->sent, iqp->max_payload);
		last = r->sent + n == r->size;
		iwarp_tagged((void *)p, RDMAP_READ_RESP, last, r->sink_stag,
			     r->sink_to + r->sent);
		/*
		 * The Read Request's check was long ago: the key may have
		 * been invalidated, deregistered or re-registered with less
		 * access or another PD since. Check it again with each copy.
		 */
		err = n ? srdma_rkey_copy(iqp->qp, r->mem, r->src_stag,
					  r->src_to + r->sent,
					  p + sizeof(struct ddp_tagged_hdr), n,
					  IB_ACCESS_REMOTE_READ,
					  SRDMA_FROM_MEM) : 0;
		if (err) {
			iwarp_terminate(iqp, TERM_LAYER_RDMAP,
					TERM_RDMAP_PROTECTION,
					iwarp_rdmap_key_code(err), NULL, 0);
			return false;
		}
		iwarp_fpdu_end(iqp, sizeof(struct ddp_tagged_hdr) + n);
		r->sent += n;
	}
	if (last) {
		if (r->mem)
			srdma_mem_put(r->mem);
		r->mem = NULL;
		spin_lock_bh(&iqp->lock);
		iqp->ird_head++;
		spin_unlock_bh(&iqp->lock);
	}
	return true;
}

static bool iwarp_is_data(u32 opcode)
{
	return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_INV ||
	       opcode == IB_WR_RDMA_WRITE;
}

/*
 * Skip what the core completed on its own (srdma_sq_catch_up()): all
 * three positions, so that the completion walk never starts behind the
 * WQEs it may look at, however far behind it was.
 */
static void iwarp_tx_catch_up(struct iwarp_qp *iqp, u32 fetch)
{
	u32 oldest = srdma_sq_oldest(iqp->qp, fetch);

	iqp->tx_idx = srdma_sq_catch_up(iqp->tx_idx, oldest, fetch);
	iqp->tx_complete_end = srdma_sq_catch_up(iqp->tx_complete_end,
						 oldest, fetch);
	iqp->tx_complete = srdma_sq_catch_up(iqp->tx_complete, oldest, fetch);
}

/* Put the next piece of the send queue in the buffer; false if none. */
static bool iwarp_tx_sq(struct iwarp_qp *iqp)
{
	struct srdma_qp *qp = iqp->qp;
	enum ib_wc_status status = IB_WC_SUCCESS;
	struct srdma_swqe *w;
	u32 outstanding, fetch;

	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		return false;
	/* WQE contents before the fetch index: pairs with srdma_sq_run */
	fetch = smp_load_acquire(&qp->sq_fetch);
	iwarp_tx_catch_up(iqp, fetch);
	if (iqp->tx_idx == fetch)
		return false;
	/*
	 * Never more than a ring ahead of us: anything else (a ring reset
	 * under us) would have us walk up to 2^32 slots of stale WQEs.
	 */
	if (fetch - iqp->tx_idx > srdma_queue_slots(&qp->sq.q)) {
		srdma_qp_error(qp);
		return false;
	}
	w = srdma_sq_pending(qp, iqp->tx_idx, fetch);
	if (!w) {
		iqp->tx_idx++;		/* a local operation, finished */
		iqp->tx_complete_end = iqp->tx_idx;
		return true;
	}
	switch (w->wr.opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
		status = iwarp_tx_data(iqp, w);
		if (status == IB_WC_SUCCESS && w->sent < w->length)
			return true;
		break;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if ((!iwarp_wr_is_read(w->wr.opcode) && !iqp->conn.atomics) ||
		    !iqp->conn.ord) {
			status = IB_WC_LOC_QP_OP_ERR;	/* the peer serves none */
			break;
		}
		spin_lock_bh(&iqp->lock);
		outstanding = iqp->orq_tail - iqp->orq_head;
		spin_unlock_bh(&iqp->lock);
		if (outstanding >= iqp->conn.ord)
			return false;	/* rx kicks us when one returns */
		/*
		 * The request first: once in the ORQ, the WQE can be
		 * answered (and completed, and its copy refilled) by any
		 * Read Response or atomic ACK, even one the peer sends
		 * unasked. Only we add entries, so the room stays.
		 */
		if (iwarp_wr_is_read(w->wr.opcode))
			iwarp_tx_read_req(iqp, w);
		else
			iwarp_tx_atomic_req(iqp, w);
		spin_lock_bh(&iqp->lock);
		*iwarp_orq_at(iqp, iqp->orq_tail) = iqp->tx_idx;
		iqp->orq_tail++;
		spin_unlock_bh(&iqp->lock);
		break;
	default:
		status = IB_WC_LOC_QP_OP_ERR;	/* no immediate data on iWARP */
		break;
	}
	if (status != IB_WC_SUCCESS) {
		srdma_sq_wqe_done(qp, w, status);
		return false;
	}
	iqp->tx_idx++;
	iqp->tx_complete_end = iqp->tx_idx;
	return true;
}

/* The buffer went out whole: SENDs and WRITEs in it are complete. */
static void iwarp_tx_complete(struct iwarp_qp *iqp)
{
	struct srdma_qp *qp = iqp->qp;
	u32 fetch;

	/* pairs with srdma_sq_run's release of sq_fetch */
	fetch = smp_load_acquire(&qp->sq_fetch);
	iwarp_tx_catch_up(iqp, fetch);
	while (iqp->tx_complete != iqp->tx_complete_end) {
		struct srdma_swqe *w = srdma_sq_pending(qp, iqp->tx_complete,
							fetch);

		/* READs and atomics complete when their answer comes */
		if (w && iwarp_is_data(w->wr.opcode))
			srdma_sq_wqe_done(qp, w, IB_WC_SUCCESS);
		iqp->tx_complete++;
	}
}

/*
 * Hand the buffer to TCP. Without a @deadline the sends do not block
 * (-EAGAIN when the socket is full); with one they block, but never past
 * it in all: a peer that opens its window a byte at a time makes
 * progress on every send and would otherwise hold us for as long as it
 * likes.
 *
 * A page-backed buffer at least half full is spliced where the route
 * takes page fragments: TCP holds its pages rather than copying the
 * bytes. Once all of it is out it is given back, not reused while TCP
 * may still be sending from it. Fewer bytes are copied: a few small FPDUs
 * spliced would pin a whole buffer each for as long as TCP holds them, a
 * multiple of the memory TCP accounts for. Without scatter-gather TCP
 * would copy spliced pages anyway, and a copied buffer is kept.
 */
static int iwarp_tx_push(struct iwarp_qp *iqp, struct socket *s,
			 const unsigned long *deadline)
{
	bool splice = iqp->tx_page && iqp->tx_len >= iqp->tx_buf_size / 2 &&
		      (READ_ONCE(s->sk->sk_route_caps) & NETIF_F_SG);

	while (iqp->tx_off < iqp->tx_len) {
		u32 len = iqp->tx_len - iqp->tx_off;
		struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
		long left = 0;
		int rc;

		if (deadline) {
			left = (long)(*deadline - jiffies);
			if (left <= 0)
				return -ETIMEDOUT;
			WRITE_ONCE(s->sk->sk_sndtimeo, left);
		} else {
			msg.msg_flags |= MSG_DONTWAIT;
		}
		if (splice) {
			rc = srdma_sock_send_pages(s, &msg, iqp->tx_page,
						   iqp->tx_off, len);
		} else {
			struct kvec iov = {
				.iov_base = iqp->tx_buf + iqp->tx_off,
				.iov_len = len,
			};

			rc = kernel_sendmsg(s, &msg, &iov, 1, len);
		}
		if (rc == -EAGAIN && deadline)
			return -ETIMEDOUT;
		if (rc <= 0)
			return rc ? rc : -EPIPE;
		iqp->tx_off += rc;
		iwarp_count_add(qp_dev(iqp->qp), splice ?
				IWARP_CNT_TX_SPLICED_BYTES :
				IWARP_CNT_TX_COPIED_BYTES, rc);
	}
	iqp->tx_off = 0;
	iqp->tx_len = 0;
	/* TCP may still send from pages it took: build in another buffer */
	if (iqp->tx_page && page_count(iqp->tx_page) > 1)
		iwarp_tx_buf_give(iqp);
	return 0;
}

/* Anything to build FPDUs for: responses owed or WQEs not yet sent. */
static bool iwarp_tx_has_work(struct iwarp_qp *iqp)
{
	struct srdma_qp *qp = iqp->qp;
	bool owed;

	/* rx queues a response, then kicks us: a later run sees it if not */
	spin_lock_bh(&iqp->lock);
	owed = iqp->ird_head != iqp->ird_tail;
	spin_unlock_bh(&iqp->lock);
	if (owed)
		return true;
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		return false;
	/* pairs with srdma_sq_run's release of sq_fetch */
	return iqp->tx_idx != smp_load_acquire(&qp->sq_fetch);
}

/*
 * Build FPDUs while the buffer has room. Returns false when there was
 * work but no buffer to build it in; nothing is lost, it stays queued.
 */
static bool iwarp_tx_fill(struct iwarp_qp *iqp)
{
	if (!iqp->tx_buf) {
		if (!iwarp_tx_has_work(iqp))
			return true;
		if (!iwarp_tx_buf_take(iqp))
			return false;
	}
	while (iqp->tx_buf_size - iqp->tx_len >= iwarp_fpdu_room(iqp)) {
		if (iwarp_tx_response(iqp))
			continue;
		if (!iwarp_tx_sq(iqp))
			break;
	}
	return true;
}

/* SQD: once everything queued is out, send our FIN. */
static void iwarp_tx_maybe_fin(struct iwarp_qp *iqp, struct socket *s)
{
	struct srdma_qp *qp = iqp->qp;
	struct iwarp_ep *ep = NULL;

	if (!READ_ONCE(iqp->draining) || iqp->fin_sent)
		return;
	/* pairs with srdma_sq_run's release of sq_fetch */
	if (iqp->tx_idx != smp_load_acquire(&qp->sq_fetch))
		return;
	spin_lock_bh(&iqp->lock);
	if (iqp->ird_head == iqp->ird_tail && iqp->ep) {
		ep = iqp->ep;
		kref_get(&ep->ref);
	}
	spin_unlock_bh(&iqp->lock);
	if (!ep)
		return;
	iqp->fin_sent = true;
	kernel_sock_shutdown(s, SHUT_WR);
	iwarp_ep_drain(ep);
	iwarp_ep_put(ep);
}

/*
 * Push and refill until the socket is full or nothing is left. @worker:
 * the tx work runs it, not a poster.
 */
static void iwarp_tx_run(struct iwarp_qp *iqp, bool worker)
{
	struct socket *s;
	int rounds, rc;

	/* close clears sock, then takes tx_mutex before releasing it */
	spin_lock_bh(&iqp->lock);
	s = iqp->sock;
	spin_unlock_bh(&iqp->lock);
	if (!s)
		return;

	for (rounds = 0; rounds < 16; rounds++) {
		rc = iwarp_tx_push(iqp, s, NULL);
		if (rc == -EAGAIN)
			return;		/* write_space brings us back */
		if (rc) {
			srdma_qp_error(iqp->qp);
			return;
		}
		iwarp_tx_complete(iqp);
		if (!iwarp_tx_fill(iqp)) {
			/*
			 * No memory for a buffer, and nothing built: the
			 * poster (whose allocation a fatal signal may have
			 * failed) leaves it to the work; the work, which
			 * only an exhausted system fails, ends the QP
			 * rather than spin on the allocator.
			 */
			if (!worker) {
				iwarp_tx_kick(iqp);
				return;
			}
			pr_warn_ratelimited("QP %u: no memory to transmit\n",
					    iqp->qp->ibqp.qp_num);
			srdma_qp_error(iqp->qp);
			return;
		}
		if (!iqp->tx_len) {
			iwarp_tx_buf_give(iqp);
			iwarp_tx_maybe_fin(iqp, s);
			return;
		}
	}
	iwarp_tx_kick(iqp);		/* let other QPs have the worker */
}

void iwarp_tx_work(struct work_struct *work)
{
	struct iwarp_qp *iqp = container_of(work, struct iwarp_qp, tx_work);

	mutex_lock(&iqp->tx_mutex);
	iwarp_tx_run(iqp, true);
	mutex_unlock(&iqp->tx_mutex);
}

void iwarp_tx_kick(struct iwarp_qp *iqp)
{
	queue_work(srdma_unbound_wq, &iqp->tx_work);
}

/*
 * New send WQEs: send them from the poster's own context when it may
 * sleep, which saves a hop to a worker that a busy CPU can delay by a
 * whole time slice; otherwise (or when tx is busy) leave it to the work.
 */
void iwarp_tx_post(struct iwarp_qp *iqp)
{
	/*
	 * Only a user doorbell (a syscall holding nothing) sends directly: a
	 * kernel consumer may post from a completion handler, in softirq,
	 * or inside an RCU section.
	 */
	if (iqp->qp->is_user && preemptible() &&
	    mutex_trylock(&iqp->tx_mutex)) {
		iwarp_tx_run(iqp, false);
		mutex_unlock(&iqp->tx_mutex);
		return;
	}
	iwarp_tx_kick(iqp);
}

void iwarp_tx_write_space(struct sock *sk)
{
	struct iwarp_ep *ep;

	read_lock_bh(&sk->sk_callback_lock);
	ep = sk->sk_user_data;
	if (ep && ep->qp && sk_stream_is_writeable(sk)) {
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		iwarp_tx_kick(to_iwqp(ep->qp));
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * From the close path, with the tx work stopped: finish the FPDU that
 * may be half out, then send the Terminate that rx queued. An idle
 * connection has no buffer: without memory for one it ends without the
 * Terminate, as it does when the Terminate cannot be sent.
 */
int iwarp_tx_terminate(struct iwarp_qp *iqp, struct socket *s)
{
	/* the whole of it, half an FPDU included, gets one second */
	unsigned long deadline = jiffies + IWARP_TERM_TIMEOUT;
	u8 *p;
	int err;

	mutex_lock(&iqp->tx_mutex);
	err = iwarp_tx_push(iqp, s, &deadline);
	if (err)
		goto out;
	if (!iwarp_tx_buf_take(iqp)) {
		err = -ENOMEM;
		goto out;
	}
	p = iwarp_fpdu_begin(iqp);
	iwarp_untagged((void *)p, RDMAP_TERMINATE, true, DDP_QN_TERMINATE,
		       iqp->msn_term++, 0, 0);
	p += sizeof(struct ddp_untagged_hdr);
	put_unaligned_be32(iqp->term_ctrl, p);
	memcpy(p + sizeof(struct rdmap_term), iqp->term_hdr,
	       iqp->term_hdr_len);
	iwarp_fpdu_end(iqp, sizeof(struct ddp_untagged_hdr) +
		    sizeof(struct rdmap_term) + iqp->term_hdr_len);
	err = iwarp_tx_push(iqp, s, &deadline);
out:
	mutex_unlock(&iqp->tx_mutex);
	return err;
}

/* A power-of-two ring of at least @n (at least one) entries, zeroed. */
static void *iwarp_ring_alloc(u32 n, size_t size, u32 *mask)
{
	n = roundup_pow_of_two(max_t(u32, n, 1));
	*mask = n - 1;
	return kcalloc(n, size, GFP_KERNEL);
}

/*
 * Before @ep attaches (process context, rx and tx quiet): size what the
 * connection needs. The buffer FPDUs are built in holds IWARP_TX_BUF_FPDUS
 * of them (a power of two, IWARP_TX_BUF_MIN to IWARP_TX_BUF_SIZE): 16 KiB for
 * the MSS of a 1500-byte MTU, 64 KiB from an MSS of about 4 KiB up; runs
 * take it when they have bytes to send.
 *
 * The ORD and IRD rings are sized by the negotiated ORD and IRD, not by
 * the most a connection may have: a thousand connections of IRD 1 hold
 * 48 bytes each, not 6 KiB. Without the RFC 6581 exchange the peer never
 * learnt our IRD, so that ring keeps room for the most we ever serve.
 * The rings only grow (a QP rarely connects twice) and go with the QP.
 */
int iwarp_tx_prepare(struct iwarp_qp *iqp, const struct iwarp_ep *ep,
		     u32 max_payload)
{
	u32 size = roundup_pow_of_two(IWARP_TX_BUF_FPDUS *
				      iwarp_fpdu_room_for(max_payload));
	u32 ird = ep->enhanced ? ep->conn.ird : IWARP_MAX_IRD;
	struct iwarp_rresp *ird_ring = NULL;
	u32 *orq_ring = NULL;
	u32 ird_mask = 0, orq_mask = 0;

	BUILD_BUG_ON(IWARP_MAX_FPDU + IWARP_MAX_HDR + 3 + MPA_CRC_SIZE >
		     IWARP_TX_BUF_SIZE);
	BUILD_BUG_ON(IWARP_TX_BUF_SIZE > SRDMA_SEND_PAGES_MAX);
	BUILD_BUG_ON(!is_power_of_2(IWARP_TX_BUF_MIN) ||
		     !is_power_of_2(IWARP_TX_BUF_SIZE));
	if (!iqp->orq || iqp->orq_mask + 1 < ep->conn.ord) {
		orq_ring = iwarp_ring_alloc(ep->conn.ord, sizeof(*orq_ring),
					    &orq_mask);
		if (!orq_ring)
			return -ENOMEM;
	}
	if (!iqp->ird || iqp->ird_mask + 1 < ird) {
		ird_ring = iwarp_ring_alloc(ird, sizeof(*ird_ring), &ird_mask);
		if (!ird_ring) {
			kfree(orq_ring);
			return -ENOMEM;
		}
	}

	mutex_lock(&iqp->tx_mutex);
	/*
	 * A detach gave back the last connection's buffer. One still held
	 * is a live connection's, sized for it: never resized under it.
	 */
	if (WARN_ON_ONCE(iqp->tx_buf)) {
		mutex_unlock(&iqp->tx_mutex);
		kfree(orq_ring);
		kfree(ird_ring);
		return -EBUSY;
	}
	iqp->tx_buf_size = clamp_t(u32, size, IWARP_TX_BUF_MIN,
				   IWARP_TX_BUF_SIZE);
	spin_lock_bh(&iqp->lock);
	/* detached: both rings are empty, their indices reset at attach */
	if (orq_ring) {
		swap(iqp->orq, orq_ring);
		iqp->orq_mask = orq_mask;
	}
	if (ird_ring) {
		swap(iqp->ird, ird_ring);
		iqp->ird_mask = ird_mask;
	}
	/*
	 * The ring only grows: what the peer may have outstanding is this
	 * connection's IRD (at least one, as the ring always held).
	 */
	iqp->ird_max = max_t(u32, ird, 1);
	spin_unlock_bh(&iqp->lock);
	mutex_unlock(&iqp->tx_mutex);
	kfree(orq_ring);
	kfree(ird_ring);
	return 0;
}

/* Detached, or destroyed: nothing sends from the buffer any more. */
void iwarp_tx_buf_free(struct iwarp_qp *iqp)
{
	mutex_lock(&iqp->tx_mutex);
	iqp->tx_len = 0;
	iqp->tx_off = 0;
	iwarp_tx_buf_give(iqp);
	mutex_unlock(&iqp->tx_mutex);
}

/* destroy_qp, after iwarp_tx_release: the rings go with the QP. */
void iwarp_tx_tables_free(struct iwarp_qp *iqp)
{
	kfree(iqp->orq);
	iqp->orq = NULL;
	kfree(iqp->ird);
	iqp->ird = NULL;
}

/* Drop what the transmit side holds: buffered bytes, owed responses. */
void iwarp_tx_release(struct iwarp_qp *iqp)
{
	while (iqp->ird_head != iqp->ird_tail) {
		struct iwarp_rresp *r = iwarp_ird_at(iqp, iqp->ird_head);

		if (r->mem)
			srdma_mem_put(r->mem);
		r->mem = NULL;
		iqp->ird_head++;
	}
	iqp->tx_len = 0;
	iqp->tx_off = 0;
}

void iwarp_tx_reset(struct iwarp_qp *iqp)
{
	iwarp_tx_release(iqp);
	iqp->ird_head = 0;
	iqp->ird_tail = 0;
	iqp->orq_head = 0;
	iqp->orq_tail = 0;
	iqp->msn_send = 1;
	iqp->msn_rreq = 1;
	iqp->msn_term = 1;
	iqp->msn_aresp = 1;
	iqp->term_pending = false;
	iqp->draining = false;
	iqp->fin_sent = false;
}
