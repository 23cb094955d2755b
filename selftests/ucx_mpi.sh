#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-hosts: 2
# timeout: 600
# The HPC stacks over srdma, two hosts on one wire: UCX (ucx_perftest over
# rc_verbs and ud_verbs, UCT and UCP), Open MPI over UCX (a two-rank job
# that checks every byte it receives), and libfabric's verbs provider
# (fi_pingpong with data checks) on sroce and on siwarp. Host1 serves,
# host2 dials; each transfer also shows in host1's srdma byte counters.
set -u
# shellcheck source=selftests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/rdma_lib.sh
. "$(dirname "$0")/rdma_lib.sh"

tap_require_root
tap_require_cmd rdma ucx_info ucx_perftest mpirun fi_info fi_pingpong
require_test_netdev
[ -n "${VM_HOST:-}" ] || tap_skip_all "needs two test VMs (VM_HOST unset)"
MPI_XFER=${SRDMA_SELFTEST_BIN:-$REPO/build/selftests}/mpi_xfer
[ -x "$MPI_XFER" ] || tap_skip_all "$MPI_XFER not built (make -C selftests, needs mpicc)"
me=$VM_HOST
server=192.0.2.11
old_hostname=$(hostname)

tap_cleanup() {
	hostname "$old_hostname"
	srdma_cleanup dev0 dev1
}

# Open MPI and UCX tell nodes apart by host name; the VMs share one.
hostname "host$me"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# UCX on RoCE v2 IPv4 (its default GID); UCX_TLS allows no TCP or shared
# memory to fall back on.
export UCX_NET_DEVICES=dev0:1
# libfabric's ofi_rxm sizes its verbs CQ for FI_UNIVERSE_SIZE peers (256
# by default): (tx + rx queue) x 256 CQEs is more than the max_cqe of srdma
# (65535) or rdma_rxe, and fi_enable fails with EINVAL.
export FI_UNIVERSE_SIZE=16

rx_bytes() { hw_counter "$1" rx_bytes; }

# ucx_has_tl TL: ucx_info lists TL on dev0:1
ucx_has_tl() {
	timeout 60 ucx_info -d > "$TAP_LOGDIR/ucx_info.txt" 2>&1 || return 1
	awk -v tl="$1" '$2 == "Transport:" { t = $3 } $2 == "Device:" && t == tl && $3 == "dev0:1" { f = 1 }
		END { exit !f }' "$TAP_LOGDIR/ucx_info.txt"
}

ucx_has_tls() { ucx_has_tl rc_verbs && ucx_has_tl ud_verbs; }

# served PORT MIN_BYTES DEV CMD...: host1 runs the server CMD, which must
# exit 0 having received at least MIN_BYTES over DEV (rdma statistic).
served() {
	local dev=$3 min=$2 before after rc
	shift 3
	before=$(rx_bytes "$dev")
	"$@"
	rc=$?
	after=$(rx_bytes "$dev")
	echo "served: exit $rc; $dev rx_bytes +$((after - before)), want >= $min"
	[ "$rc" = 0 ] && [ $((after - before)) -ge "$min" ]
}

# dial CMD...: host2 runs the client CMD, again while the server is not
# listening yet (connection refused), at most 60 times a second apart.
dial() {
	local i out rc
	for i in $(seq 60); do
		out=$("$@" 2>&1)
		rc=$?
		grep -q -i 'refused' <<< "$out" || break
		sleep 1
	done
	echo "$out"
	echo "dial: exit $rc after $i attempts"
	return "$rc"
}

# perftest_ok ITERS: ucx_perftest's output (stdin) ends with a Final line
# for ITERS iterations
perftest_ok() {
	local out
	out=$(cat)
	echo "$out"
	awk -v n="$1" '$1 == "Final:" && $2 == n { f = 1 } END { exit !f }' <<< "$out"
}

