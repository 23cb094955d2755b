/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seam between the srdma core and its transports (RoCEv2 in
 * drivers/roce, iWARP in drivers/iwarp).
 *
 * The core owns the RDMA objects (srdma.h), their rings, memory keys and
 * completions, and implements every verb that does not put bytes on a
 * wire. A transport moves the bytes: it describes itself and what the
 * core must ask it in one struct srdma_transport, and calls into the
 * core only through the functions declared below. The core never names
 * a transport; main.c lists the transports the module registers.
 */
#ifndef SRDMA_TRANSPORT_H
#define SRDMA_TRANSPORT_H

#include "srdma.h"

struct rdma_link_ops;

/**
 * struct srdma_transport - what the core asks of, and knows of, a transport
 * @link_type: the name of the device kind in messages ("sroce").
 * @link_ops: the ``rdma link add NAME type T`` entries that create a
 *	device of this transport, NULL-terminated; main.c registers them
 *	after everything else at load and removes them first at unload.
 *	Their newlink calls srdma_newlink() with this transport.
 * @ops: the transport's own verbs (iw_cm calls, multicast, ...), set on
 *	the device before the core's, so that where both have one the
 *	transport's is used.
 * @init: module load, in the order of main.c's list; may fail, which
 *	undoes the transports before this one. Process context.
 * @exit: module unload, in reverse order, after every device is gone.
 * @dev_size: size of the transport's device struct, which begins with a
 *	struct srdma_dev; the core allocates it as the device, and ib_core
 *	frees it with the device (after an RCU grace period). 0: the
 *	transport keeps no device state of its own.
 * @node_type: RDMA_NODE_* of the device.
 * @vendor_part_id: reported by query_device.
 * @core_cap_flags: RDMA_CORE_PORT_* of the port.
 * @max_mad_size: the largest MAD the port takes; 0 for none.
 * @gid_tbl_len: GID table entries of the port.
 * @port_cap_flags: IB_PORT_* the port has besides IB_PORT_CM_SUP.
 * @mtu_overhead: header bytes each packet carries besides its payload;
 *	the path MTU is the largest IB MTU that fits the netdev MTU less
 *	these (srdma_mtu_for_netdev()).
 * @uses_av: peers are addressed by address vectors: the device offers
 *	address handles (else create_ah fails with -EOPNOTSUPP and
 *	reports max_ah 0) and takes IB_QP_AV in modify_qp (else -EINVAL).
 * @query_device: optional; adds the transport's own attributes to those
 *	the core filled in. Process context.
 * @qp_types: the QP types create_qp accepts, as BIT(IB_QPT_*); others
 *	fail with -EOPNOTSUPP.
 * @qp_init_state: the state create_qp leaves a QP in.
 * @rc_opcodes: RC send opcodes beyond the shared set that post_send
 *	accepts, as BIT(IB_WR_*): SRDMA_WR_ATOMIC_WRITE (user QPs only),
 *	IB_WR_RDMA_READ_WITH_INV, and the immediate-data ones
 *	(IB_WR_SEND_WITH_IMM, IB_WR_RDMA_WRITE_WITH_IMM).
 * @modify_qp_ok: optional; may @qp move from @cur to *@next with the
 *	attribute mask @mask? It may change *@next. Called with the QP's
 *	modify_lock held. Without it the IB rules apply
 *	(ib_modify_qp_is_ok()).
 * @modify_qp_prepare: optional; modify_qp is about to apply the checked
 *	attributes @attr of @mask: set up what their new values need (RoCE:
 *	responder resources for max_dest_rd_atomic). A failure fails
 *	modify_qp with nothing changed. Process context, modify_lock held.
 * @dev_init: optional; set up a new device before it is registered.
 *	Process context. A failure fails ``rdma link add``.
 * @dev_fini: optional; undo @dev_init when the device is freed (only if
 *	@dev_init succeeded). Process context.
 * @qp_init: optional; set up a new QP's transport state (qp->tp_priv)
 *	once its rings exist. Process context.
 * @qp_destroy: optional; free it, once no reference to the QP is left
 *	(or create_qp fails after @qp_init). Process context.
 * @qp_state_changing: optional; modify_qp is about to move the QP from
 *	@cur to @next (never equal), its new attributes applied: set up
 *	what the new state needs before anyone can see it (RoCE: the
 *	responder's expected PSN for RTR, the requester's PSNs for RTS). A
 *	doorbell, a packet or a timer on another CPU acts on the new state
 *	as soon as it is stored, before @qp_state_changed runs. The QP is
 *	still in @cur, and the change may yet fail: a fatal error that moved
 *	it to ERR meanwhile stays, and only a reset leaves that. Process
 *	context, modify_lock held.
 * @qp_state_changed: optional; modify_qp changed the QP's state from
 *	@old. Process context, after the change: others may have acted on
 *	the new state already.
 * @qp_reset: optional; the QP is about to move to RESET (modify_lock
 *	held): let go of whatever still uses its rings. Process context,
 *	may sleep.
 * @qp_error: optional; a fatal error moved the QP to ERR. Any context
 *	but a hard interrupt (srdma_qp_error() defers those), interrupts
 *	maybe off.
 * @recv_flush: optional; the QP is in ERR: complete the receive held for
 *	a message in progress with IB_WC_WR_FLUSH_ERR (srdma_recv_flush()),
 *	if any. srdma_flush() calls it first, so it completes before every
 *	receive still in the ring, whoever flushes first. Idempotent. Any
 *	context but a hard interrupt, interrupts maybe off.
 * @qp_release: optional; destroy_qp is about to wait for every
 *	reference: drop the ones a connection holds. Process context.
 * @sq_kick: new send WQEs were fetched into the QP's kernel copy; the
 *	transport walks them through srdma_sq_pending() and calls
 *	srdma_sq_wqe_done() as each finishes. Any context: a kernel ULP
 *	may post with interrupts off. Without it every WQE that needs the
 *	wire fails.
 * @sq_held: optional; whether send completions must wait because the
 *	network may still read pages of the QP's send buffers (RoCE sends
 *	user pages by reference). Asked before each completion, with
 *	@success its status being IB_WC_SUCCESS: a consumer that has the
 *	completion may write the buffer at once. A transport that answers
 *	true calls srdma_sq_resume() once it would answer false. Any
 *	context, state_lock held.
 * @sqd_drains: SQD waits for what is on the wire: the transport calls
 *	srdma_qp_sq_drained() once nothing is outstanding. Without it the
 *	SQ counts as drained on entering SQD.
 * @fill_res_qp: optional; add the transport's attributes to
 *	``rdma res show qp -dd`` (restrack.c).
 * @counter_names: the names of the transport's own device counters, in
 *	the order of its counter enum, as hw stats show them after the
 *	core's (counters.c); it counts them with srdma_tp_count().
 * @num_counters: how many; 0 for none.
 */
