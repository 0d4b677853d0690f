/* SPDX-License-Identifier: MIT */
/*
 * Post-training quantization and the lowering to the NPU model format:
 * the calibration set (dataset.c), the float statistics of every tensor
 * over it (calibrate.c), the choice of each tensor's range (quant_algo.c),
 * int8 parameters and weights (quantize.c), and the chain of 2.0 layers
 * (lower_chain.c). Documentation/convert.rst, "Post-training quantization".
 */
#ifndef RKACCEL_CONVERT_QUANT_H
#define RKACCEL_CONVERT_QUANT_H

#include "convert.h"
#include "rkaccel.h"

/* --- pass_fold_normalise.c: mean/std and channel order ---------------------- */

#define CV_NORM_MAX_CH 4

/*
 * The toolkit's mean_values/std_values (per channel of the ONNX model's
 * input, in its channel order) and quant_img_RGB2BGR (the ONNX model takes
 * BGR; images decode as RGB) for the one graph input.
 */
struct cv_norm {
	bool set;		/* anything to do */
	int n_ch;		/* values in mean/std; 0: mean 0, std 1 */
	float mean[CV_NORM_MAX_CH], std[CV_NORM_MAX_CH];
	bool bgr;
	/* set by cv_fold_normalise() */
	bool folded;		/* in the first conv: the graph takes raw camera pixels */
	char note[320];		/* what was done, for the summary */
};

/*
 * Folds @nm into the first convolution where exact (see the file), else
 * leaves the graph as it is (the runtime must normalise: the 3.0 input
 * record carries @nm). -1 with a message for values that do not fit the input.
 */
int cv_fold_normalise(struct cv_graph *g, struct cv_norm *nm, struct cv_diag *d);
/* A sample of the NCHW input @t as read (raw pixels) into what the graph takes. */
void cv_norm_apply(const struct cv_norm *nm, bool image, const struct cv_tensor *t, float *x);

/* --- dataset.c: the toolkit's dataset.txt ----------------------------------- */

/* Samples of a dataset.txt: one line each, one path per graph input. */
struct cv_dataset {
	int n_samples, n_inputs;
	char **paths;		/* [n_samples][n_inputs], resolved against the file's folder */
	char *file;		/* dataset.txt's path, for messages */
	int *lines;		/* [n_samples]: the line each sample is on */
	const struct cv_norm *norm;	/* applied to each sample read, or NULL */
};

/* An array read from a .npy file, converted to float. */
struct cv_array {
	int rank;
	int64_t dims[CV_MAX_RANK];
	int64_t elems;
	float *data;
};

int cv_dataset_load(const char *path, int n_inputs, struct cv_dataset *ds, struct cv_diag *d);
void cv_dataset_free(struct cv_dataset *ds);
/* A .npy (float32/64, int8/16/32/64, uint8/16, C order) as float. */
int cv_npy_read(const char *path, struct cv_array *a, struct cv_diag *d);
void cv_array_free(struct cv_array *a);
/*
 * One sample file for the graph input @t: a .npy with as many elements as
 * @t (taken in its order), or a .png/.jpg image [H][W][C] pixels 0..255 for
 * an NCHW @t of the same H, W and C (transposed to NCHW). Into @dst.
 */
int cv_sample_read(const char *path, const struct cv_tensor *t, float *dst, struct cv_diag *d);
/* Sample @s's file for input @i through cv_sample_read() and ds->norm; messages name the line. */
int cv_dataset_sample(const struct cv_dataset *ds, int s, int i, const struct cv_tensor *t,
		      float *dst, struct cv_diag *d);
/* A .png or .jpg file as bytes [*h][*w][*c], *c 1 (gray) or 3 (RGB); free(*px). */
int cv_image_read(const char *path, uint8_t **px, int64_t *h, int64_t *w, int64_t *c,
		  struct cv_diag *d);

/* --- calibrate.c: float statistics of every tensor -------------------------- */

#define CV_HIST_BINS 2048

struct cv_stats {
	bool seen;
	float min, max;		/* over every sample; the histogram spans them */
	double *hist;		/* CV_HIST_BINS counts, or NULL */
};

struct cv_calib {
	int n_tensors;
	struct cv_stats *t;	/* indexed by tensor */
};

/* Runs the float executor over @ds; with @hist also the histograms (a second pass). */
int cv_calibrate(const struct cv_graph *g, const struct cv_dataset *ds, bool hist,
		 struct cv_calib *c, struct cv_diag *d);
void cv_calib_free(struct cv_calib *c);

/* --- quant_algo.c: each tensor's range -------------------------------------- */

enum cv_algo { CV_ALGO_NORMAL, CV_ALGO_MMSE, CV_ALGO_KL };

/* "normal", "mmse", "kl_divergence"; -1 for anything else. */
int cv_algo_from_name(const char *name);
const char *cv_algo_name(enum cv_algo a);
/* The float range [*lo, *hi] (containing 0) that @algo keeps of @s. */
void cv_algo_range(const struct cv_stats *s, enum cv_algo algo, float *lo, float *hi);
/* Asymmetric int8 parameters of a range: q = round(x / scale) + zp. */
void cv_range_to_qparams(float lo, float hi, float *scale, int32_t *zp);

/* --- quantize.c: int8 parameters and weights --------------------------------- */

struct cv_qparam {
	bool set;
	float scale;
	int32_t zp;
};

/* A Conv's or FullyConnected's weights, symmetric int8, ONNX layout. */
struct cv_qweights {
	int64_t n_out, per_out;	/* weights [n_out][per_out] */
	int8_t *w;
	float *scales;		/* per output channel (all equal per layer) */
	float scale_max;	/* the largest; scales[n] = scale_max * mul / 2^14 */
	int32_t *bias;		/* round(b / (in scale * scales[n])) */
};

