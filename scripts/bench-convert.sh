#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench, on the host: the convert time of torchvision's MobileNetV2 at
# 224x224 (scripts/tv-data.sh's ONNX model and its 20 calibration images)
# with rkaccel-convert at batch 3, for each calibration algorithm
# (issue 27, item 8; goal for normal: under 15 s on the 2-core machine).
# Interleaved rounds: each round converts once with every algorithm, so
# that all three see the same load; the median of the rounds is the
# figure, min and max its spread. Prints a table, then one line
#   BENCH-JSON {"convert.mobilenet_v2.normal_s": ..., ...}
# usage: bench-convert.sh [ROUNDS]   (default 3)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
rounds=${1:-3}
algos=(normal mmse kl_divergence)
conv=$build/convert/rkaccel-convert

"$top/scripts/tv-data.sh" > /dev/null
make -s -f "$top/lib/convert/convert.mk" OUT="$build/convert" "$conv"
cache=${RKACCEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rkaccel}/tv
key=$(cat "$build/tv/key")
models=$cache/$key
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A secs
for r in $(seq "$rounds"); do
	for a in "${algos[@]}"; do
		t0=$(date +%s%N)
		"$conv" "$models/mobilenet_v2-224.onnx" -o "$out/m.rkm" --batch 3 \
			--dataset "$models/dataset-224.txt" --algorithm "$a" > /dev/null
		t1=$(date +%s%N)
		secs[$a]="${secs[$a]:-} $(((t1 - t0) / 1000000))"
	done
	echo "bench-convert: round $r of $rounds done" >&2
done
python3 - "$rounds" "${algos[@]}" <<PY
import json, statistics, sys
rounds = int(sys.argv[1])
data = {a: [float(x) / 1000 for x in s.split()] for a, s in zip(sys.argv[2:], """${secs[normal]}|${secs[mmse]}|${secs[kl_divergence]}""".split("|"))}
obj = {"bench.rounds": rounds}
print(f"convert time, MobileNetV2 224x224, 20 calibration images, batch 3, median [min..max] of {rounds} rounds:")
for a, v in data.items():
    k = f"convert.mobilenet_v2.{a}_s"
    obj[k], obj[k + ".min"], obj[k + ".max"] = statistics.median(v), min(v), max(v)
    print(f"  {a:14s} {obj[k]:7.1f} s [{min(v):.1f}..{max(v):.1f}]")
print("BENCH-JSON " + json.dumps(obj))
PY
