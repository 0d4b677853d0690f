/* SPDX-License-Identifier: MIT */
/*
 * Graphs, model format 3.0: the graph object, the file layout that the
 * parser (parse3.c) and the writer (write3.c) share, and the validator's
 * pieces (validate3.c) the parser calls in two steps. The spec is
 * Documentation/model-format.rst, "Version 3.0: graphs".
 */
#ifndef RKACCEL_GRAPH3_H
#define RKACCEL_GRAPH3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "rkaccel.h"

/* A graph that owns everything its description points to. */
struct rkaccel_graph {
	struct rkaccel_graph_desc desc;
	struct rkaccel_graph_tensor *tensors;
	struct rkaccel_graph_node *nodes;
	struct rkaccel_graph_input *inputs;
	uint32_t *outputs;
	uint32_t *edges;	/* every node's inputs, node after node */
	char *names;		/* the tensor names and the custom string, NUL-terminated */
	void *data;		/* weights, biases and scale arrays, 64-byte aligned */
};

/* --- the file (little-endian; offsets in bytes) ---------------------------- */

#define G3_MAGIC		"RKML"
#define G3_HEADER_SIZE		160u
#define G3_MAX_EXT_SIZE		4096u	/* header and records of later minors */
#define G3_ALIGN		8u	/* sections */
#define G3_DATA_ALIGN		64u	/* the data section and its arrays */

/* Header. */
#define G3H_MAJOR		4
#define G3H_MINOR		6
#define G3H_HEADER_SIZE		8
#define G3H_FLAGS		12
#define G3H_BATCH		16
#define G3H_CUSTOM_OFF		20	/* into the strings section */
#define G3H_CUSTOM_LEN		24
#define G3H_RESERVED0		28
#define G3H_FILE_SIZE		32
#define G3H_CHECKSUM		40
#define G3H_RESERVED1		44
#define G3H_SECTIONS		48	/* G3_NUM_SECTIONS entries of 16 bytes */

/* Section table entry: offset (u64), count (u32), record size (u32). */
#define G3S_OFFSET		0
#define G3S_COUNT		8
#define G3S_RECORD_SIZE		12
#define G3S_ENTRY_SIZE		16u

enum g3_section {
	G3_TENSORS,
	G3_NODES,
	G3_EDGES,	/* u32 tensor indices: the nodes' inputs */
	G3_INPUTS,
	G3_OUTPUTS,
	G3_STRINGS,	/* bytes */
	G3_DATA,	/* bytes */
	G3_NUM_SECTIONS,
};

/* Tensor record. */
#define G3T_NAME_OFF		0
#define G3T_NAME_LEN		4
#define G3T_TYPE		8
#define G3T_N_DIMS		12
#define G3T_DIMS		16	/* 4 x u32 */
#define G3T_SCALE		32
#define G3T_ZERO_POINT		36
#define G3T_RESERVED		40	/* to 48 */
#define G3T_SIZE		48u

/* Node record. */
#define G3N_OP			0
#define G3N_OUTPUT		4
#define G3N_INPUT_FIRST		8
#define G3N_NUM_INPUTS		12
#define G3N_KERNEL_H		16
#define G3N_KERNEL_W		20
#define G3N_STRIDE_H		24
#define G3N_STRIDE_W		28
#define G3N_PAD_TOP		32
#define G3N_PAD_LEFT		36
#define G3N_PAD_BOTTOM		40
#define G3N_PAD_RIGHT		44
#define G3N_DILATION_H		48
#define G3N_DILATION_W		52
#define G3N_GROUPS		56
#define G3N_FLAGS		60
#define G3N_AXIS		64
#define G3N_ACT			68
#define G3N_CLIP_MIN		72
#define G3N_CLIP_MAX		76
#define G3N_LEAKY_SLOPE		80
#define G3N_WEIGHT_SCALE	84
#define G3N_WEIGHTS		88	/* offset, size (u32 each) in the data section */
#define G3N_BIAS		96
#define G3N_WSCALES		104
#define G3N_RESERVED		112	/* to 128 */
#define G3N_SIZE		128u

/* Graph input record. */
#define G3I_TENSOR		0
#define G3I_CHANNEL_ORDER	4
#define G3I_MEAN		8	/* offset, size in the data section */
#define G3I_STD			16
#define G3I_RESERVED		24	/* to 32 */
#define G3I_SIZE		32u

/* Graph output record. */
#define G3O_TENSOR		0
#define G3O_RESERVED		4	/* to 8 */
#define G3O_SIZE		8u

/* Edge record: one u32. */
#define G3E_SIZE		4u

/* Caps of the sections without a count cap of their own. */
#define G3_MAX_STRINGS		(RKACCEL_GRAPH_MAX_TENSORS * (RKACCEL_GRAPH_MAX_NAME + 1) + \
				 RKACCEL_GRAPH_MAX_CUSTOM)

/* --- little-endian access ---------------------------------------------------- */

static inline uint32_t g3_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t g3_get64(const uint8_t *p)
{
	return (uint64_t)g3_get32(p) | (uint64_t)g3_get32(p + 4) << 32;
}

static inline void g3_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void g3_put64(uint8_t *p, uint64_t v)
{
	g3_put32(p, (uint32_t)v);
	g3_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t g3_fbits(float f)
{
	uint32_t u;

	__builtin_memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float g3_bitsf(uint32_t u)
{
	float f;

	__builtin_memcpy(&f, &u, sizeof(f));
	return f;
}

/* --- validate3.c --------------------------------------------------------------- */

/* Refusals go through model_bad() (model.h). */

/*
 * Every rule that does not read an array (weights, bias, weight_scales, mean,
 * std): counts, tensors, names, nodes, order, shapes. After it the sizes
 * below are bounded and safe to compute.
 */
int g3_check_structure(const struct rkaccel_graph_desc *d, char *msg, size_t msg_len);
/* The arrays: present where required, values in range. */
int g3_check_arrays(const struct rkaccel_graph_desc *d, char *msg, size_t msg_len);

/* Whether @op has weights and bias (convolutions, FC). */
bool g3_has_weights(uint32_t op);
/* Bytes of node @n's weights and bias; of its per-channel scales when present. */
uint64_t g3_weights_size(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n);
uint64_t g3_bias_size(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n);
uint64_t g3_wscales_size(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n);
/* (Per-channel scales: their size whether or not the node has them.) */
/* Channels (last dimension) of tensor @t. */
uint32_t g3_channels(const struct rkaccel_graph_tensor *t);

/* --- graph3.c: the object ------------------------------------------------------- */

/*
 * A graph with room for @d's counts; @data_size bytes of zeroed, 64-byte
 * aligned data. Tables are zeroed; the caller fills them in.
 */
int g3_alloc(uint32_t num_tensors, uint32_t num_nodes, uint32_t num_edges,
	     uint32_t num_inputs, uint32_t num_outputs, size_t names_size, uint64_t data_size,
	     struct rkaccel_graph **out);

#endif /* RKACCEL_GRAPH3_H */
