#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The trained digits model's data for the guests (selftests/digits_test),
# made natively on the host: lib/convert's digits_int8 converts
# models/digits/digits.onnx to int8 (normal, per channel, the 100
# calibration digits) and, while it measures the int8 top-1 with the host
# int8 executor, writes each test digit's input bytes and that executor's
# output bytes. Into $BUILD/digits (digits.rkm, inputs.bin, expected.bin,
# labels.bin, digits.txt); qemu-run.sh puts the folder at /data/digits.
# Then rkaccel-convert writes the same model as format 3.0 files with the
# batch baked in (digits-b3.rkml, digits-b2.rkml: --batch, the toolkit's
# rknn_batch_size), with the first batch's inputs and the host executor's
# outputs beside them (batch3.in/.expected, batch2.*), for rkaccel-run.
# Redone only when the model, its data or the converter changed; prints the
# host's accuracy line (digits: float top-1 X%, int8 top-1 Y% on N images).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
out=$build/digits
cd "$top"

make -s -f lib/convert/convert.mk OUT="$build/convert" "$build/convert/digits_int8" \
	"$build/convert/rkaccel-convert"
if [ -f "$out/digits.txt" ] && [ -z "$(find models/digits "$build/convert/digits_int8" \
	"$build/convert/rkaccel-convert" \
	-newer "$out/digits.txt" -print -quit)" ]; then
	grep '^digits: ' "$out/log"
	exit 0
fi
tmp=$(mktemp -d "$build/digits.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! "$build/convert/digits_int8" models/digits "$tmp/digits.rkm" --emit "$tmp" \
	> "$tmp/log" 2>&1; then
	echo "digits-data: digits_int8 failed:" >&2
	cat "$tmp/log" >&2
	exit 1
fi
in_bytes=$(awk '$1 == "input_bytes" { print $2 }' "$tmp/digits.txt")
out_bytes=$(awk '$1 == "output_bytes" { print $2 }' "$tmp/digits.txt")
for b in 3 2; do
	if ! "$build/convert/rkaccel-convert" models/digits/digits.onnx \
		-o "$tmp/digits-b$b.rkml" --dataset models/digits/dataset.txt --batch $b \
		--custom-string "digits, batch $b" >> "$tmp/log" 2>&1; then
		echo "digits-data: rkaccel-convert --batch $b failed:" >&2
		cat "$tmp/log" >&2
		exit 1
	fi
	head -c $((b * in_bytes)) "$tmp/inputs.bin" > "$tmp/batch$b.in"
	head -c $((b * out_bytes)) "$tmp/expected.bin" > "$tmp/batch$b.expected"
done
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
grep '^digits: ' "$out/log"
