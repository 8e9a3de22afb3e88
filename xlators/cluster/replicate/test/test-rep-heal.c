/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rep-heal: replicate's self-heal (rep-heal*.c) over three (or two)
 * in-memory bricks (rep-fake.c): the choice of sources from the records,
 * the data, metadata and entry heals through the mortar.heal key, the
 * heal a lookup starts, split-brain left alone, and a heal cut by a
 * failing child that clears nothing.
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
#include <unistd.h>

#include <cmocka.h>

#include "builtin.h"
#include "rep-heal.h"
#include "rep-heal-test.h"
#include "rep-test.h"

static int
setup3(void **state)
{
    return setup_n(state, 3, "");
}


static int
setup2(void **state)
{
    return setup_n(state, 2, " option quorum-type none\n");
}


/* ---- source selection ---- */

/* records for 3 copies: m[i][j] the kind counter copy i holds for slot j
 * (j == 3: dirty). */
static enum rep_heal_verdict
t_pick(const int32_t m[3][4], rep_mask_t present, rep_mask_t *sources,
       rep_mask_t *sinks)
{
    static uint8_t buf[3][4 * REP_RECORD_SIZE];
    const uint8_t *rec[3];

    memset(buf, 0, sizeof(buf));
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 4; j++)
            rep_record_set(buf[i] + j * REP_RECORD_SIZE, REP_DATA, m[i][j]);
        rec[i] = buf[i];
    }
    return rep_heal_pick(3, present, rec, REP_DATA, sources, sinks);
}


static void
test_pick_matrix(void **state)
{
    rep_mask_t so, si;
    const int32_t clean[3][4] = {{0}};
    const int32_t dirty[3][4] = {{0, 0, 0, 1}, {0, 0, 0, 1}, {0}};
    const int32_t one[3][4] = {{0, 0, 2, 0}, {0, 0, 1, 0}, {0}};
    const int32_t chain[3][4] = {{0, 1, 0, 0}, {1, 0, 0, 0}, {0}};
    const int32_t all[3][4] = {{0, 1, 0, 0}, {0, 0, 1, 0}, {1, 0, 0, 0}};
    const int32_t neg[3][4] = {{0, -1, 0, 0}, {0}, {0}};
    const int32_t self[3][4] = {{3, 0, 0, 0}, {0}, {0}};

    (void)state;
    assert_int_equal(t_pick(clean, 7, &so, &si), REP_HV_CLEAN);
    assert_int_equal(t_pick(dirty, 7, &so, &si), REP_HV_COMPARE);
    assert_int_equal(so, 7);
    assert_int_equal(si, 0);
    /* 0 and 1 blame 2: 2 is the sink. */
    assert_int_equal(t_pick(one, 7, &so, &si), REP_HV_NEEDED);
    assert_int_equal(so, 3);
    assert_int_equal(si, 4);
    /* 0 and 1 blame each other, 2 blames nobody: 2 is the source. */
    assert_int_equal(t_pick(chain, 7, &so, &si), REP_HV_NEEDED);
    assert_int_equal(so, 4);
    assert_int_equal(si, 3);
    /* The same with 2 absent: a split-brain. */
    assert_int_equal(t_pick(chain, 3, &so, &si), REP_HV_SPLIT);
    assert_int_equal(so | si, 0);
    /* Every copy blamed by another. */
    assert_int_equal(t_pick(all, 7, &so, &si), REP_HV_SPLIT);
    /* A negative counter blames nobody; a copy's own slot neither. */
    assert_int_equal(t_pick(neg, 7, &so, &si), REP_HV_CLEAN);
    assert_int_equal(t_pick(self, 7, &so, &si), REP_HV_CLEAN);
}


/* ---- data ---- */

