/* SPDX-License-Identifier: MIT */
/*
 * librkaccel: a thin userspace library over the rkaccel NPU driver.
 *
 * Every function that can fail returns 0 or a positive value on success and
 * a negative errno value on failure; rkaccel_strerror() names it.
 */
#ifndef RKACCEL_H
#define RKACCEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The library's version, of this header: the shared library is
 * librkaccel.so.MAJOR (soname), and a minor version only adds to the API.
 * Not the driver's version, which rkaccel_query() reports.
 */
#define RKACCEL_LIB_VERSION_MAJOR	2
#define RKACCEL_LIB_VERSION_MINOR	8
#define RKACCEL_LIB_VERSION_PATCH	0
#define RKACCEL_LIB_VERSION_CODE(major, minor, patch) \
	(((major) << 16) | ((minor) << 8) | (patch))
#define RKACCEL_LIB_VERSION \
	RKACCEL_LIB_VERSION_CODE(RKACCEL_LIB_VERSION_MAJOR, RKACCEL_LIB_VERSION_MINOR, \
				 RKACCEL_LIB_VERSION_PATCH)

/*
 * rkaccel_lib_version - the version of the library running, as
 * RKACCEL_LIB_VERSION_CODE(major, minor, patch): with the shared library it
 * may be newer than the RKACCEL_LIB_VERSION the program was compiled with.
 */
uint32_t rkaccel_lib_version(void);

/** An open rkaccel device. */
struct rkaccel_device;

/** What the device is, as reported by the driver. */
struct rkaccel_info {
	uint32_t soc;		/* DRM_RKACCEL_SOC_* */
	const char *soc_name;	/* "RK3588", "RK3576" */
	uint32_t backend;	/* DRM_RKACCEL_BACKEND_* */
	uint32_t num_cores;
	uint32_t core_mask;	/* bit n: core n usable */
	uint32_t driver_major, driver_minor, driver_patch;
	uint32_t hw_version;
	uint64_t va_size;	/* NPU address space bytes per open device */
	uint32_t max_tasks;	/* tasks per job */
	uint32_t cbuf_size;	/* convolution buffer bytes per core */
};

/*
 * rkaccel_open - open the device at @path, or when @path is NULL the first
 * accel or render node whose driver is rkaccel. Stores the device in *@dev.
 * Returns 0, -ENODEV when no rkaccel device exists or @path is not one
 * (anything but a character device is refused at once: opening a FIFO
 * does not wait for a peer), or the open(2) error.
 */
int rkaccel_open(const char *path, struct rkaccel_device **dev);

/* rkaccel_close - close @dev and free it. NULL is a no-op. */
void rkaccel_close(struct rkaccel_device *dev);

/* rkaccel_fd - the DRM file descriptor of @dev, for raw ioctls. */
int rkaccel_fd(const struct rkaccel_device *dev);

/* rkaccel_path - the device node @dev was opened from. */
const char *rkaccel_path(const struct rkaccel_device *dev);

/* rkaccel_query - fill @info from DRM_IOCTL_RKACCEL_QUERY. */
int rkaccel_query(struct rkaccel_device *dev, struct rkaccel_info *info);

/** Per-core figures of the driver's debugfs "cores" file. */
struct rkaccel_core_stats {
	uint32_t core;
	uint64_t jobs;			/* jobs run */
	uint64_t faults;		/* jobs ended by a DMA error */
	uint64_t resets;		/* resets after a hung job */
	uint64_t busy_ns;		/* time running jobs, since the device appeared */
	uint32_t load_permille;		/* busy share of the last second */
};

/*
 * rkaccel_core_stats - fill @stats[0..@max) with the device's per-core
 * figures from debugfs (/sys/kernel/debug/{accel,dri}/<minor>/cores).
 * Returns the number of cores filled, -ENOENT when debugfs is not mounted,
 * -EACCES when it is not readable (it needs root), -EINVAL.
 */
int rkaccel_core_stats(struct rkaccel_device *dev, struct rkaccel_core_stats *stats,
		       unsigned int max);

/* rkaccel_soc_name - "RK3588", "RK3576" or "unknown". */
const char *rkaccel_soc_name(uint32_t soc);

/* rkaccel_strerror - text for a negative errno value returned here. */
const char *rkaccel_strerror(int err);

/* --- quantized MLP models ---------------------------------------------------
 *
 * A model is a stack of fully connected int8 layers. Its file format
 * (little-endian, versioned, CRC-32 protected) is in
 * Documentation/model-format.rst; rkaccel-mkmodel writes and dumps it.
 */

/* Version 2.0 holds graphs; plain MLPs are still written as 1.0. */
#define RKACCEL_MODEL_VERSION_MAJOR	2
#define RKACCEL_MODEL_VERSION_MINOR	0

/*
 * Limits enforced by rkaccel_model_validate() and so by every parse. A 1.x
 * or 2.x file holds at most RKACCEL_MODEL_MAX_LAYERS layers; a model in
 * memory (a description, a lowered 3.0 graph, a text network) up to
 * RKACCEL_MODEL_MAX_MEM_LAYERS.
 */
#define RKACCEL_MODEL_MAX_LAYERS	16
#define RKACCEL_MODEL_MAX_MEM_LAYERS	4096
#define RKACCEL_MODEL_MAX_FEATURES	32768		/* in_features, out_features (VGG: 25088) */
#define RKACCEL_MODEL_MAX_ROWS		65536
#define RKACCEL_MODEL_MAX_WEIGHT_BYTES	(256u << 20)	/* all layers together */
#define RKACCEL_MODEL_MAX_ABS_BIAS	(1 << 30)	/* |bias| <= 2^30: no int32 overflow */
#define RKACCEL_MODEL_MAX_FILE_SIZE	(512u << 20)

/* Layer flags. */
#define RKACCEL_LAYER_RELU       0x1u  /* clamp the output at the output zero point */
#define RKACCEL_LAYER_OUT_INT32  0x2u  /* last layer only: write the int32 accumulator + bias, no requantization */
#define RKACCEL_LAYER_ADD        0x4u  /* add tensor add_input (its own scale and zero point); RELU after the add */

/* Layer operations (version 2.0 models); 0 is the fully connected layer of 1.0. */
enum rkaccel_op {
	RKACCEL_OP_FC,		/* 1x1 convolution over every pixel */
	RKACCEL_OP_CONV,	/* KxK convolution, weights [out][ky][kx][in] */
	RKACCEL_OP_DWCONV,	/* depthwise KxK, weights [channel][ky][kx], out == in */
	RKACCEL_OP_MAXPOOL,	/* no weights; out == in, same scale and zero point */
	RKACCEL_OP_AVGPOOL,	/* kernel 0x0: global average */
	RKACCEL_OP_COUNT,
};

/*
 * A concat along channels: only in models lowered from 3.0 graphs, never in
 * a file or a description rkaccel_model_validate() takes. Its inputs are
 * rkaccel_model_inputs(); in_features == out_features, the total.
 */
#define RKACCEL_OP_CONCAT	0x100u

/* One fully connected layer of a quantized MLP: out = requant(in x W^T + bias). */
struct rkaccel_layer_desc {
	uint32_t in_features;    /* K, >= 1 */
	uint32_t out_features;   /* N, >= 1 */
	uint32_t flags;          /* RKACCEL_LAYER_* */
	int32_t in_zero_point;   /* -128..127 */
	int32_t out_zero_point;  /* -128..127; 0 with OUT_INT32 */
	float in_scale;          /* > 0, finite */
	float weight_scale;      /* > 0, finite; weights are symmetric (zero point 0) */
	float out_scale;         /* > 0, finite; ignored with OUT_INT32 */
	const int8_t *weights;   /* [out_features][in_features], row-major (see op) */
	const int32_t *bias;     /* [out_features] */
	/* version 2.0: zero for a fully connected layer */
	uint32_t op;             /* enum rkaccel_op */
	uint32_t kernel_w, kernel_h;	/* 1..11 (pools 1..16; 0x0 global average) */
	uint32_t stride;         /* 1..4 (pools 1..16) */
	uint32_t pad_top, pad_left, pad_bottom, pad_right;	/* each < the kernel */
	uint32_t add_input;      /* with RKACCEL_LAYER_ADD: 0 model input, i + 1 layer i */
	const float *weight_scales;	/* per output channel, each <= weight_scale; or NULL */
};

/* A quantized MLP: input int8 [rows][layers[0].in_features], output [rows][last.out_features]. */
struct rkaccel_model_desc {
	uint32_t rows;           /* M: input rows per inference, >= 1 */
	uint32_t num_layers;     /* 1..RKACCEL_MODEL_MAX_MEM_LAYERS; files 1..RKACCEL_MODEL_MAX_LAYERS */
	const struct rkaccel_layer_desc *layers;
	/* version 2.0: the input is an image; 0, 0 for an MLP (rows x 1) */
	uint32_t height, width;  /* height * width == rows */
};

