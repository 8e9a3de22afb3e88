/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rep-heal-gfid: GFID split-brains (one name, another GFID or type
 * on some copies) resolved in the entry heal of their directory
 * (rep-heal-entry.c, rep_heal_split_name): by favorite-child-policy in
 * every heal, and by a resolve key for one name
 * (mortar.heal.resolve.<rule>/<name> on the directory); a rule that
 * does not cover the name, or a tie, leaves everything as it was.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "rep-heal-test.h"
#include "rep-test.h"

static int
setup2(void **state)
{
    return setup_n(state, 2, " option quorum-type none\n");
}


static int
setup2_mtime(void **state)
{
    return setup_n(state, 2, " option quorum-type none\n"
                             " option favorite-child-policy mtime\n");
}


static int
setup3(void **state)
{
    return setup_n(state, 3, "");
}


static int
setup3_majority(void **state)
{
    return setup_n(state, 3, " option favorite-child-policy majority\n");
}


/* A file name in the root of brick i only: GFID g, data, mtime. */
static void
t_put(struct t *t, int i, const char *name, vl_gfid_t *g, const char *data,
      int64_t mtime)
{
    vl_gfid_generate(g);
    assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, name, g, data), 0);
    assert_int_equal(fake_set_attr(t->b[i], g, 0644, 0, mtime), 0);
}


/* The root's copies on bricks 0 and 1 blame each other for entries (an
 * entry split-brain: each took creates while the other was down). */
static void
t_root_split(struct t *t)
{
    t_plant(t, 0, &vl_gfid_root, t->key[1], REP_ENTRY, 1);
    t_plant(t, 1, &vl_gfid_root, t->key[0], REP_ENTRY, 1);
}


/* name in the root of brick i has GFID want. */
static void
t_expect_gfid(struct t *t, int i, const char *name, const vl_gfid_t *want)
{
    vl_gfid_t got;

    assert_int_equal(fake_gfid(t->b[i], &vl_gfid_root, name, &got), 0);
    assert_true(vl_gfid_equal(&got, want));
}


/* favorite-child-policy mtime: the entry split-brain of the root is
 * merged (a name only one copy has is created on the other: both
 * copies change, the directory's times come from the first) and the
 * name made on both while each was down keeps the newer object on both;
 * the older one is gone, and the kept one's content follows. */
static void
test_policy_mtime(void **state)
{
    struct t *t = *state;
    vl_gfid_t gold, gnew, gm, gn;
    struct vl_iatt ia;
    vl_inode_t *f;
    char buf[16];

    t_put(t, 0, "x", &gold, "old", 100);
    t_put(t, 1, "x", &gnew, "newer", 200);
    t_put(t, 1, "m", &gm, "m", 100);
    t_put(t, 0, "n", &gn, "n", 100);
    t_root_split(t);
    t_expect_heal(t, t->root, "healed");
    for (int i = 0; i < 2; i++) {
        t_expect_gfid(t, i, "x", &gnew);
        t_expect_gfid(t, i, "m", &gm);
        t_expect_gfid(t, i, "n", &gn);
    }
    assert_int_equal(fake_stat(t->b[0], &gold, &ia), -ENOENT);
    assert_false(t_any_record(t, &vl_gfid_root));
    /* The new copy is blamed: its own heal fills it. */
    f = vl_inode_get(t->root->table, &gnew, S_IFREG);
    t_expect_heal(t, f, "healed");
    assert_true(fake_data(t->b[0], &vl_gfid_root, "x", buf, sizeof(buf))
                >= 0);
    assert_string_equal(buf, "newer");
    assert_false(t_any_record(t, &gnew));
    vl_inode_unref(f);
}


/* A directory among the objects of the name: no time or size rule
 * removes a directory (with all under it); left alone, the root's
 * records kept, the other names still merged. Equal mtimes: a tie, the
 * same. */
