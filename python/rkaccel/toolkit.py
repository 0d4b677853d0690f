# SPDX-License-Identifier: MIT
"""RKNN: the method names of Rockchip's rknn-toolkit2 over rkaccel's converter.

    from rkaccel.toolkit import RKNN
    rknn = RKNN()
    rknn.config(target_platform='rk3588')
    rknn.load_onnx('models/digits/digits.onnx')
    rknn.build(do_quantization=True, dataset='models/digits/dataset.txt', rknn_batch_size=3)
    rknn.export_rknn('digits.rkml')

Each method returns 0, or -1 after an "E method: ..." line, as the toolkit
does. The conversion is lib/convert's cv_convert_file() in libconvert.so
(ctypes; RKACCEL_CONVERT_LIB, else build/convert/libconvert.so of this
repository), the call rkaccel-convert makes: the same options give the same
bytes. mean_values/std_values and quant_img_RGB2BGR are folded into the
first convolution where that is exact (Documentation/convert.rst), so the
model takes raw pixels; where not, the 3.0 file records them and
inference() applies them on the host.

init_runtime() with no target runs the model on the host int8 executor
(libconvert-host.so, RKACCEL_CONVERT_HOST_LIB: the selftests' CPU
reference, bit-exact with the NPU), as the toolkit's simulator; with
target='rk3588'/'rk3576' on the device through librkaccel. inference()
returns float32 arrays with the batch first; accuracy_analysis() writes
error_analysis.txt (per layer: cosine and Euclidean distance, "entire" and
"single"; with a target also the device's int8 against the host executor's,
every tensor kept). eval_perf() on a device target gives each layer's device time
(one job a layer, timed by the device: rkaccel_model_layer_times()). Not
implemented: inputs/outputs/input_size_list, float (unquantized) models.
"""

import ctypes
import os
import shutil
import tempfile

import numpy as np

__all__ = ["RKNN"]

# enum cv_algo of lib/convert/quant.h
_ALGOS = {"normal": 0, "mmse": 1, "kl_divergence": 2}
_METHODS = {"channel": 0, "layer": 1}
_PLATFORMS = ("rk3588", "rk3576")
_MAX_BATCH = 64          # RKACCEL_GRAPH_MAX_BATCH
_MAX_CUSTOM = 1024       # RKACCEL_GRAPH_MAX_CUSTOM
_lib = None
_host = None
_NAME_BYTES = 64         # hr_analyse's bytes per layer name


def _lib_path():
    env = os.environ.get("RKACCEL_CONVERT_LIB")
    if env:
        return env
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(top, "build", "convert", "libconvert.so")


def _convert_fn():
    """cv_convert_file_norm from libconvert.so, loaded on first use; OSError if absent."""
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(_lib_path())
        f = lib.cv_convert_file_norm
        f.restype = ctypes.c_int
        fp = ctypes.POINTER(ctypes.c_float)
        f.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                      ctypes.c_uint, ctypes.c_char_p, fp, fp, ctypes.c_int, ctypes.c_int,
                      ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        _lib = f
    return _lib


class _HostInfo(ctypes.Structure):
    """struct hr_info of lib/convert/hostrun/host_run.c."""
    _fields_ = [(n, ctypes.c_uint32) for n in ("batch", "num_layers", "in_h", "in_w", "in_c")] + [
        ("in_scale", ctypes.c_float), ("in_zp", ctypes.c_int32)] + [
        (n, ctypes.c_uint32) for n in ("out_h", "out_w", "out_c", "out_int32")] + [
        ("out_scale", ctypes.c_float), ("out_zp", ctypes.c_int32),
        ("channel_order", ctypes.c_uint32), ("n_ch", ctypes.c_uint32),
        ("mean", ctypes.c_float * 4), ("std", ctypes.c_float * 4), ("out_float", ctypes.c_uint32)]