struct srdma_transport {
	const char *link_type;
	struct rdma_link_ops *const *link_ops;
	const struct ib_device_ops *ops;
	int (*init)(void);
	void (*exit)(void);

	size_t dev_size;
	u8 node_type;
	u32 vendor_part_id;
	u32 core_cap_flags;
	u32 max_mad_size;
	u32 gid_tbl_len;
	u32 port_cap_flags;
	u32 mtu_overhead;
	bool uses_av;
	void (*query_device)(struct srdma_dev *dev,
			     struct ib_device_attr *attr);

	u32 qp_types;
	enum ib_qp_state qp_init_state;
	u32 rc_opcodes;
	bool (*modify_qp_ok)(struct srdma_qp *qp, enum ib_qp_state cur,
			     enum ib_qp_state *next, int mask);
	int (*modify_qp_prepare)(struct srdma_qp *qp,
				 const struct ib_qp_attr *attr, int mask);

	int (*dev_init)(struct srdma_dev *dev);
	void (*dev_fini)(struct srdma_dev *dev);
	int (*qp_init)(struct srdma_qp *qp);
	void (*qp_destroy)(struct srdma_qp *qp);
	void (*qp_state_changing)(struct srdma_qp *qp, enum ib_qp_state cur,
				  enum ib_qp_state next);
	void (*qp_state_changed)(struct srdma_qp *qp, enum ib_qp_state old);
	void (*qp_reset)(struct srdma_qp *qp);
	void (*qp_error)(struct srdma_qp *qp);
	void (*recv_flush)(struct srdma_qp *qp);
	void (*qp_release)(struct srdma_qp *qp);
	void (*sq_kick)(struct srdma_qp *qp);
	bool (*sq_held)(struct srdma_qp *qp, bool success);
	bool sqd_drains;
	int (*fill_res_qp)(struct sk_buff *msg, struct srdma_qp *qp);

	const char *const *counter_names;
	unsigned int num_counters;
};

/* The transports main.c registers (roce/roce.c, iwarp/iwarp.c). */
extern const struct srdma_transport srdma_roce_transport;
extern const struct srdma_transport srdma_iwarp_transport;

