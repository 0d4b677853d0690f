#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Where a zero-work job's submit-to-signal time goes: boots a guest, runs
# rkaccel-bench --quick --submit-only under the kernel's tracepoints
# (rkaccel's own, workqueue, irq, sched wake-ups) and prints the
# median and p99 of each stage over the latency samples (jobs submitted one
# at a time, each waited for). Documentation/bench.rst has the stages.
# usage: submit-trace.sh ARCH SOC   (after make; report on stdout)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
arch=$1 soc=$2
list=$build/logs/subtrace-$arch-$soc.list
mkdir -p "$build/logs"

events="rkaccel/rkaccel_submit rkaccel/rkaccel_run rkaccel/rkaccel_done
workqueue/workqueue_execute_start irq/irq_handler_entry
sched/sched_wakeup sched/sched_waking"
{
	printf '[ -e /sys/kernel/tracing/trace ] || mount -t tracefs none /sys/kernel/tracing; cd /sys/kernel/tracing; '
	printf 'echo 0 > tracing_on; echo 16384 > buffer_size_kb; echo > trace; '
	for e in $events; do printf 'echo 1 > events/%s/enable; ' "$e"; done
	echo 'echo 1 > tracing_on'
	echo 'rkaccel-bench --quick --submit-only'
	echo "echo 0 > /sys/kernel/tracing/tracing_on; sed 's/^/SUBTRACE /' /sys/kernel/tracing/trace"
} > "$list"

"$top/scripts/qemu-run.sh" "$arch" "$soc" "$list" subtrace > /dev/null || true
python3 "$top/scripts/submit-trace.py" "$build/logs/$arch-$soc-subtrace.log"
