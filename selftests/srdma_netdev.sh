#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# srdma follows its netdev: MTU changes set the RoCE active_mtu (largest IB
# MTU that fits after the headers), carrier down/up moves the ports between
# PORT_DOWN and PORT_ACTIVE, unregistering the netdev (deleting a veth)
# removes its devices, and rmmod with devices present cleans up.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma ibv_devinfo ip
require_test_netdev
mtu0=$(cat "/sys/class/net/$NETDEV/mtu")
ip6s=$(ip -6 -o addr show dev "$NETDEV" scope global | awk '{ print $4 }')

# An MTU under 1280 (or a link down) drops the netdev's IPv6 addresses:
# give them back for the tests that follow in the same VM.
tap_cleanup() {
	local a
	ip link set "$NETDEV" mtu "$mtu0"
	ip link set "$NETDEV" up
	for a in $ip6s; do
		ip -6 addr replace "$a" dev "$NETDEV" nodad
	done
	ip link del vethA 2> /dev/null
	srdma_cleanup sroce0 siw0x sroce1 siw1x
}

set_mtu() { ip link set "$NETDEV" mtu "$1"; }
mtu_gives() { set_mtu "$1" && wait_active_mtu sroce0 "$2"; }
carrier() { ip link set "$NETDEV" "$1" && wait_port_state sroce0 "$2"; }

veth_devices() {
	ip link add vethA type veth peer name vethB &&
		ip addr add 198.51.100.1/24 dev vethA &&
		ip link set vethA up && ip link set vethB up &&
		link_add sroce1 sroce vethA && link_add siw1x siwarp vethA &&
		wait_port_state sroce1 PORT_ACTIVE && wait_port_state siw1x PORT_ACTIVE
}

veth_del_gone() { ip link del vethA && wait_dev_gone sroce1; }

tap_plan 16
t "load srdma.ko" load_srdma || tap_bail "srdma.ko did not load"
t "sroce0 and siw0x on $NETDEV" bash -c "rdma link add sroce0 type sroce netdev $NETDEV && rdma link add siw0x type siwarp netdev $NETDEV"
t "MTU 1400: sroce0 active_mtu 1024" mtu_gives 1400 1024
t "MTU 1000: sroce0 active_mtu 512" mtu_gives 1000 512
t "MTU 9000: sroce0 active_mtu 4096" mtu_gives 9000 4096
t "MTU back to $mtu0: sroce0 active_mtu 1024" mtu_gives "$mtu0" 1024
t "link down: sroce0 PORT_DOWN" carrier down PORT_DOWN
t "link down: siw0x PORT_DOWN" wait_port_state siw0x PORT_DOWN
t "link up: sroce0 PORT_ACTIVE" carrier up PORT_ACTIVE
t "link up: siw0x PORT_ACTIVE" wait_port_state siw0x PORT_ACTIVE
t "sroce1 and siw1x on a new veth, ACTIVE" veth_devices
t "deleting the veth removes sroce1" veth_del_gone
t "deleting the veth removes siw1x" wait_dev_gone siw1x
t "sroce0 still PORT_ACTIVE" port_state_is sroce0 PORT_ACTIVE
t "rmmod srdma with sroce0 and siw0x present" unload_srdma
t "no srdma device left" bash -c '! ls /sys/class/infiniband | grep -E "^(sroce0|siw0x|sroce1|siw1x)$"'
