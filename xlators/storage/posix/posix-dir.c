/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-dir: directory listing.
 *
 * Intercepts: opendir, readdir (and readdirplus).
 * Offsets are small: an entry's d_off is a cookie the fd gives out in
 * order (1 for the first entry read, counting "." and "..", so a first
 * reading numbers the stream's positions), not the file system's cookie
 * (ext4 gives 63-bit hashes, which leave no room for cluster/distribute
 * to add its subvolume index). The file system's cookies are what make a
 * listing exact while the directory changes (ext4's hash, tmpfs's and
 * XFS's offsets stay valid across creates and unlinks; a count of
 * entries from the start does not), so the fd keeps the kernel offset of
 * each of the last POSIX_DIR_RING_MAX cookies it gave (struct
 * posix_fd_ctx.dir_ring, grown on demand): a readdir at any of them
 * resumes exactly, whether it goes on from where the last one ended (the
 * usual case) or comes back to an earlier cookie (FUSE after the
 * reader's buffer filled, cluster/distribute after its cache dropped a
 * batch). Reading on from an earlier cookie gives the entries new
 * cookies: a cookie is never given twice by one fd, so one from an older
 * reading (distribute may still hold such a batch, or have a read of it
 * in flight) keeps meaning the place after its own entry. Only a cookie
 * the fd does not know (another fd's, or one older than the ring)
 * re-reads the stream from the start and counts that many entries
 * (slower; exact only if the directory did not change meanwhile).
 * ".mortar" is skipped at the brick root (but counted). Each entry's
 * inode number is derived from its GFID, as stat reports it.
 * Names only (readdir without plus, issue 24): no stat per entry. The
 * type is getdents' d_type (a stat only where the file system gives
 * DT_UNKNOWN); a regular file is probed for POSIX_LINKTO_XATTR instead,
 * and cluster/distribute's link files and migration markers are left
 * out (counted, like ".mortar"): without attributes nobody above could
 * tell them, and every listing that must see them (rebalance, heal)
 * asks with plus. So a names-only listing costs getdents and one or two
 * getxattrs per entry (the GFID gives d_ino), and the wire carries no
 * attributes.
 * Content (readdirplus with args.content_max, for quick-read): each
 * regular file of at most content_max bytes is read whole with the rules
 * of a lookup's content (posix-content.c: only after the lstat said it
 * is a regular file, O_NOFOLLOW | O_NONBLOCK | O_NOATIME, the attributes
 * answered are those of the open file and must match the lstat, else no
 * content). All the contents of a reply go into one buffer, reply.buf.
 * The records alone fill args.size as without content; records and
 * contents together fit in max(args.size, POSIX_RD_CONTENT_BUDGET), so a
 * reply stays bounded yet a 4 KiB FUSE-sized request can still carry
 * 4 KiB files. A content that does not fit in what is left is not sent
 * (the entry is: the listing is never cut short for content).
 * Per fd:  struct posix_fd_ctx; dir_lock serialises lseek + getdents64
 *          on the shared directory fd and guards dir_pos, dir_kpos and
 *          dir_ring (freed at release).
 * Threads: io-threads workers.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix-content.h"
#include "posix.h"

#define POSIX_DIRBUF_SIZE (64 * 1024)
/* What a FUSE reply spends per entry: struct fuse_dirent is 24 bytes plus
 * the name padded to 8; readdirplus adds a 128-byte fuse_entry_out. */
#define POSIX_DIRENT_BASE 24
#define POSIX_DIRENT_PLUS 128
#define POSIX_READDIR_BUDGET_MAX (4 * VL_MiB)
/* Records and contents of one readdirplus with content at most this (or
 * args.size when larger). */
#define POSIX_RD_CONTENT_BUDGET (256 * VL_KiB)
/* Cookies whose kernel offsets a directory fd keeps (8 bytes each):
 * far more than the cookies anyone above still holds (the kernel keeps
 * one, cluster/distribute two batches per brick), bounded per fd. */
