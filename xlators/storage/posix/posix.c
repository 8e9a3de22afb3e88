/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix: the brick's storage translator. Stores a volume's objects in a
 * local directory (the brick) and answers every fop from it with *at()
 * system calls. See README.md for the on-disk format.
 *
 * Intercepts: every fop of fops.def; INODELK, ENTRYLK and LK answer
 *             -ENOSYS (features/locks above answers them).
 * Per inode:  struct posix_inode_ctx (cached O_PATH fd of a directory),
 *             closed by forget().
 * Per fd:     struct posix_fd_ctx (the OS fd), closed by release().
 * Per req:    nothing.
 * Threads:    fops run on io-threads workers, or inline on event
 *             threads (io-threads inline-fast-fops), and answer
 *             synchronously, blocking in system calls; no lock is held
 *             across a syscall except the per-directory-fd readdir lock.
 *
 * This file: class, options, init/fini, forget/release and helpers used
 * by all fop files.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "posix.h"
#include "../../builtin.h"


static unsigned posix_open_count_add(vl_xlator_t *xl, vl_inode_t *inode,
                                     int delta, bool *out_parked);


void
posix_iatt_fill(const struct stat *st, const vl_gfid_t *gfid,
                struct vl_iatt *out /* OUT */)
{
    memset(out, 0, sizeof(*out));
    out->gfid = *gfid;
    out->ino = vl_gfid_is_null(gfid) ? (uint64_t)st->st_ino
                                     : vl_gfid_to_ino(gfid);
    out->mode = st->st_mode;
    /* A non-directory's handle is one more hard link the client must not
     * see; an unlinked open file (nlink 0) has none left. */
    out->nlink = st->st_nlink;
    if (!S_ISDIR(st->st_mode) && st->st_nlink >= 2)
        out->nlink--;
    out->uid = st->st_uid;
    out->gid = st->st_gid;
    out->rdev = st->st_rdev;
    out->size = st->st_size;
    out->blocks = st->st_blocks;
    out->blksize = st->st_blksize;
    out->atime = st->st_atim.tv_sec;
    out->atime_ns = st->st_atim.tv_nsec;
    out->mtime = st->st_mtim.tv_sec;
    out->mtime_ns = st->st_mtim.tv_nsec;
    out->ctime = st->st_ctim.tv_sec;
    out->ctime_ns = st->st_ctim.tv_nsec;
}


/* Like posix_iatt_fill for a file reached through an open fd: a file
 * whose only link is its parked handle (unlinked while open) has no
 * name left, so nlink 0. */
void
posix_iatt_fill_open(vl_xlator_t *xl, const struct stat *st,
                     const vl_gfid_t *gfid, struct vl_iatt *out /* OUT */)
{
    char str[VL_GFID_STR_LEN];
    struct stat pst;

    posix_iatt_fill(st, gfid, out);
    if (S_ISDIR(st->st_mode) || st->st_nlink != 1 || vl_gfid_is_null(gfid))
        return;
    vl_gfid_to_str(gfid, str);
    if (fstatat(posix_priv(xl)->unlink_fd, str, &pst, AT_SYMLINK_NOFOLLOW)
            == 0
        && pst.st_ino == st->st_ino && pst.st_dev == st->st_dev)
        out->nlink = 0;
}


int
posix_fd_ctx_set(vl_xlator_t *xl, vl_fd_t *fd, int os_fd, bool is_dir)
{
    struct posix_fd_ctx *ctx = vl_fd_ctx(fd, xl);
    int rc = 0;

    if (ctx == NULL)
        return -EINVAL;
    pthread_mutex_lock(&fd->lock);
    if (ctx->is_open) {
        rc = -EBUSY; /* the same vl_fd opened twice */
    } else {
        rc = -pthread_mutex_init(&ctx->dir_lock, NULL);
        if (rc == 0) {
            ctx->os_fd = os_fd;
            ctx->is_dir = is_dir;
            ctx->is_open = true;
        }
    }
    pthread_mutex_unlock(&fd->lock);
    if (rc == 0 && !is_dir)
        posix_open_count_add(xl, fd->inode, 1, NULL);
    return rc;
}


