/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A client of the device for tests of several files (several address
 * spaces): its own open file, a BO holding a chain of empty tasks, a
 * context on the cores of a mask and an out syncobj.
 */
#ifndef RKACCEL_TEST_CLIENT_H
#define RKACCEL_TEST_CLIENT_H

#include "rkaccel_test.h"
#include "regcmd.h"

struct rkt_client {
	int fd;
	struct rkt_bo cmd;
	struct drm_rkaccel_submit_bo bo;
	struct drm_rkaccel_task task;
	uint32_t ctx, out;
};

static inline int rkt_client_init(struct rkt_client *c, uint32_t mask, uint32_t ntasks)
{
	struct rkt_chain ch;
	int ret;

	memset(c, 0, sizeof(*c));
	c->fd = rkt_open_fd();
	if (c->fd < 0)
		return c->fd;
	ret = rkt_bo_new(c->fd, rkt_chain_bytes(ntasks, 2), 0, &c->cmd);
	if (!ret)
		ret = rkt_chain_build(c->cmd.map, c->cmd.npu_addr, c->cmd.map_len, 0, ntasks, 2,
				      0, &ch);
	if (!ret)
		ret = rkt_ctx_create(c->fd, mask, DRM_RKACCEL_PRIORITY_NORMAL, &c->ctx);
	if (!ret)
		ret = rkt_syncobj_create(c->fd, &c->out);
	if (ret)
		return ret;
	c->task = rkt_chain_task(&ch);
	c->bo.handle = c->cmd.handle;
	return 0;
}

/* The chain once, signalling the client's syncobj. */
static inline int rkt_client_submit(struct rkt_client *c)
{
	return rkt_submit(c->fd, c->ctx, &c->task, 1, &c->bo, 1, NULL, 0, c->out, 0);
}

static inline void rkt_client_fini(struct rkt_client *c)
{
	if (c->cmd.map)
		munmap(c->cmd.map, c->cmd.map_len);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

#endif /* RKACCEL_TEST_CLIENT_H */
