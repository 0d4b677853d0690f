// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_test: seeded, structured random sequences over every ioctl of the
 * rkaccel uAPI (and the DRM core ioctls it relies on: GEM close, syncobjs,
 * PRIME), mmap/munmap, closing files with work in flight, several files and
 * threads, forked children killed mid-job, and garbage arguments.
 *
 * Judged: every call returns 0 or an errno of the documented set; every
 * tracked out-fence signals within a bound with a documented status; after
 * every file is closed the debugfs object counts are back to where they
 * were; a known-good job still runs. On failure the seed, the thread and its
 * last operations are printed with the command line that replays them.
 *
 * Documentation/testing.rst, section "Fuzzer and fault injection".
 */

#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "kselftest.h"
#include "fuzz.h"

/* Bugs already filed (issues 17 and 18); their operations are off by default. */
enum {
	KNOWN_CTX_RACE = 1u << 0,	/* 17.1: CTX_DESTROY racing SUBMIT on one file */
	KNOWN_CTX_HANDLE0 = 1u << 1,	/* 17.2: CTX_DESTROY(0) frees handle 0 */
	KNOWN_GEM_RACE = 1u << 2,	/* 18.3: GEM_CLOSE racing BO_CREATE on one file */
};

static const struct {
	const char *name;
	unsigned int bit;
	const char *what;
} known_bugs[] = {
	{ "ctx-race", KNOWN_CTX_RACE, "issue 17.1: other threads destroy contexts of the shared file" },
	{ "ctx-handle0", KNOWN_CTX_HANDLE0, "issue 17.2: CTX_DESTROY of handle 0" },
	{ "gem-race", KNOWN_GEM_RACE, "issue 18.3: GEM_CLOSE of guessed handles on the shared file" },
};

/* Judges broken on purpose, to show that each can fail (--break). */
enum { BREAK_NONE, BREAK_ERRNO, BREAK_LEAK, BREAK_USABLE, BREAK_REPORT };

static struct {
	uint64_t seed;
	long iterations;	/* per thread */
	double seconds;
	int threads;
	int only_thread;	/* replay one thread's sequence alone, or -1 */
	int ring;
	unsigned int known;
	int brk;
	unsigned int fence_ms;	/* bound from submit to signal */
	int max_hangs;		/* per thread */
	bool verbose;
} opt = {
	.iterations = 1000000, .seconds = 20, .threads = 2, .only_thread = -1, .ring = 32,
	.fence_ms = 30000, .max_hangs = 2,
};

static char dev_path[64];
static int shared_fd = -1;
static struct drm_rkaccel_query devq;
static volatile int stop_all;
static volatile int failed;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t t_start;

/* --- per-thread state ---------------------------------------------------- */

#define NFILES		3	/* file 0 is the one all threads share */
#define MAX_BOS		24
#define MAX_CTXS	12
#define MAX_SYNCS	12
#define MAX_MAPS	16
#define MAX_DMABUFS	8
#define MAX_FENCES	64

struct fbo {
	uint32_t h, flags;
	uint64_t size, addr, off;
	bool sealed;
	uint32_t entries, tasks;	/* regcmd chain at offset 0, tasks 0: none */
	bool hang;			/* the chain may never complete */
};

struct fsync {
	uint32_t h;
	bool timeline, has_fence;
	uint64_t point;
};

struct ffile {
	int fd;
	struct fbo bo[MAX_BOS];
	int nbo;
	uint32_t ctx[MAX_CTXS];
	int nctx;
	struct fsync sync[MAX_SYNCS];
	int nsync;
};

struct fmap {
	void *p;
	size_t len;
	size_t write_from;	/* writable from here to len; len: read only */
};

struct ffence {
	int sfd;
	uint64_t t_ns, op;
};

struct ring_ent {
	uint64_t op;
	char text[200];
};

enum op {
	OP_BO_CREATE, OP_BO_INFO, OP_BO_WAIT, OP_BO_SEAL, OP_GEM_CLOSE,
	OP_CTX_CREATE, OP_CTX_DESTROY, OP_CTX_QUERY, OP_QUERY, OP_SUBMIT,
	OP_SYNC_CREATE, OP_SYNC_DESTROY, OP_SYNC_WAIT, OP_EXPORT, OP_IMPORT,
	OP_MMAP, OP_MUNMAP, OP_TOUCH, OP_CLOSE_FD, OP_FORK_KILL, OP_GARBAGE,
	OP_BADPTR, OP_FDINFO, OP_COUNT
};

static const struct {
	const char *name;
	int weight;
} ops[OP_COUNT] = {
	[OP_BO_CREATE] = { "BO_CREATE", 10 },	[OP_BO_INFO] = { "BO_INFO", 4 },
	[OP_BO_WAIT] = { "BO_WAIT", 3 },	[OP_BO_SEAL] = { "BO_SEAL", 4 },
	[OP_GEM_CLOSE] = { "GEM_CLOSE", 5 },	[OP_CTX_CREATE] = { "CTX_CREATE", 5 },
	[OP_CTX_DESTROY] = { "CTX_DESTROY", 3 }, [OP_CTX_QUERY] = { "CTX_QUERY", 3 },
	[OP_QUERY] = { "QUERY", 1 },		[OP_SUBMIT] = { "SUBMIT", 25 },
	[OP_SYNC_CREATE] = { "SYNCOBJ_CREATE", 3 }, [OP_SYNC_DESTROY] = { "SYNCOBJ_DESTROY", 2 },
	[OP_SYNC_WAIT] = { "SYNCOBJ_WAIT", 2 },	[OP_EXPORT] = { "PRIME_EXPORT", 3 },
	[OP_IMPORT] = { "PRIME_IMPORT", 3 },	[OP_MMAP] = { "MMAP", 4 },
	[OP_MUNMAP] = { "MUNMAP", 3 },		[OP_TOUCH] = { "TOUCH", 3 },
	[OP_CLOSE_FD] = { "CLOSE_FD", 1 },	[OP_FORK_KILL] = { "FORK_KILL", 1 },
	[OP_GARBAGE] = { "GARBAGE", 5 },	[OP_BADPTR] = { "BADPTR", 3 },
	[OP_FDINFO] = { "FDINFO", 1 },
};

struct thr {
	int id;
	pthread_t thread;
	uint64_t rng;
	uint64_t op;			/* index of the current operation */
	uint64_t done;			/* operations done */
	struct ffile f[NFILES];
	struct fmap map[MAX_MAPS];
	int nmap;
	int dmabuf[MAX_DMABUFS];
	int ndmabuf;
	struct ffence fence[MAX_FENCES];
	int nfence;
	int hangs;
	struct ring_ent *ring;
	uint64_t count[OP_COUNT];
	uint64_t fences_checked, submits_ok, forks;
};

static struct thr *thrs;

/* --- random -------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd(struct thr *t, uint32_t n)
{
	return n ? (uint32_t)(splitmix(&t->rng) % n) : 0;
}

static bool chance(struct thr *t, unsigned int pct)
{
	return rnd(t, 100) < pct;
}

/* --- the ring of recent operations and failing --------------------------- */

static __attribute__((format(printf, 2, 3))) void note(struct thr *t, const char *fmt, ...)
{
	struct ring_ent *e = &t->ring[t->op % opt.ring];
	size_t len = strlen(e->text);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->text + len, sizeof(e->text) - len, fmt, ap);
	va_end(ap);
}

