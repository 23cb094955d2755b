#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-hosts: 2
# timeout: 900
# RoCE congestion control (issue 19) through a bottleneck on the wire:
# host1's egress is rate-limited (htb or tbf, 40 Mbit/s) into ONE
# ECN-marking queue (codel or RED with ecn; not fq_codel, whose per-flow
# queues would share the link by themselves). A 64 KiB RDMA WRITE stream
# (ib_write_bw, host1 to host2) runs alone and then beside an iperf3 TCP
# stream through it, with CC off (the baseline: reported, only the tools
# must complete) and on; and the TCP stream alone, whose goodput is the
# link's capacity as this test bed reaches it (an emulated guest may not
# reach the limit). With CC on and TCP, in one of two runs of that phase
# (20 s of two flows through an emulated bottleneck vary: the link's
# total read 0.85-0.93 of capacity in eight CI runs and 0.80 in one): no
# failed completion, resent packets < 1% of those sent, sroce's and
# TCP's goodput within 0.5-2x of each other, the two together >= 0.8x
# that capacity (and reported against the configured limit too); both
# runs' tools must complete. With CC on alone: the
# receiver saw CE marks and sent CNPs, the sender received CNPs and cut
# its rate, and every RoCE packet it sent was ECT(0) (u32 filters on the
# htb count them by ECN codepoint). Then a byte-checked transfer still
# works and the qdisc goes.
# host2 samples its received RoCE bytes every second (hw_counters
# rx_bytes) and serves iperf3 (JSON, 1 s intervals); host1 gathers both
# hosts' files and writes the per-second CSV, the table (also in this
# log) and an SVG plot (tools/roce_cc_report.py) into its log directory.
# Knobs (SRDMA_CHECK_ENV): ROCE_CC_RATE (Mbit/s, 40), ROCE_CC_SECS (per
# phase, 20), ROCE_CC_SHAPER (htb|tbf), ROCE_CC_AQM (codel|red),
# ROCE_CC_AQM_ARGS (replaces the AQM's parameters), ROCE_CC_TCP_ECN (1:
# TCP asks for ECN, so both flows hear the same marks; 2: Linux's default),
# ROCE_CC_MIN_RATIO/MAX_RATIO (0.5/2), ROCE_CC_MIN_TOTAL (0.8 x TCP alone),
# ROCE_CC_MAX_RESENT (0.01), ROCE_CC_PERF_NICE (perftest's, 19),
# ROCE_CC_PERF_EVENTS (1: perftest sleeps on completion events, -e),
# ROCE_CC_XFER_ROUNDS (16 x 1 MiB), ROCE_CC_VERB
# (write; read: the stream is ib_read_bw, host2 reading from host1, so
# that host1's READ responses cross the bottleneck and the responder's
# limiter is what CNPs drive), ROCE_CC_PARAMS (DCQCN parameters to try
# instead of the defaults, NAME=VALUE,...: ai_rate_kbps=1000,...),
# ROCE_CC_GSO (0: host1's netdev takes no GSO packets while the
# bottleneck is up, so its AQM sees and marks TCP's segments one by one,
# as a switch would; 1: leave the netdev as it is).
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma tc iperf3 ib_write_bw ib_read_bw tar
require_test_netdev
xfer=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/rc_xfer
[ -x "$xfer" ] || tap_skip_all "rc_xfer not built (make -C selftests)"
[ -n "${VM_HOST:-}" ] || tap_skip_all "needs two test VMs (VM_HOST unset)"
me=$VM_HOST
s4=192.0.2.12 # host2 receives and serves
s4_1=192.0.2.11 # host1: the ib_read_bw server (ROCE_CC_VERB=read)
report=$REPO/tools/roce_cc_report.py
cc=/sys/class/infiniband/dev0/cc

