// SPDX-License-Identifier: GPL-2.0
/*
 * srdma_kulp: a kernel ULP in miniature, for selftests/srdma_kulp.sh.
 *
 * Kernel consumers post work from contexts no user of libibverbs can
 * reach: with interrupts off, from a hard interrupt, with completions
 * handled in softirq or in a workqueue. Those are the paths where a soft
 * RDMA driver's locking goes wrong (a spin_unlock_bh() inside an irq-off
 * section, a bottom-half lock taken from a hard interrupt), and lockdep
 * on the debug kernel checks them only if something runs them.
 *
 * Older ULPs create their CQs with a comp_handler of their own
 * (ib_create_cq) and poll, re-arm and post from inside it, and call verbs
 * from their event handlers: a driver that calls them under its own locks
 * deadlocks there.
 *
 * Loading it with dev=NAME gid_index=N runs every case on RC QP pairs
 * connected to each other on that RoCE device, prints "srdma_kulp: CASE:
 * ok" or "srdma_kulp: CASE: FAIL: why" for each, frees everything, and
 * succeeds only if every case passed. A hard interrupt is an hrtimer in
 * HRTIMER_MODE_REL_HARD, whose callback runs from the timer interrupt.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev_name_param = "sroce0";
module_param_named(dev, dev_name_param, charp, 0444);
MODULE_PARM_DESC(dev, "RoCE device to test");
static int gid_index;
module_param(gid_index, int, 0444);
MODULE_PARM_DESC(gid_index, "index of a RoCE v2 GID of the device");
static unsigned int timeout_ms = 20000;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "how long to wait for each completion");

#define KULP_LEN	4000		/* bytes per transfer: 4 packets */
#define KULP_WRS	256		/* room for a chain of KULP_CHAIN */
#define KULP_CHAIN	200		/* WRs per chain: over 3 of srdma's batches */
#define KULP_PIECE	16		/* bytes per WR of a chain */
#define KULP_BAD_KEY	0xfffffffeU	/* a key no MR or MW of the test has */
#define KULP_PP_LEN	1024		/* bytes per message of a ping-pong */
#define KULP_PP_TX	0		/* ...sent from here in a QP's page */
#define KULP_PP_RX	2048		/* ...received here */
#define KULP_PP_ROUNDS	100
#define KULP_CE_MAX	16		/* receives that overflow a small CQ */
#define KULP_CE_LEN	64

/* One work request's completion, as its CQ's callback saw it. */
struct kulp_wc {
	struct ib_cqe cqe;
	struct completion done;
	int status;			/* enum ib_wc_status; -1 until done */
	enum ib_wc_opcode opcode;
	u32 byte_len;
	int wc_flags;
	u32 invalidated;
	bool in_softirq;
};

/* Completions of many work requests, counted down. */
struct kulp_count {
	struct ib_cqe cqe;
	atomic_t left;
	atomic_t failed;		/* any status but success */
	struct completion done;
};

/*
 * A ping-pong driven from comp_handlers alone: each receive completion
 * on b posts a receive and a SEND back on b, each on a the next round.
 */
struct kulp_pp {
	struct ib_cqe a_rx, b_rx, tx;
	int round;			/* a's receive handler's only */
	atomic_t sent;			/* SENDs of both that succeeded */
	const char *why;		/* the first failure */
	struct completion done;		/* all rounds, or a failure */
};

/* What the handlers of an overflowing CQ and its QP did. */
struct kulp_ce {
	bool active;			/* b's QP_FATAL is the case's */
	struct kulp_count sends;	/* a's SENDs that overflow b's CQ */
	struct completion cq_err, fatal_b;
	int arm, polled, cq_err_post;	/* in the CQ_ERR handler */
	int fatal_post;			/* in b's QP_FATAL handler */
};

/* Two RC QPs on one device, each the other's peer, and their memory. */
struct kulp_pair {
	struct ib_device *dev;
	struct ib_pd *pd;
	/*
	 * From ib_alloc_cq(): scq IB_POLL_SOFTIRQ, rcq IB_POLL_WORKQUEUE.
	 * From ib_create_cq() with kulp_raw_comp() when @raw: then rcq
	 * holds a's receives only, brcq b's.
	 */
	struct ib_cq *scq;		/* sends of both */
	struct ib_cq *rcq;		/* receives of both, or a's */
	struct ib_cq *brcq;		/* @raw: b's receives */
	bool raw;
	bool raw_irqs_off;		/* a raw handler had interrupts off */
	struct ib_qp *a, *b;
	void *abuf, *bbuf;		/* a page each, DMA mapped */
	u64 adma, bdma;
	struct completion fatal;	/* QP_FATAL on a */
	struct completion last_wqe;	/* LAST_WQE_REACHED on any QP */
	struct kulp_wc wc[8];
	struct kulp_pp pp;
	struct kulp_ce ce;
};

/* A post from a hard interrupt. */
struct kulp_irq_post {
	struct hrtimer timer;
	struct ib_qp *qp;
	const struct ib_send_wr *wr;
	struct completion fired;
	int ret;
	bool hardirq;
};

static void kulp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kulp_wc *w = container_of(wc->wr_cqe, struct kulp_wc, cqe);

	w->status = wc->status;
	w->opcode = wc->opcode;
	w->byte_len = wc->byte_len;
	w->wc_flags = wc->wc_flags;
	w->invalidated = wc->ex.invalidate_rkey;
	w->in_softirq = in_serving_softirq();
	complete(&w->done);
}

static struct ib_cqe *kulp_cqe(struct kulp_wc *w)
{
	init_completion(&w->done);
	w->cqe.done = kulp_done;
	w->status = -1;
	return &w->cqe;
}

static int kulp_wait(struct kulp_wc *w, enum ib_wc_status want,
		     const char **why)
{
	if (!wait_for_completion_timeout(&w->done,
					 msecs_to_jiffies(timeout_ms))) {
		*why = "no completion";
		return -ETIMEDOUT;
	}
	if (w->status != want) {
		pr_info("status %d (%s), %d wanted\n", w->status,
			ib_wc_status_msg(w->status), want);
		*why = "wrong completion status";
		return -EIO;
	}
	return 0;
}

