/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-cpd: the bookkeeping of compound requests in a transaction
 * (rep-txn.c, doc/replicate.md "Compound requests"): which lock item
 * carries which marked object's (target's) pre-op and release, whether
 * a transaction's targets can all ride on locks of their own, what a
 * contended or quorum-less try must undo per target, and which unlocks
 * the post-ops carry. Functions of struct rep_local alone; the requests
 * are rep-txn.c's.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>

#include "rep.h"


/* The lock item whose try carries target t's pre-op and whose release
 * t's post-op carries: item 0 for one target (the first of a rename's
 * two names in one directory); across directories, the item whose name
 * is in t. -1: none. */
int
rep_cpd_target_item(const struct rep_local *local, unsigned t)
{
    if (local->n_targets == 1)
        return t == 0 ? 0 : -1;
    for (unsigned k = 0; k < local->n_lk; k++)
        if (local->is_entry && local->lk[k].lk_parent == local->t[t].inode)
            return (int)k;
    return -1;
}


/* The target whose pre-op lock item k carries, or -1. */
int
rep_cpd_item_target(const struct rep_local *local, unsigned k)
{
    for (unsigned t = 0; t < local->n_targets; t++)
        if (rep_cpd_target_item(local, t) == (int)k)
            return (int)t;
    return -1;
}


/* Every target's pre-op can ride on a lock item of its own. */
bool
rep_cpd_can_carry(const struct rep_local *local)
{
    if (local->n_targets == 1)
        return true;
    return local->n_targets == 2 && local->n_lk == 2
           && rep_cpd_target_item(local, 0) >= 0
           && rep_cpd_target_item(local, 1) >= 0
           && rep_cpd_target_item(local, 0) != rep_cpd_target_item(local, 1);
}


/* Children that took every target's carried pre-op, and (undo_part) the
 * ones that took only some: a contended or quorum-less try undoes what
 * each applied (the post-op with fop_ok 0). */
void
rep_cpd_undo_prepare(struct rep_local *local)
{
    rep_mask_t all = local->all;

    for (unsigned t = 0; t < local->n_targets; t++)
        all &= atomic_load(&local->cpd_done[t]);
    local->preop_ok = all;
    local->fop_ok = 0;
    for (unsigned t = 0; t < local->n_targets; t++)
        local->undo_part[t] = atomic_load(&local->cpd_done[t]) & ~all;
}


bool
rep_cpd_any_done(struct rep_local *local)
{
    for (unsigned t = 0; t < local->n_targets; t++)
        if (atomic_load(&local->cpd_done[t]) != 0)
            return true;
    return false;
}


rep_mask_t
rep_cpd_any_bad(struct rep_local *local)
{
    rep_mask_t bad = 0;

    for (unsigned t = 0; t < local->n_targets; t++)
        bad |= atomic_load(&local->cpd_bad[t]);
    return bad;
}


/* Each target's post-op carries the release of the lock item whose try
 * carried its pre-op (rep_cpd_target_item) to the children holding it
 * (compound post-op + unlock): is_unlocking[t] and held[t] say to whom. */
void
rep_cpd_postop_unlocks(vl_xlator_t *xl, struct rep_local *local,
                       bool is_postop,
                       bool is_unlocking[REP_TXN_MAX_TARGETS],
                       rep_mask_t held[REP_TXN_MAX_TARGETS])
{
    for (unsigned t = 0; t < REP_TXN_MAX_TARGETS; t++) {
        struct vl_xattrop_unlock *ul = &local->cpd_unlock[t];
        int k = t < local->n_targets ? rep_cpd_target_item(local, t) : -1;

        is_unlocking[t] = is_postop && k >= 0
                          && local->lk_held[k] != 0;
        held[t] = is_unlocking[t] ? local->lk_held[k] : 0;
        if (!is_unlocking[t])
            continue;
        memset(ul, 0, sizeof(*ul));
        ul->is_entry = local->is_entry;
        ul->domain = xl->name;
        if (local->is_entry) {
            ul->loc.parent = local->lk[k].lk_parent;
            ul->loc.name = local->lk[k].lk_name;
            ul->type = F_WRLCK;
        } else {
            ul->loc.inode = local->lk[k].inode;
            ul->flock.whence = SEEK_SET;
        }
    }
}
