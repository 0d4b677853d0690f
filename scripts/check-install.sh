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
rknn_version=$(sed -n 's/^#define RKACCEL_RKNN_VERSION[[:space:]]*"\(.*\)"$/\1/p' \
	"$top/lib/include/rknn_api.h")
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
	echo "usr/lib/librkaccel-rknn.so.$rknn_version"
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
	rknn_shared || return 1
}

# The functions rknn_api.h declares: the SDK's names.
rknn_header_syms() {
	grep -oE '^[a-z][a-z_ *]*[ *]rknn_[a-z0-9_]+\(' "$top/lib/include/rknn_api.h" |
		sed -E 's/.*[ *](rknn_[a-z0-9_]+)\($/\1/' | sort
}

# librkaccel-rknn.so and librknnrt.so export exactly rknn_api.h's
# functions; librknnrt.so is installed on request only, never over an
# existing file; a program linked with -lrknnrt needs librknnrt.so and runs
# on the installed copy (no device needed for the refusals it calls).
rknn_shared() {
	local lib=$tmp/usr/lib so f ret
	rknn_header_syms > "$tmp/rknn_header"
	[ "$(wc -l < "$tmp/rknn_header")" = 23 ] ||
		{ echo "rknn_api.h declares $(wc -l < "$tmp/rknn_header") functions, not 23"; return 1; }
	[ ! -e "$lib/librknnrt.so" ] || { echo "librknnrt.so installed unasked"; return 1; }
	DESTDIR=$tmp PREFIX=/usr INSTALL_LIBRKNNRT=1 "$top/scripts/install.sh" user amd64
	for f in "librkaccel-rknn.so.$rknn_version:librkaccel-rknn.so.${rknn_version%%.*}" \
		 "librknnrt.so:librknnrt.so"; do
		so=$lib/${f%%:*}
		readelf -d "$so" | grep -q "(SONAME).*\[${f#*:}\]" ||
			{ echo "$so: no soname ${f#*:}"; return 1; }
		nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sort > "$tmp/rknn_exp"
		diff -u --label rknn_api.h --label "${f%%:*}" "$tmp/rknn_header" "$tmp/rknn_exp" ||
			return 1
	done
	nm -g --defined-only "$lib/librkaccel-rknn.a" | awk 'NF == 3 { print $3 }' | sort |
		diff -u --label rknn_api.h --label librkaccel-rknn.a "$tmp/rknn_header" - || return 1
	echo vendor > "$tmp/vendor"
	cp "$tmp/vendor" "$lib/librknnrt.so"
	DESTDIR=$tmp PREFIX=/usr INSTALL_LIBRKNNRT=1 "$top/scripts/install.sh" user amd64 2>/dev/null
	cmp -s "$tmp/vendor" "$lib/librknnrt.so" || { echo "librknnrt.so overwritten"; return 1; }
	rm "$lib/librknnrt.so"
	DESTDIR=$tmp PREFIX=/usr INSTALL_LIBRKNNRT=1 "$top/scripts/install.sh" user amd64
	cat > "$tmp/r.c" <<-'EOF'
	#include <stdio.h>
	#include <rknn_api.h>

	int main(void)
	{
		rknn_context ctx = 0;
		int ret = rknn_init(&ctx, "/nonexistent.rkml", 0, 0, NULL);

		printf("%d %s\n", ret, get_type_string(RKNN_TENSOR_INT8));
		return rknn_create_mem_from_phys(0, 0, NULL, 64) != NULL;
	}
	EOF
	gcc -std=c11 -Wall -Werror -o "$tmp/r" "$tmp/r.c" -I"$tmp/usr/include" -L"$lib" \
		-Wl,-rpath-link,"$lib" -lrknnrt
	readelf -d "$tmp/r" | grep -q "(NEEDED).*\[librknnrt.so\]" ||
		{ echo "the program does not need librknnrt.so"; return 1; }
	[ "$(LD_LIBRARY_PATH=$lib "$tmp/r" 2>/dev/null)" = "-6 INT8" ] ||
		{ echo "the -lrknnrt program did not run on librknnrt.so"; return 1; }
	# A program in the shape of the SDK's examples, built from outside the
	# tree as a board user builds one: the installed header, -lrknnrt.
	mkdir -p "$tmp/ext"
	cp "$top/selftests/rknn_sdk_example.c" "$tmp/ext/main.c"
	(cd "$tmp/ext" && gcc -std=c11 -Wall -Wextra -Werror -o example main.c \
		-I"$tmp/usr/include" -L"$lib" -Wl,-rpath-link,"$lib" -lrknnrt -lpthread) ||
		{ echo "the SDK-shaped example does not build against the installed header"; return 1; }
	LD_LIBRARY_PATH=$lib "$tmp/ext/example" >/dev/null 2>&1; ret=$?
	[ "$ret" = 2 ] || { echo "the example built outside the tree: exit $ret, not its usage's 2"; return 1; }
	echo "librkaccel-rknn.so.$rknn_version and librknnrt.so: 23 functions of rknn_api.h" \
		"exported, sonames right; librknnrt.so only on request, not over a vendor's;" \
		"a -lrknnrt program runs on it; selftests/rknn_sdk_example.c builds outside the tree"
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
