#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where a system's kernel time goes (`make profile`): two VMs on one wire,
# a 64 KiB RDMA WRITE stream from host1 to host2 per system, and in its
# middle a function_graph trace of the system's entry points on both
# hosts, summed into call trees (tools/profile-guest.sh,
# tools/ftrace_graph_sum.py). Not a benchmark: the tracer slows what it
# traces, so compare shares within one tree, and systems within one run.
#
# Environment: PROFILE_SYSTEMS (sroce), PROFILE_SIZE (65536 B),
# PROFILE_VERB (write, or send for a SEND stream), PROFILE_SECS (2 s
# traced), PROFILE_WARMUP (20 s of stream first),
# PROFILE_DEPTH (3 levels from each entry point), PROFILE_MTU (the wire's
# MTU, as BENCH_MTU: 9000 for RoCE's 4096 path MTU), PROFILE_FUNCS_SROCE
# (and _SIWARP, _RXE, _SIW: the entry points, replacing the defaults in
# profile-guest.sh).
#
# Output: build/profile/host{1,2}-SYSTEM.txt, also on the terminal.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/lib.sh
. "$here/lib.sh"

systems=${PROFILE_SYSTEMS:-sroce}
warm=${PROFILE_WARMUP:-20}
secs=${PROFILE_SECS:-2}
out=$SRDMA_REPO/build/profile
mkdir -p "$out"
[ -r "$SRDMA_REPO/srdma.ko" ] || die "srdma.ko missing; run 'make'"
case ${PROFILE_VERB:-write} in write | send) ;; *) die "PROFILE_VERB: write or send, not $PROFILE_VERB" ;; esac
case " $systems " in *" siw "*) "$here/siw-peer.sh" > /dev/null ;; esac

env=()
for v in PROFILE_SIZE PROFILE_VERB PROFILE_DEPTH PROFILE_MTU PROFILE_FUNCS_SROCE PROFILE_FUNCS_SIWARP \
	PROFILE_FUNCS_RXE PROFILE_FUNCS_SIW; do
	[ -n "${!v:-}" ] && env+=(-e "$v=${!v}")
done
nsys=$(echo "$systems" | wc -w)
limit=$(((warm + secs + 150) * nsys + 300))
echo "==> profile: systems [$systems], ${secs}s traced ${warm}s into each stream${PROFILE_MTU:+, MTU $PROFILE_MTU} (hard limit ${limit}s)"
vm=$SRDMA_REPO/build/vm/out/profile
rm -rf "$vm"
rc=0
"$here/vm/run.sh" -n 2 -t "$limit" -N profile -s 1 \
	-e "PROFILE_SYSTEMS=$systems" -e "PROFILE_SECS=$secs" \
	-e "PROFILE_WARMUP=$warm" "${env[@]}" \
	-- "$here/profile-guest.sh" > "$out/vm.log" 2>&1 || rc=$?
for sys in $systems; do
	for h in 1 2; do
		f=$vm/host$h/profile-$sys.txt
		[ -r "$f" ] || { warn "no profile of $sys from host$h (see $out/vm.log)"; rc=1; continue; }
		cp "$f" "$out/host$h-$sys.txt"
		echo "==== host$h ($([ "$h" = 1 ] && echo sender || echo receiver)), $sys"
		cat "$f"
	done
done
exit "$rc"
