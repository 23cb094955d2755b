#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make check`: run selftests one after another and keep, per
# test, what the host needs to judge it, in $VM_OUT:
#   tap/NAME.tap    the TAP stream     tap/NAME.rc   exit status
#   dmesg/NAME.txt  kernel messages logged while NAME ran
# Each test gets the time limit from its "# timeout: SECS" header line
# (default 300 s) times SRDMA_TIMEOUT_SCALE (default 1; the debug kernel
# runs slower). On a kernel with kmemleak, each test's log also gets what a
# scan after it found. Exit 0 when every test exited 0 (pass) or 4 (skip).
set -uo pipefail

out=${VM_OUT:?run me inside a test VM}
mkdir -p "$out/tap" "$out/dmesg"
scale=${SRDMA_TIMEOUT_SCALE:-1}
kmemleak=/sys/kernel/debug/kmemleak
# Leak suspects since the last call; objects younger than kmemleak's
# minimum age (5 s) are judged by the next scan.
leak_scan() {
	[ -w "$kmemleak" ] || return 0
	echo scan > "$kmemleak"
	cat "$kmemleak"
	echo clear > "$kmemleak"
}
leak_scan > /dev/null # whatever boot left behind is not a test's
status=0
for t in "$@"; do
	name=$(basename "$t" .sh)
	limit=$(sed -n 's/^# timeout: *\([0-9][0-9]*\).*/\1/p' "$t" | head -n 1)
	limit=$((${limit:-300} * scale))
	echo "srdma-selftest: start $name" > /dev/kmsg
	echo "=== $name (limit ${limit}s)"
	# No "|| true" here: it would reset PIPESTATUS.
	timeout -k 10 "$limit" "$t" < /dev/null 2>&1 | tee "$out/tap/$name.tap"
	rc=${PIPESTATUS[0]}
	[ "$rc" != 124 ] || echo "# TIMEOUT: $name killed after ${limit}s" | tee -a "$out/tap/$name.tap"
	echo "$rc" > "$out/tap/$name.rc"
	echo "srdma-selftest: end $name" > /dev/kmsg
	dmesg | awk -v s="srdma-selftest: start $name" -v e="srdma-selftest: end $name" \
		'index($0, s) { p = 1; next } index($0, e) { p = 0 } p' > "$out/dmesg/$name.txt"
	leak_scan >> "$out/dmesg/$name.txt"
	echo "=== $name: exit $rc"
	case "$rc" in 0 | 4) ;; *) status=1 ;; esac
done
exit "$status"
