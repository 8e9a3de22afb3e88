/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conv: conversions between libvol's structs and their XDR forms, shared
 * by protocol/client and protocol/server so that both sides agree field
 * by field. Threads: pure functions.
 */
#include "config.h"

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
