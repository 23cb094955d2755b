/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 transport internals: the opcode table, per-QP protocol state
 * and the seams between requester (req.c), completer (comp.c),
 * responder (resp.c), packet I/O (net.c) and receive dispatch (recv.c).
 */
#ifndef SRDMA_ROCE_H
#define SRDMA_ROCE_H

#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/dst_cache.h>

#include "../core/transport.h"
#include "roce_wire.h"

/* Multicast: groups per device, QPs per group (mcast.c). */
#define SRDMA_MAX_MCAST_GRP	8192
#define SRDMA_MAX_MCAST_QP_ATTACH 56

struct roce_net;

/*
 * RoCE's device counters, after the core's (roce_counter_names in
 * observe.c; Documentation/debugging.rst says what each counts).
 */
enum roce_counter {
	ROCE_CNT_RX_BAD_QP,
	ROCE_CNT_RETRANSMITS,
	ROCE_CNT_RX_DUPLICATE,
	ROCE_CNT_SEQ_NAK_SENT,
	ROCE_CNT_RNR_NAK_SENT,
	ROCE_CNT_RETRY_EXCEEDED,
	ROCE_CNT_RX_REORDER_HELD,	/* RC packets held past a PSN gap */
	ROCE_CNT_RETRANSMIT_PROBES,	/* single-packet resends after a NAK */
	ROCE_CNT_RETRANSMIT_TIMEOUTS,	/* the retransmit timer fired */
	ROCE_CNT_RNR_RETRY_EXCEEDED,
	ROCE_CNT_ACCESS_NAK_SENT,	/* the other NAKs sent, by kind */
	ROCE_CNT_INV_REQ_NAK_SENT,
	ROCE_CNT_REM_OP_NAK_SENT,
	ROCE_CNT_SEQ_NAK_RCVD,		/* NAKs received, by kind */
	ROCE_CNT_RNR_NAK_RCVD,
	ROCE_CNT_ACCESS_NAK_RCVD,
	ROCE_CNT_INV_REQ_NAK_RCVD,
	ROCE_CNT_REM_OP_NAK_RCVD,
	ROCE_CNT_RX_DROP_MALFORMED,	/* rx_dropped by reason (also in it) */
	ROCE_CNT_RX_DROP_PKEY,
	ROCE_CNT_RX_DROP_SERVICE,
	ROCE_CNT_RX_DROP_PATH,
	ROCE_CNT_RD_NOMEM,		/* READ replies put off: no skb */
	ROCE_CNT_CC_CE_RX,		/* congestion control (cc.c) */
	ROCE_CNT_CC_CNP_TX,
	ROCE_CNT_CC_CNP_RX,
	ROCE_CNT_CC_RATE_DEC,
	ROCE_CNT_CC_RATE_INC,
	ROCE_CNT_ACK_SENT,		/* plain ACKs, one per receive batch */
	ROCE_CNT_RX_PAGED,		/* payloads read in place from pages */
	ROCE_CNT_TX_QUEUE_FULL,		/* waits for packets to leave the host */
	ROCE_CNT_TX_PAGED,		/* payloads sent from the user's pages */
	ROCE_CNT_TX_TRAINS,		/* GSO trains sent (train.c) */
	ROCE_CNT_TX_TRAIN_PKTS,		/* ...the packets in them */
	ROCE_CNT_MAX,
};

static inline void roce_count(struct srdma_dev *dev, enum roce_counter c)
{
	srdma_tp_count(dev, c);
}

/*
 * Congestion control tunables of a device (cc.c; sysfs cc/, documented
 * in Documentation/roce.rst). Each is one u32 that sysfs writes whole
 * and the data path reads with READ_ONCE(): no lock, and no reader
 * needs two of them to agree (cc.c orders min and max itself).
 */
struct roce_cc_tunables {
	u32 enable;			/* 0 or 1 */
	u32 cnp_interval_us;		/* NP: one CNP per QP per this */
	u32 rate_reduce_period_us;	/* RP: one cut per QP per this */
	u32 alpha_g_shift;		/* g = 1 / 2^alpha_g_shift */
	u32 alpha_period_us;		/* K: alpha update period */
	u32 rate_inc_period_us;		/* T: rate increase timer */
	u32 byte_counter_kib;		/* B: rate increase byte counter */
	u32 fast_recovery_steps;	/* F */
	u32 ai_rate_kbps;		/* R_AI */
	u32 hai_rate_kbps;		/* R_HAI */
	u32 min_rate_kbps;		/* floor */
	u32 max_rate_mbps;		/* line rate when the netdev has none */
	u32 clamp_target;		/* on a cut, Rt = the new Rc */
	u32 line_mbps;			/* netdev speed, 0 unknown */
};

