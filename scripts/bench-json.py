#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Merge the BENCH-JSON lines of rkaccel-bench runs into one JSON object.

usage: bench-json.py RK3588_LOG RK3576_LOG  (writes the object to stdout)
       bench-json.py --check LOG...         (exit 1 unless each log has valid JSON
                                             with its SoC's named figures)
The RK3588 run gives every figure; the RK3576 run adds its rk3576.* ones.
"""
import json
import sys

REQUIRED = ["rk3588.scale.b3", "rk3588.scale.b6", "rk3576.scale.b2", "rk3576.scale.b4",
            "submit.ratio_to_syncobj", "mem.weights_bytes.ctx1", "mem.weights_bytes.ctx3"]


def figures(path):
    with open(path, errors="replace") as f:
        lines = [l[len("BENCH-JSON "):] for l in f.read().splitlines()
                 if l.startswith("BENCH-JSON ")]
    if not lines:
        raise ValueError(f"{path}: no BENCH-JSON line")
    obj = json.loads(lines[-1])
    if not isinstance(obj, dict) or not all(isinstance(v, (int, float)) for v in obj.values()):
        raise ValueError(f"{path}: not an object of numbers")
    return obj


def main(argv):
    if argv[:1] == ["--check"]:
        for path in argv[1:]:
            obj = figures(path)
            soc = "rk3588" if "rk3588.scale.b1" in obj else "rk3576"
            need = [k for k in REQUIRED if not k.startswith("rk")] + \
                   [k for k in REQUIRED if k.startswith(soc + ".")]
            missing = [k for k in need if k not in obj]
            if missing:
                raise ValueError(f"{path}: missing figures: " + ", ".join(missing))
        return 0
    merged = figures(argv[0])
    merged.update({k: v for k, v in figures(argv[1]).items() if k.startswith("rk3576.")})
    missing = [k for k in REQUIRED if k not in merged]
    if missing:
        raise ValueError("missing figures: " + ", ".join(missing))
    json.dump(merged, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, ValueError) as e:
        print(f"bench-json: {e}", file=sys.stderr)
        sys.exit(1)
