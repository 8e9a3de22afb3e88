/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rep: cluster/replicate over three (or two) in-memory bricks
 * (rep-fake.c): transactions and the records they leave, reads that
 * avoid blamed copies, quorum, lookup comparison, and every request
 * answered once under allocation failure.
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
#include "rep-heal.h"
#include "rep-test.h"

static int
setup3(void **state)
{
    return setup_n(state, 3, "");
}


/* Three bricks, no heal on access: a test that watches which copy
 * reads go to must not see a background heal make the stale one good. */
static int
setup3_no_bg_heal(void **state)
{
    return setup_n(state, 3, " option background-self-heal-count 0\n");
}


static int
setup2(void **state)
{
    return setup_n(state, 2, "");
}


static int
t_create(struct t *t, const char *name, vl_inode_t **out, vl_fd_t **fd_out)
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
    rc = t_call(t, VL_FOP_CREATE, &a, &r);
    if (rc == 0) {
        vl_inode_t *linked = vl_inode_link(inode, &r.iatt);

        assert_true(linked == inode);
        vl_inode_unref(linked);
    }
    vl_reply_clear(&r);
    if (rc == 0 && fd_out != NULL)
        *fd_out = fd;
    else
        vl_fd_unref(fd);
    if (rc == 0 && out != NULL)
        *out = inode;
    else
        vl_inode_unref(inode);
    return rc;
}


static int
t_open(struct t *t, vl_inode_t *inode, vl_fd_t **fd_out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_fd_t *fd = vl_fd_new(inode, O_RDWR, 1);
    int rc;

    a.open.loc.inode = inode;
    a.open.flags = O_RDWR;
    a.open.fd = fd;
    rc = t_call(t, VL_FOP_OPEN, &a, &r);
    vl_reply_clear(&r);
    if (rc == 0)
        *fd_out = fd;
    else
        vl_fd_unref(fd);
    return rc;
}


static int
t_write(struct t *t, vl_fd_t *fd, off_t off, const char *data)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct iovec iov = {.iov_base = (void *)data, .iov_len = strlen(data)};
    int rc;

    a.write.fd = fd;
    a.write.iov = &iov;
    a.write.n_iov = 1;
    a.write.offset = off;
    rc = t_call(t, VL_FOP_WRITE, &a, &r);
    if (rc == 0)
        assert_int_equal(r.count, (int64_t)strlen(data));
    vl_reply_clear(&r);
    return rc;
}


/* Ends the fd's write batch (as close does). */
static int
t_flush(struct t *t, vl_fd_t *fd)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.flush.fd = fd;
    rc = t_call(t, VL_FOP_FLUSH, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


static int
t_read(struct t *t, vl_fd_t *fd, char *buf, size_t len)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.read.fd = fd;
    a.read.size = len - 1;
    rc = t_call(t, VL_FOP_READ, &a, &r);
    if (rc == 0) {
        memcpy(buf, r.data, (size_t)r.count);
        buf[r.count] = '\0';
    }
    vl_reply_clear(&r);
    return rc;
}


/* mkdir name in the root: its status (t_mkdir asserts success). */
static int
t_mkdir_status(struct t *t, const char *name)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->g->graph->itable);
    int rc;

    a.mkdir.loc.parent = t->root;
    a.mkdir.loc.name = name;
    a.mkdir.loc.inode = inode;
    a.mkdir.mode = 0755;
    vl_gfid_generate(&a.mkdir.gfid);
    rc = t_call(t, VL_FOP_MKDIR, &a, &r);
    vl_reply_clear(&r);
    vl_inode_unref(inode);
    return rc;
}


/* Counter k of the record key on brick i's copy of gfid (0 if none). */
static int32_t
t_rec(struct t *t, int i, const vl_gfid_t *gfid, const char *key, int k)
{
    uint8_t v[REP_RECORD_SIZE];
    int rc = fake_xattr(t->b[i], gfid, key, v, sizeof(v));

    if (rc == -ENODATA)
        return 0;
    assert_int_equal(rc, REP_RECORD_SIZE);
    return rep_record_get(v, (unsigned)k);
}


static bool
t_has_rec(struct t *t, int i, const vl_gfid_t *gfid, const char *key)
{
    uint8_t v[REP_RECORD_SIZE];

    return fake_xattr(t->b[i], gfid, key, v, sizeof(v)) != -ENODATA;
}


/* ---- tests ---- */

static void
test_class(void **state)
{
    vl_err_t err = {{0}};

    (void)state;
    if (vl_test_check_class(&xl_cluster_replicate, &err) != 0)
        fail_msg("%s", err.msg);
}


