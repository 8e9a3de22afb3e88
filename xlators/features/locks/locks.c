/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * locks: brick-side locking, all in memory. Blocked lock requests are
 * queued and answered later, never by blocking a thread.
 *
 * Intercepts: lk (POSIX record locks and flock), inodelk, entrylk (in
 *             locks-entry.c) which are answered here and never reach the
 *             child (a lock carrying replicate's pre-op winds that xattrop
 *             down once granted, locks-compound.c); xattrop (carrying an
 *             unlock: applied, then the lock released; locks-compound.c); flush (drops the caller's POSIX locks on the inode,
 *             then passes down); release(fd) (drops the flock and POSIX
 *             locks tied to that fd); CLIENT_DISCONNECT (drops all locks of
 *             the client, answers its waiters -ENOTCONN, then forwards);
 *             write, fallocate, setattr, copy_file_range, read, fsync,
 *             stat, lseek, rchecksum and setxattr for the migration freeze
 *             (locks-migrate.c); unlink, rename and link, which wait for
 *             a freeze of the file they rename or remove
 *             (locks-namespace.c).
 * Owners:     POSIX locks and inodelk/entrylk belong to (caller.client_id,
 *             caller.lk_owner); flock locks to the open fd, so, as on
 *             Linux, flock and POSIX locks never conflict with each other.
 * Per inode:  struct locks_ictx in the inode ctx: the migrated flag, the
 *             count of modifying fops in flight, and a pointer to struct
 *             locks_inode, present
 *             only while the inode has locks or waiters (it then holds an
 *             inode ref and is on locks_priv.inodes). PARENT_DOWN drops
 *             everything, since the core frees the inode table before
 *             fini().
 * Threads:    fops run on io-threads workers or event threads and never
 *             block. locks_priv.lock guards all lock state (also the ctx
 *             pointer); it is dropped before any vl_unwind: granted and
 *             cancelled waiters are collected in a struct locks_answers and
 *             answered afterwards, on the thread that released the lock.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>

#include "builtin.h"
#include "locks.h"

/* Status given to a waiter whose owner closed the file (flush) while it
 * waited, and to one whose fd went away (release). */
#define LOCKS_FLUSH_STATUS (-EINTR)
#define LOCKS_RELEASE_STATUS (-EBADF)

enum locks_req_mode {
    LOCKS_GET,  /* report a conflicting lock */
    LOCKS_TRY,  /* set or fail with -EAGAIN */
    LOCKS_WAIT, /* set, queueing until granted */
};


bool
locks_owner_equal(const struct locks_owner *a, const struct locks_owner *b)
{
    return a->client_id == b->client_id && a->lk_owner == b->lk_owner;
}


void
locks_answers_init(struct locks_answers *ans)
{
    locks_list_init(&ans->ranges);
    locks_list_init(&ans->entries);
    locks_list_init(&ans->inodes);
    locks_list_init(&ans->released);
    locks_list_init(&ans->replies);
}


void
locks_answers_flush(struct locks_answers *ans)
{
    while (!locks_list_empty(&ans->ranges)) {
        struct locks_range *w =
            locks_container(ans->ranges.next, struct locks_range, link);
        vl_req_t *req = w->req;
        int status = w->status;

        locks_list_del(&w->link);
        locks_range_free(w);
        vl_unwind(req, status);
    }
    while (!locks_list_empty(&ans->entries)) {
        struct locks_entry *w =
            locks_container(ans->entries.next, struct locks_entry, link);
        vl_req_t *req = w->req;
        int status = w->status;

        locks_list_del(&w->link);
        locks_entry_free(w);
        vl_unwind(req, status);
    }
    while (!locks_list_empty(&ans->replies)) {
        struct locks_held *h =
            locks_container(ans->replies.next, struct locks_held, link);

        locks_list_del(&h->link);
        vl_unwind(h->req, h->status);
    }
    /* In FIFO order, each one through the same checks as a new fop. */
    while (!locks_list_empty(&ans->released)) {
        struct locks_held *h =
            locks_container(ans->released.next, struct locks_held, link);

        locks_list_del(&h->link);
        locks_mig_redispatch(h->req);
    }
    while (!locks_list_empty(&ans->inodes)) {
        struct locks_inode *li =
            locks_container(ans->inodes.next, struct locks_inode, link);

        locks_list_del(&li->link);
        vl_inode_unref(li->inode);
        vl_free(li);
    }
}


