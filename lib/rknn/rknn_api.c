// SPDX-License-Identifier: MIT
/*
 * librkaccel-rknn: the RKNN runtime calls of rknn_api.h over librkaccel.
 *
 * A context is an id (never reused) in a table, so that a destroyed one is
 * told apart from a live one. Every context of the process shares one open
 * device, opened with the first context and closed with the last: a
 * duplicate and a SHARE_WEIGHT_MEM context must be on the device of the
 * weights they share. Multi-batch is librkaccel's rkaccel_ctx_set_batch(),
 * which follows the SDK's rules (hidden duplicates, core mask 0, slices at
 * batch_index * size / batch), until rknn_set_batch_core_num() asks for
 * another number of cores: then the batch runs here, on that many batch-1
 * librkaccel contexts, each pinned to a core of its own (pin[]).
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <xf86drm.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"
#include "rknn_api.h"
#include "rknn_internal.h"

/*
 * Flags taken: besides priority, perf and weight sharing, those that ask
 * for what this layer does anyway (no GPU fallback is ever needed, the
 * process priority is never raised, the driver keeps buffers coherent).
 */
#define RKNN_KNOWN_FLAGS (RKNN_FLAG_PRIOR_MEDIUM | RKNN_FLAG_PRIOR_LOW | \
			  RKNN_FLAG_COLLECT_PERF_MASK | RKNN_FLAG_SHARE_WEIGHT_MEM | \
			  RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU | \
			  RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY | \
			  RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE | \
			  RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE)

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
struct rknn_ctx *g_ctxs;
static rknn_context g_next_id = 1;
struct rkaccel_device *g_dev;
struct rkaccel_info g_info;
unsigned int g_users;

static void log_line(char level, const char *fmt, va_list ap)
{
	fprintf(stderr, "%c RKNN: ", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void rknn_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line('E', fmt, ap);
	va_end(ap);
}

void rknn_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line('W', fmt, ap);
	va_end(ap);
}

/* librkaccel's negative errno as an RKNN_ERR_* code. */
int rknn_err(int err)
{
	switch (err) {
	case 0:
		return RKNN_SUCC;
	case -EINVAL:
		return RKNN_ERR_PARAM_INVALID;
	case -ENOMEM:
		return RKNN_ERR_MALLOC_FAIL;
	case -ETIMEDOUT:
	case -ETIME:
		return RKNN_ERR_TIMEOUT;
	case -ENODEV:
	case -ENOENT:
	case -ENXIO:
		return RKNN_ERR_DEVICE_UNAVAILABLE;
	default:
		return RKNN_ERR_FAIL;
	}
}

/* Take a reference to the shared device, opening it for the first user. */
int dev_get(void)
{
	int ret = 0;

	pthread_mutex_lock(&g_lock);
	if (!g_users) {
		ret = rkaccel_open(NULL, &g_dev);
		if (!ret) {
			ret = rkaccel_query(g_dev, &g_info);
			if (ret) {
				rkaccel_close(g_dev);
				g_dev = NULL;
			}
		}
	}
	if (!ret)
		g_users++;
	pthread_mutex_unlock(&g_lock);
	return ret;
}

void dev_put(void)
{
	pthread_mutex_lock(&g_lock);
	if (!--g_users) {
		rkaccel_close(g_dev);
		g_dev = NULL;
	}
	pthread_mutex_unlock(&g_lock);
}

/* The live context @id, locked; NULL when there is none. */
struct rknn_ctx *ctx_get(rknn_context id)
{
	struct rknn_ctx *c;

	pthread_mutex_lock(&g_lock);
	for (c = g_ctxs; c && c->id != id; c = c->next)
		;
	pthread_mutex_unlock(&g_lock);
	if (c)
		pthread_mutex_lock(&c->lock);
	return c;
}

void ctx_put(struct rknn_ctx *c)
{
	pthread_mutex_unlock(&c->lock);
}

