#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# The remote access rules (wrong rkey, rkey of another PD, out of bounds,
# missing REMOTE_WRITE/READ/ATOMIC, deregistered MR, misaligned atomic,
# invalidated or unbound memory windows, keys that must not be sequential):
# remote_access.c (kselftest harness + libibverbs) on an sroce device; its
# TAP output is this test's.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
require_test_netdev
bin=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/remote_access
[ -x "$bin" ] || tap_skip_all "$bin not built (make -C selftests)"
ip4=$(ip -4 -o addr show dev "$NETDEV" | awk '{ sub("/.*", "", $4); print $4; exit }')

if ! mkdev sroce sroce0 "$NETDEV" > /dev/null 2>&1; then
	tap_plan 1
	not_ok "sroce0 on $NETDEV"
	exit 1
fi
gid=$(gid_index sroce0 "::ffff:$ip4")
SRDMA_DEV=sroce0 SRDMA_GID=${gid:-1} timeout 300 "$bin"
rc=$?
srdma_cleanup sroce0 > /dev/null 2>&1
exit "$rc"
