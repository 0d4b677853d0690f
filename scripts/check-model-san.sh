#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The model unit's host tests under ASan and UBSan: lib/model/*.c with
# graph_test (model format 3.0, its seeded parser fuzz included) and
# model_test (1.x/2.x, its field fuzz included), and dag_test (graphs
# lowered and compiled: the compiler's units too), built here with
# -fsanitize=address,undefined and run once each. A sanitizer report aborts
# the test, and each graph_test case asks LeakSanitizer for leaks.
#   GRAPH_FUZZ_SECONDS=N   the 3.0 parser's fuzz budget (default 3)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
out=$build/model-san
ksft=$build/kernel-pkgs/src/tree/tools/testing/selftests
cd "$top"
mkdir -p "$out"

flags=(-std=c11 -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Ilib/include
	-isystem "$ksft" -Wno-sign-compare -Wno-unused-parameter
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
for t in graph_test model_test; do
	gcc "${flags[@]}" -o "$out/$t" "selftests/$t.c" lib/model/*.c -lm
done
# dag_test lowers and compiles (its device case skips on the host): the compiler too.
gcc "${flags[@]}" -Iuapi/drm -Iinclude -Itools -I/usr/include/libdrm -o "$out/dag_test" \
	selftests/dag_test.c lib/model/*.c lib/compiler/*.c lib/runtime/*.c -ldrm -lpthread -lm

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
export RKACCEL_GRAPH_FUZZ_SECONDS=${GRAPH_FUZZ_SECONDS:-3}
rc=0
echo "# graph_test under ASan/UBSan ($out), fuzz for $RKACCEL_GRAPH_FUZZ_SECONDS s"
"$out/graph_test" || rc=1
echo "# model_test under ASan/UBSan"
"$out/model_test" || rc=1
echo "# dag_test under ASan/UBSan"
"$out/dag_test" || rc=1
exit $rc
