/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-unlink: unlink through distribute.
 *
 * With a known inode (loc->inode whose ctx says where the data is): the
 * data on the cached subvolume, one round trip; when the name hashes
 * elsewhere, the link file there first, then the data (two rounds: a
 * failure of either leaves the name as it was). The inode may be stale:
 * mount/fuse passes the inode the kernel looked the name up to, and
 * another client may have renamed or replaced the name since. A miss on
 * the cached subvolume (ENOENT/ESTALE) therefore falls back to the name
 * on every up subvolume (unlink is by name: whatever the name is now goes).
 * A rebalance may have moved the data to the hashed subvolume: the first
 * round's unlink there then removed the data itself, the cached one says
 * ENOENT and so does every subvolume after; that is still this unlink's
 * success (is_name_gone), not ENOENT.
 * Without an inode ctx: the name on every up subvolume at once (those
 * without it answer ENOENT), one round trip.
 * When the data's unlink fails after the link file's succeeded, the
 * link file is made again (a worker) before the error goes up.
 *
 * Intercepts: unlink.
 * Per request: struct dist_local (subvol = cached, subvol2 = hashed,
 *              status2 = the cached subvolume's answer, fan, counters).
 * Threads:    caller's thread and the children's callbacks; a worker
 *             only to undo (dist_unlink_undo_task).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "dist.h"


/* The name on every subvolume at once: the data where it is, the link
 * file on the hashed one, ENOENT elsewhere. */
static void
dist_unlink_all_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    int st = r->status;

    if (st == 0) {
        bool no = false;

        if (atomic_compare_exchange_strong(&local->has_reply, &no, true))
            vl_reply_move(req, r);
    } else if (st == -ENOTCONN) {
        atomic_fetch_add(&local->n_down, 1);
    } else if (st != -ENOENT && st != -ESTALE) {
        int zero = 0;

        atomic_compare_exchange_strong(&local->hard_err, &zero, st);
    }
    if (vl_fanout_arrive(&local->fan, st)) {
        int rc = atomic_load(&local->hard_err);

        /* Nothing left anywhere after the first round took the name off
         * the hashed subvolume: that was this unlink, a success. */
        if (rc == 0 && !atomic_load(&local->has_reply)
            && !atomic_load(&local->is_name_gone))
            rc = atomic_load(&local->n_down) > 0 ? -ENOTCONN : -ENOENT;
        dist_entry_unwind(req, rc);
    }
}


static void
dist_unlink_all(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    unsigned n = dist_priv(xl)->n, k = 0;
    dist_mask_t up = dist_up_mask(xl);
    vl_req_t **rs;

    vl_reply_clear(&req->reply);
    if (dist_mask_is_empty(up)) {
        dist_entry_unwind(req, -ENOTCONN);
        return;
    }
    /* On the heap, sized by the subvolumes up: this runs on callbacks. */
    rs = vl_calloc(xl, dist_mask_count(up), sizeof(*rs), DIST_MT_FAN);
    if (rs == NULL) {
        dist_entry_unwind(req, -ENOMEM);
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        if (!dist_mask_test(up, i))
            continue;
        rs[k] = vl_req_child(req, xl->children[i]);
        if (rs[k] == NULL) {
            while (k > 0)
                vl_req_free_unwound(rs[--k]);
            vl_free(rs);
            dist_entry_unwind(req, -ENOMEM);
            return;
        }
        k++;
    }
    atomic_store(&local->hard_err, 0);
    atomic_store(&local->n_down, (int)(n - k));
    atomic_store(&local->has_reply, false);
    vl_fanout_begin(&local->fan, (int)k);
    for (unsigned j = 0; j < k; j++)
        vl_wind(rs[j], dist_unlink_all_done, req);
    vl_free(rs);
}


/* Worker: the data's unlink failed (local->status2) after the link file
 * on the hashed subvolume was removed in the same round; without it the
 * name would miss on its hashed subvolume (ENOENT with lookup-optimize)
 * while the data stays and listings show it. The link file is made
 * again and the error answered; if that fails too, a lookup of the name
 * (a miss on a range not COMMITTED, or lookup-optimize off) finds the
 * data and heals it. */