/* An sroce device: the core's and RoCE's own state (tp->dev_size). */
struct roce_dev {
	struct srdma_dev dev;		/* first: the core allocates it */
	struct roce_net *rnet;		/* the namespace's UDP socket */
	struct list_head rnet_node;	/* on rnet's device list */
	/* multicast groups (mcast.c), read under RCU */
	struct list_head mcast_groups;
	struct mutex mcast_lock;	/* changes to the groups */
	u32 nmcast;
	struct roce_cc_tunables cc;	/* cc.c */
};

static inline struct roce_dev *to_rdev(struct srdma_dev *dev)
{
	return container_of(dev, struct roce_dev, dev);
}

/* What each opcode carries (IBTA 9.4, table 38). */
enum {
	ROCE_F_RETH = BIT(0),
	ROCE_F_IMM = BIT(1),
	ROCE_F_IETH = BIT(2),
	ROCE_F_AETH = BIT(3),
	ROCE_F_ATMETH = BIT(4),
	ROCE_F_ATMACK = BIT(5),
	ROCE_F_PAYLOAD = BIT(6),
	ROCE_F_FIRST = BIT(7),
	ROCE_F_MIDDLE = BIT(8),
	ROCE_F_LAST = BIT(9),
	ROCE_F_SEND = BIT(10),
	ROCE_F_WRITE = BIT(11),
	ROCE_F_READ = BIT(12),		/* read request */
	ROCE_F_ATOMIC = BIT(13),	/* atomic request */
	ROCE_F_RESP = BIT(14),		/* travels responder -> requester */
	ROCE_F_VALID = BIT(15),
	ROCE_F_ATMWR = BIT(16),		/* RDMA ATOMIC WRITE */
};

struct roce_opinfo {
	u32 flags;
	u8 hdr_len;			/* BTH and extension headers, no DETH */
};

extern const struct roce_opinfo roce_ops[ROCE_OP_MAX];

/* A parsed incoming packet; points into a linear skb. */
struct roce_pkt {
	struct sk_buff *skb;
	struct srdma_dev *dev;
	struct srdma_qp *qp;		/* referenced */
	struct roce_bth *bth;
	u8 opcode;			/* full 8-bit opcode */
	u32 flags;			/* roce_ops[] flags */
	u32 psn;
	bool ackreq;
	void *ext;			/* first header after BTH (and DETH) */
	struct roce_deth *deth;
	void *payload;			/* NULL: not all in the head */
	u32 payoff;			/* the payload's offset in skb->data */
	u32 paylen;
	union {
		struct iphdr *ip4;
		struct ipv6hdr *ip6;
	};
	bool ipv6;
};

/*
 * Responder resource: a READ or ATOMIC kept for duplicate replay. Its
 * reply goes out from next_psn while pending (resp.c, roce_rd_run).
 */
struct roce_rdres {
	bool valid;
	bool atomic;
	bool pending;			/* reply packets still to send */
	u32 first_psn;
	u32 last_psn;
	u32 next_psn;
	u32 lap;			/* epsn_laps when it came */
	u32 mtu;			/* READ: the path MTU when it came */
	u64 va;
	u32 rkey;
	u32 length;
	u64 orig;			/* atomic: value returned */
	u8 syndrome;			/* atomic: AETH syndrome sent */
};

/*
 * DCQCN reaction point state (Zhu et al., SIGCOMM 2015), as the pure
 * roce_dcqcn_*() functions of cc.c see it: rates in kbit/s, alpha in
 * units of 1/ROCE_DCQCN_ALPHA_ONE.
 */
#define ROCE_DCQCN_ALPHA_ONE	1048576U	/* 2^20 */

struct roce_dcqcn {
	u32 rc;				/* current rate */
	u32 rt;				/* target rate */
	u32 alpha;
	u32 t_stage;			/* timer increases since the last cut */
	u32 b_stage;			/* byte counter increases since then */
	bool cnp_seen;			/* a CNP since the last alpha update */
};