static int kulp_ce_send(struct kulp_pair *p, struct kulp_wc *w);

static void kulp_qp_event(struct ib_event *ev, void *ctx)
{
	struct kulp_pair *p = ctx;

	if (ev->event == IB_EVENT_QP_FATAL && ev->element.qp == p->a)
		complete(&p->fatal);
	if (ev->event == IB_EVENT_QP_LAST_WQE_REACHED)
		complete(&p->last_wqe);
	/* handler_cq_err: a verb on the failed QP, from its own handler */
	if (ev->event == IB_EVENT_QP_FATAL && ev->element.qp == p->b &&
	    p->ce.active) {
		p->ce.fatal_post = kulp_ce_send(p, &p->wc[1]);
		complete(&p->ce.fatal_b);
	}
}

/*
 * A comp_handler of the ULP's own, as before struct ib_cqe: poll, hand
 * each completion to its ib_cqe, re-arm, all inside the driver's call.
 */
static void kulp_raw_comp(struct ib_cq *cq, void *ctx)
{
	struct kulp_pair *p = ctx;
	struct ib_wc wc;

	if (irqs_disabled())
		WRITE_ONCE(p->raw_irqs_off, true);
	do {
		while (ib_poll_cq(cq, 1, &wc) > 0)
			wc.wr_cqe->done(cq, &wc);
	} while (ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				  IB_CQ_REPORT_MISSED_EVENTS) > 0);
}

static void kulp_cq_err(struct kulp_pair *p, struct ib_cq *cq);

static void kulp_raw_cq_event(struct ib_event *ev, void *ctx)
{
	struct kulp_pair *p = ctx;

	if (ev->event == IB_EVENT_CQ_ERR && ev->element.cq == p->brcq)
		kulp_cq_err(p, ev->element.cq);
}

static enum hrtimer_restart kulp_irq_fire(struct hrtimer *t)
{
	struct kulp_irq_post *ip = container_of(t, struct kulp_irq_post, timer);

	ip->hardirq = in_hardirq();
	ip->ret = ib_post_send(ip->qp, ip->wr, NULL);
	complete(&ip->fired);
	return HRTIMER_NORESTART;
}

/* Post @wr on @qp from a hard interrupt; 0 if posted from one. */
static int kulp_post_hardirq(struct ib_qp *qp, const struct ib_send_wr *wr,
			     const char **why)
{
	struct kulp_irq_post ip = { .qp = qp, .wr = wr };

	init_completion(&ip.fired);
	hrtimer_init_on_stack(&ip.timer, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_HARD);
	ip.timer.function = kulp_irq_fire;
	hrtimer_start(&ip.timer, ms_to_ktime(1), HRTIMER_MODE_REL_HARD);
	wait_for_completion(&ip.fired);
	hrtimer_cancel(&ip.timer);	/* the callback has returned */
	destroy_hrtimer_on_stack(&ip.timer);
	if (!ip.hardirq) {
		*why = "the timer callback was not in a hard interrupt";
		return -EINVAL;
	}
	if (ip.ret)
		*why = "ib_post_send from a hard interrupt failed";
	return ip.ret;
}

static int kulp_post_irqs_off(struct ib_qp *qp, const struct ib_send_wr *wr,
			      const char **why)
{
	unsigned long flags;
	int ret;

	local_irq_save(flags);
	ret = ib_post_send(qp, wr, NULL);
	local_irq_restore(flags);
	if (ret)
		*why = "ib_post_send with interrupts off failed";
	return ret;
}

static int kulp_post(struct ib_qp *qp, const struct ib_send_wr *wr,
		     bool hardirq, const char **why)
{
	return hardirq ? kulp_post_hardirq(qp, wr, why) :
			 kulp_post_irqs_off(qp, wr, why);
}

static int kulp_post_recv(struct ib_qp *qp, struct kulp_wc *w, u64 addr,
			  u32 lkey, const char **why)
{
	struct ib_sge sge = { .addr = addr, .length = PAGE_SIZE, .lkey = lkey };
	struct ib_recv_wr wr = { .wr_cqe = kulp_cqe(w), .sg_list = &sge,
				 .num_sge = 1 };
	unsigned long flags;
	int ret;

	local_irq_save(flags);
	ret = ib_post_recv(qp, &wr, NULL);
	local_irq_restore(flags);
	if (ret)
		*why = "ib_post_recv with interrupts off failed";
	return ret;
}

/* A receive on b, then @wr on a; both complete successfully. */
static int kulp_send_recv(struct kulp_pair *p, const struct ib_send_wr *wr,
			  bool hardirq, struct kulp_wc *sw, struct kulp_wc *rw,
			  const char **why)
{
	int ret;

	ret = kulp_post_recv(p->b, rw, p->bdma, p->pd->local_dma_lkey, why) ?:
	      kulp_post(p->a, wr, hardirq, why);
	if (ret)
		return ret;
	return kulp_wait(sw, IB_WC_SUCCESS, why) ?:
	       kulp_wait(rw, IB_WC_SUCCESS, why);
}

static void kulp_pattern(void *buf, u8 seed, int len)
{
	u8 *b = buf;
	int i;

	for (i = 0; i < len; i++)
		b[i] = seed + i * 7;
}

static void kulp_fill(void *buf, u8 seed)
{
	kulp_pattern(buf, seed, KULP_LEN);
}

static int kulp_same(const void *x, const void *y, const char **why)
{
	if (memcmp(x, y, KULP_LEN)) {
		*why = "the bytes that arrived differ from those sent";
		return -EIO;
	}
	return 0;
}

static int kulp_modify(struct ib_qp *qp, struct ib_qp_attr *attr, int mask,
		       const char **why)
{
	int ret = ib_modify_qp(qp, attr, mask);

	if (ret)
		*why = "ib_modify_qp failed";
	return ret;
}

