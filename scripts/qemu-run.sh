#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot Debian's 6.12 kernel in QEMU (TCG) with an initramfs holding busybox,
# the DRM modules rkaccel needs, rkaccel.ko and the test programs, run the
# commands of a list file in the guest and judge the serial console output.
#
# usage: qemu-run.sh ARCH SOC LIST [NAME]
#   ARCH  amd64 | arm64      SOC  rk3588 | rk3576
#   LIST  file with one guest command per line
# RKACCEL_KERNEL=debug boots the debug kernel of scripts/debug-kernel.sh
# (KASAN, lockdep, kmemleak, fault injection, ...) with rkaccel.ko built
# against it, instead of Debian's; its logs are named ARCH-SOC-NAME-debug.
# RKACCEL_EXTRA_MODULES="a.ko b.ko" puts more modules in /modules/.
# RKACCEL_APPEND="..." goes at the end of the kernel command line (after
# this script's own settings, so it overrides them).
# RKACCEL_DT=NAME (arm64) boots the broken tree dts/qemu/SOC-npu-sim-NAME.dtsi
# instead of SOC-npu-sim.dtsi; the guest then expects no NPU device.
# Writes build/logs/ARCH-SOC-NAME.{log,result}; the result holds
# "passed failed skipped". Exits 0 only when every check passed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
arch=$1 soc=$2 list=$3 name=${4:-$(basename "$list" .list)}
kernel=${RKACCEL_KERNEL:-stock}
kroot=$build/kernel-pkgs
kver=$(cat "$kroot/.version")
out=$build/$arch
mem=1G
# log_buf_len: the whole boot stays in the log until /init copies it, and
# bursts (fault injection's traces) wait there while the copy catches up.
# deferred_probe_timeout=-1: the driver core never gives up on the cores'
# clock and power-domain provider, rkaccel_sim, which can only load after
# rkaccel.ko; past the timeout (10 s after the last driver registered) a
# core would fail for good on a slow host. Documentation/testing.rst.
base_append="log_buf_len=16M deferred_probe_timeout=-1"
append=
dt=${RKACCEL_DT:-}
case "$kernel" in
stock) timeout_s=${QEMU_TIMEOUT:-600} ;;
debug)
	# The checkers slow TCG down several times and KASAN wants its shadow.
	# A simulated task's host compute (one task is one tick of progress
	# for the watchdog) then takes up to ~0.5 s: rkaccel.ko's hang timeout
	# goes from 500 ms to 2 s, passed on to every load of the driver.
	timeout_s=${QEMU_TIMEOUT:-1800}
	name=$name-debug
	mem=2G
	base_append="log_buf_len=64M deferred_probe_timeout=-1"
	append="kasan_multi_shot no_hash_pointers rkaccel_kernel=debug rkaccel_params=timeout_ms=2000"
	;;
*) echo "qemu-run: RKACCEL_KERNEL is stock or debug, not $kernel" >&2; exit 2 ;;
esac
work=$build/initramfs/$arch-$soc-$name
logs=$build/logs
log=$logs/$arch-$soc-$name.log

case "$arch" in
amd64)
	qemu=(qemu-system-x86_64 -accel tcg -cpu max)
	console=ttyS0
	busybox=/bin/busybox
	;;
arm64)
	qemu=(qemu-system-aarch64 -M virt -cpu cortex-a76 -accel tcg)
	console=ttyAMA0
	busybox=$kroot/arm64/bin/busybox
	;;
*) echo "qemu-run: unknown arch $arch" >&2; exit 2 ;;
esac
kernel_image=$kroot/$arch/boot/vmlinuz-$kver-$arch
moddir=$kroot/$arch/lib/modules/$kver-$arch
module=$out/kernel/rkaccel.ko
kernel_label="Linux $kver-$arch"
if [ "$kernel" = debug ]; then
	dk=$("$top/scripts/debug-kernel.sh" "$arch")
	kernel_image=$dk/boot-image
	module=$build/$arch-debug/kernel/rkaccel.ko
	kernel_label="debug Linux $kver ($(basename "$dk"))"
	"$top/scripts/build-module.sh" "$arch" KDIR="$dk" > /dev/null
