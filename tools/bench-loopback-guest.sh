#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The loopback mode of `make bench` (tools/bench-loopback.sh), run in one
# VM: each system's device sits on eth0 and talks to itself, server and
# client in this VM, the client dialling eth0's own address. The traffic
# never leaves the kernel: a packet to one's own address takes the
# loopback route (lo), so TCP, siwarp's and siw's kernel TCP connections
# and sroce's UDP packets go through lo; rdma_rxe hands a packet for its
# own MAC straight to its receive path. Each point measures 64 KiB RDMA
# WRITE bandwidth (ib_write_bw), SEND bandwidth sleeping on events
# (ib_send_bw -e) or, for TCP, iperf3 between the same address and
# itself, and the CPU time of the whole VM for it (server and client
# together). Rows and columns are those of tools/bench-guest.sh:
# $VM_OUT/loopback.csv as points.csv, $VM_OUT/loopback-cpu.csv as cpu.csv.
#
# After each RDMA system's points, one run of BENCH_COUNT_MSGS (1000)
# 64 KiB WRITEs with the driver's and TCP's counters read around it:
# $VM_OUT/loopback-counts.csv.
#
# Environment (from bench-loopback.sh): BENCH_SYSTEMS, BENCH_SIZES,
# BENCH_LOOPBACK_OPS, BENCH_LOOPBACK_RPS, BENCH_REPS, BENCH_SECS (seconds
# per point), BENCH_WARMUP (seconds), BENCH_COUNT_MSGS, BENCH_MTU (eth0's
# MTU, if set: the RoCE path MTU of the port follows it; lo's stays).
set -uo pipefail
export PATH=$VM_REPO/tools/vm/bin:$PATH
export REPO=$VM_REPO
# shellcheck source=selftests/rdma_lib.sh
. "$VM_REPO/selftests/rdma_lib.sh"
# shellcheck source=tools/bench-guest-lib.sh
. "$VM_REPO/tools/bench-guest-lib.sh"

addr=${VM_IP4:-192.0.2.11}
systems=${BENCH_SYSTEMS:-tcp sroce siwarp rxe siw}
sizes=${BENCH_SIZES:-65536}
reps=${BENCH_REPS:-3}
secs=${BENCH_SECS:-3}
warm=${BENCH_WARMUP:-30}
out=$VM_OUT/loopback.csv
cpu_out=$VM_OUT/loopback-cpu.csv
counts_out=$VM_OUT/loopback-counts.csv
count=${BENCH_COUNT_MSGS:-1000}
ops=${BENCH_LOOPBACK_OPS:-write send_ev}
port=20000

log() { echo "bench[host$VM_HOST]: $*" >&2; }

# a TCP listener on PORT: iperf3's, perftest's control connection (-x),
# or the kernel socket an iWARP rdma_cm listener (-R) puts under it
listening() { # PORT
	timeout 5 ss -Hltn "sport = :$1" 2> /dev/null | grep -q . ||
		timeout 5 rdma res show cm_id 2> /dev/null | grep 'LISTEN' | grep -q ":$1\\b"
}

wait_listen() { # PORT SECS PID
	local end=$((SECONDS + $2))
	while [ "$SECONDS" -lt "$end" ]; do
		listening "$1" && return 0
		kill -0 "$3" 2> /dev/null || return 1
		sleep 0.2
	done
	return 1
}

