// SPDX-License-Identifier: GPL-2.0-only
/*
 * The simulated SoC around the NPU cores: a clock and reset unit (CRU) that
 * the cores' device-tree nodes point to, as they point to the real CRU on a
 * board, with the NPU clock settable so that OPP and devfreq really move it,
 * and (device tree only) the NPU's power domains: the top domain and one
 * per core under it, as on both SoCs.
 *
 * Without a device tree (the x86 guests) sim=<soc> creates the CRU as a
 * platform device, and its probe creates what the device tree would have:
 * one platform device per core with its register ranges, a software
 * interrupt line and clock lookups. Either way the driver probes the cores
 * through rkaccel_hw*.c, the board's code.
 *
 * fault=<kind>:<core> breaks one core the way a bad board would, for the
 * probe's error paths: clock (its aclk is missing), irq (no interrupt, x86
 * only) or version (its registers read back zero, as a fused core's would:
 * the NPU then comes up without it).
 */

#include <linux/clk-provider.h>
#include <linux/clkdev.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/platform_device.h>
#include <linux/pm_domain.h>
#include <linux/reset-controller.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/workqueue.h>

#include "rkaccel_device.h"
#include "rkaccel_sim.h"

#define SIM_CRU_NAME		"rkaccel-sim-cru"
/* The NPU clock as RK3588's boot leaves it, and the range it accepts. */
#define SIM_NPU_BOOT_HZ		200000000UL
#define SIM_NPU_MIN_HZ		100000000UL
#define SIM_NPU_MAX_HZ		1500000000UL
#define SIM_BUS_HZ		200000000UL

/* Clock ids of the CRU: the shared NPU clock, then aclk/hclk/pclk per core. */
#define SIM_CLK_NPU		0
#define SIM_CLK_CORE(pos, n)	(1 + (pos) * 3 + (n))
#define SIM_NUM_CLKS		SIM_CLK_CORE(RKACCEL_MAX_CORES, 0)

/* Power domain ids: the NPU's top domain, then one per core under it. */
#define SIM_PD_TOP		0
#define SIM_NUM_PDS		(1 + RKACCEL_MAX_CORES)

static char *sim;
module_param(sim, charp, 0444);
MODULE_PARM_DESC(sim, "Without a device tree: create the NPU cores of this SoC (rk3588 or rk3576)");

static bool reverse;
module_param(reverse, bool, 0444);
MODULE_PARM_DESC(reverse, "Without a device tree: create the cores last to first");

static char *fault;
module_param(fault, charp, 0444);
MODULE_PARM_DESC(fault, "Break one core for the probe's error paths: clock:N, irq:N or version:N");

/**
 * struct sim_soc - a SoC the module simulates.
 * @name: as in sim=.
 * @core_name: the cores' platform device name without a device tree.
 * @soc: uAPI SoC id, matched against the core's compatible.
 * @hw_version: PC_VERSION its cores report.
 * @num_cores: cores.
 * @base: each core's register base (its "pc" range), as on the SoC.
 */
struct sim_soc {
	const char *name;
	const char *core_name;
	enum drm_rkaccel_soc soc;
	u32 hw_version;
	unsigned int num_cores;
	phys_addr_t base[RKACCEL_MAX_CORES];
};

static const struct sim_soc sim_socs[] = {
	{ "rk3588", "rk3588-rknn-core", DRM_RKACCEL_SOC_RK3588, 0x35880000, 3,
	  { 0xfdab0000, 0xfdac0000, 0xfdad0000 } },
	{ "rk3576", "rk3576-rknn-core", DRM_RKACCEL_SOC_RK3576, 0x35760000, 2,
	  { 0x27700000, 0x27708000 } },
};

enum sim_fault { SIM_FAULT_NONE, SIM_FAULT_CLOCK, SIM_FAULT_IRQ, SIM_FAULT_VERSION };
static enum sim_fault sim_fault_kind;
static unsigned int sim_fault_core;

