#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# srdma as a drop-in for rdma_rxe: with srdma.ko installed and the
# modprobe.d file of `make install` in place, the commands that suites
# such as blktests (USE_RXE=1) run get an sroce device, unchanged:
# modprobe rdma_rxe, rdma link add IFACE_rxe type rxe netdev IFACE, verified
# traffic through it, rdma link del, modprobe -r rdma_rxe. The kernel's own
# rdma_rxe never loads. Own VM: it installs into the guest's throwaway
# /lib/modules and /etc.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma rping modprobe modinfo depmod make
require_test_netdev
ko=${SRDMA_KO:-$REPO/srdma.ko}
[ -r "$ko" ] || tap_skip_all "srdma.ko not built"
module_absent rdma_rxe || tap_skip_all "rdma_rxe already loaded"
module_absent srdma || tap_skip_all "srdma already loaded"
kver=$(uname -r)
ip4=$(netdev_ip4 "$NETDEV")
[ -n "$ip4" ] || tap_skip_all "$NETDEV has no IPv4 address"
link=${NETDEV}_rxe # the name blktests gives it

tap_cleanup() {
	timeout 10 rdma link del "$link" 2> /dev/null
	timeout 30 modprobe -r srdma 2> /dev/null
	rm -f /etc/modprobe.d/srdma.conf "/lib/modules/$kver/updates/srdma.ko"
}

# depmod -a reads every module of the kernel over the VM's 9p root: tens of
# seconds under TCG, more than one minute on a slow host.
install_srdma() {
	install -D -m 644 "$ko" "/lib/modules/$kver/updates/srdma.ko" &&
		timeout 300 make -s -C "$REPO" install-conf KVER="$kver"
}

# modprobe resolves the name rdma_rxe to srdma.ko (modinfo does not read
# modprobe.d aliases and still names the kernel's rdma_rxe.ko)
rxe_names_srdma() {
	local out
	out=$(timeout 30 modprobe -n -v rdma_rxe) || return 1
	echo "$out"
	grep -q "/lib/modules/$kver/updates/srdma.ko" <<< "$out" &&
		! grep -q rdma_rxe.ko <<< "$out"
}

modprobe_rxe_loads_srdma() {
	timeout 60 modprobe rdma_rxe || return 1
	module_loaded srdma || { echo "srdma not loaded"; return 1; }
	module_absent rdma_rxe || { echo "the kernel's rdma_rxe loaded"; return 1; }
}

rping_v() {
	pair timeout 60 rping -s -a "$ip4" -V -C 20 -S 4000 -- \
		timeout 60 rping -c -a "$ip4" -V -C 20 -S 4000
}

modprobe_r_rxe_unloads() {
	timeout 60 modprobe -r rdma_rxe || return 1
	module_absent srdma || { echo "srdma still loaded"; return 1; }
}

tap_plan 8
STEP_TIMEOUT=300 t "srdma.ko installed, modprobe.d file by make install-conf" \
	install_srdma
t "modprobe -n rdma_rxe would load srdma.ko" rxe_names_srdma
t "modprobe rdma_rxe loads srdma, not rdma_rxe" modprobe_rxe_loads_srdma
t "rdma link add $link type rxe netdev $NETDEV" link_add "$link" rxe "$NETDEV"
t "$link is an InfiniBand-transport (RoCE) device on $NETDEV" transport_is "$link" InfiniBand
t "verified rping through it" rping_v
t "rdma link del $link" link_del_gone "$link"
t "modprobe -r rdma_rxe unloads srdma" modprobe_r_rxe_unloads
