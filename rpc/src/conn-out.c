/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conn-out: the output side of a connection (conn.c has the rest).
 *
 * vrpc_conn_send (any thread) writes the record directly when nothing is
 * queued. What the socket does not take is queued: bytes inside the
 * buffer the sender names as keep (a read reply's data, a write's
 * payload) are not copied, the entry holds a ref on keep and sends from
 * it; only the small rest (record mark, XDR header) is copied. A 1 MiB
 * read reply to a busy client thus costs no memcpy, and the buffer goes
 * back to its pool once the last byte is written. The output callback
 * (EPOLLOUT, one-shot on a dup of the socket) flushes the queue, several
 * records per sendmsg.
 * Threads: conn->lock guards the queue and is_out_armed (set by whoever
 *          arms EPOLLOUT, cleared by the callback when it runs, so the
 *          callback never runs twice at once).
 */
#include "config.h"

#include <errno.h>
#include <arpa/inet.h>
#include <string.h>

#include "conn-int.h"

/* Segments handed to one sendmsg when flushing the queue. */
#define CONN_FLUSH_IOV 64


static void
conn_out_free(struct vrpc_out *o)
{
    vl_buf_unref(o->keep);
    vl_free(o);
}


void
vrpc_conn_out_clear_locked(vrpc_conn_t *c)
{
    struct vrpc_out *o;

    while ((o = c->out_head) != NULL) {
        c->out_head = o->next;
        conn_out_free(o);
    }
    c->out_tail = NULL;
    atomic_store(&c->lim.out_bytes, 0);
}


/* Marks w bytes written from the head of the queue, freeing the records
 * that are complete. */
void
vrpc_conn_out_consume_locked(vrpc_conn_t *c, size_t w)
{
    struct vrpc_out *o;

    vrpc_conn_lim_written_locked(c, w);
    while ((o = c->out_head) != NULL) {
        while (o->cur < o->n_iov) {
            struct iovec *v = &o->iov[o->cur];

            if (w < v->iov_len) {
                v->iov_base = (char *)v->iov_base + w;
                v->iov_len -= w;
                return;
            }
            w -= v->iov_len;
            o->cur++;
        }
        c->out_head = o->next;
        if (c->out_head == NULL)
            c->out_tail = NULL;
        conn_out_free(o);
    }
}


/* Writes queued bytes until the queue is empty or the socket is full.
 * Returns 0 or -errno of a fatal write error. */
static int
conn_flush_locked(vrpc_conn_t *c)
{
    struct iovec v[CONN_FLUSH_IOV];

    while (c->out_head != NULL) {
        struct msghdr mh = {.msg_iov = v};
        size_t want = 0;
        ssize_t w;
        int n = 0;

        for (struct vrpc_out *o = c->out_head; o != NULL && n < CONN_FLUSH_IOV;
             o = o->next) {
            for (int i = o->cur; i < o->n_iov && n < CONN_FLUSH_IOV; i++) {
                v[n++] = o->iov[i];
                want += o->iov[i].iov_len;
            }
        }
        mh.msg_iovlen = (size_t)n;
        w = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
            return -errno;
        }
        vrpc_conn_out_consume_locked(c, (size_t)w);
        if ((size_t)w < want)
            return 0; /* the socket is full */
    }
    return 0;
}


static bool
conn_in_keep(const vl_buf_t *keep, const struct iovec *v)
{
    const char *b = v->iov_base;

    return keep != NULL && b >= keep->data
           && v->iov_len <= keep->size
           && (size_t)(b - keep->data) <= keep->size - v->iov_len;
}


/* Queues the unsent tail of iov (skip bytes already written): segments
 * inside keep by reference, the others copied. */
static int
conn_queue_locked(vrpc_conn_t *c, const struct iovec *iov, int n_iov,
                  size_t skip, vl_buf_t *keep)
{
    struct vrpc_out *o;
    size_t n_copy = 0, n_unsent = 0, pos = 0, s = skip;
    bool is_kept = false;
    int rc;

    for (int i = 0; i < n_iov; i++) {
        size_t l = iov[i].iov_len;

        if (s >= l) {
            s -= l;
            continue;
        }
        if (conn_in_keep(keep, &iov[i]))
            is_kept = true;
        else
            n_copy += l - s;
        n_unsent += l - s;
        s = 0;
    }
    rc = vrpc_conn_lim_queue_locked(c, n_unsent);
    if (rc != 0)
        return rc;
    o = vl_malloc(NULL, sizeof(*o) + n_copy, VL_MT_MISC);
    if (o == NULL) {
        vrpc_conn_lim_written_locked(c, n_unsent); /* not queued */
        return -ENOMEM;
    }
    o->next = NULL;
    o->keep = is_kept ? vl_buf_ref(keep) : NULL;
    o->cur = 0;
    o->n_iov = 0;
    for (int i = 0; i < n_iov; i++) {
        const char *base = iov[i].iov_base;
        size_t l = iov[i].iov_len;
        struct iovec *d;

        if (skip >= l) {
            skip -= l;
            continue;
        }
        d = &o->iov[o->n_iov++];
        d->iov_len = l - skip;
        if (conn_in_keep(keep, &iov[i])) {
            d->iov_base = (char *)base + skip;
        } else {
            memcpy(o->copy + pos, base + skip, l - skip);
            d->iov_base = o->copy + pos;
            pos += l - skip;
        }
        skip = 0;
    }
    if (c->out_tail != NULL)
        c->out_tail->next = o;
    else
        c->out_head = o;
    c->out_tail = o;
    return 0;
}


