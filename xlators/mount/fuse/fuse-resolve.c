/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-resolve: before a handler runs, every nodeid and fh its message
 * names becomes an object of the call's graph.
 *
 * A node or handle already in the call's graph costs one table lookup. One
 * that still points into an older graph (or into none, after that graph
 * was retired) follows lazily after a graph switch:
 *   node:   vl_inode_get(gfid) in the call's graph, then a nameless LOOKUP
 *           so the translators below fill their inode ctx; the node moves
 *           to that inode;
 *   handle: the same for its object, then OPEN with the saved flags minus
 *           O_CREAT, O_EXCL and O_TRUNC (OPENDIR for a directory); the
 *           handle moves to that fd.
 * A FLUSH on a handle not in the call's graph is answered at once: there is
 * nothing of it to flush in a graph that never saw its writes.
 *
 * Items go one after the other (nodes 0 and 1, then fhs 0 and 1), so at
 * most one request of the resolution is in flight; each done callback
 * continues with the next item, possibly inside vl_wind.
 *
 * Threads: reader threads start it; done callbacks continue it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "fuse.h"

enum { VFUSE_RES_DONE = 0, VFUSE_RES_ASYNC = 1, VFUSE_RES_ANSWERED = 2 };

static void vfuse_resolve_next(struct vfuse_call *call);


/* Which nodeids and fhs the message names (payload sizes were checked
 * against the opcode's minimum by the reader). */
static void
vfuse_resolve_plan(struct vfuse_call *call)
{
    const char *arg = call->arg;
    uint32_t op = call->hdr.opcode;

    switch (op) {
    case FUSE_LOOKUP: case FUSE_GETATTR: case FUSE_SETATTR:
    case FUSE_ACCESS: case FUSE_READLINK: case FUSE_MKNOD: case FUSE_MKDIR:
    case FUSE_SYMLINK: case FUSE_LINK: case FUSE_UNLINK: case FUSE_RMDIR:
    case FUSE_RENAME: case FUSE_RENAME2: case FUSE_STATFS:
    case FUSE_SETXATTR: case FUSE_GETXATTR: case FUSE_LISTXATTR:
    case FUSE_REMOVEXATTR: case FUSE_OPEN: case FUSE_OPENDIR:
    case FUSE_CREATE:
        call->want_node[0] = call->hdr.nodeid;
        break;
    default:
        break;
    }
    switch (op) {
    case FUSE_LINK: {
        struct fuse_link_in in;

        memcpy(&in, arg, sizeof(in));
        call->want_node[1] = in.oldnodeid;
        break;
    }
    case FUSE_RENAME: {
        struct fuse_rename_in in;

        memcpy(&in, arg, sizeof(in));
        call->want_node[1] = in.newdir;
        break;
    }
    case FUSE_RENAME2: {
        struct fuse_rename2_in in;

        memcpy(&in, arg, sizeof(in));
        call->want_node[1] = in.newdir;
        break;
    }
    case FUSE_GETATTR: {
        struct fuse_getattr_in in;

        memcpy(&in, arg, sizeof(in));
        if (in.getattr_flags & FUSE_GETATTR_FH)
            call->want_fh[0] = in.fh;
        break;
    }
    case FUSE_SETATTR: {
        struct fuse_setattr_in in;

        memcpy(&in, arg, sizeof(in));
        if (in.valid & FATTR_FH)
            call->want_fh[0] = in.fh;
        break;
    }
    case FUSE_READ: case FUSE_READDIR: case FUSE_READDIRPLUS:
        call->want_fh[0] = ((const struct fuse_read_in *)(const void *)arg)->fh;
        break;
    case FUSE_WRITE:
        call->want_fh[0] =
            ((const struct fuse_write_in *)(const void *)arg)->fh;
        break;
    case FUSE_FLUSH:
        call->want_fh[0] =
            ((const struct fuse_flush_in *)(const void *)arg)->fh;
        break;
    case FUSE_FSYNC: case FUSE_FSYNCDIR:
        call->want_fh[0] =
            ((const struct fuse_fsync_in *)(const void *)arg)->fh;
        break;
    case FUSE_GETLK: case FUSE_SETLK: case FUSE_SETLKW:
        call->want_fh[0] = ((const struct fuse_lk_in *)(const void *)arg)->fh;
        break;
    case FUSE_FALLOCATE:
        call->want_fh[0] =
            ((const struct fuse_fallocate_in *)(const void *)arg)->fh;
        break;
    case FUSE_LSEEK:
        call->want_fh[0] =
            ((const struct fuse_lseek_in *)(const void *)arg)->fh;
        break;
    case FUSE_COPY_FILE_RANGE: {
        struct fuse_copy_file_range_in in;

        memcpy(&in, arg, sizeof(in));
        call->want_fh[0] = in.fh_in;
        call->want_fh[1] = in.fh_out;
        break;
    }
    default:
        break;
    }
}


/* ---- nameless lookup by GFID ---- */

static void vfuse_reopen(struct vfuse_call *call);


static void
vfuse_lookup_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    unsigned i = call->res_step;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    if (i >= 2) {
        vfuse_reopen(call); /* the inode of a handle's object */
        return;
    }
    call->node_inode[i] = call->res_inode;
    call->res_inode = NULL;
    vfuse_node_update(&call->sess->table, call->want_node[i],
                      call->node_inode[i], call->priv->gen);
    call->res_step++;
    vfuse_resolve_next(call);
}


