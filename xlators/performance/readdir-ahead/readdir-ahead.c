/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * readdir-ahead: prefetch the rest of a directory listed sequentially.
 *
 * A READDIR (with or without plus) at offset 0 starts a stream on its
 * fd: it goes down as it came, and once answered the entries that follow
 * its last cookie are fetched in the background by READDIRs of
 * request-size bytes of the same kind, while the fd holds fewer than
 * high-wmark bytes of records (FUSE's record size). A READDIR that
 * carries the cookie the stream expects is answered from those entries
 * (as many as fit its size), waits for the prefetch in flight when none
 * are left, or is answered with the end of the directory when the
 * stream reached it; whenever the fd holds fewer than low-wmark bytes
 * another prefetch goes out. A READDIR at any other cookie (seekdir) or
 * of the other kind drops the stream and goes down; one at 0 starts a
 * new stream. Requests asking for file content (quick-read's
 * content_max) pass untouched.
 *
 * Stale names and attributes are the risk. Every change through this
 * client of a directory's names (create, mknod, mkdir, symlink, link,
 * unlink, rmdir, rename: each directory involved) bumps that directory's
 * generation before it is wound and again once answered, and every fop
 * that changes some object's attributes (those and setattr, write,
 * fallocate, copy_file_range, xattr changes, open with O_TRUNC) bumps an
 * attribute epoch the same way. Entries are served only while the
 * generation and (with plus) the attribute epoch they were fetched under
 * are current, and a prefetch that raced a change keeps nothing: so a
 * listing never shows a name removed, or attributes older than a change
 * made, through this client before the READDIR was asked. A brick's
 * cache invalidation (VL_EV_UPCALL: another client changed something, or
 * a brick connection went away) bumps an epoch that drops every stream.
 * A dropped stream goes on from the cookie it expects: that READDIR goes
 * down and prefetching starts again after it.
 *
 * Intercepts: readdir; every fop that modifies (VL_F_MODIFY), open with
 *             O_TRUNC; release; notify (UPCALL).
 * Per fd:     struct rda_fd (the stream and its entries), freed on
 *             release; a prefetch in flight holds a ref on the fd.
 * Per inode:  struct rda_inode (a directory's generation).
 * Per req:    struct rda_local.
 * Threads:    any; fd->lock guards struct rda_fd and is never held across
 *             vl_wind, vl_pass or vl_unwind.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "readdir-ahead.h"


static void rda_prefetch(vl_xlator_t *xl, vl_fd_t *fd, uint32_t stream_id,
                         int64_t off, bool is_plus);


/* ---- stamps ---- */

static struct rda_stamp
rda_stamp_now(vl_xlator_t *xl, vl_inode_t *dir)
{
    struct rda_priv *priv = xl->priv;
    struct rda_inode *ri = dir != NULL ? vl_inode_ctx(dir, xl) : NULL;

    return (struct rda_stamp){
        .gen = ri != NULL ? atomic_load(&ri->gen) : 0,
        .attr_epoch = atomic_load(&priv->attr_epoch),
        .all_epoch = atomic_load(&priv->all_epoch),
    };
}


/* Whether entries fetched under a are still good at b: attributes only
 * matter to a stream that carries them. */
static bool
rda_stamp_same(const struct rda_stamp *a, const struct rda_stamp *b,
               bool is_plus)
{
    return a->gen == b->gen && a->all_epoch == b->all_epoch
           && (!is_plus || a->attr_epoch == b->attr_epoch);
}


/* Bytes an entry takes in FUSE's reply buffer (the unit of size). */
static size_t
rda_dirent_cost(const char *name, bool plus)
{
    size_t len = (24 + strlen(name) + 7) & ~(size_t)7;

    return plus ? len + 128 : len;
}


static size_t
rda_dirent_mem(const struct vl_dirent *e)
{
    return sizeof(*e) + (e->name != NULL ? strlen(e->name) + 1 : 0);
}


/* ---- the stream's entries (fd->lock) ---- */

/* Frees the unread entries; the stream itself stays. Returns a waiter
 * the caller must send down after unlocking (NULL if none). */
static vl_req_t *
rda_cache_clear_locked(vl_xlator_t *xl, struct rda_fd *file)
{
    struct rda_priv *priv = xl->priv;
    vl_req_t *waiter = file->waiter;

    vl_dirent_list_clear(&file->cache); /* names of read ones are NULL */
    file->head = 0;
    file->cached_cost = 0;
    atomic_fetch_sub(&priv->bytes, file->mem);
    file->mem = 0;
    file->is_eof = false;
    file->waiter = NULL;
    return waiter;
}


/* Ends the stream: its entries go, and a prefetch in flight keeps
 * nothing when it answers. */
static vl_req_t *
rda_stream_drop_locked(vl_xlator_t *xl, struct rda_fd *file)
{
    vl_req_t *waiter = rda_cache_clear_locked(xl, file);

    file->has_stream = false;
    file->is_busy = false;
    file->stream_id++;
    return waiter;
}


/* Moves the unread entries that fit req's size into its reply. Returns
 * 0, or -ENOMEM with nothing taken. */
static int
rda_serve_locked(vl_xlator_t *xl, struct rda_fd *file, vl_req_t *req)
{
    struct rda_priv *priv = xl->priv;
    struct vl_readdir_args *a = VL_ARGS(req, readdir);
    struct vl_dirent_list *out = &req->reply.entries;
    size_t k = 0, used = 0, mem = 0, avail = file->cache.n - file->head;
    struct vl_dirent *src = file->cache.ents + file->head;

    while (k < avail) {
        size_t cost = rda_dirent_cost(src[k].name, file->is_plus);

        /* The first entry goes in anyway: a READDIR makes progress. */
        if (k > 0 && used + cost > a->size)
            break;
        used += cost;
        mem += rda_dirent_mem(&src[k]);
        k++;
    }
    if (k > 0) {
        out->ents = vl_malloc(xl, k * sizeof(*out->ents), VL_MT_DIRENT);
        if (out->ents == NULL)
            return -ENOMEM;
        memcpy(out->ents, src, k * sizeof(*out->ents));
        for (size_t i = 0; i < k; i++)
            src[i].name = NULL; /* moved to the reply */
        out->n = out->cap = k;
        file->head += k;
        file->cached_cost -= used;
        file->mem -= mem;
        atomic_fetch_sub(&priv->bytes, mem);
        file->expected = out->ents[k - 1].off;
    }
    out->eof = file->head == file->cache.n && file->is_eof;
    if (file->head == file->cache.n) {
        bool is_eof = file->is_eof;

        vl_dirent_list_clear(&file->cache);
        file->head = 0;
        file->is_eof = is_eof;
    } else if (file->head >= 64 && file->head * 2 >= file->cache.n) {
        /* Keep the array from growing with a long listing. */
        memmove(file->cache.ents, file->cache.ents + file->head,
                (file->cache.n - file->head) * sizeof(*file->cache.ents));
        file->cache.n -= file->head;
        file->head = 0;
    }
    return 0;
}


/* Whether a prefetch should go out now (low: below low-wmark; else
 * below high-wmark, right after one answered). */
static bool
rda_want_prefetch_locked(vl_xlator_t *xl, const struct rda_fd *file,
                         bool is_low)
{
    struct rda_priv *priv = xl->priv;
    uint64_t mark = is_low ? atomic_load(&priv->low_wmark)
                           : atomic_load(&priv->high_wmark);

    return file->has_stream && !file->is_busy && !file->is_eof
           && file->cached_cost < mark;
}


/* ---- readdir ---- */

static void
rda_miss_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct rda_local *local = VL_REQ_PRIV(req, struct rda_local);
    struct vl_readdir_args *a = VL_ARGS(req, readdir);
    struct rda_fd *file = vl_fd_ctx(a->fd, xl);
    const struct vl_dirent_list *list = &r->reply.entries;
    int status = r->status;
    bool do_fetch = false;
    int64_t off = 0;

    pthread_mutex_lock(&a->fd->lock);
    if (status == 0 && file->stream_id == local->stream_id
        && file->has_stream) {
        if (list->n > 0) {
            file->expected = list->ents[list->n - 1].off;
            file->fetch_off = file->expected;
        }
        file->is_eof = list->eof || list->n == 0;
        do_fetch = rda_want_prefetch_locked(xl, file, false);
        if (do_fetch) {
            file->is_busy = true;
            off = file->fetch_off;
        }
    }
    pthread_mutex_unlock(&a->fd->lock);
    vl_reply_move(req, r);
    if (do_fetch)
        rda_prefetch(xl, a->fd, local->stream_id, off, a->plus);
    vl_unwind(req, status);
}


