#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# srdma and the in-tree rdma_rxe must not share a kernel (rxe casts any
# RXE-driver device on a netdev to its own struct, and both want UDP 4791):
# with srdma loaded, loading rdma_rxe fails; with rdma_rxe loaded, loading
# srdma fails and says why in the kernel log. Own VM: it leaves rxe loaded.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
modinfo rdma_rxe > /dev/null 2>&1 || tap_skip_all "this kernel has no rdma_rxe"
module_absent rdma_rxe || tap_skip_all "rdma_rxe already loaded"

tap_cleanup() {
	unload_srdma
	modprobe -r rdma_rxe
}

rxe_refused_srdma() {
	# A missing srdma.ko must not pass for a refusal.
	[ -r "${SRDMA_KO:-$REPO/srdma.ko}" ] || { echo "srdma.ko not built"; return 1; }
	kmsg_mark rxe-first
	! load_srdma || { echo "srdma loaded although rdma_rxe is"; return 1; }
}
dmesg_names_rxe() {
	kmsg_since rxe-first | tee /dev/stderr | grep -i srdma | grep -q rdma_rxe
}

tap_plan 8
t "load srdma.ko" load_srdma || tap_bail "srdma.ko did not load"
t_fail "modprobe rdma_rxe fails while srdma is loaded" modprobe rdma_rxe
t "rdma_rxe is not loaded" module_absent rdma_rxe
t "rmmod srdma" unload_srdma
t "modprobe rdma_rxe once srdma is gone" modprobe rdma_rxe
t "insmod srdma.ko fails while rdma_rxe is loaded" rxe_refused_srdma
t "kernel log: srdma names rdma_rxe as the reason" dmesg_names_rxe
t "srdma is not loaded" module_absent srdma
