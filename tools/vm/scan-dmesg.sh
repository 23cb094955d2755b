#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Scan kernel logs for signs of a kernel bug. Prints every hit prefixed with
# the file name; exits 1 if there was any, 0 if the logs are clean.
# Any oops, BUG, WARN, sanitizer report or refcount complaint fails a run:
# a test that passes while the kernel complains has not passed.
set -uo pipefail

pattern='Oops|BUG:|WARNING:|Call Trace|general protection|KASAN|UBSAN|refcount_t'
hits=0
for f in "$@"; do
	[ -r "$f" ] || continue
	if grep -E -n -- "$pattern" "$f" | sed "s|^|$f:|"; then
		hits=1
	fi
done
exit "$hits"