/* Sends req down; with a stream, its answer feeds it. */
static void
rda_miss(vl_xlator_t *xl, vl_req_t *req, bool has_stream, uint32_t id)
{
    struct rda_priv *priv = xl->priv;
    struct rda_local *local = VL_REQ_PRIV(req, struct rda_local);
    vl_req_t *r;

    atomic_fetch_add(&priv->misses, 1);
    if (!has_stream) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    local->stream_id = id;
    vl_wind(r, rda_miss_done, req);
}


enum rda_how {
    RDA_PASS,   /* not ours: down untouched */
    RDA_MISS,   /* down, and its answer feeds the stream */
    RDA_SERVED, /* reply filled from the cache */
    RDA_NOMEM,  /* answer -ENOMEM */
    RDA_WAIT,   /* waits for the prefetch in flight */
};


static void
rda_readdir(vl_xlator_t *xl, vl_req_t *req)
{
    struct rda_priv *priv = xl->priv;
    struct vl_readdir_args *a = VL_ARGS(req, readdir);
    vl_fd_t *fd = a->fd;
    struct rda_fd *file;
    struct rda_stamp now;
    vl_req_t *orphan = NULL;
    enum rda_how how = RDA_PASS;
    bool do_fetch = false;
    int64_t off = 0;
    uint32_t id = 0;

    if (fd == NULL || a->content_max != 0 || a->size == 0) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    file = vl_fd_ctx(fd, xl);
    now = rda_stamp_now(xl, fd->inode);

    pthread_mutex_lock(&fd->lock);
    if (file->has_stream
        && (a->offset != file->expected || a->plus != file->is_plus)) {
        /* A seek, a rewind or the other kind: the stream is of no use. */
        orphan = rda_stream_drop_locked(xl, file);
        if (a->offset != 0)
            atomic_fetch_add(&priv->seek_drops, 1);
    }
    if (!file->has_stream && a->offset == 0) {
        file->has_stream = true;
        file->is_plus = a->plus;
        file->expected = 0;
        file->stamp = now;
    }
    if (file->has_stream) {
        id = file->stream_id;
        if (!rda_stamp_same(&file->stamp, &now, file->is_plus)) {
            /* Something changed since these entries were read: read on
             * from here afresh. */
            if (file->cache.n > 0 || file->is_eof || file->is_busy)
                atomic_fetch_add(&priv->inval_drops, 1);
            orphan = rda_cache_clear_locked(xl, file);
            file->is_busy = false;
            file->stream_id++;
            id = file->stream_id;
            file->stamp = now;
            how = RDA_MISS;
        } else if (file->head < file->cache.n || file->is_eof) {
            how = rda_serve_locked(xl, file, req) == 0 ? RDA_SERVED
                                                       : RDA_NOMEM;
            do_fetch = rda_want_prefetch_locked(xl, file, true);
        } else if (file->is_busy && file->waiter == NULL) {
            file->waiter = req;
            how = RDA_WAIT;
        } else {
            how = RDA_MISS;
        }
        if (do_fetch) {
            file->is_busy = true;
            off = file->fetch_off;
        }
    }
    pthread_mutex_unlock(&fd->lock);

    if (orphan != NULL)
        vl_pass(orphan, VL_FIRST_CHILD(xl));
    switch (how) {
    case RDA_PASS:
        vl_pass(req, VL_FIRST_CHILD(xl));
        break;
    case RDA_MISS:
        rda_miss(xl, req, true, id);
        break;
    case RDA_SERVED:
        atomic_fetch_add(&priv->hits, 1);
        vl_unwind(req, 0);
        break;
    case RDA_NOMEM:
        vl_unwind(req, -ENOMEM);
        break;
    case RDA_WAIT:
        atomic_fetch_add(&priv->waits, 1);
        break;
    }
    if (do_fetch)
        rda_prefetch(xl, fd, id, off, file->is_plus);
}


