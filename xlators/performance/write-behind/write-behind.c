/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * write-behind: answer WRITE at once and send it to the child behind the
 * caller's back, so a writer does not wait one round trip per write.
 *
 * Intercepts: write (early answer), flush (flush-behind), fsync (waits,
 *             reports a failed early write), read, stat, setattr,
 *             lookup, getxattr, lk, fallocate, lseek, rchecksum,
 *             copy_file_range, open (wait for pending writes of their
 *             inode; with none they go down at once), create (remembers
 *             the mode, as do the replies of lookup, stat, setattr,
 *             open, write...), readdir (drops the attributes of files
 *             with writes pending while it ran from a listing).
 * Early:      a WRITE is answered at once (count = its length) when (1) its
 *             fd is not O_SYNC/O_DSYNC (nor O_DIRECT with strict-o-direct),
 *             (2) its fd had no failed early write, (3) the inode's mode
 *             is known from a reply and has no setuid/setgid bit (the
 *             bridge kills those bits from the WRITE reply's attributes,
 *             which an early answer does not have), and (4) the inode's
 *             window has room. Otherwise it goes down at once (in order)
 *             and its caller waits for the child's answer.
 * Aggregate:  an early write smaller than aggregate-size that continues
 *             the newest write of its inode while a write of the inode is
 *             in flight is held; contiguous early writes of the same fd
 *             and caller are appended to it; the in-flight write's answer
 *             winds it (wb-queue.c). Nothing in flight: it goes at once.
 * Setattr:    a chmod/chown/utimes of an open regular file that the
 *             brick cannot refuse is answered early with predicted
 *             attributes and queued as a barrier (wb-setattr.c).
 * Order:      early writes of an inode go down one at a time (wb-queue.c),
 *             so a failed one is never followed by later early writes.
 * Errors:     a failed early write fails the fd's writes that have not
 *             gone down yet, is returned by the fd's next write (once),
 *             and, as the kernel's errseq, by the next fsync of every fd
 *             of the inode and by the next flush of every fd whose fsync
 *             did not report it; later writes of the fd are no longer
 *             answered early. A failed early SETATTR is sticky on the
 *             inode, returned by the next write, flush or fsync of any of
 *             its fds.
 * Per inode:  struct wb_inode (queue, window, attributes, open fds,
 *             sticky setattr error), wb-queue.c.
 * Per fd:     struct wb_fd (sticky error, counted open).
 * Per req:    nothing; queued requests hang off struct wb_entry.
 * Threads:    any; see wb-queue.c for the locks.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "builtin.h"
#include "write-behind.h"

/* Writes at least this big keep the caller's buffer (a ref); smaller ones
 * are copied, so a small write does not pin a 1 MiB bridge buffer. */
#define WB_KEEP_BUF_MIN (64 * 1024)


/* The inode a fop acts on, or NULL. */
static vl_inode_t *
wb_req_inode(vl_req_t *req)
{
    vl_fd_t *fd = NULL;

    switch (req->op) {
    case VL_FOP_LOOKUP:
        return req->args.lookup.loc.inode;
    case VL_FOP_STAT:
        fd = req->args.stat.fd;
        return fd != NULL ? fd->inode : req->args.stat.loc.inode;
    case VL_FOP_SETATTR:
        fd = req->args.setattr.fd;
        return fd != NULL ? fd->inode : req->args.setattr.loc.inode;
    case VL_FOP_GETXATTR:
        return req->args.getxattr.loc.inode;
    case VL_FOP_OPEN:
        return req->args.open.loc.inode;
    case VL_FOP_CREATE:
        return req->args.create.loc.inode;
    case VL_FOP_READ:
        fd = req->args.read.fd;
        break;
    case VL_FOP_FLUSH:
        fd = req->args.flush.fd;
        break;
    case VL_FOP_FSYNC:
        fd = req->args.fsync.fd;
        break;
    case VL_FOP_LK:
        fd = req->args.lk.fd;
        break;
    case VL_FOP_FALLOCATE:
        fd = req->args.fallocate.fd;
        break;
    case VL_FOP_LSEEK:
        fd = req->args.lseek.fd;
        break;
    case VL_FOP_RCHECKSUM:
        fd = req->args.rchecksum.fd;
        break;
    case VL_FOP_COPY_FILE_RANGE:
        fd = req->args.copy_file_range.fd_out;
        break;
    default:
        break;
    }
    return fd != NULL ? fd->inode : NULL;
}


/* The fd whose recorded failures a fop reports (flush, fsync), or NULL;
 * *path says as which. */
static vl_fd_t *
wb_req_err_fd(vl_req_t *req, enum wb_path *path)
{
    *path = WB_PATH_FLUSH;
    if (req->op == VL_FOP_FLUSH)
        return req->args.flush.fd;
    *path = WB_PATH_FSYNC;
    if (req->op == VL_FOP_FSYNC)
        return req->args.fsync.fd;
    return NULL;
}


