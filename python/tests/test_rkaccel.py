# SPDX-License-Identifier: GPL-2.0-only
"""The Python module against the C path, in a guest with the simulated NPU.

Batch = the cores (3 on RK3588, 2 on RK3576): every slice of Context.run,
of run_async and of RKNNLite.inference bit-exact against cpu_ref (the C
CPU reference) and rkaccel-run (the C library on the NPU); RKNNLite on
rkaccel-convert's digits files (their batch, NCHW and uint8 inputs, the
softmax after the NPU) bit-exact against the host executor; dup(); errors
as rkaccel.Error with errno; no fd left behind. Prints TAP, exits 1 on a
failure.
"""

import errno
import os
import subprocess
import sys

import numpy as np

import rkaccel

N = 0
FAILED = 0


def ok(cond, name, why=""):
    global N, FAILED
    N += 1
    if not cond:
        FAILED += 1
        print("# %s" % why if why else "# failed")
    print("%sok %d python.%s" % ("" if cond else "not ", N, name))
    sys.stdout.flush()


def raises(fn, err):
    try:
        fn()
    except rkaccel.Error as e:
        return e.errno == err
    except ValueError:
        return err == "ValueError"
    return False


def nfds():
    return len(os.listdir("/proc/self/fd"))


def rknnlite_on_converted(dev):
    """RKNNLite on rkaccel-convert's files (3.0, batch baked in): what a board user runs."""
    b = 2 if dev.soc.lower() == "rk3576" else 3
    x = np.fromfile("/data/digits/batch%d.in" % b, np.int8).reshape(b, 8, 8, 1)
    prob = np.fromfile("/data/digits/batch%d.softmax.expected" % b, np.float32).reshape(b, -1)
    lite = rkaccel.RKNNLite()
    ok(lite.load_rknn("/data/digits/digits-b%d.rkml" % b) == 0 and lite.init_runtime() == 0 and
       lite._ctx.batch == b, "rknnlite_3_0_file_batch")
    # the NPU's output as the host executor wrote it: the last Gemm's int32 accumulator
    want = np.fromfile("/data/digits/batch%d.expected" % b,
                       lite._ctx.output_attr.dtype).reshape(b, -1)
    raw = lite.inference(inputs=[x], raw=True)
    ok(raw is not None and np.array_equal(raw[0].reshape(b, -1), want), "rknnlite_3_0_raw")
    nchw = lite.inference(inputs=[x.transpose(0, 3, 1, 2)], data_format="nchw", raw=True)
    ok(nchw is not None and np.array_equal(nchw[0].reshape(b, -1), want), "rknnlite_3_0_nchw")
    # uint8 pixels: as the int8 the library's quantize_u8 makes of them
    px = (np.arange(b * 64, dtype=np.uint32) * 2654435761 >> 24).astype(np.uint8)
    ia = lite._ctx.input_attr
    q = np.empty(px.size, np.int8)
    rkaccel._fn("rkaccel_quantize_u8", None, rkaccel._vp, rkaccel._sz, rkaccel.ctypes.c_float,
                rkaccel._i32, rkaccel._vp)(px.ctypes.data, px.size, ia.scale, ia.zero_point,
                                            q.ctypes.data)
    got = lite.inference(inputs=[px.reshape(b, 8, 8, 1)], raw=True)
    ok(got is not None and np.array_equal(got[0], lite.inference(inputs=[q], raw=True)[0]),
       "rknnlite_3_0_uint8_pixels")
    lite.release()
    ok(lite.load_rknn("/data/digits/digits-b%d.rkml" % b) == 0 and
       lite.init_runtime(batch=b + 1) == -1, "rknnlite_3_0_other_batch_refused")
    lite.release()
    # a Softmax after the NPU: its probabilities, as the host executor's
    lite = rkaccel.RKNNLite()
    ok(lite.load_rknn("/data/digits/digits-softmax-b%d.rkml" % b) == 0 and
       lite.init_runtime() == 0, "rknnlite_softmax_init")
    y = lite.inference(inputs=[x])
    ok(y is not None and y[0].dtype == np.float32 and
       np.array_equal(y[0].reshape(b, -1), prob), "rknnlite_softmax_bit_exact")
    lite.release()