/* ---- prefetch ---- */

/* Appends r's entries to the stream; -ENOMEM keeps none. */
static int
rda_append_locked(vl_xlator_t *xl, struct rda_fd *file, vl_req_t *r)
{
    struct rda_priv *priv = xl->priv;
    struct vl_dirent_list *in = &r->reply.entries;
    struct vl_dirent_list *c = &file->cache;
    size_t mem = 0, cost = 0;

    if (in->n > 0) {
        if (c->n + in->n > c->cap) {
            size_t cap = c->n + in->n;
            struct vl_dirent *ents =
                c->ents == NULL
                    ? vl_malloc(NULL, cap * sizeof(*ents), VL_MT_DIRENT)
                    : vl_realloc(c->ents, cap * sizeof(*ents));

            if (ents == NULL)
                return -ENOMEM;
            c->ents = ents;
            c->cap = cap;
        }
        for (size_t i = 0; i < in->n; i++) {
            mem += rda_dirent_mem(&in->ents[i]);
            cost += rda_dirent_cost(in->ents[i].name, file->is_plus);
        }
        memcpy(c->ents + c->n, in->ents, in->n * sizeof(*in->ents));
        c->n += in->n;
        file->fetch_off = in->ents[in->n - 1].off;
        /* The names are the cache's now; r keeps an empty list. */
        vl_free(in->ents);
        memset(in, 0, sizeof(*in));
    }
    file->cached_cost += cost;
    file->mem += mem;
    atomic_fetch_add(&priv->bytes, mem);
    return 0;
}


