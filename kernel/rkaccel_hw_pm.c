// SPDX-License-Identifier: GPL-2.0-only
/*
 * Silicon backend, power of one NPU core: runtime PM with autosuspend (a job
 * holds its core up), power domains, the operating point and its devfreq
 * governor, and system sleep that drains the core's queue first. None of
 * this has run on silicon yet.
 */

#include <drm/gpu_scheduler.h>
#include <linux/delay.h>
#include <linux/devfreq.h>
#include <linux/devfreq_cooling.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/platform_device.h>
#include <linux/pm_domain.h>
#include <linux/pm_opp.h>
#include <linux/pm_runtime.h>
#include <linux/regulator/consumer.h>

#include "rkaccel_core.h"
#include "rkaccel_device.h"
#include "rkaccel_hw.h"
#include "rkaccel_job.h"
#include "rkaccel_regs.h"

/* The vendor driver powers the NPU off 3 s after its last job. */
#define RKACCEL_HW_AUTOSUSPEND_MS	3000
/* How long system suspend waits for the job on a core. */
#define RKACCEL_HW_DRAIN_MS		2000
/* How often devfreq samples the NPU load. */
#define RKACCEL_HW_DEVFREQ_POLL_MS	50

static unsigned int npu_mhz;
module_param(npu_mhz, uint, 0444);
MODULE_PARM_DESC(npu_mhz, "Silicon: fix the NPU clock at the OPP at or above this MHz, no devfreq (default: devfreq, simple_ondemand)");

/**
 * struct rkaccel_hw_devfreq - the NPU clock scaled by devfreq.
 * @profile: what devfreq calls back; it keeps a pointer to it.
 * @df: the devfreq device.
 * @clk: the "npu" clock the OPP table drives.
 * @last: when the load was last sampled.
 * @last_busy: each core's busy time at @last (ns, the job in flight counted).
 *
 * @last and @last_busy are only used in get_dev_status, which devfreq calls
 * with its own lock held.
 */
struct rkaccel_hw_devfreq {
	struct devfreq_dev_profile profile;
	struct devfreq *df;
	struct clk *clk;
	ktime_t last;
	u64 last_busy[RKACCEL_MAX_CORES];
};

/* Held while a core's link to its rkaccel_core is made or broken. */
DEFINE_MUTEX(rkaccel_hw_link_lock);

/*
 * devfreq (core 0's) runs while any core is awake, as panfrost suspends
 * its devfreq with the GPU: the clock is the NPU's, and core 0's device
 * sleeps while cores 1 and 2 work. A work item brings devfreq in line with
 * the count, so that no runtime PM callback waits on devfreq's monitor
 * (which reads the cores under rkaccel_hw_link_lock). One NPU per system.
 */
static void rkaccel_hw_df_sync(struct work_struct *work);

static struct {
	struct mutex lock;	/* protects df and stopped */
	struct devfreq *df;
	bool stopped;
	atomic_t awake;
	struct work_struct sync;
} rkaccel_hw_df = {
	.lock = __MUTEX_INITIALIZER(rkaccel_hw_df.lock),
	.awake = ATOMIC_INIT(0),
	.sync = __WORK_INITIALIZER(rkaccel_hw_df.sync, rkaccel_hw_df_sync),
};

static void rkaccel_hw_df_sync(struct work_struct *work)
{
	guard(mutex)(&rkaccel_hw_df.lock);
	if (!rkaccel_hw_df.df)
		return;
	if (!atomic_read(&rkaccel_hw_df.awake) != rkaccel_hw_df.stopped) {
		rkaccel_hw_df.stopped = !rkaccel_hw_df.stopped;
		if (rkaccel_hw_df.stopped)
			devfreq_suspend_device(rkaccel_hw_df.df);
		else
			devfreq_resume_device(rkaccel_hw_df.df);
	}
}

/*
 * Freezable: the work never runs during system sleep, where the PM core's
 * devfreq_suspend() and this driver's own suspend call devfreq unlocked.
 */
static void rkaccel_hw_df_awake(int delta)
{
	atomic_add(delta, &rkaccel_hw_df.awake);
	queue_work(system_freezable_wq, &rkaccel_hw_df.sync);
}

/* The module goes: every core is unbound, their last suspends' work done. */
void rkaccel_hw_pm_exit(void)
{
	cancel_work_sync(&rkaccel_hw_df.sync);
}

/* devfreq is going (core 0 unbinds): nothing reaches it any more. */
static void rkaccel_hw_df_release(void *data)
{
	cancel_work_sync(&rkaccel_hw_df.sync);
	guard(mutex)(&rkaccel_hw_df.lock);
	if (rkaccel_hw_df.stopped)
		devfreq_resume_device(rkaccel_hw_df.df);
	rkaccel_hw_df.df = NULL;
	rkaccel_hw_df.stopped = false;
}

