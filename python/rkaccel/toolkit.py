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
bytes. Host only. Not implemented yet: mean/std folding, RGB2BGR,
inputs/outputs/input_size_list, float (unquantized) models, load_rknn,
init_runtime, inference, eval_perf, accuracy_analysis.
"""

import ctypes
import os
import shutil
import tempfile

__all__ = ["RKNN"]

# enum cv_algo of lib/convert/quant.h
_ALGOS = {"normal": 0, "mmse": 1, "kl_divergence": 2}
_METHODS = {"channel": 0, "layer": 1}
_PLATFORMS = ("rk3588", "rk3576")
_MAX_BATCH = 64          # RKACCEL_GRAPH_MAX_BATCH
_MAX_CUSTOM = 1024       # RKACCEL_GRAPH_MAX_CUSTOM
_lib = None


def _lib_path():
    env = os.environ.get("RKACCEL_CONVERT_LIB")
    if env:
        return env
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(top, "build", "convert", "libconvert.so")


def _convert_fn():
    """cv_convert_file from libconvert.so, loaded on first use; OSError if absent."""
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(_lib_path())
        f = lib.cv_convert_file
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                      ctypes.c_uint, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                      ctypes.c_size_t]
        _lib = f
    return _lib


def _is_identity(values, ident):
    """True for None or per-input lists holding only @ident (nothing to fold)."""
    if values is None:
        return True
    try:
        return all(float(v) == ident for per_input in values for v in per_input)
    except (TypeError, ValueError):
        return False


class RKNN:
    """rknn-toolkit2's RKNN for ONNX to an int8 rkaccel model file."""

    def __init__(self, verbose=False, verbose_file=None):
        self.verbose = verbose
        self.verbose_file = verbose_file
        self._algo, self._per_layer = _ALGOS["normal"], 0
        self._platform, self._custom = "rk3588", None
        self._onnx = self._model = None

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
        why = None
        if not _is_identity(mean_values, 0.0) or not _is_identity(std_values, 1.0):
            why = ("mean_values/std_values %r/%r: folding them into the first layer is not "
                   "implemented yet; normalize the dataset's inputs instead"
                   % (mean_values, std_values))
        elif quant_img_RGB2BGR:
            why = "quant_img_RGB2BGR=True: channel reordering is not implemented yet"
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
            rc = convert(self._onnx.encode(), str(dataset).encode(), self._algo,
                         self._per_layer, batch, custom, out.encode(), msg, len(msg))
            text = msg.value.decode(errors="replace")
            if rc:
                return self._err("build", text or os.strerror(-rc))
            with open(out, "rb") as f:
                self._model = f.read()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self._info("build: %s: %s (%s, format %s)" % (self._onnx, text, self._platform,
                                                    "3.0" if batch or custom else "2.0"))
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

    def release(self):
        self._onnx = self._model = None

