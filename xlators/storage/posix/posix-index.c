/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-index: the brick's heal index, .mortar/index/ (doc/replicate.md,
 * "On-disk records").
 *
 *   xattrop/<gfid>                   the object gfid has a nonzero
 *                                    trusted.mortar.rep.* counter
 *   entry-changes/<dir-gfid>/<name>  name in directory dir-gfid changed
 *                                    while a replica missed it (granular
 *                                    entry records)
 *   base.N                           an empty file; every entry above is
 *                                    a hard link of one of these
 *   entry-changes/<dir-gfid>         with the xattr trusted.mortar.full:
 *                                    a change without a name was
 *                                    recorded (the names do not say all)
 *
 * Listing or counting what needs healing is a readdir of xattrop/: it
 * costs O(pending), not O(files). Entries are hard links of a base file
 * (GlusterFS's way), so making and removing one allocates and frees no
 * inode: entries come and go with nearly every change on a replicated
 * volume, and ext4 without a journal skips every inode freed in the last
 * 30 s or more when it allocates one, scanning for them (a fifth of a
 * brick's CPU in replica 3 creates on such a file system; bench/brick-fs
 * says more); elsewhere it is an inode's allocation less per entry. A
 * file system's link limit (65,000 on ext4) must not bound the number of
 * pending objects: when base.N's count is full (EMLINK) entries go to
 * base.N+1.
 *
 * Crash safety: posix-xattrop.c adds the entry BEFORE the xattr write
 * that can make a counter nonzero and removes it AFTER the write that
 * made them all zero. A brick killed between the two leaves an entry for
 * a clean object (harmless: heal finds nothing to do and an xattrop on
 * it removes the entry), never a dirty object without an entry. Entries
 * are not fsynced: while the machine stays up the page cache keeps that
 * order whatever happens to the brick, and after a machine crash, which
 * can lose an entry and keep a later counter, the brick rebuilds the
 * index from the objects' counters (posix-index-boot.c). Only when the
 * boot id cannot be read is every entry made fsynced to its directory
 * (priv->is_index_synced) before the counter is written.
 *
 * Threads: any; the callers serialise per object (xattrop's stripe lock).
 */
#include "config.h"

#include <dirent.h>
#include <sys/xattr.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix.h"


/* Opens (making it if missing) directory rel below dirfd, O_RDONLY so it
 * can be fsynced; the fd or -errno. */
static int
posix_index_mkdir_open(int dirfd, const char *rel)
{
    int fd;

    if (mkdirat(dirfd, rel, 0700) < 0 && errno != EEXIST)
        return -errno;
    fd = openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}


int
posix_index_setup(vl_xlator_t *xl)
{
    struct posix_priv *priv = posix_priv(xl);
    int fd, rc;

    fd = posix_index_mkdir_open(priv->root_fd,
                                POSIX_META_DIR "/" POSIX_INDEX_DIR);
    if (fd < 0)
        return fd;
    priv->index_fd = fd;
    priv->index_xattrop_fd = posix_index_mkdir_open(fd, POSIX_INDEX_XATTROP);
    priv->index_entry_fd = posix_index_mkdir_open(fd, POSIX_INDEX_ENTRY);
    atomic_store(&priv->index_base, 0);
    rc = priv->index_xattrop_fd < 0   ? priv->index_xattrop_fd
         : priv->index_entry_fd < 0   ? priv->index_entry_fd
         : fsync(fd) < 0              ? -errno
                                      : 0;
    return rc;
}


void
posix_index_teardown(struct posix_priv *priv)
{
    if (priv->index_fd >= 0)
        close(priv->index_fd);
    if (priv->index_xattrop_fd >= 0)
        close(priv->index_xattrop_fd);
    if (priv->index_entry_fd >= 0)
        close(priv->index_entry_fd);
    priv->index_fd = -1;
    priv->index_xattrop_fd = -1;
    priv->index_entry_fd = -1;
}


/* Makes base file name in index/ (another thread may be making it too),
 * durably: its inode, then its name. */
static int
posix_index_base_make(struct posix_priv *priv, const char *name)
{
    int fd = openat(priv->index_fd, name,
                    O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    int rc = 0;

    if (fd < 0)
        return -errno;
    if (fsync(fd) < 0 || fsync(priv->index_fd) < 0)
        rc = -errno;
    close(fd);
    return rc;
}


/* How many base files one entry may try before giving up: more than a
 * few means something other than full link counts is wrong. */
#define POSIX_INDEX_BASE_TRIES 16

/* Links name in dirfd to the current base file (durably when the index
 * is synced): 1 if it was made, 0 if it was there, or -errno. */
static int
posix_index_touch(struct posix_priv *priv, int dirfd, const char *name)
{
    char base[32];
    unsigned n;
    int tries;
    bool is_made = false;

    for (tries = 0; tries < POSIX_INDEX_BASE_TRIES; tries++) {
        int rc;

        n = atomic_load(&priv->index_base);
        snprintf(base, sizeof(base), POSIX_INDEX_BASE ".%u", n);
        if (linkat(priv->index_fd, base, dirfd, name, 0) == 0)
            break;
        if (errno == EEXIST)
            return 0;
        if (errno == EMLINK) {
            /* Full: the next base, unless another thread moved on. */
            (void)atomic_compare_exchange_strong(&priv->index_base, &n,
                                                 n + 1);
            is_made = false; /* the next base may be missing */
            continue;
        }
        /* ENOENT again after making the base: dirfd is gone. */
        if (errno != ENOENT || is_made)
            return -errno;
        rc = posix_index_base_make(priv, base); /* first use */
        if (rc < 0)
            return rc;
        is_made = true;
    }
    if (tries == POSIX_INDEX_BASE_TRIES)
        return -EMLINK;
    if (priv->is_index_synced && fsync(dirfd) < 0) {
        int rc = -errno;

        /* Not known durable: undo, so the caller fails rather than
         * relying on it (the xattr is not written then). */
        unlinkat(dirfd, name, 0);
        return rc;
    }
    return 1;
}


int
posix_index_add(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    char str[VL_GFID_STR_LEN];
    int rc;

    rc = posix_index_touch(posix_priv(xl), posix_priv(xl)->index_xattrop_fd,
                           vl_gfid_to_str(gfid, str));
    return rc < 0 ? rc : 0;
}


int
posix_index_del(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    char str[VL_GFID_STR_LEN];

    if (unlinkat(posix_priv(xl)->index_xattrop_fd,
                 vl_gfid_to_str(gfid, str), 0)
            < 0
        && errno != ENOENT)
        return -errno;
    return 0;
}


bool
posix_index_has(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    char str[VL_GFID_STR_LEN];
    struct stat st;

    return fstatat(posix_priv(xl)->index_xattrop_fd,
                   vl_gfid_to_str(gfid, str), &st, AT_SYMLINK_NOFOLLOW)
           == 0;
}


/* Is name usable as an entry record (one component, not . or ..)? */
static bool
posix_index_name_ok(const char *name)
{
    return name != NULL && name[0] != '\0' && strchr(name, '/') == NULL
           && strcmp(name, ".") != 0 && strcmp(name, "..") != 0
           && strlen(name) <= NAME_MAX;
}


/* Opens directory dir's record directory, made when missing (durably
 * when the index is synced); the fd or -errno. */
static int
posix_index_entry_dir(vl_xlator_t *xl, const vl_gfid_t *dir)
{
    int efd = posix_priv(xl)->index_entry_fd;
    char str[VL_GFID_STR_LEN];
    int dfd;

    vl_gfid_to_str(dir, str);
    dfd = openat(efd, str, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 && errno == ENOENT) {
        /* The directory's own record directory, durable first. */
        if (mkdirat(efd, str, 0700) < 0 && errno != EEXIST)
            return -errno;
        if (posix_priv(xl)->is_index_synced && fsync(efd) < 0)
            return -errno;
        dfd = openat(efd, str,
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    return dfd < 0 ? -errno : dfd;
}


int
posix_index_entry_add(vl_xlator_t *xl, const vl_gfid_t *dir,
                      const char *name)
{
    int dfd, rc;

    if (!posix_index_name_ok(name))
        return -EINVAL;
    dfd = posix_index_entry_dir(xl, dir);
    if (dfd < 0)
        return dfd;
    rc = posix_index_touch(posix_priv(xl), dfd, name);
    close(dfd);
    return rc < 0 ? rc : 0;
}


int
posix_index_entry_full(vl_xlator_t *xl, const vl_gfid_t *dir)
{
    char v;
    int dfd, rc = 0;

    dfd = posix_index_entry_dir(xl, dir);
    if (dfd < 0)
        return dfd;
    if (fgetxattr(dfd, POSIX_INDEX_FULL_XATTR, &v, sizeof(v)) < 0) {
        if (fsetxattr(dfd, POSIX_INDEX_FULL_XATTR, "1", 1, 0) < 0
            || (posix_priv(xl)->is_index_synced && fsync(dfd) < 0))
            rc = -errno;
    }
    close(dfd);
    return rc;
}


bool
posix_index_entry_has(vl_xlator_t *xl, const vl_gfid_t *dir)
{
    char str[VL_GFID_STR_LEN];
    struct stat st;

    return fstatat(posix_priv(xl)->index_entry_fd, vl_gfid_to_str(dir, str),
                   &st, AT_SYMLINK_NOFOLLOW)
           == 0;
}


/* Is record directory dfd marked full? */
static bool
posix_index_is_full(int dfd)
{
    char v;

    return fgetxattr(dfd, POSIX_INDEX_FULL_XATTR, &v, sizeof(v)) >= 0
           || errno == ERANGE;
}


int
posix_index_entry_list(vl_xlator_t *xl, const vl_gfid_t *dir, char *buf,
                       size_t size, size_t *len)
{
    char str[VL_GFID_STR_LEN];
    struct dirent *d;
    DIR *dp;
    int dfd;
    size_t at = 1;

    if (size < 1)
        return -ERANGE;
    *len = 1;
    buf[0] = POSIX_INDEX_LIST_NAMES;
    dfd = openat(posix_priv(xl)->index_entry_fd, vl_gfid_to_str(dir, str),
                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? 0 : -errno;
    if (posix_index_is_full(dfd)) {
        close(dfd);
        buf[0] = POSIX_INDEX_LIST_FULL;
        return 0;
    }
    dp = fdopendir(dfd);
    if (dp == NULL) {
        close(dfd);
        return -errno;
    }
    while ((d = readdir(dp)) != NULL) {
        size_t l = strlen(d->d_name) + 1;

        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
            continue;
        if (at + l > size) {
            /* More names than one answer holds: the caller lists the
             * whole directory instead. */
            at = 1;
            buf[0] = POSIX_INDEX_LIST_FULL;
            break;
        }
        memcpy(buf + at, d->d_name, l);
        at += l;
    }
    closedir(dp);
    *len = at;
    return 0;
}


int
posix_index_entry_del(vl_xlator_t *xl, const vl_gfid_t *dir,
                      const char *name)
{
    int efd = posix_priv(xl)->index_entry_fd;
    char str[VL_GFID_STR_LEN];
    bool is_full;
    int dfd, rc = 0;

    if (!posix_index_name_ok(name))
        return -EINVAL;
    vl_gfid_to_str(dir, str);
    dfd = openat(efd, str, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? 0 : -errno;
    if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
        rc = -errno;
    is_full = posix_index_is_full(dfd);
    close(dfd);
    /* The last record takes its directory with it (ENOTEMPTY: others
     * are left, or one was just added: it stays), unless the directory
     * is marked full: that mark is a record too. */
    if (rc == 0 && !is_full && unlinkat(efd, str, AT_REMOVEDIR) < 0
        && errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
        rc = -errno;
    return rc;
}


int
posix_index_entry_drop(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    int efd = posix_priv(xl)->index_entry_fd;
    char str[VL_GFID_STR_LEN];
    struct dirent *d;
    DIR *dir;
    int dfd, rc = 0;

    vl_gfid_to_str(gfid, str);
    dfd = openat(efd, str, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? 0 : -errno;
    dir = fdopendir(dfd);
    if (dir == NULL) {
        close(dfd);
        return -errno;
    }
    while ((d = readdir(dir)) != NULL) {
        if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
            unlinkat(dirfd(dir), d->d_name, 0);
    }
    closedir(dir);
    if (unlinkat(efd, str, AT_REMOVEDIR) < 0 && errno != ENOENT)
        rc = -errno;
    return rc;
}


static int
posix_index_forget_one(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    int rc = posix_index_del(xl, gfid);
    int rc2 = posix_index_entry_drop(xl, gfid);

    return rc != 0 ? rc : rc2;
}


void
posix_index_forget(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    char str[VL_GFID_STR_LEN];
    int rc = posix_index_forget_one(xl, gfid);

    /* Nothing to answer here (the object is already gone); an entry left
     * behind is dropped by the sweep after an unclean stop, or by hand. */
    if (rc != 0)
        vl_log(xl, VL_LOG_WARNING, "heal index: records of %s not removed: "
               "%s", vl_gfid_to_str(gfid, str), strerror(-rc));
}


/* Is the object gfid gone from the brick? A missing handle, or a regular
 * file whose handle is its only link (deleted, its handle not yet
 * removed). Errors other than ENOENT count as present: keep the entry. */
static bool
posix_index_is_gone(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    char hrel[POSIX_HANDLE_REL_LEN];
    struct stat st;

    if (vl_gfid_is_root(gfid))
        return false;
    posix_handle_rel(gfid, hrel);
    if (fstatat(posix_priv(xl)->handles_fd, hrel, &st, AT_SYMLINK_NOFOLLOW)
        < 0)
        return errno == ENOENT;
    return S_ISREG(st.st_mode) && st.st_nlink == 1;
}


/* Sweeps one index directory: names that are not GFIDs, or GFIDs of
 * objects gone, are removed (with is_dir, as record directories). */
static unsigned long
posix_index_sweep_dir(vl_xlator_t *xl, int fd, bool is_dir)
{
    unsigned long n = 0;
    struct dirent *d;
    vl_gfid_t gfid;
    DIR *dir;
    int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (dup_fd < 0)
        return 0;
    dir = fdopendir(dup_fd);
    if (dir == NULL) {
        close(dup_fd);
        return 0;
    }
    while ((d = readdir(dir)) != NULL) {
        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
            continue;
        if (vl_gfid_parse(d->d_name, &gfid) == 0
            && !posix_index_is_gone(xl, &gfid))
            continue;
        if (is_dir)
            posix_index_forget(xl, &gfid);
        else
            unlinkat(fd, d->d_name, 0);
        n++;
    }
    closedir(dir);
    return n;
}


unsigned long
posix_index_sweep(vl_xlator_t *xl)
{
    struct posix_priv *priv = posix_priv(xl);

    return posix_index_sweep_dir(xl, priv->index_xattrop_fd, false)
           + posix_index_sweep_dir(xl, priv->index_entry_fd, true);
}


/* Counts the names in directory fd (without . and ..); -errno. */
static long
posix_index_count_dir(int fd)
{
    struct dirent *d;
    long n = 0;
    DIR *dir;
    int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (dup_fd < 0)
        return -errno;
    dir = fdopendir(dup_fd);
    if (dir == NULL) {
        close(dup_fd);
        return -errno;
    }
    while ((d = readdir(dir)) != NULL)
        if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
            n++;
    closedir(dir);
    return n;
}


long
posix_index_count(vl_xlator_t *xl)
{
    return posix_index_count_dir(posix_priv(xl)->index_xattrop_fd);
}


long
posix_index_entry_dirs(vl_xlator_t *xl)
{
    return posix_index_count_dir(posix_priv(xl)->index_entry_fd);
}
