/* SPDX-License-Identifier: MIT */
/*
 * rknn_api.h: the calls of Rockchip's RKNN runtime API (rknn_api.h of
 * librknnrt, SDK 2.3.2), with every name, type, constant value and struct
 * layout of that header, implemented by librkaccel-rknn over librkaccel.
 * The shared library librkaccel-rknn.so exports the SDK's function names,
 * so a program built against the SDK runs on it (installed as librknnrt.so
 * on request); it runs the project's own model files
 * (Documentation/model-format.rst), not .rknn files.
 * Documentation/rknn.rst lists every call with what is supported and what
 * differs; the man page is rknn_api(3).
 *
 * Every int-returning call returns RKNN_SUCC (0) or a negative RKNN_ERR_*.
 * What this layer cannot do is refused with a code (RKNN_ERR_FAIL for a
 * call it does not implement) and a line on stderr that says why.
 */
/* The SDK header's guard too: whichever of the two comes first wins. */
#ifndef _RKNN_API_H
#define _RKNN_API_H
#define RKNN_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this layer, reported by RKNN_QUERY_SDK_VERSION. */
#define RKACCEL_RKNN_VERSION	"1.1.0"

/* rknn_init() flags. */
#define RKNN_FLAG_PRIOR_HIGH		0x00000000
#define RKNN_FLAG_PRIOR_MEDIUM		0x00000001
#define RKNN_FLAG_PRIOR_LOW		0x00000002
#define RKNN_FLAG_ASYNC_MASK		0x00000004	/* refused */
#define RKNN_FLAG_COLLECT_PERF_MASK	0x00000008
#define RKNN_FLAG_MEM_ALLOC_OUTSIDE	0x00000010	/* refused */
#define RKNN_FLAG_SHARE_WEIGHT_MEM	0x00000020
#define RKNN_FLAG_FENCE_IN_OUTSIDE	0x00000040	/* refused */
#define RKNN_FLAG_FENCE_OUT_OUTSIDE	0x00000080	/* refused */
#define RKNN_FLAG_COLLECT_MODEL_INFO_ONLY	0x00000100	/* refused */
#define RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE	0x00000200	/* refused */
#define RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU	0x00000400	/* no fallback needed */
#define RKNN_FLAG_ENABLE_SRAM		0x00000800	/* refused: no SRAM here */
#define RKNN_FLAG_SHARE_SRAM		0x00001000	/* refused: no SRAM here */
#define RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY	0x00002000	/* never raised here */
#define RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE	0x00004000	/* the driver still does */
#define RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE	0x00008000	/* the driver still does */
#define RKNN_FLAG_MODEL_BUFFER_ZERO_COPY	0x00010000	/* refused */
/* An alloc_flags bit of rknn_create_mem2(), numbered among the init flags. */
#define RKNN_MEM_FLAG_ALLOC_NO_CONTEXT	0x00020000

/* Return codes. */
#define RKNN_SUCC			0
#define RKNN_ERR_FAIL			-1
#define RKNN_ERR_TIMEOUT		-2
#define RKNN_ERR_DEVICE_UNAVAILABLE	-3
#define RKNN_ERR_MALLOC_FAIL		-4
#define RKNN_ERR_PARAM_INVALID		-5
#define RKNN_ERR_MODEL_INVALID		-6
#define RKNN_ERR_CTX_INVALID		-7
#define RKNN_ERR_INPUT_INVALID		-8
#define RKNN_ERR_OUTPUT_INVALID		-9
#define RKNN_ERR_DEVICE_UNMATCH		-10
/* "INCOMPATILE": the SDK's spelling. */
#define RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL	-11
#define RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION	-12
#define RKNN_ERR_TARGET_PLATFORM_UNMATCH	-13

#define RKNN_MAX_DIMS			16
#define RKNN_MAX_NUM_CHANNEL		15
#define RKNN_MAX_NAME_LEN		256
#define RKNN_MAX_DYNAMIC_SHAPE_NUM	512

/* A context: an id that is never reused, so a destroyed one is detected. */
#ifdef __arm__
typedef uint32_t rknn_context;
#else
typedef uint64_t rknn_context;
#endif

