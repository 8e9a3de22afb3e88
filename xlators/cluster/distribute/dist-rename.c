/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-rename: rename through distribute.
 *
 * A file is renamed where its data is (cached subvolume S). When the new
 * name hashes elsewhere (NH != S) a link file for it goes to NH (made
 * before the commit, renamed over whatever the replaced target had there
 * after it); the old name's link file on its hashed subvolume is
 * removed; a replaced target's data on a third subvolume is removed. The
 * data never moves, so one rename on S is the commit point and an open
 * fd stays valid. A step after it that fails renames the file back on S
 * and remakes what was replaced (link files), unless the rename on S
 * replaced the target's data there (then it stands, logged).
 * A directory is renamed on every subvolume, after a check of the
 * target on every one (nothing is changed when it is not empty
 * anywhere): the new name's hashed one first, then the others in
 * parallel; a failure renames the done ones back and makes the target
 * copies they replaced again (see "directories" below). Every subvolume
 * must be up (a copy left under the old name would come back through
 * heal).
 * RENAME_NOREPLACE is honoured; RENAME_EXCHANGE is dist-exchange.c's.
 *
 * Intercepts: rename.
 * Threads:    dist-worker.c threads.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif


static void dist_rename_dir(vl_xlator_t *xl, vl_req_t *req);


/* What a rename by name on one subvolume must not have moved: a link
 * file (the data is elsewhere) or a directory (it lives everywhere). Only
 * a stale inode hint leads there. */
static bool
dist_rename_moved_wrong(const struct vl_iatt *iatt)
{
    return dist_iatt_is_linkfile(iatt) || S_ISDIR(iatt->mode);
}


/* The inode of what a rename moved (GFID gfid): the caller's when it is
 * that one (it may be a stale hint, or absent), else the table's. New
 * ref or NULL. */
static vl_inode_t *
dist_rename_moved_inode(vl_xlator_t *xl, vl_req_t *req,
                        const vl_gfid_t *gfid)
{
    vl_inode_t *inode = VL_ARGS(req, rename)->oldloc.inode;

    if (inode != NULL && vl_gfid_equal(&inode->gfid, gfid))
        return vl_inode_ref(inode);
    return vl_inode_find(xl->graph->itable, gfid);
}


/* Renames newloc back to oldloc on child at after a rename that moved
 * something else than the file meant (a stale inode hint). */
static void
dist_rename_back(vl_xlator_t *xl, vl_req_t *req, int at)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    union vl_fop_args b;
    struct dist_call call;

    memset(&b, 0, sizeof(b));
    b.rename.oldloc.parent = a->newloc.parent;
    b.rename.oldloc.name = a->newloc.name;
    b.rename.newloc.parent = a->oldloc.parent;
    b.rename.newloc.name = a->oldloc.name;
    b.rename.flags = RENAME_NOREPLACE;
    dist_call_sync(xl, req, (unsigned)at, VL_FOP_RENAME, &b, &call);
    vl_reply_clear(&call.reply);
    vl_reply_clear(&req->reply);
}


/* Temporary name of a new link file on the new name's hashed subvolume
 * until it is renamed over the name: the prefix of dist-exchange.c's,
 * so a crash's leftover (a link file: never listed) is removed the same
 * way (rmdir, the next rebalance). */
#define DIST_RENAME_TMP_PREFIX ".mortar-xchg-"
#define DIST_RENAME_TMP_LEN (sizeof(DIST_RENAME_TMP_PREFIX) + VL_GFID_STR_LEN)

static void
dist_rename_tmp_name(char *buf /* OUT, DIST_RENAME_TMP_LEN */)
{
    char str[VL_GFID_STR_LEN];
    vl_gfid_t rnd;

    vl_gfid_generate(&rnd); /* random: no two requests share the name */
    snprintf(buf, DIST_RENAME_TMP_LEN, DIST_RENAME_TMP_PREFIX "%s",
             vl_gfid_to_str(&rnd, str));
}


/* The old name's link file on oh (the data being elsewhere), made again
 * after a rename that removed it failed: the old name stays reachable.
 * Logged when that fails too (a lookup of the old name that misses on
 * oh, in a range not COMMITTED, finds the data and heals it). */
static void
dist_rename_relink_old(vl_xlator_t *xl, vl_req_t *req, int oh, int src,
                       const vl_gfid_t *gfid)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    int rc = dist_linkfile_create(xl, req, oh, src, a->oldloc.parent,
                                  a->oldloc.name, gfid);

    if (rc != 0)
        vl_log(xl, VL_LOG_ERROR, "rename %s -> %s failed; the old name's "
               "link file on %s could not be made again: %s",
               a->oldloc.name, a->newloc.name, xl->children[oh]->name,
               strerror(-rc));
}