static void
test_heal_data(void **state)
{
    struct t *t = *state;
    char buf[64];
    vl_inode_t *f = t_file(t, "f", "hello");

    t_down(t, 2);
    t_write(t, f, 5, " world, more");
    t_up(t, 2);
    assert_true(t_rec(t, 0, &f->gfid, t->key[2], REP_DATA) > 0);
    t_expect_heal(t, f, "healed");
    assert_true(fake_data(t->b[2], &vl_gfid_root, "f", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "hello world, more");
    assert_false(t_any_record(t, &f->gfid));
    t_expect_heal(t, f, "clean");
    vl_inode_unref(f);
}


/* The round trips of a small file's heal (issue 22): a file written
 * while b2 was down, its name created on b2 by its directory's heal,
 * then the file's own heal. Each kind's lock carries the read of the
 * records and the clear carries the unlock (compounds); the data is
 * copied under the whole-file lock (no range lock, no second whole-file
 * lock), without LSEEK (one block); only the source and the sink are
 * opened; the sink's size and times are one SETATTR; one FSYNC; the
 * metadata heal stats the source only. Was 68 requests. */
static void
test_heal_small_requests(void **state)
{
    struct t *t = *state;
    size_t before[3][VL_FOP_COUNT], n[VL_FOP_COUNT];
    size_t all_before = 0, all = 0;
    char buf[64];
    vl_inode_t *f;

    t_down(t, 2);
    f = t_file(t, "small", "four kilobytes, or less");
    t_up(t, 2);
    t_expect_heal(t, t->root, "healed");
    for (int i = 0; i < 3; i++) {
        for (int op = 0; op < VL_FOP_COUNT; op++)
            before[i][op] = fake_received(t->b[i], (vl_fop_t)op);
        all_before += fake_received_all(t->b[i]);
    }
    t_expect_heal(t, f, "healed");
    for (int op = 0; op < VL_FOP_COUNT; op++) {
        n[op] = 0;
        for (int i = 0; i < 3; i++)
            n[op] += fake_received(t->b[i], (vl_fop_t)op) - before[i][op];
    }
    for (int i = 0; i < 3; i++)
        all += fake_received_all(t->b[i]);
    all -= all_before;
    assert_int_equal(n[VL_FOP_LSEEK], 0);
    assert_int_equal(n[VL_FOP_OPEN], 2);
    assert_int_equal(n[VL_FOP_READ], 1);
    assert_int_equal(n[VL_FOP_WRITE], 1);
    assert_int_equal(n[VL_FOP_FSYNC], 1);
    /* data: one SETATTR (size and times); metadata: one */
    assert_int_equal(n[VL_FOP_SETATTR], 2);
    /* the heal's own lock, data's, metadata's: lock and unlock on 3 */
    assert_int_equal(n[VL_FOP_INODELK], 18);
    /* the object's LOOKUP on each copy, metadata's of the source */
    assert_int_equal(n[VL_FOP_LOOKUP], 4);
    assert_true(all <= 34);
    assert_true(fake_data(t->b[2], &vl_gfid_root, "small", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "four kilobytes, or less");
    assert_false(t_any_record(t, &f->gfid));
    t_expect_heal(t, f, "clean");
    vl_inode_unref(f);
}


/* The same against bricks that ignore the compounds (an older brick):
 * the records are read and the locks given back by requests of their
 * own, and the heal ends the same. */
static void
test_heal_small_plain_bricks(void **state)
{
    struct t *t = *state;
    size_t all_before = 0, all = 0, xops;
    char buf[64];
    vl_inode_t *f;

    t_down(t, 2);
    f = t_file(t, "small", "no compounds");
    t_up(t, 2);
    t_expect_heal(t, t->root, "healed");
    for (int i = 0; i < 3; i++) {
        fake_set_plain(t->b[i], i != 1); /* b1 knows them, b0 and b2 not */
        all_before += fake_received_all(t->b[i]);
    }
    xops = fake_received(t->b[0], VL_FOP_XATTROP);
    t_expect_heal(t, f, "healed");
    for (int i = 0; i < 3; i++)
        all += fake_received_all(t->b[i]);
    /* b0: a read of the records per kind after its lock, a clear */
    assert_true(fake_received(t->b[0], VL_FOP_XATTROP) - xops >= 3);
    assert_true(all - all_before > 36);
    assert_true(fake_data(t->b[2], &vl_gfid_root, "small", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "no compounds");
    assert_false(t_any_record(t, &f->gfid));
    t_expect_heal(t, f, "clean");
    vl_inode_unref(f);
}


/* A sink longer than the source is cut to the source's size; a zero
 * block of the source is a hole (zeros) on the sink. */
static void
test_heal_data_shrink(void **state)
{
    struct t *t = *state;
    char buf[64];
    vl_inode_t *f = t_file(t, "f", "0123456789abcdef");
    union vl_fop_args a = {0};
    struct vl_reply r;

    t_down(t, 1);
    a.setattr.loc.inode = f;
    a.setattr.attr.size = 4;
    a.setattr.valid = VL_SET_SIZE;
    assert_int_equal(t_call(t, VL_FOP_SETATTR, &a, &r), 0);
    vl_reply_clear(&r);
    t_up(t, 1);
    t_expect_heal(t, f, "healed");
    assert_true(fake_data(t->b[1], &vl_gfid_root, "f", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "0123");
    assert_false(t_any_record(t, &f->gfid));
    vl_inode_unref(f);
}


/* diff: a sink whose bytes already match gets no write (its records
 * go); one whose bytes differ is rewritten. full writes either way. */
static void
test_heal_data_diff(void **state)
{
    struct t *t = *state;
    char buf[64];
    vl_inode_t *f = t_file(t, "f", "same bytes");
    size_t writes = fake_received(t->b[2], VL_FOP_WRITE);

    t_plant(t, 0, &f->gfid, t->key[2], REP_DATA, 1);
    t_expect_heal(t, f, "healed");
    assert_int_equal(fake_received(t->b[2], VL_FOP_WRITE), writes);
    assert_false(t_any_record(t, &f->gfid));
    t_down(t, 2);
    t_write(t, f, 0, "SAME");
    t_up(t, 2);
    t_expect_heal(t, f, "healed");
    assert_int_equal(fake_received(t->b[2], VL_FOP_WRITE), writes + 1);
    assert_true(fake_data(t->b[2], &vl_gfid_root, "f", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "SAME bytes");
    vl_inode_unref(f);
}


static int
setup3_full(void **state)
{
    return setup_n(state, 3, " option data-self-heal-algorithm full\n");
}


static void
test_heal_data_full(void **state)
{
    struct t *t = *state;
    vl_inode_t *f = t_file(t, "f", "same bytes");
    size_t writes = fake_received(t->b[2], VL_FOP_WRITE);

    t_plant(t, 0, &f->gfid, t->key[2], REP_DATA, 1);
    t_expect_heal(t, f, "healed");
    assert_int_equal(fake_received(t->b[2], VL_FOP_WRITE), writes + 1);
    assert_false(t_any_record(t, &f->gfid));
    vl_inode_unref(f);
}


/* A sink failing in the middle: nothing is cleared, the sink stays
 * blamed; the next heal finishes. */
static void
test_heal_data_fail(void **state)
{
    struct t *t = *state;
    char buf[64];
    vl_inode_t *f = t_file(t, "f", "old");

    t_down(t, 2);
    t_write(t, f, 0, "new content");
    t_up(t, 2);
    fake_fail(t->b[2], VL_FOP_WRITE, -EIO);
    assert_int_equal(t_heal(t, f, buf, sizeof(buf)), -EIO);
    assert_int_equal(t_rec(t, 0, &f->gfid, t->key[2], REP_DATA), 1);
    assert_int_equal(t_rec(t, 1, &f->gfid, t->key[2], REP_DATA), 1);
    /* The same with fsync failing after every byte was written. */
    fake_fail(t->b[2], VL_FOP_WRITE, 0);
    fake_fail(t->b[2], VL_FOP_FSYNC, -EIO);
    assert_int_equal(t_heal(t, f, buf, sizeof(buf)), -EIO);
    assert_int_equal(t_rec(t, 0, &f->gfid, t->key[2], REP_DATA), 1);
    fake_fail(t->b[2], VL_FOP_FSYNC, 0);
    /* Blamed: reads never come from it meanwhile. */
    t_expect_heal(t, f, "healed");
    assert_true(fake_data(t->b[2], &vl_gfid_root, "f", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "new content");
    assert_false(t_any_record(t, &f->gfid));
    vl_inode_unref(f);
}


/* Dirty everywhere, no blame (a cut transaction): the largest copy is
 * the source of those that differ. */
static void
test_heal_data_dirty(void **state)
{
    struct t *t = *state;
    char buf[64];
    vl_gfid_t g;
    vl_inode_t *f;

    vl_gfid_generate(&g);
    assert_int_equal(fake_mkfile(t->b[0], &vl_gfid_root, "f", &g, "abc"), 0);
    assert_int_equal(fake_mkfile(t->b[1], &vl_gfid_root, "f", &g, "abcdef"),
                     0);
    assert_int_equal(fake_mkfile(t->b[2], &vl_gfid_root, "f", &g, "abc"), 0);
    for (int i = 0; i < 3; i++)
        t_plant(t, i, &g, REP_KEY_DIRTY, REP_DATA, 1);
    assert_int_equal(t_lookup(t, "f", &f), 0);
    t_expect_heal(t, f, "healed");
    for (int i = 0; i < 3; i++) {
        assert_true(fake_data(t->b[i], &vl_gfid_root, "f", buf,
                                   sizeof(buf)) >= 0);
        assert_string_equal(buf, "abcdef");
    }
    assert_false(t_any_record(t, &g));
    /* Dirty over identical copies: only the dirty counts go. */
    for (int i = 0; i < 3; i++)
        t_plant(t, i, &g, REP_KEY_DIRTY, REP_DATA, 1);
    t_expect_heal(t, f, "clean");
    assert_false(t_any_record(t, &g));
    vl_inode_unref(f);
}


/* ---- metadata ---- */

static void
test_heal_metadata(void **state)
{
    struct t *t = *state;
    vl_inode_t *f = t_file(t, "f", "x");
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct vl_iatt ia0, ia1;
    char v[16];

    /* An extra xattr on the copy that will be a sink goes. */
    assert_int_equal(fake_set_xattr(t->b[1], &f->gfid, "user.stale", "s",
                                    1), 0);
    t_down(t, 1);
    a.setattr.loc.inode = f;
    a.setattr.attr.mode = 0600;
    a.setattr.attr.uid = 42;
    a.setattr.attr.mtime = 1000;
    a.setattr.valid = VL_SET_MODE | VL_SET_UID | VL_SET_MTIME;
    assert_int_equal(t_call(t, VL_FOP_SETATTR, &a, &r), 0);
    vl_reply_clear(&r);
    memset(&a, 0, sizeof(a));
    a.setxattr.loc.inode = f;
    a.setxattr.name = "user.k";
    a.setxattr.value = "val";
    a.setxattr.size = 3;
    assert_int_equal(t_call(t, VL_FOP_SETXATTR, &a, &r), 0);
    vl_reply_clear(&r);
    t_up(t, 1);
    assert_true(t_rec(t, 0, &f->gfid, t->key[1], REP_METADATA) > 0);
    t_expect_heal(t, f, "healed");
    assert_int_equal(fake_stat(t->b[0], &f->gfid, &ia0), 0);
    assert_int_equal(fake_stat(t->b[1], &f->gfid, &ia1), 0);
    assert_int_equal(ia1.mode, S_IFREG | 0600);
    assert_int_equal(ia1.uid, 42);
    assert_int_equal(ia1.mtime, ia0.mtime);
    assert_int_equal(fake_xattr(t->b[1], &f->gfid, "user.k", v, sizeof(v)),
                     3);
    assert_int_equal(fake_xattr(t->b[1], &f->gfid, "user.stale", v,
                                sizeof(v)), -ENODATA);
    assert_false(t_any_record(t, &f->gfid));
    vl_inode_unref(f);
}


/* Both copies blame the other: nothing is touched, the answer says so
 * and reads answer EIO. */
static void
test_heal_split_brain(void **state)
{
    struct t *t = *state;
    vl_inode_t *f = t_file(t, "f", "x");
    struct vl_iatt ia;

    assert_int_equal(fake_set_attr(t->b[1], &f->gfid, 0700, 7, 5), 0);
    t_plant(t, 0, &f->gfid, t->key[1], REP_METADATA, 1);
    t_plant(t, 1, &f->gfid, t->key[0], REP_METADATA, 1);
    t_expect_heal(t, f, "split-brain");
    assert_int_equal(t_rec(t, 0, &f->gfid, t->key[1], REP_METADATA), 1);
    assert_int_equal(t_rec(t, 1, &f->gfid, t->key[0], REP_METADATA), 1);
    assert_int_equal(fake_stat(t->b[1], &f->gfid, &ia), 0);
    assert_int_equal(ia.mode & 07777, 0700);
    /* Named all the same (its attributes from one copy). */
    assert_int_equal(t_lookup(t, "f", NULL), 0);
    vl_inode_unref(f);
}


/* A copy down: nothing can finish. */
static void
test_heal_pending(void **state)
{
    struct t *t = *state;
    vl_inode_t *f = t_file(t, "f", "x");

    t_down(t, 2);
    t_write(t, f, 0, "yy");
    t_expect_heal(t, f, "pending");
    t_up(t, 2);
    t_expect_heal(t, f, "healed");
    vl_inode_unref(f);
}


/* ---- entries ---- */

static void
test_heal_entry(void **state)
{
    struct t *t = *state;
    vl_gfid_t gd, gs, gold, gnew;
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *fresh, *old, *nf;
    char buf[64];
    struct vl_iatt ia;

    old = t_file(t, "old", "gone");
    gold = old->gfid;
    t_down(t, 2);
    /* Made while b2 is down: a file with content, a directory, a
     * symlink; "old" removed. */
    nf = t_file(t, "new", "content");
    gnew = nf->gfid;
    fresh = vl_inode_new(t->g->graph->itable);
    a.mkdir.loc.parent = t->root;
    a.mkdir.loc.name = "d";
    a.mkdir.loc.inode = fresh;
    a.mkdir.mode = 0750;
    vl_gfid_generate(&a.mkdir.gfid);
    gd = a.mkdir.gfid;
    assert_int_equal(t_call(t, VL_FOP_MKDIR, &a, &r), 0);
    vl_reply_clear(&r);
    vl_inode_unref(fresh);
    fresh = vl_inode_new(t->g->graph->itable);
    memset(&a, 0, sizeof(a));
    a.symlink.loc.parent = t->root;
    a.symlink.loc.name = "s";
    a.symlink.loc.inode = fresh;
    a.symlink.target = "new";
    vl_gfid_generate(&a.symlink.gfid);
    gs = a.symlink.gfid;
    assert_int_equal(t_call(t, VL_FOP_SYMLINK, &a, &r), 0);
    vl_reply_clear(&r);
    vl_inode_unref(fresh);
    memset(&a, 0, sizeof(a));
    a.unlink.loc.parent = t->root;
    a.unlink.loc.name = "old";
    a.unlink.loc.inode = old;
    assert_int_equal(t_call(t, VL_FOP_UNLINK, &a, &r), 0);
    vl_reply_clear(&r);
    t_up(t, 2);
    assert_true(t_rec(t, 0, &vl_gfid_root, t->key[2], REP_ENTRY) > 0);

    t_expect_heal(t, t->root, "healed");
    assert_false(t_any_record(t, &vl_gfid_root));
    assert_int_equal(fake_gfid(t->b[2], &vl_gfid_root, "old", &ia.gfid),
                     -ENOENT);
    assert_int_equal(fake_stat(t->b[2], &gd, &ia), 0);
    assert_int_equal(ia.mode, S_IFDIR | 0750);
    assert_true(fake_data(t->b[2], &vl_gfid_root, "s", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "new");
    assert_int_equal(fake_stat(t->b[2], &gs, &ia), 0);
    assert_true(S_ISLNK(ia.mode));
    /* The new file exists, empty, and its source blames it: its own heal
     * fills it. */
    assert_int_equal(fake_stat(t->b[2], &gnew, &ia), 0);
    assert_int_equal(ia.size, 0);
    assert_true(t_rec(t, 0, &gnew, t->key[2], REP_DATA) > 0);
    t_expect_heal(t, nf, "healed");
    assert_true(fake_data(t->b[2], &vl_gfid_root, "new", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "content");
    assert_false(t_any_record(t, &gnew));
    (void)gold;
    vl_inode_unref(old);
    vl_inode_unref(nf);
}


/* A name with two GFIDs and no record saying which is right (dirty
 * only): left alone, the records stay; a merge still creates what one
 * copy lacks. */
static void
test_heal_entry_gfid_conflict(void **state)
{
    struct t *t = *state;
    vl_gfid_t g0, g1, gm, got;

    vl_gfid_generate(&g0);
    vl_gfid_generate(&g1);
    vl_gfid_generate(&gm);
    assert_int_equal(fake_mkfile(t->b[0], &vl_gfid_root, "x", &g0, "a"), 0);
    assert_int_equal(fake_mkfile(t->b[1], &vl_gfid_root, "x", &g1, "b"), 0);
    assert_int_equal(fake_mkfile(t->b[0], &vl_gfid_root, "m", &gm, ""), 0);
    t_plant(t, 0, &vl_gfid_root, REP_KEY_DIRTY, REP_ENTRY, 1);
    t_plant(t, 1, &vl_gfid_root, REP_KEY_DIRTY, REP_ENTRY, 1);
    t_expect_heal(t, t->root, "split-brain");
    assert_int_equal(fake_gfid(t->b[1], &vl_gfid_root, "x", &got), 0);
    assert_true(vl_gfid_equal(&got, &g1));
    assert_int_equal(fake_gfid(t->b[0], &vl_gfid_root, "x", &got), 0);
    assert_true(vl_gfid_equal(&got, &g0));
    assert_int_equal(fake_gfid(t->b[1], &vl_gfid_root, "m", &got), 0);
    assert_true(vl_gfid_equal(&got, &gm));
    assert_int_equal(t_rec(t, 0, &vl_gfid_root, REP_KEY_DIRTY, REP_ENTRY),
                     1);
}


/* The sink holds the name with another GFID than the sources (it missed
 * an unlink and a create, or a rename over the name): the sink's object
 * goes (it had no other name) and the name gets the sources' GFID. */
static void
test_heal_entry_replace(void **state)
{
    struct t *t = *state;
    vl_gfid_t gold, gnew, got;
    struct vl_iatt ia;

    vl_gfid_generate(&gold);
    vl_gfid_generate(&gnew);
    for (int i = 0; i < 2; i++)
        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "x", &gnew,
                                     "new"), 0);
    assert_int_equal(fake_mkfile(t->b[2], &vl_gfid_root, "x", &gold, "old"),
                     0);
    t_plant(t, 0, &vl_gfid_root, t->key[2], REP_ENTRY, 1);
    t_plant(t, 1, &vl_gfid_root, t->key[2], REP_ENTRY, 1);
    t_plant(t, 2, &vl_gfid_root, REP_KEY_DIRTY, REP_ENTRY, 1);
    t_expect_heal(t, t->root, "healed");
    assert_int_equal(fake_gfid(t->b[2], &vl_gfid_root, "x", &got), 0);
    assert_true(vl_gfid_equal(&got, &gnew));
    assert_int_equal(fake_stat(t->b[2], &gold, &ia), -ENOENT);
    assert_false(t_any_record(t, &vl_gfid_root));
}


/* A name healed onto a copy is blamed there before it is made: the new
 * copy is empty, and an entry heal that dies (or whose create fails)
 * after making it must not leave it looking as good as the others. Here
 * the create fails on b2: both copies that hold the file already blame
 * b2 for its data and metadata. */
static void
test_heal_entry_marks_before_create(void **state)
{
    struct t *t = *state;
    vl_inode_t *f;
    vl_gfid_t g;
    char out[32];

    vl_gfid_generate(&g);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "x", &g,
                                     "data"), 0);
        t_plant(t, i, &vl_gfid_root, t->key[2], REP_ENTRY, 1);
    }
    fake_fail(t->b[2], VL_FOP_MKNOD, -EIO);
    (void)t_heal(t, t->root, out, sizeof(out));
    fake_fail(t->b[2], VL_FOP_MKNOD, 0);
    assert_int_equal(fake_gfid(t->b[2], &vl_gfid_root, "x", &g), -ENOENT);
    for (int i = 0; i < 2; i++) {
        assert_true(t_rec(t, i, &g, t->key[2], REP_DATA) > 0);
        assert_true(t_rec(t, i, &g, t->key[2], REP_METADATA) > 0);
    }
    /* The next heal of the directory makes it, the file's fills it. */
    t_expect_heal(t, t->root, "healed");
    f = vl_inode_get(t->root->table, &g, S_IFREG);
    assert_non_null(f);
    t_expect_heal(t, f, "healed");
    vl_inode_unref(f);
    assert_int_equal(fake_data(t->b[2], &vl_gfid_root, "x", out,
                               sizeof(out)), 4);
    assert_string_equal(out, "data");
    assert_false(t_any_record(t, &g));
}


/* Renames dir/from (inode obj) to to_dir/to through replicate. */
static int
t_rename(struct t *t, vl_inode_t *dir, const char *from, vl_inode_t *obj,
         vl_inode_t *to_dir, const char *to)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.rename.oldloc.parent = dir;
    a.rename.oldloc.name = from;
    a.rename.oldloc.inode = obj;
    a.rename.newloc.parent = to_dir;
    a.rename.newloc.name = to;
    rc = t_call(t, VL_FOP_RENAME, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


/* The race of stress/rep-chaos.t: b2 misses a rename of s/a away and a
 * create of a new s/a; back up, before the heal of s, a rename of s/a
 * to d/b reaches b2, which moves its stale s/a (the brick renames by
 * name) and answers success. That copy of d must be blamed: else d's
 * records say nothing, its heal finds nothing to do, and d/b keeps two
 * GFIDs for ever (every lookup EIO). With the blame, the heals of s and
 * d leave identical copies and no record. */
static void
test_rename_stale_source(void **state)
{
    struct t *t = *state;
    vl_inode_t *s = t_mkdir(t, "s"), *d = t_mkdir(t, "d");
    vl_inode_t *stale = t_file_at(t, s, "a", "stale");
    vl_inode_t *fresh;
    vl_gfid_t got;
    struct vl_iatt ia;

    t_down(t, 2);
    assert_int_equal(t_rename(t, s, "a", stale, s, "kept"), 0);
    fresh = t_file_at(t, s, "a", "fresh");
    t_up(t, 2);
    assert_int_equal(fake_gfid(t->b[2], &s->gfid, "a", &got), 0);
    assert_true(vl_gfid_equal(&got, &stale->gfid));

    assert_int_equal(t_rename(t, s, "a", fresh, d, "b"), 0);
    /* b2 moved its stale object and is blamed for both directories. */
    assert_true(t_rec(t, 0, &d->gfid, t->key[2], REP_ENTRY) > 0);
    assert_true(t_rec(t, 1, &d->gfid, t->key[2], REP_ENTRY) > 0);
    assert_true(t_rec(t, 0, &s->gfid, t->key[2], REP_ENTRY) > 0);
    assert_int_equal(t_rec(t, 0, &d->gfid, t->key[1], REP_ENTRY), 0);

    /* d first: the fake keeps one name per object (no hard links), so
     * b2's stale object must leave d/b before s/kept gets it back. */
    t_expect_heal(t, d, "healed");
    t_expect_heal(t, s, "healed");
    t_expect_heal(t, fresh, "healed");
    t_expect_heal(t, stale, "healed");
    for (int i = 0; i < 3; i++) {
        char buf[16];

        assert_int_equal(fake_gfid(t->b[i], &d->gfid, "b", &got), 0);
        assert_true(vl_gfid_equal(&got, &fresh->gfid));
        assert_true(fake_data(t->b[i], &d->gfid, "b", buf, sizeof(buf))
                    >= 0);
        assert_string_equal(buf, "fresh");
        assert_int_equal(fake_gfid(t->b[i], &s->gfid, "kept", &got), 0);
        assert_true(vl_gfid_equal(&got, &stale->gfid));
        assert_true(fake_data(t->b[i], &s->gfid, "kept", buf, sizeof(buf))
                    >= 0);
        assert_string_equal(buf, "stale");
        assert_int_equal(fake_gfid(t->b[i], &s->gfid, "a", &got), -ENOENT);
    }
    assert_false(t_any_record(t, &d->gfid));
    assert_false(t_any_record(t, &s->gfid));
    assert_false(t_any_record(t, &fresh->gfid));
    assert_false(t_any_record(t, &stale->gfid));
    assert_int_equal(fake_stat(t->b[2], &fresh->gfid, &ia), 0);
    vl_inode_unref(fresh);
    vl_inode_unref(stale);
    vl_inode_unref(d);
    vl_inode_unref(s);
}

/* stress/rep-client-kill-rename.t: a client killed while it renamed t
 * over r: b1 took the rename (r is Y, t gone, X gone with its last
 * name), b0 and b2 did not (r is X, t is Y); only dirty on the
 * directory. The heal takes the rename back on b1 (r is X again, t is
 * Y): identical copies, no record, instead of a name with two GFIDs for
 * ever. */
static void
test_heal_entry_cut_rename(void **state)
{
    struct t *t = *state;
    vl_gfid_t gx, gy, got;
    vl_inode_t *ix, *iy;
    char buf[16];

    vl_gfid_generate(&gx);
    vl_gfid_generate(&gy);
    for (int i = 0; i < 3; i += 2) {
        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "r", &gx,
                                     "old"), 0);
        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "t", &gy,
                                     "new"), 0);
    }
    assert_int_equal(fake_mkfile(t->b[1], &vl_gfid_root, "r", &gy, "new"),
                     0);
    for (int i = 0; i < 3; i++)
        t_plant(t, i, &vl_gfid_root, REP_KEY_DIRTY, REP_ENTRY, 1);
    t_expect_heal(t, t->root, "healed");
    ix = vl_inode_get(t->g->graph->itable, &gx, S_IFREG);
    iy = vl_inode_get(t->g->graph->itable, &gy, S_IFREG);
    t_expect_heal(t, ix, "healed");
    t_expect_heal(t, iy, "healed");
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fake_gfid(t->b[i], &vl_gfid_root, "r", &got), 0);
        assert_true(vl_gfid_equal(&got, &gx));
        assert_true(fake_data(t->b[i], &vl_gfid_root, "r", buf,
                              sizeof(buf)) >= 0);
        assert_string_equal(buf, "old");
        assert_int_equal(fake_gfid(t->b[i], &vl_gfid_root, "t", &got), 0);
        assert_true(vl_gfid_equal(&got, &gy));
        assert_true(fake_data(t->b[i], &vl_gfid_root, "t", buf,
                              sizeof(buf)) >= 0);
        assert_string_equal(buf, "new");
    }
    assert_false(t_any_record(t, &vl_gfid_root));
    assert_false(t_any_record(t, &gx));
    assert_false(t_any_record(t, &gy));
    vl_inode_unref(ix);
    vl_inode_unref(iy);
}

