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
 * One plane of rows into native atoms, each atom's run @run_bytes (1 to 16)
 * of a row, zero-padded: through @lut when there is one (bytes stored into
 * the atom directly: stored into a buffer, then loaded as one, they would
 * stall store forwarding), else with @flip xored into each byte. Rows below
 * @readable have 16 bytes readable at their run: one load and a mask. A
 * per-atom memcpy() of a variable size was most of an image's layout time.
 * Always inlined, so that each caller's @lut and @flip are constants.
 */
static inline __attribute__((always_inline)) void
plane_in(uint8_t *pl, const uint8_t *src, uint32_t rows, size_t row_bytes, size_t run_bytes,
	 uint32_t readable, const int8_t *lut, uint8_t flip)
{
	uint8_t mask[RKNPU_ATOM_BYTES], whole[RKNPU_ATOM_BYTES];

	for (unsigned int k = 0; k < RKNPU_ATOM_BYTES; k++)
		mask[k] = k < run_bytes ? 0xff : 0;
	for (uint32_t r = 0; r < rows; r++) {
		uint8_t *atom = pl + (size_t)r * RKNPU_ATOM_BYTES;
		const uint8_t *run = src + r * row_bytes;

		if (lut) {
			memset(atom, 0, RKNPU_ATOM_BYTES);
			for (size_t k = 0; k < run_bytes; k++)
				atom[k] = (uint8_t)lut[run[k]];
			continue;
		}
		if (r < readable) {
			memcpy(whole, run, RKNPU_ATOM_BYTES);
			for (unsigned int k = 0; k < RKNPU_ATOM_BYTES; k++)
				whole[k] = (whole[k] ^ flip) & mask[k];
		} else {
			memset(whole, 0, sizeof(whole));
			for (size_t k = 0; k < run_bytes; k++)
				whole[k] = run[k] ^ flip;
		}
		memcpy(atom, whole, RKNPU_ATOM_BYTES);
	}
}

/*
 * Row-major bytes @src [@rows][@channels] into the native planes at @dst,
 * through @lut, or xored with @flip (0x80 is @lut for scale 1 and zero point
 * -128, the quantization of pixels calibrated over 0..255: a word at a
 * time). Every atom is written whole, so only the rows past @rows at the end
 * of each plane and the planes of the channels' padding are left to clear.
 */
static void native_in(uint8_t *dst, const uint8_t *src, uint32_t rows, uint32_t channels,
		      const int8_t *lut, uint8_t flip)
{
	size_t plane = native_plane_bytes(rows), total = (size_t)rows * channels;

	for (uint32_t p = 0; p * RKNPU_ATOM_BYTES < channels; p++) {
		size_t first = (size_t)p * RKNPU_ATOM_BYTES;
		size_t run = channels - first < RKNPU_ATOM_BYTES ? channels - first : RKNPU_ATOM_BYTES;
		/* rows r with r * channels + first + 16 <= total */
		uint32_t readable = total >= first + RKNPU_ATOM_BYTES ?
				    (uint32_t)((total - first - RKNPU_ATOM_BYTES) / channels + 1) : 0;
		uint8_t *pl = dst + p * plane;

		if (lut)
			plane_in(pl, src + first, rows, channels, run, readable, lut, 0);
		else if (flip)
			plane_in(pl, src + first, rows, channels, run, readable, NULL, 0x80);
		else
			plane_in(pl, src + first, rows, channels, run, readable, NULL, 0);
		memset(pl + (size_t)rows * RKNPU_ATOM_BYTES, 0,
		       plane - (size_t)rows * RKNPU_ATOM_BYTES);
	}
}

/* Native planes of @elem_bytes elements at @src into row-major @dst, a run per atom. */
static void native_out(uint8_t *dst, const uint8_t *src, uint32_t rows, uint32_t channels,
		       uint32_t elem_bytes)
{
	uint32_t per_atom = RKNPU_ATOM_BYTES / elem_bytes;
	size_t plane = native_plane_bytes(rows), row_bytes = (size_t)channels * elem_bytes;

	for (uint32_t p = 0; p * per_atom < channels; p++) {
		uint32_t n = channels - p * per_atom < per_atom ? channels - p * per_atom : per_atom;
		size_t run_bytes = (size_t)n * elem_bytes;
		const uint8_t *pl = src + p * plane;
		uint8_t *out = dst + (size_t)p * RKNPU_ATOM_BYTES;

		for (uint32_t r = 0; r < rows; r++) {
			const uint8_t *atom = pl + (size_t)r * RKNPU_ATOM_BYTES;

			if (run_bytes == RKNPU_ATOM_BYTES)
				memcpy(out + r * row_bytes, atom, RKNPU_ATOM_BYTES);
			else	/* byte by byte: no call per atom */
				for (size_t k = 0; k < run_bytes; k++)
					out[r * row_bytes + k] = atom[k];
		}
	}
}

/* Row-major bytes @src into the native layout at @dst, through @lut or @flip. */
static int to_native(const uint8_t *src, uint32_t rows, uint32_t channels, void *dst,
		     size_t dst_len, const int8_t *lut, uint8_t flip)
{
	size_t size = rkaccel_native_size(rows, channels, 1);
	size_t data = (size_t)DIV_UP(channels, RKNPU_ATOM_BYTES) * native_plane_bytes(rows);

	if (!size || dst_len < size)
		return -EINVAL;
	/* the planes of the channels' padding up to the 32 the DPU writes */
	memset((uint8_t *)dst + data, 0, size - data);
	native_in(dst, src, rows, channels, lut, flip);
	return 0;
}

int rkaccel_to_native(const int8_t *src, uint32_t rows, uint32_t channels, void *dst,
		      size_t dst_len)
{
	return to_native((const uint8_t *)src, rows, channels, dst, dst_len, NULL, 0);
}

int rkaccel_from_native(const void *src, size_t src_len, uint32_t rows, uint32_t channels,
			uint32_t elem_bytes, void *dst)
{
	size_t size = rkaccel_native_size(rows, channels, elem_bytes);

	if (!size || src_len < size)
		return -EINVAL;
	native_out(dst, src, rows, channels, elem_bytes);
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

/* @lut[v]: rkaccel_quantize() of the byte value v, for every v. */
static void u8_table(float scale, int32_t zero_point, int8_t lut[256])
{
	for (int v = 0; v < 256; v++) {
		float f = (float)v;

		rkaccel_quantize(&f, 1, scale, zero_point, &lut[v]);
	}
}

void rkaccel_quantize_u8(const uint8_t *src, size_t n, float scale, int32_t zero_point,
			 int8_t *dst)
{
	int8_t lut[256];

	u8_table(scale, zero_point, lut);
	for (size_t i = 0; i < n; i++)
		dst[i] = lut[src[i]];
}

int rkaccel_u8_to_native(const uint8_t *src, uint32_t rows, uint32_t channels, float scale,
			 int32_t zero_point, void *dst, size_t dst_len)
{
	int8_t lut[256];
	int v = 0;

	if (!src || !dst || !(scale > 0.0f))
		return -EINVAL;
	u8_table(scale, zero_point, lut);
	while (v < 256 && lut[v] == (int8_t)(v ^ 0x80))
		v++;
	return to_native(src, rows, channels, dst, dst_len, v < 256 ? lut : NULL,
			 v < 256 ? 0 : 0x80);
}

void rkaccel_dequantize(const int8_t *src, size_t n, float scale, int32_t zero_point,
			float *dst)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = (float)(src[i] - zero_point) * scale;
}
