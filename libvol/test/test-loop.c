/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-loop: io callbacks (one-shot, re-arm, delete from inside and from
 * outside; edge-triggered ones that need no re-arm and may run on two
 * threads at once), timers (order, cancel), post, and several threads. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "vol/vol.h"

struct io_state {
    int n_calls;      /* callback runs */
    uint32_t events;  /* last events */
    bool is_delete;   /* delete io from inside the callback */
    bool is_rearm;    /* re-arm after each call */
    char last;        /* last byte read */
};


static void
io_cb(vl_io_t *io, int fd, uint32_t events, void *arg)
{
    struct io_state *s = arg;

    s->n_calls++;
    s->events = events;
    if (events & EPOLLIN)
        if (read(fd, &s->last, 1) != 1)
            s->last = 0;
    if (s->is_delete)
        vl_io_del(io);
    else if (s->is_rearm)
        vl_io_modify(io, EPOLLIN);
}


static void
test_io_oneshot(void **state)
{
    vl_loop_t *loop = vl_loop_new(0);
    struct io_state s = {0};
    vl_io_t *io;
    int sv[2];

    assert_non_null(loop);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(vl_io_add(loop, sv[0], EPOLLIN, io_cb, &s, &io), 0);
    assert_int_equal(vl_loop_run_once(loop, 0), 0);
    assert_int_equal(write(sv[1], "ab", 2), 2);
    assert_int_equal(vl_loop_run_once(loop, 1000), 1);
    assert_int_equal(s.n_calls, 1);
    assert_int_equal(s.last, 'a');
    /* One-shot: disarmed although 'b' is still there. */
    assert_int_equal(vl_loop_run_once(loop, 0), 0);
    assert_int_equal(vl_io_modify(io, EPOLLIN), 0);
    assert_int_equal(vl_loop_run_once(loop, 1000), 1);
    assert_int_equal(s.last, 'b');
    /* Delete from inside the callback. */
    s.is_delete = true;
    assert_int_equal(vl_io_modify(io, EPOLLIN), 0);
    assert_int_equal(write(sv[1], "c", 1), 1);
    assert_int_equal(vl_loop_run_once(loop, 1000), 1);
    assert_int_equal(s.n_calls, 3);
    assert_int_equal(write(sv[1], "d", 1), 1);
    assert_int_equal(vl_loop_run_once(loop, 0), 0);
    /* HUP is reported. */
    s = (struct io_state){0};
    assert_int_equal(vl_io_add(loop, sv[0], EPOLLIN, io_cb, &s, &io), 0);
    close(sv[1]);
    assert_int_equal(vl_loop_run_once(loop, 1000), 1);
    assert_true(s.events & (EPOLLHUP | EPOLLRDHUP | EPOLLIN));
    vl_io_del(io);
    close(sv[0]);
    vl_loop_free(loop);
}


/* EPOLLET: no one-shot; every new arrival raises an event without any
 * vl_io_modify (rpc connections use this to save an epoll_ctl per
 * record). */
static void
test_io_edge(void **state)
{
    vl_loop_t *loop = vl_loop_new(0);
    struct io_state s = {0};
    vl_io_t *io;
    int sv[2];

    assert_non_null(loop);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(vl_io_add(loop, sv[0], EPOLLIN | EPOLLET, io_cb, &s,
                               &io), 0);
    assert_int_equal(write(sv[1], "ab", 2), 2);
    assert_int_equal(vl_loop_run_once(loop, 1000), 1);
    assert_int_equal(s.last, 'a');
    /* Edge: 'b' is still there but nothing new came. */
    assert_int_equal(vl_loop_run_once(loop, 0), 0);
    /* Something new: an event, with no re-arm. */
    assert_int_equal(write(sv[1], "c", 1), 1);
    assert_int_equal(vl_loop_run_once(loop, 1000), 1);
    assert_int_equal(s.last, 'b');
    assert_int_equal(write(sv[1], "d", 1), 1);
    assert_int_equal(vl_loop_run_once(loop, 1000), 1);
    assert_int_equal(s.n_calls, 3);
    /* Delete from inside the callback. */
    s.is_delete = true;
    assert_int_equal(write(sv[1], "e", 1), 1);
    assert_int_equal(vl_loop_run_once(loop, 1000), 1);
    assert_int_equal(s.n_calls, 4);
    assert_int_equal(write(sv[1], "f", 1), 1);
    assert_int_equal(vl_loop_run_once(loop, 0), 0);
    close(sv[0]);
    close(sv[1]);
    vl_loop_free(loop);
}


