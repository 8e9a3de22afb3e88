/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wb-queue: the per-inode queue of write-behind.
 *
 * Every WRITE of an inode, and every other fop that met pending writes,
 * is an entry of its inode's queue, in arrival order, from arrival until
 * the child answered it. An entry may go down (is_wound) when no earlier
 * entry of the queue conflicts with it:
 *   - two writes conflict when their byte ranges overlap (an O_APPEND
 *     write covers the whole file), or when strict-write-ordering was on
 *     for either: so overlapping writes reach the child, and the brick's
 *     threads, one after the other, never reordered;
 *   - a barrier (read, stat, setattr, fsync...) conflicts with everything:
 *     it goes down once every earlier entry was answered, and no later
 *     write goes down before it was answered (a truncate is never
 *     overtaken by a later write).
 * Entries leave the queue when the child answers; that may free later
 * entries, which the caller winds after dropping the lock.
 *
 * Per fd: the sticky error of a failed early write (struct wb_fd).
 * Threads: inode->lock guards struct wb_inode and the queue links; fd->lock
 * guards struct wb_fd (taken inside inode->lock, never the other way).
 * Nothing is wound or unwound with a lock held.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
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
static bool
wb_conflict(const struct wb_entry *a, const struct wb_entry *b)
{
    if (a->kind == WB_E_BARRIER || b->kind == WB_E_BARRIER)
        return true;
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
        wi->window -= e->len;

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
wb_fd_set_err(vl_xlator_t *xl, vl_fd_t *fd, int err)
{
    struct wb_fd *wf = vl_fd_ctx(fd, xl);

    pthread_mutex_lock(&fd->lock);
    if (wf->err == 0)
        wf->err = err;
    wf->is_failed = true;
    pthread_mutex_unlock(&fd->lock);
}


int
wb_fd_take_err(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct wb_fd *wf = vl_fd_ctx(fd, xl);
    int err;

    pthread_mutex_lock(&fd->lock);
    err = wf->err;
    wf->err = 0;
    pthread_mutex_unlock(&fd->lock);
    if (err != 0)
        atomic_fetch_add(&((struct wb_priv *)xl->priv)->n_reported, 1);
    return err;
}


void
wb_inode_seen_locked(struct wb_inode *wi, const struct vl_iatt *iatt)
{
    /* A zero mode means "not filled" (open may answer without attrs). */
    if (iatt->mode == 0)
        return;
    wi->mode = iatt->mode;
    wi->has_mode = true;
}
