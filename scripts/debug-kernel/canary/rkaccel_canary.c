// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deliberate bugs that the debug kernel's checkers must report, so that
 * make check knows they are live: a use after free (KASAN), an allocation
 * that may recurse into reclaim inside a dma-fence signalling section
 * (lockdep), and a leaked allocation (kmemleak). Two more are for the
 * guest's verdict rather than a checker: an out-of-bounds array index
 * (UBSAN, whose report does not taint the kernel) and a bare dump_stack()
 * (no taint, no "BUG:" or "WARNING:", just a stack). Loading fails on
 * purpose after the bug is done; nothing of it stays in the kernel but the
 * leak. Never built into rkaccel.ko.
 */
#include <linux/dma-fence.h>
#include <linux/module.h>
#include <linux/slab.h>

static char *bug = "";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "uaf | fence | leak | ubsan | stack");

/* Kept by the canary's own code only, so the compiler cannot drop the access. */
static u8 canary_sink;

static noinline void canary_uaf(void)
{
	u8 *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return;
	kfree(p);
	canary_sink = READ_ONCE(p[8]);
}

static noinline void canary_fence(void)
{
	bool cookie = dma_fence_begin_signalling();
	void *p = kmalloc(64, GFP_KERNEL);

	dma_fence_end_signalling(cookie);
	kfree(p);
}

/* Four slots; the index comes from a variable the compiler cannot see through. */
static u8 canary_slots[4];
static unsigned int canary_index = ARRAY_SIZE(canary_slots);

static noinline void canary_ubsan(void)
{
	canary_sink = canary_slots[READ_ONCE(canary_index)];
}

/* Marks around the stack, so that check-canary.sh knows which trace is this one. */
static noinline void canary_stack(void)
{
	pr_info("rkaccel_canary: stack begin\n");
	dump_stack();
	pr_info("rkaccel_canary: stack end\n");
}

static noinline void canary_leak(void)
{
	u8 *p = kmalloc(128, GFP_KERNEL);

	if (p)
		memset(p, 0xa5, 128);
	pr_info("rkaccel_canary: leaking %p\n", p);
}

static int __init canary_init(void)
{
	if (!strcmp(bug, "uaf"))
		canary_uaf();
	else if (!strcmp(bug, "fence"))
		canary_fence();
	else if (!strcmp(bug, "leak"))
		canary_leak();
	else if (!strcmp(bug, "ubsan"))
		canary_ubsan();
	else if (!strcmp(bug, "stack"))
		canary_stack();
	else
		return -EINVAL;
	pr_info("rkaccel_canary: %s done\n", bug);
	return -EAGAIN;
}
module_init(canary_init);

MODULE_DESCRIPTION("Checker canaries for rkaccel's debug kernel");
MODULE_LICENSE("GPL");
