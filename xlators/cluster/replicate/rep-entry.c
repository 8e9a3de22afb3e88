/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-entry: what the entry fops lock and mark. Each locks its name(s)
 * with entrylk in this translator's domain and marks the entry counter of
 * the directory (or directories) holding them, with the name as the
 * directory's granular record when a copy is blamed (a rename within one
 * directory has two names: none is sent, and the brick marks the
 * directory's records full); the transaction itself is rep-txn.c's. The GFID a create, mknod, mkdir or symlink carries is the
 * client's choice and goes unchanged to every child (the args are copied
 * to each child request), so all copies of a new object share it.
 *
 * A brick renames by name. A copy of the old name's directory that
 * missed changes (a brick just back, before the directory's heal) may
 * hold another object under that name, and would move it over the new
 * name and answer success: no record would then say that its copy of
 * the new name's directory is wrong, and the name would keep two GFIDs
 * for ever. Each answer carries the moved object's attributes: a child
 * that moved another object than oldloc.inode, while another child
 * moved that one, is counted as failed, so the post-op blames it for
 * both directories and their heal replaces what it moved. When no child
 * moved oldloc.inode's object, the caller's inode was stale and the
 * names decide (by name, as a single brick would).
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


/* dir is marked, with name as its granular record unless dir holds
 * two names of the fop (then none: its records become full). */
static void
rep_entry_add_mark(struct rep_local *local, vl_inode_t *dir,
                   const char *name)
{
    for (unsigned i = 0; i < local->n_targets; i++)
        if (local->t[i].inode == dir) {
            local->t[i].mark_name = NULL;
            return;
        }
    local->t[local->n_targets].inode = dir;
    local->t[local->n_targets].mark_name = name;
    local->n_targets++;
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
    rep_entry_add_mark(local, loc->parent, loc->name);
    if (loc2 != NULL) {
        int c;

        rep_entry_add_lock(local, loc2);
        rep_entry_add_mark(local, loc2->parent, loc2->name);
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


void
rep_entry_fop_arrive(vl_req_t *req, unsigned idx, const vl_req_t *child)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    const vl_inode_t *meant;

    if (req->op != VL_FOP_RENAME || child == NULL)
        return;
    meant = req->args.rename.oldloc.inode;
    if (meant == NULL || vl_gfid_is_null(&meant->gfid)
        || vl_gfid_is_null(&child->reply.iatt.gfid))
        return; /* nothing to compare */
    if (!vl_gfid_equal(&meant->gfid, &child->reply.iatt.gfid))
        atomic_fetch_or(&local->moved_other, 1u << idx);
}


void
rep_entry_fop_settle(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    const struct vl_rename_args *a = &req->args.rename;
    rep_mask_t wrong;
    char gs[VL_GFID_STR_LEN];

    if (req->op != VL_FOP_RENAME)
        return;
    wrong = atomic_load(&local->moved_other) & local->fop_ok;
    /* Nobody moved the object meant: a stale inode of the caller's. */
    if (wrong == 0 || wrong == local->fop_ok)
        return;
    local->fop_ok &= ~wrong;
    for (unsigned i = 0; i < rep_priv(xl)->n; i++) {
        if (!(wrong & (1u << i)))
            continue;
        local->status[i] = -ESTALE;
        vl_log(xl, VL_LOG_WARNING, "rename %s -> %s: %s moved another "
               "object than %s (a stale copy of the directory): recorded "
               "pending on it", a->oldloc.name, a->newloc.name,
               xl->children[i]->name,
               vl_gfid_to_str(&a->oldloc.inode->gfid, gs));
    }
}
