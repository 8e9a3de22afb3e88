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
 *   1. stat S; skip hard links; check D's free space;
 *   2. on D, create the name with the same GFID as a marker (mode
 *      S_ISVTX|S_ISGID, linkto=S), or turn a link file of the same GFID
 *      into one;
 *   3. copy the data (1 MiB chunks, holes skipped with SEEK_DATA/
 *      SEEK_HOLE) without the freeze; take the freeze (inodelk
 *      mortar.dht.migrate on S); copy everything again if S's size,
 *      mtime or ctime changed; fsync D;
 *   4. under the freeze: owner, times, user xattrs; remove linkto and set
 *      the real mode (the commit point); mark S migrated; unlink S;
 *      release the freeze.
 * Failure before the commit removes the marker; after it, the stale
 * source is unlinked by the next run.
 * Threads: rebalance workers; nothing shared but the graph.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsd.h"

#define RB_CHUNK (1 * VL_MiB)
#define RB_LINKTO "trusted.mortar.dht.linkto"
#define RB_PATHINFO "mortar.dht.pathinfo"
#define RB_MIGRATED "mortar.dht.migrated"
#define RB_FREEZE_DOMAIN "mortar.dht.migrate"
#define RB_MARKER_MODE (S_ISVTX | S_ISGID)
#define RB_XATTR_LIST_MAX (64 * 1024)

/* Distinguishes this process's freezes (inodelk owners) from each other. */
static atomic_uint_fast64_t rb_next_owner = 1;


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


static void
rb_caller(struct vl_caller *c, uint64_t owner)
{
    memset(c, 0, sizeof(*c));
    c->pid = (uint32_t)getpid();
    c->lk_owner = owner;
}


static int
rb_call(vl_xlator_t *xl, vl_fop_t op, const union vl_fop_args *args,
        uint64_t owner, struct vl_reply *reply)
{
    struct vl_caller caller;
    struct vl_reply tmp = {0};
    int rc;

    rb_caller(&caller, owner);
    rc = vl_sync_call(xl, op, args, &caller, reply != NULL ? reply : &tmp);
    vl_reply_clear(&tmp);
    return rc;
}


/* Looks name up on xl with a fresh inode (so a different GFID there is
 * reported, not refused). */
static int
rb_lookup(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
          struct vl_iatt *out)
{
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    vl_inode_t *fresh = vl_inode_new(dir->table);
    int rc;

    if (fresh == NULL)
        return -ENOMEM;
    a.lookup.loc.parent = dir;
    a.lookup.loc.name = name;
    a.lookup.loc.inode = fresh;
    rc = rb_call(xl, VL_FOP_LOOKUP, &a, 0, &r);
    if (rc == 0)
        *out = r.iatt;
    vl_reply_clear(&r);
    vl_inode_unref(fresh);
    return rc;
}


static int
rb_open(vl_xlator_t *xl, vl_inode_t *inode, int flags, vl_fd_t **out)
{
    union vl_fop_args a = {0};
    vl_fd_t *fd = vl_fd_new(inode, flags, (uint32_t)getpid());
    int rc;

    if (fd == NULL)
        return -ENOMEM;
    a.open.loc.inode = inode;
    a.open.flags = flags;
    a.open.fd = fd;
    rc = rb_call(xl, VL_FOP_OPEN, &a, 0, NULL);
    if (rc != 0) {
        vl_fd_unref(fd);
        return rc;
    }
    *out = fd;
    return 0;
}


static int
rb_setattr(vl_xlator_t *xl, vl_inode_t *inode, vl_fd_t *fd,
           const struct vl_iatt *attr, uint32_t valid)
{
    union vl_fop_args a = {0};

    a.setattr.loc.inode = inode;
    a.setattr.fd = fd;
    a.setattr.attr = *attr;
    a.setattr.valid = valid;
    return rb_call(xl, VL_FOP_SETATTR, &a, 0, NULL);
}


static int
rb_truncate(vl_xlator_t *xl, vl_fd_t *fd, uint64_t size)
{
    struct vl_iatt attr = {.size = size};

    return rb_setattr(xl, fd->inode, fd, &attr, VL_SET_SIZE);
}


