/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-fop-stats: the per-translator fop counters (vol/fop-stats.h):
 * latency buckets, which translators a passed, child or fanned-out
 * request credits, errors, READ/WRITE bytes, latency measured from
 * reaching the translator, requests never answered, exact counts under
 * threads, and a microbenchmark of the cost per request. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "vl-test.h"

/* ---- test translators ---- */

/* test/st-child: answers each request with the answer of a child request
 * (a request of its own, which credits the translators below). */
static void
st_child_done(vl_req_t *c, void *cookie)
{
    vl_req_t *parent = cookie;

    vl_reply_move(parent, c);
    vl_unwind(parent, c->status);
}


static void
st_child_fop(vl_xlator_t *xl, vl_req_t *req)
{
    vl_req_t *c = vl_req_child(req, VL_FIRST_CHILD(xl));

    if (c == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(c, st_child_done, req);
}


/* test/st-fan: sends a lookup to every child. */
struct st_fan_local {
    vl_fanout_t fan; /* children outstanding */
};


static void
st_fan_done(vl_req_t *c, void *cookie)
{
    vl_req_t *parent = cookie;
    struct st_fan_local *l = VL_REQ_PRIV(parent, struct st_fan_local);

    if (vl_fanout_arrive(&l->fan, c->status))
        vl_unwind(parent, vl_fanout_status(&l->fan));
}


static void
st_fan_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    struct st_fan_local *l = VL_REQ_PRIV(req, struct st_fan_local);
    size_t i;

    vl_fanout_begin(&l->fan, (int)xl->n_children);
    for (i = 0; i < xl->n_children; i++) {
        vl_req_t *c = vl_req_child(req, xl->children[i]);

        if (c == NULL) {
            if (vl_fanout_arrive(&l->fan, -ENOMEM))
                vl_unwind(req, vl_fanout_status(&l->fan));
            continue;
        }
        vl_wind(c, st_fan_done, req);
    }
}


static const vl_xlator_class_t cls_st_pass = {
    .abi = VL_XLATOR_ABI, .type = "test/st-pass", .flags = VL_XL_ONE_CHILD,
};
static const vl_xlator_class_t cls_st_child = {
    .abi = VL_XLATOR_ABI, .type = "test/st-child", .flags = VL_XL_ONE_CHILD,
    .fops = {[VL_FOP_LOOKUP] = st_child_fop, [VL_FOP_READ] = st_child_fop},
};
static const vl_xlator_class_t cls_st_fan = {
    .abi = VL_XLATOR_ABI, .type = "test/st-fan",
    .flags = VL_XL_MANY_CHILDREN,
    .req_priv_size = sizeof(struct st_fan_local),
    .fops = {[VL_FOP_LOOKUP] = st_fan_lookup},
};


static int
setup(void **state)
{
    vl_global_init();
    vl_log_set_level(VL_LOG_CRITICAL);
    assert_int_equal(vl_registry_add(&cls_st_pass), 0);
    assert_int_equal(vl_registry_add(&cls_st_child), 0);
    assert_int_equal(vl_registry_add(&cls_st_fan), 0);
    return 0;
}


static struct vl_test_graph *
graph_new(const char *text)
{
    vl_err_t err = {{0}};
    struct vl_test_graph *g = vl_test_graph_new(text, &err);

    if (g == NULL)
        fail_msg("graph: %s", err.msg);
    return g;
}


static vl_fop_stats_t
stats_of(struct vl_test_graph *g, const char *name, vl_fop_t op)
{
    vl_fop_stats_t st;

    vl_fop_stats_read(vl_test_graph_xl(g, name), op, &st);
    return st;
}


static uint64_t
bucket_sum(const vl_fop_stats_t *st)
{
    uint64_t n = 0;
    unsigned k;

    for (k = 0; k < VL_LAT_BUCKETS; k++)
        n += st->lat_bucket[k];
    return n;
}


/* Winds op into g's top and answers it at mock m with status. */
static void
wind_and_answer(struct vl_test_graph *g, const char *m, vl_fop_t op,
                int status)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(g->graph->top, op);

    assert_non_null(req);
    vl_test_wind(req, &res);
    assert_int_equal(vl_mock_reply_all(vl_test_graph_xl(g, m), status), 1);
    assert_int_equal(res.n_done, 1);
    vl_test_result_clear(&res);
}


