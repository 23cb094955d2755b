# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# RDMA helpers for the selftests (source after lib.sh). Each helper is a
# plain predicate/action usable as a step: `t "desc" port_state_is dev X`.

# The guest helpers (load_srdma, unload_srdma, load_siw, mkdev).
PATH="$REPO/tools/vm/bin:$PATH"

# The tests reconfigure this netdev (MTU, link down). In a test VM that is
# eth0; elsewhere it must be named explicitly, never a real uplink by default.
NETDEV=${SRDMA_TEST_NETDEV:-}
require_test_netdev() {
	if [ -z "$NETDEV" ]; then
		[ -n "${VM_HOST:-}" ] ||
			tap_skip_all "not in a test VM: set SRDMA_TEST_NETDEV to a netdev the test may reconfigure"
		NETDEV=eth0
	fi
	[ -e "/sys/class/net/$NETDEV" ] || tap_skip_all "netdev $NETDEV missing"
}

netdev_ip4() { ip -4 -o addr show dev "$1" | awk '{ sub("/.*", "", $4); print $4; exit }'; }

module_loaded() { grep -q "^$1 " /proc/modules; }
module_absent() { ! module_loaded "$1"; }

devinfo() { timeout 20 ibv_devinfo -v -d "$1"; }

# devinfo_has DEV ERE: ibv_devinfo -v output has a line matching ERE.
devinfo_has() {
	local out
	out=$(devinfo "$1") || return 1
	grep -E -q -- "$2" <<< "$out" || { echo "no line matching /$2/ in:"; echo "$out" | tail -n 30; return 1; }
}

port_state_is() { devinfo_has "$1" "^[[:space:]]+state:[[:space:]]+$2 "; }
active_mtu_is() { devinfo_has "$1" "^[[:space:]]+active_mtu:[[:space:]]+$2 "; }
transport_is() { devinfo_has "$1" "^[[:space:]]+transport:[[:space:]]+$2 "; }
link_layer_is() { devinfo_has "$1" "^[[:space:]]+link_layer:[[:space:]]+$2\$"; }

# has_gid DEV GID TYPE: e.g. has_gid sroce0 ::ffff:192.0.2.11 "RoCE v2"
has_gid() { devinfo_has "$1" "GID\\[ *[0-9]+\\]:[[:space:]]+$2, $3\$"; }

# Wait (up to 10 s) for asynchronous port state changes.
wait_port_state() { wait_for 10 port_state_is "$1" "$2"; }
wait_active_mtu() { wait_for 10 active_mtu_is "$1" "$2"; }

# placed_from_pages DEV: DEV received big payloads and placed them from
# the skb's pages where the NIC left them (sroce's rx_paged counter).
placed_from_pages() {
	local n
	n=$(hw_counter "$1" rx_paged)
	echo "rx_paged: $n"
	[ "$n" -gt 0 ]
}

rdma_dev_exists() { [ -e "/sys/class/infiniband/$1" ]; }
rdma_dev_gone() { ! rdma_dev_exists "$1"; }
wait_dev_gone() { wait_for 10 rdma_dev_gone "$1"; }

# link_shows DEV NETDEV: `rdma link show` has DEV's port 1 on NETDEV.
link_shows() {
	local out
	out=$(timeout 10 rdma link show) || return 1
	grep -E -q "^link $1/1 .*netdev $2( |\$)" <<< "$out" || { echo "$out"; return 1; }
}

link_add() { timeout 30 rdma link add "$1" type "$2" netdev "$3"; }
link_del_gone() { timeout 30 rdma link del "$1" && wait_dev_gone "$1"; }

# pyverbs_pd DEV: open the device through libibverbs and allocate a PD.
pyverbs_pd() {
	timeout 30 /usr/bin/python3 -c "
import sys
from pyverbs.device import Context
from pyverbs.pd import PD
c = Context(name=sys.argv[1])
PD(c)
print('opened', sys.argv[1], 'and allocated a PD')" "$1"
}