static void ctx_free(struct rknn_ctx *c)
{
	struct rknn_out_alloc *a, *n;
	uint32_t i;

	for (a = c->allocs; a; a = n) {
		n = a->next;
		free(a->buf);
		free(a);
	}
	for (i = 1; i < c->npin; i++)
		rkaccel_ctx_destroy(c->pin[i]);
	rkaccel_ctx_destroy(c->ctx);
	free(c->in);
	free(c->out);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Size the host buffers and attributes for the context's batch. */
static int ctx_setup(struct rknn_ctx *c)
{
	int ret;

	ret = rkaccel_ctx_query_tensor(c->ctx, RKACCEL_BUF_INPUT, &c->in_attr);
	if (!ret)
		ret = rkaccel_ctx_query_tensor(c->ctx, RKACCEL_BUF_OUTPUT, &c->out_attr);
	if (ret)
		return ret;
	c->rows = c->in_attr.dims[1];
	c->out_rows = c->out_attr.dims[1];	/* fewer than rows after pooling or strides */
	c->in_features = c->in_attr.dims[2];
	c->out_features = c->out_attr.dims[2];
	c->out_bytes = c->out_attr.type == RKACCEL_TENSOR_INT32 ? 4 : 1;
	c->in = calloc(1, c->in_attr.size);
	c->out = calloc(1, c->out_attr.size);
	if (!c->in || !c->out)
		return -ENOMEM;
	return 0;
}

/* Register @c under a new id and store the id in *@context. */
static void ctx_publish(struct rknn_ctx *c, rknn_context *context)
{
	pthread_mutex_lock(&g_lock);
	c->id = g_next_id++;
	c->next = g_ctxs;
	g_ctxs = c;
	pthread_mutex_unlock(&g_lock);
	*context = c->id;
}

static struct rknn_ctx *ctx_alloc(void)
{
	struct rknn_ctx *c = calloc(1, sizeof(*c));

	if (c)
		pthread_mutex_init(&c->lock, NULL);
	return c;
}

/* "RKNN" opens the closed format's files. */
static int is_rknn_file(const void *buf, size_t len)
{
	return len >= 4 && !memcmp(buf, "RKNN", 4);
}

/* Whether the image starts as a model file of major version 3 (a graph). */
static int is_graph_file(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	return len >= 6 && !memcmp(p, "RKML", 4) && (p[4] | p[5] << 8) == 3;
}

/* The graph's input and output names and shapes, for the queries. */
static void graph_info(const struct rkaccel_graph_desc *d, struct rknn_file_info *info)
{
	const uint32_t t[2] = { d->inputs[0].tensor, d->outputs[0] };

	info->graph = 1;
	info->batch = d->batch;
	snprintf(info->custom, sizeof(info->custom), "%s", d->custom ? d->custom : "");
	for (int k = 0; k < 2; k++) {
		const struct rkaccel_graph_tensor *x = &d->tensors[t[k]];

		snprintf(info->io[k].name, sizeof(info->io[k].name), "%s", x->name);
		info->io[k].n_dims = x->n_dims;
		memcpy(info->io[k].dims, x->dims, sizeof(x->dims));
	}
}

/* A 3.0 graph lowered to the chain the compiler takes; its batch and names kept. */
static int lower_graph(struct rkaccel_graph *g, struct rkaccel_model **m,
		       struct rknn_file_info *info, char *msg, size_t msg_len)
{
	const struct rkaccel_graph_desc *d = rkaccel_graph_desc(g);
	int ret = rkaccel_graph_to_model(d, m, msg, msg_len);

	if (!ret) {
		graph_info(d, info);
		info->has_out_op = !rkaccel_model_output_op(*m, &info->out_op);
	}
	rkaccel_graph_free(g);
	return ret;
}

static int load_graph(void *model, uint32_t size, struct rkaccel_model **m,
		      struct rknn_file_info *info, char *msg, size_t msg_len)
{
	struct rkaccel_graph *g;
	int ret;

	if (size)
		ret = rkaccel_graph_parse(model, size, &g, msg, msg_len);
	else
		ret = rkaccel_graph_load(model, &g, msg, msg_len);
	return ret ? ret : lower_graph(g, m, info, msg, msg_len);
}

static int load_model(void *model, uint32_t size, struct rkaccel_model **m,
		      struct rknn_file_info *info)
{
	char msg[512] = "";
	int ret, graph = 0;

	if (!size) {
		const char *path = model;
		size_t n = strlen(path);
		/* Without blocking: a FIFO is left to rkaccel_model_load() to refuse. */
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		int rknn = n >= 5 && !strcmp(path + n - 5, ".rknn");
		struct stat st;
		char magic[6];

		if (fd >= 0) {
			ssize_t got = !fstat(fd, &st) && S_ISREG(st.st_mode) ?
				      read(fd, magic, 6) : 0;

			rknn |= got >= 4 && is_rknn_file(magic, 4);
			graph = got == 6 && is_graph_file(magic, 6);
			close(fd);
		}
		if (rknn) {
			rknn_log("%s: an .rknn model: the closed RKNN format cannot be read "
				 "here; use a model file of rkaccel-mkmodel (Documentation/rknn.rst)",
				 path);
			return RKNN_ERR_MODEL_INVALID;
		}
		ret = graph ? load_graph(model, 0, m, info, msg, sizeof(msg)) :
			      rkaccel_model_load(path, m, msg, sizeof(msg));
	} else {
		if (is_rknn_file(model, size)) {
			rknn_log("an .rknn model: the closed RKNN format cannot be read here; "
				 "use a model file of rkaccel-mkmodel (Documentation/rknn.rst)");
			return RKNN_ERR_MODEL_INVALID;
		}
		graph = is_graph_file(model, size);
		ret = graph ? load_graph(model, size, m, info, msg, sizeof(msg)) :
			      rkaccel_model_parse(model, size, m, msg, sizeof(msg));
	}
	if (ret) {
		rknn_log("invalid model: %s", msg[0] ? msg : rkaccel_strerror(ret));
		return ret == -ENOMEM ? RKNN_ERR_MALLOC_FAIL : RKNN_ERR_MODEL_INVALID;
	}
	return RKNN_SUCC;
}

static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* Bytes of layer @l's weights: none for pools and concats. */
static size_t layer_weight_bytes(const struct rkaccel_layer_desc *l)
{
	size_t taps = (size_t)(l->kernel_w ? l->kernel_w : 1) * (l->kernel_h ? l->kernel_h : 1);

	switch (l->op) {
	case RKACCEL_OP_FC:
		return (size_t)l->out_features * l->in_features;
	case RKACCEL_OP_CONV:
		return (size_t)l->out_features * taps * l->in_features;
	case RKACCEL_OP_DWCONV:
		return (size_t)l->out_features * taps;
	default:
		return 0;
	}
}

/*
 * FNV-1a over what defines a model: its rows and shape, each layer's fields,
 * arrays and the tensors it reads (a lowered graph's links). The same model,
 * the same hash, whatever file it came from.
 */
static int model_hash(const struct rkaccel_model *m, uint64_t *hash)
{
	const struct rkaccel_model_desc *d = rkaccel_model_desc(m);
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t head[4] = { d->rows, d->num_layers, d->height, d->width };

	h = fnv(h, head, sizeof(head));
	for (uint32_t i = 0; i < d->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];
		size_t wb = layer_weight_bytes(l);
		uint32_t f[17] = { l->in_features, l->out_features, l->flags,
				   (uint32_t)l->in_zero_point, (uint32_t)l->out_zero_point,
				   0, 0, 0, l->op, l->kernel_w, l->kernel_h, l->stride,
				   l->pad_top, l->pad_left, l->pad_bottom, l->pad_right,
				   l->add_input };
		uint32_t links[RKACCEL_GRAPH_MAX_NODE_INPUTS];
		int n = rkaccel_model_inputs(m, i, links, RKACCEL_GRAPH_MAX_NODE_INPUTS);

		memcpy(&f[5], &l->in_scale, 4);
		memcpy(&f[6], &l->weight_scale, 4);
		memcpy(&f[7], &l->out_scale, 4);
		h = fnv(h, f, sizeof(f));
		if (n < 0)
			return -EINVAL;
		h = fnv(h, links, (size_t)n * sizeof(*links));
		if (wb && l->weights)
			h = fnv(h, l->weights, wb);
		if (wb && l->bias)
			h = fnv(h, l->bias, (size_t)l->out_features * sizeof(*l->bias));
		if (l->weight_scales)
			h = fnv(h, l->weight_scales, (size_t)l->out_features * sizeof(float));
	}
	*hash = h;
	return 0;
}