/**
 * struct sim_cru - the simulated clock and reset unit.
 * @dev: its device.
 * @soc: the SoC whose cores it creates (no device tree), else NULL.
 * @npu: the NPU clock, settable.
 * @npu_rate: its rate.
 * @clks: the clocks by id, NULL where a fault took one away.
 * @aclks: each core's aclk, a gate whose state the core sees.
 * @rcdev: the cores' resets (two per core, srst_a and srst_h): while one is
 *	asserted the core's registers do not answer.
 * @irq_base: first of the cores' software interrupts (no device tree).
 * @cores: the core devices it created (no device tree).
 * @pds: the power domains (device tree); a core loses its registers when
 *	its own domain or the top domain goes off.
 * @pd_table: @pds by id, for the provider.
 * @pd_data: the onecell provider data.
 */
struct sim_cru {
	struct device *dev;
	const struct sim_soc *soc;
	struct clk_hw npu;
	unsigned long npu_rate;
	struct clk_hw *clks[SIM_NUM_CLKS];
	struct sim_aclk {
		struct clk_hw hw;
		unsigned int pos;
		bool prepared;
	} aclks[RKACCEL_MAX_CORES];
	struct reset_controller_dev rcdev;
	int irq_base;
	struct platform_device *cores[RKACCEL_MAX_CORES];
	struct generic_pm_domain pds[SIM_NUM_PDS];
	struct generic_pm_domain *pd_table[SIM_NUM_PDS];
	struct genpd_onecell_data pd_data;
};

static bool sim_faulty(enum sim_fault kind, unsigned int pos)
{
	return sim_fault_kind == kind && sim_fault_core == pos;
}

/* Is @pc the register base of a core of @soc's kind? Its position and version if so. */
bool rkaccel_sim_soc_claims(const struct rkaccel_soc_data *soc, phys_addr_t pc,
			    unsigned int *pos_out, u32 *version)
{
	unsigned int i, pos;

	for (i = 0; i < ARRAY_SIZE(sim_socs); i++) {
		if (sim_socs[i].soc != soc->soc)
			continue;
		for (pos = 0; pos < sim_socs[i].num_cores; pos++) {
			if (sim_socs[i].base[pos] != pc)
				continue;
			*version = sim_faulty(SIM_FAULT_VERSION, pos) ? 0 : sim_socs[i].hw_version;
			*pos_out = pos;
			return true;
		}
	}
	return false;
}

static unsigned long sim_npu_recalc_rate(struct clk_hw *hw, unsigned long parent_rate)
{
	return container_of(hw, struct sim_cru, npu)->npu_rate;
}

static int sim_npu_determine_rate(struct clk_hw *hw, struct clk_rate_request *req)
{
	req->rate = clamp(req->rate, SIM_NPU_MIN_HZ, SIM_NPU_MAX_HZ);
	return 0;
}

static int sim_npu_set_rate(struct clk_hw *hw, unsigned long rate, unsigned long parent_rate)
{
	container_of(hw, struct sim_cru, npu)->npu_rate = rate;
	return 0;
}

static const struct clk_ops sim_npu_ops = {
	.recalc_rate = sim_npu_recalc_rate,
	.determine_rate = sim_npu_determine_rate,
	.set_rate = sim_npu_set_rate,
};

/* Each core's aclk prepared, by position, for a core claimed meanwhile. */
static bool sim_aclk_on[RKACCEL_MAX_CORES];

bool rkaccel_sim_soc_core_clocked(unsigned int pos)
{
	return READ_ONCE(sim_aclk_on[pos]);
}

/* A core's aclk: the core's registers answer only while it is prepared. */
static int sim_aclk_prepare(struct clk_hw *hw)
{
	struct sim_aclk *a = container_of(hw, struct sim_aclk, hw);

	a->prepared = true;
	WRITE_ONCE(sim_aclk_on[a->pos], true);
	rkaccel_sim_core_clock(a->pos, true);
	return 0;
}

