/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cluster/distribute: one namespace over N subvolumes. A name lives on
 * the subvolume whose layout range (of its parent directory) holds the
 * name's hash; directories exist on every subvolume. See
 * doc/distribute.md for formats and algorithms.
 *
 * This file: class, options, init/fini/notify (CHILD_UP once one child is
 * up and every child answered or its first-connect grace expired;
 * CHILD_DOWN when all are down; readiness when distribute is the top of
 * its graph), statfs (sum over up subvolumes, also the free-space cache
 * of min-free-disk), dump, inode ctx helpers. Routing of inode and fd
 * fops with the EREMCHG reroute is in dist-route.c.
 *
 * Intercepts: every fop (entry fops in dist-entry.c / dist-rename.c,
 *             lookup in dist-lookup.c, directories in dist-readdir.c,
 *             xattrs in dist-xattr.c).
 * Per inode:  struct dist_inode_ctx (layout of a directory; cached and
 *             hashed subvolume of a file), inode->lock.
 * Per fd:     struct dist_fd_ctx (subvolume and flags of an open file).
 * Per req:    struct dist_local.
 * Threads:    fast paths run on the caller's thread and answer from the
 *             child's callback; slow paths on dist-worker.c threads.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "builtin.h"
#include "dist.h"



/* ---- small helpers ---- */

uint64_t
dist_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}


int
dist_subvol_index(vl_xlator_t *xl, vl_xlator_t *child)
{
    for (size_t i = 0; i < xl->n_children; i++)
        if (xl->children[i] == child)
            return (int)i;
    return -1;
}


int
dist_subvol_below(vl_xlator_t *xl, vl_xlator_t *x)
{
    /* Below distribute the graph is a tree: one parent each. */
    for (int depth = 0; x != NULL && depth < 64; depth++) {
        int i = dist_subvol_index(xl, x);

        if (i >= 0)
            return i;
        x = x->n_parents == 1 ? x->parents[0] : NULL;
    }
    return -1;
}


int
dist_subvol_by_name(vl_xlator_t *xl, const char *name, size_t len)
{
    while (len > 0 && name[len - 1] == '\0')
        len--;
    for (size_t i = 0; i < xl->n_children; i++)
        if (strlen(xl->children[i]->name) == len
            && memcmp(xl->children[i]->name, name, len) == 0)
            return (int)i;
    return -1;
}


bool
dist_is_up(vl_xlator_t *xl, unsigned i)
{
    struct dist_priv *priv = dist_priv(xl);
    bool up;

    pthread_mutex_lock(&priv->lock);
    up = priv->is_up[i] || priv->is_local[i];
    pthread_mutex_unlock(&priv->lock);
    return up;
}


dist_mask_t
dist_up_mask(vl_xlator_t *xl)
{
    struct dist_priv *priv = dist_priv(xl);
    dist_mask_t mask = dist_mask_none();

    pthread_mutex_lock(&priv->lock);
    for (unsigned i = 0; i < priv->n; i++)
        if (priv->is_up[i] || priv->is_local[i])
            dist_mask_set(&mask, i);
    pthread_mutex_unlock(&priv->lock);
    return mask;
}


bool
dist_iatt_is_linkfile(const struct vl_iatt *iatt)
{
    uint32_t perm = iatt->mode & 07777;

    return S_ISREG(iatt->mode)
           && (perm == S_ISVTX || perm == (S_ISVTX | S_ISGID));
}


vl_inode_t *
dist_inode_for_gfid(vl_xlator_t *xl, const vl_gfid_t *gfid, uint32_t type)
{
    vl_inode_t *inode = vl_inode_find(xl->graph->itable, gfid);

    if (inode != NULL)
        return inode;
    inode = vl_inode_new(xl->graph->itable);
    if (inode == NULL)
        return NULL;
    /* Never linked (not in the table's hash), so nobody else finds it;
     * the GFID only names the object to the children. */
    inode->gfid = *gfid;
    inode->type = type;
    return inode;
}


struct dist_inode_ctx *
dist_ictx(vl_xlator_t *xl, vl_inode_t *inode)
{
    return vl_inode_ctx(inode, xl);
}


void
dist_ictx_set_layout(vl_xlator_t *xl, vl_inode_t *inode,
                     struct dist_layout *layout)
{
    struct dist_inode_ctx *ctx = dist_ictx(xl, inode);
    struct dist_layout *old;

    pthread_mutex_lock(&inode->lock);
    old = ctx->layout;
    ctx->layout = layout;
    ctx->layout_ms = dist_now_ms();
    pthread_mutex_unlock(&inode->lock);
    vl_free(old);
}


int
dist_ictx_layout_copy(vl_xlator_t *xl, vl_inode_t *inode,
                      struct dist_layout **out)
{
    struct dist_inode_ctx *ctx = dist_ictx(xl, inode);
    int rc = -ENODATA;

