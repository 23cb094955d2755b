#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise a `make bench` run: medians per point, CPU time per GB and
kernel CPU time per message, the table with the ratios the performance
targets name, summary.csv and a bandwidth plot per operation (gnuplot).

  bench_report.py OUT_DIR SECONDS_PER_POINT
"""
import csv
import os
import statistics
import subprocess
import sys

USER_HZ = 100
ORDER = ["tcp", "sroce", "sroce-pkt", "siwarp", "rxe", "siw"]


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def cpu_jiffies(out, cpu_csv="cpu.csv"):
    """Jiffies per point id in OUT's CPU_CSV, both hosts summed: all busy
    time, and the kernel's share (system, irq, softirq) that leaves out
    user-space CQ polling."""
    busy, kern = {}, {}
    for row in csv.reader(open(os.path.join(out, cpu_csv))):
        if len(row) >= 3:
            busy[row[0]] = busy.get(row[0], 0) + float(row[2])
        if len(row) >= 5:
            kern[row[0]] = kern.get(row[0], 0) + float(row[4])
    return busy, kern


def load(out, secs, points_csv="points.csv", cpu_csv="cpu.csv"):
    """The medians of every point in OUT's POINTS_CSV, with CPU_CSV's CPU
    time per GB and kernel CPU time per message (microseconds)."""
    points = list(csv.DictReader(open(os.path.join(out, points_csv))))
    busy, kern = cpu_jiffies(out, cpu_csv)
    groups = {}
    for p in points:
        key = (p["system"], p["kind"], p["op"], int(p["size"]))
        g = groups.setdefault(key, {"mbs": [], "mpps": [], "typ": [], "p99": [],
                                    "cpu": [], "kcpu": [], "kmsg": []})
        # perftest's duration mode now and then prints 0.00 for a run that
        # moved data (its end timestamp is lost): a missing value, not 0
        mbs = num(p["mbytes_per_s"]) or None
        g["mbs"].append(mbs)
        g["mpps"].append(num(p["mpps"]) or None)
        g["typ"].append(num(p["lat_typical_us"]))
        g["p99"].append(num(p["lat_p99_us"]))
        if mbs and p["id"] in busy:
            # a point that sends a count of messages records its bytes
            gbytes = (num(p.get("bytes")) or mbs * 1e6 * secs) / 1e9
            g["cpu"].append(busy[p["id"]] / USER_HZ / gbytes)
            if p["id"] in kern:
                g["kcpu"].append(kern[p["id"]] / USER_HZ / gbytes)
        msgs = messages(p, secs)
        if msgs and p["id"] in kern:
            g["kmsg"].append(kern[p["id"]] / USER_HZ / msgs * 1e6)
    return {k: {f: median(v) for f, v in g.items()} for k, g in groups.items()}


def messages(p, secs):
    """The messages a bandwidth point moved: its bytes over its size for a
    point that sends a count of them, else perftest's rate times the
    duration (as CPU per GB takes its MB/s); None for TCP (no rate)."""
    size = int(p["size"])
    if num(p.get("bytes")) and size:
        return num(p["bytes"]) / size
    mpps = num(p["mpps"])
    return mpps * 1e6 * secs if mpps else None


def bw_point(m, s, op, size):
    """The medians of one bandwidth point; TCP has one stream for every op."""
    return m.get((s, "bw", "stream" if s == "tcp" else op, size), {})


def ref_point(m, s):
    """TCP's 64 KiB medians from the runs made next to system s's points."""
    return m.get(("tcp", "bw", "ref-" + s, 65536), {})


def tcp_ref(m, s):
    """The TCP figure system s's targets compare against: its reference
    runs, or, from a bench run that has none, TCP's own block."""
    return ref_point(m, s) or bw_point(m, "tcp", "stream", 65536)


def kmsg(m, s):
    """System s's kernel CPU time per 64 B SEND of its message-rate run,
    microseconds (median)."""
    return m.get((s, "bw", "send", 64), {}).get("kmsg")


# ib_send_lat -n in tools/bench-guest.sh: each iteration is one SEND each way
LAT_ITERS = 300


