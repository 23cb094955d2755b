#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: two VMs on one virtual wire measure, in the same run, TCP
# (iperf3), srdma's sroce and siwarp, the distro's rdma_rxe and upstream siw
# (built from the distro's kernel source): RDMA WRITE/READ/SEND bandwidth
# over message sizes, SEND/WRITE latency (typical and 99th percentile) at
# 64 B and 4 KiB, busy-polling and (SEND) on completion events, 64 KiB SEND
# bandwidth on completion events, 64 B SEND message rate and its kernel CPU
# time per message, CPU time per GB on both hosts, and the wire's own round
# trip (sockperf UDP and TCP ping-pong). Each point runs BENCH_REPS times
# (median reported) under a hard timeout, after BENCH_WARMUP seconds (30)
# of unrecorded traffic per system. BENCH_MTU=N sets both hosts' eth0 to
# an MTU of N first (9000: RoCE's 4096-byte path MTU, as RoCE fabrics run;
# the default 1500 allows 1024), with its output in build/bench-mtuN/.
# VM_WIRE=tap runs on the TAP wire, whose NICs have scatter-gather,
# checksum offload and TSO (tools/vm/tap-wire.sh; root only), with its
# output in build/bench-tap/ (build/bench-mtuN-tap/). BENCH_OFFLOADS sets
# both guests' eth0 features first (ethtool -K eth0 BENCH_OFFLOADS: for
# instance "tx-udp-segmentation on" for UDP segmentation offload, which
# the TAP wire offers with qemu 10 and 6.12 guests: VM_QEMU, KVER, and
# SRDMA_KO and SIW_KO for modules built for that kernel). BENCH_TAG=NAME
# puts the output in build/bench-NAME/.
#
#   tools/bench.sh [-q]     -q: quick (4 sizes, 1 repetition)
#   tools/bench.sh --scale [-q]   the scale mode instead: 1 to 1,000
#                           connections per system (tools/bench-scale.sh)
#   tools/bench.sh --loopback [-q]   the loopback mode instead: one VM,
#                           each device to itself, 64 KiB WRITE against TCP
#                           (tools/bench-loopback.sh)
#
# Output in build/bench/: points.csv (every measurement), summary.csv
# (medians), bandwidth-{write,read,send}.png (bandwidth vs size, one line
# per system) and the table on the terminal with the ratios the
# performance targets name.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/lib.sh
. "$here/lib.sh"

if [ "${1:-}" = --scale ]; then
	shift
	exec "$here/bench-scale.sh" "$@"
fi
if [ "${1:-}" = --loopback ]; then
	shift
	exec "$here/bench-loopback.sh" "$@"
fi
quick=0
[ "${1:-}" = -q ] && quick=1
sizes=${BENCH_SIZES:-64 256 1024 4096 16384 65536 262144 1048576}
reps=${BENCH_REPS:-3}
if [ "$quick" = 1 ]; then
	sizes=${BENCH_SIZES:-64 4096 65536 1048576}
	reps=${BENCH_REPS:-1}
fi
systems=${BENCH_SYSTEMS:-tcp sroce siwarp rxe siw}
secs=${BENCH_SECS:-3}
warm=${BENCH_WARMUP:-30}
bench_mtu_out

command -v gnuplot > /dev/null || die "gnuplot missing; run 'make deps'"
ko=${SRDMA_KO:-$SRDMA_REPO/srdma.ko}
[ -r "$ko" ] || die "$ko missing; run 'make'"
[ -n "${SIW_KO:-}" ] || case " $systems " in *" siw "*) "$here/siw-peer.sh" > /dev/null ;; esac

npoints=$(($(echo "$sizes" | wc -w) * 3 + 4))
nsys=$(echo "$systems" | wc -w)
limit=$(((npoints * (secs * 6 + 40)) * reps * nsys + (warm * 6 + 40) * nsys + 300))
echo "==> bench: systems [$systems], sizes [$sizes], $reps repetition(s), ${secs}s per point, ${warm}s warm-up per system${mtu:+, MTU $mtu} (hard limit ${limit}s)"
vm=$SRDMA_REPO/build/vm/out/bench
rm -rf "$vm"
"$here/vm/run.sh" -n 2 -t "$limit" -N bench -s 1 \
	-e "BENCH_SYSTEMS=$systems" -e "BENCH_SIZES=$sizes" \
	-e "BENCH_REPS=$reps" -e "BENCH_SECS=$secs" -e "BENCH_WARMUP=$warm" -e "BENCH_MTU=$mtu" \
	-e "BENCH_OFFLOADS=${BENCH_OFFLOADS:-}" -e "SRDMA_KO=$ko" ${SIW_KO:+-e "SIW_KO=$SIW_KO"} \
	-- "$here/bench-guest.sh" > "$out/vm.log" 2>&1 &
vmpid=$!
bench_follow "$vmpid" "$vm"
wait "$vmpid" || echo "==> bench: a VM reported failure (see $out/vm.log); reporting what was measured"

[ -r "$vm/host1/points.csv" ] || die "no measurements (see $out/vm.log)"
cp "$vm/host1/points.csv" "$out/points.csv"
cat "$vm/host1/cpu.csv" "$vm/host2/cpu.csv" > "$out/cpu.csv"
/usr/bin/python3 "$here/bench_report.py" "$out" "$secs"
