/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-rename: rename through distribute.
 *
 * A file is renamed where its data is (cached subvolume S). When the new
 * name hashes elsewhere (NH != S) a link file for it goes to NH (after
 * removing whatever the replaced target had there); the old name's link
 * file on its hashed subvolume is removed; a replaced target's data on a
 * third subvolume is removed. The data never moves, so one rename on S is
 * the commit point and an open fd stays valid.
 * A directory is renamed on every subvolume: the new name's hashed one
 * first, then the others in parallel; a failure renames the done ones
 * back. Every subvolume must be up (a copy left under the old name would
 * come back through heal).
 * RENAME_NOREPLACE is honoured; RENAME_EXCHANGE is dist-exchange.c's.
 *
 * Intercepts: rename.
 * Threads:    dist-worker.c threads.
 */
#include "config.h"

#include <errno.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif


static void dist_rename_dir(vl_xlator_t *xl, vl_req_t *req);


/* What a rename by name on one subvolume must not have moved: a link
 * file (the data is elsewhere) or a directory (it lives everywhere). Only
 * a stale inode hint leads there. */
static bool
dist_rename_moved_wrong(const struct vl_iatt *iatt)
{
    return dist_iatt_is_linkfile(iatt) || S_ISDIR(iatt->mode);
}


/* The inode of what a rename moved (GFID gfid): the caller's when it is
 * that one (it may be a stale hint, or absent), else the table's. New
 * ref or NULL. */
static vl_inode_t *
dist_rename_moved_inode(vl_xlator_t *xl, vl_req_t *req,
                        const vl_gfid_t *gfid)
{
    vl_inode_t *inode = VL_ARGS(req, rename)->oldloc.inode;

    if (inode != NULL && vl_gfid_equal(&inode->gfid, gfid))
        return vl_inode_ref(inode);
    return vl_inode_find(xl->graph->itable, gfid);
}


/* Renames newloc back to oldloc on child at after a rename that moved
 * something else than the file meant (a stale inode hint). */
static void
dist_rename_back(vl_xlator_t *xl, vl_req_t *req, int at)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    union vl_fop_args b;
    struct dist_call call;

    memset(&b, 0, sizeof(b));
    b.rename.oldloc.parent = a->newloc.parent;
    b.rename.oldloc.name = a->newloc.name;
    b.rename.newloc.parent = a->oldloc.parent;
    b.rename.newloc.name = a->oldloc.name;
    b.rename.flags = RENAME_NOREPLACE;
    dist_call_sync(xl, req, (unsigned)at, VL_FOP_RENAME, &b, &call);
    vl_reply_clear(&call.reply);
    vl_reply_clear(&req->reply);
}


/* Where the old name's data is now, found by name on every subvolume,
 * then renamed from there (no hint). */
static void dist_rename_file(vl_xlator_t *xl, vl_req_t *req, int src,
                             const vl_gfid_t *gfid, bool is_hint);


static int dist_rename_try_fast(vl_xlator_t *xl, vl_req_t *req, int src,
                                const vl_gfid_t *gfid);


static void
dist_rename_unhinted(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    struct vl_iatt iatt;
    int src = -1, rc;

    rc = dist_find_file_sync(xl, req, &a->oldloc, &src, &iatt);
    if (rc != 0) {
        vl_unwind(req, rc);
        return;
    }
    if (S_ISDIR(iatt.mode)) {
        dist_rename_dir(xl, req);
        return;
    }
    rc = dist_rename_try_fast(xl, req, src, &iatt.gfid);
    if (rc == 0)
        return;
    dist_rename_file(xl, req, src, &iatt.gfid, false);
}


/* src is where the data is (from the inode's ctx when is_hint: the
 * kernel's inode may be stale, the name renamed or replaced since). */
