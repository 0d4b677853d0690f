// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffer objects: shmem GEM objects mapped into the NPU address space of every
 * file that holds a handle to them, and weight BOs that become read-only for
 * CPU and device once sealed, shared between files without copies.
 */

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_prime.h>
#include <drm/drm_utils.h>
#include <drm/drm_vma_manager.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>

#include "rkaccel_device.h"
#include "rkaccel_gem.h"
#include "rkaccel_vm.h"

static atomic_t rkaccel_bo_count = ATOMIC_INIT(0);

int rkaccel_gem_live_count(void)
{
	return atomic_read(&rkaccel_bo_count);
}

static struct rkaccel_bo_mapping *rkaccel_bo_find_mapping(struct rkaccel_bo *bo,
							  struct rkaccel_file *rfile)
{
	struct rkaccel_bo_mapping *m;

	lockdep_assert_held(&bo->lock);
	list_for_each_entry(m, &bo->mappings, link)
		if (m->owner == rfile)
			return m;
	return NULL;
}

u64 rkaccel_bo_npu_addr(struct rkaccel_bo *bo, struct rkaccel_file *rfile)
{
	struct rkaccel_bo_mapping *m;

	guard(mutex)(&bo->lock);
	m = rkaccel_bo_find_mapping(bo, rfile);
	return m ? m->node.start : 0;
}

/* A reference to the BO's mapping in @rfile, for a job; NULL if none. */
struct rkaccel_bo_mapping *rkaccel_bo_mapping_get(struct rkaccel_bo *bo,
						  struct rkaccel_file *rfile)
{
	struct rkaccel_bo_mapping *m;

	guard(mutex)(&bo->lock);
	m = rkaccel_bo_find_mapping(bo, rfile);
	if (m)
		kref_get(&m->refcount);
	return m;
}

/* Called with bo->lock held, which it drops: nobody can find @m any more. */
static void rkaccel_bo_mapping_release(struct kref *kref)
{
	struct rkaccel_bo_mapping *m = container_of(kref, struct rkaccel_bo_mapping, refcount);
	struct rkaccel_bo *bo = m->bo;

	list_del(&m->link);
	mutex_unlock(&bo->lock);
	rkaccel_vm_unmap(m->vm, &m->node);
	kfree(m);
	drm_gem_shmem_unpin(&bo->base);
}

/* The device keeps reaching the BO until the handle and every job let go. */
void rkaccel_bo_mapping_put(struct rkaccel_bo_mapping *m)
{
	kref_put_mutex(&m->refcount, rkaccel_bo_mapping_release, &m->bo->lock);
}

/* A new handle in @file: map the BO into that file's address space once. */
static int rkaccel_gem_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct rkaccel_file *rfile = file->driver_priv;
	struct rkaccel_bo *bo = to_rkaccel_bo(obj);
	struct rkaccel_bo_mapping *m;
	struct sg_table *sgt;
	int ret;

	guard(mutex)(&bo->lock);
	m = rkaccel_bo_find_mapping(bo, rfile);
	if (m) {
		/* still held by a job since the last handle closed */
		kref_get(&m->refcount);
		return 0;
	}

	ret = drm_gem_shmem_pin(&bo->base);
	if (ret)
		return ret;
	/*
	 * The pages' DMA mapping for the device, made once here: SUBMIT,
	 * which holds the reservation, and the signalling path only sync it.
	 */
	sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto err_unpin;
	}

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		ret = -ENOMEM;
		goto err_unpin;
	}
	ret = rkaccel_vm_map(&rfile->vm, &m->node, bo->base.pages, obj->size,
			     bo->flags & DRM_RKACCEL_BO_WEIGHT);
	if (ret)
		goto err_free;

	kref_init(&m->refcount);
	m->bo = bo;
	m->vm = &rfile->vm;
	m->owner = rfile;
	list_add_tail(&m->link, &bo->mappings);
	return 0;

err_free:
	kfree(m);
err_unpin:
	drm_gem_shmem_unpin(&bo->base);
	return ret;
}

/*
 * A handle of @file is gone. The mapping goes with the last holder: queued
 * jobs of the file still reach the BO at the address they were given.
 */
static void rkaccel_gem_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct rkaccel_bo *bo = to_rkaccel_bo(obj);
	struct rkaccel_bo_mapping *m;

	scoped_guard(mutex, &bo->lock)
		m = rkaccel_bo_find_mapping(bo, file->driver_priv);
	if (m)
		rkaccel_bo_mapping_put(m);
}

static void rkaccel_gem_free(struct drm_gem_object *obj)
{
	struct rkaccel_bo *bo = to_rkaccel_bo(obj);

	WARN_ON(!list_empty(&bo->mappings));
	mutex_destroy(&bo->lock);
	atomic_dec(&rkaccel_bo_count);
	drm_gem_shmem_free(&bo->base);
}