typedef enum _rknn_query_cmd {
	RKNN_QUERY_IN_OUT_NUM = 0,
	RKNN_QUERY_INPUT_ATTR = 1,
	RKNN_QUERY_OUTPUT_ATTR = 2,
	RKNN_QUERY_PERF_DETAIL = 3,		/* refused */
	RKNN_QUERY_PERF_RUN = 4,
	RKNN_QUERY_SDK_VERSION = 5,
	RKNN_QUERY_MEM_SIZE = 6,
	RKNN_QUERY_CUSTOM_STRING = 7,		/* "": model files carry none */
	RKNN_QUERY_NATIVE_INPUT_ATTR = 8,
	RKNN_QUERY_NATIVE_OUTPUT_ATTR = 9,
	RKNN_QUERY_NATIVE_NC1HWC2_INPUT_ATTR = 8,
	RKNN_QUERY_NATIVE_NC1HWC2_OUTPUT_ATTR = 9,
	RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR = 10,	/* refused */
	RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR = 11,	/* refused */
	RKNN_QUERY_DEVICE_MEM_INFO = 12,	/* refused, as on the SDK's RK3588 */
	RKNN_QUERY_INPUT_DYNAMIC_RANGE = 13,	/* static shapes: MODEL_INVALID */
	RKNN_QUERY_CURRENT_INPUT_ATTR = 14,	/* the static shapes' attributes */
	RKNN_QUERY_CURRENT_OUTPUT_ATTR = 15,
	RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR = 16,
	RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR = 17,
	RKNN_QUERY_CMD_MAX
} rknn_query_cmd;

typedef enum _rknn_tensor_type {
	RKNN_TENSOR_FLOAT32 = 0,
	RKNN_TENSOR_FLOAT16,
	RKNN_TENSOR_INT8,
	RKNN_TENSOR_UINT8,
	RKNN_TENSOR_INT16,
	RKNN_TENSOR_UINT16,
	RKNN_TENSOR_INT32,
	RKNN_TENSOR_UINT32,
	RKNN_TENSOR_INT64,
	RKNN_TENSOR_BOOL,
	RKNN_TENSOR_INT4,
	RKNN_TENSOR_BFLOAT16,
	RKNN_TENSOR_TYPE_MAX
} rknn_tensor_type;

/* The short names the SDK's examples print; "UNKNOW" is the SDK's spelling. */
static inline const char *get_type_string(rknn_tensor_type type)
{
	switch (type) {
	case RKNN_TENSOR_FLOAT32: return "FP32";
	case RKNN_TENSOR_FLOAT16: return "FP16";
	case RKNN_TENSOR_INT8: return "INT8";
	case RKNN_TENSOR_UINT8: return "UINT8";
	case RKNN_TENSOR_INT16: return "INT16";
	case RKNN_TENSOR_UINT16: return "UINT16";
	case RKNN_TENSOR_INT32: return "INT32";
	case RKNN_TENSOR_UINT32: return "UINT32";
	case RKNN_TENSOR_INT64: return "INT64";
	case RKNN_TENSOR_BOOL: return "BOOL";
	case RKNN_TENSOR_INT4: return "INT4";
	case RKNN_TENSOR_BFLOAT16: return "BF16";
	default: return "UNKNOW";
	}
}

typedef enum _rknn_tensor_qnt_type {
	RKNN_TENSOR_QNT_NONE = 0,
	RKNN_TENSOR_QNT_DFP,
	RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC,
	RKNN_TENSOR_QNT_MAX
} rknn_tensor_qnt_type;

static inline const char *get_qnt_type_string(rknn_tensor_qnt_type type)
{
	switch (type) {
	case RKNN_TENSOR_QNT_NONE: return "NONE";
	case RKNN_TENSOR_QNT_DFP: return "DFP";
	case RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC: return "AFFINE";
	default: return "UNKNOW";
	}
}

typedef enum _rknn_tensor_format {
	RKNN_TENSOR_NCHW = 0,
	RKNN_TENSOR_NHWC,
	RKNN_TENSOR_NC1HWC2,
	RKNN_TENSOR_UNDEFINED,
	RKNN_TENSOR_FORMAT_MAX
} rknn_tensor_format;

