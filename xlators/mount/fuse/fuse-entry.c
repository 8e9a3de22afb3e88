/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-entry: FUSE operations on names and inodes: LOOKUP, GETATTR,
 * SETATTR, ACCESS, READLINK, MKNOD, MKDIR, SYMLINK, LINK, UNLINK, RMDIR,
 * RENAME, RENAME2, STATFS and the xattr calls.
 *
 * Every handler turns the kernel's payload into a libvol request on the
 * first child and winds it with the call as cookie; the done callback
 * writes the reply. Entry replies link the inode (canonical one from
 * vl_inode_link) and count one kernel lookup on it.
 *
 * Answered here without a round trip: GETXATTR security.capability of a
 * node this session created (until an xattr call for it), or of any node
 * with `capability off`; the GETATTR of a directory that follows a
 * namespace op in it, from the op's postparent (fuse-pattr.c; SETATTR and
 * the xattr calls on the directory drop what was kept). Entry replies
 * record name hints; UNLINK, RMDIR and RENAME use them for loc.inode
 * (fuse-hint.c).
 *
 * Threads: handlers run on reader threads, done callbacks on whatever
 *          thread answers; state beyond the call is the session table's
 *          (node flags, hints), under its lock.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fuse.h"


vl_inode_t *
vfuse_call_inode(struct vfuse_call *call)
{
    return vfuse_call_node(call, 0);
}


/* ---- generic done callbacks ---- */

void
vfuse_status_done(vl_req_t *req, void *cookie)
{
    vfuse_reply_err(cookie, req->status);
}


static void
vfuse_attr_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    struct fuse_attr_out out;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    vfuse_attr_fill(call->priv, &out, &req->reply.iatt);
    vfuse_reply_buf(call, &out, sizeof(out));
}


/* The new entry's parent and name of an entry op (NULL name if none). */
static const struct vl_loc *
vfuse_entry_loc(vl_req_t *req)
{
    switch (req->op) {
    case VL_FOP_LOOKUP:
        return &VL_ARGS(req, lookup)->loc;
    case VL_FOP_MKNOD:
        return &VL_ARGS(req, mknod)->loc;
    case VL_FOP_MKDIR:
        return &VL_ARGS(req, mkdir)->loc;
    case VL_FOP_SYMLINK:
        return &VL_ARGS(req, symlink)->loc;
    case VL_FOP_LINK:
        return &VL_ARGS(req, link)->newloc;
    default:
        return NULL;
    }
}


/* Notes what an entry reply taught us about nodeid: the name naming it
 * (a hint for a later UNLINK/RMDIR/RENAME) and, for an object this
 * request created (the reply carries the GFID we generated; an existing
 * one would have its own), that it has no security.capability. */
void
vfuse_entry_learn(struct vfuse_call *call, vl_req_t *req, uint64_t nodeid,
                  const struct vl_loc *loc, const vl_gfid_t *new_gfid)
{
    struct vfuse_table *t = &call->sess->table;

    if (loc != NULL && loc->parent != NULL)
        vfuse_hint_add(t, &loc->parent->gfid, loc->name, nodeid);
    if (new_gfid != NULL && vl_gfid_equal(new_gfid, &req->reply.iatt.gfid))
        vfuse_node_set_flags(t, nodeid, VFUSE_NODE_NO_CAP, 0);
}


