/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-fuse-groups: the Groups line of /proc/PID/status parsed, and the
 * per-pid cache: this process's own groups read, reused within
 * gid-timeout only for the same uid and gid, read again after it.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fuse.h"


static void
test_parse(void **state)
{
    uint32_t g[VL_MAX_GROUPS];

    (void)state;
    assert_int_equal(vfuse_groups_parse("Name:\tx\nUid:\t1\t1\t1\t1\n"
                                        "Groups:\t4 24 27 5000 \nNSpid:\t9\n",
                                        g, VL_MAX_GROUPS), 4);
    assert_int_equal(g[0], 4);
    assert_int_equal(g[3], 5000);
    /* No supplementary groups: an empty line. */
    assert_int_equal(vfuse_groups_parse("Gid:\t0\nGroups:\t\nNSpid:\t1\n",
                                        g, VL_MAX_GROUPS), 0);
    /* More than fit: the first max. */
    assert_int_equal(vfuse_groups_parse("Groups:\t1 2 3 4 5\n", g, 3), 3);
    assert_int_equal(g[2], 3);
    /* A text cut in the middle of the line still gives what it has. */
    assert_int_equal(vfuse_groups_parse("x\nGroups:\t10 11", g, 8), 2);
    assert_int_equal(vfuse_groups_parse("Uid:\t0\n", g, 8), -ENOENT);
    assert_int_equal(vfuse_groups_parse("Groups:\t99999999999\n", g, 8),
                     -EINVAL);
}


static void
test_fill_cached(void **state)
{
    struct vfuse_groups *g = calloc(1, sizeof(*g));
    gid_t mine[VL_MAX_GROUPS];
    int n_mine = getgroups(VL_MAX_GROUPS, mine);
    struct vl_caller c = {.uid = getuid(), .gid = getgid(),
                          .pid = (uint32_t)getpid()};

    (void)state;
    assert_non_null(g);
    assert_true(n_mine >= 0);
    vfuse_groups_init(g);
    vfuse_groups_fill(g, 60000, &c);
    assert_int_equal(c.n_groups, (uint32_t)n_mine);
    for (int i = 0; i < n_mine; i++)
        assert_int_equal(c.groups[i], mine[i]);
    assert_int_equal(atomic_load(&g->n_reads), 1);
    /* Same pid and ids: from the slot. */
    memset(c.groups, 0, sizeof(c.groups));
    vfuse_groups_fill(g, 60000, &c);
    assert_int_equal(c.n_groups, (uint32_t)n_mine);
    assert_int_equal(atomic_load(&g->n_hits), 1);
    assert_int_equal(atomic_load(&g->n_reads), 1);
    /* Other ids under the same pid: read again. */
    c.uid++;
    vfuse_groups_fill(g, 60000, &c);
    assert_int_equal(atomic_load(&g->n_reads), 2);
    /* Timeout 0: never kept. */
    c.uid--;
    vfuse_groups_fill(g, 0, &c);
    vfuse_groups_fill(g, 0, &c);
    assert_int_equal(atomic_load(&g->n_reads), 4);
    /* A slot that expired is read again. */
    g->slot[c.pid % VFUSE_GROUPS_SLOTS].expires_ms = 0;
    vfuse_groups_fill(g, 60000, &c);
    assert_int_equal(atomic_load(&g->n_reads), 5);
    /* pid 0 (the kernel's own requests) and a process gone: none. */
    c.pid = 0;
    vfuse_groups_fill(g, 60000, &c);
    assert_int_equal(c.n_groups, 0);
    c.pid = 0x7ffffff0u;
    c.n_groups = 3;
    vfuse_groups_fill(g, 60000, &c);
    assert_int_equal(c.n_groups, 0);
    vfuse_groups_fini(g);
    free(g);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_fill_cached),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