/* Sets the error cursors of an fd that was just opened (see
 * wb_fd_sample_locked). */
static void
wb_fd_sample(vl_xlator_t *xl, vl_fd_t *fd)
{
    pthread_mutex_lock(&fd->inode->lock);
    wb_fd_sample_locked(wb_inode_peek(xl, fd->inode), vl_fd_ctx(fd, xl));
    pthread_mutex_unlock(&fd->inode->lock);
}


/* ---- fops that wait for pending writes ---- */

/* Answers req with the child's reply (child NULL: with status alone),
 * after remembering the mode and taking a recorded failure for
 * flush/fsync (taken even when the child failed: it was reported). */
static void
wb_answer(vl_xlator_t *xl, vl_req_t *req, vl_req_t *child, int status)
{
    vl_inode_t *inode = wb_req_inode(req);
    enum wb_path path;
    vl_fd_t *err_fd = wb_req_err_fd(req, &path);
    vl_fd_t *opened = NULL;
    int err;

    if (child != NULL && status == 0 && inode != NULL
        && req->op != VL_FOP_COPY_FILE_RANGE) {
        pthread_mutex_lock(&inode->lock);
        wb_inode_seen_locked(wb_inode_peek(xl, inode), &child->reply.iatt);
        pthread_mutex_unlock(&inode->lock);
    }
    if (status == 0 && req->op == VL_FOP_OPEN)
        opened = req->args.open.fd;
    if (status == 0 && req->op == VL_FOP_CREATE)
        opened = req->args.create.fd;
    if (opened != NULL && opened->inode != NULL) {
        wb_fd_sample(xl, opened);
        /* Open fds are counted only while setattr-behind is on: an fd
         * opened while it was off just never lets a SETATTR go early. */
        if (VL_CONF(xl, struct wb_conf)->is_setattr_behind)
            wb_fd_opened(xl, opened);
    }
    if (err_fd != NULL) {
        err = wb_fd_take_err(xl, err_fd, path);
        /* A child without flush/fsync (ENOSYS) says nothing about the
         * data: the failure taken here is the answer, or it would be
         * lost (mount/fuse answers a FLUSH's ENOSYS with 0). */
        if (err != 0 && (status == 0 || status == -ENOSYS))
            status = err;
    }
    if (child != NULL)
        vl_reply_move(req, child);
    vl_unwind(req, status);
}


/* A fop wound with nothing pending came back. */
static void
wb_observe_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;

    wb_answer(req->xl, req, child, child->status);
}


/* A queued fop is done (child NULL: it could not be wound): leave the
 * queue(s), answer, wind what that freed. e is the primary entry. */
static void
wb_barrier_finish(struct wb_entry *e, vl_req_t *child, int status)
{
    struct wb_entry *go = NULL;
    struct wb_entry *ents[2] = {e, e->peer};

    for (int i = 0; i < 2; i++) {
        struct wb_entry *x = ents[i];

        if (x == NULL)
            continue;
        pthread_mutex_lock(&x->inode->lock);
        wb_queue_del_locked(wb_inode_peek(x->xl, x->inode), x, &go);
        pthread_mutex_unlock(&x->inode->lock);
    }
    wb_answer(e->xl, e->req, child, status);
    wb_entry_free(e->peer);
    wb_entry_free(e);
    wb_queue_wind(go);
}


static void
wb_barrier_done(vl_req_t *child, void *cookie)
{
    wb_barrier_finish(cookie, child, child->status);
}


/* One of the entries of e's request is free to go (or set up): the last
 * of them winds the request. */
static void
wb_barrier_arrive(struct wb_entry *e)
{
    struct wb_entry *primary = e->is_primary ? e : e->peer;
    vl_req_t *child;

    if (atomic_fetch_sub(&primary->n_blocked, 1) != 1)
        return;
    child = vl_req_child(primary->req, VL_FIRST_CHILD(primary->xl));
    if (child == NULL) {
        wb_barrier_finish(primary, NULL, -ENOMEM);
        return;
    }
    vl_wind(child, wb_barrier_done, primary);
}


void
wb_barrier_go(struct wb_entry *e)
{
    if (e->is_early)
        wb_setattr_go(e); /* answered already: only its child is left */
    else
        wb_barrier_arrive(e);
}


/* A fop on two inodes (copy_file_range) waits for both queues. Each
 * entry counts in n_blocked until free to go, plus one for this setup, so
 * the request is wound exactly once, by whoever brings it to zero. */
