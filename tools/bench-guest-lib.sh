# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# What the bench's guest scripts (tools/bench-guest.sh and
# tools/bench-loopback-guest.sh) share: the CPU counters they record per
# point, the wire's MTU, how a system's device is put on eth0, and how
# perftest connects.
# Sourced after selftests/rdma_lib.sh.

# busy, total and kernel (system, irq, softirq) jiffies of all CPUs
cpu_now() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8, $4 + $7 + $8 }' /proc/stat; }

# wire_mtu [MTU]: eth0's MTU, if one is given (BENCH_MTU, PROFILE_MTU;
# before any device is put on it, so each takes its path MTU from it)
wire_mtu() {
	[ -z "${1:-}" ] || ip link set eth0 mtu "$1"
}

# wire_offloads [FEATURES]: eth0's features set with ethtool -K, if any
# are given (BENCH_OFFLOADS, as "tx-udp-segmentation on")
wire_offloads() {
	[ -z "${1:-}" ] && return 0
	# shellcheck disable=SC2086 # a list of ethtool words
	timeout 20 ethtool -K eth0 $1 && timeout 20 ethtool -k eth0 | grep -E "^(${1// /|}):"
}

# send_ev_iters SECS SIZE RATE: the SENDs of SIZE bytes that fill SECS
# seconds at RATE bytes/s, for perftest's event mode (-e), which has no
# duration mode and sends a count
send_ev_iters() {
	echo $((($1 * $3 + $2 - 1) / $2))
}

# SYSTEM: its device dev0 on eth0 alone (none for tcp); sroce-pkt is
# sroce sending packet by packet, its GSO trains off
setup() {
	rdma_all_down dev0
	case $1 in
	tcp) return 0 ;;
	sroce-pkt)
		mkdev sroce dev0 eth0 &&
			echo 0 > /sys/module/srdma/parameters/roce_gso_trains
		;;
	*) mkdev "$1" dev0 eth0 ;;
	esac
}

# How perftest connects for SYSTEM from this host's IPv4 address ADDR:
# RoCE by the GID of ADDR, iWARP through rdma_cm.
conn_args() { # SYSTEM ADDR
	case $1 in
	sroce | sroce-pkt | rxe) echo "-x $(gid_index dev0 "::ffff:$2")" ;;
	*) echo "-R" ;;
	esac
}