# lo_point ID SERVER_CMD... -- CLIENT_CMD...: start the server, then the
# client once the server listens; the client's output is left in
# $VM_OUT/last.out. @PORT@ in either command is the point's port. A
# failed attempt gets a new server on a new port, three attempts in all:
# perftest 4.5 cannot retry a refused rdma_cm connection
# (selftests/rdma_lib.sh, perftest_lost_retry). The CPU time of the
# last attempt, server and client together, from the client's start
# (the server's own set-up and the polling for its listener left out) to
# the end of both, goes to $cpu_out.
lo_point() {
	local id=$1 srv=() cli=() spid c0 c1 try rc=1
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	for try in 1 2 3; do
		port=$((port + 1))
		timeout -k 5 $((secs * 6 + 60)) "${srv[@]//@PORT@/$port}" > "$VM_OUT/srv.out" 2>&1 &
		spid=$!
		wait_listen "$port" 30 "$spid" || log "$id: no listener on port $port"
		rc=1
		c0=$(cpu_now)
		timeout -k 5 $((secs * 6 + 40)) "${cli[@]//@PORT@/$port}" > "$VM_OUT/last.out" 2>&1 && rc=0
		# the server ends with its client (or at its timeout: no
		# polling inside the measured time), or it waits for a client
		# that failed
		[ "$rc" = 0 ] || kill "$spid" 2> /dev/null
		wait "$spid" 2> /dev/null
		c1=$(cpu_now)
		[ "$rc" = 0 ] && break
		{
			echo "==== $id, attempt $try, port $port: client"
			cat "$VM_OUT/last.out"
			echo "==== server"
			cat "$VM_OUT/srv.out"
		} >> "$VM_OUT/failed.out"
		log "$id: attempt $try failed"
		sleep 1
	done
	echo "$id,$VM_HOST,$(echo "$c0 $c1" | awk '{ print $4 - $1, $5 - $2, $6 - $3 }' | tr ' ' ',')" >> "$cpu_out"
	return "$rc"
}

# For TCP, OP only names the row: "stream", or "ref-SYSTEM" for the run
# made next to that system's points. OP write: RDMA WRITE bandwidth,
# perftest busy-polling. OP send_ev: SEND bandwidth with both sides
# sleeping on completion events (-e), as iperf3 sleeps in its sockets, so
# that no spinning takes CPU from the transport. perftest has no duration
# mode with events: it sends about $secs seconds' worth at 50 MB/s, and
# the row records the bytes moved.
bw_point() { # SYSTEM OP SIZE REP
	local sys=$1 op=$2 size=$3 rep=$4 id mbs="" mpps="" bytes="" iters
	local verb=write len="-D $secs"
	id=$sys/bw/$op/$size/$rep
	if [ "$op" = send_ev ]; then
		iters=$(send_ev_iters "$secs" "$size" 50000000)
		verb=send len="-e -n $iters" bytes=$((iters * size))
	fi
	log "$id"
	if [ "$sys" = tcp ]; then
		# iperf3 -J exits 0 even when refused: the JSON says "error"
		# shellcheck disable=SC2016
		lo_point "$id" iperf3 -s -1 -p @PORT@ -- \
			bash -c 'o=$(iperf3 "$@"); echo "$o"; ! grep -q "\"error\"" <<< "$o"' _ \
			-c "$addr" -p @PORT@ -t "$secs" -l "$size" -J
		mbs=$(/usr/bin/python3 -c 'import json,sys
try: print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e6))
except Exception: print("")' < "$VM_OUT/last.out")
	else
		# shellcheck disable=SC2046,SC2086 # option lists
		lo_point "$id" "ib_${verb}_bw" -d dev0 $(conn_args "$sys" "$addr") -F $len -s "$size" -p @PORT@ -- \
			"ib_${verb}_bw" -d dev0 $(conn_args "$sys" "$addr") -F $len -s "$size" -p @PORT@ "$addr"
		read -r mbs mpps < <(awk '/#bytes/ { getline; print $4, $5; exit }' "$VM_OUT/last.out")
	fi
	echo "$id,$sys,bw,$op,$size,$rep,${mbs:-},${mpps:-},,,$bytes" >> "$out"
	log "$id: ${mbs:-no} MB/s"
}