# 40: below what either flow moves alone between two emulated guests, so
# that the link, not their CPUs, is the bottleneck (Documentation/testing.rst)
RATE=${ROCE_CC_RATE:-40}
SECS=${ROCE_CC_SECS:-20}
SHAPER=${ROCE_CC_SHAPER:-htb}
AQM=${ROCE_CC_AQM:-codel}
TCP_ECN=${ROCE_CC_TCP_ECN:-1}
MIN_RATIO=${ROCE_CC_MIN_RATIO:-0.5}
MAX_RATIO=${ROCE_CC_MAX_RATIO:-2}
MIN_TOTAL=${ROCE_CC_MIN_TOTAL:-0.8}
MAX_RESENT=${ROCE_CC_MAX_RESENT:-0.01}
XFER_ROUNDS=${ROCE_CC_XFER_ROUNDS:-16}
VERB=${ROCE_CC_VERB:-write}
PERF_NICE=${ROCE_CC_PERF_NICE:-19}
PERF_EVENTS=${ROCE_CC_PERF_EVENTS:-1}
GSO=${ROCE_CC_GSO:-1}
ROCE_CC_PARAMS=${ROCE_CC_PARAMS:-}
[[ "$RATE" =~ ^[1-9][0-9]*$ ]] || tap_skip_all "ROCE_CC_RATE=$RATE: Mbit/s wanted"
[[ "$PERF_NICE" =~ ^-?[0-9]+$ ]] || tap_skip_all "ROCE_CC_PERF_NICE=$PERF_NICE: a nice value"
if ! [[ "$SECS" =~ ^[1-9][0-9]*$ ]] || [ "$SECS" -lt 8 ]; then
	tap_skip_all "ROCE_CC_SECS=$SECS: 8 s or more wanted"
fi
case "$SHAPER" in htb | tbf) ;; *) tap_skip_all "ROCE_CC_SHAPER=$SHAPER: htb or tbf" ;; esac
case "$AQM" in codel | red) ;; *) tap_skip_all "ROCE_CC_AQM=$AQM: codel or red" ;; esac
case "$VERB" in write | read) ;; *) tap_skip_all "ROCE_CC_VERB=$VERB: write or read" ;; esac
case "$GSO" in 0 | 1) ;; *) tap_skip_all "ROCE_CC_GSO=$GSO: 0 or 1" ;; esac
# A slowed kernel's guests (the debug kernel's: sroce moved 0.9 MB/s)
# cannot fill the bottleneck: no queue, no mark, nothing to judge. There
# it runs only at a rate asked for.
if [ "$TIMEOUT_SCALE" != 1 ] && [ -z "${ROCE_CC_RATE:-}" ]; then
	tap_skip_all "SRDMA_TIMEOUT_SCALE=$TIMEOUT_SCALE: the guests cannot fill $RATE Mbit/s; set ROCE_CC_RATE to run"
fi
perf=ib_${VERB}_bw
rate_bytes=$((RATE * 1000000 / 8))
if [ -n "${ROCE_CC_AQM_ARGS:-}" ]; then
	read -r -a aqm_args <<< "$ROCE_CC_AQM_ARGS"
elif [ "$AQM" = codel ]; then
	aqm_args=(target 5ms interval 100ms ecn)
else
	# marks from 3 ms of queue at the limit, all of them past 9 ms
	red_min=$((rate_bytes * 3 / 1000))
	aqm_args=(limit $((red_min * 24)) min "$red_min" max $((red_min * 3))
		avpkt 1000 burst $((red_min * 5 / 3000 + 1)) bandwidth "${RATE}mbit"
		probability 0.1 ecn)
fi
for m in "sch_$SHAPER" "sch_$AQM"; do
	timeout 30 modprobe "$m" 2> /dev/null
done

tap_cleanup() {
	if [ "$me" = 1 ]; then
		timeout 10 tc qdisc del dev "$NETDEV" root 2> /dev/null
		sysctl -q -w "net.ipv4.tcp_ecn=$tcp_ecn_was"
		gso_restore
	fi
	srdma_cleanup dev0
}

counters() { hw_counters_all dev0; }

