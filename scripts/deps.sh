#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install the host packages rkaccel builds with and fetch Debian's Linux 6.12
# (+deb12) kernel packages for amd64 and arm64 into a cache under build/.
# Kernel packages go through a private apt configuration and are unpacked with
# dpkg -x: nothing of them is installed system-wide. A second run downloads
# nothing: the resolved version and the .debs are kept in build/cache.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
cache=$build/cache
apt_root=$cache/apt
debs=$cache/debs
kroot=$build/kernel-pkgs
stamp=$build/.deps-done

host_pkgs=(qemu-system-x86 qemu-system-arm busybox-static cpio kmod xz-utils
	   gcc gcc-aarch64-linux-gnu libc6-dev-arm64-cross libdrm-dev sparse
	   make bc flex bison libelf-dev libssl-dev dwarves rsync perl python3
	   device-tree-compiler dt-schema groff-base python3-numpy protobuf-c-compiler libprotobuf-c-dev libonnx-dev python3-torch python3-onnx python3-sklearn
	   python3-torchvision python3-skimage)

log() { printf 'deps: %s\n' "$*" >&2; }

install_host_pkgs() {
	local missing=() p
	for p in "${host_pkgs[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing host packages: ${missing[*]}"
	[ "$(id -u)" -eq 0 ] || { log "need root for apt-get"; exit 1; }
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# A private apt tree that knows amd64 and arm64 and the host's Debian sources.
setup_private_apt() {
	mkdir -p "$apt_root"/{etc/apt.conf.d,etc/sources.list.d,etc/preferences.d,lists/partial,archives/partial,state}
	: > "$apt_root/state/status"
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		grep -q 'debian-security\|bookworm-security' "$f" || continue
		cp "$f" "$apt_root/etc/sources.list.d/"
	done
	ls "$apt_root"/etc/sources.list.d/* >/dev/null 2>&1 ||
		{ log "no Debian bookworm sources with -security found in /etc/apt"; exit 1; }
	cat > "$apt_root/apt.conf" <<-EOF
	APT::Architectures { "amd64"; "arm64"; };
	APT::Architecture "amd64";
	Dir::Etc "$apt_root/etc";
	Dir::Etc::sourcelist "/dev/null";
	Dir::Etc::sourceparts "$apt_root/etc/sources.list.d";
	Dir::Etc::preferencesparts "$apt_root/etc/preferences.d";
	Dir::Etc::trusted "/etc/apt/trusted.gpg";
	Dir::Etc::trustedparts "/etc/apt/trusted.gpg.d";
	Dir::State "$apt_root/state";
	Dir::State::Lists "$apt_root/lists";
	Dir::State::status "$apt_root/state/status";
	Dir::Cache "$apt_root";
	Dir::Cache::archives "$apt_root/archives";
	APT::Sandbox::User "root";
	EOF
	export APT_CONFIG=$apt_root/apt.conf
	apt-get update -qq
}

# Newest 6.12.N+deb12 that has an unsigned image for both arches.
resolve_version() {
	local a b
	a=$(apt-cache pkgnames linux-image-6.12. | sed -n 's/^linux-image-\(6\.12\.[0-9]*+deb12\)-amd64-unsigned$/\1/p' | sort -u)
	b=$(apt-cache pkgnames linux-image-6.12. | sed -n 's/^linux-image-\(6\.12\.[0-9]*+deb12\)-arm64-unsigned$/\1/p' | sort -u)
	comm -12 <(echo "$a") <(echo "$b") | sort -V | tail -n 1
}

download() {
	local dir=$1; shift
	mkdir -p "$dir"
	(cd "$dir" && apt-get download -qq "$@")
}

fetch_kernel() {
	local v=$1 dir=$debs/$v
	[ -f "$dir/.complete" ] && return 0
	log "downloading Linux $v for amd64 and arm64"
	rm -rf "$dir"
	download "$dir" "linux-image-$v-amd64-unsigned" "linux-headers-$v-amd64" \
		"linux-headers-$v-common" "linux-kbuild-$v" \
		"linux-image-$v-arm64-unsigned:arm64" "linux-headers-$v-arm64:arm64" \
		linux-source-6.12 busybox-static:arm64 libdrm-dev:arm64
	touch "$dir/.complete"
}

# Unpack into build/kernel-pkgs/<arch> and fix the absolute paths Debian uses.
extract_kernel() {
	local v=$1 dir=$debs/$v arch deb
	[ -f "$kroot/.version" ] && [ "$(cat "$kroot/.version")" = "$v" ] && return 0
	log "extracting Linux $v"
	rm -rf "$kroot"
	mkdir -p "$kroot/amd64" "$kroot/arm64" "$kroot/src"
	for deb in "$dir"/*.deb; do
		case "$deb" in
		*linux-source-*) dpkg -x "$deb" "$kroot/src" ;;
		*_arm64.deb) dpkg -x "$deb" "$kroot/arm64" ;;
		*linux-headers-*-common*) dpkg -x "$deb" "$kroot/amd64"; dpkg -x "$deb" "$kroot/arm64" ;;
		*linux-kbuild-*) dpkg -x "$deb" "$kroot/amd64"; dpkg -x "$deb" "$kroot/arm64" ;;
		*) dpkg -x "$deb" "$kroot/amd64" ;;
		esac
	done
	for arch in amd64 arm64; do
		fix_headers "$kroot/$arch" "$v" "$arch"
	done
	extract_source_parts
	echo "$v" > "$kroot/.version"
}

fix_headers() {
	local root=$1 v=$2 arch=$3 hdr l t
	hdr=$root/usr/src/linux-headers-$v-$arch
	# Makefile includes the -common tree by absolute path.
	sed -i "s|/usr/src/linux-headers-$v-common|$root/usr/src/linux-headers-$v-common|g" "$hdr/Makefile"
	# scripts/ and tools/ are absolute symlinks into linux-kbuild (amd64 host tools).
	find "$root/usr/src" -type l | while read -r l; do
		t=$(readlink "$l")
		case "$t" in /*) ln -sfn "$kroot/amd64$t" "$l" ;; esac
	done
}

# The kselftest harness, checkpatch and kernel-doc come from linux-source.
extract_source_parts() {
	local tarball out=$kroot/src/tree
	tarball=$(ls "$kroot"/src/usr/src/linux-source-6.12.tar.* | head -n 1)
	mkdir -p "$out"
	tar -xf "$tarball" -C "$out" --strip-components=1 --wildcards \
		'*/tools/testing/selftests/kselftest_harness.h' \
		'*/tools/testing/selftests/kselftest.h' \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch' \
		'*/scripts/kernel-doc'
	rm -f "$tarball"
}

main() {
	# Cheap when nothing is missing; runs even with the stamp so that a
	# package added to host_pkgs reaches machines that fetched before.
	install_host_pkgs
	if [ -f "$stamp" ] && [ -f "$kroot/.version" ]; then
		return 0
	fi
	setup_private_apt
	local v
	v=$(resolve_version)
	[ -n "$v" ] || { log "no linux-image-6.12.*+deb12 for both amd64 and arm64"; exit 1; }
	log "kernel version: $v"
	fetch_kernel "$v"
	extract_kernel "$v"
	touch "$stamp"
}

main "$@"
