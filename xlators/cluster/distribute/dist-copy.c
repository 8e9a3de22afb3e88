/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-copy: copy_file_range of distribute, also between subvolumes.
 *
 * Both files on one subvolume: the request goes down to it (the brick
 * copies on its own file system; dist-route.c's path, with the EREMCHG
 * reroute). On different subvolumes distribute copies itself: the range
 * is cut into chunks of DIST_COPY_CHUNK bytes, each read from the source
 * subvolume and written at the same relative offset on the destination
 * subvolume, with up to DIST_COPY_INFLIGHT chunks on the way at once.
 * Answering EXDEV instead (as before) made the kernel copy through FUSE
 * in small splice chunks, three times slower than one brick.
 *
 * Semantics of the answer (count = bytes copied, as copy_file_range(2)):
 *   - writes are issued in chunk order and only after every earlier chunk
 *     was read in full, so a short read (end of the source) ends the copy
 *     there and nothing past it is written;
 *   - count is the prefix of chunks written in full, plus the written part
 *     of the first chunk that was written short; an error after some bytes
 *     were copied gives that count (the caller's next call sees the error);
 *     an error before any byte gives the error;
 *   - a chunk already on the way when an earlier one fails may still land
 *     on the destination (past the answered count), like the pages of a
 *     failed write;
 *   - a source or destination that moved (EREMCHG, ESTALE, ENOENT from a
 *     rebalance) before any byte was copied gives EXDEV: the kernel or the
 *     application then copies with read/write, which follow the file;
 *   - one request copies at most DIST_COPY_MAX bytes (callers loop);
 *   - flags other than 0, a destination open with O_APPEND, a source not
 *     open for reading or a destination not open for writing are refused
 *     as the kernel does (EINVAL, EBADF); a subvolume that is down gives
 *     ENOTCONN without asking anyone.
 * The reply's iatt is the destination's post-write attributes of the last
 * write answered.
 *
 * Intercepts: copy_file_range.
 * Per req:    struct dist_copy, allocated for a copy between subvolumes
 *             and freed when the request is answered.
 * Threads:    children's callbacks (any thread); dist_copy->lock guards
 *             the chunk state. No lock is held across vl_wind.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"

/* 1 MiB: the largest write FUSE and the wire carry in one request. */
#define DIST_COPY_CHUNK (1024 * 1024)
/* Chunks on the way at once: enough to keep both bricks busy. */
#define DIST_COPY_INFLIGHT 4
/* Most bytes one request copies: keeps one FUSE request short. */
#define DIST_COPY_MAX ((size_t)64 * DIST_COPY_CHUNK)

enum dist_copy_state {
    DIST_COPY_IDLE = 0, /* slot free */
    DIST_COPY_READING,  /* read wound */
    DIST_COPY_READ,     /* data in buf, write not issued yet */
    DIST_COPY_WRITING,  /* write wound */
    DIST_COPY_WRITTEN,  /* write answered, not accounted yet */
};

/* One chunk on the way. */
struct dist_copy_slot {
    struct dist_copy *c;        /* borrowed; the copy it belongs to */
    enum dist_copy_state state; /* (lock) */
    uint64_t k;                 /* (lock) chunk index */
    vl_buf_t *buf;              /* (lock) owned ref; read data, or NULL */
    const char *data;           /* (lock) read data inside buf */
    size_t size;                /* (lock) bytes asked for by the read */
    size_t n_read;              /* (lock) bytes the read gave */
    size_t n_written;           /* (lock) bytes the write took */
    int wstatus;                /* (lock) the write's status */
    struct iovec iov;           /* (lock) the write's iov (into buf) */
};

/* A copy between two subvolumes. */
struct dist_copy {
    pthread_mutex_t lock;       /* guards everything marked (lock) */
    vl_xlator_t *xl;            /* borrowed; distribute */
    vl_req_t *req;              /* borrowed; answered by the last holder */
    vl_xlator_t *src;           /* borrowed; source subvolume */
    vl_xlator_t *dst;           /* borrowed; destination subvolume */
    size_t len;                 /* bytes to copy (capped) */
    uint64_t n_chunks;          /* chunks in len */
    uint64_t next_read;         /* (lock) next chunk to read */
    uint64_t next_write;        /* (lock) next chunk to write */
    uint64_t acked;             /* (lock) chunks accounted, in order */
    uint64_t limit;             /* (lock) no chunk at or past it is
                                   written (end of source, errors) */
    size_t copied;              /* (lock) bytes of the accounted prefix */
    int err;                    /* (lock) first error seen, or 0 */
    int holds;                  /* (lock) child requests on the way, plus
                                   one while a thread issues more */
    bool has_iatt;              /* (lock) iatt is set */
    struct vl_iatt iatt;        /* (lock) post attributes of a write */
    struct dist_copy_slot slots[DIST_COPY_INFLIGHT]; /* (lock) by k % N */
};

/* What the pump decided to wind, outside the lock. */
struct dist_copy_batch {
    unsigned n;                              /* entries used */
    struct dist_copy_slot *slot[2 * DIST_COPY_INFLIGHT]; /* which chunk */
    bool is_write[2 * DIST_COPY_INFLIGHT];   /* write, else read */
};

static void dist_copy_pump(struct dist_copy *c);


/* A subvolume a file fd is open on, else its inode's cached one, or -1. */
static int
dist_copy_subvol(vl_xlator_t *xl, vl_fd_t *fd)
{
    int idx = dist_fd_subvol(xl, fd);

    return idx >= 0 ? idx : dist_ictx_cached(xl, fd->inode);
}


static bool
dist_copy_is_moved(int status)
{
    return status == -EREMCHG || status == -ESTALE || status == -ENOENT;
}


static void
dist_copy_free(struct dist_copy *c)
{
    for (unsigned i = 0; i < DIST_COPY_INFLIGHT; i++)
        vl_buf_unref(c->slots[i].buf);
    pthread_mutex_destroy(&c->lock);
    vl_free(c);
}


/* Answers the request once the last hold is gone. */
static void
dist_copy_finish(struct dist_copy *c)
{
    vl_req_t *req = c->req;
    int rc = 0;

    if (c->copied > 0) {
        req->reply.count = (int64_t)c->copied;
        if (c->has_iatt)
            req->reply.iatt = c->iatt;
    } else if (c->err != 0) {
        rc = dist_copy_is_moved(c->err) ? -EXDEV : c->err;
    } else {
        req->reply.count = 0; /* the source ends before off_in */
    }
    dist_copy_free(c);
    vl_unwind(req, rc);
}


/* Drops a hold taken for a child request or an issuing pass; the last
 * one answers. Called with the lock held; releases it. */
static void
dist_copy_release_locked(struct dist_copy *c)
{
    bool is_last = --c->holds == 0;

    pthread_mutex_unlock(&c->lock);
    if (is_last)
        dist_copy_finish(c);
}


static void
dist_copy_stop_at_locked(struct dist_copy *c, uint64_t k, int status)
{
    if (k < c->limit)
        c->limit = k;
    if (status != 0 && c->err == 0)
        c->err = status;
}


static void
dist_copy_read_done(vl_req_t *r, void *cookie)
{
    struct dist_copy_slot *s = cookie;
    struct dist_copy *c = s->c;

    pthread_mutex_lock(&c->lock);
    if (r->status < 0 || r->reply.count <= 0) {
        /* An error, or nothing left to read: no write from here on. */
        dist_copy_stop_at_locked(c, s->k, r->status < 0 ? r->status : 0);
        s->state = DIST_COPY_IDLE;
    } else {
        s->n_read = (size_t)r->reply.count;
        if (s->n_read > s->size)
            s->n_read = s->size; /* never trust a child for more */
        if (s->n_read < s->size)
            dist_copy_stop_at_locked(c, s->k + 1, 0); /* end of source */
        if (r->reply.buf == NULL || r->reply.data == NULL) {
            dist_copy_stop_at_locked(c, s->k, -EIO); /* a broken child */
            s->state = DIST_COPY_IDLE;
        } else {
            s->buf = vl_buf_ref(r->reply.buf);
            s->data = r->reply.data;
            s->state = DIST_COPY_READ;
        }
    }
    pthread_mutex_unlock(&c->lock);
    dist_copy_pump(c);
}


static void
dist_copy_write_done(vl_req_t *r, void *cookie)
{
    struct dist_copy_slot *s = cookie;
    struct dist_copy *c = s->c;

    pthread_mutex_lock(&c->lock);
    s->wstatus = r->status;
    s->n_written = 0;
    if (r->status == 0 && r->reply.count > 0) {
        s->n_written = (size_t)r->reply.count;
        if (s->n_written > s->n_read)
            s->n_written = s->n_read;
        c->iatt = r->reply.iatt;
        c->has_iatt = true;
    }
    if (s->n_written < s->n_read) /* error or short: nothing after it */
        dist_copy_stop_at_locked(c, s->k + 1,
                                 r->status < 0 ? r->status : 0);
    vl_buf_unref(s->buf);
    s->buf = NULL;
    s->data = NULL;
    s->state = DIST_COPY_WRITTEN;
    pthread_mutex_unlock(&c->lock);
    dist_copy_pump(c);
}


/* Accounts answered writes in chunk order, frees slots that will never
 * be written, and lists the reads and writes to issue now. */
static void
dist_copy_plan_locked(struct dist_copy *c, struct dist_copy_batch *batch)
{
    struct dist_copy_slot *s;

    batch->n = 0;
    for (;;) {
        s = &c->slots[c->acked % DIST_COPY_INFLIGHT];
        if (c->acked >= c->next_write || c->acked >= c->limit
            || s->state != DIST_COPY_WRITTEN
            || s->k != c->acked)
            break;
        c->copied += s->n_written;
        s->state = DIST_COPY_IDLE;
        c->acked++;
    }
    /* Chunks at or past the limit that were read but will not be
     * written give their slot back. */
    for (unsigned i = 0; i < DIST_COPY_INFLIGHT; i++) {
        s = &c->slots[i];
        if (s->state == DIST_COPY_READ && s->k >= c->limit) {
            vl_buf_unref(s->buf);
            s->buf = NULL;
            s->data = NULL;
            s->state = DIST_COPY_IDLE;
        }
    }
    while (c->next_write < c->limit) {
        s = &c->slots[c->next_write % DIST_COPY_INFLIGHT];
        if (s->state != DIST_COPY_READ || s->k != c->next_write)
            break;
        s->state = DIST_COPY_WRITING;
        s->iov.iov_base = (void *)s->data;
        s->iov.iov_len = s->n_read;
        batch->slot[batch->n] = s;
        batch->is_write[batch->n++] = true;
        c->next_write++;
    }
    while (c->next_read < c->limit && c->next_read < c->n_chunks
           && c->next_read < c->acked + DIST_COPY_INFLIGHT) {
        uint64_t k = c->next_read;
        uint64_t start = k * DIST_COPY_CHUNK;

        s = &c->slots[k % DIST_COPY_INFLIGHT];
        if (s->state != DIST_COPY_IDLE)
            break;
        s->state = DIST_COPY_READING;
        s->k = k;
        s->size = c->len - start < DIST_COPY_CHUNK ? c->len - start
                                                   : DIST_COPY_CHUNK;
        s->n_read = 0;
        s->n_written = 0;
        s->wstatus = 0;
        batch->slot[batch->n] = s;
        batch->is_write[batch->n++] = false;
        c->next_read++;
    }
}


/* Winds one planned read or write; a request that cannot be made stops
 * the copy there and counts as answered. */
static void
dist_copy_issue(struct dist_copy *c, struct dist_copy_slot *s, bool is_write)
{
    struct vl_copy_file_range_args *a = VL_ARGS(c->req, copy_file_range);
    uint64_t rel = s->k * DIST_COPY_CHUNK;
    vl_req_t *r;

    r = vl_req_new_op(c->req, is_write ? c->dst : c->src,
                      is_write ? VL_FOP_WRITE : VL_FOP_READ);
    if (r == NULL) {
        pthread_mutex_lock(&c->lock);
        dist_copy_stop_at_locked(c, s->k, -ENOMEM);
        if (is_write) {
            vl_buf_unref(s->buf);
            s->buf = NULL;
            s->data = NULL;
            s->n_written = 0;
            s->wstatus = -ENOMEM;
            s->state = DIST_COPY_WRITTEN;
        } else {
            s->state = DIST_COPY_IDLE;
        }
        c->holds--; /* the hold taken for this request; never the last:
                       the issuing pass still holds one */
        pthread_mutex_unlock(&c->lock);
        return;
    }
    if (is_write) {
        struct vl_write_args *w = VL_ARGS(r, write);

        w->fd = a->fd_out;
        w->iov = &s->iov;
        w->n_iov = 1;
        w->offset = a->off_out + (off_t)rel;
        w->flags = (uint32_t)a->fd_out->flags;
        w->buf = s->buf;
        vl_wind(r, dist_copy_write_done, s);
    } else {
        struct vl_read_args *rd = VL_ARGS(r, read);

        rd->fd = a->fd_in;
        rd->size = s->size;
        rd->offset = a->off_in + (off_t)rel;
        rd->flags = (uint32_t)a->fd_in->flags;
        vl_wind(r, dist_copy_read_done, s);
    }
}


/* Issues what can go now, again until nothing more can (a request that
 * could not be made changes the plan). Every caller owns one hold (a
 * child request that just answered, or the start), dropped at the end:
 * the last hold answers, right after a plan made under the same lock,
 * so the accounting it answers with is complete. */
static void
dist_copy_pump(struct dist_copy *c)
{
    struct dist_copy_batch batch;

    pthread_mutex_lock(&c->lock);
    for (;;) {
        dist_copy_plan_locked(c, &batch);
        if (batch.n == 0)
            break;
        c->holds += (int)batch.n;
        pthread_mutex_unlock(&c->lock);
        for (unsigned i = 0; i < batch.n; i++)
            dist_copy_issue(c, batch.slot[i], batch.is_write[i]);
        pthread_mutex_lock(&c->lock);
    }
    dist_copy_release_locked(c);
}


/* Refuses what the kernel refuses, before anyone is asked. */
static int
dist_copy_check(const struct vl_copy_file_range_args *a)
{
    int acc_in = a->fd_in->flags & O_ACCMODE;
    int acc_out = a->fd_out->flags & O_ACCMODE;

    if (a->flags != 0 || a->off_in < 0 || a->off_out < 0)
        return -EINVAL;
    if (acc_in == O_WRONLY || acc_out == O_RDONLY
        || (a->fd_out->flags & O_APPEND))
        return -EBADF;
    /* A type not known yet (0) is let through: the brick checks. */
    if (S_ISDIR(a->fd_in->inode->type) || S_ISDIR(a->fd_out->inode->type))
        return -EISDIR;
    if ((a->fd_in->inode->type != 0 && !S_ISREG(a->fd_in->inode->type))
        || (a->fd_out->inode->type != 0 && !S_ISREG(a->fd_out->inode->type)))
        return -EINVAL;
    return 0;
}


static void
dist_copy_across(vl_xlator_t *xl, vl_req_t *req, int in, int out)
{
    struct vl_copy_file_range_args *a = VL_ARGS(req, copy_file_range);
    struct dist_copy *c;
    size_t len = a->len;
    int rc;

    rc = dist_copy_check(a);
    if (rc != 0)
        goto out;
    rc = -ENOTCONN;
    if (!dist_is_up(xl, (unsigned)in) || !dist_is_up(xl, (unsigned)out))
        goto out;
    if (len > DIST_COPY_MAX)
        len = DIST_COPY_MAX;
    /* off + len must stay an off_t on both sides. */
    if ((uint64_t)a->off_in > (uint64_t)(INT64_MAX - (int64_t)len)
        || (uint64_t)a->off_out > (uint64_t)(INT64_MAX - (int64_t)len)) {
        rc = -EOVERFLOW;
        goto out;
    }
    if (len == 0) {
        req->reply.count = 0;
        rc = 0;
        goto out;
    }
    rc = -ENOMEM;
    c = vl_calloc(xl, 1, sizeof(*c), DIST_MT_LOCAL);
    if (c == NULL)
        goto out;
    pthread_mutex_init(&c->lock, NULL);
    c->xl = xl;
    c->req = req;
    c->src = xl->children[in];
    c->dst = xl->children[out];
    c->len = len;
    c->n_chunks = (len + DIST_COPY_CHUNK - 1) / DIST_COPY_CHUNK;
    c->limit = c->n_chunks;
    c->holds = 1; /* the start's, dropped by the pump */
    for (unsigned i = 0; i < DIST_COPY_INFLIGHT; i++)
        c->slots[i].c = c;
    dist_copy_pump(c); /* answers req, maybe before returning */
    return;
out:
    vl_unwind(req, rc);
}


void
dist_copy_file_range(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_copy_file_range_args *a = VL_ARGS(req, copy_file_range);
    int in, out;

    if (a->fd_in == NULL || a->fd_out == NULL) {
        vl_unwind(req, -EBADF);
        return;
    }
    in = dist_copy_subvol(xl, a->fd_in);
    out = dist_copy_subvol(xl, a->fd_out);
    /* One subvolume, or a file not placed yet: the brick copies (the
     * route finds an unplaced file first). */
    if (in < 0 || out < 0 || in == out) {
        dist_fop_route(xl, req);
        return;
    }
    dist_copy_across(xl, req, in, out);
}
