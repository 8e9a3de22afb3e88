/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-exchange: rename with RENAME_EXCHANGE through distribute.
 *
 * Both names are found first (each looked up on every up subvolume).
 * Two files (any non-directories) whose data is on one subvolume S: one
 * renameat2(RENAME_EXCHANGE) on S swaps them; that is the commit point,
 * atomic, and open fds stay valid (the data never moves). Then each name
 * hashing to another subvolume H gets the link file of the file it names
 * now: made under a temporary hidden name on H (a hard link of that
 * file's link file when H has one already) and renamed over the name's
 * old link file, so a lookup of the name finds a link file at every
 * moment (the old one leads to S too, where the name is now the other
 * file: lookup answers with what S holds). A crash before that rename
 * leaves the temporary: never listed (a link file), removed by rmdir
 * and by the next rebalance (mortarfsd/rebalance/rebalance-list.c,
 * which knows DIST_XCHG_PREFIX by value).
 * Two directories: exchanged on every subvolume in parallel (all must be
 * up), exchanged back where done if one fails. Each brick's exchange is
 * atomic, the whole is not (as for a directory rename).
 * EXDEV where no single atomic step exists: two files with data on
 * different subvolumes (the data would have to move), or a file and a
 * directory (one lives on one subvolume, the other on all).
 *
 * Intercepts: rename with RENAME_EXCHANGE (dist_rename hands it over).
 * Per request: nothing of its own (struct dist_local as every fop).
 * Threads:    dist-worker.c threads.
 */
#include "config.h"

#include <errno.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* Temporary names of the new link files ("." first: hidden from ls -a
 * anyway, as link files are never listed). */
#define DIST_XCHG_PREFIX ".mortar-xchg-"


/* Makes name (in parent, hashed to h) the link file of gfid, whose data
 * is on s: a link file under a temporary name on h, renamed over the
 * name. A failure only costs a lookup later (the old link file still
 * leads to s): logged. */
static void
dist_xchg_relink(vl_xlator_t *xl, vl_req_t *req, int h, int s,
                 vl_inode_t *parent, const char *name, const vl_gfid_t *gfid)
{
    char tmp[sizeof(DIST_XCHG_PREFIX) + VL_GFID_STR_LEN];
    char str[VL_GFID_STR_LEN];
    vl_gfid_t rnd;
    union vl_fop_args a;
    struct dist_call call;
    int rc;

    vl_gfid_generate(&rnd); /* random: no two requests share the name */
    snprintf(tmp, sizeof(tmp), DIST_XCHG_PREFIX "%s",
             vl_gfid_to_str(&rnd, str));
    rc = dist_linkfile_create(xl, req, h, s, parent, tmp, gfid);
    if (rc == 0) {
        memset(&a, 0, sizeof(a));
        a.rename.oldloc.parent = parent;
        a.rename.oldloc.name = tmp;
        a.rename.newloc.parent = parent;
        a.rename.newloc.name = name;
        rc = dist_call_sync(xl, req, (unsigned)h, VL_FOP_RENAME, &a, &call);
        vl_reply_clear(&call.reply);
        if (rc != 0)
            dist_unlink_at(xl, req, h, parent, tmp);
    }
    if (rc != 0)
        vl_log(xl, VL_LOG_WARNING, "exchange: link file of %s on %s: %s "
               "(lookup will find the data)", name, xl->children[h]->name,
               strerror(-rc));
}


/* Both directories: every subvolume, in parallel; undone where done when
 * one fails. */
