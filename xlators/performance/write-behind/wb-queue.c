/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wb-queue: the per-inode queue of write-behind.
 *
 * Every WRITE of an inode, and every other fop that met pending writes,
 * is an entry of its inode's queue, in arrival order, from arrival until
 * the child answered it. An entry may go down (is_wound) when no earlier
 * entry of the queue conflicts with it:
 *   - two writes conflict when either was answered early: an early write
 *     goes down only after every earlier write of the inode was answered,
 *     and no later write goes down before it was. So when one fails, the
 *     writes answered after it have not left yet and fail with it
 *     (wb_queue_cut_fd_locked): no data the caller was told is written
 *     lands beyond a hole it left;
 *   - two writes that both wait for the child conflict when their byte
 *     ranges overlap (an O_APPEND write covers the whole file), or when
 *     strict-write-ordering was on for either: so overlapping writes reach
 *     the child, and the brick's threads, one after the other, never
 *     reordered;
 *   - a barrier (read, stat, setattr, fsync...) conflicts with everything:
 *     it goes down once every earlier entry was answered, and no later
 *     write goes down before it was answered (a truncate is never
 *     overtaken by a later write).
 * Entries leave the queue when the child answers; that may free later
 * entries, which the caller winds after dropping the lock.
 *
 * Aggregation (aggregate-size): an early write that continues the early
 * write at the tail of the queue, which has not gone down yet (it waits
 * for the write ahead of it), is appended to it when they have one fd
 * and caller and fit in aggregate-size bytes. The answer of the write
 * ahead winds the grown one. Nothing waits for a timer, and a single
 * writer with nothing in flight is never delayed.
 *
 * Errors: a failed early write is recorded for the next write of its fd
 * (struct wb_fd err) and, errseq-like, for the fsync and flush of every
 * fd (struct wb_inode wb_seq, struct wb_fd cursors).
 * Threads: inode->lock guards struct wb_inode, the queue links and the
 * cursors of struct wb_fd; fd->lock guards the rest of struct wb_fd
 * (taken inside inode->lock, never the other way).
 * Nothing is wound or unwound with a lock held.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "write-behind.h"


struct wb_inode *
wb_inode_peek(vl_xlator_t *xl, vl_inode_t *inode)
{
    return vl_inode_ctx(inode, xl);
}


struct wb_entry *
wb_entry_new(vl_xlator_t *xl, vl_inode_t *inode, enum wb_kind kind)
{
    struct wb_priv *priv = xl->priv;
    struct wb_entry *e = vl_calloc(xl, 1, sizeof(*e), WB_MT_ENTRY);

    if (e == NULL)
        return NULL;
    e->xl = xl;
    e->inode = vl_inode_ref(inode);
    e->kind = kind;
    e->end = INT64_MAX;
    atomic_init(&e->n_blocked, 0);
    atomic_fetch_add(&priv->n_entries, 1);
    return e;
}


void
wb_entry_free(struct wb_entry *e)
{
    struct wb_priv *priv;

    if (e == NULL)
        return;
    priv = e->xl->priv;
    if (e->child != NULL)
        vl_req_free_unwound(e->child);
    vl_buf_unref(e->buf);
    vl_fd_unref(e->fd);
    vl_inode_unref(e->inode);
    vl_free(e);
    if (atomic_fetch_sub(&priv->n_entries, 1) == 1
        && atomic_load(&priv->is_draining)) {
        pthread_mutex_lock(&priv->lock);
        pthread_cond_broadcast(&priv->cond);
        pthread_mutex_unlock(&priv->lock);
    }
}


/* Whether the later entry b must wait for the earlier entry a. */
/* An early write left the queue: its bytes leave the inode's window and
 * the total of every inode (write-behind.c took both). */
static void
wb_window_release_locked(struct wb_inode *wi, const struct wb_entry *e)
{
    struct wb_priv *priv = e->xl->priv;

    wi->window -= e->len;
    atomic_fetch_sub(&priv->held_bytes, e->len);
}


static bool
wb_conflict(const struct wb_entry *a, const struct wb_entry *b)
{
    if (a->kind == WB_E_BARRIER || b->kind == WB_E_BARRIER)
        return true;
    if (a->is_early || b->is_early)
        return true; /* one early write at a time: see the top */
    if (a->is_strict || b->is_strict)
        return true;
    return a->start < b->end && b->start < a->end;
}


