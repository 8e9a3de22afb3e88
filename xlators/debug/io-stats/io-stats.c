/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * io-stats: the brick's profile counters, behind `volume profile` and
 * `volume top` (README.md). It sits right under protocol/server, so every
 * request of a client reaches it exactly once: the per-fop counters that
 * libvol keeps for every translator (vol/fop-stats.h) are read from this
 * one for the profile.
 *
 * What it adds to libvol's counters:
 *   - block sizes of READ (size asked) and WRITE (bytes written), always
 *     counted (one relaxed atomic add);
 *   - the profile's baselines (ios-dump.c): counters at `profile start`
 *     (latency-measurement turning on) and at the last `profile info`;
 *   - with count-fop-hits on, per-file counts of OPEN, READ, WRITE,
 *     OPENDIR and READDIR in bounded top tables (ios-top.c), and the path
 *     of each object learnt from the named LOOKUP, CREATE and MKDIR
 *     answers that pass by. Off, nothing per file is kept or looked at.
 *
 * Intercepts: lookup, create, mkdir (answers, only with count-fop-hits),
 *             open, read, write, opendir, readdir (counted, then passed).
 * Per inode:  struct ios_ictx (path, counts), guarded by priv->top_lock.
 * Per req:    nothing; a named request is wound as a child so its answer
 *             can name the object, then its reply is moved up.
 * Threads:    fops on any thread; dumps and reconfigure on the process's
 *             main thread; see ios.h for the lock order.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "ios.h"

const char *const ios_top_names[IOS_TOP_N] = {
    [IOS_TOP_OPEN] = "open",       [IOS_TOP_READ] = "read",
    [IOS_TOP_WRITE] = "write",     [IOS_TOP_OPENDIR] = "opendir",
    [IOS_TOP_READDIR] = "readdir",
};


static bool
ios_counting(vl_xlator_t *xl)
{
    struct ios_priv *priv = xl->priv;

    return atomic_load_explicit(&priv->is_count_hits, memory_order_relaxed);
}


/* Bucket of a size: floor(log2(size)), 0 for 0, capped. */
static unsigned
ios_bs_bucket(uint64_t size)
{
    unsigned k = size == 0 ? 0 : 63u - (unsigned)__builtin_clzll(size);

    return k < IOS_BS_N ? k : IOS_BS_N - 1;
}


/* ---- named requests: the answer names the object ---- */

static void
ios_named_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;
    const struct vl_loc *loc = NULL;
    int status = child->status;

    switch (req->op) {
    case VL_FOP_LOOKUP:
        loc = &VL_ARGS(req, lookup)->loc;
        break;
    case VL_FOP_CREATE:
        loc = &VL_ARGS(req, create)->loc;
        break;
    case VL_FOP_MKDIR:
        loc = &VL_ARGS(req, mkdir)->loc;
        break;
    default:
        break;
    }
    if (status == 0 && loc != NULL && loc->parent != NULL
        && loc->name != NULL) {
        /* The object may already be linked under its GFID (a lookup of a
         * known name gets a fresh inode that the server then drops for
         * the linked one): name that one, else the fresh one, which is
         * the inode the server links. */
        vl_inode_t *known = vl_inode_find(loc->parent->table,
                                          &child->reply.iatt.gfid);

        vl_inode_t *obj = known != NULL ? known : loc->inode;

        ios_top_name(req->xl, loc->parent, loc->name, obj);
        /* A create opens the file (GlusterFS counts it as an open too). */
        if (req->op == VL_FOP_CREATE && obj != NULL)
            ios_top_hit(req->xl, obj, IOS_TOP_OPEN);
        vl_inode_unref(known);
    }
    vl_reply_move(req, child);
    vl_unwind(req, status);
}


