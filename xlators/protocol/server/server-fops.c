/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * server-fops: turns one MRT_FOPS_PROG call into a request for the child
 * and its answer into the reply.
 *
 * Decoding: the XDR arguments are decoded from the record in place;
 * names stay in the decoded struct, WRITE data stays in the record's
 * vl_buf (args.write.buf), so nothing is copied. Wire GFIDs become inodes
 * with vl_inode_get; wire fd numbers become the client's vl_fd_t. Input
 * is hostile: names are checked, fd numbers looked up, the WRITE size
 * must match the bytes that follow.
 * Per call: struct server_call (below), freed after the reply is sent.
 * Threads: decoding on the loop thread that read the record; the reply is
 *          encoded and sent from whichever thread answers the request.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "server.h"

#define CALL_MAX_INODES 6
#define CALL_MAX_FDS 2

struct server_call {
    struct server_client *cl;      /* owned ref */
    uint32_t xid;                  /* to answer */
    vl_fop_t op;                   /* the fop */
    const struct vrpc_fop_desc *desc; /* wire types of op */
    vl_buf_t *rec;                 /* owned ref; backs WRITE data */
    union vrpc_fop_wargs wa;       /* decoded args (XDR-owned memory) */
    bool has_wa;                   /* wa must be xdr_free'd */
    vl_inode_t *inodes[CALL_MAX_INODES]; /* owned refs used by locs */
    int n_inodes;
    bool is_fresh[CALL_MAX_INODES]; /* inode was created unlinked */
    vl_fd_t *fds[CALL_MAX_FDS];    /* owned refs used by args */
    int n_fds;
    vl_fd_t *new_fd;               /* owned ref; open/create/opendir */
    struct iovec iov;              /* WRITE data, into rec */
    bool is_xattr_wanted;          /* LOOKUP asked for an xattr */
    /* OPENDIR with a listing: the readdirplus after the open. */
    uint32_t list_size;            /* bytes asked for; 0 = no listing */
    uint32_t list_content_max;     /* its content_max */
    bool is_listed;                /* the readdirplus ran: reply from it */
    struct vl_iatt open_iatt;      /* the open's answer, kept for it */
    uint64_t open_fd_no;           /* the new fd's number, kept for it */
    /* XATTROP: the arrays its args point to (into wa). */
    const char *xo_names[MRT_XATTROP_MAX];
    const void *xo_values[MRT_XATTROP_MAX];
    uint32_t xo_sizes[MRT_XATTROP_MAX];
    /* Compound procedures (protocol 8): what args.xop or args.unlock
     * point to; xop's arrays are xo_* above (the lock has none). */
    bool is_cpd;                   /* a compound procedure (8) */
    bool is_lookup_xop;            /* LOOKUP_XOP (9): args.lookup.xop is
                                      cpd_xop */
    struct vl_xattrop_args cpd_xop; /* a lock's carried xattrop */
    struct vl_xattrop_unlock cpd_unlock; /* an xattrop's carried unlock */
};

/* The most a listing with the open may ask for (posix caps a readdir's
 * records and content at 256 KiB anyway). */
#define CALL_LIST_SIZE_MAX (256u * 1024u)

/* What a loc must carry. */
#define LOC_ENTRY (1u << 0)  /* parent + valid name */
#define LOC_INODE (1u << 1)  /* object gfid */
#define LOC_FRESH (1u << 2)  /* fresh inode when gfid is null */
#define LOC_PARENT (1u << 3) /* parent, name optional */


static vl_inode_t *
call_keep_inode(struct server_call *call, vl_inode_t *inode, bool fresh)
{
    call->is_fresh[call->n_inodes] = fresh;
    call->inodes[call->n_inodes++] = inode;
    return inode;
}


/* Builds loc from the wire loc; 0, -EINVAL (bad input) or -ENOMEM. */
static int
call_loc(struct server_call *call, const mrt_loc *w, struct vl_loc *loc,
         unsigned need)
{
    vl_inode_table_t *it = call->cl->priv->xl->graph->itable;
    vl_gfid_t parent, gfid;
    bool has_name = w->name != NULL && w->name[0] != '\0';
    vl_inode_t *in;

    memset(loc, 0, sizeof(*loc));
    vrpc_gfid_from_xdr(w->parent, &parent);
    vrpc_gfid_from_xdr(w->gfid, &gfid);
    if (call->n_inodes + 2 > CALL_MAX_INODES)
        return -EINVAL;
    if ((need & LOC_ENTRY) && (vl_gfid_is_null(&parent) || !has_name))
        return -EINVAL;
    if ((need & LOC_PARENT) && vl_gfid_is_null(&parent))
        return -EINVAL;
    if (has_name && !vrpc_name_ok(w->name))
        return -EINVAL;
    if (has_name && vl_gfid_is_null(&parent))
        return -EINVAL;
    if ((need & LOC_INODE) && vl_gfid_is_null(&gfid))
        return -EINVAL;
    if (!vl_gfid_is_null(&parent)) {
        in = vl_inode_get(it, &parent, S_IFDIR);
        if (in == NULL)
            return -ENOMEM;
        loc->parent = call_keep_inode(call, in, false);
        loc->name = has_name ? w->name : NULL;
    }
    if (!vl_gfid_is_null(&gfid)) {
        in = vl_inode_get(it, &gfid, 0);
        if (in == NULL)
            return -ENOMEM;
        loc->inode = call_keep_inode(call, in, false);
    } else if (need & LOC_FRESH) {
        in = vl_inode_new(it);
        if (in == NULL)
            return -ENOMEM;
        loc->inode = call_keep_inode(call, in, true);
    }
    return 0;
}


/* The client's fd with wire number no (ref kept by the call). */
static int
call_fd(struct server_call *call, uint64_t no, struct vl_fd **out)
{
    vl_fd_t *fd = server_fd_get(call->cl, no);

    if (fd == NULL)
        return -EBADF;
    call->fds[call->n_fds++] = fd;
    *out = fd;
    return 0;
}


