#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# timeout: 600
# Observability (Documentation/debugging.rst), on an sroce and then a
# siwarp device talking to itself: after a verified transfer the port
# counters (rdma statistic) moved by at least the bytes it moved, both
# ways; `rdma res show qp|mr -dd` (and cm_id on iWARP) shows srdma's
# driver attributes for live objects; the srdma tracepoints, enabled
# through tracefs, record packets (or FPDUs), QP state changes and iWARP
# connection steps with the fields documented.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma rping
require_test_netdev
bin=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}
[ -x "$bin/rc_xfer" ] || tap_skip_all "$bin/rc_xfer not built (make -C selftests)"
ip4=$(netdev_ip4 "$NETDEV")
[ -n "$ip4" ] || tap_skip_all "$NETDEV has no IPv4 address"
TRACEFS=/sys/kernel/tracing

tap_cleanup() {
	[ -d "$TRACEFS/events/srdma" ] && echo 0 > "$TRACEFS/events/srdma/enable"
	srdma_cleanup ob_roce ob_iwarp
}

counter_names="tx_packets tx_bytes rx_packets rx_bytes retransmits
retransmit_timeouts read_resp_nomem seq_nak_sent seq_nak_rcvd rnr_nak_sent rnr_nak_rcvd
access_nak_sent access_nak_rcvd inv_req_nak_sent inv_req_nak_rcvd
rem_op_nak_sent rem_op_nak_rcvd rnr_retry_exceeded rx_dropped
rx_malformed rx_bad_pkey rx_bad_service rx_bad_path rx_duplicate
iwarp_connects iwarp_accepts iwarp_rejects_sent iwarp_rejects_rcvd
iwarp_mpa_failures iwarp_aborts iwarp_terminate_sent iwarp_terminate_rcvd
iwarp_setup_refused iwarp_backlog_refused iwarp_accept_paused
iwarp_tx_spliced_bytes iwarp_tx_copied_bytes
cc_ce_rx cc_cnp_tx cc_cnp_rx cc_rate_dec cc_rate_inc ack_sent rx_paged
tx_queue_full tx_paged tx_trains tx_train_packets"

# every documented counter is there, in sysfs and in rdma statistic
counters_listed() { # DEV
	local c out
	out=$(timeout 20 rdma statistic show link "$1/1") || return 1
	echo "$out"
	for c in $counter_names; do
		[ -r "/sys/class/infiniband/$1/ports/1/hw_counters/$c" ] ||
			{ echo "no hw_counters/$c"; return 1; }
		grep -Eq "(^| )$c [0-9]+" <<< "$out" || { echo "rdma statistic: no $c"; return 1; }
	done
}

# One verified transfer of ROUNDS x SIZE with rc_xfer (a WRITE and a SEND
# of SIZE per round; the client fails unless the server's disconnect
# reaches it). The device is both ends, so each byte is counted once out
# and once in.
xfer() { # ROUNDS SIZE PORT
	pair timeout 100 "$bin/rc_xfer" -s "$ip4" -p "$3" -n "$1" -z "$2" -- \
		timeout 100 "$bin/rc_xfer" -c "$ip4" -p "$3" -n "$1" -z "$2"
}

counters_move() { # DEV
	local c before=() after=() d=() i=0 want=$((2 * 32 * 65000))
	local names="tx_packets tx_bytes rx_packets rx_bytes
		iwarp_tx_spliced_bytes iwarp_tx_copied_bytes ack_sent"
	for c in $names; do
		before+=("$(hw_counter "$1" "$c")")
	done
	xfer 32 65000 7480 || return 1
	for c in $names; do
		after+=("$(hw_counter "$1" "$c")")
		d+=($((after[i] - before[i])))
		echo "$c: ${before[$i]} -> ${after[$i]}"
		i=$((i + 1))
	done
	# packets: at least two per round each way; bytes: all that moved
	if [ "${d[0]}" -lt 64 ] || [ "${d[1]}" -lt "$want" ] ||
		[ "${d[2]}" -lt 64 ] || [ "${d[3]}" -lt "$want" ]; then
		echo "expected at least 64 packets and $want bytes each way"
		return 1
	fi
	if [ "$kind" = sroce ]; then
		# the last packet of each round's SEND asks for an ACK
		[ "${d[6]}" -ge 32 ] || { echo "expected >= 32 ACKs sent"; return 1; }
		return 0
	fi
	# every FPDU byte went to TCP one way or the other; over lo (scatter-
	# gather) the full buffers of 64 KB messages went by reference
	if [ $((d[4] + d[5])) -lt "${d[1]}" ] || [ "${d[4]}" -lt $((want / 2)) ]; then
		echo "expected >= ${d[1]} FPDU bytes to TCP, >= $((want / 2)) by reference"
		return 1
	fi
}