/* A write goes to every copy; a clean transaction leaves no record. */
static void
test_write_everywhere_clean(void **state)
{
    struct t *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;
    char buf[64];
    vl_gfid_t g;

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    assert_int_equal(t_write(t, fd, 0, "hello"), 0);
    assert_int_equal(t_flush(t, fd), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fake_data(t->b[i], &vl_gfid_root, "f", buf,
                                   sizeof(buf)), 5);
        assert_string_equal(buf, "hello");
        assert_int_equal(fake_gfid(t->b[i], &vl_gfid_root, "f", &g), 0);
        assert_true(vl_gfid_equal(&g, &inode->gfid));
        assert_false(t_has_rec(t, i, &inode->gfid, REP_KEY_DIRTY));
        assert_false(t_has_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY));
        for (int j = 0; j < 3; j++) {
            char key[64];

            snprintf(key, sizeof(key), REP_KEY_PREFIX "b%d", j);
            assert_false(t_has_rec(t, i, &inode->gfid, key));
        }
        /* Lock, pre-op, write, post-op, unlock on every child. */
        assert_int_equal(fake_received(t->b[i], VL_FOP_WRITE), 1);
        assert_int_equal(fake_received(t->b[i], VL_FOP_INODELK), 2);
        assert_int_equal(fake_received(t->b[i], VL_FOP_ENTRYLK), 2);
    }
    assert_int_equal(t_read(t, fd, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "hello");
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* A write that fails on one child is recorded against it on the others;
 * its own copy keeps dirty set (its transaction was not closed). */
static void
test_write_fails_on_one(void **state)
{
    struct t *t = *state;
    struct rep_priv *priv = rep_priv(t->rep);
    vl_inode_t *inode;
    vl_fd_t *fd;
    char buf[64];

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    fake_fail(t->b[1], VL_FOP_WRITE, -EIO);
    assert_int_equal(t_write(t, fd, 0, "abc"), 0);
    fake_fail(t->b[1], VL_FOP_WRITE, 0);
    /* Recorded before the write was answered, batch or not. */
    assert_int_equal(t_rec(t, 0, &inode->gfid, REP_KEY_PREFIX "b1",
                           REP_DATA), 1);
    assert_int_equal(t_flush(t, fd), 0);
    assert_int_equal(t_rec(t, 2, &inode->gfid, REP_KEY_PREFIX "b1",
                           REP_DATA), 1);
    assert_int_equal(t_rec(t, 0, &inode->gfid, REP_KEY_PREFIX "b1",
                           REP_METADATA), 0);
    assert_false(t_has_rec(t, 0, &inode->gfid, REP_KEY_DIRTY));
    assert_false(t_has_rec(t, 2, &inode->gfid, REP_KEY_DIRTY));
    assert_int_equal(t_rec(t, 1, &inode->gfid, REP_KEY_DIRTY, REP_DATA), 1);
    assert_false(t_has_rec(t, 1, &inode->gfid, REP_KEY_PREFIX "b0"));
    assert_int_equal(atomic_load(&priv->n_txn_blamed), 1);
    /* Reads from now on avoid the copy that missed the write. */
    for (int k = 0; k < 6; k++) {
        assert_int_equal(t_read(t, fd, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "abc");
    }
    assert_int_equal(fake_received(t->b[1], VL_FOP_READ), 0);
    /* A second failure adds to the count. */
    fake_fail(t->b[1], VL_FOP_WRITE, -EIO);
    assert_int_equal(t_flush(t, fd), 0);
    assert_int_equal(t_write(t, fd, 3, "d"), 0);
    fake_fail(t->b[1], VL_FOP_WRITE, 0);
    assert_int_equal(t_rec(t, 0, &inode->gfid, REP_KEY_PREFIX "b1",
                           REP_DATA), 2);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* A child known down is blamed by the pre-op; the write succeeds. */
static void
test_write_child_down(void **state)
{
    struct t *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;
    char buf[64];

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    t_down(t, 2);
    size_t before = fake_received_all(t->b[2]);
    assert_int_equal(t_write(t, fd, 0, "xyz"), 0);
    assert_int_equal(t_flush(t, fd), 0);
    assert_int_equal(fake_received_all(t->b[2]), before);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(t_rec(t, i, &inode->gfid, REP_KEY_PREFIX "b2",
                               REP_DATA), 1);
        assert_false(t_has_rec(t, i, &inode->gfid, REP_KEY_DIRTY));
        assert_int_equal(fake_data(t->b[i], &vl_gfid_root, "f", buf,
                                   sizeof(buf)), 3);
    }
    assert_int_equal(fake_data(t->b[2], &vl_gfid_root, "f", buf,
                               sizeof(buf)), 0);
    /* An entry change with the child down marks the parent. */
    assert_int_equal(t_mkdir_status(t, "d"), 0);
    assert_int_equal(t_rec(t, 0, &vl_gfid_root, REP_KEY_PREFIX "b2",
                           REP_ENTRY), 1); /* the mkdir */
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* Below quorum nothing is sent anywhere and the answer is EROFS. */
static void
test_quorum_below(void **state)
{
    struct t *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;
    size_t before[3];

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    t_down(t, 1);
    t_down(t, 2);
    for (int i = 0; i < 3; i++)
        before[i] = fake_received_all(t->b[i]);
    assert_int_equal(t_write(t, fd, 0, "no"), -EROFS);
    assert_int_equal(t_create(t, "g", NULL, NULL), -EROFS);
    assert_int_equal(t_mkdir_status(t, "d"), -EROFS);
    for (int i = 0; i < 3; i++)
        assert_int_equal(fake_received_all(t->b[i]), before[i]);
    /* Reads refuse too: the up copy could be the stale one. */
    {
        char buf[16];

        assert_int_equal(t_read(t, fd, buf, sizeof(buf)), -ENOTCONN);
    }
    t_up(t, 2);
    assert_int_equal(t_write(t, fd, 0, "ok"), 0);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* The data records of gfid on the three copies (t_pick's layout: slot
 * j of copy i, j == 3 dirty), and rep_heal_pick's verdict on them. */
static enum rep_heal_verdict
t_pick_now(struct t *t, const vl_gfid_t *gfid, rep_mask_t *sources,
           rep_mask_t *sinks)
{
    static uint8_t buf[3][4 * REP_RECORD_SIZE];
    static const char *const keys[4] = {REP_KEY_PREFIX "b0",
                                        REP_KEY_PREFIX "b1",
                                        REP_KEY_PREFIX "b2", REP_KEY_DIRTY};
    const uint8_t *rec[3];

    memset(buf, 0, sizeof(buf));
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 4; j++)
            rep_record_set(buf[i] + j * REP_RECORD_SIZE, REP_DATA,
                           t_rec(t, i, gfid, keys[j], REP_DATA));
        rec[i] = buf[i];
    }
    return rep_heal_pick(3, 0x7, rec, REP_DATA, sources, sinks);
}


/* The fop succeeded on fewer than quorum children: reported failed
 * (EROFS), and the copy that has it blames nobody: it keeps dirty, as
 * do the others. Then (a partition: the other side goes on without b0)
 * b1 and b2 take writes that blame b0, and heal's choice is theirs:
 * had b0 blamed them, each side would blame the other (split-brain). */
static void
test_quorum_after_fop(void **state)
{
    struct t *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;
    rep_mask_t sources, sinks;

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    assert_int_equal(t_flush(t, fd), 0);
    fake_fail(t->b[1], VL_FOP_WRITE, -EIO);
    fake_fail(t->b[2], VL_FOP_WRITE, -ENOSPC);
    assert_int_equal(t_write(t, fd, 0, "one"), -EROFS);
    assert_int_equal(t_flush(t, fd), 0);
    fake_fail(t->b[1], VL_FOP_WRITE, 0);
    fake_fail(t->b[2], VL_FOP_WRITE, 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(t_rec(t, i, &inode->gfid, REP_KEY_DIRTY, REP_DATA),
                         1);
        for (int j = 0; j < 3; j++) {
            char key[64];

            snprintf(key, sizeof(key), REP_KEY_PREFIX "b%d", j);
            assert_int_equal(t_rec(t, i, &inode->gfid, key, REP_DATA), 0);
        }
    }
    assert_int_equal(t_pick_now(t, &inode->gfid, &sources, &sinks),
                     REP_HV_COMPARE);
    t_down(t, 0);
    assert_int_equal(t_write(t, fd, 0, "two"), 0);
    assert_int_equal(t_flush(t, fd), 0);
    t_up(t, 0);
    assert_int_equal(t_pick_now(t, &inode->gfid, &sources, &sinks),
                     REP_HV_NEEDED);
    assert_int_equal(sources, 0x6);
    assert_int_equal(sinks, 0x1);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* The same without eager locking (an entry fop): a create that only b0
 * made is EROFS, and b0 blames nobody for the directory. */
static void
test_quorum_after_entry_fop(void **state)
{
    struct t *t = *state;

    fake_fail(t->b[1], VL_FOP_CREATE, -EIO);
    fake_fail(t->b[2], VL_FOP_CREATE, -ENOSPC);
    assert_int_equal(t_create(t, "g", NULL, NULL), -EROFS);
    fake_fail(t->b[1], VL_FOP_CREATE, 0);
    fake_fail(t->b[2], VL_FOP_CREATE, 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(t_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY,
                               REP_ENTRY), 1);
        assert_false(t_has_rec(t, i, &vl_gfid_root, REP_KEY_PREFIX "b1")
                     && t_rec(t, i, &vl_gfid_root, REP_KEY_PREFIX "b1",
                              REP_ENTRY) != 0);
        assert_false(t_has_rec(t, i, &vl_gfid_root, REP_KEY_PREFIX "b2")
                     && t_rec(t, i, &vl_gfid_root, REP_KEY_PREFIX "b2",
                              REP_ENTRY) != 0);
    }
}


/* A fop that fails on every child changed nothing: the error comes back
 * and the pre-op is undone everywhere. */
static void
test_fails_everywhere(void **state)
{
    struct t *t = *state;

    assert_int_equal(t_create(t, "f", NULL, NULL), 0);
    assert_int_equal(t_create(t, "f", NULL, NULL), -EEXIST);
    for (int i = 0; i < 3; i++) {
        assert_false(t_has_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY));
        for (int j = 0; j < 3; j++) {
            char key[64];

            snprintf(key, sizeof(key), REP_KEY_PREFIX "b%d", j);
            assert_false(t_has_rec(t, i, &vl_gfid_root, key));
        }
    }
    /* The same with a child down: its pending +1 is undone too. */
    t_down(t, 2);
    assert_int_equal(t_create(t, "f", NULL, NULL), -EEXIST);
    assert_false(t_has_rec(t, 0, &vl_gfid_root, REP_KEY_PREFIX "b2"));
    assert_false(t_has_rec(t, 0, &vl_gfid_root, REP_KEY_DIRTY));
}


/* Files whose copy on b1 is stale (blamed by b0 and b2): lookups and
 * reads never serve b1's content, whichever child the hash picks. */
static void
test_reads_avoid_blamed(void **state)
{
    struct t *t = *state;
    uint8_t blame[REP_RECORD_SIZE] = {0};

    rep_record_set(blame, REP_DATA, 1);
    for (int f = 0; f < 12; f++) {
        vl_gfid_t g = {{0}};
        char name[16], buf[64];
        vl_inode_t *inode;
        vl_fd_t *fd;

        g.bytes[0] = 0x42;
        g.bytes[15] = (uint8_t)(f + 7);
        snprintf(name, sizeof(name), "s%d", f);
        for (int i = 0; i < 3; i++)
            assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, name, &g,
                                         i == 1 ? "stale" : "good"), 0);
        assert_int_equal(fake_set_xattr(t->b[0], &g, REP_KEY_PREFIX "b1",
                                        blame, sizeof(blame)), 0);
        assert_int_equal(fake_set_xattr(t->b[2], &g, REP_KEY_PREFIX "b1",
                                        blame, sizeof(blame)), 0);
        assert_int_equal(t_lookup(t, name, &inode), 0);
        assert_int_equal(t_open(t, inode, &fd), 0);
        assert_int_equal(t_read(t, fd, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "good");
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
    assert_int_equal(fake_received(t->b[1], VL_FOP_READ), 0);
}


/* Reads of clean files spread over the children. */
static void
test_reads_spread(void **state)
{
    struct t *t = *state;

    for (int f = 0; f < 24; f++) {
        vl_gfid_t g = {{0}};
        char name[16], buf[64];
        vl_inode_t *inode;
        vl_fd_t *fd;

        g.bytes[0] = 0x17;
        g.bytes[14] = (uint8_t)(f * 37);
        g.bytes[15] = (uint8_t)f;
        snprintf(name, sizeof(name), "c%d", f);
        for (int i = 0; i < 3; i++)
            assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, name, &g,
                                         "same"), 0);
        assert_int_equal(t_lookup(t, name, &inode), 0);
        assert_int_equal(t_open(t, inode, &fd), 0);
        assert_int_equal(t_read(t, fd, buf, sizeof(buf)), 0);
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
    for (int i = 0; i < 3; i++)
        assert_true(fake_received(t->b[i], VL_FOP_READ) > 0);
}