static void
dist_rename_file(vl_xlator_t *xl, vl_req_t *req, int src,
                 const vl_gfid_t *hint_gfid, bool is_hint)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    vl_inode_t *inode;
    struct vl_iatt tiatt;
    vl_gfid_t moved = *hint_gfid;
    const vl_gfid_t *gfid = &moved;
    int oh, nh, target = -1;
    int rc;

    oh = dist_hashed_subvol_sync(xl, req, a->oldloc.parent, a->oldloc.name);
    nh = dist_hashed_subvol_sync(xl, req, a->newloc.parent, a->newloc.name);
    if (nh < 0 || !dist_is_up(xl, (unsigned)nh)) {
        vl_unwind(req, -ENOTCONN);
        return;
    }
    {
        struct vl_loc tloc = {.parent = a->newloc.parent,
                              .name = a->newloc.name};

        rc = dist_find_file_sync(xl, req, &tloc, &target, &tiatt);
        if (rc == 0 && (a->flags & RENAME_NOREPLACE)) {
            vl_unwind(req, -EEXIST);
            return;
        }
        if (rc == 0 && S_ISDIR(tiatt.mode)) {
            vl_unwind(req, -EISDIR);
            return;
        }
        if (rc == 0 && vl_gfid_equal(&tiatt.gfid, gfid)) {
            /* Two names of one file: POSIX says do nothing. */
            vl_reply_clear(&req->reply);
            req->reply.iatt = tiatt;
            vl_unwind(req, 0);
            return;
        }
        if (rc != 0 && rc != -ENOENT) {
            vl_unwind(req, rc);
            return;
        }
        if (rc != 0)
            target = -1;
    }

    /* The commit point: the data's name changes where it lives. */
    rc = dist_child_sync(xl, req, (unsigned)src);
    if (is_hint && (rc == -ENOENT || rc == -ESTALE)) {
        vl_reply_clear(&req->reply);
        dist_rename_unhinted(xl, req); /* not where the hint said */
        return;
    }
    if (rc != 0) {
        vl_unwind(req, rc);
        return;
    }
    if (dist_rename_moved_wrong(&req->reply.iatt)) {
        /* The name is a link file there now (its data is elsewhere) or
         * a directory (renamed on every subvolume). */
        dist_rename_back(xl, req, src);
        if (is_hint) {
            dist_rename_unhinted(xl, req);
            return;
        }
        vl_unwind(req, -ESTALE);
        return;
    }
    /* By name: what was moved is what the name held (another file than
     * the hint's when it was replaced meanwhile). */
    moved = req->reply.iatt.gfid;
    if (nh != src) {
        /* The target's data or link file under the new name on NH. */
        if (target >= 0)
            dist_unlink_at(xl, req, nh, a->newloc.parent,
                                  a->newloc.name);
        rc = dist_linkfile_create(xl, req, nh, src, a->newloc.parent,
                                  a->newloc.name, gfid);
        if (rc != 0)
            vl_log(xl, VL_LOG_WARNING, "rename %s -> %s: no link file on "
                   "%s: %s (lookup will heal)", a->oldloc.name,
                   a->newloc.name, xl->children[nh]->name, strerror(-rc));
        rc = 0;
    }
    if (target >= 0 && target != src && target != nh)
        dist_unlink_at(xl, req, target, a->newloc.parent,
                              a->newloc.name);
    if (oh >= 0 && oh != src
        && !(oh == nh && a->oldloc.parent == a->newloc.parent
             && strcmp(a->oldloc.name, a->newloc.name) == 0))
        dist_unlink_at(xl, req, oh, a->oldloc.parent,
                              a->oldloc.name);
    inode = dist_rename_moved_inode(xl, req, gfid);
    dist_ictx_set_file(xl, inode, src, nh, nh != src);
    if (inode != NULL)
        vl_inode_unref(inode);
    vl_unwind(req, 0);
}


