/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conn: one non-blocking TCP connection on a vl_loop.
 *
 * Input:   a 64 KiB staging buffer feeds the record parser; large fragment
 *          bodies are read straight into the record's vl_buf. Complete
 *          records are queued on the connection (pending) and delivered
 *          to ops->on_record on loop threads. The input registration is
 *          edge-triggered and never re-armed (no epoll_ctl per record):
 *          every arrival of data raises an event. The thread that gets one
 *          reads unless another thread holds the parser (is_reading); then
 *          it only sets is_read_again, and the holder reads once more
 *          before letting go. Reading stops at EAGAIN or at a short read
 *          (the socket was emptied: what comes next raises a new event),
 *          so no read is spent on EAGAIN. The parser is let go before any
 *          record is delivered, since a record may take long to handle (a
 *          brick runs fast fops inline in on_record): a later event is
 *          read by another loop thread meanwhile. When more records are
 *          pending a drain task lets another loop thread deliver them too.
 *          Records of one connection may therefore be handled concurrently
 *          and in any order (RPC matches them by XID).
 * Output:  conn-out.c: vrpc_conn_send (any thread) writes the record
 *          directly when the queue is empty; what the socket does not take
 *          is queued (bulk data by reference) and EPOLLOUT is armed.
 * Threads: input (edge-triggered, on the socket) and output (one-shot,
 *          on a dup of it) are separate registrations. EPOLLOUT is armed
 *          only while is_out_armed is false (set by whoever arms it,
 *          cleared by the output callback when it runs), so the output
 *          callback never runs twice at once. conn->lock guards the
 *          queues and the flags; the input side (parser, staging) belongs
 *          to the thread holding is_reading.
 * TLS:     conn-tls.c, when vrpc_conn_set_tls gave the connection an SSL
 *          object: the input step and the flush go through it (one
 *          branch on c->ssl; the plain path is unchanged).
 * Lifetime: refcounted; the registrations hold one ref from
 *          vrpc_conn_start until vrpc_conn_close, and each callback holds
 *          its own while it runs.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conn-int.h"

/* The connection whose record this thread is delivering (or whose input
 * callback it runs), so that a close from inside on_record neither waits
 * for itself nor for the loop to end this very callback. */
static __thread vrpc_conn_t *conn_tls_cur;
/* The connection whose on_record this thread is inside. */
static __thread vrpc_conn_t *conn_tls_deliv;



static void
conn_fill_peer(vrpc_conn_t *c)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;

    if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

            inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
            port = ntohs(sin->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

            inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
            port = ntohs(sin6->sin6_port);
        }
    }
    snprintf(c->peer_addr, sizeof(c->peer_addr), "%s", host);
    snprintf(c->peer, sizeof(c->peer), "%s:%u", host, port);
}


int
vrpc_conn_new(vl_loop_t *loop, int fd, bool is_connecting,
              const struct vrpc_conn_ops *ops, void *arg, vrpc_conn_t **out)
{
    vrpc_conn_t *c = NULL;
    int one = 1, bufsz = CONN_SOCK_BUF;
    int rc = -ENOMEM;
    int fl;

    fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        rc = -errno;
        goto out;
    }
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));

    c = vl_calloc(NULL, 1, sizeof(*c), VL_MT_MISC);
    if (c == NULL)
        goto out;
    c->stage = vl_malloc(NULL, CONN_STAGE_SIZE, VL_MT_MISC);
    if (c->stage == NULL)
        goto out;
    rc = pthread_mutex_init(&c->lock, NULL);
    if (rc != 0) {
        rc = -rc;
        goto out;
    }
    rc = pthread_cond_init(&c->close_cond, NULL);
    if (rc != 0) {
        pthread_mutex_destroy(&c->lock);
        rc = -rc;
        goto out;
    }
    atomic_init(&c->refs, 1);
    c->loop = loop;
    c->fd = fd;
    c->out_fd = -1;
    c->ops = ops;
    c->arg = arg;
    c->is_connecting = is_connecting;
    vrpc_rm_init(&c->rm, VRPC_MAX_RECORD);
    vrpc_conn_lim_init(c);
    conn_fill_peer(c);
    *out = c;
    return 0;
out:
    if (c != NULL)
        vl_free(c->stage);
    vl_free(c);
    close(fd);
    return rc;
}


vrpc_conn_t *
vrpc_conn_ref(vrpc_conn_t *c)
{
    atomic_fetch_add(&c->refs, 1);
    return c;
}