static void ring_dump(struct thr *t)
{
	uint64_t first = t->op + 1 > (uint64_t)opt.ring ? t->op + 1 - opt.ring : 0;

	printf("# seed 0x%" PRIx64 ", thread %d, last %" PRIu64 " operations:\n", opt.seed,
	       t->id, t->op + 1 - first);
	for (uint64_t i = first; i <= t->op; i++) {
		struct ring_ent *e = &t->ring[i % opt.ring];

		if (e->op == i)
			printf("#   [%" PRIu64 "] %s\n", i, e->text);
	}
	printf("# replay: fuzz_test --seed 0x%" PRIx64 " --only-thread %d --iterations %" PRIu64
	       " --ring %d%s\n", opt.seed, t->id, t->op + 1, opt.ring,
	       opt.known ? " --known all" : "");
}

static __attribute__((format(printf, 2, 3))) void fail(struct thr *t, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&print_lock);
	if (!failed) {
		printf("# FAIL: ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		if (t)
			ring_dump(t);
		fflush(stdout);
	}
	failed = 1;
	stop_all = 1;
	pthread_mutex_unlock(&print_lock);
}

static __thread struct thr *cur_thr;

/* A crash in the fuzzer itself (SIGBUS on a mapping, ...) still says how to replay. */
static void on_fatal(int sig)
{
	printf("# FAIL: signal %d\n", sig);
	if (cur_thr)
		ring_dump(cur_thr);
	fflush(stdout);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* --- errno judging ------------------------------------------------------- */

#define E_GEN	(FZ_E(EFAULT) | FZ_E(ENOMEM))

static const fz_errset allowed[OP_COUNT] = {
	[OP_QUERY] = FZ_E(EINVAL) | E_GEN,
	[OP_BO_CREATE] = FZ_E(EINVAL) | FZ_E(ENOSPC) | E_GEN,
	[OP_BO_INFO] = FZ_E(EINVAL) | FZ_E(ENOENT) | E_GEN,
	[OP_BO_WAIT] = FZ_E(EINVAL) | FZ_E(ENOENT) | FZ_E(ETIME) | E_GEN,
	[OP_BO_SEAL] = FZ_E(EINVAL) | FZ_E(ENOENT) | E_GEN,
	[OP_CTX_CREATE] = FZ_E(EINVAL) | FZ_E(EPERM) | E_GEN,
	[OP_CTX_DESTROY] = FZ_E(EINVAL) | FZ_E(ENOENT) | E_GEN,
	[OP_CTX_QUERY] = FZ_E(EINVAL) | FZ_E(ENOENT) | E_GEN,
	[OP_SUBMIT] = FZ_E(EINVAL) | FZ_E(ENOENT) | FZ_E(ECANCELED) | E_GEN,
	/* DRM core: an unknown GEM handle is EINVAL there */
	[OP_GEM_CLOSE] = FZ_E(EINVAL) | E_GEN,
	[OP_SYNC_CREATE] = FZ_E(EINVAL) | E_GEN,
	[OP_SYNC_DESTROY] = FZ_E(EINVAL) | FZ_E(ENOENT) | E_GEN,
	[OP_SYNC_WAIT] = FZ_E(EINVAL) | FZ_E(ENOENT) | FZ_E(ETIME) | E_GEN,
	/* export of an unsealed weight is EINVAL; EMFILE if fds run out */
	[OP_EXPORT] = FZ_E(EINVAL) | FZ_E(ENOENT) | FZ_E(EMFILE) | E_GEN,
	[OP_IMPORT] = FZ_E(EINVAL) | FZ_E(EBADF) | FZ_E(ENOSPC) | E_GEN,
	[OP_MMAP] = FZ_E(EINVAL) | FZ_E(EACCES) | E_GEN,
	[OP_MUNMAP] = FZ_E(EINVAL),
};

/* Garbage arguments may reach any path: the union of every documented errno. */
#define E_ANY	(FZ_E(EINVAL) | FZ_E(ENOENT) | FZ_E(ENOSPC) | FZ_E(ETIME) | FZ_E(EPERM) | \
		 FZ_E(EACCES) | FZ_E(ECANCELED) | FZ_E(EBADF) | FZ_E(EMFILE) | E_GEN)