struct rkaccel_model;

/* The shape of a model's tensor: 0 the input, i + 1 the output of layer i. */
struct rkaccel_tensor_shape {
	uint32_t height, width, channels;
	float scale;
	int32_t zero_point;
};

/*
 * rkaccel_model_tensor - the shape of tensor @t of the validated @desc.
 * Returns 0 or -EINVAL (@t beyond num_layers).
 */
int rkaccel_model_tensor(const struct rkaccel_model_desc *desc, uint32_t t,
			 struct rkaccel_tensor_shape *shape);

/*
 * rkaccel_model_from_text - make a seeded random network from the text
 * description @text (grammar: Documentation/model-format.rst, "Network
 * descriptions"). Returns 0, -EINVAL with a one-line message naming the
 * line in @msg, or -ENOMEM.
 */
int rkaccel_model_from_text(uint32_t seed, const char *text, struct rkaccel_model **model,
			    char *msg, size_t msg_len);

/** A model in memory: a validated description that owns its arrays. */
struct rkaccel_model;

/*
 * rkaccel_model_validate - check @desc against the model rules: rows in
 * 1..RKACCEL_MODEL_MAX_ROWS; num_layers in 1..RKACCEL_MODEL_MAX_MEM_LAYERS and
 * layers non-NULL; per layer in_features and out_features in
 * 1..RKACCEL_MODEL_MAX_FEATURES, no flag bits besides RKACCEL_LAYER_*,
 * OUT_INT32 on the last layer only, zero points in -128..127 (out_zero_point
 * 0 with OUT_INT32), the three scales positive normal binary32 numbers (not
 * zero, subnormal, infinite or NaN), weights and bias non-NULL and every bias
 * within +-RKACCEL_MODEL_MAX_ABS_BIAS; layer i+1 takes what layer i gives
 * (in_features == out_features, in_zero_point == out_zero_point, in_scale ==
 * out_scale bit for bit); all weights together at most
 * RKACCEL_MODEL_MAX_WEIGHT_BYTES.
 *
 * Returns 0 or -EINVAL. On -EINVAL, when @msg is non-NULL and @msg_len > 0,
 * writes a NUL-terminated one-line message naming the first broken rule and
 * its layer, for example "layer 1: in_features 30 does not chain: layer 0
 * has out_features 32".
 */
int rkaccel_model_validate(const struct rkaccel_model_desc *desc, char *msg, size_t msg_len);

/*
 * rkaccel_model_parse - validate the model file image @buf of @len bytes
 * completely and store a copy of the model in *@model (free it with
 * rkaccel_model_free()). @buf need not be aligned; it is read only within
 * @len bytes and not referenced after the call.
 *
 * Returns 0, or on failure a negative errno with a one-line message in @msg
 * (as for rkaccel_model_validate()) and *@model untouched:
 *   -EINVAL   malformed: too short, wrong magic, a size or offset out of the
 *             file or overlapping, a field out of range, a broken model rule
 *   -EBADMSG  the CRC-32 does not match the contents (corrupted file)
 *   -ENOTSUP  a major version this library does not know
 *   -ENOMEM   out of memory
 * Newer minor versions of the same major are accepted; what they append to
 * the header and layer records is ignored.
 */
int rkaccel_model_parse(const void *buf, size_t len, struct rkaccel_model **model,
			char *msg, size_t msg_len);

/*
 * rkaccel_model_load - read the model file at @path and parse it as
 * rkaccel_model_parse() does. Besides its errors, returns the open(2) or
 * read(2) error (-ENOENT, -EACCES, ...), -EINVAL at once for anything but
 * a regular file (the open does not block: a FIFO with no writer is
 * refused, not waited for) and -EFBIG for a file larger than
 * RKACCEL_MODEL_MAX_FILE_SIZE, with a message in @msg that starts with
 * "@path: ".
 */
int rkaccel_model_load(const char *path, struct rkaccel_model **model,
		       char *msg, size_t msg_len);

/*
 * rkaccel_model_desc - the description of @model. It and the arrays it points
 * to live as long as @model. Weight and bias arrays are 64-byte aligned.
 */
const struct rkaccel_model_desc *rkaccel_model_desc(const struct rkaccel_model *model);

/* rkaccel_model_free - free @model. NULL is a no-op. */
void rkaccel_model_free(struct rkaccel_model *model);

/*
 * rkaccel_model_inputs - the tensors layer @layer of @model reads (0 the
 * model input, j + 1 the output of layer j), add_input aside: one for a
 * convolution or pool, a concat's inputs in channel order. In a model made
 * from a description or a 1.x/2.x file, layer i reads tensor i (a chain); a
 * model lowered from a 3.0 graph may read any earlier tensor. Writes up to
 * @max of them to @tensors and returns how many there are, or -EINVAL.
 */
int rkaccel_model_inputs(const struct rkaccel_model *model, uint32_t layer, uint32_t *tensors,
			 uint32_t max);

/*
 * rkaccel_model_graph_tensor - the index of the tensor of the 3.0 graph
 * that tensor @t of @model (0 the input, i + 1 the output of layer i)
 * holds, for a model of rkaccel_graph_to_model(). Returns it, -ENOENT when
 * @t holds no graph tensor (a copy into a concat) or @model was not
 * lowered from a graph, or -EINVAL.
 */
int rkaccel_model_graph_tensor(const struct rkaccel_model *model, uint32_t t);

/*
 * A CPU op at the output of a lowered graph: what the graph computes after
 * its last NPU layer (model-format.rst, "Running a 3.0 file"). The NPU
 * gives int8 or int32 elements; the CPU dequantizes them, each rounded
 * once to binary32 from (q - zero_point) x scale in double, and with
 * RKACCEL_OUTPUT_SOFTMAX takes the softmax along the axis: the maximum
 * subtracted, expf(), the sum in float in index order, each divided by it.
 * One slice of the batch holds outer x axis_len x inner elements; element
 * (o, a, i) is at (o x axis_len + a) x inner + i. Since 2.7 (LIBRKACCEL_1.9).
 */
#define RKACCEL_OUTPUT_SOFTMAX	0x1u

struct rkaccel_output_op {
	uint32_t flags;		/* RKACCEL_OUTPUT_SOFTMAX, or 0: dequantize only */
	uint32_t in_bytes;	/* of the NPU's elements: 1 (int8) or 4 (int32) */
	float scale;		/* of the NPU's output */
	int32_t zero_point;
	uint32_t outer, axis_len, inner;	/* one slice; softmax along axis_len */
	uint32_t graph_tensor;	/* the graph's float32 output */
};

/*
 * rkaccel_model_output_op - the CPU op at the output of @model (a model of
 * rkaccel_graph_to_model()) in *@op. Returns 0, -ENOENT when the NPU's
 * output is the model's (no CPU op), or -EINVAL.
 */
int rkaccel_model_output_op(const struct rkaccel_model *model, struct rkaccel_output_op *op);

/*
 * rkaccel_output_op_run - @op on @count slices of the NPU's output @src
 * (row-major, as rkaccel_run() gives it) into @dst, @count x outer x
 * axis_len x inner floats. Returns 0, or -EINVAL for a NULL pointer, a
 * zero count or an @op no model gives.
 */
int rkaccel_output_op_run(const struct rkaccel_output_op *op, const void *src, uint32_t count,
			  float *dst);

/*
 * rkaccel_model_shape - the shape of tensor @t of @model (0 the input, i + 1
 * the output of layer i), following what each layer reads: for models that
 * are not chains, where rkaccel_model_tensor() on the description would
 * assume one. Returns 0, -EINVAL or -ENOMEM.
 */
int rkaccel_model_shape(const struct rkaccel_model *model, uint32_t t,
			struct rkaccel_tensor_shape *shape);

/*
 * rkaccel_model_serialize - write @desc as a model file image of the current
 * version into a new buffer: *@buf (free it with free(3)) of *@len bytes.
 * The layout is canonical: header, layer records, then per layer its weights
 * and its bias, each at the next 64-byte boundary, zero padding between.
 * Returns 0, -EINVAL when rkaccel_model_validate() rejects @desc or it has
 * more than RKACCEL_MODEL_MAX_LAYERS layers (a file's limit), or -ENOMEM.
 */
int rkaccel_model_serialize(const struct rkaccel_model_desc *desc, void **buf, size_t *len);

/*
 * rkaccel_model_save - serialize @desc and write it to @path (created with
 * mode 0644 less the umask, or truncated). Returns 0, the errors of
 * rkaccel_model_serialize(), or the open(2)/write(2)/close(2) error; the
 * open does not block: a FIFO with no reader gives -ENXIO at once.
 */
int rkaccel_model_save(const struct rkaccel_model_desc *desc, const char *path);