/* RCHECKSUM goes like a read: to one good copy, never to a blamed one
 * (b0, the first child, which a pass-through would pick), spread over
 * the others. Self-heal is off, so b0 stays blamed throughout. */
static void
test_rchecksum_like_read(void **state)
{
    struct t *t = calloc(1, sizeof(*t));
    uint8_t blame[REP_RECORD_SIZE] = {0};

    (void)state;
    assert_non_null(t);
    vl_global_init();
    vl_log_set_level(VL_LOG_CRITICAL);
    t_open_graph(t, 3, " option data-self-heal off\n");
    *state = t;

    rep_record_set(blame, REP_DATA, 1);
    for (int f = 0; f < 24; f++) {
        vl_gfid_t g = {{0}};
        union vl_fop_args a = {0};
        struct vl_reply r;
        char name[16];
        vl_inode_t *inode;
        vl_fd_t *fd;

        g.bytes[0] = 0x5c;
        g.bytes[15] = (uint8_t)(f + 1); /* odd and even: both picks */
        snprintf(name, sizeof(name), "k%d", f);
        for (int i = 0; i < 3; i++)
            assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, name, &g,
                                         i == 0 ? "stale" : "good"), 0);
        for (int i = 1; i < 3; i++)
            assert_int_equal(fake_set_xattr(t->b[i], &g,
                                            REP_KEY_PREFIX "b0", blame,
                                            sizeof(blame)),
                             0);
        assert_int_equal(t_lookup(t, name, &inode), 0);
        assert_int_equal(t_open(t, inode, &fd), 0);
        a.rchecksum.fd = fd;
        a.rchecksum.len = 65536;
        a.rchecksum.block_size = 4096;
        assert_int_equal(t_call(t, VL_FOP_RCHECKSUM, &a, &r), 0);
        assert_int_equal(r.iatt.size, 4); /* "good" */
        vl_reply_clear(&r);
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
    assert_int_equal(fake_received(t->b[0], VL_FOP_RCHECKSUM), 0);
    assert_true(fake_received(t->b[1], VL_FOP_RCHECKSUM) > 0);
    assert_true(fake_received(t->b[2], VL_FOP_RCHECKSUM) > 0);
    assert_int_equal(fake_received(t->b[1], VL_FOP_RCHECKSUM)
                         + fake_received(t->b[2], VL_FOP_RCHECKSUM),
                     24);
}


