/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-lookup: lookup through distribute, and directory self-heal.
 *
 * Fast paths (one round trip): a name goes to its hashed subvolume; a
 * regular file found there is the answer (with its content when the
 * lookup asks for it: args.content_max, quick-read; the child request
 * carries it down and the reply up); a miss is ENOENT when the
 * parent's range there is COMMITTED and lookup-optimize is on. A known
 * file (revalidate, nameless) goes to its cached subvolume only. A
 * directory (known, or found on the hashed subvolume) is looked up on
 * every subvolume in one more round on the callbacks (dist-dirlookup.c).
 * Slow paths (worker): a link file or an uncommitted miss looks on every
 * subvolume and puts a link file on the hashed one when the data is
 * elsewhere; a directory with a copy missing, a subvolume down or a
 * layout to repair is looked up on every subvolume, attributes merged,
 * missing copies created (same GFID, mode, owner), the layout read from
 * all and repaired if it has holes, overlaps or missing parts.
 *
 * Intercepts: lookup.
 * Per inode:  layout (directories) and cached/hashed subvolume (files).
 * Threads:    callbacks of children; dist-worker.c threads.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"

static void dist_lookup_all_task(vl_xlator_t *xl, vl_req_t *req);
static void dist_lookup_gfid_task(vl_xlator_t *xl, vl_req_t *req);


/* ---- parent layouts ---- */

static void
dist_parent_layout_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct vl_loc loc = {.inode = local->parent};
    struct vl_iatt iatt;
    int rc;

    local->n_layout_fetches++;
    rc = dist_dir_sync(xl, req, &loc, false, &iatt);
    if (rc != 0) {
        vl_unwind(req, rc);
        return;
    }
    local->redo(xl, req);
}


void
dist_with_parent_layout(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *parent,
                        vl_fop_fn *redo)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);

    /* A rename needs two parents' layouts, and the first may age past
     * DIST_LAYOUT_TRUST_MS while the second is fetched (it waits for the
     * layout lock while the rebalance fixes it): a few fetches, not
     * one, before giving up. */
    if (local->n_layout_fetches >= DIST_LAYOUT_FETCHES_MAX
        || parent == NULL) {
        vl_unwind(req, -EIO); /* fetched, and still none */
        return;
    }
    local->parent = parent;
    local->redo = redo;
    dist_task_or_unwind(xl, req, dist_parent_layout_task);
}


/* ---- fast paths ---- */

static void
dist_lookup_named_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    const struct dist_conf *conf = VL_CONF(xl, struct dist_conf);
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    int status = r->status;

    if (status == 0 && S_ISDIR(r->reply.iatt.mode)) {
        vl_gfid_t gfid = r->reply.iatt.gfid;

        dist_lookup_dir(xl, req, &gfid);
        return;
    }
    if (status == 0 && dist_iatt_is_linkfile(&r->reply.iatt)) {
        dist_task_or_unwind(xl, req, dist_lookup_all_task);
        return;
    }
    if (status == -ENOENT && !(local->status2 && conf->is_lookup_optimize)) {
        dist_task_or_unwind(xl, req, dist_lookup_all_task);
        return;
    }
    if (status == 0)
        dist_ictx_set_file(xl, a->loc.inode, local->subvol, local->subvol,
                           false);
    vl_reply_move(req, r);
    vl_unwind(req, status);
}


/* Revalidation of a known file on its cached subvolume. */
static void
dist_lookup_cached_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    bool is_named = a->loc.parent != NULL && a->loc.name != NULL;

    if (r->status != 0 || dist_iatt_is_linkfile(&r->reply.iatt)
        || S_ISDIR(r->reply.iatt.mode)) {
        if (r->status != 0 && r->status != -ENOENT && r->status != -ESTALE) {
            int status = r->status;

            vl_unwind(req, status);
            return;
        }
        dist_task_or_unwind(xl, req, is_named ? dist_lookup_all_task
                                           : dist_lookup_gfid_task);
        return;
    }
    vl_reply_move(req, r);
    vl_unwind(req, 0);
}


static void
dist_lookup_wind(vl_xlator_t *xl, vl_req_t *req, int subvol, vl_done_fn *fn)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    vl_req_t *r;

    local->subvol = subvol;
    r = vl_req_child(req, xl->children[subvol]);
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, fn, req);
}


