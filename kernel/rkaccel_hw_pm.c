// SPDX-License-Identifier: GPL-2.0-only
/*
 * Silicon backend, power of one NPU core: runtime PM with autosuspend (a job
 * holds its core up), power domains, the operating point, and system sleep
 * that drains the core's queue first. None of this has run on silicon yet.
 */

#include <drm/gpu_scheduler.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/platform_device.h>
#include <linux/pm_domain.h>
#include <linux/pm_opp.h>
#include <linux/pm_runtime.h>

#include "rkaccel_core.h"
#include "rkaccel_hw.h"
#include "rkaccel_regs.h"

/* The vendor driver powers the NPU off 3 s after its last job. */
#define RKACCEL_HW_AUTOSUSPEND_MS	3000
/* How long system suspend waits for the job on a core. */
#define RKACCEL_HW_DRAIN_MS		2000

static unsigned int npu_mhz;
module_param(npu_mhz, uint, 0444);
MODULE_PARM_DESC(npu_mhz, "Silicon: run the NPU at the OPP at or above this MHz (default: the highest OPP)");

static int rkaccel_hw_runtime_suspend(struct device *dev)
{
	struct rkaccel_hw_core *hw = dev_get_drvdata(dev);

	WRITE_ONCE(hw->powered, false);
	/* A shared interrupt being handled may still read the registers. */
	if (hw->irq > 0)
		synchronize_irq(hw->irq);
	clk_bulk_disable_unprepare(hw->num_clks, hw->clks);
	return 0;
}

static int rkaccel_hw_runtime_resume(struct device *dev)
{
	struct rkaccel_hw_core *hw = dev_get_drvdata(dev);
	int ret;

	ret = clk_bulk_prepare_enable(hw->num_clks, hw->clks);
	if (ret)
		return ret;
	WRITE_ONCE(hw->powered, true);
	return 0;
}

/* Stop feeding the core and wait for the job it runs, if any. */
static int rkaccel_hw_drain(struct rkaccel_hw_core *hw)
{
	struct rkaccel_core *core = READ_ONCE(hw->core);
	unsigned long end = jiffies + msecs_to_jiffies(RKACCEL_HW_DRAIN_MS);

	if (!core)
		return 0;
	drm_sched_wqueue_stop(&core->sched);
	while (READ_ONCE(core->job)) {
		if (time_after(jiffies, end)) {
			drm_sched_wqueue_start(&core->sched);
			return -EBUSY;
		}
		usleep_range(1000, 2000);
	}
	return 0;
}

static int rkaccel_hw_suspend(struct device *dev)
{
	struct rkaccel_hw_core *hw = dev_get_drvdata(dev);
	struct rkaccel_core *core;
	int ret;

	ret = rkaccel_hw_drain(hw);
	if (ret)
		return ret;
	ret = pm_runtime_force_suspend(dev);
	core = READ_ONCE(hw->core);
	if (ret && core)
		drm_sched_wqueue_start(&core->sched);
	return ret;
}

static int rkaccel_hw_resume(struct device *dev)
{
	struct rkaccel_hw_core *hw = dev_get_drvdata(dev);
	struct rkaccel_core *core = READ_ONCE(hw->core);
	int ret;

	ret = pm_runtime_force_resume(dev);
	if (core)
		drm_sched_wqueue_start(&core->sched);
	return ret;
}

const struct dev_pm_ops rkaccel_hw_pm_ops = {
	SYSTEM_SLEEP_PM_OPS(rkaccel_hw_suspend, rkaccel_hw_resume)
	RUNTIME_PM_OPS(rkaccel_hw_runtime_suspend, rkaccel_hw_runtime_resume, NULL)
};

/*
 * The operating point: the highest OPP of the core's table, or the first at
 * or above npu_mhz. Without it the NPU stays at the clock the device tree
 * assigns at boot (200 MHz on RK3588). The OPP table may carry the
 * npu-supply voltage; the OPP core sets it before raising the clock.
 */
int rkaccel_hw_opp_init(struct rkaccel_hw_core *hw)
{
	static const char *const clk_names[] = { "npu", NULL };
	static const char *const reg_names[] = { "npu", NULL };
	struct dev_pm_opp_config config = { .clk_names = clk_names };
	unsigned long freq = npu_mhz ? npu_mhz * 1000000UL : ULONG_MAX;
	struct dev_pm_opp *opp;
	int ret;

	if (!of_property_present(hw->dev->of_node, "operating-points-v2")) {
		dev_info(hw->dev, "no OPP table: the NPU clock stays as assigned at boot\n");
		return 0;
	}
	if (of_property_present(hw->dev->of_node, "npu-supply"))
		config.regulator_names = reg_names;
	ret = devm_pm_opp_set_config(hw->dev, &config);
	if (ret < 0)
		return dev_err_probe(hw->dev, ret, "OPP configuration\n");
	ret = devm_pm_opp_of_add_table(hw->dev);
	if (ret)
		return dev_err_probe(hw->dev, ret, "OPP table\n");

	opp = npu_mhz ? dev_pm_opp_find_freq_ceil(hw->dev, &freq) :
			dev_pm_opp_find_freq_floor(hw->dev, &freq);
	if (IS_ERR(opp))
		return dev_err_probe(hw->dev, PTR_ERR(opp), "no OPP for npu_mhz=%u\n", npu_mhz);
	dev_pm_opp_put(opp);

	ret = dev_pm_opp_set_rate(hw->dev, freq);
	if (ret)
		return dev_err_probe(hw->dev, ret, "setting %lu Hz\n", freq);
	dev_info(hw->dev, "NPU clock %lu MHz\n", freq / 1000000);
	return 0;
}

/* RK3576 cores sit in two power domains; genpd handles a single one. */
static int rkaccel_hw_attach_domains(struct rkaccel_hw_core *hw)
{
	int n = of_count_phandle_with_args(hw->dev->of_node, "power-domains",
					   "#power-domain-cells");

	if (n <= 1)
		return 0;
	n = devm_pm_domain_attach_list(hw->dev, NULL, NULL);
	return n < 0 ? n : 0;
}

/* Read what QUERY reports while the core is up once at probe. */
static void rkaccel_hw_read_version(struct rkaccel_hw_core *hw)
{
	hw->hw_version = readl(hw->pc + RKNPU_PC_VERSION);
	hw->hw_version_num = readl(hw->pc + RKNPU_PC_VERSION_NUM);
	dev_dbg(hw->dev, "hardware version 0x%x\n",
		hw->hw_version + (hw->hw_version_num & 0xffff));
}

int rkaccel_hw_pm_init(struct rkaccel_hw_core *hw)
{
	int ret;

	dev_set_drvdata(hw->dev, hw);
	ret = rkaccel_hw_attach_domains(hw);
	if (ret)
		return dev_err_probe(hw->dev, ret, "power domains\n");
	ret = rkaccel_hw_opp_init(hw);
	if (ret)
		return ret;

	pm_runtime_set_autosuspend_delay(hw->dev, RKACCEL_HW_AUTOSUSPEND_MS);
	pm_runtime_use_autosuspend(hw->dev);
	ret = devm_pm_runtime_enable(hw->dev);
	if (ret)
		return ret;

	ret = pm_runtime_resume_and_get(hw->dev);
	if (ret)
		return ret;
	rkaccel_hw_read_version(hw);
	pm_runtime_mark_last_busy(hw->dev);
	pm_runtime_put_autosuspend(hw->dev);
	return 0;
}
