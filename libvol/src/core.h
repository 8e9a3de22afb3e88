/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core.h: libvol's internal declarations (prefix vl__), shared by the files
 * of libvol/src and by libvol's own unit tests. Not installed.
 */
#ifndef VOL_SRC_CORE_H
#define VOL_SRC_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vol/fop-stats.h"
#include "vol/vol.h"

/* Alignment of every per-translator area (request priv, inode/fd ctx). */
#define VL__ALIGN 16
#define VL__ALIGN_UP(n) (((n) + (VL__ALIGN - 1)) & ~(size_t)(VL__ALIGN - 1))

/* ---- mem.c ---- */

/* Accounting of one owner (a translator, or the core). Refcounted: one ref
 * for the owner and one per live allocation, so it outlives the xlator if
 * the xlator leaked memory. */
struct vl_mem_acct;

struct vl_mem_acct *vl__mem_acct_new(const char *owner,
                                     const char *const *type_names);
/* Drops the owner's ref. */
void vl__mem_acct_put(struct vl_mem_acct *acct);
/* Writes "mem.TYPE.bytes=N" / "mem.TYPE.objects=N" lines (non-zero only). */
void vl__mem_acct_dump(struct vl_mem_acct *acct, FILE *out);
/* The core's own accounting (owner NULL). */
struct vl_mem_acct *vl__mem_core_acct(void);
/* Counts one allocation attempt; true if fault injection says to fail. */
bool vl__mem_should_fail(void);
/* Adds (delta > 0) or removes bytes of an allocation made outside vl_malloc
 * (page-aligned buffers) to the core's accounting under type. */
void vl__mem_account_raw(unsigned type, int64_t delta);
/* Reads VL_TEST_FAIL_ALLOC_AT. */
void vl__mem_init_from_env(void);

/* ---- fop-stats.c ---- */

/* One fop's counters in one translator (vol/fop-stats.h). */
struct vl__fop_counter {
    atomic_uint_least64_t calls;      /* answered requests */
    atomic_uint_least64_t errors;     /* of those, status < 0 */
    atomic_uint_least64_t lat_sum_ns; /* sum of latencies */
    atomic_uint_least64_t lat_min_ns; /* UINT64_MAX until the first */
    atomic_uint_least64_t lat_max_ns; /* 0 until the first */
    atomic_uint_least64_t bytes;      /* READ/WRITE bytes */
    atomic_uint_least64_t lat_bucket[VL_LAT_BUCKETS];
};

/* A translator's counters; owned by the translator (xl->fop_stats). */
struct vl__xl_stats {
    struct vl__fop_counter fops[VL_FOP_COUNT]; /* by fop */
    unsigned depth; /* longest chain of translators from this one down to
                       a leaf, itself included (graph build) */
};

struct vl__xl_stats *vl__fop_stats_new(void);
void vl__fop_stats_free(struct vl__xl_stats *st);
/* Counts one answered request of op in xl, ns after it reached xl. */
void vl__fop_stats_credit(vl_xlator_t *xl, vl_fop_t op, int status,
                          uint64_t ns, uint64_t bytes);
/* A hop that did not fit in its request (vl_fop_stats_unrecorded). */
void vl__fop_stats_unrecorded_add(void);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t vl__now_ns(void);

/* ---- graph.c ---- */

/* A live request's core trailer, placed after its priv area. */
struct vl__req_core {
    vl_req_t *prev;          /* pending list; guarded by graph core lock */
    vl_req_t *next;          /* pending list; guarded by graph core lock */
    atomic_int refs;         /* life ref + one per running dispatch */
    void *unwound_at;        /* return address of the first vl_unwind */
    const char *unwound_by;  /* translator name at the first vl_unwind */
    void (*on_destroy)(void *arg); /* run after the request is freed */
    void *on_destroy_arg;    /* for on_destroy */
    uint32_t n_hops;         /* translators reached so far (hops) */
    uint32_t cap_hops;       /* room in hops: the graph's depth */
    struct vl__req_hop {
        vl_xlator_t *xl;     /* borrowed; reached by vl_wind or vl_pass */
        uint64_t t_ns;       /* when (vl__now_ns) */
    } hops[];                /* credited at vl_unwind (fop-stats.h) */
};

/* Runs fn(arg) once the request has been freed and is off its graph's
 * pending list (vl_sync_call waits for this, so the caller may free the
 * graph as soon as it returns). */
void vl__req_on_destroy(vl_req_t *req, void (*fn)(void *arg), void *arg);