/* Looks gfid up in the call's graph into call->res_inode. */
static int
vfuse_lookup_gfid(struct vfuse_call *call, const vl_gfid_t *gfid,
                  uint32_t type)
{
    vl_req_t *req;

    call->res_inode = vl_inode_get(call->xl->graph->itable, gfid, type);
    if (call->res_inode == NULL)
        return -ENOMEM;
    req = vfuse_req_new(call, VL_FOP_LOOKUP);
    if (req == NULL)
        return -ENOMEM;
    VL_ARGS(req, lookup)->loc.inode = call->res_inode;
    vl_wind(req, vfuse_lookup_done, call);
    return VFUSE_RES_ASYNC;
}


static int
vfuse_resolve_node(struct vfuse_call *call, unsigned i)
{
    uint64_t nodeid = call->want_node[i];
    vl_gfid_t gfid;
    uint32_t type;

    if (nodeid == FUSE_ROOT_ID) {
        call->node_inode[i] = vl_inode_ref(call->priv->root);
        return VFUSE_RES_DONE;
    }
    call->node_inode[i] = vfuse_node_get(&call->sess->table, nodeid,
                                         call->priv->gen, &gfid, &type);
    if (call->node_inode[i] != NULL)
        return VFUSE_RES_DONE;
    return vfuse_lookup_gfid(call, &gfid, type);
}


/* ---- reopening a handle ---- */

static void
vfuse_reopen_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    unsigned i = call->res_step - 2;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    call->fh_fd[i] = call->res_fd;
    call->res_fd = NULL;
    vfuse_handle_update(&call->sess->table, call->want_fh[i],
                        call->fh_fd[i], call->priv->gen);
    call->res_step++;
    vfuse_resolve_next(call);
}


/* res_inode is looked up: open it again as the handle was. */
static void
vfuse_reopen(struct vfuse_call *call)
{
    unsigned i = call->res_step - 2;
    struct vfuse_handle h;
    vl_fd_t *fd;
    vl_req_t *req = NULL;
    int32_t flags;

    /* The handle may have moved to this graph meanwhile. */
    fd = vfuse_handle_get(&call->sess->table, call->want_fh[i],
                          call->priv->gen, &h);
    if (fd != NULL) {
        call->fh_fd[i] = fd;
        call->res_step++;
        vfuse_resolve_next(call);
        return;
    }
    flags = h.flags & ~(O_CREAT | O_EXCL | O_TRUNC);
    call->res_fd = vl_fd_new(call->res_inode, flags, h.pid);
    if (call->res_fd != NULL)
        req = vfuse_req_new(call, h.is_dir ? VL_FOP_OPENDIR : VL_FOP_OPEN);
    if (req == NULL) {
        vfuse_reply_err(call, -ENOMEM);
        return;
    }
    if (h.is_dir) {
        VL_ARGS(req, opendir)->loc.inode = call->res_inode;
        VL_ARGS(req, opendir)->fd = call->res_fd;
    } else {
        VL_ARGS(req, open)->loc.inode = call->res_inode;
        VL_ARGS(req, open)->flags = flags;
        VL_ARGS(req, open)->fd = call->res_fd;
    }
    vl_wind(req, vfuse_reopen_done, call);
}


static int
vfuse_resolve_fh(struct vfuse_call *call, unsigned i)
{
    struct vfuse_handle h;

    call->fh_fd[i] = vfuse_handle_get(&call->sess->table, call->want_fh[i],
                                      call->priv->gen, &h);
    if (call->fh_fd[i] != NULL)
        return VFUSE_RES_DONE;
    if (call->hdr.opcode == FUSE_FLUSH) {
        vfuse_reply_err(call, 0);
        return VFUSE_RES_ANSWERED;
    }
    vl_inode_unref(call->res_inode);
    call->res_inode = NULL;
    return vfuse_lookup_gfid(call, &h.gfid, h.type);
}


/* ---- driver ---- */

static void
vfuse_resolve_next(struct vfuse_call *call)
{
    vfuse_handler_fn *fn;
    int rc;

    for (;;) {
        unsigned i = call->res_step;

        if (i >= 4)
            break;
        if (i < 2 && call->want_node[i] == 0) {
            call->res_step++;
            continue;
        }
        if (i >= 2 && call->want_fh[i - 2] == 0) {
            call->res_step++;
            continue;
        }
        rc = i < 2 ? vfuse_resolve_node(call, i)
                   : vfuse_resolve_fh(call, i - 2);
        if (rc < 0) {
            vfuse_reply_err(call, rc);
            return;
        }
        if (rc != VFUSE_RES_DONE)
            return; /* a callback continues, or the call is answered */
        call->res_step++;
    }
    vl_inode_unref(call->res_inode);
    call->res_inode = NULL;
    fn = call->then;
    call->then = NULL;
    fn(call);
}


void
vfuse_resolve_run(struct vfuse_call *call, vfuse_handler_fn *fn)
{
    call->then = fn;
    vfuse_resolve_plan(call);
    vfuse_resolve_next(call);
}


vl_inode_t *
vfuse_call_node(struct vfuse_call *call, int i)
{
    return call->node_inode[i];
}


vl_fd_t *
vfuse_call_fh(struct vfuse_call *call, int i)
{
    return call->fh_fd[i];
}
