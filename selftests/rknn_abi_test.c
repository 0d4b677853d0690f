// SPDX-License-Identifier: GPL-2.0-only
/*
 * rknn_api.h against the SDK 2.3.2 header's ABI: every value, struct size
 * and field offset (LP64) the SDK's examples use, and the prototypes,
 * checked when this file compiles (for amd64 and arm64 alike, by make);
 * at run time the inline helpers' strings. Facts, not code, from the SDK:
 * Documentation/rknn.rst.
 */

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "rknn_api.h"

#define SA(e) _Static_assert(e, #e)
#define OFF(t, f, o) SA(offsetof(t, f) == (o))
#define PROTO(f, type) SA(_Generic(&f, type: 1, default: 0))

/* Values. */
SA(RKNN_FLAG_PRIOR_HIGH == 0x0 && RKNN_FLAG_PRIOR_MEDIUM == 0x1 && RKNN_FLAG_PRIOR_LOW == 0x2);
SA(RKNN_FLAG_ASYNC_MASK == 0x4 && RKNN_FLAG_COLLECT_PERF_MASK == 0x8);
SA(RKNN_FLAG_MEM_ALLOC_OUTSIDE == 0x10 && RKNN_FLAG_SHARE_WEIGHT_MEM == 0x20);
SA(RKNN_FLAG_FENCE_IN_OUTSIDE == 0x40 && RKNN_FLAG_FENCE_OUT_OUTSIDE == 0x80);
SA(RKNN_FLAG_COLLECT_MODEL_INFO_ONLY == 0x100 && RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE == 0x200);
SA(RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU == 0x400 && RKNN_FLAG_ENABLE_SRAM == 0x800);
SA(RKNN_FLAG_SHARE_SRAM == 0x1000 && RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY == 0x2000);
SA(RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE == 0x4000);
SA(RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE == 0x8000);
SA(RKNN_FLAG_MODEL_BUFFER_ZERO_COPY == 0x10000 && RKNN_MEM_FLAG_ALLOC_NO_CONTEXT == 0x20000);
SA(RKNN_SUCC == 0 && RKNN_ERR_FAIL == -1 && RKNN_ERR_TIMEOUT == -2);
SA(RKNN_ERR_DEVICE_UNAVAILABLE == -3 && RKNN_ERR_MALLOC_FAIL == -4);
SA(RKNN_ERR_PARAM_INVALID == -5 && RKNN_ERR_MODEL_INVALID == -6 && RKNN_ERR_CTX_INVALID == -7);
SA(RKNN_ERR_INPUT_INVALID == -8 && RKNN_ERR_OUTPUT_INVALID == -9);
SA(RKNN_ERR_DEVICE_UNMATCH == -10 && RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL == -11);
SA(RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION == -12);
SA(RKNN_ERR_TARGET_PLATFORM_UNMATCH == -13);
SA(RKNN_MAX_DIMS == 16 && RKNN_MAX_NUM_CHANNEL == 15 && RKNN_MAX_NAME_LEN == 256);
SA(RKNN_MAX_DYNAMIC_SHAPE_NUM == 512);
SA(RKNN_QUERY_IN_OUT_NUM == 0 && RKNN_QUERY_INPUT_ATTR == 1 && RKNN_QUERY_OUTPUT_ATTR == 2);
SA(RKNN_QUERY_PERF_DETAIL == 3 && RKNN_QUERY_PERF_RUN == 4 && RKNN_QUERY_SDK_VERSION == 5);
SA(RKNN_QUERY_MEM_SIZE == 6 && RKNN_QUERY_CUSTOM_STRING == 7);
SA(RKNN_QUERY_NATIVE_INPUT_ATTR == 8 && RKNN_QUERY_NATIVE_OUTPUT_ATTR == 9);
SA(RKNN_QUERY_NATIVE_NC1HWC2_INPUT_ATTR == 8 && RKNN_QUERY_NATIVE_NC1HWC2_OUTPUT_ATTR == 9);
SA(RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR == 10 && RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR == 11);
SA(RKNN_QUERY_DEVICE_MEM_INFO == 12 && RKNN_QUERY_INPUT_DYNAMIC_RANGE == 13);
SA(RKNN_QUERY_CURRENT_INPUT_ATTR == 14 && RKNN_QUERY_CURRENT_OUTPUT_ATTR == 15);
SA(RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR == 16 && RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR == 17);
SA(RKNN_QUERY_CMD_MAX == 18);
SA(RKNN_TENSOR_FLOAT32 == 0 && RKNN_TENSOR_FLOAT16 == 1 && RKNN_TENSOR_INT8 == 2);
SA(RKNN_TENSOR_UINT8 == 3 && RKNN_TENSOR_INT16 == 4 && RKNN_TENSOR_UINT16 == 5);
SA(RKNN_TENSOR_INT32 == 6 && RKNN_TENSOR_UINT32 == 7 && RKNN_TENSOR_INT64 == 8);
SA(RKNN_TENSOR_BOOL == 9 && RKNN_TENSOR_INT4 == 10 && RKNN_TENSOR_BFLOAT16 == 11);
SA(RKNN_TENSOR_TYPE_MAX == 12);
SA(RKNN_TENSOR_QNT_NONE == 0 && RKNN_TENSOR_QNT_DFP == 1);
SA(RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC == 2 && RKNN_TENSOR_QNT_MAX == 3);
SA(RKNN_TENSOR_NCHW == 0 && RKNN_TENSOR_NHWC == 1 && RKNN_TENSOR_NC1HWC2 == 2);
SA(RKNN_TENSOR_UNDEFINED == 3 && RKNN_TENSOR_FORMAT_MAX == 4);
SA(RKNN_NPU_CORE_AUTO == 0 && RKNN_NPU_CORE_0 == 1 && RKNN_NPU_CORE_1 == 2);
SA(RKNN_NPU_CORE_2 == 4 && RKNN_NPU_CORE_0_1 == 3 && RKNN_NPU_CORE_0_1_2 == 7);
SA(RKNN_NPU_CORE_ALL == 0xffff && RKNN_NPU_CORE_UNDEFINED == 0x10000);
SA(RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE == 1 && RKNN_TENSOR_MEMORY_FLAGS_FROM_FD == 2);
SA(RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS == 3 && RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN == 4);
SA(RKNN_FLAG_MEMORY_FLAGS_DEFAULT == 0 && RKNN_FLAG_MEMORY_CACHEABLE == 1);
SA(RKNN_FLAG_MEMORY_NON_CACHEABLE == 2 && RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM == 4);
SA(RKNN_MEMORY_SYNC_TO_DEVICE == 1 && RKNN_MEMORY_SYNC_FROM_DEVICE == 2);
SA(RKNN_MEMORY_SYNC_BIDIRECTIONAL == 3);

