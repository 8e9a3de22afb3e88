/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-inode: fops on an object's attributes and xattrs.
 *
 * Intercepts: stat, setattr, access, readlink, statfs, setxattr,
 *             getxattr (and listing with name NULL), removexattr.
 * The brick's own xattrs (trusted.mortar.*) cannot be read, set or
 * removed by clients (EPERM) and are left out of listings, except the
 * keys of cluster/distribute (trusted.mortar.dht and trusted.mortar.dht.*:
 * directory layouts, link file targets), which clients must manage; they
 * are still left out of listings so that users never copy them.
 * Replication's counters (trusted.mortar.rep.*) can be read, by name
 * only; only xattrop (posix-xattrop.c) changes them, so the heal index
 * stays true. Nothing
 * follows a symlink: *at() calls take AT_SYMLINK_NOFOLLOW, xattrs use
 * the l*xattr calls on /proc/self/fd/<atfd>/<rel>.
 * Threads: io-threads workers; no locks of our own.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix.h"

/* The one subtree of the brick's prefix clients may use (distribute). */
#define POSIX_DHT_XATTR "trusted.mortar.dht"


void
posix_fop_stat(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_stat_args *a = VL_ARGS(req, stat);
    struct posix_obj obj;
    int os_fd;
    int rc;

    if (a->fd != NULL) {
        rc = posix_fd_os(xl, a->fd, &os_fd);
        if (rc == 0 && fstat(os_fd, &obj.st) < 0)
            rc = -errno;
        if (rc == 0)
            posix_iatt_fill_open(xl, &obj.st, &a->fd->inode->gfid,
                                 &req->reply.iatt);
        vl_unwind(req, rc);
        return;
    }
    rc = posix_obj_from_loc(xl, &a->loc, &obj);
    if (rc == 0)
        posix_iatt_fill(&obj.st, &obj.gfid, &req->reply.iatt);
    posix_obj_put(&obj);
    vl_unwind(req, rc);
}


/* Applies the valid bits through an open fd (os_fd >= 0) or by name
 * (atfd, rel), owner first (it clears setuid), times last (truncate
 * moves mtime). st is the object's current state. */
static int
posix_setattr_apply(const struct vl_setattr_args *a, int os_fd, int atfd,
                    const char *rel, const struct stat *st)
{
    const struct vl_iatt *at = &a->attr;
    uint32_t v = a->valid;
    mode_t mode = st->st_mode & 07777;
    bool has_mode = false;
    struct timespec ts[2];
    int rc = 0;

    if (v & (VL_SET_UID | VL_SET_GID)) {
        uid_t uid = (v & VL_SET_UID) ? (uid_t)at->uid : (uid_t)-1;
        gid_t gid = (v & VL_SET_GID) ? (gid_t)at->gid : (gid_t)-1;

        rc = os_fd >= 0 ? fchown(os_fd, uid, gid)
                        : fchownat(atfd, rel, uid, gid, AT_SYMLINK_NOFOLLOW);
        if (rc < 0)
            return -errno;
    }
    if (v & VL_SET_MODE) {
        mode = at->mode & 07777;
        has_mode = true;
    } else if ((v & VL_SET_KILL_SUIDGID) && !S_ISDIR(st->st_mode)) {
        mode &= ~S_ISUID;
        if (mode & S_IXGRP)
            mode &= ~S_ISGID;
        has_mode = (mode != (st->st_mode & 07777));
    }
    if (has_mode && !S_ISLNK(st->st_mode)) {
        rc = os_fd >= 0 ? fchmod(os_fd, mode)
                        : fchmodat(atfd, rel, mode, AT_SYMLINK_NOFOLLOW);
        if (rc < 0)
            return -errno;
    }
    if (v & VL_SET_SIZE) {
        int fd = os_fd;

        if (S_ISDIR(st->st_mode))
            return -EISDIR;
        if (!S_ISREG(st->st_mode))
            return -EINVAL;
        if (fd < 0) {
            fd = openat(atfd, rel, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0)
                return -errno;
        }
        rc = ftruncate(fd, (off_t)at->size) < 0 ? -errno : 0;
        if (fd != os_fd)
            close(fd);
        if (rc != 0)
            return rc;
    }
    if (v & (VL_SET_ATIME | VL_SET_MTIME | VL_SET_ATIME_NOW
             | VL_SET_MTIME_NOW)) {
        ts[0].tv_sec = at->atime;
        ts[0].tv_nsec = (v & VL_SET_ATIME_NOW) ? UTIME_NOW
                        : (v & VL_SET_ATIME)   ? (long)at->atime_ns
                                               : UTIME_OMIT;
        ts[1].tv_sec = at->mtime;
        ts[1].tv_nsec = (v & VL_SET_MTIME_NOW) ? UTIME_NOW
                        : (v & VL_SET_MTIME)   ? (long)at->mtime_ns
                                               : UTIME_OMIT;
        /* Only caller-given nanoseconds need checking; UTIME_NOW and
         * UTIME_OMIT are out of range on purpose. */
        if (((v & VL_SET_ATIME) && !(v & VL_SET_ATIME_NOW)
             && at->atime_ns > 999999999)
            || ((v & VL_SET_MTIME) && !(v & VL_SET_MTIME_NOW)
                && at->mtime_ns > 999999999))
            return -EINVAL;
        rc = os_fd >= 0 ? futimens(os_fd, ts)
                        : utimensat(atfd, rel, ts, AT_SYMLINK_NOFOLLOW);
        if (rc < 0)
            return -errno;
    }
    return 0;
}


