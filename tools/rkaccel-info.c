// SPDX-License-Identifier: MIT
/*
 * rkaccel-info: print the NPU device, its cores, versions and per-core load;
 * or, with --model, a model file's graph as a table (no device needed):
 * its nodes, then what each costs (MACs, weight bytes, and the hardware
 * tasks when the library compiles the graph for the RK3588).
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"
#include "graph_cost.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: rkaccel-info [DEVICE]\n"
		   "       rkaccel-info --model FILE\n"
		   "Print the rkaccel NPU device, its cores, versions and per-core load,\n"
		   "or the graph of a model file (any version) as a table.\n");
}

static const char *type_name(uint32_t type)
{
	static const char *const names[] = { "?", "i8", "u8", "i32", "f32" };

	return type <= RKACCEL_DTYPE_FLOAT32 ? names[type] : "?";
}

/* "name 1x8x8x3 u8" into @buf. */
static const char *tensor_str(const struct rkaccel_graph_desc *d, uint32_t t, char *buf,
			      size_t len)
{
	const struct rkaccel_graph_tensor *x = &d->tensors[t];
	size_t at = (size_t)snprintf(buf, len, "%s ", x->name);

	for (uint32_t k = 0; k < x->n_dims && at < len; k++)
		at += (size_t)snprintf(buf + at, len - at, k ? "x%u" : "%u", x->dims[k]);
	if (at < len)
		snprintf(buf + at, len - at, " %s", type_name(x->type));
	return buf;
}

/* Kernel, stride, padding, groups, activation: what a node does besides its op. */
static const char *attr_str(const struct rkaccel_graph_node *n, char *buf, size_t len)
{
	static const char *const acts[] = { "", " relu", " clip", " leaky" };
	size_t at = 0;

	buf[0] = '\0';
	if (n->kernel_h)
		at += (size_t)snprintf(buf, len, "%ux%u/%u,%u pad %u,%u,%u,%u", n->kernel_h,
				       n->kernel_w, n->stride_h, n->stride_w, n->pad_top,
				       n->pad_left, n->pad_bottom, n->pad_right);
	if (n->dilation_h > 1 || n->dilation_w > 1)
		at += (size_t)snprintf(buf + at, len - at, " dil %ux%u", n->dilation_h,
				       n->dilation_w);
	if (n->groups > 1)
		at += (size_t)snprintf(buf + at, len - at, " g%u", n->groups);
	if (n->flags & RKACCEL_NODE_CEIL_MODE)
		at += (size_t)snprintf(buf + at, len - at, " ceil");
	if (n->flags & RKACCEL_NODE_COUNT_INCLUDE_PAD)
		at += (size_t)snprintf(buf + at, len - at, " incl-pad");
	if (n->axis)
		at += (size_t)snprintf(buf + at, len - at, " axis %u", n->axis);
	if (n->act <= RKACCEL_ACT_LEAKY && n->act)
		at += (size_t)snprintf(buf + at, len - at, "%s", acts[n->act]);
	if (n->act == RKACCEL_ACT_CLIP)
		at += (size_t)snprintf(buf + at, len - at, " %g..%g", (double)n->clip_min,
				       (double)n->clip_max);
	if (n->act == RKACCEL_ACT_LEAKY)
		at += (size_t)snprintf(buf + at, len - at, " %g", (double)n->leaky_slope);
	if (n->weight_scales && at < len)
		snprintf(buf + at, len - at, " per-channel");
	return buf;
}

/*
 * Per node: output shape, MACs, weight bytes, tasks and modelled time on
 * one RK3588 core at 1 GHz; then the totals.
 */
static void print_cost(const struct rkaccel_graph_desc *d)
{
	struct rkaccel_info info = gc_rk3588();
	uint64_t macs = 0, weights = 0;
	struct gc_compiled c;
	char a[160], m[32], w[32], us[32];

	gc_compile(d, &info, true, &c);
	printf("\n%5s  %-14s  %-32s  %10s  %10s  %5s  %9s\n", "node", "op", "output (per batch)",
	       "MACs/image", "weights", "tasks", "model_us");
	for (uint32_t i = 0; i < d->num_nodes; i++) {
		const struct rkaccel_graph_node *n = &d->nodes[i];
		uint64_t nm = gc_node_macs(d, n), nw = gc_node_weight_bytes(d, n);

		macs += nm;
		weights += nw;
		if (c.node_tasks) {
			snprintf(a, sizeof(a), "%u", c.node_tasks[i]);
			snprintf(us, sizeof(us), "%.1f", (double)c.node_ns[i] / 1000);
		} else {
			snprintf(a, sizeof(a), "-");
			snprintf(us, sizeof(us), "-");
		}
		printf("%5u  %-14s  %-32s  %10s  %10s  %5s  %9s\n", i, rkaccel_graph_op_name(n->op),
		       tensor_str(d, n->output, (char[160]){ 0 }, 160), gc_si(nm, m, sizeof(m)),
		       gc_si(nw, w, sizeof(w)), a, us);
	}
	printf("total:    %llu MACs per image, %llu weight bytes\n", (unsigned long long)macs,
	       (unsigned long long)weights);
	if (c.ret)
		printf("RK3588:   not compiled: %s\n", c.msg);
	else
		printf("RK3588:   %u tasks, %zu regcmd bytes, %zu bytes of activations (peak) per image, modelled %.3f ms on one core at 1 GHz\n",
		       c.tasks, c.regcmd_bytes, c.internal_bytes, (double)c.ns / 1e6);
	gc_free(&c);
}

