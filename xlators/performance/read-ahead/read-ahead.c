/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * read-ahead: prefetch sequential reads into per-fd pages.
 *
 * A READ that starts where the fd's last read ended (or inside the pages
 * already fetched, or within a page of that end: the kernel's async
 * reads can arrive out of order) continues the fd's run; any other is
 * random, ends the run and drops the fd's pages. From the RA_SEQ_READS-th
 * read of a run on, page-count pages of RA_PAGE_SIZE from the run's end
 * are fetched by READs of their own, and fetched again once the reader
 * passed half of them. A read is answered from ready pages, waits for
 * pages in flight, or goes down as it came (ra-page.c).
 *
 * Stale data is the risk. Every change of a file through this client
 * (WRITE, SETATTR of the size, FALLOCATE in any mode: discard, zero
 * range, COPY_FILE_RANGE's target, OPEN or CREATE with O_TRUNC) bumps
 * the inode's generation before it is wound and again before it is
 * answered (struct ra_inode). A page carries the generation it was
 * fetched under and is served, or kept when its READ answers, only while
 * that is still the inode's: pages of every fd of the inode are dropped
 * at once (freed at their fd's next read, flush or release), and a page
 * whose READ raced the change is never kept. A brick's word that another
 * client changed data (VL_EV_UPCALL with VL_INVAL_DATA, or is_all) bumps
 * an epoch that every page carries too. A failed prefetch keeps nothing.
 *
 * Intercepts: read, write, setattr, fallocate, copy_file_range, open,
 *             create, flush; release; notify (UPCALL).
 * Per fd:     struct ra_file (pages, the run), freed on release.
 * Per inode:  struct ra_inode (generation).
 * Per req:    struct ra_local (waiter link; the inode a change bumps).
 * Threads:    any; fd->lock guards the fd's ra_file and pages and is
 *             never held across vl_wind, vl_pass or vl_unwind.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "read-ahead.h"


/* ---- stamps ---- */

static uint64_t
ra_inode_gen(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct ra_inode *ri = vl_inode_ctx(inode, xl);

    return ri != NULL ? atomic_load(&ri->gen) : 0;
}


uint64_t
ra_gen_now(vl_xlator_t *xl, vl_fd_t *fd)
{
    return ra_inode_gen(xl, fd->inode);
}


/* The file of inode (NULL: unknown, then every file) changes now. */
static void
ra_inode_bump(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct ra_priv *priv = xl->priv;
    struct ra_inode *ri = inode != NULL ? vl_inode_ctx(inode, xl) : NULL;

    if (ri != NULL)
        atomic_fetch_add(&ri->gen, 1);
    else
        atomic_fetch_add(&priv->epoch, 1);
}


/* ---- read ---- */

/* Reads that read-ahead leaves alone: direct I/O wants the brick's bytes
 * now; a write-only fd reads nothing worth keeping. */
static bool
ra_fd_is_ours(const vl_fd_t *fd)
{
    return fd != NULL && !(fd->flags & O_DIRECT)
           && (fd->flags & O_ACCMODE) != O_WRONLY;
}


/* Whether a read at offset continues file's run: (1) it starts where the
 * run ended, (2) inside the pages held, or (3) within a page of the end
 * (async reads overtaking one another). */
static bool
ra_is_sequential_locked(const struct ra_file *file, off_t offset)
{
    off_t lo = -1, hi = -1;

    for (const struct ra_page *p = file->pages; p != NULL; p = p->next) {
        if (lo < 0 || p->offset < lo)
            lo = p->offset;
        if (p->offset + RA_PAGE_SIZE > hi)
            hi = p->offset + RA_PAGE_SIZE;
    }
    return offset == file->expected                               /* (1) */
           || (lo >= 0 && offset >= lo && offset < hi)            /* (2) */
           || (file->n_seq > 0 && offset + RA_PAGE_SIZE >= file->expected
               && offset <= file->expected + RA_PAGE_SIZE);       /* (3) */
}


static void
ra_read_answer(vl_xlator_t *xl, vl_req_t *req, enum ra_serve how)
{
    struct ra_priv *priv = xl->priv;

    if (how == RA_SERVED) {
        atomic_fetch_add(&priv->hits, 1);
        vl_unwind(req, 0);
    } else if (how == RA_MISS) {
        atomic_fetch_add(&priv->misses, 1);
        vl_pass(req, VL_FIRST_CHILD(xl));
    }
}


static void
ra_read(vl_xlator_t *xl, vl_req_t *req)
{
    struct ra_priv *priv = xl->priv;
    struct vl_read_args *a = VL_ARGS(req, read);
    struct vl_caller caller = req->caller;
    struct ra_page *dead = NULL, *plan = NULL;
    struct ra_file *file;
    enum ra_serve how;
    uint64_t gen, epoch;
    uint32_t n_stale, n_random = 0;
    vl_fd_t *fd = a->fd;

    if (!ra_fd_is_ours(fd) || a->size == 0 || a->offset < 0) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    file = vl_fd_ctx(fd, xl);
    gen = ra_gen_now(xl, fd);
    epoch = atomic_load(&priv->epoch);

    pthread_mutex_lock(&fd->lock);
    n_stale = ra_file_check_locked(file, gen, epoch, &dead);
    if (ra_is_sequential_locked(file, a->offset)) {
        file->n_seq++;
        if (a->offset + (off_t)a->size > file->expected)
            file->expected = a->offset + (off_t)a->size;
        /* Pages the reader has passed by more than a page are of no
         * more use (a page behind stays for reads arriving late). */
        ra_file_drop_locked(file, a->offset - RA_PAGE_SIZE, &dead);
    } else {
        n_random = ra_file_drop_locked(file, -1, &dead);
        file->n_seq = 1;
        file->expected = a->offset + (off_t)a->size;
    }
    how = ra_file_serve_locked(file, req);
    if (file->n_seq >= RA_SEQ_READS)
        plan = ra_file_plan_locked(xl, file, fd, gen, epoch);
    pthread_mutex_unlock(&fd->lock);

    if (n_stale > 0)
        atomic_fetch_add(&priv->write_drops, n_stale);
    if (n_random > 0)
        atomic_fetch_add(&priv->random_drops, n_random);
    ra_pages_free(xl, dead);
    if (how == RA_WAIT)
        atomic_fetch_add(&priv->waits, 1);
    /* The read the reader needs now goes first, then the pages. req is
     * not touched after this (a waiting one may be answered already). */
    if (how != RA_WAIT)
        ra_read_answer(xl, req, how);
    ra_pages_fetch(xl, plan, &caller);
}


void
ra_read_resume(vl_xlator_t *xl, vl_req_t *req)
{
    struct ra_priv *priv = xl->priv;
    vl_fd_t *fd = VL_ARGS(req, read)->fd;
    struct ra_file *file = vl_fd_ctx(fd, xl);
    struct ra_page *dead = NULL;
    enum ra_serve how;
    uint32_t n_stale;

    pthread_mutex_lock(&fd->lock);
    n_stale = ra_file_check_locked(file, ra_gen_now(xl, fd),
                                   atomic_load(&priv->epoch), &dead);
    how = ra_file_serve_locked(file, req);
    pthread_mutex_unlock(&fd->lock);
    if (n_stale > 0)
        atomic_fetch_add(&priv->write_drops, n_stale);
    ra_pages_free(xl, dead);
    ra_read_answer(xl, req, how);
}


/* ---- changes: no page fetched before or during one outlives it ---- */

static void
ra_change_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct ra_local *local = VL_REQ_PRIV(req, struct ra_local);
    int status = r->status;

    /* Again: a prefetch wound while the change was in flight may have
     * read the old bytes. */
    ra_inode_bump(req->xl, local->inode);
    vl_reply_move(req, r);
    vl_unwind(req, status);
}


/* Winds req, a change of inode's data or size (NULL: unknown file). */
static void
ra_change(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode)
{
    struct ra_local *local = VL_REQ_PRIV(req, struct ra_local);
    vl_req_t *r;

    local->inode = inode; /* borrowed from the args until we unwind */
    ra_inode_bump(xl, inode);
    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        /* Nothing was changed; the bump only dropped pages. */
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, ra_change_done, req);
}