struct vl__graph_core {
    pthread_mutex_t pend_lock;   /* guards the pending list and n_pending */
    vl_req_t *pend_head;         /* oldest live request */
    vl_req_t *pend_tail;         /* newest live request */
    size_t n_pending;            /* live requests */
    pthread_mutex_t ready_lock;  /* guards the fields below */
    pthread_cond_t ready_cond;   /* signalled by vl_graph_set_ready */
    bool is_ready;               /* set_ready was called */
    int ready_status;            /* its status */
    char ready_reason[256];      /* its reason */
    char last_error[256];        /* vl_graph_set_last_error */
    bool *is_inited;             /* owned; per xls index: init() succeeded */
    bool is_activated;           /* PARENT_UP sent */
    atomic_bool is_serving;      /* set (release) by vl_graph_activate,
                                    after every init() ran: other threads
                                    (metrics) may then read the
                                    translators' private state */
    unsigned max_hops;           /* the graph's depth: the most translators
                                    one request can reach by passes */
    vl_graph_t *reg_next;        /* process graph list; guarded by reg lock */
    struct vl__retired_conf *retired; /* owned; confs replaced by
                                         reconfigure, guarded by pend_lock */
};

/* A configuration replaced by vl_graph_reconfigure. A fop that loaded the
 * old xl->conf pointer before the swap may still read it, so it is freed
 * only once every request alive at the swap is gone: when the oldest
 * pending request's id is at least next_id. */
struct vl__retired_conf {
    struct vl__retired_conf *next; /* list link */
    vl_xlator_t *xl;               /* borrowed; owner of the conf */
    void *conf;                    /* owned */
    uint64_t next_id;              /* next request id at the swap */
};

/* The id the next request will get. */
uint64_t vl__req_next_id(void);
/* Frees the retired confs no request can still be reading (all of them
 * when is_final, at graph teardown). */
void vl__graph_retired_reap(vl_graph_t *graph, bool is_final);

static inline struct vl__graph_core *
vl__graph_core(vl_graph_t *graph)
{
    return graph->core;
}

void vl__graph_pending_add(vl_graph_t *graph, vl_req_t *req);
void vl__graph_pending_del(vl_graph_t *graph, vl_req_t *req);
/* Calls fn on every registered graph with the registry lock held. */
void vl__graph_foreach(void (*fn)(vl_graph_t *graph, void *arg), void *arg);

/* ---- req.c ---- */

static inline struct vl__req_core *
vl__req_core(vl_req_t *req)
{
    return (struct vl__req_core *)(void *)(req->priv + req->priv_size);
}

/* Moves src into dst (dst cleared first), leaving src zeroed. */
void vl__reply_move(struct vl_reply *dst, struct vl_reply *src);

/* ---- options.c / option-types.c ---- */

int vl__opt_parse_value(const vl_option_t *opt, const char *value,
                        void *conf, vl_err_t *err);
bool vl__key_match(const char *pattern, const char *key);

/* ---- loop.c / timer.c ---- */

struct vl_loop_task;

struct vl_loop {
    int epfd;                     /* epoll instance; owned */
    int stopfd;                   /* eventfd, level-triggered; owned */
    int postfd;                   /* eventfd for vl_loop_post; owned */
    int tfd;                      /* timerfd for the earliest timer; owned */
    vl_io_t *post_io;             /* internal io on postfd */
    vl_io_t *timer_io;            /* internal io on tfd */
    pthread_mutex_t lock;         /* guards every field below */
    pthread_cond_t io_cond;       /* an io stopped running */
    vl_io_t **ios;                /* owned array; slot -> io or NULL */
    uint32_t *gens;               /* owned; slot generation */
    uint32_t n_slots;             /* entries in ios and gens */
    struct vl_loop_task *tasks;   /* posted, oldest first; owned */
    struct vl_loop_task *tasks_tail; /* newest posted task */
    vl_timer_t **heap;            /* owned; min-heap by deadline */
    size_t n_heap;                /* timers in heap */
    size_t cap_heap;              /* capacity of heap */
    unsigned n_threads;           /* threads vl_loop_start runs */
    pthread_t *threads;           /* owned; running when is_started */
    bool is_started;              /* threads are running */
    atomic_bool is_stopping;      /* threads must exit */
};

/* Runs the timers that are due (the timerfd fired). */
void vl__timer_fire(vl_loop_t *loop);
/* Cancels every queued timer without running it. */
void vl__timers_drop(vl_loop_t *loop);

/* ---- inode.c ---- */

vl_graph_t *vl__inode_table_graph(vl_inode_table_t *table);

#endif /* VOL_SRC_CORE_H */