void
posix_fop_setattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_setattr_args *a = VL_ARGS(req, setattr);
    struct posix_obj obj;
    int os_fd = -1;
    int rc;

    memset(&obj, 0, sizeof(obj));
    obj.atfd = -1;
    if (a->fd != NULL) {
        rc = posix_fd_os(xl, a->fd, &os_fd);
        if (rc == 0 && fstat(os_fd, &obj.st) < 0)
            rc = -errno;
        obj.gfid = a->fd->inode->gfid;
    } else {
        rc = posix_obj_from_loc(xl, &a->loc, &obj);
    }
    if (rc != 0)
        goto out;
    rc = posix_setattr_apply(a, os_fd, obj.atfd, obj.rel, &obj.st);
    if (rc != 0)
        goto out;
    rc = os_fd >= 0 ? fstat(os_fd, &obj.st)
                    : fstatat(obj.atfd, obj.rel, &obj.st,
                              AT_SYMLINK_NOFOLLOW);
    if (rc == 0 && os_fd < 0 && obj.atfd == posix_priv(xl)->unlink_fd)
        obj.st.st_nlink--; /* parked: the only link is the handle */
    if (rc < 0) {
        rc = -errno;
        goto out;
    }
    if (os_fd >= 0)
        posix_iatt_fill_open(xl, &obj.st, &obj.gfid, &req->reply.iatt);
    else
        posix_iatt_fill(&obj.st, &obj.gfid, &req->reply.iatt);
out:
    posix_obj_put(&obj);
    vl_unwind(req, rc);
}


static bool
posix_caller_in_group(const struct vl_caller *c, gid_t gid)
{
    if (c->gid == gid)
        return true;
    for (uint32_t i = 0; i < c->n_groups && i < VL_MAX_GROUPS; i++)
        if (c->groups[i] == gid)
            return true;
    return false;
}


/* Permission bits only (no ACLs): the brick runs as root, so it checks
 * the caller's identity itself. */
void
posix_fop_access(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_access_args *a = VL_ARGS(req, access);
    const struct vl_caller *c = &req->caller;
    struct posix_obj obj;
    unsigned mask = (unsigned)a->mask;
    unsigned bits;
    mode_t m;
    int rc;

    if (mask & ~(unsigned)(R_OK | W_OK | X_OK)) {
        vl_unwind(req, -EINVAL);
        return;
    }
    rc = posix_obj_from_loc(xl, &a->loc, &obj);
    if (rc != 0)
        goto out;
    m = obj.st.st_mode;
    if (c->uid == 0)
        bits = (S_ISDIR(m) || (m & 0111)) ? 7 : 6;
    else if (c->uid == obj.st.st_uid)
        bits = (m >> 6) & 7;
    else if (posix_caller_in_group(c, obj.st.st_gid))
        bits = (m >> 3) & 7;
    else
        bits = m & 7;
    if ((mask & bits) != mask)
        rc = -EACCES;
out:
    posix_obj_put(&obj);
    vl_unwind(req, rc);
}


