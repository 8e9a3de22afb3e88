/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-entry: namespace fops of distribute (rename is in dist-rename.c,
 * unlink in dist-unlink.c).
 *
 * create/mknod/symlink: on the hashed subvolume in one round trip; when
 *   that one is short of space (min-free-disk) or decommissioned, the data
 *   goes to the subvolume with most free space and a link file (mode
 *   ---------T, xattr trusted.mortar.dht.linkto) to the hashed one.
 * mkdir and rmdir are in dist-mkdir.c.
 * link: hard link on the cached subvolume plus a link file on the new
 *   name's hashed subvolume when different.
 *
 * Intercepts: create, mknod, symlink, link.
 * Threads:    children's callbacks; dist-worker.c threads.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"


/* ---- link files ---- */

/* Makes parent/name on subvolume at a hard link of the object that
 * already has gfid there (a link file of another name of the same file,
 * or a rebalance's marker or data copy): a second object with that GFID
 * cannot exist on one brick. *mode (OUT) is the object's mode. */
static int
dist_linkfile_link(vl_xlator_t *xl, vl_req_t *req, int at, vl_inode_t *parent,
                   const char *name, const vl_gfid_t *gfid,
                   uint32_t *mode /* OUT */)
{
    vl_inode_t *tmp = dist_inode_for_gfid(xl, gfid, S_IFREG);
    union vl_fop_args a;
    struct dist_call call;
    int rc;

    if (tmp == NULL)
        return -ENOMEM;
    memset(&a, 0, sizeof(a));
    a.link.oldloc.inode = tmp;
    a.link.newloc.parent = parent;
    a.link.newloc.name = name;
    rc = dist_call_sync(xl, req, (unsigned)at, VL_FOP_LINK, &a, &call);
    if (rc == 0) {
        *mode = call.reply.iatt.mode;
        if (!vl_gfid_equal(&call.reply.iatt.gfid, gfid)
            || !S_ISREG(call.reply.iatt.mode))
            rc = -EEXIST; /* not ours after all: take the name back */
    }
    vl_reply_clear(&call.reply);
    vl_inode_unref(tmp);
    if (rc == -EEXIST && *mode != 0)
        dist_unlink_at(xl, req, at, parent, name);
    return rc;
}


/* mknod of the link file; on EEXIST, what is there decides: the name is
 * already this file's link file (0), another object (-EEXIST), or the
 * name is free and the GFID is what collided (EEXIST from the brick's
 * GFID handle): then the name becomes a hard link of the object holding
 * the GFID. *mode (OUT) is the mode of what the name now is. */
static int
dist_linkfile_make(vl_xlator_t *xl, vl_req_t *req, int at, vl_inode_t *parent,
                   const char *name, const vl_gfid_t *gfid,
                   uint32_t *mode /* OUT */)
{
    union vl_fop_args a;
    struct dist_call call;
    int rc = -EEXIST;

    /* Twice: the other name may go away between our calls. */
    for (int attempt = 0; attempt < 2 && rc == -EEXIST; attempt++) {
        *mode = DIST_LINK_MODE;
        memset(&a, 0, sizeof(a));
        a.mknod.loc.parent = parent;
        a.mknod.loc.name = name;
        a.mknod.mode = DIST_LINK_MODE;
        a.mknod.gfid = *gfid;
        rc = dist_call_sync(xl, req, (unsigned)at, VL_FOP_MKNOD, &a, &call);
        vl_reply_clear(&call.reply);
        if (rc != -EEXIST)
            break;
        memset(&a, 0, sizeof(a));
        a.lookup.loc.parent = parent;
        a.lookup.loc.name = name;
        rc = dist_call_sync(xl, req, (unsigned)at, VL_FOP_LOOKUP, &a, &call);
        if (rc == 0) {
            *mode = call.reply.iatt.mode;
            if (!dist_iatt_is_linkfile(&call.reply.iatt)
                || !vl_gfid_equal(&call.reply.iatt.gfid, gfid))
                rc = -EEXIST;
            vl_reply_clear(&call.reply);
            break;
        }
        vl_reply_clear(&call.reply);
        if (rc != -ENOENT)
            break;
        *mode = 0;
        rc = dist_linkfile_link(xl, req, at, parent, name, gfid, mode);
        if (rc == -ENOENT || rc == -ESTALE)
            rc = -EEXIST; /* the GFID's last name went: mknod again */
        else
            break;
    }
    return rc;
}