static void
test_buckets(void **state)
{
    assert_int_equal(vl_lat_bucket(0), 0);
    assert_int_equal(vl_lat_bucket(999), 0);
    assert_int_equal(vl_lat_bucket(1000), 1);
    assert_int_equal(vl_lat_bucket(1999), 1);
    assert_int_equal(vl_lat_bucket(2000), 2);
    assert_int_equal(vl_lat_bucket(1023999), 10);
    assert_int_equal(vl_lat_bucket(1024000), 11);
    assert_int_equal(vl_lat_bucket((1ULL << 22) * 1000 - 1), 22);
    assert_int_equal(vl_lat_bucket((1ULL << 22) * 1000), 23);
    assert_int_equal(vl_lat_bucket(UINT64_MAX), 23);
    assert_true(vl_lat_bucket_le_ns(0) == 1000);
    assert_true(vl_lat_bucket_le_ns(10) == 1024000);
    assert_true(vl_lat_bucket_le_ns(22) == (1ULL << 22) * 1000);
    assert_true(vl_lat_bucket_le_ns(23) == UINT64_MAX);
}


static void
test_pass_credits_every_translator(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\nend-volume\n"
        "volume p1\n type test/st-pass\n subvolumes m\nend-volume\n"
        "volume p2\n type test/st-pass\n subvolumes p1\nend-volume\n");
    const char *names[] = {"p2", "p1", "m"};
    vl_fop_stats_t st;
    size_t i;

    /* Nothing yet: zeroes and the empty min. */
    st = stats_of(g, "p1", VL_FOP_STAT);
    assert_true(st.calls == 0 && st.lat_sum_ns == 0 && st.lat_max_ns == 0);
    assert_true(st.lat_min_ns == UINT64_MAX);
    wind_and_answer(g, "m", VL_FOP_STAT, 0);
    wind_and_answer(g, "m", VL_FOP_STAT, -EIO);
    for (i = 0; i < 3; i++) {
        st = stats_of(g, names[i], VL_FOP_STAT);
        assert_int_equal(st.calls, 2);
        assert_int_equal(st.errors, 1);
        assert_int_equal(bucket_sum(&st), 2);
        assert_true(st.lat_min_ns <= st.lat_max_ns);
        assert_true(st.lat_sum_ns >= st.lat_max_ns);
        assert_int_equal(st.bytes, 0);
        /* Another fop is untouched. */
        st = stats_of(g, names[i], VL_FOP_LOOKUP);
        assert_int_equal(st.calls, 0);
    }
    /* An op out of range reads as zeroes. */
    vl_fop_stats_read(vl_test_graph_xl(g, "m"), VL_FOP_COUNT, &st);
    assert_int_equal(st.calls, 0);
    assert_true(st.lat_min_ns == UINT64_MAX);
    assert_int_equal(vl_fop_stats_unrecorded(), 0);
    vl_test_graph_free(g);
}


static void
test_child_request_credits_once(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\nend-volume\n"
        "volume c\n type test/st-child\n subvolumes m\nend-volume\n"
        "volume p\n type test/st-pass\n subvolumes c\nend-volume\n");

    wind_and_answer(g, "m", VL_FOP_LOOKUP, -ENOENT);
    /* p and c by the request, m by c's child request: once each. */
    assert_int_equal(stats_of(g, "p", VL_FOP_LOOKUP).calls, 1);
    assert_int_equal(stats_of(g, "c", VL_FOP_LOOKUP).calls, 1);
    assert_int_equal(stats_of(g, "m", VL_FOP_LOOKUP).calls, 1);
    assert_int_equal(stats_of(g, "c", VL_FOP_LOOKUP).errors, 1);
    assert_int_equal(stats_of(g, "m", VL_FOP_LOOKUP).errors, 1);
    vl_test_graph_free(g);
}


