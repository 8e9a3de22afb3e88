/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * locks-entry: ENTRYLK, the name locks cluster translators take on a
 * directory entry (or on the whole directory, name NULL) within a domain.
 *
 * Two entry locks conflict when they are in the same domain on the same
 * directory, have different owners, cover the same name (a whole-directory
 * lock covers every name) and at least one is exclusive (F_WRLCK). One
 * owner may hold a name several times; each UNLOCK drops one hold.
 *
 * Threads: called on fop threads; state is guarded by locks_priv.lock,
 * and requests are answered only after it is dropped.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>

#include "locks.h"


void
locks_entry_free(struct locks_entry *en)
{
    if (en == NULL)
        return;
    vl_free(en->domain);
    vl_free(en->name);
    vl_free(en);
}


static bool
locks_entry_name_equal(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}


static struct locks_entry *
locks_entry_conflict_locked(struct locks_inode *li,
                            const struct locks_entry *want)
{
    for (struct locks_list *n = li->entry_held.next; n != &li->entry_held;
         n = n->next) {
        struct locks_entry *en = locks_container(n, struct locks_entry, link);

        /* Conflict if (1) same domain, (2) another owner, (3) one of them
         * covers the other's name, (4) one of them is exclusive. */
        if (strcmp(en->domain, want->domain) == 0              /* (1) */
            && !locks_owner_equal(&en->owner, &want->owner)    /* (2) */
            && (en->name == NULL || want->name == NULL         /* (3) */
                || strcmp(en->name, want->name) == 0)
            && (en->type == F_WRLCK || want->type == F_WRLCK)) /* (4) */
            return en;
    }
    return NULL;
}


static struct locks_entry *
locks_entry_new(vl_xlator_t *xl, const struct locks_entry *want)
{
    struct locks_entry *en;

    en = vl_calloc(xl, 1, sizeof(*en), LOCKS_MT_LOCK);
    if (en == NULL)
        return NULL;
    locks_list_init(&en->link);
    en->owner = want->owner;
    en->type = want->type;
    en->domain = vl_strdup(xl, want->domain, LOCKS_MT_STRING);
    if (en->domain == NULL)
        goto fail;
    if (want->name != NULL) {
        en->name = vl_strdup(xl, want->name, LOCKS_MT_STRING);
        if (en->name == NULL)
            goto fail;
    }
    return en;
fail:
    locks_entry_free(en);
    return NULL;
}


/* Grants every waiting entry lock that no longer conflicts, FIFO. */
static void
locks_entry_grant_locked(vl_xlator_t *xl, struct locks_inode *li,
                         struct locks_answers *ans)
{
    struct locks_list *n = li->entry_waiting.next;

    /* Granting only adds holds, so one pass in order is enough. */
    while (n != &li->entry_waiting) {
        struct locks_entry *w = locks_container(n, struct locks_entry, link);
        struct locks_entry *held;

        n = n->next;
        if (locks_entry_conflict_locked(li, w) != NULL)
            continue;
        held = locks_entry_new(xl, w);
        if (held != NULL) {
            locks_list_insert_before(&li->entry_held, &held->link);
            w->status = 0;
        } else {
            w->status = -ENOMEM;
        }
        locks_list_del(&w->link);
        locks_list_insert_before(&ans->entries, &w->link);
    }
}


/* Drops one hold of want's owner on want's domain and name. */
static int
locks_entry_unlock_locked(struct locks_inode *li,
                          const struct locks_entry *want)
{
    for (struct locks_list *n = li->entry_held.next; n != &li->entry_held;
         n = n->next) {
        struct locks_entry *en = locks_container(n, struct locks_entry, link);

        if (strcmp(en->domain, want->domain) == 0
            && locks_owner_equal(&en->owner, &want->owner)
            && locks_entry_name_equal(en->name, want->name)) {
            locks_list_del(&en->link);
            locks_entry_free(en);
            return 0;
        }
    }
    return -EINVAL;
}


