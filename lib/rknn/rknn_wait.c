// SPDX-License-Identifier: MIT
/*
 * rknn_wait: rknn_run() blocks until the run is done (non_block is
 * refused), so a run never outlives it and there is nothing to wait for:
 * the call checks the context and reports the last run's frame.
 */

#include "rknn_internal.h"

int rknn_wait(rknn_context context, rknn_run_extend *extend)
{
	struct rknn_ctx *c = ctx_get(context);

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	if (extend)
		extend->frame_id = c->frames;
	ctx_put(c);
	return RKNN_SUCC;
}