# ucx_pair PORT ITERS MIN_BYTES ENV... -- PERFTEST_ARGS...
ucx_pair() {
	local port=$1 iters=$2 min=$3 envs=()
	shift 3
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	if [ "$me" = 1 ]; then
		served "$port" "$min" dev0 timeout 90 env "${envs[@]}" \
			ucx_perftest -p "$port" -n "$iters" "$@"
	else
		dial timeout 90 env "${envs[@]}" \
			ucx_perftest "$server" -p "$port" -n "$iters" "$@" | perftest_ok "$iters"
	fi
}

# mpi_run NAME DEV MIN_BYTES MPIRUN_ARGS...: host1 runs mpirun, which
# starts rank 1's orted on host2 through remote_exec.py (an ssh stand-in);
# rank 0 and the job must report every byte right, and host1's DEV must
# have received at least MIN_BYTES.
MPI_ROUNDS=5
mpi_run() {
	local name=$1 dev=$2 min=$3 hosts out rc
	shift 3
	if [ "$me" = 2 ]; then
		timeout 150 "$SELFTESTS_DIR/remote_exec.py" serve 19997 "$TAP_LOGDIR/orted-$name.log"
		rc=$?
		cat "$TAP_LOGDIR/orted-$name.log"
		return "$rc"
	fi
	hosts=$TAP_LOGDIR/hostfile
	printf '%s slots=1\n' 192.0.2.11 192.0.2.12 > "$hosts"
	out=$(served 0 "$min" "$dev" timeout 150 mpirun -np 2 --hostfile "$hosts" \
		--map-by node --mca plm_rsh_agent "$SELFTESTS_DIR/remote_exec.py" \
		--mca oob_tcp_if_include eth0 --mca btl self "$@" \
		"$MPI_XFER" "$MPI_ROUNDS" 2>&1)
	rc=$?
	echo "$out"
	[ "$rc" = 0 ] && grep -q ' 0 bad messages$' <<< "$out" &&
		grep -q '^rank 1 of 2 on host2' <<< "$out"
}
mpi_ucx() { # NAME UCX_TLS
	mpi_run "$1" dev0 "$mpi_bytes" --mca pml ucx -x UCX_NET_DEVICES -x "UCX_TLS=$2"
}
mpi_ofi() { # NAME DEV: Open MPI's ofi MTL on libfabric's verbs;ofi_rxm
	mpi_run "$1" "$2" "$mpi_bytes" --mca pml cm --mca mtl ofi \
		--mca mtl_ofi_provider_include "verbs;ofi_rxm" -x FI_UNIVERSE_SIZE
}

# fi_pair PORT DOMAIN DEV MIN_BYTES FI_PINGPONG_ARGS...: -c checks the data
fi_pair() {
	local port=$1 dom=$2 dev=$3 min=$4
	shift 4
	if [ "$me" = 1 ]; then
		served "$port" "$min" "$dev" timeout 90 fi_pingpong -p verbs -d "$dom" -B "$port" -c "$@"
	else
		dial timeout 90 fi_pingpong -p verbs -d "$dom" -P "$port" -c "$@" "$server"
	fi
}

to_siwarp() {
	link_del_gone dev0 && mkdev siwarp dev1 "$NETDEV" || return 1
	# for the record: UCX has no iWARP transport
	timeout 60 ucx_info -d | grep -B1 -A1 'Device: dev1' || echo "ucx_info: no UCX transport on dev1"
}

fi_lists() { # DEV: fi_info -p verbs has DEV's domains
	local out
	out=$(timeout 60 fi_info -p verbs 2>&1)
	echo "$out" | grep -E 'domain|type' | sort | uniq -c
	grep -q "domain: $1\$" <<< "$out"
}

# the bytes rank 0 receives: MPI_ROUNDS x the sizes of mpi_xfer.c
mpi_bytes=$((MPI_ROUNDS * (1 + 8 + 1000 + 4096 + 65536 + (1 << 20) + (4 << 20))))
N_LAT=1000 N_BW=200 BW=65536

