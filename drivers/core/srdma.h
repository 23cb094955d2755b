/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srdma core: the objects every RDMA device has (device, PD, CQ, QP, SRQ,
 * AH, MR, MW), shared by the RoCEv2 and iWARP transports.
 *
 * Both device kinds speak the rdma_rxe user ABI (uapi rdma_user_rxe.h) so
 * that the stock librxe provider drives them: every work and completion
 * queue is a ring in a struct rxe_queue_buf, mmapped into user space for
 * user objects and used the same way by kernel consumers.
 *
 * The file that implements each group of functions is named above it.
 */
#ifndef SRDMA_H
#define SRDMA_H

#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/completion.h>
#include <linux/interrupt.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <uapi/rdma/rdma_user_rxe.h>

struct rdma_link_ops;

#define SRDMA_UVERBS_ABI_VERSION	2

/* Honest limits: what the object code below actually enforces. */
#define SRDMA_MAX_QP		16384
#define SRDMA_MAX_QP_WR		16384
#define SRDMA_MAX_SGE		32
#define SRDMA_MAX_INLINE	512
#define SRDMA_MAX_CQ		16384
#define SRDMA_MAX_CQE		((1 << 16) - 1)
#define SRDMA_MAX_MR		(1 << 18)
#define SRDMA_MAX_MW		(1 << 16)
#define SRDMA_MAX_PD		(1 << 16)
#define SRDMA_MAX_AH		(1 << 16)
#define SRDMA_MAX_SRQ		16384
#define SRDMA_MAX_SRQ_WR	16384
#define SRDMA_MAX_SRQ_SGE	SRDMA_MAX_SGE
#define SRDMA_MAX_RD_ATOMIC	128
#define SRDMA_MAX_FRMR_PAGES	512
#define SRDMA_MAX_MR_SIZE	(1ULL << 40)
#define SRDMA_GID_TABLE_LEN	32
#define SRDMA_FIRST_QPN		16
#define SRDMA_MAX_QPN		((1U << 24) - 1)
#define SRDMA_GSI_QPN		1

struct srdma_dev;
struct srdma_qp;

struct srdma_transport;		/* transport.h: the seam */

/*
 * Per-device counters (counters.c), shown as hw stats: the core's own,
 * which every transport's devices count, then the transport's
 * (@counter_names in transport.h, counted with srdma_tp_count()).
 * Documentation/debugging.rst lists what each of them counts.
 */
enum srdma_counter {
	SRDMA_CNT_RX_DROPPED,
	SRDMA_CNT_RX_BAD_CRC,
	SRDMA_CNT_CQ_OVERFLOW,
	SRDMA_CNT_LOCAL_KEY_ERR,
	SRDMA_CNT_REMOTE_KEY_ERR,
	SRDMA_CNT_TX_PACKETS,		/* RoCE packets, iWARP FPDUs */
	SRDMA_CNT_TX_BYTES,		/* ...from BTH or DDP header on */
	SRDMA_CNT_RX_PACKETS,
	SRDMA_CNT_RX_BYTES,
	SRDMA_CNT_MAX,
};

/*
 * RDMA ATOMIC WRITE (IBTA 1.5): newer than this kernel's headers, but
 * librxe posts it with these user ABI values.
 */
#define SRDMA_WR_ATOMIC_WRITE	15
#define SRDMA_WC_ATOMIC_WRITE	9

struct srdma_dev {
	struct ib_device ibdev;
	const struct srdma_transport *tp;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head list;		/* on srdma_devices */
	enum ib_port_state last_state;
	bool tp_ready;			/* tp->dev_init succeeded */

	struct xarray qps;		/* qpn -> qp handle, lookups under RCU */
	struct xarray keys;		/* key index -> srdma_mem, RCU */
	struct xarray ahs;		/* ah_num -> ah */
	u32 next_qpn;
	u32 next_key_index;		/* under the keys xa_lock */
	atomic_t srq_seq;

	atomic_t num_pd, num_cq, num_qp, num_srq, num_mr, num_mw, num_ah;
	/* SRDMA_CNT_MAX of the core's, then the transport's: counters.c */
	u64 __percpu *counters;
};