static void sim_aclk_unprepare(struct clk_hw *hw)
{
	struct sim_aclk *a = container_of(hw, struct sim_aclk, hw);

	a->prepared = false;
	WRITE_ONCE(sim_aclk_on[a->pos], false);
	rkaccel_sim_core_clock(a->pos, false);
}

static int sim_aclk_is_prepared(struct clk_hw *hw)
{
	return container_of(hw, struct sim_aclk, hw)->prepared;
}

static unsigned long sim_aclk_recalc_rate(struct clk_hw *hw, unsigned long parent_rate)
{
	return SIM_BUS_HZ;
}

static const struct clk_ops sim_aclk_ops = {
	.prepare = sim_aclk_prepare,
	.unprepare = sim_aclk_unprepare,
	.is_prepared = sim_aclk_is_prepared,
	.recalc_rate = sim_aclk_recalc_rate,
};

static void sim_clk_unregister(void *hw)
{
	clk_hw_unregister(hw);
}

static void sim_clk_unregister_fixed(void *hw)
{
	clk_hw_unregister_fixed_rate(hw);
}

static struct clk_hw *sim_bus_clk(struct device *dev, const char *name)
{
	struct clk_hw *hw = clk_hw_register_fixed_rate(NULL, name, NULL, 0, SIM_BUS_HZ);
	int ret;

	if (IS_ERR(hw))
		return hw;
	ret = devm_add_action_or_reset(dev, sim_clk_unregister_fixed, hw);
	return ret ? ERR_PTR(ret) : hw;
}

static struct clk_hw *sim_aclk(struct device *dev, struct sim_cru *cru, unsigned int pos,
			       const char *name)
{
	struct clk_init_data init = { .name = name, .ops = &sim_aclk_ops };
	struct sim_aclk *a = &cru->aclks[pos];
	int ret;

	a->pos = pos;
	a->hw.init = &init;
	ret = clk_hw_register(NULL, &a->hw);
	if (!ret)
		ret = devm_add_action_or_reset(dev, sim_clk_unregister, &a->hw);
	return ret ? ERR_PTR(ret) : &a->hw;
}

/*
 * Registered without the device: a clock of a driver's device pins its
 * module while consumers hold it, and this module's exit is what unbinds
 * the consumers (the cores).
 */
static int sim_cru_clocks(struct device *dev, struct sim_cru *cru, unsigned int num_cores)
{
	static const char *const bus[] = { "aclk", "hclk", "pclk" };
	struct clk_init_data init = { .ops = &sim_npu_ops };
	unsigned int pos, n;
	char *name;
	int ret;

	init.name = devm_kasprintf(dev, GFP_KERNEL, "%s-npu", dev_name(dev));
	if (!init.name)
		return -ENOMEM;
	cru->npu.init = &init;
	cru->npu_rate = SIM_NPU_BOOT_HZ;
	ret = clk_hw_register(NULL, &cru->npu);
	if (!ret)
		ret = devm_add_action_or_reset(dev, sim_clk_unregister, &cru->npu);
	if (ret)
		return ret;
	cru->clks[SIM_CLK_NPU] = &cru->npu;

	for (pos = 0; pos < num_cores; pos++) {
		for (n = 0; n < ARRAY_SIZE(bus); n++) {
			struct clk_hw *hw;

			if (n == 0 && sim_faulty(SIM_FAULT_CLOCK, pos))
				continue;
			name = devm_kasprintf(dev, GFP_KERNEL, "%s-core%u-%s", dev_name(dev), pos,
					      bus[n]);
			if (!name)
				return -ENOMEM;
			hw = n ? sim_bus_clk(dev, name) : sim_aclk(dev, cru, pos, name);
			if (IS_ERR(hw))
				return PTR_ERR(hw);
			cru->clks[SIM_CLK_CORE(pos, n)] = hw;
		}
	}
	return 0;
}

