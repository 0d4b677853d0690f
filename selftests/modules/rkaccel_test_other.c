// SPDX-License-Identifier: GPL-2.0-only
/*
 * Another driver for the NPU core nodes, as mainline's rocket is one: it
 * holds the first core it is offered and no other, so that board_test can
 * check that rkaccel refuses an NPU of which another driver holds a core.
 * A test module: built for the guests, never installed.
 */

#include <linux/atomic.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/platform_device.h>

static atomic_t held = ATOMIC_INIT(0);

static int other_probe(struct platform_device *pdev)
{
	if (atomic_cmpxchg(&held, 0, 1))
		return -ENODEV;
	dev_info(&pdev->dev, "held by rkaccel_test_other\n");
	return 0;
}

static void other_remove(struct platform_device *pdev)
{
	atomic_set(&held, 0);
}

static const struct of_device_id other_of_match[] = {
	{ .compatible = "rockchip,rk3588-rknn-core" },
	{ .compatible = "rockchip,rk3576-rknn-core" },
	{ }
};
MODULE_DEVICE_TABLE(of, other_of_match);

static struct platform_driver other_driver = {
	.probe = other_probe,
	.remove = other_remove,
	.driver = {
		.name = "rkaccel-test-other",
		.of_match_table = other_of_match,
	},
};
module_platform_driver(other_driver);

MODULE_DESCRIPTION("rkaccel test: another driver holding one NPU core");
MODULE_LICENSE("GPL");