int rknn_init(rknn_context *context, void *model, uint32_t size, uint32_t flag,
	      rknn_init_extend *extend)
{
	uint32_t batch = extend && extend->rkaccel_batch_size ? extend->rkaccel_batch_size : 1;
	struct rknn_file_info info = { 0 };
	struct rkaccel_model *m = NULL;
	struct rknn_ctx *c, *share = NULL;
	int ret;

	if (flag & ~RKNN_KNOWN_FLAGS) {
		rknn_log("rknn_init: flags 0x%x not supported (Documentation/rknn.rst)",
			 flag & ~RKNN_KNOWN_FLAGS);
		return RKNN_ERR_PARAM_INVALID;
	}
	if (!context || !model || batch > RKACCEL_CTX_MAX_BATCH)
		return RKNN_ERR_PARAM_INVALID;
	if (extend && (extend->real_model_offset || extend->real_model_size ||
		       (extend->model_buffer_fd != 0 && extend->model_buffer_fd != -1) ||
		       extend->model_buffer_flags))
		return RKNN_ERR_PARAM_INVALID;
	if ((flag & RKNN_FLAG_SHARE_WEIGHT_MEM) && !extend)
		return RKNN_ERR_PARAM_INVALID;
	ret = load_model(model, size, &m, &info);
	if (ret)
		return ret;
	/* A 3.0 file carries its batch; the extension's is for older files. */
	if (info.graph && extend && extend->rkaccel_batch_size &&
	    extend->rkaccel_batch_size != info.batch) {
		rknn_log("rknn_init: rkaccel_batch_size %u, but the model file's batch is %u: "
			 "leave it 0 for a 3.0 file (Documentation/rknn.rst)",
			 extend->rkaccel_batch_size, info.batch);
		rkaccel_model_free(m);
		return RKNN_ERR_PARAM_INVALID;
	}
	if (info.graph)
		batch = info.batch;
	c = ctx_alloc();
	if (c)
		c->file = info;
	if (!c || model_hash(m, &c->model_hash)) {
		rkaccel_model_free(m);
		if (c)
			ctx_free(c);
		return RKNN_ERR_MALLOC_FAIL;
	}
	ret = dev_get();
	if (ret) {
		rknn_log("no rkaccel device: %s", rkaccel_strerror(ret));
		rkaccel_model_free(m);
		ctx_free(c);
		return RKNN_ERR_DEVICE_UNAVAILABLE;
	}
	if (flag & RKNN_FLAG_SHARE_WEIGHT_MEM) {
		share = ctx_get(extend->ctx);
		if (!share) {
			ret = RKNN_ERR_CTX_INVALID;
			goto fail;
		}
		/* The weights are the other context's: the model must be the same. */
		if (share->model_hash != c->model_hash) {
			ctx_put(share);
			ret = RKNN_ERR_MODEL_INVALID;
			goto fail;
		}
		ret = rknn_err(rkaccel_ctx_dup(share->ctx, &c->ctx));
		ctx_put(share);
	} else {
		ret = rknn_err(rkaccel_ctx_create(g_dev, m, 0, &c->ctx));
	}
	if (!ret && batch > 1)
		ret = rknn_err(rkaccel_ctx_set_batch(c->ctx, batch));
	if (!ret)
		ret = rknn_err(ctx_setup(c));
	if (ret)
		goto fail;
	rkaccel_model_free(m);
	ctx_publish(c, context);
	return RKNN_SUCC;
fail:
	rkaccel_model_free(m);
	ctx_free(c);
	dev_put();
	return ret;
}