static void
test_fanout_credits_each_child(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m1\n type debug/mock\nend-volume\n"
        "volume m2\n type debug/mock\nend-volume\n"
        "volume f\n type test/st-fan\n subvolumes m1 m2\nend-volume\n");
    struct vl_test_result res = {0};

    vl_test_wind(vl_req_new(g->graph->top, VL_FOP_LOOKUP), &res);
    assert_int_equal(vl_mock_reply_all(vl_test_graph_xl(g, "m1"), 0), 1);
    assert_int_equal(stats_of(g, "m1", VL_FOP_LOOKUP).calls, 1);
    /* f is not answered yet, so not counted yet. */
    assert_int_equal(stats_of(g, "f", VL_FOP_LOOKUP).calls, 0);
    assert_int_equal(vl_mock_reply_all(vl_test_graph_xl(g, "m2"), -EIO), 1);
    assert_int_equal(res.status, -EIO);
    assert_int_equal(stats_of(g, "f", VL_FOP_LOOKUP).calls, 1);
    assert_int_equal(stats_of(g, "f", VL_FOP_LOOKUP).errors, 1);
    assert_int_equal(stats_of(g, "m2", VL_FOP_LOOKUP).errors, 1);
    assert_int_equal(stats_of(g, "m1", VL_FOP_LOOKUP).errors, 0);
    vl_test_result_clear(&res);
    vl_test_graph_free(g);
}


static void
test_read_write_bytes(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\nend-volume\n"
        "volume c\n type test/st-child\n subvolumes m\nend-volume\n");
    vl_xlator_t *m = vl_test_graph_xl(g, "m");
    struct vl_test_result res = {0};
    static char data[3000];
    struct iovec iov[2] = {{data, 1000}, {data + 1000, 2000}};
    vl_req_t *req;
    vl_req_t *r;

    /* READ: the bytes answered, only when it succeeds. */
    req = vl_req_new(g->graph->top, VL_FOP_READ);
    VL_ARGS(req, read)->size = 8192;
    vl_test_wind(req, &res);
    r = vl_mock_pop(m);
    r->reply.count = 4096;
    vl_unwind(r, 0);
    vl_test_result_clear(&res);
    req = vl_req_new(g->graph->top, VL_FOP_READ);
    vl_test_wind(req, &res);
    r = vl_mock_pop(m);
    r->reply.count = 777; /* ignored: the read failed */
    vl_unwind(r, -EIO);
    vl_test_result_clear(&res);
    assert_int_equal(stats_of(g, "m", VL_FOP_READ).bytes, 4096);
    assert_int_equal(stats_of(g, "c", VL_FOP_READ).bytes, 4096);

    /* WRITE: the bytes asked, whatever the answer. c passes writes (empty
     * slot). */
    req = vl_req_new(g->graph->top, VL_FOP_WRITE);
    VL_ARGS(req, write)->iov = iov;
    VL_ARGS(req, write)->n_iov = 2;
    vl_test_wind(req, &res);
    assert_int_equal(vl_mock_reply_all(m, -ENOSPC), 1);
    vl_test_result_clear(&res);
    assert_int_equal(stats_of(g, "m", VL_FOP_WRITE).bytes, 3000);
    assert_int_equal(stats_of(g, "c", VL_FOP_WRITE).bytes, 3000);
    assert_int_equal(stats_of(g, "c", VL_FOP_WRITE).errors, 1);
    vl_test_graph_free(g);
}


static void
test_latency_from_reaching(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\nend-volume\n"
        "volume c\n type test/st-child\n subvolumes m\nend-volume\n");
    vl_xlator_t *m = vl_test_graph_xl(g, "m");
    struct vl_test_result res = {0};
    struct timespec ts = {0, 3 * 1000 * 1000};
    vl_fop_stats_t st;
    vl_req_t *req;

    /* A request made 3 ms before it is wound: its latency starts at the
     * wind, not at vl_req_new. */
    req = vl_req_new(g->graph->top, VL_FOP_LOOKUP);
    nanosleep(&ts, NULL);
    vl_test_wind(req, &res);
    /* Held 3 ms at the mock: at least that in both, in bucket >= 12
     * (2.048 ms to 4.096 ms and up). */
    nanosleep(&ts, NULL);
    assert_int_equal(vl_mock_reply_all(m, 0), 1);
    vl_test_result_clear(&res);
    st = stats_of(g, "c", VL_FOP_LOOKUP);
    assert_true(st.lat_min_ns >= 3000000);
    assert_true(st.lat_min_ns == st.lat_max_ns);
    assert_true(st.lat_sum_ns == st.lat_max_ns);
    assert_int_equal(st.lat_bucket[vl_lat_bucket(st.lat_max_ns)], 1);
    assert_true(vl_lat_bucket(st.lat_max_ns) >= 12);
    st = stats_of(g, "m", VL_FOP_LOOKUP);
    assert_true(st.lat_max_ns >= 3000000);
    assert_true(st.lat_max_ns <= stats_of(g, "c", VL_FOP_LOOKUP).lat_max_ns);
    vl_test_graph_free(g);
}