/* A read whose child went away is answered by another good copy. */
static void
test_read_retries(void **state)
{
    struct t *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;
    char buf[64];

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    assert_int_equal(t_write(t, fd, 0, "data"), 0);
    /* Down without the notice yet: the brick answers ENOTCONN. */
    for (int i = 0; i < 3; i++) {
        fake_set_down(t->b[i], true);
        if (t_read(t, fd, buf, sizeof(buf)) == 0)
            assert_string_equal(buf, "data");
        fake_set_down(t->b[i], false);
    }
    fake_set_down(t->b[0], true);
    fake_set_down(t->b[1], true);
    assert_int_equal(t_read(t, fd, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "data");
    fake_set_down(t->b[0], false);
    fake_set_down(t->b[1], false);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* Locks are tried on every child at once; when one is held elsewhere
 * (EAGAIN) the granted ones are given back and all are taken again,
 * waiting, one child after another. */
static void
test_lock_contention(void **state)
{
    struct t *t = *state;
    size_t lk[3];

    for (int i = 0; i < 3; i++)
        lk[i] = fake_received(t->b[i], VL_FOP_ENTRYLK);
    assert_int_equal(t_mkdir_status(t, "quiet"), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fake_received(t->b[i], VL_FOP_ENTRYLK), lk[i] + 2);
        lk[i] += 2;
    }
    fake_set_lock_busy(t->b[1], true);
    assert_int_equal(t_mkdir_status(t, "busy"), 0);
    fake_set_lock_busy(t->b[1], false);
    /* b0, b2: try, give back, wait, unlock; b1: try (EAGAIN), wait,
     * unlock. */
    assert_int_equal(fake_received(t->b[0], VL_FOP_ENTRYLK), lk[0] + 4);
    assert_int_equal(fake_received(t->b[1], VL_FOP_ENTRYLK), lk[1] + 3);
    assert_int_equal(fake_received(t->b[2], VL_FOP_ENTRYLK), lk[2] + 4);
    for (int i = 0; i < 3; i++) {
        vl_gfid_t g;

        assert_int_equal(fake_gfid(t->b[i], &vl_gfid_root, "busy", &g), 0);
        assert_false(t_has_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY));
    }
}


/* An fd opened while a child was down is opened on it once it is back,
 * before the next write; a child without the file stays out. */
