/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rep-heal-down: replicate's heal of one object with a child down
 * (issue 22; rep-heal.c "A heal needs two children up"), over three
 * in-memory bricks (rep-fake.c). For each kind (data, metadata,
 * entries) and each order of the three bricks: brick A misses a change
 * while down, comes back, brick B goes down and a second change lands on
 * A and C; the heal then makes A C's copy while B is down, and keeps
 * every record against B (C's and, inherited, A's) so the object stays
 * listed; once B is back the next heal makes B the same and clears
 * everything. And the cases where the up copies' records prove no
 * source: nothing is guessed, the heal answers "pending".
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

#include "rep-heal-test.h"

/* The orders (A, B, C): A stale, B down during the heal, C the source. */
static const int t_orders[6][3] = {
    {0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0},
};


static int
setup3(void **state)
{
    return setup_n(state, 3, "");
}


/* Removes name (object obj) from dir through replicate. */
static void
t_unlink(struct t *t, vl_inode_t *dir, const char *name, vl_inode_t *obj)
{
    union vl_fop_args a = {0};
    struct vl_reply r;

    a.unlink.loc.parent = dir;
    a.unlink.loc.name = name;
    a.unlink.loc.inode = obj;
    assert_int_equal(t_call(t, VL_FOP_UNLINK, &a, &r), 0);
    vl_reply_clear(&r);
}


static void
t_same_data(struct t *t, const vl_gfid_t *dir, const char *name, int x,
            int y)
{
    char bx[64], by[64];

    assert_true(fake_data(t->b[x], dir, name, bx, sizeof(bx)) >= 0);
    assert_true(fake_data(t->b[y], dir, name, by, sizeof(by)) >= 0);
    assert_string_equal(bx, by);
}


/* Every record against B stays on A and C for kind, none between A and
 * C. */
static void
t_expect_owed(struct t *t, const vl_gfid_t *g, int a, int b, int c, int k)
{
    assert_true(t_rec(t, c, g, t->key[b], k) > 0);
    assert_true(t_rec(t, a, g, t->key[b], k) > 0);
    assert_int_equal(t_rec(t, c, g, t->key[a], k), 0);
    assert_int_equal(t_rec(t, a, g, t->key[c], k), 0);
}


static void
test_data_one_down(void **state)
{
    struct t *t = *state;

    for (int o = 0; o < 6; o++) {
        int a = t_orders[o][0], b = t_orders[o][1], c = t_orders[o][2];
        char name[16], buf[64];
        vl_inode_t *f;

        snprintf(name, sizeof(name), "f%d%d", a, b);
        f = t_file(t, name, "base");
        t_down(t, a);
        t_write(t, f, 0, "first change");
        t_up(t, a);
        t_down(t, b);
        t_write(t, f, 12, ", second");
        assert_true(t_rec(t, c, &f->gfid, t->key[a], REP_DATA) > 0);

        t_expect_heal(t, f, "healed");
        assert_true(fake_data(t->b[a], &vl_gfid_root, name, buf,
                              sizeof(buf)) >= 0);
        assert_string_equal(buf, "first change, second");
        t_same_data(t, &vl_gfid_root, name, a, c);
        t_expect_owed(t, &f->gfid, a, b, c, REP_DATA);
        /* Nothing more to do until B is back: listed, not healed. */
        t_expect_heal(t, f, "pending");

        t_up(t, b);
        t_expect_heal(t, f, "healed");
        assert_true(fake_data(t->b[b], &vl_gfid_root, name, buf,
                              sizeof(buf)) >= 0);
        assert_string_equal(buf, "first change, second");
        assert_false(t_any_record(t, &f->gfid));
        t_expect_heal(t, f, "clean");
        vl_inode_unref(f);
    }
}


static void
t_setattr_mode(struct t *t, vl_inode_t *f, uint32_t mode)
{
    union vl_fop_args a = {0};
    struct vl_reply r;

    a.setattr.loc.inode = f;
    a.setattr.attr.mode = mode;
    a.setattr.valid = VL_SET_MODE;
    assert_int_equal(t_call(t, VL_FOP_SETATTR, &a, &r), 0);
    vl_reply_clear(&r);
}


