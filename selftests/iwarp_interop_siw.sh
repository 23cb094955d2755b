#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-hosts: 2
# timeout: 1500
# Wire interoperability with upstream siw (built from the distro's kernel
# source at test time, tools/siw-peer.sh): host1 runs srdma's siwarp,
# host2 siw; every tool runs with srdma as server and as client, MPA CRC
# off and on. No atomics: siw has none, and srdma never offers it one.
PEER_KIND=siw
# shellcheck source=selftests/iwarp_peer.sh
. "$(dirname "$0")/iwarp_peer.sh"
