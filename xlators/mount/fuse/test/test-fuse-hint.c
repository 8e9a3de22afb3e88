/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-fuse-hint: the session's name hints (fuse-hint.c) and node flags
 * (fuse-table.c). Two inode tables stand for two graphs (generations 1
 * and 2). Checks that a hint gives its node's inode only in the node's
 * graph and is dropped once taken, that a re-used name follows the newer
 * node, that FORGET of a node drops its hints, that the map stays bounded
 * (oldest evicted), and that node flags survive until cleared.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "fuse.h"
#include "fuse-fixture.h"


static uint64_t
node_in(struct fixture *f, vl_inode_table_t *table, uint64_t gen, uint8_t n)
{
    vl_gfid_t g = fixture_gfid(n);
    vl_inode_t *inode = vl_inode_get(table, &g, S_IFREG);
    uint64_t nodeid;

    assert_non_null(inode);
    nodeid = vfuse_node_remember(&f->t, inode, gen);
    assert_true(nodeid != 0);
    return nodeid;
}


static void
test_take_gives_inode_once(void **state)
{
    struct fixture *f = *state;
    vl_gfid_t dir = fixture_gfid(100);
    vl_gfid_t other = fixture_gfid(101);
    vl_gfid_t g1 = fixture_gfid(1);
    uint64_t a = node_in(f, f->g1, 1, 1);
    vl_inode_t *in;

    vfuse_hint_add(&f->t, &dir, "a", a);
    assert_int_equal(vfuse_hint_count(&f->t), 1);
    /* Another directory or name: nothing. */
    assert_null(vfuse_hint_take(&f->t, &other, "a", 1));
    assert_null(vfuse_hint_take(&f->t, &dir, "ab", 1));
    assert_int_equal(vfuse_hint_count(&f->t), 1);
    in = vfuse_hint_take(&f->t, &dir, "a", 1);
    assert_non_null(in);
    assert_true(vl_gfid_equal(&in->gfid, &g1));
    vl_inode_unref(in);
    /* Taken means dropped: the name is going away. */
    assert_int_equal(vfuse_hint_count(&f->t), 0);
    assert_null(vfuse_hint_take(&f->t, &dir, "a", 1));
    /* "." and ".." are never hints. */
    vfuse_hint_add(&f->t, &dir, ".", a);
    vfuse_hint_add(&f->t, &dir, "..", a);
    assert_int_equal(vfuse_hint_count(&f->t), 0);
}


static void
test_other_graph_gives_nothing(void **state)
{
    struct fixture *f = *state;
    vl_gfid_t dir = fixture_gfid(100);
    vl_gfid_t g = fixture_gfid(1);
    uint64_t a = node_in(f, f->g1, 1, 1);
    vl_inode_t *i2;
    vl_inode_t *in;

    vfuse_hint_add(&f->t, &dir, "a", a);
    /* The node's inode is of graph 1: a call of graph 2 gets no inode
     * (that would need a lookup), and the hint is gone anyway. */
    assert_null(vfuse_hint_take(&f->t, &dir, "a", 2));
    assert_int_equal(vfuse_hint_count(&f->t), 0);
    /* Once the node moved to graph 2, graph 2 gets graph 2's inode. */
    vfuse_hint_add(&f->t, &dir, "a", a);
    i2 = vl_inode_get(f->g2, &g, S_IFREG);
    assert_non_null(i2);
    vfuse_node_update(&f->t, a, i2, 2);
    in = vfuse_hint_take(&f->t, &dir, "a", 2);
    assert_ptr_equal(in, i2);
    vl_inode_unref(in);
    vl_inode_unref(i2);
    vfuse_table_drop_gen(&f->t, 2);
    vfuse_node_forget(&f->t, a, 1);
}


static void
test_name_follows_newer_node(void **state)
{
    struct fixture *f = *state;
    vl_gfid_t dir = fixture_gfid(100);
    vl_gfid_t g2 = fixture_gfid(2);
    vl_gfid_t g3 = fixture_gfid(3);
    uint64_t a = node_in(f, f->g1, 1, 1);
    uint64_t b = node_in(f, f->g1, 1, 2);
    uint64_t c = node_in(f, f->g1, 1, 3);
    vl_inode_t *in;

    vfuse_hint_add(&f->t, &dir, "x", a);
    vfuse_hint_add(&f->t, &dir, "x", b);
    assert_int_equal(vfuse_hint_count(&f->t), 1);
    /* Freeing the old node must not take the re-used name with it. */
    vfuse_node_forget(&f->t, a, 1);
    assert_int_equal(vfuse_hint_count(&f->t), 1);
    in = vfuse_hint_take(&f->t, &dir, "x", 1);
    assert_non_null(in);
    assert_true(vl_gfid_equal(&in->gfid, &g2));
    vl_inode_unref(in);
    /* A rename gives the moved object's hint to the new name by GFID. */
    vfuse_hint_add_gfid(&f->t, &dir, "y", &g3);
    in = vfuse_hint_take(&f->t, &dir, "y", 1);
    assert_non_null(in);
    assert_true(vl_gfid_equal(&in->gfid, &g3));
    vl_inode_unref(in);
    vfuse_node_forget(&f->t, c, 1);
    vfuse_hint_add_gfid(&f->t, &dir, "y", &g3); /* no node: no hint */
    assert_int_equal(vfuse_hint_count(&f->t), 0);
    vfuse_node_forget(&f->t, b, 1);
}


