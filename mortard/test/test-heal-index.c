/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-heal-index: cmd-heal.c's read of a brick's heal index
 * (md_heal_brick_read, md_heal_index_whole) on a brick directory made
 * here: the entries counted and named; an index whose marker
 * (.mortar/index/boot) names another boot than this one (the machine
 * went down under the brick, whose rebuild has not finished) is not
 * whole: -EBUSY, its entries still counted and named; nor is a marker
 * that cannot be read (empty, or too long), which the brick rebuilds
 * from; "clean", this boot's id, no marker or no boot id to compare:
 * whole. The boot id is
 * read from MORTAR_BOOT_ID_FILE, as storage/posix's test hook does.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mortard/mortard.h"

#define T_GFID1 "0a000000-0000-4000-8000-000000000001"
#define T_GFID2 "0a000000-0000-4000-8000-000000000002"

struct t_brick {
    char dir[64];       /* the brick */
    char boot_id[96];   /* the boot id file MORTAR_BOOT_ID_FILE names */
};


static void
t_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}


static void
t_run(const char *fmt, const char *arg)
{
    char cmd[512];

    snprintf(cmd, sizeof(cmd), fmt, arg);
    assert_int_equal(system(cmd), 0);
}


/* A brick with two entries in its index, running in boot "boot-a". */
static int
t_setup(void **state)
{
    struct t_brick *b = calloc(1, sizeof(*b));
    char path[256];

    assert_non_null(b);
    snprintf(b->dir, sizeof(b->dir), "/tmp/test-heal-index.XXXXXX");
    assert_non_null(mkdtemp(b->dir));
    t_run("mkdir -p %s/.mortar/index/xattrop", b->dir);
    snprintf(path, sizeof(path), "%s/.mortar/index/xattrop/" T_GFID1,
             b->dir);
    t_write(path, "");
    snprintf(path, sizeof(path), "%s/.mortar/index/xattrop/" T_GFID2,
             b->dir);
    t_write(path, "");
    snprintf(path, sizeof(path), "%s/.mortar/index/xattrop/xattrop-base",
             b->dir);
    t_write(path, ""); /* not a GFID: not an entry */
    snprintf(b->boot_id, sizeof(b->boot_id), "%s.boot_id", b->dir);
    t_write(b->boot_id, "boot-a\n");
    assert_int_equal(setenv("MORTAR_BOOT_ID_FILE", b->boot_id, 1), 0);
    *state = b;
    return 0;
}


static int
t_teardown(void **state)
{
    struct t_brick *b = *state;

    t_run("rm -rf %s", b->dir);
    unlink(b->boot_id);
    unsetenv("MORTAR_BOOT_ID_FILE");
    free(b);
    return 0;
}


static void
t_marker(const struct t_brick *b, const char *text)
{
    char path[256];

    snprintf(path, sizeof(path), "%s/.mortar/index/boot", b->dir);
    if (text == NULL)
        unlink(path);
    else
        t_write(path, text);
}


/* The brick's index read with names: its status, count and names. */
static int
t_read(const struct t_brick *b, uint64_t *n, size_t *n_names)
{
    struct md_heal_brick hb;
    size_t budget = 4096;
    int status;

    md_heal_brick_read(b->dir, true, true, &budget, &hb);
    status = hb.status;
    *n = hb.n;
    *n_names = hb.n_names;
    for (size_t i = 0; i < hb.n_names; i++)
        assert_true(strcmp(hb.names[i], T_GFID1) == 0
                    || strcmp(hb.names[i], T_GFID2) == 0);
    md_heal_brick_clear(&hb);
    return status;
}


static void
test_index_whole(void **state)
{
    struct t_brick *b = *state;
    uint64_t n;
    size_t names;

    t_marker(b, NULL); /* a new brick, or one of an older version */
    assert_true(md_heal_index_whole(b->dir));
    assert_int_equal(t_read(b, &n, &names), 0);
    assert_int_equal(n, 2);
    assert_int_equal(names, 2);
    t_marker(b, "clean\n"); /* stopped cleanly */
    assert_true(md_heal_index_whole(b->dir));
    t_marker(b, "boot-a\n"); /* running, or killed, in this boot */
    assert_true(md_heal_index_whole(b->dir));
    assert_int_equal(t_read(b, &n, &names), 0);
    assert_int_equal(n, 2);
}


static void
test_index_rebuilding(void **state)
{
    struct t_brick *b = *state;
    uint64_t n;
    size_t names;

    /* The machine went down under the brick in boot-a; this is boot-b. */
    t_marker(b, "boot-a\n");
    t_write(b->boot_id, "boot-b\n");
    assert_false(md_heal_index_whole(b->dir));
    assert_int_equal(t_read(b, &n, &names), -EBUSY);
    assert_int_equal(n, 2); /* what it lists so far, still shown */
    assert_int_equal(names, 2);
    /* No index directory yet: still not known whole. */
    t_run("rm -rf %s/.mortar/index/xattrop", b->dir);
    assert_int_equal(t_read(b, &n, &names), -EBUSY);
    assert_int_equal(n, 0);
    /* A marker that cannot be read (empty, or not a boot id's length):
     * the brick rebuilds from it, so it is not whole either. */
    t_marker(b, "");
    assert_false(md_heal_index_whole(b->dir));
    t_marker(b, "0123456789012345678901234567890123456789"
                "0123456789012345678901234567890123456789\n");
    assert_false(md_heal_index_whole(b->dir));
    /* The rebuild done: the marker takes this boot's id. */
    t_marker(b, "boot-b\n");
    assert_int_equal(t_read(b, &n, &names), 0);
    /* No boot id to compare with: the brick fsyncs every entry. */
    t_marker(b, "boot-a\n");
    unlink(b->boot_id);
    assert_true(md_heal_index_whole(b->dir));
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_index_whole, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_index_rebuilding, t_setup,
                                        t_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("heal-index", tests, NULL, NULL);
}