# rdma res output, one object a line (newer iproute2 wraps driver details
# onto indented lines)
res_lines() { # OBJECT DEV
	timeout 10 rdma -dd res show "$1" |
		awk 'NR > 1 && /^[[:space:]]/ { printf " %s", $0; next }
		     NR > 1 { print "" } { printf "%s", $0 } END { print "" }' |
		grep -E "^(link|dev) $2(/| )"
}

# MR keys and iovas are root's: another user's rdma res shows neither
# (a kernel consumer's iova is a kernel address), but still the MR
mr_keys_private() { # DEV
	local user
	user=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
		timeout 10 rdma -dd res show mr 2>&1 | grep -A3 "dev $1 ")
	echo "as uid 65534: $user"
	grep -q 'drv_key_state' <<< "$user" && ! grep -Eq 'drv_(key|iova) ' <<< "$user"
}

# Poll rdma res -dd while a long rping runs; each ERE must match a line
# of the object kind before the first of it (qp, mr, cm_id) is checked.
res_shows() { # DEV
	local pid found=0 qp mr cm ok_qp=0 ok_mr=0 ok_cm=0 i
	local qp_re mr_re='key_state valid .*mr_type user .*pages [1-9]'
	local cm_re='conn connected .*tcp_state ESTABLISHED .*mpa_rev'
	qp_re='sq_size [0-9]+ .*tx_packets [1-9]'
	if [ "$kind" = siwarp ]; then
		qp_re+='.*conn connected .*tcp_state ESTABLISHED .*mpa_rev 2 '
		qp_re+='.*mpa_crc [01] .*mpa_markers 0 .*rx_msn_send [0-9]+'
	else
		qp_re+='.*next_psn 0x[0-9a-f]+ .*expected_psn 0x[0-9a-f]+ '
		qp_re+='.*reads_outstanding [0-9]+ .*retry_left [0-9]+ .*rnr_left [0-9]+'
		ok_cm=1
	fi
	pair timeout 150 rping -s -a "$ip4" -p 7481 -V -C 3000 -S 64 -- \
		timeout 150 rping -c -a "$ip4" -p 7481 -V -C 3000 -S 64 \
		> /dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 600; i++)); do
		kill -0 "$pid" 2> /dev/null || break
		if [ "$ok_qp" = 0 ]; then
			qp=$(res_lines qp "$1")
			grep -Eq -- "$qp_re" <<< "$qp" && ok_qp=1 && echo "$qp"
		fi
		if [ "$ok_mr" = 0 ]; then
			mr=$(res_lines mr "$1")
			if grep -Eq -- "$mr_re" <<< "$mr"; then
				echo "$mr"
				# root sees the key; others do not
				grep -q 'drv_key 0x' <<< "$mr" && mr_keys_private "$1" &&
					ok_mr=1
			fi
		fi
		if [ "$ok_cm" = 0 ]; then
			cm=$(res_lines cm_id "$1")
			grep -Eq -- "$cm_re" <<< "$cm" && ok_cm=1 && echo "$cm"
		fi
		[ "$ok_qp$ok_mr$ok_cm" = 111 ] && { found=1; break; }
		sleep 0.1
	done
	wait "$pid" || { echo "rping failed"; return 1; }
	[ "$found" = 1 ] && return 0
	echo "qp ($ok_qp) /$qp_re/ in:"; echo "${qp:-}"
	echo "mr ($ok_mr) /$mr_re/ in:"; echo "${mr:-}"
	echo "cm_id ($ok_cm) /$cm_re/ in:"; echo "${cm:-}"
	return 1
}

tracefs_ready() {
	mountpoint -q "$TRACEFS" || mount -t tracefs nodev "$TRACEFS" || return 1
	ls "$TRACEFS/events/srdma" || return 1
	grep -q 'field:u32 psn;' "$TRACEFS/events/srdma/srdma_roce_tx/format" &&
		grep -q 'field:u32 msn;' "$TRACEFS/events/srdma/srdma_iw_rx/format"
}