struct locks_inode *
locks_inode_get_locked(struct locks_priv *priv, vl_xlator_t *xl,
                       vl_inode_t *inode, bool create)
{
    struct locks_ictx *ictx = locks_ictx(xl, inode);
    struct locks_inode *li;

    if (ictx->li != NULL || !create)
        return ictx->li;
    li = vl_calloc(xl, 1, sizeof(*li), LOCKS_MT_INODE);
    if (li == NULL)
        return NULL;
    locks_list_init(&li->held);
    locks_list_init(&li->waiting);
    locks_list_init(&li->entry_held);
    locks_list_init(&li->entry_waiting);
    locks_list_init(&li->frozen);
    locks_list_init(&li->parked);
    li->inode = vl_inode_ref(inode);
    locks_list_insert_before(&priv->inodes, &li->link);
    ictx->li = li;
    return li;
}


void
locks_inode_maybe_drop_locked(struct locks_priv *priv,
                              struct locks_inode *li,
                              struct locks_answers *ans)
{
    if (li == NULL || !locks_list_empty(&li->held)
        || !locks_list_empty(&li->waiting)
        || !locks_list_empty(&li->entry_held)
        || !locks_list_empty(&li->entry_waiting)
        || !locks_list_empty(&li->frozen)
        || !locks_list_empty(&li->parked))
        return;
    locks_ictx(priv->xl, li->inode)->li = NULL;
    locks_list_del(&li->link);
    /* The inode ref is dropped in locks_answers_flush, without the mutex,
     * since the last unref may run forget hooks. */
    locks_list_insert_before(&ans->inodes, &li->link);
}


/* Fills reply->flock from a conflicting lock, or marks "no conflict". */
static void
locks_getlk_reply(vl_req_t *req, const struct vl_flock *asked,
                  const struct locks_range *lk)
{
    struct vl_flock *fl = &req->reply.flock;

    *fl = *asked;
    if (lk == NULL) {
        fl->type = F_UNLCK;
        return;
    }
    fl->type = lk->type;
    fl->whence = SEEK_SET;
    fl->start = lk->start;
    fl->len = lk->end == INT64_MAX ? 0 : lk->end - lk->start + 1;
    fl->pid = lk->pid;
}


/* Runs a byte-range lock request described by want (type F_UNLCK to
 * release) on inode, and answers req now unless it is queued. */
static void
locks_range_request(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode,
                    const struct locks_range *want, enum locks_req_mode mode,
                    const struct vl_flock *asked)
{
    struct locks_priv *priv = xl->priv;
    struct locks_answers ans;
    struct locks_inode *li;
    struct locks_range *w;
    int rc = 0;

    locks_answers_init(&ans);
    pthread_mutex_lock(&priv->lock);
    li = locks_inode_get_locked(priv, xl, inode,
                                mode != LOCKS_GET && want->type != F_UNLCK);
    if (mode == LOCKS_GET) {
        locks_getlk_reply(req, asked,
                          li != NULL ? locks_range_conflict_locked(li, want)
                                     : NULL);
        goto out_unlock;
    }
    if (li == NULL) {
        /* Nothing held here: unlocking is a no-op, locking lacked memory. */
        rc = want->type == F_UNLCK ? 0 : -ENOMEM;
        goto out_unlock;
    }
    if (want->type == F_UNLCK
        || locks_range_conflict_locked(li, want) == NULL) {
        rc = locks_range_apply_locked(priv, li, want);
        if (rc == 0)
            locks_range_grant_locked(priv, li, &ans);
        if (rc == 0 && locks_mig_park_locked(priv, li, want, req)) {
            /* A freeze: answered once the writes in flight are done. */
            pthread_mutex_unlock(&priv->lock);
            locks_answers_flush(&ans);
            return;
        }
        goto out_drop;
    }
    if (mode == LOCKS_TRY) {
        rc = -EAGAIN;
        goto out_drop;
    }

    w = vl_calloc(xl, 1, sizeof(*w), LOCKS_MT_LOCK);
    if (w == NULL || (want->domain != NULL
                      && (w->domain = vl_strdup(xl, want->domain,
                                                LOCKS_MT_STRING)) == NULL)) {
        locks_range_free(w);
        rc = -ENOMEM;
        goto out_drop;
    }
    w->kind = want->kind;
    w->owner = want->owner;
    w->type = want->type;
    w->start = want->start;
    w->end = want->end;
    w->pid = want->pid;
    w->fd = want->fd;
    w->req = req;
    locks_list_insert_before(&li->waiting, &w->link);
    if (want->kind == LOCKS_FLOCK) {
        /* Like Linux, a blocking flock conversion gives up the old lock
         * before waiting, so two holders upgrading at once cannot
         * deadlock; release what that unblocks. */
        locks_range_purge_locked(li, LOCKS_FLOCK, &want->owner, NULL, NULL,
                                 0, NULL);
        locks_range_grant_locked(priv, li, &ans);
    }
    pthread_mutex_unlock(&priv->lock);
    /* req belongs to the waiting list now; it may already be answered. */
    locks_answers_flush(&ans);
    return;

out_drop:
    locks_inode_maybe_drop_locked(priv, li, &ans);
out_unlock:
    pthread_mutex_unlock(&priv->lock);
    locks_answers_flush(&ans);
    vl_unwind(req, rc);
}


