/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-mkdir: mkdir and rmdir through distribute.
 *
 * mkdir: on the hashed subvolume, then on every other up one in parallel,
 *   same GFID; each copy gets its layout range in the mkdir itself (two
 *   rounds); a failure undoes the created copies.
 * rmdir: on every subvolume but the hashed one in parallel, then on the
 *   hashed one; ENOTEMPTY anywhere (or an error) recreates the removed
 *   copies from the hashed one (a copy holding only link files is
 *   emptied first, once no copy was found holding anything else).
 * Both run their common case without a worker thread: the rounds are
 *   wound from the caller's thread and from the children's callbacks, and
 *   the last answer of a round unwinds. Only an unusual answer (a stale
 *   copy, ENOTEMPTY, an error to undo) hands the request to a worker
 *   (dist-worker.c), which continues from the round's results: on a
 *   2-core machine each hand-off and each wait of a worker for a round
 *   was a futex wake and two context switches per directory.
 *
 * Intercepts: mkdir, rmdir.
 * Per request: struct dist_local (fan, mask_ok, mask_more, hard_err,
 *              err_subvol; mk: mkdir's struct dist_mkdir_state).
 * Threads:    caller's thread, children's callbacks, dist-worker.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist.h"

/* An async mkdir's state (dist_local.mk), from its start to its answer;
 * one allocation sized by the subvolumes. */
struct dist_mkdir_state {
    struct dist_layout *layout; /* owned until given to the inode */
    dist_mask_t up;             /* subvolumes up when it started */
    int hashed;                 /* the name's hashed subvolume */
    atomic_uint n_leased;       /* copies made with a lease granted */
    /* Each subvolume's range, encoded: the child requests borrow it. */
    unsigned char vals[][DIST_LAYOUT_SIZE];
};


/* Starts an async round's bookkeeping. */
static void
dist_round_begin(struct dist_local *local, dist_mask_t ok, int n)
{
    dist_amask_store(&local->mask_ok, ok);
    dist_amask_store(&local->mask_more, dist_mask_none());
    atomic_store(&local->hard_err, 0);
    atomic_store(&local->err_subvol, -1);
    atomic_store(&local->has_reply, false);
    vl_fanout_begin(&local->fan, n);
}


/* Notes child answer r of an async round: 0 in mask_ok, more_st in
 * mask_more, ignore_st nowhere, anything else as the round's hard error
 * (the first one, with its subvolume). */
static void
dist_round_note(vl_req_t *req, vl_req_t *r, int more_st, int ignore_st)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    /* r->xl is whoever answered: a translator between distribute and
     * the subvolume may have passed r down. */
    int i = dist_subvol_below(req->xl, r->xl);
    int st = r->status;
    int zero = 0;

    if (i < 0 && st == 0)
        st = -EIO; /* cannot happen: not one of ours */
    if (st == 0)
        dist_amask_set(&local->mask_ok, (unsigned)i);
    else if (st == more_st && i >= 0)
        dist_amask_set(&local->mask_more, (unsigned)i);
    else if (st != ignore_st
             && atomic_compare_exchange_strong(&local->hard_err, &zero, st))
        atomic_store(&local->err_subvol, i);
}


/* Creates one child request per subvolume in mask, in ascending index
 * order, into *out (allocated, the caller frees it; NULL when none); the
 * number made, or -ENOMEM (nothing made). Runs on callbacks: the array is
 * on the heap, not the stack. */
int
dist_round_reqs(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask,
                vl_req_t ***out /* OUT */)
{
    unsigned n = dist_priv(xl)->n;
    unsigned n_reqs = dist_mask_count(mask);
    vl_req_t **rs;
    int k = 0;

    *out = NULL;
    if (n_reqs == 0)
        return 0;
    rs = vl_calloc(xl, n_reqs, sizeof(*rs), DIST_MT_FAN);
    if (rs == NULL)
        return -ENOMEM;
    for (unsigned i = 0; i < n; i++) {
        if (!dist_mask_test(mask, i))
            continue;
        rs[k] = vl_req_child(req, xl->children[i]);
        if (rs[k] == NULL) {
            while (k > 0)
                vl_req_free_unwound(rs[--k]);
            vl_free(rs);
            return -ENOMEM;
        }
        k++;
    }
    *out = rs;
    return k;
}


