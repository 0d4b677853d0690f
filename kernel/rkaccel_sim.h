/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_SIM_H_
#define _RKACCEL_SIM_H_

struct rkaccel_device;

int rkaccel_sim_init(struct rkaccel_device *rdev);

#endif /* _RKACCEL_SIM_H_ */
