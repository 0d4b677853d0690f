/* SPDX-License-Identifier: GPL-2.0-only */
/* rkaccel_sim.ko: the simulated cores and the simulated SoC around them. */
#ifndef _RKACCEL_SIM_H_
#define _RKACCEL_SIM_H_

#include <linux/types.h>

struct rkaccel_soc_data;

bool rkaccel_sim_soc_claims(const struct rkaccel_soc_data *soc, phys_addr_t pc, u32 *version);
int rkaccel_sim_soc_init(void);
void rkaccel_sim_soc_exit(void);

#endif /* _RKACCEL_SIM_H_ */
