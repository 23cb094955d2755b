#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One side of `make bench` (tools/bench.sh), run in each of two VMs on one
# wire: host2 serves every point, host1 is the client and writes one CSV
# row per measurement to $VM_OUT/points.csv; both write their own CPU time
# per point to $VM_OUT/cpu.csv (busy, total and kernel jiffies). Both walk
# the same list in the same order; each point has its own port, so a
# failed point cannot pair the client with the next point's server.
#
# Environment (from bench.sh): BENCH_SYSTEMS, BENCH_SIZES, BENCH_REPS,
# BENCH_SECS (seconds per bandwidth point), BENCH_WARMUP (seconds),
# BENCH_MTU (eth0's MTU, if set).
set -uo pipefail
export PATH=$VM_REPO/tools/vm/bin:$PATH
export REPO=$VM_REPO
# shellcheck source=selftests/rdma_lib.sh
. "$VM_REPO/selftests/rdma_lib.sh"
# shellcheck source=tools/bench-guest-lib.sh
. "$VM_REPO/tools/bench-guest-lib.sh"

me=$VM_HOST
peer=192.0.2.12
addr=192.0.2.$((10 + me)) # this host
systems=${BENCH_SYSTEMS:-tcp sroce siwarp rxe siw}
sizes=${BENCH_SIZES:-64 256 1024 4096 16384 65536 262144 1048576}
reps=${BENCH_REPS:-3}
secs=${BENCH_SECS:-3}
warm=${BENCH_WARMUP:-30}
out=$VM_OUT/points.csv
cpu_out=$VM_OUT/cpu.csv
port=20000

log() { echo "bench[host$me]: $*" >&2; }

wire_mtu "${BENCH_MTU:-}" || { log "eth0 refused MTU $BENCH_MTU"; exit 1; }
wire_offloads "${BENCH_OFFLOADS:-}" >&2 || { log "eth0 refused features $BENCH_OFFLOADS"; exit 1; }

# run_point ID SERVER_CMD... -- CLIENT_CMD...: host2 runs the server, host1
# retries the client until the server answers; prints the client's output
# on host1. Both record their CPU time for the point.
run_point() {
	local id=$1 srv=() cli=() c0 c1 rc=1
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	c0=$(cpu_now)
	if [ "$me" = 2 ]; then
		timeout $((secs * 6 + 60)) "${srv[@]}" > /dev/null 2>&1
		rc=$?
	else
		# no longer than the server waits: past that nobody answers
		# (a dead wire would otherwise cost eleven minutes per point)
		local end=$((SECONDS + secs * 6 + 60))
		while [ "$SECONDS" -lt "$end" ]; do
			timeout $((secs * 6 + 40)) "${cli[@]}" > "$VM_OUT/last.out" 2>&1 && { rc=0; break; }
			cat "$VM_OUT/last.out" >> "$VM_OUT/failed.out"
			sleep 1
		done
		cat "$VM_OUT/last.out"
	fi
	c1=$(cpu_now)
	echo "$id,$me,$(echo "$c0 $c1" | awk '{ print $4 - $1, $5 - $2, $6 - $3 }' | tr ' ' ',')" >> "$cpu_out"
	return "$rc"
}

# For TCP, OP only names the row: "stream", or "ref-SYSTEM" for the run
# made next to that system's points. OP send_ev: SEND bandwidth with both
# sides sleeping on completion events (-e), like a consumer that does not
# spin. perftest has no duration mode with events, so it sends a count of
# messages, about $secs seconds' worth at 25 MB/s, and the row records the
# bytes moved.
bw_point() { # SYSTEM OP SIZE REP
	local sys=$1 op=$2 size=$3 rep=$4 id r mbs mpps verb=$2 len="-D $secs" bytes="" iters
	port=$((port + 1))
	if [ "$op" = send_ev ]; then
		iters=$(send_ev_iters "$secs" "$size" 25000000)
		verb=send len="-e -n $iters" bytes=$((iters * size))
	fi
	id=$sys/bw/$op/$size/$rep
	log "$id"
	if [ "$sys" = tcp ]; then
		# iperf3 -J exits 0 even when refused: the JSON says "error"
		# shellcheck disable=SC2016
		r=$(run_point "$id" iperf3 -s -1 -p "$port" -- \
			bash -c 'o=$(iperf3 "$@"); echo "$o"; ! grep -q "\"error\"" <<< "$o"' _ \
			-c "$peer" -p "$port" -t "$secs" -l "$size" -J)
		mbs=$(echo "$r" | /usr/bin/python3 -c 'import json,sys
try: print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e6))
except Exception: print("")')
		mpps=
	else
		# shellcheck disable=SC2046,SC2086 # $len is a list of options
		r=$(run_point "$id" "ib_${verb}_bw" -d dev0 $(conn_args "$sys" "$addr") -F $len -s "$size" -p "$port" -- \
			"ib_${verb}_bw" -d dev0 $(conn_args "$sys" "$addr") -F $len -s "$size" -p "$port" "$peer")
		read -r mbs mpps < <(echo "$r" | awk '/#bytes/ { getline; print $4, $5; exit }')
	fi
	[ "$me" = 1 ] && echo "$id,$sys,bw,$op,$size,$rep,${mbs:-},${mpps:-},,,$bytes" >> "$out"
}

