#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# A UC QP cycled through RESET while its own process keeps posting to its
# one-slot send ring: no lockup (the harness scans the kernel log), and
# the QP still sends afterwards. reset_race.c (kselftest harness +
# libibverbs) on an sroce device; its TAP output is this test's.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
require_test_netdev
run_sroce_test reset_race 120
