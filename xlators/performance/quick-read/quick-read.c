/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * quick-read: small files read in one round trip, the LOOKUP.
 *
 * Every lookup asks the brick for the whole content of the file if it is
 * a regular file of at most max-file-size bytes (args.content_max); the
 * content is kept per inode (qr-cache.c) with the attributes it came
 * with. With open-behind (qr-open.c), a read-only OPEN of such a file is
 * answered here and its READs from the cache, so open+read+release of a
 * small file costs the one LOOKUP (an OPEN of a file not cached, named by
 * readdirplus, fetches it with one nameless LOOKUP instead). Whatever
 * changes a file through this client (write, truncate, setattr,
 * fallocate, copy_file_range target, unlink, rename, link, xattr changes,
 * open with O_TRUNC) drops its content before the fop is wound; a lookup
 * or stat answering other attributes drops it too; otherwise a copy is
 * served for cache-timeout after the last lookup/stat that confirmed
 * it. A readdirplus asks for the content of the files it lists up to
 * readdirp-content bytes (args.content_max) and fills the cache of each
 * listed file as a lookup would, keyed by the inode its GFID is linked to
 * (the one mount/fuse links from the entry, and distribute already made
 * when it noted the entry's subvolume), so the OPEN and READ that follow a
 * listing are answered here. An unlink or rename that removes a file with
 * such lazily opened fds is wound only once the file is open below
 * (qr-unlink.c): the brick then keeps it until the last close.
 *
 * Intercepts: lookup, stat, readdir, open, read, flush, and (to drop
 *             content or open a deferred fd for real first) setattr,
 *             write, fsync,
 *             lk, fallocate, copy_file_range, lseek, unlink, rename,
 *             link, setxattr, removexattr; release (lazy fds' count).
 * Events:     VL_EV_UPCALL: a cache invalidation drops the file's copy,
 *             is_all every copy (the bricks' cache invalidation).
 * Per inode:  struct qr_inode (content, attributes, LRU links), guarded
 *             by priv->lock.
 * Per fd:     struct qr_fd (open-behind state and waiting fops), fd->lock.
 * Per req:    struct qr_local (queue link).
 * Threads:    any; no lock is held across vl_wind.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "quick-read.h"

/* The wire caps content at 1 MiB (MRT_LOOKUP_CONTENT_MAX). */
#define QR_MAX_FILE_SIZE (1024 * 1024)


/* ---- lookup and stat: fill or revalidate the cache ---- */

static void
qr_lookup_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    int status = r->status;

    if (status == 0) {
        vl_inode_t *in = qr_inode_for(a->loc.inode, &r->reply.iatt.gfid);
        bool has = r->reply.buf != NULL && r->reply.count >= 0;

        qr_cache_update(xl, in, &r->reply.iatt, has ? r->reply.buf : NULL,
                        r->reply.data, has ? (size_t)r->reply.count : 0);
        vl_inode_unref(in);
    }
    vl_reply_move(req, r);
    if (a->content_max == 0 && req->reply.buf != NULL) {
        /* Our request, not the caller's: the content stops here. */
        vl_buf_unref(req->reply.buf);
        req->reply.buf = NULL;
        req->reply.data = NULL;
        req->reply.count = 0;
    }
    vl_unwind(req, status);
}


static void
qr_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    const struct qr_conf *conf = VL_CONF(xl, struct qr_conf);
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    vl_inode_t *inode = a->loc.inode;
    vl_req_t *r;

    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    /* Content is asked for unless the object is a known directory or a
     * copy is cached already (then the attributes revalidate it). */
    if (conf->max_file_size > 0 && a->content_max == 0
        && !(inode != NULL && S_ISDIR(inode->type))
        && !qr_cache_has(xl, inode, false, NULL))
        r->args.lookup.content_max = (uint32_t)conf->max_file_size;
    vl_wind(r, qr_lookup_done, req);
}


static void
qr_stat_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct vl_stat_args *a = VL_ARGS(req, stat);
    vl_inode_t *inode = a->fd != NULL ? a->fd->inode : a->loc.inode;
    int status = r->status;

    if (status == 0)
        qr_cache_update(req->xl, inode, &r->reply.iatt, NULL, NULL, 0);
    vl_reply_move(req, r);
    vl_unwind(req, status);
}