def kmsg_alone(out, secs):
    """{system: kernel CPU time per 64 B SEND with each side's set-up and
    teardown left out, microseconds (median over repetitions)}: the
    message-rate point's kernel time less that of the 64 B SEND latency
    point of the same repetition, which pays the same set-up for
    2 * LAT_ITERS messages, over the difference of their messages."""
    kern = cpu_jiffies(out)[1]
    vals = {}
    for p in csv.DictReader(open(os.path.join(out, "points.csv"))):
        if (p["kind"], p["op"], p["size"]) != ("bw", "send", "64"):
            continue
        lat_id = "%s/lat/send/64/%s" % (p["system"], p["rep"])
        msgs = messages(p, secs)
        if (not num(p["mbytes_per_s"]) or not msgs or msgs <= 2 * LAT_ITERS or
                p["id"] not in kern or lat_id not in kern):
            continue
        vals.setdefault(p["system"], []).append(
            (kern[p["id"]] - kern[lat_id]) / USER_HZ / (msgs - 2 * LAT_ITERS) * 1e6)
    return {s: median(v) for s, v in vals.items()}


def fmt(v, spec="%.1f"):
    return spec % v if v is not None else "-"


def ratio(a, b):
    return a / b if a is not None and b else None


def main():
    out, secs = sys.argv[1], float(sys.argv[2])
    m = load(out, secs)
    systems = [s for s in ORDER if any(k[0] == s for k in m)]
    rdma = [s for s in systems if s != "tcp"]
    sizes = sorted({k[3] for k in m if k[1] == "bw"})

    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "kind", "op", "size", "mbytes_per_s", "mpps",
                    "lat_typical_us", "lat_p99_us", "cpu_s_per_gb",
                    "kernel_cpu_s_per_gb", "kernel_cpu_us_per_msg"])
        for k in sorted(m):
            v = m[k]
            w.writerow(list(k) + [v["mbs"], v["mpps"], v["typ"], v["p99"], v["cpu"],
                                  v["kcpu"], v["kmsg"]])

    print("\nBandwidth, MB/s (median; TCP: iperf3 with that write size; send_ev: SEND,"
          " both sides sleep on completion events)")
    print("%-7s %8s" % ("op", "size") + "".join("%10s" % s for s in systems))
    for op in ["write", "read", "send", "send_ev"]:
        for size in sizes:
            if not any(bw_point(m, s, op, size) for s in rdma):
                continue
            row = []
            for s in systems:
                row.append(fmt(bw_point(m, s, op, size).get("mbs")))
            print("%-7s %8d" % (op, size) + "".join("%10s" % c for c in row))
    print("\nLatency, microseconds, typical / 99th percentile (send_ev: SEND, both sides"
          " sleep on completion events instead of busy-polling)")
    print("%-8s %6s" % ("op", "size") + "".join("%22s" % s for s in rdma))
    for op in ["send", "write", "send_ev"]:
        for size in [64, 4096]:
            cells = []
            for s in rdma:
                v = m.get((s, "lat", op, size), {})
                cells.append("%s / %s" % (fmt(v.get("typ")), fmt(v.get("p99"))))
            print("%-8s %6d" % (op, size) + "".join("%22s" % c for c in cells))
    cells = []
    for proto in ["udp", "tcp"]:
        for size in [64, 4096]:
            v = m.get(("tcp", "lat", proto, size), {})
            if v:
                cells.append("%s %s B %s / %s" % (proto.upper(), size, fmt(v.get("typ")), fmt(v.get("p99"))))
    if cells:
        print("The wire's own round trip (sockperf ping-pong, half of it, typical / 99th percentile):")
        print("  " + "; ".join(cells))
    print("\n64 B SEND message rate, Mpps: " + ", ".join(
        "%s %s" % (s, fmt(m.get((s, "bw", "send", 64), {}).get("mpps"), "%.4f")) for s in rdma))
    print("Kernel CPU per 64 B SEND in it, microseconds (system, irq, softirq;"
          " both hosts): " + ", ".join(
              "%s %s" % (s, fmt(kmsg(m, s))) for s in rdma))
    alone = kmsg_alone(out, secs)
    print("The same without each side's set-up and teardown (the 64 B latency"
          " point's kernel time,\nthe same set-up for %d messages, taken off): " %
          (2 * LAT_ITERS) + ", ".join("%s %s" % (s, fmt(alone.get(s))) for s in rdma))
    for op, field, what in [
            ("write", "cpu", "CPU seconds per GB, 64 KiB WRITE (both hosts)"),
            ("write", "kcpu", "of it in the kernel (system, irq, softirq; no"
                              " user-space polling)"),
            ("send_ev", "cpu", "CPU seconds per GB, 64 KiB SEND with completion"
                               " events (TCP: iperf3)")]:
        print(what + ": " + ", ".join(
            "%s %s" % (s, fmt(bw_point(m, s, op, 65536).get(field), "%.2f"))
            for s in systems))

    refs = [s for s in rdma if ref_point(m, s)]
    if refs:
        print("TCP, 64 KiB, in the runs next to each system's points (the targets'"
              " reference): " + ", ".join(
                  "%s %s MB/s" % (s, fmt(ref_point(m, s).get("mbs"))) for s in refs))
    siw_lat = m.get(("siw", "lat", "send", 64), {}).get("typ")
    siw_rate = m.get(("siw", "bw", "send", 64), {}).get("mpps")
    rxe_kmsg, siw_kmsg = kmsg(m, "rxe"), kmsg(m, "siw")
    udp_lat = m.get(("tcp", "lat", "udp", 64), {}).get("typ")
    print("\nTargets (ratios in this run)")
    for s in ["sroce", "siwarp"]:
        if s not in systems:
            continue
        w64 = bw_point(m, s, "write", 65536)
        tcp64 = tcp_ref(m, s)
        lat = m.get((s, "lat", "send", 64), {}).get("typ")
        rate = m.get((s, "bw", "send", 64), {}).get("mpps")
        checks = [
            ("64 KiB WRITE / TCP >= 0.8", ratio(w64.get("mbs"), tcp64.get("mbs")), lambda r: r >= 0.8),
            ("64 B SEND latency / siw <= 0.5", ratio(lat, siw_lat), lambda r: r <= 0.5),
            ("64 B SEND rate / siw >= 3", ratio(rate, siw_rate), lambda r: r >= 3),
            ("CPU per GB / TCP <= 1", ratio(w64.get("cpu"), tcp64.get("cpu")), lambda r: r <= 1),
            ("kernel CPU per msg / rxe <= 0.5", ratio(kmsg(m, s), rxe_kmsg), lambda r: r <= 0.5),
            ("kernel CPU per msg / siw <= 0.5", ratio(kmsg(m, s), siw_kmsg), lambda r: r <= 0.5),
        ]
        for name, r, ok in checks:
            verdict = "n/a" if r is None else ("met" if ok(r) else "not met")
            print("  %-7s %-32s %8s  %s" % (s, name, fmt(r, "%.2f"), verdict))
        if udp_lat:
            print("  %-7s %-32s %8s  (for reference: the wire's floor)" %
                  (s, "64 B SEND latency / UDP", fmt(ratio(lat, udp_lat), "%.2f")))
        print("  %-7s %-32s %8s  (for reference: no user-space polling)" %
              (s, "kernel CPU per GB / TCP", fmt(ratio(w64.get("kcpu"), tcp64.get("kcpu")), "%.2f")))
        for peer in ["rxe", "siw"]:
            print("  %-7s %-32s %8s  (for reference: set-up left out)" %
                  (s, "kernel CPU per msg / " + peer,
                   fmt(ratio(alone.get(s), alone.get(peer)), "%.2f")))
        ev64 = bw_point(m, s, "send_ev", 65536)
        print("  %-7s %-32s %8s  (for reference: SEND, sleeping on events)" %
              (s, "CPU per GB / TCP, events", fmt(ratio(ev64.get("cpu"), tcp64.get("cpu")), "%.2f")))

    for op in ["write", "read", "send"]:
        plot(out, m, systems, sizes, op)
    print("\nCSV: %s/points.csv, %s/summary.csv; plots: %s/bandwidth-*.png" % (out, out, out))


