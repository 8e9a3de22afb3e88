/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * locks-migrate: the brick side of a file migration (doc/rebalance.md).
 *
 * The freeze: while an INODELK in domain "mortar.dht.migrate" is held on
 * an inode, WRITE, FALLOCATE, SETATTR with VL_SET_SIZE and
 * COPY_FILE_RANGE (into that inode) from any other client (caller
 * client_id) are queued, not failed, on locks_inode.frozen, and run again
 * in FIFO order once no freeze is held. A freeze is only answered once the
 * modifying fops already passed down (counted in locks_ictx.n_inflight)
 * are done, so the rebalance's final look at the source sees every write
 * that was acknowledged before it.
 *
 * The migrated flag: SETXATTR "mortar.dht.migrated" (sent by the rebalance
 * under the freeze, never passed to posix) bumps locks_ictx.mig_epoch and
 * sets is_migrated; from then on every fd fop through an fd opened before
 * (read, write, fsync, fstat, fsetattr, fallocate, lseek, copy_file_range,
 * lk, flush) answers -EREMCHG, also the frozen fops released at unlock,
 * and so do open and truncate by name until the GFID is created on this
 * brick again (a later rebalance moving the file back: create and mknod
 * clear is_migrated, and fds opened from then on carry the new epoch).
 * cluster/distribute then finds the file on its new subvolume.
 *
 * Intercepts: write, fallocate, setattr, copy_file_range (counted and
 *             possibly frozen), read, fsync, stat, lseek, rchecksum
 *             (checked for the flag), setxattr (the flag), open, create,
 *             mknod (epochs).
 * Per fd:     struct locks_fctx, the epoch it was opened in.
 * Per request: struct locks_held in VL_REQ_PRIV while frozen or parked.
 * Threads: io-threads workers; priv->lock guards frozen/parked lists and
 *          n_inflight; is_migrated is atomic so reads need no mutex.
 *          Requests are answered or re-run only after the mutex is dropped.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "locks.h"


struct locks_ictx *
locks_ictx(vl_xlator_t *xl, vl_inode_t *inode)
{
    return vl_inode_ctx(inode, xl);
}


static bool
locks_mig_is_freeze(const struct locks_range *lk)
{
    return lk->kind == LOCKS_INODELK && lk->type != F_UNLCK
           && lk->domain != NULL
           && strcmp(lk->domain, LOCKS_MIGRATE_DOMAIN) == 0;
}


bool
locks_mig_frozen_locked(struct locks_inode *li, const uint64_t *client_id)
{
    for (struct locks_list *n = li->held.next; n != &li->held; n = n->next) {
        const struct locks_range *lk =
            locks_container(n, struct locks_range, link);

        if (locks_mig_is_freeze(lk)
            && (client_id == NULL || lk->owner.client_id != *client_id))
            return true;
    }
    return false;
}


void
locks_mig_hold(struct locks_list *list, vl_req_t *req, int status)
{
    struct locks_held *h = VL_REQ_PRIV(req, struct locks_held);

    h->req = req;
    h->status = status;
    locks_list_insert_before(list, &h->link);
}


/* Moves every request of from to the tail of to, with status. */
static void
locks_mig_move_all(struct locks_list *from, struct locks_list *to,
                   int status)
{
    while (!locks_list_empty(from)) {
        struct locks_held *h =
            locks_container(from->next, struct locks_held, link);

        locks_list_del(&h->link);
        h->status = status;
        locks_list_insert_before(to, &h->link);
    }
}


void
locks_mig_after_change_locked(struct locks_priv *priv, struct locks_inode *li,
                              struct locks_answers *ans)
{
    struct locks_ictx *ictx = locks_ictx(priv->xl, li->inode);
    struct locks_list *n = ans->ranges.next;
    bool has_freeze;

