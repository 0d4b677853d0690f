#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Which functions of the board code (kernel/rkaccel_hw*.c) run in a guest,
# and how many source lines they hold. A kprobe on every function symbol of
# those files, set while rkaccel.ko is out so that the probe runs under
# them; then the modules, selftests/suite.list (or LIST) and the probes'
# hit counts (kprobe_profile). Inlined static helpers have no symbol: their
# lines count with their callers. A function counts as run when entered
# once, so the lines are an upper bound of the lines executed.
# usage: hw-coverage.sh ARCH SOC [LIST]   (after make; report on stdout)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
arch=$1 soc=$2 list=${3:-$top/selftests/suite.list}
objs=("$build/$arch"/src/kernel/rkaccel_hw*.o)
work=$build/logs/hwcov-$arch-$soc
mkdir -p "$build/logs"

# function symbol -> file, from the objects rkaccel.ko was linked from
for o in "${objs[@]}"; do
	nm --defined-only "$o" | awk -v f="$(basename "${o%.o}").c" \
		'$2 ~ /^[tT]$/ && $3 ~ /^[A-Za-z_]/ && $3 !~ /^__|\./ { print $3, f }'
done | sort -u > "$work.funcs"

{
	echo "rmmod rkaccel_sim; rmmod rkaccel"
	# sysfs has the mount point; tracefs is not mounted on it by itself
	printf '[ -e /sys/kernel/tracing/kprobe_events ] || mount -t tracefs none /sys/kernel/tracing; cd /sys/kernel/tracing; '
	printf 'echo 0 > tracing_on; '
	awk '{ printf "echo \"p:rkhw/%s rkaccel:%s\" >> kprobe_events; ", $1, $1 }' "$work.funcs"
	echo 'echo 1 > events/rkhw/enable; echo "# $(wc -l < kprobe_events) probes"'
	echo 'insmod /modules/rkaccel.ko && insmod /modules/rkaccel_sim.ko $(grep -qs rkaccel,sim-cru /proc/device-tree/*/compatible || echo sim=$RKACCEL_SOC); sleep 2'
	grep -v python3 "$list"
	echo "sed 's/^/HWCOV /' /sys/kernel/tracing/kprobe_profile"
} > "$work.list"

"$top/scripts/qemu-run.sh" "$arch" "$soc" "$work.list" "hwcov" > /dev/null || true
log=$build/logs/$arch-$soc-hwcov.log

python3 - "$work.funcs" "$log" "$top/kernel" <<'EOF'
import re, sys
funcs_file, log, kdir = sys.argv[1:4]
funcs = dict(l.split() for l in open(funcs_file))
hits = {}
for line in open(log, errors='replace'):
    m = re.match(r'HWCOV\s+(\S+)\s+(\d+)\s+(\d+)', line)
    if m:
        hits[m.group(1)] = int(m.group(2))

def body_lines(path):
    """Non-blank source lines of each function: signature to closing brace."""
    src = open(path).read().split('\n')
    out = {}
    for i, line in enumerate(src):
        if line != '{':
            continue
        j = i - 1
        while j > 0 and src[j].startswith(('\t', ' ')):
            j -= 1
        m = re.search(r'(\w+)\(', src[j])
        if not m:
            continue
        k = i
        while k < len(src) and src[k] != '}':
            k += 1
        out[m.group(1)] = sum(1 for x in src[j:k + 1] if x.strip())
    return out

total_f = run_f = total_l = run_l = 0
per_file = {}
lines = {}
for f in sorted(set(funcs.values())):
    lines.update(body_lines(f"{kdir}/{f}"))
for fn, f in sorted(funcs.items(), key=lambda x: (x[1], x[0])):
    n = lines.get(fn, 0)
    h = hits.get(fn, 0)
    pf = per_file.setdefault(f, [0, 0, 0, 0])
    pf[0] += 1; pf[2] += n
    if h:
        pf[1] += 1; pf[3] += n
    print(f"{f:22s} {fn:36s} {n:4d} lines  {h:8d} calls")
if not hits:
    print("no kprobe_profile in the log: the guest run failed")
    sys.exit(1)
print()
for f, (tf, rf, tl, rl) in sorted(per_file.items()):
    print(f"{f:22s} functions {rf:3d}/{tf:3d}  lines {rl:4d}/{tl:4d}")
    total_f += tf; run_f += rf; total_l += tl; run_l += rl
print(f"{'rkaccel_hw*.c':22s} functions {run_f:3d}/{total_f:3d}  lines {run_l:4d}/{total_l:4d}"
      f" ({100.0 * run_l / max(total_l, 1):.0f}%)")
EOF