/* Renames parent/from to parent/to on child at (replacing to). */
static int
dist_rename_at(vl_xlator_t *xl, vl_req_t *req, int at, vl_inode_t *parent,
               const char *from, const char *to)
{
    union vl_fop_args b;
    struct dist_call call;
    int rc;

    memset(&b, 0, sizeof(b));
    b.rename.oldloc.parent = parent;
    b.rename.oldloc.name = from;
    b.rename.newloc.parent = parent;
    b.rename.newloc.name = to;
    rc = dist_call_sync(xl, req, (unsigned)at, VL_FOP_RENAME, &b, &call);
    vl_reply_clear(&call.reply);
    return rc;
}


/* After a failed file rename was renamed back on src: the replaced
 * target's link file (its data on target, its name hashed to nh) made
 * again where the rename took it: on src when nh is src (the rename on
 * src replaced it), on nh when the new link file was renamed over it
 * (is_nh_done; under a temporary name, then renamed over the name). */
static int
dist_rename_relink_target(vl_xlator_t *xl, vl_req_t *req, int src, int nh,
                          int target, const vl_gfid_t *tgfid,
                          bool is_nh_done)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    char tmp[DIST_RENAME_TMP_LEN];
    int rc;

    if (nh == src)
        return dist_linkfile_create(xl, req, src, target, a->newloc.parent,
                                    a->newloc.name, tgfid);
    if (!is_nh_done)
        return 0;
    dist_rename_tmp_name(tmp);
    rc = dist_linkfile_create(xl, req, nh, target, a->newloc.parent, tmp,
                              tgfid);
    if (rc == 0)
        rc = dist_rename_at(xl, req, nh, a->newloc.parent, tmp,
                            a->newloc.name);
    if (rc != 0)
        dist_unlink_at(xl, req, nh, a->newloc.parent, tmp);
    return rc;
}


/* Where the old name's data is now, found by name on every subvolume,
 * then renamed from there (no hint). */
static void dist_rename_file(vl_xlator_t *xl, vl_req_t *req, int src,
                             const vl_gfid_t *gfid, bool is_hint);


static int dist_rename_try_fast(vl_xlator_t *xl, vl_req_t *req, int src,
                                const vl_gfid_t *gfid);


static void
dist_rename_unhinted(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    struct vl_iatt iatt;
    int src = -1, rc;

    rc = dist_find_file_sync(xl, req, &a->oldloc, &src, &iatt);
    if (rc != 0) {
        dist_entry_unwind(req, rc);
        return;
    }
    if (S_ISDIR(iatt.mode)) {
        dist_rename_dir(xl, req);
        return;
    }
    rc = dist_rename_try_fast(xl, req, src, &iatt.gfid);
    if (rc == 0)
        return;
    dist_rename_file(xl, req, src, &iatt.gfid, false);
}


/* src is where the data is (from the inode's ctx when is_hint: the
 * kernel's inode may be stale, the name renamed or replaced since). */
