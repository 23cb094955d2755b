#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-hosts: 2
# timeout: 1500
# srdma's siwarp on two hosts over one Ethernet wire: rping -V and perftest
# over rdma_cm in both directions with MPA CRC off and on, atomics included.
PEER_KIND=siwarp
# shellcheck source=selftests/iwarp_peer.sh
. "$(dirname "$0")/iwarp_peer.sh"
