// SPDX-License-Identifier: GPL-2.0-only
/*
 * Graphs that are not chains, built with the graph API: a ResNet-style
 * downsample block (the shortcut convolution reads the block input, not
 * the layer before), a SqueezeNet fire module pair (expand 1x1 and 3x3 both
 * read the squeeze, concatenated in place, one input requantized by its
 * producer), a DenseNet-style block (a concat inside a concat), and a
 * 30-layer MobileNet-v1-like chain (beyond the 16 layers of a file). On the
 * host: each lowers, compiles deterministically (the same regcmd and weight
 * bytes twice), plans activations in less memory than one region per
 * tensor, and a concat the layout cannot write in place is refused by node
 * and reason. On the device: each runs bit-exact against net_ref.h.
 */

#include "kselftest_harness.h"
#include "conv_run.h"
#include "graph_ref.h"
#include "net_ref.h"

#define MAX_T	32
#define MAX_N	32

/* A graph being built: tensors, nodes, their edges and arrays. */
struct gb {
	struct rkaccel_graph_tensor t[MAX_T];
	struct rkaccel_graph_node n[MAX_N];
	uint32_t e[4 * MAX_N];
	char names[MAX_T][32];
	void *arrays[2 * MAX_N];
	uint32_t nt, nn, ne, na, out;
	uint64_t rng;
	struct rkaccel_graph_input in;
	struct rkaccel_graph_desc d;
};

static uint32_t gb_rand(struct gb *b)
{
	b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(b->rng >> 33);
}

/* A scale with an 8-bit mantissa: products of two stay exact. */
static float round8(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	u &= 0xffff0000u;
	memcpy(&f, &u, sizeof(u));
	return f;
}

static uint32_t gb_tensor(struct gb *b, const char *name, uint32_t type, uint32_t h, uint32_t w,
			  uint32_t c, float scale, int32_t zp)
{
	struct rkaccel_graph_tensor *t = &b->t[b->nt];

	snprintf(b->names[b->nt], sizeof(b->names[0]), "%s", name);
	*t = (struct rkaccel_graph_tensor){ b->names[b->nt], type, 4, { 1, h, w, c }, scale, zp };
	return b->nt++;
}

static const struct rkaccel_graph_tensor *gb_t(const struct gb *b, uint32_t t)
{
	return &b->t[t];
}

static struct rkaccel_graph_node *gb_node(struct gb *b, uint32_t op, uint32_t out,
					  uint32_t nin, const uint32_t *in)
{
	struct rkaccel_graph_node *n = &b->n[b->nn++];

	*n = (struct rkaccel_graph_node){ .op = op, .num_inputs = nin, .inputs = &b->e[b->ne],
					  .output = out };
	memcpy(&b->e[b->ne], in, nin * sizeof(*in));
	b->ne += nin;
	return n;
}

static void gb_window(struct rkaccel_graph_node *n, uint32_t k, uint32_t s, uint32_t pad)
{
	n->kernel_h = n->kernel_w = k;
	n->stride_h = n->stride_w = s;
	n->pad_top = n->pad_left = n->pad_bottom = n->pad_right = pad;
	n->dilation_h = n->dilation_w = 1;
}

/*
 * A convolution of @in (k x k, stride s, pad p, c outputs; dw when @dw)
 * into a new int8 tensor @name, or int32 (the accumulator of an add) when
 * @acc. Weights, bias and the output scale from the seed, so that outputs
 * spread over the int8 range.
 */
static uint32_t gb_conv(struct gb *b, const char *name, uint32_t in, uint32_t k, uint32_t s,
			uint32_t p, uint32_t c, bool dw, bool relu, bool acc)
{
	const struct rkaccel_graph_tensor *ti = gb_t(b, in);
	uint32_t cin = ti->dims[3], h = (ti->dims[1] + 2 * p - k) / s + 1;
	uint32_t w = (ti->dims[2] + 2 * p - k) / s + 1, fan = dw ? k * k : k * k * cin;
	size_t nw = (size_t)(dw ? 1 : cin) * k * k * (dw ? cin : c);
	int8_t *wt = malloc(nw);
	int32_t *bias = malloc((dw ? cin : c) * sizeof(*bias));
	float ws = round8(1.0f / 128.0f * (float)(96 + gb_rand(b) % 64) / 128.0f);
	float os = round8(ti->scale * ws * 40.0f * sqrtf((float)fan));
	struct rkaccel_graph_node *n;
	uint32_t out;

	for (size_t i = 0; i < nw; i++)
		wt[i] = (int8_t)(gb_rand(b) % 256 - 128);
	for (uint32_t i = 0; i < (dw ? cin : c); i++)
		bias[i] = (int32_t)(gb_rand(b) % 8193) - 4096;
	b->arrays[b->na++] = wt;
	b->arrays[b->na++] = bias;
	if (acc)
		out = gb_tensor(b, name, RKACCEL_DTYPE_INT32, h, w, c, ti->scale * ws, 0);
	else
		out = gb_tensor(b, name, RKACCEL_DTYPE_INT8, h, w, dw ? cin : c, os,
				(int32_t)(gb_rand(b) % 33) - 16);
	n = gb_node(b, dw ? RKACCEL_GOP_DWCONV : RKACCEL_GOP_CONV, out, 1, &in);
	gb_window(n, k, s, p);
	n->groups = dw ? cin : 1;
	n->act = relu ? RKACCEL_ACT_RELU : RKACCEL_ACT_NONE;
	n->weight_scale = ws;
	n->weights = wt;
	n->bias = bias;
	return out;
}

/* ADD of the accumulator @acc and the earlier int8 tensor @other, ReLU. */
static uint32_t gb_add(struct gb *b, const char *name, uint32_t acc, uint32_t other)
{
	const struct rkaccel_graph_tensor *o = gb_t(b, other);
	uint32_t in[2] = { acc, other };
	uint32_t out = gb_tensor(b, name, RKACCEL_DTYPE_INT8, o->dims[1], o->dims[2], o->dims[3],
				 round8(o->scale * 1.5f), (int32_t)(gb_rand(b) % 33) - 16);

	gb_node(b, RKACCEL_GOP_ADD, out, 2, in)->act = RKACCEL_ACT_RELU;
	return out;
}

/*
 * Concat along channels with the quantization of @like. The format wants
 * every input quantized as the concat: the producers built here get it
 * (their output conversion writes the concat's scale directly).
 */
static uint32_t gb_concat(struct gb *b, const char *name, uint32_t nin, const uint32_t *in,
			  uint32_t like)
{
	const struct rkaccel_graph_tensor *t = gb_t(b, like);
	uint32_t c = 0, out;

	for (uint32_t k = 0; k < nin; k++) {
		c += gb_t(b, in[k])->dims[3];
		b->t[in[k]].scale = t->scale;
		b->t[in[k]].zero_point = t->zero_point;
	}
	out = gb_tensor(b, name, RKACCEL_DTYPE_INT8, t->dims[1], t->dims[2], c, t->scale,
			t->zero_point);
	gb_node(b, RKACCEL_GOP_CONCAT, out, nin, in)->axis = 3;
	return out;
}

