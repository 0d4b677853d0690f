// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tiling that never gives up (issue 26, item 3), on the host: every
 * distinct convolution, depthwise, pool and fully connected layer shape of
 * MobileNetV1/V2-224, ResNet-18/50-224, SqueezeNet 1.1, VGG-16 (and
 * AlexNet's first layer) compiles as a single-layer model for an RK3588
 * core (384 KiB CBUF, 4095 tasks a job). Each line of TAP gives the tasks
 * the layer takes and a lower bound no split can beat: the weights over
 * the banks left when one holds data and one is Mesa's spare, and for a
 * pool its input planes over the CBUF. Needs no device: scripts/check-host.sh
 * runs it.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rkaccel.h"

#define CBUF_BYTES	(384u * 1024)
#define BANK_BYTES	32768u

struct shape {
	const char *net, *input, *layer;
};

/* Distinct layer shapes, as net descriptions (Documentation/model-format.rst). */
static const struct shape shapes[] = {
	{ "alexnet", "224x224x3", "conv 11x11 s4 c64 pad 2" },
	{ "mobilenetv1", "224x224x3", "conv 3x3 s2 c32 pad 0,0,1,1" },
	{ "mobilenetv1", "112x112x32", "dw 3x3 s1" },
	{ "mobilenetv1", "112x112x32", "pw c64" },
	{ "mobilenetv1", "112x112x64", "dw 3x3 s2 pad 0,0,1,1" },
	{ "mobilenetv1", "56x56x64", "pw c128" },
	{ "mobilenetv1", "56x56x128", "dw 3x3 s1" },
	{ "mobilenetv1", "56x56x128", "pw c128" },
	{ "mobilenetv1", "56x56x128", "dw 3x3 s2 pad 0,0,1,1" },
	{ "mobilenetv1", "28x28x128", "pw c256" },
	{ "mobilenetv1", "28x28x256", "dw 3x3 s1" },
	{ "mobilenetv1", "28x28x256", "pw c256" },
	{ "mobilenetv1", "28x28x256", "dw 3x3 s2 pad 0,0,1,1" },
	{ "mobilenetv1", "14x14x256", "pw c512" },
	{ "mobilenetv1", "14x14x512", "dw 3x3 s1" },
	{ "mobilenetv1", "14x14x512", "pw c512" },
	{ "mobilenetv1", "14x14x512", "dw 3x3 s2 pad 0,0,1,1" },
	{ "mobilenetv1", "7x7x512", "pw c1024" },
	{ "mobilenetv1", "7x7x1024", "dw 3x3 s1" },
	{ "mobilenetv1", "7x7x1024", "pw c1024" },
	{ "mobilenetv1", "7x7x1024", "avgpool global" },
	{ "mobilenetv1", "1x1x1024", "fc 1000" },
	{ "mobilenetv2", "224x224x3", "conv 3x3 s2 c32" },
	{ "mobilenetv2", "112x112x32", "pw c16 linear" },
	{ "mobilenetv2", "112x112x16", "pw c96" },
	{ "mobilenetv2", "112x112x96", "dw 3x3 s2" },
	{ "mobilenetv2", "56x56x96", "pw c24 linear" },
	{ "mobilenetv2", "56x56x24", "pw c144" },
	{ "mobilenetv2", "56x56x144", "dw 3x3 s1" },
	{ "mobilenetv2", "56x56x144", "pw c24 linear" },
	{ "mobilenetv2", "56x56x144", "dw 3x3 s2" },
	{ "mobilenetv2", "28x28x144", "pw c32 linear" },
	{ "mobilenetv2", "28x28x32", "pw c192" },
	{ "mobilenetv2", "28x28x192", "dw 3x3 s1" },
	{ "mobilenetv2", "28x28x192", "pw c32 linear" },
	{ "mobilenetv2", "28x28x192", "dw 3x3 s2" },
	{ "mobilenetv2", "14x14x192", "pw c64 linear" },
	{ "mobilenetv2", "14x14x64", "pw c384" },
	{ "mobilenetv2", "14x14x384", "dw 3x3 s1" },
	{ "mobilenetv2", "14x14x384", "pw c64 linear" },
	{ "mobilenetv2", "14x14x384", "pw c96 linear" },
	{ "mobilenetv2", "14x14x96", "pw c576" },
	{ "mobilenetv2", "14x14x576", "dw 3x3 s1" },
	{ "mobilenetv2", "14x14x576", "pw c96 linear" },
	{ "mobilenetv2", "14x14x576", "dw 3x3 s2" },
	{ "mobilenetv2", "7x7x576", "pw c160 linear" },
	{ "mobilenetv2", "7x7x160", "pw c960" },
	{ "mobilenetv2", "7x7x960", "dw 3x3 s1" },
	{ "mobilenetv2", "7x7x960", "pw c160 linear" },
	{ "mobilenetv2", "7x7x960", "pw c320 linear" },
	{ "mobilenetv2", "7x7x320", "pw c1280" },
	{ "mobilenetv2", "7x7x1280", "avgpool global" },
	{ "mobilenetv2", "1x1x1280", "fc 1000" },
	{ "resnet18", "224x224x3", "conv 7x7 s2 c64 pad 3" },
	{ "resnet18", "112x112x64", "maxpool 3x3 s2 pad 1" },
	{ "resnet18", "56x56x64", "conv 3x3 c64" },
	{ "resnet18", "56x56x64", "conv 3x3 s2 c128" },
	{ "resnet18", "56x56x64", "conv 1x1 s2 c128 pad 0" },
	{ "resnet18", "28x28x128", "conv 3x3 c128" },
	{ "resnet18", "28x28x128", "conv 3x3 s2 c256" },
	{ "resnet18", "28x28x128", "conv 1x1 s2 c256 pad 0" },
	{ "resnet18", "14x14x256", "conv 3x3 c256" },
	{ "resnet18", "14x14x256", "conv 3x3 s2 c512" },
	{ "resnet18", "14x14x256", "conv 1x1 s2 c512 pad 0" },
	{ "resnet18", "7x7x512", "conv 3x3 c512" },
	{ "resnet18", "7x7x512", "avgpool global" },
	{ "resnet18", "1x1x512", "fc 1000" },
	{ "resnet50", "56x56x64", "pw c64" },
	{ "resnet50", "56x56x64", "pw c256 linear" },
	{ "resnet50", "56x56x256", "pw c64" },
	{ "resnet50", "56x56x256", "pw c128" },
	{ "resnet50", "56x56x128", "conv 3x3 s2 c128" },
	{ "resnet50", "28x28x128", "pw c512 linear" },
	{ "resnet50", "56x56x256", "conv 1x1 s2 c512 pad 0 linear" },
	{ "resnet50", "28x28x512", "pw c128" },
	{ "resnet50", "28x28x512", "pw c256" },
	{ "resnet50", "28x28x256", "conv 3x3 s2 c256" },
	{ "resnet50", "14x14x256", "pw c1024 linear" },
	{ "resnet50", "28x28x512", "conv 1x1 s2 c1024 pad 0 linear" },
	{ "resnet50", "14x14x1024", "pw c256" },
	{ "resnet50", "14x14x1024", "pw c512" },
	{ "resnet50", "14x14x512", "conv 3x3 s2 c512" },
	{ "resnet50", "7x7x512", "pw c2048 linear" },
	{ "resnet50", "14x14x1024", "conv 1x1 s2 c2048 pad 0 linear" },
	{ "resnet50", "7x7x2048", "pw c512" },
	{ "resnet50", "7x7x2048", "avgpool global" },
	{ "resnet50", "1x1x2048", "fc 1000" },
	{ "squeezenet1.1", "224x224x3", "conv 3x3 s2 c64 pad 0" },
	{ "squeezenet1.1", "111x111x64", "maxpool 3x3 s2" },
	{ "squeezenet1.1", "55x55x64", "pw c16" },
	{ "squeezenet1.1", "55x55x16", "pw c64" },
	{ "squeezenet1.1", "55x55x16", "conv 3x3 c64" },
	{ "squeezenet1.1", "55x55x128", "pw c16" },
	{ "squeezenet1.1", "55x55x128", "maxpool 3x3 s2" },
	{ "squeezenet1.1", "27x27x128", "pw c32" },
	{ "squeezenet1.1", "27x27x32", "pw c128" },
	{ "squeezenet1.1", "27x27x32", "conv 3x3 c128" },
	{ "squeezenet1.1", "27x27x256", "pw c32" },
	{ "squeezenet1.1", "27x27x256", "maxpool 3x3 s2" },
	{ "squeezenet1.1", "13x13x256", "pw c48" },
	{ "squeezenet1.1", "13x13x48", "pw c192" },
	{ "squeezenet1.1", "13x13x48", "conv 3x3 c192" },
	{ "squeezenet1.1", "13x13x384", "pw c48" },
	{ "squeezenet1.1", "13x13x384", "pw c64" },
	{ "squeezenet1.1", "13x13x64", "pw c256" },
	{ "squeezenet1.1", "13x13x64", "conv 3x3 c256" },
	{ "squeezenet1.1", "13x13x512", "pw c64" },
	{ "squeezenet1.1", "13x13x512", "pw c1000" },
	{ "squeezenet1.1", "13x13x1000", "avgpool global" },
	{ "vgg16", "224x224x3", "conv 3x3 c64" },
	{ "vgg16", "224x224x64", "conv 3x3 c64" },
	{ "vgg16", "224x224x64", "maxpool 2x2 s2" },
	{ "vgg16", "112x112x64", "conv 3x3 c128" },
	{ "vgg16", "112x112x128", "conv 3x3 c128" },
	{ "vgg16", "112x112x128", "maxpool 2x2 s2" },
	{ "vgg16", "56x56x128", "conv 3x3 c256" },
	{ "vgg16", "56x56x256", "conv 3x3 c256" },
	{ "vgg16", "56x56x256", "maxpool 2x2 s2" },
	{ "vgg16", "28x28x256", "conv 3x3 c512" },
	{ "vgg16", "28x28x512", "conv 3x3 c512" },
	{ "vgg16", "28x28x512", "maxpool 2x2 s2" },
	{ "vgg16", "14x14x512", "conv 3x3 c512" },
	{ "vgg16", "14x14x512", "maxpool 2x2 s2" },
	{ "vgg16", "1x1x25088", "fc 4096 relu" },
	/* the same FC as the ONNX converter lowers it: a 7x7 kernel over the 7x7 map */
	{ "vgg16", "7x7x512", "conv 7x7 c4096 pad 0" },
	{ "vgg16", "1x1x4096", "fc 4096 relu" },
	{ "vgg16", "1x1x4096", "fc 1000" },
};

/*
 * Tasks no split can go below (see the top of the file): the weights as
 * the CNA holds them, input channels padded to 16 and kernels to 2.
 */
static uint64_t lower_bound(const struct rkaccel_layer_desc *l,
			    const struct rkaccel_tensor_shape *in)
{
	uint64_t cap = (uint64_t)(CBUF_BYTES / BANK_BYTES - 2) * BANK_BYTES;
	uint64_t taps = (uint64_t)(l->kernel_w ? l->kernel_w : 1) * (l->kernel_h ? l->kernel_h : 1);
	uint64_t cp = (l->in_features + 15) / 16 * 16, wt;

	if (l->op == RKACCEL_OP_MAXPOOL || l->op == RKACCEL_OP_AVGPOOL)
		return ((uint64_t)in->height * in->width * 16 + CBUF_BYTES - 1) / CBUF_BYTES;
	wt = l->op == RKACCEL_OP_DWCONV ? taps * cp : taps * cp * ((l->out_features + 1) / 2 * 2);
	return (wt + cap - 1) / cap;
}

/* Compile one layer; 0 and its tasks, or a negative errno with a message. */
static int plan_one(const struct shape *s, uint32_t n, char *msg, size_t msg_len,
		    uint32_t *tasks, uint64_t *bound)
{
	const struct rkaccel_info info = { .soc_name = "RK3588", .num_cores = 3,
					   .max_tasks = 4095, .cbuf_size = CBUF_BYTES };
	struct rkaccel_program *prog = NULL;
	struct rkaccel_model *m = NULL;
	struct rkaccel_tensor_shape in;
	char text[160];
	int ret;

	snprintf(text, sizeof(text), "input %s\n%s\n", s->input, s->layer);
	ret = rkaccel_model_from_text(n, text, &m, msg, msg_len);
	if (ret)
		return ret;
	ret = rkaccel_program_compile(rkaccel_model_desc(m), &info, &prog);
	if (ret) {
		snprintf(msg, msg_len, "rkaccel_program_compile: %d", ret);
	} else {
		rkaccel_model_tensor(rkaccel_model_desc(m), 0, &in);
		*tasks = rkaccel_program_tasks(prog);
		*bound = lower_bound(&rkaccel_model_desc(m)->layers[0], &in);
	}
	rkaccel_program_free(prog);
	rkaccel_model_free(m);
	return ret;
}

int main(void)
{
	uint32_t n = sizeof(shapes) / sizeof(shapes[0]), fail = 0, all = 0;

	printf("TAP version 13\n1..%u\n", n);
	for (uint32_t i = 0; i < n; i++) {
		const struct shape *s = &shapes[i];
		uint32_t tasks = 0;
		uint64_t bound = 0;
		char msg[256] = "";
		int ret = plan_one(s, i + 1, msg, sizeof(msg), &tasks, &bound);

		/* the bound counts weights only: a split below it would be a planning bug */
		if (!ret && tasks < bound) {
			snprintf(msg, sizeof(msg), "%u tasks below the bound %llu", tasks,
				 (unsigned long long)bound);
			ret = -1;
		}
		if (ret) {
			fail++;
			printf("not ok %u %s %s: %s # %s\n", i + 1, s->net, s->input, s->layer, msg);
			continue;
		}
		all += tasks;
		printf("ok %u %s %s: %s # tasks %u (bound %llu)\n", i + 1, s->net, s->input,
		       s->layer, tasks, (unsigned long long)bound);
	}
	printf("# %u layer shapes, %u tasks in all, %u failed\n", n, all, fail);
	return fail ? 1 : 0;
}
