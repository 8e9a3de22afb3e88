/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metrics-http: the GET /metrics server (vol/metrics.h says what it
 * answers and its limits).
 *
 * One thread polls the listening socket, a wake-up pipe (stop) and the
 * connections. A connection reads its request into a fixed buffer until
 * the blank line that ends the headers; then the answer is built whole
 * (the fill callback writes into an open_memstream) and written as the
 * socket accepts it. Every answer says Connection: close and the
 * connection is closed once written, so no request body or pipelining is
 * ever read. A connection past its deadline, or beyond the connection
 * limit, is closed without an answer: a scraper retries, and a slow or
 * hostile peer cannot hold the thread.
 *
 * Threads: the server thread owns every connection; start and stop run on
 * the caller's thread, stop joins the server thread.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "vol/metrics.h"

/* One accepted connection. */
struct vl_metrics_conn {
    int fd;                             /* owned; -1 when the slot is free */
    uint64_t deadline_ns;               /* closed when passed */
    char req[VL_METRICS_MAX_REQUEST];   /* the request as read so far */
    size_t n_req;                       /* bytes in req */
    char *resp;                         /* owned (malloc); the answer */
    size_t n_resp;                      /* bytes in resp */
    size_t n_sent;                      /* bytes of resp written */
};

struct vl_metrics_http {
    int lfd;                            /* owned; listening socket */
    int wake[2];                        /* owned; pipe, stop writes to [1] */
    unsigned port;                      /* bound port */
    vl_metrics_fill_fn *fill;           /* builds the body */
    void *arg;                          /* for fill */
    pthread_t thread;                   /* the server thread */
    struct vl_metrics_conn conns[VL_METRICS_MAX_CONNS]; /* thread's own */
};


static void
vl_metrics_conn_close(struct vl_metrics_conn *c)
{
    char sink[4096];
    int i;

    if (c->fd >= 0) {
        /* Unread input makes close() send a reset, which can destroy
         * the answer before the peer reads it (an oversized request):
         * read what already arrived, a bounded amount. */
        for (i = 0; i < 16 && read(c->fd, sink, sizeof(sink)) > 0; i++)
            ;
        close(c->fd);
    }
    free(c->resp);
    c->fd = -1;
    c->resp = NULL;
    c->n_req = 0;
    c->n_resp = 0;
    c->n_sent = 0;
}


/* Makes c->resp: status line, headers, and body (NULL: a short text
 * saying the status). */
static void
vl_metrics_answer(struct vl_metrics_conn *c, int code, const char *reason,
                  const char *extra_headers, const char *type,
                  const char *body, size_t n_body, bool is_head)
{
    char *text = NULL;
    char small[64];
    int n;

    if (body == NULL) {
        n_body = (size_t)snprintf(small, sizeof(small), "%d %s\n", code,
                                  reason);
        body = small;
        type = "text/plain; charset=utf-8";
    }
    n = asprintf(&text, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
                 "Content-Length: %zu\r\n%sConnection: close\r\n\r\n",
                 code, reason, type, n_body,
                 extra_headers != NULL ? extra_headers : "");
    if (n < 0) {
        c->resp = NULL;
        return;
    }
    if (!is_head) {
        char *all = realloc(text, (size_t)n + n_body);

        if (all == NULL) {
            free(text);
            c->resp = NULL;
            return;
        }
        memcpy(all + n, body, n_body);
        text = all;
        c->n_resp = (size_t)n + n_body;
    } else {
        c->n_resp = (size_t)n;
    }
    c->resp = text;
}