have_cc() {
	local kv
	[ -w "$cc/enable" ] || { echo "no $cc/enable"; return 1; }
	for kv in ${ROCE_CC_PARAMS//,/ }; do
		echo "${kv#*=}" > "$cc/${kv%%=*}" || { echo "cc/$kv refused"; return 1; }
	done
	grep -r . "$cc" | tee "$TAP_LOGDIR/cc-params-host$me.txt"
	# the counters this test reads
	for c in cc_ce_rx cc_cnp_tx cc_cnp_rx cc_rate_dec cc_rate_inc; do
		[ -r "/sys/class/infiniband/dev0/ports/1/hw_counters/$c" ] ||
			{ echo "no hw_counters/$c"; return 1; }
	done
}

set_cc() { # 0|1
	echo "$1" > "$cc/enable" || return 1
	echo "cc/enable: $(cat "$cc/enable")"
	[ "$(cat "$cc/enable")" = "$1" ]
}

# TCP hands the qdisc GSO packets of about a millisecond of its pacing
# rate (at least two segments), sroce one packet per skb: an AQM that
# marks per skb, as codel does, would then mark sroce several times as
# often per byte. A switch sees wire packets; so does this qdisc without
# GSO on the netdev (gso_max_segs 1: TCP builds single-segment skbs). Off
# by default: TCP small queues then allow TCP two segments in the host,
# which behind sroce's queue starves it (Documentation/testing.rst).
gso_was=
gso_segs() { timeout 10 ip -d link show dev "$NETDEV" | grep -o 'gso_max_segs [0-9]*'; }
gso_off() {
	local now
	[ "$GSO" = 0 ] || return 0
	gso_was=$(gso_segs) || return 1
	timeout 10 ip link set dev "$NETDEV" gso_max_segs 1 || return 1
	now=$(gso_segs)
	echo "$now"
	[ "$now" = "gso_max_segs 1" ]
}
# once: bottleneck_gone() restores, and tap_cleanup() after a bail
gso_restore() {
	[ -n "$gso_was" ] || return 0
	timeout 10 ip link set dev "$NETDEV" $gso_was || return 1
	gso_was=
}

# The bottleneck: host1's egress limited to RATE Mbit/s, one AQM queue.
bottleneck() {
	timeout 10 tc qdisc show dev "$NETDEV"
	gso_off || return 1
	timeout 10 tc qdisc del dev "$NETDEV" root 2> /dev/null
	if [ "$SHAPER" = htb ]; then
		timeout 10 tc qdisc add dev "$NETDEV" root handle 1: htb default 1 &&
			timeout 10 tc class add dev "$NETDEV" parent 1: classid 1:1 htb \
				rate "${RATE}mbit" ceil "${RATE}mbit" quantum 60000 || return 1
	else
		# a burst of one jiffy (HZ 250) at the rate, at least 16 KiB
		local burst=$((rate_bytes / 250 > 16384 ? rate_bytes / 250 : 16384))
		timeout 10 tc qdisc add dev "$NETDEV" root handle 1: tbf \
			rate "${RATE}mbit" burst "$burst" latency 100ms || return 1
	fi
	timeout 10 tc qdisc add dev "$NETDEV" parent 1:1 handle 10: \
		"$AQM" "${aqm_args[@]}" || return 1
	[ "$SHAPER" != htb ] || ecn_filters || echo "no filters to count ECN codepoints"
	sysctl -w "net.ipv4.tcp_ecn=$TCP_ECN" || return 1
	timeout 10 tc -s qdisc show dev "$NETDEV"
}

# htb only: u32 filters that count host1's RoCE v2 packets (UDP 4791) by
# their ECN codepoint as they enter the qdisc, before the AQM marks any:
# pref 1 ECT(0), 2 Not-ECT, 3 ECT(1). All lead to the one class.
ecn_filters() {
	local pref=1 tos
	timeout 30 modprobe cls_u32 2> /dev/null
	for tos in 0x02 0x00 0x01; do
		timeout 10 tc filter add dev "$NETDEV" parent 1: protocol ip prio "$pref" u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff \
			match ip tos "$tos" 0x03 flowid 1:1 || return 1
		pref=$((pref + 1))
	done
}
ecn_counts() { timeout 10 tc -s filter show dev "$NETDEV" parent 1:; }

# No qdisc of ours is left on the netdev.
bottleneck_gone() {
	local out
	timeout 10 tc qdisc del dev "$NETDEV" root || return 1
	sysctl -w "net.ipv4.tcp_ecn=$tcp_ecn_was" || return 1
	gso_restore || return 1
	out=$(timeout 10 tc qdisc show dev "$NETDEV") || return 1
	echo "$out"
	! grep -Eq '^qdisc [a-z_]+ (1|10): ' <<< "$out"
}

# host2: dev0's received RoCE bytes and CNPs sent, one line a second
# ("EPOCH rx_bytes cc_cnp_tx"), on the second from its start, until killed.
sampler() { # FILE
	local hw=/sys/class/infiniband/dev0/ports/1/hw_counters t0 now k=0 d
	t0=${EPOCHREALTIME/[.,]/}
	while :; do
		echo "${EPOCHREALTIME/,/.} $(cat "$hw/rx_bytes") $(cat "$hw/cc_cnp_tx")" >> "$1"
		k=$((k + 1))
		now=${EPOCHREALTIME/[.,]/}
		d=$((t0 + k * 1000000 - now))
		[ "$d" -le 0 ] || sleep "$((d / 1000000)).$(printf %06d $((d % 1000000)))"
	done
}

# serve_once SECS PORT FILE: send FILE to the first client that asks for
# it ("GET"); connections that ask nothing (probes) are ignored.
DATA_PORT=19997
serve_once() {
	timeout "$1" /usr/bin/python3 -c 'import socket, sys
data = open(sys.argv[2], "rb").read()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", int(sys.argv[1])))
s.listen(4)
while True:
    c, _ = s.accept()
    c.settimeout(30)
    try:
        if c.makefile("rb").readline() == b"GET\n":
            c.sendall(b"%d\n" % len(data) + data)
            break
    except OSError:
        pass
    finally:
        c.close()' "$2" "$3"
}
# fetch_once SECS HOST PORT FILE: get what serve_once serves, retrying
# while the server is not there yet.
fetch_once() {
	timeout "$1" /usr/bin/python3 -c 'import socket, sys, time
while True:
    try:
        with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30) as c:
            c.sendall(b"GET\n")
            f = c.makefile("rb")
            n = int(f.readline())
            data = f.read(n)
    except (OSError, ValueError):
        time.sleep(0.5)
        continue
    if len(data) != n:
        sys.exit("short read: %d of %d bytes" % (len(data), n))
    open(sys.argv[3], "wb").write(data)
    break' "$2" "$3" "$4"
}

