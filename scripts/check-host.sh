#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Host-side checks, one TAP line each: checkpatch --strict, kernel-doc, sparse
# and W=1 builds for both arches, device-tree bindings and overlays, the
# install file list and a DKMS-style arm64 build, the man pages, and the
# userspace that needs no device (tools' command lines, model files 1.x to
# 3.0 plain and under ASan/UBSan, the ONNX converter) run on the host.
# Writes "passed failed skipped" to build/logs/host.result.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/kernel-pkgs/src/tree
logs=$build/logs
n=0 pass=0 fail=0
mkdir -p "$logs"
cd "$top" || exit 1

check() {
	local name=$1 log=$logs/host-$1.log; shift
	n=$((n + 1))
	if "$@" > "$log" 2>&1; then
		echo "ok $n host.$name"
		pass=$((pass + 1))
	else
		echo "not ok $n host.$name"
		sed 's/^/#   /' "$log" | tail -n 30
		fail=$((fail + 1))
	fi
}

# checkpatch exits 0 on warnings; --strict output must be empty of findings.
# The compat header is the one place allowed to compare kernel versions.
checkpatch() {
	local out
	out=$(perl "$tree/scripts/checkpatch.pl" --strict --no-tree --terse --show-types \
		--ignore LINUX_VERSION_CODE -f "$@") || true
	echo "$out"
	! grep -q 'ERROR\|WARNING\|CHECK' <<<"$out"
}

kernel_files() {
	ls kernel/*.c kernel/*.h kernel/sim/*.c kernel/sim/*.h include/*.h uapi/drm/*.h \
		selftests/modules/*.c
}

# rkaccel.ko is what a board loads: the simulator lives in rkaccel_sim.ko
# only. The top of kernel/ holds the driver's files alone (the simulator's
# are in kernel/sim/); no symbol of the simulator's files, defined or used,
# in either arch's build, and the simulator's module does need the driver.
board_module_clean() {
	local arch ko bad
	bad=$(find kernel -maxdepth 1 -type f -name '*sim*')
	[ -z "$bad" ] || { echo "simulator files at the top of kernel/:"; echo "$bad"; return 1; }
	for arch in amd64 arm64; do
		ko=$build/$arch/kernel/rkaccel.ko
		[ -f "$ko" ] || { echo "$ko missing"; return 1; }
		bad=$(nm "$ko" | grep -E ' (rkaccel_sim|sim_)[a-z_0-9]*$')
		[ -z "$bad" ] || { echo "$arch: simulator symbols in rkaccel.ko:"; echo "$bad"; return 1; }
		modinfo -F depends "$build/$arch/kernel/rkaccel_sim.ko" | grep -qw rkaccel || {
			echo "$arch: rkaccel_sim.ko does not depend on rkaccel.ko"; return 1; }
		echo "$arch: rkaccel.ko $(nm --defined-only "$ko" | wc -l) symbols, none of the simulator"
	done
}

kerneldoc() {
	local out
	out=$(perl "$tree/scripts/kernel-doc" -none -Wall "$@" 2>&1)
	echo "$out"
	[ -z "$out" ]
}

# Man pages: groff with every warning on must have nothing to say.
# A ".so man3/x.3" alias resolves as it will when installed: man3 -> here.
manlint() {
	local f out rc=0 root
	root=$(mktemp -d)
	ln -s "$top/Documentation/man" "$root/man3"
	for f in "$@"; do
		out=$(groff -man -ww -z -I "$root" "$f" 2>&1)
		[ -z "$out" ] || { echo "$f: $out"; rc=1; }
	done
	rm -rf "$root"
	return $rc
}

# kselftest's EXPECT_*() and ASSERT_*() are a statement and then a loop that
# prints their TH_LOG() and bails: the body of an unbraced for, while or if,
# the log runs once after the loop (with the last index) and an ASSERT does
# not stop it. Such bodies get braces.
asserts_braced() {
	python3 - "$@" <<'PY'
import re, sys
bad = 0
for path in sys.argv[1:]:
    lines = open(path).read().split("\n")
    for i, l in enumerate(lines[:-1]):
        head = re.match(r"\s*((for|while|if)\s*\(.*\)|else)\s*$", l)
        if head and l.count("(") == l.count(")") and \
           re.match(r"\s*(EXPECT|ASSERT)_\w+\(", lines[i + 1]):
            print(f"{path}:{i + 2}: unbraced {head.group(1).split('(')[0].strip()} body")
            bad += 1
sys.exit(1 if bad else 0)
PY
}

echo "TAP version 13"
check checkpatch_strict checkpatch $(kernel_files)
check kernel_doc kerneldoc uapi/drm/*.h kernel/*.h kernel/sim/*.h include/*.h
check module_amd64_W1 scripts/build-module.sh amd64
check module_arm64_W1 scripts/build-module.sh arm64
check sparse_amd64 scripts/build-module.sh amd64 C=2
check board_module_has_no_simulator board_module_clean
check dt_bindings scripts/check-dt.sh bindings
check dt_examples scripts/check-dt.sh examples
check dt_overlays scripts/check-dt.sh overlays
check install_files scripts/check-install.sh files
check lib_shared_symbols scripts/check-install.sh shared
check dkms_build_arm64 scripts/check-install.sh dkms
check man_pages manlint Documentation/man/*.[0-9]
check selftest_asserts_braced asserts_braced selftests/*.c selftests/*.h
# Userspace that needs no device, built for this host by make all.
host_arch=amd64
[ "$(uname -m)" = aarch64 ] && host_arch=arm64
check tools_cli scripts/test-tools.sh "$build/$host_arch/bin"
check model_file "$build/$host_arch/selftests/model_test"
check graph_file "$build/$host_arch/selftests/graph_test"
check native_layout "$build/$host_arch/selftests/layout_test"
# Every layer shape of six ImageNet networks plans (issue 26): tasks per layer.
check layer_tiling "$build/$host_arch/selftests/tiling_test"
# Graphs that are not chains (branches, concat, 30 layers): lowered and compiled on the host.
check dag_compile "$build/$host_arch/selftests/dag_test"
# The model unit again under ASan/UBSan: both tests, the 3.0 parser fuzzed.
check model_asan_ubsan scripts/check-model-san.sh
# The ONNX converter (host only): its own TAP, plain and under ASan/UBSan.
check onnx_converter scripts/check-convert.sh
echo "1..$n"
echo "$pass $fail 0" > "$logs/host.result"
[ "$fail" -eq 0 ]