typedef enum _rknn_core_mask {
	RKNN_NPU_CORE_AUTO = 0,
	RKNN_NPU_CORE_0 = 1,
	RKNN_NPU_CORE_1 = 2,
	RKNN_NPU_CORE_2 = 4,
	RKNN_NPU_CORE_0_1 = RKNN_NPU_CORE_0 | RKNN_NPU_CORE_1,
	RKNN_NPU_CORE_0_1_2 = RKNN_NPU_CORE_0_1 | RKNN_NPU_CORE_2,
	RKNN_NPU_CORE_ALL = 0xffff,
	RKNN_NPU_CORE_UNDEFINED,
} rknn_core_mask;

static inline const char *get_format_string(rknn_tensor_format fmt)
{
	switch (fmt) {
	case RKNN_TENSOR_NCHW: return "NCHW";
	case RKNN_TENSOR_NHWC: return "NHWC";
	case RKNN_TENSOR_NC1HWC2: return "NC1HWC2";
	case RKNN_TENSOR_UNDEFINED: return "UNDEFINED";
	default: return "UNKNOW";
	}
}

typedef struct _rknn_input_output_num {
	uint32_t n_input;
	uint32_t n_output;
} rknn_input_output_num;

/*
 * A tensor of a model here is { batch, rows, features }: n_dims 3, fmt
 * RKNN_TENSOR_UNDEFINED (row-major), type INT8 (or INT32 for an output
 * without requantization), qnt_type AFFINE_ASYMMETRIC with zp and scale.
 * The native attributes describe the NPU's NC1HWC2 buffer.
 */
typedef struct _rknn_tensor_attr {
	uint32_t index;
	uint32_t n_dims;
	uint32_t dims[RKNN_MAX_DIMS];
	char name[RKNN_MAX_NAME_LEN];
	uint32_t n_elems;
	uint32_t size;
	rknn_tensor_format fmt;
	rknn_tensor_type type;
	rknn_tensor_qnt_type qnt_type;
	int8_t fl;
	int32_t zp;
	float scale;
	uint32_t w_stride;
	uint32_t size_with_stride;
	uint8_t pass_through;
	uint32_t h_stride;
} rknn_tensor_attr;

/*
 * The shapes a dynamic-shape input takes (RKNN_QUERY_INPUT_DYNAMIC_RANGE):
 * dyn_range[s] is shape s of shape_number. Every model here has static
 * shapes, so the query refuses; the type is the SDK's.
 */
typedef struct _rknn_input_range {
	uint32_t index;
	uint32_t shape_number;
	rknn_tensor_format fmt;
	char name[RKNN_MAX_NAME_LEN];
	uint32_t dyn_range[RKNN_MAX_DYNAMIC_SHAPE_NUM][RKNN_MAX_DIMS];
	uint32_t n_dims;
} rknn_input_range;

/* Per-layer times as text (RKNN_QUERY_PERF_DETAIL, refused here). */
typedef struct _rknn_perf_detail {
	char *perf_data;
	uint64_t data_len;
} rknn_perf_detail;

typedef struct _rknn_perf_run {
	int64_t run_duration;	/* microseconds of the last rknn_run() */
} rknn_perf_run;

typedef struct _rknn_sdk_version {
	char api_version[256];
	char drv_version[256];
} rknn_sdk_version;

typedef struct _rknn_mem_size {
	uint32_t total_weight_size;
	uint32_t total_internal_size;
	uint64_t total_dma_allocated_size;
	uint32_t total_sram_size;
	uint32_t free_sram_size;
	uint32_t reserved[10];
} rknn_mem_size;

/* The model's custom string (RKNN_QUERY_CUSTOM_STRING), NUL-terminated. */
typedef struct _rknn_custom_string {
	char string[1024];
} rknn_custom_string;

typedef enum _rknn_tensor_mem_flags {
	RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE = 1,
	RKNN_TENSOR_MEMORY_FLAGS_FROM_FD = 2,
	RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS = 3,
	RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN
} rknn_tensor_mem_flags;

