/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rebal-hardlink: the parts of the hard-link migration that need no
 * bricks: where a hard-linked inode goes (fsd_rb_hl_target), which
 * subvolume a name hashes to in a layout text (fsd_rb_layout_find) and the
 * table of names by GFID the listings fill (which names join a group,
 * one entry per name, groups without hard-linked data dropped, the
 * rescan set).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "mortarfsd/rebalance/rebalance-migrate.h"

#define T_SUBS 3


static void
t_target(void **state)
{
    int h1[] = {1, 2, 2, 1};
    int h2[] = {1, 0, 2, 2};
    int h3[] = {2, 2, 1, -1};
    int h4[] = {-1, -1};
    int h5[] = {2, 1};

    (void)state;
    /* No name on the source: the brick most names hash to; a tie takes
     * the lowest index. */
    assert_int_equal(fsd_rb_hl_target(h1, 4, T_SUBS, 0), 1);
    assert_int_equal(fsd_rb_hl_target(h3, 4, T_SUBS, 0), 2);
    assert_int_equal(fsd_rb_hl_target(h5, 2, T_SUBS, 0), 1);
    /* One name still hashing to the source: it stays, whatever the
     * others say. */
    assert_int_equal(fsd_rb_hl_target(h2, 4, T_SUBS, 0), 0);
    assert_int_equal(fsd_rb_hl_target(h3, 4, T_SUBS, 1), 1);
    /* Names gone (-1) do not vote; none left: nowhere. */
    assert_int_equal(fsd_rb_hl_target(h4, 2, T_SUBS, 0), -1);
    /* Out of range hashed indexes and too many subvolumes are refused. */
    {
        int bad[] = {7, 7, 1};

        assert_int_equal(fsd_rb_hl_target(bad, 3, T_SUBS, 0), 1);
        assert_int_equal(fsd_rb_hl_target(bad, 3, FSD_RB_HL_MAX_SUBS + 1,
                                          0), -1);
    }
    /* As many subvolumes as distribute takes (256), indexes past 64. */
    {
        int far[] = {200, 255, 200, 3};

        assert_int_equal(FSD_RB_HL_MAX_SUBS, 256);
        assert_int_equal(fsd_rb_hl_target(far, 4, 256, 3), 3);
        assert_int_equal(fsd_rb_hl_target(far, 4, 256, 70), 200);
    }
}


static void
t_layout_find(void **state)
{
    const char *names[] = {"b0", "b1", "b2"};
    /* b1 decommissioned (no range flag), b0 and b2 share the space; a
     * line for a subvolume this process does not have is ignored. */
    const char text[] = "b0 00000000 7fffffff 4 3\n"
                        "b1 00000000 00000000 4 2\n"
                        "b2 80000000 ffffffff 4 3\n"
                        "bx 00000000 ffffffff 4 3\n";
    const char hole[] = "b0 00000000 0fffffff 1 1\nb2 20000000 ffffffff 1 1";

    (void)state;
    assert_int_equal(fsd_rb_layout_find(text, strlen(text), 0, names, 3), 0);
    assert_int_equal(fsd_rb_layout_find(text, strlen(text), 0x7fffffffu,
                                        names, 3), 0);
    assert_int_equal(fsd_rb_layout_find(text, strlen(text), 0x80000000u,
                                        names, 3), 2);
    assert_int_equal(fsd_rb_layout_find(text, strlen(text), 0xffffffffu,
                                        names, 3), 2);
    /* No newline at the end; a hash in a hole; garbage. */
    assert_int_equal(fsd_rb_layout_find(hole, strlen(hole), 0x30000000u,
                                        names, 3), 2);
    assert_int_equal(fsd_rb_layout_find(hole, strlen(hole), 0x10000000u,
                                        names, 3), -1);
    assert_int_equal(fsd_rb_layout_find("junk\n\n", 6, 5, names, 3), -1);
    assert_int_equal(fsd_rb_layout_find("", 0, 5, names, 3), -1);
    /* Only len bytes count (the xattr is not NUL-terminated). */
    assert_int_equal(fsd_rb_layout_find(text, 10, 0, names, 3), -1);
}


/* The ranges of a layout text, without generations or other flags: what
 * the rebalance compares to know whether a fix-layout moved names. */
