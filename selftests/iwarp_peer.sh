# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Two hosts on one wire run rdma_cm tools against each other over iWARP,
# with MPA CRC off and on: against siw each tool with either host as
# server, siwarp against siwarp each tool once, the server alternating
# between the hosts (t_pass).
# Sourced by iwarp_two_hosts.sh and iwarp_interop_siw.sh after they set
# PEER_KIND (what host2 runs: siwarp or siw); host1 always runs srdma's
# siwarp and switches CRC with its iwarp_crc parameter: siw never asks for
# CRC but must use it when asked (RFC 5044), so both directions are covered.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma rping ib_write_bw
require_test_netdev
[ -n "${VM_HOST:-}" ] || tap_skip_all "needs two test VMs (VM_HOST unset)"
me=$VM_HOST
kind=siwarp
[ "$me" = 2 ] && kind=$PEER_KIND
[ "$PEER_KIND" = siwarp ] && PEER_BOTH_WAYS=0
[ "$PEER_KIND" != siw ] || [ -r "${SIW_KO:-$REPO/build/siw/siw.ko}" ] ||
	tap_skip_all "upstream siw not built (run tools/siw-peer.sh)"

tap_cleanup() {
	if [ "$kind" = siw ]; then
		rdma link del dev0 2> /dev/null
		rmmod siw 2> /dev/null
	else
		srdma_cleanup dev0
	fi
}

role() { [ "$1" = "$me" ] && echo server || echo client; }

rping_v() { # SERVER_HOST ADDR_OF_SERVER
	peer_pair "$(role "$1")" \
		run_watched 90 rping -s -a "$2" -V -C 20 -S 4000 -- \
		rping_client 90 -a "$2" -V -C 20 -S 4000
}
perf() { # SERVER_HOST TOOL ARGS...
	local host=$1 tool=$2
	shift 2
	# line-buffered: perftest's error lines (stderr) stay in place
	peer_pair "$(role "$host")" \
		timeout 80 stdbuf -oL "$tool" -d dev0 -R -F "$@" -- \
		timeout 120 stdbuf -oL "$tool" -d dev0 -R -F "$@" "192.0.2.$((10 + host))"
}
counter() { hw_counter dev0 "$1"; }
set_crc() { echo "$1" > /sys/module/srdma/parameters/iwarp_crc; }
# host1 counts its connections; with CRC asked for, every one has CRC
crc_used() { # 0|1 CONNECTIONS_BEFORE CRC_CONNECTIONS_BEFORE
	local c k
	c=$(counter iwarp_connections) k=$(counter iwarp_crc_connections)
	echo "connections $2 -> $c, with CRC $3 -> $k"
	[ "$c" -gt "$2" ] || return 1
	if [ "$1" = 1 ]; then [ $((k - $3)) = $((c - $2)) ]; else [ "$k" = "$3" ]; fi
}
barrier() { # NAME: both hosts reach this step before either goes on
	peer_pair "$(role 1)" timeout 60 rping -s -a 192.0.2.11 -C 1 -- \
		timeout 60 rping -c -a 192.0.2.11 -C 1
}

tools=(ib_send_bw ib_write_bw ib_read_bw ib_send_lat ib_write_lat ib_read_lat)
[ "$PEER_KIND" = siwarp ] && tools+=(ib_atomic_bw)
tap_plan $((1 + 2 * (2 + $(peer_passes) * (1 + ${#tools[@]})) + 2 + 1))
# a step may serve up to three times (peer_pair)
STEP_TIMEOUT=300
t "host$me: $kind device dev0 on $NETDEV" mkdev "$kind" dev0 "$NETDEV" || tap_bail "no device"
for crc in 0 1; do
	[ "$me" = 1 ] && set_crc "$crc"
	t "host$me: both hosts ready for CRC $crc" barrier
	[ "$me" = 1 ] && { c0=$(counter iwarp_connections); k0=$(counter iwarp_crc_connections); }
	for srv in 1 2; do
		t_pass_begin "$crc"
		t_pass "$srv" "rping -V IPv4, CRC $crc, server host$srv" rping_v "$srv" "192.0.2.$((10 + srv))"
		for tool in "${tools[@]}"; do
			size=(-s 65536)
			case $tool in *_lat) size=(-s 64) ;; ib_atomic_bw) size=() ;; esac
			t_pass "$srv" "$tool ${size[*]}, CRC $crc, server host$srv" perf "$srv" "$tool" "${size[@]}" -n 100
		done
	done
	if [ "$me" = 1 ]; then
		t "host1: every connection had CRC $crc" crc_used "$crc" "$c0" "$k0"
	else
		t "host2: (host1 checks CRC use)" true
	fi
done
for srv in 1 2; do
	t "rping -V IPv6, server host$srv" rping_v "$srv" "2001:db8::$((10 + srv))"
done
t "host$me: no verbs objects left behind" wait_for 10 sh -c \
	"timeout 20 rdma res show dev0 | grep -q 'pd 0 cq 0 qp 0 cm_id 0 mr 0'"