/* RESET -> INIT -> RTR -> RTS, @peer's QP number on the same GID. */
static int kulp_connect(struct kulp_pair *p, struct ib_qp *qp, u32 peer,
			const struct ib_gid_attr *gid, const char **why)
{
	union ib_gid dgid = gid->gid;	/* the peer's, which is ours */
	struct ib_qp_attr attr = {};
	struct net_device *ndev;
	int ret;

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	ret = kulp_modify(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			  IB_QP_PORT | IB_QP_ACCESS_FLAGS, why);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = peer;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(p->dev, 1);
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0, gid->index, 64, 0);
	/* kernel consumers resolve the MAC themselves: the peer is here */
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(gid);
	if (!IS_ERR(ndev))
		memcpy(attr.ah_attr.roce.dmac, ndev->dev_addr, ETH_ALEN);
	rcu_read_unlock();
	if (IS_ERR(ndev)) {
		*why = "the GID has no netdev";
		return PTR_ERR(ndev);
	}
	ret = kulp_modify(qp, &attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			  IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			  IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER, why);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	return kulp_modify(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			   IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			   IB_QP_MAX_QP_RD_ATOMIC, why);
}

static struct ib_qp *kulp_create_qp(struct kulp_pair *p, struct ib_cq *rcq,
				    const char **why)
{
	struct ib_qp_init_attr init = {
		.event_handler = kulp_qp_event,
		.qp_context = p,
		.send_cq = p->scq,
		.recv_cq = rcq,
		.cap = { .max_send_wr = KULP_WRS, .max_recv_wr = KULP_WRS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(p->pd, &init);

	if (IS_ERR(qp))
		*why = "ib_create_qp failed";
	return qp;
}

static void *kulp_buf(struct kulp_pair *p, u64 *dma)
{
	void *buf = (void *)get_zeroed_page(GFP_KERNEL);

	if (!buf)
		return NULL;
	*dma = ib_dma_map_single(p->dev, buf, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(p->dev, *dma)) {
		free_page((unsigned long)buf);
		return NULL;
	}
	return buf;
}

static void kulp_buf_free(struct kulp_pair *p, void *buf, u64 dma)
{
	if (!buf)
		return;
	ib_dma_unmap_single(p->dev, dma, PAGE_SIZE, DMA_BIDIRECTIONAL);
	free_page((unsigned long)buf);
}

static void kulp_cq_free(struct kulp_pair *p, struct ib_cq *cq)
{
	if (IS_ERR_OR_NULL(cq))
		return;
	if (p->raw)
		ib_destroy_cq(cq);
	else
		ib_free_cq(cq);
}

static void kulp_pair_free(struct kulp_pair *p)
{
	/*
	 * QPs first: then no completion can name a kulp_wc of *p. The CQs
	 * next: no handler of theirs runs once they are gone.
	 */
	if (!IS_ERR_OR_NULL(p->a))
		ib_destroy_qp(p->a);
	if (!IS_ERR_OR_NULL(p->b))
		ib_destroy_qp(p->b);
	kulp_cq_free(p, p->scq);
	kulp_cq_free(p, p->rcq);
	kulp_cq_free(p, p->brcq);
	kulp_buf_free(p, p->abuf, p->adma);
	kulp_buf_free(p, p->bbuf, p->bdma);
	if (!IS_ERR_OR_NULL(p->pd))
		ib_dealloc_pd(p->pd);
	kfree(p);
}

static struct ib_cq *kulp_raw_cq(struct kulp_pair *p, int cqe)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };

	return ib_create_cq(p->dev, kulp_raw_comp, kulp_raw_cq_event, p,
			    &attr);
}

/*
 * ib_alloc_cq() CQs, or with @raw_cqe CQs of kulp_raw_comp(), b's receive
 * CQ that many entries long and not armed; the others are.
 */
static int kulp_pair_cqs(struct kulp_pair *p, int raw_cqe)
{
	if (!raw_cqe) {
		p->scq = ib_alloc_cq(p->dev, p, 2 * KULP_WRS, 0,
				     IB_POLL_SOFTIRQ);
		p->rcq = ib_alloc_cq(p->dev, p, 2 * KULP_WRS, 0,
				     IB_POLL_WORKQUEUE);
		return IS_ERR(p->scq) || IS_ERR(p->rcq) ? -ENOMEM : 0;
	}
	p->raw = true;
	p->scq = kulp_raw_cq(p, 2 * KULP_WRS);
	p->rcq = kulp_raw_cq(p, KULP_WRS);
	p->brcq = kulp_raw_cq(p, raw_cqe);
	if (IS_ERR(p->scq) || IS_ERR(p->rcq) || IS_ERR(p->brcq))
		return -ENOMEM;
	ib_req_notify_cq(p->scq, IB_CQ_NEXT_COMP);
	ib_req_notify_cq(p->rcq, IB_CQ_NEXT_COMP);
	return 0;
}

static struct kulp_pair *kulp_pair_new(struct ib_device *dev,
				       const struct ib_gid_attr *gid,
				       int raw_cqe, const char **why)
{
	struct kulp_pair *p = kzalloc(sizeof(*p), GFP_KERNEL);

	if (!p) {
		*why = "no memory";
		return NULL;
	}
	p->dev = dev;
	init_completion(&p->fatal);
	init_completion(&p->last_wqe);
	p->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(p->pd)) {
		*why = "ib_alloc_pd failed";
		goto fail;
	}
	if (kulp_pair_cqs(p, raw_cqe)) {
		*why = "creating the CQs failed";
		goto fail;
	}
	p->abuf = kulp_buf(p, &p->adma);
	p->bbuf = kulp_buf(p, &p->bdma);
	if (!p->abuf || !p->bbuf) {
		*why = "no memory for the buffers";
		goto fail;
	}
	p->a = kulp_create_qp(p, p->rcq, why);
	if (IS_ERR(p->a))
		goto fail;
	p->b = kulp_create_qp(p, p->raw ? p->brcq : p->rcq, why);
	if (IS_ERR(p->b))
		goto fail;
	if (kulp_connect(p, p->a, p->b->qp_num, gid, why) ||
	    kulp_connect(p, p->b, p->a->qp_num, gid, why))
		goto fail;
	return p;
fail:
	kulp_pair_free(p);
	return NULL;
}

/*
 * A SEND posted with interrupts off, or from a hard interrupt; the send
 * completes in softirq, the receive in a workqueue, the bytes match.
 */
