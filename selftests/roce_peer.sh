# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Two hosts on one wire run the same stock tools against each other: against
# rdma_rxe each tool with either host as server, srdma against srdma each
# tool once, the server alternating between the hosts (t_pass). Sourced by
# roce_two_hosts.sh and roce_interop_rxe.sh after they set PEER_KIND (what
# host2 runs: sroce or rxe); host1 always runs srdma's sroce. srdma against
# srdma runs at an MTU of 9000 (RoCE's 4096-byte path MTU, whose packets
# virtio-net hands over in pages: sroce checks and places them there),
# against rdma_rxe at 1500.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma ibv_rc_pingpong rping ib_write_bw
require_test_netdev
[ -n "${VM_HOST:-}" ] || tap_skip_all "needs two test VMs (VM_HOST unset)"
me=$VM_HOST
kind=sroce
[ "$me" = 2 ] && kind=$PEER_KIND
mtu=1500
[ "$PEER_KIND" = sroce ] && PEER_BOTH_WAYS=0 mtu=9000

tap_cleanup() {
	if [ "$kind" = rxe ]; then
		rdma link del dev0 2> /dev/null
		rmmod rdma_rxe 2> /dev/null
	else
		srdma_cleanup dev0
	fi
	ip link set "$NETDEV" mtu 1500
}

role() { [ "$1" = "$me" ] && echo server || echo client; }

gids() {
	g4=$(gid_index dev0 "::ffff:192.0.2.$((10 + me))") &&
		g6=$(gid_index dev0 "2001:db8::$((10 + me))") &&
		[ -n "$g4" ] && [ -n "$g6" ]
}
# The pingpongs exchange QP numbers over TCP on IPv4; the GID picks the
# RoCE v2 address family of the RDMA traffic itself.
pingpong() { # SERVER_HOST KIND GID SERVER_IPV4
	peer_pair "$(role "$1")" \
		timeout 60 "ibv_$2_pingpong" -d dev0 -g "$3" -n 100 -c -- \
		timeout 60 "ibv_$2_pingpong" -d dev0 -g "$3" -n 100 -c "$4"
}
rping_v() { # SERVER_HOST ADDR_OF_SERVER
	peer_pair "$(role "$1")" \
		run_watched 90 rping -s -a "$2" -V -C 20 -S 4000 -- \
		rping_client 90 -a "$2" -V -C 20 -S 4000
}
# Without rdma_cm, perftest gives the QP its own transport timeout: 67 ms
# (-u 14), which a debug kernel's guest, stalled by the emulator for half a
# second, exceeds eight times in a row (IBV_WC_RETRY_EXC_ERR) while nothing
# was lost. Scaled time limits (SRDMA_TIMEOUT_SCALE) get about a second.
perf_timeout=()
[ "$TIMEOUT_SCALE" = 1 ] || perf_timeout=(-u 18)
perf() { # SERVER_HOST TOOL -R|GID ARGS...
	local host=$1 tool=$2 conn=(-x "$3" "${perf_timeout[@]}")
	[ "$3" = -R ] && conn=(-R)
	shift 3
	# line-buffered: perftest's error lines (stderr) stay in place
	peer_pair "$(role "$host")" \
		timeout 80 stdbuf -oL "$tool" -d dev0 "${conn[@]}" -F "$@" -- \
		timeout 120 stdbuf -oL "$tool" -d dev0 "${conn[@]}" -F "$@" "192.0.2.$((10 + host))"
}

tools=(ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat)
tap_plan $((3 + $(peer_passes) * (4 + 2 + 2 * ${#tools[@]}) + (mtu > 1500)))
# a step may serve up to three times (peer_pair)
STEP_TIMEOUT=300
t "host$me: $NETDEV at MTU $mtu" ip link set "$NETDEV" mtu "$mtu" || tap_bail "no MTU $mtu"
t "host$me: $kind device dev0 on $NETDEV" mkdev "$kind" dev0 "$NETDEV" || tap_bail "no device"
t "host$me: RoCE v2 GIDs" gids || tap_bail "no GIDs"
gids
for srv in 1 2; do
	# the server's own address; the client dials it
	s4=192.0.2.$((10 + srv)) s6=2001:db8::$((10 + srv))
	t_pass_begin
	t_pass "$srv" "rc pingpong IPv4, server host$srv" pingpong "$srv" rc "$g4" "$s4"
	t_pass "$srv" "rc pingpong IPv6, server host$srv" pingpong "$srv" rc "$g6" "$s4"
	t_pass "$srv" "ud pingpong, server host$srv" pingpong "$srv" ud "$g4" "$s4"
	t_pass "$srv" "uc pingpong, server host$srv" pingpong "$srv" uc "$g4" "$s4"
	t_pass "$srv" "rping -V IPv4, server host$srv" rping_v "$srv" "$s4"
	t_pass "$srv" "rping -V IPv6, server host$srv" rping_v "$srv" "$s6"
	for tool in "${tools[@]}"; do
		size=(-s 65536)
		case $tool in *_lat) size=(-s 64) ;; ib_atomic_bw) size=() ;; esac
		t_pass "$srv" "$tool, server host$srv" perf "$srv" "$tool" "$g4" "${size[@]}" -n 100
		t_pass "$srv" "$tool -R, server host$srv" perf "$srv" "$tool" -R "${size[@]}" -n 100
	done
done
if [ "$mtu" -gt 1500 ]; then
	t "host$me: payloads read in place from pages" placed_from_pages dev0
fi