/* Only sealed weights leave the device: importers must see final content. */
static struct dma_buf *rkaccel_gem_export(struct drm_gem_object *obj, int flags)
{
	struct rkaccel_bo *bo = to_rkaccel_bo(obj);

	if ((bo->flags & DRM_RKACCEL_BO_WEIGHT) && !READ_ONCE(bo->sealed))
		return ERR_PTR(-EINVAL);
	return drm_gem_prime_export(obj, flags);
}

static enum drm_gem_object_status rkaccel_gem_status(struct drm_gem_object *obj)
{
	return to_drm_gem_shmem_obj(obj)->pages ? DRM_GEM_OBJECT_RESIDENT : 0;
}

static size_t rkaccel_gem_rss(struct drm_gem_object *obj)
{
	return to_drm_gem_shmem_obj(obj)->pages ? obj->size : 0;
}

/* The mapping's protection without write, as drm_gem_shmem_mmap() builds it. */
static pgprot_t rkaccel_gem_ro_prot(struct vm_area_struct *vma)
{
	return pgprot_decrypted(vm_get_page_prot(vma->vm_flags & ~VM_WRITE));
}

static vm_fault_t rkaccel_gem_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct drm_gem_object *obj = vma->vm_private_data;
	struct rkaccel_bo *bo = to_rkaccel_bo(obj);
	pgoff_t pgoff = (vmf->address - vma->vm_start) >> PAGE_SHIFT;
	vm_fault_t ret;

	dma_resv_lock(obj->resv, NULL);
	if (pgoff >= obj->size >> PAGE_SHIFT || !bo->base.pages) {
		ret = VM_FAULT_SIGBUS;
	} else if (READ_ONCE(bo->sealed)) {
		/* Read-only PTEs; a write then lands in pfn_mkwrite. */
		if (vmf->flags & FAULT_FLAG_WRITE)
			ret = VM_FAULT_SIGBUS;
		else
			ret = vmf_insert_pfn_prot(vma, vmf->address,
						  page_to_pfn(bo->base.pages[pgoff]),
						  rkaccel_gem_ro_prot(vma));
	} else {
		ret = vmf_insert_pfn(vma, vmf->address, page_to_pfn(bo->base.pages[pgoff]));
	}
	dma_resv_unlock(obj->resv);
	return ret;
}

static vm_fault_t rkaccel_gem_pfn_mkwrite(struct vm_fault *vmf)
{
	struct drm_gem_object *obj = vmf->vma->vm_private_data;

	return READ_ONCE(to_rkaccel_bo(obj)->sealed) ? VM_FAULT_SIGBUS : 0;
}

/* Page references per mapping are shmem's business. */
static void rkaccel_gem_vm_open(struct vm_area_struct *vma)
{
	drm_gem_shmem_vm_ops.open(vma);
}

static void rkaccel_gem_vm_close(struct vm_area_struct *vma)
{
	drm_gem_shmem_vm_ops.close(vma);
}

static const struct vm_operations_struct rkaccel_gem_vm_ops = {
	.fault = rkaccel_gem_fault,
	.pfn_mkwrite = rkaccel_gem_pfn_mkwrite,
	.open = rkaccel_gem_vm_open,
	.close = rkaccel_gem_vm_close,
};

static int rkaccel_gem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	struct rkaccel_bo *bo = to_rkaccel_bo(obj);
	int ret;

	if (READ_ONCE(bo->sealed)) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		vm_flags_clear(vma, VM_MAYWRITE);
	}
	ret = drm_gem_shmem_mmap(&bo->base, vma);
	if (ret)
		return ret;
	vma->vm_ops = &rkaccel_gem_vm_ops;
	return 0;
}

static const struct drm_gem_object_funcs rkaccel_gem_funcs = {
	.free = rkaccel_gem_free,
	.open = rkaccel_gem_open,
	.close = rkaccel_gem_close,
	.export = rkaccel_gem_export,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = rkaccel_gem_mmap,
	.status = rkaccel_gem_status,
	.rss = rkaccel_gem_rss,
	.vm_ops = &rkaccel_gem_vm_ops,
};

struct drm_gem_object *rkaccel_gem_create_object(struct drm_device *ddev, size_t size)
{
	struct rkaccel_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &rkaccel_gem_funcs;
	bo->base.map_wc = false;
	mutex_init(&bo->lock);
	INIT_LIST_HEAD(&bo->mappings);
	return &bo->base.base;
}