static void
test_reopen(void **state)
{
    struct t *t = *state;
    vl_inode_t *inode, *inode2;
    vl_fd_t *fd, *fd2;

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    assert_int_equal(t_flush(t, fd), 0);
    vl_fd_unref(fd);
    t_down(t, 2);
    assert_int_equal(t_open(t, inode, &fd2), 0);
    assert_int_equal(t_create(t, "g", &inode2, NULL), 0);
    t_up(t, 2);
    assert_int_equal(t_write(t, fd2, 0, "back"), 0);
    assert_int_equal(t_flush(t, fd2), 0);
    assert_int_equal(fake_received(t->b[2], VL_FOP_WRITE), 1);
    assert_false(t_has_rec(t, 0, &inode->gfid, REP_KEY_PREFIX "b2"));
    assert_false(t_has_rec(t, 0, &inode->gfid, REP_KEY_DIRTY));
    /* g was created while b2 was down: b2 has no copy to open. */
    assert_int_equal(t_open(t, inode2, &fd), 0);
    vl_fd_unref(fd);
    vl_fd_unref(fd2);
    vl_inode_unref(inode);
    vl_inode_unref(inode2);
}


/* A file's and a directory's fd opened while two children were down
 * still read and list once those are back and the one child they were
 * open on is gone: they are opened on the returned children first.
 * Quorum none: one child up may serve. */
static int
setup3_no_quorum(void **state)
{
    return setup_n(state, 3, " option quorum-type none\n");
}


static void
test_reopen_read(void **state)
{
    struct t *t = *state;
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode, *dir;
    vl_fd_t *fd, *dfd;
    size_t opens[3], opendirs[3];
    char buf[16];

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    assert_int_equal(t_write(t, fd, 0, "data"), 0);
    assert_int_equal(t_flush(t, fd), 0);
    vl_fd_unref(fd);
    assert_int_equal(t_mkdir_status(t, "d"), 0);
    assert_int_equal(t_lookup(t, "d", &dir), 0);
    t_down(t, 1);
    t_down(t, 2);
    assert_int_equal(t_open(t, inode, &fd), 0);
    dfd = vl_fd_new(dir, O_RDONLY, 1);
    a.opendir.loc.inode = dir;
    a.opendir.fd = dfd;
    assert_int_equal(t_call(t, VL_FOP_OPENDIR, &a, &r), 0);
    vl_reply_clear(&r);
    t_up(t, 1);
    t_up(t, 2);
    t_down(t, 0);
    for (int i = 0; i < 3; i++) {
        opens[i] = fake_received(t->b[i], VL_FOP_OPEN);
        opendirs[i] = fake_received(t->b[i], VL_FOP_OPENDIR);
    }
    assert_int_equal(t_read(t, fd, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "data");
    memset(&a, 0, sizeof(a));
    a.readdir.fd = dfd;
    a.readdir.size = 4096;
    assert_int_equal(t_call(t, VL_FOP_READDIR, &a, &r), 0);
    vl_reply_clear(&r);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(fake_received(t->b[i], VL_FOP_OPEN), opens[i] + 1);
        assert_int_equal(fake_received(t->b[i], VL_FOP_OPENDIR),
                         opendirs[i] + 1);
    }
    /* Opened there now: a second read reopens nothing. */
    assert_int_equal(t_read(t, fd, buf, sizeof(buf)), 0);
    assert_int_equal(fake_received(t->b[1], VL_FOP_OPEN), opens[1] + 1);
    vl_fd_unref(fd);
    vl_fd_unref(dfd);
    vl_inode_unref(inode);
    vl_inode_unref(dir);
}


/* A fop of fd (write "S" at 0, chmod, fsync, fstat) through replicate:
 * the attributes it answers. */
static struct vl_iatt
t_fd_attrs(struct t *t, vl_fop_t op, vl_fd_t *fd)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct iovec iov = {.iov_base = "S", .iov_len = 1};
    struct vl_iatt ia;

    switch (op) {
    case VL_FOP_WRITE:
        a.write.fd = fd;
        a.write.iov = &iov;
        a.write.n_iov = 1;
        break;
    case VL_FOP_SETATTR:
        a.setattr.fd = fd;
        a.setattr.loc.inode = fd->inode;
        a.setattr.attr.mode = 0600;
        a.setattr.valid = VL_SET_MODE;
        break;
    case VL_FOP_FSYNC:
        a.fsync.fd = fd;
        break;
    default:
        a.stat.fd = fd;
        a.stat.loc.inode = fd->inode;
        break;
    }
    assert_int_equal(t_call(t, op, &a, &r), 0);
    ia = r.iatt;
    vl_reply_clear(&r);
    return ia;
}


/* A copy that missed writes (b0 down while the file grew) is back and
 * takes part in the next changes before it is healed. Every answer that
 * goes up carries a good copy's attributes: the kernel takes the size
 * of a write's, setattr's, fsync's or open's answer (write-behind keeps
 * them and answers a chmod from them) and cuts reads there. Reads never
 * go to b0. The fake bricks answer in child order: b0's answer comes
 * first. */
