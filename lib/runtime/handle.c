// SPDX-License-Identifier: MIT
/*
 * The one owner of the library's GEM handles. A DRM file holds one handle
 * per BO however often it is imported (PRIME gives back the handle it
 * already has), so a handle may be reached from a context's BO and from
 * any number of mems at once: every holder takes a reference here, keyed
 * by (fd, handle), and the handle is closed with the last one. Nothing in
 * the library closes a GEM handle another way.
 */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <xf86drm.h>

#include "runtime.h"
#include "rkaccel_drm.h"

struct gem_ref {
	int fd;
	uint32_t handle;
	int refs;
	struct gem_ref *next;
};

static pthread_mutex_t refs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gem_ref *refs;

static void gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* gem_ref_get() with the lock held. */
static int ref_get_locked(int fd, uint32_t handle)
{
	struct gem_ref *r;
	int ret = 0;

	for (r = refs; r; r = r->next)
		if (r->fd == fd && r->handle == handle)
			break;
	if (r) {
		r->refs++;
	} else {
		r = calloc(1, sizeof(*r));
		if (r) {
			*r = (struct gem_ref){ .fd = fd, .handle = handle, .refs = 1, .next = refs };
			refs = r;
		} else {
			/* no entry: nobody else in the library holds it */
			gem_close(fd, handle);
			ret = -ENOMEM;
		}
	}
	return ret;
}

int gem_ref_get(int fd, uint32_t handle)
{
	int ret;

	pthread_mutex_lock(&refs_lock);
	ret = ref_get_locked(fd, handle);
	pthread_mutex_unlock(&refs_lock);
	return ret;
}

/*
 * Import @dmabuf_fd on @fd and take a reference to the handle, under the
 * lock: a last gem_ref_put() of the same BO cannot close the handle between
 * the import handing it out and the reference being taken.
 */
int gem_ref_import(int fd, int dmabuf_fd, uint32_t *handle)
{
	int ret;

	pthread_mutex_lock(&refs_lock);
	ret = drmPrimeFDToHandle(fd, dmabuf_fd, handle) ? -errno : 0;
	if (!ret)
		ret = ref_get_locked(fd, *handle);
	pthread_mutex_unlock(&refs_lock);
	return ret;
}

void gem_ref_put(int fd, uint32_t handle)
{
	struct gem_ref **pp, *r;
	bool last = false;

	if (!handle)
		return;
	pthread_mutex_lock(&refs_lock);
	for (pp = &refs; (r = *pp); pp = &r->next) {
		if (r->fd == fd && r->handle == handle) {
			last = --r->refs == 0;
			if (last)
				*pp = r->next;
			break;
		}
	}
	/* Closed under the lock: see gem_ref_import(). */
	if (last) {
		gem_close(fd, handle);
		free(r);
	}
	pthread_mutex_unlock(&refs_lock);
}
