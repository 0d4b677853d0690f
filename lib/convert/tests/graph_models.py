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
  add into): refused naming the node.
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


def main():
    torch.manual_seed(5)
    os.makedirs(OUT, exist_ok=True)
    x = torch.randn(8, 3, 16, 16)
    for name, net in (("residual", Residual()), ("pool_pad", PoolPad()),
                      ("add_relu", AddRelu())):
        net.train()
        with torch.no_grad():
            net(x)	# batch-norm statistics of the samples
        torch.onnx.export(net.eval(), x[:1], os.path.join(OUT, name + ".onnx"),
                          opset_version=13, input_names=["image"], output_names=["logits"])
    with open(os.path.join(OUT, "dataset.txt"), "w") as f:
        for i in range(len(x)):
            np.save(os.path.join(OUT, "s%d.npy" % i), x[i:i + 1].numpy())
            f.write("s%d.npy\n" % i)


if __name__ == "__main__":
    main()
