#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# timeout: 900
# An iWARP peer that breaks the protocol after a valid MPA exchange (a raw
# TCP peer, iwarp_bad_peer.py, talking to srdma's rping client): a bad MPA
# CRC, an invalid STag (alone, and inside a SEND whose receive must not
# then complete as a message), a tagged offset out of bounds and an unknown
# RDMAP opcode must each get a Terminate with the RFC's layer/type/code and end
# the connection; a reset or a peer silent (or a byte a second) during MPA
# must fail the client promptly. Every time the QP is flushed, nothing
# leaks, the kernel stays clean (the harness scans its log).
# A READ reply stalled behind a full socket stops at a rereg that takes
# REMOTE_READ away: no byte written after it reaches the peer, which gets
# a Terminate. A connection request the consumer never answers (as one
# iw_cm drops) is rejected and closed by the accept deadline, and an
# accept after that fails. A consumer that holds its listen backlog of
# requests unanswered is offered no more meanwhile: the other connections
# wait in TCP's accept queue (or their connect is pending), neither
# answered nor reset, the listener counting the pause; once the consumer
# answers the held ones it is offered the rest, and none is refused. A
# connected QP moved to
# RESET, from RTS and from SQD, under a stream of WRITEs
# (iw_reset_connected, both ends srdma) lets go of its connection first:
# the modify returns at once, both ends
# are disconnected, a WRITE and a READ the peer posts then neither change
# nor read the reset side's memory, the QP goes to INIT again and nothing
# is left once it is destroyed.
# Then the peer as a client of srdma's listener (an rping server): idle
# connections that never send MPA hold no worker (a real rping still
# connects beside them) and are closed by the set-up timeout; beyond the
# listener's cap of 64 half-open ones new connections are reset at once
# and counted; a request sent a byte a second is cut off by the timeout;
# a listener that goes away closes its half-open connections at once, and
# rmmod follows.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma rping /usr/bin/python3
require_test_netdev
ip4=$(ip -4 -o addr show dev "$NETDEV" | awk '{ sub("/.*", "", $4); print $4; exit }')
[ -n "$ip4" ] || tap_skip_all "$NETDEV needs an IPv4 address"
peer=$(dirname "$0")/iwarp_bad_peer.py
claim=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/iw_qp_claim
owner=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/iw_owner
resetq=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/iw_reset_connected

srv_pid=
tap_cleanup() {
	[ -z "$srv_pid" ] || kill "$srv_pid" 2> /dev/null
	srdma_cleanup siwarp0
}

counter() { hw_counter siwarp0 "$1"; }

# the raw peer listens (a probe connection would be its one client)
peer_listening() { ss -Hltn "sport = :$1" | grep -q .; }
port_free() { ! peer_listening "$1"; }

# bad_peer CASE PORT: the peer's verdict and the client's must both hold
bad_peer() {
	local case=$1 port=$2 ppid prc crc t0 t1 out=$TAP_LOGDIR/rping-$1.log
	/usr/bin/python3 "$peer" "$ip4" "$port" "$case" &
	ppid=$!
	wait_for 20 peer_listening "$port"
	t0=$(counter iwarp_terminate_sent)
	timeout 60 rping -c -a "$ip4" -p "$port" -C 5 -S 1000 -v > "$out" 2>&1
	crc=$?
	cat "$out"
	wait "$ppid"
	prc=$?
	t1=$(counter iwarp_terminate_sent)
	echo "peer rc=$prc, rping rc=$crc, terminates sent $t0 -> $t1"
	[ "$prc" = 0 ] || return 1
	# the client is told, in time (rping exits 0 after a disconnect)
	[ "$crc" != 124 ] || return 1
	grep -Eq 'DISCONNECT EVENT|UNREACHABLE' "$out" || return 1
	# no receive completed but with a whole message (rping checks sizes)
	! grep -q 'bogus' "$out" || return 1
	case $case in
	reset | silent | slow-reply) [ "$t1" = "$t0" ] ;;
	*) [ "$t1" = $((t0 + 1)) ] ;;
	esac
}
no_leaks() {
	timeout 20 rdma res show siwarp0 | tee /dev/stderr |
		grep -Eq 'pd 0 cq 0 qp 0 cm_id 0 mr 0'
}