/* ---- mkdir ---- */

/* Removes the copies in mask again (a failed mkdir). */
static void
dist_rmdir_mask(vl_xlator_t *xl, vl_req_t *req, const struct vl_loc *loc,
                dist_mask_t mask)
{
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = dist_calls_new(xl);
    unsigned n = dist_priv(xl)->n;

    if (args == NULL || calls == NULL) {
        /* As after a crash mid-mkdir: lookup's heal completes them. */
        vl_log(xl, VL_LOG_WARNING, "mkdir %s failed; its copies stay: %s",
               loc->name, strerror(ENOMEM));
        goto out;
    }
    for (unsigned i = 0; i < n; i++) {
        args[i].rmdir.loc.parent = loc->parent;
        args[i].rmdir.loc.name = loc->name;
    }
    dist_fan_sync(xl, req, mask, VL_FOP_RMDIR, args, calls);
out:
    vl_free(args);
    dist_calls_free(calls, n);
}


/* The layout of a new directory on the stale copies in mask (EEXIST in
 * the mkdir round: they did not get it with the mkdir); one parallel
 * round, only when such copies exist. 0 or the first error. */
static int
dist_mkdir_layout(vl_xlator_t *xl, vl_req_t *req, const vl_gfid_t *gfid,
                  unsigned char (*vals)[DIST_LAYOUT_SIZE], dist_mask_t mask)
{
    union vl_fop_args *args = NULL;
    struct dist_call *calls = NULL;
    unsigned n = dist_priv(xl)->n;
    vl_inode_t *tmp = NULL;
    int rc = -ENOMEM;

    if (dist_mask_is_empty(mask))
        return 0;
    args = dist_args_new(xl);
    calls = dist_calls_new(xl);
    if (args != NULL && calls != NULL)
        tmp = dist_inode_for_gfid(xl, gfid, S_IFDIR);
    if (tmp == NULL)
        goto out;
    rc = 0;
    for (unsigned i = 0; i < n; i++) {
        args[i].setxattr.loc.inode = tmp;
        args[i].setxattr.name = DIST_XATTR_LAYOUT;
        args[i].setxattr.value = vals[i];
        args[i].setxattr.size = DIST_LAYOUT_SIZE;
    }
    dist_fan_sync(xl, req, mask, VL_FOP_SETXATTR, args, calls);
    vl_inode_unref(tmp);
    for (unsigned i = 0; i < n; i++)
        if (dist_mask_test(mask, i) && calls[i].status != 0 && rc == 0)
            rc = calls[i].status;
out:
    vl_free(args);
    dist_calls_free(calls, n);
    return rc;
}


/* The mkdir request for subvolume i: the caller's, plus i's range of the
 * new layout as the xattr storage/posix sets before answering. */
static void
dist_mkdir_args_for(const vl_req_t *req, unsigned i,
                    unsigned char (*vals)[DIST_LAYOUT_SIZE],
                    union vl_fop_args *out /* OUT */)
{
    *out = req->args;
    out->mkdir.xattr_name = DIST_XATTR_LAYOUT;
    out->mkdir.xattr_value = vals[i];
    out->mkdir.xattr_size = DIST_LAYOUT_SIZE;
}