void
posix_fop_readlink(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_readlink_args *a = VL_ARGS(req, readlink);
    struct posix_obj obj;
    char buf[PATH_MAX];
    ssize_t n;
    int rc;

    rc = posix_obj_from_loc(xl, &a->loc, &obj);
    if (rc != 0)
        goto out;
    if (!S_ISLNK(obj.st.st_mode)) {
        rc = -EINVAL;
        goto out;
    }
    n = readlinkat(obj.atfd, obj.rel, buf, sizeof(buf) - 1);
    if (n < 0) {
        rc = -errno;
        goto out;
    }
    req->reply.link = vl_strndup(xl, buf, (size_t)n, POSIX_MT_LINK);
    if (req->reply.link == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    req->reply.count = n;
    posix_iatt_fill(&obj.st, &obj.gfid, &req->reply.iatt);
out:
    posix_obj_put(&obj);
    vl_unwind(req, rc);
}


/* The brick as the client sees it: the reserve is not available. */
void
posix_fop_statfs(vl_xlator_t *xl, vl_req_t *req)
{
    const struct posix_conf *conf = VL_CONF(xl, struct posix_conf);
    struct statvfs *sv = &req->reply.statvfs;
    fsblkcnt_t reserve;

    if (fstatvfs(posix_priv(xl)->root_fd, sv) < 0) {
        vl_unwind(req, -errno);
        return;
    }
    reserve = (fsblkcnt_t)((double)sv->f_blocks * conf->reserve / 100.0);
    sv->f_bavail = sv->f_bavail > reserve ? sv->f_bavail - reserve : 0;
    sv->f_bfree = sv->f_bfree > reserve ? sv->f_bfree - reserve : 0;
    vl_unwind(req, 0);
}


/* May a client set, get or remove key name? 0, or -EINVAL/-ERANGE/-EPERM
 * (setxattr and mkdir's xattr). */
int
posix_xattr_name_check(const char *name)
{
    if (name == NULL || name[0] == '\0')
        return -EINVAL;
    if (strlen(name) > XATTR_NAME_MAX)
        return -ERANGE;
    if (strncmp(name, POSIX_XATTR_PREFIX, strlen(POSIX_XATTR_PREFIX)) != 0)
        return 0;
    /* distribute's keys: exactly the layout key or below it. */
    if (strncmp(name, POSIX_DHT_XATTR, strlen(POSIX_DHT_XATTR)) == 0
        && (name[strlen(POSIX_DHT_XATTR)] == '\0'
            || name[strlen(POSIX_DHT_XATTR)] == '.'))
        return 0;
    return -EPERM;
}


int
posix_xattr_name_check_read(const char *name)
{
    const size_t plen = strlen(VL_XATTROP_PREFIX);

    if (name != NULL && strncmp(name, VL_XATTROP_PREFIX, plen) == 0
        && name[plen] != '\0' && strlen(name) <= XATTR_NAME_MAX)
        return 0;
    return posix_xattr_name_check(name);
}


void
posix_fop_setxattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_setxattr_args *a = VL_ARGS(req, setxattr);
    char path[POSIX_PROC_PATH_LEN];
    struct posix_obj obj;
    int rc;

    memset(&obj, 0, sizeof(obj));
    obj.atfd = -1;
    rc = posix_xattr_name_check(a->name);
    if (rc == 0 && (a->flags & ~(XATTR_CREATE | XATTR_REPLACE)) != 0)
        rc = -EINVAL;
    if (rc == 0 && a->size > 0 && a->value == NULL)
        rc = -EINVAL;
    if (rc == 0)
        rc = posix_obj_from_loc(xl, &a->loc, &obj);
    if (rc != 0)
        goto out;
    posix_proc_path(obj.atfd, obj.rel, path);
    if (lsetxattr(path, a->name, a->size > 0 ? a->value : "", a->size,
                  a->flags) < 0)
        rc = -errno;
out:
    posix_obj_put(&obj);
    vl_unwind(req, rc);
}


/* Lists names without the brick's own; *out owned by the caller. */
static int
posix_xattr_list(vl_xlator_t *xl, const char *path, char **out,
                 size_t *out_len)
{
    const size_t plen = strlen(POSIX_XATTR_PREFIX);
    char *buf = NULL;
    ssize_t n = 0;
    size_t len = 0;

    for (int attempt = 0; attempt < 8; attempt++) {
        n = llistxattr(path, NULL, 0);
        if (n < 0)
            return -errno;
        vl_free(buf);
        buf = vl_malloc(xl, (size_t)n + 1, POSIX_MT_XATTR);
        if (buf == NULL)
            return -ENOMEM;
        n = llistxattr(path, buf, (size_t)n);
        if (n >= 0 || errno != ERANGE)
            break; /* ERANGE: the list grew meanwhile */
    }
    if (n < 0) {
        int rc = -errno;

        vl_free(buf);
        return rc;
    }
    for (ssize_t i = 0; i < n;) {
        size_t l = strnlen(buf + i, (size_t)(n - i));

        if (strncmp(buf + i, POSIX_XATTR_PREFIX, plen) != 0) {
            memmove(buf + len, buf + i, l);
            buf[len + l] = '\0';
            len += l + 1;
        }
        i += (ssize_t)l + 1;
    }
    *out = buf;
    *out_len = len;
    return 0;
}


