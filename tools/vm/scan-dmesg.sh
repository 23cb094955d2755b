#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Scan kernel logs for signs of a kernel bug. Prints every hit prefixed with
# the file name; exits 1 if there was any, 0 if the logs are clean.
# Any oops, BUG, WARN, sanitizer report or refcount complaint fails a run:
# a test that passes while the kernel complains has not passed.
set -uo pipefail

# The debug kernel adds lockdep, hung-task, RCU-stall and kmemleak reports
# (tools/vm/run-tests.sh appends kmemleak's findings to each test's log).
pattern='Oops|BUG:|WARNING:|Call Trace|general protection|KASAN|UBSAN|refcount_t'
pattern+='|INFO: task .* blocked for more than|rcu: INFO:|detected stalls|unreferenced object'
pattern+='|possible circular locking|inconsistent lock state'
hits=0
# The allocator's report of a failed allocation (with its stack) is not a
# bug: srdma must handle the failure, and fault injection (srdma_fault)
# causes thousands. What a mishandled one leads to (an oops, a KASAN
# report, a leak) is still caught. Drop those reports, stack included.
without_alloc_failures() {
	awk '/(page allocation failure|vmalloc error): / { skip = 1; next }
	     skip && /<\/TASK>|^\[ *[0-9.]+\] Mem-Info:/ { if (/<\/TASK>/) skip = 0; next }
	     skip && /^\[ *[0-9.]+\] ( |CPU: |Hardware name: |Call Trace:|<TASK>|RIP: |RSP: |R[A-Z0-9]+: |Code: |\? )/ { next }
	     { skip = 0; print }' "$1"
}
for f in "$@"; do
	[ -r "$f" ] || continue
	# "traps: PROG[pid] general protection fault ... in libX.so" is a
	# user-space crash the kernel reports, not a kernel bug.
	if without_alloc_failures "$f" | grep -E -n -- "$pattern" |
		grep -E -v 'traps: [^ ]+\[[0-9]+\] general protection fault ip:[0-9a-f]+ sp:[0-9a-f]+ error:[0-9a-f]+ in ' |
		sed "s|^|$f:|" | grep .; then
		hits=1
	fi
done
exit "$hits"