/* Global average pooling, then a fully connected layer of @classes. */
static uint32_t gb_head(struct gb *b, uint32_t in, uint32_t classes)
{
	const struct rkaccel_graph_tensor *t = gb_t(b, in);
	uint32_t pool = gb_tensor(b, "pool", RKACCEL_DTYPE_INT8, 1, 1, t->dims[3], t->scale,
				  t->zero_point);

	gb_node(b, RKACCEL_GOP_GLOBAL_AVGPOOL, pool, 1, &in);
	return gb_conv(b, "logits", pool, 1, 1, 0, classes, false, false, false);
}

static void gb_init(struct gb *b, uint64_t seed, uint32_t h, uint32_t w, uint32_t c)
{
	memset(b, 0, sizeof(*b));
	b->rng = seed;
	b->in.tensor = gb_tensor(b, "data", RKACCEL_DTYPE_INT8, h, w, c, 1.0f / 64.0f, 3);
}

static void gb_finish(struct gb *b, uint32_t out)
{
	b->out = out;
	b->d = (struct rkaccel_graph_desc){ .batch = 1, .num_tensors = b->nt, .tensors = b->t,
		.num_nodes = b->nn, .nodes = b->n, .num_inputs = 1, .inputs = &b->in,
		.num_outputs = 1, .outputs = &b->out };
}

static void gb_free(struct gb *b)
{
	for (uint32_t i = 0; i < b->na; i++)
		free(b->arrays[i]);
}

/*
 * ResNet-18's downsample block at 16x16: the shortcut reads the block input.
 * With @onnx_order the nodes come as ONNX exports them (conv1, conv2, the
 * shortcut, the add): the accumulator of conv2 waits for the add.
 */
static void build_resnet_down(struct gb *b, bool onnx_order)
{
	uint32_t stem, sc = 0, a, acc, sum;

	gb_init(b, 21, 16, 16, 16);
	stem = gb_conv(b, "stem", b->in.tensor, 3, 1, 1, 32, false, true, false);
	if (!onnx_order)
		sc = gb_conv(b, "down/shortcut", stem, 1, 2, 0, 64, false, false, false);
	a = gb_conv(b, "down/conv1", stem, 3, 2, 1, 64, false, true, false);
	acc = gb_conv(b, "down/conv2", a, 3, 1, 1, 64, false, false, true);
	if (onnx_order)
		sc = gb_conv(b, "down/shortcut", stem, 1, 2, 0, 64, false, false, false);
	sum = gb_add(b, "down/sum", acc, sc);
	gb_finish(b, gb_head(b, sum, 10));
}

/*
 * Two SqueezeNet 1.1 fire modules (squeeze 16, expand 64 + 64) after a
 * stem; with @head the classifier, without it the last concat is the output.
 */
static void build_fire(struct gb *b, bool head)
{
	uint32_t x, sq, e1, e3, in[2];

	gb_init(b, 22, 16, 16, 3);
	x = gb_conv(b, "conv1", b->in.tensor, 3, 2, 1, 64, false, true, false);
	for (int f = 2; f <= 3; f++) {
		char name[32];

		snprintf(name, sizeof(name), "fire%d/squeeze", f);
		sq = gb_conv(b, name, x, 1, 1, 0, 16, false, true, false);
		snprintf(name, sizeof(name), "fire%d/expand1x1", f);
		e1 = gb_conv(b, name, sq, 1, 1, 0, 64, false, true, false);
		snprintf(name, sizeof(name), "fire%d/expand3x3", f);
		e3 = gb_conv(b, name, sq, 3, 1, 1, 64, false, true, false);
		in[0] = e1;
		in[1] = e3;
		snprintf(name, sizeof(name), "fire%d/concat", f);
		/* the concat takes expand3x3's scale: expand1x1 writes in it */
		x = gb_concat(b, name, 2, in, e3);
	}
	gb_finish(b, head ? gb_head(b, x, 10) : x);
}

/* A DenseNet block (growth 32): c1 = [x0, x1], c2 = [c1, x2], c2 nested. */
static void build_dense(struct gb *b, bool head)
{
	uint32_t x0, x1, x2, c1, c2, in[2];

	gb_init(b, 23, 12, 12, 8);
	x0 = gb_conv(b, "stem", b->in.tensor, 3, 1, 1, 32, false, true, false);
	x1 = gb_conv(b, "dense/x1", x0, 3, 1, 1, 32, false, true, false);
	in[0] = x0;
	in[1] = x1;
	c1 = gb_concat(b, "dense/c1", 2, in, x0);
	x2 = gb_conv(b, "dense/x2", c1, 3, 1, 1, 32, false, true, false);
	in[0] = c1;
	in[1] = x2;
	c2 = gb_concat(b, "dense/c2", 2, in, c1);
	gb_finish(b, head ? gb_head(b, c2, 10) : c2);
}

/*
 * Concat inputs no layer writes in place, so copy layers: c1 = [data, x]
 * holds the graph input, c2 = [x, y] holds x, already in c1.
 */
static void build_copies(struct gb *b)
{
	uint32_t x, y, c1, c2, in[2];

	gb_init(b, 29, 8, 8, 32);
	x = gb_conv(b, "stem", b->in.tensor, 3, 1, 1, 32, false, true, false);
	in[0] = b->in.tensor;
	in[1] = x;
	c1 = gb_concat(b, "copy/c1", 2, in, b->in.tensor);
	y = gb_conv(b, "copy/y", c1, 3, 1, 1, 32, false, true, false);
	in[0] = x;
	in[1] = y;
	c2 = gb_concat(b, "copy/c2", 2, in, x);
	gb_finish(b, gb_head(b, c2, 10));
}

/* A grouped convolution of @g groups: gb_conv's node made grouped. */
static uint32_t gb_groupconv(struct gb *b, const char *name, uint32_t in, uint32_t k,
			     uint32_t p, uint32_t c, uint32_t g, bool relu)
{
	uint32_t out = gb_conv(b, name, in, k, 1, p, c, false, relu, false);

	b->n[b->nn - 1].op = RKACCEL_GOP_GROUPCONV;
	b->n[b->nn - 1].groups = g;	/* the weights' first c x k x k x in/g bytes */
	return out;
}

/* A k x k / s max pool without padding in ceil mode. */
static uint32_t gb_maxpool_ceil(struct gb *b, const char *name, uint32_t in, uint32_t k,
				uint32_t s)
{
	const struct rkaccel_graph_tensor *t = gb_t(b, in);
	uint32_t h = (t->dims[1] - k + s - 1) / s + 1, w = (t->dims[2] - k + s - 1) / s + 1;
	uint32_t out = gb_tensor(b, name, RKACCEL_DTYPE_INT8, h, w, t->dims[3], t->scale,
				 t->zero_point);
	struct rkaccel_graph_node *n = gb_node(b, RKACCEL_GOP_MAXPOOL, out, 1, &in);

	gb_window(n, k, s, 0);
	n->flags = RKACCEL_NODE_CEIL_MODE;
	return out;
}

/*
 * Grouped convolutions (3x3 in 4 groups, 1x1 in 2) and a max pool in ceil
 * mode over a linear tensor (values below its zero point: the windows cut
 * by the end must skip, not pad), joined by a concat.
 */
