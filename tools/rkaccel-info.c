// SPDX-License-Identifier: MIT
/* rkaccel-info: print the NPU device, its cores, versions and per-core load. */

#include <stdio.h>
#include <string.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: rkaccel-info [DEVICE]\n"
		   "Print the rkaccel NPU device, its cores, versions and per-core load.\n");
}

/* Per-core counters and the load of the last second, from debugfs. */
static void print_load(struct rkaccel_device *dev)
{
	struct rkaccel_core_stats st[8];
	int n = rkaccel_core_stats(dev, st, 8);

	if (n < 0) {
		printf("load:     %s (needs root and debugfs mounted)\n", rkaccel_strerror(n));
		return;
	}
	printf("load:     core  jobs  faults  resets  busy_ms  last 1 s\n");
	for (int i = 0; i < n; i++)
		printf("          %4u  %4llu  %6llu  %6llu  %7llu  %3u.%u%%\n", st[i].core,
		       (unsigned long long)st[i].jobs, (unsigned long long)st[i].faults,
		       (unsigned long long)st[i].resets,
		       (unsigned long long)(st[i].busy_ns / 1000000),
		       st[i].load_permille / 10, st[i].load_permille % 10);
}

int main(int argc, char **argv)
{
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	const char *path = NULL;
	int ret;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		usage(argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr);
		return argc == 2 && !strcmp(argv[1], "--help") ? 0 : 2;
	}
	if (argc == 2)
		path = argv[1];

	ret = rkaccel_open(path, &dev);
	if (ret) {
		fprintf(stderr, "rkaccel-info: %s: %s\n", path ? path : "no rkaccel device",
			rkaccel_strerror(ret));
		return 1;
	}
	ret = rkaccel_query(dev, &info);
	if (ret) {
		fprintf(stderr, "rkaccel-info: query: %s\n", rkaccel_strerror(ret));
		rkaccel_close(dev);
		return 1;
	}

	printf("device:   %s\n", rkaccel_path(dev));
	printf("driver:   rkaccel %u.%u.%u\n", info.driver_major, info.driver_minor,
	       info.driver_patch);
	printf("soc:      %s (%s)\n", info.soc_name,
	       info.backend == DRM_RKACCEL_BACKEND_SIM ? "simulated" : "silicon");
	printf("cores:    %u (mask 0x%x)\n", info.num_cores, info.core_mask);
	for (unsigned int i = 0; i < info.num_cores; i++)
		printf("  core %u: %s\n", i,
		       info.core_mask & (1u << i) ? "present" : "absent");
	printf("hardware: version 0x%08x\n", info.hw_version);
	printf("address:  %llu MiB NPU address space per open device\n",
	       (unsigned long long)(info.va_size >> 20));
	printf("limits:   %u tasks per job, %u KiB CBUF per core\n", info.max_tasks,
	       info.cbuf_size >> 10);
	print_load(dev);

	rkaccel_close(dev);
	return 0;
}