#define POSIX_DIR_RING_MIN 256
#define POSIX_DIR_RING_MAX (64 * 1024)

/* The contents of one readdirplus reply (args.content_max). */
struct posix_rd_content {
    uint32_t max;    /* largest file whose content is sent; 0: none */
    vl_buf_t *buf;   /* owned; made at the first content; goes into
                        reply.buf */
    size_t size;     /* bytes to allocate for buf (the budget) */
    size_t used;     /* bytes of buf filled */
    size_t n;        /* entries listed with content */
};


void
posix_fop_opendir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_opendir_args *a = VL_ARGS(req, opendir);
    struct posix_obj obj;
    int fd = -1;
    int rc;

    rc = posix_obj_from_loc(xl, &a->loc, &obj);
    if (rc != 0)
        goto out;
    if (a->fd == NULL) {
        rc = -EINVAL;
        goto out;
    }
    if (!S_ISDIR(obj.st.st_mode)) {
        rc = -ENOTDIR;
        goto out;
    }
    fd = openat(obj.atfd, obj.rel,
                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    rc = posix_fd_ctx_set(xl, a->fd, fd, true);
    if (rc != 0) {
        close(fd);
        goto out;
    }
    posix_iatt_fill(&obj.st, &obj.gfid, &req->reply.iatt);
out:
    posix_obj_put(&obj);
    vl_unwind(req, rc);
}


static size_t
posix_dirent_cost(const char *name, bool plus)
{
    size_t len = (POSIX_DIRENT_BASE + strlen(name) + 7) & ~(size_t)7;

    return plus ? len + POSIX_DIRENT_PLUS : len;
}


/* The kernel offset of cookie pos in *kpos if the fd knows it: pos is
 * 0 (the start), where the stream stands, or among the last dir_ring_n
 * cookies given (not below dir_ring_lo). Called with ctx->dir_lock
 * held. */
static bool
posix_dir_ring_get_locked(const struct posix_fd_ctx *ctx, uint64_t pos,
                          off_t *kpos /* OUT */)
{
    uint64_t top = ctx->dir_next - 1;

    if (pos == 0) {
        *kpos = 0;
        return true;
    }
    if (pos == ctx->dir_pos) {
        *kpos = ctx->dir_kpos;
        return true;
    }
    if (ctx->dir_ring == NULL || ctx->dir_next == 0 || pos < ctx->dir_ring_lo
        || pos > top || top - pos >= ctx->dir_ring_n)
        return false;
    *kpos = ctx->dir_ring[pos & (ctx->dir_ring_n - 1)];
    return true;
}


/* Doubles the ring (up to POSIX_DIR_RING_MAX), keeping the cookies it
 * holds up to top. Called with ctx->dir_lock held; on ENOMEM the ring
 * stays as it is (the oldest cookie is overwritten, as at the
 * maximum). */
static void
posix_dir_ring_grow_locked(vl_xlator_t *xl, struct posix_fd_ctx *ctx,
                           uint64_t top)
{
    uint32_t n = ctx->dir_ring_n == 0 ? POSIX_DIR_RING_MIN
                                      : ctx->dir_ring_n * 2;
    off_t *ring = vl_calloc(xl, n, sizeof(*ring), POSIX_MT_DIRRING);
    uint64_t from = ctx->dir_ring_lo;

    if (ring == NULL)
        return;
    if (ctx->dir_ring != NULL && top >= from) {
        if (top - from >= ctx->dir_ring_n)
            from = top - ctx->dir_ring_n + 1;
        for (uint64_t p = from; p <= top; p++)
            ring[p & (n - 1)] = ctx->dir_ring[p & (ctx->dir_ring_n - 1)];
    }
    vl_free(ctx->dir_ring);
    ctx->dir_ring = ring;
    ctx->dir_ring_n = n;
}


/* Gives the entry just read (kernel offset kpos after it) the next
 * cookie, records it and returns it. Called with ctx->dir_lock held. */