static void build_grouped(struct gb *b)
{
	uint32_t x, g1, mp, g2, in[2];

	gb_init(b, 31, 10, 10, 16);
	x = gb_conv(b, "stem", b->in.tensor, 3, 1, 1, 32, false, true, false);
	g1 = gb_groupconv(b, "g1", x, 3, 1, 32, 4, false);
	mp = gb_maxpool_ceil(b, "pool_ceil", g1, 3, 2);	/* 10x10 -> 5x5, floor 4x4 */
	g2 = gb_groupconv(b, "g2", mp, 1, 0, 32, 2, true);
	in[0] = mp;
	in[1] = g2;
	gb_finish(b, gb_head(b, gb_concat(b, "cat", 2, in, mp), 10));
}

/* 30 layers: a MobileNet-v1-like chain at 32x32 (stem, 13 dw/pw pairs, pool, fc, fc). */
static const char mobilenet30[] =
	"input 32x32x3\n"
	"conv 3x3 s2 c16\n"
	"dw 3x3 s1\npw c32\n"
	"dw 3x3 s2\npw c32\n"
	"dw 3x3 s1\npw c48\n"
	"dw 3x3 s1\npw c48\n"
	"dw 3x3 s2\npw c64\n"
	"dw 3x3 s1 pc\npw c64\n"
	"dw 3x3 s1\npw c64\n"
	"dw 3x3 s1\npw c64\n"
	"dw 3x3 s1\npw c64 pc\n"
	"dw 3x3 s1\npw c64\n"
	"dw 3x3 s2\npw c96\n"
	"dw 3x3 s1\npw c96\n"
	"dw 3x3 s1\npw c128\n"
	"avgpool global\n"
	"fc 32 relu\n"
	"fc 10\n";

/* RK3588's core as the compiler sees it: 12 banks of 32 KiB, 4095 tasks a job. */
static const struct rkaccel_info host_info = {
	.soc_name = "RK3588", .num_cores = 3, .core_mask = 7, .max_tasks = 4095,
	.cbuf_size = 12 * 32768,
};

/*
 * The network @which as a lowered model: 0 resnet, 1 fire, 2 dense, 3 the
 * chain; 4 fire and 5 dense without the classifier (the concat is the output);
 * 6 resnet in ONNX's node order.
 */
/* A variant's graph: built into a struct gb, or (the text chain) a graph object. */
struct variant_graph {
	struct gb *b;
	struct rkaccel_graph *g;
	const struct rkaccel_graph_desc *d;
};

static void variant_graph_free(struct variant_graph *vg)
{
	if (vg->b)
		gb_free(vg->b);
	free(vg->b);
	rkaccel_graph_free(vg->g);
}

static int variant_graph(int which, struct variant_graph *vg, char *msg, size_t len)
{
	struct gb *b;

	memset(vg, 0, sizeof(*vg));
	if (which == 3) {
		struct rkaccel_model *chain;
		int ret = rkaccel_model_from_text(24, mobilenet30, &chain, msg, len);

		if (ret)
			return ret;
		/* through the graph: the 3.0 path a converted network takes */
		ret = rkaccel_graph_from_model(rkaccel_model_desc(chain), &vg->g, msg, len);
		rkaccel_model_free(chain);
		vg->d = ret ? NULL : rkaccel_graph_desc(vg->g);
		return ret;
	}
	b = vg->b = malloc(sizeof(*b));
	if (!b)
		return -ENOMEM;
	if (which == 0 || which == 6)
		build_resnet_down(b, which == 6);
	else if (which == 1 || which == 4)
		build_fire(b, which == 1);
	else if (which == 7)
		build_copies(b);
	else if (which == 8)
		build_grouped(b);
	else
		build_dense(b, which == 2);
	vg->d = &b->d;
	return 0;
}

static int lowered(int which, struct rkaccel_model **m, char *msg, size_t len)
{
	struct variant_graph vg;
	int ret = variant_graph(which, &vg, msg, len);

	if (!ret)
		ret = rkaccel_graph_to_model(vg.d, m, msg, len);
	variant_graph_free(&vg);
	return ret;
}

static const char *const net_names[] = { "resnet_down", "fire", "dense", "mobilenet30",
					 "fire_out", "dense_out", "resnet_onnx_order", "copies",
					 "grouped" };

/* Bytes of one region per tensor between input and output: what lifetimes save. */
static size_t naive_internal(const struct rkaccel_model *m)
{
	const struct rkaccel_model_desc *d = rkaccel_model_desc(m);
	size_t sum = 0;

	for (uint32_t t = 1; t < d->num_layers; t++) {
		struct rkaccel_tensor_shape s;

		if (d->layers[t - 1].op == RKACCEL_OP_CONCAT || rkaccel_model_shape(m, t, &s))
			continue;
		sum += rkaccel_native_size(s.height * s.width, s.channels, 1);
	}
	return sum;
}

/* The emitted register commands at fixed addresses, for a byte comparison. */
static void *emitted(const struct rkaccel_program *p)
{
	uint64_t addr[RKACCEL_BUF_COUNT] = { 0x100000, 0x10000000, 0x20000000, 0x30000000,
					     0x40000000 };
	struct rkaccel_pc_start starts[16];
	void *cmds = malloc(rkaccel_program_size(p, RKACCEL_BUF_REGCMD));

	if (cmds && rkaccel_program_emit(p, addr, cmds, starts)) {
		free(cmds);
		return NULL;
	}
	return cmds;
}

FIXTURE(dag) {
	struct rkaccel_model *m;
	struct rkaccel_program *p[2];
	char msg[256];
};

FIXTURE_VARIANT(dag) {
	int which;
	uint32_t min_layers;
	bool branches, concat;
	bool reuses;	/* a region reused: less than one per tensor */
};

FIXTURE_VARIANT_ADD(dag, resnet_down) {
	.which = 0, .min_layers = 6, .branches = true, .reuses = true };
FIXTURE_VARIANT_ADD(dag, fire) {
	.which = 1, .min_layers = 11, .branches = true, .concat = true, .reuses = true };
/* every tensor lives in the block's concat until the pool: nothing to reuse */
FIXTURE_VARIANT_ADD(dag, dense) { .which = 2, .min_layers = 7, .concat = true };
FIXTURE_VARIANT_ADD(dag, mobilenet30) { .which = 3, .min_layers = 30, .reuses = true };
/* the concats written into the output buffer, every feature compared */
FIXTURE_VARIANT_ADD(dag, fire_out) {
	.which = 4, .min_layers = 9, .branches = true, .concat = true, .reuses = true };
/* every tensor lives in the output's concat: no internal buffer at all */
FIXTURE_VARIANT_ADD(dag, dense_out) { .which = 5, .min_layers = 5, .concat = true };
FIXTURE_VARIANT_ADD(dag, resnet_onnx_order) {
	.which = 6, .min_layers = 6, .branches = true, .reuses = true };
/* stem, copy of data, c1, y, copy of x, c2, pool, logits */
FIXTURE_VARIANT_ADD(dag, copies) {
	.which = 7, .min_layers = 8, .branches = true, .concat = true };
/* stem, g1, pool_ceil, g2, cat, pool, logits */
FIXTURE_VARIANT_ADD(dag, grouped) { .which = 8, .min_layers = 7, .concat = true };

