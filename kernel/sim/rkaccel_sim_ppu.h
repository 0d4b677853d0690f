/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_SIM_PPU_H_
#define _RKACCEL_SIM_PPU_H_

#include "rkaccel_sim_conv.h"

u32 rkaccel_sim_ppu(struct device *dev, const struct rkaccel_soc_data *soc, const u32 *regs,
		    u32 op_enable, struct rkaccel_vm *vm,
		    const struct rkaccel_sim_scratch *scratch, struct rkaccel_sim_work *work);

#endif /* _RKACCEL_SIM_PPU_H_ */