static int rkaccel_hw_runtime_suspend(struct device *dev)
{
	struct rkaccel_hw_core *hw = dev_get_drvdata(dev);

	rkaccel_hw_df_awake(-1);
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
	rkaccel_hw_df_awake(1);
	return 0;
}

/*
 * Stop feeding the core and wait for the job it runs, if any, then for the
 * recovery of a job that failed or hung: it is off the core already, but
 * its reset still writes the registers (issue 28, finding 6).
 */
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
	rkaccel_core_quiesce(core);
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
	if (hw->devfreq)
		devfreq_suspend_device(hw->devfreq->df);
	ret = pm_runtime_force_suspend(dev);
	if (!ret)
		return 0;
	if (hw->devfreq)
		devfreq_resume_device(hw->devfreq->df);
	core = READ_ONCE(hw->core);
	if (core)
		drm_sched_wqueue_start(&core->sched);
	return ret;
}

static int rkaccel_hw_resume(struct device *dev)
{
	struct rkaccel_hw_core *hw = dev_get_drvdata(dev);
	struct rkaccel_core *core = READ_ONCE(hw->core);
	int ret;

	ret = pm_runtime_force_resume(dev);
	if (hw->devfreq)
		devfreq_resume_device(hw->devfreq->df);
	if (core)
		drm_sched_wqueue_start(&core->sched);
	return ret;
}

const struct dev_pm_ops rkaccel_hw_pm_ops = {
	SYSTEM_SLEEP_PM_OPS(rkaccel_hw_suspend, rkaccel_hw_resume)
	RUNTIME_PM_OPS(rkaccel_hw_runtime_suspend, rkaccel_hw_runtime_resume, NULL)
};

static int rkaccel_hw_devfreq_target(struct device *dev, unsigned long *freq, u32 flags)
{
	struct dev_pm_opp *opp;

	/* The OPP at or above *freq, or at or below it with LEAST_UPPER_BOUND. */
	opp = devfreq_recommended_opp(dev, freq, flags);
	if (IS_ERR(opp))
		return PTR_ERR(opp);
	dev_pm_opp_put(opp);
	return dev_pm_opp_set_rate(dev, *freq);
}

/* Time @core has spent in jobs, the one it runs now included. */
static u64 rkaccel_hw_core_busy_ns(struct rkaccel_core *core, ktime_t now)
{
	unsigned long flags;
	u64 busy;

	spin_lock_irqsave(&core->job_lock, flags);
	busy = atomic64_read(&core->busy_ns);
	if (core->job)
		busy += ktime_to_ns(ktime_sub(now, core->job->start));
	spin_unlock_irqrestore(&core->job_lock, flags);
	return busy;
}

/*
 * The load since the last sample: the busiest core's share of the time, as
 * the clock is one for all cores. A job ends between clearing core->job and
 * adding to busy_ns, so a core's count may step back briefly: @last_busy
 * only moves forward and the time is counted once it is added.
 */
static int rkaccel_hw_devfreq_status(struct device *dev, struct devfreq_dev_status *stat)
{
	struct rkaccel_hw_core *hw = dev_get_drvdata(dev);
	struct rkaccel_hw_devfreq *hdf = hw->devfreq;
	ktime_t now = ktime_get();
	struct rkaccel_device *rdev;
	struct rkaccel_core *core;
	u64 busy, max_busy = 0;
	unsigned int i;

	stat->current_frequency = clk_get_rate(hdf->clk);
	stat->total_time = ktime_to_ns(ktime_sub(now, hdf->last));
	hdf->last = now;

	mutex_lock(&rkaccel_hw_link_lock);
	core = READ_ONCE(hw->core);
	rdev = core ? core->rdev : NULL;
	for (i = 0; rdev && i < rdev->num_cores; i++) {
		busy = rkaccel_hw_core_busy_ns(rdev->cores[i], now);
		if (busy <= hdf->last_busy[i])
			continue;
		max_busy = max(max_busy, busy - hdf->last_busy[i]);
		hdf->last_busy[i] = busy;
	}
	mutex_unlock(&rkaccel_hw_link_lock);

	stat->busy_time = min_t(u64, max_busy, stat->total_time);
	return 0;
}

static int rkaccel_hw_devfreq_cur_freq(struct device *dev, unsigned long *freq)
{
	struct rkaccel_hw_core *hw = dev_get_drvdata(dev);

	*freq = clk_get_rate(hw->devfreq->clk);
	return 0;
}

static struct clk *rkaccel_hw_npu_clk(struct rkaccel_hw_core *hw)
{
	int i;

