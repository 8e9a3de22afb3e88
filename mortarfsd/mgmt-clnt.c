/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mgmt-clnt: blocking calls to mortard's management program (see
 * mgmt-clnt.h). Connect is non-blocking plus poll so that it is bounded;
 * every read/write then waits in poll with the time left before the
 * call's deadline (rpc/src/stream.c, which also speaks TLS).
 * Threads: no shared state except the XID counter (atomic).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mgmt-clnt.h"
#include "vrpc.h"

static uint32_t mgc_xid_next; /* atomic; seeded on first use */

static int mgc_connect_fd(const struct mgc_addr *addr, int timeout_ms,
                          int *fd_out, vl_err_t *err);


int
mgc_addr_unix(const char *path, struct mgc_addr *out)
{
    memset(out, 0, sizeof(*out));
    out->path = strdup(path);
    return out->path == NULL ? -ENOMEM : 0;
}


int
mgc_addr_parse(const char *text, uint16_t default_port, struct mgc_addr *out,
               vl_err_t *err)
{
    const char *host = text;
    size_t host_len = strlen(text);
    const char *port_s = NULL;
    const char *colon;
    unsigned long port = default_port;
    char *end = NULL;

    memset(out, 0, sizeof(*out));
    if (text[0] == '[') {
        const char *close = strchr(text, ']');

        if (close == NULL || (close[1] != '\0' && close[1] != ':')) {
            vl_err_set(err, "'%s': expected [ADDRESS]:PORT", text);
            return -EINVAL;
        }
        host = text + 1;
        host_len = (size_t)(close - host);
        if (close[1] == ':')
            port_s = close + 2;
    } else {
        colon = strchr(text, ':');
        /* Exactly one colon: HOST:PORT; more: a bare IPv6 address. */
        if (colon != NULL && strchr(colon + 1, ':') == NULL) {
            host_len = (size_t)(colon - text);
            port_s = colon + 1;
        }
    }
    if (host_len == 0) {
        vl_err_set(err, "'%s': empty host name", text);
        return -EINVAL;
    }
    if (port_s != NULL) {
        errno = 0;
        port = strtoul(port_s, &end, 10);
        if (port_s[0] == '\0' || port_s[0] == '-' || *end != '\0' ||
            errno != 0 || port == 0 || port > 65535) {
            vl_err_set(err, "'%s': bad port '%s'", text, port_s);
            return -EINVAL;
        }
    }
    out->host = strndup(host, host_len);
    if (out->host == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    out->port = (uint16_t)port;
    return 0;
}


void
mgc_addr_clear(struct mgc_addr *addr)
{
    free(addr->path);
    free(addr->host);
    memset(addr, 0, sizeof(*addr));
}


const char *
mgc_addr_str(const struct mgc_addr *addr, char *buf, size_t len)
{
    if (addr->path != NULL)
        snprintf(buf, len, "%s", addr->path);
    else if (strchr(addr->host, ':') != NULL)
        snprintf(buf, len, "[%s]:%u", addr->host, addr->port);
    else
        snprintf(buf, len, "%s:%u", addr->host, addr->port);
    return buf;
}


static uint64_t
mgc_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}


/* Waits for events on fd until deadline; 0, -ETIMEDOUT or -errno. */
static int
mgc_wait(int fd, short events, uint64_t deadline)
{
    struct pollfd pfd = {.fd = fd, .events = events};
    uint64_t now;
    int n;

    for (;;) {
        now = mgc_now_ms();
        if (now >= deadline)
            return -ETIMEDOUT;
        n = poll(&pfd, 1, (int)(deadline - now));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n > 0)
            return 0;
    }
}


