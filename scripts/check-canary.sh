#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Prove that the debug kernel's checkers and the guest's verdict are live:
# boot it with the canary module of scripts/debug-kernel/canary, make it do
# a use after free, an allocation inside a dma-fence signalling section and
# a leak, and require KASAN, lockdep and kmemleak to report each one; make
# it do an out-of-bounds index (UBSAN, no taint) before board_test and a
# bare dump_stack(), and require guest-init.sh's verdict to fail the run on
# each. One TAP line per check; writes build/logs/ARCH-canary.result
# ("passed failed skipped").
# usage: check-canary.sh ARCH SOC
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
arch=$1 soc=$2
logs=$build/logs
src=$build/$arch-debug/canary
list=$build/$arch-debug/canary.list
log=$logs/$arch-$soc-canary-debug.log
pass=0 fail=0

case "$arch" in
amd64) cross=(ARCH=x86_64) ;;
arm64) cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-) ;;
*) echo "check-canary: unknown arch $arch" >&2; exit 2 ;;
esac

tap() {
	if grep -qE "$2" "$log"; then
		echo "ok - debug/$arch: $1"
		pass=$((pass + 1))
	else
		echo "not ok - debug/$arch: $1"
		fail=$((fail + 1))
	fi
}

dk=$("$top/scripts/debug-kernel.sh" "$arch") || exit 1
mkdir -p "$src" "$logs"
cp "$top"/scripts/debug-kernel/canary/{Kbuild,rkaccel_canary.c} "$src/"
if ! make -s -C "$dk" M="$src" "${cross[@]}" W=1 modules > "$src/build.log" 2>&1 ||
	grep -q 'warning:\|error:' "$src/build.log"; then
	cat "$src/build.log"
	echo "not ok - debug/$arch: canary module builds"
	echo "0 1 0" > "$logs/$arch-canary.result"
	exit 1
fi

kml=/sys/kernel/debug/kmemleak
# KASAN's report taints the kernel, which turns lockdep off: the lockdep
# canary goes first of the tainting ones. A module that failed to load is
# gone from the leak's backtrace, so the leak is known by its size. UBSAN's
# report comes before board_test, which once cleared the log. The stack's
# marks, with their /dev/kmsg sequence numbers, come from guest-init.sh's
# copy of the log (/tmp/kmsg).
cat > "$list" <<-EOF2
	insmod /modules/rkaccel_canary.ko bug=ubsan; true
	board_test
	insmod /modules/rkaccel_canary.ko bug=stack; true
	sleep 1; grep 'rkaccel_canary: stack' /tmp/kmsg | sed 's/^/CANARY-MARK /'
	insmod /modules/rkaccel_canary.ko bug=fence; true
	insmod /modules/rkaccel_canary.ko bug=leak; true
	insmod /modules/rkaccel_canary.ko bug=uaf; true
	dmesg | grep -E 'BUG: KASAN|circular locking|dma_fence_map|rkaccel_canary' | sed 's/^/CANARY /'
	sleep 6; echo scan > $kml; echo scan > $kml; grep -A16 '^unreferenced' $kml | sed 's/^/CANARY /'; echo clear > $kml
EOF2
# The guest's own verdict is "reports found", which is what this wants:
# only the canary lines below count.
RKACCEL_KERNEL=debug RKACCEL_EXTRA_MODULES="$src/rkaccel_canary.ko" \
	"$top/scripts/qemu-run.sh" "$arch" "$soc" "$list" canary > /dev/null 2>&1
rm -f "$logs/$arch-$soc-canary-debug.result" "$logs/$arch-$soc-canary-debug.failures"
tap "KASAN reports a use after free" '^CANARY .*BUG: KASAN: slab-use-after-free in canary_uaf'
tap "lockdep reports an allocation in a dma-fence signalling section" '^CANARY .*dma_fence_map'
tap "kmemleak reports a leaked allocation" '^CANARY unreferenced object .*\(size 128\)'

# The verdict: failed, with UBSAN's report among its reports although
# board_test ran after it, and with a "Call trace"/"Call Trace" line
# between the stack's two marks.
verdict_failed='^RKACCEL-DMESG bad'
tap "the verdict fails the run (reports found)" "$verdict_failed"
if grep -q '^RKACCEL-RC 0 board_test$' "$log"; then
	tap "the verdict sees UBSAN's report from before board_test" \
		'^RKACCEL-REPORT [0-9]+ .*UBSAN: array-index-out-of-bounds in .*rkaccel_canary'
else
	echo "not ok - debug/$arch: the verdict sees UBSAN's report from before board_test # board_test failed"
	fail=$((fail + 1))
fi
if awk '
	/^CANARY-MARK / { split($2, h, ";"); split(h[1], f, ",")
		if ($0 ~ /stack begin/) b = f[2]; else e = f[2] }
	/^RKACCEL-REPORT / && /Call [Tt]race/ { seq[++n] = $2 }
	END { for (i = 1; i <= n; i++) if (b != "" && e != "" && seq[i] + 0 > b + 0 && seq[i] + 0 < e + 0) exit 0; exit 1 }
	' "$log"; then
	echo "ok - debug/$arch: the verdict sees a bare dump_stack()"
	pass=$((pass + 1))
else
	echo "not ok - debug/$arch: the verdict sees a bare dump_stack()"
	fail=$((fail + 1))
fi
echo "$pass $fail 0" > "$logs/$arch-canary.result"
[ "$fail" -eq 0 ]
