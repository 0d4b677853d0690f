#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ONNX converter's host test (lib/convert, host only): builds the library
# and convert_test twice (plain, and with ASan/UBSan), makes the test models
# and PyTorch's reference outputs with lib/convert/tests/make_refs.py, then
# runs both builds over them. Then concat_int8 (Concat's one quantization,
# make_refs.py's concat/ model). Then digits_int8: the trained digits model
# converted to int8 (each calibration algorithm, per channel and per layer)
# and its top-1, float against the host int8 executor; it prints the line
# "digits: float top-1 X%, int8 top-1 Y% on N images" once (normal). Then
# rkaccel-convert: bad options and bad files (dataset.txt ones named by
# file and line) each refused with a message, its model files byte for byte
# digits_int8's, and --mean/--std/--rgb2bgr folded or recorded (under
# ASan/UBSan too). Then Python's toolkit
# class (python/tests/test_toolkit.py over libconvert.so): rkaccel-convert's
# bytes, and its refusals. Last, softmax_int8: classifiers and a per-pixel
# softmax whose Softmax runs on the CPU after the NPU, bit-exact with the
# graph reference and close to float. TAP from each; fails if any fails.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
refs=$build/convert/refs
cd "$top"

make -s -f lib/convert/convert.mk OUT="$build/convert"
make -s -f lib/convert/convert.mk OUT="$build/convert-san" SAN=1
rm -rf "$refs"
mkdir -p "$refs"
# Debian's torch/onnx are for /usr/bin/python3 (not a pyenv python on PATH).
if ! /usr/bin/python3 lib/convert/tests/make_refs.py "$refs" > "$refs.log" 2>&1; then
	echo "Bail out! make_refs.py failed:"
	tail -n 20 "$refs.log"
	exit 1
fi

rc=0
echo "# convert_test ($build/convert)"
"$build/convert/convert_test" "$refs" models/digits/digits.onnx || rc=1
echo "# convert_test under ASan/UBSan ($build/convert-san)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	"$build/convert-san/convert_test" "$refs" models/digits/digits.onnx || rc=1
for args in normal mmse kl_divergence "normal per-layer"; do
	echo "# digits_int8 $args ($build/convert)"
	# shellcheck disable=SC2086 # the algorithm and the option are two words
	"$build/convert/digits_int8" models/digits "$build/convert/digits-${args// /-}.rkm" $args ||
		rc=1
done
echo "# digits_int8 kl_divergence under ASan/UBSan ($build/convert-san)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	"$build/convert-san/digits_int8" models/digits "$build/convert-san/digits.rkm" \
	kl_divergence || rc=1
# Concat along channels (make_refs.py's concat/): one quantization for the
# inputs, ceil-mode max pools, the runtime's lowering equal to the graph's.
echo "# concat_int8 ($build/convert)"
"$build/convert/concat_int8" "$refs/concat" || rc=1
echo "# concat_int8 under ASan/UBSan ($build/convert-san)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	"$build/convert-san/concat_int8" "$refs/concat" || rc=1

# rkaccel-convert. t NAME STATUS PATTERN ARGS...: exits STATUS, stderr matches PATTERN.
echo "# rkaccel-convert ($build/convert)"
conv=$build/convert/rkaccel-convert
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
t() {
	local name=$1 want=$2 pat=$3 got
	shift 3
	n=$((n + 1))
	got=0
	"$conv" "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null || got=$?
	if [ "$got" -eq "$want" ] && grep -Eq -- "$pat" "$tmp/err"; then
		echo "ok $n - rkaccel-convert $name"
	else
		echo "not ok $n - rkaccel-convert $name: exit $got (want $want), stderr:"
		sed 's/^/#   /' "$tmp/err" | head -n 5
		rc=1
	fi
}
onnx=models/digits/digits.onnx ds=models/digits/dataset.txt
echo "TAP version 13"
t "without arguments" 2 "the ONNX model is missing"
t "without -o" 2 "-o OUT.rkm is missing" "$onnx" --dataset "$ds"
t "without --dataset" 2 "--dataset DATASET.txt is missing" "$onnx" -o "$tmp/m.rkm"
t "-o without a value" 2 "-o needs a value" "$onnx" --dataset "$ds" -o
t "an empty --dataset" 2 "--dataset needs a value" "$onnx" -o "$tmp/m.rkm" --dataset ""
t "an unknown option" 2 "unknown option '--bogus'" "$onnx" -o "$tmp/m.rkm" --dataset "$ds" --bogus 3
t "--batch 0" 2 "--batch '0': not a number 1..64" "$onnx" -o "$tmp/m.rkm" --dataset "$ds" --batch 0
t "--batch 65" 2 "--batch '65': not a number 1..64" "$onnx" -o "$tmp/m.rkm" --dataset "$ds" --batch 65
t "--batch 3x" 2 "--batch '3x': not a number 1..64" "$onnx" -o "$tmp/m.rkm" --dataset "$ds" --batch 3x
t "--batch twice" 2 "--batch given twice" "$onnx" -o "$tmp/m.rkm" --dataset "$ds" --batch 3 --batch 3
t "a custom string too long" 2 "--custom-string: longer than 1024 bytes" "$onnx" -o "$tmp/m.rkm" \
	--dataset "$ds" --custom-string "$(printf '%01025d' 0)"
