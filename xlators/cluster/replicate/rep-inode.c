/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-inode: what the data and metadata fops lock and mark (the inode
 * counterpart of rep-entry.c): the object itself, with inodelk in this
 * translator's domain, and its data or metadata counters; writes go
 * through eager locking (rep-eager.c); the replication records
 * themselves are refused to callers; the private XATTROPs replicate
 * winds into itself (a batch's end, a detached post-op) run here. The
 * transaction is rep-txn.c's.
 *
 * Intercepts: write, fallocate, setattr, setxattr, removexattr, open
 * (O_TRUNC), copy_file_range (EXDEV), xattrop (its own only).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rep.h"


static bool
rep_is_rep_key(const char *name)
{
    return name != NULL
           && strncmp(name, REP_KEY_PREFIX, sizeof(REP_KEY_PREFIX) - 1) == 0;
}


/* write, fallocate, setattr (truncate is a data change), setxattr,
 * removexattr, open with O_TRUNC. */
void
rep_txn_inode(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_inode_t *inode = NULL;
    vl_fd_t *fd = NULL;

    local->kind = REP_METADATA;
    switch (req->op) {
    case VL_FOP_WRITE:
        fd = req->args.write.fd;
        local->kind = REP_DATA;
        break;
    case VL_FOP_FALLOCATE:
        fd = req->args.fallocate.fd;
        local->kind = REP_DATA;
        break;
    case VL_FOP_SETATTR:
        fd = req->args.setattr.fd;
        inode = req->args.setattr.loc.inode;
        if (req->args.setattr.valid & VL_SET_SIZE)
            local->kind = REP_DATA;
        break;
    case VL_FOP_SETXATTR:
        if (rep_is_rep_key(req->args.setxattr.name)) {
            vl_unwind(req, -EPERM);
            return;
        }
        inode = req->args.setxattr.loc.inode;
        break;
    case VL_FOP_REMOVEXATTR:
        if (rep_is_rep_key(req->args.removexattr.name)) {
            vl_unwind(req, -EPERM);
            return;
        }
        inode = req->args.removexattr.loc.inode;
        break;
    case VL_FOP_OPEN:
        inode = req->args.open.loc.inode;
        local->kind = REP_DATA;
        break;
    case VL_FOP_COPY_FILE_RANGE:
        /* Each brick would copy from its own copy of the source, which
         * may be stale: the caller copies with read and write instead. */
        vl_unwind(req, -EXDEV);
        return;
    case VL_FOP_XATTROP:
        if (req->args.xattrop.op == REP_EAGER_RELEASE_OP
            && req->wound_from == NULL) {
            rep_eager_release_run(xl, req);
            return;
        }
        if (req->args.xattrop.op == REP_TXN_DETACHED_OP
            && req->wound_from == NULL && local->is_detached) {
            local->kind = REP_ENTRY; /* set to metadata above */
            for (unsigned i = 0; i < rep_priv(xl)->n; i++) {
                local->ck[i].req = req;
                local->ck[i].idx = i;
            }
            rep_txn_postop_run(xl, req);
            return;
        }
        /* The records are this translator's own. */
        vl_unwind(req, -EOPNOTSUPP);
        return;
    default:
        vl_unwind(req, -EOPNOTSUPP);
        return;
    }
    if (fd != NULL)
        inode = fd->inode;
    if (inode == NULL) {
        vl_unwind(req, -EINVAL);
        return;
    }
    if (req->op == VL_FOP_WRITE && rep_priv(xl)->is_eager_lock
        && rep_eager_write(xl, req, inode))
        return;
    if (req->op != VL_FOP_WRITE && rep_eager_intercept(xl, req, inode))
        return;
    rep_txn_inode_begin(xl, req, inode, fd);
}
