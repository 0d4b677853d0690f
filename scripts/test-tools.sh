#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Host test of the tools' command lines, printing TAP (make check runs it
# from check-host.sh): numbers are decimal (no base prefix, sign or leading
# zero), lists have no empty field, files are opened without blocking (a
# FIFO with no peer is refused at once), each error names what is wrong.
# Needs no device: every case fails before one is opened, or fails to open it.
#   test-tools.sh [BINDIR]     (default build/<host arch>/bin)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
arch=amd64
[ "$(uname -m)" = aarch64 ] && arch=arm64
bin=${1:-${BUILD:-$top/build}/$arch/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

# t NAME STATUS PATTERN CMD...: CMD exits with STATUS within 10 s and its
# stderr matches the extended regex PATTERN (empty: anything).
t() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	n=$((n + 1))
	timeout 10 "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null
	rc=$?
	if [ "$rc" -eq "$want" ] && { [ -z "$pat" ] || grep -Eq -- "$pat" "$tmp/err"; }; then
		echo "ok $n $name"
	else
		echo "not ok $n $name"
		echo "#   exit $rc (want $want${pat:+, stderr matching '$pat'}); ran: $*"
		[ "$rc" -eq 124 ] && echo "#   timed out: it blocked"
		sed 's/^/#   stderr: /' "$tmp/err" | head -n 5
		failed=$((failed + 1))
	fi
}

mk=$bin/rkaccel-mkmodel run=$bin/rkaccel-run top=$bin/rkaccel-top
bench=$bin/rkaccel-bench info=$bin/rkaccel-info
fifo=$tmp/fifo
mkfifo "$fifo"
echo "TAP version 13"