# A persistent rping server: its listener outlives each connection.
SRV_PORT=7400
HALF_OPEN_CAP=64
start_server() {
	rping -s -P -a "$ip4" -p "$SRV_PORT" -V -C 5 > "$TAP_LOGDIR/rping-server.log" 2>&1 &
	srv_pid=$!
	wait_for 30 peer_listening "$SRV_PORT"
}
rping_client() { timeout 60 rping -c -a "$ip4" -p "$SRV_PORT" -V -C 5; }
flood() { timeout 60 /usr/bin/python3 "$peer" "$ip4" "$SRV_PORT" flood "$@"; }
# flood_connected N: N or more TCP connections to the server's port are up
flood_connected() {
	[ "$(ss -Htn state established "( dport = :$SRV_PORT )" | wc -l)" -ge "$1" ]
}

# N idle connections under the cap: a real rping connects beside them,
# then the set-up timeout closes every one of them
idle_beside_rping() {
	local n=$1 fpid frc crc to0 to1
	to0=$(counter iwarp_setup_timeout)
	flood "$n" "$HALF_OPEN_CAP" &
	fpid=$!
	sleep 2
	rping_client
	crc=$?
	wait "$fpid"
	frc=$?
	to1=$(counter iwarp_setup_timeout)
	echo "rping rc=$crc, flood rc=$frc, set-up timeouts $to0 -> $to1"
	[ "$crc" = 0 ] && [ "$frc" = 0 ] && [ "$to1" = $((to0 + n)) ]
}

# N idle connections over the cap: N - cap reset at once and counted
flood_over_cap() {
	local n=$1 r0 r1 to0 to1
	r0=$(counter iwarp_setup_refused)
	to0=$(counter iwarp_setup_timeout)
	flood "$n" "$HALF_OPEN_CAP" || return 1
	r1=$(counter iwarp_setup_refused)
	to1=$(counter iwarp_setup_timeout)
	echo "refused $r0 -> $r1, set-up timeouts $to0 -> $to1"
	[ "$r1" = $((r0 + n - HALF_OPEN_CAP)) ] &&
		[ "$to1" = $((to0 + HALF_OPEN_CAP)) ]
}

# one QP, two connects: another process naming it is refused (EACCES),
# a second id of the owner too (EBUSY), and destroying the QP ends the
# first one's set-up at once (the peer stays silent)
qp_claim() {
	local ppid prc crc
	/usr/bin/python3 "$peer" "$ip4" 7310 silent &
	ppid=$!
	wait_for 20 peer_listening 7310
	timeout 60 "$claim" "$ip4" 7310
	crc=$?
	wait "$ppid"
	prc=$?
	echo "iw_qp_claim rc=$crc, peer rc=$prc"
	[ "$crc" = 0 ] && [ "$prc" = 0 ]
}

# the peer READs 16 MiB, reads nothing back until the client took
# REMOTE_READ away (rereg in place) and rewrote the buffer: only old bytes
# arrive, then a Terminate
read_cut_by_rereg() {
	local ppid prc crc t0 t1 flag=$TAP_LOGDIR/rereg-done
	rm -f "$flag"
	/usr/bin/python3 "$peer" "$ip4" 7320 read-rereg "$flag" &
	ppid=$!
	wait_for 20 peer_listening 7320
	t0=$(counter iwarp_terminate_sent)
	timeout 90 "$owner" read-rereg "$ip4" 7320 "$flag"
	crc=$?
	wait "$ppid"
	prc=$?
	t1=$(counter iwarp_terminate_sent)
	echo "peer rc=$prc, iw_owner rc=$crc, terminates sent $t0 -> $t1"
	[ "$prc" = 0 ] && [ "$crc" = 0 ] && [ "$t1" = $((t0 + 1)) ]
}

# a listener that takes a request and never answers it
unanswered_request() {
	local opid orc prc
	timeout 90 "$owner" unanswered "$ip4" 7321 &
	opid=$!
	wait_for 20 peer_listening 7321
	timeout 60 /usr/bin/python3 "$peer" "$ip4" 7321 unanswered
	prc=$?
	wait "$opid"
	orc=$?
	echo "peer rc=$prc, iw_owner rc=$orc"
	[ "$prc" = 0 ] && [ "$orc" = 0 ]
}

