// SPDX-License-Identifier: MIT
/*
 * The graph object of model format 3.0: one allocation per table, the
 * names and the data; freed together. Parsing (parse3.c), conversion
 * (from_model3.c) and writing (write3.c) are elsewhere.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph3.h"

int g3_alloc(uint32_t num_tensors, uint32_t num_nodes, uint32_t num_edges,
	     uint32_t num_inputs, uint32_t num_outputs, size_t names_size, uint64_t data_size,
	     struct rkaccel_graph **out)
{
	struct rkaccel_graph *g = calloc(1, sizeof(*g));
	/* aligned_alloc wants a multiple of the alignment, and never 0 */
	uint64_t dsize = (data_size + G3_DATA_ALIGN - 1) / G3_DATA_ALIGN * G3_DATA_ALIGN;

	if (!g)
		return -ENOMEM;
	if (!dsize)
		dsize = G3_DATA_ALIGN;
	g->tensors = calloc(num_tensors ? num_tensors : 1, sizeof(*g->tensors));
	g->nodes = calloc(num_nodes ? num_nodes : 1, sizeof(*g->nodes));
	g->edges = calloc(num_edges ? num_edges : 1, sizeof(*g->edges));
	g->inputs = calloc(num_inputs ? num_inputs : 1, sizeof(*g->inputs));
	g->outputs = calloc(num_outputs ? num_outputs : 1, sizeof(*g->outputs));
	g->names = calloc(names_size ? names_size : 1, 1);
	g->data = dsize <= SIZE_MAX ? aligned_alloc(G3_DATA_ALIGN, (size_t)dsize) : NULL;
	if (!g->tensors || !g->nodes || !g->edges || !g->inputs || !g->outputs || !g->names ||
	    !g->data) {
		rkaccel_graph_free(g);
		return -ENOMEM;
	}
	memset(g->data, 0, (size_t)dsize);
	g->desc = (struct rkaccel_graph_desc){
		.num_tensors = num_tensors, .tensors = g->tensors,
		.num_nodes = num_nodes, .nodes = g->nodes,
		.num_inputs = num_inputs, .inputs = g->inputs,
		.num_outputs = num_outputs, .outputs = g->outputs,
	};
	*out = g;
	return 0;
}

const struct rkaccel_graph_desc *rkaccel_graph_desc(const struct rkaccel_graph *graph)
{
	return &graph->desc;
}

void rkaccel_graph_free(struct rkaccel_graph *graph)
{
	if (!graph)
		return;
	free(graph->tensors);
	free(graph->nodes);
	free(graph->edges);
	free(graph->inputs);
	free(graph->outputs);
	free(graph->names);
	free(graph->data);
	free(graph);
}
