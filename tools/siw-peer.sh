#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Prepare the pieces of the distro's kernel source the tests use, all under
# build/ (never committed):
#   build/siw/siw.ko        upstream siw, built out of tree: the iWARP test peer
#                           (Debian does not ship it)
#   build/ksrc/scripts/checkpatch.pl (+ spelling.txt, const_structs.checkpatch)
#   build/ksrc/tools/testing/selftests/kselftest{,_harness}.h
# Source: /usr/src/linux-source-X.Y.tar.xz from `make deps`. Cached: redone
# only when the tarball or the kernel changes. Prints the path of siw.ko.
# For a kernel other than the default one (KVER=, e.g. 6.12 for `make
# check-612`) only siw is built, in build/siw-KVER, from that kernel's
# linux-source-X.Y (SRDMA_KROOT/usr/src for an unpacked kernel); build/siw
# and build/ksrc stay the default kernel's. Exit status 2: no source for it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/lib.sh
. "$here/lib.sh"

kver=$(srdma_kver) || die "no kernel with headers; run 'make deps'"
series=$(echo "$kver" | cut -d. -f1,2)
tarball=${SRDMA_KROOT:-}/usr/src/linux-source-$series.tar.xz
[ -r "$tarball" ] || tarball=/usr/src/linux-source-$series.tar.xz
if [ ! -r "$tarball" ]; then
	echo "ERROR: $tarball missing; run 'make deps' (linux-source-$series)" >&2
	exit 2
fi
kdir=${SRDMA_KROOT:-}/lib/modules/$kver/build

siw=$SRDMA_REPO/build/siw
ksrc=$SRDMA_REPO/build/ksrc
if [ "$kver" != "$(KVER='' SRDMA_KROOT='' srdma_kver)" ]; then
	siw=$SRDMA_REPO/build/siw-$kver
	ksrc=$siw/ksrc
fi
key="$kver $(stat -c '%s %Y' "$tarball") $(sha256sum < "$0")"
if [ -f "$siw/siw.ko" ] && [ -f "$ksrc/scripts/checkpatch.pl" ] &&
	[ "$(cat "$siw/key" 2> /dev/null)" = "$key" ]; then
	echo "$siw/siw.ko"
	exit 0
fi

top=linux-source-$series
members=(
	"$top/drivers/infiniband/sw/siw"
	"$top/scripts/checkpatch.pl"
	"$top/scripts/spelling.txt"
	"$top/scripts/const_structs.checkpatch"
	"$top/tools/testing/selftests/kselftest.h"
	"$top/tools/testing/selftests/kselftest_harness.h"
)
say "extracting siw, checkpatch and kselftest headers from $tarball"
rm -rf "$siw" "$ksrc"
mkdir -p "$siw" "$ksrc"
tar -xJf "$tarball" -C "$ksrc" --strip-components=1 "${members[@]}"

# siw's own Makefile wants CONFIG_RDMA_SIW; a Kbuild file takes precedence.
mkdir -p "$siw/src"
cp "$ksrc"/drivers/infiniband/sw/siw/*.[ch] "$siw/src/"
rm -rf "$ksrc/drivers"
cat > "$siw/src/Kbuild" <<'KBUILD'
obj-m := siw.o
siw-y := $(patsubst $(src)/%.c,%.o,$(wildcard $(src)/*.c))
KBUILD

say "building siw.ko against $kdir"
make -s -C "$kdir" M="$siw/src" modules > "$siw/build.log" 2>&1 ||
	{ cat "$siw/build.log" >&2; die "siw build failed"; }
cp "$siw/src/siw.ko" "$siw/siw.ko"
echo "$key" > "$siw/key"
echo "$siw/siw.ko"