static uint64_t
posix_dir_cookie_new_locked(vl_xlator_t *xl, struct posix_fd_ctx *ctx,
                            off_t kpos)
{
    uint64_t pos = ctx->dir_next++;

    /* Grow while (1) below the maximum and (2) pos would overwrite a
     * cookie still held. */
    if (ctx->dir_ring_n < POSIX_DIR_RING_MAX                /* (1) */
        && (ctx->dir_ring_n == 0
            || pos - ctx->dir_ring_lo >= ctx->dir_ring_n)) /* (2) */
        posix_dir_ring_grow_locked(xl, ctx, pos - 1);
    if (ctx->dir_ring != NULL)
        ctx->dir_ring[pos & (ctx->dir_ring_n - 1)] = kpos;
    return pos;
}


/* Positions dfd after cookie pos (see the file comment): at once when
 * the fd knows its kernel offset, else by counting pos entries from the
 * start. Called with ctx->dir_lock held. Returns 0 or -errno. */
static int
posix_readdir_seek_locked(vl_xlator_t *xl, struct posix_fd_ctx *ctx,
                          int dfd, uint64_t pos, char *buf)
{
    uint64_t at = 0;
    off_t kpos = 0;

    if (ctx->dir_next == 0)
        ctx->dir_next = ctx->dir_ring_lo = 1;
    if (posix_dir_ring_get_locked(ctx, pos, &kpos)) {
        if (lseek(dfd, kpos, SEEK_SET) < 0)
            return -errno;
        ctx->dir_pos = pos;
        ctx->dir_kpos = kpos;
        return 0;
    }
    if (lseek(dfd, 0, SEEK_SET) < 0)
        return -errno;
    while (at < pos) {
        ssize_t n = getdents64(dfd, buf, POSIX_DIRBUF_SIZE);

        if (n < 0)
            return -errno;
        if (n == 0)
            break; /* past the end: the listing is over */
        for (ssize_t i = 0; i < n && at < pos;) {
            const struct dirent64 *d = (const void *)(buf + i);

            i += d->d_reclen;
            at++;
            kpos = d->d_off;
        }
    }
    ctx->dir_pos = pos;
    ctx->dir_kpos = kpos;
    /* A cookie beyond those given (another fd's): the cookies after it
     * follow on from it, as on the fd that gave it. */
    if (pos >= ctx->dir_next) {
        ctx->dir_next = pos;
        ctx->dir_ring_lo = pos;
        (void)posix_dir_cookie_new_locked(xl, ctx, kpos);
    }
    if (lseek(dfd, kpos, SEEK_SET) < 0)
        return -errno;
    return 0;
}


/* Reads the content of name (lstat st) into c->buf if it is a small
 * regular file and fits in room bytes; on success fills *ent's content
 * fields and *iatt from the open file. Any failure leaves the entry
 * without content. */
static void
posix_readdir_content(int dfd, const char *name, const struct stat *st,
                      const vl_gfid_t *gfid, struct posix_rd_content *c,
                      size_t room, struct vl_dirent *ent,
                      struct vl_iatt *iatt)
{
    struct stat got;
    int rc;

    if (c->max == 0 || !S_ISREG(st->st_mode) || st->st_size > c->max
        || (size_t)st->st_size > room)
        return;
    if (c->buf == NULL) {
        c->buf = vl_buf_new(c->size + 1);
        if (c->buf == NULL)
            return; /* ENOMEM: the listing goes on without content */
    }
    /* Room for one byte more than the size: a file that grew is seen. */
    if (c->used + (size_t)st->st_size + 1 > c->buf->size)
        return;
    rc = posix_content_read_at(dfd, name, st, c->buf->data + c->used,
                               &got);
    if (rc < 0)
        return;
    posix_iatt_fill(&got, gfid, iatt);
    ent->has_content = true;
    ent->content_len = (uint32_t)rc;
    ent->content_off = c->used;
    c->used += (size_t)rc;
}


