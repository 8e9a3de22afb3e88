/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-heal: the self-heal daemon's pure parts: reading a brick's heal
 * index (GFIDs, handles, counters, names that are not GFIDs, objects
 * gone), the order of the work, the progress file (round trip, garbage),
 * the rate over the last minute and the ETA, and --heal's options.
 * The index tests set trusted.* xattrs: they need root (CI runs as
 * root) and are skipped otherwise.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "mortarfsd/fsd.h"
#include "mortarfsd/heal/heal.h"

static const char *const t_gfids[] = {
    "0a1b2c3d-0000-4000-8000-000000000001", /* a file, data blamed */
    "0a1b2c3d-0000-4000-8000-000000000002", /* a directory */
    "0a1b2c3d-0000-4000-8000-000000000003", /* a file, metadata blamed */
    "0a1b2c3d-0000-4000-8000-000000000004", /* gone: no handle */
};


static void
t_mkdirs(const char *path)
{
    char buf[600];

    snprintf(buf, sizeof(buf), "mkdir -p '%s'", path);
    assert_int_equal(system(buf), 0);
}


static void
t_rm(const char *path)
{
    char buf[600];

    snprintf(buf, sizeof(buf), "rm -rf '%s'", path);
    assert_int_equal(system(buf), 0);
}


static void
t_touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    assert_true(fd >= 0);
    close(fd);
}


/* A brick directory with an index of four GFIDs and a stray name. */
static void
t_brick(char *dir /* 64 bytes */)
{
    static const unsigned char data_blame[12] = {0, 0, 0, 2};
    static const unsigned char meta_blame[12] = {0, 0, 0, 0, 0, 0, 0, 1};
    char p[256], h[512];

    snprintf(dir, 64, "/tmp/test-heal.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof(p), "%s/.mortar/index/xattrop", dir);
    t_mkdirs(p);
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof(p), "%s/.mortar/index/xattrop/%s", dir,
                 t_gfids[i]);
        t_touch(p);
    }
    snprintf(p, sizeof(p), "%s/.mortar/index/xattrop/xattrop.tmp", dir);
    t_touch(p);
    snprintf(p, sizeof(p), "%s/.mortar/handles/0a/1b", dir);
    t_mkdirs(p);
    /* The file with data blamed on two slots' worth: 1 MiB. */
    snprintf(h, sizeof(h), "%s/%s", p, t_gfids[0]);
    t_touch(h);
    assert_int_equal(truncate(h, 1 << 20), 0);
    assert_int_equal(lsetxattr(h, "trusted.mortar.rep.b1", data_blame, 12,
                               0), 0);
    assert_int_equal(lsetxattr(h, "trusted.mortar.rep.b2", data_blame, 12,
                               0), 0);
    assert_int_equal(lsetxattr(h, "user.other", "x", 1, 0), 0);
    /* The directory: a symlink handle. */
    snprintf(h, sizeof(h), "%s/%s", p, t_gfids[1]);
    assert_int_equal(symlink("../../00/00/root/d", h), 0);
    /* The file with metadata blamed on one slot. */
    snprintf(h, sizeof(h), "%s/%s", p, t_gfids[2]);
    t_touch(h);
    assert_int_equal(truncate(h, 4096), 0);
    assert_int_equal(lsetxattr(h, "trusted.mortar.rep.b1", meta_blame, 12,
                               0), 0);
}


static void
test_index_scan(void **state)
{
    struct fsd_heal_jobs jobs = {0};
    char dir[64];
    char g[VL_GFID_STR_LEN];

    (void)state;
    if (geteuid() != 0)
        skip();
    t_brick(dir);
    assert_int_equal(fsd_heal_index_scan(dir, 3, &jobs), 3);
    assert_int_equal(jobs.n, 3);
    fsd_heal_jobs_sort(&jobs);
    /* The directory first, then the file blamed for two slots. */
    assert_string_equal(vl_gfid_to_str(&jobs.v[0].gfid, g), t_gfids[1]);
    assert_true(jobs.v[0].is_dir);
    assert_string_equal(vl_gfid_to_str(&jobs.v[1].gfid, g), t_gfids[0]);
    assert_int_equal(jobs.v[1].n_blamed, 2);
    assert_true(jobs.v[1].has_data);
    assert_int_equal(jobs.v[1].bytes, 1 << 20);
    assert_int_equal(jobs.v[1].brick, 3);
    assert_string_equal(vl_gfid_to_str(&jobs.v[2].gfid, g), t_gfids[2]);
    assert_int_equal(jobs.v[2].n_blamed, 1);
    assert_false(jobs.v[2].has_data);
    assert_int_equal(jobs.v[2].bytes, 0); /* no data to move */
    fsd_heal_jobs_clear(&jobs);
    t_rm(dir);
}