static vl_inode_t *
ra_fd_inode(vl_fd_t *fd)
{
    return fd != NULL ? fd->inode : NULL;
}


static void
ra_write(vl_xlator_t *xl, vl_req_t *req)
{
    ra_change(xl, req, ra_fd_inode(VL_ARGS(req, write)->fd));
}


static void
ra_setattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_setattr_args *a = VL_ARGS(req, setattr);

    if (!(a->valid & VL_SET_SIZE)) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    ra_change(xl, req, a->fd != NULL ? a->fd->inode : a->loc.inode);
}


static void
ra_fallocate(vl_xlator_t *xl, vl_req_t *req)
{
    ra_change(xl, req, ra_fd_inode(VL_ARGS(req, fallocate)->fd));
}


static void
ra_copy_file_range(vl_xlator_t *xl, vl_req_t *req)
{
    ra_change(xl, req, ra_fd_inode(VL_ARGS(req, copy_file_range)->fd_out));
}


static void
ra_open(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_open_args *a = VL_ARGS(req, open);

    if (!(a->flags & O_TRUNC)) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    ra_change(xl, req, a->loc.inode);
}


static void
ra_create(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_create_args *a = VL_ARGS(req, create);

    /* Without O_TRUNC an existing file keeps its bytes; a new one has
     * none cached. The inode of an existing file is unknown here. */
    if (!(a->flags & O_TRUNC)) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    ra_change(xl, req, NULL);
}


