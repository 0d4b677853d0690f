#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench: rkaccel-bench in the simulated RK3588 and RK3576 (amd64 guests),
# and on RK3588 rkaccel-bench --nets (the zoo's full-size networks), then
# on the host the converter's time (scripts/bench-convert.sh) and the host's
# work around an inference (rkaccel-bench --host-io).
# Prints each run's table, then writes build/bench.json: the RK3588 run's
# figures (net.* included) plus the rk3576.* figures of the RK3576 run, every
# figure the median of interleaved rounds with its spread (<figure>.min,
# <figure>.max), and prints the named figures. Documentation/bench.rst says
# how noise is kept out.
# usage: bench.sh [rkaccel-bench arguments, e.g. --quick]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
logs=$build/logs
mkdir -p "$logs"
for soc in rk3588 rk3576; do
	list=$build/bench-$soc.list
	echo "rkaccel-bench $*" > "$list"
	# the networks: RK3588's published figures are the reference
	[ "$soc" = rk3588 ] && echo "rkaccel-bench --nets $*" >> "$list"
	"$top/scripts/qemu-run.sh" amd64 "$soc" "$list" bench
done
# the converter's time, on the host (bench-convert.sh)
"$top/scripts/bench-convert.sh" | tee "$logs/host-convert-bench.log"
# the host's work around an inference, natively (no device)
host_arch=amd64
[ "$(uname -m)" = aarch64 ] && host_arch=arm64
"$build/$host_arch/bin/rkaccel-bench" --host-io | tee "$logs/host-io-bench.log"
python3 "$top/scripts/bench-json.py" "$logs/amd64-rk3588-bench.log" \
	"$logs/amd64-rk3576-bench.log" "$logs/host-convert-bench.log" \
	"$logs/host-io-bench.log" > "$build/bench.json"
python3 "$top/scripts/bench-json.py" --table "$build/bench.json"
echo "bench: wrote $build/bench.json"
