/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rep-compound: replicate's transactions with compound requests
 * (issue 21): a create and a write cost 6 requests per brick instead of
 * 10, and every part failing on each brick in turn keeps the old
 * guarantees: a refused lock leaves the child out and blamed, a pre-op
 * failing after the grant still unlocks, a failing post-op still
 * releases its lock, a brick going down between the parts leaves its
 * records dirty, an older brick gets the parts one by one, and a
 * contended try undoes the pre-ops it applied. A rename within one
 * directory costs 5 requests per brick instead of 7, its second lock
 * contended, refused or its rename failing on each brick in turn. An
 * entry fop done
 * everywhere is answered before its post-op (a carrier finishes it); one
 * that failed somewhere is answered after its records.
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
#include "rep-test.h"


static int
setup3(void **state)
{
    return setup_n(state, 3, "");
}


/* No heal on lookup: the tests count every request the bricks get. */
static int
setup3_no_heal(void **state)
{
    return setup_n(state, 3, " option data-self-heal off\n"
                             " option metadata-self-heal off\n"
                             " option entry-self-heal off\n");
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
    if (rc == 0)
        vl_inode_unref(vl_inode_link(inode, &r.iatt));
    vl_reply_clear(&r);
    if (rc == 0)
        *fd_out = fd;
    else
        vl_fd_unref(fd);
    if (rc == 0)
        *out = inode;
    else
        vl_inode_unref(inode);
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
    vl_reply_clear(&r);
    return rc;
}


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


/* Creates f, writes 4 bytes, flushes: the requests each brick received
 * (out), with the data and clean records checked. */
static void
t_create_write(struct t *t, const char *name, size_t out[3])
{
    vl_inode_t *inode;
    vl_fd_t *fd;
    size_t before[3];
    char buf[64];

    for (int i = 0; i < 3; i++)
        before[i] = fake_received_all(t->b[i]);
    assert_int_equal(t_create(t, name, &inode, &fd), 0);
    assert_int_equal(t_write(t, fd, 0, "data"), 0);
    assert_int_equal(t_flush(t, fd), 0);
    for (int i = 0; i < 3; i++) {
        out[i] = fake_received_all(t->b[i]) - before[i];
        assert_int_equal(fake_data(t->b[i], &vl_gfid_root, name, buf,
                                   sizeof(buf)), 4);
        assert_int_equal(t_rec(t, i, &inode->gfid, REP_KEY_DIRTY, REP_DATA),
                         0);
        assert_int_equal(t_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY,
                               REP_ENTRY), 0);
        for (int j = 0; j < 3; j++) {
            assert_int_equal(t_rec(t, i, &inode->gfid, t->key[j], REP_DATA),
                             0);
            assert_int_equal(t_rec(t, i, &vl_gfid_root, t->key[j],
                                   REP_ENTRY), 0);
        }
    }
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* create + write + flush: 6 + 1 requests per brick (entrylk+pre-op,
 * create, post-op+unlock, inodelk+pre-op, write, post-op+unlock, flush);
 * 10 + 1 against bricks that know no compound. */
static void
test_requests_per_file(void **state)
{
    struct t *t = *state;
    size_t n[3];

    t_create_write(t, "f", n);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(n[i], 7);
        /* Every operation still ran: 2 locks, 2 unlocks, 4 xattrops. */
        assert_int_equal(fake_received(t->b[i], VL_FOP_ENTRYLK), 2);
        assert_int_equal(fake_received(t->b[i], VL_FOP_INODELK), 2);
        assert_int_equal(fake_received(t->b[i], VL_FOP_XATTROP), 4);
    }
    for (int i = 0; i < 3; i++)
        fake_set_plain(t->b[i], true);
    t_create_write(t, "g", n);
    for (int i = 0; i < 3; i++)
        assert_int_equal(n[i], 11);
}


/* One older brick among new ones: it gets the parts one by one. */
static void
test_mixed_plain_brick(void **state)
{
    struct t *t = *state;

    for (int b = 0; b < 3; b++) {
        char name[8];
        size_t n[3];

        snprintf(name, sizeof(name), "f%d", b);
        for (int i = 0; i < 3; i++)
            fake_set_plain(t->b[i], i == b);
        t_create_write(t, name, n);
        for (int i = 0; i < 3; i++)
            assert_int_equal(n[i], i == b ? 11 : 7);
    }
}


