#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# timeout: 900
# RC payloads sent from the user's pages (sroce's zero-copy transmit) on
# one device talking to itself: its packets go through lo, which takes
# page fragments (srdma lends to lo only with roce_lend_local=1, which
# this test sets: a copy costs less there, but lo is the one device with
# scatter-gather a single VM has). Every byte of verified transfers must
# arrive, also through a lossy, duplicating, corrupting lo (first
# transmissions lent, what the requester resends copied); UC and UD,
# which complete as they send, must copy; processes killed while their
# packets wait in a queue must leave nothing behind (the packets hold
# the pages, not the MRs, which go with the processes). No completion
# may give the consumer its buffer back while a packet can still read
# it: a QP moved to ERR with its packets held in lo's queue completes
# them once they left, and a packet tap that reads late sees the bytes
# as they were sent.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma tc ibv_uc_pingpong ibv_ud_pingpong ib_write_bw
require_test_netdev
xfer=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/rc_xfer
[ -x "$xfer" ] || tap_skip_all "rc_xfer not built (make -C selftests)"
ip4=$(netdev_ip4 "$NETDEV")
[ -n "$ip4" ] || tap_skip_all "$NETDEV needs an IPv4 address"
modprobe sch_netem 2> /dev/null

LEND_LOCAL=/sys/module/srdma/parameters/roce_lend_local
# lo takes GSO trains, which copy (roce_trains.sh): off here
TRAINS=/sys/module/srdma/parameters/roce_gso_trains

tap_cleanup() {
	tc qdisc del dev lo root 2> /dev/null
	[ -w "$LEND_LOCAL" ] && echo 0 > "$LEND_LOCAL"
	[ -w "$TRAINS" ] && echo 1 > "$TRAINS"
	srdma_cleanup sroce0
}

# sroce0, lending to lo
lending_dev() {
	mkdev sroce sroce0 "$NETDEV" && echo 1 > "$LEND_LOCAL" &&
		echo 0 > "$TRAINS"
}

paged() { hw_counter sroce0 tx_paged; }
paged_since() { [ "$(paged)" -gt "$1" ]; }

# ROUNDS BYTES [-r]: rc_xfer's verified WRITE + SEND (and READ) rounds
xfer() {
	pair timeout 300 "$xfer" -s "$ip4" -n "$1" -z "$2" -- \
		timeout 300 "$xfer" -c "$ip4" -n "$1" -z "$2" "${@:3}"
}

port_mtu() { devinfo sroce0 | awk '/active_mtu:/ { print $2; exit }'; }

# The payloads of a verified transfer went out from the user's pages:
# the client's WRITE and SEND packets, each at most once (resent packets
# copy), and most of them (a QP's first packet copies: its route is not
# known yet); the server answers with small SENDs, which copy.
xfer_paged() { # ROUNDS BYTES [-r]
	local p0 mtu most n
	p0=$(paged) && mtu=$(port_mtu) || return 1
	most=$((2 * $1 * $2 / mtu))
	xfer "$@" || return 1
	n=$(($(paged) - p0))
	echo "tx_paged: $n, first transmissions of full packets: $most"
	[ "$n" -le "$most" ] && [ "$n" -ge $((most / 2)) ]
}

# By default a packet for this host itself copies: lo's receiver would
# get a copy of lent pages anyway.
local_copies() {
	local p0 rc
	p0=$(paged) || return 1
	echo 0 > "$LEND_LOCAL" || return 1
	xfer 2 262144
	rc=$?
	echo 1 > "$LEND_LOCAL" || return 1
	echo "tx_paged: $p0 -> $(paged)"
	[ "$rc" -eq 0 ] && [ "$(paged)" -eq "$p0" ]
}

# UC and UD complete a WQE as its packets are handed to IP: they copy.
copied() { # uc|ud SIZE
	local p0
	p0=$(paged) || return 1
	pingpong_checked "$1" sroce0 "$g4" "$2" "$ip4" || return 1
	echo "tx_paged: $p0 -> $(paged)"
	[ "$(paged)" -eq "$p0" ]
}

lossy() { roce_netem lo delay 1ms loss 2% reorder 5% duplicate 1% corrupt 0.1%; }

through_loss() {
	local r0
	r0=$(hw_counter sroce0 retransmits) || return 1
	xfer_paged 8 1048576 && xfer_paged 16 65536 -r || return 1
	tc -s qdisc show dev lo
	echo "retransmits: $r0 -> $(hw_counter sroce0 retransmits)"
	[ "$(hw_counter sroce0 retransmits)" -gt "$r0" ]
}

