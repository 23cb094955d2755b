#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# timeout: 900
# Stock rdma_cm tools over one siwarp device talking to itself through
# kernel TCP, IPv4 and IPv6: rping with data verification, ucmatose,
# rdma_server/rdma_client, and perftest over rdma_cm (-R, IPv4: perftest
# resolves no IPv6 there) for every operation, atomics included.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma rping ucmatose rdma_server rdma_client ib_write_bw
require_test_netdev
ip4=$(ip -4 -o addr show dev "$NETDEV" | awk '{ sub("/.*", "", $4); print $4; exit }')
ip6=$(ip -6 -o addr show dev "$NETDEV" scope global | awk '{ sub("/.*", "", $4); print $4; exit }')
[ -n "$ip4" ] && [ -n "$ip6" ] || tap_skip_all "$NETDEV needs an IPv4 and a global IPv6 address"

tap_cleanup() { srdma_cleanup siwarp0; }

rping_v() { # ADDR
	pair timeout 60 rping -s -a "$1" -V -C 20 -S 4000 -- \
		timeout 60 rping -c -a "$1" -V -C 20 -S 4000
}
ucmatose_() { # ADDR
	pair timeout 60 ucmatose -b "$1" -- timeout 60 ucmatose -s "$1"
}
rdma_sc() { # ADDR
	pair timeout 60 rdma_server -s "$1" -- timeout 60 rdma_client -s "$1"
}
perf() { # TOOL ADDR ARGS...
	local tool=$1 addr=$2
	shift 2
	# line-buffered: perftest's error lines (stderr) stay in place, not
	# ahead of its whole output, in a failed step's log
	pair timeout 90 stdbuf -oL "$tool" -d siwarp0 -R -F "$@" -- \
		timeout 90 stdbuf -oL "$tool" -d siwarp0 -R -F "$@" "$addr"
}
no_leaks() {
	local r
	r=$(timeout 20 rdma res show siwarp0) || return 1
	echo "$r"
	echo "$r" | grep -Eq 'pd 0 cq 0 qp 0 cm_id 0 mr 0'
}

tools=(ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat)
tap_plan $((1 + 6 + ${#tools[@]} + 1))
t "siwarp0 on $NETDEV" mkdev siwarp siwarp0 "$NETDEV" || tap_bail "no siwarp0"
for a in "$ip4" "$ip6"; do
	v=IPv4
	[ "$a" = "$ip6" ] && v=IPv6
	t "rping -V over $v" rping_v "$a"
	t "ucmatose over $v" ucmatose_ "$a"
	t "rdma_server/rdma_client over $v" rdma_sc "$a"
done
STEP_TIMEOUT=200
for tool in "${tools[@]}"; do
	size=(-s 65536)
	case $tool in *_lat) size=(-s 64) ;; ib_atomic_bw) size=() ;; esac
	# perftest's rdma_cm mode resolves IPv4 only
	t "$tool ${size[*]} over IPv4" perf "$tool" "$ip4" "${size[@]}" -n 200
done
t "no verbs objects left behind" wait_for 10 no_leaks
