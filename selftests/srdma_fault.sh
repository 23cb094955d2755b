#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# timeout: 900
# Fault injection (the debug kernel; skipped where the kernel has none):
# fail srdma's error-injectable functions (fail_function), and every slab
# and page allocation of the task (failslab, fail_page_alloc), while
# fault_objects creates and destroys verbs objects; fail srdma's packet
# allocations while rping moves verified data. Every failure must come
# back to its caller as an error; afterwards nothing is left (rdma res),
# data still moves, and srdma unloads. Leaks are caught by the kmemleak
# scan the harness runs after each test. failslab and fail_page_alloc use
# the task filter: failing them for every task would fail the 9p root the
# VM runs on.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma rping
require_test_netdev
dbg=/sys/kernel/debug
if [ ! -d "$dbg/fail_function" ]; then
	tap_skip_all "the kernel has no fault injection (run make check-debug)"
fi

ip4=$(netdev_ip4 "$NETDEV")
bin=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}
[ -x "$bin/fault_objects" ] || tap_skip_all "$bin/fault_objects not built"
rounds=${SRDMA_FAULT_ROUNDS:-30}

disarm() {
	echo > "$dbg/fail_function/inject" 2> /dev/null
	echo 0 > "$dbg/fail_function/probability"
	echo 0 > "$dbg/failslab/probability" 2> /dev/null
	echo 0 > "$dbg/fail_page_alloc/probability" 2> /dev/null
}
tap_cleanup() { disarm; srdma_cleanup sroce0 siw0x; }

# arm_attr DIR PROBABILITY TASKFILTER: fail every time it is asked to,
# with that probability, for marked tasks only unless TASKFILTER is N.
arm_attr() {
	echo "$2" > "$1/probability" && echo 1 > "$1/interval" &&
		echo -1 > "$1/times" && echo 0 > "$1/space" &&
		echo 0 > "$1/verbose" && echo "$3" > "$1/task-filter"
}

srdma_injectable() { awk '$2 == "[srdma]" { print $1 }' "$dbg/fail_function/injectable"; }

# fail_fn FUNC DEV GID: FUNC fails for fault_objects' calls only
fail_fn() {
	local fn=$1 type rv
	type=$(awk -v f="$fn" '$1 == f { print $3 }' "$dbg/fail_function/injectable")
	echo "$fn" > "$dbg/fail_function/inject" || return 1
	rv=0
	[ "$type" = ERRNO ] && rv=$(printf '%u' -12 2> /dev/null || echo 18446744073709551604)
	echo "$rv" > "$dbg/fail_function/$fn/retval" || return 1
	arm_attr "$dbg/fail_function" 30 Y || return 1
	timeout 300 "$bin/fault_objects" "$2" "$3" "$rounds" --make-it-fail
	local rc=$?
	disarm
	return "$rc"
}

# fail_alloc INJECTOR PERCENT DEV GID [--may-pass]: every slab (failslab)
# or page (fail_page_alloc, any order) allocation of fault_objects'
# syscalls may fail, sleeping ones included. A create makes dozens of slab
# allocations: a low rate lets most get far enough to fail deep inside. fail_page_alloc spares __GFP_HIGHMEM
# (user pages, vmalloc): the failures land in the kernel's own pages.
fail_alloc() {
	local d=$dbg/$1
	[ -d "$d" ] || { echo "no $1 in this kernel"; return 1; }
	arm_attr "$d" "$2" Y || return 1
	echo N > "$d/ignore-gfp-wait" || return 1
	[ ! -e "$d/min-order" ] || echo 0 > "$d/min-order" || return 1
	timeout 300 "$bin/fault_objects" "$3" "$4" "$rounds" --make-it-fail "${@:5}"
	local rc=$?
	disarm
	return "$rc"
}

# Functions only the data path calls: datapath_faults fails those.
datapath_fns=" roce_alloc_skb "

each_fn() { # DEV GID
	local fn n=0
	for fn in $(srdma_injectable); do
		[[ "$datapath_fns" != *" $fn "* ]] || continue
		echo "== $fn"
		fail_fn "$fn" "$1" "$2" || return 1
		n=$((n + 1))
	done
	[ "$n" -ge 4 ] || { echo "only $n srdma functions are error-injectable"; return 1; }
}

# Failures on the data path: srdma's packet allocations fail for every
# context (softirq and work included) while rping runs. rping may fail;
# the kernel must not, and a clean rping must work afterwards. rping's
# server READs the client's buffer, so the client's READ responses meet
# failed allocations too and must take the back-off path (resp.c), which
# read_resp_nomem counts.
rping_v() { # COUNT
	pair timeout 120 rping -s -a "$ip4" -V -C "$1" -S 4000 -- \
		timeout 120 rping -c -a "$ip4" -V -C "$1" -S 4000
}
datapath_faults() {
	local fn spid nomem0 nomem
	nomem0=$(hw_counter sroce0 read_resp_nomem) || return 1
	fn=$(srdma_injectable | grep -m1 '^roce_alloc_skb$') ||
		{ echo "roce_alloc_skb is not error-injectable"; return 1; }
	echo "$fn" > "$dbg/fail_function/inject" || return 1
	arm_attr "$dbg/fail_function" 10 N || return 1
	# rping may fail here (and its server then waits): bounded, not judged
	timeout 100 rping -s -a "$ip4" -V -C 200 -S 4000 &
	spid=$!
	sleep 2
	timeout 90 rping -c -a "$ip4" -V -C 200 -S 4000
	echo "rping under faults exited $?"
	wait "$spid"
	disarm
	nomem=$(hw_counter sroce0 read_resp_nomem) || return 1
	echo "READ responses put off for want of memory: $((nomem - nomem0))"
	[ "$nomem" -gt "$nomem0" ]
}

unloads() { timeout 30 rdma link del sroce0 && timeout 30 rdma link del siw0x && timeout 60 rmmod srdma; }

tap_plan 13
t "sroce0 on $NETDEV" mkdev sroce sroce0 "$NETDEV" || tap_bail "no sroce0"
t "siw0x on $NETDEV" mkdev siwarp siw0x "$NETDEV"
g=$(gid_index sroce0 "::ffff:$ip4")
STEP_TIMEOUT=900
t "every srdma injectable function failed under object creation (sroce0)" each_fn sroce0 "$g"
t "every srdma injectable function failed under object creation (siw0x)" each_fn siw0x 0
t "failslab under object creation (sroce0)" fail_alloc failslab 3 sroce0 "$g"
t "failslab under object creation (siw0x)" fail_alloc failslab 3 siw0x 0
t "fail_page_alloc under object creation (sroce0)" fail_alloc fail_page_alloc 20 sroce0 "$g" --may-pass
t "fail_page_alloc under object creation (siw0x)" fail_alloc fail_page_alloc 20 siw0x 0 --may-pass
STEP_TIMEOUT=400
t "packet allocations fail while rping runs, READ replies back off (sroce0)" datapath_faults
STEP_TIMEOUT=200
t "verified rping afterwards (sroce0)" rping_v 50
t "nothing left on sroce0 (rdma res)" res_clean sroce0
t "nothing left on siw0x (rdma res)" res_clean siw0x
t "devices deleted and srdma unloaded" unloads