# Trace a short verified transfer; each ERE must match a trace line.
traced() { # DEV ERE...
	local dev=$1 out re rc=0
	shift
	echo 0 > "$TRACEFS/tracing_on"
	echo > "$TRACEFS/trace"
	echo 1 > "$TRACEFS/events/srdma/enable"
	echo 1 > "$TRACEFS/tracing_on"
	xfer 4 4096 7482 || rc=1
	# rc_xfer does no READ: rping -V does, for the Read Request events
	if [ "$kind" = siwarp ]; then
		pair timeout 100 rping -s -a "$ip4" -p 7483 -V -C 2 -S 4096 -- \
			timeout 100 rping -c -a "$ip4" -p 7483 -V -C 2 -S 4096 || rc=1
	fi
	echo 0 > "$TRACEFS/events/srdma/enable"
	out=$(grep " $dev " "$TRACEFS/trace")
	echo "$(wc -l <<< "$out") events, for instance:"
	grep -m 3 _tx: <<< "$out"
	grep -m 3 _rx: <<< "$out"
	for re in "$@"; do
		grep -Eq -- "$re" <<< "$out" || { echo "no event /$re/"; rc=1; }
	done
	return "$rc"
}

# what follows the QP numbers in a packet or FPDU event
pkt_re='opcode 0x[0-9a-f]+ psn 0x[0-9a-f]{6}( ackreq)? len [0-9]+'
fpdu_re='(qn|stag) [0-9a-fx]+ (msn|to) [0-9a-fx]+ len [0-9]+'

tap_plan 15
for kind in sroce siwarp; do
	dev=ob_roce
	[ "$kind" = siwarp ] && dev=ob_iwarp
	STEP_TIMEOUT=60
	if ! t "$dev ($kind) on $NETDEV" mkdev "$kind" "$dev" "$NETDEV"; then
		for _ in 1 2 3 4 5 6; do not_ok "$dev: not run, no device"; done
		continue
	fi
	t "$dev: srdma tracepoints in tracefs, with their fields" tracefs_ready
	t "$dev: every counter in rdma statistic and hw_counters" counters_listed "$dev"
	STEP_TIMEOUT=200
	t "$dev: a verified transfer moves the packet and byte counters" counters_move "$dev"
	t "$dev: rdma res -dd shows srdma's attributes of live objects (MR keys to root only)" res_shows "$dev"
	if [ "$kind" = siwarp ]; then
		t "$dev: tracepoints record FPDUs, QP states and MPA steps" traced "$dev" \
			"srdma_iw_tx: $dev qpn [0-9]+ opcode [0-9]+( last)? $fpdu_re" \
			"srdma_iw_rx: $dev qpn [0-9]+ opcode [0-9]+" \
			"srdma_iw_read_req: $dev qpn [0-9]+ sent size [1-9][0-9]* src stag 0x[0-9a-f]+ to 0x" \
			"srdma_iw_read_req: $dev qpn [0-9]+ received size [1-9][0-9]* src stag 0x[0-9a-f]+ to 0x" \
			"srdma_iw_cm: $dev connect peer" \
			"srdma_iw_cm: $dev mpa request sent peer [0-9.:]+ err 0 rev 2" \
			"srdma_iw_cm: $dev mpa reply sent" \
			"srdma_iw_cm: $dev (close|abort) " \
			"srdma_qp_state: $dev qpn [0-9]+ [A-Z]+ -> (RTS|ERR)"
	else
		t "$dev: tracepoints record packets and QP states" traced "$dev" \
			"srdma_roce_tx: $dev qpn [0-9]+ dqpn [0-9]+ $pkt_re" \
			"srdma_roce_train: $dev qpn [0-9]+ psn 0x[0-9a-f]{6} opcode 0x[0-9a-f]+ [2-9][0-9]* packets of [0-9]+ bytes" \
			"srdma_roce_rx: $dev qpn [0-9]+ dqpn [0-9]+ opcode 0x[0-9a-f]+ psn 0x[0-9a-f]{6}" \
			"srdma_qp_state: $dev qpn [0-9]+ RTR -> RTS"
	fi
	STEP_TIMEOUT=60
	t "$dev: deleted" link_del_gone "$dev"
done
t "srdma unloads (rmmod)" timeout 60 rmmod srdma
