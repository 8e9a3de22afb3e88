/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * features/access: the brick checks every fop as the kernel would before
 * acting (GlusterFS's features/access-control).
 *
 * Sits right above storage/posix. A request's caller (uid, gid, groups,
 * already squashed by protocol/server) must have, as a local process
 * would: search (x) on the parent for a named lookup; write and search on
 * the parent to make or remove a name (mknod, mkdir, symlink, create,
 * link, unlink, rmdir, rename), with the sticky-bit rule for removing or
 * replacing and write on a directory moved to another parent; read
 * and/or write for open by its flags, read for opendir; the setattr
 * rules (chmod and times by the owner, chown by root, chgrp by the owner
 * to its groups, setgid dropped by chmod outside the group, truncate
 * needs write); the xattr namespaces; access() by the same rules. The
 * decisions are access-perm.c's, POSIX ACLs (system.posix_acl_access)
 * included. uid 0 passes (CAP_DAC_OVERRIDE), and so do Mortar's own
 * requests (VL_CALLER_PID_INTERNAL, believed by protocol/server from
 * trusted connections only). Fops on an open fd (read, write...) are
 * not checked again: the open was.
 *
 * Attributes: each inode's ctx keeps mode, uid, gid and its ACL, filled
 * from the attributes in replies passing up (lookup, stat, setattr,
 * entry fops and their parents) and, when unknown, by a STAT and a
 * GETXATTR of the ACL sent to the child before the check. A setattr of
 * the mode or a change of the ACL xattr makes the ACL unknown again
 * (chmod rewrites its mask). Every change of the brick's objects passes
 * here, so what the ctx holds is what the disk holds.
 *
 * Intercepts: lookup, stat, access, setattr, mknod, mkdir, symlink,
 *             create, link, unlink, rmdir, rename, open, opendir,
 *             setxattr, getxattr, removexattr.
 * Per inode:  struct access_ictx, guarded by inode->lock.
 * Per req:    struct access_local (the objects checked, their attributes).
 * Threads:    the check runs on the thread of the fop or of the fetch's
 *             answer; nothing blocks.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "access.h"
#include "builtin.h"

/* Objects a check may need: rename's two parents, source and target. */
#define ACCESS_OBJ_MAX 4
/* The first fetch of an ACL asks for this many bytes (32 entries, more
 * than nearly every ACL has); -ERANGE fetches it again with room for
 * the largest. */
#define ACCESS_ACL_XATTR_FIRST (4u + 8u * 32u)
/* access_decide: an object's attributes must be fetched first. */
#define ACCESS_NEED 1

enum access_acl_state {
    ACCESS_ACL_UNKNOWN = 0, /* not fetched, or changed since */
    ACCESS_ACL_NONE,        /* none: the mode bits decide */
    ACCESS_ACL_SOME,        /* acl holds it */
    ACCESS_ACL_BAD,         /* malformed: only the owner passes */
};

struct access_ictx {
    bool has_attr;           /* mode, uid, gid known */
    uint8_t acl_state;       /* enum access_acl_state */
    uint32_t mode;           /* as the last reply said */
    uint32_t uid;
    uint32_t gid;
    struct access_acl *acl;  /* a reference, with ACCESS_ACL_SOME */
};

/* One object a check looks at. */
struct access_obj {
    vl_inode_t *inode;       /* borrowed (args) unless is_owned */
    vl_inode_t *parent;      /* borrowed; with name: found by lookup */
    const char *name;        /* borrowed */
    bool is_owned;           /* inode is our ref (a lookup's result) */
    bool is_known;           /* attr is filled */
    bool is_absent;          /* the name does not exist */
    struct access_attr attr; /* a copy: no lock held while deciding */
};

struct access_local {
    vl_xlator_t *xl;                      /* borrowed; this translator */
    vl_req_t *req;                        /* borrowed; being checked */
    struct access_obj obj[ACCESS_OBJ_MAX];
    int need;                             /* object being fetched */
    bool is_acl_refetch;                  /* fetching a large ACL again */
    uint32_t setattr_mode;                /* SETATTR: mode to set */
};

