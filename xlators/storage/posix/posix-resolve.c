/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-resolve: from a GFID or a (parent, name) entry to something a fop
 * can use: struct posix_obj (an fd to work at and a name relative to it).
 *
 * A directory is resolved by reading its handle symlink (target
 * "../../xx/yy/<parent-gfid>/<name>", see posix-handle.c), resolving the
 * parent the same way (iteratively, up to the root or to an ancestor
 * whose O_PATH fd is cached in its inode) and then openat(parent_fd,
 * name) back down; the kernel never follows the symlinks (a deep tree
 * would hit ELOOP and PATH_MAX). A non-directory is reached through its
 * hard-linked handle.
 *
 * Per inode: struct posix_inode_ctx (a directory's cached O_PATH fd,
 *            leased to fops without a dup).
 * Threads:   any io-thread; the inode ctx is guarded by inode->lock.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix.h"

/* A directory chain deeper than this is a loop in a corrupt handle tree. */
#define POSIX_MAX_DEPTH (1u << 20)

struct posix_chain_elem {
    vl_gfid_t gfid;          /* the directory */
    char name[NAME_MAX + 1]; /* its name in its parent */
};


/* Borrows the cached dirfd of the linked inode with this GFID, if any,
 * and returns a dup of it (the inode ref is dropped at once). */
static int
posix_cached_dirfd_dup(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    struct posix_inode_ctx *ctx;
    vl_inode_t *inode;
    int fd = -1;

    if (xl->graph == NULL || xl->graph->itable == NULL)
        return -1;
    inode = vl_inode_find(xl->graph->itable, gfid);
    if (inode == NULL)
        return -1;
    ctx = vl_inode_ctx(inode, xl);
    pthread_mutex_lock(&inode->lock);
    if (ctx != NULL && ctx->has_dirfd)
        fd = fcntl(ctx->dirfd, F_DUPFD_CLOEXEC, 0);
    pthread_mutex_unlock(&inode->lock);
    vl_inode_unref(inode);
    return fd;
}


/* Resolves a directory GFID to a new O_PATH fd (*out, owned by the
 * caller). Walks up the handle symlinks to the root or a cached ancestor,
 * then opens each name back down. -ESTALE when the GFID is unknown. */
int
posix_dir_resolve(vl_xlator_t *xl, const vl_gfid_t *gfid, int *out)
{
    struct posix_priv *priv = posix_priv(xl);
    struct posix_chain_elem *chain = NULL;
    size_t n = 0, cap = 0;
    char hrel[POSIX_HANDLE_REL_LEN];
    char target[PATH_MAX];
    vl_gfid_t cur = *gfid;
    vl_gfid_t check;
    int base = -1;
    bool owns_base = false;
    int rc;

    for (;;) {
        ssize_t len;

        if (vl_gfid_is_root(&cur)) {
            base = priv->root_fd;
            break;
        }
        base = posix_cached_dirfd_dup(xl, &cur);
        if (base >= 0) {
            owns_base = true;
            break;
        }
        if (n >= POSIX_MAX_DEPTH) {
            rc = -ELOOP;
            goto out;
        }
        if (n == cap) {
            size_t ncap = cap == 0 ? 16 : cap * 2;
            void *p = chain == NULL
                          ? vl_malloc(xl, ncap * sizeof(*chain), POSIX_MT_CHAIN)
                          : vl_realloc(chain, ncap * sizeof(*chain));

            if (p == NULL) {
                rc = -ENOMEM;
                goto out;
            }
            chain = p;
            cap = ncap;
        }
        posix_handle_rel(&cur, hrel);
        len = readlinkat(priv->handles_fd, hrel, target, sizeof(target) - 1);
        if (len < 0) {
            /* EINVAL: the handle is no symlink, so the GFID names a
             * non-directory. */
            rc = errno == ENOENT   ? -ESTALE
                 : errno == EINVAL ? -ENOTDIR
                                   : -errno;
            goto out;
        }
        target[len] = '\0';
        chain[n].gfid = cur;
        if (posix_dir_target_parse(target, &cur, chain[n].name) != 0) {
            vl_log(xl, VL_LOG_WARNING, "bad directory handle %s -> %s", hrel,
                   target);
            rc = -ESTALE;
            goto out;
        }
        n++;
    }

    while (n > 0) {
        int fd;

        n--;
        fd = openat(base, chain[n].name,
                    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            rc = (errno == ENOENT || errno == ENOTDIR) ? -ESTALE : -errno;
            goto out;
        }
        if (owns_base)
            close(base);
        base = fd;
        owns_base = true;
    }
    if (!owns_base) { /* gfid was the root itself */
        base = fcntl(priv->root_fd, F_DUPFD_CLOEXEC, 0);
        if (base < 0) {
            rc = -errno;
            goto out;
        }
        owns_base = true;
    }
    /* The handle may be stale (tree edited by hand): check the result. */
    if (posix_gfid_get(base, ".", &check) != 0
        || !vl_gfid_equal(&check, gfid)) {
        rc = -ESTALE;
        goto out;
    }
    *out = base;
    owns_base = false;
    rc = 0;
out:
    if (owns_base)
        close(base);
    vl_free(chain);
    return rc;
}


