/* SPDX-License-Identifier: MIT */
/*
 * The network zoo: full-size ImageNet networks and the blocks issue 26
 * names, as format 3.0 graphs with seeded random int8 weights (zoo_build.h
 * says how their quantization keeps activations in range). The layer
 * shapes are the published architectures'; batch normalisation is folded
 * away (the weights are random anyway). Residual adds are the datapath's:
 * the last convolution of a branch writes its int32 accumulator and the add
 * sums it with the int8 shortcut. Documentation/model-format.rst, "The
 * network zoo", lists them with their sizes.
 *
 *   zoo_build(name, batch, h, w, seed, &b) then b.desc; zb_free(&b).
 *
 * Header-only for the reason zoo_build.h gives.
 */
#ifndef RKACCEL_TOOLS_ZOO_H
#define RKACCEL_TOOLS_ZOO_H

#include "zoo_build.h"

struct zoo_entry {
	const char *name;
	uint32_t h, w, c;		/* default input (VGG's head: its 7x7x512 map) */
	uint32_t (*build)(struct zb *b, uint32_t in);
	const char *what;
	bool relu_input;		/* the input stands for a ReLU's output (zero point -128) */
};

/* --- MobileNetV1 (Howard et al. 2017), width 1.0 ------------------------------ */

static inline uint32_t zoo_mobilenet_v1(struct zb *b, uint32_t x)
{
	static const uint32_t blocks[13][2] = {	/* pointwise outputs, depthwise stride */
		{ 64, 1 }, { 128, 2 }, { 128, 1 }, { 256, 2 }, { 256, 1 }, { 512, 2 },
		{ 512, 1 }, { 512, 1 }, { 512, 1 }, { 512, 1 }, { 512, 1 }, { 1024, 2 },
		{ 1024, 1 },
	};
	char name[64];

	x = zb_conv(b, "conv1", x, 32, 3, 2, ZB_RELU);
	for (uint32_t i = 0; i < 13; i++) {
		snprintf(name, sizeof(name), "block%u/dw", i + 1);
		x = zb_dw(b, name, x, 3, blocks[i][1], ZB_RELU);
		snprintf(name, sizeof(name), "block%u/pw", i + 1);
		x = zb_conv(b, name, x, blocks[i][0], 1, 1, ZB_RELU);
	}
	x = zb_global_avgpool(b, "pool", x);
	return zb_fc(b, "logits", x, 1000, ZB_LINEAR);
}

/* --- MobileNetV2 (Sandler et al. 2018), width 1.0 ------------------------------- */

static inline uint32_t zoo_mobilenet_v2(struct zb *b, uint32_t x)
{
	static const uint32_t cfg[7][4] = {	/* expansion t, channels c, repeats n, stride s */
		{ 1, 16, 1, 1 }, { 6, 24, 2, 2 }, { 6, 32, 3, 2 }, { 6, 64, 4, 2 },
		{ 6, 96, 3, 1 }, { 6, 160, 3, 2 }, { 6, 320, 1, 1 },
	};
	uint32_t blk = 0;
	char name[64];

	x = zb_conv(b, "conv1", x, 32, 3, 2, ZB_RELU);
	for (uint32_t g = 0; g < 7; g++) {
		for (uint32_t r = 0; r < cfg[g][2]; r++, blk++) {
			uint32_t s = r ? 1 : cfg[g][3], cin = zb_c(b, x), h = x;
			bool residual = s == 1 && cin == cfg[g][1];

			if (cfg[g][0] != 1) {
				snprintf(name, sizeof(name), "block%u/expand", blk);
				h = zb_conv(b, name, h, cin * cfg[g][0], 1, 1, ZB_RELU);
			}
			snprintf(name, sizeof(name), "block%u/dw", blk);
			h = zb_dw(b, name, h, 3, s, ZB_RELU);
			snprintf(name, sizeof(name), "block%u/project%s", blk, residual ? ".acc" : "");
			h = zb_conv(b, name, h, cfg[g][1], 1, 1, residual ? ZB_ACC : ZB_LINEAR);
			if (residual) {
				snprintf(name, sizeof(name), "block%u/add", blk);
				h = zb_add(b, name, h, x, false);
			}
			x = h;
		}
	}
	x = zb_conv(b, "conv_last", x, 1280, 1, 1, ZB_RELU);
	x = zb_global_avgpool(b, "pool", x);
	return zb_fc(b, "logits", x, 1000, ZB_LINEAR);
}

/* --- ResNet (He et al. 2016): basic blocks (18) and bottlenecks (50, v1.5) ---- */

static inline uint32_t zoo_resnet_stem(struct zb *b, uint32_t x)
{
	x = zb_conv(b, "conv1", x, 64, 7, 2, ZB_RELU);
	return zb_maxpool(b, "maxpool", x, 3, 2, 1);
}

