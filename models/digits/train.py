#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Train the digits CNN on sklearn's 8x8 handwritten digits and export digits.onnx.

The split (train / calibration / test) is drawn once with a fixed seed and
written to split.json; the test digits are never used in training or for
calibration. Input: float32 [1, 1, 8, 8], the sklearn pixel value (0..16)
divided by 16. Output: 10 logits. Run twice, it writes the same files.
"""
import json
import os
import sys

import numpy as np
import torch
from sklearn.datasets import load_digits

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20261205
N_TEST = 400
N_CALIB = 100
EPOCHS = 30


class DigitsNet(torch.nn.Module):
    """Conv+BN+ReLU twice, a max pool, Conv+BN+ReLU, an average pool, a Gemm."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(16)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(32)
        self.pool1 = torch.nn.MaxPool2d(2)
        self.conv3 = torch.nn.Conv2d(32, 32, 3, padding=1)
        self.bn3 = torch.nn.BatchNorm2d(32)
        self.pool2 = torch.nn.AvgPool2d(2)
        self.fc = torch.nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.pool1(torch.relu(self.bn2(self.conv2(x))))
        x = self.pool2(torch.relu(self.bn3(self.conv3(x))))
        return self.fc(torch.flatten(x, 1))


def split(n):
    perm = np.random.RandomState(SEED).permutation(n)
    test = sorted(int(i) for i in perm[:N_TEST])
    calib = sorted(int(i) for i in perm[N_TEST:N_TEST + N_CALIB])
    train = sorted(int(i) for i in perm[N_TEST + N_CALIB:])
    return {"seed": SEED, "train": train, "calibration": calib, "test": test}


def load():
    d = load_digits()
    x = (d.images.astype(np.float32) / 16.0)[:, None, :, :]
    return x, d.target.astype(np.int64)


def top1(model, x, y):
    with torch.no_grad():
        return float((model(torch.from_numpy(x)).argmax(1).numpy() == y).mean())


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    x, y = load()
    s = split(len(y))
    xt, yt = x[s["train"]], y[s["train"]]
    model = DigitsNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(EPOCHS):
        model.train()
        perm = torch.randperm(len(yt), generator=gen).numpy()
        for b in range(0, len(perm), 32):
            idx = perm[b:b + 32]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(xt[idx])),
                                                     torch.from_numpy(yt[idx]))
            loss.backward()
            opt.step()
    model.eval()
    acc = top1(model, x[s["test"]], y[s["test"]])
    print(f"digits: float top-1 {100 * acc:.2f}% on {len(s['test'])} test images "
          f"(train {100 * top1(model, xt, yt):.2f}% on {len(yt)})")
    with open(os.path.join(HERE, "split.json"), "w") as f:
        json.dump(s, f, separators=(",", ":"))
        f.write("\n")
    # PRESERVE keeps BatchNormalization in the file (EVAL would fold it at
    # export): the converter's own folding pass is what is exercised.
    torch.onnx.export(model, torch.zeros(1, 1, 8, 8), os.path.join(HERE, "digits.onnx"),
                      input_names=["pixels"], output_names=["logits"], opset_version=13,
                      training=torch.onnx.TrainingMode.PRESERVE)
    return 0 if acc >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
