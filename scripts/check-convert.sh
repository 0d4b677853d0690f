#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ONNX converter's host test (lib/convert, host only): builds the library
# and convert_test twice (plain, and with ASan/UBSan), makes the test models
# and PyTorch's reference outputs with lib/convert/tests/make_refs.py, then
# runs both builds over them. Then digits_int8: the trained digits model
# converted to int8 (each calibration algorithm, per channel and per layer)
# and its top-1, float against the host int8 executor; it prints the line
# "digits: float top-1 X%, int8 top-1 Y% on N images" once (normal). TAP
# from each; fails if any fails.
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
	"$build/convert/digits_int8" models/digits "$build/convert/digits.rkm" $args || rc=1
done
echo "# digits_int8 kl_divergence under ASan/UBSan ($build/convert-san)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	"$build/convert-san/digits_int8" models/digits "$build/convert-san/digits.rkm" \
	kl_divergence || rc=1
exit $rc
