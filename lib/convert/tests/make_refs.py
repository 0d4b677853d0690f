#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Test inputs for convert_test, made at test time into OUTDIR.

- small models exported by torch.onnx.export, one per supported op and per
  clean-up case, each with a seeded input (NAME.in) and PyTorch's own output
  (NAME.ref), raw little-endian float32;
- the digits test split with PyTorch's logits for the committed digits.onnx
  (train.py's DigitsNet class with the weights read back from the file);
- malformed models made with onnx.helper, each with the error text expected.
cases.txt lists them: "model NAME GRAPH", "digits N TOP1 GRAPH",
"bad NAME|substring|..." (GRAPH: what the passes must leave, see convert_test).

Also, for concat_int8 and rkaccel-convert (not in cases.txt): concat/ holds
concat.onnx (fire-module concats along channels, one reading the graph input,
ceil-mode max pools) with its calibration set (dataset.txt, 8 seeded .npy
samples), and concat_bad.onnx (a 16-channel input before the last).
"""
import json
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DIGITS = os.path.join(HERE, "..", "..", "..", "models", "digits")
OUT = sys.argv[1]
cases = []


def export(name, sig, model, shape, opset=13, fold=True, preserve=False, inputs=1):
    """sig: the graph the passes must leave, "Op:fused-activation,..." in order."""
    torch.manual_seed(len(name))
    model.eval()
    with torch.no_grad():
        for m in model.modules():   # non-trivial batch-norm statistics
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.3, 0.3)
    xs = tuple(torch.randn(*shape) for _ in range(inputs))
    path = os.path.join(OUT, name + ".onnx")
    mode = torch.onnx.TrainingMode.PRESERVE if preserve else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, xs, path, opset_version=opset, do_constant_folding=fold,
                      training=mode, input_names=[f"in{i}" for i in range(inputs)])
    with torch.no_grad():
        y = model(*xs)
    ys = y if isinstance(y, tuple) else (y,)
    np.concatenate([x.numpy().ravel() for x in xs]).astype("<f4").tofile(
        os.path.join(OUT, name + ".in"))
    np.concatenate([t.numpy().ravel() for t in ys]).astype("<f4").tofile(
        os.path.join(OUT, name + ".ref"))
    cases.append(f"model {name} {sig}")


class Seq(torch.nn.Module):
    def __init__(self, *mods, fn=None):
        super().__init__()
        self.mods = torch.nn.ModuleList(mods)
        self.fn = fn

    def forward(self, x):
        for m in self.mods:
            x = m(x)
        return self.fn(x) if self.fn else x


class ReshapeChain(torch.nn.Module):
    """x.view(x.size(0), -1): Shape/Gather/Unsqueeze/Concat feeding Reshape."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.fc = torch.nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        x = self.conv(x)
        return self.fc(x.view(x.size(0), -1))


class Branches(torch.nn.Module):
    """Add, Mul, Concat, MatMul with constant weights, Sigmoid, Softmax."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(4, 6, 1)
        self.b = torch.nn.Conv2d(4, 6, 3, padding=1)
        self.w = torch.nn.Parameter(torch.randn(5, 7))

    def forward(self, x):
        s = self.a(x) + self.b(x)
        m = torch.relu(s) * self.a(x)
        c = torch.cat([s, m, x], 1)            # 16 channels of 5x5
        c = torch.matmul(c, self.w)             # MatMul over the last axis
        c = F.adaptive_avg_pool2d(c, 1).flatten(1)
        return torch.softmax(torch.sigmoid(c), 1)


class TwoInputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3, padding=1, groups=3)

    def forward(self, x, y):
        return torch.relu(self.conv(x) + y) * y


def models():
    nn = torch.nn
    export("conv_bn_relu", "Conv:relu",
           Seq(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()),
           (2, 3, 9, 9), preserve=True)
    export("bn_standalone", "ChannelAffine,MaxPool,ChannelAffine",
           Seq(nn.BatchNorm2d(3), nn.MaxPool2d(2), nn.BatchNorm2d(3)),
           (1, 3, 8, 8), preserve=True)
    export_zero_var(Seq(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4)))
    export("pad_conv_asym", "Conv",
           PadConv(), (1, 3, 7, 8))
    export("flatten_gemm", "Conv,FullyConnected",
           Seq(nn.Conv2d(3, 4, 3, stride=2), nn.Flatten(), nn.Linear(36, 10)),
           (1, 3, 7, 7))
    export("reshape_chain", "Conv,FullyConnected",
           ReshapeChain(), (1, 3, 6, 6), fold=False)
    export("relu6", "Conv:relu6",
           Seq(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU6()), (1, 3, 6, 6))
    export("clip_other", "Conv,Clip",
           Seq(nn.Conv2d(3, 4, 1), nn.Hardtanh(-0.5, 0.25)), (1, 3, 5, 5))
    export("leaky", "Conv:leaky",
           Seq(nn.Conv2d(3, 8, 3), nn.LeakyReLU(0.2)), (1, 3, 6, 6))
    export("avgpool_incl", "AveragePool",
           nn.AvgPool2d(3, 2, padding=1, count_include_pad=True), (1, 2, 7, 8))
    export("avgpool_excl", "AveragePool",
           nn.AvgPool2d(3, 2, padding=1, count_include_pad=False), (1, 2, 7, 8))
    export("avgpool_ceil_incl", "AveragePool",
           nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=True),
           (1, 2, 8, 8))
    export("avgpool_ceil_excl", "AveragePool",
           nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False),
           (1, 2, 8, 8))
    export("maxpool_ceil", "MaxPool",
           nn.MaxPool2d(3, 2, padding=1, ceil_mode=True), (1, 2, 8, 9))
    export("grouped_conv", "Conv",
           Seq(nn.Conv2d(4, 6, 3, groups=2, stride=2, padding=1)),
           (1, 4, 9, 9))
    export("depthwise", "Conv:relu6,Conv",
           Seq(nn.Conv2d(6, 6, 3, groups=6, padding=1), nn.ReLU6(),
               nn.Conv2d(6, 12, 5, groups=6, stride=2, padding=2)), (1, 6, 10, 10))
    export("branches", "Conv,Conv,Add,Relu,Mul,Concat,FullyConnected,GlobalAveragePool,"
           "Flatten,Sigmoid@cpu,Softmax@cpu",
           Branches(), (1, 4, 5, 5))
    export("gap_softmax", "Conv,GlobalAveragePool,Flatten,Softmax@cpu",
           Seq(nn.Conv2d(3, 10, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Softmax(1)),
           (1, 3, 6, 6))
    export("two_inputs", "Conv,Add:relu,Mul",
           TwoInputs(), (1, 3, 5, 5), inputs=2)
    export("dropout_identity", "Conv,FullyConnected",
           Seq(nn.Conv2d(3, 4, 3), nn.Dropout(0.3), nn.Identity(), nn.Flatten(),
               nn.Linear(36, 4)), (1, 3, 5, 5))
    # Older opsets: Clip, Pad, Unsqueeze and Softmax take attributes.
    export("opset9_chain", "Conv,FullyConnected",
           ReshapeChain(), (1, 3, 6, 6), opset=9, fold=False)
    export("opset9_pad_relu6", "Conv:relu6",
           Seq(PadConv(), nn.ReLU6()), (1, 3, 7, 8), opset=9)
    export("opset11_softmax", "Conv,Flatten,Softmax@cpu",
           Seq(nn.Conv2d(3, 4, 1), nn.Flatten(), nn.Softmax(1)),
           (2, 3, 2, 2), opset=11)
    helper_made()


def helper_made():
    """What torch does not export: Gemm with transB=0, alpha, beta and a
    broadcast C; Conv with auto_pad SAME_UPPER (asymmetric) at opset 17; a
    Slice of constants folded into a Concat input.
    The reference is still PyTorch, from its functional ops."""
    rs = np.random.RandomState(7)
    x = rs.randn(1, 3, 6, 7).astype(np.float32)
    w = rs.randn(4, 3, 2, 2).astype(np.float32)
    b = rs.randn(10, 5).astype(np.float32)
    c = rs.randn(1, 5).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="same", auto_pad="SAME_UPPER",
                              strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flat"),
             helper.make_node("Slice", ["k3", "s0", "s1", "ax"], ["kk"], name="cut"),
             helper.make_node("Concat", ["f", "f", "kk"], ["f2"], name="cat", axis=1),
             helper.make_node("Gemm", ["f2", "b", "cc"], ["y"], name="gemm", alpha=0.5,
                              beta=2.0)]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(c, "cc"),
             numpy_helper.from_array(np.ones((1, 6), np.float32), "k3"),
             numpy_helper.from_array(np.array([1], np.int64), "s0"),
             numpy_helper.from_array(np.array([3], np.int64), "s1"),
             numpy_helper.from_array(np.array([1], np.int64), "ax")]
    graph = helper.make_graph(nodes, "g", [vi("x", [1, 3, 6, 7])], [vi("y", [1, 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(OUT, "gemm_same_opset17.onnx"))
    t = torch.from_numpy
    xp = F.pad(t(x), (0, 1, 0, 1))      # SAME_UPPER: the extra row/column at the end
    r = torch.relu(F.conv2d(xp, t(w), stride=2))
    f = r.mean((2, 3))
    f2 = torch.cat([f, f, t(np.ones((1, 2), np.float32))], 1)
    y = 0.5 * f2 @ t(b) + 2.0 * t(c)
    x.astype("<f4").tofile(os.path.join(OUT, "gemm_same_opset17.in"))
    y.numpy().astype("<f4").tofile(os.path.join(OUT, "gemm_same_opset17.ref"))
    cases.append("model gemm_same_opset17 Conv:relu,GlobalAveragePool,Flatten,Concat,"
                 "FullyConnected")


class PadConv(torch.nn.Module):
    """An explicit asymmetric zero Pad that the converter merges into the Conv."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 5, 3, padding=(1, 0))

    def forward(self, x):
        return self.conv(F.pad(x, (2, 1, 0, 1)))


def export_zero_var(model):
    export("bn_zero_var", "Conv", model, (1, 2, 6, 6), preserve=True)
    m = onnx.load(os.path.join(OUT, "bn_zero_var.onnx"))
    for init in m.graph.initializer:   # a zero variance is valid: epsilon applies
        if "running_var" in init.name:
            init.CopyFrom(numpy_helper.from_array(np.zeros(4, np.float32), init.name))
    onnx.save(m, os.path.join(OUT, "bn_zero_var.onnx"))
    model.mods[1].running_var.zero_()
    x = np.fromfile(os.path.join(OUT, "bn_zero_var.in"), "<f4").reshape(1, 2, 6, 6)
    with torch.no_grad():
        model(torch.from_numpy(x)).numpy().astype("<f4").tofile(
            os.path.join(OUT, "bn_zero_var.ref"))


def digits():
    sys.path.insert(0, DIGITS)
    from train import DigitsNet, load  # the class the committed model was made from
    net = DigitsNet()
    m = onnx.load(os.path.join(DIGITS, "digits.onnx"))
    weights = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy())
               for i in m.graph.initializer}
    missing = net.load_state_dict(weights, strict=False)
    if missing.missing_keys and any("num_batches" not in k for k in missing.missing_keys):
        raise SystemExit(f"digits.onnx lacks weights for {missing.missing_keys}")
    net.eval()
    with open(os.path.join(DIGITS, "split.json")) as f:
        test = json.load(f)["test"]
    x, y = load()
    with torch.no_grad():
        logits = net(torch.from_numpy(x[test])).numpy()
    x[test].astype("<f4").tofile(os.path.join(OUT, "digits.in"))
    logits.astype("<f4").tofile(os.path.join(OUT, "digits.ref"))
    y[test].astype("<i4").tofile(os.path.join(OUT, "digits.labels"))
    acc = float((logits.argmax(1) == y[test]).mean())
    cases.append(f"digits {len(test)} {100 * acc:.2f} "
                 "Conv:relu,Conv:relu,MaxPool,Conv:relu,AveragePool,FullyConnected")


