/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conn-int: what conn.c (lifetime, input, close) and conn-out.c (output
 * queue, sending, connect completion's EPOLLOUT) share about one
 * connection. Private to libvrpc; see conn.c for the threading rules.
 */
#ifndef VRPC_CONN_INT_H
#define VRPC_CONN_INT_H

#include <pthread.h>

#include "vrpc.h"

#define CONN_STAGE_SIZE (64 * 1024)
#define CONN_DIRECT_MIN (16 * 1024)  /* read bodies this big in place */
#define CONN_SOCK_BUF (4 * 1024 * 1024)
#define CONN_MAX_IOV 16
#define CONN_READS_PER_CB 64        /* then deliver before reading on */
#define CONN_MAX_DRAINERS 2         /* threads delivering one conn's queue */
/* A body with at least CONN_LOWAT_MIN bytes still to come raises no input
 * event until min(rest, CONN_LOWAT_MAX) bytes wait in the socket. */
#define CONN_LOWAT_MIN (128 * 1024)
#define CONN_LOWAT_MAX (2 * 1024 * 1024)

/* A parsed record waiting to be delivered. */
struct conn_rec {
    struct conn_rec *next; /* queue link */
    vl_buf_t *rec;         /* owned ref */
    size_t len;            /* record length */
};

/* The unsent part of one record. Segments inside keep (a reply's read
 * data, a write's payload) are sent from keep itself, which the entry
 * holds a ref on; the rest (mark, XDR header: small) is copied to copy[]
 * since the sender frees it on return. */
struct vrpc_out {
    struct vrpc_out *next;  /* queue link */
    vl_buf_t *keep;         /* owned ref, or NULL when all is copied */
    int cur;                /* first unsent segment of iov */
    int n_iov;              /* segments in iov */
    struct iovec iov[CONN_MAX_IOV + 1]; /* iov[cur] advanced as written */
    char copy[];            /* owned copies of the segments not in keep */
};

struct vrpc_conn {
    atomic_int refs;                  /* freed at 0 */
    vl_loop_t *loop;                  /* borrowed */
    int fd;                           /* owned; closed at the last unref */
    int out_fd;                       /* owned dup of fd for io_out, or -1 */
    const struct vrpc_conn_ops *ops;  /* borrowed, static */
    void *arg;                        /* for ops */
    pthread_mutex_t lock;             /* guards the fields below it */
    vl_io_t *io_in;                   /* owned; EPOLLIN|EPOLLET on fd */
    bool is_reading;                  /* a thread holds the parser */
    bool is_read_again;               /* an input event came while it
                                         did: it reads once more */
    struct conn_rec *pend_head;       /* owned; parsed, not delivered */
    struct conn_rec *pend_tail;       /* last of the queue */
    unsigned n_drainers;              /* threads popping pend + posted
                                         drain tasks */
    unsigned n_delivering;            /* threads inside on_record */
    vl_io_t *io_out;                  /* owned; EPOLLOUT on out_fd */
    struct vrpc_out *out_head;        /* owned queue of unsent bytes */
    struct vrpc_out *out_tail;        /* last of the queue */
    bool is_out_armed;                /* an EPOLLOUT event may be pending */
    bool is_started;                  /* vrpc_conn_start ran */
    bool is_closed;                   /* vrpc_conn_close ran */
    bool is_close_done;               /* on_close has returned */
    bool is_connecting;               /* waiting for connect(2) */
    bool is_out_running;              /* the output callback runs... */
    pthread_t out_thread;             /* ...on this thread */
    pthread_t closer;                 /* thread running the close */
    pthread_cond_t close_cond;        /* signalled when close is done and
                                         when n_delivering drops */
    struct vrpc_rm rm;                /* input callback's parser */
    char *stage;                      /* owned; input staging buffer */
    size_t stage_len;                 /* valid bytes in stage */
    size_t stage_off;                 /* bytes of stage already parsed */
    int rcv_lowat;                    /* SO_RCVLOWAT in force (0: the
                                         default); the parser holder's */
    char peer[64];                    /* "addr:port" */
    char peer_addr[48];               /* "addr" */
    atomic_bool is_peer_shut;         /* the input event said the peer
                                         shut down (EPOLLRDHUP): read to
                                         the end, not to a short read */
};

/* conn-out.c: makes sure an EPOLLOUT event will come (registering the
 * output side on first use); never re-arms one that may still be
 * pending. Under c->lock. */
int vrpc_conn_arm_out_locked(vrpc_conn_t *c);
/* conn-out.c: drops every queued record (and the refs it holds). Under
 * c->lock, or at the last unref. */
void vrpc_conn_out_clear_locked(vrpc_conn_t *c);
/* conn.c: finishes a non-blocking connect (first EPOLLOUT): 0, or -errno
 * (then the caller closes). */
int vrpc_conn_connect_done(vrpc_conn_t *c);

#endif /* VRPC_CONN_INT_H */
