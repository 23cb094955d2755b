#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
A small fluid-and-packet simulation of srdma's DCQCN (drivers/roce/cc.c)
sharing one ECN-marking bottleneck with TCP-like AIMD flows, to check the
defaults of /sys/class/infiniband/DEV/cc/ before a two-VM run
(selftests/roce_cc.sh, make check-cc) spends minutes on them.

Model, in steps of --dt seconds:
  - the bottleneck: a rate limit of --rate Mbit/s into one FIFO with codel
    (target 5 ms, interval 100 ms, ecn: ECT packets are marked CE, others
    dropped; limit 1000 packets) or RED, as the test's qdiscs do;
  - a base round trip of --rtt ms, half each way, plus the queue;
  - each DCQCN flow: the reaction point as cc.c implements it (first CNP
    limits at the measured rate, cuts at most once per rate_reduce_period
    and once per window of packets,
    alpha timer, increase timer and byte counter, fast recovery / additive
    / hyper increase, a token bucket), the notification point (one CNP per
    cnp_interval per QP), 1024-byte payloads, a window of 256 packets
    (ROCE_WINDOW) and an optional host ceiling (--roce-cap, Mbit/s: an
    emulated guest does not reach its netdev's line rate);
  - each TCP flow: window AIMD with ECN (tcp_ecn=1 in the test): +a MSS
    per RTT, x b at most once per RTT on a mark or loss; Reno (a 1, b 0.5)
    or CUBIC in its TCP-friendly region (a 0.53, b 0.7), which is where
    CUBIC stays at these windows (K = cbrt(Wmax (1 - b) / 0.4) is seconds);
    --tcp-gso N segments per packet in the queue: a qdisc on the sending
    host sees TCP's GSO packets and marks each once, a switch sees wire
    packets. Not modelled: the senders' own limits on what they keep in
    the host's queue (TCP small queues, drivers/roce/txq.c), which set
    the shares where that queue is the bottleneck, as in the two-VM test.
Prints each flow's goodput over the run but its first --warmup seconds,
the sum against the limit, and sroce / TCP.

Pure Python 3, no dependencies; --help lists the options.
"""
import argparse
import collections
import heapq
import itertools
import math
import random

MSS = 1448
TCP_WIRE = MSS + 66
ROCE_PAY = 1024
ROCE_WIRE = ROCE_PAY + 74	# Eth 14, IPv4 20, UDP 8, BTH 12, RETH 16, ICRC 4
ROCE_WINDOW = 256
ALPHA_ONE = 1 << 20

# cc.c's defaults (Documentation/roce.rst); --set NAME=VALUE changes one.
# Names starting with _ are cc.c constants, not tunables: the token
# bucket's depth in microseconds at the current rate (ROCE_CC_BURST_NS),
# whether a cut restarts the increase timer's period, and whether a cut
# holds off the next until its window is acknowledged (up to 100 ms).
DEFAULTS = {
    'cnp_interval_us': 50,
    'rate_reduce_period_us': 1000,
    'alpha_g_shift': 4,
    'alpha_period_us': 50000,
    'rate_inc_period_us': 20000,
    'byte_counter_kib': 256,
    'fast_recovery_steps': 5,
    'ai_rate_kbps': 2000,
    'hai_rate_kbps': 2000,
    'min_rate_kbps': 10000,
    'clamp_target': 0,
    '_burst_us': 2000,
    '_reset_timer_on_cut': 1,
    '_cut_per_window': 1,
}

# --old: those before fast recovery was turned on (for comparison)
OLD_DEFAULTS = dict(DEFAULTS, rate_inc_period_us=2000, byte_counter_kib=1024,
                    ai_rate_kbps=200, clamp_target=1, _burst_us=100,
                    _reset_timer_on_cut=0, _cut_per_window=0)


class Pkt:
    __slots__ = ('flow', 'size', 'ect', 'ce', 'enq', 'seq', 'segs')

    def __init__(self, flow, size, ect, seq, segs=1):
        self.flow, self.size, self.ect, self.seq = flow, size, ect, seq
        self.segs = segs
        self.ce = False
        self.enq = 0.0


class Codel:
    """RFC 8289's state machine on dequeue, with ECN marking."""

    def __init__(self, target=0.005, interval=0.1, limit=1000):
        self.target, self.interval, self.limit = target, interval, limit
        self.first_above = 0.0
        self.dropping = False
        self.drop_next = 0.0
        self.count = 0
        self.lastcount = 0

    def enqueue_ok(self, qlen, qbytes):
        return qlen < self.limit

    def _ok_to_drop(self, p, now, qbytes):
        sojourn = now - p.enq
        if sojourn < self.target or qbytes <= 1514:
            self.first_above = 0.0
            return False
        if self.first_above == 0.0:
            self.first_above = now + self.interval
            return False
        return now >= self.first_above

    def _law(self, t):
        return t + self.interval / math.sqrt(max(self.count, 1))

    def dequeue(self, q, now, qbytes):
        """Pop packets until one goes; returns it (marked or not) or None."""
        while q:
            p = q.popleft()
            qbytes -= p.size
            ok = self._ok_to_drop(p, now, qbytes)
            hit = False
            if self.dropping:
                if not ok:
                    self.dropping = False
                elif now >= self.drop_next:
                    hit = True
                    self.count += 1
                    self.drop_next = self._law(self.drop_next)
            elif ok:
                hit = True
                self.dropping = True
                delta = self.count - self.lastcount
                if delta > 1 and now - self.drop_next < 16 * self.interval:
                    self.count = delta
                else:
                    self.count = 1
                self.lastcount = self.count
                self.drop_next = self._law(now)
            if hit and not p.ect:
                p.flow.dropped(p, now)
                continue
            if hit:
                p.ce = True
            return p, qbytes
        return None, qbytes


class Red:
    """RED with ecn, as the test configures it (min 3 ms, max 9 ms)."""

    def __init__(self, rate_bps, limit_pkts=1000):
        rb = rate_bps / 8
        self.min, self.max = rb * 0.003, rb * 0.009
        self.limit = self.min * 24
        self.avg = 0.0
        self.w = 0.002
        self.p = 0.1

    def enqueue_ok(self, qlen, qbytes):
        return qbytes < self.limit

    def mark_on_enqueue(self, p, qbytes):
        self.avg += self.w * (qbytes - self.avg)
        if self.avg < self.min:
            return False
        if self.avg >= self.max:
            return True
        return random.random() < self.p * (self.avg - self.min) / (self.max - self.min)

    def dequeue(self, q, now, qbytes):
        if not q:
            return None, qbytes
        p = q.popleft()
        return p, qbytes - p.size


class Flow:
    def __init__(self, name):
        self.name = name
        self.goodput = 0
        self.sent = 0
        self.lost = 0
        self.marks = 0

    def dropped(self, p, now):
        self.lost += 1


class Tcp(Flow):
    def __init__(self, name, a, b, rtt, cap_bps, gso=1):
        super().__init__(name)
        self.a, self.b = a, b
        self.gso = gso
        self.cwnd = 10.0
        self.ssthresh = 1e9
        self.inflight = 0
        self.next_seq = 0
        self.recover = -1		# reduce once per window
        self.next_seq_at_ack = 0
        self.rtt = rtt
        self.cap = cap_bps
        self.tokens = 0.0

    def can_send(self):
        return self.inflight < int(self.cwnd)

    def reduce(self):
        if self.next_seq_at_ack <= self.recover:
            return
        self.recover = self.next_seq
        self.cwnd = max(self.cwnd * self.b, 2.0)
        self.ssthresh = self.cwnd

    def ack(self, p, now):
        self.inflight -= p.segs
        self.goodput_add(p)
        self.next_seq_at_ack = p.seq
        if p.ce:		# CE on a GSO packet is CE on each segment
            self.reduce()
            return
        for _ in range(p.segs):
            if self.cwnd < self.ssthresh:
                self.cwnd += 1
            else:
                self.cwnd += self.a / self.cwnd

    def dropped(self, p, now):
        super().dropped(p, now)
        self.inflight -= p.segs
        self.next_seq_at_ack = p.seq
        self.reduce()

    def tx(self, sim, now, dt):
        self.tokens = min(self.tokens + self.cap / 8 * dt,
                          (3 + self.gso) * TCP_WIRE)
        while self.can_send() and self.tokens > 0:
            segs = min(self.gso, int(self.cwnd) - self.inflight)
            p = Pkt(self, segs * TCP_WIRE, True, self.next_seq, segs)
            self.next_seq += segs
            self.inflight += segs
            self.tokens -= p.size
            sim.enqueue(p, now)

    def goodput_add(self, p):
        if self.counting:
            self.goodput += MSS * p.segs


class Dcqcn(Flow):
    """cc.c's reaction point and notification point, in floating point."""

    def __init__(self, name, t, rtt, line_bps, cap_bps):
        super().__init__(name)
        self.t = t
        self.line = line_bps / 1000	# kbit/s
        self.cap = cap_bps
        self.limited = False
        self.rc = self.rt = self.line
        self.alpha = 1.0
        self.t_stage = self.b_stage = 0
        self.cnp_seen = False
        self.tokens = 0.0
        self.bytes = 0
        self.last_cut = -1.0
        self.cut_seq = 0		# seq to send next at the last cut
        self.acked = 0			# packets acknowledged, in order
        self.inc_next = self.alpha_next = 1e18
        self.last_cnp_tx = -1.0
        self.inflight = 0
        self.seq = 0
        self.host_tokens = 0.0
        # rate measurement (2 ms windows)
        self.meas_start = 0.0
        self.meas_bytes = 0
        self.meas = 0.0
        self.wake = 0.0
        self.refill_at = 0.0
        self.wake_at = 0.0

    def p(self, k):
        return self.t[k]

    # --- the pure arithmetic (roce_dcqcn_*) ---
    def cut(self):
        self.rt = self.rc
        self.rc = max(self.rc * (1 - self.alpha / 2), self.p('min_rate_kbps'))
        if self.p('clamp_target'):
            self.rt = self.rc
        self.t_stage = self.b_stage = 0
        self.cnp_seen = True

    def alpha_upd(self):
        g = 1 / (1 << self.p('alpha_g_shift'))
        self.alpha = (1 - g) * self.alpha + (g if self.cnp_seen else 0)
        self.cnp_seen = False

    def inc(self, timer):
        F = self.p('fast_recovery_steps')
        if timer:
            self.t_stage += 1
        else:
            self.b_stage += 1
        lo, hi = min(self.t_stage, self.b_stage), max(self.t_stage, self.b_stage)
        if lo > F:
            self.rt += (lo - F) * self.p('hai_rate_kbps')
        elif hi > F:
            self.rt += self.p('ai_rate_kbps')
        self.rt = min(self.rt, self.line)
        self.rc = (self.rc + self.rt) / 2 if self.rt > self.rc else self.rt
        if self.rt - self.rc < 1:
            self.rc = self.rt
        if self.rc >= self.line:
            self.limited = False

    # --- events ---
    def cnp(self, now):
        if self.limited and now - self.last_cut < self.p('rate_reduce_period_us') * 1e-6:
            return
        if (self.p('_cut_per_window') and self.limited and
                self.acked < self.cut_seq and now - self.last_cut < 0.1):
            self.cnp_seen = True	# maybe a mark on what went before the cut
            return
        if not self.limited:
            self.limited = True
            self.rc = min(max(self.meas or self.line, self.p('min_rate_kbps')), self.line)
            self.rt = self.rc
            self.alpha = 1.0
            self.t_stage = self.b_stage = 0
            self.tokens = 2 * 4160 / 2
            self.inc_next = now + self.p('rate_inc_period_us') * 1e-6
            self.alpha_next = now + self.p('alpha_period_us') * 1e-6
        elif self.meas and self.meas < self.rc * 7 / 8:
            self.rc = max(self.meas, self.p('min_rate_kbps'))
        self.cut()
        self.last_cut = now
        self.cut_seq = self.seq
        self.bytes = 0
        if self.p('_reset_timer_on_cut'):
            self.inc_next = now + self.p('rate_inc_period_us') * 1e-6

    def ack(self, p, now):
        self.inflight -= 1
        self.acked = max(self.acked, p.seq + 1)
        if self.counting:
            self.goodput += ROCE_PAY

    def arrived(self, p, now, sim):
        """At the receiver: CE draws a CNP, one per cnp_interval."""
        if p.ce and now - self.last_cnp_tx >= self.p('cnp_interval_us') * 1e-6:
            self.last_cnp_tx = now
            sim.later(now + sim.rtt / 2, self.cnp)

    def timers(self, now):
        if not self.limited:
            return
        if now >= self.alpha_next:
            self.alpha_upd()
            self.alpha_next += self.p('alpha_period_us') * 1e-6
        if now >= self.inc_next:
            self.inc(True)
            self.inc_next += self.p('rate_inc_period_us') * 1e-6

    def measure(self, nbytes, now):
        el = now - self.meas_start
        if el > 0.08:
            self.meas, self.meas_start, self.meas_bytes = 0, now, nbytes
            return
        self.meas_bytes += nbytes
        if el >= 0.008:
            rate = self.meas_bytes * 8 / el / 1000
            self.meas = max(rate, (rate + self.meas) / 2)
            self.meas_start, self.meas_bytes = now, 0

    def tx(self, sim, now, dt):
        self.timers(now)
        if self.limited and now < self.wake_at:
            return			# the pace timer and tx_work are late
        rc = self.rc if self.limited else self.line
        burst = max(rc * 1000 / 8 * self.p('_burst_us') * 1e-6,
                    2 * 4160)
        el = min(now + dt - self.refill_at, 1000.0)
        self.refill_at = now + dt
        self.tokens = min(self.tokens + rc * 1000 / 8 * el, burst)
        self.host_tokens = min(self.host_tokens + self.cap / 8 * dt, 4 * ROCE_WIRE)
        while self.inflight < ROCE_WINDOW and self.host_tokens > 0:
            if self.limited and self.tokens <= 0:
                # dry: the requester sleeps until the pace timer (set
                # for a quarter of the bucket, at least one 4 KiB
                # packet), which fires (with its work item) wake late
                want = max(burst / 4, 4160)
                self.wake_at = now + (want - self.tokens) * 8 / (rc * 1000) + self.wake
                break
            p = Pkt(self, ROCE_WIRE, True, self.seq)
            self.seq += 1
            self.inflight += 1
            self.host_tokens -= p.size
            self.measure(p.size - 14, now)
            if self.limited:
                self.tokens -= p.size - 14
                self.bytes += p.size - 14
                if self.bytes >= self.p('byte_counter_kib') * 1024:
                    self.bytes = 0
                    self.inc(False)
            sim.enqueue(p, now)

    def dropped(self, p, now):
        # go-back-N after a timeout: counted, and the window frees late
        super().dropped(p, now)
        self.inflight -= 1


class Sim:
    def __init__(self, args, flows):
        self.rate = args.rate * 1e6
        self.rtt = args.rtt / 1000
        self.q = collections.deque()
        self.qbytes = 0
        self.aqm = Codel() if args.aqm == 'codel' else Red(self.rate)
        self.flows = flows
        self.events = []		# heap of (time, n, fn, arg)
        self.n = itertools.count()
        self.busy_until = 0.0
        self.marks = 0

    def later(self, t, fn, *arg):
        heapq.heappush(self.events, (t, next(self.n), fn, arg))

    def enqueue(self, p, now):
        if not self.aqm.enqueue_ok(len(self.q), self.qbytes):
            p.flow.dropped(p, now)
            return
        if isinstance(self.aqm, Red) and self.aqm.mark_on_enqueue(p, self.qbytes):
            if p.ect:
                p.ce = True
            else:
                p.flow.dropped(p, now)
                return
        p.enq = now
        p.flow.sent += 1
        self.q.append(p)
        self.qbytes += p.size

    def run(self, secs, warmup, dt):
        now = 0.0
        steps = int(secs / dt)
        for f in self.flows:
            f.counting = False
        for i in range(steps):
            now = i * dt
            if now >= warmup:
                for f in self.flows:
                    f.counting = True
            while self.events and self.events[0][0] <= now:
                _, _, fn, arg = heapq.heappop(self.events)
                fn(*arg, now)
            for f in self.flows:
                f.tx(self, now, dt)
            # serve the link for this step
            t = max(self.busy_until, now)
            while t < now + dt:
                p, self.qbytes = self.aqm.dequeue(self.q, t, self.qbytes)
                if p is None:
                    break
                t += p.size * 8 / self.rate
                if p.ce:
                    self.marks += 1
                    p.flow.marks += 1
                if isinstance(p.flow, Dcqcn):
                    self.later(t + self.rtt / 2, self._arrive, p)
                self.later(t + self.rtt, p.flow.ack, p)
            self.busy_until = t
        return secs - warmup

    def _arrive(self, p, now):
        p.flow.arrived(p, now, self)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--rate', type=float, default=80, help='Mbit/s (80)')
    ap.add_argument('--rtt', type=float, default=2, help='base RTT, ms (2)')
    ap.add_argument('--secs', type=float, default=20)
    ap.add_argument('--warmup', type=float, default=5)
    ap.add_argument('--dt', type=float, default=100e-6)
    ap.add_argument('--aqm', choices=('codel', 'red'), default='codel')
    ap.add_argument('--roce', type=int, default=1, help='DCQCN flows (1)')
    ap.add_argument('--tcp', type=int, default=1, help='AIMD flows (1)')
    ap.add_argument('--tcp-kind', choices=('reno', 'cubic'), default='cubic')
    ap.add_argument('--roce-cap', type=float, default=0,
                    help='host ceiling of each sroce flow, Mbit/s (none)')
    ap.add_argument('--tcp-gso', type=int, default=1,
                    help='TCP segments per packet in the queue (1)')
    ap.add_argument('--tcp-cap', type=float, default=0,
                    help='host ceiling of each TCP flow, Mbit/s (none)')
    ap.add_argument('--wake', type=float, default=0,
                    help='pace timer + tx_work latency, ms (0)')
    ap.add_argument('--old', action='store_true',
                    help='the defaults before fast recovery was on')
    ap.add_argument('--set', action='append', default=[],
                    help='NAME=VALUE: one cc/ tunable')
    ap.add_argument('--seed', type=int, default=1)
    args = ap.parse_args()
    random.seed(args.seed)
    t = dict(OLD_DEFAULTS if args.old else DEFAULTS)
    for kv in args.set:
        k, v = kv.split('=')
        t[k] = int(v)
    rtt = args.rtt / 1000
    big = 1e12
    rcap = args.roce_cap * 1e6 or big
    tcap = args.tcp_cap * 1e6 or big
    a, b = (1.0, 0.5) if args.tcp_kind == 'reno' else (0.53, 0.7)
    flows = [Dcqcn('sroce%d' % i, t, rtt, 100e9, rcap) for i in range(args.roce)]
    for f in flows:
        f.wake = args.wake / 1000
    flows += [Tcp('tcp%d' % i, a, b, rtt, tcap, args.tcp_gso)
              for i in range(args.tcp)]
    sim = Sim(args, flows)
    span = sim.run(args.secs, args.warmup, args.dt)
    rs = sum(f.goodput for f in flows if isinstance(f, Dcqcn)) / span * 8 / 1e6
    ts = sum(f.goodput for f in flows if isinstance(f, Tcp)) / span * 8 / 1e6
    for f in flows:
        extra = ''
        if isinstance(f, Dcqcn):
            extra = ' rc %.1f Mbit/s alpha %.3f' % (f.rc / 1000, f.alpha)
        print('%-7s %6.2f Mbit/s  lost %d of %d, marked %d%s' %
              (f.name, f.goodput / span * 8 / 1e6, f.lost, f.sent, f.marks,
               extra))
    tot = rs + ts
    ratio = rs / ts if ts else float('inf')
    wire = tot / args.rate
    print('rate %g Mbit/s rtt %g ms %s: sum %.2f Mbit/s = %.2f of the limit '
          '(goodput; payload/wire %.2f), sroce/TCP %.2f, marks %d' %
          (args.rate, args.rtt, args.aqm, tot, wire,
           ROCE_PAY / ROCE_WIRE, ratio, sim.marks))


if __name__ == '__main__':
    main()
