// SPDX-License-Identifier: GPL-2.0
/*
 * Driver details for rdma res (`rdma res show qp|mr -dd`): ib_core's
 * restrack asks through the fill_res_*_entry ops and we add a table of
 * named values (RDMA_NLDEV_ATTR_DRIVER). QPs get the core's view here
 * (queue use, per-QP packet and recovery counts) and the transport's
 * protocol state from tp->fill_res_qp. Snapshots are taken under the
 * object's lock and written to the message after it is dropped.
 */
#include <linux/capability.h>
#include <rdma/restrack.h>
#include <rdma/rdma_netlink.h>

#include "srdma.h"
#include "transport.h"

/* Slots in use between a ring's producer and @cons (both masked here). */
static u32 srdma_ring_used(const struct srdma_queue *q, u32 cons)
{
	u32 prod;

	if (!q->buf)
		return 0;
	/* pairs with the producer's release, as the consumers' reads do */
	prod = smp_load_acquire(&q->buf->producer_index);
	return (prod - cons) & q->index_mask;
}

static int srdma_fill_res_qp_live(struct sk_buff *msg, struct srdma_qp *qp)
{
	const struct srdma_qp_stats *st = &qp->stats;
	struct nlattr *table;
	u32 sq_used, rq_used = 0, sq_fetched, rq_cons;

	sq_used = srdma_ring_used(&qp->sq.q, READ_ONCE(qp->sq_cons));
	sq_fetched = READ_ONCE(qp->sq_fetch) - READ_ONCE(qp->sq_cons);
	if (!qp->srq && qp->rq.q.buf) {
		/* the transport publishes it with a release (sq.c) */
		rq_cons = smp_load_acquire(&qp->rq.q.buf->consumer_index);
		rq_used = srdma_ring_used(&qp->rq.q, rq_cons);
	}

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "sq_used", sq_used) ||
	    rdma_nl_put_driver_u32(msg, "sq_size", qp->sq.max_wr) ||
	    rdma_nl_put_driver_u32(msg, "sq_in_flight", sq_fetched) ||
	    (!qp->srq &&
	     (rdma_nl_put_driver_u32(msg, "rq_used", rq_used) ||
	      rdma_nl_put_driver_u32(msg, "rq_size", qp->rq.max_wr))) ||
	    (qp->srq &&
	     rdma_nl_put_driver_u32(msg, "srq", qp->srq->srq_num)) ||
	    rdma_nl_put_driver_u64(msg, "tx_packets",
				   atomic64_read(&st->tx_packets)) ||
	    rdma_nl_put_driver_u64(msg, "tx_bytes",
				   atomic64_read(&st->tx_bytes)) ||
	    rdma_nl_put_driver_u64(msg, "rx_packets",
				   atomic64_read(&st->rx_packets)) ||
	    rdma_nl_put_driver_u64(msg, "rx_bytes",
				   atomic64_read(&st->rx_bytes)))
		goto err;
	if (qp_dev(qp)->tp->fill_res_qp && qp->tp_priv &&
	    qp_dev(qp)->tp->fill_res_qp(msg, qp))
		goto err;
	nla_nest_end(msg, table);
	return 0;

err:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

/*
 * ib_core calls destroy_qp before it waits for the dumps that hold the
 * QP's restrack entry, so a dump can get here during or after
 * srdma_destroy_qp(): the rings, the transport's state and the SRQ may be
 * gone. destroying, set under modify_lock before any of them goes, says
 * so; such a QP shows ib_core's own attributes only.
 */
int srdma_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	int err = 0;

	mutex_lock(&qp->modify_lock);
	if (!qp->destroying)
		err = srdma_fill_res_qp_live(msg, qp);
	mutex_unlock(&qp->modify_lock);
	return err;
}

static const char *const srdma_mem_state_names[] = {
	[SRDMA_MEM_INVALID] = "invalid",
	[SRDMA_MEM_VALID] = "valid",
	[SRDMA_MEM_DEAD] = "dead",
};

static const char *const srdma_mem_type_names[] = {
	[SRDMA_MEM_USER] = "user",
	[SRDMA_MEM_DMA] = "dma",
	[SRDMA_MEM_FAST] = "fast_reg",
	[SRDMA_MEM_MW] = "mw",
};

int srdma_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct srdma_mr *mr = to_smr(ibmr);
	struct srdma_mem *mem;
	const char *state_name = "?", *type_name = "?";
	struct nlattr *table;
	u32 key, npages, bound;
	unsigned long flags;
	unsigned int shift;
	u8 state, type;
	bool admin;
	int access;
	u64 iova;

	/* a fast-register may replace mr->mem; the old one is freed by RCU */
	rcu_read_lock();
	mem = READ_ONCE(mr->mem);
	read_lock_irqsave(&mem->lock, flags);
	key = mem->key;
	state = mem->state;
	type = mem->type;
	access = mem->access;
	iova = mem->iova;
	npages = mem->npages;
	shift = mem->page_shift;
	bound = atomic_read(&mem->bound_mws);
	read_unlock_irqrestore(&mem->lock, flags);
	rcu_read_unlock();
	if (state < ARRAY_SIZE(srdma_mem_state_names))
		state_name = srdma_mem_state_names[state];
	if (type < ARRAY_SIZE(srdma_mem_type_names))
		type_name = srdma_mem_type_names[type];

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	/*
	 * Anyone may dump every MR of the device. ib_core shows the keys
	 * only to CAP_NET_ADMIN; so do we, and the iova too: a kernel
	 * consumer's is a kernel address (virtual DMA).
	 */
	admin = has_capability_noaudit(current, CAP_NET_ADMIN);
	if (rdma_nl_put_driver_string(msg, "key_state", state_name) ||
	    rdma_nl_put_driver_string(msg, "mr_type", type_name) ||
	    (admin && rdma_nl_put_driver_u32_hex(msg, "key", key)) ||
	    rdma_nl_put_driver_u32_hex(msg, "access", access) ||
	    (admin && rdma_nl_put_driver_u64_hex(msg, "iova", iova)) ||
	    rdma_nl_put_driver_u32(msg, "pages", npages) ||
	    rdma_nl_put_driver_u32(msg, "page_size", npages ? 1U << shift : 0) ||
	    rdma_nl_put_driver_u32(msg, "bound_mws", bound) ||
	    (type == SRDMA_MEM_FAST &&
	     (rdma_nl_put_driver_u32(msg, "mapped_pages", mr->map_npages) ||
	      rdma_nl_put_driver_u32(msg, "max_pages", mr->max_pages))))
		goto err;
	nla_nest_end(msg, table);
	return 0;

err:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}