static void
locks_lk(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_lk_args *a = VL_ARGS(req, lk);
    struct locks_range want = {0};
    enum locks_req_mode mode;
    int rc;

    if (a->fd == NULL || a->fd->inode == NULL) {
        vl_unwind(req, -EBADF);
        return;
    }
    if (locks_mig_moved(xl, req, a->fd))
        return;
    switch (a->cmd) {
    case F_GETLK:
        mode = LOCKS_GET;
        break;
    case F_SETLK:
        mode = LOCKS_TRY;
        break;
    case F_SETLKW:
        mode = LOCKS_WAIT;
        break;
    default:
        vl_unwind(req, -EINVAL);
        return;
    }
    if (a->flock.type != F_RDLCK && a->flock.type != F_WRLCK
        && (a->flock.type != F_UNLCK || mode == LOCKS_GET)) {
        vl_unwind(req, -EINVAL);
        return;
    }

    want.type = a->flock.type;
    want.fd = a->fd;
    want.pid = a->flock.pid != 0 ? a->flock.pid : (int32_t)req->caller.pid;
    want.owner.client_id = req->caller.client_id;
    if (a->is_flock) {
        /* flock(2) locks the whole file on behalf of the open file. */
        want.kind = LOCKS_FLOCK;
        want.owner.lk_owner = (uint64_t)(uintptr_t)a->fd;
        want.start = 0;
        want.end = INT64_MAX;
    } else {
        want.kind = LOCKS_POSIX;
        want.owner.lk_owner = req->caller.lk_owner;
        rc = locks_range_from_flock(&a->flock, &want.start, &want.end);
        if (rc != 0) {
            vl_unwind(req, rc);
            return;
        }
    }
    if (mode != LOCKS_GET)
        req->reply.flock = a->flock;
    locks_range_request(xl, req, a->fd->inode, &want, mode, &a->flock);
}


static void
locks_inodelk(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_inodelk_args *a = VL_ARGS(req, inodelk);
    struct locks_range want = {0};
    enum locks_req_mode mode;
    int rc;

    if (a->loc.inode == NULL || a->domain == NULL) {
        vl_unwind(req, -EINVAL);
        return;
    }
    if (locks_cpd_lock(xl, req))
        return;
    switch (a->cmd) {
    case VL_LOCK_TRY:
        mode = LOCKS_TRY;
        want.type = a->flock.type;
        break;
    case VL_LOCK_WAIT:
        mode = LOCKS_WAIT;
        want.type = a->flock.type;
        break;
    case VL_LOCK_UNLOCK:
        mode = LOCKS_TRY;
        want.type = F_UNLCK;
        break;
    default:
        vl_unwind(req, -EINVAL);
        return;
    }
    if (want.type != F_RDLCK && want.type != F_WRLCK
        && want.type != F_UNLCK) {
        vl_unwind(req, -EINVAL);
        return;
    }
    rc = locks_range_from_flock(&a->flock, &want.start, &want.end);
    if (rc != 0) {
        vl_unwind(req, rc);
        return;
    }
    want.kind = LOCKS_INODELK;
    want.domain = (char *)a->domain; /* only read; copied when kept */
    want.owner.client_id = req->caller.client_id;
    want.owner.lk_owner = req->caller.lk_owner;
    want.pid = (int32_t)req->caller.pid;
    locks_range_request(xl, req, a->loc.inode, &want, mode, &a->flock);
}