/* A prefetch's own state (the child's private area is the child's). */
struct rda_fetch {
    vl_xlator_t *xl;        /* borrowed; this translator */
    vl_fd_t *fd;            /* owned ref until the prefetch answers */
    uint32_t stream_id;     /* the stream it reads for */
    struct rda_stamp stamp; /* the stamps when it was wound */
};


static void
rda_prefetch_done(vl_req_t *r, void *cookie)
{
    struct rda_fetch *local = cookie;
    vl_fd_t *fd = local->fd;
    vl_xlator_t *xl = local->xl;
    struct rda_priv *priv = xl->priv;
    struct rda_fd *file = vl_fd_ctx(fd, xl);
    struct rda_stamp now = rda_stamp_now(xl, fd->inode);
    vl_req_t *waiter = NULL;
    enum rda_how how = RDA_PASS;
    bool do_fetch = false, is_plus;
    int64_t off = 0;
    uint32_t id = local->stream_id;
    size_t n = r->reply.entries.n;
    int status = r->status;

    pthread_mutex_lock(&fd->lock);
    is_plus = file->is_plus;
    if (file->stream_id != id || !file->has_stream) {
        /* Dropped meanwhile: its waiter, if any, was sent down. */
        pthread_mutex_unlock(&fd->lock);
        vl_fd_unref(fd);
        vl_free(local);
        return;
    }
    file->is_busy = false;
    waiter = file->waiter;
    file->waiter = NULL;
    if (status != 0) {
        atomic_fetch_add(&priv->prefetch_errors, 1);
    } else if (!rda_stamp_same(&local->stamp, &now, is_plus)
               || !rda_stamp_same(&file->stamp, &now, is_plus)) {
        /* Raced a change: the brick may have listed the old names. The
         * waiter reads on from the bricks (and restarts the stream). */
        atomic_fetch_add(&priv->inval_drops, 1);
    } else if (rda_append_locked(xl, file, r) != 0) {
        status = -ENOMEM;
    } else {
        atomic_fetch_add(&priv->prefetch_entries, n);
        if (r->reply.entries.eof || n == 0)
            file->is_eof = true;
        if (waiter != NULL) {
            how = rda_serve_locked(xl, file, waiter) == 0 ? RDA_SERVED
                                                          : RDA_NOMEM;
        }
        do_fetch = rda_want_prefetch_locked(xl, file, false);
        if (do_fetch) {
            file->is_busy = true;
            off = file->fetch_off;
        }
    }
    pthread_mutex_unlock(&fd->lock);

    if (waiter != NULL) {
        if (how == RDA_SERVED) {
            atomic_fetch_add(&priv->hits, 1);
            vl_unwind(waiter, 0);
        } else if (how == RDA_NOMEM) {
            vl_unwind(waiter, -ENOMEM);
        } else {
            /* No entries for it here: it goes down itself and feeds the
             * stream again (a miss at the expected cookie). */
            rda_miss(xl, waiter, true, id);
        }
    }
    if (do_fetch)
        rda_prefetch(xl, fd, id, off, is_plus);
    vl_fd_unref(fd);
    vl_free(local);
}


