/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * md-cache: attributes, and the absence of the xattrs asked most, cached
 * per inode in the client (README.md).
 *
 * A stat (FUSE GETATTR, fstat) or a lookup by GFID of an inode whose
 * attributes an answer brought less than md-cache-timeout ago is answered
 * here. A getxattr of security.capability or a POSIX ACL that the brick
 * answered "no such attribute" is answered that way again (the kernel
 * asks security.capability before every write to a file, to drop it).
 *
 * Staying true: every change this client makes drops what it touches
 * (at the wind and again at the answer); every change another client
 * makes reaches us as a VL_EV_UPCALL VL_UPCALL_INVALIDATE from the
 * brick's features/upcall, which drops the object (and, for an entry,
 * its directory); a brick's lost connection (is_all) and CHILD_DOWN drop
 * everything (the epoch moves on). The race: an answer read on the brick
 * before a change may arrive after the change's invalidation. Each inode
 * has a generation, bumped by every drop; an answer is kept only if the
 * generation and epoch are those seen when its request was wound.
 *
 * Without the bricks' invalidations (cache-invalidation off) nothing
 * is kept longer than 1 s, whatever md-cache-timeout says.
 *
 * Intercepts: lookup, stat, getxattr; every fop that changes something
 *             (drops); notify (UPCALL, CHILD_DOWN), passed on up.
 * Per inode:  struct mdc_inode, guarded by inode->lock.
 * Per req:    struct mdc_local: the inode and its generation at wind.
 * Threads:    any; no lock is held across vl_wind, vl_pass or vl_unwind.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "vol/vol.h"

#include "builtin.h"

/* What is kept without the bricks' invalidations, at most. */
#define MDC_UNINVALIDATED_MS 1000

/* The xattrs whose absence is cached: asked often, rarely present. */
static const char *const mdc_xattr_names[] = {
    "security.capability",
    "system.posix_acl_access",
    "system.posix_acl_default",
};
#define MDC_N_XATTRS (sizeof(mdc_xattr_names) / sizeof(mdc_xattr_names[0]))

struct mdc_conf {
    uint64_t timeout_s; /* md-cache-timeout */
    bool is_inval;      /* cache-invalidation: the bricks tell us */
};

/* Per inode (vl_inode_ctx), guarded by inode->lock. */
struct mdc_inode {
    struct vl_iatt iatt; /* valid while now < expires_ms */
    int64_t expires_ms;  /* CLOCK_MONOTONIC ms; 0: nothing kept */
    uint64_t epoch;      /* priv->epoch when kept */
    uint64_t gen;        /* bumped by every drop */
    uint32_t absent;     /* bit i: mdc_xattr_names[i] is not set */
    int64_t absent_expires_ms;
    uint64_t absent_epoch;
};

struct mdc_priv {
    _Atomic int64_t keep_ms;         /* effective timeout */
    atomic_bool is_inval;            /* conf's cache-invalidation */
    atomic_uint_fast64_t epoch;      /* bumped when everything goes */
    atomic_uint_fast64_t hits;       /* stat/lookup answered here */
    atomic_uint_fast64_t misses;     /* stat/lookup that went down */
    atomic_uint_fast64_t xattr_hits; /* getxattr answered ENODATA here */
    atomic_uint_fast64_t xattr_misses;
    atomic_uint_fast64_t invalidations;  /* upcalls for an object */
    atomic_uint_fast64_t invalidate_all; /* is_all and CHILD_DOWN */
    atomic_uint_fast64_t drops;          /* our own changes */
};

/* Per request (VL_REQ_PRIV). */
struct mdc_local {
    vl_inode_t *inode; /* borrowed from the args; whose answer to keep */
    uint64_t gen;      /* its generation at wind */
    uint64_t epoch;    /* priv->epoch at wind */
    int xattr;         /* getxattr: index in mdc_xattr_names, or -1 */
};

static int64_t
mdc_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t
mdc_keep_ms(const struct mdc_conf *conf)
{
    int64_t ms = (int64_t)conf->timeout_s * 1000;

    return !conf->is_inval && ms > MDC_UNINVALIDATED_MS ? MDC_UNINVALIDATED_MS
                                                        : ms;
}

/* ---- the per-inode record ---- */

/* Drops what inode keeps; bumps its generation so that answers in
 * flight are not kept either. */
