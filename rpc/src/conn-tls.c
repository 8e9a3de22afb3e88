/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conn-tls: a connection's TLS side (OpenSSL in user space; this kernel
 * has no TLS offload), used only when vrpc_conn_set_tls gave it an SSL
 * object: a plain connection never enters this file.
 *
 * Handshake: the connection is not up until it completes. The thread
 * holding the parser (conn.c's is_reading) drives SSL_do_handshake from
 * the input event; when OpenSSL wants to write into a full socket, the
 * output event kicks the input side again (is_tls_in_wants_out). A
 * client's on_connect runs only once the handshake is done. A deadline
 * timer (VRPC_TLS_HANDSHAKE_MS) closes a connection that never finishes.
 * Input:   the parser holder calls SSL_read until OpenSSL says WANT_READ
 *          (it read the socket to EAGAIN, so the next bytes raise a new
 *          edge); no short-read shortcut and no SO_RCVLOWAT, since TLS
 *          records do not line up with the bytes the parser waits for.
 * Output:  under conn->lock, queued bytes are copied into tls_wbuf (one
 *          TLS record, 16 KiB) and handed to SSL_write; a WANT_WRITE
 *          leaves them there and arms EPOLLOUT, and the retry passes the
 *          same bytes, as OpenSSL requires.
 * Threads: an SSL object is not safe for SSL_read and SSL_write at once:
 *          ssl_lock is held around every call on it, and only around the
 *          call. Lock order: conn->lock, then ssl_lock (the reader holds
 *          ssl_lock alone).
 * Errors:  OpenSSL's reason (and the certificate verification result) is
 *          logged once on this end, kept in tls_err for the owner's
 *          message, and the connection closes; nothing falls back to
 *          clear text.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "conn-int.h"

/* One TLS record's worth of plaintext per SSL_write. */
#define CONN_TLS_WBUF SSL3_RT_MAX_PLAIN_LENGTH


int
vrpc_conn_set_tls(vrpc_conn_t *c, vrpc_tls_t *t, const char *host,
                  vl_err_t *err)
{
    SSL *ssl;
    int rc;

    ssl = vrpc_tls_ssl_new(t, host, err);
    if (ssl == NULL)
        return -EINVAL;
    c->tls_wbuf = vl_malloc(NULL, CONN_TLS_WBUF, VL_MT_MISC);
    if (c->tls_wbuf == NULL) {
        SSL_free(ssl);
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    rc = pthread_mutex_init(&c->ssl_lock, NULL);
    if (rc != 0) {
        vl_free(c->tls_wbuf);
        c->tls_wbuf = NULL;
        SSL_free(ssl);
        vl_err_set(err, "mutex: %s", strerror(rc));
        return -rc;
    }
    if (vrpc_tls_attach_fd(ssl, c->fd) != 0) {
        pthread_mutex_destroy(&c->ssl_lock);
        vl_free(c->tls_wbuf);
        c->tls_wbuf = NULL;
        SSL_free(ssl);
        vl_err_set(err, "cannot attach TLS to the socket");
        return -EINVAL;
    }
    c->is_tls_client = !vrpc_tls_is_server(t);
    if (c->is_tls_client)
        SSL_set_connect_state(ssl);
    else
        SSL_set_accept_state(ssl);
    c->ssl = ssl;
    return 0;
}


void
vrpc_conn_tls_free(vrpc_conn_t *c)
{
    if (c->ssl == NULL)
        return;
    SSL_free(c->ssl);
    c->ssl = NULL;
    pthread_mutex_destroy(&c->ssl_lock);
    vl_free(c->tls_wbuf);
    c->tls_wbuf = NULL;
}


const char *
vrpc_conn_tls_peer_cn(vrpc_conn_t *c)
{
    const char *cn = NULL;

    if (c->ssl == NULL)
        return NULL;
    pthread_mutex_lock(&c->lock);
    if (c->is_tls_up && c->tls_peer_cn[0] != '\0')
        cn = c->tls_peer_cn; /* written once, before is_tls_up */
    pthread_mutex_unlock(&c->lock);
    return cn;
}


bool
vrpc_conn_is_tls(const vrpc_conn_t *c)
{
    return c->ssl != NULL;
}


void
vrpc_conn_tls_error(vrpc_conn_t *c, char *buf, size_t len)
{
    pthread_mutex_lock(&c->lock);
    snprintf(buf, len, "%s", c->tls_err);
    pthread_mutex_unlock(&c->lock);
}


/* Records and logs why the TLS side failed (the first reason only: what
 * follows it is a consequence). Under c->lock. */
static void
conn_tls_fail_locked(vrpc_conn_t *c, const char *what, const char *why)
{
    if (c->tls_err[0] != '\0')
        return;
    snprintf(c->tls_err, sizeof(c->tls_err), "%s: %.40s %.300s", c->peer,
             what, why);
    vl_glog("rpc", VL_LOG_ERROR, "%s", c->tls_err);
}


static void
conn_tls_fail(vrpc_conn_t *c, const char *what, const char *why)
{
    pthread_mutex_lock(&c->lock);
    conn_tls_fail_locked(c, what, why);
    pthread_mutex_unlock(&c->lock);
}


/* OpenSSL's reason for a failed call (err is SSL_get_error's answer),
 * with the certificate verification result when that is what failed.
 * Under ssl_lock, on the thread that made the call. */
static void
conn_tls_reason_locked(vrpc_conn_t *c, int err, int sys_errno, char *buf,
                       size_t len)
{
    long v = SSL_get_verify_result(c->ssl);

    if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
        snprintf(buf, len, "%s",
                 sys_errno != 0 ? strerror(sys_errno)
                                : "connection closed by the peer (is TLS "
                                  "on at the other end?)");
        return;
    }
    vrpc_tls_err_string(buf, len);
    if (v != X509_V_OK) {
        size_t n = strlen(buf);

        snprintf(buf + n, len - n, " (%s)", X509_verify_cert_error_string(v));
    }
    if (strstr(buf, "wrong version number") != NULL
        || strstr(buf, "packet length too long") != NULL
        || strstr(buf, "http request") != NULL) {
        size_t n = strlen(buf);

        snprintf(buf + n, len - n, " (the peer does not speak TLS)");
    }
}


static void
conn_tls_deadline(void *arg)
{
    vrpc_conn_t *c = arg;
    bool is_late;

    pthread_mutex_lock(&c->lock);
    c->tls_deadline = NULL; /* the loop frees the timer when we return */
    is_late = !c->is_tls_up && !c->is_closed;
    pthread_mutex_unlock(&c->lock);
    if (is_late) {
        conn_tls_fail(c, "TLS handshake", "timed out");
        vrpc_conn_close(c, -ETIMEDOUT);
    }
    vrpc_conn_unref(c); /* the timer's ref */
}


int
vrpc_conn_tls_start_locked(vrpc_conn_t *c)
{
    vrpc_conn_ref(c);
    c->tls_deadline = vl_timer_add(c->loop, VRPC_TLS_HANDSHAKE_MS,
                                   conn_tls_deadline, c);
    if (c->tls_deadline == NULL) {
        atomic_fetch_sub(&c->refs, 1); /* not the last: the caller's */
        return -ENOMEM;
    }
    return 0;
}


bool
vrpc_conn_tls_cancel_locked(vrpc_conn_t *c)
{
    vl_timer_t *t = c->tls_deadline;

    c->tls_deadline = NULL;
    /* Under c->lock, which the callback takes before forgetting the
     * handle, so t is valid here. The ref is dropped by the caller
     * (outside the lock: it may not be the last one otherwise). */
    return t != NULL && vl_timer_cancel(t);
}


int
vrpc_conn_tls_flush_locked(vrpc_conn_t *c)
{
    char why[300];

    for (;;) {
        int r, e = SSL_ERROR_NONE, sys_errno;

        if (c->tls_woff == c->tls_wlen) {
            size_t n = 0;

            /* Copy the head of the queue into one record's buffer. */
            for (struct vrpc_out *o = c->out_head;
                 o != NULL && n < CONN_TLS_WBUF; o = o->next) {
                for (int i = o->cur; i < o->n_iov && n < CONN_TLS_WBUF;
                     i++) {
                    size_t l = o->iov[i].iov_len;

                    if (l > CONN_TLS_WBUF - n)
                        l = CONN_TLS_WBUF - n;
                    memcpy(c->tls_wbuf + n, o->iov[i].iov_base, l);
                    n += l;
                }
            }
            if (n == 0)
                return 0;
            vrpc_conn_out_consume_locked(c, n);
            c->tls_woff = 0;
            c->tls_wlen = n;
        }
        pthread_mutex_lock(&c->ssl_lock);
        ERR_clear_error();
        r = SSL_write(c->ssl, c->tls_wbuf + c->tls_woff,
                      (int)(c->tls_wlen - c->tls_woff));
        sys_errno = errno;
        if (r <= 0) {
            e = SSL_get_error(c->ssl, r);
            if (e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_WANT_READ)
                conn_tls_reason_locked(c, e, sys_errno, why, sizeof(why));
        }
        pthread_mutex_unlock(&c->ssl_lock);
        if (r > 0) {
            c->tls_woff += (size_t)r;
            if (c->tls_woff == c->tls_wlen)
                c->tls_woff = c->tls_wlen = 0;
            continue;
        }
        if (e == SSL_ERROR_WANT_WRITE)
            return vrpc_conn_arm_out_locked(c);
        if (e == SSL_ERROR_WANT_READ) {
            /* OpenSSL must read first (a post-handshake message): the
             * reader flushes again after its next read. */
            atomic_store(&c->is_tls_out_wants_in, true);
            return 0;
        }
        conn_tls_fail_locked(c, "TLS write:", why);
        return e == SSL_ERROR_SYSCALL && sys_errno != 0 ? -sys_errno
                                                        : -EPROTO;
    }
}


/* Asks for an output event on behalf of the input side. */
static int
conn_tls_in_wants_out(vrpc_conn_t *c)
{
    int rc;

    atomic_store(&c->is_tls_in_wants_out, true);
    pthread_mutex_lock(&c->lock);
    rc = vrpc_conn_arm_out_locked(c);
    pthread_mutex_unlock(&c->lock);
    return rc;
}


/* One handshake step by the parser holder: 1 when done (the connection
 * is up), 0 when waiting for the socket, -errno to close with. */
static int
conn_tls_handshake(vrpc_conn_t *c)
{
    char why[300];
    const char *cipher = "";
    bool is_dropped, has_cn = false;
    int r, e = SSL_ERROR_NONE, sys_errno, rc = 0;

    pthread_mutex_lock(&c->ssl_lock);
    ERR_clear_error();
    r = SSL_do_handshake(c->ssl);
    sys_errno = errno;
    if (r != 1) {
        e = SSL_get_error(c->ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
            conn_tls_reason_locked(c, e, sys_errno, why, sizeof(why));
    } else {
        has_cn = vrpc_tls_peer_cn(c->ssl, c->tls_peer_cn,
                                  sizeof(c->tls_peer_cn));
        cipher = SSL_get_cipher_name(c->ssl); /* static string */
    }
    pthread_mutex_unlock(&c->ssl_lock);

    if (e == SSL_ERROR_WANT_READ)
        return 0; /* the socket was read to EAGAIN: an edge will come */
    if (e == SSL_ERROR_WANT_WRITE)
        return conn_tls_in_wants_out(c);
    if (e != SSL_ERROR_NONE) {
        conn_tls_fail(c, "TLS handshake failed:", why);
        if (c->is_tls_client && c->ops->on_connect != NULL)
            c->ops->on_connect(c, -ECONNREFUSED, c->arg);
        return -ECONNREFUSED;
    }
    pthread_mutex_lock(&c->lock);
    c->is_tls_up = true;
    is_dropped = vrpc_conn_tls_cancel_locked(c);
    /* Anything sent before the handshake ended waits in the queue. */
    if (!c->is_closed && c->out_head != NULL)
        rc = vrpc_conn_tls_flush_locked(c);
    pthread_mutex_unlock(&c->lock);
    if (is_dropped)
        vrpc_conn_unref(c); /* the cancelled timer's; not the last */
    vl_glog("rpc", VL_LOG_DEBUG, "%s: TLS up (%s, peer '%s')", c->peer,
            cipher, has_cn ? c->tls_peer_cn : "");
    if (rc != 0)
        return rc;
    if (c->is_tls_client && c->ops->on_connect != NULL)
        c->ops->on_connect(c, 0, c->arg);
    return 1;
}


/* Reads what OpenSSL gives into the parser, like conn.c's plain read. */
static int
conn_tls_read(vrpc_conn_t *c)
{
    char why[300];

    for (int i = 0;; i++) {
        vl_buf_t *rec = NULL;
        size_t rec_len = 0, want;
        char *p;
        int r, e = SSL_ERROR_NONE, sys_errno, rc;
        bool is_direct;

        while (c->stage_off < c->stage_len) {
            size_t used;

            rc = vrpc_rm_feed(&c->rm, c->stage + c->stage_off,
                              c->stage_len - c->stage_off, &used, &rec,
                              &rec_len);
            c->stage_off += used;
            if (rc < 0)
                return rc;
            if (rc == 1 && (rc = vrpc_conn_pend_push(c, rec, rec_len)) != 0)
                return rc;
        }
        if (i == CONN_READS_PER_CB)
            return 1;
        want = vrpc_rm_direct(&c->rm, &p);
        is_direct = want >= CONN_DIRECT_MIN;
        if (!is_direct) {
            p = c->stage;
            want = CONN_STAGE_SIZE;
        } else if (want > INT32_MAX) {
            want = INT32_MAX;
        }
        pthread_mutex_lock(&c->ssl_lock);
        ERR_clear_error();
        r = SSL_read(c->ssl, p, (int)want);
        sys_errno = errno;
        if (r <= 0) {
            e = SSL_get_error(c->ssl, r);
            if (e == SSL_ERROR_SSL || e == SSL_ERROR_SYSCALL)
                conn_tls_reason_locked(c, e, sys_errno, why, sizeof(why));
        }
        pthread_mutex_unlock(&c->ssl_lock);
        if (r > 0) {
            if (is_direct) {
                rc = vrpc_rm_direct_done(&c->rm, (size_t)r, &rec, &rec_len);
                if (rc == 1
                    && (rc = vrpc_conn_pend_push(c, rec, rec_len)) != 0)
                    return rc;
                if (rc < 0)
                    return rc;
            } else {
                c->stage_off = 0;
                c->stage_len = (size_t)r;
            }
            continue;
        }
        switch (e) {
        case SSL_ERROR_WANT_READ:
            return 0;
        case SSL_ERROR_WANT_WRITE:
            rc = conn_tls_in_wants_out(c);
            return rc;
        case SSL_ERROR_ZERO_RETURN:
            return -ECONNRESET; /* close_notify: an orderly end */
        case SSL_ERROR_SYSCALL:
            if (sys_errno == 0 || sys_errno == ECONNRESET)
                return -ECONNRESET; /* EOF without close_notify */
            return -sys_errno;
        default:
            conn_tls_fail(c, "TLS:", why);
            return -EPROTO;
        }
    }
}


int
vrpc_conn_tls_input(vrpc_conn_t *c)
{
    int rc;

    /* Only the parser holder writes is_tls_up (under the lock). */
    if (!c->is_tls_up) {
        rc = conn_tls_handshake(c);
        if (rc <= 0)
            return rc;
    }
    rc = conn_tls_read(c);
    if (rc >= 0 && atomic_exchange(&c->is_tls_out_wants_in, false)) {
        int wrc = 0;

        pthread_mutex_lock(&c->lock);
        if (!c->is_closed)
            wrc = vrpc_conn_tls_flush_locked(c);
        pthread_mutex_unlock(&c->lock);
        if (wrc != 0)
            return wrc;
    }
    return rc;
}
