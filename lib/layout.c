// SPDX-License-Identifier: MIT
/* Native feature-map layout and int8 quantization helpers. */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "internal.h"

size_t rkaccel_native_size(uint32_t rows, uint32_t channels, uint32_t elem_bytes)
{
	if (!rows || !channels || (elem_bytes != 1 && elem_bytes != 4))
		return 0;
	return (size_t)native_planes(channels, elem_bytes) * native_plane_bytes(rows);
}

/* Byte offset of element (@row, @ch) in a native map of @rows rows. */
static size_t native_offset(uint32_t rows, uint32_t row, uint32_t ch, uint32_t elem_bytes)
{
	uint32_t per_atom = RKNPU_ATOM_BYTES / elem_bytes;

	return (size_t)(ch / per_atom) * native_plane_bytes(rows) +
	       (size_t)row * RKNPU_ATOM_BYTES + (ch % per_atom) * elem_bytes;
}

int rkaccel_to_native(const int8_t *src, uint32_t rows, uint32_t channels, void *dst,
		      size_t dst_len)
{
	size_t size = rkaccel_native_size(rows, channels, 1);
	uint8_t *out = dst;
	uint32_t r, c;

	if (!size || dst_len < size)
		return -EINVAL;
	memset(out, 0, size);
	for (r = 0; r < rows; r++)
		for (c = 0; c < channels; c++)
			out[native_offset(rows, r, c, 1)] = (uint8_t)src[(size_t)r * channels + c];
	return 0;
}

int rkaccel_from_native(const void *src, size_t src_len, uint32_t rows, uint32_t channels,
			uint32_t elem_bytes, void *dst)
{
	size_t size = rkaccel_native_size(rows, channels, elem_bytes);
	const uint8_t *in = src;
	uint8_t *out = dst;
	uint32_t r, c;

	if (!size || src_len < size)
		return -EINVAL;
	for (r = 0; r < rows; r++)
		for (c = 0; c < channels; c++)
			memcpy(out + ((size_t)r * channels + c) * elem_bytes,
			       in + native_offset(rows, r, c, elem_bytes), elem_bytes);
	return 0;
}

void rkaccel_quantize(const float *src, size_t n, float scale, int32_t zero_point,
		      int8_t *dst)
{
	size_t i;

	for (i = 0; i < n; i++) {
		float q = roundf(src[i] / scale) + (float)zero_point;

		if (isnan(q))
			q = (float)zero_point;

		dst[i] = (int8_t)(q < -128.0f ? -128 : q > 127.0f ? 127 : (int)q);
	}
}

void rkaccel_dequantize(const int8_t *src, size_t n, float scale, int32_t zero_point,
			float *dst)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = (float)(src[i] - zero_point) * scale;
}
