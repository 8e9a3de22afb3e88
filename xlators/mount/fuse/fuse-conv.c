/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-conv: pure conversions between libvol's types and the kernel's FUSE
 * structures. No I/O, no locks, no allocation: unit-tested directly
 * (test/test-fuse-conv.c).
 *
 * Intercepts: nothing (helpers only).
 * Threads:    any; every function is reentrant.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fuse.h"

/* struct fuse_file_lock's "to end of file". */
#define VFUSE_OFFSET_MAX INT64_MAX


void
vfuse_ms_to_timeout(uint64_t ms, uint64_t *sec, uint32_t *nsec)
{
    *sec = ms / 1000;
    *nsec = (uint32_t)((ms % 1000) * 1000000);
}


/* The kernel decodes fuse_attr.rdev with new_decode_dev(); glibc's dev_t
 * uses another layout, so go through major/minor. */
uint32_t
vfuse_dev_encode(uint64_t rdev)
{
    uint32_t maj = major(rdev);
    uint32_t min = minor(rdev);

    return (min & 0xff) | ((maj & 0xfff) << 8) | ((min & ~0xffu) << 12);
}


uint64_t
vfuse_dev_decode(uint32_t dev)
{
    uint32_t maj = (dev & 0xfff00) >> 8;
    uint32_t min = (dev & 0xff) | ((dev >> 12) & 0xfff00);

    return makedev(maj, min);
}


void
vfuse_attr_from_iatt(struct fuse_attr *out, const struct vl_iatt *iatt)
{
    memset(out, 0, sizeof(*out));
    out->ino = iatt->ino != 0 ? iatt->ino : vl_gfid_to_ino(&iatt->gfid);
    out->size = iatt->size;
    out->blocks = iatt->blocks;
    out->atime = (uint64_t)iatt->atime;
    out->mtime = (uint64_t)iatt->mtime;
    out->ctime = (uint64_t)iatt->ctime;
    out->atimensec = iatt->atime_ns;
    out->mtimensec = iatt->mtime_ns;
    out->ctimensec = iatt->ctime_ns;
    out->mode = iatt->mode;
    out->nlink = iatt->nlink;
    out->uid = iatt->uid;
    out->gid = iatt->gid;
    out->rdev = vfuse_dev_encode(iatt->rdev);
    /* 0 would make the kernel fall back to PAGE_SIZE; keep the brick's
     * preference when it gave one. */
    out->blksize = iatt->blksize;
}


/* FATTR_FH and FATTR_LOCKOWNER only say which extra fields are valid; they
 * change nothing themselves. The kernel sends ATIME together with
 * ATIME_NOW for "now", so the _NOW form wins. */
uint32_t
vfuse_setattr_valid(uint32_t fattr)
{
    uint32_t valid = 0;

    if (fattr & FATTR_MODE)
        valid |= VL_SET_MODE;
    if (fattr & FATTR_UID)
        valid |= VL_SET_UID;
    if (fattr & FATTR_GID)
        valid |= VL_SET_GID;
    if (fattr & FATTR_SIZE)
        valid |= VL_SET_SIZE;
    if (fattr & FATTR_ATIME_NOW)
        valid |= VL_SET_ATIME_NOW;
    else if (fattr & FATTR_ATIME)
        valid |= VL_SET_ATIME;
    if (fattr & FATTR_MTIME_NOW)
        valid |= VL_SET_MTIME_NOW;
    else if (fattr & FATTR_MTIME)
        valid |= VL_SET_MTIME;
    if (fattr & FATTR_CTIME)
        valid |= VL_SET_CTIME;
    if (fattr & FATTR_KILL_SUIDGID)
        valid |= VL_SET_KILL_SUIDGID;
    return valid;
}


void
vfuse_setattr_from_in(const struct fuse_setattr_in *in,
                      struct vl_iatt *attr, uint32_t *valid)
{
    memset(attr, 0, sizeof(*attr));
    *valid = vfuse_setattr_valid(in->valid);
    attr->mode = in->mode;
    attr->uid = in->uid;
    attr->gid = in->gid;
    attr->size = in->size;
    attr->atime = (int64_t)in->atime;
    attr->atime_ns = in->atimensec;
    attr->mtime = (int64_t)in->mtime;
    attr->mtime_ns = in->mtimensec;
    attr->ctime = (int64_t)in->ctime;
    attr->ctime_ns = in->ctimensec;
}


size_t
vfuse_dirent_size(size_t namelen, bool plus)
{
    return plus ? FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET_DIRENTPLUS + namelen)
                : FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + namelen);
}


bool
vfuse_is_dot_or_dotdot(const char *name)
{
    return name[0] == '.'
           && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}