static void
mdc_drop(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct mdc_inode *mi;

    if (inode == NULL || (mi = vl_inode_ctx(inode, xl)) == NULL)
        return;
    pthread_mutex_lock(&inode->lock);
    mi->expires_ms = 0;
    mi->absent = 0;
    mi->absent_expires_ms = 0;
    mi->gen++;
    pthread_mutex_unlock(&inode->lock);
}

/* Notes inode's generation and the epoch in local, before the wind. */
static void
mdc_local_begin(vl_xlator_t *xl, struct mdc_local *local, vl_inode_t *inode)
{
    struct mdc_priv *priv = xl->priv;
    struct mdc_inode *mi;

    local->inode = inode;
    local->epoch = atomic_load(&priv->epoch);
    if (inode == NULL || (mi = vl_inode_ctx(inode, xl)) == NULL)
        return;
    pthread_mutex_lock(&inode->lock);
    local->gen = mi->gen;
    pthread_mutex_unlock(&inode->lock);
}

/* Keeps the attributes an answer brought, unless something was dropped
 * since its wind (local) or they belong to another object. */
static void
mdc_keep(vl_xlator_t *xl, const struct mdc_local *local,
         const struct vl_iatt *iatt)
{
    struct mdc_priv *priv = xl->priv;
    vl_inode_t *inode = local->inode;
    int64_t keep_ms = atomic_load(&priv->keep_ms);
    struct mdc_inode *mi;

    if (inode == NULL || keep_ms == 0 || vl_gfid_is_null(&iatt->gfid)
        || (mi = vl_inode_ctx(inode, xl)) == NULL)
        return;
    if (!vl_gfid_is_null(&inode->gfid)
        && !vl_gfid_equal(&inode->gfid, &iatt->gfid))
        return; /* the name names something else now */
    pthread_mutex_lock(&inode->lock);
    if (mi->gen == local->gen && atomic_load(&priv->epoch) == local->epoch) {
        mi->iatt = *iatt;
        mi->expires_ms = mdc_now_ms() + keep_ms;
        mi->epoch = local->epoch;
    }
    pthread_mutex_unlock(&inode->lock);
}

/* The kept attributes of inode into *out; false if none hold. */
static bool
mdc_peek(vl_xlator_t *xl, vl_inode_t *inode, struct vl_iatt *out /* OUT */)
{
    struct mdc_priv *priv = xl->priv;
    struct mdc_inode *mi;
    bool is_hit;

    if (inode == NULL || (mi = vl_inode_ctx(inode, xl)) == NULL)
        return false;
    pthread_mutex_lock(&inode->lock);
    is_hit = mi->expires_ms > mdc_now_ms()
             && mi->epoch == atomic_load(&priv->epoch)
             && vl_gfid_equal(&mi->iatt.gfid, &inode->gfid);
    if (is_hit)
        *out = mi->iatt;
    pthread_mutex_unlock(&inode->lock);
    return is_hit;
}

/* ---- lookup and stat: answered from the record, or kept ---- */

static void
mdc_fetch_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct mdc_local *local = VL_REQ_PRIV(req, struct mdc_local);

    if (r->status == 0)
        mdc_keep(req->xl, local, &r->reply.iatt);
    vl_reply_move(req, r);
    vl_unwind(req, r->status);
}

/* Answers req from inode's record, or winds it and keeps the answer. */
static void
mdc_fetch(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode, bool may_answer)
{
    struct mdc_priv *priv = xl->priv;
    struct mdc_local *local = VL_REQ_PRIV(req, struct mdc_local);
    vl_req_t *r;

    if (may_answer && mdc_peek(xl, inode, &req->reply.iatt)) {
        atomic_fetch_add(&priv->hits, 1);
        vl_unwind(req, 0);
        return;
    }
    atomic_fetch_add(&priv->misses, 1);
    mdc_local_begin(xl, local, inode);
    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, mdc_fetch_done, req);
}

static void
mdc_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_lookup_args *a = VL_ARGS(req, lookup);

    /* Only a lookup by GFID that wants nothing but attributes may be
     * answered here: a named one must learn what the name names now,
     * and content (quick-read) or an xattr (distribute) come from
     * below. */
    mdc_fetch(xl, req, a->loc.inode,
              a->loc.name == NULL && a->content_max == 0
                  && a->xattr_name == NULL);
}

