#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# PID 1 inside a test VM, on the host's userland (overlay over 9p).
# Sets up the minimum a test needs (pseudo filesystems, a private /tmp, eth0
# with this host's documentation-range addresses), runs the requested script
# under a hard timeout, then always saves dmesg and an exit status to the
# output share before powering off. No `set -e`: PID 1 must reach poweroff.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

halt() {
	sync
	/bin/busybox poweroff -f
	echo o > /proc/sysrq-trigger
	sleep 1000
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
# devtmpfs lacks these links (udev makes them); bash process substitution
# and `tee /dev/stderr` need them.
ln -sfn /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
vmout=
read -r -a cmdline < /proc/cmdline
for arg in "${cmdline[@]}"; do
	case "$arg" in vmout=*) vmout=${arg#vmout=} ;; esac
done
# /tmp and /run would otherwise show the host's. A checkout under the
# host's /tmp (its output share is mounted inside it) stays reachable at
# its own path: its top directory is carried over onto the new /tmp.
keep=
case "$vmout" in /tmp/?*/*) keep=${vmout#/tmp/} keep=/tmp/${keep%%/*} ;; esac
if [ -n "$keep" ]; then
	mkdir -p /mnt/.host-tmp
	mount --rbind /tmp /mnt/.host-tmp
fi
mount -t tmpfs -o mode=1777 tmpfs /tmp
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	mount --rbind "/mnt/.host-tmp/${keep#/tmp/}" "$keep"
fi
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null

if [ -z "$vmout" ] || [ ! -r "$vmout/vm.conf" ]; then
	echo "SRDMA-VM-EXIT rc=125 (no vm.conf)"
	halt
fi
# shellcheck source=/dev/null
. "$vmout/vm.conf"
# A kernel unpacked rather than installed (tools/kroot.sh): its modules go
# where modprobe looks for them, over the (overlay) root.
kmods=/lib/modules/$(uname -r)
if [ -n "${VM_KROOT:-}" ] && [ ! -d "$kmods" ] && [ -d "$VM_KROOT$kmods" ]; then
	mkdir -p "$kmods" && mount --bind "$VM_KROOT$kmods" "$kmods"
fi
export VM_OUT=$vmout VM_HOST VM_NHOSTS VM_REPO VM_WIRE
export VM_IP4="192.0.2.$((10 + VM_HOST))" VM_IP6="2001:db8::$((10 + VM_HOST))"
export PATH="$VM_REPO/tools/vm/bin:$PATH" HOME=/root TERM=dumb LANG=C.UTF-8
echo "SRDMA-VM-BOOTED host$VM_HOST uptime=$(cut -d' ' -f1 /proc/uptime)s"

hostname "host$VM_HOST"
{
	echo "127.0.0.1 localhost"
	echo "::1 localhost"
	for ((i = 1; i <= VM_NHOSTS; i++)); do
		echo "192.0.2.$((10 + i)) host$i"
		echo "2001:db8::$((10 + i)) host$i-6"
	done
} > /etc/hosts

ip link set lo up
modprobe virtio_net
for _ in $(seq 50); do
	[ -e /sys/class/net/eth0 ] && break
	sleep 0.1
done
ip addr add "$VM_IP4/24" dev eth0
ip -6 addr add "$VM_IP6/64" dev eth0 nodad
ip link set eth0 up

cd "$VM_REPO" || true
start=$(cut -d' ' -f1 /proc/uptime)
# The script's own output goes to the console and to script.log; the
# overall timeout is the last line of defence, steps have their own.
timeout -k 10 "$VM_SCRIPT_TIMEOUT" "${VM_CMD[@]}" < /dev/null 2>&1 |
	tee "$VM_OUT/script.log"
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && echo "SRDMA-VM: script timed out after ${VM_SCRIPT_TIMEOUT}s"
end=$(cut -d' ' -f1 /proc/uptime)

dmesg > "$VM_OUT/dmesg.txt" 2>&1
echo "$rc" > "$VM_OUT/rc"
echo "SRDMA-VM-EXIT host$VM_HOST rc=$rc script=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')s"
halt