struct edge_mt {
    atomic_int n_inside;  /* callbacks running now */
    atomic_int n_max;     /* most at once */
    atomic_int n_calls;   /* callbacks run */
};


static void
edge_slow_cb(vl_io_t *io, int fd, uint32_t events, void *arg)
{
    struct edge_mt *m = arg;
    int now = atomic_fetch_add(&m->n_inside, 1) + 1;
    int max = atomic_load(&m->n_max);
    char c;

    (void)io;
    (void)events;
    while (now > max && !atomic_compare_exchange_weak(&m->n_max, &max, now))
        ;
    if (read(fd, &c, 1) != 1)
        c = 0;
    usleep(50 * 1000);
    atomic_fetch_add(&m->n_calls, 1);
    atomic_fetch_sub(&m->n_inside, 1);
}


/* An edge-triggered callback may run on two threads at once; vl_io_del
 * from outside returns only after every run has ended. */
static void
test_io_edge_threads(void **state)
{
    vl_loop_t *loop = vl_loop_new(2);
    struct edge_mt m;
    vl_io_t *io;
    int sv[2];

    atomic_init(&m.n_inside, 0);
    atomic_init(&m.n_max, 0);
    atomic_init(&m.n_calls, 0);
    assert_non_null(loop);
    assert_int_equal(vl_loop_start(loop), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(vl_io_add(loop, sv[0], EPOLLIN | EPOLLET,
                               edge_slow_cb, &m, &io), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(write(sv[1], "x", 1), 1);
        usleep(10 * 1000);
    }
    for (int i = 0; i < 500 && atomic_load(&m.n_calls) < 2; i++)
        usleep(10 * 1000);
    assert_true(atomic_load(&m.n_calls) >= 2);
    vl_io_del(io);
    assert_int_equal(atomic_load(&m.n_inside), 0);
    assert_true(atomic_load(&m.n_max) >= 1 && atomic_load(&m.n_max) <= 2);
    vl_loop_stop(loop);
    vl_loop_free(loop);
    close(sv[0]);
    close(sv[1]);
}


static int order[8];
static int n_order;


static void
timer_cb(void *arg)
{
    order[n_order++] = (int)(intptr_t)arg;
}


static void
test_timers(void **state)
{
    vl_loop_t *loop = vl_loop_new(0);
    vl_timer_t *t3;
    vl_timer_t *t9;
    int spins = 0;

    n_order = 0;
    assert_non_null(vl_timer_add(loop, 30, timer_cb, (void *)1));
    assert_non_null(vl_timer_add(loop, 10, timer_cb, (void *)2));
    t3 = vl_timer_add(loop, 20, timer_cb, (void *)3);
    assert_non_null(vl_timer_add(loop, 0, timer_cb, (void *)4));
    t9 = vl_timer_add(loop, 60000, timer_cb, (void *)9);
    assert_true(vl_timer_cancel(t3));
    while (n_order < 3 && spins++ < 1000)
        vl_loop_run_once(loop, 100);
    assert_int_equal(n_order, 3);
    assert_int_equal(order[0], 4);
    assert_int_equal(order[1], 2);
    assert_int_equal(order[2], 1);
    assert_int_equal(vl_loop_run_once(loop, 50), 0);
    (void)t9; /* dropped by stop/free without running */
    vl_loop_stop(loop);
    assert_int_equal(n_order, 3);
    vl_loop_free(loop);
}


static void
post_cb(void *arg)
{
    atomic_int *n = arg;

    atomic_fetch_add(n, 1);
}


static void
test_post(void **state)
{
    vl_loop_t *loop = vl_loop_new(0);
    atomic_int n = 0;
    int i;

    for (i = 0; i < 5; i++)
        assert_int_equal(vl_loop_post(loop, post_cb, &n), 0);
    assert_true(vl_loop_run_once(loop, 1000) >= 1);
    assert_int_equal(atomic_load(&n), 5);
    /* Tasks not run yet run at stop. */
    assert_int_equal(vl_loop_post(loop, post_cb, &n), 0);
    vl_loop_stop(loop);
    assert_int_equal(atomic_load(&n), 6);
    vl_loop_free(loop);
}


/* Multi-thread: many sockets, each written N times; every byte must be
 * read exactly once and no callback may run twice at once for one io. */
#define MT_SOCKS 8
#define MT_BYTES 200

struct mt_sock {
    int sv[2];            /* socketpair */
    vl_io_t *io;          /* registered sv[0] */
    atomic_int n_read;    /* bytes read */
    atomic_int is_inside; /* callback running */
    atomic_int n_overlap; /* concurrent callbacks seen */
    vl_loop_t *loop;      /* borrowed */
};

static atomic_int mt_on_loop;


static void
mt_cb(vl_io_t *io, int fd, uint32_t events, void *arg)
{
    struct mt_sock *s = arg;
    char buf[64];
    ssize_t n;

    if (atomic_fetch_add(&s->is_inside, 1) != 0)
        atomic_fetch_add(&s->n_overlap, 1);
    if (vl_loop_on_loop_thread(s->loop))
        atomic_fetch_add(&mt_on_loop, 1);
    n = read(fd, buf, sizeof(buf));
    if (n > 0)
        atomic_fetch_add(&s->n_read, (int)n);
    atomic_fetch_sub(&s->is_inside, 1);
    vl_io_modify(io, EPOLLIN);
}


static void
mt_timer(void *arg)
{
    atomic_int *n = arg;

    atomic_fetch_add(n, 1);
}


static void
test_threads(void **state)
{
    vl_loop_t *loop = vl_loop_new(3);
    static struct mt_sock socks[MT_SOCKS];
    atomic_int n_timers = 0;
    int i;
    int j;
    int total;
    int spins = 0;

    assert_non_null(loop);
    assert_false(vl_loop_on_loop_thread(loop));
    for (i = 0; i < MT_SOCKS; i++) {
        memset(&socks[i], 0, sizeof(socks[i]));
        socks[i].loop = loop;
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
                                    socks[i].sv), 0);
        assert_int_equal(vl_io_add(loop, socks[i].sv[0], EPOLLIN, mt_cb,
                                   &socks[i], &socks[i].io), 0);
    }
    assert_int_equal(vl_loop_start(loop), 0);
    for (i = 0; i < 20; i++)
        assert_non_null(vl_timer_add(loop, (uint64_t)i, mt_timer,
                                     &n_timers));
    for (j = 0; j < MT_BYTES; j++)
        for (i = 0; i < MT_SOCKS; i++)
            assert_int_equal(write(socks[i].sv[1], "x", 1), 1);
    do {
        usleep(2000);
        total = 0;
        for (i = 0; i < MT_SOCKS; i++)
            total += atomic_load(&socks[i].n_read);
    } while ((total < MT_SOCKS * MT_BYTES || atomic_load(&n_timers) < 20)
             && spins++ < 5000);
    assert_int_equal(total, MT_SOCKS * MT_BYTES);
    assert_int_equal(atomic_load(&n_timers), 20);
    assert_true(atomic_load(&mt_on_loop) > 0);
    /* Delete from outside while callbacks may run. */
    for (i = 0; i < MT_SOCKS; i++) {
        assert_int_equal(write(socks[i].sv[1], "y", 1), 1);
        vl_io_del(socks[i].io);
        assert_int_equal(atomic_load(&socks[i].is_inside), 0);
        assert_int_equal(atomic_load(&socks[i].n_overlap), 0);
    }
    vl_loop_stop(loop);
    vl_loop_free(loop);
    for (i = 0; i < MT_SOCKS; i++) {
        close(socks[i].sv[0]);
        close(socks[i].sv[1]);
    }
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_io_oneshot),
        cmocka_unit_test(test_io_edge),
        cmocka_unit_test(test_io_edge_threads),
        cmocka_unit_test(test_timers),
        cmocka_unit_test(test_post),
        cmocka_unit_test(test_threads),
    };

    vl_global_init();
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
