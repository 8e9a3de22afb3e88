/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nl-cache: negative lookups answered from directory leases.
 *
 * A file create through FUSE is a LOOKUP that finds nothing and then the
 * CREATE; the LOOKUP costs a round trip to learn "no such name". Every
 * MKDIR through here asks the bricks for a lease on the new, empty
 * directory (args.want_lease). While the lease holds (reply.is_leased,
 * until a VL_EV_UPCALL for the directory says anyone else changed its
 * entries), this client knows the directory's complete contents: the
 * names it made there itself since, minus those it removed. A LOOKUP of
 * any other name is answered -ENOENT here, without a round trip.
 *
 * A record per directory (nlc-table.c) is PENDING while our MKDIR is in
 * flight and LEASED once the answer granted it. A break can arrive
 * before that answer (a brick sends it right after its own reply, but
 * the merged answer waits for every brick), so a break marks a PENDING
 * record broken and a broken record never becomes LEASED. A lease is
 * not used while an entry fop in the directory is in flight, nor after
 * timeout; an entry fop that fails, or a LOOKUP answer that disagrees
 * with the set, drops the record (we can no longer vouch for it). An
 * upcall with is_all (a brick's connection went down) or CHILD_DOWN
 * drops every record: the epoch moves on.
 *
 * Intercepts: lookup, mkdir, create, mknod, symlink, link, unlink, rmdir,
 *             rename; notify (UPCALL, CHILD_DOWN).
 * Per req:    struct nlc_local: the ids of the records the fop counted
 *             itself in, so its answer finds them again (or learns they
 *             are gone).
 * Threads:    any; priv->lock guards the table and is never held across
 *             vl_wind, vl_pass or vl_unwind.
 */
#include "config.h"

#include <errno.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "nl-cache.h"

/* Per request (VL_REQ_PRIV). */
struct nlc_local {
    uint64_t parent_id;  /* record of the name's directory (rename: the
                            old name's) the fop counted itself in; 0 */
    uint64_t parent2_id; /* rename: the new name's directory's record;
                            mkdir: the new directory's own record; 0 */
    uint64_t n_changes;  /* lookup: the record's n_changes at wind */
    bool is_checked;     /* lookup: compare the answer with the set */
};


/* "." and ".." exist in every directory but are never in a set. */
static bool
nlc_name_is_dot(const char *name)
{
    return name[0] == '.'
           && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}


/* ---- lookup: answer a name not in a leased set ---- */

static void
nlc_lookup_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct nlc_priv *priv = req->xl->priv;
    struct nlc_local *local = VL_REQ_PRIV(req, struct nlc_local);
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    int status = r->status;

    /* Only an answer that no entry fop of ours could have raced says
     * something about the set: (1) the record is the one we saw, (2) no
     * entry fop in it started or finished meanwhile, (3) none is in
     * flight. */
    if (local->is_checked && (status == 0 || status == -ENOENT)) {
        struct nlc_dir *dir;

        pthread_mutex_lock(&priv->lock);
        dir = nlc_dir_find_id_locked(priv, &a->loc.parent->gfid,
                                     local->parent_id);        /* (1) */
        if (dir != NULL && dir->n_changes == local->n_changes  /* (2) */
            && dir->n_inflight == 0) {                         /* (3) */
            bool in_set = nlc_name_has_locked(dir, a->loc.name);

            if ((status == 0) != in_set) {
                nlc_dir_drop_locked(priv, dir);
                atomic_fetch_add(&priv->inconsistent, 1);
            }
        }
        pthread_mutex_unlock(&priv->lock);
    }
    vl_reply_move(req, r);
    vl_unwind(req, status);
}