/* _ib_alloc_device() allocates it: the ib_device comes first */
static_assert(offsetof(struct srdma_dev, ibdev) == 0);

static inline struct srdma_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct srdma_dev, ibdev);
}

static inline void srdma_count_add(struct srdma_dev *dev,
				   enum srdma_counter c, u64 n)
{
	this_cpu_add(dev->counters[c], n);
}

static inline void srdma_count(struct srdma_dev *dev, enum srdma_counter c)
{
	this_cpu_inc(dev->counters[c]);
}

/* A ring shared with user space in the rdma_rxe layout. */
struct srdma_queue {
	struct rxe_queue_buf *buf;	/* vmalloc_user, page aligned */
	size_t buf_size;
	u32 elem_size;			/* power of two */
	u32 log2_elem_size;
	u32 index_mask;			/* slots - 1; one slot stays empty */
	struct rdma_user_mmap_entry *mentry;	/* user queues only */
};

struct srdma_ucontext {
	struct ib_ucontext ibuc;
};

struct srdma_pd {
	struct ib_pd ibpd;
};

static inline struct srdma_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct srdma_pd, ibpd);
}

/* Where a RoCE packet goes: built from an AH or a connected QP's path. */
struct srdma_av {
	u8 network_type;		/* RXE_NETWORK_TYPE_IPV4/6 */
	u8 dmac[ETH_ALEN];
	u8 sl;
	u8 hop_limit;
	u8 traffic_class;
	u32 flow_label;
	u8 sgid_index;
	union ib_gid dgid;
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} saddr, daddr;
};

struct srdma_ah {
	struct ib_ah ibah;
	struct srdma_av av;
	u32 ah_num;
};

static inline struct srdma_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct srdma_ah, ibah);
}

/*
 * A CQ's handlers (comp_handler, and event_handler for IB_EVENT_CQ_ERR)
 * are called from its tasklet, never from srdma_cq_post(): cq.c says why.
 */
struct srdma_cq {
	struct ib_cq ibcq;
	struct srdma_queue q;
	spinlock_t lock;		/* producer side; consumer for kernel */
	u32 prod;			/* our copy; user memory is not trusted */
	u8 notify;			/* IB_CQ_SOLICITED / IB_CQ_NEXT_COMP armed */
	bool is_user;
	bool overflowed;
	unsigned long due;		/* handler calls for the tasklet: cq.c */
	struct tasklet_struct tasklet;
};

static inline struct srdma_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct srdma_cq, ibcq);
}

/* Bytes of a send WQE that belong to its transport (srdma_swqe.tp_priv). */
#define SRDMA_SWQE_TP_SIZE	16

/* The longest message, either way (IBTA's and the device's max_msg_sz). */
#define SRDMA_MAX_MSG		BIT(31)

/*
 * A send work request as the kernel keeps it: struct rxe_send_wr's
 * fields, at the same offsets (sq.c checks them at build time), less
 * the 88-byte address vector at the end of its UD member, which srdma
 * never reads (a UD WQE's address is copied from its AH: srdma_swqe_av()).
 * 56 bytes instead of 144 in each of a QP's kernel WQE copies: one per
 * ring slot, 32 for a 16-WR send queue.
 */
struct srdma_wr {
	u64 wr_id;
	u32 reserved;
	u32 opcode;
	u32 send_flags;
	union {
		__be32 imm_data;
		u32 invalidate_rkey;
	} ex;
	union {
		struct {
			u64 remote_addr;
			u32 rkey;
			u32 reserved;
		} rdma;
		struct {
			u64 remote_addr;
			u64 compare_add;
			u64 swap;
			u32 rkey;
			u32 reserved;
		} atomic;
		struct {
			u32 remote_qpn;
			u32 remote_qkey;
			u16 pkey_index;
			u16 reserved;
			u32 ah_num;
		} ud;
		struct {		/* also a kernel ULP's IB_WR_REG_MR */
			u64 addr;
			u64 length;
			u32 mr_lkey;
			u32 mw_rkey;
			u32 rkey;
			u32 access;
		} mw;
	} wr;
};