/*
 * rkaccel_model_random - make a model from @seed alone, the same bytes on
 * every architecture: @num_layers layers with features[i] -> features[i + 1]
 * (@features has @num_layers + 1 entries), @rows rows. Hidden layers get
 * RKACCEL_LAYER_RELU; the last layer gets @flags_last. Weights are uniform in
 * -128..127, biases in -4096..4096, zero points in -16..16 (0 for an
 * OUT_INT32 output); scales are 8-bit-mantissa binary32 values with
 * out_scale near in_scale * weight_scale * c * sqrt(K), c = 128 for the
 * first layer and 52 behind a ReLU, so that for uniform int8 input every
 * layer's outputs spread over the int8 range (standard deviation about 40)
 * instead of saturating or collapsing. With OUT_INT32, out_scale is
 * in_scale * weight_scale exactly, the scale of the int32 output.
 * Returns 0, -EINVAL when the arguments make an invalid model (or
 * @features or @model is NULL), or -ENOMEM.
 */
int rkaccel_model_random(uint32_t seed, uint32_t rows, uint32_t num_layers,
			 const uint32_t *features, uint32_t flags_last,
			 struct rkaccel_model **model);

/* --- graphs: model format 3.0 -----------------------------------------------
 *
 * A graph is a directed acyclic graph of nodes over named tensors: up to 16
 * graph inputs and outputs, NHWC tensors of int8, uint8, int32 or float32,
 * convolutions (plain, depthwise, grouped), fully connected layers, pools,
 * adds, concats, and CPU ops at the outputs (softmax, dequantize). Its file
 * is version 3.0 of the model format (Documentation/model-format.rst,
 * "Version 3.0: graphs"); 1.x and 2.x files stay with rkaccel_model_*().
 * Nodes are in topological order: every input of node i is a graph input or
 * the output of a node before i.
 */

#define RKACCEL_GRAPH_VERSION_MAJOR	3
#define RKACCEL_GRAPH_VERSION_MINOR	0

/* Limits enforced by rkaccel_graph_validate() and so by every parse. */
#define RKACCEL_GRAPH_MAX_NODES		8192
#define RKACCEL_GRAPH_MAX_TENSORS	16384
#define RKACCEL_GRAPH_MAX_IO		16		/* graph inputs, graph outputs */
#define RKACCEL_GRAPH_MAX_NODE_INPUTS	64		/* a concat's inputs */
#define RKACCEL_GRAPH_MAX_EDGES		65536		/* node inputs, all nodes */
#define RKACCEL_GRAPH_MAX_DIM		65536		/* each dimension */
#define RKACCEL_GRAPH_MAX_TENSOR_BYTES	(1u << 31)	/* one tensor, whole batch */
#define RKACCEL_GRAPH_MAX_NAME		255		/* bytes of a tensor name */
#define RKACCEL_GRAPH_MAX_CUSTOM	1024		/* bytes of the custom string */
#define RKACCEL_GRAPH_MAX_BATCH		64

/* Element types of graph tensors. */
enum rkaccel_dtype {
	RKACCEL_DTYPE_INT8 = 1,
	RKACCEL_DTYPE_UINT8,
	RKACCEL_DTYPE_INT32,	/* accumulators: zero point 0 */
	RKACCEL_DTYPE_FLOAT32,	/* CPU ops' outputs: scale and zero point 0 */
};

/* Node operations; the NPU's first, then the CPU's (outputs only). */
enum rkaccel_graph_op {
	RKACCEL_GOP_CONV,		/* groups 1, weights [out][kh][kw][in] */
	RKACCEL_GOP_DWCONV,		/* groups == in == out channels, weights [c][kh][kw] */
	RKACCEL_GOP_GROUPCONV,		/* groups >= 2, weights [out][kh][kw][in / groups] */
	RKACCEL_GOP_FC,			/* [N, K...] -> [N, out], weights [out][K], K flattened NHWC */
	RKACCEL_GOP_MAXPOOL,
	RKACCEL_GOP_AVGPOOL,
	RKACCEL_GOP_GLOBAL_AVGPOOL,	/* [N, H, W, C] -> [N, 1, 1, C] */
	RKACCEL_GOP_ADD,		/* two inputs of the output's dims */
	RKACCEL_GOP_CONCAT,		/* 2..64 inputs along axis */
	RKACCEL_GOP_SOFTMAX,		/* CPU: float32 output, along axis */
	RKACCEL_GOP_DEQUANTIZE,		/* CPU: float32 output */
	RKACCEL_GOP_COUNT,
};

/* Activations of convolutions, fully connected layers and adds. */
enum rkaccel_act {
	RKACCEL_ACT_NONE,
	RKACCEL_ACT_RELU,
	RKACCEL_ACT_CLIP,	/* clamp to clip_min..clip_max (real values): ReLU6 is 0..6 */
	RKACCEL_ACT_LEAKY,	/* x < 0: x * leaky_slope */
};

/* Node flags. */
#define RKACCEL_NODE_CEIL_MODE		0x1u	/* pools: output size rounded up */
#define RKACCEL_NODE_COUNT_INCLUDE_PAD	0x2u	/* AVGPOOL: divide by the whole window */

/* Channel order a graph input expects of its pixels. */
enum rkaccel_channel_order {
	RKACCEL_CHANNELS_AS_IS,
	RKACCEL_CHANNELS_RGB,
	RKACCEL_CHANNELS_BGR,
};

/* A tensor: dims[0] is the batch; images are NHWC. */
struct rkaccel_graph_tensor {
	const char *name;	/* 1..RKACCEL_GRAPH_MAX_NAME bytes, 0x21..0x7e, unique */
	uint32_t type;		/* enum rkaccel_dtype */
	uint32_t n_dims;	/* 1..4 */
	uint32_t dims[4];	/* 1..RKACCEL_GRAPH_MAX_DIM; 0 beyond n_dims */
	float scale;		/* real = (q - zero_point) * scale */
	int32_t zero_point;
};

/* A node: one output tensor, 1..64 input tensors (indices into tensors). */
struct rkaccel_graph_node {
	uint32_t op;			/* enum rkaccel_graph_op */
	uint32_t num_inputs;
	const uint32_t *inputs;
	uint32_t output;
	/* convolutions and pools; 0 for the others */
	uint32_t kernel_h, kernel_w;	/* 1..11 (pools 1..16) */
	uint32_t stride_h, stride_w;	/* 1..4 (pools 1..16) */
	uint32_t pad_top, pad_left, pad_bottom, pad_right;	/* each < the kernel */
	uint32_t dilation_h, dilation_w;	/* 1..4 (pools 1) */
	uint32_t groups;		/* CONV 1, DWCONV channels, GROUPCONV >= 2 */
	uint32_t flags;			/* RKACCEL_NODE_*, pools only */
	uint32_t axis;			/* CONCAT, SOFTMAX: 1..n_dims - 1 */
	uint32_t act;			/* enum rkaccel_act: convolutions, FC, ADD */
	float clip_min, clip_max;	/* ACT_CLIP only, else 0 */
	float leaky_slope;		/* ACT_LEAKY only, in (0, 1), else 0 */
	/* convolutions and FC: symmetric int8 weights, int32 bias */
	float weight_scale;
	const int8_t *weights;
	const int32_t *bias;		/* [out channels], |b| <= RKACCEL_MODEL_MAX_ABS_BIAS */
	const float *weight_scales;	/* per output channel, each <= weight_scale; or NULL */
};

/* A graph input and how pixels are normalised before quantization. */
struct rkaccel_graph_input {
	uint32_t tensor;
	uint32_t channel_order;		/* enum rkaccel_channel_order; RGB, BGR: 3 channels */
	const float *mean, *std;	/* both NULL or both [channels]: (x - mean) / std */
};

/* A graph as the caller describes it or rkaccel_graph_desc() gives it. */
struct rkaccel_graph_desc {
	uint32_t batch;			/* 1..RKACCEL_GRAPH_MAX_BATCH, every dims[0] */
	uint32_t num_tensors;
	const struct rkaccel_graph_tensor *tensors;
	uint32_t num_nodes;		/* 1..RKACCEL_GRAPH_MAX_NODES, topological order */
	const struct rkaccel_graph_node *nodes;
	uint32_t num_inputs;		/* 1..RKACCEL_GRAPH_MAX_IO */
	const struct rkaccel_graph_input *inputs;
	uint32_t num_outputs;		/* 1..RKACCEL_GRAPH_MAX_IO */
	const uint32_t *outputs;	/* tensor indices */
	const char *custom;		/* NULL or up to 1024 bytes (RKNN_QUERY_CUSTOM_STRING) */
};

/** A graph in memory: a validated description that owns its arrays. */
struct rkaccel_graph;

