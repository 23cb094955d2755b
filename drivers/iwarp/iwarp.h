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
 * A connection endpoint (struct iwarp_ep) owns the socket from the first
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

/*
 * iWARP's device counters, after the core's (iwarp_counter_names in
 * observe.c; Documentation/debugging.rst says what each counts).
 */
enum iwarp_counter {
	IWARP_CNT_CONNECTIONS,		/* MPA done, FPDUs flow */
	IWARP_CNT_CRC_CONNECTIONS,	/* ...of them with MPA CRC */
	IWARP_CNT_TERMINATE_SENT,
	IWARP_CNT_TERMINATE_RCVD,
	IWARP_CNT_SETUP_REFUSED,	/* listener full of half-open ones */
	IWARP_CNT_SETUP_TIMEOUT,	/* connect + MPA past their time */
	IWARP_CNT_CONNECTS,		/* active connects started */
	IWARP_CNT_ACCEPTS,
	IWARP_CNT_REJECTS_SENT,
	IWARP_CNT_REJECTS_RCVD,
	IWARP_CNT_MPA_FAILURES,		/* MPA frames refused, either side */
	IWARP_CNT_ABORTS,		/* connections closed with a RST */
	IWARP_CNT_BACKLOG_REFUSED,	/* waited for backlog room in vain */
	IWARP_CNT_ACCEPT_PAUSED,	/* listener left its TCP queue alone */
	IWARP_CNT_TX_SPLICED_BYTES,	/* FPDU bytes TCP took by reference */
	IWARP_CNT_TX_COPIED_BYTES,	/* ...and those it copied */
	IWARP_CNT_MAX,
};

static inline void iwarp_count(struct srdma_dev *dev, enum iwarp_counter c)
{
	srdma_tp_count(dev, c);
}

static inline void iwarp_count_add(struct srdma_dev *dev,
				   enum iwarp_counter c, u64 n)
{
	srdma_tp_count_add(dev, c, n);
}

/* Longest header an FPDU can start with: untagged + atomic request. */
#define IWARP_MAX_HDR	(MPA_LEN_SIZE + sizeof(struct ddp_untagged_hdr) + \
			 sizeof(struct rdmap_atomic_req))
#define IWARP_TX_BUF_SIZE (64 * 1024)	/* the most a transmit buffer holds */
#define IWARP_TX_BUF_MIN (4 * 1024)	/* the least, for the smallest MSS */
#define IWARP_TX_BUF_FPDUS 8		/* full FPDUs it holds, below that */
#define IWARP_MAX_FPDU	(16 * 1024)	/* cap on one FPDU, below the buffer */
#define IWARP_MPA_TIMEOUT (10 * HZ)	/* whole set-up: TCP connect and MPA */
/* a request iw_cm leaves unanswered */
#define IWARP_ACCEPT_TIMEOUT IWARP_MPA_TIMEOUT
#define IWARP_MAX_HALF_OPEN 64		/* per listener, in MPA set-up */
#define IWARP_MAX_BACKLOG 1024		/* ucma's default max_backlog */
#define IWARP_ACCEPT_BUDGET 32		/* connections per accept work run */
#define IWARP_CLOSE_TIMEOUT (5 * HZ)	/* graceful close before abort */
#define IWARP_TERM_TIMEOUT HZ		/* sending a Terminate, in all */
#define IWARP_MAX_LISTEN 16		/* addresses behind one wildcard */
#define IWARP_MAX_ORD	SRDMA_MAX_RD_ATOMIC
#define IWARP_MAX_IRD	SRDMA_MAX_RD_ATOMIC

extern bool srdma_iw_crc;

enum iwarp_ep_state {
	IWARP_EP_CONNECTING,	/* active: TCP connect under way */
	IWARP_EP_SETUP,		/* MPA exchange */
	IWARP_EP_AWAIT_ACCEPT,	/* passive: request handed to iw_cm */
	IWARP_EP_CONNECTED,	/* attached to its QP, FPDUs flow */
	IWARP_EP_DRAINING,	/* graceful close: FIN sent, awaiting peer */
	IWARP_EP_CLOSING,	/* close work queued */
	IWARP_EP_CLOSED,
};

struct iwarp_listener;
struct iwarp_net;