/* Sets obj->atfd to the O_PATH fd of a directory inode: the brick root
 * (borrowed, never closed while the graph runs), the fd cached in the
 * inode ctx (leased: obj->lease, given back by posix_obj_put; an rmdir
 * that uncaches it meanwhile leaves the close to the last user), or,
 * resolving and caching it first, an fd of obj's own (owns_atfd). */
int
posix_dirfd_get(vl_xlator_t *xl, vl_inode_t *inode, struct posix_obj *obj)
{
    struct posix_priv *priv = posix_priv(xl);
    struct posix_inode_ctx *ctx;
    bool is_cached = false;
    int fd = -1;
    int rc;

    obj->owns_atfd = false;
    obj->lease = NULL;
    if (inode == NULL || vl_gfid_is_null(&inode->gfid))
        return -ESTALE;
    if (vl_gfid_is_root(&inode->gfid)) {
        obj->atfd = priv->root_fd;
        return 0;
    }
    if (inode->type != 0 && !S_ISDIR(inode->type))
        return -ENOTDIR;
    ctx = vl_inode_ctx(inode, xl);
    if (ctx != NULL) {
        /* Lease the cached fd (no dup + close per fop): the fop holds a
         * ref on inode, so forget() cannot run meanwhile, and an uncache
         * leaves the close to the last user. */
        pthread_mutex_lock(&inode->lock);
        if (ctx->has_dirfd) {
            ctx->n_dirfd_users++;
            obj->atfd = ctx->dirfd;
            obj->lease = inode;
            obj->lease_xl = xl;
        }
        pthread_mutex_unlock(&inode->lock);
        if (obj->lease != NULL)
            return 0;
    }
    rc = posix_dir_resolve(xl, &inode->gfid, &fd);
    if (rc != 0)
        return rc;
    obj->atfd = fd;
    obj->owns_atfd = true;
    if (ctx == NULL)
        return 0;
    /* Cache a dup unless another thread cached one meanwhile, or the
     * cache already holds as many fds as the process should spend. */
    if (atomic_fetch_add(&priv->n_cached, 1) >= priv->max_cached) {
        atomic_fetch_sub(&priv->n_cached, 1);
        return 0;
    }
    pthread_mutex_lock(&inode->lock);
    if (!ctx->has_dirfd && !ctx->is_dirfd_dropping) {
        ctx->dirfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        ctx->has_dirfd = ctx->dirfd >= 0;
        is_cached = ctx->has_dirfd;
    }
    pthread_mutex_unlock(&inode->lock);
    if (!is_cached)
        atomic_fetch_sub(&priv->n_cached, 1);
    return 0;
}