/*
 * A send WQE as the kernel keeps it: copied out of the ring when fetched,
 * so that user space cannot change it under the transport.
 *
 * @tp_priv is the transport's own per-WQE state (RoCE's PSN range,
 * iWARP's atomic request id), a struct of the transport's that it casts
 * this to, as layers do with skb->cb; the core zeroes it at fetch and
 * never reads it. A fixed size, not one the transport sets as it does
 * its device and QP state: the area then sits at the same offset in
 * every WQE, so reaching it costs nothing at run time, and sge[] can
 * stay the flexible array at the end. Each transport's accessor checks
 * at build time that its struct fits.
 */
struct srdma_swqe {
	struct srdma_wr wr;
	u64 iova;
	u32 length;
	u32 num_sge;
	u8 state;			/* enum srdma_wqe_state */
	u8 status;			/* enum ib_wc_status when done */
	bool signaled;
	bool inlined;			/* the payload is in sge[]'s place */
	/* transport progress */
	u32 sent;			/* bytes handed to the wire */
	u32 done;			/* read/atomic: bytes placed locally */
	u8 tp_priv[SRDMA_SWQE_TP_SIZE] __aligned(8);
	/* then the SGEs, or the inline payload; UD QPs: the address */
	struct ib_sge sge[];
};

/* A WQE's inline payload (or an atomic write's 8 bytes), else NULL. */
static inline const u8 *srdma_swqe_inline(const struct srdma_swqe *w)
{
	return w->inlined ? (const u8 *)w->sge : NULL;
}

enum srdma_wqe_state {
	SRDMA_WQE_POSTED,		/* fetched, not yet done */
	SRDMA_WQE_DONE,			/* ready to complete, in order */
};

struct srdma_wq {
	struct srdma_queue q;
	spinlock_t lock;		/* kernel producers */
	u32 max_wr;
	u32 max_sge;
	u32 max_inline;
};

struct srdma_srq {
	struct ib_srq ibsrq;
	struct srdma_wq rq;
	spinlock_t cons_lock;		/* consumers: the transports */
	u32 cons;
	u32 limit;			/* armed when non-zero */
	u32 srq_num;
	bool is_user;
	struct tasklet_struct limit_tasklet;	/* raises the limit event */
};

static inline struct srdma_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct srdma_srq, ibsrq);
}

/* Attributes set by modify_qp, read by the transports. */
struct srdma_qp_attr {
	enum ib_mtu path_mtu;
	u32 dest_qpn;
	u32 qkey;
	u32 sq_psn;
	u32 rq_psn;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 timeout;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u16 pkey_index;
	int access;
	bool sq_draining;
	bool en_sqd_async_notify;
	struct srdma_av av;
	struct rdma_ah_attr ah_attr;	/* as given, for query_qp */
};

/*
 * Per-QP event counts for rdma res (restrack.c). The u32 fields are
 * written under the transport's protocol lock; readers take a snapshot
 * that may be a packet old.
 */
struct srdma_qp_stats {
	atomic64_t tx_packets, tx_bytes;	/* any context */
	atomic64_t rx_packets, rx_bytes;
	u32 retransmits;		/* go-back passes */
	u32 probes;			/* single packets resent after a NAK */
	u32 timeouts;			/* retransmit timer expiries */
	u32 naks_sent, naks_rcvd;	/* of any kind, RNR NAKs too */
	u32 rnr_naks_rcvd;
};

/* A packet (or FPDU) of @len bytes went out or came in on @qp. */
static inline void srdma_qp_stats_pkt(struct srdma_qp_stats *st, bool tx,
				      u32 len)
{
	if (tx) {
		atomic64_inc(&st->tx_packets);
		atomic64_add(len, &st->tx_bytes);
	} else {
		atomic64_inc(&st->rx_packets);
		atomic64_add(len, &st->rx_bytes);
	}
}

