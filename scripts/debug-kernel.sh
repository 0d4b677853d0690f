#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build (once) the debug kernel of make check for ARCH from Debian's
# linux-source-6.12 of the same version as the stock guest kernel, with
# allnoconfig plus scripts/debug-kernel/{common,ARCH}.config, and print the
# build directory. The build lives outside the checkout, under
# ${RKACCEL_CACHE:-${XDG_CACHE_HOME:-~/.cache}/rkaccel}, keyed by kernel
# version and a hash of the fragments, this script and the compiler, so a
# second run on the same machine builds nothing.
#
# usage: debug-kernel.sh ARCH          ARCH = amd64 | arm64
# The directory holds the image (boot-image), the kbuild tree for M= module
# builds (Module.symvers, .config) and build.log.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
arch=$1
v=$(cat "$build/kernel-pkgs/.version")
cache=${RKACCEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rkaccel}
frags=("$top/scripts/debug-kernel/common.config" "$top/scripts/debug-kernel/$arch.config")

case "$arch" in
amd64) kmake=(ARCH=x86_64) cc=gcc image=arch/x86/boot/bzImage target=bzImage ;;
arm64) kmake=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-) cc=aarch64-linux-gnu-gcc
       image=arch/arm64/boot/Image target=Image ;;
*) echo "debug-kernel: unknown arch $arch" >&2; exit 2 ;;
esac

log() { printf 'debug-kernel: %s\n' "$*" >&2; }

key=$(cat "${frags[@]}" "$0" <("$cc" --version) | sha256sum | cut -c1-12)
src=$cache/src/linux-$v
out=$cache/debug-kernel/$v-$arch-$key

# One source tree per version, shared by both arches (O= builds keep it clean).
unpack_source() {
	local deb tmp
	[ -f "$src/.complete" ] && return 0
	deb=$(ls "$build"/cache/debs/"$v"/linux-source-6.12_*.deb)
	log "unpacking $(basename "$deb")"
	rm -rf "$src" "$src.tmp"
	tmp=$src.tmp
	mkdir -p "$tmp/deb" "$src"
	dpkg -x "$deb" "$tmp/deb"
	tar -xJf "$tmp"/deb/usr/src/linux-source-6.12.tar.xz -C "$src" --strip-components=1
	rm -rf "$tmp"
	touch "$src/.complete"
}

# Every line of the fragments must survive olddefconfig: a dropped one is an
# unmet dependency, and a checker silently missing is worse than a failure.
verify_config() {
	local f line sym val missing=0
	for f in "${frags[@]}"; do
		while IFS= read -r line; do
			case "$line" in CONFIG_*=*) ;; *) continue ;; esac
			sym=${line%%=*} val=${line#*=}
			if [ "$val" = n ]; then
				grep -q "^$sym=" "$out/.config" || continue
			else
				grep -qx "$sym=$val" "$out/.config" && continue
			fi
			log "$line did not survive olddefconfig"
			missing=1
		done < "$f"
	done
	return "$missing"
}

configure() {
	make -s -C "$src" O="$out" "${kmake[@]}" allnoconfig
	env "${kmake[@]}" "$src/scripts/kconfig/merge_config.sh" -m -O "$out" \
		"$out/.config" "${frags[@]}" > "$out/merge.log"
	make -s -C "$src" O="$out" "${kmake[@]}" olddefconfig
	verify_config
}

main() {
	if [ -f "$out/.complete" ]; then
		echo "$out"
		return 0
	fi
	mkdir -p "$cache"
	exec 9> "$cache/.lock-$arch"
	flock 9
	[ -f "$out/.complete" ] && { echo "$out"; return 0; }
	(flock 8; unpack_source) 8> "$cache/.lock-src"
	log "building Linux $v ($arch, $(basename "$out")); this takes a while once"
	rm -rf "$out"
	mkdir -p "$out"
	configure
	local t0=$SECONDS
	if ! make -C "$src" O="$out" "${kmake[@]}" -j"$(nproc)" "$target" modules \
		> "$out/build.log" 2>&1; then
		tail -n 40 "$out/build.log" >&2
		log "build failed (see $out/build.log)"
		exit 1
	fi
	cp "$out/$image" "$out/boot-image"
	echo "$((SECONDS - t0))" > "$out/build-seconds"
	# Drop old builds of this arch: only the current key is used.
	find "$cache/debug-kernel" -mindepth 1 -maxdepth 1 -name "*-$arch-*" ! -path "$out" \
		-exec rm -rf {} +
	touch "$out/.complete"
	log "built in $((SECONDS - t0)) s"
	echo "$out"
}

main