static inline uint32_t zoo_resnet(struct zb *b, uint32_t x, const uint32_t *depth,
				  bool bottleneck)
{
	uint32_t expansion = bottleneck ? 4 : 1;
	char name[64];

	x = zoo_resnet_stem(b, x);
	for (uint32_t l = 0; l < 4; l++) {
		uint32_t width = 64u << l;

		for (uint32_t i = 0; i < depth[l]; i++) {
			uint32_t s = i == 0 && l > 0 ? 2 : 1, h, sc = x;

			if (s != 1 || zb_c(b, x) != width * expansion) {
				snprintf(name, sizeof(name), "layer%u.%u/downsample", l + 1, i);
				sc = zb_conv(b, name, x, width * expansion, 1, s, ZB_LINEAR);
			}
			if (bottleneck) {
				snprintf(name, sizeof(name), "layer%u.%u/conv1", l + 1, i);
				h = zb_conv(b, name, x, width, 1, 1, ZB_RELU);
				snprintf(name, sizeof(name), "layer%u.%u/conv2", l + 1, i);
				h = zb_conv(b, name, h, width, 3, s, ZB_RELU);
				snprintf(name, sizeof(name), "layer%u.%u/conv3.acc", l + 1, i);
				h = zb_conv(b, name, h, width * 4, 1, 1, ZB_ACC);
			} else {
				snprintf(name, sizeof(name), "layer%u.%u/conv1", l + 1, i);
				h = zb_conv(b, name, x, width, 3, s, ZB_RELU);
				snprintf(name, sizeof(name), "layer%u.%u/conv2.acc", l + 1, i);
				h = zb_conv(b, name, h, width, 3, 1, ZB_ACC);
			}
			snprintf(name, sizeof(name), "layer%u.%u/add", l + 1, i);
			x = zb_add(b, name, h, sc, true);
		}
	}
	x = zb_global_avgpool(b, "pool", x);
	return zb_fc(b, "logits", x, 1000, ZB_LINEAR);
}

static inline uint32_t zoo_resnet18(struct zb *b, uint32_t x)
{
	static const uint32_t depth[4] = { 2, 2, 2, 2 };

	return zoo_resnet(b, x, depth, false);
}

static inline uint32_t zoo_resnet50(struct zb *b, uint32_t x)
{
	static const uint32_t depth[4] = { 3, 4, 6, 3 };

	return zoo_resnet(b, x, depth, true);
}

/* --- SqueezeNet 1.1 (Iandola et al. 2016; torchvision's 1.1) ------------------ */

static inline uint32_t zoo_fire(struct zb *b, uint32_t idx, uint32_t x, uint32_t squeeze,
				uint32_t expand)
{
	uint32_t e[2];
	char name[64];

	snprintf(name, sizeof(name), "fire%u/squeeze", idx);
	x = zb_conv(b, name, x, squeeze, 1, 1, ZB_RELU);
	snprintf(name, sizeof(name), "fire%u/expand1x1", idx);
	e[0] = zb_conv(b, name, x, expand, 1, 1, ZB_RELU);
	snprintf(name, sizeof(name), "fire%u/expand3x3", idx);
	e[1] = zb_conv(b, name, x, expand, 3, 1, ZB_RELU);
	snprintf(name, sizeof(name), "fire%u/concat", idx);
	return zb_concat(b, name, e, 2);
}

static inline uint32_t zoo_squeezenet(struct zb *b, uint32_t x)
{
	x = zb_conv_ex(b, "conv1", x, 64, 3, 2, 0, false, ZB_RELU);
	x = zb_maxpool(b, "pool1", x, 3, 2, 0);
	x = zoo_fire(b, 2, x, 16, 64);
	x = zoo_fire(b, 3, x, 16, 64);
	x = zb_maxpool(b, "pool3", x, 3, 2, 0);
	x = zoo_fire(b, 4, x, 32, 128);
	x = zoo_fire(b, 5, x, 32, 128);
	x = zb_maxpool(b, "pool5", x, 3, 2, 0);
	x = zoo_fire(b, 6, x, 48, 192);
	x = zoo_fire(b, 7, x, 48, 192);
	x = zoo_fire(b, 8, x, 64, 256);
	x = zoo_fire(b, 9, x, 64, 256);
	x = zb_conv(b, "conv10", x, 1000, 1, 1, ZB_RELU);
	return zb_global_avgpool(b, "pool10", x);
}

/* --- one Inception block (GoogLeNet's 3a, Szegedy et al. 2015) ---------------- */

static inline uint32_t zoo_inception(struct zb *b, uint32_t x)
{
	uint32_t br[4], h;

	br[0] = zb_conv(b, "branch1x1", x, 64, 1, 1, ZB_RELU);
	h = zb_conv(b, "branch3x3/reduce", x, 96, 1, 1, ZB_RELU);
	br[1] = zb_conv(b, "branch3x3", h, 128, 3, 1, ZB_RELU);
	h = zb_conv(b, "branch5x5/reduce", x, 16, 1, 1, ZB_RELU);
	br[2] = zb_conv(b, "branch5x5", h, 32, 5, 1, ZB_RELU);
	h = zb_maxpool(b, "branch_pool/pool", x, 3, 1, 1);
	br[3] = zb_conv(b, "branch_pool", h, 32, 1, 1, ZB_RELU);
	return zb_concat(b, "concat", br, 4);
}

