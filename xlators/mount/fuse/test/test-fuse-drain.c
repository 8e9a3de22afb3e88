/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-fuse-drain: the pin of the active graph and the drain of an old
 * one (fuse-reader.c, fuse-session.c), with no mount. The graph is
 * mount/fuse (conf parsed, init not run) over debug/mock, which holds
 * every request until the test answers it; the session is made by hand
 * (as tests/fuzz/fuzz-fuse.c makes one) and its /dev/fuse is a pipe, so
 * the test reads every reply. Checks: a call pins the instance until it
 * ends; a drain unpublishes the instance at once and then waits for the
 * call still in flight, which ends it; a message read meanwhile is
 * answered ENOTCONN without pinning; every message gets exactly one
 * reply; a drain with nothing in flight returns at once; an aborted
 * unbounded drain stops waiting.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "builtin.h"
#include "fuse.h"
#include "vl-test.h"

/* How long the test gives a drain it expects to be blocked. */
#define T_BLOCKED_MS 100
/* How long it waits for something it expects to happen. */
#define T_WAIT_MS 5000

static const char t_volfile[] =
    "volume m\n"
    "    type debug/mock\n"
    "end-volume\n"
    "volume top\n"
    "    type mount/fuse\n"
    "    option mountpoint /nonexistent/test-fuse-drain\n"
    "    subvolumes m\n"
    "end-volume\n";

struct t_env {
    vl_loop_t *loop;            /* owned */
    vl_graph_t *graph;          /* owned; built, init not run */
    vl_xlator_t *mock;          /* borrowed; its init and fini run here */
    struct vfuse_session sess;  /* hand-made; fuse_fd is the pipe's
                                   write end */
    struct vfuse_priv priv;     /* the graph's mount/fuse instance */
    struct vfuse_reader r;      /* the test thread plays the reader */
    int rfd;                    /* the pipe's read end: "the kernel" */
    uint64_t unique;            /* of the last message sent */
    pthread_t drainer;          /* runs t_drain_main */
    atomic_bool is_drained;     /* vfuse_session_drain returned */
};


static void *
t_drain_main(void *arg)
{
    struct t_env *e = arg;

    vfuse_session_drain(&e->priv, false);
    atomic_store(&e->is_drained, true);
    return NULL;
}


static uint64_t
t_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}


/* True once flag is set, false if it is not within ms. */
static bool
t_wait_flag(atomic_bool *flag, uint64_t ms)
{
    uint64_t until = t_now_ms() + ms;

    while (!atomic_load(flag)) {
        if (t_now_ms() >= until)
            return false;
        usleep(1000);
    }
    return true;
}


/* The session's active instance, as a reader would see it now. */
static struct vfuse_priv *
t_active(struct t_env *e)
{
    return __atomic_load_n(&e->sess.active, __ATOMIC_SEQ_CST);
}


/* Sends GETATTR of the root (pid 0: no groups read) through the reader
 * path; returns its unique. */
static uint64_t
t_send_getattr(struct t_env *e)
{
    struct fuse_in_header hdr;
    struct fuse_getattr_in in;

    memset(&hdr, 0, sizeof(hdr));
    memset(&in, 0, sizeof(in));
    hdr.len = sizeof(hdr) + sizeof(in);
    hdr.opcode = FUSE_GETATTR;
    hdr.unique = ++e->unique;
    hdr.nodeid = FUSE_ROOT_ID;
    memcpy(e->r.buf->data, &hdr, sizeof(hdr));
    memcpy(e->r.buf->data + sizeof(hdr), &in, sizeof(in));
    vfuse_process(&e->r, hdr.len);
    return hdr.unique;
}


/* The next reply "the kernel" got: its unique and error; false if there
 * is none. */
