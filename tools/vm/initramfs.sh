#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (or reuse) the tiny initramfs for kernel KVER and print its path.
# Contents: static busybox, tools/vm/init, and the virtio/9p/overlay modules in
# dependency order. Cached under build/vm/ keyed by a hash of every input, so
# a changed init script, busybox or kernel package rebuilds it automatically.
set -euo pipefail
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

kver=${1:-$(srdma_kver)} || die "no kernel with headers and /boot/vmlinuz; run 'make deps'"
busybox=$(command -v busybox || true)
[ -x /bin/busybox ] && busybox=/bin/busybox
[ -n "$busybox" ] || die "busybox not found; run 'make deps'"
# It runs before any library is reachable, so it has to be static.
! ldd "$busybox" > /dev/null 2>&1 ||
	die "$busybox is not static (install busybox-static)"

# What the initramfs must be able to do before the host root is mounted.
want="virtio_pci 9pnet_virtio 9p overlay"

# Which of them are modules, and in what order, differs between kernels
# (6.1: virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev
# virtio_pci 9pnet 9pnet_virtio netfs fscache 9p overlay; 6.12 builds virtio
# and virtio_pci in and fscache into netfs: netfs 9pnet 9pnet_virtio 9p
# overlay), so modprobe resolves the order from the kernel's modules.dep
# (under SRDMA_KROOT for an unpacked kernel); duplicates are dropped keeping
# the first occurrence. "builtin" lines need no file.
mods=$(for m in $want; do
	modprobe -d "${SRDMA_KROOT:-/}" --show-depends -S "$kver" "$m" ||
		die "module $m missing for $kver"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }')

outdir="$SRDMA_REPO/build/vm"
img="$outdir/initramfs-$kver.cpio.gz"
key=$( {
	echo "$kver"
	# Contents, not names: the same script reached by another path is the same.
	cat "$SRDMA_REPO/tools/vm/init" "$busybox" "$0" | sha256sum
	for f in $mods; do stat -c '%n %s %Y' "$f"; done
} | sha256sum | cut -d' ' -f1)

if [ -f "$img" ] && [ "$(cat "$img.key" 2>/dev/null)" = "$key" ]; then
	echo "$img"
	exit 0
fi

mkdir -p "$outdir"
stage=$(mktemp -d "$outdir/initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,modules}
# (empty when the kernel has all of them built in, as the debug kernel does)
: > "$stage/modules/order"
cp "$busybox" "$stage/bin/busybox"
cp "$SRDMA_REPO/tools/vm/init" "$stage/init"
chmod 0755 "$stage/init" "$stage/bin/busybox"
for f in $mods; do
	b=$(basename "$f")
	# busybox insmod cannot read compressed modules: store them plain.
	case "$f" in
	*.ko.xz) xz -dc "$f" > "$stage/modules/${b%.xz}"; b=${b%.xz} ;;
	*.ko.zst) zstd -qdc "$f" > "$stage/modules/${b%.zst}"; b=${b%.zst} ;;
	*.ko.gz) gzip -dc "$f" > "$stage/modules/${b%.gz}"; b=${b%.gz} ;;
	*) cp "$f" "$stage/modules/$b" ;;
	esac
	echo "$b" >> "$stage/modules/order"
done
(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$img.tmp"
mv "$img.tmp" "$img"
echo "$key" > "$img.key"
say "built $img ($(du -h "$img" | cut -f1), modules: $(tr '\n' ' ' < "$stage/modules/order"))"
echo "$img"
