/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-readdir: listing a directory that exists on every subvolume.
 *
 * opendir opens the directory on every up subvolume in parallel (the one
 * vl_fd_t; each child keeps its own ctx in it) and, as each subvolume
 * opens it, starts reading it from its start in the background
 * (dist-rdcache.c), so the first readdir usually finds the whole listing
 * of a small directory already there or on its way: opendir plus the
 * listing cost about two rounds, whatever the number of bricks.
 *
 * readdir walks the subvolumes in index order over the cached batches:
 * files from each, directories (and "." "..") only from the first opened
 * one (they exist everywhere), link files and migration markers never. A
 * d_off cookie is (subvolume index << 48) | the brick's cookie;
 * storage/posix gives small cookies, far below 2^48, so a listing
 * resumes exactly, from the cache or from the brick. Children are asked
 * for readdirplus (the mode tells a link file) unless the caller asked
 * for names only: then storage/posix leaves link files out and d_type
 * tells directories (dist-rdcache.c, "Names only"). A
 * reply is filled from as many subvolumes as fit; the last entry of a
 * subvolume that reached its end carries the cookie of the next
 * subvolume's start. When the cache has nothing after the cookie, the
 * readdir waits for a read of that brick (and of the later bricks with
 * nothing cached, in the same round); when it already has entries to give,
 * it answers with them and the read goes on in the background for the
 * next readdir.
 *
 * Content (quick-read: readdirplus with args.content_max): the bricks are
 * asked for it (dist-rdcache.c); an entry passed to the caller carries
 * its content only if it is a file listed from its data subvolume (link
 * files are never listed) and no larger than the caller's content_max.
 * The contents are copied from the batches into one buffer of the reply
 * (reply.buf), since a reply mixes batches and outlives them; they do not
 * count in the caller's size (FUSE's buffer takes the records only).
 *
 * Intercepts: opendir, readdir (and readdirplus).
 * Per fd:     dist_fd_ctx.dir_open (which children opened it) and
 *             dist_fd_ctx.rd_cache (dist-rdcache.c), fd->lock.
 * Per req:    opendir: struct dist_rd_open (allocated, freed when it
 *             answers); readdir: struct dist_rd_fill on the stack, or
 *             allocated while it waits for a brick.
 * Threads:    the caller's thread and the children's callbacks; no
 *             worker, no blocking.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "dist-readdir.h"

/* With entries to give and less room than this left, a readdir answers
 * instead of waiting for a brick. */
#define DIST_READDIR_MIN_ROOM 512

struct dist_rd_open;

/* One child's opendir. */
struct dist_rd_open_child {
    struct dist_rd_open *op;   /* borrowed; the opendir */
    vl_req_t *r;               /* its request, from made until wound */
    int status;                /* its answer */
    struct vl_iatt iatt;       /* its directory's attributes */
};

/* An opendir in flight (one allocation, freed when it answers). */
struct dist_rd_open {
    vl_xlator_t *xl;           /* borrowed; distribute */
    vl_req_t *req;             /* borrowed; the opendir */
    vl_fanout_t fan;           /* children not answered yet */
    unsigned n;                /* entries of child */
    struct dist_rd_open_child child[]; /* by subvolume index */
};


static void
dist_opendir_done(vl_req_t *r, void *cookie)
{
    struct dist_rd_open_child *c = cookie;
    struct dist_rd_open *op = c->op;
    vl_req_t *req = op->req;
    vl_xlator_t *xl = op->xl;
    struct vl_opendir_args *a = VL_ARGS(req, opendir);
    struct dist_rd_cache *cache;
    struct dist_fd_ctx *ctx;
    dist_mask_t opened = dist_mask_none();
    int first = -1, rc = -ENOTCONN;

    c->status = r->status;
    c->iatt = r->reply.iatt;
    /* This brick is open, with its first batch when protocol/server
     * read it with the open; else read it from its start now, in the
     * background (the first readdir of a listing comes right after
     * opendir). The request still holds the fd; a read takes its own
     * ref. */
    if (r->status == 0) {
        cache = dist_rd_cache_get(xl, a->fd);
        if (cache != NULL && r->reply.has_listing)
            dist_rd_seed(cache, (unsigned)(c - op->child), r);
        else if (cache != NULL) /* else readdir reads as it goes */
            dist_rd_prefetch(cache, (unsigned)(c - op->child), 0,
                             DIST_RD_BATCH, &req->caller);
    }
    if (!vl_fanout_arrive(&op->fan, r->status))
        return;
    for (unsigned i = 0; i < op->n; i++) {
        if (op->child[i].status == 0) {
            dist_mask_set(&opened, i);
            if (first < 0)
                first = (int)i;
        } else if (op->child[i].status != -ENOTCONN && rc == -ENOTCONN) {
            rc = op->child[i].status;
        }
    }
    /* A copy missing on one subvolume (not healed yet) is not fatal. */
    if (first >= 0) {
        rc = 0;
        vl_reply_clear(&req->reply);
        req->reply.iatt = op->child[first].iatt;
        ctx = vl_fd_ctx(a->fd, xl);
        pthread_mutex_lock(&a->fd->lock);
        ctx->dir_open = opened;
        pthread_mutex_unlock(&a->fd->lock);
    }
    vl_free(op);
    vl_unwind(req, rc);
}


