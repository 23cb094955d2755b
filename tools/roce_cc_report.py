#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Figures of selftests/roce_cc.sh: RoCE congestion control through a
bottleneck, one directory per phase (CC on/off x sroce alone/beside TCP).

  roce_cc_report.py show DIR            one phase's figures; exit 1 if
                                        either host's files are missing
  roce_cc_report.py check DIR WHAT      one assertion, exit 1 if it fails:
      --sender-cc                       cc_cnp_rx > 0 and cc_rate_dec > 0
      --receiver-cc                     cc_ce_rx > 0 and cc_cnp_tx > 0
      --ect                             host1's RoCE packets all ECT(0)
      --resent MAX                      no failed completion, resent
                                        packets < MAX x packets sent
      --ratio MIN MAX                   sroce/TCP and TCP/sroce goodput
                                        both within [MIN, MAX]
      --total MIN [CAPDIR]              sroce + TCP >= MIN x the link's
                                        capacity: TCP's goodput alone in
                                        phase CAPDIR, else the limit
  roce_cc_report.py report OUT DIR...   OUT/roce_cc.csv (per second),
                                        OUT/roce_cc-table.txt (printed
                                        too) and OUT/roce_cc.svg

A phase directory (written by the test in its log directory) holds
meta.txt (phase=, cc=, roce=, tcp=, secs=, rate_mbit=, shaper=, aqm=;
roce=0: TCP alone, the link's capacity as this test bed reaches it) and one
directory per host (verb=read: host1 serves ib_read_bw, host2 is its
client and keeps perftest.txt). host1/ (the sender: ib_write_bw client, iperf3
client, the bottleneck on its egress): counters-before.txt and
counters-after.txt ("name value", dev0's hw_counters), perftest.txt,
iperf3-client.json, tc-before.txt and tc-after.txt (tc -s qdisc show),
filters-before.txt and filters-after.txt (tc -s filter show: u32 filters
counting RoCE packets by ECN codepoint, htb only), rc.txt. host2/ (the
receiver): the counters, samples.txt ("EPOCH rx_bytes cc_cnp_tx", one
line a second), iperf3-server.json, rc.txt. host1/rate-trace.txt, where
tracefs was there: the phase's srdma_cc_rate events and one marker line
("srdma_cc_epoch EPOCH") that puts the trace clock on the samples' clock;
it gives the limiter's rate per second (a CSV column and a dashed line).

Units: MB = 10^6 bytes. sroce's goodput is what host2's responder took
in (hw_counters rx_bytes: BTH to ICRC, about 1.6% headers at MTU 1024),
less the phase's share of duplicates (rx_duplicate of rx_packets);
TCP's is what iperf3's server received. Per-phase figures are means
over a window: the seconds both flows (or sroce, alone, or where it
starved TCP) were running, less the first 2 and the last 1. Resent
packets are estimated from both hosts' counters: packets host1 sent
minus the new ones host2's QPs took in (rx_packets - rx_duplicate), less
those for a QP already gone (rx_bad_qp: the last window in flight when
perftest ends a timed run). Python 3 standard library only.
"""
import json
import math
import os
import re
import sys
from xml.sax.saxutils import escape

MB = 1e6
LABELS = {
    "off-alone": "CC off, sroce alone",
    "off-tcp": "CC off, sroce + TCP",
    "on-alone": "CC on, sroce alone",
    "on-tcp": "CC on, sroce + TCP",
    "on-tcp-again": "CC on, sroce + TCP, again",
    "tcp-alone": "TCP alone (capacity)",
}


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def read_kv(path, sep=None):
    """'name value' (or 'name=value') lines as a dict of str."""
    text = read_text(path)
    if text is None:
        return None
    out = {}
    for line in text.splitlines():
        parts = line.split("=", 1) if sep == "=" else line.split(None, 1)
        if len(parts) == 2:
            out[parts[0].strip()] = parts[1].strip()
    return out


def read_json(path):
    text = read_text(path)
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def counter_deltas(hdir):
    before = read_kv(os.path.join(hdir, "counters-before.txt"))
    after = read_kv(os.path.join(hdir, "counters-after.txt"))
    if before is None or after is None:
        return None
    out = {}
    for k, v in after.items():
        try:
            out[k] = int(v) - int(before.get(k, v))
        except ValueError:
            pass
    return out


def cpu_use(hdir):
    """(busy %, kernel %) of the host's CPU time during the traffic, from
    the /proc/stat "cpu" lines before and after it, or None. Busy is all
    but idle, iowait and steal; kernel is system + irq + softirq."""
    ticks = []
    for name in ("stat-before.txt", "stat-after.txt"):
        text = read_text(os.path.join(hdir, name))
        words = text.split() if text else []
        if len(words) < 8 or words[0] != "cpu":
            return None
        try:
            ticks.append([int(w) for w in words[1:]])
        except ValueError:
            return None
    d = [b - a for a, b in zip(ticks[0], ticks[1])]
    total = sum(d[:8])  # guest time is in user time already
    if total <= 0:
        return None
    busy = total - d[3] - d[4] - d[7]  # not idle, iowait or steal
    kernel = d[2] + d[5] + d[6]
    return 100.0 * busy / total, 100.0 * kernel / total


def read_rc(hdir):
    """{'perftest': N, 'iperf3': N} from rc.txt, or None."""
    text = read_text(os.path.join(hdir, "rc.txt"))
    if text is None:
        return None
    out = {}
    for word in text.split():
        k, _, v = word.partition("=")
        try:
            out[k] = int(v)
        except ValueError:
            pass
    return out


def perftest_result(path):
    """(iterations, BW average) from ib_write_bw's result line."""
    text = read_text(path)
    if text is None:
        return None, None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and i + 1 < len(lines):
            f = lines[i + 1].split()
            try:
                return int(f[1]), float(f[3])
            except (IndexError, ValueError):
                return None, None
    return None, None


def qdisc_stats(path, handle="10:"):
    """(marks, drops) of the AQM qdisc in a `tc -s qdisc show` dump."""
    text = read_text(path)
    if text is None:
        return None
    block, inside = [], False
    for line in text.splitlines():
        if line.startswith("qdisc "):
            inside = line.split()[2:3] == [handle]
            continue
        if inside:
            block.append(line)
    words = " ".join(block).replace(",", " ").replace("(", " ").replace(")", " ").split()
    vals = {}
    for i in range(len(words) - 1):
        if words[i] in ("dropped", "ecn_mark", "marked") and words[i] not in vals:
            try:
                vals[words[i]] = int(words[i + 1])
            except ValueError:
                pass
    if not vals:
        return None
    return vals.get("ecn_mark", vals.get("marked", 0)), vals.get("dropped", 0)


def ecn_filter_hits(path):
    """{pref: packets} of host1's u32 filters (tc -s filter show): RoCE
    packets by ECN codepoint, pref 1 ECT(0), 2 Not-ECT, 3 ECT(1)."""
    text = read_text(path)
    if text is None:
        return None
    out = {}
    for line in text.splitlines():
        w = line.split()
        if "pref" in w and "success" in w:
            try:
                pref = int(w[w.index("pref") + 1])
                out[pref] = int(w[w.index("success") + 1].rstrip(")"))
            except (IndexError, ValueError):
                pass
    return out or None


def per_second(points, t0, scale=1.0):
    """{k: growth of a cumulative count over second k, (t0+k-1, t0+k]}
    from (time, count) points, interpolated linearly between them: a
    late or doubled sample leaves no gap and counts nothing twice."""
    points = sorted(points)
    if len(points) < 2:
        return {}

    def at(t):
        for (ta, ca), (tb, cb) in zip(points, points[1:]):
            if ta <= t <= tb:
                return ca + (cb - ca) * (t - ta) / (tb - ta) if tb > ta else cb
        return None
    out = {}
    k = int(math.floor(points[0][0] - t0)) + 1
    while t0 + k <= points[-1][0] + 1e-6:
        a, b = at(t0 + k - 1), at(min(t0 + k, points[-1][0]))
        if a is not None and b is not None:
            out[k] = (b - a) / scale
        k += 1
    return out


def sroce_series(h2):
    """t0 and ({second: sroce MB/s}, {second: CNPs sent}) from host2's
    samples ("EPOCH rx_bytes cc_cnp_tx", about one a second)."""
    text = read_text(os.path.join(h2, "samples.txt"))
    rows = []
    for line in (text or "").splitlines():
        f = line.split()
        try:
            rows.append((float(f[0]), int(f[1]), int(f[2]) if len(f) > 2 else 0))
        except (IndexError, ValueError):
            continue
    if len(rows) < 2:
        return None, {}, {}
    t0 = rows[0][0]
    return (t0, per_second([(t, b) for t, b, _ in rows], t0, MB),
            per_second([(t, c) for t, _, c in rows], t0))


def tcp_series(pdir, t0):
    """{second: TCP MB/s} from iperf3's 1 s intervals, on the sampler's
    clock: the server's (host2, the sampler's own), else the client's."""
    for name in ("host2/iperf3-server.json", "host1/iperf3-client.json"):
        j = read_json(os.path.join(pdir, name))
        if not j or not j.get("intervals"):
            continue
        try:
            start = j["start"]["timestamp"]["timesecs"] + 0.5  # whole seconds
            first = j["intervals"][0]["sum"]["start"]
        except (KeyError, TypeError, IndexError):
            continue
        if t0 is None:
            t0 = start
        points, total = [(start + first, 0)], 0
        for iv in j["intervals"]:
            s = iv.get("sum", {})
            total += s.get("bytes", 0)
            points.append((start + s.get("end", 0), total))
        return per_second(points, t0, MB)
    return {}


TRACE_RE = re.compile(r"\s(\d+\.\d+): (?:tracing_mark_write: )?"
                      r"(?:srdma_cc_rate: .* rate_kbps (\d+) .*reason (\S+)"
                      r"|srdma_cc_epoch (\d+\.\d+))")


def rate_series(h1, t0):
    """{second: the limiter's mean rate, MB/s} from host1's trace of
    srdma_cc_rate: Rc held between events, weighted by time; seconds
    spent unlimited (at the line rate, or disabled) count as no limit
    and are left out."""
    text = read_text(os.path.join(h1, "rate-trace.txt"))
    if not text or t0 is None:
        return {}
    offset, events = None, []
    for line in text.splitlines():
        m = TRACE_RE.search(line)
        if not m:
            continue
        ts = float(m.group(1))
        if m.group(4):
            offset = float(m.group(4)) - ts
        else:
            unlimited = m.group(3) in ("line", "disabled")
            events.append((ts, None if unlimited else int(m.group(2)) * 1000 / 8 / MB))
    if offset is None or not events:
        return {}
    out = {}
    for (ta, ra), (tb, _) in zip(events, events[1:] + [(events[-1][0], None)]):
        if ra is None:
            continue
        a, b = ta + offset - t0, max(ta, tb) + offset - t0
        k = int(math.floor(a)) + 1
        while k - 1 < b:
            lo, hi = max(a, k - 1), min(b, k)
            if hi > lo:
                w, v = out.get(k, (0.0, 0.0))
                out[k] = (w + (hi - lo), v + ra * (hi - lo))
            k += 1
    return {k: v / w for k, (w, v) in out.items() if w >= 0.5}


def active_span(series, floor):
    secs = [k for k, v in series.items() if v >= floor]
    return (min(secs), max(secs)) if secs else None


def mean(series, win):
    vals = [series[k] for k in range(win[0], win[1] + 1) if k in series]
    return sum(vals) / len(vals) if vals else 0.0


def summarize(pdir):
    meta = read_kv(os.path.join(pdir, "meta.txt"), sep="=") or {}
    name = meta.get("phase", os.path.basename(os.path.normpath(pdir)))
    h1, h2 = os.path.join(pdir, "host1"), os.path.join(pdir, "host2")
    rate = float(meta.get("rate_mbit", 80))
    limit = rate * 1e6 / 8 / MB
    tcp = meta.get("tcp") == "1"
    roce = meta.get("roce", "1") == "1"
    s = {"dir": pdir, "phase": name, "label": LABELS.get(name, name),
         "cc": meta.get("cc"), "tcp": tcp, "roce": roce, "rate_mbit": rate,
         "limit": limit,
         "have_host1": os.path.isdir(h1), "have_host2": os.path.isdir(h2)}
    t0, sroce, cnps = sroce_series(h2)
    # rx_bytes counts resent packets again: keep the share that was new
    d2 = counter_deltas(h2) or {}
    rx, dup = d2.get("rx_packets"), d2.get("rx_duplicate")
    if rx and dup:
        fresh = max(0.0, 1.0 - float(dup) / rx)
        sroce = {k: v * fresh for k, v in sroce.items()}
    tcps = tcp_series(pdir, t0) if tcp else {}
    s.update(sroce_series=sroce, cnp_series=cnps, tcp_series=tcps,
             rate_series=rate_series(h1, t0))
    floor = 0.02 * limit
    spans = [active_span(sroce, floor)] if roce else []
    if tcp:
        spans.append(active_span(tcps, floor))
    win = None
    # both flows' common seconds; else (CC off: one starved the other
    # after a moment) the first flow's alone, sroce's
    for use in (spans, spans[:1]):
        if use and all(use):
            lo = max(a for a, _ in use) + 2
            hi = min(b for _, b in use) - 1
            if hi - lo + 1 >= 3:
                win = (lo, hi)
                break
    s["window"] = win
    if win:
        s["sroce_mbs"] = mean(sroce, win) if roce else None
        s["tcp_mbs"] = mean(tcps, win) if tcp else None
        s["total_mbs"] = (s["sroce_mbs"] or 0) + (s["tcp_mbs"] or 0)
        s["total_x"] = s["total_mbs"] / limit
        s["ratio"] = (s["sroce_mbs"] / s["tcp_mbs"]
                      if roce and tcp and s["tcp_mbs"] else None)
    else:
        s.update(sroce_mbs=None, tcp_mbs=None, total_mbs=None, total_x=None, ratio=None)
    d1 = counter_deltas(h1) or {}
    s["d1"], s["d2"] = d1, d2
    g1 = d1.get
    g2 = d2.get
    s["sent"] = g1("tx_packets")
    if None not in (g1("tx_packets"), g2("rx_packets"), g2("rx_duplicate")):
        fresh = g2("rx_packets") - g2("rx_duplicate")
        s["resent"] = max(0, g1("tx_packets") - fresh - (g2("rx_bad_qp") or 0))
        s["resent_frac"] = s["resent"] / g1("tx_packets") if g1("tx_packets") else None
    else:
        s["resent"] = s["resent_frac"] = None
    for key, d, c in (("goback", d1, "retransmits"), ("probes", d1, "retransmit_probes"),
                      ("timeouts", d1, "retransmit_timeouts"),
                      ("retry_exc", d1, "retry_exceeded"),
                      ("cnp_rx", d1, "cc_cnp_rx"), ("rate_dec", d1, "cc_rate_dec"),
                      ("rate_inc", d1, "cc_rate_inc"), ("ce_rx", d2, "cc_ce_rx"),
                      ("cnp_tx", d2, "cc_cnp_tx"), ("dup", d2, "rx_duplicate"),
                      ("bad_qp", d2, "rx_bad_qp"), ("seq_nak", d2, "seq_nak_sent")):
        s[key] = d.get(c)
    # the stream's client: host1 (WRITE), host2 (meta verb=read)
    client = h2 if meta.get("verb") == "read" else h1
    s["perftest_iters"], s["perftest_bw"] = perftest_result(
        os.path.join(client, "perftest.txt"))
    q0 = qdisc_stats(os.path.join(h1, "tc-before.txt"))
    q1 = qdisc_stats(os.path.join(h1, "tc-after.txt"))
    s["aqm"] = (q1[0] - q0[0], q1[1] - q0[1]) if q0 and q1 else None
    f0 = ecn_filter_hits(os.path.join(h1, "filters-before.txt"))
    f1 = ecn_filter_hits(os.path.join(h1, "filters-after.txt"))
    s["ect"] = (tuple(f1.get(p, 0) - f0.get(p, 0) for p in (1, 2, 3))
                if f0 is not None and f1 is not None else None)
    cj = read_json(os.path.join(h1, "iperf3-client.json")) if tcp else None
    try:
        s["tcp_retrans"] = cj["end"]["sum_sent"]["retransmits"]
    except (KeyError, TypeError):
        s["tcp_retrans"] = None
    s["rc1"], s["rc2"] = read_rc(h1), read_rc(h2)
    s["cpu1"], s["cpu2"] = cpu_use(h1), cpu_use(h2)
    errs = []
    for host, rc in (("host1", s["rc1"]), ("host2", s["rc2"])):
        for tool, v in sorted((rc or {}).items()):
            if v:
                errs.append("%s %s rc %d" % (host, tool, v))
    if s["retry_exc"]:
        errs.append("retry_exceeded %d" % s["retry_exc"])
    if d1.get("rnr_retry_exceeded"):
        errs.append("rnr_retry_exceeded %d" % d1["rnr_retry_exceeded"])
    s["errors"] = errs
    return s


def fnum(v, fmt="%.2f", none="-"):
    return none if v is None else fmt % v


def table(phases):
    """The acceptance table of issue 19, then the details."""
    rate = phases[0]["rate_mbit"] if phases else 0
    hdr = ("%-21s %4s %6s %6s %5s %6s %15s %6s %6s %6s %5s %13s  %s" %
           ("phase", "win", "sroce", "TCP", "total", "sroce/", "resent/sent",
            "CE rx", "CNP tx", "CNP rx", "rate", "AQM", "errors"))
    hdr2 = ("%-21s %4s %6s %6s %5s %6s %15s %6s %6s %6s %5s %13s" %
            ("", "s", "MB/s", "MB/s", "x lim", "TCP", "packets", "", "", "", "dec",
             "marks/drops"))
    lines = ["Goodput (MB = 10^6 B; means over the window 'win'), limit %g Mbit/s = %.2f MB/s"
             % (rate, rate / 8), hdr, hdr2]
    for s in phases:
        win = s["window"][1] - s["window"][0] + 1 if s["window"] else None
        if s["resent"] is not None and s["sent"]:
            resent = "%d %.2f%%" % (s["resent"], 100.0 * s["resent_frac"])
        else:
            resent = "-"
        aqm = "%d/%d" % s["aqm"] if s["aqm"] else "-"
        lines.append("%-21s %4s %6s %6s %5s %6s %15s %6s %6s %6s %5s %13s  %s" % (
            s["label"], fnum(win, "%d"), fnum(s["sroce_mbs"]), fnum(s["tcp_mbs"]),
            fnum(s["total_x"]), fnum(s["ratio"]), resent, fnum(s["ce_rx"], "%d"),
            fnum(s["cnp_tx"], "%d"), fnum(s["cnp_rx"], "%d"), fnum(s["rate_dec"], "%d"),
            aqm, ", ".join(s["errors"]) or "none"))
    cap = [s for s in phases if not s["roce"] and s["tcp_mbs"]]
    if cap:
        c = cap[0]["tcp_mbs"]
        both = ["%s %.2f" % (s["label"], s["total_mbs"] / c) for s in phases
                if s["roce"] and s["tcp"] and s["total_mbs"] is not None]
        lines.append("Capacity (TCP alone): %.2f MB/s = %.2f x the limit; "
                     "sroce + TCP / capacity: %s" % (c, c / phases[0]["limit"],
                                                     ", ".join(both) or "-"))
    lines.append("")
    lines.append("%-21s %9s %9s %8s %7s %7s %6s %7s %7s %7s %7s %7s %7s  %s" % (
        "details", "perftest", "sent", "go-back", "probes", "timeo", "dup",
        "bad_qp", "seqNAK", "rate", "TCP", "host1", "host2", "RoCE packets"))
    lines.append("%-21s %9s %9s %8s %7s %7s %6s %7s %7s %7s %7s %7s %7s  %s" % (
        "", "MB/s", "packets", "passes", "", "-outs", "rx", "rx", "sent", "inc",
        "retrans", "CPU %", "CPU %", "ECT(0)/Not-ECT/ECT(1)"))
    for s in phases:
        lines.append("%-21s %9s %9s %8s %7s %7s %6s %7s %7s %7s %7s %7s %7s  %s" % (
            s["label"], fnum(s["perftest_bw"]), fnum(s["sent"], "%d"),
            fnum(s["goback"], "%d"), fnum(s["probes"], "%d"), fnum(s["timeouts"], "%d"),
            fnum(s["dup"], "%d"), fnum(s["bad_qp"], "%d"), fnum(s["seq_nak"], "%d"),
            fnum(s["rate_inc"], "%d"), fnum(s["tcp_retrans"], "%d"),
            "%d/%d" % s["cpu1"] if s["cpu1"] else "-",
            "%d/%d" % s["cpu2"] if s["cpu2"] else "-",
            "%d/%d/%d" % s["ect"] if s["ect"] else "-"))
    lines.append("CPU %: busy / kernel (system, irq, softirq) of each host "
                 "while the tools ran")
    return "\n".join(lines) + "\n"


def csv_rows(phases):
    rows = ["phase,second,sroce_mbs,tcp_mbs,cnp_tx_per_s,sroce_limit_mbs"]
    for s in phases:
        keys = sorted(set(s["sroce_series"]) | set(s["tcp_series"]))
        for k in keys:
            sr = s["sroce_series"].get(k)
            tc = s["tcp_series"].get(k) if s["tcp"] else None
            cn = s["cnp_series"].get(k)
            rl = s["rate_series"].get(k)
            rows.append("%s,%d,%s,%s,%s,%s" % (s["phase"], k, fnum(sr, "%.3f", ""),
                                               fnum(tc, "%.3f", ""), fnum(cn, "%.0f", ""),
                                               fnum(rl, "%.3f", "")))
    return "\n".join(rows) + "\n"


def nice_step(span, ticks=5):
    raw = span / ticks if span > 0 else 1
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def svg(phases):
    """Goodput per flow over time, one panel per phase, by hand."""
    pw, ph = 480, 270            # panel
    ml, mr, mt, mb = 52, 14, 30, 38  # margins inside a panel
    cols = 2
    rows = (len(phases) + cols - 1) // cols
    top = 56
    width, height = cols * pw, top + rows * ph
    limit = phases[0]["limit"] if phases else 10
    xmax = max([max(list(s["sroce_series"]) + list(s["tcp_series"]) + [1])
                for s in phases] + [10])
    vmax = max([v for s in phases for v in list(s["sroce_series"].values()) +
                list(s["tcp_series"].values())] + [limit * 1.2])
    ystep = nice_step(vmax)
    ymax = ystep * math.ceil(vmax / ystep)
    xstep = nice_step(xmax, 6)
    xmax = xstep * math.ceil(xmax / xstep)
    colors = {"sroce": "#1f77b4", "tcp": "#ff7f0e"}
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">'
           % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="14" text-anchor="middle">%s</text>'
           % (width / 2, escape("RoCE congestion control: goodput per flow, MB/s "
                                "(limit %g Mbit/s)" % phases[0]["rate_mbit"]
                                if phases else "no phases")),
           '<line x1="%d" y1="38" x2="%d" y2="38" stroke="%s" stroke-width="2"/>'
           '<text x="%d" y="42">sroce (64 KiB RDMA WRITE)</text>'
           % (width / 2 - 220, width / 2 - 196, colors["sroce"], width / 2 - 190),
           '<line x1="%d" y1="38" x2="%d" y2="38" stroke="%s" stroke-width="2"/>'
           '<text x="%d" y="42">TCP (iperf3)</text>'
           % (width / 2 - 20, width / 2 + 4, colors["tcp"], width / 2 + 10),
           '<line x1="%d" y1="38" x2="%d" y2="38" stroke="#888" stroke-dasharray="4 3"/>'
           '<text x="%d" y="42">limit</text>'
           % (width / 2 + 100, width / 2 + 124, width / 2 + 130),
           '<rect x="%d" y="32" width="18" height="11" fill="#eee"/>'
           '<text x="%d" y="42">window averaged</text>'
           % (width / 2 + 170, width / 2 + 194),
           '<line x1="%d" y1="38" x2="%d" y2="38" stroke="%s" stroke-dasharray="2 2"/>'
           '<text x="%d" y="42">sroce limiter (Rc)</text>'
           % (width / 2 + 290, width / 2 + 314, colors["sroce"], width / 2 + 320)]
    for i, s in enumerate(phases):
        ox, oy = (i % cols) * pw, top + (i // cols) * ph
        x0, y0 = ox + ml, oy + mt
        w, h = pw - ml - mr, ph - mt - mb

        def px(x):
            return x0 + w * x / xmax

        def py(y):
            return y0 + h - h * min(y, ymax) / ymax
        out.append('<text x="%.1f" y="%d" font-size="12" text-anchor="middle">%s</text>'
                   % (x0 + w / 2, oy + 18, escape(s["label"])))
        if s["window"]:
            a, b = s["window"]
            out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#eee"/>'
                       % (px(a - 1), y0, px(b) - px(a - 1), h))
        y = 0.0
        while y <= ymax + 1e-9:
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>'
                       '<text x="%d" y="%.1f" text-anchor="end">%g</text>'
                       % (x0, py(y), x0 + w, py(y), x0 - 4, py(y) + 4, round(y, 6)))
            y += ystep
        x = 0.0
        while x <= xmax + 1e-9:
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999"/>'
                       '<text x="%.1f" y="%d" text-anchor="middle">%g</text>'
                       % (px(x), y0 + h, px(x), y0 + h + 4, px(x), y0 + h + 16, x))
            x += xstep
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>'
                   % (x0, y0, w, h))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">second</text>'
                   % (x0 + w / 2, oy + ph - 6))
        out.append('<text x="%d" y="%.1f" text-anchor="middle" transform="rotate(-90 %d %.1f)">'
                   'MB/s</text>' % (ox + 14, y0 + h / 2, ox + 14, y0 + h / 2))
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#888" '
                   'stroke-dasharray="4 3"/>' % (x0, py(limit), x0 + w, py(limit)))
        for key, series, dash in (("sroce", s["sroce_series"], ""),
                                  ("tcp", s["tcp_series"], ""),
                                  ("sroce", s["rate_series"], ' stroke-dasharray="2 2"')):
            if not series:
                continue
            pts = " ".join("%.1f,%.1f" % (px(k), py(v)) for k, v in sorted(series.items())
                           if 0 <= k <= xmax)
            out.append('<polyline fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>'
                       % (colors[key], dash, pts))
        note = "sroce %s MB/s" % fnum(s["sroce_mbs"])
        if s["tcp"]:
            note = "sroce %s, TCP %s MB/s" % (fnum(s["sroce_mbs"]), fnum(s["tcp_mbs"]))
        out.append('<text x="%d" y="%d" text-anchor="end" fill="#333">%s</text>'
                   % (x0 + w - 4, y0 + 13, escape(note)))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def show(pdir):
    s = summarize(pdir)
    win = "%d-%d s" % s["window"] if s["window"] else "none"
    print("%s: sroce %s MB/s, TCP %s MB/s, total %s x limit, sroce/TCP %s (window %s)"
          % (s["label"], fnum(s["sroce_mbs"]), fnum(s["tcp_mbs"]), fnum(s["total_x"]),
             fnum(s["ratio"]), win))
    print("  sent %s, resent %s (%s), go-back %s, probes %s, timeouts %s, retry_exceeded %s"
          % (fnum(s["sent"], "%d"), fnum(s["resent"], "%d"),
             fnum(s["resent_frac"] and 100 * s["resent_frac"], "%.2f%%"),
             fnum(s["goback"], "%d"), fnum(s["probes"], "%d"), fnum(s["timeouts"], "%d"),
             fnum(s["retry_exc"], "%d")))
    print("  CE rx %s, CNP tx %s, CNP rx %s, rate dec %s inc %s, AQM marks/drops %s, "
          "RoCE ECT(0)/Not-ECT/ECT(1) %s, TCP retrans %s, perftest %s MB/s, errors: %s"
          % (fnum(s["ce_rx"], "%d"), fnum(s["cnp_tx"], "%d"), fnum(s["cnp_rx"], "%d"),
             fnum(s["rate_dec"], "%d"), fnum(s["rate_inc"], "%d"),
             "%d/%d" % s["aqm"] if s["aqm"] else "-",
             "%d/%d/%d" % s["ect"] if s["ect"] else "-", fnum(s["tcp_retrans"], "%d"),
             fnum(s["perftest_bw"]), ", ".join(s["errors"]) or "none"))
    missing = [h for h in ("host1", "host2") if not s["have_" + h]]
    if missing:
        print("missing: %s's files" % " and ".join(missing))
        return 1
    if not s["d1"] or not s["d2"] or not s["sroce_series"]:
        print("incomplete: counters or samples missing")
        return 1
    return 0


