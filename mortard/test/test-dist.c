/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of mortard's distribute volume pieces: the client volfile
 * (one brick: no distribute; several: cluster/distribute over the
 * clients in brick order, cluster.* options, decommissioned-bricks,
 * diagnostics.client-trace on top), the store round trip of next-brick
 * and decommissioned bricks (and next-brick derived from the ids when an
 * older store lacks it), the checks of a list of new bricks, and
 * diagnostics.client-trace as a settable key.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mortard/mortard.h"
#include "xlators/builtin.h"

static char tmpdir[] = "/tmp/test-dist.XXXXXX";


static void
free_opts(struct md_volume *v)
{
    for (size_t i = 0; i < v->n_opts; i++) {
        free(v->opts[i].key);
        free(v->opts[i].value);
    }
    free(v->opts);
    v->opts = NULL;
    v->n_opts = 0;
}


/* The volume whose top (last) volume in text is of type want. */
static void
assert_top(const char *text, const char *want)
{
    vl_err_t err = {.msg = ""};
    vl_volfile_t *vf = vl_volfile_parse(text, strlen(text), "client", &err);
    const struct vl_volfile_vol *top;

    assert_non_null(vf);
    top = vl_volfile_top(vf, &err);
    assert_non_null(top);
    assert_string_equal(top->type, want);
    vl_volfile_free(vf);
}