    *out = NULL;
    pthread_mutex_lock(&inode->lock);
    if (ctx->layout != NULL) {
        *out = dist_layout_dup(xl, ctx->layout);
        rc = *out != NULL ? 0 : -ENOMEM;
    }
    pthread_mutex_unlock(&inode->lock);
    return rc;
}


/* ---- directory times ---- */

/* a later than b (seconds, then nanoseconds). */
static bool
dist_time_after(int64_t a, uint32_t a_ns, int64_t b, uint32_t b_ns)
{
    return a > b || (a == b && a_ns > b_ns);
}


void
dist_iatt_max_times(struct vl_iatt *to, const struct vl_iatt *from)
{
    if (dist_time_after(from->atime, from->atime_ns, to->atime,
                        to->atime_ns)) {
        to->atime = from->atime;
        to->atime_ns = from->atime_ns;
    }
    if (dist_time_after(from->mtime, from->mtime_ns, to->mtime,
                        to->mtime_ns)) {
        to->mtime = from->mtime;
        to->mtime_ns = from->mtime_ns;
    }
    if (dist_time_after(from->ctime, from->ctime_ns, to->ctime,
                        to->ctime_ns)) {
        to->ctime = from->ctime;
        to->ctime_ns = from->ctime_ns;
    }
}


void
dist_dir_times_settle(vl_xlator_t *xl, vl_inode_t *inode,
                      struct vl_iatt *iatt, bool is_whole)
{
    struct dist_dir_times *t;
    struct vl_iatt last;

    if (inode == NULL || !S_ISDIR(iatt->mode))
        return;
    t = &dist_ictx(xl, inode)->times;
    pthread_mutex_lock(&inode->lock);
    if (t->is_known) {
        last.atime = t->atime;
        last.atime_ns = t->atime_ns;
        last.mtime = t->mtime;
        last.mtime_ns = t->mtime_ns;
        last.ctime = t->ctime;
        last.ctime_ns = t->ctime_ns;
        /* Every brick's ctime only grows: a whole view whose ctime is
         * below the last answer's is an answer overtaken by a newer one,
         * not a change. A whole view at or past it is the truth, a
         * utimes to the past included. */
        if (!is_whole || dist_time_after(last.ctime, last.ctime_ns,
                                         iatt->ctime, iatt->ctime_ns))
            dist_iatt_max_times(iatt, &last);
    }
    t->atime = iatt->atime;
    t->atime_ns = iatt->atime_ns;
    t->mtime = iatt->mtime;
    t->mtime_ns = iatt->mtime_ns;
    t->ctime = iatt->ctime;
    t->ctime_ns = iatt->ctime_ns;
    t->is_known = true;
    pthread_mutex_unlock(&inode->lock);
}


void
dist_dir_times_settle_loc(vl_xlator_t *xl, const struct vl_loc *loc,
                          struct vl_iatt *iatt, bool is_whole)
{
    vl_inode_t *linked = NULL;

    /* A named lookup may come with a fresh inode that is linked only
     * once it answers: the times go to the one already in the table
     * too, which later fops (stat, readdirplus) use. */
    if (!vl_gfid_is_null(&iatt->gfid))
        linked = vl_inode_find(xl->graph->itable, &iatt->gfid);
    if (linked != loc->inode)
        dist_dir_times_settle(xl, linked, iatt, is_whole);
    dist_dir_times_settle(xl, loc->inode, iatt, is_whole);
    vl_inode_unref(linked);
}


void
dist_entry_unwind(vl_req_t *req, int status)
{
    struct vl_reply *rp = &req->reply;
    vl_inode_t *parent = NULL;  /* of postparent */
    vl_inode_t *parent2 = NULL; /* of postparent2 (rename's new name) */

    switch (req->op) {
    case VL_FOP_CREATE:
        parent = VL_ARGS(req, create)->loc.parent;
        break;
    case VL_FOP_MKNOD:
        parent = VL_ARGS(req, mknod)->loc.parent;
        break;
    case VL_FOP_MKDIR:
        parent = VL_ARGS(req, mkdir)->loc.parent;
        break;
    case VL_FOP_SYMLINK:
        parent = VL_ARGS(req, symlink)->loc.parent;
        break;
    case VL_FOP_LINK:
        parent = VL_ARGS(req, link)->newloc.parent;
        break;
    case VL_FOP_UNLINK:
        parent = VL_ARGS(req, unlink)->loc.parent;
        break;
    case VL_FOP_RMDIR:
        parent = VL_ARGS(req, rmdir)->loc.parent;
        break;
    case VL_FOP_RENAME:
        parent = VL_ARGS(req, rename)->oldloc.parent;
        parent2 = VL_ARGS(req, rename)->newloc.parent;
        break;
    default:
        break;
    }
    /* The copy's times are the brick's clock (and its atime may be older
     * than another copy's): partial, raised to what was answered. */
    if (status == 0 && rp->has_postparent)
        dist_dir_times_settle(req->xl, parent, &rp->postparent, false);
    if (status == 0 && rp->has_postparent2)
        dist_dir_times_settle(req->xl, parent2, &rp->postparent2, false);
    vl_unwind(req, status);
}


