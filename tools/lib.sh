# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Host-side helpers shared by tools/*.sh. Source it; it defines functions only
# (plus SRDMA_REPO), so sourcing never has side effects on the caller's shell.

# Repository root: the directory above tools/, wherever the clone lives.
# shellcheck disable=SC2034 # used by the scripts that source this
SRDMA_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# Kernels may also be unpacked instead of installed (tools/kroot.sh): with
# SRDMA_KROOT=DIR, DIR/boot/vmlinuz-KVER and DIR/lib/modules/KVER stand in
# for /boot and /lib/modules (the VMs bind the latter over the host's).
#
# srdma_kernel_ok KVER: the kernel has both headers (a build dir) and an
# image, the two things a test VM needs.
srdma_kernel_ok() {
	[ -d "${SRDMA_KROOT:-}/lib/modules/$1/build" ] && [ -r "${SRDMA_KROOT:-}/boot/vmlinuz-$1" ]
}

# srdma_meta_kver PACKAGE: the release an installed Debian kernel
# metapackage (linux-image-amd64, linux-image-6.12-amd64) points at.
srdma_meta_kver() {
	dpkg-query -W -f '${Status}\t${Depends}\n' "$1" 2> /dev/null |
		awk -F'\t' '$1 ~ / installed$/ { print $2 }' |
		grep -o 'linux-image-[^ ,]*' | sed -n '1s/^linux-image-//p'
}

# srdma_newest_kver [SERIES]: the newest usable kernel (of SERIES, e.g.
# 6.12, if given). The debug kernel (`make debug-kernel`, release ending in
# -srdma-debug) is never picked: only KVER selects it.
srdma_newest_kver() {
	local v best=
	while read -r v; do
		case "$v" in "" | *-srdma-debug) continue ;; esac
		case "$v" in "${1:+$1.}"*) ;; *) continue ;; esac
		srdma_kernel_ok "$v" && best=$v
	done < <(find "${SRDMA_KROOT:-}/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -V)
	[ -n "$best" ] || return 1
	echo "$best"
}

# The kernel the VMs boot and srdma.ko is built for. Never hard-coded. KVER
# in the environment overrides, like the top-level Makefile. Otherwise the
# distro's default kernel, the one the linux-image-amd64 metapackage depends
# on (Debian 12: 6.1, even with linux-image-6.12-amd64 installed beside it),
# so that installing a second kernel changes nothing unless asked for; and
# failing that, the newest kernel with headers and an image (the host
# kernel itself, without module support, is not usable).
srdma_kver() {
	local v
	if [ -n "${KVER:-}" ]; then
		echo "$KVER"
		return 0
	fi
	if [ -z "${SRDMA_KROOT:-}" ]; then
		v=$(srdma_meta_kver linux-image-amd64)
		if [ -n "$v" ] && srdma_kernel_ok "$v"; then
			echo "$v"
			return 0
		fi
	fi
	srdma_newest_kver
}

# srdma_kver_series SERIES: the kernel of SERIES (e.g. 6.12) the VMs boot
# for `make check-612`: KVER if set, else what Debian's linux-image-SERIES-amd64
# metapackage depends on, else the newest installed (or unpacked) one.
srdma_kver_series() {
	local v
	if [ -n "${KVER:-}" ]; then
		echo "$KVER"
		return 0
	fi
	if [ -z "${SRDMA_KROOT:-}" ]; then
		v=$(srdma_meta_kver "linux-image-$1-amd64")
		if [ -n "$v" ] && srdma_kernel_ok "$v"; then
			echo "$v"
			return 0
		fi
	fi
	srdma_newest_kver "$1"
}

# Seconds since the epoch with a fraction, for timing reports.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# bench_mtu_out: check BENCH_MTU (eth0's MTU in the guests; empty for
# their default) and set mtu to it and out to the bench's output directory
# for it and for the wire (VM_WIRE, tools/vm/run.sh), build/bench,
# build/bench-mtuN, build/bench-tap or build/bench-mtuN-tap, created;
# BENCH_TAG=NAME names it build/bench-NAME instead.
bench_mtu_out() {
	local wire=
	mtu=${BENCH_MTU:-}
	[[ "$mtu" =~ ^([1-9][0-9]*)?$ ]] || die "BENCH_MTU must be a number"
	[[ "${BENCH_TAG:-}" =~ ^[A-Za-z0-9_.-]*$ ]] || die "BENCH_TAG: letters, digits, . _ - only"
	[ "${VM_WIRE:-stream}" = stream ] || wire=-$VM_WIRE
	out=$SRDMA_REPO/build/bench${mtu:+-mtu$mtu}$wire
	[ -z "${BENCH_TAG:-}" ] || out=$SRDMA_REPO/build/bench-$BENCH_TAG
	mkdir -p "$out"
}

# bench_follow PID VMDIR: while the VM run PID lives, print each new
# "bench[host1]" line of host1's script log (one per measurement), so a
# long bench shows its progress.
bench_follow() {
	local seen=0 n log=$2/host1/script.log
	while kill -0 "$1" 2> /dev/null; do
		sleep 5
		n=$(grep -c '^bench\[host1\]' "$log" 2> /dev/null) || n=0
		if [ "$n" -gt "$seen" ]; then
			grep '^bench\[host1\]' "$log" | sed -n "$((seen + 1)),${n}p"
			seen=$n
		fi
	done
}
