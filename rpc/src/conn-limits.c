/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conn-limits: what a peer may make one connection cost (issue 23).
 *
 * Every limit of struct vrpc_limits, over which the connection is closed
 * with one log line naming the peer, the limit and the figures:
 *   max_record  checked by the record parser at each mark (record.c),
 *               before anything is allocated; the process-wide cap on
 *               incomplete records is record.c's too. The reader copies
 *               the connection's value into its parser before each read,
 *               so a brick raises it after SETVOLUME without a race.
 *   record_ms   a record begun (its first mark byte read) must be whole
 *               within this: a peer dribbling a record a byte at a time,
 *               or sending a large mark and stopping, is dropped.
 *   idle_ms     with no call unanswered, nothing queued and nothing
 *               received for this long (mgmt; a brick before SETVOLUME).
 *               Calls unanswered are counted as records delivered minus
 *               records sent, so a parked WATCH keeps its connection.
 *   max_out     unsent bytes queued for a peer that does not read.
 * The deadlines are checked by one sweeper thread per process, started
 * with the first connection that has one: it walks the connections with
 * a deadline every SWEEP_MS and closes those past it. Not a vl_timer per
 * connection: vl_loop_stop frees pending timers without running them, so
 * a stopped and restarted loop (a test's hung brick) would leave every
 * connection holding a freed timer; the sweeper does not depend on any
 * loop, and one thread for the process is cheaper than a timer per
 * connection re-armed every second. The list holds a connection ref from
 * the first deadline until the close.
 * Threads: the atomics are read anywhere; tally under c->lock; the list
 * under sweep.lock, taken after c->lock.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "conn-int.h"

#define SWEEP_MS 100        /* between two sweeps: deadline precision */
#define SWEEP_BATCH 64      /* closed per pass over the list */

/* The connections with a deadline, and the thread checking them. */
static struct {
    pthread_mutex_t lock;   /* guards head and is_started */
    vrpc_conn_t *head;      /* list through lim.sweep_next (refs) */
    bool is_started;        /* the thread runs (for the process' life) */
} sweep = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Before SETVOLUME: SETVOLUME's arguments are a name and an identity
 * (under 8 KiB); nothing else is decoded yet. */
const struct vrpc_limits vrpc_limits_brick_hs = {
    .max_record = 64 * VL_KiB,
    .max_out = 1 * VL_MiB,
    .record_ms = 10000,
    .idle_ms = 10000,
    .max_conns = 4096,
};
/* Bound: the largest WRITE a client sends (VRPC_MAX_PAYLOAD) plus
 * headers; clients stay connected idle for days. */
const struct vrpc_limits vrpc_limits_brick = {
    .max_record = VRPC_MAX_RECORD,
    .max_out = 256 * VL_MiB,
    .record_ms = 30000,
    .idle_ms = 0,
    .max_conns = 4096,
};
/* Management calls are small; a mount's WATCH comes back every 30 s. */
const struct vrpc_limits vrpc_limits_mgmt = {
    .max_record = 1 * VL_MiB,
    .max_out = 64 * VL_MiB,
    .record_ms = 30000,
    .idle_ms = 120000,
    .max_conns = 1024,
};


void
vrpc_conn_lim_init(vrpc_conn_t *c)
{
    atomic_init(&c->lim.max_record, VRPC_MAX_RECORD);
    atomic_init(&c->lim.max_out, 0);
    atomic_init(&c->lim.record_ms, 0);
    atomic_init(&c->lim.idle_ms, 0);
    atomic_init(&c->lim.last_rx_ms, 0);
    atomic_init(&c->lim.rec_start_ms, 0);
    atomic_init(&c->lim.n_calls_open, 0);
    c->lim.n_done_seen = 0;
    atomic_init(&c->lim.out_bytes, 0);
    c->lim.sweep_prev = NULL;
    c->lim.sweep_next = NULL;
    c->lim.is_swept = false;
    c->lim.tally = NULL;
}


int
vrpc_conn_lim_expired(vrpc_conn_t *c, uint64_t now, uint64_t *age)
{
    uint64_t rec_start = atomic_load(&c->lim.rec_start_ms);
    uint64_t last_rx = atomic_load(&c->lim.last_rx_ms);
    unsigned record_ms = atomic_load(&c->lim.record_ms);
    unsigned idle_ms = atomic_load(&c->lim.idle_ms);

    /* (1) a record begun too long ago; (2) idle: nothing begun, no call
     * unanswered, nothing left to send, nothing received for idle_ms.
     * A reader stamps with its own clock reading, which may be later
     * than the sweeper's now: such a stamp is young, not (as unsigned
     * now - stamp would say) 2^64 - 1 ms old. */
    if (record_ms != 0 && rec_start != 0 && now >= rec_start
        && now - rec_start >= record_ms) {
        *age = now - rec_start;
        return 1;
    }
    if (idle_ms != 0 && rec_start == 0
        && atomic_load(&c->lim.n_calls_open) == 0
        && atomic_load(&c->lim.out_bytes) == 0 && last_rx != 0
        && now >= last_rx && now - last_rx >= idle_ms) {
        *age = now - last_rx;
        return 2;
    }
    return 0;
}


static void *
lim_sweep_thread(void *arg)
{
    (void)arg;
    for (;;) {
        vrpc_conn_t *victims[SWEEP_BATCH];
        int why[SWEEP_BATCH];
        uint64_t age[SWEEP_BATCH];
        uint64_t now = vrpc_now_ms();
        int n = 0;

        pthread_mutex_lock(&sweep.lock);
        for (vrpc_conn_t *c = sweep.head; c != NULL && n < SWEEP_BATCH;
             c = c->lim.sweep_next) {
            why[n] = vrpc_conn_lim_expired(c, now, &age[n]);
            if (why[n] != 0)
                victims[n++] = vrpc_conn_ref(c);
        }
        pthread_mutex_unlock(&sweep.lock);
        for (int i = 0; i < n; i++) {
            vrpc_conn_t *c = victims[i];

            if (why[i] == 1)
                vl_glog("rpc", VL_LOG_WARNING, "%s: record begun %llu ms "
                        "ago not complete within the limit of %u ms: "
                        "closed", c->peer, (unsigned long long)age[i],
                        atomic_load(&c->lim.record_ms));
            else
                vl_glog("rpc", VL_LOG_INFO, "%s: idle for %llu ms (limit "
                        "%u ms): closed", c->peer,
                        (unsigned long long)age[i],
                        atomic_load(&c->lim.idle_ms));
            vrpc_conn_close(c, -ETIMEDOUT);
            vrpc_conn_unref(c);
        }
        if (n < SWEEP_BATCH)
            nanosleep(&(struct timespec){0, SWEEP_MS * 1000000L}, NULL);
    }
    return NULL;
}


/* Lists c for the sweeper if it has a deadline, is running and is not
 * listed yet. Under c->lock. */
static int
lim_arm_locked(vrpc_conn_t *c)
{
    int rc = 0;

    if (!c->is_started || c->is_closed
        || (atomic_load(&c->lim.record_ms) == 0
            && atomic_load(&c->lim.idle_ms) == 0))
        return 0;
    pthread_mutex_lock(&sweep.lock);
    if (!sweep.is_started) {
        pthread_t t;

        rc = -pthread_create(&t, NULL, lim_sweep_thread, NULL);
        if (rc == 0) {
            pthread_detach(t);
            sweep.is_started = true;
        }
    }
    if (rc == 0 && !c->lim.is_swept) {
        c->lim.is_swept = true;
        c->lim.sweep_prev = NULL;
        c->lim.sweep_next = sweep.head;
        if (sweep.head != NULL)
            sweep.head->lim.sweep_prev = c;
        sweep.head = vrpc_conn_ref(c); /* the list's */
    }
    pthread_mutex_unlock(&sweep.lock);
    return rc;
}


int
vrpc_conn_lim_start_locked(vrpc_conn_t *c)
{
    atomic_store(&c->lim.last_rx_ms, vrpc_now_ms());
    return lim_arm_locked(c);
}


void
vrpc_conn_set_limits(vrpc_conn_t *c, const struct vrpc_limits *lim)
{
    atomic_store(&c->lim.max_record, lim->max_record);
    atomic_store(&c->lim.max_out, lim->max_out);
    atomic_store(&c->lim.record_ms, lim->record_ms);
    atomic_store(&c->lim.idle_ms, lim->idle_ms);
    pthread_mutex_lock(&c->lock);
    if (lim_arm_locked(c) != 0)
        vl_glog("rpc", VL_LOG_WARNING, "%s: cannot start the deadline "
                "thread: deadlines not enforced", c->peer);
    pthread_mutex_unlock(&c->lock);
}


void
vrpc_conn_lim_read_begin(vrpc_conn_t *c)
{
    c->rm.max = atomic_load(&c->lim.max_record);
}


void
vrpc_conn_lim_read_end(vrpc_conn_t *c, int rc)
{
    const struct vrpc_rm *rm = &c->rm;
    uint64_t now = vrpc_now_ms();
    bool is_begun = rm->n_mark > 0 || rm->in_frag || rm->len > 0;

    atomic_store(&c->lim.last_rx_ms, now);
    /* A record completed in this read: the deadline restarts for the
     * one begun after it, if any. */
    if (rm->n_done != c->lim.n_done_seen || !is_begun)
        atomic_store(&c->lim.rec_start_ms, 0);
    c->lim.n_done_seen = rm->n_done;
    if (is_begun && atomic_load(&c->lim.rec_start_ms) == 0)
        atomic_store(&c->lim.rec_start_ms, now);

    if (rc == -EMSGSIZE)
        vl_glog("rpc", VL_LOG_WARNING, "%s: record of %zu bytes over the "
                "limit of %zu for this connection: closed", c->peer,
                rm->refused, rm->max);
    else if (rc == -ENOBUFS)
        vl_glog("rpc", VL_LOG_WARNING, "%s: record of %zu bytes would take "
                "the incomplete records of this process over the limit of "
                "%zu bytes (%zu held): closed", c->peer, rm->refused,
                vrpc_buffered_max(), vrpc_buffered_bytes());
}


void
vrpc_conn_lim_delivered(vrpc_conn_t *c)
{
    atomic_fetch_add(&c->lim.n_calls_open, 1);
}


void
vrpc_conn_lim_sent_locked(vrpc_conn_t *c)
{
    unsigned n = atomic_load(&c->lim.n_calls_open);

    /* Floor 0: a client's own calls and a server's one-way calls are sent
     * with no call of the peer open. */
    while (n > 0
           && !atomic_compare_exchange_weak(&c->lim.n_calls_open, &n, n - 1))
        ;
}


int
vrpc_conn_lim_queue_locked(vrpc_conn_t *c, size_t n)
{
    size_t max = atomic_load(&c->lim.max_out);

    size_t queued = atomic_load(&c->lim.out_bytes);

    if (max != 0 && queued + n > max) {
        vl_glog("rpc", VL_LOG_WARNING, "%s: does not read: %zu bytes "
                "unsent, %zu more over the limit of %zu: closed", c->peer,
                queued, n, max);
        return -ENOBUFS;
    }
    atomic_store(&c->lim.out_bytes, queued + n);
    return 0;
}


void
vrpc_conn_lim_written_locked(vrpc_conn_t *c, size_t w)
{
    size_t queued = atomic_load(&c->lim.out_bytes);

    atomic_store(&c->lim.out_bytes, w < queued ? queued - w : 0);
}


bool
vrpc_conn_lim_close_locked(vrpc_conn_t *c)
{
    bool was_swept;

    vrpc_conn_lim_free(c); /* uncount now: the fd is about to go */
    pthread_mutex_lock(&sweep.lock);
    was_swept = c->lim.is_swept;
    if (was_swept) {
        if (c->lim.sweep_prev != NULL)
            c->lim.sweep_prev->lim.sweep_next = c->lim.sweep_next;
        else
            sweep.head = c->lim.sweep_next;
        if (c->lim.sweep_next != NULL)
            c->lim.sweep_next->lim.sweep_prev = c->lim.sweep_prev;
        c->lim.is_swept = false;
    }
    pthread_mutex_unlock(&sweep.lock);
    return was_swept;
}


void
vrpc_conn_lim_free(vrpc_conn_t *c)
{
    struct vrpc_conn_tally *tally = c->lim.tally;

    c->lim.tally = NULL;
    if (tally == NULL)
        return;
    atomic_fetch_sub(&tally->n_open, 1);
    vrpc_conn_tally_unref(tally);
}


void
vrpc_conn_lim_count(vrpc_conn_t *c, struct vrpc_conn_tally *tally)
{
    atomic_fetch_add(&tally->refs, 1);
    atomic_fetch_add(&tally->n_open, 1);
    pthread_mutex_lock(&c->lock);
    vrpc_conn_lim_free(c); /* a second adopt replaces the first */
    c->lim.tally = tally;
    pthread_mutex_unlock(&c->lock);
}


void
vrpc_conn_tally_unref(struct vrpc_conn_tally *tally)
{
    if (tally != NULL && atomic_fetch_sub(&tally->refs, 1) == 1)
        vl_free(tally);
}
