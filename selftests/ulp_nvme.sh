#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-hosts: 2
# timeout: 1200
# A kernel ULP end to end: NVMe over Fabrics (nvmet-rdma target on host1,
# nvme-rdma host on host2) over sroce, then over siwarp. host1 exports a
# brd ramdisk; host2 connects with nvme-cli, runs fio 4k randwrite with
# crc32c verify, writes a pattern that host1 then checks on the ramdisk
# and reads one that host1 wrote there, and disconnects. Then nothing is
# left but ib_core's own objects (QP1's, and the idle CQs of its shared
# CQ pool, which it keeps until the device goes): no rdma_cm ID, QP or
# MR; the device's module unloads.
#
# What this covers that the verbs tools do not: fast registration
# (IB_WR_REG_MR of many-page MRs), send with invalidate, local
# invalidate, multi-SGE receives with in-capsule data, rdma_rw (on iWARP
# READs into MRs, IB_WR_RDMA_READ_WITH_INV), IRD/ORD through iw_cm, CQ
# polling from softirq and workqueues, ib_drain_qp.
#
# fio's bandwidth and the 1 MiB writes' and reads' rates are printed as
# TAP diagnostics. The same runs on the reference peers, rdma_rxe and
# upstream siw (both hosts), for figures to compare; a peer module that is
# not there is skipped. ULP_NVME_SIZE (default 32M) is fio's size;
# ULP_NVME_KINDS (default "sroce siwarp rxe siw", spaces or commas) the
# device kinds, in order.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma nvme fio dd cmp
require_test_netdev
[ -n "${VM_HOST:-}" ] || tap_skip_all "needs two test VMs (VM_HOST unset)"
for m in nvmet nvmet-rdma nvme-rdma brd; do
	modinfo "$m" > /dev/null 2>&1 || tap_skip_all "kernel module $m missing"
