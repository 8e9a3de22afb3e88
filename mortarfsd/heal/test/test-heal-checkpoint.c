/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-heal-checkpoint: the full crawl's checkpoint file
 * (heal-checkpoint.c): written and read back with values that need
 * escaping, no position (a brick not begun), removed (its torn .tmp
 * too), missing, and not a checkpoint.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mortarfsd/heal/heal.h"


static void
t_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}


static void
test_checkpoint_round_trip(void **state)
{
    struct fsd_heal_checkpoint a, b;
    char dir[] = "/tmp/test-heal-checkpoint.XXXXXX", path[128], tmp[160];
    char full[96];

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(full, sizeof(full), "%s/v.full", dir);
    fsd_heal_checkpoint_path(full, path, sizeof(path));
    assert_string_equal(path + strlen(dir), "/v.full.pos");
    memset(&a, 0, sizeof(a));
    snprintf(a.token, sizeof(a.token), "requested=1\nid=x%%y\n");
    a.brick = 2;
    snprintf(a.brick_path, sizeof(a.brick_path), "/d/brick 2");
    a.visited = 12345;
    a.healed = 67;
    a.failed = 1;
    a.waiting = 3;
    a.position = strdup("dir one/new\nline/%41");
    assert_non_null(a.position);
    assert_int_equal(fsd_heal_checkpoint_write(path, &a), 0);
    assert_int_equal(fsd_heal_checkpoint_read(path, &b), 0);
    assert_string_equal(b.token, a.token);
    assert_int_equal(b.brick, 2);
    assert_string_equal(b.brick_path, a.brick_path);
    assert_int_equal(b.visited, 12345);
    assert_int_equal(b.healed, 67);
    assert_int_equal(b.failed, 1);
    assert_int_equal(b.waiting, 3);
    assert_non_null(b.position);
    assert_string_equal(b.position, a.position);
    fsd_heal_checkpoint_clear(&b);
    assert_null(b.position);

    /* A brick whose walk had not begun: no position. */
    free(a.position);
    a.position = NULL;
    assert_int_equal(fsd_heal_checkpoint_write(path, &a), 0);
    assert_int_equal(fsd_heal_checkpoint_read(path, &b), 0);
    assert_null(b.position);
    assert_int_equal(b.brick, 2);

    /* Removed, with a crash's torn .tmp; then missing. */
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    t_write(tmp, "format=mortar-heal-chec");
    assert_int_equal(fsd_heal_checkpoint_remove(path), 0);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(access(tmp, F_OK), -1);
    assert_int_equal(fsd_heal_checkpoint_remove(path), 0);
    assert_int_equal(fsd_heal_checkpoint_read(path, &b), -ENOENT);

    /* Not a checkpoint: refused, nothing left allocated. */
    t_write(path, "format=mortar-heal-state 1\nbrick=1\n");
    assert_int_equal(fsd_heal_checkpoint_read(path, &b), -EINVAL);
    t_write(path, "brick=1\nposition=a/b\n");
    assert_int_equal(fsd_heal_checkpoint_read(path, &b), -EINVAL);
    assert_null(b.position);
    t_write(path, "format=mortar-heal-checkpoint 1\nbrick=x\n");
    assert_int_equal(fsd_heal_checkpoint_read(path, &b), -EINVAL);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checkpoint_round_trip),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