t "an unknown algorithm" 2 "--algorithm 'minmax': not normal, mmse or kl_divergence" \
	"$onnx" -o "$tmp/m.rkm" --dataset "$ds" --algorithm minmax
t "two models" 2 "a second ONNX model 'b.onnx'" "$onnx" b.onnx -o "$tmp/m.rkm" --dataset "$ds"
t "-o twice" 2 "-o given twice" "$onnx" -o "$tmp/m.rkm" -o "$tmp/n.rkm" --dataset "$ds"
t "--per-layer twice" 2 "--per-layer given twice" "$onnx" -o "$tmp/m.rkm" --dataset "$ds" \
	--per-layer --per-layer
t "a missing model" 1 "$tmp/none.onnx: cannot open" "$tmp/none.onnx" -o "$tmp/m.rkm" --dataset "$ds"
head -c 100 "$onnx" > "$tmp/cut.onnx"
t "a truncated model" 1 "not a valid ONNX file" "$tmp/cut.onnx" -o "$tmp/m.rkm" --dataset "$ds"
t "a missing dataset" 1 "none.txt: cannot open the dataset file" "$onnx" -o "$tmp/m.rkm" \
	--dataset "$tmp/none.txt"
t "an unwritable output" 1 "$tmp/no/m.rkm: cannot write the model" "$onnx" -o "$tmp/no/m.rkm" \
	--dataset "$ds"
t "an unwritable 3.0 output" 1 "^rkaccel-convert: $tmp/no/m.rkm: cannot write the model: No such file" \
	"$onnx" -o "$tmp/no/m.rkm" --dataset "$ds" --batch 3
# Bad dataset.txt files: each message names the dataset file and the line.
mkdir -p "$tmp/ds"
cp models/digits/calib/000.npy "$tmp/ds/good.npy" 2>/dev/null ||
	/usr/bin/python3 -c 'import numpy, sys; numpy.save(sys.argv[1], numpy.zeros((1, 1, 8, 8), numpy.float32))' "$tmp/ds/good.npy"
/usr/bin/python3 -c 'import numpy, sys; numpy.save(sys.argv[1], numpy.zeros((1, 1, 9, 9), numpy.float32))' "$tmp/ds/big.npy"
printf 'good.npy\n\nnone.npy\n' > "$tmp/ds/missing.txt"
printf 'good.npy\ngood.npy good.npy\n' > "$tmp/ds/two.txt"
: > "$tmp/ds/empty.txt"
printf '# only a comment\n\n' > "$tmp/ds/comment.txt"
printf 'garbage' > "$tmp/ds/bad.npy"
printf 'good.npy\nbad.npy\n' > "$tmp/ds/badnpy.txt"
printf 'good.npy\ngood.npy\nbig.npy\n' > "$tmp/ds/big.txt"
head -c 40 models/digits/digits.onnx > "$tmp/ds/x.png"
printf 'x.png\n' > "$tmp/ds/badpng.txt"
t "a dataset path that does not exist" 1 "missing.txt:3: $tmp/ds/none.npy: cannot open" \
	"$onnx" -o "$tmp/m.rkm" --dataset "$tmp/ds/missing.txt"
t "two paths on a line for one input" 1 "two.txt:2: 2 paths for a model of 1 input" \
	"$onnx" -o "$tmp/m.rkm" --dataset "$tmp/ds/two.txt"
