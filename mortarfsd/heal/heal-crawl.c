/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-crawl: the walk of `volume heal VOL full` over one brick of this
 * server, and the request file that asks for it.
 *
 * The walk reads the brick's tree directly on disk (the daemon runs on
 * the brick's server, as for the index) and yields every object but
 * .mortar/ with its GFID as storage/posix stores it (the xattr
 * trusted.mortar.gfid), a directory before its contents: the whole
 * listing of a directory is yielded, then its subdirectories are walked
 * one after the other. Before a directory is listed the walk yields
 * FSD_HEAL_CRAWL_ENTER, so that the caller can finish that directory's
 * heal first (its entry merge creates here the names other copies have).
 *
 * Depth is unlimited and descriptors are bounded: no path from the root
 * is ever built to open a directory (a deep tree would pass PATH_MAX).
 * The walk holds the O_PATH descriptor of the directory it works in (and
 * one more while listing it); a child is opened relative to it with
 * O_NOFOLLOW (a directory replaced by a symlink meanwhile is not
 * followed out of the brick); the way back up is "..", checked against
 * the device and inode the walk saw on the way down, and, if another
 * directory answers (ours was moved), the chain of names again from the
 * brick root, each step checked the same way. Memory: per level of the
 * current path its name and the names of its subdirectories not walked
 * yet.
 * A directory that cannot be opened or listed is reported
 * (FSD_HEAL_CRAWL_ERROR) and its subtree skipped; only an unreadable
 * brick root ends the walk with an error.
 * Hard links are yielded once per name (their heal is idempotent; a set
 * of seen inodes would grow with the brick).
 *
 * Position (heal-checkpoint.c keeps it across a daemon restart): a
 * directory's subdirectories are walked in strcmp order of their names,
 * so the chain of names from the root to the directory being listed
 * says what was walked before it: everything in an earlier sibling of
 * one of its ancestors, and the ancestors' listings. A walk sought to a
 * position lists the ancestors again without yielding them, skips the
 * subdirectories that sort before the chain at each level, and lists the
 * directory at the end of the chain again (its objects were perhaps
 * half-yielded; a heal is idempotent). A name of the chain gone since
 * resumes at the next sibling that sorts after it.
 *
 * The request (doc/self-heal.md): mortard writes RUN/heal/VOL.full (the
 * progress file's name with .full for .state) crash-safely and signals
 * the daemon; the file stays until a crawl of
 * every brick of this server finished, so a daemon killed mid-crawl
 * crawls again when restarted. Its contents are opaque here: the crawl
 * remembers them and, when done, takes the file away only if it still
 * holds them; a newer request (another `heal full` during the crawl)
 * stays and starts a new crawl.
 * Threads: a walk belongs to one thread; the request functions are pure
 * functions of the file.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "heal.h"

/* storage/posix's GFID key (xlators/storage/posix/posix.h). */
#define HEAL_GFID_XATTR "trusted.mortar.gfid"
#define HEAL_META_DIR ".mortar"
#define HEAL_TAKEN_SUFFIX ".taken"

/* getxattrat(2) (Linux 6.13) reads an xattr of (dirfd, name) without a
 * /proc/self/fd path; older kernels answer ENOSYS and the path is used. */
#if !defined(SYS_getxattrat) && (defined(__x86_64__) || defined(__aarch64__))
#define SYS_getxattrat 464
#endif

/* One directory of the current path. */
struct heal_crawl_frame {
    char *name;       /* owned; its name in its parent ("" for the root) */
    dev_t dev;        /* what it was when opened, to check a re-open */
    ino_t ino;
    char **subdirs;   /* owned; subdirectories listed, not walked yet */
    size_t n_subdirs;
    size_t cap_subdirs;
    size_t next;      /* first of subdirs not walked yet */
};

enum heal_crawl_step {
    HEAL_CRAWL_START,   /* the root not yielded yet */
    HEAL_CRAWL_ROOT,    /* the root yielded; its ENTER next */
    HEAL_CRAWL_LIST,    /* ENTER yielded for the top frame: list it */
    HEAL_CRAWL_LISTING, /* listing the top frame */
    HEAL_CRAWL_DESCEND, /* walking the top frame's subdirectories */
    HEAL_CRAWL_DONE,
};

struct fsd_heal_crawl {
    char *brick;                     /* owned; the brick directory */
    struct heal_crawl_frame *frames; /* owned; [0] the root, [n-1] top */
    size_t n_frames;
    size_t cap_frames;
    int top_fd;                      /* O_PATH fd of the top frame */
    DIR *listing;                    /* owned; the top frame's listing */
    enum heal_crawl_step step;
    bool is_seeking;                 /* listing only for subdirectories */
    char *err_path;                  /* owned; the last ERROR's path */
};


int
fsd_heal_crawl_new(const char *brick_path, struct fsd_heal_crawl **out)
{
    struct fsd_heal_crawl *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return -ENOMEM;
    c->brick = strdup(brick_path);
    if (c->brick == NULL) {
        free(c);
        return -ENOMEM;
    }
    c->top_fd = -1;
    c->step = HEAL_CRAWL_START;
    *out = c;
    return 0;
}


static void
heal_crawl_frame_clear(struct heal_crawl_frame *f)
{
    for (size_t i = f->next; i < f->n_subdirs; i++)
        free(f->subdirs[i]);
    free(f->subdirs);
    free(f->name);
    memset(f, 0, sizeof(*f));
}


void
fsd_heal_crawl_free(struct fsd_heal_crawl *c)
{
    if (c == NULL)
        return;
    if (c->listing != NULL)
        closedir(c->listing);
    if (c->top_fd >= 0)
        close(c->top_fd);
    for (size_t i = 0; i < c->n_frames; i++)
        heal_crawl_frame_clear(&c->frames[i]);
    free(c->frames);
    free(c->err_path);
    free(c->brick);
    free(c);
}


/* The top frame's path relative to the brick ("" for the root), with
 * name appended when not NULL; for reports. NULL without memory. */
static char *
heal_crawl_path(const struct fsd_heal_crawl *c, const char *name)
{
    size_t len = 1;
    char *p;

    for (size_t i = 1; i < c->n_frames; i++)
        len += strlen(c->frames[i].name) + 1;
    if (name != NULL)
        len += strlen(name) + 1;
    p = malloc(len);
    if (p == NULL)
        return NULL;
    p[0] = '\0';
    for (size_t i = 1; i < c->n_frames; i++) {
        strcat(p, i > 1 ? "/" : "");
        strcat(p, c->frames[i].name);
    }
    if (name != NULL) {
        strcat(p, c->n_frames > 1 ? "/" : "");
        strcat(p, name);
    }
    return p;
}


/* Fills item as an ERROR about name under the top frame (or the top
 * frame itself when name is NULL). */
static int
heal_crawl_error(struct fsd_heal_crawl *c, const char *name, int error,
                 struct fsd_heal_crawl_item *item)
{
    free(c->err_path);
    c->err_path = heal_crawl_path(c, name);
    item->error = error;
    item->path = c->err_path != NULL ? c->err_path : "?";
    return FSD_HEAL_CRAWL_ERROR;
}


/* The GFID of name in dirfd (not followed); false when it has none. */
static bool
heal_crawl_gfid(int dirfd, const char *name, vl_gfid_t *out /* OUT */)
{
    char path[64 + NAME_MAX];
    ssize_t n = -1;

    if (dirfd == AT_FDCWD) /* the root, by its absolute path */
        return lgetxattr(name, HEAL_GFID_XATTR, out->bytes,
                         sizeof(out->bytes)) == (ssize_t)sizeof(out->bytes);
#ifdef SYS_getxattrat
    struct {
        uint64_t value;
        uint32_t size;
        uint32_t flags;
    } xa = {.value = (uint64_t)(uintptr_t)out->bytes,
            .size = sizeof(out->bytes)};

    n = syscall(SYS_getxattrat, dirfd, name, AT_SYMLINK_NOFOLLOW,
                HEAL_GFID_XATTR, &xa, sizeof(xa));
    if (n >= 0 || errno != ENOSYS)
        return n == (ssize_t)sizeof(out->bytes);
#endif
    snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
    n = lgetxattr(path, HEAL_GFID_XATTR, out->bytes, sizeof(out->bytes));
    return n == (ssize_t)sizeof(out->bytes);
}


static int
heal_crawl_push(struct fsd_heal_crawl *c, const char *name,
                const struct stat *st)
{
    struct heal_crawl_frame *f;

    if (c->n_frames == c->cap_frames) {
        size_t cap = c->cap_frames == 0 ? 16 : c->cap_frames * 2;
        struct heal_crawl_frame *v = realloc(c->frames, cap * sizeof(*v));

        if (v == NULL)
            return -ENOMEM;
        c->frames = v;
        c->cap_frames = cap;
    }
    f = &c->frames[c->n_frames];
    memset(f, 0, sizeof(*f));
    f->name = strdup(name);
    if (f->name == NULL)
        return -ENOMEM;
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    c->n_frames++;
    return 0;
}


static int
heal_crawl_subdir_add(struct heal_crawl_frame *f, const char *name)
{
    char *copy;

    if (f->n_subdirs == f->cap_subdirs) {
        size_t cap = f->cap_subdirs == 0 ? 16 : f->cap_subdirs * 2;
        char **v = realloc(f->subdirs, cap * sizeof(*v));

        if (v == NULL)
            return -ENOMEM;
        f->subdirs = v;
        f->cap_subdirs = cap;
    }
    copy = strdup(name);
    if (copy == NULL)
        return -ENOMEM;
    f->subdirs[f->n_subdirs++] = copy;
    return 0;
}


/* Opens name under dirfd as an O_PATH directory, not following a
 * symlink, and checks it is the directory (dev, ino) when want is not
 * NULL. The fd, or -errno (-ESTALE: another directory answers). */
static int
heal_crawl_open_dir(int dirfd, const char *name,
                    const struct heal_crawl_frame *want,
                    struct stat *st /* OUT */)
{
    int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW
                                 | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    if (fstat(fd, st) != 0) {
        int rc = -errno;

        close(fd);
        return rc;
    }
    if (want != NULL && (st->st_dev != want->dev || st->st_ino != want->ino)) {
        close(fd);
        return -ESTALE;
    }
    return fd;
}


/* Re-opens the top frame after its child was walked: ".." if it is still
 * the same directory, else the chain of names from the root. 0 with
 * c->top_fd replaced, or -errno (the directory was moved or removed). */
static int
heal_crawl_reopen_top(struct fsd_heal_crawl *c, int child_fd)
{
    const struct heal_crawl_frame *top = &c->frames[c->n_frames - 1];
    struct stat st;
    int fd = child_fd >= 0 ? heal_crawl_open_dir(child_fd, "..", top, &st)
                           : -ESTALE;

    if (fd == -ESTALE || fd == -ENOENT) {
        fd = heal_crawl_open_dir(AT_FDCWD, c->brick, &c->frames[0], &st);
        for (size_t i = 1; fd >= 0 && i < c->n_frames; i++) {
            int next = heal_crawl_open_dir(fd, c->frames[i].name,
                                           &c->frames[i], &st);

            close(fd);
            fd = next;
        }
    }
    if (fd < 0)
        return fd;
    c->top_fd = fd;
    return 0;
}


/* Done with the top frame: pops it and goes back to its parent. Returns
 * 0, 1 when the root was popped (the walk is over), or an ERROR item
 * when the parent cannot be reached again (its remaining subdirectories
 * are skipped). */
static int
heal_crawl_pop(struct fsd_heal_crawl *c, struct fsd_heal_crawl_item *item)
{
    int child_fd = c->top_fd;
    int rc;

    heal_crawl_frame_clear(&c->frames[--c->n_frames]);
    c->top_fd = -1;
    if (c->n_frames == 0) {
        if (child_fd >= 0)
            close(child_fd);
        return 1;
    }
    rc = heal_crawl_reopen_top(c, child_fd);
    if (child_fd >= 0)
        close(child_fd);
    if (rc == 0)
        return 0;
    /* Skip the rest of the parent: report it, and pop it next time
     * without an fd to come back from (the grandparent's chain is
     * walked from the root). */
    {
        struct heal_crawl_frame *f = &c->frames[c->n_frames - 1];

        for (size_t i = f->next; i < f->n_subdirs; i++)
            free(f->subdirs[i]);
        f->next = f->n_subdirs = 0;
    }
    c->top_fd = -1;
    return heal_crawl_error(c, NULL, rc, item);
}


/* One listed name of the top frame: an OBJECT item, or 0 to skip it. */
static int
heal_crawl_entry(struct fsd_heal_crawl *c, const struct dirent *de,
                 struct fsd_heal_crawl_item *item)
{
    int dfd = dirfd(c->listing);
    bool is_dir = de->d_type == DT_DIR;
    int rc;

    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
        return 0;
    if (c->n_frames == 1 && strcmp(de->d_name, HEAL_META_DIR) == 0)
        return 0;
    if (de->d_type == DT_UNKNOWN) {
        struct stat st;

        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            return 0; /* gone since it was listed */
        is_dir = S_ISDIR(st.st_mode);
    }
    if (is_dir) {
        rc = heal_crawl_subdir_add(&c->frames[c->n_frames - 1], de->d_name);
        if (rc != 0)
            return rc;
    }
    if (c->is_seeking)
        return 0;
    memset(&item->gfid, 0, sizeof(item->gfid));
    item->has_gfid = heal_crawl_gfid(dfd, de->d_name, &item->gfid);
    item->is_dir = is_dir;
    snprintf(item->name, sizeof(item->name), "%s", de->d_name);
    item->depth = c->n_frames;
    return FSD_HEAL_CRAWL_OBJECT;
}


static int
heal_crawl_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}


