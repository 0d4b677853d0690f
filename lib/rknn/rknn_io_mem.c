// SPDX-License-Identifier: MIT
/*
 * rknn_set_io_mem(): caller memory bound as a context's input or output.
 * Two kinds, told apart by the attribute's format, as the SDK does:
 *  - native (NC1HWC2, the NATIVE_*_ATTR queries unchanged): the device
 *    reads and writes the memory itself, zero copy;
 *  - converted (the ordinary attributes, or native ones whose type or
 *    format the caller changed: UINT8 NHWC pixels in, FLOAT32 out, as the
 *    SDK's create-mem demo binds them): each rknn_run() converts the input
 *    from the memory as rknn_inputs_set() would, and the output into it as
 *    rknn_outputs_get() would, so the memory holds what the attribute says.
 * Binding one kind replaces the other for that tensor.
 */

#include <stdlib.h>
#include <string.h>

#include "rknn_internal.h"

static size_t type_bytes(rknn_tensor_type t)
{
	switch (t) {
	case RKNN_TENSOR_INT8:
	case RKNN_TENSOR_UINT8:
		return 1;
	case RKNN_TENSOR_INT32:
	case RKNN_TENSOR_FLOAT32:
		return 4;
	default:
		return 0;
	}
}

/* Elements of the whole batch of the input (@out 0) or output. */
static size_t tensor_elems(const struct rknn_ctx *c, int out)
{
	return out ? c->out_attr.size / c->out_bytes : c->in_attr.size;
}

/* Whether @a's type and format can be converted to or from the model's. */
static int converted_ok(const struct rknn_ctx *c, int out, const rknn_tensor_attr *a)
{
	rknn_tensor_type own = c->out_bytes == 4 ? RKNN_TENSOR_INT32 : RKNN_TENSOR_INT8;

	if (a->fmt != RKNN_TENSOR_NHWC && a->fmt != RKNN_TENSOR_NCHW &&
	    a->fmt != RKNN_TENSOR_UNDEFINED)
		return 0;
	if (!out)
		return a->type == RKNN_TENSOR_INT8 || a->type == RKNN_TENSOR_UINT8 ||
		       a->type == RKNN_TENSOR_FLOAT32;
	/* a CPU op after the NPU gives floats only */
	return a->type == RKNN_TENSOR_FLOAT32 || (a->type == own && !c->file.has_out_op);
}

/* Drop a native binding of the context and its pinned contexts. */
static int unbind_native(struct rknn_ctx *c, int out)
{
	enum rkaccel_buffer buf = out ? RKACCEL_BUF_OUTPUT : RKACCEL_BUF_INPUT;
	int ret = 0;

	for (uint32_t k = 0; !ret && k < (c->npin ? c->npin : 1); k++)
		ret = rknn_err(rkaccel_ctx_set_io_mem(k ? c->pin[k] : c->ctx, buf, NULL, 0));
	if (!ret) {
		c->bound[out] = NULL;
		c->bound_off[out] = 0;
	}
	return ret;
}

static int bind_native(struct rknn_ctx *c, int out, rknn_tensor_mem *mem,
		       const rknn_tensor_attr *attr)
{
	enum rkaccel_buffer buf = out ? RKACCEL_BUF_OUTPUT : RKACCEL_BUF_INPUT;
	rknn_tensor_attr want;
	int ret;

	fill_attr(c, out, 1, &want);
	if (attr->size_with_stride != want.size_with_stride ||
	    (mem && (uint64_t)mem->offset + want.size_with_stride > rkaccel_mem_size(mem_of(mem))))
		return RKNN_ERR_PARAM_INVALID;
	ret = rknn_err(rkaccel_ctx_set_io_mem(c->ctx, buf, mem ? mem_of(mem) : NULL,
					      mem ? (size_t)mem->offset : 0));
	/*
	 * The other pinned contexts (rknn_set_batch_core_num()) are bound slice
	 * by slice when the batch runs; they let go of the old memory now, which
	 * may be destroyed once unbound here.
	 */
	for (uint32_t k = 1; !ret && k < c->npin; k++)
		ret = rknn_err(rkaccel_ctx_set_io_mem(c->pin[k], buf, NULL, 0));
	if (ret)
		return ret;
	c->bound[out] = mem;
	c->bound_off[out] = mem ? (size_t)mem->offset : 0;
	c->conv[out] = NULL;
	return RKNN_SUCC;
}