static void
mdc_stat(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_stat_args *a = VL_ARGS(req, stat);

    mdc_fetch(xl, req, a->fd != NULL ? a->fd->inode : a->loc.inode, true);
}

/* ---- getxattr: the absence of the names asked most ---- */

static int
mdc_xattr_index(const char *name)
{
    for (size_t i = 0; name != NULL && i < MDC_N_XATTRS; i++)
        if (strcmp(name, mdc_xattr_names[i]) == 0)
            return (int)i;
    return -1;
}

static void
mdc_getxattr_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct mdc_priv *priv = xl->priv;
    struct mdc_local *local = VL_REQ_PRIV(req, struct mdc_local);
    int64_t keep_ms = atomic_load(&priv->keep_ms);
    struct mdc_inode *mi;

    if (r->status == -ENODATA && keep_ms > 0
        && (mi = vl_inode_ctx(local->inode, xl)) != NULL) {
        pthread_mutex_lock(&local->inode->lock);
        if (mi->gen == local->gen
            && atomic_load(&priv->epoch) == local->epoch) {
            /* The bits kept belong to one epoch and one stretch of
             * time; start over when those have passed. */
            if (mi->absent_epoch != local->epoch
                || mi->absent_expires_ms <= mdc_now_ms())
                mi->absent = 0;
            mi->absent |= 1u << local->xattr;
            mi->absent_expires_ms = mdc_now_ms() + keep_ms;
            mi->absent_epoch = local->epoch;
        }
        pthread_mutex_unlock(&local->inode->lock);
    }
    vl_reply_move(req, r);
    vl_unwind(req, r->status);
}

static void
mdc_getxattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_getxattr_args *a = VL_ARGS(req, getxattr);
    struct mdc_priv *priv = xl->priv;
    struct mdc_local *local = VL_REQ_PRIV(req, struct mdc_local);
    int idx = mdc_xattr_index(a->name);
    vl_inode_t *inode = a->loc.inode;
    struct mdc_inode *mi;
    bool is_absent = false;
    vl_req_t *r;

    if (idx < 0 || inode == NULL || (mi = vl_inode_ctx(inode, xl)) == NULL) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    pthread_mutex_lock(&inode->lock);
    is_absent = (mi->absent & (1u << idx)) != 0
                && mi->absent_expires_ms > mdc_now_ms()
                && mi->absent_epoch == atomic_load(&priv->epoch);
    pthread_mutex_unlock(&inode->lock);
    if (is_absent) {
        atomic_fetch_add(&priv->xattr_hits, 1);
        vl_unwind(req, -ENODATA);
        return;
    }
    atomic_fetch_add(&priv->xattr_misses, 1);
    mdc_local_begin(xl, local, inode);
    local->xattr = idx;
    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, mdc_getxattr_done, req);
}

/* ---- changes of ours: drop what they touch ---- */

/* The inodes a change touches (at most 4): the object, its directory,
 * rename's other directory and replaced target. */
static size_t
mdc_touched(const vl_req_t *req, vl_inode_t **out)
{
    const union vl_fop_args *a = &req->args;
    const struct vl_loc *l = NULL, *l2 = NULL;
    size_t n = 0;

    switch (req->op) {
    case VL_FOP_SETATTR:
        out[n++] =
            a->setattr.fd != NULL ? a->setattr.fd->inode : a->setattr.loc.inode;
        return n;
    case VL_FOP_WRITE:
        out[n++] = a->write.fd->inode;
        return n;
    case VL_FOP_FALLOCATE:
        out[n++] = a->fallocate.fd->inode;
        return n;
    case VL_FOP_COPY_FILE_RANGE:
        out[n++] = a->copy_file_range.fd_out->inode;
        return n;
    case VL_FOP_SETXATTR:
        out[n++] = a->setxattr.loc.inode;
        return n;
    case VL_FOP_REMOVEXATTR:
        out[n++] = a->removexattr.loc.inode;
        return n;
    case VL_FOP_XATTROP:
        out[n++] =
            a->xattrop.fd != NULL ? a->xattrop.fd->inode : a->xattrop.loc.inode;
        return n;
    case VL_FOP_LINK:
        out[n++] = a->link.oldloc.inode; /* its nlink */
        break;
    default:
        break;
    }
    vl_req_entry_locs(req, &l, &l2);
    for (const struct vl_loc *e = l; e != NULL; e = e == l ? l2 : NULL) {
        out[n++] = e->parent;
        if (req->op != VL_FOP_LINK)
            out[n++] = e->inode;
    }
    return n;
}