static void
nlc_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    struct nlc_priv *priv = xl->priv;
    struct nlc_local *local = VL_REQ_PRIV(req, struct nlc_local);
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    uint64_t now = nlc_now_ms();
    struct nlc_dir *dir;
    vl_req_t *r;

    if (a->loc.parent == NULL || a->loc.name == NULL
        || nlc_name_is_dot(a->loc.name)) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    pthread_mutex_lock(&priv->lock);
    dir = nlc_dir_find_locked(priv, &a->loc.parent->gfid);
    /* A record of an older epoch, or a lease past its timeout, is worth
     * nothing now; drop it rather than check answers against it. */
    if (dir != NULL
        && (dir->epoch != priv->epoch
            || (dir->state == NLC_LEASED
                && now - dir->grant_ms >= priv->timeout_ms))) {
        nlc_dir_drop_locked(priv, dir);
        atomic_fetch_add(&priv->expired, 1);
        dir = NULL;
    }
    if (dir == NULL) {
        pthread_mutex_unlock(&priv->lock);
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    if (dir->state == NLC_LEASED && dir->n_inflight == 0
        && !nlc_name_has_locked(dir, a->loc.name)) {
        nlc_dir_touch_locked(priv, dir);
        pthread_mutex_unlock(&priv->lock);
        atomic_fetch_add(&priv->hits, 1);
        vl_unwind(req, -ENOENT);
        return;
    }
    local->parent_id = dir->id;
    local->n_changes = dir->n_changes;
    local->is_checked = dir->n_inflight == 0;
    pthread_mutex_unlock(&priv->lock);
    atomic_fetch_add(&priv->misses, 1);

    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, nlc_lookup_done, req);
}


/* ---- entry fops: keep the sets of the directories they change ---- */

/* Counts a fop in flight in the record of loc's directory; returns the
 * record's id, or 0 if it has none. */
static uint64_t
nlc_begin_locked(struct nlc_priv *priv, const struct vl_loc *loc)
{
    struct nlc_dir *dir;

    if (loc == NULL || loc->parent == NULL || loc->name == NULL)
        return 0;
    dir = nlc_dir_find_locked(priv, &loc->parent->gfid);
    if (dir == NULL)
        return 0;
    dir->n_inflight++;
    dir->n_changes++;
    return dir->id;
}


/* The other half of nlc_begin_locked: the record with id, if it is still
 * there, with the fop no longer counted in flight. */
static struct nlc_dir *
nlc_end_locked(struct nlc_priv *priv, const struct vl_loc *loc, uint64_t id)
{
    struct nlc_dir *dir;

    if (id == 0)
        return NULL;
    dir = nlc_dir_find_id_locked(priv, &loc->parent->gfid, id);
    if (dir == NULL)
        return NULL;
    dir->n_inflight--;
    dir->n_changes++;
    return dir;
}


/* A directory that is gone takes its record with it. */
static void
nlc_forget_dir_locked(struct nlc_priv *priv, const vl_inode_t *inode)
{
    struct nlc_dir *dir;

    if (inode == NULL || vl_gfid_is_null(&inode->gfid))
        return;
    dir = nlc_dir_find_locked(priv, &inode->gfid);
    if (dir != NULL)
        nlc_dir_drop_locked(priv, dir);
}


/* Applies the answer (status) of the entry fop req to the sets of the
 * records it counted itself in. */
static void
nlc_entry_end_locked(vl_xlator_t *xl, struct nlc_priv *priv, vl_req_t *req,
                     int status)
{
    struct nlc_local *local = VL_REQ_PRIV(req, struct nlc_local);
    const struct vl_loc *old, *new;
    struct nlc_dir *d_old, *d_new = NULL;

    vl_req_entry_locs(req, &old, &new);
    d_old = nlc_end_locked(priv, old, local->parent_id);
    if (new != NULL)
        d_new = nlc_end_locked(priv, new, local->parent2_id);

    if (status != 0) {
        /* EEXIST: a name someone else made; ENOTCONN and the like: we do
         * not know what happened. Either way the set is not the truth. */
        if (d_old != NULL)
            nlc_dir_drop_locked(priv, d_old);
        if (d_new != NULL && d_new != d_old)
            nlc_dir_drop_locked(priv, d_new);
        if (d_old != NULL || d_new != NULL)
            atomic_fetch_add(&priv->failures, 1);
        return;
    }

    switch (req->op) {
    case VL_FOP_UNLINK:
        if (d_old != NULL)
            nlc_name_del_locked(priv, d_old, old->name);
        break;
    case VL_FOP_RMDIR:
        if (d_old != NULL)
            nlc_name_del_locked(priv, d_old, old->name);
        nlc_forget_dir_locked(priv, old->inode);
        break;
    case VL_FOP_RENAME:
        /* An exchange leaves both names in place. A directory the rename
         * replaced is gone. */
        if (d_old != NULL && !(req->args.rename.flags & RENAME_EXCHANGE))
            nlc_name_del_locked(priv, d_old, old->name);
        if (d_new != NULL
            && nlc_name_add_locked(xl, priv, d_new, new->name) != 0)
            nlc_dir_drop_locked(priv, d_new);
        if (!(req->args.rename.flags & RENAME_EXCHANGE)
            && new->inode != NULL && new->inode != old->inode)
            nlc_forget_dir_locked(priv, new->inode);
        break;
    default: /* mkdir, create, mknod, symlink, link: a name made */
        if (d_old != NULL
            && nlc_name_add_locked(xl, priv, d_old, old->name) != 0)
            nlc_dir_drop_locked(priv, d_old); /* ENOMEM: cannot vouch */
        break;
    }
}


