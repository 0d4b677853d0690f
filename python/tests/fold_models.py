# SPDX-License-Identifier: MIT
"""Seeded test models and pixels for mean/std/RGB2BGR folding (test_toolkit.py).

make(dir): two seeded CNNs over 3x16x16 RGB-or-BGR images, exported to ONNX
with torch: 'fold.onnx' (first conv unpadded: the fold is exact) and
'padded.onnx' (first conv padded: not folded, recorded for the runtime),
and 'softmax.onnx' (padded's shape ending in Softmax, its head's weights
scaled so that the probabilities are not near uniform: the softmax runs
on the CPU after the NPU);
20 calibration images as PNG (written here with zlib: no imaging package
is needed) listed in dataset.txt, and 64 test images (uint8 NHWC RGB).
float_outputs(model, pixels, mean, std, bgr): PyTorch on the normalised
pixels, the reference the int8 model on raw pixels is compared against.
"""

import os
import struct
import zlib

import numpy as np
import torch

SIZE = 16
MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


def write_png(path, rgb):
    """An 8-bit RGB PNG of the uint8 [H][W][3] array @rgb."""
    h, w, _ = rgb.shape

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xffffffff)
    raw = b"".join(b"\0" + rgb[y].tobytes() for y in range(h))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def pixels(rng, n):
    """@n smooth uint8 RGB images [n][16][16][3]: gradients and blobs, like photos, not noise."""
    y, x = np.mgrid[0:SIZE, 0:SIZE] / (SIZE - 1.0)
    out = np.empty((n, SIZE, SIZE, 3), np.uint8)
    for i in range(n):
        img = np.zeros((SIZE, SIZE, 3))
        for c in range(3):
            a, b, k = rng.uniform(-1, 1, 3)
            cx, cy = rng.uniform(0, 1, 2)
            img[..., c] = (128 + 80 * (a * x + b * y) +
                           90 * k * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) * 8))
        out[i] = np.clip(img + rng.normal(0, 6, img.shape), 0, 255).astype(np.uint8)
    return out


class Net(torch.nn.Module):
    def __init__(self, pad):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 12, 3, padding=pad)
        self.c2 = torch.nn.Conv2d(12, 16, 3, stride=2, padding=1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.c1(x))
        x = torch.relu(self.c2(x))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


class SoftmaxNet(Net):
    def __init__(self):
        super().__init__(1)
        with torch.no_grad():
            self.fc.weight.mul_(12.0)

    def forward(self, x):
        return torch.softmax(super().forward(x), dim=1)


def make_net(name):
    return SoftmaxNet() if name == "softmax" else Net(0 if name == "fold" else 1)


def make(d):
    torch.manual_seed(7)
    rng = np.random.default_rng(7)
    for name in ("fold", "padded", "softmax"):
        net = make_net(name).eval()
        torch.onnx.export(net, torch.zeros(1, 3, SIZE, SIZE), os.path.join(d, name + ".onnx"),
                          input_names=["image"], output_names=["logits"], opset_version=13)
        torch.save(net.state_dict(), os.path.join(d, name + ".pt"))
    calib = pixels(rng, 20)
    with open(os.path.join(d, "dataset.txt"), "w") as f:
        for i, img in enumerate(calib):
            write_png(os.path.join(d, "c%02d.png" % i), img)
            f.write("c%02d.png\n" % i)
    np.save(os.path.join(d, "test.npy"), pixels(rng, 64))


def float_outputs(d, name, px, mean, std, bgr):
    """PyTorch's outputs for uint8 NHWC RGB @px, normalised as the toolkit does."""
    net = make_net(name).eval()
    net.load_state_dict(torch.load(os.path.join(d, name + ".pt")))
    x = px.astype(np.float32)
    if bgr:
        x = x[..., ::-1]
    x = (x - np.array(mean, np.float32)) / np.array(std, np.float32)
    with torch.no_grad():
        return net(torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))).numpy()