static void
dist_rename_file(vl_xlator_t *xl, vl_req_t *req, int src,
                 const vl_gfid_t *hint_gfid, bool is_hint)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    vl_inode_t *inode;
    struct vl_iatt tiatt;
    vl_gfid_t moved = *hint_gfid;
    const vl_gfid_t *gfid = &moved;
    char tmp_name[DIST_RENAME_TMP_LEN];
    bool has_old_link = false, is_old_link_kept = false;
    bool is_moved_wrong = false, is_nh_done = false;
    int oh, nh, target = -1;
    int rc;

    oh = dist_hashed_subvol_sync(xl, req, a->oldloc.parent, a->oldloc.name);
    nh = dist_hashed_subvol_sync(xl, req, a->newloc.parent, a->newloc.name);
    if (nh < 0 || !dist_is_up(xl, (unsigned)nh)) {
        dist_entry_unwind(req, -ENOTCONN);
        return;
    }
    {
        struct vl_loc tloc = {.parent = a->newloc.parent,
                              .name = a->newloc.name};

        rc = dist_find_file_sync(xl, req, &tloc, &target, &tiatt);
        if (rc == 0 && (a->flags & RENAME_NOREPLACE)) {
            dist_entry_unwind(req, -EEXIST);
            return;
        }
        if (rc == 0 && S_ISDIR(tiatt.mode)) {
            dist_entry_unwind(req, -EISDIR);
            return;
        }
        if (rc == 0 && vl_gfid_equal(&tiatt.gfid, gfid)) {
            /* Two names of one file: POSIX says do nothing. */
            vl_reply_clear(&req->reply);
            req->reply.iatt = tiatt;
            dist_entry_unwind(req, 0);
            return;
        }
        if (rc != 0 && rc != -ENOENT) {
            dist_entry_unwind(req, rc);
            return;
        }
        if (rc != 0)
            target = -1;
    }

    /* Before the commit, what can be taken back: the new name's link
     * file, under a temporary name on NH. */
    if (nh != src) {
        dist_rename_tmp_name(tmp_name);
        rc = dist_linkfile_create(xl, req, nh, src, a->newloc.parent,
                                  tmp_name, gfid);
        if (rc != 0) {
            dist_entry_unwind(req, rc);
            return;
        }
    }

    /* The commit point: the data's name changes where it lives. */
    rc = dist_child_sync(xl, req, (unsigned)src);
    if (rc == 0 && dist_rename_moved_wrong(&req->reply.iatt)) {
        /* The name is a link file there now (its data is elsewhere) or
         * a directory (renamed on every subvolume). */
        dist_rename_back(xl, req, src);
        rc = -ESTALE;
        is_moved_wrong = true;
    }
    if (rc != 0 && nh != src)
        dist_unlink_at(xl, req, nh, a->newloc.parent, tmp_name);
    if (is_hint && (rc == -ENOENT || rc == -ESTALE)) {
        vl_reply_clear(&req->reply);
        dist_rename_unhinted(xl, req); /* not where the hint said */
        return;
    }
    if (rc != 0) {
        dist_entry_unwind(req, is_moved_wrong ? -ESTALE : rc);
        return;
    }
    /* By name: what was moved is what the name held (another file than
     * the hint's when it was replaced meanwhile). */
    moved = req->reply.iatt.gfid;
    if (nh != src && !vl_gfid_equal(&moved, hint_gfid)) {
        dist_unlink_at(xl, req, nh, a->newloc.parent, tmp_name);
        rc = dist_linkfile_create(xl, req, nh, src, a->newloc.parent,
                                  tmp_name, gfid);
    }
    if (rc == 0 && oh >= 0 && oh != src
        && !(oh == nh && a->oldloc.parent == a->newloc.parent
             && strcmp(a->oldloc.name, a->newloc.name) == 0)) {
        /* The old name's link file: only now (with a stale hint the old
         * name may hold another file there); a failure takes the rename
         * back below. */
        rc = dist_unlink_at(xl, req, oh, a->oldloc.parent, a->oldloc.name);
        if (rc == -ENOENT)
            rc = 0;
        else if (rc != 0)
            is_old_link_kept = true;
        else
            has_old_link = true;
    }
    if (nh != src && rc == 0) {
        /* The new link file replaces the target's data or link file on
         * NH in one step: the name never misses there. */
        rc = dist_rename_at(xl, req, nh, a->newloc.parent, tmp_name,
                            a->newloc.name);
        is_nh_done = rc == 0;
    }
    if (rc == 0 && target >= 0 && target != src && target != nh) {
        /* The replaced target's data on a third subvolume: nothing leads
         * to it any more. */
        rc = dist_unlink_at(xl, req, target, a->newloc.parent,
                            a->newloc.name);
        if (rc == -ENOENT)
            rc = 0;
    }
    if (rc != 0) {
        int urc = 0;

        if (nh != src && !is_nh_done)
            dist_unlink_at(xl, req, nh, a->newloc.parent, tmp_name);
        if (target != src) {
            /* The rename on S replaced nothing but, maybe, the target's
             * link file: take it back, and what it replaced. */
            dist_rename_back(xl, req, src);
            if (target >= 0 && target != nh)
                urc = dist_rename_relink_target(xl, req, src, nh, target,
                                                &tiatt.gfid, is_nh_done);
            if (has_old_link)
                dist_rename_relink_old(xl, req, oh, src, gfid);
            if (urc != 0)
                vl_log(xl, VL_LOG_ERROR, "rename %s -> %s failed; the "
                       "replaced file's link file could not be made "
                       "again: %s", a->oldloc.name, a->newloc.name,
                       strerror(-urc));
            dist_entry_unwind(req, rc);
            return;
        }
        /* It replaced the target's data on S, which no step can bring
         * back: the rename stands; the target's old link file on NH
         * still leads to S, where lookup finds the new file. */
        vl_log(xl, VL_LOG_ERROR, "rename %s -> %s over a file on %s: "
               "%s after the commit (%s); the %s link file stays",
               a->oldloc.name, a->newloc.name, xl->children[src]->name,
               is_old_link_kept ? "removing the old name's link file"
                                : "the new name's link file",
               strerror(-rc), is_old_link_kept ? "old name's" : "target's");
        rc = 0;
    }
    inode = dist_rename_moved_inode(xl, req, gfid);
    dist_ictx_set_file(xl, inode, src, nh, nh != src);
    if (inode != NULL)
        vl_inode_unref(inode);
    dist_entry_unwind(req, 0);
}


/* ---- directories ----
 *
 * A directory lives on every subvolume, so its rename is one rename per
 * brick, and no brick's rename can be taken back by the kernel once it
 * replaced an existing (empty) target: the target copy is gone. The
 * rename therefore runs in three steps:
 *
 * 1. Check (nothing changes): the new name is looked up on every
 *    subvolume, with its layout xattr. A non-directory there is ENOTDIR
 *    (EEXIST with RENAME_NOREPLACE for anything); the source itself
 *    there is done already. A directory target is listed on every
 *    subvolume holding it: any entry but link files is ENOTEMPTY, before
 *    any brick was touched. (A copy holding only link files has stale
 *    ones, the target having no data anywhere: they are removed, as
 *    rmdir does, only once every copy was found without data.)
 * 2. Rename on the new name's hashed subvolume first, then on the others
 *    in parallel.
 * 3. A failure in 2 (a brick's error, or a file made in the target by
 *    another client between 1 and 2: ENOTEMPTY there) undoes the bricks
 *    already done: the source is renamed back to its old name, and the
 *    target copy the rename replaced there is made again, empty as it was
 *    (the kernel only replaces an empty directory), with its GFID, mode,
 *    owner, times and layout range as step 1 read them. Every brick then
 *    holds what it held before, as after a failure in step 1.
 *
 * Each brick's rename is atomic; the whole is not: between steps another
 * client may see the new name on some bricks and the old on others, and
 * a crash of this client inside step 2 or 3 leaves that state (lookup's
 * heal then makes the missing copies; no brick loses the contents it
 * had, since a non-empty target copy is never replaced).
 */

