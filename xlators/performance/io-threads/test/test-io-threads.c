/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-io-threads: performance/io-threads over a leaf that records which
 * thread ran each request and can hold requests behind a gate, so the
 * tests can see how many workers run at once, in which order queued
 * requests leave, and what fini does with requests still queued. A
 * stand-in for pthread_create makes thread starts fail: init fails
 * without a worker, and the pool runs with the workers it got. A closed
 * client's queued requests never reach the leaf.
 *
 * Waits are on conditions with a generous deadline that only turns a hang
 * into a failure; no assertion depends on timing.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "builtin.h"
#include "io-threads.h"
#include "vl-test.h"

#define T_DEADLINE_S 20
#define T_MAX_SEEN 64

/* ---- the gated leaf ---- */

static struct {
    pthread_mutex_t lock;     /* guards everything here */
    pthread_cond_t cond;      /* any change */
    bool is_open;             /* requests pass the gate */
    int in_leaf;              /* requests inside leaf_fop now */
    int max_in_leaf;          /* highest in_leaf seen */
    int n_seen;               /* requests that entered */
    vl_fop_t seen[T_MAX_SEEN]; /* their fops, in order of entry */
    pthread_t tid[T_MAX_SEEN]; /* their threads */
} leaf = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
};

static void
leaf_fop(vl_xlator_t *xl, vl_req_t *req)
{
    pthread_mutex_lock(&leaf.lock);
    if (leaf.n_seen < T_MAX_SEEN) {
        leaf.seen[leaf.n_seen] = req->op;
        leaf.tid[leaf.n_seen] = pthread_self();
    }
    leaf.n_seen++;
    leaf.in_leaf++;
    if (leaf.in_leaf > leaf.max_in_leaf)
        leaf.max_in_leaf = leaf.in_leaf;
    pthread_cond_broadcast(&leaf.cond);
    while (!leaf.is_open)
        pthread_cond_wait(&leaf.cond, &leaf.lock);
    leaf.in_leaf--;
    pthread_cond_broadcast(&leaf.cond);
    pthread_mutex_unlock(&leaf.lock);
    req->reply.count = 42;
    vl_unwind(req, 0);
}

static const vl_option_t leaf_options[] = {VL_OPT_END};

static const vl_xlator_class_t leaf_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/iot-leaf",
    .prefix = "iot-leaf",
    .version = {0, 1, 0},
    .flags = VL_XL_LEAF,
    .options = leaf_options,
    .doc = "Answers every fop with 0 once its gate is open.",
    .fops = {
#define VL_FOP(UPPER, lower, flags) [VL_FOP_##UPPER] = leaf_fop,
#include "vol/fops.def"
#undef VL_FOP
    },
};

/* ---- answers ---- */

static struct {
    pthread_mutex_t lock; /* guards everything here */
    pthread_cond_t cond;  /* an answer arrived */
    int n_ok;             /* answers with status 0 */
    int n_notconn;        /* answers with -ENOTCONN */
    int n_other;          /* any other answer */
} ans = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
};

static void
t_done(vl_req_t *req, void *cookie)
{
    pthread_mutex_lock(&ans.lock);
    if (req->status == 0 && req->reply.count == 42)
        ans.n_ok++;
    else if (req->status == -ENOTCONN)
        ans.n_notconn++;
    else
        ans.n_other++;
    pthread_cond_broadcast(&ans.cond);
    pthread_mutex_unlock(&ans.lock);
}

/* ---- helpers ---- */

struct t_env {
    vl_loop_t *loop;   /* unused by io-threads, needed by the graph */
    vl_graph_t *graph; /* io-threads over the leaf */
};

static void
t_deadline(struct timespec *ts)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += T_DEADLINE_S;
}


/* Options for the next t_start / t_reconfigure: the pool tests turn the
 * inline path off so that every request is queued. */
static const char *t_extra = "    option inline-fast-fops off\n";


static vl_volfile_t *
t_volfile(unsigned threads)
{
    char text[768];
    vl_err_t err = {{0}};
    vl_volfile_t *vf;

    snprintf(text, sizeof(text),
             "volume leaf\n"
             "    type test/iot-leaf\n"
             "end-volume\n"
             "volume iot\n"
             "    type performance/io-threads\n"
             "    option thread-count %u\n"
             "    option idle-time 100ms\n"
             "%s"
             "    subvolumes leaf\n"
             "end-volume\n",
             threads, t_extra);
    vf = vl_volfile_parse(text, strlen(text), "test", &err);
    assert_non_null(vf);
    return vf;
}


