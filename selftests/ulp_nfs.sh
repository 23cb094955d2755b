#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-hosts: 2
# timeout: 900
# A kernel ULP end to end: NFS v4.2 over RDMA (svcrdma on host1, xprtrdma
# on host2) over sroce and siwarp. host1 serves a tmpfs on "rdma 20049";
# host2 mounts it with proto=rdma, writes a file, mounts again and reads
# it back, host1 checks the file on its side; then no RDMA object is left
# and the device's module unloads. NFS/RDMA's WRITE payload is pulled by
# the server with RDMA READs (rdma_rw: on iWARP into MRs with
# IB_WR_RDMA_READ_WITH_INV), READ replies pushed with RDMA WRITEs into the
# client's FRWR MRs, and the client invalidates them remotely or locally.
# The write and read rates are printed as TAP diagnostics.
#
# The same runs on the reference peers, rdma_rxe and upstream siw (both
# hosts), for figures to compare; a peer module that is not there is
# skipped. ULP_NFS_MB (default 32) is the file's size in MiB; ULP_NFS_KINDS
# (default "sroce siwarp rxe siw", spaces or commas) the device kinds, in
# order.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma rpc.nfsd rpc.mountd rpcbind exportfs mount.nfs cmp
require_test_netdev
[ -n "${VM_HOST:-}" ] || tap_skip_all "needs two test VMs (VM_HOST unset)"
for m in nfsd nfsv4 rpcrdma; do
	modinfo "$m" > /dev/null 2>&1 || tap_skip_all "kernel module $m missing"