/* Types: the context is 64 bits on LP64; enums are ints. */
#ifndef __arm__
SA(sizeof(rknn_context) == 8);
#endif
SA(sizeof(rknn_tensor_format) == 4 && sizeof(rknn_tensor_type) == 4);
SA(sizeof(rknn_query_cmd) == 4 && sizeof(rknn_core_mask) == 4);

/* Struct sizes and field offsets (LP64). */
#if defined(__x86_64__) || defined(__aarch64__)
SA(sizeof(rknn_input_output_num) == 8);
OFF(rknn_input_output_num, n_input, 0);
OFF(rknn_input_output_num, n_output, 4);
SA(sizeof(rknn_tensor_attr) == 376);
OFF(rknn_tensor_attr, index, 0);
OFF(rknn_tensor_attr, n_dims, 4);
OFF(rknn_tensor_attr, dims, 8);
OFF(rknn_tensor_attr, name, 72);
OFF(rknn_tensor_attr, n_elems, 328);
OFF(rknn_tensor_attr, size, 332);
OFF(rknn_tensor_attr, fmt, 336);
OFF(rknn_tensor_attr, type, 340);
OFF(rknn_tensor_attr, qnt_type, 344);
OFF(rknn_tensor_attr, fl, 348);
OFF(rknn_tensor_attr, zp, 352);
OFF(rknn_tensor_attr, scale, 356);
OFF(rknn_tensor_attr, w_stride, 360);
OFF(rknn_tensor_attr, size_with_stride, 364);
OFF(rknn_tensor_attr, pass_through, 368);
OFF(rknn_tensor_attr, h_stride, 372);
SA(sizeof(rknn_input_range) == 33040);
OFF(rknn_input_range, index, 0);
OFF(rknn_input_range, shape_number, 4);
OFF(rknn_input_range, fmt, 8);
OFF(rknn_input_range, name, 12);
OFF(rknn_input_range, dyn_range, 268);
OFF(rknn_input_range, n_dims, 33036);
SA(sizeof(rknn_perf_detail) == 16);
OFF(rknn_perf_detail, perf_data, 0);
OFF(rknn_perf_detail, data_len, 8);
SA(sizeof(rknn_perf_run) == 8);
OFF(rknn_perf_run, run_duration, 0);
SA(sizeof(rknn_sdk_version) == 512);
OFF(rknn_sdk_version, api_version, 0);
OFF(rknn_sdk_version, drv_version, 256);
SA(sizeof(rknn_mem_size) == 64);
OFF(rknn_mem_size, total_weight_size, 0);
OFF(rknn_mem_size, total_internal_size, 4);
OFF(rknn_mem_size, total_dma_allocated_size, 8);
OFF(rknn_mem_size, total_sram_size, 16);
OFF(rknn_mem_size, free_sram_size, 20);
OFF(rknn_mem_size, reserved, 24);
SA(sizeof(rknn_custom_string) == 1024);
OFF(rknn_custom_string, string, 0);
SA(sizeof(rknn_tensor_mem) == 40);
OFF(rknn_tensor_mem, virt_addr, 0);
OFF(rknn_tensor_mem, phys_addr, 8);
OFF(rknn_tensor_mem, fd, 16);
OFF(rknn_tensor_mem, offset, 20);
OFF(rknn_tensor_mem, size, 24);
OFF(rknn_tensor_mem, flags, 28);
OFF(rknn_tensor_mem, priv_data, 32);
SA(sizeof(rknn_input) == 32);
OFF(rknn_input, index, 0);
OFF(rknn_input, buf, 8);
OFF(rknn_input, size, 16);
OFF(rknn_input, pass_through, 20);
OFF(rknn_input, type, 24);
OFF(rknn_input, fmt, 28);
SA(sizeof(rknn_output) == 24);
OFF(rknn_output, want_float, 0);
OFF(rknn_output, is_prealloc, 1);
OFF(rknn_output, index, 4);
OFF(rknn_output, buf, 8);
OFF(rknn_output, size, 16);
/* Ours: the batch in the first 4 of the SDK's 112 reserved bytes at 24. */
SA(sizeof(rknn_init_extend) == 136);
OFF(rknn_init_extend, ctx, 0);
OFF(rknn_init_extend, real_model_offset, 8);
OFF(rknn_init_extend, real_model_size, 12);
OFF(rknn_init_extend, model_buffer_fd, 16);
OFF(rknn_init_extend, model_buffer_flags, 20);
OFF(rknn_init_extend, rkaccel_batch_size, 24);
SA(offsetof(rknn_init_extend, reserved) + sizeof(((rknn_init_extend *)0)->reserved) == 136);
SA(sizeof(rknn_run_extend) == 24);
OFF(rknn_run_extend, frame_id, 0);
OFF(rknn_run_extend, non_block, 8);
OFF(rknn_run_extend, timeout_ms, 12);
OFF(rknn_run_extend, fence_fd, 16);
SA(sizeof(rknn_output_extend) == 8);
OFF(rknn_output_extend, frame_id, 0);
#endif

