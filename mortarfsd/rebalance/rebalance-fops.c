/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebalance-fops: the synchronous calls the migration makes on one
 * subvolume (protocol/client, or distribute for a few), and the copies
 * built on them: data (1 MiB chunks, holes skipped with SEEK_DATA/
 * SEEK_HOLE), xattrs (what storage/posix lets a client set; ACLs apart)
 * and attributes; the test fault points (MORTAR_REBAL_FAULT).
 * Intercepts nothing: every call is vl_sync_call with this process as
 * the caller. No per-inode/fd/request state of its own.
 * Threads: rebalance workers; the freeze owner counter is atomic.
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


/* Distinguishes this process's freezes (inodelk owners) from each other. */
static atomic_uint_fast64_t rb_next_owner = 1;


uint64_t
fsd_rb_owner(void)
{
    return ((uint64_t)getpid() << 32) | atomic_fetch_add(&rb_next_owner, 1);
}


static void
rb_caller(struct vl_caller *c, uint64_t owner)
{
    memset(c, 0, sizeof(*c));
    c->pid = VL_CALLER_PID_INTERNAL; /* root, exempt from root-squash */
    c->lk_owner = owner;
}


int
fsd_rb_call(vl_xlator_t *xl, vl_fop_t op, const union vl_fop_args *args,
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
int
fsd_rb_lookup(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
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
    rc = fsd_rb_call(xl, VL_FOP_LOOKUP, &a, 0, &r);
    if (rc == 0)
        *out = r.iatt;
    vl_reply_clear(&r);
    vl_inode_unref(fresh);
    return rc;
}


int
fsd_rb_open(vl_xlator_t *xl, vl_inode_t *inode, int flags, vl_fd_t **out)
{
    union vl_fop_args a = {0};
    vl_fd_t *fd = vl_fd_new(inode, flags, (uint32_t)getpid());
    int rc;

    if (fd == NULL)
        return -ENOMEM;
    a.open.loc.inode = inode;
    a.open.flags = flags;
    a.open.fd = fd;
    rc = fsd_rb_call(xl, VL_FOP_OPEN, &a, 0, NULL);
    if (rc != 0) {
        vl_fd_unref(fd);
        return rc;
    }
    *out = fd;
    return 0;
}


int
fsd_rb_setattr(vl_xlator_t *xl, vl_inode_t *inode, vl_fd_t *fd,
               const struct vl_iatt *attr, uint32_t valid)
{
    union vl_fop_args a = {0};

    a.setattr.loc.inode = inode;
    a.setattr.fd = fd;
    a.setattr.attr = *attr;
    a.setattr.valid = valid;
    return fsd_rb_call(xl, VL_FOP_SETATTR, &a, 0, NULL);
}


int
fsd_rb_truncate(vl_xlator_t *xl, vl_fd_t *fd, uint64_t size)
{
    struct vl_iatt attr = {.size = size};

    return fsd_rb_setattr(xl, fd->inode, fd, &attr, VL_SET_SIZE);
}


int
fsd_rb_chmod(vl_xlator_t *xl, vl_inode_t *inode, uint32_t mode)
{
    struct vl_iatt attr = {.mode = mode};

    return fsd_rb_setattr(xl, inode, NULL, &attr, VL_SET_MODE);
}


int
fsd_rb_setxattr(vl_xlator_t *xl, vl_inode_t *inode, const char *name,
                const void *value, size_t size)
{
    union vl_fop_args a = {0};

    a.setxattr.loc.inode = inode;
    a.setxattr.name = name;
    a.setxattr.value = value;
    a.setxattr.size = size;
    return fsd_rb_call(xl, VL_FOP_SETXATTR, &a, 0, NULL);
}


/* Value of xattr name (NULL lists names) into reply r. */
int
fsd_rb_getxattr(vl_xlator_t *xl, vl_inode_t *inode, const char *name,
                struct vl_reply *r)
{
    union vl_fop_args a = {0};

    a.getxattr.loc.inode = inode;
    a.getxattr.name = name;
    a.getxattr.size = RB_XATTR_LIST_MAX;
    return fsd_rb_call(xl, VL_FOP_GETXATTR, &a, 0, r);
}


int
fsd_rb_unlink(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
              vl_inode_t *inode)
{
    union vl_fop_args a = {0};

    a.unlink.loc.parent = dir;
    a.unlink.loc.name = name;
    a.unlink.loc.inode = inode;
    return fsd_rb_call(xl, VL_FOP_UNLINK, &a, 0, NULL);
}


/* An exclusive whole-inode inodelk in domain (cmd: take or release). */
static int
fsd_rb_inodelk(vl_xlator_t *xl, vl_inode_t *inode, const char *domain,
               enum vl_lock_cmd cmd, uint64_t owner)
{
    union vl_fop_args a = {0};

    a.inodelk.domain = domain;
    a.inodelk.loc.inode = inode;
    a.inodelk.cmd = cmd;
    a.inodelk.flock.type = cmd == VL_LOCK_UNLOCK ? F_UNLCK : F_WRLCK;
    a.inodelk.flock.whence = SEEK_SET;
    return fsd_rb_call(xl, VL_FOP_INODELK, &a, owner, NULL);
}


int
fsd_rb_freeze(vl_xlator_t *xl, vl_inode_t *inode, enum vl_lock_cmd cmd,
              uint64_t owner)
{
    return fsd_rb_inodelk(xl, inode, RB_FREEZE_DOMAIN, cmd, owner);
}


int
fsd_rb_volume_lock(const struct fsd_rebal_io *io, vl_inode_t *root,
                   uint64_t owner, bool *held, size_t *busy)
{
    for (size_t i = 0; i < io->n_subs; i++) {
        int rc = fsd_rb_inodelk(io->subs[i], root, RB_VOLUME_DOMAIN,
                                VL_LOCK_TRY, owner);

        held[i] = rc == 0;
        if (rc == -EAGAIN) {
            *busy = i;
            fsd_rb_volume_unlock(io, root, owner, held);
            return -EAGAIN;
        }
        if (rc != 0 && rc != -ENOTCONN && rc != -ENOSYS)
            vl_glog("rebalance", VL_LOG_WARNING, "migration lock on %s: %s",
                    io->subs[i]->name, strerror(-rc));
    }
    return 0;
}


void
fsd_rb_volume_unlock(const struct fsd_rebal_io *io, vl_inode_t *root,
                     uint64_t owner, bool *held)
{
    for (size_t i = io->n_subs; i-- > 0;)
        if (held[i]) {
            (void)fsd_rb_inodelk(io->subs[i], root, RB_VOLUME_DOMAIN,
                                 VL_LOCK_UNLOCK, owner);
            held[i] = false;
        }
}


/* Is the entry on xl really one of distribute's (it has a linkto)? A
 * user's empty sticky file is not, and is never removed. */
bool
fsd_rb_is_dht_file(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
                   const vl_gfid_t *gfid)
{
    struct vl_reply r = {0};
    vl_inode_t *inode = vl_inode_get(dir->table, gfid, S_IFREG);
    int rc;

    if (inode == NULL)
        return false;
    rc = fsd_rb_getxattr(xl, inode, RB_LINKTO, &r);
    vl_reply_clear(&r);
    vl_inode_unref(inode);
    (void)name;
    return rc == 0;
}


/* Removes a leftover link file or marker of name on xl. */
void
fsd_rb_remove_special(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
                      const struct fsd_rebal_ent *ent)
{
    vl_inode_t *inode;
    int rc;

    if (!fsd_rb_is_dht_file(xl, dir, name, &ent->iatt.gfid))
        return;
    inode = vl_inode_get(dir->table, &ent->iatt.gfid, S_IFREG);
    if (inode == NULL)
        return;
    rc = fsd_rb_unlink(xl, dir, name, inode);
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
        rc = fsd_rb_call(xs, VL_FOP_READ, &a, 0, &r);
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
        rc = fsd_rb_call(xd, VL_FOP_WRITE, &a, 0, NULL);
        off += (uint64_t)r.count;
        vl_reply_clear(&r);
        if (rc != 0)
            return rc;
    }
    return 0;
}