int rkaccel_ioctl_bo_create(struct drm_device *ddev, void *data, struct drm_file *file)
{
	struct drm_rkaccel_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	struct rkaccel_bo *bo;
	u32 handle;
	int ret;

	if (args->flags & ~DRM_RKACCEL_BO_WEIGHT)
		return -EINVAL;
	if (!args->size || args->size > RKACCEL_VM_END - RKACCEL_VM_START)
		return -EINVAL;

	shmem = drm_gem_shmem_create(ddev, PAGE_ALIGN(args->size));
	/* shmem's own -ENOSPC (no inode) is memory to us, not address space */
	if (IS_ERR(shmem))
		return PTR_ERR(shmem) == -ENOSPC ? -ENOMEM : PTR_ERR(shmem);
	/*
	 * Counted here, not in gem_create_object: the shmem helper frees an
	 * object it failed to set up without the .free that uncounts it.
	 */
	atomic_inc(&rkaccel_bo_count);
	bo = container_of(shmem, struct rkaccel_bo, base);
	bo->flags = args->flags;

	ret = drm_gem_create_mmap_offset(&shmem->base);
	if (ret)
		goto out;
	/*
	 * Creating the handle maps the BO (rkaccel_gem_open). Our reference
	 * stays until the end: a GEM_CLOSE of the new handle may come first.
	 */
	ret = drm_gem_handle_create(file, &shmem->base, &handle);
	if (ret)
		goto out;
	args->handle = handle;
	args->npu_addr = rkaccel_bo_npu_addr(bo, file->driver_priv);
	args->mmap_offset = drm_vma_node_offset_addr(&shmem->base.vma_node);
out:
	drm_gem_object_put(&shmem->base);
	return ret;
}

int rkaccel_ioctl_bo_info(struct drm_device *ddev, void *data, struct drm_file *file)
{
	struct drm_rkaccel_bo_info *args = data;
	struct drm_gem_object *obj;
	struct rkaccel_bo *bo;
	int ret;

	if (args->flags || args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_rkaccel_bo(obj);

	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->bo_flags = bo->flags | (READ_ONCE(bo->sealed) ? DRM_RKACCEL_BO_SEALED : 0);
		args->size = obj->size;
		args->npu_addr = rkaccel_bo_npu_addr(bo, file->driver_priv);
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	}
	drm_gem_object_put(obj);
	return ret;
}

int rkaccel_ioctl_bo_wait(struct drm_device *ddev, void *data, struct drm_file *file)
{
	struct drm_rkaccel_bo_wait *args = data;
	struct drm_gem_object *obj;
	unsigned long timeout;
	long ret;

	if (args->flags)
		return -EINVAL;
	timeout = drm_timeout_abs_to_jiffies(min_t(u64, args->timeout_ns, S64_MAX));

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_READ, true, timeout);
	drm_gem_object_put(obj);

	if (ret == 0)
		return -ETIME;
	return ret < 0 ? ret : 0;
}

int rkaccel_ioctl_bo_seal(struct drm_device *ddev, void *data, struct drm_file *file)
{
	struct drm_rkaccel_bo_seal *args = data;
	struct drm_gem_object *obj;
	struct rkaccel_bo *bo;
	int ret = 0;

	if (args->flags)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_rkaccel_bo(obj);

	if (!(bo->flags & DRM_RKACCEL_BO_WEIGHT)) {
		ret = -EINVAL;
	} else if (!READ_ONCE(bo->sealed)) {
		dma_resv_lock(obj->resv, NULL);
		WRITE_ONCE(bo->sealed, true);
		/* final content: the device sees it from now on, jobs never sync it */
		if (bo->base.sgt)
			dma_sync_sgtable_for_device(ddev->dev, bo->base.sgt, DMA_TO_DEVICE);
		dma_resv_unlock(obj->resv);
		/* Drop writable PTEs: later faults map read-only. */
		drm_vma_node_unmap(&obj->vma_node, ddev->anon_inode->i_mapping);
	}
	drm_gem_object_put(obj);
	return ret;
}

/*
 * fdinfo region "weights": the file's weight BOs, so that tools see that a
 * model's weights are held once however many contexts use them.
 */
void rkaccel_gem_show_weight_stats(struct drm_printer *p, struct drm_file *file)
{
	struct drm_memory_stats stats = {};
	struct drm_gem_object *obj;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		if (obj->funcs != &rkaccel_gem_funcs ||
		    !(to_rkaccel_bo(obj)->flags & DRM_RKACCEL_BO_WEIGHT))
			continue;
		/* the same test drm_show_memory_stats() applies, so the two agree */
		if (drm_gem_object_is_shared_for_memory_stats(obj))
			stats.shared += obj->size;
		else
			stats.private += obj->size;
		if (rkaccel_gem_status(obj) & DRM_GEM_OBJECT_RESIDENT)
			stats.resident += obj->size;
	}
	spin_unlock(&file->table_lock);
	drm_print_memory_stats(p, &stats, DRM_GEM_OBJECT_RESIDENT, "weights");
}
