/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-heal-crawl: the walk of `heal full` (heal-crawl.c) over trees on
 * the local disk: every object once per name with its GFID, a directory
 * before its contents and its ENTER before its listing, .mortar skipped,
 * symlinks not followed, hard links under each name; a directory that
 * cannot be opened reported and skipped, not fatal; a directory moved
 * away while walked (the way back found from the root); a tree deeper
 * than PATH_MAX walked with a bounded number of descriptors. Then the
 * request file (read, done, rewritten meanwhile, a crash's leftover) and
 * the crawl keys of the progress file. Then positions: a walk sought to
 * where another stopped goes on exactly as that one would have.
 * GFIDs are trusted.* xattrs: those checks need root (CI runs as root)
 * and are left out otherwise.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "mortarfsd/heal/heal.h"

#define T_GFID_XATTR "trusted.mortar.gfid"
#define T_MAX_SEEN 256

/* What a walk yielded, with each object's path rebuilt from the ENTERs. */
struct t_walk {
    char paths[T_MAX_SEEN][512];  /* OBJECTs: relative path, "" root */
    vl_gfid_t gfids[T_MAX_SEEN];
    bool has_gfid[T_MAX_SEEN];
    bool is_dir[T_MAX_SEEN];
    size_t n;
    char entered[T_MAX_SEEN][512]; /* ENTERs, in order */
    size_t n_entered;
    char errors[T_MAX_SEEN][512];  /* ERRORs: path */
    int error_codes[T_MAX_SEEN];
    size_t n_errors;
    char stack[64][512];           /* path of the directory at depth d */
};


static void
t_sh(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    assert_int_equal(system(buf), 0);
}


static bool
t_is_root(void)
{
    return geteuid() == 0;
}


/* Gives path the GFID ...-<n> (root only). */
static void
t_gfid(const char *path, unsigned n)
{
    vl_gfid_t g;
    char s[VL_GFID_STR_LEN];

    if (!t_is_root())
        return;
    snprintf(s, sizeof(s), "0a1b2c3d-0000-4000-8000-%012u", n);
    assert_int_equal(vl_gfid_parse(s, &g), 0);
    assert_int_equal(lsetxattr(path, T_GFID_XATTR, g.bytes, sizeof(g.bytes),
                               0), 0);
}


static void
t_brick(char *dir /* 64 bytes */)
{
    snprintf(dir, 64, "/tmp/test-heal-crawl.XXXXXX");
    assert_non_null(mkdtemp(dir));
}


/* Handles one step of the walk into w. */
static void
t_record(struct t_walk *w, int kind, const struct fsd_heal_crawl_item *it)
{
    char tmp[512];

    if (kind == FSD_HEAL_CRAWL_OBJECT) {
        assert_true(w->n < T_MAX_SEEN);
        if (it->depth == 0)
            tmp[0] = '\0';
        else if (it->depth == 1)
            snprintf(tmp, sizeof(tmp), "%s", it->name);
        else
            snprintf(tmp, sizeof(tmp), "%.200s/%.200s",
                     w->stack[it->depth - 1], it->name);
        memcpy(w->paths[w->n], tmp, sizeof(tmp));
        w->gfids[w->n] = it->gfid;
        w->has_gfid[w->n] = it->has_gfid;
        w->is_dir[w->n] = it->is_dir;
        w->n++;
    } else if (kind == FSD_HEAL_CRAWL_ENTER) {
        assert_true(it->depth < 64);
        if (it->depth <= 1)
            snprintf(tmp, sizeof(tmp), "%s", it->name);
        else
            snprintf(tmp, sizeof(tmp), "%.200s/%.200s",
                     w->stack[it->depth - 1], it->name);
        memcpy(w->stack[it->depth], tmp, sizeof(tmp));
        memcpy(w->entered[w->n_entered++], tmp, sizeof(tmp));
    } else if (kind == FSD_HEAL_CRAWL_ERROR) {
        snprintf(w->errors[w->n_errors], 512, "%s", it->path);
        w->error_codes[w->n_errors++] = it->error;
    }
}


/* Walks c to its end into w. */
static void
t_walk_rest(struct fsd_heal_crawl *c, struct t_walk *w)
{
    struct fsd_heal_crawl_item it;
    int kind;

    while ((kind = fsd_heal_crawl_next(c, &it)) != FSD_HEAL_CRAWL_END) {
        assert_true(kind > 0);
        t_record(w, kind, &it);
    }
    /* The end stays the end. */
    assert_int_equal(fsd_heal_crawl_next(c, &it), FSD_HEAL_CRAWL_END);
}


static ssize_t
t_find(const struct t_walk *w, const char *path)
{
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->paths[i], path) == 0)
            return (ssize_t)i;
    return -1;
}


