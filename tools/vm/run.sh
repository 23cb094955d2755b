#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot 1..N VMs of the distro kernel on one virtual Ethernet wire and run a
# command in each (the same command; it tells hosts apart by $VM_HOST).
#
#   tools/vm/run.sh [-n HOSTS] [-t SECONDS] [-N NAME] [-m MB] [-s SMP]
#                   [-e VAR=VALUE]... -- CMD [ARG]...
#
# KVER picks the kernel (tools/lib.sh srdma_kver); SRDMA_KROOT boots one
# unpacked by tools/kroot.sh instead of an installed one.
# VM_APPEND adds kernel command-line parameters. VM_LOCK=FILE waits for an
# flock on FILE before booting, so that runs started by several callers on
# one small machine take turns instead of starving each other's VMs.
# VM_WIRE=tap joins two hosts with NICs that have offloads (below).
# VM_QEMU names another qemu-system-x86_64 (tools/vm/qemu-backports.sh).
# Host i is "host$i" with 192.0.2.(10+i)/24 and 2001:db8::(10+i)/64 on eth0.
# The host's / is the guest's / (read-only, tmpfs overlay on top), so CMD and
# the repo live at the same paths. Results: build/vm/out/NAME/host$i/
#   console.log  serial console (kernel messages at warning level and up)
#   script.log   CMD's output          dmesg.txt  full kernel log
#   rc           CMD's exit status     plus whatever CMD writes to $VM_OUT
#   monitor.sock QEMU's HMP monitor, while the VM runs
# Exit status: 0 if every host's CMD exited 0 and its kernel log is clean;
# otherwise CMD's status (first failing host), 1 for a dirty kernel log,
# 124 for a timeout, 125 if the VM never reported.
set -euo pipefail
here=$(dirname "$0")
# shellcheck source=tools/lib.sh
. "$here/../lib.sh"

hosts=1 limit=600 name='' mem=2048 smp='' envs=()
while getopts "n:t:N:m:s:e:h" o; do
	case "$o" in
	n) hosts=$OPTARG ;;
	t) limit=$OPTARG ;;
	N) name=$OPTARG ;;
	m) mem=$OPTARG ;;
	s) smp=$OPTARG ;;
	e) [[ "$OPTARG" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "-e wants VAR=VALUE"; envs+=("$OPTARG") ;;
	*) sed -n '3,25s/^# \{0,1\}//p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "$#" -gt 0 ] || die "no command given (see $0 -h)"
[[ "$hosts" =~ ^[1-9][0-9]?$ ]] || die "bad host count: $hosts"

kver=$(srdma_kver) || die "no kernel with headers and /boot/vmlinuz; run 'make deps'"
qemu=${VM_QEMU:-qemu-system-x86_64}
command -v "$qemu" > /dev/null || die "$qemu missing; run 'make deps'"
initrd=$("$here/initramfs.sh" "$kver")
accel=$("$here/accel.sh" "$kver")
ncpu=$(nproc)
# Two cores and two VMs: one vCPU each, or TCG threads fight for the host.
[ -n "$smp" ] || smp=$((ncpu / hosts > 0 ? ncpu / hosts : 1))
[ "$smp" -le 4 ] || smp=4

name=${name:-$(date +%Y%m%d-%H%M%S)-$$}
run="$SRDMA_REPO/build/vm/out/$name"
rm -rf "$run"
mkdir -p "$run"
case "$run" in *[[:space:]]*) die "output path has white space: $run" ;; esac