def toolkit_on_device(dev):
    """rkaccel.toolkit.RKNN on the trained digits model: the device against the host executor."""
    from rkaccel.toolkit import RKNN
    b = 2 if dev.soc.lower() == "rk3576" else 3
    path = "/data/digits/digits-b%d.rkml" % b
    # test digits (never used in training or calibration): the model takes pixel / 16
    x = [np.load("/py/digits/test_images.npy")[:b].reshape(b, 8, 8, 1).astype(np.float32) / 16]
    host, npu = RKNN(), RKNN()
    ok(host.load_rknn(path) == 0 and host.init_runtime() == 0, "toolkit_host_init")
    ok(npu.load_rknn(path) == 0 and npu.init_runtime(target=dev.soc.lower()) == 0,
       "toolkit_device_init")
    want, got = host.inference(inputs=x), npu.inference(inputs=x)
    ok(want is not None and got is not None and got[0].shape[0] == b and
       np.array_equal(want[0], got[0]), "toolkit_device_inference_equals_host_executor")
    table = npu.eval_perf(is_print=False)
    rows = [r for r in (table or "").split("\n") if r[:1].isdigit()]
    times = [float(r.split()[-1]) for r in rows]
    npu_layers = npu._rt.info.num_layers
    ok(len(rows) == npu_layers and all(t > 0 for t in times),
       "toolkit_eval_perf_device_time_per_layer", repr(table))
    print("\n".join("# " + r for r in (table or "").rstrip("\n").split("\n")))
    ok(host.eval_perf() is None, "toolkit_eval_perf_refused_on_host")
    host.release()
    npu.release()
    # From the ONNX model: build here, then accuracy_analysis with the target
    r = RKNN()
    soc = dev.soc.lower()
    steps = [r.config(target_platform=soc), r.load_onnx("/py/digits/digits.onnx"),
             r.build(dataset="/py/digits/dataset.txt"), r.init_runtime(target=soc),
             r.accuracy_analysis(inputs=[x[0][:1]], output_dir="/tmp/snap", target=soc)]
    text = ""
    if steps == [0] * 5:
        with open("/tmp/snap/error_analysis.txt") as f:
            text = f.read()
    rows = [ln.split() for ln in text.split("\n") if ln.strip() and ln[0] not in "#l"]
    ok(len(rows) == npu_layers and all(r_[-1] == "0" and float(r_[5]) > 0.999999
                                       for r_ in rows) and
       "every layer equals the host executor" in text,
       "toolkit_accuracy_analysis_target_every_layer_equal", repr(steps) + text)
    print("\n".join("# " + ln for ln in text.rstrip("\n").split("\n")))
    r.release()