/*
 * What a transport may use of the core, besides the objects of srdma.h
 * and their inline helpers (srdma_swqe_at(), srdma_count(),
 * srdma_count_pkt(), ...). Its per-WQE state goes in the send WQE's
 * tp_priv (srdma.h), in a struct of its own that fits
 * SRDMA_SWQE_TP_SIZE; the core zeroes it when it fetches the WQE.
 */

/**
 * srdma_tp_count_add() - add to one of the transport's device counters
 * @dev: the device
 * @c: the counter: its index in the transport's @counter_names
 * @n: how much
 *
 * One per-CPU add, as srdma_count_add() for the core's. Any context.
 */
static inline void srdma_tp_count_add(struct srdma_dev *dev, unsigned int c,
				      u64 n)
{
	this_cpu_add(dev->counters[SRDMA_CNT_MAX + c], n);
}

static inline void srdma_tp_count(struct srdma_dev *dev, unsigned int c)
{
	this_cpu_inc(dev->counters[SRDMA_CNT_MAX + c]);
}

/*
 * srdma's deferred work runs on these two and nowhere else (main.c):
 * any CPU (srdma_unbound_wq) or the CPU it was queued on (srdma_cpu_wq).
 * Both are drained at unload, after the transports' @exit.
 */
extern struct workqueue_struct *srdma_unbound_wq;
extern struct workqueue_struct *srdma_cpu_wq;

/**
 * srdma_newlink() - create and register a device of @tp on @ndev
 * @tp: the transport
 * @name: the device name user space asked for
 * @ndev: an Ethernet netdev
 *
 * For the newlink of the transport's @link_ops. One device of each
 * transport per netdev. Process context.
 *
 * Return: 0, -EINVAL (not Ethernet), -EEXIST or another errno.
 */
int srdma_newlink(const struct srdma_transport *tp, const char *name,
		  struct net_device *ndev);

/**
 * srdma_mtu_for_netdev() - the path MTU the device's netdev allows now
 * @dev: the device
 *
 * Return: the largest IB MTU that fits the netdev MTU once the
 * transport's @mtu_overhead is taken off.
 */
enum ib_mtu srdma_mtu_for_netdev(struct srdma_dev *dev);

/**
 * srdma_qp_get() - look up a QP by number and take a reference
 * @dev: the device
 * @qpn: the QP number
 *
 * For receive paths, any context. destroy_qp waits for the reference.
 *
 * Return: the QP or NULL.
 */
struct srdma_qp *srdma_qp_get(struct srdma_dev *dev, u32 qpn);

/**
 * srdma_qp_tryget() - take another reference on a QP
 * @qp: a QP the caller reaches while it cannot be freed (a verb on it,
 *	a reference already held)
 *
 * For deferred work on the QP, any context. destroy_qp waits for it.
 *
 * Return: false once destroy has begun: then no reference is taken.
 */
bool srdma_qp_tryget(struct srdma_qp *qp);

/**
 * srdma_qp_put() - drop a reference from srdma_qp_get() or srdma_qp_tryget()
 * @qp: the QP
 */
void srdma_qp_put(struct srdma_qp *qp);

/**
 * srdma_modify_qp_locked() - modify_qp with qp->modify_lock held
 * @qp: the QP
 * @attr: the attributes
 * @mask: which of them to set (IB_QP_*)
 *
 * For a caller that decides on the QP's state and changes it in one step
 * (iWARP's connection set-up). Process context.
 *
 * Return: 0 or the errno modify_qp would return.
 */
int srdma_modify_qp_locked(struct srdma_qp *qp, struct ib_qp_attr *attr,
			   int mask);

/**
 * srdma_qp_error() - a fatal error on the QP
 * @qp: the QP
 *
 * Moves the QP to ERR, flushes its rings and raises IB_EVENT_QP_FATAL
 * (from the QP's event work, as every QP event). Any context; from a
 * hard interrupt the rest is deferred.
 */
void srdma_qp_error(struct srdma_qp *qp);

/**
 * srdma_qp_closed() - the connection under the QP is gone
 * @qp: the QP
 *
 * Moves the QP to ERR and flushes it, with no QP event: the consumer
 * hears of it from its connection manager. Process context.
 */
void srdma_qp_closed(struct srdma_qp *qp);

/**
 * srdma_qp_sq_drained() - nothing started on the send queue is outstanding
 * @qp: the QP
 *
 * For transports with @sqd_drains: in SQD, raises IB_EVENT_SQ_DRAINED if
 * the consumer asked for it, once per entry to SQD. Any context.
 */
void srdma_qp_sq_drained(struct srdma_qp *qp);

