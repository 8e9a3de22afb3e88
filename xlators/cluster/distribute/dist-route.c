/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-route: inode and fd fops of distribute, and the EREMCHG reroute.
 *
 * Files: to the fd's subvolume, else the inode's cached one (one round
 * trip). An answer of EREMCHG (the file was migrated), or ESTALE/ENOENT
 * for a regular file, is never passed up: a worker looks the GFID up on
 * every subvolume (first regular non-link-file answer wins, the one
 * that answered EREMCHG last: it still lists the file between the
 * rebalance's mark and its unlink), reopens the
 * fd there with its open flags minus O_CREAT|O_EXCL|O_TRUNC, and retries
 * the fop once. copy_file_range within one subvolume comes here from
 * dist-copy.c, which copies across subvolumes itself.
 * Directories: stat and fstat on every up subvolume in one parallel
 * round, answered with the copies' newest times (doc/distribute.md
 * "Directory attributes"); other reads from the first up subvolume;
 * setattr (its answer merged the same way), setxattr and removexattr on
 * all. entrylk: the name's hashed subvolume.
 *
 * Intercepts: stat, setattr, access, readlink, open, read, write, flush,
 *             fsync, lk, inodelk, entrylk, fallocate, copy_file_range,
 *             lseek, rchecksum (and file xattrs from dist-xattr.c).
 * Per fd:     struct dist_fd_ctx (subvolume and open flags), fd->lock.
 * Threads:    children's callbacks; dist-worker.c threads.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"

static void dist_reroute_task(vl_xlator_t *xl, vl_req_t *req);


/* The inode a fop is about (file or directory), or NULL. */
static vl_inode_t *
dist_req_inode(vl_req_t *req)
{
    switch (req->op) {
    case VL_FOP_STAT:
        return req->args.stat.fd != NULL ? req->args.stat.fd->inode
                                         : req->args.stat.loc.inode;
    case VL_FOP_SETATTR:
        return req->args.setattr.fd != NULL ? req->args.setattr.fd->inode
                                            : req->args.setattr.loc.inode;
    case VL_FOP_ACCESS:
        return req->args.access.loc.inode;
    case VL_FOP_READLINK:
        return req->args.readlink.loc.inode;
    case VL_FOP_OPEN:
        return req->args.open.loc.inode;
    case VL_FOP_READ:
        return req->args.read.fd->inode;
    case VL_FOP_WRITE:
        return req->args.write.fd->inode;
    case VL_FOP_FLUSH:
        return req->args.flush.fd->inode;
    case VL_FOP_FSYNC:
        return req->args.fsync.fd->inode;
    case VL_FOP_LK:
        return req->args.lk.fd->inode;
    case VL_FOP_FALLOCATE:
        return req->args.fallocate.fd->inode;
    case VL_FOP_LSEEK:
        return req->args.lseek.fd->inode;
    case VL_FOP_RCHECKSUM:
        return req->args.rchecksum.fd->inode;
    case VL_FOP_COPY_FILE_RANGE:
        return req->args.copy_file_range.fd_in->inode;
    case VL_FOP_INODELK:
        return req->args.inodelk.loc.inode;
    case VL_FOP_GETXATTR:
        return req->args.getxattr.loc.inode;
    case VL_FOP_SETXATTR:
        return req->args.setxattr.loc.inode;
    case VL_FOP_REMOVEXATTR:
        return req->args.removexattr.loc.inode;
    default:
        return NULL;
    }
}


/* The fd a fop works through (NULL for inode fops). */
static vl_fd_t *
dist_req_fd(vl_req_t *req)
{
    unsigned flags = vl_fop_flags(req->op);

    if (req->op == VL_FOP_STAT)
        return req->args.stat.fd;
    if (req->op == VL_FOP_SETATTR)
        return req->args.setattr.fd;
    if (req->op == VL_FOP_COPY_FILE_RANGE)
        return req->args.copy_file_range.fd_in;
    if (req->op == VL_FOP_OPEN)
        return NULL;
    if ((flags & VL_F_FD) && !(flags & VL_F_LOC))
        return req->args.read.fd; /* fd is the first member of each */
    return NULL;
}