/* A fresh fd for open/create/opendir on loc->inode. */
static int
call_new_fd(struct server_call *call, vl_inode_t *inode, int32_t flags,
            uint32_t pid, struct vl_fd **out)
{
    call->new_fd = vl_fd_new(inode, flags, pid);
    if (call->new_fd == NULL)
        return -ENOMEM;
    *out = call->new_fd;
    return 0;
}


static int call_fill_xattrop_keys(struct server_call *call,
                                  const mrt_xattrop_args *w,
                                  struct vl_xattrop_args *a);


/* XATTROP: by fd or by gfid; the keys' bounds (count, name and value
 * lengths) were enforced by the decoder, the rest is checked here. */
static int
call_fill_xattrop(struct server_call *call, const mrt_xattrop_args *w,
                  struct vl_xattrop_args *a)
{
    int rc;

    if (w->has_fd)
        rc = call_fd(call, w->fd, &a->fd);
    else
        rc = call_loc(call, &w->loc, &a->loc, LOC_INODE);
    if (rc != 0)
        return rc;
    /* A compound's xattrop is applied under a lock (or before an
     * unlock): an op the brick would refuse is refused before either. */
    if (call->is_cpd && (w->op & VL_XATTROP_OP_MASK) != VL_XATTROP_ADD32)
        return -EINVAL;
    return call_fill_xattrop_keys(call, w, a);
}


/* A LOOKUP_XOP's carried read (protocol 9): keys only (no fd, an empty
 * loc: the object is the one the lookup finds), op exactly ADD32, every
 * value zeros. Anything else is refused before the lookup runs. */
static int
call_fill_lookup_xop(struct server_call *call, const mrt_xattrop_args *w)
{
    static const mrt_gfid zero;

    if (w->has_fd || w->loc.name[0] != '\0'
        || memcmp(w->loc.gfid, zero, sizeof(zero)) != 0
        || memcmp(w->loc.parent, zero, sizeof(zero)) != 0
        || w->op != VL_XATTROP_ADD32)
        return -EINVAL;
    for (u_int i = 0; i < w->keys.keys_len; i++) {
        const mrt_xattrop_key *k = &w->keys.keys_val[i];

        for (u_int b = 0; b < k->value.value_len; b++)
            if (k->value.value_val[b] != 0)
                return -EINVAL;
    }
    memset(&call->cpd_xop, 0, sizeof(call->cpd_xop));
    return call_fill_xattrop_keys(call, w, &call->cpd_xop);
}


/* The keys of an XATTROP (plain or carried) into a, pointing into the
 * decoded arguments. */
static int
call_fill_xattrop_keys(struct server_call *call, const mrt_xattrop_args *w,
                       struct vl_xattrop_args *a)
{
    if (w->keys.keys_len > MRT_XATTROP_MAX)
        return -EINVAL;
    for (u_int i = 0; i < w->keys.keys_len; i++) {
        const mrt_xattrop_key *k = &w->keys.keys_val[i];

        if (k->name[0] == '\0' || k->value.value_len % 4 != 0)
            return -EINVAL;
        call->xo_names[i] = k->name;
        call->xo_values[i] = k->value.value_val;
        call->xo_sizes[i] = k->value.value_len;
    }
    a->op = w->op;
    a->n = w->keys.keys_len;
    a->names = call->xo_names;
    a->values = call->xo_values;
    a->sizes = call->xo_sizes;
    return 0;
}


/* A compound lock's carried xattrop (protocol 8): only a lock taken (TRY
 * or WAIT) carries one, and it is checked whole before the lock is tried,
 * so a malformed one takes no lock. */
static int
call_fill_cpd_xop(struct server_call *call, int cmd, const mrt_xattrop_args *w,
                  const struct vl_xattrop_args **out)
{
    int rc;

    if (cmd != VL_LOCK_TRY && cmd != VL_LOCK_WAIT)
        return -EINVAL;
    rc = call_fill_xattrop(call, w, &call->cpd_xop);
    if (rc != 0)
        return rc;
    *out = &call->cpd_xop;
    return 0;
}


/* A compound xattrop's carried unlock (protocol 8), checked before the
 * xattrop is applied: a lock type the engine would refuse, a negative
 * range or an empty domain answers -EINVAL and nothing is done. */
static int
call_fill_cpd_unlock(struct server_call *call, const mrt_xattrop_unlock *w,
                     const struct vl_xattrop_unlock **out)
{
    struct vl_xattrop_unlock *ul = &call->cpd_unlock;
    int rc;

    if (w->domain[0] == '\0')
        return -EINVAL;
    ul->is_entry = w->is_entry;
    ul->domain = w->domain;
    if (w->is_entry) {
        if (w->type != F_RDLCK && w->type != F_WRLCK)
            return -EINVAL;
        rc = call_loc(call, &w->loc, &ul->loc, LOC_PARENT);
        ul->type = (int16_t)w->type;
    } else {
        if ((w->flock.type != F_RDLCK && w->flock.type != F_WRLCK
             && w->flock.type != F_UNLCK)
            || w->flock.start < 0 || w->flock.len < 0)
            return -EINVAL;
        rc = call_loc(call, &w->loc, &ul->loc, LOC_INODE);
        vrpc_flock_from_xdr(&w->flock, &ul->flock);
    }
    if (rc != 0)
        return rc;
    *out = ul;
    return 0;
}