done
me=$VM_HOST
ULP_NVME_KINDS=${ULP_NVME_KINDS:-sroce siwarp rxe siw}
skipped=()
kinds=()
for k in ${ULP_NVME_KINDS//,/ }; do
	if kind_available "$k"; then kinds+=("$k"); else skipped+=("$k"); fi
done
[ "${#kinds[@]}" -gt 0 ] || tap_skip_all "no usable kind in: $ULP_NVME_KINDS"
size=${ULP_NVME_SIZE:-32M}

NQN=nqn.2014-08.org.srdma:ulp-nvme
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5d5d0000-0000-4000-8000-000000000002
HOSTID=5d5d0000-0000-4000-8000-000000000002
TARGET=192.0.2.11
PORT=4420
CFG=/sys/kernel/config/nvmet
RAM_MB=64		# brd size; fio uses the start of it
PAT_A_MB=40		# host2 writes pattern A here, host1 checks it
PAT_B_MB=48		# host1 writes pattern B here, host2 reads it
PAT_MB=8
work=$(mktemp -d /tmp/ulp_nvme.XXXXXX)

# pattern SEED: PAT_MB MiB of pseudo-random bytes, the same on both hosts
pattern() { pattern_bytes "$1" "$PAT_MB"; }

### target (host1)
subsys=$CFG/subsystems/$NQN
target_up() {
	timeout 60 modprobe brd rd_nr=1 rd_size=$((RAM_MB * 1024)) &&
		timeout 60 modprobe nvmet-rdma || return 1
	# nvmet pulls in configfs, which the VM's boot could not mount
	mountpoint -q /sys/kernel/config ||
		mount -t configfs configfs /sys/kernel/config || return 1
	[ -b /dev/ram0 ] || { echo "no /dev/ram0"; return 1; }
	pattern "B-$1" > "$work/b" &&
		timeout 60 dd if="$work/b" of=/dev/ram0 bs=1M seek="$PAT_B_MB" \
			oflag=direct conv=fsync status=none || return 1
	mkdir "$subsys" &&
		echo 1 > "$subsys/attr_allow_any_host" &&
		mkdir "$subsys/namespaces/1" &&
		echo -n /dev/ram0 > "$subsys/namespaces/1/device_path" &&
		echo 1 > "$subsys/namespaces/1/enable" &&
		mkdir "$CFG/ports/1" &&
		echo rdma > "$CFG/ports/1/addr_trtype" &&
		echo ipv4 > "$CFG/ports/1/addr_adrfam" &&
		echo "$TARGET" > "$CFG/ports/1/addr_traddr" &&
		echo "$PORT" > "$CFG/ports/1/addr_trsvcid" &&
		ln -s "$subsys" "$CFG/ports/1/subsystems/$NQN" || return 1
	# the port listens through rdma_cm on this host's device
	wait_for 20 sh -c "timeout 5 rdma res show cm_id | grep -q 'state LISTEN.*src-addr $TARGET:$PORT'"
}
target_down() {
	local rc=0
	[ -L "$CFG/ports/1/subsystems/$NQN" ] && { rm "$CFG/ports/1/subsystems/$NQN" || rc=1; }
	[ -d "$CFG/ports/1" ] && { rmdir "$CFG/ports/1" || rc=1; }
	if [ -d "$subsys/namespaces/1" ]; then
		echo 0 > "$subsys/namespaces/1/enable"
		rmdir "$subsys/namespaces/1" || rc=1
	fi
	[ -d "$subsys" ] && { rmdir "$subsys" || rc=1; }
	timeout 60 modprobe -r nvmet-rdma nvmet || rc=1
	timeout 60 modprobe -r brd || rc=1
	return "$rc"
}
pattern_a_landed() {
	pattern "A-$1" > "$work/a.want" &&
		timeout 60 dd if=/dev/ram0 of="$work/a.got" bs=1M skip="$PAT_A_MB" \
			count="$PAT_MB" iflag=direct status=none &&
		cmp "$work/a.want" "$work/a.got"
}

### host (host2)
ns_dev() { # the namespace's block device: the only NVMe disk in the VM
	local b
	for b in /sys/block/nvme*n*; do
		[[ "$(basename "$b")" =~ ^nvme[0-9]+n[0-9]+$ ]] && { echo "/dev/${b##*/}"; return 0; }
	done
	return 1
}
no_ns() { ! ns_dev > /dev/null; }
host_connect() {
	local dev bytes
	timeout 60 nvme connect -t rdma -a "$TARGET" -s "$PORT" -n "$NQN" \
		--hostnqn="$HOSTNQN" --hostid="$HOSTID" || return 1
	wait_for 30 ns_dev || { echo "no namespace block device"; return 1; }
	dev=$(ns_dev)
	wait_for 10 test -b "$dev" || return 1
	bytes=$(($(cat "/sys/block/${dev#/dev/}/size") * 512))
	echo "$dev: $bytes bytes"
	[ "$bytes" = $((RAM_MB << 20)) ]
}
host_fio() { # KIND
	local dev
	dev=$(ns_dev) || return 1
	fio_verify "nvme-$1" "$dev" "$size" "$work/fio-$1.txt"
}
host_write_a() { # KIND: large writes (many-page MRs, rdma_rw READs)
	local dev
	dev=$(ns_dev) || return 1
	pattern "A-$1" > "$work/a" &&
		timed "$1-write" timeout 120 dd if="$work/a" of="$dev" bs=1M \
			seek="$PAT_A_MB" oflag=direct conv=fsync status=none
}
host_read_b() { # KIND: large reads (RDMA WRITEs, send with invalidate)
	local dev
	dev=$(ns_dev) || return 1
	pattern "B-$1" > "$work/b.want" &&
		timed "$1-read" timeout 120 dd if="$dev" of="$work/b.got" bs=1M \
			skip="$PAT_B_MB" count="$PAT_MB" iflag=direct status=none &&
		cmp "$work/b.want" "$work/b.got"
}
host_disconnect() {
	timeout 60 nvme disconnect -n "$NQN" || return 1
	wait_for 30 no_ns
}
host_down() {
	ns_dev > /dev/null && timeout 60 nvme disconnect -n "$NQN"
	timeout 60 modprobe -r nvme-rdma nvme-fabrics
}

# the ULPs' own complaints: "Connect command failed", QP fatal errors
ulp_log_clean() { # MARK
	local bad
	bad=$(kmsg_since "$1" | grep -E 'nvme.*(failed|error)|nvmet.*(QP event|error|failed)')
	[ -z "$bad" ] || { echo "$bad"; return 1; }
}
fio_figures() { # KIND: fio's bandwidth lines as TAP diagnostics
	[ -r "$work/fio-$1.txt" ] && diag "$1: fio 4k: $(grep -E '^ +(READ|WRITE): bw=' "$work/fio-$1.txt" |
		sed 's/^ *//; s/, io=.*//' | paste -sd ';')"
}
rate() { # NAME: "N ms, M MB/s" for $PAT_MB MiB, or "-"
	[ -r "$work/$1.ms" ] || { echo -; return; }
	awk -v ms="$(cat "$work/$1.ms")" -v mb="$PAT_MB" \
		'BEGIN { printf "%d ms, %.1f MB/s", ms, mb * 1.048576 / (ms > 0 ? ms : 1) * 1000 }'
}
dd_figures() { # KIND
	diag "$1: 1 MiB I/Os, write $PAT_MB MiB: $(rate "$1-write"); read $PAT_MB MiB: $(rate "$1-read")"
}
res_gone() { wait_for 30 ulp_res_clean dev0; }