/* Counts open files per inode so unlink can tell whether a handle must
 * outlive the file's last name; returns the new count. */
static unsigned
posix_open_count_add(vl_xlator_t *xl, vl_inode_t *inode, int delta,
                     bool *out_parked)
{
    struct posix_inode_ctx *ctx = vl_inode_ctx(inode, xl);
    unsigned n = 0;

    if (out_parked != NULL)
        *out_parked = false;
    if (ctx == NULL)
        return 0;
    pthread_mutex_lock(&inode->lock);
    if (delta > 0 || ctx->n_open > 0)
        ctx->n_open += (unsigned)delta;
    n = ctx->n_open;
    if (n == 0 && out_parked != NULL) {
        *out_parked = ctx->is_parked;
        ctx->is_parked = false;
    }
    pthread_mutex_unlock(&inode->lock);
    return n;
}


int
posix_fd_os(vl_xlator_t *xl, vl_fd_t *fd, int *out /* OUT */)
{
    struct posix_fd_ctx *ctx;
    int rc = -EBADF;

    if (fd == NULL)
        return -EBADF;
    ctx = vl_fd_ctx(fd, xl);
    if (ctx == NULL)
        return -EBADF;
    pthread_mutex_lock(&fd->lock);
    if (ctx->is_open) {
        *out = ctx->os_fd;
        rc = 0;
    }
    pthread_mutex_unlock(&fd->lock);
    return rc;
}


static uint64_t
posix_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}


/* -ENOSPC when the brick's free space is below the reserve. The answer
 * is reused for POSIX_SPACE_CACHE_MS: an fstatvfs per create and write
 * was a tenth of their system calls, and the reserve is a soft limit
 * (writes still fail with ENOSPC on a really full disk). */
int
posix_space_check(vl_xlator_t *xl)
{
    const struct posix_conf *conf = VL_CONF(xl, struct posix_conf);
    struct posix_priv *priv = posix_priv(xl);
    uint64_t now, at;
    struct statvfs sv;
    double want;
    int rc;

    if (conf->reserve <= 0.0)
        return 0;
    now = posix_now_ms() + 1;
    at = atomic_load_explicit(&priv->space_at_ms, memory_order_acquire);
    if (at != 0 && now - at < POSIX_SPACE_CACHE_MS)
        return atomic_load_explicit(&priv->space_rc, memory_order_relaxed);
    if (fstatvfs(priv->root_fd, &sv) < 0)
        return 0; /* cannot tell: let the write itself decide */
    want = (double)sv.f_blocks * conf->reserve / 100.0;
    rc = (double)sv.f_bavail < want ? -ENOSPC : 0;
    atomic_store_explicit(&priv->space_rc, rc, memory_order_relaxed);
    atomic_store_explicit(&priv->space_at_ms, now, memory_order_release);
    return rc;
}


/* The process umask without changing it (umask(2) would race with other
 * threads creating files): the "Umask:" line of /proc/self/status. If it
 * cannot be read, 0777 makes every create fix its mode with a chmod. */
static mode_t
posix_read_umask(void)
{
    char line[128];
    unsigned mask;
    mode_t rc = 0777;
    FILE *f = fopen("/proc/self/status", "re");

    if (f == NULL)
        return rc;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "Umask: %o", &mask) == 1) {
            rc = (mode_t)(mask & 0777);
            break;
        }
    }
    fclose(f);
    return rc;
}


static void
posix_fop_nosys(vl_xlator_t *xl, vl_req_t *req)
{
    vl_unwind(req, -ENOSYS);
}


