/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * io-threads private definitions, shared by io-threads.c and its unit
 * tests (which inspect the pool through struct iot_priv).
 */
#ifndef MORTAR_IO_THREADS_H
#define MORTAR_IO_THREADS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vol/vol.h"

/* Hard upper bound of the pool, also the thread-count option's maximum. */
#define IOT_MAX_THREADS 64
/* Threads that never exit for being idle. */
#define IOT_MIN_THREADS 1
/* readdir(p) replies up to this size run inline (a 4 KiB FUSE readdir);
 * bigger ones stat many entries and go to the workers. */
#define IOT_INLINE_DIR_MAX (16 * 1024)

enum iot_prio {
    IOT_PRIO_HIGH = 0, /* metadata reads: lookup, stat, open... */
    IOT_PRIO_NORMAL,   /* data and namespace changes */
    IOT_PRIO_LOW,      /* bulk copies */
    IOT_PRIO_LEAST,    /* background traffic (heal, rebalance) */
    IOT_PRIO_COUNT
};

/* Options, parsed by libvol from the table in io-threads.c. */
struct iot_conf {
    uint64_t thread_count;              /* pool size limit */
    uint64_t prio_threads[IOT_PRIO_COUNT]; /* per-priority running caps */
    uint64_t idle_time;                 /* ms before a spare thread exits */
    bool is_pass_through;               /* every fop inline */
    bool is_inline_fast;                /* fast fops inline */
    uint64_t inline_io_max;             /* read/write bytes run inline */
};

/* Per-request area: the queue link. Valid only while the request sits in
 * a queue; after vl_pass the area belongs to the child. */
struct iot_local {
    vl_req_t *next; /* next request of the same queue, NULL at the tail */
};

/* A FIFO of requests linked through struct iot_local. */
struct iot_queue {
    vl_req_t *head; /* first to run; NULL when empty */
    vl_req_t *tail; /* last queued */
    size_t len;     /* requests queued */
};

enum iot_slot_state {
    IOT_SLOT_FREE = 0, /* no thread */
    IOT_SLOT_RUNNING,  /* thread started and not yet exiting */
    IOT_SLOT_EXITED,   /* thread returned or is returning; join it */
};

/* One worker thread slot. */
struct iot_priv;
struct iot_slot {
    pthread_t tid;             /* valid unless state is FREE */
    enum iot_slot_state state; /* guarded by iot_priv.lock */
    struct iot_priv *priv;     /* borrowed; the pool it belongs to */
};

/* Runtime state of one io-threads instance (xl->priv). */
struct iot_priv {
    pthread_mutex_t lock;        /* guards everything below */
    pthread_cond_t work_cond;    /* idle workers wait here for requests */
    pthread_cond_t exit_cond;    /* fini waits here for workers to exit */
    struct iot_queue queues[IOT_PRIO_COUNT]; /* waiting requests */
    size_t running[IOT_PRIO_COUNT]; /* requests being passed, per prio */
    uint64_t max_threads;        /* copy of conf thread_count */
    uint64_t prio_cap[IOT_PRIO_COUNT]; /* copy of conf prio_threads */
    uint64_t idle_ms;            /* copy of conf idle_time */
    size_t n_threads;            /* workers alive (RUNNING slots) */
    size_t n_idle;               /* workers waiting on work_cond */
    size_t n_wakeups;            /* signals sent, not yet consumed */
    size_t n_started;            /* threads ever started, for tests */
    uint64_t n_done;             /* requests handed to the child */
    uint64_t n_dropped;          /* queued requests of closed clients */
    /* Inline policy: atomics, read without the lock on every fop and
     * replaced by reconfigure. */
    atomic_bool is_pass_through;  /* conf pass-through */
    atomic_bool is_inline_fast;   /* conf inline-fast-fops */
    _Atomic uint64_t inline_io_max; /* conf inline-io-size */
    _Atomic uint64_t n_inline;    /* requests run on the caller's thread */
    bool is_stopping;            /* fini began; queue no more */
    bool is_spawn_failing;       /* the last thread start failed (logged
                                    once until one succeeds) */
    struct iot_slot slots[IOT_MAX_THREADS]; /* worker threads */
    vl_xlator_t *xl;             /* borrowed; this translator */
};

/* Starts a worker thread: pthread_create, or a test's stand-in (the
 * unit tests make it fail). */
typedef int iot_thread_create_fn(pthread_t *tid, const pthread_attr_t *attr,
                                 void *(*fn)(void *), void *arg);
extern iot_thread_create_fn *iot_thread_create;

/* The priority a fop is queued at. */
enum iot_prio iot_fop_prio(vl_fop_t op);
/* True if req does not block for long, so it may run on the thread that
 * wound it (io_max: largest read/write counted as fast). */
bool iot_fop_is_fast(const vl_req_t *req, uint64_t io_max);

#endif /* MORTAR_IO_THREADS_H */
