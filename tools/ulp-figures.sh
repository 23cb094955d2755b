#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ulp-figures.sh [LABEL]: the figures the stacks' tests measured in one
# `make check` run (LABEL: its SRDMA_CHECK_LABEL, default check), for
# srdma and the upstream peers side by side: nvme-rdma, NFS over RDMA,
# iSER and SRP (their TAP diagnostics), and UCX's ucx_perftest results
# (the "Final:" line of each step's log, joined to the step's name).
# Prints nothing for a test that did not run.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/lib.sh
. "$here/lib.sh"
cd "$SRDMA_REPO"
out=build/vm/out/${1:-check}

# "fio 4k: READ: bw=6115KiB/s (6261kB/s), ...;WRITE: bw=4997KiB/s (...)"
# becomes "fio 4k: write 5117 kB/s, verify read 6261 kB/s"
fio_short() {
	sed -E 's/READ: bw=[^(]*\(([0-9.]+kB\/s)\)[^;]*;WRITE: bw=[^(]*\(([0-9.]+kB\/s)\).*/write \2, verify read \1/'
}

# the initiator (host2) measures; either host's lines are printed
for g in ulp_nvme ulp_nfs ulp_block; do
	ls "$out-$g"/host*/tap/"$g.tap" > /dev/null 2>&1 || continue
	echo "$g:"
	cat "$out-$g"/host*/tap/"$g.tap" | grep -E '^# (sroce|siwarp|rxe|siw)[ :]' |
		cut -c3- | fio_short | sed 's/^/  /'
done

tap=$out-ucx_mpi/host2/tap/ucx_mpi.tap
[ -r "$tap" ] || exit 0
echo "ucx_mpi (ucx_perftest on sroce, host2's view):"
sed -n 's/^ok \([0-9]*\) \(U[CP][TP] .*\)/\1\t\2/p' "$tap" | while IFS=$'\t' read -r n name; do
	# Final: iters, latency typical/average/overall (us), bandwidth
	# average/overall (MB/s), message rate average/overall
	awk -v name="$name" '$1 == "Final:" {
		if (name ~ /_lat/) printf "  %s: %.2f us average\n", name, $4
		else printf "  %s: %.1f MB/s\n", name, $7
	}' "$out-ucx_mpi/host2/logs/ucx_mpi/$n.log" 2> /dev/null
done
