#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Build rkaccel.ko (the driver, kernel/) and rkaccel_sim.ko (simulated NPU,
# kernel/sim/) for ARCH against the extracted Debian headers, out of the
# source tree (build/ARCH/src), at W=1. Any compiler warning fails. Both
# modules land flat in build/ARCH/kernel/, where the guests take them.
# usage: build-module.sh ARCH [KDIR=dir] [make arguments, e.g. C=2]
#   KDIR=dir builds against that kernel build tree (the debug kernel of
#   scripts/debug-kernel.sh) into build/ARCH-debug instead.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
arch=$1; shift
kroot=$build/kernel-pkgs
kver=$(cat "$kroot/.version")
kdir=$kroot/$arch/usr/src/linux-headers-$kver-$arch
dest=$build/$arch
case "${1:-}" in
KDIR=*) kdir=${1#KDIR=} dest=$build/$arch-debug; shift ;;
esac
src=$dest/src
log=$dest/module${1:+-$*}.log

case "$arch" in
amd64) cross=() ;;
arm64) cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-) ;;
*) echo "build-module: unknown arch $arch" >&2; exit 2 ;;
esac

mkdir -p "$src" "$dest/kernel"
rsync -a --delete --exclude='*.o' --exclude='*.ko' "$top/kernel" "$top/uapi" "$top/include" "$src/"
rsync -a --delete --exclude='*.o' --exclude='*.ko' "$top/selftests/modules/" "$src/test-modules/"
{
	make -s -C "$kdir" M="$src/kernel" "${cross[@]}" W=1 "$@" modules
	# the guests' test modules (never installed)
	make -s -C "$kdir" M="$src/test-modules" "${cross[@]}" W=1 "$@" modules
} 2>&1 | tee "$log"
if grep -q 'warning:\|error:' "$log"; then
	echo "build-module: $arch: warnings or errors (see $log)" >&2
	exit 1
fi
# Renamed into place: a guest of make check's other lane may be copying
# the modules into its initramfs right now (scripts/check.sh).
for ko in "$src/kernel/rkaccel.ko" "$src/kernel/sim/rkaccel_sim.ko" "$src/test-modules/"*.ko; do
	cp "$ko" "$dest/kernel/.$(basename "$ko").tmp"
	mv -f "$dest/kernel/.$(basename "$ko").tmp" "$dest/kernel/$(basename "$ko")"
done