void
vrpc_conn_unref(vrpc_conn_t *c)
{
    if (c == NULL || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    vrpc_conn_out_clear_locked(c);
    while (c->pend_head != NULL) {
        struct conn_rec *r = c->pend_head;

        c->pend_head = r->next;
        vl_buf_unref(r->rec);
        vl_free(r);
    }
    vrpc_rm_clear(&c->rm);
    vrpc_conn_tls_free(c);
    vrpc_conn_lim_free(c);
    if (c->fd >= 0)
        close(c->fd);
    if (c->out_fd >= 0)
        close(c->out_fd);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->close_cond);
    vl_free(c->stage);
    vl_free(c);
}


const char *
vrpc_conn_peer(const vrpc_conn_t *c)
{
    return c->peer;
}


const char *
vrpc_conn_peer_addr(const vrpc_conn_t *c)
{
    return c->peer_addr;
}


bool
vrpc_conn_is_closed(vrpc_conn_t *c)
{
    bool closed;

    pthread_mutex_lock(&c->lock);
    closed = c->is_closed;
    pthread_mutex_unlock(&c->lock);
    return closed;
}


int
vrpc_conn_set_keepalive(vrpc_conn_t *c, const struct vrpc_keepalive *ka)
{
    int on = ka->idle_s > 0;
    /* TCP_USER_TIMEOUT is in ms; the others in s (the kernel caps them
     * at 32767 s and 127 probes: larger values fail with EINVAL). */
    unsigned ut_ms = ka->user_timeout_s > UINT_MAX / 1000
                         ? UINT_MAX : ka->user_timeout_s * 1000;

    if (setsockopt(c->fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) < 0)
        return -errno;
    if (on
        && (setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPIDLE,
                       &(int){(int)ka->idle_s}, sizeof(int)) < 0
            || setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPINTVL,
                          &(int){(int)ka->intvl_s}, sizeof(int)) < 0
            || setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPCNT,
                          &(int){(int)ka->count}, sizeof(int)) < 0))
        return -errno;
    if (setsockopt(c->fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut_ms,
                   sizeof(ut_ms)) < 0)
        return -errno;
    return 0;
}


/* True if the calling thread is inside one of c's callbacks. */
static bool
conn_in_own_cb_locked(vrpc_conn_t *c)
{
    pthread_t self = pthread_self();

    return conn_tls_cur == c
           || (c->is_out_running && pthread_equal(c->out_thread, self));
}


void
vrpc_conn_close(vrpc_conn_t *c, int reason)
{
    vl_io_t *io_in, *io_out;
    bool had_regs, is_timer_dropped, is_lim_dropped;
    unsigned self_delivering;

    pthread_mutex_lock(&c->lock);
    if (c->is_closed) {
        /* Someone else is closing: wait until on_close has run, so that
         * when this returns no callback of c is running. Inside c's own
         * callback we must not wait (the closer may be waiting for that
         * callback in vl_io_del). */
        while (!c->is_close_done && !conn_in_own_cb_locked(c)
               && !pthread_equal(c->closer, pthread_self()))
            pthread_cond_wait(&c->close_cond, &c->lock);
        pthread_mutex_unlock(&c->lock);
        return;
    }
    c->is_closed = true;
    c->closer = pthread_self();
    /* Unsent records go now (with the buffers they hold): nobody will
     * write them. */
    vrpc_conn_out_clear_locked(c);
    io_in = c->io_in;
    c->io_in = NULL;
    io_out = c->io_out;
    c->io_out = NULL;
    had_regs = c->is_started;
    is_timer_dropped = vrpc_conn_tls_cancel_locked(c);
    is_lim_dropped = vrpc_conn_lim_close_locked(c);
    /* Records being delivered on other threads finish before on_close
     * (the owner frees its state there); no new delivery starts once
     * is_closed is set. */
    self_delivering = conn_tls_deliv == c ? 1 : 0;
    while (c->n_delivering > self_delivering)
        pthread_cond_wait(&c->close_cond, &c->lock);
    pthread_mutex_unlock(&c->lock);

    /* After this no callback runs (except the one we may be in) and no
     * sender touches fd: senders check is_closed under the lock. */
    vl_io_del(io_in);
    vl_io_del(io_out);
    shutdown(c->fd, SHUT_RDWR);
    if (c->ops->on_close != NULL)
        c->ops->on_close(c, reason, c->arg);
    pthread_mutex_lock(&c->lock);
    c->is_close_done = true;
    pthread_cond_broadcast(&c->close_cond);
    pthread_mutex_unlock(&c->lock);
    if (is_timer_dropped)
        vrpc_conn_unref(c); /* the handshake deadline's ref */
    if (is_lim_dropped)
        vrpc_conn_unref(c); /* the deadline check's ref */
    if (had_regs)
        vrpc_conn_unref(c); /* the registrations' ref */
}


