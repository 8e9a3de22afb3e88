/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-fuse-table: the session's nodes and handles (fuse-table.c), which
 * outlive graphs. Two inode tables stand for two graphs (generations 1
 * and 2); the tests check lookup counting, one node per GFID, lazy moves
 * to a newer generation only, dropping the refs of a retired generation
 * (the inode tables then free cleanly, which they only do once every ref
 * is gone), handle release, and the directory attributes kept after
 * entry ops (one use, deadline, newest wins).
 */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "fuse.h"
#include "fuse-fixture.h"


/* An inode for gfid in table, with a new ref. */
static vl_inode_t *
inode_in(vl_inode_table_t *table, uint8_t n)
{
    vl_gfid_t g = fixture_gfid(n);
    vl_inode_t *inode = vl_inode_get(table, &g, S_IFREG);

    assert_non_null(inode);
    return inode;
}


static void
test_remember_counts_and_dedupes(void **state)
{
    struct fixture *f = *state;
    uint64_t a = vfuse_node_remember(&f->t, inode_in(f->g1, 1), 1);
    uint64_t b = vfuse_node_remember(&f->t, inode_in(f->g1, 1), 1);
    uint64_t c = vfuse_node_remember(&f->t, inode_in(f->g1, 2), 1);
    size_t n_nodes;
    size_t n_handles;
    size_t n_gen;

    assert_true(a != 0 && a != FUSE_ROOT_ID);
    assert_int_equal(a, b); /* one nodeid per GFID */
    assert_int_not_equal(a, c);
    vfuse_table_counts(&f->t, &n_nodes, &n_handles, &n_gen, 1);
    assert_int_equal(n_nodes, 2);
    assert_int_equal(n_handles, 0);
    assert_int_equal(n_gen, 2);
    /* The table holds one ref per node, not per lookup. */
    assert_int_equal(vl_inode_table_active(f->g1), 1 + 2);

    vfuse_node_forget(&f->t, a, 1);
    vfuse_table_counts(&f->t, &n_nodes, &n_handles, &n_gen, 1);
    assert_int_equal(n_nodes, 2);
    vfuse_node_forget(&f->t, a, 1);
    vfuse_table_counts(&f->t, &n_nodes, &n_handles, &n_gen, 1);
    assert_int_equal(n_nodes, 1);
    assert_int_equal(vl_inode_table_active(f->g1), 1 + 1);
    /* Forgetting more than remembered frees, once. */
    vfuse_node_forget(&f->t, c, 99);
    vfuse_table_counts(&f->t, &n_nodes, &n_handles, &n_gen, 1);
    assert_int_equal(n_nodes, 0);
    assert_int_equal(vl_inode_table_active(f->g1), 1);
}


static void
test_node_follows_newer_graph_only(void **state)
{
    struct fixture *f = *state;
    uint64_t id = vfuse_node_remember(&f->t, inode_in(f->g1, 3), 1);
    vl_inode_t *in2 = inode_in(f->g2, 3);
    vl_inode_t *got;
    vl_gfid_t gfid;
    vl_gfid_t want = fixture_gfid(3);
    uint32_t type = 0;

    got = vfuse_node_get(&f->t, id, 1, &gfid, &type);
    assert_non_null(got);
    assert_ptr_equal(got->table, f->g1);
    vl_inode_unref(got);
    /* Asked for in graph 2: not there yet, but the GFID says where. */
    got = vfuse_node_get(&f->t, id, 2, &gfid, &type);
    assert_null(got);
    assert_true(vl_gfid_equal(&gfid, &want));
    assert_int_equal(type, S_IFREG);

    vfuse_node_update(&f->t, id, in2, 2);
    got = vfuse_node_get(&f->t, id, 2, &gfid, &type);
    assert_ptr_equal(got, in2);
    vl_inode_unref(got);
    /* The graph-1 ref went with the move. */
    assert_int_equal(vl_inode_table_active(f->g1), 1);
    /* A late call of graph 1 does not move it back. */
    got = inode_in(f->g1, 3);
    vfuse_node_update(&f->t, id, got, 1);
    vl_inode_unref(got);
    got = vfuse_node_get(&f->t, id, 2, &gfid, &type);
    assert_ptr_equal(got, in2);
    vl_inode_unref(got);
    vl_inode_unref(in2);
    /* Remembering it in graph 1 again counts but keeps graph 2's inode. */
    assert_int_equal(vfuse_node_remember(&f->t, inode_in(f->g1, 3), 1), id);
    got = vfuse_node_get(&f->t, id, 2, &gfid, &type);
    assert_ptr_equal(got->table, f->g2);
    vl_inode_unref(got);
    vfuse_node_forget(&f->t, id, 2);
    assert_int_equal(vl_inode_table_active(f->g2), 1);
    assert_int_equal(vl_inode_table_active(f->g1), 1);
}