/* Connects one resolved address; 0 with *fd_out or -errno. */
static int
mgc_connect_one(const struct sockaddr *sa, socklen_t sa_len, uint64_t deadline,
                int *fd_out)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    0);
    int one = 1;
    int soerr = 0;
    socklen_t soerr_len = sizeof(soerr);
    int rc;

    if (fd < 0)
        return -errno;
    if (connect(fd, sa, sa_len) != 0) {
        if (errno != EINPROGRESS && errno != EAGAIN) {
            rc = -errno;
            goto fail;
        }
        rc = mgc_wait(fd, POLLOUT, deadline);
        if (rc != 0)
            goto fail;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &soerr_len) != 0) {
            rc = -errno;
            goto fail;
        }
        if (soerr != 0) {
            rc = -soerr;
            goto fail;
        }
    }
    if (sa->sa_family != AF_UNIX)
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* Blocking from here: every wait is bounded by poll in mgc_call. */
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        rc = -errno;
        goto fail;
    }
    *fd_out = fd;
    return 0;
fail:
    close(fd);
    return rc;
}


int
mgc_connect(const struct mgc_addr *addr, vrpc_tls_t *tls, int timeout_ms,
            struct vrpc_stream *out, vl_err_t *err)
{
    uint64_t tls_deadline = vrpc_now_ms() + (uint64_t)timeout_ms;
    vl_err_t tls_err = {.msg = ""};
    char where[300];
    int rc;

    out->fd = -1;
    out->ssl = NULL;
    out->why[0] = '\0';
    rc = mgc_connect_fd(addr, timeout_ms, &out->fd, err);
    if (rc != 0 || tls == NULL)
        return rc;
    rc = vrpc_stream_tls_start(out, tls, addr->host, tls_deadline, &tls_err);
    if (rc != 0) {
        vl_err_set(err, "%s: %s", mgc_addr_str(addr, where, sizeof(where)),
                   tls_err.msg);
        vrpc_stream_close(out);
    }
    return rc;
}


static int
mgc_connect_fd(const struct mgc_addr *addr, int timeout_ms, int *fd_out,
               vl_err_t *err)
{
    uint64_t deadline = mgc_now_ms() + (uint64_t)timeout_ms;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    char port_s[8];
    char where[300];
    int rc = -EHOSTUNREACH;
    int grc;

    mgc_addr_str(addr, where, sizeof(where));
    if (addr->path != NULL) {
        if (strlen(addr->path) >= sizeof(sun.sun_path)) {
            vl_err_set(err, "%s: socket path too long", where);
            return -ENAMETOOLONG;
        }
        strcpy(sun.sun_path, addr->path);
        rc = mgc_connect_one((struct sockaddr *)&sun, sizeof(sun), deadline,
                             fd_out);
        if (rc != 0)
            vl_err_set(err, "%s: %s", where, strerror(-rc));
        return rc;
    }
    snprintf(port_s, sizeof(port_s), "%u", addr->port);
    grc = getaddrinfo(addr->host, port_s, &hints, &res);
    if (grc != 0) {
        vl_err_set(err, "%s: %s", addr->host, gai_strerror(grc));
        return grc == EAI_MEMORY ? -ENOMEM : -EHOSTUNREACH;
    }
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        rc = mgc_connect_one(ai->ai_addr, ai->ai_addrlen, deadline, fd_out);
        if (rc == 0 || rc == -ETIMEDOUT)
            break;
    }
    freeaddrinfo(res);
    if (rc != 0)
        vl_err_set(err, "%s: %s", where, strerror(-rc));
    return rc;
}


/* Reads one record (all its fragments) into a malloc'ed buffer. */
static int
mgc_read_record(struct vrpc_stream *s, uint64_t deadline, char **out, size_t *out_len)
{
    char *rec = NULL;
    size_t len = 0;
    uint32_t mark;
    size_t frag;
    char *grown;
    int rc;

    for (;;) {
        rc = vrpc_stream_io(s, (char *)&mark, sizeof(mark), false, deadline);
        if (rc != 0)
            goto fail;
        mark = ntohl(mark);
        frag = mark & ~VRPC_LAST_FRAG;
        if (frag > MGC_MAX_REPLY - len) {
            rc = -EMSGSIZE;
            goto fail;
        }
        grown = realloc(rec, len + frag + 1);
        if (grown == NULL) {
            rc = -ENOMEM;
            goto fail;
        }
        rec = grown;
        rc = vrpc_stream_io(s, rec + len, frag, false, deadline);
        if (rc != 0)
            goto fail;
        len += frag;
        if (mark & VRPC_LAST_FRAG)
            break;
    }
    *out = rec;
    *out_len = len;
    return 0;
fail:
    free(rec);
    return rc;
}