/*
 * An endpoint's address: what TCP gives back for its socket, IPv4 or
 * IPv6. 28 bytes where a sockaddr_storage takes 128.
 */
union iwarp_addr {
	struct sockaddr sa;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

/* iwarp_ep.flags: set-up events, set from callbacks and timers */
enum {
	IWARP_EPF_TIMEOUT,	/* the set-up deadline passed */
	IWARP_EPF_ABORT,	/* listener stop, QP reset or destroy */
	IWARP_EPF_SETUP_DONE,	/* set-up over: nothing more to do for it */
	IWARP_EPF_OFFERED,	/* passive: handed to iw_cm (iwarp_requests) */
};

/* Negotiated connection parameters. */
struct iwarp_conn {
	bool crc;
	bool atomics;
	u16 ird;		/* reads/atomics we serve at once */
	u16 ord;		/* reads/atomics we have outstanding at once */
};

struct iwarp_ep {
	struct kref ref;
	spinlock_t lock;		/* state */
	enum iwarp_ep_state state;
	bool active;
	bool peer_closed;		/* FIN seen: DISCONNECT before CLOSE */
	bool abort;			/* close with RST */
	bool close_req;			/* close asked for before CONNECTED */
	unsigned long flags;		/* IWARP_EPF_* */
	u32 handle;			/* passive: its key in iwarp_requests */

	struct srdma_dev *dev;
	struct socket *sock;
	struct iw_cm_id *cm_id;			/* referenced with add_ref */
	struct srdma_qp *qp;			/* referenced while attached */
	struct iwarp_listener *listener;	/* passive, until handed over */
	struct iwarp_listener *req_listener;	/* while in iwarp_requests */
	struct iwarp_net *inet;			/* while it owns a socket */
	struct list_head net_node;		/* on inet's list, likewise */
	unsigned int net_pass;			/* the netns exit's last look */

	/*
	 * Set-up never blocks a worker: socket callbacks and the deadline
	 * timer queue setup_work, which takes what the socket has and
	 * returns. Each queued instance holds a reference of its own.
	 */
	struct work_struct setup_work;
	struct timer_list timer;	/* set-up deadline */
	struct list_head half_open;	/* passive: on the listener's list */
	struct list_head wait_node;	/* ...and its waiting list, if full */
	struct delayed_work close_work;

	struct mpa_frame mpa;		/* the peer's frame header */
	u16 mpa_have;			/* bytes of header + pdata in */

	struct iwarp_conn conn;
	u8 rev;				/* MPA revision of the request */
	bool enhanced;			/* RFC 6581 IRD/ORD exchanged */
	u8 req_flags;			/* flags of the MPA request */
	bool req_in;			/* passive: its MPA request is in */
	/*
	 * Private data in flight, set-up only: ours until the request is
	 * sent (active), then the peer's until the event that hands it to
	 * iw_cm, which copies it. Allocated to its length, freed then
	 * (iwarp_ep_pdata_free()): a connection does not carry it.
	 */
	u16 pd_len;
	u8 *pdata;
	union iwarp_addr laddr, raddr;

	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
};

struct iwarp_listener {
	struct kref ref;
	struct srdma_dev *dev;
	struct iw_cm_id *cm_id;		/* add_ref'd until destroy_listen */
	struct net *net;		/* its sockets', counted in inet */
	struct work_struct accept_work;
	int nsocks;
	struct socket *socks[IWARP_MAX_LISTEN];
	void (*saved_data_ready)(struct sock *sk);
	bool dying;
	struct mutex stop_lock;		/* stop runs once, others wait */
	bool stopped;
	struct iwarp_net *inet;		/* until stopped */
	struct list_head net_node;	/* on inet's list, likewise */
	unsigned int net_pass;		/* the netns exit's last look */
	spinlock_t lock;		/* lists, counts below; sets dying */
	struct list_head half_open;	/* endpoints in MPA set-up */
	u32 nhalf;
	wait_queue_head_t wq;		/* stop waits for nhalf == 0 */
	u32 backlog;			/* most requests it holds unanswered */
	/* backlog slots taken: requests in iwarp_requests or about to be */
	u32 npending;
	/* set-ups whose request is in, waiting for a slot, oldest first */
	struct list_head waiting;
	bool accept_paused;		/* backlog full: accept_work stopped */
};

enum iwarp_rx_state {
	IWARP_RX_HDR,		/* collecting MPA length and headers */
	IWARP_RX_DATA,		/* payload of the current FPDU */
	IWARP_RX_TRAILER,	/* pad and CRC */
	IWARP_RX_DEAD,		/* after a protocol error: discard */
};

/*
 * A read (or atomic) this side owes its peer. A QP keeps up to its IRD
 * of them, so the two kinds share their fields: 48 bytes, not 64.
 */
struct iwarp_rresp {
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

struct iwarp_rx {
	enum iwarp_rx_state state;
	u8 hdr[IWARP_MAX_HDR];
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
	u32 stag;
	u64 iova;

