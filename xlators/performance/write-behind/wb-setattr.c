/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wb-setattr: setattr-behind. A SETATTR that only changes the mode, the
 * owner or the times of an open regular file, by a caller the brick
 * cannot refuse, is answered at once with the attributes it will give,
 * and sent to the child behind the caller's back as a barrier of the
 * inode's queue (wb-queue.c): it goes down after every earlier entry was
 * answered, and every later fop of the inode waits for it.
 *
 * Why: tar, cp -p and rsync set owner, mode and times of each file they
 * wrote, one SETATTR (one round trip to a brick) each, right after the
 * writes that write-behind already answered early. Behind, a file costs
 * its LOOKUP and CREATE and nothing more in round trips.
 *
 * Off by default: it hides latency, not work (the SETATTR still costs
 * the brick the same), and tar -x on the 2-core bench machine, bound by
 * CPU, was no faster with it (README).
 *
 * When (all of them, under the inode lock):
 *   - setattr-behind is on;
 *   - only VL_SET_MODE, UID, GID, ATIME(_NOW), MTIME(_NOW), CTIME or
 *     KILL_SUIDGID are asked (no truncate: it goes through);
 *   - the inode's attributes are known from a reply (a create, lookup,
 *     stat, write... that passed through), it is a regular file without
 *     setuid/setgid bits, and a new mode has none either (chown clears
 *     those bits on the brick: such a prediction could be wrong);
 *   - the caller is root, or owns the file and changes no owner (then
 *     the brick allows a chmod and any times);
 *   - this client has the file open (an error has an fd to be reported
 *     through), no earlier setattr answered early failed unreported, no
 *     O_APPEND write is pending (its end is not known), and no fop whose
 *     caller waits is queued (its outcome is not known).
 * The answer: the last known attributes with the change applied, ctime
 * (and a *_NOW time) from this client's clock, size at least the end of
 * every pending early write. Until the child answered every SETATTR
 * answered early, replies passing through only raise the known size, so
 * the next prediction starts from the predicted state.
 *
 * Errors: a failure (a read-only or immutable file on the brick, a brick
 * down) is sticky on the inode: the next write, flush or fsync of any fd
 * of the file through this client returns it once, and until then no
 * SETATTR of the file is answered early. As with writes and
 * flush-behind, a failure that comes after close() returned is only
 * logged. ENOENT or ESTALE (the file was removed meanwhile) is not an
 * error: the change had nowhere to go.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "write-behind.h"

/* What a SETATTR may ask and still be answered early. */
#define WB_SETATTR_BEHIND_VALID                                              \
    (VL_SET_MODE | VL_SET_UID | VL_SET_GID | VL_SET_ATIME | VL_SET_MTIME    \
     | VL_SET_ATIME_NOW | VL_SET_MTIME_NOW | VL_SET_CTIME                    \
     | VL_SET_KILL_SUIDGID)


void
wb_fd_opened(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct wb_fd *wf = vl_fd_ctx(fd, xl);
    struct wb_inode *wi = wb_inode_peek(xl, fd->inode);

    pthread_mutex_lock(&fd->inode->lock);
    pthread_mutex_lock(&fd->lock);
    if (!wf->is_counted) {
        wf->is_counted = true;
        wi->n_open++;
    }
    pthread_mutex_unlock(&fd->lock);
    pthread_mutex_unlock(&fd->inode->lock);
}


void
wb_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct wb_fd *wf = vl_fd_ctx(fd, xl);
    struct wb_inode *wi;

    /* The last ref is going: nobody else looks at wf. */
    if (!wf->is_counted || fd->inode == NULL)
        return;
    wi = wb_inode_peek(xl, fd->inode);
    pthread_mutex_lock(&fd->inode->lock);
    wi->n_open--;
    pthread_mutex_unlock(&fd->inode->lock);
}


