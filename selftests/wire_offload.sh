#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-hosts: 2
# vm-wire: tap
# timeout: 1500
# Two hosts on a wire whose NICs have scatter-gather, checksum offload and
# TSO, as real NICs do (the TAP wire, tools/vm/tap-wire.sh; the other
# two-host tests run on a wire without them). Here sroce sends RC
# payloads from the user's pages and siwarp splices its transmit buffers
# to TCP, which send over TSO, and the data must still arrive intact:
# verified transfers (rc_xfer.c: every byte checked, every round exactly
# once) both ways at path MTUs 1024 and 4096, sroce against rdma_rxe both
# ways, and through a wire that drops, reorders, duplicates and corrupts
# (first transmissions lent, resends copied); a QP moved to ERR while its
# lent packets wait in the NIC's queue completes them only once they left.
# The counters prove each path ran: tx_paged (sroce's lent packets) and
# iwarp_tx_spliced_bytes.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma tc
require_test_netdev
xfer=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/rc_xfer
[ -x "$xfer" ] || tap_skip_all "rc_xfer not built (make -C selftests)"
[ -n "${VM_HOST:-}" ] || tap_skip_all "needs two test VMs (VM_HOST unset)"
[ "${VM_WIRE:-}" = tap ] || tap_skip_all "needs the TAP wire (VM_WIRE=tap), not ${VM_WIRE:-none}"
modprobe sch_netem 2> /dev/null
modprobe sch_prio 2> /dev/null
me=$VM_HOST
kind=sroce

tap_cleanup() {
	tc qdisc del dev "$NETDEV" root 2> /dev/null
	dev_down "$kind" dev0
	ip link set "$NETDEV" mtu 1500
}

# OLD NEW: this host's device dev0 of kind NEW in place of OLD's, once
# the other host is done with it. (A step runs in a subshell: the caller
# keeps $kind.)
dev_now() {
	tcp_barrier && dev_down "$1" dev0 && mkdev "$2" dev0 "$NETDEV" && tcp_barrier
}

# MTU PATH_MTU: both hosts at MTU, the port at PATH_MTU.
mtu_both() {
	tcp_barrier && ip link set "$NETDEV" mtu "$1" &&
		wait_active_mtu dev0 "$2" && tcp_barrier
}

# SENDER ROUNDS BYTES [ARGS]: rc_xfer's verified rounds (WRITE + SEND of
# BYTES each), SENDER the client, the other host the server.
xfer_from() {
	local sender=$1 role=server server=192.0.2.$((13 - $1))
	shift
	[ "$me" = "$sender" ] && role=client
	peer_pair "$role" timeout 600 "$xfer" -s "$server" -n "$1" -z "$2" -- \
		timeout 600 "$xfer" -c "$server" -n "$1" -z "$2" "${@:3}"
}

# SENDER ROUNDS BYTES [ARGS]: xfer_from, and the sender's full packets
# went out from the user's pages, each first transmission at most once
# and most of them (a QP's first packets copy until its route is known);
# the server answers with small SENDs, which copy. Through loss
# (LOSSY=1, set around the step: a step runs in a subshell) at least a
# quarter: resent packets copy.
LOSSY=0
xfer_paged() {
	local p0 pmtu most n least
	[ "$me" = "$1" ] || { xfer_from "$@"; return; }
	p0=$(hw_counter dev0 tx_paged) || return 1
	pmtu=$(devinfo dev0 | awk '/active_mtu:/ { print $2; exit }')
	xfer_from "$@" || return 1
	most=$((2 * $2 * $3 / pmtu))
	least=$((most / 2))
	[ "$LOSSY" = 0 ] || least=$((most / 4))
	n=$(($(hw_counter dev0 tx_paged) - p0))
	echo "host$me: tx_paged $n, first transmissions of full packets $most"
	[ "$n" -le "$most" ] && [ "$n" -ge "$least" ]
}

# SENDER ROUNDS BYTES: xfer_from on siwarp, and the sender spliced most
# of the bytes to TCP rather than copying them.
xfer_spliced() {
	local s0 n
	[ "$me" = "$1" ] || { xfer_from "$@"; return; }
	s0=$(hw_counter dev0 iwarp_tx_spliced_bytes) || return 1
	xfer_from "$@" || return 1
	n=$(($(hw_counter dev0 iwarp_tx_spliced_bytes) - s0))
	echo "host$me: spliced $n bytes of $((2 * $2 * $3))"
	[ "$n" -ge $(($2 * $3)) ]
}

# host2 took host1's 4 KiB packets and placed them from the pages the
# NIC left them in.
received_paged() { [ "$me" = 1 ] || placed_from_pages dev0; }