static void
wb_wait_pair(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode,
             vl_inode_t *inode2)
{
    struct wb_priv *priv = xl->priv;
    struct wb_entry *e = wb_entry_new(xl, inode, WB_E_BARRIER);
    struct wb_entry *e2 = wb_entry_new(xl, inode2, WB_E_BARRIER);
    struct wb_entry *ents[2] = {e, e2};
    bool is_waiting = false;

    if (e == NULL || e2 == NULL) {
        wb_entry_free(e);
        wb_entry_free(e2);
        vl_unwind(req, -ENOMEM);
        return;
    }
    e->req = e2->req = req;
    e->peer = e2;
    e2->peer = e;
    e->is_primary = true;
    atomic_init(&e->n_blocked, 3);
    for (int i = 0; i < 2; i++) {
        struct wb_inode *wi = wb_inode_peek(xl, ents[i]->inode);
        bool is_free = true;

        pthread_mutex_lock(&ents[i]->inode->lock);
        if (wi->head != NULL)
            is_free = wb_queue_add_locked(wi, ents[i]);
        pthread_mutex_unlock(&ents[i]->inode->lock);
        if (!is_free)
            is_waiting = true;
        else
            atomic_fetch_sub(&e->n_blocked, 1);
    }
    if (is_waiting)
        atomic_fetch_add(&priv->n_waited, 1);
    wb_barrier_arrive(e); /* the setup's own count */
}


/* Queues req behind the pending writes of inode (and of inode2, for a
 * copy between two files) or, with nothing pending, winds it now: with a
 * done when is_observed (the reply tells the mode, or a flush/fsync must
 * report a sticky error), else passed. */