static void
dist_unlink_undo_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct vl_unlink_args *a = VL_ARGS(req, unlink);
    int rc;

    rc = dist_linkfile_create(xl, req, local->subvol2, local->subvol,
                              a->loc.parent, a->loc.name,
                              &a->loc.inode->gfid);
    if (rc != 0)
        vl_log(xl, VL_LOG_ERROR, "unlink %s failed on %s (%s) after its "
               "link file on %s went, and the link file could not be "
               "made again: %s", a->loc.name,
               xl->children[local->subvol]->name,
               strerror(-local->status2),
               xl->children[local->subvol2]->name, strerror(-rc));
    vl_reply_clear(&req->reply);
    dist_entry_unwind(req, local->status2);
}


/* A miss where the inode's ctx said the data is: the name was renamed
 * or replaced by another client since the kernel looked it up. */
static bool
dist_unlink_is_stale(int status)
{
    return status == -ENOENT || status == -ESTALE;
}


/* The data's unlink on the cached subvolume answered (the commit
 * point). */
static void
dist_unlink_data_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    int status = r->status;

    local->status2 = status;
    if (status == 0)
        vl_reply_move(req, r);
    if (dist_unlink_is_stale(status)) {
        /* The name is somewhere else now (or gone): ask everywhere. The
         * inode's ctx stays: a renamed file's data did not move. */
        dist_unlink_all(req->xl, req);
        return;
    }
    if (status != 0 && atomic_load(&local->is_name_gone)) {
        /* The data stayed and its link file went: put it back. */
        dist_task_or_unwind(req->xl, req, dist_unlink_undo_task);
        return;
    }
    dist_entry_unwind(req, status);
}


static void
dist_unlink_data(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    vl_req_t *r = vl_req_child(req, xl->children[local->subvol]);

    if (r == NULL) {
        local->status2 = -ENOMEM;
        if (atomic_load(&local->is_name_gone))
            dist_task_or_unwind(xl, req, dist_unlink_undo_task);
        else
            dist_entry_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, dist_unlink_data_done, req);
}


/* The link file's unlink on the hashed subvolume answered: an error
 * there changed nothing and goes up; else the data goes. */
static void
dist_unlink_link_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);

    if (r->status == 0) {
        atomic_store(&local->is_name_gone, true);
    } else if (!dist_unlink_is_stale(r->status)) {
        dist_entry_unwind(req, r->status);
        return;
    }
    dist_unlink_data(req->xl, req);
}


/* Data on cached; when the name hashes elsewhere, its link file there
 * first, then the data: a failure of either leaves the name as it was
 * (the link file made again if the data's unlink fails). Removed in one
 * parallel round, a failed link-file unlink left a stale link file
 * after a successful answer (the name then EEXIST on the next create
 * there), and a failed data unlink left data no lookup found. */
static void
dist_unlink_known(vl_xlator_t *xl, vl_req_t *req, int cached, int hashed)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    vl_req_t *r;

    local->subvol = cached;
    local->subvol2 = hashed;
    local->status2 = -EIO;
    if (hashed < 0 || hashed == cached || !dist_is_up(xl, (unsigned)hashed)) {
        dist_unlink_data(xl, req);
        return;
    }
    r = vl_req_child(req, xl->children[hashed]);
    if (r == NULL) {
        dist_entry_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(r, dist_unlink_link_done, req);
}


void
dist_unlink(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_unlink_args *a = VL_ARGS(req, unlink);
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    int cached, hashed;

    atomic_store(&local->is_name_gone, false);
    hashed = dist_hashed_subvol(xl, a->loc.parent, a->loc.name, NULL);
    if (hashed == -ESTALE) {
        dist_with_parent_layout(xl, req, a->loc.parent, dist_unlink);
        return;
    }
    cached = a->loc.inode != NULL ? dist_ictx_cached(xl, a->loc.inode) : -1;
    if (cached < 0 || !dist_is_up(xl, (unsigned)cached)
        || (hashed >= 0 && hashed != cached
            && !dist_is_up(xl, (unsigned)hashed))) {
        dist_unlink_all(xl, req);
        return;
    }
    dist_unlink_known(xl, req, cached, hashed);
}
