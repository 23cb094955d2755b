#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: run every selftest (selftests/Makefile TEST_PROGS) in VMs of
# the distro kernel and report one line per result, then the totals.
#
# Tests whose header says "# vm: shared" run one after another in a single
# VM; each "# vm: own" test gets a fresh VM (it leaves modules loaded or
# needs a clean kernel); "# vm-hosts: N" tests get N VMs on one wire
# ("# vm-wire: tap": the TAP wire, tools/vm/tap-wire.sh).
# A test also fails when the kernel logged an oops/BUG/WARNING while it ran,
# and a VM that hangs or dies fails its group. Assumes srdma.ko is built.
# SRDMA_CHECK_TESTS="a.sh b.sh" runs a subset; SRDMA_CHECK_KO tests another
# build of srdma.ko; SRDMA_TIMEOUT_SCALE=N multiplies every time limit (the
# debug kernel, tools/check-debug.sh); KVER (and SRDMA_KROOT) another kernel
# (tools/check-612.sh); SRDMA_CHECK_ENV="VAR=VALUE ..." sets the tests'
# own variables in every guest (SRDMA_TEARDOWN_ROUNDS=100, the fuzzers'
# lengths). Exit 0 only if nothing failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/lib.sh
. "$here/lib.sh"
cd "$SRDMA_REPO"

t0=$(now)
# SRDMA_CHECK_LABEL names the logs (build/LABEL, build/vm/out/LABEL-*), so
# that `make check-612` after `make check` keeps the first run's.
run_label=${SRDMA_CHECK_LABEL:-check}
work=build/$run_label
rm -rf "$work"
mkdir -p "$work"
results=$work/results.txt
: > "$results"
record() { printf '%s\t%s\n' "$1" "$2" >> "$results"; }
# Each failing step's diagnostics, repeated just above the totals: CI logs
# keep only their tail, and a failure without its reason cannot be chased.
diags=$work/failures.txt
: > "$diags"
failure_diags() { # LABEL TAPFILE
	[ -r "$2" ] || return 0
	awk -v label="$1" '
		/^not ok/ { n = 0; show = 1; print "FAIL  " label ": " substr($0, 8); next }
		/^(ok|not ok|1\.\.)/ { show = 0 }
		show && /^#/ && n++ < 12 { print "      " $0 }' "$2"
}

summary() {
	local pass fail skip
	echo
	echo "---- results on ${kver:-no kernel} ($(elapsed "$t0")s; logs in build/vm/out/$run_label-*, $work)"
	awk -F'\t' '{ k = ($1 == "PASS") ? "ok  " : ($1 == "SKIP") ? "skip" : "FAIL"; print k "  " $2 }' "$results"
	pass=$(grep -c '^PASS' "$results" || true)
	fail=$(grep -c '^FAIL' "$results" || true)
	skip=$(grep -c '^SKIP' "$results" || true)
	if [ "$pass" = 0 ] && [ "$fail" = 0 ]; then
		fail=1 # nothing ran: that is not a pass
	fi
	if [ -s "$diags" ]; then
		echo "---- why they failed"
		cat "$diags"
	fi
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" = 0 ]
}

if ! kver=$(srdma_kver); then
	record FAIL "setup: no kernel with headers and /boot/vmlinuz (run 'make deps')"
	summary
	exit 1
fi
# Test one binary throughout, even if srdma.ko is rebuilt meanwhile (a VM
# reading it over 9p mid-rewrite gets EIO).
ko=${SRDMA_CHECK_KO:-srdma.ko}
scale=${SRDMA_TIMEOUT_SCALE:-1}
if [ -f "$ko" ]; then
	cp "$ko" "$work/srdma.ko"
else
	warn "$ko not built: srdma tests will fail (run 'make')"
fi
say "kernel $kver; building the upstream siw test peer (cached)"
# The guests load the siw built for their kernel: SIW_KO always names it
# (or a missing file, and the tests that need siw skip).
src=0
siw_ko=$("$here/siw-peer.sh" 2> "$work/siw-peer.log") || src=$?
if [ "$src" = 2 ] && [ "$kver" != "$(KVER='' SRDMA_KROOT='' srdma_kver)" ]; then
	# Another kernel than the default, without its linux-source: no peer.
	record SKIP "setup: upstream siw peer for $kver: $(tail -n 1 "$work/siw-peer.log")"
elif [ "$src" != 0 ]; then
	record FAIL "setup: tools/siw-peer.sh failed (see $work/siw-peer.log)"
	tail -n 20 "$work/siw-peer.log" >&2
fi
[ "$src" = 0 ] || siw_ko=$SRDMA_REPO/$work/no-siw-for-$kver/siw.ko

say "building the C selftests (kselftest harness from linux-source)"
if ! make -s -C selftests > "$work/selftests-build.log" 2>&1; then
	record FAIL "setup: building selftests failed (see $work/selftests-build.log)"
	tail -n 20 "$work/selftests-build.log" >&2
fi

