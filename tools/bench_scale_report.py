#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise a `make bench BENCH_ARGS=--scale` run: join the client's and
the server's rows per point into scale.csv, medians per system and number
of connections into scale-summary.csv, the table with the ratios the scale
target names, and plots of aggregate bandwidth, kernel memory per QP and
set-up rate against the number of connections (gnuplot).

  bench_scale_report.py OUT_DIR CLIENT_CSV SERVER_CSV
"""
import csv
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_report import fmt, median, num, ratio  # noqa: E402

ORDER = ["sroce", "siwarp", "rxe", "siw"]
# memory per QP below this many connections is the noise of one sample
MEM_MIN_N = 100
REFS = {"sroce": ["rxe", "siw"], "siwarp": ["siw", "rxe"]}


def load(client_csv, server_csv):
    """One row per point: the client's columns, the server's as srv_*, and
    ok: both sides exited 0 and left nothing in `rdma res`."""
    srv = {r["id"]: r for r in csv.DictReader(open(server_csv))} \
        if os.path.exists(server_csv) else {}
    rows = []
    for c in csv.DictReader(open(client_csv)):
        s = srv.get(c["id"], {})
        row = dict(c)
        for k, v in s.items():
            if k not in ("id", "system", "n", "rep"):
                row["srv_" + k] = v
        row["ok"] = int(c["rc"] == "0" and c["res_clean"] == "1" and
                        s.get("rc") == "0" and s.get("res_clean") == "1")
        rows.append(row)
    return rows


def kmem_host(r, field):
    """Per QP per host: the mean of the client's and the server's figure."""
    a, b = num(r.get(field)), num(r.get("srv_" + field))
    return (a + b) / 2 if a is not None and b is not None else None


def summarise(rows):
    groups = {}
    for r in rows:
        g = groups.setdefault((r["system"], int(r["n"])), {
            "points": 0, "ok": 0, "setup_cps": [], "srv_setup_cps": [],
            "bw": [], "fair": [], "teardown": [], "srv_teardown": [],
            "kmem": [], "kmem_cli": [], "kmem_srv": [], "slab": [],
            "refused": []})
        g["points"] += 1
        if not r["ok"]:
            continue
        g["ok"] += 1
        g["setup_cps"].append(num(r.get("setup_cps")))
        g["srv_setup_cps"].append(num(r.get("srv_setup_cps")))
        g["bw"].append(num(r.get("bw_MBps")))
        lo, hi = num(r.get("min_qp_writes")), num(r.get("max_qp_writes"))
        g["fair"].append(lo / hi if lo is not None and hi else None)
        g["teardown"].append(num(r.get("teardown_s")))
        g["srv_teardown"].append(num(r.get("srv_teardown_s")))
        g["kmem"].append(kmem_host(r, "kmem_per_qp"))
        g["kmem_cli"].append(num(r.get("kmem_per_qp")))
        g["kmem_srv"].append(num(r.get("srv_kmem_per_qp")))
        g["slab"].append(kmem_host(r, "slab_per_qp"))
        g["refused"].append(num(r.get("srv_iwarp_setup_refused")))
    out = {}
    for k, g in groups.items():
        out[k] = {f: (median(v) if isinstance(v, list) else v) for f, v in g.items()}
    return out


def kib(v):
    return v / 1024 if v is not None else None


def main():
    out, client_csv, server_csv = sys.argv[1:4]
    rows = load(client_csv, server_csv)
    if not rows:
        sys.exit("no points in %s" % client_csv)
    cols = list(rows[0].keys())
    for r in rows:
        cols += [k for k in r if k not in cols]
    with open(os.path.join(out, "scale.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    m = summarise(rows)
    systems = [s for s in ORDER if any(k[0] == s for k in m)]
    ns = sorted({k[1] for k in m})
    fields = ["points", "ok", "setup_cps", "srv_setup_cps", "bw", "fair",
              "teardown", "srv_teardown", "kmem", "kmem_cli", "kmem_srv",
              "slab", "refused"]
    with open(os.path.join(out, "scale-summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "n"] + fields)
        for k in sorted(m):
            w.writerow(list(k) + [m[k][x] for x in fields])

    print("\nScale: N RC connections through rdma_cm, two VMs (medians of the"
          " points where both sides succeeded and `rdma res` was clean; fair:"
          " fewest WRITEs of one QP / most; kmem: kernel memory per idle QP and"
          " host, user rings excluded, noise below N=%d)" % MEM_MIN_N)
    print("%-7s %5s %6s %9s %8s %7s %6s %10s %9s %13s %9s" % (
        "system", "N", "ok", "set-up/s", "MB/s", "vs N=1", "fair",
        "teardown s", "kmem KiB", "client/server", "slab KiB"))
    for s in systems:
        one = m.get((s, 1), {}).get("bw")
        for n in ns:
            v = m.get((s, n))
            if not v:
                continue
            print("%-7s %5d %6s %9s %8s %7s %6s %10s %9s %13s %9s" % (
                s, n, "%d/%d" % (v["ok"], v["points"]), fmt(v["setup_cps"]),
                fmt(v["bw"]), fmt(ratio(v["bw"], one), "%.2f"),
                fmt(v["fair"], "%.2f"), fmt(v["teardown"], "%.2f"),
                fmt(kib(v["kmem"])), "%s/%s" % (fmt(kib(v["kmem_cli"])),
                                                fmt(kib(v["kmem_srv"]))),
                fmt(kib(v["slab"]))))
    refused = [(k, v["refused"]) for k, v in m.items()
               if k[0] == "siwarp" and v["refused"] is not None]
    if refused:
        print("siwarp listener refused connections (half-open cap): " + ", ".join(
            "N=%d: %d" % (k[1], r) for k, r in sorted(refused)))

    top = max(ns)
    print("\nScale targets at N=%d (ratios in this run)" % top)
    for s in ["sroce", "siwarp"]:
        if s not in systems:
            continue
        v, one = m.get((s, top), {}), m.get((s, 1), {})
        r = ratio(v.get("bw"), one.get("bw"))
        k = kib(v.get("kmem"))
        for name, val, ok in [
                ("aggregate WRITE / single QP >= 0.8", r, lambda x: x >= 0.8),
                ("kernel KiB per idle QP <= 16", k, lambda x: x <= 16)]:
            verdict = "n/a" if val is None else ("met" if ok(val) else "not met")
            print("  %-7s %-36s %8s  %s" % (s, name, fmt(val, "%.2f"), verdict))
        for ref in REFS[s]:
            rv = m.get((ref, top), {})
            print("  %-7s %-36s %8s  (set-up rate), %s (teardown time), %s (kernel memory)" % (
                s, "/ " + ref, fmt(ratio(v.get("setup_cps"), rv.get("setup_cps")), "%.2f"),
                fmt(ratio(v.get("teardown"), rv.get("teardown")), "%.2f"),
                fmt(ratio(v.get("kmem"), rv.get("kmem")), "%.2f")))

    plot(out, m, systems, ns, "bw", "scale-bandwidth",
         "Aggregate 4 KiB RDMA WRITE bandwidth, every QP busy", "MB/s", 1)
    plot(out, m, systems, [n for n in ns if n >= MEM_MIN_N] or ns, "kmem",
         "scale-memory",
         "Kernel memory per idle connected QP (per host, user rings excluded)",
         "KiB per QP", 1 / 1024)
    plot(out, m, systems, ns, "setup_cps", "scale-setup",
         "Connection set-up rate through rdma_cm", "connections/s", 1)
    print("\nCSV: %s/scale.csv, %s/scale-summary.csv; plots: %s/scale-*.png" %
          (out, out, out))


def plot(out, m, systems, ns, field, name, title, ylabel, scale):
    lines = []
    for s in systems:
        path = os.path.join(out, "plot-%s-%s.dat" % (name, s))
        with open(path, "w") as f:
            for n in ns:
                v = m.get((s, n), {}).get(field)
                if v is not None:
                    f.write("%d %f\n" % (n, v * scale))
        lines.append("'%s' using 1:2 with linespoints title '%s'" % (path, s))
    script = "\n".join([
        "set terminal png size 900,600",
        "set output '%s'" % os.path.join(out, name + ".png"),
        "set title '%s, two VMs (TCG)'" % title,
        "set logscale x 10",
        "set xtics (%s)" % ", ".join('"%d" %d' % (n, n) for n in ns),
        "set xlabel 'connections (RC QPs)'",
        "set ylabel '%s'" % ylabel,
        "set yrange [0:*]",
        "set key top right",
        "set grid",
        "plot " + ", ".join(lines),
    ])
    subprocess.run(["gnuplot"], input=script.encode(), check=False)


if __name__ == "__main__":
    main()
