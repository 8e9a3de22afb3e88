/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-arbiter: what a transaction checks when the last child is an
 * arbiter (option arbiter-count 1; doc/replicate.md "Arbiter").
 *
 * The arbiter takes part in every transaction and keeps records like the
 * other children, but its copy holds no data, so a change must never
 * leave it the only copy that is both good and changed. A transaction
 * learns which data copies are good from its own pre-op: the pre-op
 * xattrop also adds zero to the slot of every data child of the
 * transaction, so each answer says, under the transaction's lock, whom
 * that copy blames. A good data copy is one no copy blames for anything
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


uint32_t
rep_arb_preop_keys(vl_xlator_t *xl, struct rep_local *local, uint32_t n_keys)
{
    struct rep_priv *priv = rep_priv(xl);
    rep_mask_t data = rep_data_children(xl, local->txn);

    atomic_store(&local->arb_blamed, 0);
    for (unsigned j = 0; j < priv->n; j++) {
        if (!(data & (1u << j)))
            continue;
        /* x_buf rows past n_keys are zeroed by rep_txn_records. */
        local->x_names[n_keys] = priv->keys[j];
        local->x_values[n_keys] = local->x_buf[n_keys];
        local->x_sizes[n_keys] = REP_RECORD_SIZE;
        n_keys++;
    }
    return n_keys;
}


void
rep_arb_preop_answer(vl_xlator_t *xl, vl_req_t *req, unsigned idx,
                     vl_req_t *child)
{
    struct rep_priv *priv = rep_priv(xl);
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    const struct vl_xattrop_args *a = VL_ARGS(child, xattrop);
    const uint8_t *v = (const uint8_t *)child->reply.xattr;
    rep_mask_t blamed = 0;

    if (v == NULL || child->reply.xattr_len != a->n * REP_RECORD_SIZE) {
        vl_log(xl, VL_LOG_WARNING, "pre-op answer of %s: %u bytes, "
               "expected %u", xl->children[idx]->name,
               child->reply.xattr_len, a->n * REP_RECORD_SIZE);
        return;
    }
    for (uint32_t k = 0; k < a->n; k++, v += REP_RECORD_SIZE) {
        for (unsigned j = 0; j < priv->n; j++) {
            /* Only the zero-added keys of data children in the
             * transaction: the others carry this pre-op's own +1. */
            if (a->names[k] != priv->keys[j] || j == idx
                || !(rep_data_children(xl, local->txn) & (1u << j)))
                continue;
            for (unsigned kind = 0; kind < REP_N_KINDS; kind++)
                if (rep_record_get(v, kind) > 0)
                    blamed |= 1u << j;
        }
    }
    if (blamed != 0)
        atomic_fetch_or(&local->arb_blamed, blamed);
}


bool
rep_arb_preop_allows(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    local->arb_good = rep_data_children(xl, local->preop_ok)
                      & ~atomic_load(&local->arb_blamed);
    if (local->arb_good != 0)
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
    if ((data_ok & local->arb_good) == 0) {
        atomic_fetch_add(&rep_priv(xl)->n_arbiter_refused, 1);
        local->result = -ENOTCONN;
    }
}
