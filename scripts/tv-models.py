#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torchvision's mobilenet_v2, resnet18 and squeezenet1_1 (files squeezenet-S) as ONNX, with their calibration
set, test images and PyTorch's outputs, for scripts/tv-data.sh (issue 27,
item 6). Debian's python3-torch and python3-torchvision, nothing downloaded:
there are no pretrained weights offline, so the weights are made here.

usage: tv-models.py OUTDIR

Weights: torchvision's own seeded initialisation (torch.manual_seed(SEED);
Kaiming-normal convolutions, N(0, 0.01) classifier), then every batch norm's
affine scale drawn from U(0.5, 1.5) and shift from N(0, 0.1), then the
batch-norm statistics (running mean and variance) recomputed on real photos
(SqueezeNet 1.1 has no batch norm: its seeded initialisation alone):
BN_IMAGES random crops of the photos Debian's python3-skimage ships
(skimage.data), forwarded in train mode with momentum None (the exact
average over all batches) and no gradient. So every activation is
normalised on real images, as in a trained network, while the classifier
stays random (the accuracy measure is float against int8, not top-1).

Images: the skimage photos below, RGB as float 0..1 (gray ones repeated to
three channels), resized so the short side is 256 (bilinear, antialiased)
and cropped to 224x224 at a seeded place, mirrored with probability 1/2;
the 96x96 images are those crops resized (bilinear, antialiased). Then
ImageNet's mean/std: the ONNX models take normalised float NCHW input, and
so do the .npy samples (the converter's --mean/--std fold is not done on
these stems: their first convolutions pad). The photos of TEST_PHOTOS give
the test images (one centred crop each) and are never used for the batch
norms or the calibration; the others give BN_IMAGES crops for the batch
norms and CALIB_IMAGES other crops for dataset.txt.