/* A lookup is one request per brick: each copy's records come with it
 * (a brick that cannot carry them is asked in a second request). Either
 * way the readable set excludes the copy the others blame. */
static void
test_lookup_carries_records(void **state)
{
    struct t *t = *state;
    uint8_t blame[REP_RECORD_SIZE] = {0};
    vl_inode_t *inode, *found;
    vl_fd_t *fd;
    rep_mask_t readable;

    assert_int_equal(t_create(t, "f", &inode, &fd), 0);
    vl_fd_unref(fd);
    /* The root's readable set, which a named lookup needs, is read now. */
    assert_int_equal(t_lookup(t, "f", &found), 0);
    vl_inode_unref(found);
    rep_record_set(blame, REP_DATA, 1);
    for (int i = 0; i < 2; i++)
        assert_int_equal(fake_set_xattr(t->b[i], &inode->gfid, t->key[2],
                                        blame, sizeof(blame)),
                         0);
    for (int plain = 0; plain < 2; plain++) {
        size_t before[3], xo_before[3];

        for (int i = 0; i < 3; i++) {
            fake_set_plain(t->b[i], plain == 1);
            before[i] = fake_received_all(t->b[i]);
            xo_before[i] = fake_received(t->b[i], VL_FOP_XATTROP);
        }
        assert_int_equal(t_lookup(t, "f", &found), 0);
        assert_ptr_equal(found, inode);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(fake_received_all(t->b[i]) - before[i],
                             plain ? 2 : 1);
            assert_int_equal(fake_received(t->b[i], VL_FOP_XATTROP)
                                 - xo_before[i],
                             1);
        }
        assert_true(rep_inode_readable(t->rep, found, &readable));
        assert_int_equal(readable, 0x3);
        vl_inode_unref(found);
    }
    vl_inode_unref(inode);
}


/* A lock refused on brick b (an error, not contention): b leaves the
 * transaction and the others blame it, though their pre-op was sent
 * before the locks were known. */