/* alloc_flags of rknn_create_mem2() (RKNN_MEM_FLAG_ALLOC_NO_CONTEXT above too). */
typedef enum _rknn_mem_alloc_flags {
	RKNN_FLAG_MEMORY_FLAGS_DEFAULT = 0 << 0,	/* as CACHEABLE */
	RKNN_FLAG_MEMORY_CACHEABLE = 1 << 0,
	RKNN_FLAG_MEMORY_NON_CACHEABLE = 1 << 1,
	RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM = 1 << 2,	/* no SRAM here: all DRAM */
} rknn_mem_alloc_flags;

/* rknn_mem_sync() directions. */
typedef enum _rknn_mem_sync_mode {
	RKNN_MEMORY_SYNC_TO_DEVICE = 0x1,	/* after the CPU wrote, before the NPU reads */
	RKNN_MEMORY_SYNC_FROM_DEVICE = 0x2,	/* after the NPU wrote, before the CPU reads */
	RKNN_MEMORY_SYNC_BIDIRECTIONAL = RKNN_MEMORY_SYNC_TO_DEVICE |
					 RKNN_MEMORY_SYNC_FROM_DEVICE,
} rknn_mem_sync_mode;

/*
 * Memory the NPU and the CPU share: virt_addr is where the CPU reads and
 * writes, phys_addr the NPU address in the device's address space, fd a
 * dma-buf of it (of rknn_create_mem()/_mem2(): owned by the memory, closed
 * by rknn_destroy_mem(); of rknn_create_mem_from_fd(): the caller's),
 * offset where the data starts, size its bytes from there.
 */
typedef struct _rknn_tensor_memory {
	void *virt_addr;
	uint64_t phys_addr;
	int32_t fd;
	int32_t offset;
	uint32_t size;
	uint32_t flags;
	void *priv_data;
} rknn_tensor_mem;

typedef struct _rknn_input {
	uint32_t index;
	void *buf;
	uint32_t size;
	uint8_t pass_through;	/* 1: @buf is already the model's int8, as it is */
	rknn_tensor_type type;	/* INT8, UINT8 or FLOAT32 (quantized here) */
	rknn_tensor_format fmt;	/* NCHW, NHWC or UNDEFINED: all row-major here */
} rknn_input;

typedef struct _rknn_output {
	uint8_t want_float;	/* 1: dequantized float32 */
	uint8_t is_prealloc;	/* 1: @buf of @size bytes is the caller's */
	uint32_t index;
	void *buf;
	uint32_t size;
} rknn_output;

/*
 * rknn_init() extension. rkaccel_batch_size is this layer's, taken from
 * the SDK's reserved bytes: the batch (rknn_batch_size of the SDK's model
 * build) to run the model with, 0 or 1 for none; the project's model files
 * carry no batch.
 */
typedef struct _rknn_init_extend {
	rknn_context ctx;		/* with RKNN_FLAG_SHARE_WEIGHT_MEM: whose weights */
	int32_t real_model_offset;	/* must be 0 */
	uint32_t real_model_size;	/* must be 0 */
	int32_t model_buffer_fd;	/* must be 0 or -1 */
	uint32_t model_buffer_flags;	/* must be 0 */
	uint32_t rkaccel_batch_size;
	uint8_t reserved[108];
} rknn_init_extend;

typedef struct _rknn_run_extend {
	uint64_t frame_id;	/* set by rknn_run(): runs so far on the context */
	int32_t non_block;	/* must be 0: rknn_run() always blocks */
	int32_t timeout_ms;
	int32_t fence_fd;
} rknn_run_extend;

typedef struct _rknn_output_extend {
	uint64_t frame_id;	/* set by rknn_outputs_get(): the run it gives */
} rknn_output_extend;