/* Answers an entry op: links call->inode under the reply's GFID. */
static void
vfuse_entry_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    struct vfuse_priv *priv = call->priv;
    struct vfuse_session *sess = call->sess;
    const struct vfuse_conf *conf = VL_CONF(call->xl, struct vfuse_conf);
    struct fuse_entry_out out;
    vl_inode_t *linked;
    uint64_t nodeid;

    if (req->status == -ENOENT && req->op == VL_FOP_LOOKUP
        && conf->negative_timeout > 0) {
        /* nodeid 0 with a timeout: the kernel caches the miss. */
        memset(&out, 0, sizeof(out));
        vfuse_ms_to_timeout(conf->negative_timeout, &out.entry_valid,
                            &out.entry_valid_nsec);
        vfuse_reply_buf(call, &out, sizeof(out));
        return;
    }
    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    vfuse_postparent_learn(call, req);
    if (vl_gfid_is_null(&req->reply.iatt.gfid)) {
        vl_log(call->xl, VL_LOG_WARNING, "%s reply without gfid",
               vl_fop_name(req->op));
        vfuse_reply_err(call, -EIO);
        return;
    }
    linked = vl_inode_link(call->inode, &req->reply.iatt);
    if (linked == NULL) {
        vfuse_reply_err(call, -ENOMEM);
        return;
    }
    nodeid = vfuse_inode_remember(call, linked);
    if (nodeid == 0) {
        vfuse_reply_err(call, -ENOMEM);
        return;
    }
    vfuse_entry_learn(call, req, nodeid, vfuse_entry_loc(req),
                      req->op == VL_FOP_MKNOD ? &VL_ARGS(req, mknod)->gfid
                                              : NULL);
    vfuse_entry_fill(priv, &out, nodeid, &req->reply.iatt);
    /* A kernel that dropped the request never counted the lookup. */
    if (vfuse_reply_buf(call, &out, sizeof(out)) == -ENOENT)
        vfuse_inode_forget(sess, nodeid, 1);
}


int
vfuse_name_check(const char *name)
{
    if (name == NULL || strchr(name, '/') != NULL)
        return -EINVAL;
    if (strlen(name) > VFUSE_NAME_MAX)
        return -ENAMETOOLONG;
    return 0;
}


/* Fills loc with parent (the call's nodeid) + name and a fresh inode kept
 * in call->inode. Returns 0 or -errno. */
static int
vfuse_new_entry_loc(struct vfuse_call *call, struct vl_loc *loc,
                    const char *name)
{
    int rc;

    loc->parent = vfuse_call_inode(call);
    loc->name = name;
    if (loc->parent == NULL)
        return -EINVAL;
    rc = vfuse_name_check(name);
    if (rc != 0)
        return rc;
    call->inode = vl_inode_new(call->priv->xl->graph->itable);
    if (call->inode == NULL)
        return -ENOMEM;
    loc->inode = call->inode;
    return 0;
}


/* Winds req (or answers the call when req is NULL or rc failed). */
void
vfuse_send(struct vfuse_call *call, vl_req_t *req, int rc, vl_done_fn *done)
{
    if (req == NULL) {
        vfuse_reply_err(call, rc != 0 ? rc : -ENOMEM);
        return;
    }
    if (rc != 0) {
        vl_req_free_unwound(req);
        vfuse_reply_err(call, rc);
        return;
    }
    vl_wind(req, done, call);
}


/* ---- LOOKUP and attributes ---- */

void
vfuse_lookup(struct vfuse_call *call)
{
    vl_req_t *req = vfuse_req_new(call, VL_FOP_LOOKUP);
    int rc = 0;

    if (req != NULL)
        rc = vfuse_new_entry_loc(call, &VL_ARGS(req, lookup)->loc,
                                 vfuse_arg_str(call, 0, NULL));
    /* A directory seen under this name before (the kernel revalidating
     * it once its entry timed out): distribute can skip a round. */
    if (rc == 0)
        (void)vfuse_hint_peek_dir(&call->sess->table,
                                  &VL_ARGS(req, lookup)->loc.parent->gfid,
                                  VL_ARGS(req, lookup)->loc.name,
                                  &VL_ARGS(req, lookup)->dir_hint);
    vfuse_send(call, req, rc, vfuse_entry_done);
}


void
vfuse_getattr(struct vfuse_call *call)
{
    struct fuse_getattr_in in;
    vl_req_t *req;
    struct vl_stat_args *a;
    int rc = 0;

    memcpy(&in, call->arg, sizeof(in));
    if (vfuse_getattr_local(call, &in))
        return;
    req = vfuse_req_new(call, VL_FOP_STAT);
    if (req != NULL) {
        a = VL_ARGS(req, stat);
        a->loc.inode = vfuse_call_inode(call);
        if (in.getattr_flags & FUSE_GETATTR_FH)
            a->fd = vfuse_call_fh(call, 0);
        if (a->loc.inode == NULL)
            rc = -EINVAL;
    }
    vfuse_send(call, req, rc, vfuse_attr_done);
}