# Test modules (a kernel ULP in miniature) for the kernel the guests boot;
# in $work, so that each kernel's build stays apart and the tree clean.
say "building the test modules (selftests/kmod) for $kver"
kmod=$work/kmod
mkdir -p "$kmod"
cp selftests/kmod/Kbuild selftests/kmod/*.c "$kmod/"
if ! make -C "${SRDMA_KROOT:-}/lib/modules/$kver/build" M="$SRDMA_REPO/$kmod" modules \
	> "$kmod/build.log" 2>&1 || grep -E -q 'warning:|error:' "$kmod/build.log"; then
	record FAIL "setup: building selftests/kmod for $kver failed or warned (see $kmod/build.log)"
	grep -E 'warning:|error:' "$kmod/build.log" >&2 || tail -n 20 "$kmod/build.log" >&2
fi

read -r -a tests <<< "${SRDMA_CHECK_TESTS:-$(make -s --no-print-directory -C selftests list)}"
guest_env=(-e "SRDMA_KULP_KO=$SRDMA_REPO/$kmod/srdma_kulp.ko")
read -r -a check_env <<< "${SRDMA_CHECK_ENV:-}"
for e in ${check_env[@]+"${check_env[@]}"}; do guest_env+=(-e "$e"); done
header() { sed -n "s/^# $2: *\([^ ]*\).*/\1/p" "selftests/$1" | head -n 1; }

# boot_died OUT HOSTS: some host of the run in OUT never finished booting
boot_died() {
	local i
	for ((i = 1; i <= $2; i++)); do
		grep -q 'SRDMA-VM-BOOTED' "$1/host$i/console.log" 2> /dev/null || return 0
	done
	return 1
}

# run_group NAME HOSTS TEST...: one VM run, then collect every test's results.
# The first test's "# vm-wire:" header names the run's wire (VM_WIRE of
# tools/vm/run.sh; two-host groups hold one test).
run_group() {
	local name=$1 hosts=$2 limit=$((120 * scale)) t secs vrc=0 out i label rc dirty attempt wire
	shift 2
	wire=$(header "$1" vm-wire)
	for t in "$@"; do
		secs=$(header "$t" timeout)
		limit=$((limit + ${secs:-300} * scale))
	done
	say "VM group $name ($hosts host(s)): $*"
	for attempt in 1 2; do
		vrc=0
		VM_WIRE=${wire:-stream} "$here/vm/run.sh" -n "$hosts" -N "$run_label-$name" -t "$limit" -e "SRDMA_KO=$SRDMA_REPO/$work/srdma.ko" \
			-e "SIW_KO=$siw_ko" -e "SRDMA_TIMEOUT_SCALE=$scale" ${guest_env[@]+"${guest_env[@]}"} -- \
			"$here/vm/run-tests.sh" "${@/#/$SRDMA_REPO/selftests/}" > "$work/$name.log" || vrc=$?
		# A guest kernel that dies while booting, before any test or
		# srdma ran (TCG has been seen to trip over the kernel's own
		# text patching), is the emulator's: boot the group once more.
		if [ "$vrc" = 0 ] || [ "$vrc" = 1 ] || [ "$attempt" = 2 ] ||
			! boot_died "build/vm/out/$run_label-$name" "$hosts"; then
			break
		fi
		say "VM group $name: a guest died before it booted; once more"
		rm -rf "build/vm/out/$run_label-$name.boot-failed"
		mv "build/vm/out/$run_label-$name" "build/vm/out/$run_label-$name.boot-failed"
	done
	for ((i = 1; i <= hosts; i++)); do
		out=build/vm/out/$run_label-$name/host$i
		dirty=0
		for t in "$@"; do
			t=${t%.sh}
			label=$t
			[ "$hosts" = 1 ] || label=$t@host$i
			rc=$(cat "$out/tap/$t.rc" 2> /dev/null || true)
			"$here/tap-collect.sh" "$label" "$out/tap/$t.tap" "$rc" >> "$results"
			failure_diags "$label" "$out/tap/$t.tap" >> "$diags"
			if ! "$here/vm/scan-dmesg.sh" "$out/dmesg/$t.txt" > "$work/$name-$t-dmesg.txt"; then
				record FAIL "$label: kernel log clean while it ran: $(head -n 1 "$work/$name-$t-dmesg.txt" | cut -d: -f3-)"
				dirty=1
			fi
		done
		# Kernel trouble outside any test (boot, shutdown) still counts.
		if [ "$dirty" = 0 ] && [ -r "$out/dmesg.txt" ] &&
			! "$here/vm/scan-dmesg.sh" "$out/dmesg.txt" > /dev/null; then
			record FAIL "vm $name host$i: kernel log clean (see $out/dmesg-hits.txt)"
		fi
	done
	case "$vrc" in
	0 | 1) ;; # tests ran; their results speak
	124) record FAIL "vm $name: timed out after ${limit}s (see build/vm/out/$run_label-$name)" ;;
	*) record FAIL "vm $name: VM failed with status $vrc (see build/vm/out/$run_label-$name)" ;;
	esac
}

shared=() own=() multi=()
for t in "${tests[@]}"; do
	[ -x "selftests/$t" ] || { record FAIL "$t: listed in TEST_PROGS but missing or not executable"; continue; }
	h=$(header "$t" vm-hosts)
	if [ -n "$h" ] && [ "$h" -gt 1 ]; then
		multi+=("$t")
	elif [ "$(header "$t" vm)" = own ]; then
		own+=("$t")
	else
		shared+=("$t")
	fi
done

[ "${#shared[@]}" = 0 ] || run_group shared 1 "${shared[@]}"
for t in "${own[@]}"; do run_group "${t%.sh}" 1 "$t"; done
# A test whose header says "# vm-wire: tap" runs on the TAP wire, with
# virtio-net's offloads (tools/vm/tap-wire.sh), where this host can make one.
for t in "${multi[@]}"; do
	if [ "$(header "$t" vm-wire)" = tap ] && ! why=$("$here/vm/tap-wire.sh" probe); then
		record SKIP "${t%.sh}: no TAP wire on this host: $why"
		continue
	fi
	run_group "${t%.sh}" "$(header "$t" vm-hosts)" "$t"
done

summary