static void
wb_wait_or_wind(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode,
                vl_inode_t *inode2, bool is_observed)
{
    struct wb_priv *priv = xl->priv;
    struct wb_entry *e = NULL;
    struct wb_inode *wi;
    vl_req_t *child;
    bool is_nomem = false;

    if (inode == NULL) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    if (inode2 != NULL && inode2 != inode) {
        wb_wait_pair(xl, req, inode, inode2);
        return;
    }
    wi = wb_inode_peek(xl, inode);
    pthread_mutex_lock(&inode->lock);
    if (wi->head != NULL) {
        /* Allocated under the lock: the queue must not drain between the
         * look and the add, or the fop would wait for nothing. */
        e = wb_entry_new(xl, inode, WB_E_BARRIER);
        if (e != NULL) {
            e->req = req;
            e->is_primary = true;
            atomic_init(&e->n_blocked, 1);
            wb_queue_add_locked(wi, e); /* never free: writes are ahead */
        } else {
            is_nomem = true;
        }
    }
    pthread_mutex_unlock(&inode->lock);
    if (is_nomem) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    if (e != NULL) {
        atomic_fetch_add(&priv->n_waited, 1);
        return; /* wound by wb_barrier_go when free to go */
    }
    if (!is_observed) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    child = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (child == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(child, wb_observe_done, req);
}


/* Fops whose reply carries the object's attributes: worth a done for the
 * mode even with nothing pending. */
void
wb_fop_observed(vl_xlator_t *xl, vl_req_t *req)
{
    wb_wait_or_wind(xl, req, wb_req_inode(req), NULL, true);
}


static void
wb_fop_wait(vl_xlator_t *xl, vl_req_t *req)
{
    wb_wait_or_wind(xl, req, wb_req_inode(req), NULL, false);
}


static void
wb_fop_open(vl_xlator_t *xl, vl_req_t *req)
{
    /* An open (O_TRUNC above all) must not overtake pending writes; its
     * reply may tell the mode. */
    wb_wait_or_wind(xl, req, wb_req_inode(req), NULL, true);
}


static void
wb_fop_create(vl_xlator_t *xl, vl_req_t *req)
{
    /* A fresh inode: nothing can be pending; wound for the mode. */
    wb_wait_or_wind(xl, req, wb_req_inode(req), NULL, true);
}


static void
wb_fop_copy_file_range(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_copy_file_range_args *a = VL_ARGS(req, copy_file_range);

    wb_wait_or_wind(xl, req, a->fd_out != NULL ? a->fd_out->inode : NULL,
                    a->fd_in != NULL ? a->fd_in->inode : NULL, false);
}


static void
wb_fop_lk(vl_xlator_t *xl, vl_req_t *req)
{
    vl_fd_t *fd = VL_ARGS(req, lk)->fd;

    if (fd != NULL) {
        struct wb_inode *wi = wb_inode_peek(xl, fd->inode);

        pthread_mutex_lock(&fd->inode->lock);
        wi->has_lk = true;
        pthread_mutex_unlock(&fd->inode->lock);
    }
    wb_wait_or_wind(xl, req, wb_req_inode(req), NULL, false);
}


static void
wb_fop_fsync(vl_xlator_t *xl, vl_req_t *req)
{
    /* Always waits and syncs what did reach the brick; a recorded failure
     * is reported after (wb_answer): fsync never says 0 while a write it
     * covers failed unreported. */
    wb_wait_or_wind(xl, req, wb_req_inode(req), NULL, true);
}


static void
wb_fop_flush(vl_xlator_t *xl, vl_req_t *req)
{
    const struct wb_conf *conf = VL_CONF(xl, struct wb_conf);
    struct wb_priv *priv = xl->priv;
    vl_fd_t *fd = VL_ARGS(req, flush)->fd;
    struct wb_inode *wi;
    bool is_behind;
    int err;

    if (fd == NULL) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    /* Behind: answered with the failures recorded so far; the pending
     * writes finish after close() returned, and a failure they meet then
     * is reported to the next fsync or flush of any fd of the file
     * (opened before or after), and logged. Not when locks were taken:
     * FLUSH releases them on the bricks, and only after the writes. */
    wi = wb_inode_peek(xl, fd->inode);
    pthread_mutex_lock(&fd->inode->lock);
    is_behind = conf->is_flush_behind && !wi->has_lk;
    pthread_mutex_unlock(&fd->inode->lock);
    if (is_behind) {
        atomic_fetch_add(&priv->n_flush_behind, 1);
        err = wb_fd_take_err(xl, fd, WB_PATH_FLUSH);
        vl_unwind(req, err);
        return;
    }
    wb_wait_or_wind(xl, req, fd->inode, NULL, true);
}


/* ---- WRITE ---- */

/* Fails the writes cut from the queue behind a failed early write (list
 * by go_next, newest first): early ones count as failed, a caller that
 * waits gets err. */
static void
wb_write_fail_cut(struct wb_entry *cut, int err)
{
    struct wb_entry *rev = NULL;
    struct wb_entry *next;

    while (cut != NULL) { /* answer in queue order */
        next = cut->go_next;
        cut->go_next = rev;
        rev = cut;
        cut = next;
    }
    for (; rev != NULL; rev = next) {
        next = rev->go_next;
        if (rev->is_early)
            atomic_fetch_add(&((struct wb_priv *)rev->xl->priv)->n_failed,
                             1);
        else
            vl_unwind(rev->req, err);
        wb_entry_free(rev);
    }
}


/* A write is done (child NULL: it could not be wound): leave the queue,
 * answer the caller or record the failure, wind what it freed. A failed
 * early write is recorded before any later entry of the inode can go (a
 * waiting fsync must see it), and the fd's writes that have not gone down
 * yet fail with it, unsent: their data would land beyond the hole. */
static void
wb_write_finish(struct wb_entry *e, vl_req_t *child, int status)
{
    struct wb_priv *priv = e->xl->priv;
    struct wb_inode *wi = wb_inode_peek(e->xl, e->inode);
    struct wb_entry *go = NULL;
    struct wb_entry *cut = NULL;
    bool is_news = false;
    bool is_cut_waiting = false;
    char gfid[VL_GFID_STR_LEN];

    /* A short write answered in full: on a regular file the brick's
     * pwrite stops short only when the file system is full. */
    if (status == 0 && e->is_early && (uint64_t)child->reply.count < e->len)
        status = -ENOSPC;
    pthread_mutex_lock(&e->inode->lock);
    if (child != NULL && child->status == 0)
        wb_inode_seen_locked(wi, &child->reply.iatt);
    if (e->is_early && status != 0) {
        is_news = wb_fd_set_err_locked(e->xl, e->fd, status);
        wb_queue_cut_fd_locked(wi, e->fd, &cut);
        for (struct wb_entry *a = cut; a != NULL; a = a->go_next)
            is_cut_waiting = is_cut_waiting || !a->is_early;
        if (is_cut_waiting) {
            /* A write whose caller waits gets the error now: that is
             * the report to the fd's next write. */
            struct wb_fd *wf = vl_fd_ctx(e->fd, e->xl);

            pthread_mutex_lock(&e->fd->lock);
            wf->err = 0;
            pthread_mutex_unlock(&e->fd->lock);
        }
    }
    wb_queue_del_locked(wi, e, &go);
    pthread_mutex_unlock(&e->inode->lock);
    if (e->is_early) {
        if (status != 0) {
            atomic_fetch_add(&priv->n_failed, 1);
            if (is_news)
                vl_log(e->xl, VL_LOG_WARNING, "a write answered early "
                       "failed (%s, %llu bytes at %lld of %s); the next "
                       "write, fsync or close of the file reports it",
                       strerror(-status), (unsigned long long)e->len,
                       (long long)e->start,
                       vl_gfid_to_str(&e->inode->gfid, gfid));
        }
    } else {
        if (child != NULL)
            vl_reply_move(e->req, child);
        vl_unwind(e->req, status);
    }
    if (is_cut_waiting)
        atomic_fetch_add(&priv->n_reported, 1);
    wb_write_fail_cut(cut, status);
    wb_entry_free(e);
    wb_queue_wind(go);
}


static void
wb_write_done(vl_req_t *child, void *cookie)
{
    wb_write_finish(cookie, child, child->status);
}


void
wb_write_go(struct wb_entry *e)
{
    vl_req_t *child = e->child;

    e->child = NULL;
    if (child == NULL)
        child = vl_req_child(e->req, VL_FIRST_CHILD(e->xl));
    if (child == NULL) {
        /* Only a write not answered early builds its child here. */
        wb_write_finish(e, NULL, -ENOMEM);
        return;
    }
    vl_wind(child, wb_write_done, e);
}


/* Builds the early write's own copy of the data and its child request. */
static int
wb_write_prepare(vl_xlator_t *xl, vl_req_t *req, struct wb_entry *e)
{
    const struct vl_write_args *a = VL_ARGS(req, write);
    struct vl_write_args *ca;
    const char *bd;
    size_t off = 0;

    if (a->buf != NULL && a->n_iov == 1 && e->len >= WB_KEEP_BUF_MIN) {
        bd = a->buf->data;
        if ((const char *)a->iov[0].iov_base >= bd
            && (const char *)a->iov[0].iov_base + e->len
                   <= bd + a->buf->size) {
            e->buf = vl_buf_ref(a->buf);
            e->iov = a->iov[0];
        }
    }
    if (e->buf == NULL) {
        e->buf = vl_buf_new(e->len);
        if (e->buf == NULL)
            return -ENOMEM;
        e->is_buf_own = true;
        for (int i = 0; i < a->n_iov; i++) {
            memcpy(e->buf->data + off, a->iov[i].iov_base,
                   a->iov[i].iov_len);
            off += a->iov[i].iov_len;
        }
        e->iov.iov_base = e->buf->data;
        e->iov.iov_len = e->len;
    }
    e->child = vl_req_new_op(NULL, VL_FIRST_CHILD(xl), VL_FOP_WRITE);
    if (e->child == NULL)
        return -ENOMEM;
    e->child->caller = req->caller;
    ca = VL_ARGS(e->child, write);
    ca->fd = e->fd;
    ca->iov = &e->iov;
    ca->n_iov = 1;
    ca->offset = a->offset;
    ca->flags = a->flags;
    ca->buf = e->buf;
    return 0;
}


/* Whether the fd and flags allow an early answer at all. */
static bool
wb_write_may_behind(vl_xlator_t *xl, const struct wb_conf *conf,
                    const struct vl_write_args *a)
{
    const struct wb_fd *wf = vl_fd_ctx(a->fd, xl);
    int32_t flags = a->fd->flags | a->flags;
    bool is_failed;

    if (flags & O_DSYNC) /* O_SYNC includes O_DSYNC */
        return false;
    if ((flags & O_DIRECT) && conf->is_strict_o_direct)
        return false;
    pthread_mutex_lock(&a->fd->lock);
    is_failed = wf->is_failed;
    pthread_mutex_unlock(&a->fd->lock);
    return !is_failed;
}


/* Under inode->lock: takes a failure of an early write of fd recorded
 * meanwhile (returned), or clears *may_behind if the fd failed before. */
static int
wb_write_recheck_locked(vl_xlator_t *xl, vl_fd_t *fd, bool *may_behind)
{
    struct wb_fd *wf = vl_fd_ctx(fd, xl);
    int err;

    pthread_mutex_lock(&fd->lock);
    err = wf->err;
    wf->err = 0;
    if (wf->is_failed)
        *may_behind = false;
    pthread_mutex_unlock(&fd->lock);
    return err;
}



/* Counts len against total-size, the bytes of every inode answered
 * early and not yet acknowledged; false (nothing counted) when it does
 * not fit: the write then waits for the bricks, so the client's memory
 * stays within its share of performance.cache-size however many files
 * are written at once. */
static bool
wb_total_take(struct wb_priv *priv, const struct wb_conf *conf, size_t len)
{
    unsigned long long held = atomic_load(&priv->held_bytes);

    do {
        if (held + len > conf->total_size)
            return false;
    } while (!atomic_compare_exchange_weak(&priv->held_bytes, &held,
                                           held + len));
    return true;
}

static void
wb_fop_write(vl_xlator_t *xl, vl_req_t *req)
{
    const struct wb_conf *conf = VL_CONF(xl, struct wb_conf);
    struct wb_priv *priv = xl->priv;
    struct vl_write_args *a = VL_ARGS(req, write);
    struct wb_inode *wi;
    struct wb_entry *e;
    bool may_behind;
    bool is_early = false;
    bool is_joined = false;
    bool is_held = false; /* early, small, queued behind a write */
    bool is_free = false;
    uint64_t len = 0;
    int err;

    if (a->fd == NULL) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    err = wb_fd_take_err(xl, a->fd, WB_PATH_WRITE);
    if (err != 0) {
        vl_unwind(req, err);
        return;
    }
    for (int i = 0; i < a->n_iov; i++)
        len += a->iov[i].iov_len;
    e = wb_entry_new(xl, a->fd->inode, WB_E_WRITE);
    if (e == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    e->req = req;
    e->fd = vl_fd_ref(a->fd);
    e->len = len;
    e->is_strict = conf->is_strict_ordering;
    if (!(a->flags & O_APPEND) && !(a->fd->flags & O_APPEND)) {
        e->start = a->offset;
        e->end = a->offset + (int64_t)len;
    }
    may_behind = len > 0 && len <= conf->window_size
                 && wb_write_may_behind(xl, conf, a);
    /* Prepared before the lock; thrown away if the window is full. */
    if (may_behind && wb_write_prepare(xl, req, e) != 0)
        may_behind = false;

    wi = wb_inode_peek(xl, a->fd->inode);
    pthread_mutex_lock(&a->fd->inode->lock);
    /* An early write of the fd may have failed since the look above (its
     * failure is recorded under this lock): then this write reports it,
     * or at least is not answered early, or it could land beyond the
     * hole the failed one left. */
    err = wb_write_recheck_locked(xl, a->fd, &may_behind);
    if (err != 0) {
        pthread_mutex_unlock(&a->fd->inode->lock);
        atomic_fetch_add(&priv->n_reported, 1);
        wb_entry_free(e);
        vl_unwind(req, err);
        return;
    }
    if (may_behind && wi->has_mode && !(wi->mode & (S_ISUID | S_ISGID))) {
        if (wi->window != 0 && wi->window + len > conf->window_size)
            atomic_fetch_add(&priv->n_window_full, 1);
        else if (!wb_total_take(priv, conf, len))
            atomic_fetch_add(&priv->n_total_full, 1);
        else
            is_early = true;
    }
    /* e is complete before it joins the queue: from then on another
     * thread may wind and free it. */
    e->is_early = is_early;
    if (is_early) {
        wi->window += len;
        e->req = NULL;
        is_joined = wb_queue_join_locked(wi, e, conf->aggregate_size);
    } else if (e->child != NULL) {
        vl_req_free_unwound(e->child);
        e->child = NULL;
    }
    if (!is_joined) {
        is_free = wb_queue_add_locked(wi, e);
        /* Later contiguous early writes may join it while it waits. */
        is_held = is_early && !is_free && conf->aggregate_size > 0
                  && e->len < conf->aggregate_size;
    }
    pthread_mutex_unlock(&a->fd->inode->lock);

    if (is_early) {
        atomic_fetch_add(&priv->n_behind, 1);
        if (is_joined)
            atomic_fetch_add(&priv->n_aggregated, 1);
        else if (is_held)
            atomic_fetch_add(&priv->n_held, 1);
        req->reply.count = (int64_t)len;
        vl_unwind(req, 0);
    } else {
        atomic_fetch_add(&priv->n_through, 1);
    }
    if (is_joined)
        wb_entry_free(e); /* its data is in the held write */
    else if (is_free)
        wb_write_go(e);
}


/* ---- readdirplus ---- */

/* Per req: the change sequence when a listing went down. */
struct wb_local {
    uint64_t seq0;
};


/* A listing's attributes (and quick-read's content) of a file with
 * writes answered early are those before the writes: the kernel would
 * keep them (a size 0 for a file just written and closed, since FLUSH
 * is answered early too) and a read of the file would then end short.
 * Dropped for every file whose queue held anything while the listing
 * was read: still pending now, or left since it went down. The kernel
 * looks such a file up, which waits for its writes. */
static void
wb_readdir_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct wb_priv *priv = xl->priv;
    uint64_t seq0 = VL_REQ_PRIV(req, struct wb_local)->seq0;
    int status = child->status;
    struct vl_dirent_list *list;

    vl_reply_move(req, child);
    list = &req->reply.entries;
    for (size_t i = 0; status == 0 && i < list->n; i++) {
        struct vl_dirent *e = &list->ents[i];
        vl_inode_t *inode;
        struct wb_inode *wi;
        bool is_stale;

        if (!e->has_iatt && !e->has_content)
            continue;
        inode = vl_inode_find(req->graph->itable, &e->iatt.gfid);
        if (inode == NULL)
            continue; /* never looked up here: nothing written here */
        wi = wb_inode_peek(xl, inode);
        pthread_mutex_lock(&inode->lock);
        is_stale = wi->head != NULL || wi->change_seq > seq0;
        pthread_mutex_unlock(&inode->lock);
        vl_inode_unref(inode);
        if (is_stale) {
            e->has_iatt = false;
            e->has_content = false;
            atomic_fetch_add(&priv->n_stripped, 1);
        }
    }
    vl_unwind(req, status);
}


static void
wb_fop_readdir(vl_xlator_t *xl, vl_req_t *req)
{
    struct wb_priv *priv = xl->priv;
    vl_req_t *child = vl_req_child(req, VL_FIRST_CHILD(xl));

    if (child == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    VL_REQ_PRIV(req, struct wb_local)->seq0 =
        atomic_load(&priv->change_seq);
    vl_wind(child, wb_readdir_done, req);
}


/* ---- class ---- */

static int
wb_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct wb_priv *priv = vl_calloc(xl, 1, sizeof(*priv), WB_MT_PRIV);

    if (priv == NULL) {
        vl_err_set(err, "write-behind: out of memory");
        return -ENOMEM;
    }
    pthread_mutex_init(&priv->lock, NULL);
    pthread_cond_init(&priv->cond, NULL);
    atomic_store(&priv->total_limit,
                 VL_CONF(xl, struct wb_conf)->total_size);
    xl->priv = priv;
    return 0;
}


/* Before the graph goes away (unmount, or an old graph after a switch),
 * the writes answered early must reach the bricks: PARENT_DOWN waits for
 * every entry to be answered by the child (which is still up: the event
 * goes down to it only after this), at most WB_DRAIN_S seconds. Not on
 * an event thread, which the answers need. */
#define WB_DRAIN_S 60

static int
wb_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    struct wb_priv *priv = xl->priv;
    struct timespec until;
    long long left;

    if (ev != VL_EV_PARENT_DOWN || priv == NULL
        || vl_loop_on_loop_thread(xl->graph->loop))
        return vl_notify_default(xl, ev, data);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WB_DRAIN_S;
    pthread_mutex_lock(&priv->lock);
    atomic_store(&priv->is_draining, true);
    while (atomic_load(&priv->n_entries) > 0)
        if (pthread_cond_timedwait(&priv->cond, &priv->lock, &until) != 0)
            break;
    pthread_mutex_unlock(&priv->lock);
    left = atomic_load(&priv->n_entries);
    if (left > 0)
        vl_log(xl, VL_LOG_ERROR, "%lld writes or waiting fops still not "
               "answered by the child after %d s; going down anyway",
               left, WB_DRAIN_S);
    return vl_notify_default(xl, ev, data);
}