/* Two rounds. The hashed subvolume first: it decides between concurrent
 * mkdirs of one name (the loser gets EEXIST there and touches nothing
 * else, so a directory never has two GFIDs). Then every other up
 * subvolume in one parallel round. Each copy is made with its range of
 * the layout (default, generation 1, COMMITTED) in the mkdir itself, set
 * by storage/posix before the copy's GFID: no copy made here is ever seen
 * without its layout. A stale copy (EEXIST away from the hashed one) gets
 * its range in a third round, only then, on a worker (dist_mkdir_task).
 * The common case runs on the callbacks: dist_mkdir_start winds the
 * hashed mkdir, dist_mkdir_hashed_done the others, dist_mkdir_rest_done
 * answers. */

static void
dist_mkdir_state_free(struct dist_local *local)
{
    struct dist_mkdir_state *mk = local->mk;

    if (mk == NULL)
        return;
    vl_free(mk->layout);
    vl_free(mk);
    local->mk = NULL;
}


/* All copies made: the layout goes to the inode, the caller is answered
 * (req->reply holds the hashed copy's attributes and postparent). */
static void
dist_mkdir_finish(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct dist_mkdir_state *mk = local->mk;
    unsigned n = dist_priv(xl)->n;

    for (unsigned i = 0; i < n; i++)
        if (!dist_mask_test(mk->up, i))
            mk->layout->r[i].err = -ENOTCONN;
    dist_ictx_set_layout(xl, VL_ARGS(req, mkdir)->loc.inode, mk->layout);
    mk->layout = NULL;
    /* The directory is leased only if every brick holds a copy made by
     * this mkdir under a lease: a copy missing or made by someone else
     * could take names we would not hear about. */
    req->reply.is_leased = atomic_load(&mk->n_leased) == n;
    dist_mkdir_state_free(local);
    dist_entry_unwind(req, 0);
}


/* A stale copy's layout answered ESTALE (its GFID has no handle on that
 * brick): retries, waiting 1, 2, 4 ... 32 ms between them (63 ms in all).
 * The copy may be another client's heal of this very directory, made by
 * a lookup between our two rounds and still between its GFID and its
 * handle (microseconds); removing everything then left that copy alone
 * on a brick that does not hold the name: the directory was gone for
 * both clients. A copy that is another directory keeps answering ESTALE
 * and the mkdir is undone as before, 63 ms later. */
#define DIST_MKDIR_STALE_TRIES 6

/* Worker: the second round had a stale copy (EEXIST: it gets the layout
 * in a third round) or an error (the copies made are removed again). */
static void
dist_mkdir_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct dist_mkdir_state *mk = local->mk;
    struct vl_mkdir_args *a = VL_ARGS(req, mkdir);
    dist_mask_t made = dist_amask_load(&local->mask_ok);
    int rc = atomic_load(&local->hard_err);

    if (rc == 0)
        rc = dist_mkdir_layout(xl, req, &a->gfid, mk->vals,
                               dist_amask_load(&local->mask_more));
    for (int i = 0; rc == -ESTALE && i < DIST_MKDIR_STALE_TRIES; i++) {
        usleep(1000u << i);
        rc = dist_mkdir_layout(xl, req, &a->gfid, mk->vals,
                               dist_amask_load(&local->mask_more));
    }
    if (rc != 0) {
        dist_mkdir_state_free(local);
        dist_rmdir_mask(xl, req, &a->loc, made);
        vl_reply_clear(&req->reply);
        dist_entry_unwind(req, rc);
        return;
    }
    dist_mkdir_finish(xl, req);
}


static void
dist_mkdir_rest_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);

    if (r->status == 0 && r->reply.is_leased)
        atomic_fetch_add(&((struct dist_mkdir_state *)local->mk)->n_leased,
                         1);
    /* ENOTCONN: that copy is missing, heal makes it later. */
    dist_round_note(req, r, -EEXIST, -ENOTCONN);
    if (!vl_fanout_arrive(&local->fan, r->status))
        return;
    if (atomic_load(&local->hard_err) == 0
        && dist_mask_is_empty(dist_amask_load(&local->mask_more))) {
        dist_mkdir_finish(req->xl, req);
        return;
    }
    /* If no worker can take it (graph going down) the copies made stay,
     * as after a crash mid-mkdir: lookup's heal completes them. */
    if (dist_task_run(req->xl, req, dist_mkdir_task) != 0) {
        dist_mkdir_state_free(local);
        vl_reply_clear(&req->reply);
        dist_entry_unwind(req, -ESHUTDOWN);
    }
}