# a listener (backlog 4) whose consumer holds 4 requests unanswered: the
# other 8 wait, neither answered nor reset, while the listener leaves them
# in TCP's accept queue (a pause, counted); once the peer has seen that it
# creates the flag, the consumer answers the 4 and is offered the 8, and
# nothing is refused
backlog_full() {
	local opid orc prc a0 a1 b0 b1 s0 s1 n=12 cap=4
	local flag=$TAP_LOGDIR/hoard-answer
	rm -f "$flag"
	a0=$(counter iwarp_accept_paused)
	b0=$(counter iwarp_backlog_refused)
	s0=$(counter iwarp_setup_refused)
	timeout 90 "$owner" hoard "$ip4" 7322 "$cap" $((n - cap)) "$flag" &
	opid=$!
	wait_for 20 peer_listening 7322
	timeout 80 /usr/bin/python3 "$peer" "$ip4" 7322 hoard "$n" "$cap" "$flag"
	prc=$?
	wait "$opid"
	orc=$?
	a1=$(counter iwarp_accept_paused)
	b1=$(counter iwarp_backlog_refused)
	s1=$(counter iwarp_setup_refused)
	echo "peer rc=$prc, iw_owner rc=$orc, accept paused $a0 -> $a1," \
		"backlog refused $b0 -> $b1, set-up refused $s0 -> $s1"
	[ "$prc" = 0 ] && [ "$orc" = 0 ] && [ "$a1" -gt "$a0" ] &&
		[ "$b1" = "$b0" ] && [ "$s1" = "$s0" ]
}

# a connected QP reset from STATE (rts, sqd) under a WRITE stream: its
# connection goes (an abort), the peer's late WRITE and READ find nothing,
# INIT again; then nothing is left
reset_connected() {
	local rc a0 a1
	a0=$(counter iwarp_aborts)
	timeout 90 "$resetq" "$ip4" "$2" "$1"
	rc=$?
	a1=$(counter iwarp_aborts)
	echo "iw_reset_connected rc=$rc, aborts $a0 -> $a1"
	[ "$rc" = 0 ] && [ "$a1" -gt "$a0" ] && wait_for 10 no_leaks
}

slow_request() {
	timeout 60 /usr/bin/python3 "$peer" "$ip4" "$SRV_PORT" slow-request
}

# the listener goes (its process is killed) while connections are
# half-open: they are closed at once, not by the timeout; then rmmod
listener_gone_then_rmmod() {
	local fpid frc
	# a fresh server of its own: one that serves no client
	[ -z "$srv_pid" ] || kill "$srv_pid" 2> /dev/null
	wait_for 10 port_free "$SRV_PORT"
	start_server || return 1
	flood 16 "$HALF_OPEN_CAP" --early &
	fpid=$!
	# all 16 connected before the listener goes (a slow kernel, such as
	# the debug one, takes more than the moment a fast one does)
	wait_for 30 flood_connected 16 || echo "not all 16 connected in 30 s"
	kill -KILL "$srv_pid"
	wait "$srv_pid" 2> /dev/null
	srv_pid=
	wait "$fpid"
	frc=$?
	echo "flood rc=$frc"
	[ "$frc" = 0 ] || return 1
	timeout 60 rdma link del siwarp0 && timeout 60 rmmod srdma
}

cases=(bad-crc bad-stag send-cut out-of-bounds bad-opcode reset silent slow-reply)
tap_plan $((1 + ${#cases[@]} + 8 + 6))
t "siwarp0 on $NETDEV" mkdev siwarp siwarp0 "$NETDEV" || tap_bail "no siwarp0"
port=7300
for c in "${cases[@]}"; do
	port=$((port + 1))
	STEP_TIMEOUT=90 t "peer sends $c: QP terminated cleanly" bad_peer "$c" "$port"
done
STEP_TIMEOUT=90 t "one QP: another process and a second connect refused, destroy ends set-up" qp_claim
STEP_TIMEOUT=120 t "READ reply cut by a rereg dropping REMOTE_READ: old bytes, Terminate" \
	read_cut_by_rereg
STEP_TIMEOUT=120 t "unanswered request: rejected by the accept deadline, late accept fails" \
	unanswered_request
STEP_TIMEOUT=120 t "consumer holding its backlog of 4: 8 more wait, not reset, then served" \
	backlog_full
port=7330
for s in RTS SQD; do
	port=$((port + 1))
	STEP_TIMEOUT=120 t \
		"QP reset from $s under WRITEs: disconnected, the peer's WRITE/READ not served" \
		reset_connected "${s,,}" "$port"
done
t "no verbs objects left behind" wait_for 10 no_leaks
t "rping -V still works afterwards" pair timeout 60 rping -s -a "$ip4" -V -C 5 -- \
	timeout 60 rping -c -a "$ip4" -V -C 5

start_server || diag "rping server not listening"
STEP_TIMEOUT=90 t "32 idle connections: rping -V beside them, then all timed out" \
	idle_beside_rping 32
STEP_TIMEOUT=90 t "100 idle connections: 36 reset at once, 64 timed out" \
	flood_over_cap 100
STEP_TIMEOUT=90 t "an MPA request a byte a second is cut off by the timeout" \
	slow_request
t "rping -V connects after the flood" rping_client
t "rping server killed with 16 half-open: all closed at once; rmmod" \
	listener_gone_then_rmmod
t "nothing of srdma left" module_absent srdma
