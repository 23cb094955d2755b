#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-hosts: 2
# timeout: 1500
# srdma's sroce on two hosts over one Ethernet wire: pingpongs, rping -V
# and perftest in both directions, IPv4 and IPv6, with and without rdma_cm.
PEER_KIND=sroce
# shellcheck source=selftests/roce_peer.sh
. "$(dirname "$0")/roce_peer.sh"