static void judge(struct thr *t, enum op op, fz_errset set, int ret)
{
	note(t, " -> %d", ret);
	if (opt.brk == BREAK_ERRNO && op == OP_SUBMIT)
		set &= ~FZ_E(EINVAL);
	if (ret > 0 || (ret < 0 && !fz_errno_in(set, -ret)))
		fail(t, "%s returned %d (%s), not in its documented errno set", ops[op].name,
		     ret, ret < 0 ? strerror(-ret) : "positive");
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

/* --- picking objects ----------------------------------------------------- */

/* File 0 is shared by every thread; each thread keeps its own objects there. */
static struct ffile *pick_file(struct thr *t, int *idx)
{
	int i = rnd(t, NFILES);

	if (idx)
		*idx = i;
	return &t->f[i];
}

static struct fbo *pick_bo(struct thr *t, struct ffile *f)
{
	return f->nbo ? &f->bo[rnd(t, f->nbo)] : NULL;
}

/* A handle: mostly a known one, sometimes one that does not exist. */
static uint32_t pick_bo_handle(struct thr *t, struct ffile *f, bool priv)
{
	if (f->nbo && !chance(t, 10))
		return pick_bo(t, f)->h;
	/* small guesses only on a file no other thread creates in */
	return priv ? rnd(t, 64) : 0x40000000u + rnd(t, 1000);
}

static uint32_t pick_ctx(struct thr *t, struct ffile *f, bool priv)
{
	if (f->nctx && !chance(t, 8))
		return f->ctx[rnd(t, f->nctx)];
	if (priv || (opt.known & KNOWN_CTX_RACE))
		return 1 + rnd(t, 63);
	return 0x40000000u + rnd(t, 1000);
}

static void forget_bo(struct ffile *f, int i)
{
	f->bo[i] = f->bo[--f->nbo];
}

/* --- fences -------------------------------------------------------------- */

static void fence_track(struct thr *t, int fd, uint32_t syncobj);

/*
 * Check the tracked fences: a signalled one must carry success or a
 * documented error; one older than the bound fails the run. @wait_ms: how
 * long to wait for each still pending one.
 */
static void fences_check(struct thr *t, unsigned int wait_ms)
{
	for (int i = 0; i < t->nfence; i++) {
		struct ffence *fe = &t->fence[i];
		struct pollfd p = { .fd = fe->sfd, .events = POLLIN };
		uint64_t age_ms = (rkt_now_ns() - fe->t_ns) / RKT_NSEC_PER_MSEC;
		int timeout = 0;

		if (wait_ms && age_ms < opt.fence_ms)
			timeout = (int)(opt.fence_ms - age_ms < wait_ms ? opt.fence_ms - age_ms :
									   wait_ms);
		if (poll(&p, 1, timeout) == 1) {
			struct sync_file_info info = { 0 };

			if (ioctl(fe->sfd, SYNC_IOC_FILE_INFO, &info)) {
				fail(t, "SYNC_IOC_FILE_INFO of op %" PRIu64 ": %s", fe->op,
				     strerror(errno));
				return;
			}
			if (info.status != 1 && info.status != -EIO && info.status != -ECANCELED &&
			    info.status != -EOPNOTSUPP) {
				fail(t, "the fence of op %" PRIu64 " signalled with status %d (%s)",
				     fe->op, info.status, strerror(-info.status));
				return;
			}
		} else if ((rkt_now_ns() - fe->t_ns) / RKT_NSEC_PER_MSEC >= opt.fence_ms) {
			fail(t, "the fence of op %" PRIu64 " did not signal within %u ms", fe->op,
			     opt.fence_ms);
			return;
		} else {
			continue;
		}
		t->fences_checked++;
		close(fe->sfd);
		t->fence[i--] = t->fence[--t->nfence];
	}
}

/* Keep the job's fence as a sync_file: it outlives the file that made it. */
static void fence_track(struct thr *t, int fd, uint32_t syncobj)
{
	int sfd;

	if (t->nfence == MAX_FENCES)
		fences_check(t, opt.fence_ms);
	if (t->nfence == MAX_FENCES || drmSyncobjExportSyncFile(fd, syncobj, &sfd))
		return;
	t->fence[t->nfence++] = (struct ffence){ .sfd = sfd, .t_ns = rkt_now_ns(), .op = t->op };
}

/* --- operations ---------------------------------------------------------- */

static void add_map(struct thr *t, void *p, size_t len, size_t write_from)
{
	if (t->nmap == MAX_MAPS) {
		munmap(t->map[0].p, t->map[0].len);
		t->map[0] = t->map[--t->nmap];
	}
	t->map[t->nmap++] = (struct fmap){ .p = p, .len = len, .write_from = write_from };
}

static uint64_t bo_size(struct thr *t)
{
	switch (rnd(t, 10)) {
	case 0:
		return 1 + rnd(t, 4096);
	case 1:
		return (1 + rnd(t, 256)) * 4096;		/* up to 1 MiB */
	default:
		return (1 + rnd(t, 16)) * 4096;
	}
}

static void op_bo_create(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	struct drm_rkaccel_bo_create c = { .size = bo_size(t) };
	int kind = rnd(t, 10), ret;
	struct fbo *b;
	void *p;

	if (f->nbo == MAX_BOS)
		return;
	if (kind < 2)
		c.flags = DRM_RKACCEL_BO_WEIGHT;
	if (chance(t, 5)) {	/* bad flags or sizes: refused */
		static const uint64_t bad_sizes[] = { 0, 0x100000001ull, ~0ull, 1ull << 40 };

		if (chance(t, 50))
			c.flags = 1u << (1 + rnd(t, 31));
		else
			c.size = bad_sizes[rnd(t, 4)];
	}
	note(t, "f%d BO_CREATE size=%#" PRIx64 " flags=%#x", fi, (uint64_t)c.size, c.flags);
	ret = xioctl(f->fd, DRM_IOCTL_RKACCEL_BO_CREATE, &c);
	judge(t, OP_BO_CREATE, allowed[OP_BO_CREATE], ret);
	if (ret)
		return;
	note(t, " h=%u addr=%#" PRIx64, c.handle, (uint64_t)c.npu_addr);
	if (!c.npu_addr || c.npu_addr % DRM_RKACCEL_BO_ALIGN || !c.handle) {
		fail(t, "BO_CREATE gave handle %u, NPU address %#" PRIx64, c.handle,
		     (uint64_t)c.npu_addr);
		return;
	}
	b = &f->bo[f->nbo++];
	*b = (struct fbo){ .h = c.handle, .flags = c.flags, .addr = c.npu_addr,
			   .off = c.mmap_offset,
			   .size = rkt_round_up(c.size, DRM_RKACCEL_BO_ALIGN) };

	/* fill it: a regcmd chain (plain BOs), or weights, through a mapping */
	p = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, (off_t)b->off);
	if (p == MAP_FAILED && errno == EACCES && (opt.known & KNOWN_GEM_RACE) &&
	    (b->flags & DRM_RKACCEL_BO_WEIGHT)) {
		/* another thread closed a handle, got this number and sealed it */
		note(t, " sealed by another thread");
		return;
	}
	if (p == MAP_FAILED) {
		fail(t, "mmap of a new BO: %s", strerror(errno));
		return;
	}
	if (b->flags & DRM_RKACCEL_BO_WEIGHT) {
		/*
		 * On the shared file with gem-race another thread may seal this
		 * BO between the mmap and the write, which then gets SIGBUS as
		 * documented: leave its content zero there.
		 */
		if (fi || !(opt.known & KNOWN_GEM_RACE))
			memset(p, (int)rnd(t, 256), b->size < 4096 ? b->size : 4096);
		munmap(p, b->size);
		return;
	}
	if (kind < 8) {
		uint32_t filler = rnd(t, 7), ntasks = 1 + rnd(t, 12), flags = 0;
		struct rkt_chain ch;

		if (t->hangs < opt.max_hangs && chance(t, 3)) {
			flags = RKT_CHAIN_NO_ENABLE;
			b->hang = true;
		}
		if (!rkt_chain_build(p, b->addr, b->size, 0, ntasks, filler, flags, &ch)) {
			b->entries = ch.entries;
			b->tasks = ch.tasks;
			note(t, " chain=%ux%u%s", ntasks, ch.entries, b->hang ? " hang" : "");
		}
	} else if (kind == 8 && t->hangs < opt.max_hangs) {
		/* random register commands: the simulator must cope */
		uint64_t *e = p;

		for (size_t i = 0; i < 64 && i < b->size / 8; i++)
			e[i] = splitmix(&t->rng);
		b->entries = 64;
		b->tasks = 1;
		b->hang = true;
		note(t, " random-regcmd");
	}
	add_map(t, p, b->size, b->tasks ? b->size : 0);
}

static void op_bo_info(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	struct drm_rkaccel_bo_info in = { .handle = pick_bo_handle(t, f, fi) };
	int ret;

	if (chance(t, 5))
		in.flags = 1;
	else if (chance(t, 5))
		in.pad = 1u << rnd(t, 32);
	note(t, "f%d BO_INFO h=%u flags=%#x pad=%#x", fi, in.handle, in.flags, in.pad);
	ret = xioctl(f->fd, DRM_IOCTL_RKACCEL_BO_INFO, &in);
	judge(t, OP_BO_INFO, allowed[OP_BO_INFO], ret);
	/* with gem-race, other threads close and reuse handles of the shared file */
	for (int i = 0; !ret && !(!fi && (opt.known & KNOWN_GEM_RACE)) && i < f->nbo; i++) {
		struct fbo *b = &f->bo[i];

		if (b->h != in.handle)
			continue;
		if (in.npu_addr != b->addr || in.size != b->size)
			fail(t, "BO_INFO of handle %u: addr %#" PRIx64 " size %" PRIu64
			     ", created at %#" PRIx64 " size %" PRIu64, b->h,
			     (uint64_t)in.npu_addr, (uint64_t)in.size, b->addr, b->size);
		break;
	}
}

static void op_bo_wait(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	struct drm_rkaccel_bo_wait w = { .handle = pick_bo_handle(t, f, fi) };
	int ret;

	switch (rnd(t, 4)) {
	case 0:
		w.timeout_ns = 0;
		break;
	case 1:
		w.timeout_ns = rkt_now_ns() - RKT_NSEC_PER_SEC;
		break;
	default:
		w.timeout_ns = rkt_now_ns() + rnd(t, 100) * RKT_NSEC_PER_MSEC;
	}
	if (chance(t, 5))
		w.flags = 1u << rnd(t, 32);
	note(t, "f%d BO_WAIT h=%u flags=%#x", fi, w.handle, w.flags);
	ret = xioctl(f->fd, DRM_IOCTL_RKACCEL_BO_WAIT, &w);
	judge(t, OP_BO_WAIT, allowed[OP_BO_WAIT], ret);
}

static void op_bo_seal(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	struct drm_rkaccel_bo_seal s = { .handle = pick_bo_handle(t, f, fi) };
	int ret;

	if (chance(t, 5))
		s.flags = 1u << rnd(t, 32);
	note(t, "f%d BO_SEAL h=%u flags=%#x", fi, s.handle, s.flags);
	ret = xioctl(f->fd, DRM_IOCTL_RKACCEL_BO_SEAL, &s);
	judge(t, OP_BO_SEAL, allowed[OP_BO_SEAL], ret);
	for (int i = 0; !ret && i < f->nbo; i++)
		if (f->bo[i].h == s.handle)
			f->bo[i].sealed = true;
}