/* ---- the end of an fd ---- */

static void
ra_file_clear(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct ra_priv *priv = xl->priv;
    struct ra_file *file = vl_fd_ctx(fd, xl);
    struct ra_page *dead = NULL;
    uint32_t n;

    pthread_mutex_lock(&fd->lock);
    n = ra_file_drop_locked(file, -1, &dead);
    file->n_seq = 0;
    file->expected = 0;
    pthread_mutex_unlock(&fd->lock);
    if (n > 0)
        atomic_fetch_add(&priv->random_drops, n);
    ra_pages_free(xl, dead);
}


static void
ra_flush(vl_xlator_t *xl, vl_req_t *req)
{
    vl_fd_t *fd = VL_ARGS(req, flush)->fd;

    /* close(2): what comes after it (another process's open, a write
     * elsewhere) should find nothing of ours kept for this fd. */
    if (fd != NULL)
        ra_file_clear(xl, fd);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static void
ra_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    /* No page is busy: a busy page holds a ref on fd. */
    ra_file_clear(xl, fd);
}


/* ---- events ---- */

static int
ra_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    struct ra_priv *priv = xl->priv;
    const struct vl_upcall *up = data;

    /* Another client changed some file's data, or a brick that would
     * have said so is gone: no page of any file is trusted. */
    if (priv != NULL && ev == VL_EV_UPCALL && up != NULL
        && (up->is_all
            || (up->kind == VL_UPCALL_INVALIDATE
                && (up->flags & VL_INVAL_DATA))))
        atomic_fetch_add(&priv->epoch, 1);
    return vl_notify_default(xl, ev, data);
}


/* ---- class ---- */

static void
ra_limits_set(struct ra_priv *priv, const struct ra_conf *conf)
{
    atomic_store(&priv->page_count, conf->page_count);
    atomic_store(&priv->cache_limit, conf->cache_limit);
}


static int
ra_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct ra_priv *priv;

    priv = vl_calloc(xl, 1, sizeof(*priv), RA_MT_PRIV);
    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    ra_limits_set(priv, VL_CONF(xl, struct ra_conf));
    xl->priv = priv;
    return 0;
}


static void
ra_fini(vl_xlator_t *xl)
{
    struct ra_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    xl->priv = NULL;
    vl_free(priv);
}


static int
ra_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    (void)err;
    /* Windows already fetched stay; the next refill uses the new count. */
    ra_limits_set(xl->priv, new_conf);
    return 0;
}


/* statedump's account of cached data (libvol's cache_usage). */
static void
ra_cache_usage(vl_xlator_t *xl, uint64_t *bytes, uint64_t *limit)
{
    struct ra_priv *priv = xl->priv;

    *bytes = atomic_load(&priv->bytes);
    *limit = atomic_load(&priv->cache_limit);
}