static int
call_fill_args(struct server_call *call, vl_req_t *req, size_t payload_off,
               size_t len)
{
    union vrpc_fop_wargs *w = &call->wa;
    union vl_fop_args *a = &req->args;
    uint32_t pid = req->caller.pid;
    int rc = 0;

    switch (call->op) {
    case VL_FOP_LOOKUP:
        rc = call_loc(call, &w->lookup.loc, &a->lookup.loc,
                      (w->lookup.loc.name[0] != '\0' ? LOC_ENTRY | LOC_FRESH
                                                     : LOC_INODE));
        a->lookup.content_max = w->lookup.content_max < MRT_LOOKUP_CONTENT_MAX
                                    ? w->lookup.content_max
                                    : MRT_LOOKUP_CONTENT_MAX;
        if (w->lookup.xattr_name[0] != '\0') {
            a->lookup.xattr_name = w->lookup.xattr_name;
            call->is_xattr_wanted = true;
        }
        if (rc == 0 && call->is_lookup_xop) {
            rc = call_fill_lookup_xop(call, &w->lookup_xop.xop);
            a->lookup.xop = &call->cpd_xop;
        }
        break;
    case VL_FOP_STAT:
        rc = call_loc(call, &w->stat.loc, &a->stat.loc,
                      w->stat.has_fd ? 0 : LOC_INODE);
        if (rc == 0 && w->stat.has_fd)
            rc = call_fd(call, w->stat.fd, &a->stat.fd);
        break;
    case VL_FOP_SETATTR:
        rc = call_loc(call, &w->setattr.loc, &a->setattr.loc,
                      w->setattr.has_fd ? 0 : LOC_INODE);
        if (rc == 0 && w->setattr.has_fd)
            rc = call_fd(call, w->setattr.fd, &a->setattr.fd);
        vrpc_iatt_from_xdr(&w->setattr.attr, &a->setattr.attr);
        a->setattr.valid = w->setattr.valid;
        break;
    case VL_FOP_ACCESS:
        rc = call_loc(call, &w->access.loc, &a->access.loc, LOC_INODE);
        a->access.mask = w->access.mask;
        break;
    case VL_FOP_READLINK:
        rc = call_loc(call, &w->readlink.loc, &a->readlink.loc, LOC_INODE);
        a->readlink.size = w->readlink.size;
        break;
    case VL_FOP_MKNOD:
        rc = call_loc(call, &w->mknod.loc, &a->mknod.loc,
                      LOC_ENTRY | LOC_FRESH);
        a->mknod.mode = w->mknod.mode;
        a->mknod.rdev = w->mknod.rdev;
        a->mknod.umask = w->mknod.umask;
        vrpc_gfid_from_xdr(w->mknod.gfid, &a->mknod.gfid);
        break;
    case VL_FOP_MKDIR:
        rc = call_loc(call, &w->mkdir.loc, &a->mkdir.loc,
                      LOC_ENTRY | LOC_FRESH);
        a->mkdir.mode = w->mkdir.mode;
        a->mkdir.umask = w->mkdir.umask;
        vrpc_gfid_from_xdr(w->mkdir.gfid, &a->mkdir.gfid);
        if (w->mkdir.xattr_name[0] != '\0') {
            a->mkdir.xattr_name = w->mkdir.xattr_name;
            a->mkdir.xattr_value = w->mkdir.xattr_value.xattr_value_val;
            a->mkdir.xattr_size = w->mkdir.xattr_value.xattr_value_len;
        }
        if ((w->mkdir.flags & ~(u_int)MRT_MKDIR_WANT_LEASE) != 0)
            rc = -EINVAL;
        a->mkdir.want_lease = (w->mkdir.flags & MRT_MKDIR_WANT_LEASE) != 0;
        break;
    case VL_FOP_UNLINK:
        rc = call_loc(call, &w->unlink.loc, &a->unlink.loc, LOC_ENTRY);
        a->unlink.flags = w->unlink.flags;
        break;
    case VL_FOP_RMDIR:
        rc = call_loc(call, &w->unlink.loc, &a->rmdir.loc, LOC_ENTRY);
        a->rmdir.flags = w->unlink.flags;
        break;
    case VL_FOP_SYMLINK:
        rc = call_loc(call, &w->symlink.loc, &a->symlink.loc,
                      LOC_ENTRY | LOC_FRESH);
        a->symlink.target = w->symlink.target;
        a->symlink.umask = w->symlink.umask;
        vrpc_gfid_from_xdr(w->symlink.gfid, &a->symlink.gfid);
        if (w->symlink.target[0] == '\0')
            rc = rc != 0 ? rc : -EINVAL;
        break;
    case VL_FOP_RENAME:
        rc = call_loc(call, &w->rename.oldloc, &a->rename.oldloc, LOC_ENTRY);
        if (rc == 0)
            rc = call_loc(call, &w->rename.newloc, &a->rename.newloc,
                          LOC_ENTRY);
        a->rename.flags = w->rename.flags;
        break;
    case VL_FOP_LINK:
        rc = call_loc(call, &w->link.oldloc, &a->link.oldloc, LOC_INODE);
        if (rc == 0)
            rc = call_loc(call, &w->link.newloc, &a->link.newloc, LOC_ENTRY);
        break;
    case VL_FOP_CREATE:
        rc = call_loc(call, &w->create.loc, &a->create.loc,
                      LOC_ENTRY | LOC_FRESH);
        a->create.flags = w->create.flags;
        a->create.mode = w->create.mode;
        a->create.umask = w->create.umask;
        vrpc_gfid_from_xdr(w->create.gfid, &a->create.gfid);
        if (rc == 0)
            rc = call_new_fd(call, a->create.loc.inode, w->create.flags, pid,
                             &a->create.fd);
        break;
    case VL_FOP_OPEN:
        rc = call_loc(call, &w->open.loc, &a->open.loc, LOC_INODE);
        a->open.flags = w->open.flags;
        if (rc == 0)
            rc = call_new_fd(call, a->open.loc.inode, w->open.flags, pid,
                             &a->open.fd);
        break;
    case VL_FOP_READ:
        rc = call_fd(call, w->read.fd, &a->read.fd);
        a->read.size = w->read.size;
        a->read.offset = w->read.offset;
        a->read.flags = w->read.flags;
        if (w->read.size > VRPC_MAX_PAYLOAD)
            rc = rc != 0 ? rc : -EINVAL;
        break;
    case VL_FOP_WRITE:
        /* The data is exactly the rest of the record. */
        if (payload_off > len || len - payload_off != w->write.size)
            return -EPROTO;
        rc = call_fd(call, w->write.fd, &a->write.fd);
        call->iov.iov_base = call->rec->data + payload_off;
        call->iov.iov_len = w->write.size;
        a->write.iov = &call->iov;
        a->write.n_iov = 1;
        a->write.offset = w->write.offset;
        a->write.flags = w->write.flags;
        a->write.buf = call->rec;
        break;
    case VL_FOP_FLUSH:
        rc = call_fd(call, w->fd.fd, &a->flush.fd);
        break;
    case VL_FOP_FSYNC:
        rc = call_fd(call, w->fsync.fd, &a->fsync.fd);
        a->fsync.datasync = w->fsync.datasync;
        break;
    case VL_FOP_OPENDIR:
        rc = call_loc(call, &w->opendir.loc, &a->opendir.loc, LOC_INODE);
        /* The listing is this translator's to make (server_opendir_list):
         * the open below never asks for one. */
        call->list_size = w->opendir.list_size < CALL_LIST_SIZE_MAX
                              ? w->opendir.list_size
                              : CALL_LIST_SIZE_MAX;
        call->list_content_max =
            w->opendir.content_max < MRT_LOOKUP_CONTENT_MAX
                ? w->opendir.content_max
                : MRT_LOOKUP_CONTENT_MAX;
        if (rc == 0)
            rc = call_new_fd(call, a->opendir.loc.inode, O_RDONLY, pid,
                             &a->opendir.fd);
        break;
    case VL_FOP_READDIR:
        rc = call_fd(call, w->readdir.fd, &a->readdir.fd);
        a->readdir.size = w->readdir.size;
        a->readdir.offset = w->readdir.offset;
        a->readdir.plus = w->readdir.plus;
        if (w->readdir.plus)
            a->readdir.content_max =
                w->readdir.content_max < MRT_LOOKUP_CONTENT_MAX
                    ? w->readdir.content_max
                    : MRT_LOOKUP_CONTENT_MAX;
        break;
    case VL_FOP_STATFS:
        rc = call_loc(call, &w->loc.loc, &a->statfs.loc, LOC_INODE);
        break;
    case VL_FOP_SETXATTR:
        rc = call_loc(call, &w->setxattr.loc, &a->setxattr.loc, LOC_INODE);
        a->setxattr.name = w->setxattr.name;
        a->setxattr.value = w->setxattr.value.value_val;
        a->setxattr.size = w->setxattr.value.value_len;
        a->setxattr.flags = w->setxattr.flags;
        if (w->setxattr.name[0] == '\0')
            rc = rc != 0 ? rc : -EINVAL;
        break;
    case VL_FOP_GETXATTR:
        rc = call_loc(call, &w->getxattr.loc, &a->getxattr.loc, LOC_INODE);
        a->getxattr.name = w->getxattr.has_name ? w->getxattr.name : NULL;
        a->getxattr.size = w->getxattr.size;
        break;
    case VL_FOP_REMOVEXATTR:
        rc = call_loc(call, &w->removexattr.loc, &a->removexattr.loc,
                      LOC_INODE);
        a->removexattr.name = w->removexattr.name;
        break;
    case VL_FOP_LK:
        rc = call_fd(call, w->lk.fd, &a->lk.fd);
        a->lk.cmd = w->lk.cmd;
        vrpc_flock_from_xdr(&w->lk.flock, &a->lk.flock);
        a->lk.is_flock = w->lk.is_flock;
        break;
    case VL_FOP_INODELK: {
        const mrt_inodelk_args *il =
            call->is_cpd ? &w->inodelk_xop.lock : &w->inodelk;

        rc = call_loc(call, &il->loc, &a->inodelk.loc, LOC_INODE);
        a->inodelk.domain = il->domain;
        a->inodelk.cmd = (enum vl_lock_cmd)il->cmd;
        vrpc_flock_from_xdr(&il->flock, &a->inodelk.flock);
        if (il->cmd < VL_LOCK_TRY || il->cmd > VL_LOCK_UNLOCK)
            rc = rc != 0 ? rc : -EINVAL;
        if (rc == 0 && call->is_cpd)
            rc = call_fill_cpd_xop(call, il->cmd, &w->inodelk_xop.xop,
                                   &a->inodelk.xop);
        break;
    }
    case VL_FOP_ENTRYLK: {
        const mrt_entrylk_args *el =
            call->is_cpd ? &w->entrylk_xop.lock : &w->entrylk;

        rc = call_loc(call, &el->loc, &a->entrylk.loc, LOC_PARENT);
        a->entrylk.domain = el->domain;
        a->entrylk.cmd = (enum vl_lock_cmd)el->cmd;
        a->entrylk.type = (int16_t)el->type;
        if (el->cmd < VL_LOCK_TRY || el->cmd > VL_LOCK_UNLOCK)
            rc = rc != 0 ? rc : -EINVAL;
        if (rc == 0 && call->is_cpd && el->type != F_RDLCK
            && el->type != F_WRLCK)
            rc = -EINVAL;
        if (rc == 0 && call->is_cpd)
            rc = call_fill_cpd_xop(call, el->cmd, &w->entrylk_xop.xop,
                                   &a->entrylk.xop);
        break;
    }
    case VL_FOP_FALLOCATE:
        rc = call_fd(call, w->fallocate.fd, &a->fallocate.fd);
        a->fallocate.mode = w->fallocate.mode;
        a->fallocate.offset = w->fallocate.offset;
        a->fallocate.len = w->fallocate.len;
        break;
    case VL_FOP_COPY_FILE_RANGE:
        rc = call_fd(call, w->copy_file_range.fd_in,
                     &a->copy_file_range.fd_in);
        if (rc == 0)
            rc = call_fd(call, w->copy_file_range.fd_out,
                         &a->copy_file_range.fd_out);
        a->copy_file_range.off_in = w->copy_file_range.off_in;
        a->copy_file_range.off_out = w->copy_file_range.off_out;
        a->copy_file_range.len = w->copy_file_range.len;
        a->copy_file_range.flags = w->copy_file_range.flags;
        break;
    case VL_FOP_LSEEK:
        rc = call_fd(call, w->lseek.fd, &a->lseek.fd);
        a->lseek.offset = w->lseek.offset;
        a->lseek.whence = w->lseek.whence;
        break;
    case VL_FOP_XATTROP:
        rc = call_fill_xattrop(call, call->is_cpd ? &w->xattrop_unlock.xop
                                                  : &w->xattrop,
                               &a->xattrop);
        if (rc == 0 && call->is_cpd)
            rc = call_fill_cpd_unlock(call, &w->xattrop_unlock.unlock,
                                      &a->xattrop.unlock);
        break;
    case VL_FOP_RCHECKSUM:
        /* Bad bounds answer -EINVAL, whatever the fd; the brick graph
         * never sees them. */
        a->rchecksum.offset = w->rchecksum.offset;
        a->rchecksum.len = w->rchecksum.len;
        a->rchecksum.block_size = w->rchecksum.block_size;
        rc = vl_rchecksum_check(a->rchecksum.offset, a->rchecksum.len,
                                a->rchecksum.block_size);
        if (rc == 0)
            rc = call_fd(call, w->rchecksum.fd, &a->rchecksum.fd);
        break;
    default:
        rc = -ENOSYS;
    }
    return rc;
}