def check(pdir, args):
    s = summarize(pdir)
    ok = True

    def need(cond, text):
        nonlocal ok
        print(("ok:     " if cond else "FAILED: ") + text)
        ok = ok and bool(cond)
    what = args[0] if args else ""
    if what == "--sender-cc":
        need(s["cnp_rx"] and s["cnp_rx"] > 0, "host1 cc_cnp_rx %s > 0" % s["cnp_rx"])
        need(s["rate_dec"] and s["rate_dec"] > 0, "host1 cc_rate_dec %s > 0" % s["rate_dec"])
    elif what == "--receiver-cc":
        need(s["ce_rx"] and s["ce_rx"] > 0, "host2 cc_ce_rx %s > 0" % s["ce_rx"])
        need(s["cnp_tx"] and s["cnp_tx"] > 0, "host2 cc_cnp_tx %s > 0" % s["cnp_tx"])
    elif what == "--ect":
        e = s["ect"]
        need(e is not None, "host1's filters counted RoCE packets: %s" % (
            "ECT(0) %d, Not-ECT %d, ECT(1) %d" % e if e else "no counts"))
        need(e and e[0] > 0, "ECT(0) packets > 0")
        need(e and e[1] == 0, "no Not-ECT packet")
    elif what == "--resent" and len(args) == 2:
        limit = float(args[1])
        rc = (s["rc1"] or {}).get("perftest")
        need(rc == 0, "ib_write_bw (host1) exit status %s == 0" % rc)
        need(s["retry_exc"] == 0, "host1 retry_exceeded %s == 0" % s["retry_exc"])
        need(s["sent"], "host1 sent %s packets" % s["sent"])
        need(s["resent_frac"] is not None and s["resent_frac"] < limit,
             "resent %s of %s packets = %s < %g%%" % (
                 s["resent"], s["sent"],
                 fnum(s["resent_frac"] and 100 * s["resent_frac"], "%.3f%%"), 100 * limit))
    elif what == "--ratio" and len(args) == 3:
        lo, hi = float(args[1]), float(args[2])
        r = s["ratio"]
        need(r is not None, "window %s: sroce %s MB/s, TCP %s MB/s"
             % (s["window"], fnum(s["sroce_mbs"]), fnum(s["tcp_mbs"])))
        need(r is not None and lo <= r <= hi, "sroce/TCP %s in [%g, %g]" % (fnum(r), lo, hi))
        need(r and lo <= 1 / r <= hi, "TCP/sroce %s in [%g, %g]"
             % (fnum(r and 1 / r), lo, hi))
    elif what == "--total" and len(args) in (2, 3):
        f = float(args[1])
        # against the limit: reported; the bound is against the capacity
        print("        sroce %s + TCP %s = %s MB/s = %s x the limit (%.2f MB/s) (window %s)"
              % (fnum(s["sroce_mbs"]), fnum(s["tcp_mbs"]), fnum(s["total_mbs"]),
                 fnum(s["total_x"]), s["limit"], s["window"]))
        cap, what_cap = s["limit"], "the limit"
        if len(args) == 3:
            c = summarize(args[2])
            cap, what_cap = c["tcp_mbs"], "TCP alone"
            need(cap, "capacity: TCP alone %s MB/s = %s x the limit (window %s)"
                 % (fnum(cap), fnum(c["total_x"]), c["window"]))
        x = s["total_mbs"] / cap if s["total_mbs"] is not None and cap else None
        need(x is not None and x >= f, "sroce + TCP = %s x %s (%s MB/s) >= %g"
             % (fnum(x), what_cap, fnum(cap), f))
    else:
        print(__doc__)
        return 2
    return 0 if ok else 1


def report(outdir, dirs):
    phases = [summarize(d) for d in dirs]
    os.makedirs(outdir, exist_ok=True)
    files = (("roce_cc.csv", csv_rows(phases)), ("roce_cc-table.txt", table(phases)),
             ("roce_cc.svg", svg(phases)))
    for name, text in files:
        with open(os.path.join(outdir, name), "w", encoding="utf-8") as f:
            f.write(text)
    sys.stdout.write(table(phases))
    print("wrote %s" % ", ".join(os.path.join(outdir, n) for n, _ in files))
    return 0 if phases else 1


def main(argv):
    if len(argv) >= 2 and argv[0] == "show":
        return show(argv[1])
    if len(argv) >= 3 and argv[0] == "check":
        return check(argv[1], argv[2:])
    if len(argv) >= 3 and argv[0] == "report":
        return report(argv[1], argv[2:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