# Packets held in netem's queue on lo.
queued() {
	tc -s qdisc show dev lo |
		awk '/^qdisc netem/ { n = 1 } n && /backlog/ { sub("p", "", $3); print $3; exit }'
}
queued_least() { [ "$(queued)" -ge "$1" ]; }

# A 64 KiB WRITE stream whose packets wait 5 s (times TIMEOUT_SCALE: a
# debug kernel tears down slowly) in lo's queue, both ends killed: their
# exit destroys the QPs and deregisters the MRs while the packets still
# hold the pages they lend; then the queue is dropped.
killed() {
	local spid cpid n
	roce_netem lo delay "$((5 * TIMEOUT_SCALE))s" limit 10000 || return 1
	# -u 24: a 68 s transport timeout outlasts the queue's round trip
	timeout 60 ib_write_bw -d sroce0 -x "$g4" -u 24 -s 65536 -D 30 &
	spid=$!
	wait_for 30 server_listening || return 1
	sleep 1
	timeout 60 ib_write_bw -d sroce0 -x "$g4" -u 24 -s 65536 -D 30 "$ip4" &
	cpid=$!
	wait_for 30 queued_least 32 || { echo "nothing queued"; return 1; }
	pkill -9 -x ib_write_bw
	wait "$spid" "$cpid"
	wait_for 10 res_clean sroce0 || return 1
	n=$(queued)
	echo "tx_paged $(paged); $n packets still queued, their MRs gone"
	tc qdisc del dev lo root || return 1
	[ "$n" -gt 0 ]
}

# One 64 KiB WRITE, its packets held 2 s (times TIMEOUT_SCALE) in lo's
# queue, its QP moved to ERR at once: the flush completion must wait for
# them (rc_xfer -e: no sooner than 3/4 of the delay), as a completion
# gives the consumer its buffer back; rdma res shows the wait meanwhile.
flush_held() {
	local p0 d=$((2 * TIMEOUT_SCALE)) rc seen spid
	p0=$(paged) || return 1
	roce_netem lo delay "${d}s" limit 10000 || return 1
	seen=$(mktemp) || return 1
	lent_held_shown 60 > "$seen" &
	spid=$!
	pair timeout 120 "$xfer" -s "$ip4" -p 7472 -e 0 -- \
		timeout 120 "$xfer" -c "$ip4" -p 7472 -z 65536 -e $((d * 750))
	rc=$?
	wait "$spid" || rc=1
	echo "rdma res during the wait: $(head -1 "$seen")"
	rm -f "$seen"
	tc qdisc del dev lo root || return 1
	echo "tx_paged: $p0 -> $(paged)"
	[ "$rc" -eq 0 ] && paged_since "$p0"
}

# A tap on lo that reads nothing until the transfer is over, while the
# client rewrites its buffer after every round: each packet it then reads
# must still match its ICRC (roce_tap_check.py).
tapped() {
	local out until tpid rc
	out=$(mktemp) && until=$(mktemp -u) || return 1
	timeout 900 python3 "$(dirname "$0")/roce_tap_check.py" lo "$until" 256 \
		> "$out" 2>&1 &
	tpid=$!
	wait_for 20 grep -q capturing "$out" || { cat "$out"; return 1; }
	xfer_paged 4 262144
	rc=$?
	touch "$until"
	wait "$tpid" || rc=1
	cat "$out"
	rm -f "$out" "$until"
	return "$rc"
}

STEP_TIMEOUT=400
tap_plan 12
t "sroce0 on $NETDEV, roce_lend_local=1" lending_dev || tap_bail "no sroce0"
g4=$(gid_index sroce0 "::ffff:$ip4")
t "8 x 1 MiB WRITE + SEND, checked, sent from the user's pages" xfer_paged 8 1048576
t "roce_lend_local=0 (the default): packets to this host copy" local_copies
t "UC copies its payloads (it completes as it sends)" copied uc 4096
t "UD copies its payloads (it completes as it sends)" copied ud 1024
t "QP to ERR with its lent packets queued: flushed once they left" flush_held
t "a tap reading late sees lent packets as sent (ICRC intact)" tapped
t "netem loss 2%, reorder 5%, duplicate 1%, corrupt 0.1% on lo" lossy
STEP_TIMEOUT=800
t "1 MiB WRITE + SEND and 64 KiB WRITE/READ/SEND rounds, checked, through the loss" through_loss
STEP_TIMEOUT=200
t "processes killed, MRs gone, while their lent packets wait in a queue" killed
t "nothing left on sroce0 (rdma res)" wait_for 20 res_clean sroce0
t "4 x 1 MiB verified rounds afterwards" xfer 4 1048576
