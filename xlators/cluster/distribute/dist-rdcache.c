/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-rdcache: per-fd cache of the bricks' readdir answers, so that a
 * directory listing costs about one round however many bricks there are.
 *
 * A directory fd keeps one slot per subvolume. A slot holds the batch
 * being listed from that brick (its entries, the brick cookie it was read
 * after, eof), possibly the batch that follows it (read ahead while the
 * first one goes up), and at most one read in flight. A readdir that
 * finds what follows its cookie in a batch answers without a round; one
 * that does not waits for a read of its brick, and the opened bricks
 * after it that have nothing cached are read at the same time (from their
 * start), so the whole listing of a small directory arrives in one
 * parallel round. opendir starts those reads at once (dist-readdir.c),
 * before the first readdir even comes.
 *
 * Bounded memory: two batches per subvolume (each at most what one readdir
 * of DIST_RD_BATCH_MAX returns); a slot the listing moved past is
 * emptied. Dropped: a readdir at offset 0 after the fd answered
 * one (rewinddir) drops every batch, and a read that was in flight then is
 * not kept; everything goes at release.
 *
 * Names only (issue 24): the reads ask the bricks for attributes
 * (readdirplus) unless the last readdir of the fd asked for names only;
 * storage/posix leaves link files out of a names-only listing, and the
 * entries' d_type tells directories, so the fill filters them as well
 * as with attributes. A batch of either kind answers a readdir of either
 * kind: attributes are dropped for a names-only caller, and a caller
 * that wanted them gets entries without (what replicate already does
 * for copies it cannot vouch for: mount/fuse gives the kernel the name
 * only, and it looks the name up when used). opendir comes before any
 * readdir says which kind it wants: it follows the last listing of the
 * graph (a mount with readdirplus off only ever lists names), and while
 * that was names only it asks for no first batch with the open (that
 * batch is a readdirplus) and its reads ask for names only.
 *
 * Content (quick-read): the reads ask the bricks for the content of small
 * files with the content_max of the last readdirplus that asked for it
 * (opendir's reads come before any readdir of the fd), so a listing of
 * small files still takes one round. A batch keeps the brick's buffer
 * the entries' content points into. The hint is one per process, kept
 * with the graph it was seen in (distribute sits in one client graph per
 * process, under one quick-read; a new graph, e.g. with quick-read
 * dropped, starts from 0; the first listing that asks for content
 * after the hint changed reads again what opendir read without it). Only
 * a hint: a batch with content is only
 * costlier to read, and the fill passes content on only to a caller
 * that asked for it.
 *
 * Intercepts: nothing (helpers of dist-readdir.c).
 * Per fd:     struct dist_rd_cache in dist_fd_ctx.rd_cache, guarded by
 *             fd->lock; freed at release. Each read in flight holds a ref
 *             on the fd.
 * Threads:    reads are wound from whichever thread needs them and land on
 *             the children's threads; fd->lock is held only to look at or
 *             change slots, never across a wind or a fill.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "dist-readdir.h"

/* One subvolume's part of the cache. */
struct dist_rd_slot {
    struct dist_rd_cache *cache;  /* borrowed; back pointer for reads */
    unsigned idx;                 /* subvolume index */
    struct dist_rd_batch *batch;  /* (fd->lock) owned ref, or NULL */
    struct dist_rd_batch *ahead;  /* (fd->lock) owned ref, or NULL: what
                                     follows batch, read ahead */
    bool is_busy;                 /* (fd->lock) a read is in flight */
    int64_t busy_from;            /* (fd->lock) cookie it reads after */
    unsigned busy_gen;            /* (fd->lock) cache gen it started in */
    struct dist_rd_fill *waiters; /* (fd->lock) fills waiting for it */
};

/* content_max of the last readdirplus and its graph (file comment). */
static atomic_uint dist_rd_content_max;
static _Atomic(const void *) dist_rd_content_graph;

struct dist_rd_cache {
    vl_xlator_t *xl;              /* borrowed; distribute */
    vl_fd_t *fd;                  /* borrowed; the cache lives in its ctx */
    bool has_answered;            /* (fd->lock) a readdir was answered */
    atomic_bool is_names_only;    /* the last readdir asked for no
                                     attributes: reads ask for none */
    unsigned gen;                 /* (fd->lock) bumped by each rewind */
    unsigned n;                   /* slots */
    struct dist_rd_slot slot[];   /* by subvolume index */
};


struct dist_rd_cache *
dist_rd_cache_get(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct dist_fd_ctx *ctx = vl_fd_ctx(fd, xl);
    struct dist_rd_cache *cache;
    unsigned n = dist_priv(xl)->n;

    pthread_mutex_lock(&fd->lock);
    cache = ctx->rd_cache;
    if (cache == NULL) {
        cache = vl_calloc(xl, 1, sizeof(*cache) + n * sizeof(cache->slot[0]),
                          DIST_MT_RDCACHE);
        if (cache != NULL) {
            cache->xl = xl;
            cache->fd = fd;
            cache->n = n;
            atomic_init(&cache->is_names_only,
                        atomic_load(&dist_priv(xl)->is_rd_names_only));
            for (unsigned i = 0; i < n; i++) {
                cache->slot[i].cache = cache;
                cache->slot[i].idx = i;
            }
            ctx->rd_cache = cache;
        }
    }
    pthread_mutex_unlock(&fd->lock);
    return cache;
}


uint32_t
dist_rd_content_hint(vl_xlator_t *xl)
{
    if (atomic_load(&dist_rd_content_graph) != (const void *)xl->graph)
        return 0;
    return atomic_load_explicit(&dist_rd_content_max, memory_order_relaxed);
}


void
dist_rd_content_hint_set(vl_xlator_t *xl, uint32_t content_max)
{
    if (dist_rd_content_hint(xl) == content_max)
        return; /* the usual case: no store shared between threads */
    atomic_store(&dist_rd_content_graph, (const void *)xl->graph);
    atomic_store_explicit(&dist_rd_content_max, content_max,
                          memory_order_relaxed);
}


void
dist_rd_batch_unref(struct dist_rd_batch *batch)
{
    if (batch == NULL || atomic_fetch_sub(&batch->refs, 1) != 1)
        return;
    vl_dirent_list_clear(&batch->list);
    vl_buf_unref(batch->buf);
    vl_free(batch);
}


void
dist_readdir_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct dist_fd_ctx *ctx = vl_fd_ctx(fd, xl);
    struct dist_rd_cache *cache = ctx->rd_cache;

    /* The last ref is gone: no read in flight, no fill waiting. */
    if (cache == NULL)
        return;
    for (unsigned i = 0; i < cache->n; i++) {
        dist_rd_batch_unref(cache->slot[i].batch);
        dist_rd_batch_unref(cache->slot[i].ahead);
    }
    vl_free(cache);
    ctx->rd_cache = NULL;
}