tap_cleanup() {
	local k
	if [ "$me" = 1 ]; then target_down; else host_down; fi
	for k in "${kinds[@]}"; do dev_down "$k" dev0; done
	rm -rf "$work"
}

if [ "$me" = 1 ]; then
	tap_plan $((${#kinds[@]} * 9))
else
	tap_plan $((${#kinds[@]} * 13))
fi
[ "${#skipped[@]}" = 0 ] || diag "not there, skipped: ${skipped[*]}"
STEP_TIMEOUT=450
for kind in "${kinds[@]}"; do
	kmsg_mark "ulp_nvme-$kind"
	t "host$me: $kind device dev0 on $NETDEV" mkdev "$kind" dev0 "$NETDEV"
	if [ "$me" = 1 ]; then
		t "$kind: nvmet-rdma target on $TARGET:$PORT" target_up "$kind"
		t "$kind: target ready, host told" tcp_barrier
		t "$kind: host done" tcp_barrier
		t "$kind: host's pattern on the ramdisk" pattern_a_landed "$kind"
		t "$kind: target removed" target_down
	else
		t "$kind: nvme-rdma loaded" timeout 60 modprobe nvme-rdma
		t "$kind: target ready" tcp_barrier
		t "$kind: nvme connect, ${RAM_MB} MiB namespace" host_connect
		t "$kind: fio 4k randwrite $size, crc32c verify" host_fio "$kind"
		fio_figures "$kind"
		t "$kind: write ${PAT_MB} MiB pattern, 1 MiB I/Os" host_write_a "$kind"
		t "$kind: read ${PAT_MB} MiB pattern, 1 MiB I/Os" host_read_b "$kind"
		dd_figures "$kind"
		t "$kind: nvme disconnect" host_disconnect
		t "$kind: tell the target" tcp_barrier
		t "$kind: nvme-rdma unloaded" timeout 60 modprobe -r nvme-rdma nvme-fabrics
	fi
	t "host$me: $kind: no nvme errors in the kernel log" ulp_log_clean "ulp_nvme-$kind"
	t "host$me: $kind: rdma res empty" res_gone
	t "host$me: $kind: dev0 deleted, its module unloaded" dev_down "$kind" dev0
done
