/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-entry: lookup and the fops that create, remove or move names.
 *
 * Intercepts: lookup, mknod, mkdir, symlink, create, unlink, rmdir,
 *             rename, link.
 * New objects get the client's GFID (args.gfid), the caller's uid/gid
 * (the parent's gid in a setgid directory) and mode & ~umask; if any of
 * that or the handle fails, the new object is removed again. Objects found
 * without a GFID (made on the brick by hand) get one on lookup.
 * mkdir may carry one xattr (vl_mkdir_args.xattr_name: distribute's
 * layout), set before the GFID and under the same key rules as setxattr.
 * Every fop that changes a name also answers the parent directory's
 * attributes after the change (reply.postparent, from an fstat of the
 * parent's fd: no path lookup), which saves the client a STAT of it.
 * A name being made is registered in posix-making.c until its GFID is
 * on (or it is undone): a lookup of it meanwhile waits, never heals it.
 * Threads: io-threads workers or inline on event threads; the making
 * registry's lock (posix-making.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix-content.h"
#include "posix.h"


/* The attributes of the directory open at atfd (parent's GFID) right
 * after a name in it changed, into *out; *has says whether they are. */
static void
posix_postparent(int atfd, const vl_inode_t *parent,
                 struct vl_iatt *out /* OUT */, bool *has /* OUT */)
{
    struct stat st;

    *has = false;
    if (parent == NULL || fstat(atfd, &st) < 0 || !S_ISDIR(st.st_mode))
        return;
    posix_iatt_fill(&st, &parent->gfid, out);
    *has = true;
}


/* Gives a just-created object at (obj->atfd, obj->rel) its GFID, owner,
 * mode and handle, and answers its attributes in req->reply.iatt; removes
 * it again on failure. The object was created with mode & 0777 (less the
 * process umask) and is of type (S_IFREG...); fd is open on it, or -1.
 * mode is ignored for symlinks.
 *
 * Few system calls (this runs for every create): the GFID goes on through
 * fd when there is one; the parent is stat'ed only when its setgid bit
 * matters (caller's group not ours, or a directory's mode to fix); chown
 * only when the owner differs from the kernel's choice, chmod only when
 * the mode does (umask, setuid/setgid/sticky bits); one final stat.
 * Crash order: the GFID is set before the handle is linked; a name
 * without GFID is healed by lookup. */
static int
posix_entry_finish(vl_xlator_t *xl, vl_req_t *req, struct posix_obj *obj,
                   vl_inode_t *parent, const vl_gfid_t *gfid, uint32_t mode,
                   int fd, mode_t type)
{
    struct posix_priv *priv = posix_priv(xl);
    bool is_dir = type == S_IFDIR;
    bool is_lnk = type == S_IFLNK;
    mode_t want = mode & 07777;
    mode_t cur = mode & 0777 & ~priv->proc_umask; /* what create made */
    gid_t gid = req->caller.gid;
    gid_t cur_gid = priv->egid; /* the group the kernel gave it */
    int rc;

    rc = fd >= 0 ? posix_gfid_fset(fd, gfid)
                 : posix_gfid_set(obj->atfd, obj->rel, gfid);
    if (rc != 0)
        goto undo;
    /* BSD group semantics in a setgid directory: the kernel already gave
     * the object the directory's group, and a subdirectory the setgid
     * bit. We need to know only if the caller's group is not ours, or if
     * a directory's mode is rewritten (it must keep that bit). */
    if (gid != priv->egid || (is_dir && want != cur)) {
        struct stat pst;

        if (fstat(obj->atfd, &pst) == 0 && (pst.st_mode & S_ISGID)) {
            gid = cur_gid = pst.st_gid;
            if (is_dir) {
                want |= S_ISGID;
                cur |= S_ISGID;
            }
        }
    } else {
        gid = (gid_t)-1; /* caller's group is ours: keep the kernel's */
    }
    if (req->caller.uid != priv->euid
        || (gid != (gid_t)-1 && gid != cur_gid)) {
        gid_t g = gid != cur_gid ? gid : (gid_t)-1;

        if ((fd >= 0 ? fchown(fd, req->caller.uid, g)
                     : fchownat(obj->atfd, obj->rel, req->caller.uid, g,
                                AT_SYMLINK_NOFOLLOW))
            < 0) {
            rc = -errno;
            goto undo;
        }
        /* chown cleared setuid/setgid of a file; cur has none of them. */
    }
    /* After chown. The object is ours and not a symlink: fchmodat may
     * follow (no AT_SYMLINK_NOFOLLOW, which glibc emulates with three
     * system calls). */
    if (!is_lnk && want != cur
        && (fd >= 0 ? fchmod(fd, want)
                    : fchmodat(obj->atfd, obj->rel, want, 0)) < 0) {
        rc = -errno;
        goto undo;
    }
    if ((fd >= 0 ? fstat(fd, &obj->st)
                 : fstatat(obj->atfd, obj->rel, &obj->st,
                           AT_SYMLINK_NOFOLLOW)) < 0) {
        rc = -errno;
        goto undo;
    }
    rc = posix_handle_create(xl, obj->atfd, obj->rel, &obj->st, gfid,
                             &parent->gfid, obj->rel);
    if (rc != 0)
        goto undo;
    obj->gfid = *gfid;
    posix_iatt_fill(&obj->st, &obj->gfid, &req->reply.iatt);
    posix_postparent(obj->atfd, parent, &req->reply.postparent,
                     &req->reply.has_postparent);
    return 0;
undo:
    vl_log(xl, VL_LOG_WARNING, "undoing creation of %s: %s", obj->rel,
           strerror(-rc));
    unlinkat(obj->atfd, obj->rel, is_dir ? AT_REMOVEDIR : 0);
    return rc;
}


/* Common checks of the creating fops; fills obj with the parent's fd. */
static int
posix_entry_prepare(vl_xlator_t *xl, const struct vl_loc *loc,
                    const vl_gfid_t *gfid, struct posix_obj *obj /* OUT */)
{
    int rc;

    rc = posix_obj_parent(xl, loc->parent, loc->name, true, obj);
    if (rc != 0)
        return rc;
    if (vl_gfid_is_null(gfid) || vl_gfid_is_root(gfid))
        rc = -EINVAL; /* the client must generate a GFID */
    else
        rc = posix_space_check(xl);
    if (rc != 0)
        posix_obj_put(obj);
    return rc;
}


/* Gives a hand-made object its GFID and handle (lookup's self-repair). */
static int
posix_lookup_heal(vl_xlator_t *xl, struct posix_obj *obj,
                  vl_inode_t *parent)
{
    vl_gfid_t gfid;
    int rc;

    vl_gfid_generate(&gfid);
    rc = posix_gfid_set(obj->atfd, obj->rel, &gfid);
    if (rc == -EEXIST) /* somebody else healed it first */
        return posix_gfid_get(obj->atfd, obj->rel, &obj->gfid);
    if (rc != 0)
        return rc;
    obj->gfid = gfid;
    return posix_handle_create(xl, obj->atfd, obj->rel, &obj->st, &gfid,
                               &parent->gfid, obj->rel);
}


/* The xattr a lookup asked for, into the reply (reply.xattr_status). */
static void
posix_lookup_xattr(vl_xlator_t *xl, struct posix_obj *obj, const char *name,
                   struct vl_reply *reply)
{
    size_t size = 256; /* distribute's layouts are 20 bytes */
    char *buf = NULL;
    ssize_t n;
    int rc = posix_xattr_name_check_read(name);

    for (int tries = 0; rc == 0 && tries < 3; tries++) {
        buf = vl_malloc(xl, size + 1, POSIX_MT_XATTR);
        if (buf == NULL) {
            rc = -ENOMEM;
            break;
        }
        n = posix_xattr_get_at(obj->atfd, obj->rel, name, buf, size);
        if (n >= 0) {
            buf[n] = '\0';
            reply->xattr = buf;
            reply->xattr_len = (uint32_t)n;
            reply->xattr_status = 0;
            return;
        }
        vl_free(buf);
        buf = NULL;
        rc = (int)n;
        if (rc != -ERANGE)
            break;
        /* Larger than thought: ask its size (it may grow meanwhile). */
        n = posix_xattr_get_at(obj->atfd, obj->rel, name, NULL, 0);
        if (n < 0) {
            rc = (int)n;
            break;
        }
        if ((size_t)n > POSIX_XATTR_SIZE_MAX) {
            rc = -E2BIG;
            break;
        }
        size = (size_t)n > size ? (size_t)n : size * 2;
        rc = 0;
    }
    if (rc == 0)
        rc = -ERANGE; /* kept growing */
    reply->xattr_status = rc;
}


void
posix_fop_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_lookup_args *a = VL_ARGS(req, lookup);
    struct posix_obj obj;
    int rc;

    if (a->loc.parent != NULL && a->loc.name != NULL) {
        rc = posix_obj_from_entry(xl, a->loc.parent, a->loc.name, &obj);
        /* A fop of ours was making it: read what it left. That may be
         * the object of the next fop making the name, removed and made
         * again after the wait ended: wait for that one too. Each round
         * waits for a fop begun after the last read, so this ends when
         * the name is no longer being made. */
        while (rc == 0 && vl_gfid_is_null(&obj.gfid)
               && posix_making_wait(xl, &a->loc.parent->gfid,
                                    a->loc.name)) {
            posix_obj_put(&obj);
            if (posix_lookup_test_after_wait != NULL)
                posix_lookup_test_after_wait(xl);
            rc = posix_obj_from_entry(xl, a->loc.parent, a->loc.name, &obj);
        }
        if (rc != 0)
            goto out;
        if (vl_gfid_is_null(&obj.gfid)) {
            rc = posix_lookup_heal(xl, &obj, a->loc.parent);
        } else if (S_ISREG(obj.st.st_mode) && obj.st.st_nlink == 2) {
            /* This name and the handle: nothing to check (a stat of the
             * handle is a random disk read when cold). One link means
             * the handle is missing, more may be hard links. */
        } else if (posix_handle_ensure(xl, obj.atfd, obj.rel, &obj.st,
                                       &obj.gfid, &a->loc.parent->gfid,
                                       obj.rel) != 0) {
            vl_log(xl, VL_LOG_WARNING, "cannot repair handle of %s",
                   obj.rel);
        }
    } else {
        rc = posix_obj_from_inode(xl, a->loc.inode, &obj);
        /* An unlinked open file has no name to be looked up by. */
        if (rc == 0 && obj.atfd == posix_priv(xl)->unlink_fd)
            rc = -ESTALE;
    }
    if (rc == 0)
        posix_iatt_fill(&obj.st, &obj.gfid, &req->reply.iatt);
    if (rc == 0 && a->content_max > 0)
        posix_content_read(xl, &obj, a->content_max, &req->reply);
    if (rc == 0 && a->xattr_name != NULL)
        posix_lookup_xattr(xl, &obj, a->xattr_name, &req->reply);
    /* Replicate's records with the lookup (none for an object whose
     * GFID could not be set: it is answered without). */
    if (rc == 0 && a->xop != NULL && !vl_gfid_is_null(&obj.gfid))
        posix_xattrop_lookup_read(xl, a->xop, &obj, &req->reply);
    posix_obj_put(&obj);
out:
    vl_unwind(req, rc);
}


void
posix_fop_mknod(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_mknod_args *a = VL_ARGS(req, mknod);
    struct posix_making making;
    struct posix_obj obj;
    mode_t type = a->mode & S_IFMT;
    int rc;

    rc = posix_entry_prepare(xl, &a->loc, &a->gfid, &obj);
    if (rc != 0)
        goto out;
    if (type == 0)
        type = S_IFREG;
    if (type == S_IFDIR || type == S_IFLNK) {
        rc = -EINVAL;
        goto put;
    }
    posix_making_begin(xl, &making, &a->loc.parent->gfid, a->loc.name);
    if (mknodat(obj.atfd, obj.rel, type | (a->mode & ~a->umask & 0777),
                (dev_t)a->rdev) < 0)
        rc = -errno;
    else
        rc = posix_entry_finish(xl, req, &obj, a->loc.parent, &a->gfid,
                                a->mode & ~a->umask, -1, type);
    posix_making_end(xl, &making);
put:
    posix_obj_put(&obj);
out:
    vl_unwind(req, rc);
}


/* mkdir, with the optional xattr of the request (distribute's layout).
 * That xattr goes on through an fd of the new directory before its GFID
 * does: a directory that carries its GFID (so that lookups report it)
 * always carries the xattr too. Without one, the GFID is set by name
 * (no open/close of the directory). */
void
posix_fop_mkdir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_mkdir_args *a = VL_ARGS(req, mkdir);
    struct posix_making making;
    struct posix_obj obj;
    int fd = -1;
    int rc;

    if (a->xattr_name != NULL) {
        rc = posix_xattr_name_check(a->xattr_name);
        if (rc == 0 && (a->xattr_size > POSIX_XATTR_SIZE_MAX
                        || (a->xattr_size > 0 && a->xattr_value == NULL)))
            rc = -EINVAL;
        if (rc != 0)
            goto out;
    }
    rc = posix_entry_prepare(xl, &a->loc, &a->gfid, &obj);
    if (rc != 0)
        goto out;
    /* Registered until the GFID is on or the directory undone: a lookup
     * of the name meanwhile waits instead of healing it (posix-making.c).
     */
    posix_making_begin(xl, &making, &a->loc.parent->gfid, a->loc.name);
    if (mkdirat(obj.atfd, obj.rel, a->mode & ~a->umask & 0777) < 0) {
        rc = -errno;
        goto end;
    }
    if (a->xattr_name != NULL) {
        fd = openat(obj.atfd, obj.rel,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fsetxattr(fd, a->xattr_name, a->xattr_value,
                                a->xattr_size, XATTR_CREATE) < 0) {
            rc = -errno;
            vl_log(xl, VL_LOG_WARNING, "undoing mkdir of %s: xattr %s: %s",
                   obj.rel, a->xattr_name, strerror(-rc));
            unlinkat(obj.atfd, obj.rel, AT_REMOVEDIR);
            goto end;
        }
    }
    rc = posix_entry_finish(xl, req, &obj, a->loc.parent, &a->gfid,
                            a->mode & ~a->umask, fd, S_IFDIR);
end:
    posix_making_end(xl, &making);
    if (fd >= 0)
        close(fd);
    posix_obj_put(&obj);
out:
    vl_unwind(req, rc);
}


