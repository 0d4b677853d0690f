/* SPDX-License-Identifier: GPL-2.0-only */
/* rkaccel_sim.ko: the simulated cores and the simulated SoC around them. */
#ifndef _RKACCEL_SIM_H_
#define _RKACCEL_SIM_H_

#include <linux/types.h>

struct rkaccel_soc_data;

bool rkaccel_sim_soc_claims(const struct rkaccel_soc_data *soc, phys_addr_t pc,
			    unsigned int *pos, u32 *version);
bool rkaccel_sim_soc_core_powered(unsigned int pos);
bool rkaccel_sim_soc_core_clocked(unsigned int pos);
int rkaccel_sim_soc_init(void);
void rkaccel_sim_soc_exit(void);

/* From the simulated CRU to the core at @pos (rkaccel_sim_core.c). */
void rkaccel_sim_core_clock(unsigned int pos, bool on);
void rkaccel_sim_core_reset_line(unsigned int pos, unsigned int line, bool asserted);
void rkaccel_sim_core_power(unsigned int pos, bool on);

#endif /* _RKACCEL_SIM_H_ */
