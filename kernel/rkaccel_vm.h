/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_VM_H_
#define _RKACCEL_VM_H_

#include <drm/drm_mm.h>
#include <linux/iommu.h>
#include <linux/mutex.h>
#include <linux/xarray.h>

struct module;
struct page;

/**
 * struct rkaccel_vm - one NPU virtual address space (one per open file).
 * @mm_lock: protects @mm.
 * @mm: allocator of NPU addresses in [4 KiB, 4 GiB).
 * @pt: software page table: NPU page number -> struct page, XA_MARK_0 set on
 *	read-only pages. The simulator reads and writes memory only through
 *	it, under its lock; silicon holds the same mappings in an IOMMU domain.
 * @domain: on silicon, the IOMMU domain holding the same mappings as @pt;
 *	NULL on the simulator. Freed with the address space.
 * @fault_handler: without @domain, the page-fault handler the driver set
 *	with rkaccel_vm_set_fault_handler(), as iommu_set_fault_handler()
 *	sets @domain's; NULL when none.
 * @fault_token: its last argument.
 * @provider: without @domain, the module providing the cores' registers,
 *	held while the file is open (the cores may be gone by its close).
 */
struct rkaccel_vm {
	struct mutex mm_lock;	/* protects mm */
	struct drm_mm mm;
	struct xarray pt;
	struct iommu_domain *domain;
	iommu_fault_handler_t fault_handler;
	void *fault_token;
	struct module *provider;
};

#define RKACCEL_VM_START	SZ_4K
#define RKACCEL_VM_END		SZ_4G
#define RKACCEL_PT_READONLY	XA_MARK_0

void rkaccel_vm_init(struct rkaccel_vm *vm);
void rkaccel_vm_fini(struct rkaccel_vm *vm);
int rkaccel_vm_map(struct rkaccel_vm *vm, struct drm_mm_node *node, struct page **pages,
		   size_t size, bool readonly);
void rkaccel_vm_unmap(struct rkaccel_vm *vm, struct drm_mm_node *node);
void rkaccel_vm_set_fault_handler(struct rkaccel_vm *vm, iommu_fault_handler_t handler,
				  void *token);
/*
 * rkaccel_vm_read(), rkaccel_vm_write() and rkaccel_vm_report_fault():
 * rkaccel_hw_regs.h, the simulator's.
 */

#endif /* _RKACCEL_VM_H_ */
