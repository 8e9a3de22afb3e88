/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conn-int: what conn.c (lifetime, input, close) and conn-out.c (output
 * queue, sending, connect completion's EPOLLOUT) share about one
 * connection. Private to libvrpc; see conn.c for the threading rules.
 */
#ifndef VRPC_CONN_INT_H
#define VRPC_CONN_INT_H

#include <pthread.h>

#include "conn-limits.h"
#include "tls.h"
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
    /* TLS (conn-tls.c); all unused while ssl is NULL (plain). */
    SSL *ssl;                         /* owned, or NULL: clear text */
    pthread_mutex_t ssl_lock;         /* held around each call on ssl
                                         only; taken after lock */
    bool is_tls_client;               /* we connected: on_connect runs
                                         after the handshake */
    bool is_tls_up;                   /* handshake done; written by the
                                         parser holder under lock */
    atomic_bool is_tls_in_wants_out;  /* the reader's SSL call wants the
                                         socket writable: the output
                                         event kicks the input side */
    atomic_bool is_tls_out_wants_in;  /* SSL_write wants a read first:
                                         the reader flushes after it */
    vl_timer_t *tls_deadline;         /* handshake deadline (holds a
                                         ref), or NULL; under lock */
    char *tls_wbuf;                   /* owned; plaintext of the record
                                         being written; under lock */
    size_t tls_wlen;                  /* valid bytes in tls_wbuf */
    size_t tls_woff;                  /* bytes of it SSL_write took */
    char tls_peer_cn[VRPC_TLS_CN_MAX]; /* verified peer's common name,
                                          written before is_tls_up */
    char tls_err[512];                /* why TLS failed, or ""; under
                                         lock */
    struct conn_lim lim;              /* conn-limits.c: limits, deadline
                                         timer, listener's count */
};

/* conn-out.c: makes sure an EPOLLOUT event will come (registering the
 * output side on first use); never re-arms one that may still be
 * pending. Under c->lock. */
int vrpc_conn_arm_out_locked(vrpc_conn_t *c);
/* conn-out.c: drops every queued record (and the refs it holds). Under
 * c->lock, or at the last unref. */
void vrpc_conn_out_clear_locked(vrpc_conn_t *c);
/* conn-out.c: marks w bytes of the queue written. Under c->lock. */
void vrpc_conn_out_consume_locked(vrpc_conn_t *c, size_t w);
/* conn.c: queues a parsed record (taking its ref); 0 or -ENOMEM. */
int vrpc_conn_pend_push(vrpc_conn_t *c, vl_buf_t *rec, size_t len);
/* conn.c: runs the input side on this thread (reads, or flags the
 * parser holder to read again): the output event's kick for TLS. */
void vrpc_conn_input_kick(vrpc_conn_t *c);
/* conn-tls.c: frees the TLS state at the last unref. */
void vrpc_conn_tls_free(vrpc_conn_t *c);
/* conn-tls.c: arms the handshake deadline (vrpc_conn_start). Under
 * c->lock. */
int vrpc_conn_tls_start_locked(vrpc_conn_t *c);
/* conn-tls.c: cancels the deadline; true if the caller must drop the
 * timer's ref (after unlocking). Under c->lock. */
bool vrpc_conn_tls_cancel_locked(vrpc_conn_t *c);
/* conn-tls.c: the parser holder's input step: handshake, then SSL_read
 * into the parser. Returns like conn.c's plain read. */
int vrpc_conn_tls_input(vrpc_conn_t *c);
/* conn-tls.c: writes queued bytes through SSL until the queue is empty
 * or the socket full (EPOLLOUT armed). 0 or -errno. Under c->lock, once
 * is_tls_up. */
int vrpc_conn_tls_flush_locked(vrpc_conn_t *c);
/* conn.c: finishes a non-blocking connect (first EPOLLOUT): 0, or -errno
 * (then the caller closes). */
int vrpc_conn_connect_done(vrpc_conn_t *c);

#endif /* VRPC_CONN_INT_H */
