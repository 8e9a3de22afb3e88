/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * clnt: asynchronous, multiplexed RPC calls over one connection.
 *
 * Every call gets a fresh XID and an entry in a small hash table; the
 * reply, in whatever order it comes, is matched by XID and answered once.
 * When the connection closes, every entry still in the table is answered
 * -ENOTCONN before on_close is reported.
 *
 * Per call: struct clnt_call (malloc'd, freed once answered).
 * Threads: calls from any thread; replies on loop threads. clnt->lock
 *          guards the table; callbacks run without it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vrpc.h"

#define CLNT_BUCKETS 1024

struct clnt_call {
    struct clnt_call *next; /* bucket chain */
    uint32_t xid;           /* key */
    vrpc_reply_fn *cb;      /* answered once */
    void *cookie;           /* for cb */
};

struct vrpc_clnt {
    atomic_int refs;                  /* freed at 0 */
    vrpc_conn_t *conn;                /* owned ref */
    vrpc_clnt_event_fn *on_connect;   /* borrowed */
    vrpc_clnt_event_fn *on_close;     /* borrowed */
    void *arg;                        /* for the two above */
    pthread_mutex_t lock;             /* guards the fields below */
    struct clnt_call *buckets[CLNT_BUCKETS]; /* calls in flight */
    size_t n_pending;                 /* entries in buckets */
    uint32_t next_xid;                /* next XID to hand out */
    bool is_closed;                   /* no new calls */
    _Atomic uint64_t last_rx_ms;      /* when a record last arrived */
    vrpc_clnt_call_fn *on_call;       /* calls from the server, or NULL */
    void *call_arg;                   /* for on_call */
};


uint64_t
vrpc_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}


/* Removes and returns the call with xid, or NULL. */
static struct clnt_call *
clnt_take_locked(vrpc_clnt_t *clnt, uint32_t xid)
{
    struct clnt_call **pp = &clnt->buckets[xid % CLNT_BUCKETS];

    for (; *pp != NULL; pp = &(*pp)->next) {
        struct clnt_call *call = *pp;

        if (call->xid == xid) {
            *pp = call->next;
            clnt->n_pending--;
            return call;
        }
    }
    return NULL;
}


static int
clnt_accept_to_errno(int accept)
{
    switch (accept) {
    case VRPC_SUCCESS:
        return 0;
    case VRPC_PROG_UNAVAIL:
    case VRPC_PROG_MISMATCH:
    case VRPC_PROC_UNAVAIL:
        return -EOPNOTSUPP;
    case VRPC_GARBAGE_ARGS:
        return -EPROTO;
    case -1:
        return -EACCES;
    default:
        return -EIO;
    }
}


static void
clnt_on_record(vrpc_conn_t *c, vl_buf_t *rec, size_t len, void *arg)
{
    vrpc_clnt_t *clnt = arg;
    struct clnt_call *call;
    uint32_t xid;
    int accept;
    size_t off;

    atomic_store(&clnt->last_rx_ms, vrpc_now_ms());
    /* A call from the server (its callback program), not a reply. The
     * message type is the second word of every RPC message. */
    if (clnt->on_call != NULL && len >= 8 && rec->data[4] == 0
        && rec->data[5] == 0 && rec->data[6] == 0 && rec->data[7] == 0) {
        struct vrpc_call_hdr hdr;
        bool xid_ok;

        if (vrpc_decode_call(rec->data, len, &hdr, &off, &xid_ok) != 0) {
            vl_glog("rpc", VL_LOG_WARNING,
                    "%s: malformed call from the server, disconnecting",
                    vrpc_conn_peer(c));
            vrpc_conn_close(c, -EPROTO);
            return;
        }
        clnt->on_call(clnt, &hdr, rec, off, len, clnt->call_arg);
        return;
    }
    if (vrpc_decode_reply(rec->data, len, &xid, &accept, &off) != 0) {
        vl_glog("rpc", VL_LOG_WARNING, "%s: malformed reply, disconnecting",
                vrpc_conn_peer(c));
        vrpc_conn_close(c, -EPROTO);
        return;
    }
    pthread_mutex_lock(&clnt->lock);
    call = clnt_take_locked(clnt, xid);
    pthread_mutex_unlock(&clnt->lock);
    if (call == NULL) {
        vl_glog("rpc", VL_LOG_DEBUG, "%s: reply for unknown xid %u",
                vrpc_conn_peer(c), xid);
        return;
    }
    call->cb(call->cookie, clnt_accept_to_errno(accept), rec, off, len);
    vl_free(call);
}