static void
vfuse_dirent_fill(struct fuse_dirent *d, const struct vl_dirent *ent,
                  size_t namelen, size_t rec)
{
    /* Zero the record first: the alignment padding goes to the kernel. */
    memset(d, 0, rec);
    d->ino = ent->ino;
    d->off = (uint64_t)ent->off;
    d->namelen = (uint32_t)namelen;
    d->type = ent->type;
    memcpy(d->name, ent->name, namelen);
}


/* Returns the bytes written, or 0 when the entry does not fit in room. */
size_t
vfuse_dirent_pack(char *buf, size_t room, const struct vl_dirent *ent)
{
    size_t namelen = strlen(ent->name);
    size_t rec = vfuse_dirent_size(namelen, false);

    if (rec > room)
        return 0;
    vfuse_dirent_fill((struct fuse_dirent *)(void *)buf, ent, namelen, rec);
    return rec;
}


size_t
vfuse_direntplus_pack(char *buf, size_t room, const struct vl_dirent *ent,
                      const struct fuse_entry_out *entry)
{
    size_t namelen = strlen(ent->name);
    size_t rec = vfuse_dirent_size(namelen, true);
    struct fuse_direntplus *dp = (struct fuse_direntplus *)(void *)buf;

    if (rec > room)
        return 0;
    memset(dp, 0, sizeof(dp->entry_out));
    dp->entry_out = *entry;
    vfuse_dirent_fill(&dp->dirent, ent, namelen,
                      rec - offsetof(struct fuse_direntplus, dirent));
    return rec;
}


/* FUSE locks give an inclusive end; libvol a length with 0 = to EOF. */
int
vfuse_flock_from_fuse(const struct fuse_file_lock *lk, struct vl_flock *out)
{
    memset(out, 0, sizeof(*out));
    if (lk->type != F_RDLCK && lk->type != F_WRLCK && lk->type != F_UNLCK)
        return -EINVAL;
    if (lk->start > (uint64_t)VFUSE_OFFSET_MAX || lk->end < lk->start)
        return -EINVAL;
    out->type = (int16_t)lk->type;
    out->whence = SEEK_SET;
    out->start = (int64_t)lk->start;
    if (lk->end >= (uint64_t)VFUSE_OFFSET_MAX)
        out->len = 0;
    else
        out->len = (int64_t)(lk->end - lk->start + 1);
    out->pid = (int32_t)lk->pid;
    return 0;
}


void
vfuse_flock_to_fuse(const struct vl_flock *fl, struct fuse_file_lock *out)
{
    memset(out, 0, sizeof(*out));
    out->type = (uint32_t)fl->type;
    out->start = (uint64_t)fl->start;
    if (fl->len <= 0)
        out->end = (uint64_t)VFUSE_OFFSET_MAX;
    else
        out->end = (uint64_t)fl->start + (uint64_t)fl->len - 1;
    out->pid = (uint32_t)fl->pid;
}


/* What we ask for in INIT; the reply carries want & what the kernel
 * offered. No splice (measured no better), no FUSE_EXPORT_SUPPORT (nodeids
 * are pointers and cannot be looked up after a forget), no SETXATTR_EXT
 * (we implement no ACL translation that would use it). With the acl
 * option, FUSE_POSIX_ACL: the kernel (which always checks, the mount
 * asks for default_permissions) then evaluates each object's
 * system.posix_acl_access, fetched once and cached, so an ACL that grants
 * more than the mode bits works through the mount; the bricks
 * (features/access) check the same ACLs again. No
 * READDIRPLUS_AUTO unless asked: with it the kernel sends READDIRPLUS
 * only for a directory's first batch (or after a lookup in it), and each
 * name of a later batch costs a LOOKUP when it is used; always-plus was
 * measured equal or fewer requests on every listing workload. With
 * readdirplus off, no READDIRPLUS at all: names-only listings, which
 * cost the bricks no stat per entry (storage/posix-dir.c). */
uint64_t
vfuse_init_want(const struct vfuse_conf *conf)
{
    uint64_t want = FUSE_ASYNC_READ | FUSE_POSIX_LOCKS | FUSE_ATOMIC_O_TRUNC
                    | FUSE_BIG_WRITES | FUSE_FLOCK_LOCKS | FUSE_AUTO_INVAL_DATA
                    | FUSE_ASYNC_DIO | FUSE_PARALLEL_DIROPS | FUSE_MAX_PAGES
                    | FUSE_HANDLE_KILLPRIV_V2 | FUSE_INIT_EXT;

    if (conf->is_writeback)
        want |= FUSE_WRITEBACK_CACHE;
    /* Without DO_READDIRPLUS the kernel sends READDIR only, and AUTO
     * would mean nothing. */
    if (conf->is_rdplus)
        want |= FUSE_DO_READDIRPLUS;
    if (conf->is_rdplus && conf->is_rdplus_auto)
        want |= FUSE_READDIRPLUS_AUTO;
    if (conf->is_acl)
        want |= FUSE_POSIX_ACL;
    return want;
}