static int
rb_chmod(vl_xlator_t *xl, vl_inode_t *inode, uint32_t mode)
{
    struct vl_iatt attr = {.mode = mode};

    return rb_setattr(xl, inode, NULL, &attr, VL_SET_MODE);
}


static int
rb_setxattr(vl_xlator_t *xl, vl_inode_t *inode, const char *name,
            const void *value, size_t size)
{
    union vl_fop_args a = {0};

    a.setxattr.loc.inode = inode;
    a.setxattr.name = name;
    a.setxattr.value = value;
    a.setxattr.size = size;
    return rb_call(xl, VL_FOP_SETXATTR, &a, 0, NULL);
}


/* Value of xattr name (NULL lists names) into reply r. */
static int
rb_getxattr(vl_xlator_t *xl, vl_inode_t *inode, const char *name,
            struct vl_reply *r)
{
    union vl_fop_args a = {0};

    a.getxattr.loc.inode = inode;
    a.getxattr.name = name;
    a.getxattr.size = RB_XATTR_LIST_MAX;
    return rb_call(xl, VL_FOP_GETXATTR, &a, 0, r);
}


static int
rb_unlink(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
          vl_inode_t *inode)
{
    union vl_fop_args a = {0};

    a.unlink.loc.parent = dir;
    a.unlink.loc.name = name;
    a.unlink.loc.inode = inode;
    return rb_call(xl, VL_FOP_UNLINK, &a, 0, NULL);
}


static int
rb_freeze(vl_xlator_t *xl, vl_inode_t *inode, enum vl_lock_cmd cmd,
          uint64_t owner)
{
    union vl_fop_args a = {0};

    a.inodelk.domain = RB_FREEZE_DOMAIN;
    a.inodelk.loc.inode = inode;
    a.inodelk.cmd = cmd;
    a.inodelk.flock.type = cmd == VL_LOCK_UNLOCK ? F_UNLCK : F_WRLCK;
    a.inodelk.flock.whence = SEEK_SET;
    return rb_call(xl, VL_FOP_INODELK, &a, owner, NULL);
}


/* Is the entry on xl really one of distribute's (it has a linkto)? A
 * user's empty sticky file is not, and is never removed. */
static bool
rb_is_dht_file(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
               const vl_gfid_t *gfid)
{
    struct vl_reply r = {0};
    vl_inode_t *inode = vl_inode_get(dir->table, gfid, S_IFREG);
    int rc;

    if (inode == NULL)
        return false;
    rc = rb_getxattr(xl, inode, RB_LINKTO, &r);
    vl_reply_clear(&r);
    vl_inode_unref(inode);
    (void)name;
    return rc == 0;
}


/* Removes a leftover link file or marker of name on xl. */
static void
rb_remove_special(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
                  const struct fsd_rebal_ent *ent)
{
    vl_inode_t *inode;
    int rc;

    if (!rb_is_dht_file(xl, dir, name, &ent->iatt.gfid))
        return;
    inode = vl_inode_get(dir->table, &ent->iatt.gfid, S_IFREG);
    if (inode == NULL)
        return;
    rc = rb_unlink(xl, dir, name, inode);
    vl_inode_unref(inode);
    vl_glog("rebalance", rc == 0 ? VL_LOG_INFO : VL_LOG_WARNING,
            "%s: removing stale %s of '%s': %s", xl->name,
            ent->kind == FSD_RK_MARKER ? "marker" : "link file", name,
            rc == 0 ? "done" : strerror(-rc));
}


