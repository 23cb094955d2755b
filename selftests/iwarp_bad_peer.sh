#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# timeout: 600
# An iWARP peer that breaks the protocol after a valid MPA exchange (a raw
# TCP peer, iwarp_bad_peer.py, talking to srdma's rping client): a bad MPA
# CRC, an invalid STag, a tagged offset out of bounds and an unknown RDMAP
# opcode must each get a Terminate with the RFC's layer/type/code and end
# the connection; a reset or a peer silent during MPA must fail the client
# promptly. Every time the QP is flushed, nothing leaks, the kernel stays
# clean (the harness scans its log).
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

tap_cleanup() { srdma_cleanup siwarp0; }

counter() { hw_counter siwarp0 "$1"; }

# bad_peer CASE PORT: the peer's verdict and the client's must both hold
bad_peer() {
	local case=$1 port=$2 ppid prc crc t0 t1 out=$TAP_LOGDIR/rping-$1.log
	/usr/bin/python3 "$peer" "$ip4" "$port" "$case" &
	ppid=$!
	sleep 2
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
	case $case in
	reset | silent) [ "$t1" = "$t0" ] ;;
	*) [ "$t1" = $((t0 + 1)) ] ;;
	esac
}
no_leaks() {
	timeout 20 rdma res show siwarp0 | tee /dev/stderr |
		grep -Eq 'pd 0 cq 0 qp 0 cm_id 0 mr 0'
}

cases=(bad-crc bad-stag out-of-bounds bad-opcode reset silent)
tap_plan $((1 + ${#cases[@]} + 2))
t "siwarp0 on $NETDEV" mkdev siwarp siwarp0 "$NETDEV" || tap_bail "no siwarp0"
port=7300
for c in "${cases[@]}"; do
	port=$((port + 1))
	STEP_TIMEOUT=90 t "peer sends $c: QP terminated cleanly" bad_peer "$c" "$port"
done
t "no verbs objects left behind" wait_for 10 no_leaks
t "rping -V still works afterwards" pair timeout 60 rping -s -a "$ip4" -V -C 5 -- \
	timeout 60 rping -c -a "$ip4" -V -C 5