# The rate limiter's changes (tracepoint srdma_cc_rate) during a phase,
# into FILE for the report's rate series; nothing if tracefs is not there.
TRACEFS=/sys/kernel/tracing
rate_trace_start() {
	mountpoint -q "$TRACEFS" || mount -t tracefs nodev "$TRACEFS" 2> /dev/null
	[ -w "$TRACEFS/events/srdma/srdma_cc_rate/enable" ] || return 0
	echo 0 > "$TRACEFS/tracing_on"
	echo 4096 > "$TRACEFS/buffer_size_kb"
	echo > "$TRACEFS/trace"
	echo 1 > "$TRACEFS/events/srdma/srdma_cc_rate/enable"
	echo 1 > "$TRACEFS/tracing_on"
	# the trace clock against the samples' (the report aligns the two)
	echo "srdma_cc_epoch ${EPOCHREALTIME/,/.}" > "$TRACEFS/trace_marker"
}
rate_trace_save() { # FILE
	[ -w "$TRACEFS/events/srdma/srdma_cc_rate/enable" ] || return 0
	echo 0 > "$TRACEFS/events/srdma/srdma_cc_rate/enable"
	grep -E 'srdma_cc_rate|srdma_cc_epoch' "$TRACEFS/trace" > "$1"
	echo "$(grep -c srdma_cc_rate: "$1") rate changes traced"
}

# The host's CPU time so far (/proc/stat's "cpu" line): the report shows
# how busy each host was during the traffic, and with what.
cpu_stat() { head -n 1 /proc/stat; }

iperf_listening() { ss -ltn 2> /dev/null | grep -q ':5201 '; }
# perftest busy-polls its CQ. On a guest with one vCPU the spinning
# takes the CPU from ksoftirqd, which then runs the shaper, the AQM and
# both flows' packets late: the link as a whole slows down, the queue
# stands with the sender below the limit and every flow is marked for
# it. At nice 19 (ROCE_CC_PERF_NICE) it spins on what is left, as a
# poller on a core of its own would.
perf_args() {
	echo -d dev0 -x "$g4" -F -s 65536 -D "$SECS"
	[ "$PERF_EVENTS" = 0 ] || echo -e
}