# Kernel log after a marker: kmsg_mark NAME, then kmsg_since NAME.
kmsg_mark() { echo "srdma-selftest: mark $1" > /dev/kmsg; }
kmsg_since() { dmesg | awk -v m="srdma-selftest: mark $1" 'index($0, m) { p = 1; next } p'; }

# The srdma devices a test may have left behind, and srdma itself.
srdma_cleanup() {
	local d
	for d in "$@"; do
		rdma_dev_exists "$d" && timeout 10 rdma link del "$d"
	done
	unload_srdma
}

# dev_down KIND DEV: delete DEV and unload what `mkdev KIND` loaded
# (srdma, rdma_rxe or the siw peer). Quiet if nothing is there.
dev_down() {
	if rdma_dev_exists "$2"; then
		timeout 10 rdma link del "$2" || return 1
	fi
	case "$1" in
	sroce | siwarp) unload_srdma ;;
	rxe) module_absent rdma_rxe || timeout 60 modprobe -r rdma_rxe ;;
	siw) module_absent siw || timeout 60 rmmod siw ;;
	esac
}

# rdma_all_down DEV: delete DEV and unload whichever of srdma, rdma_rxe
# and the siw peer is loaded (the benches put each system in turn on one
# device name). Quiet if nothing is there.
rdma_all_down() {
	local m
	timeout 20 rdma link del "$1" 2> /dev/null
	for m in srdma rdma_rxe siw; do
		grep -q "^$m " /proc/modules && timeout 60 rmmod "$m"
	done
	return 0
}

# kind_available KIND: the module `mkdev KIND` loads is there to load
# (srdma is always; rdma_rxe ships with most kernels; siw is built by
# tools/siw-peer.sh and passed as SIW_KO).
kind_available() {
	case "$1" in
	sroce | siwarp) return 0 ;;
	rxe) modinfo rdma_rxe > /dev/null 2>&1 ;;
	siw) [ -r "${SIW_KO:-$REPO/build/siw/siw.ko}" ] ;;
	*) return 1 ;;
	esac
}

# res_clean DEV [CQS]: rdma res counts nothing on DEV but ib_core's own
# objects (QP1's PD, CQ and QP, and CQS more CQs); no context, SRQ, MR or
# rdma_cm ID is left.
res_clean() {
	local out
	out=$(timeout 20 rdma res show "$1") || return 1
	echo "$out"
	awk -v cqs="${2:-0}" '
	     { for (i = 1; i < NF; i++) if ($i ~ /^(pd|cq|qp|mr|srq|ctx|cm_id)$/) n[$i] = $(i + 1) }
	     END { exit !(n["ctx"] == 0 && n["srq"] + 0 == 0 && n["mr"] + 0 == 0 &&
			   n["cm_id"] + 0 == 0 && n["pd"] + 0 <= 1 &&
			   n["cq"] + 0 <= 1 + cqs && n["qp"] + 0 <= 1) }' <<< "$out"
}

# pooled_cqs DEV: CQs of ib_core's shared pool (ib_cq_pool_get: nvme-rdma,
# nvmet-rdma) that no QP uses any more. The pool keeps them until the
# device goes away.
pooled_cqs() {
	local out
	out=$(timeout 20 rdma res show cq) || return 1
	grep -cE "^dev $1 .* users 0 .*\[ib_core\]" <<< "$out" || true
}

# ulp_res_clean DEV: res_clean after a kernel ULP, its pooled CQs aside.
ulp_res_clean() {
	local pooled
	pooled=$(pooled_cqs "$1") || return 1
	echo "ib_core's CQ pool: $pooled idle"
	res_clean "$1" "$pooled"
}

