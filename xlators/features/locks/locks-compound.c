/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * locks-compound: the two compound requests of cluster/replicate's
 * transactions, so that one costs 3 round trips per brick instead of 5
 * (issue 21, doc/replicate.md "Transactions"):
 *
 *   lock + xattrop    an INODELK or ENTRYLK carrying args.xop (the
 *                     pre-op): the lock runs through this translator's
 *                     own engine as a request of its own, wound into
 *                     this translator, so waiting, the migration freeze
 *                     and a client's disconnect treat it as any lock.
 *                     Once it is granted the xattrop is wound down the
 *                     brick graph (features/index below records the
 *                     pending entry as for a plain XATTROP) and one
 *                     answer carries both: the lock's status, and
 *                     has_xop with the xattrop's status and values. A
 *                     lock refused (EAGAIN, error) applies nothing.
 *   xattrop + unlock  an XATTROP carrying args.unlock (the post-op): the
 *                     xattrop is wound down, then, whatever its result,
 *                     the unlock runs through the engine, and one answer
 *                     carries both: the xattrop's status and values, and
 *                     has_unlock with the unlock's status. The lock is
 *                     always released: a failed post-op must not leave
 *                     other clients waiting on it.
 *
 * An internal request that cannot be allocated leaves has_xop or
 * has_unlock false: the caller then sends that part itself.
 *
 * Per req: struct locks_held's cpd_status (the xattrop's status while
 *          the unlock runs).
 * Threads: a granted waiter's callback runs on the thread that released
 *          the lock, after locks_priv.lock was dropped.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>

#include "locks.h"


/* ---- lock + xattrop ---- */

static void
locks_cpd_xop_done(vl_req_t *x, void *cookie)
{
    vl_req_t *req = cookie;
    int status = x->status;

    vl_reply_move(req, x);
    if (status != 0)
        vl_reply_clear(&req->reply);
    req->reply.has_xop = true;
    req->reply.xop_status = status;
    /* The lock is held either way: its status is the answer's. */
    vl_unwind(req, 0);
}


static const struct vl_xattrop_args *
locks_cpd_xop(const vl_req_t *req)
{
    return req->op == VL_FOP_INODELK ? req->args.inodelk.xop
                                     : req->args.entrylk.xop;
}


static void
locks_cpd_lock_done(vl_req_t *lk, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    vl_req_t *x;

    if (lk->status != 0) {
        vl_unwind(req, lk->status); /* not granted: nothing applied */
        return;
    }
    x = vl_req_new_op(req, VL_FIRST_CHILD(xl), VL_FOP_XATTROP);
    if (x == NULL) {
        vl_log(xl, VL_LOG_WARNING, "%s granted, no memory for its "
               "xattrop: the caller sends it", vl_fop_name(req->op));
        vl_unwind(req, 0); /* has_xop false */
        return;
    }
    x->args.xattrop = *locks_cpd_xop(req);
    x->args.xattrop.unlock = NULL;
    vl_wind(x, locks_cpd_xop_done, req);
}


bool
locks_cpd_lock(vl_xlator_t *xl, vl_req_t *req)
{
    const struct vl_xattrop_args *xop = locks_cpd_xop(req);
    enum vl_lock_cmd cmd = req->op == VL_FOP_INODELK
                               ? req->args.inodelk.cmd
                               : req->args.entrylk.cmd;
    vl_req_t *lk;

    if (xop == NULL)
        return false;
    if (cmd != VL_LOCK_TRY && cmd != VL_LOCK_WAIT) {
        /* Only a lock taken is followed by a pre-op. */
        vl_unwind(req, -EINVAL);
        return true;
    }
    lk = vl_req_new_op(req, xl, req->op);
    if (lk == NULL) {
        vl_unwind(req, -ENOMEM);
        return true;
    }
    lk->args = req->args;
    if (req->op == VL_FOP_INODELK)
        lk->args.inodelk.xop = NULL;
    else
        lk->args.entrylk.xop = NULL;
    vl_wind(lk, locks_cpd_lock_done, req);
    return true;
}


/* ---- xattrop + unlock ---- */

static void
locks_cpd_unlock_done(vl_req_t *u, void *cookie)
{
    vl_req_t *req = cookie;
    int status = VL_REQ_PRIV(req, struct locks_held)->cpd_status;

    req->reply.has_unlock = true;
    req->reply.unlock_status = u->status;
    vl_unwind(req, status);
}


static void
locks_cpd_postop_done(vl_req_t *x, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    const struct vl_xattrop_unlock *ul = req->args.xattrop.unlock;
    int status = x->status;
    vl_req_t *u;

    vl_reply_move(req, x);
    if (status != 0)
        vl_reply_clear(&req->reply);
    u = vl_req_new_op(req, xl, ul->is_entry ? VL_FOP_ENTRYLK
                                            : VL_FOP_INODELK);
    if (u == NULL) {
        vl_log(xl, VL_LOG_WARNING, "xattrop done, no memory for its "
               "unlock: the caller sends it");
        vl_unwind(req, status); /* has_unlock false */
        return;
    }
    if (ul->is_entry) {
        struct vl_entrylk_args *a = VL_ARGS(u, entrylk);

        a->domain = ul->domain;
        a->loc = ul->loc;
        a->cmd = VL_LOCK_UNLOCK;
        a->type = ul->type;
    } else {
        struct vl_inodelk_args *a = VL_ARGS(u, inodelk);

        a->domain = ul->domain;
        a->loc = ul->loc;
        a->cmd = VL_LOCK_UNLOCK;
        a->flock = ul->flock;
        a->flock.type = F_UNLCK;
    }
    VL_REQ_PRIV(req, struct locks_held)->cpd_status = status;
    vl_wind(u, locks_cpd_unlock_done, req);
}


void
locks_xattrop(vl_xlator_t *xl, vl_req_t *req)
{
    vl_req_t *x;

    if (req->args.xattrop.unlock == NULL) {
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    x = vl_req_new_op(req, VL_FIRST_CHILD(xl), VL_FOP_XATTROP);
    if (x == NULL) {
        vl_unwind(req, -ENOMEM); /* nothing done: has_unlock false */
        return;
    }
    x->args.xattrop = req->args.xattrop;
    x->args.xattrop.unlock = NULL;
    vl_wind(x, locks_cpd_postop_done, req);
}
