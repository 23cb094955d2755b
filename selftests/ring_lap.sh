#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# A send queue whose producer index user space moved past the WQEs in
# flight: ring_lap.c (kselftest harness + libibverbs) on an sroce device
# checks that the QP goes to error and flushes them, and that a ring
# filled to its last free slot is not taken for lapped; its TAP output is
# this test's.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
require_test_netdev
run_sroce_test ring_lap 120