static void
dist_mkdir_hashed_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    vl_xlator_t *xl = req->xl;
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct dist_mkdir_state *mk = local->mk;
    dist_mask_t rest = dist_mask_andnot(mk->up, dist_mask_one(mk->hashed));
    vl_req_t **rs;
    int k, j;

    if (r->status != 0) {
        dist_mkdir_state_free(local);
        dist_entry_unwind(req, r->status);
        return;
    }
    if (r->reply.is_leased)
        atomic_fetch_add(&mk->n_leased, 1);
    vl_reply_clear(&req->reply);
    req->reply.iatt = r->reply.iatt;
    /* The hashed copy holds the name: its parent's attributes go up
     * (mode and owner as on every copy, nlink too once the others are
     * made; times are that copy's). */
    dist_postparent_take(&req->reply, &r->reply);
    k = dist_round_reqs(xl, req, rest, &rs);
    if (k <= 0) {
        dist_round_begin(local, dist_mask_one(mk->hashed), 1);
        if (k < 0)
            atomic_store(&local->hard_err, k);
        if (k == 0) {
            dist_mkdir_finish(xl, req);
            return;
        }
        if (dist_task_run(xl, req, dist_mkdir_task) != 0) {
            dist_mkdir_state_free(local);
            vl_reply_clear(&req->reply);
            dist_entry_unwind(req, -ESHUTDOWN);
        }
        return;
    }
    dist_round_begin(local, dist_mask_one(mk->hashed), k);
    j = 0;
    for (unsigned i = 0; i < dist_priv(xl)->n; i++)
        if (dist_mask_test(rest, i)) /* rs is in the same order */
            dist_mkdir_args_for(req, i, mk->vals, &rs[j++]->args);
    for (j = 0; j < k; j++)
        vl_wind(rs[j], dist_mkdir_rest_done, req);
    vl_free(rs);
}


static void
dist_mkdir_start(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_priv *priv = dist_priv(xl);
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct vl_mkdir_args *a = VL_ARGS(req, mkdir);
    struct dist_mkdir_state *mk;
    unsigned n = priv->n;
    dist_mask_t up = dist_up_mask(xl);
    int hashed;
    vl_req_t *r;

    local->mk = NULL;
    hashed = dist_hashed_subvol(xl, a->loc.parent, a->loc.name, NULL);
    if (hashed < 0 || !dist_mask_test(up, (unsigned)hashed)) {
        dist_entry_unwind(req, -ENOTCONN);
        return;
    }
    mk = vl_calloc(xl, 1, sizeof(*mk) + n * sizeof(mk->vals[0]),
                   DIST_MT_LOCAL);
    if (mk == NULL) {
        dist_entry_unwind(req, -ENOMEM);
        return;
    }
    local->mk = mk;
    mk->up = up;
    mk->hashed = hashed;
    mk->layout = dist_layout_new(xl, n);
    r = mk->layout != NULL ? vl_req_child(req, xl->children[hashed]) : NULL;
    if (r == NULL) {
        dist_mkdir_state_free(local);
        dist_entry_unwind(req, -ENOMEM);
        return;
    }
    dist_layout_default(mk->layout, priv->decommissioned, 1,
                        DIST_FLAG_COMMITTED);
    for (unsigned i = 0; i < n; i++)
        dist_layout_encode(&mk->layout->r[i], mk->vals[i]);
    dist_mkdir_args_for(req, (unsigned)hashed, mk->vals, &r->args);
    vl_wind(r, dist_mkdir_hashed_done, req);
}