/* close(2) of any fd drops the process's POSIX locks on the file. */
static void
locks_flush(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_flush_args *a = VL_ARGS(req, flush);
    struct locks_priv *priv = xl->priv;
    struct locks_owner owner = {
        .client_id = req->caller.client_id,
        .lk_owner = req->caller.lk_owner,
    };
    struct locks_answers ans;
    struct locks_inode *li;

    if (a->fd != NULL && a->fd->inode != NULL) {
        locks_answers_init(&ans);
        pthread_mutex_lock(&priv->lock);
        li = locks_inode_get_locked(priv, xl, a->fd->inode, false);
        if (li != NULL) {
            locks_range_purge_locked(li, LOCKS_POSIX, &owner, NULL, NULL,
                                     LOCKS_FLUSH_STATUS, &ans);
            locks_range_grant_locked(priv, li, &ans);
            locks_inode_maybe_drop_locked(priv, li, &ans);
        }
        pthread_mutex_unlock(&priv->lock);
        locks_answers_flush(&ans);
    }
    /* The locks went with close semantics; the file itself moved. */
    if (a->fd != NULL && locks_mig_moved(xl, req, a->fd))
        return;
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static void
locks_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct locks_priv *priv = xl->priv;
    struct locks_answers ans;
    struct locks_inode *li;

    if (priv == NULL || fd->inode == NULL)
        return;
    locks_answers_init(&ans);
    pthread_mutex_lock(&priv->lock);
    li = locks_inode_get_locked(priv, xl, fd->inode, false);
    if (li != NULL) {
        locks_range_purge_locked(li, LOCKS_FLOCK, NULL, NULL, fd,
                                 LOCKS_RELEASE_STATUS, &ans);
        locks_range_purge_locked(li, LOCKS_POSIX, NULL, NULL, fd,
                                 LOCKS_RELEASE_STATUS, &ans);
        locks_range_grant_locked(priv, li, &ans);
        locks_inode_maybe_drop_locked(priv, li, &ans);
    }
    pthread_mutex_unlock(&priv->lock);
    locks_answers_flush(&ans);
}


/* Drops every lock of client_id (all of them when client_id is NULL) and
 * answers the matching waiters with status. */
static void
locks_purge_client(vl_xlator_t *xl, const uint64_t *client_id, int status)
{
    struct locks_priv *priv = xl->priv;
    struct locks_answers ans;
    struct locks_list *n;

    locks_answers_init(&ans);
    pthread_mutex_lock(&priv->lock);
    n = priv->inodes.next;
    while (n != &priv->inodes) {
        struct locks_inode *li = locks_container(n, struct locks_inode, link);

        n = n->next;
        locks_range_purge_locked(li, -1, NULL, client_id, NULL, status, &ans);
        locks_range_grant_locked(priv, li, &ans);
        locks_entry_purge_client_locked(priv, li, client_id, status, &ans);
        locks_inode_maybe_drop_locked(priv, li, &ans);
    }
    pthread_mutex_unlock(&priv->lock);
    locks_answers_flush(&ans);
}


static int
locks_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    if (ev == VL_EV_CLIENT_DISCONNECT && data != NULL && xl->priv != NULL) {
        uint64_t client_id = *(const uint64_t *)data;

        vl_log(xl, VL_LOG_DEBUG, "client %" PRIu64 " disconnected, "
               "dropping its locks", client_id);
        locks_purge_client(xl, &client_id, -ENOTCONN);
    } else if (ev == VL_EV_PARENT_DOWN && xl->priv != NULL) {
        struct locks_priv *priv = xl->priv;

        /* The graph is going away: the core frees the inode table before
         * fini(), so every lock (and the inode ref it holds) goes now;
         * fops held by a freeze are answered, not run. */
        pthread_mutex_lock(&priv->lock);
        priv->is_down = true;
        pthread_mutex_unlock(&priv->lock);
        locks_purge_client(xl, NULL, -ENOTCONN);
    }
    return vl_notify_default(xl, ev, data);
}