/* A creation that fails on the sink leaves the directory's records. */
static void
test_heal_entry_fail(void **state)
{
    struct t *t = *state;
    vl_inode_t *f;
    char buf[16];
    vl_gfid_t g;

    t_down(t, 1);
    f = t_file(t, "n", "");
    t_up(t, 1);
    fake_fail(t->b[1], VL_FOP_MKNOD, -ENOSPC);
    assert_int_equal(t_heal(t, t->root, buf, sizeof(buf)), -EIO);
    assert_int_equal(t_rec(t, 0, &vl_gfid_root, t->key[1], REP_ENTRY), 1);
    fake_fail(t->b[1], VL_FOP_MKNOD, 0);
    t_expect_heal(t, t->root, "healed");
    assert_int_equal(fake_gfid(t->b[1], &vl_gfid_root, "n", &g), 0);
    assert_true(vl_gfid_equal(&g, &f->gfid));
    vl_inode_unref(f);
}


/* ---- on access ---- */

static void
test_heal_on_lookup(void **state)
{
    struct t *t = *state;
    char buf[64] = "";
    vl_inode_t *f = t_file(t, "f", "v1");

    t_down(t, 2);
    t_write(t, f, 0, "v2 longer");
    t_up(t, 2);
    /* The lookup answers at once; the heal runs on its own thread. */
    assert_int_equal(t_lookup(t, "f", NULL), 0);
    for (int i = 0; i < 500 && t_any_record(t, &f->gfid); i++)
        usleep(10 * 1000);
    assert_false(t_any_record(t, &f->gfid));
    assert_true(fake_data(t->b[2], &vl_gfid_root, "f", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "v2 longer");
    vl_inode_unref(f);
}


/* A name made while b2 was down: a lookup of it (only the good copies
 * of the directory are asked) starts the heal of the directory. */
static void
test_heal_parent_on_lookup(void **state)
{
    struct t *t = *state;
    vl_inode_t *f;
    vl_gfid_t g;
    int rc = -ENOENT;

    t_down(t, 2);
    f = t_file(t, "n", "");
    t_up(t, 2);
    assert_int_equal(t_lookup(t, "n", NULL), 0);
    for (int i = 0; i < 500 && rc != 0; i++) {
        rc = fake_gfid(t->b[2], &vl_gfid_root, "n", &g);
        if (rc != 0)
            usleep(10 * 1000);
    }
    assert_int_equal(rc, 0);
    assert_true(vl_gfid_equal(&g, &f->gfid));
    for (int i = 0; i < 500 && t_any_record(t, &vl_gfid_root); i++)
        usleep(10 * 1000);
    assert_false(t_any_record(t, &vl_gfid_root));
    vl_inode_unref(f);
}


static int
setup3_no_data_heal(void **state)
{
    return setup_n(state, 3, " option data-self-heal off\n");
}


/* data-self-heal off: a lookup starts no data heal; the key still
 * heals. */
static void
test_heal_on_lookup_off(void **state)
{
    struct t *t = *state;
    vl_inode_t *f = t_file(t, "f", "v1");

    t_down(t, 2);
    t_write(t, f, 0, "v2");
    t_up(t, 2);
    assert_int_equal(t_lookup(t, "f", NULL), 0);
    usleep(200 * 1000);
    assert_int_equal(t_rec(t, 0, &f->gfid, t->key[2], REP_DATA), 1);
    t_expect_heal(t, f, "healed");
    vl_inode_unref(f);
}


/* ---- mortar.heal.full: the merge of a clean directory ---- */

/* b2 emptied (as a replaced brick without records): the names made on
 * b0 and b1 are unknown to the records. mortar.heal finds nothing to
 * do; mortar.heal.full creates them on b2 and marks the new file for its
 * own heal. */
static void
test_full_merge(void **state)
{
    struct t *t = *state;
    vl_gfid_t gf, gd, gs, got;
    vl_inode_t *f;
    struct vl_iatt ia;
    char buf[64];

    vl_gfid_generate(&gf);
    vl_gfid_generate(&gd);
    vl_gfid_generate(&gs);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "f", &gf,
                                     "content"), 0);
        assert_int_equal(fake_set_attr(t->b[i], &gf, 0640, 7, 100), 0);
        assert_int_equal(fake_mkobj(t->b[i], &vl_gfid_root, "d", &gd,
                                    S_IFDIR | 0750, NULL), 0);
        assert_int_equal(fake_mkobj(t->b[i], &vl_gfid_root, "s", &gs,
                                    S_IFLNK | 0777, "f"), 0);
    }
    t_expect_heal(t, t->root, "clean");
    assert_int_equal(fake_gfid(t->b[2], &vl_gfid_root, "f", &got), -ENOENT);

    t_expect_key(t, t->root, REP_XATTR_HEAL_FULL, "healed");
    assert_int_equal(fake_gfid(t->b[2], &vl_gfid_root, "f", &got), 0);
    assert_true(vl_gfid_equal(&got, &gf));
    assert_int_equal(fake_stat(t->b[2], &gf, &ia), 0);
    assert_int_equal(ia.mode, S_IFREG | 0640);
    assert_int_equal(fake_stat(t->b[2], &gd, &ia), 0);
    assert_int_equal(ia.mode, S_IFDIR | 0750);
    assert_true(fake_data(t->b[2], &vl_gfid_root, "s", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "f");
    /* The new file is blamed by its source: its own heal fills it. */
    assert_true(t_rec(t, 0, &gf, t->key[2], REP_DATA) > 0);
    f = vl_inode_get(t->g->graph->itable, &gf, S_IFREG);
    t_expect_heal(t, f, "healed");
    assert_true(fake_data(t->b[2], &vl_gfid_root, "f", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "content");
    assert_false(t_any_record(t, &gf));
    assert_int_equal(fake_stat(t->b[2], &gf, &ia), 0);
    assert_int_equal(ia.uid, 7);
    assert_int_equal(ia.mtime, 100);
    /* Nothing left to merge. */
    t_expect_key(t, t->root, REP_XATTR_HEAL_FULL, "clean");
    vl_inode_unref(f);
}


/* A name with two GFIDs is left alone by a merge (the answer says
 * split-brain); the other names are still created; nothing removed. */
static void
test_full_merge_gfid_conflict(void **state)
{
    struct t *t = *state;
    vl_gfid_t g0, g1, gm, got;

    vl_gfid_generate(&g0);
    vl_gfid_generate(&g1);
    vl_gfid_generate(&gm);
    assert_int_equal(fake_mkfile(t->b[0], &vl_gfid_root, "x", &g0, "a"), 0);
    assert_int_equal(fake_mkfile(t->b[1], &vl_gfid_root, "x", &g1, "b"), 0);
    assert_int_equal(fake_mkfile(t->b[1], &vl_gfid_root, "m", &gm, ""), 0);
    t_expect_key(t, t->root, REP_XATTR_HEAL_FULL, "split-brain");
    assert_int_equal(fake_gfid(t->b[0], &vl_gfid_root, "x", &got), 0);
    assert_true(vl_gfid_equal(&got, &g0));
    assert_int_equal(fake_gfid(t->b[1], &vl_gfid_root, "x", &got), 0);
    assert_true(vl_gfid_equal(&got, &g1));
    assert_int_equal(fake_gfid(t->b[2], &vl_gfid_root, "x", &got), -ENOENT);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fake_gfid(t->b[i], &vl_gfid_root, "m", &got), 0);
        assert_true(vl_gfid_equal(&got, &gm));
    }
}