def _host_lib():
    """libconvert-host.so (the host int8 executor), loaded on first use; OSError if absent."""
    global _host
    if _host is None:
        path = os.environ.get("RKACCEL_CONVERT_HOST_LIB") or os.path.join(
            os.path.dirname(_lib_path()), "libconvert-host.so")
        h = ctypes.CDLL(path)
        vp, i, sz, cp = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p
        fp = ctypes.POINTER(ctypes.c_float)
        for name, res, args in (
                ("hr_open", i, [cp, ctypes.POINTER(vp), cp, sz]),
                ("hr_close", None, [vp]),
                ("hr_info", None, [vp, ctypes.POINTER(_HostInfo)]),
                ("hr_quantize", None, [vp, sz, ctypes.c_float, ctypes.c_int32, vp]),
                ("hr_run", i, [vp, vp, vp]),
                ("hr_output", i, [vp, vp, ctypes.c_uint32, vp]),
                ("hr_run_layers", i, [vp, ctypes.c_uint32, ctypes.c_uint32, vp, vp]),
                ("hr_analyse", i, [vp, cp, fp, fp, i, i, vp, vp, cp, cp, sz]),
                ("hr_serialize", i, [vp, ctypes.POINTER(vp), ctypes.POINTER(sz)]),
                ("hr_layer", i, [vp, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32),
                                 ctypes.POINTER(ctypes.c_uint32)]),
                ("hr_free", None, [vp])):
            f = getattr(h, name)
            f.restype, f.argtypes = res, args
        _host = h
    return _host


def _floats(values):
    """A per-channel list as a ctypes float array (None: no values)."""
    if values is None:
        return None, 0
    return (ctypes.c_float * len(values))(*[float(v) for v in values]), len(values)


class _Runtime:
    """A loaded model on the host int8 executor, or on the device."""

    def __init__(self, model_bytes, target, core_mask):
        self.lib = _host_lib()
        self.h = ctypes.c_void_p()
        self.dev = self.ctx = self.model = None
        tmp = tempfile.mkdtemp(prefix="rkaccel-toolkit-")
        try:
            path = os.path.join(tmp, "model")
            with open(path, "wb") as f:
                f.write(model_bytes)
            msg = ctypes.create_string_buffer(512)
            rc = self.lib.hr_open(path.encode(), ctypes.byref(self.h), msg, len(msg))
            if rc:
                raise RuntimeError(msg.value.decode(errors="replace") or os.strerror(-rc))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self.info = _HostInfo()
        self.lib.hr_info(self.h, ctypes.byref(self.info))
        if target is not None:
            try:
                self._open_device(core_mask)
            except BaseException:
                self.close()
                raise

    def _open_device(self, core_mask):
        """The chain (as 2.0) in a context of the first rkaccel device, at the file's batch."""
        import rkaccel
        buf, n = ctypes.c_void_p(), ctypes.c_size_t()
        rc = self.lib.hr_serialize(self.h, ctypes.byref(buf), ctypes.byref(n))
        if rc:
            raise RuntimeError("the model's chain: %s" % os.strerror(-rc))
        try:
            image = ctypes.string_at(buf, n.value)
        finally:
            self.lib.hr_free(buf)
        self.dev = rkaccel.Device()
        self.model = rkaccel.Model.parse(image)
        self.ctx = self.dev.context(self.model, core_mask)
        if self.info.batch > 1:
            self.ctx.set_batch(self.info.batch)

    def quantize(self, x):
        """NHWC float32 [B, H, W, C] (normalised as the graph takes it) to int8."""
        x = np.ascontiguousarray(x, np.float32)
        q = np.empty(x.shape, np.int8)
        self.lib.hr_quantize(x.ctypes.data, x.size, self.info.in_scale, self.info.in_zp,
                             q.ctypes.data)
        return q

    def normalise(self, x):
        """What the runtime does before quantizing where the fold was not done."""
        i = self.info
        if i.channel_order == 2:        # RKACCEL_CHANNELS_BGR: camera RGB to the model's BGR
            x = x[..., ::-1]
        if i.n_ch:
            x = (x - np.array(i.mean[:i.n_ch], np.float32)) / np.array(i.std[:i.n_ch],
                                                                         np.float32)
        return x

    def run(self, q):
        """int8 [B, H, W, C] to the float32 output [B, ...]."""
        i = self.info
        per = i.out_h * i.out_w * i.out_c
        dtype = np.int32 if i.out_int32 else np.int8
        if self.ctx is not None:
            raw = np.asarray(self.ctx.run(q.reshape(i.batch, i.in_h * i.in_w, i.in_c)),
                             dtype).reshape(i.batch, per)
        else:
            raw = np.empty((q.shape[0], per), dtype)
            for b in range(q.shape[0]):
                rc = self.lib.hr_run(self.h, q[b].ctypes.data, raw[b].ctypes.data)
                if rc:
                    raise RuntimeError("the host executor: %s" % os.strerror(-rc))
        if i.out_float:         # a softmax after the NPU: the runtime's floats
            y = np.empty(raw.shape, np.float32)
            raw = np.ascontiguousarray(raw)
            rc = self.lib.hr_output(self.h, raw.ctypes.data, raw.shape[0], y.ctypes.data)
            if rc:
                raise RuntimeError("the model's CPU op: %s" % os.strerror(-rc))
        else:
            y = (raw.astype(np.float32) - (0 if i.out_int32 else i.out_zp)) * \
                np.float32(i.out_scale)
        if i.out_h * i.out_w == 1:
            return y.reshape(q.shape[0], i.out_c)
        return y.reshape(q.shape[0], i.out_h, i.out_w, i.out_c)

    def close(self):
        if self.ctx is not None:
            self.ctx.close()
        if self.model is not None:
            self.model.close()
        if self.dev is not None:
            self.dev.close()
        self.ctx = self.dev = self.model = None
        if self.h:
            self.lib.hr_close(self.h)
            self.h = ctypes.c_void_p()