def save_bad(name, graph, expect, opset=13):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())
    cases.append("bad " + name + "|" + "|".join(expect))


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def weight(name, arr):
    return numpy_helper.from_array(np.asarray(arr, np.float32), name)


def bad():
    w = np.random.RandomState(1).randn(4, 3, 3, 3).astype(np.float32)
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv")
    save_bad("cycle", helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["a"], name="add1"),
         helper.make_node("Relu", ["a"], ["b"], name="relu1"),
         helper.make_node("Relu", ["b"], ["y"], name="relu2")],
        "g", [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])]), ["cycle"])
    save_bad("missing_init", helper.make_graph(
        [conv], "g", [vi("x", [1, 3, 4, 4])], [vi("y", [1, 4, 2, 2])]),
        ["node 'conv' (Conv): input 'w' is not produced by any node"])
    huge = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 40, 3, 3, 3])
    save_bad("absurd_dims_init", helper.make_graph(
        [conv], "g", [vi("x", [1, 3, 4, 4])], [vi("y", [1, 4, 2, 2])], [huge]),
        ["initializer 'w': dim 0 is 1099511627776"])
    save_bad("absurd_dims_input", helper.make_graph(
        [conv], "g", [vi("x", [1, 3, 1 << 33, 4])], [vi("y", [1, 4, 2, 2])],
        [weight("w", w)]), ["graph input 'x': dim 2"])
    save_bad("absurd_reshape", helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
        "g", [vi("x", [1, 3, 4, 4])], [vi("y", [1, 48])],
        [numpy_helper.from_array(np.array([1 << 30, 1 << 30], np.int64), "s")]),
        ["node 'rs' (Reshape)"])
    nan_w = w.copy()
    nan_w[1, 2, 0, 1] = np.nan
    save_bad("nan_weights", helper.make_graph(
        [conv], "g", [vi("x", [1, 3, 4, 4])], [vi("y", [1, 4, 2, 2])], [weight("w", nan_w)]),
        ["initializer 'w': element", "NaN"])
    inf_w = w.copy()
    inf_w[0, 0, 0, 0] = -np.inf
    save_bad("inf_weights", helper.make_graph(
        [conv], "g", [vi("x", [1, 3, 4, 4])], [vi("y", [1, 4, 2, 2])], [weight("w", inf_w)]),
        ["initializer 'w': element 0 is Inf"])
    save_bad("size_mismatch", helper.make_graph(
        [conv], "g", [vi("x", [1, 3, 4, 4])], [vi("y", [1, 4, 2, 2])],
        [TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 3, 3, 3],
                     float_data=w.ravel()[:100])]),
        ["initializer 'w': 100 values for 108 elements"])
    save_bad("wrong_input_type", helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
        [vi("x", [1, 3], TensorProto.INT32)], [vi("y", [1, 3])]),
        ["graph input 'x': only float32"])
    save_bad("old_opset", helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
        [vi("x", [1, 3])], [vi("y", [1, 3])]), ["opset 5"], opset=5)
    save_bad("dup_output", helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="r1"),
         helper.make_node("Relu", ["x"], ["y"], name="r2")], "g",
        [vi("x", [1, 3])], [vi("y", [1, 3])]), ["node 'r2' (Relu): output 'y'"])
    save_bad("nonconst_weights", helper.make_graph(
        [helper.make_node("Conv", ["x", "x2"], ["y"], name="dynconv")], "g",
        [vi("x", [1, 3, 4, 4]), vi("x2", [4, 3, 3, 3])], [vi("y", [1, 4, 2, 2])]),
        ["node 'dynconv' (Conv): weights and bias must be constants"])
    # Several unsupported nodes: every one named in one error.
    save_bad("unsupported_many", helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="layer3/conv", dilations=[2, 2],
                          pads=[2, 2, 2, 2]),
         helper.make_node("Transpose", ["c"], ["t"], name="tr", perm=[0, 1, 3, 2]),
         helper.make_node("Erf", ["t"], ["e"], name="erf"),
         helper.make_node("Relu", ["x"], ["r"], name="early"),
         helper.make_node("Softmax", ["r"], ["s"], name="mid_softmax", axis=1),
         helper.make_node("Conv", ["s", "w"], ["y2"], name="after", pads=[1, 1, 1, 1]),
         helper.make_node("MaxPool", ["y2"], ["y"], name="mp", kernel_shape=[2, 2],
                          dilations=[1, 2])],
        "g", [vi("x", [1, 3, 8, 8])], [vi("e", None), vi("y", None)], [weight("w", w)]),
        ["node 'layer3/conv' (Conv): dilation 2 not supported",
         "node 'tr' (Transpose): only on constant inputs",
         "node 'erf' (Erf): operator not supported",
         "node 'mid_softmax' (Softmax): runs on the CPU, so only after the last NPU layer",
         "node 'mp' (MaxPool): dilation 2 not supported"])
    gt = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 3, 3, 3],
                     data_location=TensorProto.EXTERNAL)
    gt.external_data.add(key="location", value="weights.bin")
    save_bad("external_data", helper.make_graph(
        [conv], "g", [vi("x", [1, 3, 4, 4])], [vi("y", [1, 4, 2, 2])], [gt]),
        ["external data"])