/* What step 1 found of the new name on one subvolume. */
struct dist_rntarget {
    int status;                        /* lookup: 0, -ENOENT, -errno */
    struct vl_iatt iatt;               /* status 0 */
    bool has_layout;                   /* layout xattr read */
    unsigned char layout[DIST_LAYOUT_SIZE];
    char **links;                      /* stale link files in it */
    size_t n_links;
};


static void
dist_rntargets_free(struct dist_rntarget *t, unsigned n)
{
    if (t == NULL)
        return;
    for (unsigned i = 0; i < n; i++)
        dist_names_free(t[i].links, t[i].n_links);
    vl_free(t);
}


/* Step 1: the new name on every subvolume (into tg), and the target
 * directory's copies listed. 0 to go on, 1 when the source is the target
 * (nothing to do), or the error to answer with nothing changed. */
static int
dist_rename_dir_check(vl_xlator_t *xl, vl_req_t *req, struct dist_rntarget *tg,
                      union vl_fop_args *args, struct dist_call *calls)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    unsigned n = dist_priv(xl)->n;
    bool is_dir = false, is_self = true;
    vl_gfid_t gfid;
    int rc = 0;

    for (unsigned i = 0; i < n; i++) {
        memset(&args[i], 0, sizeof(args[i]));
        args[i].lookup.loc.parent = a->newloc.parent;
        args[i].lookup.loc.name = a->newloc.name;
        args[i].lookup.xattr_name = DIST_XATTR_LAYOUT;
    }
    dist_fan_sync(xl, req, dist_mask_all(n), VL_FOP_LOOKUP, args, calls);
    for (unsigned i = 0; i < n; i++) {
        struct vl_reply *rp = &calls[i].reply;

        tg[i].status = calls[i].status;
        if (calls[i].status == 0) {
            tg[i].iatt = rp->iatt;
            tg[i].has_layout = rp->xattr_status == 0 && rp->xattr != NULL
                               && rp->xattr_len == DIST_LAYOUT_SIZE;
            if (tg[i].has_layout)
                memcpy(tg[i].layout, rp->xattr, DIST_LAYOUT_SIZE);
        } else if (calls[i].status != -ENOENT && rc == 0) {
            rc = calls[i].status;
        }
    }
    dist_calls_clear(calls, n);
    if (rc != 0)
        return rc;
    for (unsigned i = 0; i < n; i++) {
        if (tg[i].status != 0)
            continue;
        if (a->flags & RENAME_NOREPLACE)
            return -EEXIST;
        if (!S_ISDIR(tg[i].iatt.mode))
            return -ENOTDIR;
        if (a->oldloc.inode == NULL
            || !vl_gfid_equal(&tg[i].iatt.gfid, &a->oldloc.inode->gfid))
            is_self = false;
        gfid = tg[i].iatt.gfid;
        is_dir = true;
    }
    if (!is_dir)
        return 0;
    if (is_self)
        return 1; /* the new name is already the source */
    for (unsigned i = 0; i < n; i++) {
        vl_inode_t *dir;

        if (tg[i].status != 0)
            continue;
        if (!vl_gfid_equal(&tg[i].iatt.gfid, &gfid))
            return -EIO; /* two directories under one name: heal first */
        dir = dist_inode_for_gfid(xl, &gfid, S_IFDIR);
        if (dir == NULL)
            return -ENOMEM;
        rc = dist_dir_links_only(xl, req, i, dir, &tg[i].links,
                                 &tg[i].n_links);
        vl_inode_unref(dir);
        if (rc != 0)
            return rc;
    }
    /* No data anywhere in the target: its link files are stale. */
    for (unsigned i = 0; i < n; i++) {
        vl_inode_t *dir;

        if (tg[i].n_links == 0)
            continue;
        dir = dist_inode_for_gfid(xl, &gfid, S_IFDIR);
        if (dir == NULL)
            return -ENOMEM;
        for (size_t k = 0; k < tg[i].n_links && rc == 0; k++) {
            rc = dist_unlink_at(xl, req, (int)i, dir, tg[i].links[k]);
            if (rc == -ENOENT)
                rc = 0;
        }
        vl_inode_unref(dir);
        if (rc != 0)
            return rc;
    }
    return 0;
}