/*
 * rkaccel_graph_validate - check @desc against every rule of
 * Documentation/model-format.rst ("Version 3.0: graphs", "Rules"): counts
 * and caps, names, shapes and types of every tensor, each node's inputs
 * and output (in range, topological order, no cycle), its attributes and
 * shapes per op, arrays and their values. Returns 0 or -EINVAL with a
 * one-line message in @msg naming the node, tensor or input, for example
 * "node 3 (conv): output 'b' is 1x8x8x16, the op gives 1x7x7x16".
 */
int rkaccel_graph_validate(const struct rkaccel_graph_desc *desc, char *msg, size_t msg_len);

/*
 * rkaccel_graph_parse - validate the 3.x file image @buf of @len bytes and
 * store a copy in *@graph (free it with rkaccel_graph_free()). Trusts
 * nothing in @buf and reads no byte outside it. Returns 0, or with a
 * one-line message in @msg and *@graph untouched: -EINVAL (malformed or a
 * broken rule), -EBADMSG (CRC-32 mismatch), -ENOTSUP (not major version 3:
 * 1.x and 2.x files are for rkaccel_model_parse()), -ENOMEM.
 */
int rkaccel_graph_parse(const void *buf, size_t len, struct rkaccel_graph **graph,
			char *msg, size_t msg_len);

/*
 * rkaccel_graph_load - read the file at @path and parse it as
 * rkaccel_graph_parse() does; files are opened and limited as by
 * rkaccel_model_load() (-EINVAL for anything but a regular file, -EFBIG above
 * RKACCEL_MODEL_MAX_FILE_SIZE, open(2)/read(2) errors), messages start with
 * "@path: ".
 */
int rkaccel_graph_load(const char *path, struct rkaccel_graph **graph, char *msg,
		       size_t msg_len);

/*
 * rkaccel_graph_desc - the description of @graph; it and everything it points
 * to live as long as @graph. Weight, bias and scale arrays are 64-byte aligned.
 */
const struct rkaccel_graph_desc *rkaccel_graph_desc(const struct rkaccel_graph *graph);

/* rkaccel_graph_free - free @graph. NULL is a no-op. */
void rkaccel_graph_free(struct rkaccel_graph *graph);

/*
 * rkaccel_graph_serialize - write @desc as a 3.0 file image in a new buffer
 * *@buf (free(3) it) of *@len bytes, in the canonical layout. Returns 0,
 * -EINVAL when rkaccel_graph_validate() rejects @desc, or -ENOMEM.
 */
int rkaccel_graph_serialize(const struct rkaccel_graph_desc *desc, void **buf, size_t *len);

/*
 * rkaccel_graph_save - serialize @desc and write it to @path as
 * rkaccel_model_save() does. Returns 0, the errors of
 * rkaccel_graph_serialize(), or the open(2)/write(2)/close(2) error.
 */
int rkaccel_graph_save(const struct rkaccel_graph_desc *desc, const char *path);

/*
 * rkaccel_graph_from_model - the 3.0 graph that computes what the 1.x/2.x
 * model @desc computes: batch 1, input "input" [1, H, W, C] (an MLP's rows
 * as H, W 1), one node per layer ("layer<i>"; the last output "output"),
 * a fully connected layer as a 1x1 convolution, a global average pool as
 * GLOBAL_AVGPOOL, and a layer with RKACCEL_LAYER_ADD as a convolution into
 * an int32 accumulator "layer<i>.acc" plus an ADD node carrying the ReLU.
 * Returns 0, -EINVAL with a message when rkaccel_model_validate() rejects
 * @desc, or -ENOMEM.
 */
int rkaccel_graph_from_model(const struct rkaccel_model_desc *desc,
			     struct rkaccel_graph **graph, char *msg, size_t msg_len);

/*
 * rkaccel_graph_to_model - lower the graph @desc to the layers the compiler
 * and contexts take (the inverse of rkaccel_graph_from_model()), one slice
 * of the batch: run it with rkaccel_ctx_set_batch(ctx, @desc->batch). Takes
 * the graphs with one int8 input (NHWC or [N, C], no mean/std, channels as
 * is) and one output: the last layer's, or a CPU op's after it (a softmax
 * of int8, a dequantize of int8 or int32, or a softmax of that dequantize:
 * rkaccel_model_output_op() gives it); each node reads any tensor a node
 * before computes (up to RKACCEL_MODEL_MAX_MEM_LAYERS layers); convolutions
 * (a 1x1, stride 1, unpadded one becomes the FC), depthwise convolutions,
 * FC on one pixel, pools (avgpool counting the padding), global average
 * pooling, ReLU; an int32 convolution output only as the last tensor or
 * followed by the ADD of an earlier tensor; concats along the channels of
 * NHWC int8 tensors that the producers write in place (not the graph input,
 * each tensor in one concat, every input but the last a multiple of 32
 * channels; an input quantized otherwise is requantized by its producer
 * when that is a convolution nothing else reads). A graph that is a chain
 * gives a chain (rkaccel_model_desc() describes it whole); the others carry
 * their links (rkaccel_model_inputs()) and compile with
 * rkaccel_program_compile_model(). A pool's weight_scale is 1.0. An MLP
 * (every layer FC, width 1) gets height and width 0. Stores a model that
 * owns its arrays in *@model. Returns 0, -ENOMEM, or -EINVAL with a message
 * naming the node and the reason, e.g. "node 'p' (avgpool): not compiled
 * yet: average pooling in ceil mode: the datapath divides a window cut by
 * the end by the whole window".
 */
int rkaccel_graph_to_model(const struct rkaccel_graph_desc *desc, struct rkaccel_model **model,
			   char *msg, size_t msg_len);

/* rkaccel_graph_op_name - "conv", "dwconv", ... for enum rkaccel_graph_op; "?" else. */
const char *rkaccel_graph_op_name(uint32_t op);

/* --- native layouts -------------------------------------------------------- */

/*
 * The NPU reads and writes feature maps as planes of 16-byte atoms
 * (NC1HWC2): 16 int8 or 4 int32 channels of one row per atom, a plane per
 * atom's worth of channels, rows padded to a multiple of 4 per plane and
 * channels to a multiple of 32. Documentation/datapath.rst ("Data layouts")
 * has the picture.
 */

/* rkaccel_native_size - bytes of @rows x @channels elements of @elem_bytes (1 or 4). */
size_t rkaccel_native_size(uint32_t rows, uint32_t channels, uint32_t elem_bytes);

/*
 * rkaccel_to_native - row-major int8 @src [@rows][@channels] into the native
 * layout at @dst (@dst_len bytes, at least rkaccel_native_size()); padding
 * is zeroed. -EINVAL on a zero shape or a short @dst.
 */
int rkaccel_to_native(const int8_t *src, uint32_t rows, uint32_t channels, void *dst,
		      size_t dst_len);

/*
 * rkaccel_from_native - native @src (@src_len bytes) of @elem_bytes elements
 * (1: int8, 4: int32) into row-major @dst [@rows][@channels] of the same
 * element type. -EINVAL on a zero shape, bad @elem_bytes or a short @src.
 */
int rkaccel_from_native(const void *src, size_t src_len, uint32_t rows, uint32_t channels,
			uint32_t elem_bytes, void *dst);

/*
 * rkaccel_quantize - @dst[i] = clamp(round(@src[i] / @scale) + @zero_point)
 * to int8, rounding half away from zero. @scale must be > 0.
 */
void rkaccel_quantize(const float *src, size_t n, float scale, int32_t zero_point,
		      int8_t *dst);

/*
 * rkaccel_quantize_u8 - rkaccel_quantize() of bytes (image pixels): the
 * same int8 values, through a table of the 256 (the RKNN layer's UINT8
 * inputs). Since 2.5 (LIBRKACCEL_1.7).
 */
void rkaccel_quantize_u8(const uint8_t *src, size_t n, float scale, int32_t zero_point,
			 int8_t *dst);

/*
 * rkaccel_u8_to_native - rkaccel_quantize_u8() and rkaccel_to_native() in
 * one pass: row-major bytes @src [@rows][@channels] quantized with @scale
 * and @zero_point into the native layout at @dst (@dst_len bytes), with no
 * int8 copy in between. -EINVAL on a NULL buffer, @scale not > 0, a zero
 * shape or a short @dst. Since 2.8 (LIBRKACCEL_1.10).
 */
int rkaccel_u8_to_native(const uint8_t *src, uint32_t rows, uint32_t channels, float scale,
			 int32_t zero_point, void *dst, size_t dst_len);

/* rkaccel_dequantize - @dst[i] = (@src[i] - @zero_point) * @scale. */
void rkaccel_dequantize(const int8_t *src, size_t n, float scale, int32_t zero_point,
			float *dst);

/* --- programs: a model compiled to register commands ------------------------ */

/* A model compiled for one SoC: register commands, weight image, buffer sizes. */
struct rkaccel_program;