FIXTURE_SETUP(dag)
{
	self->msg[0] = '\0';
	ASSERT_EQ(0, lowered(variant->which, &self->m, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
}

FIXTURE_TEARDOWN(dag)
{
	rkaccel_program_free(self->p[0]);
	rkaccel_program_free(self->p[1]);
	rkaccel_model_free(self->m);
}

/* The links: branches read earlier tensors, concats list their inputs. */
TEST_F(dag, lowers)
{
	const struct rkaccel_model_desc *d = rkaccel_model_desc(self->m);
	bool branch = false, concat = false;
	uint32_t in[8];

	EXPECT_LE(variant->min_layers, d->num_layers);
	for (uint32_t i = 0; i < d->num_layers; i++) {
		int n = rkaccel_model_inputs(self->m, i, in, 8);

		ASSERT_LE(1, n);
		if (d->layers[i].op == RKACCEL_OP_CONCAT) {
			concat = true;
			EXPECT_LE(2, n);
		} else {
			EXPECT_EQ(1, n);
			branch |= in[0] != i;
		}
		for (int k = 0; k < n && k < 8; k++) {
			EXPECT_GE(i, in[k]);
		}
	}
	EXPECT_EQ(variant->branches, branch);
	EXPECT_EQ(variant->concat, concat);
	EXPECT_EQ(-EINVAL, rkaccel_model_inputs(self->m, d->num_layers, in, 8));
	/* a chain stays a chain: its description compiles and saves as before */
	if (!branch && !concat) {
		void *img;
		size_t len;

		EXPECT_EQ(0, rkaccel_model_validate(d, self->msg, sizeof(self->msg)));
		EXPECT_EQ(0, rkaccel_program_compile(d, &host_info, &self->p[0]));
		/* more than a file's 16 layers: no 1.x/2.x file holds it */
		EXPECT_EQ(-EINVAL, rkaccel_model_serialize(d, &img, &len));
	} else {
		EXPECT_EQ(-EINVAL, rkaccel_model_validate(d, NULL, 0));
	}
}

/* Twice the same program, byte for byte; activations planned by lifetime. */
TEST_F(dag, compiles_deterministically)
{
	size_t internal, naive;
	void *a, *b;

	ASSERT_EQ(0, rkaccel_program_compile_model(self->m, &host_info, &self->p[0]));
	rkaccel_model_free(self->m);
	self->m = NULL;
	ASSERT_EQ(0, lowered(variant->which, &self->m, self->msg, sizeof(self->msg)));
	ASSERT_EQ(0, rkaccel_program_compile_model(self->m, &host_info, &self->p[1]));
	for (int buf = 0; buf < RKACCEL_BUF_COUNT; buf++) {
		EXPECT_EQ(rkaccel_program_size(self->p[0], buf),
			  rkaccel_program_size(self->p[1], buf));
	}
	ASSERT_EQ(rkaccel_program_size(self->p[0], RKACCEL_BUF_WEIGHTS),
		  rkaccel_program_size(self->p[1], RKACCEL_BUF_WEIGHTS));
	EXPECT_EQ(0, memcmp(rkaccel_program_weights(self->p[0]),
			    rkaccel_program_weights(self->p[1]),
			    rkaccel_program_size(self->p[0], RKACCEL_BUF_WEIGHTS)));
	a = emitted(self->p[0]);
	b = emitted(self->p[1]);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(0, memcmp(a, b, rkaccel_program_size(self->p[0], RKACCEL_BUF_REGCMD)));
	free(a);
	free(b);
	/* each layer's tasks and modelled time: the tasks add up, a concat has none */
	for (uint32_t i = 0, sum = 0; i <= rkaccel_model_desc(self->m)->num_layers; i++) {
		uint32_t tasks = 0;
		uint64_t ns = 0;

		if (i == rkaccel_model_desc(self->m)->num_layers) {
			EXPECT_EQ(-EINVAL, rkaccel_program_layer(self->p[0], i, &tasks, &ns));
			EXPECT_EQ(rkaccel_program_tasks(self->p[0]), sum);
			break;
		}
		ASSERT_EQ(0, rkaccel_program_layer(self->p[0], i, &tasks, &ns));
		EXPECT_EQ(rkaccel_model_desc(self->m)->layers[i].op == RKACCEL_OP_CONCAT,
			  !tasks && !ns);
		sum += tasks;
	}
	EXPECT_EQ(-EINVAL, rkaccel_program_layer(NULL, 0, NULL, NULL));
	internal = rkaccel_program_size(self->p[0], RKACCEL_BUF_INTERNAL);
	naive = naive_internal(self->m);
	if (variant->reuses) {
		EXPECT_GT(naive, internal);
	} else {
		EXPECT_GE(naive, internal);
	}
	ksft_print_msg("%s: %u layers, %u tasks, %zu regcmd bytes, %zu weight bytes, internal peak %zu bytes (one region per tensor: %zu)\n",
		       net_names[variant->which], rkaccel_model_desc(self->m)->num_layers,
		       rkaccel_program_tasks(self->p[0]),
		       rkaccel_program_size(self->p[0], RKACCEL_BUF_REGCMD),
		       rkaccel_program_size(self->p[0], RKACCEL_BUF_WEIGHTS), internal, naive);
}

/* On the simulated NPU: one inference bit-exact against net_ref.h. */
TEST_F(dag, runs_bit_exact)
{
	struct rkaccel_device *dev;
	struct rkaccel_ctx *ctx;
	size_t in_len, out_len, i;
	int8_t *in;
	uint8_t *out, *ref;

	if (rkaccel_open(NULL, &dev))
		SKIP(return, "no rkaccel device (host)");
	ASSERT_EQ(0, rkaccel_ctx_create(dev, self->m, 0, &ctx));
	in_len = rkaccel_ctx_input_size(ctx);
	out_len = rkaccel_ctx_output_size(ctx);
	in = malloc(in_len);
	out = malloc(out_len);
	ref = malloc(out_len);
	ASSERT_TRUE(in && out && ref);
	rkt_fill_i8(in, in_len, 977ull * (variant->which + 1));
	ASSERT_EQ(0, ref_model_net(self->m, in, ref));
	for (i = 1; i < out_len && ref[i] == ref[0]; i++)
		;
	EXPECT_GT(out_len, i) TH_LOG("the reference output is constant: a weak check");
	ASSERT_EQ(0, rkaccel_ctx_run(ctx, in, in_len, out, out_len));
	for (i = 0; i < out_len; i++)
		if (out[i] != ref[i])
			break;
	EXPECT_EQ(out_len, i) TH_LOG("%s differs from byte %zu on", net_names[variant->which], i);
	ksft_print_msg("%s: %zu output bytes bit-exact\n", net_names[variant->which], i);
	free(in);
	free(out);
	free(ref);
	rkaccel_ctx_destroy(ctx);
	rkaccel_close(dev);
}

/* graph_ref_run()'s hook: a copy of every node's output, by graph tensor. */
struct ref_tensors {
	const struct rkaccel_graph_desc *d;
	uint8_t **data;
};

static void keep_ref(void *arg, uint32_t image, uint32_t node, const void *data, size_t bytes)
{
	struct ref_tensors *r = arg;
	uint32_t t = r->d->nodes[node].output;

	(void)image;
	free(r->data[t]);
	r->data[t] = malloc(bytes);
	if (r->data[t])
		memcpy(r->data[t], data, bytes);
}

/*
 * The layer dump of rkaccel-run --dump-layers: one inference of @ctx (made
 * with RKACCEL_CTX_KEEP_TENSORS), every layer's output read back and
 * compared with graph @d's reference output of the node it lowers. Returns
 * the first model tensor that differs, 0 when none does; *@compared gets
 * how many were compared.
 */
static uint32_t first_differing(struct __test_metadata *_metadata,
				const struct rkaccel_graph_desc *d, const struct rkaccel_model *m,
				struct rkaccel_ctx *ctx, uint64_t seed, uint32_t *compared)
{
	size_t in_len = gref_bytes(&d->tensors[d->inputs[0].tensor]);
	size_t out_len = gref_bytes(&d->tensors[d->outputs[0]]);
	struct ref_tensors r = { d, calloc(d->num_tensors, sizeof(*r.data)) };
	uint32_t n = rkaccel_model_desc(m)->num_layers, first = 0;
	uint8_t *out = malloc(out_len), *ref_out = malloc(out_len);
	int8_t *in = malloc(in_len);
	char msg[256];

	*compared = 0;
	if (!r.data || !out || !ref_out || !in)
		goto out;
	rkt_fill_i8(in, in_len, seed);
	EXPECT_EQ(0, rkaccel_ctx_run(ctx, in, in_len, out, out_len));
	EXPECT_EQ(0, graph_ref_run(d, (const void *const *)&in, (void *const *)&ref_out,
				   keep_ref, &r, msg, sizeof(msg))) TH_LOG("%s", msg);
	for (uint32_t t = 1; t <= n; t++) {
		int g = rkaccel_model_graph_tensor(m, t);
		size_t len;
		uint8_t *npu;

		if (g < 0) {
			EXPECT_EQ(-ENOENT, g);	/* a copy into a concat */
			continue;
		}
		len = gref_bytes(&d->tensors[g]);
		npu = malloc(len);
		ASSERT_NE(NULL, npu);
		EXPECT_EQ(0, rkaccel_ctx_read_tensor(ctx, 0, t, npu, len));
		EXPECT_NE(NULL, r.data[g]) TH_LOG("graph tensor %d: no node computed it", g);
		if (r.data[g]) {
			*compared += 1;
			if (!first && memcmp(npu, r.data[g], len))
				first = t;
		}
		free(npu);
	}
	/* no layer differs: neither does the output the run returned */
	if (!first) {
		EXPECT_EQ(0, memcmp(out, ref_out, out_len));
	}
out:
	for (uint32_t t = 0; r.data && t < d->num_tensors; t++)
		free(r.data[t]);
	free(r.data);
	free(in);
	free(out);
	free(ref_out);
	return first;
}

/* Every layer's output read back after one run equals its node's in the graph reference. */
TEST_F(dag, every_layer_read_back)
{
	struct rkaccel_device *dev;
	struct rkaccel_ctx *ctx;
	struct variant_graph vg;
	uint32_t first, compared;

	if (rkaccel_open(NULL, &dev))
		SKIP(return, "no rkaccel device (host)");
	ASSERT_EQ(0, variant_graph(variant->which, &vg, self->msg, sizeof(self->msg)));
	ASSERT_EQ(0, rkaccel_ctx_create_flags(dev, self->m, 0, RKACCEL_CTX_KEEP_TENSORS, &ctx));
	first = first_differing(_metadata, vg.d, self->m, ctx, 991ull * (variant->which + 1),
				&compared);
	EXPECT_EQ(0, first) TH_LOG("%s: layer %u differs first", net_names[variant->which],
				   first - 1);
	EXPECT_LE(3, compared);
	ksft_print_msg("%s: %u layer outputs read back, each equal to the graph reference\n",
		       net_names[variant->which], compared);
	rkaccel_ctx_destroy(ctx);
	variant_graph_free(&vg);
	rkaccel_close(dev);
}

#define SIM_CORRUPT_PATH	"/sys/module/rkaccel_sim/parameters/sim_corrupt_task"

/*
 * A silent datapath error (the simulator flips bits of one task's first
 * output byte, no interrupt says so): the layer dump names that task's
 * layer as the first that differs. ResNet's downsample block, one task a
 * layer, so that task k is the k-th layer.
 */
TEST(layer_dump_finds_a_corrupted_task)
{
	struct rkaccel_program *p = NULL;
	struct rkaccel_model *m = NULL;
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	struct rkaccel_ctx *ctx;
	struct variant_graph vg;
	uint32_t k, compared, first;
	char msg[256];

	if (rkaccel_open(NULL, &dev))
		SKIP(return, "no rkaccel device (host)");
	ASSERT_EQ(0, variant_graph(0, &vg, msg, sizeof(msg)));
	ASSERT_EQ(0, rkaccel_graph_to_model(vg.d, &m, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, rkaccel_query(dev, &info));
	ASSERT_EQ(0, rkaccel_program_compile_model(m, &info, &p));
	ASSERT_EQ(rkaccel_model_desc(m)->num_layers, rkaccel_program_tasks(p));
	ASSERT_EQ(0, rkaccel_ctx_create_flags(dev, m, 0, RKACCEL_CTX_KEEP_TENSORS, &ctx));
	for (k = 1; k <= rkaccel_program_tasks(p); k += 2) {
		ASSERT_EQ(0, rkt_param_write_u64(SIM_CORRUPT_PATH, k));
		first = first_differing(_metadata, vg.d, m, ctx, 4242, &compared);
		ASSERT_EQ(0, rkt_param_write_u64(SIM_CORRUPT_PATH, 0));
		EXPECT_EQ(k, first) TH_LOG("task %u corrupted, layer %u found first", k, first);
	}
	/* and without the error, nothing differs */
	EXPECT_EQ(0, first_differing(_metadata, vg.d, m, ctx, 4242, &compared));
	rkaccel_ctx_destroy(ctx);
	rkaccel_program_free(p);
	rkaccel_model_free(m);
	variant_graph_free(&vg);
	rkaccel_close(dev);
}

/*
 * The device time of each layer (eval_perf()'s figures): one job a layer
 * on core 0, each timed by the device. Every layer with tasks takes time, a
 * concat none, and each at least what the compiler's model of the
 * simulator charges for it (rkaccel_program_layer(); a TCG host computing
 * longer than that stretches it, never shortens it). The whole run in one
 * job is printed beside: host time makes the two differ both ways.
 */
TEST_F(dag, layer_times)
{
	uint32_t n = rkaccel_model_desc(self->m)->num_layers;
	uint64_t *ns = calloc(n + 1, sizeof(*ns)), sum = 0, whole = 0;
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	struct rkaccel_ctx *ctx;

	ASSERT_NE(NULL, ns);
	if (rkaccel_open(NULL, &dev)) {
		free(ns);
		SKIP(return, "no rkaccel device (host)");
	}
	ASSERT_EQ(0, rkaccel_query(dev, &info));
	ns[n] = 12345;
	ASSERT_EQ((int)n, rkaccel_model_layer_times(dev, self->m, 0, ns, n));
	EXPECT_EQ(12345, ns[n]);	/* @max respected */
	ASSERT_EQ(0, rkaccel_program_compile_model(self->m, &info, &self->p[0]));
	for (uint32_t i = 0; i < n; i++) {
		uint64_t model = 0;

		if (rkaccel_model_desc(self->m)->layers[i].op == RKACCEL_OP_CONCAT) {
			EXPECT_EQ(0, ns[i]);
		} else {
			EXPECT_LT(0, ns[i]) TH_LOG("layer %u took no device time", i);
		}
		/* the device charges at least the compiler's model of it (host time may add) */
		ASSERT_EQ(0, rkaccel_program_layer(self->p[0], i, NULL, &model));
		EXPECT_LE(model * 98 / 100, ns[i]) TH_LOG("layer %u: %llu ns, modelled %llu", i,
							 (unsigned long long)ns[i],
							 (unsigned long long)model);
		sum += ns[i];
	}
	ASSERT_EQ(0, rkaccel_ctx_create(dev, self->m, 1, &ctx));
	ASSERT_EQ(0, rkaccel_ctx_latency(ctx, 0, 1, &whole));
	EXPECT_EQ((int)n, rkaccel_model_layer_times(dev, self->m, info.num_cores - 1, NULL, 0));
	EXPECT_EQ(-EINVAL, rkaccel_model_layer_times(dev, self->m, info.num_cores, ns, n));
	EXPECT_EQ(-EINVAL, rkaccel_model_layer_times(dev, self->m, 0, NULL, n));
	EXPECT_EQ(-EINVAL, rkaccel_model_layer_times(NULL, self->m, 0, ns, n));
	EXPECT_EQ(-EINVAL, rkaccel_model_layer_times(dev, NULL, 0, ns, n));
	ksft_print_msg("%s: %u layers, %llu us in all layer by layer, %llu us in one job\n",
		       net_names[variant->which], n, (unsigned long long)(sum / 1000),
		       (unsigned long long)(whole / 1000));
	rkaccel_ctx_destroy(ctx);
	rkaccel_close(dev);
	free(ns);
}

/* What rkaccel_ctx_create_flags() and rkaccel_ctx_read_tensor() refuse, and what they read. */
TEST(read_tensor_refusals)
{
	struct rkaccel_ctx *ctx = NULL, *plain = NULL;
	struct rkaccel_tensor_shape s0, s1, sn;
	struct rkaccel_model *m = NULL;
	struct rkaccel_device *dev;
	uint32_t n, batch;
	size_t in1, out1, len1;
	uint8_t *buf, *out;
	int8_t *in;
	char msg[256];

	if (rkaccel_open(NULL, &dev))
		SKIP(return, "no rkaccel device (host)");
	ASSERT_EQ(0, lowered(0, &m, msg, sizeof(msg))) TH_LOG("%s", msg);
	n = rkaccel_model_desc(m)->num_layers;
	ASSERT_EQ(0, rkaccel_model_shape(m, 0, &s0));
	ASSERT_EQ(0, rkaccel_model_shape(m, 1, &s1));
	ASSERT_EQ(0, rkaccel_model_shape(m, n, &sn));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_create_flags(dev, m, 0, 2, &ctx));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_create_flags(dev, m, 0, 1u << 31, &ctx));
	EXPECT_EQ(NULL, ctx);
	ASSERT_EQ(0, rkaccel_ctx_create(dev, m, 0, &plain));
	ASSERT_EQ(0, rkaccel_ctx_create_flags(dev, m, 0, RKACCEL_CTX_KEEP_TENSORS, &ctx));
	/* a batch over more slices than contexts: the earliest are overwritten */
	ASSERT_EQ(0, rkaccel_ctx_set_batch(ctx, 2 * RKACCEL_MAX_CORES + 1));
	batch = rkaccel_ctx_batch(ctx);
	in1 = rkaccel_ctx_input_size(ctx) / batch;
	out1 = rkaccel_ctx_output_size(ctx) / batch;
	len1 = (size_t)s1.height * s1.width * s1.channels;
	in = malloc(in1 * batch);
	out = malloc(out1 * batch);
	buf = malloc(len1 + in1 + out1);
	ASSERT_TRUE(in && out && buf);
	rkt_fill_i8(in, in1 * batch, 31337);
	ASSERT_EQ(0, rkaccel_ctx_run(ctx, in, in1 * batch, out, out1 * batch));
	/* the last slice of each context is there: the input and output are the run's */
	EXPECT_EQ(0, rkaccel_ctx_read_tensor(ctx, batch - 1, 0, buf, in1));
	EXPECT_EQ(0, memcmp(buf, in + (batch - 1) * in1, in1));
	EXPECT_EQ(0, rkaccel_ctx_read_tensor(ctx, batch - 1, n, buf, out1));
	EXPECT_EQ(0, memcmp(buf, out + (batch - 1) * out1, out1));
	EXPECT_EQ(0, rkaccel_ctx_read_tensor(ctx, batch - 1 - rkaccel_ctx_copies(ctx), 1, buf,
					     len1));
	EXPECT_EQ(-ESTALE, rkaccel_ctx_read_tensor(ctx, batch - 2 - rkaccel_ctx_copies(ctx), 1,
						   buf, len1));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_read_tensor(ctx, batch, 1, buf, len1));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_read_tensor(ctx, batch - 1, n + 1, buf, len1));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_read_tensor(ctx, batch - 1, 1, buf, len1 - 1));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_read_tensor(ctx, batch - 1, 1, buf, len1 + 1));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_read_tensor(ctx, batch - 1, 1, NULL, len1));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_read_tensor(NULL, 0, 1, buf, len1));
	/* without the flag the activations share memory: nothing to read */
	EXPECT_EQ(-ENOTSUP, rkaccel_ctx_read_tensor(plain, 0, 1, buf, len1));
	EXPECT_EQ(-EINVAL, rkaccel_model_graph_tensor(m, n + 1));
	EXPECT_EQ(-EINVAL, rkaccel_model_graph_tensor(NULL, 0));
	ksft_print_msg("batch %u on %u contexts: input %zu, layer 1 %zu, output %zu bytes read back\n",
		       batch, rkaccel_ctx_copies(ctx) + 1, in1, len1, out1);
	free(in);
	free(out);
	free(buf);
	rkaccel_ctx_destroy(ctx);
	rkaccel_ctx_destroy(plain);
	rkaccel_model_free(m);
	rkaccel_close(dev);
}

