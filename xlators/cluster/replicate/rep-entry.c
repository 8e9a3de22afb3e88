/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-entry: what the entry fops lock and mark. Each locks its name(s)
 * with entrylk in this translator's domain and marks the entry counter of
 * the directory (or directories) holding them; the transaction itself is
 * rep-txn.c's. The GFID a create, mknod, mkdir or symlink carries is the
 * client's choice and goes unchanged to every child (the args are copied
 * to each child request), so all copies of a new object share it.
 *
 * Intercepts: mknod, mkdir, unlink, rmdir, symlink, rename, link, create.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rep.h"


static void
rep_entry_add_lock(struct rep_local *local, const struct vl_loc *loc)
{
    struct rep_txn_target *t = &local->lk[local->n_lk++];

    t->lk_parent = loc->parent;
    t->lk_name = loc->name;
}


static void
rep_entry_add_mark(struct rep_local *local, vl_inode_t *dir)
{
    for (unsigned i = 0; i < local->n_targets; i++)
        if (local->t[i].inode == dir)
            return;
    local->t[local->n_targets++].inode = dir;
}


/* Rename's two names are locked in one order on every client (parent
 * GFID, then name), so two renames crossing each other cannot deadlock. */
static int
rep_entry_cmp(const struct rep_txn_target *a, const struct rep_txn_target *b)
{
    int c = memcmp(a->lk_parent->gfid.bytes, b->lk_parent->gfid.bytes,
                   sizeof(a->lk_parent->gfid.bytes));

    return c != 0 ? c : strcmp(a->lk_name, b->lk_name);
}


void
rep_txn_entry(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    const struct vl_loc *loc = NULL, *loc2 = NULL;

    if (!vl_req_entry_locs(req, &loc, &loc2) || loc == NULL
        || loc->parent == NULL || loc->name == NULL
        || (loc2 != NULL && (loc2->parent == NULL || loc2->name == NULL))) {
        vl_unwind(req, -EINVAL);
        return;
    }
    local->n_lk = 0;
    local->n_targets = 0;
    rep_entry_add_lock(local, loc);
    rep_entry_add_mark(local, loc->parent);
    if (loc2 != NULL) {
        int c;

        rep_entry_add_lock(local, loc2);
        rep_entry_add_mark(local, loc2->parent);
        c = rep_entry_cmp(&local->lk[0], &local->lk[1]);
        if (c == 0) {
            local->n_lk = 1; /* a rename onto its own name */
        } else if (c > 0) {
            struct rep_txn_target tmp = local->lk[0];

            local->lk[0] = local->lk[1];
            local->lk[1] = tmp;
        }
    }
    rep_txn_entry_begin(xl, req);
}
