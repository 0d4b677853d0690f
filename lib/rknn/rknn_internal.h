/* SPDX-License-Identifier: MIT */
/*
 * What the files of librkaccel-rknn share: the context table, the one open
 * device, logging and error mapping (rknn_api.c), the memory registry
 * (rknn_mem.c). None of these names leaves the library: the static
 * archive keeps only the SDK's functions global, the shared one exports
 * only them (lib/rknn/librkaccel-rknn.map).
 */
#ifndef RKNN_INTERNAL_H
#define RKNN_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "rkaccel.h"
#include "rknn_api.h"

/* Most cores rknn_set_batch_core_num() can pin (librkaccel's limit too). */
#define RKNN_MAX_CORES	8

struct rknn_out_alloc {
	void *buf;
	struct rknn_out_alloc *next;
};

/* A model file's tensor as the file names and shapes it (format 3.0). */
struct rknn_file_tensor {
	char name[RKNN_MAX_NAME_LEN];
	uint32_t n_dims, dims[4];	/* dims[0] is the batch */
};

/* What a 3.0 file says beyond the chain it lowers to; graph 0 for 1.x/2.x. */
struct rknn_file_info {
	int graph;
	uint32_t batch;
	struct rknn_file_tensor io[2];	/* input, output */
	char custom[1024];		/* the file's custom string (RKNN_QUERY_CUSTOM_STRING) */
	int has_out_op;			/* a CPU op after the NPU: the output is FLOAT32 */
	struct rkaccel_output_op out_op;
};

struct rknn_ctx {
	rknn_context id;
	pthread_mutex_t lock;		/* one call at a time on the context */
	struct rkaccel_ctx *ctx;
	struct rkaccel_tensor_attr in_attr, out_attr;
	uint32_t rows, out_rows, in_features, out_features, out_bytes;	/* rows: pixels */
	uint64_t model_hash;		/* of the canonical model image: weights shared alike */
	struct rknn_file_info file;	/* names and NHWC shapes of a 3.0 file */
	int8_t *in;			/* row-major input of the whole batch */
	void *out;			/* row-major output of the last run */
	int in_set;
	int in_u8;			/* in holds uint8 pixels, quantized as laid out */
	int out_valid;			/* out holds the last run's results */
	uint64_t frames;		/* completed runs */
	int64_t last_us;
	rknn_tensor_mem *bound[2];	/* zero-copy input, output */
	size_t bound_off[2];		/* their offsets when bound */
	/* memory bound with ordinary attributes: converted at each run (rknn_io_mem.c) */
	rknn_tensor_mem *conv[2];
	size_t conv_off[2];
	rknn_tensor_type conv_type[2];
	rknn_tensor_format conv_fmt[2];
	uint8_t conv_pass[2];
	struct rknn_out_alloc *allocs;	/* outputs_get() buffers not yet released */
	uint32_t core_num;		/* of rknn_set_batch_core_num(), 0 if never set */
	uint32_t npin;			/* contexts in pin[], 0: librkaccel's batch */
	struct rkaccel_ctx *pin[RKNN_MAX_CORES];	/* pin[0] is ctx; pin[k] on core k */
	struct rknn_ctx *next;
};

/* Behind rknn_tensor_mem.priv_data; every live one is in a list. */
struct rknn_mem_priv {
	struct rkaccel_mem *mem;
	rknn_tensor_mem *pub;
	int own_fd;			/* fd is ours to close (made here, not imported) */
	int no_context;			/* RKNN_MEM_FLAG_ALLOC_NO_CONTEXT */
	struct rknn_mem_priv *next;
};

extern pthread_mutex_t g_lock;		/* the tables below */
extern struct rknn_ctx *g_ctxs;
extern struct rkaccel_device *g_dev;
extern struct rkaccel_info g_info;
extern unsigned int g_users;		/* contexts and mems on g_dev */

/* "E RKNN: ..." (error) and "W RKNN: ..." (warning) lines on stderr. */
void rknn_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rknn_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int rknn_err(int err);
int dev_get(void);
void dev_put(void);
struct rknn_ctx *ctx_get(rknn_context id);
void ctx_put(struct rknn_ctx *c);

/* rknn_api.c: attributes, and one input or output converted as the SDK does. */
void fill_attr(const struct rknn_ctx *c, int output, int native, rknn_tensor_attr *a);
int set_input(struct rknn_ctx *c, const rknn_input *in);
int get_output(struct rknn_ctx *c, rknn_output *o);

/* rknn_io_mem.c: converted bindings, before and after a run. */
int io_mem_input(struct rknn_ctx *c);
int io_mem_output(struct rknn_ctx *c);

/* The registered mem behind @m, NULL when @m is not a live one; g_lock held. */
struct rknn_mem_priv *mem_find_locked(const rknn_tensor_mem *m);
/* Whether @m is live (made here and not destroyed). */
int mem_live(const rknn_tensor_mem *m);
struct rkaccel_mem *mem_of(const rknn_tensor_mem *m);

#endif /* RKNN_INTERNAL_H */