void
dist_rd_cache_rewind(struct dist_rd_cache *cache, bool is_forced)
{
    /* The batches are unreferenced after the lock is dropped: they are
     * collected in an array on the heap (2 per subvolume: too much for
     * the stack with many subvolumes). Without memory, under the lock:
     * unref takes no lock. */
    struct dist_rd_batch **old = vl_malloc(cache->xl,
                                           2 * cache->n * sizeof(*old),
                                           DIST_MT_RDCACHE);
    unsigned n_old = 0;

    pthread_mutex_lock(&cache->fd->lock);
    if (cache->has_answered || is_forced) {
        cache->has_answered = false;
        cache->gen++;
        for (unsigned i = 0; i < cache->n; i++) {
            if (old != NULL) {
                old[n_old++] = cache->slot[i].batch;
                old[n_old++] = cache->slot[i].ahead;
            } else {
                dist_rd_batch_unref(cache->slot[i].batch);
                dist_rd_batch_unref(cache->slot[i].ahead);
            }
            cache->slot[i].batch = NULL;
            cache->slot[i].ahead = NULL;
        }
    }
    pthread_mutex_unlock(&cache->fd->lock);
    for (unsigned i = 0; i < n_old; i++)
        dist_rd_batch_unref(old[i]);
    vl_free(old);
}