static void conn_out_cb(vl_io_t *io, int fd, uint32_t events, void *arg);


int
vrpc_conn_arm_out_locked(vrpc_conn_t *c)
{
    int rc = 0;

    if (c->is_out_armed || !c->is_started || c->is_closed)
        return 0;
    if (c->io_out == NULL)
        rc = vl_io_add(c->loop, c->out_fd, EPOLLOUT, conn_out_cb, c,
                       &c->io_out);
    else
        rc = vl_io_modify(c->io_out, EPOLLOUT);
    if (rc == 0)
        c->is_out_armed = true;
    return rc;
}


int
vrpc_conn_send_buf(vrpc_conn_t *c, const struct iovec *iov, int n_iov,
                   vl_buf_t *keep)
{
    struct iovec v[CONN_MAX_IOV + 1];
    uint32_t mark;
    size_t total = 0, written = 0;
    int rc = 0;
    int n = 0;

    if (n_iov > CONN_MAX_IOV || n_iov < 0)
        return -EINVAL;
    for (int i = 0; i < n_iov; i++)
        total += iov[i].iov_len;
    if (total > VRPC_MAX_RECORD)
        return -EMSGSIZE;
    mark = htonl((uint32_t)total | VRPC_LAST_FRAG);
    v[n].iov_base = &mark;
    v[n++].iov_len = sizeof(mark);
    for (int i = 0; i < n_iov; i++)
        if (iov[i].iov_len > 0)
            v[n++] = iov[i];
    total += sizeof(mark);

    pthread_mutex_lock(&c->lock);
    if (c->is_closed) {
        rc = -ENOTCONN;
        goto out;
    }
    vrpc_conn_lim_sent_locked(c);
    if (c->ssl != NULL) {
        /* TLS: everything goes through the queue (bulk by reference)
         * and is encrypted from there, once the handshake is done. */
        rc = conn_queue_locked(c, v, n, 0, keep);
        if (rc == 0 && c->is_tls_up)
            rc = vrpc_conn_tls_flush_locked(c);
        goto out;
    }
    if (c->out_head == NULL && !c->is_connecting && c->is_started) {
        struct msghdr mh = {.msg_iov = v, .msg_iovlen = (size_t)n};
        ssize_t w;

        do {
            w = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        } while (w < 0 && errno == EINTR);
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            rc = -errno;
            goto out;
        }
        written = w > 0 ? (size_t)w : 0;
        if (written == total)
            goto out;
    }
    rc = conn_queue_locked(c, v, n, written, keep);
    if (rc == 0 && !c->is_connecting)
        rc = vrpc_conn_arm_out_locked(c);
out:
    pthread_mutex_unlock(&c->lock);
    /* A failed write, or a partial record we could not queue, leaves the
     * stream unusable. */
    if (rc != 0 && rc != -ENOTCONN && (rc != -ENOMEM || written > 0)) {
        vrpc_conn_close(c, rc);
        rc = -ENOTCONN;
    }
    return rc;
}


int
vrpc_conn_send(vrpc_conn_t *c, const struct iovec *iov, int n_iov)
{
    return vrpc_conn_send_buf(c, iov, n_iov, NULL);
}


static void
conn_out_cb(vl_io_t *io, int fd, uint32_t events, void *arg)
{
    vrpc_conn_t *c = vrpc_conn_ref(arg);
    bool connecting;
    int rc = 0;

    (void)io;
    (void)fd;
    (void)events;
    pthread_mutex_lock(&c->lock);
    if (c->is_closed) {
        pthread_mutex_unlock(&c->lock);
        vrpc_conn_unref(c);
        return;
    }
    c->is_out_armed = false; /* this event fired; arming is allowed again */
    c->is_out_running = true;
    c->out_thread = pthread_self();
    connecting = c->is_connecting;
    pthread_mutex_unlock(&c->lock);

    if (connecting)
        rc = vrpc_conn_connect_done(c);

    pthread_mutex_lock(&c->lock);
    if (rc == 0 && !c->is_closed && c->ssl != NULL) {
        /* Arms EPOLLOUT itself when the socket fills. */
        if (c->is_tls_up)
            rc = vrpc_conn_tls_flush_locked(c);
    } else if (rc == 0 && !c->is_closed) {
        rc = conn_flush_locked(c);
        if (rc == 0 && c->out_head != NULL)
            rc = vrpc_conn_arm_out_locked(c);
    }
    pthread_mutex_unlock(&c->lock);
    /* The input side's SSL call (handshake, or a read) waited for this
     * writable event. */
    if (rc == 0 && c->ssl != NULL
        && atomic_exchange(&c->is_tls_in_wants_out, false))
        vrpc_conn_input_kick(c);
    if (rc != 0)
        vrpc_conn_close(c, rc); /* still marked running, see conn_in_cb */
    pthread_mutex_lock(&c->lock);
    c->is_out_running = false;
    pthread_mutex_unlock(&c->lock);
    vrpc_conn_unref(c);
}