lossy() { roce_netem "$NETDEV" delay 1ms loss 2% reorder 5% duplicate 1% corrupt 0.1%; }
# host1 sent through the loss: it resent packets.
resent() {
	local n
	[ "$me" = 1 ] || return 0
	n=$(hw_counter dev0 retransmits) || return 1
	echo "host$me: retransmits $n"
	[ "$n" -gt 0 ]
}

# One 64 KiB WRITE from host1, its packets held 2 s (times TIMEOUT_SCALE)
# in eth0's queue, its QP moved to ERR at once: the flush completion must
# wait for them (rc_xfer -e: no sooner than 3/4 of the delay).
flush_held() {
	local d=$((2 * TIMEOUT_SCALE)) server=192.0.2.12 p0 rc=0 seen spid
	if [ "$me" = 2 ]; then
		peer_pair server timeout 120 "$xfer" -s "$server" -p 7472 -e 0 -- :
		return
	fi
	p0=$(hw_counter dev0 tx_paged) || return 1
	roce_netem "$NETDEV" delay "${d}s" limit 10000 || return 1
	seen=$(mktemp) || return 1
	lent_held_shown 60 > "$seen" &
	spid=$!
	peer_pair client : -- \
		timeout 120 "$xfer" -c "$server" -p 7472 -z 65536 -e $((d * 750)) || rc=1
	wait "$spid" || rc=1
	echo "rdma res during the wait: $(head -1 "$seen")"
	rm -f "$seen"
	tc qdisc del dev "$NETDEV" root || rc=1
	echo "tx_paged: $p0 -> $(hw_counter dev0 tx_paged)"
	[ "$rc" = 0 ] && [ "$(hw_counter dev0 tx_paged)" -gt "$p0" ]
}

tap_plan 20
STEP_TIMEOUT=320
t "host$me: sroce dev0 on $NETDEV" mkdev sroce dev0 "$NETDEV" || tap_bail "no device"
STEP_TIMEOUT=600
t "16 x 1 MiB WRITE + SEND host1 to host2, checked, sent from the user's pages" \
	xfer_paged 1 16 1048576
t "16 x 1 MiB WRITE + SEND host2 to host1, checked, sent from the user's pages" \
	xfer_paged 2 16 1048576
t "32 x 64 KiB WRITE, READ back, SEND, checked" xfer_from 1 32 65536 -r
STEP_TIMEOUT=320
t "host$me: both hosts at MTU 9000 (path MTU 4096)" mtu_both 9000 4096
STEP_TIMEOUT=600
t "16 x 1 MiB WRITE + SEND host1 to host2 at path MTU 4096, from the user's pages" \
	xfer_paged 1 16 1048576
t "host2: payloads placed from the NIC's pages (rx_paged)" received_paged
STEP_TIMEOUT=320
t "host$me: both hosts at MTU 1500 (path MTU 1024)" mtu_both 1500 1024
t "host$me: netem loss 2%, reorder 5%, duplicate 1%, corrupt 0.1% on $NETDEV" lossy
STEP_TIMEOUT=600
LOSSY=1
t "16 x 1 MiB WRITE + SEND host1 to host2 through the loss, checked" \
	xfer_paged 1 16 1048576
LOSSY=0
t "host1: packets were resent" resent
STEP_TIMEOUT=320
t "host$me: no more loss" tc qdisc del dev "$NETDEV" root
t "QP to ERR with its lent packets in the NIC's queue: flushed once they left" flush_held
old=$kind
[ "$me" = 1 ] || kind=rxe
t "host$me: $kind dev0 anew (rdma_rxe on host2)" dev_now "$old" "$kind"
STEP_TIMEOUT=600
t "16 x 1 MiB WRITE + SEND sroce to rdma_rxe, checked, from the user's pages" \
	xfer_paged 1 16 1048576
t "16 x 1 MiB WRITE + SEND rdma_rxe to sroce, checked" xfer_from 2 16 1048576
STEP_TIMEOUT=320
old=$kind kind=siwarp
t "host$me: siwarp dev0 on $NETDEV" dev_now "$old" "$kind"
STEP_TIMEOUT=600
t "16 x 1 MiB WRITE + SEND siwarp host1 to host2, checked, spliced to TCP" \
	xfer_spliced 1 16 1048576
t "16 x 1 MiB WRITE + SEND siwarp host2 to host1, checked, spliced to TCP" \
	xfer_spliced 2 16 1048576
STEP_TIMEOUT=60
t "host$me: nothing left on dev0 (rdma res)" wait_for 20 res_clean dev0
