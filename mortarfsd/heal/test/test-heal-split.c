/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-heal-split: the split-brain list file (round trip per brick, the
 * bound with an exact count, garbage refused, its path beside the
 * progress file; the waiting objects beside the split-brains, an older
 * file without them) and the resolver's arguments (policies, FILE forms,
 * "." and "..", --heal-resolve's companions).
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

#include "mortarfsd/fsd.h"
#include "mortarfsd/heal/heal.h"


static void
t_gfid(unsigned n, vl_gfid_t *g)
{
    memset(g, 0, sizeof(*g));
    g->bytes[0] = 0x0a;
    g->bytes[12] = (uint8_t)(n >> 24);
    g->bytes[13] = (uint8_t)(n >> 16);
    g->bytes[14] = (uint8_t)(n >> 8);
    g->bytes[15] = (uint8_t)n;
}


static void
test_split_path(void **state)
{
    char buf[256];

    (void)state;
    fsd_heal_split_path("/run/heal/v0.state", buf, sizeof(buf));
    assert_string_equal(buf, "/run/heal/v0.split-brain");
    fsd_heal_split_path("/run/heal/v0", buf, sizeof(buf));
    assert_string_equal(buf, "/run/heal/v0.split-brain");
}


static void
test_split_round_trip(void **state)
{
    char dir[] = "/tmp/test-heal-split-XXXXXX", path[300];
    const char *bricks[] = {"/d/b1", "/d/b 2%x"};
    struct fsd_heal_split s[2] = {{0}}, back;
    vl_gfid_t g;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/v.split-brain", dir);
    for (unsigned i = 0; i < FSD_HEAL_SPLIT_MAX + 5; i++) {
        t_gfid(i, &g);
        assert_int_equal(fsd_heal_split_add(&s[1], &g), 0);
    }
    assert_int_equal(s[1].n, FSD_HEAL_SPLIT_MAX);
    assert_int_equal(s[1].count, FSD_HEAL_SPLIT_MAX + 5);
    assert_int_equal(fsd_heal_split_write(path, bricks, s, 2), 0);

    assert_int_equal(fsd_heal_split_read(path, "/d/b1", &back), 0);
    assert_int_equal(back.count, 0);
    assert_int_equal(back.n, 0);
    fsd_heal_split_clear(&back);
    assert_int_equal(fsd_heal_split_read(path, "/d/b 2%x", &back), 0);
    assert_int_equal(back.count, FSD_HEAL_SPLIT_MAX + 5);
    assert_int_equal(back.n, FSD_HEAL_SPLIT_MAX);
    t_gfid(7, &g);
    assert_memory_equal(&back.gfids[7], &g, sizeof(g));
    fsd_heal_split_clear(&back);
    assert_int_equal(fsd_heal_split_read(path, "/d/b3", &back), -ENOENT);

    /* Rewritten empty: the next round found nothing. */
    fsd_heal_split_clear(&s[1]);
    assert_int_equal(fsd_heal_split_write(path, bricks, s, 2), 0);
    assert_int_equal(fsd_heal_split_read(path, "/d/b 2%x", &back), 0);
    assert_int_equal(back.count, 0);
    fsd_heal_split_clear(&back);

    /* Not a list, a bad GFID: refused. */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("format=mortar-heal-state 1\n", f);
    fclose(f);
    assert_int_equal(fsd_heal_split_read(path, "/d/b1", &back), -EINVAL);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("format=mortar-heal-split-brain 1\nbrick=/d/b1\ncount=1\n"
          "gfid=nope\n", f);
    fclose(f);
    assert_int_equal(fsd_heal_split_read(path, "/d/b1", &back), -EINVAL);
    assert_int_equal(fsd_heal_split_read("/nonexistent/x", "/d/b1", &back),
                     -ENOENT);
    unlink(path);
    snprintf(path, sizeof(path), "%s/v.split-brain.tmp", dir);
    unlink(path);
    rmdir(dir);
}


/* The objects that waited for a copy: their own list and bound in each
 * brick's section, apart from the split-brains; a section without
 * waiting= (an older daemon's) says so. */