/*
 * WQEs or completions per hold of a QP's state_lock, which is taken with
 * interrupts off: a ring has up to 16K slots. A walk with more to do
 * goes on after dropping the lock: at once if its caller may sleep,
 * else in a work item.
 */
#define SRDMA_RING_BATCH 64

/**
 * srdma_sq_run() - fetch what was posted to the send queue and start it
 * @qp: the QP
 * @may_sleep: the caller may sleep, so may go on past one batch
 *
 * In RTS calls @sq_kick for WQEs that need the wire; in ERR flushes.
 * Any context.
 */
void srdma_sq_run(struct srdma_qp *qp, bool may_sleep);

/**
 * srdma_sq_wqe_done() - the transport finished a send WQE
 * @qp: the QP
 * @wqe: the WQE, one srdma_sq_pending() returned
 * @status: its completion status; any but IB_WC_SUCCESS is fatal to @qp
 *
 * Completions are posted in ring order. A WQE that the core completed
 * meanwhile (the QP went to ERR and flushed it) is left as it is. Any
 * context.
 */
void srdma_sq_wqe_done(struct srdma_qp *qp, struct srdma_swqe *wqe,
		       enum ib_wc_status status);

/**
 * srdma_sq_oldest() - the oldest send WQE not yet completed
 * @qp: the QP
 * @fetch: sq_fetch, as the caller read it (smp_load_acquire())
 *
 * Read after @fetch, sq_cons may already be past it: then every WQE up to
 * @fetch is complete. Any context.
 *
 * Return: sq_cons, or @fetch if sq_cons is past it.
 */
static inline u32 srdma_sq_oldest(struct srdma_qp *qp, u32 fetch)
{
	u32 cons = READ_ONCE(qp->sq_cons);

	return fetch - cons > srdma_queue_slots(&qp->sq.q) ? fetch : cons;
}

/**
 * srdma_sq_catch_up() - a transport's ring position, moved past completions
 * @pos: where the transport is, at most @fetch
 * @oldest: srdma_sq_oldest()
 * @fetch: the sq_fetch that @oldest was read with
 *
 * The core completes local WQEs (bind, invalidate, fast register) itself
 * once all before them are complete, and in ERR it completes everything;
 * a transport that has not walked past those yet must skip them. Both
 * positions are measured back from @fetch, so a transport that is behind
 * stays behind however far (2^31 local WQEs in a row and more: anything
 * short of the counter space less a ring), and is never taken for ahead.
 *
 * Return: @pos, or @oldest if @pos is behind it.
 */
static inline u32 srdma_sq_catch_up(u32 pos, u32 oldest, u32 fetch)
{
	return fetch - pos > fetch - oldest ? oldest : pos;
}

/**
 * srdma_sq_pending() - the send WQE at a ring position, if it needs the wire
 * @qp: the QP
 * @pos: a position before @fetch
 * @fetch: sq_fetch, as the caller read it (smp_load_acquire())
 *
 * A transport reads a WQE's kernel copy only through this. The copy of a
 * WQE the core has completed is the core's to refill with a newer WQE,
 * which would then be taken for the old one and sent twice: the state is
 * read first, and sq_cons only after it. The core moves sq_cons past a
 * slot and later refetches into its copy under state_lock, so seeing the
 * newer WQE means seeing sq_cons past @pos. A WQE this returns is not
 * completed, nor its copy rewritten, until the transport calls
 * srdma_sq_wqe_done(), except that in ERR the flush may complete it (the
 * copy then stays as it is until RESET). Any context.
 *
 * Return: the WQE, or NULL if it needs nothing more from the transport: a
 * local one, finished, or one the core completed already.
 */
static inline struct srdma_swqe *srdma_sq_pending(struct srdma_qp *qp,
						  u32 pos, u32 fetch)
{
	struct srdma_swqe *w = srdma_swqe_at(qp, pos);
	bool done = READ_ONCE(w->state) == SRDMA_WQE_DONE;

	/* the copy before sq_cons: both written under state_lock */
	smp_rmb();
	if (done || srdma_sq_catch_up(pos, srdma_sq_oldest(qp, fetch),
				      fetch) != pos)
		return NULL;
	return w;
}

/**
 * srdma_sq_fail_head() - fail the oldest send WQE and the QP
 * @qp: the QP
 * @status: the WQE's completion status
 *
 * For an error that names no WQE (a peer's Terminate): the oldest one not
 * yet complete, if any, completes with @status, and @qp goes to ERR. Any
 * context.
 */
void srdma_sq_fail_head(struct srdma_qp *qp, enum ib_wc_status status);

