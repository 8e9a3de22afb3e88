/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-entry: namespace fops of distribute (rename is in dist-rename.c,
 * unlink in dist-unlink.c).
 *
 * create/mknod/symlink: on the hashed subvolume in one round trip; when
 *   that one is short of space (min-free-disk) or decommissioned, the data
 *   goes to the subvolume with most free space and a link file (mode
 *   ---------T, xattr trusted.mortar.dht.linkto) to the hashed one.
 * mkdir: on the hashed subvolume, then on every other up one in parallel,
 *   same GFID; each copy gets its layout range in the mkdir itself (two
 *   rounds); a failure undoes the created copies.
 * rmdir: on every subvolume; ENOTEMPTY anywhere recreates the removed
 *   copies (a copy holding only link files is emptied first).
 * link: hard link on the cached subvolume plus a link file on the new
 *   name's hashed subvolume when different.
 *
 * Intercepts: create, mknod, symlink, mkdir, rmdir, link.
 * Threads:    children's callbacks; dist-worker.c threads.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"


static void
dist_task_or_fail(vl_xlator_t *xl, vl_req_t *req,
                  void (*fn)(vl_xlator_t *xl, vl_req_t *req))
{
    int rc = dist_task_run(xl, req, fn);

    if (rc != 0)
        vl_unwind(req, rc);
}


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
    vl_unwind(req, status);
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
        vl_unwind(req, rc);
        return;
    }
    rc = dist_child_sync(xl, req, (unsigned)data);
    if (rc != 0)
        dist_unlink_at(xl, req, hashed, loc->parent, loc->name);
    else
        dist_new_set_ctx(xl, req, data, hashed);
    vl_unwind(req, rc);
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
        vl_unwind(req, -ENOTCONN);
        return;
    }
    data = dist_pick_data_subvol(xl, hashed);
    local->subvol = data;
    local->subvol2 = hashed;
    if (data != hashed) {
        dist_task_or_fail(xl, req, dist_new_elsewhere_task);
        return;
    }
    r = vl_req_child(req, xl->children[data]);
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
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


/* ---- mkdir ---- */

static void
dist_rmdir_mask(vl_xlator_t *xl, vl_req_t *req, const struct vl_loc *loc,
                uint64_t mask)
{
    union vl_fop_args args[DIST_MAX_SUBVOLS];
    struct dist_call calls[DIST_MAX_SUBVOLS];
    unsigned n = dist_priv(xl)->n;

    memset(args, 0, sizeof(args));
    for (unsigned i = 0; i < n; i++) {
        args[i].rmdir.loc.parent = loc->parent;
        args[i].rmdir.loc.name = loc->name;
    }
    dist_fan_sync(xl, req, mask, VL_FOP_RMDIR, args, calls);
    dist_calls_clear(calls, n);
}


/* The layout of a new directory on the stale copies in mask (EEXIST in
 * the mkdir round: they did not get it with the mkdir); one parallel
 * round, only when such copies exist. 0 or the first error. */
static int
dist_mkdir_layout(vl_xlator_t *xl, vl_req_t *req, const vl_gfid_t *gfid,
                  unsigned char (*vals)[DIST_LAYOUT_SIZE], uint64_t mask)
{
    union vl_fop_args args[DIST_MAX_SUBVOLS];
    struct dist_call calls[DIST_MAX_SUBVOLS];
    unsigned n = dist_priv(xl)->n;
    vl_inode_t *tmp;
    int rc = 0;

    if (mask == 0)
        return 0;
    tmp = dist_inode_for_gfid(xl, gfid, S_IFDIR);
    if (tmp == NULL)
        return -ENOMEM;
    memset(args, 0, sizeof(args));
    for (unsigned i = 0; i < n; i++) {
        args[i].setxattr.loc.inode = tmp;
        args[i].setxattr.name = DIST_XATTR_LAYOUT;
        args[i].setxattr.value = vals[i];
        args[i].setxattr.size = DIST_LAYOUT_SIZE;
    }
    dist_fan_sync(xl, req, mask, VL_FOP_SETXATTR, args, calls);
    vl_inode_unref(tmp);
    for (unsigned i = 0; i < n; i++)
        if ((mask & (1ULL << i)) && calls[i].status != 0 && rc == 0)
            rc = calls[i].status;
    dist_calls_clear(calls, n);
    return rc;
}