void
dist_mkdir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_mkdir_args *a = VL_ARGS(req, mkdir);

    if (dist_hashed_subvol(xl, a->loc.parent, a->loc.name, NULL) == -ESTALE) {
        dist_with_parent_layout(xl, req, a->loc.parent, dist_mkdir);
        return;
    }
    dist_mkdir_start(xl, req);
}


/* ---- rmdir ---- */

void
dist_names_free(char **names, size_t n)
{
    for (size_t k = 0; k < n; k++)
        vl_free(names[k]);
    vl_free(names);
}


int
dist_dir_links_only(vl_xlator_t *xl, vl_req_t *req, unsigned i,
                    vl_inode_t *dir, char ***names_out, size_t *n_out)
{
    union vl_fop_args a;
    struct dist_call call;
    vl_fd_t *fd;
    char **names = NULL;
    size_t n_names = 0;
    bool is_eof = false;
    int64_t off = 0;
    int rc;

    *names_out = NULL;
    *n_out = 0;
    fd = vl_fd_new(dir, O_RDONLY, 0);
    if (fd == NULL)
        return -ENOMEM;
    memset(&a, 0, sizeof(a));
    a.opendir.loc.inode = dir;
    a.opendir.fd = fd;
    rc = dist_call_sync(xl, req, i, VL_FOP_OPENDIR, &a, &call);
    vl_reply_clear(&call.reply);
    while (rc == 0 && !is_eof) {
        memset(&a, 0, sizeof(a));
        a.readdir.fd = fd;
        a.readdir.size = 65536;
        a.readdir.offset = off;
        a.readdir.plus = true;
        rc = dist_call_sync(xl, req, i, VL_FOP_READDIR, &a, &call);
        if (rc != 0) {
            vl_reply_clear(&call.reply);
            break;
        }
        is_eof = call.reply.entries.eof || call.reply.entries.n == 0;
        for (size_t k = 0; k < call.reply.entries.n && rc == 0; k++) {
            struct vl_dirent *e = &call.reply.entries.ents[k];
            char **grown;

            off = e->off;
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            if (!e->has_iatt || !dist_iatt_is_linkfile(&e->iatt)) {
                rc = -ENOTEMPTY;
                break;
            }
            grown = vl_realloc(names, (n_names + 1) * sizeof(*names));
            if (grown == NULL) {
                rc = -ENOMEM;
                break;
            }
            names = grown;
            names[n_names] = vl_strdup(xl, e->name, DIST_MT_TEXT);
            if (names[n_names] == NULL)
                rc = -ENOMEM;
            else
                n_names++;
        }
        vl_reply_clear(&call.reply);
    }
    vl_fd_unref(fd);
    if (rc != 0) {
        dist_names_free(names, n_names);
        return rc;
    }
    *names_out = names;
    *n_out = n_names;
    return 0;
}


/* Subvolume i's copy of the directory loc names: its link files (as
 * dist_dir_links_only). The kernel gives no inode for rmdir: the GFID
 * is looked up there. */
static int
dist_rmdir_links_of(vl_xlator_t *xl, vl_req_t *req, unsigned i,
                    const struct vl_loc *loc, vl_inode_t **dir_out,
                    char ***names, size_t *n_names)
{
    union vl_fop_args a;
    struct dist_call call;
    int rc;

    *dir_out = NULL;
    memset(&a, 0, sizeof(a));
    a.lookup.loc.parent = loc->parent;
    a.lookup.loc.name = loc->name;
    rc = dist_call_sync(xl, req, i, VL_FOP_LOOKUP, &a, &call);
    if (rc == 0)
        *dir_out = dist_inode_for_gfid(xl, &call.reply.iatt.gfid, S_IFDIR);
    vl_reply_clear(&call.reply);
    if (rc != 0)
        return rc;
    if (*dir_out == NULL)
        return -ENOMEM;
    rc = dist_dir_links_only(xl, req, i, *dir_out, names, n_names);
    if (rc != 0) {
        vl_inode_unref(*dir_out);
        *dir_out = NULL;
    }
    return rc;
}


