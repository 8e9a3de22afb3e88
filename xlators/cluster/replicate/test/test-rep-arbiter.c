/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rep-arbiter: cluster/replicate with arbiter-count 1 over two
 * in-memory data bricks (rep-fake.c) and an arbiter brick (the real
 * features/arbiter over a third rep-fake): the arbiter gets every change
 * and record but no data, is never read from, and a change that only
 * the arbiter's copy would hold good is refused (doc/replicate.md
 * "Arbiter").
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "builtin.h"
#include "rep-fake.h"
#include "rep.h"
#include "vl-test.h"

/* The arbiter's store is "x-arb": rep-fake's statfs gives it the least
 * space of the three, so a statfs answer from it would show. */
struct ta {
    struct vl_test_graph *g;
    vl_xlator_t *rep;
    vl_xlator_t *store[3]; /* the rep-fakes: b0, b1, x-arb */
    vl_xlator_t *child[3]; /* replicate's children: b0, b1, b2 */
    vl_inode_t *root;
};

#define TA_ARB 2


static struct vl_test_graph *
ta_graph(int n_data, const char *opts, vl_err_t *err /* OUT */)
{
    char text[2048];
    size_t len = 0;

    vl_registry_add(&rep_fake_class);
    vl_registry_add(&xl_cluster_replicate);
    vl_registry_add(&xl_features_arbiter);
    for (int i = 0; i < n_data; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                "volume b%d\n type test/rep-fake\n"
                                "end-volume\n", i);
    len += (size_t)snprintf(text + len, sizeof(text) - len,
                            "volume x-arb\n type test/rep-fake\nend-volume\n"
                            "volume b%d\n type features/arbiter\n"
                            " subvolumes x-arb\nend-volume\n"
                            "volume rep\n type cluster/replicate\n"
                            " option arbiter-count 1\n%s subvolumes",
                            n_data, opts);
    for (int i = 0; i <= n_data; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, " b%d", i);
    snprintf(text + len, sizeof(text) - len, "\nend-volume\n");
    return vl_test_graph_new(text, err);
}


static void
ta_open(struct ta *t, const char *opts)
{
    vl_err_t err = {{0}};

    t->g = ta_graph(2, opts, &err);
    if (t->g == NULL)
        fail_msg("graph: %s", err.msg);
    t->rep = vl_test_graph_xl(t->g, "rep");
    t->store[0] = t->child[0] = vl_test_graph_xl(t->g, "b0");
    t->store[1] = t->child[1] = vl_test_graph_xl(t->g, "b1");
    t->store[2] = vl_test_graph_xl(t->g, "x-arb");
    t->child[2] = vl_test_graph_xl(t->g, "b2");
    t->root = vl_inode_table_root(t->g->graph->itable);
}


static int
ta_setup(void **state)
{
    struct ta *t = calloc(1, sizeof(*t));

    vl_global_init();
    vl_log_set_level(VL_LOG_CRITICAL);
    ta_open(t, "");
    *state = t;
    return 0;
}


static int
ta_setup_quorum_none(void **state)
{
    struct ta *t = calloc(1, sizeof(*t));

    vl_global_init();
    vl_log_set_level(VL_LOG_CRITICAL);
    ta_open(t, " option quorum-type none\n");
    *state = t;
    return 0;
}


static int
ta_teardown(void **state)
{
    struct ta *t = *state;

    for (int i = 0; i < 5; i++)
        if (vl_loop_run_once(t->g->loop, 150) == 0)
            break;
    vl_inode_unref(t->root);
    vl_test_graph_free(t->g);
    free(t);
    return 0;
}


static int
ta_call(struct ta *t, vl_fop_t op, union vl_fop_args *a, struct vl_reply *r)
{
    memset(r, 0, sizeof(*r));
    return vl_sync_call(t->rep, op, a, NULL, r);
}