void
dist_rd_cache_mode_set(struct dist_rd_cache *cache, bool is_plus,
                       bool is_start)
{
    struct dist_priv *priv = dist_priv(cache->xl);

    atomic_store(&cache->is_names_only, !is_plus);
    /* A store shared by all threads only when the kind changes. */
    if (is_start && atomic_load(&priv->is_rd_names_only) == is_plus)
        atomic_store(&priv->is_rd_names_only, !is_plus);
}


bool
dist_rd_cache_is_names_only(struct dist_rd_cache *cache)
{
    return atomic_load(&cache->is_names_only);
}


bool
dist_rd_names_only_hint(vl_xlator_t *xl)
{
    return atomic_load(&dist_priv(xl)->is_rd_names_only);
}


void
dist_rd_cache_answered(struct dist_rd_cache *cache)
{
    pthread_mutex_lock(&cache->fd->lock);
    cache->has_answered = true;
    pthread_mutex_unlock(&cache->fd->lock);
}


bool
dist_rd_batch_match(const struct dist_rd_batch *batch, int64_t boff,
                    size_t *pos)
{
    if (batch->from == boff) {
        *pos = 0;
        return true;
    }
    /* A cookie inside the batch: continue after that entry (what the
     * brick would answer for it, as of when the batch was read). */
    for (size_t k = 0; k < batch->list.n; k++) {
        if (batch->list.ents[k].off == boff) {
            /* Past the last entry of a batch that is not the end: what
             * follows is in the next batch, not here. */
            if (k + 1 == batch->list.n && !batch->list.eof)
                return false;
            *pos = k + 1;
            return true;
        }
    }
    return false;
}


struct dist_rd_batch *
dist_rd_cache_find(struct dist_rd_cache *cache, unsigned idx, int64_t boff,
                   size_t *pos)
{
    struct dist_rd_slot *slot = &cache->slot[idx];
    struct dist_rd_batch *batch, *old = NULL;

    pthread_mutex_lock(&cache->fd->lock);
    batch = slot->batch;
    if (batch == NULL || !dist_rd_batch_match(batch, boff, pos)) {
        batch = slot->ahead;
        if (batch != NULL && dist_rd_batch_match(batch, boff, pos)) {
            /* The listing reached the batch read ahead. */
            old = slot->batch;
            slot->batch = batch;
            slot->ahead = NULL;
        } else {
            batch = NULL;
        }
    }
    if (batch != NULL)
        atomic_fetch_add(&batch->refs, 1);
    pthread_mutex_unlock(&cache->fd->lock);
    dist_rd_batch_unref(old);
    return batch;
}


void
dist_rd_cache_drop(struct dist_rd_cache *cache, unsigned idx)
{
    struct dist_rd_batch *old, *old_ahead;

    pthread_mutex_lock(&cache->fd->lock);
    old = cache->slot[idx].batch;
    old_ahead = cache->slot[idx].ahead;
    cache->slot[idx].batch = NULL;
    cache->slot[idx].ahead = NULL;
    pthread_mutex_unlock(&cache->fd->lock);
    dist_rd_batch_unref(old);
    dist_rd_batch_unref(old_ahead);
}


/* Marks slot as reading after from; false if a read is in flight. */
static bool
dist_rd_claim_locked(struct dist_rd_slot *slot, int64_t from)
{
    if (slot->is_busy)
        return false;
    slot->is_busy = true;
    slot->busy_from = from;
    slot->busy_gen = slot->cache->gen;
    return true;
}


/* Whether batch ends at cookie from (a read after it continues it). */
static bool
dist_rd_batch_ends_at(const struct dist_rd_batch *batch, int64_t from)
{
    return batch != NULL && batch->list.n > 0
           && batch->list.ents[batch->list.n - 1].off == from;
}


