/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conn-limits: one connection's share of the limits of vrpc.h (struct
 * vrpc_limits), as conn.c, conn-out.c and listen.c see it. Private to
 * libvrpc; conn-limits.c has the rules.
 */
#ifndef VRPC_CONN_LIMITS_H
#define VRPC_CONN_LIMITS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vrpc.h"

/* A listener's count of open connections, shared with them (they may
 * outlive it). */
struct vrpc_conn_tally {
    atomic_uint refs;     /* the listener's and one per counted conn */
    atomic_uint n_open;   /* connections counted and not yet closed */
};

struct conn_lim {
    atomic_size_t max_record;      /* the reader copies it to rm.max */
    atomic_size_t max_out;         /* 0: no cap */
    atomic_uint record_ms;         /* 0: no deadline */
    atomic_uint idle_ms;           /* 0: never idle */
    atomic_uint_fast64_t last_rx_ms;   /* the last input event */
    atomic_uint_fast64_t rec_start_ms; /* a record begun then; 0: none */
    atomic_uint n_calls_open;      /* records delivered minus records
                                      sent (floor 0): calls unanswered */
    uint64_t n_done_seen;          /* rm.n_done at the last read end;
                                      the parser holder's */
    atomic_size_t out_bytes;       /* unsent bytes queued; written under
                                      c->lock, read by the sweeper */
    struct vrpc_conn *sweep_prev;  /* the sweeper's list (holds a conn
                                      ref while listed); under its lock */
    struct vrpc_conn *sweep_next;  /* likewise */
    bool is_swept;                 /* listed; under the sweeper's lock */
    struct vrpc_conn_tally *tally; /* one ref, or NULL; under c->lock */
};

struct vrpc_conn;

/* vrpc_conn_new: no limit but max_record VRPC_MAX_RECORD. */
void vrpc_conn_lim_init(struct vrpc_conn *c);
/* vrpc_conn_start, under c->lock: arms the deadline check if needed. */
int vrpc_conn_lim_start_locked(struct vrpc_conn *c);
/* The parser holder, before reading: picks up a new max_record. */
void vrpc_conn_lim_read_begin(struct vrpc_conn *c);
/* The parser holder, after reading with result rc: notes the time and
 * whether a record is begun; logs why when rc is a limit's error. */
void vrpc_conn_lim_read_end(struct vrpc_conn *c, int rc);
/* A record is about to be delivered (a call, on a server). */
void vrpc_conn_lim_delivered(struct vrpc_conn *c);
/* A record is sent: the answer to a call, on a server. Under c->lock. */
void vrpc_conn_lim_sent_locked(struct vrpc_conn *c);
/* n more bytes go to the output queue: 0, or -ENOBUFS over max_out
 * (logged; the sender closes). Under c->lock. */
int vrpc_conn_lim_queue_locked(struct vrpc_conn *c, size_t n);
/* w queued bytes were written (or dropped: w = all). Under c->lock. */
void vrpc_conn_lim_written_locked(struct vrpc_conn *c, size_t w);
/* vrpc_conn_close, under c->lock: takes the connection off the deadline
 * sweeper's list and uncounts it; true if the caller must drop the
 * list's ref (after unlocking). */
bool vrpc_conn_lim_close_locked(struct vrpc_conn *c);
/* The last unref: uncounts a connection never closed. */
void vrpc_conn_lim_free(struct vrpc_conn *c);
/* Why c must be closed at now (1: record deadline, 2: idle), or 0; *age
 * gets the time the deadline measures (the sweeper; tests). */
int vrpc_conn_lim_expired(struct vrpc_conn *c, uint64_t now,
                          uint64_t *age /* OUT */);
/* listen.c: counts c against tally (a ref taken). */
void vrpc_conn_lim_count(struct vrpc_conn *c, struct vrpc_conn_tally *tally);
void vrpc_conn_tally_unref(struct vrpc_conn_tally *tally);

#endif /* VRPC_CONN_LIMITS_H */