/*
 * Run the batch of @c on @n contexts (@n <= batch), the k-th pinned to the
 * k-th core of the device: @c's own context at batch 1 and @n - 1
 * duplicates (weights shared). Returns 0 or a negative errno, with @c
 * unchanged on failure.
 */
static int ctx_pin(struct rknn_ctx *c, uint32_t n)
{
	struct rkaccel_ctx *add[RKNN_MAX_CORES] = { NULL };
	uint32_t cores[RKNN_MAX_CORES], have = c->npin ? c->npin : 1, i = 0, k;
	int ret = 0;

	for (k = 0; k < 32 && i < n; k++)
		if (g_info.core_mask & (1u << k))
			cores[i++] = k;
	if (i < n)
		return -EINVAL;
	/* The new duplicates first: failing there changes nothing. */
	for (k = have; k < n && !ret; k++) {
		ret = rkaccel_ctx_dup(c->ctx, &add[k]);
		if (!ret)
			ret = rkaccel_ctx_set_core_mask(add[k], 1u << cores[k]);
	}
	if (!ret && !c->npin) {
		/* Drop librkaccel's hidden duplicates; pin the context itself. */
		ret = rkaccel_ctx_set_batch(c->ctx, 1);
		if (!ret) {
			ret = rkaccel_ctx_set_core_mask(c->ctx, 1u << cores[0]);
			if (ret)
				rkaccel_ctx_set_batch(c->ctx, c->in_attr.dims[0]);
		}
	}
	if (ret) {
		for (k = have; k < n; k++)
			rkaccel_ctx_destroy(add[k]);
		return ret;
	}
	for (k = n; k < c->npin; k++) {
		rkaccel_ctx_destroy(c->pin[k]);
		c->pin[k] = NULL;
	}
	for (k = have; k < n; k++)
		c->pin[k] = add[k];
	c->pin[0] = c->ctx;
	c->npin = n;
	return 0;
}

/* Apply @core_num (valid) to @c: pinned contexts for a batch above 1. */
static int ctx_set_core_num(struct rknn_ctx *c, uint32_t core_num)
{
	uint32_t batch = c->in_attr.dims[0];
	int ret = 0;

	if (batch > 1)
		ret = ctx_pin(c, core_num < batch ? core_num : batch);
	if (!ret)
		c->core_num = core_num;
	return ret;
}

int rknn_set_batch_core_num(rknn_context context, int core_num)
{
	struct rknn_ctx *c = ctx_get(context);
	int ret;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	if (core_num < 1 || (uint32_t)core_num > g_info.num_cores ||
	    core_num > RKNN_MAX_CORES)
		ret = RKNN_ERR_PARAM_INVALID;
	else
		ret = rknn_err(ctx_set_core_num(c, (uint32_t)core_num));
	ctx_put(c);
	return ret;
}

int rknn_dup_context(rknn_context *context_in, rknn_context *context_out)
{
	struct rknn_ctx *src, *c;
	uint32_t core_num;
	int ret;

	if (!context_in || !context_out)
		return RKNN_ERR_PARAM_INVALID;
	src = ctx_get(*context_in);
	if (!src)
		return RKNN_ERR_CTX_INVALID;
	c = ctx_alloc();
	if (!c) {
		ctx_put(src);
		return RKNN_ERR_MALLOC_FAIL;
	}
	c->model_hash = src->model_hash;
	c->file = src->file;
	dev_get();	/* cannot fail: src holds the device open */
	ret = rknn_err(rkaccel_ctx_dup(src->ctx, &c->ctx));
	if (!ret && src->in_attr.dims[0] > 1)
		ret = rknn_err(rkaccel_ctx_set_batch(c->ctx, src->in_attr.dims[0]));
	core_num = src->core_num;
	ctx_put(src);
	if (!ret)
		ret = rknn_err(ctx_setup(c));
	/* The copy runs its batch on as many cores as the original. */
	if (!ret && core_num)
		ret = rknn_err(ctx_set_core_num(c, core_num));
	if (ret) {
		ctx_free(c);
		dev_put();
		return ret;
	}
	ctx_publish(c, context_out);
	return RKNN_SUCC;
}

int rknn_destroy(rknn_context context)
{
	struct rknn_ctx **pp, *c = NULL;

	pthread_mutex_lock(&g_lock);
	for (pp = &g_ctxs; *pp; pp = &(*pp)->next) {
		if ((*pp)->id == context) {
			c = *pp;
			*pp = c->next;
			break;
		}
	}
	pthread_mutex_unlock(&g_lock);
	if (!c)
		return RKNN_ERR_CTX_INVALID;
	/* Wait for a call under way on another thread, then free. */
	pthread_mutex_lock(&c->lock);
	pthread_mutex_unlock(&c->lock);
	ctx_free(c);
	dev_put();
	return RKNN_SUCC;
}

/*
 * A 3.0 file's tensor as the file shapes it: NHWC (or [N, C]) with dims[0]
 * the context's batch, the whole batch's elements and bytes.
 */
static void file_attr(const struct rknn_file_tensor *f, const struct rkaccel_tensor_attr *t,
		      rknn_tensor_attr *a)
{
	a->n_dims = f->n_dims;
	a->n_elems = 1;
	for (uint32_t k = 0; k < f->n_dims; k++) {
		a->dims[k] = k ? f->dims[k] : t->dims[0];
		a->n_elems *= a->dims[k];
	}
	a->fmt = f->n_dims == 4 ? RKNN_TENSOR_NHWC : RKNN_TENSOR_UNDEFINED;
	if (f->n_dims == 4)
		a->w_stride = f->dims[2];
	a->size = (uint32_t)t->size;
	a->size_with_stride = a->size;
}

