/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The iWARP transport: RDMAP over DDP over MPA over a kernel TCP socket.
 *
 * cm.c      iw_cm hooks: listen, connect, accept, reject, close
 * mpa.c     MPA request/reply exchange and parameter negotiation
 * rx.c      FPDU receive: parse from the socket, place into memory
 * tx.c      FPDU transmit: send queue, read responses, terminate
 * terminate.c  queue a Terminate and fail the QP (the path, step by step)
 * iwarp.c   transport hooks and per-QP state
 * net.c     sockets per network namespace, ended by its pernet exit
 *
 * A connection endpoint (struct iw_ep) owns the socket from the first
 * SYN until close. Once MPA is done it is attached to its QP and the
 * socket's callbacks feed rx.c (softirq) and tx.c (a work item).
 */
#ifndef SRDMA_IWARP_H
#define SRDMA_IWARP_H

#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <rdma/iw_cm.h>

#include "../core/transport.h"
#include "iwarp_wire.h"

/* Longest header an FPDU can start with: untagged + atomic request. */
#define IW_MAX_HDR	(MPA_LEN_SIZE + sizeof(struct ddp_untagged_hdr) + \
			 sizeof(struct rdmap_atomic_req))
#define IW_TX_BUF_SIZE	(64 * 1024)	/* the most a transmit buffer holds */
#define IW_TX_BUF_MIN	(4 * 1024)	/* the least, for the smallest MSS */
#define IW_TX_BUF_FPDUS	8		/* full FPDUs it holds, below that */
#define IW_MAX_FPDU	(16 * 1024)	/* cap on one FPDU, below the buffer */
#define IW_MPA_TIMEOUT	(10 * HZ)	/* whole set-up: TCP connect and MPA */
#define IW_ACCEPT_TIMEOUT IW_MPA_TIMEOUT /* a request iw_cm leaves unanswered */
#define IW_MAX_HALF_OPEN 64		/* per listener, in MPA set-up */
#define IW_ACCEPT_BUDGET 32		/* connections per accept work run */
#define IW_CLOSE_TIMEOUT (5 * HZ)	/* graceful close before abort */
#define IW_TERM_TIMEOUT	HZ		/* sending a Terminate, in all */
#define IW_MAX_LISTEN	16		/* addresses behind one wildcard */
#define IW_MAX_ORD	SRDMA_MAX_RD_ATOMIC
#define IW_MAX_IRD	SRDMA_MAX_RD_ATOMIC

extern bool srdma_iw_crc;

enum iw_ep_state {
	IW_EP_CONNECTING,	/* active: TCP connect under way */
	IW_EP_SETUP,		/* MPA exchange */
	IW_EP_AWAIT_ACCEPT,	/* passive: request handed to iw_cm */
	IW_EP_CONNECTED,	/* attached to its QP, FPDUs flow */
	IW_EP_DRAINING,		/* graceful close: FIN sent, awaiting peer */
	IW_EP_CLOSING,		/* close work queued */
	IW_EP_CLOSED,
};

struct iw_listener;
struct iw_net;

/*
 * An endpoint's address: what TCP gives back for its socket, IPv4 or
 * IPv6. 28 bytes where a sockaddr_storage takes 128.
 */
union iw_addr {
	struct sockaddr sa;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

/* iw_ep.flags: set-up events, set from callbacks and timers */
enum {
	IW_EPF_TIMEOUT,		/* the set-up deadline passed */
	IW_EPF_ABORT,		/* listener stop, QP reset or destroy */
	IW_EPF_SETUP_DONE,	/* set-up over: nothing more to do for it */
	IW_EPF_OFFERED,		/* passive: handed to iw_cm (iw_requests) */
};

/* Negotiated connection parameters. */
struct iw_conn {
	bool crc;
	bool atomics;
	u16 ird;		/* reads/atomics we serve at once */
	u16 ord;		/* reads/atomics we have outstanding at once */
};

struct iw_ep {
	struct kref ref;
	spinlock_t lock;		/* state */
	enum iw_ep_state state;
	bool active;
	bool peer_closed;		/* FIN seen: DISCONNECT before CLOSE */
	bool abort;			/* close with RST */
	bool close_req;			/* close asked for before CONNECTED */
	unsigned long flags;		/* IW_EPF_* */
	u32 handle;			/* passive: its key in iw_requests */

