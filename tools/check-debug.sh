#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check-debug`: the whole `make check` on the debug kernel (KASAN,
# KFENCE, lockdep, kmemleak, UBSAN, lockup and hung-task detectors; see
# tools/debug-kernel/debug.config). Builds that kernel first if it is not
# cached (tens of minutes), builds srdma.ko against it in build/debug-module
# (the repo's own srdma.ko stays built for the distro kernel), and scales
# every time limit by SRDMA_TIMEOUT_SCALE (default 3: KASAN and lockdep
# slow the guest down). Any sanitizer report fails the test it ran in.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/lib.sh
. "$here/lib.sh"
cd "$SRDMA_REPO"

krel=$("$here/debug-kernel.sh" | tail -n 1)
mod=build/debug-module
rm -rf "$mod"
mkdir -p "$mod"
cp -r Kbuild drivers include "$mod/"
say "building srdma.ko for $krel in $mod"
make -C "/lib/modules/$krel/build" M="$SRDMA_REPO/$mod" modules > "$mod/build.log" 2>&1 ||
	{ tail -n 30 "$mod/build.log" >&2; die "srdma.ko did not build for $krel"; }
# no5lvl: with 5-level paging (QEMU's -cpu max has LA57), this KASAN
# kernel reports a wild access in the first interrupt of the boot, before
# any test runs. pci=noacpi: under KASAN and TCG the ACPI interpreter runs
# each virtio device's _PRT method into its 30 s loop timeout (90 s of a
# 135 s boot); the legacy routing table gives the same interrupts at once.
KVER=$krel SRDMA_CHECK_KO=$mod/srdma.ko SRDMA_TIMEOUT_SCALE=${SRDMA_TIMEOUT_SCALE:-3} \
	VM_APPEND="${VM_APPEND:-no5lvl pci=noacpi}" exec "$here/check.sh"
