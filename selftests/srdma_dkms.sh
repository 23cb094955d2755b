#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: own
# timeout: 1800
# Packaging, as a user installs srdma: `make dkms-install` copies the tree
# to /usr/src, DKMS builds srdma.ko for the running kernel (warnings not
# fatal) and installs it with the modprobe.d file; then modprobe srdma, a
# device, verified traffic, and `make dkms-remove` takes it all away.
# Not in `make check` (DKMS compiles the module inside the emulated guest,
# many minutes): `make check-install` runs it. Own VM: it installs into the
# guest's throwaway /usr/src, /var/lib/dkms and /lib/modules.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd dkms make gcc rdma rping modprobe modinfo
require_test_netdev
module_absent srdma || tap_skip_all "srdma already loaded"
kver=$(uname -r)
[ -d "/lib/modules/$kver/build" ] || tap_skip_all "no headers for $kver"
ip4=$(netdev_ip4 "$NETDEV")
[ -n "$ip4" ] || tap_skip_all "$NETDEV has no IPv4 address"

tap_cleanup() {
	timeout 10 rdma link del sroce0 2> /dev/null
	timeout 30 modprobe -r srdma 2> /dev/null
	# (the last step removed it already unless the test stopped early)
	timeout 120 make -s -C "$REPO" dkms-remove > /dev/null 2>&1 || :
}

dkms_install() { timeout 1500 make -C "$REPO" dkms-install KVER="$kver" DKMS_KERNELS="$kver"; }

installed_by_dkms() {
	local f
	timeout 30 dkms status srdma || return 1
	f=$(timeout 30 modinfo -F filename srdma) || return 1
	echo "srdma -> $f"
	[[ "$f" == "/lib/modules/$kver/updates/dkms/srdma.ko"* ]]
}

rping_v() {
	pair timeout 60 rping -s -a "$ip4" -V -C 20 -S 4000 -- \
		timeout 60 rping -c -a "$ip4" -V -C 20 -S 4000
}

removed() {
	timeout 300 make -s -C "$REPO" dkms-remove || return 1
	! timeout 30 modinfo srdma > /dev/null 2>&1 || { echo "srdma.ko still installed"; return 1; }
	[ ! -e /etc/modprobe.d/srdma.conf ]
}

STEP_TIMEOUT=1500
tap_plan 8
t "make dkms-install builds and installs srdma for $kver" dkms_install
STEP_TIMEOUT=120
t "dkms lists it; modinfo finds the DKMS build" installed_by_dkms
t "modprobe srdma" timeout 60 modprobe srdma
t "sroce0 on $NETDEV" link_add sroce0 sroce "$NETDEV"
t "verified rping over sroce0" rping_v
t "rdma link del sroce0" link_del_gone sroce0
t "modprobe -r srdma" timeout 60 modprobe -r srdma
STEP_TIMEOUT=400
t "make dkms-remove leaves nothing installed" removed