struct cv_quant_opts {
	enum cv_algo algo;
	bool per_layer;		/* one weight scale per layer instead of per channel */
	struct cv_norm *norm;	/* NULL, or folded/recorded by cv_convert() */
};

struct cv_qgraph {
	int n_tensors, n_nodes;
	struct cv_qparam *t;	/* per tensor */
	struct cv_qweights *w;	/* per node; w == NULL where none */
};

int cv_quantize(const struct cv_graph *g, const struct cv_calib *c,
		const struct cv_quant_opts *o, struct cv_qgraph *q, struct cv_diag *d);
void cv_qgraph_free(struct cv_qgraph *q);
/* NCHW float [1][C][H][W] to the model's int8 [H][W][C], rounding half away from zero. */
void cv_quantize_input(const float *src, int64_t C, int64_t H, int64_t W,
		       const struct cv_qparam *p, int8_t *dst);

/* --- lower_graph.c: any other graph as a 3.0 one ----------------------------- */

/* A 3.0 graph at batch 1 that owns its arrays (cv_graph3_free() it). */
struct cv_graph3 {
	struct rkaccel_graph_desc desc;
	struct rkaccel_graph_tensor *tensors;
	struct rkaccel_graph_node *nodes;
	uint32_t *edges, *outputs;
	uint32_t n_edges;
	struct rkaccel_graph_input input;
	char **names;		/* per tensor */
	void **arrays;		/* weights, biases, scales */
	int n_arrays;
};

/*
 * The quantized @g as a 3.0 graph (see the file for what lowers and how).
 * Anything else: one message per node that does not fit, and -1.
 */
int cv_lower_graph(const struct cv_graph *g, const struct cv_qgraph *q, struct cv_graph3 *o,
		   struct cv_diag *d);
void cv_graph3_free(struct cv_graph3 *o);
/*
 * The Concats of @g the NPU cannot take (not along channels, a constant
 * input, an input but the last not a multiple of 32 channels): one message
 * naming each, and -1. Done before calibration, and again when lowering.
 */
int cv_check_concats(const struct cv_graph *g, struct cv_diag *d);

/* --- lower_chain.c: a chain of 2.0 layers ------------------------------------ */

struct cv_lowered {
	struct rkaccel_model_desc desc;
	struct rkaccel_layer_desc layers[RKACCEL_MODEL_MAX_LAYERS];
	int input, output;	/* graph tensors: the model's input and output */
	int64_t in_c, in_h, in_w;
	int layer_tensor[RKACCEL_MODEL_MAX_LAYERS];	/* the graph tensor each layer writes */
	struct cv_norm norm;	/* norm.set && !norm.folded: the 3.0 input record's */
	bool is_graph;		/* not a chain: @g3 holds the model, desc is empty */
	struct cv_graph3 g3;
};

/*
 * The quantized @g as a chain of 2.0 layers (conv, depthwise, pools, fully
 * connected; ReLU fused; the last layer OUT_INT32). Anything else: one
 * message per node that does not fit, and -1.
 */
int cv_lower_chain(const struct cv_graph *g, const struct cv_qgraph *q, struct cv_lowered *l,
		   struct cv_diag *d);
void cv_lowered_free(struct cv_lowered *l);

/* --- convert_int8.c: the whole flow ------------------------------------------ */

/* ONNX file + dataset.txt to a lowered model (cv_lowered_free it). */
int cv_convert(const char *onnx, const char *dataset, const struct cv_quant_opts *o,
	       struct cv_graph **gp, struct cv_lowered *l, struct cv_diag *d);

/* --- write_graph.c: the model as a 3.0 file with its batch --------------------- */

/*
 * Writes the lowered @l of @g to @path as a format 3.0 graph with every
 * dims[0] = @batch (1..64), the ONNX input and output names and @custom
 * (NULL or up to 1024 bytes). 0, or -errno with a message in @msg.
 */
int cv_save_graph(const struct cv_graph *g, const struct cv_lowered *l, uint32_t batch,
		  const char *custom, const char *path, char *msg, size_t msg_len);

/* --- convert_api.c: the whole flow to a file (rkaccel-convert, libconvert.so) --- */

/*
 * @onnx and @dataset to the model file @out: cv_convert() with @algo (enum
 * cv_algo) and @per_layer, then format 2.0 when @batch is 0 and @custom NULL,
 * else 3.0 with batch @batch (0 meaning 1) and @custom. 0 with a summary
 * ("N layers, HxWxC int8 in, O out") in @msg; -EINVAL when an option, the
 * model or the dataset is refused (the diagnostics in @msg, one a line); any
 * other -errno when @out could not be written ("OUT: cannot write ..." in @msg).
 */
int cv_convert_file(const char *onnx, const char *dataset, int algo, int per_layer,
		    unsigned int batch, const char *custom, const char *out, char *msg,
		    size_t msg_len);
/*
 * cv_convert_file() with the toolkit's mean_values/std_values (@n_ch values
 * each, 0 for none) and quant_img_RGB2BGR (@bgr) for the one input. Where
 * they cannot be folded into the first layer the file is 3.0 (it records
 * them); @msg's summary then says so on a line of its own.
 */
int cv_convert_file_norm(const char *onnx, const char *dataset, int algo, int per_layer,
			 unsigned int batch, const char *custom, const float *mean,
			 const float *std, int n_ch, int bgr, const char *out, char *msg,
			 size_t msg_len);

#endif