static void op_gem_close(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	bool guess = fi || (opt.known & KNOWN_GEM_RACE);
	uint32_t h = pick_bo_handle(t, f, guess);
	int ret;

	note(t, "f%d GEM_CLOSE h=%u", fi, h);
	ret = rkt_gem_close(f->fd, h);
	judge(t, OP_GEM_CLOSE, allowed[OP_GEM_CLOSE], ret);
	for (int i = 0; i < f->nbo; i++)
		if (f->bo[i].h == h)
			forget_bo(f, i--);
}

static void op_ctx_create(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	struct drm_rkaccel_ctx_create c = {
		.core_mask = rnd(t, devq.core_mask + 1) & devq.core_mask,
		.priority = rnd(t, 3),
	};
	int ret;

	if (f->nctx == MAX_CTXS)
		return;
	if (chance(t, 5))
		c.core_mask = 1u << rnd(t, 32);
	else if (chance(t, 5))
		c.priority = rnd(t, 100);
	else if (chance(t, 3))
		c.flags = 1u << rnd(t, 32);
	note(t, "f%d CTX_CREATE mask=%#x prio=%u flags=%#x", fi, c.core_mask, c.priority,
	     c.flags);
	ret = xioctl(f->fd, DRM_IOCTL_RKACCEL_CTX_CREATE, &c);
	judge(t, OP_CTX_CREATE, allowed[OP_CTX_CREATE], ret);
	if (ret)
		return;
	note(t, " h=%u", c.handle);
	if (!c.handle)
		fail(t, "CTX_CREATE returned handle 0 (the uAPI says never 0)");
	f->ctx[f->nctx++] = c.handle;
}

static void op_ctx_destroy(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	struct drm_rkaccel_ctx_destroy d = { .handle = pick_ctx(t, f, fi) };
	int ret;

	if ((opt.known & KNOWN_CTX_HANDLE0) && chance(t, 10))
		d.handle = 0;
	if (chance(t, 4))
		d.pad = 1u << rnd(t, 32);
	note(t, "f%d CTX_DESTROY h=%u pad=%#x", fi, d.handle, d.pad);
	ret = xioctl(f->fd, DRM_IOCTL_RKACCEL_CTX_DESTROY, &d);
	judge(t, OP_CTX_DESTROY, allowed[OP_CTX_DESTROY], ret);
	if (ret)
		return;
	for (int i = 0; i < f->nctx; i++)
		if (f->ctx[i] == d.handle)
			f->ctx[i--] = f->ctx[--f->nctx];
}

static void op_ctx_query(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	struct drm_rkaccel_ctx_query q = { .handle = pick_ctx(t, f, true) };
	int ret;

	if (chance(t, 5))
		q.flags = 1u << rnd(t, 32);
	note(t, "f%d CTX_QUERY h=%u flags=%#x", fi, q.handle, q.flags);
	ret = xioctl(f->fd, DRM_IOCTL_RKACCEL_CTX_QUERY, &q);
	judge(t, OP_CTX_QUERY, allowed[OP_CTX_QUERY], ret);
	if (!ret && q.jobs_completed + q.jobs_failed > q.jobs_submitted)
		fail(t, "CTX_QUERY: %llu completed + %llu failed > %llu submitted",
		     (unsigned long long)q.jobs_completed, (unsigned long long)q.jobs_failed,
		     (unsigned long long)q.jobs_submitted);
}

static void op_query(struct thr *t)
{
	struct drm_rkaccel_query q = { 0 };
	int ret;

	if (chance(t, 30))
		q.flags = 1u << rnd(t, 32);
	note(t, "QUERY flags=%#x", q.flags);
	ret = xioctl(t->f[0].fd, DRM_IOCTL_RKACCEL_QUERY, &q);
	judge(t, OP_QUERY, allowed[OP_QUERY], ret);
	if (!ret && (q.num_cores != devq.num_cores || q.core_mask != devq.core_mask))
		fail(t, "QUERY changed: %u cores mask %#x", q.num_cores, q.core_mask);
}

static void op_sync_create(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	uint32_t flags = chance(t, 20) ? DRM_SYNCOBJ_CREATE_SIGNALED : 0, h = 0;
	int ret;

	if (f->nsync == MAX_SYNCS)
		return;
	note(t, "f%d SYNCOBJ_CREATE flags=%#x", fi, flags);
	ret = drmSyncobjCreate(f->fd, flags, &h) ? -errno : 0;
	judge(t, OP_SYNC_CREATE, allowed[OP_SYNC_CREATE], ret);
	if (ret)
		return;
	f->sync[f->nsync++] = (struct fsync){ .h = h, .timeline = chance(t, 40),
					      .has_fence = flags != 0 };
}

static void op_sync_destroy(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	int i = f->nsync ? (int)rnd(t, f->nsync) : -1;
	uint32_t h = i >= 0 ? f->sync[i].h : 0x40000000u + rnd(t, 100);
	int ret;

	note(t, "f%d SYNCOBJ_DESTROY h=%u", fi, h);
	ret = drmSyncobjDestroy(f->fd, h) ? -errno : 0;
	judge(t, OP_SYNC_DESTROY, allowed[OP_SYNC_DESTROY], ret);
	if (i >= 0)
		f->sync[i] = f->sync[--f->nsync];
}

static void op_sync_wait(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	struct fsync *s;
	uint64_t point;
	int ret;

	if (!f->nsync)
		return;
	s = &f->sync[rnd(t, f->nsync)];
	point = s->timeline ? s->point : 0;
	note(t, "f%d SYNCOBJ_WAIT h=%u point=%" PRIu64, fi, s->h, point);
	if (s->timeline)
		ret = drmSyncobjTimelineWait(f->fd, &s->h, &point, 1, rkt_deadline_ms(rnd(t, 50)),
					     0, NULL) ? -errno : 0;
	else
		ret = drmSyncobjWait(f->fd, &s->h, 1, rkt_deadline_ms(rnd(t, 50)), 0, NULL) ?
		      -errno : 0;
	judge(t, OP_SYNC_WAIT, allowed[OP_SYNC_WAIT], ret);
}

/* One PC start from a chain BO of the job, sometimes bent out of shape. */
static struct drm_rkaccel_task task_from(struct thr *t, const struct fbo *b)
{
	struct drm_rkaccel_task k = {
		.regcmd_addr = b->addr, .regcmd_count = b->entries,
		.task_count = 1 + rnd(t, b->tasks),
	};

	return k;
}

enum mutation {
	MUT_NONE, MUT_FLAGS, MUT_PAD, MUT_TASK_STRIDE, MUT_BO_STRIDE, MUT_SYNC_STRIDE,
	MUT_NO_TASKS, MUT_MANY_TASKS, MUT_ADDR_ALIGN, MUT_ADDR_OUT, MUT_COUNT0, MUT_COUNT_BIG,
	MUT_TASKCOUNT0, MUT_TASKCOUNT_BIG, MUT_BO_DUP, MUT_BO_UNKNOWN, MUT_BO_FLAGS,
	MUT_NO_BOS, MUT_IN_UNKNOWN, MUT_IN_FLAGS, MUT_IN_POINT_BIG, MUT_OUT_UNKNOWN,
	MUT_OUT_POINT_NO_SYNC, MUT_TASKS_PTR, MUT_BOS_PTR, MUT_INS_PTR, MUT_CTX, MUT_COUNT
};

