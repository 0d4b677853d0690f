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
# And the same network with a Softmax after its logits (digits-softmax.onnx,
# made here with python3-onnx), converted with --batch 3 and 2: its
# probabilities run on the CPU after the NPU; the host executor's for the
# first batch (python/rkaccel/toolkit.py's runtime: net_ref.h, then
# rkaccel_output_op_run()) in batch3.softmax.expected, batch2.*.
# Redone only when the model, its data or the converter changed; prints the
# host's accuracy line (digits: float top-1 X%, int8 top-1 Y% on N images).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
out=$build/digits
cd "$top"

arch=$(dpkg --print-architecture)
make -s -f lib/convert/convert.mk OUT="$build/convert" "$build/convert/digits_int8" \
	"$build/convert/rkaccel-convert" "$build/convert/libconvert.so" \
	"$build/convert/libconvert-host.so"
if [ -f "$out/digits.txt" ] && [ -z "$(find models/digits "$build/convert/digits_int8" \
	"$build/convert/rkaccel-convert" "$build/convert/libconvert-host.so" \
	"$build/$arch/lib/librkaccel.so.2" python/rkaccel "$0" \
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
/usr/bin/python3 - models/digits/digits.onnx "$tmp/digits-softmax.onnx" <<'PY'
import sys
import onnx
from onnx import helper

m = onnx.load(sys.argv[1])
out = m.graph.output[0]
m.graph.node.append(helper.make_node("Softmax", [out.name], ["prob"], axis=1, name="softmax"))
prob = helper.make_tensor_value_info("prob", onnx.TensorProto.FLOAT,
                                     [d.dim_value for d in out.type.tensor_type.shape.dim])
m.graph.output.remove(out)
m.graph.output.append(prob)
onnx.checker.check_model(m)
onnx.save(m, sys.argv[2])
PY
for b in 3 2; do
	if ! "$build/convert/rkaccel-convert" "$tmp/digits-softmax.onnx" \
		-o "$tmp/digits-softmax-b$b.rkml" --dataset models/digits/dataset.txt --batch $b \
		>> "$tmp/log" 2>&1; then
		echo "digits-data: rkaccel-convert of the softmax model failed:" >&2
		cat "$tmp/log" >&2
		exit 1
	fi
	if ! RKACCEL_CONVERT_LIB=$build/convert/libconvert.so \
		RKACCEL_LIB=$build/$arch/lib/librkaccel.so.2 PYTHONPATH=python /usr/bin/python3 - \
		"$tmp/digits-softmax-b$b.rkml" "$tmp/batch$b.in" "$tmp/batch$b.softmax.expected" \
		>> "$tmp/log" 2>&1 <<'PY'
import sys
import numpy as np
from rkaccel.toolkit import _Runtime

with open(sys.argv[1], "rb") as f:
    rt = _Runtime(f.read(), None, 0)
i = rt.info
q = np.fromfile(sys.argv[2], np.int8).reshape(i.batch, i.in_h, i.in_w, i.in_c)
assert i.out_float, "the softmax model has no CPU op after the NPU"
rt.run(q).astype(np.float32).tofile(sys.argv[3])
rt.close()
PY
	then
		echo "digits-data: the host executor of the softmax model failed:" >&2
		cat "$tmp/log" >&2
		exit 1
	fi
done
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
grep '^digits: ' "$out/log"
