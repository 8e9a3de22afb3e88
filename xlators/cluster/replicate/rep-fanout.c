/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-fanout: fops that go to every up child without a transaction.
 *
 *   open, opendir  the same fd is opened on every up child (each child
 *                  keeps its own handle in its fd ctx); the fd remembers
 *                  where it succeeded, and later fd fops use only those.
 *                  open with O_TRUNC changes data: rep-txn.c runs it.
 *                  opendir asks for the first batch of entries only from
 *                  the child the listing will be read from.
 *   flush, fsync   to every child the fd is open on; success if one
 *                  succeeded.
 *   statfs         every up child; the answer with the least space
 *                  available (what can really be written everywhere).
 *   lk, inodelk,   locks of the layers above: taken serially in child
 *   entrylk        order (so two clients cannot deadlock holding halves),
 *                  undone where granted if one child refuses; unlocks and
 *                  F_GETLK go in parallel / to the first up child.
 *
 * Reopen: a file's fd opened while a child was down is opened on it
 * before the next modifying fop through the fd once it is back
 * (rep_fd_reopen; protocol/client itself reopens an fd that was open on
 * an earlier connection of a child).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "rep.h"


/* ---- open, opendir ---- */

static vl_fd_t *
rep_open_fd(vl_req_t *req)
{
    return req->op == VL_FOP_OPEN ? req->args.open.fd : req->args.opendir.fd;
}


static void
rep_open_arrive(vl_req_t *req, unsigned idx, vl_req_t *child, int status)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_xlator_t *xl = req->xl;
    rep_mask_t ok;
    int result = 0;

    local->status[idx] = status;
    if (status == 0) {
        atomic_fetch_or(&local->ok, 1u << idx);
        rep_reply_pick_arrive(local, idx, child);
        /* opendir: the listing child's reply is the one to keep. */
        if ((int)idx == local->read_child
            || !atomic_exchange(&local->has_reply, true)) {
            if ((int)idx == local->read_child)
                atomic_store(&local->has_reply, true);
            vl_reply_move(req, child);
        }
    }
    if (!vl_fanout_arrive(&local->fan, status))
        return;
    rep_reply_pick_apply(local, req);
    ok = atomic_load(&local->ok);
    if (ok == 0) {
        for (unsigned i = 0; i < rep_priv(xl)->n; i++)
            if (local->txn & (1u << i)) {
                if (result == 0 || local->status[i] == -ENOENT)
                    result = local->status[i];
            }
        vl_reply_clear(&req->reply);
        vl_unwind(req, result != 0 ? result : -ENOTCONN);
        return;
    }
    rep_fd_set_opened(xl, rep_open_fd(req), ok);
    if (req->op == VL_FOP_OPENDIR && req->reply.has_listing) {
        if (local->read_child >= 0 && (ok & (1u << local->read_child))) {
            struct rep_fd_ctx *ctx = rep_fctx(xl, req->args.opendir.fd);

            pthread_mutex_lock(&req->args.opendir.fd->lock);
            ctx->dir_child = local->read_child;
            ctx->has_dir_child = true;
            pthread_mutex_unlock(&req->args.opendir.fd->lock);
            rep_readdir_strip(xl, req, local->read_child);
        } else {
            /* A listing from a child not chosen: drop it, the caller
             * reads the directory as usual. */
            vl_dirent_list_clear(&req->reply.entries);
            req->reply.has_listing = false;
        }
    }
    vl_unwind(req, 0);
}


static void
rep_open_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;

    rep_open_arrive(ck->req, ck->idx, child, child->status);
}


