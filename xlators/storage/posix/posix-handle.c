/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-handle: GFIDs on disk and the handle tree that maps a GFID back to
 * its object.
 *
 * Every object carries its GFID in the xattr trusted.mortar.gfid. Under
 * <brick>/.mortar/handles/xx/yy/<gfid> (xx, yy: the first two GFID bytes
 * in hex) a non-directory has a hard link, and a directory a symlink whose
 * target is "../../xx/yy/<parent-gfid>/<name>". The kernel never follows
 * these symlinks for us (a deep tree would hit ELOOP and PATH_MAX): a
 * directory is resolved by reading its symlink, resolving the parent the
 * same way (iteratively, up to the root or to an ancestor whose O_PATH fd
 * is cached in its inode) and then openat(parent_fd, name) back down.
 *
 * Resolving a GFID or an entry to an fd (the directory chain walk, the
 * cached directory fds, struct posix_obj) is in posix-resolve.c.
 * Threads:   any io-thread.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix.h"


void
posix_handle_rel(const vl_gfid_t *gfid, char *buf /* OUT */)
{
    char str[VL_GFID_STR_LEN];

    vl_gfid_to_str(gfid, str);
    snprintf(buf, POSIX_HANDLE_REL_LEN, "%02x/%02x/%s", gfid->bytes[0],
             gfid->bytes[1], str);
}


void
posix_proc_path(int atfd, const char *rel, char *buf /* OUT */)
{
    snprintf(buf, POSIX_PROC_PATH_LEN, "/proc/self/fd/%d/%s", atfd, rel);
}


/* getxattrat(2), setxattrat(2), listxattrat(2) and removexattrat(2)
 * (Linux 6.13) reach an xattr of (atfd, rel) directly; the
 * /proc/self/fd/N/rel path they replace costs a walk through procfs per
 * call (every lookup reads the GFID, every transaction reads and writes
 * counters). Older kernels answer ENOSYS once, then the path is used. */
#if !defined(SYS_getxattrat) && (defined(__x86_64__) || defined(__aarch64__))
#define SYS_getxattrat 464
#define SYS_setxattrat 463
#define SYS_listxattrat 465
#define SYS_removexattrat 466
#endif

#ifdef SYS_getxattrat
struct posix_xattr_args {
    uint64_t value; /* the caller's buffer */
    uint32_t size;  /* its size */
    uint32_t flags; /* XATTR_CREATE... (set only) */
};

static atomic_bool posix_no_xattrat; /* the kernel said ENOSYS */


static bool
posix_xattrat_usable(void)
{
    return !atomic_load_explicit(&posix_no_xattrat, memory_order_relaxed);
}


/* Whether an *xattrat call's result (rc, errno) stands: anything but
 * ENOSYS, which marks the kernel as without them (the /proc path from
 * then on). */
static bool
posix_xattrat_answered(long rc)
{
    if (rc >= 0 || errno != ENOSYS)
        return true;
    atomic_store(&posix_no_xattrat, true);
    return false;
}
#endif


ssize_t
posix_xattr_get_at(int atfd, const char *rel, const char *name, void *buf,
                   size_t size)
{
    char path[POSIX_PROC_PATH_LEN];
    ssize_t n;

#ifdef SYS_getxattrat
    if (posix_xattrat_usable()) {
        struct posix_xattr_args xa = {
            .value = (uint64_t)(uintptr_t)buf,
            .size = (uint32_t)size,
        };

        n = syscall(SYS_getxattrat, atfd, rel, AT_SYMLINK_NOFOLLOW, name,
                    &xa, sizeof(xa));
        if (posix_xattrat_answered(n))
            return n >= 0 ? n : -errno;
    }
#endif
    posix_proc_path(atfd, rel, path);
    n = lgetxattr(path, name, buf, size);
    return n >= 0 ? n : -errno;
}


int
posix_xattr_set_at(int atfd, const char *rel, const char *name,
                   const void *value, size_t size, int flags)
{
    char path[POSIX_PROC_PATH_LEN];

#ifdef SYS_getxattrat
    if (posix_xattrat_usable()) {
        struct posix_xattr_args xa = {
            .value = (uint64_t)(uintptr_t)value,
            .size = (uint32_t)size,
            .flags = (uint32_t)flags,
        };
        long rc = syscall(SYS_setxattrat, atfd, rel, AT_SYMLINK_NOFOLLOW,
                          name, &xa, sizeof(xa));

        if (posix_xattrat_answered(rc))
            return rc == 0 ? 0 : -errno;
    }
#endif
    posix_proc_path(atfd, rel, path);
    return lsetxattr(path, name, value, size, flags) < 0 ? -errno : 0;
}


