#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The TAP wire between two VMs (tools/vm/run.sh with VM_WIRE=tap): a
# bridge on this host with one TAP device per VM, each with a virtio-net
# header, so that QEMU offers the guests checksum offload, scatter-gather
# and TSO, as every real NIC has. The stream wire that run.sh uses by
# default carries no such header, and its guests get none of them.
#
#   tools/vm/tap-wire.sh up NAME     bridge NAMEb, TAP devices NAMEt1 and
#                                    NAMEt2 (NAME: at most 12 bytes)
#   tools/vm/tap-wire.sh down NAME   remove them (whatever of them exists)
#   tools/vm/tap-wire.sh probe       can this host make one? (root, TAP and
#                                    bridge support); says why not, exit 1
#
# The host takes no part in the traffic: no addresses on the wire, and
# netfilter does not see its frames.
set -euo pipefail

down() {
	local d
	for d in "$1t1" "$1t2" "$1b"; do
		ip link del "$d" 2> /dev/null || true
	done
}

up() {
	local i
	[[ "$1" =~ ^[a-z0-9]{1,12}$ ]] || { echo "bad wire name: $1" >&2; return 1; }
	# MTU 9000 all along: the guests' jumbo frames (RoCE's 4096-byte
	# path MTU) must pass, and a bridge drops what exceeds a port's MTU.
	ip link add "$1b" mtu 9000 type bridge stp_state 0 forward_delay 0 || return 1
	ip link set "$1b" type bridge nf_call_iptables 0 nf_call_ip6tables 0 \
		nf_call_arptables 0 2> /dev/null || true
	sysctl -qw "net.ipv6.conf.$1b.disable_ipv6=1" 2> /dev/null || true
	for i in 1 2; do
		ip tuntap add dev "$1t$i" mode tap vnet_hdr || return 1
		sysctl -qw "net.ipv6.conf.$1t$i.disable_ipv6=1" 2> /dev/null || true
		ip link set "$1t$i" mtu 9000 master "$1b" up || return 1
	done
	ip link set "$1b" up
}

case "${1:-}" in
up)
	[ "$#" = 2 ] || exec "$0"
	up "$2" || { down "$2"; echo "tap-wire: cannot make the TAP wire (root, TAP and bridge support needed)" >&2; exit 1; }
	;;
down)
	[ "$#" = 2 ] || exec "$0"
	down "$2"
	;;
probe)
	name=srprobe$$
	name=${name:0:12}
	if [ "$(id -u)" != 0 ]; then
		echo "needs root"
		exit 1
	fi
	if ! up "$name" 2> /dev/null; then
		down "$name"
		echo "no TAP or bridge support on this host"
		exit 1
	fi
	down "$name"
	;;
*)
	sed -n '8,13s/^# \{0,1\}//p' "$0" >&2
	exit 2
	;;
esac
