/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fd: refcounted open-file objects with per-translator context areas.
 *
 * At the last unref every translator's release() runs, top of the graph
 * first (xls is in volfile order, children first, so we walk it
 * backwards), then the inode ref is dropped.
 * Threads: refs are atomic; fd->lock guards the ctx areas.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core.h"

struct vl__fd {
    vl_fd_t pub;                      /* public part; must stay first */
    atomic_long refs;                 /* freed at 0 */
    vl_graph_t *graph;                /* borrowed; for release hooks */
    _Alignas(16) unsigned char ctx[]; /* graph->fd_ctx_size bytes */
};

static atomic_uint_least64_t vl_fd_next_owner = 1;


vl_fd_t *
vl_fd_new(vl_inode_t *inode, int32_t flags, uint32_t pid)
{
    vl_graph_t *graph = vl__inode_table_graph(inode->table);
    size_t ctx = graph != NULL ? VL__ALIGN_UP(graph->fd_ctx_size) : 0;
    struct vl__fd *fd;

    fd = vl_calloc(NULL, 1, sizeof(*fd) + ctx, VL_MT_FD);
    if (fd == NULL)
        return NULL;
    if (pthread_mutex_init(&fd->pub.lock, NULL) != 0) {
        vl_free(fd);
        return NULL;
    }
    atomic_init(&fd->refs, 1);
    fd->graph = graph;
    fd->pub.inode = vl_inode_ref(inode);
    fd->pub.flags = flags;
    fd->pub.pid = pid;
    fd->pub.lk_owner = atomic_fetch_add(&vl_fd_next_owner, 1);
    return &fd->pub;
}


vl_fd_t *
vl_fd_ref(vl_fd_t *fd)
{
    atomic_fetch_add(&((struct vl__fd *)fd)->refs, 1);
    return fd;
}


void
vl_fd_unref(vl_fd_t *pub)
{
    struct vl__fd *fd = (struct vl__fd *)pub;
    size_t i;

    if (pub == NULL)
        return;
    if (atomic_fetch_sub(&fd->refs, 1) != 1)
        return;
    if (fd->graph != NULL) {
        for (i = fd->graph->n_xls; i-- > 0;) {
            vl_xlator_t *xl = fd->graph->xls[i];

            if (xl->cls->release != NULL)
                xl->cls->release(xl, pub);
        }
    }
    vl_inode_unref(pub->inode);
    pthread_mutex_destroy(&pub->lock);
    vl_free(fd);
}


void *
vl_fd_ctx(vl_fd_t *fd, struct vl_xlator *xl)
{
    if (xl->cls->fd_ctx_size == 0)
        return NULL;
    return ((struct vl__fd *)fd)->ctx + xl->fd_ctx_off;
}