fi

# Modules rkaccel.ko needs, dependencies first, found through modinfo.
declare -A seen=()
order=()
add_module() {
	local mod=$1 path dep
	[ -n "${seen[$mod]:-}" ] && return 0
	seen[$mod]=1
	path=$(find "$moddir/kernel" -name "$mod.ko*" | head -n 1)
	[ -n "$path" ] || { echo "qemu-run: module $mod not in $moddir" >&2; exit 1; }
	for dep in $(modinfo -F depends "$path" | tr ',' ' '); do
		add_module "$dep"
	done
	order+=("$path")
}

# Python for the LIST's python3 lines (amd64 only: the host's python3 is
# amd64; not with the debug kernel, whose checkers make TCG too slow for
# the simulated jobs' 500 ms timeout while python runs): the host's python3 with its stdlib and numpy, the shared libraries
# they, librkaccel.so.2, libconvert.so and libconvert-host.so (the
# toolkit's converter and host executor) need, python/rkaccel and its test
# and the digits' ONNX model under /py, and
# a /bin/python3 that sets PYTHONPATH and LD_LIBRARY_PATH.
add_python() {
	local py=/usr/bin/python3.11 f lib
	mkdir -p "$work/usr/bin" "$work/usr/lib/python3/dist-packages" "$work/py" \
		"$work/usr/lib/rkaccel"
	cp "$py" "$work/usr/bin/"
	rsync -a --exclude test --exclude __pycache__ --exclude idlelib --exclude tkinter \
		--exclude ensurepip --exclude lib2to3 /usr/lib/python3.11 "$work/usr/lib/"
	rsync -a --exclude __pycache__ --exclude tests /usr/lib/python3/dist-packages/numpy \
		"$work/usr/lib/python3/dist-packages/"
	cp -a "$out"/lib/librkaccel.so* "$work/usr/lib/rkaccel/"
	# the toolkit (converter and host executor) and the digits' ONNX model, for
	# RKNN's device path against the host executor
	host_data make -s -C "$top" -f lib/convert/convert.mk OUT="$build/convert" \
		"$build/convert/libconvert-host.so" "$build/convert/libconvert.so"
	cp "$build/convert/libconvert-host.so" "$build/convert/libconvert.so" "$work/usr/lib/rkaccel/"
	cp -r "$top/models/digits" "$work/py/digits"
	cp -r "$top/python/rkaccel" "$top/python/tests/test_rkaccel.py" "$work/py/"
	for f in "$py" $(find /usr/lib/python3.11/lib-dynload \
		/usr/lib/python3/dist-packages/numpy -name '*.so') "$out/lib/librkaccel.so.2" \
		"$build/convert/libconvert-host.so" "$build/convert/libconvert.so"; do
		ldd "$f" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }'
	done | sort -u | while read -r lib; do
		cp -L --parents "$lib" "$work/"
	done
	printf '#!/bin/sh\nPYTHONPATH=/py LD_LIBRARY_PATH=/usr/lib/rkaccel RKACCEL_CONVERT_LIB=/usr/lib/rkaccel/libconvert.so exec %s "$@"\n' \
		"$py" > "$work/bin/python3"
	chmod +x "$work/bin/python3"
}

# The host-made data is shared by the runs of make check's two lanes
# (scripts/check.sh): one makes it while the other waits, then finds it made.
host_data() {
	flock "$build/.host-data.lock" "$@"
}