/* The copies in full were not empty: if every one of them holds only
 * link files (stale: no copy holds data), they are all emptied; else
 * nothing is removed. 0, or -ENOTEMPTY (or the error of a listing) with
 * *at the subvolume that said so. */
static int
dist_rmdir_clean_links(vl_xlator_t *xl, vl_req_t *req, dist_mask_t full,
                       const struct vl_loc *loc, int *at /* OUT */)
{
    unsigned n = dist_priv(xl)->n;
    vl_inode_t **dirs = vl_calloc(xl, n, sizeof(*dirs), DIST_MT_FAN);
    char ***names = vl_calloc(xl, n, sizeof(*names), DIST_MT_FAN);
    size_t *n_names = vl_calloc(xl, n, sizeof(*n_names), DIST_MT_FAN);
    int rc = 0;

    *at = dist_mask_first(full);
    if (dirs == NULL || names == NULL || n_names == NULL)
        rc = -ENOMEM;
    /* Every copy listed before any link file goes: a copy with data
     * elsewhere makes the others' link files the way to it. */
    for (unsigned i = 0; i < n && rc == 0; i++) {
        if (!dist_mask_test(full, i))
            continue;
        rc = dist_rmdir_links_of(xl, req, i, loc, &dirs[i], &names[i],
                                 &n_names[i]);
        if (rc != 0)
            *at = (int)i;
    }
    for (unsigned i = 0; i < n && rc == 0; i++)
        for (size_t k = 0; k < n_names[i] && rc == 0; k++) {
            rc = dist_unlink_at(xl, req, (int)i, dirs[i], names[i][k]);
            if (rc == -ENOENT)
                rc = 0;
            if (rc != 0)
                *at = (int)i;
        }
    for (unsigned i = 0; i < n && dirs != NULL; i++) {
        if (dirs[i] != NULL)
            vl_inode_unref(dirs[i]);
        if (names != NULL && n_names != NULL)
            dist_names_free(names[i], n_names[i]);
    }
    vl_free(dirs);
    vl_free(names);
    vl_free(n_names);
    return rc;
}


/* Puts back the copies removed by an rmdir that failed elsewhere. */
static void
dist_rmdir_undo(vl_xlator_t *xl, vl_req_t *req, dist_mask_t removed,
                int survivor)
{
    struct vl_rmdir_args *a = VL_ARGS(req, rmdir);
    /* By name only: loc.inode may be a stale hint from the kernel (the
     * name may hold another directory by now). */
    struct vl_loc loc = {.parent = a->loc.parent, .name = a->loc.name};
    union vl_fop_args la;
    struct dist_call call;
    struct vl_iatt iatt;

    if (dist_mask_is_empty(removed))
        return;
    memset(&la, 0, sizeof(la));
    la.lookup.loc = loc;
    if (dist_call_sync(xl, req, (unsigned)survivor, VL_FOP_LOOKUP, &la,
                       &call) == 0) {
        vl_reply_clear(&call.reply);
        /* A named directory lookup recreates and re-lays the copies. */
        dist_dir_sync(xl, req, &loc, false, &iatt);
    }
    vl_reply_clear(&call.reply);
}


/* rmdir runs in two rounds: every subvolume but the name's hashed one in
 * parallel, then the hashed one (local->subvol; local->subvol2 says
 * which round answered: 1 or 2). The hashed copy is what a lookup of
 * the name finds first (with lookup-optimize a miss there is ENOENT), so
 * it goes last: when a copy elsewhere is not empty (a file there), or a
 * brick fails, the hashed copy is still there, the removed copies are
 * made again from it (a named directory lookup heals them, GFID, mode,
 * owner and layout ranges as before), and if that heal fails too (a
 * second fault) the next lookup of the name does it. Removed in one
 * parallel round as before, the hashed copy could go while another brick
 * said ENOTEMPTY: the directory and what it held then vanished from the
 * mount if the heal failed. A parent without a layout (no hashed
 * subvolume) gets one round on every subvolume. */