/* Whether the request a by caller may be answered early (lock held). */
static bool
wb_setattr_may_behind_locked(const struct wb_inode *wi,
                             const struct vl_setattr_args *a,
                             const struct vl_caller *caller)
{
    uint32_t v = a->valid;

    if (!wi->has_iatt || !S_ISREG(wi->iatt.mode)
        || (wi->iatt.mode & (S_ISUID | S_ISGID)))
        return false;
    if (wi->n_open == 0 || wi->err != 0)
        return false;
    if ((v & VL_SET_MODE) && (a->attr.mode & (S_ISUID | S_ISGID)))
        return false;
    if (((v & VL_SET_ATIME) && !(v & VL_SET_ATIME_NOW)
         && a->attr.atime_ns > 999999999)
        || ((v & VL_SET_MTIME) && !(v & VL_SET_MTIME_NOW)
            && a->attr.mtime_ns > 999999999))
        return false; /* the brick's EINVAL must reach the caller */
    if (caller->uid != 0
        && (caller->uid != wi->iatt.uid || (v & (VL_SET_UID | VL_SET_GID))))
        return false;
    /* A pending O_APPEND write has no known end; a pending fop whose
     * caller waits (a truncate, say) has an outcome not known yet. */
    for (const struct wb_entry *e = wi->head; e != NULL; e = e->next)
        if ((e->kind == WB_E_WRITE && e->end == INT64_MAX)
            || (e->kind == WB_E_BARRIER && !e->is_early))
            return false;
    return true;
}


/* The attributes the child will answer a with (lock held). */
static void
wb_setattr_predict_locked(const struct wb_inode *wi,
                          const struct vl_setattr_args *a,
                          struct vl_iatt *out)
{
    uint32_t v = a->valid;
    struct timespec now;

    clock_gettime(CLOCK_REALTIME, &now);
    *out = wi->iatt;
    if (v & VL_SET_UID)
        out->uid = a->attr.uid;
    if (v & VL_SET_GID)
        out->gid = a->attr.gid;
    if (v & VL_SET_MODE)
        out->mode = (out->mode & S_IFMT) | (a->attr.mode & 07777);
    if (v & VL_SET_ATIME_NOW) {
        out->atime = now.tv_sec;
        out->atime_ns = (uint32_t)now.tv_nsec;
    } else if (v & VL_SET_ATIME) {
        out->atime = a->attr.atime;
        out->atime_ns = a->attr.atime_ns;
    }
    if (v & VL_SET_MTIME_NOW) {
        out->mtime = now.tv_sec;
        out->mtime_ns = (uint32_t)now.tv_nsec;
    } else if (v & VL_SET_MTIME) {
        out->mtime = a->attr.mtime;
        out->mtime_ns = a->attr.mtime_ns;
    }
    out->ctime = now.tv_sec;
    out->ctime_ns = (uint32_t)now.tv_nsec;
    for (const struct wb_entry *e = wi->head; e != NULL; e = e->next)
        if (e->kind == WB_E_WRITE && e->end > 0
            && (uint64_t)e->end > out->size)
            out->size = (uint64_t)e->end;
}


/* The time bits of one time: a request that sets it replaces both. */
#define WB_SET_ATIMES (VL_SET_ATIME | VL_SET_ATIME_NOW)
#define WB_SET_MTIMES (VL_SET_MTIME | VL_SET_MTIME_NOW)

/* Folds the SETATTR a of caller into the newest entry of the queue if
 * that is a SETATTR answered early, by the same caller, that has not gone
 * down yet (lock held); true when it did. tar sets the owner, the mode
 * and the times of each file it wrote one after the other while its
 * writes are still on their way: three SETATTRs, one round trip and one
 * brick request each, become one. Applied together, they end where the
 * three in a row would: a mode with setuid or setgid bits never gets
 * here (chown would clear them first), and a later value of the same
 * attribute replaces the earlier one. */
static bool
wb_setattr_merge_locked(struct wb_inode *wi, const struct vl_setattr_args *a,
                        const struct vl_caller *caller)
{
    struct wb_entry *t = wi->tail;
    struct vl_setattr_args *ta;
    uint32_t v = a->valid;

    if (t == NULL || t->kind != WB_E_BARRIER || !t->is_early
        || t->is_wound || t->child == NULL
        || t->child->op != VL_FOP_SETATTR
        || t->child->caller.uid != caller->uid
        || t->child->caller.gid != caller->gid)
        return false;
    ta = VL_ARGS(t->child, setattr);
    if (v & VL_SET_MODE)
        ta->attr.mode = a->attr.mode;
    if (v & VL_SET_UID)
        ta->attr.uid = a->attr.uid;
    if (v & VL_SET_GID)
        ta->attr.gid = a->attr.gid;
    if (v & WB_SET_ATIMES) {
        ta->valid &= ~(uint32_t)WB_SET_ATIMES;
        ta->attr.atime = a->attr.atime;
        ta->attr.atime_ns = a->attr.atime_ns;
    }
    if (v & WB_SET_MTIMES) {
        ta->valid &= ~(uint32_t)WB_SET_MTIMES;
        ta->attr.mtime = a->attr.mtime;
        ta->attr.mtime_ns = a->attr.mtime_ns;
    }
    ta->valid |= v;
    return true;
}


