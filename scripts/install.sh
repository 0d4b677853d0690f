#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Install what make built for ARCH, honouring DESTDIR and PREFIX:
#   install.sh user ARCH      libraries (static, and shared when built), headers,
#                             pkg-config file, tools, man pages; with
#                             INSTALL_LIBRKNNRT=1 also librknnrt.so (rknn.rst)
#   install.sh module ARCH    rkaccel.ko (what a board loads) and rkaccel_sim.ko
#                             (the simulated NPU) under /lib/modules/<kver>/updates
#   install.sh dkms           the module source under /usr/src for DKMS
#                             (kernel/ with sim/, uapi/drm/ and the register description
#                             in include/)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
destdir=${DESTDIR:-}
prefix=${PREFIX:-/usr/local}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
# The library's own version, from rkaccel.h: MAJOR.MINOR.PATCH.
lib_version=$(for f in MAJOR MINOR PATCH; do
	sed -n "s/^#define RKACCEL_LIB_VERSION_$f[[:space:]]*//p" "$top/lib/include/rkaccel.h"
done | paste -sd.)

pc_file() {
	cat <<-EOF
	prefix=$prefix
	libdir=\${prefix}/lib
	includedir=\${prefix}/include

	Name: rkaccel
	Description: Library for the rkaccel NPU driver (Rockchip RK3588/RK3576)
	Version: $lib_version
	Requires.private: libdrm
	Libs: -L\${libdir} -lrkaccel
	Libs.private: -lpthread -lm
	Cflags: -I\${includedir}
	EOF
}

# librkaccel-rknn.so.X.Y.Z with its links; with INSTALL_LIBRKNNRT=1 also
# librknnrt.so (soname librknnrt.so) for programs linked with -lrknnrt,
# never over a file or link of that name already there (a vendor's copy).
rknn_shared() {
	local out=$1 d=$2 v
	v=$(sed -n 's/^#define RKACCEL_RKNN_VERSION[[:space:]]*"\(.*\)"$/\1/p' \
		"$top/lib/include/rknn_api.h")
	[ -f "$out/lib/librkaccel-rknn.so.$v" ] || return 0
	install -D -m 0755 "$out/lib/librkaccel-rknn.so.$v" "$d/lib/librkaccel-rknn.so.$v"
	ln -sf "librkaccel-rknn.so.$v" "$d/lib/librkaccel-rknn.so.${v%%.*}"
	ln -sf "librkaccel-rknn.so.${v%%.*}" "$d/lib/librkaccel-rknn.so"
	[ "${INSTALL_LIBRKNNRT:-0}" = 1 ] || return 0
	if [ -e "$d/lib/librknnrt.so" ] || [ -L "$d/lib/librknnrt.so" ]; then
		echo "install.sh: $d/lib/librknnrt.so exists: left as it is" >&2
		return 0
	fi
	install -m 0755 "$out/lib/librknnrt.so" "$d/lib/librknnrt.so"
}

user() {
	local out=$build/$1 d=$destdir$prefix t
	install -D -m 0644 "$out/lib/librkaccel.a" "$d/lib/librkaccel.a"
	# the rknn_api.h layer: a static library of its own over librkaccel
	install -D -m 0644 "$out/lib/librkaccel-rknn.a" "$d/lib/librkaccel-rknn.a"
	install -D -m 0644 "$top/lib/include/rknn_api.h" "$d/include/rknn_api.h"
	rknn_shared "$out" "$d"
	# librkaccel.so.X.Y.Z, the soname link librkaccel.so.X and the link for -lrkaccel
	if [ -f "$out/lib/librkaccel.so.$lib_version" ]; then
		install -m 0755 "$out/lib/librkaccel.so.$lib_version" "$d/lib/"
		ln -sf "librkaccel.so.$lib_version" "$d/lib/librkaccel.so.${lib_version%%.*}"
		ln -sf "librkaccel.so.${lib_version%%.*}" "$d/lib/librkaccel.so"
	fi
	install -D -m 0644 "$top/lib/include/rkaccel.h" "$d/include/rkaccel.h"
	install -D -m 0644 "$top/uapi/drm/rkaccel_drm.h" "$d/include/drm/rkaccel_drm.h"
	mkdir -p "$d/lib/pkgconfig"
	pc_file > "$d/lib/pkgconfig/rkaccel.pc"
	chmod 0644 "$d/lib/pkgconfig/rkaccel.pc"
	for t in "$out"/bin/*; do
		install -D -m 0755 "$t" "$d/bin/$(basename "$t")"
	done
	for t in "$top"/Documentation/man/*.[0-9]; do
		install -D -m 0644 "$t" "$d/share/man/man${t##*.}/$(basename "$t")"
	done
}

module() {
	local kver ko
	kver=$(cat "$build/kernel-pkgs/.version")-$1
	for ko in rkaccel rkaccel_sim; do
		install -D -m 0644 "$build/$1/kernel/$ko.ko" \
			"$destdir/lib/modules/$kver/updates/$ko.ko"
	done
}

dkms() {
	local d=$destdir/usr/src/rkaccel-$version f
	install -D -m 0644 "$top/dkms.conf" "$d/dkms.conf"
	for f in "$top"/kernel/Makefile "$top"/kernel/Kbuild "$top"/kernel/*.[ch] \
		 "$top"/kernel/sim/Kbuild "$top"/kernel/sim/*.[ch] "$top"/uapi/drm/*.h \
		 "$top"/include/*.h; do
		install -D -m 0644 "$f" "$d/${f#"$top"/}"
	done
}

case "${1:-}" in
user | module) "$1" "${2:?arch}" ;;
dkms) dkms ;;
*) echo "usage: $0 user ARCH | module ARCH | dkms" >&2; exit 2 ;;
esac
