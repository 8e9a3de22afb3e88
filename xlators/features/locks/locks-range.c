/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * locks-range: the byte-range lock engine behind POSIX record locks, flock
 * locks and inodelk.
 *
 * A lock belongs to a namespace (kind, plus the domain for inodelk) and an
 * owner. Locks of one owner in one namespace never overlap: setting a range
 * first carves it out of the owner's existing locks (splitting one that
 * covers it on both sides), then inserts the new lock and merges it with
 * adjacent locks of the same type, as fcntl(2) does. Two locks conflict
 * when they share a namespace, have different owners, overlap, and at
 * least one is a write lock.
 *
 * Waiters sit in a FIFO per inode; locks_range_grant_locked gives each
 * waiter that no longer conflicts its lock and moves it to the answer list
 * so that the caller answers it after dropping the mutex.
 *
 * Threads: every function here runs with locks_priv.lock held.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>

#include "locks.h"


void
locks_range_free(struct locks_range *lk)
{
    if (lk == NULL)
        return;
    vl_free(lk->domain);
    vl_free(lk);
}


int
locks_range_from_flock(const struct vl_flock *fl, int64_t *start,
                       int64_t *end)
{
    if (fl->whence != SEEK_SET || fl->start < 0)
        return -EINVAL;
    if (fl->len == 0) {
        *start = fl->start;
        *end = INT64_MAX;
    } else if (fl->len > 0) {
        if (fl->start > INT64_MAX - (fl->len - 1))
            return -EOVERFLOW;
        *start = fl->start;
        *end = fl->start + fl->len - 1;
    } else {
        /* POSIX: a negative length locks the bytes before start. */
        if (fl->start + fl->len < 0)
            return -EINVAL;
        *start = fl->start + fl->len;
        *end = fl->start - 1;
    }
    return 0;
}


static bool
locks_range_same_ns(const struct locks_range *a, const struct locks_range *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind != LOCKS_INODELK)
        return true;
    return strcmp(a->domain, b->domain) == 0;
}


static bool
locks_range_overlap(const struct locks_range *a, int64_t start, int64_t end)
{
    return a->start <= end && start <= a->end;
}


struct locks_range *
locks_range_conflict_locked(struct locks_inode *li,
                            const struct locks_range *want)
{
    for (struct locks_list *n = li->held.next; n != &li->held; n = n->next) {
        struct locks_range *lk = locks_container(n, struct locks_range, link);

        if (locks_range_same_ns(lk, want)
            && !locks_owner_equal(&lk->owner, &want->owner)
            && locks_range_overlap(lk, want->start, want->end)
            && (lk->type == F_WRLCK || want->type == F_WRLCK))
            return lk;
    }
    return NULL;
}


/* A copy of want's identity (kind, domain, owner, fd, pid) for a new
 * record; type and range are set by the caller. */
static struct locks_range *
locks_range_new(struct locks_priv *priv, const struct locks_range *want)
{
    struct locks_range *lk;

    lk = vl_calloc(priv->xl, 1, sizeof(*lk), LOCKS_MT_LOCK);
    if (lk == NULL)
        return NULL;
    locks_list_init(&lk->link);
    lk->kind = want->kind;
    lk->owner = want->owner;
    lk->fd = want->fd;
    lk->pid = want->pid;
    lk->type = want->type;
    lk->start = want->start;
    lk->end = want->end;
    if (want->domain != NULL) {
        lk->domain = vl_strdup(priv->xl, want->domain, LOCKS_MT_STRING);
        if (lk->domain == NULL) {
            vl_free(lk);
            return NULL;
        }
    }
    return lk;
}


/* Removes [start, end] from the owner's locks in want's namespace. At most
 * one lock can cover the range on both sides (the owner's locks are
 * disjoint), so one spare record is enough for the split. */
static void
locks_range_carve_locked(struct locks_inode *li,
                         const struct locks_range *want,
                         struct locks_range **spare)
{
    struct locks_list *n = li->held.next;

    while (n != &li->held) {
        struct locks_range *lk = locks_container(n, struct locks_range, link);

        n = n->next;
        if (!locks_range_same_ns(lk, want)
            || !locks_owner_equal(&lk->owner, &want->owner)
            || !locks_range_overlap(lk, want->start, want->end))
            continue;
        if (lk->start < want->start && lk->end > want->end) {
            struct locks_range *right = *spare;

            *spare = NULL;
            right->type = lk->type;
            right->fd = lk->fd;
            right->pid = lk->pid;
            right->start = want->end + 1;
            right->end = lk->end;
            lk->end = want->start - 1;
            locks_list_insert_before(lk->link.next, &right->link);
        } else if (lk->start < want->start) {
            lk->end = want->start - 1;
        } else if (lk->end > want->end) {
            lk->start = want->end + 1;
        } else {
            locks_list_del(&lk->link);
            locks_range_free(lk);
        }
    }
}


/* Absorbs the owner's same-type locks adjacent to lk into lk. */
static void
locks_range_merge_locked(struct locks_inode *li, struct locks_range *lk)
{
    struct locks_list *n = li->held.next;

    while (n != &li->held) {
        struct locks_range *other =
            locks_container(n, struct locks_range, link);

        n = n->next;
        if (other == lk || other->type != lk->type
            || !locks_range_same_ns(other, lk)
            || !locks_owner_equal(&other->owner, &lk->owner))
            continue;
        if (other->end != INT64_MAX && other->end + 1 == lk->start) {
            lk->start = other->start;
        } else if (lk->end != INT64_MAX && lk->end + 1 == other->start) {
            lk->end = other->end;
        } else {
            continue;
        }
        locks_list_del(&other->link);
        locks_range_free(other);
    }
}