/* Whether e may go: no entry before it in the queue conflicts. */
static bool
wb_is_free_locked(const struct wb_inode *wi, const struct wb_entry *e)
{
    for (const struct wb_entry *a = wi->head; a != NULL && a != e;
         a = a->next)
        if (wb_conflict(a, e))
            return false;
    return true;
}


bool
wb_queue_add_locked(struct wb_inode *wi, struct wb_entry *e)
{
    e->next = NULL;
    if (wi->tail != NULL)
        wi->tail->next = e;
    else
        wi->head = e;
    wi->tail = e;
    e->is_wound = wb_is_free_locked(wi, e);
    return e->is_wound;
}


void
wb_queue_del_locked(struct wb_inode *wi, struct wb_entry *e,
                    struct wb_entry **go)
{
    struct wb_entry *prev = NULL;
    struct wb_entry *a;

    for (a = wi->head; a != NULL && a != e; a = a->next)
        prev = a;
    if (a == NULL)
        return; /* not queued (fast path or already removed) */
    if (prev != NULL)
        prev->next = e->next;
    else
        wi->head = e->next;
    if (wi->tail == e)
        wi->tail = prev;
    e->next = NULL;
    if (e->is_early)
        wb_window_release_locked(wi, e);
    /* A listing read while e was pending may carry attributes from
     * before it: wb_fop_readdir compares this with its own start. */
    wi->change_seq = atomic_fetch_add(
        &((struct wb_priv *)e->xl->priv)->change_seq, 1) + 1;

    /* Later entries that e (alone) held back may go now. A barrier stops
     * the scan: nothing after it can go before it was answered. */
    for (a = wi->head; a != NULL; a = a->next) {
        if (a->is_wound) {
            if (a->kind == WB_E_BARRIER)
                break;
            continue;
        }
        if (wb_is_free_locked(wi, a)) {
            a->is_wound = true;
            a->go_next = *go;
            *go = a;
        }
        if (a->kind == WB_E_BARRIER)
            break;
    }
}


void
wb_queue_cut_fd_locked(struct wb_inode *wi, vl_fd_t *fd,
                       struct wb_entry **cut)
{
    struct wb_entry *prev = NULL;
    struct wb_entry *a = wi->head;
    struct wb_entry *next;

    for (; a != NULL; a = next) {
        next = a->next;
        if (a->kind != WB_E_WRITE || a->fd != fd || a->is_wound) {
            prev = a;
            continue;
        }
        if (prev != NULL)
            prev->next = next;
        else
            wi->head = next;
        if (wi->tail == a)
            wi->tail = prev;
        a->next = NULL;
        if (a->is_early)
            wb_window_release_locked(wi, a);
        a->go_next = *cut;
        *cut = a;
    }
}


/* Whether the early write e (not queued yet) may join the tail t: an
 * early write that has not gone down. */
static bool
wb_may_join(const struct wb_entry *t, const struct wb_entry *e,
            uint64_t aggregate_size)
{
    const struct vl_write_args *ta;
    const struct vl_write_args *ea;

    if (t == NULL || t->kind != WB_E_WRITE || !t->is_early || t->is_wound)
        return false;
    if (!e->is_early || e->is_strict || e->child == NULL || t->child == NULL)
        return false;
    if (t->fd != e->fd || e->end == INT64_MAX || t->end != e->start)
        return false;
    if (t->len + e->len > aggregate_size)
        return false;
    ta = VL_ARGS(t->child, write);
    ea = VL_ARGS(e->child, write);
    /* One WRITE carries one caller: the bricks may act on who wrote. */
    return ta->flags == ea->flags
           && t->child->caller.uid == e->child->caller.uid
           && t->child->caller.gid == e->child->caller.gid
           && t->child->caller.pid == e->child->caller.pid
           && t->child->caller.lk_owner == e->child->caller.lk_owner;
}


bool
wb_queue_join_locked(struct wb_inode *wi, struct wb_entry *e,
                     uint64_t aggregate_size)
{
    struct wb_entry *t = wi->tail;
    vl_buf_t *nb;

    if (aggregate_size == 0 || !wb_may_join(t, e, aggregate_size))
        return false;
    if (!t->is_buf_own || t->len + e->len > t->buf->size) {
        /* Room for the whole aggregate at once: one copy of what the
         * held write has, then appends in place. */
        nb = vl_buf_new(aggregate_size);
        if (nb == NULL)
            return false; /* e goes on its own */
        memcpy(nb->data, t->iov.iov_base, t->len);
        vl_buf_unref(t->buf);
        t->buf = nb;
        t->is_buf_own = true;
        t->iov.iov_base = nb->data;
        VL_ARGS(t->child, write)->buf = nb;
    }
    memcpy((char *)t->iov.iov_base + t->len, e->iov.iov_base, e->len);
    t->len += e->len;
    t->end += (int64_t)e->len;
    t->iov.iov_len = t->len;
    return true;
}