static void
test_volgen_client(void **state)
{
    struct md_brick b[3] = {
        {.host = "h1", .path = "/d/b0", .port = 24200, .id = "brick0"},
        {.host = "h2", .path = "/d/b1", .port = 24201, .id = "brick3"},
        {.host = "h1", .path = "/d/b2", .port = 24202, .id = "brick7"},
    };
    struct md_volume v = {.name = "vv", .bricks = b, .n_bricks = 1};
    char *text;

    (void)state;
    /* The shapes below without write-behind, quick-read, nl-cache and
     * md-cache (checked at the end). */
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.write-behind", "off"),
                     0);
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.quick-read", "off"),
                     0);
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.nl-cache", "off"), 0);
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.stat-prefetch", "off"),
                     0);
    /* One brick: protocol/client alone, as before distribute. */
    text = md_volgen_client(&v);
    assert_non_null(text);
    assert_null(strstr(text, "cluster/distribute"));
    assert_non_null(strstr(text, "volume vv-client-0\n"));
    assert_top(text, "protocol/client");
    free(text);

    /* Several: distribute over <vol>-<brickid> in brick order. */
    v.n_bricks = 3;
    assert_int_equal(md_vol_opt_set(&v, "cluster.min-free-disk", "5%"), 0);
    text = md_volgen_client(&v);
    assert_non_null(text);
    assert_non_null(strstr(text, "volume vv-brick3\n    type "
                                 "protocol/client\n    option remote-host "
                                 "h2\n    option remote-port 24201\n"));
    assert_non_null(strstr(text, "volume vv-dht\n    type "
                                 "cluster/distribute\n"));
    assert_non_null(strstr(text, "    option min-free-disk 5%\n"
                                 "    subvolumes vv-brick0 vv-brick3 "
                                 "vv-brick7\n"));
    assert_null(strstr(text, "decommissioned"));
    assert_top(text, "cluster/distribute");
    free(text);

    /* remove-brick start: the decommissioned ones are named. */
    b[0].is_decommissioned = true;
    b[2].is_decommissioned = true;
    text = md_volgen_client(&v);
    assert_non_null(strstr(text, "    option decommissioned-bricks "
                                 "vv-brick0,vv-brick7\n"));
    assert_non_null(strstr(text, "subvolumes vv-brick0 vv-brick3 "
                                 "vv-brick7\n"));
    free(text);
    b[0].is_decommissioned = b[2].is_decommissioned = false;

    /* client-trace: debug/trace on top of distribute, or of the one
     * client. */
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.client-trace", "on"),
                     0);
    text = md_volgen_client(&v);
    assert_non_null(strstr(text, "volume vv-trace\n    type debug/trace\n"
                                 "    subvolumes vv-dht\n"));
    assert_top(text, "debug/trace");
    free(text);
    v.n_bricks = 1;
    text = md_volgen_client(&v);
    assert_non_null(strstr(text, "    subvolumes vv-client-0\n"));
    assert_top(text, "debug/trace");
    free(text);
    v.n_bricks = 3;
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.client-trace", "off"),
                     0);
    text = md_volgen_client(&v);
    assert_null(strstr(text, "debug/trace"));
    assert_null(strstr(text, "write-behind"));
    free(text);

    /* write-behind (on unless set off): right above distribute, with the
     * options of its class. */
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.write-behind", "on"),
                     0);
    assert_int_equal(md_vol_opt_set(&v, "write-behind.window-size", "4MB"),
                     0);
    text = md_volgen_client(&v);
    /* (Then its share of performance.cache-size: client-caches.c.) */
    assert_non_null(strstr(text, "volume vv-write-behind\n    type "
                                 "performance/write-behind\n    option "
                                 "window-size 4MB\n    option total-size "));
    assert_non_null(strstr(text, "\n    subvolumes vv-dht\n"));
    assert_top(text, "performance/write-behind");
    free(text);

    /* quick-read (on unless set off): above write-behind, with the
     * options of its class. */
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.quick-read", "on"), 0);
    assert_int_equal(md_vol_opt_set(&v, "quick-read.cache-timeout", "2"), 0);
    text = md_volgen_client(&v);
    assert_non_null(strstr(text, "volume vv-quick-read\n    type "
                                 "performance/quick-read\n    option "
                                 "cache-timeout 2\n    option cache-size "));
    assert_non_null(strstr(text, "\n    subvolumes vv-write-behind\n"));
    assert_top(text, "performance/quick-read");
    free(text);

    /* read-ahead (off unless set on): between write-behind and
     * quick-read, with the options of its class; off again for the
     * shapes below. */
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.read-ahead", "on"), 0);
    assert_int_equal(md_vol_opt_set(&v, "read-ahead.page-count", "8"), 0);
    text = md_volgen_client(&v);
    assert_non_null(strstr(text, "volume vv-read-ahead\n    type "
                                 "performance/read-ahead\n    option "
                                 "page-count 8\n    option cache-limit "));
    assert_non_null(strstr(text, "\n    subvolumes vv-write-behind\n"));
    assert_non_null(strstr(text, "\n    subvolumes vv-read-ahead\n"));
    assert_top(text, "performance/quick-read");
    free(text);
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.read-ahead", "off"),
                     0);
    text = md_volgen_client(&v);
    assert_null(strstr(text, "read-ahead"));
    free(text);

    /* readdir-ahead (off unless set on): between write-behind and
     * quick-read, with the options of its class (GlusterFS's key). */
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.readdir-ahead", "on"),
                     0);
    assert_int_equal(
        md_vol_opt_set(&v, "readdir-ahead.request-size", "64KiB"), 0);
    text = md_volgen_client(&v);
    assert_non_null(strstr(text, "volume vv-readdir-ahead\n    type "
                                 "performance/readdir-ahead\n    option "
                                 "request-size 64KiB\n    option "
                                 "cache-limit "));
    assert_non_null(strstr(text, "subvolumes vv-readdir-ahead\n"));
    free(text);
    assert_int_equal(
        md_vol_opt_set(&v, "diagnostics.readdir-ahead", "off"), 0);
    text = md_volgen_client(&v);
    assert_null(strstr(text, "readdir-ahead"));
    free(text);

    /* nl-cache (on unless set off): on top, with the options of its
     * class. */
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.nl-cache", "on"), 0);
    assert_int_equal(md_vol_opt_set(&v, "nl-cache.timeout", "30"), 0);
    text = md_volgen_client(&v);
    assert_non_null(strstr(text, "volume vv-nl-cache\n    type "
                                 "performance/nl-cache\n    option "
                                 "timeout 30\n    option limit "));
    assert_non_null(strstr(text, "\n    subvolumes vv-quick-read\n"));
    assert_top(text, "performance/nl-cache");
    free(text);

    /* md-cache (on unless stat-prefetch is off): on top; 600 s with the
     * bricks' and its own cache invalidation on and the timeout unset. */
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.stat-prefetch", "on"),
                     0);
    text = md_volgen_client(&v);
    assert_non_null(strstr(text, "volume vv-md-cache\n    type "
                                 "performance/md-cache\n    option "
                                 "md-cache-timeout 600\n    subvolumes "
                                 "vv-nl-cache\n"));
    assert_top(text, "performance/md-cache");
    free(text);
    /* Set by the user: that value, once. */
    assert_int_equal(md_vol_opt_set(&v, "md-cache.md-cache-timeout", "5"),
                     0);
    text = md_volgen_client(&v);
    assert_non_null(strstr(text, "performance/md-cache\n    option "
                                 "md-cache-timeout 5\n    subvolumes"));
    free(text);
    /* The bricks tell nothing: md-cache keeps nothing past 1 s. */
    assert_true(md_vol_opt_del(&v, "md-cache.md-cache-timeout"));
    assert_int_equal(md_vol_opt_set(&v, "upcall.cache-invalidation", "off"),
                     0);
    text = md_volgen_client(&v);
    assert_non_null(strstr(text, "performance/md-cache\n    option "
                                 "cache-invalidation off\n    subvolumes"));
    assert_null(strstr(text, "md-cache-timeout"));
    free(text);
    free_opts(&v);
}


