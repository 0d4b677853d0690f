// SPDX-License-Identifier: MIT
/* Native feature-map layout and int8 quantization helpers. */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "compile.h"

size_t rkaccel_native_size(uint32_t rows, uint32_t channels, uint32_t elem_bytes)
{
	if (!rows || !channels || (elem_bytes != 1 && elem_bytes != 4))
		return 0;
	return (size_t)native_planes(channels, elem_bytes) * native_plane_bytes(rows);
}

/*
 * Copy between row-major [@rows][@channels] elements and the native planes:
 * per plane and row, one run of up to an atom's channels. Into the native
 * layout every atom is written whole (a short run zero-padded), so that
 * only the rows past @rows at the end of each plane are left to clear.
 */
static void native_copy(uint8_t *native, uint8_t *rowmajor, uint32_t rows, uint32_t channels,
			uint32_t elem_bytes, bool to_native)
{
	uint32_t per_atom = RKNPU_ATOM_BYTES / elem_bytes;
	size_t plane = native_plane_bytes(rows), row_bytes = (size_t)channels * elem_bytes;
	uint32_t p, r;

	for (p = 0; p * per_atom < channels; p++) {
		uint32_t n = channels - p * per_atom < per_atom ? channels - p * per_atom : per_atom;
		size_t run_bytes = (size_t)n * elem_bytes;
		uint8_t *pl = native + p * plane;

		for (r = 0; r < rows; r++) {
			uint8_t *atom = pl + (size_t)r * RKNPU_ATOM_BYTES;
			uint8_t *run = rowmajor + r * row_bytes + (size_t)p * per_atom * elem_bytes;
			uint8_t whole[RKNPU_ATOM_BYTES] = { 0 };

			if (!to_native) {
				memcpy(run, atom, run_bytes);
			} else if (run_bytes == RKNPU_ATOM_BYTES) {
				memcpy(atom, run, RKNPU_ATOM_BYTES);
			} else {
				memcpy(whole, run, run_bytes);
				memcpy(atom, whole, RKNPU_ATOM_BYTES);
			}
		}
		if (to_native)
			memset(pl + (size_t)rows * RKNPU_ATOM_BYTES, 0,
			       plane - (size_t)rows * RKNPU_ATOM_BYTES);
	}
}

int rkaccel_to_native(const int8_t *src, uint32_t rows, uint32_t channels, void *dst,
		      size_t dst_len)
{
	size_t size = rkaccel_native_size(rows, channels, 1);

	if (!size || dst_len < size)
		return -EINVAL;
	/* the planes of the channels' padding up to the 32 the DPU writes */
	memset((uint8_t *)dst + (size_t)DIV_UP(channels, RKNPU_ATOM_BYTES) *
	       native_plane_bytes(rows), 0,
	       size - (size_t)DIV_UP(channels, RKNPU_ATOM_BYTES) * native_plane_bytes(rows));
	native_copy(dst, (uint8_t *)src, rows, channels, 1, true);
	return 0;
}

int rkaccel_from_native(const void *src, size_t src_len, uint32_t rows, uint32_t channels,
			uint32_t elem_bytes, void *dst)
{
	size_t size = rkaccel_native_size(rows, channels, elem_bytes);

	if (!size || src_len < size)
		return -EINVAL;
	native_copy((uint8_t *)src, dst, rows, channels, elem_bytes, false);
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

void rkaccel_quantize_u8(const uint8_t *src, size_t n, float scale, int32_t zero_point,
			 int8_t *dst)
{
	int8_t lut[256];

	/* every byte value once, as rkaccel_quantize() does it */
	for (int v = 0; v < 256; v++) {
		float f = (float)v;

		rkaccel_quantize(&f, 1, scale, zero_point, &lut[v]);
	}
	for (size_t i = 0; i < n; i++)
		dst[i] = lut[src[i]];
}

void rkaccel_dequantize(const int8_t *src, size_t n, float scale, int32_t zero_point,
			float *dst)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = (float)(src[i] - zero_point) * scale;
}