int
vrpc_conn_pend_push(vrpc_conn_t *c, vl_buf_t *rec, size_t len)
{
    struct conn_rec *r = vl_malloc(NULL, sizeof(*r), VL_MT_MISC);

    if (r == NULL) {
        vl_buf_unref(rec);
        return -ENOMEM;
    }
    r->next = NULL;
    r->rec = rec;
    r->len = len;
    pthread_mutex_lock(&c->lock);
    if (c->pend_tail != NULL)
        c->pend_tail->next = r;
    else
        c->pend_head = r;
    c->pend_tail = r;
    pthread_mutex_unlock(&c->lock);
    return 0;
}


/* Before the reader lets go of an emptied socket: in the middle of a
 * large body (a 1 MiB read reply or write payload), asks the kernel not to
 * raise an input event until the rest of it (up to CONN_LOWAT_MAX) is
 * there. Without it every loopback segment of the body (64 KiB) raises an
 * edge, wakes a second loop thread that finds the parser held, and costs
 * a read: 17-20 syscalls and several wake-ups per MiB. Back to the default
 * (1 byte) between records, so small records raise events at once. When
 * lowering it, the kernel signals at once if enough is already waiting
 * (and it signals anyway at EOF, on errors, and when the receive window
 * fills), so no data is left without an event. */
static void
conn_set_lowat(vrpc_conn_t *c, int fd)
{
    char *p;
    size_t rest = vrpc_rm_direct(&c->rm, &p);
    int want = 0;

    /* A mark in force that the rest still reaches is kept: one
     * setsockopt per large body, not one per short read. */
    if (rest >= CONN_LOWAT_MIN && c->rcv_lowat > 0
        && (size_t)c->rcv_lowat <= rest)
        return;
    if (rest >= CONN_LOWAT_MIN)
        want = (int)(rest < CONN_LOWAT_MAX ? rest : CONN_LOWAT_MAX);
    if (want == c->rcv_lowat)
        return;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &(int){want > 0 ? want : 1},
                   sizeof(int))
        == 0)
        c->rcv_lowat = want;
}


/* Reads and parses what the socket has into the pending queue. Every byte
 * read is parsed before returning, so nothing waits in the staging buffer
 * for an event that will not come. Returns 0 when the socket is empty
 * (EAGAIN or a short read: new data raises a new event), 1 after
 * CONN_READS_PER_CB full reads (more may be waiting, and no event will
 * say so: the caller reads on), or -errno to close with (-ECONNRESET for
 * EOF). */
static int
conn_read(vrpc_conn_t *c, int fd)
{
    bool is_drained = false;

    for (int i = 0;; i++) {
        vl_buf_t *rec = NULL;
        size_t rec_len = 0;
        ssize_t r;
        char *p;
        size_t want;
        int rc;

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
        /* A short read emptied the socket: skip the read that would only
         * say EAGAIN; re-arming EPOLLIN reports data that came since. Not
         * once the peer has shut down: its FIN may have come with the
         * last data in one edge, and no other edge follows, so only
         * reading on finds the end (a brick's last reply and its close). */
        if (is_drained && !atomic_load(&c->is_peer_shut)) {
            conn_set_lowat(c, fd);
            return 0;
        }
        if (i == CONN_READS_PER_CB)
            return 1;
        want = vrpc_rm_direct(&c->rm, &p);
        if (want >= CONN_DIRECT_MIN) {
            r = read(fd, p, want);
            if (r > 0) {
                is_drained = (size_t)r < want;
                rc = vrpc_rm_direct_done(&c->rm, (size_t)r, &rec, &rec_len);
                if (rc == 1 && (rc = vrpc_conn_pend_push(c, rec, rec_len)) != 0)
                    return rc;
                if (rc < 0)
                    return rc;
                continue;
            }
        } else {
            r = read(fd, c->stage, CONN_STAGE_SIZE);
            if (r > 0) {
                is_drained = r < CONN_STAGE_SIZE;
                c->stage_off = 0;
                c->stage_len = (size_t)r;
                continue;
            }
        }
        if (r == 0)
            return -ECONNRESET;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            conn_set_lowat(c, fd);
            return 0;
        }
        if (errno != EINTR)
            return -errno;
    }
}