/* Copies the data regions of the first size bytes, then sets D's size.
 * With stop, gives up with -EINTR between regions once it is set. */
int
fsd_rb_copy_data(vl_xlator_t *xs, vl_fd_t *fd_s, vl_xlator_t *xd, vl_fd_t *fd_d,
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
        rc = fsd_rb_call(xs, VL_FOP_LSEEK, &a, 0, &r);
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
        rc = fsd_rb_call(xs, VL_FOP_LSEEK, &a, 0, &r);
        hole = rc == 0 ? (uint64_t)r.offset : size;
        if (hole > size || hole <= data)
            hole = size;
        rc = data < size ? rb_copy_range(xs, fd_s, xd, fd_d, data, hole) : 0;
        off = hole;
    }
    if (rc == 0)
        rc = fsd_rb_truncate(xd, fd_d, size);
    return rc;
}


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
int
fsd_rb_copy_xattrs(vl_xlator_t *xs, vl_xlator_t *xd, vl_inode_t *inode,
                   enum rb_xattr_set set)
{
    struct vl_reply list = {0};
    int rc;

    rc = fsd_rb_getxattr(xs, inode, NULL, &list);
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
        rc = fsd_rb_getxattr(xs, inode, key, &v);
        if (rc == 0)
            rc = fsd_rb_setxattr(xd, inode, key, v.xattr != NULL ? v.xattr : "",
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


/* Owner, mode, xattrs (ACLs included) and times of st (the source) onto
 * the same GFID on xd; times last, as the others move ctime only. */
int
fsd_rb_copy_attrs(vl_xlator_t *xs, vl_xlator_t *xd, vl_inode_t *inode,
                  const struct vl_iatt *st)
{
    int rc;

    rc = fsd_rb_setattr(xd, inode, NULL, st, VL_SET_UID | VL_SET_GID);
    /* chown clears setuid/setgid: the mode goes after it. */
    if (rc == 0 && !S_ISLNK(st->mode))
        rc = fsd_rb_chmod(xd, inode, st->mode & 07777);
    if (rc == 0)
        rc = fsd_rb_copy_xattrs(xs, xd, inode, RB_XA_PLAIN);
    if (rc == 0)
        rc = fsd_rb_copy_xattrs(xs, xd, inode, RB_XA_ACL);
    if (rc == 0)
        rc = fsd_rb_setattr(xd, inode, NULL, st, VL_SET_ATIME | VL_SET_MTIME);
    return rc;
}


/* Test fault points: with MORTAR_REBAL_FAULT=<point> in the environment
 * the process _exits at that step of the first migration that reaches it
 * (no cleanup, no state flush: a crash). Points: "before-commit" (the
 * marker is complete, linkto still set) and "after-commit" (the
 * destination is committed, the source not yet marked or unlinked);
 * rebalance-special.c and rebalance-hardlink.c add their own
 * (doc/rebalance.md, "Fault points"). Used by tests/functional/
 * rebal-special.t and rebal-hardlink.t. */
void
fsd_rb_fault(const char *point, const char *name, const vl_xlator_t *xs,
             const vl_xlator_t *xd)
{
    const char *want = getenv("MORTAR_REBAL_FAULT");

    if (want == NULL || strcmp(want, point) != 0)
        return;
    vl_glog("rebalance", VL_LOG_ERROR, "fault point %s at '%s' %s -> %s: "
            "exiting", point, name, xs->name, xd->name);
    _exit(RB_FAULT_EXIT);
}


void
fsd_rb_test_pause(const char *name, const char *point)
{
    const char *p = getenv("MORTAR_REBAL_FREEZE_PAUSE");
    size_t len = strlen(name);
    size_t plen = point != NULL ? strlen(point) : 0;

    /* NAME[@POINT]:MS[,...] */
    while (p != NULL && *p != '\0') {
        const char *colon = strchr(p, ':');
        const char *at;
        char *end = NULL;
        long ms;
        bool is_match;

        if (colon == NULL)
            return;
        ms = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || (*end != '\0' && *end != ','))
            return;
        at = memchr(p, '@', (size_t)(colon - p));
        is_match = (size_t)((at != NULL ? at : colon) - p) == len
                   && strncmp(p, name, len) == 0
                   && (at == NULL ? point == NULL
                                  : point != NULL
                                        && (size_t)(colon - at - 1) == plen
                                        && strncmp(at + 1, point, plen) == 0);
        if (is_match && ms > 0 && ms <= 60000) {
            vl_glog("rebalance", VL_LOG_WARNING, "pausing %ld ms %s '%s' "
                    "(MORTAR_REBAL_FREEZE_PAUSE)", ms,
                    point == NULL ? "under the freeze of" : "before the "
                                                             "freeze of",
                    name);
            usleep((useconds_t)ms * 1000);
            return;
        }
        p = *end == ',' ? end + 1 : end;
    }
}
