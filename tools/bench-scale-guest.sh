#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One side of the scale mode of `make bench` (tools/bench-scale.sh), run in
# each of two VMs on one wire: host2 serves, host1 connects. For each
# system and each number of connections N, build/bench/bench-scale
# (tools/bench-scale.c) opens N RC connections through rdma_cm, moves 4 KiB
# RDMA WRITEs on all of them, and tears them down; then each host checks
# that `rdma res` has nothing left on the device. host1 writes one row per
# point to $VM_OUT/scale.csv, host2 one to $VM_OUT/scale-server.csv. Both
# walk the same list in the same order; each point has its own ports (the
# program's and a one-shot TCP port by which host2 says "listening"), so a
# failed point cannot pair a client with the next point's server.
#
# Environment (from bench-scale.sh): BENCH_SYSTEMS, BENCH_SCALE_NS,
# BENCH_REPS, BENCH_SECS (seconds of traffic per point), BENCH_WARMUP
# (seconds of unrecorded traffic per system), BENCH_SCALE_INFLIGHT
# (connections in set-up at once), BENCH_SCALE_DEPTH (WRITEs outstanding
# per QP), BENCH_SCALE_SQ (send queue WRs per QP).
set -uo pipefail
export PATH=$VM_REPO/tools/vm/bin:$PATH
export REPO=$VM_REPO
# shellcheck source=selftests/rdma_lib.sh
. "$VM_REPO/selftests/rdma_lib.sh"

me=$VM_HOST
srv_addr=192.0.2.12
systems=${BENCH_SYSTEMS:-sroce siwarp rxe siw}
ns=${BENCH_SCALE_NS:-1 10 100 1000}
reps=${BENCH_REPS:-3}
secs=${BENCH_SECS:-10}
warm=${BENCH_WARMUP:-30}
inflight=${BENCH_SCALE_INFLIGHT:-32}
depth=${BENCH_SCALE_DEPTH:-8}
sq=${BENCH_SCALE_SQ:-16}
prog=$VM_REPO/build/bench/bench-scale
port=21000
ready=31000
cli_cols=(setup_s setup_cps bw_MBps secs writes min_qp_writes max_qp_writes teardown_s
	kmem_per_qp slab_per_qp pgtable_per_qp ring_per_qp user_per_qp kmem_left_kB)
srv_cols=(setup_s setup_cps verified teardown_s kmem_per_qp slab_per_qp pgtable_per_qp
	ring_per_qp user_per_qp kmem_left_kB)

log() { echo "bench[host$me]: $*" >&2; }

setup() { # SYSTEM
	rdma_all_down dev0
	mkdev "$1" dev0 eth0
}

# the seconds a point of N connections may take, each side
point_limit() { echo $((90 + secs + $1 / 4)); }

# kv LINE KEY...: the values of KEY=VALUE words in LINE, comma-separated
kv() {
	local line=$1 k out=
	shift
	for k in "$@"; do
		out+=,$(awk -v k="$k" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit } }' <<< "$line")
	done
	echo "${out#,}"
}

# wait (up to $1 s) for FILE to have a line matching RE, or PID to end
wait_line() { # SECS FILE RE PID
	local end=$((SECONDS + $1))
	while [ "$SECONDS" -lt "$end" ]; do
		grep -q "$3" "$2" 2> /dev/null && return 0
		kill -0 "$4" 2> /dev/null || return 1
		sleep 0.2
	done
	return 1
}

# nothing of the point left on the device (up to 20 s for deferred frees)
res_left_clean() {
	local i
	for i in $(seq 40); do
		res_clean dev0 > /dev/null 2>&1 && return 0
		sleep 0.5
	done
	res_clean dev0 >&2
	return 1
}