static struct md_state *
new_state(const char *sub)
{
    struct md_state *st = calloc(1, sizeof(*st));
    vl_err_t err = {.msg = ""};

    assert_non_null(st);
    pthread_mutex_init(&st->lock, NULL);
    assert_true(asprintf(&st->state_dir, "%s/%s", tmpdir, sub) > 0);
    st->run_dir = strdup(tmpdir);
    st->log_dir = strdup(tmpdir);
    st->bind_addr = strdup("127.0.0.1");
    st->brick_base_port = 24200;
    assert_int_equal(md_store_load(st, &err), 0);
    return st;
}


static void
free_state(struct md_state *st)
{
    while (st->vols != NULL) {
        struct md_volume *v = st->vols;

        md_volume_unlink(st, v);
        md_volume_free(v);
    }
    free(st->state_dir);
    free(st->run_dir);
    free(st->log_dir);
    free(st->bind_addr);
    free(st);
}


static struct md_volume *
new_vol(const char *name, size_t n)
{
    struct md_volume *v = calloc(1, sizeof(*v));
    vl_gfid_t g;

    assert_non_null(v);
    snprintf(v->name, sizeof(v->name), "%s", name);
    vl_gfid_generate(&g);
    vl_gfid_to_str(&g, v->id);
    snprintf(v->transport, sizeof(v->transport), "tcp");
    v->bricks = calloc(n, sizeof(*v->bricks));
    assert_non_null(v->bricks);
    v->n_bricks = n;
    for (size_t i = 0; i < n; i++) {
        assert_true(asprintf(&v->bricks[i].host, "127.0.0.1") > 0);
        assert_true(asprintf(&v->bricks[i].path, "/srv/%s-%zu", name, i) >
                    0);
        v->bricks[i].port = (uint16_t)(24300 + i);
        snprintf(v->bricks[i].id, sizeof(v->bricks[i].id), "brick%zu",
                 i * 2);
    }
    v->next_brick = (unsigned)(n * 2);
    return v;
}


