#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make check: host checks, then the QEMU suite on every arch x simulated SoC
# under Debian's kernel, then the suite plus selftests/debug.list (fuzzer,
# fault injection, stress) under the debug kernel (scripts/debug-kernel.sh),
# then one summary line "N passed, N failed, N skipped" as the last line.
#   CHECK_DEBUG=0      skip the debug-kernel runs (a developer's shortcut;
#                      CI always runs them)
#   FUZZ_SECONDS=N     the fuzzer's time budget in the debug runs
#   CHECK_LANES=1      the two arches' guests one after the other, not at once
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
logs=$build/logs
rc=0

rm -f "$logs"/*.result "$logs"/*.failures "$logs"/.step.*
scripts=$top/scripts
mkdir -p "$logs"
# The debug kernels (built once, then cached) build in the background at
# the lowest priority while the host checks and the stock guests run: a
# guest leaves a CPU idle much of the time, and a cold run saves most of
# the builds' quarter of an hour. A debug run that needs a kernel still
# building waits for it (debug-kernel.sh holds a lock per arch); one whose
# build failed builds it again in the foreground, and fails there visibly.
dk_pid=
if [ "${CHECK_DEBUG:-1}" != 0 ]; then
	(for a in amd64 arm64; do nice -n 19 "$scripts/debug-kernel.sh" "$a" > /dev/null ||
		exit 1; done) > "$logs/debug-kernel.log" 2>&1 &
	dk_pid=$!
fi
# The guests run in two lanes at once, one per arch: a TCG guest keeps one
# host CPU busy most of the time, so a two-CPU machine runs two of them in
# about the time of one and a half (CHECK_LANES=1: one after the other).
# Each step's output is printed whole when it ends, under a lock, so the
# lanes' TAP lines never interleave; a lane fails when any of its steps did.
step() {
	local out rc=0
	out=$(mktemp "$logs/.step.XXXXXX")
	"$@" > "$out" 2>&1 || rc=$?
	flock "$logs/.print.lock" cat "$out"
	rm -f "$out"
	return "$rc"
}

host_checks() {
	local rc=0
	"$scripts/check-host.sh" > "$logs/host.out" || rc=1
	cat "$logs/host.out"
	grep '^not ok' "$logs/host.out" > "$logs/host.failures"
	return "$rc"
}

# The network zoo (issue 26), stock kernels only: amd64 at full size on the
# RK3588 (batch 3), arm64 at 96x96 on the RK3576 (batch 2); a job may hold
# a core for seconds of simulated datapath.
zoo() {
	RKACCEL_APPEND=rkaccel_params=timeout_ms=5000 QEMU_TIMEOUT=3600 \
		"$scripts/qemu-run.sh" "$1" "$2" "$top/selftests/zoo.list" zoo
}

# Two arm64 boards that go wrong: the cores' provider loads after the
# deferred-probe timeout ran out (board_test reads the timeout in effect),
# and a device tree whose cores' register ranges overlap.
late_provider() {
	local elist=$logs/late-provider.list
	echo "board_test -t probes_after_the_deferred_probe_timeout" > "$elist"
	RKACCEL_APPEND=deferred_probe_timeout=1 "$scripts/qemu-run.sh" arm64 rk3588 "$elist" late-provider
}

dt_overlap() {
	echo "fault_test -c dt_overlap" > "$logs/dt-overlap.list"
	RKACCEL_DT=cna-overlap "$scripts/qemu-run.sh" arm64 rk3588 "$logs/dt-overlap.list"
}

# Silicon's unknowns as the simulator's parameters (selftests/variants.list):
# the interrupt, status and fault tests under each setting, one SoC per arch.
variants() {
	"$scripts/qemu-run.sh" "$1" "$2" "$top/selftests/variants.list" variants
}

# The debug kernel: amd64 with the RK3588 and arm64 with the RK3576, so each
# arch and each SoC meets the checkers once within CI's time; then that
# kernel's checkers are live: deliberate bugs get reported.
debug_run() {
	RKACCEL_KERNEL=debug "$scripts/qemu-run.sh" "$1" "$2" "$dlist" suite
}

canary() {
	local rc=0
	"$scripts/check-canary.sh" "$1" "$2" > "$logs/canary-$1.out" || rc=1
	cat "$logs/canary-$1.out"
	grep '^not ok' "$logs/canary-$1.out" > "$logs/canary-$1.failures"
	return "$rc"
}

debug=${CHECK_DEBUG:-1}
dlist=$build/logs/debug-suite.list
# the benchmark's figures are judged in the stock guests only (below);
# under the debug kernel it takes about a minute and adds no path
sed "s/@FUZZ_SECONDS@/${FUZZ_SECONDS:-20}/g" "$top/selftests/suite.list" \
	"$top/selftests/debug.list" | grep -v '^rkaccel-bench' > "$dlist"

# The lanes' runs are about equal: amd64 has the host checks and the
# full-size zoo, arm64 the slower guests and the two device-tree boots.
lane_amd64() {
	local rc=0 soc
	step host_checks || rc=1
	for soc in rk3588 rk3576; do
		step "$scripts/qemu-run.sh" amd64 "$soc" "$top/selftests/suite.list" suite || rc=1
	done
	step zoo amd64 rk3588 || rc=1
	step variants amd64 rk3588 || rc=1
	if [ "$debug" != 0 ]; then
		step debug_run amd64 rk3588 || rc=1
		step canary amd64 rk3588 || rc=1
	fi
	return "$rc"
}

lane_arm64() {
	local rc=0 soc
	for soc in rk3588 rk3576; do
		step "$scripts/qemu-run.sh" arm64 "$soc" "$top/selftests/suite.list" suite || rc=1
	done
	step zoo arm64 rk3576 || rc=1
	step variants arm64 rk3576 || rc=1
	step late_provider || rc=1
	step dt_overlap || rc=1
	if [ "$debug" != 0 ]; then
		step debug_run arm64 rk3576 || rc=1
		step canary arm64 rk3576 || rc=1
	fi
	return "$rc"
}

# Both lanes' guests make the same host-side things: the converter first,
# once (qemu-run.sh serialises the data scripts that use it).
make -s -f "$top/lib/convert/convert.mk" -C "$top" OUT="$build/convert" || rc=1
expect=12
[ "$debug" = 0 ] || expect=16
if [ "${CHECK_LANES:-2}" -ge 2 ]; then
	lane_arm64 &
	arm_pid=$!
	lane_amd64 || rc=1
	wait "$arm_pid" || rc=1
else
	lane_amd64 || rc=1
	lane_arm64 || rc=1
fi

[ -z "$dk_pid" ] || wait "$dk_pid" || sed 's/^/# background: /' "$logs/debug-kernel.log" | tail -n 20

# rkaccel-bench --quick ran in every guest: its JSON must parse (its
# figures are a benchmark's, not judged here).
bp=0 bf=0
for arch in amd64 arm64; do
	for soc in rk3588 rk3576; do
		if python3 "$scripts/bench-json.py" --check "$logs/$arch-$soc-suite.log"; then
			echo "ok - $arch/$soc: rkaccel-bench wrote valid JSON"
			bp=$((bp + 1))
		else
			echo "not ok - $arch/$soc: rkaccel-bench wrote no valid JSON" |
				tee -a "$logs/bench.failures"
			bf=$((bf + 1))
		fi
	done
done
echo "$bp $bf 0" > "$logs/bench.result"

# Every run left "passed failed skipped"; a missing result is a failure.
p=0 f=0 s=0 runs=0
for r in "$logs"/*.result; do
	[ -f "$r" ] || continue
	read -r a b c < "$r"
	p=$((p + a)) f=$((f + b)) s=$((s + c)) runs=$((runs + 1))
done
[ "$runs" -eq "$expect" ] || { echo "check: $((expect - runs)) runs left no result"; f=$((f + expect - runs)); }
[ "$f" -eq 0 ] || rc=1
# Every failure again, with the head of each kernel report, right above
# the summary: a CI log's tail is what its reader sees first.
if [ "$f" -ne 0 ]; then
	echo "== failures =="
	cat "$logs"/*.failures 2>/dev/null | head -n 120
fi
echo "$p passed, $f failed, $s skipped"
exit "$rc"