void
dist_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    vl_inode_t *inode = a->loc.inode;
    bool is_named = a->loc.parent != NULL && a->loc.name != NULL;
    bool is_known = inode != NULL && !vl_gfid_is_null(&inode->gfid);
    bool committed = false;
    int idx;

    if (is_known && (S_ISDIR(inode->type) || vl_gfid_is_root(&inode->gfid))) {
        dist_lookup_dir(xl, req, &inode->gfid);
        return;
    }
    if (is_known) {
        idx = dist_ictx_cached(xl, inode);
        if (idx >= 0 && dist_is_up(xl, (unsigned)idx)) {
            dist_lookup_wind(xl, req, idx, dist_lookup_cached_done);
            return;
        }
    }
    if (!is_named) {
        if (inode == NULL || vl_gfid_is_null(&inode->gfid)) {
            vl_unwind(req, -EINVAL);
            return;
        }
        dist_task_or_unwind(xl, req, dist_lookup_gfid_task);
        return;
    }
    /* Last seen as a directory: every subvolume at once (a stale hint
     * costs the worker path, which finds what the name is now). */
    if (!vl_gfid_is_null(&a->dir_hint)) {
        dist_lookup_dir(xl, req, &a->dir_hint);
        return;
    }
    idx = dist_hashed_subvol(xl, a->loc.parent, a->loc.name, &committed);
    if (idx == -ESTALE) {
        dist_with_parent_layout(xl, req, a->loc.parent, dist_lookup);
        return;
    }
    if (idx < 0 || !dist_is_up(xl, (unsigned)idx)) {
        dist_task_or_unwind(xl, req, dist_lookup_all_task);
        return;
    }
    local->status2 = committed; /* read by dist_lookup_named_done */
    dist_lookup_wind(xl, req, idx, dist_lookup_named_done);
}


/* ---- slow paths (workers) ---- */

static void
dist_reply_iatt(vl_req_t *req, const struct vl_iatt *iatt)
{
    vl_reply_clear(&req->reply);
    req->reply.iatt = *iatt;
}


int
dist_find_file_sync(vl_xlator_t *xl, vl_req_t *req, const struct vl_loc *loc,
                    int *data, struct vl_iatt *iatt)
{
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = dist_calls_new(xl);
    unsigned n = dist_priv(xl)->n;
    dist_mask_t up = dist_up_mask(xl);
    int hashed = -1, rc = -ENOENT;
    bool has_down = false;

    *data = -1;
    if (args == NULL || calls == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    /* A worker may wait: the layout is fetched again when its trust has
     * run out, so that "the copy on the hashed subvolume" means one. */
    if (loc->parent != NULL && loc->name != NULL)
        hashed = dist_hashed_subvol_sync(xl, req, loc->parent, loc->name);
    for (unsigned i = 0; i < n; i++)
        args[i].lookup.loc = *loc;
    dist_fan_sync(xl, req, up, VL_FOP_LOOKUP, args, calls);
    for (unsigned i = 0; i < n; i++) {
        const struct vl_iatt *ia = &calls[i].reply.iatt;

        if (calls[i].status == -ENOTCONN || !dist_mask_test(up, i))
            has_down = true;
        if (calls[i].status != 0) {
            if (calls[i].status != -ENOENT && calls[i].status != -ENOTCONN
                && calls[i].status != -ESTALE)
                rc = calls[i].status;
            continue;
        }
        if (dist_iatt_is_linkfile(ia))
            continue;
        /* The copy on the hashed subvolume wins over a stale one. */
        if (*data < 0 || (int)i == hashed) {
            *data = (int)i;
            *iatt = *ia;
        }
    }
    if (*data >= 0)
        rc = 0;
    else if (rc == -ENOENT && has_down)
        rc = -ENOTCONN; /* it may be on the subvolume that is down */
out:
    vl_free(args);
    dist_calls_free(calls, n);
    return rc;
}


/* Quick-read on a slow path (behind a link file, or a GFID whose
 * subvolume was not known): the fan-out did not ask for content, so ask
 * the subvolume holding the data (by GFID when the inode has one: the
 * name there may be another) and keep the content only if it is the same
 * file. */
static void
dist_lookup_content_sync(vl_xlator_t *xl, vl_req_t *req, int data,
                         const struct vl_iatt *iatt)
{
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    union vl_fop_args la;
    struct dist_call call;

    if (a->content_max == 0 || data < 0 || !S_ISREG(iatt->mode)
        || iatt->size > a->content_max || a->loc.inode == NULL)
        return;
    memset(&la, 0, sizeof(la));
    la.lookup.loc.inode = a->loc.inode;
    la.lookup.content_max = a->content_max;
    if (vl_gfid_is_null(&a->loc.inode->gfid)) {
        la.lookup.loc.parent = a->loc.parent; /* not linked yet: by name */
        la.lookup.loc.name = a->loc.name;
    }
    if (dist_call_sync(xl, req, (unsigned)data, VL_FOP_LOOKUP, &la, &call)
            == 0
        && call.reply.buf != NULL
        && vl_gfid_equal(&call.reply.iatt.gfid, &iatt->gfid)) {
        vl_reply_clear(&req->reply);
        req->reply = call.reply; /* moves iatt and content */
        memset(&call.reply, 0, sizeof(call.reply));
    }
    vl_reply_clear(&call.reply);
}


/* Named lookup everywhere: after a link file or an uncommitted miss. */
static void
dist_lookup_all_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    struct vl_iatt iatt;
    int hashed, data, rc;

    rc = dist_find_file_sync(xl, req, &a->loc, &data, &iatt);
    if (rc != 0) {
        vl_unwind(req, rc);
        return;
    }
    if (S_ISDIR(iatt.mode)) {
        dist_lookup_dir_task(xl, req);
        return;
    }
    /* Not the cached layout alone: once its trust (DIST_LAYOUT_TRUST_MS)
     * has run out it answers -ESTALE, and an unknown hashed subvolume
     * would leave the file without its link file and tell pathinfo (the
     * rebalance) that the data is where the name hashes. */
    hashed = dist_hashed_subvol_sync(xl, req, a->loc.parent, a->loc.name);
    if (hashed >= 0 && hashed != data && dist_is_up(xl, (unsigned)hashed)) {
        union vl_fop_args la;
        struct dist_call call;

        /* A link file on the hashed subvolume, unless one is there. */
        memset(&la, 0, sizeof(la));
        la.lookup.loc = a->loc;
        if (dist_call_sync(xl, req, (unsigned)hashed, VL_FOP_LOOKUP, &la,
                           &call) == -ENOENT)
            dist_linkfile_create(xl, req, hashed, data, a->loc.parent,
                                 a->loc.name, &iatt.gfid);
        vl_reply_clear(&call.reply);
    }
    dist_ictx_set_file(xl, a->loc.inode, data, hashed,
                       hashed >= 0 && hashed != data);
    dist_reply_iatt(req, &iatt);
    dist_lookup_content_sync(xl, req, data, &iatt);
    vl_unwind(req, 0);
}