static void
dist_rename_dir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    union vl_fop_args *args = NULL;
    struct dist_call *calls = NULL;
    unsigned n = dist_priv(xl)->n;
    dist_mask_t up = dist_up_mask(xl), rest;
    dist_mask_t done = dist_mask_none();
    int nh, rc;

    if (!dist_mask_equal(up, dist_mask_all(n))) {
        vl_unwind(req, -ENOTCONN);
        return;
    }
    args = dist_args_new(xl);
    calls = dist_calls_new(xl);
    if (args == NULL || calls == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    nh = dist_hashed_subvol_sync(xl, req, a->newloc.parent, a->newloc.name);
    if (nh < 0)
        nh = 0;
    rc = dist_child_sync(xl, req, (unsigned)nh);
    if (rc != 0)
        goto out;
    dist_mask_set(&done, (unsigned)nh);
    rest = dist_mask_andnot(up, done);
    for (unsigned i = 0; i < n; i++)
        args[i] = req->args;
    dist_fan_sync(xl, req, rest, VL_FOP_RENAME, args, calls);
    for (unsigned i = 0; i < n; i++) {
        if (!dist_mask_test(rest, i))
            continue;
        if (calls[i].status == 0)
            dist_mask_set(&done, i);
        else if (rc == 0)
            rc = calls[i].status;
    }
    dist_calls_clear(calls, n);
    if (rc != 0) {
        /* Back to the old name where it was done. */
        for (unsigned i = 0; i < n; i++) {
            memset(&args[i], 0, sizeof(args[i]));
            args[i].rename.oldloc.parent = a->newloc.parent;
            args[i].rename.oldloc.name = a->newloc.name;
            args[i].rename.oldloc.inode = a->oldloc.inode;
            args[i].rename.newloc.parent = a->oldloc.parent;
            args[i].rename.newloc.name = a->oldloc.name;
        }
        dist_fan_sync(xl, req, done, VL_FOP_RENAME, args, calls);
        vl_reply_clear(&req->reply);
    }
out:
    vl_free(args);
    dist_calls_free(calls, n);
    vl_unwind(req, rc);
}


/* Same subvolume for the data, the old and the new name: one rename
 * with RENAME_NOREPLACE there is the whole operation when the new name is
 * free (an existing target may be a link file whose data lies elsewhere:
 * EEXIST sends it to the full path). Returns 0 when req was answered,
 * 1 to go on with the full path, -ESTALE when the name is not on src
 * (stale hint). */
static int
dist_rename_fast(vl_xlator_t *xl, vl_req_t *req, int src,
                 const vl_gfid_t *gfid)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    union vl_fop_args b;
    struct dist_call call;
    vl_inode_t *inode;
    int rc;

    b = req->args;
    b.rename.flags |= RENAME_NOREPLACE;
    rc = dist_call_sync(xl, req, (unsigned)src, VL_FOP_RENAME, &b, &call);
    if (rc == -EEXIST) {
        vl_reply_clear(&call.reply);
        if (a->flags & RENAME_NOREPLACE) {
            vl_unwind(req, -EEXIST);
            return 0;
        }
        return 1;
    }
    if (rc == -ENOENT || rc == -ESTALE) {
        vl_reply_clear(&call.reply);
        return -ESTALE;
    }
    if (rc != 0) {
        vl_reply_clear(&call.reply);
        vl_unwind(req, rc);
        return 0;
    }
    if (dist_rename_moved_wrong(&call.reply.iatt)) {
        /* A stale hint: another file's link file, or a directory. */
        vl_reply_clear(&call.reply);
        dist_rename_back(xl, req, src);
        return -ESTALE;
    }
    (void)gfid;
    inode = dist_rename_moved_inode(xl, req, &call.reply.iatt.gfid);
    dist_ictx_set_file(xl, inode, src, src, false);
    if (inode != NULL)
        vl_inode_unref(inode);
    vl_reply_clear(&req->reply);
    req->reply = call.reply; /* moved */
    vl_unwind(req, 0);
    return 0;
}


