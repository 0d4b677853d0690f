#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Convert time of MobileNetV2 (224x224, seeded random weights) with
rkaccel-convert, for Documentation/convert.rst. torchvision's mobilenet_v2
when python3-torchvision is installed, else the same architecture (the
paper's table: inverted residual blocks, ReLU6, width 1.0) defined below.

usage: time_mobilenet.py RKACCEL-CONVERT WORKDIR [N_IMAGES] [ALGORITHM]

Exports the network to ONNX (opset 13), writes N_IMAGES (default 20) seeded
smooth RGB images as .npy (NCHW raw pixels), then times rkaccel-convert with
the toolkit's ImageNet mean/std: read, prepare, the mean/std step,
calibration on the float executor, quantization and the lowering to a 3.0
graph (lower_graph.c). scripts/tv-data.sh times torchvision's own network
without the mean/std step (Documentation/convert.rst).
"""

import os
import subprocess
import sys
import time

import numpy as np
import torch

# (expansion t, channels c, repeats n, first stride s), MobileNetV2 paper, table 2
_BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
           (6, 160, 3, 2), (6, 320, 1, 1)]


def _cbr(cin, cout, k, s, groups=1, act=True):
    layers = [torch.nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False),
              torch.nn.BatchNorm2d(cout)]
    return layers + ([torch.nn.ReLU6()] if act else [])


class _Inverted(torch.nn.Module):
    def __init__(self, cin, cout, s, t):
        super().__init__()
        hid = cin * t
        layers = (_cbr(cin, hid, 1, 1) if t != 1 else []) + _cbr(hid, hid, 3, s, hid) + \
            _cbr(hid, cout, 1, 1, act=False)
        self.body = torch.nn.Sequential(*layers)
        self.res = s == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.res else self.body(x)


def _mobilenet_v2():
    try:
        import torchvision
        return torchvision.models.mobilenet_v2(weights=None)
    except ImportError:
        pass
    layers, cin = _cbr(3, 32, 3, 2), 32
    for t, c, n, s in _BLOCKS:
        for i in range(n):
            layers.append(_Inverted(cin, c, s if i == 0 else 1, t))
            cin = c
    layers += _cbr(cin, 1280, 1, 1) + [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                       torch.nn.Dropout(0.2), torch.nn.Linear(1280, 1000)]
    return torch.nn.Sequential(*layers)


def main():
    conv, d = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    algo = sys.argv[4] if len(sys.argv) > 4 else "normal"
    os.makedirs(d, exist_ok=True)
    onnx = os.path.join(d, "mobilenet_v2.onnx")
    if not os.path.exists(onnx):
        torch.manual_seed(0)
        net = _mobilenet_v2().eval()
        with torch.no_grad():   # batch-norm statistics away from 0/1: non-trivial activations
            for m in net.modules():
                if isinstance(m, torch.nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.1, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
        torch.onnx.export(net, torch.zeros(1, 3, 224, 224), onnx, input_names=["input"],
                          output_names=["logits"], opset_version=13)
    rng = np.random.default_rng(1)
    with open(os.path.join(d, "dataset.txt"), "w") as f:
        for i in range(n):
            y, x = np.mgrid[0:224, 0:224] / 223.0
            img = np.stack([128 + 100 * (rng.uniform(-1, 1) * x + rng.uniform(-1, 1) * y)
                            for _ in range(3)])[np.newaxis]
            img = np.clip(img + rng.normal(0, 8, img.shape), 0, 255).astype(np.float32)
            np.save(os.path.join(d, "s%02d.npy" % i), img)
            f.write("s%02d.npy\n" % i)
    t0 = time.monotonic()
    p = subprocess.run([conv, onnx, "-o", os.path.join(d, "m.rkm"), "--dataset",
                        os.path.join(d, "dataset.txt"), "--algorithm", algo,
                        "--mean", "123.675,116.28,103.53", "--std", "58.395,57.12,57.375"],
                       capture_output=True, text=True)
    dt = time.monotonic() - t0
    print("mobilenet_v2 224x224, %d images, %s: %.2f s, exit %d" % (n, algo, dt, p.returncode))
    for line in (p.stdout + p.stderr).splitlines()[:6]:
        print("  " + line)


if __name__ == "__main__":
    main()