# A fresh guest is slow for its first half minute of traffic (TCG
# translates code the first time it runs): $warm seconds of traffic per
# system, unrecorded.
warm_up() { # SYSTEM
	local sys=$1 secs=$warm	# lo_point's timeouts follow secs
	log "$sys/warm-up"
	if [ "$sys" = tcp ]; then
		lo_point "$sys/warm-up" iperf3 -s -1 -p @PORT@ -- \
			iperf3 -c "$addr" -p @PORT@ -t "$secs"
	else
		# shellcheck disable=SC2046
		lo_point "$sys/warm-up" ib_write_bw -d dev0 $(conn_args "$sys" "$addr") -F -D "$secs" -p @PORT@ -- \
			ib_write_bw -d dev0 $(conn_args "$sys" "$addr") -F -D "$secs" -p @PORT@ "$addr"
	fi
}

# What the driver and TCP counted: the device's hw counters (none for
# siw) and TCP's segments out, one "name value" line each.
counter_snapshot() {
	local f
	for f in /sys/class/infiniband/dev0/ports/1/hw_counters/*; do
		[ -r "$f" ] && echo "${f##*/} $(cat "$f")"
	done
	awk '$1 == "Tcp:" && !h { for (i = 2; i <= NF; i++) n[i] = $i; h = 1; next }
	     $1 == "Tcp:" { for (i = 2; i <= NF; i++) if (n[i] == "OutSegs") print "tcp_out_segs", $i }' /proc/net/snmp
}

# Work per message, counted: one run of exactly $count 64 KiB WRITEs
# (ib_write_bw -n; no duration margins), with the counters' differences
# around it in $counts_out (system, messages, counter, difference).
# Both ends are this VM, so each packet is counted out and in once.
count_point() { # SYSTEM
	local sys=$1 id=$1/count/write/65536 before after
	[ "$sys" = tcp ] && return 0
	log "$id: $count messages"
	before=$(counter_snapshot)
	# shellcheck disable=SC2046
	lo_point "$id" ib_write_bw -d dev0 $(conn_args "$sys" "$addr") -F -n "$count" -s 65536 -p @PORT@ -- \
		ib_write_bw -d dev0 $(conn_args "$sys" "$addr") -F -n "$count" -s 65536 -p @PORT@ "$addr" ||
		{ log "$id failed"; return 0; }
	after=$(counter_snapshot)
	join <(sort <<< "$before") <(sort <<< "$after") |
		awk -v s="$sys" -v n="$count" '{ print s "," n "," $1 "," $3 - $2 }' >> "$counts_out"
}

echo "id,system,kind,op,size,rep,mbytes_per_s,mpps,lat_typical_us,lat_p99_us,bytes" > "$out"
echo "system,messages,counter,difference" > "$counts_out"
: > "$cpu_out"
wire_mtu "${BENCH_MTU:-}" || { log "eth0 refused MTU $BENCH_MTU"; exit 1; }
# lo hands a packet to its receiver on the sending CPU; with RPS another
# CPU may take the receive side (BENCH_LOOPBACK_RPS: a CPU mask)
if [ -n "${BENCH_LOOPBACK_RPS:-}" ]; then
	echo "$BENCH_LOOPBACK_RPS" > /sys/class/net/lo/queues/rx-0/rps_cpus ||
		{ log "lo refused RPS mask $BENCH_LOOPBACK_RPS"; exit 1; }
fi
log "loopback on eth0, $addr to itself: $(ip -o route get "$addr" 2> /dev/null)"
for sys in $systems; do
	log "system $sys"
	setup "$sys" || { log "setup of $sys failed"; continue; }
	[ "$warm" -gt 0 ] && warm_up "$sys"
	for rep in $(seq 1 "$reps"); do
		for size in $sizes; do
			if [ "$sys" = tcp ]; then
				bw_point tcp stream "$size" "$rep"
				continue
			fi
			# TCP next to each system's points, so that the ratio
			# compares runs made a minute apart at most
			bw_point tcp "ref-$sys" "$size" "$rep"
			for op in $ops; do
				bw_point "$sys" "$op" "$size" "$rep"
			done
		done
	done
	count_point "$sys"
done
rdma_all_down dev0
exit 0
