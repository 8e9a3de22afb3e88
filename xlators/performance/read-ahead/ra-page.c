/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ra-page: the pages of one fd of performance/read-ahead.
 *
 * A page is RA_PAGE_SIZE bytes of the file at a multiple of that size,
 * fetched by a READ of its own (a prefetch). It is BUSY while that READ
 * is in flight (reads that need it wait on it) and READY once answered
 * with success; a failed READ leaves no page, so the reads that waited
 * go down themselves. A page dropped while busy (a change of the file, a
 * random read, flush) becomes an orphan: out of the list, freed by its
 * READ's answer, and nothing is served from it.
 *
 * A busy page holds a ref on its fd, so the fd's release (which frees
 * the list) never runs while a prefetch of it is in flight.
 *
 * Threads: every _locked function runs under fd->lock; ra_pages_free and
 * ra_pages_fetch run without it (they unref bufs and wind).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "read-ahead.h"


static void
ra_list_unlink_locked(struct ra_file *file, struct ra_page *page)
{
    for (struct ra_page **pp = &file->pages; *pp != NULL;
         pp = &(*pp)->next)
        if (*pp == page) {
            *pp = page->next;
            page->next = NULL;
            file->n_pages--;
            return;
        }
}


/* Takes page out of file's list: a ready page goes to *dead, a busy one
 * becomes an orphan (its READ's answer frees it). */
static void
ra_page_drop_locked(struct ra_file *file, struct ra_page *page,
                    struct ra_page **dead)
{
    ra_list_unlink_locked(file, page);
    if (page->state == RA_PAGE_BUSY) {
        page->is_orphan = true;
        return;
    }
    page->next = *dead;
    *dead = page;
}


uint32_t
ra_file_check_locked(struct ra_file *file, uint64_t gen, uint64_t epoch,
                     struct ra_page **dead)
{
    struct ra_page *p = file->pages, *next;
    uint32_t n = 0;

    for (; p != NULL; p = next) {
        next = p->next;
        if (p->gen != gen || p->epoch != epoch) {
            ra_page_drop_locked(file, p, dead);
            n++;
        }
    }
    /* Where the file ended was learnt from a page now gone. */
    if (n > 0)
        file->has_eof = false;
    return n;
}


uint32_t
ra_file_drop_locked(struct ra_file *file, off_t before,
                    struct ra_page **dead)
{
    struct ra_page *p = file->pages, *next;
    uint32_t n = 0;

    /* Passed pages: only ready ones; a busy one may have waiters (a
     * read that arrived before this one) and goes at a later pass. */
    for (; p != NULL; p = next) {
        next = p->next;
        if (before < 0
            || (p->state == RA_PAGE_READY
                && p->offset + RA_PAGE_SIZE <= before)) {
            ra_page_drop_locked(file, p, dead);
            n++;
        }
    }
    if (before < 0)
        file->has_eof = false;
    return n;
}


static struct ra_page *
ra_page_find_locked(struct ra_file *file, off_t offset)
{
    for (struct ra_page *p = file->pages; p != NULL; p = p->next)
        if (p->offset <= offset && offset < p->offset + RA_PAGE_SIZE)
            return p;
    return NULL;
}