/* The output of a CPU op after the NPU (softmax, dequantize): float32, not quantized. */
static void float_attr(const struct rknn_ctx *c, rknn_tensor_attr *a)
{
	a->type = RKNN_TENSOR_FLOAT32;
	a->qnt_type = RKNN_TENSOR_QNT_NONE;
	a->zp = 0;
	a->scale = 1.0f;
	a->size = (uint32_t)(c->out_attr.size / c->out_bytes * sizeof(float));
	a->size_with_stride = a->size;
}

void fill_attr(const struct rknn_ctx *c, int output, int native, rknn_tensor_attr *a)
{
	const struct rkaccel_tensor_attr *t = output ? &c->out_attr : &c->in_attr;
	uint32_t elem = output ? c->out_bytes : 1;

	memset(a, 0, sizeof(*a));
	a->index = 0;
	snprintf(a->name, sizeof(a->name), "%s",
		 c->file.graph ? c->file.io[output].name : output ? "output" : "input");
	a->type = t->type == RKACCEL_TENSOR_INT32 ? RKNN_TENSOR_INT32 : RKNN_TENSOR_INT8;
	a->qnt_type = RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC;
	a->zp = t->zero_point;
	a->scale = t->scale;
	if (!native && c->file.graph) {
		file_attr(&c->file.io[output], t, a);
		if (output && c->file.has_out_op)
			float_attr(c, a);
		return;
	}
	if (!native) {
		a->n_dims = 3;
		a->dims[0] = t->dims[0];
		a->dims[1] = t->dims[1];
		a->dims[2] = t->dims[2];
		a->n_elems = t->dims[0] * t->dims[1] * t->dims[2];
		a->size = (uint32_t)t->size;
		a->size_with_stride = a->size;
		a->fmt = RKNN_TENSOR_UNDEFINED;
		return;
	}
	/* Planes of 16-byte atoms, rows padded to 4: { batch, C1, H, 1, C2 }. */
	a->fmt = RKNN_TENSOR_NC1HWC2;
	a->n_dims = 5;
	a->dims[0] = t->dims[0];
	a->h_stride = (t->dims[1] + 3) & ~3u;
	a->dims[2] = t->dims[1];
	a->dims[3] = 1;
	a->dims[4] = 16 / elem;
	a->dims[1] = (uint32_t)(rkaccel_native_size(t->dims[1], t->dims[2], elem) /
				((size_t)a->h_stride * 16));
	a->w_stride = 1;
	a->n_elems = a->dims[0] * a->dims[1] * a->h_stride * a->dims[4];
	a->size = (uint32_t)t->native_size;
	a->size_with_stride = a->size;
	a->pass_through = 1;
}

/* BO size of @handle from DRM_IOCTL_RKACCEL_BO_INFO, 0 when none. */
static uint64_t bo_bytes(uint32_t handle)
{
	struct drm_rkaccel_bo_info bi = { .handle = handle };

	if (!handle || drmIoctl(rkaccel_fd(g_dev), DRM_IOCTL_RKACCEL_BO_INFO, &bi))
		return 0;
	return bi.size;
}

static int query_is_output(rknn_query_cmd cmd)
{
	return cmd == RKNN_QUERY_OUTPUT_ATTR || cmd == RKNN_QUERY_NATIVE_OUTPUT_ATTR ||
	       cmd == RKNN_QUERY_CURRENT_OUTPUT_ATTR ||
	       cmd == RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR;
}

static int query_is_native(rknn_query_cmd cmd)
{
	return cmd == RKNN_QUERY_NATIVE_INPUT_ATTR || cmd == RKNN_QUERY_NATIVE_OUTPUT_ATTR ||
	       cmd == RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR ||
	       cmd == RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR;
}

/* A 3.0 file's custom string; 1.x/2.x files carry none: "", as the SDK gives for none. */
static int query_custom_string(const struct rknn_ctx *c, rknn_custom_string *s, uint32_t size)
{
	if (size < sizeof(*s))
		return RKNN_ERR_PARAM_INVALID;
	memset(s, 0, sizeof(*s));
	memcpy(s->string, c->file.custom, sizeof(s->string) - 1);
	return RKNN_SUCC;
}

/* Only dynamic-shape models have ranges; the SDK refuses a static one so. */
static int query_dynamic_range(rknn_input_range *r, uint32_t size)
{
	if (size < sizeof(*r))
		return RKNN_ERR_PARAM_INVALID;
	rknn_warn("rknn_query: RKNN_QUERY_INPUT_DYNAMIC_RANGE: the model has static shapes");
	return RKNN_ERR_MODEL_INVALID;
}