/* Step 3 on subvolume i where the rename was done: the source back to
 * its old name, and the replaced target copy made again as step 1 saw
 * it. 0 or the first error (logged by the caller). */
static int
dist_rename_dir_undo_one(vl_xlator_t *xl, vl_req_t *req, unsigned i,
                         const struct dist_rntarget *tg)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    union vl_fop_args b;
    struct dist_call call;
    vl_inode_t *dir;
    int rc;

    memset(&b, 0, sizeof(b));
    b.rename.oldloc.parent = a->newloc.parent;
    b.rename.oldloc.name = a->newloc.name;
    b.rename.oldloc.inode = a->oldloc.inode;
    b.rename.newloc.parent = a->oldloc.parent;
    b.rename.newloc.name = a->oldloc.name;
    b.rename.flags = RENAME_NOREPLACE;
    rc = dist_call_sync(xl, req, i, VL_FOP_RENAME, &b, &call);
    vl_reply_clear(&call.reply);
    if (rc != 0 || tg->status != 0)
        return rc;
    memset(&b, 0, sizeof(b));
    b.mkdir.loc.parent = a->newloc.parent;
    b.mkdir.loc.name = a->newloc.name;
    b.mkdir.mode = tg->iatt.mode & 07777;
    b.mkdir.gfid = tg->iatt.gfid;
    if (tg->has_layout) {
        b.mkdir.xattr_name = DIST_XATTR_LAYOUT;
        b.mkdir.xattr_value = tg->layout;
        b.mkdir.xattr_size = DIST_LAYOUT_SIZE;
    }
    rc = dist_call_sync(xl, req, i, VL_FOP_MKDIR, &b, &call);
    vl_reply_clear(&call.reply);
    if (rc != 0)
        return rc;
    dir = dist_inode_for_gfid(xl, &tg->iatt.gfid, S_IFDIR);
    if (dir == NULL)
        return -ENOMEM;
    /* The mkdir made it the caller's, with the umask applied. */
    memset(&b, 0, sizeof(b));
    b.setattr.loc.inode = dir;
    b.setattr.attr = tg->iatt;
    b.setattr.valid = VL_SET_MODE | VL_SET_UID | VL_SET_GID | VL_SET_ATIME
                      | VL_SET_MTIME;
    rc = dist_call_sync(xl, req, i, VL_FOP_SETATTR, &b, &call);
    vl_reply_clear(&call.reply);
    vl_inode_unref(dir);
    return rc;
}


/* Two directory renames at once that share a name (both onto one
 * target, or one's target the other's source) would each check a state
 * the other is changing, and an undo could then remake a copy the other
 * replaced. They are serialized by exclusive entry locks (features/locks
 * ENTRYLK, domain DIST_RENAME_LOCK_DOMAIN) on the old and the new name,
 * each on the name's hashed subvolume, taken waiting in one order (by
 * subvolume, then parent GFID, then name) so two renames never wait on
 * each other crosswise; owned by the task (the lock object's address).
 * Advisory as the layout lock: a brick without features/locks (ENOSYS)
 * is skipped. A file made in the target by another client between the
 * check and the rename is not locked out: the undo covers it.
 * RENAME_EXCHANGE of two directories takes the same locks. */
#define DIST_RENAME_LOCK_DOMAIN "mortar.dht.rename"


static int
dist_rename_lock_cmd(vl_xlator_t *xl, vl_req_t *req,
                     struct dist_rename_lock *lk, int k,
                     enum vl_lock_cmd cmd)
{
    union vl_fop_args a;
    struct dist_call call;
    int rc;

    memset(&a, 0, sizeof(a));
    a.entrylk.domain = DIST_RENAME_LOCK_DOMAIN;
    a.entrylk.loc.parent = lk->loc[k].parent;
    a.entrylk.loc.name = lk->loc[k].name;
    a.entrylk.cmd = cmd;
    a.entrylk.type = F_WRLCK;
    rc = dist_call_sync_owner(xl, req, (unsigned)lk->at[k], VL_FOP_ENTRYLK,
                              &a, (uint64_t)(uintptr_t)lk, &call);
    vl_reply_clear(&call.reply);
    return rc;
}


/* Whether entry j goes before entry k in the lock order. */
static bool
dist_rename_lock_before(const struct dist_rename_lock *lk, int j, int k)
{
    int c;

    if (lk->at[j] != lk->at[k])
        return lk->at[j] < lk->at[k];
    c = memcmp(&lk->loc[j].parent->gfid, &lk->loc[k].parent->gfid,
               sizeof(vl_gfid_t));
    if (c != 0)
        return c < 0;
    return strcmp(lk->loc[j].name, lk->loc[k].name) <= 0;
}


void
dist_rename_unlock(vl_xlator_t *xl, vl_req_t *req,
                   struct dist_rename_lock *lk)
{
    for (int k = 1; k >= 0; k--) {
        if (lk->at[k] < 0)
            continue;
        /* A failed unlock goes with the connection (the brick drops the
         * client's locks). */
        (void)dist_rename_lock_cmd(xl, req, lk, k, VL_LOCK_UNLOCK);
        lk->at[k] = -1;
    }
}


