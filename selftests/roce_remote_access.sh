#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# The remote access rules (wrong rkey, rkey of another PD, out of bounds,
# missing REMOTE_WRITE/READ/ATOMIC, deregistered MR, misaligned atomic,
# invalidated or unbound memory windows, keys that must not be sequential,
# rereg adding write access to memory the process may only read):
# remote_access.c (kselftest harness + libibverbs) on an sroce device; its
# TAP output is this test's.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
require_test_netdev
run_sroce_test remote_access 300
