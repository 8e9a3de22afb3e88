/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-unlink: unlink through distribute.
 *
 * With a known inode (loc->inode whose ctx says where the data is): the
 * data on the cached subvolume and the link file on the hashed one, in
 * parallel; one round trip to one or two bricks. The inode may be stale:
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
 *
 * Intercepts: unlink.
 * Per request: struct dist_local (subvol = cached, subvol2 = hashed,
 *              status2 = the cached subvolume's answer, fan, counters).
 * Threads:    caller's thread and the children's callbacks; no worker.
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
        vl_unwind(req, rc);
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
        vl_unwind(req, -ENOTCONN);
        return;
    }
    /* On the heap, sized by the subvolumes up: this runs on callbacks. */
    rs = vl_calloc(xl, dist_mask_count(up), sizeof(*rs), DIST_MT_FAN);
    if (rs == NULL) {
        vl_unwind(req, -ENOMEM);
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
            vl_unwind(req, -ENOMEM);
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


/* A miss where the inode's ctx said the data is: the name was renamed
 * or replaced by another client since the kernel looked it up. */
static bool
dist_unlink_is_stale(int status)
{
    return status == -ENOENT || status == -ESTALE;
}


static void
dist_unlink_known_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    int status;

    if (r->xl == req->xl->children[local->subvol]) {
        local->status2 = r->status;
        if (r->status == 0)
            vl_reply_move(req, r);
    } else if (r->status == 0) {
        atomic_store(&local->is_name_gone, true);
    }
    if (!vl_fanout_arrive(&local->fan, 0))
        return;
    status = local->status2;
    if (dist_unlink_is_stale(status)) {
        /* The name is somewhere else now (or gone): ask everywhere. The
         * inode's ctx stays: a renamed file's data did not move. */
        dist_unlink_all(req->xl, req);
        return;
    }
    vl_unwind(req, status);
}


/* Data on cached (and the link file on hashed when they differ), in one
 * parallel round. */
static void
dist_unlink_known(vl_xlator_t *xl, vl_req_t *req, int cached, int hashed)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    vl_req_t *r1, *r2 = NULL;
    bool is_both = hashed >= 0 && hashed != cached
                   && dist_is_up(xl, (unsigned)hashed);

    local->subvol = cached;
    local->subvol2 = hashed;
    local->status2 = -EIO;
    r1 = vl_req_child(req, xl->children[cached]);
    if (is_both)
        r2 = vl_req_child(req, xl->children[hashed]);
    if (r1 == NULL || (is_both && r2 == NULL)) {
        if (r1 != NULL)
            vl_req_free_unwound(r1);
        if (r2 != NULL)
            vl_req_free_unwound(r2);
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_fanout_begin(&local->fan, is_both ? 2 : 1);
    vl_wind(r1, dist_unlink_known_done, req);
    if (is_both)
        vl_wind(r2, dist_unlink_known_done, req);
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