static ssize_t
t_find_entered(const struct t_walk *w, const char *path)
{
    for (size_t i = 0; i < w->n_entered; i++)
        if (strcmp(w->entered[i], path) == 0)
            return (ssize_t)i;
    return -1;
}


static void
test_walk_tree(void **state)
{
    static const char *const expect[] = {
        "", "a", "a/b", "a/b/c", "a/b/c/deep", "a/f1", "a/hard", "top",
        "link", "dlink", "empty",
    };
    struct t_walk *w = calloc(1, sizeof(*w));
    struct fsd_heal_crawl *c = NULL;
    char dir[64], p[256];
    ssize_t top, hard, a, ab;

    (void)state;
    assert_non_null(w);
    t_brick(dir);
    t_sh("mkdir -p %s/a/b/c %s/empty %s/.mortar/handles/00/00", dir, dir,
         dir);
    t_sh("echo x > %s/a/b/c/deep && echo y > %s/a/f1 && echo z > %s/top",
         dir, dir, dir);
    t_sh("echo h > %s/.mortar/handles/00/00/hidden", dir);
    t_sh("ln -s a/f1 %s/link && ln -s a %s/dlink && ln %s/top %s/a/hard",
         dir, dir, dir, dir);
    t_gfid(dir, 1);
    for (size_t i = 1; i < VL_ARRAY_SIZE(expect); i++) {
        if (strcmp(expect[i], "a/hard") == 0)
            continue; /* the same inode as top */
        snprintf(p, sizeof(p), "%s/%s", dir, expect[i]);
        t_gfid(p, (unsigned)i + 1);
    }

    assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
    t_walk_rest(c, w);
    fsd_heal_crawl_free(c);

    /* Every object once, nothing of .mortar. */
    assert_int_equal(w->n, VL_ARRAY_SIZE(expect));
    for (size_t i = 0; i < VL_ARRAY_SIZE(expect); i++)
        assert_true(t_find(w, expect[i]) >= 0);
    for (size_t i = 0; i < w->n; i++)
        assert_null(strstr(w->paths[i], ".mortar"));
    assert_int_equal(w->n_errors, 0);
    /* The root first, a directory, ENTERed once, after its OBJECT... */
    assert_string_equal(w->paths[0], "");
    assert_true(w->is_dir[0]);
    assert_string_equal(w->entered[0], "");
    assert_int_equal(w->n_entered, 5); /* "", a, a/b, a/b/c, empty */
    a = t_find(w, "a");
    ab = t_find(w, "a/b");
    assert_true(w->is_dir[a] && w->is_dir[ab]);
    assert_true(t_find_entered(w, "a") > 0);
    assert_true(t_find_entered(w, "a/b") > t_find_entered(w, "a"));
    assert_true(t_find_entered(w, "a/b/c") > t_find_entered(w, "a/b"));
    /* ... and its contents after it. */
    assert_true(t_find(w, "a/b/c/deep") > t_find(w, "a/b/c"));
    assert_true(t_find(w, "a/f1") > a);
    /* Symlinks are objects, never walked into. */
    assert_false(w->is_dir[t_find(w, "dlink")]);
    assert_false(w->is_dir[t_find(w, "link")]);
    assert_int_equal(t_find_entered(w, "dlink"), -1);
    /* A hard link: the same object under both names. */
    top = t_find(w, "top");
    hard = t_find(w, "a/hard");
    if (t_is_root()) {
        vl_gfid_t root;
        char s[VL_GFID_STR_LEN];

        for (size_t i = 0; i < w->n; i++)
            assert_true(w->has_gfid[i]);
        assert_true(vl_gfid_equal(&w->gfids[top], &w->gfids[hard]));
        assert_false(vl_gfid_equal(&w->gfids[top], &w->gfids[a]));
        snprintf(s, sizeof(s), "0a1b2c3d-0000-4000-8000-%012u", 1);
        assert_int_equal(vl_gfid_parse(s, &root), 0);
        assert_true(vl_gfid_equal(&w->gfids[0], &root));
    }
    t_sh("rm -rf %s", dir);
    free(w);
}