t "an empty dataset" 1 "empty.txt: no samples \(0 line" "$onnx" -o "$tmp/m.rkm" \
	--dataset "$tmp/ds/empty.txt"
t "a dataset of comments" 1 "comment.txt: no samples \(2 line" "$onnx" -o "$tmp/m.rkm" \
	--dataset "$tmp/ds/comment.txt"
t "an unreadable .npy" 1 "badnpy.txt:2: $tmp/ds/bad.npy: (not a .npy file|truncated)" \
	"$onnx" -o "$tmp/m.rkm" --dataset "$tmp/ds/badnpy.txt"
t "a sample of the wrong size" 1 "big.txt:3: $tmp/ds/big.npy: 81 elements, input 'pixels' takes 64" \
	"$onnx" -o "$tmp/m.rkm" --dataset "$tmp/ds/big.txt"
t "an undecodable image" 1 "badpng.txt:1: $tmp/ds/x.png: cannot decode the PNG" \
	"$onnx" -o "$tmp/m.rkm" --dataset "$tmp/ds/badpng.txt"
t "--mean without --std" 2 "--mean has 3 value\(s\), --std 0" "$onnx" -o "$tmp/m.rkm" \
	--dataset "$ds" --mean 1,2,3
t "--mean not numbers" 2 "--mean '1,x': not 1..4 numbers" "$onnx" -o "$tmp/m.rkm" \
	--dataset "$ds" --mean 1,x --std 1,1
t "--mean for 3 channels of a gray model" 1 "input 'pixels' has 1 channel\(s\): 3 mean/std" \
	"$onnx" -o "$tmp/m.rkm" --dataset "$ds" --mean 1,2,3 --std 1,1,1
t "--rgb2bgr of a gray model" 1 "and RGB2BGR \(3 channels\)" "$onnx" -o "$tmp/m.rkm" \
	--dataset "$ds" --rgb2bgr
n=$((n + 1))
if [ ! -e "$tmp/m.rkm" ] && [ ! -e "$tmp/n.rkm" ]; then
	echo "ok $n - rkaccel-convert: no refusal wrote a model file"
else
	echo "not ok $n - rkaccel-convert: a refusal wrote a model file"
	rc=1
fi
# The same bytes as digits_int8's model for the same options.
same() {
	local name=$1 ref=$2
	shift 2
	n=$((n + 1))
	if "$conv" "$onnx" -o "$tmp/$name.rkm" --dataset "$ds" "$@" > "$tmp/out" 2>&1 &&
		cmp -s "$tmp/$name.rkm" "$build/convert/$ref"; then
		echo "ok $n - rkaccel-convert ${*:-(defaults)} writes digits_int8's $ref byte for byte"
	else
		echo "not ok $n - rkaccel-convert ${*:-(defaults)} differs from digits_int8's $ref"
		sed 's/^/#   /' "$tmp/out" | head -n 5
		rc=1
	fi
}
same normal digits-normal.rkm
same mmse digits-mmse.rkm --algorithm mmse
same per-layer digits-normal-per-layer.rkm --per-layer
# --batch: a 3.0 file with the batch, the ONNX names and the custom string in it.
n=$((n + 1))
info=$build/$(dpkg --print-architecture)/bin/rkaccel-info
if "$conv" "$onnx" -o "$tmp/b3.rkml" --dataset "$ds" --batch 3 --custom-string "digits b3" \
	> "$tmp/out" 2>&1 && "$info" --model "$tmp/b3.rkml" > "$tmp/info" 2>&1 &&
	grep -q "format 3.x, batch 3, 6 nodes" "$tmp/info" && grep -q "^input: *pixels 3x8x8x1 i8" "$tmp/info" &&
	grep -q "^output: *logits 3x1x1x10 i32" "$tmp/info" && grep -q "^custom: *digits b3" "$tmp/info"; then
	echo "ok $n - rkaccel-convert --batch 3 writes a 3.0 file: batch 3, pixels/logits, the custom string"
else
	echo "not ok $n - rkaccel-convert --batch 3:"
	cat "$tmp/out" "$tmp/info" 2>/dev/null | sed 's/^/#   /' | head -n 12
	rc=1