static const char *const access_mem_types[] = {"misc", NULL};

static void access_run(struct access_local *l);


/* ---- the inode ctx ---- */

static void
access_ctx_set_attr(vl_xlator_t *xl, vl_inode_t *inode,
                    const struct vl_iatt *ia)
{
    struct access_ictx *ctx;

    if (inode == NULL || ia->mode == 0)
        return;
    /* (1) an unlinked inode has no GFID yet and takes any; (2) a linked
     * one only its own attributes. */
    if (!vl_gfid_is_null(&inode->gfid)                /* (1) */
        && !vl_gfid_equal(&inode->gfid, &ia->gfid))   /* (2) */
        return;
    ctx = vl_inode_ctx(inode, xl);
    pthread_mutex_lock(&inode->lock);
    ctx->has_attr = true;
    ctx->mode = ia->mode;
    ctx->uid = ia->uid;
    ctx->gid = ia->gid;
    pthread_mutex_unlock(&inode->lock);
}


/* Sets the attributes of the inode linked under ia->gfid too (a lookup's
 * fresh inode is not the one protocol/server links and keeps). */
static void
access_ctx_set_linked(vl_xlator_t *xl, vl_inode_t *hint,
                      const struct vl_iatt *ia)
{
    vl_inode_t *linked;

    access_ctx_set_attr(xl, hint, ia);
    if (vl_gfid_is_null(&ia->gfid) || hint == NULL || hint->table == NULL)
        return;
    linked = vl_inode_find(hint->table, &ia->gfid);
    if (linked != NULL && linked != hint)
        access_ctx_set_attr(xl, linked, ia);
    vl_inode_unref(linked);
}


static void
access_ctx_forget_acl(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct access_ictx *ctx;
    struct access_acl *acl;

    if (inode == NULL)
        return;
    ctx = vl_inode_ctx(inode, xl);
    pthread_mutex_lock(&inode->lock);
    ctx->acl_state = ACCESS_ACL_UNKNOWN;
    acl = ctx->acl;
    ctx->acl = NULL;
    pthread_mutex_unlock(&inode->lock);
    access_acl_unref(acl);
}


/* Copies what the ctx knows into attr; false if the attributes or the
 * ACL are unknown. */
static bool
access_ctx_get(vl_xlator_t *xl, vl_inode_t *inode, struct access_attr *attr)
{
    struct access_ictx *ctx = vl_inode_ctx(inode, xl);
    bool is_known;

    pthread_mutex_lock(&inode->lock);
    is_known = ctx->has_attr && ctx->acl_state != ACCESS_ACL_UNKNOWN;
    if (is_known) {
        attr->mode = ctx->mode;
        attr->uid = ctx->uid;
        attr->gid = ctx->gid;
        attr->is_acl_bad = ctx->acl_state == ACCESS_ACL_BAD;
        attr->acl = access_acl_ref(ctx->acl);
    }
    pthread_mutex_unlock(&inode->lock);
    return is_known;
}


/* Mode, uid and gid alone (the ACL may be unknown); false if unknown. */
static bool
access_ctx_get_attr(vl_xlator_t *xl, vl_inode_t *inode,
                    struct access_attr *attr)
{
    struct access_ictx *ctx = vl_inode_ctx(inode, xl);
    bool has_attr;

    pthread_mutex_lock(&inode->lock);
    has_attr = ctx->has_attr;
    attr->mode = ctx->mode;
    attr->uid = ctx->uid;
    attr->gid = ctx->gid;
    pthread_mutex_unlock(&inode->lock);
    return has_attr;
}


/* ---- fetching attributes the ctx lacks ---- */

/* The attributes of object slot, the inode itself (name NULL) or the
 * name in parent; NULL when they must be fetched first (l->need says
 * which). A name that does not exist is_absent. */
static const struct access_obj *
access_obj(struct access_local *l, int slot, vl_inode_t *inode,
           vl_inode_t *parent, const char *name)
{
    struct access_obj *o = &l->obj[slot];

    if (o->is_known || o->is_absent)
        return o;
    if (inode != NULL && !vl_gfid_is_null(&inode->gfid)) {
        o->inode = inode;
        if (access_ctx_get(l->xl, inode, &o->attr)) {
            o->is_known = true;
            return o;
        }
    } else {
        o->parent = parent;
        o->name = name;
    }
    l->need = slot;
    return NULL;
}