static void
rep_open_wind(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t mask = rep_up_mask(xl);
    unsigned n = rep_priv(xl)->n;
    int listing = local->read_child;

    if (mask == 0) {
        vl_unwind(req, -ENOTCONN);
        return;
    }
    local->txn = mask;
    for (unsigned i = 0; i < n; i++) {
        local->ck[i].req = req;
        local->ck[i].idx = i;
    }
    /* An open's attributes (write-behind keeps them) from a copy last
     * known good; opendir keeps its listing child's whole reply. */
    rep_reply_pick_begin(local, req->op == VL_FOP_OPEN
                                    ? rep_data_children(xl, mask)
                                          & rep_inode_good_hint(
                                              xl, req->args.open.loc.inode)
                                    : 0);
    vl_fanout_begin(&local->fan, (int)rep_popcount(mask));
    for (unsigned i = 0; i < n; i++) {
        vl_req_t *child;

        if (!(mask & (1u << i)))
            continue;
        child = vl_req_child(req, xl->children[i]);
        if (child == NULL) {
            rep_open_arrive(req, i, NULL, -ENOMEM);
            continue;
        }
        if (child->op == VL_FOP_OPENDIR && (int)i != listing)
            child->args.opendir.list_size = 0;
        vl_wind(child, rep_open_done, &local->ck[i]);
    }
}


void
rep_open(vl_xlator_t *xl, vl_req_t *req)
{
    if (req->args.open.flags & O_TRUNC) {
        rep_txn_inode(xl, req);
        return;
    }
    VL_REQ_PRIV(req, struct rep_local)->read_child = -1;
    rep_open_wind(xl, req);
}


void
rep_opendir(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_inode_t *inode = req->args.opendir.loc.inode;
    rep_mask_t readable = 0, up = rep_up_mask(xl);
    int pick = -1;

    /* The first batch comes from one child the directory is known good
     * on (the lowest such up child); unknown: no batch is asked. */
    if (inode != NULL && req->args.opendir.list_size > 0
        && rep_inode_readable(xl, inode, &readable))
        for (unsigned i = 0; i < rep_priv(xl)->n; i++)
            if (rep_data_children(xl, readable & up) & (1u << i)) {
                pick = (int)i;
                break;
            }
    local->read_child = pick;
    rep_open_wind(xl, req);
}


/* ---- reopen ---- */

static void
rep_reopen_arrive(vl_req_t *req, unsigned idx, int status)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_xlator_t *xl = req->xl;

    if (status == 0)
        atomic_fetch_or(&local->ok, 1u << idx);
    if (!vl_fanout_arrive(&local->fan, status))
        return;
    if (atomic_load(&local->ok) != 0) {
        vl_fd_t *fd = local->reopen_fd;

        rep_fd_set_opened(xl, fd, rep_fd_opened(xl, fd)
                                      | atomic_load(&local->ok));
        vl_log(xl, VL_LOG_DEBUG, "fd reopened on %u returning children",
               rep_popcount(atomic_load(&local->ok)));
    }
    atomic_store(&local->ok, 0);
    local->reopen_cont(xl, req);
}


static void
rep_reopen_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;

    rep_reopen_arrive(ck->req, ck->idx, child->status);
}


void
rep_fd_reopen(vl_xlator_t *xl, vl_req_t *req, vl_fd_t *fd, rep_mask_t mask,
              void (*cont)(vl_xlator_t *xl, vl_req_t *req))
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    unsigned n = rep_priv(xl)->n;

    local->is_reopened = true;
    local->reopen_fd = fd;
    local->reopen_cont = cont;
    atomic_store(&local->ok, 0);
    for (unsigned i = 0; i < n; i++) {
        local->ck[i].req = req;
        local->ck[i].idx = i;
    }
    vl_fanout_begin(&local->fan, (int)rep_popcount(mask));
    /* Nothing of local is read after the last wind. */
    for (unsigned i = 0; i < n; i++) {
        bool is_dir = S_ISDIR(fd->inode->type);
        vl_req_t *child;

        if (!(mask & (1u << i)))
            continue;
        child = vl_req_new_op(req, xl->children[i],
                              is_dir ? VL_FOP_OPENDIR : VL_FOP_OPEN);
        if (child == NULL) {
            rep_reopen_arrive(req, i, -ENOMEM);
            continue;
        }
        if (is_dir) {
            /* No first batch of entries: the reader asks for them. */
            VL_ARGS(child, opendir)->loc.inode = fd->inode;
            VL_ARGS(child, opendir)->fd = fd;
        } else {
            struct vl_open_args *a = VL_ARGS(child, open);

            a->loc.inode = fd->inode;
            a->flags = fd->flags & ~(O_CREAT | O_EXCL | O_TRUNC);
            a->fd = fd;
        }
        vl_wind(child, rep_reopen_done, &local->ck[i]);
    }
}


