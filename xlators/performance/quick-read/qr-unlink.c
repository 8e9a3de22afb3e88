/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qr-unlink: open-behind and the file's last name. An fd answered here
 * (lazy) has nothing open on the brick, so when the last name of its file
 * goes (unlink, rename over it) the brick frees the file and the fd's
 * later real open finds nothing (ESTALE): POSIX wants the file readable
 * until the last close. So before an UNLINK or RENAME that removes a
 * file with lazy fds is wound, quick-read opens the file below once, on
 * an fd of its own (the keeper): the brick then parks the unlinked file
 * (storage/posix keeps it reachable by GFID while open) and the lazy
 * fds' real opens, reads and fstats find it. The keeper is closed when
 * the last lazy fd of the inode is opened below or released.
 *
 * Which file a name removes: unlink's loc.inode when the mount knows it
 * (its hint), else (a rename's target, an unknown name) a LOOKUP of the
 * name first, and only while some fd of this client is lazy (n_lazy):
 * otherwise unlink and rename cost nothing more.
 *
 * Per inode: n_lazy, keeper, is_keeper_opening and keeper_wait of struct
 *            qr_inode, guarded by priv->lock.
 * Per fd:    is_counted of struct qr_fd, fd->lock.
 * Threads:   any; no lock is held across vl_wind, vl_pass or an fd
 *            release.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "quick-read.h"


void
qr_lazy_get(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct qr_priv *priv = xl->priv;
    struct qr_fd *qf = vl_fd_ctx(fd, xl);
    struct qr_inode *qi = vl_inode_ctx(fd->inode, xl);
    bool was;

    pthread_mutex_lock(&fd->lock);
    was = qf->is_counted;
    qf->is_counted = true;
    pthread_mutex_unlock(&fd->lock);
    if (was)
        return;
    pthread_mutex_lock(&priv->lock);
    qi->n_lazy++;
    pthread_mutex_unlock(&priv->lock);
    atomic_fetch_add(&priv->n_lazy, 1);
}


void
qr_lazy_put(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct qr_priv *priv = xl->priv;
    struct qr_fd *qf = vl_fd_ctx(fd, xl);
    struct qr_inode *qi;
    vl_fd_t *keeper = NULL;
    bool was;

    if (qf == NULL || priv == NULL)
        return;
    pthread_mutex_lock(&fd->lock);
    was = qf->is_counted;
    qf->is_counted = false;
    pthread_mutex_unlock(&fd->lock);
    if (!was)
        return;
    qi = vl_inode_ctx(fd->inode, xl);
    pthread_mutex_lock(&priv->lock);
    qi->n_lazy--;
    if (qi->n_lazy == 0) {
        keeper = qi->keeper;
        qi->keeper = NULL;
    }
    pthread_mutex_unlock(&priv->lock);
    atomic_fetch_sub(&priv->n_lazy, 1);
    /* Its release goes down (the brick closes its file; an unlinked one
     * is freed there now, unless other fds hold it). */
    vl_fd_unref(keeper);
}


/* The name req removes (an object that may go with it), or NULL: an
 * exchange or a no-replace rename removes no object. */
static const struct vl_loc *
qr_removed_loc(vl_req_t *req)
{
    switch (req->op) {
    case VL_FOP_UNLINK:
        return &req->args.unlink.loc;
    case VL_FOP_RENAME:
        if (req->args.rename.flags & (RENAME_EXCHANGE | RENAME_NOREPLACE))
            return NULL;
        return &req->args.rename.newloc;
    default:
        return NULL;
    }
}


/* The keeper's OPEN answered (fd NULL: it could not be sent). The
 * waiting fops go down either way: they are what the user asked for; a
 * keeper that failed leaves the lazy fds to fail their real open, as
 * they would have without us (the error reaches their next fop). */
static void
qr_keeper_done(vl_xlator_t *xl, vl_inode_t *inode, vl_fd_t *fd, int status)
{
    struct qr_priv *priv = xl->priv;
    struct qr_inode *qi = vl_inode_ctx(inode, xl);
    vl_req_t *w;

    pthread_mutex_lock(&priv->lock);
    w = qi->keeper_wait;
    qi->keeper_wait = NULL;
    qi->is_keeper_opening = false;
    /* Kept only while lazy fds remain; they may all have gone meanwhile
     * (then it is closed at once). */
    if (status == 0 && qi->n_lazy > 0 && qi->keeper == NULL) {
        qi->keeper = fd;
        fd = NULL;
    }
    pthread_mutex_unlock(&priv->lock);
    if (status == 0) {
        atomic_fetch_add(&priv->keeper_opens, 1);
    } else {
        char str[VL_GFID_STR_LEN];

        atomic_fetch_add(&priv->keeper_fails, 1);
        vl_gfid_to_str(&inode->gfid, str);
        vl_log(xl, VL_LOG_WARNING,
               "could not open %s before its name goes (%s): its fds "
               "opened here will fail their next fop", str,
               strerror(-status));
    }
    while (w != NULL) {
        vl_req_t *next = VL_REQ_PRIV(w, struct qr_local)->next;

        vl_pass(w, VL_FIRST_CHILD(xl));
        w = next;
    }
    vl_fd_unref(fd); /* last: it may hold the last ref of inode */
}


static void
qr_keeper_open_done(vl_req_t *r, void *cookie)
{
    vl_fd_t *fd = r->args.open.fd;

    qr_keeper_done(cookie, fd->inode, fd, r->status);
}


/* req removes a name of inode: wound once inode is held open below, if
 * it has lazy fds. */
static void
qr_keep_inode(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode)
{
    struct qr_priv *priv = xl->priv;
    struct qr_inode *qi = vl_inode_ctx(inode, xl);
    struct qr_local *local = VL_REQ_PRIV(req, struct qr_local);
    vl_req_t **pp;
    vl_fd_t *fd;
    vl_req_t *o;
    bool is_opening;

    pthread_mutex_lock(&priv->lock);
    if (qi == NULL || qi->n_lazy == 0 || qi->keeper != NULL) {
        pthread_mutex_unlock(&priv->lock);
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    local->next = NULL;
    for (pp = &qi->keeper_wait; *pp != NULL;
         pp = &VL_REQ_PRIV(*pp, struct qr_local)->next)
        ;
    *pp = req;
    is_opening = qi->is_keeper_opening;
    qi->is_keeper_opening = true;
    pthread_mutex_unlock(&priv->lock);
    if (is_opening)
        return; /* the OPEN in flight answers for req too */
    fd = vl_fd_new(inode, O_RDONLY, req->caller.pid);
    o = fd != NULL ? vl_req_new_op(req, VL_FIRST_CHILD(xl), VL_FOP_OPEN)
                   : NULL;
    if (o == NULL) {
        vl_fd_unref(fd);
        qr_keeper_done(xl, inode, NULL, -ENOMEM);
        return;
    }
    o->args.open.loc.inode = inode;
    o->args.open.flags = O_RDONLY;
    o->args.open.fd = fd;
    vl_wind(o, qr_keeper_open_done, xl);
}


static void
qr_unlink_lookup_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    vl_inode_t *fresh = r->args.lookup.loc.inode;
    vl_inode_t *in = NULL;

    if (r->status == 0 && S_ISREG(r->reply.iatt.mode)
        && !vl_gfid_is_null(&r->reply.iatt.gfid))
        in = vl_inode_find(xl->graph->itable, &r->reply.iatt.gfid);
    vl_inode_unref(fresh);
    if (in == NULL) {
        /* No such name, not a file, or no inode of it here (so no fd of
         * ours): the fop answers for itself. */
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    qr_keep_inode(xl, req, in);
    vl_inode_unref(in);
}


void
qr_unlink_guard(vl_xlator_t *xl, vl_req_t *req)
{
    struct qr_priv *priv = xl->priv;
    const struct vl_loc *loc = qr_removed_loc(req);
    vl_inode_t *fresh;
    vl_req_t *r;

    if (loc == NULL || atomic_load(&priv->n_lazy) == 0) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    if (loc->inode != NULL && !vl_gfid_is_null(&loc->inode->gfid)) {
        /* The mount's hint of what the name holds. */
        qr_keep_inode(xl, req, loc->inode);
        return;
    }
    if (loc->parent == NULL || loc->name == NULL) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    /* Which object the name holds decides whether its lazy fds need a
     * keeper: one LOOKUP (no content) first. Without memory for it the
     * fop fails, nothing changed, rather than go on unguarded. */
    fresh = vl_inode_new(xl->graph->itable);
    r = fresh != NULL
            ? vl_req_new_op(req, VL_FIRST_CHILD(xl), VL_FOP_LOOKUP)
            : NULL;
    if (r == NULL) {
        vl_inode_unref(fresh);
        vl_unwind(req, -ENOMEM);
        return;
    }
    r->args.lookup.loc.parent = loc->parent;
    r->args.lookup.loc.name = loc->name;
    r->args.lookup.loc.inode = fresh;
    atomic_fetch_add(&priv->keeper_lookups, 1);
    vl_wind(r, qr_unlink_lookup_done, req);
}
