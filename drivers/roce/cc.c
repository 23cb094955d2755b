// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 congestion control: ECN-capable packets, the notification point
 * (a CNP back to the sender for CE-marked packets) and the reaction point
 * (a DCQCN rate limiter, Zhu et al., "Congestion Control for Large-Scale
 * RDMA Deployments", SIGCOMM 2015, that paces the requester).
 * Documentation/roce.rst, "Congestion control", says what and why; this
 * file says how.
 *
 * Locking: a QP's struct roce_cc is under rqp->lock, which the requester
 * holds whenever it runs (post_send with bottom halves off, the ACK
 * softirq, tx_work), and so does the responder as it sends READ
 * responses (the receive softirq, rd_work), which the same bucket paces.
 * The CE and CNP receive paths (softirq) and the three
 * hrtimers (HRTIMER_MODE_REL_SOFT, so their callbacks run in softirq)
 * take it too: every change to the rate, the bucket and the stages is
 * serialised with the packets it paces. Since the callbacks take the
 * lock, nothing cancels a timer synchronously under it: under the lock
 * only hrtimer_try_to_cancel(), and a callback that finds its QP no
 * longer limited stops itself; roce_cc_stop_sync() waits for all three
 * from process context on destroy, reset and error.
 *
 * The inc and alpha timers follow one rule, so that hrtimer_forward_now()
 * never meets a timer someone else started: their *_on flag is set, under
 * the lock, by whoever starts them, and cleared, under the lock, only by
 * their own callback as it decides not to restart (or by a cancel that
 * removed them). Nobody starts a timer whose flag is set.
 */
#include <linux/ethtool.h>
#include <linux/hrtimer.h>
#include <linux/rtnetlink.h>
#include <net/inet_ecn.h>

#include "roce.h"
#include "trace.h"

/* Defaults of the tunables; Documentation/roce.rst says why each. */
#define ROCE_CC_CNP_INTERVAL_US		50
#define ROCE_CC_REDUCE_PERIOD_US	1000
#define ROCE_CC_G_SHIFT			4
#define ROCE_CC_ALPHA_PERIOD_US		50000
#define ROCE_CC_INC_PERIOD_US		20000
#define ROCE_CC_BYTE_COUNTER_KIB	256
#define ROCE_CC_FR_STEPS		5
#define ROCE_CC_AI_KBPS			2000
#define ROCE_CC_HAI_KBPS		2000
#define ROCE_CC_MIN_KBPS		10000
#define ROCE_CC_MAX_MBPS		100000
#define ROCE_CC_CLAMP_TARGET		0

/* The largest line rate: its kbit/s must fit a u32. */
#define ROCE_CC_MBPS_LIMIT		4000000U
/* Stage counts stop here: bounds a hyper increase step. */
#define ROCE_CC_MAX_STAGE		1024U
/*
 * The bucket holds this long at the current rate: the pace timer and the
 * work item it queues run late by up to a millisecond or two on a busy
 * or emulated host, and what the bucket cannot hold of that time is
 * rate lost...
 */
#define ROCE_CC_BURST_NS		(2 * NSEC_PER_MSEC)
/* ...or two of the largest packets, whichever is more. */
#define ROCE_CC_BURST_MIN		(2 * (4096 + 64))
/*
 * A dry bucket wakes the requester when it holds a quarter of its depth
 * again, and at least one of the largest packets: a batch of packets per
 * timer, not a timer per packet.
 */
#define ROCE_CC_WAKE_SHIFT		2
/*
 * The send rate is measured over windows at least this long: a few
 * milliseconds of a window-limited or descheduled sender can hold no
 * packet at all, and a cut from such a window's rate is a collapse.
 */
#define ROCE_CC_MEAS_NS			(8 * NSEC_PER_MSEC)
/* Within this long of finding the host's queue full, a QP was held back. */
#define ROCE_CC_QUEUE_HELD_NS		(2 * ROCE_CC_MEAS_NS)
/* A window this long without a packet was idle time. */
#define ROCE_CC_IDLE_NS			(10 * ROCE_CC_MEAS_NS)
/*
 * The longest a cut holds off the next for its window of packets: ACKs
 * that loss holds up must not hold off the cuts of a congestion that
 * goes on.
 */
#define ROCE_CC_WINDOW_MAX_NS		(100 * NSEC_PER_MSEC)
/* The longest time one refill credits, in seconds. */
#define ROCE_CC_REFILL_MAX_S		1000ULL
/* kbit/s times nanoseconds to bytes */
#define ROCE_CC_KBPS_NS_PER_BYTE	8000000ULL

/*
 * The DCQCN arithmetic, pure: no locks, no clock, no device. The caller
 * owns @s and says which event happened; these say what the rates and
 * alpha become. Rates in kbit/s, alpha in 1/ROCE_DCQCN_ALPHA_ONE.
 */

/* A QP leaves line rate at @rate_kbps; alpha starts at one (the paper's). */
void roce_dcqcn_start(struct roce_dcqcn *s, u32 rate_kbps,
		      const struct roce_dcqcn_params *p)
{
	s->rc = clamp(rate_kbps, p->min_kbps, p->max_kbps);
	s->rt = s->rc;
	s->alpha = ROCE_DCQCN_ALPHA_ONE;
	s->t_stage = 0;
	s->b_stage = 0;
	s->cnp_seen = false;
}

/*
 * A CNP: the target remembers the rate, the rate drops by alpha / 2 (to
 * no less than the floor), and increase starts over from fast recovery.
 * With clamp_target the target is the new rate instead, so that only
 * additive and hyper increase raise it again. Returns whether rc changed.
 */
bool roce_dcqcn_cut(struct roce_dcqcn *s, const struct roce_dcqcn_params *p)
{
	u32 old = s->rc;
	u64 cut = div_u64((u64)s->rc * min(s->alpha, ROCE_DCQCN_ALPHA_ONE),
			  2 * ROCE_DCQCN_ALPHA_ONE);

	s->rt = min(s->rc, p->max_kbps);
	s->rc = clamp_t(u32, s->rc - cut, p->min_kbps, p->max_kbps);
	if (p->clamp_target)
		s->rt = s->rc;
	s->t_stage = 0;
	s->b_stage = 0;
	s->cnp_seen = true;
	return s->rc != old;
}

/*
 * The alpha timer (K): alpha = (1 - g) * alpha, plus g if a CNP came
 * since the last update. Alpha thus estimates how often CNPs come.
 */
void roce_dcqcn_alpha(struct roce_dcqcn *s, const struct roce_dcqcn_params *p)
{
	u32 a = min(s->alpha, ROCE_DCQCN_ALPHA_ONE);

	a -= a >> p->g_shift;
	if (s->cnp_seen)
		a += ROCE_DCQCN_ALPHA_ONE >> p->g_shift;
	s->alpha = min(a, ROCE_DCQCN_ALPHA_ONE);
	s->cnp_seen = false;
}

/*
 * A rate increase event: the timer (T) expired or the byte counter (B)
 * filled. The first fr_steps events of both kinds since the last cut are
 * fast recovery (the rate halves its distance to the target); once one
 * kind is past them the target grows by ai_kbps per event (additive),
 * once both are, by hai_kbps times how far past they are (hyper). The
 * rate rounds up towards the target, so it reaches it. Returns whether
 * rc changed.
 */
bool roce_dcqcn_inc(struct roce_dcqcn *s, const struct roce_dcqcn_params *p,
		    enum roce_dcqcn_inc why)
{
	u32 old = s->rc, lo, hi;
	u64 rt = s->rt;

	if (why == ROCE_DCQCN_INC_TIMER)
		s->t_stage = min(s->t_stage + 1, ROCE_CC_MAX_STAGE);
	else
		s->b_stage = min(s->b_stage + 1, ROCE_CC_MAX_STAGE);
	lo = min(s->t_stage, s->b_stage);
	hi = max(s->t_stage, s->b_stage);
	if (lo > p->fr_steps)
		rt += (u64)(lo - p->fr_steps) * p->hai_kbps;
	else if (hi > p->fr_steps)
		rt += p->ai_kbps;
	s->rt = min_t(u64, rt, p->max_kbps);
	if (s->rt > s->rc)
		s->rc += DIV_ROUND_UP(s->rt - s->rc, 2);
	else
		s->rc = s->rt;	/* the line rate went down */
	s->rc = max(s->rc, p->min_kbps);
	return s->rc != old;
}

static ktime_t roce_cc_us(u32 us)
{
	return ns_to_ktime((u64)us * NSEC_PER_USEC);
}

/* The QPs congestion control applies to: those CNPs can name. */
static bool roce_cc_qp(const struct srdma_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC;
}

static struct roce_cc_tunables *roce_cc_tun(struct srdma_qp *qp)
{
	return &to_rdev(qp_dev(qp))->cc;
}

static bool roce_cc_enabled(struct srdma_qp *qp)
{
	return READ_ONCE(roce_cc_tun(qp)->enable);
}

/* The netdev's speed, else the configured maximum; kbit/s. */
static u32 roce_cc_line_kbps(const struct roce_cc_tunables *t)
{
	u32 mbps = READ_ONCE(t->line_mbps) ?: READ_ONCE(t->max_rate_mbps);

	return min(mbps, ROCE_CC_MBPS_LIMIT) * 1000;
}

/* The tunables as roce_dcqcn_*() want them: min <= max whatever was set. */
static void roce_cc_params(const struct roce_cc_tunables *t,
			   struct roce_dcqcn_params *p)
{
	p->max_kbps = roce_cc_line_kbps(t);
	p->min_kbps = min(READ_ONCE(t->min_rate_kbps), p->max_kbps);
	p->ai_kbps = READ_ONCE(t->ai_rate_kbps);
	p->hai_kbps = READ_ONCE(t->hai_rate_kbps);
	p->g_shift = READ_ONCE(t->alpha_g_shift);
	p->fr_steps = READ_ONCE(t->fast_recovery_steps);
	p->clamp_target = READ_ONCE(t->clamp_target);
}

/*
 * Read the netdev's speed for the line rate. ethtool wants RTNL, which
 * may be held by whoever is waiting for our caller: never wait for it,
 * keep the last value instead. Process context, no spinlock held.
 */
void roce_cc_refresh_speed(struct srdma_dev *dev)
{
	struct ethtool_link_ksettings ks;
	u32 speed = 0;

	if (!rtnl_trylock())
		return;
	/* a netdev on its way out answers for no link */
	if (dev->ndev->reg_state == NETREG_REGISTERED &&
	    !__ethtool_get_link_ksettings(dev->ndev, &ks) &&
	    ks.base.speed != (u32)SPEED_UNKNOWN)
		speed = ks.base.speed;
	rtnl_unlock();
	WRITE_ONCE(to_rdev(dev)->cc.line_mbps, speed);
}

void roce_cc_dev_init(struct srdma_dev *dev)
{
	struct roce_cc_tunables *t = &to_rdev(dev)->cc;

	/*
	 * Off until asked for: a host's own egress qdisc (Debian's default is
	 * fq_codel) marks ECT packets whenever the NIC queue stands, so on by
	 * default would pace every sroce flow by the local queue.
	 */
	t->enable = 0;
	t->cnp_interval_us = ROCE_CC_CNP_INTERVAL_US;
	t->rate_reduce_period_us = ROCE_CC_REDUCE_PERIOD_US;
	t->alpha_g_shift = ROCE_CC_G_SHIFT;
	t->alpha_period_us = ROCE_CC_ALPHA_PERIOD_US;
	t->rate_inc_period_us = ROCE_CC_INC_PERIOD_US;
	t->byte_counter_kib = ROCE_CC_BYTE_COUNTER_KIB;
	t->fast_recovery_steps = ROCE_CC_FR_STEPS;
	t->ai_rate_kbps = ROCE_CC_AI_KBPS;
	t->hai_rate_kbps = ROCE_CC_HAI_KBPS;
	t->min_rate_kbps = ROCE_CC_MIN_KBPS;
	t->max_rate_mbps = ROCE_CC_MAX_MBPS;
	t->clamp_target = ROCE_CC_CLAMP_TARGET;
	roce_cc_refresh_speed(dev);
}

/*
 * ECN: while enabled, every RoCE packet but a CNP is ECT(0), so that an
 * AQM marks it instead of dropping it; the DSCP bits stay the traffic
 * class's. A CNP goes Not-ECT: a mark on it would only draw a CNP to a
 * QP that barely sends. Disabled, the traffic class goes out as it
 * always did.
 */
u8 roce_cc_tclass(struct srdma_qp *qp, u8 traffic_class, u8 opcode)
{
	if (!roce_cc_enabled(qp) || opcode == ROCE_OP_CNP)
		return traffic_class;
	return (traffic_class & ~INET_ECN_MASK) | INET_ECN_ECT_0;
}

/* Lock held. */
static void roce_cc_trace(struct roce_qp *rqp, u32 rate_kbps, const char *why)
{
	trace_srdma_cc_rate(&rqp->qp->ibqp, rate_kbps, rqp->cc.dcqcn.rt,
			    rqp->cc.dcqcn.alpha, why);
}

/*
 * The states in which a QP sends what the limiter paces: RTS and SQD as
 * a requester, and RTR too as a responder (READ responses: a QP that
 * only serves READs may never go past RTR, as perftest's server).
 */
static bool roce_cc_state_sends(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD;
}

/* The rate limit and its timers are for QPs still sending. Lock held. */
static bool roce_cc_running(struct roce_qp *rqp)
{
	return rqp->cc.limited && !rqp->dead && !rqp->resetting &&
	       roce_cc_state_sends(READ_ONCE(rqp->qp->state));
}

/*
 * Measure what the QP sends, for the rate a first cut starts from and
 * the rate a later one may fall to. The estimate rises at once to a
 * window's rate and falls half way to it per window, so that one window
 * with a stall in it does not halve it. After an idle spell the rate is
 * unknown until a window has passed: averaged over the idle time it
 * would say next to nothing of the burst now.
 */
static void roce_cc_measure(struct roce_cc *cc, u32 bytes, u64 now)
{
	u64 elapsed = now - cc->meas_start_ns;
	u64 kbps;

	if (elapsed > ROCE_CC_IDLE_NS) {
		cc->meas_kbps = 0;
		cc->meas_start_ns = now;
		cc->meas_bytes = bytes;
		return;
	}
	cc->meas_bytes += bytes;
	if (elapsed < ROCE_CC_MEAS_NS)
		return;
	kbps = div64_u64(cc->meas_bytes * ROCE_CC_KBPS_NS_PER_BYTE, elapsed);
	kbps = max(kbps, (kbps + cc->meas_kbps) / 2);
	cc->meas_kbps = min_t(u64, kbps, U32_MAX);
	cc->meas_start_ns = now;
	cc->meas_bytes = 0;
}

/*
 * Back at line rate (or disabled): no limit, no timers. The pace timer
 * is left to fire if it is set, since the requester may be waiting for
 * it. Lock held.
 */
static void roce_cc_unlimit(struct roce_qp *rqp, const char *why)
{
	struct roce_cc *cc = &rqp->cc;

	cc->limited = false;
	/* -1: the callback runs, and will find the QP not limited */
	if (hrtimer_try_to_cancel(&cc->inc_timer) >= 0)
		cc->inc_on = false;
	if (hrtimer_try_to_cancel(&cc->alpha_timer) >= 0)
		cc->alpha_on = false;
	roce_cc_trace(rqp, roce_cc_line_kbps(roce_cc_tun(rqp->qp)), why);
}

/* The QP was just limited: run the increase and alpha timers. Lock held. */
static void roce_cc_timers_start(struct roce_qp *rqp)
{
	struct roce_cc_tunables *t = roce_cc_tun(rqp->qp);
	struct roce_cc *cc = &rqp->cc;

	if (!cc->inc_on) {
		cc->inc_on = true;
		hrtimer_start(&cc->inc_timer,
			      roce_cc_us(READ_ONCE(t->rate_inc_period_us)),
			      HRTIMER_MODE_REL_SOFT);
	}
	if (!cc->alpha_on) {
		cc->alpha_on = true;
		hrtimer_start(&cc->alpha_timer,
			      roce_cc_us(READ_ONCE(t->alpha_period_us)),
			      HRTIMER_MODE_REL_SOFT);
	}
}

/* A rate increase event (T or B); at line rate the limit ends. Lock held. */
static void roce_cc_increase(struct roce_qp *rqp, enum roce_dcqcn_inc why)
{
	struct roce_cc_tunables *t = roce_cc_tun(rqp->qp);
	struct roce_cc *cc = &rqp->cc;
	struct roce_dcqcn_params p;

	if (!READ_ONCE(t->enable)) {
		roce_cc_unlimit(rqp, "disabled");
		return;
	}
	roce_cc_params(t, &p);
	if (roce_dcqcn_inc(&cc->dcqcn, &p, why)) {
		roce_count(qp_dev(rqp->qp), ROCE_CNT_CC_RATE_INC);
		roce_cc_trace(rqp, cc->dcqcn.rc, why == ROCE_DCQCN_INC_TIMER ?
			      "timer" : "bytes");
	}
	if (cc->dcqcn.rc >= p.max_kbps)
		roce_cc_unlimit(rqp, "line rate");
}

/*
 * The increase timer (T). A cut restarts T's period, as it restarts the
 * byte counter (the paper's timer reset): rather than re-arm the timer
 * from the CNP path, a firing that comes less than a period after the
 * last cut increases nothing and moves itself to a period after the cut.
 */
static enum hrtimer_restart roce_cc_inc_fire(struct hrtimer *timer)
{
	struct roce_qp *rqp = container_of(timer, struct roce_qp,
					   cc.inc_timer);
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	u64 period, now;

	spin_lock_bh(&rqp->lock);
	period = (u64)READ_ONCE(roce_cc_tun(rqp->qp)->rate_inc_period_us) *
		 NSEC_PER_USEC;
	now = ktime_get_ns();
	if (roce_cc_running(rqp) && now - rqp->cc.last_cut_ns < period) {
		/* CLOCK_MONOTONIC, as ktime_get_ns(); later than now */
		hrtimer_set_expires(timer,
				    ns_to_ktime(rqp->cc.last_cut_ns + period));
		ret = HRTIMER_RESTART;
		goto out;
	}
	if (roce_cc_running(rqp))
		roce_cc_increase(rqp, ROCE_DCQCN_INC_TIMER);
	if (roce_cc_running(rqp)) {
		hrtimer_forward_now(timer, ns_to_ktime(period));
		ret = HRTIMER_RESTART;
	} else {
		rqp->cc.inc_on = false;
	}
out:
	spin_unlock_bh(&rqp->lock);
	return ret;
}

static enum hrtimer_restart roce_cc_alpha_fire(struct hrtimer *timer)
{
	struct roce_qp *rqp = container_of(timer, struct roce_qp,
					   cc.alpha_timer);
	struct roce_cc_tunables *t = roce_cc_tun(rqp->qp);
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	struct roce_dcqcn_params p;

	spin_lock_bh(&rqp->lock);
	if (roce_cc_running(rqp)) {
		roce_cc_params(t, &p);
		roce_dcqcn_alpha(&rqp->cc.dcqcn, &p);
		hrtimer_forward_now(timer,
				    roce_cc_us(READ_ONCE(t->alpha_period_us)));
		ret = HRTIMER_RESTART;
	} else {
		rqp->cc.alpha_on = false;
	}
	spin_unlock_bh(&rqp->lock);
	return ret;
}

/*
 * The bucket ran dry and enough tokens are back, or packets of a QP that
 * waited for room left the host (txq.c starts the timer then): run the
 * requester from tx_work, as an ACK that opens the window does, and READ
 * responses that waited from rd_work. Destroy cancels this timer before
 * tx_work and rd_work, reset before tx_work; the requester and rd_work
 * check the QP under its lock themselves. The lock here is for rd_paced
 * and the CPU rd_work is kept on.
 */
static enum hrtimer_restart roce_cc_pace_fire(struct hrtimer *timer)
{
	struct roce_qp *rqp = container_of(timer, struct roce_qp,
					   cc.pace_timer);

	spin_lock_bh(&rqp->lock);
	if (rqp->cc.rd_paced) {
		rqp->cc.rd_paced = false;
		roce_rd_resume(rqp);
	}
	spin_unlock_bh(&rqp->lock);
	queue_work(srdma_unbound_wq, &rqp->tx_work);
	return HRTIMER_NORESTART;
}

/*
 * Run the requester again in @ns from tx_work, through the pace timer:
 * for a requester that could not allocate a packet and has nothing in
 * flight for the retransmit timer to bring back. Lock held.
 */
void roce_req_wake_in(struct roce_qp *rqp, u64 ns)
{
	if (!hrtimer_is_queued(&rqp->cc.pace_timer))
		hrtimer_start(&rqp->cc.pace_timer, ns_to_ktime(ns),
			      HRTIMER_MODE_REL_SOFT);
}

/* The bucket's depth in bytes at the current rate. */
static s64 roce_cc_burst(const struct roce_cc *cc)
{
	return max_t(s64, div_u64((u64)cc->dcqcn.rc * ROCE_CC_BURST_NS,
				  ROCE_CC_KBPS_NS_PER_BYTE),
		     ROCE_CC_BURST_MIN);
}

/*
 * Tokens for the time since the last refill, up to one burst. The time
 * counts whole up to a limit no rate needs (at 1 kbit/s a 4 KiB packet
 * takes 33 s); the product is taken in 128 bits.
 */
static void roce_cc_refill(struct roce_cc *cc, u64 now)
{
	u64 elapsed = min_t(u64, now - cc->refill_ns,
			    ROCE_CC_REFILL_MAX_S * NSEC_PER_SEC);

	cc->tokens += mul_u64_u32_div(elapsed, cc->dcqcn.rc,
				      ROCE_CC_KBPS_NS_PER_BYTE);
	cc->tokens = min(cc->tokens, roce_cc_burst(cc));
	cc->refill_ns = now;
}

/*
 * The requester asks before each packet it emits. First, whether the
 * QP's packets still in this host leave room for one (txq.c). Not
 * limited: yes, at the cost of one test. Limited: yes while the bucket
 * holds tokens (a packet may take it into debt); dry, the pace timer is
 * set for when it holds a batch again (ROCE_CC_WAKE_SHIFT) and the
 * requester stops until then. Lock held.
 */
bool roce_cc_tx_ok(struct roce_qp *rqp)
{
	struct roce_cc *cc = &rqp->cc;
	s64 want;
	u64 ns;

	if (!roce_txq_room(rqp)) {
		cc->queue_full_ns = ktime_get_ns();
		return false;
	}
	if (likely(!cc->limited))
		return true;
	if (!roce_cc_enabled(rqp->qp)) {
		roce_cc_unlimit(rqp, "disabled");
		return true;
	}
	roce_cc_refill(cc, ktime_get_ns());
	if (cc->tokens > 0)
		return true;
	want = max_t(s64, roce_cc_burst(cc) >> ROCE_CC_WAKE_SHIFT,
		     ROCE_CC_BURST_MIN / 2);
	ns = div_u64((u64)(want - cc->tokens) * ROCE_CC_KBPS_NS_PER_BYTE,
		     max(cc->dcqcn.rc, 1U));
	hrtimer_start(&cc->pace_timer, ns_to_ktime(max_t(u64, ns, 1000)),
		      HRTIMER_MODE_REL_SOFT);
	return false;
}

/*
 * The responder asks before each READ response packet, as the requester
 * does before its packets: one QP, one rate. Dry, the pace timer will
 * queue rd_work too. Lock held.
 */
bool roce_cc_resp_ok(struct roce_qp *rqp)
{
	if (roce_cc_tx_ok(rqp))
		return true;
	rqp->cc.rd_paced = true;
	return false;
}

/*
 * The requester or the responder (READ responses) sent a packet of
 * @bytes (BTH to payload): take them from
 * the bucket and count them for the byte counter. Lock held.
 */
void roce_cc_sent(struct roce_qp *rqp, u32 bytes)
{
	struct roce_cc_tunables *t = roce_cc_tun(rqp->qp);
	struct roce_cc *cc = &rqp->cc;

	if (!roce_cc_qp(rqp->qp) || !READ_ONCE(t->enable))
		return;
	roce_cc_measure(cc, bytes, ktime_get_ns());
	if (!cc->limited)
		return;
	cc->tokens -= bytes;
	cc->bytes += bytes;
	if (cc->bytes >= (u64)READ_ONCE(t->byte_counter_kib) * SZ_1K) {
		cc->bytes = 0;
		roce_cc_increase(rqp, ROCE_DCQCN_INC_BYTES);
	}
}

/*
 * Whether a CNP now may be for a mark on a packet sent before the last
 * cut: one of those is still unacknowledged. The queue it stood in was
 * filled at the old rate and drains at the new one; cutting again for it
 * cuts twice for one congestion, as TCP does not (RFC 3168, 6.1.2: one
 * reduction per window of data). RC only: a UC requester hears no ACKs,
 * and its una_psn stays put. Lock held, QP limited (so cut_psn is set).
 */
static bool roce_cc_cut_pending(struct roce_qp *rqp, u64 now)
{
	struct roce_cc *cc = &rqp->cc;

	return rqp->qp->ibqp.qp_type == IB_QPT_RC &&
	       psn_diff(rqp->una_psn, cc->cut_psn) < 0 &&
	       now - cc->last_cut_ns < ROCE_CC_WINDOW_MAX_NS;
}

/*
 * Reaction point: the peer saw our packets marked. The first CNP limits
 * the QP from the rate it was measured sending at (the line rate is of
 * little use: a software device rarely reaches it), each later one cuts
 * the rate, at most once per rate_reduce_period_us and once per window
 * of packets (alpha still counts the CNPs that do not cut). A limit well
 * above what the QP measurably sends starts from what it sends, so a cut
 * is felt at once; unless its packets lately waited for room in this
 * host's queue: then the bottleneck held it back, the congestion this
 * cut answers, not the application (TCP does not shrink its window for
 * what TCP small queues hold back either). Softirq.
 */
void roce_cc_cnp_rcvd(struct srdma_qp *qp)
{
	struct roce_cc_tunables *t = roce_cc_tun(qp);
	struct roce_qp *rqp = to_rqp(qp);
	struct roce_cc *cc = &rqp->cc;
	struct roce_dcqcn_params p;
	u64 now;

	roce_count(qp_dev(qp), ROCE_CNT_CC_CNP_RX);
	if (!roce_cc_qp(qp) || !READ_ONCE(t->enable))
		return;
	spin_lock_bh(&rqp->lock);
	if (rqp->dead || rqp->resetting ||
	    !roce_cc_state_sends(READ_ONCE(qp->state)))
		goto out;
	now = ktime_get_ns();
	if (cc->limited && now - cc->last_cut_ns <
	    (u64)READ_ONCE(t->rate_reduce_period_us) * NSEC_PER_USEC)
		goto out;
	if (cc->limited && roce_cc_cut_pending(rqp, now)) {
		cc->dcqcn.cnp_seen = true;
		goto out;
	}
	roce_cc_params(t, &p);
	if (!cc->limited) {
		roce_dcqcn_start(&cc->dcqcn, cc->meas_kbps ?: p.max_kbps, &p);
		cc->limited = true;
		cc->tokens = ROCE_CC_BURST_MIN / 2;
		cc->refill_ns = now;
	} else if (cc->meas_kbps &&
		   cc->meas_kbps < cc->dcqcn.rc - cc->dcqcn.rc / 8 &&
		   now - cc->queue_full_ns > ROCE_CC_QUEUE_HELD_NS) {
		cc->dcqcn.rc = max(cc->meas_kbps, p.min_kbps);
	}
	roce_dcqcn_cut(&cc->dcqcn, &p);
	cc->last_cut_ns = now;
	cc->cut_psn = rqp->next_psn;
	/* both increase events count afresh: B here, T in its callback */
	cc->bytes = 0;
	roce_count(qp_dev(qp), ROCE_CNT_CC_RATE_DEC);
	roce_cc_trace(rqp, cc->dcqcn.rc, "cnp");
	roce_cc_timers_start(rqp);
out:
	spin_unlock_bh(&rqp->lock);
}

/* A CNP to the peer QP of @qp (A17.9.2). Lock held (roce_xmit's route). */
static int roce_cc_send_cnp(struct srdma_qp *qp)
{
	const struct srdma_av *av = &qp->attr.av;
	struct roce_bth *bth;
	struct sk_buff *skb;

	skb = roce_alloc_skb(qp, av, sizeof(*bth) + ROCE_CNP_RSVD_BYTES, 0);
	if (!skb)
		return -ENOMEM;
	bth = (struct roce_bth *)skb->data;
	roce_fill_bth(bth, ROCE_OP_CNP, 0, qp->attr.dest_qpn, 0, 0);
	bth->qpn |= htonl(ROCE_BTH_BECN);
	memset(bth + 1, 0, ROCE_CNP_RSVD_BYTES);
	return roce_xmit(qp, av, skb);
}

/*
 * Notification point: a packet for @qp arrived with CE. Tell the sender,
 * at most once per cnp_interval_us. Softirq.
 */
void roce_cc_ce_rcvd(struct srdma_qp *qp)
{
	struct roce_cc_tunables *t = roce_cc_tun(qp);
	struct roce_qp *rqp = to_rqp(qp);
	struct roce_cc *cc = &rqp->cc;
	u64 now;

	roce_count(qp_dev(qp), ROCE_CNT_CC_CE_RX);
	if (!roce_cc_qp(qp) || !READ_ONCE(t->enable))
		return;
	spin_lock_bh(&rqp->lock);
	/* RTR on: the path, which the CNP follows, is set */
	if (rqp->dead || rqp->resetting ||
	    !roce_resp_open(READ_ONCE(qp->state)))
		goto out;
	now = ktime_get_ns();
	if (cc->cnp_sent && now - cc->last_cnp_ns <
	    (u64)READ_ONCE(t->cnp_interval_us) * NSEC_PER_USEC)
		goto out;
	if (roce_cc_send_cnp(qp) < 0)
		goto out;
	cc->cnp_sent = true;
	cc->last_cnp_ns = now;
	roce_count(qp_dev(qp), ROCE_CNT_CC_CNP_TX);
out:
	spin_unlock_bh(&rqp->lock);
}

void roce_cc_qp_init(struct roce_qp *rqp)
{
	struct roce_cc *cc = &rqp->cc;

	hrtimer_init(&cc->pace_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	cc->pace_timer.function = roce_cc_pace_fire;
	hrtimer_init(&cc->inc_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	cc->inc_timer.function = roce_cc_inc_fire;
	hrtimer_init(&cc->alpha_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	cc->alpha_timer.function = roce_cc_alpha_fire;
}

/* To RTS: a new connection starts at line rate. Lock held. */
void roce_cc_reset(struct roce_qp *rqp)
{
	struct roce_cc *cc = &rqp->cc;

	cc->limited = false;
	cc->tokens = 0;
	cc->bytes = 0;
	cc->meas_start_ns = ktime_get_ns();
	cc->meas_bytes = 0;
	cc->meas_kbps = 0;
	cc->queue_full_ns = 0;
	cc->cnp_sent = false;
}

/*
 * Destroy, RESET and ERR: stop every timer and wait for their callbacks.
 * The caller has made the QP dead, resetting or not RTS/SQD first, under
 * the lock, so no CNP or requester run starts one again. Process context.
 */
void roce_cc_stop_sync(struct roce_qp *rqp)
{
	struct roce_cc *cc = &rqp->cc;

	hrtimer_cancel(&cc->inc_timer);
	hrtimer_cancel(&cc->alpha_timer);
	hrtimer_cancel(&cc->pace_timer);
	spin_lock_bh(&rqp->lock);
	cc->inc_on = false;
	cc->alpha_on = false;
	cc->limited = false;
	/* rd_work, not the timer, ends the replies that waited for it */
	if (cc->rd_paced) {
		cc->rd_paced = false;
		roce_rd_resume(rqp);
	}
	spin_unlock_bh(&rqp->lock);
}

/*
 * sysfs: /sys/class/infiniband/DEV/cc/, sroce devices only (their
 * ib_device_ops' device_group). Root writes; values are checked whole,
 * and a bad one is refused with EINVAL (not a number) or ERANGE.
 */
struct roce_cc_attr {
	struct device_attribute attr;
	size_t off;			/* in struct roce_cc_tunables */
	u32 min;
	u32 max;
};

static u32 *roce_cc_field(struct device *device, struct device_attribute *da)
{
	struct roce_cc_attr *a = container_of(da, struct roce_cc_attr, attr);
	struct roce_dev *rdev = container_of(rdma_device_to_ibdev(device),
					     struct roce_dev, dev.ibdev);

	return (u32 *)((u8 *)&rdev->cc + a->off);
}

static ssize_t roce_cc_show(struct device *device,
			    struct device_attribute *da, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(*roce_cc_field(device, da)));
}

static ssize_t roce_cc_store(struct device *device,
			     struct device_attribute *da, const char *buf,
			     size_t count)
{
	struct roce_cc_attr *a = container_of(da, struct roce_cc_attr, attr);
	u32 v;
	int err;

	err = kstrtou32(buf, 0, &v);
	if (err)
		return err;
	if (v < a->min || v > a->max)
		return -ERANGE;
	WRITE_ONCE(*roce_cc_field(device, da), v);
	return count;
}

#define ROCE_CC_ATTR(_name, _min, _max)					\
	static struct roce_cc_attr roce_cc_attr_##_name = {		\
		.attr = {						\
			.attr = { .name = #_name, .mode = 0644 },	\
			.show = roce_cc_show,				\
			.store = roce_cc_store,				\
		},							\
		.off = offsetof(struct roce_cc_tunables, _name),	\
		.min = _min,						\
		.max = _max,						\
	}

ROCE_CC_ATTR(enable, 0, 1);
ROCE_CC_ATTR(cnp_interval_us, 0, USEC_PER_SEC);
ROCE_CC_ATTR(rate_reduce_period_us, 0, USEC_PER_SEC);
ROCE_CC_ATTR(alpha_g_shift, 1, 16);
ROCE_CC_ATTR(alpha_period_us, 10, 10 * USEC_PER_SEC);
ROCE_CC_ATTR(rate_inc_period_us, 10, 10 * USEC_PER_SEC);
ROCE_CC_ATTR(byte_counter_kib, 1, SZ_1M);
ROCE_CC_ATTR(fast_recovery_steps, 1, 64);
ROCE_CC_ATTR(ai_rate_kbps, 1, ROCE_CC_MBPS_LIMIT * 1000);
ROCE_CC_ATTR(hai_rate_kbps, 1, ROCE_CC_MBPS_LIMIT * 1000);
ROCE_CC_ATTR(min_rate_kbps, 1, ROCE_CC_MBPS_LIMIT * 1000);
ROCE_CC_ATTR(max_rate_mbps, 1, ROCE_CC_MBPS_LIMIT);
ROCE_CC_ATTR(clamp_target, 0, 1);

/* The line rate in use: the netdev's speed, read again, else max_rate. */
static ssize_t line_rate_mbps_show(struct device *device,
				   struct device_attribute *da, char *buf)
{
	struct roce_dev *rdev = container_of(rdma_device_to_ibdev(device),
					     struct roce_dev, dev.ibdev);

	roce_cc_refresh_speed(&rdev->dev);
	return sysfs_emit(buf, "%u\n", roce_cc_line_kbps(&rdev->cc) / 1000);
}
static DEVICE_ATTR_RO(line_rate_mbps);

static struct attribute *roce_cc_attrs[] = {
	&roce_cc_attr_enable.attr.attr,
	&roce_cc_attr_cnp_interval_us.attr.attr,
	&roce_cc_attr_rate_reduce_period_us.attr.attr,
	&roce_cc_attr_alpha_g_shift.attr.attr,
	&roce_cc_attr_alpha_period_us.attr.attr,
	&roce_cc_attr_rate_inc_period_us.attr.attr,
	&roce_cc_attr_byte_counter_kib.attr.attr,
	&roce_cc_attr_fast_recovery_steps.attr.attr,
	&roce_cc_attr_ai_rate_kbps.attr.attr,
	&roce_cc_attr_hai_rate_kbps.attr.attr,
	&roce_cc_attr_min_rate_kbps.attr.attr,
	&roce_cc_attr_max_rate_mbps.attr.attr,
	&roce_cc_attr_clamp_target.attr.attr,
	&dev_attr_line_rate_mbps.attr,
	NULL,
};

const struct attribute_group roce_cc_group = {
	.name = "cc",
	.attrs = roce_cc_attrs,
};
