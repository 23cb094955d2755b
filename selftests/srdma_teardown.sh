#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# timeout: 900
# Teardown under load: while rping streams verified data over an sroce and
# a siwarp connection (server side in a network namespace, over veth) and
# half-open TCP connections sit on the iWARP listener without ever sending
# MPA, tear things down: rmmod srdma, rdma link del, ip link del of the
# netdev, ip netns del of the namespace holding the server's devices, and
# QP destroy (the traffic processes killed mid-transfer). Each teardown must
# finish once the users are gone, nothing may be left behind (rdma res,
# devices), and srdma must unload at the end. A deleted namespace must be
# dismantled by the kernel, and no process may be left in it. The kernel
# log is scanned for splats by make check. SRDMA_TEARDOWN_ROUNDS rounds per
# kind (default 2, for make check's time; the issue's full run is 100).
# SRDMA_TEARDOWN_KINDS (rmmod link netdev netns qp, default all; commas may
# separate them, as SRDMA_CHECK_ENV splits at spaces) picks the kinds, so
# that a long run can be split; the others are skipped.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma rping ip
[ -n "${VM_HOST:-}" ] || [ -n "${SRDMA_TEST_NETDEV:-}" ] ||
	tap_skip_all "not in a test VM (set SRDMA_TEST_NETDEV to run anyway)"
ip netns list > /dev/null 2>&1 || tap_skip_all "no network namespace support"

bin=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}
rounds=${SRDMA_TEARDOWN_ROUNDS:-2}
kinds=${SRDMA_TEARDOWN_KINDS:-rmmod link netdev netns qp}
kinds=" ${kinds//,/ } "
ns=srdma_td probe=srdma_td_probe
ns_ino= # the inode of $ns, while it may have processes
roce_srv=10.91.1.2 iw_srv=10.91.2.2
pids=()

in_ns() { ip netns exec "$ns" "$@"; }

# The processes in the namespace with inode INO, one find for all of them
# (a stat per process costs seconds in the emulated guest).
procs_in_netns() { # INO
	find -L /proc/[0-9]*/ns/net -maxdepth 0 -inum "$1" 2> /dev/null |
		cut -d/ -f3
}

# The processes in $ns, found by its inode: `ip netns del` drops the name
# while they still run.
ns_procs() { [ -z "$ns_ino" ] || procs_in_netns "$ns_ino"; }
no_ns_procs() { [ -z "$(ns_procs)" ]; }

# Kill the users and wait until they are gone. Each is its own process
# (started without a wrapper), so killing it ends it. A process still in
# the namespace afterwards escaped the list (a test defect: it would keep
# the namespace alive) or cannot die: either way a failure, after which
# it is killed all the same.
stop_users() {
	local p left
	for p in ${pids[@]+"${pids[@]}"}; do
		kill -KILL "$p" 2> /dev/null
	done
	for p in ${pids[@]+"${pids[@]}"}; do
		wait "$p" 2> /dev/null
	done
	pids=()
	left=$(ns_procs)
	[ -z "$left" ] && return 0
	echo "processes left in $ns after the users were killed:"
	ns_holders "$ns_ino"
	for p in $left; do
		kill -KILL "$p" 2> /dev/null
	done
	wait_for 30 no_ns_procs || echo "and they do not die"
	return 1
}

teardown_all() {
	stop_users
	ip netns del "$ns" 2> /dev/null
	ip netns del "$probe" 2> /dev/null
	ip link del vethP0 2> /dev/null
	ip link del vethR0 2> /dev/null
	ip link del vethI0 2> /dev/null
	for d in roceA roceB iwA iwB; do
		rdma_dev_exists "$d" && timeout 30 rdma link del "$d"
	done
	wait_for 30 bash -c '! ls /sys/class/infiniband | grep -Eq "^(roceA|roceB|iwA|iwB)$"'
}
tap_cleanup() { teardown_all; unload_srdma; }