int rknn_query(rknn_context context, rknn_query_cmd cmd, void *info, uint32_t size)
{
	struct rknn_ctx *c = ctx_get(context);
	int ret = RKNN_SUCC;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	if (!info) {
		ret = RKNN_ERR_PARAM_INVALID;
		goto out;
	}
	switch (cmd) {
	case RKNN_QUERY_IN_OUT_NUM: {
		rknn_input_output_num *n = info;

		if (size < sizeof(*n)) {
			ret = RKNN_ERR_PARAM_INVALID;
			break;
		}
		n->n_input = 1;
		n->n_output = 1;
		break;
	}
	case RKNN_QUERY_INPUT_ATTR:
	case RKNN_QUERY_OUTPUT_ATTR:
	case RKNN_QUERY_NATIVE_INPUT_ATTR:
	case RKNN_QUERY_NATIVE_OUTPUT_ATTR:
	/* Static shapes: the current ones are the only ones. */
	case RKNN_QUERY_CURRENT_INPUT_ATTR:
	case RKNN_QUERY_CURRENT_OUTPUT_ATTR:
	case RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR:
	case RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR: {
		rknn_tensor_attr *a = info;

		if (size < sizeof(*a) || a->index != 0) {
			ret = RKNN_ERR_PARAM_INVALID;
			break;
		}
		fill_attr(c, query_is_output(cmd), query_is_native(cmd), a);
		break;
	}
	case RKNN_QUERY_CUSTOM_STRING:
		ret = query_custom_string(c, info, size);
		break;
	case RKNN_QUERY_INPUT_DYNAMIC_RANGE:
		ret = query_dynamic_range(info, size);
		break;
	case RKNN_QUERY_PERF_RUN: {
		rknn_perf_run *p = info;

		if (size < sizeof(*p)) {
			ret = RKNN_ERR_PARAM_INVALID;
			break;
		}
		p->run_duration = c->last_us;
		break;
	}
	case RKNN_QUERY_SDK_VERSION: {
		rknn_sdk_version *v = info;
		uint32_t lv = rkaccel_lib_version();

		if (size < sizeof(*v)) {
			ret = RKNN_ERR_PARAM_INVALID;
			break;
		}
		snprintf(v->api_version, sizeof(v->api_version),
			 "rkaccel-rknn %s (librkaccel %u.%u.%u)", RKACCEL_RKNN_VERSION,
			 lv >> 16, (lv >> 8) & 0xff, lv & 0xff);
		snprintf(v->drv_version, sizeof(v->drv_version), "rkaccel %u.%u.%u %s%s",
			 g_info.driver_major, g_info.driver_minor, g_info.driver_patch,
			 g_info.soc_name,
			 g_info.backend == DRM_RKACCEL_BACKEND_SIM ? " (simulated)" : "");
		break;
	}
	case RKNN_QUERY_MEM_SIZE: {
		rknn_mem_size *m = info;
		uint64_t w, total = 0;
		int b;

		if (size < sizeof(*m)) {
			ret = RKNN_ERR_PARAM_INVALID;
			break;
		}
		memset(m, 0, sizeof(*m));
		w = bo_bytes(rkaccel_ctx_bo_handle(c->ctx, RKACCEL_BUF_WEIGHTS));
		m->total_weight_size = (uint32_t)w;
		m->total_internal_size =
			(uint32_t)bo_bytes(rkaccel_ctx_bo_handle(c->ctx, RKACCEL_BUF_INTERNAL));
		for (b = 0; b < RKACCEL_BUF_COUNT; b++)
			total += bo_bytes(rkaccel_ctx_bo_handle(c->ctx, b));
		m->total_dma_allocated_size = total;
		break;
	}
	default:
		rknn_log("rknn_query: command %d not supported (Documentation/rknn.rst)", (int)cmd);
		ret = RKNN_ERR_PARAM_INVALID;
		break;
	}
out:
	ctx_put(c);
	return ret;
}

/* c->in given as NCHW for a 3.0 file's NHWC input: reorder each slice. */
static int nchw_to_nhwc(struct rknn_ctx *c)
{
	const uint32_t *d = c->file.io[0].dims;
	size_t hw = (size_t)d[1] * d[2], slice = hw * d[3];
	int8_t *tmp = malloc(slice);

	if (!tmp)
		return RKNN_ERR_MALLOC_FAIL;
	for (uint32_t b = 0; b < c->in_attr.dims[0]; b++) {
		int8_t *x = c->in + b * slice;

		for (size_t p = 0; p < hw; p++)
			for (uint32_t ch = 0; ch < d[3]; ch++)
				tmp[p * d[3] + ch] = x[ch * hw + p];
		memcpy(x, tmp, slice);
	}
	free(tmp);
	return RKNN_SUCC;
}

/* Whether @in's layout is the model's (no NCHW reorder of a 3.0 file's input). */
static int in_layout_kept(const struct rknn_ctx *c, const rknn_input *in)
{
	return in->fmt != RKNN_TENSOR_NCHW || !c->file.graph || c->file.io[0].n_dims != 4;
}

/*
 * One input into c->in, converted to the model's int8; UINT8 pixels in
 * the model's layout are kept as they are (c->in_u8) and quantized while
 * each slice is laid out on its own thread (rkaccel_ctx_run_u8()).
 */