/**
 * srdma_flush() - complete every outstanding WQE of a QP in ERR
 * @qp: the QP
 * @may_sleep: as for srdma_sq_run()
 *
 * With IB_WC_WR_FLUSH_ERR, after the one that failed. Any context.
 */
void srdma_flush(struct srdma_qp *qp, bool may_sleep);

/**
 * srdma_sq_resume() - the completions the transport held may go
 * @qp: the QP
 *
 * After the transport's sq_held answered true: completes what finished,
 * and in ERR goes on with the flush, from process context. Any context.
 */
void srdma_sq_resume(struct srdma_qp *qp);

/**
 * srdma_cq_post() - post one completion
 * @cq: the CQ
 * @wc: the completion
 * @solicited: the event it carries is solicited
 *
 * Any context, any lock held: the consumer's completion handler and the
 * CQ error event are called later from the CQ's tasklet, never from here.
 *
 * Return: 0, or -ENOSPC on overflow, the CQ error event on its way; the
 * caller then moves its QP to ERR.
 */
int srdma_cq_post(struct srdma_cq *cq, const struct ib_wc *wc,
		  bool solicited);

/**
 * srdma_rkey_check() - look up a remote key and check one access
 * @qp: the QP the access comes in on
 * @rkey: the key
 * @iova: first byte
 * @length: bytes
 * @access: IB_ACCESS_* needed
 * @err: set to the reason on failure
 *
 * Return: the key's object with a reference (srdma_mem_put()), or NULL
 * with *@err -EINVAL (invalid key), -EPERM (wrong PD or QP), -EACCES
 * (access rights) or -ERANGE (bounds).
 */
struct srdma_mem *srdma_rkey_check(struct srdma_qp *qp, u32 rkey,
				   u64 iova, u64 length, int access,
				   int *err);

/**
 * srdma_mem_put() - drop a reference on a memory key's object
 * @mem: the object
 */
void srdma_mem_put(struct srdma_mem *mem);

/**
 * srdma_mem_copy() - copy between a checked memory key and a buffer
 * @mem: the key's object, from srdma_rkey_check()
 * @iova: first byte in @mem
 * @buf: the buffer
 * @length: bytes
 * @dir: SRDMA_TO_MEM or SRDMA_FROM_MEM
 *
 * One access in flight: an invalidation of @mem waits for it.
 *
 * Return: 0, or an errno once @mem was invalidated (the caller ends the
 * operation with a protection error).
 */
int srdma_mem_copy(struct srdma_mem *mem, u64 iova, void *buf, u64 length,
		   enum srdma_copy_dir dir);

/**
 * srdma_rkey_copy() - check a held remote key again, in full, and copy
 * @qp: the QP the access comes in on
 * @mem: the key's object, held since an earlier srdma_rkey_check()
 * @rkey: the key
 * @iova: first byte
 * @buf: the buffer
 * @length: bytes
 * @access: IB_ACCESS_* needed
 * @dir: SRDMA_TO_MEM or SRDMA_FROM_MEM
 *
 * For an access that outlives its first check (an iWARP READ response
 * queued for later): the check and the copy hold mem->lock together, so
 * no byte moves after a rereg, dereg, unbind or invalidate returned.
 *
 * Return: 0 or srdma_rkey_check()'s errors, memory untouched.
 */
int srdma_rkey_copy(struct srdma_qp *qp, struct srdma_mem *mem, u32 rkey,
		    u64 iova, void *buf, u64 length, int access,
		    enum srdma_copy_dir dir);

/**
 * srdma_rkey_check_copy() - look up a remote key, check one access, copy
 * @qp: the QP the access comes in on
 * @rkey: the key
 * @iova: first byte
 * @buf: the buffer
 * @length: bytes
 * @access: IB_ACCESS_* needed
 * @dir: SRDMA_TO_MEM or SRDMA_FROM_MEM
 *
 * srdma_rkey_check() and srdma_rkey_copy() in one: a lookup and one hold
 * of the key's lock, for an access checked and done at once (one packet
 * of an RDMA WRITE).
 *
 * Return: 0 or srdma_rkey_check()'s errors, memory untouched.
 */
int srdma_rkey_check_copy(struct srdma_qp *qp, u32 rkey, u64 iova, void *buf,
			  u64 length, int access, enum srdma_copy_dir dir);

/**
 * srdma_invalidate() - invalidate a key (local, or Send with Invalidate)
 * @qp: the QP; the key must be in its PD
 * @key: a fast-register MR's or a type 2 window's key
 *
 * Once this returns, no copy through @key is under way or will start.
 *
 * Return: 0 or -EINVAL.
 */
