/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-loopback: a vrpc client and a small test server over 127.0.0.1 on
 * a 2-thread loop: 1000 calls in flight answered out of order, a 4 MiB
 * payload both ways, RPC errors for unknown programs and procedures,
 * garbage that closes only its own connection, calls failing with
 * -ENOTCONN when the server drops the connection, a record whose
 * handler blocks not delaying the next record of the same connection,
 * records arriving split, batched and in bulk on a raw socket, and a
 * peer dying in the middle of a record; the keepalive options reach the
 * socket.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <cmocka.h>

#include "vrpc.h"

#define T_PROG 0x20000099
#define T_ECHO 1   /* reply now: count = fd * 2, payload echoed */
#define T_DEFER 2  /* reply at the next T_FLUSH */
#define T_FLUSH 3  /* reply deferred calls in reverse order, then this */
#define T_BLOCK 4  /* handler waits for srv.is_released, then echoes */
#define T_N 1000
#define T_WAIT_MS 30000

/* ---- test server ---- */

struct t_defer {
    uint32_t xid;   /* call to answer */
    uint64_t value; /* its argument */
};

struct t_server {
    vl_loop_t *loop;               /* borrowed */
    vrpc_listener_t *l;            /* owned */
    pthread_mutex_t lock;          /* guards below */
    vrpc_conn_t *conns[16];        /* refs to accepted connections */
    int n_conns;
    struct t_defer defer[T_N + 16]; /* deferred calls */
    int n_defer;
    int n_closed;                  /* connections closed */
    pthread_cond_t cond;           /* is_released or n_blocked changed */
    int n_blocked;                 /* T_BLOCK handlers waiting */
    bool is_released;              /* T_BLOCK handlers may go on */
};

static struct t_server srv;


static void
t_srv_record(vrpc_conn_t *c, vl_buf_t *rec, size_t len, void *arg)
{
    struct vrpc_call_hdr h;
    size_t off, used = 0;
    bool xid_ok;
    mrt_fd_args a;
    mrt_count_rsp r;

    if (vrpc_decode_call(rec->data, len, &h, &off, &xid_ok) != 0) {
        vrpc_conn_close(c, -EPROTO);
        return;
    }
    if (h.prog != T_PROG) {
        vrpc_send_reply(c, h.xid, VRPC_PROG_UNAVAIL, NULL, NULL, NULL, 0);
        return;
    }
    if (h.proc < T_ECHO || h.proc > T_BLOCK) {
        vrpc_send_reply(c, h.xid, VRPC_PROC_UNAVAIL, NULL, NULL, NULL, 0);
        return;
    }
    memset(&a, 0, sizeof(a));
    if (vrpc_decode_body(rec->data + off, len - off,
                         (xdrproc_t)xdr_mrt_fd_args, &a, &used) != 0) {
        vrpc_send_reply(c, h.xid, VRPC_GARBAGE_ARGS, NULL, NULL, NULL, 0);
        return;
    }
    memset(&r, 0, sizeof(r));
    if (h.proc == T_BLOCK) {
        /* Like a brick's fop run inline on the event thread that got it. */
        pthread_mutex_lock(&srv.lock);
        srv.n_blocked++;
        pthread_cond_broadcast(&srv.cond);
        while (!srv.is_released)
            pthread_cond_wait(&srv.cond, &srv.lock);
        srv.n_blocked--;
        pthread_mutex_unlock(&srv.lock);
    }
    if (h.proc == T_ECHO || h.proc == T_BLOCK) {
        struct iovec p = {rec->data + off + used, len - off - used};

        r.count = (int64_t)(a.fd * 2);
        vrpc_send_reply(c, h.xid, VRPC_SUCCESS,
                        (xdrproc_t)xdr_mrt_count_rsp, &r, &p, 1);
        return;
    }
    pthread_mutex_lock(&srv.lock);
    if (h.proc == T_DEFER) {
        srv.defer[srv.n_defer].xid = h.xid;
        srv.defer[srv.n_defer++].value = a.fd;
        pthread_mutex_unlock(&srv.lock);
        return;
    }
    for (int i = srv.n_defer - 1; i >= 0; i--) {
        r.count = (int64_t)(srv.defer[i].value * 2);
        vrpc_send_reply(c, srv.defer[i].xid, VRPC_SUCCESS,
                        (xdrproc_t)xdr_mrt_count_rsp, &r, NULL, 0);
    }
    srv.n_defer = 0;
    pthread_mutex_unlock(&srv.lock);
    r.count = -1;
    vrpc_send_reply(c, h.xid, VRPC_SUCCESS, (xdrproc_t)xdr_mrt_count_rsp, &r,
                    NULL, 0);
}