static void
ra_dump(vl_xlator_t *xl, FILE *out)
{
    struct ra_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    fprintf(out, "page_size=%d\npage_count=%llu\ncache_limit=%llu\n"
            "bytes=%llu\nhits=%llu\nmisses=%llu\nwaits=%llu\n"
            "prefetches=%llu\nprefetch_bytes=%llu\nprefetch_errors=%llu\n"
            "write_drops=%llu\nrandom_drops=%llu\ncap_skips=%llu\n",
            RA_PAGE_SIZE,
            (unsigned long long)atomic_load(&priv->page_count),
            (unsigned long long)atomic_load(&priv->cache_limit),
            (unsigned long long)atomic_load(&priv->bytes),
            (unsigned long long)atomic_load(&priv->hits),
            (unsigned long long)atomic_load(&priv->misses),
            (unsigned long long)atomic_load(&priv->waits),
            (unsigned long long)atomic_load(&priv->prefetches),
            (unsigned long long)atomic_load(&priv->prefetch_bytes),
            (unsigned long long)atomic_load(&priv->prefetch_errors),
            (unsigned long long)atomic_load(&priv->write_drops),
            (unsigned long long)atomic_load(&priv->random_drops),
            (unsigned long long)atomic_load(&priv->cap_skips));
}


/* /metrics: reads answered from pages, reads sent down, and the bytes of
 * pages held or in flight (doc/metrics.md, mortar_cache_*). */
static void
ra_metrics(vl_xlator_t *xl, vl_metrics_sink_t *sink)
{
    struct ra_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    vl_metrics_emit_cache(sink, atomic_load(&priv->hits),
                          atomic_load(&priv->misses));
    vl_metrics_emit_cache_bytes(sink, atomic_load(&priv->bytes));
}


static const vl_option_t ra_options[] = {
    VL_OPT_UINT("page-count", struct ra_conf, page_count, .min = 1,
                .max = RA_MAX_PAGE_COUNT, .def = "4",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.read-ahead-page-count"},
                .doc = "Pages of 128 KiB fetched ahead of a sequential "
                       "reader of one fd."),
    VL_OPT_SIZE("cache-limit", struct ra_conf, cache_limit,
                .min = 0, .max = 64 * 1024 * 1024 * 1024LL,
                .def = "4MiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .doc = "Memory for pages held or in flight, all fds "
                       "together; a prefetch that would pass it is not "
                       "sent (the reads go down themselves). mortard "
                       "sets it to read-ahead's share of "
                       "performance.cache-size unless it is set itself."),
    VL_OPT_END,
};

static const char *const ra_mem_types[] = {"misc", "priv", "page", NULL};

const vl_xlator_class_t xl_performance_read_ahead = {
    .abi = VL_XLATOR_ABI,
    .type = "performance/read-ahead",
    .prefix = "read-ahead",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct ra_conf),
    .req_priv_size = sizeof(struct ra_local),
    .inode_ctx_size = sizeof(struct ra_inode),
    .fd_ctx_size = sizeof(struct ra_file),
    .options = ra_options,
    .mem_types = ra_mem_types,
    .doc = "Fetches the next pages of a file read sequentially through "
           "one fd before they are asked for, and answers the reads from "
           "them.",
    .init = ra_init,
    .fini = ra_fini,
    .reconfigure = ra_reconfigure,
    .release = ra_release,
    .notify = ra_notify,
    .dump = ra_dump,
    .metrics = ra_metrics,
    .cache_usage = ra_cache_usage,
    .fops = {
        [VL_FOP_READ] = ra_read,
        [VL_FOP_WRITE] = ra_write,
        [VL_FOP_SETATTR] = ra_setattr,
        [VL_FOP_FALLOCATE] = ra_fallocate,
        [VL_FOP_COPY_FILE_RANGE] = ra_copy_file_range,
        [VL_FOP_OPEN] = ra_open,
        [VL_FOP_CREATE] = ra_create,
        [VL_FOP_FLUSH] = ra_flush,
    },
};