/* Walks until the first ENTER below the root. */
static void
t_walk_to_enter(struct fsd_heal_crawl *c, struct t_walk *w, size_t depth)
{
    struct fsd_heal_crawl_item it;
    int kind;

    for (;;) {
        kind = fsd_heal_crawl_next(c, &it);
        assert_true(kind > 0 && kind != FSD_HEAL_CRAWL_END);
        t_record(w, kind, &it);
        if (kind == FSD_HEAL_CRAWL_ENTER && it.depth == depth)
            return;
    }
}


static void
test_walk_unreadable(void **state)
{
    static const char *const dirs[] = {"x", "y", "z"};
    struct t_walk *w = calloc(1, sizeof(*w));
    struct fsd_heal_crawl *c = NULL;
    const char *gone = NULL, *locked = NULL;
    char dir[64];

    (void)state;
    assert_non_null(w);
    t_brick(dir);
    for (size_t i = 0; i < 3; i++)
        t_sh("mkdir -p %s/%s/in && echo f > %s/%s/in/f", dir, dirs[i], dir,
             dirs[i]);
    assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
    t_walk_to_enter(c, w, 1);
    /* The root listed; one of x, y, z entered. Another, not walked yet,
     * becomes a file (as root can open anything, that is what fails to
     * open as a directory); without root, the third is made
     * unreadable too. */
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(w->entered[1], dirs[i]) == 0)
            continue;
        if (gone == NULL)
            gone = dirs[i];
        else
            locked = dirs[i];
    }
    t_sh("rm -rf %s/%s && echo file > %s/%s", dir, gone, dir, gone);
    if (!t_is_root())
        t_sh("chmod 000 %s/%s", dir, locked);
    t_walk_rest(c, w);
    fsd_heal_crawl_free(c);

    assert_true(w->n_errors >= 1);
    assert_string_equal(w->errors[0], gone);
    assert_int_equal(w->error_codes[0], -ENOTDIR);
    if (!t_is_root()) {
        assert_int_equal(w->n_errors, 2);
        assert_string_equal(w->errors[1], locked);
        assert_int_equal(w->error_codes[1], -EACCES);
        t_sh("chmod 755 %s/%s", dir, locked);
    } else {
        assert_int_equal(w->n_errors, 1);
        assert_true(t_find(w, "x/in/f") >= 0 || strcmp(gone, "x") == 0);
    }
    /* The walk went on: the entered one's contents, and the third's. */
    {
        char p[600];

        snprintf(p, sizeof(p), "%s/in/f", w->entered[1]);
        assert_true(t_find(w, p) >= 0);
        if (t_is_root()) {
            snprintf(p, sizeof(p), "%s/in/f", locked);
            assert_true(t_find(w, p) >= 0);
        }
    }
    t_sh("rm -rf %s", dir);
    free(w);
}


/* A directory moved away while walked: ".." leads elsewhere, the parent
 * is found again from the root and its other subdirectory walked. */
static void
test_walk_moved(void **state)
{
    struct t_walk *w = calloc(1, sizeof(*w));
    struct fsd_heal_crawl *c = NULL;
    const char *moved, *other;
    char dir[64];

    (void)state;
    assert_non_null(w);
    t_brick(dir);
    t_sh("mkdir -p %s/p/q/in %s/p/r/in %s/elsewhere", dir, dir, dir);
    t_sh("echo 1 > %s/p/q/in/f && echo 2 > %s/p/r/in/f", dir, dir);
    assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
    t_walk_to_enter(c, w, 2);
    moved = strcmp(w->entered[w->n_entered - 1], "p/q") == 0 ? "q" : "r";
    other = moved[0] == 'q' ? "r" : "q";
    t_sh("mv %s/p/%s %s/elsewhere/", dir, moved, dir);
    t_walk_rest(c, w);
    fsd_heal_crawl_free(c);
    {
        char p[600];

        snprintf(p, sizeof(p), "p/%s/in/f", other);
        assert_true(t_find(w, p) >= 0);
        snprintf(p, sizeof(p), "p/%s", other);
        assert_true(t_find_entered(w, p) >= 0);
    }
    assert_int_equal(w->n_errors, 0);
    t_sh("rm -rf %s", dir);
    free(w);
}


static int
t_count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;

    assert_non_null(d);
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}


/* 300 levels of 200-character names: 60 KB of path, far past PATH_MAX;
 * walked to the bottom, with the same few descriptors at every level. */