static void
test_lock_refused(void **state)
{
    struct t *t = *state;

    for (int b = 0; b < 3; b++) {
        vl_inode_t *inode;
        vl_fd_t *fd;
        char name[8];
        size_t lk[3], wr[3];

        snprintf(name, sizeof(name), "f%d", b);
        assert_int_equal(t_create(t, name, &inode, &fd), 0);
        for (int i = 0; i < 3; i++) {
            lk[i] = fake_received(t->b[i], VL_FOP_INODELK);
            wr[i] = fake_received(t->b[i], VL_FOP_WRITE);
        }
        fake_fail(t->b[b], VL_FOP_INODELK, -EIO);
        assert_int_equal(t_write(t, fd, 0, "data"), 0);
        assert_int_equal(t_flush(t, fd), 0);
        fake_fail(t->b[b], VL_FOP_INODELK, 0);
        for (int i = 0; i < 3; i++) {
            if (i == b) {
                /* Its lock only: no pre-op, write or unlock. */
                assert_int_equal(fake_received(t->b[i], VL_FOP_INODELK),
                                 lk[i] + 1);
                assert_int_equal(fake_received(t->b[i], VL_FOP_WRITE),
                                 wr[i]);
                continue;
            }
            assert_int_equal(fake_received(t->b[i], VL_FOP_INODELK),
                             lk[i] + 2);
            assert_int_equal(t_rec(t, i, &inode->gfid, t->key[b], REP_DATA),
                             1);
            assert_int_equal(t_rec(t, i, &inode->gfid, REP_KEY_DIRTY,
                                   REP_DATA), 0);
        }
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
}


/* The records blaming a child of the root: zeroed between the turns of
 * a test (each blames another child: together they would say the root
 * is in split-brain, which heal would settle first). */
static void
t_forget_dir_blames(struct t *t, const vl_inode_t *dir)
{
    static const uint8_t zero[REP_RECORD_SIZE];

    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            (void)fake_set_xattr(t->b[i], &dir->gfid, t->key[j], zero,
                                 sizeof(zero));
}


static void
t_forget_root_blames(struct t *t)
{
    t_forget_dir_blames(t, t->root);
}


/* A create whose entrylk fails on brick b: the parent's entry record on
 * the others blames b. */
static void
test_entry_lock_refused(void **state)
{
    struct t *t = *state;

    for (int b = 0; b < 3; b++) {
        vl_inode_t *inode;
        vl_fd_t *fd;
        char name[8], buf[8];

        snprintf(name, sizeof(name), "f%d", b);
        fake_fail(t->b[b], VL_FOP_ENTRYLK, -EIO);
        assert_int_equal(t_create(t, name, &inode, &fd), 0);
        fake_fail(t->b[b], VL_FOP_ENTRYLK, 0);
        for (int i = 0; i < 3; i++) {
            if (i == b) {
                assert_int_equal(fake_data(t->b[i], &vl_gfid_root, name,
                                           buf, sizeof(buf)), -ENOENT);
                continue;
            }
            assert_true(t_rec(t, i, &vl_gfid_root, t->key[b], REP_ENTRY)
                        >= 1);
            assert_int_equal(t_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY,
                                   REP_ENTRY), 0);
        }
        assert_int_equal(t_flush(t, fd), 0);
        t_forget_root_blames(t);
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
}


/* The pre-op of a chmod fails on brick b after its lock was granted: b
 * gets no setattr, is blamed by the others, and its lock is released by
 * an unlock of its own. */
static void
test_preop_fails_after_grant(void **state)
{
    struct t *t = *state;

    for (int b = 0; b < 3; b++) {
        union vl_fop_args a = {0};
        struct vl_reply r;
        vl_inode_t *inode;
        vl_fd_t *fd;
        char name[8];
        size_t lk[3], all[3], sa[3];

        snprintf(name, sizeof(name), "f%d", b);
        assert_int_equal(t_create(t, name, &inode, &fd), 0);
        for (int i = 0; i < 3; i++) {
            lk[i] = fake_received(t->b[i], VL_FOP_INODELK);
            all[i] = fake_received_all(t->b[i]);
            sa[i] = fake_received(t->b[i], VL_FOP_SETATTR);
        }
        fake_fail(t->b[b], VL_FOP_XATTROP, -EIO);
        a.setattr.loc.inode = inode;
        a.setattr.attr.mode = S_IFREG | 0600;
        a.setattr.valid = VL_SET_MODE;
        assert_int_equal(t_call(t, VL_FOP_SETATTR, &a, &r), 0);
        vl_reply_clear(&r);
        fake_fail(t->b[b], VL_FOP_XATTROP, 0);
        for (int i = 0; i < 3; i++) {
            /* A lock and an unlock everywhere. */
            assert_int_equal(fake_received(t->b[i], VL_FOP_INODELK),
                             lk[i] + 2);
            if (i == b) {
                /* lock+pre-op, its own unlock. */
                assert_int_equal(fake_received_all(t->b[i]), all[i] + 2);
                assert_int_equal(fake_received(t->b[i], VL_FOP_SETATTR),
                                 sa[i]);
                continue;
            }
            /* lock+pre-op, setattr, post-op+unlock. */
            assert_int_equal(fake_received_all(t->b[i]), all[i] + 3);
            assert_int_equal(t_rec(t, i, &inode->gfid, t->key[b],
                                   REP_METADATA), 1);
        }
        assert_int_equal(t_flush(t, fd), 0);
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
}


/* The post-op fails on brick b: its lock is released all the same (no
 * unlock of its own), and its dirty record stays for heal. */
static void
test_postop_fails_unlock_done(void **state)
{
    struct t *t = *state;

    for (int b = 0; b < 3; b++) {
        vl_inode_t *inode;
        vl_fd_t *fd;
        char name[8];
        size_t lk[3], all[3];

        snprintf(name, sizeof(name), "f%d", b);
        assert_int_equal(t_create(t, name, &inode, &fd), 0);
        for (int i = 0; i < 3; i++) {
            lk[i] = fake_received(t->b[i], VL_FOP_INODELK);
            all[i] = fake_received_all(t->b[i]);
        }
        assert_int_equal(t_write(t, fd, 0, "data"), 0);
        fake_fail(t->b[b], VL_FOP_XATTROP, -EIO);
        assert_int_equal(t_flush(t, fd), 0);
        fake_fail(t->b[b], VL_FOP_XATTROP, 0);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(fake_received(t->b[i], VL_FOP_INODELK),
                             lk[i] + 2);
            /* lock+pre-op, write, post-op+unlock, flush */
            assert_int_equal(fake_received_all(t->b[i]), all[i] + 4);
            assert_int_equal(t_rec(t, i, &inode->gfid, REP_KEY_DIRTY,
                                   REP_DATA), i == b ? 1 : 0);
        }
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
}


/* Brick b goes down while the batch is open: the post-op+unlock finds
 * it gone, the others finish, and b's dirty record stays for heal. */
static void
test_child_down_mid_txn(void **state)
{
    struct t *t = *state;

    for (int b = 0; b < 3; b++) {
        vl_inode_t *inode;
        vl_fd_t *fd;
        char name[8];

        snprintf(name, sizeof(name), "f%d", b);
        assert_int_equal(t_create(t, name, &inode, &fd), 0);
        assert_int_equal(t_write(t, fd, 0, "data"), 0);
        t_down(t, b);
        assert_int_equal(t_flush(t, fd), 0);
        for (int i = 0; i < 3; i++)
            assert_int_equal(t_rec(t, i, &inode->gfid, REP_KEY_DIRTY,
                                   REP_DATA), i == b ? 1 : 0);
        t_up(t, b);
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
}


/* Brick b contended: the pre-ops the others' granted tries applied are
 * undone, then the locks are taken one by one and the pre-op sent on
 * its own; nothing is left dirty or blamed. */
static void
test_contended_try_undone(void **state)
{
    struct t *t = *state;

    for (int b = 0; b < 3; b++) {
        vl_inode_t *inode;
        vl_fd_t *fd;
        char name[8], buf[8];
        size_t xo[3];

        snprintf(name, sizeof(name), "f%d", b);
        assert_int_equal(t_create(t, name, &inode, &fd), 0);
        for (int i = 0; i < 3; i++)
            xo[i] = fake_received(t->b[i], VL_FOP_XATTROP);
        fake_set_lock_busy(t->b[b], true);
        assert_int_equal(t_write(t, fd, 0, "data"), 0);
        fake_set_lock_busy(t->b[b], false);
        assert_int_equal(t_flush(t, fd), 0);
        for (int i = 0; i < 3; i++) {
            /* pre-op (+ undo on the granted ones), pre-op, post-op */
            assert_int_equal(fake_received(t->b[i], VL_FOP_XATTROP),
                             xo[i] + (i == b ? 2 : 4));
            assert_int_equal(fake_data(t->b[i], &vl_gfid_root, name, buf,
                                       sizeof(buf)), 4);
            assert_int_equal(t_rec(t, i, &inode->gfid, REP_KEY_DIRTY,
                                   REP_DATA), 0);
            for (int j = 0; j < 3; j++)
                assert_int_equal(t_rec(t, i, &inode->gfid, t->key[j],
                                       REP_DATA), 0);
        }
        vl_fd_unref(fd);
        vl_inode_unref(inode);
    }
}


/* Renames old in the root to new in dir (oldloc.inode: inode). */
static int
t_rename_to(struct t *t, vl_inode_t *inode, const char *old, vl_inode_t *dir,
            const char *new)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.rename.oldloc.parent = t->root;
    a.rename.oldloc.name = old;
    a.rename.oldloc.inode = inode;
    a.rename.newloc.parent = dir;
    a.rename.newloc.name = new;
    rc = t_call(t, VL_FOP_RENAME, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


/* Renames old to new in the root. */
static int
t_rename(struct t *t, vl_inode_t *inode, const char *old, const char *new)
{
    return t_rename_to(t, inode, old, t->root, new);
}


/* Creates name (closed again) for a rename test. */
static vl_inode_t *
t_file_for_rename(struct t *t, const char *name)
{
    vl_inode_t *inode;
    vl_fd_t *fd;

    assert_int_equal(t_create(t, name, &inode, &fd), 0);
    assert_int_equal(t_flush(t, fd), 0);
    vl_fd_unref(fd);
    return inode;
}


/* Directory gfid's entry records on brick i: dirty and every blame 0. */
static void
t_dir_clean(struct t *t, int i, const vl_gfid_t *gfid)
{
    assert_int_equal(t_rec(t, i, gfid, REP_KEY_DIRTY, REP_ENTRY), 0);
    for (int j = 0; j < 3; j++)
        assert_int_equal(t_rec(t, i, gfid, t->key[j], REP_ENTRY), 0);
}


/* Brick i holds name in directory dir. */
static bool
t_has_in(struct t *t, int i, const vl_inode_t *dir, const char *name)
{
    char buf[8];

    return fake_data(t->b[i], &dir->gfid, name, buf, sizeof(buf)) >= 0;
}


/* A rename within one directory: 5 requests per brick instead of 7 (the
 * two names' locks, the first carrying the pre-op; the rename; the
 * post-op carrying the first unlock, the second unlock beside it); 7
 * against bricks that know no compound. Both names locked and released,
 * the records clean. */
static void
test_rename_requests(void **state)
{
    struct t *t = *state;

    for (int plain = 0; plain < 2; plain++) {
        const char *from = plain ? "c" : "a", *to = plain ? "d" : "b";
        vl_inode_t *inode = t_file_for_rename(t, from);
        size_t all[3], lk[3], xo[3];

        for (int i = 0; i < 3; i++) {
            fake_set_plain(t->b[i], plain == 1);
            all[i] = fake_received_all(t->b[i]);
            lk[i] = fake_received(t->b[i], VL_FOP_ENTRYLK);
            xo[i] = fake_received(t->b[i], VL_FOP_XATTROP);
        }
        assert_int_equal(t_rename(t, inode, from, to), 0);
        for (int i = 0; i < 3; i++) {
            fake_set_plain(t->b[i], false);
            assert_int_equal(fake_received_all(t->b[i]) - all[i],
                             plain ? 7 : 5);
            assert_int_equal(fake_received(t->b[i], VL_FOP_ENTRYLK) - lk[i],
                             4);
            assert_int_equal(fake_received(t->b[i], VL_FOP_XATTROP) - xo[i],
                             2);
            assert_false(t_has_in(t, i, t->root, from));
            assert_true(t_has_in(t, i, t->root, to));
            t_dir_clean(t, i, &vl_gfid_root);
        }
        vl_inode_unref(inode);
    }
}


/* One turn of a rename test failing something on brick b: a file
 * "a<b>" renamed to "b<b>" ("a..." sorts first: the new name is the
 * second lock item), and what the bricks had received before. */
struct t_turn {
    char from[16], to[16];
    vl_inode_t *inode;
    size_t all[3], lk[3], xo[3];
    int32_t dirty[3]; /* an earlier turn's b kept its pre-op's count */
};


static void
t_turn_begin(struct t *t, int b, struct t_turn *u)
{
    snprintf(u->from, sizeof(u->from), "a%d", b);
    snprintf(u->to, sizeof(u->to), "b%d", b);
    u->inode = t_file_for_rename(t, u->from);
    for (int i = 0; i < 3; i++) {
        u->all[i] = fake_received_all(t->b[i]);
        u->lk[i] = fake_received(t->b[i], VL_FOP_ENTRYLK);
        u->xo[i] = fake_received(t->b[i], VL_FOP_XATTROP);
        u->dirty[i] = t_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY, REP_ENTRY);
    }
}


/* A rename from the root into a directory: each name's lock try carries
 * the pre-op of its own directory and each directory's post-op its
 * name's unlock: 5 requests per brick instead of 9 (9 against bricks
 * that know no compound), both directories' records clean. */
static void
test_rename_across_requests(void **state)
{
    struct t *t = *state;
    vl_inode_t *d = t_mkdir(t, "d");

    for (int plain = 0; plain < 2; plain++) {
        const char *name = plain ? "y" : "x";
        vl_inode_t *inode = t_file_for_rename(t, name);
        size_t all[3], lk[3], xo[3];

        for (int i = 0; i < 3; i++) {
            fake_set_plain(t->b[i], plain == 1);
            all[i] = fake_received_all(t->b[i]);
            lk[i] = fake_received(t->b[i], VL_FOP_ENTRYLK);
            xo[i] = fake_received(t->b[i], VL_FOP_XATTROP);
        }
        assert_int_equal(t_rename_to(t, inode, name, d, name), 0);
        for (int i = 0; i < 3; i++) {
            fake_set_plain(t->b[i], false);
            assert_int_equal(fake_received_all(t->b[i]) - all[i],
                             plain ? 9 : 5);
            assert_int_equal(fake_received(t->b[i], VL_FOP_ENTRYLK) - lk[i],
                             4);
            assert_int_equal(fake_received(t->b[i], VL_FOP_XATTROP) - xo[i],
                             4);
            assert_false(t_has_in(t, i, t->root, name));
            assert_true(t_has_in(t, i, d, name));
            t_dir_clean(t, i, &vl_gfid_root);
            t_dir_clean(t, i, &d->gfid);
        }
        vl_inode_unref(inode);
    }
    vl_inode_unref(d);
}


/* The failure tests of a rename of "a<b>" in the root to "b<b>" in dir
 * (the root: within one directory, two lock items and one marked
 * directory; another: across directories, each name's lock carrying its
 * own directory's pre-op). */

/* The new name's try contended on brick b: every carried pre-op is
 * undone where it was applied (across directories b's of the root alone
 * included), both names released, then locked one by one; the rename is
 * done everywhere and nothing is left recorded. */
static void
t_rename_contended(struct t *t, vl_inode_t *dir)
{
    bool is_across = dir != t->root;

    for (int b = 0; b < 3; b++) {
        struct t_turn u;

        t_turn_begin(t, b, &u);
        fake_fail_entrylk(t->b[b], u.to, -EAGAIN);
        assert_int_equal(t_rename_to(t, u.inode, u.from, dir, u.to), 0);
        fake_fail_entrylk(t->b[b], NULL, 0);
        for (int i = 0; i < 3; i++) {
            /* tries 2, their unlocks 1 (b) or 2, serial 2, unlocks 2 */
            assert_int_equal(fake_received(t->b[i], VL_FOP_ENTRYLK)
                                 - u.lk[i],
                             i == b ? 7 : 8);
            /* within: carried pre-op, its undo, pre-op, post-op; across:
             * carried pre-ops 1 (b) or 2, their undo as many, pre-ops 2,
             * post-ops 2 */
            assert_int_equal(fake_received(t->b[i], VL_FOP_XATTROP)
                                 - u.xo[i],
                             !is_across ? 4 : i == b ? 6 : 8);
            assert_true(t_has_in(t, i, dir, u.to));
            t_dir_clean(t, i, &vl_gfid_root);
            t_dir_clean(t, i, &dir->gfid);
        }
        vl_inode_unref(u.inode);
    }
}


/* The new name's lock refused on brick b (an error): b, which took the
 * old name's lock and the pre-op it carried (the root's), leaves the
 * transaction with the root's dirty count raised (for heal), is blamed
 * by the others in both directories and keeps the old name; every lock
 * it holds is released. */
static void
t_rename_refused(struct t *t, vl_inode_t *dir)
{
    for (int b = 0; b < 3; b++) {
        struct t_turn u;
        int32_t d_dirty[3];

        t_turn_begin(t, b, &u);
        for (int i = 0; i < 3; i++)
            d_dirty[i] = t_rec(t, i, &dir->gfid, REP_KEY_DIRTY, REP_ENTRY);
        fake_fail_entrylk(t->b[b], u.to, -EIO);
        assert_int_equal(t_rename_to(t, u.inode, u.from, dir, u.to), 0);
        fake_fail_entrylk(t->b[b], NULL, 0);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(fake_received(t->b[i], VL_FOP_ENTRYLK)
                                 - u.lk[i],
                             i == b ? 3 : 4);
            if (i == b) {
                assert_true(t_has_in(t, i, t->root, u.from));
                assert_int_equal(t_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY,
                                       REP_ENTRY), u.dirty[i] + 1);
                continue;
            }
            assert_true(t_has_in(t, i, dir, u.to));
            assert_true(t_rec(t, i, &vl_gfid_root, t->key[b], REP_ENTRY)
                        >= 1);
            assert_true(t_rec(t, i, &dir->gfid, t->key[b], REP_ENTRY) >= 1);
            assert_int_equal(t_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY,
                                   REP_ENTRY), u.dirty[i]);
            assert_int_equal(t_rec(t, i, &dir->gfid, REP_KEY_DIRTY,
                                   REP_ENTRY), d_dirty[i]);
        }
        t_forget_dir_blames(t, t->root);
        t_forget_dir_blames(t, dir);
        vl_inode_unref(u.inode);
    }
}