static void conn_in_cb(vl_io_t *io, int fd, uint32_t events, void *arg);
static void conn_drain_task(void *arg);


/* Registers the input side (edge-triggered: once for the connection's
 * life). An event is raised at once if data is already waiting. */
static int
conn_arm_in_locked(vrpc_conn_t *c)
{
    if (c->io_in != NULL)
        return 0;
    return vl_io_add(c->loop, c->fd, EPOLLIN | EPOLLET | EPOLLRDHUP,
                     conn_in_cb, c, &c->io_in);
}


/* Pops the next pending record for delivery, counting this thread as
 * delivering; NULL when none is left or the connection is closed. Posts a
 * drain task when more records wait and fewer than CONN_MAX_DRAINERS
 * threads work on them. */
static struct conn_rec *
conn_pend_pop_locked(vrpc_conn_t *c)
{
    struct conn_rec *r = c->pend_head;

    if (r == NULL || c->is_closed)
        return NULL;
    c->pend_head = r->next;
    if (c->pend_head == NULL)
        c->pend_tail = NULL;
    c->n_delivering++;
    if (c->pend_head != NULL && c->n_drainers < CONN_MAX_DRAINERS) {
        vrpc_conn_ref(c);
        if (vl_loop_post(c->loop, conn_drain_task, c) == 0)
            c->n_drainers++;
        else
            vrpc_conn_unref(c); /* not the last ref: we hold one */
    }
    return r;
}


/* Delivers pending records until none is left; the caller counts as one
 * drainer and holds a ref. */
static void
conn_drain(vrpc_conn_t *c)
{
    vrpc_conn_t *saved = conn_tls_cur;
    vrpc_conn_t *saved_deliv = conn_tls_deliv;
    struct conn_rec *r;

    conn_tls_cur = c;
    pthread_mutex_lock(&c->lock);
    while ((r = conn_pend_pop_locked(c)) != NULL) {
        pthread_mutex_unlock(&c->lock);
        conn_tls_deliv = c;
        vrpc_conn_lim_delivered(c);
        c->ops->on_record(c, r->rec, r->len, c->arg);
        conn_tls_deliv = saved_deliv;
        vl_buf_unref(r->rec);
        vl_free(r);
        pthread_mutex_lock(&c->lock);
        c->n_delivering--;
        if (c->is_closed)
            pthread_cond_broadcast(&c->close_cond);
    }
    c->n_drainers--;
    pthread_mutex_unlock(&c->lock);
    conn_tls_cur = saved;
}


static void
conn_drain_task(void *arg)
{
    vrpc_conn_t *c = arg;

    conn_drain(c);
    vrpc_conn_unref(c); /* the post's ref */
}


static void conn_read_task(void *arg);


/* A record mark too large to be one can be the start of a TLS record
 * (content type 20-23, version 3.x): the peer speaks TLS and this side
 * does not. Says so instead of "message too long". */
static void
conn_tell_tls_mismatch(vrpc_conn_t *c)
{
    const uint8_t *m = c->rm.mark; /* the mark that was refused */

    if (m[0] >= 20 && m[0] <= 23 && m[1] == 3)
        vl_glog("rpc", VL_LOG_ERROR,
                "%s: the peer speaks TLS and this side does not (turn "
                "client.ssl/server.ssl, or mortard's secure-access, on "
                "here, or off there)",
                c->peer);
}


/* Reads what the socket has, then delivers what was parsed; on a loop
 * thread, from the input event or a posted read task. */
