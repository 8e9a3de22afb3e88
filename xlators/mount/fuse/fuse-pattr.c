/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-pattr: a directory's attributes from the namespace op just done in
 * it (the reply's postparent), kept to answer the kernel's next GETATTR
 * of that directory without a round trip.
 *
 * The kernel drops a directory's cached attributes after every create,
 * mkdir, unlink, rmdir, rename, link, symlink or mknod in it, and with
 * default_permissions asks for them again before the next permission
 * check there: one STAT per namespace op. The reply already says what
 * the directory is after the op; it is kept for the directory's node (or
 * the root) until the attribute timeout the kernel would have applied,
 * and used once. A reply without it drops what was kept; so do SETATTR
 * and the xattr calls on the directory (fuse-entry.c).
 *
 * Intercepts: GETATTR (without FUSE_GETATTR_FH).
 * State: struct vfuse_pattr in each node and in the table for the root,
 *        under the table's lock (fuse-table.c).
 * Threads: reader threads (GETATTR) and reply callbacks (entry ops).
 */
#include "config.h"

#include <time.h>

#include "fuse.h"


uint64_t
vfuse_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


/* Keeps (or, without one, drops) the attributes of dir after the op. */
static void
vfuse_pattr_note(struct vfuse_call *call, const vl_inode_t *dir, bool has,
                 const struct vl_iatt *iatt)
{
    const struct vfuse_conf *conf = VL_CONF(call->xl, struct vfuse_conf);
    uint64_t ms = vfuse_cache_timeout_ms(call->priv, conf->attr_timeout);
    bool is_kept = has && ms > 0 && vl_gfid_equal(&iatt->gfid, &dir->gfid);

    vfuse_pattr_store(&call->sess->table, &dir->gfid, is_kept ? iatt : NULL,
                      vfuse_now_ns() + ms * 1000000ull);
}


/* The kernel drops a directory's cached attributes after every namespace
 * op in it (and asks for them again before the next permission check
 * there): keep the reply's copy so that GETATTR is answered here. */
void
vfuse_postparent_learn(struct vfuse_call *call, vl_req_t *req)
{
    const struct vl_reply *rp = &req->reply;
    const struct vl_rename_args *ra;
    const struct vl_loc *loc;

    if (req->status != 0)
        return;
    switch (req->op) {
    case VL_FOP_CREATE:
        loc = &VL_ARGS(req, create)->loc;
        break;
    case VL_FOP_UNLINK:
        loc = &VL_ARGS(req, unlink)->loc;
        break;
    case VL_FOP_RMDIR:
        loc = &VL_ARGS(req, rmdir)->loc;
        break;
    case VL_FOP_RENAME:
        ra = VL_ARGS(req, rename);
        vfuse_pattr_note(call, ra->oldloc.parent, rp->has_postparent,
                         &rp->postparent);
        /* One directory: its one state after the op is already kept. */
        if (ra->newloc.parent != ra->oldloc.parent || rp->has_postparent2)
            vfuse_pattr_note(call, ra->newloc.parent, rp->has_postparent2,
                             &rp->postparent2);
        return;
    case VL_FOP_MKNOD:
        loc = &VL_ARGS(req, mknod)->loc;
        break;
    case VL_FOP_MKDIR:
        loc = &VL_ARGS(req, mkdir)->loc;
        break;
    case VL_FOP_SYMLINK:
        loc = &VL_ARGS(req, symlink)->loc;
        break;
    case VL_FOP_LINK:
        loc = &VL_ARGS(req, link)->newloc;
        break;
    default:
        return; /* lookup: the directory did not change */
    }
    if (loc->parent != NULL)
        vfuse_pattr_note(call, loc->parent, rp->has_postparent,
                         &rp->postparent);
}


bool
vfuse_getattr_local(struct vfuse_call *call, const struct fuse_getattr_in *in)
{
    struct fuse_attr_out out;
    struct vl_iatt iatt;
    uint64_t now = vfuse_now_ns(), until = 0, left_ns;

    if ((in->getattr_flags & FUSE_GETATTR_FH)
        || !vfuse_pattr_take(&call->sess->table, call->hdr.nodeid, now,
                             &iatt, &until))
        return false;
    atomic_fetch_add(&call->sess->n_getattr_local, 1);
    vfuse_attr_fill(call->priv, &out, &iatt);
    /* The kernel may cache them only for what is left of the timeout
     * counted from the reply that brought them, not for a fresh one:
     * they are never older than attribute-timeout when it uses them. */
    left_ns = until > now ? until - now : 0;
    out.attr_valid = left_ns / 1000000000ull;
    out.attr_valid_nsec = (uint32_t)(left_ns % 1000000000ull);
    vfuse_reply_buf(call, &out, sizeof(out));
    return true;
}
