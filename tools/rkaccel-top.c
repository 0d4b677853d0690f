// SPDX-License-Identifier: MIT
/*
 * rkaccel-top: per-core load and the processes using the NPU, refreshed.
 * Cores come from the driver's debugfs, processes from the fdinfo of every
 * open rkaccel file (drm-engine-coreN, drm-total-memory, drm-total-weights).
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"
#include "args.h"

#define PROG		"rkaccel-top"
#define MAX_CORES	8
#define MAX_CLIENTS	256
#define MAX_INTERVAL	3600000		/* ms: an hour */

/* One open rkaccel file of some process, as its fdinfo shows it. */
struct client {
	unsigned long long id;		/* drm-client-id */
	int pid;
	char comm[32];
	unsigned long long busy_ns[MAX_CORES];
	unsigned long long mem, weights;
};

struct sample {
	struct client c[MAX_CLIENTS];
	unsigned int n;
	unsigned long long t_ns;
};

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* A "key: number [unit]" line of fdinfo, in bytes or ns. */
static unsigned long long fdinfo_value(const char *v)
{
	char unit[8] = "";
	unsigned long long n = 0;

	sscanf(v, "%llu %7s", &n, unit);
	return n << (!strcmp(unit, "KiB") ? 10 : !strcmp(unit, "MiB") ? 20 :
		     !strcmp(unit, "GiB") ? 30 : 0);
}

/* Parse one fdinfo file into @c; 1 when it is an rkaccel client. */
static int read_client(const char *path, struct client *c)
{
	char line[256];
	int ours = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');
		unsigned int core;

		if (!v)
			continue;
		*v++ = '\0';
		while (isspace((unsigned char)*v))
			v++;
		if (!strcmp(line, "drm-driver"))
			ours = !strncmp(v, "rkaccel", 7);
		else if (!strcmp(line, "drm-client-id"))
			c->id = strtoull(v, NULL, 10);
		else if (sscanf(line, "drm-engine-core%u", &core) == 1 && core < MAX_CORES)
			c->busy_ns[core] = fdinfo_value(v);
		else if (!strcmp(line, "drm-total-memory"))
			c->mem = fdinfo_value(v);
		else if (!strcmp(line, "drm-total-weights"))
			c->weights = fdinfo_value(v);
	}
	fclose(f);
	return ours;
}

static void read_comm(int pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f || !fgets(comm, (int)len, f))
		snprintf(comm, len, "?");
	if (f)
		fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
}

/* Every rkaccel client of every process; a client shared by fds counts once. */
static void sample_clients(struct sample *s)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;

	s->n = 0;
	s->t_ns = now_ns();
	while (proc && (p = readdir(proc)) && s->n < MAX_CLIENTS) {
		char dir[64];
		struct dirent *fd;
		DIR *fds;
		int pid = atoi(p->d_name);

		if (pid <= 0)
			continue;
		snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", pid);
		fds = opendir(dir);
		while (fds && (fd = readdir(fds)) && s->n < MAX_CLIENTS) {
			struct client *c = &s->c[s->n];
			char path[64 + sizeof(fd->d_name)];
			unsigned int i;

			if (fd->d_name[0] == '.')
				continue;
			memset(c, 0, sizeof(*c));
			snprintf(path, sizeof(path), "%s/%s", dir, fd->d_name);
			if (!read_client(path, c))
				continue;
			for (i = 0; i < s->n && s->c[i].id != c->id; i++)
				;
			if (i < s->n)
				continue;
			c->pid = pid;
			read_comm(pid, c->comm, sizeof(c->comm));
			s->n++;
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
		closedir(proc);
}

static const struct client *find_client(const struct sample *s, unsigned long long id)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (s->c[i].id == id)
			return &s->c[i];
	return NULL;
}