/* Nameless lookup of a known regular file whose subvolume is not known,
 * asking every subvolume for the content too (quick-read): one round
 * instead of the fan-out and then a call to the data subvolume. The data
 * subvolume's reply (attributes and content) becomes req's; returns 0
 * with *data set, or -errno. */
static int
dist_lookup_gfid_content(vl_xlator_t *xl, vl_req_t *req, int *data)
{
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = dist_calls_new(xl);
    unsigned n = dist_priv(xl)->n;
    dist_mask_t up = dist_up_mask(xl);
    bool has_down = false;
    int rc = -ENOENT;

    *data = -1;
    if (args == NULL || calls == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (unsigned i = 0; i < n; i++) {
        args[i].lookup.loc.inode = a->loc.inode;
        args[i].lookup.content_max = a->content_max;
    }
    dist_fan_sync(xl, req, up, VL_FOP_LOOKUP, args, calls);
    for (unsigned i = 0; i < n; i++) {
        if (calls[i].status == -ENOTCONN || !dist_mask_test(up, i))
            has_down = true;
        if (calls[i].status != 0) {
            if (calls[i].status != -ENOENT && calls[i].status != -ENOTCONN
                && calls[i].status != -ESTALE)
                rc = calls[i].status;
            continue;
        }
        if (*data < 0 && !dist_iatt_is_linkfile(&calls[i].reply.iatt)
            && S_ISREG(calls[i].reply.iatt.mode))
            *data = (int)i;
    }
    if (*data >= 0) {
        vl_reply_clear(&req->reply);
        req->reply = calls[*data].reply; /* moves attributes and content */
        memset(&calls[*data].reply, 0, sizeof(calls[*data].reply));
        rc = 0;
    } else if (rc == -ENOENT && has_down) {
        rc = -ENOTCONN; /* it may be on the subvolume that is down */
    }
out:
    vl_free(args);
    dist_calls_free(calls, n);
    return rc;
}


/* Nameless lookup (GFID only) of something that is not a known
 * directory: directories on all, files wherever they are. */
static void
dist_lookup_gfid_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    struct vl_loc loc = {.inode = a->loc.inode};
    struct vl_iatt iatt;
    int data, rc;

    if (a->content_max > 0 && S_ISREG(a->loc.inode->type)) {
        rc = dist_lookup_gfid_content(xl, req, &data);
        if (rc == 0) {
            pthread_mutex_lock(&a->loc.inode->lock);
            dist_ictx(xl, a->loc.inode)->cached = data;
            dist_ictx(xl, a->loc.inode)->has_cached = true;
            pthread_mutex_unlock(&a->loc.inode->lock);
        }
        vl_unwind(req, rc == -ENOENT ? -ESTALE : rc);
        return;
    }
    rc = dist_find_file_sync(xl, req, &loc, &data, &iatt);
    if (rc == -ENOENT)
        rc = -ESTALE;
    if (rc == 0 && S_ISDIR(iatt.mode)) {
        rc = dist_dir_sync(xl, req, &loc, false, &iatt);
    } else if (rc == 0) {
        pthread_mutex_lock(&a->loc.inode->lock);
        dist_ictx(xl, a->loc.inode)->cached = data;
        dist_ictx(xl, a->loc.inode)->has_cached = true;
        pthread_mutex_unlock(&a->loc.inode->lock);
    }
    if (rc == 0)
        dist_reply_iatt(req, &iatt);
    if (rc == 0 && !S_ISDIR(iatt.mode))
        dist_lookup_content_sync(xl, req, data, &iatt);
    vl_unwind(req, rc);
}