void
posix_fop_symlink(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_symlink_args *a = VL_ARGS(req, symlink);
    struct posix_making making;
    struct posix_obj obj;
    int rc;

    rc = posix_entry_prepare(xl, &a->loc, &a->gfid, &obj);
    if (rc != 0)
        goto out;
    if (a->target == NULL || a->target[0] == '\0') {
        rc = -EINVAL;
        goto put;
    }
    if (strlen(a->target) >= PATH_MAX) {
        rc = -ENAMETOOLONG;
        goto put;
    }
    posix_making_begin(xl, &making, &a->loc.parent->gfid, a->loc.name);
    if (symlinkat(a->target, obj.atfd, obj.rel) < 0)
        rc = -errno;
    else
        rc = posix_entry_finish(xl, req, &obj, a->loc.parent, &a->gfid,
                                0777, -1, S_IFLNK);
    posix_making_end(xl, &making);
put:
    posix_obj_put(&obj);
out:
    vl_unwind(req, rc);
}


/* open(2) flags the brick honours; O_CREAT/O_EXCL are handled by create,
 * and anything that could follow a symlink or open a directory is cut.
 * O_DIRECT is dropped too: it means "bypass the client's cache", which the
 * client's kernel already did, and the payloads arriving from the network
 * are not aligned as O_DIRECT on the brick would demand (EINVAL). */
