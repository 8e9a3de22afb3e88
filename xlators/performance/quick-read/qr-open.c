/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qr-open: open-behind. An OPEN for reading only (no O_TRUNC, no
 * O_DIRECT: a direct reader wants the brick's bytes, not a cached copy)
 * of a file whose content is cached and fresh is answered here and
 * nothing is sent; reads on it are served from the cache. Without a
 * cached copy, a nameless LOOKUP asking for the content goes first (one
 * round trip for what would be OPEN + READ), unless the file is known to
 * be larger than max-file-size. Any fop that
 * needs the file really open (fstat, lk, fsync, a read the cache cannot
 * answer any more...) first opens it below, once: fops arriving while
 * that OPEN is in flight wait in the fd's queue, and all of them go down
 * (or get the open's error) when it answers. An fd never opened below
 * sends nothing on release (protocol/client has no remote fd for it).
 *
 * Per fd:  struct qr_fd (fd->lock). Per req: struct qr_local (queue).
 * Threads: any; the real open's answer may come on a loop thread.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "quick-read.h"


bool
qr_fd_is_lazy(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct qr_fd *qf = fd != NULL ? vl_fd_ctx(fd, xl) : NULL;
    bool is_lazy;

    if (qf == NULL)
        return false;
    pthread_mutex_lock(&fd->lock);
    is_lazy = qf->state == QR_FD_LAZY;
    pthread_mutex_unlock(&fd->lock);
    return is_lazy;
}


bool
qr_fd_failed(vl_xlator_t *xl, vl_fd_t *fd, int *status)
{
    struct qr_fd *qf = fd != NULL ? vl_fd_ctx(fd, xl) : NULL;
    bool is_failed;

    if (qf == NULL)
        return false;
    pthread_mutex_lock(&fd->lock);
    is_failed = qf->state == QR_FD_FAILED;
    *status = qf->status;
    pthread_mutex_unlock(&fd->lock);
    return is_failed;
}


/* The last ref of fd: a lazy one stops counting for its inode's
 * keeper. Nothing is sent (nothing was opened below for it). */
void
qr_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    qr_lazy_put(xl, fd);
}


/* Answers req (an OPEN) here: the fd is lazy, its reads use the cache. */
static void
qr_open_local(vl_xlator_t *xl, vl_req_t *req, const struct vl_iatt *iatt)
{
    struct qr_priv *priv = xl->priv;
    vl_fd_t *fd = VL_ARGS(req, open)->fd;
    struct qr_fd *qf = vl_fd_ctx(fd, xl);

    pthread_mutex_lock(&fd->lock);
    qf->state = QR_FD_LAZY;
    qf->queue = NULL;
    qf->tail = &qf->queue;
    pthread_mutex_unlock(&fd->lock);
    qr_lazy_get(xl, fd);
    atomic_fetch_add(&priv->local_opens, 1);
    qr_cache_note_use(xl, fd->inode);
    qr_rdp_note_reader(xl, req->caller.pid);
    req->reply.iatt = *iatt;
    vl_unwind(req, 0);
}


static void
qr_open_lookup_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    vl_inode_t *inode = VL_ARGS(req, open)->fd->inode;
    struct vl_iatt iatt;

    if (r->status == 0) {
        bool has = r->reply.buf != NULL && r->reply.count >= 0;

        qr_cache_update(xl, inode, &r->reply.iatt, has ? r->reply.buf : NULL,
                        r->reply.data, has ? (size_t)r->reply.count : 0);
    }
    if (r->status == 0 && qr_cache_has(xl, inode, true, &iatt)) {
        qr_open_local(xl, req, &iatt);
        return;
    }
    /* Too large, changed meanwhile, or the lookup failed: the OPEN goes
     * down and answers for itself. */
    vl_pass(req, VL_FIRST_CHILD(xl));
}