static int kulp_send(struct kulp_pair *p, bool hardirq, const char **why)
{
	struct kulp_wc *sw = &p->wc[0], *rw = &p->wc[1];
	struct ib_sge sge = { .addr = p->adma, .length = KULP_LEN,
			      .lkey = p->pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_cqe = kulp_cqe(sw), .sg_list = &sge,
				 .num_sge = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };
	int ret;

	kulp_fill(p->abuf, hardirq ? 3 : 1);
	ret = kulp_send_recv(p, &wr, hardirq, sw, rw, why);
	if (ret)
		return ret;
	if (rw->byte_len != KULP_LEN || rw->opcode != IB_WC_RECV) {
		*why = "the receive's length or opcode is wrong";
		return -EIO;
	}
	if (!sw->in_softirq || rw->in_softirq) {
		*why = "a CQ was not polled in the context it was made for";
		return -EIO;
	}
	return kulp_same(p->abuf, p->bbuf, why);
}

static int kulp_send_irqs_off(struct kulp_pair *p, const char **why)
{
	return kulp_send(p, false, why);
}

static int kulp_send_hardirq(struct kulp_pair *p, const char **why)
{
	return kulp_send(p, true, why);
}

/* Register b's page through @mr by a REG_MR work request on b. */
static int kulp_frwr(struct kulp_pair *p, struct ib_mr *mr,
		     struct scatterlist *sg, const char **why)
{
	struct kulp_wc *w = &p->wc[2];
	struct ib_reg_wr reg = {
		.wr = { .wr_cqe = kulp_cqe(w), .opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.mr = mr,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_REMOTE_READ,
	};
	int ret;

	if (ib_map_mr_sg(mr, sg, 1, NULL, PAGE_SIZE) != 1) {
		*why = "ib_map_mr_sg failed";
		return -EIO;
	}
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	reg.key = mr->rkey;
	ret = kulp_post_irqs_off(p->b, &reg.wr, why);
	return ret ?: kulp_wait(w, IB_WC_SUCCESS, why);
}

/* One RDMA op from a to b's FRWR region, waited for with @want. */
static int kulp_rdma(struct kulp_pair *p, enum ib_wr_opcode op, u64 addr,
		     u32 rkey, bool hardirq, enum ib_wc_status want,
		     const char **why)
{
	struct kulp_wc *w = &p->wc[3];
	struct ib_sge sge = { .addr = p->adma, .length = KULP_LEN,
			      .lkey = p->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_cqe = kulp_cqe(w), .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = addr,
		.rkey = rkey,
	};
	int ret;

	ret = kulp_post(p->a, &wr.wr, hardirq, why);
	return ret ?: kulp_wait(w, want, why);
}

/* SEND_WITH_INV of @rkey into a receive of b: b sees it invalidated. */
static int kulp_send_inv(struct kulp_pair *p, u32 rkey, const char **why)
{
	struct kulp_wc *sw = &p->wc[4], *rw = &p->wc[5];
	struct ib_sge sge = { .addr = p->adma, .length = 64,
			      .lkey = p->pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_cqe = kulp_cqe(sw), .sg_list = &sge,
				 .num_sge = 1, .opcode = IB_WR_SEND_WITH_INV,
				 .send_flags = IB_SEND_SIGNALED,
				 .ex.invalidate_rkey = rkey };
	int ret;

	ret = kulp_send_recv(p, &wr, true, sw, rw, why);
	if (ret)
		return ret;
	if (!(rw->wc_flags & IB_WC_WITH_INVALIDATE) || rw->invalidated != rkey) {
		*why = "the receive does not report the invalidated rkey";
		return -EIO;
	}
	return 0;
}

/*
 * Fast registration, RDMA WRITE from a hard interrupt, READ with
 * interrupts off, remote invalidation by SEND_WITH_INV, and then the
 * invalidated rkey refused: what nvme-rdma and rdma_rw do per I/O.
 */
static int kulp_frwr_rdma(struct kulp_pair *p, const char **why)
{
	struct scatterlist sg;
	struct ib_mr *mr;
	void *want;
	u32 rkey;
	int ret;

	want = kmalloc(KULP_LEN, GFP_KERNEL);
	if (!want) {
		*why = "no memory";
		return -ENOMEM;
	}
	mr = ib_alloc_mr(p->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(mr)) {
		kfree(want);
		*why = "ib_alloc_mr failed";
		return PTR_ERR(mr);
	}
	sg_init_one(&sg, p->bbuf, PAGE_SIZE);
	if (ib_dma_map_sg(p->dev, &sg, 1, DMA_BIDIRECTIONAL) != 1) {
		ib_dereg_mr(mr);
		kfree(want);
		*why = "ib_dma_map_sg failed";
		return -EIO;
	}
	ret = kulp_frwr(p, mr, &sg, why);
	rkey = mr->rkey;
	if (ret)
		goto out;

	kulp_fill(p->abuf, 5);
	memcpy(want, p->abuf, KULP_LEN);
	ret = kulp_rdma(p, IB_WR_RDMA_WRITE, mr->iova, rkey, true,
			IB_WC_SUCCESS, why) ?: kulp_same(p->bbuf, want, why);
	if (ret)
		goto out;
	memset(p->abuf, 0, KULP_LEN);
	ret = kulp_rdma(p, IB_WR_RDMA_READ, mr->iova, rkey, false,
			IB_WC_SUCCESS, why) ?: kulp_same(p->abuf, want, why);
	if (ret)
		goto out;
	ret = kulp_send_inv(p, rkey, why);
	if (ret)
		goto out;
	ret = kulp_rdma(p, IB_WR_RDMA_WRITE, mr->iova, rkey, false,
			IB_WC_REM_ACCESS_ERR, why);
	if (ret)
		*why = "a WRITE through an invalidated rkey was not refused";
out:
	ib_dma_unmap_sg(p->dev, &sg, 1, DMA_BIDIRECTIONAL);
	ib_dereg_mr(mr);
	kfree(want);
	return ret;
}

/*
 * A WQE that fails as it is posted (LOCAL_INV of a key that does not
 * exist) takes the QP to error inside ib_post_send: with interrupts off,
 * or in a hard interrupt, where the rest of the error handling is put
 * off to process context. Either way the WQE completes in error, the
 * receives waiting on the QP are flushed and QP_FATAL is raised.
 */
static int kulp_fatal(struct kulp_pair *p, bool hardirq, const char **why)
{
	struct kulp_wc *iw = &p->wc[0], *r1 = &p->wc[1], *r2 = &p->wc[2];
	struct ib_send_wr wr = { .wr_cqe = kulp_cqe(iw),
				 .opcode = IB_WR_LOCAL_INV,
				 .send_flags = IB_SEND_SIGNALED,
				 .ex.invalidate_rkey = KULP_BAD_KEY };
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int ret;

	ret = kulp_post_recv(p->a, r1, p->adma, p->pd->local_dma_lkey, why) ?:
	      kulp_post_recv(p->a, r2, p->adma, p->pd->local_dma_lkey, why);
	if (ret)
		return ret;
	ret = kulp_post(p->a, &wr, hardirq, why);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&iw->done,
					 msecs_to_jiffies(timeout_ms))) {
		*why = "the failed LOCAL_INV never completed";
		return -ETIMEDOUT;
	}
	if (iw->status == IB_WC_SUCCESS || iw->status == IB_WC_WR_FLUSH_ERR) {
		*why = "LOCAL_INV of a key that does not exist did not fail";
		return -EIO;
	}
	ret = kulp_wait(r1, IB_WC_WR_FLUSH_ERR, why) ?:
	      kulp_wait(r2, IB_WC_WR_FLUSH_ERR, why);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&p->fatal,
					 msecs_to_jiffies(timeout_ms))) {
		*why = "no QP_FATAL event";
		return -ETIMEDOUT;
	}
	ret = ib_query_qp(p->a, &attr, IB_QP_STATE, &init);
	if (ret || attr.qp_state != IB_QPS_ERR) {
		*why = "the QP is not in ERR";
		return -EIO;
	}
	return 0;
}