/* The mkdir request for subvolume i: the caller's, plus i's range of the
 * new layout as the xattr storage/posix sets before answering. */
static void
dist_mkdir_args_for(const vl_req_t *req, unsigned i,
                    unsigned char (*vals)[DIST_LAYOUT_SIZE],
                    union vl_fop_args *out /* OUT */)
{
    *out = req->args;
    out->mkdir.xattr_name = DIST_XATTR_LAYOUT;
    out->mkdir.xattr_value = vals[i];
    out->mkdir.xattr_size = DIST_LAYOUT_SIZE;
}


/* Two rounds. The hashed subvolume first: it decides between concurrent
 * mkdirs of one name (the loser gets EEXIST there and touches nothing
 * else, so a directory never has two GFIDs). Then every other up
 * subvolume in one parallel round. Each copy is made with its range of
 * the layout (default, generation 1, COMMITTED) in the mkdir itself, set
 * by storage/posix before the copy's GFID: no copy made here is ever seen
 * without its layout. A stale copy (EEXIST away from the hashed one) gets
 * its range in a third round, only then. */
static void
dist_mkdir_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_priv *priv = dist_priv(xl);
    struct vl_mkdir_args *a = VL_ARGS(req, mkdir);
    union vl_fop_args args[DIST_MAX_SUBVOLS];
    struct dist_call calls[DIST_MAX_SUBVOLS];
    unsigned char vals[DIST_MAX_SUBVOLS][DIST_LAYOUT_SIZE];
    struct dist_layout *layout;
    unsigned n = priv->n;
    uint64_t up = dist_up_mask(xl), made = 0, exist = 0;
    int hashed, rc;

    hashed = dist_hashed_subvol(xl, a->loc.parent, a->loc.name, NULL);
    if (hashed < 0 || !(up & (1ULL << hashed))) {
        vl_unwind(req, -ENOTCONN);
        return;
    }
    layout = vl_malloc(xl, sizeof(*layout), DIST_MT_LAYOUT);
    if (layout == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    dist_layout_default(layout, n, priv->decommissioned, 1,
                        DIST_FLAG_COMMITTED);
    for (unsigned i = 0; i < n; i++)
        dist_layout_encode(&layout->r[i], vals[i]);
    dist_mkdir_args_for(req, (unsigned)hashed, vals, &args[hashed]);
    rc = dist_call_sync(xl, req, (unsigned)hashed, VL_FOP_MKDIR,
                        &args[hashed], &calls[hashed]);
    if (rc != 0) {
        vl_reply_clear(&calls[hashed].reply);
        vl_free(layout);
        vl_unwind(req, rc);
        return;
    }
    made = 1ULL << hashed;
    vl_reply_clear(&req->reply);
    req->reply.iatt = calls[hashed].reply.iatt;
    /* The hashed copy holds the name: its parent's attributes go up
     * (mode and owner as on every copy, nlink too once the others are
     * made; times are that copy's). */
    dist_postparent_take(&req->reply, &calls[hashed].reply);
    vl_reply_clear(&calls[hashed].reply);

    for (unsigned i = 0; i < n; i++)
        dist_mkdir_args_for(req, i, vals, &args[i]);
    dist_fan_sync(xl, req, up & ~made, VL_FOP_MKDIR, args, calls);
    for (unsigned i = 0; i < n; i++) {
        if (!((up & ~made) & (1ULL << i)))
            continue;
        if (calls[i].status == 0)
            made |= 1ULL << i;
        else if (calls[i].status == -EEXIST)
            exist |= 1ULL << i; /* a stale copy: it gets the layout */
        else if (calls[i].status != -ENOTCONN && rc == 0)
            rc = calls[i].status;
    }
    dist_calls_clear(calls, n);
    if (rc == 0)
        rc = dist_mkdir_layout(xl, req, &a->gfid, vals, exist);
    if (rc != 0) {
        vl_free(layout);
        dist_rmdir_mask(xl, req, &a->loc, made);
        vl_reply_clear(&req->reply);
        vl_unwind(req, rc);
        return;
    }
    for (unsigned i = 0; i < n; i++)
        if (!(up & (1ULL << i)))
            layout->r[i].err = -ENOTCONN;
    dist_ictx_set_layout(xl, a->loc.inode, layout);
    vl_unwind(req, 0);
}


