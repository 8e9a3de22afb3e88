/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-readdir: listing a directory that exists on every subvolume.
 *
 * opendir opens the directory on every up subvolume (the one vl_fd_t; each
 * child keeps its own ctx in it). readdir walks the subvolumes in index
 * order: files from each, directories (and "." "..") only from the first
 * opened one (they exist everywhere), link files and migration markers
 * never. A d_off cookie is (subvolume index << 48) | the brick's cookie;
 * storage/posix gives stream positions, far below 2^48, so a listing
 * resumes exactly. Children are always asked for readdirplus, since only
 * the mode tells a link file; the attributes are dropped again when the
 * caller did not ask for them. One readdir fills the caller's buffer from
 * as many subvolumes as fit (each asked for the room left), and the last
 * entry of a subvolume that reached its end carries the cookie of the
 * next subvolume's start, so no subvolume is read once more just to see
 * its end.
 *
 * Intercepts: opendir, readdir (and readdirplus).
 * Per fd:     dist_fd_ctx.dir_open (which children opened it), fd->lock.
 * Threads:    dist-worker.c threads.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"

/* Below this much room left, a readdir answers with what it has. */
#define DIST_READDIR_MIN_ROOM 512


static void
dist_opendir_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_opendir_args *a = VL_ARGS(req, opendir);
    union vl_fop_args args[DIST_MAX_SUBVOLS];
    struct dist_call calls[DIST_MAX_SUBVOLS];
    struct dist_fd_ctx *ctx;
    unsigned n = dist_priv(xl)->n;
    uint64_t opened = 0;
    int first = -1, rc = -ENOTCONN;

    for (unsigned i = 0; i < n; i++)
        args[i] = req->args;
    dist_fan_sync(xl, req, dist_up_mask(xl), VL_FOP_OPENDIR, args, calls);
    for (unsigned i = 0; i < n; i++) {
        if (calls[i].status == 0) {
            opened |= 1ULL << i;
            if (first < 0)
                first = (int)i;
        } else if (calls[i].status != -ENOTCONN && rc == -ENOTCONN) {
            rc = calls[i].status;
        }
    }
    /* A copy missing on one subvolume (not healed yet) is not fatal. */
    if (first >= 0) {
        rc = 0;
        vl_reply_clear(&req->reply);
        req->reply.iatt = calls[first].reply.iatt;
        ctx = vl_fd_ctx(a->fd, xl);
        pthread_mutex_lock(&a->fd->lock);
        ctx->dir_open = opened;
        pthread_mutex_unlock(&a->fd->lock);
    }
    dist_calls_clear(calls, n);
    vl_unwind(req, rc);
}


void
dist_opendir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_opendir_args *a = VL_ARGS(req, opendir);
    int rc;

    if (a->fd == NULL) {
        vl_unwind(req, -EINVAL);
        return;
    }
    rc = dist_task_run(xl, req, dist_opendir_task);
    if (rc != 0)
        vl_unwind(req, rc);
}


/* Whether entry e of subvolume idx belongs in distribute's listing. */
static bool
dist_readdir_keep(const struct vl_dirent *e, bool is_first)
{
    bool is_dot = strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0;
    bool is_dir = e->has_iatt ? S_ISDIR(e->iatt.mode) : e->type == DT_DIR;

    if (is_dot || is_dir)
        return is_first;
    return !(e->has_iatt && dist_iatt_is_linkfile(&e->iatt));
}


/* A known inode listed here has its data on subvolume idx: its next fop
 * goes there without a lookup by GFID. */