static void
dist_xchg_dirs(vl_xlator_t *xl, vl_req_t *req)
{
    union vl_fop_args *args = NULL;
    struct dist_call *calls = NULL;
    struct dist_rename_lock lk = {.at = {-1, -1}};
    unsigned n = dist_priv(xl)->n;
    dist_mask_t up = dist_up_mask(xl), done = dist_mask_none();
    int rc = 0, first = -1;

    if (!dist_mask_equal(up, dist_mask_all(n))) {
        dist_entry_unwind(req, -ENOTCONN); /* a copy would keep the old names */
        return;
    }
    args = dist_args_new(xl);
    calls = dist_calls_new(xl);
    if (args == NULL || calls == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    /* A directory rename onto either name waits (dist_rename_lock). */
    rc = dist_rename_lock(xl, req, &lk);
    if (rc != 0)
        goto out;
    for (unsigned i = 0; i < n; i++)
        args[i] = req->args;
    dist_fan_sync(xl, req, up, VL_FOP_RENAME, args, calls);
    for (unsigned i = 0; i < n; i++) {
        if (calls[i].status == 0) {
            dist_mask_set(&done, i);
            if (first < 0)
                first = (int)i;
        } else if (rc == 0) {
            rc = calls[i].status;
        }
    }
    if (rc == 0) {
        vl_reply_clear(&req->reply);
        req->reply = calls[first].reply; /* moved */
        memset(&calls[first].reply, 0, sizeof(calls[first].reply));
    }
    dist_calls_clear(calls, n);
    if (rc != 0 && !dist_mask_is_empty(done)) {
        /* The same exchange again swaps them back. */
        dist_fan_sync(xl, req, done, VL_FOP_RENAME, args, calls);
    }
out:
    dist_rename_unlock(xl, req, &lk);
    vl_free(args);
    dist_calls_free(calls, n);
    dist_entry_unwind(req, rc);
}


/* The file's inode (if this graph knows it) learns where it is now. */
static void
dist_xchg_set_ctx(vl_xlator_t *xl, const vl_gfid_t *gfid, int s, int h)
{
    vl_inode_t *inode = vl_inode_find(xl->graph->itable, gfid);

    if (inode == NULL)
        return;
    if (h < 0)
        h = s;
    dist_ictx_set_file(xl, inode, s, h, h != s);
    vl_inode_unref(inode);
}


void
dist_exchange_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    struct vl_loc oloc = {.parent = a->oldloc.parent, .name = a->oldloc.name};
    struct vl_loc nloc = {.parent = a->newloc.parent, .name = a->newloc.name};
    struct vl_iatt oia, nia;
    int os = -1, ns = -1, oh, nh, rc;

    rc = dist_find_file_sync(xl, req, &oloc, &os, &oia);
    if (rc == 0)
        rc = dist_find_file_sync(xl, req, &nloc, &ns, &nia);
    if (rc != 0) {
        dist_entry_unwind(req, rc);
        return;
    }
    if (S_ISDIR(oia.mode) && S_ISDIR(nia.mode)) {
        dist_xchg_dirs(xl, req);
        return;
    }
    if (S_ISDIR(oia.mode) || S_ISDIR(nia.mode) || os != ns) {
        dist_entry_unwind(req, -EXDEV); /* no single atomic step does it */
        return;
    }
    oh = dist_hashed_subvol_sync(xl, req, a->oldloc.parent, a->oldloc.name);
    nh = dist_hashed_subvol_sync(xl, req, a->newloc.parent, a->newloc.name);
    if ((oh >= 0 && oh != os && !dist_is_up(xl, (unsigned)oh))
        || (nh >= 0 && nh != os && !dist_is_up(xl, (unsigned)nh))) {
        dist_entry_unwind(req, -ENOTCONN); /* a link file could not follow */
        return;
    }
    /* The commit point. */
    rc = dist_child_sync(xl, req, (unsigned)os);
    if (rc != 0) {
        dist_entry_unwind(req, rc == -ENOENT ? -ESTALE : rc);
        return;
    }
    if (!vl_gfid_equal(&req->reply.iatt.gfid, &oia.gfid)) {
        /* Another client changed a name since the lookups: swap back;
         * the kernel looks the names up again on ESTALE. */
        struct dist_call call;

        dist_call_sync(xl, req, (unsigned)os, VL_FOP_RENAME, &req->args,
                       &call);
        vl_reply_clear(&call.reply);
        vl_reply_clear(&req->reply);
        dist_entry_unwind(req, -ESTALE);
        return;
    }
    if (!vl_gfid_equal(&oia.gfid, &nia.gfid)) {
        /* Old name -> the new name's file, and the other way round. */
        if (oh >= 0 && oh != os)
            dist_xchg_relink(xl, req, oh, os, a->oldloc.parent,
                             a->oldloc.name, &nia.gfid);
        if (nh >= 0 && nh != os)
            dist_xchg_relink(xl, req, nh, os, a->newloc.parent,
                             a->newloc.name, &oia.gfid);
        dist_xchg_set_ctx(xl, &oia.gfid, os, nh);
        dist_xchg_set_ctx(xl, &nia.gfid, os, oh);
    }
    dist_entry_unwind(req, 0);
}