void
dist_mkdir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_mkdir_args *a = VL_ARGS(req, mkdir);

    if (dist_hashed_subvol(xl, a->loc.parent, a->loc.name, NULL) == -ESTALE) {
        dist_with_parent_layout(xl, req, a->loc.parent, dist_mkdir);
        return;
    }
    dist_task_or_fail(xl, req, dist_mkdir_task);
}


/* ---- rmdir ---- */

/* Empties subvolume i's copy of dir if it holds only link files; true
 * when it did (then rmdir may be retried there). */
static bool
dist_rmdir_clean_links(vl_xlator_t *xl, vl_req_t *req, unsigned i,
                       const struct vl_loc *loc)
{
    union vl_fop_args a;
    struct dist_call call;
    vl_inode_t *dir;
    vl_fd_t *fd;
    char **names = NULL;
    size_t n_names = 0;
    bool is_links = true, is_eof = false;
    int64_t off = 0;

    /* The kernel gives no inode for rmdir: find the GFID there. */
    memset(&a, 0, sizeof(a));
    a.lookup.loc.parent = loc->parent;
    a.lookup.loc.name = loc->name;
    if (dist_call_sync(xl, req, i, VL_FOP_LOOKUP, &a, &call) != 0) {
        vl_reply_clear(&call.reply);
        return false;
    }
    dir = dist_inode_for_gfid(xl, &call.reply.iatt.gfid, S_IFDIR);
    vl_reply_clear(&call.reply);
    if (dir == NULL)
        return false;
    fd = vl_fd_new(dir, O_RDONLY, 0);
    if (fd == NULL) {
        vl_inode_unref(dir);
        return false;
    }
    memset(&a, 0, sizeof(a));
    a.opendir.loc.inode = dir;
    a.opendir.fd = fd;
    if (dist_call_sync(xl, req, i, VL_FOP_OPENDIR, &a, &call) != 0)
        is_links = false;
    vl_reply_clear(&call.reply);
    while (is_links && !is_eof) {
        memset(&a, 0, sizeof(a));
        a.readdir.fd = fd;
        a.readdir.size = 65536;
        a.readdir.offset = off;
        a.readdir.plus = true;
        if (dist_call_sync(xl, req, i, VL_FOP_READDIR, &a, &call) != 0) {
            is_links = false;
            break;
        }
        is_eof = call.reply.entries.eof || call.reply.entries.n == 0;
        for (size_t k = 0; k < call.reply.entries.n && is_links; k++) {
            struct vl_dirent *e = &call.reply.entries.ents[k];
            char **grown;

            off = e->off;
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            if (!e->has_iatt || !dist_iatt_is_linkfile(&e->iatt)) {
                is_links = false;
                break;
            }
            grown = vl_realloc(names, (n_names + 1) * sizeof(*names));
            if (grown == NULL) {
                is_links = false;
                break;
            }
            names = grown;
            names[n_names] = vl_strdup(xl, e->name, DIST_MT_TEXT);
            if (names[n_names] == NULL)
                is_links = false;
            else
                n_names++;
        }
        vl_reply_clear(&call.reply);
    }
    for (size_t k = 0; k < n_names; k++) {
        if (is_links)
            dist_unlink_at(xl, req, (int)i, dir, names[k]);
        vl_free(names[k]);
    }
    vl_free(names);
    vl_fd_unref(fd);
    vl_inode_unref(dir);
    return is_links && n_names > 0;
}


/* Puts back the copies removed by an rmdir that failed elsewhere. */
static void
dist_rmdir_undo(vl_xlator_t *xl, vl_req_t *req, uint64_t removed,
                int survivor)
{
    struct vl_rmdir_args *a = VL_ARGS(req, rmdir);
    /* By name only: loc.inode may be a stale hint from the kernel (the
     * name may hold another directory by now). */
    struct vl_loc loc = {.parent = a->loc.parent, .name = a->loc.name};
    union vl_fop_args la;
    struct dist_call call;
    struct vl_iatt iatt;

    if (removed == 0)
        return;
    memset(&la, 0, sizeof(la));
    la.lookup.loc = loc;
    if (dist_call_sync(xl, req, (unsigned)survivor, VL_FOP_LOOKUP, &la,
                       &call) == 0) {
        vl_reply_clear(&call.reply);
        /* A named directory lookup recreates and re-lays the copies. */
        dist_dir_sync(xl, req, &loc, false, &iatt);
    }
    vl_reply_clear(&call.reply);
}