void
vfuse_setattr(struct vfuse_call *call)
{
    struct fuse_setattr_in in;
    struct vl_iatt attr;
    uint32_t valid;
    vl_fd_t *fd = NULL;
    vl_req_t *req;
    int rc = 0;

    memcpy(&in, call->arg, sizeof(in));
    vfuse_pattr_drop(&call->sess->table, call->hdr.nodeid);
    vfuse_setattr_from_in(&in, &attr, &valid);
    if (in.valid & FATTR_FH)
        fd = vfuse_call_fh(call, 0);
    if (in.valid & FATTR_LOCKOWNER)
        call->caller.lk_owner = in.lock_owner;
    /* Nothing to change (only FH/LOCKOWNER): the kernel wants attributes. */
    if (valid == 0) {
        req = vfuse_req_new(call, VL_FOP_STAT);
        if (req != NULL) {
            VL_ARGS(req, stat)->loc.inode = vfuse_call_inode(call);
            VL_ARGS(req, stat)->fd = fd;
        }
    } else {
        req = vfuse_req_new(call, VL_FOP_SETATTR);
        if (req != NULL) {
            struct vl_setattr_args *a = VL_ARGS(req, setattr);

            a->loc.inode = vfuse_call_inode(call);
            a->fd = fd;
            a->attr = attr;
            a->valid = valid;
        }
    }
    if (vfuse_call_inode(call) == NULL)
        rc = -EINVAL;
    vfuse_send(call, req, rc, vfuse_attr_done);
}


void
vfuse_access(struct vfuse_call *call)
{
    struct fuse_access_in in;
    vl_req_t *req = vfuse_req_new(call, VL_FOP_ACCESS);
    int rc = 0;

    memcpy(&in, call->arg, sizeof(in));
    if (req != NULL) {
        VL_ARGS(req, access)->loc.inode = vfuse_call_inode(call);
        VL_ARGS(req, access)->mask = (int32_t)in.mask;
        if (vfuse_call_inode(call) == NULL)
            rc = -EINVAL;
    }
    vfuse_send(call, req, rc, vfuse_status_done);
}


static void
vfuse_readlink_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;

    if (req->status != 0 || req->reply.link == NULL) {
        vfuse_reply_err(call, req->status != 0 ? req->status : -EIO);
        return;
    }
    vfuse_reply_buf(call, req->reply.link, strlen(req->reply.link));
}


void
vfuse_readlink(struct vfuse_call *call)
{
    vl_req_t *req = vfuse_req_new(call, VL_FOP_READLINK);
    int rc = 0;

    if (req != NULL) {
        VL_ARGS(req, readlink)->loc.inode = vfuse_call_inode(call);
        VL_ARGS(req, readlink)->size = PATH_MAX;
        if (vfuse_call_inode(call) == NULL)
            rc = -EINVAL;
    }
    vfuse_send(call, req, rc, vfuse_readlink_done);
}


/* ---- creating names ---- */

void
vfuse_mknod(struct vfuse_call *call)
{
    struct fuse_mknod_in in;
    vl_req_t *req = vfuse_req_new(call, VL_FOP_MKNOD);
    struct vl_mknod_args *a;
    int rc = 0;

    memcpy(&in, call->arg, sizeof(in));
    if (req != NULL) {
        a = VL_ARGS(req, mknod);
        rc = vfuse_new_entry_loc(call, &a->loc,
                                 vfuse_arg_str(call, sizeof(in), NULL));
        a->mode = in.mode;
        a->rdev = vfuse_dev_decode(in.rdev);
        a->umask = in.umask;
        vl_gfid_generate(&a->gfid);
    }
    vfuse_send(call, req, rc, vfuse_entry_done);
}