static void
test_store_dist(void **state)
{
    struct md_state *st = new_state("s1"), *st2;
    struct md_volume *v = new_vol("dv", 3), *l;
    vl_err_t err = {.msg = ""};
    char path[512], *text = NULL;

    (void)state;
    v->bricks[1].is_decommissioned = true;
    assert_int_equal(md_volume_save(st, v, &err), 0);
    md_volume_link(st, v);
    st2 = new_state("s1");
    l = md_volume_find(st2, "dv");
    assert_non_null(l);
    assert_int_equal(l->n_bricks, 3);
    assert_int_equal(l->next_brick, 6);
    assert_false(l->bricks[0].is_decommissioned);
    assert_true(l->bricks[1].is_decommissioned);
    assert_false(l->bricks[2].is_decommissioned);
    assert_string_equal(l->bricks[2].id, "brick4");
    free_state(st2);

    /* The client volfile written with it names the decommissioned. */
    snprintf(path, sizeof(path), "%s/s1/vols/dv/client.vol", tmpdir);
    assert_int_equal(md_read_file(path, &text, NULL), 0);
    assert_non_null(strstr(text, "decommissioned-bricks dv-brick2\n"));
    free(text);

    /* An info file without next-brick: past the highest id. */
    snprintf(path, sizeof(path), "%s/s1/vols/dv/info", tmpdir);
    assert_int_equal(md_read_file(path, &text, NULL), 0);
    {
        char *p = strstr(text, "next-brick=6\n");

        assert_non_null(p);
        memmove(p, p + strlen("next-brick=6\n"),
                strlen(p + strlen("next-brick=6\n")) + 1);
    }
    snprintf(path, sizeof(path), "%s/s1/vols/dv", tmpdir);
    assert_int_equal(md_write_atomic(path, "info", text, strlen(text), &err),
                     0);
    free(text);
    st2 = new_state("s1");
    l = md_volume_find(st2, "dv");
    assert_non_null(l);
    assert_int_equal(l->next_brick, 5);
    free_state(st2);

    /* A bad decommissioned value is refused, naming file and line. */
    snprintf(path, sizeof(path), "%s/s1/vols/dv/info", tmpdir);
    assert_int_equal(md_read_file(path, &text, NULL), 0);
    {
        char *p = strstr(text, "decommissioned=1");

        assert_non_null(p);
        p[strlen("decommissioned=")] = '7';
    }
    snprintf(path, sizeof(path), "%s/s1/vols/dv", tmpdir);
    assert_int_equal(md_write_atomic(path, "info", text, strlen(text), &err),
                     0);
    free(text);
    assert_int_equal(md_volume_load(path, "dv", &l, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "info:"));
    free_state(st);
}


static void
test_check_new_bricks(void **state)
{
    struct md_state *st = new_state("s3");
    char a[512], b[512], c[512], d[512];
    char *args[3], *hosts[3], *paths[3];
    vl_err_t err = {.msg = ""};

    (void)state;
    snprintf(a, sizeof(a), "127.0.0.1:%s/x", tmpdir);
    snprintf(b, sizeof(b), "localhost:%s/x", tmpdir);
    snprintf(c, sizeof(c), "127.0.0.1:%s/x/y", tmpdir);
    snprintf(d, sizeof(d), "127.0.0.1:%s/z", tmpdir);
    args[0] = a;
    args[1] = d;
    assert_int_equal(md_check_new_bricks(st, args, 2, true, hosts, paths,
                                         &err), 0);
    assert_string_equal(hosts[1], "127.0.0.1");
    for (int i = 0; i < 2; i++) {
        free(hosts[i]);
        free(paths[i]);
    }
    /* The same directory by two names of this node. */
    args[1] = b;
    assert_int_equal(md_check_new_bricks(st, args, 2, true, hosts, paths,
                                         &err), -EINVAL);
    assert_non_null(strstr(err.msg, "more than once"));
    assert_null(hosts[0]);
    args[1] = c;
    assert_int_equal(md_check_new_bricks(st, args, 2, true, hosts, paths,
                                         &err), -EINVAL);
    assert_non_null(strstr(err.msg, "nested"));
    args[1] = d;
    args[2] = "127.0.0.1:relative";
    assert_int_equal(md_check_new_bricks(st, args, 3, true, hosts, paths,
                                         &err), -EINVAL);
    args[2] = "192.0.2.7:/srv/x";
    assert_int_equal(md_check_new_bricks(st, args, 3, true, hosts, paths,
                                         &err), -EHOSTUNREACH);
    free_state(st);
}


static void
test_client_trace_key(void **state)
{
    const vl_xlator_class_t *cls;
    const vl_option_t *opt;
    char canon[256];
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(md_option_resolve("diagnostics.client-trace", "on",
                                       &cls, &opt, canon, sizeof(canon),
                                       &err), 0);
    assert_string_equal(canon, "diagnostics.client-trace");
    assert_string_equal(cls->prefix, "diagnostics");
    assert_int_equal(md_option_resolve("diagnostics.client-trace", "maybe",
                                       &cls, &opt, canon, sizeof(canon),
                                       &err), -EINVAL);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_volgen_client),
        cmocka_unit_test(test_store_dist),
        cmocka_unit_test(test_check_new_bricks),
        cmocka_unit_test(test_client_trace_key),
    };
    int rc;

    cmocka_set_message_output(CM_OUTPUT_TAP);
    vl_global_init();
    vl_xlators_register_builtin();
    if (mkdtemp(tmpdir) == NULL)
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            rc = rc != 0 ? rc : 1;
    }
    return rc;
}