static void
dist_readdir_note(vl_xlator_t *xl, const vl_gfid_t *gfid, int idx)
{
    vl_inode_t *inode = vl_inode_find(xl->graph->itable, gfid);
    struct dist_inode_ctx *ctx;

    if (inode == NULL)
        return;
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
dist_readdir_next(uint64_t opened, unsigned idx, unsigned n)
{
    for (unsigned i = idx + 1; i < n; i++)
        if (opened & (1ULL << i))
            return (int)i;
    return -1;
}


static void
dist_readdir_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_readdir_args *a = VL_ARGS(req, readdir);
    struct dist_fd_ctx *ctx = vl_fd_ctx(a->fd, xl);
    struct vl_dirent_list *out = &req->reply.entries;
    unsigned n = dist_priv(xl)->n;
    uint64_t opened;
    uint64_t off = (uint64_t)a->offset;
    unsigned idx = (unsigned)(off >> DIST_COOKIE_SHIFT);
    int64_t boff = (int64_t)(off & DIST_COOKIE_MASK);
    size_t used = 0;
    int first, rc = 0;

    pthread_mutex_lock(&a->fd->lock);
    opened = ctx->dir_open;
    pthread_mutex_unlock(&a->fd->lock);
    if (opened == 0) {
        vl_unwind(req, -EBADF);
        return;
    }
    first = __builtin_ctzll(opened);
    vl_reply_clear(&req->reply);
    for (;;) {
        union vl_fop_args ca;
        struct dist_call call;
        bool is_eof, is_last;

        while (idx < n && !(opened & (1ULL << idx))) {
            idx++;
            boff = 0;
        }
        if (idx >= n) {
            out->eof = true;
            break;
        }
        memset(&ca, 0, sizeof(ca));
        ca.readdir.fd = a->fd;
        ca.readdir.size = a->size - used; /* the room left */
        ca.readdir.offset = boff;
        ca.readdir.plus = true;
        rc = dist_call_sync(xl, req, idx, VL_FOP_READDIR, &ca, &call);
        if (rc != 0) {
            vl_reply_clear(&call.reply);
            break;
        }
        is_eof = call.reply.entries.eof;
        for (size_t k = 0; k < call.reply.entries.n && rc == 0; k++) {
            struct vl_dirent *e = &call.reply.entries.ents[k];

            if (e->off < 0 || (uint64_t)e->off > DIST_COOKIE_MASK) {
                vl_log(xl, VL_LOG_ERROR, "%s: readdir cookie %lld does "
                       "not fit in 48 bits", xl->children[idx]->name,
                       (long long)e->off);
                rc = -EOVERFLOW;
                break;
            }
            boff = e->off;
            if (!dist_readdir_keep(e, (int)idx == first))
                continue;
            if (e->has_iatt && !S_ISDIR(e->iatt.mode))
                dist_readdir_note(xl, &e->iatt.gfid, (int)idx);
            rc = vl_dirent_list_add(out, e->ino,
                                    (int64_t)(((uint64_t)idx
                                               << DIST_COOKIE_SHIFT)
                                              | (uint64_t)e->off),
                                    e->type, e->name,
                                    a->plus && e->has_iatt ? &e->iatt
                                                           : NULL);
            used += dist_dirent_cost(e->name, a->plus);
        }
        if (call.reply.entries.n == 0)
            is_eof = true; /* no progress possible on this one */
        vl_reply_clear(&call.reply);
        if (rc != 0)
            break;
        is_last = dist_readdir_next(opened, idx, n) < 0;
        if (is_eof && !is_last && out->n > 0) {
            /* Continuing after the last entry means the start of the next
             * subvolume: no empty read of this one next time. */
            out->ents[out->n - 1].off =
                (int64_t)((uint64_t)dist_readdir_next(opened, idx, n)
                          << DIST_COOKIE_SHIFT);
        }
        /* Fill the caller's buffer from the next subvolumes while room is
         * left (FUSE packs what fits; the rest is read again later). */
        if (out->n > 0
            && (!is_eof || is_last || used + DIST_READDIR_MIN_ROOM > a->size)) {
            out->eof = is_eof && is_last;
            break;
        }
        if (is_eof) {
            idx++;
            boff = 0;
        }
    }
    if (rc != 0)
        vl_dirent_list_clear(out);
    vl_unwind(req, rc);
}


void
dist_readdir(vl_xlator_t *xl, vl_req_t *req)
{
    int rc = dist_task_run(xl, req, dist_readdir_task);

    if (rc != 0)
        vl_unwind(req, rc);
}