static int kulp_fatal_irqs_off(struct kulp_pair *p, const char **why)
{
	return kulp_fatal(p, false, why);
}

static int kulp_fatal_hardirq(struct kulp_pair *p, const char **why)
{
	return kulp_fatal(p, true, why);
}

/* ib_drain_qp on both QPs flushes a receive posted before it. */
static int kulp_drain(struct kulp_pair *p, const char **why)
{
	struct kulp_wc *r = &p->wc[0];
	int ret;

	ret = kulp_post_recv(p->a, r, p->adma, p->pd->local_dma_lkey, why);
	if (ret)
		return ret;
	ib_drain_qp(p->a);
	ib_drain_qp(p->b);
	/* completions come in order: the receive's came before the drain's */
	if (!completion_done(&r->done)) {
		*why = "a receive was still pending after ib_drain_qp";
		return -EIO;
	}
	if (r->status != IB_WC_WR_FLUSH_ERR) {
		*why = "the drained receive was not flushed";
		return -EIO;
	}
	return 0;
}

static void kulp_count_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kulp_count *c = container_of(wc->wr_cqe, struct kulp_count,
					    cqe);

	if (wc->status != IB_WC_SUCCESS)
		atomic_inc(&c->failed);
	if (atomic_dec_and_test(&c->left))
		complete(&c->done);
}

static void kulp_count_init(struct kulp_count *c, int n)
{
	c->cqe.done = kulp_count_done;
	atomic_set(&c->left, n);
	atomic_set(&c->failed, 0);
	init_completion(&c->done);
}

static int kulp_count_wait(struct kulp_count *c, const char *what,
			   const char **why)
{
	if (!wait_for_completion_timeout(&c->done,
					 msecs_to_jiffies(timeout_ms))) {
		pr_info("%s: %d of %d completions missing\n", what,
			atomic_read(&c->left), KULP_CHAIN);
		*why = "a chain's completions are missing";
		return -ETIMEDOUT;
	}
	if (atomic_read(&c->failed)) {
		pr_info("%s: %d completions failed\n", what,
			atomic_read(&c->failed));
		*why = "a chain's completions failed";
		return -EIO;
	}
	return 0;
}

/*
 * A chain of KULP_CHAIN SENDs, KULP_PIECE bytes each, posted in one
 * ib_post_send with interrupts off or from a hard interrupt: more than
 * srdma fetches in one hold of its lock, so the rest is fetched later,
 * in process context. Every send and receive completes, and b's page
 * holds a's bytes in order.
 */
static int kulp_chain(struct kulp_pair *p, bool hardirq, const char **why)
{
	struct kulp_count *sc, *rc;
	struct ib_send_wr *swr;
	struct ib_recv_wr *rwr;
	struct ib_sge *sge;
	unsigned long flags;
	int i, ret;

	BUILD_BUG_ON(KULP_CHAIN * KULP_PIECE > PAGE_SIZE);
	sc = kzalloc(2 * sizeof(*sc), GFP_KERNEL);
	swr = kcalloc(KULP_CHAIN, sizeof(*swr), GFP_KERNEL);
	rwr = kcalloc(KULP_CHAIN, sizeof(*rwr), GFP_KERNEL);
	sge = kcalloc(2 * KULP_CHAIN, sizeof(*sge), GFP_KERNEL);
	if (!sc || !swr || !rwr || !sge) {
		*why = "no memory";
		ret = -ENOMEM;
		goto out;
	}
	rc = &sc[1];
	kulp_count_init(sc, KULP_CHAIN);
	kulp_count_init(rc, KULP_CHAIN);
	kulp_fill(p->abuf, hardirq ? 9 : 7);
	for (i = 0; i < KULP_CHAIN; i++) {
		struct ib_sge *s = &sge[2 * i], *r = &sge[2 * i + 1];

		*s = (struct ib_sge){ .addr = p->adma + i * KULP_PIECE,
				      .length = KULP_PIECE,
				      .lkey = p->pd->local_dma_lkey };
		*r = (struct ib_sge){ .addr = p->bdma + i * KULP_PIECE,
				      .length = KULP_PIECE,
				      .lkey = p->pd->local_dma_lkey };
		swr[i] = (struct ib_send_wr){ .wr_cqe = &sc->cqe,
					      .sg_list = s, .num_sge = 1,
					      .opcode = IB_WR_SEND,
					      .send_flags = IB_SEND_SIGNALED };
		rwr[i] = (struct ib_recv_wr){ .wr_cqe = &rc->cqe,
					      .sg_list = r, .num_sge = 1 };
		if (i) {
			swr[i - 1].next = &swr[i];
			rwr[i - 1].next = &rwr[i];
		}
	}
	local_irq_save(flags);
	ret = ib_post_recv(p->b, rwr, NULL);
	local_irq_restore(flags);
	if (ret) {
		*why = "ib_post_recv of a chain failed";
		goto out;
	}
	ret = kulp_post(p->a, swr, hardirq, why) ?:
	      kulp_count_wait(sc, "sends", why) ?:
	      kulp_count_wait(rc, "receives", why);
	if (ret)
		goto out;
	if (memcmp(p->abuf, p->bbuf, KULP_CHAIN * KULP_PIECE)) {
		*why = "b's page does not hold a's bytes in order";
		ret = -EIO;
	}
out:
	kfree(sge);
	kfree(rwr);
	kfree(swr);
	kfree(sc);
	return ret;
}