static void
t_srv_close(vrpc_conn_t *c, int reason, void *arg)
{
    pthread_mutex_lock(&srv.lock);
    srv.n_closed++;
    pthread_mutex_unlock(&srv.lock);
}


static const struct vrpc_conn_ops t_srv_ops = {
    .on_record = t_srv_record,
    .on_close = t_srv_close,
};


static void
t_srv_accept(int fd, const struct sockaddr_storage *peer, void *arg)
{
    vrpc_conn_t *c;

    if (vrpc_conn_new(srv.loop, fd, false, &t_srv_ops, NULL, &c) != 0)
        return;
    pthread_mutex_lock(&srv.lock);
    if (srv.n_conns < 16)
        srv.conns[srv.n_conns++] = c;
    pthread_mutex_unlock(&srv.lock);
    vrpc_conn_start(c);
}

/* ---- client side ---- */

struct t_client {
    pthread_mutex_t lock;  /* guards below */
    pthread_cond_t cond;   /* signalled on every change */
    int connected;         /* 1 ok, <0 error */
    int closed;            /* on_close seen */
    int n_done;            /* replies seen */
    int n_ok;              /* replies that matched */
    int n_enotconn;        /* -ENOTCONN answers */
    int last_status;       /* of the last reply */
    vl_buf_t *last_rec;    /* ref on the last reply record */
    size_t last_off;       /* its body offset */
    size_t last_len;       /* its length */
};

static struct t_client cli;


static void
t_wait(int *field, int want)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += T_WAIT_MS / 1000;
    pthread_mutex_lock(&cli.lock);
    while (*field < want) {
        if (pthread_cond_timedwait(&cli.cond, &cli.lock, &ts) != 0)
            break;
    }
    pthread_mutex_unlock(&cli.lock);
}


static void
t_on_connect(vrpc_clnt_t *c, int status, void *arg)
{
    pthread_mutex_lock(&cli.lock);
    cli.connected = status == 0 ? 1 : status;
    pthread_cond_broadcast(&cli.cond);
    pthread_mutex_unlock(&cli.lock);
}


static void
t_on_close(vrpc_clnt_t *c, int reason, void *arg)
{
    pthread_mutex_lock(&cli.lock);
    cli.closed++;
    pthread_cond_broadcast(&cli.cond);
    pthread_mutex_unlock(&cli.lock);
}


/* cookie: the argument sent; checks the doubled answer. */
static void
t_reply(void *cookie, int status, vl_buf_t *rec, size_t off, size_t len)
{
    uint64_t want = (uint64_t)(uintptr_t)cookie;
    mrt_count_rsp r;
    bool ok = false;

    if (status == 0) {
        memset(&r, 0, sizeof(r));
        ok = vrpc_decode_body(rec->data + off, len - off,
                              (xdrproc_t)xdr_mrt_count_rsp, &r, NULL) == 0
             && (want == UINT64_MAX ? r.count == -1
                                    : r.count == (int64_t)(want * 2));
    }
    pthread_mutex_lock(&cli.lock);
    cli.n_done++;
    cli.n_ok += ok;
    cli.n_enotconn += status == -ENOTCONN;
    cli.last_status = status;
    vl_buf_unref(cli.last_rec);
    cli.last_rec = status == 0 ? vl_buf_ref(rec) : NULL;
    cli.last_off = off;
    cli.last_len = len;
    pthread_cond_broadcast(&cli.cond);
    pthread_mutex_unlock(&cli.lock);
}


static void
t_reset(void)
{
    pthread_mutex_lock(&cli.lock);
    cli.n_done = cli.n_ok = cli.n_enotconn = 0;
    vl_buf_unref(cli.last_rec);
    cli.last_rec = NULL;
    pthread_mutex_unlock(&cli.lock);
}


