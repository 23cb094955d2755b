#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The scale mode of `make bench` (tools/bench.sh --scale, or `make bench
# BENCH_ARGS=--scale`): two VMs on one wire, and for sroce, siwarp,
# rdma_rxe and siw, N = 1, 10, 100 and 1000 RC connections through
# rdma_cm (tools/bench-scale.c, run by tools/bench-scale-guest.sh):
# set-up rate, aggregate 4 KiB RDMA WRITE bandwidth with every QP busy,
# teardown time with nothing left in `rdma res`, and kernel memory per
# idle connected QP. Each point runs BENCH_REPS times (median reported).
#
#   tools/bench-scale.sh [-q]    -q: quick (N = 1, 100, 1000; 1 repetition)
#
# Environment: BENCH_SYSTEMS (sroce siwarp rxe siw), BENCH_SCALE_NS
# (1 10 100 1000), BENCH_REPS (3), BENCH_SECS (10 s of traffic per point),
# BENCH_WARMUP (30 s of traffic per system, unrecorded),
# BENCH_SCALE_INFLIGHT (32 connections in set-up at once),
# BENCH_SCALE_DEPTH (8 WRITEs outstanding per QP), BENCH_SCALE_SQ (16 send
# WRs per QP), BENCH_LIMIT (the VMs' hard time limit, seconds).
#
# Output in build/bench/: scale.csv (every point, client and server side),
# scale-summary.csv (medians), scale-{bandwidth,memory,setup}.png (against
# N, one line per system) and a table on the terminal.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/lib.sh
. "$here/lib.sh"

ns=${BENCH_SCALE_NS:-1 10 100 1000}
reps=${BENCH_REPS:-3}
if [ "${1:-}" = -q ]; then
	ns=${BENCH_SCALE_NS:-1 100 1000}
	reps=${BENCH_REPS:-1}
fi
systems=${BENCH_SYSTEMS:-sroce siwarp rxe siw}
secs=${BENCH_SECS:-10}
warm=${BENCH_WARMUP:-30}
out=$SRDMA_REPO/build/bench
mkdir -p "$out"

command -v gnuplot > /dev/null || die "gnuplot missing; run 'make deps'"
[ -r "$SRDMA_REPO/srdma.ko" ] || die "srdma.ko missing; run 'make'"
case " $systems " in *" siw "*) "$here/siw-peer.sh" > /dev/null ;; esac
# the guests run the host's userland, so the host builds the program
${CC:-cc} -O2 -g -Wall -Wextra -Werror -o "$out/bench-scale" "$here/bench-scale.c" \
	-lrdmacm -libverbs || die "bench-scale.c does not build (libibverbs-dev, librdmacm-dev: 'make deps')"

# the guest's limit per point (bench-scale-guest.sh point_limit), summed
per_sys=$((90 + secs + 10 / 4 + warm))
for n in $ns; do
	per_sys=$((per_sys + (90 + secs + n / 4) * reps))
done
nsys=$(echo "$systems" | wc -w)
limit=${BENCH_LIMIT:-$((per_sys * nsys + 300))}
echo "==> bench --scale: systems [$systems], N [$ns], $reps repetition(s), ${secs}s of traffic per point, ${warm}s warm-up per system (hard limit ${limit}s)"
vm=$SRDMA_REPO/build/vm/out/bench-scale
rm -rf "$vm"
"$here/vm/run.sh" -n 2 -t "$limit" -N bench-scale -s 1 \
	-e "BENCH_SYSTEMS=$systems" -e "BENCH_SCALE_NS=$ns" \
	-e "BENCH_REPS=$reps" -e "BENCH_SECS=$secs" -e "BENCH_WARMUP=$warm" \
	-e "BENCH_SCALE_INFLIGHT=${BENCH_SCALE_INFLIGHT:-32}" \
	-e "BENCH_SCALE_DEPTH=${BENCH_SCALE_DEPTH:-8}" \
	-e "BENCH_SCALE_SQ=${BENCH_SCALE_SQ:-16}" \
	-- "$here/bench-scale-guest.sh" > "$out/scale-vm.log" 2>&1 &
vmpid=$!
bench_follow "$vmpid" "$vm"
wait "$vmpid" || echo "==> bench --scale: a VM reported failure (see $out/scale-vm.log); reporting what was measured"

[ -r "$vm/host1/scale.csv" ] || die "no measurements (see $out/scale-vm.log)"
/usr/bin/python3 "$here/bench_scale_report.py" "$out" "$vm/host1/scale.csv" \
	"$vm/host2/scale-server.csv"