int
posix_open_flags(int32_t flags)
{
    flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_TMPFILE | O_DIRECTORY
               | O_PATH | O_DIRECT);
    return flags | O_NOFOLLOW | O_CLOEXEC;
}


void
posix_fop_create(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_create_args *a = VL_ARGS(req, create);
    struct posix_making making;
    struct posix_obj obj;
    bool is_new = true;
    bool is_making = false;
    int flags = posix_open_flags(a->flags);
    int fd;
    int rc;

    rc = posix_entry_prepare(xl, &a->loc, &a->gfid, &obj);
    if (rc != 0)
        goto out;
    if (a->fd == NULL) {
        rc = -EINVAL;
        goto put;
    }
    posix_making_begin(xl, &making, &a->loc.parent->gfid, a->loc.name);
    is_making = true;
    fd = openat(obj.atfd, obj.rel, flags | O_CREAT | O_EXCL,
                a->mode & ~a->umask & 0777);
    if (fd < 0 && errno == EEXIST && !(a->flags & O_EXCL)) {
        /* Opening an existing file: it keeps its own GFID. Never open a
         * directory or a FIFO (it would block) here. One that another
         * fop is still making gets its GFID from that fop, not a heal. */
        is_new = false;
        posix_making_end(xl, &making);
        is_making = false;
        (void)posix_making_wait(xl, &a->loc.parent->gfid, a->loc.name);
        rc = posix_obj_stat(&obj);
        /* Made again by another fop after the wait: wait for it too (as
         * lookup does). */
        while (rc == 0 && vl_gfid_is_null(&obj.gfid)
               && posix_making_wait(xl, &a->loc.parent->gfid, a->loc.name))
            rc = posix_obj_stat(&obj);
        if (rc == 0 && !S_ISREG(obj.st.st_mode))
            rc = S_ISDIR(obj.st.st_mode) ? -EISDIR : -EEXIST;
        if (rc != 0)
            goto put;
        fd = openat(obj.atfd, obj.rel, flags);
    }
    if (fd < 0) {
        rc = -errno;
        goto put;
    }
    if (is_new)
        rc = posix_entry_finish(xl, req, &obj, a->loc.parent, &a->gfid,
                                a->mode & ~a->umask, fd, S_IFREG);
    if (rc == 0 && vl_gfid_is_null(&obj.gfid))
        rc = posix_lookup_heal(xl, &obj, a->loc.parent);
    if (rc == 0)
        rc = posix_fd_ctx_set(xl, a->fd, fd, false);
    if (rc != 0) {
        close(fd);
        if (is_new && unlinkat(obj.atfd, obj.rel, 0) == 0)
            posix_handle_unlink_if_last(xl, &a->gfid);
        goto put;
    }
    /* A new file was reported by posix_entry_finish (stat of the fd). */
    if (!is_new && fstat(fd, &obj.st) == 0)
        posix_iatt_fill(&obj.st, &obj.gfid, &req->reply.iatt);
    if (!is_new)
        posix_postparent(obj.atfd, a->loc.parent, &req->reply.postparent,
                         &req->reply.has_postparent);
put:
    if (is_making)
        posix_making_end(xl, &making);
    posix_obj_put(&obj);
out:
    vl_unwind(req, rc);
}