/* The rename failing on brick b: the others blame b (in both
 * directories) before the answer, and each name is released only after
 * a post-op recorded it (the last request they get is an unlock or a
 * post-op carrying one: never one beside a blaming post-op); b's locks
 * are released by unlocks of their own. */
static void
t_rename_fails_on_one(struct t *t, vl_inode_t *dir)
{
    bool is_across = dir != t->root;

    for (int b = 0; b < 3; b++) {
        struct t_turn u;

        t_turn_begin(t, b, &u);
        fake_fail(t->b[b], VL_FOP_RENAME, -EIO);
        assert_int_equal(t_rename_to(t, u.inode, u.from, dir, u.to), 0);
        fake_fail(t->b[b], VL_FOP_RENAME, 0);
        for (int i = 0; i < 3; i++) {
            /* b: 2 tries, the rename, 2 unlocks; the others: 2 tries,
             * the rename, and within: post-op + unlock, unlock; across:
             * 2 post-ops + unlock */
            assert_int_equal(fake_received_all(t->b[i]) - u.all[i], 5);
            assert_int_equal(fake_received(t->b[i], VL_FOP_ENTRYLK)
                                 - u.lk[i],
                             4);
            if (!is_across || i == b)
                assert_int_equal(fake_last_op(t->b[i]), VL_FOP_ENTRYLK);
            if (i == b) {
                assert_true(t_has_in(t, i, t->root, u.from));
                continue;
            }
            assert_true(t_has_in(t, i, dir, u.to));
            assert_int_equal(t_rec(t, i, &vl_gfid_root, t->key[b],
                                   REP_ENTRY), 1);
            assert_int_equal(t_rec(t, i, &dir->gfid, t->key[b], REP_ENTRY),
                             1);
            assert_int_equal(t_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY,
                                   REP_ENTRY), u.dirty[i]);
        }
        t_forget_dir_blames(t, t->root);
        t_forget_dir_blames(t, dir);
        vl_inode_unref(u.inode);
    }
}