# One phase on this host; its files in DIR/host$me. host2 starts its
# servers and its sampler, then both pass a barrier, then host1 starts
# its clients (TCP first, at once the WRITE stream); each tool runs once:
# a failed run is not retried. Then host2 hands its files to host1.
# The stream tool must exit 0; iperf3 too where STRICT is 1 (CC on: with CC
# off, what the WRITE stream leaves TCP is the baseline, not a verdict).
# ROCE 0: no WRITE stream, TCP alone. VERB read: host1 serves the
# stream (ib_read_bw) and host2 is its client, started after the barrier.
phase_run() { # DIR ROCE(0|1) TCP(0|1) STRICT(0|1)
	local dir=$1 roce=$2 tcp=$3 strict=$4 h prc=0 irc=0 ipid spid ppid=""
	h=$dir/host$me
	mkdir -p "$h"
	counters > "$h/counters-before.txt"
	if [ "$me" = 2 ]; then
		if [ "$tcp" = 1 ]; then
			timeout $((SECS + 120)) iperf3 -s -1 -J \
				> "$h/iperf3-server.json" 2> "$h/iperf3-server.err" &
			ipid=$!
			wait_for 30 iperf_listening || echo "iperf3 server not listening"
		fi
		if [ "$roce" = 1 ] && [ "$VERB" = write ]; then
			# shellcheck disable=SC2046 # perf_args is a list of options
			timeout $((SECS + 120)) nice -n "$PERF_NICE" stdbuf -oL "$perf" $(perf_args) \
				> "$h/perftest-server.txt" 2>&1 &
			ppid=$!
			wait_for 30 server_listening || echo "$perf server not listening"
		fi
		sampler "$h/samples.txt" &
		spid=$!
		tcp_barrier || echo "barrier failed"
		cpu_stat > "$h/stat-before.txt"
		if [ "$roce" = 1 ] && [ "$VERB" = read ]; then
			# shellcheck disable=SC2046
			timeout $((SECS + 90)) nice -n "$PERF_NICE" stdbuf -oL "$perf" $(perf_args) "$s4_1" \
				> "$h/perftest.txt" 2>&1 || prc=$?
		elif [ "$roce" = 1 ]; then
			wait "$ppid" || prc=$?
		fi
		[ "$tcp" = 0 ] || wait "$ipid" || irc=$?
		cpu_stat > "$h/stat-after.txt"
		kill "$spid"
		wait "$spid" 2> /dev/null
	else
		timeout 10 tc -s qdisc show dev "$NETDEV" > "$h/tc-before.txt"
		ecn_counts > "$h/filters-before.txt"
		if [ "$roce" = 1 ] && [ "$VERB" = read ]; then
			# shellcheck disable=SC2046
			timeout $((SECS + 120)) nice -n "$PERF_NICE" stdbuf -oL "$perf" $(perf_args) \
				> "$h/perftest-server.txt" 2>&1 &
			ppid=$!
			wait_for 30 server_listening || echo "$perf server not listening"
		fi
		rate_trace_start
		tcp_barrier || echo "barrier failed"
		cpu_stat > "$h/stat-before.txt"
		if [ "$tcp" = 1 ]; then
			timeout $((SECS + 90)) iperf3 -c "$s4" -t $((SECS + 4)) -i 1 -J \
				> "$h/iperf3-client.json" 2> "$h/iperf3-client.err" &
			ipid=$!
		fi
		if [ "$roce" = 1 ] && [ "$VERB" = read ]; then
			wait "$ppid" || prc=$?
		elif [ "$roce" = 1 ]; then
			# shellcheck disable=SC2046
			timeout $((SECS + 90)) nice -n "$PERF_NICE" stdbuf -oL "$perf" $(perf_args) "$s4" \
				> "$h/perftest.txt" 2>&1 || prc=$?
		fi
		[ "$tcp" = 0 ] || wait "$ipid" || irc=$?
		cpu_stat > "$h/stat-after.txt"
		rate_trace_save "$h/rate-trace.txt"
		timeout 10 tc -s qdisc show dev "$NETDEV" > "$h/tc-after.txt"
		ecn_counts > "$h/filters-after.txt"
	fi
	# iperf3 -J exits 0 even when refused: its JSON then says "error"
	if [ "$tcp" = 1 ] && grep -q '"error"' "$h"/iperf3-*.json; then
		grep '"error"' "$h"/iperf3-*.json
		[ "$irc" != 0 ] || irc=1
	fi
	counters > "$h/counters-after.txt"
	echo "perftest=$prc iperf3=$irc" > "$h/rc.txt"
	cat "$h/rc.txt"
	[ "$roce" = 0 ] || tail -n 5 "$h"/perftest*.txt
	if [ "$me" = 2 ]; then
		if ! tar -C "$dir" -cf "$dir/host2.tar" host2 ||
			! serve_once 150 "$DATA_PORT" "$dir/host2.tar"; then
			echo "host1 fetched nothing"
			return 1
		fi
	elif ! fetch_once $((SECS + 240)) "$s4" "$DATA_PORT" "$dir/host2.tar" ||
		! tar -C "$dir" -xf "$dir/host2.tar"; then
		echo "no files from host2"
		return 1
	fi
	[ "$prc" = 0 ] && { [ "$irc" = 0 ] || [ "$strict" = 0 ]; }
}