static void
t_start(struct t_env *e, unsigned threads)
{
    vl_volfile_t *vf = t_volfile(threads);
    vl_err_t err = {{0}};

    vl_global_init();
    vl_registry_add(&leaf_class);
    vl_registry_add(&xl_performance_io_threads);
    e->loop = vl_loop_new(1);
    assert_non_null(e->loop);
    e->graph = vl_graph_build(vf, e->loop, &err);
    vl_volfile_free(vf);
    assert_non_null(e->graph);
    assert_int_equal(vl_graph_init(e->graph, &err), 0);

    pthread_mutex_lock(&leaf.lock);
    leaf.is_open = true;
    leaf.in_leaf = 0;
    leaf.max_in_leaf = 0;
    leaf.n_seen = 0;
    pthread_cond_broadcast(&leaf.cond); /* frees leftovers of a failure */
    pthread_mutex_unlock(&leaf.lock);
    pthread_mutex_lock(&ans.lock);
    ans.n_ok = ans.n_notconn = ans.n_other = 0;
    pthread_mutex_unlock(&ans.lock);
}


static void
t_stop(struct t_env *e)
{
    if (e->graph != NULL)
        vl_graph_free(e->graph);
    vl_loop_free(e->loop);
}


static void
t_reconfigure(struct t_env *e, unsigned threads)
{
    vl_volfile_t *vf = t_volfile(threads);
    vl_err_t err = {{0}};

    assert_int_equal(vl_graph_reconfigure(e->graph, vf, &err), 0);
    vl_volfile_free(vf);
}


static void
t_wind(struct t_env *e, vl_fop_t op)
{
    vl_req_t *req = vl_req_new(e->graph->top, op);

    assert_non_null(req);
    vl_wind(req, t_done, NULL);
}


static void
t_gate(bool is_open)
{
    pthread_mutex_lock(&leaf.lock);
    leaf.is_open = is_open;
    pthread_cond_broadcast(&leaf.cond);
    pthread_mutex_unlock(&leaf.lock);
}


/* Waits until exactly n requests sit in the leaf. */
static void
t_wait_in_leaf(int n)
{
    struct timespec ts;
    int rc = 0;

    t_deadline(&ts);
    pthread_mutex_lock(&leaf.lock);
    while (leaf.in_leaf != n && rc == 0)
        rc = pthread_cond_timedwait(&leaf.cond, &leaf.lock, &ts);
    pthread_mutex_unlock(&leaf.lock);
    assert_int_equal(rc, 0);
}


/* Waits until ok + notconn + other answers reach these counts. */
static void
t_wait_answers(int ok, int notconn)
{
    struct timespec ts;
    int rc = 0;

    int n_ok, n_notconn, n_other;

    t_deadline(&ts);
    pthread_mutex_lock(&ans.lock);
    while ((ans.n_ok < ok || ans.n_notconn < notconn) && rc == 0)
        rc = pthread_cond_timedwait(&ans.cond, &ans.lock, &ts);
    n_ok = ans.n_ok;
    n_notconn = ans.n_notconn;
    n_other = ans.n_other;
    pthread_mutex_unlock(&ans.lock);
    /* Assert only without the lock: a failure jumps out of the test. */
    assert_int_equal(rc, 0);
    assert_int_equal(n_ok, ok);
    assert_int_equal(n_notconn, notconn);
    assert_int_equal(n_other, 0);
}


static size_t
t_threads(struct t_env *e)
{
    struct iot_priv *priv = e->graph->top->priv;
    size_t n;

    pthread_mutex_lock(&priv->lock);
    n = priv->n_threads;
    pthread_mutex_unlock(&priv->lock);
    return n;
}

/* Returns the highest number of requests seen in the leaf at once, and
 * starts counting again. */
static int
t_take_max_in_leaf(void)
{
    int n;

    pthread_mutex_lock(&leaf.lock);
    n = leaf.max_in_leaf;
    leaf.max_in_leaf = 0;
    pthread_mutex_unlock(&leaf.lock);
    return n;
}


/* Waits until the pool has n threads (exits happen when woken workers
 * get to run). */
static void
t_wait_threads(struct t_env *e, size_t n)
{
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 1000000};

    for (int i = 0; i < T_DEADLINE_S * 1000 && t_threads(e) != n; i++)
        nanosleep(&pause, NULL);
    assert_int_equal(t_threads(e), n);
}