/*
 * What dev->qps maps a QPN to. Lookups are lockless (RCU) and ib_core
 * frees the QP as soon as destroy_qp returns, so the count that lookups
 * take cannot live in the QP without a grace period per destroy: it
 * lives here, and only this small handle waits for one (kfree_rcu).
 */
struct srdma_qp_handle {
	refcount_t ref;			/* the QP's own + each holder */
	struct completion released;	/* ref reached zero */
	struct srdma_qp *qp;
	struct rcu_head rcu;
};

struct srdma_qp {
	struct ib_qp ibqp;
	struct srdma_qp_handle *handle;	/* lookups by the transports */
	struct mutex modify_lock;	/* serialises modify_qp */
	bool destroying;		/* under modify_lock: see restrack.c */
	spinlock_t state_lock;		/* state vs. posting and flushing */
	enum ib_qp_state state;
	bool is_user;
	bool sig_all;

	struct srdma_cq *scq, *rcq;
	struct srdma_srq *srq;

	struct srdma_wq sq;
	u8 *swqe_buf;			/* kernel copy, one per SQ slot */
	u32 swqe_size;
	u32 swqe_av_off;		/* UD: where in a WQE its address is */
	/* free-running counters; the ring slot is the counter & index_mask */
	u32 sq_fetch;			/* next WQE to fetch */
	u32 sq_cons;			/* oldest WQE not yet completed */
	bool sq_held;			/* ...the transport's sq_held stops it */

	struct srdma_wq rq;
	u32 rq_cons;
	/*
	 * The SGE list of the receive being placed (struct srdma_recv: one
	 * per QP), as long as the RQ's or the SRQ's max_sge, not the most.
	 */
	struct ib_sge *recv_sge;
	u32 recv_max_sge;

	struct srdma_qp_attr attr;
	struct srdma_qp_stats stats;	/* rdma res show qp -dd */
	void *tp_priv;			/* the transport's state */
	struct work_struct error_work;	/* srdma_qp_error() in hard irq */
	struct work_struct ring_work;	/* the rest of a batched ring walk */
	unsigned long events;		/* BIT(IB_EVENT_*) due: event_work */
	struct work_struct event_work;	/* raises them, no lock held */
};

static inline struct srdma_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct srdma_qp, ibqp);
}

static inline struct srdma_swqe *srdma_swqe_at(struct srdma_qp *qp, u32 index)
{
	return (struct srdma_swqe *)(qp->swqe_buf +
		(size_t)(index & qp->sq.q.index_mask) * qp->swqe_size);
}

/* A UD or GSI QP's WQE: the address copied from the AH at fetch. */
static inline struct srdma_av *srdma_swqe_av(struct srdma_qp *qp,
					     struct srdma_swqe *w)
{
	return (struct srdma_av *)((u8 *)w + qp->swqe_av_off);
}

static inline struct srdma_dev *qp_dev(struct srdma_qp *qp)
{
	return to_sdev(qp->ibqp.device);
}

/* Count a packet (RoCE) or FPDU (iWARP) of @len bytes on @qp's device. */
static inline void srdma_count_pkt(struct srdma_qp *qp, bool tx, u32 len)
{
	struct srdma_dev *dev = qp_dev(qp);

	srdma_count(dev, tx ? SRDMA_CNT_TX_PACKETS : SRDMA_CNT_RX_PACKETS);
	srdma_count_add(dev, tx ? SRDMA_CNT_TX_BYTES : SRDMA_CNT_RX_BYTES, len);
	srdma_qp_stats_pkt(&qp->stats, tx, len);
}

/* A memory key: an MR or a bound MW. */
enum srdma_mem_type {
	SRDMA_MEM_USER,			/* user MR, pinned by ib_umem */
	SRDMA_MEM_DMA,			/* kernel DMA MR: iova is a kernel VA */
	SRDMA_MEM_FAST,			/* fast-register MR: page list */
	SRDMA_MEM_MW,			/* memory window over an MR */
};