static void
test_answers_from_good_copy(void **state)
{
    struct t *t = *state;
    vl_inode_t *inode, *found;
    vl_fd_t *fd, *fd2;
    char big[2001], buf[4096];
    size_t writes;
    union vl_fop_args a = {0};
    struct vl_reply r;

    memset(big, 'x', 2000);
    big[2000] = '\0';
    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    assert_int_equal(t_write(t, fd, 0, "short"), 0);
    assert_int_equal(t_flush(t, fd), 0);
    t_down(t, 0);
    assert_int_equal(t_write(t, fd, 5, big), 0);
    assert_int_equal(t_flush(t, fd), 0);
    t_up(t, 0);
    assert_int_equal(t_rec(t, 1, &inode->gfid, t->key[0], REP_DATA), 1);
    writes = fake_received(t->b[0], VL_FOP_WRITE);

    assert_int_equal(t_fd_attrs(t, VL_FOP_WRITE, fd).size, 2005);
    /* b0 took part in it (its copy is still short and blamed). */
    assert_int_equal(fake_received(t->b[0], VL_FOP_WRITE), writes + 1);
    assert_int_equal(t_fd_attrs(t, VL_FOP_SETATTR, fd).size, 2005);
    assert_int_equal(t_fd_attrs(t, VL_FOP_FSYNC, fd).size, 2005);
    assert_int_equal(t_fd_attrs(t, VL_FOP_STAT, fd).size, 2005);
    assert_int_equal(t_rec(t, 1, &inode->gfid, t->key[0], REP_DATA), 1);
    assert_int_equal(t_rec(t, 2, &inode->gfid, t->key[0], REP_DATA), 1);

    a.open.loc.inode = inode;
    a.open.flags = O_RDWR;
    a.open.fd = fd2 = vl_fd_new(inode, O_RDWR, 1);
    assert_int_equal(t_call(t, VL_FOP_OPEN, &a, &r), 0);
    assert_int_equal(r.iatt.size, 2005);
    vl_reply_clear(&r);
    assert_int_equal(t_read(t, fd2, buf, sizeof(buf)), 0);
    assert_int_equal(strlen(buf), 2005);
    assert_int_equal(buf[0], 'S');
    assert_int_equal(fake_received(t->b[0], VL_FOP_READ), 0);
    assert_int_equal(t_lookup(t, "f", &found), 0);
    assert_int_equal(t_fd_attrs(t, VL_FOP_STAT, fd2).size, 2005);
    vl_inode_unref(found);
    vl_fd_unref(fd2);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* Copies with different GFIDs under one name: an error, not a guess. */
static void
test_lookup_gfid_mismatch(void **state)
{
    struct t *t = *state;
    vl_gfid_t a, b;

    vl_gfid_generate(&a);
    vl_gfid_generate(&b);
    assert_int_equal(fake_mkfile(t->b[0], &vl_gfid_root, "m", &a, "x"), 0);
    assert_int_equal(fake_mkfile(t->b[1], &vl_gfid_root, "m", &b, "y"), 0);
    assert_int_equal(fake_mkfile(t->b[2], &vl_gfid_root, "m", &b, "y"), 0);
    assert_int_equal(t_lookup(t, "m", NULL), -EIO);
}


/* Every copy blamed by another: split-brain, EIO. */
static void
test_lookup_split_brain(void **state)
{
    struct t *t = *state;
    uint8_t blame[REP_RECORD_SIZE] = {0};
    union vl_fop_args a;
    struct vl_reply r;
    vl_inode_t *inode;
    vl_fd_t *fd;
    char buf[8];
    vl_gfid_t g;

    vl_gfid_generate(&g);
    rep_record_set(blame, REP_DATA, 1);
    for (int i = 0; i < 3; i++) {
        char key[64];

        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "sb", &g,
                                     "v"), 0);
        snprintf(key, sizeof(key), REP_KEY_PREFIX "b%d", (i + 1) % 3);
        assert_int_equal(fake_set_xattr(t->b[i], &g, key, blame,
                                        sizeof(blame)), 0);
    }
    /* Answered (GlusterFS does too): stat and the resolve keys name it;
     * its data neither reads nor changes; its metadata, not in
     * split-brain, does. */
    assert_int_equal(t_lookup(t, "sb", &inode), 0);
    assert_true(vl_gfid_equal(&inode->gfid, &g));
    memset(&a, 0, sizeof(a));
    a.stat.loc.inode = inode;
    assert_int_equal(t_call(t, VL_FOP_STAT, &a, &r), 0);
    assert_true(vl_gfid_equal(&r.iatt.gfid, &g));
    vl_reply_clear(&r);
    assert_int_equal(t_open(t, inode, &fd), 0);
    assert_int_equal(t_read(t, fd, buf, sizeof(buf)), -EIO);
    assert_int_equal(t_write(t, fd, 0, "w"), -EIO);
    assert_int_equal(t_flush(t, fd), 0);
    for (int i = 0; i < 3; i++) {
        assert_true(fake_data(t->b[i], &vl_gfid_root, "sb", buf,
                              sizeof(buf)) >= 0);
        assert_string_equal(buf, "v");
        assert_int_equal(fake_received(t->b[i], VL_FOP_WRITE), 0);
    }
    memset(&a, 0, sizeof(a));
    a.setattr.loc.inode = inode;
    a.setattr.attr.mode = 0600;
    a.setattr.valid = VL_SET_MODE;
    assert_int_equal(t_call(t, VL_FOP_SETATTR, &a, &r), 0);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* A name a blamed copy of the directory still has is not served. */
static void
test_lookup_stale_entry(void **state)
{
    struct t *t = *state;
    uint8_t blame[REP_RECORD_SIZE] = {0};
    vl_gfid_t g;

    vl_gfid_generate(&g);
    rep_record_set(blame, REP_ENTRY, 1);
    /* "gone" was removed while b2 was down: only b2 has it. */
    assert_int_equal(fake_mkfile(t->b[2], &vl_gfid_root, "gone", &g, "o"),
                     0);
    assert_int_equal(fake_set_xattr(t->b[0], &vl_gfid_root,
                                    REP_KEY_PREFIX "b2", blame,
                                    sizeof(blame)), 0);
    assert_int_equal(fake_set_xattr(t->b[1], &vl_gfid_root,
                                    REP_KEY_PREFIX "b2", blame,
                                    sizeof(blame)), 0);
    assert_int_equal(t_lookup(t, "gone", NULL), -ENOENT);
}