int
posix_xattr_remove_at(int atfd, const char *rel, const char *name)
{
    char path[POSIX_PROC_PATH_LEN];

#ifdef SYS_removexattrat
    if (posix_xattrat_usable()) {
        long rc = syscall(SYS_removexattrat, atfd, rel, AT_SYMLINK_NOFOLLOW,
                          name);

        if (posix_xattrat_answered(rc))
            return rc == 0 ? 0 : -errno;
    }
#endif
    posix_proc_path(atfd, rel, path);
    return lremovexattr(path, name) < 0 ? -errno : 0;
}


ssize_t
posix_xattr_list_at(int atfd, const char *rel, char *buf, size_t size)
{
    char path[POSIX_PROC_PATH_LEN];
    ssize_t n;

#ifdef SYS_listxattrat
    if (posix_xattrat_usable()) {
        n = syscall(SYS_listxattrat, atfd, rel, AT_SYMLINK_NOFOLLOW, buf,
                    size);
        if (posix_xattrat_answered(n))
            return n >= 0 ? n : -errno;
    }
#endif
    posix_proc_path(atfd, rel, path);
    n = llistxattr(path, buf, size);
    return n >= 0 ? n : -errno;
}


int
posix_gfid_get(int atfd, const char *rel, vl_gfid_t *out /* OUT */)
{
    ssize_t n = posix_xattr_get_at(atfd, rel, POSIX_GFID_XATTR, out->bytes,
                                   sizeof(out->bytes));

    if (n < 0)
        return n == -ERANGE ? -EINVAL : (int)n;
    if (n != (ssize_t)sizeof(out->bytes))
        return -EINVAL;
    return 0;
}


int
posix_gfid_set(int atfd, const char *rel, const vl_gfid_t *gfid)
{
    return posix_xattr_set_at(atfd, rel, POSIX_GFID_XATTR, gfid->bytes,
                              sizeof(gfid->bytes), XATTR_CREATE);
}


int
posix_gfid_fset(int fd, const vl_gfid_t *gfid)
{
    if (fsetxattr(fd, POSIX_GFID_XATTR, gfid->bytes, sizeof(gfid->bytes),
                  XATTR_CREATE) < 0)
        return -errno;
    return 0;
}


#define POSIX_BITS_PER_WORD (8 * sizeof(unsigned long))


static unsigned
posix_handle_dir_index(const vl_gfid_t *gfid)
{
    return (unsigned)gfid->bytes[0] << 8 | gfid->bytes[1];
}


/* Creates .mortar/handles/xx and xx/yy unless they are known to exist
 * (is_force: check the disk anyway, after an ENOENT proved the hint
 * wrong). */
static int
posix_handle_mkdirs(vl_xlator_t *xl, const vl_gfid_t *gfid, bool is_force)
{
    struct posix_priv *priv = posix_priv(xl);
    unsigned i = posix_handle_dir_index(gfid);
    unsigned long bit = 1UL << (i % POSIX_BITS_PER_WORD);
    atomic_ulong *word = &priv->handle_dirs[i / POSIX_BITS_PER_WORD];
    unsigned i1 = gfid->bytes[0];
    unsigned long bit1 = 1UL << (i1 % POSIX_BITS_PER_WORD);
    atomic_ulong *word1 = &priv->handle_dirs1[i1 / POSIX_BITS_PER_WORD];
    char dir[8];

    if (is_force) {
        atomic_fetch_and(word, ~bit);
        atomic_fetch_and(word1, ~bit1);
    } else if (atomic_load_explicit(word, memory_order_relaxed) & bit) {
        return 0;
    }
    for (int attempt = 0;; attempt++) {
        if (!(atomic_load_explicit(word1, memory_order_relaxed) & bit1)) {
            snprintf(dir, sizeof(dir), "%02x", gfid->bytes[0]);
            if (mkdirat(priv->handles_fd, dir, 0700) < 0 && errno != EEXIST)
                return -errno;
            atomic_fetch_or(word1, bit1);
        }
        snprintf(dir, sizeof(dir), "%02x/%02x", gfid->bytes[0],
                 gfid->bytes[1]);
        if (mkdirat(priv->handles_fd, dir, 0700) == 0 || errno == EEXIST)
            break;
        if (errno != ENOENT || attempt > 0)
            return -errno;
        atomic_fetch_and(word1, ~bit1); /* xx was removed behind us */
    }
    atomic_fetch_or(word, bit);
    return 0;
}