	/* untagged SEND placement */
	struct srdma_recv recv;

	/* READ response placement into the oldest outstanding READ */
	struct srdma_sge_cursor rd_cur;
	bool rd_active;
};

struct iwarp_qp {
	struct srdma_qp *qp;
	spinlock_t lock;		/* ep, sock, orq, ird ring, term */
	spinlock_t recv_lock;		/* rx.recv: rx vs. the error hooks */
	struct iwarp_ep *ep;		/* referenced while attached */
	/*
	 * The one endpoint that may attach, from connect/accept until its
	 * set-up fails or its close work is done; reset and destroy take
	 * it back from a set-up, and wait on detach_wq for a close.
	 */
	struct iwarp_ep *claim;
	bool claim_attached;		/* its close work will unclaim */
	wait_queue_head_t detach_wq;
	struct socket *sock;
	struct iwarp_conn conn;
	u32 max_payload;		/* per FPDU, from the TCP MSS */
	bool draining;			/* SQD: FIN once the SQ is sent */
	bool released;			/* destroy_qp: never attach again */
	bool fin_sent;

	struct iwarp_rx rx;

	/* terminate to send before the connection closes */
	bool term_pending;
	u32 term_ctrl;
	u8 term_hdr_len;
	u8 term_hdr[IWARP_MAX_HDR];