static void
ta_down(struct ta *t, int i)
{
    fake_set_down(t->store[i], true);
    vl_notify(t->rep, VL_EV_CHILD_DOWN, t->child[i]);
}


static void
ta_up(struct ta *t, int i)
{
    fake_set_down(t->store[i], false);
    vl_notify(t->rep, VL_EV_CHILD_UP, t->child[i]);
}


static int
ta_create(struct ta *t, const char *name, vl_inode_t **out, vl_fd_t **fd_out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->g->graph->itable);
    vl_fd_t *fd = vl_fd_new(inode, O_RDWR, 1);
    int rc;

    a.create.loc.parent = t->root;
    a.create.loc.name = name;
    a.create.loc.inode = inode;
    a.create.flags = O_RDWR | O_CREAT | O_EXCL;
    a.create.mode = 0644;
    a.create.fd = fd;
    vl_gfid_generate(&a.create.gfid);
    rc = ta_call(t, VL_FOP_CREATE, &a, &r);
    if (rc == 0)
        vl_inode_unref(vl_inode_link(inode, &r.iatt));
    vl_reply_clear(&r);
    assert_int_equal(rc, 0);
    *fd_out = fd;
    *out = inode;
    return rc;
}


static int
ta_write(struct ta *t, vl_fd_t *fd, const char *data)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct iovec iov = {.iov_base = (void *)data, .iov_len = strlen(data)};
    int rc;

    a.write.fd = fd;
    a.write.iov = &iov;
    a.write.n_iov = 1;
    rc = ta_call(t, VL_FOP_WRITE, &a, &r);
    if (rc == 0) {
        /* The answer is a data brick's: the file's real size. */
        assert_int_equal(r.count, (int64_t)strlen(data));
        assert_int_equal(r.iatt.size, strlen(data));
    }
    vl_reply_clear(&r);
    return rc;
}


static int
ta_fop_fd(struct ta *t, vl_fop_t op, vl_fd_t *fd)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    if (op == VL_FOP_FLUSH)
        a.flush.fd = fd;
    else
        a.fsync.fd = fd;
    rc = ta_call(t, op, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


static int
ta_read(struct ta *t, vl_fd_t *fd, char *buf, size_t len)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.read.fd = fd;
    a.read.size = len - 1;
    rc = ta_call(t, VL_FOP_READ, &a, &r);
    if (rc == 0) {
        memcpy(buf, r.data, (size_t)r.count);
        buf[r.count] = '\0';
    }
    vl_reply_clear(&r);
    return rc;
}


static int
ta_stat(struct ta *t, vl_inode_t *inode, struct vl_iatt *out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.stat.loc.inode = inode;
    rc = ta_call(t, VL_FOP_STAT, &a, &r);
    *out = r.iatt;
    vl_reply_clear(&r);
    return rc;
}