/* The entry to unlink, resolved with few system calls, and without
 * touching the handle tree when possible (its directory blocks are cold
 * disk reads after a cache drop, the name's inode is not after the stat).
 * A regular file with one name (nlink 2: the name and its handle) gets
 * its GFID from its own xattr (*is_single: the janitor removes the handle
 * if it is this inode). Otherwise the client usually names the object it
 * expects (loc.inode, from its lookup): when that GFID's handle is the
 * same inode as the name, the name's GFID is known without reading its
 * xattr (the handle is a hard link of the object, and a GFID has one
 * handle), and *hst is the handle's stat. A missing or stale hint falls
 * back to reading the xattr (*has_hst false). */
static int
posix_unlink_resolve(vl_xlator_t *xl, const struct vl_loc *loc,
                     struct posix_obj *obj /* OUT */,
                     struct stat *hst /* OUT */, bool *has_hst /* OUT */,
                     bool *is_single /* OUT */)
{
    struct posix_priv *priv = posix_priv(xl);
    char hrel[POSIX_HANDLE_REL_LEN];
    int rc;

    *has_hst = false;
    *is_single = false;
    rc = posix_obj_parent(xl, loc->parent, loc->name, false, obj);
    if (rc != 0)
        return rc;
    if (fstatat(obj->atfd, obj->rel, &obj->st, AT_SYMLINK_NOFOLLOW) < 0) {
        rc = -errno;
        goto fail;
    }
    if (S_ISREG(obj->st.st_mode) && obj->st.st_nlink == 2
        && posix_gfid_get(obj->atfd, obj->rel, &obj->gfid) == 0) {
        *is_single = true;
        return 0;
    }
    if (loc->inode != NULL && !vl_gfid_is_null(&loc->inode->gfid)
        && S_ISREG(obj->st.st_mode)) {
        posix_handle_rel(&loc->inode->gfid, hrel);
        if (fstatat(priv->handles_fd, hrel, hst, AT_SYMLINK_NOFOLLOW) == 0
            && hst->st_ino == obj->st.st_ino
            && hst->st_dev == obj->st.st_dev) {
            obj->gfid = loc->inode->gfid;
            *has_hst = true;
            return 0;
        }
    }
    rc = posix_gfid_get(obj->atfd, obj->rel, &obj->gfid);
    if (rc == -ENODATA) {
        obj->gfid = vl_gfid_null;
        rc = 0;
    }
    if (rc == 0)
        return 0;
fail:
    posix_obj_put(obj);
    return rc;
}