bool
posix_handle_dir_known(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    unsigned i = posix_handle_dir_index(gfid);

    return (atomic_load(&posix_priv(xl)->handle_dirs[i / POSIX_BITS_PER_WORD])
            >> (i % POSIX_BITS_PER_WORD)) & 1;
}


/* Is name two lower-case hex digits (a handle directory level)? */
static bool
posix_handle_is_hex2(const char *name)
{
    return strlen(name) == 2 && strspn(name, "0123456789abcdef") == 2;
}


int
posix_handle_walk_dirs(vl_xlator_t *xl, posix_handle_dir_fn fn, void *arg)
{
    struct posix_priv *priv = posix_priv(xl);
    struct dirent *d1;
    DIR *top;
    int fd;

    fd = openat(priv->root_fd, POSIX_META_DIR "/" POSIX_HANDLES_DIR,
                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    top = fdopendir(fd);
    if (top == NULL) {
        close(fd);
        return -ENOMEM;
    }
    while ((d1 = readdir(top)) != NULL) {
        unsigned i1 = (unsigned)strtoul(d1->d_name, NULL, 16);
        struct dirent *d2;
        DIR *mid;

        if (!posix_handle_is_hex2(d1->d_name))
            continue;
        fd = openat(dirfd(top), d1->d_name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        mid = fdopendir(fd);
        if (mid == NULL) {
            close(fd);
            continue;
        }
        while ((d2 = readdir(mid)) != NULL) {
            if (posix_handle_is_hex2(d2->d_name))
                fn(xl, i1 << 8 | (unsigned)strtoul(d2->d_name, NULL, 16),
                   dirfd(mid), d2->d_name, arg);
        }
        closedir(mid);
    }
    closedir(top);
    return 0;
}


/* posix_handle_walk_dirs callback: notes xx/yy (and xx) as existing. */
static void
posix_handle_note_dir(vl_xlator_t *xl, unsigned index, int parent_fd,
                      const char *name, void *arg)
{
    struct posix_priv *priv = posix_priv(xl);
    unsigned i1 = index >> 8;

    (void)parent_fd;
    (void)name;
    (void)arg;
    atomic_fetch_or(&priv->handle_dirs1[i1 / POSIX_BITS_PER_WORD],
                    1UL << (i1 % POSIX_BITS_PER_WORD));
    atomic_fetch_or(&priv->handle_dirs[index / POSIX_BITS_PER_WORD],
                    1UL << (index % POSIX_BITS_PER_WORD));
}


void
posix_handle_dirs_prime(vl_xlator_t *xl)
{
    (void)posix_handle_walk_dirs(xl, posix_handle_note_dir, NULL);
}


/* After a handle link or symlink failed with ENOENT (handles are made
 * before their directories are: mostly the first object of an xx/yy):
 * makes xx/yy (and xx unless known); if xx/yy was known to exist, it
 * was removed behind our back: check both levels on the disk. */
static int
posix_handle_mkdirs_enoent(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    return posix_handle_mkdirs(xl, gfid, posix_handle_dir_known(xl, gfid));
}


static void
posix_dir_target(const vl_gfid_t *parent, const char *name,
                 char *buf /* OUT, PATH_MAX */)
{
    char prel[POSIX_HANDLE_REL_LEN];

    posix_handle_rel(parent, prel);
    snprintf(buf, PATH_MAX, "../../%s/%s", prel, name);
}


int
posix_dir_target_parse(const char *target, vl_gfid_t *parent /* OUT */,
                       char *name /* OUT, NAME_MAX + 1 */)
{
    char str[VL_GFID_STR_LEN];
    const char *p = target;
    size_t len;

    /* "../../xx/yy/" + 36 + "/" + name */
    if (strncmp(p, "../../", 6) != 0 || strlen(p) < 12 + 36 + 2)
        return -EINVAL;
    p += 12;
    memcpy(str, p, 36);
    str[36] = '\0';
    if (vl_gfid_parse(str, parent) != 0 || p[36] != '/')
        return -EINVAL;
    p += 37;
    len = strlen(p);
    if (len == 0 || len > NAME_MAX || strchr(p, '/') != NULL)
        return -EINVAL;
    memcpy(name, p, len + 1);
    return 0;
}


/* Atomically points a directory's handle at parent/name: a new symlink
 * under a temporary name renamed over the old one. */
int
posix_handle_dir_update(vl_xlator_t *xl, const vl_gfid_t *gfid,
                        const vl_gfid_t *parent, const char *name)
{
    struct posix_priv *priv = posix_priv(xl);
    char target[PATH_MAX];
    char rel[POSIX_HANDLE_REL_LEN];
    char tmp[POSIX_HANDLE_REL_LEN + 32];
    static _Atomic unsigned long tmp_seq;
    int rc;

    posix_handle_rel(gfid, rel);
    posix_dir_target(parent, name, target);
    snprintf(tmp, sizeof(tmp), "%.6s.tmp-%d-%lu", rel, (int)getpid(),
             (unsigned long)++tmp_seq);
    if (symlinkat(target, priv->handles_fd, tmp) < 0) {
        if (errno != ENOENT)
            return -errno;
        rc = posix_handle_mkdirs_enoent(xl, gfid);
        if (rc != 0)
            return rc;
        if (symlinkat(target, priv->handles_fd, tmp) < 0)
            return -errno;
    }
    if (renameat(priv->handles_fd, tmp, priv->handles_fd, rel) < 0) {
        rc = -errno;
        unlinkat(priv->handles_fd, tmp, 0);
        return rc;
    }
    return 0;
}


/* Links a non-directory's handle; an orphan handle (only link left, its
 * object unlinked behind our back) with the same GFID is replaced. */
static int
posix_handle_link(vl_xlator_t *xl, int atfd, const char *rel,
                  const struct stat *st, const vl_gfid_t *gfid)
{
    struct posix_priv *priv = posix_priv(xl);
    char hrel[POSIX_HANDLE_REL_LEN];
    struct stat hst;
    int rc;

    posix_handle_rel(gfid, hrel);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (linkat(atfd, rel, priv->handles_fd, hrel, 0) == 0)
            return 0;
        if (errno == ENOENT && attempt == 0) {
            /* The handle directory was removed behind our back (or the
             * object vanished: then the retry fails again). */
            rc = posix_handle_mkdirs_enoent(xl, gfid);
            if (rc != 0)
                return rc;
            continue;
        }
        if (errno != EEXIST)
            return -errno;
        if (fstatat(priv->handles_fd, hrel, &hst, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (hst.st_ino == st->st_ino && hst.st_dev == st->st_dev)
            return 0;
        if (S_ISDIR(hst.st_mode) || hst.st_nlink > 1 || S_ISLNK(hst.st_mode))
            return -EEXIST; /* a live object already has this GFID */
        /* An orphan (a deleted file's handle, maybe queued for the
         * janitor): replace it with the janitor kept off this GFID, so
         * it never removes the new handle. */
        posix_janitor_claim(xl, gfid);
        rc = 0;
        if (unlinkat(priv->handles_fd, hrel, 0) < 0 && errno != ENOENT)
            rc = -errno;
        else if (linkat(atfd, rel, priv->handles_fd, hrel, 0) < 0)
            rc = -errno;
        posix_janitor_unclaim(xl);
        if (rc != -EEXIST)
            return rc;
    }
    return -EEXIST;
}


int
posix_handle_create(vl_xlator_t *xl, int atfd, const char *rel,
                    const struct stat *st, const vl_gfid_t *gfid,
                    const vl_gfid_t *parent, const char *name)
{
    struct posix_priv *priv = posix_priv(xl);
    char target[PATH_MAX];
    char hrel[POSIX_HANDLE_REL_LEN];
    bool is_dir = false;
    int rc;
    int fd;

    /* The handle directory is made first only when the bitmap does not
     * know it (primed from the disk at start by the janitor thread, so
     * unknown means missing, mostly); a known one that was removed
     * behind our back shows as ENOENT and is made again. */
    if (!posix_handle_dir_known(xl, gfid)) {
        rc = posix_handle_mkdirs(xl, gfid, false);
        if (rc != 0)
            return rc;
    }
    if (!S_ISDIR(st->st_mode))
        return posix_handle_link(xl, atfd, rel, st, gfid);

    posix_handle_rel(gfid, hrel);
    posix_dir_target(parent, name, target);
    if (symlinkat(target, priv->handles_fd, hrel) == 0)
        return 0;
    if (errno == ENOENT) {
        rc = posix_handle_mkdirs_enoent(xl, gfid);
        if (rc != 0)
            return rc;
        if (symlinkat(target, priv->handles_fd, hrel) == 0)
            return 0;
    }
    if (errno != EEXIST)
        return -errno;
    /* A handle exists: refuse if it belongs to a non-directory or still
     * leads to a live directory with this GFID (a duplicate GFID), else
     * it is stale (maybe a removed directory's, queued for the janitor,
     * which must then leave it alone): replace it. */
    posix_janitor_claim(xl, gfid);
    rc = posix_handle_is_dir(xl, gfid, &is_dir);
    if (rc != 0 && rc != -ESTALE)
        goto out;
    if (rc == 0 && !is_dir) {
        rc = -EEXIST;
        goto out;
    }
    if (posix_dir_resolve(xl, gfid, &fd) == 0) {
        struct stat dst;

        rc = fstat(fd, &dst) < 0 ? -errno : 0;
        close(fd);
        if (rc == 0
            && (dst.st_ino != st->st_ino || dst.st_dev != st->st_dev)) {
            rc = -EEXIST;
            goto out;
        }
    }
    rc = posix_handle_dir_update(xl, gfid, parent, name);
out:
    posix_janitor_unclaim(xl);
    return rc;
}


/* Removes gfid's handle, known to be its file's last link (no name is
 * left): parked in .mortar/unlink instead while the file is open here. */
void
posix_handle_drop(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    struct posix_priv *priv = posix_priv(xl);
    char hrel[POSIX_HANDLE_REL_LEN];

    posix_handle_rel(gfid, hrel);
    /* Still open somewhere: park the handle in .mortar/unlink so fops on
     * the open file (fstat, fsetxattr...) still resolve its GFID; the
     * last release() removes it. */
    if (posix_inode_open_count(xl, gfid, true) > 0) {
        char str[VL_GFID_STR_LEN];

        vl_gfid_to_str(gfid, str);
        if (renameat(priv->handles_fd, hrel, priv->unlink_fd, str) == 0)
            return; /* its heal records go at the last release */
    }
    unlinkat(priv->handles_fd, hrel, 0);
    posix_index_forget(xl, gfid);
}


void
posix_handle_unlink_if_last(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    struct posix_priv *priv = posix_priv(xl);
    char hrel[POSIX_HANDLE_REL_LEN];
    struct stat st;

    if (vl_gfid_is_null(gfid))
        return;
    posix_handle_rel(gfid, hrel);
    if (fstatat(priv->handles_fd, hrel, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return;
    /* The handle itself is one link: nlink 1 means no name is left. */
    if (st.st_nlink == 1)
        posix_handle_drop(xl, gfid);
}


/* How many posix fds are open on the inode with this GFID; is_parking
 * (only when some are): its handle goes to .mortar/unlink, and the last
 * release() must remove it there. */
unsigned
posix_inode_open_count(vl_xlator_t *xl, const vl_gfid_t *gfid,
                       bool is_parking)
{
    struct posix_inode_ctx *ctx;
    vl_inode_t *inode;
    unsigned n = 0;

    if (xl->graph == NULL || xl->graph->itable == NULL)
        return 0;
    inode = vl_inode_find(xl->graph->itable, gfid);
    if (inode == NULL)
        return 0;
    ctx = vl_inode_ctx(inode, xl);
    pthread_mutex_lock(&inode->lock);
    if (ctx != NULL) {
        n = ctx->n_open;
        if (n > 0 && is_parking)
            ctx->is_parked = true;
    }
    pthread_mutex_unlock(&inode->lock);
    vl_inode_unref(inode);
    return n;
}


void
posix_handle_remove_dir(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    struct posix_priv *priv = posix_priv(xl);
    char hrel[POSIX_HANDLE_REL_LEN];

    if (vl_gfid_is_null(gfid) || vl_gfid_is_root(gfid))
        return;
    posix_handle_rel(gfid, hrel);
    unlinkat(priv->handles_fd, hrel, 0);
    posix_index_forget(xl, gfid);
}


/* Makes sure a looked-up object's handle exists and, for a directory,
 * names its current parent and name (repairs trees edited by hand). */
int
posix_handle_ensure(vl_xlator_t *xl, int atfd, const char *rel,
                    const struct stat *st, const vl_gfid_t *gfid,
                    const vl_gfid_t *parent, const char *name)
{
    struct posix_priv *priv = posix_priv(xl);
    char hrel[POSIX_HANDLE_REL_LEN];
    char want[PATH_MAX];
    char have[PATH_MAX];
    ssize_t n;

    if (vl_gfid_is_root(gfid))
        return 0;
    posix_handle_rel(gfid, hrel);
    if (!S_ISDIR(st->st_mode)) {
        struct stat hst;

        /* The common case, checked without trying to link. */
        if (fstatat(priv->handles_fd, hrel, &hst, AT_SYMLINK_NOFOLLOW) == 0
            && hst.st_ino == st->st_ino && hst.st_dev == st->st_dev)
            return 0;
        return posix_handle_link(xl, atfd, rel, st, gfid);
    }
    posix_dir_target(parent, name, want);
    n = readlinkat(priv->handles_fd, hrel, have, sizeof(have) - 1);
    if (n >= 0) {
        have[n] = '\0';
        if (strcmp(have, want) == 0)
            return 0;
    }
    return posix_handle_dir_update(xl, gfid, parent, name);
}