# run_sroce_test NAME SECS: a kselftest_harness C test on a fresh sroce0
# device on $NETDEV (SRDMA_DEV/SRDMA_GID tell it where); exits with its
# status, so it is a whole TAP test script's body.
run_sroce_test() {
	local bin=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/$1 ip4 gid rc
	[ -x "$bin" ] || tap_skip_all "$bin not built (make -C selftests)"
	ip4=$(netdev_ip4 "$NETDEV")
	if ! mkdev sroce sroce0 "$NETDEV" > /dev/null 2>&1; then
		tap_plan 1
		not_ok "sroce0 on $NETDEV"
		exit 1
	fi
	gid=$(gid_index sroce0 "::ffff:$ip4")
	SRDMA_DEV=sroce0 SRDMA_GID=${gid:-1} timeout "$2" "$bin"
	rc=$?
	srdma_cleanup sroce0 > /dev/null 2>&1
	exit "$rc"
}

# hw_counter DEV NAME: one of DEV's port counters (rdma statistic).
hw_counter() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }

# roce_netem DEV NETEM_ARGS...: RoCE leaving DEV goes through netem
# NETEM_ARGS; rdma_cm's MADs (BTH destination QP 1) and everything else
# on DEV go straight through: connection set-up and teardown stay out of
# the loss (roce_loss.sh says why).
roce_netem() {
	local dev=$1 roce='match ip protocol 17 0xff match ip dport 4791 0xffff'
	shift
	tc qdisc del dev "$dev" root 2> /dev/null
	# shellcheck disable=SC2086 # $roce is a list of tc words
	tc qdisc add dev "$dev" root handle 1: prio bands 3 \
		priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 &&
		tc qdisc add dev "$dev" parent 1:2 handle 20: netem "$@" &&
		tc filter add dev "$dev" parent 1: prio 1 protocol ip u32 \
			$roce match u32 0x00000001 0x00ffffff at 32 flowid 1:1 &&
		tc filter add dev "$dev" parent 1: prio 2 protocol ip u32 \
			$roce flowid 1:2
}

# pingpong_checked uc|ud DEV GID SIZE ADDR: ibv_uc_pingpong or
# ibv_ud_pingpong of SIZE bytes between DEV and itself at ADDR (GID its
# index), 100 iterations, -c checking every byte
pingpong_checked() {
	pair timeout 60 "ibv_$1_pingpong" -d "$2" -g "$3" -s "$4" -n 100 -c -- \
		timeout 60 "ibv_$1_pingpong" -d "$2" -g "$3" -s "$4" -n 100 -c "$5"
}

# lent_held_shown SECS: within SECS seconds (times TIMEOUT_SCALE) rdma res
# shows a QP whose completions wait for its lent packets (sroce's
# zero-copy transmit); prints its count of them.
lent_held_shown() {
	local i
	for ((i = 0; i < $1 * 5 * ${TIMEOUT_SCALE:-1}; i++)); do
		# iproute2 may break a QP's driver attributes over lines
		rdma -dd res show qp 2> /dev/null | tr -s '\n\t ' ' ' |
			grep -Eo -m 1 "drv_lent_packets [1-9][0-9]* drv_completions_held 1" &&
			return 0
		sleep 0.2
	done
	return 1
}