static void op_submit(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	struct drm_rkaccel_task tasks[4];
	struct drm_rkaccel_submit_bo bos[8];
	struct drm_rkaccel_sync in[4];
	uint32_t ntask = 0, nbo = 0, nin = 0, out = 0, chains[MAX_BOS], nchain = 0;
	uint64_t out_point = 0;
	struct fsync *os = NULL;
	struct drm_rkaccel_submit s;
	enum mutation mut = chance(t, 20) ? 1 + rnd(t, MUT_COUNT - 1) : MUT_NONE;
	bool hang = false;
	int ret;

	for (int i = 0; i < f->nbo; i++)
		if (f->bo[i].tasks && (!f->bo[i].hang || t->hangs < opt.max_hangs))
			chains[nchain++] = i;
	if (!nchain || !f->nctx)
		mut = mut ? mut : MUT_CTX;	/* nothing valid to run: bad arguments then */

	/* PC starts and their BOs */
	for (uint32_t k = nchain ? 1 + rnd(t, 3) : 1; nchain && ntask < k; ntask++) {
		struct fbo *b = &f->bo[chains[rnd(t, nchain)]];
		bool listed = false;

		tasks[ntask] = task_from(t, b);
		hang |= b->hang;
		for (uint32_t j = 0; j < nbo; j++)
			listed |= bos[j].handle == b->h;
		if (!listed)
			bos[nbo++] = (struct drm_rkaccel_submit_bo){
				.handle = b->h,
				.flags = chance(t, 50) ? DRM_RKACCEL_SUBMIT_BO_WRITE : 0 };
	}
	/* more BOs: sealed weights and plain ones */
	for (uint32_t k = rnd(t, 3); k && f->nbo && nbo < 8; k--) {
		struct fbo *b = pick_bo(t, f);
		bool listed = false;

		if ((b->flags & DRM_RKACCEL_BO_WEIGHT) && !b->sealed && !chance(t, 10))
			continue;
		for (uint32_t j = 0; j < nbo; j++)
			listed |= bos[j].handle == b->h;
		if (!listed)
			bos[nbo++] = (struct drm_rkaccel_submit_bo){ .handle = b->h };
	}
	/* input syncs: fences already there, timeline points already submitted */
	for (uint32_t k = rnd(t, 3); k && f->nsync; k--) {
		struct fsync *y = &f->sync[rnd(t, f->nsync)];

		if (!y->has_fence && !chance(t, 10))
			continue;
		in[nin++] = (struct drm_rkaccel_sync){
			.handle = y->h, .point = y->timeline ? 1 + rnd(t, y->point + 1) : 0 };
	}
	if (f->nsync && chance(t, 80)) {
		os = &f->sync[rnd(t, f->nsync)];
		out = os->h;
		out_point = os->timeline ? os->point + 1 + rnd(t, 3) : 0;
	}
	if (!ntask)
		tasks[ntask++] = (struct drm_rkaccel_task){ .regcmd_addr = 0x1000,
							    .regcmd_count = 2, .task_count = 1 };
	if (!nbo)
		bos[nbo++] = (struct drm_rkaccel_submit_bo){ .handle = pick_bo_handle(t, f, true) };

	rkt_submit_init(&s, f->nctx ? f->ctx[rnd(t, f->nctx)] : 1, tasks, ntask, bos, nbo,
			in, nin, out, out_point);
	switch (mut) {
	case MUT_NONE:
	case MUT_COUNT:
		break;
	case MUT_FLAGS: s.flags = 1u << rnd(t, 32); break;
	case MUT_PAD: s.pad = 1u << rnd(t, 32); break;
	case MUT_TASK_STRIDE: s.task_stride = rnd(t, 3) ? 8 : 32; break;
	case MUT_BO_STRIDE: s.bo_stride = rnd(t, 3) ? 4 : 16; break;
	case MUT_SYNC_STRIDE: s.sync_stride = 8 + rnd(t, 3) * 16; break;
	case MUT_NO_TASKS: s.task_count = 0; break;
	case MUT_MANY_TASKS: s.task_count = DRM_RKACCEL_MAX_JOB_TASKS + 1 + rnd(t, 1000); break;
	case MUT_ADDR_ALIGN: tasks[0].regcmd_addr += 1 + rnd(t, 15); break;
	case MUT_ADDR_OUT: tasks[0].regcmd_addr = chance(t, 50) ? 0 : 0xfffff000u; break;
	case MUT_COUNT0: tasks[0].regcmd_count = 0; break;
	case MUT_COUNT_BIG: tasks[0].regcmd_count = 0x20001 + rnd(t, 1000); break;
	case MUT_TASKCOUNT0: tasks[0].task_count = 0; break;
	case MUT_TASKCOUNT_BIG: tasks[0].task_count = devq.max_tasks + 1 + rnd(t, 10); break;
	case MUT_BO_DUP:
		if (nbo < 8) {
			bos[nbo] = bos[0];
			s.bo_count = ++nbo;
		}
		break;
	case MUT_BO_UNKNOWN: bos[rnd(t, nbo)].handle = 0x40000000u + rnd(t, 100); break;
	case MUT_BO_FLAGS: bos[rnd(t, nbo)].flags = 2u << rnd(t, 31); break;
	case MUT_NO_BOS: s.bo_count = chance(t, 50) ? 0 : DRM_RKACCEL_MAX_JOB_BOS + 1; break;
	case MUT_IN_UNKNOWN:
		in[0] = (struct drm_rkaccel_sync){ .handle = 0x40000000u + rnd(t, 100) };
		s.in_syncs = (uintptr_t)in;
		s.in_sync_count = nin ? nin : 1;
		s.sync_stride = sizeof(in[0]);
		break;
	case MUT_IN_FLAGS:
	case MUT_IN_POINT_BIG:
		if (nin) {
			if (mut == MUT_IN_FLAGS)
				in[0].flags = 1u << rnd(t, 32);
			else
				in[0].point = (1ull << 32) + rnd(t, 1000);
		} else {
			s.in_sync_count = DRM_RKACCEL_MAX_JOB_SYNCS + 1;
			s.sync_stride = sizeof(in[0]);
		}
		break;
	case MUT_OUT_UNKNOWN: s.out_sync = 0x40000000u + rnd(t, 100); break;
	case MUT_OUT_POINT_NO_SYNC: s.out_sync = 0; s.out_sync_point = 1 + rnd(t, 10); break;
	case MUT_TASKS_PTR: s.tasks = chance(t, 50) ? 0 : 0x10; break;
	case MUT_BOS_PTR: s.bos = (uintptr_t)-4096; break;
	case MUT_INS_PTR:
		s.in_syncs = 8;
		s.in_sync_count = 1;
		s.sync_stride = sizeof(in[0]);
		break;
	case MUT_CTX: s.ctx = pick_ctx(t, f, fi); break;
	}
	note(t, "f%d SUBMIT ctx=%u tasks=%u", fi, s.ctx, s.task_count);
	for (uint32_t i = 0; i < ntask && i < 2; i++)
		note(t, "[%#" PRIx64 "/%u/%u]", (uint64_t)tasks[i].regcmd_addr,
		     tasks[i].regcmd_count, tasks[i].task_count);
	note(t, " bos=%u in=%u out=%u@%" PRIu64 " mut=%d%s", s.bo_count, s.in_sync_count,
	     s.out_sync, (uint64_t)s.out_sync_point, mut, hang ? " hang" : "");
	ret = rkt_submit_args(f->fd, &s);
	judge(t, OP_SUBMIT, allowed[OP_SUBMIT], ret);
	if (ret)
		return;
	t->submits_ok++;
	if (hang)
		t->hangs++;
	if (os && s.out_sync == os->h) {
		os->has_fence = true;
		if (os->timeline && s.out_sync_point > os->point)
			os->point = s.out_sync_point;
		if (!s.out_sync_point)
			fence_track(t, f->fd, os->h);
	}
}