/* Drops what the objects hold: lookups' inode refs and ACL refs. */
static void
access_objs_release(struct access_local *l)
{
    for (int i = 0; i < ACCESS_OBJ_MAX; i++) {
        struct access_obj *o = &l->obj[i];

        if (o->is_owned) {
            vl_inode_unref(o->inode);
            o->is_owned = false;
        }
        access_acl_unref(o->attr.acl);
        o->attr.acl = NULL;
    }
}


static void
access_fetch_fail(struct access_local *l, int status)
{
    vl_req_t *req = l->req;

    access_objs_release(l);
    vl_unwind(req, status);
}


static void access_fetch_acl(struct access_local *l);


static void
access_acl_done(vl_req_t *child, void *cookie)
{
    struct access_local *l = cookie;
    struct access_obj *o = &l->obj[l->need];
    struct access_ictx *ctx = vl_inode_ctx(o->inode, l->xl);
    struct access_acl *acl = NULL;
    uint8_t state;
    int rc = child->status;

    if (rc == -ERANGE && !l->is_acl_refetch) {
        l->is_acl_refetch = true; /* larger than the first guess */
        access_fetch_acl(l);
        return;
    }
    if (rc == -ENODATA || rc == -EOPNOTSUPP) {
        state = ACCESS_ACL_NONE;
    } else if (rc < 0 && rc != -ERANGE) {
        access_fetch_fail(l, rc);
        return;
    } else {
        if (rc == 0)
            rc = access_acl_parse(child->reply.xattr,
                                  child->reply.xattr_len, &acl);
        if (rc == -ENOMEM) {
            access_fetch_fail(l, rc);
            return;
        }
        if (rc != 0) {
            vl_log(l->xl, VL_LOG_WARNING, "malformed %s on an object: "
                   "only its owner passes", ACCESS_ACL_XATTR);
            state = ACCESS_ACL_BAD;
        } else {
            state = ACCESS_ACL_SOME;
        }
    }
    l->is_acl_refetch = false;
    pthread_mutex_lock(&o->inode->lock);
    if (ctx->acl_state == ACCESS_ACL_UNKNOWN) {
        ctx->acl_state = state;
        ctx->acl = access_acl_ref(acl);
    }
    pthread_mutex_unlock(&o->inode->lock);
    if (!access_ctx_get(l->xl, o->inode, &o->attr)) {
        /* Forgotten meanwhile (a chmod): decide with what was read. */
        o->attr.is_acl_bad = state == ACCESS_ACL_BAD;
        o->attr.acl = access_acl_ref(acl);
    }
    access_acl_unref(acl);
    o->is_known = true;
    access_run(l);
}


static void
access_fetch_acl(struct access_local *l)
{
    struct access_obj *o = &l->obj[l->need];
    vl_req_t *child;
    struct vl_getxattr_args *a;

    child = vl_req_new_op(l->req, VL_FIRST_CHILD(l->xl), VL_FOP_GETXATTR);
    if (child == NULL) {
        access_fetch_fail(l, -ENOMEM);
        return;
    }
    a = VL_ARGS(child, getxattr);
    a->loc.inode = o->inode;
    a->name = ACCESS_ACL_XATTR;
    a->size = l->is_acl_refetch ? ACCESS_ACL_XATTR_SIZE_MAX
                                : ACCESS_ACL_XATTR_FIRST;
    vl_wind(child, access_acl_done, l);
}


static void
access_stat_done(vl_req_t *child, void *cookie)
{
    struct access_local *l = cookie;
    struct access_obj *o = &l->obj[l->need];
    const struct vl_iatt *ia = &child->reply.iatt;

    if (child->status != 0) {
        access_fetch_fail(l, child->status);
        return;
    }
    access_ctx_set_linked(l->xl, o->inode, ia);
    o->attr.mode = ia->mode;
    o->attr.uid = ia->uid;
    o->attr.gid = ia->gid;
    access_fetch_acl(l);
}