static void
test_policy_left_alone(void **state)
{
    struct t *t = *state;
    vl_gfid_t gd, gf, ga, gb, gm;

    vl_gfid_generate(&gd);
    assert_int_equal(fake_mkobj(t->b[0], &vl_gfid_root, "d", &gd,
                                S_IFDIR | 0755, NULL), 0);
    t_put(t, 1, "d", &gf, "file", 300);
    t_put(t, 0, "tie", &ga, "a", 100);
    t_put(t, 1, "tie", &gb, "b", 100);
    t_put(t, 1, "m", &gm, "m", 100);
    t_root_split(t);
    t_expect_heal(t, t->root, "split-brain");
    t_expect_gfid(t, 0, "d", &gd);
    t_expect_gfid(t, 1, "d", &gf);
    t_expect_gfid(t, 0, "tie", &ga);
    t_expect_gfid(t, 1, "tie", &gb);
    t_expect_gfid(t, 0, "m", &gm);
    assert_int_equal(t_rec(t, 0, &vl_gfid_root, t->key[1], REP_ENTRY), 1);
    assert_int_equal(t_rec(t, 1, &vl_gfid_root, t->key[0], REP_ENTRY), 1);
}


/* majority, replica 3, no records blaming anyone (a cut transaction:
 * dirty): the object two copies of three hold keeps the name. */
static void
test_policy_majority(void **state)
{
    struct t *t = *state;
    vl_gfid_t g2, g1;

    vl_gfid_generate(&g2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "x", &g2, "two"),
                         0);
        t_plant(t, i, &vl_gfid_root, REP_KEY_DIRTY, REP_ENTRY, 1);
    }
    t_put(t, 2, "x", &g1, "one, and newer", 900);
    t_expect_heal(t, t->root, "healed");
    for (int i = 0; i < 3; i++)
        t_expect_gfid(t, i, "x", &g2);
    assert_false(t_any_record(t, &vl_gfid_root));
}


/* favorite-child-policy: the lookup that meets the name with two GFIDs
 * answers EIO and starts the directory's heal, which resolves it. */
static void
test_policy_on_lookup(void **state)
{
    struct t *t = *state;
    vl_gfid_t gold, gnew, got;

    t_put(t, 0, "x", &gold, "old", 100);
    t_put(t, 1, "x", &gnew, "new", 200);
    t_root_split(t);
    assert_int_equal(t_lookup(t, "x", NULL), -EIO);
    for (int i = 0; i < 500; i++) {
        if (fake_gfid(t->b[0], &vl_gfid_root, "x", &got) == 0
            && vl_gfid_equal(&got, &gnew) && !t_any_record(t, &vl_gfid_root))
            break;
        usleep(10 * 1000);
    }
    t_expect_gfid(t, 0, "x", &gnew);
    assert_int_equal(t_lookup(t, "x", NULL), 0);
}


/* No policy: the name's resolve key on the directory resolves that name
 * (latest-mtime), merges the directory, and answers "healed"; another
 * name with two GFIDs stays (the records too: the directory is still
 * listed), and its own key with bigger-file on equal sizes is
 * "ambiguous" and changes nothing. */
static void
test_key_one_name(void **state)
{
    struct t *t = *state;
    vl_gfid_t gold, gnew, ga, gb, gm;

    t_put(t, 0, "x", &gold, "old", 100);
    t_put(t, 1, "x", &gnew, "new", 200);
    t_put(t, 0, "y", &ga, "aa", 100);
    t_put(t, 1, "y", &gb, "bb", 100);
    t_put(t, 1, "m", &gm, "m", 100);
    t_root_split(t);
    t_expect_heal(t, t->root, "split-brain");
    t_expect_key(t, t->root, REP_XATTR_RESOLVE "latest-mtime/x", "healed");
    t_expect_gfid(t, 0, "x", &gnew);
    t_expect_gfid(t, 1, "x", &gnew);
    t_expect_gfid(t, 0, "m", &gm);
    t_expect_gfid(t, 0, "y", &ga);
    t_expect_gfid(t, 1, "y", &gb);
    assert_int_equal(t_rec(t, 0, &vl_gfid_root, t->key[1], REP_ENTRY), 1);
    t_expect_key(t, t->root, REP_XATTR_RESOLVE "bigger-file/y", "ambiguous");
    t_expect_gfid(t, 0, "y", &ga);
    t_expect_gfid(t, 1, "y", &gb);
    /* source-brick decides it; nothing is left: the records go. */
    t_expect_key(t, t->root, REP_XATTR_RESOLVE "source-brick.b0/y",
                 "healed");
    t_expect_gfid(t, 1, "y", &ga);
    assert_false(t_any_record(t, &vl_gfid_root));
}


