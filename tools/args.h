/* SPDX-License-Identifier: MIT */
/*
 * Strict command-line parsing shared by the rkaccel tools (and tested on
 * the host by selftests/args_test.c):
 *
 * - a number is decimal digits only: no sign, blank, base prefix ("0x"
 *   would be hexadecimal, "010" octal to strtoul) or leading zero, and it
 *   must lie in the range the option names;
 * - a comma-separated list has no empty field ("4,,4", ",4", "4,");
 * - a file is opened without blocking: reading refuses anything but a
 *   regular file at once (a FIFO with no writer would block open(2)),
 *   writing to a FIFO with no reader fails at once with ENXIO.
 *
 * The functions return NULL on success or a short reason that completes a
 * message such as "--batch '0x3' is not a decimal number".
 */
#ifndef RKACCEL_TOOLS_ARGS_H
#define RKACCEL_TOOLS_ARGS_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* arg_err - "@prog: message" and a newline on stderr. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void arg_err(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* arg_u32 - @s as a decimal number in @min..@max into *@out. */
static inline const char *arg_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;
	const char *p;

	if (!s || !*s)
		return "is empty";
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return "is not a decimal number";
		if (v <= UINT32_MAX)
			v = v * 10 + (uint64_t)(*p - '0');
	}
	if (s[0] == '0' && s[1])
		return "has a leading zero";
	if (v < min || v > max)
		return "is out of range";
	*out = (uint32_t)v;
	return NULL;
}

/* arg_i32 - @s as an optionally negative decimal number in @min..@max. */
static inline const char *arg_i32(const char *s, int32_t min, int32_t max, int32_t *out)
{
	int neg = s && s[0] == '-';
	const char *why;
	uint32_t mag;
	int64_t v;

	if (neg && !s[1])
		return "is not a decimal number";
	why = arg_u32(s ? s + neg : s, 0, UINT32_MAX, &mag);
	if (why)
		return why;
	if (neg && mag == 0)
		return "is not a decimal number";	/* "-0" */
	v = neg ? -(int64_t)mag : (int64_t)mag;
	if (v < min || v > max)
		return "is out of range";
	*out = (int32_t)v;
	return NULL;
}

/*
 * arg_u32_list - the comma-separated decimal numbers of @s, each in
 * @min..@max, into @out[0..*@n), at most @max_n of them. On failure writes
 * a reason naming the field (counted from 1) into @why.
 */
static inline int arg_u32_list(const char *s, uint32_t min, uint32_t max, uint32_t *out,
			       unsigned int max_n, unsigned int *n, char *why, size_t why_len)
{
	unsigned int field = 0;
	const char *p = s, *comma;
	char tok[16];

	*n = 0;
	for (;;) {
		const char *r;
		size_t len;

		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		field++;
		if (!len) {
			snprintf(why, why_len, "field %u is empty", field);
			return -1;
		}
		if (field > max_n) {
			snprintf(why, why_len, "more than %u fields", max_n);
			return -1;
		}
		if (len >= sizeof(tok)) {
			snprintf(why, why_len, "field %u '%.*s...' is out of range", field,
				 (int)(sizeof(tok) - 1), p);
			return -1;
		}
		memcpy(tok, p, len);
		tok[len] = '\0';
		r = arg_u32(tok, min, max, &out[field - 1]);
		if (r) {
			snprintf(why, why_len, "field %u '%s' %s", field, tok, r);
			return -1;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	*n = field;
	return 0;
}

/* Drop O_NONBLOCK again once the open did not block. */
static inline int arg_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) ? -1 : 0;
}

/*
 * arg_open_in - open the regular file @path for reading. Returns the fd,
 * or -1 with the reason in *@why: a FIFO, device or directory is refused
 * at once, without waiting for a writer.
 */
static inline int arg_open_in(const char *path, const char **why)
{
	struct stat st = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || arg_blocking(fd)) {
		*why = S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file";
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * arg_open_out - create or truncate @path for writing (mode 0644 less the
 * umask). A FIFO without a reader fails at once (ENXIO) instead of
 * blocking. Returns the fd, or -1 with the reason in *@why.
 */
static inline int arg_open_out(const char *path, const char **why)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
		      0644);

	if (fd < 0) {
		*why = errno == ENXIO ? "a FIFO with no reader" : strerror(errno);
		return -1;
	}
	if (arg_blocking(fd)) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	return fd;
}

/* arg_fopen_in / arg_fopen_out - the same as stdio streams. */
static inline FILE *arg_fopen_in(const char *path, const char **why)
{
	int fd = arg_open_in(path, why);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");

	if (fd >= 0 && !f) {
		*why = strerror(errno);
		close(fd);
	}
	return f;
}

static inline FILE *arg_fopen_out(const char *path, const char **why)
{
	int fd = arg_open_out(path, why);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");

	if (fd >= 0 && !f) {
		*why = strerror(errno);
		close(fd);
	}
	return f;
}

#endif /* RKACCEL_TOOLS_ARGS_H */