/* dist_hashed_subvol with a layout no older than max_age_ms. */
static int
dist_hashed_subvol_aged(vl_xlator_t *xl, vl_inode_t *parent,
                        const char *name, bool *committed,
                        uint64_t max_age_ms)
{
    struct dist_inode_ctx *ctx = dist_ictx(xl, parent);
    int idx = -ESTALE;

    size_t len = strlen(name), off;
    size_t key_len = dist_hash_key(name, len, &off);
    uint32_t hash = dist_hash_name(name + off, key_len);

    pthread_mutex_lock(&parent->lock);
    if (ctx->layout != NULL
        && dist_now_ms() - ctx->layout_ms <= max_age_ms) {
        idx = dist_layout_search_hash(ctx->layout, hash);
        if (idx < 0)
            idx = -EDOM;
        else if (committed != NULL)
            *committed = (ctx->layout->r[idx].flags & DIST_FLAG_COMMITTED)
                             != 0
                         && key_len == len; /* see dist.h: rekeyed names */
    }
    pthread_mutex_unlock(&parent->lock);
    return idx;
}


int
dist_hashed_subvol(vl_xlator_t *xl, vl_inode_t *parent, const char *name,
                   bool *committed)
{
    /* An old layout may predate a fix-layout or a rebalance: a miss on a
     * COMMITTED range would be trusted wrongly, a create misplaced. */
    return dist_hashed_subvol_aged(xl, parent, name, committed,
                                   DIST_LAYOUT_TRUST_MS);
}


int
dist_hashed_subvol_sync(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *parent,
                        const char *name)
{
    struct vl_loc loc = {.inode = parent};
    struct vl_iatt iatt;
    int idx;

    if (parent == NULL)
        return -ESTALE;
    idx = dist_hashed_subvol(xl, parent, name, NULL);
    if (idx != -ESTALE)
        return idx;
    atomic_fetch_add(&dist_priv(xl)->n_layout_rereads, 1);
    if (dist_dir_sync(xl, req, &loc, false, &iatt) != 0)
        return -ESTALE;
    /* Just read from the bricks: whatever its age by now. */
    return dist_hashed_subvol_aged(xl, parent, name, NULL, UINT64_MAX);
}


void
dist_ictx_set_file(vl_xlator_t *xl, vl_inode_t *inode, int cached,
                   int hashed, bool has_linkfile)
{
    struct dist_inode_ctx *ctx;

    if (inode == NULL)
        return;
    ctx = dist_ictx(xl, inode);
    pthread_mutex_lock(&inode->lock);
    ctx->cached = cached;
    ctx->hashed = hashed;
    ctx->has_cached = cached >= 0;
    ctx->has_linkfile = has_linkfile;
    pthread_mutex_unlock(&inode->lock);
}


int
dist_ictx_cached(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct dist_inode_ctx *ctx;
    int idx = -1;

    if (inode == NULL)
        return -1;
    ctx = dist_ictx(xl, inode);
    pthread_mutex_lock(&inode->lock);
    if (ctx->has_cached)
        idx = ctx->cached;
    pthread_mutex_unlock(&inode->lock);
    return idx;
}


bool
dist_inode_is_dir(vl_inode_t *inode)
{
    return inode != NULL
           && (S_ISDIR(inode->type) || vl_gfid_is_root(&inode->gfid));
}


int
dist_first_up(vl_xlator_t *xl)
{
    return dist_mask_first(dist_up_mask(xl));
}


bool
dist_is_decommissioned(vl_xlator_t *xl, unsigned i)
{
    const struct dist_priv *priv = xl->priv;

    /* Callers outside the graph (the rebalance daemon) pass their top
     * translator, which is distribute only in a distributed volume. */
    if (xl->cls != &xl_cluster_distribute)
        return false;
    return priv != NULL && i < priv->n
           && dist_mask_test(priv->decommissioned, i);
}


/* ---- free space (min-free-disk) and statfs ---- */

/* Short of inodes: fewer free than min-free-inodes of all (file systems
 * that report no inode count, f_files 0, never are). */
static bool
dist_is_short_of_inodes_locked(struct dist_priv *priv, unsigned i)
{
    double pct = VL_CONF(priv->xl, struct dist_conf)->min_free_inodes;

    if (!priv->has_space[i] || pct <= 0 || priv->itotal[i] == 0)
        return false;
    return pct >= 100.0
           || (double)priv->ifree[i] < (double)priv->itotal[i] * pct / 100.0;
}