int srdma_invalidate(struct srdma_qp *qp, u32 key);

/**
 * struct srdma_sge_cursor - a position in a local SGE list
 * @sge: the list
 * @num_sge: its entries
 * @idx: the current entry
 * @off: bytes into it
 *
 * For messages that span packets: srdma_sge_copy() and srdma_sge_skip()
 * advance it.
 */
struct srdma_sge_cursor {
	const struct ib_sge *sge;
	u32 num_sge;
	u32 idx;
	u32 off;
};

static inline void srdma_sge_cursor_init(struct srdma_sge_cursor *c,
					 const struct ib_sge *sge, u32 num_sge)
{
	c->sge = sge;
	c->num_sge = num_sge;
	c->idx = 0;
	c->off = 0;
}

/**
 * srdma_sge_copy() - copy between a buffer and an SGE list
 * @qp: the QP whose lkeys the list holds
 * @c: where in the list; advanced
 * @buf: the buffer
 * @len: bytes
 * @dir: SRDMA_TO_MEM (local write access needed) or SRDMA_FROM_MEM
 *
 * Checks each lkey it copies through.
 *
 * Return: 0, -ENOSPC when the list is too short, or a key check error.
 */
int srdma_sge_copy(struct srdma_qp *qp, struct srdma_sge_cursor *c,
		   void *buf, u32 len, enum srdma_copy_dir dir);

/**
 * srdma_sge_skip() - advance an SGE cursor without touching memory
 * @c: the cursor
 * @len: bytes
 *
 * Return: 0 or -ENOSPC when the list is too short.
 */
int srdma_sge_skip(struct srdma_sge_cursor *c, u32 len);

/**
 * srdma_sge_err_status() - the completion status for a local copy's error
 * @err: 0 or an error of srdma_sge_copy(), srdma_sge_skip() or
 *	srdma_swqe_read()
 *
 * Return: IB_WC_SUCCESS for 0, IB_WC_LOC_LEN_ERR when the SGE list was
 * too short (-ENOSPC), IB_WC_WR_FLUSH_ERR when the WQE was flushed
 * (-ECANCELED), else IB_WC_LOC_PROT_ERR (a key check failed).
 */
static inline enum ib_wc_status srdma_sge_err_status(int err)
{
	if (!err)
		return IB_WC_SUCCESS;
	if (err == -ECANCELED)
		return IB_WC_WR_FLUSH_ERR;
	return err == -ENOSPC ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
}

/**
 * srdma_swqe_read() - read part of a send WQE's payload
 * @qp: the QP of @w
 * @w: the WQE
 * @off: the first byte to read, counted over the whole payload
 * @buf: where to (a packet's or FPDU's payload)
 * @len: bytes
 *
 * From the inline bytes held in @w, else through @w's SGE list with each
 * lkey checked, only while @w is outstanding (as srdma_swqe_place()).
 * Any context.
 *
 * Return: 0, -ENOSPC when the payload ends before @off + @len,
 * -ECANCELED when @w is flushed or about to be, or a key check error
 * (srdma_sge_err_status() turns them into a WC status).
 */
int srdma_swqe_read(struct srdma_qp *qp, const struct srdma_swqe *w, u32 off,
		    void *buf, u32 len);

/**
 * typedef srdma_lend_fn - takes one piece of memory lent by srdma_swqe_lend()
 * @arg: the caller's
 * @page: the page that holds it, pinned by its MR
 * @off: where in @page it starts
 * @len: its bytes, within @page
 *
 * Called with locks held: take a reference on @page to keep it past the
 * call, and nothing that sleeps.
 *
 * Return: 0, or an error that stops srdma_swqe_lend() (-EOPNOTSUPP: the
 * caller copies instead).
 */
typedef int (*srdma_lend_fn)(void *arg, struct page *page, u32 off, u32 len);

/**
 * srdma_swqe_lend() - lend the pages of part of a send WQE's payload
 * @qp: the QP of @w
 * @w: the WQE
 * @off: the first byte, counted over the whole payload
 * @len: bytes
 * @lend: called for each piece, in order
 * @arg: for @lend
 *
 * srdma_swqe_read() without the copy, for a transport that sends the
 * pages themselves: the same checks of @w's state and each lkey. Only
 * user MRs' pages can be lent; a payload elsewhere (inline, the DMA MR,
 * fast-registered kernel pages) returns -EOPNOTSUPP, as may @lend, and
 * the caller copies it with srdma_swqe_read() instead. A page the caller
 * keeps outlives later invalidations of its key and @w's completion,
 * which do not wait for it: lend only for a send that leaves the host
 * before @w can complete normally (an RC packet's first transmission,
 * which the ACK completing @w covers), and only read the page.
 *
 * Return: 0, -EOPNOTSUPP, or srdma_swqe_read()'s errors.
 */
