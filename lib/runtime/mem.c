// SPDX-License-Identifier: MIT
/*
 * Zero-copy memory: BOs mapped for the CPU and the NPU, dma-buf export and
 * import. Handles are owned through handle.c, as contexts' are, so an
 * import that gets back a handle a mem or a context already holds shares it.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <xf86drm.h>

#include "runtime.h"
#include "rkaccel_drm.h"

/* Map @handle's BO and wrap it as a mem; takes over the handle's reference. */
static int mem_wrap(int fd, uint32_t handle, uint64_t bo_size, uint64_t npu_addr,
		    uint64_t mmap_offset, size_t size, struct rkaccel_mem **out)
{
	struct rkaccel_mem *m = calloc(1, sizeof(*m));
	size_t len = (size_t)((bo_size + DRM_RKACCEL_BO_ALIGN - 1) / DRM_RKACCEL_BO_ALIGN *
			      DRM_RKACCEL_BO_ALIGN);
	void *p;
	int ret;

	if (!m) {
		gem_ref_put(fd, handle);
		return -ENOMEM;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)mmap_offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		free(m);
		gem_ref_put(fd, handle);
		return ret;
	}
	*m = (struct rkaccel_mem){
		.virt = p, .size = size, .npu_addr = npu_addr, .handle = handle,
		.dev_fd = fd, .map_len = len,
	};
	*out = m;
	return 0;
}

int rkaccel_mem_alloc(struct rkaccel_device *dev, size_t size, struct rkaccel_mem **mem)
{
	if (!dev || !size || !mem)
		return -EINVAL;
	return mem_alloc_fd(rkaccel_fd(dev), size, mem);
}

int mem_alloc_fd(int fd, size_t size, struct rkaccel_mem **mem)
{
	struct drm_rkaccel_bo_create c = { .size = size };
	int ret;

	if (drmIoctl(fd, DRM_IOCTL_RKACCEL_BO_CREATE, &c))
		return -errno;
	ret = gem_ref_get(fd, c.handle);
	if (ret)
		return ret;
	return mem_wrap(fd, c.handle, c.size, c.npu_addr, c.mmap_offset, size, mem);
}

int rkaccel_mem_from_fd(struct rkaccel_device *dev, int dmabuf_fd, size_t size,
			struct rkaccel_mem **mem)
{
	struct drm_rkaccel_bo_info bi = { 0 };
	uint32_t handle;
	int fd, ret;

	if (!dev || dmabuf_fd < 0 || !size || !mem)
		return -EINVAL;
	fd = rkaccel_fd(dev);
	ret = gem_ref_import(fd, dmabuf_fd, &handle);
	if (ret)
		return ret;
	bi.handle = handle;
	if (drmIoctl(fd, DRM_IOCTL_RKACCEL_BO_INFO, &bi))
		ret = -errno;
	else if (size > bi.size || (bi.bo_flags & DRM_RKACCEL_BO_WEIGHT))
		ret = -EINVAL;
	if (ret) {
		gem_ref_put(fd, handle);
		return ret;
	}
	return mem_wrap(fd, handle, bi.size, bi.npu_addr, bi.mmap_offset, size, mem);
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
	gem_ref_put(mem->dev_fd, mem->handle);
	free(mem);
}

void *rkaccel_mem_ptr(const struct rkaccel_mem *mem)
{
	return mem ? mem->virt : NULL;
}

size_t rkaccel_mem_size(const struct rkaccel_mem *mem)
{
	return mem ? mem->size : 0;
}

uint64_t rkaccel_mem_npu_addr(const struct rkaccel_mem *mem)
{
	return mem ? mem->npu_addr : 0;
}

uint32_t rkaccel_mem_handle(const struct rkaccel_mem *mem)
{
	return mem ? mem->handle : 0;
}