/* unlink: stat of the name; a regular file with one name: its GFID
 * xattr, unlinkat, fstat of the parent for the reply, and the handle
 * queued for the janitor (a link() racing with it makes the handle's
 * link count 2 again: the janitor keeps it). Otherwise the GFID from
 * the client's hint checked against the handle's stat (or the xattr);
 * unlinkat; the handle removed when the name was its last one; fstat of
 * the parent. With the hint and a handle at nlink 2 (this name and the
 * handle: a name without GFID xattr), the
 * handle goes without being stat'ed again: a link() racing with this
 * unlink may leave the new name without handle, which the next lookup
 * of it repairs (as with a link racing between stat and unlink of the
 * handle without the hint). With more names, the handle is stat'ed after
 * the unlink, so that of two racing unlinks the last one removes it. */
void
posix_fop_unlink(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_unlink_args *a = VL_ARGS(req, unlink);
    struct posix_obj obj;
    struct stat hst;
    bool has_hst;
    bool is_single;
    int rc;

    rc = posix_unlink_resolve(xl, &a->loc, &obj, &hst, &has_hst,
                              &is_single);
    if (rc != 0)
        goto out;
    if (S_ISDIR(obj.st.st_mode)) {
        rc = -EISDIR;
        goto put;
    }
    if (unlinkat(obj.atfd, obj.rel, 0) < 0) {
        rc = -errno;
        goto put;
    }
    /* An open fd keeps the data alive; the handle goes with the last
     * name so the GFID no longer resolves. The handle of a regular file
     * that had one name is left to the janitor (after the reply; it
     * checks that the handle is this inode), unless the file is open
     * here: with no name left it resolves no more already. */
    if (is_single) {
        if (posix_janitor_enqueue(xl, &obj.gfid, obj.st.st_ino) != 0)
            posix_handle_unlink_if_last(xl, &obj.gfid);
    } else if (has_hst && hst.st_nlink == 2) {
        posix_handle_drop(xl, &obj.gfid);
    } else {
        posix_handle_unlink_if_last(xl, &obj.gfid);
    }
    posix_postparent(obj.atfd, a->loc.parent, &req->reply.postparent,
                     &req->reply.has_postparent);
put:
    posix_obj_put(&obj);
out:
    vl_unwind(req, rc);
}


