/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-io-stats: debug/io-stats over the testlib mock: the per-file top
 * tables (sorted, bounded, off when count-fop-hits is off), the paths
 * learnt from named answers, the profile dump with its baselines (a
 * `profile info` starts a new interval, a clear restarts both), and every
 * request answered once under allocation failure.
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

#include <cmocka.h>

#include "builtin.h"
#include "io-stats.h"
#include "vl-test.h"
#include "vol/vol.h"

struct t_env {
    struct vl_test_graph *g; /* io-stats over the mock */
    vl_xlator_t *ios;        /* the translator under test */
    vl_xlator_t *mock;       /* the leaf; answers with auto-answer */
};


static struct t_env *
t_env_new(const char *opts)
{
    struct t_env *e = calloc(1, sizeof(*e));
    vl_err_t err = {{0}};
    char text[1024];

    assert_non_null(e);
    snprintf(text, sizeof(text),
             "volume mock\n    type debug/mock\n"
             "    option auto-answer on\nend-volume\n"
             "volume ios\n    type debug/io-stats\n%s"
             "    subvolumes mock\nend-volume\n", opts);
    vl_global_init();
    vl_registry_add(&xl_debug_io_stats);
    e->g = vl_test_graph_new(text, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->ios = vl_test_graph_xl(e->g, "ios");
    e->mock = vl_test_graph_xl(e->g, "mock");
    assert_ptr_equal(ios_find(e->g->graph), e->ios);
    return e;
}


static void
t_env_free(struct t_env *e)
{
    vl_test_graph_free(e->g);
    free(e);
}


static vl_inode_t *
t_inode(struct t_env *e, uint32_t type)
{
    vl_gfid_t gfid;

    vl_gfid_generate(&gfid);
    return vl_inode_get(e->g->graph->itable, &gfid, type);
}


/* Winds one request of op on inode (a fresh fd for fd fops). */
static int
t_fop(struct t_env *e, vl_fop_t op, vl_inode_t *inode, size_t size)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, op);
    vl_fd_t *fd = vl_fd_new(inode, O_RDWR, 1);
    static char data[65536];
    struct iovec iov = {.iov_base = data, .iov_len = size};
    int status;

    assert_non_null(req);
    assert_non_null(fd);
    switch (op) {
    case VL_FOP_OPEN:
        VL_ARGS(req, open)->loc.inode = inode;
        VL_ARGS(req, open)->fd = fd;
        break;
    case VL_FOP_OPENDIR:
        VL_ARGS(req, opendir)->loc.inode = inode;
        VL_ARGS(req, opendir)->fd = fd;
        break;
    case VL_FOP_READ:
        VL_ARGS(req, read)->fd = fd;
        VL_ARGS(req, read)->size = size;
        break;
    case VL_FOP_WRITE:
        VL_ARGS(req, write)->fd = fd;
        VL_ARGS(req, write)->iov = &iov;
        VL_ARGS(req, write)->n_iov = 1;
        break;
    case VL_FOP_READDIR:
        VL_ARGS(req, readdir)->fd = fd;
        break;
    default:
        fail_msg("op %d", op);
    }
    vl_test_wind(req, &res);
    assert_int_equal(res.n_done, 1);
    status = res.status;
    vl_test_result_clear(&res);
    vl_fd_unref(fd);
    return status;
}


/* A named lookup of name in parent that revalidates inode (the mock
 * answers at once; its reply's null GFID matches no linked inode, so the
 * name goes to loc.inode). Returns the status. */
static int
t_lookup(struct t_env *e, vl_inode_t *parent, const char *name,
         vl_inode_t *inode)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);
    int status;

    assert_non_null(req);
    VL_ARGS(req, lookup)->loc.parent = parent;
    VL_ARGS(req, lookup)->loc.name = name;
    VL_ARGS(req, lookup)->loc.inode = inode;
    vl_test_wind(req, &res);
    assert_int_equal(res.n_done, 1);
    status = res.status;
    vl_test_result_clear(&res);
    return status;
}