static int
t_call(vrpc_clnt_t *c, uint32_t prog, uint32_t proc, uint64_t v,
       const struct iovec *p, int n_p)
{
    mrt_fd_args a = {.fd = v};

    return vrpc_clnt_call(c, prog, MRT_VERSION, proc, NULL,
                          (xdrproc_t)xdr_mrt_fd_args, &a, p, n_p, t_reply,
                          (void *)(uintptr_t)v);
}


static vrpc_clnt_t *
t_connect(void)
{
    vrpc_clnt_t *c = NULL;
    vl_err_t err;
    int fd = -1;

    cli.connected = 0;
    assert_int_equal(vrpc_connect_start("127.0.0.1",
                                        vrpc_listener_port(srv.l), &fd, &err),
                     0);
    assert_int_equal(vrpc_clnt_new(srv.loop, fd, true, t_on_connect,
                                   t_on_close, NULL, &c),
                     0);
    assert_int_equal(vrpc_clnt_start(c), 0);
    t_wait(&cli.connected, 1);
    assert_int_equal(cli.connected, 1);
    return c;
}


static int
t_setup(void **state)
{
    vl_err_t err;

    vl_global_init();
    memset(&srv, 0, sizeof(srv));
    memset(&cli, 0, sizeof(cli));
    pthread_mutex_init(&srv.lock, NULL);
    pthread_cond_init(&srv.cond, NULL);
    pthread_mutex_init(&cli.lock, NULL);
    pthread_cond_init(&cli.cond, NULL);
    srv.loop = vl_loop_new(2);
    assert_non_null(srv.loop);
    assert_int_equal(vl_loop_start(srv.loop), 0);
    assert_int_equal(vrpc_listen(srv.loop, "127.0.0.1", 0, t_srv_accept,
                                 NULL, &srv.l, &err),
                     0);
    return 0;
}


static int
t_teardown(void **state)
{
    vrpc_listener_free(srv.l);
    for (int i = 0; i < srv.n_conns; i++) {
        vrpc_conn_close(srv.conns[i], -ESHUTDOWN);
        vrpc_conn_unref(srv.conns[i]);
    }
    vl_loop_stop(srv.loop);
    vl_loop_free(srv.loop);
    vl_buf_unref(cli.last_rec);
    return 0;
}


static void
test_many_in_flight(void **state)
{
    vrpc_clnt_t *c = t_connect();

    t_reset();
    for (uint64_t i = 0; i < T_N; i++)
        assert_int_equal(t_call(c, T_PROG, T_DEFER, i, NULL, 0), 0);
    /* The server holds every one of them until the flush. */
    for (int tries = 0; tries < 3000 && srv.n_defer < T_N; tries++)
        usleep(1000);
    pthread_mutex_lock(&srv.lock);
    assert_int_equal(srv.n_defer, T_N);
    pthread_mutex_unlock(&srv.lock);
    assert_int_equal(vrpc_clnt_pending(c), T_N);
    assert_int_equal(cli.n_done, 0);
    assert_int_equal(t_call(c, T_PROG, T_FLUSH, UINT64_MAX, NULL, 0), 0);
    t_wait(&cli.n_done, T_N + 1);
    assert_int_equal(cli.n_done, T_N + 1);
    assert_int_equal(cli.n_ok, T_N + 1);
    assert_int_equal(vrpc_clnt_pending(c), 0);

    vrpc_clnt_close(c);
    t_wait(&cli.closed, 1);
    vrpc_clnt_unref(c);
}


