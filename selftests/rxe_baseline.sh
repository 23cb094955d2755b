#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# Harness smoke test with the distro's rdma_rxe: proves the VM, the RDMA
# user space and the TAP plumbing work, independent of srdma. Needs its own
# VM: srdma refuses to share a kernel with rdma_rxe.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma ibv_devinfo ibv_rc_pingpong ip
require_test_netdev
modinfo rdma_rxe > /dev/null 2>&1 || tap_skip_all "rdma_rxe not available"
module_absent srdma || tap_skip_all "srdma is loaded"

ip4=$(netdev_ip4 "$NETDEV")
tap_cleanup() {
	rdma_dev_exists rxe0 && rdma link del rxe0
	modprobe -r rdma_rxe
}

pingpong_self() {
	local srv=$TAP_LOGDIR/pingpong-server.log
	timeout 30 ibv_rc_pingpong -d rxe0 -g 1 -n 100 > "$srv" 2>&1 &
	sleep 1
	timeout 30 ibv_rc_pingpong -d rxe0 -g 1 -n 100 127.0.0.1 || return 1
	wait $! || { cat "$srv"; return 1; }
}

tap_plan 8
t "modprobe rdma_rxe" modprobe rdma_rxe
t "rdma link add rxe0 type rxe netdev $NETDEV" link_add rxe0 rxe "$NETDEV"
t "rxe0 port PORT_ACTIVE" wait_port_state rxe0 PORT_ACTIVE
t "rxe0 has RoCE v2 GID ::ffff:$ip4" has_gid rxe0 "::ffff:$ip4" "RoCE v2"
t "pyverbs opens rxe0 and allocates a PD" pyverbs_pd rxe0
t "ibv_rc_pingpong rxe0 to itself" pingpong_self
t "rdma link del rxe0 removes it" link_del_gone rxe0
t "modprobe -r rdma_rxe" modprobe -r rdma_rxe