/* The buffers a program's register commands address. */
enum rkaccel_buffer {
	RKACCEL_BUF_REGCMD,	/* the register commands themselves */
	RKACCEL_BUF_WEIGHTS,	/* native weights and folded biases: a weight BO */
	RKACCEL_BUF_INPUT,	/* native input of one inference */
	RKACCEL_BUF_OUTPUT,	/* native output of one inference */
	RKACCEL_BUF_INTERNAL,	/* activations between layers */
	RKACCEL_BUF_COUNT,
};

/* One program-counter start: a chain of hardware tasks. */
struct rkaccel_pc_start {
	uint64_t regcmd_addr;	/* NPU address of the first task */
	uint32_t regcmd_count;	/* its entries */
	uint32_t task_count;	/* hardware tasks in the chain */
	uint32_t flags;		/* drm_rkaccel_task.flags: DRM_RKACCEL_TASK_ENDS_PPU */
};

/*
 * rkaccel_program_compile - compile @desc for the device described by
 * @info: each layer becomes 1x1-convolution tasks tiled so that feature
 * map and weights of every task fit the core's convolution buffer, chained
 * through their tails. Stores the program in *@prog. -EINVAL for a model
 * rkaccel_model_validate() refuses, -ERANGE when a scale or folded bias
 * cannot be represented, -E2BIG when one inference needs more hardware
 * tasks than one job holds (@info->max_tasks: 4095 on RK3588; use fewer
 * rows per inference), -ENOMEM.
 */
int rkaccel_program_compile(const struct rkaccel_model_desc *desc,
			    const struct rkaccel_info *info, struct rkaccel_program **prog);

/*
 * rkaccel_program_compile_model - rkaccel_program_compile() for @model,
 * whose layers may read any earlier tensor and concatenate tensors along
 * channels (rkaccel_model_inputs()): a model lowered from a 3.0 graph.
 * Activations between layers share the internal buffer by lifetime (a
 * region is reused once its tensor's last reader ran); a concat costs no
 * task: its producers write their outputs into its buffer at their channel
 * offsets. rkaccel_program_size(RKACCEL_BUF_INTERNAL) is the peak of
 * activation memory. The same model gives the same program, byte for byte.
 * Errors as rkaccel_program_compile(); -EINVAL also for a concat the layout
 * cannot write in place (an input that is not the last with a channel count
 * not a multiple of 32, the model input, a tensor in two concats).
 */
int rkaccel_program_compile_model(const struct rkaccel_model *model,
				  const struct rkaccel_info *info, struct rkaccel_program **prog);

/* rkaccel_program_free - free @prog. NULL is a no-op. */
void rkaccel_program_free(struct rkaccel_program *prog);

/* rkaccel_program_size - bytes the program needs in buffer @buf (0 if unused). */
size_t rkaccel_program_size(const struct rkaccel_program *prog, enum rkaccel_buffer buf);

/* rkaccel_program_weights - the content of RKACCEL_BUF_WEIGHTS. */
const void *rkaccel_program_weights(const struct rkaccel_program *prog);

/* rkaccel_program_tasks - hardware tasks of one inference. */
uint32_t rkaccel_program_tasks(const struct rkaccel_program *prog);

/* rkaccel_program_starts - PC starts of one inference (one chain: 1 today). */
uint32_t rkaccel_program_starts(const struct rkaccel_program *prog);

/*
 * rkaccel_program_layer - layer @layer of @prog: its hardware tasks in
 * *@tasks and its modelled time on one core in *@ns (the simulator's timing
 * model at 1 GHz and 15 GB/s, Documentation/datapath.rst "Timing model":
 * each task's register fetch and first CBUF load, then its compute or its
 * other DMA, whichever is longer); 0 and 0 for a concat its producers
 * write. Either pointer may be NULL. Returns 0 or -EINVAL (NULL @prog, a
 * layer beyond the model's).
 */
int rkaccel_program_layer(const struct rkaccel_program *prog, uint32_t layer, uint32_t *tasks,
			  uint64_t *ns);

/* rkaccel_program_macs - multiply-accumulates of one inference. */
uint64_t rkaccel_program_macs(const struct rkaccel_program *prog);

/*
 * rkaccel_program_emit - write the register commands into @dst (at least
 * rkaccel_program_size(RKACCEL_BUF_REGCMD) bytes) with every address
 * patched for buffers placed at the NPU addresses @addr, and the PC starts
 * into @starts (rkaccel_program_starts() entries). -EINVAL when a buffer
 * the program uses has no address or does not fit below 4 GiB.
 */
int rkaccel_program_emit(const struct rkaccel_program *prog,
			 const uint64_t addr[RKACCEL_BUF_COUNT], void *dst,
			 struct rkaccel_pc_start *starts);

/* --- contexts: a model bound to NPU memory, single- and multi-batch ---------
 *
 * A context owns a compiled model, its buffers on one device (a sealed
 * weight BO, register commands, native input, output and activation BOs) and
 * a kernel context that jobs are queued on. rkaccel_ctx_dup() copies a
 * context for the same device without copying its weights: the copy refers
 * to the same weight BO (the same GEM handle of the same file descriptor,
 * reference counted) and program, and gets its own kernel context and
 * other buffers, with the register commands patched for their addresses.
 *
 * Multi-batch: rkaccel_ctx_set_batch(ctx, B) makes the input and output
 * sizes B times a single inference's and keeps min(B, num_cores) - 1 hidden
 * duplicates (none for B = 1, one for B = 2, two for B >= 3 on the three
 * cores of RK3588, at most one on RK3576). rkaccel_ctx_run() runs batch
 * slice i (input at i * input_size / B, output at i * output_size / B) on
 * context i mod (duplicates + 1), one thread per context, all at once; each
 * thread converts its slices to and from the native layout while the NPU
 * runs the others. Every context of a batch uses core mask 0 (any core).
 *
 * Zero-copy: rkaccel_ctx_set_io_mem() binds a struct rkaccel_mem (see
 * the memory section) as the native input or output of every slice, and
 * rkaccel_ctx_run_native() / rkaccel_ctx_run_async() run on it without
 * converting or copying anything. rkaccel_ctx_set_core_mask() pins a
 * batch-1 context to cores; rkaccel_ctx_query_tensor() describes its I/O.
 *
 * One call at a time runs or changes a context: rkaccel_ctx_run(),
 * rkaccel_ctx_run_native(), rkaccel_ctx_run_async(), rkaccel_ctx_wait(),
 * rkaccel_ctx_set_batch(), rkaccel_ctx_set_io_mem() and
 * rkaccel_ctx_set_core_mask() return -EBUSY, changing nothing, while another
 * of them is under way on the same context in another thread. Different
 * contexts (duplicates of rkaccel_ctx_dup() too) run at the same time.
 * rkaccel_ctx_destroy() must not race any call on the context, nor may the
 * functions that only read it (sizes, tensor attributes, rkaccel_ctx_io_ptr(),
 * rkaccel_ctx_slice_info()) race a change of its batch or binding. The
 * device must outlive every context on it.
 */

/* Largest batch rkaccel_ctx_set_batch() accepts. */
#define RKACCEL_CTX_MAX_BATCH	64

/** A model bound to NPU memory on one device. */
struct rkaccel_ctx;

/*
 * rkaccel_ctx_create - compile @model for @dev, create a kernel context
 * whose jobs may run on the cores in @core_mask (bit n: core n; 0 = any
 * core, chosen per job), allocate and fill its buffers and store the new
 * context, with batch 1, in *@ctx. @model may be freed afterwards.
 *
 * Returns 0 or: -EINVAL (a NULL argument, a core not on the device), the
 * errors of rkaccel_program_compile() (-ERANGE, -ENOMEM), -E2BIG (more PC
 * starts than one job takes), or the error of a failed ioctl or mmap.
 */
int rkaccel_ctx_create(struct rkaccel_device *dev, const struct rkaccel_model *model,
		       uint32_t core_mask, struct rkaccel_ctx **ctx);

/*
 * Flags of rkaccel_ctx_create_flags(). KEEP_TENSORS: every tensor of the
 * model keeps its own bytes to the end of a run (no activation memory is
 * reused: the internal BO holds them all), so that rkaccel_ctx_read_tensor()
 * can read each layer's output afterwards; the context runs one inference
 * on one core (no split over cores).
 */
#define RKACCEL_CTX_KEEP_TENSORS	(1u << 0)

/*
 * rkaccel_ctx_create_flags - rkaccel_ctx_create() with @flags
 * (RKACCEL_CTX_*). Returns its errors, and -EINVAL for an unknown flag.
 */
int rkaccel_ctx_create_flags(struct rkaccel_device *dev, const struct rkaccel_model *model,
			     uint32_t core_mask, uint32_t flags, struct rkaccel_ctx **ctx);