/* What roce_dcqcn_*() need of the tunables, made consistent. */
struct roce_dcqcn_params {
	u32 min_kbps;
	u32 max_kbps;			/* the line rate; >= min_kbps */
	u32 ai_kbps;
	u32 hai_kbps;
	u32 g_shift;
	u32 fr_steps;
	bool clamp_target;
};

enum roce_dcqcn_inc {
	ROCE_DCQCN_INC_TIMER,		/* T expired */
	ROCE_DCQCN_INC_BYTES,		/* B bytes sent */
};

/*
 * A connected QP's congestion control (cc.c). Everything but the
 * hrtimers themselves is under roce_qp.lock, like the requester state it
 * paces.
 */
struct roce_cc {
	struct roce_dcqcn dcqcn;
	bool limited;			/* paced at dcqcn.rc */
	bool inc_on;			/* inc_timer armed or its callback on */
	bool alpha_on;			/* ...alpha_timer */
	s64 tokens;			/* bytes the bucket holds; < 0: debt */
	u64 refill_ns;			/* when tokens were last refilled */
	u32 bytes;			/* sent since the last byte count event */
	u64 meas_start_ns;		/* not limited: measuring the rate */
	u64 meas_bytes;
	u32 meas_kbps;			/* the last measurement, 0 none */
	u64 queue_full_ns;		/* the txq last had no room */
	u64 last_cut_ns;		/* RP: the last rate cut */
	u32 cut_psn;			/* ...next_psn then */
	u64 last_cnp_ns;		/* NP: the last CNP sent */
	bool cnp_sent;			/* ...there was one */
	bool rd_paced;			/* READ responses wait for pace_timer */
	struct hrtimer pace_timer;	/* run the requester: bucket dry, no skb */
	struct hrtimer inc_timer;	/* T */
	struct hrtimer alpha_timer;	/* K */
};

struct roce_txq;

struct roce_qp {
	struct srdma_qp *qp;
	spinlock_t lock;		/* all protocol state below */
	struct roce_txq *txq;		/* packets still in this host */
	struct dst_cache dst_cache;
	struct srdma_av route_av;	/* the path dst_cache is for */
	bool route_sg;			/* it takes page fragments, not to lo */
	u32 route_train_bytes;		/* ...UDP GSO trains this big whole */
	u16 src_port;
	bool dead;			/* destroy started: send nothing */
	bool resetting;			/* to RESET: the SQ is not ours now */

	/* requester */
	u32 req_cur;			/* SQ counter being transmitted */
	u32 req_ack;			/* oldest SQ counter not yet acked */
	u32 next_psn;
	u32 sent_psn;			/* past the newest PSN ever sent */
	u32 una_psn;			/* oldest unacknowledged PSN */
	u32 rd_inflight;		/* READ/ATOMIC requests outstanding */
	u32 reread_psn;			/* last READ response asked for again */
	bool recovering;		/* resent one packet: NAK or timeout */
	u32 probe_psn;			/* ...this one */
	u32 recover_psn;		/* next_psn when recovery began */
	bool probe_on_timeout;		/* the probe was the timer's */
	bool probe_moved;		/* ...and a late ACK moved it once */
	u8 exact_acks;			/* probes answered for them alone */
	bool peer_drops;		/* ...too often: the peer holds nothing */
	u8 retry_left;
	u8 rnr_left;
	bool rnr_wait;
	struct timer_list retrans_timer;
	struct timer_list rnr_timer;
	struct work_struct tx_work;	/* roce_req_defer() */
	struct roce_cc cc;		/* congestion control (cc.c) */