static void
t_layout_ranges(void **state)
{
    const char gen4[] = "b0 00000000 7fffffff 4 3\n"
                        "b1 00000000 00000000 4 2\n"
                        "b2 80000000 ffffffff 4 3\n";
    const char gen5[] = "b0 00000000 7fffffff 5 1\n"
                        "b1 12345678 00000000 5 0\n"
                        "b2 80000000 ffffffff 5 1";
    const char moved[] = "b0 00000000 7ffffffe 5 1\n"
                         "b1 00000000 00000000 5 0\n"
                         "b2 7fffffff ffffffff 5 1\n";
    char a[256];
    char b[256];
    char small[8];
    size_t need;

    (void)state;
    need = fsd_rb_layout_ranges(gen4, strlen(gen4), a, sizeof(a));
    assert_int_equal(need, strlen(a));
    assert_string_equal(a, "b0 0 7fffffff 1\nb1 0 0 0\nb2 80000000 ffffffff 1\n");
    /* Another generation, COMMITTED gone, junk in a rangeless entry: the
     * same placement. */
    fsd_rb_layout_ranges(gen5, strlen(gen5), b, sizeof(b));
    assert_string_equal(a, b);
    fsd_rb_layout_ranges(moved, strlen(moved), b, sizeof(b));
    assert_string_not_equal(a, b);
    /* Too small: truncated but terminated, the length needed returned. */
    assert_int_equal(fsd_rb_layout_ranges(gen4, strlen(gen4), small,
                                          sizeof(small)), need);
    assert_int_equal(strlen(small), sizeof(small) - 1);
    assert_int_equal(fsd_rb_layout_ranges("junk", 4, a, sizeof(a)), 0);
    assert_string_equal(a, "");
}


struct t_tab {
    vl_inode_table_t *itable; /* for directory inodes */
    vl_inode_t *dir;          /* the root, a reference */
};


static int
t_setup(void **state)
{
    struct t_tab *t = calloc(1, sizeof(*t));

    assert_non_null(t);
    t->itable = vl_inode_table_new(NULL, 0, 16);
    assert_non_null(t->itable);
    t->dir = vl_inode_table_root(t->itable);
    *state = t;
    return 0;
}


static int
t_teardown(void **state)
{
    struct t_tab *t = *state;

    vl_inode_unref(t->dir);
    vl_inode_table_free(t->itable);
    free(t);
    return 0;
}


static void
t_ent(struct fsd_rebal_ent *e, const vl_gfid_t *gfid, uint32_t mode,
      uint32_t nlink, uint64_t size)
{
    memset(e, 0, sizeof(*e));
    e->iatt.gfid = *gfid;
    e->iatt.mode = S_IFREG | mode;
    e->iatt.nlink = nlink;
    e->iatt.size = size;
    e->kind = fsd_rebal_classify(&e->iatt);
}


static struct fsd_rb_hl_group *t_found;


static int
t_find(struct fsd_rb_hl_group *g, void *arg)
{
    if (!vl_gfid_equal(&g->gfid, arg))
        return 0;
    t_found = g;
    return 1;
}


static struct fsd_rb_hl_group *
t_group(struct fsd_rb_hl_table *hl, vl_gfid_t *gfid)
{
    t_found = NULL;
    fsd_rb_hl_each(hl, t_find, gfid);
    return t_found;
}