static int
ta_chmod(struct ta *t, vl_inode_t *inode, uint32_t mode)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.setattr.loc.inode = inode;
    a.setattr.attr.mode = mode;
    a.setattr.valid = VL_SET_MODE;
    rc = ta_call(t, VL_FOP_SETATTR, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


static int
ta_truncate(struct ta *t, vl_inode_t *inode, uint64_t size)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.setattr.loc.inode = inode;
    a.setattr.attr.size = size;
    a.setattr.valid = VL_SET_SIZE;
    rc = ta_call(t, VL_FOP_SETATTR, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


/* Counter k of brick i's record about child `about` on object gfid. */
static int32_t
ta_rec(struct ta *t, int i, const vl_gfid_t *gfid, int about, int k)
{
    uint8_t v[REP_RECORD_SIZE];
    int rc = fake_xattr(t->store[i], gfid, rep_priv(t->rep)->keys[about], v,
                        sizeof(v));

    if (rc == -ENODATA)
        return 0;
    assert_int_equal(rc, REP_RECORD_SIZE);
    return rep_record_get(v, (unsigned)k);
}


static int32_t
ta_dirty(struct ta *t, int i, const vl_gfid_t *gfid, int k)
{
    uint8_t v[REP_RECORD_SIZE];
    int rc = fake_xattr(t->store[i], gfid, REP_KEY_DIRTY, v, sizeof(v));

    if (rc == -ENODATA)
        return 0;
    assert_int_equal(rc, REP_RECORD_SIZE);
    return rep_record_get(v, (unsigned)k);
}


static void
ta_expect_data(struct ta *t, int i, const char *name, const char *want)
{
    char buf[64];

    assert_true(fake_data(t->store[i], &t->root->gfid, name, buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, want);
}


/* ---- tests ---- */

static void
test_arbiter_needs_three(void **state)
{
    vl_err_t err = {{0}};
    struct vl_test_graph *g;

    (void)state;
    vl_global_init();
    vl_log_set_level(VL_LOG_CRITICAL);
    g = ta_graph(1, "", &err);
    assert_null(g);
    assert_non_null(strstr(err.msg, "arbiter-count 1 needs 3 subvolumes"));
    memset(&err, 0, sizeof(err));
    g = ta_graph(3, "", &err);
    assert_null(g);
    assert_non_null(strstr(err.msg, "got 4"));
}


/* Every copy has the name, the GFID and the records; the arbiter's has
 * no data, and reads and the answers' sizes come from data bricks. */
static void
test_arbiter_keeps_no_data(void **state)
{
    struct ta *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;
    vl_gfid_t g0, g2;
    struct vl_iatt st;
    char buf[64];

    ta_create(t, "f", &inode, &fd);
    assert_int_equal(ta_write(t, fd, "hello"), 0);
    assert_int_equal(ta_fop_fd(t, VL_FOP_FLUSH, fd), 0);
    ta_expect_data(t, 0, "f", "hello");
    ta_expect_data(t, 1, "f", "hello");
    ta_expect_data(t, TA_ARB, "f", "");
    assert_int_equal(fake_gfid(t->store[0], &t->root->gfid, "f", &g0), 0);
    assert_int_equal(fake_gfid(t->store[TA_ARB], &t->root->gfid, "f", &g2),
                     0);
    assert_true(vl_gfid_equal(&g0, &g2));
    assert_int_equal(fake_received(t->store[TA_ARB], VL_FOP_WRITE), 0);
    /* Every copy took part in the transaction: clean records. */
    for (int i = 0; i < 3; i++)
        assert_int_equal(ta_dirty(t, i, &inode->gfid, 0), 0);
    assert_int_equal(ta_read(t, fd, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "hello");
    assert_int_equal(ta_stat(t, inode, &st), 0);
    assert_int_equal(st.size, 5);
    assert_int_equal(ta_chmod(t, inode, 0600), 0);
    assert_int_equal(fake_stat(t->store[TA_ARB], &inode->gfid, &st), 0);
    assert_int_equal(st.mode & 07777, 0600);
    assert_int_equal(fake_received(t->store[TA_ARB], VL_FOP_READ), 0);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* Reads of many files spread over the data bricks, never the arbiter;
 * statfs is not the arbiter's either. */
static void
test_arbiter_never_read(void **state)
{
    struct ta *t = *state;
    union vl_fop_args a = {0};
    struct vl_reply r;
    size_t reads[3];

    for (int k = 0; k < 16; k++) {
        char name[16], buf[32];
        vl_inode_t *inode;
        vl_fd_t *fd;
        struct vl_iatt st;

        snprintf(name, sizeof(name), "f%d", k);
        ta_create(t, name, &inode, &fd);
        assert_int_equal(ta_write(t, fd, name), 0);
        assert_int_equal(ta_read(t, fd, buf, sizeof(buf)), 0);
        assert_string_equal(buf, name);
        assert_int_equal(ta_stat(t, inode, &st), 0);
        assert_int_equal(st.size, strlen(name));
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
    for (int i = 0; i < 3; i++)
        reads[i] = fake_received(t->store[i], VL_FOP_READ)
                   + fake_received(t->store[i], VL_FOP_STAT);
    assert_true(reads[0] > 0);
    assert_true(reads[1] > 0);
    /* (the arbiter's own STATs answer the writes: none is a read) */
    assert_int_equal(fake_received(t->store[TA_ARB], VL_FOP_READ), 0);
    assert_int_equal(fake_received(t->store[TA_ARB], VL_FOP_STAT),
                     fake_received(t->child[0], VL_FOP_WRITE));
    assert_int_equal(ta_call(t, VL_FOP_STATFS, &a, &r), 0);
    assert_int_equal(r.statvfs.f_bavail, 500 + '0');
    vl_reply_clear(&r);
}


/* With any one brick down writes go on; the others blame it. */
static void
test_arbiter_write_one_down(void **state)
{
    struct ta *t = *state;

    for (int down = 0; down < 3; down++) {
        char name[8], buf[16];
        vl_inode_t *inode;
        vl_fd_t *fd;

        snprintf(name, sizeof(name), "d%d", down);
        ta_create(t, name, &inode, &fd);
        ta_down(t, down);
        assert_int_equal(ta_write(t, fd, "new"), 0);
        assert_int_equal(ta_fop_fd(t, VL_FOP_FLUSH, fd), 0);
        for (int i = 0; i < 3; i++)
            if (i != down)
                assert_true(ta_rec(t, i, &inode->gfid, down, 0) > 0);
        assert_int_equal(ta_read(t, fd, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "new");
        ta_up(t, down);
        if (down != 0)
            ta_expect_data(t, 0, name, "new");
        if (down != 1)
            ta_expect_data(t, 1, name, "new");
        ta_expect_data(t, TA_ARB, name, "");
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
}


/* Data brick A down, a write, A back, data brick B down: A's copy is
 * stale and the arbiter's has no data, so the file is neither read nor
 * written until B is back. */
static void
test_arbiter_never_sole_good_copy(void **state)
{
    struct ta *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;
    char buf[32];

    ta_create(t, "f", &inode, &fd);
    assert_int_equal(ta_write(t, fd, "v1"), 0);
    assert_int_equal(ta_fop_fd(t, VL_FOP_FLUSH, fd), 0);
    ta_down(t, 0);
    assert_int_equal(ta_write(t, fd, "v2"), 0);
    assert_int_equal(ta_fop_fd(t, VL_FOP_FLUSH, fd), 0);
    assert_true(ta_rec(t, TA_ARB, &inode->gfid, 0, 0) > 0);
    ta_up(t, 0);
    ta_down(t, 1);

    assert_int_equal(ta_read(t, fd, buf, sizeof(buf)), -ENOTCONN);
    assert_int_equal(ta_write(t, fd, "v3"), -ENOTCONN);
    assert_int_equal(ta_fop_fd(t, VL_FOP_FLUSH, fd), 0);
    /* Nothing changed: A keeps its old data and no new dirty count. */
    ta_expect_data(t, 0, "f", "v1");
    assert_int_equal(ta_dirty(t, 0, &inode->gfid, 0), 0);
    assert_int_equal(ta_dirty(t, TA_ARB, &inode->gfid, 0), 0);
    assert_int_equal(ta_rec(t, TA_ARB, &inode->gfid, 0, 0), 1);
    assert_int_equal(atomic_load(&rep_priv(t->rep)->n_arbiter_refused), 1);
    /* A truncate (a data change outside any batch) likewise, and a
     * metadata change: it would leave A good for metadata and B for
     * data, no copy good for both. */
    assert_int_equal(ta_truncate(t, inode, 1), -ENOTCONN);
    assert_int_equal(ta_chmod(t, inode, 0640), -ENOTCONN);
    ta_expect_data(t, 0, "f", "v1");
    assert_int_equal(ta_rec(t, TA_ARB, &inode->gfid, 1, 1), 0);

    /* B back: its data is served again, and writes go on. */
    ta_up(t, 1);
    assert_int_equal(ta_read(t, fd, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "v2");
    assert_int_equal(ta_write(t, fd, "v5"), 0);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* Both data bricks down: with quorum auto the change is below quorum
 * (EROFS); with quorum none the arbiter alone is refused (ENOTCONN) and
 * keeps no trace of the attempt. */
static void
test_arbiter_alone(void **state)
{
    struct ta *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;
    char buf[16];
    struct vl_iatt st;

    ta_create(t, "f", &inode, &fd);
    ta_down(t, 0);
    ta_down(t, 1);
    assert_int_equal(ta_write(t, fd, "x"), -ENOTCONN);
    assert_int_equal(ta_chmod(t, inode, 0600), -ENOTCONN);
    assert_int_equal(ta_read(t, fd, buf, sizeof(buf)), -ENOTCONN);
    assert_int_equal(ta_stat(t, inode, &st), -ENOTCONN);
    assert_int_equal(fake_stat(t->store[TA_ARB], &inode->gfid, &st), 0);
    assert_int_equal(st.mode & 07777, 0644);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(ta_dirty(t, TA_ARB, &inode->gfid, k), 0);
        assert_int_equal(ta_rec(t, TA_ARB, &inode->gfid, 0, k), 0);
    }
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


static void
test_arbiter_alone_quorum_auto(void **state)
{
    struct ta *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;

    ta_create(t, "f", &inode, &fd);
    ta_down(t, 0);
    ta_down(t, 1);
    assert_int_equal(ta_write(t, fd, "x"), -EROFS);
    assert_int_equal(ta_chmod(t, inode, 0600), -EROFS);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* A fop that fails on both data bricks is not a success because the
 * arbiter (which stores nothing) said yes: the data bricks' error, and
 * no copy is blamed. */
static void
test_arbiter_success_alone_is_failure(void **state)
{
    struct ta *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;

    ta_create(t, "f", &inode, &fd);
    fake_fail(t->store[0], VL_FOP_WRITE, -ENOSPC);
    fake_fail(t->store[1], VL_FOP_WRITE, -ENOSPC);
    assert_int_equal(ta_write(t, fd, "x"), -ENOSPC);
    fake_fail(t->store[0], VL_FOP_WRITE, 0);
    fake_fail(t->store[1], VL_FOP_WRITE, 0);
    assert_int_equal(ta_fop_fd(t, VL_FOP_FLUSH, fd), 0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_int_equal(ta_rec(t, i, &inode->gfid, j, 0), 0);
    assert_int_equal(ta_write(t, fd, "y"), 0);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* An eager batch opened while A is stale has B as its good data copy;
 * once a write fails on B (B leaves the batch), that write is answered
 * ENOTCONN and the batch's next writes are refused without reaching A. */
static void
test_arbiter_batch_loses_good_copy(void **state)
{
    struct ta *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;
    size_t a_writes;

    ta_create(t, "f", &inode, &fd);
    ta_down(t, 0);
    assert_int_equal(ta_write(t, fd, "v1"), 0);
    assert_int_equal(ta_fop_fd(t, VL_FOP_FLUSH, fd), 0);
    ta_up(t, 0);
    /* The batch opens on all three; A is blamed by B and the arbiter. */
    assert_int_equal(ta_write(t, fd, "v2"), 0);
    fake_fail(t->store[1], VL_FOP_WRITE, -EIO);
    assert_int_equal(ta_write(t, fd, "v3"), -ENOTCONN);
    fake_fail(t->store[1], VL_FOP_WRITE, 0);
    a_writes = fake_received(t->store[0], VL_FOP_WRITE);
    assert_int_equal(ta_write(t, fd, "v4"), -ENOTCONN);
    assert_int_equal(fake_received(t->store[0], VL_FOP_WRITE), a_writes);
    assert_int_equal(fake_received(t->store[1], VL_FOP_WRITE), 3);
    assert_int_equal(ta_fop_fd(t, VL_FOP_FLUSH, fd), 0);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* The mortar.heal key's answer on inode. */
static void
ta_expect_heal(struct ta *t, vl_inode_t *inode, const char *want)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    char got[32] = "";

    a.getxattr.loc.inode = inode;
    a.getxattr.name = REP_XATTR_HEAL;
    a.getxattr.size = sizeof(got) - 1;
    assert_int_equal(ta_call(t, VL_FOP_GETXATTR, &a, &r), 0);
    assert_non_null(r.xattr);
    memcpy(got, r.xattr, (size_t)r.count);
    vl_reply_clear(&r);
    assert_string_equal(got, want);
}


/* A heal with one brick down (issue 22): data brick `stale` missed a
 * write; with the other data brick down the arbiter is the only copy
 * not blamed, and it holds no data: nothing is healed ("pending", the
 * stale copy and every record as they were) until that brick is back.
 * With the arbiter down, the good data brick heals the stale one. */
static void
test_arbiter_heal_one_down(void **state)
{
    struct ta *t = *state;
    static const int cases[4][2] = {{0, 1}, {1, 0}, {0, TA_ARB},
                                    {1, TA_ARB}};

    for (int c = 0; c < 4; c++) {
        int stale = cases[c][0], down = cases[c][1];
        char name[8];
        vl_inode_t *inode;
        vl_fd_t *fd;

        snprintf(name, sizeof(name), "h%d%d", stale, down);
        ta_create(t, name, &inode, &fd);
        assert_int_equal(ta_write(t, fd, "v1"), 0);
        assert_int_equal(ta_fop_fd(t, VL_FOP_FLUSH, fd), 0);
        ta_down(t, stale);
        assert_int_equal(ta_write(t, fd, "v2"), 0);
        assert_int_equal(ta_fop_fd(t, VL_FOP_FLUSH, fd), 0);
        ta_up(t, stale);
        ta_down(t, down);
        if (down != TA_ARB) {
            ta_expect_heal(t, inode, "pending");
            ta_expect_data(t, stale, name, "v1");
            assert_int_equal(ta_rec(t, TA_ARB, &inode->gfid, stale, 0), 1);
            ta_up(t, down);
            ta_expect_heal(t, inode, "healed");
        } else {
            ta_expect_heal(t, inode, "healed");
            ta_up(t, down);
        }
        ta_expect_data(t, stale, name, "v2");
        assert_int_equal(ta_rec(t, 1 - stale, &inode->gfid, stale, 0), 0);
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arbiter_needs_three),
        cmocka_unit_test_setup_teardown(test_arbiter_keeps_no_data,
                                        ta_setup, ta_teardown),
        cmocka_unit_test_setup_teardown(test_arbiter_never_read, ta_setup,
                                        ta_teardown),
        cmocka_unit_test_setup_teardown(test_arbiter_write_one_down,
                                        ta_setup, ta_teardown),
        cmocka_unit_test_setup_teardown(test_arbiter_never_sole_good_copy,
                                        ta_setup, ta_teardown),
        cmocka_unit_test_setup_teardown(test_arbiter_alone,
                                        ta_setup_quorum_none, ta_teardown),
        cmocka_unit_test_setup_teardown(test_arbiter_alone_quorum_auto,
                                        ta_setup, ta_teardown),
        cmocka_unit_test_setup_teardown(test_arbiter_success_alone_is_failure,
                                        ta_setup, ta_teardown),
        cmocka_unit_test_setup_teardown(test_arbiter_batch_loses_good_copy,
                                        ta_setup, ta_teardown),
        cmocka_unit_test_setup_teardown(test_arbiter_heal_one_down,
                                        ta_setup, ta_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