/*
 * What the lowering makes of the graph (copy layers, block-diagonal groups,
 * ceil mode as padding) is the graph: the lowered model's reference (what
 * the NPU is held to above) equals graph_ref.h's, byte for byte.
 */
static void keeps_the_graph(struct __test_metadata *_metadata, void (*build)(struct gb *),
			    uint32_t op, uint32_t want_op)
{
	struct rkaccel_model *m = NULL;
	struct gb *b = malloc(sizeof(*b));
	uint8_t *out = NULL, *ref = NULL;
	int8_t *in = NULL;
	size_t in_len, out_len, i;
	uint32_t count = 0;
	char msg[512];

	ASSERT_NE(NULL, b);
	build(b);
	ASSERT_EQ(0, rkaccel_graph_to_model(&b->d, &m, msg, sizeof(msg))) TH_LOG("%s", msg);
	for (i = 0; i < rkaccel_model_desc(m)->num_layers; i++)
		count += rkaccel_model_desc(m)->layers[i].op == op;
	EXPECT_EQ(want_op, count);
	in_len = gref_bytes(&b->d.tensors[b->in.tensor]);
	out_len = gref_bytes(&b->d.tensors[b->out]);
	in = malloc(in_len);
	out = malloc(out_len);
	ref = malloc(out_len);
	ASSERT_TRUE(in && out && ref);
	rkt_fill_i8(in, in_len, 4099);
	ASSERT_EQ(0, ref_model_net(m, in, ref));
	ASSERT_EQ(0, graph_ref_run(&b->d, (const void *const *)&in, (void *const *)&out, NULL,
				   NULL, msg, sizeof(msg))) TH_LOG("%s", msg);
	for (i = 0; i < out_len && out[i] == ref[i]; i++)
		;
	EXPECT_EQ(out_len, i) TH_LOG("the lowered model differs from the graph at byte %zu", i);
	free(in);
	free(out);
	free(ref);
	rkaccel_model_free(m);
	gb_free(b);
	free(b);
}

