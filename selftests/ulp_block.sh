#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-hosts: 2
# timeout: 600
# The kernel's other RDMA ULPs end to end, in one boot of two VMs: host1
# is the target, host2 the initiator, both on a srdma device.
#
#  iSER (sroce; siwarp: see below): a LIO target (ib_isert) set up with
#   targetcli exports a brd ramdisk through a block backstore on an iSCSI
#   portal with iSER enabled, demo mode; open-iscsi (iscsid started by
#   hand) discovers it and logs in over the "iser" interface.
#  SRP (sroce only: SRP logs in through IB CM or RDMA/CM, and ib_srp
#   drives no iWARP device): ib_srpt, its RoCE port named by targetcli from
#   GID 0, an ACL for the initiator's port ID, listening on RDMA/CM port
#   5555; ib_srp logs in with add_target "dest=IP:PORT".
#  RDS (sroce only: rds_rdma handles IB link layer devices, no iWARP): two
#   AF_RDS sockets bound to IB transport exchange messages both ways.
#
# On each block device: 1 MiB direct writes of a pattern that the target
# then finds on its ramdisk, direct reads of a pattern the target wrote
# there, fio 4k randwrite with crc32c verify. Then logout/removal, the
# target cleared and unloaded, no error in the kernel log, no rdma_cm ID,
# QP or MR left, and srdma unloads.
#
# What this covers beyond ulp_nvme: iSER's send-only login phase then
# full-feature phase with RDMA, remote invalidate (iSER), SRP's
# immediate data and direct/indirect descriptors over fast registration,
# RDS's many-connection rdma_cm use and its FRWR MR pools.
#
# iSER over siwarp is not in the default run: LIO puts an iSER portal
# on a TCP portal of the same address and port, and a software iWARP
# device (siwarp, like upstream siw) listens with a socket of the host's
# TCP stack, so isert's rdma_listen() fails with -EADDRINUSE (-98) and
# "enable_iser true" with "Cannot change iser". ULP_BLOCK_KINDS="sroce
# siwarp" runs it anyway.
#
# ULP_BLOCK_SIZE (default 32M) is fio's size; ULP_BLOCK_KINDS (default
# "sroce") the transports, in order.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma fio dd cmp ip
require_test_netdev
[ -n "${VM_HOST:-}" ] || tap_skip_all "needs two test VMs (VM_HOST unset)"
me=$VM_HOST
if [ "$me" = 1 ]; then
	tap_require_cmd targetcli
	mods="brd target_core_mod target_core_iblock iscsi_target_mod ib_isert ib_srpt rds_rdma"
else
	tap_require_cmd iscsiadm iscsid
	mods="ib_iser ib_srp rds_rdma"
fi
for m in $mods; do
	modinfo "$m" > /dev/null 2>&1 || tap_skip_all "kernel module $m missing"
done
read -r -a kinds <<< "${ULP_BLOCK_KINDS:-sroce}"
size=${ULP_BLOCK_SIZE:-32M}

TARGET=192.0.2.11
INITIATOR=192.0.2.12
IQN=iqn.2003-01.org.srdma:ulp-block
INITIATOR_IQN=iqn.2005-03.org.open-iscsi:srdma-host2
ISCSI_PORT=3260
SRP_PORT=5555
RDS_PORT=4000
RAM_MB=64		# brd size; fio uses the start of it
PAT_A_MB=40		# host2 writes pattern A here, host1 checks it
PAT_B_MB=48		# host1 writes pattern B here, host2 reads it
PAT_MB=8
SRPT_CFG=/sys/kernel/config/target/srpt
work=$(mktemp -d /tmp/ulp_block.XXXXXX)

# pattern SEED: PAT_MB MiB of pseudo-random bytes, the same on both hosts
pattern() { pattern_bytes "$1" "$PAT_MB"; }

# peer_eui64 IP: the EUI-64 (16 hex digits) a RoCE port derives from the
# peer's MAC: its node GUID and the interface ID of its GID 0.
peer_eui64() {
	local mac
	# any packet to the peer resolves its address (no ping in the VM)
	tcp_port_open "$1" 9
	mac=$(ip neigh show "$1" dev "$NETDEV" | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }')
	[[ "$mac" =~ ^([0-9a-f]{2}:){5}[0-9a-f]{2}$ ]] || { echo "no MAC for $1: '$mac'"; return 1; }
	IFS=: read -r m0 m1 m2 m3 m4 m5 <<< "$mac"
	printf '%02x%s%sfffe%s%s%s\n' $((0x$m0 ^ 2)) "$m1" "$m2" "$m3" "$m4" "$m5"
}