static void
clnt_on_connect(vrpc_conn_t *c, int status, void *arg)
{
    vrpc_clnt_t *clnt = arg;

    if (status == 0)
        atomic_store(&clnt->last_rx_ms, vrpc_now_ms());
    /* The owner's on_connect usually sends its first call; a send that
     * fails closes the connection from inside, and on_close may drop the
     * last refs the owner and the connection held while that call still
     * runs (a TLS peer's alert right after the handshake did it): hold
     * one across the callback. */
    vrpc_clnt_ref(clnt);
    if (clnt->on_connect != NULL)
        clnt->on_connect(clnt, status, clnt->arg);
    vrpc_clnt_unref(clnt);
}


static void
clnt_on_close(vrpc_conn_t *c, int reason, void *arg)
{
    vrpc_clnt_t *clnt = arg;
    struct clnt_call *list = NULL, *call;

    pthread_mutex_lock(&clnt->lock);
    clnt->is_closed = true;
    for (size_t i = 0; i < CLNT_BUCKETS; i++) {
        while ((call = clnt->buckets[i]) != NULL) {
            clnt->buckets[i] = call->next;
            call->next = list;
            list = call;
        }
    }
    clnt->n_pending = 0;
    pthread_mutex_unlock(&clnt->lock);

    while ((call = list) != NULL) {
        list = call->next;
        call->cb(call->cookie, -ENOTCONN, NULL, 0, 0);
        vl_free(call);
    }
    if (clnt->on_close != NULL)
        clnt->on_close(clnt, reason, clnt->arg);
    vrpc_clnt_unref(clnt); /* the connection's ref */
}


static const struct vrpc_conn_ops clnt_conn_ops = {
    .on_connect = clnt_on_connect,
    .on_record = clnt_on_record,
    .on_close = clnt_on_close,
};


void
vrpc_clnt_set_call_handler(vrpc_clnt_t *clnt, vrpc_clnt_call_fn *fn,
                           void *arg)
{
    clnt->on_call = fn;
    clnt->call_arg = arg;
}


int
vrpc_clnt_new(vl_loop_t *loop, int fd, bool is_connecting,
              vrpc_clnt_event_fn *on_connect, vrpc_clnt_event_fn *on_close,
              void *arg, vrpc_clnt_t **out)
{
    vrpc_clnt_t *clnt;
    struct timespec ts;
    int rc;

    clnt = vl_calloc(NULL, 1, sizeof(*clnt), VL_MT_MISC);
    if (clnt == NULL) {
        close(fd);
        return -ENOMEM;
    }
    rc = pthread_mutex_init(&clnt->lock, NULL);
    if (rc != 0) {
        vl_free(clnt);
        close(fd);
        return -rc;
    }
    /* Two refs: the caller's and the connection's (dropped on close). */
    atomic_init(&clnt->refs, 2);
    clnt->on_connect = on_connect;
    clnt->on_close = on_close;
    clnt->arg = arg;
    clock_gettime(CLOCK_REALTIME, &ts);
    clnt->next_xid = (uint32_t)(ts.tv_nsec ^ (ts.tv_sec << 10));
    rc = vrpc_conn_new(loop, fd, is_connecting, &clnt_conn_ops, clnt,
                       &clnt->conn);
    if (rc != 0) {
        pthread_mutex_destroy(&clnt->lock);
        vl_free(clnt);
        return rc;
    }
    *out = clnt;
    return 0;
}


int
vrpc_clnt_start(vrpc_clnt_t *clnt)
{
    return vrpc_conn_start(clnt->conn);
}