def main():
    model_path, in_path = "/tmp/py.rkml", "/tmp/py_in.bin"
    ref_path, c_path = "/tmp/py_ref.bin", "/tmp/py_c.bin"
    fds0 = nfds()
    dev = rkaccel.Device()
    batch = dev.num_cores
    print("# %s, %d cores: batch %d" % (dev.soc, dev.num_cores, batch))
    subprocess.run(["rkaccel-mkmodel", "--random", "14", "--rows", "8", "--layers",
                    "64,48,10", "-o", model_path], check=True, stdout=subprocess.DEVNULL)
    x = np.random.default_rng(14).integers(-128, 128, (batch, 8, 64), dtype=np.int8)
    x.tofile(in_path)
    subprocess.run(["cpu_ref", model_path, in_path, ref_path], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["rkaccel-run", model_path, "--batch", str(batch), "--input", in_path,
                    "--output", c_path], check=True, stdout=subprocess.DEVNULL)
    ref = np.fromfile(ref_path, np.int8).reshape(batch, 8, 10)
    cout = np.fromfile(c_path, np.int8).reshape(batch, 8, 10)

    model = rkaccel.Model.load(model_path)
    ctx = dev.context(model)
    ctx.set_batch(batch)
    ok(ctx.input_attr.shape == (batch, 8, 64) and ctx.output_attr.shape == (batch, 8, 10),
       "tensor_attrs", repr((ctx.input_attr, ctx.output_attr)))
    ok(ctx.copies == min(batch, dev.num_cores) - 1, "hidden_copies")
    out = ctx.run(x)
    for i in range(batch):
        ok(np.array_equal(out[i], ref[i]), "run_slice_%d_vs_cpu_ref" % i)
        ok(np.array_equal(out[i], cout[i]), "run_slice_%d_vs_c_library" % i)
    cores = [ctx.slice_info(i)[0] for i in range(batch)]
    ok(all(c < dev.num_cores for c in cores), "slice_cores", repr(cores))

    run = ctx.run_async(x)
    aout = run.wait(timeout=60)
    for i in range(batch):
        ok(np.array_equal(aout[i], ref[i]), "run_async_slice_%d" % i)

    one = ctx.dup()
    ok(one.batch == 1 and np.array_equal(one.run(x[1]).reshape(8, 10), ref[1]), "dup")
    one.set_core_mask(1)
    ok(np.array_equal(one.run(x[0]).reshape(8, 10), ref[0]), "dup_core_mask_1")
    # eval_perf()'s figures: the device time of each of the two layers
    times = dev.layer_times(model, dev.num_cores - 1)
    ok(len(times) == 2 and all(t > 0 for t in times), "layer_times", repr(times))
    ok(raises(lambda: dev.layer_times(model, dev.num_cores), errno.EINVAL),
       "error_layer_times_core_missing")

    # Errors: rkaccel.Error with the errno, ValueError for a wrong array.
    ok(raises(lambda: ctx.set_batch(0), errno.EINVAL), "error_batch_0")
    ok(raises(lambda: ctx.set_batch(65), errno.EINVAL), "error_batch_65")
    ok(raises(lambda: ctx.set_core_mask(1), errno.EINVAL), "error_core_mask_on_batch")
    ok(raises(lambda: one.set_core_mask(1 << dev.num_cores), errno.EINVAL),
       "error_core_missing")
    ok(raises(lambda: ctx.run(x[:1]), "ValueError"), "error_input_size")
    ok(raises(lambda: ctx.run(x.astype(np.int32)), "ValueError"), "error_input_dtype")
    ok(raises(lambda: rkaccel.Model.load("/tmp/missing.rkml"), errno.ENOENT),
       "error_model_missing")
    try:
        rkaccel.Model.parse(b"RKAM" + bytes(60))
        ok(False, "error_model_junk")
    except rkaccel.Error as e:
        ok(e.errno in (errno.EINVAL, errno.EBADMSG) and e.strerror, "error_model_junk", str(e))
    one.close()
    ctx.close()
    model.close()

    # RKNNLite: the method names of rknnlite.
    lite = rkaccel.RKNNLite()
    ok(lite.load_rknn("/tmp/model.rknn") == -1, "rknnlite_refuses_rknn")
    ok(lite.load_rknn(model_path) == 0, "rknnlite_load")
    ok(lite.init_runtime(core_mask=rkaccel.RKNNLite.NPU_CORE_0) == 0, "rknnlite_init_core_0")
    raw = lite.inference(inputs=[x[0]], raw=True)[0]
    ok(np.array_equal(raw.reshape(8, 10), ref[0]), "rknnlite_inference_raw")
    fl = lite.inference(inputs=[x[0]])[0]
    oa = lite._ctx.output_attr
    want = (ref[0].astype(np.float32) - oa.zero_point) * np.float32(oa.scale)
    ok(fl.dtype == np.float32 and np.array_equal(fl.reshape(8, 10), want),
       "rknnlite_inference_float")
    lite.release()
    lite = rkaccel.RKNNLite()
    ok(lite.load_rknn(model_path) == 0 and lite.init_runtime(batch=batch) == 0,
       "rknnlite_init_batch")
    raw = lite.inference(inputs=[x], raw=True)[0]
    for i in range(batch):
        ok(np.array_equal(raw[i], ref[i]), "rknnlite_batch_slice_%d" % i)
    lite.release()
    rknnlite_on_converted(dev)
    toolkit_on_device(dev)

    dev.close()
    for _ in range(20):
        with rkaccel.Device() as d:
            m = rkaccel.Model.load(model_path)
            c = d.context(m)
            c.set_batch(2)
            c.run(x[:1].repeat(2, axis=0))
            c.dup()
            m.close()
    ok(nfds() == fds0, "no_fd_left", "%d fds, %d before" % (nfds(), fds0))
    print("1..%d" % N)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
