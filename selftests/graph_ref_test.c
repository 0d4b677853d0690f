// SPDX-License-Identifier: GPL-2.0-only
/*
 * The graph-level CPU reference (graph_ref.h) against the chain reference
 * (net_ref.h): every chain the 2.0 tests generate, as the 3.0 graph
 * rkaccel_graph_from_model() makes of it, must give the same bytes, at
 * batch 1 and per slice of a batch-3 copy. Then what only graphs have:
 * a concat of two convolutions equals one convolution with their weights
 * stacked, a grouped convolution with a group per channel equals the
 * depthwise one, max pooling in ceil mode equals the padded pool; and the
 * zoo's networks (tools/zoo.h) at small inputs keep their outputs spread
 * (neither saturated nor collapsed). No device: scripts/zoo-data.sh runs
 * it on the host before it writes the zoo's expected outputs.
 */

#include "kselftest_harness.h"

#include "graph_ref.h"
#include "net_ref.h"
#include "zoo.h"

/* The chains of graph_test's to_model_round_trip and net_test. */
static const char *const chain_nets[] = {
	"input 32x32x3\nconv 3x3 s2 c16\ndw 3x3 s1 pc\npw c32\ndw 3x3 s2\npw c48 pc\n"
	"dw 3x3 s1 pc\npw c64\navgpool global\nfc 10\n",
	"input 6x5x3\nconv 3x3 s2 c8 pc\ndw 3x3 s1\nadd 1\nmaxpool 2x2 s1\navgpool global\nfc 4\n",
	"input 128x96x32\nconv 3x3 s2 c4\nmaxpool 2x2 s2\nconv 3x3 s1 c16\n"
	"conv 3x3 s1 c16 pc\nadd 3\nmaxpool 3x3 s2 pad 1\nconv 5x5 s1 c16 pad 2,1,2,3\n"
	"conv 3x3 s1 c16 linear\nadd 5\ndw 5x5 s2 pad 1,2,2,1 pc\navgpool 3x3 s1 pad 1\n"
	"maxpool 3x3 s3\nconv 7x7 s1 c480\navgpool global\nfc 17 relu\nfc 5 int32\n",
	"input 13x11x3\nconv 3x3 s2 c17 pad 1,0,2,1\ndw 5x5 s1 pc\nadd 1\n"
	"maxpool 3x3 s2 pad 1\nconv 7x7 s1 c33\navgpool 2x2 s1\npw c3 linear\nfc 7 relu int32\n",
};

static void fill(uint32_t seed, int8_t *buf, size_t n)
{
	zoo_input(seed, 0, buf, n);
}

/* Bytes of the last tensor of chain @d (int8, or int32 with OUT_INT32). */
static size_t chain_out_bytes(const struct rkaccel_model_desc *d)
{
	struct rkaccel_tensor_shape s;
	const struct rkaccel_layer_desc *l = &d->layers[d->num_layers - 1];

	rkaccel_model_tensor(d, d->num_layers, &s);
	return (size_t)s.height * s.width * s.channels *
	       (l->flags & RKACCEL_LAYER_OUT_INT32 ? 4 : 1);
}

/*
 * Chain @m through net_ref and, as a graph of batch @batch (every slice
 * its own input), through graph_ref: the same bytes. Returns the first
 * differing byte or -1.
 */
static long compare_chain(struct __test_metadata *_metadata, const struct rkaccel_model *m,
			  uint32_t batch, uint32_t seed)
{
	const struct rkaccel_model_desc *md = rkaccel_model_desc(m);
	struct rkaccel_graph_tensor t[64];
	struct rkaccel_graph_desc gd;
	struct rkaccel_graph *g;
	struct rkaccel_tensor_shape s;
	size_t in_bytes, out_bytes = chain_out_bytes(md);
	uint8_t *want, *got;
	int8_t *in;
	char msg[256] = "";
	long diff = -1;

	rkaccel_model_tensor(md, 0, &s);
	in_bytes = (size_t)s.height * s.width * s.channels;
	ASSERT_EQ(0, rkaccel_graph_from_model(md, &g, msg, sizeof(msg))) TH_LOG("%s", msg);
	gd = *rkaccel_graph_desc(g);
	ASSERT_GE(64, gd.num_tensors);
	memcpy(t, gd.tensors, gd.num_tensors * sizeof(*t));
	for (uint32_t k = 0; k < gd.num_tensors; k++)
		t[k].dims[0] = batch;
	gd.tensors = t;
	gd.batch = batch;
	in = malloc(in_bytes * batch);
	want = malloc(out_bytes * batch);
	got = malloc(out_bytes * batch);
	ASSERT_TRUE(in && want && got);
	for (uint32_t i = 0; i < batch; i++) {
		fill(seed * 8 + i, in + i * in_bytes, in_bytes);
		ASSERT_EQ(0, ref_net(md, in + i * in_bytes, want + i * out_bytes));
	}
	{
		const void *ins[1] = { in };
		void *outs[1] = { got };

		ASSERT_EQ(0, graph_ref_run(&gd, ins, outs, NULL, NULL, msg, sizeof(msg)))
			TH_LOG("%s", msg);
	}
	for (size_t k = 0; k < out_bytes * batch; k++) {
		if (want[k] != got[k]) {
			diff = (long)k;
			break;
		}
	}
	free(in);
	free(want);
	free(got);
	rkaccel_graph_free(g);
	return diff;
}