/* Directories are ordered by depth, read from the chain of their
 * handles' links (root/a/b: a at 1, b at 2; a link naming no GFID ends
 * the count there), each depth a stage of its own. */
static void
test_index_dir_depth(void **state)
{
    static const char *const d[] = {
        "5a5a5a5a-0000-4000-8000-00000000000a", /* /a */
        "5b5b5b5b-0000-4000-8000-00000000000b", /* /a/b */
        "5c5c5c5c-0000-4000-8000-00000000000c", /* bad link */
    };
    struct fsd_heal_jobs jobs = {0};
    char dir[64], p[512], t[256], g[VL_GFID_STR_LEN];
    const char *parent[] = {"00000000-0000-0000-0000-000000000001", d[0],
                            "nonsense"};

    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test-heal.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof(p), "%s/.mortar/index/xattrop", dir);
    t_mkdirs(p);
    for (int i = 2; i >= 0; i--) {
        snprintf(p, sizeof(p), "%s/.mortar/index/xattrop/%s", dir, d[i]);
        t_touch(p);
        snprintf(p, sizeof(p), "%s/.mortar/handles/%.2s/%.2s", dir, d[i],
                 d[i] + 2);
        t_mkdirs(p);
        snprintf(p, sizeof(p), "%s/.mortar/handles/%.2s/%.2s/%s", dir, d[i],
                 d[i] + 2, d[i]);
        snprintf(t, sizeof(t), "../../%.2s/%.2s/%s/n%d", parent[i],
                 parent[i] + 2, parent[i], i);
        assert_int_equal(symlink(t, p), 0);
    }
    assert_int_equal(fsd_heal_index_scan(dir, 0, &jobs), 3);
    fsd_heal_jobs_sort(&jobs);
    /* The bad link ends the count at once: depth 0, first. */
    assert_true(jobs.v[0].is_dir && jobs.v[1].is_dir && jobs.v[2].is_dir);
    assert_string_equal(vl_gfid_to_str(&jobs.v[0].gfid, g), d[2]);
    assert_int_equal(jobs.v[0].depth, 0);
    assert_string_equal(vl_gfid_to_str(&jobs.v[1].gfid, g), d[0]);
    assert_int_equal(jobs.v[1].depth, 1);
    assert_string_equal(vl_gfid_to_str(&jobs.v[2].gfid, g), d[1]);
    assert_int_equal(jobs.v[2].depth, 2);
    assert_int_equal(fsd_heal_job_stage(&jobs.v[2]), 2);
    assert_true(fsd_heal_job_stage(&jobs.v[0])
                < fsd_heal_job_stage(&jobs.v[2]));
    fsd_heal_jobs_clear(&jobs);
    t_rm(dir);
}


static void
test_job_stage(void **state)
{
    struct fsd_heal_job a, b;

    (void)state;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    assert_int_equal(fsd_heal_job_stage(&a), FSD_HEAL_STAGE_LAST);
    a.is_dir = true;
    a.depth = 3;
    b.is_dir = true;
    b.depth = 1;
    assert_int_equal(fsd_heal_job_stage(&a), 3);
    assert_true(fsd_heal_job_cmp(&b, &a) < 0); /* the shallower first */
    a.is_crawl = true;
    assert_int_equal(fsd_heal_job_stage(&a), 0); /* a crawl: one stage */
}


static void
test_index_missing(void **state)
{
    struct fsd_heal_jobs jobs = {0};

    (void)state;
    assert_int_equal(fsd_heal_index_scan("/nonexistent/brick", 0, &jobs),
                     -ENOENT);
    assert_int_equal(jobs.n, 0);
}


static void
test_job_order(void **state)
{
    struct fsd_heal_job a, b;

    (void)state;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    /* Fewer good copies first. */
    a.n_blamed = 2;
    b.n_blamed = 1;
    assert_true(fsd_heal_job_cmp(&a, &b) < 0);
    /* Metadata-only before data, at equal blame. */
    b.n_blamed = 2;
    a.has_data = true;
    assert_true(fsd_heal_job_cmp(&a, &b) > 0);
    /* Smaller data first. */
    b.has_data = true;
    a.bytes = 10;
    b.bytes = 5;
    assert_true(fsd_heal_job_cmp(&a, &b) > 0);
    /* Directories before everything. */
    b.is_dir = true;
    b.n_blamed = 0;
    assert_true(fsd_heal_job_cmp(&a, &b) > 0);
    assert_int_equal(fsd_heal_job_cmp(&a, &a), 0);
}


/* The same object named by two bricks of one set on this server is one
 * job naming both (the most blamed, data, the largest size); the same
 * GFID in another set, or from a full crawl, stays apart. */
