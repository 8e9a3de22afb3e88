/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-dist: cluster/distribute over four storage/posix bricks, checked on
 * disk: mkdir on every brick with a layout, files on their hashed brick
 * and found again after a restart, readdir(plus) of a directory spread
 * over the bricks with no duplicates, statfs sum, min-free-disk 100%
 * (data elsewhere behind link files), class conformance. More namespace
 * tests are in test-dist-ns.c (its own program).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../../builtin.h"
#include "dist-test.h"
#include "vl-test.h"


static void
test_class_conformance(void **state)
{
    vl_err_t err = {{0}};

    (void)state;
    if (vl_test_check_class(&xl_cluster_distribute, &err) != 0)
        fail_msg("%s", err.msg);
}


static void
test_top_of_graph_ready(void **state)
{
    struct dt *t = *state;
    char reason[128];

    /* Distribute on top with every child up (local bricks): ready. */
    assert_int_equal(vl_graph_wait_ready(t->graph, 1000, reason,
                                         sizeof(reason)), 0);
}


static void
test_bad_options_refused(void **state)
{
    struct dt *t = *state;
    const char *bad[] = {" option min-free-disk 120%\n",
                         " option min-free-disk lots\n",
                         " option decommissioned-bricks b0,b9\n"};

    for (size_t i = 0; i < VL_ARRAY_SIZE(bad); i++) {
        char text[2048];
        size_t len = 0;
        vl_volfile_t *vf;
        vl_graph_t *g;
        vl_err_t err = {{0}};
        int rc = -1;

        for (int b = 0; b < DT_BRICKS; b++)
            len += (size_t)snprintf(text + len, sizeof(text) - len,
                                    "volume b%d\n type storage/posix\n"
                                    " option directory %s/b%d\n"
                                    "end-volume\n", b, t->base, b);
        snprintf(text + len, sizeof(text) - len,
                 "volume dht\n type cluster/distribute\n%s"
                 " subvolumes b0 b1 b2 b3\nend-volume\n", bad[i]);
        vf = vl_volfile_parse(text, strlen(text), "bad.vol", &err);
        assert_non_null(vf);
        g = vl_graph_build(vf, t->loop, &err);
        vl_volfile_free(vf);
        if (g != NULL) {
            rc = vl_graph_init(g, &err);
            vl_graph_free(g);
        }
        assert_true(g == NULL || rc != 0);
        assert_true(strlen(err.msg) > 0);
    }
}


static void
test_mkdir_on_all_with_layout(void **state)
{
    struct dt *t = *state;
    unsigned char val[64];
    uint64_t covered = 0;
    vl_inode_t *d = NULL;
    char path[PATH_MAX];
    mode_t mode;

    assert_int_equal(dt_mkdir(t, t->root, "d", &d), 0);
    for (int i = 0; i < DT_BRICKS; i++) {
        ssize_t n;
        uint32_t start, stop;

        assert_true(dt_exists(t, i, "d", &mode));
        assert_true(S_ISDIR(mode));
        dt_path(t, i, "d", path, sizeof(path));
        n = getxattr(path, "trusted.mortar.dht", val, sizeof(val));
        assert_int_equal(n, 20);
        assert_int_equal(val[3], 1);    /* format */
        assert_int_equal(val[19], 3);   /* HAS_RANGE | COMMITTED */
        start = (uint32_t)val[8] << 24 | (uint32_t)val[9] << 16
                | (uint32_t)val[10] << 8 | val[11];
        stop = (uint32_t)val[12] << 24 | (uint32_t)val[13] << 16
               | (uint32_t)val[14] << 8 | val[15];
        assert_int_equal(start, (uint32_t)i << 30);
        assert_int_equal(stop, ((uint32_t)i << 30) + 0x3fffffffu);
        covered += (uint64_t)stop - start + 1;
    }
    assert_int_equal(covered, 1ULL << 32);
    /* EEXIST on the hashed brick. */
    assert_int_equal(dt_mkdir(t, t->root, "d", NULL), -EEXIST);
    vl_inode_unref(d);
}


static void
test_create_spread_and_lookup(void **state)
{
    struct dt *t = *state;
    enum { N = 200 };
    unsigned count[DT_BRICKS] = {0};
    vl_gfid_t gfids[N];
    vl_inode_t *d = NULL, *f = NULL;
    struct vl_iatt ia;
    char name[32], rel[64];

    assert_int_equal(dt_mkdir(t, t->root, "s", &d), 0);
    for (int i = 0; i < N; i++) {
        int h;

        snprintf(name, sizeof(name), "file-%d", i);
        assert_int_equal(dt_create(t, d, name, &f, NULL), 0);
        gfids[i] = f->gfid;
        vl_inode_unref(f);
        h = dt_hashed(name);
        snprintf(rel, sizeof(rel), "s/%s", name);
        for (int b = 0; b < DT_BRICKS; b++)
            assert_int_equal(dt_exists(t, b, rel, NULL), b == h);
        count[h]++;
    }
    for (int b = 0; b < DT_BRICKS; b++)
        assert_true(count[b] > 0);
    /* A fresh graph finds every file by name, and misses are ENOENT. */
    vl_inode_unref(d);
    dt_restart(t);
    assert_int_equal(dt_lookup(t, t->root, "s", &ia, &d), 0);
    assert_true(S_ISDIR(ia.mode));
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "file-%d", i);
        assert_int_equal(dt_lookup(t, d, name, &ia, NULL), 0);
        assert_true(vl_gfid_equal(&ia.gfid, &gfids[i]));
        assert_true(S_ISREG(ia.mode));
    }
    assert_int_equal(dt_lookup(t, d, "nope", NULL, NULL), -ENOENT);
    vl_inode_unref(d);
}