/* Winds a READDIR after off for the stream id of fd (is_busy is set). */
static void
rda_prefetch(vl_xlator_t *xl, vl_fd_t *fd, uint32_t stream_id, int64_t off,
             bool is_plus)
{
    struct rda_priv *priv = xl->priv;
    struct rda_fd *file = vl_fd_ctx(fd, xl);
    struct rda_fetch *local = NULL;
    vl_req_t *r = NULL, *waiter = NULL;
    bool is_capped = atomic_load(&priv->bytes)
                     >= atomic_load(&priv->cache_limit);

    if (!is_capped) {
        local = vl_calloc(xl, 1, sizeof(*local), RDA_MT_MISC);
        if (local != NULL)
            r = vl_req_new_op(NULL, VL_FIRST_CHILD(xl), VL_FOP_READDIR);
    }
    if (r == NULL) {
        vl_free(local);
        /* No prefetch: the next READDIR that finds nothing goes down. */
        if (is_capped)
            atomic_fetch_add(&priv->cap_skips, 1);
        pthread_mutex_lock(&fd->lock);
        if (file->stream_id == stream_id) {
            file->is_busy = false;
            waiter = file->waiter;
            file->waiter = NULL;
        }
        pthread_mutex_unlock(&fd->lock);
        if (waiter != NULL)
            rda_miss(xl, waiter, true, stream_id);
        return;
    }
    local->xl = xl;
    local->fd = vl_fd_ref(fd);
    local->stream_id = stream_id;
    local->stamp = rda_stamp_now(xl, fd->inode);
    VL_ARGS(r, readdir)->fd = fd;
    VL_ARGS(r, readdir)->offset = off;
    VL_ARGS(r, readdir)->plus = is_plus;
    VL_ARGS(r, readdir)->size = atomic_load(&priv->request_size);
    atomic_fetch_add(&priv->prefetches, 1);
    vl_wind(r, rda_prefetch_done, local);
}


/* ---- changes: nothing read before or during one outlives it ---- */

static void
rda_bump(vl_xlator_t *xl, const struct rda_local *local)
{
    struct rda_priv *priv = xl->priv;
    vl_inode_t *dirs[2] = {local->dir1, local->dir2};

    if (local->is_ns) {
        for (int i = 0; i < 2; i++) {
            struct rda_inode *ri =
                dirs[i] != NULL ? vl_inode_ctx(dirs[i], xl) : NULL;

            if (ri != NULL)
                atomic_fetch_add(&ri->gen, 1);
        }
        /* A name without its directory: no stream is trusted. */
        if (local->dir1 == NULL && local->dir2 == NULL)
            atomic_fetch_add(&priv->all_epoch, 1);
    }
    /* Every change moves some listed object's attributes: the object's
     * own, or the directory's times as its parent lists it. */
    atomic_fetch_add(&priv->attr_epoch, 1);
}


static void
rda_change_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    int status = r->status;

    /* Again: a prefetch wound while the change was in flight may have
     * listed the old state. */
    rda_bump(req->xl, VL_REQ_PRIV(req, struct rda_local));
    vl_reply_move(req, r);
    vl_unwind(req, status);
}