static void
t_collect(void **state)
{
    struct t_tab *t = *state;
    struct fsd_rb_hl_table *hl = fsd_rb_hl_new(T_SUBS);
    struct fsd_rebal_ent ents[T_SUBS];
    struct fsd_rb_hl_group *g;
    vl_gfid_t a;
    vl_gfid_t b;
    vl_gfid_t c;
    vl_gfid_t d;

    assert_non_null(hl);
    vl_gfid_generate(&a);
    vl_gfid_generate(&b);
    vl_gfid_generate(&c);
    vl_gfid_generate(&d);

    /* a: data with 3 links on sub 0, a link file on sub 2 (same GFID),
     * and on sub 1 another file of that name (GFID b, one link). */
    memset(ents, 0, sizeof(ents));
    t_ent(&ents[0], &a, 0644, 3, 100);
    t_ent(&ents[1], &b, 0644, 1, 5);
    t_ent(&ents[2], &a, S_ISVTX, 1, 0);
    assert_int_equal(fsd_rb_hl_collect(hl, NULL, t->dir, "/", "x", ents), 0);
    /* The same inode under a second name, now on subs 0 and 1 (a move
     * in progress: a marker on 1): one entry for the name, not two. */
    memset(ents, 0, sizeof(ents));
    t_ent(&ents[0], &a, 0644, 3, 100);
    t_ent(&ents[1], &a, S_ISVTX | S_ISGID, 3, 0);
    assert_int_equal(fsd_rb_hl_collect(hl, NULL, t->dir, "/d", "y", ents),
                     0);
    /* c: a marker only (a one-name file's crashed migration) and data
     * with one link: kept while listing, dropped at the end. */
    memset(ents, 0, sizeof(ents));
    t_ent(&ents[0], &c, 0600, 1, 10);
    t_ent(&ents[2], &c, S_ISVTX | S_ISGID, 1, 0);
    assert_int_equal(fsd_rb_hl_collect(hl, NULL, t->dir, "/", "z", ents), 0);
    /* d: an ordinary file: never recorded. */
    memset(ents, 0, sizeof(ents));
    t_ent(&ents[1], &d, 0600, 1, 10);
    assert_int_equal(fsd_rb_hl_collect(hl, NULL, t->dir, "/", "w", ents), 0);

    assert_true(fsd_rb_hl_has(hl, &a));
    assert_false(fsd_rb_hl_has(hl, &b));
    assert_true(fsd_rb_hl_has(hl, &c));
    assert_false(fsd_rb_hl_has(hl, &d));
    fsd_rb_hl_finish_collect(hl, NULL);
    assert_true(fsd_rb_hl_has(hl, &a));
    assert_false(fsd_rb_hl_has(hl, &c));
    assert_int_equal(hl->n_groups, 1);

    g = t_group(hl, &a);
    assert_non_null(g);
    assert_int_equal(g->n_names, 2);
    assert_true(g->has_links);
    assert_string_equal(g->names[0].name, "x");
    assert_string_equal(g->names[1].path, "/d");
    /* Only the entries of this GFID are kept for a name. */
    assert_int_equal(g->names[0].ents[0].kind, FSD_RK_DATA);
    assert_int_equal(g->names[0].ents[1].kind, FSD_RK_NONE);
    assert_int_equal(g->names[0].ents[2].kind, FSD_RK_LINK);
    assert_int_equal(g->names[1].ents[1].kind, FSD_RK_MARKER);

    /* A rescan wants a: its names with one link left count too (after
     * a move the source may keep a single name a client added). */
    g->needs_rescan = true;
    assert_true(fsd_rb_hl_wants(hl, &a));
    assert_false(fsd_rb_hl_wants(hl, &c));
    assert_false(fsd_rb_hl_wants(NULL, &a));
    {
        struct fsd_rb_hl_table *next = fsd_rb_hl_new(T_SUBS);

        assert_non_null(next);
        memset(ents, 0, sizeof(ents));
        t_ent(&ents[2], &a, 0644, 1, 100);
        assert_int_equal(fsd_rb_hl_collect(next, hl, t->dir, "/", "new",
                                           ents), 0);
        memset(ents, 0, sizeof(ents));
        t_ent(&ents[2], &d, 0644, 1, 100);
        assert_int_equal(fsd_rb_hl_collect(next, hl, t->dir, "/", "w",
                                           ents), 0);
        fsd_rb_hl_finish_collect(next, hl);
        /* Kept although nothing in it has two links: it was wanted. */
        assert_true(fsd_rb_hl_has(next, &a));
        assert_false(fsd_rb_hl_has(next, &d));
        g = t_group(next, &a);
        assert_non_null(g);
        assert_false(g->has_links);
        assert_int_equal(g->n_names, 1);
        fsd_rb_hl_free(next);
    }
    fsd_rb_hl_free(hl);
    fsd_rb_hl_free(NULL);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_target),
        cmocka_unit_test(t_layout_find),
        cmocka_unit_test(t_layout_ranges),
        cmocka_unit_test_setup_teardown(t_collect, t_setup, t_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