/* ---- split-brain resolution ---- */

/* A file "f" whose copies hold data[i] with mtime[i], each blaming every
 * other copy for data (a data split-brain); its inode. */
static vl_inode_t *
t_split_file(struct t *t, const char *const *data, const int64_t *mtime)
{
    vl_gfid_t g;

    vl_gfid_generate(&g);
    for (int i = 0; i < t->n; i++) {
        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "f", &g,
                                     data[i]), 0);
        assert_int_equal(fake_set_attr(t->b[i], &g, 0644, 0, mtime[i]), 0);
        for (int j = 0; j < t->n; j++)
            if (j != i)
                t_plant(t, i, &g, t->key[j], REP_DATA, 1);
    }
    return vl_inode_get(t->g->graph->itable, &g, S_IFREG);
}


/* Every copy of f holds want, and no record is left. */
static void
t_expect_data(struct t *t, vl_inode_t *f, const char *want)
{
    char buf[64];

    for (int i = 0; i < t->n; i++) {
        assert_true(fake_data(t->b[i], &vl_gfid_root, "f", buf,
                              sizeof(buf)) >= 0);
        assert_string_equal(buf, want);
    }
    assert_false(t_any_record(t, &f->gfid));
}


static void
test_resolve_bigger_file(void **state)
{
    struct t *t = *state;
    const char *data[] = {"short", "the longer one"};
    const int64_t mtime[] = {200, 100};
    vl_inode_t *f = t_split_file(t, data, mtime);

    t_expect_heal(t, f, "split-brain");
    t_expect_key(t, f, REP_XATTR_RESOLVE "bigger-file", "healed");
    t_expect_data(t, f, "the longer one");
    assert_int_equal(t_lookup(t, "f", NULL), 0);
    vl_inode_unref(f);
}