static void
conn_input(vrpc_conn_t *c)
{
    vrpc_conn_t *saved = conn_tls_cur;
    bool is_pending;
    int rc;

    pthread_mutex_lock(&c->lock);
    if (c->is_closed || c->is_reading) {
        /* The holder reads again before letting the parser go. */
        c->is_read_again = !c->is_closed;
        pthread_mutex_unlock(&c->lock);
        return;
    }
    c->is_reading = true;
    pthread_mutex_unlock(&c->lock);
    conn_tls_cur = c;

    for (;;) {
        /* We hold the parser: no other thread reads. */
        vrpc_conn_lim_read_begin(c);
        rc = c->ssl != NULL ? vrpc_conn_tls_input(c) : conn_read(c, c->fd);
        vrpc_conn_lim_read_end(c, rc);
        if (rc == -EMSGSIZE && c->ssl == NULL)
            conn_tell_tls_mismatch(c);

        pthread_mutex_lock(&c->lock);
        if (rc == 0 && c->is_read_again && !c->is_closed) {
            /* Data came after our last read: read it before letting go,
             * since its event has come and gone. */
            c->is_read_again = false;
            pthread_mutex_unlock(&c->lock);
            continue;
        }
        if (rc == 1 && !c->is_closed) {
            /* More may be waiting and no event will say so. Deliver what
             * we have and let a posted task read on (other sockets run
             * first); without memory for the post, read on here. */
            vrpc_conn_ref(c);
            if (vl_loop_post(c->loop, conn_read_task, c) != 0) {
                pthread_mutex_unlock(&c->lock);
                vrpc_conn_unref(c); /* not the last ref: we hold one */
                continue;
            }
        }
        if (rc == 1) {
            c->is_read_again = false; /* the task reads anyway */
            rc = 0;
        }
        c->is_reading = false;
        is_pending = c->pend_head != NULL;
        if (is_pending)
            c->n_drainers++;
        pthread_mutex_unlock(&c->lock);
        break;
    }
    /* Records that arrived before an EOF or error are still delivered. */
    if (is_pending)
        conn_drain(c);
    /* Close while still marked as ours: a concurrent closer waits for
     * this callback in vl_io_del, so we must not wait for it. */
    if (rc != 0)
        vrpc_conn_close(c, rc);
    conn_tls_cur = saved;
}


void
vrpc_conn_input_kick(vrpc_conn_t *c)
{
    conn_input(c);
}


static void
conn_read_task(void *arg)
{
    vrpc_conn_t *c = arg;

    conn_input(c);
    vrpc_conn_unref(c); /* the post's ref */
}


static void
conn_in_cb(vl_io_t *io, int fd, uint32_t events, void *arg)
{
    /* The registration's ref may go while we run (a close from inside a
     * record handler), so the callback holds its own. */
    vrpc_conn_t *c = vrpc_conn_ref(arg);

    (void)io;
    (void)fd;
    if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        atomic_store(&c->is_peer_shut, true);
    conn_input(c);
    vrpc_conn_unref(c);
}


int
vrpc_conn_connect_done(vrpc_conn_t *c)
{
    int err = 0;
    socklen_t sl = sizeof(err);
    int rc;

    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0)
        err = errno;
    if (err != 0) {
        if (c->ops->on_connect != NULL)
            c->ops->on_connect(c, -err, c->arg);
        return -err;
    }
    conn_fill_peer(c);
    pthread_mutex_lock(&c->lock);
    c->is_connecting = false;
    /* Input starts only now, so that a refused connect is reported by
     * on_connect rather than by a failed read. */
    rc = c->is_closed ? 0 : conn_arm_in_locked(c);
    pthread_mutex_unlock(&c->lock);
    if (rc != 0)
        return rc;
    if (c->ssl != NULL) {
        /* The handshake (ClientHello now) decides; on_connect follows
         * it. */
        conn_input(c);
        return 0;
    }
    if (c->ops->on_connect != NULL)
        c->ops->on_connect(c, 0, c->arg);
    return 0;
}


int
vrpc_conn_start(vrpc_conn_t *c)
{
    int rc = 0;

    c->out_fd = fcntl(c->fd, F_DUPFD_CLOEXEC, 0);
    if (c->out_fd < 0)
        return -errno;
    vrpc_conn_ref(c); /* for the registrations */
    pthread_mutex_lock(&c->lock);
    c->is_started = true;
    /* Under the lock so that no callback runs before io_in/io_out are
     * set. A connecting socket waits for EPOLLOUT first. */
    if (c->ssl != NULL)
        rc = vrpc_conn_tls_start_locked(c);
    if (rc == 0 && c->is_connecting)
        rc = vrpc_conn_arm_out_locked(c);
    else if (rc == 0)
        rc = conn_arm_in_locked(c);
    if (rc == 0 && !c->is_connecting && c->out_head != NULL)
        rc = vrpc_conn_arm_out_locked(c);
    if (rc == 0)
        rc = vrpc_conn_lim_start_locked(c);
    /* A TLS client on a socket already connected speaks first: the
     * writable event starts its handshake. */
    if (rc == 0 && !c->is_connecting && c->ssl != NULL && c->is_tls_client) {
        atomic_store(&c->is_tls_in_wants_out, true);
        rc = vrpc_conn_arm_out_locked(c);
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}