	/* responder */
	u32 epsn;			/* next expected PSN */
	u32 epsn_laps;			/* times epsn wrapped (roce_rdres age) */
	u32 msn;
	bool nak_sent;			/* PSN sequence NAK outstanding */
	bool ack_due;			/* ACK for ack_psn not sent yet */
	u32 ack_psn;
	struct tasklet_struct ack_tasklet;	/* ack.c */
	struct sk_buff_head reorder;	/* packets past a gap (reorder.c) */
	u16 in_msg;			/* 0, ROCE_F_SEND or ROCE_F_WRITE */
	/*
	 * The receive taken for the message in progress; rwqe_lock (inside
	 * lock) also guards it against the flush on a QP error, which can
	 * come from a context holding lock, or with interrupts off
	 * (roce_resp_flush).
	 */
	spinlock_t rwqe_lock;
	struct srdma_recv recv;
	bool rerr;			/* message being dropped (UC) */
	bool fatal;			/* NAKed a class B/C error */
	u64 wva;			/* RDMA WRITE in progress */
	u32 wrkey;
	u32 wresid;
	u32 wlen;
	struct roce_rdres *res;		/* RC: max_dest_rd_atomic of them */
	u32 nres;
	u32 res_head;
	u32 rd_pending;			/* res[] with a reply to send */
	struct delayed_work rd_work;	/* long READ replies (resp.c) */
	bool rd_queued;			/* rd_work has replies to send */
	int rd_cpu;			/* ...on this CPU */
	unsigned long rd_backoff;	/* jiffies; no memory for a packet */
};

static inline struct roce_qp *to_rqp(struct srdma_qp *qp)
{
	return qp->tp_priv;
}

/*
 * RoCE's part of a send WQE (its tp_priv): the PSNs the requester gave
 * it, from the first packet's to the last one's. Zero when fetched.
 */
struct roce_swqe {
	bool started;			/* PSNs assigned */
	u32 first_psn;
	u32 last_psn;
};

static inline struct roce_swqe *to_rswqe(struct srdma_swqe *w)
{
	BUILD_BUG_ON(sizeof(struct roce_swqe) > sizeof(w->tp_priv));
	return (struct roce_swqe *)w->tp_priv;
}

