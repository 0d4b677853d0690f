// SPDX-License-Identifier: MIT
/*
 * librkaccel-rknn memory: rknn_create_mem/_mem2/_mem_from_fd, destroy,
 * cache sync, and the calls that would place weights or activations in the
 * caller's memory, which librkaccel cannot do (refused after the checks).
 *
 * Every rknn_tensor_mem made here is in a list, so that a pointer that is
 * not one (or one already destroyed) is refused without being read. Each
 * holds the shared device open, as a context does.
 */

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "rkaccel_drm.h"
#include "rknn_internal.h"

#define MEM_ALLOC_FLAGS (RKNN_FLAG_MEMORY_CACHEABLE | RKNN_FLAG_MEMORY_NON_CACHEABLE | \
			 RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM | RKNN_MEM_FLAG_ALLOC_NO_CONTEXT)

/* How long rknn_mem_sync() waits for the jobs on a buffer: a hung job ends sooner. */
#define MEM_SYNC_WAIT_NS	(60ull * 1000000000ull)

static struct rknn_mem_priv *g_mems;

struct rknn_mem_priv *mem_find_locked(const rknn_tensor_mem *m)
{
	struct rknn_mem_priv *p;

	for (p = g_mems; p && p->pub != m; p = p->next)
		;
	return p;
}

int mem_live(const rknn_tensor_mem *m)
{
	int live;

	pthread_mutex_lock(&g_lock);
	live = m && mem_find_locked(m);
	pthread_mutex_unlock(&g_lock);
	return live;
}

struct rkaccel_mem *mem_of(const rknn_tensor_mem *m)
{
	return ((struct rknn_mem_priv *)m->priv_data)->mem;
}

/* Register @p (its pub filled); the device reference is already taken. */
static rknn_tensor_mem *mem_publish(struct rknn_mem_priv *p)
{
	p->pub->priv_data = p;
	pthread_mutex_lock(&g_lock);
	p->next = g_mems;
	g_mems = p;
	pthread_mutex_unlock(&g_lock);
	return p->pub;
}

/* A new, unregistered mem wrapper, or NULL. */
static struct rknn_mem_priv *mem_new(void)
{
	struct rknn_mem_priv *p = calloc(1, sizeof(*p));

	if (p)
		p->pub = calloc(1, sizeof(*p->pub));
	if (p && !p->pub) {
		free(p);
		p = NULL;
	}
	return p;
}

static void mem_discard(struct rknn_mem_priv *p)
{
	if (!p)
		return;
	if (p->own_fd && p->pub->fd >= 0)
		close(p->pub->fd);
	rkaccel_mem_free(p->mem);
	free(p->pub);
	free(p);
}

/*
 * The device reference for a new mem: through the live context @ctx, or
 * with @no_context through a context of 0 too (opening the device if no
 * context has). 0 or an RKNN_ERR_* code.
 */
static int mem_dev_get(rknn_context ctx, int no_context)
{
	struct rknn_ctx *c = NULL;
	int ret;

	if (ctx || !no_context) {
		c = ctx_get(ctx);
		if (!c)
			return RKNN_ERR_CTX_INVALID;
	}
	ret = dev_get();	/* cannot fail while @c holds the device open */
	if (c)
		ctx_put(c);
	return ret ? RKNN_ERR_DEVICE_UNAVAILABLE : RKNN_SUCC;
}