# rc_xfer through the bottleneck, CC on: every byte checked.
xfer_checked() {
	local role=client
	[ "$me" = 2 ] && role=server
	peer_pair "$role" timeout 300 "$xfer" -s "$s4" -n "$XFER_ROUNDS" -z 1048576 -- \
		timeout 300 "$xfer" -c "$s4" -n "$XFER_ROUNDS" -z 1048576
}

# DIR: the CC-on phase beside TCP in DIR met every criterion.
run_shares() {
	local rc=0
	timeout 30 /usr/bin/python3 "$report" check "$1" --resent "$MAX_RESENT" || rc=1
	timeout 30 /usr/bin/python3 "$report" check "$1" --ratio "$MIN_RATIO" "$MAX_RATIO" || rc=1
	timeout 30 /usr/bin/python3 "$report" check "$1" --total "$MIN_TOTAL" "$capdir" || rc=1
	return "$rc"
}
# DIR...: run_shares for the first DIR, else the next.
either_run_shares() {
	local d
	for d in "$@"; do
		echo "${d##*/}:"
		run_shares "$d" && return 0
	done
	return 1
}

# one phase's figures, kept in DIR/summary.txt
show_phase() { # DIR
	timeout 30 /usr/bin/python3 "$report" show "$1" > "$1/summary.txt"
	local rc=$?
	cat "$1/summary.txt"
	return "$rc"
}

# phases: name, cc/enable, the WRITE stream, TCP beside; the baseline
# first (a fresh guest is slow for its first seconds of traffic; TCG
# translates as it goes), then TCP alone for the capacity
phases=(off-alone:0:1:0 tcp-alone:0:0:1 off-tcp:0:1:1 on-alone:1:1:0 on-tcp:1:1:1
	on-tcp-again:1:1:1)