/* Closes a cached directory fd; the caller holds the inode's lock. */
void
posix_dirfd_drop_locked(vl_xlator_t *xl, struct posix_inode_ctx *ctx)
{
    if (ctx == NULL || !ctx->has_dirfd)
        return;
    ctx->has_dirfd = false;
    if (ctx->n_dirfd_users > 0) {
        ctx->is_dirfd_dropping = true; /* posix_obj_put closes it */
        return;
    }
    close(ctx->dirfd);
    if (posix_priv(xl) != NULL) /* NULL if forgotten after fini */
        atomic_fetch_sub(&posix_priv(xl)->n_cached, 1);
}


/* Drops the cached fd of a removed directory, so that a directory
 * recreated later with the same GFID (self-heal) is resolved afresh. */
void
posix_dirfd_uncache(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    int fd = posix_dirfd_take(xl, gfid);

    if (fd >= 0)
        close(fd);
}


int
posix_dirfd_take(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    struct posix_inode_ctx *ctx;
    vl_inode_t *inode;
    int fd = -1;

    if (xl->graph == NULL || xl->graph->itable == NULL)
        return -1;
    inode = vl_inode_find(xl->graph->itable, gfid);
    if (inode == NULL)
        return -1;
    ctx = vl_inode_ctx(inode, xl);
    pthread_mutex_lock(&inode->lock);
    if (ctx != NULL && ctx->has_dirfd && ctx->n_dirfd_users == 0) {
        fd = ctx->dirfd;
        ctx->has_dirfd = false;
        atomic_fetch_sub(&posix_priv(xl)->n_cached, 1);
    } else {
        posix_dirfd_drop_locked(xl, ctx);
    }
    pthread_mutex_unlock(&inode->lock);
    vl_inode_unref(inode);
    return fd;
}