	struct srdma_dev *dev;
	struct socket *sock;
	struct iw_cm_id *cm_id;		/* referenced with add_ref */
	struct srdma_qp *qp;		/* referenced while attached */
	struct iw_listener *listener;	/* passive, until handed over */
	struct iw_net *inet;		/* while it owns a socket */
	struct list_head net_node;	/* on inet's list, likewise */
	unsigned int net_pass;		/* the netns exit's last look */

	/*
	 * Set-up never blocks a worker: socket callbacks and the deadline
	 * timer queue setup_work, which takes what the socket has and
	 * returns. Each queued instance holds a reference of its own.
	 */
	struct work_struct setup_work;
	struct timer_list timer;	/* set-up deadline */
	struct list_head half_open;	/* passive: on the listener's list */
	struct delayed_work close_work;

	struct mpa_frame mpa;		/* the peer's frame header */
	u16 mpa_have;			/* bytes of header + pdata in */

	struct iw_conn conn;
	u8 rev;				/* MPA revision of the request */
	bool enhanced;			/* RFC 6581 IRD/ORD exchanged */
	u8 req_flags;			/* flags of the MPA request */
	/*
	 * Private data in flight, set-up only: ours until the request is
	 * sent (active), then the peer's until the event that hands it to
	 * iw_cm, which copies it. Allocated to its length, freed then
	 * (iw_ep_pdata_free()): a connection does not carry it.
	 */
	u16 pd_len;
	u8 *pdata;
	union iw_addr laddr, raddr;

	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
};

struct iw_listener {
	struct kref ref;
	struct srdma_dev *dev;
	struct iw_cm_id *cm_id;		/* referenced with add_ref */
	struct net *net;		/* its sockets', counted in inet */
	struct work_struct accept_work;
	int nsocks;
	struct socket *socks[IW_MAX_LISTEN];
	void (*saved_data_ready)(struct sock *sk);
	bool dying;
	struct mutex stop_lock;		/* stop runs once, others wait */
	bool stopped;
	struct iw_net *inet;		/* until stopped */
	struct list_head net_node;	/* on inet's list, likewise */
	unsigned int net_pass;		/* the netns exit's last look */
	spinlock_t lock;		/* half_open, nhalf */
	struct list_head half_open;	/* endpoints in MPA set-up */
	u32 nhalf;
	wait_queue_head_t wq;		/* stop waits for nhalf == 0 */
};

enum iw_rx_state {
	IW_RX_HDR,		/* collecting MPA length and headers */
	IW_RX_DATA,		/* payload of the current FPDU */
	IW_RX_TRAILER,		/* pad and CRC */
	IW_RX_DEAD,		/* after a protocol error: discard */
};

/*
 * A read (or atomic) this side owes its peer. A QP keeps up to its IRD
 * of them, so the two kinds share their fields: 48 bytes, not 64.
 */
struct iw_rresp {
	struct srdma_mem *mem;		/* read: NULL for zero length */
	union {
		struct {		/* read */
			u64 src_to;
			u64 sink_to;
			u32 src_stag;	/* checked again for every FPDU */
			u32 size;
			u32 sent;
			u32 sink_stag;
		};
		struct {		/* atomic */
			u64 orig;	/* value before the operation */
			u32 req_id;
		};
	};
	bool atomic;
};

struct iw_rx {
	enum iw_rx_state state;
	u8 hdr[IW_MAX_HDR];
	u32 hdr_have;
	u32 hdr_need;
	u32 data_left;
	u32 trailer_have;
	u32 trailer_need;
	u8 trailer[8];
	u32 crc;