int
dist_linkfile_create(vl_xlator_t *xl, vl_req_t *req, int at, int to,
                     vl_inode_t *parent, const char *name,
                     const vl_gfid_t *gfid)
{
    const char *target = xl->children[to]->name;
    vl_inode_t *tmp;
    union vl_fop_args a;
    struct dist_call call;
    uint32_t mode = 0;
    int rc;

    rc = dist_linkfile_make(xl, req, at, parent, name, gfid, &mode);
    if (rc != 0)
        return rc;
    /* A marker (a migration in progress) keeps the rebalance's linkto;
     * data needs none. */
    if ((mode & 07777) != S_ISVTX)
        return 0;
    tmp = dist_inode_for_gfid(xl, gfid, S_IFREG);
    if (tmp == NULL)
        return -ENOMEM;
    memset(&a, 0, sizeof(a));
    a.setxattr.loc.inode = tmp;
    a.setxattr.name = DIST_XATTR_LINKTO;
    a.setxattr.value = target;
    a.setxattr.size = strlen(target) + 1;
    rc = dist_call_sync(xl, req, (unsigned)at, VL_FOP_SETXATTR, &a, &call);
    vl_reply_clear(&call.reply);
    vl_inode_unref(tmp);
    if (rc != 0)
        dist_unlink_at(xl, req, at, parent, name);
    return rc;
}


int
dist_unlink_at(vl_xlator_t *xl, vl_req_t *req, int at, vl_inode_t *parent,
               const char *name)
{
    union vl_fop_args a;
    struct dist_call call;
    int rc;

    memset(&a, 0, sizeof(a));
    a.unlink.loc.parent = parent;
    a.unlink.loc.name = name;
    rc = dist_call_sync(xl, req, (unsigned)at, VL_FOP_UNLINK, &a, &call);
    vl_reply_clear(&call.reply);
    return rc;
}


/* ---- create, mknod, symlink ---- */

static struct vl_loc *
dist_new_loc(vl_req_t *req)
{
    switch (req->op) {
    case VL_FOP_CREATE:
        return &req->args.create.loc;
    case VL_FOP_MKNOD:
        return &req->args.mknod.loc;
    default:
        return &req->args.symlink.loc;
    }
}


static const vl_gfid_t *
dist_new_gfid(vl_req_t *req)
{
    switch (req->op) {
    case VL_FOP_CREATE:
        return &req->args.create.gfid;
    case VL_FOP_MKNOD:
        return &req->args.mknod.gfid;
    default:
        return &req->args.symlink.gfid;
    }
}


static void
dist_new_set_ctx(vl_xlator_t *xl, vl_req_t *req, int data, int hashed)
{
    dist_ictx_set_file(xl, dist_new_loc(req)->inode, data, hashed,
                       data != hashed);
    if (req->op == VL_FOP_CREATE && req->args.create.fd != NULL) {
        struct dist_fd_ctx *f = vl_fd_ctx(req->args.create.fd, xl);

        pthread_mutex_lock(&req->args.create.fd->lock);
        f->has_subvol = true;
        f->subvol = data;
        f->flags = req->args.create.flags;
        pthread_mutex_unlock(&req->args.create.fd->lock);
    }
}


static void
dist_new_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    int status = r->status;

    if (status == 0)
        dist_new_set_ctx(req->xl, req, local->subvol, local->subvol);
    vl_reply_move(req, r);
    dist_entry_unwind(req, status);
}


/* Data elsewhere: link file on the hashed subvolume first, so that the
 * name is never visible without a way to its data. */
static void
dist_new_elsewhere_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct vl_loc *loc = dist_new_loc(req);
    int hashed = local->subvol2, data = local->subvol;
    int rc;

    rc = dist_linkfile_create(xl, req, hashed, data, loc->parent, loc->name,
                              dist_new_gfid(req));
    if (rc != 0) {
        dist_entry_unwind(req, rc);
        return;
    }
    rc = dist_child_sync(xl, req, (unsigned)data);
    if (rc != 0)
        dist_unlink_at(xl, req, hashed, loc->parent, loc->name);
    else
        dist_new_set_ctx(xl, req, data, hashed);
    dist_entry_unwind(req, rc);
}