static void
dist_rmdir_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rmdir_args *a = VL_ARGS(req, rmdir);
    union vl_fop_args args[DIST_MAX_SUBVOLS];
    struct dist_call calls[DIST_MAX_SUBVOLS];
    unsigned n = dist_priv(xl)->n;
    uint64_t up = dist_up_mask(xl), removed = 0, full = 0;
    int rc = 0, survivor = -1;
    struct vl_reply pp = {.has_postparent = false};

    if (n < 64 && up != (1ULL << n) - 1) {
        vl_unwind(req, -ENOTCONN); /* it would come back with the brick */
        return;
    }
    for (unsigned i = 0; i < n; i++)
        args[i] = req->args;
    dist_fan_sync(xl, req, up, VL_FOP_RMDIR, args, calls);
    for (unsigned i = 0; i < n; i++) {
        int st = calls[i].status;

        if (st == 0 && !pp.has_postparent)
            dist_postparent_take(&pp, &calls[i].reply);

        if (st == 0 || st == -ENOENT) {
            removed |= st == 0 ? 1ULL << i : 0;
        } else if (st == -ENOTEMPTY) {
            full |= 1ULL << i;
        } else if (rc == 0) {
            rc = st;
            survivor = (int)i;
        }
    }
    dist_calls_clear(calls, n);
    if (rc == 0 && full != 0) {
        /* Only link files left there: clean, then try again. */
        for (unsigned i = 0; i < n && rc == 0; i++) {
            if (!(full & (1ULL << i)))
                continue;
            if (!dist_rmdir_clean_links(xl, req, i, &a->loc)) {
                rc = -ENOTEMPTY;
                survivor = (int)i;
            }
        }
        if (rc == 0) {
            dist_fan_sync(xl, req, full, VL_FOP_RMDIR, args, calls);
            for (unsigned i = 0; i < n; i++)
                if ((full & (1ULL << i)) && calls[i].status != 0
                    && calls[i].status != -ENOENT && rc == 0) {
                    rc = calls[i].status;
                    survivor = (int)i;
                } else if (full & (1ULL << i)) {
                    removed |= 1ULL << i;
                    if (calls[i].status == 0 && !pp.has_postparent)
                        dist_postparent_take(&pp, &calls[i].reply);
                }
            dist_calls_clear(calls, n);
        }
    }
    if (rc != 0 && survivor >= 0)
        dist_rmdir_undo(xl, req, removed, survivor);
    /* One copy's parent after its rmdir (nlink is one less on each). */
    if (rc == 0)
        dist_postparent_take(&req->reply, &pp);
    vl_unwind(req, rc);
}


void
dist_rmdir(vl_xlator_t *xl, vl_req_t *req)
{
    dist_task_or_fail(xl, req, dist_rmdir_task);
}


/* ---- link ---- */

static void
dist_link_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_link_args *a = VL_ARGS(req, link);
    vl_inode_t *inode = a->oldloc.inode;
    int cached, hashed, rc;

    if (inode == NULL || S_ISDIR(inode->type)) {
        vl_unwind(req, -EPERM);
        return;
    }
    cached = dist_ictx_cached(xl, inode);
    if (cached < 0) {
        struct vl_iatt iatt;

        rc = dist_find_file_sync(xl, req, &a->oldloc, &cached, &iatt);
        if (rc != 0) {
            vl_unwind(req, rc);
            return;
        }
    }
    hashed = dist_hashed_subvol(xl, a->newloc.parent, a->newloc.name, NULL);
    if (hashed >= 0 && hashed != cached && !dist_is_up(xl, (unsigned)hashed)) {
        vl_unwind(req, -ENOTCONN);
        return;
    }
    rc = dist_child_sync(xl, req, (unsigned)cached);
    if (rc == 0 && hashed >= 0 && hashed != cached) {
        rc = dist_linkfile_create(xl, req, hashed, cached, a->newloc.parent,
                                  a->newloc.name, &inode->gfid);
        if (rc != 0) /* no name without a way to it: take it back */
            dist_unlink_at(xl, req, cached, a->newloc.parent,
                                 a->newloc.name);
    }
    vl_unwind(req, rc);
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
    dist_task_or_fail(xl, req, dist_link_task);
}