/*
 * rknn_init - load a model into a new context in *@context. @model is the
 * model file's image of @size bytes, or with @size 0 a NUL-terminated path.
 * A .rknn file is refused with RKNN_ERR_MODEL_INVALID and a message on
 * stderr. @flag: RKNN_FLAG_PRIOR_* (accepted, ignored), COLLECT_PERF_MASK
 * (accepted), SHARE_WEIGHT_MEM (@extend->ctx's weights are reused: @model
 * must be the same model), and what is this layer's behaviour anyway:
 * EXECUTE_FALLBACK_PRIOR_DEVICE_GPU (every layer runs on the NPU),
 * DISABLE_PROC_HIGH_PRIORITY (the process's priority is never changed),
 * DISABLE_FLUSH_INPUT/OUTPUT_MEM_CACHE (the driver keeps the buffers
 * coherent regardless); any other flag is RKNN_ERR_PARAM_INVALID with a
 * line on stderr. @extend may be NULL; its rkaccel_batch_size sets the batch.
 */
int rknn_init(rknn_context *context, void *model, uint32_t size, uint32_t flag,
	      rknn_init_extend *extend);

/*
 * rknn_dup_context - a new context in *@context_out running the model of
 * *@context_in with the same weights (not copied) and batch, core mask AUTO.
 */
int rknn_dup_context(rknn_context *context_in, rknn_context *context_out);

/* rknn_destroy - free @context; memory created on it stays valid until destroyed. */
int rknn_destroy(rknn_context context);

/*
 * rknn_query - fill @info (@size bytes, at least the struct of @cmd) for
 * IN_OUT_NUM, INPUT_ATTR, OUTPUT_ATTR, NATIVE_INPUT_ATTR, NATIVE_OUTPUT_ATTR
 * and their CURRENT_ forms (the same: shapes are static; @info->index
 * chooses the tensor), PERF_RUN, SDK_VERSION, MEM_SIZE or CUSTOM_STRING
 * (empty: model files carry none). INPUT_DYNAMIC_RANGE is
 * RKNN_ERR_MODEL_INVALID (static shapes); the rest RKNN_ERR_PARAM_INVALID,
 * each with a line on stderr.
 */
int rknn_query(rknn_context context, rknn_query_cmd cmd, void *info, uint32_t size);

/* rknn_inputs_set - copy (and convert) the input for the next rknn_run(). */
int rknn_inputs_set(rknn_context context, uint32_t n_inputs, rknn_input inputs[]);

/*
 * rknn_set_batch_core_num - run the batch of a multi-batch context on
 * @core_num NPU cores, 1 .. the device's cores (3 on RK3588, 2 on RK3576):
 * min(@core_num, batch) contexts (the context and duplicates sharing its
 * weights), the k-th pinned to core k, one thread each; slice i on context
 * i mod that number. Until it is called, the SDK's default: min(batch,
 * cores) contexts with core mask AUTO. On a batch-1 context it succeeds and
 * changes nothing. rknn_dup_context() copies the setting. Memory bound
 * with rknn_set_io_mem() keeps working (rebound slice by slice as the
 * batch runs). RKNN_ERR_PARAM_INVALID for @core_num out of range.
 */
int rknn_set_batch_core_num(rknn_context context, int core_num);

/*
 * rknn_set_core_mask - run the context's jobs on the cores of @core_mask
 * (AUTO: any; ALL: every core of the device). Refused for a core the device
 * does not have and for a context with a batch above 1 (its contexts run
 * with AUTO, as the SDK sets them).
 */
int rknn_set_core_mask(rknn_context context, rknn_core_mask core_mask);

/* rknn_run - run the model on the input set (the whole batch), blocking. */
int rknn_run(rknn_context context, rknn_run_extend *extend);

/*
 * rknn_wait - wait for the context's run: rknn_run() blocks, so there is
 * never one left to wait for and it returns RKNN_SUCC at once (@extend's
 * frame_id set to the last run).
 */
int rknn_wait(rknn_context context, rknn_run_extend *extend);

/*
 * rknn_outputs_get - the outputs of the last run: into the caller's @buf
 * with is_prealloc, else into a buffer allocated here, which
 * rknn_outputs_release() frees.
 */
int rknn_outputs_get(rknn_context context, uint32_t n_outputs, rknn_output outputs[],
		     rknn_output_extend *extend);

/* rknn_outputs_release - free what rknn_outputs_get() allocated in @outputs. */
int rknn_outputs_release(rknn_context context, uint32_t n_ouputs, rknn_output outputs[]);