void
locks_entrylk(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_entrylk_args *a = VL_ARGS(req, entrylk);
    struct locks_priv *priv = xl->priv;
    vl_inode_t *dir = a->loc.parent != NULL ? a->loc.parent : a->loc.inode;
    struct locks_entry want = {0};
    struct locks_answers ans;
    struct locks_inode *li;
    struct locks_entry *en;
    int rc = 0;

    if (dir == NULL || a->domain == NULL
        || (a->loc.name != NULL && a->loc.name[0] == '\0')) {
        vl_unwind(req, -EINVAL);
        return;
    }
    if (locks_cpd_lock(xl, req))
        return;
    if (a->cmd != VL_LOCK_UNLOCK
        && ((a->cmd != VL_LOCK_TRY && a->cmd != VL_LOCK_WAIT)
            || (a->type != F_RDLCK && a->type != F_WRLCK))) {
        vl_unwind(req, -EINVAL);
        return;
    }
    /* Only read while the request is live; copied when kept. */
    want.domain = (char *)a->domain;
    want.name = (char *)a->loc.name;
    want.type = a->type;
    want.owner.client_id = req->caller.client_id;
    want.owner.lk_owner = req->caller.lk_owner;

    locks_answers_init(&ans);
    pthread_mutex_lock(&priv->lock);
    li = locks_inode_get_locked(priv, xl, dir, a->cmd != VL_LOCK_UNLOCK);
    if (li == NULL) {
        rc = a->cmd == VL_LOCK_UNLOCK ? -EINVAL : -ENOMEM;
        goto out_unlock;
    }
    if (a->cmd == VL_LOCK_UNLOCK) {
        rc = locks_entry_unlock_locked(li, &want);
        if (rc == 0)
            locks_entry_grant_locked(xl, li, &ans);
        goto out_drop;
    }
    if (locks_entry_conflict_locked(li, &want) != NULL
        && a->cmd == VL_LOCK_TRY) {
        rc = -EAGAIN;
        goto out_drop;
    }
    en = locks_entry_new(xl, &want);
    if (en == NULL) {
        rc = -ENOMEM;
        goto out_drop;
    }
    if (locks_entry_conflict_locked(li, &want) == NULL) {
        locks_list_insert_before(&li->entry_held, &en->link);
        goto out_drop;
    }
    en->req = req;
    locks_list_insert_before(&li->entry_waiting, &en->link);
    pthread_mutex_unlock(&priv->lock);
    /* req is queued; it is answered when the lock is granted. */
    return;

out_drop:
    locks_inode_maybe_drop_locked(priv, li, &ans);
out_unlock:
    pthread_mutex_unlock(&priv->lock);
    locks_answers_flush(&ans);
    vl_unwind(req, rc);
}


void
locks_entry_purge_client_locked(struct locks_priv *priv,
                                struct locks_inode *li,
                                const uint64_t *client_id, int waiter_status,
                                struct locks_answers *ans)
{
    struct locks_list *n;

    n = li->entry_held.next;
    while (n != &li->entry_held) {
        struct locks_entry *en = locks_container(n, struct locks_entry, link);

        n = n->next;
        if (client_id != NULL && en->owner.client_id != *client_id)
            continue;
        locks_list_del(&en->link);
        locks_entry_free(en);
    }
    n = li->entry_waiting.next;
    while (n != &li->entry_waiting) {
        struct locks_entry *w = locks_container(n, struct locks_entry, link);

        n = n->next;
        if (client_id != NULL && w->owner.client_id != *client_id)
            continue;
        w->status = waiter_status;
        locks_list_del(&w->link);
        locks_list_insert_before(&ans->entries, &w->link);
    }
    locks_entry_grant_locked(priv->xl, li, ans);
}


static void
locks_entry_dump_list(struct locks_list *head, FILE *out, const char *prefix,
                      const char *state)
{
    size_t i = 0;

    for (struct locks_list *n = head->next; n != head; n = n->next, i++) {
        struct locks_entry *en = locks_container(n, struct locks_entry, link);

        fprintf(out,
                "%s.entry_%s[%zu]=%s name=%s %s client=%" PRIu64
                " owner=%#" PRIx64 "\n",
                prefix, state, i, en->domain,
                en->name != NULL ? en->name : "(whole directory)",
                en->type == F_WRLCK ? "exclusive" : "shared",
                en->owner.client_id, en->owner.lk_owner);
    }
}


void
locks_entry_dump_locked(struct locks_inode *li, FILE *out, const char *prefix)
{
    locks_entry_dump_list(&li->entry_held, out, prefix, "held");
    locks_entry_dump_list(&li->entry_waiting, out, prefix, "waiting");
}