static void
test_big_payload(void **state)
{
    vrpc_clnt_t *c = t_connect();
    size_t n = 4 * VL_MiB;
    char *a = malloc(n / 2), *b = malloc(n / 2);
    struct iovec p[2] = {{a, n / 2}, {b, n / 2}};
    mrt_count_rsp r;
    size_t used = 0;

    for (size_t i = 0; i < n / 2; i++) {
        a[i] = (char)(i * 7);
        b[i] = (char)(i * 13 + 1);
    }
    t_reset();
    assert_int_equal(t_call(c, T_PROG, T_ECHO, 21, p, 2), 0);
    t_wait(&cli.n_done, 1);
    assert_int_equal(cli.n_ok, 1);
    memset(&r, 0, sizeof(r));
    assert_int_equal(vrpc_decode_body(cli.last_rec->data + cli.last_off,
                                      cli.last_len - cli.last_off,
                                      (xdrproc_t)xdr_mrt_count_rsp, &r,
                                      &used),
                     0);
    assert_int_equal(cli.last_len - cli.last_off - used, n);
    assert_memory_equal(cli.last_rec->data + cli.last_off + used, a, n / 2);
    assert_memory_equal(cli.last_rec->data + cli.last_off + used + n / 2, b,
                        n / 2);
    free(a);
    free(b);
    vrpc_clnt_close(c);
    vrpc_clnt_unref(c);
}


static void
test_rpc_errors(void **state)
{
    vrpc_clnt_t *c = t_connect();

    t_reset();
    assert_int_equal(t_call(c, T_PROG + 1, T_ECHO, 1, NULL, 0), 0);
    t_wait(&cli.n_done, 1);
    assert_int_equal(cli.last_status, -EOPNOTSUPP);
    assert_int_equal(t_call(c, T_PROG, 77, 1, NULL, 0), 0);
    t_wait(&cli.n_done, 2);
    assert_int_equal(cli.last_status, -EOPNOTSUPP);
    /* The connection still works. */
    assert_int_equal(t_call(c, T_PROG, T_ECHO, 5, NULL, 0), 0);
    t_wait(&cli.n_done, 3);
    assert_int_equal(cli.n_ok, 1);
    vrpc_clnt_close(c);
    vrpc_clnt_unref(c);
}


static void
t_release(bool is_released)
{
    pthread_mutex_lock(&srv.lock);
    srv.is_released = is_released;
    pthread_cond_broadcast(&srv.cond);
    pthread_mutex_unlock(&srv.lock);
}


/* A handler blocked on one loop thread (a brick's inline fop) does not
 * hold up later records of its connection: a call sent while it blocks,
 * and one sent right behind it (likely read in the same buffer), are
 * answered before it is released. Without re-arming input before
 * delivery, both would wait for the blocked one. */
static void
test_blocked_record_does_not_stall_connection(void **state)
{
    vrpc_clnt_t *c = t_connect();
    struct timespec ts;
    int n_blocked;

    for (int round = 0; round < 2; round++) {
        t_reset();
        t_release(false);
        assert_int_equal(t_call(c, T_PROG, T_BLOCK, 7, NULL, 0), 0);
        if (round == 0) {
            /* Wait until the handler holds its thread. */
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += T_WAIT_MS / 1000;
            pthread_mutex_lock(&srv.lock);
            while (srv.n_blocked < 1
                   && pthread_cond_timedwait(&srv.cond, &srv.lock, &ts) == 0)
                ;
            n_blocked = srv.n_blocked;
            pthread_mutex_unlock(&srv.lock);
            assert_int_equal(n_blocked, 1);
        }
        assert_int_equal(t_call(c, T_PROG, T_ECHO, 3, NULL, 0), 0);
        t_wait(&cli.n_done, 1);
        pthread_mutex_lock(&srv.lock);
        n_blocked = srv.n_blocked;
        pthread_mutex_unlock(&srv.lock);
        pthread_mutex_lock(&cli.lock);
        int n_done = cli.n_done, n_ok = cli.n_ok;
        pthread_mutex_unlock(&cli.lock);
        t_release(true);
        assert_int_equal(n_done, 1);
        assert_int_equal(n_ok, 1);
        assert_int_equal(n_blocked, 1);
        t_wait(&cli.n_done, 2);
        assert_int_equal(cli.n_ok, 2);
    }
    vrpc_clnt_close(c);
    t_wait(&cli.closed, 1);
    vrpc_clnt_unref(c);
}