TEST(chains_equal_net_ref)
{
	static const uint32_t flags_last[] = { 0, RKACCEL_LAYER_RELU, RKACCEL_LAYER_OUT_INT32 };
	struct rkaccel_model *m;
	char msg[256];
	uint32_t n = 0;

	for (size_t k = 0; k < sizeof(chain_nets) / sizeof(chain_nets[0]); k++) {
		for (uint32_t seed = 1; seed <= 3; seed++) {
			ASSERT_EQ(0, rkaccel_model_from_text(seed, chain_nets[k], &m, msg,
							     sizeof(msg))) TH_LOG("%s", msg);
			EXPECT_EQ(-1, compare_chain(_metadata, m, 1, seed))
				TH_LOG("net %zu seed %u", k, seed);
			rkaccel_model_free(m);
			n++;
		}
	}
	for (uint32_t seed = 1; seed <= 24; seed++) {
		uint32_t f[7], layers = 1 + seed % 6, rows = 1 + (seed * 7) % 40;

		for (uint32_t i = 0; i <= layers; i++)
			f[i] = 1 + (seed * 13 + i * 29) % 70;
		ASSERT_EQ(0, rkaccel_model_random(seed, rows, layers, f, flags_last[seed % 3], &m));
		EXPECT_EQ(-1, compare_chain(_metadata, m, 1, seed)) TH_LOG("random seed %u", seed);
		rkaccel_model_free(m);
		n++;
	}
	ksft_print_msg("%u chains: graph_ref equals net_ref byte for byte\n", n);
	EXPECT_EQ(12 + 24, n);
}

TEST(batch_slices_equal_net_ref)
{
	struct rkaccel_model *m;
	char msg[256];

	for (size_t k = 0; k < sizeof(chain_nets) / sizeof(chain_nets[0]); k++) {
		ASSERT_EQ(0, rkaccel_model_from_text(7, chain_nets[k], &m, msg, sizeof(msg)))
			TH_LOG("%s", msg);
		EXPECT_EQ(-1, compare_chain(_metadata, m, 3, 11)) TH_LOG("net %zu", k);
		rkaccel_model_free(m);
	}
}

/* A one-node graph over the tensors @t: in, @n's output. */
static int run_graph(struct rkaccel_graph_tensor *t, uint32_t nt, struct rkaccel_graph_node *n,
		     uint32_t nn, uint32_t out, const int8_t *in, void *res, char *msg, size_t len)
{
	struct rkaccel_graph_input gi = { .tensor = 0 };
	struct rkaccel_graph_desc d = {
		.batch = 1, .num_tensors = nt, .tensors = t, .num_nodes = nn, .nodes = n,
		.num_inputs = 1, .inputs = &gi, .num_outputs = 1, .outputs = &out,
	};
	const void *ins[1] = { in };
	void *outs[1] = { res };
	int ret = rkaccel_graph_validate(&d, msg, len);

	return ret ? ret : graph_ref_run(&d, ins, outs, NULL, NULL, msg, len);
}

#define T4(nm, h, w, c, s, zp) { .name = nm, .type = RKACCEL_DTYPE_INT8, .n_dims = 4, \
				  .dims = { 1, h, w, c }, .scale = s, .zero_point = zp }

