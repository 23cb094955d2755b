#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make debug-kernel`: build the distro kernel's source (linux-source-X.Y,
# the series of the installed distro kernel) with the sanitizers and fault
# injection of tools/debug-kernel/debug.config, and install it next to the
# distro kernel as /boot/vmlinuz-KREL + /lib/modules/KREL (KREL ends in
# -srdma-debug), so that KVER=KREL boots it in the test VMs. Prints KREL.
#
# A build takes tens of minutes on two cores: it is cached under
# $SRDMA_DEBUG_KERNEL_DIR (default ~/.cache/srdma/debug-kernel) and redone
# only when the config fragment, this script or the source package change.
# Runs at the lowest CPU priority so that it can share the machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/lib.sh
. "$here/lib.sh"

[ "$(id -u)" = 0 ] || die "run as root: it installs into /boot and /lib/modules"
distro=$(srdma_kver) || die "no distro kernel with headers; run 'make deps'"
series=$(echo "$distro" | cut -d. -f1,2)
tarball=/usr/src/linux-source-$series.tar.xz
[ -r "$tarball" ] || die "$tarball missing; run 'make deps'"

# What a kernel build needs beyond `make deps`.
need=()
for p in flex bison bc libelf-dev libssl-dev; do
	dpkg-query -W -f '${Status}\n' "$p" 2> /dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
	say "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" > /dev/null ||
		{ apt-get update -q > /dev/null && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends "${need[@]}" > /dev/null; }
fi

cache=${SRDMA_DEBUG_KERNEL_DIR:-$HOME/.cache/srdma/debug-kernel}
fragment=$here/debug-kernel/debug.config
key=$( {
	stat -c '%n %s %Y' "$tarball"
	cat "$fragment" "$0"
} | sha256sum | cut -d' ' -f1)

installed() { # KREL: is this build installed where the VMs look for it?
	[ -r "/boot/vmlinuz-$1" ] && [ -d "/lib/modules/$1/kernel" ] &&
		[ -e "/lib/modules/$1/build/Module.symvers" ]
}

if [ -r "$cache/key" ] && [ "$(cat "$cache/key")" = "$key" ]; then
	krel=$(cat "$cache/krel")
	if installed "$krel"; then
		say "debug kernel $krel is up to date ($cache)"
		echo "$krel"
		exit 0
	fi
fi

mkdir -p "$cache"
rm -f "$cache/key"
src=$cache/src/linux-source-$series
obj=$cache/obj
if [ ! -f "$src/Makefile" ] ||
	[ "$(cat "$cache/src.stamp" 2> /dev/null)" != "$(stat -c '%s %Y' "$tarball")" ]; then
	say "unpacking $tarball"
	rm -rf "$cache/src" "$obj"
	mkdir -p "$cache/src"
	tar -xJf "$tarball" -C "$cache/src"
	stat -c '%s %Y' "$tarball" > "$cache/src.stamp"
fi

mk() { nice -n 19 make -C "$src" O="$obj" "$@"; }
mkdir -p "$obj"
say "configuring (x86_64_defconfig + kvm_guest.config + $(basename "$fragment"))"
mk -s x86_64_defconfig
(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
	"$src/kernel/configs/kvm_guest.config" "$fragment" > "$cache/merge.log")
mk -s olddefconfig
# Every option the fragment asks for must have survived olddefconfig:
# a silently dropped sanitizer would make a clean run mean nothing.
missing=0
while IFS= read -r line; do
	case "$line" in CONFIG_*=*) ;; *) continue ;; esac
	opt=${line%%=*} val=${line#*=}
	if [ "$val" = n ]; then
		grep -q "^$opt=" "$obj/.config" && { warn "$opt is set, wanted n"; missing=1; }
	else
		grep -qx -- "$line" "$obj/.config" || { warn "$line did not stick"; missing=1; }
	fi
done < "$fragment"
[ "$missing" = 0 ] || die "config fragment not satisfied (see $obj/.config)"

say "building (nice 19, $(nproc) jobs; tens of minutes on two cores; log: $cache/build.log)"
t0=$(now)
mk -j"$(nproc)" bzImage modules > "$cache/build.log" 2>&1 ||
	{ tail -n 30 "$cache/build.log" >&2; die "kernel build failed"; }
krel=$(mk -s kernelrelease)
say "built $krel in $(elapsed "$t0")s; installing"
mk -s INSTALL_MOD_PATH=/ modules_install > "$cache/install.log" 2>&1
install -m 644 "$obj/arch/x86/boot/bzImage" "/boot/vmlinuz-$krel"
ln -sfn "$obj" "/lib/modules/$krel/build"
echo "$krel" > "$cache/krel"
echo "$key" > "$cache/key"
installed "$krel" || die "install of $krel incomplete"
echo "$krel"