static void
test_drop_gen_releases_graph(void **state)
{
    struct fixture *f = *state;
    uint64_t id = vfuse_node_remember(&f->t, inode_in(f->g1, 4), 1);
    vl_inode_t *in = inode_in(f->g1, 5);
    vl_gfid_t g5 = fixture_gfid(5);
    vl_fd_t *fd = vl_fd_new(in, O_RDWR | O_CREAT | O_TRUNC, 42);
    uint64_t fh = vfuse_handle_new(&f->t, fd, 1, &g5, S_IFREG, false);
    struct vfuse_handle copy;
    vl_gfid_t gfid;
    uint32_t type;
    size_t n_nodes;
    size_t n_handles;
    size_t n_gen;

    assert_int_not_equal(fh, 0);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    vfuse_table_counts(&f->t, &n_nodes, &n_handles, &n_gen, 1);
    assert_int_equal(n_nodes, 1);
    assert_int_equal(n_handles, 1);
    assert_int_equal(n_gen, 2);

    /* Graph 1 retires: every ref into it goes; the objects stay. */
    vfuse_table_drop_gen(&f->t, 1);
    assert_int_equal(vl_inode_table_active(f->g1), 1);
    vfuse_table_counts(&f->t, &n_nodes, &n_handles, &n_gen, 1);
    assert_int_equal(n_nodes, 1);
    assert_int_equal(n_handles, 1);
    assert_int_equal(n_gen, 0);
    assert_null(vfuse_node_get(&f->t, id, 1, &gfid, &type));
    assert_null(vfuse_handle_get(&f->t, fh, 2, &copy));
    /* What a reopen needs survives. */
    assert_true(vl_gfid_equal(&copy.gfid, &g5));
    assert_int_equal(copy.flags, O_RDWR | O_CREAT | O_TRUNC);
    assert_int_equal(copy.pid, 42);
    assert_false(copy.is_dir);
    assert_null(copy.fd);

    /* Reopened in graph 2. */
    in = inode_in(f->g2, 5);
    fd = vl_fd_new(in, O_RDWR, 42);
    vfuse_handle_update(&f->t, fh, fd, 2);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    fd = vfuse_handle_get(&f->t, fh, 2, &copy);
    assert_non_null(fd);
    assert_ptr_equal(fd->inode->table, f->g2);
    vl_fd_unref(fd);
    /* RELEASE in graph 2 hands over the fd; in graph 1 it drops it. */
    fd = vfuse_handle_free(&f->t, fh, 2);
    assert_non_null(fd);
    vl_fd_unref(fd);
    vfuse_table_counts(&f->t, &n_nodes, &n_handles, &n_gen, 2);
    assert_int_equal(n_handles, 0);
    assert_int_equal(vl_inode_table_active(f->g2), 1);
    vfuse_node_forget(&f->t, id, 1);
}