static void
test_walk_deep(void **state)
{
    enum { LEVELS = 300 };
    struct fsd_heal_crawl *c = NULL;
    struct fsd_heal_crawl_item it;
    char dir[64], name[201];
    int fd, base, kind, max_fds = 0;
    size_t deepest = 0, n_files = 0;

    (void)state;
    t_brick(dir);
    memset(name, 'n', 200);
    name[200] = '\0';
    fd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    for (int i = 0; i < LEVELS; i++) {
        int next;

        assert_int_equal(mkdirat(fd, name, 0755), 0);
        next = openat(fd, name, O_RDONLY | O_DIRECTORY);
        assert_true(next >= 0);
        close(fd);
        fd = next;
    }
    close(openat(fd, "bottom", O_WRONLY | O_CREAT, 0644));
    close(fd);

    base = t_count_fds();
    assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
    while ((kind = fsd_heal_crawl_next(c, &it)) != FSD_HEAL_CRAWL_END) {
        int n = t_count_fds() - base;

        assert_int_not_equal(kind, FSD_HEAL_CRAWL_ERROR);
        assert_true(kind > 0);
        if (n > max_fds)
            max_fds = n;
        if (kind == FSD_HEAL_CRAWL_OBJECT && it.depth > deepest)
            deepest = it.depth;
        if (kind == FSD_HEAL_CRAWL_OBJECT && strcmp(it.name, "bottom") == 0)
            n_files++;
    }
    fsd_heal_crawl_free(c);
    assert_int_equal(n_files, 1);
    assert_int_equal(deepest, LEVELS + 1);
    assert_true(max_fds <= 2);
    assert_int_equal(t_count_fds(), base);
    t_sh("rm -rf %s", dir);
}


static void
test_walk_no_brick(void **state)
{
    struct fsd_heal_crawl *c = NULL;
    struct fsd_heal_crawl_item it;

    (void)state;
    assert_int_equal(fsd_heal_crawl_new("/nonexistent/brick", &c), 0);
    assert_int_equal(fsd_heal_crawl_next(c, &it), -ENOENT);
    fsd_heal_crawl_free(c);
}


static void
t_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}


static void
test_request(void **state)
{
    char dir[64], st[128], full[160], taken[192];
    char token[FSD_HEAL_TOKEN_MAX];
    char text[FSD_HEAL_TOKEN_MAX];
    FILE *f;

    (void)state;
    t_brick(dir);
    snprintf(st, sizeof(st), "%s/v.state", dir);
    fsd_heal_full_path(st, full, sizeof(full));
    snprintf(taken, sizeof(taken), "%s.taken", full);
    {
        char want[160];

        snprintf(want, sizeof(want), "%s/v.full", dir);
        assert_string_equal(full, want);
    }
    /* None. */
    assert_int_equal(fsd_heal_full_request_read(full, token), 0);
    /* One, served. */
    t_write(full, "requested=1\n");
    assert_int_equal(fsd_heal_full_request_read(full, token), 1);
    assert_string_equal(token, "requested=1\n");
    assert_int_equal(fsd_heal_full_request_done(full, token), 0);
    assert_int_equal(access(full, F_OK), -1);
    assert_int_equal(access(taken, F_OK), -1);
    /* Asked again during the crawl: stays, and says so. */
    t_write(full, "requested=2\n");
    assert_int_equal(fsd_heal_full_request_read(full, token), 1);
    t_write(full, "requested=3\n");
    assert_int_equal(fsd_heal_full_request_done(full, token), 1);
    f = fopen(full, "r");
    assert_non_null(f);
    assert_non_null(fgets(text, sizeof(text), f));
    fclose(f);
    assert_string_equal(text, "requested=3\n");
    assert_int_equal(access(taken, F_OK), -1);
    /* A crash left it taken aside: it is put back. */
    assert_int_equal(rename(full, taken), 0);
    assert_int_equal(fsd_heal_full_request_read(full, token), 1);
    assert_string_equal(token, "requested=3\n");
    assert_int_equal(access(full, F_OK), 0);
    /* Done with it gone already: nothing to do. */
    assert_int_equal(unlink(full), 0);
    assert_int_equal(fsd_heal_full_request_done(full, token), 0);
    t_sh("rm -rf %s", dir);
}