rknn_tensor_mem *rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags)
{
	int no_context = !!(alloc_flags & RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
	struct rknn_mem_priv *p;
	int fd, ret;

	if ((alloc_flags & ~(uint64_t)MEM_ALLOC_FLAGS) ||
	    (alloc_flags & RKNN_FLAG_MEMORY_CACHEABLE &&
	     alloc_flags & RKNN_FLAG_MEMORY_NON_CACHEABLE)) {
		rknn_log("rknn_create_mem2: alloc_flags 0x%llx not supported",
			 (unsigned long long)alloc_flags);
		return NULL;
	}
	if (!size || size > UINT32_MAX) {
		rknn_log("rknn_create_mem2: size %llu: 1 .. 4 GiB - 1 (rknn_tensor_mem.size)",
			 (unsigned long long)size);
		return NULL;
	}
	if (mem_dev_get(ctx, no_context))
		return NULL;
	p = mem_new();
	if (!p)
		goto fail;
	p->pub->fd = -1;
	ret = rkaccel_mem_alloc(g_dev, (size_t)size, &p->mem);
	if (!ret)
		ret = rkaccel_mem_export(p->mem, &fd);
	if (ret) {
		rknn_log("rknn_create_mem2: %llu bytes: %s", (unsigned long long)size,
			 rkaccel_strerror(ret));
		goto fail;
	}
	p->own_fd = 1;
	p->no_context = no_context;
	p->pub->virt_addr = rkaccel_mem_ptr(p->mem);
	p->pub->phys_addr = rkaccel_mem_npu_addr(p->mem);
	p->pub->fd = fd;
	p->pub->size = (uint32_t)size;
	p->pub->flags = RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE;
	return mem_publish(p);
fail:
	mem_discard(p);
	dev_put();
	return NULL;
}

rknn_tensor_mem *rknn_create_mem(rknn_context ctx, uint32_t size)
{
	return rknn_create_mem2(ctx, size, RKNN_FLAG_MEMORY_FLAGS_DEFAULT);
}

rknn_tensor_mem *rknn_create_mem_from_fd(rknn_context ctx, int32_t fd, void *virt_addr,
					  uint32_t size, int32_t offset)
{
	struct rknn_mem_priv *p;
	int ret;

	if (fd < 0 || !size || offset < 0) {
		rknn_log("rknn_create_mem_from_fd: fd %d, size %u, offset %d: invalid",
			 fd, size, offset);
		return NULL;
	}
	if (mem_dev_get(ctx, 0))
		return NULL;
	p = mem_new();
	if (!p)
		goto fail;
	/* The import covers the buffer up to the data's end: offsets stay the caller's. */
	ret = rkaccel_mem_from_fd(g_dev, fd, (size_t)offset + size, &p->mem);
	if (ret) {
		rknn_log("rknn_create_mem_from_fd: fd %d (%u bytes at offset %d): %s", fd, size,
			 offset, rkaccel_strerror(ret));
		goto fail;
	}
	p->pub->virt_addr = virt_addr ? virt_addr : rkaccel_mem_ptr(p->mem);
	p->pub->phys_addr = rkaccel_mem_npu_addr(p->mem);
	p->pub->fd = fd;
	p->pub->offset = offset;
	p->pub->size = size;
	p->pub->flags = RKNN_TENSOR_MEMORY_FLAGS_FROM_FD;
	return mem_publish(p);
fail:
	mem_discard(p);
	dev_put();
	return NULL;
}

rknn_tensor_mem *rknn_create_mem_from_phys(rknn_context ctx, uint64_t phys_addr,
					    void *virt_addr, uint32_t size)
{
	(void)ctx;
	(void)phys_addr;
	(void)virt_addr;
	(void)size;
	rknn_log("rknn_create_mem_from_phys: not supported: the NPU reaches memory through "
		 "its IOMMU only; use rknn_create_mem_from_fd with a dma-buf");
	return NULL;
}

rknn_tensor_mem *rknn_create_mem_from_mb_blk(rknn_context ctx, void *mb_blk, int32_t offset)
{
	(void)ctx;
	(void)mb_blk;
	(void)offset;
	rknn_log("rknn_create_mem_from_mb_blk: not supported: media buffer blocks are RV110x "
		 "only; use rknn_create_mem_from_fd with a dma-buf");
	return NULL;
}

/* Whether a live context has @m bound; g_lock held. */
static int mem_bound_locked(const rknn_tensor_mem *m)
{
	struct rknn_ctx *o;

	for (o = g_ctxs; o; o = o->next)
		if (o->bound[0] == m || o->bound[1] == m || o->conv[0] == m || o->conv[1] == m)
			return 1;
	return 0;
}

int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem *mem)
{
	struct rknn_mem_priv **pp, *p;
	struct rknn_ctx *c = NULL;
	int ret = RKNN_SUCC;

	/* A context of 0 only for memory made without one. */
	if (ctx) {
		c = ctx_get(ctx);
		if (!c)
			return RKNN_ERR_CTX_INVALID;
		ctx_put(c);
	}
	pthread_mutex_lock(&g_lock);
	for (pp = &g_mems; *pp && (*pp)->pub != mem; pp = &(*pp)->next)
		;
	p = *pp;
	if (!mem || !p)
		ret = RKNN_ERR_PARAM_INVALID;
	else if (!c && !p->no_context)
		ret = RKNN_ERR_CTX_INVALID;
	else if (mem_bound_locked(mem))
		ret = RKNN_ERR_PARAM_INVALID;	/* it would be freed under the context */
	else
		*pp = p->next;
	pthread_mutex_unlock(&g_lock);
	if (ret)
		return ret;
	mem_discard(p);
	dev_put();
	return RKNN_SUCC;
}

