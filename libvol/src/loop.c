/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * loop: an epoll loop shared by N threads with one-shot descriptors.
 *
 * epoll data does not carry io pointers but a (generation, slot) id into
 * loop->ios, looked up under loop->lock. So an event fetched by one thread
 * for an io that another thread just deleted is recognised as stale and
 * dropped, instead of touching freed memory. vl_io_del waits for a running
 * callback on another thread (io_cond) before freeing.
 *
 * A registration whose events include EPOLLET is edge-triggered and not
 * one-shot: it never needs re-arming (no epoll_ctl per event), and its
 * callback may run on several threads at once (the owner serialises its
 * own work; rpc/src/conn.c does). vl_io_del waits for every run of it
 * but the caller's own.
 *
 * Posted tasks go through an eventfd; timers live in timer.c on a timerfd.
 * Stopping writes a level-triggered eventfd that wakes every thread.
 *
 * Threads: loop->lock guards the slot table, io flags, tasks and timers;
 * it is never held while a callback runs.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "core.h"

#define VL_LOOP_STOP_ID UINT64_MAX

struct vl_io {
    vl_loop_t *loop;     /* borrowed */
    int fd;              /* borrowed; never closed here */
    vl_io_cb *cb;        /* callback */
    void *arg;           /* for cb */
    uint64_t id;         /* (generation << 32) | slot */
    unsigned n_running;  /* threads running cb (> 1 only if is_et);
                            loop->lock */
    bool is_et;          /* EPOLLET given: edge-triggered, not one-shot */
    bool is_deleted;     /* vl_io_del was called; loop->lock */
    bool is_runner_frees;/* deleted from its own cb: the last run to end
                            frees it; loop->lock */
};

/* The callbacks this thread is inside (innermost first), so that
 * vl_io_del can tell its own run from others'. */
struct vl_io_frame {
    const struct vl_io *io;        /* running on this thread */
    const struct vl_io_frame *up;  /* the enclosing run, or NULL */
};

struct vl_loop_task {
    vl_task_cb *cb;             /* what to run */
    void *arg;                  /* for cb */
    struct vl_loop_task *next;  /* queue link; loop->lock */
};

static __thread vl_loop_t *vl_current_loop;
static __thread const struct vl_io_frame *vl_io_frames;


static void
vl_post_cb(vl_io_t *io, int fd, uint32_t events, void *arg);
static void
vl_timerfd_cb(vl_io_t *io, int fd, uint32_t events, void *arg);


vl_loop_t *
vl_loop_new(unsigned n_threads)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = VL_LOOP_STOP_ID};
    vl_loop_t *loop;
    int err = ENOMEM;

    loop = vl_calloc(NULL, 1, sizeof(*loop), VL_MT_LOOP);
    if (loop == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    loop->epfd = loop->stopfd = loop->postfd = loop->tfd = -1;
    loop->n_threads = n_threads;
    pthread_mutex_init(&loop->lock, NULL);
    pthread_cond_init(&loop->io_cond, NULL);
    if (n_threads > 0) {
        loop->threads = vl_calloc(NULL, n_threads, sizeof(pthread_t),
                                  VL_MT_LOOP);
        if (loop->threads == NULL)
            goto fail;
    }
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    loop->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    loop->postfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    loop->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (loop->epfd < 0 || loop->stopfd < 0 || loop->postfd < 0
        || loop->tfd < 0) {
        err = errno;
        goto fail;
    }
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->stopfd, &ev) != 0) {
        err = errno;
        goto fail;
    }
    err = -vl_io_add(loop, loop->postfd, EPOLLIN, vl_post_cb, loop,
                     &loop->post_io);
    if (err != 0)
        goto fail;
    err = -vl_io_add(loop, loop->tfd, EPOLLIN, vl_timerfd_cb, loop,
                     &loop->timer_io);
    if (err != 0)
        goto fail;
    return loop;
fail:
    vl_loop_free(loop);
    errno = err;
    return NULL;
}


static void
vl_run_tasks(vl_loop_t *loop)
{
    struct vl_loop_task *t;
    struct vl_loop_task *next;

    pthread_mutex_lock(&loop->lock);
    t = loop->tasks;
    loop->tasks = loop->tasks_tail = NULL;
    pthread_mutex_unlock(&loop->lock);
    for (; t != NULL; t = next) {
        next = t->next;
        t->cb(t->arg);
        vl_free(t);
    }
}


static void
vl_post_cb(vl_io_t *io, int fd, uint32_t events, void *arg)
{
    vl_loop_t *loop = arg;
    uint64_t v;

    /* Read first so a post after this point writes again and wakes us. */
    if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
        vl_glog("loop", VL_LOG_ERROR, "eventfd read: %s", strerror(errno));
    vl_io_modify(io, EPOLLIN);
    vl_run_tasks(loop);
}


static void
vl_timerfd_cb(vl_io_t *io, int fd, uint32_t events, void *arg)
{
    uint64_t v;

    if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
        vl_glog("loop", VL_LOG_ERROR, "timerfd read: %s", strerror(errno));
    vl__timer_fire(arg);
}