static void
call_free(struct server_call *call)
{
    for (int i = 0; i < call->n_inodes; i++)
        vl_inode_unref(call->inodes[i]);
    for (int i = 0; i < call->n_fds; i++)
        vl_fd_unref(call->fds[i]);
    vl_fd_unref(call->new_fd);
    if (call->has_wa)
        xdr_free(call->desc->args, (char *)&call->wa);
    vl_buf_unref(call->rec);
    server_client_unref(call->cl);
    vl_free(call);
}


/* Encodes the readdir entries (bounded by the XDR limit); the content of
 * entries that carry some (quick-read) goes in *iov (allocated, *n_iov
 * vectors, adjacent pieces merged), in entry order, after the XDR. */
static int
reply_dirents(const struct vl_reply *rp, mrt_readdir_rsp *r,
              struct iovec **iov, int *n_iov)
{
    const struct vl_dirent_list *l = &rp->entries;
    size_t n = l->n < MRT_DIRENTS_MAX ? l->n : MRT_DIRENTS_MAX;
    const vl_buf_t *buf = rp->buf;
    int k = 0;

    r->eof = l->eof && n == l->n;
    if (n == 0)
        return 0;
    r->ents.ents_val = vl_calloc(NULL, n, sizeof(mrt_dirent), VL_MT_MISC);
    if (r->ents.ents_val == NULL)
        return -ENOMEM;
    r->ents.ents_len = (u_int)n;
    for (size_t i = 0; i < n; i++) {
        const struct vl_dirent *e = &l->ents[i];
        mrt_dirent *d = &r->ents.ents_val[i];

        d->ino = e->ino;
        d->off = e->off;
        d->type = e->type;
        d->name = e->name;
        d->has_iatt = e->has_iatt;
        if (e->has_iatt)
            vrpc_iatt_to_xdr(&e->iatt, &d->iatt);
        /* Content only of a file, inside the reply's buffer. */
        if (!e->has_content || !e->has_iatt || buf == NULL
            || e->content_off > buf->size
            || e->content_len > buf->size - e->content_off
            || e->content_len > MRT_LOOKUP_CONTENT_MAX)
            continue;
        if (e->content_len > 0 && *iov == NULL) {
            *iov = vl_calloc(NULL, n, sizeof(**iov), VL_MT_MISC);
            if (*iov == NULL)
                continue; /* ENOMEM: the entries go without content */
        }
        d->has_content = true;
        d->content_len = e->content_len;
        if (e->content_len == 0)
            continue;
        if (k > 0
            && (char *)(*iov)[k - 1].iov_base + (*iov)[k - 1].iov_len
                   == buf->data + e->content_off) {
            (*iov)[k - 1].iov_len += e->content_len;
        } else {
            (*iov)[k].iov_base = buf->data + e->content_off;
            (*iov)[k].iov_len = e->content_len;
            k++;
        }
    }
    *n_iov = k;
    return 0;
}