static void
test_readdir_no_duplicates(void **state)
{
    struct dt *t = *state;
    enum { N = 600, SUB = 3, MAX = N + SUB + 8 };
    vl_inode_t *d = NULL;
    char *names[MAX];
    char name[32];
    bool seen[N + SUB];
    ssize_t n;

    assert_int_equal(dt_mkdir(t, t->root, "big", &d), 0);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "e%d", i);
        assert_int_equal(dt_create(t, d, name, NULL, NULL), 0);
    }
    for (int i = 0; i < SUB; i++) {
        snprintf(name, sizeof(name), "sub%d", i);
        assert_int_equal(dt_mkdir(t, d, name, NULL), 0);
    }
    for (int pass = 0; pass < 2; pass++) {
        memset(seen, 0, sizeof(seen));
        n = dt_readdir_all(t, d, pass == 0 ? 1024 : 8192, pass == 1, names,
                           MAX);
        assert_int_equal(n, N + SUB);
        for (ssize_t i = 0; i < n; i++) {
            int idx;

            if (sscanf(names[i], "e%d", &idx) == 1) {
                assert_in_range(idx, 0, N - 1);
            } else {
                assert_int_equal(sscanf(names[i], "sub%d", &idx), 1);
                idx += N;
            }
            assert_false(seen[idx]);
            seen[idx] = true;
            free(names[i]);
        }
    }
    vl_inode_unref(d);
}


static void
test_statfs_sum(void **state)
{
    struct dt *t = *state;
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct statvfs one;

    assert_int_equal(statvfs(t->base, &one), 0);
    a.statfs.loc.inode = t->root;
    assert_int_equal(dt_call(t, VL_FOP_STATFS, &a, &r), 0);
    /* Four bricks on one file system: four times its size. */
    assert_int_equal(r.statvfs.f_blocks * r.statvfs.f_frsize,
                     4 * (uint64_t)one.f_blocks * one.f_frsize);
    assert_int_equal(r.statvfs.f_files, 4 * (uint64_t)one.f_files);
    vl_reply_clear(&r);
}


static void
test_min_free_disk_full(void **state)
{
    struct dt *t = *state;
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *d = NULL, *f = NULL;
    vl_fd_t *fd = NULL;
    char name[32], rel[64], path[PATH_MAX], to[64], buf[64];
    int n_linked = 0;

    /* Every brick is "full": files still get created. */
    dt_reopen(t, " option min-free-disk 100%\n");
    a.statfs.loc.inode = t->root;
    assert_int_equal(dt_call(t, VL_FOP_STATFS, &a, &r), 0);
    vl_reply_clear(&r);
    assert_int_equal(dt_mkdir(t, t->root, "full", &d), 0);
    for (int i = 0; i < 16; i++) {
        int h, data = -1;
        mode_t mode;

        snprintf(name, sizeof(name), "f%d", i);
        assert_int_equal(dt_create(t, d, name, &f, &fd), 0);
        assert_int_equal(dt_write(t, fd, 0, "payload"), 0);
        vl_fd_unref(fd);
        vl_inode_unref(f);
        h = dt_hashed(name);
        snprintf(rel, sizeof(rel), "full/%s", name);
        for (int b = 0; b < DT_BRICKS; b++)
            if (dt_exists(t, b, rel, &mode) && (mode & 07777) != S_ISVTX)
                data = b;
        assert_true(data >= 0);
        assert_true(dt_exists(t, h, rel, &mode));
        if (data != h) {
            ssize_t n;

            assert_int_equal(mode & 07777, S_ISVTX);
            dt_path(t, h, rel, path, sizeof(path));
            n = getxattr(path, "trusted.mortar.dht.linkto", to,
                         sizeof(to));
            assert_true(n > 0);
            snprintf(buf, sizeof(buf), "b%d", data);
            assert_string_equal(to, buf);
            n_linked++;
        }
    }
    /* With equal free space the first brick takes the data. */
    assert_true(n_linked > 0);
    vl_inode_unref(d);

    /* A new graph reads them back through the link files. */
    dt_reopen(t, "");
    assert_int_equal(dt_lookup(t, t->root, "full", NULL, &d), 0);
    for (int i = 0; i < 16; i++) {
        struct vl_iatt ia;

        snprintf(name, sizeof(name), "f%d", i);
        assert_int_equal(dt_lookup(t, d, name, &ia, &f), 0);
        assert_int_equal(ia.size, 7);
        assert_int_equal(dt_open(t, f, O_RDONLY, &fd), 0);
        assert_int_equal(dt_read(t, fd, 0, buf, sizeof(buf)), 7);
        assert_string_equal(buf, "payload");
        vl_fd_unref(fd);
        vl_inode_unref(f);
    }
    vl_inode_unref(d);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class_conformance),
        cmocka_unit_test_setup_teardown(test_top_of_graph_ready, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_bad_options_refused, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_mkdir_on_all_with_layout,
                                        dt_setup, dt_teardown),
        cmocka_unit_test_setup_teardown(test_create_spread_and_lookup,
                                        dt_setup, dt_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_no_duplicates,
                                        dt_setup, dt_teardown),
        cmocka_unit_test_setup_teardown(test_statfs_sum, dt_setup,
                                        dt_teardown),
        cmocka_unit_test_setup_teardown(test_min_free_disk_full, dt_setup,
                                        dt_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("dist", tests, NULL, NULL);
}