static void
dist_new_entry(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct vl_loc *loc = dist_new_loc(req);
    int hashed, data;
    vl_req_t *r;

    hashed = dist_hashed_subvol(xl, loc->parent, loc->name, NULL);
    if (hashed == -ESTALE) {
        dist_with_parent_layout(xl, req, loc->parent, dist_new_entry);
        return;
    }
    if (hashed < 0 || !dist_is_up(xl, (unsigned)hashed)) {
        dist_entry_unwind(req, -ENOTCONN);
        return;
    }
    data = dist_pick_data_subvol(xl, hashed);
    local->subvol = data;
    local->subvol2 = hashed;
    if (data != hashed) {
        dist_task_or_unwind(xl, req, dist_new_elsewhere_task);
        return;
    }
    r = vl_req_child(req, xl->children[data]);
    if (r == NULL) {
        dist_entry_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, dist_new_done, req);
}


void
dist_create(vl_xlator_t *xl, vl_req_t *req)
{
    dist_new_entry(xl, req);
}


void
dist_mknod(vl_xlator_t *xl, vl_req_t *req)
{
    dist_new_entry(xl, req);
}


void
dist_symlink(vl_xlator_t *xl, vl_req_t *req)
{
    dist_new_entry(xl, req);
}


/* ---- link ---- */

static void
dist_link_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_link_args *a = VL_ARGS(req, link);
    vl_inode_t *inode = a->oldloc.inode;
    struct vl_iatt iatt;
    int cached, hashed, found = -1, rc;
    bool is_known;

    if (inode == NULL || S_ISDIR(inode->type)) {
        dist_entry_unwind(req, -EPERM);
        return;
    }
    cached = dist_ictx_cached(xl, inode);
    is_known = cached >= 0;
    if (!is_known) {
        rc = dist_find_file_sync(xl, req, &a->oldloc, &cached, &iatt);
        if (rc != 0) {
            dist_entry_unwind(req, rc);
            return;
        }
    }
    hashed = dist_hashed_subvol_sync(xl, req, a->newloc.parent,
                                     a->newloc.name);
    if (hashed >= 0 && hashed != cached && !dist_is_up(xl, (unsigned)hashed)) {
        dist_entry_unwind(req, -ENOTCONN);
        return;
    }
    rc = dist_child_sync(xl, req, (unsigned)cached);
    /* The subvolume this client knew the data on no longer has it (a
     * rebalance moved the file): find it again, once. */
    if ((rc == -ENOENT || rc == -ESTALE) && is_known
        && dist_find_file_sync(xl, req, &a->oldloc, &found, &iatt) == 0
        && found != cached) {
        cached = found;
        pthread_mutex_lock(&inode->lock);
        dist_ictx(xl, inode)->cached = found;
        dist_ictx(xl, inode)->has_cached = true;
        pthread_mutex_unlock(&inode->lock);
        if (hashed >= 0 && hashed != cached
            && !dist_is_up(xl, (unsigned)hashed)) {
            dist_entry_unwind(req, -ENOTCONN);
            return;
        }
        vl_reply_clear(&req->reply);
        rc = dist_child_sync(xl, req, (unsigned)cached);
    }
    if (rc == 0 && hashed >= 0 && hashed != cached) {
        rc = dist_linkfile_create(xl, req, hashed, cached, a->newloc.parent,
                                  a->newloc.name, &inode->gfid);
        if (rc != 0) /* no name without a way to it: take it back */
            dist_unlink_at(xl, req, cached, a->newloc.parent,
                                 a->newloc.name);
    }
    dist_entry_unwind(req, rc);
}


void
dist_link(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_link_args *a = VL_ARGS(req, link);

    if (dist_hashed_subvol(xl, a->newloc.parent, a->newloc.name, NULL)
        == -ESTALE) {
        dist_with_parent_layout(xl, req, a->newloc.parent, dist_link);
        return;
    }
    dist_task_or_unwind(xl, req, dist_link_task);
}
