// SPDX-License-Identifier: MIT
/*
 * The SDK's dynamic-shape calls. Every model file of the project has one
 * fixed shape per tensor, so they are refused as the SDK refuses them on a
 * static-shape model: RKNN_ERR_MODEL_INVALID and a warning that says so.
 * (RKNN_QUERY_INPUT_DYNAMIC_RANGE is in rknn_query(); the CURRENT_*
 * queries answer with the static attributes.)
 */

#include "rknn_internal.h"

/* The common checks: a live context, then the refusal. */
static int static_shapes(const char *call, rknn_context ctx, int args_ok)
{
	struct rknn_ctx *c = ctx_get(ctx);

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	ctx_put(c);
	if (!args_ok)
		return RKNN_ERR_PARAM_INVALID;
	rknn_warn("%s: the model has static shapes; there is no other shape to set", call);
	return RKNN_ERR_MODEL_INVALID;
}

int rknn_set_input_shape(rknn_context ctx, rknn_tensor_attr *attr)
{
	return static_shapes("rknn_set_input_shape", ctx, attr != NULL);
}

int rknn_set_input_shapes(rknn_context ctx, uint32_t n_inputs, rknn_tensor_attr attr[])
{
	/* One input per model here. */
	return static_shapes("rknn_set_input_shapes", ctx, attr && n_inputs == 1);
}