fi
# Mean/std and RGB2BGR (python/tests/fold_models.py's seeded CNNs): folded
# into an unpadded first conv (a 2.0 file), recorded for a padded one (3.0),
# under ASan/UBSan; the same bytes twice; a wrong-size PNG named by its line.
fold=$tmp/fold
mkdir -p "$fold"
PYTHONPATH=python/tests /usr/bin/python3 -c 'import sys, fold_models; fold_models.make(sys.argv[1])' \
	"$fold" > "$fold/make.log" 2>&1 || { echo "Bail out! fold_models.make failed:"; tail -n 5 "$fold/make.log"; exit 1; }
# shellcheck disable=SC2054 # commas inside the option values
norm=(--mean 123.675,116.28,103.53 --std 58.395,57.12,57.375 --rgb2bgr)
san() {
	local name=$1 pat=$2 onnx=$3 out=$4 infopat=$5
	n=$((n + 1))
	if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		"$build/convert-san/rkaccel-convert" "$onnx" -o "$out" --dataset "$fold/dataset.txt" \
		"${norm[@]}" > "$tmp/out" 2>&1 && grep -q "$pat" "$tmp/out" &&
		"$info" --model "$out" > "$tmp/info" 2>&1 && grep -Eq "$infopat" "$tmp/info"; then
		echo "ok $n - rkaccel-convert (ASan/UBSan) $name"
	else
		echo "not ok $n - rkaccel-convert (ASan/UBSan) $name:"
		cat "$tmp/out" "$tmp/info" 2>/dev/null | sed 's/^/#   /' | head -n 8
		rc=1
	fi
}
san "--mean/--std/--rgb2bgr fold into an unpadded first conv (a 2.0 file)" \
	"mean/std and RGB2BGR folded into '/c1/Conv'" "$fold/fold.onnx" "$fold/f.rkm" "^model:.*format 1.x/2.x"
san "--mean/--std/--rgb2bgr of a padded first conv: not folded, in the 3.0 input record" \
	"not folded: its convolution pads" "$fold/padded.onnx" "$fold/p.rkml" "^input: *image 1x16x16x3 i8 BGR mean/std"
n=$((n + 1))
if "$conv" "$fold/fold.onnx" -o "$fold/f2.rkm" --dataset "$fold/dataset.txt" "${norm[@]}" \
	> "$tmp/out" 2>&1 && cmp -s "$fold/f.rkm" "$fold/f2.rkm"; then
	echo "ok $n - rkaccel-convert: the folded model is the same bytes (plain and ASan builds)"
else
	echo "not ok $n - rkaccel-convert: the folded model differs between runs"
	rc=1
fi
PYTHONPATH=python/tests /usr/bin/python3 -c 'import sys, numpy, fold_models
fold_models.write_png(sys.argv[1], numpy.zeros((9, 9, 3), numpy.uint8))' "$fold/small.png"
printf 'c00.png\nsmall.png\n' > "$fold/small.txt"
t "an image of the wrong size" 1 "small.txt:2: $fold/small.png: image 9x9 with 3 channel\(s\) does not fit input 'image'" \
	"$fold/fold.onnx" -o "$tmp/m.rkm" --dataset "$fold/small.txt" "${norm[@]}"
# A graph that is not a chain (lib/convert/tests/graph_models.py): residual
# adds, ReLU6, a padded max pool lower to a 3.0 graph the library compiles
# (plain and ASan/UBSan builds, the same bytes); a padded max pool off zero
# point -128 and an Add of two ReLU outputs are refused naming the node.
gm=$tmp/graph
/usr/bin/python3 lib/convert/tests/graph_models.py "$gm" > "$tmp/gm.log" 2>&1 ||
	{ echo "Bail out! graph_models.py failed:"; tail -n 5 "$tmp/gm.log"; exit 1; }
# compiles WHAT ONNX FILE SAYS: --batch 3 writes FILE, the summary says SAYS,
# and rkaccel-info compiles it for the RK3588.
compiles() {
	local what=$1 onnx=$2 file=$3 says=$4
	n=$((n + 1))
	if "$conv" "$onnx" -o "$file" --dataset "$gm/dataset.txt" --batch 3 > "$tmp/out" 2>&1 &&
		grep -q "$says" "$tmp/out" && "$info" --model "$file" > "$tmp/info" 2>&1 &&
		grep -Eq "^RK3588: +[0-9]+ tasks" "$tmp/info"; then
		echo "ok $n - rkaccel-convert: $what"
	else
		echo "not ok $n - rkaccel-convert: $what:"
		cat "$tmp/out" "$tmp/info" 2>/dev/null | sed 's/^/#   /' | head -n 12
		rc=1
	fi
}
compiles "residual adds, ReLU6 and a padded max pool give a 3.0 graph that compiles" \
	"$gm/residual.onnx" "$gm/r.rkml" "12 nodes (a graph: format 3.0)"