void
dist_opendir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_opendir_args *a = VL_ARGS(req, opendir);
    unsigned n = dist_priv(xl)->n, k = 0;
    dist_mask_t up = dist_up_mask(xl);
    struct dist_rd_open *op;

    if (a->fd == NULL) {
        vl_unwind(req, -EINVAL);
        return;
    }
    if (dist_mask_is_empty(up)) {
        vl_unwind(req, -ENOTCONN);
        return;
    }
    op = vl_calloc(xl, 1, sizeof(*op) + n * sizeof(op->child[0]),
                   DIST_MT_RDCACHE);
    if (op == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    op->xl = xl;
    op->req = req;
    op->n = n;
    for (unsigned i = 0; i < n; i++) {
        op->child[i].op = op;
        op->child[i].status = -ENOTCONN;
        if (!dist_mask_test(up, i))
            continue;
        op->child[i].r = vl_req_child(req, xl->children[i]);
        if (op->child[i].r != NULL) {
            /* The first batch with the open (one round less), the size
             * and content a prefetch would ask for (dist-rdcache.c). */
            struct vl_opendir_args *ca = VL_ARGS(op->child[i].r, opendir);

            /* That batch is a readdirplus: none while listings ask for
             * names only (opendir_done reads names only instead). */
            ca->content_max = dist_rd_content_hint(xl);
            ca->list_size = dist_rd_names_only_hint(xl) ? 0
                            : ca->content_max > 0 ? DIST_RD_BATCH_CONTENT
                                                  : DIST_RD_BATCH;
        }
        if (op->child[i].r == NULL) {
            for (unsigned j = 0; j < i; j++)
                if (op->child[j].r != NULL)
                    vl_req_free_unwound(op->child[j].r);
            vl_free(op);
            vl_unwind(req, -ENOMEM);
            return;
        }
        k++;
    }
    vl_fanout_begin(&op->fan, (int)k);
    /* The last answer frees op: each request is taken out before its
     * wind, and the loop stops at the last one. */
    for (unsigned i = 0; i < n && k > 0; i++) {
        vl_req_t *r = op->child[i].r;

        if (r == NULL)
            continue;
        op->child[i].r = NULL;
        k--;
        vl_wind(r, dist_opendir_done, &op->child[i]);
    }
}


/* Whether entry e belongs in distribute's listing; is_first: it comes
 * from the first opened subvolume. */
static bool
dist_readdir_keep(const struct vl_dirent *e, bool is_first)
{
    bool is_dot = strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0;
    bool is_dir = e->has_iatt ? S_ISDIR(e->iatt.mode) : e->type == DT_DIR;

    if (is_dot || is_dir)
        return is_first;
    /* Unsure attributes (replicate below could not vouch for them) still
     * say a link file is one. */
    return !((e->has_iatt || e->is_iatt_unsure)
             && dist_iatt_is_linkfile(&e->iatt));
}


/* An object listed here with its attributes has its data on subvolume
 * idx: its next fop goes there without a lookup by GFID. The inode is
 * made and linked if the graph has none yet: the mount links the same one
 * from the readdirplus entry, and the OPEN that follows a listing (no
 * LOOKUP: the kernel knows the name) then goes to one brick, not all of
 * them (quick-read's nameless LOOKUP for the content). Unused ones age
 * out of the table's LRU like any inode. */