/*
 * rkaccel_ctx_read_tensor - after a run of @ctx (rkaccel_ctx_run(),
 * rkaccel_ctx_run_native(), or rkaccel_ctx_wait() after
 * rkaccel_ctx_run_async()), copy tensor @t of batch slice @slice (0 the
 * input, i + 1 the output of layer i: rkaccel_model_shape()) into @dst as
 * row-major [height x width][channels] elements, int8 or, for an
 * RKACCEL_LAYER_OUT_INT32 output, int32: @len must be that many bytes.
 * A context runs its slices in turn, so the activations are those of its
 * last slice: @slice must be one of the last 1 + rkaccel_ctx_copies().
 * Returns 0; -ENOTSUP for a context created without
 * RKACCEL_CTX_KEEP_TENSORS (other tensors reuse the bytes); -ESTALE for an
 * earlier slice; -EBUSY; -EINVAL for a NULL argument, @slice outside the
 * batch, @t beyond the last layer or a wrong @len.
 */
int rkaccel_ctx_read_tensor(struct rkaccel_ctx *ctx, uint32_t slice, uint32_t t, void *dst,
			    size_t len);

/*
 * rkaccel_ctx_dup - make *@dup, a copy of @src with batch 1 and core mask 0
 * that shares @src's weight BO and compiled program (no new weight memory)
 * and has its own kernel context, register command, input, output and
 * activation BOs. Memory bound to @src (rkaccel_ctx_set_io_mem()) is not
 * bound to the copy. @src and *@dup may be destroyed in either order.
 * Returns 0, -EINVAL, -ENOMEM or the error of a failed ioctl or mmap.
 */
int rkaccel_ctx_dup(struct rkaccel_ctx *src, struct rkaccel_ctx **dup);

/*
 * rkaccel_ctx_set_batch - run @batch inferences per rkaccel_ctx_run() from
 * now on (see the section comment above for the rules). With @batch > 1
 * the context's own kernel context is replaced by one with core mask 0;
 * @batch 1 restores the mask given to rkaccel_ctx_create().
 * Returns 0, -EINVAL for @batch 0 or above RKACCEL_CTX_MAX_BATCH (the
 * context is then unchanged), -EBUSY, -ENOMEM or an ioctl error.
 */
int rkaccel_ctx_set_batch(struct rkaccel_ctx *ctx, uint32_t batch);

/* rkaccel_ctx_batch - the current batch size. */
uint32_t rkaccel_ctx_batch(const struct rkaccel_ctx *ctx);

/* rkaccel_ctx_copies - hidden duplicates the batch runs on (0, 1 or 2). */
uint32_t rkaccel_ctx_copies(const struct rkaccel_ctx *ctx);

/*
 * rkaccel_ctx_input_size - bytes of the row-major int8 input of one run:
 * batch x rows x in_features.
 */
size_t rkaccel_ctx_input_size(const struct rkaccel_ctx *ctx);

/*
 * rkaccel_ctx_output_size - bytes of the row-major output of one run:
 * batch x rows x out_features x (4 with RKACCEL_LAYER_OUT_INT32, else 1).
 */
size_t rkaccel_ctx_output_size(const struct rkaccel_ctx *ctx);

/*
 * rkaccel_ctx_run - run the batch synchronously: @in (@in_len bytes,
 * exactly rkaccel_ctx_input_size()) into @out (@out_len bytes, exactly
 * rkaccel_ctx_output_size()), slice by slice as described above.
 * Returns 0, -EINVAL (NULL buffer or a length that does not match),
 * -EBUSY (another call on @ctx is under way), -ENOMEM, -EAGAIN (no thread
 * could be started), the error of a failed ioctl, or the error the job's
 * fence was signalled with (-EIO, -ETIMEDOUT, -ECANCELED, ...) of a
 * failing slice; -ETIME only when a slice is still running after 10
 * minutes (a backstop: the driver ends a job within its max_job_ms). On an
 * error the content of @out is undefined.
 */
int rkaccel_ctx_run(struct rkaccel_ctx *ctx, const void *in, size_t in_len, void *out,
		    size_t out_len);

/*
 * rkaccel_ctx_run_u8 - rkaccel_ctx_run() of bytes (image pixels): @in
 * holds one uint8 per input element (@in_len is rkaccel_ctx_input_size()),
 * quantized with @scale and @zero_point as rkaccel_quantize_u8() does while
 * each slice is laid out, on the slice's own thread (rkaccel_u8_to_native()):
 * no int8 copy of the batch first. Returns what rkaccel_ctx_run() returns;
 * -EINVAL also for @scale not > 0. Since 2.8 (LIBRKACCEL_1.10).
 */
int rkaccel_ctx_run_u8(struct rkaccel_ctx *ctx, const uint8_t *in, size_t in_len, float scale,
		       int32_t zero_point, void *out, size_t out_len);

/*
 * rkaccel_ctx_slice_info - where and how long @slice of the last successful
 * rkaccel_ctx_run() ran: *@core the core index that ran its job (the kernel
 * context's last_core after the job), *@ns the nanoseconds from submit to
 * the end of the wait. Either pointer may be NULL. Returns 0, -EINVAL for a
 * slice outside the batch, -ENODATA when no run has completed since the
 * last rkaccel_ctx_set_batch().
 */
int rkaccel_ctx_slice_info(const struct rkaccel_ctx *ctx, uint32_t slice, uint32_t *core,
			   uint64_t *ns);

/*
 * --- one inference over several cores ---------------------------------------
 *
 * A batch-1 context whose core mask names two cores or more (RK3588: 0x3,
 * 0x5, 0x6, 0x7; RK3576: 0x3) runs each inference as a split program
 * (Documentation/runtime.rst, "One inference over several cores"): each
 * large layer's tasks divided among the cores by kernels or rows, the
 * others kept whole, as jobs on a kernel context per core ordered by
 * syncobjs, so that one image's latency drops. The output is bit-exact
 * against a run on one core. It is compiled on the first run with that
 * mask; its weights are a second weight BO (the layers are re-tiled).
 * Mask 0 (any core) and batches above 1 are unchanged.
 * RKACCEL_SPLIT_BOUNDARY_NS in the environment sets what the plan charges
 * each job's start (default 50000 ns).
 */

/* Most cores rkaccel_run_info reports. */
#define RKACCEL_MAX_CORES	8

/* What the last run did on the device. */
struct rkaccel_run_info {
	uint32_t jobs;		/* kernel jobs (one per slice on one core) */
	uint32_t waits;		/* syncobj waits between the jobs (cross-core order) */
	uint32_t split_layers;	/* layers whose tasks ran on several cores */
	uint32_t cores;		/* entries of core_ns the device reports */
	uint64_t core_ns[RKACCEL_MAX_CORES];	/* device time per core, ns */
	uint64_t device_ns;	/* their sum */
};

/*
 * rkaccel_ctx_run_info - what the last successful rkaccel_ctx_run() or
 * rkaccel_ctx_run_native() of @ctx did: its jobs, their waits and the device
 * time per core, read from the device file's fdinfo (drm-engine-coreN)
 * before and after the run, so jobs of other contexts on the same file at
 * the same time count too. Returns 0, -EINVAL, -ENODATA before any run.
 */
int rkaccel_ctx_run_info(const struct rkaccel_ctx *ctx, struct rkaccel_run_info *info);

/*
 * rkaccel_ctx_latency - the latency of one inference of batch-1 @ctx in
 * device time: each job of the run alone, in order, timed by the device
 * (fdinfo); the longest path through the jobs, each job starting after
 * the one before it on its core and the jobs it waits for, each charged
 * @boundary_ns for its start (the fence and submit round trip: give the
 * measured one, never 0 for a fair figure). Device times are divided by
 * @time_scale (the simulator's sim_time_scale; 1 on silicon, 0 taken as 1).
 * On one core: one job, so its device time plus @boundary_ns. Runs the
 * model: the output buffer is overwritten. Returns 0, -EINVAL (NULL, a
 * batch above 1), -EBUSY, or the error of a job.
 */
int rkaccel_ctx_latency(struct rkaccel_ctx *ctx, uint64_t boundary_ns, uint32_t time_scale,
			uint64_t *ns);

/*
 * rkaccel_model_multicore_scale - how much faster one inference of @model
 * is on the cores of @core_mask than on its lowest core alone:
 * rkaccel_ctx_latency() of a context on the lowest core over that of a
 * context on @core_mask, both planned and charged with @boundary_ns.
 * *@scale gets the ratio, *@one_ns and *@all_ns (when non-NULL) the two
 * latencies. Returns 0, -EINVAL, or the errors of rkaccel_ctx_create() and
 * rkaccel_ctx_latency().
 */
int rkaccel_model_multicore_scale(struct rkaccel_device *dev, const struct rkaccel_model *model,
				  uint32_t core_mask, uint64_t boundary_ns, uint32_t time_scale,
				  double *scale, uint64_t *one_ns, uint64_t *all_ns);