static void
nlc_entry_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct nlc_priv *priv = req->xl->priv;
    int status = r->status;

    pthread_mutex_lock(&priv->lock);
    nlc_entry_end_locked(req->xl, priv, req, status);
    nlc_shrink_locked(priv);
    pthread_mutex_unlock(&priv->lock);
    vl_reply_move(req, r);
    vl_unwind(req, status);
}


/* create, mknod, symlink, link, unlink, rmdir, rename. */
static void
nlc_entry_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct nlc_priv *priv = xl->priv;
    struct nlc_local *local = VL_REQ_PRIV(req, struct nlc_local);
    const struct vl_loc *old, *new;
    vl_req_t *r;

    vl_req_entry_locs(req, &old, &new);
    pthread_mutex_lock(&priv->lock);
    local->parent_id = nlc_begin_locked(priv, old);
    local->parent2_id = nlc_begin_locked(priv, new);
    pthread_mutex_unlock(&priv->lock);
    if (local->parent_id == 0 && local->parent2_id == 0) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }

    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        pthread_mutex_lock(&priv->lock);
        nlc_entry_end_locked(xl, priv, req, -ENOMEM);
        pthread_mutex_unlock(&priv->lock);
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, nlc_entry_done, req);
}


/* ---- mkdir: ask for a lease on the new directory ---- */

static void
nlc_mkdir_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct nlc_priv *priv = req->xl->priv;
    struct nlc_local *local = VL_REQ_PRIV(req, struct nlc_local);
    struct vl_mkdir_args *a = VL_ARGS(req, mkdir);
    int status = r->status;
    struct nlc_dir *dir;

    pthread_mutex_lock(&priv->lock);
    nlc_entry_end_locked(req->xl, priv, req, status);
    dir = nlc_dir_find_id_locked(priv, &a->gfid, local->parent2_id);
    if (dir != NULL) {
        /* Leased only if (1) the mkdir made it, (2) every brick granted,
         * (3) no break came while the answer was on its way and (4) no
         * is_all or CHILD_DOWN since we asked (the record would be gone;
         * the epoch says it again). */
        if (status == 0 && r->reply.is_leased              /* (1), (2) */
            && dir->state == NLC_PENDING && !dir->is_broken /* (3) */
            && dir->epoch == priv->epoch)                  /* (4) */
            nlc_dir_set_leased_locked(priv, dir, nlc_now_ms());
        else
            nlc_dir_drop_locked(priv, dir);
    }
    nlc_shrink_locked(priv);
    pthread_mutex_unlock(&priv->lock);
    vl_reply_move(req, r);
    vl_unwind(req, status);
}