/* A clock a fault took away is missing, not a dummy (which NULL would be). */
static struct clk_hw *sim_cru_of_clk(struct of_phandle_args *spec, void *data)
{
	struct sim_cru *cru = data;
	unsigned int id = spec->args[0];

	if (id >= SIM_NUM_CLKS || !cru->clks[id])
		return ERR_PTR(-ENOENT);
	return cru->clks[id];
}

/* Reset id 2 * pos + line: line 0 is the core's srst_a, 1 its srst_h. */
static int sim_reset_assert(struct reset_controller_dev *rcdev, unsigned long id)
{
	rkaccel_sim_core_reset_line(id / 2, id % 2, true);
	return 0;
}

static int sim_reset_deassert(struct reset_controller_dev *rcdev, unsigned long id)
{
	rkaccel_sim_core_reset_line(id / 2, id % 2, false);
	return 0;
}

static const struct reset_control_ops sim_reset_ops = {
	.assert = sim_reset_assert,
	.deassert = sim_reset_deassert,
};

/*
 * Which power domains are off, by id (none without a device tree). Domains
 * start off, as genpd is told; a core is powered while its own domain and
 * the top one are on (genpd keeps the top on while a core's is).
 */
static bool sim_pd_off[SIM_NUM_PDS];
/* The domains by id while a CRU provides them, to tell which one switches. */
static struct generic_pm_domain *sim_pd_ids[SIM_NUM_PDS];

bool rkaccel_sim_soc_core_powered(unsigned int pos)
{
	return !READ_ONCE(sim_pd_off[SIM_PD_TOP]) && !READ_ONCE(sim_pd_off[1 + pos]);
}

static void sim_pd_set(struct generic_pm_domain *pd, bool off)
{
	unsigned int id, pos;

	for (id = 0; id < SIM_NUM_PDS && sim_pd_ids[id] != pd; id++)
		;
	if (id == SIM_NUM_PDS)
		return;
	WRITE_ONCE(sim_pd_off[id], off);
	for (pos = 0; pos < RKACCEL_MAX_CORES; pos++)
		rkaccel_sim_core_power(pos, rkaccel_sim_soc_core_powered(pos));
}

static int sim_pd_power_on(struct generic_pm_domain *pd)
{
	sim_pd_set(pd, false);
	return 0;
}

static int sim_pd_power_off(struct generic_pm_domain *pd)
{
	sim_pd_set(pd, true);
	return 0;
}

/* Undo sim_cru_pds() for the first @n domains. */
static void sim_cru_pds_free(struct sim_cru *cru, int n)
{
	int i;

	for (i = n - 1; i > SIM_PD_TOP; i--)
		pm_genpd_remove_subdomain(&cru->pds[SIM_PD_TOP], &cru->pds[i]);
	for (i = n - 1; i >= 0; i--) {
		pm_genpd_remove(&cru->pds[i]);
		sim_pd_ids[i] = NULL;
		WRITE_ONCE(sim_pd_off[i], false);
	}
}

static void sim_cru_pds_remove(void *data)
{
	struct sim_cru *cru = data;

	of_genpd_del_provider(cru->dev->of_node);
	sim_cru_pds_free(cru, SIM_NUM_PDS);
}

static const char *sim_pd_name(struct device *dev, int i)
{
	if (i == SIM_PD_TOP)
		return devm_kasprintf(dev, GFP_KERNEL, "%s-top", dev_name(dev));
	return devm_kasprintf(dev, GFP_KERNEL, "%s-core%d", dev_name(dev), i - 1);
}

