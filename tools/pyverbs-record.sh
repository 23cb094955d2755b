#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Seed or refresh a pyverbs expectations file from a run in a VM.
#
#   tools/pyverbs-record.sh KIND    KIND: sroce | siwarp | rxe | siw
#
# sroce/siwarp (srdma) write selftests/pyverbs/expected-KIND.txt, the
# expectations `make check` enforces; review the diff before committing, a
# test that used to pass and now shows as xfail is a regression.
# rxe/siw (reference peers) write selftests/pyverbs/baseline-KIND.txt: every
# test with its status, for comparison only.
# Inside the VM (VM_HOST set) the same script creates the device and runs the
# suite; the repo is read-only there, so the file comes back via $VM_OUT.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kind=${1:-}
case "$kind" in
sroce | rxe) gid=1 ;;
siwarp | siw) gid='' ;; # no usable GID for IB-style tests: they skip
*) sed -n '3,13s/^# \{0,1\}//p' "$0"; exit 2 ;;
esac
dev=${kind}0
[ "$kind" != siwarp ] || dev=siw0x

if [ -n "${VM_HOST:-}" ]; then
	mkdev "$kind" "$dev"
	# Failures are what is being recorded: the suite's verdict does not matter.
	"$here/pyverbs.sh" --dev "$dev" ${gid:+--gid "$gid"} --record "$VM_OUT/expected.txt" || true
	cp "$VM_OUT/pyverbs-$dev/results.txt" "$VM_OUT/results.txt"
	exit 0
fi

# shellcheck source=tools/lib.sh
. "$here/lib.sh"
[ "$kind" != siw ] || "$here/siw-peer.sh"
"$here/vm/run.sh" -N "pyverbs-record-$kind" -t 1200 -- "$here/pyverbs-record.sh" "$kind"
out="$SRDMA_REPO/build/vm/out/pyverbs-record-$kind/host1"
dest="$SRDMA_REPO/selftests/pyverbs"
mkdir -p "$dest"
case "$kind" in
sroce | siwarp)
	cp "$out/expected.txt" "$dest/expected-$kind.txt"
	say "wrote selftests/pyverbs/expected-$kind.txt"
	;;
*)
	{
		echo "# pyverbs baseline of the $kind reference peer on $(srdma_kver), for comparison only."
		echo "# $(grep -E "^pyverbs .*[0-9]+ pass" "$out/script.log" | tail -n 1)"
		echo "# Refresh: tools/pyverbs-record.sh $kind"
		cat "$out/results.txt"
	} > "$dest/baseline-$kind.txt"
	say "wrote selftests/pyverbs/baseline-$kind.txt"
	;;
esac
tail -n 3 "$out/script.log"
