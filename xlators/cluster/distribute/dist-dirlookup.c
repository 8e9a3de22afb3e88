/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-dirlookup: the lookup of a known directory (the kernel revalidating
 * it once its entry timed out, or the root) without a worker thread.
 *
 * Every up subvolume is asked at once, the layout xattr with each lookup,
 * from the caller's thread; the last answer checks what dist_dir_sync
 * would: every subvolume up and answering the same directory, each copy
 * with a layout, the layout without hole or overlap. Then it merges the
 * copies' attributes, keeps the layout and answers, on that callback.
 * Anything else (a copy missing or of another GFID, a subvolume down, a
 * layout to read by getxattr or to repair, not a directory any more)
 * hands the request to a worker, whose dist_dir_sync asks again and
 * heals: one more round for the rare case.
 *
 * Why: through a worker, a directory lookup also cost the hand-off to
 * the worker, the worker's wait for the fan-out and its wake-up, each a
 * futex wake and two context switches on a 2-core machine. 500 rmdirs
 * of directories made more than a second earlier (each after a LOOKUP):
 * 1,078 and 1,117 per second with the worker, 1,283 and 1,201 without
 * (one A/B; the LOOKUP itself is two rounds either way, about 300 us).
 *
 * The same after a named lookup found a directory on the name's hashed
 * subvolume (the GFID every copy must have is that copy's): the first
 * lookup of a directory's name, or again once the kernel's entry timed
 * out, costs two rounds and no worker.
 *
 * Per request: struct dist_dirlk in dist_local.mk, from the wind of the
 *              round to the last answer.
 * Threads:     caller's thread (wind), children's callbacks (answer).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"

struct dist_dirlk;

/* One child's cookie: where its answer goes. */
struct dist_dirlk_slot {
    vl_req_t *req;          /* the caller's request */
    struct dist_dirlk *dl;  /* its state */
    unsigned i;             /* the child's subvolume */
};

struct dist_dirlk {
    vl_gfid_t gfid;                   /* the directory every copy must be */
    struct dist_call *calls;          /* per subvolume; owned */
    dist_mask_t asked;                /* subvolumes asked */
    struct dist_dirlk_slot slots[];   /* per subvolume */
};


static void
dist_dirlk_free(vl_xlator_t *xl, struct dist_dirlk *dl)
{
    if (dl == NULL)
        return;
    dist_calls_free(dl->calls, dist_priv(xl)->n);
    vl_free(dl);
}


/* The answers of the round are all in: answer here if all is well.
 * true when answered. */
static bool
dist_dirlk_answer(vl_xlator_t *xl, vl_req_t *req, struct dist_dirlk *dl)
{
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    unsigned n = dist_priv(xl)->n;
    const struct dist_call *lk = dl->calls;
    struct dist_anomalies an;
    struct dist_layout *l;
    struct vl_iatt iatt;
    dist_mask_t missing;

    if (!dist_mask_equal(dl->asked, dist_mask_all(n)))
        return false; /* a subvolume down: its copy is marked there */
    for (unsigned i = 0; i < n; i++)
        if (lk[i].status != 0 || !S_ISDIR(lk[i].reply.iatt.mode)
            || !vl_gfid_equal(&lk[i].reply.iatt.gfid, &dl->gfid))
            return false;
    missing = dist_dir_merge(lk, n, dl->asked, 0, &iatt);
    if (!dist_mask_is_empty(missing))
        return false;
    l = dist_layout_new(xl, n);
    if (l == NULL)
        return false;
    if (!dist_mask_is_empty(dist_layout_from_lookups(lk, n, l))
        || dist_layout_check(l, &an)) {
        vl_free(l);
        return false;
    }
    dist_layout_store(xl, &a->loc, &iatt.gfid, l);
    vl_free(l);
    /* Every copy answered: the whole view of the directory's times. */
    dist_dir_times_settle_loc(xl, &a->loc, &iatt, true);
    vl_reply_clear(&req->reply);
    req->reply.iatt = iatt;
    atomic_fetch_add(&dist_priv(xl)->n_dir_lookups_fast, 1);
    vl_unwind(req, 0);
    return true;
}


static void
dist_dirlk_done(vl_req_t *r, void *cookie)
{
    struct dist_dirlk_slot *slot = cookie;
    vl_req_t *req = slot->req;
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct dist_dirlk *dl = slot->dl;
    vl_xlator_t *xl = req->xl;

    dl->calls[slot->i].status = r->status;
    dl->calls[slot->i].reply = r->reply; /* moved: the core frees nothing */
    memset(&r->reply, 0, sizeof(r->reply));
    if (!vl_fanout_arrive(&local->fan, r->status))
        return;
    local->mk = NULL;
    if (dist_dirlk_answer(xl, req, dl)) {
        dist_dirlk_free(xl, dl);
        return;
    }
    dist_dirlk_free(xl, dl);
    dist_task_or_unwind(xl, req, dist_lookup_dir_task);
}


void
dist_lookup_dir(vl_xlator_t *xl, vl_req_t *req, const vl_gfid_t *gfid)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    unsigned n = dist_priv(xl)->n;
    dist_mask_t up = dist_up_mask(xl);
    struct dist_dirlk *dl;
    vl_req_t **rs = NULL;
    int k, j;

    dl = vl_calloc(xl, 1, sizeof(*dl) + n * sizeof(dl->slots[0]),
                   DIST_MT_FAN);
    if (dl != NULL)
        dl->calls = dist_calls_new(xl);
    k = dl != NULL && dl->calls != NULL ? dist_round_reqs(xl, req, up, &rs)
                                        : -ENOMEM;
    if (k <= 0) {
        /* Nothing up, or no memory: the worker path says which. */
        dist_dirlk_free(xl, dl);
        dist_task_or_unwind(xl, req, dist_lookup_dir_task);
        return;
    }
    dl->asked = up;
    dl->gfid = *gfid;
    for (unsigned i = 0; i < n; i++)
        dl->calls[i].status = -ENOTCONN;
    local->mk = dl;
    vl_fanout_begin(&local->fan, k);
    j = 0;
    for (unsigned i = 0; i < n; i++) {
        struct vl_lookup_args *ca;

        if (!dist_mask_test(up, i))
            continue;
        dl->slots[i] = (struct dist_dirlk_slot){.req = req, .dl = dl, .i = i};
        ca = VL_ARGS(rs[j], lookup);
        memset(ca, 0, sizeof(*ca));
        ca->loc = a->loc;
        /* The layout comes with the lookup: one round. */
        ca->xattr_name = DIST_XATTR_LAYOUT;
        j++;
    }
    j = 0;
    for (unsigned i = 0; i < n; i++)
        if (dist_mask_test(up, i))
            vl_wind(rs[j++], dist_dirlk_done, &dl->slots[i]);
    vl_free(rs);
}
