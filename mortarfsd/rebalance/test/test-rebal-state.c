/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rebal-state: the rebalance state file (round trip, escaping, torn
 * temp file, garbage), the crawl order and resume cursor, the ETA, the
 * throttle names and file classification.
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
#include <unistd.h>

#include <cmocka.h>

#include "mortarfsd/fsd.h"

struct t_dir {
    char dir[64];   /* a private temporary directory */
    char path[128]; /* dir/state */
    char tmp[160];  /* dir/state.tmp */
};


static int
t_setup(void **state)
{
    struct t_dir *d = calloc(1, sizeof(*d));

    assert_non_null(d);
    snprintf(d->dir, sizeof(d->dir), "/tmp/test-rebal-state.XXXXXX");
    assert_non_null(mkdtemp(d->dir));
    snprintf(d->path, sizeof(d->path), "%s/state", d->dir);
    snprintf(d->tmp, sizeof(d->tmp), "%s/state.tmp", d->dir);
    *state = d;
    return 0;
}


static int
t_teardown(void **state)
{
    struct t_dir *d = *state;

    unlink(d->path);
    unlink(d->tmp);
    rmdir(d->dir);
    free(d);
    return 0;
}


static void
t_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}


static void
t_fill(struct fsd_rebal_state *st)
{
    memset(st, 0, sizeof(*st));
    st->status = FSD_REBAL_STOPPED;
    st->pid = 4242;
    st->started = 1700000000;
    st->updated = 1700000100;
    st->scanned_files = 500;
    st->scanned_dirs = 7;
    st->scanned_bytes = 123456789;
    st->moved_files = 170;
    st->moved_bytes = 98765432109ULL;
    st->failed_files = 2;
    st->skipped_files = 3;
    st->total_bytes = 1ULL << 40;
    st->eta_seconds = 77;
    snprintf(st->cursor, sizeof(st->cursor), "/d%%1/new\nline/x");
    snprintf(st->error, sizeof(st->error), "'f' b0 -> b2: copy: No space");
}


static void
test_round_trip(void **state)
{
    struct t_dir *d = *state;
    struct fsd_rebal_state in;
    struct fsd_rebal_state out;
    struct stat sb;

    t_fill(&in);
    assert_int_equal(fsd_rebal_state_write(d->path, &in), 0);
    /* The temporary file is gone after the rename. */
    assert_int_equal(stat(d->tmp, &sb), -1);
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_int_equal(out.status, FSD_REBAL_STOPPED);
    assert_int_equal(out.pid, 4242);
    assert_int_equal(out.started, 1700000000);
    assert_int_equal(out.updated, 1700000100);
    assert_int_equal(out.scanned_files, 500);
    assert_int_equal(out.scanned_dirs, 7);
    assert_int_equal(out.scanned_bytes, 123456789);
    assert_int_equal(out.moved_files, 170);
    assert_true(out.moved_bytes == 98765432109ULL);
    assert_int_equal(out.failed_files, 2);
    assert_int_equal(out.skipped_files, 3);
    assert_true(out.total_bytes == 1ULL << 40);
    assert_int_equal(out.eta_seconds, 77);
    assert_string_equal(out.cursor, in.cursor);
    assert_string_equal(out.error, in.error);

    /* Every status name survives too. */
    for (int s = FSD_REBAL_RUNNING; s <= FSD_REBAL_STOPPED; s++) {
        in.status = (enum fsd_rebal_status)s;
        assert_int_equal(fsd_rebal_state_write(d->path, &in), 0);
        assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
        assert_int_equal(out.status, s);
    }
}


/* The file is key=value lines a shell script can grep. */
static void
test_format(void **state)
{
    struct t_dir *d = *state;
    struct fsd_rebal_state in;
    char buf[2048];
    FILE *f;
    size_t n;

    t_fill(&in);
    in.status = FSD_REBAL_RUNNING;
    assert_int_equal(fsd_rebal_state_write(d->path, &in), 0);
    f = fopen(d->path, "r");
    assert_non_null(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "status=running\n"));
    assert_non_null(strstr(buf, "moved_files=170\n"));
    assert_non_null(strstr(buf, "eta_seconds=77\n"));
    assert_non_null(strstr(buf, "cursor=/d%251/new%0Aline/x\n"));
    assert_non_null(strstr(buf, "mode=rebalance\n"));
}