n=$((n + 1))
if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	"$build/convert-san/rkaccel-convert" "$gm/residual.onnx" -o "$gm/r2.rkml" \
	--dataset "$gm/dataset.txt" --batch 3 > "$tmp/out" 2>&1 && cmp -s "$gm/r.rkml" "$gm/r2.rkml"; then
	echo "ok $n - rkaccel-convert (ASan/UBSan): the residual model, the same bytes"
else
	echo "not ok $n - rkaccel-convert (ASan/UBSan): the residual model:"
	sed 's/^/#   /' "$tmp/out" | head -n 8
	rc=1
fi
t "a padded max pool at zero point other than -128" 1 \
	"node '/MaxPool' \(MaxPool\): padding with input zero point -?[0-9]+: the NPU pads a max pool with the zero point" \
	"$gm/pool_pad.onnx" -o "$tmp/m.rkml" --dataset "$gm/dataset.txt"
t "an Add of two ReLU outputs" 1 "node '/Add' \(Add\): neither '/Relu_output_0' nor '/Relu_1_output_0'" \
	"$gm/add_relu.onnx" -o "$tmp/m.rkml" --dataset "$gm/dataset.txt"
# A Softmax after the NPU runs on the CPU; a Sigmoid there is refused.
compiles "a classifier's Softmax runs on the CPU after the NPU; the graph compiles" \
	"$gm/softmax.onnx" "$gm/s.rkml" "10 out (float32: a softmax on the CPU)"
# Opset 11's Softmax (axis 1 of the rows coerced to 2-D) is opset 13's here:
# graph_models.py exports the one network at both, so the files are equal.
n=$((n + 1))
if "$conv" "$gm/softmax11.onnx" -o "$gm/s11.rkml" --dataset "$gm/dataset.txt" --batch 3 \
	> "$tmp/out" 2>&1 && cmp -s "$gm/s.rkml" "$gm/s11.rkml"; then
	echo "ok $n - rkaccel-convert: the classifier at opset 11 gives opset 13's bytes"
else
	echo "not ok $n - rkaccel-convert: the classifier at opset 11 differs from opset 13's:"
	sed 's/^/#   /' "$tmp/out" | head -n 8
	rc=1
fi
t "a Sigmoid after the NPU" 1 \
	"node '/tail/Sigmoid' \(Sigmoid\): runs on the CPU, but the NPU model format 3.0 has softmax and dequantize only there" \
	"$gm/sigmoid.onnx" -o "$tmp/m.rkml" --dataset "$gm/dataset.txt"
t "a concat input of 16 channels before the last" 1 \
	"node '/Concat' \(Concat\): input '/Relu_output_0' has 16 channels at offset 0: every input but the last needs a multiple of 32" \
	"$refs/concat/concat_bad.onnx" -o "$tmp/m.rkml" --dataset "$refs/concat/dataset.txt"
# Python's rkaccel.toolkit.RKNN over libconvert.so, numbered on from here;
# it prints the stream's plan (a counted one drifted from the tests).
# The package's __init__ loads librkaccel.so.2: this build's.
RKACCEL_CONVERT_LIB=$build/convert/libconvert.so \
	RKACCEL_LIB=$build/$(dpkg --print-architecture)/lib/librkaccel.so.2 PYTHONPATH=python \
	/usr/bin/python3 python/tests/test_toolkit.py "$conv" $((n + 1)) || rc=1
# The softmax models through the whole flow (lib/convert/tests/softmax_int8.c):
# bit-exact with the graph reference, close to float. Its own TAP stream.
echo "# softmax_int8 ($build/convert)"
"$build/convert/softmax_int8" "$gm" softmax softmax11 seg_softmax || rc=1
echo "# softmax_int8 under ASan/UBSan ($build/convert-san)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	"$build/convert-san/softmax_int8" "$gm" softmax seg_softmax || rc=1
exit $rc
