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
 * Failure before the commit removes the marker; after it, the next run
 * finds the stale source and compares it with the commit stamp: unlinked
 * if untouched, copied over the committed copy again if writes reached
 * it after the commit (rb_stale_source). Symlinks, devices, fifos and
 * sockets are recreated on D with the same GFID and their attributes
 * (rb_migrate_special). MORTAR_REBAL_FAULT makes the process exit at a
 * named step (rb_fault), for tests.
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

#include "fsd.h"

#define RB_CHUNK (1 * VL_MiB)
#define RB_LINKTO "trusted.mortar.dht.linkto"
#define RB_PATHINFO "mortar.dht.pathinfo"
#define RB_MIGRATED "mortar.dht.migrated"
#define RB_FREEZE_DOMAIN "mortar.dht.migrate"
#define RB_MARKER_MODE (S_ISVTX | S_ISGID)
#define RB_XATTR_LIST_MAX (64 * 1024)
#define RB_STAMP "trusted.mortar.dht.rebal-src"
#define RB_FAULT_EXIT 70 /* _exit status at a fault point */

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


/* Which xattrs rb_copy_xattrs copies. ACLs are apart because setting
 * system.posix_acl_access also sets the group bits of the mode, which
 * would turn a marker (mode exactly S_ISVTX|S_ISGID) into what looks like
 * a data file before the commit. */
enum rb_xattr_set {
    RB_XA_PLAIN, /* everything a client may set, but the ACLs */
    RB_XA_ACL,   /* system.posix_acl_* only */
};


/* Is key one that the migration copies (of set)? Every xattr storage/posix
 * lets a client set: user.*, trusted.* (but the brick's and distribute's
 * own trusted.mortar.*, which are never listed anyway), security.*
 * (capabilities, labels) and system.posix_acl_*. */
static bool
rb_xattr_is_copied(const char *key, enum rb_xattr_set set)
{
    bool is_acl = strncmp(key, "system.posix_acl_", 17) == 0;

    if (set == RB_XA_ACL)
        return is_acl;
    if (is_acl)
        return false;
    if (strncmp(key, "trusted.mortar.", 15) == 0)
        return false;
    return strncmp(key, "user.", 5) == 0 || strncmp(key, "trusted.", 8) == 0
           || strncmp(key, "security.", 9) == 0;
}


/* Copies the xattrs of set from the source to the destination (the same
 * GFID on both). Any failure fails the migration: a file that lost its
 * ACL or capability on the way is not the same file. */
static int
rb_copy_xattrs(vl_xlator_t *xs, vl_xlator_t *xd, vl_inode_t *inode,
               enum rb_xattr_set set)
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

        if (!rb_xattr_is_copied(key, set))
            continue;
        rc = rb_getxattr(xs, inode, key, &v);
        if (rc == 0)
            rc = rb_setxattr(xd, inode, key, v.xattr != NULL ? v.xattr : "",
                             (size_t)v.count);
        else if (rc == -ENODATA)
            rc = 0; /* removed meanwhile */
        if (rc != 0)
            vl_glog("rebalance", VL_LOG_WARNING, "copying xattr %s %s -> "
                    "%s: %s", key, xs->name, xd->name, strerror(-rc));
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


/* Test fault points: with MORTAR_REBAL_FAULT=<point> in the environment
 * the process _exits at that step of the first migration that reaches it
 * (no cleanup, no state flush: a crash). Points: "before-commit" (the
 * marker is complete, linkto still set) and "after-commit" (the
 * destination is committed, the source not yet marked or unlinked).
 * Used by tests/functional/rebal-special.t. */