/* Opens and checks the brick root; fills err with why it is unusable. */
static int
posix_root_open(const char *dir, int *out, vl_err_t *err)
{
    struct statvfs sv;
    int fd;
    int rc;

    if (dir == NULL || dir[0] == '\0') {
        vl_err_set(err, "option 'directory' is required");
        return -EINVAL;
    }
    /* A relative path would depend on the daemon's working directory. */
    if (dir[0] != '/') {
        vl_err_set(err, "brick directory %s is not an absolute path", dir);
        return -EINVAL;
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        if (rc == -ENOENT)
            vl_err_set(err, "brick directory %s does not exist", dir);
        else if (rc == -ENOTDIR)
            vl_err_set(err, "brick directory %s is not a directory", dir);
        else
            vl_err_set(err, "brick directory %s: %s", dir, strerror(-rc));
        return rc;
    }
    if (fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY) != 0) {
        vl_err_set(err, "brick directory %s is on a read-only file system",
                   dir);
        close(fd);
        return -EROFS;
    }
    if (faccessat(fd, ".", W_OK, 0) < 0) {
        rc = -errno;
        vl_err_set(err, "brick directory %s is not writable: %s", dir,
                   strerror(-rc));
        close(fd);
        return rc;
    }
    *out = fd;
    return 0;
}


/* Checks or sets the root GFID on the brick root. */
static int
posix_root_gfid(int fd, const char *dir, vl_err_t *err)
{
    unsigned char buf[64];
    char str[VL_GFID_STR_LEN];
    vl_gfid_t g;
    ssize_t n;

    n = fgetxattr(fd, POSIX_GFID_XATTR, buf, sizeof(buf));
    if (n == (ssize_t)sizeof(g.bytes)) {
        memcpy(g.bytes, buf, sizeof(g.bytes));
        if (vl_gfid_is_root(&g))
            return 0;
        vl_err_set(err, "brick directory %s has gfid %s, not the root gfid "
                   "(is it part of another volume?)", dir,
                   vl_gfid_to_str(&g, str));
        return -EEXIST;
    }
    if (n >= 0 || errno == ERANGE) {
        vl_err_set(err, "brick directory %s has a malformed %s xattr", dir,
                   POSIX_GFID_XATTR);
        return -EINVAL;
    }
    if (errno == ENODATA
        && fsetxattr(fd, POSIX_GFID_XATTR, vl_gfid_root.bytes,
                     sizeof(vl_gfid_root.bytes), XATTR_CREATE) == 0)
        return 0;
    if (errno == ENOTSUP)
        vl_err_set(err, "brick directory %s: file system has no extended "
                   "attribute support", dir);
    else if (errno == EPERM)
        vl_err_set(err, "brick directory %s: cannot set trusted.* xattrs "
                   "(not running as root?)", dir);
    else
        vl_err_set(err, "brick directory %s: cannot set %s: %s", dir,
                   POSIX_GFID_XATTR, strerror(errno));
    return errno == ENOTSUP ? -ENOTSUP : -errno;
}


/* Empties .mortar/unlink: files parked there were open when the brick
 * last stopped, and nothing holds them open any more. */