static void
test_unanswered_not_counted(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\nend-volume\n"
        "volume p\n type test/st-pass\n subvolumes m\nend-volume\n");
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(g->graph->top, VL_FOP_OPEN);

    vl_req_free_unwound(req);
    vl_test_wind(vl_req_new(g->graph->top, VL_FOP_OPEN), &res);
    assert_int_equal(stats_of(g, "p", VL_FOP_OPEN).calls, 0);
    assert_int_equal(stats_of(g, "m", VL_FOP_OPEN).calls, 0);
    vl_test_graph_free(g); /* answers the pending one -ECANCELED */
    vl_test_result_clear(&res);
}


#define MT_THREADS 4
#define MT_REQS 5000

static atomic_int mt_done; /* answers seen */


static void
mt_done_cb(vl_req_t *req, void *cookie)
{
    atomic_fetch_add(&mt_done, 1);
}


static void *
mt_winder(void *arg)
{
    vl_xlator_t *top = arg;
    int i;

    for (i = 0; i < MT_REQS; i++) {
        vl_req_t *req = vl_req_new(top, VL_FOP_FSYNC);

        if (req != NULL)
            vl_wind(req, mt_done_cb, NULL);
    }
    return NULL;
}


static void
test_threads_exact(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\n option auto-answer on\n"
        " option auto-status -5\nend-volume\n"
        "volume p1\n type test/st-pass\n subvolumes m\nend-volume\n"
        "volume p2\n type test/st-pass\n subvolumes p1\nend-volume\n");
    pthread_t t[MT_THREADS];
    vl_fop_stats_t st;
    int i;

    atomic_store(&mt_done, 0);
    for (i = 0; i < MT_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, mt_winder,
                                        g->graph->top), 0);
    for (i = 0; i < MT_THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&mt_done), MT_THREADS * MT_REQS);
    st = stats_of(g, "p2", VL_FOP_FSYNC);
    assert_int_equal(st.calls, MT_THREADS * MT_REQS);
    assert_int_equal(st.errors, MT_THREADS * MT_REQS);
    assert_int_equal(bucket_sum(&st), MT_THREADS * MT_REQS);
    assert_int_equal(stats_of(g, "m", VL_FOP_FSYNC).calls,
                     MT_THREADS * MT_REQS);
    vl_test_graph_free(g);
}


/* Not a check: prints the cost of a request through five translators
 * (four passes to an auto-answering mock), the figure doc/architecture.md
 * quotes. */
static void
test_bench(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\n option auto-answer on\nend-volume\n"
        "volume p1\n type test/st-pass\n subvolumes m\nend-volume\n"
        "volume p2\n type test/st-pass\n subvolumes p1\nend-volume\n"
        "volume p3\n type test/st-pass\n subvolumes p2\nend-volume\n"
        "volume p4\n type test/st-pass\n subvolumes p3\nend-volume\n");
    struct timespec a;
    struct timespec b;
    const int n = 200000;
    int i;

    atomic_store(&mt_done, 0);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (i = 0; i < n; i++)
        vl_wind(vl_req_new(g->graph->top, VL_FOP_STAT), mt_done_cb, NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_int_equal(atomic_load(&mt_done), n);
    assert_int_equal(stats_of(g, "p4", VL_FOP_STAT).calls, n);
    printf("# fop-stats bench: %.0f ns per request through 5 "
           "translators\n",
           ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec -
                                                          a.tv_nsec)) / n);
    vl_test_graph_free(g);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_pass_credits_every_translator),
        cmocka_unit_test(test_child_request_credits_once),
        cmocka_unit_test(test_fanout_credits_each_child),
        cmocka_unit_test(test_read_write_bytes),
        cmocka_unit_test(test_latency_from_reaching),
        cmocka_unit_test(test_unanswered_not_counted),
        cmocka_unit_test(test_threads_exact),
        cmocka_unit_test(test_bench),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, setup, NULL);
}