/* Copies [off, end) from fd_s to fd_d in chunks. */
static int
rb_copy_range(vl_xlator_t *xs, vl_fd_t *fd_s, vl_xlator_t *xd, vl_fd_t *fd_d,
              uint64_t off, uint64_t end)
{
    while (off < end) {
        union vl_fop_args a = {0};
        struct vl_reply r = {0};
        struct iovec iov;
        int rc;

        a.read.fd = fd_s;
        a.read.offset = (off_t)off;
        a.read.size = (size_t)(end - off < RB_CHUNK ? end - off : RB_CHUNK);
        rc = rb_call(xs, VL_FOP_READ, &a, 0, &r);
        if (rc != 0 || r.count <= 0) {
            vl_reply_clear(&r);
            return rc; /* 0 at EOF: the file shrank, pass 2 sees it */
        }
        iov.iov_base = (void *)r.data;
        iov.iov_len = (size_t)r.count;
        memset(&a, 0, sizeof(a));
        a.write.fd = fd_d;
        a.write.iov = &iov;
        a.write.n_iov = 1;
        a.write.offset = (off_t)off;
        a.write.buf = r.buf;
        rc = rb_call(xd, VL_FOP_WRITE, &a, 0, NULL);
        off += (uint64_t)r.count;
        vl_reply_clear(&r);
        if (rc != 0)
            return rc;
    }
    return 0;
}


/* Copies the data regions of the first size bytes, then sets D's size.
 * With stop, gives up with -EINTR between regions once it is set. */
static int
rb_copy_data(vl_xlator_t *xs, vl_fd_t *fd_s, vl_xlator_t *xd, vl_fd_t *fd_d,
             uint64_t size, const atomic_bool *stop)
{
    uint64_t off = 0;
    int rc = 0;

    while (rc == 0 && off < size) {
        union vl_fop_args a = {0};
        struct vl_reply r = {0};
        uint64_t data;
        uint64_t hole;

        if (stop != NULL && atomic_load(stop))
            return -EINTR;
        a.lseek.fd = fd_s;
        a.lseek.offset = (off_t)off;
        a.lseek.whence = SEEK_DATA;
        rc = rb_call(xs, VL_FOP_LSEEK, &a, 0, &r);
        if (rc == -ENXIO) {
            rc = 0;
            break; /* only a hole is left */
        }
        if (rc != 0) {
            /* No sparse support below: copy the rest as it is. */
            rc = rb_copy_range(xs, fd_s, xd, fd_d, off, size);
            break;
        }
        data = (uint64_t)r.offset;
        a.lseek.offset = (off_t)data;
        a.lseek.whence = SEEK_HOLE;
        vl_reply_clear(&r);
        rc = rb_call(xs, VL_FOP_LSEEK, &a, 0, &r);
        hole = rc == 0 ? (uint64_t)r.offset : size;
        if (hole > size || hole <= data)
            hole = size;
        rc = data < size ? rb_copy_range(xs, fd_s, xd, fd_d, data, hole) : 0;
        off = hole;
    }
    if (rc == 0)
        rc = rb_truncate(xd, fd_d, size);
    return rc;
}


/* Step 2: the marker on D, open for writing in *fd_d. *is_ours says
 * whether a failure must remove it again. */