static void
test_rename_second_lock_contended(void **state)
{
    struct t *t = *state;

    t_rename_contended(t, t->root);
}


static void
test_rename_second_lock_refused(void **state)
{
    struct t *t = *state;

    t_rename_refused(t, t->root);
}


static void
test_rename_fails_on_one(void **state)
{
    struct t *t = *state;

    t_rename_fails_on_one(t, t->root);
}


static void
test_rename_across_contended(void **state)
{
    struct t *t = *state;
    vl_inode_t *d = t_mkdir(t, "d");

    t_rename_contended(t, d);
    vl_inode_unref(d);
}


static void
test_rename_across_refused(void **state)
{
    struct t *t = *state;
    vl_inode_t *d = t_mkdir(t, "d");

    t_rename_refused(t, d);
    vl_inode_unref(d);
}


static void
test_rename_across_fails_on_one(void **state)
{
    struct t *t = *state;
    vl_inode_t *d = t_mkdir(t, "d");

    t_rename_fails_on_one(t, d);
    vl_inode_unref(d);
}


/* What the bricks held when an asynchronous mkdir was answered. */
struct t_seen {
    struct t *t;
    bool is_done;
    int status;
    int32_t dirty[3];    /* the root's dirty entry counter per brick */
    int32_t blame[3][3]; /* [brick][slot]: the root's entry counters */
};


