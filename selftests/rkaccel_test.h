/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the rkaccel selftests. */
#ifndef RKACCEL_TEST_H
#define RKACCEL_TEST_H

#include <stdio.h>
#include <string.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"

/* The SoC the simulated backend was loaded as, from its module parameter. */
static inline int rkaccel_test_sim_soc(char *buf, size_t len)
{
	FILE *f = fopen("/sys/module/rkaccel/parameters/sim", "r");

	if (!f)
		return -1;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

#endif /* RKACCEL_TEST_H */
