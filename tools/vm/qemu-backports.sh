#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A newer qemu for the VMs, beside the distro's, without installing it:
# Debian 12's qemu 7.2 offers its guests no UDP segmentation offload
# (USO), which bookworm-backports' qemu (10.0) does, on the TAP wire
# (tools/vm/tap-wire.sh) with a 6.12 guest. Downloads bookworm-backports'
# qemu-system-x86 packages once, unpacks them under
# ~/.cache/srdma/qemu-backports and prints a wrapper to run them with:
#
#   VM_QEMU=$(tools/vm/qemu-backports.sh) VM_WIRE=tap KVER=6.12... tools/vm/run.sh ...
#
# Needs network access and apt (not root). The distro's qemu stays the
# one `make deps` installs and every test uses.
set -euo pipefail
cache=${XDG_CACHE_HOME:-$HOME/.cache}/srdma/qemu-backports
wrapper=$cache/qemu-system-x86_64
if [ -x "$wrapper" ]; then
	echo "$wrapper"
	exit 0
fi
rm -rf "$cache"
mkdir -p "$cache/lists/partial" "$cache/debs"
echo "deb http://deb.debian.org/debian bookworm-backports main" > "$cache/sources.list"
apt_opts=(-q -o "Dir::Etc::sourcelist=$cache/sources.list" -o Dir::Etc::sourceparts=-
	-o "Dir::State::Lists=$cache/lists" -o APT::Sandbox::User=root)
timeout 300 apt-get "${apt_opts[@]}" update >&2
(cd "$cache/debs" && timeout 300 apt-get "${apt_opts[@]}" download \
	qemu-system-x86 qemu-system-common qemu-system-data >&2)
for d in "$cache"/debs/*.deb; do
	dpkg -x "$d" "$cache/root"
done
# Its firmware first, the distro's (SeaBIOS, option ROMs) after.
cat > "$wrapper" <<WRAP
#!/bin/sh
exec "$cache/root/usr/bin/qemu-system-x86_64" -L "$cache/root/usr/share/qemu" \\
	-L /usr/share/qemu -L /usr/share/seabios "\$@"
WRAP
chmod +x "$wrapper"
"$wrapper" --version | head -n 1 >&2
echo "$wrapper"