static void
wb_setattr_done(vl_req_t *child, void *cookie)
{
    struct wb_entry *e = cookie;
    struct wb_priv *priv = e->xl->priv;
    struct wb_inode *wi = wb_inode_peek(e->xl, e->inode);
    struct wb_entry *go = NULL;
    int status = child->status;
    bool is_gone = status == -ENOENT || status == -ESTALE;

    pthread_mutex_lock(&e->inode->lock);
    wi->n_setattr_behind--;
    if (status == 0) {
        wb_inode_seen_locked(wi, &child->reply.iatt);
    } else {
        /* The predicted attributes were wrong: predict nothing until a
         * reply tells them again. */
        wi->has_iatt = false;
        wi->has_mode = false;
        if (!is_gone && wi->err == 0)
            wi->err = status;
    }
    wb_queue_del_locked(wi, e, &go);
    pthread_mutex_unlock(&e->inode->lock);
    if (status != 0) {
        atomic_fetch_add(&priv->n_setattr_failed, 1);
        vl_log(e->xl, is_gone ? VL_LOG_DEBUG : VL_LOG_WARNING,
               "setattr answered early failed: %s%s", strerror(-status),
               is_gone ? " (file removed meanwhile)"
                       : "; the next write, flush or fsync returns it");
    }
    wb_entry_free(e);
    wb_queue_wind(go);
}


void
wb_setattr_go(struct wb_entry *e)
{
    vl_req_t *child = e->child;

    e->child = NULL;
    vl_wind(child, wb_setattr_done, e);
}


void
wb_fop_setattr(vl_xlator_t *xl, vl_req_t *req)
{
    const struct wb_conf *conf = VL_CONF(xl, struct wb_conf);
    struct wb_priv *priv = xl->priv;
    struct vl_setattr_args *a = VL_ARGS(req, setattr);
    vl_inode_t *inode = a->fd != NULL ? a->fd->inode : a->loc.inode;
    struct vl_setattr_args *ca;
    struct vl_iatt predicted;
    struct wb_inode *wi;
    struct wb_entry *e;
    bool is_behind = false;
    bool is_merged = false;
    bool is_free = false;

    if (!conf->is_setattr_behind || inode == NULL
        || vl_gfid_is_null(&inode->gfid) || a->valid == 0
        || (a->valid & ~WB_SETATTR_BEHIND_VALID) != 0) {
        wb_fop_observed(xl, req);
        return;
    }
    /* Built before the lock, thrown away if the file does not qualify. */
    e = wb_entry_new(xl, inode, WB_E_BARRIER);
    if (e != NULL)
        e->child = vl_req_new_op(NULL, VL_FIRST_CHILD(xl), VL_FOP_SETATTR);
    if (e == NULL || e->child == NULL) {
        wb_entry_free(e);
        wb_fop_observed(xl, req);
        return;
    }
    e->child->caller = req->caller;
    ca = VL_ARGS(e->child, setattr);
    ca->loc.inode = e->inode; /* by GFID: the caller's names go away */
    ca->attr = a->attr;
    ca->valid = a->valid;
    if (a->fd != NULL) {
        e->fd = vl_fd_ref(a->fd);
        ca->fd = e->fd;
    }
    e->is_early = true;
    e->is_primary = true;
    atomic_init(&e->n_blocked, 1);

    wi = wb_inode_peek(xl, inode);
    pthread_mutex_lock(&inode->lock);
    if (wb_setattr_may_behind_locked(wi, a, &req->caller)) {
        wb_setattr_predict_locked(wi, a, &predicted);
        wi->iatt = predicted;
        wi->mode = predicted.mode;
        is_behind = true;
        if (wb_setattr_merge_locked(wi, a, &req->caller)) {
            is_merged = true;
        } else {
            wi->n_setattr_behind++;
            /* From here another thread may wind and free e. */
            is_free = wb_queue_add_locked(wi, e);
        }
    }
    pthread_mutex_unlock(&inode->lock);
    if (!is_behind || is_merged)
        wb_entry_free(e);
    if (!is_behind) {
        wb_fop_observed(xl, req);
        return;
    }
    atomic_fetch_add(&priv->n_setattr_behind, 1);
    if (is_merged)
        atomic_fetch_add(&priv->n_setattr_merged, 1);
    req->reply.iatt = predicted;
    vl_unwind(req, 0);
    if (is_free)
        wb_setattr_go(e);
}