static void
mdc_drop_touched(vl_xlator_t *xl, const vl_req_t *req)
{
    vl_inode_t *touched[4] = {NULL};
    size_t n = mdc_touched(req, touched);

    for (size_t i = 0; i < n; i++)
        mdc_drop(xl, touched[i]);
}

static void
mdc_change_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;

    /* Again: a fetch wound after our first drop may have read the object
     * before the change. */
    mdc_drop_touched(req->xl, req);
    vl_reply_move(req, r);
    vl_unwind(req, r->status);
}

static void
mdc_change(vl_xlator_t *xl, vl_req_t *req)
{
    struct mdc_priv *priv = xl->priv;
    vl_req_t *r;

    atomic_fetch_add(&priv->drops, 1);
    mdc_drop_touched(xl, req);
    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, mdc_change_done, req);
}

/* ---- events ---- */

static void
mdc_drop_gfid(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    vl_inode_t *inode;

    if (vl_gfid_is_null(gfid))
        return;
    inode = vl_inode_find(xl->graph->itable, gfid);
    mdc_drop(xl, inode);
    vl_inode_unref(inode);
}

static int
mdc_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    struct mdc_priv *priv = xl->priv;
    const struct vl_upcall *up = data;

    if (priv == NULL)
        return vl_notify_default(xl, ev, data);
    if ((ev == VL_EV_UPCALL && up != NULL && up->is_all)
        || ev == VL_EV_CHILD_DOWN) {
        /* A brick we no longer hear from vouches for nothing. */
        atomic_fetch_add(&priv->epoch, 1);
        atomic_fetch_add(&priv->invalidate_all, 1);
    } else if (ev == VL_EV_UPCALL && up != NULL
               && up->kind == VL_UPCALL_INVALIDATE) {
        atomic_fetch_add(&priv->invalidations, 1);
        mdc_drop_gfid(xl, &up->gfid);
        if (up->flags & VL_INVAL_ENTRY)
            mdc_drop_gfid(xl, &up->parent);
    }
    return vl_notify_default(xl, ev, data);
}

/* ---- class ---- */

static int
mdc_init(vl_xlator_t *xl, vl_err_t *err)
{
    const struct mdc_conf *conf = VL_CONF(xl, struct mdc_conf);
    struct mdc_priv *priv = vl_calloc(xl, 1, sizeof(*priv), 0);

    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    atomic_store(&priv->keep_ms, mdc_keep_ms(conf));
    atomic_store(&priv->is_inval, conf->is_inval);
    xl->priv = priv;
    return 0;
}

static int
mdc_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    const struct mdc_conf *conf = new_conf;
    struct mdc_priv *priv = xl->priv;
    int64_t old_ms = atomic_exchange(&priv->keep_ms, mdc_keep_ms(conf));
    bool was_inval = atomic_exchange(&priv->is_inval, conf->is_inval);

    (void)err;
    /* What was kept for longer than the new timeout goes now. */
    atomic_fetch_add(&priv->epoch, 1);
    /* The kernel was given md-cache's timeouts while the bricks' promise
     * held (mount/fuse): if it no longer holds, or the timeout shrank,
     * what the kernel keeps goes too, as when a brick is lost. */
    if ((was_inval && !conf->is_inval)
        || (conf->is_inval && mdc_keep_ms(conf) < old_ms))
        vl_notify_parents_data(xl, VL_EV_UPCALL,
                               &(struct vl_upcall){.is_all = true});
    return 0;
}

int64_t
vl_md_cache_inval_timeout_ms(vl_xlator_t *xl)
{
    struct mdc_priv *priv = xl->priv;

    if (priv == NULL || !atomic_load(&priv->is_inval))
        return -1;
    return atomic_load(&priv->keep_ms);
}


static void
mdc_fini(vl_xlator_t *xl)
{
    vl_free(xl->priv);
    xl->priv = NULL;
}