void
qr_open(vl_xlator_t *xl, vl_req_t *req)
{
    const struct qr_conf *conf = VL_CONF(xl, struct qr_conf);
    struct vl_open_args *a = VL_ARGS(req, open);
    vl_inode_t *inode = a->fd != NULL ? a->fd->inode : a->loc.inode;
    struct qr_fd *qf = a->fd != NULL ? vl_fd_ctx(a->fd, xl) : NULL;
    struct vl_iatt iatt;
    vl_req_t *r;

    /* Answered here only if (1) open-behind is on, (2) the open only
     * reads and (3) neither truncates nor bypasses caches. */
    if (!conf->is_open_behind || qf == NULL                        /* (1) */
        || (a->flags & O_ACCMODE) != O_RDONLY                      /* (2) */
        || (a->flags & (O_TRUNC | O_DIRECT))) {                    /* (3) */
        if (a->flags & O_TRUNC)
            qr_cache_drop(xl, inode);
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    if (qr_cache_has(xl, inode, true, &iatt)) {
        qr_open_local(xl, req, &iatt);
        return;
    }
    /* Not cached (the kernel knew the name from readdirplus, or the copy
     * is too old): unless the file is known to be too large, a nameless
     * LOOKUP fetches content and attributes in one round trip instead of
     * the OPEN and the READ that would follow. */
    if (conf->max_file_size == 0 || qr_cache_is_large(xl, inode)
        || vl_gfid_is_null(&inode->gfid)
        || (r = vl_req_new_op(req, VL_FIRST_CHILD(xl), VL_FOP_LOOKUP))
               == NULL) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    r->args.lookup.loc.inode = inode;
    r->args.lookup.content_max = (uint32_t)conf->max_file_size;
    vl_wind(r, qr_open_lookup_done, req);
}


/* Takes the waiting requests of fd and resumes each: again through our
 * fop (now with the fd open below) or answered with the open's error. */
static void
qr_fd_resume(vl_xlator_t *xl, vl_fd_t *fd, int status)
{
    struct qr_fd *qf = vl_fd_ctx(fd, xl);
    vl_req_t *q;

    pthread_mutex_lock(&fd->lock);
    q = qf->queue;
    qf->queue = NULL;
    qf->tail = &qf->queue;
    pthread_mutex_unlock(&fd->lock);
    while (q != NULL) {
        vl_req_t *next = VL_REQ_PRIV(q, struct qr_local)->next;

        if (status == 0)
            xl->cls->fops[q->op](xl, q);
        else
            vl_unwind(q, status);
        q = next;
    }
}


static void
qr_open_done(vl_req_t *r, void *cookie)
{
    vl_xlator_t *xl = cookie;
    struct qr_priv *priv = xl->priv;
    vl_fd_t *fd = r->args.open.fd; /* our ref, taken in qr_open_real */
    struct qr_fd *qf = vl_fd_ctx(fd, xl);
    int status = r->status;

    pthread_mutex_lock(&fd->lock);
    qf->state = status == 0 ? QR_FD_REAL : QR_FD_FAILED;
    qf->status = status;
    pthread_mutex_unlock(&fd->lock);
    atomic_fetch_add(status == 0 ? &priv->real_opens : &priv->open_fails, 1);
    if (status != 0)
        vl_log(xl, VL_LOG_WARNING, "deferred open failed: %s",
               strerror(-status));
    /* Open below (or failed for good): no keeper needed for it. */
    qr_lazy_put(xl, fd);
    qr_fd_resume(xl, fd, status);
    vl_fd_unref(fd);
}


/* Sends the deferred OPEN of fd on behalf of req (already queued). */
static void
qr_open_real(vl_xlator_t *xl, vl_req_t *req, vl_fd_t *fd)
{
    struct qr_fd *qf = vl_fd_ctx(fd, xl);
    vl_req_t *o;

    o = vl_req_new_op(req, VL_FIRST_CHILD(xl), VL_FOP_OPEN);
    if (o == NULL) {
        /* Nothing was sent: back to lazy, and every waiting fop (req
         * among them) gets the error. */
        pthread_mutex_lock(&fd->lock);
        qf->state = QR_FD_LAZY;
        pthread_mutex_unlock(&fd->lock);
        qr_fd_resume(xl, fd, -ENOMEM);
        return;
    }
    o->args.open.loc.inode = fd->inode;
    o->args.open.flags = fd->flags & ~(O_CREAT | O_EXCL | O_TRUNC);
    o->args.open.fd = vl_fd_ref(fd);
    vl_wind(o, qr_open_done, xl);
}


bool
qr_fd_ready(vl_xlator_t *xl, vl_req_t *req, vl_fd_t *fd)
{
    struct qr_fd *qf = fd != NULL ? vl_fd_ctx(fd, xl) : NULL;
    struct qr_local *local = VL_REQ_PRIV(req, struct qr_local);
    enum qr_fd_state state;
    int status;

    if (qf == NULL)
        return true;
    pthread_mutex_lock(&fd->lock);
    state = qf->state;
    status = qf->status;
    if (state == QR_FD_LAZY || state == QR_FD_OPENING) {
        local->next = NULL;
        *qf->tail = req;
        qf->tail = &local->next;
        qf->state = QR_FD_OPENING;
    }
    pthread_mutex_unlock(&fd->lock);
    switch (state) {
    case QR_FD_REAL:
        return true;
    case QR_FD_FAILED:
        vl_unwind(req, status);
        return false;
    case QR_FD_LAZY:
        qr_open_real(xl, req, fd);
        return false;
    case QR_FD_OPENING:
        return false;
    }
    return false;
}