/* ---- flush, fsync, statfs ---- */

/* Per-child answers of statfs (owned by local->inspect meanwhile). */
struct rep_statfs_state {
    struct statvfs st[REP_MAX_CHILDREN];
};


static void
rep_any_arrive(vl_req_t *req, unsigned idx, vl_req_t *child, int status)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_statfs_state *sf = local->inspect;
    rep_mask_t ok;
    int best = -1;

    if (status == 0) {
        atomic_fetch_or(&local->ok, 1u << idx);
        if (sf != NULL) {
            sf->st[idx] = child->reply.statvfs;
        } else {
            rep_reply_pick_arrive(local, idx, child);
            if (!atomic_exchange(&local->has_reply, true))
                vl_reply_move(req, child);
        }
    }
    if (!vl_fanout_arrive(&local->fan, status))
        return;
    rep_reply_pick_apply(local, req);
    ok = atomic_load(&local->ok);
    if (ok == 0) {
        int result = vl_fanout_status(&local->fan);

        vl_free(sf);
        local->inspect = NULL;
        vl_reply_clear(&req->reply);
        vl_unwind(req, result != 0 ? result : -ENOTCONN);
        return;
    }
    if (sf != NULL) {
        /* An arbiter's brick holds no data: its space says nothing of
         * what can be written (unless it alone answered). */
        if (rep_data_children(req->xl, ok) != 0)
            ok = rep_data_children(req->xl, ok);
        for (unsigned i = 0; i < REP_MAX_CHILDREN; i++) {
            if (!(ok & (1u << i)))
                continue;
            if (best < 0
                || (unsigned __int128)sf->st[i].f_bavail * sf->st[i].f_frsize
                       < (unsigned __int128)sf->st[best].f_bavail
                             * sf->st[best].f_frsize)
                best = (int)i;
        }
        req->reply.statvfs = sf->st[best];
        vl_free(sf);
        local->inspect = NULL;
    }
    vl_unwind(req, 0);
}


static void
rep_any_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;

    rep_any_arrive(ck->req, ck->idx, child, child->status);
}


/* Sends req to every child of mask; success if one succeeded. */
static void
rep_any_wind(vl_xlator_t *xl, vl_req_t *req, rep_mask_t mask)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    unsigned n = rep_priv(xl)->n;

    if (mask == 0) {
        vl_free(local->inspect);
        local->inspect = NULL;
        vl_unwind(req, -ENOTCONN);
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        local->ck[i].req = req;
        local->ck[i].idx = i;
    }
    /* fsync answers the file's attributes (write-behind keeps them):
     * from a copy last known good. */
    rep_reply_pick_begin(local, req->op == VL_FOP_FSYNC
                                    ? rep_data_children(xl, mask)
                                          & rep_inode_good_hint(
                                              xl, req->args.fsync.fd->inode)
                                    : 0);
    vl_fanout_begin(&local->fan, (int)rep_popcount(mask));
    for (unsigned i = 0; i < n; i++) {
        vl_req_t *child;

        if (!(mask & (1u << i)))
            continue;
        child = vl_req_child(req, xl->children[i]);
        if (child == NULL) {
            rep_any_arrive(req, i, NULL, -ENOMEM);
            continue;
        }
        vl_wind(child, rep_any_done, &local->ck[i]);
    }
}


void
rep_fd_fanout(vl_xlator_t *xl, vl_req_t *req)
{
    vl_fd_t *fd = req->op == VL_FOP_FLUSH ? req->args.flush.fd
                                          : req->args.fsync.fd;

    /* An open write batch ends first: its post-op is what makes the
     * copies clean on the bricks. */
    if (rep_eager_intercept(xl, req, fd->inode))
        return;
    rep_any_wind(xl, req, rep_up_mask(xl) & rep_fd_opened(xl, fd));
}