	for (i = 0; i < hw->num_clks; i++)
		if (!strcmp(hw->clks[i].id, "npu"))
			return hw->clks[i].clk;
	return NULL;
}

static void rkaccel_hw_cooling_unregister(void *cdev)
{
	devfreq_cooling_unregister(cdev);
}

/*
 * A cooling device on the NPU's devfreq, as panfrost has: a thermal zone
 * that names it in its cooling maps caps the NPU clock when hot. Its power
 * model comes from the OPP table (an energy model needs the table's
 * dynamic-power-coefficient; without one the device still caps by state).
 * Without CONFIG_DEVFREQ_THERMAL, or when it fails, the NPU has none.
 */
static void rkaccel_hw_cooling_init(struct rkaccel_hw_core *hw, struct devfreq *df)
{
	struct thermal_cooling_device *cdev = devfreq_cooling_em_register(df, NULL);

	if (IS_ERR(cdev)) {
		if (IS_ENABLED(CONFIG_DEVFREQ_THERMAL))
			dev_warn(hw->dev, "no cooling device: %pe\n", cdev);
		return;
	}
	if (devm_add_action_or_reset(hw->dev, rkaccel_hw_cooling_unregister, cdev))
		dev_warn(hw->dev, "no cooling device: out of memory\n");
}

static unsigned long rkaccel_hw_lowest_opp(struct device *dev)
{
	unsigned long freq = 0;
	struct dev_pm_opp *opp = dev_pm_opp_find_freq_ceil(dev, &freq);

	if (IS_ERR(opp))
		return 0;
	dev_pm_opp_put(opp);
	return freq;
}

/*
 * devfreq with simple_ondemand from @freq, the OPP set at probe. Without
 * CONFIG_PM_DEVFREQ, or when devfreq fails, the NPU stays at @freq.
 */
static void rkaccel_hw_devfreq_init(struct rkaccel_hw_core *hw, unsigned long freq)
{
	struct rkaccel_hw_devfreq *hdf;
	struct devfreq *df;
	int ret;

	if (!IS_ENABLED(CONFIG_PM_DEVFREQ))
		return;
	hdf = devm_kzalloc(hw->dev, sizeof(*hdf), GFP_KERNEL);
	if (!hdf)
		return;
	hdf->profile.initial_freq = freq;
	hdf->profile.polling_ms = RKACCEL_HW_DEVFREQ_POLL_MS;
	hdf->profile.target = rkaccel_hw_devfreq_target;
	hdf->profile.get_dev_status = rkaccel_hw_devfreq_status;
	hdf->profile.get_cur_freq = rkaccel_hw_devfreq_cur_freq;
	hdf->clk = rkaccel_hw_npu_clk(hw);
	hdf->last = ktime_get();
	hw->devfreq = hdf;

	df = devm_devfreq_add_device(hw->dev, &hdf->profile, DEVFREQ_GOV_SIMPLE_ONDEMAND, NULL);
	if (IS_ERR(df)) {
		hw->devfreq = NULL;
		dev_warn(hw->dev, "no devfreq (%pe): the NPU clock stays at %lu MHz\n",
			 df, freq / 1000000);
		return;
	}
	hdf->df = df;
	/* while every core sleeps: the lowest OPP, unless the table names one */
	if (!df->suspend_freq)
		df->suspend_freq = rkaccel_hw_lowest_opp(hw->dev);
	scoped_guard(mutex, &rkaccel_hw_df.lock)
		rkaccel_hw_df.df = df;
	/* after devfreq's own devres: released before devfreq is removed */
	ret = devm_add_action_or_reset(hw->dev, rkaccel_hw_df_release, NULL);
	if (ret)
		return;
	queue_work(system_freezable_wq, &rkaccel_hw_df.sync);
	ret = devm_devfreq_register_opp_notifier(hw->dev, df);
	if (ret)
		dev_warn(hw->dev, "devfreq does not follow OPP changes: %d\n", ret);
	dev_info(hw->dev, "NPU clock scaled by devfreq %s (simple_ondemand)\n",
		 dev_name(&df->dev));
	rkaccel_hw_cooling_init(hw, df);
}

/*
 * The operating point. Without it the NPU stays at the clock the device
 * tree assigns at boot (200 MHz on RK3588). The OPP table may carry the
 * npu-supply voltage; the OPP core sets it before raising the clock.
 *
 * The "npu" clock is one for all cores on both SoCs (SCMI_CLK_NPU on
 * RK3588, CLK_RKNN_DSU0 on RK3576), so only core 0 takes the OPP table and
 * scales it, for the load of all cores; the other cores leave it alone.
 *
 * With npu_mhz the clock is fixed at the first OPP at or above it and no
 * devfreq device is registered. Otherwise the clock starts at the highest
 * OPP and devfreq (simple_ondemand) scales it; its sysfs min_freq/max_freq
 * fix a frequency at run time.
 */