static int sim_cru_pds(struct device *dev, struct sim_cru *cru)
{
	int i, ret;

	for (i = 0; i < SIM_NUM_PDS; i++) {
		struct generic_pm_domain *pd = &cru->pds[i];

		pd->name = sim_pd_name(dev, i);
		pd->power_on = sim_pd_power_on;
		pd->power_off = sim_pd_power_off;
		sim_pd_ids[i] = pd;
		WRITE_ONCE(sim_pd_off[i], true);
		ret = pd->name ? pm_genpd_init(pd, NULL, true) : -ENOMEM;
		if (ret) {
			sim_pd_ids[i] = NULL;
			WRITE_ONCE(sim_pd_off[i], false);
			break;
		}
		cru->pd_table[i] = pd;
		ret = i > SIM_PD_TOP ? pm_genpd_add_subdomain(&cru->pds[SIM_PD_TOP], pd) : 0;
		if (ret) {
			pm_genpd_remove(pd);
			sim_pd_ids[i] = NULL;
			WRITE_ONCE(sim_pd_off[i], false);
			break;
		}
	}
	if (ret) {
		sim_cru_pds_free(cru, i);
		return ret;
	}
	cru->pd_data.domains = cru->pd_table;
	cru->pd_data.num_domains = SIM_NUM_PDS;
	ret = of_genpd_add_provider_onecell(dev->of_node, &cru->pd_data);
	if (ret) {
		sim_cru_pds_free(cru, SIM_NUM_PDS);
		return ret;
	}
	return devm_add_action_or_reset(dev, sim_cru_pds_remove, cru);
}

static int sim_cru_of_init(struct device *dev, struct sim_cru *cru)
{
	int ret;

	ret = devm_of_clk_add_hw_provider(dev, sim_cru_of_clk, cru);
	if (!ret && of_property_present(dev->of_node, "#power-domain-cells"))
		ret = sim_cru_pds(dev, cru);
	if (ret)
		return ret;
	/* no owner: its consumers (the cores) are unbound before it goes */
	cru->rcdev.ops = &sim_reset_ops;
	cru->rcdev.of_node = dev->of_node;
	cru->rcdev.nr_resets = RKACCEL_MAX_CORES * 2;
	return devm_reset_controller_register(dev, &cru->rcdev);
}

/* Without a device tree: clock lookups by the core devices' names. */
static int sim_cru_lookups(struct device *dev, struct sim_cru *cru, unsigned int pos)
{
	static const char *const con[] = { "aclk", "hclk", "pclk" };
	char dev_id[32];
	unsigned int n;
	int ret;

	snprintf(dev_id, sizeof(dev_id), "%s.%u", cru->soc->core_name, pos);
	ret = devm_clk_hw_register_clkdev(dev, &cru->npu, "npu", dev_id);
	for (n = 0; !ret && n < ARRAY_SIZE(con); n++)
		if (cru->clks[SIM_CLK_CORE(pos, n)])
			ret = devm_clk_hw_register_clkdev(dev, cru->clks[SIM_CLK_CORE(pos, n)],
							  con[n], dev_id);
	return ret;
}

static int sim_cru_add_core(struct device *dev, struct sim_cru *cru, unsigned int pos)
{
	phys_addr_t base = cru->soc->base[pos];
	struct resource res[] = {
		DEFINE_RES_MEM_NAMED(base, SZ_4K, "pc"),
		DEFINE_RES_MEM_NAMED(base + 0x1000, SZ_4K, "cna"),
		DEFINE_RES_MEM_NAMED(base + 0x3000, SZ_4K, "core"),
		DEFINE_RES_IRQ(cru->irq_base + pos),
	};
	struct platform_device_info info = {
		.parent = dev,
		.name = cru->soc->core_name,
		.id = pos,
		.res = res,
		.num_res = sim_faulty(SIM_FAULT_IRQ, pos) ? ARRAY_SIZE(res) - 1 : ARRAY_SIZE(res),
	};
	struct platform_device *pdev;
	int ret;

	ret = sim_cru_lookups(dev, cru, pos);
	if (ret)
		return ret;
	pdev = platform_device_register_full(&info);
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	cru->cores[pos] = pdev;
	return 0;
}

