/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-posix-janitor: deleted files' handles removed after the unlink
 * answered (posix-janitor.c), checked on the brick's disk: with the
 * janitor held (fault point janitor-hold) an unlinked file's handle (or
 * one a rename replaced) is still there with link count 1 yet dead by
 * GFID (lookup, stat, link, open give ESTALE); a restart after that
 * sweeps it while live files, hard-linked files and open files keep
 * theirs; a GFID re-created while
 * its old handle is queued keeps its new handle; a running janitor
 * removes what is queued, a stop drains the queue and leaves the clean
 * marker; the sweep alone removes a handle made orphan on disk; rmdir
 * leaves the directory's handle symlink to the janitor the same way, and
 * the removed directory's last fd is closed by the janitor, not the
 * rmdir; the sweep removes the symlinks of directories gone from the disk (a
 * whole subtree too) but not those of live directories nor one whose
 * name exists without GFID yet (a mkdir in flight); a dead directory's
 * symlink under a parent whose chain does not resolve is kept and the
 * sweep says it is not complete (-EAGAIN: the next start sweeps again),
 * and once the chain resolves a sweep removes it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix-test.h"
#include "../posix.h"


/* lstat of gfid's handle on disk: 0 (st filled) or -errno. */
static int
pj_handle_stat(struct pt *t, const vl_gfid_t *g, struct stat *st)
{
    char rel[128], path[PATH_MAX];

    pt_handle_path(g, rel, sizeof(rel));
    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    return lstat(path, st) == 0 ? 0 : -errno;
}


static int
pj_unlink(struct pt *t, const char *name, vl_inode_t *hint)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.unlink.loc.parent = t->root;
    a.unlink.loc.name = name;
    a.unlink.loc.inode = hint;
    rc = pt_call(t, VL_FOP_UNLINK, &a, &r);
    if (rc == 0) /* the parent after the name went */
        assert_true(r.has_postparent);
    vl_reply_clear(&r);
    return rc;
}


/* Creates name with the given GFID (O_EXCL). */
static int
pj_create_gfid(struct pt *t, const char *name, const vl_gfid_t *gfid)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->graph->itable);
    vl_fd_t *fd;
    int rc;

    assert_non_null(inode);
    fd = vl_fd_new(inode, O_RDWR, 1);
    assert_non_null(fd);
    a.create.loc = (struct vl_loc){.parent = t->root, .name = name,
                                   .inode = inode};
    a.create.flags = O_RDWR | O_EXCL;
    a.create.mode = 0644;
    a.create.fd = fd;
    a.create.gfid = *gfid;
    rc = pt_call(t, VL_FOP_CREATE, &a, &r);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
    return rc;
}


/* Restarts the graph with the janitor held (or not). */
static void
pj_restart(struct pt *t, bool is_held)
{
    if (is_held)
        setenv("MORTAR_POSIX_FAULT", "janitor-hold", 1);
    pt_restart(t);
    unsetenv("MORTAR_POSIX_FAULT");
}


static bool
pj_marker_exists(struct pt *t)
{
    char path[PATH_MAX];
    struct stat st;

    snprintf(path, sizeof(path), "%s/.mortar/janitor-clean", t->brick);
    return lstat(path, &st) == 0;
}


/* Held janitor: the unlink answers with the name gone and the handle
 * queued (link count 1), and the GFID is dead at once. A restart sweeps
 * it; a live file, a file with another name left and an open file keep
 * their handles. */