static void
test_resolve_latest_mtime(void **state)
{
    struct t *t = *state;
    const char *data[] = {"short", "the longer one"};
    const int64_t mtime[] = {200, 100};
    vl_inode_t *f = t_split_file(t, data, mtime);

    t_expect_key(t, f, REP_XATTR_RESOLVE "latest-mtime", "healed");
    t_expect_data(t, f, "short");
    vl_inode_unref(f);
}


static void
test_resolve_source_brick(void **state)
{
    struct t *t = *state;
    const char *data[] = {"zero", "one"};
    const int64_t mtime[] = {200, 100};
    vl_inode_t *f = t_split_file(t, data, mtime);
    char buf[32];

    /* A child that is not one of ours, a rule that does not exist:
     * EINVAL, nothing changed. */
    assert_int_equal(t_heal_key(t, f, REP_XATTR_RESOLVE "source-brick.b9",
                                buf, sizeof(buf)), -EINVAL);
    assert_int_equal(t_heal_key(t, f, REP_XATTR_RESOLVE "oldest", buf,
                                sizeof(buf)), -EINVAL);
    assert_int_equal(t_rec(t, 0, &f->gfid, t->key[1], REP_DATA), 1);
    assert_int_equal(t_rec(t, 1, &f->gfid, t->key[0], REP_DATA), 1);
    t_expect_key(t, f, REP_XATTR_RESOLVE "source-brick.b1", "healed");
    t_expect_data(t, f, "one");
    vl_inode_unref(f);
}