static void
qr_stat(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_stat_args *a = VL_ARGS(req, stat);
    vl_req_t *r;

    if (!qr_fd_ready(xl, req, a->fd))
        return;
    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, qr_stat_done, req);
}


/* ---- readdirplus: fill the cache of every listed small file ---- */

void
qr_readdir_fill(vl_xlator_t *xl, const struct vl_reply *reply)
{
    struct qr_priv *priv = xl->priv;
    vl_inode_table_t *itable = xl->graph->itable;

    for (size_t i = 0; i < reply->entries.n; i++) {
        const struct vl_dirent *e = &reply->entries.ents[i];
        bool has = e->has_content && reply->buf != NULL
                   && e->content_off <= reply->buf->size
                   && e->content_len <= reply->buf->size - e->content_off;
        vl_inode_t *in;

        if (!e->has_iatt || !S_ISREG(e->iatt.mode)
            || vl_gfid_is_null(&e->iatt.gfid))
            continue;
        /* With content: the inode the mount links for this GFID (made
         * now if nobody did yet; it ages out of the table's LRU if the
         * kernel never uses it). Without: only a known inode's copy is
         * revalidated or dropped by these attributes, as a stat would. */
        in = has ? vl_inode_get(itable, &e->iatt.gfid, S_IFREG)
                 : vl_inode_find(itable, &e->iatt.gfid);
        if (in == NULL)
            continue;
        qr_cache_update(xl, in, &e->iatt, has ? reply->buf : NULL,
                        has ? reply->buf->data + e->content_off : NULL,
                        has ? e->content_len : 0);
        if (has) {
            qr_cache_note_rdp_fill(xl, in);
            atomic_fetch_add(&priv->rdp_fills, 1);
        }
        vl_inode_unref(in);
    }
}


static void
qr_readdir_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct vl_readdir_args *a = VL_ARGS(req, readdir);
    int status = r->status;

    if (status == 0)
        qr_readdir_fill(req->xl, &r->reply);
    vl_reply_move(req, r);
    if (a->content_max == 0 && req->reply.buf != NULL) {
        /* Our request, not the caller's: the content stops here. */
        for (size_t i = 0; i < req->reply.entries.n; i++)
            req->reply.entries.ents[i].has_content = false;
        vl_buf_unref(req->reply.buf);
        req->reply.buf = NULL;
        req->reply.data = NULL;
    }
    vl_unwind(req, status);
}


static void
qr_readdir(vl_xlator_t *xl, vl_req_t *req)
{
    const struct qr_conf *conf = VL_CONF(xl, struct qr_conf);
    struct vl_readdir_args *a = VL_ARGS(req, readdir);
    uint64_t max = conf->readdirp_content < conf->max_file_size
                       ? conf->readdirp_content
                       : conf->max_file_size;
    vl_req_t *r;

    if (!a->plus || (max == 0 && a->content_max == 0)) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    /* Content only for a process that reads the small files it finds
     * (qr_rdp_wanted): a tree walk that only lists (ls -lR, find) never
     * pays a file read per entry at the bricks. */
    if (a->content_max == 0 && max > 0
        && qr_rdp_wanted(xl, req->caller.pid))
        r->args.readdir.content_max = (uint32_t)max;
    vl_wind(r, qr_readdir_done, req);
}


/* ---- data ---- */