static int kulp_chain_irqs_off(struct kulp_pair *p, const char **why)
{
	return kulp_chain(p, false, why);
}

static int kulp_chain_hardirq(struct kulp_pair *p, const char **why)
{
	return kulp_chain(p, true, why);
}

/*
 * Work requests the QP cannot carry fail their post with -EINVAL and
 * leave the QP as it was: a SEND still goes through afterwards.
 */
static int kulp_bad_post(struct kulp_pair *p, const char **why)
{
	struct ib_sge sge = { .addr = p->adma, .length = 8,
			      .lkey = p->pd->local_dma_lkey };
	struct ib_atomic_wr at = {
		.wr = { .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = p->bdma + 1,
		.compare_add = 1,
	};
	struct ib_send_wr lso = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IB_WR_LSO };
	const struct ib_send_wr *bad;
	int ret;

	ret = ib_post_send(p->a, &at.wr, &bad);
	if (ret != -EINVAL || bad != &at.wr) {
		*why = "a misaligned atomic was not refused with EINVAL";
		return -EIO;
	}
	at.remote_addr = p->bdma;
	sge.length = 4;
	ret = ib_post_send(p->a, &at.wr, &bad);
	if (ret != -EINVAL) {
		*why = "an atomic without room for its answer was not refused";
		return -EIO;
	}
	ret = ib_post_send(p->a, &lso, &bad);
	if (ret != -EINVAL) {
		*why = "an LSO work request on an RC QP was not refused";
		return -EIO;
	}
	return kulp_send(p, false, why);
}

static void kulp_pp_fail(struct kulp_pp *pp, const char *why)
{
	if (!cmpxchg(&pp->why, NULL, why))
		complete(&pp->done);
}