/* RCHECKSUM's records into out->blocks (an array the caller frees
 * after sending). More records than the range has blocks, or records without
 * an array, are a broken child: -EIO rather than a reply the client
 * would refuse. */
static int
reply_rchecksum(const struct vl_reply *rp, const struct vl_rchecksum_args *a,
                mrt_rchecksum_rsp *out /* OUT: blocks */)
{
    uint32_t n_max = (a->len + a->block_size - 1) / a->block_size;
    mrt_rchecksum_block *blocks;

    if (rp->n_sums > n_max || rp->n_sums > MRT_RCHECKSUM_BLOCKS_MAX
        || (rp->n_sums > 0 && rp->sums == NULL))
        return -EIO;
    if (rp->n_sums == 0)
        return 0;
    blocks = vl_calloc(NULL, rp->n_sums, sizeof(*blocks), VL_MT_REPLY);
    if (blocks == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < rp->n_sums; i++) {
        blocks[i].flags = rp->sums[i].flags;
        blocks[i].len = rp->sums[i].len;
        memcpy(blocks[i].digest, rp->sums[i].digest,
               MRT_RCHECKSUM_DIGEST_LEN);
    }
    out->blocks.blocks_val = blocks;
    out->blocks.blocks_len = rp->n_sums;
    return 0;
}


/* A compound's reply (whatever status: a failed post-op still reports
 * its unlock). Values only with the xattrop's success and exactly the
 * sizes asked: a child answering others is a broken child (-EIO). */