static void
rb_fault(const char *point, const char *name, const vl_xlator_t *xs,
         const vl_xlator_t *xd)
{
    const char *want = getenv("MORTAR_REBAL_FAULT");

    if (want == NULL || strcmp(want, point) != 0)
        return;
    vl_glog("rebalance", VL_LOG_ERROR, "fault point %s at '%s' %s -> %s: "
            "exiting", point, name, xs->name, xd->name);
    _exit(RB_FAULT_EXIT);
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


/* Would xd stay above min-free-disk with size more bytes (and a chunk of
 * slack)? -ENOSPC with why saying so, 0, or -errno of the statfs. */
static int
rb_space_check(const struct fsd_rebal_io *io, vl_xlator_t *xd,
               vl_inode_t *dir, uint64_t size, char *why, size_t why_len)
{
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    uint64_t avail;
    uint64_t total;
    uint64_t need;
    double pct;
    int rc;

    a.statfs.loc.inode = dir;
    rc = rb_call(xd, VL_FOP_STATFS, &a, 0, &r);
    avail = (uint64_t)r.statvfs.f_bavail * r.statvfs.f_frsize;
    total = (uint64_t)r.statvfs.f_blocks * r.statvfs.f_frsize;
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
    return 0;
}


/* The source's size, mtime and ctime at the commit, kept on the committed
 * destination: after a crash between the commit and the unlink of the
 * source, the next run tells an untouched stale source (unlinked) from
 * one that writes reached after the commit (copied again). */
struct rb_stamp {
    uint64_t size;       /* st_size */
    int64_t mtime;       /* seconds */
    uint32_t mtime_ns;
    int64_t ctime;       /* seconds */
    uint32_t ctime_ns;
};


static int
rb_stamp_set(vl_xlator_t *xd, vl_inode_t *inode, const struct vl_iatt *st)
{
    char v[128];
    int len;

    len = snprintf(v, sizeof(v), "%" PRIu64 " %" PRId64 ".%09" PRIu32 " %"
                   PRId64 ".%09" PRIu32, st->size, (int64_t)st->mtime,
                   (uint32_t)st->mtime_ns, (int64_t)st->ctime,
                   (uint32_t)st->ctime_ns);
    return rb_setxattr(xd, inode, RB_STAMP, v, (size_t)len);
}


/* -ENODATA when xd's copy has no stamp (a file committed by an older
 * run), -EINVAL when it is garbled. */
static int
rb_stamp_get(vl_xlator_t *xd, vl_inode_t *inode, struct rb_stamp *out)
{
    struct vl_reply r = {0};
    char v[128];
    int rc;

    rc = rb_getxattr(xd, inode, RB_STAMP, &r);
    if (rc == 0 && (r.xattr == NULL || r.count <= 0
                    || (size_t)r.count >= sizeof(v)))
        rc = -EINVAL;
    if (rc == 0) {
        memcpy(v, r.xattr, (size_t)r.count);
        v[r.count] = '\0';
        if (sscanf(v, "%" SCNu64 " %" SCNd64 ".%" SCNu32 " %" SCNd64 ".%"
                   SCNu32, &out->size, &out->mtime, &out->mtime_ns,
                   &out->ctime, &out->ctime_ns) != 5)
            rc = -EINVAL;
    }
    vl_reply_clear(&r);
    return rc;
}


static bool
rb_stamp_matches(const struct rb_stamp *sp, const struct vl_iatt *st,
                 bool with_ctime)
{
    return sp->size == st->size && sp->mtime == (int64_t)st->mtime
           && sp->mtime_ns == (uint32_t)st->mtime_ns
           && (!with_ctime || (sp->ctime == (int64_t)st->ctime
                               && sp->ctime_ns == (uint32_t)st->ctime_ns));
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
    if (!S_ISREG(st1.mode) || st1.nlink > 1) {
        snprintf(why, why_len, "'%s' on %s: skipped, %s", name, xs->name,
                 S_ISREG(st1.mode) ? "hard-linked" : "no longer a file");
        return FSD_RO_SKIPPED;
    }
    step = "statfs destination";
    rc = rb_space_check(io, xd, dir, st1.size, why, why_len);
    if (rc == -ENOSPC) {
        char tmp[256];

        snprintf(tmp, sizeof(tmp), "%s", why);
        snprintf(why, why_len, "'%s' on %s: skipped for space: %s", name,
                 xs->name, tmp);
        return FSD_RO_SKIPPED;
    }
    if (rc != 0)
        goto fail;

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
        rc = rb_copy_xattrs(xs, xd, inode, RB_XA_PLAIN);
    if (rc == 0)
        rc = rb_stamp_set(xd, inode, &st2);
    if (rc != 0)
        goto fail;
    rb_fault("before-commit", name, xs, xd);
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
    rb_fault("after-commit", name, xs, xd);
    /* ACLs only now (see enum rb_xattr_set); they set the same mode. A
     * failure leaves the data moved but is reported. */
    rc = rb_copy_xattrs(xs, xd, inode, RB_XA_ACL);
    if (rc != 0) {
        snprintf(why, why_len, "'%s' %s -> %s: moved, but copying its ACL "
                 "failed: %s", name, xs->name, xd->name, strerror(-rc));
        out = FSD_RO_FAILED;
    }
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


/* Owner, mode, xattrs (ACLs included) and times of st (the source) onto
 * the same GFID on xd; times last, as the others move ctime only. */
static int
rb_copy_attrs(vl_xlator_t *xs, vl_xlator_t *xd, vl_inode_t *inode,
              const struct vl_iatt *st)
{
    int rc;

    rc = rb_setattr(xd, inode, NULL, st, VL_SET_UID | VL_SET_GID);
    /* chown clears setuid/setgid: the mode goes after it. */
    if (rc == 0 && !S_ISLNK(st->mode))
        rc = rb_chmod(xd, inode, st->mode & 07777);
    if (rc == 0)
        rc = rb_copy_xattrs(xs, xd, inode, RB_XA_PLAIN);
    if (rc == 0)
        rc = rb_copy_xattrs(xs, xd, inode, RB_XA_ACL);
    if (rc == 0)
        rc = rb_setattr(xd, inode, NULL, st, VL_SET_ATIME | VL_SET_MTIME);
    return rc;
}


/* A symlink, device, fifo or socket from xs to xd: recreated on xd with
 * the same GFID (the commit point: lookups on the hashed subvolume find
 * it), its attributes copied, the source unlinked. A crash in between
 * leaves two copies of the GFID; the next run copies the attributes again
 * and unlinks the source (fsd_rebal_file). Nothing to freeze: there is no
 * data, and a client cannot write to these through the volume. */
static enum fsd_rebal_outcome
rb_migrate_special(vl_inode_t *dir, const char *name, vl_inode_t *inode,
                   vl_xlator_t *xs, vl_xlator_t *xd, char *why,
                   size_t why_len)
{
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    struct vl_iatt st;
    struct vl_iatt ia;
    char *target = NULL;
    bool is_created = false;
    const char *step = "lookup source";
    int rc;

    rc = rb_lookup(xs, dir, name, &st);
    if (rc == -ENOENT || (rc == 0 && !vl_gfid_equal(&st.gfid, &inode->gfid)))
        return FSD_RO_IN_PLACE;
    if (rc != 0)
        goto fail;
    if (S_ISREG(st.mode) || S_ISDIR(st.mode))
        return FSD_RO_IN_PLACE; /* replaced meanwhile: next run */
    if (st.nlink > 1) {
        snprintf(why, why_len, "'%s' on %s: skipped, hard-linked", name,
                 xs->name);
        return FSD_RO_SKIPPED;
    }
    if (S_ISLNK(st.mode)) {
        step = "readlink";
        a.readlink.loc.inode = inode;
        a.readlink.size = 4096;
        rc = rb_call(xs, VL_FOP_READLINK, &a, 0, &r);
        if (rc == 0 && r.link == NULL)
            rc = -EIO;
        if (rc == 0) {
            target = strdup(r.link); /* r.link is libvol's (vl_free) */
            if (target == NULL)
                rc = -ENOMEM;
        }
        vl_reply_clear(&r);
        if (rc != 0)
            goto fail;
    }

    /* A link file of ours may be there (an older run skipped these). */
    step = "lookup destination";
    rc = rb_lookup(xd, dir, name, &ia);
    if (rc == 0) {
        struct fsd_rebal_ent ent = {.kind = fsd_rebal_classify(&ia),
                                    .iatt = ia};

        if ((ent.kind != FSD_RK_LINK && ent.kind != FSD_RK_MARKER)
            || !rb_is_dht_file(xd, dir, name, &ia.gfid)) {
            rc = -EEXIST;
            goto fail;
        }
        rb_remove_special(xd, dir, name, &ent);
    } else if (rc != -ENOENT) {
        goto fail;
    }

    step = "create";
    memset(&a, 0, sizeof(a));
    if (target != NULL) {
        a.symlink.loc.parent = dir;
        a.symlink.loc.name = name;
        a.symlink.loc.inode = inode;
        a.symlink.target = target;
        a.symlink.gfid = inode->gfid;
        rc = rb_call(xd, VL_FOP_SYMLINK, &a, 0, NULL);
    } else {
        a.mknod.loc.parent = dir;
        a.mknod.loc.name = name;
        a.mknod.loc.inode = inode;
        a.mknod.mode = st.mode;
        a.mknod.rdev = st.rdev;
        a.mknod.gfid = inode->gfid;
        rc = rb_call(xd, VL_FOP_MKNOD, &a, 0, NULL);
    }
    if (rc != 0)
        goto fail;
    is_created = true;
    step = "attributes";
    rc = rb_copy_attrs(xs, xd, inode, &st);
    if (rc != 0)
        goto fail;
    rb_fault("special-created", name, xs, xd);
    rc = rb_unlink(xs, dir, name, inode);
    if (rc != 0 && rc != -ENOENT)
        vl_glog("rebalance", VL_LOG_WARNING, "%s: unlinking moved '%s': %s "
                "(the next run removes it)", xs->name, name, strerror(-rc));
    free(target);
    return FSD_RO_MOVED;

fail:
    snprintf(why, why_len, "'%s' %s -> %s: %s: %s", name, xs->name, xd->name,
             step, strerror(-rc));
    if (is_created) {
        /* The source stays the one copy. */
        rc = rb_unlink(xd, dir, name, inode);
        if (rc != 0 && rc != -ENOENT)
            vl_glog("rebalance", VL_LOG_WARNING, "%s: removing the new copy "
                    "of '%s': %s", xd->name, name, strerror(-rc));
    }
    free(target);
    return FSD_RO_FAILED;
}


/* Copies the stale source xs over the committed copy on xh again (writes
 * reached xs after the commit, see struct rb_stamp), both frozen, then
 * marks xs migrated and unlinks it. */
static int
rb_recopy(vl_inode_t *dir, const char *name, vl_inode_t *inode,
          vl_xlator_t *xs, vl_xlator_t *xh, const char **step)
{
    uint64_t owner = ((uint64_t)getpid() << 32) | atomic_fetch_add(
                                                      &rb_next_owner, 1);
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    vl_fd_t *fd_s = NULL;
    vl_fd_t *fd_h = NULL;
    bool is_frozen_s = false;
    bool is_frozen_h = false;
    struct vl_iatt st;
    int rc;

    *step = "freeze";
    rc = rb_freeze(xs, inode, VL_LOCK_WAIT, owner);
    is_frozen_s = rc == 0;
    if (rc == 0)
        rc = rb_freeze(xh, inode, VL_LOCK_WAIT, owner);
    is_frozen_h = is_frozen_s && rc == 0;
    if (rc != 0)
        goto out;
    *step = "open";
    rc = rb_open(xs, inode, O_RDONLY, &fd_s);
    if (rc == 0)
        rc = rb_open(xh, inode, O_RDWR, &fd_h);
    if (rc != 0)
        goto out;
    *step = "stat source under the freeze";
    a.stat.loc.inode = inode;
    a.stat.fd = fd_s;
    rc = rb_call(xs, VL_FOP_STAT, &a, 0, &r);
    st = r.iatt;
    vl_reply_clear(&r);
    if (rc != 0)
        goto out;
    *step = "copy";
    rc = rb_copy_data(xs, fd_s, xh, fd_h, st.size, NULL);
    if (rc == 0) {
        memset(&a, 0, sizeof(a));
        a.fsync.fd = fd_h;
        rc = rb_call(xh, VL_FOP_FSYNC, &a, 0, NULL);
    }
    if (rc != 0)
        goto out;
    *step = "attributes";
    rc = rb_copy_attrs(xs, xh, inode, &st);
    if (rc == 0)
        rc = rb_stamp_set(xh, inode, &st);
    if (rc != 0)
        goto out;
    *step = "unlink";
    rc = rb_setxattr(xs, inode, RB_MIGRATED, xh->name, strlen(xh->name));
    if (rc != 0)
        vl_glog("rebalance", VL_LOG_WARNING, "%s: marking '%s' migrated: "
                "%s", xs->name, name, strerror(-rc));
    rc = rb_unlink(xs, dir, name, inode);
out:
    vl_fd_unref(fd_s);
    vl_fd_unref(fd_h);
    if (is_frozen_h)
        rb_freeze(xh, inode, VL_LOCK_UNLOCK, owner);
    if (is_frozen_s)
        rb_freeze(xs, inode, VL_LOCK_UNLOCK, owner);
    return rc;
}


#define RB_CONFLICT_SUFFIX ".rebal-conflict"


/* Both copies of name changed after an interrupted migration: the stale
 * one on xs (size bytes) becomes a new file name.rebal-conflict (a new
 * GFID, created through distribute, so it is an ordinary file of the
 * volume) and is unlinked on xs: nothing is lost and the name is no
 * longer listed twice. */
static int
rb_save_conflict(const struct fsd_rebal_io *io, vl_inode_t *dir,
                 const char *name, vl_inode_t *inode, vl_xlator_t *xs,
                 const struct vl_iatt *st, char *saved, size_t saved_len)
{
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    vl_inode_t *fresh = NULL;
    vl_inode_t *linked = NULL;
    vl_fd_t *fd_n = NULL;
    vl_fd_t *fd_s = NULL;
    int rc;

    if ((size_t)snprintf(saved, saved_len, "%s%s", name, RB_CONFLICT_SUFFIX)
        >= saved_len || strlen(saved) > 255)
        return -ENAMETOOLONG;
    fresh = vl_inode_new(dir->table);
    if (fresh != NULL)
        fd_n = vl_fd_new(fresh, O_RDWR, (uint32_t)getpid());
    if (fd_n == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    a.create.loc.parent = dir;
    a.create.loc.name = saved;
    a.create.loc.inode = fresh;
    a.create.flags = O_RDWR | O_CREAT | O_EXCL;
    a.create.mode = S_IFREG | (st->mode & 0777);
    a.create.umask = 0;
    vl_gfid_generate(&a.create.gfid);
    a.create.fd = fd_n;
    rc = rb_call(io->top, VL_FOP_CREATE, &a, 0, &r);
    if (rc == 0) {
        linked = vl_inode_link(fresh, &r.iatt);
        if (linked == NULL)
            rc = -ENOMEM;
    }
    vl_reply_clear(&r);
    if (rc != 0)
        goto out;
    /* fd_n is on fresh, which the link above gave its GFID. */
    rc = rb_setattr(io->top, linked, fd_n, st, VL_SET_UID | VL_SET_GID);
    if (rc == 0)
        rc = rb_open(xs, inode, O_RDONLY, &fd_s);
    if (rc == 0)
        rc = rb_copy_data(xs, fd_s, io->top, fd_n, st->size, NULL);
    if (rc == 0) {
        memset(&a, 0, sizeof(a));
        a.fsync.fd = fd_n;
        rc = rb_call(io->top, VL_FOP_FSYNC, &a, 0, NULL);
    }
    if (rc == 0)
        rc = rb_unlink(xs, dir, name, inode);
out:
    vl_fd_unref(fd_s);
    vl_fd_unref(fd_n);
    vl_inode_unref(linked);
    vl_inode_unref(fresh);
    return rc;
}


/* A stale source of name on xs beside the committed copy on hashed xh
 * (same GFID: a crash between the commit and the source's unlink). If
 * the source is as it was at the commit, it goes. If writes reached it
 * afterwards (the freeze's queued writes run when the dead rebalance's
 * connection drops) and the committed copy is untouched, the source is
 * copied over it again. If both changed, neither is destroyed: the file
 * fails and the source's data is kept as NAME.rebal-conflict. */
static int
rb_stale_source(const struct fsd_rebal_io *io, vl_inode_t *dir,
                const char *name, vl_inode_t *inode, vl_xlator_t *xs,
                vl_xlator_t *xh, char *why, size_t why_len)
{
    struct rb_stamp sp;
    struct vl_iatt st_s;
    struct vl_iatt st_h;
    const char *step = "lookup";
    int rc;

    rc = rb_lookup(xs, dir, name, &st_s);
    if (rc == -ENOENT)
        return 0;
    if (rc == 0 && !vl_gfid_equal(&st_s.gfid, &inode->gfid)) {
        snprintf(why, why_len, "'%s' on %s has another GFID", name,
                 xs->name);
        return -EEXIST;
    }
    if (rc == 0)
        rc = rb_lookup(xh, dir, name, &st_h);
    if (rc != 0)
        goto fail;
    rc = rb_stamp_get(xh, inode, &sp);
    if (rc == 0 && !rb_stamp_matches(&sp, &st_s, true)) {
        if (!rb_stamp_matches(&sp, &st_h, false)) {
            char saved[300];

            rc = rb_save_conflict(io, dir, name, inode, xs, &st_s, saved,
                                  sizeof(saved));
            if (rc == 0)
                snprintf(why, why_len, "'%s': both copies changed after an "
                         "interrupted migration; the one on %s is the file, "
                         "the one on %s was saved as '%s'", name, xh->name,
                         xs->name, saved);
            else
                snprintf(why, why_len, "'%s': both copies changed after an "
                         "interrupted migration; the one on %s is the file, "
                         "the one on %s stays there (saving it failed: %s)",
                         name, xh->name, xs->name, strerror(-rc));
            return -EBUSY;
        }
        vl_glog("rebalance", VL_LOG_INFO, "%s: '%s' was written after its "
                "commit on %s: copying it again", xs->name, name, xh->name);
        rc = rb_recopy(dir, name, inode, xs, xh, &step);
        if (rc != 0)
            goto fail;
        return 1;
    }
    if (rc != 0 && rc != -ENODATA)
        vl_glog("rebalance", VL_LOG_WARNING, "%s: commit stamp of '%s': %s",
                xh->name, name, strerror(-rc));
    step = "unlink";
    rc = rb_unlink(xs, dir, name, inode);
    if (rc != 0 && rc != -ENOENT)
        goto fail;
    vl_glog("rebalance", VL_LOG_INFO, "%s: removed the stale source of "
            "'%s'", xs->name, name);
    return 0;

fail:
    snprintf(why, why_len, "'%s': stale source on %s: %s: %s", name,
             xs->name, step, strerror(-rc));
    return rc;
}


/* A stale symlink/device/fifo/socket on xs beside the copy on hashed xh
 * (a crash during rb_migrate_special): attributes again, then unlink. */
static int
rb_stale_special(vl_inode_t *dir, const char *name, vl_inode_t *inode,
                 vl_xlator_t *xs, vl_xlator_t *xh, char *why, size_t why_len)
{
    struct vl_iatt st;
    const char *step = "lookup";
    int rc;

    rc = rb_lookup(xs, dir, name, &st);
    if (rc == -ENOENT)
        return 0;
    if (rc == 0 && !vl_gfid_equal(&st.gfid, &inode->gfid))
        rc = -EEXIST;
    if (rc == 0) {
        step = "attributes";
        rc = rb_copy_attrs(xs, xh, inode, &st);
    }
    if (rc == 0) {
        step = "unlink";
        rc = rb_unlink(xs, dir, name, inode);
    }
    if (rc != 0 && rc != -ENOENT) {
        snprintf(why, why_len, "'%s': stale copy on %s: %s: %s", name,
                 xs->name, step, strerror(-rc));
        return rc;
    }
    vl_glog("rebalance", VL_LOG_INFO, "%s: removed the stale copy of '%s'",
            xs->name, name);
    return 0;
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
                rc = rb_stale_special(dir, name, inode, io->subs[i],
                                      io->subs[hashed], why, why_len);
            else
                rc = rb_stale_source(io, dir, name, inode, io->subs[i],
                                     io->subs[hashed], why, why_len);
            if (rc < 0)
                out = FSD_RO_FAILED;
        }
        src = hashed;
    } else if (src != hashed) {
        if (ents[src].kind == FSD_RK_OTHER) {
            out = rb_migrate_special(dir, name, inode, io->subs[src],
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
