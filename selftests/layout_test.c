// SPDX-License-Identifier: GPL-2.0-only
/*
 * The native layout and quantization helpers against plain loops, on the
 * host (scripts/check-host.sh): rkaccel_to_native() writes every byte of
 * its size (data where the element goes, zero elsewhere, whatever was
 * there), rkaccel_from_native() reads it back (int8 and int32),
 * rkaccel_quantize_u8() gives rkaccel_quantize()'s values for every byte,
 * and rkaccel_u8_to_native() is the two in one pass, on its table path and
 * on its flipped-bit path (scale 1, zero point -128).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "rkaccel.h"

#define ATOM	16

/* Where element (@r, @c) of @rows rows lives in the native layout, int8. */
static size_t native_at(uint32_t rows, uint32_t r, uint32_t c)
{
	size_t plane = (size_t)(rows + 3) / 4 * 4 * ATOM;

	return c / ATOM * plane + (size_t)r * ATOM + c % ATOM;
}

TEST(to_native_writes_every_byte)
{
	srand(26);
	for (int k = 0; k < 300; k++) {
		uint32_t rows = 1 + rand() % 53, ch = 1 + rand() % 70;
		size_t size = rkaccel_native_size(rows, ch, 1);
		int8_t *src = malloc((size_t)rows * ch), *back = malloc((size_t)rows * ch);
		uint8_t *dst = malloc(size + 1), *want = calloc(1, size + 1);

		ASSERT_TRUE(src && back && dst && want);
		for (size_t i = 0; i < (size_t)rows * ch; i++)
			src[i] = (int8_t)rand();
		for (uint32_t r = 0; r < rows; r++)
			for (uint32_t c = 0; c < ch; c++)
				want[native_at(rows, r, c)] = (uint8_t)src[(size_t)r * ch + c];
		memset(dst, 0xa5, size + 1);
		ASSERT_EQ(0, rkaccel_to_native(src, rows, ch, dst, size));
		EXPECT_EQ(0, memcmp(dst, want, size)) TH_LOG("%u rows x %u channels", rows, ch);
		EXPECT_EQ(0xa5, dst[size]) TH_LOG("wrote past %zu bytes", size);
		ASSERT_EQ(0, rkaccel_from_native(dst, size, rows, ch, 1, back));
		EXPECT_EQ(0, memcmp(back, src, (size_t)rows * ch));
		free(src);
		free(back);
		free(dst);
		free(want);
	}
}

TEST(to_native_refuses_short_buffers)
{
	int8_t src[48] = { 0 };
	uint8_t dst[256];

	EXPECT_EQ(-EINVAL, rkaccel_to_native(src, 3, 16, dst, rkaccel_native_size(3, 16, 1) - 1));
	EXPECT_EQ(-EINVAL, rkaccel_to_native(src, 0, 16, dst, sizeof(dst)));
}

TEST(quantize_u8_is_quantize)
{
	static const float scales[] = { 1.0f, 0.5f, 1.0f / 255, 2.0f, 0.0078125f, 37.5f };
	static const int32_t zps[] = { -128, -1, 0, 17, 127 };
	uint8_t src[256];
	int8_t got[256], want[256];

	for (int v = 0; v < 256; v++)
		src[v] = (uint8_t)v;
	for (size_t s = 0; s < sizeof(scales) / sizeof(scales[0]); s++)
		for (size_t z = 0; z < sizeof(zps) / sizeof(zps[0]); z++) {
			rkaccel_quantize_u8(src, 256, scales[s], zps[z], got);
			for (int v = 0; v < 256; v++) {
				float f = (float)v;

				rkaccel_quantize(&f, 1, scales[s], zps[z], &want[v]);
			}
			EXPECT_EQ(0, memcmp(got, want, 256)) TH_LOG("scale %g zp %d", scales[s],
								     zps[z]);
		}
}