static void
dist_readdir_note(vl_xlator_t *xl, const struct vl_iatt *iatt, int idx)
{
    vl_inode_t *inode;
    struct dist_inode_ctx *ctx;

    if (vl_gfid_is_null(&iatt->gfid))
        return;
    inode = vl_inode_get(xl->graph->itable, &iatt->gfid,
                         iatt->mode & S_IFMT);
    if (inode == NULL)
        return; /* ENOMEM: only a hint lost; the fop will look */
    ctx = dist_ictx(xl, inode);
    pthread_mutex_lock(&inode->lock);
    if (!ctx->has_cached) {
        ctx->cached = idx;
        ctx->hashed = -1;
        ctx->has_cached = true;
    }
    pthread_mutex_unlock(&inode->lock);
    vl_inode_unref(inode);
}


/* A directory listed with its attributes carries one brick's copy of
 * them (the first opened one's). The kernel takes an entry's attributes
 * for the inode it already has: its times are raised to those this
 * client last answered for the directory (a stat or lookup merged every
 * copy), so that they do not go back. A directory this client has no
 * inode for was never answered here. */
static void
dist_readdir_dir_times(vl_xlator_t *xl, struct vl_iatt *iatt)
{
    vl_inode_t *inode;

    if (vl_gfid_is_null(&iatt->gfid))
        return;
    inode = vl_inode_find(xl->graph->itable, &iatt->gfid);
    if (inode == NULL)
        return;
    dist_dir_times_settle(xl, inode, iatt, false);
    vl_inode_unref(inode);
}


/* Bytes an entry takes in the caller's buffer (FUSE's record: 24 bytes
 * of header, the name padded to 8, and the entry attributes with plus). */
static size_t
dist_dirent_cost(const char *name, bool plus)
{
    size_t len = (24 + strlen(name) + 7) & ~(size_t)7;

    return plus ? len + 128 : len;
}


/* The next opened subvolume after idx, or -1. */
static int
dist_readdir_next(dist_mask_t opened, unsigned idx, unsigned n)
{
    int next = dist_mask_next(opened, idx + 1);

    return next >= 0 && (unsigned)next < n ? next : -1;
}


/* What a brick is asked for: the caller's size within [DIST_RD_BATCH,
 * DIST_RD_BATCH_MAX]. */
static size_t
dist_rd_batch_size(const struct vl_readdir_args *a)
{
    if (a->size < DIST_RD_BATCH)
        return DIST_RD_BATCH;
    return a->size > DIST_RD_BATCH_MAX ? DIST_RD_BATCH_MAX : a->size;
}


/* Answers f's request with rc (0: the entries gathered). */
static void
dist_rd_fill_answer(struct dist_rd_fill *f, struct dist_rd_cache *cache,
                    int rc)
{
    vl_req_t *req = f->req;

    if (rc != 0)
        vl_reply_clear(&req->reply);
    else
        dist_rd_cache_answered(cache);
    if (f->is_heap)
        vl_free(f);
    vl_unwind(req, rc);
}


/* Copies the content of e (from batch) into f's reply buffer and sets it
 * on out's last entry. Returns 0 or -ENOMEM (then the entry simply has
 * no content). */
static int
dist_rd_fill_content(struct dist_rd_fill *f, const struct dist_rd_batch *batch,
                     const struct vl_dirent *e)
{
    struct vl_reply *rp = &f->req->reply;
    struct vl_dirent *ent = &rp->entries.ents[rp->entries.n - 1];
    size_t need = f->content_used + e->content_len;
    vl_buf_t *nb;

    if (rp->buf == NULL || need > rp->buf->size) {
        /* Grows by doubling; content_off values are offsets, so they
         * stay valid in the new buffer. */
        size_t size = rp->buf != NULL ? 2 * rp->buf->size : 64 * 1024;

        while (size < need)
            size *= 2;
        nb = vl_buf_new(size);
        if (nb == NULL)
            return -ENOMEM;
        if (rp->buf != NULL) {
            memcpy(nb->data, rp->buf->data, f->content_used);
            vl_buf_unref(rp->buf);
        }
        rp->buf = nb;
        rp->data = nb->data;
    }
    memcpy(rp->buf->data + f->content_used,
           batch->buf->data + e->content_off, e->content_len);
    ent->has_content = true;
    ent->content_len = e->content_len;
    ent->content_off = f->content_used;
    f->content_used = need;
    return 0;
}


