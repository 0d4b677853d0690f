#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""rkaccel.toolkit.RKNN on the host against rkaccel-convert.

usage: test_toolkit.py RKACCEL-CONVERT FIRST-TEST-NUMBER  (from the repository's top)

The toolkit's flow (config, load_onnx, build, export_rknn) writes the bytes
rkaccel-convert writes for the same options: with rknn_batch_size=3 the 3.0
file, without it the 2.0 one. Refusals return -1 with an "E ..." line and
build nothing. TAP lines numbered from FIRST-TEST-NUMBER, then the plan of
the whole stream (check-convert.sh's tests before them included); exits 1
on a failure.

Then mean_values/std_values and quant_img_RGB2BGR (fold_models.py's seeded
CNNs, 20 PNG calibration images, 64 test images): the int8 model run by
init_runtime()/inference() on raw uint8 NHWC RGB pixels against PyTorch on
the normalised (and for BGR swapped) pixels: top-1 agreement at least 95%
and every output's cosine at least 0.98, while against the un-normalised
float model the top-1 agreement stays below 50% (the test can fail). With an
unpadded first conv the fold is done (a 2.0 file); with a padded one it is
not (a 3.0 file recording mean/std, applied by the host runtime). Then
load_rknn of the exported file gives the same outputs bit for bit,
accuracy_analysis writes error_analysis.txt, and the refusals.

Then a classifier ending in Softmax (fold_models.py's softmax.onnx): the
Softmax runs on the CPU after the NPU, so inference() gives probabilities:
against PyTorch's, top-1 agreement at least 95%, every probability within
0.05, every row summing to 1 within 1e-5; accuracy_analysis covers its NPU
layers (the softmax is float on both sides); load_rknn of the exported file
gives them bit for bit, and a build with rknn_batch_size=3 gives each
slice of a batch of 3 bit for bit as the batch-1 model does.
"""

import contextlib
import io
import os
import subprocess
import sys
import tempfile

import numpy as np

import fold_models as fm
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
    """The last of @steps (RKNN method, kwargs) returns -1 (or None) printing E ...@pattern."""
    r = RKNN()
    out = os.path.join(tmp, "refused.rkm")
    rc = text = None
    for method, kw in steps:
        rc, text = call(getattr(r, method), **kw)
    if os.path.exists(out):
        os.unlink(out)
        rc = "a file written"
    # inference() and eval_perf() return None (no outputs), the others -1
    ok(rc in (-1, None) and text.startswith("E ") and pattern in text, "refuses " + name,
       "return %r, printed %r" % (rc, text))


def fold_case(d, name, bgr, px):
    """One model through config/build/init_runtime/inference; its outputs, or None."""
    r = RKNN(verbose=True)
    steps = [call(r.config, mean_values=[fm.MEAN], std_values=[fm.STD],
                  quant_img_RGB2BGR=bgr),
             call(r.load_onnx, os.path.join(d, name + ".onnx")),
             call(r.build, dataset=os.path.join(d, "dataset.txt")),
             call(r.export_rknn, os.path.join(d, "%s-%d.rkm" % (name, bgr))),
             call(r.init_runtime)]
    text = "".join(s[1] for s in steps)
    if [s[0] for s in steps] != [0] * len(steps):
        ok(False, "%s (bgr %s) builds" % (name, bgr), text)
        return None, text, r
    out = [r.inference([px[i:i + 1]])[0] for i in range(len(px))]
    return np.concatenate(out), text, r


def fold_tests(tmp):
    d = os.path.join(tmp, "fold")
    os.makedirs(d)
    fm.make(d)
    px = np.load(os.path.join(d, "test.npy"))
    for name, bgr in (("fold", False), ("fold", True), ("padded", False), ("padded", True)):
        got, text, r = fold_case(d, name, bgr, px)
        if got is None:
            continue
        ref = fm.float_outputs(d, name, px, fm.MEAN, fm.STD, bgr)
        raw = fm.float_outputs(d, name, px, [0, 0, 0], [1, 1, 1], bgr)
        agree = float((got.argmax(1) == ref.argmax(1)).mean())
        control = float((got.argmax(1) == raw.argmax(1)).mean())
        cos = (got * ref).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(ref, axis=1)
        folded = name == "fold"
        said = ("folded into" in text) if folded else ("not folded: its convolution pads" in text)
        ok(agree >= 0.95 and cos.min() >= 0.98 and control < 0.5 and said,
           "%s conv, RGB2BGR %s: int8 on raw pixels vs float on normalised: top-1 agreement "
           "%.1f%%, min cosine %.4f (un-normalised float: %.1f%%), %s"
           % ("unpadded" if folded else "padded", bgr, 100 * agree, cos.min(), 100 * control,
              "folded" if folded else "not folded, recorded"), text)
        path = os.path.join(d, "%s-%d.rkm" % (name, bgr))
        if bgr:
            r2 = RKNN()
            steps = [call(r2.load_rknn, path), call(r2.init_runtime)]
            again = np.concatenate([r2.inference([px[i:i + 1]])[0] for i in range(8)])
            r2.release()
            ok([s[0] for s in steps] == [0, 0] and np.array_equal(again, got[:8]),
               "load_rknn of the %s file gives the same outputs bit for bit (%s)"
               % (name, "2.0" if folded else "3.0"), "".join(s[1] for s in steps))
            out = os.path.join(d, "snap-" + name)
            rc, t2 = call(r.accuracy_analysis, inputs=[px[:1]], output_dir=out)
            rows = []
            if rc == 0:
                with open(os.path.join(out, "error_analysis.txt")) as f:
                    rows = [ln.split() for ln in f if ln.strip() and ln[0] not in "#l"]
            good = len(rows) == 4 and all(0.99 <= float(x[1]) <= 1.0 + 1e-9 and
                                          0.99 <= float(x[3]) <= 1.0 + 1e-9 for x in rows)
            ok(rc == 0 and good, "accuracy_analysis (%s) writes error_analysis.txt: 4 layers, "
               "cosine entire/single each >= 0.99" % name, t2)
        r.release()


def softmax_tests(tmp):
    d = os.path.join(tmp, "fold")
    px = np.load(os.path.join(d, "test.npy"))
    got, text, r = fold_case(d, "softmax", False, px)
    if got is None:
        return
    ref = fm.float_outputs(d, "softmax", px, fm.MEAN, fm.STD, False)
    agree = float((got.argmax(1) == ref.argmax(1)).mean())
    err = float(np.abs(got - ref).max())
    sums = float(np.abs(got.sum(1) - 1).max())
    said = "(float32: a softmax on the CPU)" in text
    ok(agree >= 0.95 and err <= 0.05 and sums <= 1e-5 and said,
       "Softmax on the CPU after the NPU: probabilities against PyTorch's: top-1 agreement "
       "%.1f%%, largest error %.4f, row sums within %.1e" % (100 * agree, err, sums), text)
    out = os.path.join(d, "snap-softmax")
    rc, t2 = call(r.accuracy_analysis, inputs=[px[:1]], output_dir=out)
    rows = []
    if rc == 0:
        with open(os.path.join(out, "error_analysis.txt")) as f:
            rows = [ln.split() for ln in f if ln.strip() and ln[0] not in "#l"]
    ok(rc == 0 and len(rows) == 4 and all(float(x[1]) >= 0.99 for x in rows),
       "accuracy_analysis of the softmax model: its 4 NPU layers, cosine >= 0.99", t2)
    r.release()
    r2 = RKNN()
    steps = [call(r2.load_rknn, os.path.join(d, "softmax-0.rkm")), call(r2.init_runtime)]
    again = np.concatenate([r2.inference([px[i:i + 1]])[0] for i in range(8)])
    r2.release()
    ok([s[0] for s in steps] == [0, 0] and np.array_equal(again, got[:8]),
       "load_rknn of the softmax file gives the same probabilities bit for bit",
       "".join(s[1] for s in steps))
    r3 = RKNN()
    steps = [call(r3.config, mean_values=[fm.MEAN], std_values=[fm.STD]),
             call(r3.load_onnx, os.path.join(d, "softmax.onnx")),
             call(r3.build, dataset=os.path.join(d, "dataset.txt"), rknn_batch_size=3),
             call(r3.init_runtime)]
    b3 = [r3.inference([px[i:i + 3]])[0] for i in range(0, 9, 3)] if \
        [s[0] for s in steps] == [0] * 4 else None
    r3.release()
    ok(b3 is not None and np.array_equal(np.concatenate(b3), got[:9]),
       "rknn_batch_size=3: every slice's probabilities as the batch-1 model's, bit for bit",
       "".join(s[1] for s in steps))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        same_as_tool(tmp, "b3", ["--batch", "3"], 3)
        same_as_tool(tmp, "b0", [], None)
        out = os.path.join(tmp, "refused.rkm")
        load = ("load_onnx", {"model": ONNX})
        build = ("build", {"dataset": DATASET})
        refused("a bad algorithm", "quantized_algorithm 'minmax'",
                [("config", {"quantized_algorithm": "minmax"})], tmp)
        refused("mean_values for two inputs", "2 input lists",
                [("config", {"mean_values": [[1], [2]], "std_values": [[1], [2]]})], tmp)
        refused("std_values 0", "must be positive",
                [("config", {"mean_values": [[1, 2, 3]], "std_values": [[1, 0, 1]]})], tmp)
        refused("mean_values not matching the input's channels", "1 channel(s): 3 mean/std",
                [("config", {"mean_values": [fm.MEAN], "std_values": [fm.STD]}), load,
                 build], tmp)
        refused("inference before init_runtime", "init_runtime first",
                [("inference", {"inputs": [np.zeros((1, 8, 8, 1))]})], tmp)
        refused("init_runtime without a model", "build or load_rknn first",
                [("init_runtime", {})], tmp)
        refused("a device target without a device", "the device rk3588",
                [load, build, ("init_runtime", {"target": "rk3588"})], tmp)
        refused("eval_perf before init_runtime", "init_runtime first", [("eval_perf", {})], tmp)
        refused("accuracy_analysis with a target but no device", "the device rk3588",
                [load, build, ("accuracy_analysis", {"inputs": [np.zeros((1, 8, 8, 1))],
                                                     "target": "rk3588"})], tmp)
        refused("eval_perf on the host executor", "has no device time",
                [load, build, ("init_runtime", {}), ("eval_perf", {})], tmp)
        fold_tests(tmp)
        softmax_tests(tmp)
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
    print("1..%d" % N)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
