#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# timeout: 600
# Local WQEs (bind and invalidate a memory window) around every SEND in a
# send queue kept full (sq_local_mix.c), over rdma_cm on one device
# talking to itself: sroce0, then siwarp0. The kernel completes and hands
# back a local WQE's slot while the transport may still be short of it;
# every SEND must still arrive once, in order, with its bytes, and
# complete once, in order. Then nothing is left in `rdma res`.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

MSGS=${SQ_LOCAL_MIX_MSGS:-4000}

tap_require_root
tap_require_cmd rdma
require_test_netdev
bin=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/sq_local_mix
[ -x "$bin" ] || tap_skip_all "sq_local_mix not built (make -C selftests)"
ip4=$(netdev_ip4 "$NETDEV")
[ -n "$ip4" ] || tap_skip_all "$NETDEV needs an IPv4 address"

tap_cleanup() { srdma_cleanup sroce0; srdma_cleanup siwarp0; }

mix() {
	pair timeout 240 "$bin" -s "$ip4" -n "$MSGS" -- \
		timeout 240 "$bin" -c "$ip4" -n "$MSGS"
}
STEP_TIMEOUT=300
tap_plan 6
for kind in sroce siwarp; do
	dev=${kind}0
	if ! t "$dev on $NETDEV" mkdev "$kind" "$dev" "$NETDEV"; then
		t_skip "$MSGS SENDs among local WQEs on $dev" "no $dev"
		t_skip "nothing left on $dev" "no $dev"
		continue
	fi
	t "$MSGS SENDs among local WQEs on $dev, each once and in order" mix
	t "nothing left on $dev" wait_for 10 res_clean "$dev"
	srdma_cleanup "$dev" > /dev/null 2>&1
done