static int
posix_unlink_dir_purge(int root_fd)
{
    struct dirent *d;
    DIR *dir;
    int fd;

    fd = openat(root_fd, POSIX_META_DIR "/" POSIX_UNLINK_DIR,
                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    dir = fdopendir(fd);
    if (dir == NULL) {
        close(fd);
        return -errno;
    }
    while ((d = readdir(dir)) != NULL) {
        if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
            unlinkat(dirfd(dir), d->d_name, 0);
    }
    closedir(dir);
    return 0;
}


/* Creates .mortar/{handles,unlink} and the root's handle; opens
 * handles_fd and unlink_fd. */
static int
posix_meta_setup(vl_xlator_t *xl, const char *dir, vl_err_t *err)
{
    struct posix_priv *priv = posix_priv(xl);
    char hrel[POSIX_HANDLE_REL_LEN];
    char mkd[8];
    int rc;

    if (mkdirat(priv->root_fd, POSIX_META_DIR, 0700) < 0 && errno != EEXIST)
        goto fail;
    if (mkdirat(priv->root_fd, POSIX_META_DIR "/" POSIX_HANDLES_DIR, 0700)
            < 0
        && errno != EEXIST)
        goto fail;
    priv->handles_fd = openat(priv->root_fd,
                              POSIX_META_DIR "/" POSIX_HANDLES_DIR,
                              O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (priv->handles_fd < 0)
        goto fail;
    if (mkdirat(priv->root_fd, POSIX_META_DIR "/" POSIX_UNLINK_DIR, 0700) < 0
        && errno != EEXIST)
        goto fail;
    if (posix_unlink_dir_purge(priv->root_fd) != 0)
        goto fail;
    priv->unlink_fd = openat(priv->root_fd, POSIX_META_DIR "/" POSIX_UNLINK_DIR,
                             O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (priv->unlink_fd < 0)
        goto fail;
    /* The root's handle points at the brick root from handles/00/00. */
    if (mkdirat(priv->handles_fd, "00", 0700) < 0 && errno != EEXIST)
        goto fail;
    snprintf(mkd, sizeof(mkd), "00/00");
    if (mkdirat(priv->handles_fd, mkd, 0700) < 0 && errno != EEXIST)
        goto fail;
    posix_handle_rel(&vl_gfid_root, hrel);
    if (symlinkat("../../../..", priv->handles_fd, hrel) < 0
        && errno != EEXIST)
        goto fail;
    return 0;
fail:
    rc = -errno;
    vl_err_set(err, "brick directory %s: cannot set up %s/%s: %s", dir,
               POSIX_META_DIR, POSIX_HANDLES_DIR, strerror(-rc));
    return rc;
}


/* Directory fds cached in inodes may number as many as the inode LRU
 * holds: raise the soft NOFILE limit to the hard one (as brick daemons
 * do) and spend at most half of it on the cache. */
static long
posix_fd_budget(vl_xlator_t *xl)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 256;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t old = rl.rlim_cur;

        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
            vl_log(xl, VL_LOG_INFO, "open file limit raised from %llu to %llu",
                   (unsigned long long)old, (unsigned long long)rl.rlim_cur);
        else
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 2 > (rlim_t)1 << 30)
        return 1L << 30;
    return (long)(rl.rlim_cur / 2);
}


static int
posix_init(vl_xlator_t *xl, vl_err_t *err)
{
    const struct posix_conf *conf = VL_CONF(xl, struct posix_conf);
    struct posix_priv *priv;
    struct stat st;
    int rc;

    priv = vl_calloc(xl, 1, sizeof(*priv), POSIX_MT_PRIV);
    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    priv->root_fd = -1;
    priv->handles_fd = -1;
    priv->unlink_fd = -1;
    priv->index_fd = -1;
    priv->index_xattrop_fd = -1;
    priv->index_entry_fd = -1;
    for (int i = 0; i < POSIX_XATTROP_STRIPES; i++)
        pthread_mutex_init(&priv->xattrop_locks[i], NULL);
    posix_making_init(priv);
    xl->priv = priv;

    rc = posix_root_open(conf->directory, &priv->root_fd, err);
    if (rc != 0)
        goto out;
    if (fstat(priv->root_fd, &st) < 0) {
        rc = -errno;
        vl_err_set(err, "brick directory %s: %s", conf->directory,
                   strerror(-rc));
        goto out;
    }
    priv->dev = st.st_dev;
    priv->max_cached = posix_fd_budget(xl);
    priv->proc_umask = posix_read_umask();
    priv->euid = geteuid();
    priv->egid = getegid();
    rc = posix_root_gfid(priv->root_fd, conf->directory, err);
    if (rc != 0)
        goto out;
    rc = posix_meta_setup(xl, conf->directory, err);
    if (rc != 0)
        goto out;
    rc = posix_index_setup(xl);
    if (rc != 0) {
        vl_err_set(err, "brick directory %s: cannot set up %s/%s: %s",
                   conf->directory, POSIX_META_DIR, POSIX_INDEX_DIR,
                   strerror(-rc));
        goto out;
    }
    rc = posix_janitor_start(xl);
    if (rc != 0) {
        vl_err_set(err, "janitor: %s", strerror(-rc));
        goto out;
    }
    posix_index_boot_start(xl);
    vl_log(xl, VL_LOG_INFO, "brick %s ready (reserve %.1f%%)",
           conf->directory, conf->reserve);
out:
    if (rc != 0) {
        if (priv->root_fd >= 0)
            close(priv->root_fd);
        if (priv->handles_fd >= 0)
            close(priv->handles_fd);
        if (priv->unlink_fd >= 0)
            close(priv->unlink_fd);
        posix_index_teardown(priv);
        for (int i = 0; i < POSIX_XATTROP_STRIPES; i++)
            pthread_mutex_destroy(&priv->xattrop_locks[i]);
        posix_making_fini(priv);
        vl_free(priv);
        xl->priv = NULL;
    }
    return rc;
}


static void
posix_fini(vl_xlator_t *xl)
{
    struct posix_priv *priv = posix_priv(xl);

    if (priv == NULL)
        return;
    posix_janitor_stop(xl);
    posix_index_boot_stop(xl); /* after the janitor's last removals */
    close(priv->root_fd);
    close(priv->handles_fd);
    close(priv->unlink_fd);
    posix_index_teardown(priv);
    for (int i = 0; i < POSIX_XATTROP_STRIPES; i++)
        pthread_mutex_destroy(&priv->xattrop_locks[i]);
    posix_making_fini(priv);
    vl_free(priv);
    xl->priv = NULL;
}


static void
posix_forget(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct posix_inode_ctx *ctx = vl_inode_ctx(inode, xl);

    if (ctx == NULL)
        return;
    pthread_mutex_lock(&inode->lock);
    posix_dirfd_drop_locked(xl, ctx);
    pthread_mutex_unlock(&inode->lock);
}


static void
posix_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct posix_fd_ctx *ctx = vl_fd_ctx(fd, xl);
    bool is_parked = false;

    if (ctx == NULL || !ctx->is_open)
        return;
    close(ctx->os_fd);
    ctx->is_open = false;
    pthread_mutex_destroy(&ctx->dir_lock);
    vl_free(ctx->dir_ring);
    ctx->dir_ring = NULL;
    /* The last close of an unlinked file drops its parked handle (only
     * then: an unlinkat per release was a wasted ENOENT). */
    if (!ctx->is_dir
        && posix_open_count_add(xl, fd->inode, -1, &is_parked) == 0
        && is_parked && posix_priv(xl) != NULL
        && !vl_gfid_is_null(&fd->inode->gfid)) {
        char str[VL_GFID_STR_LEN];

        vl_gfid_to_str(&fd->inode->gfid, str);
        unlinkat(posix_priv(xl)->unlink_fd, str, 0);
        posix_index_forget(xl, &fd->inode->gfid);
    }
}