/* The data on src, the new name hashed to nh != src, the new name free
 * on nh: the link file for the new name first (round 1: its EEXIST says
 * the target exists, then the full path), then the rename on src (with
 * RENAME_NOREPLACE: the commit point) and the link file's xattr in one
 * parallel round, then the old name's link file if there was one. Same
 * return values as dist_rename_fast. */
static int
dist_rename_cross(vl_xlator_t *xl, vl_req_t *req, int src, int oh, int nh,
                  const vl_gfid_t *gfid)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    const char *target = xl->children[src]->name;
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = dist_calls_new(xl);
    vl_fop_t *ops = vl_calloc(xl, dist_priv(xl)->n, sizeof(*ops),
                              DIST_MT_FAN);
    unsigned n = dist_priv(xl)->n;
    vl_inode_t *tmp, *inode;
    int rc;

    if (args == NULL || calls == NULL || ops == NULL) {
        rc = 0;
        vl_unwind(req, -ENOMEM);
        goto out;
    }
    args[nh].mknod.loc.parent = a->newloc.parent;
    args[nh].mknod.loc.name = a->newloc.name;
    args[nh].mknod.mode = DIST_LINK_MODE;
    args[nh].mknod.gfid = *gfid;
    rc = dist_call_sync(xl, req, (unsigned)nh, VL_FOP_MKNOD, &args[nh],
                        &calls[nh]);
    vl_reply_clear(&calls[nh].reply);
    if (rc != 0) { /* EEXIST: the name, or the GFID under another name (a
                      stale hint): the full path finds out */
        rc = 1;
        goto out;
    }
    tmp = dist_inode_for_gfid(xl, gfid, S_IFREG);
    if (tmp == NULL) {
        dist_unlink_at(xl, req, nh, a->newloc.parent, a->newloc.name);
        rc = 0;
        vl_unwind(req, -ENOMEM);
        goto out;
    }
    args[src] = req->args;
    args[src].rename.flags |= RENAME_NOREPLACE;
    ops[src] = VL_FOP_RENAME;
    memset(&args[nh], 0, sizeof(args[nh]));
    args[nh].setxattr.loc.inode = tmp;
    args[nh].setxattr.name = DIST_XATTR_LINKTO;
    args[nh].setxattr.value = target;
    args[nh].setxattr.size = strlen(target) + 1;
    ops[nh] = VL_FOP_SETXATTR;
    dist_fan_ops_sync(xl, req,
                      dist_mask_or(dist_mask_one((unsigned)src),
                                   dist_mask_one((unsigned)nh)),
                      ops, args, calls);
    vl_inode_unref(tmp);
    rc = calls[src].status;
    if (rc == 0 && dist_rename_moved_wrong(&calls[src].reply.iatt)) {
        dist_rename_back(xl, req, src); /* a stale hint */
        rc = -ESTALE;
    }
    if (rc != 0) {
        dist_calls_clear(calls, n);
        dist_unlink_at(xl, req, nh, a->newloc.parent, a->newloc.name);
        if (rc == -ENOENT || rc == -ESTALE) {
            rc = -ESTALE;
        } else if (rc == -EEXIST && !(a->flags & RENAME_NOREPLACE)) {
            rc = 1;
        } else {
            vl_unwind(req, rc);
            rc = 0;
        }
        goto out;
    }
    if (calls[nh].status != 0)
        vl_log(xl, VL_LOG_WARNING, "rename %s -> %s: link file on %s: %s "
               "(lookup will heal)", a->oldloc.name, a->newloc.name,
               xl->children[nh]->name, strerror(-calls[nh].status));
    vl_reply_clear(&req->reply);
    req->reply = calls[src].reply; /* moved */
    memset(&calls[src].reply, 0, sizeof(calls[src].reply));
    dist_calls_clear(calls, n);
    if (!vl_gfid_equal(&req->reply.iatt.gfid, gfid)) {
        /* By name: another file than the hint's was moved; its link
         * file must carry its GFID. */
        dist_unlink_at(xl, req, nh, a->newloc.parent, a->newloc.name);
        dist_linkfile_create(xl, req, nh, src, a->newloc.parent,
                             a->newloc.name, &req->reply.iatt.gfid);
    }
    if (oh >= 0 && oh != src)
        dist_unlink_at(xl, req, oh, a->oldloc.parent, a->oldloc.name);
    inode = dist_rename_moved_inode(xl, req, &req->reply.iatt.gfid);
    dist_ictx_set_file(xl, inode, src, nh, true);
    if (inode != NULL)
        vl_inode_unref(inode);
    rc = 0;
    vl_unwind(req, 0);