static void
test_split_waiting(void **state)
{
    char dir[] = "/tmp/test-heal-split-XXXXXX", path[300];
    const char *bricks[] = {"/d/b1", "/d/b2"};
    struct fsd_heal_split s[2] = {{0}}, back;
    vl_gfid_t g;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/v.split-brain", dir);
    t_gfid(1, &g);
    assert_int_equal(fsd_heal_split_add(&s[0], &g), 0);
    for (unsigned i = 0; i < FSD_HEAL_SPLIT_MAX + 3; i++) {
        t_gfid(100 + i, &g);
        assert_int_equal(fsd_heal_split_add_waiting(&s[1], &g), 0);
    }
    t_gfid(2, &g);
    assert_int_equal(fsd_heal_split_add_waiting(&s[0], &g), 0);
    assert_int_equal(s[1].n_waiting, FSD_HEAL_SPLIT_MAX);
    assert_int_equal(s[1].waiting, FSD_HEAL_SPLIT_MAX + 3);
    assert_int_equal(s[1].count, 0);
    assert_int_equal(fsd_heal_split_write(path, bricks, s, 2), 0);

    assert_int_equal(fsd_heal_split_read(path, "/d/b1", &back), 0);
    assert_true(back.has_waiting);
    assert_int_equal(back.count, 1);
    assert_int_equal(back.n, 1);
    assert_int_equal(back.waiting, 1);
    assert_int_equal(back.n_waiting, 1);
    t_gfid(2, &g);
    assert_memory_equal(&back.waiting_gfids[0], &g, sizeof(g));
    fsd_heal_split_clear(&back);
    assert_int_equal(fsd_heal_split_read(path, "/d/b2", &back), 0);
    assert_int_equal(back.count, 0);
    assert_int_equal(back.waiting, FSD_HEAL_SPLIT_MAX + 3);
    assert_int_equal(back.n_waiting, FSD_HEAL_SPLIT_MAX);
    t_gfid(100 + 9, &g);
    assert_memory_equal(&back.waiting_gfids[9], &g, sizeof(g));
    fsd_heal_split_clear(&back);
    fsd_heal_split_clear(&s[0]);
    fsd_heal_split_clear(&s[1]);

    f = fopen(path, "w");
    assert_non_null(f);
    fputs("format=mortar-heal-split-brain 1\nbrick=/d/b1\ncount=0\n", f);
    fclose(f);
    assert_int_equal(fsd_heal_split_read(path, "/d/b1", &back), 0);
    assert_false(back.has_waiting);
    fsd_heal_split_clear(&back);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("format=mortar-heal-split-brain 1\nbrick=/d/b1\ncount=0\n"
          "waiting=1\nwaiting_gfid=nope\n", f);
    fclose(f);
    assert_int_equal(fsd_heal_split_read(path, "/d/b1", &back), -EINVAL);
    unlink(path);
    rmdir(dir);
}