/* ---- tests ---- */

static void
test_requests_run_on_workers(void **state)
{
    struct t_env e = {0};

    t_start(&e, 4);
    t_wind(&e, VL_FOP_LOOKUP);
    t_wind(&e, VL_FOP_WRITE);
    t_wind(&e, VL_FOP_INODELK);
    t_wait_answers(3, 0);
    /* All answered: the leaf's records no longer change. */
    assert_int_equal(leaf.n_seen, 3);
    for (int i = 0; i < 3; i++)
        assert_false(pthread_equal(leaf.tid[i], pthread_self()));
    t_stop(&e);
}


static void
test_pool_bounded_and_reconfigured(void **state)
{
    struct t_env e = {0};

    t_start(&e, 2);
    t_gate(false);
    for (int i = 0; i < 6; i++)
        t_wind(&e, VL_FOP_WRITE);
    t_wait_in_leaf(2);
    assert_int_equal(t_threads(&e), 2);

    /* Growing the pool lets two more queued requests reach the leaf. */
    t_reconfigure(&e, 4);
    t_wait_in_leaf(4);
    t_gate(true);
    t_wait_answers(6, 0);
    assert_int_equal(t_take_max_in_leaf(), 4);

    /* Shrinking: surplus workers exit, one runs at a time afterwards. */
    t_reconfigure(&e, 1);
    t_gate(false);
    for (int i = 0; i < 3; i++)
        t_wind(&e, VL_FOP_READ);
    t_wait_in_leaf(1);
    t_gate(true);
    t_wait_answers(9, 0);
    assert_int_equal(t_take_max_in_leaf(), 1);
    t_wait_threads(&e, 1);
    t_stop(&e);
}


static void
test_priorities_order_queue(void **state)
{
    struct t_env e = {0};

    t_start(&e, 1);
    t_gate(false);
    t_wind(&e, VL_FOP_WRITE); /* occupies the only worker */
    t_wait_in_leaf(1);
    t_wind(&e, VL_FOP_COPY_FILE_RANGE); /* low */
    t_wind(&e, VL_FOP_WRITE);           /* normal */
    t_wind(&e, VL_FOP_LOOKUP);          /* high */
    t_wind(&e, VL_FOP_STAT);            /* high */
    t_gate(true);
    t_wait_answers(5, 0);
    assert_int_equal(leaf.n_seen, 5);
    assert_int_equal(leaf.seen[0], VL_FOP_WRITE);
    assert_int_equal(leaf.seen[1], VL_FOP_LOOKUP);
    assert_int_equal(leaf.seen[2], VL_FOP_STAT);
    assert_int_equal(leaf.seen[3], VL_FOP_WRITE);
    assert_int_equal(leaf.seen[4], VL_FOP_COPY_FILE_RANGE);
    t_stop(&e);
}


static void *
t_free_graph(void *arg)
{
    vl_graph_free(arg);
    return NULL;
}


static void
test_fini_answers_queued(void **state)
{
    struct t_env e = {0};
    pthread_t tid;

    t_start(&e, 1);
    t_gate(false);
    t_wind(&e, VL_FOP_WRITE);
    t_wait_in_leaf(1);
    for (int i = 0; i < 3; i++)
        t_wind(&e, VL_FOP_LOOKUP);

    /* fini waits for the running request, so run it on another thread;
     * the queued ones are answered before that wait. */
    assert_int_equal(pthread_create(&tid, NULL, t_free_graph, e.graph), 0);
    e.graph = NULL;
    t_wait_answers(0, 3);
    t_gate(true);
    t_wait_answers(1, 3);
    pthread_join(tid, NULL);
    t_stop(&e);
}


static void
test_dump_and_prio_table(void **state)
{
    struct t_env e = {0};
    char *text = NULL;
    size_t len = 0;
    FILE *out;

    t_start(&e, 3);
    out = open_memstream(&text, &len);
    assert_non_null(out);
    e.graph->top->cls->dump(e.graph->top, out);
    fclose(out);
    assert_non_null(strstr(text, "threads=1\n"));
    assert_non_null(strstr(text, "max_threads=3\n"));
    assert_non_null(strstr(text, "normal.queued=0\n"));
    assert_non_null(strstr(text, "least.cap=1\n"));
    free(text);
    assert_int_equal(iot_fop_prio(VL_FOP_LOOKUP), IOT_PRIO_HIGH);
    assert_int_equal(iot_fop_prio(VL_FOP_LK), IOT_PRIO_NORMAL);
    assert_int_equal(iot_fop_prio(VL_FOP_COPY_FILE_RANGE), IOT_PRIO_LOW);
    assert_int_equal(iot_fop_prio(VL_FOP_RCHECKSUM), IOT_PRIO_LOW);
    t_stop(&e);
}