static void
mdc_dump(vl_xlator_t *xl, FILE *out)
{
    struct mdc_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    fprintf(out, "timeout_ms=%lld\n", (long long)atomic_load(&priv->keep_ms));
    fprintf(out, "hits=%llu\n", (unsigned long long)atomic_load(&priv->hits));
    fprintf(out, "misses=%llu\n",
            (unsigned long long)atomic_load(&priv->misses));
    fprintf(out, "xattr_hits=%llu\n",
            (unsigned long long)atomic_load(&priv->xattr_hits));
    fprintf(out, "xattr_misses=%llu\n",
            (unsigned long long)atomic_load(&priv->xattr_misses));
    fprintf(out, "invalidations=%llu\n",
            (unsigned long long)atomic_load(&priv->invalidations));
    fprintf(out, "invalidate_all=%llu\n",
            (unsigned long long)atomic_load(&priv->invalidate_all));
    fprintf(out, "own_changes=%llu\n",
            (unsigned long long)atomic_load(&priv->drops));
}


/* /metrics: attribute and xattr lookups answered here, and those sent
 * down (doc/metrics.md, mortar_cache_*). */
static void
mdc_metrics(vl_xlator_t *xl, vl_metrics_sink_t *sink)
{
    struct mdc_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    vl_metrics_emit_cache(sink,
                          atomic_load(&priv->hits)
                              + atomic_load(&priv->xattr_hits),
                          atomic_load(&priv->misses)
                              + atomic_load(&priv->xattr_misses));
    vl_metrics_emit(sink, "mortar_cache_invalidations_total", "counter",
                    "Invalidations the cache received from the bricks.",
                    atomic_load(&priv->invalidations));
}

static const vl_option_t mdc_options[] = {
    VL_OPT_UINT("md-cache-timeout", struct mdc_conf, timeout_s, .min = 0,
                .max = 600, .def = "1",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.md-cache-timeout"},
                .doc = "Seconds a file's attributes (and the absence of "
                       "security.capability and ACLs) are answered from "
                       "this client's cache; with cache invalidation on "
                       "and this option unset, the volume uses 600 (a "
                       "change by another client is told at once)."),
    VL_OPT_BOOL("cache-invalidation", struct mdc_conf, is_inval, .def = "on",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.cache-invalidation"},
                .doc = "Rely on the bricks telling this client of other "
                       "clients' changes (features.cache-invalidation): "
                       "only then are attributes kept longer than 1 s, "
                       "and the kernel's entry and attribute timeouts "
                       "follow md-cache-timeout."),
    VL_OPT_END,
};

static const char *const mdc_mem_types[] = {"misc", NULL};

const vl_xlator_class_t xl_performance_md_cache = {
    .abi = VL_XLATOR_ABI,
    .type = "performance/md-cache",
    .prefix = "md-cache",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct mdc_conf),
    .req_priv_size = sizeof(struct mdc_local),
    .inode_ctx_size = sizeof(struct mdc_inode),
    .options = mdc_options,
    .mem_types = mdc_mem_types,
    .doc = "Caches file attributes, and the absence of the xattrs asked "
           "most, in the client; changes by other clients are dropped at "
           "once through the bricks' cache invalidation.",
    .init = mdc_init,
    .fini = mdc_fini,
    .reconfigure = mdc_reconfigure,
    .notify = mdc_notify,
    .dump = mdc_dump,
    .metrics = mdc_metrics,
    .fops =
        {
            [VL_FOP_LOOKUP] = mdc_lookup,
            [VL_FOP_STAT] = mdc_stat,
            [VL_FOP_GETXATTR] = mdc_getxattr,
            [VL_FOP_SETATTR] = mdc_change,
            [VL_FOP_WRITE] = mdc_change,
            [VL_FOP_FALLOCATE] = mdc_change,
            [VL_FOP_COPY_FILE_RANGE] = mdc_change,
            [VL_FOP_SETXATTR] = mdc_change,
            [VL_FOP_REMOVEXATTR] = mdc_change,
            [VL_FOP_XATTROP] = mdc_change,
            [VL_FOP_MKNOD] = mdc_change,
            [VL_FOP_MKDIR] = mdc_change,
            [VL_FOP_CREATE] = mdc_change,
            [VL_FOP_SYMLINK] = mdc_change,
            [VL_FOP_LINK] = mdc_change,
            [VL_FOP_UNLINK] = mdc_change,
            [VL_FOP_RMDIR] = mdc_change,
            [VL_FOP_RENAME] = mdc_change,
        },
};
