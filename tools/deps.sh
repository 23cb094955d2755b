#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make deps`: install everything the build, the VM tests and the demo need
# (Debian 12 / apt). Idempotent: packages already installed are not touched,
# and `apt-get update` runs at most once, only when something is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

export DEBIAN_FRONTEND=noninteractive
# The VMs boot the kernel with their own tiny initramfs: skip the slow
# initrd that installing a linux-image package would build.
export INITRD=No

# Build: the module against the distro kernel's headers (+ sparse for C=1),
# for both of Debian 12's kernels: 6.1 (linux-image-amd64, the default for
# `make` and `make check`) and 6.12 (`make check-612`; its headers need
# pahole, which linux-kbuild-6.12 pulls in).
# VMs: qemu, the kernel image, a static busybox for the initramfs.
# Tests: RDMA user space (verbs, rdmacm, perftest, pyverbs), iproute2 (ip, rdma),
# linux-source (upstream siw peer, checkpatch, kselftest headers).
# Bench: iperf3 and sockperf (the wire's own rate and round trip), gnuplot,
# ethtool (a guest NIC's offloads, BENCH_OFFLOADS).
# Packaging: dkms (make dkms-install; make check-install tests it).
pkgs=(
	gcc make libc6-dev sparse python3 perl
	linux-image-amd64 linux-headers-amd64
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	qemu-system-x86 busybox-static cpio gzip xz-utils kmod iproute2 procps
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest
	python3-pyverbs libibverbs-dev librdmacm-dev iperf3 sockperf
	gnuplot-nox ethtool
	dkms
)

sudo=()
if [ "$(id -u)" != 0 ]; then
	command -v sudo > /dev/null || { echo "deps.sh: run as root (or install sudo)" >&2; exit 1; }
	sudo=(sudo -E)
fi

missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f '${Status}\n' "$p" 2> /dev/null | grep -q '^install ok installed$' ||
			echo "$p"
	done
}

updated=0
install() {
	local need
	mapfile -t need < <(missing "$@")
	[ "${#need[@]}" -gt 0 ] || return 0
	if [ "$updated" = 0 ]; then
		"${sudo[@]}" apt-get update -q
		updated=1
	fi
	echo "deps.sh: installing ${need[*]}"
	"${sudo[@]}" apt-get install -y -q --no-install-recommends "${need[@]}"
}

# A previous install that was interrupted leaves packages unconfigured.
if dpkg --audit 2> /dev/null | grep -q .; then
	"${sudo[@]}" dpkg --configure -a
fi

install "${pkgs[@]}"
# Kernel ULP tests (selftests/ulp_*.sh): NVMe over Fabrics, NFS over RDMA,
# iSER and SRP (a LIO target set up with targetcli, open-iscsi, srptools).
ulp_pkgs=(nvme-cli fio nfs-kernel-server nfs-common targetcli-fb open-iscsi srptools)
install "${ulp_pkgs[@]}"
# User-space stacks on verbs (selftests/ucx_mpi.sh): UCX and its
# ucx_perftest, Open MPI over UCX (mpicc builds selftests/mpi_xfer.c),
# libfabric's verbs provider and fi_pingpong.
stack_pkgs=(ucx-utils libucx0 openmpi-bin libopenmpi-dev libfabric1 libfabric-bin)
install "${stack_pkgs[@]}"

# linux-source is versioned by major.minor of the kernel just installed
# (the default kernel's: checkpatch, kselftest headers, the siw peer; and
# 6.12's, for its siw peer).
# shellcheck source=tools/lib.sh
. "$here/lib.sh"
kver=$(srdma_kver) || { echo "deps.sh: no kernel with headers after install" >&2; exit 1; }
series=$(echo "$kver" | cut -d. -f1,2)
install "linux-source-$series" linux-source-6.12

# For developers' lint runs only (not CI): the shell linter, if apt has it.
if [ -z "${CI:-}" ] && apt-cache show shellcheck > /dev/null 2>&1; then
	install shellcheck || true
fi
echo "deps.sh: ready (kernel $kver, linux-source-$series; 6.12: $(srdma_kver_series 6.12 || echo missing))"