done
me=$VM_HOST
ULP_NFS_KINDS=${ULP_NFS_KINDS:-sroce siwarp rxe siw}
skipped=()
kinds=()
for k in ${ULP_NFS_KINDS//,/ }; do
	if kind_available "$k"; then kinds+=("$k"); else skipped+=("$k"); fi
done
[ "${#kinds[@]}" -gt 0 ] || tap_skip_all "no usable kind in: $ULP_NFS_KINDS"
mb=${ULP_NFS_MB:-32}
SERVER=192.0.2.11
PORT=20049
EXPORT=/srv/ulp_nfs
MNT=/mnt/ulp_nfs
work=$(mktemp -d /tmp/ulp_nfs.XXXXXX)

# pattern SEED: $mb MiB of pseudo-random bytes, the same on both hosts
pattern() { pattern_bytes "$1" "$mb"; }

### server (host1)
server_up() {
	timeout 60 modprobe nfsd && timeout 60 modprobe rpcrdma || return 1
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	mkdir -p "$EXPORT" /var/lib/nfs/v4recovery &&
		{ mountpoint -q "$EXPORT" || mount -t tmpfs -o size=64m tmpfs "$EXPORT"; } &&
		chmod 1777 "$EXPORT" || return 1
	pgrep -x rpcbind > /dev/null || timeout 10 rpcbind || return 1
	timeout 30 exportfs -o rw,no_root_squash,insecure,no_subtree_check,fsid=0 \
		"*:$EXPORT" || return 1
	pgrep -x rpc.mountd > /dev/null || timeout 10 rpc.mountd || return 1
	# v4 only; the shortest grace period nfsd takes
	timeout 60 rpc.nfsd -N 3 -G 10 -L 10 --rdma="$PORT" 4 || return 1
	cat /proc/fs/nfsd/portlist
	grep -qx "rdma $PORT" /proc/fs/nfsd/portlist
}
server_down() {
	local rc=0
	if [ -e /proc/fs/nfsd/threads ]; then
		timeout 60 rpc.nfsd 0 || rc=1
	fi
	timeout 30 exportfs -ua
	pkill -x rpc.mountd
	pkill -x rpcbind
	mountpoint -q /proc/fs/nfsd && { umount /proc/fs/nfsd || rc=1; }
	mountpoint -q "$EXPORT" && { umount "$EXPORT" || rc=1; }
	return "$rc"
}
file_landed() { # KIND
	pattern "$1" > "$work/want" && cmp "$work/want" "$EXPORT/$1.bin"
}

### client (host2)
nfs_mount() {
	mkdir -p "$MNT" &&
		timeout 120 mount -t nfs -o vers=4.2,proto=rdma,port="$PORT" \
			"$SERVER:/" "$MNT" || return 1
	# really over RDMA, really 4.2
	grep " $MNT " /proc/mounts
	grep -q " $MNT nfs4 .*vers=4.2,.*proto=rdma" /proc/mounts
}
nfs_umount() {
	timeout 60 umount "$MNT" && ! mountpoint -q "$MNT"
}
nfs_remount() { nfs_umount && nfs_mount; }
client_write() { # KIND: written through to the server (fsync)
	pattern "$1" > "$work/$1.bin" &&
		timed "$1-write" timeout 180 dd if="$work/$1.bin" of="$MNT/$1.bin" \
			bs=1M conv=fsync status=none
}
client_read() { # KIND: a new mount, nothing cached
	timed "$1-read" timeout 180 cmp "$work/$1.bin" "$MNT/$1.bin"
}
rate() { # NAME: "N ms, M MB/s" for $mb MiB, or "-"
	[ -r "$work/$1.ms" ] || { echo -; return; }
	awk -v ms="$(cat "$work/$1.ms")" -v mb="$mb" \
		'BEGIN { printf "%d ms, %.1f MB/s", ms, mb * 1.048576 / (ms > 0 ? ms : 1) * 1000 }'
}
figures() { # KIND
	diag "$1: NFS write $mb MiB: $(rate "$1-write"); read $mb MiB: $(rate "$1-read")"
}
client_down() {
	mountpoint -q "$MNT" && timeout 60 umount -f "$MNT"
	timeout 60 modprobe -r rpcrdma nfsv4
}

ulp_log_clean() { # MARK
	local bad
	bad=$(kmsg_since "$1" | grep -E 'rpcrdma.*(not supported|only)|RPC/RDMA|Listener dead|nfs: server .* not responding|nfsd.*(error|fail)')
	[ -z "$bad" ] || { echo "$bad"; return 1; }
}
res_gone() { wait_for 30 ulp_res_clean dev0; }

tap_cleanup() {
	local k
	if [ "$me" = 1 ]; then server_down; else client_down; fi
	for k in "${kinds[@]}"; do dev_down "$k" dev0; done
	rm -rf "$work"
}

if [ "$me" = 1 ]; then
	tap_plan $((${#kinds[@]} * 9))
else
	tap_plan $((${#kinds[@]} * 12))
fi
[ "${#skipped[@]}" = 0 ] || diag "not there, skipped: ${skipped[*]}"
STEP_TIMEOUT=300
for kind in "${kinds[@]}"; do
	kmsg_mark "ulp_nfs-$kind"
	t "host$me: $kind device dev0 on $NETDEV" mkdev "$kind" dev0 "$NETDEV"
	if [ "$me" = 1 ]; then
		t "$kind: nfsd serving $EXPORT on rdma $PORT" server_up
		t "$kind: server ready, client told" tcp_barrier
		t "$kind: client done" tcp_barrier
		t "$kind: the client's file on the server" file_landed "$kind"
		t "$kind: nfsd stopped" server_down
	else
		t "$kind: rpcrdma loaded" timeout 60 modprobe rpcrdma
		t "$kind: server ready" tcp_barrier
		t "$kind: mount vers=4.2,proto=rdma" nfs_mount
		t "$kind: write $mb MiB" client_write "$kind"
		t "$kind: umount, mount again" nfs_remount
		t "$kind: read $mb MiB back, byte for byte" client_read "$kind"
		t "$kind: umount" nfs_umount
		t "$kind: tell the server" tcp_barrier
		figures "$kind"
	fi
	t "host$me: $kind: no RPC-over-RDMA errors in the kernel log" ulp_log_clean "ulp_nfs-$kind"
	t "host$me: $kind: rdma res empty" res_gone
	t "host$me: $kind: dev0 deleted, its module unloaded" dev_down "$kind" dev0
done