static void
t_seen_done(vl_req_t *req, void *cookie)
{
    struct t_seen *s = cookie;

    s->is_done = true;
    s->status = req->status;
    for (int i = 0; i < 3; i++) {
        s->dirty[i] = t_rec(s->t, i, &vl_gfid_root, REP_KEY_DIRTY,
                            REP_ENTRY);
        for (int j = 0; j < 3; j++)
            s->blame[i][j] = t_rec(s->t, i, &vl_gfid_root, s->t->key[j],
                                   REP_ENTRY);
    }
    vl_reply_clear(&req->reply);
}


/* Winds mkdir name and notes the bricks' records at its answer (the
 * bricks answer inline: everything is done when this returns). */
static void
t_mkdir_seen(struct t *t, const char *name, struct t_seen *s)
{
    vl_req_t *req = vl_req_new(t->rep, VL_FOP_MKDIR);
    vl_inode_t *inode = vl_inode_new(t->g->graph->itable);

    assert_non_null(req);
    memset(s, 0, sizeof(*s));
    s->t = t;
    req->args.mkdir.loc.parent = t->root;
    req->args.mkdir.loc.name = name;
    req->args.mkdir.loc.inode = inode;
    req->args.mkdir.mode = 0755;
    vl_gfid_generate(&req->args.mkdir.gfid);
    vl_wind(req, t_seen_done, s);
    assert_true(s->is_done);
    vl_inode_unref(inode);
}


