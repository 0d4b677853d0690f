#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write the digits' calibration and test data from split.json, for the C side.

- calib/NNN.npy: the 100 calibration images, float32 [1, 1, 8, 8], the model's
  input (sklearn pixel / 16), one per file, listed in dataset.txt (the
  toolkit's format: one path per line, relative to the file's folder);
- test_images.npy: the test images, uint8 [N, 8, 8], sklearn's pixel values
  0..16 (the model's input is the value / 16: exact in float32);
- test_labels.npy: their labels, uint8 [N].
Needs Debian's numpy and sklearn (/usr/bin/python3). Run twice, it writes
the same bytes.
"""
import json
import os

import numpy as np
from sklearn.datasets import load_digits

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    with open(os.path.join(HERE, "split.json")) as f:
        s = json.load(f)
    d = load_digits()
    images = d.images.astype(np.uint8)
    os.makedirs(os.path.join(HERE, "calib"), exist_ok=True)
    lines = []
    for k, i in enumerate(s["calibration"]):
        name = f"calib/{k:03d}.npy"
        x = (images[i].astype(np.float32) / 16.0).reshape(1, 1, 8, 8)
        np.save(os.path.join(HERE, name), x)
        lines.append(name)
    with open(os.path.join(HERE, "dataset.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    np.save(os.path.join(HERE, "test_images.npy"), images[s["test"]])
    np.save(os.path.join(HERE, "test_labels.npy"), d.target[s["test"]].astype(np.uint8))


if __name__ == "__main__":
    main()