/* The next name of the top frame's listing, or the end of it. */
static int
heal_crawl_list_next(struct fsd_heal_crawl *c,
                     struct fsd_heal_crawl_item *item)
{
    for (;;) {
        struct dirent *de;
        int rc;

        errno = 0;
        de = readdir(c->listing);
        if (de == NULL) {
            struct heal_crawl_frame *f = &c->frames[c->n_frames - 1];

            rc = errno;
            closedir(c->listing);
            c->listing = NULL;
            c->step = HEAL_CRAWL_DESCEND;
            if (f->n_subdirs - f->next > 1) /* subdirs is NULL if none */
                qsort(f->subdirs + f->next, f->n_subdirs - f->next,
                      sizeof(*f->subdirs), heal_crawl_name_cmp);
            if (rc != 0)
                return heal_crawl_error(c, NULL, -rc, item);
            return 0;
        }
        rc = heal_crawl_entry(c, de, item);
        if (rc != 0)
            return rc;
    }
}


/* Starts listing the top frame. 0, or an ERROR item (its subtree is
 * skipped). */
static int
heal_crawl_list_start(struct fsd_heal_crawl *c,
                      struct fsd_heal_crawl_item *item)
{
    int fd = openat(c->top_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    c->step = HEAL_CRAWL_DESCEND;
    if (fd < 0)
        return heal_crawl_error(c, NULL, -errno, item);
    c->listing = fdopendir(fd);
    if (c->listing == NULL) {
        int rc = -errno;

        close(fd);
        return heal_crawl_error(c, NULL, rc, item);
    }
    c->step = HEAL_CRAWL_LISTING;
    return 0;
}


/* The next subdirectory of the top frame: opened and pushed (an ENTER
 * item), or popped back up. */
static int
heal_crawl_descend(struct fsd_heal_crawl *c, struct fsd_heal_crawl_item *item)
{
    for (;;) {
        struct heal_crawl_frame *f = &c->frames[c->n_frames - 1];
        struct stat st;
        char *name;
        int fd, rc;

        if (f->next == f->n_subdirs || c->top_fd < 0) {
            rc = heal_crawl_pop(c, item);
            if (rc == 1) {
                c->step = HEAL_CRAWL_DONE;
                return FSD_HEAL_CRAWL_END;
            }
            if (rc != 0)
                return rc;
            continue;
        }
        name = f->subdirs[f->next];
        f->subdirs[f->next++] = NULL;
        fd = heal_crawl_open_dir(c->top_fd, name, NULL, &st);
        if (fd < 0) {
            rc = heal_crawl_error(c, name, fd, item);
            free(name);
            return rc;
        }
        rc = heal_crawl_push(c, name, &st);
        if (rc != 0) {
            close(fd);
            free(name);
            return rc;
        }
        close(c->top_fd);
        c->top_fd = fd;
        snprintf(item->name, sizeof(item->name), "%s", name);
        free(name);
        item->depth = c->n_frames - 1;
        c->step = HEAL_CRAWL_LIST;
        return FSD_HEAL_CRAWL_ENTER;
    }
}


/* The brick root: opened, pushed and yielded as an OBJECT. */
static int
heal_crawl_root(struct fsd_heal_crawl *c, struct fsd_heal_crawl_item *item)
{
    struct stat st;
    int fd = heal_crawl_open_dir(AT_FDCWD, c->brick, NULL, &st);
    int rc;

    if (fd < 0)
        return fd;
    rc = heal_crawl_push(c, "", &st);
    if (rc != 0) {
        close(fd);
        return rc;
    }
    c->top_fd = fd;
    item->has_gfid = heal_crawl_gfid(AT_FDCWD, c->brick, &item->gfid);
    item->is_dir = true;
    item->depth = 0;
    c->step = HEAL_CRAWL_ROOT;
    return FSD_HEAL_CRAWL_OBJECT;
}


int
fsd_heal_crawl_next(struct fsd_heal_crawl *c,
                    struct fsd_heal_crawl_item *item /* OUT */)
{
    int rc = 0;