/* An entry fop done on every child is answered before its post-op: the
 * directory is still dirty on every brick at the answer; the carrier
 * then clears it and releases the locks (carried by the post-op). */
static void
test_entry_answered_before_postop(void **state)
{
    struct t *t = *state;
    struct t_seen s;
    size_t lk[3];

    for (int i = 0; i < 3; i++)
        lk[i] = fake_received(t->b[i], VL_FOP_ENTRYLK);
    t_mkdir_seen(t, "d", &s);
    assert_int_equal(s.status, 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(s.dirty[i], 1);
        assert_int_equal(t_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY,
                               REP_ENTRY), 0);
        /* the lock (carrying the pre-op) and the unlock (carried) */
        assert_int_equal(fake_received(t->b[i], VL_FOP_ENTRYLK), lk[i] + 2);
    }
    assert_int_equal(atomic_load(&rep_priv(t->rep)->n_detached), 1);
    /* The name's lock was released: the same name locks again at once
     * (a contended try would take the serial path: 3 more locks). */
    t_mkdir_seen(t, "d", &s);
    assert_int_equal(s.status, -EEXIST);
    for (int i = 0; i < 3; i++)
        assert_int_equal(fake_received(t->b[i], VL_FOP_ENTRYLK), lk[i] + 4);
}


