#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: boot a VM, load srdma, create a RoCEv2 (sroce) and an iWARP
# (siwarp) device on eth0, show them as user space sees them, then try to
# move data over each (the device talking to itself), narrating each step.
# Inside the VM (VM_HOST set) this same script is the guest side.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if [ -z "${VM_HOST:-}" ]; then
	# shellcheck source=tools/lib.sh
	. "$here/lib.sh"
	[ -f "$SRDMA_REPO/srdma.ko" ] || die "srdma.ko not built (run 'make')"
	say "booting a VM (TCG, a few seconds) to show srdma; the guest's steps follow"
	# A private copy: a rebuild during the demo must not pull the rug.
	mkdir -p "$SRDMA_REPO/build/demo"
	cp "$SRDMA_REPO/srdma.ko" "$SRDMA_REPO/build/demo/srdma.ko"
	rc=0
	"$here/vm/run.sh" -N demo -t 400 -e "SRDMA_KO=$SRDMA_REPO/build/demo/srdma.ko" -- "$here/demo.sh" || rc=$?
	cat "$SRDMA_REPO/build/vm/out/demo/host1/script.log"
	exit "$rc"
fi

step() { echo; echo "### $*"; }
run() { echo "\$ $*"; timeout 60 "$@"; }

# Same-device ping-pong: a server and a client on one device, through the
# device's own address. ibv_rc_pingpong (plain verbs, GID exchange over TCP)
# suits RoCE; iWARP needs connection management, so rping (librdmacm) there.
pingpong() { # DEV GIDIDX
	local log=$VM_OUT/pingpong-$1-server.log
	timeout 30 ibv_rc_pingpong -d "$1" -g "$2" -n 1000 -s 4096 > "$log" 2>&1 &
	sleep 1
	run ibv_rc_pingpong -d "$1" -g "$2" -n 1000 -s 4096 127.0.0.1
	local rc=$?
	wait $! || rc=1
	sed 's/^/  server: /' "$log"
	return "$rc"
}
rping_self() { # IP
	local log=$VM_OUT/rping-server.log
	timeout 30 rping -s -a "$1" -C 100 -S 4096 > "$log" 2>&1 &
	sleep 1
	# Quiet on success (-v would print every 4 KiB payload).
	run rping -c -a "$1" -C 100 -S 4096
	local rc=$?
	[ "$rc" != 0 ] || echo "  100 RDMA ping-pongs of 4096 bytes (send, RDMA read, RDMA write) completed"
	wait $! || rc=1
	return "$rc"
}

ip4=$(ip -4 -o addr show dev eth0 | awk '{ sub("/.*", "", $4); print $4 }')
step "This is $(hostname), kernel $(uname -r), eth0 = $ip4"
step "Load srdma (its RDMA core dependencies first)"
run load_srdma || { echo "srdma did not load"; exit 1; }
run lsmod | grep -E '^(srdma|ib_core|ib_uverbs) '
step "Create a RoCE v2 device and an iWARP device on eth0"
run rdma link add sroce0 type sroce netdev eth0
run rdma link add siw0x type siwarp netdev eth0
sleep 1
step "What the RDMA netlink interface reports"
run rdma link show
run rdma dev show
step "What libibverbs sees"
run ibv_devices
for d in sroce0 siw0x; do
	run ibv_devinfo -d "$d"
	ibv_devinfo -v -d "$d" | grep -E 'GID\[' | sed 's/^[[:space:]]*/  /'
done

ok=0
step "Move data: RC ping-pong on sroce0 (RoCE v2, GID index 1 = ::ffff:$ip4)"
if pingpong sroce0 1; then echo "=> sroce0 moved data"; ok=$((ok + 1)); else echo "=> no data over sroce0 (yet)"; fi
# rdma_cm picks the device by address: with sroce0 gone only siw0x has it.
step "Delete sroce0, so that rdma_cm resolves $ip4 to siw0x"
run rdma link del sroce0
step "Move data: rping over siw0x (iWARP, via rdma_cm to $ip4)"
if rping_self "$ip4"; then echo "=> rping moved data"; ok=$((ok + 1)); else echo "=> no data over rping (yet)"; fi

step "Clean up: delete the devices, unload srdma"
run rdma link del siw0x
run rmmod srdma
step "Demo done: $ok of 2 data transfers worked"
