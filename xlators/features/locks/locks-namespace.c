/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * locks-namespace: another client's unlink, rename and link of a file
 * under the migration freeze wait for the freeze to go, as its writes do
 * (doc/rebalance.md, "Clients changing names during a migration").
 *
 * Why: under the freeze the rebalance looks the name up on this brick
 * (the source) once more, commits the copy on the destination, marks the
 * inode migrated and unlinks the name here. A client's rename in between
 * left the committed copy under a name the client no longer has and the
 * source under the new name, marked migrated (every fop on it then
 * failed); a link in between split one file into two.
 *
 * How:
 *   - No freeze on this brick (priv->n_frozen_inodes == 0, the usual
 *     case): the fop passes at once, counted in priv->n_ns_blind. A
 *     freeze is answered only once those are done (locks-migrate.c parks
 *     it), so none of them can land after the rebalance's look.
 *   - A freeze somewhere on the brick: the inodes the names hold are
 *     looked up on the child (unlink: loc; rename: oldloc, then newloc,
 *     a target it would replace; link: oldloc.inode, which the server
 *     resolved by GFID). If another client froze one, the fop waits on
 *     that inode's frozen list and starts over here when the freeze goes
 *     (the name is then usually gone: the child answers ENOENT and
 *     distribute finds the file on its new subvolume). Otherwise it is
 *     counted in flight on each inode (ictx->n_inflight, which a freeze
 *     of that inode waits for) and passed.
 *   - A link of an inode migrated away answers -ESTALE: its handle here
 *     is the old copy; distribute finds the file again and retries.
 * Not covered: a name looked up here as inode X, then renamed by a third
 * client to hold the frozen inode before this fop reaches the child.
 *
 * Intercepts: unlink, rename, link.
 * Per request: struct locks_held (ns_step, ns_inodes, is_ns_blind).
 * Threads: any; priv->lock guards the counters and lists, never held
 *          across a wind.
 */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>

#include "locks.h"


/* The name of step (0, 1) whose inode must be known, or NULL. */
static const struct vl_loc *
locks_ns_loc(vl_req_t *req, int step)
{
    switch (req->op) {
    case VL_FOP_UNLINK:
        return step == 0 ? &req->args.unlink.loc : NULL;
    case VL_FOP_RENAME:
        if (step == 0)
            return &req->args.rename.oldloc;
        return step == 1 ? &req->args.rename.newloc : NULL;
    default:
        return NULL;
    }
}


static void
locks_ns_drop_inodes(struct locks_held *h)
{
    for (size_t i = 0; i < VL_ARRAY_SIZE(h->ns_inodes); i++) {
        if (h->ns_inodes[i] != NULL)
            vl_inode_unref(h->ns_inodes[i]);
        h->ns_inodes[i] = NULL;
    }
}


/* Drops what the fop counted, then answers it. */
static void
locks_ns_finish(vl_xlator_t *xl, vl_req_t *req, int status)
{
    struct locks_priv *priv = xl->priv;
    struct locks_held *h = VL_REQ_PRIV(req, struct locks_held);

    if (h->is_ns_blind) {
        struct locks_answers ans;

        locks_answers_init(&ans);
        pthread_mutex_lock(&priv->lock);
        /* Parked freezes are held ones: none without a frozen inode. */
        if (--priv->n_ns_blind == 0 && priv->n_frozen_inodes > 0) {
            for (struct locks_list *n = priv->inodes.next;
                 n != &priv->inodes; n = n->next)
                locks_mig_unpark_locked(
                    priv, locks_container(n, struct locks_inode, link),
                    &ans);
        }
        pthread_mutex_unlock(&priv->lock);
        locks_answers_flush(&ans);
    }
    for (size_t i = 0; i < VL_ARRAY_SIZE(h->ns_inodes); i++)
        if (h->ns_inodes[i] != NULL)
            locks_mig_inflight_done(xl, h->ns_inodes[i]);
    locks_ns_drop_inodes(h);
    vl_unwind(req, status);
}


static void
locks_ns_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;

    vl_reply_move(req, child);
    locks_ns_finish(req->xl, req, child->status);
}


/* Winds req to the child; its counters were taken by the caller. */
static void
locks_ns_wind(vl_xlator_t *xl, vl_req_t *req)
{
    vl_req_t *child = vl_req_child(req, VL_FIRST_CHILD(xl));

    if (child == NULL) {
        locks_ns_finish(xl, req, -ENOMEM);
        return;
    }
    vl_wind(child, locks_ns_done, req);
}


/* Every inode of the fop's names is known (ns_inodes): wait on a frozen
 * one, or count and pass. */