int
dist_fd_subvol(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct dist_fd_ctx *ctx = vl_fd_ctx(fd, xl);
    int idx = -1;

    pthread_mutex_lock(&fd->lock);
    if (ctx->has_subvol)
        idx = ctx->subvol;
    pthread_mutex_unlock(&fd->lock);
    return idx;
}


static void
dist_fd_set(vl_xlator_t *xl, vl_fd_t *fd, int subvol, int32_t flags)
{
    struct dist_fd_ctx *ctx = vl_fd_ctx(fd, xl);

    pthread_mutex_lock(&fd->lock);
    ctx->has_subvol = true;
    ctx->subvol = subvol;
    ctx->flags = flags;
    pthread_mutex_unlock(&fd->lock);
}


/* Where a fop on a file goes: the fd's subvolume, else the inode's
 * cached one; -1 when unknown. */
static int
dist_route_target(vl_xlator_t *xl, vl_req_t *req)
{
    vl_fd_t *fd = dist_req_fd(req);
    int idx = -1;

    if (fd != NULL)
        idx = dist_fd_subvol(xl, fd);
    if (idx < 0)
        idx = dist_ictx_cached(xl, dist_req_inode(req));
    return idx;
}


static bool
dist_is_moved_error(vl_req_t *req, int status)
{
    vl_inode_t *inode = dist_req_inode(req);

    if (status == -EREMCHG)
        return true;
    if (status != -ESTALE && status != -ENOENT)
        return false;
    return inode != NULL && (inode->type == 0 || S_ISREG(inode->type));
}


static void
dist_route_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    int status = r->status;

    if (status != 0 && !local->is_retry && dist_is_moved_error(req, status)) {
        /* That subvolume said the file moved away: between the
         * rebalance's mark and its unlink it still lists it. */
        local->subvol2 = status == -EREMCHG ? local->subvol : -1;
        if (dist_task_run(xl, req, dist_reroute_task) == 0)
            return;
    }
    if (status == -EREMCHG)
        status = -ESTALE; /* never up: the retry failed too */
    vl_reply_move(req, r);
    if (status == 0 && req->op == VL_FOP_OPEN)
        dist_fd_set(xl, req->args.open.fd, local->subvol,
                    req->args.open.flags);
    vl_unwind(req, status);
}


static void
dist_route_wind(vl_xlator_t *xl, vl_req_t *req, int subvol)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    vl_req_t *r;

    local->subvol = subvol;
    r = vl_req_child(req, xl->children[subvol]);
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, dist_route_done, req);
}


/* Finds where the file lives now (GFID on every subvolume), reopens the
 * fd there and retries the fop once; also serves fops whose file has no
 * known subvolume yet. */
static void
dist_reroute_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct dist_priv *priv = dist_priv(xl);
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = dist_calls_new(xl);
    vl_inode_t *inode = dist_req_inode(req);
    vl_fd_t *fd = dist_req_fd(req);
    int found = -1;
    int rc;

    local->is_retry = true;
    if (args == NULL || calls == NULL) {
        vl_free(args);
        dist_calls_free(calls, priv->n);
        vl_unwind(req, -ENOMEM);
        return;
    }
    atomic_fetch_add(&priv->n_reroutes, 1);
    for (unsigned i = 0; i < priv->n; i++)
        args[i].lookup.loc.inode = inode;
    dist_fan_sync(xl, req, dist_up_mask(xl), VL_FOP_LOOKUP, args, calls);
    /* The subvolume that answered EREMCHG last, if another has the file:
     * the source keeps its name from the mark to the unlink. */
    for (int pass = 0; pass < 2 && found < 0; pass++)
        for (unsigned i = 0; i < priv->n && found < 0; i++)
            if ((pass == 1 || (int)i != local->subvol2)
                && calls[i].status == 0
                && !dist_iatt_is_linkfile(&calls[i].reply.iatt)
                && (S_ISREG(calls[i].reply.iatt.mode)
                    || !S_ISREG(inode->type)))
                found = (int)i;
    vl_free(args);
    dist_calls_free(calls, priv->n);
    if (found < 0) {
        vl_unwind(req, -ESTALE);
        return;
    }
    pthread_mutex_lock(&inode->lock);
    dist_ictx(xl, inode)->cached = found;
    dist_ictx(xl, inode)->has_cached = true;
    pthread_mutex_unlock(&inode->lock);
    if (req->op == VL_FOP_COPY_FILE_RANGE) {
        int out = dist_fd_subvol(xl, req->args.copy_file_range.fd_out);

        if (out >= 0 && out != found) {
            vl_unwind(req, -EXDEV);
            return;
        }
    }
    if (fd != NULL && dist_fd_subvol(xl, fd) != found) {
        struct dist_call call;
        union vl_fop_args oa;
        int32_t flags = fd->flags;
        struct dist_fd_ctx *fctx = vl_fd_ctx(fd, xl);

        pthread_mutex_lock(&fd->lock);
        if (fctx->has_subvol)
            flags = fctx->flags;
        pthread_mutex_unlock(&fd->lock);
        memset(&oa, 0, sizeof(oa));
        oa.open.loc.inode = inode;
        oa.open.flags = flags & ~(O_CREAT | O_EXCL | O_TRUNC);
        oa.open.fd = fd;
        rc = dist_call_sync(xl, req, (unsigned)found, VL_FOP_OPEN, &oa, &call);
        vl_reply_clear(&call.reply);
        if (rc != 0) {
            vl_unwind(req, rc == -EREMCHG ? -ESTALE : rc);
            return;
        }
        dist_fd_set(xl, fd, found, flags);
    }
    local->subvol = found;
    rc = dist_child_sync(xl, req, (unsigned)found);
    if (rc == 0 && req->op == VL_FOP_OPEN)
        dist_fd_set(xl, req->args.open.fd, found, req->args.open.flags);
    vl_unwind(req, rc == -EREMCHG ? -ESTALE : rc);
}