TEST(concat_equals_stacked_conv)
{
	static int8_t w[16 * 9 * 5], in[7 * 6 * 5], a[7 * 6 * 16], b[7 * 6 * 16];
	static int32_t bias[16];
	struct rkaccel_graph_tensor t[4] = {
		T4("x", 7, 6, 5, 0.05f, 3), T4("a", 7, 6, 8, 0.5f, -128), T4("b", 7, 6, 8, 0.5f, -128),
		T4("cat", 7, 6, 16, 0.5f, -128),
	};
	uint32_t e[4] = { 0, 0, 1, 2 };
	struct rkaccel_graph_node conv = {
		.op = RKACCEL_GOP_CONV, .num_inputs = 1, .kernel_h = 3, .kernel_w = 3,
		.stride_h = 1, .stride_w = 1, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
		.pad_right = 1, .dilation_h = 1, .dilation_w = 1, .groups = 1,
		.act = RKACCEL_ACT_RELU, .weight_scale = 0.02f,
	};
	struct rkaccel_graph_node n[3] = { conv, conv, { 0 } };
	char msg[256] = "";

	fill(1, w, sizeof(w));
	fill(2, in, sizeof(in));
	for (int k = 0; k < 16; k++)
		bias[k] = (k - 8) * 97;
	n[0].inputs = &e[0];
	n[0].output = 1;
	n[0].weights = w;
	n[0].bias = bias;
	n[1].inputs = &e[1];
	n[1].output = 2;
	n[1].weights = w + 8 * 9 * 5;
	n[1].bias = bias + 8;
	n[2] = (struct rkaccel_graph_node){ .op = RKACCEL_GOP_CONCAT, .num_inputs = 2,
					    .inputs = &e[2], .output = 3, .axis = 3 };
	ASSERT_EQ(0, run_graph(t, 4, n, 3, 3, in, a, msg, sizeof(msg))) TH_LOG("%s", msg);
	/* one convolution of 16 outputs: the weights of both, one after the other */
	t[1] = (struct rkaccel_graph_tensor)T4("all", 7, 6, 16, 0.5f, -128);
	n[0].weights = w;
	n[0].bias = bias;
	ASSERT_EQ(0, run_graph(t, 2, n, 1, 1, in, b, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_EQ(0, memcmp(a, b, sizeof(a)));
}

TEST(groupconv_per_channel_equals_dwconv)
{
	static int8_t w[12 * 9], in[9 * 8 * 12], a[5 * 4 * 12], b[5 * 4 * 12];
	static int32_t bias[12];
	struct rkaccel_graph_tensor t[2] = { T4("x", 9, 8, 12, 0.1f, -5), T4("y", 5, 4, 12, 0.2f, 7) };
	uint32_t e = 0;
	struct rkaccel_graph_node n = {
		.op = RKACCEL_GOP_DWCONV, .num_inputs = 1, .inputs = &e, .output = 1,
		.kernel_h = 3, .kernel_w = 3, .stride_h = 2, .stride_w = 2, .pad_top = 1,
		.pad_left = 1, .pad_bottom = 1, .pad_right = 0, .dilation_h = 1, .dilation_w = 1,
		.groups = 12, .weight_scale = 0.03f, .weights = w, .bias = bias,
	};
	char msg[256] = "";

	fill(3, w, sizeof(w));
	fill(4, in, sizeof(in));
	for (int k = 0; k < 12; k++)
		bias[k] = k * 31 - 150;
	ASSERT_EQ(0, run_graph(t, 2, &n, 1, 1, in, a, msg, sizeof(msg))) TH_LOG("%s", msg);
	n.op = RKACCEL_GOP_GROUPCONV;
	ASSERT_EQ(0, run_graph(t, 2, &n, 1, 1, in, b, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_EQ(0, memcmp(a, b, sizeof(a)));
}

TEST(maxpool_ceil_mode_equals_padded)
{
	static int8_t in[10 * 10 * 4], a[5 * 5 * 4], b[5 * 5 * 4];
	struct rkaccel_graph_tensor t[2] = { T4("x", 10, 10, 4, 0.1f, 0), T4("y", 5, 5, 4, 0.1f, 0) };
	uint32_t e = 0;
	struct rkaccel_graph_node n = {
		.op = RKACCEL_GOP_MAXPOOL, .num_inputs = 1, .inputs = &e, .output = 1,
		.kernel_h = 3, .kernel_w = 3, .stride_h = 2, .stride_w = 2, .dilation_h = 1,
		.dilation_w = 1, .flags = RKACCEL_NODE_CEIL_MODE,
	};
	char msg[256] = "";

	fill(5, in, sizeof(in));
	/* (10 - 3) / 2 + 1 = 4 rounded down, 5 in ceil mode */
	ASSERT_EQ(0, run_graph(t, 2, &n, 1, 1, in, a, msg, sizeof(msg))) TH_LOG("%s", msg);
	n.flags = 0;
	n.pad_bottom = n.pad_right = 1;
	ASSERT_EQ(0, run_graph(t, 2, &n, 1, 1, in, b, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_EQ(0, memcmp(a, b, sizeof(a)));
}

TEST(undefined_arithmetic_is_refused)
{
	static int8_t in[4 * 4 * 4], out[4 * 4 * 4];
	struct rkaccel_graph_tensor t[3] = {
		T4("x", 4, 4, 4, 0.1f, 0), T4("y", 4, 4, 4, 0.1f, 0), T4("z", 4, 4, 4, 0.1f, 0),
	};
	uint32_t e[3] = { 0, 0, 1 };
	struct rkaccel_graph_node n[2] = {
		{ .op = RKACCEL_GOP_MAXPOOL, .num_inputs = 1, .inputs = &e[0], .output = 1,
		  .kernel_h = 1, .kernel_w = 1, .stride_h = 1, .stride_w = 1, .dilation_h = 1,
		  .dilation_w = 1 },
		{ .op = RKACCEL_GOP_ADD, .num_inputs = 2, .inputs = &e[1], .output = 2 },
	};
	char msg[256] = "";

	EXPECT_EQ(-ENOTSUP, run_graph(t, 3, n, 2, 2, in, out, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "node 1 'z' (add): add of int8 and int8")) TH_LOG("%s", msg);
}

/*
 * Spread of an int8 tensor: its values at the ends of the range (127, and
 * -128 unless it is the zero point: a ReLU's zeros), its distinct values.
 */
struct spread {
	size_t n, sat;
	uint32_t distinct;
	bool seen[256];
};

static void spread_of(const int8_t *p, size_t n, int32_t zp, struct spread *s)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	for (size_t k = 0; k < n; k++) {
		s->sat += p[k] == 127 || (p[k] == -128 && zp != -128);
		if (!s->seen[(uint8_t)p[k]]) {
			s->seen[(uint8_t)p[k]] = true;
			s->distinct++;
		}
	}
}

/* The node whose int8 output saturates most. */
struct worst {
	const struct rkaccel_graph_desc *d;
	double frac;
	uint32_t node;
};

static void worst_hook(void *arg, uint32_t image, uint32_t node, const void *data, size_t bytes)
{
	struct worst *w = arg;
	const struct rkaccel_graph_tensor *t = &w->d->tensors[w->d->nodes[node].output];
	struct spread s;

	(void)image;
	if (t->type != RKACCEL_DTYPE_INT8)
		return;
	spread_of(data, bytes, t->zero_point, &s);
	if ((double)s.sat / s.n > w->frac) {
		w->frac = (double)s.sat / s.n;
		w->node = node;
	}
}

/* The zoo at small inputs: outputs at most 5% saturated, no node more, 32 values or more. */
TEST(zoo_outputs_spread)
{
	static const struct { const char *name; uint32_t h, w; } nets[] = {
		{ "mobilenetv1", 64, 64 }, { "mobilenetv2", 64, 64 }, { "resnet18", 64, 64 },
		{ "resnet50", 32, 32 }, { "squeezenet", 64, 64 }, { "inception", 8, 8 },
		{ "densenet", 8, 8 }, { "vgg16head", 0, 0 }, { "lenet5", 0, 0 },
	};

	for (size_t k = 0; k < sizeof(nets) / sizeof(nets[0]); k++) {
		struct zb b;
		const struct rkaccel_graph_tensor *it, *ot;
		size_t in_bytes, out_bytes;
		struct spread s;
		struct worst worst = { 0 };
		int8_t *in, *out;
		char msg[256] = "";

		ASSERT_EQ(0, zoo_build(nets[k].name, 1, nets[k].h, nets[k].w, 1, &b))
			TH_LOG("%s: %s", nets[k].name, b.msg);
		it = &b.t[b.in.tensor];
		ot = &b.t[b.out];
		worst.d = &b.desc;
		in_bytes = gref_bytes(it);
		out_bytes = gref_bytes(ot);
		in = malloc(in_bytes);
		out = malloc(out_bytes);
		ASSERT_TRUE(in && out);
		zoo_input(1, 0, in, in_bytes);
		{
			const void *ins[1] = { in };
			void *outs[1] = { out };

			ASSERT_EQ(0, graph_ref_run(&b.desc, ins, outs, worst_hook, &worst, msg,
						   sizeof(msg))) TH_LOG("%s: %s", nets[k].name, msg);
		}
		spread_of(out, out_bytes, ot->zero_point, &s);
		ksft_print_msg("%s: %zu outputs, %u distinct values, %zu saturated; most saturated node %u '%s' %.2f%%\n",
			       nets[k].name, s.n, s.distinct, s.sat, worst.node,
			       b.t[b.n[worst.node].output].name, 100 * worst.frac);
		/* 32 values, or half of them when there are fewer than 64 (LeNet's 10) */
		EXPECT_GE(s.distinct, s.n < 64 ? s.n / 2 : 32) TH_LOG("%s: collapsed", nets[k].name);
		EXPECT_LE(s.sat * 20, s.n) TH_LOG("%s: saturated", nets[k].name);
		EXPECT_LE(worst.frac, 0.05) TH_LOG("%s: a node saturates", nets[k].name);
		free(in);
		free(out);
		zb_free(&b);
	}
}

TEST_HARNESS_MAIN