/* A named object (a victim of unlink or rename) only needs its owner
 * and type: no ACL. */
static void
access_lookup_done(vl_req_t *child, void *cookie)
{
    struct access_local *l = cookie;
    struct access_obj *o = &l->obj[l->need];
    const struct vl_iatt *ia = &child->reply.iatt;

    if (child->status == -ENOENT) {
        o->is_absent = true;
    } else if (child->status != 0) {
        access_fetch_fail(l, child->status);
        return;
    } else {
        access_ctx_set_linked(l->xl, o->inode, ia);
        memset(&o->attr, 0, sizeof(o->attr));
        o->attr.mode = ia->mode;
        o->attr.uid = ia->uid;
        o->attr.gid = ia->gid;
        o->is_known = true;
    }
    access_run(l);
}


static void
access_fetch(struct access_local *l)
{
    struct access_obj *o = &l->obj[l->need];
    vl_fop_t op = o->inode != NULL ? VL_FOP_STAT : VL_FOP_LOOKUP;
    vl_req_t *child;

    if (op == VL_FOP_STAT && access_ctx_get_attr(l->xl, o->inode, &o->attr)) {
        access_fetch_acl(l); /* only the ACL is unknown */
        return;
    }
    if (op == VL_FOP_LOOKUP && (o->parent == NULL || o->name == NULL)) {
        access_fetch_fail(l, -ESTALE); /* an object without a GFID */
        return;
    }
    if (op == VL_FOP_LOOKUP) {
        o->inode = vl_inode_new(l->req->graph->itable);
        if (o->inode == NULL) {
            access_fetch_fail(l, -ENOMEM);
            return;
        }
        o->is_owned = true;
    }
    child = vl_req_new_op(l->req, VL_FIRST_CHILD(l->xl), op);
    if (child == NULL) {
        access_fetch_fail(l, -ENOMEM);
        return;
    }
    if (op == VL_FOP_STAT) {
        VL_ARGS(child, stat)->loc.inode = o->inode;
        vl_wind(child, access_stat_done, l);
    } else {
        struct vl_lookup_args *a = VL_ARGS(child, lookup);

        a->loc.parent = o->parent;
        a->loc.name = o->name;
        a->loc.inode = o->inode;
        vl_wind(child, access_lookup_done, l);
    }
}


/* ---- the decisions per fop ---- */

/* Write and search on dir. */
static int
access_dir_wx(const struct vl_caller *c, const struct access_obj *dir)
{
    if (!S_ISDIR(dir->attr.mode))
        return -ENOTDIR;
    return access_permission(c, &dir->attr,
                             ACCESS_MAY_WRITE | ACCESS_MAY_EXEC);
}


/* Removing name from parent (unlink, rmdir, rename's source and
 * target): write and search on parent, and the sticky rule, for which
 * the victim's owner is fetched only when parent is sticky and not the
 * caller's. */
static int
access_may_delete(struct access_local *l, int pslot, vl_inode_t *parent,
                  int vslot, vl_inode_t *victim, const char *name)
{
    const struct vl_caller *c = &l->req->caller;
    const struct access_obj *p = access_obj(l, pslot, parent, NULL, NULL);
    const struct access_obj *v;
    int rc;

    if (p == NULL)
        return ACCESS_NEED;
    rc = access_dir_wx(c, p);
    if (rc != 0 || !(p->attr.mode & S_ISVTX) || c->uid == p->attr.uid)
        return rc;
    v = access_obj(l, vslot, victim, parent, name);
    if (v == NULL)
        return ACCESS_NEED;
    if (v->is_absent)
        return 0; /* the fop itself answers ENOENT */
    return access_sticky(c, &p->attr, &v->attr);
}