### target (host1)
ram_up() { # KIND ULP: a fresh ramdisk with pattern B at PAT_B_MB
	target_env || return 1
	timeout 60 modprobe brd rd_nr=1 rd_size=$((RAM_MB * 1024)) || return 1
	wait_for 10 test -b /dev/ram0 || { echo "no /dev/ram0"; return 1; }
	pattern "B-$2-$1" > "$work/b" &&
		timeout 60 dd if="$work/b" of=/dev/ram0 bs=1M seek="$PAT_B_MB" \
			oflag=direct conv=fsync status=none
}
tcli() { echo "targetcli $*"; timeout 60 targetcli "$@"; }
# What a distribution's init would have running or in place for
# targetcli: the system D-Bus (targetcli asks it for tcmu-runner's
# handlers, and 2.1.53 gives up without a bus) and /etc/target (the
# target core's db_root, an error in the kernel log when missing).
target_env() {
	mkdir -p /etc/target /run/dbus || return 1
	[ -S /run/dbus/system_bus_socket ] && return 0
	timeout 10 dbus-uuidgen --ensure || return 1
	timeout 30 dbus-daemon --system --fork --print-pid > "$work/dbus.pid" &&
		wait_for 10 test -S /run/dbus/system_bus_socket
}
dbus_down() {
	[ -s "$work/dbus.pid" ] || return 0
	kill "$(cat "$work/dbus.pid")" && rm -f "$work/dbus.pid" /run/dbus/system_bus_socket
}
iser_target_up() { # KIND
	local tpg=/iscsi/$IQN/tpg1 np
	ram_up "$1" iser || return 1
	tcli /backstores/block create name=ram0 dev=/dev/ram0 &&
		tcli /iscsi create "$IQN" &&
		tcli "$tpg/luns" create /backstores/block/ram0 || return 1
	# targetcli's default portal is 0.0.0.0:3260; serve this address only
	[ -z "$(ls /sys/kernel/config/target/iscsi/"$IQN"/tpgt_1/np)" ] ||
		tcli "$tpg/portals" delete 0.0.0.0 "$ISCSI_PORT" || return 1
	tcli "$tpg/portals" create "$TARGET" "$ISCSI_PORT" &&
		tcli "$tpg/portals/$TARGET:$ISCSI_PORT" enable_iser true &&
		tcli "$tpg" set attribute generate_node_acls=1 \
			demo_mode_write_protect=0 authentication=0 cache_dynamic_acls=1 ||
		return 1
	np=/sys/kernel/config/target/iscsi/$IQN/tpgt_1/np/$TARGET:$ISCSI_PORT
	[ "$(cat "$np/iser")" = 1 ] || { echo "$np/iser is not 1"; return 1; }
	tcli ls
	# isert listens through rdma_cm on this host's device
	wait_for 20 sh -c "timeout 5 rdma res show cm_id | grep -q 'state LISTEN.*src-addr $TARGET:$ISCSI_PORT'" ||
		{ rdma res show cm_id; return 1; }
}
srp_target_up() { # KIND
	local gid wwn init
	ram_up "$1" srp || return 1
	# targetcli names an RDMA port "ib." + its GID 0 (the link-local GID
	# on RoCE); ib_srpt matches an RDMA/CM login to that name's TPG and
	# the session to an ACL named by the initiator port ID: 8 bytes of
	# initiator_ext (0), then the interface ID of the initiator's GID 0.
	gid=$(cat /sys/class/infiniband/dev0/ports/1/gids/0) || return 1
	wwn=ib.${gid//:/}
	init=$(peer_eui64 "$INITIATOR") || return 1
	tcli /backstores/block create name=ram0 dev=/dev/ram0 &&
		tcli /srpt create "$wwn" &&
		tcli "/srpt/$wwn/luns" create /backstores/block/ram0 &&
		tcli "/srpt/$wwn/acls" create "ib.0000000000000000$init" || return 1
	tcli ls
	# 6.1's ib_srpt takes its RDMA/CM port from configfs, not a module
	# parameter; it listens on every RDMA device
	echo "$SRP_PORT" > "$SRPT_CFG/discovery_auth/rdma_cm_port" || return 1
	wait_for 20 sh -c "timeout 5 rdma res show cm_id | grep -q 'state LISTEN.*:$SRP_PORT'" ||
		{ rdma res show cm_id; return 1; }
}
pattern_a_landed() { # KIND ULP
	pattern "A-$2-$1" > "$work/a.want" &&
		timeout 60 dd if=/dev/ram0 of="$work/a.got" bs=1M skip="$PAT_A_MB" \
			count="$PAT_MB" iflag=direct status=none &&
		cmp "$work/a.want" "$work/a.got"
}
target_down() {
	local rc=0 d h=()
	if module_loaded target_core_mod; then
		timeout 60 targetcli clearconfig confirm=True || rc=1
		[ -e "$SRPT_CFG/discovery_auth/rdma_cm_port" ] &&
			{ echo 0 > "$SRPT_CFG/discovery_auth/rdma_cm_port" || rc=1; }
		# the fabric directories hold their modules
		for d in /sys/kernel/config/target/{iscsi,srpt}; do
			[ -d "$d" ] && { rmdir "$d" || rc=1; }
		done
	fi
	# the fabrics, then the backstores targetcli loaded, then the core
	unload_loaded ib_isert iscsi_target_mod ib_srpt || rc=1
	if module_loaded target_core_mod; then
		mapfile -t h < <(ls /sys/module/target_core_mod/holders)
		unload_loaded "${h[@]}" target_core_mod || rc=1
	fi
	unload_loaded brd || rc=1
	return "$rc"
}
unload_loaded() { # MODULE...: those of them still loaded, in order
	local m
	for m in "$@"; do
		module_loaded "$m" || continue
		timeout 60 modprobe -r "$m" || return 1
	done
}

### initiator (host2)
only_disk() { # the SCSI disk the target exports: the only one in the VM
	local b n=0 d
	for b in /sys/block/sd*; do
		[ -e "$b" ] || continue
		n=$((n + 1))
		d=/dev/${b##*/}
	done
	[ "$n" = 1 ] && echo "$d"
}
no_disk() { ! compgen -G '/sys/block/sd*' > /dev/null; }
disk_up() { # the disk appeared, with the ramdisk's size
	local dev bytes
	wait_for 30 only_disk || { echo "no SCSI disk"; ls /sys/block; return 1; }
	dev=$(only_disk)
	wait_for 10 test -b "$dev" || return 1
	bytes=$(($(cat "/sys/block/${dev#/dev/}/size") * 512))
	echo "$dev: $bytes bytes, $(cat "/sys/block/${dev#/dev/}/device/vendor")"
	[ "$bytes" = $((RAM_MB << 20)) ]
}
dd_rate() { # LOG: dd's summary line ("..., 1.2 MB/s") minus the counts
	sed -n 's/.* copied, //p' "$1" | tail -n 1
}
disk_fio() { # TAG
	local dev
	dev=$(only_disk) || return 1
	fio_verify "$1" "$dev" "$size" "$work/fio-$1.txt"
}
disk_write_a() { # KIND ULP: large writes (many-page MRs, the target READs)
	local dev
	dev=$(only_disk) || return 1
	pattern "A-$2-$1" > "$work/a" &&
		timeout 120 dd if="$work/a" of="$dev" bs=1M seek="$PAT_A_MB" \
			oflag=direct conv=fsync 2> "$work/dd-w-$2-$1.txt"
	local rc=$?
	cat "$work/dd-w-$2-$1.txt"
	return "$rc"
}
disk_read_b() { # KIND ULP: large reads (the target WRITEs)
	local dev
	dev=$(only_disk) || return 1
	pattern "B-$2-$1" > "$work/b.want" &&
		timeout 120 dd if="$dev" of="$work/b.got" bs=1M skip="$PAT_B_MB" \
			count="$PAT_MB" iflag=direct 2> "$work/dd-r-$2-$1.txt" || return 1
	cat "$work/dd-r-$2-$1.txt"
	cmp "$work/b.want" "$work/b.got"
}
figures() { # KIND ULP: dd and fio rates as TAP diagnostics
	local tag=$2-$1 f=''
	[ -r "$work/dd-w-$tag.txt" ] && f="dd write $(dd_rate "$work/dd-w-$tag.txt")"
	[ -r "$work/dd-r-$tag.txt" ] && f="$f; dd read $(dd_rate "$work/dd-r-$tag.txt")"
	[ -r "$work/fio-$tag.txt" ] && f="$f; fio $(grep -E '^ +(READ|WRITE): bw=' "$work/fio-$tag.txt" |
		sed 's/^ *//; s/, io=.*//' | paste -sd ';')"
	diag "$1 $2: $f"
}

iscsi_up() { # iscsid, as the init system would start it
	mkdir -p /etc/iscsi /run/lock/iscsi &&
		echo "InitiatorName=$INITIATOR_IQN" > /etc/iscsi/initiatorname.iscsi &&
		timeout 60 modprobe ib_iser || return 1
	# udev would load sd_mod when the first SCSI disk appears
	timeout 60 modprobe sd_mod || return 1
	if ! [ -s /run/iscsid.pid ] || ! kill -0 "$(cat /run/iscsid.pid)" 2> /dev/null; then
		timeout 30 iscsid || return 1
	fi
	wait_for 10 sh -c 'timeout 5 iscsiadm -m iface -I iser > /dev/null'
}
iser_login() {
	local s
	timeout 60 iscsiadm -m discovery -t sendtargets -p "$TARGET:$ISCSI_PORT" -I iser || return 1
	timeout 90 iscsiadm -m node -T "$IQN" -p "$TARGET:$ISCSI_PORT" -I iser --login || return 1
	s=$(timeout 10 iscsiadm -m session) || return 1
	echo "$s"
	# the session runs over iSER, not iSCSI/TCP
	grep -q "^iser: .*$TARGET:$ISCSI_PORT,1 $IQN" <<< "$s" || return 1
	disk_up
}
iser_logout() {
	timeout 60 iscsiadm -m node -T "$IQN" -p "$TARGET:$ISCSI_PORT" -I iser --logout || return 1
	wait_for 30 no_disk
}
iscsi_down() {
	local pid
	timeout 30 iscsiadm -m session > /dev/null 2>&1 &&
		timeout 60 iscsiadm -m node --logoutall=all
	timeout 30 iscsiadm -m node -o delete > /dev/null 2>&1
	timeout 30 iscsiadm -m discoverydb -t sendtargets -p "$TARGET:$ISCSI_PORT" -I iser -o delete > /dev/null 2>&1
	if [ -s /run/iscsid.pid ]; then
		pid=$(cat /run/iscsid.pid)
		timeout 10 iscsiadm -k 0 2> /dev/null || kill "$pid" 2> /dev/null
		wait_for 10 sh -c "! kill -0 $pid 2> /dev/null" || return 1
	fi
	timeout 60 modprobe -r ib_iser
}

srp_host() { echo /sys/class/infiniband_srp/srp-dev0-1; }
srp_login() {
	local guid
	wait_for 10 test -w "$(srp_host)/add_target" || { ls /sys/class/infiniband_srp; return 1; }
	# ib_srpt's target port ID is twice its service GUID, by default the
	# node GUID of its first device: the EUI-64 of the target's MAC
	guid=$(peer_eui64 "$TARGET") || return 1
	echo "add_target id_ext=$guid,ioc_guid=$guid,dest=$TARGET:$SRP_PORT"
	echo "id_ext=$guid,ioc_guid=$guid,dest=$TARGET:$SRP_PORT" > "$(srp_host)/add_target" || return 1
	ls /sys/class/srp_remote_ports
	disk_up
}
srp_logout() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && { echo 1 > "$p/delete" || return 1; }
	done
	wait_for 30 no_disk
}
srp_down() {
	module_loaded ib_srp || return 0
	no_disk || srp_logout
	timeout 60 modprobe -r ib_srp
}

### RDS (both hosts, symmetric)
# rds_xfer ME PEER COUNT: bind an AF_RDS socket on the IB transport, meet
# the peer (TCP), send COUNT messages of 1..64 KiB while receiving the
# peer's COUNT and checking each one's source and bytes.
rds_xfer() {
	timeout 150 /usr/bin/python3 - "$@" "$RDS_PORT" "$BARRIER_PORT" << 'EOF'
import os, random, select, socket, struct, sys, threading, time
me, peer, n, port, bport = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB, RDS_INFO_COUNTERS = 276, 8, 0, 10000
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.setsockopt(SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB)
s.bind((me, port))
def msg(src, i):
    r = random.Random("%s-%d" % (src, i))
    return r.randbytes(r.randint(1, 65536))
def counters(): # RDS's and its IB transport's, those not zero
    b = s.getsockopt(SOL_RDS, RDS_INFO_COUNTERS, 1 << 16)
    for o in range(0, len(b) - 39, 40):
        name, val = struct.unpack_from("32sQ", b, o)
        if val:
            print("  %s %d" % (name.rstrip(b"\0").decode(), val))
# both sockets bound before either sends (RDS drops messages to unbound ports)
if me < peer:
    t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.bind((me, bport)); t.listen(1); t.settimeout(300); t.accept()[0].close()
else:
    for _ in range(600):
        try:
            socket.create_connection((peer, bport), 2).close(); break
        except OSError:
            time.sleep(0.5)
    else:
        sys.exit("no peer")
res = {"got": 0, "bad": None, "sent": 0}
def recv():
    p = select.poll()
    p.register(s, select.POLLIN)
    while res["got"] < n:
        if not p.poll(60000):
            return
        try:
            data, src = s.recvfrom(65536, socket.MSG_DONTWAIT)
        except BlockingIOError: # a congestion map update wakes poll too
            continue
        i = res["got"]
        if src != (peer, port) or data != msg(peer, i):
            res["bad"] = "message %d from %s: %d bytes, wrong" % (i, src, len(data))
            return
        res["got"] += 1
def send(): # blocking: RDS waits while the peer's port is congested
    for i in range(n):
        m = msg(me, i)
        s.sendto(m, (peer, port))
        res["sent"] += len(m)
t0 = time.time()
th = [threading.Thread(target=f, daemon=True) for f in (recv, send)]
for x in th:
    x.start()
for x in th:
    x.join(max(1, t0 + 100 - time.time()))
dt = time.time() - t0
if res["bad"] or res["got"] < n or th[1].is_alive():
    print("received %d of %d, sent %d bytes%s" % (res["got"], n, res["sent"],
          ", still sending" if th[1].is_alive() else ""))
    if res["bad"]:
        print(res["bad"])
    counters()
    sys.stdout.flush()
    os._exit(1)
print("%d messages (%d bytes) each way in %.2f s, %.2f MB/s sent" % (n, res["sent"], dt, res["sent"] / dt / 1e6))
EOF
	local rc=$?
	[ "$rc" = 0 ] || timeout 10 rdma statistic show link dev0/1
	return "$rc"
}
rds_on_rdma() { # RDS's connection is an rdma_cm ID of rds_rdma's, on dev0
	local q
	q=$(timeout 10 rdma res show cm_id link dev0/1) || return 1
	echo "$q"
	grep -q 'state CONNECT.*comm \[rds_rdma\]' <<< "$q"
}
rds_down() { unload_loaded rds_rdma rds; }

# errors the ULPs (and srdma) logged since MARK. Not counted: LIO
# answering a mode page it does not implement (6.12's sd asks for the
# I/O advice hints page 0x0a/0x05 and the target says so at err level;
# the SCSI probe carries on, and no transport is involved).
ulp_log_clean() { # MARK
	local bad
	bad=$(kmsg_since_levels "$1" | grep -E '^(kern|user) *:(err|crit|alert|emerg)' |
		grep -v 'MODE SENSE: unimplemented page/subpage')
	[ -z "$bad" ] || { echo "$bad"; return 1; }
}
kmsg_since_levels() { dmesg -x | awk -v m="srdma-selftest: mark $1" 'index($0, m) { p = 1; next } p'; }
res_gone() { wait_for 30 res_clean_pooled dev0; }
# res_clean, but for ib_core's CQ pools: the CQs a ULP got from
# ib_cq_pool_get() stay with the device, unused, until it goes
res_clean_pooled() {
	local out pooled
	out=$(timeout 20 rdma res show "$1") || return 1
	pooled=$(timeout 20 rdma res show cq dev "$1" | grep -c 'users 0 .*comm \[ib_core\]')
	echo "$out; idle pooled CQs: $pooled"
	timeout 20 rdma res show cq dev "$1"
	awk -v pooled="$pooled" '{ for (i = 1; i < NF; i++) if ($i ~ /^(pd|cq|qp|mr|srq|ctx|cm_id)$/) n[$i] = $(i + 1) }
	     END { exit !(n["ctx"] == 0 && n["srq"] + 0 == 0 && n["mr"] + 0 == 0 &&
			   n["cm_id"] + 0 == 0 && n["pd"] + 0 <= 1 &&
			   n["cq"] - pooled <= 1 && n["qp"] + 0 <= 1) }' <<< "$out"
}

tap_cleanup() {
	if [ "$me" = 1 ]; then
		target_down
		dbus_down
	else
		module_loaded ib_iser && iscsi_down
		srp_down
	fi
	module_loaded rds && rds_down
	srdma_cleanup dev0
	rm -rf "$work"
}

# ULPs per transport: SRP and RDS need the IB link layer's CMs (RoCE)
ulps_for() { if [ "$1" = sroce ]; then echo "iser srp rds"; else echo iser; fi; }
n=0
for kind in "${kinds[@]}"; do
	for ulp in $(ulps_for "$kind"); do
		case "$me-$ulp" in
		1-rds | 2-rds) n=$((n + 4)) ;;
		1-*) n=$((n + 5)) ;;
		2-*) n=$((n + 10)) ;;
		esac
	done
	n=$((n + 4))