static void sim_cru_remove_cores(struct sim_cru *cru)
{
	unsigned int pos;

	for (pos = 0; pos < RKACCEL_MAX_CORES; pos++) {
		platform_device_unregister(cru->cores[pos]);
		cru->cores[pos] = NULL;
	}
}

static void sim_cru_free_irqs(void *data)
{
	struct sim_cru *cru = data;

	irq_free_descs(cru->irq_base, cru->soc->num_cores);
}

struct sim_irq_proc {
	struct work_struct work;
	struct sim_cru *cru;
};

static irqreturn_t sim_irq_none(int irq, void *data)
{
	return IRQ_NONE;
}

/*
 * /proc/irq/N and its entries, made by the first request_irq() of each
 * line, as a board's boot makes them for its interrupts (init_irq_proc).
 * kernel/irq/proc.c ignores an entry it failed to make there and warns
 * when it removes it with the descriptor, so this runs in a worker, out
 * of reach of a fault injected into the loading task (fault_test).
 */
static void sim_irq_proc_work(struct work_struct *work)
{
	struct sim_cru *cru = container_of(work, struct sim_irq_proc, work)->cru;
	unsigned int i;

	for (i = 0; i < cru->soc->num_cores; i++)
		if (!request_irq(cru->irq_base + i, sim_irq_none, IRQF_SHARED, "rkaccel-sim", cru))
			free_irq(cru->irq_base + i, cru);
}

static void sim_cru_irq_proc(struct sim_cru *cru)
{
	struct sim_irq_proc p = { .cru = cru };

	INIT_WORK_ONSTACK(&p.work, sim_irq_proc_work);
	schedule_work(&p.work);
	flush_work(&p.work);
	destroy_work_on_stack(&p.work);
}

/* One software interrupt per core; edge flow so that none is ever lost. */
static int sim_cru_irqs(struct device *dev, struct sim_cru *cru)
{
	unsigned int i;
	int ret;

	/* no owner: the cores request them, and they go before this module */
	cru->irq_base = __irq_alloc_descs(-1, 1, cru->soc->num_cores, NUMA_NO_NODE, NULL, NULL);
	if (cru->irq_base < 0)
		return cru->irq_base;
	for (i = 0; i < cru->soc->num_cores; i++) {
		irq_set_chip_and_handler(cru->irq_base + i, &dummy_irq_chip, handle_edge_irq);
		irq_clear_status_flags(cru->irq_base + i, IRQ_NOREQUEST | IRQ_NOPROBE);
	}
	ret = devm_add_action_or_reset(dev, sim_cru_free_irqs, cru);
	if (!ret)
		sim_cru_irq_proc(cru);
	return ret;
}

/* The device tree's part: the cores, in order or reversed, bound at once. */
static int sim_cru_shim(struct device *dev, struct sim_cru *cru)
{
	unsigned int i, n = cru->soc->num_cores;
	int ret;

	ret = sim_cru_irqs(dev, cru);
	for (i = 0; !ret && i < n; i++)
		ret = sim_cru_add_core(dev, cru, reverse ? n - 1 - i : i);
	if (ret)
		sim_cru_remove_cores(cru);
	return ret;
}

static int sim_cru_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct sim_cru *cru;
	int ret;

	cru = devm_kzalloc(dev, sizeof(*cru), GFP_KERNEL);
	if (!cru)
		return -ENOMEM;
	cru->dev = dev;
	cru->soc = dev_get_platdata(dev);
	platform_set_drvdata(pdev, cru);

	ret = sim_cru_clocks(dev, cru, cru->soc ? cru->soc->num_cores : RKACCEL_MAX_CORES);
	if (ret)
		return ret;
	if (dev->of_node)
		return sim_cru_of_init(dev, cru);
	if (!cru->soc)
		return -EINVAL;
	return sim_cru_shim(dev, cru);
}