static void
test_policy_and_paths(void **state)
{
    struct fsd_heal_policy pol;
    vl_err_t err = {.msg = ""};
    vl_gfid_t g;
    bool is_gfid;

    (void)state;
    assert_int_equal(fsd_heal_policy_parse("bigger-file", &pol, &err), 0);
    assert_string_equal(pol.key, "mortar.heal.resolve.bigger-file");
    assert_true(pol.is_bigger_file);
    assert_string_equal(pol.child, "");
    assert_int_equal(fsd_heal_policy_parse("latest-mtime", &pol, &err), 0);
    assert_string_equal(pol.key, "mortar.heal.resolve.latest-mtime");
    assert_false(pol.is_bigger_file);
    assert_int_equal(fsd_heal_policy_parse("source-brick:v0-b1", &pol,
                                           &err), 0);
    assert_string_equal(pol.key, "mortar.heal.resolve.source-brick.v0-b1");
    assert_string_equal(pol.child, "v0-b1");
    assert_int_equal(fsd_heal_policy_parse("source-brick:", &pol, &err),
                     -EINVAL);
    assert_int_equal(fsd_heal_policy_parse("biggest", &pol, &err), -EINVAL);

    assert_int_equal(fsd_heal_path_check("/d/f", &is_gfid, &g, &err), 0);
    assert_false(is_gfid);
    assert_int_equal(fsd_heal_path_check("/", &is_gfid, &g, &err), 0);
    assert_int_equal(fsd_heal_path_check(
                         "gfid:0a1b2c3d-0000-4000-8000-000000000001",
                         &is_gfid, &g, &err), 0);
    assert_true(is_gfid);
    assert_int_equal(g.bytes[15], 1);
    assert_int_equal(fsd_heal_path_check("gfid:0a1b", &is_gfid, &g, &err),
                     -EINVAL);
    assert_int_equal(fsd_heal_path_check("d/f", &is_gfid, &g, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "must be absolute path"));
    assert_int_equal(fsd_heal_path_check("/d/../../etc", &is_gfid, &g,
                                         &err), -EINVAL);
    assert_int_equal(fsd_heal_path_check("/..", &is_gfid, &g, &err),
                     -EINVAL);
    assert_int_equal(fsd_heal_path_check("/a/./b", &is_gfid, &g, &err),
                     -EINVAL);
    assert_int_equal(fsd_heal_path_check("/a/..b/.c", &is_gfid, &g, &err),
                     0);
}


static int
t_parse(const char *const *args, size_t n, struct fsd_opts *opts,
        vl_err_t *err)
{
    char *argv[16];

    assert_true(n < 16);
    for (size_t i = 0; i < n; i++)
        argv[i] = (char *)args[i];
    argv[n] = NULL;
    optind = 0;
    return fsd_opts_parse((int)n, argv, opts, err);
}


static void
test_resolve_opts(void **state)
{
    static const char *const ok[] = {
        "mortarfsd", "-f", "/v.vol", "--heal", "-N", "--heal-resolve",
        "source-brick:v-b1", "--heal-path", "/f", "--heal-path",
        "gfid:0a1b2c3d-0000-4000-8000-000000000001",
    };
    static const char *const no_path[] = {
        "mortarfsd", "-f", "/v.vol", "--heal", "-N", "--heal-resolve",
        "bigger-file",
    };
    static const char *const bad_path[] = {
        "mortarfsd", "-f", "/v.vol", "--heal", "-N", "--heal-resolve",
        "bigger-file", "--heal-path", "/a/../b",
    };
    static const char *const path_alone[] = {
        "mortarfsd", "-f", "/v.vol", "--heal-path", "/f",
    };
    static const char *const with_brick[] = {
        "mortarfsd", "-f", "/v.vol", "--heal", "-N", "--heal-resolve",
        "latest-mtime", "--heal-path", "/f", "--heal-brick", "a=/b",
    };
    struct fsd_opts opts;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(t_parse(ok, VL_ARRAY_SIZE(ok), &opts, &err), 0);
    assert_true(opts.has_heal_resolve);
    assert_string_equal(opts.heal_policy.child, "v-b1");
    assert_int_equal(opts.n_heal_paths, 2);
    assert_string_equal(opts.heal_paths[0], "/f");
    fsd_opts_clear(&opts);
    assert_int_equal(t_parse(no_path, VL_ARRAY_SIZE(no_path), &opts, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "--heal-path"));
    assert_int_equal(t_parse(bad_path, VL_ARRAY_SIZE(bad_path), &opts,
                             &err), -EINVAL);
    assert_int_equal(t_parse(path_alone, VL_ARRAY_SIZE(path_alone), &opts,
                             &err), -EINVAL);
    assert_int_equal(t_parse(with_brick, VL_ARRAY_SIZE(with_brick), &opts,
                             &err), -EINVAL);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_path),
        cmocka_unit_test(test_split_round_trip),
        cmocka_unit_test(test_split_waiting),
        cmocka_unit_test(test_policy_and_paths),
        cmocka_unit_test(test_resolve_opts),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("heal-split", tests, NULL, NULL);
}