/* ---- directory attributes: every copy, times merged ---- */

/* The answer of a directory's copies (calls of the subvolumes in asked,
 * index order) merged into *out: the first copy's attributes with the
 * newest times of the copies of its GFID. 0, or the first error that is
 * not ENOTCONN when no copy answered (else -ENOTCONN). *is_whole: every
 * subvolume answered that directory. */
static int
dist_dir_attr_merge(const int *status, const struct vl_iatt *ia, unsigned n,
                    dist_mask_t asked, struct vl_iatt *out,
                    bool *is_whole /* OUT */)
{
    int base = -1, rc = -ENOTCONN;

    *is_whole = dist_mask_equal(asked, dist_mask_all(n));
    for (unsigned i = 0; i < n; i++) {
        if (status[i] != 0) {
            if (status[i] != -ENOTCONN && rc == -ENOTCONN)
                rc = status[i];
            *is_whole = false;
            continue;
        }
        if (base < 0) {
            base = (int)i;
            *out = ia[i];
        } else if (S_ISDIR(ia[i].mode)
                   && vl_gfid_equal(&ia[i].gfid, &out->gfid)) {
            dist_iatt_max_times(out, &ia[i]);
        } else {
            *is_whole = false;
        }
    }
    if (base < 0)
        return rc;
    if (!S_ISDIR(out->mode))
        *is_whole = false;
    return 0;
}


/* setattr of a directory went to every up subvolume: its answer (the
 * first copy's, in req->reply) gets the newest times of all of them. */
static void
dist_dir_setattr_merge(vl_xlator_t *xl, vl_req_t *req,
                       const struct dist_call *calls)
{
    unsigned n = dist_priv(xl)->n;
    int *status = vl_calloc(xl, n, sizeof(*status), DIST_MT_FAN);
    struct vl_iatt *ia = vl_calloc(xl, n, sizeof(*ia), DIST_MT_FAN);
    struct vl_iatt out;
    bool is_whole;

    if (status == NULL || ia == NULL) {
        /* Only the merge is lost: the settle still keeps it from going
         * back. */
        dist_dir_times_settle(xl, dist_req_inode(req), &req->reply.iatt,
                              false);
        goto out;
    }
    for (unsigned i = 0; i < n; i++) {
        status[i] = calls[i].status;
        ia[i] = calls[i].reply.iatt;
    }
    if (dist_dir_attr_merge(status, ia, n, dist_up_mask(xl), &out,
                            &is_whole) == 0) {
        req->reply.iatt = out;
        dist_dir_times_settle(xl, dist_req_inode(req), &req->reply.iatt,
                              is_whole);
    }
out:
    vl_free(status);
    vl_free(ia);
}


struct dist_dstat;

/* One child's cookie in a directory stat. */
struct dist_dstat_slot {
    struct dist_dstat *ds;     /* the stat */
    unsigned i;                /* the child's subvolume */
};

