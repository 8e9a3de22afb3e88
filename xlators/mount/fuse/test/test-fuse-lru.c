/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-fuse-lru: the kernel's nodes bounded (fuse-lru.c). Under the
 * limit nothing is named; over it, the least recently looked-up nodes'
 * names are given (a batch: the excess plus 1/32 of the limit), each
 * node once until it is looked up again or forgotten, a node without a
 * name hint is passed over (counted), a lookup moves a node to the
 * front, and a forgotten node leaves the count of those asked for.
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

/* What the picker named, in order. */
struct named {
    size_t n;
    uint64_t parent[256];
    char name[256][16];
};


static void
record(void *arg, uint64_t parent, const char *name)
{
    struct named *nm = arg;

    assert_true(nm->n < 256);
    nm->parent[nm->n] = parent;
    snprintf(nm->name[nm->n], sizeof(nm->name[0]), "%s", name);
    nm->n++;
}


static size_t
pick(struct fixture *f, struct named *nm)
{
    size_t n;

    memset(nm, 0, sizeof(*nm));
    pthread_mutex_lock(&f->t.lock);
    n = vfuse_lru_pick_locked(&f->t, record, nm);
    pthread_mutex_unlock(&f->t.lock);
    return n;
}


/* Looks up file n (a node) named "fN" in the root. */
static uint64_t
lookup(struct fixture *f, uint8_t n)
{
    vl_gfid_t g = fixture_gfid(n);
    vl_gfid_t root = vl_gfid_root;
    vl_inode_t *inode = vl_inode_get(f->g1, &g, S_IFREG);
    uint64_t nodeid;
    char name[16];

    assert_non_null(inode);
    nodeid = vfuse_node_remember(&f->t, inode, 1);
    assert_true(nodeid != 0);
    snprintf(name, sizeof(name), "f%u", n);
    vfuse_hint_add(&f->t, &root, name, nodeid);
    return nodeid;
}


static void
test_under_limit_nothing(void **state)
{
    struct fixture *f = *state;
    struct named nm;

    vfuse_lru_set_limit(&f->t, 4);
    for (uint8_t i = 1; i <= 4; i++)
        lookup(f, i);
    assert_int_equal(pick(f, &nm), 0);
    assert_int_equal(nm.n, 0);
    /* No limit: never. */
    vfuse_lru_set_limit(&f->t, 0);
    lookup(f, 5);
    assert_int_equal(pick(f, &nm), 0);
}


static void
test_oldest_named_once(void **state)
{
    struct fixture *f = *state;
    struct named nm;
    uint64_t id[8];

    vfuse_lru_set_limit(&f->t, 4);
    for (uint8_t i = 1; i <= 6; i++)
        id[i] = lookup(f, i);
    /* f1 looked up again: now the most recent. */
    assert_int_equal(lookup(f, 1), id[1]);
    /* 6 held, limit 4: the two least recent, f2 and f3, by their names
     * in the root (4 / 32 adds none). */
    assert_int_equal(pick(f, &nm), 2);
    assert_int_equal(nm.n, 2);
    assert_string_equal(nm.name[0], "f2");
    assert_string_equal(nm.name[1], "f3");
    assert_int_equal(nm.parent[0], FUSE_ROOT_ID);
    /* Asked for: not again while the kernel has not answered. */
    assert_int_equal(pick(f, &nm), 0);
    /* The kernel forgets f2: one fewer asked for, still at the limit. */
    vfuse_node_forget(&f->t, id[2], 1);
    assert_int_equal(pick(f, &nm), 0);
    /* It keeps f3 and looks it up again: held again, so over the limit
     * by one: the least recent is now f4. */
    lookup(f, 3);
    assert_int_equal(pick(f, &nm), 1);
    assert_string_equal(nm.name[0], "f4");
}


static void
test_unnamed_passed_over(void **state)
{
    struct fixture *f = *state;
    struct named nm;
    vl_gfid_t g = fixture_gfid(9);
    vl_inode_t *inode = vl_inode_get(f->g1, &g, S_IFREG);
    uint64_t id9;
    char dump[512] = "";
    FILE *out;

    vfuse_lru_set_limit(&f->t, 2);
    /* f9 has no name hint (the kernel got it by handle, say). */
    assert_non_null(inode);
    id9 = vfuse_node_remember(&f->t, inode, 1);
    assert_true(id9 != 0);
    lookup(f, 1);
    lookup(f, 2);
    /* Over by one: f9 cannot be named, so f1 is. */
    assert_int_equal(pick(f, &nm), 1);
    assert_string_equal(nm.name[0], "f1");
    out = fmemopen(dump, sizeof(dump), "w");
    assert_non_null(out);
    vfuse_lru_dump(&f->t, out);
    fclose(out);
    assert_non_null(strstr(dump, "lru_limit=2\n"));
    assert_non_null(strstr(dump, "lru_evicting=1\n"));
    assert_non_null(strstr(dump, "lru_evicted=1\n"));
    assert_non_null(strstr(dump, "lru_unnamed=1\n"));
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_under_limit_nothing,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_oldest_named_once,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_unnamed_passed_over,
                                        fixture_setup, fixture_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    vl_global_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