static const char *
mgc_accept_str(int accept)
{
    switch (accept) {
    case VRPC_PROG_UNAVAIL:
        return "program unavailable (not a mortard?)";
    case VRPC_PROG_MISMATCH:
        return "program version mismatch";
    case VRPC_PROC_UNAVAIL:
        return "procedure unavailable (older mortard?)";
    case VRPC_GARBAGE_ARGS:
        return "server could not decode the arguments";
    case VRPC_SYSTEM_ERR:
        return "server system error";
    default:
        return "call denied";
    }
}


int
mgc_call(struct vrpc_stream *s, uint32_t prog, uint32_t vers, uint32_t proc,
         xdrproc_t args_fn, void *args, xdrproc_t res_fn, void *res,
         int timeout_ms, vl_err_t *err)
{
    uint64_t deadline = mgc_now_ms() + (uint64_t)timeout_ms;
    uint32_t xid = __atomic_add_fetch(&mgc_xid_next, 1, __ATOMIC_RELAXED);
    char *call = NULL;
    size_t call_len = 0;
    char *rec = NULL;
    size_t rec_len = 0;
    uint32_t mark;
    uint32_t rxid;
    int accept;
    size_t off;
    int rc;

    /* Distinct from a previous run's XIDs on a reused server conn. */
    xid ^= (uint32_t)getpid() << 16;
    rc = vrpc_encode_call(xid, prog, vers, proc, NULL, args_fn, args, &call,
                          &call_len);
    if (rc != 0) {
        vl_err_set(err, rc == -ENOMEM ? "out of memory"
                                      : "arguments too large to encode");
        return rc;
    }
    mark = htonl((uint32_t)call_len | VRPC_LAST_FRAG);
    rc = vrpc_stream_io(s, (char *)&mark, sizeof(mark), true, deadline);
    if (rc == 0)
        rc = vrpc_stream_io(s, call, call_len, true, deadline);
    vl_free(call);
    if (rc != 0) {
        vl_err_set(err, "sending the request: %s",
                   s->why[0] != '\0' ? s->why : strerror(-rc));
        return rc;
    }
    for (;;) {
        rc = mgc_read_record(s, deadline, &rec, &rec_len);
        if (rc != 0) {
            if (s->why[0] != '\0')
                vl_err_set(err, "waiting for the reply: %s", s->why);
            else if (rc == -ECONNRESET && s->ssl == NULL)
                vl_err_set(err, "the server closed the connection (if "
                           "it has secure-access on, connect with TLS)");
            else if (rc == -ECONNRESET)
                vl_err_set(err, "the server closed the connection");
            else
                vl_err_set(err, "waiting for the reply: %s", strerror(-rc));
            return rc;
        }
        if (vrpc_decode_reply(rec, rec_len, &rxid, &accept, &off) != 0) {
            vl_err_set(err, "malformed reply from the server");
            rc = -EPROTO;
            goto out;
        }
        if (rxid == xid)
            break;
        /* A late answer to an earlier call: not ours. */
        free(rec);
        rec = NULL;
    }
    if (accept != VRPC_SUCCESS) {
        vl_err_set(err, "%s", mgc_accept_str(accept));
        rc = -EPROTO;
        goto out;
    }
    if (vrpc_decode_body(rec + off, rec_len - off, res_fn, res, NULL) != 0) {
        vl_err_set(err, "undecodable reply from the server");
        rc = -EPROTO;
    }
out:
    free(rec);
    return rc;
}