static void
test_jobs_merge(void **state)
{
    /* Bricks 0 and 1: one replica set; brick 2: another. */
    static const uint32_t set_of[] = {0, 0, 2};
    struct fsd_heal_jobs jobs = {0};
    struct fsd_heal_job j;
    vl_gfid_t g1, g2;
    int seen = 0;

    (void)state;
    vl_gfid_generate(&g1);
    vl_gfid_generate(&g2);
    memset(&j, 0, sizeof(j));
    j.gfid = g1;
    j.brick = 0;
    j.bricks = 1;
    j.n_blamed = 1;
    assert_int_equal(fsd_heal_jobs_push(&jobs, &j), 0);
    j.brick = 2; /* another set: its own heal */
    j.bricks = 4;
    assert_int_equal(fsd_heal_jobs_push(&jobs, &j), 0);
    j.gfid = g2;
    j.brick = 1;
    j.bricks = 2;
    assert_int_equal(fsd_heal_jobs_push(&jobs, &j), 0);
    j.gfid = g1;
    j.n_blamed = 2;
    j.has_data = true;
    j.bytes = 100;
    assert_int_equal(fsd_heal_jobs_push(&jobs, &j), 0);
    j.brick = 0;
    j.bricks = 1;
    j.is_crawl = true; /* a crawl's job is never merged */
    assert_int_equal(fsd_heal_jobs_push(&jobs, &j), 0);
    assert_int_equal(fsd_heal_jobs_merge(&jobs, set_of), 1);
    assert_int_equal(jobs.n, 4);
    for (size_t i = 0; i < jobs.n; i++) {
        const struct fsd_heal_job *x = &jobs.v[i];

        if (vl_gfid_equal(&x->gfid, &g1) && x->set == 0 && !x->is_crawl) {
            assert_int_equal(x->bricks, 3);
            assert_int_equal(x->n_blamed, 2);
            assert_true(x->has_data);
            assert_int_equal(x->bytes, 100);
            seen |= 1;
        } else if (vl_gfid_equal(&x->gfid, &g1) && x->set == 2) {
            assert_int_equal(x->bricks, 4);
            seen |= 2;
        } else if (vl_gfid_equal(&x->gfid, &g2)) {
            assert_int_equal(x->bricks, 2);
            seen |= 4;
        } else {
            assert_true(x->is_crawl);
            seen |= 8;
        }
    }
    assert_int_equal(seen, 15);
    fsd_heal_jobs_clear(&jobs);
}


static void
test_record_nonzero(void **state)
{
    unsigned char v[12] = {0};
    bool is_data = false;

    (void)state;
    assert_false(fsd_heal_record_nonzero(v, sizeof(v), &is_data));
    v[11] = 1; /* entry */
    assert_true(fsd_heal_record_nonzero(v, sizeof(v), &is_data));
    assert_false(is_data);
    v[0] = 0x80; /* data, negative: still pending */
    assert_true(fsd_heal_record_nonzero(v, sizeof(v), &is_data));
    assert_true(is_data);
}


static void
test_state_round_trip(void **state)
{
    struct fsd_heal_state st, back;
    char dir[64], path[128];

    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test-heal-state.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/heal", dir);
    memset(&st, 0, sizeof(st));
    st.pid = 1234;
    st.started = 1000;
    st.updated = 1060;
    st.rounds = 3;
    st.healed = 500;
    st.healed_bytes = 1ull << 33;
    st.clean = 7;
    st.split_brain = 1;
    st.waiting = 2;
    st.failed = 4;
    st.pending = 90;
    st.pending_bytes = 12345;
    st.rate = 8.5;
    st.rate_bytes = 1048576;
    st.eta_seconds = 11;
    st.n_bricks = 2;
    snprintf(st.bricks[0].path, sizeof(st.bricks[0].path), "/d/b%%1\nx");
    st.bricks[0].pending = 60;
    st.bricks[0].bytes = 12000;
    snprintf(st.bricks[1].path, sizeof(st.bricks[1].path), "/d/b2");
    st.bricks[1].pending = 30;
    st.bricks[1].bytes = 345;
    assert_int_equal(fsd_heal_state_write(path, &st), 0);
    assert_int_equal(fsd_heal_state_read(path, &back), 0);
    assert_int_equal(back.pid, 1234);
    assert_int_equal(back.healed_bytes, 1ull << 33);
    assert_int_equal(back.pending, 90);
    assert_int_equal(back.eta_seconds, 11);
    assert_true(back.rate > 8.4 && back.rate < 8.6);
    assert_int_equal(back.n_bricks, 2);
    assert_string_equal(back.bricks[0].path, "/d/b%1\nx");
    assert_int_equal(back.bricks[1].pending, 30);
    assert_int_equal(back.bricks[1].bytes, 345);
    /* Not a heal state file: refused, not half-read. */
    {
        FILE *f = fopen(path, "w");

        assert_non_null(f);
        fputs("status=running\npid=1\n", f);
        fclose(f);
    }
    assert_int_equal(fsd_heal_state_read(path, &back), -EINVAL);
    {
        FILE *f = fopen(path, "w");

        assert_non_null(f);
        fputs("format=mortar-heal-state 1\nbrick99.pending=1\n", f);
        fclose(f);
    }
    assert_int_equal(fsd_heal_state_read(path, &back), -EINVAL);
    unlink(path);
    rmdir(dir);
}