static bool
dist_is_short_locked(struct dist_priv *priv, unsigned i)
{
    uint64_t need = priv->min_free_bytes;

    if (!priv->has_space[i])
        return false;
    if (dist_is_short_of_inodes_locked(priv, i))
        return true;
    if (priv->min_free_pct > 0)
        need = (uint64_t)((double)priv->total[i] * priv->min_free_pct
                          / 100.0);
    return priv->avail[i] < need
           || (priv->min_free_pct >= 100.0 && priv->total[i] > 0);
}


static void
dist_statfs_store(vl_xlator_t *xl, const struct dist_call *calls)
{
    struct dist_priv *priv = dist_priv(xl);

    pthread_mutex_lock(&priv->lock);
    for (unsigned i = 0; i < priv->n; i++) {
        const struct statvfs *sv = &calls[i].reply.statvfs;
        uint64_t frsize = sv->f_frsize ? sv->f_frsize : sv->f_bsize;

        if (calls[i].status != 0)
            continue;
        priv->avail[i] = (uint64_t)sv->f_bavail * frsize;
        priv->total[i] = (uint64_t)sv->f_blocks * frsize;
        priv->ifree[i] = (uint64_t)sv->f_favail;
        priv->itotal[i] = (uint64_t)sv->f_files;
        priv->has_space[i] = true;
    }
    priv->statfs_ms = dist_now_ms();
    pthread_mutex_unlock(&priv->lock);
}


/* Asks every up subvolume (into calls) and refreshes the free-space
 * cache; how many answered, or -ENOMEM. */
static int
dist_statfs_fan(vl_xlator_t *xl, vl_req_t *req, struct dist_call *calls)
{
    union vl_fop_args *args = dist_args_new(xl);
    vl_inode_t *root;
    int n_ok;

    if (args == NULL)
        return -ENOMEM;
    root = vl_inode_table_root(xl->graph->itable);
    for (unsigned i = 0; i < dist_priv(xl)->n; i++) {
        if (req != NULL)
            args[i].statfs = req->args.statfs;
        else
            args[i].statfs.loc.inode = root;
    }
    n_ok = dist_fan_sync(xl, req, dist_up_mask(xl), VL_FOP_STATFS, args,
                         calls);
    dist_statfs_store(xl, calls);
    vl_inode_unref(root);
    vl_free(args);
    return n_ok;
}


static void
dist_statfs_bg_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_priv *priv = dist_priv(xl);
    struct dist_call *calls = dist_calls_new(xl);

    (void)req;
    if (calls != NULL) /* else the cache stays as it is, for now */
        dist_statfs_fan(xl, NULL, calls);
    dist_calls_free(calls, priv->n);
    pthread_mutex_lock(&priv->lock);
    priv->is_statfs_busy = false;
    pthread_mutex_unlock(&priv->lock);
}


int
dist_pick_data_subvol(vl_xlator_t *xl, int hashed)
{
    struct dist_priv *priv = dist_priv(xl);
    bool refresh = false;
    int best = hashed;

    pthread_mutex_lock(&priv->lock);
    if (!priv->is_statfs_busy
        && priv->min_free_pct + priv->min_free_bytes
                   + VL_CONF(xl, struct dist_conf)->min_free_inodes
               > 0
        && dist_now_ms() - priv->statfs_ms > DIST_STATFS_MAX_AGE_MS) {
        priv->is_statfs_busy = true;
        refresh = true;
    }
    if (dist_is_short_locked(priv, (unsigned)hashed)
        || dist_mask_test(priv->decommissioned, (unsigned)hashed)) {
        uint64_t most = 0;
        bool is_cand_short = true;
        int cand = -1;

        /* The most free space among the subvolumes short of nothing;
         * when every one is short of something, the most free space. */
        for (unsigned i = 0; i < priv->n; i++) {
            bool is_short;

            if (!(priv->is_up[i] || priv->is_local[i])
                || dist_mask_test(priv->decommissioned, i)
                || !priv->has_space[i])
                continue;
            is_short = dist_is_short_locked(priv, i);
            if (cand < 0 || (is_cand_short && !is_short)
                || (is_short == is_cand_short && priv->avail[i] > most)) {
                cand = (int)i;
                most = priv->avail[i];
                is_cand_short = is_short;
            }
        }
        if (cand >= 0)
            best = cand;
    }
    pthread_mutex_unlock(&priv->lock);
    if (refresh && dist_task_run(xl, NULL, dist_statfs_bg_task) != 0) {
        pthread_mutex_lock(&priv->lock);
        priv->is_statfs_busy = false;
        pthread_mutex_unlock(&priv->lock);
    }
    return best;
}