/* The 23 prototypes, parameter for parameter. */
PROTO(rknn_init, int (*)(rknn_context *, void *, uint32_t, uint32_t, rknn_init_extend *));
PROTO(rknn_dup_context, int (*)(rknn_context *, rknn_context *));
PROTO(rknn_destroy, int (*)(rknn_context));
PROTO(rknn_query, int (*)(rknn_context, rknn_query_cmd, void *, uint32_t));
PROTO(rknn_inputs_set, int (*)(rknn_context, uint32_t, rknn_input *));
PROTO(rknn_set_batch_core_num, int (*)(rknn_context, int));
PROTO(rknn_set_core_mask, int (*)(rknn_context, rknn_core_mask));
PROTO(rknn_run, int (*)(rknn_context, rknn_run_extend *));
PROTO(rknn_wait, int (*)(rknn_context, rknn_run_extend *));
PROTO(rknn_outputs_get, int (*)(rknn_context, uint32_t, rknn_output *, rknn_output_extend *));
PROTO(rknn_outputs_release, int (*)(rknn_context, uint32_t, rknn_output *));
PROTO(rknn_create_mem_from_phys,
      rknn_tensor_mem *(*)(rknn_context, uint64_t, void *, uint32_t));
PROTO(rknn_create_mem_from_fd,
      rknn_tensor_mem *(*)(rknn_context, int32_t, void *, uint32_t, int32_t));
