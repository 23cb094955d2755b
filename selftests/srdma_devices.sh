#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# srdma device lifecycle: load, create one RoCEv2 (sroce) and one iWARP
# (siwarp) device on the test netdev, check what user space sees (port,
# transport, link layer, the IPv4-mapped RoCE v2 GID, `rdma link show`, a PD
# through libibverbs), delete them, unload.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma ibv_devinfo ip
require_test_netdev
ip4=$(netdev_ip4 "$NETDEV")
[ -n "$ip4" ] || tap_skip_all "$NETDEV has no IPv4 address"

tap_cleanup() { srdma_cleanup sroce0 siw0x; }

tap_plan 20
t "load srdma.ko" load_srdma || tap_bail "srdma.ko did not load"
t "rdma link add sroce0 type sroce netdev $NETDEV" link_add sroce0 sroce "$NETDEV"
t "rdma link add siw0x type siwarp netdev $NETDEV" link_add siw0x siwarp "$NETDEV"
t "rdma link show: sroce0 on $NETDEV" link_shows sroce0 "$NETDEV"
t "rdma link show: siw0x on $NETDEV" link_shows siw0x "$NETDEV"
t "sroce0 port PORT_ACTIVE" wait_port_state sroce0 PORT_ACTIVE
t "sroce0 transport InfiniBand" transport_is sroce0 InfiniBand
t "sroce0 link_layer Ethernet" link_layer_is sroce0 Ethernet
t "sroce0 has RoCE v2 GID ::ffff:$ip4" has_gid sroce0 "::ffff:$ip4" "RoCE v2"
t "sroce0 active_mtu 1024 at MTU 1500" active_mtu_is sroce0 1024
t "siw0x port PORT_ACTIVE" wait_port_state siw0x PORT_ACTIVE
t "siw0x transport iWARP" transport_is siw0x iWARP
t "siw0x link_layer Ethernet" link_layer_is siw0x Ethernet
t "pyverbs opens sroce0 and allocates a PD" pyverbs_pd sroce0
t "pyverbs opens siw0x and allocates a PD" pyverbs_pd siw0x
t "rdma link del sroce0 removes it" link_del_gone sroce0
t "rdma link del siw0x removes it" link_del_gone siw0x
t "rdma link show no longer lists them" bash -c '! rdma link show | grep -E "^link (sroce0|siw0x)/"'
t "rmmod srdma" unload_srdma
t "srdma is unloaded" module_absent srdma