static void
test_release_other_graph(void **state)
{
    struct fixture *f = *state;
    vl_inode_t *in = inode_in(f->g1, 6);
    vl_gfid_t g6 = fixture_gfid(6);
    vl_fd_t *fd = vl_fd_new(in, O_RDONLY, 1);
    uint64_t fh = vfuse_handle_new(&f->t, fd, 1, &g6, S_IFDIR, true);

    vl_fd_unref(fd);
    vl_inode_unref(in);
    /* A call of graph 2 releases a handle still in graph 1. */
    assert_null(vfuse_handle_free(&f->t, fh, 2));
    assert_int_equal(vl_inode_table_active(f->g1), 1);
}


/* A directory's attributes kept after an entry op: found by GFID (the
 * root by its own), used once, not past their deadline, an older answer
 * never replaces a newer one, and a drop forgets them. */
static void
test_pattr_store_take(void **state)
{
    struct fixture *f = *state;
    uint64_t d = vfuse_node_remember(&f->t, inode_in(f->g1, 7), 1);
    vl_gfid_t g = fixture_gfid(7), root, other = fixture_gfid(8);
    struct vl_iatt a = {.gfid = g, .nlink = 3, .ctime = 100};
    struct vl_iatt old = {.gfid = g, .nlink = 2, .ctime = 99};
    struct vl_iatt out;
    uint64_t until = 0;

    assert_false(vfuse_pattr_take(&f->t, d, 10, &out, NULL));
    vfuse_pattr_store(&f->t, &g, &a, 1000);
    vfuse_pattr_store(&f->t, &g, &old, 1000); /* late, older: ignored */
    assert_true(vfuse_pattr_take(&f->t, d, 10, &out, &until));
    assert_int_equal(out.nlink, 3);
    assert_int_equal(until, 1000); /* the kernel gets what is left */
    assert_false(vfuse_pattr_take(&f->t, d, 10, &out, NULL)); /* one use */
    vfuse_pattr_store(&f->t, &g, &a, 1000);
    assert_false(vfuse_pattr_take(&f->t, d, 1000, &out, NULL)); /* expired */
    assert_false(vfuse_pattr_take(&f->t, d, 10, &out, NULL)); /* and gone */
    vfuse_pattr_store(&f->t, &g, &a, 1000);
    vfuse_pattr_drop(&f->t, d);
    assert_false(vfuse_pattr_take(&f->t, d, 10, &out, NULL));
    vfuse_pattr_store(&f->t, &g, &a, 1000);
    vfuse_pattr_store(&f->t, &g, NULL, 1000); /* a reply without any */
    assert_false(vfuse_pattr_take(&f->t, d, 10, &out, NULL));
    /* No node for the GFID: nothing kept, nothing crashes. */
    vfuse_pattr_store(&f->t, &other, &a, 1000);
    /* The root has no node. */
    memset(&root, 0, sizeof(root));
    root.bytes[15] = 1;
    a.gfid = root;
    vfuse_pattr_store(&f->t, &root, &a, 1000);
    assert_false(vfuse_pattr_take(&f->t, d, 10, &out, NULL));
    assert_true(vfuse_pattr_take(&f->t, FUSE_ROOT_ID, 10, &out, NULL));
    assert_true(vl_gfid_is_root(&out.gfid));
    vfuse_node_forget(&f->t, d, 1);
}


/* A random version-4 GFID (RFC 9562: version nibble 4, variant 10). */
static vl_gfid_t
random_v4_gfid(uint64_t *seed)
{
    vl_gfid_t g;

    for (size_t i = 0; i < sizeof(g.bytes); i++) {
        /* xorshift64*: deterministic, so a failure reproduces. */
        *seed ^= *seed >> 12;
        *seed ^= *seed << 25;
        *seed ^= *seed >> 27;
        g.bytes[i] = (uint8_t)((*seed * 0x2545f4914f6cdd1dULL) >> 56);
    }
    g.bytes[6] = (uint8_t)((g.bytes[6] & 0x0f) | 0x40);
    g.bytes[8] = (uint8_t)((g.bytes[8] & 0x3f) | 0x80);
    return g;
}