static void op_export(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	uint32_t h = pick_bo_handle(t, f, fi);
	int dfd = -1, ret;

	if (t->ndmabuf == MAX_DMABUFS) {
		close(t->dmabuf[0]);
		t->dmabuf[0] = t->dmabuf[--t->ndmabuf];
	}
	note(t, "f%d PRIME_EXPORT h=%u", fi, h);
	ret = drmPrimeHandleToFD(f->fd, h, DRM_CLOEXEC | (chance(t, 50) ? DRM_RDWR : 0), &dfd) ?
	      -errno : 0;
	judge(t, OP_EXPORT, allowed[OP_EXPORT], ret);
	if (!ret)
		t->dmabuf[t->ndmabuf++] = dfd;
}

static void op_import(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	int dfd, ret, tmp = -1;
	uint32_t h = 0;

	if (t->ndmabuf && !chance(t, 10)) {
		dfd = t->dmabuf[rnd(t, t->ndmabuf)];
	} else {
		switch (rnd(t, 3)) {
		case 0: dfd = -1; break;
		case 1: dfd = tmp = open("/dev/null", O_RDONLY | O_CLOEXEC); break;
		default: dfd = f->fd; break;
		}
	}
	note(t, "f%d PRIME_IMPORT fd=%d", fi, dfd);
	ret = drmPrimeFDToHandle(f->fd, dfd, &h) ? -errno : 0;
	if (tmp >= 0)
		close(tmp);
	judge(t, OP_IMPORT, allowed[OP_IMPORT], ret);
	if (ret)
		return;
	note(t, " h=%u", h);
	for (int i = 0; i < f->nbo; i++)
		if (f->bo[i].h == h)
			return;		/* a BO of this file: same handle */
	if (f->nbo < MAX_BOS) {
		struct drm_rkaccel_bo_info in;

		if (rkt_bo_info(f->fd, h, &in)) {
			fail(t, "BO_INFO of imported handle %u: %s", h, strerror(errno));
			return;
		}
		f->bo[f->nbo++] = (struct fbo){
			.h = h, .flags = in.bo_flags & DRM_RKACCEL_BO_WEIGHT, .size = in.size,
			.addr = in.npu_addr, .off = in.mmap_offset,
			.sealed = in.bo_flags & DRM_RKACCEL_BO_SEALED };
	}
}

static void op_mmap(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	struct fbo *b = pick_bo(t, f);
	int prot = chance(t, 50) ? PROT_READ : PROT_READ | PROT_WRITE;
	int flags = chance(t, 90) ? MAP_SHARED : MAP_PRIVATE;
	size_t len;
	off_t off;
	void *p;

	if (!b)
		return;
	len = b->size;
	off = (off_t)b->off;
	switch (rnd(t, 10)) {
	case 0: len += 4096; break;
	case 1: off += 4096; break;
	case 2: off = (off_t)(rnd(t, 1u << 20) * 4096ull); break;
	case 3: len = len > 4096 ? len / 2 / 4096 * 4096 : len; break;
	}
	note(t, "f%d MMAP h=%u len=%zu off=%#llx prot=%d flags=%d", fi, b->h, len,
	     (unsigned long long)off, prot, flags);
	p = mmap(NULL, len, prot, flags, f->fd, off);
	judge(t, OP_MMAP, allowed[OP_MMAP], p == MAP_FAILED ? -errno : 0);
	if (p == MAP_FAILED)
		return;
	/* write only where it cannot change a job's commands; never to weights */
	add_map(t, p, len, (prot & PROT_WRITE) && flags == MAP_SHARED &&
		!(b->flags & DRM_RKACCEL_BO_WEIGHT) ? (b->tasks ? len : 0) : len);
}

static void op_munmap(struct thr *t)
{
	int i;

	if (!t->nmap)
		return;
	i = rnd(t, t->nmap);
	note(t, "MUNMAP %p len=%zu", t->map[i].p, t->map[i].len);
	judge(t, OP_MUNMAP, allowed[OP_MUNMAP], munmap(t->map[i].p, t->map[i].len) ? -errno : 0);
	t->map[i] = t->map[--t->nmap];
}

static void op_touch(struct thr *t)
{
	struct fmap *m;
	volatile uint8_t sum = 0;

	if (!t->nmap)
		return;
	m = &t->map[rnd(t, t->nmap)];
	note(t, "TOUCH %p len=%zu write_from=%zu", m->p, m->len, m->write_from);
	for (size_t o = 0; o < m->len; o += 4096)
		sum += ((volatile uint8_t *)m->p)[o];
	if (m->write_from < m->len)
		memset((char *)m->p + m->write_from, (int)rnd(t, 256), m->len - m->write_from);
	(void)sum;
}

static void file_forget(struct ffile *f)
{
	f->nbo = f->nctx = f->nsync = 0;
}

/* Close a private file with its jobs in flight and open a new one. */
static void op_close_fd(struct thr *t)
{
	int fi = 1 + rnd(t, NFILES - 1);
	struct ffile *f = &t->f[fi];

	note(t, "f%d CLOSE_FD fd=%d bos=%d ctxs=%d", fi, f->fd, f->nbo, f->nctx);
	close(f->fd);
	file_forget(f);
	f->fd = open(dev_path, O_RDWR | O_CLOEXEC);
	if (f->fd < 0)
		fail(t, "reopening %s: %s", dev_path, strerror(errno));
}

/*
 * A child with its own file queues long jobs and is killed at a random
 * moment, mid-ioctl or with jobs queued. Only raw syscalls in the child.
 */
static void child_main(uint64_t r)
{
	struct drm_rkaccel_submit_bo sbo = { 0 };
	struct drm_rkaccel_task task;
	struct rkt_chain ch;
	struct rkt_bo cmd;
	uint32_t ctx;
	int fd = open(dev_path, O_RDWR | O_CLOEXEC);

	if (fd < 0 || rkt_bo_new(fd, 64 * 1024, 0, &cmd))
		_exit(1);
	if (rkt_chain_build(cmd.map, cmd.npu_addr, cmd.map_len, 0, 500, 2,
			    r % 8 ? 0 : RKT_CHAIN_NO_ENABLE, &ch))
		_exit(1);
	task = rkt_chain_task(&ch);
	sbo.handle = cmd.handle;
	if (rkt_ctx_create(fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &ctx))
		_exit(1);
	for (int i = 0; i < 4; i++)
		rkt_submit(fd, ctx, &task, 1, &sbo, 1, NULL, 0, 0, 0);
	for (;;)
		pause();
}

static void op_fork_kill(struct thr *t)
{
	uint64_t r = splitmix(&t->rng);
	unsigned int delay = rnd(t, 40000);
	int status;
	pid_t pid;

	if (t->hangs >= opt.max_hangs && r % 8 == 0)
		r++;		/* that child would hang its core: not within budget */
	note(t, "FORK_KILL after %u us%s", delay, r % 8 ? "" : " hang");
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fail(t, "fork: %s", strerror(errno));
		return;
	}
	if (!pid)
		child_main(r);
	if (r % 8 == 0)
		t->hangs++;
	t->forks++;
	usleep(delay);
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		fail(t, "waitpid: %s", strerror(errno));
	else if (!WIFSIGNALED(status) && WEXITSTATUS(status))
		fail(t, "the child failed to set up its job (exit %d)", WEXITSTATUS(status));
}