int srdma_swqe_lend(struct srdma_qp *qp, const struct srdma_swqe *w, u32 off,
		    u32 len, srdma_lend_fn lend, void *arg);

/**
 * srdma_swqe_place() - write a READ response into a send WQE's buffers
 * @qp: the QP of @w
 * @w: the WQE the response answers
 * @c: where in @w's SGE list; advanced
 * @buf: the response's bytes
 * @len: how many
 *
 * Only while @w is outstanding: once the QP is in ERR its flush completes
 * @w and hands the buffers back to the consumer, who may free them, so
 * nothing is written then. Any context.
 *
 * Return: 0; -ECANCELED when @w is flushed or about to be (complete
 * nothing: the flush does); else as srdma_sge_copy().
 */
int srdma_swqe_place(struct srdma_qp *qp, const struct srdma_swqe *w,
		     struct srdma_sge_cursor *c, const void *buf, u32 len);

/**
 * srdma_swqe_place_at() - srdma_swqe_place() at a byte offset
 * @qp: the QP of @w
 * @w: the WQE the response answers
 * @off: the first byte of @w's SGE list to write, counted over the list
 * @buf: the response's bytes
 * @len: how many
 *
 * For a caller that keeps no cursor (each RoCE READ response packet says
 * where it goes). Any context.
 *
 * Return: as srdma_swqe_place(), or -ENOSPC when the list ends before @off.
 */
int srdma_swqe_place_at(struct srdma_qp *qp, const struct srdma_swqe *w,
			u32 off, const void *buf, u32 len);

/**
 * srdma_swqe_atomic_result() - store an atomic's original value locally
 * @qp: the QP of @w
 * @w: a compare-and-swap or fetch-and-add WQE
 * @orig: the value the responder found at the remote address (CPU order)
 *
 * Writes the eight bytes into the start of @w's SGE list, as the atomic's
 * answer arrives. Any context.
 *
 * Return: the status @w completes with: IB_WC_SUCCESS,
 * IB_WC_WR_FLUSH_ERR when the QP is in ERR (srdma_swqe_place()), or
 * IB_WC_LOC_PROT_ERR when the bytes could not be written, for whatever
 * other reason (an inline WQE's missing SGE list included).
 */
enum ib_wc_status srdma_swqe_atomic_result(struct srdma_qp *qp,
					   const struct srdma_swqe *w,
					   u64 orig);

/**
 * struct srdma_recv - the receive WQE a message is being placed into
 * @held: taken off the receive queue and not completed yet
 * @wqe: its copy, checked (wr_id, SGE count)
 * @cur: where in @sge the next byte goes
 * @len: bytes placed so far
 * @sge: its SGE list, the QP's (qp->recv_sge) once taken
 *
 * A transport's responder keeps one per QP for the message in progress
 * (never more: the SGE list it points to is the QP's) and reads @held
 * and @len; the functions below change it. Every receive taken off a
 * ring completes - successfully, in error or flushed - as nothing else
 * would give it back to the consumer. The
 * core takes no lock for it: the transport serializes every use of one
 * (RoCE under its rwqe_lock, iWARP in its rx path or once rx is quiet).
 * Each function may run in any context.
 */
struct srdma_recv {
	bool held;
	struct rxe_recv_wqe wqe;
	struct srdma_sge_cursor cur;
	u32 len;
	struct ib_sge *sge;
};

/**
 * srdma_recv_take() - take the next posted receive for a new message
 * @qp: the QP
 * @r: its receive, not held
 *
 * From the QP's SRQ if it has one, which raises the SRQ limit event
 * when due. Places from the first byte of the receive.
 *
 * Return: false when nothing is posted (RNR).
 */
bool srdma_recv_take(struct srdma_qp *qp, struct srdma_recv *r);

/**
 * srdma_recv_restart() - place from the first byte of the receive again
 * @r: a held receive
 *
 * For a receive kept for the next message when one was abandoned or
 * dropped before it completed (RoCE UC and UD).
 */
void srdma_recv_restart(struct srdma_recv *r);

/**
 * srdma_recv_room() - bytes the receive can hold
 * @r: a held receive
 *
 * Return: the sum of its SGE lengths.
 */
u64 srdma_recv_room(const struct srdma_recv *r);