/* The dump as one string (caller frees). */
static char *
t_dump(struct t_env *e, enum ios_dump_mode mode)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    ios_dump_profile(e->ios, f, mode);
    fclose(f);
    return buf;
}


/* The value of the nth field (0-based, after the record name and snap
 * and fop name) of "fop SNAP NAME ..." in dump, or -1. */
static long long
t_fop_field(const char *dump, const char *snap, const char *fop, int nth)
{
    char key[64];
    const char *p;
    long long v = -1;

    snprintf(key, sizeof(key), "\nfop %s %s ", snap, fop);
    p = strstr(dump, key);
    if (p == NULL)
        return -1;
    p += strlen(key);
    for (int i = 0; i <= nth; i++) {
        char *end;

        v = strtoll(p, &end, 10);
        p = end;
    }
    return v;
}


static void
test_top_sorted_and_paths(void **state)
{
    struct t_env *e = t_env_new("    option count-fop-hits on\n");
    vl_inode_t *root = vl_inode_get(e->g->graph->itable, &vl_gfid_root,
                                    S_IFDIR);
    vl_inode_t *d = t_inode(e, S_IFDIR), *a = t_inode(e, S_IFREG),
               *b = t_inode(e, S_IFREG), *c = t_inode(e, S_IFREG);
    char *dump, *pa, *pb, *pc, gfid[VL_GFID_STR_LEN], want[128];

    (void)state;
    assert_int_equal(t_lookup(e, root, "dir", d), 0);
    assert_int_equal(t_lookup(e, d, "a", a), 0);
    assert_int_equal(t_lookup(e, root, "b", b), 0);
    /* c is never looked up: nameless. */
    for (int i = 0; i < 3; i++)
        assert_int_equal(t_fop(e, VL_FOP_OPEN, a, 0), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(t_fop(e, VL_FOP_OPEN, b, 0), 0);
    assert_int_equal(t_fop(e, VL_FOP_OPEN, c, 0), 0);
    assert_int_equal(t_fop(e, VL_FOP_WRITE, a, 4096), 0);
    assert_int_equal(t_fop(e, VL_FOP_READ, b, 100), 0);
    assert_int_equal(t_fop(e, VL_FOP_OPENDIR, d, 0), 0);
    assert_int_equal(t_fop(e, VL_FOP_READDIR, d, 0), 0);
    dump = t_dump(e, IOS_DUMP_PEEK);
    pb = strstr(dump, "top open 5 /b\n");
    pa = strstr(dump, "top open 3 /dir/a\n");
    snprintf(want, sizeof(want), "top open 1 <gfid:%s>\n",
             vl_gfid_to_str(&c->gfid, gfid));
    pc = strstr(dump, want);
    assert_non_null(pb);
    assert_non_null(pa);
    assert_non_null(pc);
    assert_true(pb < pa && pa < pc); /* highest count first */
    assert_non_null(strstr(dump, "top write 1 /dir/a\n"));
    assert_non_null(strstr(dump, "top read 1 /b\n"));
    assert_non_null(strstr(dump, "top opendir 1 /dir\n"));
    assert_non_null(strstr(dump, "top readdir 1 /dir\n"));
    assert_non_null(strstr(dump, "count-fop-hits on\n"));
    free(dump);
    /* A top clear empties the tables. */
    free(t_dump(e, IOS_DUMP_TOP_CLEAR));
    dump = t_dump(e, IOS_DUMP_PEEK);
    assert_null(strstr(dump, "top "));
    free(dump);
    assert_int_equal(t_fop(e, VL_FOP_OPEN, a, 0), 0);
    dump = t_dump(e, IOS_DUMP_PEEK);
    assert_non_null(strstr(dump, "top open 1 /dir/a\n")); /* from zero */
    free(dump);
    vl_inode_unref(root);
    vl_inode_unref(d);
    vl_inode_unref(a);
    vl_inode_unref(b);
    vl_inode_unref(c);
    t_env_free(e);
}


/* More files than the table holds: the IOS_TOP_MAX busiest stay. */
static void
test_top_bounded(void **state)
{
    struct t_env *e = t_env_new("    option count-fop-hits on\n");
    enum { N = IOS_TOP_MAX + 20 };
    vl_inode_t *in[N];
    char *dump, *p;
    size_t n_rows = 0;
    unsigned long long last = ~0ull, v;

    (void)state;
    for (size_t i = 0; i < N; i++) {
        in[i] = t_inode(e, S_IFREG);
        /* file i is read i + 1 times */
        for (size_t k = 0; k <= i; k++)
            assert_int_equal(t_fop(e, VL_FOP_READ, in[i], 10), 0);
    }
    dump = t_dump(e, IOS_DUMP_PEEK);
    for (p = strstr(dump, "top read "); p != NULL;
         p = strstr(p + 1, "top read ")) {
        v = strtoull(p + strlen("top read "), NULL, 10);
        assert_true(v <= last);
        assert_true(v > N - IOS_TOP_MAX); /* the 20 quietest went */
        last = v;
        n_rows++;
    }
    assert_int_equal(n_rows, IOS_TOP_MAX);
    assert_non_null(strstr(dump, "top read 120 <gfid:"));
    free(dump);
    for (size_t i = 0; i < N; i++)
        vl_inode_unref(in[i]);
    t_env_free(e);
}


static void
test_top_off(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *a = t_inode(e, S_IFREG);
    char *dump;

    (void)state;
    assert_int_equal(t_fop(e, VL_FOP_OPEN, a, 0), 0);
    assert_int_equal(t_fop(e, VL_FOP_WRITE, a, 10), 0);
    dump = t_dump(e, IOS_DUMP_PEEK);
    assert_null(strstr(dump, "top "));
    assert_non_null(strstr(dump, "count-fop-hits off\n"));
    assert_non_null(strstr(dump, "latency-measurement off\n"));
    assert_null(strstr(dump, "fop ")); /* not profiled: no counters */
    free(dump);
    vl_inode_unref(a);
    t_env_free(e);
}


static void
test_profile_intervals(void **state)
{
    struct t_env *e = t_env_new("    option latency-measurement on\n");
    vl_inode_t *a = t_inode(e, S_IFREG);
    char *dump;

    (void)state;
    assert_int_equal(t_fop(e, VL_FOP_WRITE, a, 4096), 0);
    assert_int_equal(t_fop(e, VL_FOP_WRITE, a, 100), 0);
    assert_int_equal(t_fop(e, VL_FOP_READ, a, 512), 0);
    dump = t_dump(e, IOS_DUMP_INFO);
    assert_non_null(strstr(dump, "latency-measurement on\n"));
    assert_non_null(strstr(dump, "interval 0\n"));
    assert_int_equal(t_fop_field(dump, "now", "WRITE", 0), 2);
    assert_int_equal(t_fop_field(dump, "now", "WRITE", 5), 4196); /* bytes */
    assert_int_equal(t_fop_field(dump, "start", "WRITE", 0), 0);
    assert_int_equal(t_fop_field(dump, "int", "WRITE", 0), 0);
    assert_int_equal(t_fop_field(dump, "now", "READ", 0), 1);
    /* block sizes: 4096 in bucket 12, 100 in 6, the read of 512 in 9 */
    assert_non_null(strstr(dump, "bs now 12 0 1\n"));
    assert_non_null(strstr(dump, "bs now 6 0 1\n"));
    assert_non_null(strstr(dump, "bs now 9 1 0\n"));
    free(dump);
    /* The info started interval 1 at the counters it showed. */
    assert_int_equal(t_fop(e, VL_FOP_WRITE, a, 10), 0);
    dump = t_dump(e, IOS_DUMP_PEEK);
    assert_non_null(strstr(dump, "interval 1\n"));
    assert_int_equal(t_fop_field(dump, "now", "WRITE", 0), 3);
    assert_int_equal(t_fop_field(dump, "int", "WRITE", 0), 2);
    assert_int_equal(t_fop_field(dump, "start", "WRITE", 0), 0);
    assert_non_null(strstr(dump, "bs int 12 0 1\n"));
    free(dump);
    /* A peek does not move the interval; a clear restarts both. */
    dump = t_dump(e, IOS_DUMP_CLEAR);
    assert_non_null(strstr(dump, "interval 1\n"));
    free(dump);
    dump = t_dump(e, IOS_DUMP_PEEK);
    assert_non_null(strstr(dump, "interval 0\n"));
    assert_int_equal(t_fop_field(dump, "start", "WRITE", 0), 3);
    assert_int_equal(t_fop_field(dump, "int", "WRITE", 0), 3);
    free(dump);
    vl_inode_unref(a);
    t_env_free(e);
}


/* Turning latency-measurement on live starts the profile there. */
static void
test_profile_start_live(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *a = t_inode(e, S_IFREG);
    vl_volfile_t *vf;
    vl_err_t err = {{0}};
    char *dump;

    (void)state;
    assert_int_equal(t_fop(e, VL_FOP_WRITE, a, 10), 0);
    static const char text[] = "volume mock\n    type debug/mock\n"
                               "    option auto-answer on\nend-volume\n"
                               "volume ios\n    type debug/io-stats\n"
                               "    option latency-measurement on\n"
                               "    option count-fop-hits on\n"
                               "    subvolumes mock\nend-volume\n";

    vf = vl_volfile_parse(text, sizeof(text) - 1, "test", &err);
    assert_non_null(vf);
    assert_int_equal(vl_graph_reconfigure(e->g->graph, vf, &err), 0);
    vl_volfile_free(vf);
    assert_int_equal(t_fop(e, VL_FOP_WRITE, a, 10), 0);
    dump = t_dump(e, IOS_DUMP_PEEK);
    assert_int_equal(t_fop_field(dump, "now", "WRITE", 0), 2);
    assert_int_equal(t_fop_field(dump, "start", "WRITE", 0), 1);
    assert_non_null(strstr(dump, "top write 1 <gfid:"));
    free(dump);
    vl_inode_unref(a);
    t_env_free(e);
}


/* Every request is answered once when allocations fail: the named
 * lookup's child request, the path, the dump's snapshot. */
static void
test_enomem_answers_once(void **state)
{
    (void)state;
    for (int n = 1; n < 20; n++) {
        struct t_env *e = t_env_new("    option count-fop-hits on\n"
                                    "    option latency-measurement on\n");
        vl_inode_t *root = vl_inode_get(e->g->graph->itable, &vl_gfid_root,
                                        S_IFDIR);
        vl_inode_t *a = t_inode(e, S_IFREG);
        struct vl_test_result res = {0};
        vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        assert_non_null(req);
        assert_non_null(f);
        VL_ARGS(req, lookup)->loc.parent = root;
        VL_ARGS(req, lookup)->loc.name = "a";
        VL_ARGS(req, lookup)->loc.inode = a;
        vl_mem_fail_at(n);
        vl_test_wind(req, &res);
        ios_dump_profile(e->ios, f, IOS_DUMP_INFO);
        vl_mem_fail_at(0);
        fclose(f);
        assert_int_equal(res.n_done, 1);
        assert_true(res.status == 0 || res.status == -ENOMEM);
        assert_non_null(strstr(buf, "latency-measurement on\n"));
        free(buf);
        vl_test_result_clear(&res);
        vl_inode_unref(root);
        vl_inode_unref(a);
        t_env_free(e);
    }
}


static void
test_class(void **state)
{
    vl_err_t err = {{0}};

    (void)state;
    assert_int_equal(vl_test_check_class(&xl_debug_io_stats, &err), 0);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class),
        cmocka_unit_test(test_top_sorted_and_paths),
        cmocka_unit_test(test_top_bounded),
        cmocka_unit_test(test_top_off),
        cmocka_unit_test(test_profile_intervals),
        cmocka_unit_test(test_profile_start_live),
        cmocka_unit_test(test_enomem_answers_once),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
