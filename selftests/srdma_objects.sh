#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# Leaks: create and destroy every verbs object (and walk the refused-create
# error paths) hundreds of times on an sroce and a siwarp device, with rdma
# res dumps racing the destroys; afterwards no resource is left (rdma res)
# and srdma unloads.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma
require_test_netdev

tap_cleanup() { srdma_cleanup sroce0 siw0x; }

# While the loops run, \`rdma res show qp -dd\` dumps race their destroys:
# ib_core lets a dump reach the driver during and after destroy_qp
# (restrack.c). Some dumps must have completed.
loops() { # DEV GID
	local dumps="$TAP_LOGDIR/res-dumps-$1" stop="$TAP_LOGDIR/res-stop-$1"
	local dumper rc=0
	: > "$dumps"
	rm -f "$stop"
	# stopped by a file, not a kill: no dump outlives the step
	(while [ ! -e "$stop" ]; do
		timeout 20 rdma res show qp -dd > /dev/null 2>&1 && echo >> "$dumps"
	done) &
	dumper=$!
	timeout 600 /usr/bin/python3 "$SELFTESTS_DIR/objects_loop.py" "$1" "$2" 300 || rc=$?
	touch "$stop"
	wait "$dumper" 2> /dev/null
	echo "# $(wc -l < "$dumps") rdma res dumps during the loops"
	[ "$rc" = 0 ] && [ -s "$dumps" ]
}
unloads() { timeout 10 rdma link del sroce0 && timeout 10 rdma link del siw0x && timeout 60 rmmod srdma; }

tap_plan 7
t "sroce0 on $NETDEV" mkdev sroce sroce0 "$NETDEV" || tap_bail "no sroce0"
t "siw0x on $NETDEV" mkdev siwarp siw0x "$NETDEV"
STEP_TIMEOUT=600
t "create/destroy loops on sroce0" loops sroce0 "$(gid_index sroce0 "::ffff:$(ip -4 -o addr show dev "$NETDEV" | awk '{ sub("/.*", "", $4); print $4; exit }')")"
t "create/destroy loops on siw0x" loops siw0x 0
STEP_TIMEOUT=60
t "nothing left on sroce0 (rdma res)" res_clean sroce0
t "nothing left on siw0x (rdma res)" res_clean siw0x
t "devices deleted and srdma unloaded" unloads