void
posix_fop_rmdir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rmdir_args *a = VL_ARGS(req, rmdir);
    struct posix_obj obj;
    int last_fd = -1;
    int rc;

    rc = posix_obj_from_entry(xl, a->loc.parent, a->loc.name, &obj);
    if (rc != 0)
        goto out;
    if (!S_ISDIR(obj.st.st_mode)) {
        rc = -ENOTDIR;
        goto put;
    }
    /* Whoever drops the last reference to a removed directory frees its
     * inode (about 100 us on ext4). Hold an fd across the unlinkat, the
     * cached one or a new one, and leave its close to the janitor. */
    if (!vl_gfid_is_null(&obj.gfid) && !vl_gfid_is_root(&obj.gfid)) {
        last_fd = posix_dirfd_take(xl, &obj.gfid);
        if (last_fd < 0)
            last_fd = openat(obj.atfd, obj.rel, O_PATH | O_DIRECTORY
                                                    | O_NOFOLLOW
                                                    | O_CLOEXEC);
    }
    if (unlinkat(obj.atfd, obj.rel, AT_REMOVEDIR) < 0) {
        rc = -errno;
        goto put;
    }
    /* The handle symlink now leads nowhere (resolving it gives ESTALE):
     * the janitor removes it after the reply. */
    if (vl_gfid_is_null(&obj.gfid) || vl_gfid_is_root(&obj.gfid)
        || posix_janitor_enqueue_rmdir(xl, &obj.gfid, &last_fd) != 0)
        posix_handle_remove_dir(xl, &obj.gfid);
    /* An fd cached by a lookup since the take. */
    posix_dirfd_uncache(xl, &obj.gfid);
    posix_postparent(obj.atfd, a->loc.parent, &req->reply.postparent,
                     &req->reply.has_postparent);