/* What a cursor covers: a rebalance's lets a rebalance or a fix-layout
 * go on after it, a fix-layout's only a fix-layout (it moved no file);
 * a file from before mode= was written is a rebalance's; completed and
 * failed runs are never resumed. */
static void
test_mode_and_resume(void **state)
{
    struct t_dir *d = *state;
    struct fsd_rebal_state in;
    struct fsd_rebal_state out;

    t_fill(&in);
    in.is_fix_layout = true;
    assert_int_equal(fsd_rebal_state_write(d->path, &in), 0);
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_true(out.is_fix_layout);
    assert_true(fsd_rebal_may_resume(&out, true, NULL));
    assert_false(fsd_rebal_may_resume(&out, false, NULL));

    in.is_fix_layout = false;
    assert_int_equal(fsd_rebal_state_write(d->path, &in), 0);
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_false(out.is_fix_layout);
    assert_true(fsd_rebal_may_resume(&out, true, NULL));
    assert_true(fsd_rebal_may_resume(&out, false, NULL));

    t_write_text(d->path, "status=running\ncursor=/a\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_false(out.is_fix_layout);
    assert_true(fsd_rebal_may_resume(&out, false, NULL));
    t_write_text(d->path, "status=stopped\nmode=fix-layout\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_false(fsd_rebal_may_resume(&out, false, NULL));
    t_write_text(d->path, "status=completed\nmode=rebalance\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_false(fsd_rebal_may_resume(&out, true, NULL));
    t_write_text(d->path, "status=failed\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_false(fsd_rebal_may_resume(&out, false, NULL));
    t_write_text(d->path, "status=running\nmode=sideways\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), -EINVAL);
}


/* The subvolume set a cursor was reached over: kept in the file, and a
 * run over another set (an add-brick since) starts afresh. */
static void
test_subvols(void **state)
{
    struct t_dir *d = *state;
    const char *three[] = {"v0-client-0", "v0-client-1", "v0-client-2"};
    const char *four[] = {"v0-client-0", "v0-client-1", "v0-client-2",
                          "v0-client-3"};
    const char *split_a[] = {"ab", "c"};
    const char *split_b[] = {"a", "bc"};
    char id3[FSD_REBAL_SUBVOLS_MAX], id4[FSD_REBAL_SUBVOLS_MAX];
    char ida[FSD_REBAL_SUBVOLS_MAX], idb[FSD_REBAL_SUBVOLS_MAX];
    struct fsd_rebal_state in;
    struct fsd_rebal_state out;

    fsd_rebal_subvols_id(three, 3, id3);
    fsd_rebal_subvols_id(four, 4, id4);
    assert_string_not_equal(id3, id4);
    assert_int_equal(strncmp(id3, "3:", 2), 0);
    fsd_rebal_subvols_id(split_a, 2, ida);
    fsd_rebal_subvols_id(split_b, 2, idb);
    assert_string_not_equal(ida, idb);
    fsd_rebal_subvols_id(three, 3, ida);
    assert_string_equal(ida, id3); /* stable */

    t_fill(&in);
    snprintf(in.subvols, sizeof(in.subvols), "%s", id3);
    assert_int_equal(fsd_rebal_state_write(d->path, &in), 0);
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_string_equal(out.subvols, id3);
    assert_true(fsd_rebal_may_resume(&out, false, id3));
    assert_false(fsd_rebal_may_resume(&out, false, id4));
    assert_false(fsd_rebal_may_resume(&out, true, id4));
    /* An older file (no subvols=) resumes as before. */
    t_write_text(d->path, "status=stopped\ncursor=/a\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_true(fsd_rebal_may_resume(&out, false, id4));
    t_write_text(d->path, "status=stopped\nsubvols=3:../x\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), -EINVAL);
}


/* A crash while writing leaves a torn state.tmp: the reader never looks
 * at it, and the next write replaces it. */
static void
test_torn_tmp_ignored(void **state)
{
    struct t_dir *d = *state;
    struct fsd_rebal_state in;
    struct fsd_rebal_state out;

    t_fill(&in);
    assert_int_equal(fsd_rebal_state_write(d->path, &in), 0);
    t_write_text(d->tmp, "status=comp");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_int_equal(out.status, FSD_REBAL_STOPPED);
    assert_int_equal(out.moved_files, 170);

    in.moved_files = 171;
    assert_int_equal(fsd_rebal_state_write(d->path, &in), 0);
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_int_equal(out.moved_files, 171);
}


static void
test_bad_files(void **state)
{
    struct t_dir *d = *state;
    struct fsd_rebal_state out;

    assert_int_equal(fsd_rebal_state_read(d->path, &out), -ENOENT);
    t_write_text(d->path, "");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), -EINVAL);
    t_write_text(d->path, "garbage without equals\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), -EINVAL);
    t_write_text(d->path, "status=exploded\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), -EINVAL);
    t_write_text(d->path, "status=running\nmoved_files=12x\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), -EINVAL);
    t_write_text(d->path, "status=running\ncursor=/a%2\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), -EINVAL);
    /* Unknown keys (a newer writer) are fine; missing ones are zero. */
    t_write_text(d->path, "status=running\nfuture_key=1\nmoved_files=3\n");
    assert_int_equal(fsd_rebal_state_read(d->path, &out), 0);
    assert_int_equal(out.moved_files, 3);
    assert_int_equal(out.scanned_files, 0);
    assert_string_equal(out.cursor, "");
}


/* Crawl order: preorder, siblings by name. */
static void
test_path_order(void **state)
{
    static const char *const order[] = {
        "/", "/a", "/a/b", "/a/b/c", "/a/c", "/a-b", "/ab", "/b", "/b/a",
    };

    (void)state;
    for (size_t i = 0; i < VL_ARRAY_SIZE(order); i++) {
        assert_int_equal(fsd_rebal_path_cmp(order[i], order[i]), 0);
        for (size_t j = i + 1; j < VL_ARRAY_SIZE(order); j++) {
            if (fsd_rebal_path_cmp(order[i], order[j]) >= 0)
                fail_msg("%s should come before %s", order[i], order[j]);
            assert_true(fsd_rebal_path_cmp(order[j], order[i]) > 0);
        }
    }
}


/* Resuming after /a/b: everything up to it is skipped, everything after
 * it in the crawl order is done, whatever its depth. */
static void
test_cursor_resume(void **state)
{
    (void)state;
    assert_true(fsd_rebal_cursor_skip("/", "/a/b"));
    assert_true(fsd_rebal_cursor_skip("/a", "/a/b"));
    assert_true(fsd_rebal_cursor_skip("/a/b", "/a/b"));
    assert_true(fsd_rebal_cursor_skip("/a/a/z", "/a/b"));
    assert_false(fsd_rebal_cursor_skip("/a/b/c", "/a/b"));
    assert_false(fsd_rebal_cursor_skip("/a/ba", "/a/b"));
    assert_false(fsd_rebal_cursor_skip("/a/c", "/a/b"));
    assert_false(fsd_rebal_cursor_skip("/b", "/a/b"));
    assert_false(fsd_rebal_cursor_skip("/aa", "/a/b"));
    /* No cursor: nothing is skipped. */
    assert_false(fsd_rebal_cursor_skip("/", ""));
    assert_false(fsd_rebal_cursor_skip("/", NULL));
    /* Cursor "/": only the root's own files were done. */
    assert_true(fsd_rebal_cursor_skip("/", "/"));
    assert_false(fsd_rebal_cursor_skip("/a", "/"));
}


static void
test_eta(void **state)
{
    struct fsd_rebal_state st = {0};

    (void)state;
    st.status = FSD_REBAL_RUNNING;
    st.started = 1000;
    st.total_bytes = 1000;
    fsd_rebal_eta_update(&st, 1010);
    assert_int_equal(st.eta_seconds, -1); /* nothing scanned yet */
    st.scanned_bytes = 250;
    fsd_rebal_eta_update(&st, 1010);
    assert_int_equal(st.eta_seconds, 30);
    st.scanned_bytes = 2000;
    fsd_rebal_eta_update(&st, 1010);
    assert_int_equal(st.eta_seconds, 0);
    st.status = FSD_REBAL_COMPLETED;
    fsd_rebal_eta_update(&st, 1010);
    assert_int_equal(st.eta_seconds, 0);
    st.status = FSD_REBAL_STOPPED;
    fsd_rebal_eta_update(&st, 1010);
    assert_int_equal(st.eta_seconds, -1);
}


static void
test_throttle(void **state)
{
    unsigned n = 0;

    (void)state;
    assert_int_equal(fsd_rebal_throttle_parse("lazy", &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(fsd_rebal_throttle_parse("normal", &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(fsd_rebal_throttle_parse("aggressive", &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(fsd_rebal_throttle_parse("7", &n), 0);
    assert_int_equal(n, 7);
    assert_int_equal(fsd_rebal_throttle_parse("0", &n), -EINVAL);
    assert_int_equal(fsd_rebal_throttle_parse("65", &n), -EINVAL);
    assert_int_equal(fsd_rebal_throttle_parse("-1", &n), -EINVAL);
    assert_int_equal(fsd_rebal_throttle_parse("fast", &n), -EINVAL);
    assert_int_equal(fsd_rebal_throttle_parse("", &n), -EINVAL);
}


static void
test_classify(void **state)
{
    struct vl_iatt ia = {0};

    (void)state;
    ia.mode = S_IFDIR | 0755;
    assert_int_equal(fsd_rebal_classify(&ia), FSD_RK_DIR);
    ia.mode = S_IFLNK | 0777;
    assert_int_equal(fsd_rebal_classify(&ia), FSD_RK_OTHER);
    ia.mode = S_IFREG | 0644;
    assert_int_equal(fsd_rebal_classify(&ia), FSD_RK_DATA);
    ia.mode = S_IFREG | S_ISVTX;
    assert_int_equal(fsd_rebal_classify(&ia), FSD_RK_LINK);
    ia.size = 10; /* a link file is empty */
    assert_int_equal(fsd_rebal_classify(&ia), FSD_RK_DATA);
    ia.mode = S_IFREG | S_ISVTX | S_ISGID;
    assert_int_equal(fsd_rebal_classify(&ia), FSD_RK_MARKER);
    ia.mode = S_IFREG | S_ISVTX | 0644;
    ia.size = 0;
    assert_int_equal(fsd_rebal_classify(&ia), FSD_RK_DATA);
}


static int
t_parse(struct fsd_opts *o, vl_err_t *err, ...)
{
    char *argv[16];
    int argc = 0;
    va_list ap;

    va_start(ap, err);
    argv[argc++] = (char *)"mortarfsd";
    while (argc < 15 && (argv[argc] = va_arg(ap, char *)) != NULL)
        argc++;
    va_end(ap);
    argv[argc] = NULL;
    return fsd_opts_parse(argc, argv, o, err);
}


/* The command line of the rebalance mode. */
static void
test_opts(void **state)
{
    struct fsd_opts o;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(t_parse(&o, &err, "--rebalance", "--volfile=/v.vol",
                             "--rebalance-state=/s", "--fix-layout",
                             "--throttle=aggressive", "-N", NULL), 0);
    assert_true(o.is_rebalance);
    assert_true(o.is_fix_layout);
    assert_string_equal(o.rebal_state, "/s");
    assert_int_equal(o.rebal_throttle, 4);
    assert_null(o.mountpoint);
    fsd_opts_clear(&o);

    /* Default throttle, with the volfile server. */
    assert_int_equal(t_parse(&o, &err, "--rebalance",
                             "--volfile-server=127.0.0.1",
                             "--volfile-server-port=24100",
                             "--volfile-id=vol", "--rebalance-state", "/s",
                             NULL), 0);
    assert_int_equal(o.rebal_throttle, FSD_REBAL_THROTTLE_DEFAULT);
    assert_false(o.is_fix_layout);
    fsd_opts_clear(&o);

    /* No state file, a mount point, options without --rebalance, a bad
     * throttle. */
    assert_int_equal(t_parse(&o, &err, "--rebalance", "--volfile=/v.vol",
                             NULL), -EINVAL);
    assert_non_null(strstr(err.msg, "--rebalance-state"));
    assert_int_equal(t_parse(&o, &err, "--rebalance", "--volfile=/v.vol",
                             "--rebalance-state=/s", "/mnt", NULL), -EINVAL);
    assert_int_equal(t_parse(&o, &err, "--volfile=/v.vol", "--fix-layout",
                             NULL), -EINVAL);
    assert_non_null(strstr(err.msg, "need --rebalance"));
    assert_int_equal(t_parse(&o, &err, "--rebalance", "--volfile=/v.vol",
                             "--rebalance-state=/s", "--throttle=fast",
                             NULL), -EINVAL);
    assert_non_null(strstr(err.msg, "--throttle 'fast'"));
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_format, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_mode_and_resume, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_subvols, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_torn_tmp_ignored, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_bad_files, t_setup, t_teardown),
        cmocka_unit_test(test_path_order),
        cmocka_unit_test(test_cursor_resume),
        cmocka_unit_test(test_eta),
        cmocka_unit_test(test_throttle),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_opts),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
