#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm: shared
# An sroce device on a netdev inside a network namespace: created from the
# namespace, ACTIVE with the namespace's address as its RoCE v2 GID, usable
# through libibverbs there, and removed when the netdev goes away. With the
# default `rdma system` netns mode (shared) it is visible from init_net too.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma ibv_devinfo ip
[ -n "${VM_HOST:-}" ] || [ -n "${SRDMA_TEST_NETDEV:-}" ] ||
	tap_skip_all "not in a test VM (set SRDMA_TEST_NETDEV to run anyway)"
ip netns list > /dev/null 2>&1 || tap_skip_all "no network namespace support"

ns=srdma_ns1
tap_cleanup() {
	ip link del veth0 2> /dev/null
	ip netns del "$ns" 2> /dev/null
	srdma_cleanup sroce_ns
}

netns_pair() {
	ip netns add "$ns" &&
		ip link add veth0 type veth peer name veth1 &&
		ip link set veth1 netns "$ns" &&
		ip addr add 198.51.100.1/24 dev veth0 && ip link set veth0 up &&
		ip -n "$ns" addr add 198.51.100.2/24 dev veth1 &&
		ip -n "$ns" link set veth1 up && ip -n "$ns" link set lo up
}
in_ns() { ip netns exec "$ns" "$@"; }
shared_mode() { rdma system show | tee /dev/stderr | grep -q 'netns shared'; }
veth_del_gone() { ip link del veth0 && wait_dev_gone sroce_ns; }

tap_plan 11
t "load srdma.ko" load_srdma || tap_bail "srdma.ko did not load"
t "rdma system netns mode is shared" shared_mode
t "veth0 <-> veth1 in netns $ns" netns_pair
t "rdma link add sroce_ns type sroce netdev veth1 (inside $ns)" in_ns rdma link add sroce_ns type sroce netdev veth1
t "sroce_ns PORT_ACTIVE (seen from $ns)" in_ns bash -c "$(declare -f devinfo devinfo_has port_state_is); port_state_is sroce_ns PORT_ACTIVE"
t "sroce_ns has RoCE v2 GID ::ffff:198.51.100.2" has_gid sroce_ns "::ffff:198.51.100.2" "RoCE v2"
t "rdma link show lists sroce_ns on veth1 (inside $ns)" in_ns bash -c "$(declare -f link_shows); link_shows sroce_ns veth1"
# The kernel names a port's netdev only to callers in the netdev's netns.
t "rdma link show lists sroce_ns/1 (from init_net)" bash -c "rdma link show sroce_ns/1 | grep -q '^link sroce_ns/1 '"
t "pyverbs opens sroce_ns and allocates a PD (inside $ns)" in_ns /usr/bin/python3 -c "from pyverbs.device import Context; from pyverbs.pd import PD; PD(Context(name='sroce_ns'))"
t "deleting veth0 (and its peer) removes sroce_ns" veth_del_gone
t "rmmod srdma" unload_srdma