static void
wb_fini(vl_xlator_t *xl)
{
    struct wb_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    /* Entries hold refs on their inodes and fds and answer on their own
     * when the child does; with some alive the graph's pending list
     * names their child requests. Keep priv then: their done() uses it. */
    if (atomic_load(&priv->n_entries) != 0) {
        vl_log(xl, VL_LOG_WARNING, "fini with %lld writes or waiting fops "
               "not answered by the child yet",
               (long long)atomic_load(&priv->n_entries));
        return;
    }
    pthread_cond_destroy(&priv->cond);
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
    xl->priv = NULL;
}


/* statedump's account of cached data (libvol's cache_usage): the bytes
 * answered early, which live in the client until the bricks have them. */
static void
wb_cache_usage(vl_xlator_t *xl, uint64_t *bytes, uint64_t *limit)
{
    struct wb_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    *bytes = atomic_load(&priv->held_bytes);
    *limit = atomic_load(&priv->total_limit);
}


static void
wb_dump(vl_xlator_t *xl, FILE *out)
{
    struct wb_priv *priv = xl->priv;

    fprintf(out, "written_behind=%llu\n", atomic_load(&priv->n_behind));
    fprintf(out, "listing_attrs_dropped=%llu\n",
            atomic_load(&priv->n_stripped));
    fprintf(out, "written_through=%llu\n", atomic_load(&priv->n_through));
    fprintf(out, "window_full=%llu\n", atomic_load(&priv->n_window_full));
    fprintf(out, "total_full=%llu\n", atomic_load(&priv->n_total_full));
    fprintf(out, "held_bytes=%llu\n", atomic_load(&priv->held_bytes));
    fprintf(out, "waited=%llu\n", atomic_load(&priv->n_waited));
    fprintf(out, "flush_behind=%llu\n", atomic_load(&priv->n_flush_behind));
    fprintf(out, "failed_behind=%llu\n", atomic_load(&priv->n_failed));
    fprintf(out, "errors_reported=%llu\n", atomic_load(&priv->n_reported));
    fprintf(out, "held=%llu\n", atomic_load(&priv->n_held));
    fprintf(out, "aggregated=%llu\n", atomic_load(&priv->n_aggregated));
    fprintf(out, "setattr_behind=%llu\n",
            atomic_load(&priv->n_setattr_behind));
    fprintf(out, "setattr_failed=%llu\n",
            atomic_load(&priv->n_setattr_failed));
    fprintf(out, "setattr_merged=%llu\n",
            atomic_load(&priv->n_setattr_merged));
    fprintf(out, "pending=%lld\n", atomic_load(&priv->n_entries));
}


