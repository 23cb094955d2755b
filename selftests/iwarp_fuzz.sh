#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# timeout: 900
# iWARP protocol fuzzer. iw_fuzz_server (rdma_cm on siwarp0) accepts
# connections in a loop and exposes live memory: a read/write/atomic MR,
# a read-only MR, an MR of another PD and a dead key, all behind guard
# bytes, with receives of two SGEs each. iwarp_fuzz.py, a raw TCP peer,
# opens $SRDMA_IWARP_FUZZ_CONNS connections (default 100; 1,000 for a
# full run) and sends $SRDMA_IWARP_FUZZ_FPDUS FPDUs (default 10,000;
# 100,000 for a full run): mutated MPA requests, then valid streams with
# one mutation at a random point (every RDMAP opcode, STags, MR edges,
# QN/MSN/MO extremes, CRC, lengths, Terminates, atomics, READ and atomic
# responses), cut by FIN, RST or mid-FPDU. The fuzzer checks what the
# RFCs fix (the Terminate each mutation gets, READ data, MSNs, CRCs);
# afterwards the server is alive and finds its guard bytes, read-only
# and foreign MRs untouched and every SEND byte right, srdma's counters
# moved, rping -V works, nothing is left, rmmod works. The harness fails
# the test on any kernel splat. SRDMA_IWARP_FUZZ_SEED repeats a run.
#   full run: tools/vm/run.sh -t 5400 -e SRDMA_IWARP_FUZZ_FPDUS=100000 \
#     -e SRDMA_IWARP_FUZZ_CONNS=1000 -- selftests/iwarp_fuzz.sh
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma rping ss /usr/bin/python3
require_test_netdev
bin=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}
[ -x "$bin/iw_fuzz_server" ] || tap_skip_all "iw_fuzz_server not built (make -C selftests)"
ip4=$(netdev_ip4 "$NETDEV")
[ -n "$ip4" ] || tap_skip_all "$NETDEV needs an IPv4 address"
fuzzer=$(dirname "$0")/iwarp_fuzz.py
FPDUS=${SRDMA_IWARP_FUZZ_FPDUS:-10000}
CONNS=${SRDMA_IWARP_FUZZ_CONNS:-100}
SEED=${SRDMA_IWARP_FUZZ_SEED:-$(date +%s)}
PORT=7500
out=$TAP_LOGDIR/fuzz.out

srv_pid=
tap_cleanup() {
	[ -z "$srv_pid" ] || kill -KILL "$srv_pid" 2> /dev/null
	srdma_cleanup siwarp0
}

listening() { ss -Hltn "sport = :$1" | grep -q .; }
counters() { hw_counters_all siwarp0; }
# counter_delta NAME: how far NAME moved during the fuzzing
counter_delta() {
	local b a
	b=$(awk -v c="$1" '$1 == c { print $2 }' "$TAP_LOGDIR/counters.before")
	a=$(awk -v c="$1" '$1 == c { print $2 }' "$TAP_LOGDIR/counters.after")
	echo $((${a:-0} - ${b:-0}))
}
# total NAME: a count from the fuzzer's "totals:" line
total() { sed -n "s/^totals:.* $1 \\([0-9]*\\).*/\\1/p" "$out"; }

fuzz() {
	local rc
	counters > "$TAP_LOGDIR/counters.before"
	timeout "$((STEP_TIMEOUT - 10))" /usr/bin/python3 "$fuzzer" "$ip4" "$PORT" \
		-n "$CONNS" -f "$FPDUS" -s "$SEED" > "$out" 2>&1
	rc=$?
	counters > "$TAP_LOGDIR/counters.after"
	cat "$out"
	[ "$rc" = 0 ] || return 1
	# the run was as long as asked
	[ "$(total connections)" -ge "$CONNS" ] && [ "$(total fpdus)" -ge "$FPDUS" ]
}

# srdma counted what the fuzzer saw, at least. A Terminate the fuzzer
# sends is counted only if srdma parses it: one that reaches a QP already
# in error (the fuzzer's reset of the connection got there first, or the
# server's own work failed) is dropped unread. So the fuzzer's Terminates
# bound that counter from above.
counters_moved() {
	local c d rc=0
	for c in iwarp_connections:accepted iwarp_crc_connections:crc \
		iwarp_terminate_sent:terminates rx_bad_crc:bad_crc; do
		d=$(counter_delta "${c%%:*}")
		echo "${c%%:*} moved by $d, the fuzzer saw $(total "${c#*:}") ${c#*:}"
		[ "$d" -ge "$(total "${c#*:}")" ] || rc=1
	done
	d=$(counter_delta iwarp_terminate_rcvd)
	echo "iwarp_terminate_rcvd moved by $d, the fuzzer sent $(total our_terminates)"
	[ "$d" -le "$(total our_terminates)" ] || rc=1
	for c in iwarp_terminate_sent rx_dropped remote_key_err; do
		d=$(counter_delta "$c")
		[ "$d" -gt 0 ] || { echo "$c did not move"; rc=1; }
	done
	return "$rc"
}

server_alive() { kill -0 "$srv_pid"; }

# The server checks its memory when it stops; it must stop by itself.
stop_server() {
	local i
	kill -TERM "$srv_pid" 2> /dev/null
	for ((i = 0; i < 60 * 5; i++)); do
		kill -0 "$srv_pid" 2> /dev/null || break
		sleep 0.2
	done
	kill -KILL "$srv_pid" 2> /dev/null
	wait "$srv_pid"
	srv_rc=$?
	srv_pid=
}
server_verdict() {
	cat "$TAP_LOGDIR/server.log"
	[ "$srv_rc" = 0 ]
}

rping_v() {
	pair timeout 60 rping -s -a "$ip4" -V -C 10 -S 4000 -- \
		timeout 60 rping -c -a "$ip4" -V -C 10 -S 4000
}
unloaded() { srdma_cleanup siwarp0 && module_absent srdma; }

tap_plan 9
t "siwarp0 on $NETDEV" mkdev siwarp siwarp0 "$NETDEV" || tap_bail "no siwarp0"
"$bin/iw_fuzz_server" -a "$ip4" -p "$PORT" > "$TAP_LOGDIR/server.log" 2>&1 &
srv_pid=$!
t "iw_fuzz_server listening on $ip4 port $PORT" wait_for 30 listening "$PORT" ||
	tap_bail "no server"
diag "seed $SEED, $CONNS connections, $FPDUS FPDUs (SRDMA_IWARP_FUZZ_SEED=$SEED repeats it)"
STEP_TIMEOUT=$((300 + FPDUS / 40 + CONNS))
t "$CONNS connections, $FPDUS FPDUs: every answer as the RFCs say" fuzz
diag "$(grep -E '^(seed|FPDUs|terminates|READs|totals)' "$out")"
STEP_TIMEOUT=60
t "the server survived the fuzzing" server_alive
t "srdma's counters moved with what the fuzzer saw" counters_moved
stop_server
t "server: guard bytes, read-only and foreign MRs intact, SENDs byte-checked" \
	server_verdict
diag "$(tail -n 3 "$TAP_LOGDIR/server.log")"
STEP_TIMEOUT=150
t "rping -V after the fuzzing" rping_v
t "nothing left behind (rdma res)" wait_for 20 res_clean siwarp0
STEP_TIMEOUT=120
t "rdma link del and rmmod srdma" unloaded