static void
reply_cpd(struct server_call *call, int status, const vl_req_t *req,
          mrt_cpd_rsp *r)
{
    const struct vl_reply *rp = &req->reply;
    const struct vl_xattrop_args *a;
    int xo_status;
    uint64_t want = 0;

    if (call->op == VL_FOP_XATTROP) {
        a = &req->args.xattrop;
        r->has_second = rp->has_unlock;
        r->second_status = rp->has_unlock ? rp->unlock_status : 0;
        xo_status = status;
    } else {
        a = &call->cpd_xop;
        if (status != 0 || !rp->has_xop)
            return; /* not granted, or the xattrop left to the caller */
        r->has_second = true;
        r->second_status = rp->xop_status;
        xo_status = rp->xop_status;
    }
    if (xo_status != 0)
        return;
    for (uint32_t i = 0; i < a->n; i++)
        want += a->sizes[i];
    if (rp->xattr_len != want || want > MRT_XATTROP_RSP_MAX
        || (want > 0 && rp->xattr == NULL)) {
        if (call->op == VL_FOP_XATTROP)
            r->status = -EIO;
        else
            r->second_status = -EIO;
        return;
    }
    r->values.values_val = rp->xattr;
    r->values.values_len = (u_int)want;
}


/* A LOOKUP_XOP's read, after the lookup's success: values only with
 * the read's success and exactly the sizes asked (a child answering
 * others is a broken child: -EIO). */
static void
reply_lookup_xop(const struct server_call *call, const vl_req_t *req,
                 mrt_lookup_xop_rsp *r)
{
    const struct vl_reply *rp = &req->reply;
    uint64_t want = 0;

    if (!rp->has_xop)
        return; /* the read left to the caller */
    r->has_second = true;
    r->second_status = rp->xop_status;
    if (rp->xop_status != 0)
        return;
    for (uint32_t i = 0; i < call->cpd_xop.n; i++)
        want += call->cpd_xop.sizes[i];
    if (rp->xop_values_len != want || want > MRT_XATTROP_RSP_MAX
        || (want > 0 && rp->xop_values == NULL)) {
        r->second_status = -EIO;
        return;
    }
    r->values.values_val = rp->xop_values;
    r->values.values_len = (u_int)want;
}


/* Sends the reply for call with status (and req's reply when 0); fd_no
 * is the wire number of a new fd. */
static void
call_reply(struct server_call *call, int status, vl_req_t *req,
           uint64_t fd_no)
{
    union vrpc_fop_rsp r;
    struct iovec payload = {0};
    struct iovec *iov = &payload;     /* what follows the XDR */
    struct iovec *dir_iov = NULL;     /* readdir's, allocated */
    int n_payload = 0;
    const struct vl_reply *rp = req != NULL ? &req->reply : NULL;
    int rc;

    memset(&r, 0, sizeof(r));
    r.status.status = status;
    if (call->desc->rsp == VRPC_RSP_CPD) {
        if (rp != NULL)
            reply_cpd(call, status, req, &r.cpd);
    } else if (status == 0 && rp != NULL) {
        switch (call->desc->rsp) {
        case VRPC_RSP_STATUS:
            break;
        case VRPC_RSP_IATT:
            vrpc_iatt_to_xdr(&rp->iatt, &r.iatt.iatt);
            break;
        case VRPC_RSP_FD:
            vrpc_iatt_to_xdr(&rp->iatt, &r.fd.iatt);
            r.fd.fd = fd_no;
            break;
        case VRPC_RSP_COUNT:
            vrpc_iatt_to_xdr(&rp->iatt, &r.count.iatt);
            r.count.count = rp->count;
            if (call->op == VL_FOP_READ && rp->count > 0
                && rp->data != NULL) {
                payload.iov_base = (void *)rp->data;
                payload.iov_len = (size_t)rp->count;
                n_payload = 1;
            } else if (call->op == VL_FOP_READ) {
                r.count.count = 0;
            }
            break;
        case VRPC_RSP_READLINK:
            break;
        case VRPC_RSP_READDIR:
            if (reply_dirents(rp, &r.readdir, &dir_iov, &n_payload) != 0) {
                r.status.status = -ENOMEM;
                n_payload = 0;
            } else if (dir_iov != NULL) {
                iov = dir_iov;
            }
            break;
        case VRPC_RSP_STATFS:
            vrpc_statvfs_to_xdr(&rp->statvfs, &r.statfs);
            break;
        case VRPC_RSP_GETXATTR:
            r.getxattr.count = rp->count;
            if (rp->xattr != NULL && rp->count > 0
                && rp->count <= MRT_XATTR_VALUE_MAX) {
                r.getxattr.value.value_val = rp->xattr;
                r.getxattr.value.value_len = (u_int)rp->count;
            } else if (rp->count > MRT_XATTR_VALUE_MAX) {
                r.status.status = -E2BIG;
            }
            break;
        case VRPC_RSP_LK:
            vrpc_flock_to_xdr(&rp->flock, &r.lk.flock);
            break;
        case VRPC_RSP_LSEEK:
            r.lseek.offset = rp->offset;
            break;
        case VRPC_RSP_ENTRY:
            vrpc_iatt_to_xdr(&rp->iatt, &r.entry.iatt);
            r.entry.has_postparent = rp->has_postparent;
            if (rp->has_postparent)
                vrpc_iatt_to_xdr(&rp->postparent, &r.entry.postparent);
            r.entry.has_postparent2 = rp->has_postparent2;
            if (rp->has_postparent2)
                vrpc_iatt_to_xdr(&rp->postparent2, &r.entry.postparent2);
            r.entry.flags = rp->is_leased ? MRT_ENTRY_LEASED : 0;
            break;
        case VRPC_RSP_LOOKUP_XOP: /* its lookup overlaps r.lookup */
            reply_lookup_xop(call, req, &r.lookup_xop);
            __attribute__((fallthrough));
        case VRPC_RSP_LOOKUP:
            vrpc_iatt_to_xdr(&rp->iatt, &r.lookup.iatt);
            if (call->is_xattr_wanted) {
                r.lookup.xattr_status = rp->xattr_status;
                if (rp->xattr_status == 0 && rp->xattr != NULL
                    && rp->xattr_len <= MRT_XATTR_VALUE_MAX) {
                    r.lookup.xattr_value.xattr_value_val = rp->xattr;
                    r.lookup.xattr_value.xattr_value_len = rp->xattr_len;
                } else if (rp->xattr_status == 0 && rp->xattr_len > 0) {
                    r.lookup.xattr_status = -E2BIG;
                }
            }
            /* The content (quick-read) follows like read's data. */
            if (rp->buf != NULL && rp->count >= 0
                && (uint64_t)rp->count <= MRT_LOOKUP_CONTENT_MAX) {
                r.lookup.has_content = true;
                r.lookup.count = (u_int)rp->count;
                payload.iov_base = (void *)rp->data;
                payload.iov_len = (size_t)rp->count;
                n_payload = rp->count > 0 ? 1 : 0;
            }
            break;
        case VRPC_RSP_OPENDIR:
            /* With a listing, req is the readdirplus that made it. */
            vrpc_iatt_to_xdr(call->is_listed ? &call->open_iatt : &rp->iatt,
                             &r.opendir.iatt);
            r.opendir.fd = fd_no;
            if (!call->is_listed)
                break;
            r.opendir.has_listing = true;
            r.opendir.listing.status = req->status;
            if (req->status != 0)
                break;
            if (reply_dirents(rp, &r.opendir.listing, &dir_iov, &n_payload)
                != 0) {
                r.opendir.has_listing = false; /* ENOMEM: none, then */
                n_payload = 0;
            } else if (dir_iov != NULL) {
                iov = dir_iov;
            }
            break;
        case VRPC_RSP_XATTROP: {
            const struct vl_xattrop_args *a = &req->args.xattrop;
            uint64_t want = 0;

            /* Exactly the new values of the keys asked, or an error: a
             * child answering other sizes is a broken child. */
            for (uint32_t i = 0; i < a->n; i++)
                want += a->sizes[i];
            if (rp->xattr_len != want || want > MRT_XATTROP_RSP_MAX
                || (want > 0 && rp->xattr == NULL)) {
                r.status.status = -EIO;
                break;
            }
            r.xattrop.values.values_val = rp->xattr;
            r.xattrop.values.values_len = (u_int)want;
            break;
        }
        case VRPC_RSP_RCHECKSUM:
            vrpc_iatt_to_xdr(&rp->iatt, &r.rchecksum.iatt);
            r.status.status = reply_rchecksum(rp, &req->args.rchecksum,
                                              &r.rchecksum);
            break;
        case VRPC_RSP_CPD:
            break; /* above */
        case VRPC_RSP_CREATE:
            vrpc_iatt_to_xdr(&rp->iatt, &r.create.iatt);
            r.create.fd = fd_no;
            r.create.has_postparent = rp->has_postparent;
            if (rp->has_postparent)
                vrpc_iatt_to_xdr(&rp->postparent, &r.create.postparent);
            break;
        }
    }
    /* readlink's string must never be NULL for the encoder. */
    if (call->desc->rsp == VRPC_RSP_READLINK)
        r.readlink.link = (status == 0 && rp != NULL && rp->link != NULL)
                              ? rp->link
                              : "";
    /* Data that follows the XDR (read, lookup content, readdirplus
     * content) lies in rp->buf: a full socket queues it by reference. */
    rc = vrpc_send_reply_buf(call->cl->conn, call->xid, VRPC_SUCCESS,
                             vrpc_rsp_xdr(call->desc->rsp), &r, iov,
                             n_payload, rp != NULL ? rp->buf : NULL);
    if (rc != 0 && rc != -ENOTCONN)
        vl_log(call->cl->priv->xl, VL_LOG_WARNING, "%s reply to %s: %s",
               vl_fop_name(call->op), vrpc_conn_peer(call->cl->conn),
               strerror(-rc));
    if (call->desc->rsp == VRPC_RSP_READDIR)
        vl_free(r.readdir.ents.ents_val);
    if (call->desc->rsp == VRPC_RSP_OPENDIR)
        vl_free(r.opendir.listing.ents.ents_val);
    if (call->desc->rsp == VRPC_RSP_RCHECKSUM)
        vl_free(r.rchecksum.blocks.blocks_val);
    vl_free(dir_iov);
}


