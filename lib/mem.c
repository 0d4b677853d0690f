// SPDX-License-Identifier: MIT
/*
 * Zero-copy memory: BOs mapped for the CPU and the NPU, dma-buf export and
 * import. A file holds one GEM handle per BO however often it imports it,
 * so imports on the same handle share a reference count here.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"

/* One GEM handle of one file, shared by the mems on it. */
struct mem_handle {
	int fd;
	uint32_t handle;
	int refs;
	struct mem_handle *next;
};

static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mem_handle *handles;

/* A reference to @handle of @fd, new or shared; NULL on -ENOMEM. */
static struct mem_handle *handle_get(int fd, uint32_t handle)
{
	struct mem_handle *h;

	pthread_mutex_lock(&handles_lock);
	for (h = handles; h; h = h->next)
		if (h->fd == fd && h->handle == handle)
			break;
	if (h) {
		h->refs++;
	} else {
		h = calloc(1, sizeof(*h));
		if (h) {
			h->fd = fd;
			h->handle = handle;
			h->refs = 1;
			h->next = handles;
			handles = h;
		}
	}
	pthread_mutex_unlock(&handles_lock);
	return h;
}

/* Drop a reference; closes the GEM handle with the last one. */
static void handle_put(struct mem_handle *h)
{
	struct mem_handle **pp;
	struct drm_gem_close c = { .handle = h->handle };
	bool last;

	pthread_mutex_lock(&handles_lock);
	last = --h->refs == 0;
	if (last) {
		for (pp = &handles; *pp != h; pp = &(*pp)->next)
			;
		*pp = h->next;
	}
	pthread_mutex_unlock(&handles_lock);
	if (last) {
		drmIoctl(h->fd, DRM_IOCTL_GEM_CLOSE, &c);
		free(h);
	}
}

/* Close a handle no mem refers to yet (it may be shared: count it first). */
static void handle_drop(int fd, uint32_t handle)
{
	struct mem_handle *h = handle_get(fd, handle);
	struct drm_gem_close c = { .handle = handle };

	if (h)
		handle_put(h);
	else	/* no entry existed, so no mem holds it: close it here */
		drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* Map @handle's BO and wrap it as a mem; takes over the handle reference @h. */
static int mem_wrap(int fd, struct mem_handle *h, uint64_t bo_size, uint64_t npu_addr,
		    uint64_t mmap_offset, size_t size, struct rkaccel_mem **out)
{
	struct rkaccel_mem *m = calloc(1, sizeof(*m));
	size_t len = (size_t)((bo_size + DRM_RKACCEL_BO_ALIGN - 1) / DRM_RKACCEL_BO_ALIGN *
			      DRM_RKACCEL_BO_ALIGN);
	void *p;
	int ret;

	if (!m) {
		handle_put(h);
		return -ENOMEM;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)mmap_offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		free(m);
		handle_put(h);
		return ret;
	}
	m->virt = p;
	m->size = size;
	m->npu_addr = npu_addr;
	m->handle = h->handle;
	m->dev_fd = fd;
	m->map_len = len;
	m->priv = h;
	*out = m;
	return 0;
}

int rkaccel_mem_alloc(struct rkaccel_device *dev, size_t size, struct rkaccel_mem **mem)
{
	struct drm_rkaccel_bo_create c = { .size = size };
	struct mem_handle *h;
	int fd;

	if (!dev || !size || !mem)
		return -EINVAL;
	fd = rkaccel_fd(dev);
	if (drmIoctl(fd, DRM_IOCTL_RKACCEL_BO_CREATE, &c))
		return -errno;
	h = handle_get(fd, c.handle);
	if (!h) {
		handle_drop(fd, c.handle);
		return -ENOMEM;
	}
	return mem_wrap(fd, h, c.size, c.npu_addr, c.mmap_offset, size, mem);
}

int rkaccel_mem_from_fd(struct rkaccel_device *dev, int dmabuf_fd, size_t size,
			struct rkaccel_mem **mem)
{
	struct drm_rkaccel_bo_info bi = { 0 };
	struct mem_handle *h;
	uint32_t handle;
	int fd;

	if (!dev || dmabuf_fd < 0 || !size || !mem)
		return -EINVAL;
	fd = rkaccel_fd(dev);
	if (drmPrimeFDToHandle(fd, dmabuf_fd, &handle))
		return -errno;
	h = handle_get(fd, handle);
	if (!h) {
		handle_drop(fd, handle);
		return -ENOMEM;
	}
	bi.handle = handle;
	if (drmIoctl(fd, DRM_IOCTL_RKACCEL_BO_INFO, &bi)) {
		int ret = -errno;

		handle_put(h);
		return ret;
	}
	if (size > bi.size || (bi.bo_flags & DRM_RKACCEL_BO_WEIGHT)) {
		handle_put(h);
		return -EINVAL;
	}
	return mem_wrap(fd, h, bi.size, bi.npu_addr, bi.mmap_offset, size, mem);
}

int rkaccel_mem_export(struct rkaccel_mem *mem, int *dmabuf_fd)
{
	if (!mem || !dmabuf_fd)
		return -EINVAL;
	if (drmPrimeHandleToFD(mem->dev_fd, mem->handle, DRM_CLOEXEC | DRM_RDWR, dmabuf_fd))
		return -errno;
	return 0;
}

void rkaccel_mem_free(struct rkaccel_mem *mem)
{
	if (!mem)
		return;
	munmap(mem->virt, mem->map_len);
	handle_put(mem->priv);
	free(mem);
}
