/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of distribute's layout lock (dist_layout_lock, taken by
 * dist_dir_sync before it writes a layout): over features/locks bricks,
 * a second fix-layout of a directory that starts while the first one is
 * between its read and its write waits for it and refits what it wrote
 * (generation 1 -> 2 -> 3, every copy alike). Without the lock both read
 * generation 1 and both write 2, the interleaving that, with writes
 * landing brick by brick, left mixed layouts. Also: the lock is released
 * (a third fix-layout goes through), and over bricks without
 * features/locks (ENOSYS) fix-layout still works.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "../../../builtin.h"
#include "dist-test.h"
#include "dist.h"

/* The second fixer, started by the first one's hook. */
static struct {
    struct dt *t;
    vl_inode_t *dir;
    pthread_t thread;
    bool is_started;
    int rc;                 /* its fix-layout's status */
    int hook_calls;         /* writes seen by the hook */
    pthread_mutex_t mu;
} lt = {.mu = PTHREAD_MUTEX_INITIALIZER};


static int
fix_layout(struct dt *t, vl_inode_t *dir)
{
    union vl_fop_args a;
    struct vl_reply r;
    int rc;

    memset(&a, 0, sizeof(a));
    a.setxattr.loc.inode = dir;
    a.setxattr.name = "mortar.dht.fix-layout";
    a.setxattr.value = "1";
    a.setxattr.size = 1;
    rc = dt_call(t, VL_FOP_SETXATTR, &a, &r);
    vl_reply_clear(&r);
    return rc;
}


static void *
second_fixer(void *arg)
{
    (void)arg;
    lt.rc = fix_layout(lt.t, lt.dir);
    return NULL;
}


/* On the first write: starts the second fix-layout and gives it 300 ms
 * to read the layout (which, unserialized, it does at once). */
static void
hook_start_second(vl_xlator_t *xl, const struct vl_loc *loc)
{
    bool is_first;

    (void)xl;
    (void)loc;
    pthread_mutex_lock(&lt.mu);
    is_first = lt.hook_calls++ == 0;
    pthread_mutex_unlock(&lt.mu);
    if (!is_first)
        return;
    /* A worker thread: no cmocka asserts here; the test checks
     * is_started. */
    if (pthread_create(&lt.thread, NULL, second_fixer, NULL) == 0)
        lt.is_started = true;
    usleep(300 * 1000);
}


/* The generation of every brick's copy of rel, or -1 if they differ. */
static int
brick_generation(struct dt *t, const char *rel)
{
    int gen = -2;

    for (int b = 0; b < t->n_bricks; b++) {
        char path[PATH_MAX];
        unsigned char val[64];
        int g;

        dt_path(t, b, rel, path, sizeof(path));
        assert_int_equal(getxattr(path, "trusted.mortar.dht", val,
                                  sizeof(val)), 20);
        g = (val[4] << 24) | (val[5] << 16) | (val[6] << 8) | val[7];
        if (gen == -2)
            gen = g;
        else if (g != gen)
            return -1;
    }
    return gen;
}


static int
setup_locked(void **state)
{
    vl_registry_add(&xl_features_locks);
    return dt_setup_locked(state, DT_BRICKS, "");
}


static void
test_fix_layouts_serialized(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = NULL;

    assert_int_equal(dt_mkdir(t, t->root, "v", &d), 0);
    assert_int_equal(brick_generation(t, "v"), 1);
    lt.t = t;
    lt.dir = d;
    lt.hook_calls = 0;
    lt.is_started = false;
    dist_test_before_layout_write = hook_start_second;
    assert_int_equal(fix_layout(t, d), 0);
    assert_true(lt.is_started);
    assert_int_equal(pthread_join(lt.thread, NULL), 0);
    dist_test_before_layout_write = NULL;
    assert_int_equal(lt.rc, 0);
    assert_int_equal(lt.hook_calls, 2);
    /* The second read what the first wrote. */
    assert_int_equal(brick_generation(t, "v"), 3);
    /* Released: one more goes through. */
    assert_int_equal(fix_layout(t, d), 0);
    assert_int_equal(brick_generation(t, "v"), 4);
    vl_inode_unref(d);
}


static void
test_fix_layout_without_locks(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = NULL;

    assert_int_equal(dt_mkdir(t, t->root, "w", &d), 0);
    assert_int_equal(fix_layout(t, d), 0);
    assert_int_equal(brick_generation(t, "w"), 2);
    vl_inode_unref(d);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fix_layouts_serialized,
                                        setup_locked, dt_teardown),
        cmocka_unit_test_setup_teardown(test_fix_layout_without_locks,
                                        dt_setup, dt_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("dist-lock", tests, NULL, NULL);
}
