#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise the loopback mode of `make bench` (one VM, each device to
itself): medians of the RDMA WRITE bandwidth (busy-polling), of the SEND
bandwidth with both sides sleeping on events, and of TCP's, CPU time per
GB, loopback-summary.csv and the table with the ratios the targets name.

  bench_loopback_report.py OUT_DIR SECONDS_PER_POINT

OUT_DIR holds loopback.csv and loopback-cpu.csv, in the columns of
points.csv and cpu.csv (tools/bench_report.py reads them), and
loopback-counts.csv, the counters around a counted run per system, of
which the table of counts per message is made.
"""
import csv
import os
import sys

from bench_report import ORDER, fmt, load, ratio

OPS = ["write", "send_ev"]


def point(m, s, size, op="write"):
    """System s's medians of op ("write", or "send_ev": SEND sleeping on
    events) at size; TCP's own stream for "tcp"."""
    return m.get((s, "bw", "stream" if s == "tcp" else op, size), {})


def tcp_ref(m, s, size):
    """TCP's medians from the runs next to system s's points, or TCP's own
    block when there are none."""
    return m.get(("tcp", "bw", "ref-" + s, size)) or point(m, "tcp", size)


# Counters worth a line per message, where a system has them: srdma's
# (packets out, ACKs, payloads in pages, GSO trains, how siwarp's bytes
# went to TCP),
# rdma_rxe's, TCP's.
COUNTS = [
    ("tx_packets", "packets or FPDUs out, ACKs included"),
    ("ack_sent", "ACKs sent"),
    ("retransmits", "packets resent"),
    ("tx_paged", "packets sent from the user's pages"),
    ("tx_trains", "GSO trains sent"),
    ("tx_train_packets", "packets sent in them"),
    ("rx_paged", "packets placed from their pages"),
    ("iwarp_tx_spliced_bytes", "bytes to TCP by page reference"),
    ("iwarp_tx_copied_bytes", "bytes to TCP by copy"),
    ("sent_pkts", "packets out, ACKs included (rdma_rxe)"),
    ("ack_deferred", "ACKs deferred (rdma_rxe)"),
    ("tcp_out_segs", "TCP segments out, ACKs included"),
]


def counts(out):
    """{system: (messages, {counter: difference})} from loopback-counts.csv."""
    path = os.path.join(out, "loopback-counts.csv")
    res = {}
    if not os.path.exists(path):
        return res
    for row in csv.DictReader(open(path)):
        msgs, diffs = res.setdefault(row["system"], (int(row["messages"]), {}))
        diffs[row["counter"]] = int(row["difference"])
    return res


def print_counts(out):
    c = counts(out)
    if not c:
        return
    print("\nWork per 64 KiB WRITE, counted: the differences over one run of a"
          " fixed number\nof messages, per message (both ends are this VM:"
          " each packet counts out once)")
    for s in [s for s in ORDER if s in c]:
        msgs, diffs = c[s]
        for name, what in COUNTS:
            # one module counts for both transports: a zero is the other
            # transport's counter, except for resends, whose zero is news
            if diffs.get(name) or (name == "retransmits" and name in diffs):
                print("  %-9s %-24s %10.2f  %s" % (s, name, diffs[name] / msgs, what))


def verdict(r, ok):
    return "n/a" if r is None else ("met" if ok(r) else "not met")


def main():
    out, secs = sys.argv[1], float(sys.argv[2])
    m = load(out, secs, "loopback.csv", "loopback-cpu.csv")
    systems = [s for s in ORDER if any(k[0] == s for k in m)]
    sizes = sorted({k[3] for k in m if k[1] == "bw"})

    rows = []
    for op in OPS:
        for size in sizes:
            for s in systems:
                v, ref = point(m, s, size, op), tcp_ref(m, s, size)
                if s == "tcp":
                    if op != "write":
                        continue
                    ref = {}
                elif not v:
                    continue
                rows.append((s, "stream" if s == "tcp" else op, size, v.get("mbs"),
                             ref.get("mbs"), ratio(v.get("mbs"), ref.get("mbs")),
                             v.get("cpu"), v.get("kcpu")))
    with open(os.path.join(out, "loopback-summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "op", "size", "mbytes_per_s", "tcp_ref_mbytes_per_s",
                    "ratio_to_tcp", "cpu_s_per_gb", "kernel_cpu_s_per_gb"])
        w.writerows(rows)

    print("\nLoopback: one VM, each device on eth0 to itself (TCP: iperf3, the"
          " address to itself over lo);\nwrite: RDMA WRITE (ib_write_bw), busy-polling;"
          " send_ev: SEND (ib_send_bw -e),\nboth sides sleeping on completion events;"
          " medians")
    print("%-9s %-8s %8s %10s %10s %8s %10s %10s" % (
        "system", "op", "size", "MB/s", "TCP MB/s", "/ TCP", "CPU s/GB", "kern s/GB"))
    for s, op, size, mbs, ref, r, cpu, kcpu in rows:
        print("%-9s %-8s %8d %10s %10s %8s %10s %10s" % (
            s, op, size, fmt(mbs), fmt(ref), fmt(r, "%.2f"),
            fmt(cpu, "%.2f"), fmt(kcpu, "%.2f")))

    if 65536 in sizes:
        w64 = {s: point(m, s, 65536).get("mbs") for s in systems}
        print("\nTargets, loopback (ratios in this run)")
        for s in ["sroce", "siwarp"]:
            if s not in systems:
                continue
            checks = [
                ("64 KiB WRITE / TCP >= 0.8",
                 ratio(w64[s], tcp_ref(m, s, 65536).get("mbs")), lambda r: r >= 0.8),
                ("64 KiB WRITE / rxe > 1", ratio(w64[s], w64.get("rxe")), lambda r: r > 1),
                ("64 KiB WRITE / siw > 1", ratio(w64[s], w64.get("siw")), lambda r: r > 1),
            ]
            for name, r, ok in checks:
                print("  %-7s %-32s %8s  %s" % (s, name, fmt(r, "%.2f"), verdict(r, ok)))
            print("  %-7s %-32s %8s  (for reference)" % (
                s, "kernel CPU per GB / TCP",
                fmt(ratio(point(m, s, 65536).get("kcpu"),
                          tcp_ref(m, s, 65536).get("kcpu")), "%.2f")))
            print("  %-7s %-32s %8s  (for reference)" % (
                s, "64 KiB SEND, events / TCP",
                fmt(ratio(point(m, s, 65536, "send_ev").get("mbs"),
                          tcp_ref(m, s, 65536).get("mbs")), "%.2f")))
    print_counts(out)
    print("\nCSV: %s/loopback.csv, %s/loopback-summary.csv,"
          " %s/loopback-counts.csv" % (out, out, out))


if __name__ == "__main__":
    main()