/* Whether e of batch carries content the caller a may get. */
static bool
dist_rd_has_content(const struct vl_readdir_args *a,
                    const struct dist_rd_batch *batch,
                    const struct vl_dirent *e)
{
    return a->plus && a->content_max > 0 && e->has_content && e->has_iatt
           && S_ISREG(e->iatt.mode) && e->content_len <= a->content_max
           && batch->buf != NULL && e->content_off <= batch->buf->size
           && e->content_len <= batch->buf->size - e->content_off;
}


/* Copies what batch holds from pos on into f's reply. Returns 0 (the
 * batch is used up: *is_full false) or with *is_full when the caller's
 * buffer is, or -errno. f->boff follows every entry passed. */
static int
dist_rd_fill_from(struct dist_rd_fill *f, const struct dist_rd_batch *batch,
                  size_t pos, bool *is_full /* OUT */)
{
    vl_xlator_t *xl = f->xl;
    struct vl_readdir_args *a = VL_ARGS(f->req, readdir);
    struct vl_dirent_list *out = &f->req->reply.entries;
    uint64_t top = (uint64_t)f->idx << DIST_COOKIE_SHIFT;
    int rc;

    *is_full = false;
    for (size_t k = pos; k < batch->list.n; k++) {
        const struct vl_dirent *e = &batch->list.ents[k];
        size_t cost;

        if (e->off < 0 || (uint64_t)e->off > DIST_COOKIE_MASK) {
            vl_log(xl, VL_LOG_ERROR, "%s: readdir cookie %lld does not "
                   "fit in 48 bits", xl->children[f->idx]->name,
                   (long long)e->off);
            return -EOVERFLOW;
        }
        if (dist_readdir_keep(e, (int)f->idx == f->first)) {
            const struct vl_iatt *ia = a->plus && e->has_iatt ? &e->iatt
                                                              : NULL;
            struct vl_iatt dir_ia;

            cost = dist_dirent_cost(e->name, a->plus);
            if (out->n > 0 && f->used + cost > a->size) {
                *is_full = true;
                return 0;
            }
            if (e->has_iatt && !S_ISDIR(e->iatt.mode))
                dist_readdir_note(xl, &e->iatt, (int)f->idx);
            if (ia != NULL && S_ISDIR(ia->mode)) {
                dir_ia = *ia;
                dist_readdir_dir_times(xl, &dir_ia);
                ia = &dir_ia;
            }
            rc = vl_dirent_list_add(out, e->ino, (int64_t)(top
                                                           | (uint64_t)e->off),
                                    e->type, e->name, ia);
            if (rc != 0)
                return rc;
            if (dist_rd_has_content(a, batch, e))
                (void)dist_rd_fill_content(f, batch, e); /* else none */
            f->used += cost;
        }
        f->boff = e->off;
    }
    return 0;
}


/* Fills f's reply from the cache until the caller's buffer is full, the
 * listing ends, or a brick must be read; then answers, or waits (f is
 * copied to the heap) and is resumed by dist_rd_fill_resume. hint: a batch
 * just read (may be NULL), used first when it holds what f needs. */
