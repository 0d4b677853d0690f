#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# /init of the test initramfs: load the modules, run /tests/list, check dmesg.
# Lines starting with RKACCEL- are read by scripts/qemu-run.sh.

/bin/busybox --install -s /bin
export PATH=/bin
mount -t devtmpfs dev /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /tmp && mount -t tmpfs tmp /tmp

soc=$(sed -n 's/.*rkaccel_soc=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
echo "RKACCEL-BOOT arch=$(uname -m) kernel=$(uname -r) soc=$soc"

# kmemleak (debug kernel): what the boot left is not ours; forget it.
kml=/sys/kernel/debug/kmemleak
if [ -w "$kml" ]; then
	echo scan > "$kml"
	echo clear > "$kml"
fi

# One TAP line: no unreferenced object since the last clear. kmemleak only
# reports objects older than 5 s whose contents did not change between two
# scans, hence the wait and the second scan.
kmemleak_check() {
	[ -w "$kml" ] || return 0
	echo "RKACCEL-RUN kmemleak $1"
	sleep 6
	# kmemleak turns itself off on an internal error; a scan then fails.
	if ! { echo scan > "$kml" && echo scan > "$kml"; } 2>/dev/null; then
		echo "not ok 1 kmemleak.$1 # kmemleak is off"
		echo "RKACCEL-RC 0 kmemleak $1"
		return 0
	fi
	n=$(grep -c '^unreferenced object' "$kml")
	if [ "$n" -eq 0 ]; then
		echo "ok 1 kmemleak.$1"
	else
		echo "not ok 1 kmemleak.$1 # $n unreferenced objects"
		head -n 60 "$kml" | sed 's/^/# /'
		echo clear > "$kml"
	fi
	echo "RKACCEL-RC 0 kmemleak $1"
}

for m in $(cat /modules/order); do
	insmod "/modules/$m" || echo "RKACCEL-ERROR insmod $m failed"
done

# The driver, then the simulated NPU's register blocks. With a device tree
# (arm64) the cores are nodes already, waiting for the simulated CRU;
# without one (x86) rkaccel_sim's sim= creates them as platform devices.
# Either way they probe through the board's code; its messages go to the log.
export RKACCEL_SOC=$soc
simarg="sim=$soc"
grep -qs 'rkaccel,sim-cru' /proc/device-tree/*/compatible && simarg=
npu_bound() {
	[ -e /sys/bus/platform/devices/rkaccel-npu/accel ] ||
		[ -e /sys/bus/platform/devices/rkaccel-npu/drm ]
}

echo "RKACCEL-RUN init"
echo "TAP version 13"
# rkaccel_params= on the command line: the driver's parameters for this
# guest (the debug kernel's longer hang timeout); the tests reload with them.
dparams=$(sed -n 's/.*rkaccel_params=\([^ ]*\).*/\1/p' /proc/cmdline)
insmod /modules/rkaccel.ko $dparams && insmod /modules/rkaccel_sim.ko $simarg
# Cores of a device tree probe from the deferred list, after insmod returns.
i=0
while ! npu_bound && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if npu_bound; then
	echo "ok 1 init.probe_$soc${simarg:+_$simarg}${simarg:-_device_tree}"
else
	echo "not ok 1 init.probe_$soc${simarg:+_$simarg}${simarg:-_device_tree}"
fi
dmesg | grep -E 'rkaccel-(core|npu)|rkaccel_sim|rkaccel-sim' | sed 's/^/# /'
echo "RKACCEL-RC 0 init"

while IFS= read -r cmd; do
	case "$cmd" in ''|'#'*) continue ;; esac
	echo "RKACCEL-RUN $cmd"
	(cd /tmp && sh -c "$cmd")
	echo "RKACCEL-RC $? $cmd"
done < /tests/list

kmemleak_check after_suite

echo "RKACCEL-RUN fini"
if rmmod rkaccel_sim && rmmod rkaccel; then
	echo "ok 1 fini.rmmod"
else
	echo "not ok 1 fini.rmmod"
fi
echo "RKACCEL-RC 0 fini"
kmemleak_check after_rmmod

# The debug kernel's lockdep must still be on: it turns itself off after
# its first report or when it runs out of room.
if grep -q 'rkaccel_kernel=debug' /proc/cmdline; then
	echo "RKACCEL-RUN checkers"
	if grep -qE 'debug_locks: +1' /proc/lockdep_stats && [ -e "$kml" ]; then
		echo "ok 1 checkers.lockdep_and_kmemleak_on"
	else
		echo "not ok 1 checkers.lockdep_and_kmemleak_on"
		grep debug_locks /proc/lockdep_stats
	fi
	echo "RKACCEL-RC 0 checkers"
fi

# Kernel health after everything ran: reports and taint.
# KASAN, UBSAN, lockdep, DEBUG_OBJECTS (ODEBUG), DMA-API debug and kmemleak
# all print one of these.
reports='BUG:|WARNING:|Oops|KASAN|UBSAN|ODEBUG|DMA-API: .*device driver|kmemleak: [0-9]+ new suspected|circular locking|possible recursive locking|inconsistent lock state|suspicious RCU|INFO: task .* blocked|general protection|Call Trace|Unable to handle'
bad=$(dmesg | grep -E "$reports")
# Allowed taints: O (4096, out-of-tree) and E (8192, unsigned).
taint=$(cat /proc/sys/kernel/tainted)
extra=$((taint & ~(4096 | 8192)))
if [ -n "$bad" ] || [ "$extra" -ne 0 ]; then
	echo "RKACCEL-DMESG bad taint=$taint"
	# the first report whole (its head names the fault), then the log's end
	dmesg > /tmp/dmesg.all
	first=$(grep -n -m 1 -E "$reports" /tmp/dmesg.all | cut -d: -f1)
	[ -z "$first" ] || sed -n "$((first > 3 ? first - 3 : 1)),$((first + 99))p" /tmp/dmesg.all |
		sed 's/^/RKACCEL-KLOG /'
	echo "RKACCEL-KLOG ..."
	tail -n 40 /tmp/dmesg.all | sed 's/^/RKACCEL-KLOG /'
else
	echo "RKACCEL-DMESG ok taint=$taint"
fi
echo "RKACCEL-DONE"
poweroff -f