static int
access_decide_rename(struct access_local *l)
{
    const struct vl_caller *c = &l->req->caller;
    struct vl_rename_args *a = VL_ARGS(l->req, rename);
    const struct access_obj *src, *dst;
    bool is_moved = a->oldloc.parent != a->newloc.parent;
    int rc;

    rc = access_may_delete(l, 0, a->oldloc.parent, 2, a->oldloc.inode,
                           a->oldloc.name);
    if (rc != 0)
        return rc;
    rc = access_may_delete(l, 1, a->newloc.parent, 3, a->newloc.inode,
                           a->newloc.name);
    if (rc != 0 || !is_moved)
        return rc;
    /* A directory moved to another parent rewrites its "..": write on
     * it (may_delete's "isdir" rule); with RENAME_EXCHANGE both move. */
    src = access_obj(l, 2, a->oldloc.inode, a->oldloc.parent,
                     a->oldloc.name);
    if (src == NULL)
        return ACCESS_NEED;
    if (!src->is_absent && S_ISDIR(src->attr.mode)) {
        rc = access_permission(c, &src->attr, ACCESS_MAY_WRITE);
        if (rc != 0)
            return rc;
    }
    if (!(a->flags & RENAME_EXCHANGE))
        return 0;
    dst = access_obj(l, 3, a->newloc.inode, a->newloc.parent,
                     a->newloc.name);
    if (dst == NULL)
        return ACCESS_NEED;
    if (!dst->is_absent && S_ISDIR(dst->attr.mode))
        return access_permission(c, &dst->attr, ACCESS_MAY_WRITE);
    return 0;
}


/* The object of an inode fop: by fd when there is one, else loc.inode. */
static vl_inode_t *
access_fop_inode(const struct vl_loc *loc, struct vl_fd *fd)
{
    return fd != NULL ? fd->inode : loc->inode;
}


/* 0 (allowed), -errno, or ACCESS_NEED (l->need names the object). */
static int
access_decide(struct access_local *l)
{
    vl_req_t *req = l->req;
    const struct vl_caller *c = &req->caller;
    const struct access_obj *o;

    switch (req->op) {
    case VL_FOP_LOOKUP: {
        struct vl_lookup_args *a = VL_ARGS(req, lookup);

        if (a->loc.parent == NULL || a->loc.name == NULL)
            return 0; /* nameless: by GFID, no path walked */
        o = access_obj(l, 0, a->loc.parent, NULL, NULL);
        if (o == NULL)
            return ACCESS_NEED;
        if (!S_ISDIR(o->attr.mode))
            return -ENOTDIR;
        return access_permission(c, &o->attr, ACCESS_MAY_EXEC);
    }
    case VL_FOP_ACCESS: {
        struct vl_access_args *a = VL_ARGS(req, access);

        o = access_obj(l, 0, a->loc.inode, NULL, NULL);
        if (o == NULL)
            return ACCESS_NEED;
        return access_permission(c, &o->attr, (unsigned)a->mask & 7u);
    }
    case VL_FOP_MKNOD:
    case VL_FOP_MKDIR:
    case VL_FOP_SYMLINK:
    case VL_FOP_CREATE:
    case VL_FOP_LINK: {
        const struct vl_loc *loc = NULL, *loc2 = NULL;

        (void)vl_req_entry_locs(req, &loc, &loc2);
        o = access_obj(l, 0, loc->parent, NULL, NULL);
        if (o == NULL)
            return ACCESS_NEED;
        return access_dir_wx(c, o);
    }
    case VL_FOP_UNLINK:
    case VL_FOP_RMDIR: {
        const struct vl_loc *loc = req->op == VL_FOP_UNLINK
                                       ? &VL_ARGS(req, unlink)->loc
                                       : &VL_ARGS(req, rmdir)->loc;

        return access_may_delete(l, 0, loc->parent, 1, loc->inode,
                                 loc->name);
    }
    case VL_FOP_RENAME:
        return access_decide_rename(l);
    case VL_FOP_OPEN: {
        struct vl_open_args *a = VL_ARGS(req, open);

        o = access_obj(l, 0, a->loc.inode, NULL, NULL);
        if (o == NULL)
            return ACCESS_NEED;
        return access_permission(c, &o->attr, access_open_want(a->flags));
    }
    case VL_FOP_OPENDIR: {
        struct vl_opendir_args *a = VL_ARGS(req, opendir);

        o = access_obj(l, 0, a->loc.inode, NULL, NULL);
        if (o == NULL)
            return ACCESS_NEED;
        return access_permission(c, &o->attr, ACCESS_MAY_READ);
    }
    case VL_FOP_SETATTR: {
        struct vl_setattr_args *a = VL_ARGS(req, setattr);

        o = access_obj(l, 0, access_fop_inode(&a->loc, a->fd), NULL, NULL);
        if (o == NULL)
            return ACCESS_NEED;
        l->setattr_mode = a->attr.mode;
        return access_setattr(c, &o->attr, a->valid, &a->attr, a->fd != NULL,
                              &l->setattr_mode);
    }
    case VL_FOP_SETXATTR:
    case VL_FOP_GETXATTR:
    case VL_FOP_REMOVEXATTR: {
        const struct vl_loc *loc;
        const char *name;

        if (req->op == VL_FOP_SETXATTR) {
            loc = &VL_ARGS(req, setxattr)->loc;
            name = VL_ARGS(req, setxattr)->name;
        } else if (req->op == VL_FOP_GETXATTR) {
            loc = &VL_ARGS(req, getxattr)->loc;
            name = VL_ARGS(req, getxattr)->name;
        } else {
            loc = &VL_ARGS(req, removexattr)->loc;
            name = VL_ARGS(req, removexattr)->name;
        }
        o = access_obj(l, 0, loc->inode, NULL, NULL);
        if (o == NULL)
            return ACCESS_NEED;
        if (req->op == VL_FOP_REMOVEXATTR)
            return access_xattr_remove(c, &o->attr, name);
        return access_xattr(c, &o->attr, name, req->op == VL_FOP_SETXATTR);
    }
    default:
        return 0;
    }
}