/* The fop failing on brick b: the answer waits for the records, so the
 * others already blame b when the caller hears of success. */
static void
test_entry_failure_recorded_before_answer(void **state)
{
    struct t *t = *state;

    for (int b = 0; b < 3; b++) {
        struct t_seen s;
        char name[8];
        int32_t dirty[3];

        snprintf(name, sizeof(name), "d%d", b);
        for (int i = 0; i < 3; i++) /* a brick that failed before: 1 */
            dirty[i] = t_rec(t, i, &vl_gfid_root, REP_KEY_DIRTY, REP_ENTRY);
        fake_fail(t->b[b], VL_FOP_MKDIR, -EIO);
        t_mkdir_seen(t, name, &s);
        fake_fail(t->b[b], VL_FOP_MKDIR, 0);
        assert_int_equal(s.status, 0);
        for (int i = 0; i < 3; i++) {
            if (i == b)
                continue;
            assert_int_equal(s.dirty[i], dirty[i]);
            assert_int_equal(s.blame[i][b], 1);
        }
    }
    assert_int_equal(atomic_load(&rep_priv(t->rep)->n_detached), 0);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_requests_per_file, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lookup_carries_records,
                                        setup3_no_heal, teardown),
        cmocka_unit_test_setup_teardown(test_mixed_plain_brick, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lock_refused, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_entry_lock_refused, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_preop_fails_after_grant, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_postop_fails_unlock_done,
                                        setup3, teardown),
        cmocka_unit_test_setup_teardown(test_child_down_mid_txn, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_contended_try_undone, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_entry_answered_before_postop,
                                        setup3, teardown),
        cmocka_unit_test_setup_teardown(
            test_entry_failure_recorded_before_answer, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_rename_requests,
                                        setup3_no_heal, teardown),
        cmocka_unit_test_setup_teardown(test_rename_second_lock_contended,
                                        setup3_no_heal, teardown),
        cmocka_unit_test_setup_teardown(test_rename_second_lock_refused,
                                        setup3_no_heal, teardown),
        cmocka_unit_test_setup_teardown(test_rename_fails_on_one,
                                        setup3_no_heal, teardown),
        cmocka_unit_test_setup_teardown(test_rename_across_requests,
                                        setup3_no_heal, teardown),
        cmocka_unit_test_setup_teardown(test_rename_across_contended,
                                        setup3_no_heal, teardown),
        cmocka_unit_test_setup_teardown(test_rename_across_refused,
                                        setup3_no_heal, teardown),
        cmocka_unit_test_setup_teardown(test_rename_across_fails_on_one,
                                        setup3_no_heal, teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