#define DIST_RMDIR_ROUND_REST 1
#define DIST_RMDIR_ROUND_HASHED 2

/* Removes the copies in mask again after link files were cleaned out;
 * adds the removed ones to *removed (and the first parent's attributes
 * to *pp). 0 or the first error, with *at its subvolume. */
static int
dist_rmdir_again(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask,
                 dist_mask_t *removed, struct vl_reply *pp, int *at)
{
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = dist_calls_new(xl);
    unsigned n = dist_priv(xl)->n;
    int rc = 0;

    if (args == NULL || calls == NULL) {
        *at = dist_mask_first(mask);
        rc = -ENOMEM;
        goto out;
    }
    for (unsigned i = 0; i < n; i++)
        args[i] = req->args;
    dist_fan_sync(xl, req, mask, VL_FOP_RMDIR, args, calls);
    for (unsigned i = 0; i < n; i++) {
        if (!dist_mask_test(mask, i))
            continue;
        if (calls[i].status != 0 && calls[i].status != -ENOENT) {
            if (rc == 0) {
                rc = calls[i].status;
                *at = (int)i;
            }
            continue;
        }
        dist_mask_set(removed, i);
        if (calls[i].status == 0 && !pp->has_postparent)
            dist_postparent_take(pp, &calls[i].reply);
    }
out:
    vl_free(args);
    dist_calls_free(calls, n);
    return rc;
}


/* Copies in full said ENOTEMPTY: if they hold only link files, those go
 * and the copies are removed again. 0 or the error (*at: where). */
static int
dist_rmdir_full(vl_xlator_t *xl, vl_req_t *req, dist_mask_t full,
                dist_mask_t *removed, struct vl_reply *pp, int *at)
{
    struct vl_rmdir_args *a = VL_ARGS(req, rmdir);
    int rc;

    if (dist_mask_is_empty(full))
        return 0;
    rc = dist_rmdir_clean_links(xl, req, full, &a->loc, at);
    if (rc == 0)
        rc = dist_rmdir_again(xl, req, full, removed, pp, at);
    return rc;
}


/* Worker: a round (dist_rmdir_done) left copies that are not empty
 * (mask_more) or an error (hard_err, at err_subvol). Copies holding only
 * link files are emptied and removed again, then the hashed copy if its
 * round is still to come; anything else puts the removed copies back. */
static void
dist_rmdir_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    dist_mask_t removed = dist_amask_load(&local->mask_ok);
    dist_mask_t full = dist_amask_load(&local->mask_more);
    int hashed = local->subvol;
    bool is_hashed_left = hashed >= 0
                          && local->subvol2 == DIST_RMDIR_ROUND_REST;
    int rc = atomic_load(&local->hard_err);
    int at = rc != 0 ? atomic_load(&local->err_subvol) : -1;
    struct vl_reply pp = {.has_postparent = false};

    /* The first removed copy's parent, if any (dist_rmdir_done). */
    dist_postparent_take(&pp, &req->reply);
    if (rc == 0)
        rc = dist_rmdir_full(xl, req, full, &removed, &pp, &at);
    if (rc == 0 && is_hashed_left) {
        rc = dist_rmdir_again(xl, req, dist_mask_one((unsigned)hashed),
                              &removed, &pp, &at);
        if (rc == -ENOTEMPTY)
            rc = dist_rmdir_full(xl, req, dist_mask_one((unsigned)hashed),
                                 &removed, &pp, &at);
    }
    if (rc != 0) {
        /* Heal from the hashed copy if it is still there, else from the
         * copy that failed. */
        int survivor = hashed >= 0
                               && !dist_mask_test(removed, (unsigned)hashed)
                           ? hashed
                           : at;

        if (survivor >= 0)
            dist_rmdir_undo(xl, req, removed, survivor);
    }
    vl_reply_clear(&req->reply);
    /* One copy's parent after its rmdir (nlink is one less on each). */
    if (rc == 0)
        dist_postparent_take(&req->reply, &pp);
    dist_entry_unwind(req, rc);
}