static void
posix_dump(vl_xlator_t *xl, FILE *out)
{
    const struct posix_conf *conf = VL_CONF(xl, struct posix_conf);
    struct posix_priv *priv = posix_priv(xl);

    fprintf(out, "directory=%s\n", conf->directory);
    if (priv != NULL) {
        fprintf(out, "root_fd=%d\n", priv->root_fd);
        fprintf(out, "handles_fd=%d\n", priv->handles_fd);
        fprintf(out, "cached_dirfds=%ld\n", atomic_load(&priv->n_cached));
        fprintf(out, "max_cached_dirfds=%ld\n", priv->max_cached);
        fprintf(out, "readdir_entries=%lu\n",
                atomic_load(&priv->n_rd_entries));
        fprintf(out, "readdir_stats=%lu\n", atomic_load(&priv->n_rd_stats));
        fprintf(out, "readdir_linkfiles_skipped=%lu\n",
                atomic_load(&priv->n_rd_linkfiles));
        posix_janitor_dump(xl, out);
        /* A readdir of the index: O(pending), like heal info. */
        fprintf(out, "index_pending=%ld\n", posix_index_count(xl));
        fprintf(out, "index_entry_dirs=%ld\n", posix_index_entry_dirs(xl));
        posix_index_boot_dump(xl, out);
    }
}