done
tap_plan "$n"
STEP_TIMEOUT=450

target_block() { # KIND ULP
	t "$1: $2 target" "$2_target_up" "$1"
	t "$1 $2: target ready, initiator told" tcp_barrier
	t "$1 $2: initiator done" tcp_barrier
	t "$1 $2: initiator's pattern on the ramdisk" pattern_a_landed "$1" "$2"
	t "$1 $2: target cleared, unloaded" target_down
}
initiator_block() { # KIND ULP
	if [ "$2" = iser ]; then
		t "$1: iscsid, ib_iser" iscsi_up
	else
		t "$1: ib_srp, its port on dev0" sh -c "timeout 60 modprobe sd_mod && timeout 60 modprobe ib_srp && sleep 1 && test -d $(srp_host)"
	fi
	t "$1 $2: target ready" tcp_barrier
	t "$1 $2: login, ${RAM_MB} MiB disk" "$2_login"
	t "$1 $2: write ${PAT_MB} MiB pattern, 1 MiB direct I/Os" disk_write_a "$1" "$2"
	t "$1 $2: read ${PAT_MB} MiB pattern, 1 MiB direct I/Os" disk_read_b "$1" "$2"
	t "$1 $2: fio 4k randwrite $size, crc32c verify" disk_fio "$2-$1"
	figures "$1" "$2"
	t "$1 $2: logout, disk gone" "$2_logout"
	t "$1 $2: tell the target" tcp_barrier
	if [ "$2" = iser ]; then
		t "$1 $2: iscsid stopped, ib_iser unloaded" iscsi_down
	else
		t "$1 $2: ib_srp unloaded" srp_down
	fi
	t "$1 $2: rdma res empty between ULPs" res_gone
}
rds_block() { # KIND
	local peer=192.0.2.$((13 - me))
	t "$1 rds: rds_rdma loaded" timeout 60 modprobe rds_rdma
	t "$1 rds: 64 messages each way, bytes checked" rds_xfer "$VM_IP4" "$peer" 64
	diag "$(tail -n 1 "$TAP_LOGDIR/$_tap_n.log")"
	t "$1 rds: over an RC QP of dev0" rds_on_rdma
	t "$1 rds: rds_rdma unloaded" rds_down
}

for kind in "${kinds[@]}"; do
	kmsg_mark "ulp_block-$kind"
	t "host$me: $kind device dev0 on $NETDEV" mkdev "$kind" dev0 "$NETDEV"
	for ulp in $(ulps_for "$kind"); do
		if [ "$ulp" = rds ]; then
			rds_block "$kind"
		elif [ "$me" = 1 ]; then
			target_block "$kind" "$ulp"
		else
			initiator_block "$kind" "$ulp"
		fi
	done
	t "host$me: $kind: no errors in the kernel log" ulp_log_clean "ulp_block-$kind"
	t "host$me: $kind: rdma res empty" res_gone
	t "host$me: $kind: dev0 deleted, srdma unloaded" srdma_cleanup dev0
done