tap_plan 23
STEP_TIMEOUT=200
t "host$me: sroce device dev0 on $NETDEV" mkdev sroce dev0 "$NETDEV" || tap_bail "no device"
t "host$me: ucx_info lists rc_verbs and ud_verbs on dev0:1" ucx_has_tls
t "host$me: fi_info -p verbs lists dev0" fi_lists dev0
# UCT, one transport each, then UCP with UCX_TLS (rc_v wires up over UD)
t "UCT am_lat ud_verbs" ucx_pair 13341 $N_LAT $((N_LAT * 8)) -- -t am_lat -x ud_verbs -d dev0:1
t "UCT am_lat rc_verbs" ucx_pair 13342 $N_LAT $((N_LAT * 8)) -- -t am_lat -x rc_verbs -d dev0:1
t "UCT put_bw rc_verbs zcopy 64 KiB" ucx_pair 13343 $N_BW $((N_BW * BW)) -- \
	-t put_bw -x rc_verbs -d dev0:1 -D zcopy -s $BW
t "UCT am_bw ud_verbs bcopy" ucx_pair 13344 $N_BW $((N_BW * 900)) -- \
	-t am_bw -x ud_verbs -d dev0:1 -D bcopy -s 900
t "UCP tag_bw 64 KiB, UCX_TLS=ud_v" ucx_pair 13345 $N_BW $((N_BW * BW)) UCX_TLS=ud_v -- \
	-t tag_bw -s $BW
t "UCP tag_bw 64 KiB, UCX_TLS=rc_v" ucx_pair 13346 $N_BW $((N_BW * BW)) UCX_TLS=rc_v -- \
	-t tag_bw -s $BW
t "UCP put_bw 64 KiB, UCX_TLS=rc_v" ucx_pair 13347 $N_BW $((N_BW * BW)) UCX_TLS=rc_v -- \
	-t ucp_put_bw -s $BW
t "UCP put_bw 64 KiB, UCX_TLS=ud_v" ucx_pair 13348 $N_BW $((N_BW * BW)) UCX_TLS=ud_v -- \
	-t ucp_put_bw -s $BW
t "UCP am_lat, UCX_TLS=ud_v" ucx_pair 13349 $N_LAT $((N_LAT * 8)) UCX_TLS=ud_v -- -t ucp_am_lat
t "UCP am_lat, UCX_TLS=rc_v" ucx_pair 13350 $N_LAT $((N_LAT * 8)) UCX_TLS=rc_v -- -t ucp_am_lat
t "Open MPI over UCX rc_v: verified sendrecv" mpi_ucx ucx-rc rc_v,self
t "Open MPI over UCX ud_v: verified sendrecv" mpi_ucx ucx-ud ud_v,self
t "Open MPI over libfabric verbs;ofi_rxm on sroce: verified sendrecv" mpi_ofi ofi-sroce dev0
t "fi_pingpong verbs msg on sroce" fi_pair 47601 dev0 dev0 $((10 * BW)) -e msg -I 10 -S $BW
t "fi_pingpong verbs;ofi_rxm rdm on sroce" fi_pair 47602 dev0 dev0 $((10 * BW)) -e rdm -I 10 -S $BW
t "fi_pingpong verbs dgram on sroce" fi_pair 47603 dev0-dgram dev0 $((10 * 1024)) -e dgram -I 10 -S 1024
t "host$me: sroce dev0 gone, siwarp device dev1 on $NETDEV" to_siwarp
t "fi_pingpong verbs msg on siwarp" fi_pair 47604 dev1 dev1 $((10 * BW)) -e msg -I 10 -S $BW
t "fi_pingpong verbs;ofi_rxm rdm on siwarp" fi_pair 47605 dev1 dev1 $((10 * BW)) -e rdm -I 10 -S $BW
t "Open MPI over libfabric verbs;ofi_rxm on siwarp: verified sendrecv" mpi_ofi ofi-siwarp dev1