# Two veth pairs, the far ends in $ns: one carries RoCE, one iWARP, so
# rdma_cm never has to choose between two devices on one netdev.
topology() {
	load_srdma || return 1
	ip netns add "$ns" || return 1
	ns_ino=$(stat -L -c %i "/run/netns/$ns") || return 1
	ip -n "$ns" link set lo up
	local kind a b dev i=1
	for kind in R I; do
		a=vethX0 b=vethX1
		a=${a/X/$kind} b=${b/X/$kind}
		ip link add "$a" type veth peer name "$b" || return 1
		ip link set "$b" netns "$ns" || return 1
		ip addr add "10.91.$i.1/24" dev "$a" && ip link set "$a" up || return 1
		ip -n "$ns" addr add "10.91.$i.2/24" dev "$b" || return 1
		ip -n "$ns" link set "$b" up || return 1
		i=$((i + 1))
	done
	link_add roceA sroce vethR0 && link_add iwA siwarp vethI0 || return 1
	in_ns rdma link add roceB type sroce netdev vethR1 || return 1
	in_ns rdma link add iwB type siwarp netdev vethI1 || return 1
	for dev in roceA roceB iwA iwB; do
		wait_port_state "$dev" PORT_ACTIVE || return 1
	done
}

iw_listening() { in_ns ss -ltn | grep -q "$iw_srv:7174"; }

# Long verified rping streams both ways, plus half-open connections on the
# iWARP listener (TCP connected, no MPA request ever). Every user is
# started as a plain command, so that $! is the user itself: `ip netns
# exec` execs its command. (Through a shell function it would be a
# subshell whose child survives its kill; a step has no job control, so
# there is no process group to kill either.)
start_load() {
	local srv
	for srv in "$roce_srv" "$iw_srv"; do
		ip netns exec "$ns" rping -s -P -a "$srv" -V -S 2048 -C 100000000 \
			> /dev/null 2>&1 &
		pids+=($!)
	done
	wait_for 20 iw_listening || { echo "iWARP rping server not listening"; return 1; }
	sleep 1
	for srv in "$roce_srv" "$iw_srv"; do
		rping -c -a "$srv" -V -S 2048 -C 100000000 > "$TAP_LOGDIR/rping-$srv.log" 2>&1 &
		pids+=($!)
	done
	/usr/bin/python3 -c 'import socket, sys, time
socks = []
for _ in range(16):
    s = socket.create_connection((sys.argv[1], 7174), timeout=10)
    socks.append(s)
time.sleep(3600)' "$iw_srv" > "$TAP_LOGDIR/halfopen.log" 2>&1 &
	pids+=($!)
	sleep 3
	# every user still running: the streams are up, nothing failed yet
	local p
	for p in "${pids[@]}"; do
		kill -0 "$p" 2> /dev/null || { echo "user $p exited early"; tail -n 5 "$TAP_LOGDIR"/rping-*.log; return 1; }
	done
}

# A teardown command that blocks while user contexts are open: start it,
# let it run against live traffic, then the users go; it must complete.
teardown_while_busy() {
	"$@" &
	local tpid=$! rc=0 users=0
	sleep 2
	stop_users || users=1
	wait_for 60 bash -c "! kill -0 $tpid 2> /dev/null" || { echo "teardown still blocked: $*"; return 1; }
	wait "$tpid" || rc=$?
	[ "$rc" = 0 ] || echo "teardown '$*' exited $rc"
	[ "$rc" = 0 ] && [ "$users" = 0 ]
}

# rmmod refuses while verbs users hold the module (EBUSY), then succeeds
# once they are gone; the half-open connections must not hold it.
rmmod_round() {
	topology && start_load || return 1
	if timeout 30 rmmod srdma 2> /dev/null; then
		echo "rmmod succeeded with users open"
		return 1
	fi
	stop_users || return 1
	ip netns del "$ns"
	ip link del vethR0 2> /dev/null
	ip link del vethI0 2> /dev/null
	timeout 60 rmmod srdma || { echo "rmmod failed after the users left"; return 1; }
}

link_del_all() {
	local d
	for d in roceB iwB roceA iwA; do
		timeout 90 rdma link del "$d" || return 1
	done
}