	u8 opcode;
	bool last;
	bool discard;			/* payload nobody wants (terminate) */
	u32 msn[DDP_QN_COUNT];		/* next expected, per queue */

	/* tagged WRITE placement */
	struct srdma_mem *mem;
	u64 iova;

	/* untagged SEND placement */
	struct srdma_recv recv;

	/* READ response placement into the oldest outstanding READ */
	struct srdma_sge_cursor rd_cur;
	bool rd_active;
};

struct iw_qp {
	struct srdma_qp *qp;
	spinlock_t lock;		/* ep, sock, orq, ird ring, term */
	struct iw_ep *ep;		/* referenced while attached */
	/*
	 * The one endpoint that may attach, from connect/accept until its
	 * set-up fails or its close work is done; reset and destroy take
	 * it back from a set-up, and wait on detach_wq for a close.
	 */
	struct iw_ep *claim;
	bool claim_attached;		/* its close work will unclaim */
	wait_queue_head_t detach_wq;
	struct socket *sock;
	struct iw_conn conn;
	u32 max_payload;		/* per FPDU, from the TCP MSS */
	bool draining;			/* SQD: FIN once the SQ is sent */
	bool released;			/* destroy_qp: never attach again */
	bool fin_sent;

	struct iw_rx rx;

	/* terminate to send before the connection closes */
	bool term_pending;
	u32 term_ctrl;
	u8 term_hdr_len;
	u8 term_hdr[IW_MAX_HDR];

	/* transmit: whoever holds tx_mutex is the only writer */
	struct work_struct tx_work;
	struct mutex tx_mutex;		/* one writer on the socket */
	u8 *tx_buf;			/* while it holds unsent bytes */
	u32 tx_buf_size;		/* for this connection's MSS */
	u32 tx_len;
	u32 tx_off;
	u32 tx_idx;			/* next SQ WQE to put on the wire */
	u32 tx_complete;		/* next SQ WQE to complete when pushed */
	u32 tx_complete_end;		/* ...up to here, once tx_buf is out */
	u32 msn_send;
	u32 msn_rreq;
	u32 msn_term;
	u32 msn_aresp;
	u32 next_req_id;

	/*
	 * Outstanding READ/atomic WQEs (SQ indices), oldest first, and the
	 * read/atomic responses owed to the peer: rings of a power of two
	 * entries, at least the ORD and IRD of the connection (iw_tx_prepare).
	 */
	u32 *orq;
	u32 orq_mask;
	u32 orq_head, orq_tail;
	struct iw_rresp *ird;
	u32 ird_mask;
	u32 ird_head, ird_tail;
};

static inline u32 *iw_orq_at(struct iw_qp *iqp, u32 i)
{
	return &iqp->orq[i & iqp->orq_mask];
}

static inline struct iw_rresp *iw_ird_at(struct iw_qp *iqp, u32 i)
{
	return &iqp->ird[i & iqp->ird_mask];
}

static inline struct iw_qp *to_iwqp(struct srdma_qp *qp)
{
	return qp->tp_priv;
}

/* The payload of one FPDU on a TCP connection with this MSS. */
static inline u32 iw_max_payload(u32 mss)
{
	return (mss - MPA_LEN_SIZE - MPA_CRC_SIZE -
		sizeof(struct ddp_untagged_hdr)) & ~3U;
}

/* iWARP's part of a send WQE (its tp_priv). Zero when fetched. */
struct iw_swqe {
	u32 atomic_req_id;		/* an atomic's, echoed by its response */
};

static inline struct iw_swqe *to_iwswqe(struct srdma_swqe *w)
{
	BUILD_BUG_ON(sizeof(struct iw_swqe) > sizeof(w->tp_priv));
	return (struct iw_swqe *)w->tp_priv;
}

/* An RDMA READ, with or without invalidating its sink when done. */
static inline bool iw_wr_is_read(u32 opcode)
{
	return opcode == IB_WR_RDMA_READ ||
	       opcode == IB_WR_RDMA_READ_WITH_INV;
}

/* cm.c */
int srdma_iw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int srdma_iw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int srdma_iw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len);
int srdma_iw_create_listen(struct iw_cm_id *id, int backlog);
int srdma_iw_destroy_listen(struct iw_cm_id *id);
void iw_ep_close(struct iw_ep *ep, bool abort);
void iw_ep_drain(struct iw_ep *ep);
void iw_ep_put(struct iw_ep *ep);
void iw_ep_pdata_free(struct iw_ep *ep);
void iw_ep_abort(struct iw_ep *ep);
void iw_qp_detach(struct srdma_qp *qp);
void iw_requests_flush(struct srdma_dev *dev);
void iw_requests_flush_net(struct iw_net *in);
void iw_ep_net_down(struct iw_ep *ep);
void iw_listener_stop(struct iw_listener *l);
void iw_listener_put(struct iw_listener *l);

