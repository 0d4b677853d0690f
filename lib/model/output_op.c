// SPDX-License-Identifier: MIT
/*
 * The CPU op at the output of a lowered graph (to_model3.c takes it from
 * the graph's softmax and dequantize nodes). Its arithmetic is fixed by
 * model-format.rst so that the host's reference and every run agree to
 * the bit: one rounding per dequantized element, expf() and a float sum in
 * index order for the softmax.
 */

#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "model.h"

int rkaccel_model_output_op(const struct rkaccel_model *model, struct rkaccel_output_op *op)
{
	if (!model || !op)
		return -EINVAL;
	if (!model->has_out_op)
		return -ENOENT;
	*op = model->out_op;
	return 0;
}

static float dequant_one(const struct rkaccel_output_op *op, const void *src, size_t k)
{
	double q = op->in_bytes == 4 ? ((const int32_t *)src)[k] : ((const int8_t *)src)[k];

	return (float)((q - op->zero_point) * (double)op->scale);
}

/* Softmax of the @len floats at @x, @stride apart, in place. */
static void softmax_line(float *x, uint32_t len, uint32_t stride)
{
	float max = x[0], sum = 0.0f;

	for (uint32_t a = 1; a < len; a++)
		max = x[(size_t)a * stride] > max ? x[(size_t)a * stride] : max;
	for (uint32_t a = 0; a < len; a++) {
		float *e = &x[(size_t)a * stride];

		*e = expf(*e - max);
		sum += *e;
	}
	for (uint32_t a = 0; a < len; a++)
		x[(size_t)a * stride] /= sum;
}

static bool op_valid(const struct rkaccel_output_op *op)
{
	uint64_t n = (uint64_t)op->outer * op->axis_len * op->inner;

	return (op->in_bytes == 1 || op->in_bytes == 4) && !(op->flags & ~RKACCEL_OUTPUT_SOFTMAX) &&
	       n && n <= RKACCEL_GRAPH_MAX_TENSOR_BYTES && op->scale > 0.0f &&
	       isfinite(op->scale) && (op->in_bytes == 1 || !op->zero_point);
}

int rkaccel_output_op_run(const struct rkaccel_output_op *op, const void *src, uint32_t count,
			  float *dst)
{
	size_t slice, n;

	if (!op || !src || !dst || !count || !op_valid(op))
		return -EINVAL;
	slice = (size_t)op->outer * op->axis_len * op->inner;
	n = slice * count;
	for (size_t k = 0; k < n; k++)
		dst[k] = dequant_one(op, src, k);
	if (!(op->flags & RKACCEL_OUTPUT_SOFTMAX))
		return 0;
	for (size_t s = 0; s < count; s++) {
		float *x = dst + s * slice;

		for (uint32_t o = 0; o < op->outer; o++)
			for (uint32_t i = 0; i < op->inner; i++)
				softmax_line(x + (size_t)o * op->axis_len * op->inner + i,
					     op->axis_len, op->inner);
	}
	return 0;
}