/* A directory stat in flight (one allocation, freed when it answers). */
struct dist_dstat {
    vl_req_t *req;             /* borrowed; the stat */
    vl_fanout_t fan;           /* children not answered yet */
    dist_mask_t asked;         /* subvolumes asked */
    int *status;               /* per subvolume; -ENOTCONN if not asked */
    struct vl_iatt *iatt;      /* per subvolume */
    struct dist_dstat_slot slots[]; /* per subvolume */
};


static void
dist_dstat_free(struct dist_dstat *ds)
{
    if (ds == NULL)
        return;
    vl_free(ds->status);
    vl_free(ds->iatt);
    vl_free(ds);
}


static void
dist_dstat_done(vl_req_t *r, void *cookie)
{
    struct dist_dstat_slot *slot = cookie;
    struct dist_dstat *ds = slot->ds;
    vl_req_t *req = ds->req;
    vl_xlator_t *xl = req->xl;
    struct vl_iatt out;
    bool is_whole;
    int rc;

    ds->status[slot->i] = r->status;
    if (r->status == 0)
        ds->iatt[slot->i] = r->reply.iatt;
    if (!vl_fanout_arrive(&ds->fan, r->status))
        return;
    rc = dist_dir_attr_merge(ds->status, ds->iatt, dist_priv(xl)->n,
                             ds->asked, &out, &is_whole);
    dist_dstat_free(ds);
    if (rc == 0) {
        dist_dir_times_settle(xl, dist_req_inode(req), &out, is_whole);
        vl_reply_clear(&req->reply);
        req->reply.iatt = out;
    }
    vl_unwind(req, rc);
}


/* stat (or fstat) of a directory: every up subvolume in parallel from
 * the caller's thread, answered on the last child's callback. Each brick
 * keeps its own copy's times, and a name made or removed changes only
 * the copy of the subvolume it is on: one copy's times go backwards
 * between two stats of the directory. fstat goes by the fd to the
 * subvolumes it is open on, by GFID to the others. */
static void
dist_dir_stat(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_stat_args *a = VL_ARGS(req, stat);
    vl_inode_t *inode = dist_req_inode(req);
    unsigned n = dist_priv(xl)->n;
    dist_mask_t up = dist_up_mask(xl);
    dist_mask_t by_fd = dist_mask_none();
    struct dist_dstat *ds;
    vl_req_t **rs = NULL;
    int k, j;

    if (a->fd != NULL) {
        struct dist_fd_ctx *fctx = vl_fd_ctx(a->fd, xl);

        pthread_mutex_lock(&a->fd->lock);
        by_fd = fctx->dir_open;
        pthread_mutex_unlock(&a->fd->lock);
    }
    ds = vl_calloc(xl, 1, sizeof(*ds) + n * sizeof(ds->slots[0]),
                   DIST_MT_FAN);
    if (ds != NULL) {
        ds->status = vl_calloc(xl, n, sizeof(*ds->status), DIST_MT_FAN);
        ds->iatt = vl_calloc(xl, n, sizeof(*ds->iatt), DIST_MT_FAN);
    }
    if (ds == NULL || ds->status == NULL || ds->iatt == NULL) {
        dist_dstat_free(ds);
        vl_unwind(req, -ENOMEM);
        return;
    }
    k = dist_round_reqs(xl, req, up, &rs);
    if (k <= 0) {
        dist_dstat_free(ds);
        vl_unwind(req, k == 0 ? -ENOTCONN : k);
        return;
    }
    ds->req = req;
    ds->asked = up;
    for (unsigned i = 0; i < n; i++)
        ds->status[i] = -ENOTCONN;
    vl_fanout_begin(&ds->fan, k);
    j = 0;
    for (unsigned i = 0; i < n; i++) {
        struct vl_stat_args *ca;

        if (!dist_mask_test(up, i))
            continue;
        ds->slots[i] = (struct dist_dstat_slot){.ds = ds, .i = i};
        ca = VL_ARGS(rs[j], stat);
        if (ca->fd != NULL && !dist_mask_test(by_fd, i)) {
            /* Not open there (the subvolume came up after opendir). */
            memset(ca, 0, sizeof(*ca));
            ca->loc.inode = inode;
        }
        j++;
    }
    /* The last answer frees ds: nothing of it is read after the last
     * wind. */
    j = 0;
    for (unsigned i = 0; i < n; i++)
        if (dist_mask_test(up, i))
            vl_wind(rs[j++], dist_dstat_done, &ds->slots[i]);
    vl_free(rs);
}