static void
rda_change(vl_xlator_t *xl, vl_req_t *req)
{
    struct rda_local *local = VL_REQ_PRIV(req, struct rda_local);
    const struct vl_loc *loc = NULL, *loc2 = NULL;
    vl_req_t *r;

    local->is_ns = vl_req_entry_locs(req, &loc, &loc2);
    local->dir1 = loc != NULL ? loc->parent : NULL; /* borrowed from args */
    local->dir2 = loc2 != NULL ? loc2->parent : NULL;
    rda_bump(xl, local);
    r = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (r == NULL) {
        /* Nothing changed; the bump only dropped entries. */
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, rda_change_done, req);
}


static void
rda_open(vl_xlator_t *xl, vl_req_t *req)
{
    if (!(VL_ARGS(req, open)->flags & O_TRUNC)) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    rda_change(xl, req);
}


/* ---- the end of an fd ---- */

static void
rda_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct rda_fd *file = vl_fd_ctx(fd, xl);
    vl_req_t *waiter;

    /* No prefetch is in flight (it holds a ref on fd), so no waiter. */
    pthread_mutex_lock(&fd->lock);
    waiter = rda_stream_drop_locked(xl, file);
    pthread_mutex_unlock(&fd->lock);
    if (waiter != NULL)
        vl_pass(waiter, VL_FIRST_CHILD(xl));
}


/* ---- events ---- */

static int
rda_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    struct rda_priv *priv = xl->priv;
    const struct vl_upcall *up = data;

    /* A brick says another client changed something (or it can no
     * longer say so): attributes only when that is all it says, else
     * names too, of any directory. */
    if (priv != NULL && ev == VL_EV_UPCALL && up != NULL) {
        if (!up->is_all && up->kind == VL_UPCALL_INVALIDATE
            && !(up->flags & VL_INVAL_ENTRY))
            atomic_fetch_add(&priv->attr_epoch, 1);
        else
            atomic_fetch_add(&priv->all_epoch, 1);
    }
    return vl_notify_default(xl, ev, data);
}


/* ---- class ---- */

static void
rda_limits_set(struct rda_priv *priv, const struct rda_conf *conf)
{
    atomic_store(&priv->request_size, conf->request_size);
    atomic_store(&priv->cache_limit, conf->cache_limit);
    atomic_store(&priv->low_wmark, conf->low_wmark);
    atomic_store(&priv->high_wmark, conf->high_wmark);
}


static int
rda_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct rda_priv *priv;

    priv = vl_calloc(xl, 1, sizeof(*priv), RDA_MT_PRIV);
    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    rda_limits_set(priv, VL_CONF(xl, struct rda_conf));
    xl->priv = priv;
    return 0;
}


static void
rda_fini(vl_xlator_t *xl)
{
    struct rda_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    xl->priv = NULL;
    vl_free(priv);
}


static int
rda_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    (void)err;
    /* Entries held stay; the next prefetch uses the new sizes. */
    rda_limits_set(xl->priv, new_conf);
    return 0;
}


/* statedump's account of cached data (libvol's cache_usage). */
static void
rda_cache_usage(vl_xlator_t *xl, uint64_t *bytes, uint64_t *limit)
{
    struct rda_priv *priv = xl->priv;

    *bytes = atomic_load(&priv->bytes);
    *limit = atomic_load(&priv->cache_limit);
}


static void
rda_dump(vl_xlator_t *xl, FILE *out)
{
    struct rda_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    fprintf(out, "request_size=%llu\ncache_limit=%llu\nlow_wmark=%llu\n"
            "high_wmark=%llu\nbytes=%llu\nhits=%llu\nmisses=%llu\n"
            "waits=%llu\nprefetches=%llu\nprefetch_entries=%llu\n"
            "prefetch_errors=%llu\ninval_drops=%llu\nseek_drops=%llu\n"
            "cap_skips=%llu\n",
            (unsigned long long)atomic_load(&priv->request_size),
            (unsigned long long)atomic_load(&priv->cache_limit),
            (unsigned long long)atomic_load(&priv->low_wmark),
            (unsigned long long)atomic_load(&priv->high_wmark),
            (unsigned long long)atomic_load(&priv->bytes),
            (unsigned long long)atomic_load(&priv->hits),
            (unsigned long long)atomic_load(&priv->misses),
            (unsigned long long)atomic_load(&priv->waits),
            (unsigned long long)atomic_load(&priv->prefetches),
            (unsigned long long)atomic_load(&priv->prefetch_entries),
            (unsigned long long)atomic_load(&priv->prefetch_errors),
            (unsigned long long)atomic_load(&priv->inval_drops),
            (unsigned long long)atomic_load(&priv->seek_drops),
            (unsigned long long)atomic_load(&priv->cap_skips));
}