static void
t_setxattr(struct t *t, vl_inode_t *f, const char *name, const char *val)
{
    union vl_fop_args a = {0};
    struct vl_reply r;

    a.setxattr.loc.inode = f;
    a.setxattr.name = name;
    a.setxattr.value = val;
    a.setxattr.size = strlen(val);
    assert_int_equal(t_call(t, VL_FOP_SETXATTR, &a, &r), 0);
    vl_reply_clear(&r);
}


static void
test_metadata_one_down(void **state)
{
    struct t *t = *state;

    for (int o = 0; o < 6; o++) {
        int a = t_orders[o][0], b = t_orders[o][1], c = t_orders[o][2];
        char name[16], v[16];
        struct vl_iatt ia;
        vl_inode_t *f;

        snprintf(name, sizeof(name), "m%d%d", a, b);
        f = t_file(t, name, "x");
        t_down(t, a);
        t_setattr_mode(t, f, 0600);
        t_up(t, a);
        t_down(t, b);
        t_setxattr(t, f, "user.k", "val");
        assert_true(t_rec(t, c, &f->gfid, t->key[a], REP_METADATA) > 0);

        t_expect_heal(t, f, "healed");
        assert_int_equal(fake_stat(t->b[a], &f->gfid, &ia), 0);
        assert_int_equal(ia.mode, S_IFREG | 0600);
        assert_int_equal(fake_xattr(t->b[a], &f->gfid, "user.k", v,
                                    sizeof(v)), 3);
        t_expect_owed(t, &f->gfid, a, b, c, REP_METADATA);
        t_expect_heal(t, f, "pending");

        t_up(t, b);
        t_expect_heal(t, f, "healed");
        assert_int_equal(fake_stat(t->b[b], &f->gfid, &ia), 0);
        assert_int_equal(ia.mode, S_IFREG | 0600);
        assert_int_equal(fake_xattr(t->b[b], &f->gfid, "user.k", v,
                                    sizeof(v)), 3);
        assert_false(t_any_record(t, &f->gfid));
        vl_inode_unref(f);
    }
}


static void
test_entry_one_down(void **state)
{
    struct t *t = *state;

    for (int o = 0; o < 6; o++) {
        int a = t_orders[o][0], b = t_orders[o][1], c = t_orders[o][2];
        char name[16];
        vl_gfid_t g, g1, g2;
        vl_inode_t *d, *old, *n1, *n2;

        snprintf(name, sizeof(name), "d%d%d", a, b);
        d = t_mkdir(t, name);
        old = t_file_at(t, d, "old", "gone");
        t_down(t, a);
        n1 = t_file_at(t, d, "n1", "one");
        t_unlink(t, d, "old", old);
        t_up(t, a);
        t_down(t, b);
        n2 = t_file_at(t, d, "n2", "two");
        assert_true(t_rec(t, c, &d->gfid, t->key[a], REP_ENTRY) > 0);

        t_expect_heal(t, d, "healed");
        assert_int_equal(fake_gfid(t->b[a], &d->gfid, "n1", &g1), 0);
        assert_true(vl_gfid_equal(&g1, &n1->gfid));
        assert_int_equal(fake_gfid(t->b[a], &d->gfid, "old", &g), -ENOENT);
        t_expect_owed(t, &d->gfid, a, b, c, REP_ENTRY);
        /* The name made on A is marked for its own heal: its data. */
        assert_true(t_rec(t, c, &n1->gfid, t->key[a], REP_DATA) > 0);
        t_expect_heal(t, n1, "healed");
        t_same_data(t, &d->gfid, "n1", a, c);
        t_expect_heal(t, d, "pending");

        t_up(t, b);
        t_expect_heal(t, d, "healed");
        assert_int_equal(fake_gfid(t->b[b], &d->gfid, "n1", &g1), 0);
        assert_int_equal(fake_gfid(t->b[b], &d->gfid, "n2", &g2), 0);
        assert_true(vl_gfid_equal(&g2, &n2->gfid));
        assert_int_equal(fake_gfid(t->b[b], &d->gfid, "old", &g), -ENOENT);
        assert_false(t_any_record(t, &d->gfid));
        t_expect_heal(t, n1, "healed");
        t_expect_heal(t, n2, "healed");
        t_same_data(t, &d->gfid, "n1", b, c);
        t_same_data(t, &d->gfid, "n2", b, c);
        assert_false(t_any_record(t, &n1->gfid));
        assert_false(t_any_record(t, &n2->gfid));
        vl_inode_unref(old);
        vl_inode_unref(n1);
        vl_inode_unref(n2);
        vl_inode_unref(d);
    }
}