static void
test_forget_drops_hints(void **state)
{
    struct fixture *f = *state;
    vl_gfid_t dir = fixture_gfid(100);
    vl_gfid_t dir2 = fixture_gfid(102);
    uint64_t a = node_in(f, f->g1, 1, 1);
    uint64_t b = node_in(f, f->g1, 1, 2);

    /* Two names (hard links) of a, one of b. */
    vfuse_hint_add(&f->t, &dir, "a", a);
    vfuse_hint_add(&f->t, &dir2, "a-link", a);
    vfuse_hint_add(&f->t, &dir, "b", b);
    assert_int_equal(vfuse_hint_count(&f->t), 3);
    vfuse_node_forget(&f->t, a, 1);
    assert_int_equal(vfuse_hint_count(&f->t), 1);
    assert_null(vfuse_hint_take(&f->t, &dir2, "a-link", 1));
    vfuse_node_forget(&f->t, b, 1);
    assert_int_equal(vfuse_hint_count(&f->t), 0);
}


static void
test_bounded_oldest_evicted(void **state)
{
    struct fixture *f = *state;
    vl_gfid_t dir = fixture_gfid(100);
    uint64_t a = node_in(f, f->g1, 1, 1);
    char name[8];
    vl_inode_t *in;

    vfuse_hint_fini(&f->t);
    assert_int_equal(vfuse_hint_init(&f->t, 4), 0);
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        vfuse_hint_add(&f->t, &dir, name, a);
    }
    assert_int_equal(vfuse_hint_count(&f->t), 4);
    assert_null(vfuse_hint_take(&f->t, &dir, "n0", 1));
    assert_null(vfuse_hint_take(&f->t, &dir, "n1", 1));
    in = vfuse_hint_take(&f->t, &dir, "n2", 1);
    assert_non_null(in);
    vl_inode_unref(in);
    /* Re-adding makes a name newest: n3 survives two more adds. */
    vfuse_hint_add(&f->t, &dir, "n3", a);
    vfuse_hint_add(&f->t, &dir, "n6", a);
    vfuse_hint_add(&f->t, &dir, "n7", a);
    assert_int_equal(vfuse_hint_count(&f->t), 4);
    assert_null(vfuse_hint_take(&f->t, &dir, "n4", 1));
    in = vfuse_hint_take(&f->t, &dir, "n3", 1);
    assert_non_null(in);
    vl_inode_unref(in);
    vfuse_node_forget(&f->t, a, 1);
    assert_int_equal(vfuse_hint_count(&f->t), 0);
}


static void
test_node_flags(void **state)
{
    struct fixture *f = *state;
    uint64_t a = node_in(f, f->g1, 1, 1);

    assert_int_equal(vfuse_node_flags(&f->t, a), 0);
    vfuse_node_set_flags(&f->t, a, VFUSE_NODE_NO_CAP, 0);
    vfuse_node_set_flags(&f->t, a, VFUSE_NODE_HAS_LK, 0);
    assert_int_equal(vfuse_node_flags(&f->t, a),
                     VFUSE_NODE_NO_CAP | VFUSE_NODE_HAS_LK);
    vfuse_node_set_flags(&f->t, a, 0, VFUSE_NODE_NO_CAP);
    assert_int_equal(vfuse_node_flags(&f->t, a), VFUSE_NODE_HAS_LK);
    /* A second lookup of the same GFID keeps the node and its flags. */
    assert_int_equal(node_in(f, f->g1, 1, 1), a);
    assert_int_equal(vfuse_node_flags(&f->t, a), VFUSE_NODE_HAS_LK);
    /* The root has no node: no flags, setting is ignored. */
    vfuse_node_set_flags(&f->t, FUSE_ROOT_ID, VFUSE_NODE_HAS_LK, 0);
    assert_int_equal(vfuse_node_flags(&f->t, FUSE_ROOT_ID), 0);
    vfuse_node_forget(&f->t, a, 2);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_take_gives_inode_once,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_other_graph_gives_nothing,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_name_follows_newer_node,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_forget_drops_hints,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_bounded_oldest_evicted,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_node_flags, fixture_setup,
                                        fixture_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    vl_global_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