    /* Freezes granted just now wait for the writes in flight, and for the
     * namespace fops passed without a look (locks-namespace.c). */
    while ((ictx->n_inflight > 0 || priv->n_ns_blind > 0)
           && n != &ans->ranges) {
        struct locks_range *w = locks_container(n, struct locks_range, link);

        n = n->next;
        if (w->status != 0 || !locks_mig_is_freeze(w) || w->req == NULL
            || w->req->op != VL_FOP_INODELK
            || w->req->args.inodelk.loc.inode != li->inode)
            continue;
        locks_list_del(&w->link);
        locks_mig_hold(&li->parked, w->req, 0);
        locks_range_free(w);
    }
    has_freeze = locks_mig_frozen_locked(li, NULL);
    if (has_freeze != li->has_freeze) {
        li->has_freeze = has_freeze;
        if (has_freeze)
            priv->n_frozen_inodes++;
        else
            priv->n_frozen_inodes--;
    }
    if (has_freeze)
        return;
    /* No freeze left (unlocked, or its owner went away). */
    locks_mig_move_all(&li->parked, &ans->replies, -ENOTCONN);
    if (priv->is_down)
        locks_mig_move_all(&li->frozen, &ans->replies, -ENOTCONN);
    else
        locks_mig_move_all(&li->frozen, &ans->released, 0);
}


bool
locks_mig_park_locked(struct locks_priv *priv, struct locks_inode *li,
                      const struct locks_range *want, vl_req_t *req)
{
    if (!locks_mig_is_freeze(want)
        || (locks_ictx(priv->xl, li->inode)->n_inflight == 0
            && priv->n_ns_blind == 0))
        return false;
    locks_mig_hold(&li->parked, req, 0);
    return true;
}


/* The fd a modifying fop writes through, or NULL (truncate by name). */
static vl_fd_t *
locks_mig_target_fd(vl_req_t *req)
{
    switch (req->op) {
    case VL_FOP_WRITE:
        return req->args.write.fd;
    case VL_FOP_FALLOCATE:
        return req->args.fallocate.fd;
    case VL_FOP_COPY_FILE_RANGE:
        return req->args.copy_file_range.fd_out;
    case VL_FOP_SETATTR:
        return req->args.setattr.fd;
    default:
        return NULL;
    }
}


static bool
locks_mig_fd_stale(vl_xlator_t *xl, const vl_fd_t *fd)
{
    struct locks_fctx *fctx = vl_fd_ctx((vl_fd_t *)fd, xl);

    return atomic_load(&locks_ictx(xl, fd->inode)->mig_epoch)
           > atomic_load(&fctx->epoch);
}


/* Has the file this modifying fop targets moved away? */
static bool
locks_mig_is_moved(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode)
{
    vl_fd_t *fd = locks_mig_target_fd(req);

    if (fd != NULL)
        return locks_mig_fd_stale(xl, fd);
    return atomic_load(&locks_ictx(xl, inode)->is_migrated);
}


/* The inode a modifying fop changes. */
static vl_inode_t *
locks_mig_target(vl_req_t *req)
{
    switch (req->op) {
    case VL_FOP_WRITE:
        return req->args.write.fd->inode;
    case VL_FOP_FALLOCATE:
        return req->args.fallocate.fd->inode;
    case VL_FOP_COPY_FILE_RANGE:
        return req->args.copy_file_range.fd_out->inode;
    case VL_FOP_SETATTR:
        return req->args.setattr.fd != NULL ? req->args.setattr.fd->inode
                                            : req->args.setattr.loc.inode;
    default:
        return NULL;
    }
}


void
locks_mig_unpark_locked(struct locks_priv *priv, struct locks_inode *li,
                        struct locks_answers *ans)
{
    if (li != NULL && priv->n_ns_blind == 0
        && locks_ictx(priv->xl, li->inode)->n_inflight == 0)
        locks_mig_move_all(&li->parked, &ans->replies, 0);
}


void
locks_mig_inflight_done(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct locks_priv *priv = xl->priv;
    struct locks_ictx *ictx = locks_ictx(xl, inode);
    struct locks_answers ans;

    locks_answers_init(&ans);
    pthread_mutex_lock(&priv->lock);
    if (ictx->n_inflight > 0)
        ictx->n_inflight--;
    locks_mig_unpark_locked(priv, ictx->li, &ans);
    pthread_mutex_unlock(&priv->lock);
    locks_answers_flush(&ans);
}


