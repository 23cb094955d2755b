#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the qemu accelerator options to use: KVM only when it demonstrably
# boots this kernel (on some hosts /dev/kvm exists but a stock kernel hangs
# under it), otherwise multi-threaded TCG, which always works. The probe boots
# the kernel without a root fs: it must reach its "Kernel panic" within a few
# seconds. The verdict is cached per kernel under build/vm/.
# SRDMA_VM_ACCEL=tcg|kvm forces a choice without probing.
set -euo pipefail
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

kver=${1:-$(srdma_kver)}
tcg="-accel tcg,thread=multi -cpu max"
kvm="-accel kvm -cpu max"
read -r -a kvm_opts <<< "$kvm"

case "${SRDMA_VM_ACCEL:-auto}" in
tcg) echo "$tcg"; exit 0 ;;
kvm) echo "$kvm"; exit 0 ;;
esac

if [ ! -w /dev/kvm ]; then
	echo "$tcg"
	exit 0
fi

cache="$SRDMA_REPO/build/vm/accel-$kver"
if [ ! -f "$cache" ]; then
	mkdir -p "$(dirname "$cache")"
	log=$(mktemp)
	timeout -k 2 20 qemu-system-x86_64 "${kvm_opts[@]}" -m 512 -nodefaults -no-user-config \
		-display none -no-reboot -serial "file:$log" \
		-kernel "${SRDMA_KROOT:-}/boot/vmlinuz-$kver" -append "console=ttyS0 panic=-1" \
		> /dev/null 2>&1 || true
	if grep -q 'Kernel panic' "$log"; then echo kvm > "$cache"; else echo tcg > "$cache"; fi
	rm -f "$log"
fi
if [ "$(cat "$cache")" = kvm ]; then echo "$kvm"; else echo "$tcg"; fi