/* /metrics: readdirs answered from the cache, readdirs sent down, and
 * the bytes of entries held (doc/metrics.md, mortar_cache_*). */
static void
rda_metrics(vl_xlator_t *xl, vl_metrics_sink_t *sink)
{
    struct rda_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    vl_metrics_emit_cache(sink, atomic_load(&priv->hits),
                          atomic_load(&priv->misses));
    vl_metrics_emit_cache_bytes(sink, atomic_load(&priv->bytes));
}


static const vl_option_t rda_options[] = {
    VL_OPT_SIZE("request-size", struct rda_conf, request_size,
                .min = 4096, .max = 131072, .def = "128KiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.rda-request-size"},
                .doc = "Reply budget of one prefetch READDIR (FUSE record "
                       "bytes)."),
    VL_OPT_SIZE("cache-limit", struct rda_conf, cache_limit,
                .min = 0, .max = 64 * 1024 * 1024 * 1024LL,
                .def = "2MiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.rda-cache-limit"},
                .doc = "Memory for prefetched entries, all directory fds "
                       "together; no prefetch is sent while it is "
                       "reached (the READDIRs go down themselves). "
                       "mortard sets it to readdir-ahead's share of "
                       "performance.cache-size unless it is set itself."),
    VL_OPT_SIZE("low-wmark", struct rda_conf, low_wmark,
                .min = 0, .max = 10 * 1024 * 1024, .def = "4KiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.rda-low-wmark"},
                .doc = "An fd's prefetched records below this many bytes "
                       "send another prefetch."),
    VL_OPT_SIZE("high-wmark", struct rda_conf, high_wmark,
                .min = 0, .max = 100 * 1024 * 1024, .def = "128KiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.rda-high-wmark"},
                .doc = "Prefetching of an fd goes on while it holds fewer "
                       "records than this many bytes."),
    VL_OPT_END,
};

static const char *const rda_mem_types[] = {"misc", "priv", NULL};

const vl_xlator_class_t xl_performance_readdir_ahead = {
    .abi = VL_XLATOR_ABI,
    .type = "performance/readdir-ahead",
    .prefix = "readdir-ahead",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct rda_conf),
    .req_priv_size = sizeof(struct rda_local),
    .inode_ctx_size = sizeof(struct rda_inode),
    .fd_ctx_size = sizeof(struct rda_fd),
    .options = rda_options,
    .mem_types = rda_mem_types,
    .doc = "Fetches the rest of a directory listed sequentially through "
           "one fd before it is asked for, and answers the listing from "
           "it.",
    .init = rda_init,
    .fini = rda_fini,
    .reconfigure = rda_reconfigure,
    .release = rda_release,
    .notify = rda_notify,
    .dump = rda_dump,
    .metrics = rda_metrics,
    .cache_usage = rda_cache_usage,
    .fops = {
        [VL_FOP_READDIR] = rda_readdir,
        [VL_FOP_OPEN] = rda_open,
        [VL_FOP_SETATTR] = rda_change,
        [VL_FOP_MKNOD] = rda_change,
        [VL_FOP_MKDIR] = rda_change,
        [VL_FOP_UNLINK] = rda_change,
        [VL_FOP_RMDIR] = rda_change,
        [VL_FOP_SYMLINK] = rda_change,
        [VL_FOP_RENAME] = rda_change,
        [VL_FOP_LINK] = rda_change,
        [VL_FOP_CREATE] = rda_change,
        [VL_FOP_WRITE] = rda_change,
        [VL_FOP_SETXATTR] = rda_change,
        [VL_FOP_REMOVEXATTR] = rda_change,
        [VL_FOP_FALLOCATE] = rda_change,
        [VL_FOP_COPY_FILE_RANGE] = rda_change,
        [VL_FOP_XATTROP] = rda_change,
    },
};