void
dist_lookup_dir_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    struct vl_iatt iatt;
    int rc;

    rc = dist_dir_sync(xl, req, &a->loc, false, &iatt);
    if (rc == -ENOTDIR) {
        /* Not a directory after all (replaced meanwhile): as a file. */
        dist_lookup_all_task(xl, req);
        return;
    }
    if (rc == 0)
        dist_reply_iatt(req, &iatt);
    vl_unwind(req, rc);
}


/* ---- directory heal and layouts ---- */

/* True when the directory has no entries on any of the subvolumes in
 * mask (a directory made by hand: its layout may be committed). */
static bool
dist_dir_is_empty(vl_xlator_t *xl, vl_req_t *req, const struct vl_loc *loc,
                  dist_mask_t mask)
{
    union vl_fop_args *args = NULL;
    struct dist_call *calls = NULL;
    unsigned n = dist_priv(xl)->n;
    vl_inode_t *inode = loc->inode;
    bool is_empty = true;
    vl_fd_t *fd;

    if (inode == NULL)
        return false;
    fd = vl_fd_new(inode, O_RDONLY, 0);
    if (fd == NULL)
        return false;
    args = dist_args_new(xl);
    calls = dist_calls_new(xl);
    if (args == NULL || calls == NULL) {
        is_empty = false; /* not known: not committed */
        goto out;
    }
    for (unsigned i = 0; i < n; i++) {
        args[i].opendir.loc = *loc;
        args[i].opendir.fd = fd;
    }
    if (dist_fan_sync(xl, req, mask, VL_FOP_OPENDIR, args, calls)
        != (int)dist_mask_count(mask))
        is_empty = false;
    dist_calls_clear(calls, n);
    for (unsigned i = 0; i < n && is_empty; i++) {
        memset(&args[i], 0, sizeof(args[i]));
        args[i].readdir.fd = fd;
        args[i].readdir.size = 4096;
    }
    if (is_empty) {
        dist_fan_sync(xl, req, mask, VL_FOP_READDIR, args, calls);
        for (unsigned i = 0; i < n; i++) {
            if (!dist_mask_test(mask, i))
                continue;
            if (calls[i].status != 0)
                is_empty = false;
            for (size_t k = 0; k < calls[i].reply.entries.n; k++) {
                const char *name = calls[i].reply.entries.ents[k].name;

                if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
                    is_empty = false;
            }
        }
    }
out:
    vl_free(args);
    dist_calls_free(calls, n);
    vl_fd_unref(fd);
    return is_empty;
}


/* Creates the directory where it is missing (named loc only). */
static void
dist_dir_heal_missing(vl_xlator_t *xl, vl_req_t *req,
                      const struct vl_loc *loc, const struct vl_loc *iloc,
                      const struct vl_iatt *base, dist_mask_t missing,
                      struct dist_call *lk)
{
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = dist_calls_new(xl);
    unsigned n = dist_priv(xl)->n;
    dist_mask_t made = dist_mask_none();

    if (args == NULL || calls == NULL) {
        /* The next lookup tries again. */
        vl_log(xl, VL_LOG_WARNING, "heal of directory %s: %s", loc->name,
               strerror(ENOMEM));
        goto out;
    }
    for (unsigned i = 0; i < n; i++) {
        args[i].mkdir.loc.parent = loc->parent;
        args[i].mkdir.loc.name = loc->name;
        args[i].mkdir.loc.inode = loc->inode;
        args[i].mkdir.mode = base->mode & 07777;
        args[i].mkdir.gfid = base->gfid;
    }
    dist_fan_sync(xl, req, missing, VL_FOP_MKDIR, args, calls);
    for (unsigned i = 0; i < n; i++)
        if (dist_mask_test(missing, i) && calls[i].status == 0) {
            dist_mask_set(&made, i);
            vl_reply_clear(&lk[i].reply);
            lk[i].status = 0;
            lk[i].reply.iatt = calls[i].reply.iatt;
        }
    dist_calls_clear(calls, n);
    if (dist_mask_is_empty(made))
        goto out;
    atomic_fetch_add(&dist_priv(xl)->n_heals, 1);
    memset(args, 0, n * sizeof(*args));
    for (unsigned i = 0; i < n; i++) {
        args[i].setattr.loc = *iloc;
        args[i].setattr.attr = *base;
        args[i].setattr.valid = VL_SET_UID | VL_SET_GID;
    }
    dist_fan_sync(xl, req, made, VL_FOP_SETATTR, args, calls);
    vl_log(xl, VL_LOG_INFO, "healed directory %s on %u subvolume(s)",
           loc->name, dist_mask_count(made));
out:
    vl_free(args);
    dist_calls_free(calls, n);
}