class RKNN:
    """rknn-toolkit2's RKNN for ONNX to an int8 rkaccel model file."""

    def __init__(self, verbose=False, verbose_file=None):
        self.verbose = verbose
        self.verbose_file = verbose_file
        self._algo, self._per_layer = _ALGOS["normal"], 0
        self._platform, self._custom = "rk3588", None
        self._onnx = self._model = self._rt = None
        self._mean = self._std = None
        self._bgr = False
        self._core_mask = 0

    def _err(self, method, msg):
        for line in msg.rstrip("\n").split("\n"):
            print("E %s: %s" % (method, line))
        return -1

    def _info(self, msg):
        if self.verbose:
            print("I " + msg)

    def config(self, mean_values=None, std_values=None, quant_img_RGB2BGR=False,
               target_platform="rk3588", quantized_dtype="asymmetric_quantized-8",
               quantized_algorithm="normal", quantized_method="channel", custom_string=None):
        why = _check_norm(mean_values, std_values, quant_img_RGB2BGR)
        if why:
            pass
        elif str(target_platform).lower() not in _PLATFORMS:
            why = "target_platform %r: not one of %s" % (target_platform, ", ".join(_PLATFORMS))
        elif quantized_dtype != "asymmetric_quantized-8":
            why = "quantized_dtype %r: only 'asymmetric_quantized-8'" % (quantized_dtype,)
        elif quantized_algorithm not in _ALGOS:
            why = ("quantized_algorithm %r: not normal, mmse or kl_divergence"
                   % (quantized_algorithm,))
        elif quantized_method not in _METHODS:
            why = "quantized_method %r: not channel or layer" % (quantized_method,)
        elif custom_string is not None and len(str(custom_string).encode()) > _MAX_CUSTOM:
            why = "custom_string: longer than %d bytes" % _MAX_CUSTOM
        if why:
            return self._err("config", why)
        self._algo = _ALGOS[quantized_algorithm]
        self._per_layer = _METHODS[quantized_method]
        # One file runs on both SoCs: the platform is checked, the bytes do not change.
        self._platform = str(target_platform).lower()
        self._custom = None if custom_string is None else str(custom_string)
        self._mean, self._std = _per_channel(mean_values, std_values)
        self._bgr = _bgr_flag(quant_img_RGB2BGR)
        return 0

    def load_onnx(self, model, inputs=None, input_size_list=None, outputs=None):
        if inputs is not None or input_size_list is not None or outputs is not None:
            return self._err("load_onnx", "inputs/input_size_list/outputs: choosing or "
                             "reshaping the graph's tensors is not implemented yet")
        if not os.path.isfile(model):
            return self._err("load_onnx", "%s: no such file" % model)
        self._onnx, self._model = str(model), None
        return 0

    def build(self, do_quantization=True, dataset=None, rknn_batch_size=None):
        if self._onnx is None:
            return self._err("build", "no model: load_onnx first")
        if not do_quantization:
            return self._err("build", "do_quantization=False: only int8 models are built")
        if dataset is None:
            return self._err("build", "do_quantization=True needs a dataset file")
        batch = 0 if rknn_batch_size is None else rknn_batch_size
        if rknn_batch_size is not None and (not isinstance(batch, int) or isinstance(batch, bool)
                                            or not 1 <= batch <= _MAX_BATCH):
            return self._err("build", "rknn_batch_size %r: not 1..%d" % (batch, _MAX_BATCH))
        try:
            convert = _convert_fn()
        except OSError as e:
            return self._err("build", "libconvert.so: %s (make -f lib/convert/convert.mk "
                             "OUT=build/convert, or set RKACCEL_CONVERT_LIB)" % e)
        tmp = tempfile.mkdtemp(prefix="rkaccel-toolkit-")
        try:
            out = os.path.join(tmp, "model")
            msg = ctypes.create_string_buffer(8192)
            custom = None if self._custom is None else self._custom.encode()
            mean, n_ch = _floats(self._mean)
            std, _ = _floats(self._std)
            rc = convert(self._onnx.encode(), str(dataset).encode(), self._algo,
                         self._per_layer, batch, custom, mean, std, n_ch, int(self._bgr),
                         out.encode(), msg, len(msg))
            text = msg.value.decode(errors="replace")
            if rc:
                return self._err("build", text or os.strerror(-rc))
            with open(out, "rb") as f:
                self._model = f.read()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        v3 = batch or custom or "not folded" in text
        self._info("build: %s: %s (%s, format %s)" % (self._onnx, text, self._platform,
                                                    "3.0" if v3 else "2.0"))
        return 0

    def export_rknn(self, export_path):
        if self._model is None:
            return self._err("export_rknn", "no model built: build first")
        try:
            with open(export_path, "wb") as f:
                f.write(self._model)
        except OSError as e:
            return self._err("export_rknn", "%s: %s" % (export_path, e.strerror or e))
        return 0

    def load_rknn(self, path):
        try:
            with open(path, "rb") as f:
                self._model = f.read()
        except OSError as e:
            return self._err("load_rknn", "%s: %s" % (path, e.strerror or e))
        self._onnx = None
        return 0

    def init_runtime(self, target=None, device_id=None, perf_debug=False, eval_mem=False,
                     core_mask=0):
        """target None: the host int8 executor; 'rk3588'/'rk3576': the device."""
        if self._model is None:
            return self._err("init_runtime", "no model: build or load_rknn first")
        if target is not None and str(target).lower() not in _PLATFORMS:
            return self._err("init_runtime", "target %r: not None, %s"
                             % (target, " or ".join(repr(p) for p in _PLATFORMS)))
        if self._rt is not None:
            self._rt.close()
            self._rt = None
        self._core_mask = core_mask
        try:
            self._rt = _Runtime(self._model, target, core_mask)
        except OSError as e:
            where = "the host executor libconvert-host.so" if target is None else \
                "the device %s through librkaccel" % target
            return self._err("init_runtime", "%s: %s" % (where, e))
        except (RuntimeError, ImportError) as e:
            return self._err("init_runtime", str(e))
        return 0

    def _input(self, inputs, data_format):
        """The one input as NHWC float32 [B, H, W, C] of the model's batch, or a message."""
        i = self._rt.info
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 1:
            return None, "inputs: a list of one array (the model has one input)"
        x = np.asarray(inputs[0])
        if data_format not in (None, "nhwc", "nchw"):
            return None, "data_format %r: not 'nhwc' or 'nchw'" % (data_format,)
        if x.ndim == 3:
            x = x[np.newaxis]
        if x.ndim == 4 and data_format == "nchw":
            x = x.transpose(0, 2, 3, 1)
        want = (i.batch, i.in_h, i.in_w, i.in_c)
        if x.ndim == 2 and i.in_h * i.in_w == 1:
            x = x.reshape(x.shape[0], 1, 1, x.shape[1])
        if tuple(x.shape) != want:
            return None, "input shape %s: the model takes %s (NHWC, batch %d)" % (
                tuple(np.asarray(inputs[0]).shape), want, i.batch)
        return x.astype(np.float32), None

    def inference(self, inputs, data_format=None, inputs_pass_through=None):
        """Float32 outputs [B, ...] of the int8 model on @inputs (raw pixels)."""
        if self._rt is None:
            self._err("inference", "no runtime: init_runtime first")
            return None
        x, why = self._input(inputs, data_format)
        if why:
            self._err("inference", why)
            return None
        try:
            return [self._rt.run(self._rt.quantize(self._rt.normalise(x)))]
        except Exception as e:   # the device's errors (rkaccel.Error) and the executor's
            self._err("inference", str(e))
            return None

    def eval_perf(self, is_print=True):
        """Per-layer device time on the target: one job a layer, each timed by the device."""
        if self._rt is None:
            self._err("eval_perf", "no runtime: init_runtime first")
            return None
        if self._rt.ctx is None:
            self._err("eval_perf", "the host executor has no device time: init_runtime("
                      "target='rk3588' or 'rk3576')")
            return None
        core = (self._core_mask & -self._core_mask).bit_length() - 1 if self._core_mask else 0
        try:
            ns = self._rt.dev.layer_times(self._rt.model, core)
        except OSError as e:
            self._err("eval_perf", str(e))
            return None
        rows = []
        op, hwc = ctypes.c_uint32(), (ctypes.c_uint32 * 3)()
        for k, t in enumerate(ns):
            self._rt.lib.hr_layer(self._rt.h, k, ctypes.byref(op), hwc)
            rows.append((k, _OP_NAMES.get(op.value, "?"), "%dx%dx%d" % tuple(hwc), t / 1000.0))
        table = _perf_table(rows, self._rt.dev.soc, core)
        if is_print:
            print(table, end="")
        return table

    def accuracy_analysis(self, inputs, output_dir="./snapshot", target=None, device_id=None):
        """Per layer, float against int8 (cosine, Euclidean; entire and single) on one
        sample; with @target also the device's int8 against the host executor's."""
        if self._onnx is None or self._model is None:
            return self._err("accuracy_analysis", "needs load_onnx and build (the float model)")
        if target is not None and (self._rt is None or self._rt.ctx is None) and \
                self.init_runtime(target=target, core_mask=self._core_mask) != 0:
            return -1
        if self._rt is None and self.init_runtime() != 0:
            return -1
        try:
            x = [_load_sample(p) if isinstance(p, str) else np.asarray(p) for p in inputs]
        except (OSError, ValueError) as e:
            return self._err("accuracy_analysis", "inputs: %s" % e)
        x, why = self._input(x, "nhwc")
        if why:
            return self._err("accuracy_analysis", why)
        i = self._rt.info
        res = np.zeros((i.num_layers, 4), np.float64)
        names = ctypes.create_string_buffer(_NAME_BYTES * i.num_layers)
        msg = ctypes.create_string_buffer(2048)
        mean, n_ch = _floats(self._mean)
        std, _ = _floats(self._std)
        chw = np.ascontiguousarray(x[0].transpose(2, 0, 1), np.float32)
        rc = self._rt.lib.hr_analyse(self._rt.h, self._onnx.encode(), mean, std, n_ch,
                                     int(self._bgr), chw.ctypes.data, res.ctypes.data, names,
                                     msg, len(msg))
        if rc:
            return self._err("accuracy_analysis", msg.value.decode(errors="replace"))
        layer_names = [names.raw[k * _NAME_BYTES:(k + 1) * _NAME_BYTES].split(b"\0")[0]
                       .decode(errors="replace") for k in range(i.num_layers)]
        runtime = None
        if target is not None:
            try:
                runtime = self._runtime_layers(x[:1])
            except (OSError, RuntimeError) as e:
                return self._err("accuracy_analysis", "target %s: %s" % (target, e))
        table = _analysis_table(layer_names, res, runtime)
        try:
            os.makedirs(output_dir, exist_ok=True)
            with open(os.path.join(output_dir, "error_analysis.txt"), "w") as f:
                f.write(table)
        except OSError as e:
            return self._err("accuracy_analysis", "%s: %s" % (output_dir, e.strerror or e))
        print(table, end="")
        return 0

    def _runtime_layers(self, x):
        """Per layer: the device's int8 against the host executor's (cosine, Euclidean,
        elements that differ), one sample run with every tensor kept."""
        rt, i = self._rt, self._rt.info
        q = np.ascontiguousarray(rt.quantize(rt.normalise(x))[0])
        ctx = rt.dev.context(rt.model, self._core_mask & -self._core_mask, keep_tensors=True)
        rows = []
        try:
            ctx.run(q.reshape(1, i.in_h * i.in_w, i.in_c))
            for k in range(i.num_layers):
                h, w, c, scale, zp = rt.model.shape(k + 1)
                i32 = k + 1 == i.num_layers and i.out_int32
                dt = np.int32 if i32 else np.int8
                npu = ctx.read_tensor(k + 1, (h, w, c), dt)
                host = np.empty((h, w, c), dt)
                rc = rt.lib.hr_run_layers(rt.h, 0, k + 1, q.ctypes.data, host.ctypes.data)
                if rc:
                    raise RuntimeError("the host executor: %s" % os.strerror(-rc))
                a = (npu.astype(np.float64) - (0 if i32 else zp)) * scale
                b = (host.astype(np.float64) - (0 if i32 else zp)) * scale
                den = np.linalg.norm(a) * np.linalg.norm(b)
                cos = float(a.ravel() @ b.ravel() / den) if den else float(np.array_equal(a, b))
                rows.append((cos, float(np.linalg.norm(a - b)), int(np.count_nonzero(npu != host))))
        finally:
            ctx.close()
        return rows

    def release(self):
        if self._rt is not None:
            self._rt.close()
        self._onnx = self._model = self._rt = None