/* Two copy layers (depthwise 1x1). */
TEST(copies_keep_the_graph)
{
	keeps_the_graph(_metadata, build_copies, RKACCEL_OP_DWCONV, 2);
}

/* The 3x3 and the 1x1 of the groups as convolutions, the ceil-mode pool. */
TEST(groups_and_ceil_mode_keep_the_graph)
{
	keeps_the_graph(_metadata, build_grouped, RKACCEL_OP_MAXPOOL, 1);
}

/* A concat input of channels not a multiple of 32: refused by node and reason. */
TEST(concat_refusals)
{
	struct rkaccel_model *m = NULL;
	struct gb *b = malloc(sizeof(*b));
	uint32_t x, a, c, in[2];
	char msg[512];

	ASSERT_NE(NULL, b);
	/* a first input of 16 channels: its DPU writes 32, over the next input */
	gb_init(b, 25, 8, 8, 8);
	x = gb_conv(b, "stem", b->in.tensor, 3, 1, 1, 32, false, true, false);
	a = gb_conv(b, "a", x, 1, 1, 0, 16, false, true, false);
	c = gb_conv(b, "c", x, 1, 1, 0, 32, false, true, false);
	in[0] = a;
	in[1] = c;
	gb_finish(b, gb_concat(b, "cat", 2, in, c));
	EXPECT_EQ(-EINVAL, rkaccel_graph_to_model(&b->d, &m, msg, sizeof(msg)));
	EXPECT_STREQ("node 'cat' (concat): not compiled yet: input 'a' has 16 channels at offset 0: every input but the last needs a multiple of 32, the channels the DPU writes at once",
		     msg);
	EXPECT_EQ(NULL, m);
	gb_free(b);
	free(b);
}