# every port counter of DEV, one "name value" a line (a snapshot to diff)
hw_counters_all() { # DEV
	local f
	for f in "/sys/class/infiniband/$1/ports/1/hw_counters/"*; do
		case ${f##*/} in lifespan) continue ;; esac
		echo "${f##*/} $(cat "$f")"
	done
}
# hw_counters_nonzero DEV: the counters that moved, "NAME VALUE" on one line
hw_counters_nonzero() { hw_counters_all "$1" | awk '$2 != 0' | paste -sd ' '; }

# gid_index DEV ADDR: the index of DEV's RoCE v2 GID for ADDR (IPv4 as
# ::ffff:a.b.c.d or an IPv6 address), for tools that take -g/-x.
gid_index() {
	timeout 20 ibv_devinfo -v -d "$1" |
		sed -n "s/.*GID\\[ *\\([0-9]*\\)\\]:[[:space:]]*$2, RoCE v2\$/\\1/p" | head -n 1
}

# an rdma_cm listener, or the TCP port the verbs tools exchange QPs on
server_listening() {
	timeout 5 rdma res show cm_id 2> /dev/null | grep -q 'state LISTEN' ||
		ss -ltn 2> /dev/null | grep -q ':18515 '
}
# ...and no rdma_cm id of a server before it still holds that port: its
# teardown may outlast the listener's entry (a new server's
# rdma_bind_addr then fails with the port in use)
server_gone() {
	! server_listening &&
		! timeout 5 rdma res show cm_id 2> /dev/null |
			grep -q 'src-addr [^ ]*:18515 '
}

# perftest 4.5-0.17 (Debian 12) cannot retry its rdma_cm connection: when
# the client's first connect is refused because the server is not yet
# listening for it (the two race after their control-channel handshake),
# the client crashes or corrupts its own state, and the server waits for
# a connection that never comes (fixed upstream in perftest commit
# 3d9d8d0; Documentation/performance-findings.rst, "perftest's rdma_cm
# connection retry"). perftest says so before it fails.
perftest_lost_retry() { grep -q 'Event: RDMA_CM_EVENT_REJECTED' <<< "$1"; }

# run_watched SECS CMD...: CMD under a SECS timeout; if it still runs at
# half its time, this host's QPs, counters and TCP sockets (their queues:
# bytes a peer sent that nobody read) go to the log, so that a stall can
# be told from a slow run and chased on either side.
run_watched() {
	local secs=$1 pid wpid rc
	shift
	timeout "$secs" "$@" &
	pid=$!
	stall_snapshot $((secs / 2)) "$pid" &
	wpid=$!
	wait "$pid"
	rc=$?
	kill "$wpid" 2> /dev/null
	wait "$wpid" 2> /dev/null
	return "$rc"
}
stall_snapshot() { # SECS PID
	local d
	sleep "$1"
	kill -0 "$2" 2> /dev/null || return 0
	echo "stall_snapshot: still running after $1 s; this host's state:"
	timeout 10 rdma -dd res show qp
	for d in /sys/class/infiniband/*; do
		[ -d "$d/ports/1/hw_counters" ] || continue
		echo "${d##*/}: $(hw_counters_nonzero "${d##*/}")"
	done
	timeout 10 ss -tmnio
}

# rping_client SECS ARGS...: rping -c ARGS, watched (run_watched), and
# failing also when the exchange was cut off: rping exits 0 when the
# server goes away while it waits ("wait for RDMA_WRITE_ADV state 10").
rping_client() {
	local secs=$1 out rc
	shift
	out=$(mktemp)
	run_watched "$secs" rping -c "$@" > "$out" 2>&1
	rc=$?
	cat "$out"
	if grep -q '^wait for .* state' "$out"; then
		echo "rping_client: the exchange was cut off"
		rc=1
	fi
	rm -f "$out"
	return "$rc"
}

# pair SERVER_CMD... -- CLIENT_CMD...: run a stock tool's server in the
# background and its client against it, both under the step's timeout;
# ok when both exit 0. The client retries while the server starts up; a
# perftest client that lost its connection retry gets a new server.
pair() {
	local srv=() cli=() spid rc=1 i out restarts=0
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	"${srv[@]}" &
	spid=$!
	# an early client is refused, and some tools (perftest) then crash or
	# leave a half-made connection behind: dial once the server listens
	wait_for 30 server_listening
	for i in 1 2 3 4 5 6 7 8 9 10; do
		sleep 1
		out=$("${cli[@]}" 2>&1) && { echo "$out"; rc=0; break; }
		echo "$out"
		if perftest_lost_retry "$out" && [ "$restarts" -lt 2 ]; then
			restarts=$((restarts + 1))
			echo "pair: perftest's client was refused once and cannot retry (perftest 4.5 bug): new server"
			kill "$spid" 2> /dev/null
			wait "$spid" 2> /dev/null
			# its listener goes with its file, maybe later: a new
			# server binding the port before that fails
			wait_for 30 server_gone
			"${srv[@]}" &
			spid=$!
			wait_for 30 server_listening
			continue
		fi
		kill -0 "$spid" 2> /dev/null || break
		echo "pair: client attempt $i failed, retrying"
	done
	wait "$spid" || rc=1
	return "$rc"
}