/*
 * rkaccel_model_layer_times - the device time of each layer of @model on
 * core @core: the single-core program's tasks run as one job a layer (the
 * same tasks and weights as rkaccel_ctx_create()'s program), each job alone
 * and timed by the device (fdinfo's per-core time; on the simulated NPU
 * the timing model's), on an input of zeros (the NPU's time does not depend
 * on the values). Writes up to @max times, ns, to @ns: layer i's at [i], 0
 * for a layer without tasks (a concat its producers write in place).
 * Returns the number of layers, or -EINVAL (NULL, @ns NULL with @max, a
 * core not on the device), -ENOMEM, -E2BIG, the error of a job, or -EPROTO
 * should the per-layer program's weights ever differ from the context's.
 */
int rkaccel_model_layer_times(struct rkaccel_device *dev, const struct rkaccel_model *model,
			      uint32_t core, uint64_t *ns, uint32_t max);

/*
 * rkaccel_ctx_bo_handle - the GEM handle (of rkaccel_fd()) of @ctx's
 * buffer @buf, 0 when the program uses none. Duplicates report the same
 * RKACCEL_BUF_WEIGHTS handle as the context they were copied from.
 */
uint32_t rkaccel_ctx_bo_handle(const struct rkaccel_ctx *ctx, enum rkaccel_buffer buf);

/* rkaccel_ctx_kernel_handle - the handle of the kernel context (DRM_IOCTL_RKACCEL_CTX_*). */
uint32_t rkaccel_ctx_kernel_handle(const struct rkaccel_ctx *ctx);

/*
 * rkaccel_ctx_destroy - destroy the hidden duplicates, the kernel context
 * and syncobj, unmap and close the BOs; the weight BO and program go with
 * the last context sharing them. It does not wait: jobs still queued by
 * rkaccel_ctx_run_async() run to completion on the BOs the kernel holds for
 * them, and their fences still signal. Bound memory stays the caller's.
 * NULL is a no-op.
 */
void rkaccel_ctx_destroy(struct rkaccel_ctx *ctx);


/*
 * rkaccel_ctx_set_core_mask - let the jobs of @ctx run only on the cores in
 * @mask (bit n: core n; 0 = any core), replacing its kernel context by one
 * with that mask; rkaccel_ctx_set_batch(ctx, 1) keeps it from then on.
 * Only for batch 1: a batch runs with mask 0 on every context.
 * Returns 0, -EINVAL (NULL @ctx, a bit naming a core the device does not
 * have, or a batch above 1; the context is then unchanged), -EBUSY or an
 * ioctl error.
 */
int rkaccel_ctx_set_core_mask(struct rkaccel_ctx *ctx, uint32_t mask);

/* Element types of struct rkaccel_tensor_attr (the RKNN values). */
#define RKACCEL_TENSOR_INT8	2
#define RKACCEL_TENSOR_INT32	6

/* Shape, type and sizes of a context's input or output for its current batch. */
struct rkaccel_tensor_attr {
	uint32_t n_dims;	/* 3 */
	uint32_t dims[4];	/* { batch, rows, features, 0 } */
	uint32_t type;		/* RKACCEL_TENSOR_INT8, or INT32 for an OUT_INT32 output */
	float scale;		/* real = (q - zero_point) * scale */
	int32_t zero_point;	/* 0 for INT32 */
	size_t size;		/* row-major bytes of the whole batch (rkaccel_ctx_*_size()) */
	size_t native_size;	/* native-layout bytes of the whole batch: batch x
				 * rkaccel_native_size(rows, features, elem bytes) */
};

/*
 * rkaccel_ctx_query_tensor - describe buffer @which (RKACCEL_BUF_INPUT or
 * RKACCEL_BUF_OUTPUT) of @ctx in *@attr. The quantization is the model's:
 * in_scale / in_zero_point of the first layer for the input, out_scale /
 * out_zero_point of the last layer for the output (with OUT_INT32,
 * in_scale x weight_scale and 0). Returns 0 or -EINVAL.
 */
int rkaccel_ctx_query_tensor(const struct rkaccel_ctx *ctx, enum rkaccel_buffer which,
			     struct rkaccel_tensor_attr *attr);

struct rkaccel_mem;	/* see the memory section below */

/*
 * rkaccel_ctx_set_io_mem - from now on run the input (@which
 * RKACCEL_BUF_INPUT) or the output (RKACCEL_BUF_OUTPUT) of @ctx in @mem,
 * in the native layout: with batch B, slice i's native buffer is at @offset
 * + i * S, S = rkaccel_native_size(rows, features, elem bytes), so @mem must
 * hold B * S bytes from @offset. The register commands of every slice
 * (on @ctx and on its hidden duplicates) are emitted once here with those
 * addresses; nothing is copied when the batch runs. The context's own
 * input or output BO is then unused. rkaccel_ctx_run() still works: it
 * converts into and out of @mem. @mem NULL unbinds (@offset ignored).
 * @mem must outlive the binding, and rkaccel_ctx_set_batch() refuses a
 * batch the bound memory cannot hold. Wait for the fences of
 * rkaccel_ctx_run_async() (or with rkaccel_ctx_wait()) before rebinding or
 * changing the batch: both rewrite the register commands that queued jobs
 * read. Binding the output of one context as the input of another chains
 * them without a copy.
 * Returns 0 or -EINVAL: NULL @ctx, @which neither INPUT nor OUTPUT, @mem
 * of another device, @offset not a multiple of RKACCEL_MEM_ALIGN, or
 * @offset + B * S beyond rkaccel_mem_size(@mem); -EBUSY; -ENOMEM or an
 * ioctl/mmap error (the binding is then the previous one).
 */
int rkaccel_ctx_set_io_mem(struct rkaccel_ctx *ctx, enum rkaccel_buffer which,
			   struct rkaccel_mem *mem, size_t offset);

/*
 * rkaccel_ctx_io_ptr - the CPU address the NPU reads slice @slice's native
 * input from (@which RKACCEL_BUF_INPUT) or writes its native output to
 * (RKACCEL_BUF_OUTPUT): inside the bound mem, or else in the own BO of the
 * context (duplicate) that runs the slice. NULL for bad arguments or a
 * slice outside the batch.
 */
void *rkaccel_ctx_io_ptr(const struct rkaccel_ctx *ctx, enum rkaccel_buffer which,
			 uint32_t slice);

/*
 * rkaccel_ctx_run_native - run the batch synchronously on the native data
 * already at rkaccel_ctx_io_ptr(ctx, RKACCEL_BUF_INPUT, i) for every slice
 * i, leaving the native results at rkaccel_ctx_io_ptr(ctx,
 * RKACCEL_BUF_OUTPUT, i): no layout conversion and no copy in the library.
 * Slices are spread over the contexts as rkaccel_ctx_run() does and
 * rkaccel_ctx_slice_info() reports them.
 * Returns 0, -EINVAL (NULL @ctx; a buffer left unbound while the batch is
 * larger than 1 + rkaccel_ctx_copies(), so that slices would share it),
 * -EBUSY, -EAGAIN, an ioctl error or the error a job's fence carries.
 */
int rkaccel_ctx_run_native(struct rkaccel_ctx *ctx);

/*
 * rkaccel_ctx_run_async - queue the batch as rkaccel_ctx_run_native() runs
 * it, without waiting: every slice's job is submitted at once (jobs on the
 * same context run in order), each waiting for @in_fence_fd first when it
 * is not -1 (a sync_file fd; it stays the caller's). Stores in
 * *@out_fence_fd a new sync_file fd (the caller closes it) that signals
 * when every slice is done, with an error status (SYNC_IOC_FILE_INFO) when
 * a job failed. poll(2) it for POLLIN, or pass it as the in-fence of the
 * next run. Until it signals the bound memory belongs to the NPU and
 * rkaccel_ctx_slice_info() reports nothing for this run.
 *
 * It never waits for a job. A sync_file merge drops fences that have
 * already signalled, and their errors with them: so when a slice's job has
 * already failed by the time the fences are merged, the call returns that
 * job's error (-EIO, -ETIMEDOUT, -ECANCELED, ...) and no fence.
 *
 * Returns 0, -EINVAL as rkaccel_ctx_run_native() or for a NULL
 * @out_fence_fd, -EBUSY, the error of an import, submit, export or merge,
 * or the error of a slice that already failed. On an error the jobs
 * already queued still run: rkaccel_ctx_wait() waits for them.
 */
int rkaccel_ctx_run_async(struct rkaccel_ctx *ctx, int in_fence_fd, int *out_fence_fd);

/*
 * rkaccel_ctx_wait - wait until every job queued on @ctx and its hidden
 * duplicates has ended, successfully or not (their errors are reported by
 * the runs and fences), for at most @timeout_ns nanoseconds (negative: no
 * limit). For the jobs left running after rkaccel_ctx_run_async() failed,
 * or before rebinding memory or changing the batch.
 * Returns 0, -ETIME when the time ran out first, -EINVAL, -EBUSY or an
 * ioctl error.
 */