/* auto quorum with two children: the first alone may write, the second
 * alone may not. */
static void
test_quorum_auto_two(void **state)
{
    struct t *t = *state;

    assert_true(rep_has_quorum(t->rep, 0x3));
    assert_true(rep_has_quorum(t->rep, 0x1));
    assert_false(rep_has_quorum(t->rep, 0x2));
    assert_false(rep_has_quorum(t->rep, 0x0));
    t_down(t, 0);
    assert_int_equal(t_create(t, "f", NULL, NULL), -EROFS);
    t_up(t, 0);
    t_down(t, 1);
    assert_int_equal(t_create(t, "f", NULL, NULL), 0);
}


static void
test_quorum_options(void **state)
{
    struct t t = {0};

    (void)state;
    t_open_graph(&t, 3, " option quorum-type fixed\n"
                        " option quorum-count 3\n");
    assert_false(rep_has_quorum(t.rep, 0x3));
    assert_true(rep_has_quorum(t.rep, 0x7));
    vl_inode_unref(t.root);
    vl_test_graph_free(t.g);
    t_open_graph(&t, 3, " option cluster.quorum-type none\n");
    assert_true(rep_has_quorum(t.rep, 0x4));
    vl_inode_unref(t.root);
    vl_test_graph_free(t.g);
    t_open_graph(&t, 3, " option pending-names x,y,z\n");
    assert_string_equal(rep_priv(t.rep)->keys[2], REP_KEY_PREFIX "z");
    vl_inode_unref(t.root);
    vl_test_graph_free(t.g);
}


/* Consecutive writes share one lock and one pre-op; flush ends the
 * batch (post-op and unlock) and leaves the copies clean. */
static void
test_eager_batch(void **state)
{
    struct t *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;
    size_t lk[3], xo[3];
    char buf[64];

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    for (int i = 0; i < 3; i++) {
        lk[i] = fake_received(t->b[i], VL_FOP_INODELK);
        xo[i] = fake_received(t->b[i], VL_FOP_XATTROP);
    }
    for (int k = 0; k < 5; k++) {
        char c[2] = {(char)('a' + k), 0};

        assert_int_equal(t_write(t, fd, k, c), 0);
    }
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fake_received(t->b[i], VL_FOP_INODELK), lk[i] + 1);
        assert_int_equal(fake_received(t->b[i], VL_FOP_XATTROP), xo[i] + 1);
        assert_int_equal(fake_received(t->b[i], VL_FOP_WRITE), 5);
        /* The batch is open: its pre-op shows. */
        assert_int_equal(t_rec(t, i, &inode->gfid, REP_KEY_DIRTY, REP_DATA),
                         1);
    }
    assert_int_equal(t_flush(t, fd), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fake_received(t->b[i], VL_FOP_INODELK), lk[i] + 2);
        assert_int_equal(fake_received(t->b[i], VL_FOP_XATTROP), xo[i] + 2);
        assert_false(t_has_rec(t, i, &inode->gfid, REP_KEY_DIRTY));
        assert_int_equal(fake_data(t->b[i], &vl_gfid_root, "f", buf,
                                   sizeof(buf)), 5);
        assert_string_equal(buf, "abcde");
    }
    assert_int_equal(atomic_load(&rep_priv(t->rep)->n_eager_batches), 1);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* Without flush the batch ends after post-op-delay. */