void
vfuse_mkdir(struct vfuse_call *call)
{
    struct fuse_mkdir_in in;
    vl_req_t *req = vfuse_req_new(call, VL_FOP_MKDIR);
    struct vl_mkdir_args *a;
    int rc = 0;

    memcpy(&in, call->arg, sizeof(in));
    if (req != NULL) {
        a = VL_ARGS(req, mkdir);
        rc = vfuse_new_entry_loc(call, &a->loc,
                                 vfuse_arg_str(call, sizeof(in), NULL));
        a->mode = in.mode | S_IFDIR;
        a->umask = in.umask;
        vl_gfid_generate(&a->gfid);
    }
    vfuse_send(call, req, rc, vfuse_entry_done);
}


/* Payload: name NUL target NUL. */
void
vfuse_symlink(struct vfuse_call *call)
{
    vl_req_t *req = vfuse_req_new(call, VL_FOP_SYMLINK);
    struct vl_symlink_args *a;
    size_t name_len = 0, target_len = 0;
    const char *name = vfuse_arg_str(call, 0, &name_len);
    int rc = 0;

    if (req != NULL) {
        a = VL_ARGS(req, symlink);
        rc = vfuse_new_entry_loc(call, &a->loc, name);
        if (rc == 0)
            a->target = vfuse_arg_str(call, name_len + 1, &target_len);
        if (rc == 0 && a->target == NULL)
            rc = -EINVAL;
        if (rc == 0 && target_len > VFUSE_TARGET_MAX)
            rc = -ENAMETOOLONG;
        vl_gfid_generate(&a->gfid);
    }
    vfuse_send(call, req, rc, vfuse_entry_done);
}


void
vfuse_link(struct vfuse_call *call)
{
    struct fuse_link_in in;
    vl_req_t *req = vfuse_req_new(call, VL_FOP_LINK);
    struct vl_link_args *a;
    vl_inode_t *old;
    int rc = 0;

    memcpy(&in, call->arg, sizeof(in));
    old = vfuse_call_node(call, 1);
    if (req != NULL) {
        a = VL_ARGS(req, link);
        a->oldloc.inode = old;
        a->newloc.parent = vfuse_call_inode(call);
        a->newloc.name = vfuse_arg_str(call, sizeof(in), NULL);
        if (old == NULL || a->newloc.parent == NULL)
            rc = -EINVAL;
        else
            rc = vfuse_name_check(a->newloc.name);
        if (rc == 0)
            call->inode = vl_inode_ref(old); /* what entry_done links */
    }
    vfuse_send(call, req, rc, vfuse_entry_done);
}


/* ---- removing and renaming names ---- */

/* The name's hinted inode (the call keeps the ref in call->inode), or
 * NULL; the hint is dropped either way, since the name is about to go or
 * to name something else. */
static vl_inode_t *
vfuse_hint_inode(struct vfuse_call *call, vl_inode_t *parent,
                 const char *name)
{
    vl_inode_t *inode = vfuse_hint_take(&call->sess->table, &parent->gfid,
                                        name, call->priv->gen);

    if (inode != NULL && call->inode == NULL) {
        atomic_fetch_add(&call->sess->n_hinted, 1);
        call->inode = inode;
        return inode;
    }
    vl_inode_unref(inode);
    return NULL;
}


static void
vfuse_remove_done(vl_req_t *req, void *cookie)
{
    vfuse_postparent_learn(cookie, req);
    vfuse_reply_err(cookie, req->status);
}


/* UNLINK/RMDIR: loc->inode is the name's hinted inode when the session
 * knows it in this graph (no round trip), so distribute can go to the
 * brick holding it; the layers below take it as a hint (see
 * fuse-hint.c). */
static void
vfuse_remove(struct vfuse_call *call, vl_fop_t op)
{
    vl_req_t *req = vfuse_req_new(call, op);
    struct vl_loc *loc;
    int rc = 0;

    if (req != NULL) {
        /* unlink and rmdir args both start with the loc. */
        loc = op == VL_FOP_UNLINK ? &VL_ARGS(req, unlink)->loc
                                  : &VL_ARGS(req, rmdir)->loc;
        loc->parent = vfuse_call_inode(call);
        loc->name = vfuse_arg_str(call, 0, NULL);
        rc = loc->parent == NULL ? -EINVAL : vfuse_name_check(loc->name);
        if (rc == 0)
            loc->inode = vfuse_hint_inode(call, loc->parent, loc->name);
    }
    vfuse_send(call, req, rc, vfuse_remove_done);
}