static void
nlc_mkdir(vl_xlator_t *xl, vl_req_t *req)
{
    struct nlc_priv *priv = xl->priv;
    struct nlc_local *local = VL_REQ_PRIV(req, struct nlc_local);
    struct vl_mkdir_args *a = VL_ARGS(req, mkdir);
    vl_req_t *r;

    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    pthread_mutex_lock(&priv->lock);
    local->parent_id = nlc_begin_locked(priv, &a->loc);
    /* No lease without a GFID to key it by, nor with no room to keep
     * one (limit 0): a lease we never use only costs the bricks. */
    if (!vl_gfid_is_null(&a->gfid) && priv->limit > 0) {
        struct nlc_dir *dir = nlc_dir_new_locked(xl, priv, &a->gfid);

        if (dir != NULL)
            local->parent2_id = dir->id;
    }
    pthread_mutex_unlock(&priv->lock);
    if (local->parent2_id != 0)
        r->args.mkdir.want_lease = true;
    vl_wind(r, nlc_mkdir_done, req);
}


/* ---- events ---- */

static int
nlc_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    struct nlc_priv *priv = xl->priv;
    const struct vl_upcall *up = data;
    struct nlc_dir *dir;

    /* A cache invalidation is md-cache's: the brick breaks the lease of
     * the same change separately. */
    if (priv == NULL
        || (ev == VL_EV_UPCALL
            && (up == NULL
                || (!up->is_all && up->kind != VL_UPCALL_BREAK_LEASE))))
        return vl_notify_default(xl, ev, data);
    switch (ev) {
    case VL_EV_UPCALL:
        atomic_fetch_add(&priv->breaks, 1);
        pthread_mutex_lock(&priv->lock);
        if (up->is_all) {
            priv->epoch++;
            nlc_purge_locked(priv);
        } else {
            dir = nlc_dir_find_locked(priv, &up->gfid);
            /* PENDING: marked, not dropped, so that the mkdir's answer
             * (still on its way) knows it must not lease. */
            if (dir != NULL && dir->state == NLC_PENDING)
                dir->is_broken = true;
            else if (dir != NULL)
                nlc_dir_drop_locked(priv, dir);
        }
        pthread_mutex_unlock(&priv->lock);
        break;
    case VL_EV_CHILD_DOWN:
        /* protocol/client sends is_all when its connection goes; this
         * covers a child that does not. */
        pthread_mutex_lock(&priv->lock);
        priv->epoch++;
        nlc_purge_locked(priv);
        pthread_mutex_unlock(&priv->lock);
        break;
    default:
        break;
    }
    return vl_notify_default(xl, ev, data);
}


/* ---- class ---- */

static void
nlc_limits_set(struct nlc_priv *priv, const struct nlc_conf *conf)
{
    pthread_mutex_lock(&priv->lock);
    priv->limit = conf->limit;
    priv->timeout_ms = conf->timeout;
    nlc_shrink_locked(priv); /* a smaller limit applies at once */
    pthread_mutex_unlock(&priv->lock);
}


static int
nlc_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct nlc_priv *priv;
    int rc;

    priv = vl_calloc(xl, 1, sizeof(*priv), NLC_MT_PRIV);
    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    rc = pthread_mutex_init(&priv->lock, NULL);
    if (rc != 0) {
        vl_free(priv);
        vl_err_set(err, "mutex: %s", strerror(rc));
        return -rc;
    }
    nlc_table_init(priv);
    xl->priv = priv;
    nlc_limits_set(priv, VL_CONF(xl, struct nlc_conf));
    return 0;
}


static void
nlc_fini(vl_xlator_t *xl)
{
    struct nlc_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    xl->priv = NULL;
    nlc_table_clear(priv);
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
}


static int
nlc_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    (void)err;
    nlc_limits_set(xl->priv, new_conf);
    return 0;
}


/* statedump's account of cached data (libvol's cache_usage). */
static void
nlc_cache_usage(vl_xlator_t *xl, uint64_t *bytes, uint64_t *limit)
{
    struct nlc_priv *priv = xl->priv;

    pthread_mutex_lock(&priv->lock);
    *bytes = priv->bytes;
    *limit = priv->limit;
    pthread_mutex_unlock(&priv->lock);
}