/* Equal sizes, equal mtimes: nothing chosen, nothing changed. */
static void
test_resolve_ambiguous(void **state)
{
    struct t *t = *state;
    const char *data[] = {"aaaa", "bbbb"};
    const int64_t mtime[] = {100, 100};
    vl_inode_t *f = t_split_file(t, data, mtime);
    char buf[16];

    t_expect_key(t, f, REP_XATTR_RESOLVE "bigger-file", "ambiguous");
    t_expect_key(t, f, REP_XATTR_RESOLVE "latest-mtime", "ambiguous");
    assert_int_equal(t_rec(t, 0, &f->gfid, t->key[1], REP_DATA), 1);
    assert_int_equal(t_rec(t, 1, &f->gfid, t->key[0], REP_DATA), 1);
    assert_true(fake_data(t->b[0], &vl_gfid_root, "f", buf, sizeof(buf))
                >= 0);
    assert_string_equal(buf, "aaaa");
    vl_inode_unref(f);
}


/* No split-brain: a resolve key changes nothing, not even a heal the
 * records ask for; bigger-file on a directory is refused. */
static void
test_resolve_not_split(void **state)
{
    struct t *t = *state;
    vl_inode_t *f = t_file(t, "f", "x");
    char buf[32];

    t_expect_key(t, f, REP_XATTR_RESOLVE "latest-mtime", "not-split-brain");
    t_plant(t, 0, &f->gfid, t->key[1], REP_DATA, 1);
    t_expect_key(t, f, REP_XATTR_RESOLVE "source-brick.b1",
                 "not-split-brain");
    assert_int_equal(t_rec(t, 0, &f->gfid, t->key[1], REP_DATA), 1);
    assert_int_equal(t_heal_key(t, t->root,
                                REP_XATTR_RESOLVE "bigger-file", buf,
                                sizeof(buf)), -EINVAL);
    t_down(t, 1);
    t_expect_key(t, f, REP_XATTR_RESOLVE "latest-mtime", "pending");
    t_up(t, 1);
    vl_inode_unref(f);
}


