#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""rkaccel.toolkit.RKNN on the host against rkaccel-convert.

usage: test_toolkit.py RKACCEL-CONVERT FIRST-TEST-NUMBER  (from the repository's top)

The toolkit's flow (config, load_onnx, build, export_rknn) writes the bytes
rkaccel-convert writes for the same options: with rknn_batch_size=3 the 3.0
file, without it the 2.0 one. Refusals return -1 with an "E ..." line and
build nothing. TAP lines numbered from FIRST-TEST-NUMBER (check-convert.sh
prints the plan); exits 1 on a failure.
"""

import contextlib
import io
import os
import subprocess
import sys
import tempfile

from rkaccel.toolkit import RKNN

ONNX = "models/digits/digits.onnx"
DATASET = "models/digits/dataset.txt"
CONV = sys.argv[1]
N = int(sys.argv[2]) - 1
FAILED = 0


def ok(cond, name, why=""):
    global N, FAILED
    N += 1
    if not cond:
        FAILED += 1
        for line in why.splitlines():
            print("#   " + line)
    print("%sok %d - toolkit %s" % ("" if cond else "not ", N, name))


def call(fn, *args, **kw):
    """fn's return code and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = fn(*args, **kw)
    return rc, out.getvalue()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def same_as_tool(tmp, name, tool_args, batch):
    ref = os.path.join(tmp, name + ".ref")
    got = os.path.join(tmp, name + ".got")
    subprocess.run([CONV, ONNX, "-o", ref, "--dataset", DATASET] + tool_args, check=True,
                   stdout=subprocess.DEVNULL)
    r = RKNN()
    steps = [call(r.config, target_platform="rk3588"), call(r.load_onnx, ONNX),
             call(r.build, do_quantization=True, dataset=DATASET, rknn_batch_size=batch),
             call(r.export_rknn, got)]
    r.release()
    rcs = [s[0] for s in steps]
    same = rcs == [0, 0, 0, 0] and read(got) == read(ref)
    ok(same, "rknn_batch_size=%s writes rkaccel-convert %s's bytes"
       % (batch, " ".join(tool_args) or "(defaults)"),
       "return codes %s\n%s" % (rcs, "".join(s[1] for s in steps)))


def refused(name, pattern, steps, tmp):
    """The last of @steps (RKNN method, kwargs) returns -1 printing E ...@pattern."""
    r = RKNN()
    out = os.path.join(tmp, "refused.rkm")
    rc = text = None
    for method, kw in steps:
        rc, text = call(getattr(r, method), **kw)
    if os.path.exists(out):
        os.unlink(out)
        rc = "a file written"
    ok(rc == -1 and text.startswith("E ") and pattern in text, "refuses " + name,
       "return %r, printed %r" % (rc, text))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        same_as_tool(tmp, "b3", ["--batch", "3"], 3)
        same_as_tool(tmp, "b0", [], None)
        out = os.path.join(tmp, "refused.rkm")
        load = ("load_onnx", {"model": ONNX})
        build = ("build", {"dataset": DATASET})
        refused("a bad algorithm", "quantized_algorithm 'minmax'",
                [("config", {"quantized_algorithm": "minmax"})], tmp)
        refused("mean_values", "not implemented yet",
                [("config", {"mean_values": [[128]], "std_values": [[128]]})], tmp)
        refused("build before load_onnx", "load_onnx first", [build], tmp)
        refused("export before build", "build first",
                [load, ("export_rknn", {"export_path": out})], tmp)
        refused("a missing dataset file", "cannot open the dataset file",
                [load, ("build", {"dataset": os.path.join(tmp, "none.txt")})], tmp)
        refused("do_quantization=False", "only int8",
                [load, ("build", {"do_quantization": False})], tmp)
        refused("inputs given to load_onnx", "not implemented yet",
                [("load_onnx", {"model": ONNX, "inputs": ["pixels"]})], tmp)
        refused("rknn_batch_size 65", "rknn_batch_size 65", [load, ("build", {
            "dataset": DATASET, "rknn_batch_size": 65})], tmp)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