vrpc_clnt_t *
vrpc_clnt_ref(vrpc_clnt_t *clnt)
{
    atomic_fetch_add(&clnt->refs, 1);
    return clnt;
}


void
vrpc_clnt_unref(vrpc_clnt_t *clnt)
{
    if (clnt == NULL || atomic_fetch_sub(&clnt->refs, 1) != 1)
        return;
    vrpc_conn_unref(clnt->conn);
    pthread_mutex_destroy(&clnt->lock);
    vl_free(clnt);
}


void
vrpc_clnt_close(vrpc_clnt_t *clnt)
{
    vrpc_conn_close(clnt->conn, -ENOTCONN);
}


size_t
vrpc_clnt_pending(vrpc_clnt_t *clnt)
{
    size_t n;

    pthread_mutex_lock(&clnt->lock);
    n = clnt->n_pending;
    pthread_mutex_unlock(&clnt->lock);
    return n;
}


uint64_t
vrpc_clnt_last_rx_ms(vrpc_clnt_t *clnt)
{
    return atomic_load(&clnt->last_rx_ms);
}


const char *
vrpc_clnt_peer(vrpc_clnt_t *clnt)
{
    return vrpc_conn_peer(clnt->conn);
}


vrpc_conn_t *
vrpc_clnt_conn(vrpc_clnt_t *clnt)
{
    return clnt->conn;
}


int
vrpc_clnt_call_buf(vrpc_clnt_t *clnt, uint32_t prog, uint32_t vers,
                   uint32_t proc, const struct vl_caller *caller,
                   xdrproc_t fn, void *args, const struct iovec *payload,
                   int n_payload, vl_buf_t *keep, vrpc_reply_fn *cb,
                   void *cookie)
{
    struct iovec iov[9];
    struct clnt_call *call, *mine;
    char *hdr = NULL;
    size_t hdr_len;
    uint32_t xid;
    int rc;

    if (n_payload > 8)
        return -EINVAL;
    call = vl_malloc(NULL, sizeof(*call), VL_MT_MISC);
    if (call == NULL)
        return -ENOMEM;
    pthread_mutex_lock(&clnt->lock);
    if (clnt->is_closed) {
        pthread_mutex_unlock(&clnt->lock);
        vl_free(call);
        return -ENOTCONN;
    }
    xid = clnt->next_xid++;
    call->xid = xid;
    call->cb = cb;
    call->cookie = cookie;
    call->next = clnt->buckets[xid % CLNT_BUCKETS];
    clnt->buckets[xid % CLNT_BUCKETS] = call;
    clnt->n_pending++;
    pthread_mutex_unlock(&clnt->lock);

    rc = vrpc_encode_call(xid, prog, vers, proc, caller, fn, args, &hdr,
                          &hdr_len);
    if (rc == 0) {
        iov[0].iov_base = hdr;
        iov[0].iov_len = hdr_len;
        for (int i = 0; i < n_payload; i++)
            iov[i + 1] = payload[i];
        rc = vrpc_conn_send_buf(clnt->conn, iov, n_payload + 1, keep);
        vl_free(hdr);
    }
    if (rc == 0)
        return 0;
    /* Not sent: take the entry back unless the close path already
     * answered it (then the answer stands and we report success). */
    pthread_mutex_lock(&clnt->lock);
    mine = clnt_take_locked(clnt, xid);
    pthread_mutex_unlock(&clnt->lock);
    if (mine == NULL)
        return 0;
    vl_free(mine);
    return rc;
}


int
vrpc_clnt_call(vrpc_clnt_t *clnt, uint32_t prog, uint32_t vers,
               uint32_t proc, const struct vl_caller *caller, xdrproc_t fn,
               void *args, const struct iovec *payload, int n_payload,
               vrpc_reply_fn *cb, void *cookie)
{
    return vrpc_clnt_call_buf(clnt, prog, vers, proc, caller, fn, args,
                              payload, n_payload, NULL, cb, cookie);
}