/**
 * srdma_recv_place() - place the next bytes of the message
 * @qp: the QP whose lkeys the receive holds
 * @r: a held receive; its cursor and @len advance
 * @buf: the bytes
 * @len: how many
 *
 * Return: IB_WC_SUCCESS, IB_WC_LOC_LEN_ERR when the receive is too
 * short, or IB_WC_LOC_PROT_ERR when an lkey check fails. On error the
 * receive is still held: the caller fails it (srdma_recv_fail()) or
 * keeps it for the next message.
 */
enum ib_wc_status srdma_recv_place(struct srdma_qp *qp, struct srdma_recv *r,
				   const void *buf, u32 len);

/**
 * srdma_recv_invalidate() - the Send with Invalidate part of a completion
 * @qp: the QP; the key must be in its PD
 * @wc: the completion being built; gets IB_WC_WITH_INVALIDATE and the key
 * @rkey: the key the message names
 *
 * Return: 0, or -EINVAL when the key cannot be invalidated: @wc is
 * untouched and the caller fails the receive with the status its
 * protocol gives that error.
 */
int srdma_recv_invalidate(struct srdma_qp *qp, struct ib_wc *wc, u32 rkey);

/**
 * srdma_recv_complete() - post the completion of a held receive
 * @qp: the QP
 * @r: the receive; no longer held after this
 * @wc: the completion: the caller sets its status, opcode, byte_len
 *	(usually @r->len) and whatever else it reports (immediate data,
 *	port, UD fields); wr_id and qp are set here
 * @solicited: the message asked for a solicited event
 *
 * Return: 0, or -ENOSPC on CQ overflow (srdma_cq_post()): the caller
 * then moves the QP to ERR, once it holds no lock that the flush takes.
 */
int srdma_recv_complete(struct srdma_qp *qp, struct srdma_recv *r,
			struct ib_wc *wc, bool solicited);

/**
 * srdma_recv_fail() - complete a held receive with an error
 * @qp: the QP
 * @r: the receive; nothing happens unless it is held
 * @status: the completion status
 *
 * The message it was taken for is cut short. A CQ overflow is not
 * returned: the QP is failing, or (RoCE UC) only the message is.
 */
void srdma_recv_fail(struct srdma_qp *qp, struct srdma_recv *r,
		     enum ib_wc_status status);

/**
 * srdma_recv_flush() - complete a held receive with IB_WC_WR_FLUSH_ERR
 * @qp: the QP, going to ERR or closed
 * @r: the receive; nothing happens unless it is held
 *
 * Call it before srdma_flush() flushes the ring: the held receive is
 * older than every one still posted.
 */
void srdma_recv_flush(struct srdma_qp *qp, struct srdma_recv *r);

/**
 * srdma_recv_drop() - let go of a held receive on RESET or destroy
 * @qp: the QP
 * @r: the receive; not held after this
 *
 * One of the QP's own ring goes with the ring, uncompleted; one taken
 * from an SRQ is the SRQ consumer's and completes flushed.
 */
void srdma_recv_drop(struct srdma_qp *qp, struct srdma_recv *r);

/**
 * struct srdma_atomic_args - one atomic operation
 * @cmp_swap: compare and swap; else fetch and add
 * @swap_add: the value to swap in or add
 * @swap_mask: swap: the bits to replace; add: where fields end
 * @compare: compare and swap: the value to compare with
 * @compare_mask: the bits to compare
 */
struct srdma_atomic_args {
	bool cmp_swap;
	u64 swap_add;
	u64 swap_mask;
	u64 compare;
	u64 compare_mask;
};

/**
 * srdma_atomic_op() - run one atomic on eight aligned bytes
 * @mem: the key's object, checked for the access
 * @va: the bytes' address in @mem
 * @args: the operation
 * @orig: set to the value before it
 *
 * Atomic against every other srdma atomic and ATOMIC WRITE.
 *
 * Return: 0 or srdma_mem_copy()'s errors.
 */
int srdma_atomic_op(struct srdma_mem *mem, u64 va,
		    const struct srdma_atomic_args *args, u64 *orig);

/**
 * srdma_atomic_store() - IBTA 1.5 ATOMIC WRITE: store eight bytes as one
 * @mem: the key's object, checked for the access
 * @va: the bytes' address in @mem
 * @src: the eight bytes
 *
 * Return: 0 or srdma_mem_copy()'s errors.
 */
int srdma_atomic_store(struct srdma_mem *mem, u64 va, const void *src);

#endif /* SRDMA_TRANSPORT_H */