/* --- one DenseNet block (DenseNet-121's first: 6 layers, growth 32) ------------ */

static inline uint32_t zoo_densenet(struct zb *b, uint32_t x)
{
	char name[64];

	for (uint32_t i = 0; i < 6; i++) {
		uint32_t cat[2] = { x, 0 }, h;

		snprintf(name, sizeof(name), "layer%u/conv1", i + 1);
		h = zb_conv(b, name, x, 4 * 32, 1, 1, ZB_RELU);
		snprintf(name, sizeof(name), "layer%u/conv2", i + 1);
		cat[1] = zb_conv(b, name, h, 32, 3, 1, ZB_RELU);
		snprintf(name, sizeof(name), "layer%u/concat", i + 1);
		x = zb_concat(b, name, cat, 2);
	}
	return x;
}

/* --- VGG-16's first classifier layer (Simonyan and Zisserman 2014) ------------ */

static inline uint32_t zoo_vgg16_head(struct zb *b, uint32_t x)
{
	return zb_fc(b, "fc6", x, 4096, ZB_RELU);
}

/*
 * --- LeNet-5 (LeCun et al. 1998): C5 is a 5x5 convolution ----------------------
 * A chain the chain compiler takes today: zoo_test's run path before the
 * general graph compiler.
 */

static inline uint32_t zoo_lenet5(struct zb *b, uint32_t x)
{
	x = zb_conv_ex(b, "c1", x, 6, 5, 1, 0, false, ZB_RELU);
	x = zb_maxpool(b, "s2", x, 2, 2, 0);
	x = zb_conv_ex(b, "c3", x, 16, 5, 1, 0, false, ZB_RELU);
	x = zb_maxpool(b, "s4", x, 2, 2, 0);
	x = zb_conv_ex(b, "c5", x, 120, 5, 1, 0, false, ZB_RELU);
	x = zb_fc(b, "f6", x, 84, ZB_RELU);
	return zb_fc(b, "output", x, 10, ZB_LINEAR);
}

static const struct zoo_entry zoo_nets[] = {
	{ "mobilenetv1", 224, 224, 3, zoo_mobilenet_v1, "MobileNetV1 1.0, 1000 classes", false },
	{ "mobilenetv2", 224, 224, 3, zoo_mobilenet_v2, "MobileNetV2 1.0, 1000 classes", false },
	{ "resnet18", 224, 224, 3, zoo_resnet18, "ResNet-18, 1000 classes", false },
	{ "resnet50", 224, 224, 3, zoo_resnet50, "ResNet-50 v1.5, 1000 classes", false },
	{ "squeezenet", 224, 224, 3, zoo_squeezenet, "SqueezeNet 1.1, 1000 classes", false },
	{ "inception", 28, 28, 192, zoo_inception, "GoogLeNet's inception 3a: four branches, concat", false },
	{ "densenet", 56, 56, 64, zoo_densenet, "DenseNet-121's first block: 6 layers, growth 32",
	  true },
	{ "vgg16head", 7, 7, 512, zoo_vgg16_head, "VGG-16's fc6: FC 25088 -> 4096, ReLU", false },
	{ "lenet5", 32, 32, 1, zoo_lenet5, "LeNet-5: a chain of 7 layers, 10 classes", false },
};

#define ZOO_COUNT	(sizeof(zoo_nets) / sizeof(zoo_nets[0]))

static inline const struct zoo_entry *zoo_find(const char *name)
{
	for (size_t i = 0; i < ZOO_COUNT; i++)
		if (!strcmp(zoo_nets[i].name, name))
			return &zoo_nets[i];
	return NULL;
}

/*
 * Build network @name at @batch with an @h x @w input (0, 0: its default)
 * from @seed into @b (free it with zb_free() whatever the result). Returns
 * 0, -ENOENT for an unknown name, or the builder's error with @b->msg.
 */
static inline int zoo_build(const char *name, uint32_t batch, uint32_t h, uint32_t w,
			    uint32_t seed, struct zb *b)
{
	const struct zoo_entry *z = zoo_find(name);
	uint32_t x;

	zb_init(b, batch, seed);
	if (!z) {
		snprintf(b->msg, sizeof(b->msg), "no network '%s' in the zoo", name);
		return b->err = -ENOENT;
	}
	x = zb_input(b, h ? h : z->h, w ? w : z->w, z->c);
	if (z->relu_input && !b->err) {
		/* a block fed by a ReLU: its concats keep the input's scale and zero point */
		b->t[x].scale = ZB_ACT_SCALE;
		b->t[x].zero_point = -128;
		b->msq[x] = 255.0 * 255.0 / 3;
	}
	return zb_finish(b, z->build(b, x));
}

/* The seeded input of one image: @n bytes, uniform int8. */
static inline void zoo_input(uint32_t seed, uint32_t image, int8_t *buf, size_t n)
{
	struct zb r = { .rng = 0x1a9000000000ull ^ ((uint64_t)seed << 20) ^ image };

	for (size_t i = 0; i < n; i++)
		buf[i] = (int8_t)(zb_rand(&r) >> 56);
}

#endif /* RKACCEL_TOOLS_ZOO_H */