static void
server_opendir_listed(vl_req_t *req, void *cookie)
{
    struct server_call *call = cookie;
    struct server_priv *priv = call->cl->priv;

    /* The open succeeded whatever the listing did: its status goes in
     * the listing, the fd to the client. */
    call_reply(call, 0, req, call->open_fd_no);
    call_free(call);
    atomic_fetch_sub(&priv->n_inflight, 1);
}


/* After a successful OPENDIR that asked for a listing: winds the
 * readdirplus at offset 0 on the new fd (fd_no in the client's table;
 * the caller's ref on fd passes to the call); its answer sends the one
 * reply. False (nothing wound, the ref still the caller's) without
 * memory: the open is answered alone. */
static bool
server_opendir_list(struct server_call *call, vl_req_t *open_req,
                    vl_fd_t *fd, uint64_t fd_no)
{
    vl_xlator_t *xl = call->cl->priv->xl;
    struct vl_readdir_args *a;
    vl_req_t *req;

    if (call->n_fds >= CALL_MAX_FDS)
        return false;
    req = vl_req_new(VL_FIRST_CHILD(xl), VL_FOP_READDIR);
    if (req == NULL)
        return false;
    req->caller = open_req->caller;
    call->fds[call->n_fds++] = fd; /* dropped by call_free */
    call->is_listed = true;
    call->open_iatt = open_req->reply.iatt;
    call->open_fd_no = fd_no;
    a = VL_ARGS(req, readdir);
    a->fd = fd;
    a->size = call->list_size;
    a->offset = 0;
    a->plus = true;
    a->content_max = call->list_content_max;
    vl_wind(req, server_opendir_listed, call);
    return true;
}


