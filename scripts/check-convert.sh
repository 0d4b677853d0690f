#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ONNX converter's host test (lib/convert, host only): builds the library
# and convert_test twice (plain, and with ASan/UBSan), makes the test models
# and PyTorch's reference outputs with lib/convert/tests/make_refs.py, then
# runs both builds over them. TAP from each; fails if either fails.
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
exit $rc