static void
test_eager_timer(void **state)
{
    struct t *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    assert_int_equal(t_write(t, fd, 0, "x"), 0);
    assert_int_equal(t_rec(t, 0, &inode->gfid, REP_KEY_DIRTY, REP_DATA), 1);
    t_settle(t);
    for (int i = 0; i < 3; i++) {
        assert_false(t_has_rec(t, i, &inode->gfid, REP_KEY_DIRTY));
        assert_int_equal(fake_received(t->b[i], VL_FOP_INODELK), 2);
    }
    /* The next write opens a new batch. */
    assert_int_equal(t_write(t, fd, 1, "y"), 0);
    assert_int_equal(fake_received(t->b[0], VL_FOP_INODELK), 3);
    assert_int_equal(t_flush(t, fd), 0);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* A write of a batch that fails on one child, or finds it down, is
 * recorded against it before it is answered; the child leaves the
 * batch. */
static void
test_eager_failure_in_batch(void **state)
{
    struct t *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    assert_int_equal(t_write(t, fd, 0, "a"), 0);
    fake_fail(t->b[1], VL_FOP_WRITE, -EIO);
    assert_int_equal(t_write(t, fd, 1, "b"), 0);
    fake_fail(t->b[1], VL_FOP_WRITE, 0);
    assert_int_equal(t_rec(t, 0, &inode->gfid, REP_KEY_PREFIX "b1",
                           REP_DATA), 1);
    assert_int_equal(t_rec(t, 2, &inode->gfid, REP_KEY_PREFIX "b1",
                           REP_DATA), 1);
    assert_int_equal(t_write(t, fd, 2, "c"), 0);
    assert_int_equal(fake_received(t->b[1], VL_FOP_WRITE), 2);
    /* A child going down during a batch: with b1 out of this batch, b0
     * alone is below quorum; the next batch has b1 again. */
    t_down(t, 2);
    assert_int_equal(t_write(t, fd, 3, "d"), -EROFS);
    assert_false(t_has_rec(t, 0, &inode->gfid, REP_KEY_PREFIX "b2"));
    assert_int_equal(t_flush(t, fd), 0);
    t_up(t, 2);
    assert_int_equal(t_write(t, fd, 3, "d"), 0);
    t_down(t, 2);
    assert_int_equal(t_write(t, fd, 4, "e"), 0);
    assert_int_equal(t_rec(t, 0, &inode->gfid, REP_KEY_PREFIX "b2",
                           REP_DATA), 1);
    assert_int_equal(t_rec(t, 1, &inode->gfid, REP_KEY_PREFIX "b2",
                           REP_DATA), 1);
    assert_int_equal(t_flush(t, fd), 0);
    assert_false(t_has_rec(t, 0, &inode->gfid, REP_KEY_DIRTY));
    assert_int_equal(t_rec(t, 1, &inode->gfid, REP_KEY_DIRTY, REP_DATA), 1);
    assert_int_equal(t_rec(t, 0, &inode->gfid, REP_KEY_PREFIX "b1",
                           REP_DATA), 1);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* Another change of the inode ends the batch first, then runs in its
 * own transaction. */
static void
test_eager_other_fop(void **state)
{
    struct t *t = *state;
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode;
    vl_fd_t *fd;

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    assert_int_equal(t_write(t, fd, 0, "abcdef"), 0);
    a.setattr.fd = fd;
    a.setattr.valid = VL_SET_SIZE;
    a.setattr.attr.size = 2;
    assert_int_equal(t_call(t, VL_FOP_SETATTR, &a, &r), 0);
    vl_reply_clear(&r);
    for (int i = 0; i < 3; i++) {
        char buf[16];

        assert_int_equal(fake_received(t->b[i], VL_FOP_INODELK), 4);
        assert_false(t_has_rec(t, i, &inode->gfid, REP_KEY_DIRTY));
        assert_int_equal(fake_data(t->b[i], &vl_gfid_root, "f", buf,
                                   sizeof(buf)), 2);
    }
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* close(2) ends the batch even without a FLUSH (the fd's release). */
static void
test_eager_close(void **state)
{
    struct t *t = *state;
    vl_inode_t *inode;
    vl_fd_t *fd;

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    assert_int_equal(t_write(t, fd, 0, "abc"), 0);
    assert_int_equal(t_rec(t, 0, &inode->gfid, REP_KEY_DIRTY, REP_DATA), 1);
    vl_fd_unref(fd);
    for (int i = 0; i < 3; i++) {
        assert_false(t_has_rec(t, i, &inode->gfid, REP_KEY_DIRTY));
        assert_int_equal(fake_received(t->b[i], VL_FOP_INODELK), 2);
    }
    vl_inode_unref(inode);
}


static void
test_eager_off(void **state)
{
    struct t t = {0};
    vl_inode_t *inode;
    vl_fd_t *fd;

    (void)state;
    t_open_graph(&t, 3, " option cluster.eager-lock off\n");
    assert_int_equal(t_create(&t, "f", &inode, &fd), 0);
    assert_int_equal(t_write(&t, fd, 0, "a"), 0);
    assert_int_equal(t_write(&t, fd, 1, "b"), 0);
    assert_int_equal(fake_received(t.b[0], VL_FOP_INODELK), 4);
    assert_false(t_has_rec(&t, 0, &inode->gfid, REP_KEY_DIRTY));
    vl_fd_unref(fd);
    vl_inode_unref(inode);
    vl_inode_unref(t.root);
    vl_test_graph_free(t.g);
}


/* Under allocation failure every request is still answered once (a
 * second answer aborts) and a failed write never reports success with
 * copies left unrecorded. */
static void
test_enomem(void **state)
{
    (void)state;
    for (long n = 1; n < 200; n++) {
        struct t t = {0};
        vl_inode_t *inode;
        vl_fd_t *fd;
        char buf[16];
        int rc;

        t_open_graph(&t, 3, "");
        if (t_create(&t, "f", &inode, &fd) != 0)
            fail_msg("create");
        vl_mem_fail_at(n);
        rc = t_write(&t, fd, 0, "abc");
        if (rc == 0)
            rc = t_read(&t, fd, buf, sizeof(buf));
        if (rc == 0)
            rc = t_lookup(&t, "f", NULL);
        vl_mem_fail_at(0);
        (void)rc;
        t_flush(&t, fd);
        t_settle(&t);
        vl_fd_unref(fd);
        vl_inode_unref(inode);
        vl_inode_unref(t.root);
        vl_test_graph_free(t.g);
    }
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class),
        cmocka_unit_test_setup_teardown(test_write_everywhere_clean, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_write_fails_on_one, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_write_child_down, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_quorum_below, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_quorum_after_fop, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_quorum_after_entry_fop, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fails_everywhere, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reads_avoid_blamed,
                                        setup3_no_bg_heal, teardown),
        cmocka_unit_test_setup_teardown(test_reads_spread, setup3, teardown),
        cmocka_unit_test_teardown(test_rchecksum_like_read, teardown),
        cmocka_unit_test_setup_teardown(test_read_retries, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lock_contention, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reopen, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_read, setup3_no_quorum,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_answers_from_good_copy,
                                        setup3_no_bg_heal, teardown),
        cmocka_unit_test_setup_teardown(test_lookup_gfid_mismatch, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lookup_split_brain, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lookup_stale_entry, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_quorum_auto_two, setup2,
                                        teardown),
        cmocka_unit_test(test_quorum_options),
        cmocka_unit_test_setup_teardown(test_eager_batch, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_eager_timer, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_eager_failure_in_batch, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_eager_other_fop, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_eager_close, setup3, teardown),
        cmocka_unit_test(test_eager_off),
        cmocka_unit_test(test_enomem),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