int
locks_range_apply_locked(struct locks_priv *priv, struct locks_inode *li,
                         const struct locks_range *want)
{
    struct locks_range *spare = NULL;
    struct locks_range *lk = NULL;
    int rc = -ENOMEM;

    /* Allocate everything first so that a failure changes nothing. */
    spare = locks_range_new(priv, want);
    if (spare == NULL)
        goto out;
    if (want->type != F_UNLCK) {
        lk = locks_range_new(priv, want);
        if (lk == NULL)
            goto out;
    }

    locks_range_carve_locked(li, want, &spare);
    if (lk != NULL) {
        locks_list_insert_before(&li->held, &lk->link);
        locks_range_merge_locked(li, lk);
        lk = NULL;
    }
    rc = 0;
out:
    locks_range_free(spare);
    locks_range_free(lk);
    return rc;
}


void
locks_range_grant_locked(struct locks_priv *priv, struct locks_inode *li,
                         struct locks_answers *ans)
{
    bool is_progress = true;

    /* Granting can also change a waiter's own owner's locks (an upgrade
     * or downgrade), which may unblock an earlier waiter: repeat until a
     * pass grants nothing. */
    while (is_progress) {
        struct locks_list *n = li->waiting.next;

        is_progress = false;
        while (n != &li->waiting) {
            struct locks_range *w =
                locks_container(n, struct locks_range, link);

            n = n->next;
            if (locks_range_conflict_locked(li, w) != NULL)
                continue;
            w->status = locks_range_apply_locked(priv, li, w);
            locks_list_del(&w->link);
            locks_list_insert_before(&ans->ranges, &w->link);
            is_progress = true;
        }
    }
    locks_mig_after_change_locked(priv, li, ans);
}


static bool
locks_range_match(const struct locks_range *lk, int kind,
                  const struct locks_owner *owner, const uint64_t *client_id,
                  const vl_fd_t *fd)
{
    return (kind < 0 || (int)lk->kind == kind)
           && (owner == NULL || locks_owner_equal(&lk->owner, owner))
           && (client_id == NULL || lk->owner.client_id == *client_id)
           && (fd == NULL || lk->fd == fd);
}


/* Drops the held locks that match every given filter (kind < 0 and NULL
 * pointers match anything) and moves matching waiters to ans with
 * waiter_status; with ans NULL, waiters are left alone. The caller then
 * grants what no longer conflicts. */
size_t
locks_range_purge_locked(struct locks_inode *li, int kind,
                         const struct locks_owner *owner,
                         const uint64_t *client_id, const vl_fd_t *fd,
                         int waiter_status, struct locks_answers *ans)
{
    struct locks_list *n;
    size_t n_removed = 0;

    n = li->held.next;
    while (n != &li->held) {
        struct locks_range *lk = locks_container(n, struct locks_range, link);

        n = n->next;
        if (!locks_range_match(lk, kind, owner, client_id, fd))
            continue;
        locks_list_del(&lk->link);
        locks_range_free(lk);
        n_removed++;
    }
    if (ans == NULL)
        return n_removed;
    n = li->waiting.next;
    while (n != &li->waiting) {
        struct locks_range *w = locks_container(n, struct locks_range, link);

        n = n->next;
        if (!locks_range_match(w, kind, owner, client_id, fd))
            continue;
        w->status = waiter_status;
        locks_list_del(&w->link);
        locks_list_insert_before(&ans->ranges, &w->link);
        n_removed++;
    }
    return n_removed;
}


static const char *
locks_kind_name(enum locks_kind kind)
{
    switch (kind) {
    case LOCKS_POSIX:
        return "posix";
    case LOCKS_FLOCK:
        return "flock";
    case LOCKS_INODELK:
        return "inodelk";
    }
    return "?";
}


static const char *
locks_type_name(int16_t type)
{
    switch (type) {
    case F_RDLCK:
        return "read";
    case F_WRLCK:
        return "write";
    case F_UNLCK:
        return "unlock";
    }
    return "?";
}


static void
locks_range_dump_list(struct locks_list *head, FILE *out, const char *prefix,
                      const char *state)
{
    size_t i = 0;

    for (struct locks_list *n = head->next; n != head; n = n->next, i++) {
        struct locks_range *lk = locks_container(n, struct locks_range, link);

        fprintf(out,
                "%s.%s[%zu]=%s%s%s %s start=%" PRId64 " end=%" PRId64
                " client=%" PRIu64 " owner=%#" PRIx64 " pid=%" PRId32 "\n",
                prefix, state, i, locks_kind_name(lk->kind),
                lk->domain != NULL ? ":" : "",
                lk->domain != NULL ? lk->domain : "",
                locks_type_name(lk->type), lk->start, lk->end,
                lk->owner.client_id, lk->owner.lk_owner, lk->pid);
    }
}


void
locks_range_dump_locked(struct locks_inode *li, FILE *out, const char *prefix)
{
    locks_range_dump_list(&li->held, out, prefix, "held");
    locks_range_dump_list(&li->waiting, out, prefix, "waiting");
}