enum srdma_mem_state {
	SRDMA_MEM_INVALID,		/* allocated or invalidated */
	SRDMA_MEM_VALID,
	SRDMA_MEM_DEAD,			/* deregistered or replaced: for good */
};

/*
 * A memory key's object (keys.c says how it lives). @lock guards
 * everything below that a key check or a copy reads: key checks and
 * copies hold it for reading, state changes hold it for writing, so an
 * invalidation completes only after the copies already under way.
 */
struct srdma_mem {
	rwlock_t lock;
	u32 key;			/* index << 8 | random/consumer byte */
	u8 type;
	u8 state;
	u8 mw_type;
	bool replacing;			/* MR: rereg making its successor */
	int access;
	struct ib_pd *pd;
	u64 iova;
	u64 length;
	refcount_t ref;			/* the table + each holder; last frees */
	struct rcu_head rcu;

	/* MR pages; page_offset is where iova starts inside page 0 */
	unsigned int page_shift;
	u64 page_offset;
	u32 npages;
	union {
		struct page **pages;	/* SRDMA_MEM_USER, freed with it */
		u64 *kvas;		/* SRDMA_MEM_FAST, the srdma_mr's */
	};
	atomic_t bound_mws;		/* MR: windows bound to it */

	/* MW */
	struct srdma_mem *mr;		/* bound MR, referenced */
	struct srdma_qp *qp;		/* type 2: bound QP (compared only) */
	u32 qpn;			/* ...and its number */
};

struct srdma_mr {
	struct ib_mr ibmr;
	struct srdma_mem *mem;		/* current; IB_WR_REG_MR may replace it */
	struct ib_umem *umem;
	/* fast-register: map_mr_sg fills this list, REG_MR makes it live */
	u64 *map_kvas;
	u32 map_npages;
	u32 max_pages;
};

static inline struct srdma_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct srdma_mr, ibmr);
}

struct srdma_mw {
	struct ib_mw ibmw;
	u32 index;			/* key index; a bind may replace the mem */
};

static inline struct srdma_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct srdma_mw, ibmw);
}

/* device.c APIs: */
int srdma_netdev_notifier_register(void);
void srdma_netdev_notifier_unregister(void);
enum ib_port_state srdma_port_state(struct srdma_dev *dev);

/* query.c APIs: */
int srdma_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int srdma_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int srdma_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
void srdma_get_dev_fw_str(struct ib_device *ibdev, char *str);
int srdma_modify_device(struct ib_device *ibdev, int mask,
			struct ib_device_modify *attr);
int srdma_modify_port(struct ib_device *ibdev, u32 port, int mask,
		      struct ib_port_modify *attr);

/* counters.c APIs: */
int srdma_counters_setup(const struct srdma_transport *const *tps,
			 unsigned int num_tps);
void srdma_counters_cleanup(void);
int srdma_counters_init(struct srdma_dev *dev);
void srdma_counters_fini(struct srdma_dev *dev);
struct rdma_hw_stats *srdma_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int srdma_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);

/* restrack.c APIs: */
int srdma_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int srdma_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);

/* queue.c APIs: */
int srdma_queue_init(struct srdma_dev *dev, struct srdma_queue *q,
		     u32 min_elems, u32 elem_size, struct ib_udata *udata,
		     struct mminfo *mi);
void srdma_queue_fini(struct srdma_queue *q);
int srdma_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void srdma_mmap_free(struct rdma_user_mmap_entry *entry);
int srdma_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata);
void srdma_dealloc_ucontext(struct ib_ucontext *uctx);

static inline u32 srdma_queue_slots(const struct srdma_queue *q)
{
	return q->index_mask + 1;
}

static inline void *srdma_queue_addr(const struct srdma_queue *q, u32 index)
{
	return q->buf->data + ((size_t)(index & q->index_mask) <<
			       q->log2_elem_size);
}

/* A producer's view: does the slot after @prod still belong to the consumer? */
static inline bool srdma_queue_full(const struct srdma_queue *q, u32 prod)
{
	/* the consumer is done with a slot before it moves its index */
	u32 cons = smp_load_acquire(&q->buf->consumer_index);

	return ((prod + 1) & q->index_mask) == (cons & q->index_mask);
}