enum ra_serve
ra_file_serve_locked(struct ra_file *file, vl_req_t *req)
{
    struct ra_local *local = VL_REQ_PRIV(req, struct ra_local);
    struct vl_read_args *a = VL_ARGS(req, read);
    off_t end = a->offset + (off_t)a->size, pos = a->offset;
    struct ra_page *first = NULL, *last = NULL, *p;
    size_t n, done = 0;
    vl_buf_t *buf;

    /* Every byte of the range must be in a ready page, or past the end
     * a short page says the file has. */
    while (pos < end) {
        p = ra_page_find_locked(file, pos);
        if (p == NULL)
            return RA_MISS;
        if (p->state == RA_PAGE_BUSY) {
            local->next = p->waiters;
            p->waiters = req;
            return RA_WAIT;
        }
        if (first == NULL)
            first = p;
        last = p;
        if (pos >= p->offset + (off_t)p->len)
            break; /* at or past the end of the file */
        pos = p->offset + (off_t)p->len < end ? p->offset + (off_t)p->len
                                              : end;
        if (p->len < RA_PAGE_SIZE)
            break;
    }
    n = pos > a->offset ? (size_t)(pos - a->offset) : 0;

    vl_reply_clear(&req->reply);
    if (first == last) {
        /* One page (the usual aligned kernel READ): no copy. */
        if (first->buf != NULL) {
            req->reply.buf = vl_buf_ref(first->buf);
            req->reply.data = first->data
                              + (n > 0 ? (size_t)(a->offset - first->offset)
                                       : 0);
        }
        req->reply.count = (int64_t)n;
        req->reply.iatt = first->iatt;
        return RA_SERVED;
    }
    buf = vl_buf_new(n);
    if (buf == NULL)
        return RA_MISS; /* the read goes down instead */
    for (pos = a->offset; done < n; pos = a->offset + (off_t)done) {
        size_t in_page, take;

        p = ra_page_find_locked(file, pos);
        in_page = (size_t)(pos - p->offset);
        take = p->len - in_page < n - done ? p->len - in_page : n - done;
        memcpy(buf->data + done, p->data + in_page, take);
        done += take;
    }
    req->reply.buf = buf;
    req->reply.data = buf->data;
    req->reply.count = (int64_t)n;
    req->reply.iatt = last->iatt;
    return RA_SERVED;
}


struct ra_page *
ra_file_plan_locked(vl_xlator_t *xl, struct ra_file *file, vl_fd_t *fd,
                    uint64_t gen, uint64_t epoch)
{
    struct ra_priv *priv = xl->priv;
    uint64_t page_count = atomic_load(&priv->page_count);
    uint64_t limit = atomic_load(&priv->cache_limit);
    off_t first = file->expected - file->expected % RA_PAGE_SIZE;
    off_t window_end = first + (off_t)page_count * RA_PAGE_SIZE;
    struct ra_page *plan = NULL, **tail = &plan;
    uint64_t ahead = 0;

    /* Refill only once the reader passed half the window: prefetches go
     * out in batches, not one page per read. */
    for (struct ra_page *p = file->pages; p != NULL; p = p->next)
        if (p->offset + RA_PAGE_SIZE > file->expected)
            ahead++;
    if (ahead > page_count / 2)
        return NULL;

    for (off_t off = first; off < window_end; off += RA_PAGE_SIZE) {
        struct ra_page *p;

        if (file->has_eof && off >= file->eof_offset)
            break;
        if (ra_page_find_locked(file, off) != NULL)
            continue;
        if (atomic_fetch_add(&priv->bytes, RA_PAGE_SIZE) + RA_PAGE_SIZE
            > limit) {
            atomic_fetch_sub(&priv->bytes, RA_PAGE_SIZE);
            atomic_fetch_add(&priv->cap_skips, 1);
            break;
        }
        p = vl_calloc(xl, 1, sizeof(*p), RA_MT_PAGE);
        if (p == NULL) {
            atomic_fetch_sub(&priv->bytes, RA_PAGE_SIZE);
            break; /* no prefetch; the reads go down themselves */
        }
        p->offset = off;
        p->state = RA_PAGE_BUSY;
        p->gen = gen;
        p->epoch = epoch;
        p->fd = vl_fd_ref(fd);
        p->xl = xl;
        p->next = file->pages;
        file->pages = p;
        file->n_pages++;
        *tail = p;
        tail = &p->plan_next;
    }
    return plan;
}


void
ra_pages_free(vl_xlator_t *xl, struct ra_page *dead)
{
    struct ra_priv *priv = xl->priv;
    struct ra_page *next;

    for (; dead != NULL; dead = next) {
        next = dead->next;
        vl_buf_unref(dead->buf);
        atomic_fetch_sub(&priv->bytes, RA_PAGE_SIZE);
        vl_free(dead);
    }
}