def size_label(size):
    """64, 4K, 1M: gnuplot's own labels for 2^20 do not fit."""
    for unit, shift in (("M", 20), ("K", 10)):
        if size % (1 << shift) == 0:
            return "%d%s" % (size >> shift, unit)
    return "%d" % size


def plot(out, m, systems, sizes, op):
    lines = []
    for s in systems:
        path = os.path.join(out, "plot-%s-%s.dat" % (op, s))
        with open(path, "w") as f:
            for size in sizes:
                v = bw_point(m, s, op, size).get("mbs")
                if v is not None:
                    f.write("%d %f\n" % (size, v))
        lines.append("'%s' using 1:2 with linespoints title '%s'" % (path, s))
    script = "\n".join([
        "set terminal png size 900,600",
        "set output '%s'" % os.path.join(out, "bandwidth-%s.png" % op),
        "set title 'RDMA %s bandwidth, two VMs on one wire (TCG)'" % op.upper(),
        "set logscale x 2",
        "set xtics (%s)" % ", ".join('"%s" %d' % (size_label(z), z) for z in sizes),
        "set xlabel 'message size'",
        "set ylabel 'MB/s'",
        "set key top left",
        "set grid",
        "plot " + ", ".join(lines),
    ])
    subprocess.run(["gnuplot"], input=script.encode(), check=False)


if __name__ == "__main__":
    main()