/* pd.c APIs: */
int srdma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int srdma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* ah.c APIs: */
int srdma_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int srdma_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int srdma_destroy_ah(struct ib_ah *ibah, u32 flags);
int srdma_av_from_attr(struct srdma_dev *dev, struct srdma_av *av,
		       const struct rdma_ah_attr *attr);
int srdma_ah_copy_av(struct srdma_dev *dev, u32 ah_num, struct ib_pd *pd,
		     struct srdma_av *av);

/* cq.c APIs: */
int srdma_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int srdma_pre_destroy_cq(struct ib_cq *ibcq);
int srdma_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int srdma_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int srdma_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int srdma_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/* qp.c APIs: */
int srdma_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int srdma_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int srdma_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);

/* qp_state.c APIs: */
int srdma_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
void srdma_qp_error_work(struct work_struct *work);
void srdma_qp_event_work(struct work_struct *work);
void srdma_ring_work(struct work_struct *work);
void srdma_qp_queue_work(struct srdma_qp *qp, struct work_struct *work);

/* srq.c APIs: */
int srdma_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int srdma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int srdma_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int srdma_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int srdma_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
bool srdma_srq_pop(struct srdma_srq *srq, struct rxe_recv_wqe *out,
		   struct ib_sge *sge, u32 max_sge);

/* keys.c APIs: */
int srdma_key_add(struct srdma_dev *dev, struct srdma_mem *mem);
void srdma_key_remove(struct srdma_dev *dev, struct srdma_mem *mem);
struct srdma_mem *srdma_key_get(struct srdma_dev *dev, u32 key);
struct srdma_mem *srdma_mem_alloc(enum srdma_mem_type type, gfp_t gfp);
void srdma_mem_free(struct srdma_mem *mem);
bool srdma_mem_replace(struct srdma_dev *dev, struct srdma_mem *old,
		       struct srdma_mem *new);
bool srdma_mem_in_range(const struct srdma_mem *mem, u64 iova, u64 length);
int srdma_mem_check(const struct srdma_mem *mem, struct ib_pd *pd,
		    int access, u64 iova, u64 length);
int srdma_key_check_locked(const struct srdma_mem *mem, struct srdma_qp *qp,
			   u32 key, u64 iova, u64 length, int access,
			   bool remote);

/* copy.c APIs: */
enum srdma_copy_dir {
	SRDMA_TO_MEM,
	SRDMA_FROM_MEM,
};

int srdma_mem_copy_locked(struct srdma_mem *mem, u64 iova, void *buf,
			  u64 length, enum srdma_copy_dir dir);

/* mr.c APIs: */
struct ib_mr *srdma_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *srdma_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *srdma_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *srdma_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int srdma_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int nents,
		    unsigned int *sg_offset);
int srdma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int srdma_reg_mr_wqe(struct srdma_qp *qp, struct ib_mr *ibmr, u32 key,
		     int access);

/* mw.c APIs: */
int srdma_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int srdma_dealloc_mw(struct ib_mw *ibmw);
int srdma_bind_mw(struct srdma_qp *qp, const struct srdma_swqe *wqe);

/* post.c APIs: */
int srdma_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int srdma_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int srdma_post_one_recv(struct srdma_wq *wq, const struct ib_recv_wr *wr);

/* sq.c APIs: */
int srdma_swqe_alloc(struct srdma_qp *qp);
bool srdma_opcode_ok(struct srdma_qp *qp, u32 opcode);
void srdma_swqe_free(struct srdma_qp *qp);
void srdma_recv_wqe_copy(const struct rxe_recv_wqe *r, u32 max_sge,
			 struct rxe_recv_wqe *out, struct ib_sge *sge);
bool srdma_rq_pop(struct srdma_qp *qp, struct rxe_recv_wqe *out,
		  struct ib_sge *sge, u32 max_sge);

/* Kernel version differences, some wrapping the prototypes above. */
#include "compat.h"

#endif /* SRDMA_H */