/* net.c */
int srdma_iw_net_init(void);
void srdma_iw_net_exit(void);
int iw_sock_create(struct net *net, int family, struct socket **out);
int iw_net_ep_enter(struct iw_ep *ep, struct net *net);
void iw_net_ep_leave(struct iw_ep *ep);
void iw_ep_sock_close(struct iw_ep *ep, bool abort);
int iw_net_listener_enter(struct iw_listener *l);
void iw_net_listener_leave(struct iw_listener *l);
bool iw_net_dying(struct iw_net *in);

/* mpa.c */
int iw_sock_send(struct socket *s, const void *buf, size_t len);
int iw_mpa_send(struct iw_ep *ep, bool request, bool reject,
		const void *pdata, u8 pdata_len);
int iw_mpa_recv_request(struct iw_ep *ep);
int iw_mpa_recv_reply(struct iw_ep *ep, bool *rejected);
int iw_mpa_check_hdr(const struct mpa_frame *f, const char *key);
int iw_mpa_take_request(struct iw_ep *ep);
int iw_mpa_take_reply(struct iw_ep *ep, bool *rejected);

/* rx.c */
int iw_rx_hdr_len(u8 ddp, u8 rdmap);
void iw_rx_data_ready(struct sock *sk);
void iw_rx_start(struct iw_qp *iqp, struct socket *s);
void iw_rx_reset(struct iw_qp *iqp);
void iw_rx_release(struct iw_qp *iqp);
void iw_rx_drain(struct iw_qp *iqp, struct sock *sk, bool read);
void iw_rx_flush(struct iw_qp *iqp);
u8 iw_rdmap_key_code(int err);

/* terminate.c */
void iw_terminate(struct iw_qp *iqp, u8 layer, u8 etype, u8 code,
		  const u8 *hdr, u32 hdr_len);

/* tx.c */
void iw_tx_work(struct work_struct *work);
void iw_tx_write_space(struct sock *sk);
void iw_tx_kick(struct iw_qp *iqp);
void iw_tx_post(struct iw_qp *iqp);
int iw_tx_terminate(struct iw_qp *iqp, struct socket *s);
int iw_tx_prepare(struct iw_qp *iqp, const struct iw_ep *ep, u32 max_payload);
void iw_tx_buf_free(struct iw_qp *iqp);
void iw_tx_tables_free(struct iw_qp *iqp);
void iw_tx_pool_drain(void);
void iw_tx_reset(struct iw_qp *iqp);
void iw_tx_release(struct iw_qp *iqp);
u32 iw_fpdu_seal(u8 *start, u32 ulpdu_len, bool crc);

/* observe.c */
struct rdma_cm_id;
void iw_obs_connect(struct iw_ep *ep);
int iw_obs_mpa_sent(struct iw_ep *ep, bool request, bool reject, int err);
void iw_obs_setup(struct iw_ep *ep, int err);
void iw_obs_close(struct iw_ep *ep);
int iw_fill_res_qp(struct sk_buff *msg, struct srdma_qp *qp);
int iw_fill_res_cm_id_entry(struct sk_buff *msg, struct rdma_cm_id *id);

#endif /* SRDMA_IWARP_H */
