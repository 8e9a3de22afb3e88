/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-arbiter: what a transaction checks when the last child is an
 * arbiter (option arbiter-count 1; doc/replicate.md "Arbiter").
 *
 * The arbiter takes part in every transaction and keeps records like the
 * other children, but its copy holds no data, so a change must never
 * leave it the only copy that is both good and changed. A transaction
 * learns which data copies are good from its own pre-op (rep-txn.c,
 * local->good: the pre-op xattrop also adds zero to the slot of every
 * child of the transaction, so each answer says, under the transaction's
 * lock, whom that copy blames). A good data copy is one no copy blames
 * for anything
 * (of any kind: reads trust a copy only when it is good for data and
 * metadata, or entries and metadata, at once; a metadata change on a
 * copy with stale data would leave no copy good for both). Then:
 *
 *   - no data child of the pre-op is unblamed (the only up data copy is
 *     stale, or none is up): the change is refused with ENOTCONN before
 *     any child sees it (GlusterFS's arbiter answers ENOTCONN too), and
 *     the post-op undoes the pre-op;
 *   - after the fop, a success on the arbiter alone is no success: the
 *     data children's error is the answer and nothing is blamed (the
 *     arbiter stored nothing of a data change; a metadata change that
 *     only it accepted fails on the others for a reason of the caller's);
 *   - a success that reached no good data copy (it failed on them in the
 *     meantime) is answered ENOTCONN; the records say what happened.
 *
 * Eager batches keep the good set of their pre-op (rep_eager.good) and
 * refuse a batch write that could reach no good data copy (rep-eager.c).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rep.h"


bool
rep_arb_preop_allows(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    if (local->good != 0)
        return true;
    atomic_fetch_add(&rep_priv(xl)->n_arbiter_refused, 1);
    vl_log(xl, VL_LOG_WARNING, "%s refused: no good data copy is "
           "reachable, the arbiter's would be the only one",
           vl_fop_name(req->op));
    return false;
}


void
rep_arb_fop_settle(vl_xlator_t *xl, struct rep_local *local)
{
    rep_mask_t data_ok = rep_data_children(xl, local->fop_ok);

    if (local->fop_ok == 0)
        return;
    if (data_ok == 0) {
        /* The arbiter alone said yes: as if it failed everywhere (the
         * caller answers the data children's error). */
        local->fop_ok = 0;
        return;
    }
    if ((data_ok & local->good) == 0) {
        atomic_fetch_add(&rep_priv(xl)->n_arbiter_refused, 1);
        local->result = -ENOTCONN;
    }
}
