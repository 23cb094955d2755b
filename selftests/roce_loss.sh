#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-hosts: 2
# timeout: 2000
# RC over a lossy wire: with netem dropping 2%, reordering 5%, duplicating
# 1% and corrupting 0.1% of the frames both ways (all but rdma_cm's MADs),
# 128 MiB of RDMA WRITEs and SENDs (rc_xfer.c: every byte checked, every
# round exactly once), 64
# WRITEs of 64 KiB each read back by a READ posted together with the SEND
# behind it (a NAK for the SEND must not skip the READ's lost responses;
# small, since a READ response lost or reordered costs a go-back), and
# rping -V's verified READ/WRITE traffic arrive intact; with every RoCE
# frame dropped, the requester's WQE ends with "retry counter exceeded"
# within its timeout budget instead of hanging, a message longer than the
# requester's window too; with only the ACKs lost for a while, the timeout
# resends one packet, not the window. Recovery is selective:
# the responder holds packets past a gap and the requester resends only
# the missing one (the counters show both).
# The bulk WRITEs and SENDs and the READs run at an MTU of 9000 (RoCE's
# 4096-byte path MTU, whose packets virtio-net hands over in pages: the
# responder checks, holds and places them where they lie); rping and the
# rest at 1500, where every packet is linear.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma tc ibv_rc_pingpong rping
require_test_netdev
[ -x "${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/rc_xfer" ] || tap_skip_all "rc_xfer not built (make -C selftests)"
[ -n "${VM_HOST:-}" ] || tap_skip_all "needs two test VMs (VM_HOST unset)"
modprobe sch_netem 2> /dev/null
modprobe sch_prio 2> /dev/null
me=$VM_HOST
s4=192.0.2.12 # host2 serves

tap_cleanup() {
	tc qdisc del dev "$NETDEV" root 2> /dev/null
	srdma_cleanup dev0
	ip link set "$NETDEV" mtu 1500
}

# MTU PATH_MTU: this host's MTU and its port's, once the other host is
# done with the traffic at the old MTU; then wait for it to have the new.
mtu_both() {
	tcp_barrier && ip link set "$NETDEV" mtu "$1" &&
		wait_active_mtu dev0 "$2" && tcp_barrier
}