/* ---- passing on, and learning from the answer ---- */

static bool
access_is_acl_name(const char *name)
{
    return name != NULL && strncmp(name, "system.posix_acl_", 17) == 0;
}


static void
access_learn(vl_xlator_t *xl, vl_req_t *req, vl_req_t *child)
{
    const struct vl_reply *r = &child->reply;
    const union vl_fop_args *a = &req->args;

    switch (req->op) {
    case VL_FOP_LOOKUP:
        access_ctx_set_linked(xl, a->lookup.loc.inode, &r->iatt);
        break;
    case VL_FOP_STAT:
        access_ctx_set_linked(xl, access_fop_inode(&a->stat.loc, a->stat.fd),
                              &r->iatt);
        break;
    case VL_FOP_SETATTR: {
        vl_inode_t *in = access_fop_inode(&a->setattr.loc, a->setattr.fd);

        access_ctx_set_attr(xl, in, &r->iatt);
        if (a->setattr.valid & VL_SET_MODE)
            access_ctx_forget_acl(xl, in); /* its mask follows the mode */
        break;
    }
    case VL_FOP_SETXATTR:
        if (access_is_acl_name(a->setxattr.name))
            access_ctx_forget_acl(xl, a->setxattr.loc.inode);
        break;
    case VL_FOP_REMOVEXATTR:
        if (access_is_acl_name(a->removexattr.name))
            access_ctx_forget_acl(xl, a->removexattr.loc.inode);
        break;
    case VL_FOP_MKNOD:
    case VL_FOP_MKDIR:
    case VL_FOP_SYMLINK:
    case VL_FOP_CREATE:
    case VL_FOP_LINK:
    case VL_FOP_UNLINK:
    case VL_FOP_RMDIR:
    case VL_FOP_RENAME: {
        const struct vl_loc *loc = NULL, *loc2 = NULL;

        (void)vl_req_entry_locs(req, &loc, &loc2);
        if (req->op != VL_FOP_UNLINK && req->op != VL_FOP_RMDIR
            && req->op != VL_FOP_RENAME)
            access_ctx_set_linked(xl, loc->inode, &r->iatt);
        if (r->has_postparent)
            access_ctx_set_attr(xl, loc->parent, &r->postparent);
        if (loc2 != NULL && r->has_postparent2)
            access_ctx_set_attr(xl, loc2->parent, &r->postparent2);
        break;
    }
    default:
        break;
    }
}