# A fresh guest is slow for its first half minute of traffic (TCG, for
# one, translates code the first time it runs): back-to-back 8 s TCP runs
# in a new boot read 36, 33, 42, 45, then 44-54 MB/s. Move data for $warm
# seconds, unrecorded, before measuring a system.
warm_up() { # SYSTEM
	local sys=$1 secs=$warm	# run_point's timeouts follow secs
	port=$((port + 1))
	log "$sys/warm-up"
	if [ "$sys" = tcp ]; then
		run_point "$sys/warm-up" iperf3 -s -1 -p "$port" -- \
			iperf3 -c "$peer" -p "$port" -t "$secs" > /dev/null
	else
		# shellcheck disable=SC2046
		run_point "$sys/warm-up" ib_write_bw -d dev0 $(conn_args "$sys" "$addr") -F -D "$secs" -p "$port" -- \
			ib_write_bw -d dev0 $(conn_args "$sys" "$addr") -F -D "$secs" -p "$port" "$peer" > /dev/null
	fi
}

# OP send_ev: SEND latency with both sides sleeping on completion events
# (-e) instead of busy-polling the CQ.
lat_point() { # SYSTEM OP SIZE REP
	local sys=$1 op=$2 size=$3 rep=$4 id r typ p99 verb=$2 ev=
	port=$((port + 1))
	id=$sys/lat/$op/$size/$rep
	[ "$op" = send_ev ] && { verb=send; ev=-e; }
	log "$id"
	# shellcheck disable=SC2046
	r=$(run_point "$id" "ib_${verb}_lat" -d dev0 $(conn_args "$sys" "$addr") -F $ev -n 300 -s "$size" -p "$port" -- \
		"ib_${verb}_lat" -d dev0 $(conn_args "$sys" "$addr") -F $ev -n 300 -s "$size" -p "$port" "$peer")
	read -r typ p99 < <(echo "$r" | awk '/#bytes/ { getline; print $5, $8; exit }')
	[ "$me" = 1 ] && echo "$id,$sys,lat,$op,$size,$rep,,,${typ:-},${p99:-}," >> "$out"
}

# The wire's own round trip, as the kernel's sockets see it: sockperf
# ping-pong over UDP and over TCP (half the round trip, like perftest).
# sockperf exits 0 even when no server answered, so look for percentiles.
sock_lat_point() { # PROTO SIZE REP
	local proto=$1 size=$2 rep=$3 id r typ p99 flag=
	port=$((port + 1))
	id=tcp/lat/$proto/$size/$rep
	[ "$proto" = tcp ] && flag=--tcp
	log "$id"
	# shellcheck disable=SC2016
	r=$(run_point "$id" timeout $((secs + 10)) sockperf server $flag -i 0.0.0.0 -p "$port" -- \
		bash -c 'o=$(sockperf "$@" 2>&1); echo "$o"; grep -q "percentile 50.000" <<< "$o"' _ \
		ping-pong $flag -i "$peer" -p "$port" -m "$size" -t "$secs")
	typ=$(echo "$r" | awk '/percentile 50.000/ { print $NF; exit }')
	p99=$(echo "$r" | awk '/percentile 99.000/ { print $NF; exit }')
	[ "$me" = 1 ] && echo "$id,tcp,lat,$proto,$size,$rep,,,${typ:-},${p99:-}," >> "$out"
}

[ "$me" = 1 ] && echo "id,system,kind,op,size,rep,mbytes_per_s,mpps,lat_typical_us,lat_p99_us,bytes" > "$out"
: > "$cpu_out"
for sys in $systems; do
	log "system $sys"
	setup "$sys" || { log "setup of $sys failed"; continue; }
	warm_up "$sys"
	for rep in $(seq 1 "$reps"); do
		for size in $sizes; do
			if [ "$sys" = tcp ]; then
				bw_point tcp stream "$size" "$rep"
				continue
			fi
			# TCP next to the 64 KiB points, so that the ratios the
			# targets name compare runs made minutes apart at most
			[ "$size" = 65536 ] && bw_point tcp "ref-$sys" "$size" "$rep"
			for op in write read send; do
				bw_point "$sys" "$op" "$size" "$rep"
			done
			[ "$size" = 65536 ] && bw_point "$sys" send_ev "$size" "$rep"
		done
		if [ "$sys" = tcp ]; then
			for proto in udp tcp; do
				for size in 64 4096; do
					sock_lat_point "$proto" "$size" "$rep"
				done
			done
			continue
		fi
		for op in send write send_ev; do
			for size in 64 4096; do
				lat_point "$sys" "$op" "$size" "$rep"
			done
		done
	done
done
rdma_all_down dev0
exit 0