static void
test_state_crawl_keys(void **state)
{
    struct fsd_heal_state *a = calloc(1, sizeof(*a));
    struct fsd_heal_state *b = calloc(1, sizeof(*b));
    char dir[64], path[128];

    (void)state;
    assert_non_null(a);
    assert_non_null(b);
    t_brick(dir);
    snprintf(path, sizeof(path), "%s/v.state", dir);
    a->pid = 42;
    a->eta_seconds = -1;
    a->full_crawl = 1;
    a->crawl_started = 1700000000;
    a->crawl_done_at = 1690000000;
    a->crawl_visited = 12345;
    a->crawl_healed = 678;
    a->crawl_failed = 9;
    a->crawl_brick = 2;
    assert_int_equal(fsd_heal_state_write(path, a), 0);
    assert_int_equal(fsd_heal_state_read(path, b), 0);
    assert_int_equal(b->full_crawl, 1);
    assert_int_equal(b->crawl_started, 1700000000);
    assert_int_equal(b->crawl_done_at, 1690000000);
    assert_int_equal(b->crawl_visited, 12345);
    assert_int_equal(b->crawl_healed, 678);
    assert_int_equal(b->crawl_failed, 9);
    assert_int_equal(b->crawl_brick, 2);
    t_sh("rm -rf %s", dir);
    free(a);
    free(b);
}


/* ---- position and seek ---- */

#define T_SEQ_MAX 128

/* A walk as "KIND depth name" lines, in order. */
struct t_seq {
    char items[T_SEQ_MAX][300];
    int kinds[T_SEQ_MAX];
    size_t depths[T_SEQ_MAX];
    size_t n;
};


static void
t_seq_add(struct t_seq *q, int kind, const struct fsd_heal_crawl_item *it)
{
    assert_true(q->n < T_SEQ_MAX);
    assert_true(kind == FSD_HEAL_CRAWL_OBJECT
                || kind == FSD_HEAL_CRAWL_ENTER);
    snprintf(q->items[q->n], sizeof(q->items[0]), "%c %zu %s",
             kind == FSD_HEAL_CRAWL_OBJECT ? 'O' : 'E', it->depth,
             it->name);
    q->kinds[q->n] = kind;
    q->depths[q->n] = it->depth;
    q->n++;
}


/* Walks c for at most max items (to its end if max is 0) into q. */
static void
t_seq_walk(struct fsd_heal_crawl *c, struct t_seq *q, size_t max)
{
    struct fsd_heal_crawl_item it;
    int kind;

    while ((max == 0 || q->n < max)
           && (kind = fsd_heal_crawl_next(c, &it)) != FSD_HEAL_CRAWL_END)
        t_seq_add(q, kind, &it);
}


/* A tree whose directories are made out of name order. */
static void
t_seek_tree(char *dir /* 64 bytes */)
{
    t_brick(dir);
    t_sh("cd %s && mkdir -p m/q m/b c/z/deep c/a x && echo 1 > m/f1 && "
         "echo 2 > c/z/f2 && echo 3 > c/a/f3 && echo 4 > c/z/deep/f4 && "
         "echo 5 > top && echo 6 > m/q/f6", dir);
}


/* Every place a walk can be stopped at: a walk sought to its position
 * yields exactly what the whole walk yields from the listing of the
 * directory it was in; subdirectories come in name order. */