/* Names only: the DT_ type of name (d_type, or a stat when the file
 * system did not say) in *type. Returns 0, or 1 if it is to be left out:
 * gone meanwhile, or a link file of cluster/distribute. */
static int
posix_readdir_names_only(vl_xlator_t *xl, int dfd, const char *name,
                         uint32_t *type /* IN/OUT */)
{
    struct posix_priv *priv = posix_priv(xl);
    struct stat st;
    ssize_t n;

    if (*type == DT_UNKNOWN) {
        atomic_fetch_add(&priv->n_rd_stats, 1);
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            return errno == ENOENT ? 1 : -errno;
        *type = IFTODT(st.st_mode);
    }
    if (*type != DT_REG)
        return 0;
    /* Only its presence matters: size 0 asks for the length. Any error
     * but ENOENT means no link file can be told here: listed. */
    n = posix_xattr_get_at(dfd, name, POSIX_LINKTO_XATTR, NULL, 0);
    if (n == -ENOENT)
        return 1;
    if (n >= 0) {
        atomic_fetch_add(&priv->n_rd_linkfiles, 1);
        return 1;
    }
    return 0;
}


/* Adds one getdents64 entry to the reply with cookie off (and its content
 * if c asks for it and room bytes of the budget are left: *content_len
 * gets its size). Returns 0, 1 if it vanished meanwhile (skipped), or
 * -errno. */
static int
posix_readdir_add(vl_xlator_t *xl, int dfd, vl_fd_t *fd, bool is_root,
                  const struct dirent64 *d, int64_t off, bool plus,
                  struct vl_dirent_list *list, struct posix_rd_content *c,
                  size_t room, size_t *content_len /* OUT */)
{
    struct vl_dirent content = {0};
    const char *name = d->d_name;
    struct vl_iatt iatt;
    bool has_iatt = false;
    struct stat st;
    vl_gfid_t gfid = vl_gfid_null;
    uint64_t ino = d->d_ino;
    uint32_t type = d->d_type;
    int rc;

    *content_len = 0;
    if (strcmp(name, ".") == 0) {
        gfid = fd->inode->gfid;
    } else if (strcmp(name, "..") == 0) {
        /* The root's parent is outside the brick: report the root. */
        if (is_root || posix_gfid_get(dfd, "..", &gfid) != 0)
            gfid = is_root ? vl_gfid_root : vl_gfid_null;
    } else {
        if (!plus) {
            rc = posix_readdir_names_only(xl, dfd, name, &type);
            if (rc != 0)
                return rc;
        }
        if (posix_gfid_get(dfd, name, &gfid) != 0)
            gfid = vl_gfid_null; /* made by hand: lookup will give one */
        if (plus && !vl_gfid_is_null(&gfid)) {
            atomic_fetch_add(&posix_priv(xl)->n_rd_stats, 1);
            if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 1 : -errno;
            posix_iatt_fill(&st, &gfid, &iatt);
            has_iatt = true;
            posix_readdir_content(dfd, name, &st, &gfid, c, room, &content,
                                  &iatt);
        }
    }
    if (!vl_gfid_is_null(&gfid))
        ino = vl_gfid_to_ino(&gfid);
    rc = vl_dirent_list_add(list, ino, off, type, name,
                            has_iatt ? &iatt : NULL);
    if (rc == 0)
        atomic_fetch_add(&posix_priv(xl)->n_rd_entries, 1);
    if (rc == 0 && content.has_content) {
        struct vl_dirent *ent = &list->ents[list->n - 1];

        ent->has_content = true;
        ent->content_len = content.content_len;
        ent->content_off = content.content_off;
        *content_len = content.content_len;
        c->n++;
    } else if (content.has_content) {
        c->used -= content.content_len; /* not listed: give the room back */
    }
    return rc;
}