/* Reads the layout of every subvolume where the directory is into l (of
 * priv->n ranges): from its lookup's reply (the lookups ask for it), or,
 * where a reply brought none (a translator below answered the lookup
 * itself), by a getxattr. 0 or -ENOMEM. */
dist_mask_t
dist_layout_from_lookups(const struct dist_call *lk, unsigned n,
                         struct dist_layout *l)
{
    dist_mask_t without = dist_mask_none();

    for (unsigned i = 0; i < n; i++) {
        const struct vl_reply *rp = &lk[i].reply;

        l->r[i].err = lk[i].status == 0 ? 0
                      : lk[i].status == -ESTALE ? -ENOENT : lk[i].status;
        if (lk[i].status != 0 || !S_ISDIR(rp->iatt.mode))
            continue;
        if (rp->xattr_status != 0) {
            l->r[i].err = rp->xattr_status;
        } else if (rp->xattr != NULL) {
            if (dist_layout_decode(rp->xattr, rp->xattr_len, &l->r[i]) != 0)
                l->r[i].err = -EINVAL;
        } else {
            dist_mask_set(&without, i);
        }
    }
    return without;
}


static int
dist_layout_read(vl_xlator_t *xl, vl_req_t *req, const struct vl_loc *loc,
                 const struct dist_call *lk, struct dist_layout *l)
{
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = NULL;
    unsigned n = dist_priv(xl)->n;
    dist_mask_t present = dist_mask_none();
    int rc = -ENOMEM;

    if (args == NULL)
        goto out;
    present = dist_layout_from_lookups(lk, n, l);
    for (unsigned i = 0; i < n; i++) {
        if (!dist_mask_test(present, i))
            continue;
        args[i].getxattr.loc = *loc;
        args[i].getxattr.name = DIST_XATTR_LAYOUT;
        args[i].getxattr.size = 64;
    }
    rc = 0;
    if (dist_mask_is_empty(present))
        goto out;
    calls = dist_calls_new(xl);
    if (calls == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    dist_fan_sync(xl, req, present, VL_FOP_GETXATTR, args, calls);
    for (unsigned i = 0; i < n; i++) {
        if (!dist_mask_test(present, i))
            continue;
        if (calls[i].status != 0)
            l->r[i].err = calls[i].status;
        else if (dist_layout_decode(calls[i].reply.xattr,
                                    (size_t)calls[i].reply.count, &l->r[i])
                 != 0)
            l->r[i].err = -EINVAL;
    }
out:
    vl_free(args);
    dist_calls_free(calls, n);
    return rc;
}


/* Writes new ranges to the subvolumes in mask; failures mark err. */
void
dist_layout_write(vl_xlator_t *xl, vl_req_t *req, const struct vl_loc *loc,
                  struct dist_layout *l, dist_mask_t mask)
{
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = dist_calls_new(xl);
    unsigned char (*vals)[DIST_LAYOUT_SIZE];
    unsigned n = dist_priv(xl)->n;

    vals = vl_malloc(xl, n * sizeof(*vals), DIST_MT_FAN);
    if (args == NULL || calls == NULL || vals == NULL) {
        for (unsigned i = 0; i < n; i++)
            if (dist_mask_test(mask, i))
                l->r[i].err = -ENOMEM;
        goto out;
    }
    for (unsigned i = 0; i < n; i++) {
        dist_layout_encode(&l->r[i], vals[i]);
        args[i].setxattr.loc.parent = loc->parent;
        args[i].setxattr.loc.name = loc->name;
        args[i].setxattr.loc.inode = loc->inode;
        args[i].setxattr.name = DIST_XATTR_LAYOUT;
        args[i].setxattr.value = vals[i];
        args[i].setxattr.size = DIST_LAYOUT_SIZE;
    }
    dist_fan_sync(xl, req, mask, VL_FOP_SETXATTR, args, calls);
    for (unsigned i = 0; i < n; i++)
        if (dist_mask_test(mask, i))
            l->r[i].err = calls[i].status;
out:
    vl_free(vals);
    vl_free(args);
    dist_calls_free(calls, n);
}


void
dist_layout_store(vl_xlator_t *xl, const struct vl_loc *loc,
                  const vl_gfid_t *gfid, const struct dist_layout *l)
{
    vl_inode_t *targets[2] = {loc->inode, NULL};

    if (gfid != NULL && !vl_gfid_is_null(gfid))
        targets[1] = vl_inode_find(xl->graph->itable, gfid);
    if (targets[1] == targets[0]) {
        vl_inode_unref(targets[1]);
        targets[1] = NULL;
    }
    for (int k = 0; k < 2; k++) {
        struct dist_layout *copy;

        if (targets[k] == NULL)
            continue;
        copy = dist_layout_dup(xl, l);
        if (copy != NULL) /* else fetched again next time */
            dist_ictx_set_layout(xl, targets[k], copy);
    }
    vl_inode_unref(targets[1]);
}


dist_mask_t
dist_dir_merge(const struct dist_call *lk, unsigned n, dist_mask_t up,
               int base, struct vl_iatt *out)
{
    dist_mask_t missing = dist_mask_none();

    *out = lk[base].reply.iatt;
    for (unsigned i = 0; i < n; i++) {
        const struct vl_iatt *ia = &lk[i].reply.iatt;

        if (lk[i].status == 0 && S_ISDIR(ia->mode)
            && vl_gfid_equal(&ia->gfid, &out->gfid)) {
            dist_iatt_max_times(out, ia);
        } else if (dist_mask_test(up, i)
                   && (lk[i].status == -ENOENT || lk[i].status == -ESTALE)) {
            dist_mask_set(&missing, i);
        }
    }
    return missing;
}


/* Whether lookups lk of the subvolumes in up found the directory gfid on
 * every subvolume: their merge is then the directory's whole view. */
static bool
dist_dir_is_whole(const struct dist_call *lk, unsigned n, dist_mask_t up,
                  const vl_gfid_t *gfid)
{
    if (!dist_mask_equal(up, dist_mask_all(n)))
        return false;
    for (unsigned i = 0; i < n; i++)
        if (lk[i].status != 0 || !S_ISDIR(lk[i].reply.iatt.mode)
            || !vl_gfid_equal(&lk[i].reply.iatt.gfid, gfid))
            return false;
    return true;
}


void (*dist_test_before_layout_write)(vl_xlator_t *xl,
                                      const struct vl_loc *loc);


static void
dist_layout_lock_args(union vl_fop_args *a, vl_inode_t *dir,
                      enum vl_lock_cmd cmd)
{
    memset(a, 0, sizeof(*a));
    a->inodelk.domain = DIST_LAYOUT_LOCK_DOMAIN;
    a->inodelk.loc.inode = dir;
    a->inodelk.cmd = cmd;
    a->inodelk.flock.type = cmd == VL_LOCK_UNLOCK ? F_UNLCK : F_WRLCK;
    a->inodelk.flock.whence = SEEK_SET;
}


/* A failure to take the lock on child i that is worth a line: not a
 * brick without features/locks, without the copy, down, or busy. */
static void
dist_layout_lock_note(vl_xlator_t *xl, vl_inode_t *dir, unsigned i, int rc)
{
    char g[VL_GFID_STR_LEN];

    if (rc == 0 || rc == -ENOSYS || rc == -ENOENT || rc == -ESTALE
        || rc == -ENOTCONN || rc == -EAGAIN)
        return;
    vl_log(xl, VL_LOG_WARNING, "layout lock of %s on %s: %s",
           vl_gfid_to_str(&dir->gfid, g), xl->children[i]->name,
           strerror(-rc));
}


/* One parallel round of cmd on the subvolumes in mask, answers in calls;
 * false if it could not be made (ENOMEM). */
static bool
dist_layout_lock_round(vl_xlator_t *xl, vl_req_t *req,
                       struct dist_layout_lock *lk, dist_mask_t mask,
                       enum vl_lock_cmd cmd, struct dist_call *calls)
{
    union vl_fop_args *args = dist_args_new(xl);

    if (args == NULL)
        return false;
    for (unsigned i = 0; i < dist_priv(xl)->n; i++)
        dist_layout_lock_args(&args[i], lk->dir, cmd);
    dist_fan_sync_owner(xl, req, mask, VL_FOP_INODELK, args,
                        (uint64_t)(uintptr_t)lk, calls);
    vl_free(args);
    return true;
}


/* cmd on child i alone; its status. */
static int
dist_layout_lock_one(vl_xlator_t *xl, vl_req_t *req, unsigned i,
                     struct dist_layout_lock *lk, enum vl_lock_cmd cmd)
{
    union vl_fop_args a;
    struct dist_call call;
    int rc;

    dist_layout_lock_args(&a, lk->dir, cmd);
    rc = dist_call_sync_owner(xl, req, i, VL_FOP_INODELK, &a,
                              (uint64_t)(uintptr_t)lk, &call);
    vl_reply_clear(&call.reply);
    return rc;
}


/* Releases what lk holds: one round (one by one without memory). */
static void
dist_layout_lock_drop(vl_xlator_t *xl, vl_req_t *req,
                      struct dist_layout_lock *lk)
{
    unsigned n = dist_priv(xl)->n;
    struct dist_call *calls;

    if (dist_mask_is_empty(lk->held))
        return;
    calls = dist_calls_new(xl);
    if (calls == NULL
        || !dist_layout_lock_round(xl, req, lk, lk->held, VL_LOCK_UNLOCK,
                                   calls))
        for (unsigned i = 0; i < n; i++)
            if (dist_mask_test(lk->held, i))
                (void)dist_layout_lock_one(xl, req, i, lk, VL_LOCK_UNLOCK);
    dist_calls_free(calls, n);
    lk->held = dist_mask_none();
}


void
dist_layout_lock(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *dir,
                 struct dist_layout_lock *lk)
{
    dist_mask_t up = dist_up_mask(xl);
    unsigned n = dist_priv(xl)->n;
    struct dist_call *calls = dist_calls_new(xl);
    bool is_contended = false;

    lk->held = dist_mask_none();
    lk->dir = vl_inode_ref(dir);
    /* Nobody else writing this layout (the common case): one round of
     * tries, which never wait, so no order is needed. */
    if (calls != NULL
        && dist_layout_lock_round(xl, req, lk, up, VL_LOCK_TRY, calls)) {
        for (unsigned i = 0; i < n; i++) {
            if (!dist_mask_test(up, i))
                continue;
            if (calls[i].status == 0)
                dist_mask_set(&lk->held, i);
            is_contended = is_contended || calls[i].status == -EAGAIN;
            dist_layout_lock_note(xl, dir, i, calls[i].status);
        }
        if (!is_contended)
            goto out;
        /* Held elsewhere: let go, then queue in index order, so that two
         * contenders never hold parts of it crosswise. */
        dist_layout_lock_drop(xl, req, lk);
    }
    for (unsigned i = 0; i < n; i++) {
        int rc;

        if (!dist_mask_test(up, i))
            continue;
        rc = dist_layout_lock_one(xl, req, i, lk, VL_LOCK_WAIT);
        if (rc == 0)
            dist_mask_set(&lk->held, i);
        dist_layout_lock_note(xl, dir, i, rc);
    }
out:
    dist_calls_free(calls, n);
}


void
dist_layout_unlock(vl_xlator_t *xl, vl_req_t *req,
                   struct dist_layout_lock *lk)
{
    if (lk->dir == NULL)
        return;
    dist_layout_lock_drop(xl, req, lk);
    vl_inode_unref(lk->dir);
    lk->dir = NULL;
}


/* One read of a directory's copies and layout, healing missing copies
 * and, unless want_lock (then *needs_write says a write is due and
 * nothing was written), writing a repaired or refitted layout. */
static int
dist_dir_sync_pass(vl_xlator_t *xl, vl_req_t *req, const struct vl_loc *loc,
                   bool fix, bool want_lock, union vl_fop_args *args,
                   struct dist_call *lk, struct dist_layout *l,
                   struct vl_iatt *out, vl_inode_t **dir /* OUT, ref */,
                   bool *needs_write /* OUT */)
{
    struct dist_priv *priv = dist_priv(xl);
    struct dist_anomalies an;
    struct vl_loc iloc = {.inode = NULL};
    vl_inode_t *tmp = NULL;
    unsigned n = priv->n;
    dist_mask_t up = dist_up_mask(xl);
    dist_mask_t missing = dist_mask_none();
    int base = -1, hashed = -1, rc = -ENOENT;
    bool is_named = loc->parent != NULL && loc->name != NULL;

    *needs_write = false;
    if (is_named)
        hashed = dist_hashed_subvol(xl, loc->parent, loc->name, NULL);
    for (unsigned i = 0; i < n; i++) {
        args[i].lookup.loc = *loc;
        /* The layout comes with the lookup: one round, one request per
         * subvolume. */
        args[i].lookup.xattr_name = DIST_XATTR_LAYOUT;
    }
    dist_fan_sync(xl, req, up, VL_FOP_LOOKUP, args, lk);
    for (unsigned i = 0; i < n; i++) {
        if (lk[i].status == 0 && S_ISDIR(lk[i].reply.iatt.mode)) {
            if (base < 0 || (int)i == hashed)
                base = (int)i;
        } else if (lk[i].status == 0) {
            rc = -ENOTDIR;
        } else if (lk[i].status != -ENOENT && lk[i].status != -ESTALE
                   && lk[i].status != -ENOTCONN && rc == -ENOENT) {
            rc = lk[i].status;
        }
    }
    if (base < 0) {
        if (rc == -ENOENT && !dist_mask_equal(up, dist_mask_all(n)))
            rc = -ENOTCONN;
        if (rc == -ENOENT && !is_named)
            rc = -ESTALE;
        return rc;
    }
    missing = dist_dir_merge(lk, n, up, base, out);
    dist_dir_times_settle_loc(xl, loc, out,
                              dist_dir_is_whole(lk, n, up, &out->gfid));
    /* Inode fops below name the directory by GFID (as the wire does). */
    tmp = dist_inode_for_gfid(xl, &out->gfid, S_IFDIR);
    if (tmp == NULL)
        return -ENOMEM;
    iloc.inode = tmp;
    if (!dist_mask_is_empty(missing) && is_named)
        dist_dir_heal_missing(xl, req, loc, &iloc, out, missing, lk);

    rc = dist_layout_read(xl, req, &iloc, lk, l);
    if (rc != 0)
        goto out;
    for (unsigned i = 0; i < n; i++)
        if (!dist_mask_test(up, i))
            l->r[i].err = -ENOTCONN;
    if (fix || dist_layout_check(l, &an)) {
        dist_mask_t write_mask = dist_mask_none();
        uint32_t gen = dist_layout_max_generation(l) + 1;

        if (want_lock) {
            *needs_write = true;
            goto out;
        }
        for (unsigned i = 0; i < n; i++)
            if (l->r[i].err == 0 || l->r[i].err == -ENODATA
                || l->r[i].err == -EINVAL)
                dist_mask_set(&write_mask, i);
        if (!fix && an.n_holes == 0 && an.n_overlaps == 0) {
            /* Only missing copies (a new brick): no range for them. */
            uint32_t flags = dist_layout_is_committed(l)
                             ? DIST_FLAG_COMMITTED : 0;

            write_mask = dist_mask_and(write_mask, an.missing);
            for (unsigned i = 0; i < n; i++)
                if (dist_mask_test(an.missing, i)) {
                    memset(&l->r[i], 0, sizeof(l->r[i]));
                    l->r[i].generation = gen - 1;
                    l->r[i].flags = flags;
                }
        } else {
            uint32_t flags = 0;

            /* Nothing anywhere and nothing inside: a fresh directory
             * made outside distribute; safe to commit. */
            if (!fix && an.n_missing == n
                && dist_dir_is_empty(xl, req, &iloc, write_mask))
                flags = DIST_FLAG_COMMITTED;
            /* Keeping each subvolume as much of its old range as it can
             * is what makes a rebalance after add-brick move the fewest
             * files. */
            dist_layout_refit(xl, l, priv->decommissioned, gen, flags);
            for (unsigned i = 0; i < n; i++)
                if (!dist_mask_test(write_mask, i))
                    l->r[i].err = dist_mask_test(up, i) ? -ENOENT
                                                        : -ENOTCONN;
        }
        if (dist_test_before_layout_write != NULL)
            dist_test_before_layout_write(xl, loc);
        dist_layout_write(xl, req, &iloc, l, write_mask);
        atomic_fetch_add(&priv->n_heals, 1);
        vl_log(xl, VL_LOG_INFO, "layout of %s %s (generation %u)",
               loc->name != NULL ? loc->name : "(gfid)",
               fix ? "fixed" : "repaired", gen);
    }
    dist_layout_store(xl, loc, &out->gfid, l);
out:
    if (rc == 0 && dir != NULL)
        *dir = vl_inode_ref(tmp);
    vl_inode_unref(tmp);
    return rc;
}


int
dist_dir_sync(vl_xlator_t *xl, vl_req_t *req, const struct vl_loc *loc,
              bool fix, struct vl_iatt *out)
{
    struct dist_priv *priv = dist_priv(xl);
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *lk = dist_calls_new(xl);
    struct dist_layout *l = dist_layout_new(xl, priv->n);
    struct dist_layout_lock llk = {.dir = NULL};
    vl_inode_t *dir = NULL;
    bool needs_write = false;
    int rc;

    if (args == NULL || lk == NULL || l == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    /* Most syncs only read: the lock is taken once a write is due, and
     * the layout read again under it (another client may have written
     * it meanwhile: the write then refits what it wrote). */
    rc = dist_dir_sync_pass(xl, req, loc, fix, true, args, lk, l, out, &dir,
                            &needs_write);
    if (rc == 0 && needs_write) {
        dist_layout_lock(xl, req, dir, &llk);
        dist_calls_clear(lk, priv->n);
        memset(lk, 0, priv->n * sizeof(*lk));
        memset(l->r, 0, priv->n * sizeof(l->r[0]));
        memset(args, 0, priv->n * sizeof(*args));
        rc = dist_dir_sync_pass(xl, req, loc, fix, false, args, lk, l, out,
                                NULL, &needs_write);
        dist_layout_unlock(xl, req, &llk);
    }
out:
    vl_inode_unref(dir);
    vl_free(l);
    vl_free(args);
    dist_calls_free(lk, priv->n);
    return rc;
}