static void dist_rmdir_round(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask,
                             int round);


static void
dist_rmdir_done(vl_req_t *r, void *cookie)
{
    vl_req_t *req = cookie;
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);

    if (r->status == 0) {
        bool no = false;

        /* One copy's parent after its rmdir (nlink is one less on
         * each). */
        if (atomic_compare_exchange_strong(&local->has_reply, &no, true))
            dist_postparent_take(&req->reply, &r->reply);
    }
    /* ENOENT: that copy was gone already. */
    dist_round_note(req, r, -ENOTEMPTY, -ENOENT);
    if (!vl_fanout_arrive(&local->fan, r->status))
        return;
    if (atomic_load(&local->hard_err) == 0
        && dist_mask_is_empty(dist_amask_load(&local->mask_more))) {
        if (local->subvol >= 0 && local->subvol2 == DIST_RMDIR_ROUND_REST) {
            dist_rmdir_round(req->xl, req,
                             dist_mask_one((unsigned)local->subvol),
                             DIST_RMDIR_ROUND_HASHED);
            return;
        }
        dist_entry_unwind(req, 0);
        return;
    }
    dist_task_or_unwind(req->xl, req, dist_rmdir_task);
}


/* Winds rmdir to the subvolumes in mask (round: see above); the copies
 * removed by an earlier round stay in mask_ok. */
static void
dist_rmdir_round(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask, int round)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    dist_mask_t before = dist_amask_load(&local->mask_ok);
    vl_req_t **rs;
    int k;

    local->subvol2 = round;
    k = dist_round_reqs(xl, req, mask, &rs);
    if (k < 0) {
        if (dist_mask_is_empty(before)) {
            vl_reply_clear(&req->reply);
            dist_entry_unwind(req, k);
            return;
        }
        /* Copies are gone already: put them back on a worker. */
        atomic_store(&local->hard_err, k);
        atomic_store(&local->err_subvol, dist_mask_first(mask));
        dist_task_or_unwind(xl, req, dist_rmdir_task);
        return;
    }
    dist_round_begin(local, before, k);
    for (int j = 0; j < k; j++)
        vl_wind(rs[j], dist_rmdir_done, req);
    vl_free(rs);
}


/* Every subvolume must be up (a copy left behind would come back with
 * its brick); the rounds run on the callbacks. */
void
dist_rmdir(vl_xlator_t *xl, vl_req_t *req)
{
    struct dist_local *local = VL_REQ_PRIV(req, struct dist_local);
    struct vl_rmdir_args *a = VL_ARGS(req, rmdir);
    unsigned n = dist_priv(xl)->n;
    dist_mask_t up = dist_up_mask(xl);
    int hashed;

    if (!dist_mask_equal(up, dist_mask_all(n))) {
        dist_entry_unwind(req, -ENOTCONN);
        return;
    }
    hashed = dist_hashed_subvol(xl, a->loc.parent, a->loc.name, NULL);
    if (hashed == -ESTALE) {
        dist_with_parent_layout(xl, req, a->loc.parent, dist_rmdir);
        return;
    }
    local->subvol = hashed >= 0 ? hashed : -1;
    vl_reply_clear(&req->reply);
    dist_amask_store(&local->mask_ok, dist_mask_none());
    if (hashed >= 0 && n > 1)
        dist_rmdir_round(xl, req,
                         dist_mask_andnot(up, dist_mask_one((unsigned)hashed)),
                         DIST_RMDIR_ROUND_REST);
    else
        dist_rmdir_round(xl, req, up, DIST_RMDIR_ROUND_HASHED);
}