static void print_cores(struct rkaccel_device *dev)
{
	struct rkaccel_core_stats st[MAX_CORES];
	int n = rkaccel_core_stats(dev, st, MAX_CORES);

	if (n < 0) {
		printf("cores: %s (needs root and debugfs mounted)\n", rkaccel_strerror(n));
		return;
	}
	printf("core  load (last 1 s)                    jobs  faults  resets\n");
	for (int i = 0; i < n; i++) {
		char bar[31];
		int fill = (int)(st[i].load_permille * 30 / 1000);

		memset(bar, '#', (size_t)fill);
		memset(bar + fill, '.', (size_t)(30 - fill));
		bar[30] = '\0';
		printf("%4u  %5.1f%% [%s]  %6llu  %6llu  %6llu\n", st[i].core,
		       st[i].load_permille / 10.0, bar, (unsigned long long)st[i].jobs,
		       (unsigned long long)st[i].faults, (unsigned long long)st[i].resets);
	}
}

/* Processes: their share of each core since the previous sample. */
static void print_clients(const struct sample *prev, const struct sample *cur,
			  unsigned int cores)
{
	unsigned long long dt = cur->t_ns - prev->t_ns;

	printf("\n%7s %-16s", "PID", "COMMAND");
	for (unsigned int k = 0; k < cores; k++)
		printf("  core%u", k);
	printf("  %10s  %10s\n", "memory", "weights");
	for (unsigned int i = 0; i < cur->n; i++) {
		const struct client *c = &cur->c[i], *p = find_client(prev, c->id);

		printf("%7d %-16s", c->pid, c->comm);
		for (unsigned int k = 0; k < cores; k++) {
			unsigned long long d = p ? c->busy_ns[k] - p->busy_ns[k] : 0;

			printf(" %5.1f%%", dt ? 100.0 * (double)d / (double)dt : 0.0);
		}
		printf("  %7llu KiB  %7llu KiB\n", c->mem >> 10, c->weights >> 10);
	}
	if (!cur->n)
		printf("(no process has the NPU open)\n");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [--interval MS] [--iterations N] [--device PATH]\n"
		   "Show the NPU cores' load and the processes using them, every MS\n"
		   "milliseconds (default 1000, 1..%u), N times (default: until\n"
		   "interrupted, 1..4294967295). Numbers are decimal.\n", MAX_INTERVAL);
}

int main(int argc, char **argv)
{
	static struct sample a, b;
	struct sample *prev = &a, *cur = &b, *t;
	uint32_t interval = 1000, iterations = 0;
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	const char *device = NULL, *why = NULL, *opt, *v;
	int ret;

	for (int i = 1; i < argc; i++) {
		opt = argv[i];
		v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(opt, "--help")) {
			usage(stdout);
			return 0;
		}
		if (strcmp(opt, "--interval") && strcmp(opt, "--iterations") &&
		    strcmp(opt, "--device")) {
			fprintf(stderr, PROG ": unknown argument '%s'\n", opt);
			usage(stderr);
			return 2;
		}
		if (!v) {
			fprintf(stderr, PROG ": %s needs a value\n", opt);
			return 2;
		}
		i++;
		if (!strcmp(opt, "--interval"))
			why = arg_u32(v, 1, MAX_INTERVAL, &interval);
		else if (!strcmp(opt, "--iterations"))
			why = arg_u32(v, 1, UINT32_MAX, &iterations);
		else if (!*v)
			why = "is empty";
		else
			device = v;
		if (why) {
			fprintf(stderr, PROG ": %s '%s' %s (see --help)\n", opt, v, why);
			return 2;
		}
	}
	ret = rkaccel_open(device, &dev);
	if (!ret)
		ret = rkaccel_query(dev, &info);
	if (ret) {
		fprintf(stderr, PROG ": %s\n", rkaccel_strerror(ret));
		return 1;
	}
	sample_clients(prev);
	for (uint32_t n = 0; !iterations || n < iterations; n++) {
		usleep((useconds_t)(interval * 1000));
		sample_clients(cur);
		if (isatty(STDOUT_FILENO))
			printf("\033[H\033[J");
		printf("%s (%s), %u cores\n\n", info.soc_name,
		       info.backend == DRM_RKACCEL_BACKEND_SIM ? "simulated" : "silicon", info.num_cores);
		print_cores(dev);
		print_clients(prev, cur, info.num_cores < MAX_CORES ? info.num_cores : MAX_CORES);
		fflush(stdout);
		t = prev;
		prev = cur;
		cur = t;
	}
	rkaccel_close(dev);
	return 0;
}