    memset(item, 0, sizeof(*item));
    while (rc == 0) {
        switch (c->step) {
        case HEAL_CRAWL_START:
            return heal_crawl_root(c, item);
        case HEAL_CRAWL_ROOT:
            c->step = HEAL_CRAWL_LIST;
            item->is_dir = true;
            return FSD_HEAL_CRAWL_ENTER;
        case HEAL_CRAWL_LIST:
            rc = heal_crawl_list_start(c, item);
            break;
        case HEAL_CRAWL_LISTING:
            rc = heal_crawl_list_next(c, item);
            break;
        case HEAL_CRAWL_DESCEND:
            rc = heal_crawl_descend(c, item);
            break;
        case HEAL_CRAWL_DONE:
            return FSD_HEAL_CRAWL_END;
        }
    }
    return rc;
}


char *
fsd_heal_crawl_position(const struct fsd_heal_crawl *c)
{
    size_t len = 1;
    char *p;

    if (c->n_frames == 0 || c->step == HEAL_CRAWL_ROOT
        || c->step == HEAL_CRAWL_DONE)
        return NULL;
    for (size_t i = 1; i < c->n_frames; i++)
        len += strlen(c->frames[i].name) + 1;
    p = malloc(len);
    if (p == NULL)
        return NULL;
    p[0] = '\0';
    for (size_t i = 1; i < c->n_frames; i++) {
        strcat(p, i > 1 ? "/" : "");
        strcat(p, c->frames[i].name);
    }
    return p;
}


/* Lists the top frame for its subdirectories only (sorted, as a walk
 * does) and skips those that sort before name. 0 with the frame's next
 * subdirectory the one named name, 1 when there is none so named (the
 * rest sort after it), or -errno. */
static int
heal_crawl_seek_level(struct fsd_heal_crawl *c, const char *name)
{
    struct fsd_heal_crawl_item item;
    struct heal_crawl_frame *f;
    int rc;

    c->step = HEAL_CRAWL_LIST;
    rc = heal_crawl_list_start(c, &item);
    while (rc == 0 && c->step == HEAL_CRAWL_LISTING)
        rc = heal_crawl_list_next(c, &item);
    if (rc == FSD_HEAL_CRAWL_ERROR)
        return item.error;
    if (rc != 0)
        return rc;
    f = &c->frames[c->n_frames - 1];
    while (f->next < f->n_subdirs && strcmp(f->subdirs[f->next], name) < 0) {
        free(f->subdirs[f->next]);
        f->subdirs[f->next++] = NULL;
    }
    return f->next < f->n_subdirs && strcmp(f->subdirs[f->next], name) == 0
               ? 0
               : 1;
}


int
fsd_heal_crawl_seek(struct fsd_heal_crawl *c, const char *position)
{
    struct fsd_heal_crawl_item item;
    char *chain, *name, *save = NULL;
    int rc;

    if (c->step != HEAL_CRAWL_START)
        return -EINVAL;
    chain = strdup(position);
    if (chain == NULL)
        return -ENOMEM;
    rc = heal_crawl_root(c, &item);
    if (rc < 0)
        goto out;
    rc = 0;
    c->is_seeking = true;
    for (name = strtok_r(chain, "/", &save); name != NULL;
         name = strtok_r(NULL, "/", &save)) {
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0
            || strlen(name) > NAME_MAX) {
            rc = -EINVAL;
            break;
        }
        rc = heal_crawl_seek_level(c, name);
        if (rc != 0)
            break;
        /* The next subdirectory is name: entered as the walk would (the
         * ENTER item is not wanted: its heal was done before). */
        rc = heal_crawl_descend(c, &item);
        if (rc != FSD_HEAL_CRAWL_ENTER)
            break;
        rc = 0;
    }
    c->is_seeking = false;
    if (rc == 1 || rc == FSD_HEAL_CRAWL_ERROR) {
        /* Gone since (or it cannot be opened): its later siblings next,
         * which is where the walk would be after it. */
        c->step = HEAL_CRAWL_DESCEND;
        rc = 0;
    } else if (rc == 0) {
        c->step = HEAL_CRAWL_LIST;
    }
out:
    free(chain);
    return rc;
}