# rkaccel-mkmodel --layers: an empty field is an error naming the field.
for c in "4,,4:2" ",4,4:1" "4,4,:3" "4,,,,8:2" ",:1" ":1"; do
	l=${c%:*} f=${c##*:}
	t "mkmodel --layers '$l' names empty field $f" 2 "field $f is empty" \
		"$mk" --random 1 --rows 2 --layers "$l" -o "$tmp/m"
done
[ -e "$tmp/m" ] && { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n no model written"; }
# Decimal only: a leading zero, a base prefix, a sign or a blank is refused.
t "mkmodel --layers 010 is not octal" 2 "field 1 '010' has a leading zero" \
	"$mk" --random 1 --rows 2 --layers 010,4 -o "$tmp/m"
t "mkmodel --layers 4,08" 2 "field 2 '08' has a leading zero" \
	"$mk" --random 1 --rows 2 --layers 4,08 -o "$tmp/m"
t "mkmodel --layers 0x10" 2 "field 1 '0x10' is not a decimal number" \
	"$mk" --random 1 --rows 2 --layers 0x10,4 -o "$tmp/m"
t "mkmodel --layers +4" 2 "field 2 '\+4' is not a decimal number" \
	"$mk" --random 1 --rows 2 --layers 4,+4 -o "$tmp/m"
t "mkmodel --layers ' 4'" 2 "not a decimal number" \
	"$mk" --random 1 --rows 2 --layers " 4,4" -o "$tmp/m"
t "mkmodel --layers 0" 2 "field 2 '0' is out of range" \
	"$mk" --random 1 --rows 2 --layers 4,0 -o "$tmp/m"
t "mkmodel --layers 32769" 2 "field 1 '32769' is out of range" \
	"$mk" --random 1 --rows 2 --layers 32769,4 -o "$tmp/m"
t "mkmodel --layers 18 fields" 2 "more than 17 fields" \
	"$mk" --random 1 --rows 2 --layers 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18 -o "$tmp/m"
t "mkmodel --layers one count" 2 "at least two" \
	"$mk" --random 1 --rows 2 --layers 8 -o "$tmp/m"
t "mkmodel --random 010" 2 "--random '010' has a leading zero" \
	"$mk" --random 010 --rows 2 --layers 4,4 -o "$tmp/m"
t "mkmodel --random 0x1" 2 "not a decimal number" \
	"$mk" --random 0x1 --rows 2 --layers 4,4 -o "$tmp/m"
t "mkmodel --rows 010" 2 "--rows '010' has a leading zero" \
	"$mk" --random 1 --rows 010 --layers 4,4 -o "$tmp/m"
t "mkmodel --rows empty" 2 "--rows '' is empty" \
	"$mk" --random 1 --rows "" --layers 4,4 -o "$tmp/m"
t "mkmodel --layers 10,8 is decimal" 0 "" \
	"$mk" --random 0 --rows 2 --layers 10,8 -o "$tmp/m"
t "mkmodel --dump shows 10 -> 8" 0 "" \
	sh -c "'$mk' --dump '$tmp/m' | grep -q 'layer 0: 10 -> 8'"
# Paths: a FIFO with no peer is refused at once, never waited for.
t "mkmodel --dump FIFO" 1 "is not a regular file" "$mk" --dump "$fifo"
t "mkmodel --desc FIFO" 1 "is not a regular file" "$mk" --desc "$fifo" -o "$tmp/m2"
t "mkmodel -o FIFO" 1 "FIFO with no reader" \
	"$mk" --random 1 --rows 2 --layers 4,4 -o "$fifo"
t "mkmodel --dump directory" 1 "is a directory" "$mk" --dump "$tmp"

# The description file's numbers and lists follow the same rules.
head -c 16 /dev/zero > "$tmp/w"
head -c 16 /dev/zero > "$tmp/b"
desc() {
	printf 'rows %s\nlayer in=%s out=4 flags=%s in_zp=%s in_scale=0.5 weight_scale=0.5 out_scale=0.5 weights=%s bias=b\n' \
		"$1" "$2" "$3" "${5:-0}" "$4" > "$tmp/d.txt"
}
desc 2 4 relu w
t "mkmodel --desc valid" 0 "" "$mk" --desc "$tmp/d.txt" -o "$tmp/m2"
desc 2 04 relu w
t "desc in=04" 1 "bad value '04' for in" "$mk" --desc "$tmp/d.txt" -o "$tmp/m2"
desc 2 0x4 relu w
t "desc in=0x4" 1 "bad value '0x4' for in" "$mk" --desc "$tmp/d.txt" -o "$tmp/m2"
desc 02 4 relu w
t "desc rows 02" 1 "rows needs a number" "$mk" --desc "$tmp/d.txt" -o "$tmp/m2"
desc 2 4 relu, w
t "desc flags=relu," 1 "bad value 'relu,' for flags" "$mk" --desc "$tmp/d.txt" -o "$tmp/m2"
desc 2 4 ,relu w
t "desc flags=,relu" 1 "bad value ',relu' for flags" "$mk" --desc "$tmp/d.txt" -o "$tmp/m2"
desc 2 4 relu fifo
t "desc weights=FIFO" 1 "fifo: is not a regular file" "$mk" --desc "$tmp/d.txt" -o "$tmp/m2"
desc 2 4 relu w -3
t "desc in_zp=-3" 0 "" "$mk" --desc "$tmp/d.txt" -o "$tmp/m2"
desc 2 4 relu w -03
t "desc in_zp=-03" 1 "bad value '-03' for in_zp" "$mk" --desc "$tmp/d.txt" -o "$tmp/m2"
desc 2 4 relu w +3
t "desc in_zp=+3" 1 "bad value '\+3' for in_zp" "$mk" --desc "$tmp/d.txt" -o "$tmp/m2"
desc 2 4 relu w -
t "desc in_zp=-" 1 "bad value '-' for in_zp" "$mk" --desc "$tmp/d.txt" -o "$tmp/m2"

# rkaccel-run: the same numbers and paths, all checked before any device.
"$mk" --random 1 --rows 2 --layers 4,4 -o "$tmp/m"
for v in 010 0x2 "" 0 65 -1 " 2"; do
	t "run --batch '$v'" 2 "--batch '$v'" "$run" "$tmp/m" --batch "$v"
done
t "run --seed 010" 2 "--seed '010' has a leading zero" "$run" "$tmp/m" --seed 010
t "run --input with --seed" 2 "exclude each other" \
	"$run" "$tmp/m" --seed 2 --input "$tmp/w"
t "run --input ''" 2 "needs a path" "$run" "$tmp/m" --input ""
t "run MODEL FIFO" 1 "not a regular file \(a FIFO\)" "$run" "$fifo"
t "run --input FIFO" 1 "--input .*: is not a regular file" "$run" "$tmp/m" --input "$fifo"
t "run --expect FIFO" 1 "--expect .*: is not a regular file" "$run" "$tmp/m" --expect "$fifo"
t "run --output FIFO" 1 "--output .*: a FIFO with no reader" "$run" "$tmp/m" --output "$fifo"
t "run --device FIFO" 1 "No such device" "$run" "$tmp/m" --device "$fifo"
t "run --dump-layers ''" 2 "needs a path" "$run" "$tmp/m" --dump-layers ""
t "run --dump-layers (no value)" 2 "--dump-layers needs a value" "$run" "$tmp/m" --dump-layers
t "run --dump-layers FILE" 1 "--dump-layers .*: Not a directory" \
	"$run" "$tmp/m" --dump-layers "$tmp/m"
t "run --dump-layers in no folder" 1 "--dump-layers .*: No such file or directory" \
	"$run" "$tmp/m" --dump-layers "$tmp/none/dump"

# rkaccel-top, rkaccel-bench, rkaccel-info.
for v in 010 0x10 "" 0 3600001 1s; do
	t "top --interval '$v'" 2 "--interval '$v'" "$top" --interval "$v"
done
t "top --iterations 0" 2 "--iterations '0' is out of range" "$top" --iterations 0
t "top --iterations 07" 2 "leading zero" "$top" --iterations 07
t "top --device FIFO" 1 "" "$top" --iterations 1 --device "$fifo"
t "bench --json FIFO" 1 "--json .*: a FIFO with no reader" "$bench" --json "$fifo"
t "bench --json ''" 2 "needs a path" "$bench" --json ""
t "bench --nets --submit-only" 2 "exclude each other" "$bench" --nets --submit-only
t "bench --host-io --nets" 2 "exclude each other" "$bench" --host-io --nets
# (its figures go to stdout: sent to stderr for t's match)
t "bench --host-io (no device)" 0 '"host.mobilenet_v2.b3_us": [0-9]' \
	sh -c '"$0" --host-io --rounds 5 >&2' "$bench"
t "bench --host-io: the slowest slice" 0 '"host.mobilenet_v2.b3_slice_us": [0-9]' \
	sh -c '"$0" --host-io --rounds 5 >&2' "$bench"
t "info FIFO" 1 "No such device" "$info" "$fifo"

# rkaccel-info --model: a 2.0 network shown as its 3.0 graph, errors named.
printf 'input 8x8x3\nconv 3x3 s2 c8\npw c8 linear\nadd 1\navgpool global\nfc 4\n' > "$tmp/net.txt"
"$mk" --net "$tmp/net.txt" --seed 2 -o "$tmp/net.rkml" > /dev/null
t "info --model 2.0 file" 0 "" "$info" --model "$tmp/net.rkml"
n=$((n + 1))
if grep -Eq '^ +2  add +layer1.acc 1x4x4x8 i32, layer0 1x4x4x8 i8 ' "$tmp/out" &&
	grep -Eq '^ +3  global_avgpool ' "$tmp/out"; then
	echo "ok $n info --model prints the graph as a table"
else
	echo "not ok $n info --model prints the graph as a table"
	sed 's/^/#   stdout: /' "$tmp/out" | head -n 12
	failed=$((failed + 1))
fi
# the same network through mkmodel --to-graph: a 3.0 file, the same table
"$mk" --to-graph "$tmp/net.rkml" -o "$tmp/net3.rkml" > /dev/null
t "info --model 3.0 file" 0 "" "$info" --model "$tmp/net3.rkml"
n=$((n + 1))
if grep -q 'format 3.x, batch 1, 5 nodes' "$tmp/out" &&
	grep -Eq '^ +2  add +layer1.acc 1x4x4x8 i32, layer0 1x4x4x8 i8 ' "$tmp/out"; then
	echo "ok $n info --model reads the 3.0 file mkmodel --to-graph wrote"
else
	echo "not ok $n info --model reads the 3.0 file mkmodel --to-graph wrote"
	sed 's/^/#   stdout: /' "$tmp/out" | head -n 12
	failed=$((failed + 1))
fi
t "mkmodel --to-graph --seed" 2 "--to-graph takes -o FILE only" \
	"$mk" --to-graph "$tmp/net.rkml" --seed 1 -o "$tmp/x"
t "mkmodel --to-graph of a 3.0 file" 1 "version 3.0 is newer" \
	"$mk" --to-graph "$tmp/net3.rkml" -o "$tmp/x"
t "info --model FIFO" 1 "not a regular file \(a FIFO\)" "$info" --model "$fifo"
t "info --model missing" 1 "No such file" "$info" --model "$tmp/none"
t "info --model ''" 2 "usage" "$info" --model ""

echo "1..$n"
[ "$failed" -eq 0 ]