static bool
t_read_reply(struct t_env *e, uint64_t *unique /* OUT */,
             int32_t *error /* OUT */)
{
    char buf[4096];
    struct fuse_out_header out;
    struct pollfd pfd = {.fd = e->rfd, .events = POLLIN};
    ssize_t n;

    if (poll(&pfd, 1, 0) != 1)
        return false;
    n = read(e->rfd, buf, sizeof(buf));
    assert_true(n >= (ssize_t)sizeof(out));
    memcpy(&out, buf, sizeof(out));
    assert_int_equal(out.len, n);
    *unique = out.unique;
    *error = out.error;
    return true;
}


static int
t_setup(void **state)
{
    struct t_env *e = calloc(1, sizeof(*e));
    vl_err_t err = {{0}};
    vl_volfile_t *vf;
    int p[2];

    assert_non_null(e);
    vf = vl_volfile_parse(t_volfile, sizeof(t_volfile) - 1, "test", &err);
    assert_non_null(vf);
    e->loop = vl_loop_new(1);
    assert_non_null(e->loop);
    assert_int_equal(vl_loop_start(e->loop), 0);
    e->graph = vl_graph_build(vf, e->loop, &err);
    vl_volfile_free(vf);
    assert_non_null(e->graph);
    for (size_t i = 0; i < e->graph->n_xls; i++)
        if (strcmp(e->graph->xls[i]->name, "m") == 0)
            e->mock = e->graph->xls[i];
    assert_non_null(e->mock);
    assert_int_equal(e->mock->cls->init(e->mock, &err), 0);

    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    e->rfd = p[0];
    e->sess.fuse_fd = p[1];
    pthread_mutex_init(&e->sess.lock, NULL);
    pthread_cond_init(&e->sess.cond, NULL);
    assert_int_equal(vfuse_table_init(&e->sess.table), 0);
    vfuse_groups_init(&e->sess.groups);
    e->sess.buf_size = 4096 + VFUSE_HDR_ROOM;
    e->sess.active = &e->priv;
    e->sess.n_attached = 1;
    e->sess.is_init_done = true;
    e->sess.proto_minor = VFUSE_MINOR;
    e->sess.max_write = 128 * 1024;
    e->priv.xl = e->graph->top;
    e->priv.sess = &e->sess;
    e->priv.gen = e->graph->id;
    e->priv.root = vl_inode_table_root(e->graph->itable);
    assert_non_null(e->priv.root);
    pthread_mutex_init(&e->priv.lock, NULL);
    pthread_cond_init(&e->priv.cond, NULL);
    e->graph->top->priv = &e->priv;
    e->r.sess = &e->sess;
    e->r.buf = vl_buf_new(e->sess.buf_size);
    assert_non_null(e->r.buf);
    *state = e;
    return 0;
}


static int
t_teardown(void **state)
{
    struct t_env *e = *state;

    /* Whatever a test left waiting in the mock ends (and unpins). */
    vl_mock_reply_all(e->mock, -ECANCELED);
    assert_int_equal(atomic_load(&e->priv.n_inflight), 0);
    vl_buf_unref(e->r.buf);
    e->graph->top->priv = NULL;
    vl_inode_unref(e->priv.root);
    vfuse_pool_clear(&e->sess);
    vfuse_table_clear(&e->sess.table);
    vfuse_groups_fini(&e->sess.groups);
    close(e->sess.fuse_fd);
    close(e->rfd);
    pthread_cond_destroy(&e->priv.cond);
    pthread_mutex_destroy(&e->priv.lock);
    pthread_cond_destroy(&e->sess.cond);
    pthread_mutex_destroy(&e->sess.lock);
    e->mock->cls->fini(e->mock);
    vl_graph_free(e->graph);
    vl_loop_free(e->loop);
    free(e);
    return 0;
}


static void
test_pin_until_answered(void **state)
{
    struct t_env *e = *state;
    uint64_t unique;
    uint64_t got;
    int32_t error;

    unique = t_send_getattr(e);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    assert_int_equal(atomic_load(&e->priv.n_inflight), 1);
    assert_false(t_read_reply(e, &got, &error));

    assert_int_equal(vl_mock_reply_all(e->mock, -EIO), 1);
    assert_int_equal(atomic_load(&e->priv.n_inflight), 0);
    assert_true(t_read_reply(e, &got, &error));
    assert_int_equal(got, unique);
    assert_int_equal(error, -EIO);
    assert_false(t_read_reply(e, &got, &error));
}