static void
access_done(vl_req_t *child, void *cookie)
{
    vl_req_t *req = cookie;

    if (child->status == 0)
        access_learn(VL_REQ_PRIV(req, struct access_local)->xl, req, child);
    vl_reply_move(req, child);
    vl_unwind(req, child->status);
}


/* Winds req on (as a child, to see the answer); a SETATTR's mode may
 * have lost its setgid bit. */
static void
access_forward(vl_xlator_t *xl, vl_req_t *req, bool has_mode,
               uint32_t mode)
{
    vl_req_t *child = vl_req_child(req, VL_FIRST_CHILD(xl));

    if (child == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    if (has_mode)
        VL_ARGS(child, setattr)->attr.mode = mode;
    vl_wind(child, access_done, req);
}


static void
access_run(struct access_local *l)
{
    vl_xlator_t *xl = l->xl;
    vl_req_t *req = l->req;
    bool has_mode;
    int rc;

    rc = access_decide(l);
    if (rc == ACCESS_NEED) {
        access_fetch(l);
        return;
    }
    access_objs_release(l);
    if (rc != 0) {
        vl_log(xl, VL_LOG_DEBUG, "%s by uid %u gid %u: %s",
               vl_fop_name(req->op), req->caller.uid, req->caller.gid,
               strerror(-rc));
        vl_unwind(req, rc);
        return;
    }
    has_mode = req->op == VL_FOP_SETATTR
               && (VL_ARGS(req, setattr)->valid & VL_SET_MODE);
    access_forward(xl, req, has_mode, l->setattr_mode);
}


/* Every intercepted fop: root and Mortar's own requests are only
 * watched (their answers keep the ctx fresh), others checked first. */
static void
access_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct access_local *l = VL_REQ_PRIV(req, struct access_local);

    memset(l, 0, sizeof(*l));
    l->xl = xl;
    if (req->caller.uid == 0 || req->caller.pid == VL_CALLER_PID_INTERNAL) {
        access_forward(xl, req, false, 0);
        return;
    }
    l->req = req;
    l->need = -1;
    access_run(l);
}


/* An inode leaving the table drops the ctx's reference to its ACL. */
static void
access_forget(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct access_ictx *ctx = vl_inode_ctx(inode, xl);

    access_acl_unref(ctx->acl);
    ctx->acl = NULL;
}


static int
access_init(vl_xlator_t *xl, vl_err_t *err)
{
    (void)xl;
    (void)err;
    return 0;
}


static const vl_option_t access_options[] = {
    VL_OPT_END,
};


const vl_xlator_class_t xl_features_access = {
    .abi = VL_XLATOR_ABI,
    .type = "features/access",
    .type_alias = "features/access-control",
    .prefix = "access",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .req_priv_size = sizeof(struct access_local),
    .inode_ctx_size = sizeof(struct access_ictx),
    .options = access_options,
    .mem_types = access_mem_types,
    .doc = "Checks each request's caller against the objects' modes and "
           "POSIX ACLs as the kernel would (GlusterFS's "
           "features/access-control).",
    .init = access_init,
    .forget = access_forget,
    .fops = {
        [VL_FOP_LOOKUP] = access_fop,
        [VL_FOP_STAT] = access_fop,
        [VL_FOP_ACCESS] = access_fop,
        [VL_FOP_SETATTR] = access_fop,
        [VL_FOP_MKNOD] = access_fop,
        [VL_FOP_MKDIR] = access_fop,
        [VL_FOP_SYMLINK] = access_fop,
        [VL_FOP_CREATE] = access_fop,
        [VL_FOP_LINK] = access_fop,
        [VL_FOP_UNLINK] = access_fop,
        [VL_FOP_RMDIR] = access_fop,
        [VL_FOP_RENAME] = access_fop,
        [VL_FOP_OPEN] = access_fop,
        [VL_FOP_OPENDIR] = access_fop,
        [VL_FOP_SETXATTR] = access_fop,
        [VL_FOP_GETXATTR] = access_fop,
        [VL_FOP_REMOVEXATTR] = access_fop,
    },
};