static int
rb_dest_prepare(vl_xlator_t *xd, vl_inode_t *dir, const char *name,
                vl_inode_t *inode, const char *src_name, vl_fd_t **fd_d,
                char *why, size_t why_len)
{
    struct vl_iatt ia;
    struct fsd_rebal_ent ent;
    int rc;

    rc = rb_lookup(xd, dir, name, &ia);
    if (rc == 0) {
        ent.kind = fsd_rebal_classify(&ia);
        ent.iatt = ia;
        if ((ent.kind == FSD_RK_LINK || ent.kind == FSD_RK_MARKER)
            && vl_gfid_equal(&ia.gfid, &inode->gfid)) {
            /* Distribute's own file for this GFID: reuse it. */
            rc = rb_open(xd, inode, O_RDWR, fd_d);
            if (rc == 0)
                rc = rb_truncate(xd, *fd_d, 0);
            if (rc == 0)
                rc = rb_chmod(xd, inode, RB_MARKER_MODE);
            goto linkto;
        }
        if ((ent.kind == FSD_RK_LINK || ent.kind == FSD_RK_MARKER)
            && rb_is_dht_file(xd, dir, name, &ia.gfid)) {
            rb_remove_special(xd, dir, name, &ent);
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
        rc = rb_call(xd, VL_FOP_CREATE, &a, 0, NULL);
        if (rc != 0)
            vl_fd_unref(fd);
        else
            *fd_d = fd;
    }
linkto:
    if (rc == 0)
        rc = rb_setxattr(xd, inode, RB_LINKTO, src_name,
                         strlen(src_name) + 1);
    if (rc != 0)
        snprintf(why, why_len, "marker of '%s' on %s: %s", name, xd->name,
                 strerror(-rc));
    return rc;
}


/* Copies the user.* xattrs of the source to the destination. */
static int
rb_copy_xattrs(vl_xlator_t *xs, vl_xlator_t *xd, vl_inode_t *inode)
{
    struct vl_reply list = {0};
    int rc;

    rc = rb_getxattr(xs, inode, NULL, &list);
    if (rc != 0) {
        vl_reply_clear(&list);
        return rc == -ENOTSUP || rc == -ENODATA ? 0 : rc;
    }
    for (int64_t off = 0; rc == 0 && list.xattr != NULL && off < list.count;
         off += (int64_t)strlen(list.xattr + off) + 1) {
        const char *key = list.xattr + off;
        struct vl_reply v = {0};

        if (strncmp(key, "user.", 5) != 0)
            continue;
        rc = rb_getxattr(xs, inode, key, &v);
        if (rc == 0)
            rc = rb_setxattr(xd, inode, key, v.xattr != NULL ? v.xattr : "",
                             (size_t)v.count);
        else if (rc == -ENODATA)
            rc = 0; /* removed meanwhile */
        vl_reply_clear(&v);
    }
    vl_reply_clear(&list);
    return rc;
}


static bool
rb_changed(const struct vl_iatt *a, const struct vl_iatt *b)
{
    return a->size != b->size || a->mtime != b->mtime
           || a->mtime_ns != b->mtime_ns || a->ctime != b->ctime
           || a->ctime_ns != b->ctime_ns;
}


/* Steps 1-4 for inode (name in dir) from xs to xd. */
static enum fsd_rebal_outcome
rb_migrate(const struct fsd_rebal_io *io, vl_inode_t *dir, const char *name,
           vl_inode_t *inode, vl_xlator_t *xs, vl_xlator_t *xd,
           uint64_t *bytes, char *why, size_t why_len)
{
    uint64_t owner = ((uint64_t)getpid() << 32) | atomic_fetch_add(
                                                      &rb_next_owner, 1);
    enum fsd_rebal_outcome out = FSD_RO_FAILED;
    bool is_frozen = false;
    bool is_committed = false;
    vl_fd_t *fd_s = NULL;
    vl_fd_t *fd_d = NULL;
    struct vl_iatt st1;
    struct vl_iatt st2;
    struct vl_iatt attr;
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    const char *step;
    int rc;

    /* 1. The source as it is now. */
    step = "stat source";
    rc = rb_lookup(xs, dir, name, &st1);
    if (rc == -ENOENT
        || (rc == 0 && !vl_gfid_equal(&st1.gfid, &inode->gfid)))
        return FSD_RO_IN_PLACE; /* removed or replaced since the listing */
    if (rc != 0)
        goto fail;
    if (!S_ISREG(st1.mode) || st1.nlink > 1)
        return FSD_RO_SKIPPED;
    step = "statfs destination";
    a.statfs.loc.inode = dir;
    rc = rb_call(xd, VL_FOP_STATFS, &a, 0, &r);
    if (rc != 0)
        goto fail;
    if ((uint64_t)r.statvfs.f_bavail * r.statvfs.f_frsize
        < st1.size + RB_CHUNK) {
        vl_reply_clear(&r);
        snprintf(why, why_len, "'%s': not enough free space on %s", name,
                 xd->name);
        return FSD_RO_FAILED;
    }
    vl_reply_clear(&r);

    /* 2. The marker on the destination. */
    rc = rb_dest_prepare(xd, dir, name, inode, xs->name, &fd_d, why,
                         why_len);
    if (rc != 0)
        goto out;
    step = "open source";
    rc = rb_open(xs, inode, O_RDONLY, &fd_s);
    if (rc != 0)
        goto fail;

    /* 3. Copy, freeze, copy again if it changed meanwhile, fsync. */
    step = "copy";
    rc = rb_copy_data(xs, fd_s, xd, fd_d, st1.size, io->stop);
    if (rc == -EINTR) {
        out = FSD_RO_STOPPED;
        goto out;
    }
    if (rc != 0)
        goto fail;
    step = "freeze";
    rc = rb_freeze(xs, inode, VL_LOCK_WAIT, owner);
    if (rc != 0)
        goto fail;
    is_frozen = true;
    step = "stat source under the freeze";
    memset(&a, 0, sizeof(a));
    a.stat.loc.inode = inode;
    a.stat.fd = fd_s;
    rc = rb_call(xs, VL_FOP_STAT, &a, 0, &r);
    st2 = r.iatt;
    vl_reply_clear(&r);
    if (rc != 0)
        goto fail;
    if (rb_changed(&st1, &st2)) {
        step = "copy under the freeze";
        rc = rb_copy_data(xs, fd_s, xd, fd_d, st2.size, NULL);
        if (rc != 0)
            goto fail;
    }
    step = "fsync destination";
    memset(&a, 0, sizeof(a));
    a.fsync.fd = fd_d;
    rc = rb_call(xd, VL_FOP_FSYNC, &a, 0, NULL);
    if (rc != 0)
        goto fail;

    /* 4. Attributes, then the commit: real mode, no linkto. */
    step = "attributes";
    attr = st2;
    rc = rb_setattr(xd, inode, NULL, &attr, VL_SET_UID | VL_SET_GID);
    if (rc == 0)
        rc = rb_setattr(xd, inode, NULL, &attr,
                        VL_SET_ATIME | VL_SET_MTIME);
    if (rc == 0)
        rc = rb_copy_xattrs(xs, xd, inode);
    if (rc != 0)
        goto fail;
    step = "commit";
    memset(&a, 0, sizeof(a));
    a.removexattr.loc.inode = inode;
    a.removexattr.name = RB_LINKTO;
    rc = rb_call(xd, VL_FOP_REMOVEXATTR, &a, 0, NULL);
    if (rc == 0)
        rc = rb_chmod(xd, inode, st2.mode & 07777);
    if (rc != 0)
        goto fail;
    is_committed = true;
    *bytes = st2.size;
    out = FSD_RO_MOVED;
    /* Open fds on the source now answer EREMCHG, also the writes the
     * freeze holds; then the old name goes. */
    rc = rb_setxattr(xs, inode, RB_MIGRATED, xd->name, strlen(xd->name));
    if (rc != 0)
        vl_glog("rebalance", VL_LOG_WARNING, "%s: marking '%s' migrated: "
                "%s", xs->name, name, strerror(-rc));
    rc = rb_unlink(xs, dir, name, inode);
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
        rc = rb_freeze(xs, inode, VL_LOCK_UNLOCK, owner);
        if (rc != 0)
            vl_glog("rebalance", VL_LOG_WARNING, "%s: releasing the freeze "
                    "of '%s': %s", xs->name, name, strerror(-rc));
    }
    vl_fd_unref(fd_s);
    vl_fd_unref(fd_d);
    if (!is_committed && fd_d != NULL) {
        /* The source stays; so must no marker. */
        rc = rb_unlink(xd, dir, name, inode);
        if (rc != 0 && rc != -ENOENT)
            vl_glog("rebalance", VL_LOG_WARNING, "%s: removing the marker "
                    "of '%s': %s", xd->name, name, strerror(-rc));
    }
    return out;
}


