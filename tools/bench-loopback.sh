#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The loopback mode of `make bench` (tools/bench.sh --loopback, or `make
# bench BENCH_ARGS=--loopback`): one VM, each system's device on eth0
# talking to itself, so that no wire is in the way and CPU is the only
# bound. 64 KiB RDMA WRITE bandwidth (ib_write_bw) for sroce, siwarp,
# rdma_rxe and siw, and 64 KiB SEND bandwidth with both sides sleeping on
# completion events (ib_send_bw -e), against TCP (iperf3) between the
# same address and itself, with TCP's point run again next to each
# system's, and the CPU time per GB of each
# (tools/bench-loopback-guest.sh). Each point runs
# BENCH_REPS times (median reported) under a hard timeout. Then, per RDMA
# system, the work per message counted: the driver's counters and TCP's
# segments around BENCH_COUNT_MSGS (1000) 64 KiB WRITEs.
#
#   tools/bench-loopback.sh [-q]    -q: quick (1 repetition)
#
# Environment: BENCH_SYSTEMS (tcp sroce siwarp rxe siw), BENCH_REPS (3),
# BENCH_LOOPBACK_OPS (write send_ev: the RDMA points, busy-polling WRITE
# and SEND with both sides sleeping on events), BENCH_SECS (3 s per
# point), BENCH_WARMUP (30 s of unrecorded traffic per system),
# BENCH_LOOPBACK_SIZES (65536), BENCH_LOOPBACK_RPS (a CPU mask for lo's
# receive packet steering; unset: off, lo's receive side runs on the
# sending CPU), BENCH_SMP (the VM's vCPUs, 2: server and client each
# busy-poll one), BENCH_LIMIT (the VM's hard time limit, seconds),
# BENCH_COUNT_MSGS (1000), BENCH_MTU (eth0's MTU, as in the two-VM bench:
# 9000 gives RoCE's 4096-byte path MTU; output then in build/bench-mtuN/).
#
# Output in build/bench/: loopback.csv (every measurement, the columns of
# points.csv), loopback-cpu.csv, loopback-summary.csv (medians),
# loopback-counts.csv (counter differences) and the tables on the
# terminal: the ratios the targets name, and the counts per message.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/lib.sh
. "$here/lib.sh"

reps=${BENCH_REPS:-3}
[ "${1:-}" = -q ] && reps=${BENCH_REPS:-1}
systems=${BENCH_SYSTEMS:-tcp sroce siwarp rxe siw}
sizes=${BENCH_LOOPBACK_SIZES:-65536}
ops=${BENCH_LOOPBACK_OPS:-write send_ev}
for op in $ops; do
	case $op in write | send_ev) ;; *) die "BENCH_LOOPBACK_OPS: write or send_ev, not $op" ;; esac
done
secs=${BENCH_SECS:-3}
warm=${BENCH_WARMUP:-30}
smp=${BENCH_SMP:-2}
count=${BENCH_COUNT_MSGS:-1000}
bench_mtu_out

[ -r "$SRDMA_REPO/srdma.ko" ] || die "srdma.ko missing; run 'make'"
case " $systems " in *" siw "*) "$here/siw-peer.sh" > /dev/null ;; esac

# per system: the warm-up, then per repetition and size TCP's point and
# one per op (TCP alone has one) and the counted run, each at most one
# attempt's timeout (bench-loopback-guest.sh lo_point) plus set-up
nsys=$(echo "$systems" | wc -w)
nsizes=$(echo "$sizes" | wc -w)
nops=$(echo "$ops" | wc -w)
limit=${BENCH_LIMIT:-$(((warm * 6 + 100) * nsys + (secs * 6 + 100) * ((1 + nops) * nsizes * reps + 1) * nsys + 300))}
echo "==> bench --loopback: systems [$systems], sizes [$sizes], ops [$ops], $reps repetition(s), ${secs}s per point, ${warm}s warm-up per system, one VM of $smp vCPUs${mtu:+, MTU $mtu}${BENCH_LOOPBACK_RPS:+, RPS on lo to CPUs $BENCH_LOOPBACK_RPS} (hard limit ${limit}s)"
vm=$SRDMA_REPO/build/vm/out/bench-loopback
rm -rf "$vm"
"$here/vm/run.sh" -n 1 -t "$limit" -N bench-loopback -s "$smp" \
	-e "BENCH_SYSTEMS=$systems" -e "BENCH_SIZES=$sizes" \
	-e "BENCH_REPS=$reps" -e "BENCH_SECS=$secs" -e "BENCH_WARMUP=$warm" \
	-e "BENCH_COUNT_MSGS=$count" -e "BENCH_MTU=$mtu" -e "BENCH_LOOPBACK_OPS=$ops" \
	-e "BENCH_LOOPBACK_RPS=${BENCH_LOOPBACK_RPS:-}" \
	-- "$here/bench-loopback-guest.sh" > "$out/loopback-vm.log" 2>&1 &
vmpid=$!
bench_follow "$vmpid" "$vm"
wait "$vmpid" || echo "==> bench --loopback: the VM reported failure (see $out/loopback-vm.log); reporting what was measured"

[ -r "$vm/host1/loopback.csv" ] || die "no measurements (see $out/loopback-vm.log)"
cp "$vm/host1/loopback.csv" "$vm/host1/loopback-cpu.csv" "$out/"
rm -f "$out/loopback-counts.csv"
[ -r "$vm/host1/loopback-counts.csv" ] && cp "$vm/host1/loopback-counts.csv" "$out/"
/usr/bin/python3 "$here/bench_loopback_report.py" "$out" "$secs"
