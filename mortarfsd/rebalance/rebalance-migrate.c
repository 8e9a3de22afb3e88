/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebalance-migrate: puts one name of a directory on its hashed
 * subvolume (doc/rebalance.md, the distribute contract's "Migration of
 * one file").
 *
 * All calls go through vl_sync_call, to cluster/distribute (the top) only
 * for the lookup and the mortar.dht.pathinfo virtual xattr that say where
 * the name hashes, and otherwise straight to the protocol/client
 * translators under it. Migration of source S to destination D:
 *   1. stat S; skip hard links; skip when D has not the room or would
 *      fall below distribute's min-free-disk;
 *   2. on D, create the name with the same GFID as a marker (mode
 *      S_ISVTX|S_ISGID, linkto=S), or turn a link file of the same GFID
 *      into one;
 *   3. copy the data (1 MiB chunks, holes skipped with SEEK_DATA/
 *      SEEK_HOLE) without the freeze; take the freeze (inodelk
 *      mortar.dht.migrate on S); copy everything again if S's size,
 *      mtime or ctime changed; fsync D;
 *   4. under the freeze: owner, times, xattrs (user, trusted, security),
 *      the commit stamp; remove linkto and set the real mode (the commit
 *      point); ACLs; mark S migrated; unlink S; release the freeze.
 * Failure before the commit removes the marker (or, when it was the
 * name's link file, turns it back into one); after it, the next run
 * finds the stale source and compares it with the commit stamp: unlinked
 * if untouched, copied over the committed copy again if writes reached
 * it after the commit (rebalance-resume.c). Symlinks, devices, fifos and
 * sockets are recreated on D with the same GFID and their attributes
 * (rebalance-special.c). MORTAR_REBAL_FAULT makes the process exit at a
 * named step (fsd_rb_fault), for tests. The fops and copies are in
 * rebalance-fops.c, shared through rebalance-migrate.h.
 * Threads: rebalance workers; nothing shared but the graph.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rebalance-migrate.h"
#include "xlators/cluster/distribute/dist.h"


enum fsd_rebal_kind
fsd_rebal_classify(const struct vl_iatt *iatt)
{
    uint32_t perm = iatt->mode & 07777;

    if (S_ISDIR(iatt->mode))
        return FSD_RK_DIR;
    if (!S_ISREG(iatt->mode))
        return FSD_RK_OTHER;
    if (perm == RB_MARKER_MODE)
        return FSD_RK_MARKER;
    if (perm == S_ISVTX && iatt->size == 0)
        return FSD_RK_LINK;
    return FSD_RK_DATA;
}


/* Step 2: the marker on D, open for writing in *fd_d. *is_ours says
 * whether a failure must remove it again. */
int
fsd_rb_dest_prepare(vl_xlator_t *xd, vl_inode_t *dir, const char *name,
                    vl_inode_t *inode, const char *src_name, bool is_strict,
                    vl_fd_t **fd_d, bool *is_reused, char *why,
                    size_t why_len)
{
    struct vl_iatt ia;
    struct fsd_rebal_ent ent;
    int rc;

    if (is_reused != NULL)
        *is_reused = false;
    rc = fsd_rb_lookup(xd, dir, name, &ia);
    if (rc == 0) {
        ent.kind = fsd_rebal_classify(&ia);
        ent.iatt = ia;
        if ((ent.kind == FSD_RK_LINK || ent.kind == FSD_RK_MARKER)
            && vl_gfid_equal(&ia.gfid, &inode->gfid)) {
            /* Distribute's own file for this GFID: reuse it. */
            if (is_reused != NULL)
                *is_reused = true;
            rc = fsd_rb_open(xd, inode, O_RDWR, fd_d);
            if (rc == 0)
                rc = fsd_rb_truncate(xd, *fd_d, 0);
            if (rc == 0)
                rc = fsd_rb_chmod(xd, inode, RB_MARKER_MODE);
            goto linkto;
        }
        if (!is_strict
            && (ent.kind == FSD_RK_LINK || ent.kind == FSD_RK_MARKER)
            && fsd_rb_is_dht_file(xd, dir, name, &ia.gfid)) {
            fsd_rb_remove_special(xd, dir, name, &ent);
        } else {
            snprintf(why, why_len, "'%s' exists on %s as another file",
                     name, xd->name);
            return -EEXIST;
        }
    } else if (rc != -ENOENT) {
        snprintf(why, why_len, "lookup of '%s' on %s: %s", name, xd->name,
                 strerror(-rc));
        return rc;
    }

    {
        union vl_fop_args a = {0};
        vl_fd_t *fd = vl_fd_new(inode, O_RDWR, (uint32_t)getpid());

        if (fd == NULL)
            return -ENOMEM;
        a.create.loc.parent = dir;
        a.create.loc.name = name;
        a.create.loc.inode = inode;
        a.create.flags = O_RDWR | O_CREAT | O_EXCL;
        a.create.mode = RB_MARKER_MODE;
        a.create.umask = 0;
        a.create.gfid = inode->gfid;
        a.create.fd = fd;
        rc = fsd_rb_call(xd, VL_FOP_CREATE, &a, 0, NULL);
        if (rc != 0)
            vl_fd_unref(fd);
        else
            *fd_d = fd;
    }
linkto:
    if (rc == 0)
        rc = fsd_rb_setxattr(xd, inode, RB_LINKTO, src_name,
                             strlen(src_name) + 1);
    if (rc != 0)
        snprintf(why, why_len, "marker of '%s' on %s: %s", name, xd->name,
                 strerror(-rc));
    return rc;
}


bool
fsd_rb_changed(const struct vl_iatt *a, const struct vl_iatt *b)
{
    return a->size != b->size || a->mtime != b->mtime
           || a->mtime_ns != b->mtime_ns || a->ctime != b->ctime
           || a->ctime_ns != b->ctime_ns;
}


int
fsd_rb_finish_copy(vl_xlator_t *xs, vl_fd_t *fd_s, vl_xlator_t *xd,
                   vl_fd_t *fd_d, vl_inode_t *inode,
                   const struct vl_iatt *st1, const struct vl_iatt *st2,
                   const char **step)
{
    union vl_fop_args a;
    struct vl_iatt attr = *st2;
    int rc;

    if (fsd_rb_changed(st1, st2)) {
        *step = "copy under the freeze";
        rc = fsd_rb_copy_data(xs, fd_s, xd, fd_d, st2->size, NULL);
        if (rc != 0)
            return rc;
    }
    *step = "fsync destination";
    memset(&a, 0, sizeof(a));
    a.fsync.fd = fd_d;
    rc = fsd_rb_call(xd, VL_FOP_FSYNC, &a, 0, NULL);
    if (rc != 0)
        return rc;
    *step = "attributes";
    rc = fsd_rb_setattr(xd, inode, NULL, &attr, VL_SET_UID | VL_SET_GID);
    if (rc == 0)
        rc = fsd_rb_setattr(xd, inode, NULL, &attr,
                            VL_SET_ATIME | VL_SET_MTIME);
    if (rc == 0)
        rc = fsd_rb_copy_xattrs(xs, xd, inode, RB_XA_PLAIN);
    if (rc == 0)
        rc = fsd_rb_stamp_set(xd, inode, st2);
    return rc;
}


/* The min-free-disk option of the distribute on top, as its text ("10%"
 * or a size): the rebalance leaves as much free as clients creating
 * files would. 0 with *pct and *bytes (both 0 when unset). */
static int
rb_min_free(const struct fsd_rebal_io *io, double *pct, uint64_t *bytes)
{
    const vl_option_t *opt;
    char text[64];
    size_t len;
    char *end = NULL;

    *pct = 0;
    *bytes = 0;
    opt = vl_option_find(io->top->cls->options, "min-free-disk");
    if (opt == NULL || io->top->conf == NULL)
        return 0;
    if (vl_option_format(opt, io->top->conf, text, sizeof(text))
        >= (int)sizeof(text))
        return -EINVAL;
    len = strlen(text);
    if (len == 0)
        return 0;
    if (text[len - 1] == '%') {
        *pct = strtod(text, &end);
        return end == text + len - 1 && *pct >= 0 && *pct <= 100 ? 0
                                                                 : -EINVAL;
    }
    return vl_parse_size(text, bytes);
}


/* The min-free-inodes option (a percent) of the distribute on top; 0
 * when it has none. */
static double
rb_min_free_inodes(const struct fsd_rebal_io *io)
{
    const vl_option_t *opt;

    opt = vl_option_find(io->top->cls->options, "min-free-inodes");
    if (opt == NULL || opt->type != VL_OT_PERCENT || io->top->conf == NULL)
        return 0;
    return *(const double *)(const void *)((const char *)io->top->conf
                                           + opt->offset);
}


/* Would xd stay above min-free-disk with size more bytes (and a chunk of
 * slack), and above min-free-inodes with one more file? -ENOSPC with why
 * saying so, 0, or -errno of the statfs. */
int
fsd_rb_space_check(const struct fsd_rebal_io *io, vl_xlator_t *xd,
                   vl_inode_t *dir, uint64_t size, char *why, size_t why_len)
{
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    uint64_t avail;
    uint64_t total;
    uint64_t ifree;
    uint64_t itotal;
    uint64_t need;
    double pct;
    int rc;

    a.statfs.loc.inode = dir;
    rc = fsd_rb_call(xd, VL_FOP_STATFS, &a, 0, &r);
    avail = (uint64_t)r.statvfs.f_bavail * r.statvfs.f_frsize;
    total = (uint64_t)r.statvfs.f_blocks * r.statvfs.f_frsize;
    ifree = (uint64_t)r.statvfs.f_favail;
    itotal = (uint64_t)r.statvfs.f_files;
    vl_reply_clear(&r);
    if (rc != 0)
        return rc;
    if (avail < size + RB_CHUNK) {
        snprintf(why, why_len, "not enough free space on %s", xd->name);
        return -ENOSPC;
    }
    rc = rb_min_free(io, &pct, &need);
    if (rc != 0)
        return rc;
    if (pct > 0)
        need = (uint64_t)((double)total * pct / 100.0);
    if (avail - size < need || (pct >= 100.0 && total > 0)) {
        snprintf(why, why_len, "%s would keep %" PRIu64 " bytes free, "
                 "min-free-disk wants %" PRIu64, xd->name, avail - size,
                 need);
        return -ENOSPC;
    }
    /* Inodes: as distribute counts them (no fixed count: never short). */
    pct = rb_min_free_inodes(io);
    if (pct > 0 && itotal > 0
        && (pct >= 100.0 || ifree == 0
            || (double)(ifree - 1) < (double)itotal * pct / 100.0)) {
        snprintf(why, why_len, "%s would keep %" PRIu64 " inodes free, "
                 "min-free-inodes wants %.0f%% of %" PRIu64, xd->name,
                 ifree > 0 ? ifree - 1 : 0, pct, itotal);
        return -ENOSPC;
    }
    return 0;
}


/* Steps 1-4 for inode (name in dir) from xs to xd. */
static enum fsd_rebal_outcome
rb_migrate(const struct fsd_rebal_io *io, vl_inode_t *dir, const char *name,
           vl_inode_t *inode, vl_xlator_t *xs, vl_xlator_t *xd,
           uint64_t *bytes, char *why, size_t why_len)
{
    uint64_t owner = fsd_rb_owner();
    enum fsd_rebal_outcome out = FSD_RO_FAILED;
    bool is_frozen = false;
    bool is_committed = false;
    bool is_reused = false;
    vl_fd_t *fd_s = NULL;
    vl_fd_t *fd_d = NULL;
    struct vl_iatt st1;
    struct vl_iatt st2;
    struct vl_iatt st3;
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    const char *step;
    int rc;

    /* 1. The source as it is now. */
    step = "stat source";
    rc = fsd_rb_lookup(xs, dir, name, &st1);
    if (rc == -ENOENT || rc == -ESTALE
        || (rc == 0 && !vl_gfid_equal(&st1.gfid, &inode->gfid))) {
        snprintf(why, why_len, "'%s' on %s: %s since the listing", name,
                 xs->name, rc == 0 ? "replaced" : "removed");
        return FSD_RO_IN_PLACE; /* ESTALE: its directory was removed */
    }
    if (rc != 0)
        goto fail;
    if (!S_ISREG(st1.mode) || st1.nlink > 1) {
        snprintf(why, why_len, "'%s' on %s: skipped, %s", name, xs->name,
                 S_ISREG(st1.mode) ? "hard-linked" : "no longer a file");
        return FSD_RO_SKIPPED;
    }
    step = "statfs destination";
    rc = fsd_rb_space_check(io, xd, dir, st1.size, why, why_len);
    if (rc == -ENOSPC) {
        char tmp[256];

        snprintf(tmp, sizeof(tmp), "%s", why);
        snprintf(why, why_len, "'%s' on %s: skipped for space: %s", name,
                 xs->name, tmp);
        return FSD_RO_SKIPPED;
    }
    if (rc != 0)
        goto fail;

    /* 2. The marker on the destination. Another file's entry there: a
     * client renamed or made a file of this name since the listing (its
     * link file, or its data, is on the hashed subvolume first), or a
     * link file left dangling. Distribute's answer for the name says
     * which. */
    rc = fsd_rb_dest_prepare(xd, dir, name, inode, xs->name, true, &fd_d,
                             &is_reused, why, why_len);
    if (rc == -EEXIST) {
        vl_inode_t *cur = NULL;
        struct vl_iatt ia;
        int h = -1;

        /* Data of another file on the hashed subvolume: lookups find that
         * one first, so the name is its. */
        if (fsd_rb_lookup(xd, dir, name, &ia) == 0
            && fsd_rebal_classify(&ia) == FSD_RK_DATA
            && !vl_gfid_equal(&ia.gfid, &inode->gfid)) {
            snprintf(why, why_len, "'%s': another file's data on %s has "
                     "the name", name, xd->name);
            return FSD_RO_IN_PLACE;
        }
        rc = fsd_rb_hashed(io, dir, name, &cur, &h);
        if (rc == -ENOENT || rc == -ESTALE
            || (rc == 0 && !vl_gfid_equal(&cur->gfid, &inode->gfid))) {
            vl_inode_unref(cur);
            snprintf(why, why_len, "'%s': the name is another file's now",
                     name);
            return FSD_RO_IN_PLACE;
        }
        vl_inode_unref(cur);
        if (rc == 0) /* ours: what D has is stale */
            rc = fsd_rb_dest_prepare(xd, dir, name, inode, xs->name, false,
                                     &fd_d, &is_reused, why, why_len);
    }
    if (rc != 0)
        goto out;
    step = "open source";
    rc = fsd_rb_open(xs, inode, O_RDONLY, &fd_s);
    if (rc != 0)
        goto fail;

    /* 3. Copy, freeze, copy again if it changed meanwhile, fsync. */
    step = "copy";
    rc = fsd_rb_copy_data(xs, fd_s, xd, fd_d, st1.size, io->stop);
    if (rc == -EINTR) {
        out = FSD_RO_STOPPED;
        goto out;
    }
    if (rc != 0)
        goto fail;
    fsd_rb_test_pause(name, "copy");
    step = "freeze";
    rc = fsd_rb_freeze(xs, inode, VL_LOCK_WAIT, owner);
    if (rc != 0)
        goto fail;
    is_frozen = true;
    step = "stat source under the freeze";
    memset(&a, 0, sizeof(a));
    a.stat.loc.inode = inode;
    a.stat.fd = fd_s;
    rc = fsd_rb_call(xs, VL_FOP_STAT, &a, 0, &r);
    st2 = r.iatt;
    vl_reply_clear(&r);
    if (rc != 0)
        goto fail;
    /* The freeze holds writes, not a client's rename, unlink or link of
     * the name: one since step 1 means the copy on D would be a name the
     * client no longer has (or would lose one it made). Leave the file
     * where it is; the crawl meets it under its new name, or it is gone. */
    step = "look up the name under the freeze";
    rc = fsd_rb_lookup(xs, dir, name, &st3);
    if (rc == -ENOENT || rc == -ESTALE
        || (rc == 0 && (!vl_gfid_equal(&st3.gfid, &inode->gfid)
                        || st3.nlink != st1.nlink))) {
        snprintf(why, why_len, "'%s' on %s: renamed, removed or linked "
                 "during the copy", name, xs->name);
        out = FSD_RO_IN_PLACE;
        goto out;
    }
    if (rc != 0)
        goto fail;
    fsd_rb_test_pause(name, NULL);
    /* 4. Catch up, fsync, attributes; then the commit: real mode, no
     * linkto. */
    rc = fsd_rb_finish_copy(xs, fd_s, xd, fd_d, inode, &st1, &st2, &step);
    if (rc != 0)
        goto fail;
    fsd_rb_fault("before-commit", name, xs, xd);
    step = "commit";
    memset(&a, 0, sizeof(a));
    a.removexattr.loc.inode = inode;
    a.removexattr.name = RB_LINKTO;
    rc = fsd_rb_call(xd, VL_FOP_REMOVEXATTR, &a, 0, NULL);
    if (rc == 0)
        rc = fsd_rb_chmod(xd, inode, st2.mode & 07777);
    if (rc != 0)
        goto fail;
    is_committed = true;
    *bytes = st2.size;
    out = FSD_RO_MOVED;
    fsd_rb_fault("after-commit", name, xs, xd);
    /* ACLs only now (see enum rb_xattr_set); they set the same mode. A
     * failure leaves the data moved but is reported. */
    rc = fsd_rb_copy_xattrs(xs, xd, inode, RB_XA_ACL);
    if (rc != 0) {
        snprintf(why, why_len, "'%s' %s -> %s: moved, but copying its ACL "
                 "failed: %s", name, xs->name, xd->name, strerror(-rc));
        out = FSD_RO_FAILED;
    }
    /* Open fds on the source now answer EREMCHG, also the writes the
     * freeze holds; then the old name goes. */
    rc = fsd_rb_setxattr(xs, inode, RB_MIGRATED, xd->name, strlen(xd->name));
    if (rc != 0)
        vl_glog("rebalance", VL_LOG_WARNING, "%s: marking '%s' migrated: "
                "%s", xs->name, name, strerror(-rc));
    rc = fsd_rb_unlink(xs, dir, name, inode);
    if (rc != 0)
        vl_glog("rebalance", VL_LOG_WARNING, "%s: unlinking migrated '%s': "
                "%s (the next run removes it)", xs->name, name,
                strerror(-rc));
    goto out;

fail:
    snprintf(why, why_len, "'%s' %s -> %s: %s: %s", name, xs->name, xd->name,
             step, strerror(-rc));
out:
    if (is_frozen) {
        rc = fsd_rb_freeze(xs, inode, VL_LOCK_UNLOCK, owner);
        if (rc != 0)
            vl_glog("rebalance", VL_LOG_WARNING, "%s: releasing the freeze "
                    "of '%s': %s", xs->name, name, strerror(-rc));
    }
    if (!is_committed && fd_d != NULL && is_reused) {
        /* The marker was the name's link file: the source stays, so the
         * link file must too (it is how lookups under a committed layout
         * find the data). Empty first: while the mode is the marker's,
         * lookups follow its linkto to the source anyway. */
        rc = fsd_rb_truncate(xd, fd_d, 0);
        if (rc == 0)
            rc = fsd_rb_setxattr(xd, inode, RB_LINKTO, xs->name,
                                 strlen(xs->name) + 1);
        if (rc == 0) {
            /* A commit stamp set before the abort would make a later
             * run take the source for a stale copy of this one. */
            memset(&a, 0, sizeof(a));
            a.removexattr.loc.inode = inode;
            a.removexattr.name = RB_STAMP;
            rc = fsd_rb_call(xd, VL_FOP_REMOVEXATTR, &a, 0, NULL);
            if (rc == -ENODATA)
                rc = 0;
        }
        if (rc == 0)
            rc = fsd_rb_chmod(xd, inode, S_ISVTX);
        if (rc != 0 && rc != -ENOENT && rc != -ESTALE)
            vl_glog("rebalance", VL_LOG_WARNING, "%s: turning the marker "
                    "of '%s' back into its link file: %s", xd->name, name,
                    strerror(-rc));
    } else if (!is_committed && fd_d != NULL) {
        /* The source stays; so must no marker. */
        rc = fsd_rb_unlink(xd, dir, name, inode);
        if (rc != 0 && rc != -ENOENT)
            vl_glog("rebalance", VL_LOG_WARNING, "%s: removing the marker "
                    "of '%s': %s", xd->name, name, strerror(-rc));
    }
    vl_fd_unref(fd_s);
    vl_fd_unref(fd_d);
    return out;
}


/* Makes sure hashed xh has a link file of name pointing to src_name. */
int
fsd_rb_ensure_linkfile(vl_xlator_t *xh, vl_inode_t *dir, const char *name,
                       vl_inode_t *inode, const char *src_name)
{
    union vl_fop_args a = {0};
    struct vl_iatt ia;
    int rc;

    rc = fsd_rb_lookup(xh, dir, name, &ia);
    if (rc == 0 && (!vl_gfid_equal(&ia.gfid, &inode->gfid)
                    || fsd_rebal_classify(&ia) != FSD_RK_LINK))
        return -EEXIST;
    if (rc == -ENOENT) {
        a.mknod.loc.parent = dir;
        a.mknod.loc.name = name;
        a.mknod.loc.inode = inode;
        a.mknod.mode = S_IFREG | S_ISVTX;
        a.mknod.gfid = inode->gfid;
        rc = fsd_rb_call(xh, VL_FOP_MKNOD, &a, 0, NULL);
        if (rc == -EEXIST) {
            /* Another name of this hard-linked file already has its link
             * file there: this name becomes a hard link of it. */
            memset(&a, 0, sizeof(a));
            a.link.oldloc.inode = inode;
            a.link.newloc.parent = dir;
            a.link.newloc.name = name;
            rc = fsd_rb_call(xh, VL_FOP_LINK, &a, 0, NULL);
        }
    }
    if (rc == 0)
        rc = fsd_rb_setxattr(xh, inode, RB_LINKTO, src_name,
                             strlen(src_name) + 1);
    return rc;
}


/* Index of the subvolume called name (len bytes), or -1. */
static int
rb_sub_index(const struct fsd_rebal_io *io, const char *name, size_t len)
{
    for (size_t i = 0; i < io->n_subs; i++)
        if (strlen(io->subs[i]->name) == len
            && strncmp(io->subs[i]->name, name, len) == 0)
            return (int)i;
    return -1;
}


/* Asks distribute where name hashes: looks it up and reads
 * mortar.dht.pathinfo ("<cached>[ hashed=<h>][ linkto]") of the inode the
 * lookup was made with, then links it into *inode. Not of the linked
 * one: when the table already has the GFID (the file was met under
 * another name, then a client renamed it), that inode's distribute ctx
 * still says where the old name hashes, and the file went there. */
int
fsd_rb_hashed(const struct fsd_rebal_io *io, vl_inode_t *dir,
              const char *name, vl_inode_t **inode, int *hashed)
{
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    struct vl_iatt iatt;
    vl_inode_t *fresh = vl_inode_new(dir->table);
    const char *text;
    const char *h;
    int rc;

    *inode = NULL;
    if (fresh == NULL)
        return -ENOMEM;
    a.lookup.loc.parent = dir;
    a.lookup.loc.name = name;
    a.lookup.loc.inode = fresh;
    rc = fsd_rb_call(io->top, VL_FOP_LOOKUP, &a, 0, &r);
    iatt = r.iatt;
    vl_reply_clear(&r);
    if (rc != 0) {
        vl_inode_unref(fresh);
        return rc;
    }
    rc = fsd_rb_getxattr(io->top, fresh, RB_PATHINFO, &r);
    if (rc == 0) {
        *inode = vl_inode_link(fresh, &iatt);
        if (*inode == NULL)
            rc = -ENOMEM;
    }
    vl_inode_unref(fresh);
    if (rc == 0 && (r.xattr == NULL || r.count <= 0))
        rc = -EINVAL;
    if (rc == 0) {
        text = r.xattr;
        h = strstr(text, " hashed=");
        if (h != NULL) {
            h += strlen(" hashed=");
            *hashed = rb_sub_index(io, h, strcspn(h, " \n"));
        } else {
            *hashed = rb_sub_index(io, text, strcspn(text, " \n"));
        }
        if (*hashed < 0)
            rc = -EINVAL;
    }
    vl_reply_clear(&r);
    if (rc != 0) {
        vl_inode_unref(*inode);
        *inode = NULL;
    }
    return rc;
}


enum fsd_rebal_outcome
fsd_rebal_file(const struct fsd_rebal_io *io, vl_inode_t *dir,
               const char *name, const struct fsd_rebal_ent *ents,
               uint64_t *bytes, char *why, size_t why_len)
{
    enum fsd_rebal_outcome out = FSD_RO_IN_PLACE;
    vl_inode_t *inode = NULL;
    int src = -1;
    int n_data = 0;
    int hashed = -1;
    int rc;

    *bytes = 0;
    for (size_t i = 0; i < io->n_subs; i++) {
        if (ents[i].kind == FSD_RK_DATA || ents[i].kind == FSD_RK_OTHER) {
            n_data++;
            if (src < 0)
                src = (int)i;
        }
    }
    if (n_data == 0) {
        /* Only markers (a crashed run) or dangling link files. */
        for (size_t i = 0; i < io->n_subs; i++)
            if (ents[i].kind == FSD_RK_MARKER)
                fsd_rb_remove_special(io->subs[i], dir, name, &ents[i]);
        return FSD_RO_IN_PLACE;
    }
    rc = fsd_rb_hashed(io, dir, name, &inode, &hashed);
    if (rc == -ENOENT || rc == -ESTALE) {
        snprintf(why, why_len, "'%s': not found where it hashes (%s)",
                 name, strerror(-rc));
        return FSD_RO_IN_PLACE; /* removed since the listing (ESTALE: with
                                 * its directory) */
    }
    if (rc != 0) {
        snprintf(why, why_len, "'%s': where it hashes: %s", name,
                 strerror(-rc));
        return FSD_RO_FAILED;
    }
    if (dist_is_decommissioned(io->top, (unsigned)hashed)) {
        /* The layout distribute used still gives the name to a subvolume
         * being removed: moving nothing would leave it to the commit. */
        snprintf(why, why_len, "'%s' hashes to %s, which is being removed",
                 name, io->subs[hashed]->name);
        vl_inode_unref(inode);
        return FSD_RO_FAILED;
    }
    if (n_data > 1) {
        /* A crash after a commit: the copy on the hashed subvolume is the
         * committed one, the others are stale sources. */
        if ((ents[hashed].kind != FSD_RK_DATA
             && ents[hashed].kind != FSD_RK_OTHER)
            || !vl_gfid_equal(&ents[hashed].iatt.gfid, &inode->gfid)) {
            snprintf(why, why_len, "'%s' has data on %d subvolumes, none "
                     "of them committed on the hashed one", name, n_data);
            out = FSD_RO_FAILED;
            goto out;
        }
        for (size_t i = 0; i < io->n_subs; i++) {
            if ((int)i == hashed || (ents[i].kind != FSD_RK_DATA
                                     && ents[i].kind != FSD_RK_OTHER))
                continue;
            if (!vl_gfid_equal(&ents[i].iatt.gfid, &inode->gfid)) {
                snprintf(why, why_len, "'%s' on %s has another GFID", name,
                         io->subs[i]->name);
                out = FSD_RO_FAILED;
                continue;
            }
            if (ents[i].kind == FSD_RK_OTHER)
                rc = fsd_rb_stale_special(dir, name, inode, io->subs[i],
                                          io->subs[hashed], why, why_len);
            else
                rc = fsd_rb_stale_source(io, dir, name, inode, io->subs[i],
                                         io->subs[hashed], why, why_len);
            if (rc < 0)
                out = FSD_RO_FAILED;
        }
        src = hashed;
    } else if (src != hashed) {
        if (ents[src].kind == FSD_RK_OTHER) {
            out = fsd_rb_migrate_special(dir, name, inode, io->subs[src],
                                         io->subs[hashed], why, why_len);
        } else if (ents[src].iatt.nlink > 1) {
            snprintf(why, why_len, "'%s' on %s: skipped, hard-linked",
                     name, io->subs[src]->name);
            out = FSD_RO_SKIPPED;
        } else {
            out = rb_migrate(io, dir, name, inode, io->subs[src],
                             io->subs[hashed], bytes, why, why_len);
        }
        if (out == FSD_RO_SKIPPED) {
            /* It stays: the hashed subvolume must point at it. */
            rc = fsd_rb_ensure_linkfile(io->subs[hashed], dir, name, inode,
                                        io->subs[src]->name);
            if (rc != 0) {
                snprintf(why, why_len, "'%s' stays on %s but no link file "
                         "on %s: %s", name, io->subs[src]->name,
                         io->subs[hashed]->name, strerror(-rc));
                out = FSD_RO_FAILED;
            }
            goto out;
        }
        if (out != FSD_RO_MOVED)
            goto out;
        src = hashed;
    }
    /* The data is on the hashed subvolume: other subvolumes need no link
     * file or marker for it. Unless the layout says the name hashes
     * elsewhere (what distribute said of this inode came from a lookup
     * racing a client's rename): that subvolume's link file is the way to
     * the data, and stays. The layout is asked only when there is
     * something to remove: most names have no other entry. */
    {
        bool is_checked = false;
        int h = -1;

        for (size_t i = 0; i < io->n_subs; i++) {
            if ((int)i == src || (ents[i].kind != FSD_RK_LINK
                                  && ents[i].kind != FSD_RK_MARKER))
                continue;
            if (!is_checked) {
                if (fsd_rb_name_hashed(io, dir, name, &h) != 0 || h != src)
                    goto out;
                is_checked = true;
            }
            fsd_rb_remove_special(io->subs[i], dir, name, &ents[i]);
        }
    }
out:
    vl_inode_unref(inode);
    return out;
}