capdir=$TAP_LOGDIR/phases/tcp-alone
tcp_ecn_was=$(sysctl -n net.ipv4.tcp_ecn)
if [ "$me" = 1 ]; then
	tap_plan $((3 + ${#phases[@]} * 3 + 2 + 1 + 2 + 2))
else
	tap_plan $((2 + ${#phases[@]} * 2 + 1 + 2))
fi
t "host$me: sroce dev0 on $NETDEV" mkdev sroce dev0 "$NETDEV" || tap_bail "no device"
t "host$me: dev0 has cc/enable and the cc_* counters" have_cc || tap_bail "no congestion control"
g4=$(gid_index dev0 "::ffff:192.0.2.$((10 + me))")
g4=${g4:-1}
if [ "$me" = 1 ]; then
	what="$SHAPER ${RATE} Mbit/s into one $AQM queue (${aqm_args[*]}), GSO $GSO"
	t "host1: bottleneck on $NETDEV: $what, tcp_ecn=$TCP_ECN" bottleneck ||
		tap_bail "no bottleneck"
	diag "DCQCN parameters: $(tr '\n' ' ' < "$TAP_LOGDIR/cc-params-host1.txt")"
fi
pdirs=()
for p in "${phases[@]}"; do
	IFS=: read -r name on roce tcp <<< "$p"
	dir=$TAP_LOGDIR/phases/$name
	pdirs+=("$dir")
	mkdir -p "$dir"
	printf '%s\n' "phase=$name" "cc=$on" "roce=$roce" "tcp=$tcp" "secs=$SECS" \
		"rate_mbit=$RATE" "shaper=$SHAPER" "aqm=$AQM" "tcp_ecn=$TCP_ECN" \
		"verb=$VERB" > "$dir/meta.txt"
	what="64 KiB RDMA ${VERB^^} stream"
	[ "$VERB" = write ] || what+=" (host2 reads host1)"
	done_what="$perf completes"
	if [ "$roce" = 0 ]; then
		what="an iperf3 TCP stream alone (the capacity)"
		done_what="iperf3 completes"
	elif [ "$tcp" = 1 ]; then
		what+=" beside an iperf3 TCP stream"
		done_what="$perf and iperf3 complete"
		[ "$on" = 1 ] || done_what="$perf completes (iperf3: reported)"
	fi
	STEP_TIMEOUT=60
	t "host$me: $name: cc/enable $on" set_cc "$on"
	STEP_TIMEOUT=$((2 * SECS + 600))
	strict=$on
	[ "$roce" = 1 ] || strict=1
	t "$name: $what for ${SECS}s: $done_what" phase_run "$dir" "$roce" "$tcp" "$strict"
	STEP_TIMEOUT=60
	if [ "$me" = 1 ]; then
		t "$name: goodput, resent packets, CNPs from both hosts" show_phase "$dir"
		diag "$(cat "$dir/summary.txt" 2> /dev/null)"
	fi
	case "$name:$me" in
	on-alone:1)
		t "$name: the sender received CNPs and cut its rate (cc_cnp_rx, cc_rate_dec > 0)" \
			timeout 30 /usr/bin/python3 "$report" check "$dir" --sender-cc
		if [ "$SHAPER" = htb ]; then
			t "$name: every RoCE packet host1 sent was ECT(0)" \
				timeout 30 /usr/bin/python3 "$report" check "$dir" --ect
		else
			t_skip "$name: every RoCE packet host1 sent was ECT(0)" \
				"counted by htb's filters only"
		fi
		;;
	on-alone:2)
		t "$name: the receiver saw CE and sent CNPs (cc_ce_rx, cc_cnp_tx > 0)" \
			timeout 30 /usr/bin/python3 "$report" check "$dir" --receiver-cc
		;;
	on-tcp-again:1)
		t "on-tcp, in one of two runs: no failed completion, resent < $MAX_RESENT of sent, sroce/TCP goodput ${MIN_RATIO}-${MAX_RATIO}x, sroce + TCP >= ${MIN_TOTAL}x TCP alone (${RATE} Mbit/s limit)" \
			either_run_shares "$TAP_LOGDIR/phases/on-tcp" "$dir"
		;;
	esac
done
STEP_TIMEOUT=400
t "$XFER_ROUNDS x 1 MiB WRITE + SEND through the bottleneck, CC on, every byte checked" xfer_checked
# the rc_xfer client needs its server's disconnect: part only then
STEP_TIMEOUT=320
t "host$me: both hosts are done with the traffic" tcp_barrier
if [ "$me" = 1 ]; then
	STEP_TIMEOUT=60
	t "host1: bottleneck removed from $NETDEV, tcp_ecn back to $tcp_ecn_was" bottleneck_gone
	t "report: roce_cc.csv, roce_cc-table.txt, roce_cc.svg in $TAP_LOGDIR" \
		timeout 60 /usr/bin/python3 "$report" report "$TAP_LOGDIR" "${pdirs[@]}"
	diag "$(cat "$TAP_LOGDIR/roce_cc-table.txt" 2> /dev/null)"
fi