static void
test_seek_everywhere(void **state)
{
    struct t_seq *full = calloc(1, sizeof(*full));
    struct t_seq *part = calloc(1, sizeof(*part));
    struct t_seq *rest = calloc(1, sizeof(*rest));
    struct fsd_heal_crawl *c = NULL;
    size_t last_enter = 0, tried = 0;
    char dir[64], *pos;

    (void)state;
    assert_non_null(full);
    assert_non_null(part);
    assert_non_null(rest);
    t_seek_tree(dir);
    assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
    assert_null(fsd_heal_crawl_position(c)); /* not started */
    t_seq_walk(c, full, 0);
    assert_null(fsd_heal_crawl_position(c)); /* done */
    fsd_heal_crawl_free(c);
    /* Siblings in name order: c before m before x; a before z. */
    {
        ssize_t ec = -1, em = -1, ex = -1, eca = -1, ecz = -1;

        for (size_t i = 0; i < full->n; i++) {
            if (strcmp(full->items[i], "E 1 c") == 0) ec = (ssize_t)i;
            if (strcmp(full->items[i], "E 1 m") == 0) em = (ssize_t)i;
            if (strcmp(full->items[i], "E 1 x") == 0) ex = (ssize_t)i;
            if (strcmp(full->items[i], "E 2 a") == 0) eca = (ssize_t)i;
            if (strcmp(full->items[i], "E 2 z") == 0) ecz = (ssize_t)i;
        }
        assert_true(ec > 0 && ec < em && em < ex);
        assert_true(ec < eca && eca < ecz && ecz < em);
    }

    for (size_t k = 0; k < full->n; k++) {
        if (full->kinds[k] == FSD_HEAL_CRAWL_ENTER)
            last_enter = k;
        memset(part, 0, sizeof(*part));
        assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
        t_seq_walk(c, part, k + 1);
        pos = fsd_heal_crawl_position(c);
        fsd_heal_crawl_free(c);
        if (k == 0) { /* the root yielded, not yet entered */
            assert_null(pos);
            continue;
        }
        assert_non_null(pos);
        memset(rest, 0, sizeof(*rest));
        assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
        assert_int_equal(fsd_heal_crawl_seek(c, pos), 0);
        t_seq_walk(c, rest, 0);
        fsd_heal_crawl_free(c);
        assert_int_equal(rest->n, full->n - (last_enter + 1));
        for (size_t i = 0; i < rest->n; i++)
            assert_string_equal(rest->items[i],
                                full->items[last_enter + 1 + i]);
        free(pos);
        tried++;
    }
    assert_true(tried > 10);
    t_sh("rm -rf %s", dir);
    free(full);
    free(part);
    free(rest);
}


/* The directory of the position removed before the walk goes on: the
 * walk resumes after its subtree, at its next sibling. Bad positions are
 * refused; a walk already started cannot seek. */
static void
test_seek_gone(void **state)
{
    struct t_seq *full = calloc(1, sizeof(*full));
    struct t_seq *rest = calloc(1, sizeof(*rest));
    struct fsd_heal_crawl *c = NULL;
    struct fsd_heal_crawl_item it;
    size_t k, j;
    char dir[64];

    (void)state;
    assert_non_null(full);
    assert_non_null(rest);
    t_seek_tree(dir);
    assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
    t_seq_walk(c, full, 0);
    fsd_heal_crawl_free(c);
    for (k = 0; k < full->n; k++)
        if (strcmp(full->items[k], "E 2 a") == 0)
            break;
    assert_true(k < full->n);
    /* After c/a's subtree: the next ENTER at its depth or above. */
    for (j = k + 1; j < full->n; j++)
        if (full->kinds[j] == FSD_HEAL_CRAWL_ENTER && full->depths[j] <= 2)
            break;
    t_sh("rm -rf %s/c/a", dir);
    assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
    assert_int_equal(fsd_heal_crawl_seek(c, "c/a"), 0);
    t_seq_walk(c, rest, 0);
    fsd_heal_crawl_free(c);
    assert_int_equal(rest->n, full->n - j);
    for (size_t i = 0; i < rest->n; i++)
        assert_string_equal(rest->items[i], full->items[j + i]);

    assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
    assert_int_equal(fsd_heal_crawl_seek(c, "c/../m"), -EINVAL);
    fsd_heal_crawl_free(c);
    assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
    assert_int_equal(fsd_heal_crawl_next(c, &it), FSD_HEAL_CRAWL_OBJECT);
    assert_int_equal(fsd_heal_crawl_seek(c, "m"), -EINVAL);
    fsd_heal_crawl_free(c);
    /* A name that sorts after every subdirectory: nothing but the end. */
    assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
    assert_int_equal(fsd_heal_crawl_seek(c, "zzz"), 0);
    assert_int_equal(fsd_heal_crawl_next(c, &it), FSD_HEAL_CRAWL_END);
    fsd_heal_crawl_free(c);
    /* A brick gone: an error, not a walk. */
    t_sh("rm -rf %s", dir);
    assert_int_equal(fsd_heal_crawl_new(dir, &c), 0);
    assert_int_equal(fsd_heal_crawl_seek(c, "m"), -ENOENT);
    fsd_heal_crawl_free(c);
    free(full);
    free(rest);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_tree),
        cmocka_unit_test(test_walk_unreadable),
        cmocka_unit_test(test_walk_moved),
        cmocka_unit_test(test_walk_deep),
        cmocka_unit_test(test_walk_no_brick),
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_state_crawl_keys),
        cmocka_unit_test(test_seek_everywhere),
        cmocka_unit_test(test_seek_gone),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