/* Random bytes through a random ioctl number of the driver's range. */
static void op_garbage(struct thr *t)
{
	int fi = 1 + rnd(t, NFILES - 1);
	struct ffile *f = &t->f[fi];
	uint64_t buf[16];
	uint32_t nr = rnd(t, 16), size = rnd(t, 9) * 8, dir;
	unsigned long req;
	int ret;

	for (int i = 0; i < 16; i++)
		buf[i] = splitmix(&t->rng) >> (rnd(t, 4) * 16);
	switch (nr) {
	case DRM_RKACCEL_BO_CREATE:
		/* a random size would pin up to 4 GiB: only small or invalid ones */
		buf[0] = chance(t, 50) ? buf[0] % (1 << 20) : (1ull << 32) + buf[0] % 1000;
		break;
	}
	dir = rnd(t, 4);
	/*
	 * Without _IOC_WRITE, or shorter than the struct, the DRM core passes
	 * zeros: CTX_DESTROY(0), issue 17.2.
	 */
	if (nr == DRM_RKACCEL_CTX_DESTROY && !(opt.known & KNOWN_CTX_HANDLE0)) {
		dir |= _IOC_WRITE;
		size = size < 8 ? 8 : size;
		buf[0] |= !(uint32_t)buf[0];
	}
	req = _IOC(dir, DRM_IOCTL_BASE, DRM_COMMAND_BASE + nr, size);
	note(t, "f%d GARBAGE nr=%#x dir=%u size=%u w0=%#" PRIx64 " w1=%#" PRIx64, fi,
	     DRM_COMMAND_BASE + nr, dir, size, buf[0], buf[1]);
	ret = ioctl(f->fd, req, buf) ? -errno : 0;
	judge(t, OP_GARBAGE, nr > DRM_RKACCEL_SUBMIT ? FZ_E(EINVAL) : E_ANY, ret);
}

/* A valid ioctl number with a pointer the kernel must not follow. */
static void op_badptr(struct thr *t)
{
	static const unsigned long reqs[] = {
		DRM_IOCTL_RKACCEL_QUERY, DRM_IOCTL_RKACCEL_BO_CREATE, DRM_IOCTL_RKACCEL_BO_INFO,
		DRM_IOCTL_RKACCEL_BO_WAIT, DRM_IOCTL_RKACCEL_BO_SEAL,
		DRM_IOCTL_RKACCEL_CTX_CREATE, DRM_IOCTL_RKACCEL_CTX_DESTROY,
		DRM_IOCTL_RKACCEL_CTX_QUERY, DRM_IOCTL_RKACCEL_SUBMIT,
	};
	static const uintptr_t ptrs[] = { 0, 1, 4096, (uintptr_t)-4096, 0x7ffffffff000ull >> 8 };
	int fi;
	struct ffile *f = pick_file(t, &fi);
	unsigned int r = rnd(t, 9);
	uintptr_t p = ptrs[rnd(t, 5)];
	int ret;

	note(t, "f%d BADPTR ioctl=%u ptr=%#lx", fi, r, (unsigned long)p);
	ret = ioctl(f->fd, reqs[r], (void *)p) ? -errno : 0;
	judge(t, OP_BADPTR, FZ_E(EFAULT), ret);
	if (!ret)
		fail(t, "ioctl %u with pointer %#lx succeeded", r, (unsigned long)p);
}

static void op_fdinfo(struct thr *t)
{
	int fi;
	struct ffile *f = pick_file(t, &fi);
	char buf[4096];

	note(t, "f%d FDINFO", fi);
	if (rkt_fdinfo_read(f->fd, buf, sizeof(buf)))
		fail(t, "fdinfo: %s", strerror(errno));
	else if (!strstr(buf, "drm-driver:"))
		fail(t, "fdinfo without drm-driver");
}

static void (*const op_fn[OP_COUNT])(struct thr *) = {
	[OP_BO_CREATE] = op_bo_create, [OP_BO_INFO] = op_bo_info, [OP_BO_WAIT] = op_bo_wait,
	[OP_BO_SEAL] = op_bo_seal, [OP_GEM_CLOSE] = op_gem_close,
	[OP_CTX_CREATE] = op_ctx_create, [OP_CTX_DESTROY] = op_ctx_destroy,
	[OP_CTX_QUERY] = op_ctx_query, [OP_QUERY] = op_query, [OP_SUBMIT] = op_submit,
	[OP_SYNC_CREATE] = op_sync_create, [OP_SYNC_DESTROY] = op_sync_destroy,
	[OP_SYNC_WAIT] = op_sync_wait, [OP_EXPORT] = op_export, [OP_IMPORT] = op_import,
	[OP_MMAP] = op_mmap, [OP_MUNMAP] = op_munmap, [OP_TOUCH] = op_touch,
	[OP_CLOSE_FD] = op_close_fd, [OP_FORK_KILL] = op_fork_kill,
	[OP_GARBAGE] = op_garbage, [OP_BADPTR] = op_badptr, [OP_FDINFO] = op_fdinfo,
};

static enum op pick_op(struct thr *t)
{
	static int total;
	int r;

	if (!total)
		for (int i = 0; i < OP_COUNT; i++)
			total += ops[i].weight;
	r = rnd(t, total);
	for (int i = 0; i < OP_COUNT; i++) {
		r -= ops[i].weight;
		if (r < 0)
			return i;
	}
	return OP_QUERY;
}

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	uint64_t end = t_start + (uint64_t)(opt.seconds * 1e9);

	cur_thr = t;
	for (t->op = 0; (long)t->op < opt.iterations && !stop_all; t->op++) {
		struct ring_ent *e = &t->ring[t->op % opt.ring];
		enum op op;

		if (rkt_now_ns() >= end)
			break;
		e->op = t->op;
		e->text[0] = '\0';
		op = pick_op(t);
		t->count[op]++;
		op_fn[op](t);
		t->done++;
		if (opt.verbose) {
			pthread_mutex_lock(&print_lock);
			printf("# t%d [%" PRIu64 "] %s\n", t->id, t->op, e->text);
			pthread_mutex_unlock(&print_lock);
		}
		if (t->op % 32 == 31)
			fences_check(t, 0);
	}
	if (t->op)
		t->op--;	/* the ring's last entry */
	/* every fence still pending must signal within the bound */
	if (!failed)
		fences_check(t, opt.fence_ms);
	for (int i = 0; i < t->nfence; i++)
		close(t->fence[i].sfd);
	t->nfence = 0;
	return NULL;
}

static void thr_cleanup(struct thr *t)
{
	for (int i = 0; i < t->nmap; i++)
		munmap(t->map[i].p, t->map[i].len);
	t->nmap = 0;
	for (int i = 0; i < t->ndmabuf; i++)
		close(t->dmabuf[i]);
	t->ndmabuf = 0;
	for (int i = 1; i < NFILES; i++)
		if (t->f[i].fd >= 0)
			close(t->f[i].fd);
}