/* Garbage on one connection closes it; another keeps working. */
static void
test_garbage_closes_only_that_connection(void **state)
{
    vrpc_clnt_t *c = t_connect();
    struct sockaddr_in sin = {.sin_family = AF_INET};
    const char junk[] = "GET / HTTP/1.0\r\n\r\n";
    const char bad_call[] = {(char)0x80, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 7};
    char buf[64];
    int fd;

    for (int round = 0; round < 2; round++) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        sin.sin_port = htons(vrpc_listener_port(srv.l));
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)),
                         0);
        if (round == 0)
            assert_int_equal(write(fd, junk, sizeof(junk) - 1),
                             (ssize_t)sizeof(junk) - 1);
        else /* well-framed record that is not an RPC call */
            assert_int_equal(write(fd, bad_call, sizeof(bad_call)),
                             (ssize_t)sizeof(bad_call));
        /* The server closes it: read sees EOF (or a reset). */
        assert_true(read(fd, buf, sizeof(buf)) <= 0);
        close(fd);
    }
    t_reset();
    assert_int_equal(t_call(c, T_PROG, T_ECHO, 9, NULL, 0), 0);
    t_wait(&cli.n_done, 1);
    assert_int_equal(cli.n_ok, 1);
    vrpc_clnt_close(c);
    vrpc_clnt_unref(c);
}


/* One framed T_ECHO call record (mark, call, n_payload bytes) in buf. */
static size_t
t_frame_echo(char *buf, size_t room, uint32_t xid, size_t n_payload)
{
    mrt_fd_args a = {.fd = xid};
    uint32_t mark;
    size_t hdr_len;
    char *hdr;

    assert_int_equal(vrpc_encode_call(xid, T_PROG, MRT_VERSION, T_ECHO, NULL,
                                      (xdrproc_t)xdr_mrt_fd_args, &a, &hdr,
                                      &hdr_len), 0);
    assert_true(4 + hdr_len + n_payload <= room);
    mark = htonl((uint32_t)(hdr_len + n_payload) | VRPC_LAST_FRAG);
    memcpy(buf, &mark, 4);
    memcpy(buf + 4, hdr, hdr_len);
    memset(buf + 4 + hdr_len, 'p', n_payload);
    vl_free(hdr);
    return 4 + hdr_len + n_payload;
}


#define T_RAW_MAX 512

/* Reads replies on a raw socket: each must be a success for an XID in
 * 1..T_RAW_MAX not seen before. */
struct t_raw_reader {
    int fd;                   /* borrowed */
    int n_want;               /* replies to read */
    int n_good;               /* well-formed, new XID, success */
    bool seen[T_RAW_MAX + 1]; /* by XID */
};


static bool
t_read_full(int fd, char *p, size_t len)
{
    while (len > 0) {
        ssize_t r = read(fd, p, len);

        if (r <= 0)
            return false;
        p += r;
        len -= (size_t)r;
    }
    return true;
}


static void *
t_raw_reader_main(void *arg)
{
    struct t_raw_reader *rr = arg;
    size_t cap = 256 * 1024;
    char *rec = malloc(cap);

    for (int i = 0; rec != NULL && i < rr->n_want; i++) {
        uint32_t mark;
        uint32_t xid;
        size_t len;
        size_t off;
        int accept;

        if (!t_read_full(rr->fd, (char *)&mark, 4))
            break;
        len = ntohl(mark) & ~VRPC_LAST_FRAG;
        if (len > cap || !t_read_full(rr->fd, rec, len))
            break;
        if (vrpc_decode_reply(rec, len, &xid, &accept, &off) != 0
            || accept != VRPC_SUCCESS || xid == 0 || xid > T_RAW_MAX
            || rr->seen[xid])
            break;
        rr->seen[xid] = true;
        rr->n_good++;
    }
    free(rec);
    return NULL;
}


/* The server gets records in every shape a stream can bring: one byte
 * per arrival, a mark split across arrivals, a hundred records in one
 * arrival, and 16 MiB of 56 KiB records sent as fast as the socket takes
 * them (more than one turn of reads) while replies flow back. Every
 * record is answered once. */
