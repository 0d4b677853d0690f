# SPDX-License-Identifier: MIT
"""rkaccel: the rkaccel NPU from Python, through librkaccel.so.2 (ctypes).

    import numpy as np, rkaccel
    dev = rkaccel.Device()
    ctx = dev.context(rkaccel.Model.load("mlp.rkml"), core_mask=0)
    ctx.set_batch(3)
    out = ctx.run(np.zeros(ctx.input_attr.shape, np.int8))

Errors are rkaccel.Error (an OSError): .errno and the library's message.
RKNNLite is a class with the method names of Rockchip's rknnlite.
"""

import ctypes
import ctypes.util
import errno as _errno
import os
import select

import numpy as np

__all__ = ["Error", "Device", "Model", "Context", "TensorAttr", "AsyncRun", "RKNNLite",
           "TENSOR_INT8", "TENSOR_INT32", "LAYER_RELU", "LAYER_OUT_INT32", "CTX_KEEP_TENSORS"]

TENSOR_INT8 = 2
TENSOR_INT32 = 6
LAYER_RELU = 0x1
LAYER_OUT_INT32 = 0x2
CTX_KEEP_TENSORS = 0x1          # RKACCEL_CTX_KEEP_TENSORS: a layer dump
_BUF_INPUT = 2
_BUF_OUTPUT = 3


def _load():
    path = os.environ.get("RKACCEL_LIB")
    if path:
        return ctypes.CDLL(path, use_errno=True)
    try:
        return ctypes.CDLL("librkaccel.so.2", use_errno=True)
    except OSError:
        # Not installed: the library `make` built in this checkout, if any.
        arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, "")
        here = os.path.dirname(os.path.abspath(__file__))
        built = os.path.join(here, "..", "..", "build", arch, "lib", "librkaccel.so.2")
        if arch and os.path.exists(built):
            return ctypes.CDLL(built, use_errno=True)
        raise


_lib = _load()
_vp, _u32, _u64, _i32, _sz = (ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64,
                              ctypes.c_int32, ctypes.c_size_t)


class _Info(ctypes.Structure):
    _fields_ = [("soc", _u32), ("soc_name", ctypes.c_char_p), ("backend", _u32),
                ("num_cores", _u32), ("core_mask", _u32), ("driver_major", _u32),
                ("driver_minor", _u32), ("driver_patch", _u32), ("hw_version", _u32),
                ("va_size", _u64), ("max_tasks", _u32), ("cbuf_size", _u32)]


class _Shape(ctypes.Structure):
    """struct rkaccel_tensor_shape."""
    _fields_ = [("height", _u32), ("width", _u32), ("channels", _u32),
                ("scale", ctypes.c_float), ("zero_point", _i32)]


class _Attr(ctypes.Structure):
    _fields_ = [("n_dims", _u32), ("dims", _u32 * 4), ("type", _u32), ("scale", ctypes.c_float),
                ("zero_point", _i32), ("size", _sz), ("native_size", _sz)]


class _OutputOp(ctypes.Structure):
    """struct rkaccel_output_op: the CPU op after the NPU of a converted model."""
    _fields_ = [("flags", _u32), ("in_bytes", _u32), ("scale", ctypes.c_float),
                ("zero_point", _i32), ("outer", _u32), ("axis_len", _u32), ("inner", _u32),
                ("graph_tensor", _u32)]