/* A CPU op (softmax along @axis, or dequantize) of @in into a float32 tensor. */
static uint32_t gb_cpu(struct gb *b, const char *name, uint32_t op, uint32_t in, uint32_t axis)
{
	const struct rkaccel_graph_tensor *t = gb_t(b, in);
	uint32_t out = gb_tensor(b, name, RKACCEL_DTYPE_FLOAT32, t->dims[1], t->dims[2],
				 t->dims[3], 0.0f, 0);

	gb_node(b, op, out, 1, &in)->axis = axis;
	return out;
}

/* The graph tails the model's CPU op takes. */
enum tail { SOFTMAX_I8, DEQUANT_I8, DEQUANT_I32, SOFTMAX_OF_DEQUANT, SOFTMAX_ROWS, TAILS };

static const char *const tail_names[] = { "softmax of int8 logits", "dequantize of int8",
	"dequantize of an int32 accumulator", "softmax of a dequantize",
	"softmax along the rows of a map" };

/* A 3x3 stem, then a classifier head or a 1x1 map, and tail @t at batch @batch. */
static void build_tail(struct gb *b, enum tail t, uint32_t batch)
{
	uint32_t x, y, pool, f;

	gb_init(b, 61 + t, 8, 8, 8);
	x = gb_conv(b, "stem", b->in.tensor, 3, 1, 1, 16, false, true, false);
	if (t == SOFTMAX_ROWS) {
		y = gb_conv(b, "map", x, 1, 1, 0, 8, false, false, false);
		b->t[y].scale *= 4.0f;	/* a few units apart: a softmax that is not one-hot */
		gb_finish(b, gb_cpu(b, "prob", RKACCEL_GOP_SOFTMAX, y, 1));
	} else {
		pool = gb_tensor(b, "pool", RKACCEL_DTYPE_INT8, 1, 1, 16, gb_t(b, x)->scale,
				 gb_t(b, x)->zero_point);
		gb_node(b, RKACCEL_GOP_GLOBAL_AVGPOOL, pool, 1, &x);
		y = gb_conv(b, "logits", pool, 1, 1, 0, 10, false, false, t == DEQUANT_I32);
		if (t == SOFTMAX_I8)
			f = gb_cpu(b, "prob", RKACCEL_GOP_SOFTMAX, y, 3);
		else
			f = gb_cpu(b, "logits:dequantized", RKACCEL_GOP_DEQUANTIZE, y, 0);
		if (t == SOFTMAX_OF_DEQUANT)
			f = gb_cpu(b, "prob", RKACCEL_GOP_SOFTMAX, f, 3);
		gb_finish(b, f);
	}
	b->d.batch = batch;
	for (uint32_t k = 0; k < b->nt; k++)
		b->t[k].dims[0] = batch;
}

/* The tail's graph reference and the lowered model's NPU output plus its CPU op. */
static void check_tail(struct __test_metadata *_metadata, enum tail t,
		       struct rkaccel_device *dev)
{
	uint32_t batch = dev ? 3 : 1;
	struct rkaccel_model *m = NULL;
	struct gb *b = malloc(sizeof(*b));
	struct rkaccel_output_op op;
	size_t in_len, out_len, npu_len, i;
	struct rkaccel_ctx *ctx;
	uint8_t *npu = NULL;
	float *out, *ref;
	int8_t *in;
	char msg[512];