void
posix_fop_readdir(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_readdir_args *a = VL_ARGS(req, readdir);
    struct vl_dirent_list *list = &req->reply.entries;
    struct posix_fd_ctx *ctx;
    struct posix_rd_content content = {0};
    size_t budget = a->size;
    size_t used = 0;          /* bytes of records */
    size_t total = 0;         /* bytes of records and contents */
    size_t total_max;
    bool is_full = false;
    bool is_eof = false;
    bool is_root;
    bool is_reading = false;  /* pos and kpos follow the stream */
    char *buf = NULL;
    uint64_t pos = 0;
    off_t kpos = 0;
    int dfd;
    int rc;

    rc = posix_fd_os(xl, a->fd, &dfd);
    if (rc != 0)
        goto out;
    ctx = vl_fd_ctx(a->fd, xl);
    if (!ctx->is_dir) {
        rc = -ENOTDIR;
        goto out;
    }
    if (a->offset < 0) {
        rc = -EINVAL;
        goto out;
    }
    if (budget > POSIX_READDIR_BUDGET_MAX)
        budget = POSIX_READDIR_BUDGET_MAX;
    is_root = vl_gfid_is_root(&a->fd->inode->gfid);
    total_max = budget > POSIX_RD_CONTENT_BUDGET ? budget
                                                 : POSIX_RD_CONTENT_BUDGET;
    if (a->plus) {
        content.max = a->content_max;
        content.size = total_max;
    }
    buf = vl_malloc(xl, POSIX_DIRBUF_SIZE, POSIX_MT_DIRBUF);
    if (buf == NULL) {
        rc = -ENOMEM;
        goto out;
    }

    pthread_mutex_lock(&ctx->dir_lock);
    rc = posix_readdir_seek_locked(xl, ctx, dfd, (uint64_t)a->offset, buf);
    if (rc != 0)
        goto unlock;
    pos = ctx->dir_pos;
    kpos = ctx->dir_kpos;
    is_reading = true;
    while (!is_full) {
        ssize_t n = getdents64(dfd, buf, POSIX_DIRBUF_SIZE);

        if (n < 0) {
            rc = -errno;
            goto unlock;
        }
        if (n == 0) {
            is_eof = true;
            break;
        }
        for (ssize_t i = 0; i < n;) {
            const struct dirent64 *d = (const void *)(buf + i);
            size_t cost, len;

            i += d->d_reclen;
            if (is_root && strcmp(d->d_name, POSIX_META_DIR) == 0) {
                kpos = d->d_off;
                pos = posix_dir_cookie_new_locked(xl, ctx, kpos);
                continue;
            }
            cost = posix_dirent_cost(d->d_name, a->plus);
            /* Always make progress: the first entry goes in anyway. */
            if (list->n > 0
                && (used + cost > budget || total + cost > total_max)) {
                is_full = true;
                break;
            }
            rc = posix_readdir_add(xl, dfd, a->fd, is_root, d,
                                   (int64_t)ctx->dir_next, a->plus, list,
                                   &content, total + cost < total_max
                                                 ? total_max - total - cost
                                                 : 0,
                                   &len);
            if (rc < 0)
                goto unlock;
            kpos = d->d_off;
            pos = posix_dir_cookie_new_locked(xl, ctx, kpos);
            if (rc == 0) { /* 1: left out, costs nothing */
                used += cost;
                total += cost + len;
            }
            rc = 0;
        }
    }
unlock:
    /* Even after an error: the ring holds the cookies given up to pos,
     * and the next readdir, at any of them, lseeks there. */
    if (is_reading) {
        ctx->dir_pos = pos;
        ctx->dir_kpos = kpos;
    }
    pthread_mutex_unlock(&ctx->dir_lock);
    if (rc != 0) {
        vl_dirent_list_clear(list);
    } else {
        list->eof = is_eof;
        if (content.n > 0) {
            /* The entries' content_off point into it. */
            vl_buf_unref(req->reply.buf);
            req->reply.buf = content.buf;
            req->reply.data = content.buf->data;
            content.buf = NULL;
        }
    }
    vl_buf_unref(content.buf);
out:
    vl_free(buf);
    vl_unwind(req, rc);
}