# peer_pair ROLE SERVER_CMD... -- CLIENT_CMD... (two hosts): on the server
# host run the server, on the client host run the client once the server
# listens, retrying until it answers. ROLE is "server" or "client". The
# client cannot see the peer's rdma_cm listener, so the server's host
# answers for it on a TCP port (peer_helper below).
READY_PORT=19999
RESTART_PORT=19997
PEER_STATE=/tmp/peer_pair
peer_pair() {
	local role=$1 srv=() cli=() i spid rc peer out probe=first
	shift
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	if [ "$role" = server ]; then
		peer_helper_start
		for i in 1 2 3; do
			"${srv[@]}" &
			spid=$!
			wait_for 30 server_listening
			echo "$spid" > "$PEER_STATE/server"
			: > "$PEER_STATE/ready"
			wait "$spid"
			rc=$?
			rm -f "$PEER_STATE/ready" "$PEER_STATE/server"
			[ "$rc" = 0 ] && return 0
			echo "peer_pair: server attempt $i failed ($rc), serving again"
			wait_for 30 server_gone
		done
		return "$rc"
	fi
	peer=192.0.2.$((10 + 3 - ${VM_HOST:-1}))
	out=$(mktemp)
	for i in $(seq 1 30); do
		wait_for 60 peer_ready "$peer" "$probe"
		# shown as it comes (a step killed at its timeout keeps it)
		"${cli[@]}" 2>&1 | tee "$out"
		[ "${PIPESTATUS[0]}" = 0 ] && { rm -f "$out"; return 0; }
		probe=again
		if perftest_lost_retry "$(cat "$out")"; then
			echo "peer_pair: perftest's client was refused once and cannot retry (perftest 4.5 bug): new server"
			wait_for 10 tcp_port_open "$peer" "$RESTART_PORT"
			probe=first
		fi
		echo "peer_pair: client attempt $i failed, retrying"
		sleep 2
	done
	rm -f "$out"
	return 1
}

# A two-host test walks its steps once per server host. Two hosts on the
# same srdma transport run the same code at both ends, so such a test sets
# PEER_BOTH_WAYS=0: each step runs once, its server alternating between
# the hosts; against another driver every step runs from both sides.
# t_pass SERVER_HOST DESC CMD...: `t` for the next step of SERVER_HOST's
# pass (t_pass_begin [OFFSET] starts one; an odd OFFSET swaps which host
# serves which step), unless the other host's pass runs it.
PEER_BOTH_WAYS=1
t_pass_begin() { _pass_step=${1:-0}; }
t_pass() {
	local server_host=$1
	shift
	_pass_step=$((_pass_step + 1))
	[ "$PEER_BOTH_WAYS" = 1 ] || [ $(((_pass_step + server_host) % 2)) = 0 ] || return 0
	t "$@"
}
# peer_passes: how many times a pass's steps run in all (tap_plan)
peer_passes() { [ "$PEER_BOTH_WAYS" = 1 ] && echo 2 || echo 1; }

# peer_ready HOST first|again: the peer's server listens. "first" takes
# the server's readiness, so that a client does not mistake the previous
# step's server, still exiting, for its own; "again" (a retry within the
# step) asks whether the server it already met still runs.
peer_ready() {
	timeout 10 bash -c 'exec 3<> "/dev/tcp/$0/$1" && printf "%s\n" "$2" >&3 &&
		read -r -n 1 -t 8 ans <&3 && [ "$ans" = y ]' "$1" "$READY_PORT" "$2" 2> /dev/null
}

