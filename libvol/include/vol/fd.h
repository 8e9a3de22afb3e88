/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fd: an open file or directory, refcounted. The top of a graph (FUSE, or
 * protocol/server for a remote client) creates it before OPEN, CREATE or
 * OPENDIR, and drops its ref on release. When the last ref goes, each
 * translator's release() hook runs (top of the graph first), so per-fd
 * state such as a brick's file descriptor or a client's remote handle is
 * dropped exactly once.
 *
 * Each translator gets cls->fd_ctx_size zeroed bytes (vl_fd_ctx); fd->lock
 * guards them unless the translator documents otherwise.
 */
#ifndef VOL_FD_H
#define VOL_FD_H

#include <pthread.h>
#include <stdint.h>

#include "vol/inode.h"

struct vl_xlator;

typedef struct vl_fd {
    vl_inode_t *inode;    /* owned ref */
    int32_t flags;        /* open(2) flags it was opened with */
    uint32_t pid;         /* pid that opened it */
    uint64_t lk_owner;    /* flock(2) owner: unique per open file */
    pthread_mutex_t lock; /* guards translators' ctx areas */
    /* refs and ctx areas follow */
} vl_fd_t;

/* New fd with one ref on inode (a ref is taken); NULL on ENOMEM. */
vl_fd_t *vl_fd_new(vl_inode_t *inode, int32_t flags, uint32_t pid);
vl_fd_t *vl_fd_ref(vl_fd_t *fd);
void vl_fd_unref(vl_fd_t *fd); /* NULL is allowed */
void *vl_fd_ctx(vl_fd_t *fd, struct vl_xlator *xl);

#endif /* VOL_FD_H */