static void
qr_read(vl_xlator_t *xl, vl_req_t *req)
{
    struct qr_priv *priv = xl->priv;
    struct vl_read_args *a = VL_ARGS(req, read);
    int status;

    /* The deferred open failed: its error, never the cache's bytes (a
     * read must not succeed where the fstat before it failed). */
    if (qr_fd_failed(xl, a->fd, &status)) {
        vl_unwind(req, status);
        return;
    }
    if (a->fd != NULL && !(a->fd->flags & O_DIRECT)
        && qr_cache_read(xl, a->fd->inode, a->size, a->offset,
                         &req->reply)) {
        atomic_fetch_add(&priv->hits, 1);
        vl_unwind(req, 0);
        return;
    }
    if (!qr_fd_ready(xl, req, a->fd))
        return;
    atomic_fetch_add(&priv->misses, 1);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static void
qr_flush(vl_xlator_t *xl, vl_req_t *req)
{
    vl_fd_t *fd = VL_ARGS(req, flush)->fd;

    /* Nothing was opened below, so nothing is there to flush. */
    if (qr_fd_is_lazy(xl, fd)) {
        vl_unwind(req, 0);
        return;
    }
    if (qr_fd_ready(xl, req, fd))
        vl_pass(req, VL_FIRST_CHILD(xl));
}


/* fsync, lk, lseek, rchecksum: the fd must be open below; nothing
 * changes here. */
static void
qr_fd_fop(vl_xlator_t *xl, vl_req_t *req)
{
    vl_fd_t *fd = req->op == VL_FOP_FSYNC       ? req->args.fsync.fd
                  : req->op == VL_FOP_LK        ? req->args.lk.fd
                  : req->op == VL_FOP_RCHECKSUM ? req->args.rchecksum.fd
                                                : req->args.lseek.fd;

    if (qr_fd_ready(xl, req, fd))
        vl_pass(req, VL_FIRST_CHILD(xl));
}


/* ---- fops that change a file: drop its content first ---- */

static void
qr_setattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_setattr_args *a = VL_ARGS(req, setattr);

    if (!qr_fd_ready(xl, req, a->fd))
        return;
    qr_cache_drop(xl, a->fd != NULL ? a->fd->inode : a->loc.inode);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static void
qr_write(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_write_args *a = VL_ARGS(req, write);

    if (!qr_fd_ready(xl, req, a->fd))
        return;
    qr_cache_drop(xl, a->fd != NULL ? a->fd->inode : NULL);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static void
qr_fallocate(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_fallocate_args *a = VL_ARGS(req, fallocate);

    if (!qr_fd_ready(xl, req, a->fd))
        return;
    qr_cache_drop(xl, a->fd != NULL ? a->fd->inode : NULL);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static void
qr_copy_file_range(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_copy_file_range_args *a = VL_ARGS(req, copy_file_range);

    if (!qr_fd_ready(xl, req, a->fd_in) || !qr_fd_ready(xl, req, a->fd_out))
        return;
    qr_cache_drop(xl, a->fd_out != NULL ? a->fd_out->inode : NULL);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


/* unlink, rename, link, setxattr, removexattr: by loc. */
static void
qr_loc_change(vl_xlator_t *xl, vl_req_t *req)
{
    union vl_fop_args *a = &req->args;

    switch (req->op) {
    case VL_FOP_UNLINK:
        qr_cache_drop(xl, a->unlink.loc.inode);
        break;
    case VL_FOP_RENAME:
        qr_cache_drop(xl, a->rename.oldloc.inode);
        qr_cache_drop(xl, a->rename.newloc.inode);
        break;
    case VL_FOP_LINK:
        qr_cache_drop(xl, a->link.oldloc.inode);
        break;
    case VL_FOP_SETXATTR:
        qr_cache_drop(xl, a->setxattr.loc.inode);
        break;
    case VL_FOP_REMOVEXATTR:
        qr_cache_drop(xl, a->removexattr.loc.inode);
        break;
    default:
        break;
    }
    /* An unlink or rename may remove the last name of a file with fds
     * answered here: the brick must hold it open first (qr-unlink.c). */
    if (req->op == VL_FOP_UNLINK || req->op == VL_FOP_RENAME)
        qr_unlink_guard(xl, req);
    else
        vl_pass(req, VL_FIRST_CHILD(xl));
}


/* ---- class ---- */

static void
qr_limits_set(struct qr_priv *priv, const struct qr_conf *conf)
{
    pthread_mutex_lock(&priv->lock);
    priv->cache_size = conf->cache_size;
    priv->max_file_size = conf->max_file_size;
    priv->timeout_ms = conf->cache_timeout;
    pthread_mutex_unlock(&priv->lock);
}


static int
qr_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct qr_priv *priv;
    int rc;

    priv = vl_calloc(xl, 1, sizeof(*priv), QR_MT_PRIV);
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
    xl->priv = priv;
    qr_limits_set(priv, VL_CONF(xl, struct qr_conf));
    return 0;
}


static void
qr_fini(vl_xlator_t *xl)
{
    struct qr_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    qr_cache_clear(xl);
    xl->priv = NULL;
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
}


static int
qr_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    struct qr_priv *priv = xl->priv;

    (void)err;
    qr_limits_set(priv, new_conf);
    qr_cache_shrink(xl); /* smaller limits apply at once */
    return 0;
}


static void
qr_forget(vl_xlator_t *xl, vl_inode_t *inode)
{
    qr_cache_drop(xl, inode);
}


/* Another client changed a file (the bricks' cache invalidation): its
 * cached copy goes now rather than at cache-timeout, so that a reader
 * that opens it after the writer closed it reads the new content. A
 * brick's lost connection drops every copy. */
static int
qr_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    const struct vl_upcall *up = data;
    vl_inode_t *inode;

    if (ev == VL_EV_UPCALL && up != NULL && xl->priv != NULL) {
        if (up->is_all) {
            qr_cache_clear(xl);
        } else if (up->kind == VL_UPCALL_INVALIDATE
                   && !vl_gfid_is_null(&up->gfid)) {
            inode = vl_inode_find(xl->graph->itable, &up->gfid);
            qr_cache_drop(xl, inode);
            vl_inode_unref(inode);
        }
    }
    return vl_notify_default(xl, ev, data);
}


/* statedump's account of cached data (libvol's cache_usage). */
static void
qr_cache_usage(vl_xlator_t *xl, uint64_t *bytes, uint64_t *limit)
{
    struct qr_priv *priv = xl->priv;

    pthread_mutex_lock(&priv->lock);
    *bytes = priv->bytes;
    *limit = priv->cache_size;
    pthread_mutex_unlock(&priv->lock);
}


static void
qr_dump(vl_xlator_t *xl, FILE *out)
{
    struct qr_priv *priv = xl->priv;
    uint64_t bytes, n_files;

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    bytes = priv->bytes;
    n_files = priv->n_files;
    pthread_mutex_unlock(&priv->lock);
    fprintf(out, "bytes_cached=%llu\nfiles_cached=%llu\nhits=%llu\n"
            "misses=%llu\nlocal_opens=%llu\nreal_opens=%llu\n"
            "open_fails=%llu\nfills=%llu\nrdp_fills=%llu\nrdp_used=%llu\n"
            "rdp_skipped=%llu\ndrops=%llu\nevictions=%llu\nlazy_fds=%llu\n"
            "keeper_opens=%llu\nkeeper_fails=%llu\nkeeper_lookups=%llu\n",
            (unsigned long long)bytes, (unsigned long long)n_files,
            (unsigned long long)atomic_load(&priv->hits),
            (unsigned long long)atomic_load(&priv->misses),
            (unsigned long long)atomic_load(&priv->local_opens),
            (unsigned long long)atomic_load(&priv->real_opens),
            (unsigned long long)atomic_load(&priv->open_fails),
            (unsigned long long)atomic_load(&priv->fills),
            (unsigned long long)atomic_load(&priv->rdp_fills),
            (unsigned long long)atomic_load(&priv->rdp_used),
            (unsigned long long)atomic_load(&priv->rdp_skipped),
            (unsigned long long)atomic_load(&priv->drops),
            (unsigned long long)atomic_load(&priv->evictions),
            (unsigned long long)atomic_load(&priv->n_lazy),
            (unsigned long long)atomic_load(&priv->keeper_opens),
            (unsigned long long)atomic_load(&priv->keeper_fails),
            (unsigned long long)atomic_load(&priv->keeper_lookups));
}


/* /metrics: reads of cached files answered here, small-file reads sent
 * down, and the bytes cached (doc/metrics.md, mortar_cache_*). */
static void
qr_metrics(vl_xlator_t *xl, vl_metrics_sink_t *sink)
{
    struct qr_priv *priv = xl->priv;
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


static const vl_option_t qr_options[] = {
    VL_OPT_BOOL("open-behind", struct qr_conf, is_open_behind, .def = "on",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.open-behind"},
                .doc = "Answer read-only opens of small files without "
                       "opening them on the brick (content cached, or "
                       "fetched with one lookup); they are opened there "
                       "only if a fop needs it."),
    VL_OPT_TIME("cache-timeout", struct qr_conf, cache_timeout, .min = 0,
                .max = 3600 * 1000LL, .def = "1s",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.quick-read-cache-timeout",
                            "performance.qr-cache-timeout"},
                .doc = "How long a cached copy is served after the last "
                       "lookup or stat that confirmed its attributes."),
    VL_OPT_SIZE("max-file-size", struct qr_conf, max_file_size, .min = 0,
                .max = QR_MAX_FILE_SIZE, .def = "64KiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .doc = "Largest file whose content lookups fetch and the "
                       "cache keeps (0: none)."),
    VL_OPT_SIZE("readdirp-content", struct qr_conf, readdirp_content,
                .min = 0, .max = QR_MAX_FILE_SIZE, .def = "64KiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .doc = "Largest file whose content a directory listing "
                       "(readdirplus) fetches with its entry, so that "
                       "reading it after the listing costs no round trip "
                       "(0: none; never more than max-file-size). A "
                       "brick's reply carries at most 256 KiB (or the "
                       "size asked) of records and content."),
    VL_OPT_SIZE("cache-size", struct qr_conf, cache_size, .min = 0,
                .max = 64 * 1024 * 1024 * 1024LL, .def = "16MiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.quick-read-cache-size"},
                .doc = "Memory for cached content in total; the least "
                       "recently validated files are evicted first. "
                       "mortard sets it to quick-read's share of "
                       "performance.cache-size unless it is set "
                       "itself."),
    VL_OPT_END,
};