static void
dist_rd_fill_run(struct dist_rd_fill *f, struct dist_rd_batch *hint)
{
    vl_xlator_t *xl = f->xl;
    struct vl_readdir_args *a = VL_ARGS(f->req, readdir);
    struct vl_dirent_list *out = &f->req->reply.entries;
    struct dist_rd_cache *cache = dist_rd_cache_get(xl, a->fd);
    unsigned n = dist_priv(xl)->n;
    struct dist_rd_fill *heap;
    int rc = 0;

    if (cache == NULL) {
        dist_rd_fill_answer(f, NULL, -ENOMEM);
        return;
    }
    for (;;) {
        struct dist_rd_batch *batch = NULL;
        int64_t before = f->boff;
        bool is_full, is_end;
        size_t pos;
        int next;

        while (f->idx < n && !dist_mask_test(f->opened, f->idx)) {
            f->idx++;
            f->boff = 0;
        }
        if (f->idx >= n) {
            out->eof = true;
            break;
        }
        if (hint != NULL && dist_rd_batch_match(hint, f->boff, &pos)) {
            batch = hint;
            atomic_fetch_add(&batch->refs, 1);
        } else {
            batch = dist_rd_cache_find(cache, f->idx, f->boff, &pos);
        }
        hint = NULL; /* it was for this subvolume only */
        if (batch == NULL) {
            size_t size = dist_rd_batch_size(a);

            heap = f;
            if (!f->is_heap) {
                heap = vl_malloc(xl, sizeof(*heap), DIST_MT_RDCACHE);
                if (heap == NULL) {
                    rc = out->n > 0 ? 0 : -ENOMEM;
                    break;
                }
                *heap = *f;
                heap->is_heap = true;
            }
            if (out->n == 0) {
                dist_rd_wait(cache, heap, size);
                return;
            }
            /* With entries to give: wait only for a read already on its
             * way (no extra round) while there is room; otherwise give
             * what we have and read meanwhile (the next readdir waits for
             * that read). */
            if (f->used + DIST_READDIR_MIN_ROOM <= a->size
                && dist_rd_wait_busy(cache, heap))
                return;
            if (heap != f)
                vl_free(heap);
            dist_rd_prefetch(cache, f->idx, f->boff, size, &f->req->caller);
            break;
        }
        rc = dist_rd_fill_from(f, batch, pos, &is_full);
        /* No entry, or a cookie that did not move, and no eof: no
         * progress possible there, as at eof. */
        is_end = batch->list.eof || batch->list.n == 0
                 || (!is_full && f->boff == before);
        if (rc == 0 && is_full && !is_end)
            dist_rd_prefetch(cache, f->idx, batch->list.ents[
                                 batch->list.n - 1].off,
                             dist_rd_batch_size(a), &f->req->caller);
        dist_rd_batch_unref(batch);
        if (rc != 0 || is_full)
            break;
        if (!is_end)
            continue; /* the next batch of this brick */
        next = dist_readdir_next(f->opened, f->idx, n);
        if (next < 0) {
            out->eof = true;
            break;
        }
        /* Continuing after the last entry means the start of the next
         * subvolume: no empty read of this one next time. */
        if (out->n > 0)
            out->ents[out->n - 1].off =
                (int64_t)((uint64_t)next << DIST_COOKIE_SHIFT);
        dist_rd_cache_drop(cache, f->idx);
        f->idx = (unsigned)next;
        f->boff = 0;
    }
    dist_rd_fill_answer(f, cache, rc);
}


void
dist_rd_fill_resume(struct dist_rd_fill *f, struct dist_rd_batch *batch,
                    int64_t from, int status)
{
    /* The read failed where f waits: that brick's error is the answer
     * (as when it was read directly). A read of another place is only a
     * reason to look again. */
    if (status != 0 && from == f->boff) {
        dist_rd_fill_answer(f, dist_rd_cache_get(f->xl,
                                                 VL_ARGS(f->req, readdir)
                                                     ->fd),
                            status);
        return;
    }
    dist_rd_fill_run(f, status == 0 ? batch : NULL);
}


void
dist_readdir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_readdir_args *a = VL_ARGS(req, readdir);
    struct dist_fd_ctx *ctx;
    struct dist_rd_cache *cache;
    struct dist_rd_fill f;
    uint64_t off = (uint64_t)a->offset;
    bool is_new_hint = false;

    if (a->fd == NULL) {
        vl_unwind(req, -EBADF);
        return;
    }
    memset(&f, 0, sizeof(f));
    ctx = vl_fd_ctx(a->fd, xl);
    pthread_mutex_lock(&a->fd->lock);
    f.opened = ctx->dir_open;
    pthread_mutex_unlock(&a->fd->lock);
    if (dist_mask_is_empty(f.opened)) {
        vl_unwind(req, -EBADF);
        return;
    }
    cache = dist_rd_cache_get(xl, a->fd);
    if (cache == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    /* The reads opendir started asked for the content the last listing
     * did; the first listing asking for other content (of the graph,
     * usually) reads again. */
    if (a->plus && dist_rd_content_hint(xl) != a->content_max) {
        dist_rd_content_hint_set(xl, a->content_max);
        is_new_hint = a->content_max > 0;
    }
    /* A readdirplus from the start after names only (the opendir's reads
     * followed names-only listings): read again with attributes, as for
     * content. */
    if (off == 0 && a->plus && dist_rd_cache_is_names_only(cache))
        is_new_hint = true;
    dist_rd_cache_mode_set(cache, a->plus, off == 0);
    if (off == 0)
        dist_rd_cache_rewind(cache, is_new_hint);
    f.xl = xl;
    f.req = req;
    f.first = dist_mask_first(f.opened);
    f.idx = (unsigned)(off >> DIST_COOKIE_SHIFT);
    f.boff = (int64_t)(off & DIST_COOKIE_MASK);
    vl_reply_clear(&req->reply);
    dist_rd_fill_run(&f, NULL);
}
