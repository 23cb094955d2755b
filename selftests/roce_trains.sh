#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# timeout: 900
# sroce's GSO trains (Documentation/roce.rst, "GSO trains") on one device
# talking to itself: lo takes a UDP GSO skb whole, and the receiving UDP
# layer cuts it back into its RoCE packets, each of which must pass the
# ICRC sealed over the IP ID and lengths its segment was predicted to
# get. Verified transfers (every byte checked) must go through trains
# (the counters say how many, and that most full packets rode in one),
# at path MTU 1024 and 4096, over IPv4 and IPv6, on UC, through a lossy,
# reordering, duplicating and corrupting lo, and with their payloads lent
# (roce_lend_local=1); with the parameter off no train may leave; UD never
# trains.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma tc ibv_uc_pingpong ibv_ud_pingpong
require_test_netdev
xfer=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/rc_xfer
[ -x "$xfer" ] || tap_skip_all "rc_xfer not built (make -C selftests)"
ip4=$(netdev_ip4 "$NETDEV")
ip6=$(ip -6 -o addr show dev "$NETDEV" scope global | awk '{ sub("/.*", "", $4); print $4; exit }')
[ -n "$ip4" ] || tap_skip_all "$NETDEV needs an IPv4 address"
modprobe sch_netem 2> /dev/null

TRAINS=/sys/module/srdma/parameters/roce_gso_trains
LEND_LOCAL=/sys/module/srdma/parameters/roce_lend_local
mtu0=$(cat "/sys/class/net/$NETDEV/mtu")

tap_cleanup() {
	tc qdisc del dev lo root 2> /dev/null
	[ -w "$TRAINS" ] && echo 1 > "$TRAINS"
	[ -w "$LEND_LOCAL" ] && echo 0 > "$LEND_LOCAL"
	ip link set "$NETDEV" mtu "$mtu0" 2> /dev/null
	srdma_cleanup sroce0
}

trains() { hw_counter sroce0 tx_trains; }
train_pkts() { hw_counter sroce0 tx_train_packets; }
port_mtu() { devinfo sroce0 | awk '/active_mtu:/ { print $2; exit }'; }

# ROUNDS BYTES ADDR [-r]: rc_xfer's verified WRITE + SEND (and READ) rounds
xfer() {
	pair timeout 300 "$xfer" -s "$3" -n "$1" -z "$2" -- \
		timeout 300 "$xfer" -c "$3" -n "$1" -z "$2" "${@:4}"
}

# A verified transfer whose packets went mostly in trains: of its WRITE
# and SEND packets (a WRITE's first, longer by its RETH, goes alone) at
# least 3/4, at least $avg (8) a train on average, and no more than were
# sent once unless the requester went back (resent packets go in trains
# too).
xfer_trains() { # ROUNDS BYTES ADDR [-r]
	local t0 p0 r0 mtu pkts t n r
	t0=$(trains) && p0=$(train_pkts) && mtu=$(port_mtu) &&
		r0=$(hw_counter sroce0 retransmits) || return 1
	pkts=$((2 * $1 * $2 / mtu))
	xfer "$@" || return 1
	t=$(($(trains) - t0)) && n=$(($(train_pkts) - p0)) &&
		r=$(($(hw_counter sroce0 retransmits) - r0))
	echo "path MTU $mtu: $n of $pkts packets in $t trains, $r go-backs"
	hw_counters_nonzero sroce0
	[ "$t" -gt 0 ] && [ "$n" -ge $((3 * pkts / 4)) ] && [ "$n" -ge $((${avg:-8} * t)) ] &&
		{ [ "$r" -gt 0 ] || [ "$n" -le "$pkts" ]; }
}

# The netdev's MTU, and the port's active MTU following it
set_mtu() { # NETDEV_MTU PORT_MTU
	ip link set "$NETDEV" mtu "$1" && wait_active_mtu sroce0 "$2"
}

# ibv_uc_pingpong or ibv_ud_pingpong of SIZE bytes, -c checking every
# byte: UC's SENDs ride in trains; UD sends a packet a message, never one
pingpong_trains() { # uc|ud SIZE
	local t0
	t0=$(trains) || return 1
	pingpong_checked "$1" sroce0 "$g4" "$2" "$ip4" || return 1
	echo "tx_trains: $t0 -> $(trains)"
	if [ "$1" = uc ]; then
		[ "$(trains)" -gt "$t0" ]
	else
		[ "$(trains)" -eq "$t0" ]
	fi
}