/* Over the testlib mock: every request reaches the mock (wound there by
 * workers, since the mock only records), and the mock's answers come back
 * unchanged to the winder. */
static void
test_over_mock(void **state)
{
    static const char text[] =
        "volume mock\n"
        "    type debug/mock\n"
        "end-volume\n"
        "volume iot\n"
        "    type performance/io-threads\n"
        "    option thread-count 3\n"
        "    option inline-fast-fops off\n"
        "    subvolumes mock\n"
        "end-volume\n";
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 1000000};
    struct vl_test_result res[5];
    struct vl_test_graph *g;
    vl_xlator_t *mock;
    vl_err_t err = {{0}};
    size_t n_answered;

    vl_registry_add(&xl_performance_io_threads);
    g = vl_test_graph_new(text, &err);
    if (g == NULL)
        fail_msg("graph: %s", err.msg);
    mock = vl_test_graph_xl(g, "mock");
    memset(res, 0, sizeof(res));
    for (size_t i = 0; i < VL_ARRAY_SIZE(res); i++) {
        vl_req_t *req = vl_req_new(g->graph->top, i % 2 ? VL_FOP_READ
                                                        : VL_FOP_LOOKUP);

        assert_non_null(req);
        vl_test_wind(req, &res[i]);
    }
    for (int i = 0; i < T_DEADLINE_S * 1000 && vl_mock_pending(mock) < 5;
         i++)
        nanosleep(&pause, NULL);
    assert_int_equal(vl_mock_pending(mock), 5);
    assert_int_equal(vl_mock_received_op(mock, VL_FOP_READ), 2);
    n_answered = vl_mock_reply_all(mock, -EROFS);
    assert_int_equal(n_answered, 5);
    for (size_t i = 0; i < VL_ARRAY_SIZE(res); i++) {
        assert_int_equal(res[i].n_done, 1);
        assert_int_equal(res[i].status, -EROFS);
        vl_test_result_clear(&res[i]);
    }
    vl_test_graph_free(g);
}


/* Winds op with a write or read of n bytes (0: the fop's bare args). */
static void
t_wind_io(struct t_env *e, vl_fop_t op, size_t n)
{
    static char data[128 * 1024];
    static struct iovec iov = {.iov_base = data};
    vl_req_t *req = vl_req_new(e->graph->top, op);

    assert_non_null(req);
    if (op == VL_FOP_WRITE) {
        iov.iov_len = n;
        VL_ARGS(req, write)->iov = &iov;
        VL_ARGS(req, write)->n_iov = 1;
    } else if (op == VL_FOP_READ) {
        VL_ARGS(req, read)->size = n;
    } else if (op == VL_FOP_READDIR) {
        VL_ARGS(req, readdir)->size = n;
    }
    vl_wind(req, t_done, NULL);
}


/* Index in leaf.seen of the i-th request; true if it ran on this thread. */
static bool
t_ran_here(int i)
{
    bool here;

    pthread_mutex_lock(&leaf.lock);
    assert_true(i < leaf.n_seen);
    here = pthread_equal(leaf.tid[i], pthread_self());
    pthread_mutex_unlock(&leaf.lock);
    return here;
}


static uint64_t
t_n_inline(struct t_env *e)
{
    struct iot_priv *priv = e->graph->top->priv;

    return atomic_load(&priv->n_inline);
}


/* Default policy: fast fops run on the winding thread (answered before
 * vl_wind returns, the gate being open), slow ones on workers. */
