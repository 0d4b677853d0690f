#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# torchvision's MobileNetV2, ResNet-18 and SqueezeNet 1.1 from ONNX for the guests
# (selftests/zoo_test's tv_* variants; issue 27, item 6), made natively on
# the host in two steps:
#
# 1. scripts/tv-models.py (/usr/bin/python3: Debian's torch, torchvision,
#    skimage) builds the networks (seeded weights, batch norms recomputed
#    on skimage's photos), their calibration set (dataset-S.txt), test
#    images and PyTorch's logits, and exports ONNX at 224x224 and 96x96.
#    About 40 s and 90 MB; kept outside the checkout, so that a fresh clone
#    or `make clean` does not redo it, in
#    ${RKACCEL_CACHE:-${XDG_CACHE_HOME:-~/.cache}/rkaccel}/tv/KEY, KEY a
#    hash of tv-models.py and the three packages' versions (older keys are
#    removed).
# 2. lib/convert's tv_ref converts each network at each size with
#    rkaccel-convert's code (normal, per channel, 20 images), writes the
#    3.0 files at batch 3 and 2, holds the float executor to PyTorch and
#    the int8 logits (host int8 executor, selftests/graph_ref.h) to the
#    float ones by cosine, and writes the first 3 images' inputs and the
#    host's outputs. Into $BUILD/tv (tv.txt, tv_NET-SxS-bB.rkml, .in,
#    .expected, log); qemu-run.sh copies the files of the guest's size to
#    /data/zoo. Redone only when the models or the converter changed; the
#    results are kept in the cache too (tv/out-OKEY, OKEY a hash of the
#    model key, the compiler and every source tv_ref is built from), so a
#    fresh clone copies them instead of converting again.
#
# Prints one line per network and size:
#   tv: NET SxS: float vs torch max rel diff X, int8 cosine min Y mean Z on N images
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
out=$build/tv
cache=${RKACCEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rkaccel}/tv
py=/usr/bin/python3	# Debian's torch is for it, not a pyenv python on PATH
# NET:SIZE:MIN_COSINE (measured: see Documentation/convert.rst, "torchvision networks")
runs=(mobilenet_v2:224:0.95 resnet18:224:0.995 squeezenet:224:0.999 mobilenet_v2:96:0.9
	resnet18:96:0.99 squeezenet:96:0.999)
cd "$top"

vers=$(dpkg-query -W -f='${Package} ${Version}\n' python3-torch python3-torchvision \
	python3-skimage)
key=$({ cat scripts/tv-models.py; echo "$vers"; } | sha256sum | cut -c1-16)
models=$cache/$key
if [ ! -f "$models/info.txt" ]; then
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	if ! "$py" scripts/tv-models.py "$tmp" > "$tmp/make.log" 2>&1; then
		echo "tv-data: tv-models.py failed:" >&2
		cat "$tmp/make.log" >&2
		exit 1
	fi
	mv "$tmp" "$models"
	trap - EXIT
	# older keys go (not a run still making its own: tmp.*)
	find "$cache" -mindepth 1 -maxdepth 1 ! -name "$key" ! -name 'tmp.*' -exec rm -rf {} +
fi

make -s -f lib/convert/convert.mk OUT="$build/convert" "$build/convert/tv_ref"
if [ -f "$out/tv.txt" ] && [ "$(cat "$out/key" 2>/dev/null)" = "$key" ] &&
	[ -z "$(find "$build/convert/tv_ref" -newer "$out/tv.txt" -print -quit)" ]; then
	grep '^tv: ' "$out/log"
	exit 0
fi
# The conversions' results outlive the checkout too (a fresh clone's make
# check does not redo a minute or two of them), keyed by the models and by
# every source tv_ref is built from, and the compiler: any change to the
# converter, the model library or the references converts again.
okey=$({ echo "$key"; gcc --version | head -1
	cat lib/convert/*.[ch] lib/convert/convert.mk lib/convert/tests/tv_ref.c \
		lib/convert/tests/tap.h lib/model/*.[ch] lib/include/*.h selftests/*.h \
		scripts/tv-data.sh; } | sha256sum | cut -c1-16)
saved=$cache/out-$okey
if [ -f "$saved/tv.txt" ]; then
	rm -rf "$out"
	cp -r "$saved" "$out"
	touch "$out/tv.txt"
	grep '^tv: ' "$out/log"
	exit 0
fi
tmp=$(mktemp -d "$build/tv.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for r in "${runs[@]}"; do
	IFS=: read -r net size bound <<< "$r"
	if ! "$build/convert/tv_ref" "$models" "$net" "$size" "$bound" "$tmp" \
		>> "$tmp/log" 2>&1; then
		echo "tv-data: tv_ref $net $size failed:" >&2
		cat "$tmp/log" >&2
		exit 1
	fi
done
echo "$key" > "$tmp/key"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
# keep this key's results only (a copy first, then the rename: never half)
find "$cache" -mindepth 1 -maxdepth 1 -name 'out-*' -exec rm -rf {} +
cp -r "$out" "$cache/tmp.out-$okey" && mv "$cache/tmp.out-$okey" "$saved"
grep '^tv: ' "$out/log"