counters() { hw_counters_all dev0; }
# The loss is for the transport under test, not for rdma_cm: the GSI QP's
# MADs (BTH destination QP 1) bypass netem. rping's client destroys its id
# right after rdma_disconnect(), which cancels the IB CM's resends of its
# DREQ: one DREQ lost and the server waits for a disconnect that never
# comes (on any fabric). The MADs' own delivery is tested elsewhere.
lossy() {
	tc qdisc del dev "$NETDEV" root 2> /dev/null
	tc qdisc add dev "$NETDEV" root handle 1: prio bands 3 \
		priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
		tc qdisc add dev "$NETDEV" parent 1:2 handle 20: netem delay 1ms \
			loss 2% reorder 5% duplicate 1% corrupt 0.1% &&
		tc filter add dev "$NETDEV" parent 1: protocol ip u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff \
			match u32 0x00000001 0x00ffffff at 32 flowid 1:1
}
# The MADs took the lossless band, the rest the lossy one.
mads_bypassed() {
	tc -s class show dev "$NETDEV"
	tc -s class show dev "$NETDEV" | awk '/class prio 1:1 /{c=1} c && /Sent/{print $4; exit}' |
		grep -qv '^0$'
}
# 100% loss for RoCE only: TCP (the tools' own set-up) still gets through.
blackhole() {
	tc qdisc del dev "$NETDEV" root 2> /dev/null
	tc qdisc add dev "$NETDEV" root handle 1: prio &&
		tc qdisc add dev "$NETDEV" parent 1:3 handle 30: netem loss 100% &&
		tc filter add dev "$NETDEV" parent 1: protocol ip u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:3
}
role() { [ "$me" = 2 ] && echo server || echo client; }
# Host1 sends the bulk: after a NAK it resent single packets; host2
# receives it: it held packets that came after a gap instead of dropping.
recovered_selectively() {
	local c=retransmit_probes
	[ "$me" = 2 ] && c=rx_reorder_held
	echo "$c $(hw_counter dev0 "$c")"
	[ "$(hw_counter dev0 "$c")" -gt 0 ]
}
xfer=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/rc_xfer
ROUNDS=${ROCE_LOSS_ROUNDS:-64} # of 1 MiB WRITE + 1 MiB SEND
writes_sends() {
	local t0=$SECONDS
	peer_pair "$(role)" timeout 600 "$xfer" -s "$s4" -n "$ROUNDS" -z 1048576 -- \
		timeout 600 "$xfer" -c "$s4" -n "$ROUNDS" -z 1048576 || return 1
	echo "moved $((2 * ROUNDS)) MiB in $((SECONDS - t0)) s"
}
RD_ROUNDS=${ROCE_LOSS_READ_ROUNDS:-64} # of 64 KiB WRITE + READ + SEND
writes_reads_sends() {
	peer_pair "$(role)" timeout 600 "$xfer" -s "$s4" -n "$RD_ROUNDS" -z 65536 -- \
		timeout 600 "$xfer" -c "$s4" -n "$RD_ROUNDS" -z 65536 -r
}
reads_writes() {
	peer_pair "$(role)" \
		timeout 400 rping -s -a "$s4" -V -C 64 -S 65000 -- \
		timeout 400 rping -c -a "$s4" -V -C 64 -S 65000
}
# Host2 drops its ACKs and NAKs (BTH opcode 0x11) until the first window of
# a 1 MiB WRITE (256 packets) has arrived, then lets them through: host1's
# timer fires with everything delivered. Resending the oldest packet alone
# recovers that for one duplicate; going back would resend the window.
window_in() { [ $(($(hw_counter dev0 rx_packets) - $1)) -ge 256 ]; }
acks_lost() {
	local to pr dup rx pid rc=0
	to=$(hw_counter dev0 retransmit_timeouts)
	pr=$(hw_counter dev0 retransmit_probes)
	dup=$(hw_counter dev0 rx_duplicate)
	rx=$(hw_counter dev0 rx_packets)
	tc qdisc del dev "$NETDEV" root 2> /dev/null
	if [ "$me" = 2 ]; then
		tc qdisc add dev "$NETDEV" root handle 1: prio &&
			tc filter add dev "$NETDEV" parent 1: protocol ip u32 \
				match ip protocol 17 0xff match ip dport 4791 0xffff \
				match u8 0x11 0xff at 28 action drop || return 1
		(
			wait_for 60 window_in "$rx"
			tc qdisc del dev "$NETDEV" root
		) &
		pid=$!
	fi
	peer_pair "$(role)" timeout 120 "$xfer" -s "$s4" -n 2 -z 1048576 -- \
		timeout 120 "$xfer" -c "$s4" -n 2 -z 1048576 || rc=1
	if [ "$me" = 2 ]; then
		wait "$pid"
		dup=$(($(hw_counter dev0 rx_duplicate) - dup))
		echo "host2 took $dup duplicate packets"
		[ "$dup" -le 4 ] || rc=1
	else
		to=$(($(hw_counter dev0 retransmit_timeouts) - to))
		pr=$(($(hw_counter dev0 retransmit_probes) - pr))
		echo "host1: $to timeouts, $pr packets resent alone"
		[ "$to" -ge 1 ] && [ "$pr" -ge 1 ] || rc=1
	fi
	return "$rc"
}
# Host1's QP must give up: status 12 (IBV_WC_RETRY_EXC_ERR), in seconds.
# SIZE bytes a message: 2 MiB is 2048 packets at a 1024-byte path MTU,
# more than the requester's window of 256, so the requester is still on
# the message, packets out, when the retries run out.
retry_exceeded() { # SIZE
	local out t0 t1
	if [ "$me" = 2 ]; then
		# the server never hears from the client: it is killed here
		timeout 40 ibv_rc_pingpong -d dev0 -g "$g4" -n 10 -m 1024 -s "$1"
		return 0
	fi
	for _ in $(seq 1 40); do
		t0=$(date +%s)
		out=$(timeout 60 ibv_rc_pingpong -d dev0 -g "$g4" -n 10 \
			-m 1024 -s "$1" "$s4" 2>&1)
		# not connected yet (the server starts later): try again
		grep -q "Couldn't connect" <<< "$out" || break
		sleep 2
	done
	t1=$(date +%s)
	echo "$out"
	echo "gave up after $((t1 - t0)) s"
	grep -q "retry counter exceeded" <<< "$out" && [ $((t1 - t0)) -lt 40 ]
}

tap_plan 15
t "host$me: sroce dev0 on $NETDEV" mkdev sroce dev0 "$NETDEV" || tap_bail "no device"
g4=$(gid_index dev0 "::ffff:192.0.2.$((10 + me))")
STEP_TIMEOUT=320
t "host$me: both hosts at MTU 9000 (path MTU 4096)" mtu_both 9000 4096
t "netem loss 2%, reorder 5%, duplicate 1%, corrupt 0.1% on $NETDEV" lossy
STEP_TIMEOUT=700
t "$ROUNDS MiB WRITE + $ROUNDS MiB SEND at MTU 9000, every byte checked, through the loss" \
	writes_sends
t "$RD_ROUNDS x 64 KiB WRITE, READ back, SEND posted at once at MTU 9000, checked, through the loss" \
	writes_reads_sends
t "host$me: payloads placed from pages through the loss (rx_paged)" placed_from_pages dev0
STEP_TIMEOUT=320
t "host$me: both hosts at MTU 1500 (path MTU 1024)" mtu_both 1500 1024
STEP_TIMEOUT=700
t "rping -V (RDMA READ/WRITE, 65000 B x 64) at MTU 1500 through the loss" reads_writes
t "host$me: recovery was selective (reorder queue, single resends)" recovered_selectively
t "host$me: rdma_cm's MADs bypassed the loss" mads_bypassed
diag "$(counters)"
# Host1's rping client may have left before host2's server heard the
# disconnect; a DREQ lost to netem is resent only seconds later, and the
# blackhole would swallow that too: wait for each other first.
STEP_TIMEOUT=320
t "host$me: both hosts are done with the lossy traffic" tcp_barrier
STEP_TIMEOUT=300
t "ACKs lost, data not: the timeout resends one packet, not the window" acks_lost
STEP_TIMEOUT=120
t "every RoCE frame dropped" blackhole
t "requester completes with retry exceeded, not a hang" retry_exceeded 4096
t "a message longer than the window: retry exceeded too" retry_exceeded 2097152
diag "$(counters)"