static void
server_fop_done(vl_req_t *req, void *cookie)
{
    struct server_call *call = cookie;
    struct server_priv *priv = call->cl->priv;
    int status = req->status;
    uint64_t fd_no = 0;
    vl_fd_t *opened = NULL;

    if (status == 0 && call->new_fd != NULL) {
        /* The listing's own ref, taken while the call still owns the fd:
         * once in the table, a disconnect may drop the table's. */
        if (call->op == VL_FOP_OPENDIR && call->list_size > 0)
            opened = vl_fd_ref(call->new_fd);
        if (server_fd_add(call->cl, call->new_fd, &fd_no) == 0)
            call->new_fd = NULL; /* the table owns it now */
        else
            status = -ENOTCONN; /* client gone or ENOMEM: fd dropped */
    }
    /* A fresh inode the child resolved is linked so the brick's per-inode
     * state is found again by GFID. */
    if (status == 0 && !vl_gfid_is_null(&req->reply.iatt.gfid)) {
        for (int i = 0; i < call->n_inodes; i++) {
            if (call->is_fresh[i]) {
                vl_inode_t *l = vl_inode_link(call->inodes[i],
                                              &req->reply.iatt);

                vl_inode_unref(l);
            }
        }
    }
    if (opened != NULL && status == 0
        && server_opendir_list(call, req, opened, fd_no))
        return; /* its answer replies; it owns opened now */
    vl_fd_unref(opened);
    call_reply(call, status, req, fd_no);
    call_free(call);
    atomic_fetch_sub(&priv->n_inflight, 1);
}


static void
server_release(struct server_client *cl, uint32_t xid, vl_buf_t *rec,
               size_t body_off, size_t len)
{
    mrt_fd_args a = {0};
    mrt_status_rsp r = {0};

    if (vrpc_decode_body(rec->data + body_off, len - body_off,
                         (xdrproc_t)xdr_mrt_fd_args, &a, NULL) != 0) {
        (void)vrpc_send_reply(cl->conn, xid, VRPC_GARBAGE_ARGS, NULL, NULL,
                              NULL, 0);
        return;
    }
    r.status = server_fd_del(cl, a.fd);
    (void)vrpc_send_reply(cl->conn, xid, VRPC_SUCCESS,
                          (xdrproc_t)xdr_mrt_status_rsp, &r, NULL, 0);
}


void
server_fop_call(struct server_client *cl, const struct vrpc_call_hdr *hdr,
                vl_buf_t *rec, size_t body_off, size_t len)
{
    struct server_priv *priv = cl->priv;
    vl_xlator_t *xl = priv->xl;
    struct server_call *call;
    const struct vrpc_fop_desc *desc;
    vl_fop_t cpd_op;
    vl_req_t *req;
    size_t used = 0;
    int op, rc;

    if (hdr->proc == MRT_PROC_RELEASE || hdr->proc == MRT_PROC_RELEASEDIR) {
        server_release(cl, hdr->xid, rec, body_off, len);
        return;
    }
    /* Compounds only from a client that negotiated their version: an
     * older client is answered in its terms. */
    desc = vrpc_cpd_desc(hdr->proc, &cpd_op);
    if (desc != NULL
        && atomic_load(&cl->proto_version) >= vrpc_cpd_min_proto(hdr->proc)) {
        op = (int)cpd_op;
    } else {
        desc = NULL;
        op = vrpc_proc_to_fop(hdr->proc);
        if (op >= 0)
            desc = vrpc_fop_desc((vl_fop_t)op);
    }
    if (desc == NULL) {
        (void)vrpc_send_reply(cl->conn, hdr->xid, VRPC_PROC_UNAVAIL, NULL,
                              NULL, NULL, 0);
        return;
    }
    call = vl_calloc(xl, 1, sizeof(*call), 2);
    if (call == NULL) {
        (void)vrpc_send_reply(cl->conn, hdr->xid, VRPC_SYSTEM_ERR, NULL,
                              NULL, NULL, 0);
        return;
    }
    call->cl = server_client_ref(cl);
    call->xid = hdr->xid;
    call->op = (vl_fop_t)op;
    call->desc = desc;
    call->is_cpd = desc->rsp == VRPC_RSP_CPD;
    call->is_lookup_xop = desc->rsp == VRPC_RSP_LOOKUP_XOP;
    call->rec = vl_buf_ref(rec);
    if (vrpc_decode_body(rec->data + body_off, len - body_off,
                         call->desc->args, &call->wa, &used) != 0) {
        /* A name over the wire's bound (a peer that does not check it)
         * gets the file system's answer, ENAMETOOLONG or ERANGE. */
        rc = vrpc_args_bound_errno(call->op, rec->data + body_off,
                                   len - body_off);
        vl_log(xl, VL_LOG_DEBUG, "%s: undecodable %s arguments%s",
               vrpc_conn_peer(cl->conn), vl_fop_name(call->op),
               rc != 0 ? " (a name over its bound)" : "");
        if (rc != 0)
            call_reply(call, rc, NULL, 0);
        else
            (void)vrpc_send_reply(cl->conn, hdr->xid, VRPC_GARBAGE_ARGS,
                                  NULL, NULL, NULL, 0);
        call_free(call);
        return;
    }
    call->has_wa = true;
    /* Only WRITE carries bytes after its arguments. */
    if (call->op != VL_FOP_WRITE && body_off + used != len) {
        (void)vrpc_send_reply(cl->conn, hdr->xid, VRPC_GARBAGE_ARGS, NULL,
                              NULL, NULL, 0);
        call_free(call);
        return;
    }
    req = vl_req_new(VL_FIRST_CHILD(xl), call->op);
    if (req == NULL) {
        call_reply(call, -ENOMEM, NULL, 0);
        call_free(call);
        return;
    }
    if (hdr->has_caller)
        req->caller = hdr->caller;
    server_caller_squash(VL_CONF(xl, struct server_conf), cl->is_trusted,
                         &req->caller);
    req->caller.client_id = cl->client_id;
    rc = call_fill_args(call, req, body_off + used, len);
    if (rc == -EPROTO) {
        vl_req_free_unwound(req);
        (void)vrpc_send_reply(cl->conn, hdr->xid, VRPC_GARBAGE_ARGS, NULL,
                              NULL, NULL, 0);
        call_free(call);
        return;
    }
    if (rc != 0) {
        vl_req_free_unwound(req);
        call_reply(call, rc, NULL, 0);
        call_free(call);
        return;
    }
    atomic_fetch_add(&priv->n_inflight, 1);
    vl_wind(req, server_fop_done, call);
}