/* A ping-pong message into @qp's receive area, from a comp_handler. */
static int kulp_pp_post_recv(struct kulp_pair *p, struct ib_qp *qp,
			     struct ib_cqe *cqe, u64 dma)
{
	struct ib_sge sge = { .addr = dma + KULP_PP_RX, .length = KULP_PP_LEN,
			      .lkey = p->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_cqe = cqe, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_recv(qp, &wr, NULL);
}

/* A ping-pong message from @qp's send area, from a comp_handler. */
static int kulp_pp_post_send(struct kulp_pair *p, struct ib_qp *qp, u64 dma)
{
	struct ib_sge sge = { .addr = dma + KULP_PP_TX, .length = KULP_PP_LEN,
			      .lkey = p->pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_cqe = &p->pp.tx, .sg_list = &sge,
				 .num_sge = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };

	return ib_post_send(qp, &wr, NULL);
}

/* b got round N from a: check it, echo it back on b. */
static void kulp_pp_b_rx(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kulp_pair *p = cq->cq_context;
	struct kulp_pp *pp = &p->pp;

	if (wc->status != IB_WC_SUCCESS) {
		kulp_pp_fail(pp, "a receive of b failed");
		return;
	}
	/* a's send area holds this round until a gets the echo */
	if (wc->byte_len != KULP_PP_LEN ||
	    memcmp(p->bbuf + KULP_PP_RX, p->abuf + KULP_PP_TX, KULP_PP_LEN)) {
		kulp_pp_fail(pp, "b received other bytes than a sent");
		return;
	}
	memcpy(p->bbuf + KULP_PP_TX, p->bbuf + KULP_PP_RX, KULP_PP_LEN);
	if (kulp_pp_post_recv(p, p->b, &pp->b_rx, p->bdma) ||
	    kulp_pp_post_send(p, p->b, p->bdma))
		kulp_pp_fail(pp, "posting on b from its comp_handler failed");
}

/* a got the echo of round N: check it, send round N + 1 on a. */
static void kulp_pp_a_rx(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kulp_pair *p = cq->cq_context;
	struct kulp_pp *pp = &p->pp;

	if (wc->status != IB_WC_SUCCESS) {
		kulp_pp_fail(pp, "a receive of a failed");
		return;
	}
	if (wc->byte_len != KULP_PP_LEN ||
	    memcmp(p->abuf + KULP_PP_RX, p->abuf + KULP_PP_TX, KULP_PP_LEN)) {
		kulp_pp_fail(pp, "the echo differs from what a sent");
		return;
	}
	if (++pp->round == KULP_PP_ROUNDS) {
		complete(&pp->done);
		return;
	}
	kulp_pattern(p->abuf + KULP_PP_TX, pp->round, KULP_PP_LEN);
	if (kulp_pp_post_recv(p, p->a, &pp->a_rx, p->adma) ||
	    kulp_pp_post_send(p, p->a, p->adma))
		kulp_pp_fail(pp, "posting on a from its comp_handler failed");
}

static void kulp_pp_tx(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kulp_pair *p = cq->cq_context;

	if (wc->status != IB_WC_SUCCESS)
		kulp_pp_fail(&p->pp, "a SEND of the ping-pong failed");
	else
		atomic_inc(&p->pp.sent);
}

/*
 * KULP_PP_ROUNDS round trips, each message posted from inside the
 * comp_handler that got the one before, on the QP it arrived on: the
 * SEND goes out on the QP whose responder is delivering the completion
 * (on RoCE it takes that responder's lock). Every byte is checked both
 * ways, every SEND completes, and no handler had interrupts off.
 */
static int kulp_handler_reentry(struct kulp_pair *p, const char **why)
{
	struct kulp_pp *pp = &p->pp;
	unsigned long end;
	int ret;

	pp->a_rx.done = kulp_pp_a_rx;
	pp->b_rx.done = kulp_pp_b_rx;
	pp->tx.done = kulp_pp_tx;
	init_completion(&pp->done);
	ib_req_notify_cq(p->brcq, IB_CQ_NEXT_COMP);
	kulp_pattern(p->abuf + KULP_PP_TX, 0, KULP_PP_LEN);
	ret = kulp_pp_post_recv(p, p->b, &pp->b_rx, p->bdma) ?:
	      kulp_pp_post_recv(p, p->a, &pp->a_rx, p->adma) ?:
	      kulp_pp_post_send(p, p->a, p->adma);
	if (ret) {
		*why = "posting the first round failed";
		return ret;
	}
	if (!wait_for_completion_timeout(&pp->done,
					 msecs_to_jiffies(timeout_ms))) {
		pr_info("handler_reentry: %d of %d rounds\n", pp->round,
			KULP_PP_ROUNDS);
		*why = "the ping-pong stopped";
		return -ETIMEDOUT;
	}
	end = jiffies + msecs_to_jiffies(timeout_ms);
	while (!READ_ONCE(pp->why) &&
	       atomic_read(&pp->sent) < 2 * KULP_PP_ROUNDS &&
	       time_before(jiffies, end))
		usleep_range(500, 1000);
	if (pp->why) {
		*why = pp->why;
		return -EIO;
	}
	if (atomic_read(&pp->sent) != 2 * KULP_PP_ROUNDS) {
		pr_info("handler_reentry: %d of %d SENDs completed\n",
			atomic_read(&pp->sent), 2 * KULP_PP_ROUNDS);
		*why = "SENDs of the ping-pong never completed";
		return -ETIMEDOUT;
	}
	if (READ_ONCE(p->raw_irqs_off)) {
		*why = "a comp_handler was called with interrupts off";
		return -EIO;
	}
	return 0;
}

/* A SEND on b, from a handler of handler_cq_err: it completes on scq. */
static int kulp_ce_send(struct kulp_pair *p, struct kulp_wc *w)
{
	struct ib_sge sge = { .addr = p->bdma, .length = KULP_CE_LEN,
			      .lkey = p->pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_cqe = kulp_cqe(w), .sg_list = &sge,
				 .num_sge = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };

	return ib_post_send(p->b, &wr, NULL);
}

/*
 * IB_EVENT_CQ_ERR on b's receive CQ: what a ULP does about it, from the
 * handler. Re-arm the CQ, drain it, and post a SEND on the QP whose
 * receives overflowed it (that QP's responder raised the event).
 */
static void kulp_cq_err(struct kulp_pair *p, struct ib_cq *cq)
{
	struct kulp_ce *ce = &p->ce;
	struct ib_wc wc;
	int polled = 0;

	if (irqs_disabled())
		WRITE_ONCE(p->raw_irqs_off, true);
	ce->arm = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	while (ib_poll_cq(cq, 1, &wc) > 0)
		polled += wc.status == IB_WC_SUCCESS;
	ce->polled = polled;
	ce->cq_err_post = kulp_ce_send(p, &p->wc[0]);
	complete(&ce->cq_err);
}

/*
 * b's receive CQ, a few entries long, overflows with one receive more:
 * IB_EVENT_CQ_ERR, then QP_FATAL on b. Each handler calls verbs on the
 * CQ or QP it was called for (kulp_cq_err(), kulp_qp_event()), and each
 * of those verbs works: the CQ's completions are polled, the SENDs posted
 * on b complete (flushed, as b is in error by then, or delivered to a).
 */
static int kulp_handler_cq_err(struct kulp_pair *p, const char **why)
{
	struct ib_send_wr swr[KULP_CE_MAX] = {};
	struct ib_sge sge[KULP_CE_MAX];
	struct kulp_ce *ce = &p->ce;
	int n = p->brcq->cqe, i, ret;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (n + 1 > KULP_CE_MAX || (n + 1) * KULP_CE_LEN > PAGE_SIZE) {
		*why = "b's receive CQ is longer than the case can fill";
		return -EINVAL;
	}
	init_completion(&ce->cq_err);
	init_completion(&ce->fatal_b);
	kulp_count_init(&ce->sends, n + 1);
	ce->active = true;
	/* for the SEND from the CQ_ERR handler, should b still be up */
	ret = kulp_post_recv(p->a, &p->wc[2], p->adma, p->pd->local_dma_lkey,
			     why);
	/* polled by the CQ_ERR handler, never handed to their ib_cqe */
	for (i = 0; i <= n && !ret; i++)
		ret = kulp_post_recv(p->b, &p->wc[4], p->bdma,
				     p->pd->local_dma_lkey, why);
	if (ret)
		return ret;
	for (i = 0; i <= n; i++) {
		sge[i] = (struct ib_sge){ .addr = p->adma + i * KULP_CE_LEN,
					  .length = KULP_CE_LEN,
					  .lkey = p->pd->local_dma_lkey };
		swr[i] = (struct ib_send_wr){ .wr_cqe = &ce->sends.cqe,
					      .sg_list = &sge[i], .num_sge = 1,
					      .opcode = IB_WR_SEND,
					      .send_flags = IB_SEND_SIGNALED,
					      .next = i < n ? &swr[i + 1] : NULL };
	}
	ret = ib_post_send(p->a, swr, NULL);
	if (ret) {
		*why = "posting the SENDs on a failed";
		return ret;
	}
	if (!wait_for_completion_timeout(&ce->cq_err,
					 msecs_to_jiffies(timeout_ms))) {
		*why = "no IB_EVENT_CQ_ERR";
		return -ETIMEDOUT;
	}
	if (ce->arm < 0 || ce->polled != n || ce->cq_err_post) {
		pr_info("handler_cq_err: arm %d, %d of %d polled, post %d\n",
			ce->arm, ce->polled, n, ce->cq_err_post);
		*why = "a verb in the CQ_ERR handler failed";
		return -EIO;
	}
	if (!wait_for_completion_timeout(&p->wc[0].done,
					 msecs_to_jiffies(timeout_ms))) {
		*why = "the SEND posted by the CQ_ERR handler never completed";
		return -ETIMEDOUT;
	}
	if (p->wc[0].status != IB_WC_SUCCESS &&
	    p->wc[0].status != IB_WC_WR_FLUSH_ERR) {
		*why = "the SEND posted by the CQ_ERR handler failed";
		return -EIO;
	}
	if (!wait_for_completion_timeout(&ce->fatal_b,
					 msecs_to_jiffies(timeout_ms))) {
		*why = "no QP_FATAL on b";
		return -ETIMEDOUT;
	}
	if (ce->fatal_post) {
		*why = "ib_post_send in b's QP_FATAL handler failed";
		return -EIO;
	}
	ret = kulp_wait(&p->wc[1], IB_WC_WR_FLUSH_ERR, why);
	if (ret)
		return ret;
	ret = ib_query_qp(p->b, &attr, IB_QP_STATE, &init);
	if (ret || attr.qp_state != IB_QPS_ERR) {
		*why = "b is not in ERR";
		return -EIO;
	}
	if (READ_ONCE(p->raw_irqs_off)) {
		*why = "a handler was called with interrupts off";
		return -EIO;
	}
	return 0;
}

/*
 * A QP on an SRQ, drained: it must report its last WQE taken
 * (IB_EVENT_QP_LAST_WQE_REACHED) as it enters ERR, and ib_drain_qp()
 * must not wait for it in vain (from 6.10 on it waits a minute).
 */
static int kulp_drain_srq(struct kulp_pair *p, const char **why)
{
	struct ib_srq_init_attr sinit = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = 4, .max_sge = 1 },
	};
	struct ib_qp_init_attr init = {
		.event_handler = kulp_qp_event,
		.qp_context = p,
		.send_cq = p->scq,
		.recv_cq = p->rcq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp_attr attr = { .qp_state = IB_QPS_INIT, .port_num = 1 };
	unsigned long t0;
	struct ib_srq *srq;
	struct ib_qp *qp;
	int ret;

	srq = ib_create_srq(p->pd, &sinit);
	if (IS_ERR(srq)) {
		*why = "ib_create_srq failed";
		return PTR_ERR(srq);
	}
	init.srq = srq;
	qp = ib_create_qp(p->pd, &init);
	if (IS_ERR(qp)) {
		*why = "ib_create_qp on an SRQ failed";
		ret = PTR_ERR(qp);
		goto out_srq;
	}
	ret = kulp_modify(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			  IB_QP_PORT | IB_QP_ACCESS_FLAGS, why);
	if (ret)
		goto out_qp;
	t0 = jiffies;
	ib_drain_qp(qp);
	if (time_after(jiffies, t0 + 10 * HZ)) {
		*why = "ib_drain_qp took over 10 s";
		ret = -ETIMEDOUT;
	} else if (!wait_for_completion_timeout(&p->last_wqe,
						msecs_to_jiffies(timeout_ms))) {
		*why = "no IB_EVENT_QP_LAST_WQE_REACHED";
		ret = -ETIMEDOUT;
	}
out_qp:
	ib_destroy_qp(qp);
out_srq:
	ib_destroy_srq(srq);
	return ret;
}