/* A read of slot ended: the batch (a new ref, or NULL) goes into the slot
 * unless a rewind happened meanwhile (as what follows the slot's batch
 * when it continues it, else in its place), and every waiter continues. */
static void
dist_rd_landed(struct dist_rd_slot *slot, struct dist_rd_batch *batch,
               int status)
{
    struct dist_rd_cache *cache = slot->cache;
    struct dist_rd_batch *old = NULL, *old_ahead = NULL;
    struct dist_rd_fill *waiters, *next;
    bool is_stale;
    int64_t from;

    pthread_mutex_lock(&cache->fd->lock);
    from = slot->busy_from;
    is_stale = slot->busy_gen != cache->gen;
    slot->is_busy = false;
    if (batch != NULL && !is_stale) {
        atomic_fetch_add(&batch->refs, 1); /* the slot's */
        old_ahead = slot->ahead;
        if (dist_rd_batch_ends_at(slot->batch, from)) {
            slot->ahead = batch;
        } else {
            old = slot->batch;
            slot->batch = batch;
            slot->ahead = NULL;
        }
    }
    waiters = slot->waiters;
    slot->waiters = NULL;
    pthread_mutex_unlock(&cache->fd->lock);
    dist_rd_batch_unref(old);
    dist_rd_batch_unref(old_ahead);
    for (; waiters != NULL; waiters = next) {
        next = waiters->next;
        /* After a rewind the waiter reads again (it may be the rewind). */
        dist_rd_fill_resume(waiters, is_stale ? NULL : batch, from,
                            is_stale ? 0 : status);
    }
    dist_rd_batch_unref(batch);
}


/* A batch (one ref) of the entries r's reply holds, read after cookie
 * from; the entries and the buffer backing their content move out of
 * r. NULL on ENOMEM (r keeps them). */
static struct dist_rd_batch *
dist_rd_batch_take(struct dist_rd_cache *cache, vl_req_t *r, int64_t from)
{
    struct dist_rd_batch *batch = vl_calloc(cache->xl, 1, sizeof(*batch),
                                            DIST_MT_RDCACHE);

    if (batch == NULL)
        return NULL;
    atomic_init(&batch->refs, 1);
    batch->from = from;
    batch->list = r->reply.entries; /* moved */
    memset(&r->reply.entries, 0, sizeof(r->reply.entries));
    batch->buf = r->reply.buf; /* moved: backs the content */
    r->reply.buf = NULL;
    r->reply.data = NULL;
    return batch;
}


static void
dist_rd_read_done(vl_req_t *r, void *cookie)
{
    struct dist_rd_slot *slot = cookie;
    vl_fd_t *fd = slot->cache->fd;
    struct dist_rd_batch *batch = NULL;
    int status = r->status;

    if (status == 0) {
        batch = dist_rd_batch_take(slot->cache, r, r->args.readdir.offset);
        if (batch == NULL)
            status = -ENOMEM;
    }
    dist_rd_landed(slot, batch, status);
    vl_fd_unref(fd); /* the read's; may free the cache */
}


void
dist_rd_seed(struct dist_rd_cache *cache, unsigned idx, vl_req_t *r)
{
    struct dist_rd_slot *slot = &cache->slot[idx];
    struct dist_rd_batch *batch;
    bool is_claimed;

    pthread_mutex_lock(&cache->fd->lock);
    is_claimed = slot->batch == NULL && slot->ahead == NULL
                 && dist_rd_claim_locked(slot, 0);
    pthread_mutex_unlock(&cache->fd->lock);
    if (!is_claimed)
        return; /* a listing of this brick got there first: keep it */
    batch = dist_rd_batch_take(cache, r, 0);
    if (batch == NULL) {
        dist_rd_landed(slot, NULL, -ENOMEM);
        return;
    }
    r->reply.has_listing = false;
    atomic_fetch_add(&dist_priv(cache->xl)->n_rd_seeded, 1);
    dist_rd_landed(slot, batch, 0);
}