/*
 * The driver cleans every buffer of a job before it starts and invalidates
 * those it wrote before its fence signals. What is left: order the CPU's
 * stores before a submit (TO_DEVICE), and wait until no job still writes
 * the buffer (FROM_DEVICE).
 */
int rknn_mem_sync(rknn_context context, rknn_tensor_mem *mem, rknn_mem_sync_mode mode)
{
	struct drm_rkaccel_bo_wait w = { 0 };
	struct rknn_ctx *c;
	struct timespec ts;

	if (context) {
		c = ctx_get(context);
		if (!c)
			return RKNN_ERR_CTX_INVALID;
		ctx_put(c);
	}
	if (!mem_live(mem) || !(mode & RKNN_MEMORY_SYNC_BIDIRECTIONAL) ||
	    (mode & ~RKNN_MEMORY_SYNC_BIDIRECTIONAL))
		return RKNN_ERR_PARAM_INVALID;
	atomic_thread_fence(memory_order_seq_cst);
	if (!(mode & RKNN_MEMORY_SYNC_FROM_DEVICE))
		return RKNN_SUCC;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.handle = rkaccel_mem_handle(mem_of(mem));
	w.timeout_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
		       MEM_SYNC_WAIT_NS;
	if (drmIoctl(rkaccel_fd(g_dev), DRM_IOCTL_RKACCEL_BO_WAIT, &w)) {
		int err = -errno;

		rknn_log("rknn_mem_sync: waiting for the buffer's jobs: %s", rkaccel_strerror(err));
		return rknn_err(err);
	}
	atomic_thread_fence(memory_order_seq_cst);
	return RKNN_SUCC;
}

/* Bytes of @c's buffer @which, as RKNN_QUERY_MEM_SIZE reports them (0: none). */
static uint64_t ctx_buf_bytes(const struct rknn_ctx *c, enum rkaccel_buffer which)
{
	struct drm_rkaccel_bo_info bi = { .handle = rkaccel_ctx_bo_handle(c->ctx, which) };

	if (!bi.handle || drmIoctl(rkaccel_fd(g_dev), DRM_IOCTL_RKACCEL_BO_INFO, &bi))
		return 0;
	return bi.size;
}

/*
 * The checks both refusals make first, as the SDK would: a live context,
 * a live mem holding at least the size RKNN_QUERY_MEM_SIZE gives.
 */
static int outside_mem_check(const char *call, rknn_context ctx, rknn_tensor_mem *mem,
			     enum rkaccel_buffer which)
{
	struct rknn_ctx *c = ctx_get(ctx);
	uint64_t need;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	need = ctx_buf_bytes(c, which);
	ctx_put(c);
	if (!mem_live(mem)) {
		rknn_log("%s: not a memory of rknn_create_mem*()", call);
		return RKNN_ERR_PARAM_INVALID;
	}
	if (mem->size < need) {
		rknn_log("%s: %u bytes, the model needs %llu", call, mem->size,
			 (unsigned long long)need);
		return RKNN_ERR_PARAM_INVALID;
	}
	return RKNN_SUCC;
}

int rknn_set_weight_mem(rknn_context ctx, rknn_tensor_mem *mem)
{
	int ret = outside_mem_check("rknn_set_weight_mem", ctx, mem, RKACCEL_BUF_WEIGHTS);

	if (ret)
		return ret;
	rknn_log("rknn_set_weight_mem: not supported: librkaccel keeps a model's weights in a "
		 "sealed buffer of its own, shared by its duplicates (Documentation/rknn.rst)");
	return RKNN_ERR_FAIL;
}

int rknn_set_internal_mem(rknn_context ctx, rknn_tensor_mem *mem)
{
	int ret = outside_mem_check("rknn_set_internal_mem", ctx, mem, RKACCEL_BUF_INTERNAL);

	if (ret)
		return ret;
	rknn_log("rknn_set_internal_mem: not supported: librkaccel keeps a context's "
		 "activations in a buffer of its own (Documentation/rknn.rst)");
	return RKNN_ERR_FAIL;
}