_OP_NAMES = {0: "fc", 1: "conv", 2: "dwconv", 3: "maxpool", 4: "avgpool", 0x100: "concat"}


def _perf_table(rows, soc, core):
    """eval_perf()'s table: per layer its op, output and device time, then the total."""
    lines = ["# device time per layer on %s core %d: one job a layer, each timed by the device"
             % (soc, core),
             "%-6s %-8s %-14s %12s" % ("layer", "op", "output", "time(us)")]
    for k, name, shape, us in rows:
        lines.append("%-6d %-8s %-14s %12.1f" % (k, name, shape, us))
    lines.append("%-6s %-8s %-14s %12.1f" % ("total", "", "", sum(r[3] for r in rows)))
    return "\n".join(lines) + "\n"


def _analysis_table(names, res, runtime=None):
    """The toolkit's error_analysis.txt: one row per layer, entire then single, and
    with a target the runtime's columns (the device against the host executor)."""
    w = max([len(n) for n in names] + [10])
    lines = ["# float (the ONNX model, float executor) against int8 (the host executor)",
             "# entire: errors accumulated from the input; single: each layer fed the float",
             "# output of the layer before, quantized"]
    head = "%-*s  %-14s %-14s %-14s %-14s" % (w, "layer", "entire_cos", "entire_euc",
                                              "single_cos", "single_euc")
    if runtime is not None:
        lines.append("# runtime: the device's int8 against the host executor's, every "
                     "tensor kept (differ: elements)")
        head += " %-14s %-14s %-8s" % ("runtime_cos", "runtime_euc", "differ")
    lines.append(head)
    for k, (n, r) in enumerate(zip(names, res)):
        row = "%-*s  %-14.6f %-14.6g %-14.6f %-14.6g" % (w, n, r[0], r[1], r[2], r[3])
        if runtime is not None:
            row += " %-14.6f %-14.6g %-8d" % runtime[k]
        lines.append(row)
    if runtime is not None:
        bad = [names[k] for k, r in enumerate(runtime) if r[2]]
        lines.append("# runtime: " + ("first layer that differs: %s" % bad[0] if bad else
                                      "every layer equals the host executor"))
    return "\n".join(lines) + "\n"