static void
test_janitor_queued_is_dead_then_swept(void **state)
{
    struct pt *t = *state;
    vl_inode_t *f = NULL, *live = NULL, *hl = NULL, *op = NULL;
    vl_fd_t *fd = NULL;
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct vl_iatt ia;
    struct stat st;
    vl_gfid_t gf, glive, ghl;
    char buf[8];

    pj_restart(t, true);
    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, &f, NULL), 0);
    assert_int_equal(pt_create(t, t->root, "live", O_RDWR, 0644, &live,
                               &fd), 0);
    assert_int_equal(pt_write(t, fd, 0, "live", 4, 0), 0);
    vl_fd_unref(fd);
    assert_int_equal(pt_create(t, t->root, "hl", O_RDWR, 0644, &hl, NULL),
                     0);
    a.link.oldloc.inode = hl;
    a.link.newloc.parent = t->root;
    a.link.newloc.name = "hl2";
    assert_int_equal(pt_call(t, VL_FOP_LINK, &a, &r), 0);
    vl_reply_clear(&r);
    assert_int_equal(pt_create(t, t->root, "open", O_RDWR, 0644, &op, &fd),
                     0);
    gf = f->gfid;
    glive = live->gfid;
    ghl = hl->gfid;

    assert_int_equal(pj_unlink(t, "f", f), 0);
    /* Not removed by the unlink: queued, no name left. */
    assert_int_equal(pj_handle_stat(t, &gf, &st), 0);
    assert_int_equal(st.st_nlink, 1);
    assert_int_equal(posix_priv(t->xl)->janitor.n, 1);
    /* Dead by GFID: nameless lookup, stat, link, open. */
    assert_int_equal(pt_lookup_gfid(t, &gf, NULL, NULL), -ESTALE);
    assert_int_equal(pt_stat(t, f, &ia), -ESTALE);
    a.link.oldloc.inode = f;
    a.link.newloc.name = "back";
    assert_int_equal(pt_call(t, VL_FOP_LINK, &a, &r), -ESTALE);
    vl_reply_clear(&r);
    assert_int_equal(pt_open(t, f, O_RDONLY, NULL), -ESTALE);
    assert_int_equal(pt_lookup(t, t->root, "back", NULL, NULL), -ENOENT);
    /* Another name left: the handle stays, synchronously decided. */
    assert_int_equal(pj_unlink(t, "hl", hl), 0);
    assert_int_equal(posix_priv(t->xl)->janitor.n, 1);
    /* Open: parked at once, not queued. */
    assert_int_equal(pj_unlink(t, "open", op), 0);
    assert_int_equal(posix_priv(t->xl)->janitor.n, 1);
    assert_int_equal(pt_read(t, fd, 0, buf, sizeof(buf)), 0);
    vl_fd_unref(fd);
    vl_inode_unref(f);
    vl_inode_unref(live);
    vl_inode_unref(hl);
    vl_inode_unref(op);
    /* A rename over a file with one name queues the replaced file's. */
    assert_int_equal(pt_create(t, t->root, "src", O_RDWR, 0644, &f, NULL),
                     0);
    vl_inode_unref(f);
    assert_int_equal(pt_create(t, t->root, "dst", O_RDWR, 0644, &f, NULL),
                     0);
    assert_int_equal(pt_rename(t, t->root, "src", t->root, "dst", 0, &ia),
                     0);
    assert_int_equal(posix_priv(t->xl)->janitor.n, 2);
    assert_int_equal(pt_lookup_gfid(t, &f->gfid, NULL, NULL), -ESTALE);
    assert_int_equal(pj_handle_stat(t, &f->gfid, &st), 0);
    vl_inode_unref(f);

    /* The held stop left it queued and no clean marker: the next start
     * sweeps (ctimes must predate the start). */
    usleep(100 * 1000);
    pt_graph_close(t);
    assert_false(pj_marker_exists(t));
    assert_int_equal(pj_handle_stat(t, &gf, &st), 0);
    pj_restart(t, false);
    posix_janitor_flush(t->xl);
    assert_int_equal(pj_handle_stat(t, &gf, &st), -ENOENT);
    assert_int_equal(posix_priv(t->xl)->janitor.n_swept, 2);
    assert_int_equal(pj_handle_stat(t, &glive, &st), 0);
    assert_int_equal(pj_handle_stat(t, &ghl, &st), 0);
    assert_int_equal(pt_lookup_gfid(t, &ghl, &ia, NULL), 0);
    assert_int_equal(ia.nlink, 1);
    assert_int_equal(pt_lookup_gfid(t, &glive, &ia, &live), 0);
    assert_int_equal(ia.size, 4);
    assert_int_equal(pt_open(t, live, O_RDONLY, &fd), 0);
    assert_int_equal(pt_read(t, fd, 0, buf, sizeof(buf)), 4);
    assert_memory_equal(buf, "live", 4);
    vl_fd_unref(fd);
    vl_inode_unref(live);
}