/* The request's headers are complete: decide the answer. */
static void
vl_metrics_handle(struct vl_metrics_http *srv, struct vl_metrics_conn *c)
{
    char method[16];
    char target[256];
    char version[16];
    char *body = NULL;
    size_t n_body = 0;
    bool is_head;
    char *q;
    FILE *out;

    c->req[c->n_req] = '\0';
    if (sscanf(c->req, "%15s %255s %15s", method, target, version) != 3
        || strncmp(version, "HTTP/1.", 7) != 0) {
        vl_metrics_answer(c, 400, "Bad Request", NULL, NULL, NULL, 0, false);
        return;
    }
    is_head = strcmp(method, "HEAD") == 0;
    if (strcmp(method, "GET") != 0 && !is_head) {
        vl_metrics_answer(c, 405, "Method Not Allowed",
                          "Allow: GET, HEAD\r\n", NULL, NULL, 0, false);
        return;
    }
    q = strchr(target, '?'); /* Prometheus may add parameters */
    if (q != NULL)
        *q = '\0';
    if (strcmp(target, "/metrics") != 0) {
        vl_metrics_answer(c, 404, "Not Found", NULL, NULL, NULL, 0, is_head);
        return;
    }
    out = open_memstream(&body, &n_body);
    if (out == NULL) {
        vl_metrics_answer(c, 500, "Internal Server Error", NULL, NULL, NULL,
                          0, is_head);
        return;
    }
    srv->fill(out, srv->arg);
    if (fclose(out) != 0 || body == NULL) {
        free(body);
        vl_metrics_answer(c, 500, "Internal Server Error", NULL, NULL, NULL,
                          0, is_head);
        return;
    }
    vl_metrics_answer(c, 200, "OK", NULL, "text/plain; version=0.0.4",
                      body, n_body, is_head);
    free(body);
}


/* Reads what c has; returns false when c must be closed. */
static bool
vl_metrics_read(struct vl_metrics_http *srv, struct vl_metrics_conn *c)
{
    ssize_t n;

    n = read(c->fd, c->req + c->n_req, sizeof(c->req) - 1 - c->n_req);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR;
    if (n == 0)
        return false; /* closed before a whole request */
    c->n_req += (size_t)n;
    c->req[c->n_req] = '\0';
    if (strstr(c->req, "\r\n\r\n") != NULL
        || strstr(c->req, "\n\n") != NULL) {
        vl_metrics_handle(srv, c);
    } else if (c->n_req == sizeof(c->req) - 1) {
        vl_metrics_answer(c, 431, "Request Header Fields Too Large", NULL,
                          NULL, NULL, 0, false);
    } else {
        return true;
    }
    return c->resp != NULL; /* out of memory: close */
}


/* Writes what c's socket accepts; returns false when c is done. */
static bool
vl_metrics_write(struct vl_metrics_conn *c)
{
    ssize_t n;

    n = send(c->fd, c->resp + c->n_sent, c->n_resp - c->n_sent,
             MSG_NOSIGNAL);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR;
    c->n_sent += (size_t)n;
    return c->n_sent < c->n_resp;
}