Writes, per size S in 224, 96: dataset-S.txt and calib-S/NNN.npy (float32
[1, 3, S, S]), test-S.npy (float32 [N, 3, S, S]), and per network NET-S.onnx
(opset 13, input 'image' [1, 3, S, S], output 'logits' [1, 1000]) and
NET-S.ref.npy (PyTorch's logits of the test images, [N, 1000]); info.txt.
The same versions of torch, torchvision and skimage write the same bytes.
"""

import os
import sys

import numpy as np
import skimage
import skimage.data
import skimage.io
import torch
import torch.nn.functional as F
import torchvision

SEED = 27
BN_IMAGES = 64
CALIB_IMAGES = 20
SIZES = (224, 96)
# file name: torchvision's function (zoo_test's variant is tv_NAME)
NETS = {"mobilenet_v2": "mobilenet_v2", "resnet18": "resnet18", "squeezenet": "squeezenet1_1"}
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
# Real photos (and a few textures and micrographs) in skimage.data.
# Colour photos in both sets, so that calibration sees what the tests show.
TEST_PHOTOS = ("chelsea.png", "astronaut.png", "rocket.jpg", "camera.png", "coins.png",
               "grass.png")
TRAIN_PHOTOS = ("coffee.png", "motorcycle_left.png", "motorcycle_right.png",
                "hubble_deep_field.jpg", "retina.jpg", "ihc.png", "moon.png", "page.png",
                "brick.png", "gravel.png", "cell.png", "microaneurysms.png", "clock_motion.png",
                "text.png")


def photo(name):
    """A photo as float32 [3, H, W] in 0..1."""
    path = os.path.join(os.path.dirname(skimage.data.__file__), name)
    a = np.asarray(skimage.io.imread(path))
    if a.ndim == 2:
        a = np.stack([a] * 3, axis=-1)
    a = a[..., :3].astype(np.float32)
    a /= 255.0 if a.max() > 1.0 else 1.0
    return torch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))


def resize(x, h, w):
    return F.interpolate(x[None], size=(h, w), mode="bilinear", align_corners=False,
                         antialias=True)[0]


def crop(x, rng, centre):
    """Short side to 256, a 224x224 crop (seeded, or the centre), maybe mirrored."""
    _, h, w = x.shape
    s = 256.0 / min(h, w)
    x = resize(x, max(256, round(h * s)), max(256, round(w * s)))
    _, h, w = x.shape
    if centre:
        top, left, flip = (h - 224) // 2, (w - 224) // 2, False
    else:
        top, left = int(rng.integers(0, h - 224 + 1)), int(rng.integers(0, w - 224 + 1))
        flip = bool(rng.integers(0, 2))
    x = x[:, top:top + 224, left:left + 224]
    return torch.flip(x, dims=[2]) if flip else x


def normalise(x):
    m = torch.tensor(MEAN).view(3, 1, 1)
    s = torch.tensor(STD).view(3, 1, 1)
    return (x - m) / s


def image_sets():
    rng = np.random.default_rng(SEED)
    train = [photo(p) for p in TRAIN_PHOTOS]
    test = torch.stack([normalise(crop(photo(p), rng, True)) for p in TEST_PHOTOS])
    bn = torch.stack([normalise(crop(train[i % len(train)], rng, False))
                      for i in range(BN_IMAGES)])
    calib = torch.stack([normalise(crop(train[i % len(train)], rng, False))
                         for i in range(CALIB_IMAGES)])
    return bn, calib, test


def at_size(x, s):
    return x if s == 224 else F.interpolate(x, size=(s, s), mode="bilinear",
                                            align_corners=False, antialias=True)


def build(name, bn_images):
    torch.manual_seed(SEED)
    net = getattr(torchvision.models, name)(weights=None)
    g = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                m.reset_running_stats()
                m.momentum = None	# a cumulative average: every batch counts alike
        net.train()
        for b in range(0, len(bn_images), 16):
            net(bn_images[b:b + 16])
    return net.eval()


def export(net, path, s):
    x = torch.zeros(1, 3, s, s)
    torch.onnx.export(net, x, path, opset_version=13, input_names=["image"],
                      output_names=["logits"], do_constant_folding=True)


def main():
    out = sys.argv[1]
    torch.set_num_threads(2)
    os.makedirs(out, exist_ok=True)
    bn, calib, test = image_sets()
    info = ["torch %s torchvision %s skimage %s seed %d" %
            (torch.__version__, torchvision.__version__, skimage.__version__, SEED),
            "test photos: " + " ".join(TEST_PHOTOS),
            "train photos: " + " ".join(TRAIN_PHOTOS),
            "bn images %d, calibration images %d" % (BN_IMAGES, CALIB_IMAGES)]
    for s in SIZES:
        os.makedirs(os.path.join(out, "calib-%d" % s), exist_ok=True)
        lines = []
        for i, x in enumerate(at_size(calib, s)):
            rel = "calib-%d/%03d.npy" % (s, i)
            np.save(os.path.join(out, rel), x[None].numpy().astype(np.float32))
            lines.append(rel)
        with open(os.path.join(out, "dataset-%d.txt" % s), "w") as f:
            f.write("\n".join(lines) + "\n")
        np.save(os.path.join(out, "test-%d.npy" % s), at_size(test, s).numpy())
    for name, fn in NETS.items():
        net = build(fn, bn)
        with torch.no_grad():
            for s in SIZES:
                t = at_size(test, s)
                ref = net(t).numpy()
                np.save(os.path.join(out, "%s-%d.ref.npy" % (name, s)), ref)
                export(net, os.path.join(out, "%s-%d.onnx" % (name, s)), s)
                info.append("%s %dx%d: logits std %.3f, top-1 classes %s" %
                            (name, s, s, ref.std(), " ".join(str(int(k)) for k in ref.argmax(1))))
    with open(os.path.join(out, "info.txt"), "w") as f:
        f.write("\n".join(info) + "\n")
    print("\n".join(info))


if __name__ == "__main__":
    main()