static int
locks_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct locks_priv *priv;

    priv = vl_calloc(xl, 1, sizeof(*priv), LOCKS_MT_PRIV);
    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    pthread_mutex_init(&priv->lock, NULL);
    locks_list_init(&priv->inodes);
    priv->xl = xl;
    xl->priv = priv;
    return 0;
}


static void
locks_fini(vl_xlator_t *xl)
{
    struct locks_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    /* Waiters still queued get an answer before the state goes away. */
    locks_purge_client(xl, NULL, -ENOTCONN);
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
    xl->priv = NULL;
}


static void
locks_dump(vl_xlator_t *xl, FILE *out)
{
    struct locks_priv *priv = xl->priv;
    size_t i = 0;

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    for (struct locks_list *n = priv->inodes.next; n != &priv->inodes;
         n = n->next, i++) {
        struct locks_inode *li = locks_container(n, struct locks_inode, link);
        char gfid[VL_GFID_STR_LEN];
        char prefix[64];

        snprintf(prefix, sizeof(prefix), "inode[%zu]", i);
        fprintf(out, "%s.gfid=%s\n", prefix,
                vl_gfid_to_str(&li->inode->gfid, gfid));
        locks_range_dump_locked(li, out, prefix);
        locks_entry_dump_locked(li, out, prefix);
    }
    fprintf(out, "inodes_with_locks=%zu\n", i);
    pthread_mutex_unlock(&priv->lock);
}


static const vl_option_t locks_options[] = {
    VL_OPT_END,
};

static const char *const locks_mem_types[] = {
    "misc", "priv", "inode", "lock", "string", NULL,
};

const vl_xlator_class_t xl_features_locks = {
    .abi = VL_XLATOR_ABI,
    .type = "features/locks",
    .prefix = "locks",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = 0,
    .req_priv_size = sizeof(struct locks_held),
    .inode_ctx_size = sizeof(struct locks_ictx),
    .fd_ctx_size = sizeof(struct locks_fctx),
    .options = locks_options,
    .mem_types = locks_mem_types,
    .doc = "Brick-side POSIX, flock, inode and entry locks, kept in memory; "
           "blocked requests wait in queues and are answered when granted. "
           "Also the rebalance's migration freeze: while an inodelk in "
           "domain mortar.dht.migrate is held, modifying fops of other "
           "clients on that inode wait, and so do their unlinks, renames "
           "and links of it; after the setxattr "
           "mortar.dht.migrated its fd fops answer EREMCHG.",
    .init = locks_init,
    .fini = locks_fini,
    .notify = locks_notify,
    .release = locks_release,
    .dump = locks_dump,
    .fops = {
        [VL_FOP_LK] = locks_lk,
        [VL_FOP_INODELK] = locks_inodelk,
        [VL_FOP_ENTRYLK] = locks_entrylk,
        [VL_FOP_XATTROP] = locks_xattrop,
        [VL_FOP_FLUSH] = locks_flush,
        [VL_FOP_WRITE] = locks_mig_write,
        [VL_FOP_FALLOCATE] = locks_mig_fallocate,
        [VL_FOP_SETATTR] = locks_mig_setattr,
        [VL_FOP_COPY_FILE_RANGE] = locks_mig_copy_file_range,
        [VL_FOP_READ] = locks_mig_read,
        [VL_FOP_FSYNC] = locks_mig_fsync,
        [VL_FOP_STAT] = locks_mig_stat,
        [VL_FOP_LSEEK] = locks_mig_lseek,
        [VL_FOP_RCHECKSUM] = locks_mig_rchecksum,
        [VL_FOP_SETXATTR] = locks_mig_setxattr,
        [VL_FOP_OPEN] = locks_mig_open,
        [VL_FOP_CREATE] = locks_mig_create,
        [VL_FOP_MKNOD] = locks_mig_mknod,
        [VL_FOP_UNLINK] = locks_ns_fop,
        [VL_FOP_RENAME] = locks_ns_fop,
        [VL_FOP_LINK] = locks_ns_fop,
    },
};