static void sim_cru_remove(struct platform_device *pdev)
{
	sim_cru_remove_cores(platform_get_drvdata(pdev));
}

static const struct of_device_id sim_cru_of_match[] = {
	{ .compatible = "rkaccel,sim-cru" },
	{ }
};
MODULE_DEVICE_TABLE(of, sim_cru_of_match);

static struct platform_driver sim_cru_driver = {
	.probe = sim_cru_probe,
	.remove = sim_cru_remove,
	.driver = {
		.name = SIM_CRU_NAME,
		.of_match_table = sim_cru_of_match,
		.suppress_bind_attrs = true,
	},
};

static struct platform_device *sim_cru_pdev;

static int sim_parse_fault(void)
{
	static const char *const kinds[] = {
		[SIM_FAULT_CLOCK] = "clock",
		[SIM_FAULT_IRQ] = "irq",
		[SIM_FAULT_VERSION] = "version",
	};
	unsigned int i;
	size_t len;

	if (!fault || !*fault)
		return 0;
	for (i = SIM_FAULT_CLOCK; i < ARRAY_SIZE(kinds); i++) {
		len = strlen(kinds[i]);
		if (!strncmp(fault, kinds[i], len) && fault[len] == ':' &&
		    !kstrtouint(fault + len + 1, 10, &sim_fault_core) &&
		    sim_fault_core < RKACCEL_MAX_CORES) {
			sim_fault_kind = i;
			return 0;
		}
	}
	pr_err("rkaccel_sim: fault=%s: clock:N, irq:N or version:N\n", fault);
	return -EINVAL;
}

static const struct sim_soc *sim_find_soc(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sim_socs); i++)
		if (sysfs_streq(name, sim_socs[i].name))
			return &sim_socs[i];
	return NULL;
}

/* sim= on a machine without the device tree nodes: build the SoC. */
static int sim_create(void)
{
	const struct sim_soc *soc = sim_find_soc(sim);
	struct platform_device *pdev;
	struct sim_cru *cru;
	unsigned int i;

	if (!soc) {
		pr_err("rkaccel_sim: sim=%s: unknown SoC (rk3588 or rk3576)\n", sim);
		return -EINVAL;
	}
	pdev = platform_device_register_data(NULL, SIM_CRU_NAME, PLATFORM_DEVID_NONE,
					     soc, sizeof(*soc));
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	sim_cru_pdev = pdev;
	/*
	 * sim= asked for a device: every core must have probed, now (async
	 * probes too: rkaccel loaded with async_probe), but the one whose
	 * registers fault=version: silences, which the NPU goes on without.
	 */
	wait_for_device_probe();
	cru = platform_get_drvdata(pdev);
	for (i = 0; cru && device_is_bound(&pdev->dev) && i < soc->num_cores; i++)
		if ((!cru->cores[i] || !device_is_bound(&cru->cores[i]->dev)) &&
		    !sim_faulty(SIM_FAULT_VERSION, i))
			break;
	if (cru && device_is_bound(&pdev->dev) && i == soc->num_cores)
		return 0;
	pr_err("rkaccel_sim: sim=%s: the NPU cores failed to probe (see above)\n", sim);
	return -ENODEV;
}

int rkaccel_sim_soc_init(void)
{
	int ret;

	ret = sim_parse_fault();
	if (ret)
		return ret;
	ret = platform_driver_register(&sim_cru_driver);
	if (ret || !sim || !*sim)
		return ret;
	ret = sim_create();
	if (ret)
		rkaccel_sim_soc_exit();
	return ret;
}

void rkaccel_sim_soc_exit(void)
{
	platform_device_unregister(sim_cru_pdev);
	sim_cru_pdev = NULL;
	platform_driver_unregister(&sim_cru_driver);
}