put:
    if (last_fd >= 0)
        close(last_fd);
    posix_obj_put(&obj);
out:
    vl_unwind(req, rc);
}


/* Fixes handles after a successful rename of src (now at dst's name). */
static void
posix_rename_handles(vl_xlator_t *xl, const struct vl_rename_args *a,
                     const struct posix_obj *src, const struct posix_obj *dst,
                     bool has_dst)
{
    int rc = 0;

    if (has_dst && dst->st.st_ino == src->st.st_ino
        && dst->st.st_dev == src->st.st_dev)
        return; /* two names of one file: rename did nothing */
    if (S_ISDIR(src->st.st_mode) && !vl_gfid_is_null(&src->gfid))
        rc = posix_handle_dir_update(xl, &src->gfid, &a->newloc.parent->gfid,
                                     a->newloc.name);
    if (rc != 0)
        vl_log(xl, VL_LOG_WARNING, "rename %s -> %s: handle update: %s",
               a->oldloc.name, a->newloc.name, strerror(-rc));
    if (!has_dst)
        return;
    if (a->flags & RENAME_EXCHANGE) {
        if (S_ISDIR(dst->st.st_mode) && !vl_gfid_is_null(&dst->gfid))
            rc = posix_handle_dir_update(xl, &dst->gfid,
                                         &a->oldloc.parent->gfid,
                                         a->oldloc.name);
        if (rc != 0)
            vl_log(xl, VL_LOG_WARNING, "exchange %s <-> %s: handle: %s",
                   a->oldloc.name, a->newloc.name, strerror(-rc));
    } else if (S_ISDIR(dst->st.st_mode)) {
        posix_handle_remove_dir(xl, &dst->gfid);
        posix_dirfd_uncache(xl, &dst->gfid);
    } else if (!S_ISREG(dst->st.st_mode) || dst->st.st_nlink != 2
               || vl_gfid_is_null(&dst->gfid)
               || posix_janitor_enqueue(xl, &dst->gfid, dst->st.st_ino)
                      != 0) {
        /* A replaced file with one name (and its handle) not open here
         * leaves its handle to the janitor, as unlink does. */
        posix_handle_unlink_if_last(xl, &dst->gfid);
    }
}