void
vfuse_unlink(struct vfuse_call *call)
{
    vfuse_remove(call, VL_FOP_UNLINK);
}


void
vfuse_rmdir(struct vfuse_call *call)
{
    vfuse_remove(call, VL_FOP_RMDIR);
}


/* Payload after the fixed part: oldname NUL newname NUL. oldloc.inode is
 * the old name's hinted inode when known in this graph (a hint, as for
 * unlink); both names' hints are dropped. On success the new name
 * inherits the hint (rename_done). */
/* A moved object keeps its hint under the new name (not after an
 * exchange, where both names changed objects: those hints are gone). */
static void
vfuse_rename_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    struct vl_rename_args *a = VL_ARGS(req, rename);

    if (req->status == 0 && call->inode != NULL
        && !(a->flags & RENAME_EXCHANGE))
        vfuse_hint_add_gfid(&call->sess->table, &a->newloc.parent->gfid,
                            a->newloc.name, &call->inode->gfid);
    vfuse_postparent_learn(call, req);
    vfuse_reply_err(call, req->status);
}


static void
vfuse_rename_common(struct vfuse_call *call, uint32_t flags, size_t off)
{
    vl_req_t *req = vfuse_req_new(call, VL_FOP_RENAME);
    struct vl_rename_args *a;
    size_t old_len = 0;
    int rc = 0;

    if (req != NULL) {
        a = VL_ARGS(req, rename);
        a->oldloc.parent = vfuse_call_inode(call);
        a->oldloc.name = vfuse_arg_str(call, off, &old_len);
        a->newloc.parent = vfuse_call_node(call, 1);
        if (a->oldloc.name != NULL)
            a->newloc.name = vfuse_arg_str(call, off + old_len + 1, NULL);
        a->flags = flags;
        if (a->oldloc.parent == NULL || a->newloc.parent == NULL)
            rc = -EINVAL;
        if (rc == 0)
            rc = vfuse_name_check(a->oldloc.name);
        if (rc == 0)
            rc = vfuse_name_check(a->newloc.name);
    }
    if (req != NULL && rc == 0) {
        a = VL_ARGS(req, rename);
        a->oldloc.inode = vfuse_hint_inode(call, a->oldloc.parent,
                                           a->oldloc.name);
        vl_inode_unref(vfuse_hint_take(&call->sess->table,
                                       &a->newloc.parent->gfid,
                                       a->newloc.name, call->priv->gen));
    }
    vfuse_send(call, req, rc, vfuse_rename_done);
}


void
vfuse_rename(struct vfuse_call *call)
{
    struct fuse_rename_in in;

    memcpy(&in, call->arg, sizeof(in));
    vfuse_rename_common(call, 0, sizeof(in));
}


void
vfuse_rename2(struct vfuse_call *call)
{
    struct fuse_rename2_in in;

    memcpy(&in, call->arg, sizeof(in));
    vfuse_rename_common(call, in.flags, sizeof(in));
}


/* ---- STATFS ---- */

static void
vfuse_statfs_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    const struct statvfs *sv = &req->reply.statvfs;
    struct fuse_statfs_out out;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    memset(&out, 0, sizeof(out));
    out.st.blocks = sv->f_blocks;
    out.st.bfree = sv->f_bfree;
    out.st.bavail = sv->f_bavail;
    out.st.files = sv->f_files;
    out.st.ffree = sv->f_ffree;
    out.st.bsize = (uint32_t)sv->f_bsize;
    out.st.namelen = (uint32_t)sv->f_namemax;
    out.st.frsize = (uint32_t)sv->f_frsize;
    vfuse_reply_buf(call, &out, sizeof(out));
}