/* /metrics: writes answered at once and sent behind, and those of them
 * that failed below (doc/metrics.md). */
static void
wb_metrics(vl_xlator_t *xl, vl_metrics_sink_t *sink)
{
    struct wb_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    vl_metrics_emit(sink, "mortar_write_behind_writes_total", "counter",
                    "Writes answered at once and sent behind.",
                    atomic_load(&priv->n_behind));
    vl_metrics_emit(sink, "mortar_write_behind_failed_total", "counter",
                    "Writes sent behind that failed below (reported at the "
                    "next write, flush or fsync).",
                    atomic_load(&priv->n_failed));
}


static int
wb_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    /* Every option is read per request from xl->conf; statedump keeps
     * its own copy of total-size. Lowering it sends later writes through
     * until what is held drains below it. */
    struct wb_priv *priv = xl->priv;

    (void)err;
    atomic_store(&priv->total_limit,
                 ((const struct wb_conf *)new_conf)->total_size);
    return 0;
}


static const vl_option_t wb_options[] = {
    VL_OPT_SIZE("window-size", struct wb_conf, window_size,
                .min = 512 * 1024, .max = 1024 * 1024 * 1024, .def = "4MiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.write-behind-window-size",
                            "cache-size"},
                .doc = "Bytes of one file's writes answered before the "
                       "bricks acknowledged them; a write that does not "
                       "fit waits for the bricks' answer. GlusterFS's "
                       "1MB holds eight of its 128 KiB writes; Mortar's "
                       "writes are up to 1 MiB, so 4 MiB keeps four in "
                       "flight."),
    VL_OPT_BOOL("flush-behind", struct wb_conf, is_flush_behind,
                .def = "on",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.flush-behind"},
                .doc = "Answer close()'s FLUSH without waiting for the "
                       "file's pending writes (an error they meet later "
                       "is logged and returned by the next fsync or "
                       "close of the file on this mount); off: FLUSH "
                       "waits for them and returns their error."),
    VL_OPT_BOOL("strict-o-direct", struct wb_conf, is_strict_o_direct,
                .def = "off",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.strict-o-direct"},
                .doc = "Write through (never answer early) on files "
                       "opened with O_DIRECT."),
    VL_OPT_BOOL("strict-write-ordering", struct wb_conf, is_strict_ordering,
                .def = "off",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.strict-write-ordering"},
                .doc = "Send a file's writes to the bricks one after the "
                       "other even when they do not overlap."),
    VL_OPT_SIZE("aggregate-size", struct wb_conf, aggregate_size,
                .min = 0, .max = 16 * 1024 * 1024, .def = "128KiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .aliases = {"performance.aggregate-size"},
                .doc = "Contiguous small writes of one file that arrive "
                       "while an earlier write of it is on its way to the "
                       "bricks are sent as one WRITE of up to this many "
                       "bytes; 0 sends each write on its own. A write "
                       "with nothing in flight goes at once."),
    VL_OPT_BOOL("setattr-behind", struct wb_conf, is_setattr_behind,
                .def = "on",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .doc = "Answer a chmod, chown or utimes of a file this "
                       "mount has open at once, with the attributes it "
                       "will give, when the bricks cannot refuse it (root, "
                       "or the owner changing mode or times; no setuid or "
                       "setgid bits), and send it behind the caller in the "
                       "file's order, folded into the previous one while "
                       "that still waits. A failure is returned by the "
                       "next write, flush or fsync of the file (lost "
                       "after close, as with flush-behind). Off: every "
                       "SETATTR waits for the bricks."),
    VL_OPT_SIZE("total-size", struct wb_conf, total_size,
                .min = 0, .max = 64 * 1024 * 1024 * 1024LL, .def = "8MiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_CLIENT,
                .doc = "Bytes of all files' writes answered before the "
                       "bricks acknowledged them; a write that does not "
                       "fit waits for the bricks' answer. mortard sets it "
                       "to write-behind's share of performance.cache-size "
                       "unless it is set itself; 0 writes everything "
                       "through."),
    VL_OPT_END,
};