def _fn(name, res, *args):
    f = getattr(_lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


_open = _fn("rkaccel_open", ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(_vp))
_close = _fn("rkaccel_close", None, _vp)
_query = _fn("rkaccel_query", ctypes.c_int, _vp, ctypes.POINTER(_Info))
_strerror = _fn("rkaccel_strerror", ctypes.c_char_p, ctypes.c_int)
_model_load = _fn("rkaccel_model_load", ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(_vp),
                  ctypes.c_char_p, _sz)
_model_parse = _fn("rkaccel_model_parse", ctypes.c_int, ctypes.c_char_p, _sz,
                   ctypes.POINTER(_vp), ctypes.c_char_p, _sz)
_model_random = _fn("rkaccel_model_random", ctypes.c_int, _u32, _u32, _u32,
                    ctypes.POINTER(_u32), _u32, ctypes.POINTER(_vp))
_model_free = _fn("rkaccel_model_free", None, _vp)
_graph_parse = _fn("rkaccel_graph_parse", ctypes.c_int, ctypes.c_char_p, _sz,
                   ctypes.POINTER(_vp), ctypes.c_char_p, _sz)
_graph_desc = _fn("rkaccel_graph_desc", ctypes.POINTER(_u32), _vp)   # batch is its first field
_graph_to_model = _fn("rkaccel_graph_to_model", ctypes.c_int, ctypes.POINTER(_u32),
                      ctypes.POINTER(_vp), ctypes.c_char_p, _sz)
_graph_free = _fn("rkaccel_graph_free", None, _vp)
_model_output_op = _fn("rkaccel_model_output_op", ctypes.c_int, _vp, ctypes.POINTER(_OutputOp))
_output_op_run = _fn("rkaccel_output_op_run", ctypes.c_int, ctypes.POINTER(_OutputOp), _vp,
                     _u32, _vp)
_MAX_MEM_LAYERS = 4096         # RKACCEL_MODEL_MAX_MEM_LAYERS
_model_layer_times = _fn("rkaccel_model_layer_times", ctypes.c_int, _vp, _vp, _u32,
                         ctypes.POINTER(_u64), _u32)
_ctx_create_flags = _fn("rkaccel_ctx_create_flags", ctypes.c_int, _vp, _vp, _u32, _u32,
                        ctypes.POINTER(_vp))
_ctx_read_tensor = _fn("rkaccel_ctx_read_tensor", ctypes.c_int, _vp, _u32, _u32, _vp, _sz)
_model_shape = _fn("rkaccel_model_shape", ctypes.c_int, _vp, _u32, ctypes.POINTER(_Shape))
_ctx_dup = _fn("rkaccel_ctx_dup", ctypes.c_int, _vp, ctypes.POINTER(_vp))
_ctx_destroy = _fn("rkaccel_ctx_destroy", None, _vp)
_ctx_set_batch = _fn("rkaccel_ctx_set_batch", ctypes.c_int, _vp, _u32)
_ctx_batch = _fn("rkaccel_ctx_batch", _u32, _vp)
_ctx_copies = _fn("rkaccel_ctx_copies", _u32, _vp)
_ctx_set_core_mask = _fn("rkaccel_ctx_set_core_mask", ctypes.c_int, _vp, _u32)
_ctx_query_tensor = _fn("rkaccel_ctx_query_tensor", ctypes.c_int, _vp, ctypes.c_int,
                        ctypes.POINTER(_Attr))
_ctx_run = _fn("rkaccel_ctx_run", ctypes.c_int, _vp, _vp, _sz, _vp, _sz)
_ctx_run_u8 = _fn("rkaccel_ctx_run_u8", ctypes.c_int, _vp, _vp, _sz, ctypes.c_float, _i32, _vp,
                  _sz)
_ctx_slice_info = _fn("rkaccel_ctx_slice_info", ctypes.c_int, _vp, _u32,
                      ctypes.POINTER(_u32), ctypes.POINTER(_u64))
_ctx_io_ptr = _fn("rkaccel_ctx_io_ptr", _vp, _vp, ctypes.c_int, _u32)
_ctx_run_async = _fn("rkaccel_ctx_run_async", ctypes.c_int, _vp, ctypes.c_int,
                     ctypes.POINTER(ctypes.c_int))
_ctx_wait = _fn("rkaccel_ctx_wait", ctypes.c_int, _vp, ctypes.c_int64)
_to_native = _fn("rkaccel_to_native", ctypes.c_int, _vp, _u32, _u32, _vp, _sz)
_from_native = _fn("rkaccel_from_native", ctypes.c_int, _vp, _sz, _u32, _u32, _u32, _vp)


class Error(OSError):
    """A librkaccel failure: .errno is the positive errno value."""

    def __init__(self, err, what, msg=None):
        text = msg or _strerror(err).decode()
        super().__init__(-err, "%s: %s" % (what, text))


def _check(ret, what, msg=None):
    if ret < 0:
        raise Error(ret, what, msg)
    return ret


class Device:
    """An open rkaccel device (the first one, or @path)."""

    def __init__(self, path=None):
        self._h = _vp()
        self._ctxs = []         # before the open: close() runs even when it fails
        _check(_open(path.encode() if path else None, ctypes.byref(self._h)), "rkaccel_open")
        info = _Info()
        _check(_query(self._h, ctypes.byref(info)), "rkaccel_query")
        self.soc = info.soc_name.decode()
        self.num_cores = info.num_cores
        self.core_mask = info.core_mask
        self.driver_version = (info.driver_major, info.driver_minor, info.driver_patch)
        self._ctxs = []

    def context(self, model, core_mask=0, keep_tensors=False):
        """A new Context running @model on the cores of @core_mask (0: any)."""
        return Context(self, model, core_mask, keep_tensors=keep_tensors)

    def layer_times(self, model, core=0):
        """Device time, ns, of each layer of @model on @core (rkaccel_model_layer_times())."""
        ns = (_u64 * _MAX_MEM_LAYERS)()
        n = _check(_model_layer_times(self._h, model._h, core, ns, _MAX_MEM_LAYERS),
                   "rkaccel_model_layer_times")
        return list(ns[:n])

    def close(self):
        for c in list(self._ctxs):
            c.close()
        if self._h:
            _close(self._h)
            self._h = _vp()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


class Model:
    """A model in memory: Model.load(path), Model.parse(bytes), Model.random(...).

    A format 3.0 file (what rkaccel-convert writes) is lowered as
    rkaccel_graph_to_model() does it: .batch is the batch baked into it (1
    for older files) and .output_op the CPU op after the NPU (a softmax or
    a dequantize; None when the NPU's output is the model's).
    """

    def __init__(self, handle, batch=1):
        self._h = handle
        self.batch = batch
        op = _OutputOp()
        rc = _model_output_op(handle, ctypes.byref(op))
        self.output_op = op if rc == 0 else None

    @classmethod
    def load(cls, path):
        h, msg = _vp(), ctypes.create_string_buffer(256)
        rc = _model_load(os.fsencode(path), ctypes.byref(h), msg, 256)
        if rc == -_errno.ENOTSUP:       # a major version 1.x/2.x does not know: 3.x?
            with open(path, "rb") as f:
                return cls._parse_graph(f.read())
        _check(rc, "rkaccel_model_load", msg.value.decode() or None)
        return cls(h)

    @classmethod
    def parse(cls, data):
        h, msg = _vp(), ctypes.create_string_buffer(256)
        data = bytes(data)
        rc = _model_parse(data, len(data), ctypes.byref(h), msg, 256)
        if rc == -_errno.ENOTSUP:       # a major version 1.x/2.x does not know: 3.x?
            return cls._parse_graph(data)
        _check(rc, "rkaccel_model_parse", msg.value.decode() or None)
        return cls(h)

    @classmethod
    def _parse_graph(cls, data):
        g, h, msg = _vp(), _vp(), ctypes.create_string_buffer(512)
        _check(_graph_parse(data, len(data), ctypes.byref(g), msg, len(msg)),
               "rkaccel_graph_parse", msg.value.decode() or None)
        try:
            desc = _graph_desc(g)
            batch = desc[0]
            _check(_graph_to_model(desc, ctypes.byref(h), msg, len(msg)),
                   "rkaccel_graph_to_model", msg.value.decode() or None)
        finally:
            _graph_free(g)
        return cls(h, batch)

    @classmethod
    def random(cls, seed, rows, features, flags_last=0):
        """The same model as rkaccel_model_random(seed, rows, len(features) - 1, ...)."""
        h = _vp()
        f = (_u32 * len(features))(*features)
        _check(_model_random(seed, rows, len(features) - 1, f, flags_last, ctypes.byref(h)),
               "rkaccel_model_random")
        return cls(h)

    def shape(self, t):
        """Tensor @t's (height, width, channels, scale, zero_point): 0 the input."""
        s = _Shape()
        _check(_model_shape(self._h, t, ctypes.byref(s)), "rkaccel_model_shape")
        return (s.height, s.width, s.channels, s.scale, s.zero_point)

    def close(self):
        if self._h:
            _model_free(self._h)
            self._h = _vp()

    def __del__(self):
        self.close()


class TensorAttr:
    """Shape (batch, rows, features), numpy dtype, quantization and sizes."""

    def __init__(self, a):
        self.shape = tuple(a.dims[i] for i in range(a.n_dims))
        self.type = a.type
        self.dtype = np.dtype(np.int32 if a.type == TENSOR_INT32 else np.int8)
        self.scale = a.scale
        self.zero_point = a.zero_point
        self.size = a.size
        self.native_size = a.native_size

    def __repr__(self):
        return "TensorAttr(shape=%r, dtype=%s, scale=%r, zero_point=%d, size=%d)" % (
            self.shape, self.dtype, self.scale, self.zero_point, self.size)


class AsyncRun:
    """A queued batch: wait() blocks until it is done and returns the output."""

    def __init__(self, ctx, fence):
        self._ctx, self.fence = ctx, fence

    def fileno(self):
        return self.fence

    def wait(self, timeout=None):
        if self.fence < 0:
            raise ValueError("already waited for")
        p = select.poll()
        p.register(self.fence, select.POLLIN)
        if not p.poll(None if timeout is None else int(timeout * 1000)):
            raise Error(-_errno.ETIME, "wait")
        os.close(self.fence)
        self.fence = -1
        return self._ctx._gather()

    def __del__(self):
        if self.fence >= 0:
            os.close(self.fence)


class Context:
    """A model bound to the NPU: run(), dup(), set_batch(), run_async()."""

    def __init__(self, dev, model=None, core_mask=0, _handle=None, keep_tensors=False):
        self._dev = dev
        self._h = _vp()
        if _handle is not None:
            self._h = _handle
        else:
            _check(_ctx_create_flags(dev._h, model._h, core_mask,
                                     CTX_KEEP_TENSORS if keep_tensors else 0,
                                     ctypes.byref(self._h)), "rkaccel_ctx_create_flags")
        dev._ctxs.append(self)

    def read_tensor(self, t, shape, dtype=np.int8, slice_=0):
        """Tensor @t of the last run (keep_tensors=True): an array of @shape (H, W, C)."""
        out = np.empty(shape, dtype)
        _check(_ctx_read_tensor(self._h, slice_, t, out.ctypes.data, out.nbytes),
               "rkaccel_ctx_read_tensor")
        return out

    def _attr(self, which):
        a = _Attr()
        _check(_ctx_query_tensor(self._h, which, ctypes.byref(a)), "rkaccel_ctx_query_tensor")
        return TensorAttr(a)

    @property
    def input_attr(self):
        return self._attr(_BUF_INPUT)

    @property
    def output_attr(self):
        return self._attr(_BUF_OUTPUT)

    @property
    def batch(self):
        return _ctx_batch(self._h)

    @property
    def copies(self):
        return _ctx_copies(self._h)

    def set_batch(self, batch):
        _check(_ctx_set_batch(self._h, batch), "rkaccel_ctx_set_batch")

    def set_core_mask(self, mask):
        _check(_ctx_set_core_mask(self._h, mask), "rkaccel_ctx_set_core_mask")

    def dup(self):
        """A copy sharing the weights (batch 1, core mask 0)."""
        h = _vp()
        _check(_ctx_dup(self._h, ctypes.byref(h)), "rkaccel_ctx_dup")
        return Context(self._dev, _handle=h)

    def _input(self, x, dtype=np.int8):
        ia = self.input_attr
        x = np.ascontiguousarray(x)
        if x.dtype != dtype or x.size != int(np.prod(ia.shape)):
            raise ValueError("input must be %s of %d elements (%r), not %s of %d" %
                             (np.dtype(dtype), int(np.prod(ia.shape)), ia.shape, x.dtype,
                              x.size))
        return x

    def run(self, x):
        """Run the batch on int8 @x (shape (batch, rows, features) or flat): the output."""
        x = self._input(x)
        oa = self.output_attr
        out = np.empty(oa.shape, oa.dtype)
        _check(_ctx_run(self._h, x.ctypes.data, x.nbytes, out.ctypes.data, out.nbytes),
               "rkaccel_ctx_run")
        return out

    def run_u8(self, x):
        """Run the batch on uint8 pixels @x, one per input element: quantized with the
        input's scale and zero point as each slice is laid out. The output."""
        x = self._input(x, np.uint8)
        ia, oa = self.input_attr, self.output_attr
        out = np.empty(oa.shape, oa.dtype)
        _check(_ctx_run_u8(self._h, x.ctypes.data, x.nbytes, ia.scale, ia.zero_point,
                           out.ctypes.data, out.nbytes), "rkaccel_ctx_run_u8")
        return out

    def slice_info(self, i):
        """(core, nanoseconds) of slice @i of the last run."""
        core, ns = _u32(), _u64()
        _check(_ctx_slice_info(self._h, i, ctypes.byref(core), ctypes.byref(ns)),
               "rkaccel_ctx_slice_info")
        return core.value, ns.value

    def run_async(self, x, in_fence=-1):
        """Queue the batch on @x and return at once an AsyncRun (its fence fd)."""
        x = self._input(x)
        ia = self.input_attr
        b, rows, feat = ia.shape
        per = ia.native_size // b
        for i in range(b):
            dst = _ctx_io_ptr(self._h, _BUF_INPUT, i)
            if not dst:
                raise Error(-_errno.EINVAL, "rkaccel_ctx_io_ptr")
            _check(_to_native(x.ctypes.data + i * rows * feat, rows, feat, dst, per),
                   "rkaccel_to_native")
        fence = ctypes.c_int(-1)
        _check(_ctx_run_async(self._h, in_fence, ctypes.byref(fence)), "rkaccel_ctx_run_async")
        return AsyncRun(self, fence.value)

    def _gather(self):
        oa = self.output_attr
        b, rows, feat = oa.shape
        out = np.empty(oa.shape, oa.dtype)
        per = oa.native_size // b
        for i in range(b):
            src = _ctx_io_ptr(self._h, _BUF_OUTPUT, i)
            _check(_from_native(src, per, rows, feat, oa.dtype.itemsize,
                                out.ctypes.data + i * out[0].nbytes), "rkaccel_from_native")
        return out

    def wait(self, timeout_ns=-1):
        _check(_ctx_wait(self._h, timeout_ns), "rkaccel_ctx_wait")

    def close(self):
        if self._h:
            _ctx_destroy(self._h)
            self._h = _vp()
            self._dev._ctxs.remove(self)

    def __del__(self):
        if getattr(self, "_h", None):
            self.close()


class RKNNLite:
    """The method names of Rockchip's rknnlite.api.RKNNLite, over Context.

    load_rknn() takes this project's model files, those rkaccel-convert writes
    (format 3.0, the batch baked in) and the older ones (the closed .rknn
    format cannot be read: -1 and a message); init_runtime(core_mask=...)
    runs the file's batch (batch=... for a 1.x/2.x file), and
    inference(inputs=[x], data_format=...) returns 0 / a list of outputs:
    float32, dequantized as rknnlite does, or the probabilities of a softmax
    the model runs on the CPU after the NPU (raw=True: the NPU's int8/int32).
    x is uint8 pixels (quantized by the library), int8 as the model takes
    it, or float; NHWC, or NCHW with data_format="nchw"; its first dimension
    the batch.
    """

    NPU_CORE_AUTO = 0
    NPU_CORE_0 = 1
    NPU_CORE_1 = 2
    NPU_CORE_2 = 4
    NPU_CORE_0_1 = 3
    NPU_CORE_0_1_2 = 7
    NPU_CORE_ALL = 0xffff

    def __init__(self, verbose=False):
        self.verbose = verbose
        self._model = self._dev = self._ctx = None

    def _err(self, msg):
        print("E RKNNLite: " + msg)
        return -1

    def load_rknn(self, path):
        if str(path).endswith(".rknn"):
            return self._err("%s: the closed .rknn format cannot be read; use a model file "
                             "of rkaccel-convert or rkaccel-mkmodel" % path)
        try:
            self._model = Model.load(path)
        except (Error, OSError) as e:
            return self._err(str(e))
        return 0

    def init_runtime(self, core_mask=NPU_CORE_AUTO, batch=None):
        if self._model is None:
            return self._err("init_runtime: no model loaded")
        if batch is None:
            batch = self._model.batch
        elif self._model.batch > 1 and batch != self._model.batch:
            return self._err("init_runtime: batch %d: the file was built for batch %d" %
                             (batch, self._model.batch))
        try:
            self._dev = Device()
            mask = self._dev.core_mask if core_mask == self.NPU_CORE_ALL else core_mask
            self._ctx = self._dev.context(self._model, mask)
            if batch > 1:
                self._ctx.set_batch(batch)
        except Error as e:
            self.release()
            return self._err(str(e))
        return 0

    def _input(self, x, data_format):
        ia = self._ctx.input_attr
        x = np.asarray(x)
        if data_format not in (None, "nhwc", "nchw"):
            raise ValueError("data_format %r: not 'nhwc' or 'nchw'" % (data_format,))
        if data_format == "nchw" and x.ndim == 4:
            x = x.transpose(0, 2, 3, 1)
        if x.dtype in (np.uint8, np.int8):
            return x
        v = np.asarray(x, np.float32) / np.float32(ia.scale)
        q = np.sign(v) * np.floor(np.abs(v) + 0.5) + ia.zero_point  # half away from 0
        return np.clip(q, -128, 127).astype(np.int8)

    def inference(self, inputs, data_format=None, raw=False):
        if self._ctx is None:
            self._err("inference: init_runtime first")
            return None
        try:
            x = self._input(inputs[0], data_format)
            out = self._ctx.run_u8(x) if x.dtype == np.uint8 else self._ctx.run(x)
        except (Error, ValueError) as e:
            self._err("inference: %s" % e)
            return None
        if raw:
            return [out]
        op = self._model.output_op
        if op is not None:
            y = np.empty(out.shape, np.float32)
            out = np.ascontiguousarray(out)
            _check(_output_op_run(ctypes.byref(op), out.ctypes.data, out.shape[0],
                                  y.ctypes.data), "rkaccel_output_op_run")
            return [y]
        oa = self._ctx.output_attr
        zp = 0 if oa.dtype == np.int32 else oa.zero_point
        return [(out.astype(np.float32) - zp) * np.float32(oa.scale)]

    def release(self):
        if self._ctx is not None:
            self._ctx.close()
        if self._dev is not None:
            self._dev.close()
        if self._model is not None:
            self._model.close()
        self._model = self._dev = self._ctx = None