void
vfuse_statfs(struct vfuse_call *call)
{
    vl_req_t *req = vfuse_req_new(call, VL_FOP_STATFS);
    int rc = 0;

    if (req != NULL) {
        VL_ARGS(req, statfs)->loc.inode = vfuse_call_inode(call);
        if (vfuse_call_inode(call) == NULL)
            rc = -EINVAL;
    }
    vfuse_send(call, req, rc, vfuse_statfs_done);
}


/* ---- xattrs ---- */

/* A key over XATTR_NAME_MAX (255, as VFUSE_NAME_MAX) is ERANGE, as Linux
 * answers. POSIX ACLs are enforced by the bricks (and the kernel, with
 * FUSE_POSIX_ACL); SELinux labels are not enforced by Mortar.
 * Unless the mount asks for them (options acl, selinux), their xattrs are
 * refused here with EOPNOTSUPP, as by a file system without that support,
 * instead of costing a brick round trip for every `ls -l` entry (ls asks
 * for both on each file). */
static int
vfuse_xattr_check(struct vfuse_call *call, const char *name)
{
    const struct vfuse_conf *conf = VL_CONF(call->xl, struct vfuse_conf);

    if (name == NULL)
        return 0;
    /* The kernel refuses these itself; this keeps the answer right
     * whatever sends the request. */
    if (strlen(name) > VFUSE_NAME_MAX)
        return -ERANGE;
    if (!conf->is_acl && strncmp(name, "system.posix_acl_", 17) == 0)
        return -EOPNOTSUPP;
    if (!conf->is_selinux && strcmp(name, "security.selinux") == 0)
        return -EOPNOTSUPP;
    if (!conf->is_capability && strcmp(name, VFUSE_XATTR_CAPS) == 0)
        return -EOPNOTSUPP;
    return 0;
}


/* Setting or removing: as vfuse_xattr_check, and Mortar's own keys
 * (trusted.mortar.*: layouts, link targets, replication records) are
 * never a user's to change, root's included (EPERM, as distribute
 * answers): a brick takes them from any trusted connection, since its
 * client-side translators set them in their users' names, so the mount
 * is where a user's request is told apart. */
static int
vfuse_xattr_check_change(struct vfuse_call *call, const char *name)
{
    if (name != NULL && strncmp(name, "trusted.mortar.", 15) == 0)
        return -EPERM;
    return vfuse_xattr_check(call, name);
}


/* A SETXATTR/REMOVEXATTR (any name: cheaper than telling which ones a
 * translator below maps to security.capability) ends what we knew about
 * the node's xattrs. Cleared before winding, so a GETXATTR racing with
 * it asks the brick. */
static void
vfuse_xattr_changing(struct vfuse_call *call)
{
    vfuse_node_set_flags(&call->sess->table, call->hdr.nodeid, 0,
                         VFUSE_NODE_NO_CAP);
    vfuse_pattr_drop(&call->sess->table, call->hdr.nodeid);
}


/* GETXATTR security.capability: the kernel asks it before the first write
 * to every inode (to drop file capabilities, even with KILLPRIV_V2). A
 * file this session created has none until an xattr call goes through
 * for it, and with `capability off` no file has any: answer ENODATA
 * without a round trip. Another client setting one on our new file is
 * not seen (as with any attribute cached by this mount). */
static bool
vfuse_caps_known_absent(struct vfuse_call *call, const char *name)
{
    const struct vfuse_conf *conf = VL_CONF(call->xl, struct vfuse_conf);

    if (name == NULL || strcmp(name, VFUSE_XATTR_CAPS) != 0)
        return false;
    if (!conf->is_capability)
        return true;
    return (vfuse_node_flags(&call->sess->table, call->hdr.nodeid)
            & VFUSE_NODE_NO_CAP) != 0;
}

/* Payload: fuse_setxattr_in (compat size: SETXATTR_EXT is not
 * negotiated), name NUL, value. */