/* Is the handle of gfid a directory symlink (true) or the object itself? */
int
posix_handle_is_dir(vl_xlator_t *xl, const vl_gfid_t *gfid,
                    bool *out /* OUT */)
{
    struct posix_priv *priv = posix_priv(xl);
    char hrel[POSIX_HANDLE_REL_LEN];
    struct stat st;
    vl_gfid_t g;

    posix_handle_rel(gfid, hrel);
    if (fstatat(priv->handles_fd, hrel, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? -ESTALE : -errno;
    /* A symlink is either a directory handle or a hard link to a symlink
     * object; only the latter carries the GFID xattr itself. */
    *out = S_ISLNK(st.st_mode)
           && !(posix_gfid_get(priv->handles_fd, hrel, &g) == 0
                && vl_gfid_equal(&g, gfid));
    return 0;
}


int
posix_obj_from_inode(vl_xlator_t *xl, vl_inode_t *inode,
                     struct posix_obj *obj /* OUT */)
{
    struct posix_priv *priv = posix_priv(xl);
    bool is_dir = false;
    int rc;

    memset(obj, 0, sizeof(*obj));
    obj->atfd = -1;
    if (inode == NULL || vl_gfid_is_null(&inode->gfid))
        return -ESTALE;
    obj->gfid = inode->gfid;
    if (vl_gfid_is_root(&inode->gfid)) {
        is_dir = true;
    } else if (inode->type != 0) {
        is_dir = S_ISDIR(inode->type);
    } else {
        rc = posix_handle_is_dir(xl, &inode->gfid, &is_dir);
        if (rc == -ESTALE)
            is_dir = false; /* maybe an unlinked open file, see below */
        else if (rc != 0)
            return rc;
    }
    if (is_dir) {
        rc = posix_dirfd_get(xl, inode, obj);
        if (rc != 0)
            return rc;
        strcpy(obj->rel, ".");
    } else {
        obj->atfd = priv->handles_fd;
        posix_handle_rel(&inode->gfid, obj->rel);
    }
    if (fstatat(obj->atfd, obj->rel, &obj->st, AT_SYMLINK_NOFOLLOW) == 0) {
        /* A regular file whose handle is its only link has no name: it
         * was deleted and its handle waits for the janitor (or a crash
         * left it to the sweep). It must not come back by GFID. */
        if (is_dir || !S_ISREG(obj->st.st_mode) || obj->st.st_nlink != 1)
            return 0;
        errno = ENOENT;
    }
    rc = errno == ENOENT ? -ESTALE : -errno;
    if (rc == -ESTALE && !is_dir) {
        /* An unlinked file still open: its handle is parked. */
        char str[VL_GFID_STR_LEN];

        vl_gfid_to_str(&inode->gfid, str);
        if (fstatat(priv->unlink_fd, str, &obj->st, AT_SYMLINK_NOFOLLOW)
            == 0) {
            obj->atfd = priv->unlink_fd;
            strcpy(obj->rel, str);
            obj->st.st_nlink--; /* the parked handle is no name */
            return 0;
        }
    }
    posix_obj_put(obj);
    return rc;
}


int
posix_name_check(vl_inode_t *parent, const char *name, bool is_create)
{
    size_t len;

    if (name == NULL || name[0] == '\0' || strchr(name, '/') != NULL)
        return -EINVAL;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return is_create ? -EEXIST : -EINVAL;
    len = strlen(name);
    if (len > NAME_MAX)
        return -ENAMETOOLONG;
    /* The brick's own metadata is invisible and untouchable. */
    if (parent != NULL && vl_gfid_is_root(&parent->gfid)
        && strcmp(name, POSIX_META_DIR) == 0)
        return is_create ? -EPERM : -ENOENT;
    return 0;
}


/* Sets obj to (parent dirfd, name) without looking at the entry. */
int
posix_obj_parent(vl_xlator_t *xl, vl_inode_t *parent, const char *name,
                 bool is_create, struct posix_obj *obj /* OUT */)
{
    int rc;

    memset(obj, 0, sizeof(*obj));
    obj->atfd = -1;
    rc = posix_name_check(parent, name, is_create);
    if (rc != 0)
        return rc;
    rc = posix_dirfd_get(xl, parent, obj);
    if (rc != 0)
        return rc;
    strcpy(obj->rel, name);
    return 0;
}


/* lstat()s obj and reads its GFID (null if it has none). */
int
posix_obj_stat(struct posix_obj *obj)
{
    int rc;

    if (fstatat(obj->atfd, obj->rel, &obj->st, AT_SYMLINK_NOFOLLOW) < 0)
        return -errno;
    rc = posix_gfid_get(obj->atfd, obj->rel, &obj->gfid);
    if (rc == -ENODATA) {
        obj->gfid = vl_gfid_null;
        rc = 0;
    }
    return rc;
}


int
posix_obj_from_entry(vl_xlator_t *xl, vl_inode_t *parent, const char *name,
                     struct posix_obj *obj /* OUT */)
{
    int rc;

    rc = posix_obj_parent(xl, parent, name, false, obj);
    if (rc == 0)
        rc = posix_obj_stat(obj);
    if (rc != 0)
        posix_obj_put(obj);
    return rc;
}


int
posix_obj_from_loc(vl_xlator_t *xl, const struct vl_loc *loc,
                   struct posix_obj *obj /* OUT */)
{
    if (loc->inode != NULL && !vl_gfid_is_null(&loc->inode->gfid))
        return posix_obj_from_inode(xl, loc->inode, obj);
    if (loc->parent != NULL && loc->name != NULL)
        return posix_obj_from_entry(xl, loc->parent, loc->name, obj);
    memset(obj, 0, sizeof(*obj));
    obj->atfd = -1;
    return -EINVAL;
}


void
posix_obj_put(struct posix_obj *obj)
{
    if (obj->lease != NULL) {
        vl_inode_t *inode = obj->lease;
        struct posix_inode_ctx *ctx = vl_inode_ctx(inode, obj->lease_xl);

        pthread_mutex_lock(&inode->lock);
        if (--ctx->n_dirfd_users == 0 && ctx->is_dirfd_dropping) {
            close(ctx->dirfd);
            ctx->is_dirfd_dropping = false;
            atomic_fetch_sub(&posix_priv(obj->lease_xl)->n_cached, 1);
        }
        pthread_mutex_unlock(&inode->lock);
        obj->lease = NULL;
        obj->atfd = -1;
    }
    if (obj->owns_atfd && obj->atfd >= 0)
        close(obj->atfd);
    obj->atfd = -1;
    obj->owns_atfd = false;
}
