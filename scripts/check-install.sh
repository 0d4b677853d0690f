#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Install checks, after make all:
#   check-install.sh files    install (user, module, dkms) into a temporary
#                             DESTDIR with PREFIX=/usr, compare the file list
#   check-install.sh dkms     build the installed DKMS source tree the way
#                             dkms.conf does, against the arm64 headers
#   check-install.sh shared   the installed librkaccel.so: soname, links, the
#                             exported symbols exactly rkaccel.h's functions
#                             (and the version script's), versioned; a program
#                             built with pkg-config runs on it; librkaccel.a's
#                             globals are the same list, so a static program
#                             may use the library's internal names itself
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
kver=$(cat "$build/kernel-pkgs/.version")
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
lib_version=$(for f in MAJOR MINOR PATCH; do
	sed -n "s/^#define RKACCEL_LIB_VERSION_$f[[:space:]]*//p" "$top/lib/include/rkaccel.h"
done | paste -sd.)
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
	echo "lib/modules/$kver-amd64/updates/rkaccel_sim.ko"
	for f in "$top"/tools/*.c; do
		f=$(basename "$f" .c)
		echo "usr/bin/$f"
	done
	for f in "$top"/Documentation/man/*.[0-9]; do
		echo "usr/share/man/man${f##*.}/$(basename "$f")"
	done
	echo usr/include/drm/rkaccel_drm.h
	echo usr/include/rkaccel.h
	echo usr/include/rknn_api.h
	echo usr/lib/librkaccel.a
	echo usr/lib/librkaccel-rknn.a
	echo "usr/lib/librkaccel.so.$lib_version"
	echo usr/lib/pkgconfig/rkaccel.pc
	(cd "$top" && ls dkms.conf kernel/Makefile kernel/Kbuild kernel/*.[ch] \
		kernel/sim/Kbuild kernel/sim/*.[ch] uapi/drm/*.h include/*.h) |
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
	grep -qx "Version: $lib_version" "$tmp/usr/lib/pkgconfig/rkaccel.pc"
	[ "$(readlink "$tmp/usr/lib/librkaccel.so.${lib_version%%.*}")" = \
	  "librkaccel.so.$lib_version" ]
	[ "$(readlink "$tmp/usr/lib/librkaccel.so")" = "librkaccel.so.${lib_version%%.*}" ]
	echo "$(expected | wc -l) files installed as expected, and the library's links"
}

# What dkms runs: MAKE[0] of dkms.conf, in the installed source tree.
dkms() {
	local src=$tmp/usr/src/rkaccel-$version log ko
	local kdir=$build/kernel-pkgs/arm64/usr/src/linux-headers-$kver-arm64
	DESTDIR=$tmp "$top/scripts/install.sh" dkms
	log=$(make -s -C "$src/kernel" KDIR="$kdir" ARCH=arm64 \
		CROSS_COMPILE=aarch64-linux-gnu- modules 2>&1)
	echo "$log"
	! grep -q 'warning:\|error:' <<<"$log"
	# dkms.conf names every module the build makes, where it makes it
	diff <(cd "$src" && find kernel -name '*.ko' | sort) \
		<(paste -d '' \
		  <(sed -n 's/^BUILT_MODULE_LOCATION\[[0-9]*\]="\(.*\)"$/\1/p' "$top/dkms.conf") \
		  <(sed -n 's/^BUILT_MODULE_NAME\[[0-9]*\]="\(.*\)"$/\1.ko/p' "$top/dkms.conf") | sort)
	for ko in kernel/rkaccel.ko kernel/sim/rkaccel_sim.ko; do
		modinfo -F vermagic "$src/$ko" | grep -q "^$kver-arm64 SMP"
	done
	echo "built $(modinfo -F vermagic "$src/kernel/rkaccel.ko")"
}

# The functions rkaccel.h declares (a prototype starts in column 0).
header_syms() {
	grep -oE '^[a-z][a-z0-9_ *]*[ *]rkaccel_[a-z0-9_]+\(' "$top/lib/include/rkaccel.h" |
		sed -E 's/.*[ *](rkaccel_[a-z0-9_]+)\($/\1/' | sort
}

shared() {
	local lib=$tmp/usr/lib major=${lib_version%%.*} so bad
	so=$lib/librkaccel.so.$lib_version
	DESTDIR=$tmp PREFIX=/usr "$top/scripts/install.sh" user amd64
	readelf -d "$so" | grep -q "(SONAME).*\[librkaccel.so.$major\]" ||
		{ echo "no soname librkaccel.so.$major"; return 1; }
	readelf -d "$so" | grep -q "(NEEDED).*\[libdrm.so.2\]" ||
		{ echo "libdrm.so.2 not needed"; return 1; }
	header_syms > "$tmp/header"
	sed -n 's/^[[:space:]]*\(rkaccel_[a-z0-9_]*\);$/\1/p' "$top/lib/librkaccel.map" |
		sort > "$tmp/map"
	nm -D --defined-only "$so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
		sort > "$tmp/exported"
	diff -u --label rkaccel.h --label librkaccel.map "$tmp/header" "$tmp/map" || return 1
	diff -u --label rkaccel.h --label exported "$tmp/header" "$tmp/exported" || return 1
	bad=$(nm -D --defined-only "$so" | awk '$2 != "A" && $3 !~ /@@LIBRKACCEL_1\.[0-9]+$/')
	[ -z "$bad" ] || { echo "unversioned: $bad"; return 1; }

	cat > "$tmp/v.c" <<-'EOF'
	#include <stdio.h>
	#include <stdlib.h>
	#include <rkaccel.h>

	int main(void)
	{
		static const uint32_t f[] = { 8, 4 };
		struct rkaccel_model *m, *back;
		uint32_t v = rkaccel_lib_version();
		char msg[128];
		size_t len;
		void *buf;

		if (v != RKACCEL_LIB_VERSION)
			return 1;
		if (rkaccel_model_random(7, 2, 1, f, 0, &m) ||
		    rkaccel_model_serialize(rkaccel_model_desc(m), &buf, &len) ||
		    rkaccel_model_parse(buf, len, &back, msg, sizeof(msg)))
			return 1;
		printf("%u.%u.%u\n", v >> 16, (v >> 8) & 0xff, v & 0xff);
		free(buf);
		rkaccel_model_free(back);
		rkaccel_model_free(m);
		return 0;
	}
	EOF
	export PKG_CONFIG_SYSROOT_DIR=$tmp PKG_CONFIG_PATH=$lib/pkgconfig
	# shellcheck disable=SC2046
	gcc -std=c11 -Wall -Werror -o "$tmp/v" "$tmp/v.c" $(pkg-config --cflags --libs rkaccel)
	readelf -d "$tmp/v" | grep -q "(NEEDED).*\[librkaccel.so.$major\]" ||
		{ echo "the program does not link librkaccel.so.$major"; return 1; }
	[ "$(LD_LIBRARY_PATH=$lib "$tmp/v")" = "$lib_version" ] ||
		{ echo "the program did not run on librkaccel $lib_version"; return 1; }
	echo "librkaccel.so.$lib_version: soname librkaccel.so.$major," \
		"$(wc -l < "$tmp/exported") symbols exported, all of rkaccel.h, all versioned;" \
		"a pkg-config build runs on it"
	static_globals || return 1
}

# librkaccel.a: its globals are rkaccel.h's functions alone, so a static
# program with its own helpers of the library's internal names links.
static_globals() {
	local a=$tmp/usr/lib/librkaccel.a
	nm -g --defined-only "$a" | awk 'NF == 3 { print $3 }' | sort > "$tmp/static"
	diff -u --label rkaccel.h --label librkaccel.a "$tmp/header" "$tmp/static" || return 1
	cat > "$tmp/s.c" <<-'EOF'
	#include <rkaccel.h>

	/* names the library uses inside: a program's own, not a clash */
	unsigned int isqrt(unsigned int x) { return x; }
	void prog_put(void) { }
	int model_copy;

	int main(void)
	{
		static const uint32_t f[] = { 8, 4 };
		struct rkaccel_model *m;

		if (rkaccel_model_random(7, 2, 1, f, 0, &m))
			return 1;
		rkaccel_model_free(m);
		rkaccel_program_free(NULL);
		return isqrt(0) + model_copy;
	}
	EOF
	# shellcheck disable=SC2046
	gcc -std=c11 -Wall -Werror -static -o "$tmp/s" "$tmp/s.c" -I"$tmp/usr/include" "$a" \
		$(pkg-config --libs --static libdrm) -lpthread -lm ||
		{ echo "a static program with its own isqrt/prog_put/model_copy does not link"; return 1; }
	"$tmp/s" || { echo "the static program did not run"; return 1; }
	echo "librkaccel.a: $(wc -l < "$tmp/static") globals, all of rkaccel.h;" \
		"a static program with the library's internal names links"
}

case "${1:-}" in
files | dkms | shared) "$1" ;;
*) echo "usage: $0 files|dkms|shared" >&2; exit 2 ;;
esac
