#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# timeout: 1200
# rdma-core's pyverbs suite on an sroce and a siwarp device, judged against
# selftests/pyverbs/expected-{sroce,siwarp}.txt (see tools/pyverbs.sh): a
# listed pass that no longer passes, or any unlisted failure, fails the test.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma
require_test_netdev
[ -r /usr/share/doc/rdma-core/tests/run_tests.py ] || tap_skip_all "pyverbs tests not installed"

tap_cleanup() { srdma_cleanup sroce0 siw0x; }

pyverbs() { # DEV GID KIND
	PYVERBS_TEST_TIMEOUT=30 "$REPO/tools/pyverbs.sh" --dev "$1" ${2:+--gid "$2"} --timeout 480 \
		--expect "$SELFTESTS_DIR/pyverbs/expected-$3.txt" ${TAP_LOGDIR:+--out "$TAP_LOGDIR/$1"}
}

tap_plan 4
t "sroce0 on $NETDEV" mkdev sroce sroce0 "$NETDEV" || tap_bail "no sroce0"
t "siw0x on $NETDEV" mkdev siwarp siw0x "$NETDEV"
STEP_TIMEOUT=540
t "pyverbs on sroce0 (--gid 1) meets expected-sroce.txt" pyverbs sroce0 1 sroce
# iWARP has no GID that IB-style (non-rdma_cm) traffic tests can use; run
# the suite as rdma-core's users do, without --gid, so that those skip.
t "pyverbs on siw0x meets expected-siwarp.txt" pyverbs siw0x "" siwarp