void
rep_statfs(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    local->inspect = vl_calloc(xl, 1, sizeof(struct rep_statfs_state),
                               REP_MT_INSPECT);
    if (local->inspect == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    rep_any_wind(xl, req, rep_up_mask(xl));
}


/* ---- locks of the layers above ---- */

static bool
rep_lock_is_unlock(const vl_req_t *req)
{
    switch (req->op) {
    case VL_FOP_LK:
        return req->args.lk.flock.type == F_UNLCK;
    case VL_FOP_INODELK:
        return req->args.inodelk.cmd == VL_LOCK_UNLOCK;
    default:
        return req->args.entrylk.cmd == VL_LOCK_UNLOCK;
    }
}


static rep_mask_t
rep_lock_candidates(vl_xlator_t *xl, vl_req_t *req)
{
    rep_mask_t mask = rep_up_mask(xl);

    if (req->op == VL_FOP_LK)
        mask &= rep_fd_opened(xl, req->args.lk.fd);
    return mask;
}


static void rep_lock_next(vl_xlator_t *xl, vl_req_t *req);


/* Undoing the locks granted before a child refused: answered with the
 * refusal once every undo is back. */
static void
rep_lock_undo_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;
    vl_req_t *req = ck->req;
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    if (vl_fanout_arrive(&local->fan, child->status))
        vl_unwind(req, local->result);
}


static void
rep_lock_undo(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t held = atomic_load(&local->ok);
    unsigned n = rep_priv(xl)->n;

    if (held == 0) {
        vl_unwind(req, local->result);
        return;
    }
    vl_fanout_begin(&local->fan, (int)rep_popcount(held));
    for (unsigned i = 0; i < n; i++) {
        vl_req_t *child;

        if (!(held & (1u << i)))
            continue;
        child = vl_req_child(req, xl->children[i]);
        if (child == NULL) {
            /* The brick drops it when this client disconnects. */
            if (vl_fanout_arrive(&local->fan, -ENOMEM))
                vl_unwind(req, local->result);
            continue;
        }
        switch (child->op) {
        case VL_FOP_LK:
            child->args.lk.cmd = F_SETLK;
            child->args.lk.flock.type = F_UNLCK;
            break;
        case VL_FOP_INODELK:
            child->args.inodelk.cmd = VL_LOCK_UNLOCK;
            break;
        default:
            child->args.entrylk.cmd = VL_LOCK_UNLOCK;
            break;
        }
        vl_wind(child, rep_lock_undo_done, &local->ck[i]);
    }
}


static void
rep_lock_step_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;
    vl_req_t *req = ck->req;
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    if (child->status == 0) {
        atomic_fetch_or(&local->ok, 1u << ck->idx);
        if (!atomic_exchange(&local->has_reply, true))
            vl_reply_move(req, child);
    } else if (child->status != -ENOTCONN) {
        local->result = child->status;
        vl_reply_clear(&req->reply);
        rep_lock_undo(req->xl, req);
        return;
    }
    local->lk_step++;
    rep_lock_next(req->xl, req);
}


static void
rep_lock_next(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    unsigned n = rep_priv(xl)->n;
    vl_req_t *child;

    while (local->lk_step < n && !(local->txn & (1u << local->lk_step)))
        local->lk_step++;
    if (local->lk_step >= n) {
        vl_unwind(req, atomic_load(&local->ok) != 0 ? 0 : -ENOTCONN);
        return;
    }
    child = vl_req_child(req, xl->children[local->lk_step]);
    if (child == NULL) {
        local->result = -ENOMEM;
        vl_reply_clear(&req->reply);
        rep_lock_undo(xl, req);
        return;
    }
    vl_wind(child, rep_lock_step_done, &local->ck[local->lk_step]);
}


void
rep_lock_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t mask = rep_lock_candidates(xl, req);

    for (unsigned i = 0; i < rep_priv(xl)->n; i++) {
        local->ck[i].req = req;
        local->ck[i].idx = i;
    }
    if (mask == 0) {
        vl_unwind(req, -ENOTCONN);
        return;
    }
    if (req->op == VL_FOP_LK && req->args.lk.cmd == F_GETLK) {
        /* Every child holds the same locks: ask the first. */
        vl_pass(req, xl->children[__builtin_ctz(mask)]);
        return;
    }
    if (rep_lock_is_unlock(req)) {
        rep_any_wind(xl, req, mask);
        return;
    }
    local->txn = mask;
    local->lk_step = 0;
    rep_lock_next(xl, req);
}