static const char *const wb_mem_types[] = {"misc", "priv", "entry", NULL};

const vl_xlator_class_t xl_performance_write_behind = {
    .abi = VL_XLATOR_ABI,
    .type = "performance/write-behind",
    .prefix = "write-behind",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct wb_conf),
    .inode_ctx_size = sizeof(struct wb_inode),
    .fd_ctx_size = sizeof(struct wb_fd),
    .req_priv_size = sizeof(struct wb_local),
    .options = wb_options,
    .mem_types = wb_mem_types,
    .doc = "Answers writes at once and sends them to the bricks behind "
           "the caller, in order per file, within a window of bytes per "
           "file; fops that read what was written wait for them.",
    .init = wb_init,
    .fini = wb_fini,
    .notify = wb_notify,
    .reconfigure = wb_reconfigure,
    .dump = wb_dump,
    .metrics = wb_metrics,
    .cache_usage = wb_cache_usage,
    .release = wb_release,
    .fops = {
        [VL_FOP_WRITE] = wb_fop_write,
        [VL_FOP_FLUSH] = wb_fop_flush,
        [VL_FOP_FSYNC] = wb_fop_fsync,
        [VL_FOP_LOOKUP] = wb_fop_observed,
        [VL_FOP_STAT] = wb_fop_observed,
        [VL_FOP_SETATTR] = wb_fop_setattr,
        [VL_FOP_FALLOCATE] = wb_fop_observed,
        [VL_FOP_OPEN] = wb_fop_open,
        [VL_FOP_CREATE] = wb_fop_create,
        [VL_FOP_READ] = wb_fop_wait,
        [VL_FOP_GETXATTR] = wb_fop_wait,
        [VL_FOP_LSEEK] = wb_fop_wait,
        [VL_FOP_RCHECKSUM] = wb_fop_wait,
        [VL_FOP_LK] = wb_fop_lk,
        [VL_FOP_COPY_FILE_RANGE] = wb_fop_copy_file_range,
        [VL_FOP_READDIR] = wb_fop_readdir,
    },
};
