// SPDX-License-Identifier: GPL-2.0-only
/*
 * cpu_ref: the CPU reference of a model file (an MLP, or a 2.0 network
 * through net_ref.h) over a batch of inputs, for
 * checking the NPU's results (make run). Test code: the library's run
 * path never uses it.
 *
 * usage: cpu_ref MODEL INPUT OUTPUT
 * INPUT holds B row-major int8 inputs of the model back to back; OUTPUT
 * gets the B outputs, each computed on its own.
 */

#include "net_ref.h"
#include "args.h"

static void *read_file(const char *path, size_t *len)
{
	const char *why;
	FILE *f = arg_fopen_in(path, &why);	/* a regular file, never waiting on a FIFO */
	void *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	const struct rkaccel_model_desc *d;
	struct rkaccel_tensor_shape o;
	struct rkaccel_model *model;
	size_t in_len = 0, in_one, out_one, b, batch;
	char msg[256] = "";
	const char *why;
	int8_t *in;
	uint8_t *out;
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: cpu_ref MODEL INPUT OUTPUT\n");
		return 2;
	}
	if (rkaccel_model_load(argv[1], &model, msg, sizeof(msg))) {
		fprintf(stderr, "cpu_ref: %s\n", *msg ? msg : argv[1]);
		return 1;
	}
	d = rkaccel_model_desc(model);
	in_one = (size_t)d->rows * d->layers[0].in_features;
	rkaccel_model_tensor(d, d->num_layers, &o);
	out_one = (size_t)o.height * o.width * o.channels *
		  (d->layers[d->num_layers - 1].flags & RKACCEL_LAYER_OUT_INT32 ? 4 : 1);
	in = read_file(argv[2], &in_len);
	if (!in || in_len % in_one) {
		fprintf(stderr, "cpu_ref: %s: not a whole number of %zu-byte inputs\n", argv[2],
			in_one);
		return 1;
	}
	batch = in_len / in_one;
	out = malloc(batch * out_one);
	if (!out)
		return 1;
	for (b = 0; b < batch; b++)
		if ((d->height ? ref_net : ref_model)(d, in + b * in_one, out + b * out_one))
			return 1;
	f = arg_fopen_out(argv[3], &why);
	if (!f || fwrite(out, 1, batch * out_one, f) != batch * out_one || fclose(f)) {
		fprintf(stderr, "cpu_ref: %s: cannot write\n", argv[3]);
		return 1;
	}
	printf("cpu_ref: %zu inputs of %s computed on the CPU\n", batch, argv[1]);
	free(in);
	free(out);
	rkaccel_model_free(model);
	return 0;
}