int
dist_rename_lock(vl_xlator_t *xl, vl_req_t *req,
                 struct dist_rename_lock *lk /* OUT */)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    int sub[2], order[2] = {0, 1};
    int rc = 0;

    lk->loc[0].parent = a->oldloc.parent;
    lk->loc[0].name = a->oldloc.name;
    lk->loc[1].parent = a->newloc.parent;
    lk->loc[1].name = a->newloc.name;
    for (int k = 0; k < 2; k++) {
        sub[k] = dist_hashed_subvol_sync(xl, req, lk->loc[k].parent,
                                         lk->loc[k].name);
        if (sub[k] < 0)
            sub[k] = dist_first_up(xl);
        if (sub[k] < 0)
            return -ENOTCONN;
        lk->at[k] = sub[k]; /* for the order */
    }
    if (!dist_rename_lock_before(lk, 0, 1)) {
        order[0] = 1;
        order[1] = 0;
    }
    lk->at[0] = lk->at[1] = -1;
    for (int j = 0; j < 2 && rc == 0; j++) {
        int k = order[j];

        lk->at[k] = sub[k];
        rc = dist_rename_lock_cmd(xl, req, lk, k, VL_LOCK_WAIT);
        if (rc == -ENOSYS) {
            rc = 0; /* no features/locks there: nothing held */
            lk->at[k] = -1;
        } else if (rc != 0) {
            lk->at[k] = -1;
        }
    }
    if (rc != 0)
        dist_rename_unlock(xl, req, lk);
    return rc;
}


static void
dist_rename_dir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    union vl_fop_args *args = NULL;
    struct dist_call *calls = NULL;
    struct dist_rntarget *tg = NULL;
    struct dist_rename_lock lk = {.at = {-1, -1}};
    unsigned n = dist_priv(xl)->n;
    dist_mask_t up = dist_up_mask(xl), rest;
    dist_mask_t done = dist_mask_none();
    int nh, rc;

    if (!dist_mask_equal(up, dist_mask_all(n))) {
        dist_entry_unwind(req, -ENOTCONN);
        return;
    }
    args = dist_args_new(xl);
    calls = dist_calls_new(xl);
    tg = vl_calloc(xl, n, sizeof(*tg), DIST_MT_FAN);
    if (args == NULL || calls == NULL || tg == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    rc = dist_rename_lock(xl, req, &lk);
    if (rc != 0)
        goto out;
    rc = dist_rename_dir_check(xl, req, tg, args, calls);
    if (rc == 1) {
        rc = 0; /* POSIX: renaming a name onto itself does nothing */
        goto out;
    }
    if (rc != 0)
        goto out;
    nh = dist_hashed_subvol_sync(xl, req, a->newloc.parent, a->newloc.name);
    if (nh < 0)
        nh = 0;
    rc = dist_child_sync(xl, req, (unsigned)nh);
    if (rc != 0)
        goto out;
    dist_mask_set(&done, (unsigned)nh);
    rest = dist_mask_andnot(up, done);
    for (unsigned i = 0; i < n; i++)
        args[i] = req->args;
    dist_fan_sync(xl, req, rest, VL_FOP_RENAME, args, calls);
    for (unsigned i = 0; i < n; i++) {
        if (!dist_mask_test(rest, i))
            continue;
        if (calls[i].status == 0)
            dist_mask_set(&done, i);
        else if (rc == 0)
            rc = calls[i].status;
    }
    dist_calls_clear(calls, n);
    if (rc != 0) {
        vl_reply_clear(&req->reply);
        for (unsigned i = 0; i < n; i++) {
            int urc;

            if (!dist_mask_test(done, i))
                continue;
            urc = dist_rename_dir_undo_one(xl, req, i, &tg[i]);
            if (urc != 0)
                vl_log(xl, VL_LOG_ERROR, "rename %s -> %s failed (%s) and "
                       "could not be undone on %s: %s; lookup heals the "
                       "missing copies", a->oldloc.name, a->newloc.name,
                       strerror(-rc), xl->children[i]->name,
                       strerror(-urc));
        }
    }
out:
    dist_rename_unlock(xl, req, &lk);
    vl_free(args);
    dist_calls_free(calls, n);
    dist_rntargets_free(tg, n);
    dist_entry_unwind(req, rc);
}


/* Same subvolume for the data, the old and the new name: one rename
 * with RENAME_NOREPLACE there is the whole operation when the new name is
 * free (an existing target may be a link file whose data lies elsewhere:
 * EEXIST sends it to the full path). Returns 0 when req was answered,
 * 1 to go on with the full path, -ESTALE when the name is not on src
 * (stale hint). */
