// SPDX-License-Identifier: GPL-2.0
/*
 * iWARP Terminate (RFC 5040 5.4): what ends a stream on a protocol or
 * access error. Queuing one and sending it happen in different contexts
 * and files; this is the whole path:
 *
 *  1. rx (__iwarp_rx_fail: a bad FPDU, softirq under the socket lock) or
 *     tx (a Read Response whose source STag fails its check as the FPDU
 *     is built, under tx_mutex) calls iwarp_terminate(), here: it records
 *     the Terminate in the QP and moves the QP to ERR. Neither caller
 *     may write it to the socket then: rx may run in softirq, and tx may
 *     have an FPDU half out.
 *  2. srdma_qp_error() (core) calls the transport's qp_error hook,
 *     iwarp_qp_error() (iwarp.c), which queues the endpoint's close work
 *     (cm.c), asking for no reset while a Terminate is pending; the
 *     core's flush then flushes the receive rx held for a SEND in
 *     progress (iwarp_qp_recv_flush()) before the ring's.
 *  3. The close work (iwarp_close_work, cm.c), in process context:
 *     iwarp_rx_drain() (rx.c) reads nothing more for a QP in ERR; in a
 *     graceful close it reads the last bytes, and a fault found there
 *     queues its Terminate as in step 1, for this close to send. The
 *     socket gets its callbacks back, so rx cannot run again, and
 *     iwarp_close_stop_tx() waits for tx to be done with the socket and
 *     takes the pending Terminate. iwarp_close_terminate() has
 *     iwarp_tx_terminate() (tx.c) finish the FPDU that may be half sent
 *     and send the Terminate with the other FPDUs' framing, unless the
 *     peer closed its side. Then iwarp_rx_flush() (rx.c) flushes the
 *     receive a graceful close left held, srdma_qp_closed() the rest,
 *     and the socket closes with a FIN so the Terminate reaches the
 *     peer.
 *
 * iwarp_terminate() serves rx and tx alike and belongs to neither, hence a
 * file of its own; the FPDU that carries it is built in tx.c, with the
 * others.
 */
#include "iwarp.h"

/*
 * Queue a Terminate for the close path to send, then fail the QP; its
 * error hook closes the connection. @hdr, @hdr_len: the FPDU at fault,
 * from its MPA length field, quoted back (0: none). Only the first
 * Terminate of a connection is kept. Any context but hard interrupt.
 */
void iwarp_terminate(struct iwarp_qp *iqp, u8 layer, u8 etype, u8 code,
		     const u8 *hdr, u32 hdr_len)
{
	u32 ctrl = (u32)layer << TERM_LAYER_SHIFT |
		   (u32)etype << TERM_ETYPE_SHIFT |
		   (u32)code << TERM_CODE_SHIFT;

	if (hdr_len) {
		/* the MPA length doubles as the DDP segment length */
		ctrl |= TERM_FLAG_M | TERM_FLAG_D;
		if (hdr_len > MPA_LEN_SIZE + sizeof(struct ddp_untagged_hdr) &&
		    (hdr[3] & RDMAP_OPCODE_MASK) == RDMAP_READ_REQ)
			ctrl |= TERM_FLAG_R;
		else
			hdr_len = min_t(u32, hdr_len, MPA_LEN_SIZE +
					sizeof(struct ddp_untagged_hdr));
	}
	spin_lock_bh(&iqp->lock);
	if (!iqp->term_pending) {
		iqp->term_pending = true;
		iqp->term_ctrl = ctrl;
		iqp->term_hdr_len = hdr_len;
		memcpy(iqp->term_hdr, hdr, hdr_len);
	}
	spin_unlock_bh(&iqp->lock);
	srdma_qp_error(iqp->qp);
}
