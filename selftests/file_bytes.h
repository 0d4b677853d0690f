/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the model-file tests need to build and damage files byte by byte
 * without the library's own code: an independent CRC-32, little-endian
 * access, the header checksum fix-up (offset 40 in 1.x, 2.x and 3.0) and a
 * hash for comparing images; and a data file read whole, the way the
 * guests' network tests read what the host made for them.
 */
#ifndef RKACCEL_FILE_BYTES_H
#define RKACCEL_FILE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FILE_CHECKSUM_OFF	40

static inline uint32_t crc32_bitwise(const uint8_t *p, size_t len)
{
	uint32_t c = 0xffffffffu;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & -(c & 1));
	}
	return ~c;
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t rd64(const uint8_t *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void wr64(uint8_t *p, uint64_t v)
{
	wr32(p, (uint32_t)v);
	wr32(p + 4, (uint32_t)(v >> 32));
}

/* Recompute the checksum: CRC-32 of the file with the checksum field zero. */
static inline void fix_crc(uint8_t *img, size_t len)
{
	wr32(img + FILE_CHECKSUM_OFF, 0);
	wr32(img + FILE_CHECKSUM_OFF, crc32_bitwise(img, len));
}

static inline uint64_t fnv1a64(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}


/*
 * @dir/@name, exactly @want bytes (one more means the file is not the one
 * its description sized), in malloc'ed memory; NULL with a "# " line.
 */
static inline void *read_file_exact(const char *dir, const char *name, size_t want)
{
	char path[512];
	void *buf = malloc(want ? want : 1);
	size_t got = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (f && buf) {
		got = fread(buf, 1, want, f);
		if (fgetc(f) != EOF)
			got = 0;
	}
	if (f)
		fclose(f);
	if (got != want) {
		fprintf(stderr, "# %s: not %zu bytes\n", path, want);
		free(buf);
		return NULL;
	}
	return buf;
}

#endif