static int
dist_rename_fast(vl_xlator_t *xl, vl_req_t *req, int src,
                 const vl_gfid_t *gfid)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    union vl_fop_args b;
    struct dist_call call;
    vl_inode_t *inode;
    int rc;

    b = req->args;
    b.rename.flags |= RENAME_NOREPLACE;
    rc = dist_call_sync(xl, req, (unsigned)src, VL_FOP_RENAME, &b, &call);
    if (rc == -EEXIST) {
        vl_reply_clear(&call.reply);
        if (a->flags & RENAME_NOREPLACE) {
            dist_entry_unwind(req, -EEXIST);
            return 0;
        }
        return 1;
    }
    if (rc == -ENOENT || rc == -ESTALE) {
        vl_reply_clear(&call.reply);
        return -ESTALE;
    }
    if (rc != 0) {
        vl_reply_clear(&call.reply);
        dist_entry_unwind(req, rc);
        return 0;
    }
    if (dist_rename_moved_wrong(&call.reply.iatt)) {
        /* A stale hint: another file's link file, or a directory. */
        vl_reply_clear(&call.reply);
        dist_rename_back(xl, req, src);
        return -ESTALE;
    }
    (void)gfid;
    inode = dist_rename_moved_inode(xl, req, &call.reply.iatt.gfid);
    dist_ictx_set_file(xl, inode, src, src, false);
    if (inode != NULL)
        vl_inode_unref(inode);
    vl_reply_clear(&req->reply);
    req->reply = call.reply; /* moved */
    dist_entry_unwind(req, 0);
    return 0;
}


/* The data on src, the new name hashed to nh != src, the new name free
 * on nh. Each step that changes a brick can be taken back, so a failure
 * of any of them leaves every brick as it was:
 *   1. the link file for the new name on nh (its EEXIST says the target
 *      exists: the full path);
 *   2. the rename on src (RENAME_NOREPLACE: the commit point) and the new
 *      link file's xattr, in one parallel round;
 *   3. the old name's link file on oh, when the old name hashes away
 *      from src.
 * The xattr or step 3 failing renames the file back and removes the new
 * link file. Before, a failure there was only logged: a link file leading
 * nowhere, or a stale one (the old name EEXIST for the next create),
 * stayed behind a success. Same return values as dist_rename_fast. */
static int
dist_rename_cross(vl_xlator_t *xl, vl_req_t *req, int src, int oh, int nh,
                  const vl_gfid_t *gfid)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    const char *target = xl->children[src]->name;
    union vl_fop_args *args = dist_args_new(xl);
    struct dist_call *calls = dist_calls_new(xl);
    vl_fop_t *ops = vl_calloc(xl, dist_priv(xl)->n, sizeof(*ops),
                              DIST_MT_FAN);
    unsigned n = dist_priv(xl)->n;
    vl_inode_t *tmp, *inode;
    int rc;

    if (args == NULL || calls == NULL || ops == NULL) {
        rc = 0;
        dist_entry_unwind(req, -ENOMEM);
        goto out;
    }
    args[nh].mknod.loc.parent = a->newloc.parent;
    args[nh].mknod.loc.name = a->newloc.name;
    args[nh].mknod.mode = DIST_LINK_MODE;
    args[nh].mknod.gfid = *gfid;
    rc = dist_call_sync(xl, req, (unsigned)nh, VL_FOP_MKNOD, &args[nh],
                        &calls[nh]);
    vl_reply_clear(&calls[nh].reply);
    if (rc != 0) { /* EEXIST: the name, or the GFID under another name (a
                      stale hint): the full path finds out */
        rc = 1;
        goto out;
    }
    tmp = dist_inode_for_gfid(xl, gfid, S_IFREG);
    if (tmp == NULL) {
        dist_unlink_at(xl, req, nh, a->newloc.parent, a->newloc.name);
        rc = 0;
        dist_entry_unwind(req, -ENOMEM);
        goto out;
    }
    args[src] = req->args;
    args[src].rename.flags |= RENAME_NOREPLACE;
    ops[src] = VL_FOP_RENAME;
    memset(&args[nh], 0, sizeof(args[nh]));
    args[nh].setxattr.loc.inode = tmp;
    args[nh].setxattr.name = DIST_XATTR_LINKTO;
    args[nh].setxattr.value = target;
    args[nh].setxattr.size = strlen(target) + 1;
    ops[nh] = VL_FOP_SETXATTR;
    dist_fan_ops_sync(xl, req,
                      dist_mask_or(dist_mask_one((unsigned)src),
                                   dist_mask_one((unsigned)nh)),
                      ops, args, calls);
    vl_inode_unref(tmp);
    rc = calls[src].status;
    if (rc == 0 && dist_rename_moved_wrong(&calls[src].reply.iatt)) {
        dist_rename_back(xl, req, src); /* a stale hint */
        rc = -ESTALE;
    } else if (rc == 0 && calls[nh].status != 0) {
        /* The new name would lead nowhere: take the rename back. */
        dist_rename_back(xl, req, src);
        rc = calls[nh].status;
    } else if (rc == 0 && oh >= 0 && oh != src) {
        /* The old name's link file (only now: with a stale hint the old
         * name may hold another file there). Left behind, it would make
         * the next create of the old name EEXIST: a failure takes the
         * rename back. */
        int urc = dist_unlink_at(xl, req, oh, a->oldloc.parent,
                                 a->oldloc.name);

        if (urc != 0 && urc != -ENOENT) {
            dist_rename_back(xl, req, src);
            rc = urc;
        }
    }
    if (rc != 0) {
        dist_calls_clear(calls, n);
        dist_unlink_at(xl, req, nh, a->newloc.parent, a->newloc.name);
        if (rc == -ENOENT || rc == -ESTALE) {
            rc = -ESTALE;
        } else if (rc == -EEXIST && !(a->flags & RENAME_NOREPLACE)) {
            rc = 1;
        } else {
            dist_entry_unwind(req, rc);
            rc = 0;
        }
        goto out;
    }
    vl_reply_clear(&req->reply);
    req->reply = calls[src].reply; /* moved */
    memset(&calls[src].reply, 0, sizeof(calls[src].reply));
    dist_calls_clear(calls, n);
    if (!vl_gfid_equal(&req->reply.iatt.gfid, gfid)) {
        /* By name: another file than the hint's was moved; its link
         * file must carry its GFID. */
        dist_unlink_at(xl, req, nh, a->newloc.parent, a->newloc.name);
        dist_linkfile_create(xl, req, nh, src, a->newloc.parent,
                             a->newloc.name, &req->reply.iatt.gfid);
    }
    inode = dist_rename_moved_inode(xl, req, &req->reply.iatt.gfid);
    dist_ictx_set_file(xl, inode, src, nh, true);
    if (inode != NULL)
        vl_inode_unref(inode);
    rc = 0;
    dist_entry_unwind(req, 0);