/* A GFID created again while its old handle waits in the queue (a file
 * moved away and back): the create replaces the orphan and cancels the
 * queued removal, so the new file keeps its handle. */
static void
test_janitor_gfid_reused_while_queued(void **state)
{
    struct pt *t = *state;
    vl_inode_t *f = NULL;
    struct vl_iatt ia;
    struct stat st;
    vl_gfid_t g;

    pj_restart(t, true);
    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, &f, NULL), 0);
    g = f->gfid;
    assert_int_equal(pj_unlink(t, "f", f), 0);
    vl_inode_unref(f);
    assert_int_equal(posix_priv(t->xl)->janitor.n, 1);
    assert_int_equal(pj_create_gfid(t, "again", &g), 0);
    assert_int_equal(posix_priv(t->xl)->janitor.n, 0);
    assert_int_equal(pj_handle_stat(t, &g, &st), 0);
    assert_int_equal(st.st_nlink, 2);
    assert_int_equal(pt_lookup_gfid(t, &g, &ia, NULL), 0);
    usleep(100 * 1000);
    pj_restart(t, false);
    posix_janitor_flush(t->xl);
    assert_int_equal(pj_handle_stat(t, &g, &st), 0);
    assert_int_equal(pt_lookup(t, t->root, "again", &ia, NULL), 0);
    assert_true(vl_gfid_equal(&ia.gfid, &g));
}


/* rmdir leaves the directory's handle symlink to the janitor: the GFID
 * is dead at once (ESTALE); a mkdir of the same GFID (distribute healing
 * a directory) while it waits keeps its handle; a running janitor
 * removes a queued one. */