void
fsd_heal_full_path(const char *state_path, char *buf, size_t len)
{
    size_t n = strlen(state_path);
    const char *ext = ".state";

    if (n > strlen(ext) && strcmp(state_path + n - strlen(ext), ext) == 0)
        n -= strlen(ext);
    snprintf(buf, len, "%.*s.full", (int)n, state_path);
}


/* Reads up to len - 1 bytes of path into buf (NUL-terminated): its
 * length, or -errno. */
static ssize_t
heal_request_load(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -errno;
    n = read(fd, buf, len - 1);
    if (n < 0)
        n = -errno;
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}


int
fsd_heal_full_request_read(const char *path,
                           char *token /* OUT, FSD_HEAL_TOKEN_MAX */)
{
    char taken[FSD_HEAL_PATH_MAX + 32];
    ssize_t n;

    n = heal_request_load(path, token, FSD_HEAL_TOKEN_MAX);
    if (n != -ENOENT)
        return n < 0 ? (int)n : 1;
    /* A crash while a finished crawl checked the request: put it back,
     * the crawl runs again. */
    snprintf(taken, sizeof(taken), "%s" HEAL_TAKEN_SUFFIX, path);
    if (rename(taken, path) != 0)
        return errno == ENOENT ? 0 : -errno;
    n = heal_request_load(path, token, FSD_HEAL_TOKEN_MAX);
    return n < 0 ? (n == -ENOENT ? 0 : (int)n) : 1;
}


int
fsd_heal_full_request_done(const char *path, const char *token)
{
    char taken[FSD_HEAL_PATH_MAX + 32], now[FSD_HEAL_TOKEN_MAX];
    ssize_t n;
    int rc = 0;

    snprintf(taken, sizeof(taken), "%s" HEAL_TAKEN_SUFFIX, path);
    /* Taken aside first, so that a request renamed into place from now
     * on is a new file left alone. */
    if (rename(path, taken) != 0)
        return errno == ENOENT ? 0 : -errno;
    n = heal_request_load(taken, now, sizeof(now));
    if (n < 0)
        return (int)n;
    if (strcmp(now, token) != 0) {
        /* Rewritten during the crawl: it asks for another. */
        if (link(taken, path) != 0 && errno != EEXIST)
            rc = -errno;
        else
            rc = 1;
    }
    if (rc >= 0 && unlink(taken) != 0)
        rc = -errno;
    return rc;
}
