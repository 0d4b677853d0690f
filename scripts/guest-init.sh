#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# /init of the test initramfs: load the modules, run /tests/list, check the
# kernel log. Lines starting with RKACCEL- are read by scripts/qemu-run.sh.

/bin/busybox --install -s /bin
export PATH=/bin
mount -t devtmpfs dev /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /tmp && mount -t tmpfs tmp /tmp

# Every kernel log record since boot, copied from /dev/kmsg as it comes:
# the verdict at the end reads this copy, which no test can clear. dd stops
# when a read fails (EPIPE: records were overwritten before it read them);
# the verdict then finds its end marker missing, or a gap in the records'
# sequence numbers, and fails the run. qemu-run.sh's log_buf_len= keeps the
# boot's records until dd starts and absorbs bursts while it catches up.
klog=/tmp/kmsg
dd if=/dev/kmsg of="$klog" bs=16384 2>/dev/null &
klog_pid=$!

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

# deferred_probe_timeout=N (N > 0) on the command line, the last one being
# the one in effect: let it run out before the driver loads, so that the
# NPU's clock and power-domain provider (rkaccel_sim) comes late for sure.
# Each driver registered restarts the timeout, hence after the modules.
dpt=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^deferred_probe_timeout=//p' | tail -n 1)
case "$dpt" in
[1-9]|[1-9][0-9]) sleep $((dpt + 1)) ;;
esac

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

# A device-tree core probed past the deferred-probe timeout, before its
# clock and power-domain provider (rkaccel_sim, which needs rkaccel.ko
# loaded first) was there, failed for good (-ETIMEDOUT) and is not retried
# by anyone: probe it again now that the provider is there.
reprobe_cores() {
	for d in /sys/bus/platform/devices/*.npu; do
		[ -e "$d" ] && [ ! -e "$d/driver" ] || continue
		echo "# probing ${d##*/} again: unbound once its provider is there"
		echo "${d##*/}" 2>/dev/null > /sys/bus/platform/drivers_probe
	done
}

echo "RKACCEL-RUN init"
echo "TAP version 13"
# rkaccel_params= on the command line: the driver's parameters for this
# guest (the debug kernel's longer hang timeout); the tests reload with them.
dparams=$(sed -n 's/.*rkaccel_params=\([^ ]*\).*/\1/p' /proc/cmdline)
# rkaccel_sim_params=a=1,b=2: the simulator's answer where silicon's is not
# known (Documentation/datapath.rst); the suite runs under each variant.
sparams=$(sed -n 's/.*rkaccel_sim_params=\([^ ]*\).*/\1/p' /proc/cmdline | tr ',' ' ')
insmod /modules/rkaccel.ko $dparams && insmod /modules/rkaccel_sim.ko $simarg $sparams &&
	reprobe_cores
# Cores of a device tree probe from the deferred list, after insmod returns.
i=0
while ! npu_bound && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
# rkaccel_dt=NAME: a broken tree of dts/qemu/ (qemu-run.sh's RKACCEL_DT),
# on which the driver must refuse the NPU; the list's tests say why.
dtname=$(sed -n 's/.*rkaccel_dt=\([a-z0-9-]*\).*/\1/p' /proc/cmdline)
probe_name="probe_${soc}_${simarg:-device_tree}"
if [ -n "$dtname" ]; then
	probe_name=no_device_with_the_${dtname}_tree
	npu_bound && probe_ok=not || probe_ok=
else
	npu_bound && probe_ok= || probe_ok=not
fi
echo "${probe_ok:+$probe_ok }ok 1 init.$probe_name"
dmesg | grep -E 'rkaccel-(core|npu)|rkaccel_sim|rkaccel-sim' | sed 's/^/# /'
echo "RKACCEL-RC 0 init"

# Each command's guest time as a TAP comment: where a run's minutes go
# (grep '^# time' in its log).
while IFS= read -r cmd; do
	case "$cmd" in ''|'#'*) continue ;; esac
	echo "RKACCEL-RUN $cmd"
	t0=$(cut -d' ' -f1 /proc/uptime)
	(cd /tmp && sh -c "$cmd")
	rc=$?
	awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" -v c="$cmd" \
		'BEGIN { printf "# time %.1f s: %s\n", b - a, substr(c, 1, 60) }'
	echo "RKACCEL-RC $rc $cmd"
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

# Kernel health after everything ran: reports and taint, in every record
# since boot. KASAN, UBSAN, lockdep, DEBUG_OBJECTS (ODEBUG), DMA-API debug,
# kmemleak, RCU stall reports and a bare dump_stack() (amd64 "Call Trace:",
# arm64 "Call trace:") all print one of these.
reports='BUG:|WARNING:|Oops|KASAN|UBSAN|ODEBUG|DMA-API: .*device driver|kmemleak: [0-9]+ new suspected|circular locking|possible recursive locking|inconsistent lock state|suspicious RCU|rcu: INFO: .*detected stall|INFO: task .* blocked|general protection|Call [Tt]race|Unable to handle'

# The copy is complete once a record written now is in it.
klog_end() {
	local tag i=0

	tag="rkaccel-init: kernel log end $(cat /proc/sys/kernel/random/uuid)"
	echo "$tag" > /dev/kmsg
	while ! grep -qF "$tag" "$klog" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill "$klog_pid" 2>/dev/null
	grep -qF "$tag" "$klog"
}

# /dev/kmsg records ("prio,seq,usec,flags;text", then " KEY=value" lines)
# to "seq [seconds] text" in /tmp/klog.txt; prints how many records are
# missing: those before the first one copied, and every gap.
klog_text() {
	awk -v out=/tmp/klog.txt '
	/^ / { next }
	{
		i = index($0, ";")
		split(substr($0, 1, i - 1), h, ",")
		seq = h[2] + 0
		lost += n ? seq - last - 1 : seq
		last = seq
		n++
		printf "%d [%12.6f] %s\n", seq, h[3] / 1000000, substr($0, i + 1) > out
	}
	END { print lost + 0 }' "$klog"
}

if klog_end; then
	lost=$(klog_text)
else
	klog_text > /dev/null
	lost=unknown
	echo "RKACCEL-KLOG the copy of /dev/kmsg stopped early: records were lost"
fi
# Allowed taints: O (4096, out-of-tree) and E (8192, unsigned).
taint=$(cat /proc/sys/kernel/tainted)
extra=$((taint & ~(4096 | 8192)))
nrec=$(wc -l < /tmp/klog.txt)
if grep -qE "$reports" /tmp/klog.txt || [ "$extra" -ne 0 ] || [ "$lost" != 0 ]; then
	echo "RKACCEL-DMESG bad taint=$taint records=$nrec lost=$lost"
	# every report line with its sequence number (check-canary.sh reads
	# them), the first report whole (its head names the fault), the end
	grep -E "$reports" /tmp/klog.txt | head -n 100 | sed 's/^/RKACCEL-REPORT /'
	first=$(grep -n -m 1 -E "$reports" /tmp/klog.txt | cut -d: -f1)
	[ -z "$first" ] || sed -n "$((first > 3 ? first - 3 : 1)),$((first + 99))p" /tmp/klog.txt |
		sed 's/^/RKACCEL-KLOG /'
	echo "RKACCEL-KLOG ..."
	tail -n 40 /tmp/klog.txt | sed 's/^/RKACCEL-KLOG /'
else
	echo "RKACCEL-DMESG ok taint=$taint records=$nrec lost=0"
fi
echo "RKACCEL-DONE"
poweroff -f
