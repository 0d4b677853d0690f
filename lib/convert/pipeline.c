// SPDX-License-Identifier: MIT
/* The pass pipeline, in the order Documentation/convert.rst gives. */
#include "internal.h"

typedef int (*pass_fn)(struct cv_graph *, struct cv_diag *);

static const pass_fn pipeline[] = {
	cv_pass_remove_identity,
	cv_pass_fold_constants,
	cv_pass_infer_shapes,
	cv_pass_fold_batchnorm,
	cv_pass_merge_pad,
	cv_pass_gemm_to_fc,
	cv_pass_flatten_into_fc,
	cv_pass_fuse_activation,
	cv_pass_infer_shapes,
	cv_pass_check_support,
};

int cv_prepare(struct cv_graph *g, struct cv_diag *d)
{
	cv_graph_link(g);
	for (size_t i = 0; i < sizeof(pipeline) / sizeof(pipeline[0]); i++)
		if (pipeline[i](g, d))
			return -1;
	return 0;
}