static void
locks_mig_modify_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    int status = child->status;

    vl_reply_move(req, child);
    locks_mig_inflight_done(xl, locks_mig_target(req));
    vl_unwind(req, status);
}


/* A modifying fop on inode: -EREMCHG if migrated, queued while another
 * client's freeze is held, else counted and wound. */
static void
locks_mig_modify(vl_xlator_t *xl, vl_req_t *req)
{
    struct locks_priv *priv = xl->priv;
    vl_inode_t *inode = locks_mig_target(req);
    struct locks_ictx *ictx;
    vl_req_t *child;

    if (inode == NULL) {
        vl_unwind(req, -EBADF);
        return;
    }
    ictx = locks_ictx(xl, inode);
    pthread_mutex_lock(&priv->lock);
    if (locks_mig_is_moved(xl, req, inode)) {
        pthread_mutex_unlock(&priv->lock);
        vl_unwind(req, -EREMCHG);
        return;
    }
    if (ictx->li != NULL
        && locks_mig_frozen_locked(ictx->li, &req->caller.client_id)) {
        locks_mig_hold(&ictx->li->frozen, req, 0);
        pthread_mutex_unlock(&priv->lock);
        return;
    }
    ictx->n_inflight++;
    pthread_mutex_unlock(&priv->lock);

    child = vl_req_child(req, VL_FIRST_CHILD(xl));
    if (child == NULL) {
        locks_mig_inflight_done(xl, inode);
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(child, locks_mig_modify_done, req);
}


void
locks_mig_redispatch(vl_req_t *req)
{
    switch (req->op) {
    case VL_FOP_UNLINK:
    case VL_FOP_RENAME:
    case VL_FOP_LINK:
        locks_ns_fop(req->xl, req);
        break;
    default:
        locks_mig_modify(req->xl, req);
        break;
    }
}


bool
locks_mig_moved(vl_xlator_t *xl, vl_req_t *req, const vl_fd_t *fd)
{
    if (fd == NULL || fd->inode == NULL || !locks_mig_fd_stale(xl, fd))
        return false;
    vl_unwind(req, -EREMCHG);
    return true;
}


void
locks_mig_write(vl_xlator_t *xl, vl_req_t *req)
{
    if (req->args.write.fd == NULL || req->args.write.fd->inode == NULL) {
        vl_unwind(req, -EBADF);
        return;
    }
    locks_mig_modify(xl, req);
}


void
locks_mig_fallocate(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_fallocate_args *a = VL_ARGS(req, fallocate);

    if (a->fd == NULL || a->fd->inode == NULL) {
        vl_unwind(req, -EBADF);
        return;
    }
    locks_mig_modify(xl, req);
}


void
locks_mig_copy_file_range(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_copy_file_range_args *a = VL_ARGS(req, copy_file_range);

    if (a->fd_in == NULL || a->fd_in->inode == NULL || a->fd_out == NULL
        || a->fd_out->inode == NULL) {
        vl_unwind(req, -EBADF);
        return;
    }
    if (locks_mig_moved(xl, req, a->fd_in))
        return;
    locks_mig_modify(xl, req);
}


/* Truncates (by fd or by name) are frozen; other fd setattrs only
 * checked; setattr by name without a size passes. */
void
locks_mig_setattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_setattr_args *a = VL_ARGS(req, setattr);

    if (a->valid & VL_SET_SIZE) {
        if (a->fd == NULL && a->loc.inode == NULL) {
            vl_unwind(req, -EINVAL);
            return;
        }
        locks_mig_modify(xl, req);
        return;
    }
    if (locks_mig_moved(xl, req, a->fd))
        return;
    vl_pass(req, VL_FIRST_CHILD(xl));
}


void
locks_mig_read(vl_xlator_t *xl, vl_req_t *req)
{
    if (locks_mig_moved(xl, req, VL_ARGS(req, read)->fd))
        return;
    vl_pass(req, VL_FIRST_CHILD(xl));
}


void
locks_mig_fsync(vl_xlator_t *xl, vl_req_t *req)
{
    if (locks_mig_moved(xl, req, VL_ARGS(req, fsync)->fd))
        return;
    vl_pass(req, VL_FIRST_CHILD(xl));
}