/* Metadata split-brain by latest-mtime; entry split-brain by
 * source-brick (the chosen copy's names win: a name only the other copy
 * has is removed there, one only the chosen has is created). */
static void
test_resolve_metadata_entry(void **state)
{
    struct t *t = *state;
    vl_inode_t *f = t_file(t, "f", "x");
    vl_gfid_t gx, gy, got;
    struct vl_iatt ia;

    assert_int_equal(fake_set_attr(t->b[0], &f->gfid, 0600, 3, 100), 0);
    assert_int_equal(fake_set_attr(t->b[1], &f->gfid, 0755, 4, 300), 0);
    t_plant(t, 0, &f->gfid, t->key[1], REP_METADATA, 1);
    t_plant(t, 1, &f->gfid, t->key[0], REP_METADATA, 1);
    /* bigger-file covers data only: the metadata split-brain stays. */
    t_expect_key(t, f, REP_XATTR_RESOLVE "bigger-file", "split-brain");
    t_expect_key(t, f, REP_XATTR_RESOLVE "latest-mtime", "healed");
    assert_int_equal(fake_stat(t->b[0], &f->gfid, &ia), 0);
    assert_int_equal(ia.mode, S_IFREG | 0755);
    assert_int_equal(ia.uid, 4);
    assert_false(t_any_record(t, &f->gfid));

    vl_gfid_generate(&gx);
    vl_gfid_generate(&gy);
    assert_int_equal(fake_mkfile(t->b[0], &vl_gfid_root, "x", &gx, "x"), 0);
    assert_int_equal(fake_mkfile(t->b[1], &vl_gfid_root, "y", &gy, "y"), 0);
    t_plant(t, 0, &vl_gfid_root, t->key[1], REP_ENTRY, 1);
    t_plant(t, 1, &vl_gfid_root, t->key[0], REP_ENTRY, 1);
    t_expect_heal(t, t->root, "split-brain");
    t_expect_key(t, t->root, REP_XATTR_RESOLVE "latest-mtime",
                 "split-brain");
    t_expect_key(t, t->root, REP_XATTR_RESOLVE "source-brick.b1", "healed");
    assert_int_equal(fake_gfid(t->b[0], &vl_gfid_root, "x", &got), -ENOENT);
    assert_int_equal(fake_gfid(t->b[0], &vl_gfid_root, "y", &got), 0);
    assert_true(vl_gfid_equal(&got, &gy));
    assert_int_equal(t_rec(t, 0, &vl_gfid_root, t->key[1], REP_ENTRY), 0);
    assert_int_equal(t_rec(t, 1, &vl_gfid_root, t->key[0], REP_ENTRY), 0);
    vl_inode_unref(f);
}


