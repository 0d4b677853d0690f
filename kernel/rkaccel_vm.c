// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-file NPU address space: drm_mm hands out addresses, a software page
 * table records which page backs each NPU page and whether it is read-only.
 */

#include <linux/highmem.h>
#include <linux/iommu.h>
#include <linux/mm.h>
#include <linux/sizes.h>

#include "rkaccel_hw_regs.h"
#include "rkaccel_vm.h"

void rkaccel_vm_init(struct rkaccel_vm *vm)
{
	mutex_init(&vm->mm_lock);
	drm_mm_init(&vm->mm, RKACCEL_VM_START, RKACCEL_VM_END - RKACCEL_VM_START);
	xa_init(&vm->pt);
}

void rkaccel_vm_fini(struct rkaccel_vm *vm)
{
	WARN_ON(!xa_empty(&vm->pt));
	if (vm->domain)
		iommu_domain_free(vm->domain);
	xa_destroy(&vm->pt);
	drm_mm_takedown(&vm->mm);
	mutex_destroy(&vm->mm_lock);
}

static void rkaccel_pt_clear(struct rkaccel_vm *vm, u64 start, unsigned long npages)
{
	unsigned long i, first = start >> PAGE_SHIFT;

	xa_lock(&vm->pt);
	for (i = 0; i < npages; i++)
		__xa_erase(&vm->pt, first + i);
	xa_unlock(&vm->pt);
}

/* Silicon: the same pages into the IOMMU domain, read-only for weights. */
static int rkaccel_vm_iommu_map(struct rkaccel_vm *vm, u64 start, struct page **pages,
				unsigned long npages, bool readonly)
{
	int prot = IOMMU_READ | (readonly ? 0 : IOMMU_WRITE);
	unsigned long i;
	int ret;

	if (!vm->domain)
		return 0;
	for (i = 0; i < npages; i++) {
		ret = iommu_map(vm->domain, start + i * PAGE_SIZE, page_to_phys(pages[i]),
				PAGE_SIZE, prot, GFP_KERNEL);
		if (ret) {
			if (i)
				iommu_unmap(vm->domain, start, i * PAGE_SIZE);
			return ret;
		}
	}
	return 0;
}

/* Allocate an NPU range for @size bytes and enter @pages into the table. */
int rkaccel_vm_map(struct rkaccel_vm *vm, struct drm_mm_node *node, struct page **pages,
		   size_t size, bool readonly)
{
	unsigned long i, first, npages = size >> PAGE_SHIFT;
	int ret;

	scoped_guard(mutex, &vm->mm_lock)
		ret = drm_mm_insert_node_generic(&vm->mm, node, size, PAGE_SIZE, 0, 0);
	if (ret)
		return ret;

	/* Entry and mark under one lock: no reader sees a writable weight page. */
	first = node->start >> PAGE_SHIFT;
	for (i = 0; i < npages; i++) {
		xa_lock(&vm->pt);
		ret = xa_err(__xa_store(&vm->pt, first + i, pages[i], GFP_KERNEL));
		if (!ret && readonly)
			__xa_set_mark(&vm->pt, first + i, RKACCEL_PT_READONLY);
		xa_unlock(&vm->pt);
		if (ret)
			goto err_clear;
	}
	ret = rkaccel_vm_iommu_map(vm, node->start, pages, npages, readonly);
	if (ret)
		goto err_clear;
	return 0;

err_clear:
	rkaccel_pt_clear(vm, node->start, i);
	scoped_guard(mutex, &vm->mm_lock)
		drm_mm_remove_node(node);
	return ret;
}

/* Once this returns the device no longer reaches the pages. */
void rkaccel_vm_unmap(struct rkaccel_vm *vm, struct drm_mm_node *node)
{
	if (vm->domain)
		iommu_unmap(vm->domain, node->start, node->size);
	rkaccel_pt_clear(vm, node->start, node->size >> PAGE_SHIFT);
	guard(mutex)(&vm->mm_lock);
	drm_mm_remove_node(node);
}

/* Copy between @buf and NPU memory page by page; a hole or RO page faults. */
static int rkaccel_vm_access(struct rkaccel_vm *vm, u64 addr, void *buf, size_t len,
			     bool write)
{
	if (addr >= RKACCEL_VM_END || len > RKACCEL_VM_END - addr)
		return -EFAULT;

	while (len) {
		unsigned long idx = addr >> PAGE_SHIFT;
		size_t off = offset_in_page(addr);
		size_t n = min_t(size_t, len, PAGE_SIZE - off);
		struct page *page;
		void *va;

		xa_lock(&vm->pt);
		page = xa_load(&vm->pt, idx);
		if (!page || (write && xa_get_mark(&vm->pt, idx, RKACCEL_PT_READONLY))) {
			xa_unlock(&vm->pt);
			return -EFAULT;
		}
		va = kmap_local_page(page);
		if (write)
			memcpy(va + off, buf, n);
		else
			memcpy(buf, va + off, n);
		kunmap_local(va);
		xa_unlock(&vm->pt);

		addr += n;
		buf += n;
		len -= n;
	}
	return 0;
}

int rkaccel_vm_read(struct rkaccel_vm *vm, u64 addr, void *buf, size_t len)
{
	return rkaccel_vm_access(vm, addr, buf, len, false);
}
EXPORT_SYMBOL_GPL(rkaccel_vm_read);

int rkaccel_vm_write(struct rkaccel_vm *vm, u64 addr, const void *buf, size_t len)
{
	return rkaccel_vm_access(vm, addr, (void *)buf, len, true);
}
EXPORT_SYMBOL_GPL(rkaccel_vm_write);

/*
 * The stand-in for iommu_set_fault_handler() on an address space without
 * an IOMMU domain: what a register provider's DMA reports its page faults to.
 */
void rkaccel_vm_set_fault_handler(struct rkaccel_vm *vm, iommu_fault_handler_t handler,
				  void *token)
{
	WRITE_ONCE(vm->fault_token, token);
	WRITE_ONCE(vm->fault_handler, handler);
}

int rkaccel_vm_report_fault(struct rkaccel_vm *vm, struct device *dev, u64 iova, int flags)
{
	iommu_fault_handler_t handler = READ_ONCE(vm->fault_handler);
	unsigned long irqflags;
	int ret;

	if (!handler)
		return -EOPNOTSUPP;
	/* rk_iommu reports from its hard IRQ: the handler gets the same context */
	local_irq_save(irqflags);
	ret = handler(NULL, dev, iova, flags, READ_ONCE(vm->fault_token));
	local_irq_restore(irqflags);
	return ret;
}
EXPORT_SYMBOL_GPL(rkaccel_vm_report_fault);