int set_input(struct rknn_ctx *c, const rknn_input *in)
{
	size_t n = c->in_attr.size;
	size_t bytes = in->type == RKNN_TENSOR_FLOAT32 && !in->pass_through ? n * sizeof(float) : n;
	float scale = c->in_attr.scale;
	int32_t zp = c->in_attr.zero_point;

	if (in->index != 0)
		return RKNN_ERR_PARAM_INVALID;
	if (!in->buf)
		return RKNN_ERR_INPUT_INVALID;
	if (in->fmt != RKNN_TENSOR_NCHW && in->fmt != RKNN_TENSOR_NHWC &&
	    in->fmt != RKNN_TENSOR_UNDEFINED)
		return RKNN_ERR_INPUT_INVALID;
	if (!in->pass_through && in->type != RKNN_TENSOR_INT8 && in->type != RKNN_TENSOR_UINT8 &&
	    in->type != RKNN_TENSOR_FLOAT32)
		return RKNN_ERR_INPUT_INVALID;
	if (in->size != bytes)
		return RKNN_ERR_INPUT_INVALID;
	/* checked: c->in and how it is read change together from here */
	c->in_u8 = !in->pass_through && in->type == RKNN_TENSOR_UINT8 && in_layout_kept(c, in);
	if (in->pass_through || c->in_u8) {
		memcpy(c->in, in->buf, n);
		return RKNN_SUCC;
	}
	if (in->type == RKNN_TENSOR_INT8)
		memcpy(c->in, in->buf, n);
	else if (in->type == RKNN_TENSOR_UINT8)
		rkaccel_quantize_u8(in->buf, n, scale, zp, c->in);
	else
		rkaccel_quantize(in->buf, n, scale, zp, c->in);
	return in_layout_kept(c, in) ? RKNN_SUCC : nchw_to_nhwc(c);
}

int rknn_inputs_set(rknn_context context, uint32_t n_inputs, rknn_input inputs[])
{
	struct rknn_ctx *c = ctx_get(context);
	int ret;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	if (!inputs || n_inputs != 1)
		ret = RKNN_ERR_PARAM_INVALID;
	else
		ret = set_input(c, &inputs[0]);
	if (!ret)
		c->in_set = 1;
	ctx_put(c);
	return ret;
}

int rknn_set_core_mask(rknn_context context, rknn_core_mask core_mask)
{
	struct rknn_ctx *c = ctx_get(context);
	uint32_t mask = (uint32_t)core_mask;
	int ret;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	if (mask == RKNN_NPU_CORE_ALL)
		mask = g_info.core_mask;
	if (mask & ~g_info.core_mask || c->in_attr.dims[0] > 1)
		ret = RKNN_ERR_PARAM_INVALID;
	else
		ret = rknn_err(rkaccel_ctx_set_core_mask(c->ctx, mask));
	ctx_put(c);
	return ret;
}

/* rkaccel_ctx_run() of c->in's @is bytes at @in on @p, or of its pixels. */
static int run_rowmajor(struct rknn_ctx *c, struct rkaccel_ctx *p, const int8_t *in, size_t is,
			void *out, size_t os)
{
	if (c->in_u8)
		return rkaccel_ctx_run_u8(p, (const uint8_t *)in, is, c->in_attr.scale,
					  c->in_attr.zero_point, out, os);
	return rkaccel_ctx_run(p, in, is, out, os);
}

struct pin_job {
	struct rknn_ctx *c;
	uint32_t k;
	int ret;
};

/*
 * Slice @i on pinned context @p: bound memory is rebound at the slice's
 * native offset first (the pinned contexts have batch 1).
 */
static int pin_slice(struct rknn_ctx *c, struct rkaccel_ctx *p, uint32_t i)
{
	uint32_t b = c->in_attr.dims[0];
	size_t is = c->in_attr.size / b, os = c->out_attr.size / b;
	size_t ins = c->in_attr.native_size / b, ons = c->out_attr.native_size / b;
	uint8_t *out = (uint8_t *)c->out + i * os;
	int ret = 0;

	if (c->bound[0])
		ret = rkaccel_ctx_set_io_mem(p, RKACCEL_BUF_INPUT, mem_of(c->bound[0]),
					     c->bound_off[0] + i * ins);
	if (!ret && c->bound[1])
		ret = rkaccel_ctx_set_io_mem(p, RKACCEL_BUF_OUTPUT, mem_of(c->bound[1]),
					     c->bound_off[1] + i * ons);
	if (ret)
		return ret;
	if (!c->bound[0])
		return run_rowmajor(c, p, c->in + i * is, is, out, os);
	ret = rkaccel_ctx_run_native(p);
	if (!ret && !c->bound[1])
		ret = rkaccel_from_native(rkaccel_ctx_io_ptr(p, RKACCEL_BUF_OUTPUT, 0), ons,
					  c->out_rows, c->out_features, c->out_bytes, out);
	return ret;
}

/* Slices k, k + npin, ... of the batch on pinned context k. */
static void *pin_run(void *arg)
{
	struct pin_job *j = arg;
	struct rknn_ctx *c = j->c;
	uint32_t b = c->in_attr.dims[0], i;

	for (i = j->k; i < b && !j->ret; i += c->npin)
		j->ret = pin_slice(c, c->pin[j->k], i);
	return NULL;
}

