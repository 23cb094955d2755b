# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Host-side helpers shared by tools/*.sh. Source it; it defines functions only
# (plus SRDMA_REPO), so sourcing never has side effects on the caller's shell.

# Repository root: the directory above tools/, wherever the clone lives.
# shellcheck disable=SC2034 # used by the scripts that source this
SRDMA_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# The kernel the VMs boot and srdma.ko is built for. Never hard-coded: the
# newest version under /lib/modules that has both a build dir (headers) and a
# matching /boot/vmlinuz, since the host kernel itself (no module support) is
# not usable. KVER in the environment overrides, like the top-level Makefile.
# The debug kernel (`make debug-kernel`, release ending in -srdma-debug) is
# booted only when asked for by KVER.
srdma_kver() {
	if [ -n "${KVER:-}" ]; then
		echo "$KVER"
		return 0
	fi
	local v best=
	while read -r v; do
		case "$v" in "" | *-srdma-debug) continue ;; esac
		[ -d "/lib/modules/$v/build" ] && [ -r "/boot/vmlinuz-$v" ] && best=$v
	done < <(find /lib/modules -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -V)
	[ -n "$best" ] || return 1
	echo "$best"
}

# Seconds since the epoch with a fraction, for timing reports.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