out:
    vl_free(ops);
    vl_free(args);
    dist_calls_free(calls, n);
    return rc;
}


/* The short paths when the data's subvolume src is known: 0 when req
 * was answered, 1 for the full path, -ESTALE when the old name is not
 * (or no longer) the file on src. */
static int
dist_rename_try_fast(vl_xlator_t *xl, vl_req_t *req, int src,
                     const vl_gfid_t *gfid)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    int oh, nh;

    oh = dist_hashed_subvol_sync(xl, req, a->oldloc.parent, a->oldloc.name);
    nh = dist_hashed_subvol_sync(xl, req, a->newloc.parent, a->newloc.name);
    if (nh < 0 || !dist_is_up(xl, (unsigned)nh)
        || (oh >= 0 && !dist_is_up(xl, (unsigned)oh)))
        return 1;
    if (nh == src)
        return oh == src ? dist_rename_fast(xl, req, src, gfid) : 1;
    return dist_rename_cross(xl, req, src, oh, nh, gfid);
}


/* Finds what is renamed and where its data is: the inode's ctx when the
 * caller gave a known inode (a hint, checked by the rename itself), else
 * a lookup of the name on every subvolume. */
static void
dist_rename_task(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    vl_inode_t *inode = a->oldloc.inode;
    vl_gfid_t gfid;
    int src = -1, rc;

    if (inode != NULL && S_ISDIR(inode->type)) {
        dist_rename_dir(xl, req);
        return;
    }
    if (inode != NULL && !vl_gfid_is_null(&inode->gfid))
        src = dist_ictx_cached(xl, inode);
    if (src < 0 || !dist_is_up(xl, (unsigned)src)) {
        dist_rename_unhinted(xl, req);
        return;
    }
    gfid = inode->gfid;
    rc = dist_rename_try_fast(xl, req, src, &gfid);
    if (rc == 0)
        return;
    if (rc == -ESTALE) {
        dist_rename_unhinted(xl, req);
        return;
    }
    dist_rename_file(xl, req, src, &gfid, true);
}


/* Both parents' layouts must be known before the task can run. */
void
dist_rename(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    int rc;

    if ((a->flags & ~(uint32_t)(RENAME_NOREPLACE | RENAME_EXCHANGE))
        || ((a->flags & RENAME_NOREPLACE) && (a->flags & RENAME_EXCHANGE))) {
        dist_entry_unwind(req, -EINVAL);
        return;
    }
    if (a->oldloc.parent == NULL
        || a->newloc.parent == NULL || a->oldloc.name == NULL
        || a->newloc.name == NULL) {
        dist_entry_unwind(req, -EINVAL);
        return;
    }
    if (dist_hashed_subvol(xl, a->oldloc.parent, a->oldloc.name, NULL)
        == -ESTALE) {
        dist_with_parent_layout(xl, req, a->oldloc.parent, dist_rename);
        return;
    }
    if (dist_hashed_subvol(xl, a->newloc.parent, a->newloc.name, NULL)
        == -ESTALE) {
        dist_with_parent_layout(xl, req, a->newloc.parent, dist_rename);
        return;
    }
    rc = dist_task_run(xl, req, (a->flags & RENAME_EXCHANGE)
                                    ? dist_exchange_task
                                    : dist_rename_task);
    if (rc != 0)
        dist_entry_unwind(req, rc);
}
