/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_GEM_H_
#define _RKACCEL_GEM_H_

#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>
#include <linux/kref.h>

struct drm_printer;
struct rkaccel_file;
struct rkaccel_vm;

/**
 * struct rkaccel_bo - a shmem-backed buffer object.
 * @base: the shmem GEM object.
 * @flags: DRM_RKACCEL_BO_* creation flags.
 * @sealed: a weight BO whose content is final: CPU and device read-only.
 * @lock: protects @mappings.
 * @mappings: struct rkaccel_bo_mapping, one per file holding a handle.
 */
struct rkaccel_bo {
	struct drm_gem_shmem_object base;
	u32 flags;
	bool sealed;
	struct mutex lock;	/* protects mappings */
	struct list_head mappings;
};

/**
 * struct rkaccel_bo_mapping - a BO mapped into one file's address space.
 * @refcount: the file's handle and every job using the BO hold one; the
 *	range is unmapped and freed when the last goes.
 * @bo: the mapped BO (the holders keep it alive).
 * @node: the NPU address range.
 * @vm: the address space.
 * @owner: the file whose address space @vm is.
 * @link: in &rkaccel_bo.mappings.
 */
struct rkaccel_bo_mapping {
	struct kref refcount;
	struct rkaccel_bo *bo;
	struct drm_mm_node node;
	struct rkaccel_vm *vm;
	struct rkaccel_file *owner;
	struct list_head link;
};

static inline struct rkaccel_bo *to_rkaccel_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct rkaccel_bo, base);
}

struct drm_gem_object *rkaccel_gem_create_object(struct drm_device *ddev, size_t size);
u64 rkaccel_bo_npu_addr(struct rkaccel_bo *bo, struct rkaccel_file *rfile);
struct rkaccel_bo_mapping *rkaccel_bo_mapping_get(struct rkaccel_bo *bo,
						  struct rkaccel_file *rfile);
void rkaccel_bo_mapping_put(struct rkaccel_bo_mapping *m);

int rkaccel_ioctl_bo_create(struct drm_device *ddev, void *data, struct drm_file *file);
int rkaccel_ioctl_bo_info(struct drm_device *ddev, void *data, struct drm_file *file);
int rkaccel_ioctl_bo_wait(struct drm_device *ddev, void *data, struct drm_file *file);
int rkaccel_ioctl_bo_seal(struct drm_device *ddev, void *data, struct drm_file *file);
void rkaccel_gem_show_weight_stats(struct drm_printer *p, struct drm_file *file);

#endif /* _RKACCEL_GEM_H_ */
