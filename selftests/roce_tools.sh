#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# timeout: 900
# Stock RDMA tools over one sroce device talking to itself, IPv4 and IPv6:
# libibverbs pingpongs (RC, UC, UD, SRQ) with buffer checks, rdma_cm tools
# (rping with data verification, ucmatose, udaddy), UD multicast over IPv4
# (mckey: every message must arrive, the IP group is joined and left; the
# kernel's rdma_cm refuses IPv6 groups on RoCE v2) and perftest
# bandwidth and latency for every operation, with and without rdma_cm (-R).
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma ibv_rc_pingpong rping ucmatose udaddy mckey ib_write_bw
require_test_netdev
ip4=$(ip -4 -o addr show dev "$NETDEV" | awk '{ sub("/.*", "", $4); print $4; exit }')
ip6=$(ip -6 -o addr show dev "$NETDEV" scope global | awk '{ sub("/.*", "", $4); print $4; exit }')
[ -n "$ip4" ] && [ -n "$ip6" ] || tap_skip_all "$NETDEV needs an IPv4 and a global IPv6 address"

tap_cleanup() { srdma_cleanup sroce0; }

gids() {
	g4=$(gid_index sroce0 "::ffff:$ip4") && g6=$(gid_index sroce0 "$ip6") &&
		[ -n "$g4" ] && [ -n "$g6" ] && echo "IPv4 GID $g4, IPv6 GID $g6"
}
pingpong() { # KIND GID
	pair timeout 60 "ibv_$1_pingpong" -d sroce0 -g "$2" -n 200 -c -- \
		timeout 60 "ibv_$1_pingpong" -d sroce0 -g "$2" -n 200 -c "$ip4"
}
rping_v() { # ADDR
	pair timeout 60 rping -s -a "$1" -V -C 20 -S 4000 -- \
		timeout 60 rping -c -a "$1" -V -C 20 -S 4000
}
cm_tool() { # TOOL ADDR
	pair timeout 60 "$1" -b "$2" -- timeout 60 "$1" -s "$2"
}
perf() { # TOOL GID|-R ARGS...
	local tool=$1 conn=(-x "$2")
	[ "$2" = -R ] && conn=(-R)
	shift 2
	# line-buffered: perftest's error lines (stderr) stay in place, not
	# ahead of its whole output, in a failed step's log
	pair timeout 90 stdbuf -oL "$tool" -d sroce0 "${conn[@]}" -F "$@" -- \
		timeout 90 stdbuf -oL "$tool" -d sroce0 "${conn[@]}" -F "$@" "$ip4"
}
in_group() { ip maddr show dev "$NETDEV" | grep -qw "$1"; }
not_in_group() { ! in_group "$1"; }
# The receiver joins GROUP (its QP is attached) and must get every one of
# the sender's messages; afterwards the netdev has left GROUP again.
mckey_() { # GROUP ADDR
	local rpid rc=0
	timeout 60 mckey -m "$1" -b "$2" -C 20 -S 200 &
	rpid=$!
	wait_for 20 in_group "$1" || rc=1
	sleep 1
	timeout 60 mckey -m "$1" -b "$2" -s -C 20 -S 200 || rc=1
	wait "$rpid" || rc=1
	wait_for 10 not_in_group "$1" || { echo "still in $1"; rc=1; }
	return "$rc"
}

plan=(rc uc ud srq)
tap_plan $((2 + 2 * ${#plan[@]} + 7 + 14))
t "sroce0 on $NETDEV" mkdev sroce sroce0 "$NETDEV" || tap_bail "no sroce0"
t "RoCE v2 GIDs for $ip4 and $ip6" gids || tap_bail "no GIDs"
gids > /dev/null
for k in "${plan[@]}"; do
	t "ibv_${k}_pingpong, IPv4 GID, buffers checked" pingpong "$k" "$g4"
	t "ibv_${k}_pingpong, IPv6 GID, buffers checked" pingpong "$k" "$g6"
done
t "rping -V over IPv4" rping_v "$ip4"
t "rping -V over IPv6" rping_v "$ip6"
t "ucmatose over IPv4" cm_tool ucmatose "$ip4"
t "ucmatose over IPv6" cm_tool ucmatose "$ip6"
t "udaddy over IPv4" cm_tool udaddy "$ip4"
t "udaddy over IPv6" cm_tool udaddy "$ip6"
t "mckey: UD multicast to 239.1.2.3 over IPv4" mckey_ 239.1.2.3 "$ip4"
STEP_TIMEOUT=200
for tool in ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat; do
	size=(-s 65536)
	case $tool in *_lat) size=(-s 64) ;; ib_atomic_bw) size=() ;; esac
	t "$tool ${size[*]}" perf "$tool" "$g4" "${size[@]}" -n 200
	t "$tool ${size[*]} over rdma_cm (-R)" perf "$tool" -R "${size[@]}" -n 200
done
