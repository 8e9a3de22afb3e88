/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-dist-dirtime: a directory's times through cluster/distribute over
 * four storage/posix bricks (dist-test.h) whose copies of the directory
 * have different times (set on the bricks' disks, as a create on one
 * brick leaves them):
 *   - stat, fstat and lookup answer the newest mtime, ctime and atime of
 *     all the copies (stat went to the first brick only); fstat of an fd
 *     opened while a subvolume was down asks that one too;
 *   - a chmod's answer has the newest times too;
 *   - a readdirplus entry of the directory (the first brick's copy) does
 *     not go back behind what a stat answered;
 *   - with the brick holding the newest copy down, stat does not go
 *     back;
 *   - a utimes to the past through distribute shows (the times kept are
 *     not a floor against explicit changes);
 *   - the parent attributes of create, link, symlink, rename, unlink,
 *     mkdir and rmdir (one brick's copy) are not older than a stat
 *     answered, with one brick's copy a day ahead;
 *   - dist_dir_times_settle: a whole view overtaken by a newer answer is
 *     raised, a whole newer one is taken as it is, a partial one raised.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../../builtin.h"
#include "dist.h"
#include "dist-test.h"
#include "vl-test.h"

/* mtime (and atime) set on each brick's copy; brick 2's is the newest. */
static const int64_t td_mtime[DT_BRICKS] = {1000000, 2000000, 5000000,
                                            3000000};
#define TD_NEWEST_BRICK 2


/* Sets brick i's copy of rel to mtime and atime td_mtime[i] (+ i ns),
 * bricks in index order 20 ms apart, so the last one (brick 3) has the
 * newest ctime, another brick than the newest mtime's. */
static void
td_set_times(struct dt *t, const char *rel)
{
    char path[PATH_MAX];

    for (int i = 0; i < DT_BRICKS; i++) {
        struct timespec ts[2] = {{.tv_sec = td_mtime[i], .tv_nsec = i},
                                 {.tv_sec = td_mtime[i], .tv_nsec = i}};

        dt_path(t, i, rel, path, sizeof(path));
        assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
        usleep(20000);
    }
}


static bool
td_after(const struct timespec *x, const struct timespec *y)
{
    return x->tv_sec > y->tv_sec
           || (x->tv_sec == y->tv_sec && x->tv_nsec > y->tv_nsec);
}


/* The newest of each time of the bricks' copies of rel, read on disk. */
static void
td_disk_newest(struct dt *t, const char *rel, struct timespec *m,
               struct timespec *c, struct timespec *a)
{
    char path[PATH_MAX];

    memset(m, 0, sizeof(*m));
    memset(c, 0, sizeof(*c));
    memset(a, 0, sizeof(*a));
    for (int i = 0; i < DT_BRICKS; i++) {
        struct stat st;

        dt_path(t, i, rel, path, sizeof(path));
        assert_int_equal(lstat(path, &st), 0);
        if (td_after(&st.st_mtim, m))
            *m = st.st_mtim;
        if (td_after(&st.st_ctim, c))
            *c = st.st_ctim;
        if (td_after(&st.st_atim, a))
            *a = st.st_atim;
    }
}


static int
td_stat(struct dt *t, vl_inode_t *inode, vl_fd_t *fd, struct vl_iatt *out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.stat.loc.inode = fd == NULL ? inode : NULL;
    a.stat.fd = fd;
    rc = dt_call(t, VL_FOP_STAT, &a, &r);
    *out = r.iatt;
    vl_reply_clear(&r);
    return rc;
}


/* ia has the newest times of the copies on disk: brick 2's mtime (reads
 * move atimes, changes ctimes, nothing here moves an mtime). */
static void
td_assert_newest(struct dt *t, const struct vl_iatt *ia, const char *rel)
{
    struct timespec m, c, a;

    td_disk_newest(t, rel, &m, &c, &a);
    assert_int_equal(m.tv_sec, td_mtime[TD_NEWEST_BRICK]);
    assert_int_equal(ia->mtime, m.tv_sec);
    assert_int_equal(ia->mtime_ns, m.tv_nsec);
    assert_int_equal(ia->atime, a.tv_sec);
    assert_int_equal(ia->atime_ns, a.tv_nsec);
    assert_int_equal(ia->ctime, c.tv_sec);
    assert_int_equal(ia->ctime_ns, c.tv_nsec);
}


/* A directory "name" with the copies' times of td_set_times. */
static vl_inode_t *
td_dir(struct dt *t, const char *name)
{
    vl_inode_t *d = NULL;

    assert_int_equal(dt_mkdir(t, t->root, name, &d), 0);
    td_set_times(t, name);
    return d;
}


/* Marks subvolume i down (is_up false, and not local) or up again, as a
 * protocol/client child's CHILD_DOWN / CHILD_UP would. */
static void
td_set_up(struct dt *t, int i, bool is_up)
{
    struct dist_priv *priv = dist_priv(t->dist);

    pthread_mutex_lock(&priv->lock);
    priv->is_local[i] = is_up;
    priv->is_up[i] = is_up;
    pthread_mutex_unlock(&priv->lock);
}


static void
test_stat_newest_copy(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = td_dir(t, "d");
    struct vl_iatt ia;

    assert_int_equal(td_stat(t, d, NULL, &ia), 0);
    assert_true(S_ISDIR(ia.mode));
    assert_true(vl_gfid_equal(&ia.gfid, &d->gfid));
    td_assert_newest(t, &ia, "d");
    vl_inode_unref(d);
}


static void
test_fstat_newest_copy(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = td_dir(t, "d");
    vl_fd_t *fd = vl_fd_new(d, O_RDONLY, 1);
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct vl_iatt ia;

    assert_non_null(fd);
    a.opendir.loc.inode = d;
    a.opendir.fd = fd;
    assert_int_equal(dt_call(t, VL_FOP_OPENDIR, &a, &r), 0);
    vl_reply_clear(&r);
    assert_int_equal(td_stat(t, d, fd, &ia), 0);
    td_assert_newest(t, &ia, "d");
    vl_fd_unref(fd);

    /* Opened while the newest copy's subvolume was down: fstat asks it
     * too (by GFID; storage/posix would also take the fd there). */
    fd = vl_fd_new(d, O_RDONLY, 1);
    assert_non_null(fd);
    td_set_up(t, TD_NEWEST_BRICK, false);
    memset(&a, 0, sizeof(a));
    a.opendir.loc.inode = d;
    a.opendir.fd = fd;
    assert_int_equal(dt_call(t, VL_FOP_OPENDIR, &a, &r), 0);
    vl_reply_clear(&r);
    td_set_up(t, TD_NEWEST_BRICK, true);
    assert_int_equal(td_stat(t, d, fd, &ia), 0);
    td_assert_newest(t, &ia, "d");
    vl_fd_unref(fd);
    vl_inode_unref(d);
}


static void
test_lookup_newest_copy(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = td_dir(t, "d");
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct vl_iatt ia;

    /* By name (a fresh graph: nothing known)... */
    vl_inode_unref(d);
    dt_restart(t);
    assert_int_equal(dt_lookup(t, t->root, "d", &ia, &d), 0);
    td_assert_newest(t, &ia, "d");
    /* ...and the revalidation of the known directory. */
    a.lookup.loc.inode = d;
    assert_int_equal(dt_call(t, VL_FOP_LOOKUP, &a, &r), 0);
    td_assert_newest(t, &r.iatt, "d");
    vl_reply_clear(&r);
    vl_inode_unref(d);
}


static void
test_setattr_answer_newest(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = td_dir(t, "d");
    union vl_fop_args a = {0};
    struct vl_reply r;

    a.setattr.loc.inode = d;
    a.setattr.attr.mode = S_IFDIR | 0700;
    a.setattr.valid = VL_SET_MODE;
    assert_int_equal(dt_call(t, VL_FOP_SETATTR, &a, &r), 0);
    assert_int_equal(r.iatt.mode & 07777, 0700);
    /* The chmod moved every copy's ctime: the newest is still the answer. */
    td_assert_newest(t, &r.iatt, "d");
    vl_reply_clear(&r);
    vl_inode_unref(d);
}


/* The attributes of the entry "d" in a readdirplus of the root. */
static void
td_plus_entry(struct dt *t, const char *name, struct vl_iatt *out)
{
    vl_fd_t *fd = vl_fd_new(t->root, O_RDONLY, 1);
    union vl_fop_args a = {0};
    struct vl_reply r;
    bool is_found = false, is_eof = false;
    off_t off = 0;

    assert_non_null(fd);
    a.opendir.loc.inode = t->root;
    a.opendir.fd = fd;
    assert_int_equal(dt_call(t, VL_FOP_OPENDIR, &a, &r), 0);
    vl_reply_clear(&r);
    while (!is_eof) {
        memset(&a, 0, sizeof(a));
        a.readdir.fd = fd;
        a.readdir.size = 65536;
        a.readdir.offset = off;
        a.readdir.plus = true;
        assert_int_equal(dt_call(t, VL_FOP_READDIR, &a, &r), 0);
        is_eof = r.entries.eof || r.entries.n == 0;
        for (size_t i = 0; i < r.entries.n; i++) {
            off = r.entries.ents[i].off;
            if (strcmp(r.entries.ents[i].name, name) == 0) {
                assert_false(is_found);
                assert_true(r.entries.ents[i].has_iatt);
                *out = r.entries.ents[i].iatt;
                is_found = true;
            }
        }
        vl_reply_clear(&r);
    }
    assert_true(is_found);
    vl_fd_unref(fd);
}


static void
test_readdirplus_not_back(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = td_dir(t, "d");
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct vl_iatt ia, ent;

    /* The revalidation of d answers the newest copy's times... */
    a.lookup.loc.inode = d;
    assert_int_equal(dt_call(t, VL_FOP_LOOKUP, &a, &r), 0);
    ia = r.iatt;
    vl_reply_clear(&r);
    assert_int_equal(ia.mtime, td_mtime[TD_NEWEST_BRICK]);
    td_plus_entry(t, "d", &ent);
    assert_true(S_ISDIR(ent.mode));
    /* ...and the entry, brick 0's copy (mtime 1000000), is raised to
     * them. */
    assert_int_equal(ent.mtime, ia.mtime);
    assert_int_equal(ent.mtime_ns, ia.mtime_ns);
    assert_int_equal(ent.ctime, ia.ctime);
    assert_int_equal(ent.ctime_ns, ia.ctime_ns);
    vl_inode_unref(d);
}


static void
test_brick_down_not_back(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = td_dir(t, "d");
    struct vl_iatt ia, down;

    assert_int_equal(td_stat(t, d, NULL, &ia), 0);
    td_assert_newest(t, &ia, "d");
    td_set_up(t, TD_NEWEST_BRICK, false);
    td_set_up(t, 3, false); /* the newest ctime's too */
    assert_int_equal(td_stat(t, d, NULL, &down), 0);
    assert_int_equal(down.mtime, ia.mtime);
    assert_int_equal(down.mtime_ns, ia.mtime_ns);
    assert_int_equal(down.ctime, ia.ctime);
    assert_int_equal(down.ctime_ns, ia.ctime_ns);
    assert_int_equal(down.atime, ia.atime);
    td_set_up(t, TD_NEWEST_BRICK, true);
    td_set_up(t, 3, true);
    vl_inode_unref(d);
}


static void
test_utimes_to_past_shows(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = td_dir(t, "d");
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct vl_iatt ia;

    assert_int_equal(td_stat(t, d, NULL, &ia), 0);
    td_assert_newest(t, &ia, "d");
    a.setattr.loc.inode = d;
    a.setattr.attr.mtime = 100;
    a.setattr.attr.atime = 100;
    a.setattr.valid = VL_SET_MTIME | VL_SET_ATIME;
    assert_int_equal(dt_call(t, VL_FOP_SETATTR, &a, &r), 0);
    assert_int_equal(r.iatt.mtime, 100);
    vl_reply_clear(&r);
    assert_int_equal(td_stat(t, d, NULL, &ia), 0);
    assert_int_equal(ia.mtime, 100);
    assert_int_equal(ia.atime, 100);
    vl_inode_unref(d);
}


/* pp (an entry op's parent attributes) is not older than ref (a stat's
 * answer) in any of its times. */
static void
td_assert_not_before(const struct vl_reply *r, bool is_second,
                     const struct vl_iatt *ref)
{
    const struct vl_iatt *pp = is_second ? &r->postparent2 : &r->postparent;
    struct timespec p[3] = {{pp->mtime, pp->mtime_ns},
                            {pp->ctime, pp->ctime_ns},
                            {pp->atime, pp->atime_ns}};
    struct timespec f[3] = {{ref->mtime, ref->mtime_ns},
                            {ref->ctime, ref->ctime_ns},
                            {ref->atime, ref->atime_ns}};

    assert_true(is_second ? r->has_postparent2 : r->has_postparent);
    for (int i = 0; i < 3; i++)
        if (td_after(&f[i], &p[i]))
            fail_msg("postparent%s time %d: %lld.%09ld before the stat's "
                     "%lld.%09ld", is_second ? "2" : "", i,
                     (long long)p[i].tv_sec, p[i].tv_nsec,
                     (long long)f[i].tv_sec, f[i].tv_nsec);
}


/* The parent attributes of every entry op (one brick's copy of the
 * directory) are not older than a stat of the directory answered: brick
 * 2's copy has times a day ahead (a brick whose clock is ahead), the
 * others older atimes; each op runs on brick 0 (or on every brick). */
static void
test_entry_postparent_not_back(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = td_dir(t, "d");
    vl_inode_t *f = NULL, *sub = NULL;
    struct timespec ahead[2] = {{.tv_sec = time(NULL) + 86400},
                                {.tv_sec = time(NULL) + 86400}};
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct vl_iatt ref;
    char path[PATH_MAX];
    char n0[32], n1[32], n2[32], n3[32];
    vl_fd_t *fd;

    dt_path(t, TD_NEWEST_BRICK, "d", path, sizeof(path));
    assert_int_equal(utimensat(AT_FDCWD, path, ahead, 0), 0);
    assert_int_equal(td_stat(t, d, NULL, &ref), 0);
    assert_int_equal(ref.mtime, ahead[1].tv_sec);
    dt_name_on(0, "f", n0, sizeof(n0));
    dt_name_on(0, "l", n1, sizeof(n1));
    dt_name_on(0, "s", n2, sizeof(n2));
    dt_name_on(0, "r", n3, sizeof(n3));

    f = vl_inode_new(t->graph->itable);
    fd = vl_fd_new(f, O_RDWR, 1);
    a.create.loc.parent = d;
    a.create.loc.name = n0;
    a.create.loc.inode = f;
    a.create.flags = O_RDWR | O_CREAT | O_EXCL;
    a.create.mode = 0644;
    a.create.fd = fd;
    vl_gfid_generate(&a.create.gfid);
    assert_int_equal(dt_call(t, VL_FOP_CREATE, &a, &r), 0);
    td_assert_not_before(&r, false, &ref);
    vl_inode_unref(vl_inode_link(f, &r.iatt));
    vl_reply_clear(&r);
    vl_fd_unref(fd);

    memset(&a, 0, sizeof(a));
    a.link.oldloc.inode = f;
    a.link.newloc.parent = d;
    a.link.newloc.name = n1;
    assert_int_equal(dt_call(t, VL_FOP_LINK, &a, &r), 0);
    td_assert_not_before(&r, false, &ref);
    vl_reply_clear(&r);

    memset(&a, 0, sizeof(a));
    a.symlink.loc.parent = d;
    a.symlink.loc.name = n2;
    a.symlink.loc.inode = vl_inode_new(t->graph->itable);
    a.symlink.target = "elsewhere";
    vl_gfid_generate(&a.symlink.gfid);
    assert_int_equal(dt_call(t, VL_FOP_SYMLINK, &a, &r), 0);
    td_assert_not_before(&r, false, &ref);
    vl_inode_unref(a.symlink.loc.inode);
    vl_reply_clear(&r);

    memset(&a, 0, sizeof(a));
    a.rename.oldloc.parent = d;
    a.rename.oldloc.name = n1;
    a.rename.oldloc.inode = f;
    a.rename.newloc.parent = d;
    a.rename.newloc.name = n3;
    assert_int_equal(dt_call(t, VL_FOP_RENAME, &a, &r), 0);
    td_assert_not_before(&r, false, &ref);
    if (r.has_postparent2)
        td_assert_not_before(&r, true, &ref);
    vl_reply_clear(&r);

    memset(&a, 0, sizeof(a));
    a.unlink.loc.parent = d;
    a.unlink.loc.name = n3;
    a.unlink.loc.inode = f;
    assert_int_equal(dt_call(t, VL_FOP_UNLINK, &a, &r), 0);
    td_assert_not_before(&r, false, &ref);
    vl_reply_clear(&r);

    /* On every brick, brick 2 included: its copy's times go back to now
     * (behind the day-ahead ones answered). */
    memset(&a, 0, sizeof(a));
    a.mkdir.loc.parent = d;
    a.mkdir.loc.name = "sub";
    a.mkdir.loc.inode = vl_inode_new(t->graph->itable);
    a.mkdir.mode = 0755;
    vl_gfid_generate(&a.mkdir.gfid);
    assert_int_equal(dt_call(t, VL_FOP_MKDIR, &a, &r), 0);
    td_assert_not_before(&r, false, &ref);
    sub = vl_inode_link(a.mkdir.loc.inode, &r.iatt);
    vl_inode_unref(a.mkdir.loc.inode);
    vl_reply_clear(&r);

    memset(&a, 0, sizeof(a));
    a.rmdir.loc.parent = d;
    a.rmdir.loc.name = "sub";
    a.rmdir.loc.inode = sub;
    assert_int_equal(dt_call(t, VL_FOP_RMDIR, &a, &r), 0);
    td_assert_not_before(&r, false, &ref);
    vl_reply_clear(&r);

    vl_inode_unref(sub);
    vl_inode_unref(f);
    vl_inode_unref(d);
}


static struct vl_iatt
td_times(int64_t m, int64_t c)
{
    struct vl_iatt ia = {.mode = S_IFDIR | 0755};

    ia.atime = m;
    ia.mtime = m;
    ia.ctime = c;
    return ia;
}


static void
test_settle_rules(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = td_dir(t, "d");
    struct vl_iatt ia;

    ia = td_times(50, 60);
    dist_dir_times_settle(t->dist, d, &ia, true);
    assert_int_equal(ia.mtime, 50);
    /* A whole view with an older ctime: an answer overtaken. Raised. */
    ia = td_times(40, 55);
    dist_dir_times_settle(t->dist, d, &ia, true);
    assert_int_equal(ia.mtime, 50);
    assert_int_equal(ia.ctime, 60);
    /* A partial view: raised, whatever its ctime. */
    ia = td_times(45, 70);
    dist_dir_times_settle(t->dist, d, &ia, false);
    assert_int_equal(ia.mtime, 50);
    assert_int_equal(ia.ctime, 70);
    /* A whole view at a newer ctime: taken as it is (utimes). */
    ia = td_times(10, 80);
    dist_dir_times_settle(t->dist, d, &ia, true);
    assert_int_equal(ia.mtime, 10);
    assert_int_equal(ia.ctime, 80);
    /* Nanoseconds count. */
    ia = td_times(10, 80);
    ia.ctime_ns = 5;
    ia.mtime = 9;
    ia.mtime_ns = 999999999;
    dist_dir_times_settle(t->dist, d, &ia, false);
    assert_int_equal(ia.mtime, 10);
    assert_int_equal(ia.mtime_ns, 0);
    assert_int_equal(ia.ctime_ns, 5);
    vl_inode_unref(d);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stat_newest_copy, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_fstat_newest_copy, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_lookup_newest_copy, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_setattr_answer_newest,
                                        dt_setup, dt_teardown),
        cmocka_unit_test_setup_teardown(test_readdirplus_not_back, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_brick_down_not_back, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_utimes_to_past_shows, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_entry_postparent_not_back,
                                        dt_setup, dt_teardown),
        cmocka_unit_test_setup_teardown(test_settle_rules, dt_setup,
                                        dt_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("dist-dirtime", tests, NULL, NULL);
}