static void
test_fast_fops_inline(void **state)
{
    static const vl_fop_t fast[] = {
        VL_FOP_LOOKUP, VL_FOP_STAT,   VL_FOP_CREATE, VL_FOP_MKDIR,
        VL_FOP_UNLINK, VL_FOP_RENAME, VL_FOP_SETATTR, VL_FOP_FLUSH,
        VL_FOP_OPEN,   VL_FOP_GETXATTR, VL_FOP_INODELK, VL_FOP_ENTRYLK,
        VL_FOP_LK,     VL_FOP_XATTROP,
    };
    struct t_env e = {0};
    int n = 0;

    t_extra = "";
    t_start(&e, 2);
    t_extra = "    option inline-fast-fops off\n";
    for (size_t i = 0; i < VL_ARRAY_SIZE(fast); i++) {
        t_wind(&e, fast[i]);
        assert_true(t_ran_here(n++));
    }
    t_wind_io(&e, VL_FOP_WRITE, 64 * 1024);
    assert_true(t_ran_here(n++));
    t_wind_io(&e, VL_FOP_READ, 4096);
    assert_true(t_ran_here(n++));
    t_wind_io(&e, VL_FOP_READDIR, 4096);
    assert_true(t_ran_here(n++));
    assert_int_equal(t_n_inline(&e), n);
    assert_int_equal(iot_fop_prio(VL_FOP_LOOKUP), IOT_PRIO_HIGH);
    t_wait_answers(n, 0);

    /* Slow ones: answered later, by a worker. */
    t_wind_io(&e, VL_FOP_WRITE, 64 * 1024 + 1);
    t_wind_io(&e, VL_FOP_READ, 128 * 1024);
    t_wind_io(&e, VL_FOP_READDIR, 128 * 1024);
    t_wind(&e, VL_FOP_FSYNC);
    t_wind(&e, VL_FOP_RCHECKSUM);
    t_wind(&e, VL_FOP_FALLOCATE);
    t_wind(&e, VL_FOP_COPY_FILE_RANGE);
    t_wait_answers(n + 7, 0);
    for (int i = n; i < n + 7; i++)
        assert_false(t_ran_here(i));
    assert_int_equal(t_n_inline(&e), n);
    t_stop(&e);
}


/* A gated inline fop holds only its own thread: a slow fop wound from
 * another thread meanwhile still reaches a worker. */
static void *
t_wind_lookup(void *arg)
{
    t_wind(arg, VL_FOP_LOOKUP);
    return NULL;
}


static void
test_inline_blocks_only_caller(void **state)
{
    struct t_env e = {0};
    pthread_t tid;

    t_extra = "";
    t_start(&e, 2);
    t_extra = "    option inline-fast-fops off\n";
    t_gate(false);
    assert_int_equal(pthread_create(&tid, NULL, t_wind_lookup, &e), 0);
    t_wait_in_leaf(1);
    t_wind(&e, VL_FOP_FSYNC);
    t_wait_in_leaf(2);
    t_gate(true);
    pthread_join(tid, NULL);
    t_wait_answers(2, 0);
    assert_int_equal(t_n_inline(&e), 1);
    t_stop(&e);
}


/* Live reconfigure: inline off queues everything; pass-through (by its
 * GlusterFS key) runs even fsync and big writes inline. */
static void
test_inline_reconfigure(void **state)
{
    struct t_env e = {0};

    t_extra = "";
    t_start(&e, 2);
    t_wind(&e, VL_FOP_LOOKUP);
    assert_true(t_ran_here(0));

    t_extra = "    option inline-fast-fops off\n";
    t_reconfigure(&e, 2);
    t_wind(&e, VL_FOP_LOOKUP);
    t_wait_answers(2, 0);
    assert_false(t_ran_here(1));

    t_extra = "    option performance.iot-pass-through on\n";
    t_reconfigure(&e, 2);
    t_wind(&e, VL_FOP_FSYNC);
    assert_true(t_ran_here(2));
    t_wind_io(&e, VL_FOP_WRITE, 128 * 1024);
    assert_true(t_ran_here(3));
    t_wind(&e, VL_FOP_INODELK);
    assert_true(t_ran_here(4));
    t_wait_answers(5, 0);
    assert_int_equal(t_n_inline(&e), 4);
    t_extra = "    option inline-fast-fops off\n";
    t_stop(&e);
}


/* A client's connection closed: its queued requests are answered
 * -ENOTCONN and never reach the leaf; its running one and the other
 * client's queued one finish as usual. */