static void
vl_metrics_accept(struct vl_metrics_http *srv)
{
    struct vl_metrics_conn *c = NULL;
    size_t i;
    int fd;

    fd = accept4(srv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return; /* EAGAIN, or a peer gone already */
    for (i = 0; i < VL_METRICS_MAX_CONNS; i++)
        if (srv->conns[i].fd < 0) {
            c = &srv->conns[i];
            break;
        }
    if (c == NULL) {
        close(fd); /* at the limit: the scraper retries */
        return;
    }
    c->fd = fd;
    c->deadline_ns = vl__now_ns() + VL_METRICS_DEADLINE_MS * 1000000ULL;
}


static void *
vl_metrics_thread(void *arg)
{
    struct vl_metrics_http *srv = arg;
    struct pollfd pfd[VL_METRICS_MAX_CONNS + 2];
    struct vl_metrics_conn *who[VL_METRICS_MAX_CONNS + 2];

    for (;;) {
        uint64_t now = vl__now_ns();
        int timeout = -1;
        nfds_t n = 0;
        size_t i;

        pfd[n++] = (struct pollfd){.fd = srv->wake[0], .events = POLLIN};
        pfd[n++] = (struct pollfd){.fd = srv->lfd, .events = POLLIN};
        for (i = 0; i < VL_METRICS_MAX_CONNS; i++) {
            struct vl_metrics_conn *c = &srv->conns[i];
            int left_ms;

            if (c->fd < 0)
                continue;
            if (now >= c->deadline_ns) {
                vl_metrics_conn_close(c);
                continue;
            }
            left_ms = (int)((c->deadline_ns - now) / 1000000ULL) + 1;
            if (timeout < 0 || left_ms < timeout)
                timeout = left_ms;
            who[n] = c;
            pfd[n++] = (struct pollfd){
                .fd = c->fd,
                .events = c->resp != NULL ? POLLOUT : POLLIN};
        }
        if (poll(pfd, n, timeout) < 0) {
            if (errno == EINTR)
                continue;
            vl_glog("metrics", VL_LOG_ERROR, "poll: %s; metrics server "
                    "stopped", strerror(errno));
            break;
        }
        if (pfd[0].revents != 0)
            break; /* stop */
        for (i = 2; i < n; i++) {
            struct vl_metrics_conn *c = who[i];
            bool keep;

            if (pfd[i].revents == 0)
                continue;
            if (c->resp == NULL)
                keep = vl_metrics_read(srv, c);
            else
                keep = vl_metrics_write(c);
            /* A request just answered: try to send at once. */
            if (keep && c->resp != NULL && c->n_sent == 0)
                keep = vl_metrics_write(c);
            if (!keep)
                vl_metrics_conn_close(c);
        }
        if (pfd[1].revents & POLLIN)
            vl_metrics_accept(srv);
    }
    return NULL;
}


/* Resolves address (numeric IPv4 or IPv6) and binds a listening socket. */
static int
vl_metrics_listen(const char *address, unsigned port, int *out_fd,
                  unsigned *out_port, vl_err_t *err)
{
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_PASSIVE,
                             .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char service[16];
    int one = 1;
    int fd;
    int rc;

    snprintf(service, sizeof(service), "%u", port);
    rc = getaddrinfo(address, service, &hints, &ai);
    if (rc != 0) {
        vl_err_set(err, "metrics: bad address '%s': %s", address,
                   gai_strerror(rc));
        return -EINVAL;
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                0);
    if (fd < 0) {
        rc = -errno;
        goto fail;
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0
        || listen(fd, VL_METRICS_MAX_CONNS) != 0
        || getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        rc = -errno;
        close(fd);
        goto fail;
    }
    *out_port = ntohs(ss.ss_family == AF_INET6
                          ? ((struct sockaddr_in6 *)&ss)->sin6_port
                          : ((struct sockaddr_in *)&ss)->sin_port);
    *out_fd = fd;
    freeaddrinfo(ai);
    return 0;
fail:
    vl_err_set(err, "metrics: cannot listen on %s%s%s:%u: %s",
               ai->ai_family == AF_INET6 ? "[" : "", address,
               ai->ai_family == AF_INET6 ? "]" : "", port, strerror(-rc));
    freeaddrinfo(ai);
    return rc;
}


int
vl_metrics_http_start(const char *address, unsigned port,
                      vl_metrics_fill_fn *fill, void *arg,
                      vl_metrics_http_t **out, vl_err_t *err)
{
    struct vl_metrics_http *srv;
    size_t i;
    int rc;

    if (address == NULL)
        address = VL_METRICS_DEFAULT_ADDRESS;
    if (port > 65535) {
        vl_err_set(err, "metrics: port %u out of range 0..65535", port);
        return -EINVAL;
    }
    srv = calloc(1, sizeof(*srv));
    if (srv == NULL) {
        vl_err_set(err, "metrics: out of memory");
        return -ENOMEM;
    }
    srv->lfd = -1;
    srv->wake[0] = srv->wake[1] = -1;
    srv->fill = fill;
    srv->arg = arg;
    for (i = 0; i < VL_METRICS_MAX_CONNS; i++)
        srv->conns[i].fd = -1;
    rc = vl_metrics_listen(address, port, &srv->lfd, &srv->port, err);
    if (rc != 0)
        goto fail;
    if (pipe2(srv->wake, O_CLOEXEC) != 0) {
        rc = -errno;
        vl_err_set(err, "metrics: pipe: %s", strerror(errno));
        goto fail;
    }
    rc = -pthread_create(&srv->thread, NULL, vl_metrics_thread, srv);
    if (rc != 0) {
        vl_err_set(err, "metrics: thread: %s", strerror(-rc));
        goto fail;
    }
    *out = srv;
    return 0;
fail:
    if (srv->lfd >= 0)
        close(srv->lfd);
    if (srv->wake[0] >= 0) {
        close(srv->wake[0]);
        close(srv->wake[1]);
    }
    free(srv);
    return rc;
}


unsigned
vl_metrics_http_port(const vl_metrics_http_t *srv)
{
    return srv->port;
}


void
vl_metrics_http_stop(vl_metrics_http_t *srv)
{
    size_t i;

    if (srv == NULL)
        return;
    (void)!write(srv->wake[1], "x", 1);
    pthread_join(srv->thread, NULL);
    for (i = 0; i < VL_METRICS_MAX_CONNS; i++)
        vl_metrics_conn_close(&srv->conns[i]);
    close(srv->lfd);
    close(srv->wake[0]);
    close(srv->wake[1]);
    free(srv);
}