int
vl_loop_post(vl_loop_t *loop, vl_task_cb *cb, void *arg)
{
    struct vl_loop_task *t = vl_malloc(NULL, sizeof(*t), VL_MT_LOOP);
    uint64_t one = 1;

    if (t == NULL)
        return -ENOMEM;
    t->cb = cb;
    t->arg = arg;
    t->next = NULL;
    pthread_mutex_lock(&loop->lock);
    if (loop->tasks_tail != NULL)
        loop->tasks_tail->next = t;
    else
        loop->tasks = t;
    loop->tasks_tail = t;
    pthread_mutex_unlock(&loop->lock);
    /* An eventfd counter only fails to grow at UINT64_MAX - 1. */
    if (write(loop->postfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        vl_glog("loop", VL_LOG_ERROR, "eventfd write: %s", strerror(errno));
    return 0;
}


static void
vl_io_event(vl_loop_t *loop, uint64_t id, uint32_t events)
{
    uint32_t slot = (uint32_t)id;
    struct vl_io_frame frame;
    vl_io_t *io;
    bool is_free;

    pthread_mutex_lock(&loop->lock);
    if (slot >= loop->n_slots || loop->ios[slot] == NULL
        || loop->ios[slot]->id != id) {
        pthread_mutex_unlock(&loop->lock); /* stale: io was deleted */
        return;
    }
    io = loop->ios[slot];
    io->n_running++;
    pthread_mutex_unlock(&loop->lock);

    frame.io = io;
    frame.up = vl_io_frames;
    vl_io_frames = &frame;
    io->cb(io, io->fd, events, io->arg);
    vl_io_frames = frame.up;

    pthread_mutex_lock(&loop->lock);
    io->n_running--;
    is_free = io->is_runner_frees && io->n_running == 0;
    if (!io->is_runner_frees)
        pthread_cond_broadcast(&loop->io_cond);
    pthread_mutex_unlock(&loop->lock);
    if (is_free)
        vl_free(io);
}


/* Waits for events and runs their callbacks; returns callbacks run. */
static int
vl_loop_poll(vl_loop_t *loop, int timeout_ms, int max)
{
    struct epoll_event evs[16];
    int n;
    int i;
    int ran = 0;

    if (max > (int)VL_ARRAY_SIZE(evs))
        max = (int)VL_ARRAY_SIZE(evs);
    n = epoll_wait(loop->epfd, evs, max, timeout_ms);
    if (n < 0)
        return 0;
    for (i = 0; i < n; i++) {
        if (evs[i].data.u64 == VL_LOOP_STOP_ID)
            continue;
        vl_io_event(loop, evs[i].data.u64, evs[i].events);
        ran++;
    }
    return ran;
}


int
vl_loop_run_once(vl_loop_t *loop, int timeout_ms)
{
    vl_loop_t *saved = vl_current_loop;
    int n;

    vl_current_loop = loop;
    n = vl_loop_poll(loop, timeout_ms, 16);
    vl_current_loop = saved;
    return n;
}


bool
vl_loop_on_loop_thread(vl_loop_t *loop)
{
    return vl_current_loop == loop;
}


static void *
vl_loop_thread(void *arg)
{
    vl_loop_t *loop = arg;

    vl_current_loop = loop;
    while (!atomic_load(&loop->is_stopping))
        vl_loop_poll(loop, -1, 4);
    return NULL;
}


int
vl_loop_start(vl_loop_t *loop)
{
    unsigned i;
    int rc;

    if (loop->is_started)
        return -EALREADY;
    atomic_store(&loop->is_stopping, false);
    for (i = 0; i < loop->n_threads; i++) {
        rc = pthread_create(&loop->threads[i], NULL, vl_loop_thread, loop);
        if (rc != 0) {
            atomic_store(&loop->is_stopping, true);
            eventfd_write(loop->stopfd, 1);
            while (i-- > 0)
                pthread_join(loop->threads[i], NULL);
            eventfd_read(loop->stopfd, &(eventfd_t){0});
            return -rc;
        }
    }
    loop->is_started = loop->n_threads > 0;
    return 0;
}


void
vl_loop_stop(vl_loop_t *loop)
{
    unsigned i;

    if (loop->is_started) {
        atomic_store(&loop->is_stopping, true);
        eventfd_write(loop->stopfd, 1);
        for (i = 0; i < loop->n_threads; i++)
            pthread_join(loop->threads[i], NULL);
        eventfd_read(loop->stopfd, &(eventfd_t){0});
        loop->is_started = false;
        atomic_store(&loop->is_stopping, false);
    }
    vl_run_tasks(loop);
    vl__timers_drop(loop);
}


void
vl_loop_free(vl_loop_t *loop)
{
    uint32_t i;
    size_t leaked = 0;

    if (loop == NULL)
        return;
    if (loop->epfd >= 0)
        vl_loop_stop(loop);
    if (loop->post_io != NULL)
        vl_io_del(loop->post_io);
    if (loop->timer_io != NULL)
        vl_io_del(loop->timer_io);
    for (i = 0; i < loop->n_slots; i++) {
        if (loop->ios[i] != NULL) {
            vl_free(loop->ios[i]);
            leaked++;
        }
    }
    if (leaked > 0)
        vl_glog("loop", VL_LOG_WARNING,
                "loop freed with %zu registered descriptors", leaked);
    vl_free(loop->ios);
    vl_free(loop->gens);
    vl_free(loop->heap);
    vl_free(loop->threads);
    if (loop->epfd >= 0)
        close(loop->epfd);
    if (loop->stopfd >= 0)
        close(loop->stopfd);
    if (loop->postfd >= 0)
        close(loop->postfd);
    if (loop->tfd >= 0)
        close(loop->tfd);
    pthread_cond_destroy(&loop->io_cond);
    pthread_mutex_destroy(&loop->lock);
    vl_free(loop);
}


/* Finds or makes a free slot; returns its index or -ENOMEM. */
static int64_t
vl_slot_get_locked(vl_loop_t *loop)
{
    uint32_t i;
    uint32_t n;
    vl_io_t **ios;
    uint32_t *gens;

    for (i = 0; i < loop->n_slots; i++)
        if (loop->ios[i] == NULL)
            return i;
    n = loop->n_slots == 0 ? 16 : loop->n_slots * 2;
    ios = loop->ios == NULL ? vl_malloc(NULL, n * sizeof(*ios), VL_MT_LOOP)
                            : vl_realloc(loop->ios, n * sizeof(*ios));
    if (ios == NULL)
        return -ENOMEM;
    loop->ios = ios;
    gens = loop->gens == NULL
               ? vl_malloc(NULL, n * sizeof(*gens), VL_MT_LOOP)
               : vl_realloc(loop->gens, n * sizeof(*gens));
    if (gens == NULL)
        return -ENOMEM; /* ios grew; n_slots did not: harmless */
    loop->gens = gens;
    for (i = loop->n_slots; i < n; i++) {
        loop->ios[i] = NULL;
        loop->gens[i] = 0;
    }
    i = loop->n_slots;
    loop->n_slots = n;
    return i;
}


int
vl_io_add(vl_loop_t *loop, int fd, uint32_t events, vl_io_cb *cb,
          void *arg, vl_io_t **out)
{
    struct epoll_event ev = {.events = events};
    vl_io_t *io;
    int64_t slot;
    int rc;

    io = vl_calloc(NULL, 1, sizeof(*io), VL_MT_LOOP);
    if (io == NULL)
        return -ENOMEM;
    io->loop = loop;
    io->fd = fd;
    io->cb = cb;
    io->arg = arg;
    io->is_et = (events & EPOLLET) != 0;
    if (!io->is_et)
        ev.events |= EPOLLONESHOT;
    pthread_mutex_lock(&loop->lock);
    slot = vl_slot_get_locked(loop);
    if (slot < 0) {
        pthread_mutex_unlock(&loop->lock);
        vl_free(io);
        return (int)slot;
    }
    loop->gens[slot]++;
    io->id = ((uint64_t)loop->gens[slot] << 32) | (uint64_t)slot;
    loop->ios[slot] = io;
    ev.data.u64 = io->id;
    *out = io;
    /* Still under the lock: an event cannot be dispatched before the
     * caller's *out is set. */
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        rc = -errno;
        loop->ios[slot] = NULL;
        *out = NULL;
        pthread_mutex_unlock(&loop->lock);
        vl_free(io);
        return rc;
    }
    pthread_mutex_unlock(&loop->lock);
    return 0;
}


int
vl_io_modify(vl_io_t *io, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.u64 = io->id};

    if (io->is_et)
        ev.events |= EPOLLET;
    else
        ev.events |= EPOLLONESHOT;
    if (epoll_ctl(io->loop->epfd, EPOLL_CTL_MOD, io->fd, &ev) != 0)
        return -errno;
    return 0;
}


void
vl_io_del(vl_io_t *io)
{
    vl_loop_t *loop;
    unsigned n_mine = 0;
    bool is_free = true;

    if (io == NULL)
        return;
    loop = io->loop;
    for (const struct vl_io_frame *f = vl_io_frames; f != NULL; f = f->up)
        if (f->io == io)
            n_mine++;
    pthread_mutex_lock(&loop->lock);
    epoll_ctl(loop->epfd, EPOLL_CTL_DEL, io->fd, NULL);
    loop->ios[(uint32_t)io->id] = NULL;
    io->is_deleted = true;
    /* No run starts now (the slot is gone); wait for the other threads'
     * runs. Our own end after we return: the last one frees io. */
    while (io->n_running > n_mine)
        pthread_cond_wait(&loop->io_cond, &loop->lock);
    if (n_mine > 0) {
        io->is_runner_frees = true;
        is_free = false;
    }
    pthread_mutex_unlock(&loop->lock);
    if (is_free)
        vl_free(io);
}