/*
 * rknn_create_mem - @size bytes the NPU and the CPU share, for
 * rknn_set_io_mem(). NULL on failure. Free it with rknn_destroy_mem() on
 * the same context (or any context of the process).
 */
rknn_tensor_mem *rknn_create_mem(rknn_context ctx, uint32_t size);

/*
 * rknn_create_mem2 - rknn_create_mem() with a 64-bit @size (at most
 * UINT32_MAX: rknn_tensor_mem.size is 32 bits) and @alloc_flags:
 * RKNN_FLAG_MEMORY_CACHEABLE or NON_CACHEABLE (the driver maps every buffer
 * alike and keeps it coherent around each job: both give the same memory),
 * TRY_ALLOC_SRAM (no SRAM here: all of it DRAM, as the SDK falls back), and
 * RKNN_MEM_FLAG_ALLOC_NO_CONTEXT: @ctx may be 0 and any context (or 0) may
 * destroy it. NULL, with a line on stderr, for anything else.
 */
rknn_tensor_mem *rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags);

/*
 * rknn_create_mem_from_fd - wrap the caller's dma-buf @fd (of this or
 * another process's rkaccel device, or any buffer the device can import):
 * @size bytes of data at @offset from its start; @virt_addr is the
 * caller's mapping of its start, or NULL for one made here. @fd stays the
 * caller's; rknn_destroy_mem() drops the import. NULL on failure.
 */
rknn_tensor_mem *rknn_create_mem_from_fd(rknn_context ctx, int32_t fd, void *virt_addr,
					  uint32_t size, int32_t offset);

/* rknn_create_mem_from_phys - NULL: no physical addresses behind the IOMMU. */
rknn_tensor_mem *rknn_create_mem_from_phys(rknn_context ctx, uint64_t phys_addr,
					    void *virt_addr, uint32_t size);

/* rknn_create_mem_from_mb_blk - NULL: no media buffer blocks (RV110x only). */
rknn_tensor_mem *rknn_create_mem_from_mb_blk(rknn_context ctx, void *mb_blk, int32_t offset);

/*
 * rknn_destroy_mem - free @mem (and its memory, when made here); unbind it
 * first (or destroy the context).
 */
int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem *mem);

/*
 * rknn_set_weight_mem, rknn_set_internal_mem - RKNN_ERR_FAIL after the
 * arguments are checked: librkaccel keeps a context's weights and
 * activations in buffers of its own and cannot place them in the caller's.
 */
int rknn_set_weight_mem(rknn_context ctx, rknn_tensor_mem *mem);
int rknn_set_internal_mem(rknn_context ctx, rknn_tensor_mem *mem);

/*
 * rknn_set_io_mem - from now on the input or output @attr->index of @ctx
 * is @mem, in the native layout: @attr must be what
 * RKNN_QUERY_NATIVE_INPUT_ATTR or _OUTPUT_ATTR gave (fmt NC1HWC2), and @mem
 * hold its size_with_stride bytes from @mem->offset. With the input bound,
 * rknn_run() reads what the application wrote there (rknn_inputs_set() is
 * not needed); with the output bound, the results are left there. @mem NULL
 * unbinds.
 */
int rknn_set_io_mem(rknn_context ctx, rknn_tensor_mem *mem, rknn_tensor_attr *attr);

/*
 * rknn_set_input_shape (deprecated in the SDK), rknn_set_input_shapes -
 * for dynamic-shape models; every model here has static shapes:
 * RKNN_ERR_MODEL_INVALID with a line on stderr.
 */
int rknn_set_input_shape(rknn_context ctx, rknn_tensor_attr *attr);
int rknn_set_input_shapes(rknn_context ctx, uint32_t n_inputs, rknn_tensor_attr attr[]);

/*
 * rknn_mem_sync - make @mem coherent in direction @mode. The driver cleans
 * every buffer of a job before it and invalidates what the job wrote before
 * its fence signals, so TO_DEVICE is a memory barrier and FROM_DEVICE waits
 * for the jobs still using @mem. @context may be 0.
 */
int rknn_mem_sync(rknn_context context, rknn_tensor_mem *mem, rknn_mem_sync_mode mode);

#ifdef __cplusplus
}
#endif

#endif /* _RKNN_API_H */