/* Winds a readdir of slot's subvolume after from (slot claimed). */
static void
dist_rd_read(struct dist_rd_slot *slot, int64_t from, size_t size,
             const struct vl_caller *caller)
{
    struct dist_rd_cache *cache = slot->cache;
    vl_xlator_t *xl = cache->xl;
    struct vl_readdir_args *a;
    vl_req_t *r;

    r = vl_req_new_op(NULL, xl->children[slot->idx], VL_FOP_READDIR);
    if (r == NULL) {
        dist_rd_landed(slot, NULL, -ENOMEM);
        return;
    }
    r->caller = *caller;
    a = VL_ARGS(r, readdir);
    a->fd = vl_fd_ref(cache->fd);
    a->size = size;
    a->offset = (off_t)from;
    a->plus = !atomic_load(&cache->is_names_only);
    a->content_max = a->plus ? dist_rd_content_hint(xl) : 0;
    if (a->content_max > 0 && a->size < DIST_RD_BATCH_CONTENT)
        a->size = DIST_RD_BATCH_CONTENT; /* the content counts in it */
    atomic_fetch_add(&dist_priv(xl)->n_rd_reads, 1);
    if (!a->plus)
        atomic_fetch_add(&dist_priv(xl)->n_rd_names_only, 1);
    vl_wind(r, dist_rd_read_done, slot);
}


void
dist_rd_prefetch(struct dist_rd_cache *cache, unsigned idx, int64_t from,
                 size_t size, const struct vl_caller *caller)
{
    struct dist_rd_slot *slot = &cache->slot[idx];
    bool is_claimed = false;

    pthread_mutex_lock(&cache->fd->lock);
    if ((slot->batch == NULL || slot->batch->from != from)
        && (slot->ahead == NULL || slot->ahead->from != from))
        is_claimed = dist_rd_claim_locked(slot, from);
    pthread_mutex_unlock(&cache->fd->lock);
    if (is_claimed)
        dist_rd_read(slot, from, size, caller);
}


bool
dist_rd_wait_busy(struct dist_rd_cache *cache, struct dist_rd_fill *f)
{
    struct dist_rd_slot *slot = &cache->slot[f->idx];
    bool is_queued = false;

    pthread_mutex_lock(&cache->fd->lock);
    if (slot->is_busy && slot->busy_from == f->boff) {
        f->next = slot->waiters;
        slot->waiters = f;
        is_queued = true;
    }
    pthread_mutex_unlock(&cache->fd->lock);
    return is_queued;
}


void
dist_rd_wait(struct dist_rd_cache *cache, struct dist_rd_fill *f,
             size_t size)
{
    struct vl_caller caller = f->req->caller;
    dist_mask_t opened = f->opened;
    unsigned idx = f->idx;
    int64_t boff = f->boff;
    dist_mask_t reads = dist_mask_none();
    vl_fd_t *guard = vl_fd_ref(cache->fd);

    /* Once f is queued it may be resumed (and freed, and its request
     * answered: the fd may go) by a read landing: everything needed from
     * it was copied above, and guard keeps the fd and the cache. */
    pthread_mutex_lock(&cache->fd->lock);
    f->next = cache->slot[idx].waiters;
    cache->slot[idx].waiters = f;
    if (dist_rd_claim_locked(&cache->slot[idx], boff))
        dist_mask_set(&reads, idx);
    for (unsigned j = idx + 1; j < cache->n; j++) {
        if (dist_mask_test(opened, j) && cache->slot[j].batch == NULL
            && dist_rd_claim_locked(&cache->slot[j], 0))
            dist_mask_set(&reads, j);
    }
    pthread_mutex_unlock(&cache->fd->lock);
    atomic_fetch_add(&dist_priv(cache->xl)->n_rd_waits, 1);
    for (unsigned j = idx; j < cache->n; j++) {
        if (dist_mask_test(reads, j))
            dist_rd_read(&cache->slot[j], j == idx ? boff : 0, size,
                         &caller);
    }
    vl_fd_unref(guard);
}