static void print_graph(const char *path, const char *version, const struct rkaccel_graph_desc *d)
{
	char a[320], b[320], c[160];

	printf("model:    %s: %s, batch %u, %u nodes, %u tensors\n", path, version, d->batch,
	       d->num_nodes, d->num_tensors);
	for (uint32_t i = 0; i < d->num_inputs; i++) {
		static const char *const order[] = { "", " RGB", " BGR" };
		const struct rkaccel_graph_input *in = &d->inputs[i];

		printf("input:    %s%s%s\n", tensor_str(d, in->tensor, a, sizeof(a)),
		       in->channel_order <= RKACCEL_CHANNELS_BGR ? order[in->channel_order] : "",
		       in->mean ? " mean/std" : "");
	}
	for (uint32_t i = 0; i < d->num_outputs; i++)
		printf("output:   %s\n", tensor_str(d, d->outputs[i], a, sizeof(a)));
	if (d->custom && *d->custom)
		printf("custom:   %s\n", d->custom);
	printf("%5s  %-14s  %-28s  %-24s  %s\n", "node", "op", "inputs", "output", "attributes");
	for (uint32_t i = 0; i < d->num_nodes; i++) {
		const struct rkaccel_graph_node *n = &d->nodes[i];
		size_t at = 0;

		a[0] = '\0';
		for (uint32_t k = 0; k < n->num_inputs && at < sizeof(a); k++) {
			at += (size_t)snprintf(a + at, sizeof(a) - at, "%s%s", k ? ", " : "",
					       tensor_str(d, n->inputs[k], c, sizeof(c)));
		}
		attr_str(n, c, sizeof(c));
		/* no padding after the output when nothing follows it */
		printf("%5u  %-14s  %-28s  %-*s%s%s\n", i, rkaccel_graph_op_name(n->op), a,
		       c[0] ? 24 : 0, tensor_str(d, n->output, b, sizeof(b)), c[0] ? "  " : "",
		       c[0] == ' ' ? c + 1 : c);
	}
	print_cost(d);
}

/* A 3.x file as it is; a 1.x/2.x file as the graph it converts to. */
static int show_model(const char *path)
{
	struct rkaccel_graph *g;
	struct rkaccel_model *m;
	char msg[512];
	int ret = rkaccel_graph_load(path, &g, msg, sizeof(msg));

	if (!ret) {
		print_graph(path, "format 3.x", rkaccel_graph_desc(g));
		rkaccel_graph_free(g);
		return 0;
	}
	if (ret != -ENOTSUP) {
		fprintf(stderr, "rkaccel-info: %s\n", msg);
		return 1;
	}
	ret = rkaccel_model_load(path, &m, msg, sizeof(msg));
	if (!ret) {
		ret = rkaccel_graph_from_model(rkaccel_model_desc(m), &g, msg, sizeof(msg));
		rkaccel_model_free(m);
	}
	if (ret) {
		fprintf(stderr, "rkaccel-info: %s\n", msg);
		return 1;
	}
	print_graph(path, "format 1.x/2.x, as its 3.0 graph", rkaccel_graph_desc(g));
	rkaccel_graph_free(g);
	return 0;
}

/* Per-core counters and the load of the last second, from debugfs. */
static void print_load(struct rkaccel_device *dev)
{
	struct rkaccel_core_stats st[8];
	int n = rkaccel_core_stats(dev, st, 8);

	if (n < 0) {
		printf("load:     %s (needs root and debugfs mounted)\n", rkaccel_strerror(n));
		return;
	}
	printf("load:     core  jobs  faults  resets  busy_ms  last 1 s\n");
	for (int i = 0; i < n; i++)
		printf("          %4u  %4llu  %6llu  %6llu  %7llu  %3u.%u%%\n", st[i].core,
		       (unsigned long long)st[i].jobs, (unsigned long long)st[i].faults,
		       (unsigned long long)st[i].resets,
		       (unsigned long long)(st[i].busy_ns / 1000000),
		       st[i].load_permille / 10, st[i].load_permille % 10);
}

int main(int argc, char **argv)
{
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	const char *path = NULL;
	int ret;

	if (argc >= 2 && !strcmp(argv[1], "--model")) {
		if (argc != 3 || !argv[2][0]) {
			usage(stderr);
			return 2;
		}
		return show_model(argv[2]);
	}
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		usage(argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr);
		return argc == 2 && !strcmp(argv[1], "--help") ? 0 : 2;
	}
	if (argc == 2)
		path = argv[1];

	ret = rkaccel_open(path, &dev);
	if (ret) {
		fprintf(stderr, "rkaccel-info: %s: %s\n", path ? path : "no rkaccel device",
			rkaccel_strerror(ret));
		return 1;
	}
	ret = rkaccel_query(dev, &info);
	if (ret) {
		fprintf(stderr, "rkaccel-info: query: %s\n", rkaccel_strerror(ret));
		rkaccel_close(dev);
		return 1;
	}

	printf("device:   %s\n", rkaccel_path(dev));
	printf("driver:   rkaccel %u.%u.%u\n", info.driver_major, info.driver_minor,
	       info.driver_patch);
	printf("soc:      %s (%s)\n", info.soc_name,
	       info.backend == DRM_RKACCEL_BACKEND_SIM ? "simulated" : "silicon");
	printf("cores:    %u (mask 0x%x)\n", info.num_cores, info.core_mask);
	for (unsigned int i = 0; i < info.num_cores; i++)
		printf("  core %u: %s\n", i,
		       info.core_mask & (1u << i) ? "present" : "absent");
	printf("hardware: version 0x%08x\n", info.hw_version);
	printf("address:  %llu MiB NPU address space per open device\n",
	       (unsigned long long)(info.va_size >> 20));
	printf("limits:   %u tasks per job, %u KiB CBUF per core\n", info.max_tasks,
	       info.cbuf_size >> 10);
	print_load(dev);

	rkaccel_close(dev);
	return 0;
}