# One python process per test on a server host answers peer_pair's two
# ports, started with the test's first server step and gone with the test
# (its shell, $_tap_pid): one per step cost a second of the emulated
# guest's CPU at the moment the step connects. On READY_PORT it answers
# "y" if $PEER_STATE/ready exists (and takes it, for "first") or if the
# server still runs (for "again"). On RESTART_PORT it ends the server in
# $PEER_STATE/server and every process under it: a server started through
# lib.sh's timeout function is a subshell whose children would outlive it,
# holding the server's port.
peer_helper_start() {
	local owner=${_tap_pid:-$$} pid for
	mkdir -p "$PEER_STATE"
	# this test's helper, still running (an earlier test's has ended)
	read -r pid for < "$PEER_STATE/helper" 2> /dev/null &&
		[ "$for" = "$owner" ] && kill -0 "$pid" 2> /dev/null && return 0
	/usr/bin/python3 -c "$peer_helper" "$READY_PORT" "$RESTART_PORT" \
		"$PEER_STATE" "$owner" < /dev/null > /dev/null 2>&1 &
	echo "$! $owner" > "$PEER_STATE/helper"
}
peer_helper='import os, select, signal, socket, sys
ready_port, restart_port, state, owner = sys.argv[1:5]

def listener(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("", int(port)))
    s.listen(8)
    return s

def server():
    try:
        with open(os.path.join(state, "server")) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None

def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False

def end_tree(top):
    kids = {}
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    todo = [top]
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass

def answer(conn):
    conn.settimeout(5)
    try:
        probe = conn.recv(16).strip()
    except OSError:
        return
    ok = False
    if probe == b"first":
        try:
            os.unlink(os.path.join(state, "ready"))
            ok = True
        except OSError:
            pass
    elif probe == b"again":
        pid = server()
        ok = pid is not None and alive(pid)
    if ok:
        conn.sendall(b"y")

ready, restart = listener(ready_port), listener(restart_port)
while alive(int(owner)):
    for s in select.select([ready, restart], [], [], 1)[0]:
        conn = s.accept()[0]
        if s is ready:
            answer(conn)
        else:
            pid = server()
            if pid is not None:
                end_tree(pid)
        conn.close()'

# tcp_barrier (two hosts): returns on each host once both have called it,
# 1 if the peer did not come within 300 s. It goes over TCP, so it holds
# where RDMA traffic cannot get through (a test about to drop every RoCE
# frame). Host2 listens, host1 dials. Needs nothing from lib.sh (the bench
# and profile guests use it too).
BARRIER_PORT=19998
tcp_barrier() {
	local end=$((SECONDS + 300 * ${TIMEOUT_SCALE:-1}))
	if [ "${VM_HOST:-1}" = 2 ]; then
		tcp_accept_once 300 "$BARRIER_PORT"
		return
	fi
	until tcp_port_open 192.0.2.12 "$BARRIER_PORT"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}
tcp_port_open() { timeout 3 bash -c "exec 3<>/dev/tcp/$1/$2" 2> /dev/null; }
# tcp_accept_once SECS PORT: listen on PORT until one peer connects.
tcp_accept_once() {
	timeout "$1" /usr/bin/python3 -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", int(sys.argv[1])))
s.listen(1)
s.accept()' "$2"
}

# pattern_bytes SEED MIB: MIB MiB of pseudo-random bytes from SEED, the
# same on every host (the ULP tests write on one, check on the other).
pattern_bytes() {
	/usr/bin/python3 -c 'import random, sys
sys.stdout.buffer.write(random.Random(sys.argv[1]).randbytes(int(sys.argv[2]) << 20))' \
		"$1" "$2"
}

# timed NAME CMD...: run CMD, keep its time in ms in $work/NAME.ms
timed() {
	local name=$1 t0 t1
	shift
	t0=$(date +%s%N)
	"$@" || return 1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000)) > "$work/$name.ms"
	echo "$name: $(cat "$work/$name.ms") ms"
}

# fio_verify NAME DEV SIZE OUT: 4k random writes of SIZE to block device
# DEV, each read back and checked (crc32c); fio's report in OUT, shown.
fio_verify() {
	local rc=0
	timeout 400 fio --name="$1" --filename="$2" --rw=randwrite \
		--bs=4k --size="$3" --direct=1 --ioengine=libaio --iodepth=16 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 \
		--output="$4" || rc=$?
	cat "$4"
	return "$rc"
}