static void
test_rate_and_eta(void **state)
{
    struct fsd_heal_rate r;
    struct fsd_heal_state st;

    (void)state;
    memset(&r, 0, sizeof(r));
    memset(&st, 0, sizeof(st));
    st.pending = 100;
    fsd_heal_rate_update(&r, 1000, &st);
    assert_int_equal(st.eta_seconds, -1); /* no rate yet */
    /* 10 objects and 10 MiB a second for 30 s. */
    for (int s = 1; s <= 30; s++) {
        st.healed += 10;
        st.healed_bytes += 10 << 20;
        fsd_heal_rate_update(&r, 1000 + s, &st);
    }
    assert_true(st.rate > 9.99 && st.rate < 10.01);
    st.pending_bytes = 100 << 20;
    fsd_heal_rate_update(&r, 1031, &st);
    assert_int_equal(st.eta_seconds, 10); /* by bytes */
    /* A stall: after a minute without progress the rate is 0. */
    for (int s = 32; s <= 100; s++)
        fsd_heal_rate_update(&r, 1000 + s, &st);
    assert_true(st.rate == 0);
    assert_int_equal(st.eta_seconds, -1);
    st.pending = 0;
    fsd_heal_rate_update(&r, 1101, &st);
    assert_int_equal(st.eta_seconds, 0);
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
test_opts(void **state)
{
    static const char *const ok[] = {
        "mortarfsd", "-f", "/v.vol", "--heal", "--heal-state", "/s",
        "--heal-brick", "v-replicate-0=/d/b1",
        "--heal-brick", "v-replicate-1=/d/b2",
    };
    static const char *const no_brick[] = {
        "mortarfsd", "-f", "/v.vol", "--heal", "--heal-state", "/s",
    };
    static const char *const bad_brick[] = {
        "mortarfsd", "-f", "/v.vol", "--heal", "--heal-state", "/s",
        "--heal-brick", "/d/b1",
    };
    static const char *const no_heal[] = {
        "mortarfsd", "-f", "/v.vol", "--heal-threads", "4",
    };
    static const char *const bad_threads[] = {
        "mortarfsd", "-f", "/v.vol", "--heal", "--heal-state", "/s",
        "--heal-brick", "a=/b", "--heal-threads", "0",
    };
    struct fsd_opts opts;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(t_parse(ok, VL_ARRAY_SIZE(ok), &opts, &err), 0);
    assert_true(opts.is_heal);
    assert_int_equal(opts.n_heal_bricks, 2);
    assert_string_equal(opts.heal_bricks[1].subvol, "v-replicate-1");
    assert_string_equal(opts.heal_bricks[1].path, "/d/b2");
    assert_int_equal(opts.heal_threads, FSD_HEAL_THREADS_DEFAULT);
    assert_int_equal(opts.heal_interval, FSD_HEAL_INTERVAL_DEFAULT);
    fsd_opts_clear(&opts);
    assert_int_equal(t_parse(no_brick, VL_ARRAY_SIZE(no_brick), &opts,
                             &err), -EINVAL);
    assert_non_null(strstr(err.msg, "--heal-brick"));
    assert_int_equal(t_parse(bad_brick, VL_ARRAY_SIZE(bad_brick), &opts,
                             &err), -EINVAL);
    assert_non_null(strstr(err.msg, "SUBVOL=DIR"));
    assert_int_equal(t_parse(no_heal, VL_ARRAY_SIZE(no_heal), &opts, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "need --heal"));
    assert_int_equal(t_parse(bad_threads, VL_ARRAY_SIZE(bad_threads), &opts,
                             &err), -EINVAL);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_scan),
        cmocka_unit_test(test_index_dir_depth),
        cmocka_unit_test(test_index_missing),
        cmocka_unit_test(test_job_stage),
        cmocka_unit_test(test_job_order),
        cmocka_unit_test(test_jobs_merge),
        cmocka_unit_test(test_record_nonzero),
        cmocka_unit_test(test_state_round_trip),
        cmocka_unit_test(test_rate_and_eta),
        cmocka_unit_test(test_opts),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("heal", tests, NULL, NULL);
}
