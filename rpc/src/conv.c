/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conv: conversions between libvol's structs and their XDR forms, shared
 * by protocol/client and protocol/server so that both sides agree field
 * by field. Threads: pure functions.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "vrpc.h"


void
vrpc_gfid_to_xdr(const vl_gfid_t *in, mrt_gfid out)
{
    memcpy(out, in->bytes, 16);
}


void
vrpc_gfid_from_xdr(const mrt_gfid in, vl_gfid_t *out)
{
    memcpy(out->bytes, in, 16);
}


void
vrpc_iatt_to_xdr(const struct vl_iatt *in, mrt_iatt *out)
{
    vrpc_gfid_to_xdr(&in->gfid, out->gfid);
    out->ino = in->ino;
    out->mode = in->mode;
    out->nlink = in->nlink;
    out->uid = in->uid;
    out->gid = in->gid;
    out->rdev = in->rdev;
    out->size = in->size;
    out->blocks = in->blocks;
    out->blksize = in->blksize;
    out->atime = in->atime;
    out->mtime = in->mtime;
    out->ctime = in->ctime;
    out->atime_ns = in->atime_ns;
    out->mtime_ns = in->mtime_ns;
    out->ctime_ns = in->ctime_ns;
}


void
vrpc_iatt_from_xdr(const mrt_iatt *in, struct vl_iatt *out)
{
    vrpc_gfid_from_xdr(in->gfid, &out->gfid);
    out->ino = in->ino;
    out->mode = in->mode;
    out->nlink = in->nlink;
    out->uid = in->uid;
    out->gid = in->gid;
    out->rdev = in->rdev;
    out->size = in->size;
    out->blocks = in->blocks;
    out->blksize = in->blksize;
    out->atime = in->atime;
    out->mtime = in->mtime;
    out->ctime = in->ctime;
    out->atime_ns = in->atime_ns;
    out->mtime_ns = in->mtime_ns;
    out->ctime_ns = in->ctime_ns;
}


void
vrpc_flock_to_xdr(const struct vl_flock *in, mrt_flock *out)
{
    out->type = in->type;
    out->whence = in->whence;
    out->start = in->start;
    out->len = in->len;
    out->pid = in->pid;
}


void
vrpc_flock_from_xdr(const mrt_flock *in, struct vl_flock *out)
{
    out->type = (int16_t)in->type;
    out->whence = (int16_t)in->whence;
    out->start = in->start;
    out->len = in->len;
    out->pid = in->pid;
}


void
vrpc_loc_to_xdr(const struct vl_loc *in, mrt_loc *out)
{
    memset(out, 0, sizeof(*out));
    if (in->parent != NULL)
        vrpc_gfid_to_xdr(&in->parent->gfid, out->parent);
    out->name = (char *)(in->name != NULL ? in->name : "");
    if (in->inode != NULL)
        vrpc_gfid_to_xdr(&in->inode->gfid, out->gfid);
}


void
vrpc_statvfs_to_xdr(const struct statvfs *in, mrt_statfs_rsp *out)
{
    out->bsize = in->f_bsize;
    out->frsize = in->f_frsize;
    out->blocks = in->f_blocks;
    out->bfree = in->f_bfree;
    out->bavail = in->f_bavail;
    out->files = in->f_files;
    out->ffree = in->f_ffree;
    out->favail = in->f_favail;
    out->fsid = in->f_fsid;
    out->flag = in->f_flag;
    out->namemax = in->f_namemax;
}


void
vrpc_statvfs_from_xdr(const mrt_statfs_rsp *in, struct statvfs *out)
{
    memset(out, 0, sizeof(*out));
    out->f_bsize = in->bsize;
    out->f_frsize = in->frsize;
    out->f_blocks = in->blocks;
    out->f_bfree = in->bfree;
    out->f_bavail = in->bavail;
    out->f_files = in->files;
    out->f_ffree = in->ffree;
    out->f_favail = in->favail;
    out->f_fsid = in->fsid;
    out->f_flag = in->flag;
    out->f_namemax = in->namemax;
}


bool
vrpc_name_ok(const char *name)
{
    return name != NULL && name[0] != '\0' && strchr(name, '/') == NULL
           && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}


/* ---- names over the wire's bounds (vrpc_args_bound_errno) ---- */

/* A reader over arguments that did not decode. */
struct bound_rd {
    const char *p;
    size_t len;
    size_t pos;
};


static bool
bound_skip(struct bound_rd *r, size_t n)
{
    if (r->len - r->pos < n)
        return false;
    r->pos += n;
    return true;
}


/* Skips an XDR string of any length, all of it in the record; its length
 * in *n. false if the record ends first. */
static bool
bound_str(struct bound_rd *r, uint32_t *n)
{
    uint32_t be;
    uint64_t padded;

    if (r->len - r->pos < 4)
        return false;
    memcpy(&be, r->p + r->pos, 4);
    *n = ntohl(be);
    padded = ((uint64_t)*n + 3) & ~(uint64_t)3;
    if (padded > r->len - r->pos - 4)
        return false;
    r->pos += 4 + (size_t)padded;
    return true;
}


/* One mrt_loc: -ENAMETOOLONG if its name is over MRT_NAME_MAX, 0 if it
 * fits, 1 if the record ends inside it. */
static int
bound_loc(struct bound_rd *r)
{
    uint32_t n;

    if (!bound_skip(r, 16) || !bound_str(r, &n))
        return 1;
    if (n > MRT_NAME_MAX)
        return -ENAMETOOLONG;
    return bound_skip(r, 16) ? 0 : 1;
}


int
vrpc_args_bound_errno(vl_fop_t op, const char *body, size_t len)
{
    struct bound_rd r = {.p = body, .len = len};
    uint32_t n;
    int rc;

    switch (op) {
    case VL_FOP_INODELK:
    case VL_FOP_ENTRYLK:
        /* The lock domain comes before the loc. */
        if (!bound_str(&r, &n) || n > MRT_NAME_MAX)
            return 0;
        break;
    case VL_FOP_LOOKUP:
    case VL_FOP_STAT:
    case VL_FOP_SETATTR:
    case VL_FOP_ACCESS:
    case VL_FOP_READLINK:
    case VL_FOP_MKNOD:
    case VL_FOP_MKDIR:
    case VL_FOP_UNLINK:
    case VL_FOP_RMDIR:
    case VL_FOP_SYMLINK:
    case VL_FOP_RENAME:
    case VL_FOP_LINK:
    case VL_FOP_CREATE:
    case VL_FOP_OPEN:
    case VL_FOP_OPENDIR:
    case VL_FOP_STATFS:
    case VL_FOP_SETXATTR:
    case VL_FOP_GETXATTR:
    case VL_FOP_REMOVEXATTR:
    case VL_FOP_XATTROP:
        break;
    default:
        return 0; /* no loc first */
    }
    rc = bound_loc(&r);
    if (rc == 0 && (op == VL_FOP_RENAME || op == VL_FOP_LINK))
        rc = bound_loc(&r);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    switch (op) {
    case VL_FOP_SYMLINK:
        if (bound_str(&r, &n) && n > MRT_PATH_MAX)
            return -ENAMETOOLONG;
        break;
    case VL_FOP_SETXATTR:
    case VL_FOP_GETXATTR:
    case VL_FOP_REMOVEXATTR:
        if (bound_str(&r, &n) && n > MRT_XATTR_NAME_MAX)
            return -ERANGE;
        break;
    default:
        break;
    }
    return 0;
}
