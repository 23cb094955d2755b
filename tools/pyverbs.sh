#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run rdma-core's pyverbs test suite against one RDMA device (guest side, or
# any machine with the device) and judge it against an expectations file.
#
#   tools/pyverbs.sh --dev DEV [--gid N] [--expect FILE] [--record FILE]
#                    [--out DIR] [--timeout SECS]
#
#   --expect FILE  selftests/pyverbs/expected-<kind>.txt: fail on regressions
#   --record FILE  write FILE as a new expectations file from this run
#                  (passes -> pass, failures/errors -> xfail); to reseed:
#                  tools/vm/run.sh -- tools/pyverbs-record.sh sroce
#   --out DIR      where log.txt and results.txt go
#                  (default $VM_OUT/pyverbs-DEV, else ./build/pyverbs-DEV)
# The suite is copied to a scratch dir first: Debian ships it gzipped under
# /usr/share/doc, read-only in the VM. /usr/bin/python3 is the interpreter
# that has pyverbs (another python3 may come first on PATH).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

dev='' gid='' expect='' record='' out='' limit=600
while [ "$#" -gt 0 ]; do
	case "$1" in
	--dev) dev=$2; shift 2 ;;
	--gid) gid=$2; shift 2 ;;
	--expect) expect=$2; shift 2 ;;
	--record) record=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	*) sed -n '3,16s/^# \{0,1\}//p' "$0"; exit 2 ;;
	esac
done
[ -n "$dev" ] || { echo "pyverbs.sh: --dev is required" >&2; exit 2; }
src=/usr/share/doc/rdma-core/tests
[ -r "$src/run_tests.py" ] || { echo "pyverbs.sh: $src missing (python3-pyverbs, rdma-core)" >&2; exit 4; }
/usr/bin/python3 -c 'import pyverbs' 2> /dev/null ||
	{ echo "pyverbs.sh: /usr/bin/python3 has no pyverbs (python3-pyverbs)" >&2; exit 4; }

if [ -z "$out" ]; then
	if [ -n "${VM_OUT:-}" ]; then out=$VM_OUT/pyverbs-$dev; else out=$here/../build/pyverbs-$dev; fi
fi
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r "$src" "$scratch/tests"
find "$scratch/tests" -name '*.gz' -exec gunzip -f {} +

args=(--dev "$dev" -v)
[ -z "$gid" ] || args+=(--gid "$gid")
echo "pyverbs.sh: run_tests.py ${args[*]} (timeout ${limit}s), log in $out/log.txt"
start=$(date +%s)
rc=0
# pyverbs_run.py adds a per-test limit ($PYVERBS_TEST_TIMEOUT, 60 s) so one
# stuck test costs a minute, not the whole run.
(cd "$scratch" && timeout -k 10 "$limit" /usr/bin/python3 "$here/pyverbs_run.py" tests "${args[@]}") \
	> "$out/log.txt" 2>&1 < /dev/null || rc=$?
echo "pyverbs.sh: suite exited $rc after $(($(date +%s) - start))s"
[ "$rc" != 124 ] || echo "pyverbs.sh: TIMEOUT after ${limit}s"

judge=("$out/log.txt" --results "$out/results.txt" --label "pyverbs $dev")
[ -z "$expect" ] || judge+=(--expect "$expect")
[ -z "$record" ] || judge+=(--record "$record")
/usr/bin/python3 "$here/pyverbs_results.py" "${judge[@]}"