PROTO(rknn_create_mem_from_mb_blk, rknn_tensor_mem *(*)(rknn_context, void *, int32_t));
PROTO(rknn_create_mem, rknn_tensor_mem *(*)(rknn_context, uint32_t));
PROTO(rknn_create_mem2, rknn_tensor_mem *(*)(rknn_context, uint64_t, uint64_t));
PROTO(rknn_destroy_mem, int (*)(rknn_context, rknn_tensor_mem *));
PROTO(rknn_set_weight_mem, int (*)(rknn_context, rknn_tensor_mem *));
PROTO(rknn_set_internal_mem, int (*)(rknn_context, rknn_tensor_mem *));
PROTO(rknn_set_io_mem, int (*)(rknn_context, rknn_tensor_mem *, rknn_tensor_attr *));
PROTO(rknn_set_input_shape, int (*)(rknn_context, rknn_tensor_attr *));
PROTO(rknn_set_input_shapes, int (*)(rknn_context, uint32_t, rknn_tensor_attr *));
PROTO(rknn_mem_sync, int (*)(rknn_context, rknn_tensor_mem *, rknn_mem_sync_mode));

static int n, failed;

static void check(const char *got, const char *want, const char *what)
{
	int ok = !strcmp(got, want);

	printf("%sok %d %s: \"%s\"\n", ok ? "" : "not ", ++n, what, got);
	failed |= !ok;
}

int main(void)
{
	static const char *const types[] = { "FP32", "FP16", "INT8", "UINT8", "INT16", "UINT16",
					     "INT32", "UINT32", "INT64", "BOOL", "INT4", "BF16",
					     "UNKNOW" };
	static const char *const qnts[] = { "NONE", "DFP", "AFFINE", "UNKNOW" };
	static const char *const fmts[] = { "NCHW", "NHWC", "NC1HWC2", "UNDEFINED", "UNKNOW" };
	char what[64];
	int i;

	printf("TAP version 13\n1..%zu\n", sizeof(types) / sizeof(types[0]) + 1 +
	       sizeof(qnts) / sizeof(qnts[0]) + 1 + sizeof(fmts) / sizeof(fmts[0]) + 1);
	for (i = 0; i <= RKNN_TENSOR_TYPE_MAX; i++) {
		snprintf(what, sizeof(what), "get_type_string(%d)", i);
		check(get_type_string((rknn_tensor_type)i), types[i], what);
	}
	check(get_type_string((rknn_tensor_type)-1), "UNKNOW", "get_type_string(-1)");
	for (i = 0; i <= RKNN_TENSOR_QNT_MAX; i++) {
		snprintf(what, sizeof(what), "get_qnt_type_string(%d)", i);
		check(get_qnt_type_string((rknn_tensor_qnt_type)i), qnts[i], what);
	}
	check(get_qnt_type_string((rknn_tensor_qnt_type)99), "UNKNOW", "get_qnt_type_string(99)");
	for (i = 0; i <= RKNN_TENSOR_FORMAT_MAX; i++) {
		snprintf(what, sizeof(what), "get_format_string(%d)", i);
		check(get_format_string((rknn_tensor_format)i), fmts[i], what);
	}
	check(get_format_string((rknn_tensor_format)99), "UNKNOW", "get_format_string(99)");
	return failed;
}