TEST(from_native_reads_int32)
{
	srand(27);
	for (int k = 0; k < 200; k++) {
		uint32_t rows = 1 + rand() % 41, ch = 1 + rand() % 45;
		size_t size = rkaccel_native_size(rows, ch, 4), plane = (size_t)(rows + 3) / 4 * 4 * ATOM;
		uint8_t *src = malloc(size);
		int32_t *got = malloc((size_t)rows * ch * 4);

		ASSERT_TRUE(src && got);
		for (size_t i = 0; i < size; i++)
			src[i] = (uint8_t)rand();
		ASSERT_EQ(0, rkaccel_from_native(src, size, rows, ch, 4, got));
		for (uint32_t r = 0; r < rows; r++)
			for (uint32_t c = 0; c < ch; c++) {
				int32_t want;

				memcpy(&want, src + c / 4 * plane + (size_t)r * ATOM + c % 4 * 4, 4);
				ASSERT_EQ(want, got[(size_t)r * ch + c])
					TH_LOG("%u rows x %u channels: (%u, %u)", rows, ch, r, c);
			}
		EXPECT_EQ(-EINVAL, rkaccel_from_native(src, size - 1, rows, ch, 4, got));
		free(src);
		free(got);
	}
}

TEST(u8_to_native_is_quantize_then_to_native)
{
	static const float scales[] = { 1.0f, 1.0f, 0.5f, 1.0f / 255, 2.0f };
	static const int32_t zps[] = { -128, -127, -128, 0, 17 };

	srand(28);
	for (int k = 0; k < 300; k++) {
		uint32_t rows = 1 + rand() % 53, ch = 1 + rand() % 70, q = k % 5;
		size_t n = (size_t)rows * ch, size = rkaccel_native_size(rows, ch, 1);
		uint8_t *src = malloc(n), *got = malloc(size + 1), *want = malloc(size);
		int8_t *qd = malloc(n);

		ASSERT_TRUE(src && got && want && qd);
		for (size_t i = 0; i < n; i++)
			src[i] = (uint8_t)rand();
		rkaccel_quantize_u8(src, n, scales[q], zps[q], qd);
		ASSERT_EQ(0, rkaccel_to_native(qd, rows, ch, want, size));
		memset(got, 0x5a, size + 1);
		ASSERT_EQ(0, rkaccel_u8_to_native(src, rows, ch, scales[q], zps[q], got, size));
		EXPECT_EQ(0, memcmp(got, want, size))
			TH_LOG("%u rows x %u channels, scale %g zp %d", rows, ch, scales[q], zps[q]);
		EXPECT_EQ(0x5a, got[size]) TH_LOG("wrote past %zu bytes", size);
		free(src);
		free(got);
		free(want);
		free(qd);
	}
}

TEST(u8_to_native_refuses)
{
	uint8_t src[48] = { 0 }, dst[256];
	size_t size = rkaccel_native_size(3, 16, 1);

	EXPECT_EQ(-EINVAL, rkaccel_u8_to_native(src, 3, 16, 1.0f, -128, dst, size - 1));
	EXPECT_EQ(-EINVAL, rkaccel_u8_to_native(src, 0, 16, 1.0f, -128, dst, sizeof(dst)));
	EXPECT_EQ(-EINVAL, rkaccel_u8_to_native(NULL, 3, 16, 1.0f, -128, dst, size));
	EXPECT_EQ(-EINVAL, rkaccel_u8_to_native(src, 3, 16, 1.0f, -128, NULL, size));
	EXPECT_EQ(-EINVAL, rkaccel_u8_to_native(src, 3, 16, 0.0f, -128, dst, size));
	EXPECT_EQ(-EINVAL, rkaccel_u8_to_native(src, 3, 16, -1.0f, -128, dst, size));
	EXPECT_EQ(-EINVAL, rkaccel_u8_to_native(src, 3, 16, __builtin_nanf(""), -128, dst, size));
}

TEST_HARNESS_MAIN