static void
locks_ns_decide(vl_xlator_t *xl, vl_req_t *req)
{
    struct locks_priv *priv = xl->priv;
    struct locks_held *h = VL_REQ_PRIV(req, struct locks_held);
    const uint64_t *client = &req->caller.client_id;

    pthread_mutex_lock(&priv->lock);
    for (size_t i = 0; i < VL_ARRAY_SIZE(h->ns_inodes); i++) {
        vl_inode_t *inode = h->ns_inodes[i];
        struct locks_inode *li;

        if (inode == NULL)
            continue;
        li = locks_ictx(xl, inode)->li;
        if (li != NULL && locks_mig_frozen_locked(li, client)) {
            /* Refs go now: li holds its own, and the fop starts over. */
            locks_mig_hold(&li->frozen, req, 0);
            pthread_mutex_unlock(&priv->lock);
            locks_ns_drop_inodes(h);
            return;
        }
    }
    if (req->op == VL_FOP_LINK && h->ns_inodes[0] != NULL
        && atomic_load(&locks_ictx(xl, h->ns_inodes[0])->is_migrated)) {
        pthread_mutex_unlock(&priv->lock);
        locks_ns_drop_inodes(h);
        vl_unwind(req, -ESTALE);
        return;
    }
    for (size_t i = 0; i < VL_ARRAY_SIZE(h->ns_inodes); i++)
        if (h->ns_inodes[i] != NULL)
            locks_ictx(xl, h->ns_inodes[i])->n_inflight++;
    pthread_mutex_unlock(&priv->lock);
    locks_ns_wind(xl, req);
}


static void locks_ns_lookup(vl_xlator_t *xl, vl_req_t *req);


static void
locks_ns_lookup_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct locks_held *h = VL_REQ_PRIV(req, struct locks_held);

    /* A name that is not there holds nothing to wait for; the fop itself
     * will say so. */
    if (child->status == 0 && !vl_gfid_is_null(&child->reply.iatt.gfid)) {
        h->ns_inodes[h->ns_step] = vl_inode_get(xl->graph->itable,
                                                &child->reply.iatt.gfid,
                                                child->reply.iatt.mode
                                                    & S_IFMT);
        if (h->ns_inodes[h->ns_step] == NULL) {
            locks_ns_drop_inodes(h);
            vl_unwind(req, -ENOMEM);
            return;
        }
    }
    h->ns_step++;
    locks_ns_lookup(xl, req);
}


/* Looks up the name of ns_step, or decides when none is left. */
static void
locks_ns_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    struct locks_held *h = VL_REQ_PRIV(req, struct locks_held);
    const struct vl_loc *loc = locks_ns_loc(req, h->ns_step);
    vl_req_t *child;

    if (loc == NULL) {
        locks_ns_decide(xl, req);
        return;
    }
    if (loc->parent == NULL || loc->name == NULL) {
        h->ns_step++;
        locks_ns_lookup(xl, req);
        return;
    }
    child = vl_req_new_op(req, VL_FIRST_CHILD(xl), VL_FOP_LOOKUP);
    if (child == NULL) {
        locks_ns_drop_inodes(h);
        vl_unwind(req, -ENOMEM);
        return;
    }
    child->args.lookup.loc.parent = loc->parent;
    child->args.lookup.loc.name = loc->name;
    vl_wind(child, locks_ns_lookup_done, req);
}


void
locks_ns_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct locks_priv *priv = xl->priv;
    struct locks_held *h = VL_REQ_PRIV(req, struct locks_held);

    h->ns_step = 0;
    h->is_ns_blind = false;
    h->ns_inodes[0] = NULL;
    h->ns_inodes[1] = NULL;
    if (req->op == VL_FOP_LINK && req->args.link.oldloc.inode != NULL
        && atomic_load(
            &locks_ictx(xl, req->args.link.oldloc.inode)->is_migrated)) {
        vl_unwind(req, -ESTALE);
        return;
    }
    pthread_mutex_lock(&priv->lock);
    if (priv->n_frozen_inodes == 0) {
        priv->n_ns_blind++;
        h->is_ns_blind = true;
        pthread_mutex_unlock(&priv->lock);
        locks_ns_wind(xl, req);
        return;
    }
    pthread_mutex_unlock(&priv->lock);
    if (req->op == VL_FOP_LINK) {
        vl_inode_t *inode = req->args.link.oldloc.inode;

        h->ns_inodes[0] = inode != NULL ? vl_inode_ref(inode) : NULL;
        locks_ns_decide(xl, req);
        return;
    }
    locks_ns_lookup(xl, req);
}
