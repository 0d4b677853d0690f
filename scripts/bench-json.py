#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Merge the BENCH-JSON lines of rkaccel-bench runs into one JSON object.

usage: bench-json.py RK3588_LOG RK3576_LOG [CONVERT_LOG [HOST_IO_LOG]]  (to stdout)
       bench-json.py --check LOG...         (exit 1 unless each log has valid JSON
                                             with its SoC's named figures, each
                                             with its spread)
       bench-json.py --table BENCH_JSON     (the named figures: median [min..max])
The RK3588 run gives every figure (its log also holds rkaccel-bench --nets'
net.<network>.* line: all BENCH-JSON lines of a log are merged); the RK3576
run adds its rk3576.* ones, scripts/bench-convert.sh's log the convert.*
ones, rkaccel-bench --host-io's the host.* ones and, from them and the
RK3588 run's net.mobilenetv2.ms_1ghz, host.mobilenet_v2.b3_fraction: the
host's work around a batch-3 inference over its device time (three images
on three cores: one image's time), on one thread, and b3_slice_fraction:
its slowest slice's (a run gives each slice its own thread) over the same. Every figure is the median of interleaved
rounds: <figure>, <figure>.min and <figure>.max. The check does not judge timings; a figure whose median
is above its ideal (<figure>.over_ideal) is named on stderr as a
measurement error when merging.
"""
import json
import sys

REQUIRED = ["rk3588.scale.b3", "rk3588.scale.b6", "rk3576.scale.b2", "rk3576.scale.b4",
            "rk3588.busy.b3", "rk3576.busy.b2",
            "rk3588.sync.scale.b3", "rk3576.sync.scale.b2",
            "submit.ratio_to_syncobj", "submit.ratio_to_syncobj.p99",
            "mem.weights_bytes.ctx1", "mem.weights_bytes.ctx3"]
# rkaccel-bench --nets on RK3588 (make bench, not make check's --quick run)
NETS = ["mobilenetv1", "mobilenetv2", "resnet18", "resnet50", "squeezenet"]
NET_FIGURES = ["tasks", "regcmd_bytes", "weight_bytes", "ms_1ghz", "util", "batch3_scale",
               "multicore.scale"]
NET_REQUIRED = [f"net.{n}.{f}" for n in NETS for f in NET_FIGURES]
# scripts/bench-convert.sh on the host (its own log, 3 rounds)
CONVERT_REQUIRED = [f"convert.mobilenet_v2.{a}_s" for a in ("normal", "mmse", "kl_divergence")]
# rkaccel-bench --host-io on the host, and its share of the device time (issue 27, item 8)
HOST_REQUIRED = ["host.mobilenet_v2.b3_us", "host.mobilenet_v2.b3_fraction",
                 "host.mobilenet_v2.b3_slice_us", "host.mobilenet_v2.b3_slice_fraction"]


def host_fraction(merged):
    """The host's microseconds per batch-3 inference (one thread; the slowest
    slice) over one image's device time."""
    dev_us = merged["net.mobilenetv2.ms_1ghz"] * 1000
    for s in ("", ".min", ".max"):
        merged["host.mobilenet_v2.b3_fraction" + s] = merged["host.mobilenet_v2.b3_us" + s] / dev_us
        if "host.mobilenet_v2.b3_slice_us" + s in merged:
            merged["host.mobilenet_v2.b3_slice_fraction" + s] = \
                merged["host.mobilenet_v2.b3_slice_us" + s] / dev_us


def figures(path):
    with open(path, errors="replace") as f:
        lines = [l[len("BENCH-JSON "):] for l in f.read().splitlines()
                 if l.startswith("BENCH-JSON ")]
    if not lines:
        raise ValueError(f"{path}: no BENCH-JSON line")
    obj = {}
    for line in lines:
        one = json.loads(line)
        if not isinstance(one, dict) or not all(isinstance(v, (int, float))
                                                for v in one.values()):
            raise ValueError(f"{path}: not an object of numbers")
        errors = obj.get("bench.measurement_errors", 0) + one.get("bench.measurement_errors", 0)
        rounds = min(obj.get("bench.rounds", one["bench.rounds"]), one["bench.rounds"])
        obj.update(one)
        obj["bench.measurement_errors"] = errors
        obj["bench.rounds"] = rounds
    return obj


def missing(obj, need):
    """Named figures absent, or present without their spread or with min > max."""
    bad = []
    for k in need:
        if not all(x in obj for x in (k, k + ".min", k + ".max")):
            bad.append(k)
        elif not obj[k + ".min"] <= obj[k] <= obj[k + ".max"]:
            bad.append(f"{k} (not within its min..max)")
    if not isinstance(obj.get("bench.rounds"), int) or obj["bench.rounds"] < 5:
        bad.append("bench.rounds (at least 5)")
    return bad


def table(path):
    with open(path) as f:
        obj = json.load(f)
    print(f"named figures, median [min..max] of {obj.get('bench.rounds')} interleaved rounds:")
    for k in REQUIRED + NET_REQUIRED + CONVERT_REQUIRED + HOST_REQUIRED:
        if k not in obj:
            print(f"  {k:30s} {'-':>12s} (not measured)")
            continue
        note = "  MEASUREMENT ERROR: above its ideal" if obj.get(k + ".over_ideal") else ""
        print(f"  {k:30s} {obj[k]:12.6g} [{obj[k + '.min']:.6g}..{obj[k + '.max']:.6g}]{note}")
    return 0


def main(argv):
    if argv[:1] == ["--table"] and len(argv) == 2:
        return table(argv[1])
    if argv[:1] == ["--check"]:
        if len(argv) < 2:
            raise ValueError("--check needs at least one log")
        for path in argv[1:]:
            obj = figures(path)
            soc = "rk3588" if "rk3588.scale.b1" in obj else "rk3576"
            need = [k for k in REQUIRED if not k.startswith("rk")] + \
                   [k for k in REQUIRED if k.startswith(soc + ".")]
            bad = missing(obj, need)
            if bad:
                raise ValueError(f"{path}: missing figures or spreads: " + ", ".join(bad))
        return 0
    merged = figures(argv[0])
    merged.update({k: v for k, v in figures(argv[1]).items() if k.startswith("rk3576.")})
    need = REQUIRED + NET_REQUIRED
    if len(argv) > 2:
        merged.update({k: v for k, v in figures(argv[2]).items() if k.startswith("convert.")})
        need += CONVERT_REQUIRED
    if len(argv) > 3:
        merged.update({k: v for k, v in figures(argv[3]).items() if k.startswith("host.")})
        if "net.mobilenetv2.ms_1ghz" in merged and "host.mobilenet_v2.b3_us" in merged:
            host_fraction(merged)
        need += HOST_REQUIRED
    bad = missing(merged, need)
    if bad:
        raise ValueError("missing figures or spreads: " + ", ".join(bad))
    errors = sorted(k[:-len(".over_ideal")] for k in merged if k.endswith(".over_ideal"))
    merged["bench.measurement_errors"] = len(errors)
    for k in errors:
        print(f"bench-json: measurement error: {k} = {merged[k]:.4f} is above its ideal",
              file=sys.stderr)
    json.dump(merged, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, ValueError) as e:
        print(f"bench-json: {e}", file=sys.stderr)
        sys.exit(1)
