#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-hosts: 2
# timeout: 1500
# Wire interoperability with the distro's rdma_rxe: host1 runs srdma's
# sroce, host2 rdma_rxe (they never share a kernel); every tool runs with
# srdma as server and as client.
PEER_KIND=rxe
# shellcheck source=selftests/roce_peer.sh
. "$(dirname "$0")/roce_peer.sh"
