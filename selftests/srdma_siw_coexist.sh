#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# srdma's siwarp must coexist with the upstream siw driver (built from the
# distro's kernel source by tools/siw-peer.sh): both on the same netdev,
# netdev events reach both, and unloading srdma leaves siw0 working.
# Own VM: it loads an out-of-tree upstream module.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma ibv_devinfo ip
require_test_netdev
siw_ko=${SIW_KO:-$REPO/build/siw/siw.ko}
[ -r "$siw_ko" ] || tap_skip_all "$siw_ko not built (run tools/siw-peer.sh)"
module_absent siw || tap_skip_all "siw already loaded"
mtu0=$(cat "/sys/class/net/$NETDEV/mtu")

tap_cleanup() {
	ip link set "$NETDEV" mtu "$mtu0"
	ip link set "$NETDEV" up
	srdma_cleanup sroce0 siw0x
	rdma_dev_exists siw0 && rdma link del siw0
	rmmod siw
}

all_active() {
	local d
	for d in "$@"; do wait_port_state "$d" PORT_ACTIVE || return 1; done
}
netdev_events() {
	ip link set "$NETDEV" mtu 1400 && ip link set "$NETDEV" down &&
		wait_port_state siw0 PORT_DOWN && wait_port_state sroce0 PORT_DOWN &&
		ip link set "$NETDEV" up && ip link set "$NETDEV" mtu "$mtu0" &&
		all_active siw0 sroce0 siw0x
}
srdma_devs_gone() { rdma_dev_gone sroce0 && rdma_dev_gone siw0x; }

tap_plan 13
t "load siw.ko (upstream peer)" load_siw || tap_bail "siw.ko did not load"
t "rdma link add siw0 type siw netdev $NETDEV" link_add siw0 siw "$NETDEV"
t "siw0 PORT_ACTIVE" wait_port_state siw0 PORT_ACTIVE
t "load srdma.ko next to siw" load_srdma || tap_bail "srdma.ko did not load"
t "sroce0 and siw0x on $NETDEV next to siw0" bash -c "rdma link add sroce0 type sroce netdev $NETDEV && rdma link add siw0x type siwarp netdev $NETDEV"
t "siw0, sroce0, siw0x all PORT_ACTIVE" all_active siw0 sroce0 siw0x
t "siw0x transport iWARP" transport_is siw0x iWARP
t "MTU change and link down/up reach siw0 and srdma" netdev_events
t "rmmod srdma" unload_srdma
t "srdma devices gone, siw0 kept" bash -c "$(declare -f rdma_dev_exists rdma_dev_gone srdma_devs_gone); srdma_devs_gone && rdma_dev_exists siw0"
t "siw0 PORT_ACTIVE after rmmod srdma" port_state_is siw0 PORT_ACTIVE
t "pyverbs opens siw0 and allocates a PD" pyverbs_pd siw0
t "rdma link del siw0 removes it" link_del_gone siw0