make_initramfs() {
	local dep path base
	rm -rf "$work"
	mkdir -p "$work"/{bin,dev,proc,sys,modules,tests}
	cp "$busybox" "$work/bin/busybox"
	ln -s busybox "$work/bin/sh"
	cp "$top/scripts/guest-init.sh" "$work/init"
	chmod +x "$work/init"
	# The debug kernel has everything rkaccel needs built in.
	[ "$kernel" = debug ] || for dep in $(modinfo -F depends "$module" | tr ',' ' '); do
		add_module "$dep"
	done
	# The RK3588 tree's rails (dts/qemu/rk3588-npu-sim-rails.dtsi): fixed.ko.
	[ "$kernel" = debug ] || [ "$arch" != arm64 ] || add_module fixed
	: > "$work/modules/order"
	for path in "${order[@]}"; do
		base=$(basename "$path")
		case "$base" in
		*.xz) xz -dc "$path" > "$work/modules/${base%.xz}" ;;
		*) cp "$path" "$work/modules/$base" ;;
		esac
		echo "${base%.xz}" >> "$work/modules/order"
	done
	cp "$module" "$(dirname "$module")/rkaccel_sim.ko" "$(dirname "$module")/rkaccel_test_other.ko" \
		"$work/modules/"
	# More modules for the list to load by hand (check.sh's canaries).
	[ -z "${RKACCEL_EXTRA_MODULES:-}" ] || cp $RKACCEL_EXTRA_MODULES "$work/modules/"
	cp "$out"/bin/* "$out"/selftests/* "$work/bin/" 2>/dev/null || true
	cp "$list" "$work/tests/list"
	# The trained digits model and the host executor's outputs, made on
	# the host (scripts/digits-data.sh), for digits_test.
	if grep -q digits_test "$list"; then
		host_data "$top/scripts/digits-data.sh"
		mkdir -p "$work/data"
		cp -r "$build/digits" "$work/data/digits"
	fi
	# The network zoo's inputs and graph-reference outputs, made on the
	# host (scripts/zoo-data.sh), for zoo_test; not the model files (the
	# guest writes them from the same seed, checked by their CRC-32).
	if grep -q zoo_test "$list"; then
		host_data "$top/scripts/zoo-data.sh"
		mkdir -p "$work/data/zoo"
		cp "$build/zoo/zoo.txt" "$build"/zoo/*.in "$build"/zoo/*.expected "$work/data/zoo/"
		# torchvision's networks converted from ONNX (scripts/tv-data.sh):
		# these model files are the host's, at the guest's size (amd64
		# 224x224, arm64 96x96) and the SoC's batch (3 cores, or 2).
		host_data "$top/scripts/tv-data.sh"
		tv_size=224x224 tv_batch=3
		[ "$arch" = arm64 ] && tv_size=96x96
		[ "$soc" = rk3576 ] && tv_batch=2
		cp "$build/tv/tv.txt" "$build"/tv/tv_*-$tv_size.in "$build"/tv/tv_*-$tv_size.expected \
			"$build"/tv/tv_*-$tv_size-b$tv_batch.rkml "$work/data/zoo/"
	fi
	if [ "$arch" = amd64 ] && [ "$kernel" = stock ] && grep -q python3 "$list"; then
		add_python
	fi
	(cd "$work" && mknod -m 600 dev/console c 5 1 &&
		find . | cpio -o -H newc --quiet | gzip -1) > "$work.cpio.gz"
}

# Judge the console log: TAP lines per command, exit codes, dmesg, completion.
# Every failure, and the head of the first kernel report, also go to
# ARCH-SOC-NAME.failures, which check.sh repeats at the end of its output.
judge() {
	awk -v label="$arch/$soc/$name" -v qrc="$1" -v failures="$logs/$arch-$soc-$name.failures" '
	/^RKACCEL-KLOG / && !report && /BUG:|WARNING:|Oops|Unable to handle|general protection|KASAN|UBSAN|kmemleak: [0-9]+ new|Call [Tt]race|detected stall/ { report = 1 }
	/^RKACCEL-KLOG \.\.\.$/ { if (report) report = 2 }
	/^RKACCEL-KLOG / && report == 1 && nreport < 16 { print "#   " label ": " substr($0, 14) > failures; nreport++ }
	/^RKACCEL-RUN / { cmd = substr($0, 13); cmdfail = 0; next }
	/^RKACCEL-RC / {
		rc = $2
		if (rc != 0 && rc != 4 && !cmdfail) {
			print "not ok - " label ": \"" cmd "\" exited " rc " without a TAP failure"
			print "not ok - " label ": \"" cmd "\" exited " rc " without a TAP failure" > failures
			fail++
		}
		next
	}
	/^RKACCEL-DMESG ok/ { pass++; dmesg = 1; print "ok - " label ": kernel log clean, " substr($0, 18); next }
	/^RKACCEL-DMESG bad/ { fail++; dmesg = 1; why = label ": kernel log has a report, a taint or a gap, " substr($0, 19); print "not ok - " why; print "not ok - " why > failures; next }
	/^RKACCEL-DONE/ { done = 1; next }
	/^(not )?ok [0-9]+ / {
		if ($0 ~ /# *SKIP/) skip++
		else if ($1 == "not") { fail++; cmdfail = 1; print "not ok - " label ": " cmd ": " $0 > failures }
		else pass++
	}
	END {
		if (qrc == 124) { print "not ok - " label ": guest timed out"; fail++ }
		else if (!done || !dmesg) { print "not ok - " label ": guest did not finish"; fail++ }
		if (pass + fail + skip == 0) { print "not ok - " label ": no test ran"; fail++ }
		if (qrc == 124) print "not ok - " label ": guest timed out" > failures
		if (!dmesg) print "not ok - " label ": no kernel log verdict" > failures
		printf "%d %d %d\n", pass, fail, skip > "/dev/stderr"
	}' 2>"$logs/$arch-$soc-$name.result"
}

# arm64: QEMU virt's own device tree plus the NPU nodes of dts/qemu/, so
# that the cores probe from the device tree as on a board.
make_dtb() {
	local virt=$work-virt
	"${qemu[@]}" -m "$mem" -smp 2 -display none -nodefaults -machine dumpdtb="$virt.dtb" \
		> /dev/null
	dtc -q -I dtb -O dts -o "$virt.dts" "$virt.dtb"
	printf '/include/ "%s"\n' "$top/dts/qemu/$soc-npu-sim${dt:+-$dt}.dtsi" >> "$virt.dts"
	dtc -q -I dts -O dtb -i "$top/dts/qemu" -o "$work.dtb" "$virt.dts"
	qemu+=(-dtb "$work.dtb")
}

main() {
	mkdir -p "$logs"
	: > "$logs/$arch-$soc-$name.failures"
	make_initramfs
	[ "$arch" != arm64 ] || make_dtb
	echo "== $arch $soc $name: $kernel_label in QEMU =="
	local qrc=0
	timeout --foreground "$timeout_s" "${qemu[@]}" -m "$mem" -smp 2 -display none -nodefaults \
		-serial stdio -no-reboot -kernel "$kernel_image" -initrd "$work.cpio.gz" \
		-append "console=$console quiet loglevel=3 panic=-1 rkaccel_soc=$soc $base_append $append${dt:+ rkaccel_dt=$dt} ${RKACCEL_APPEND:-}" \
		< /dev/null 2>&1 | tr -d '\r' > "$log" || qrc=${PIPESTATUS[0]}
	grep -v '^RKACCEL-\(RUN\|RC\|DONE\)' "$log" | grep -v '^\s*$' || true
	judge "$qrc" < "$log"
	read -r p f s < "$logs/$arch-$soc-$name.result"
	echo "== $arch $soc $name: pass=$p fail=$f skip=$s =="
	[ "$f" -eq 0 ]
}

main