/* Three copies: b0 blames b1 and b2, both blame b0. b1 and b2 are not
 * blamed by two of three copies and agree: they are the sources. */
static void
test_policy_majority(void **state)
{
    struct t *t = *state;
    vl_gfid_t g;
    vl_inode_t *f;

    vl_gfid_generate(&g);
    assert_int_equal(fake_mkfile(t->b[0], &vl_gfid_root, "f", &g, "odd"),
                     0);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "f", &g,
                                     "even"), 0);
        t_plant(t, i, &g, t->key[0], REP_DATA, 1);
        t_plant(t, 0, &g, t->key[i], REP_DATA, 1);
    }
    f = vl_inode_get(t->g->graph->itable, &g, S_IFREG);
    t_expect_heal(t, f, "healed");
    t_expect_data(t, f, "even");
    vl_inode_unref(f);
}


/* favorite-child-policy mtime: the lookup that meets the split-brain
 * starts a heal that resolves it. */
static void
test_policy_on_lookup(void **state)
{
    struct t *t = *state;
    const char *data[] = {"old and long", "new"};
    const int64_t mtime[] = {100, 200};
    vl_inode_t *f = t_split_file(t, data, mtime);

    assert_int_equal(t_lookup(t, "f", NULL), 0);
    for (int i = 0; i < 500 && t_any_record(t, &f->gfid); i++)
        usleep(10 * 1000);
    t_expect_data(t, f, "new");
    assert_int_equal(t_lookup(t, "f", NULL), 0);
    vl_inode_unref(f);
}


static int
setup2_policy_mtime(void **state)
{
    return setup_n(state, 2, " option quorum-type none\n"
                             " option favorite-child-policy mtime\n");
}


/* The heal throttle: writes start one after another at the configured
 * rate, all heals sharing one schedule; an idle throttle banks no credit
 * beyond the write at hand; rate 0 never waits. */
static void
test_heal_rate(void **state)
{
    uint64_t next = 0, s = 1000000000u; /* ns */

    (void)state;
    assert_int_equal(rep_heal_rate_wait(&next, 5 * s, 1 << 20, 0), 0);
    assert_int_equal(next, 0);
    /* 1 MiB/s: a 1 MiB write goes at once, the next one second later. */
    assert_int_equal(rep_heal_rate_wait(&next, 5 * s, 1 << 20, 1 << 20), 0);
    assert_int_equal(next, 6 * s);
    assert_int_equal(rep_heal_rate_wait(&next, 5 * s, 1 << 19, 1 << 20), s);
    assert_int_equal(next, 6 * s + s / 2);
    /* Another heal thread at the same instant queues behind both. */
    assert_int_equal(rep_heal_rate_wait(&next, 5 * s, 1 << 20, 1 << 20),
                     s + s / 2);
    assert_int_equal(next, 7 * s + s / 2);
    /* Long idle: no credit saved up. */
    assert_int_equal(rep_heal_rate_wait(&next, 100 * s, 1 << 20, 1 << 20),
                     0);
    assert_int_equal(next, 101 * s);
}


static int
setup3_policy_majority(void **state)
{
    return setup_n(state, 3, " option favorite-child-policy majority\n");
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick_matrix),
        cmocka_unit_test(test_heal_rate),
        cmocka_unit_test_setup_teardown(test_heal_data, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_heal_small_requests, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_small_plain_bricks,
                                        setup3, teardown),
        cmocka_unit_test_setup_teardown(test_heal_data_shrink, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_data_diff, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_data_full, setup3_full,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_data_fail, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_data_dirty, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_metadata, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_split_brain, setup2,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_pending, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_heal_entry, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_heal_entry_gfid_conflict,
                                        setup3, teardown),
        cmocka_unit_test_setup_teardown(test_heal_entry_marks_before_create,
                                        setup3, teardown),
        cmocka_unit_test_setup_teardown(test_heal_entry_replace, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rename_stale_source, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_entry_cut_rename, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_entry_fail, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_on_lookup, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_parent_on_lookup, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heal_on_lookup_off,
                                        setup3_no_data_heal, teardown),
        cmocka_unit_test_setup_teardown(test_full_merge, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_full_merge_gfid_conflict,
                                        setup3, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_bigger_file, setup2,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resolve_latest_mtime, setup2,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resolve_source_brick, setup2,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resolve_ambiguous, setup2,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resolve_not_split, setup2,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resolve_metadata_entry, setup2,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_policy_majority,
                                        setup3_policy_majority, teardown),
        cmocka_unit_test_setup_teardown(test_policy_on_lookup,
                                        setup2_policy_mtime, teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