/* Sums the up subvolumes in units of the first one's fragment size. */
static void
dist_statfs_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_call *calls = dist_calls_new(xl);
    struct statvfs *out = &req->reply.statvfs;
    unsigned n = dist_priv(xl)->n;
    uint64_t unit = 0, blocks = 0, bfree = 0, bavail = 0;
    uint64_t files = 0, ffree = 0;
    int rc = -ENOTCONN;

    if (calls == NULL || dist_statfs_fan(xl, req, calls) < 0) {
        dist_calls_free(calls, n);
        vl_unwind(req, -ENOMEM);
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        const struct statvfs *sv = &calls[i].reply.statvfs;
        uint64_t fr = sv->f_frsize ? sv->f_frsize : sv->f_bsize;

        if (calls[i].status != 0) {
            if (rc != 0 && calls[i].status != -ENOTCONN)
                rc = calls[i].status;
            continue;
        }
        if (unit == 0) {
            unit = fr ? fr : 4096;
            *out = *sv;
            rc = 0;
        }
        blocks += (uint64_t)sv->f_blocks * fr / unit;
        bfree += (uint64_t)sv->f_bfree * fr / unit;
        bavail += (uint64_t)sv->f_bavail * fr / unit;
        files += sv->f_files;
        ffree += sv->f_ffree;
    }
    if (rc == 0) {
        out->f_blocks = blocks;
        out->f_bfree = bfree;
        out->f_bavail = bavail;
        out->f_files = files;
        out->f_ffree = ffree;
        out->f_favail = ffree;
    }
    dist_calls_free(calls, n);
    vl_unwind(req, rc);
}


static void
dist_statfs(vl_xlator_t *xl, vl_req_t *req)
{
    int rc = dist_task_run(xl, req, dist_statfs_task);

    if (rc != 0)
        vl_unwind(req, rc);
}


/* ---- lifecycle ---- */

static bool
dist_subtree_is_local(vl_xlator_t *xl)
{
    if (strcmp(xl->cls->type, "protocol/client") == 0)
        return false;
    for (size_t i = 0; i < xl->n_children; i++)
        if (!dist_subtree_is_local(xl->children[i]))
            return false;
    return true;
}


static int
dist_parse_min_free(const char *s, double *pct, uint64_t *bytes)
{
    size_t len = s != NULL ? strlen(s) : 0;
    char *end = NULL;

    *pct = 0;
    *bytes = 0;
    if (len == 0)
        return 0;
    if (s[len - 1] == '%') {
        double v = strtod(s, &end);

        if (end != s + len - 1 || v < 0 || v > 100)
            return -EINVAL;
        *pct = v;
        return 0;
    }
    return vl_parse_size(s, bytes);
}


static int
dist_cross_check(const void *conf_v, vl_err_t *err)
{
    const struct dist_conf *conf = conf_v;
    double pct;
    uint64_t bytes;

    if (dist_parse_min_free(conf->min_free_disk, &pct, &bytes) != 0) {
        vl_err_set(err, "min-free-disk '%s': want a percent (10%%) or a "
                   "size (5GB)", conf->min_free_disk);
        return -EINVAL;
    }
    return 0;
}


static int
dist_parse_decommissioned(vl_xlator_t *xl, const char *list,
                          dist_mask_t *mask /* OUT */, vl_err_t *err)
{
    const char *p = list;

    *mask = dist_mask_none();
    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        int idx;

        while (len > 0 && *p == ' ') {
            p++;
            len--;
        }
        while (len > 0 && p[len - 1] == ' ')
            len--;
        if (len > 0) {
            idx = dist_subvol_by_name(xl, p, len);
            if (idx < 0) {
                vl_err_set(err, "decommissioned-bricks: '%.*s' is not a "
                           "subvolume", (int)len, p);
                return -EINVAL;
            }
            dist_mask_set(mask, (unsigned)idx);
        }
        p = end != NULL ? end + 1 : NULL;
    }
    return 0;
}