static int bind_converted(struct rknn_ctx *c, int out, rknn_tensor_mem *mem,
			  const rknn_tensor_attr *attr)
{
	size_t bytes = tensor_elems(c, out) * type_bytes(attr->type);
	int ret;

	if (!converted_ok(c, out, attr)) {
		rknn_log("rknn_set_io_mem: %s type %s format %s: not converted here (input: "
			 "INT8, UINT8 or FLOAT32; output: FLOAT32 or the model's type; NHWC, "
			 "NCHW or UNDEFINED)", out ? "output" : "input",
			 get_type_string(attr->type), get_format_string(attr->fmt));
		return RKNN_ERR_PARAM_INVALID;
	}
	if (mem && (uint64_t)mem->offset + bytes > rkaccel_mem_size(mem_of(mem))) {
		rknn_log("rknn_set_io_mem: %s needs %zu bytes at offset %d", out ? "output" : "input",
			 bytes, mem->offset);
		return RKNN_ERR_PARAM_INVALID;
	}
	if (c->bound[out]) {
		ret = unbind_native(c, out);
		if (ret)
			return ret;
	}
	c->conv[out] = mem;
	c->conv_off[out] = mem ? (size_t)mem->offset : 0;
	c->conv_type[out] = attr->type;
	c->conv_fmt[out] = attr->fmt;
	c->conv_pass[out] = attr->pass_through;
	return RKNN_SUCC;
}

int rknn_set_io_mem(rknn_context ctx, rknn_tensor_mem *mem, rknn_tensor_attr *attr)
{
	struct rknn_ctx *c = ctx_get(ctx);
	rknn_tensor_attr want, native;
	int out, ret;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	if (!attr || attr->index != 0 || (mem && (!mem_live(mem) || mem->offset < 0))) {
		ret = RKNN_ERR_PARAM_INVALID;
		goto out;
	}
	/* Input or output: told apart by the attribute's name. */
	out = !strcmp(attr->name, c->file.graph ? c->file.io[1].name : "output");
	fill_attr(c, out, 0, &want);
	if (strcmp(attr->name, want.name)) {
		ret = RKNN_ERR_PARAM_INVALID;
		goto out;
	}
	fill_attr(c, out, 1, &native);
	if (attr->fmt == RKNN_TENSOR_NC1HWC2 && attr->type == native.type)
		ret = bind_native(c, out, mem, attr);
	else
		ret = bind_converted(c, out, mem, attr);
out:
	ctx_put(c);
	return ret;
}

static void *conv_ptr(const struct rknn_ctx *c, int out)
{
	return (uint8_t *)rkaccel_mem_ptr(mem_of(c->conv[out])) + c->conv_off[out];
}

/* The converted input's memory into the context, before a run. */
int io_mem_input(struct rknn_ctx *c)
{
	rknn_input in = {
		.index = 0,
		.buf = conv_ptr(c, 0),
		.size = (uint32_t)(tensor_elems(c, 0) * type_bytes(c->conv_type[0])),
		.pass_through = c->conv_pass[0],
		.type = c->conv_type[0],
		.fmt = c->conv_fmt[0],
	};

	return set_input(c, &in);
}

/* NHWC -> NCHW of each of @n slices of @hw pixels x @ch channels of @elem bytes. */
static int to_nchw(uint8_t *p, uint32_t n, size_t hw, size_t ch, size_t elem)
{
	size_t slice = hw * ch * elem;
	uint8_t *tmp = malloc(slice);

	if (!tmp)
		return RKNN_ERR_MALLOC_FAIL;
	for (uint32_t b = 0; b < n; b++, p += slice) {
		for (size_t px = 0; px < hw; px++)
			for (size_t k = 0; k < ch; k++)
				memcpy(tmp + (k * hw + px) * elem, p + (px * ch + k) * elem, elem);
		memcpy(p, tmp, slice);
	}
	free(tmp);
	return RKNN_SUCC;
}

/* The last run's output into the converted output's memory. */
int io_mem_output(struct rknn_ctx *c)
{
	const struct rknn_file_tensor *f = &c->file.io[1];
	size_t elem = type_bytes(c->conv_type[1]);
	rknn_output o = {
		.want_float = c->conv_type[1] == RKNN_TENSOR_FLOAT32,
		.is_prealloc = 1,
		.index = 0,
		.buf = conv_ptr(c, 1),
		.size = (uint32_t)(tensor_elems(c, 1) * elem),
	};
	int ret = get_output(c, &o);

	if (ret || c->conv_fmt[1] != RKNN_TENSOR_NCHW || !c->file.graph || f->n_dims != 4)
		return ret;
	return to_nchw(o.buf, c->in_attr.dims[0], (size_t)f->dims[1] * f->dims[2], f->dims[3],
		       elem);
}