out:
    vl_free(ops);
    vl_free(args);
    dist_calls_free(calls, n);
    return rc;
}


/* The short paths when the data's subvolume src is known: 0 when req
 * was answered, 1 for the full path, -ESTALE when the old name is not
 * (or no longer) the file on src. */
static int
dist_rename_try_fast(vl_xlator_t *xl, vl_req_t *req, int src,
                     const vl_gfid_t *gfid)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    int oh, nh;

    oh = dist_hashed_subvol_sync(xl, req, a->oldloc.parent, a->oldloc.name);
    nh = dist_hashed_subvol_sync(xl, req, a->newloc.parent, a->newloc.name);
    if (nh < 0 || !dist_is_up(xl, (unsigned)nh)
        || (oh >= 0 && !dist_is_up(xl, (unsigned)oh)))
        return 1;
    if (nh == src)
        return oh == src ? dist_rename_fast(xl, req, src, gfid) : 1;
    return dist_rename_cross(xl, req, src, oh, nh, gfid);
}


/* Finds what is renamed and where its data is: the inode's ctx when the
 * caller gave a known inode (a hint, checked by the rename itself), else
 * a lookup of the name on every subvolume. */
static void
dist_rename_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    vl_inode_t *inode = a->oldloc.inode;
    vl_gfid_t gfid;
    int src = -1, rc;

    if (inode != NULL && S_ISDIR(inode->type)) {
        dist_rename_dir(xl, req);
        return;
    }
    if (inode != NULL && !vl_gfid_is_null(&inode->gfid))
        src = dist_ictx_cached(xl, inode);
    if (src < 0 || !dist_is_up(xl, (unsigned)src)) {
        dist_rename_unhinted(xl, req);
        return;
    }
    gfid = inode->gfid;
    rc = dist_rename_try_fast(xl, req, src, &gfid);
    if (rc == 0)
        return;
    if (rc == -ESTALE) {
        dist_rename_unhinted(xl, req);
        return;
    }
    dist_rename_file(xl, req, src, &gfid, true);
}


/* Both parents' layouts must be known before the task can run. */
void
dist_rename(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    int rc;

    if ((a->flags & ~(uint32_t)(RENAME_NOREPLACE | RENAME_EXCHANGE))
        || ((a->flags & RENAME_NOREPLACE) && (a->flags & RENAME_EXCHANGE))) {
        vl_unwind(req, -EINVAL);
        return;
    }
    if (a->oldloc.parent == NULL
        || a->newloc.parent == NULL || a->oldloc.name == NULL
        || a->newloc.name == NULL) {
        vl_unwind(req, -EINVAL);
        return;
    }
    if (dist_hashed_subvol(xl, a->oldloc.parent, a->oldloc.name, NULL)
        == -ESTALE) {
        dist_with_parent_layout(xl, req, a->oldloc.parent, dist_rename);
        return;
    }
    if (dist_hashed_subvol(xl, a->newloc.parent, a->newloc.name, NULL)
        == -ESTALE) {
        dist_with_parent_layout(xl, req, a->newloc.parent, dist_rename);
        return;
    }
    rc = dist_task_run(xl, req, (a->flags & RENAME_EXCHANGE)
                                    ? dist_exchange_task
                                    : dist_rename_task);
    if (rc != 0)
        vl_unwind(req, rc);
}