void
locks_mig_stat(vl_xlator_t *xl, vl_req_t *req)
{
    if (locks_mig_moved(xl, req, VL_ARGS(req, stat)->fd))
        return;
    vl_pass(req, VL_FIRST_CHILD(xl));
}


void
locks_mig_lseek(vl_xlator_t *xl, vl_req_t *req)
{
    if (locks_mig_moved(xl, req, VL_ARGS(req, lseek)->fd))
        return;
    vl_pass(req, VL_FIRST_CHILD(xl));
}


void
locks_mig_rchecksum(vl_xlator_t *xl, vl_req_t *req)
{
    /* Heal must not compare the stale copy a migration left behind. */
    if (locks_mig_moved(xl, req, VL_ARGS(req, rchecksum)->fd))
        return;
    vl_pass(req, VL_FIRST_CHILD(xl));
}


/* The migrated mark is answered here; a brick never stores it. */
void
locks_mig_setxattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_setxattr_args *a = VL_ARGS(req, setxattr);

    if (a->name == NULL || strcmp(a->name, LOCKS_MIGRATED_XATTR) != 0) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    if (a->loc.inode == NULL || a->value == NULL || a->size == 0) {
        vl_unwind(req, -EINVAL);
        return;
    }
    atomic_fetch_add(&locks_ictx(xl, a->loc.inode)->mig_epoch, 1);
    atomic_store(&locks_ictx(xl, a->loc.inode)->is_migrated, true);
    vl_log(xl, VL_LOG_DEBUG, "inode migrated to %.*s", (int)a->size,
           (const char *)a->value);
    vl_unwind(req, 0);
}


/* Records in fd the epoch of inode, so it is stale after a migration. */
static void
locks_mig_stamp(vl_xlator_t *xl, vl_fd_t *fd, vl_inode_t *inode)
{
    struct locks_fctx *fctx;

    if (fd == NULL || inode == NULL)
        return;
    fctx = vl_fd_ctx(fd, xl);
    atomic_store(&fctx->epoch,
                 atomic_load(&locks_ictx(xl, inode)->mig_epoch));
}


/* Opening a file that moved away (and was not created here again)
 * answers -EREMCHG: the open must follow it too. */
void
locks_mig_open(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_open_args *a = VL_ARGS(req, open);

    if (a->loc.inode != NULL) {
        if (atomic_load(&locks_ictx(xl, a->loc.inode)->is_migrated)) {
            vl_unwind(req, -EREMCHG);
            return;
        }
        locks_mig_stamp(xl, a->fd, a->loc.inode);
    }
    vl_pass(req, VL_FIRST_CHILD(xl));
}


/* The brick's inode of a GFID being created (new ref), if it has one. */
static vl_inode_t *
locks_mig_created(vl_xlator_t *xl, const struct vl_loc *loc,
                  const vl_gfid_t *gfid)
{
    if (loc->inode != NULL && !vl_gfid_is_null(&loc->inode->gfid))
        return vl_inode_ref(loc->inode);
    if (vl_gfid_is_null(gfid) || xl->graph == NULL)
        return NULL;
    return vl_inode_find(xl->graph->itable, gfid);
}


/* A file created here with a GFID that once moved away: it is back. */
void
locks_mig_create(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_create_args *a = VL_ARGS(req, create);
    vl_inode_t *inode = locks_mig_created(xl, &a->loc, &a->gfid);

    if (inode != NULL) {
        atomic_store(&locks_ictx(xl, inode)->is_migrated, false);
        if (a->fd != NULL && a->fd->inode == inode)
            locks_mig_stamp(xl, a->fd, inode);
        vl_inode_unref(inode);
    }
    vl_pass(req, VL_FIRST_CHILD(xl));
}


void
locks_mig_mknod(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_mknod_args *a = VL_ARGS(req, mknod);
    vl_inode_t *inode = locks_mig_created(xl, &a->loc, &a->gfid);

    if (inode != NULL) {
        atomic_store(&locks_ictx(xl, inode)->is_migrated, false);
        vl_inode_unref(inode);
    }
    vl_pass(req, VL_FIRST_CHILD(xl));
}
