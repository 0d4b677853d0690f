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

for m in $(cat /modules/order); do
	insmod "/modules/$m" || echo "RKACCEL-ERROR insmod $m failed"
done

# The driver's own load and unload are checks too, in TAP form.
echo "RKACCEL-RUN init"
echo "TAP version 13"
if insmod /modules/rkaccel.ko "sim=$soc"; then
	echo "ok 1 init.insmod_sim_$soc"
else
	echo "not ok 1 init.insmod_sim_$soc"
fi
echo "RKACCEL-RC 0 init"

while IFS= read -r cmd; do
	case "$cmd" in ''|'#'*) continue ;; esac
	echo "RKACCEL-RUN $cmd"
	(cd /tmp && sh -c "$cmd")
	echo "RKACCEL-RC $? $cmd"
done < /tests/list

echo "RKACCEL-RUN fini"
if rmmod rkaccel; then
	echo "ok 1 fini.rmmod"
else
	echo "not ok 1 fini.rmmod"
fi
echo "RKACCEL-RC 0 fini"

# Kernel health after everything ran: reports and taint.
bad=$(dmesg | grep -E 'BUG:|WARNING:|Oops|KASAN|UBSAN|circular locking|possible recursive locking|INFO: task .* blocked|general protection|Call Trace')
# Allowed taints: O (4096, out-of-tree) and E (8192, unsigned).
taint=$(cat /proc/sys/kernel/tainted)
extra=$((taint & ~(4096 | 8192)))
if [ -n "$bad" ] || [ "$extra" -ne 0 ]; then
	echo "RKACCEL-DMESG bad taint=$taint"
	dmesg | tail -n 80 | sed 's/^/RKACCEL-KLOG /'
else
	echo "RKACCEL-DMESG ok taint=$taint"
fi
echo "RKACCEL-DONE"
poweroff -f