static void
test_drain_waits_for_call(void **state)
{
    struct t_env *e = *state;
    uint64_t in_flight;
    uint64_t late;
    uint64_t got;
    int32_t error;
    uint64_t until;

    in_flight = t_send_getattr(e);
    assert_int_equal(atomic_load(&e->priv.n_inflight), 1);
    assert_int_equal(pthread_create(&e->drainer, NULL, t_drain_main, e), 0);

    /* Unpublished at once; still waiting for the call. */
    until = t_now_ms() + T_WAIT_MS;
    while (t_active(e) != NULL && t_now_ms() < until)
        usleep(1000);
    assert_null(t_active(e));
    assert_false(t_wait_flag(&e->is_drained, T_BLOCKED_MS));

    /* A message read now finds no graph: ENOTCONN, no pin. */
    late = t_send_getattr(e);
    assert_true(t_read_reply(e, &got, &error));
    assert_int_equal(got, late);
    assert_int_equal(error, -ENOTCONN);
    assert_int_equal(atomic_load(&e->priv.n_inflight), 1);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    assert_false(atomic_load(&e->is_drained));

    /* The call's end ends the drain, and the call is answered once. */
    assert_int_equal(vl_mock_reply_all(e->mock, -EIO), 1);
    assert_true(t_wait_flag(&e->is_drained, T_WAIT_MS));
    assert_int_equal(pthread_join(e->drainer, NULL), 0);
    assert_int_equal(atomic_load(&e->priv.n_inflight), 0);
    assert_true(t_read_reply(e, &got, &error));
    assert_int_equal(got, in_flight);
    assert_int_equal(error, -EIO);
    assert_false(t_read_reply(e, &got, &error));
}


static void
test_drain_idle_returns(void **state)
{
    struct t_env *e = *state;

    vfuse_session_drain(&e->priv, false);
    assert_null(t_active(e));
    assert_int_equal(atomic_load(&e->priv.n_inflight), 0);
    vfuse_session_drain(&e->priv, true); /* twice, as teardown does */
    assert_null(t_active(e));
}


static void
test_drain_abort(void **state)
{
    struct t_env *e = *state;
    uint64_t got;
    int32_t error;

    t_send_getattr(e);
    assert_int_equal(pthread_create(&e->drainer, NULL, t_drain_main, e), 0);
    assert_false(t_wait_flag(&e->is_drained, T_BLOCKED_MS));

    /* What vfuse_switch_abort_waits does to each session. */
    pthread_mutex_lock(&e->sess.lock);
    e->sess.is_abort = true;
    pthread_cond_broadcast(&e->sess.cond);
    pthread_mutex_unlock(&e->sess.lock);
    assert_true(t_wait_flag(&e->is_drained, T_WAIT_MS));
    assert_int_equal(pthread_join(e->drainer, NULL), 0);
    assert_int_equal(atomic_load(&e->priv.n_inflight), 1);

    /* The call still ends normally, and once. */
    assert_int_equal(vl_mock_reply_all(e->mock, -EIO), 1);
    assert_int_equal(atomic_load(&e->priv.n_inflight), 0);
    assert_true(t_read_reply(e, &got, &error));
    assert_int_equal(error, -EIO);
    assert_false(t_read_reply(e, &got, &error));
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pin_until_answered, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_drain_waits_for_call, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_drain_idle_returns, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_drain_abort, t_setup,
                                        t_teardown),
    };

    vl_global_init();
    vl_log_set_level(VL_LOG_NONE);
    if (vl_registry_add(&xl_mount_fuse) != 0 || vl_test_register_mock() != 0)
        return 1;
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