/* A page's READ answered (reply NULL: it could not be sent). Kept only
 * if (1) it succeeded, (2) nobody dropped the page meanwhile, (3) the
 * file did not change since it was sent and (4) the data is whole and
 * has a buffer to keep. The reads that waited go on either way: served
 * now, or down by themselves. */
static void
ra_page_settle(struct ra_page *page, int status,
               const struct vl_reply *reply)
{
    vl_xlator_t *xl = page->xl;
    struct ra_priv *priv = xl->priv;
    vl_fd_t *fd = page->fd;
    struct ra_file *file = vl_fd_ctx(fd, xl);
    struct ra_page *dead = NULL;
    vl_req_t *waiters, *next;
    bool is_kept;

    if (status != 0)
        atomic_fetch_add(&priv->prefetch_errors, 1);
    else
        atomic_fetch_add(&priv->prefetch_bytes, (uint64_t)reply->count);

    pthread_mutex_lock(&fd->lock);
    waiters = page->waiters;
    page->waiters = NULL;
    page->fd = NULL;
    is_kept = status == 0                                       /* (1) */
              && !page->is_orphan                               /* (2) */
              && page->gen == ra_gen_now(xl, fd)                /* (3) */
              && page->epoch == atomic_load(&priv->epoch)
              && reply->count >= 0 && reply->count <= RA_PAGE_SIZE
              && (reply->count == 0 || reply->buf != NULL);     /* (4) */
    if (is_kept) {
        page->state = RA_PAGE_READY;
        if (reply->count > 0) {
            page->buf = vl_buf_ref(reply->buf);
            page->data = reply->data;
        }
        page->len = (size_t)reply->count;
        page->iatt = reply->iatt;
        if (page->len < RA_PAGE_SIZE) {
            file->has_eof = true;
            file->eof_offset = page->offset + (off_t)page->len;
        }
    } else {
        if (!page->is_orphan) {
            ra_list_unlink_locked(file, page);
            if (status == 0)
                atomic_fetch_add(&priv->write_drops, 1);
        }
        page->state = RA_PAGE_READY; /* nothing in it; freed below */
        dead = page;
        dead->next = NULL;
    }
    pthread_mutex_unlock(&fd->lock);

    /* Each waiter is a read whose fd the kernel holds open. */
    for (; waiters != NULL; waiters = next) {
        next = VL_REQ_PRIV(waiters, struct ra_local)->next;
        ra_read_resume(xl, waiters);
    }
    ra_pages_free(xl, dead);
    vl_fd_unref(fd); /* may release fd, which frees its pages: last */
}


static void
ra_page_fetch_done(vl_req_t *r, void *cookie)
{
    ra_page_settle(cookie, r->status, &r->reply);
}


void
ra_pages_fetch(vl_xlator_t *xl, struct ra_page *plan,
               const struct vl_caller *caller)
{
    struct ra_priv *priv = xl->priv;
    struct ra_page *next;

    for (; plan != NULL; plan = next) {
        vl_req_t *r;
        struct vl_read_args *ra;

        /* plan_next is ours alone: the list links (next) are fd->lock's. */
        next = plan->plan_next;
        r = vl_req_new_op(NULL, VL_FIRST_CHILD(xl), VL_FOP_READ);
        if (r == NULL) {
            /* As a failed READ: no page, its waiters go down. */
            ra_page_settle(plan, -ENOMEM, NULL);
            continue;
        }
        r->caller = *caller;
        ra = VL_ARGS(r, read);
        ra->fd = plan->fd;
        ra->offset = plan->offset;
        ra->size = RA_PAGE_SIZE;
        atomic_fetch_add(&priv->prefetches, 1);
        vl_wind(r, ra_page_fetch_done, plan);
    }
}
