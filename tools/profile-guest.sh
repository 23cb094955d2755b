#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One side of tools/profile.sh, run in each of two VMs on one wire: per
# system, host2 serves an ib_write_bw (or ib_send_bw) stream and host1
# sends it; in the middle of the stream both trace the system's entry
# points with the function_graph tracer for PROFILE_SECS and sum the
# trace into a call tree (tools/ftrace_graph_sum.py):
# $VM_OUT/profile-SYSTEM.txt, the tracer's overruns above the tree and
# (host1) the stream's bandwidth below it; the raw trace stays beside it,
# trace-SYSTEM.txt.
#
# Environment (from profile.sh): PROFILE_SYSTEMS, PROFILE_SIZE,
# PROFILE_SECS, PROFILE_WARMUP, PROFILE_DEPTH, PROFILE_MTU, PROFILE_VERB,
# PROFILE_FUNCS_<SYSTEM>.
set -uo pipefail
export PATH=$VM_REPO/tools/vm/bin:$PATH
export REPO=$VM_REPO
# shellcheck source=selftests/rdma_lib.sh
. "$VM_REPO/selftests/rdma_lib.sh"
# shellcheck source=tools/bench-guest-lib.sh
. "$VM_REPO/tools/bench-guest-lib.sh"

me=$VM_HOST
addr=192.0.2.$((10 + me))
systems=${PROFILE_SYSTEMS:-sroce}
size=${PROFILE_SIZE:-65536}
verb=${PROFILE_VERB:-write}
secs=${PROFILE_SECS:-2}
warm=${PROFILE_WARMUP:-20}
depth=${PROFILE_DEPTH:-3}
tr=/sys/kernel/tracing
port=21000
traced=()

log() { echo "profile[host$me]: $*" >&2; }
wire_mtu "${PROFILE_MTU:-}" || { log "eth0 refused MTU $PROFILE_MTU"; exit 1; }

# Where each system's per-packet work starts: building and sending a
# packet (or a run of FPDUs), and the receive handler (data on host2,
# ACKs on host1).
default_funcs() { # SYSTEM
	case $1 in
	sroce) echo "roce_send_psn srdma_roce_rcv" ;;
	siwarp) echo "iwarp_tx_work iwarp_tx_run iwarp_rx_data_ready" ;;
	rxe) echo "rxe_requester rxe_responder rxe_completer rxe_udp_encap_recv" ;;
	siw) echo "siw_qp_sq_process siw_qp_llp_data_ready" ;;
	esac
}

# trace_setup SYSTEM: the tracer in place, off. Switching function_graph
# on patches every function in the kernel, which stalls an emulated guest
# for long enough that a peer's requester runs out of retries: it is done
# before the stream, and the window only turns tracing on and off.
trace_setup() {
	local sys=$1 var funcs f
	var=PROFILE_FUNCS_${sys^^}
	funcs=${!var:-$(default_funcs "$sys")}
	traced=()
	echo 0 > "$tr/tracing_on"
	echo nop > "$tr/current_tracer"
	: > "$tr/set_graph_function"
	# names this kernel and module know (a static one may be inlined)
	for f in $funcs; do
		echo "$f" >> "$tr/set_graph_function" 2> /dev/null && traced+=("$f")
	done
	[ "${#traced[@]}" -gt 0 ] || { log "$sys: none of [$funcs] traceable"; return 1; }
	echo "$depth" > "$tr/max_graph_depth"
	echo 16384 > "$tr/buffer_size_kb"
	echo 1 > "$tr/options/funcgraph-tail"
	echo 0 > "$tr/options/funcgraph-irqs"
	echo function_graph > "$tr/current_tracer"
	: > "$tr/trace"
}

# trace_window: once the stream has settled, trace for $secs
trace_window() {
	sleep "$warm"
	echo 1 > "$tr/tracing_on"
	sleep "$secs"
	echo 0 > "$tr/tracing_on"
}

# trace_sum SYSTEM: the trace as a call tree, the tracer off again
trace_sum() {
	local sys=$1 raw=$VM_OUT/trace-$1.txt
	cat "$tr/trace" > "$raw"
	echo nop > "$tr/current_tracer"
	{
		echo "host$me, $sys: ${traced[*]} traced ${secs}s at depth $depth, ${warm}s into a $size B ${verb^^} stream"
		grep -m1 'entries-in-buffer' "$raw" || true
		grep -h 'overrun' "$tr/per_cpu/cpu"*/stats 2> /dev/null | paste -sd ' '
		/usr/bin/python3 "$VM_REPO/tools/ftrace_graph_sum.py" "$raw"
	} > "$VM_OUT/profile-$sys.txt" 2>&1
}

[ -d "$tr/options" ] || mount -t tracefs nodev "$tr" || { log "no tracefs"; exit 1; }
dur=$((warm + secs + 10))
rc=0
for sys in $systems; do
	port=$((port + 1))
	setup "$sys" || { log "setup of $sys failed"; rc=1; continue; }
	trace_setup "$sys" || { rc=1; continue; }
	# the tracer's switch-in takes each guest its own time: start the
	# stream and the clock to the window together
	tcp_barrier || log "$sys: the peer did not come"
	log "$sys: ${dur}s stream, tracing from ${warm}s"
	trace_window &
	tpid=$!
	# shellcheck disable=SC2046 # conn_args is a list of options
	if [ "$me" = 2 ]; then
		timeout $((dur + 60)) ib_${verb}_bw -d dev0 $(conn_args "$sys" "$addr") -F -D "$dur" -s "$size" -p "$port" > "$VM_OUT/server-$sys.out" 2>&1 || rc=1
	else
		end=$((SECONDS + 60))
		while ! timeout $((dur + 40)) ib_${verb}_bw -d dev0 $(conn_args "$sys" "$addr") -F -D "$dur" -s "$size" -p "$port" 192.0.2.12 > "$VM_OUT/last.out" 2>&1; do
			{ echo "==== $sys, at ${SECONDS}s"; cat "$VM_OUT/last.out"; } >> "$VM_OUT/failed.out"
			[ "$SECONDS" -lt "$end" ] || { rc=1; break; }
			sleep 1
		done
	fi
	wait "$tpid" || rc=1
	trace_sum "$sys"
	if [ "$me" = 1 ]; then
		awk '/#bytes/ { getline; s = $4 } END { print "the stream: " (s == "" ? "failed" : s " MB/s") }' \
			"$VM_OUT/last.out" >> "$VM_OUT/profile-$sys.txt"
	fi
	# what the stream cost besides the traced calls: resends, drops
	echo "counters, whole stream: $(hw_counters_nonzero dev0)" >> "$VM_OUT/profile-$sys.txt"
	rdma_all_down dev0
done
exit "$rc"