/* Directories: reads go to the first up subvolume, changes to all. */
static void
dist_dir_all_task(vl_xlator_t *xl, vl_req_t *req)
{
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = dist_calls_new(xl);
    unsigned n = dist_priv(xl)->n;
    int first = -1, rc = -ENOTCONN;

    if (args == NULL || calls == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (unsigned i = 0; i < n; i++)
        args[i] = req->args;
    dist_fan_sync(xl, req, dist_up_mask(xl), req->op, args, calls);
    for (unsigned i = 0; i < n; i++) {
        if (calls[i].status == 0 && first < 0)
            first = (int)i;
        else if (calls[i].status != 0 && calls[i].status != -ENOTCONN)
            rc = calls[i].status;
    }
    if (first >= 0 && rc != -ENOTCONN && req->op == VL_FOP_SETATTR)
        dist_dir_setattr_undo(xl, req, calls); /* all or nothing */
    if (first >= 0 && rc == -ENOTCONN) {
        rc = 0;
        req->reply = calls[first].reply;
        memset(&calls[first].reply, 0, sizeof(calls[first].reply));
        calls[first].reply.iatt = req->reply.iatt; /* for the merge */
        if (req->op == VL_FOP_SETATTR)
            dist_dir_setattr_merge(xl, req, calls);
    }
out:
    vl_free(args);
    dist_calls_free(calls, n);
    vl_unwind(req, rc);
}


/* stat, setattr, access, readlink, open, read, write, flush, fsync, lk,
 * fallocate, lseek, rchecksum, copy_file_range, inodelk and file
 * xattrs. */
void
dist_fop_route(vl_xlator_t *xl, vl_req_t *req)
{
    vl_inode_t *inode = dist_req_inode(req);
    int idx;
    int rc;

    if (inode == NULL || vl_gfid_is_null(&inode->gfid)) {
        vl_unwind(req, -EINVAL); /* distribute routes by known objects */
        return;
    }
    if (dist_inode_is_dir(inode)) {
        if (req->op == VL_FOP_SETATTR || req->op == VL_FOP_SETXATTR
            || req->op == VL_FOP_REMOVEXATTR) {
            rc = dist_task_run(xl, req, dist_dir_all_task);
            if (rc != 0)
                vl_unwind(req, rc);
            return;
        }
        if (req->op == VL_FOP_STAT) {
            dist_dir_stat(xl, req);
            return;
        }
        idx = dist_first_up(xl);
        if (idx < 0)
            vl_unwind(req, -ENOTCONN);
        else
            vl_pass(req, xl->children[idx]);
        return;
    }
    if (req->op == VL_FOP_COPY_FILE_RANGE) {
        int in = dist_fd_subvol(xl, req->args.copy_file_range.fd_in);
        int out = dist_fd_subvol(xl, req->args.copy_file_range.fd_out);

        if (in >= 0 && out >= 0 && in != out) {
            vl_unwind(req, -EXDEV); /* the kernel falls back to copying */
            return;
        }
    }
    idx = dist_route_target(xl, req);
    if (idx < 0) {
            VL_REQ_PRIV(req, struct dist_local)->subvol2 = -1;
        rc = dist_task_run(xl, req, dist_reroute_task);
        if (rc != 0)
            vl_unwind(req, rc);
        return;
    }
    dist_route_wind(xl, req, idx);
}


void
dist_fop_route_xattr(vl_xlator_t *xl, vl_req_t *req)
{
    dist_fop_route(xl, req);
}


/* entrylk goes to the subvolume of the name (first up without one). */
void
dist_entrylk(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_entrylk_args *a = VL_ARGS(req, entrylk);
    int idx = -1;

    if (a->loc.parent != NULL && a->loc.name != NULL)
        idx = dist_hashed_subvol(xl, a->loc.parent, a->loc.name, NULL);
    if (idx < 0)
        idx = dist_first_up(xl);
    if (idx < 0)
        vl_unwind(req, -ENOTCONN);
    else
        vl_pass(req, xl->children[idx]);
}