/* The batch on the pinned contexts, one thread each, all at once. */
static int run_pinned(struct rknn_ctx *c)
{
	struct pin_job jobs[RKNN_MAX_CORES];
	pthread_t th[RKNN_MAX_CORES];
	int started[RKNN_MAX_CORES] = { 0 }, ret = 0;
	uint32_t k;

	for (k = 0; k < c->npin; k++) {
		jobs[k].c = c;
		jobs[k].k = k;
		jobs[k].ret = 0;
	}
	for (k = 1; k < c->npin; k++)
		started[k] = !pthread_create(&th[k], NULL, pin_run, &jobs[k]);
	pin_run(&jobs[0]);
	for (k = 1; k < c->npin; k++) {
		if (started[k])
			pthread_join(th[k], NULL);
		else
			pin_run(&jobs[k]);	/* no thread: its slices, after the others */
	}
	for (k = 0; k < c->npin && !ret; k++)
		ret = jobs[k].ret;
	return ret;
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int rknn_run(rknn_context context, rknn_run_extend *extend)
{
	struct rknn_ctx *c = ctx_get(context);
	int64_t t0;
	int ret;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	if (extend && extend->non_block) {
		ret = RKNN_ERR_PARAM_INVALID;
		goto out;
	}
	if (!c->in_set && !c->bound[0] && !c->conv[0]) {
		ret = RKNN_ERR_INPUT_INVALID;
		goto out;
	}
	t0 = now_us();
	if (c->conv[0]) {
		ret = io_mem_input(c);
		if (ret)
			goto out;
	}
	if (c->npin)
		ret = rknn_err(run_pinned(c));
	else if (c->bound[0])
		ret = rknn_err(rkaccel_ctx_run_native(c->ctx));
	else
		ret = rknn_err(run_rowmajor(c, c->ctx, c->in, c->in_attr.size, c->out,
					    c->out_attr.size));
	if (!ret && !c->npin && c->bound[0] && !c->bound[1]) {
		/* Output left in the contexts' own buffers: gather it. */
		uint32_t i, b = c->in_attr.dims[0];
		size_t os = c->out_attr.size / b, ns = c->out_attr.native_size / b;

		for (i = 0; i < b && !ret; i++)
			ret = rknn_err(rkaccel_from_native(
				rkaccel_ctx_io_ptr(c->ctx, RKACCEL_BUF_OUTPUT, i), ns, c->out_rows,
				c->out_features, c->out_bytes, (uint8_t *)c->out + i * os));
	}
	c->out_valid = !ret && !(c->bound[0] && c->bound[1]);
	if (c->out_valid && c->conv[1])
		ret = io_mem_output(c);
	if (!ret) {
		c->last_us = now_us() - t0;
		c->frames++;
		if (extend)
			extend->frame_id = c->frames;
	}
out:
	ctx_put(c);
	return ret;
}

/* One output of the last run into @o. */
int get_output(struct rknn_ctx *c, rknn_output *o)
{
	size_t n = c->out_attr.size / c->out_bytes, i;
	int floats = o->want_float || c->file.has_out_op;	/* a CPU op gives floats only */
	size_t need = floats ? n * sizeof(float) : c->out_attr.size;
	struct rknn_out_alloc *a = NULL;
	void *dst;

	if (o->index != 0)
		return RKNN_ERR_PARAM_INVALID;
	if (o->is_prealloc) {
		if (!o->buf || o->size < need)
			return RKNN_ERR_OUTPUT_INVALID;
		dst = o->buf;
	} else {
		a = malloc(sizeof(*a));
		dst = malloc(need);
		if (!a || !dst) {
			free(a);
			free(dst);
			return RKNN_ERR_MALLOC_FAIL;
		}
	}
	if (c->file.has_out_op) {
		rkaccel_output_op_run(&c->file.out_op, c->out, c->out_attr.dims[0], dst);
	} else if (!o->want_float) {
		memcpy(dst, c->out, need);
	} else if (c->out_bytes == 1) {
		rkaccel_dequantize(c->out, n, c->out_attr.scale, c->out_attr.zero_point, dst);
	} else {
		const int32_t *q = c->out;
		float *f = dst;

		for (i = 0; i < n; i++)
			f[i] = (float)q[i] * c->out_attr.scale;
	}
	if (a) {
		a->buf = dst;
		a->next = c->allocs;
		c->allocs = a;
		o->buf = dst;
		o->size = (uint32_t)need;
	}
	return RKNN_SUCC;
}

int rknn_outputs_get(rknn_context context, uint32_t n_outputs, rknn_output outputs[],
		     rknn_output_extend *extend)
{
	struct rknn_ctx *c = ctx_get(context);
	int ret;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	if (!outputs || n_outputs != 1)
		ret = RKNN_ERR_PARAM_INVALID;
	else if (!c->out_valid)
		ret = RKNN_ERR_OUTPUT_INVALID;	/* no run, a failed one, or all zero-copy */
	else
		ret = get_output(c, &outputs[0]);
	if (!ret && extend)
		extend->frame_id = c->frames;
	ctx_put(c);
	return ret;
}

int rknn_outputs_release(rknn_context context, uint32_t n_ouputs, rknn_output outputs[])
{
	struct rknn_ctx *c = ctx_get(context);
	struct rknn_out_alloc **pp, *a;
	uint32_t i;
	int ret = RKNN_SUCC;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	if (!outputs || n_ouputs != 1) {
		ret = RKNN_ERR_PARAM_INVALID;
		goto out;
	}
	for (i = 0; i < n_ouputs; i++) {
		if (outputs[i].is_prealloc || !outputs[i].buf)
			continue;
		for (pp = &c->allocs; *pp && (*pp)->buf != outputs[i].buf; pp = &(*pp)->next)
			;
		if (!*pp) {
			ret = RKNN_ERR_PARAM_INVALID;	/* not ours, or released twice */
			continue;
		}
		a = *pp;
		*pp = a->next;
		free(a->buf);
		free(a);
		outputs[i].buf = NULL;
	}
out:
	ctx_put(c);
	return ret;
}