/* Random v4 GFIDs spread over the node buckets: with 2 nodes per bucket
 * on average, a uniform hash leaves about e^-2 = 14 % of the buckets
 * empty and no chain longer than ~12. Hashing bytes 8..15 as they are
 * (variant bits fixed) used at most a quarter of them. The buckets also
 * grow with the count. */
static void
test_hash_spreads_random_gfids(void **state)
{
    struct fixture *f = *state;
    enum { N_NODES = 40000 };
    uint64_t *ids = calloc(N_NODES, sizeof(*ids));
    uint64_t seed = 0x9d2c5680u;
    size_t n_buckets;
    size_t n_used;
    size_t max_chain;

    assert_non_null(ids);
    vfuse_table_hash_stats(&f->t, &n_buckets, &n_used, &max_chain);
    assert_int_equal(n_used, 0);
    for (size_t i = 0; i < N_NODES; i++) {
        vl_gfid_t g = random_v4_gfid(&seed);
        vl_inode_t *inode = vl_inode_get(f->g1, &g, S_IFREG);

        assert_non_null(inode);
        ids[i] = vfuse_node_remember(&f->t, inode, 1);
        assert_true(ids[i] != 0);
    }
    vfuse_table_hash_stats(&f->t, &n_buckets, &n_used, &max_chain);
    /* Grown: at most 2 nodes per bucket on average. */
    assert_true(n_buckets * 2 >= N_NODES);
    assert_true(n_buckets < (size_t)N_NODES * 2);
    /* Expected used fraction 1 - e^-(N/B), B in [N/2, N): >= 63 %. */
    assert_true(n_used * 100 >= n_buckets * 55);
    assert_true(max_chain <= 16);
    /* Every node is still found by its GFID after the rehashes. */
    seed = 0x9d2c5680u;
    for (size_t i = 0; i < N_NODES; i++) {
        vl_gfid_t g = random_v4_gfid(&seed);
        struct vfuse_node *node;

        pthread_mutex_lock(&f->t.lock);
        node = vfuse_node_find_locked(&f->t, &g);
        pthread_mutex_unlock(&f->t.lock);
        assert_ptr_equal(node, (void *)(uintptr_t)ids[i]);
    }
    for (size_t i = 0; i < N_NODES; i++)
        vfuse_node_forget(&f->t, ids[i], 1);
    vfuse_table_hash_stats(&f->t, &n_buckets, &n_used, &max_chain);
    assert_int_equal(n_used, 0);
    free(ids);
}


/* GFIDs that differ in one byte only, wherever it is, still spread. */
static void
test_hash_spreads_patterned_gfids(void **state)
{
    struct fixture *f = *state;
    uint64_t ids[2][256];
    size_t n_buckets;
    size_t n_used;
    size_t max_chain;

    for (int pos = 0; pos < 2; pos++) {
        for (int v = 0; v < 256; v++) {
            vl_gfid_t g;
            vl_inode_t *inode;

            memset(&g, 0x11, sizeof(g));
            g.bytes[pos == 0 ? 3 : 12] = (uint8_t)v;
            inode = vl_inode_get(f->g1, &g, S_IFREG);
            assert_non_null(inode);
            ids[pos][v] = vfuse_node_remember(&f->t, inode, 1);
            assert_true(ids[pos][v] != 0);
        }
    }
    vfuse_table_hash_stats(&f->t, &n_buckets, &n_used, &max_chain);
    /* 511 distinct nodes (one GFID is in both sets) in >= 4096
     * buckets: a few collisions at most. */
    assert_true(n_used >= 450);
    assert_true(max_chain <= 4);
    for (int pos = 0; pos < 2; pos++)
        for (int v = 0; v < 256; v++)
            vfuse_node_forget(&f->t, ids[pos][v], 1);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_remember_counts_and_dedupes,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_node_follows_newer_graph_only,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_drop_gen_releases_graph,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_release_other_graph,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_pattr_store_take,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_hash_spreads_random_gfids,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_hash_spreads_patterned_gfids,
                                        fixture_setup, fixture_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    vl_global_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