static void usage(void)
{
	printf("usage: fuzz_test [--seed N] [--iterations N] [--seconds S] [--threads N]\n"
	       "  [--only-thread I] [--ring N] [--fence-ms MS] [--max-hangs N] [--verbose]\n"
	       "  [--known all|NAME[,NAME]] [--break errno|leak|usable|report]\nknown bugs:\n");
	for (unsigned int i = 0; i < sizeof(known_bugs) / sizeof(known_bugs[0]); i++)
		printf("  %-12s %s\n", known_bugs[i].name, known_bugs[i].what);
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "threads", required_argument, NULL, 't' },
		{ "only-thread", required_argument, NULL, 'o' },
		{ "ring", required_argument, NULL, 'r' },
		{ "fence-ms", required_argument, NULL, 'f' },
		{ "max-hangs", required_argument, NULL, 'H' },
		{ "known", required_argument, NULL, 'k' },
		{ "break", required_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool have_seed = false;
	int c;

	/* the environment sets the defaults, the options win */
	if (getenv("RKACCEL_FUZZ_SECONDS"))
		opt.seconds = strtod(getenv("RKACCEL_FUZZ_SECONDS"), NULL);

	while ((c = getopt_long(argc, argv, "s:i:S:t:o:r:f:H:k:b:vh", lo, NULL)) != -1) {
		switch (c) {
		case 's': opt.seed = strtoull(optarg, NULL, 0); have_seed = true; break;
		case 'i': opt.iterations = strtol(optarg, NULL, 0); break;
		case 'S': opt.seconds = strtod(optarg, NULL); break;
		case 't': opt.threads = atoi(optarg); break;
		case 'o': opt.only_thread = atoi(optarg); break;
		case 'r': opt.ring = atoi(optarg); break;
		case 'f': opt.fence_ms = strtoul(optarg, NULL, 0); break;
		case 'H': opt.max_hangs = atoi(optarg); break;
		case 'v': opt.verbose = true; break;
		case 'k':
			for (unsigned int i = 0; i < sizeof(known_bugs) / sizeof(known_bugs[0]); i++)
				if (!strcmp(optarg, "all") || strstr(optarg, known_bugs[i].name))
					opt.known |= known_bugs[i].bit;
			break;
		case 'b':
			opt.brk = !strcmp(optarg, "errno") ? BREAK_ERRNO :
				  !strcmp(optarg, "leak") ? BREAK_LEAK :
				  !strcmp(optarg, "usable") ? BREAK_USABLE :
				  !strcmp(optarg, "report") ? BREAK_REPORT : -1;
			if (opt.brk < 0)
				return -1;
			break;
		default:
			return -1;
		}
	}
	if (opt.threads < 1 || opt.threads > 16 || opt.ring < 1 ||
	    opt.only_thread >= opt.threads)
		return -1;
	if (!have_seed && getenv("RKACCEL_FUZZ_SEED"))
		opt.seed = strtoull(getenv("RKACCEL_FUZZ_SEED"), NULL, 0);
	else if (!have_seed)
		opt.seed = rkt_now_ns() ^ ((uint64_t)getpid() << 32);
	return 0;
}

int main(int argc, char **argv)
{
	struct fz_counts base, now;
	bool have_counts;
	uint64_t total = 0, fences = 0, submits = 0, forks = 0, hangs = 0;
	int kept_dmabuf = -1, ret, reports, kfd;

	if (parse_args(argc, argv)) {
		usage();
		return KSFT_FAIL;
	}
	ksft_print_header();
	ksft_set_plan(4);
	printf("# seed 0x%" PRIx64 " threads %d%s iterations %ld seconds %.1f fence bound %u ms"
	       " known-bug ops %#x\n", opt.seed, opt.threads,
	       opt.only_thread >= 0 ? " (replaying one)" : "", opt.iterations, opt.seconds,
	       opt.fence_ms, opt.known);
	signal(SIGBUS, on_fatal);
	signal(SIGSEGV, on_fatal);
	signal(SIGPIPE, SIG_IGN);

	kfd = fz_kmsg_open();
	if (fz_dev_path(dev_path, sizeof(dev_path)))
		ksft_exit_fail_msg("no rkaccel device\n");
	have_counts = !fz_counts_read(&base);
	shared_fd = open(dev_path, O_RDWR | O_CLOEXEC);
	if (shared_fd < 0 || rkt_query(shared_fd, &devq))
		ksft_exit_fail_msg("opening %s: %s\n", dev_path, strerror(errno));

	thrs = calloc(opt.threads, sizeof(*thrs));
	if (!thrs)
		ksft_exit_fail_msg("out of memory\n");
	t_start = rkt_now_ns();
	for (int i = 0; i < opt.threads; i++) {
		struct thr *t = &thrs[i];
		uint64_t s = opt.seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(i + 1));

		t->id = i;
		t->rng = splitmix(&s);
		t->ring = calloc(opt.ring, sizeof(*t->ring));
		if (!t->ring)
			ksft_exit_fail_msg("out of memory\n");
		t->f[0].fd = shared_fd;
		for (int j = 1; j < NFILES; j++) {
			t->f[j].fd = open(dev_path, O_RDWR | O_CLOEXEC);
			if (t->f[j].fd < 0)
				ksft_exit_fail_msg("open: %s\n", strerror(errno));
		}
		if (opt.only_thread >= 0 && opt.only_thread != i)
			continue;
		if (opt.only_thread >= 0 || opt.threads == 1)
			thr_main(t);
		else if (pthread_create(&t->thread, NULL, thr_main, t))
			ksft_exit_fail_msg("pthread_create failed\n");
	}
	for (int i = 0; i < opt.threads; i++) {
		if (opt.only_thread < 0 && opt.threads > 1)
			pthread_join(thrs[i].thread, NULL);
		total += thrs[i].done;
		fences += thrs[i].fences_checked;
		submits += thrs[i].submits_ok;
		forks += thrs[i].forks;
		hangs += thrs[i].hangs;
	}
	printf("# %.1f s: %" PRIu64 " operations, %" PRIu64 " jobs queued (%" PRIu64
	       " may hang), %" PRIu64 " fences checked, %" PRIu64 " children killed\n",
	       (rkt_now_ns() - t_start) / 1e9, total, submits, hangs, fences, forks);
	printf("# per operation:");
	for (int o = 0; o < OP_COUNT; o++) {
		uint64_t n = 0;

		for (int i = 0; i < opt.threads; i++)
			n += thrs[i].count[o];
		printf(" %s=%" PRIu64, ops[o].name, n);
	}
	printf("\n");
	ksft_test_result(!failed, "fuzz.errnos_and_fences\n");

	/* everything closed: the counts come back */
	if (opt.brk == BREAK_LEAK && thrs[0].ndmabuf)
		kept_dmabuf = dup(thrs[0].dmabuf[0]);
	for (int i = 0; i < opt.threads; i++)
		thr_cleanup(&thrs[i]);
	close(shared_fd);
	if (!have_counts) {
		ksft_test_result_skip("fuzz.no_leak # no object counts in debugfs\n");
	} else {
		bool ok = fz_counts_settle(&base, &now, 10000);

		if (!ok)
			printf("# debugfs: bos %ld -> %ld, contexts %ld -> %ld, files %ld -> %ld\n",
			       base.bos, now.bos, base.ctxs, now.ctxs, base.files, now.files);
		ksft_test_result(ok, "fuzz.no_leak\n");
	}
	if (kept_dmabuf >= 0)
		close(kept_dmabuf);

	ret = fz_known_good(30000, opt.brk == BREAK_USABLE);
	if (ret)
		printf("# the known-good job: %d (%s)\n", ret, strerror(-ret));
	ksft_test_result(!ret, "fuzz.device_usable\n");
	if (opt.brk == BREAK_REPORT) {
		int r = fz_kmsg_write("fuzz_test: WARNING: deliberate (--break report)\n");

		if (r)
			printf("# writing /dev/kmsg: %s\n", strerror(-r));
	}
	reports = fz_kmsg_reports(kfd, false);
	ksft_test_result(!reports, "fuzz.no_kernel_report\n");
	if (failed || ret || reports)
		printf("# seed 0x%" PRIx64 ": replay with --seed and --only-thread of the failing"
		       " thread; --verbose prints every operation\n", opt.seed);
	for (int i = 0; i < opt.threads; i++)
		free(thrs[i].ring);
	free(thrs);
	ksft_finished();
}
