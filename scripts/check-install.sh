#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Install checks, after make all:
#   check-install.sh files    install (user, module, dkms) into a temporary
#                             DESTDIR with PREFIX=/usr, compare the file list
#   check-install.sh dkms     build the installed DKMS source tree the way
#                             dkms.conf does, against the arm64 headers
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
kver=$(cat "$build/kernel-pkgs/.version")
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

install_all() {
	DESTDIR=$tmp PREFIX=/usr "$top/scripts/install.sh" user amd64
	DESTDIR=$tmp PREFIX=/usr "$top/scripts/install.sh" module amd64
	DESTDIR=$tmp "$top/scripts/install.sh" dkms
}

expected() {
	local f
	echo "lib/modules/$kver-amd64/updates/rkaccel.ko"
	for f in "$top"/tools/*.c; do
		f=$(basename "$f" .c)
		echo "usr/bin/$f"
	done
	for f in "$top"/Documentation/man/*.[0-9]; do
		echo "usr/share/man/man${f##*.}/$(basename "$f")"
	done
	echo usr/include/drm/rkaccel_drm.h
	echo usr/include/rkaccel.h
	echo usr/lib/librkaccel.a
	echo usr/lib/pkgconfig/rkaccel.pc
	(cd "$top" && ls dkms.conf kernel/Makefile kernel/Kbuild kernel/*.[ch] uapi/drm/*.h) |
		sed "s|^|usr/src/rkaccel-$version/|"
}

# dkms.conf carries the driver's version.
driver_version() {
	local h=$top/kernel/rkaccel_device.h f
	for f in MAJOR MINOR PATCH; do
		sed -n "s/^#define RKACCEL_VERSION_$f[[:space:]]*//p" "$h"
	done | paste -sd.
}

files() {
	[ "$(driver_version)" = "$version" ] ||
		{ echo "dkms.conf $version, driver $(driver_version)"; return 1; }
	install_all
	diff -u <(expected | sort) <(cd "$tmp" && find . -type f | sed 's|^\./||' | sort)
	grep -qx 'prefix=/usr' "$tmp/usr/lib/pkgconfig/rkaccel.pc"
	grep -qx "Version: $version" "$tmp/usr/lib/pkgconfig/rkaccel.pc"
	echo "$(expected | wc -l) files installed as expected"
}

# What dkms runs: MAKE[0] of dkms.conf, in the installed source tree.
dkms() {
	local src=$tmp/usr/src/rkaccel-$version log
	local kdir=$build/kernel-pkgs/arm64/usr/src/linux-headers-$kver-arm64
	DESTDIR=$tmp "$top/scripts/install.sh" dkms
	log=$(make -s -C "$src/kernel" KDIR="$kdir" ARCH=arm64 \
		CROSS_COMPILE=aarch64-linux-gnu- modules 2>&1)
	echo "$log"
	! grep -q 'warning:\|error:' <<<"$log"
	modinfo -F vermagic "$src/kernel/rkaccel.ko" | grep -q "^$kver-arm64 SMP"
	echo "built $(modinfo -F vermagic "$src/kernel/rkaccel.ko")"
}

case "${1:-}" in
files | dkms) "$1" ;;
*) echo "usage: $0 files|dkms" >&2; exit 2 ;;
esac
