/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * listen: the brick's listening socket and the client's outgoing connect.
 *
 * The listener is registered one-shot on the loop like every descriptor;
 * its callback accepts until EAGAIN (at most a batch) and re-arms. Each
 * accepted socket goes to the owner's callback, which wraps it in a conn.
 * With limits (vrpc_listen_limits), the owner hands each conn back through
 * vrpc_listener_adopt, which applies them and counts the conn in a tally
 * shared with it until it closes; over max_conns a socket is closed as
 * soon as it is accepted, before the owner sees it, so a flood of
 * connections costs no memory (logged at most every LISTEN_LOG_MS).
 * Threads: callbacks on loop threads; vrpc_listener_free from any thread
 * but the loop's own callback.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn-int.h"

#define LISTEN_BACKLOG 1024
#define ACCEPT_BATCH 32
#define LISTEN_LOG_MS 10000 /* between two "refused: too many" lines */

struct vrpc_listener {
    int fd;               /* owned listening socket */
    vl_io_t *io;          /* owned registration */
    uint16_t port;        /* bound port */
    vrpc_accept_fn *cb;   /* borrowed */
    void *arg;            /* for cb */
    bool has_limits;      /* lim applies to adopted connections */
    struct vrpc_limits lim;          /* copied from the owner */
    struct vrpc_conn_tally *tally;   /* one ref; connections open */
    uint64_t refused_log_ms;  /* when the last refusal was logged; the
                                 one-shot callback's */
    unsigned n_refused;       /* refused since that line */
};


/* Over max_conns: closes fd and says so, at most every LISTEN_LOG_MS. */
static void
listen_refuse(vrpc_listener_t *l, int fd, const struct sockaddr_storage *ss)
{
    char host[INET6_ADDRSTRLEN] = "?";
    uint64_t now = vrpc_now_ms();

    close(fd);
    l->n_refused++;
    if (l->refused_log_ms != 0 && now - l->refused_log_ms < LISTEN_LOG_MS)
        return;
    if (ss->ss_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, host,
                  sizeof(host));
    else if (ss->ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr,
                  host, sizeof(host));
    vl_glog("rpc", VL_LOG_WARNING, "port %u: %u connections open, the "
            "limit: refused %u since the last such line (the last from %s)",
            l->port, l->lim.max_conns, l->n_refused, host);
    l->refused_log_ms = now;
    l->n_refused = 0;
}


static void
listen_io_cb(vl_io_t *io, int fd, uint32_t events, void *arg)
{
    vrpc_listener_t *l = arg;

    for (int i = 0; i < ACCEPT_BATCH; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int cfd = accept4(fd, (struct sockaddr *)&ss, &sl,
                          SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (cfd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                vl_glog("rpc", VL_LOG_WARNING, "accept on port %u: %s",
                        l->port, strerror(errno));
            break;
        }
        if (l->has_limits && l->lim.max_conns != 0
            && atomic_load(&l->tally->n_open) >= l->lim.max_conns) {
            listen_refuse(l, cfd, &ss);
            continue;
        }
        l->cb(cfd, &ss, l->arg);
    }
    (void)vl_io_modify(io, EPOLLIN);
}


/* Resolves host (numeric first, then by name) for port. */
static int
listen_resolve(const char *host, uint16_t port, bool passive,
               struct addrinfo **res, vl_err_t *err)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
    char service[8];
    int g;

    snprintf(service, sizeof(service), "%u", port);
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
                     | (passive ? AI_PASSIVE : 0);
    g = getaddrinfo(host, service, &hints, res);
    if (g == EAI_NONAME) {
        hints.ai_flags &= ~AI_NUMERICHOST;
        g = getaddrinfo(host, service, &hints, res);
    }
    if (g != 0) {
        vl_err_set(err, "%s: %s", host, gai_strerror(g));
        return g == EAI_MEMORY ? -ENOMEM : -EHOSTUNREACH;
    }
    return 0;
}