/* Makes sure hashed xh has a link file of name pointing to src_name. */
static int
rb_ensure_linkfile(vl_xlator_t *xh, vl_inode_t *dir, const char *name,
                   vl_inode_t *inode, const char *src_name)
{
    union vl_fop_args a = {0};
    struct vl_iatt ia;
    int rc;

    rc = rb_lookup(xh, dir, name, &ia);
    if (rc == 0 && (!vl_gfid_equal(&ia.gfid, &inode->gfid)
                    || fsd_rebal_classify(&ia) != FSD_RK_LINK))
        return -EEXIST;
    if (rc == -ENOENT) {
        a.mknod.loc.parent = dir;
        a.mknod.loc.name = name;
        a.mknod.loc.inode = inode;
        a.mknod.mode = S_IFREG | S_ISVTX;
        a.mknod.gfid = inode->gfid;
        rc = rb_call(xh, VL_FOP_MKNOD, &a, 0, NULL);
        if (rc == -EEXIST) {
            /* Another name of this hard-linked file already has its link
             * file there: this name becomes a hard link of it. */
            memset(&a, 0, sizeof(a));
            a.link.oldloc.inode = inode;
            a.link.newloc.parent = dir;
            a.link.newloc.name = name;
            rc = rb_call(xh, VL_FOP_LINK, &a, 0, NULL);
        }
    }
    if (rc == 0)
        rc = rb_setxattr(xh, inode, RB_LINKTO, src_name,
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


/* Asks distribute where name hashes: looks it up (linking *inode) and
 * reads mortar.dht.pathinfo ("<cached>[ hashed=<h>][ linkto]"). */
static int
rb_hashed(const struct fsd_rebal_io *io, vl_inode_t *dir, const char *name,
          vl_inode_t **inode, int *hashed)
{
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    vl_inode_t *fresh = vl_inode_new(dir->table);
    const char *text;
    const char *h;
    int rc;

    if (fresh == NULL)
        return -ENOMEM;
    a.lookup.loc.parent = dir;
    a.lookup.loc.name = name;
    a.lookup.loc.inode = fresh;
    rc = rb_call(io->top, VL_FOP_LOOKUP, &a, 0, &r);
    if (rc == 0) {
        *inode = vl_inode_link(fresh, &r.iatt);
        if (*inode == NULL)
            rc = -ENOMEM;
    }
    vl_inode_unref(fresh);
    vl_reply_clear(&r);
    if (rc != 0)
        return rc;
    rc = rb_getxattr(io->top, *inode, RB_PATHINFO, &r);
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
                rb_remove_special(io->subs[i], dir, name, &ents[i]);
        return FSD_RO_IN_PLACE;
    }
    rc = rb_hashed(io, dir, name, &inode, &hashed);
    if (rc == -ENOENT)
        return FSD_RO_IN_PLACE; /* removed since the listing */
    if (rc != 0) {
        snprintf(why, why_len, "'%s': where it hashes: %s", name,
                 strerror(-rc));
        return FSD_RO_FAILED;
    }
    if (n_data > 1) {
        /* A crash after a commit: the copy on the hashed subvolume is the
         * committed one, the others are stale sources. */
        if (ents[hashed].kind != FSD_RK_DATA
            || !vl_gfid_equal(&ents[hashed].iatt.gfid, &inode->gfid)) {
            snprintf(why, why_len, "'%s' has data on %d subvolumes, none "
                     "of them committed on the hashed one", name, n_data);
            out = FSD_RO_FAILED;
            goto out;
        }
        for (size_t i = 0; i < io->n_subs; i++) {
            if ((int)i == hashed || ents[i].kind != FSD_RK_DATA)
                continue;
            if (!vl_gfid_equal(&ents[i].iatt.gfid, &inode->gfid)) {
                snprintf(why, why_len, "'%s' on %s has another GFID", name,
                         io->subs[i]->name);
                out = FSD_RO_FAILED;
                continue;
            }
            rc = rb_unlink(io->subs[i], dir, name, inode);
            vl_glog("rebalance", VL_LOG_INFO, "%s: removing the stale "
                    "source of '%s': %s", io->subs[i]->name, name,
                    rc == 0 ? "done" : strerror(-rc));
        }
        src = hashed;
    } else if (src != hashed) {
        if (ents[src].kind == FSD_RK_OTHER || ents[src].iatt.nlink > 1) {
            out = FSD_RO_SKIPPED;
        } else {
            out = rb_migrate(io, dir, name, inode, io->subs[src],
                             io->subs[hashed], bytes, why, why_len);
        }
        if (out == FSD_RO_SKIPPED) {
            /* It stays: the hashed subvolume must point at it. */
            rc = rb_ensure_linkfile(io->subs[hashed], dir, name, inode,
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
     * file or marker for it. */
    for (size_t i = 0; i < io->n_subs; i++) {
        if ((int)i != src && (ents[i].kind == FSD_RK_LINK
                              || ents[i].kind == FSD_RK_MARKER))
            rb_remove_special(io->subs[i], dir, name, &ents[i]);
    }
out:
    vl_inode_unref(inode);
    return out;
}