link_del_round() {
	topology && start_load || return 1
	teardown_while_busy link_del_all || return 1
	teardown_all
}

netdev_del_round() {
	topology && start_load || return 1
	teardown_while_busy bash -c 'ip link del vethR0 && ip link del vethI0' || return 1
	wait_for 60 bash -c '! ls /sys/class/infiniband | grep -Eq "^(roceA|roceB|iwA|iwB)$"' || return 1
	teardown_all
}

# The id init_net gave $ns (the veths' peer namespace): a line
# "nsid N (iproute2 netns name: NAME)". It leaves `ip netns list-id` only
# when the kernel dismantles the namespace, not when `ip netns del` drops
# its name.
ns_nsid() { ip netns list-id | sed -n "s/^nsid \([0-9]*\) .*name: $ns)\$/\1/p"; }
nsid_gone() { ! ip netns list-id | grep -Eq "^nsid $1( |\$)"; }
links_gone() { # NETDEV...
	local l
	for l; do
		ip link show "$l" > /dev/null 2>&1 && return 1
	done
	return 0
}

# A namespace deleted now is dismantled too. The kernel dismantles one
# batch of namespaces at a time, each exit in turn: an exit of ours stuck
# on the earlier namespace would hold this one back for good.
later_netns_dismantled() {
	ip netns add "$probe" || return 1
	ip link add vethP0 type veth peer name vethP1 netns "$probe" || return 1
	ip netns del "$probe"
	wait_for 60 links_gone vethP0 ||
		{ echo "a namespace deleted later was never dismantled"; return 1; }
}

# What still holds the namespace with inode INO: its processes (state and
# kernel stack), their TCP sockets and rdma_cm IDs. For a failure report.
ns_holders() { # INO
	local p pid
	for pid in $(procs_in_netns "$1"); do
		p=/proc/$pid
		echo "holder $pid: $(tr '\0' ' ' < "$p/cmdline") $(grep '^State' "$p/status")"
		head -n 12 "$p/stack" 2> /dev/null
		nsenter -t "$pid" -n ss -tan 2> /dev/null | head -n 20
	done
	timeout 10 rdma res show cm_id
}

# Dismantled, not merely unnamed: its id is gone, its veths went with it
# (and so did their peers here, and every device on them), nothing of
# rdma res is left, and a later namespace is dismantled after it.
netns_dismantled() { # NSID INO
	wait_for 60 nsid_gone "$1" ||
		{ echo "nsid $1 of $ns still there:"; ip netns list-id; ns_holders "$2"; return 1; }
	wait_for 60 links_gone vethR0 vethI0 ||
		{ echo "the veths into $ns are still there"; return 1; }
	wait_for 60 bash -c '! ls /sys/class/infiniband | grep -Eq "^(roceA|roceB|iwA|iwB)$"' ||
		{ ls /sys/class/infiniband; return 1; }
	local res
	res=$(timeout 20 rdma res show) || return 1
	[ -z "$res" ] || { echo "rdma res not empty:"; echo "$res"; return 1; }
	later_netns_dismantled
}

netns_del_round() {
	local nsid ino
	topology && start_load || return 1
	nsid=$(ns_nsid)
	[ -n "$nsid" ] || { echo "no netns id for $ns"; ip netns list-id; return 1; }
	ino=$(stat -L -c %i "/run/netns/$ns") || return 1
	teardown_while_busy ip netns del "$ns" || return 1
	netns_dismantled "$nsid" "$ino" || return 1
	teardown_all
}

# A peer in init_net that sends an MPA request, then holds its socket
# open: it never closes it, so a FIN sent to it is never answered. (exec:
# run in the background, $! is the peer itself.)
linger_peer() { # ADDR PORT
	exec /usr/bin/python3 -c 'import socket, struct, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
pd = struct.pack(">HH", 1, 1)
s.sendall(struct.pack(">16sBBH", b"MPA ID Req Frame", 0x10, 2, len(pd)) + pd)
time.sleep(600)' "$1" "$2"
}