# Resolve the command to an absolute path: the guest starts in the repo, but
# a relative path given from elsewhere must still work.
cmd=("$@")
if [[ "${cmd[0]}" == */* ]] && [ -e "${cmd[0]}" ]; then
	cmd[0]=$(realpath "${cmd[0]}")
	# The guest's /tmp is its own, but for the checkout's top directory.
	top=//none
	case "$SRDMA_REPO" in /tmp/?*) top=${SRDMA_REPO#/tmp/} top=/tmp/${top%%/*} ;; esac
	case "${cmd[0]}" in
	"$top"/*) ;;
	/tmp/*) die "the guest's /tmp is its own tmpfs: put ${cmd[0]} elsewhere" ;;
	esac
fi

free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The wire: one VM needs no peer (a lone hub port keeps the link up); two are
# a point-to-point Unix stream socket; three or more share a loopback
# multicast group. Not TCP: QEMU's TCP wire (-netdev socket,listen=) leaves
# Nagle on, so the second of two back-to-back frames waits for the first's
# delayed ACK on the host, ~40 ms (measured: every burst of two UDP
# datagrams took 44 ms round trip, one took 1.2 ms). A Unix socket has
# neither Nagle nor loss.
#
# VM_WIRE=tap joins two VMs through TAP devices on a bridge of this host
# instead (tools/vm/tap-wire.sh; root only), with virtio-net's offloads:
# the stream wire gives its guests no checksum offload, no scatter-gather
# and no TSO, which every real NIC has, and so never runs the paths that
# need them (zero-copy transmit, TCP's segmentation offload).
wire_kind=${VM_WIRE:-stream}
case "$wire_kind" in
stream) ;;
tap) [ "$hosts" -eq 2 ] || die "VM_WIRE=tap joins two hosts, not $hosts" ;;
*) die "VM_WIRE is stream or tap, not $wire_kind" ;;
esac
if [ "$wire_kind" = tap ]; then
	wire=srw$$
	wire=${wire:0:12}
	trap '"$here/tap-wire.sh" down "$wire"' EXIT
	"$here/tap-wire.sh" up "$wire" || die "VM_WIRE=tap: no TAP wire"
elif [ "$hosts" -eq 2 ]; then
	wire_dir=$(mktemp -d /tmp/srdma-wire.XXXXXX)
	trap 'rm -rf "$wire_dir"' EXIT
	wire=$wire_dir/sock
elif [ "$hosts" -gt 2 ]; then
	port=$(free_port)
fi
netdev_for() {
	local i=$1
	if [ "$hosts" -eq 1 ]; then
		echo "hubport,id=n0,hubid=0"
	elif [ "$wire_kind" = tap ]; then
		echo "tap,id=n0,ifname=${wire}t$i,script=no,downscript=no,vnet_hdr=on"
	elif [ "$hosts" -eq 2 ]; then
		if [ "$i" -eq 1 ]; then
			echo "stream,id=n0,server=on,addr.type=unix,addr.path=$wire"
		else
			echo "stream,id=n0,server=off,addr.type=unix,addr.path=$wire"
		fi
	else
		echo "socket,id=n0,mcast=239.192.0.1:$port,localaddr=127.0.0.1"
	fi
}

if [ -n "${VM_LOCK:-}" ]; then
	exec 8> "$VM_LOCK"
	flock 8
fi
declare -a pids
say "booting $hosts VM(s) of $kver (${accel%% -cpu*}, smp $smp, ${mem}M), output in ${run#"$SRDMA_REPO"/}"
t0=$(now)
for ((i = 1; i <= hosts; i++)); do
	out="$run/host$i"
	mkdir -p "$out"
	{
		echo "VM_HOST=$i"
		echo "VM_NHOSTS=$hosts"
		echo "VM_WIRE=$wire_kind"
		printf 'VM_REPO=%q\n' "$SRDMA_REPO"
		echo "VM_SCRIPT_TIMEOUT=$((limit > 60 ? limit - 30 : limit))"
		printf 'VM_KROOT=%q\n' "${SRDMA_KROOT:-}"
		printf 'VM_CMD=('; printf ' %q' "${cmd[@]}"; echo ' )'
		for e in ${envs[@]+"${envs[@]}"}; do printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"; done
	} > "$out/vm.conf"
	# event_idx=off: with event indices, QEMU 7.2's virtio-net now and
	# then stops serving a busy transmit ring for good: the guest's avail
	# index runs past the avail_event QEMU last wrote, so the guest never
	# kicks again (Documentation/performance-findings.rst, "A virtio-net
	# ring that stopped"). With the flag protocol the next packet kicks.
	# monitor.sock is QEMU's HMP monitor, to look into a stuck VM (info
	# virtio-queue-status); a Unix socket's path must fit in 108 bytes, so
	# a deep checkout goes without.
	mon=()
	[ "${#out}" -gt 90 ] || mon=(-monitor "unix:$out/monitor.sock,server=on,wait=off")
	# shellcheck disable=SC2086 # $accel is a list of options
	timeout -k 10 "$limit" "$qemu" $accel -m "$mem" -smp "$smp" \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "${SRDMA_KROOT:-}/boot/vmlinuz-$kver" -initrd "$initrd" \
		-append "console=ttyS0 loglevel=5 panic=-1 ${VM_APPEND:+$VM_APPEND }vmout=$out vmboot=$SRDMA_REPO/tools/vm/guest-boot.sh" \
		-serial "file:$out/console.log" \
		${mon[@]+"${mon[@]}"} \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$out,mount_tag=out,security_model=none" \
		-netdev "$(netdev_for "$i")" \
		-device "virtio-net-pci,event_idx=off,netdev=n0,mac=52:54:00:5d:00:$(printf %02x "$i")" \
		> "$out/qemu.log" 2>&1 &
	pids[i]=$!
	# The connecting side fails at once if the listener is not up yet.
	if [ "$hosts" -eq 2 ] && [ "$wire_kind" = stream ] && [ "$i" -eq 1 ]; then
		for _ in $(seq 100); do
			[ -S "$wire" ] && break
			sleep 0.1
		done
	fi
done

# A host whose test failed may leave its peers waiting for it until their
# own time limit: give them VM_PEER_GRACE seconds more, then stop them.
grace=${VM_PEER_GRACE:-120}
stop_peers_of_failure() {
	local i r
	while :; do
		for ((i = 1; i <= hosts; i++)); do
			r=$(cat "$run/host$i/rc" 2> /dev/null || true)
			if [ -n "$r" ] && [ "$r" != 0 ]; then
				sleep "$grace"
				: > "$run/peers-stopped"
				kill "${pids[@]}" 2> /dev/null || true
				return
			fi
		done
		sleep 2
	done
}
watcher=
if [ "$hosts" -gt 1 ]; then
	# (its sleeps must not hold a caller's pipe open, nor VM_LOCK past our exit)
	stop_peers_of_failure > /dev/null 2>&1 8>&- &
	watcher=$!
fi

status=0
for ((i = 1; i <= hosts; i++)); do
	out="$run/host$i"
	qrc=0
	wait "${pids[i]}" || qrc=$?
	hrc=
	if [ -r "$out/rc" ]; then
		hrc=$(cat "$out/rc")
	else
		# Fallback: the marker line on the console.
		hrc=$(sed -n 's/.*SRDMA-VM-EXIT host[0-9]* rc=\([0-9]*\).*/\1/p' "$out/console.log" 2>/dev/null | tail -n 1)
	fi
	if [ -z "$hrc" ]; then
		if [ -e "$run/peers-stopped" ]; then
			echo "host$i: stopped ${grace}s after a peer host failed" >&2
			hrc=124
		elif [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
			echo "host$i: TIMEOUT: VM killed after ${limit}s" >&2
			hrc=124
		else
			echo "host$i: VM exited ($qrc) without reporting a result" >&2
			hrc=125
		fi
	fi
	boot=$(sed -n 's/.*SRDMA-VM-BOOTED host[0-9]* uptime=\([0-9.]*\)s.*/\1/p' "$out/console.log" 2>/dev/null | head -n 1)
	logs=("$out/dmesg.txt")
	[ -r "$out/dmesg.txt" ] || logs=("$out/console.log")
	if ! "$here/scan-dmesg.sh" "${logs[@]}" > "$out/dmesg-hits.txt"; then
		echo "host$i: kernel log has oops/BUG/WARNING:" >&2
		sed 's/^/    /' "$out/dmesg-hits.txt" | head -n 20 >&2
		[ "$hrc" != 0 ] || hrc=1
	fi
	echo "host$i: rc=$hrc (booted in ${boot:-?}s)" >&2
	if [ "$hrc" != 0 ]; then
		[ "$status" != 0 ] || status=$hrc
		echo "---- host$i console (last 30 lines): ${out#"$SRDMA_REPO"/}/console.log" >&2
		tail -n 30 "$out/console.log" 2>/dev/null | sed 's/^/    /' >&2 || true
		# (a lone VM's hub port always draws a "not connected" warning)
		if grep -qv 'is not connected to host network' "$out/qemu.log" 2> /dev/null; then
			echo "---- qemu:" >&2
			grep -v 'is not connected to host network' "$out/qemu.log" | sed 's/^/    /' >&2
		fi
	fi
done
# its sleep, too: it would keep a caller's flock on the VM lock held
if [ -n "$watcher" ]; then
	kill -STOP "$watcher" 2> /dev/null || true
	pkill -P "$watcher" 2> /dev/null || true
	kill -KILL "$watcher" 2> /dev/null || true
fi
say "VM run $name done in $(elapsed "$t0")s: status $status"
exit "$status"