int rkaccel_hw_opp_init(struct rkaccel_hw_core *hw)
{
	static const char *const clk_names[] = { "npu", NULL };
	static const char *const reg_names[] = { "npu", NULL };
	struct dev_pm_opp_config config = { .clk_names = clk_names };
	unsigned long freq = npu_mhz ? npu_mhz * 1000000UL : ULONG_MAX;
	struct dev_pm_opp *opp;
	unsigned int count;
	int ret;

	ret = rkaccel_hw_core_slot(hw, &count);
	if (ret)
		return ret;
	if (hw->index)
		return 0;
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
	dev_info(hw->dev, "NPU clock %lu MHz%s\n", freq / 1000000,
		 npu_mhz ? " (npu_mhz, fixed)" : "");
	if (!npu_mhz)
		rkaccel_hw_devfreq_init(hw, freq);
	return 0;
}

/*
 * RK3576 cores sit in two power domains; genpd handles a single one. The
 * list is devres's to detach (it stores it through the pointer: not NULL).
 */
static int rkaccel_hw_attach_domains(struct rkaccel_hw_core *hw)
{
	struct dev_pm_domain_list *list;
	int n = of_count_phandle_with_args(hw->dev->of_node, "power-domains",
					   "#power-domain-cells");

	if (n <= 1)
		return 0;
	n = devm_pm_domain_attach_list(hw->dev, NULL, &list);
	return n < 0 ? n : 0;
}

/*
 * Read what QUERY reports while the core is up once at probe. All zeros or
 * all ones is no core answering (unclocked, unpowered or not there).
 */
static int rkaccel_hw_read_version(struct rkaccel_hw_core *hw)
{
	hw->hw_version = rkaccel_hw_read(hw, RKNPU_PC_VERSION);
	hw->hw_version_num = rkaccel_hw_read(hw, RKNPU_PC_VERSION_NUM);
	hw->silent = !hw->hw_version || hw->hw_version == U32_MAX;
	if (hw->silent)
		return dev_err_probe(hw->dev, -ENODEV,
				     "PC_VERSION reads 0x%08x: the core does not answer\n",
				     hw->hw_version);
	dev_info(hw->dev, "hardware version 0x%x\n",
		 hw->hw_version + (hw->hw_version_num & 0xffff));
	return 0;
}

/*
 * Hold the NPU's rails from probe to remove. The OPP core enables
 * npu-supply only for core 0, at its first rate change; the power domains
 * may come up before that, and regulator late cleanup switches a boot-on
 * rail that no consumer has enabled off 30 s after boot. Each core takes
 * its own reference, so the rails stay up while any core is bound. A board
 * without a supply in its tree (or a kernel without regulators) has none to
 * hold.
 */
static int rkaccel_hw_rails_init(struct rkaccel_hw_core *hw)
{
	static const char *const rails[] = { "npu", "sram" };
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(rails); i++) {
		ret = devm_regulator_get_enable_optional(hw->dev, rails[i]);
		if (ret == -ENODEV)
			continue;
		if (ret)
			return dev_err_probe(hw->dev, ret, "%s-supply\n", rails[i]);
	}
	return 0;
}

/*
 * A kexec from the vendor kernel (or a bootloader that ran the NPU) can
 * leave a core with its interrupt enabled and a status bit latched: a level
 * line that is up before rkaccel's handler exists. Quiet it, as the vendor
 * does, while it is powered at probe, before the IRQ is requested.
 */
static void rkaccel_hw_quiesce(struct rkaccel_hw_core *hw)
{
	u32 raw = rkaccel_hw_read(hw, RKNPU_PC_INTERRUPT_RAW_STATUS);

	rkaccel_hw_write(hw, RKNPU_PC_INTERRUPT_MASK, 0);
	rkaccel_hw_write(hw, RKNPU_PC_INTERRUPT_CLEAR, RKNPU_INT_ALL);
	if (raw)
		dev_info(hw->dev, "interrupt status 0x%x left at probe: cleared\n", raw);
}

int rkaccel_hw_pm_init(struct rkaccel_hw_core *hw)
{
	int ret;

	dev_set_drvdata(hw->dev, hw);
	ret = rkaccel_hw_rails_init(hw);
	if (ret)
		return ret;
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
	ret = rkaccel_hw_read_version(hw);
	if (!ret)
		rkaccel_hw_quiesce(hw);
	pm_runtime_mark_last_busy(hw->dev);
	pm_runtime_put_autosuspend(hw->dev);
	return ret;
}
