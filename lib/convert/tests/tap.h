/* SPDX-License-Identifier: MIT */
/* TAP lines for the converter's host tests: "ok N - what" or "not ok N - what". */
#ifndef RKACCEL_CONVERT_TAP_H
#define RKACCEL_CONVERT_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int tap_n, tap_failed;

static inline bool __attribute__((format(printf, 2, 3))) tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++tap_n);
	tap_failed += !ok;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return ok;
}

#endif
