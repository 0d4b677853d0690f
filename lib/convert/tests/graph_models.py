#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Small seeded models for lower_graph.c (the 3.0 graph lowering), made by
scripts/check-convert.sh into OUTDIR with a dataset.txt of 8 seeded .npy
samples ([1, 3, 16, 16]):

- residual.onnx: conv + BN + ReLU6, a padded 3x3 max pool (after the ReLU6:
  zero point -128), a ResNet basic block (conv, conv, Add, ReLU) and a
  downsampling one (its shortcut a strided 1x1 conv), a depthwise conv,
  GlobalAveragePool, Flatten, Gemm: it lowers to a 3.0 graph;
- pool_pad.onnx: a padded max pool after a conv without activation (its
  zero point not -128): refused naming the node;
- add_relu.onnx: an Add of two ReLU outputs (no convolution accumulator to
  add into): refused naming the node;
- softmax.onnx (opset 13) and softmax11.onnx (opset 11: the softmax of a
  [1, 10] row; the same network, its batch-norm statistics taken once):
  a classifier ending in Softmax, placed on the CPU after the
  NPU (the Gemm's int32 logits, a dequantize, the softmax); its head's
  weights scaled up so that the probabilities are not near uniform;
- seg_softmax.onnx: a per-pixel Softmax over the 8 channels of a 1x1
  conv's [1, 8, 16, 16] output (the format's axis 3 of NHWC);
- sigmoid.onnx: a classifier ending in Sigmoid: refused (no CPU sigmoid).
"""
import os
import sys

import numpy as np
import torch

OUT = sys.argv[1]


def cbn(cin, cout, k=3, s=1, groups=1):
    return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, k, s, k // 2, groups=groups,
                                               bias=False), torch.nn.BatchNorm2d(cout))


class Residual(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem, self.relu6 = cbn(3, 16), torch.nn.ReLU6()
        self.pool = torch.nn.MaxPool2d(3, 2, 1)
        self.a1, self.a2 = cbn(16, 16), cbn(16, 16)
        self.b1, self.b2, self.down = cbn(16, 32, s=2), cbn(32, 32), cbn(16, 32, k=1, s=2)
        self.dw = cbn(32, 32, groups=32)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(self.relu6(self.stem(x)))
        x = torch.relu(self.a2(torch.relu(self.a1(x))) + x)
        x = torch.relu(self.b2(torch.relu(self.b1(x))) + self.down(x))
        x = torch.relu(self.dw(x))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


class PoolPad(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(3, 8, 3, 1, 1)
        self.fc = torch.nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        return self.fc(torch.flatten(torch.nn.functional.max_pool2d(self.c(x), 3, 2, 1), 1))


class AddRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Conv2d(3, 8, 3, 1, 1), torch.nn.Conv2d(3, 8, 3, 1, 1)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.a(x)) + torch.relu(self.b(x))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


class Classifier(torch.nn.Module):
    def __init__(self, tail):
        super().__init__()
        self.stem, self.conv = cbn(3, 16), cbn(16, 32)
        self.fc, self.tail = torch.nn.Linear(32, 10), tail
        with torch.no_grad():
            self.fc.weight.mul_(12.0)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.stem(x)), 2)
        x = torch.relu(self.conv(x))
        return self.tail(self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1)))


class SegSoftmax(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem, self.cls = cbn(3, 16), torch.nn.Conv2d(16, 8, 1)
        with torch.no_grad():
            self.cls.weight.mul_(6.0)

    def forward(self, x):
        return torch.softmax(self.cls(torch.relu(self.stem(x))), dim=1)


def main():
    torch.manual_seed(5)
    os.makedirs(OUT, exist_ok=True)
    x = torch.randn(8, 3, 16, 16)
    softmax = Classifier(torch.nn.Softmax(dim=1))
    seen = set()
    for name, net, opset in (("residual", Residual(), 13), ("pool_pad", PoolPad(), 13),
                             ("add_relu", AddRelu(), 13), ("softmax", softmax, 13),
                             ("softmax11", softmax, 11), ("seg_softmax", SegSoftmax(), 13),
                             ("sigmoid", Classifier(torch.nn.Sigmoid()), 13)):
        if id(net) not in seen:	# softmax11 is softmax's very network, once more
            seen.add(id(net))
            net.train()
            with torch.no_grad():
                net(x)	# batch-norm statistics of the samples
        torch.onnx.export(net.eval(), x[:1], os.path.join(OUT, name + ".onnx"),
                          opset_version=opset, input_names=["image"],
                          output_names=["logits" if name in ("residual", "pool_pad", "add_relu")
                                        else "prob"])
    with open(os.path.join(OUT, "dataset.txt"), "w") as f:
        for i in range(len(x)):
            np.save(os.path.join(OUT, "s%d.npy" % i), x[i:i + 1].numpy())
            f.write("s%d.npy\n" % i)


if __name__ == "__main__":
    main()