class Fire(torch.nn.Module):
    """Two concats along channels sharing one input, the second reading the
    graph input (a copy layer), ceil-mode max pools, and a concat of the
    pools: every concat input quantized as the concat."""

    def __init__(self, first=32):
        super().__init__()
        self.a = torch.nn.Conv2d(3, first, 3, padding=1)
        self.b = torch.nn.Conv2d(3, 16, 1)
        self.c = torch.nn.Conv2d(first + 16, 32, 3, padding=1)
        self.d = torch.nn.Conv2d(first + 3, 32, 1)
        self.out = torch.nn.Conv2d(64, 10, 1)

    def forward(self, x):
        a = torch.relu(self.a(x))
        c1 = torch.cat([a, self.b(x)], 1)       # a ReLU and a signed input
        c2 = torch.cat([a, x], 1)               # a again, then the graph input
        p = F.max_pool2d(torch.relu(self.c(c1)), 3, 2, ceil_mode=True)
        q = F.max_pool2d(torch.relu(self.d(c2)), 3, 2, ceil_mode=True)
        return self.out(torch.cat([p, q], 1))


def concat_models():
    out = os.path.join(OUT, "concat")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(27)
    for name, net in (("concat", Fire()), ("concat_bad", Fire(16))):
        torch.onnx.export(net.eval(), torch.randn(1, 3, 10, 10), os.path.join(out, name + ".onnx"),
                          opset_version=13, input_names=["image"], output_names=["logits"])
    g = torch.Generator().manual_seed(28)
    lines = []
    for i in range(8):
        rel = "calib-%d.npy" % i
        np.save(os.path.join(out, rel), torch.randn(1, 3, 10, 10, generator=g).numpy())
        lines.append(rel)
    with open(os.path.join(out, "dataset.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    concat_models()
    models()
    digits()
    bad()
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("\n".join(cases) + "\n")


if __name__ == "__main__":
    main()