void
vfuse_setxattr(struct vfuse_call *call)
{
    struct fuse_setxattr_in in;
    vl_req_t *req = vfuse_req_new(call, VL_FOP_SETXATTR);
    struct vl_setxattr_args *a;
    size_t off = FUSE_COMPAT_SETXATTR_IN_SIZE;
    size_t name_len = 0;
    int rc = 0;

    memset(&in, 0, sizeof(in));
    memcpy(&in, call->arg, off);
    if (req != NULL) {
        a = VL_ARGS(req, setxattr);
        a->loc.inode = vfuse_call_inode(call);
        a->name = vfuse_arg_str(call, off, &name_len);
        a->size = in.size;
        a->flags = (int32_t)in.flags;
        if (a->name == NULL || a->loc.inode == NULL
            || off + name_len + 1 + (size_t)in.size > call->arg_len)
            rc = -EINVAL;
        else
            a->value = call->arg + off + name_len + 1;
        if (rc == 0)
            rc = vfuse_xattr_check_change(call, a->name);
    }
    if (rc == 0)
        vfuse_xattr_changing(call);
    vfuse_send(call, req, rc, vfuse_status_done);
}


static void
vfuse_getxattr_done(vl_req_t *req, void *cookie)
{
    struct vfuse_call *call = cookie;
    const struct fuse_getxattr_in *in = (const void *)call->arg;
    struct fuse_getxattr_out out;
    uint32_t size = in->size;

    if (req->status != 0) {
        vfuse_reply_err(call, req->status);
        return;
    }
    if (req->reply.count < 0) {
        vfuse_reply_err(call, -EIO);
        return;
    }
    if (size == 0) {
        memset(&out, 0, sizeof(out));
        out.size = (uint32_t)req->reply.count;
        vfuse_reply_buf(call, &out, sizeof(out));
        return;
    }
    if ((uint64_t)req->reply.count > size) {
        vfuse_reply_err(call, -ERANGE);
        return;
    }
    if (req->reply.count > 0 && req->reply.xattr == NULL) {
        vfuse_reply_err(call, -EIO);
        return;
    }
    vfuse_reply_buf(call, req->reply.xattr, (size_t)req->reply.count);
}


static void
vfuse_getxattr_common(struct vfuse_call *call, bool is_list)
{
    struct fuse_getxattr_in in;
    vl_req_t *req;
    struct vl_getxattr_args *a;
    int rc = 0;

    memcpy(&in, call->arg, sizeof(in));
    if (!is_list
        && vfuse_caps_known_absent(call, vfuse_arg_str(call, sizeof(in),
                                                       NULL))) {
        atomic_fetch_add(&call->sess->n_caps_local, 1);
        vfuse_reply_err(call, -ENODATA);
        return;
    }
    req = vfuse_req_new(call, VL_FOP_GETXATTR);
    if (req != NULL) {
        a = VL_ARGS(req, getxattr);
        a->loc.inode = vfuse_call_inode(call);
        a->size = in.size;
        if (!is_list) {
            a->name = vfuse_arg_str(call, sizeof(in), NULL);
            rc = a->name == NULL ? -EINVAL : vfuse_xattr_check(call, a->name);
        }
        if (a->loc.inode == NULL)
            rc = -EINVAL;
    }
    vfuse_send(call, req, rc, vfuse_getxattr_done);
}


void
vfuse_getxattr(struct vfuse_call *call)
{
    vfuse_getxattr_common(call, false);
}


void
vfuse_listxattr(struct vfuse_call *call)
{
    vfuse_getxattr_common(call, true);
}


void
vfuse_removexattr(struct vfuse_call *call)
{
    vl_req_t *req = vfuse_req_new(call, VL_FOP_REMOVEXATTR);
    int rc = 0;

    if (req != NULL) {
        VL_ARGS(req, removexattr)->loc.inode = vfuse_call_inode(call);
        VL_ARGS(req, removexattr)->name = vfuse_arg_str(call, 0, NULL);
        if (vfuse_call_inode(call) == NULL
            || VL_ARGS(req, removexattr)->name == NULL)
            rc = -EINVAL;
        else
            rc = vfuse_xattr_check_change(call,
                                          VL_ARGS(req, removexattr)->name);
    }
    if (rc == 0)
        vfuse_xattr_changing(call);
    vfuse_send(call, req, rc, vfuse_status_done);
}