static int
dist_init(vl_xlator_t *xl, vl_err_t *err)
{
    const struct dist_conf *conf = VL_CONF(xl, struct dist_conf);
    struct dist_priv *priv;
    int rc;

    /* The limit comes from the readdir cookie's 8-bit index (dist.h). */
    if (xl->n_children == 0 || xl->n_children > DIST_MAX_SUBVOLS) {
        vl_err_set(err, "distribute takes 1 to %d subvolumes, not %zu",
                   DIST_MAX_SUBVOLS, xl->n_children);
        return -EINVAL;
    }
    priv = vl_calloc(xl, 1, sizeof(*priv), DIST_MT_PRIV);
    if (priv == NULL)
        return -ENOMEM;
    priv->xl = xl;
    priv->n = (unsigned)xl->n_children;
    pthread_mutex_init(&priv->lock, NULL);
    xl->priv = priv;
    rc = dist_parse_min_free(conf->min_free_disk, &priv->min_free_pct,
                             &priv->min_free_bytes);
    if (rc == 0)
        rc = dist_parse_decommissioned(xl, conf->decommissioned,
                                       &priv->decommissioned, err);
    if (rc == 0
        && dist_mask_equal(priv->decommissioned, dist_mask_all(priv->n))) {
        vl_err_set(err, "decommissioned-bricks: every subvolume is listed");
        rc = -EINVAL;
    }
    if (rc == 0)
        rc = dist_workers_new(xl);
    if (rc != 0) {
        pthread_mutex_destroy(&priv->lock);
        vl_free(priv);
        xl->priv = NULL;
        return rc;
    }
    for (unsigned i = 0; i < priv->n; i++)
        priv->is_local[i] = dist_subtree_is_local(xl->children[i]);
    return 0;
}


static void
dist_fini(vl_xlator_t *xl)
{
    struct dist_priv *priv = dist_priv(xl);

    if (priv == NULL)
        return;
    dist_workers_free(xl);
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
    xl->priv = NULL;
}


static void
dist_forget(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct dist_inode_ctx *ctx = dist_ictx(xl, inode);

    vl_free(ctx->layout);
    ctx->layout = NULL;
}


/* Does distribute tell the graph it is ready? As the top of its graph
 * (the rebalance process), and also below a chain of one-child
 * translators without a mount translator (client-side performance
 * translators in the volfile a rebalance process fetches): nothing
 * above would report it. Under mount/fuse, fuse does. */
static bool
dist_reports_ready(const vl_xlator_t *xl)
{
    const vl_xlator_t *t = xl->graph->top;

    while (t != NULL && t != xl) {
        if (t->n_children != 1 || strncmp(t->cls->type, "mount/", 6) == 0)
            return false;
        t = t->children[0];
    }
    return t == xl;
}


/* Sends CHILD_UP/CHILD_DOWN upward and readiness when at the top. */
static void
dist_up_check(vl_xlator_t *xl)
{
    struct dist_priv *priv = dist_priv(xl);
    bool send_up = false, send_down = false, ready = false;
    unsigned n_up = 0;

    pthread_mutex_lock(&priv->lock);
    for (unsigned i = 0; i < priv->n; i++)
        if (priv->is_up[i] || priv->is_local[i])
            n_up++;
    if (!priv->is_up_sent && n_up > 0
        && (n_up == priv->n || priv->is_grace_over)) {
        priv->is_up_sent = true;
        send_up = true;
    } else if (priv->is_up_sent && n_up == 0) {
        priv->is_up_sent = false;
        send_down = true;
    }
    if (dist_reports_ready(xl) && !priv->is_ready_set && n_up == priv->n) {
        priv->is_ready_set = true;
        ready = true;
    }
    pthread_mutex_unlock(&priv->lock);
    if (send_up)
        vl_notify_parents(xl, VL_EV_CHILD_UP);
    if (send_down)
        vl_notify_parents(xl, VL_EV_CHILD_DOWN);
    if (ready)
        vl_graph_set_ready(xl->graph, 0, "every subvolume is up");
}


static void
dist_grace_over(void *arg)
{
    vl_xlator_t *xl = arg;
    struct dist_priv *priv = dist_priv(xl);

    pthread_mutex_lock(&priv->lock);
    priv->grace_timer = NULL;
    priv->is_grace_over = true;
    pthread_mutex_unlock(&priv->lock);
    dist_up_check(xl);
}


static void
dist_ready_timeout(void *arg)
{
    vl_xlator_t *xl = arg;
    struct dist_priv *priv = dist_priv(xl);
    char reason[512];
    size_t len = 0;
    bool fire = false;

    reason[0] = '\0';
    pthread_mutex_lock(&priv->lock);
    priv->ready_timer = NULL;
    if (!priv->is_ready_set) {
        priv->is_ready_set = true;
        fire = true;
        len = (size_t)snprintf(reason, sizeof(reason), "subvolumes down:");
        for (unsigned i = 0; i < priv->n && len < sizeof(reason); i++)
            if (!priv->is_up[i] && !priv->is_local[i])
                len += (size_t)snprintf(reason + len, sizeof(reason) - len,
                                        " %s", xl->children[i]->name);
    }
    pthread_mutex_unlock(&priv->lock);
    if (fire)
        vl_graph_set_ready(xl->graph, -ENOTCONN, reason);
}