static void
test_partial_and_batched_records(void **state)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    struct t_raw_reader *rr = calloc(1, sizeof(*rr));
    size_t big = 56 * 1024;
    char *buf = malloc(128 * 1024);
    pthread_t th;
    uint32_t xid = 1;
    size_t n;
    int fd;

    (void)state;
    assert_non_null(rr);
    assert_non_null(buf);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sin.sin_port = htons(vrpc_listener_port(srv.l));
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    rr->fd = fd;
    rr->n_want = 1 + 1 + 100 + 300;
    assert_int_equal(pthread_create(&th, NULL, t_raw_reader_main, rr), 0);

    /* One byte at a time. */
    n = t_frame_echo(buf, 4096, xid++, 100);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(write(fd, buf + i, 1), 1);
        usleep(200);
    }
    /* A mark cut in two. */
    n = t_frame_echo(buf, 4096, xid++, 10);
    assert_int_equal(write(fd, buf, 2), 2);
    usleep(20 * 1000);
    assert_int_equal(write(fd, buf + 2, n - 2), (ssize_t)(n - 2));
    /* A hundred in one write. */
    n = 0;
    for (int i = 0; i < 100; i++)
        n += t_frame_echo(buf + n, 128 * 1024 - n, xid++, 8);
    assert_int_equal(write(fd, buf, n), (ssize_t)n);
    /* 300 big ones, back to back. */
    for (int i = 0; i < 300; i++) {
        size_t done = 0;

        n = t_frame_echo(buf, 128 * 1024, xid++, big);
        while (done < n) {
            ssize_t w = write(fd, buf + done, n - done);

            assert_true(w > 0);
            done += (size_t)w;
        }
    }
    pthread_join(th, NULL);
    assert_int_equal(rr->n_good, rr->n_want);
    close(fd);
    free(buf);
    free(rr);
}


/* A peer that dies in the middle of a record (after a split mark, or
 * halfway through a body) has its connection closed, the half record
 * dropped; other connections go on. */
static void
test_peer_dies_mid_record(void **state)
{
    vrpc_clnt_t *c = t_connect();
    struct sockaddr_in sin = {.sin_family = AF_INET};
    char buf[4096];
    int before;
    int n_closed;
    size_t n;
    int fd;

    (void)state;
    for (int round = 0; round < 2; round++) {
        pthread_mutex_lock(&srv.lock);
        before = srv.n_closed;
        pthread_mutex_unlock(&srv.lock);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        sin.sin_port = htons(vrpc_listener_port(srv.l));
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)),
                         0);
        n = t_frame_echo(buf, sizeof(buf), 1, 1000);
        n = round == 0 ? 3 : n / 2;
        assert_int_equal(write(fd, buf, n), (ssize_t)n);
        usleep(20 * 1000);
        close(fd);
        for (int i = 0; i < 3000; i++) {
            pthread_mutex_lock(&srv.lock);
            n_closed = srv.n_closed;
            pthread_mutex_unlock(&srv.lock);
            if (n_closed > before)
                break;
            usleep(1000);
        }
        assert_int_equal(n_closed, before + 1);
    }
    t_reset();
    assert_int_equal(t_call(c, T_PROG, T_ECHO, 4, NULL, 0), 0);
    t_wait(&cli.n_done, 1);
    assert_int_equal(cli.n_ok, 1);
    vrpc_clnt_close(c);
    vrpc_clnt_unref(c);
}


static void
test_server_drop_fails_calls(void **state)
{
    vrpc_clnt_t *c = t_connect();
    int before = cli.closed;

    t_reset();
    for (uint64_t i = 0; i < 10; i++)
        assert_int_equal(t_call(c, T_PROG, T_DEFER, i, NULL, 0), 0);
    for (int tries = 0; tries < 3000 && srv.n_defer < 10; tries++)
        usleep(1000);
    pthread_mutex_lock(&srv.lock);
    srv.n_defer = 0;
    pthread_mutex_unlock(&srv.lock);
    /* on_close takes srv.lock: close without it. */
    for (int i = 0; i < srv.n_conns; i++)
        vrpc_conn_close(srv.conns[i], -ESHUTDOWN);
    t_wait(&cli.n_done, 10);
    assert_int_equal(cli.n_enotconn, 10);
    t_wait(&cli.closed, before + 1);
    assert_int_equal(cli.closed, before + 1);
    /* New calls fail at once. */
    assert_int_equal(t_call(c, T_PROG, T_ECHO, 1, NULL, 0), -ENOTCONN);
    vrpc_clnt_unref(c);
}