int rkaccel_ctx_wait(struct rkaccel_ctx *ctx, int64_t timeout_ns);

/* --- pipes: pipelined batches ------------------------------------------------
 *
 * A pipe keeps up to @depth runs of a context's batch in flight, so that the
 * host work of the next batch (converting its input to the native layout and
 * copying it in) and of the last one (converting its output back) overlaps
 * the NPU's time on the current one. Each of the @depth slots is a duplicate
 * of the context (rkaccel_ctx_dup(): weights held once) with the context's
 * batch, its hidden copies, and its own native input and output memory
 * bound for every slice (rkaccel_ctx_set_io_mem()); a run is queued with
 * rkaccel_ctx_run_async() and its fence kept until it is popped. Runs come
 * out in the order they went in. With depth 2, push two batches, then pop
 * one and push the next in a loop: while the host converts batch n + 1 in
 * and batch n - 1 out, the cores run batch n, and the jobs of batch n + 1
 * are already queued behind it, so no core waits for the host.
 *
 * One call at a time on a pipe (a second one from another thread gets
 * -EBUSY); different pipes, and the context it was made from, may be used
 * at the same time.
 */

/* Deepest pipe rkaccel_pipe_create() accepts. */
#define RKACCEL_PIPE_MAX_DEPTH	8

/** Runs of one context's batch in flight, taken out in order (opaque). */
struct rkaccel_pipe;

/*
 * rkaccel_pipe_create - make *@pipe with @depth slots for runs of @ctx's
 * current batch (and its core mask, for batch 1). @ctx is only copied: it
 * stays usable and may be destroyed before the pipe. Input and output are
 * row-major, of rkaccel_ctx_input_size(@ctx) and
 * rkaccel_ctx_output_size(@ctx) bytes, as for rkaccel_ctx_run().
 * Returns 0, -EINVAL (NULL argument, @depth 0 or above
 * RKACCEL_PIPE_MAX_DEPTH), -ENOMEM, or the error of a dup, allocation,
 * binding or ioctl underneath (nothing is left allocated then).
 */
int rkaccel_pipe_create(struct rkaccel_ctx *ctx, uint32_t depth, struct rkaccel_pipe **pipe);

/*
 * rkaccel_pipe_push - convert the batch @in (@in_len bytes, exactly the
 * input size) into the next free slot's native memory and queue it on the
 * NPU without waiting. Returns 0; -EINVAL (NULL argument, a length that
 * does not match); -EAGAIN when @depth runs are in flight (pop one first);
 * -EBUSY; or the error of rkaccel_ctx_run_async(), including that of a
 * job that has already failed. On an error nothing is queued: the jobs
 * already submitted for the batch are waited for before the call returns,
 * and the slot stays free (after a failed job with fresh kernel contexts:
 * the driver may refuse further jobs of a context whose job failed).
 */
int rkaccel_pipe_push(struct rkaccel_pipe *pipe, const void *in, size_t in_len);

/*
 * rkaccel_pipe_pop - wait for the oldest run in flight, for at most
 * @timeout_ns nanoseconds (0: do not wait; negative: no limit), and
 * convert its result into @out (@out_len bytes, exactly the output size).
 * The slot is then free. Returns 0; -EINVAL (NULL argument, a length that
 * does not match); -ENODATA when no run is in flight; -ETIME when the time
 * ran out (the run stays in flight); -EBUSY; or the error a job of the run
 * ended with (-EIO, -ETIMEDOUT, -ECANCELED, ...): the run is then taken out,
 * @out is undefined, and the slot gets fresh kernel contexts, so that the
 * pipe goes on working.
 */
int rkaccel_pipe_pop(struct rkaccel_pipe *pipe, void *out, size_t out_len, int64_t timeout_ns);

/* rkaccel_pipe_pending - runs in flight: pushed and not yet popped (0 for NULL). */
uint32_t rkaccel_pipe_pending(const struct rkaccel_pipe *pipe);

/*
 * rkaccel_pipe_poll_fd - the sync_file fd of the oldest run in flight, for
 * poll(2) (POLLIN when rkaccel_pipe_pop() will not wait). It stays the
 * pipe's: valid until that run is popped; do not close it. Returns the fd,
 * -EINVAL for NULL or -ENODATA when no run is in flight.
 */
int rkaccel_pipe_poll_fd(const struct rkaccel_pipe *pipe);

/*
 * rkaccel_pipe_destroy - free @pipe: its duplicates and memory. It does not
 * wait: runs still in flight finish on the buffers the kernel holds for
 * them, and their results are dropped. NULL is a no-op.
 */
void rkaccel_pipe_destroy(struct rkaccel_pipe *pipe);

/* --- memory: buffers the CPU and the NPU share (zero-copy) ------------------
 *
 * A struct rkaccel_mem is a BO of one device mapped into the caller's address
 * space (rkaccel_mem_ptr()) and into that device's NPU address space
 * (rkaccel_mem_npu_addr()). What the CPU writes at the one the NPU reads at
 * the other, with no copy in between: bind it to a context with
 * rkaccel_ctx_set_io_mem(). A mem may be exported as a dma-buf fd and
 * imported on another device file (or by another process) with
 * rkaccel_mem_from_fd(); the import has its own NPU address and handle.
 * Free every mem before closing its device.
 *
 * GEM handles: a DRM file holds one handle per BO, and PRIME gives back the
 * handle the file already has. The library counts its own holders of a
 * handle (mems and contexts alike) and closes it with the last, so
 * importing a buffer of a context or mem of the same device (a
 * self-import) shares the handle and never closes it under them. A handle
 * the application created with raw ioctls is not counted: do not import its
 * buffer through the library on the same file.
 */

/* Byte alignment rkaccel_ctx_set_io_mem() requires of an offset into a mem. */
#define RKACCEL_MEM_ALIGN	64

/** A buffer shared by the CPU and the NPU of one device (opaque). */
struct rkaccel_mem;

/*
 * rkaccel_mem_alloc - create a BO of @size bytes (rounded up to a page for
 * the mapping) on @dev, map it for the CPU and store it in *@mem. The
 * content starts zeroed. Returns 0, -EINVAL (NULL argument or @size 0),
 * -ENOMEM, or the error of the BO_CREATE ioctl or mmap(2) (-ENOSPC when the
 * NPU address space is full).
 */
int rkaccel_mem_alloc(struct rkaccel_device *dev, size_t size, struct rkaccel_mem **mem);

/*
 * rkaccel_mem_from_fd - import the dma-buf @dmabuf_fd (PRIME) on @dev, look
 * up its NPU address and mmap offset with DRM_IOCTL_RKACCEL_BO_INFO, map
 * it and store it in *@mem with size @size. @dmabuf_fd stays the caller's
 * (close it whenever convenient). Importing a buffer @dev already holds
 * (exported by a mem of @dev) gives a second mem on the same GEM handle;
 * the handle is closed with the last of them.
 * Returns 0, -EINVAL (NULL argument, @dmabuf_fd negative, @size 0, @size
 * larger than the buffer, a sealed weight BO, which is read-only), -ENOMEM, or the error of the import, ioctl or mmap(2) (-EBADF
 * for an fd that is not a dma-buf the device can import).
 */
int rkaccel_mem_from_fd(struct rkaccel_device *dev, int dmabuf_fd, size_t size,
			struct rkaccel_mem **mem);

/*
 * rkaccel_mem_export - export @mem as a new dma-buf file descriptor
 * (O_CLOEXEC, read-write) in *@dmabuf_fd; the caller closes it.
 * Returns 0, -EINVAL for a NULL argument, or the PRIME ioctl error.
 */
int rkaccel_mem_export(struct rkaccel_mem *mem, int *dmabuf_fd);

/*
 * rkaccel_mem_free - unmap @mem and drop its GEM handle (the BO itself lives
 * on while a dma-buf or a queued job still holds it). A mem bound to a
 * context must be unbound (or the context destroyed) first. NULL is a no-op.
 */
void rkaccel_mem_free(struct rkaccel_mem *mem);

/* rkaccel_mem_ptr - the CPU address of byte 0, mapped read-write (NULL for NULL). */
void *rkaccel_mem_ptr(const struct rkaccel_mem *mem);

/* rkaccel_mem_size - the usable bytes at rkaccel_mem_ptr(): the size asked for. */
size_t rkaccel_mem_size(const struct rkaccel_mem *mem);

/* rkaccel_mem_npu_addr - the NPU address of byte 0 in its device's address space. */
uint64_t rkaccel_mem_npu_addr(const struct rkaccel_mem *mem);

/*
 * rkaccel_mem_handle - its GEM handle on rkaccel_fd() of its device, for
 * raw ioctls; it stays the library's (do not close it).
 */
uint32_t rkaccel_mem_handle(const struct rkaccel_mem *mem);

#ifdef __cplusplus
}
#endif

#endif /* RKACCEL_H */
