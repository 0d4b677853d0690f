// SPDX-License-Identifier: GPL-2.0-only
/* debugfs: per-core counters and load over the last second, live object counts. */

#include <drm/drm_debugfs.h>
#include <drm/drm_file.h>
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/seq_file.h>

#include "rkaccel_core.h"
#include "rkaccel_device.h"

static int rkaccel_cores_show(struct seq_file *m, void *unused)
{
	struct rkaccel_device *rdev = m->private;
	unsigned int i;

	seq_puts(m, "core jobs faults resets busy_ns load_permille vm_switches\n");
	for (i = 0; i < rdev->num_cores; i++) {
		struct rkaccel_core *core = rdev->cores[i];

		seq_printf(m, "%u %llu %llu %llu %llu %u %llu\n", i,
			   (u64)atomic64_read(&core->jobs), (u64)atomic64_read(&core->faults),
			   (u64)atomic64_read(&core->resets), (u64)atomic64_read(&core->busy_ns),
			   rkaccel_core_load_permille(core),
			   (u64)atomic64_read(&core->vm_switches));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rkaccel_cores);

static int rkaccel_objects_show(struct seq_file *m, void *unused)
{
	struct rkaccel_device *rdev = m->private;

	seq_printf(m, "bos %d\ncontexts %d\nfiles %d\n", rkaccel_gem_live_count(),
		   atomic_read(&rdev->ctx_count), atomic_read(&rdev->file_count));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rkaccel_objects);

void rkaccel_debugfs_init(struct rkaccel_device *rdev)
{
	struct dentry *root = rdev->ddev.debugfs_root;

	debugfs_create_file("cores", 0444, root, rdev, &rkaccel_cores_fops);
	debugfs_create_file("objects", 0444, root, rdev, &rkaccel_objects_fops);
}