	ASSERT_NE(NULL, b);
	build_tail(b, t, batch);
	ASSERT_EQ(0, rkaccel_graph_to_model(&b->d, &m, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, rkaccel_model_output_op(m, &op));
	EXPECT_EQ(b->out, op.graph_tensor);
	EXPECT_EQ(t == SOFTMAX_I8 || t >= SOFTMAX_OF_DEQUANT ? RKACCEL_OUTPUT_SOFTMAX : 0,
		  op.flags);
	EXPECT_EQ(t == DEQUANT_I32 ? 4 : 1, op.in_bytes);
	in_len = gref_bytes(&b->d.tensors[b->in.tensor]) * batch;
	out_len = gref_bytes(&b->d.tensors[b->out]) * batch;
	npu_len = out_len / 4 * op.in_bytes;
	in = malloc(in_len);
	out = malloc(out_len);
	ref = malloc(out_len);
	npu = malloc(npu_len);
	ASSERT_TRUE(in && out && ref && npu);
	rkt_fill_i8(in, in_len, 7001 + t);
	ASSERT_EQ(0, graph_ref_run(&b->d, (const void *const *)&in, (void *const *)&ref, NULL,
				   NULL, msg, sizeof(msg))) TH_LOG("%s", msg);
	if (dev) {
		ASSERT_EQ(0, rkaccel_ctx_create(dev, m, 0, &ctx));
		ASSERT_EQ(0, rkaccel_ctx_set_batch(ctx, batch));
		ASSERT_EQ(0, rkaccel_ctx_run(ctx, in, in_len, npu, npu_len));
		rkaccel_ctx_destroy(ctx);
	} else {
		ASSERT_EQ(0, ref_model_net(m, in, npu));
	}
	ASSERT_EQ(0, rkaccel_output_op_run(&op, npu, batch, out));
	for (i = 0; i < out_len / 4 && !memcmp(&out[i], &ref[i], 4); i++)
		;
	EXPECT_EQ(out_len / 4, i) TH_LOG("%s: element %zu is %.9g, the graph's %.9g",
					 tail_names[t], i, (double)out[i], (double)ref[i]);
	for (i = 1; i < out_len / 4 && ref[i] == ref[0]; i++)
		;
	EXPECT_GT(out_len / 4, i) TH_LOG("%s: a constant output, a weak check", tail_names[t]);
	ksft_print_msg("%s: %zu floats bit-exact with the graph (batch %u, %s)\n",
		       tail_names[t], out_len / 4, batch, dev ? "the NPU" : "host");
	free(in);
	free(out);
	free(ref);
	free(npu);
	rkaccel_model_free(m);
	gb_free(b);
	free(b);
}

/*
 * Softmax and dequantize after the last layer: the lowered model's output
 * through rkaccel_output_op_run() equals the graph's reference to the bit,
 * on the host (the lowered model's reference) and on the NPU at batch 3.
 */
TEST(output_op_after_the_npu)
{
	struct rkaccel_device *dev = NULL;

	for (enum tail t = 0; t < TAILS; t++)
		check_tail(_metadata, t, NULL);
	if (rkaccel_open(NULL, &dev))
		SKIP(return, "no rkaccel device (host): checked against the lowered model only");
	for (enum tail t = 0; t < TAILS; t++)
		check_tail(_metadata, t, dev);
	rkaccel_close(dev);
}

/* CPU ops placed where the model cannot run them: refused by node and reason. */
TEST(output_op_refusals)
{
	struct rkaccel_output_op op = { 0 }, bad;
	struct rkaccel_model *m = NULL;
	struct gb *b = malloc(sizeof(*b));
	uint32_t x, f;
	float dst[4];
	int8_t src[4] = { 0 };
	char msg[512];

	ASSERT_NE(NULL, b);
	/* a second softmax after the first */
	gb_init(b, 71, 4, 4, 8);
	x = gb_conv(b, "stem", b->in.tensor, 1, 1, 0, 8, false, false, false);
	f = gb_cpu(b, "p1", RKACCEL_GOP_SOFTMAX, x, 3);
	gb_finish(b, gb_cpu(b, "p2", RKACCEL_GOP_SOFTMAX, f, 3));
	EXPECT_EQ(-EINVAL, rkaccel_graph_to_model(&b->d, &m, msg, sizeof(msg)));
	EXPECT_STREQ("node 'p2' (softmax): not compiled yet: a second CPU op: the model runs a dequantize, a softmax, or a dequantize then a softmax at its output",
		     msg);
	gb_free(b);
	/* a softmax of the graph input: nothing for the NPU */
	gb_init(b, 73, 4, 4, 8);
	gb_finish(b, gb_cpu(b, "prob", RKACCEL_GOP_SOFTMAX, b->in.tensor, 3));
	EXPECT_EQ(-EINVAL, rkaccel_graph_to_model(&b->d, &m, msg, sizeof(msg)));
	EXPECT_STREQ("node 'prob' (softmax): not compiled yet: reads 'data', which no layer of the NPU computes",
		     msg);
	EXPECT_EQ(NULL, m);
	gb_free(b);
	free(b);
	/* a model without a CPU op, and ops no model gives */
	ASSERT_EQ(0, rkaccel_model_random(1, 2, 2, (const uint32_t[]){ 8, 8, 4 }, 0, &m));
	EXPECT_EQ(-ENOENT, rkaccel_model_output_op(m, &op));
	EXPECT_EQ(-EINVAL, rkaccel_model_output_op(NULL, &op));
	EXPECT_EQ(-EINVAL, rkaccel_model_output_op(m, NULL));
	rkaccel_model_free(m);
	op = (struct rkaccel_output_op){ .in_bytes = 1, .scale = 0.5f, .outer = 1,
					 .axis_len = 4, .inner = 1 };
	EXPECT_EQ(0, rkaccel_output_op_run(&op, src, 1, dst));
	EXPECT_EQ(-EINVAL, rkaccel_output_op_run(&op, src, 0, dst));
	EXPECT_EQ(-EINVAL, rkaccel_output_op_run(&op, NULL, 1, dst));
	EXPECT_EQ(-EINVAL, rkaccel_output_op_run(&op, src, 1, NULL));
	bad = op;
	bad.in_bytes = 2;
	EXPECT_EQ(-EINVAL, rkaccel_output_op_run(&bad, src, 1, dst));
	bad = op;
	bad.flags = 0x2;
	EXPECT_EQ(-EINVAL, rkaccel_output_op_run(&bad, src, 1, dst));
	bad = op;
	bad.scale = -1.0f;
	EXPECT_EQ(-EINVAL, rkaccel_output_op_run(&bad, src, 1, dst));
	bad = op;
	bad.axis_len = 0;
	EXPECT_EQ(-EINVAL, rkaccel_output_op_run(&bad, src, 1, dst));
}

/*
 * 4,096 layers in memory: a text network of that many lowers from its graph
 * and compiles (with a job limit above one task a layer); one more is refused.
 */
TEST(layers_4096)
{
	struct rkaccel_info info = host_info;
	struct rkaccel_model *m = NULL, *low = NULL;
	struct rkaccel_program *p = NULL;
	struct rkaccel_graph *g = NULL;
	size_t len = 32 + ((size_t)RKACCEL_MODEL_MAX_MEM_LAYERS + 1) * 8;
	char *text = malloc(len), msg[256] = "", *at;

	ASSERT_NE(NULL, text);
	at = text + sprintf(text, "input 4x4x16\n");
	for (int i = 0; i <= RKACCEL_MODEL_MAX_MEM_LAYERS; i++)
		at += sprintf(at, "pw c16\n");
	/* one line too many */
	EXPECT_EQ(-EINVAL, rkaccel_model_from_text(1, text, &m, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "more than 4096 layers")) TH_LOG("%s", msg);
	at[-7] = '\0';
	ASSERT_EQ(0, rkaccel_model_from_text(1, text, &m, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_EQ(RKACCEL_MODEL_MAX_MEM_LAYERS, rkaccel_model_desc(m)->num_layers);
	ASSERT_EQ(0, rkaccel_graph_from_model(rkaccel_model_desc(m), &g, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, rkaccel_graph_to_model(rkaccel_graph_desc(g), &low, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	EXPECT_EQ(RKACCEL_MODEL_MAX_MEM_LAYERS, rkaccel_model_desc(low)->num_layers);
	info.max_tasks = 2 * RKACCEL_MODEL_MAX_MEM_LAYERS;
	ASSERT_EQ(0, rkaccel_program_compile_model(low, &info, &p));
	EXPECT_LE(RKACCEL_MODEL_MAX_MEM_LAYERS, rkaccel_program_tasks(p));
	/* two regions alternate however long the chain */
	EXPECT_GE(2 * rkaccel_native_size(16, 32, 1) + 128,
		  rkaccel_program_size(p, RKACCEL_BUF_INTERNAL));
	ksft_print_msg("%u layers: %u tasks, internal peak %zu bytes\n",
		       rkaccel_model_desc(low)->num_layers, rkaccel_program_tasks(p),
		       rkaccel_program_size(p, RKACCEL_BUF_INTERNAL));
	rkaccel_program_free(p);
	rkaccel_model_free(low);
	rkaccel_graph_free(g);
	rkaccel_model_free(m);
	free(text);
}

TEST_HARNESS_MAIN