static void
test_disconnect_drops_queued(void **state)
{
    struct t_env e = {0};
    const uint64_t ids[4] = {7, 7, 8, 7};
    const vl_fop_t ops[4] = {VL_FOP_WRITE, VL_FOP_WRITE, VL_FOP_WRITE,
                             VL_FOP_FSYNC};
    uint64_t gone = 7;
    uint64_t internal = 0;
    char *text = NULL;
    size_t len = 0;
    FILE *out;

    (void)state;
    t_start(&e, 1);
    t_gate(false);
    for (int i = 0; i < 4; i++) {
        vl_req_t *req = vl_req_new(e.graph->top, ops[i]);

        assert_non_null(req);
        req->caller.client_id = ids[i];
        vl_wind(req, t_done, NULL);
        if (i == 0)
            t_wait_in_leaf(1); /* the only worker is busy with it */
    }
    /* Client id 0 (internal requests) is no connection: nothing goes. */
    assert_int_equal(vl_notify(e.graph->top, VL_EV_CLIENT_DISCONNECT,
                               &internal), 0);
    assert_int_equal(vl_notify(e.graph->top, VL_EV_CLIENT_DISCONNECT,
                               &gone), 0);
    t_wait_answers(0, 2);
    t_gate(true);
    t_wait_answers(2, 2);
    assert_int_equal(leaf.n_seen, 2);
    out = open_memstream(&text, &len);
    assert_non_null(out);
    e.graph->top->cls->dump(e.graph->top, out);
    fclose(out);
    assert_non_null(strstr(text, "requests_dropped=2\n"));
    free(text);
    t_stop(&e);
}


/* ---- failed thread starts ---- */

/* Thread starts still allowed before t_create fails (-1: no limit). */
static int t_creates_left = -1;

static int
t_create(pthread_t *tid, const pthread_attr_t *attr, void *(*fn)(void *),
         void *arg)
{
    if (t_creates_left == 0)
        return EAGAIN;
    if (t_creates_left > 0)
        t_creates_left--;
    return pthread_create(tid, attr, fn, arg);
}


/* No worker at all: init fails with the reason and frees what it made
 * (ASan build: no leak). */
static void
test_init_fails_without_worker(void **state)
{
    vl_volfile_t *vf = t_volfile(4);
    vl_err_t err = {{0}};
    vl_loop_t *loop;
    vl_graph_t *graph;

    (void)state;
    vl_global_init();
    vl_registry_add(&leaf_class);
    vl_registry_add(&xl_performance_io_threads);
    loop = vl_loop_new(1);
    assert_non_null(loop);
    graph = vl_graph_build(vf, loop, &err);
    vl_volfile_free(vf);
    assert_non_null(graph);
    iot_thread_create = t_create;
    t_creates_left = 0;
    assert_int_equal(vl_graph_init(graph, &err), -EAGAIN);
    iot_thread_create = pthread_create;
    t_creates_left = -1;
    assert_non_null(strstr(err.msg, "cannot start a worker thread"));
    vl_graph_free(graph);
    vl_loop_free(loop);
}


/* Thread starts fail after init's: the pool runs with its one worker
 * (every request answered, one at a time), and grows again once starts
 * work. */
static void
test_runs_with_workers_it_got(void **state)
{
    struct t_env e = {0};

    (void)state;
    iot_thread_create = t_create;
    t_creates_left = 1;
    t_start(&e, 4);
    assert_int_equal(t_threads(&e), 1);
    t_gate(false);
    for (int i = 0; i < 3; i++)
        t_wind(&e, VL_FOP_WRITE);
    t_wait_in_leaf(1);
    assert_int_equal(t_threads(&e), 1);
    t_gate(true);
    t_wait_answers(3, 0);
    assert_int_equal(t_take_max_in_leaf(), 1);

    t_creates_left = -1;
    t_gate(false);
    t_wind(&e, VL_FOP_WRITE); /* the idle worker */
    t_wind(&e, VL_FOP_WRITE); /* a new one */
    t_wait_in_leaf(2);
    t_gate(true);
    t_wait_answers(5, 0);
    /* It grew again: 2, or 3 when the first worker had answered but not
     * yet gone idle when the writes came (a loaded machine). */
    assert_in_range(t_threads(&e), 2, 3);
    iot_thread_create = pthread_create;
    t_stop(&e);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_run_on_workers),
        cmocka_unit_test(test_pool_bounded_and_reconfigured),
        cmocka_unit_test(test_priorities_order_queue),
        cmocka_unit_test(test_fini_answers_queued),
        cmocka_unit_test(test_dump_and_prio_table),
        cmocka_unit_test(test_over_mock),
        cmocka_unit_test(test_fast_fops_inline),
        cmocka_unit_test(test_inline_blocks_only_caller),
        cmocka_unit_test(test_inline_reconfigure),
        cmocka_unit_test(test_disconnect_drops_queued),
        cmocka_unit_test(test_init_fails_without_worker),
        cmocka_unit_test(test_runs_with_workers_it_got),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