static void
test_janitor_rmdir(void **state)
{
    struct pt *t = *state;
    union vl_fop_args a = {0};
    vl_inode_t *d = NULL, *e = NULL, *fresh;
    struct vl_reply r;
    struct stat st;
    vl_gfid_t g;

    pj_restart(t, true);
    assert_int_equal(pt_mkdir(t, t->root, "d", 0755, &d), 0);
    assert_int_equal(pt_mkdir(t, t->root, "e", 0755, &e), 0);
    g = d->gfid;
    a.rmdir.loc = (struct vl_loc){.parent = t->root, .name = "d",
                                  .inode = d};
    assert_int_equal(pt_call(t, VL_FOP_RMDIR, &a, &r), 0);
    assert_true(r.has_postparent);
    vl_reply_clear(&r);
    a.rmdir.loc = (struct vl_loc){.parent = t->root, .name = "e",
                                  .inode = e};
    assert_int_equal(pt_call(t, VL_FOP_RMDIR, &a, &r), 0);
    vl_reply_clear(&r);
    assert_int_equal(posix_priv(t->xl)->janitor.n, 2);
    assert_int_equal(pj_handle_stat(t, &g, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(pt_lookup_gfid(t, &g, NULL, NULL), -ESTALE);
    assert_int_equal(pt_create(t, d, "y", O_RDWR, 0644, NULL, NULL),
                     -ESTALE);
    assert_int_equal(pt_lookup_gfid(t, &e->gfid, NULL, NULL), -ESTALE);

    memset(&a, 0, sizeof(a));
    fresh = vl_inode_new(t->graph->itable);
    a.mkdir.loc = (struct vl_loc){.parent = t->root, .name = "d2",
                                  .inode = fresh};
    a.mkdir.mode = 0755;
    a.mkdir.gfid = g;
    assert_int_equal(pt_call(t, VL_FOP_MKDIR, &a, &r), 0);
    vl_reply_clear(&r);
    vl_inode_unref(fresh);
    assert_int_equal(posix_priv(t->xl)->janitor.n, 1); /* e's is left */
    assert_int_equal(pt_create(t, d, "y", O_RDWR, 0644, NULL, NULL), 0);
    /* Both before the restart: an inode keeps its graph's table alive. */
    vl_inode_unref(d);
    vl_inode_unref(e);
    pj_restart(t, false);
    posix_janitor_flush(t->xl);
    assert_int_equal(pj_handle_stat(t, &g, &st), 0);
    assert_int_equal(pt_lookup_gfid(t, &g, NULL, &d), 0);
    assert_int_equal(pt_lookup(t, d, "y", NULL, NULL), 0);
    vl_inode_unref(d);

    /* Not held: the janitor removes it. */
    assert_int_equal(pt_mkdir(t, t->root, "f", 0755, &d), 0);
    memset(&a, 0, sizeof(a));
    a.rmdir.loc = (struct vl_loc){.parent = t->root, .name = "f",
                                  .inode = d};
    assert_int_equal(pt_call(t, VL_FOP_RMDIR, &a, &r), 0);
    vl_reply_clear(&r);
    posix_janitor_flush(t->xl);
    assert_int_equal(pj_handle_stat(t, &d->gfid, &st), -ENOENT);
    vl_inode_unref(d);
}


/* Open fds of this process that name a removed directory. */
static int
pj_deleted_dir_fds(void)
{
    char link[64], target[PATH_MAX];
    struct stat st;
    int n = 0;

    for (int fd = 0; fd < 1024; fd++) {
        ssize_t len;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        len = readlink(link, target, sizeof(target) - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)
            && strstr(target, " (deleted)") != NULL)
            n++;
    }
    return n;
}


/* rmdir keeps an fd of the removed directory and leaves its close (which
 * frees the inode) to the janitor: with the janitor stopped on its lock,
 * the reply came and the fd is still queued, for a directory whose fd
 * the brick cached and for one it had not; the janitor closes both. */
static void
test_janitor_rmdir_defers_close(void **state)
{
    struct pt *t = *state;
    struct posix_janitor *j;
    union vl_fop_args a = {0};
    vl_inode_t *d = NULL, *e = NULL;
    vl_gfid_t other;
    struct vl_reply r;

    pj_restart(t, false);
    j = &posix_priv(t->xl)->janitor;
    assert_int_equal(pt_mkdir(t, t->root, "d", 0755, &d), 0);
    assert_int_equal(pt_create(t, d, "x", O_RDWR, 0644, NULL, NULL), 0);
    assert_int_equal(pt_mkdir(t, t->root, "e", 0755, &e), 0);
    a.unlink.loc = (struct vl_loc){.parent = d, .name = "x"};
    assert_int_equal(pt_call(t, VL_FOP_UNLINK, &a, &r), 0);
    vl_reply_clear(&r);
    posix_janitor_flush(t->xl);
    /* e was never used as a parent: the brick cached no fd of it. */
    posix_dirfd_uncache(t->xl, &e->gfid);
    assert_int_equal(pj_deleted_dir_fds(), 0);

    vl_gfid_generate(&other);
    posix_janitor_claim(t->xl, &other); /* holds the janitor's lock */
    memset(&a, 0, sizeof(a));
    a.rmdir.loc = (struct vl_loc){.parent = t->root, .name = "d",
                                  .inode = d};
    assert_int_equal(pt_call(t, VL_FOP_RMDIR, &a, &r), 0);
    vl_reply_clear(&r);
    a.rmdir.loc = (struct vl_loc){.parent = t->root, .name = "e",
                                  .inode = e};
    assert_int_equal(pt_call(t, VL_FOP_RMDIR, &a, &r), 0);
    vl_reply_clear(&r);
    pthread_mutex_lock(&j->lock);
    assert_int_equal(j->n_fds, 2);
    pthread_mutex_unlock(&j->lock);
    assert_int_equal(pj_deleted_dir_fds(), 2);
    posix_janitor_unclaim(t->xl);
    posix_janitor_flush(t->xl);
    assert_int_equal(j->n_fds, 0);
    assert_int_equal(pj_deleted_dir_fds(), 0);
    vl_inode_unref(d);
    vl_inode_unref(e);
}


/* A running janitor removes every queued handle; a stop drains what is
 * left and writes the clean marker, which the next start consumes. */
static void
test_janitor_drains(void **state)
{
    struct pt *t = *state;
    enum { N = 200 };
    vl_inode_t *f[N];
    vl_gfid_t g[N];
    struct stat st;
    char name[32];

    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        assert_int_equal(pt_create(t, t->root, name, O_RDWR, 0644, &f[i],
                                   NULL), 0);
        g[i] = f[i]->gfid;
    }
    for (int i = 0; i < N / 2; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        assert_int_equal(pj_unlink(t, name, f[i]), 0);
    }
    posix_janitor_flush(t->xl);
    for (int i = 0; i < N / 2; i++)
        assert_int_equal(pj_handle_stat(t, &g[i], &st), -ENOENT);
    assert_int_equal(posix_priv(t->xl)->janitor.n_queued, N / 2);
    for (int i = N / 2; i < N; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        assert_int_equal(pj_unlink(t, name, f[i]), 0);
    }
    for (int i = 0; i < N; i++)
        vl_inode_unref(f[i]);
    pt_graph_close(t); /* the stop drains */
    for (int i = N / 2; i < N; i++)
        assert_int_equal(pj_handle_stat(t, &g[i], &st), -ENOENT);
    assert_true(pj_marker_exists(t));
    pj_restart(t, false);
    assert_false(pj_marker_exists(t));
    assert_false(posix_priv(t->xl)->janitor.is_sweep_wanted);
}