int
vrpc_listen(vl_loop_t *loop, const char *addr, uint16_t port,
            vrpc_accept_fn *cb, void *arg, vrpc_listener_t **out,
            vl_err_t *err)
{
    return vrpc_listen_limits(loop, addr, port, NULL, cb, arg, out, err);
}


int
vrpc_listen_limits(vl_loop_t *loop, const char *addr, uint16_t port,
                   const struct vrpc_limits *lim, vrpc_accept_fn *cb,
                   void *arg, vrpc_listener_t **out, vl_err_t *err)
{
    struct addrinfo *res = NULL;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    vrpc_listener_t *l = NULL;
    int fd = -1, one = 1;
    int rc;

    rc = listen_resolve(addr, port, true, &res, err);
    if (rc != 0)
        return rc;
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                0);
    if (fd < 0) {
        rc = -errno;
        vl_err_set(err, "socket: %s", strerror(errno));
        goto out;
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, res->ai_addr, res->ai_addrlen) < 0) {
        rc = -errno;
        if (errno == EADDRINUSE)
            vl_err_set(err, "port %u in use", port);
        else
            vl_err_set(err, "bind %s:%u: %s", addr, port, strerror(errno));
        goto out;
    }
    if (listen(fd, LISTEN_BACKLOG) < 0
        || getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        rc = -errno;
        vl_err_set(err, "listen %s:%u: %s", addr, port, strerror(errno));
        goto out;
    }
    l = vl_calloc(NULL, 1, sizeof(*l), VL_MT_MISC);
    if (l != NULL)
        l->tally = vl_calloc(NULL, 1, sizeof(*l->tally), VL_MT_MISC);
    if (l == NULL || l->tally == NULL) {
        rc = -ENOMEM;
        vl_err_set(err, "out of memory");
        goto out;
    }
    atomic_init(&l->tally->refs, 1);
    atomic_init(&l->tally->n_open, 0);
    if (lim != NULL) {
        l->has_limits = true;
        l->lim = *lim;
    }
    l->fd = fd;
    l->cb = cb;
    l->arg = arg;
    l->port = ntohs(ss.ss_family == AF_INET6
                        ? ((struct sockaddr_in6 *)&ss)->sin6_port
                        : ((struct sockaddr_in *)&ss)->sin_port);
    /* Before the first accept can run: its callback may use *out. */
    *out = l;
    rc = vl_io_add(loop, fd, EPOLLIN, listen_io_cb, l, &l->io);
    if (rc != 0) {
        *out = NULL;
        vl_err_set(err, "cannot watch port %u: %s", port, strerror(-rc));
        goto out;
    }
    l = NULL;
    fd = -1;
out:
    if (l != NULL)
        vrpc_conn_tally_unref(l->tally);
    vl_free(l);
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return rc;
}


uint16_t
vrpc_listener_port(const vrpc_listener_t *l)
{
    return l->port;
}


void
vrpc_listener_adopt(vrpc_listener_t *l, vrpc_conn_t *c)
{
    if (l->has_limits)
        vrpc_conn_set_limits(c, &l->lim);
    vrpc_conn_lim_count(c, l->tally);
}


void
vrpc_listener_free(vrpc_listener_t *l)
{
    if (l == NULL)
        return;
    vl_io_del(l->io);
    close(l->fd);
    vrpc_conn_tally_unref(l->tally); /* open connections keep it */
    vl_free(l);
}


int
vrpc_connect_start(const char *host, uint16_t port, int *fd_out,
                   vl_err_t *err)
{
    struct addrinfo *res = NULL;
    int fd, rc;

    rc = listen_resolve(host, port, false, &res, err);
    if (rc != 0)
        return rc;
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                0);
    if (fd < 0) {
        rc = -errno;
        vl_err_set(err, "socket: %s", strerror(errno));
        goto out;
    }
    if (connect(fd, res->ai_addr, res->ai_addrlen) < 0
        && errno != EINPROGRESS) {
        rc = -errno;
        vl_err_set(err, "%s:%u: %s", host, port, strerror(errno));
        close(fd);
        goto out;
    }
    *fd_out = fd;
out:
    freeaddrinfo(res);
    return rc;
}
