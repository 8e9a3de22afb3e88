/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stream: a blocking client's socket, clear text or TLS, every wait
 * bounded by a deadline (see vrpc.h, "blocking client streams").
 *
 * The blocking management clients (the mortar CLI, mortarfsd's volfile
 * fetch, mortard's calls to its peers) send one call and read one reply
 * at a time; they have no event loop, so conn-tls.c does not fit them.
 * Here the socket is non-blocking and OpenSSL's WANT_READ/WANT_WRITE
 * become a poll with the time left. A clear stream uses send/recv as
 * before, so turning TLS off changes nothing on the wire.
 * Why a failed handshake gets a hint: the two one-sided cases (TLS
 * client, clear server; clear client, TLS server) only show as an early
 * end of the connection, which says nothing to the person reading it.
 * Threads: one thread uses a stream at a time; another may shutdown(2)
 * its fd to wake it (the call then fails with -ECONNRESET).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "tls.h"
#include "vrpc.h"


/* Waits for events on fd until deadline_ms; 0, -ETIMEDOUT or -errno. */
static int
stream_wait(int fd, short events, uint64_t deadline_ms)
{
    struct pollfd pfd = {.fd = fd, .events = events};

    for (;;) {
        uint64_t now = vrpc_now_ms();
        int n;

        if (now >= deadline_ms)
            return -ETIMEDOUT;
        n = poll(&pfd, 1, (int)(deadline_ms - now));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n > 0)
            return 0;
    }
}


/* After an SSL call returned n <= 0: 1 to retry once fd is ready (the
 * wait done here), or -errno. */
static int
stream_tls_retry(struct vrpc_stream *s, int n, uint64_t deadline_ms)
{
    int e = SSL_get_error(s->ssl, n);
    int rc;

    switch (e) {
    case SSL_ERROR_WANT_READ:
        rc = stream_wait(s->fd, POLLIN, deadline_ms);
        return rc == 0 ? 1 : rc;
    case SSL_ERROR_WANT_WRITE:
        rc = stream_wait(s->fd, POLLOUT, deadline_ms);
        return rc == 0 ? 1 : rc;
    case SSL_ERROR_ZERO_RETURN:
        return -ECONNRESET;
    case SSL_ERROR_SYSCALL:
        return errno != 0 && errno != EPIPE ? -errno : -ECONNRESET;
    default:
        return -EPROTO;
    }
}


int
vrpc_stream_tls_start(struct vrpc_stream *s, vrpc_tls_t *t,
                      const char *host, uint64_t deadline_ms, vl_err_t *err)
{
    char why[300];
    SSL *ssl;
    int rc;

    if (fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK) != 0) {
        vl_err_set(err, "fcntl: %s", strerror(errno));
        return -errno;
    }
    ssl = vrpc_tls_ssl_new(t, host, err);
    if (ssl == NULL)
        return -EINVAL;
    if (vrpc_tls_attach_fd(ssl, s->fd) != 0) {
        SSL_free(ssl);
        vl_err_set(err, "cannot attach TLS to the socket");
        return -ENOMEM;
    }
    SSL_set_connect_state(ssl);
    s->ssl = ssl;
    for (;;) {
        int n;

        ERR_clear_error();
        errno = 0;
        n = SSL_do_handshake(ssl);
        if (n == 1)
            return 0;
        rc = stream_tls_retry(s, n, deadline_ms);
        if (rc != 1)
            break;
    }
    if (rc == -ETIMEDOUT) {
        vl_err_set(err, "TLS handshake timed out");
    } else if (SSL_get_verify_result(ssl) != X509_V_OK) {
        vl_err_set(err, "TLS handshake failed: server certificate not "
                   "trusted (%s)",
                   X509_verify_cert_error_string(
                       SSL_get_verify_result(ssl)));
    } else {
        vrpc_tls_err_string(why, sizeof(why));
        if (rc == -ECONNRESET || strstr(why, "unexpected eof") != NULL
            || strstr(why, "unknown error") != NULL)
            vl_err_set(err, "TLS handshake failed: the server closed the "
                       "connection (it does not speak TLS, or refused "
                       "this certificate)");
        else
            vl_err_set(err, "TLS handshake failed: %s", why);
    }
    SSL_free(ssl);
    s->ssl = NULL;
    return rc == -ETIMEDOUT ? rc : -EPROTO;
}


/* Why a TLS stream failed after its handshake, into s->why. In TLS 1.3
 * the client's handshake ends before the server has checked the
 * client's certificate, so a refused certificate shows up as the first
 * write or read failing: the server's alert, when it can still be read,
 * names the cause; without it, the timing does. */
static void
stream_tls_explain(struct vrpc_stream *s, int rc)
{
    char why[200];
    char byte;
    size_t got;

    vrpc_tls_err_string(why, sizeof(why));
    if (strstr(why, "alert") == NULL) {
        /* The alert may sit unread behind what failed. */
        ERR_clear_error();
        (void)SSL_read_ex(s->ssl, &byte, 1, &got);
        vrpc_tls_err_string(why, sizeof(why));
    }
    if (strstr(why, "alert") != NULL)
        snprintf(s->why, sizeof(s->why), "TLS: %.190s", why);
    else if (rc == -ECONNRESET)
        snprintf(s->why, sizeof(s->why), "the server closed the TLS "
                 "connection (did it refuse this certificate: another "
                 "CA, expired?)");
}


/* One direction, len bytes, through TLS. */
static int
stream_tls_io(struct vrpc_stream *s, char *buf, size_t len, bool is_write,
              uint64_t deadline_ms)
{
    while (len > 0) {
        size_t done = 0;
        int n, rc;

        ERR_clear_error();
        errno = 0;
        n = is_write ? SSL_write_ex(s->ssl, buf, len, &done)
                     : SSL_read_ex(s->ssl, buf, len, &done);
        if (n == 1) {
            buf += done;
            len -= done;
            continue;
        }
        rc = stream_tls_retry(s, n, deadline_ms);
        if (rc == -ECONNRESET || rc == -EPROTO)
            stream_tls_explain(s, rc);
        if (rc != 1)
            return rc;
    }
    return 0;
}


int
vrpc_stream_io(struct vrpc_stream *s, char *buf, size_t len, bool is_write,
               uint64_t deadline_ms)
{
    if (s->ssl != NULL)
        return stream_tls_io(s, buf, len, is_write, deadline_ms);
    while (len > 0) {
        ssize_t n;
        int rc = stream_wait(s->fd, is_write ? POLLOUT : POLLIN,
                             deadline_ms);

        if (rc != 0)
            return rc;
        n = is_write ? send(s->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                     : recv(s->fd, buf, len, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return errno == EPIPE ? -ECONNRESET : -errno;
        if (n == 0)
            return -ECONNRESET;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}


void
vrpc_stream_close(struct vrpc_stream *s)
{
    if (s->ssl != NULL) {
        SSL_free(s->ssl);
        s->ssl = NULL;
    }
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}