def _load_sample(path):
    """A .npy sample (NHWC raw pixels) for accuracy_analysis."""
    if not path.endswith(".npy"):
        raise ValueError("%s: only .npy samples (NHWC pixels) are read here" % path)
    return np.load(path)


def _per_channel(mean_values, std_values):
    """The one input's mean/std lists (None for none), as the C call takes them."""
    if mean_values is None and std_values is None:
        return None, None
    c = len((mean_values or std_values)[0])
    mean = [0.0] * c if mean_values is None else [float(v) for v in mean_values[0]]
    std = [1.0] * c if std_values is None else [float(v) for v in std_values[0]]
    return mean, std


def _bgr_flag(flag):
    return bool(flag[0]) if isinstance(flag, (list, tuple)) else bool(flag)


def _check_norm(mean_values, std_values, rgb2bgr):
    """None, or why mean_values/std_values/quant_img_RGB2BGR are refused."""
    lists = [v for v in (mean_values, std_values) if v is not None]
    try:
        for v in lists:
            if len(v) != 1:
                return ("mean_values/std_values: %d input lists; the converter takes one "
                        "input" % len(v))
            vals = [float(x) for x in v[0]]
            if not 1 <= len(vals) <= 4 or not all(np.isfinite(vals)):
                return "mean_values/std_values %r: 1 to 4 finite values per input" % (v,)
        if len(lists) == 2 and len(lists[0][0]) != len(lists[1][0]):
            return "mean_values %r and std_values %r: not as many values" % tuple(lists)
        if std_values is not None and not all(float(x) > 0 for x in std_values[0]):
            return "std_values %r: each must be positive" % (std_values,)
    except (TypeError, ValueError):
        return "mean_values/std_values %r/%r: one list of numbers per input" % (
            mean_values, std_values)
    if isinstance(rgb2bgr, (list, tuple)) and len(rgb2bgr) != 1:
        return "quant_img_RGB2BGR %r: one flag (one input)" % (rgb2bgr,)
    return None