/* The up copies blame each other and the third is down: it is the only
 * copy that could be the source. Nothing is guessed (no split-brain
 * answered, nothing copied or cleared); back, it heals both. */
static void
test_only_source_down(void **state)
{
    struct t *t = *state;
    vl_inode_t *f = t_file(t, "f", "same");
    char buf[64];

    t_plant(t, 0, &f->gfid, t->key[1], REP_DATA, 1);
    t_plant(t, 1, &f->gfid, t->key[0], REP_DATA, 1);
    t_down(t, 2);
    t_expect_heal(t, f, "pending");
    assert_int_equal(t_rec(t, 0, &f->gfid, t->key[1], REP_DATA), 1);
    assert_int_equal(t_rec(t, 1, &f->gfid, t->key[0], REP_DATA), 1);
    t_up(t, 2);
    t_expect_heal(t, f, "healed");
    assert_true(fake_data(t->b[0], &vl_gfid_root, "f", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "same");
    assert_false(t_any_record(t, &f->gfid));
    vl_inode_unref(f);
}


/* Dirty without blame on the up copies (a cut change) and a copy down:
 * the down copy may hold the change too; no comparison is trusted. */
static void
test_dirty_with_one_down(void **state)
{
    struct t *t = *state;
    vl_inode_t *f = t_file(t, "f", "short");

    t_plant(t, 0, &f->gfid, REP_KEY_DIRTY, REP_DATA, 1);
    t_plant(t, 1, &f->gfid, REP_KEY_DIRTY, REP_DATA, 1);
    t_down(t, 2);
    t_expect_heal(t, f, "pending");
    assert_int_equal(t_rec(t, 0, &f->gfid, REP_KEY_DIRTY, REP_DATA), 1);
    assert_int_equal(t_rec(t, 1, &f->gfid, REP_KEY_DIRTY, REP_DATA), 1);
    t_up(t, 2);
    t_expect_heal(t, f, "clean");
    assert_false(t_any_record(t, &f->gfid));
    vl_inode_unref(f);
}


static int
setup3_none(void **state)
{
    return setup_n(state, 3, " option quorum-type none\n");
}


/* C alone takes a change (quorum none: A and B down); A comes back and
 * is healed from C while B is still down: A now owes B what C owes it,
 * so once C is down and B is back, A (not B, which blames nobody) is
 * the source. Without the inherited blame B would pass for good. */
static void
test_sink_inherits_blame(void **state)
{
    struct t *t = *state;
    vl_inode_t *f = t_file(t, "f", "old");
    char buf[64];

    t_down(t, 0);
    t_down(t, 1);
    t_write(t, f, 0, "new");
    t_up(t, 0);
    assert_int_equal(t_rec(t, 0, &f->gfid, t->key[1], REP_DATA), 0);
    t_expect_heal(t, f, "healed");
    assert_true(t_rec(t, 0, &f->gfid, t->key[1], REP_DATA) > 0);
    assert_true(t_rec(t, 2, &f->gfid, t->key[1], REP_DATA) > 0);
    assert_int_equal(t_rec(t, 2, &f->gfid, t->key[0], REP_DATA), 0);

    t_down(t, 2);
    t_up(t, 1);
    t_expect_heal(t, f, "healed");
    assert_true(fake_data(t->b[1], &vl_gfid_root, "f", buf,
                          sizeof(buf)) >= 0);
    assert_string_equal(buf, "new");
    t_up(t, 2);
    t_expect_heal(t, f, "healed");
    assert_false(t_any_record(t, &f->gfid));
    vl_inode_unref(f);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_data_one_down, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_metadata_one_down, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_entry_one_down, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_only_source_down, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_dirty_with_one_down, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sink_inherits_blame,
                                        setup3_none, teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