static void
ios_named(vl_xlator_t *xl, vl_req_t *req)
{
    vl_req_t *child;

    if (!ios_counting(xl)) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    child = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (child == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(child, ios_named_done, req);
}


/* ---- counted requests ---- */

static void
ios_open(vl_xlator_t *xl, vl_req_t *req)
{
    if (ios_counting(xl))
        ios_top_hit(xl, VL_ARGS(req, open)->loc.inode, IOS_TOP_OPEN);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static void
ios_opendir(vl_xlator_t *xl, vl_req_t *req)
{
    if (ios_counting(xl))
        ios_top_hit(xl, VL_ARGS(req, opendir)->loc.inode, IOS_TOP_OPENDIR);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static void
ios_readdir(vl_xlator_t *xl, vl_req_t *req)
{
    if (ios_counting(xl))
        ios_top_hit(xl, VL_ARGS(req, readdir)->fd->inode, IOS_TOP_READDIR);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static void
ios_read(vl_xlator_t *xl, vl_req_t *req)
{
    struct ios_priv *priv = xl->priv;
    struct vl_read_args *a = VL_ARGS(req, read);

    atomic_fetch_add_explicit(&priv->bs_read[ios_bs_bucket(a->size)], 1,
                              memory_order_relaxed);
    if (ios_counting(xl))
        ios_top_hit(xl, a->fd->inode, IOS_TOP_READ);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static void
ios_write(vl_xlator_t *xl, vl_req_t *req)
{
    struct ios_priv *priv = xl->priv;
    struct vl_write_args *a = VL_ARGS(req, write);
    uint64_t size = 0;

    for (int i = 0; i < a->n_iov; i++)
        size += a->iov[i].iov_len;
    atomic_fetch_add_explicit(&priv->bs_write[ios_bs_bucket(size)], 1,
                              memory_order_relaxed);
    if (ios_counting(xl))
        ios_top_hit(xl, a->fd->inode, IOS_TOP_WRITE);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


/* ---- life cycle ---- */

/* Applies conf: a profile start (latency-measurement turning on) takes
 * the baselines, count-fop-hits turning on or off empties the tables. */
static int
ios_apply(vl_xlator_t *xl, const struct ios_conf *conf, vl_err_t *err)
{
    struct ios_priv *priv = xl->priv;
    struct ios_snap *now = NULL;
    int rc = 0;

    pthread_mutex_lock(&priv->base_lock);
    if (conf->is_latency && !priv->is_profiling) {
        now = vl_malloc(xl, sizeof(*now), IOS_MT_SNAP);
        if (now == NULL) {
            vl_err_set(err, "io-stats: out of memory for the profile "
                       "baseline");
            rc = -ENOMEM;
        } else {
            ios_snap_take(xl, now);
            ios_base_reset_locked(xl, now);
        }
    }
    if (rc == 0)
        priv->is_profiling = conf->is_latency;
    pthread_mutex_unlock(&priv->base_lock);
    vl_free(now);
    if (rc != 0)
        return rc;
    if (conf->is_count_hits != ios_counting(xl)) {
        atomic_store(&priv->is_count_hits, conf->is_count_hits);
        ios_top_clear(priv);
    }
    return 0;
}


static int
ios_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct ios_priv *priv = vl_calloc(xl, 1, sizeof(*priv), IOS_MT_PRIV);
    int rc;

    if (priv == NULL) {
        vl_err_set(err, "io-stats: out of memory");
        return -ENOMEM;
    }
    priv->base_start = vl_calloc(xl, 1, sizeof(struct ios_snap),
                                 IOS_MT_SNAP);
    priv->base_int = vl_calloc(xl, 1, sizeof(struct ios_snap), IOS_MT_SNAP);
    if (priv->base_start == NULL || priv->base_int == NULL) {
        vl_free(priv->base_start);
        vl_free(priv->base_int);
        vl_free(priv);
        vl_err_set(err, "io-stats: out of memory");
        return -ENOMEM;
    }
    pthread_mutex_init(&priv->base_lock, NULL);
    pthread_mutex_init(&priv->top_lock, NULL);
    clock_gettime(CLOCK_MONOTONIC, &priv->t_start);
    priv->t_int = priv->t_start;
    xl->priv = priv;
    rc = ios_apply(xl, xl->conf, err);
    if (rc != 0) {
        xl->priv = NULL;
        pthread_mutex_destroy(&priv->base_lock);
        pthread_mutex_destroy(&priv->top_lock);
        vl_free(priv->base_start);
        vl_free(priv->base_int);
        vl_free(priv);
    }
    return rc;
}


static void
ios_fini(vl_xlator_t *xl)
{
    struct ios_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    ios_top_clear(priv);
    pthread_mutex_destroy(&priv->base_lock);
    pthread_mutex_destroy(&priv->top_lock);
    vl_free(priv->base_start);
    vl_free(priv->base_int);
    vl_free(priv);
    xl->priv = NULL;
}


static int
ios_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    return ios_apply(xl, new_conf, err);
}


static void
ios_forget(vl_xlator_t *xl, vl_inode_t *inode)
{
    ios_top_forget(xl, inode);
}


static void
ios_statedump(vl_xlator_t *xl, FILE *out)
{
    struct ios_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->base_lock);
    fprintf(out, "profiling=%d\ninterval=%llu\n", priv->is_profiling,
            (unsigned long long)priv->int_index);
    pthread_mutex_unlock(&priv->base_lock);
    fprintf(out, "count_fop_hits=%d\n", ios_counting(xl));
}


vl_xlator_t *
ios_find(vl_graph_t *graph)
{
    for (size_t i = 0; graph != NULL && i < graph->n_xls; i++)
        if (graph->xls[i]->cls == &xl_debug_io_stats)
            return graph->xls[i];
    return NULL;
}


static const vl_option_t ios_options[] = {
    VL_OPT_BOOL("latency-measurement", struct ios_conf, is_latency,
                .def = "off", .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"diagnostics.latency-measurement"},
                .doc = "Profile the brick: turning it on starts the "
                       "profile (its duration and cumulative counts "
                       "start from zero) and puts the counters in the "
                       "brick's profile dump. The fop counters themselves "
                       "are always kept."),
    VL_OPT_BOOL("count-fop-hits", struct ios_conf, is_count_hits,
                .def = "off", .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"diagnostics.count-fop-hits"},
                .doc = "Count opens, reads, writes, opendirs and readdirs "
                       "per file and keep the 100 busiest of each for "
                       "the profile dump; turning it on or off empties "
                       "the tables."),
    VL_OPT_END,
};

static const char *const ios_mem_types[] = {"misc", "priv", "path", "snap",
                                            NULL};

const vl_xlator_class_t xl_debug_io_stats = {
    .abi = VL_XLATOR_ABI,
    .type = "debug/io-stats",
    .prefix = "io-stats",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct ios_conf),
    .inode_ctx_size = sizeof(struct ios_ictx),
    .options = ios_options,
    .mem_types = ios_mem_types,
    .doc = "The brick's profile: block sizes, baselines of the fop "
           "counters and per-file top tables for volume profile and "
           "volume top; right under protocol/server.",
    .init = ios_init,
    .fini = ios_fini,
    .reconfigure = ios_reconfigure,
    .forget = ios_forget,
    .dump = ios_statedump,
    .fops = {
        [VL_FOP_LOOKUP] = ios_named,
        [VL_FOP_CREATE] = ios_named,
        [VL_FOP_MKDIR] = ios_named,
        [VL_FOP_OPEN] = ios_open,
        [VL_FOP_READ] = ios_read,
        [VL_FOP_WRITE] = ios_write,
        [VL_FOP_OPENDIR] = ios_opendir,
        [VL_FOP_READDIR] = ios_readdir,
    },
};