/* The virtual key POSIX_INDEX_ENTRY_VKEY of a directory: its granular
 * entry records (heal reads them to visit only the names that changed). */
static void
posix_getxattr_entry_changes(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_getxattr_args *a = VL_ARGS(req, getxattr);
    size_t size = a->size > 0 ? a->size : POSIX_XATTR_SIZE_MAX, len = 0;
    char *buf;
    int rc;

    if (a->loc.inode == NULL || vl_gfid_is_null(&a->loc.inode->gfid)) {
        vl_unwind(req, -EINVAL);
        return;
    }
    if (size > POSIX_XATTR_SIZE_MAX)
        size = POSIX_XATTR_SIZE_MAX;
    buf = vl_malloc(xl, size + 1, POSIX_MT_XATTR);
    if (buf == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    rc = posix_index_entry_list(xl, &a->loc.inode->gfid, buf, size, &len);
    if (rc == 0 && a->size == 0) {
        req->reply.count = (int64_t)len;
    } else if (rc == 0) {
        buf[len] = '\0';
        req->reply.count = (int64_t)len;
        req->reply.xattr = buf;
        buf = NULL;
    }
    vl_free(buf);
    vl_unwind(req, rc);
}


void
posix_fop_getxattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_getxattr_args *a = VL_ARGS(req, getxattr);
    char path[POSIX_PROC_PATH_LEN];
    struct posix_obj obj;
    size_t size = a->size;
    char *buf = NULL;
    size_t len = 0;
    ssize_t n;
    int rc = 0;

    memset(&obj, 0, sizeof(obj));
    obj.atfd = -1;
    if (a->name != NULL && strcmp(a->name, POSIX_INDEX_ENTRY_VKEY) == 0) {
        posix_getxattr_entry_changes(xl, req);
        return;
    }
    if (a->name != NULL)
        rc = posix_xattr_name_check_read(a->name);
    if (rc == 0)
        rc = posix_obj_from_loc(xl, &a->loc, &obj);
    if (rc != 0)
        goto out;
    posix_proc_path(obj.atfd, obj.rel, path);

    if (a->name == NULL) {
        rc = posix_xattr_list(xl, path, &buf, &len);
        if (rc != 0)
            goto out;
        if (size > 0 && len > size) {
            rc = -ERANGE;
            goto out;
        }
        req->reply.count = (int64_t)len;
        if (size > 0) {
            req->reply.xattr = buf;
            buf = NULL;
        }
        goto out;
    }
    if (size == 0) {
        n = posix_xattr_get_at(obj.atfd, obj.rel, a->name, NULL, 0);
        if (n < 0)
            rc = (int)n;
        else
            req->reply.count = n;
        goto out;
    }
    if (size > POSIX_XATTR_SIZE_MAX)
        size = POSIX_XATTR_SIZE_MAX;
    buf = vl_malloc(xl, size + 1, POSIX_MT_XATTR);
    if (buf == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    n = posix_xattr_get_at(obj.atfd, obj.rel, a->name, buf, size);
    if (n < 0) {
        rc = (int)n;
        goto out;
    }
    buf[n] = '\0'; /* convenient for text values; count is the length */
    req->reply.count = n;
    req->reply.xattr = buf;
    buf = NULL;
out:
    vl_free(buf);
    posix_obj_put(&obj);
    vl_unwind(req, rc);
}


void
posix_fop_removexattr(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_removexattr_args *a = VL_ARGS(req, removexattr);
    char path[POSIX_PROC_PATH_LEN];
    struct posix_obj obj;
    int rc;

    memset(&obj, 0, sizeof(obj));
    obj.atfd = -1;
    rc = posix_xattr_name_check(a->name);
    if (rc == 0)
        rc = posix_obj_from_loc(xl, &a->loc, &obj);
    if (rc != 0)
        goto out;
    posix_proc_path(obj.atfd, obj.rel, path);
    if (lremovexattr(path, a->name) < 0)
        rc = -errno;
out:
    posix_obj_put(&obj);
    vl_unwind(req, rc);
}
