// SPDX-License-Identifier: MIT
/*
 * Calibration images: PNG through libpng's simplified API, JPEG through
 * libjpeg(-turbo), both to 8-bit [H][W][C] with C = 1 (gray) or 3 (RGB).
 * Errors come back as messages, never as libjpeg's default exit().
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jpeglib.h>
#include <png.h>

#include "quant.h"

#define IMG_MAX_SIDE 16384

static int png_read(const char *path, uint8_t **px, int64_t *h, int64_t *w, int64_t *c,
		    struct cv_diag *d)
{
	png_image img;

	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_file(&img, path)) {
		cv_diag_add(d, "%s: cannot decode the PNG: %s", path, img.message);
		return -1;
	}
	if (img.width > IMG_MAX_SIDE || img.height > IMG_MAX_SIDE) {
		cv_diag_add(d, "%s: image larger than %d pixels a side", path, IMG_MAX_SIDE);
		png_image_free(&img);
		return -1;
	}
	/* Gray stays one channel; anything else (palette, alpha) becomes RGB. */
	img.format = (img.format & PNG_FORMAT_FLAG_COLOR) ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
	*px = malloc(PNG_IMAGE_SIZE(img));
	if (!*px || !png_image_finish_read(&img, NULL, *px, 0, NULL)) {
		cv_diag_add(d, "%s: cannot decode the PNG: %s", path, *px ? img.message :
			    "out of memory");
		free(*px);
		png_image_free(&img);
		return -1;
	}
	*h = img.height;
	*w = img.width;
	*c = PNG_IMAGE_PIXEL_CHANNELS(img.format);
	return 0;
}

struct jpg_err {
	struct jpeg_error_mgr mgr;
	jmp_buf jump;
	char msg[JMSG_LENGTH_MAX];
};

static void jpg_error_exit(j_common_ptr cinfo)
{
	struct jpg_err *e = (struct jpg_err *)cinfo->err;

	e->mgr.format_message(cinfo, e->msg);
	longjmp(e->jump, 1);
}

static void jpg_silent(j_common_ptr cinfo, int level)
{
	(void)cinfo;
	(void)level;
}

static int jpg_read(const char *path, uint8_t **px, int64_t *h, int64_t *w, int64_t *c,
		    struct cv_diag *d)
{
	struct jpeg_decompress_struct ci;
	struct jpg_err err;
	uint8_t *volatile out = NULL;
	FILE *f = fopen(path, "rb");

	if (!f) {
		cv_diag_add(d, "%s: cannot open", path);
		return -1;
	}
	ci.err = jpeg_std_error(&err.mgr);
	err.mgr.error_exit = jpg_error_exit;
	err.mgr.emit_message = jpg_silent;
	if (setjmp(err.jump)) {
		cv_diag_add(d, "%s: cannot decode the JPEG: %s", path, err.msg);
		jpeg_destroy_decompress(&ci);
		free(out);
		fclose(f);
		return -1;
	}
	jpeg_create_decompress(&ci);
	jpeg_stdio_src(&ci, f);
	jpeg_read_header(&ci, TRUE);
	ci.out_color_space = ci.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_start_decompress(&ci);
	if (ci.output_width > IMG_MAX_SIDE || ci.output_height > IMG_MAX_SIDE) {
		snprintf(err.msg, sizeof(err.msg), "larger than %d pixels a side", IMG_MAX_SIDE);
		longjmp(err.jump, 1);
	}
	out = malloc((size_t)ci.output_width * ci.output_height * ci.output_components);
	if (!out) {
		snprintf(err.msg, sizeof(err.msg), "out of memory");
		longjmp(err.jump, 1);
	}
	while (ci.output_scanline < ci.output_height) {
		JSAMPROW row = out + (size_t)ci.output_scanline * ci.output_width *
				     ci.output_components;

		jpeg_read_scanlines(&ci, &row, 1);
	}
	jpeg_finish_decompress(&ci);
	*px = out;
	*h = ci.output_height;
	*w = ci.output_width;
	*c = ci.output_components;
	jpeg_destroy_decompress(&ci);
	fclose(f);
	return 0;
}

int cv_image_read(const char *path, uint8_t **px, int64_t *h, int64_t *w, int64_t *c,
		  struct cv_diag *d)
{
	size_t n = strlen(path);

	*px = NULL;
	if (n >= 4 && !strcasecmp(path + n - 4, ".png"))
		return png_read(path, px, h, w, c, d);
	return jpg_read(path, px, h, w, c, d);
}