static void
nlc_dump(vl_xlator_t *xl, FILE *out)
{
    struct nlc_priv *priv = xl->priv;
    size_t n_dirs, n_leased, n_names;
    uint64_t bytes, epoch;

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    n_dirs = priv->n_dirs;
    n_leased = priv->n_leased;
    n_names = priv->n_names;
    bytes = priv->bytes;
    epoch = priv->epoch;
    pthread_mutex_unlock(&priv->lock);
    fprintf(out, "records=%zu\nleased=%zu\npending=%zu\nnames=%zu\n"
            "bytes=%llu\nepoch=%llu\nhits=%llu\nmisses=%llu\nbreaks=%llu\n"
            "inconsistent=%llu\nfailures=%llu\nexpired=%llu\n"
            "evictions=%llu\n",
            n_dirs, n_leased, n_dirs - n_leased, n_names,
            (unsigned long long)bytes, (unsigned long long)epoch,
            (unsigned long long)atomic_load(&priv->hits),
            (unsigned long long)atomic_load(&priv->misses),
            (unsigned long long)atomic_load(&priv->breaks),
            (unsigned long long)atomic_load(&priv->inconsistent),
            (unsigned long long)atomic_load(&priv->failures),
            (unsigned long long)atomic_load(&priv->expired),
            (unsigned long long)atomic_load(&priv->evictions));
}


/* /metrics: lookups answered ENOENT here, lookups in a recorded
 * directory sent down, and the bytes of records (doc/metrics.md,
 * mortar_cache_*). */
static void
nlc_metrics(vl_xlator_t *xl, vl_metrics_sink_t *sink)
{
    struct nlc_priv *priv = xl->priv;
    uint64_t bytes;

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    bytes = priv->bytes;
    pthread_mutex_unlock(&priv->lock);
    vl_metrics_emit_cache(sink, atomic_load(&priv->hits),
                          atomic_load(&priv->misses));
    vl_metrics_emit_cache_bytes(sink, bytes);
}


static const vl_option_t nlc_options[] = {
    VL_OPT_SIZE("limit", struct nlc_conf, limit, .min = 0,
                .max = 64 * 1024 * 1024 * 1024LL, .def = "2MiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.nl-cache-limit"},
                .doc = "Memory for directory records and the names in "
                       "them; the least recently used records are dropped "
                       "first (0: ask for no leases). mortard sets it to "
                       "nl-cache's share of performance.cache-size unless "
                       "it is set itself."),
    VL_OPT_TIME("timeout", struct nlc_conf, timeout, .min = 0,
                .max = 3600 * 1000LL, .def = "60s",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.nl-cache-timeout"},
                .doc = "How long after it was granted a directory lease "
                       "answers lookups of absent names (a safety net: "
                       "the brick's break ends a lease as soon as anyone "
                       "else changes the directory)."),
    VL_OPT_END,
};

static const char *const nlc_mem_types[] = {"misc", "priv", "dir", "name",
                                            "buckets", NULL};

const vl_xlator_class_t xl_performance_nl_cache = {
    .abi = VL_XLATOR_ABI,
    .type = "performance/nl-cache",
    .prefix = "nl-cache",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct nlc_conf),
    .req_priv_size = sizeof(struct nlc_local),
    .options = nlc_options,
    .mem_types = nlc_mem_types,
    .doc = "Asks for a lease on every directory this client makes and, "
           "while it holds one, answers lookups of names it knows are "
           "absent there without a round trip.",
    .init = nlc_init,
    .fini = nlc_fini,
    .reconfigure = nlc_reconfigure,
    .notify = nlc_notify,
    .dump = nlc_dump,
    .metrics = nlc_metrics,
    .cache_usage = nlc_cache_usage,
    .fops = {
        [VL_FOP_LOOKUP] = nlc_lookup,
        [VL_FOP_MKDIR] = nlc_mkdir,
        [VL_FOP_CREATE] = nlc_entry_fop,
        [VL_FOP_MKNOD] = nlc_entry_fop,
        [VL_FOP_SYMLINK] = nlc_entry_fop,
        [VL_FOP_LINK] = nlc_entry_fop,
        [VL_FOP_UNLINK] = nlc_entry_fop,
        [VL_FOP_RMDIR] = nlc_entry_fop,
        [VL_FOP_RENAME] = nlc_entry_fop,
    },
};