/* The sweep on its own: a handle whose name was removed on the disk
 * (what a crash leaves) goes; live, hard-linked and parked handles and
 * directory handles stay; a handle orphaned after the sweep began is not
 * the sweep's. */
static void
test_janitor_sweep_orphans(void **state)
{
    struct pt *t = *state;
    vl_inode_t *f = NULL, *live = NULL, *hl = NULL, *d = NULL;
    char path[PATH_MAX], path2[PATH_MAX];
    struct stat st;

    assert_int_equal(pt_create(t, t->root, "f", O_RDWR, 0644, &f, NULL), 0);
    assert_int_equal(pt_create(t, t->root, "live", O_RDWR, 0644, &live,
                               NULL), 0);
    assert_int_equal(pt_create(t, t->root, "hl", O_RDWR, 0644, &hl, NULL),
                     0);
    assert_int_equal(pt_mkdir(t, t->root, "d", 0755, &d), 0);
    snprintf(path, sizeof(path), "%s/hl", t->brick);
    snprintf(path2, sizeof(path2), "%s/hl-byhand", t->brick);
    assert_int_equal(link(path, path2), 0);
    assert_int_equal(unlink(path), 0); /* hl-byhand still names it */
    snprintf(path, sizeof(path), "%s/f", t->brick);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(pj_handle_stat(t, &f->gfid, &st), 0);
    assert_int_equal(st.st_nlink, 1);
    usleep(100 * 1000);
    assert_int_equal(posix_janitor_sweep(t->xl), 0);
    assert_int_equal(pj_handle_stat(t, &f->gfid, &st), -ENOENT);
    assert_int_equal(pj_handle_stat(t, &live->gfid, &st), 0);
    assert_int_equal(pj_handle_stat(t, &hl->gfid, &st), 0);
    assert_int_equal(pj_handle_stat(t, &d->gfid, &st), 0);
    assert_true(S_ISLNK(st.st_mode));

    /* Orphaned just now (after the sweep's start time): kept. */
    snprintf(path, sizeof(path), "%s/live", t->brick);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(posix_janitor_sweep(t->xl), 0);
    assert_int_equal(pj_handle_stat(t, &live->gfid, &st), 0);
    vl_inode_unref(f);
    vl_inode_unref(live);
    vl_inode_unref(hl);
    vl_inode_unref(d);
}


