/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * timer: one-shot timers on a loop, kept in a min-heap by deadline, with
 * one timerfd armed for the earliest.
 *
 * Lifetime: a timer is freed by the loop right after its callback returns,
 * or by vl_timer_cancel before it runs. Cancelling a timer whose callback
 * is running returns false and leaves the freeing to the loop.
 * Threads: loop->lock guards the heap and timer states.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>

#include "core.h"

#define VL_TIMER_NOT_QUEUED SIZE_MAX

struct vl_timer {
    vl_loop_t *loop;      /* borrowed */
    uint64_t deadline_ns; /* CLOCK_MONOTONIC */
    vl_timer_cb *cb;      /* what to run */
    void *arg;            /* for cb */
    size_t heap_idx;      /* index in loop->heap or VL_TIMER_NOT_QUEUED */
    vl_timer_t *next;     /* due list while firing */
};


static uint64_t
vl_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}


static void
vl_heap_swap(vl_loop_t *loop, size_t a, size_t b)
{
    vl_timer_t *t = loop->heap[a];

    loop->heap[a] = loop->heap[b];
    loop->heap[b] = t;
    loop->heap[a]->heap_idx = a;
    loop->heap[b]->heap_idx = b;
}


static void
vl_heap_up(vl_loop_t *loop, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;

        if (loop->heap[p]->deadline_ns <= loop->heap[i]->deadline_ns)
            break;
        vl_heap_swap(loop, p, i);
        i = p;
    }
}


static void
vl_heap_down(vl_loop_t *loop, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1;
        size_t r = l + 1;
        size_t m = i;

        if (l < loop->n_heap
            && loop->heap[l]->deadline_ns < loop->heap[m]->deadline_ns)
            m = l;
        if (r < loop->n_heap
            && loop->heap[r]->deadline_ns < loop->heap[m]->deadline_ns)
            m = r;
        if (m == i)
            return;
        vl_heap_swap(loop, i, m);
        i = m;
    }
}


static void
vl_heap_remove(vl_loop_t *loop, vl_timer_t *t)
{
    size_t i = t->heap_idx;

    loop->n_heap--;
    if (i != loop->n_heap) {
        loop->heap[i] = loop->heap[loop->n_heap];
        loop->heap[i]->heap_idx = i;
        vl_heap_down(loop, i);
        vl_heap_up(loop, i);
    }
    t->heap_idx = VL_TIMER_NOT_QUEUED;
}


/* Arms the timerfd for the earliest deadline (or disarms it). */
static void
vl_timerfd_arm_locked(vl_loop_t *loop)
{
    struct itimerspec its;

    memset(&its, 0, sizeof(its));
    if (loop->n_heap > 0) {
        uint64_t d = loop->heap[0]->deadline_ns;

        its.it_value.tv_sec = (time_t)(d / 1000000000ULL);
        its.it_value.tv_nsec = (long)(d % 1000000000ULL);
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
            its.it_value.tv_nsec = 1; /* zero would disarm */
    }
    timerfd_settime(loop->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}


vl_timer_t *
vl_timer_add(vl_loop_t *loop, uint64_t ms, vl_timer_cb *cb, void *arg)
{
    vl_timer_t *t = vl_calloc(NULL, 1, sizeof(*t), VL_MT_LOOP);

    if (t == NULL)
        return NULL;
    t->loop = loop;
    t->cb = cb;
    t->arg = arg;
    t->deadline_ns = vl_now_ns() + ms * 1000000ULL;
    pthread_mutex_lock(&loop->lock);
    if (loop->n_heap == loop->cap_heap) {
        size_t cap = loop->cap_heap == 0 ? 16 : loop->cap_heap * 2;
        vl_timer_t **h;

        h = loop->heap == NULL
                ? vl_malloc(NULL, cap * sizeof(*h), VL_MT_LOOP)
                : vl_realloc(loop->heap, cap * sizeof(*h));
        if (h == NULL) {
            pthread_mutex_unlock(&loop->lock);
            vl_free(t);
            return NULL;
        }
        loop->heap = h;
        loop->cap_heap = cap;
    }
    t->heap_idx = loop->n_heap;
    loop->heap[loop->n_heap++] = t;
    vl_heap_up(loop, t->heap_idx);
    if (t->heap_idx == 0)
        vl_timerfd_arm_locked(loop);
    pthread_mutex_unlock(&loop->lock);
    return t;
}


bool
vl_timer_cancel(vl_timer_t *t)
{
    vl_loop_t *loop;
    bool is_cancelled = false;

    if (t == NULL)
        return false;
    loop = t->loop;
    pthread_mutex_lock(&loop->lock);
    if (t->heap_idx != VL_TIMER_NOT_QUEUED) {
        bool was_first = t->heap_idx == 0;

        vl_heap_remove(loop, t);
        if (was_first)
            vl_timerfd_arm_locked(loop);
        is_cancelled = true;
    }
    pthread_mutex_unlock(&loop->lock);
    if (is_cancelled)
        vl_free(t);
    return is_cancelled;
}


void
vl__timer_fire(vl_loop_t *loop)
{
    uint64_t now = vl_now_ns();
    vl_timer_t *due = NULL;
    vl_timer_t **tail = &due;
    vl_timer_t *t;

    pthread_mutex_lock(&loop->lock);
    while (loop->n_heap > 0 && loop->heap[0]->deadline_ns <= now) {
        t = loop->heap[0];
        vl_heap_remove(loop, t);
        t->next = NULL;
        *tail = t;
        tail = &t->next;
    }
    vl_timerfd_arm_locked(loop);
    pthread_mutex_unlock(&loop->lock);
    vl_io_modify(loop->timer_io, EPOLLIN);
    while (due != NULL) {
        t = due;
        due = t->next;
        t->cb(t->arg);
        /* A concurrent vl_timer_cancel may still be reading t under the
         * lock: take it once before freeing. */
        pthread_mutex_lock(&loop->lock);
        pthread_mutex_unlock(&loop->lock);
        vl_free(t);
    }
}


void
vl__timers_drop(vl_loop_t *loop)
{
    pthread_mutex_lock(&loop->lock);
    while (loop->n_heap > 0) {
        vl_timer_t *t = loop->heap[0];

        vl_heap_remove(loop, t);
        vl_free(t);
    }
    vl_timerfd_arm_locked(loop);
    pthread_mutex_unlock(&loop->lock);
}
