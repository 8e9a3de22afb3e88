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
 * The deadlines are checked by one timer per connection on the loop
 * (vl_timer), every quarter of the shorter deadline (20 ms to 1 s), only
 * while the connection has one; the timer holds a connection ref.
 * Threads: the atomics are read anywhere; out_bytes, timer and tally are
 * under c->lock.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "conn-int.h"

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
    c->lim.out_bytes = 0;
    c->lim.timer = NULL;
    c->lim.tally = NULL;
}


static unsigned
lim_tick_ms(unsigned record_ms, unsigned idle_ms)
{
    unsigned m = record_ms;

    if (idle_ms != 0 && (m == 0 || idle_ms < m))
        m = idle_ms;
    m /= 4;
    return m < 20 ? 20 : m > 1000 ? 1000 : m;
}


static void lim_check(void *arg);


/* Arms the deadline check unless it is armed, not needed, or the
 * connection is not running. */
static int
lim_arm_locked(vrpc_conn_t *c)
{
    unsigned record_ms = atomic_load(&c->lim.record_ms);
    unsigned idle_ms = atomic_load(&c->lim.idle_ms);

    if (c->lim.timer != NULL || !c->is_started || c->is_closed
        || (record_ms == 0 && idle_ms == 0))
        return 0;
    vrpc_conn_ref(c); /* the timer's */
    c->lim.timer = vl_timer_add(c->loop, lim_tick_ms(record_ms, idle_ms),
                                lim_check, c);
    if (c->lim.timer == NULL) {
        vrpc_conn_unref(c); /* not the last: the caller holds one */
        return -ENOMEM;
    }
    return 0;
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
        vl_glog("rpc", VL_LOG_WARNING, "%s: no memory for its deadline "
                "timer: deadlines not enforced", c->peer);
    pthread_mutex_unlock(&c->lock);
}


static void
lim_check(void *arg)
{
    vrpc_conn_t *c = arg;
    uint64_t now = vrpc_now_ms();
    uint64_t rec_start = atomic_load(&c->lim.rec_start_ms);
    uint64_t last_rx = atomic_load(&c->lim.last_rx_ms);
    unsigned record_ms = atomic_load(&c->lim.record_ms);
    unsigned idle_ms = atomic_load(&c->lim.idle_ms);
    bool is_rearmed = false;
    int why = 0; /* 1: record deadline, 2: idle */

    pthread_mutex_lock(&c->lock);
    c->lim.timer = NULL; /* ours ran: see vl_timer_cancel's note */
    if (c->is_closed) {
        pthread_mutex_unlock(&c->lock);
        vrpc_conn_unref(c); /* the timer's */
        return;
    }
    /* (1) a record begun too long ago; (2) idle: nothing begun, no call
     * unanswered, nothing left to send, nothing received for idle_ms. */
    if (record_ms != 0 && rec_start != 0 && now - rec_start >= record_ms)
        why = 1;
    else if (idle_ms != 0 && rec_start == 0
             && atomic_load(&c->lim.n_calls_open) == 0
             && c->lim.out_bytes == 0 && now - last_rx >= idle_ms)
        why = 2;
    if (why == 0 && (record_ms != 0 || idle_ms != 0)) {
        /* The timer's ref passes to the next check. */
        c->lim.timer = vl_timer_add(c->loop,
                                    lim_tick_ms(record_ms, idle_ms),
                                    lim_check, c);
        is_rearmed = c->lim.timer != NULL;
        if (!is_rearmed)
            why = 3;
    }
    pthread_mutex_unlock(&c->lock);

    if (why == 1)
        vl_glog("rpc", VL_LOG_WARNING, "%s: record begun %llu ms ago not "
                "complete within the limit of %u ms: closed", c->peer,
                (unsigned long long)(now - rec_start), record_ms);
    else if (why == 2)
        vl_glog("rpc", VL_LOG_INFO, "%s: idle for %llu ms (limit %u ms): "
                "closed", c->peer, (unsigned long long)(now - last_rx),
                idle_ms);
    else if (why == 3)
        vl_glog("rpc", VL_LOG_WARNING, "%s: no memory for its deadline "
                "timer: closed", c->peer);
    if (why != 0)
        vrpc_conn_close(c, why == 3 ? -ENOMEM : -ETIMEDOUT);
    if (!is_rearmed)
        vrpc_conn_unref(c); /* the timer's */
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

    if (max != 0 && c->lim.out_bytes + n > max) {
        vl_glog("rpc", VL_LOG_WARNING, "%s: does not read: %zu bytes "
                "unsent, %zu more over the limit of %zu: closed", c->peer,
                c->lim.out_bytes, n, max);
        return -ENOBUFS;
    }
    c->lim.out_bytes += n;
    return 0;
}


void
vrpc_conn_lim_written_locked(vrpc_conn_t *c, size_t w)
{
    c->lim.out_bytes = w < c->lim.out_bytes ? c->lim.out_bytes - w : 0;
}


bool
vrpc_conn_lim_close_locked(vrpc_conn_t *c)
{
    vl_timer_t *t = c->lim.timer;

    c->lim.timer = NULL;
    vrpc_conn_lim_free(c); /* uncount now: the fd is about to go */
    return t != NULL && vl_timer_cancel(t);
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