static void
test_connect_refused(void **state)
{
    vrpc_clnt_t *c = NULL;
    vl_err_t err;
    uint16_t port;
    int fd = -1;

    /* A port nobody listens on: bind one, note it, close it. */
    {
        vrpc_listener_t *l;

        assert_int_equal(vrpc_listen(srv.loop, "127.0.0.1", 0, t_srv_accept,
                                     NULL, &l, &err),
                         0);
        port = vrpc_listener_port(l);
        vrpc_listener_free(l);
    }
    cli.connected = 0;
    assert_int_equal(vrpc_connect_start("127.0.0.1", port, &fd, &err), 0);
    assert_int_equal(vrpc_clnt_new(srv.loop, fd, true, t_on_connect,
                                   t_on_close, NULL, &c),
                     0);
    assert_int_equal(vrpc_clnt_start(c), 0);
    pthread_mutex_lock(&cli.lock);
    while (cli.connected == 0)
        pthread_cond_wait(&cli.cond, &cli.lock);
    pthread_mutex_unlock(&cli.lock);
    assert_int_equal(cli.connected, -ECONNREFUSED);
    vrpc_clnt_unref(c);
}


static void
test_port_in_use(void **state)
{
    vrpc_listener_t *l = NULL;
    vl_err_t err;
    char want[64];

    assert_int_equal(vrpc_listen(srv.loop, "127.0.0.1",
                                 vrpc_listener_port(srv.l), t_srv_accept,
                                 NULL, &l, &err),
                     -EADDRINUSE);
    snprintf(want, sizeof(want), "port %u in use", vrpc_listener_port(srv.l));
    assert_string_equal(err.msg, want);
}


static int
t_sockopt(int fd, int level, int name)
{
    int v = -1;
    socklen_t len = sizeof(v);

    assert_int_equal(getsockopt(fd, level, name, &v, &len), 0);
    return v;
}


/* The keepalive a brick sets on its clients' connections reaches the
 * socket, and idle_s 0 turns the probes off again. */
static void
test_keepalive_reaches_socket(void **state)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    struct vrpc_keepalive ka = {.idle_s = 7, .intvl_s = 3, .count = 4,
                                .user_timeout_s = 11};
    vrpc_conn_t *c = NULL;
    int fd;

    (void)state;
    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    sin.sin_port = htons(vrpc_listener_port(srv.l));
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    /* Not started: the options only (fd is the connection's now). */
    assert_int_equal(vrpc_conn_new(srv.loop, fd, false, &t_srv_ops, NULL,
                                   &c), 0);
    assert_int_equal(t_sockopt(fd, SOL_SOCKET, SO_KEEPALIVE), 0);
    assert_int_equal(vrpc_conn_set_keepalive(c, &ka), 0);
    assert_int_equal(t_sockopt(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
    assert_int_equal(t_sockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE), 7);
    assert_int_equal(t_sockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL), 3);
    assert_int_equal(t_sockopt(fd, IPPROTO_TCP, TCP_KEEPCNT), 4);
    assert_int_equal(t_sockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 11000);
    ka = (struct vrpc_keepalive){.idle_s = 0, .user_timeout_s = 0};
    assert_int_equal(vrpc_conn_set_keepalive(c, &ka), 0);
    assert_int_equal(t_sockopt(fd, SOL_SOCKET, SO_KEEPALIVE), 0);
    assert_int_equal(t_sockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 0);
    /* Beyond the kernel's bounds: an error, not a silent clamp. */
    ka = (struct vrpc_keepalive){.idle_s = 1, .intvl_s = 1, .count = 1000};
    assert_int_equal(vrpc_conn_set_keepalive(c, &ka), -EINVAL);
    vrpc_conn_unref(c);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_many_in_flight, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(
            test_blocked_record_does_not_stall_connection, t_setup,
            t_teardown),
        cmocka_unit_test_setup_teardown(test_big_payload, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_rpc_errors, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(
            test_garbage_closes_only_that_connection, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_partial_and_batched_records,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_peer_dies_mid_record, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_server_drop_fails_calls, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_connect_refused, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_port_in_use, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_keepalive_reaches_socket,
                                        t_setup, t_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
