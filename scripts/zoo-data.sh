#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The network zoo's data for the guests (selftests/zoo_test), made natively
# on the host: first graph_ref_test (the graph reference against the chain
# reference, no device), then selftests/zoo_ref.c built for the host writes,
# for every network of tools/zoo.h at its full and at a small input size,
# three seeded input images, graph_ref.h's output bytes for them, the
# batch-3 model file and a line of zoo.txt (the model files' CRC-32 and
# size at batch 3 and 2: the guest writes the same files from the same
# seed). Into $BUILD/zoo; qemu-run.sh copies zoo.txt, the inputs and the
# expected outputs (not the model files: VGG's head alone is 103 MB) to
# /data/zoo. Redone only when the zoo, the references or librkaccel
# changed; prints one line per network (nodes, MACs, weight bytes, output
# spread, tasks and regcmd bytes for the RK3588 or the lowering's refusal).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
out=$build/zoo
host_arch=amd64
[ "$(uname -m)" = aarch64 ] && host_arch=arm64
lib=$build/$host_arch/lib/librkaccel.a
cd "$top"

[ -f "$lib" ] || { echo "zoo-data: $lib missing (make first)" >&2; exit 1; }
srcs=(tools/zoo.h tools/zoo_build.h tools/graph_cost.h selftests/graph_ref.h
	selftests/quant_ref.h selftests/zoo_ref.c "$lib")
if [ -f "$out/zoo.txt" ] && [ -f "$out/log" ] &&
	[ -z "$(find "${srcs[@]}" -newer "$out/zoo.txt" -print -quit)" ]; then
	grep '^zoo: ' "$out/log"
	exit 0
fi
tmp=$(mktemp -d "$build/zoo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! "$build/$host_arch/selftests/graph_ref_test" > "$tmp/graph_ref_test.log" 2>&1; then
	echo "zoo-data: graph_ref_test failed:" >&2
	cat "$tmp/graph_ref_test.log" >&2
	exit 1
fi
# The flags of scripts/user.mk, for the host, with libdrm for librkaccel.
gcc -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Ilib/include -Iuapi/drm \
	-Iinclude -Itools -Iselftests -I/usr/include/libdrm -o "$tmp/zoo_ref" selftests/zoo_ref.c "$lib" \
	-ldrm -lpthread -lm
if ! "$tmp/zoo_ref" "$tmp" "$@" > "$tmp/log" 2>&1; then
	echo "zoo-data: zoo_ref failed:" >&2
	cat "$tmp/log" >&2
	exit 1
fi
rm -f "$tmp/zoo_ref"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
grep '^zoo: ' "$out/log"