static const char *const qr_mem_types[] = {"misc", "priv", NULL};

const vl_xlator_class_t xl_performance_quick_read = {
    .abi = VL_XLATOR_ABI,
    .type = "performance/quick-read",
    .prefix = "quick-read",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct qr_conf),
    .req_priv_size = sizeof(struct qr_local),
    .inode_ctx_size = sizeof(struct qr_inode),
    .fd_ctx_size = sizeof(struct qr_fd),
    .options = qr_options,
    .mem_types = qr_mem_types,
    .doc = "Fetches the content of small files with their lookup and "
           "serves opens (open-behind) and reads of them from that cache, "
           "so reading a small file costs one round trip.",
    .init = qr_init,
    .fini = qr_fini,
    .reconfigure = qr_reconfigure,
    .forget = qr_forget,
    .notify = qr_notify,
    .release = qr_release,
    .dump = qr_dump,
    .metrics = qr_metrics,
    .cache_usage = qr_cache_usage,
    .fops = {
        [VL_FOP_LOOKUP] = qr_lookup,
        [VL_FOP_STAT] = qr_stat,
        [VL_FOP_READDIR] = qr_readdir,
        [VL_FOP_OPEN] = qr_open,
        [VL_FOP_READ] = qr_read,
        [VL_FOP_FLUSH] = qr_flush,
        [VL_FOP_FSYNC] = qr_fd_fop,
        [VL_FOP_LK] = qr_fd_fop,
        [VL_FOP_LSEEK] = qr_fd_fop,
        [VL_FOP_RCHECKSUM] = qr_fd_fop,
        [VL_FOP_SETATTR] = qr_setattr,
        [VL_FOP_WRITE] = qr_write,
        [VL_FOP_FALLOCATE] = qr_fallocate,
        [VL_FOP_COPY_FILE_RANGE] = qr_copy_file_range,
        [VL_FOP_UNLINK] = qr_loc_change,
        [VL_FOP_RENAME] = qr_loc_change,
        [VL_FOP_LINK] = qr_loc_change,
        [VL_FOP_SETXATTR] = qr_loc_change,
        [VL_FOP_REMOVEXATTR] = qr_loc_change,
    },
};