static inline u32 psn_add(u32 psn, u32 n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

/* Signed distance a - b in 24-bit PSN space. */
static inline s32 psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

/*
 * Whether a duplicate at @psn, behind @epsn after @laps wraps of the
 * sequence, lies in [@first, @last] as seen @res_lap wraps in: both are
 * placed on the count of PSNs since the last reset. PSN ranges alone
 * repeat every 2^24 (resp.c, responder resources).
 */
static inline bool psn_lap_holds(u32 laps, u32 epsn, u32 res_lap, u32 first,
				 u32 last, u32 psn)
{
	u64 now = ((u64)laps << 24) | epsn;
	u64 start = ((u64)res_lap << 24) | first;
	u64 dup = now - (u32)-psn_diff(psn, epsn);

	return dup - start <= (u32)psn_diff(last, first);
}

/* READ and atomics: answered with data, limited by max_rd_atomic. */
static inline bool roce_is_rd(u32 opcode)
{
	return opcode == IB_WR_RDMA_READ ||
	       opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* States in which the responder takes requests and acknowledges them. */
static inline bool roce_resp_open(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD;
}

static inline u32 roce_mtu(struct srdma_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI)
		return ib_mtu_enum_to_int(srdma_mtu_for_netdev(qp_dev(qp)));
	return ib_mtu_enum_to_int(qp->attr.path_mtu);
}

/* crc32.c APIs: */
u32 roce_crc32(u32 crc, const void *p, size_t len);
const char *roce_crc32_impl(void);
void roce_crc32_init(void);
void roce_crc32_exit(void);

/* net.c APIs: */
struct sk_buff *roce_alloc_skb(struct srdma_qp *qp, const struct srdma_av *av,
			       u32 hdr_len, u32 paylen);
struct sk_buff *roce_alloc_skb_lent(struct srdma_qp *qp,
				    const struct srdma_av *av,
				    const struct srdma_swqe *w, u32 hdr_len,
				    u32 off, u32 paylen);
u32 roce_icrc(const void *nh, bool ipv6, const void *ib, u32 ib_len);
int roce_icrc_walk(const void *nh, bool ipv6, const void *bth,
		   struct sk_buff *skb, u32 from, u32 ib_len, u32 *icrc);
int roce_lend_piece(void *arg, struct page *page, u32 off, u32 len);
void *roce_skb_add_frag(struct sk_buff *skb, u32 len);
int roce_wrap(struct srdma_qp *qp, const struct srdma_av *av,
	      struct sk_buff *skb, u8 opcode, u32 segs);
int roce_output(struct srdma_qp *qp, struct sk_buff *skb, u32 pkts);
int roce_xmit(struct srdma_qp *qp, const struct srdma_av *av,
	      struct sk_buff *skb);
bool roce_icrc_ok(struct roce_pkt *pkt);
int roce_skb_walk(struct sk_buff *skb, u32 from, u32 len,
		  int (*fn)(void *arg, u32 off, const void *buf, u32 n),
		  void *arg);
struct srdma_dev *roce_rx_dev(struct roce_net *rnet, struct sk_buff *skb);

/* socket.c APIs: */
int roce_net_init(void);
void roce_net_exit(void);
struct roce_net *roce_net_get(struct net *net);
void roce_net_put(struct roce_net *rnet);
int roce_net_attach(struct srdma_dev *dev);
void roce_net_detach(struct srdma_dev *dev);
struct srdma_dev *roce_net_find_dev(struct roce_net *rnet,
				    const struct net_device *ndev);
struct net_device *roce_net_find_dev6(struct roce_net *rnet,
				      const struct in6_addr *addr);

/* recv.c APIs: */
int srdma_roce_rcv(struct roce_net *rnet, struct sk_buff *skb);
void roce_qp_src_port(struct srdma_qp *qp);
int roce_qp_net_init(struct roce_qp *rqp);
void roce_qp_net_fini(struct roce_qp *rqp);

/* train.c: a message's packets as one UDP GSO skb */
#define ROCE_TRAIN_MAX		16
struct roce_train {
	struct sk_buff *skb;		/* UDP GSO; the packets in fragments */
	u32 pkt_len;			/* gso_size: each packet but the last */
	u32 len;			/* all of them, BTH to ICRC */
	u32 max_bytes;			/* the most len may reach */
	u32 n;				/* packets */
	bool lent;			/* their payloads the user's pages */
	void *bth[ROCE_TRAIN_MAX];	/* each one's BTH */
	void *icrc[ROCE_TRAIN_MAX];	/* where its ICRC goes */
};

u32 roce_train_route(struct net_device *ndev);
int roce_train_start(struct srdma_qp *qp, struct roce_train *t, bool lent,
		     u32 max_bytes);
void *roce_train_add(struct roce_train *t, u32 len);
void *roce_train_add_lent(struct roce_train *t, struct srdma_qp *qp,
			  const struct srdma_swqe *w, u32 hdr_len, u32 off,
			  u32 paylen, int *err);
int roce_train_finish(struct srdma_qp *qp, struct roce_train *t);
void roce_train_abort(struct roce_train *t);
int roce_train_xmit(struct srdma_qp *qp, const struct srdma_av *av,
		    struct roce_train *t);

/* txq.c APIs: */
int roce_txq_init(struct roce_qp *rqp);
void roce_txq_detach(struct roce_qp *rqp);
void roce_txq_fini(struct roce_qp *rqp);
void roce_txq_own(struct roce_qp *rqp, struct sk_buff *skb, u32 pkts);
int roce_txq_lend(struct roce_qp *rqp, struct sk_buff *skb, u32 pkts);
void roce_txq_resend(struct roce_qp *rqp);
bool roce_txq_sq_held(struct srdma_qp *qp, bool success);
u32 roce_txq_lent(struct roce_qp *rqp);
bool roce_txq_room(struct roce_qp *rqp);

/* req.c APIs: */
void roce_sq_kick(struct srdma_qp *qp);
void roce_req_run(struct roce_qp *rqp);
void roce_req_defer(struct roce_qp *rqp);
void roce_req_timers_init(struct roce_qp *rqp);
void roce_req_reset(struct roce_qp *rqp);
void roce_req_rewind(struct roce_qp *rqp);
void roce_req_recover(struct roce_qp *rqp, u32 psn);
void roce_req_recover_ack(struct roce_qp *rqp);
u32 roce_wqe_npkts(struct srdma_qp *qp, const struct srdma_swqe *w);
void roce_req_rearm(struct roce_qp *rqp);
u32 roce_req_catch_up(struct roce_qp *rqp);
struct srdma_swqe *roce_oldest(struct roce_qp *rqp);
void roce_wqe_finish(struct roce_qp *rqp, struct srdma_swqe *w,
		     enum ib_wc_status status);
void roce_req_rnr(struct roce_qp *rqp, u8 code);
void roce_req_sqd_check(struct roce_qp *rqp);

/* roce_fill_bth() @flags */
enum roce_fill_flags {
	ROCE_FILL_SE		= BIT(0),	/* Solicited Event */
	ROCE_FILL_ACKREQ	= BIT(1),	/* AckReq: ask for an ACK */
};

void roce_fill_bth(struct roce_bth *bth, u8 opcode, u32 paylen, u32 dqpn,
		   u32 psn, unsigned int flags);

/* ack.c APIs: */
int roce_send_ack(struct srdma_qp *qp, u8 syndrome, u32 psn);
void roce_ack_later(struct roce_qp *rqp, u32 psn);
void roce_ack_init(struct roce_qp *rqp);
void roce_ack_fini(struct roce_qp *rqp);

/* reorder.c APIs: */
bool roce_reorder_hold(struct roce_qp *rqp, struct roce_pkt *pkt);
struct sk_buff *roce_reorder_next(struct roce_qp *rqp);
bool roce_reorder_empty(struct roce_qp *rqp);
bool roce_reorder_ready(struct roce_qp *rqp);
void roce_reorder_purge(struct roce_qp *rqp);

/* recv.c APIs: */
int roce_parse(struct roce_pkt *pkt);
int roce_pkt_payload_each(const struct roce_pkt *pkt,
			  int (*place)(void *arg, u32 off, const void *buf,
				       u32 n),
			  void *arg);

/* mcast.c APIs: */
int roce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int roce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void roce_mcast_rcv(struct roce_pkt *pkt);
void roce_mcast_init(struct srdma_dev *dev);
void roce_mcast_fini(struct srdma_dev *dev);

/* comp.c APIs: */
void roce_comp_rcv(struct roce_pkt *pkt);

/* resp.c APIs: */
void roce_resp_rcv(struct roce_pkt *pkt);
void roce_resp_reset(struct roce_qp *rqp);
void roce_resp_init(struct roce_qp *rqp);
void roce_resp_flush(struct roce_qp *rqp);
void roce_resp_destroy(struct roce_qp *rqp);
int roce_resp_grow(struct roce_qp *rqp, u32 max_dest_rd_atomic);
void roce_rd_cancel(struct roce_qp *rqp);
void roce_rd_resume(struct roce_qp *rqp);

/* cc.c APIs: */
void roce_dcqcn_start(struct roce_dcqcn *s, u32 rate_kbps,
		      const struct roce_dcqcn_params *p);
bool roce_dcqcn_cut(struct roce_dcqcn *s, const struct roce_dcqcn_params *p);
void roce_dcqcn_alpha(struct roce_dcqcn *s, const struct roce_dcqcn_params *p);
bool roce_dcqcn_inc(struct roce_dcqcn *s, const struct roce_dcqcn_params *p,
		    enum roce_dcqcn_inc why);
void roce_cc_dev_init(struct srdma_dev *dev);
void roce_cc_qp_init(struct roce_qp *rqp);
void roce_cc_reset(struct roce_qp *rqp);
void roce_cc_stop_sync(struct roce_qp *rqp);
void roce_cc_refresh_speed(struct srdma_dev *dev);
u8 roce_cc_tclass(struct srdma_qp *qp, u8 traffic_class, u8 opcode);
void roce_cc_ce_rcvd(struct srdma_qp *qp);
void roce_cc_cnp_rcvd(struct srdma_qp *qp);
void roce_req_wake_in(struct roce_qp *rqp, u64 ns);
bool roce_cc_tx_ok(struct roce_qp *rqp);
bool roce_cc_resp_ok(struct roce_qp *rqp);
void roce_cc_sent(struct roce_qp *rqp, u32 bytes);
extern const struct attribute_group roce_cc_group;

/* observe.c APIs: */
extern const char *const roce_counter_names[ROCE_CNT_MAX];
void roce_obs_rewind(struct roce_qp *rqp);
void roce_obs_probe(struct roce_qp *rqp, u32 psn);
void roce_obs_timeout(struct roce_qp *rqp);
void roce_obs_rnr(struct roce_qp *rqp, u32 delay_us, bool give_up);
void roce_obs_ack_sent(struct srdma_qp *qp, u8 syndrome, u32 psn);
void roce_obs_aeth_rcvd(struct roce_qp *rqp, const struct roce_pkt *pkt,
			u8 syndrome);
int roce_fill_res_qp(struct sk_buff *msg, struct srdma_qp *qp);

#endif /* SRDMA_ROCE_H */