void
wb_queue_wind(struct wb_entry *go)
{
    struct wb_entry *rev = NULL;
    struct wb_entry *next;

    /* The list was built by prepending; wind in queue order. */
    while (go != NULL) {
        next = go->go_next;
        go->go_next = rev;
        rev = go;
        go = next;
    }
    while (rev != NULL) {
        next = rev->go_next; /* rev may be freed by the time wind returns */
        if (rev->kind == WB_E_WRITE)
            wb_write_go(rev);
        else
            wb_barrier_go(rev);
        rev = next;
    }
}


void
wb_fd_sample_locked(struct wb_inode *wi, struct wb_fd *wf)
{
    uint32_t seq = wi->wb_seq;

    if (wf->is_sampled)
        return;
    if (seq > 0 && !wi->is_wb_seen)
        seq--; /* nobody saw the latest failure: this fd reports it */
    wf->seq_fsync = seq;
    wf->seq_flush = seq;
    wf->is_sampled = true;
}


bool
wb_fd_set_err_locked(vl_xlator_t *xl, vl_fd_t *fd, int err)
{
    struct wb_inode *wi = wb_inode_peek(xl, fd->inode);
    struct wb_fd *wf = vl_fd_ctx(fd, xl);
    bool is_news = wi->wb_seq == 0 || wi->is_wb_seen;

    wb_fd_sample_locked(wi, wf);
    wi->wb_err = err;
    wi->wb_seq++;
    wi->is_wb_seen = false;
    pthread_mutex_lock(&fd->lock);
    if (wf->err == 0)
        wf->err = err;
    wf->is_failed = true;
    pthread_mutex_unlock(&fd->lock);
    return is_news;
}


int
wb_fd_take_err(vl_xlator_t *xl, vl_fd_t *fd, enum wb_path path)
{
    struct wb_fd *wf = vl_fd_ctx(fd, xl);
    struct wb_inode *wi;
    int err = 0;

    if (fd->inode == NULL)
        return 0;
    wi = wb_inode_peek(xl, fd->inode);
    pthread_mutex_lock(&fd->inode->lock);
    wb_fd_sample_locked(wi, wf);
    if (path == WB_PATH_WRITE) {
        pthread_mutex_lock(&fd->lock);
        err = wf->err;
        wf->err = 0;
        pthread_mutex_unlock(&fd->lock);
    } else if (path == WB_PATH_FSYNC && wf->seq_fsync != wi->wb_seq) {
        err = wi->wb_err;
        wf->seq_fsync = wi->wb_seq;
        wi->is_wb_seen = true;
    } else if (path == WB_PATH_FLUSH && wf->seq_flush != wi->wb_seq
               && wf->seq_fsync != wi->wb_seq) {
        /* An fsync of this fd that reported it is enough for close. */
        err = wi->wb_err;
        wf->seq_flush = wi->wb_seq;
        wi->is_wb_seen = true;
    }
    if (err == 0) {
        err = wi->err; /* a SETATTR answered early (wb-setattr.c) */
        wi->err = 0;
    }
    pthread_mutex_unlock(&fd->inode->lock);
    if (err != 0)
        atomic_fetch_add(&((struct wb_priv *)xl->priv)->n_reported, 1);
    /* An early write that met ENOSYS failed all the same; reported as
     * ENOSYS to a FLUSH or FSYNC it would make the kernel stop sending
     * those for the life of the mount (and return 0 for this one). */
    if (err == -ENOSYS)
        err = -EIO;
    return err;
}


void
wb_inode_seen_locked(struct wb_inode *wi, const struct vl_iatt *iatt)
{
    /* A zero mode means "not filled" (open may answer without attrs). */
    if (iatt->mode == 0)
        return;
    if (wi->n_setattr_behind > 0) {
        /* Older than the prediction: only a grown size is news. */
        if (iatt->size > wi->iatt.size)
            wi->iatt.size = iatt->size;
        return;
    }
    wi->mode = iatt->mode;
    wi->has_mode = true;
    wi->iatt = *iatt;
    wi->has_iatt = true;
}