	/* transmit: whoever holds tx_mutex is the only writer */
	struct work_struct tx_work;
	struct mutex tx_mutex;		/* one writer on the socket */
	u8 *tx_buf;			/* while it holds unsent bytes */
	struct page *tx_page;		/* its pages, unless kvmalloc'ed */
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
	 * entries, at least the ORD and IRD of the connection
	 * (iwarp_tx_prepare).
	 */
	u32 *orq;
	u32 orq_mask;
	u32 orq_head, orq_tail;
	struct iwarp_rresp *ird;
	u32 ird_mask;
	u32 ird_head, ird_tail;
	u32 ird_max;			/* the IRD of this connection */
};

static inline u32 *iwarp_orq_at(struct iwarp_qp *iqp, u32 i)
{
	return &iqp->orq[i & iqp->orq_mask];
}

static inline struct iwarp_rresp *iwarp_ird_at(struct iwarp_qp *iqp, u32 i)
{
	return &iqp->ird[i & iqp->ird_mask];
}

static inline struct iwarp_qp *to_iwqp(struct srdma_qp *qp)
{
	return qp->tp_priv;
}

/* The payload of one FPDU on a TCP connection with this MSS. */
static inline u32 iwarp_max_payload(u32 mss)
{
	return (mss - MPA_LEN_SIZE - MPA_CRC_SIZE -
		sizeof(struct ddp_untagged_hdr)) & ~3U;
}

/* iWARP's part of a send WQE (its tp_priv). Zero when fetched. */
struct iwarp_swqe {
	u32 atomic_req_id;		/* an atomic's, echoed by its response */
};

static inline struct iwarp_swqe *to_iwswqe(struct srdma_swqe *w)
{
	BUILD_BUG_ON(sizeof(struct iwarp_swqe) > sizeof(w->tp_priv));
	return (struct iwarp_swqe *)w->tp_priv;
}

/* An RDMA READ, with or without invalidating its sink when done. */
static inline bool iwarp_wr_is_read(u32 opcode)
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
void iwarp_ep_close(struct iwarp_ep *ep, bool abort);
void iwarp_ep_drain(struct iwarp_ep *ep);
void iwarp_ep_put(struct iwarp_ep *ep);
void iwarp_ep_pdata_free(struct iwarp_ep *ep);
void iwarp_ep_abort(struct iwarp_ep *ep);
void iwarp_qp_detach(struct srdma_qp *qp);
void iwarp_requests_flush(struct srdma_dev *dev);
void iwarp_requests_flush_net(struct iwarp_net *in);
void iwarp_ep_net_down(struct iwarp_ep *ep);
void iwarp_listener_stop(struct iwarp_listener *l);
void iwarp_listener_put(struct iwarp_listener *l);

/* net.c */
int srdma_iw_net_init(void);
void srdma_iw_net_exit(void);
int iwarp_sock_create(struct net *net, int family, struct socket **out);
int iwarp_net_ep_enter(struct iwarp_ep *ep, struct net *net);
void iwarp_net_ep_leave(struct iwarp_ep *ep);
void iwarp_ep_sock_close(struct iwarp_ep *ep, bool abort);
int iwarp_net_listener_enter(struct iwarp_listener *l);
void iwarp_net_listener_leave(struct iwarp_listener *l);
bool iwarp_net_dying(struct iwarp_net *in);

/* mpa.c */
int iwarp_sock_send(struct socket *s, const void *buf, size_t len);
int iwarp_mpa_send(struct iwarp_ep *ep, bool request, bool reject,
		   const void *pdata, u8 pdata_len);
int iwarp_mpa_recv_request(struct iwarp_ep *ep);
int iwarp_mpa_recv_reply(struct iwarp_ep *ep, bool *rejected);
int iwarp_mpa_check_hdr(const struct mpa_frame *f, const char *key);
int iwarp_mpa_take_request(struct iwarp_ep *ep);
int iwarp_mpa_take_reply(struct iwarp_ep *ep, bool *rejected);

/* rx.c */
int iwarp_rx_hdr_len(u8 ddp, u8 rdmap);
void iwarp_rx_data_ready(struct sock *sk);
void iwarp_rx_start(struct iwarp_qp *iqp, struct socket *s);
void iwarp_rx_reset(struct iwarp_qp *iqp);
void iwarp_rx_release(struct iwarp_qp *iqp);
void iwarp_rx_drain(struct iwarp_qp *iqp, struct sock *sk, bool read);
void iwarp_rx_flush(struct iwarp_qp *iqp);
void iwarp_rx_recv_flush(struct iwarp_qp *iqp);
u8 iwarp_rdmap_key_code(int err);

/* terminate.c */
void iwarp_terminate(struct iwarp_qp *iqp, u8 layer, u8 etype, u8 code,
		     const u8 *hdr, u32 hdr_len);

/* tx.c */
void iwarp_tx_work(struct work_struct *work);
void iwarp_tx_write_space(struct sock *sk);
void iwarp_tx_kick(struct iwarp_qp *iqp);
void iwarp_tx_post(struct iwarp_qp *iqp);
int iwarp_tx_terminate(struct iwarp_qp *iqp, struct socket *s);
int iwarp_tx_prepare(struct iwarp_qp *iqp, const struct iwarp_ep *ep,
		     u32 max_payload);
void iwarp_tx_buf_free(struct iwarp_qp *iqp);
void iwarp_tx_pool_drain(void);
void iwarp_tx_tables_free(struct iwarp_qp *iqp);
void iwarp_tx_reset(struct iwarp_qp *iqp);
void iwarp_tx_release(struct iwarp_qp *iqp);
u32 iwarp_fpdu_seal(u8 *start, u32 ulpdu_len, bool crc);

/* observe.c */
extern const char *const iwarp_counter_names[IWARP_CNT_MAX];
struct rdma_cm_id;
void iwarp_obs_connect(struct iwarp_ep *ep);
int iwarp_obs_mpa_sent(struct iwarp_ep *ep, bool request, bool reject, int err);
void iwarp_obs_setup(struct iwarp_ep *ep, int err);
void iwarp_obs_close(struct iwarp_ep *ep);
int iwarp_fill_res_qp(struct sk_buff *msg, struct srdma_qp *qp);
int iwarp_fill_res_cm_id_entry(struct sk_buff *msg, struct rdma_cm_id *id);

#endif /* SRDMA_IWARP_H */