void
posix_fop_rename(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_rename_args *a = VL_ARGS(req, rename);
    struct posix_obj src;
    struct posix_obj dst;
    bool has_dst = false;
    int rc;

    rc = posix_obj_from_entry(xl, a->oldloc.parent, a->oldloc.name, &src);
    if (rc != 0)
        goto out;
    rc = posix_obj_parent(xl, a->newloc.parent, a->newloc.name, true, &dst);
    if (rc != 0)
        goto put_src;
    if (a->flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE)) {
        rc = -EINVAL;
        goto put;
    }
    rc = posix_obj_stat(&dst);
    if (rc == 0)
        has_dst = true;
    else if (rc != -ENOENT)
        goto put;
    if (renameat2(src.atfd, src.rel, dst.atfd, dst.rel, a->flags) < 0) {
        rc = -errno;
        goto put;
    }
    posix_rename_handles(xl, a, &src, &dst, has_dst);
    /* Reply with the moved object, now at the new name. */
    if (fstatat(dst.atfd, dst.rel, &src.st, AT_SYMLINK_NOFOLLOW) < 0) {
        rc = -errno;
        goto put;
    }
    posix_iatt_fill(&src.st, &src.gfid, &req->reply.iatt);
    posix_postparent(src.atfd, a->oldloc.parent, &req->reply.postparent,
                     &req->reply.has_postparent);
    posix_postparent(dst.atfd, a->newloc.parent, &req->reply.postparent2,
                     &req->reply.has_postparent2);
    rc = 0;
put:
    posix_obj_put(&dst);
put_src:
    posix_obj_put(&src);
out:
    vl_unwind(req, rc);
}


void
posix_fop_link(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_link_args *a = VL_ARGS(req, link);
    struct posix_obj src;
    struct posix_obj dst;
    int rc;

    rc = posix_obj_from_loc(xl, &a->oldloc, &src);
    if (rc != 0)
        goto out;
    if (S_ISDIR(src.st.st_mode)) {
        rc = -EPERM;
        goto put_src;
    }
    if (src.atfd == posix_priv(xl)->unlink_fd) {
        rc = -ENOENT; /* unlinked while open: no new names */
        goto put_src;
    }
    rc = posix_obj_parent(xl, a->newloc.parent, a->newloc.name, true, &dst);
    if (rc != 0)
        goto put_src;
    if (linkat(src.atfd, src.rel, dst.atfd, dst.rel, 0) < 0) {
        rc = -errno;
        goto put;
    }
    if (fstatat(dst.atfd, dst.rel, &dst.st, AT_SYMLINK_NOFOLLOW) < 0) {
        rc = -errno;
        goto put;
    }
    posix_iatt_fill(&dst.st, &src.gfid, &req->reply.iatt);
    posix_postparent(dst.atfd, a->newloc.parent, &req->reply.postparent,
                     &req->reply.has_postparent);
put:
    posix_obj_put(&dst);
put_src:
    posix_obj_put(&src);
out:
    vl_unwind(req, rc);
}