/* rmdir of brick-relative path on the disk (what a crash after an rmdir
 * with its handle queued leaves). */
static void
pj_rmdir_disk(struct pt *t, const char *rel)
{
    char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    assert_int_equal(rmdir(path), 0);
}


/* The sweep and directory handles: gone directories' symlinks go (a
 * removed subtree whose parents the walk may meet first too, a name now
 * a file or another directory); live ones, the root's and one whose
 * name is back without GFID (a mkdir between mkdirat and its GFID)
 * stay. */
static void
test_janitor_sweep_dirs(void **state)
{
    struct pt *t = *state;
    vl_inode_t *a, *b, *x, *y, *z, *m, *r, *s, *s2;
    vl_gfid_t gx, gy, gz, gm, gr, gs;
    char path[PATH_MAX];
    struct stat st;
    unsigned long swept;
    int fd;

    assert_int_equal(pt_mkdir(t, t->root, "a", 0755, &a), 0);
    assert_int_equal(pt_mkdir(t, a, "b", 0755, &b), 0);
    assert_int_equal(pt_mkdir(t, t->root, "x", 0755, &x), 0);
    assert_int_equal(pt_mkdir(t, x, "y", 0755, &y), 0);
    assert_int_equal(pt_mkdir(t, y, "z", 0755, &z), 0);
    assert_int_equal(pt_mkdir(t, t->root, "m", 0755, &m), 0);
    assert_int_equal(pt_mkdir(t, t->root, "r", 0755, &r), 0);
    assert_int_equal(pt_mkdir(t, t->root, "s", 0755, &s), 0);
    gx = x->gfid, gy = y->gfid, gz = z->gfid;
    gm = m->gfid, gr = r->gfid, gs = s->gfid;
    pj_rmdir_disk(t, "x/y/z");
    pj_rmdir_disk(t, "x/y");
    pj_rmdir_disk(t, "x");
    pj_rmdir_disk(t, "m");
    snprintf(path, sizeof(path), "%s/m", t->brick);
    assert_int_equal(mkdir(path, 0755), 0); /* no GFID (yet) */
    pj_rmdir_disk(t, "r");
    snprintf(path, sizeof(path), "%s/r", t->brick);
    fd = open(path, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    pj_rmdir_disk(t, "s");
    /* Drop the cached directory fds: the names were changed by hand. */
    vl_inode_unref(x), vl_inode_unref(y), vl_inode_unref(z);
    vl_inode_unref(m), vl_inode_unref(r), vl_inode_unref(s);
    assert_int_equal(pt_mkdir(t, t->root, "s", 0755, &s2), 0);
    assert_false(vl_gfid_equal(&s2->gfid, &gs));
    usleep(100 * 1000);

    swept = posix_priv(t->xl)->janitor.n_swept;
    assert_int_equal(posix_janitor_sweep(t->xl), 0);
    assert_int_equal(posix_priv(t->xl)->janitor.n_swept - swept, 5);
    assert_int_equal(pj_handle_stat(t, &gx, &st), -ENOENT);
    assert_int_equal(pj_handle_stat(t, &gy, &st), -ENOENT);
    assert_int_equal(pj_handle_stat(t, &gz, &st), -ENOENT);
    assert_int_equal(pj_handle_stat(t, &gr, &st), -ENOENT);
    assert_int_equal(pj_handle_stat(t, &gs, &st), -ENOENT);
    assert_int_equal(pj_handle_stat(t, &gm, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(pj_handle_stat(t, &t->root->gfid, &st), 0);
    assert_int_equal(pj_handle_stat(t, &a->gfid, &st), 0);
    assert_int_equal(pj_handle_stat(t, &b->gfid, &st), 0);
    assert_int_equal(pj_handle_stat(t, &s2->gfid, &st), 0);
    assert_int_equal(pt_lookup_gfid(t, &b->gfid, NULL, NULL), 0);
    assert_int_equal(pt_lookup_gfid(t, &s2->gfid, NULL, NULL), 0);

    vl_inode_unref(a);
    vl_inode_unref(b);
    vl_inode_unref(s2);
}


/* What the hook of test_janitor_sweep_put_back did. */
static struct pt *pj_hook_t;
static int pj_hook_calls;
static ino_t pj_hook_ino;

/* Plays a rename's handle update landing between the sweep's verdict
 * and its move aside: the handle symlink is replaced by a new one (a new
 * inode, the same target). */
static void
pj_hook_fresh_handle(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    char rel[128], path[PATH_MAX], tmp[PATH_MAX + 8], target[PATH_MAX];
    struct stat st;
    ssize_t n;

    (void)xl;
    pj_hook_calls++;
    pt_handle_path(gfid, rel, sizeof(rel));
    snprintf(path, sizeof(path), "%s/%s", pj_hook_t->brick, rel);
    snprintf(tmp, sizeof(tmp), "%s.fresh", path);
    n = readlink(path, target, sizeof(target) - 1);
    assert_true(n > 0);
    target[n] = '\0';
    assert_int_equal(symlink(target, tmp), 0);
    assert_int_equal(rename(tmp, path), 0);
    assert_int_equal(lstat(path, &st), 0);
    pj_hook_ino = st.st_ino;
}


/* A dead directory's handle replaced after the verdict (a rename's
 * update) is not lost: the sweep moves the fresh one aside, sees another
 * inode, puts it back and counts it (janitor_put_back), not as swept.
 * Nothing is left aside, and a later sweep judges the handle as usual. */
static void
test_janitor_sweep_put_back(void **state)
{
    struct pt *t = *state;
    struct posix_janitor *j = &posix_priv(t->xl)->janitor;
    unsigned long swept, put_back;
    char rel[128], path[PATH_MAX];
    vl_inode_t *k;
    vl_gfid_t gk;
    struct stat st;
    char *slash;

    assert_int_equal(pt_mkdir(t, t->root, "k", 0755, &k), 0);
    gk = k->gfid;
    pj_rmdir_disk(t, "k");
    vl_inode_unref(k);
    usleep(100 * 1000); /* the handle predates the sweep */

    pj_hook_t = t;
    pj_hook_calls = 0;
    posix_janitor_test_before_aside = pj_hook_fresh_handle;
    swept = j->n_swept;
    put_back = j->n_put_back;
    assert_int_equal(posix_janitor_sweep(t->xl), 0);
    posix_janitor_test_before_aside = NULL;

    assert_int_equal(pj_hook_calls, 1);
    assert_int_equal(j->n_put_back - put_back, 1);
    assert_int_equal(j->n_swept - swept, 0);
    assert_int_equal(pj_handle_stat(t, &gk, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(st.st_ino, pj_hook_ino);
    pt_handle_path(&gk, rel, sizeof(rel));
    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    slash = strrchr(path, '/');
    assert_non_null(slash);
    snprintf(slash + 1, sizeof(path) - (size_t)(slash + 1 - path),
             ".sweep-%d", (int)getpid());
    assert_int_equal(lstat(path, &st), -1);
    assert_int_equal(errno, ENOENT);

    /* The directory is still gone: once the put-back handle predates a
     * sweep, that sweep removes it. */
    usleep(100 * 1000);
    assert_int_equal(posix_janitor_sweep(t->xl), 0);
    assert_int_equal(j->n_swept - swept, 1);
    assert_int_equal(j->n_put_back - put_back, 1);
    assert_int_equal(pj_handle_stat(t, &gk, &st), -ENOENT);
}


/* A dead directory's symlink whose parent chain does not resolve (here
 * for good: the parent's handle names no directory) is neither removed
 * nor forgotten: the sweep retries, keeps it, and answers -EAGAIN (not
 * complete; posix_janitor_main then leaves no clean marker). Once the
 * parent's handle is right again, a sweep removes it and answers 0.
 * (Found by tests/functional/posix-sweep-race.t: the sweep used to stop
 * at the first pass that decided nothing and call itself complete,
 * leaving dead handles under directories being renamed for good.) */
static void
test_janitor_sweep_undecided(void **state)
{
    struct pt *t = *state;
    vl_inode_t *p, *q;
    vl_gfid_t gp, gq;
    char rel[128], path[PATH_MAX], target[PATH_MAX], want[PATH_MAX];
    struct stat st;
    unsigned long swept;
    ssize_t n;

    assert_int_equal(pt_mkdir(t, t->root, "p", 0755, &p), 0);
    assert_int_equal(pt_mkdir(t, p, "q", 0755, &q), 0);
    gp = p->gfid, gq = q->gfid;
    vl_inode_unref(p), vl_inode_unref(q);
    pj_rmdir_disk(t, "p/q");
    /* p's handle made to lead nowhere a chain can follow. */
    pt_handle_path(&gp, rel, sizeof(rel));
    snprintf(path, sizeof(path), "%s/%s", t->brick, rel);
    n = readlink(path, want, sizeof(want) - 1);
    assert_true(n > 0);
    want[n] = '\0';
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink("not-a-handle", path), 0);
    usleep(100 * 1000);

    swept = posix_priv(t->xl)->janitor.n_swept;
    assert_int_equal(posix_janitor_sweep(t->xl), -EAGAIN);
    assert_int_equal(posix_priv(t->xl)->janitor.n_swept, swept);
    assert_int_equal(pj_handle_stat(t, &gq, &st), 0); /* kept */
    assert_true(S_ISLNK(st.st_mode));
    n = readlink(path, target, sizeof(target) - 1);
    assert_true(n > 0); /* p's own (not a directory handle) is not ours */
    target[n] = '\0';
    assert_string_equal(target, "not-a-handle");

    /* The chain resolves again: q's symlink goes, p's stays. */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(want, path), 0);
    usleep(100 * 1000);
    assert_int_equal(posix_janitor_sweep(t->xl), 0);
    assert_int_equal(posix_priv(t->xl)->janitor.n_swept - swept, 1);
    assert_int_equal(pj_handle_stat(t, &gq, &st), -ENOENT);
    assert_int_equal(pj_handle_stat(t, &gp, &st), 0);
    assert_int_equal(pt_lookup_gfid(t, &gp, NULL, NULL), 0);
}


const struct CMUnitTest pt_janitor_tests[] = {
    cmocka_unit_test_setup_teardown(test_janitor_queued_is_dead_then_swept,
                                    pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_janitor_gfid_reused_while_queued,
                                    pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_janitor_rmdir, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_janitor_rmdir_defers_close,
                                    pt_setup, pt_teardown),
    cmocka_unit_test_setup_teardown(test_janitor_drains, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_janitor_sweep_orphans, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_janitor_sweep_dirs, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_janitor_sweep_put_back, pt_setup,
                                    pt_teardown),
    cmocka_unit_test_setup_teardown(test_janitor_sweep_undecided, pt_setup,
                                    pt_teardown),
};
const size_t pt_n_janitor_tests = VL_ARRAY_SIZE(pt_janitor_tests);
