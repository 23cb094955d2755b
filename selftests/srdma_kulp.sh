#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# Verbs from a kernel ULP's contexts (selftests/kmod/srdma_kulp.c, built
# by tools/check.sh for the guest's kernel and named by SRDMA_KULP_KO):
# sends posted with interrupts off and from a hard interrupt, CQs polled in
# softirq and in a workqueue, FRWR with RDMA WRITE and READ, remote
# invalidation, a QP taken to error inside ib_post_send (interrupts off;
# hard interrupt), ib_drain_qp, ib_drain_qp of a QP on an SRQ (its Last
# WQE Reached event, which 6.12's drain waits for), a chain of 200 sends in one post (more
# than srdma takes in one hold of its lock), and CQs with a comp_handler
# of the ULP's own: a ping-pong posted from inside it on the QP each
# completion came from (handler_reentry), a CQ overflow whose CQ_ERR and
# QP_FATAL handlers post on the failed QP (handler_cq_err). The module
# runs each case on a fresh pair of RC QPs on sroce0 and prints its
# result; lockdep on the debug kernel checks the locking of each path.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

KO=${SRDMA_KULP_KO:-$REPO/build/check/kmod/srdma_kulp.ko}
# srdma_kulp.c's cases, in its order
CASES="send_irqs_off send_hardirq frwr_rdma fatal_irqs_off fatal_hardirq drain
drain_srq chain_irqs_off chain_hardirq bad_post handler_reentry handler_cq_err"
MARK=kulp.$$

tap_require_root
require_test_netdev
tap_require_cmd insmod rmmod dmesg
[ -r "$KO" ] || tap_skip_all "$KO not built (tools/check.sh builds it)"

tap_cleanup() {
	module_absent srdma_kulp || timeout 30 rmmod srdma_kulp
	srdma_cleanup sroce0
}

run_cases() {
	local ip4 gid
	ip4=$(netdev_ip4 "$NETDEV")
	gid=$(gid_index sroce0 "::ffff:$ip4")
	[ -n "$gid" ] || { echo "no RoCE v2 GID for $ip4"; return 1; }
	kmsg_mark "$MARK"
	timeout 300 insmod "$KO" dev=sroce0 gid_index="$gid" \
		timeout_ms=$((20000 * ${SRDMA_TIMEOUT_SCALE:-1}))
}

case_ok() {
	local line
	line=$(kmsg_since "$MARK" | grep -E "srdma_kulp: $1: " | tail -n 1)
	echo "${line:-no result printed for $1}"
	[[ "$line" == *"srdma_kulp: $1: ok" ]]
}

# loaded only if every case passed: then it must unload
unload_kulp() { module_absent srdma_kulp || timeout 30 rmmod srdma_kulp; }

# shellcheck disable=SC2086 # a list of words
set -- $CASES
tap_plan $((5 + $#))
t "sroce0 on $NETDEV" mkdev sroce sroce0 "$NETDEV" || tap_bail "no sroce0"
t "insmod srdma_kulp: every case passed" run_cases ||
	diag "$(kmsg_since "$MARK" | tail -n 40)"
for c in "$@"; do
	t "case $c" case_ok "$c"
done
t "srdma_kulp unloaded" unload_kulp
t "nothing left on sroce0 (rdma res)" res_clean sroce0
t "sroce0 deleted, srdma unloaded" srdma_cleanup sroce0