static int
dist_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    const struct dist_conf *conf = VL_CONF(xl, struct dist_conf);
    struct dist_priv *priv = dist_priv(xl);
    vl_timer_t *t1 = NULL, *t2 = NULL;
    int idx;

    switch (ev) {
    case VL_EV_PARENT_UP:
        pthread_mutex_lock(&priv->lock);
        if (priv->grace_timer == NULL && !priv->is_grace_over)
            priv->grace_timer = vl_timer_add(xl->graph->loop,
                                             DIST_FIRST_CONNECT_GRACE_MS,
                                             dist_grace_over, xl);
        if (dist_reports_ready(xl) && priv->ready_timer == NULL
            && !priv->is_ready_set)
            priv->ready_timer = vl_timer_add(xl->graph->loop,
                                             conf->connect_timeout,
                                             dist_ready_timeout, xl);
        pthread_mutex_unlock(&priv->lock);
        vl_notify_default(xl, ev, data);
        dist_up_check(xl);
        return 0;
    case VL_EV_PARENT_DOWN:
        pthread_mutex_lock(&priv->lock);
        t1 = priv->grace_timer;
        t2 = priv->ready_timer;
        priv->grace_timer = NULL;
        priv->ready_timer = NULL;
        priv->is_grace_over = true;
        priv->is_ready_set = true;
        /* Under the lock, which both callbacks take first: a timer that
         * is firing cannot be freed before we are done with it. */
        if (t1 != NULL)
            vl_timer_cancel(t1);
        if (t2 != NULL)
            vl_timer_cancel(t2);
        pthread_mutex_unlock(&priv->lock);
        dist_workers_stop(xl);
        return vl_notify_default(xl, ev, data);
    case VL_EV_CHILD_UP:
    case VL_EV_CHILD_DOWN:
        idx = dist_subvol_index(xl, data);
        if (idx < 0)
            return 0;
        pthread_mutex_lock(&priv->lock);
        priv->is_up[idx] = ev == VL_EV_CHILD_UP;
        pthread_mutex_unlock(&priv->lock);
        vl_log(xl, VL_LOG_INFO, "subvolume %s %s", xl->children[idx]->name,
               ev == VL_EV_CHILD_UP ? "up" : "down");
        dist_up_check(xl);
        return 0;
    default:
        return vl_notify_default(xl, ev, data);
    }
}


static void
dist_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    dist_readdir_release(xl, fd);
}


static void
dist_dump(vl_xlator_t *xl, FILE *out)
{
    struct dist_priv *priv = dist_priv(xl);

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    fprintf(out, "subvolumes=%u\n", priv->n);
    for (unsigned i = 0; i < priv->n; i++) {
        fprintf(out, "subvol.%u.name=%s\n", i, xl->children[i]->name);
        fprintf(out, "subvol.%u.up=%d\n", i,
                (priv->is_up[i] || priv->is_local[i]) ? 1 : 0);
        fprintf(out, "subvol.%u.decommissioned=%d\n", i,
                dist_mask_test(priv->decommissioned, i) ? 1 : 0);
        if (priv->has_space[i])
            fprintf(out, "subvol.%u.avail_bytes=%" PRIu64 "\n", i,
                    priv->avail[i]);
    }
    fprintf(out, "child_up_sent=%d\n", priv->is_up_sent ? 1 : 0);
    pthread_mutex_unlock(&priv->lock);
    fprintf(out, "reroutes=%" PRIu64 "\n", (uint64_t)priv->n_reroutes);
    fprintf(out, "heals=%" PRIu64 "\n", (uint64_t)priv->n_heals);
    fprintf(out, "readdir_reads=%" PRIu64 "\n", (uint64_t)priv->n_rd_reads);
    fprintf(out, "readdir_names_only_reads=%" PRIu64 "\n",
            (uint64_t)priv->n_rd_names_only);
    fprintf(out, "readdir_seeded=%" PRIu64 "\n",
            (uint64_t)priv->n_rd_seeded);
    fprintf(out, "readdir_waits=%" PRIu64 "\n", (uint64_t)priv->n_rd_waits);
    fprintf(out, "worker_tasks=%" PRIu64 "\n", (uint64_t)priv->n_tasks);
    fprintf(out, "dir_lookups_fast=%" PRIu64 "\n",
            (uint64_t)priv->n_dir_lookups_fast);
    fprintf(out, "layout_rereads=%" PRIu64 "\n",
            (uint64_t)priv->n_layout_rereads);
}


