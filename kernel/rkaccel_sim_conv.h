/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_SIM_CONV_H_
#define _RKACCEL_SIM_CONV_H_

#include <linux/types.h>

struct device;
struct rkaccel_soc_data;
struct rkaccel_vm;

/**
 * struct rkaccel_sim_work - what one task cost, for the timing model.
 * @macs: multiply-accumulates of the MAC array.
 * @bytes: bytes moved by the DMAs (feature, weights unless reused, bias, output).
 */
struct rkaccel_sim_work {
	u64 macs;
	u64 bytes;
};

u32 rkaccel_sim_conv(struct device *dev, const struct rkaccel_soc_data *soc, const u32 *regs,
		     u32 op_enable, struct rkaccel_vm *vm, bool compute,
		     struct rkaccel_sim_work *work);

#endif /* _RKACCEL_SIM_CONV_H_ */
