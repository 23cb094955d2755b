#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/kroot.sh SERIES [DIR]: unpack Debian's kernel SERIES (e.g. 6.12:
# linux-image-6.12-amd64, linux-headers-6.12-amd64 and what they depend on,
# linux-source-6.12) into DIR without installing anything, and print the
# kernel release. Nothing on the machine changes: builds, `make check` and
# other users keep the installed kernels. Then
#
#   SRDMA_KROOT=DIR make check-612      (or KVER=REL SRDMA_KROOT=DIR make)
#
# builds against DIR's headers and boots DIR's kernel in the VMs, which bind
# DIR/lib/modules/REL over their /lib/modules/REL (tools/lib.sh).
# DIR defaults to ~/.cache/srdma/kroot-SERIES; a second run reuses what is
# there. The headers need pahole (Debian's linux-kbuild depends on it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/lib.sh
. "$here/lib.sh"

series=${1:-}
[[ "$series" =~ ^[0-9]+\.[0-9]+$ ]] || die "usage: $0 SERIES [DIR] (e.g. 6.12)"
dir=$(realpath -m "${2:-$HOME/.cache/srdma/kroot-$series}")
command -v pahole > /dev/null || warn "pahole missing: modules will not link against these headers (apt-get install dwarves)"

# The versioned package one of Debian's metapackages depends on.
dep_of() {
	apt-cache show "$1" 2> /dev/null | sed -n 's/^Depends: //p' | head -n 1 |
		tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -m 1 -- "$2" ||
		die "apt knows no $1 (apt-get update? bookworm-security in sources?)"
}
image=$(dep_of "linux-image-$series-amd64" '^linux-image-')
headers=$(dep_of "linux-headers-$series-amd64" '^linux-headers-')
krel=${image#linux-image-}
common=$(dep_of "$headers" -common)
kbuild=$(dep_of "$headers" '^linux-kbuild-')

if [ -r "$dir/.krel" ] && [ "$(cat "$dir/.krel")" = "$krel" ]; then
	say "$krel already unpacked in $dir"
	echo "$krel"
	exit 0
fi

debs=$dir/debs
mkdir -p "$debs"
say "downloading $image $headers $common $kbuild linux-source-$series"
(cd "$debs" && apt-get download -q "$image" "$headers" "$common" "$kbuild" "linux-source-$series")
for d in "$debs"/*.deb; do
	dpkg-deb -x "$d" "$dir"
done

# The packages assume they live at /: repoint what names absolute paths.
hdr=$dir/usr/src/$headers
sed -i "s|^include /usr/src/|include $dir/usr/src/|" "$hdr/Makefile"
ln -sfn "../../../usr/src/$headers" "$dir/lib/modules/$krel/build"
ln -sfn "../../../usr/src/$common" "$dir/lib/modules/$krel/source"
# What installing would have done: the module index modprobe reads.
depmod -b "$dir" "$krel"
rm -rf "$debs"
echo "$krel" > "$dir/.krel"
say "unpacked $krel into $dir"
echo "$krel"
