#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# UD multicast on an sroce device, IPv4 and IPv6 groups: ud_multicast.c
# (kselftest harness + libibverbs) attaches and detaches QPs, checks every
# message and the netdev's group membership; its TAP output is this test's.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
require_test_netdev
bin=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/ud_multicast
[ -x "$bin" ] || tap_skip_all "$bin not built (make -C selftests)"
ip4=$(ip -4 -o addr show dev "$NETDEV" | awk '{ sub("/.*", "", $4); print $4; exit }')
ip6=$(ip -6 -o addr show dev "$NETDEV" scope global | awk '{ sub("/.*", "", $4); print $4; exit }')
[ -n "$ip4" ] && [ -n "$ip6" ] || tap_skip_all "$NETDEV needs an IPv4 and a global IPv6 address"

if ! mkdev sroce sroce0 "$NETDEV" > /dev/null 2>&1; then
	tap_plan 1
	not_ok "sroce0 on $NETDEV"
	exit 1
fi
g4=$(gid_index sroce0 "::ffff:$ip4")
g6=$(gid_index sroce0 "$ip6")
SRDMA_DEV=sroce0 SRDMA_NETDEV=$NETDEV SRDMA_GID=${g4:-1} SRDMA_GID6=${g6:-0} \
	timeout 120 "$bin"
rc=$?
srdma_cleanup sroce0 > /dev/null 2>&1
exit "$rc"