static const struct {
	const char *name;
	int (*run)(struct kulp_pair *p, const char **why);
	int raw_cqe;	/* CQs of kulp_raw_comp(); b's receive CQ this long */
} kulp_cases[] = {
	{ "send_irqs_off", kulp_send_irqs_off },
	{ "send_hardirq", kulp_send_hardirq },
	{ "frwr_rdma", kulp_frwr_rdma },
	{ "fatal_irqs_off", kulp_fatal_irqs_off },
	{ "fatal_hardirq", kulp_fatal_hardirq },
	{ "drain", kulp_drain },
	{ "drain_srq", kulp_drain_srq },
	{ "chain_irqs_off", kulp_chain_irqs_off },
	{ "chain_hardirq", kulp_chain_hardirq },
	{ "bad_post", kulp_bad_post },
	{ "handler_reentry", kulp_handler_reentry, KULP_WRS },
	{ "handler_cq_err", kulp_handler_cq_err, 2 },
};

static int __init kulp_init(void)
{
	const struct ib_gid_attr *gid;
	struct ib_device *dev;
	int i, failed = 0;

	dev = ib_device_get_by_name(dev_name_param, RDMA_DRIVER_UNKNOWN);
	if (!dev) {
		pr_err("no RDMA device %s\n", dev_name_param);
		return -ENODEV;
	}
	gid = rdma_get_gid_attr(dev, 1, gid_index);
	if (IS_ERR(gid)) {
		pr_err("%s has no GID %d\n", dev_name_param, gid_index);
		ib_device_put(dev);
		return PTR_ERR(gid);
	}
	for (i = 0; i < ARRAY_SIZE(kulp_cases); i++) {
		const char *why = "?";
		struct kulp_pair *p = kulp_pair_new(dev, gid,
						    kulp_cases[i].raw_cqe, &why);
		int ret = p ? kulp_cases[i].run(p, &why) : -EIO;

		if (p)
			kulp_pair_free(p);
		if (ret) {
			pr_err("%s: FAIL: %s (%d)\n", kulp_cases[i].name, why,
			       ret);
			failed++;
		} else {
			pr_info("%s: ok\n", kulp_cases[i].name);
		}
	}
	rdma_put_gid_attr(gid);
	ib_device_put(dev);
	pr_info("%d of %zu cases failed\n", failed, ARRAY_SIZE(kulp_cases));
	return failed ? -EIO : 0;
}

static void __exit kulp_exit(void)
{
}

module_init(kulp_init);
module_exit(kulp_exit);
MODULE_DESCRIPTION("srdma selftest: verbs from a kernel ULP's contexts");
MODULE_LICENSE("GPL");