static const vl_option_t posix_options[] = {
    VL_OPT_PATH("directory", struct posix_conf, directory,
                .flags = VL_OPT_REQUIRED,
                .doc = "Brick directory holding the volume's files; it must "
                       "exist, be writable and support trusted xattrs."),
    VL_OPT_PERCENT("reserve", struct posix_conf, reserve, .min = 0,
                   .max = 100, .def = "1",
                   .flags = VL_OPT_SETTABLE,
                   .aliases = {"storage.reserve"},
                   .doc = "Percent of the brick file system kept free: "
                          "writes and creates fail with ENOSPC below it."),
    VL_OPT_BOOL("fsync-on-close", struct posix_conf, is_fsync_on_close,
                .def = "off", .flags = VL_OPT_SETTABLE | VL_OPT_ADVANCED,
                .doc = "Flush (close) syncs a file's data to disk before "
                       "answering. FUSE clients send FLUSH only with "
                       "their flush-behind option off (or for files "
                       "they locked)."),
    VL_OPT_END,
};

static const char *const posix_mem_types[] = {
    "misc", "priv", "chain", "xattr", "link", "dirbuf", "janitor",
    "rchecksum", "dirring", NULL,
};

const vl_xlator_class_t xl_storage_posix = {
    .abi = VL_XLATOR_ABI,
    .type = "storage/posix",
    .prefix = "posix",
    .version = {0, 1, 0},
    .flags = VL_XL_LEAF,
    .conf_size = sizeof(struct posix_conf),
    .req_priv_size = 0,
    .inode_ctx_size = sizeof(struct posix_inode_ctx),
    .fd_ctx_size = sizeof(struct posix_fd_ctx),
    .options = posix_options,
    .mem_types = posix_mem_types,
    .doc = "Stores the volume's files in a local brick directory, with each "
           "object's GFID in an xattr and a handle tree under .mortar/ so "
           "any object is reachable by GFID at any depth.",
    .init = posix_init,
    .fini = posix_fini,
    .forget = posix_forget,
    .release = posix_release,
    .dump = posix_dump,
    .fops = {
        [VL_FOP_LOOKUP] = posix_fop_lookup,
        [VL_FOP_STAT] = posix_fop_stat,
        [VL_FOP_SETATTR] = posix_fop_setattr,
        [VL_FOP_ACCESS] = posix_fop_access,
        [VL_FOP_READLINK] = posix_fop_readlink,
        [VL_FOP_MKNOD] = posix_fop_mknod,
        [VL_FOP_MKDIR] = posix_fop_mkdir,
        [VL_FOP_UNLINK] = posix_fop_unlink,
        [VL_FOP_RMDIR] = posix_fop_rmdir,
        [VL_FOP_SYMLINK] = posix_fop_symlink,
        [VL_FOP_RENAME] = posix_fop_rename,
        [VL_FOP_LINK] = posix_fop_link,
        [VL_FOP_CREATE] = posix_fop_create,
        [VL_FOP_OPEN] = posix_fop_open,
        [VL_FOP_READ] = posix_fop_read,
        [VL_FOP_WRITE] = posix_fop_write,
        [VL_FOP_FLUSH] = posix_fop_flush,
        [VL_FOP_FSYNC] = posix_fop_fsync,
        [VL_FOP_OPENDIR] = posix_fop_opendir,
        [VL_FOP_READDIR] = posix_fop_readdir,
        [VL_FOP_STATFS] = posix_fop_statfs,
        [VL_FOP_SETXATTR] = posix_fop_setxattr,
        [VL_FOP_GETXATTR] = posix_fop_getxattr,
        [VL_FOP_REMOVEXATTR] = posix_fop_removexattr,
        [VL_FOP_LK] = posix_fop_nosys,
        [VL_FOP_INODELK] = posix_fop_nosys,
        [VL_FOP_ENTRYLK] = posix_fop_nosys,
        [VL_FOP_FALLOCATE] = posix_fop_fallocate,
        [VL_FOP_COPY_FILE_RANGE] = posix_fop_copy_file_range,
        [VL_FOP_LSEEK] = posix_fop_lseek,
        [VL_FOP_XATTROP] = posix_fop_xattrop,
        [VL_FOP_RCHECKSUM] = posix_fop_rchecksum,
    },
};