/* A name with one object: "not-split-brain", and nothing else of the
 * directory changes (its other name is not merged). */
static void
test_key_not_split(void **state)
{
    struct t *t = *state;
    vl_gfid_t g, gm, got;

    vl_gfid_generate(&g);
    for (int i = 0; i < 2; i++)
        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "x", &g, "x"),
                         0);
    t_put(t, 1, "m", &gm, "m", 100);
    t_root_split(t);
    t_expect_key(t, t->root, REP_XATTR_RESOLVE "latest-mtime/x",
                 "not-split-brain");
    assert_int_equal(fake_gfid(t->b[0], &vl_gfid_root, "m", &got), -ENOENT);
    assert_int_equal(t_rec(t, 0, &vl_gfid_root, t->key[1], REP_ENTRY), 1);
}


/* source-brick for one name, replica 3, no records: the named copy's
 * object wins even against two copies; the records do not say anything
 * here, so nothing else decides. */
static void
test_key_source_brick(void **state)
{
    struct t *t = *state;
    vl_gfid_t g2, g1;

    vl_gfid_generate(&g2);
    for (int i = 0; i < 2; i++)
        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "x", &g2, "two"),
                         0);
    t_put(t, 2, "x", &g1, "one", 100);
    t_expect_key(t, t->root, REP_XATTR_RESOLVE "source-brick.b2/x",
                 "healed");
    for (int i = 0; i < 3; i++)
        t_expect_gfid(t, i, "x", &g1);
}


/* Records that say who is right win over a name's key: sources b0, b1
 * blame b2, whose x is another object: the key says not-split-brain
 * (the sources agree) and the ordinary heal replaces b2's. */
static void
test_key_records_decide(void **state)
{
    struct t *t = *state;
    vl_gfid_t g2, g1;

    vl_gfid_generate(&g2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fake_mkfile(t->b[i], &vl_gfid_root, "x", &g2, "two"),
                         0);
        t_plant(t, i, &vl_gfid_root, t->key[2], REP_ENTRY, 1);
    }
    t_put(t, 2, "x", &g1, "one", 900);
    t_expect_key(t, t->root, REP_XATTR_RESOLVE "source-brick.b2/x",
                 "not-split-brain");
    t_expect_gfid(t, 2, "x", &g1);
    t_expect_heal(t, t->root, "healed");
    t_expect_gfid(t, 2, "x", &g2);
}


/* Bad keys: EINVAL (an empty name, a path, "..", an unknown rule or
 * child), ENOTDIR on a file; nothing changed. */
static void
test_key_bad(void **state)
{
    struct t *t = *state;
    vl_gfid_t gold, gnew;
    vl_inode_t *f;
    char buf[32];
    static const char *const bad[] = {
        REP_XATTR_RESOLVE "latest-mtime/",
        REP_XATTR_RESOLVE "latest-mtime/a/b",
        REP_XATTR_RESOLVE "latest-mtime/..",
        REP_XATTR_RESOLVE "oldest/x",
        REP_XATTR_RESOLVE "source-brick.b7/x",
    };

    t_put(t, 0, "x", &gold, "old", 100);
    t_put(t, 1, "x", &gnew, "new", 200);
    t_root_split(t);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(t_heal_key(t, t->root, bad[i], buf, sizeof(buf)),
                         -EINVAL);
    f = vl_inode_get(t->root->table, &gnew, S_IFREG);
    assert_int_equal(t_heal_key(t, f, REP_XATTR_RESOLVE "latest-mtime/x", buf,
                                sizeof(buf)), -ENOTDIR);
    vl_inode_unref(f);
    t_expect_gfid(t, 0, "x", &gold);
    t_expect_gfid(t, 1, "x", &gnew);
    assert_int_equal(t_rec(t, 0, &vl_gfid_root, t->key[1], REP_ENTRY), 1);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_policy_mtime, setup2_mtime,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_policy_left_alone, setup2_mtime,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_policy_majority,
                                        setup3_majority, teardown),
        cmocka_unit_test_setup_teardown(test_policy_on_lookup, setup2_mtime,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_key_one_name, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_key_not_split, setup2,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_key_source_brick, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_key_records_decide, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_key_bad, setup2, teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