static const vl_option_t dist_options[] = {
    VL_OPT_STR("min-free-disk", struct dist_conf, min_free_disk,
               .def = "10%", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
               .aliases = {"cluster.min-free-disk"},
               .doc = "Free space (percent of the brick, or a size) below "
                      "which a subvolume gets no new files: the data goes "
                      "to the subvolume with most free space and a link "
                      "file to the hashed one."),
    VL_OPT_PERCENT("min-free-inodes", struct dist_conf, min_free_inodes,
                   .min = 0, .max = 100, .def = "5%",
                   .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                   .aliases = {"cluster.min-free-inodes"},
                   .doc = "Free inodes (percent of the brick's) below "
                          "which a subvolume gets no new files, as for "
                          "min-free-disk (file systems without a fixed "
                          "inode count, which statfs reports as 0 inodes, "
                          "never reach it)."),
    VL_OPT_STR("decommissioned-bricks", struct dist_conf, decommissioned,
               .def = "", .flags = VL_OPT_ADVANCED,
               .doc = "Comma-separated subvolume names that get no range "
                      "in new or fixed layouts and no new files "
                      "(remove-brick)."),
    VL_OPT_BOOL("lookup-optimize", struct dist_conf, is_lookup_optimize,
                .def = "on", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.lookup-optimize"},
                .doc = "Answer ENOENT after a miss on the hashed subvolume "
                       "when the directory's layout is committed, instead "
                       "of looking on every subvolume."),
    VL_OPT_TIME("connect-timeout", struct dist_conf, connect_timeout,
                .min = 1, .max = 3600 * 1000LL, .def = "10s",
                .flags = VL_OPT_ADVANCED,
                .doc = "When distribute is the top of its graph (the "
                       "rebalance process): how long to wait for every "
                       "subvolume before the graph is declared failed."),
    VL_OPT_STR("rebal-throttle", struct dist_conf, rebal_throttle,
               .def = "normal", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
               .aliases = {"cluster.rebal-throttle"},
               .doc = "Parallel file migrations of the rebalance process: "
                      "lazy, normal, aggressive or a number; the "
                      "translator itself does not use it."),
    VL_OPT_END,
};

static const char *const dist_mem_types[] = {"misc", "priv", "layout",
                                             "local", "text", "rdcache",
                                             "fan", NULL};

const vl_xlator_class_t xl_cluster_distribute = {
    .abi = VL_XLATOR_ABI,
    .type = "cluster/distribute",
    .prefix = "cluster",
    .version = {0, 1, 0},
    .flags = VL_XL_MANY_CHILDREN,
    .conf_size = sizeof(struct dist_conf),
    .req_priv_size = sizeof(struct dist_local),
    .inode_ctx_size = sizeof(struct dist_inode_ctx),
    .fd_ctx_size = sizeof(struct dist_fd_ctx),
    .options = dist_options,
    .mem_types = dist_mem_types,
    .doc = "Spreads files over its subvolumes by a hash of their names; "
           "directories exist on every subvolume with a layout of hash "
           "ranges. No metadata server.",
    .init = dist_init,
    .fini = dist_fini,
    .cross_check = dist_cross_check,
    .notify = dist_notify,
    .forget = dist_forget,
    .release = dist_release,
    .dump = dist_dump,
    .fops = {
        [VL_FOP_LOOKUP] = dist_lookup,
        [VL_FOP_STAT] = dist_fop_route,
        [VL_FOP_SETATTR] = dist_fop_route,
        [VL_FOP_ACCESS] = dist_fop_route,
        [VL_FOP_READLINK] = dist_fop_route,
        [VL_FOP_MKNOD] = dist_mknod,
        [VL_FOP_MKDIR] = dist_mkdir,
        [VL_FOP_UNLINK] = dist_unlink,
        [VL_FOP_RMDIR] = dist_rmdir,
        [VL_FOP_SYMLINK] = dist_symlink,
        [VL_FOP_RENAME] = dist_rename,
        [VL_FOP_LINK] = dist_link,
        [VL_FOP_CREATE] = dist_create,
        [VL_FOP_OPEN] = dist_fop_route,
        [VL_FOP_READ] = dist_fop_route,
        [VL_FOP_WRITE] = dist_fop_route,
        [VL_FOP_FLUSH] = dist_fop_route,
        [VL_FOP_FSYNC] = dist_fop_route,
        [VL_FOP_OPENDIR] = dist_opendir,
        [VL_FOP_READDIR] = dist_readdir,
        [VL_FOP_STATFS] = dist_statfs,
        [VL_FOP_SETXATTR] = dist_setxattr,
        [VL_FOP_GETXATTR] = dist_getxattr,
        [VL_FOP_REMOVEXATTR] = dist_removexattr,
        [VL_FOP_LK] = dist_fop_route,
        [VL_FOP_INODELK] = dist_fop_route,
        [VL_FOP_ENTRYLK] = dist_entrylk,
        [VL_FOP_FALLOCATE] = dist_fop_route,
        [VL_FOP_COPY_FILE_RANGE] = dist_copy_file_range,
        [VL_FOP_LSEEK] = dist_fop_route,
        [VL_FOP_RCHECKSUM] = dist_fop_route,
    },
};