# The namespace's consumer (iw_owner) takes the peer's connection request
# and exits without answering it: iw_cm rejects it, siwarp sends the MPA
# reject and its FIN and keeps the socket until the peer's FIN, which
# never comes. So when the namespace is deleted, a socket of siwarp's is
# still in it, in FIN-WAIT-2, and no process is. The socket must not keep
# the namespace: it is dismantled at once, and siwarp's pernet exit
# resets the socket. (A socket holding a reference on its namespace kept
# it until TCP gave the orphan up, a minute later.)
netns_linger() {
	local nsid peer rc=0 log=$TAP_LOGDIR/owner.log
	topology || return 1
	nsid=$(ns_nsid)
	ip netns exec "$ns" "$bin/iw_owner" unanswered "$iw_srv" 7322 > "$log" 2>&1 &
	pids+=($!)
	wait_for 20 grep -q '^listening' "$log" || { echo "iw_owner not listening"; cat "$log"; return 1; }
	linger_peer "$iw_srv" 7322 &
	peer=$!
	if ! wait_for 20 grep -q 'never answered' "$log"; then
		echo "no request reached iw_owner:"; cat "$log"; kill "$peer"; return 1
	fi
	stop_users || rc=1
	if ! wait_for 10 bash -c "ip netns exec $ns ss -tan | grep -q 'FIN-WAIT-2 .*$iw_srv:7322 '"; then
		echo "no socket of siwarp's waiting for the peer's FIN:"; in_ns ss -tan; rc=1
	fi
	ip netns del "$ns"
	wait_for 15 nsid_gone "$nsid" ||
		{ echo "nsid $nsid of $ns still there 15 s after ip netns del"; ip netns list-id; rc=1; }
	kill "$peer"
	wait "$peer" 2> /dev/null
	[ "$rc" = 0 ] || return 1
	wait_for 60 links_gone vethR0 vethI0 || { echo "the veths into $ns are still there"; return 1; }
	teardown_all
	nothing_left
}

qp_destroy_round() {
	topology && start_load || return 1
	stop_users || return 1
	teardown_all
}

nothing_left() {
	local d
	for d in roceA roceB iwA iwB; do
		rdma_dev_exists "$d" && { echo "$d still exists"; return 1; }
	done
	! ip netns list | grep -q "$ns" || { echo "netns $ns still exists"; return 1; }
	return 0
}

# Step DESC: ROUNDS rounds of FN, if KIND was asked for.
kind_rounds() { # KIND FN DESC
	if [[ $kinds != *" $1 "* ]]; then
		t_skip "$3" "not in SRDMA_TEARDOWN_KINDS"
		return
	fi
	t "$3" rounds_of "$2"
}

rounds_of() { # FN
	local i
	for ((i = 1; i <= rounds; i++)); do
		echo "round $i (at ${SECONDS}s)"
		"$1" || { echo "round $i failed"; teardown_all; return 1; }
		nothing_left || return 1
	done
}

# a device still works after all of it: load, verified rping, unload
still_works() {
	topology || return 1
	in_ns timeout 60 rping -s -a "$roce_srv" -V -C 50 -S 4000 > /dev/null 2>&1 &
	local spid=$!
	sleep 2
	timeout 60 rping -c -a "$roce_srv" -V -C 50 -S 4000 || return 1
	wait "$spid" || return 1
	teardown_all
	timeout 60 rmmod srdma
}

tap_plan 8
STEP_TIMEOUT=$((rounds * 150))
kind_rounds rmmod rmmod_round "rmmod under load ($rounds rounds)"
kind_rounds link link_del_round "rdma link del under load ($rounds rounds)"
kind_rounds netdev netdev_del_round "ip link del of the netdev under load ($rounds rounds)"
kind_rounds netns netns_del_round "ip netns del under load, the namespace dismantled ($rounds rounds)"
kind_rounds qp qp_destroy_round "QP destroy mid-transfer ($rounds rounds)"
STEP_TIMEOUT=180
t "ip netns del with a close waiting for the peer: dismantled at once" netns_linger
t "a fresh device still moves verified data, srdma unloads" still_works
t "srdma not loaded" module_absent srdma