# roce_lend_local=1: RC trains carry the user's pages (their first
# transmissions; lo's receiver gets a copy the stack makes), checked:
# most packets of the trains lent, and no more than were sent once (a
# WRITE's first packet is lent alone). A lent packet takes two of an
# skb's 17 fragments: 8 a train at most.
lent_trains() {
	local p0 t0 rc p n pkts avg=4
	p0=$(hw_counter sroce0 tx_paged) && t0=$(train_pkts) &&
		pkts=$((2 * 8 * 1048576 / $(port_mtu))) || return 1
	echo 1 > "$LEND_LOCAL" || return 1
	xfer_trains 8 1048576 "$ip4"
	rc=$?
	echo 0 > "$LEND_LOCAL" || return 1
	p=$(($(hw_counter sroce0 tx_paged) - p0)) && n=$(($(train_pkts) - t0))
	echo "tx_paged +$p, tx_train_packets +$n, of $pkts packets"
	[ "$rc" -eq 0 ] && [ "$p" -ge $((3 * n / 4)) ] && [ "$p" -le "$pkts" ]
}

# roce_gso_trains=0: the same transfer, packet by packet
trains_off() {
	local t0 rc
	t0=$(trains) || return 1
	echo 0 > "$TRAINS" || return 1
	xfer 2 262144 "$ip4"
	rc=$?
	echo 1 > "$TRAINS" || return 1
	echo "tx_trains: $t0 -> $(trains)"
	[ "$rc" -eq 0 ] && [ "$(trains)" -eq "$t0" ]
}

lossy() { roce_netem lo delay 1ms loss 2% reorder 5% duplicate 1% corrupt 0.1%; }

# Whole trains are lost, reordered, duplicated, corrupted: the requester
# resends, and every byte still arrives once
through_loss() {
	local r0
	r0=$(hw_counter sroce0 retransmits) || return 1
	xfer_trains 8 1048576 "$ip4" && xfer_trains 16 65536 "$ip4" -r || return 1
	tc -s qdisc show dev lo
	echo "retransmits: $r0 -> $(hw_counter sroce0 retransmits)"
	[ "$(hw_counter sroce0 retransmits)" -gt "$r0" ]
}

# No packet of a train failed its ICRC (nothing corrupts them yet)
no_crc_drops() {
	local n
	n=$(hw_counter sroce0 rx_bad_crc) || return 1
	echo "rx_bad_crc $n"
	[ "$n" -eq 0 ]
}

STEP_TIMEOUT=400
tap_plan 15
t "sroce0 on $NETDEV" mkdev sroce sroce0 "$NETDEV" || tap_bail "no sroce0"
g4=$(gid_index sroce0 "::ffff:$ip4")
t "8 x 1 MiB WRITE + SEND in trains, checked (path MTU 1024)" xfer_trains 8 1048576 "$ip4"
t "64 KiB WRITE + READ back + SEND rounds in trains, checked" xfer_trains 16 65536 "$ip4" -r
t "odd sizes: 100,000-byte rounds, a short last packet, checked" xfer_trains 8 100000 "$ip4"
t "no packet of a train failed its ICRC" no_crc_drops
if [ -n "$ip6" ]; then
	t "8 x 1 MiB over IPv6 in trains, checked" xfer_trains 8 1048576 "$ip6"
else
	t_skip "8 x 1 MiB over IPv6 in trains" "$NETDEV has no global IPv6 address"
fi
t "UC SENDs in trains, checked" pingpong_trains uc 16384
t "UD: one packet a message, no train" pingpong_trains ud 1024
t "roce_lend_local=1: trains of lent payloads through lo, checked" lent_trains
t "roce_gso_trains=0: no trains, checked" trains_off
t "$NETDEV at MTU 9000: the port at 4096" set_mtu 9000 4096
t "8 x 1 MiB WRITE + SEND in trains, checked (path MTU 4096)" xfer_trains 8 1048576 "$ip4"
t "back to MTU $mtu0" set_mtu "$mtu0" 1024
STEP_TIMEOUT=800
t "netem loss 2%, reorder 5%, duplicate 1%, corrupt 0.1% on lo: trains checked through it" \
	eval 'lossy && through_loss'
STEP_TIMEOUT=60
t "nothing left on sroce0 (rdma res)" wait_for 20 res_clean sroce0
