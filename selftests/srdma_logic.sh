#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# srdma's in-module self-tests of its pure logic (drivers/selftest/):
# `insmod srdma.ko selftest=1` runs them before anything registers and
# fails the load if a case fails. Checks the load succeeded, that every
# group printed "srdma: selftest: GROUP: N passed" with N > 0, that no
# failure was printed, and that a load without the parameter runs none.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

# drivers/selftest/run.c's groups, in the order it runs them
GROUPS_WANT="psn icrc parse dcqcn keys sq publish handlers mpa fpdu"
MARK=logic.$$

tap_require_root
tap_require_cmd insmod rmmod dmesg

tap_cleanup() { unload_srdma; }

# The self-test must run in this load: srdma loaded already would let
# load_srdma succeed without it.
not_loaded() { unload_srdma && module_absent srdma; }

load_selftest() {
	[ -r "${SRDMA_KO:-$REPO/srdma.ko}" ] || { echo "srdma.ko not built"; return 1; }
	kmsg_mark "$MARK"
	load_srdma selftest=1
}

param_set() { [ "$(cat /sys/module/srdma/parameters/selftest)" = Y ]; }

group_passed() { # GROUP: "N passed" with N > 0 and nothing failed
	local line
	line=$(kmsg_since "$MARK" | grep -E "srdma: selftest: $1: " | tail -n 1)
	echo "$line"
	[[ "$line" =~ srdma:\ selftest:\ $1:\ ([0-9]+)\ passed$ ]] &&
		[ "${BASH_REMATCH[1]}" -gt 0 ]
}

no_failure() {
	! kmsg_since "$MARK" | grep -E 'srdma: selftest: .*(FAIL|failed|no case)'
}

all_passed() {
	local n
	n=$(wc -w <<< "$GROUPS_WANT")
	kmsg_since "$MARK" | grep -q "srdma: selftest: all $n groups passed"
}

# Without the parameter nothing runs (and nothing is printed).
plain_load_silent() {
	kmsg_mark plain
	load_srdma || return 1
	[ "$(cat /sys/module/srdma/parameters/selftest)" = N ] || return 1
	! kmsg_since plain | grep 'srdma: selftest:'
}

# shellcheck disable=SC2086 # a list of words
set -- $GROUPS_WANT
tap_plan $((9 + $#))
t "srdma is not loaded" not_loaded || tap_bail "srdma could not be unloaded"
t "insmod srdma.ko selftest=1" load_selftest ||
	diag "$(kmsg_since "$MARK" | grep 'srdma' | tail -n 40)"
t "the selftest parameter is set" param_set
for g in "$@"; do
	t "selftest group $g: N passed, none failed" group_passed "$g"
done
t "no failure reported" no_failure
t "all groups passed" all_passed
diag "$(kmsg_since "$MARK" | grep -o 'srdma: selftest: .*')"
t "rmmod srdma" unload_srdma
t "srdma is unloaded" module_absent srdma
t "without selftest=1 nothing runs" plain_load_silent
t "rmmod srdma" unload_srdma