# scale_point SYSTEM N REP [SECS]: one run of bench-scale on both hosts;
# REP 0 is the warm-up (not recorded)
scale_point() {
	local sys=$1 n=$2 rep=$3 t=${4:-$secs} id lim rc clean line pid c0="" refused=""
	port=$((port + 1))
	ready=$((ready + 1))
	id=$sys/scale/$n/$rep
	lim=$(($(point_limit "$n") + t))
	log "$id"
	if [ "$me" = 2 ]; then
		[ "$sys" = siwarp ] && c0=$(hw_counter dev0 iwarp_setup_refused 2> /dev/null)
		timeout -k 5 "$lim" "$prog" -s "$srv_addr" -p "$port" -n "$n" -l "$sys" \
			-w "$lim" -t "$t" > "$VM_OUT/srv.out" 2>&1 &
		pid=$!
		wait_line 60 "$VM_OUT/srv.out" '^listening' "$pid" ||
			log "$id: server not listening"
		# the client's probe of this port says it may start
		tcp_accept_once "$lim" "$ready" 2> /dev/null || log "$id: no client"
		wait "$pid"
		rc=$?
		cat "$VM_OUT/srv.out" >&2
	else
		rc=1
		if wait_line_port "$lim" "$ready"; then
			timeout -k 5 "$lim" "$prog" -c "$srv_addr" -p "$port" -n "$n" -l "$sys" \
				-w "$lim" -t "$t" -b "$inflight" -d "$depth" -q "$sq" \
				> "$VM_OUT/cli.out" 2>&1
			rc=$?
		else
			echo "no server for $id" > "$VM_OUT/cli.out"
		fi
		cat "$VM_OUT/cli.out" >&2
	fi
	clean=1
	res_left_clean || { clean=0; log "$id: rdma res not clean afterwards"; }
	[ "$rep" = 0 ] && return 0
	if [ "$me" = 2 ]; then
		line=$(grep '^scale ' "$VM_OUT/srv.out")
		# connections siwarp's listener refused, full of half-open ones
		[ -n "$c0" ] && refused=$(($(hw_counter dev0 iwarp_setup_refused) - c0))
		echo "$id,$sys,$n,$rep,$rc,$clean,$(kv "$line" "${srv_cols[@]}"),$refused" >> "$VM_OUT/scale-server.csv"
	else
		line=$(grep '^scale ' "$VM_OUT/cli.out")
		[ "$rc" = 0 ] || cat "$VM_OUT/cli.out" >> "$VM_OUT/failed.out"
		echo "$id,$sys,$n,$rep,$rc,$clean,$(kv "$line" "${cli_cols[@]}")" >> "$VM_OUT/scale.csv"
		log "$id: rc $rc, res clean $clean: ${line:-no result}"
	fi
}

wait_line_port() { # SECS PORT: host2 listens on PORT
	local end=$((SECONDS + $1))
	while [ "$SECONDS" -lt "$end" ]; do
		tcp_port_open "$srv_addr" "$2" && return 0
		sleep 0.5
	done
	return 1
}

if [ "$me" = 1 ]; then
	echo "id,system,n,rep,rc,res_clean,$(IFS=,; echo "${cli_cols[*]}")" > "$VM_OUT/scale.csv"
else
	echo "id,system,n,rep,rc,res_clean,$(IFS=,; echo "${srv_cols[*]}"),iwarp_setup_refused" > "$VM_OUT/scale-server.csv"
fi
[ -x "$prog" ] || { log "$prog missing"; exit 1; }
# a system this host could not set up: its points still take their ports,
# so that the other host's points keep theirs
skip_point() { # SYSTEM N REP
	port=$((port + 1))
	ready=$((ready + 1))
	[ "$3" = 0 ] && return 0
	if [ "$me" = 2 ]; then
		echo "$1/scale/$2/$3,$1,$2,$3,125,0" >> "$VM_OUT/scale-server.csv"
	else
		echo "$1/scale/$2/$3,$1,$2,$3,125,0" >> "$VM_OUT/scale.csv"
	fi
}

point() { if [ "$sys_ok" = 1 ]; then scale_point "$@"; else skip_point "$@"; fi; }

for sys in $systems; do
	log "system $sys"
	sys_ok=1
	setup "$sys" || { log "setup of $sys failed"; sys_ok=0; }
	# a fresh guest is slow for its first half minute of traffic
	[ "$warm" -gt 0 ] && point "$sys" 10 0 "$warm"
	for rep in $(seq 1 "$reps"); do
		for n in $ns; do
			point "$sys" "$n" "$rep"
		done
	done
done
rdma_all_down dev0
exit 0
