/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * protocol/server: the top of a brick graph; serves remote clients.
 *
 * Listens on transport.socket.bind-address:listen-port. Each connection
 * must first complete SETVOLUME (handshake program) naming this brick's
 * subvolume (the child's volume name) from an address the auth.addr
 * patterns allow and, unless allow-insecure is on, from a privileged
 * source port (server-squash.c: only then are its callers' identities
 * believed); then its fop calls (server-fops.c) become requests wound
 * into the child, their callers squashed as the options say.
 *
 * A client cut off by the network (a partition, a machine gone) sends
 * no close: its connection, and the locks it holds here, would stay
 * until TCP gives up, which is never while the brick has nothing to send
 * it. Every client socket gets TCP keepalive and a user timeout
 * (keepalive-time, -interval, -count, tcp-user-timeout: GlusterFS's
 * keys and defaults), so such a client is dropped, and its locks freed
 * for the clients still here, about 42 s after it went silent.
 *
 * Intercepts: nothing (top only; it creates requests).
 * Per client: struct server_client: client id, table of open fds
 *             (wire fd number -> vl_fd_t).
 * Per req:    struct server_call (server-fops.c), malloc'd per call since
 *             the request's private area belongs to the child.
 * Threads:    callbacks on loop threads; replies are sent from whatever
 *             thread answers. Lock order: priv->lock, then client->lock.
 */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "server.h"
#include "tls.h"

#define SERVER_FINI_WAIT_MS 10000

static const char *const server_mem_types[] = {"misc", "client", "call",
                                               NULL};


struct server_client *
server_client_ref(struct server_client *cl)
{
    atomic_fetch_add(&cl->refs, 1);
    return cl;
}


void
server_client_unref(struct server_client *cl)
{
    if (atomic_fetch_sub(&cl->refs, 1) != 1)
        return;
    vrpc_conn_unref(cl->conn);
    pthread_mutex_destroy(&cl->lock);
    vl_free(cl->fds);
    vl_free(cl);
}


bool
server_client_is_bound(struct server_client *cl)
{
    bool bound;

    pthread_mutex_lock(&cl->lock);
    bound = cl->is_bound;
    pthread_mutex_unlock(&cl->lock);
    return bound;
}


int
server_fd_add(struct server_client *cl, vl_fd_t *fd, uint64_t *out_no)
{
    size_t i;
    int rc = 0;

    pthread_mutex_lock(&cl->lock);
    if (cl->is_gone) {
        rc = -ENOTCONN;
        goto out;
    }
    for (i = 0; i < cl->n_fds; i++)
        if (cl->fds[i] == NULL)
            break;
    if (i == cl->n_fds) {
        size_t n = cl->n_fds == 0 ? 16 : cl->n_fds * 2;
        vl_fd_t **nf = vl_realloc(cl->fds, n * sizeof(*nf));

        if (nf == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        memset(nf + cl->n_fds, 0, (n - cl->n_fds) * sizeof(*nf));
        cl->fds = nf;
        cl->n_fds = n;
    }
    cl->fds[i] = fd;
    *out_no = i;
out:
    pthread_mutex_unlock(&cl->lock);
    return rc;
}


vl_fd_t *
server_fd_get(struct server_client *cl, uint64_t no)
{
    vl_fd_t *fd = NULL;

    pthread_mutex_lock(&cl->lock);
    if (no < cl->n_fds && cl->fds[no] != NULL)
        fd = vl_fd_ref(cl->fds[no]);
    pthread_mutex_unlock(&cl->lock);
    return fd;
}


int
server_fd_del(struct server_client *cl, uint64_t no)
{
    vl_fd_t *fd = NULL;

    pthread_mutex_lock(&cl->lock);
    if (no < cl->n_fds) {
        fd = cl->fds[no];
        cl->fds[no] = NULL;
    }
    pthread_mutex_unlock(&cl->lock);
    if (fd == NULL)
        return -EBADF;
    vl_fd_unref(fd);
    return 0;
}


/* True if addr matches one of the comma-separated patterns. */
static bool
server_addr_match(const char *patterns, const char *addr)
{
    const char *p = patterns;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        char pat[256];

        while (n > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n > 0 && n < sizeof(pat)) {
            memcpy(pat, p, n);
            pat[n] = '\0';
            if (fnmatch(pat, addr, 0) == 0)
                return true;
        }
        p = end != NULL ? end + 1 : NULL;
    }
    return false;
}


/* With server.ssl: the client's verified certificate names a common name
 * auth.ssl-allow lists. Otherwise false with the reason in msg. */
static bool
server_ssl_allowed(const struct server_conf *conf, vrpc_conn_t *conn,
                   char *msg, size_t len)
{
    const char *cn = vrpc_conn_tls_peer_cn(conn);

    if (cn == NULL) {
        snprintf(msg, len, "no verified client certificate");
        return false;
    }
    if (!vrpc_tls_cn_allowed(conf->ssl_allow, cn)) {
        snprintf(msg, len, "certificate CN '%.100s' not in auth.ssl-allow",
                 cn);
        return false;
    }
    return true;
}


static void
server_setvolume(struct server_client *cl, const struct vrpc_call_hdr *hdr,
                 vl_buf_t *rec, size_t body_off, size_t len)
{
    vl_xlator_t *xl = cl->priv->xl;
    const struct server_conf *conf = VL_CONF(xl, struct server_conf);
    const char *addr = vrpc_conn_peer_addr(cl->conn);
    const char *child = VL_FIRST_CHILD(xl)->name;
    mrt_setvolume_args a;
    mrt_setvolume_rsp r = {0};
    char msg[MRT_ERRSTR_MAX];

    memset(&a, 0, sizeof(a));
    if (vrpc_decode_body(rec->data + body_off, len - body_off,
                         (xdrproc_t)xdr_mrt_setvolume_args, &a, NULL) != 0) {
        (void)vrpc_send_reply(cl->conn, hdr->xid, VRPC_GARBAGE_ARGS, NULL,
                              NULL, NULL, 0);
        return;
    }
    msg[0] = '\0';
    if (a.proto_version < MRT_PROTO_MIN
        || a.proto_version > MRT_PROTO_VERSION) {
        /* A newer peer, or one older than the oldest whose messages
         * this brick still speaks (7's are a subset of 8's). The brick's
         * version goes back in the text (the reply has no field for it:
         * its layout is frozen): a newer client retries with it. */
        r.status = -EPROTONOSUPPORT;
        snprintf(msg, sizeof(msg), "protocol version %u not supported "
                 "(brick speaks %u)", a.proto_version, MRT_PROTO_VERSION);
    } else if (strcmp(a.subvolume, child) != 0) {
        r.status = -ENOENT;
        snprintf(msg, sizeof(msg), "no such subvolume '%.300s'",
                 a.subvolume);
    } else if ((conf->auth_reject != NULL
                && server_addr_match(conf->auth_reject, addr))
               || !server_addr_match(conf->auth_allow, addr)) {
        r.status = -EACCES;
        snprintf(msg, sizeof(msg), "access denied for %s to subvolume '%.300s'",
                 addr, a.subvolume);
    } else if (cl->priv->tls != NULL
               && !server_ssl_allowed(conf, cl->conn, msg, sizeof(msg))) {
        r.status = -EACCES;
    } else if (!cl->is_trusted && !conf->is_insecure_ok
               && cl->priv->tls == NULL) {
        r.status = -EACCES;
        snprintf(msg, sizeof(msg), "connection from unprivileged port %u "
                 "refused (server.allow-insecure is off; the client must "
                 "run as root)", cl->peer_port);
    }
    if (r.status != 0) {
        vl_log(xl, r.status == -EPROTONOSUPPORT ? VL_LOG_ERROR
                                                : VL_LOG_WARNING,
               "%s (%.100s): %s", vrpc_conn_peer(cl->conn), a.identity, msg);
    } else {
        pthread_mutex_lock(&cl->lock);
        /* A certificate the CA signed and auth.ssl-allow names vouches
         * for the client host as a privileged port does. */
        if (cl->priv->tls != NULL)
            cl->is_trusted = true;
        /* Set before is_bound: a 7 client's calls are never taken
         * for compounds. */
        atomic_store(&cl->proto_version, a.proto_version);
        cl->is_bound = true;
        pthread_mutex_unlock(&cl->lock);
        /* Bound: WRITE-sized records, idle for as long as it likes. */
        vrpc_conn_set_limits(cl->conn, &vrpc_limits_brick);
        vl_log(xl, VL_LOG_INFO, "accepted client %s (%.100s) id %llu "
               "protocol %u", vrpc_conn_peer(cl->conn), a.identity,
               (unsigned long long)cl->client_id, a.proto_version);
    }
    r.error = msg;
    r.client_id = cl->client_id;
    (void)vrpc_send_reply(cl->conn, hdr->xid, VRPC_SUCCESS,
                          (xdrproc_t)xdr_mrt_setvolume_rsp, &r, NULL, 0);
    xdr_free((xdrproc_t)xdr_mrt_setvolume_args, (char *)&a);
}


static void
server_handshake(struct server_client *cl, const struct vrpc_call_hdr *hdr,
                 vl_buf_t *rec, size_t body_off, size_t len)
{
    mrt_ping_rsp ping = {0};

    switch (hdr->proc) {
    case MRT_HS_NULL:
        (void)vrpc_send_reply(cl->conn, hdr->xid, VRPC_SUCCESS, NULL, NULL,
                              NULL, 0);
        break;
    case MRT_HS_SETVOLUME:
        server_setvolume(cl, hdr, rec, body_off, len);
        break;
    case MRT_HS_PING:
        (void)vrpc_send_reply(cl->conn, hdr->xid, VRPC_SUCCESS,
                              (xdrproc_t)xdr_mrt_ping_rsp, &ping, NULL, 0);
        break;
    default:
        (void)vrpc_send_reply(cl->conn, hdr->xid, VRPC_PROC_UNAVAIL, NULL,
                              NULL, NULL, 0);
    }
}


static void
server_on_record(vrpc_conn_t *c, vl_buf_t *rec, size_t len, void *arg)
{
    struct server_client *cl = arg;
    struct vrpc_call_hdr hdr;
    size_t off;
    bool xid_ok;

    if (vrpc_decode_call(rec->data, len, &hdr, &off, &xid_ok) != 0) {
        vl_log(cl->priv->xl, VL_LOG_WARNING,
               "%s: malformed rpc call, disconnecting", vrpc_conn_peer(c));
        vrpc_conn_close(c, -EPROTO);
        return;
    }
    if (hdr.prog != MRT_HANDSHAKE_PROG && hdr.prog != MRT_FOPS_PROG) {
        (void)vrpc_send_reply(c, hdr.xid, VRPC_PROG_UNAVAIL, NULL, NULL, NULL,
                              0);
        return;
    }
    if (hdr.vers != MRT_VERSION) {
        (void)vrpc_send_reply(c, hdr.xid, VRPC_PROG_MISMATCH, NULL, NULL,
                              NULL, 0);
        return;
    }
    if (hdr.prog == MRT_HANDSHAKE_PROG) {
        server_handshake(cl, &hdr, rec, off, len);
        return;
    }
    if (!server_client_is_bound(cl)) {
        /* Fops before a successful SETVOLUME are refused. */
        (void)vrpc_send_reply(c, hdr.xid, VRPC_SYSTEM_ERR, NULL, NULL, NULL,
                              0);
        return;
    }
    server_fop_call(cl, &hdr, rec, off, len);
}


static void
server_on_close(vrpc_conn_t *c, int reason, void *arg)
{
    struct server_client *cl = arg;
    struct server_priv *priv = cl->priv;
    vl_xlator_t *xl = priv->xl;
    vl_fd_t **fds;
    size_t n_fds;
    uint64_t id = cl->client_id;

    pthread_mutex_lock(&cl->lock);
    fds = cl->fds;
    n_fds = cl->n_fds;
    cl->fds = NULL;
    cl->n_fds = 0;
    cl->is_bound = false;
    cl->is_gone = true;
    pthread_mutex_unlock(&cl->lock);
    for (size_t i = 0; i < n_fds; i++)
        vl_fd_unref(fds[i]);
    vl_free(fds);

    vl_log(xl, VL_LOG_INFO, "client %s id %llu disconnected (%s)",
           vrpc_conn_peer(c), (unsigned long long)id, strerror(-reason));
    (void)vl_notify(VL_FIRST_CHILD(xl), VL_EV_CLIENT_DISCONNECT, &id);
    /* Unlinked last: server_stop returns (and the graph may be freed)
     * once the list is empty, so nothing above may run after that. Until
     * then server_stop's vrpc_conn_close of this connection waits for
     * this callback to end. */
    pthread_mutex_lock(&priv->lock);
    if (cl->prev != NULL)
        cl->prev->next = cl->next;
    else
        priv->clients = cl->next;
    if (cl->next != NULL)
        cl->next->prev = cl->prev;
    pthread_mutex_unlock(&priv->lock);
    server_client_unref(cl); /* the connection's ref */
}


static const struct vrpc_conn_ops server_conn_ops = {
    .on_record = server_on_record,
    .on_close = server_on_close,
};


static void
server_keepalive_of(const struct server_conf *conf,
                    struct vrpc_keepalive *ka /* OUT */)
{
    ka->idle_s = (unsigned)conf->keepalive_time;
    ka->intvl_s = (unsigned)conf->keepalive_intvl;
    ka->count = (unsigned)conf->keepalive_count;
    ka->user_timeout_s = (unsigned)conf->user_timeout;
}


/* Caller holds priv->lock. A failure costs only the early notice of a
 * dead client: logged, the connection kept. */
static void
server_client_keepalive(struct server_client *cl,
                        const struct vrpc_keepalive *ka)
{
    int rc = vrpc_conn_set_keepalive(cl->conn, ka);

    if (rc != 0)
        vl_log(cl->priv->xl, VL_LOG_WARNING, "%s: keepalive: %s",
               vrpc_conn_peer(cl->conn), strerror(-rc));
}


static void
server_on_accept(int fd, const struct sockaddr_storage *peer, void *arg)
{
    struct server_priv *priv = arg;
    struct server_client *cl;
    int rc;

    cl = vl_calloc(priv->xl, 1, sizeof(*cl), 1);
    if (cl == NULL) {
        close(fd);
        return;
    }
    if (pthread_mutex_init(&cl->lock, NULL) != 0) {
        vl_free(cl);
        close(fd);
        return;
    }
    cl->priv = priv;
    cl->peer_port = ntohs(peer->ss_family == AF_INET6
                              ? ((const struct sockaddr_in6 *)peer)->sin6_port
                              : ((const struct sockaddr_in *)peer)->sin_port);
    cl->is_trusted = server_port_is_privileged(cl->peer_port);
    /* One ref for the caller here, one for the connection. */
    atomic_init(&cl->refs, 2);
    rc = vrpc_conn_new(priv->xl->graph->loop, fd, false, &server_conn_ops,
                       cl, &cl->conn);
    if (rc != 0) {
        pthread_mutex_destroy(&cl->lock);
        vl_free(cl);
        return;
    }
    /* Until SETVOLUME: small records, 10 s idle (issue 23). */
    vrpc_listener_adopt(priv->listener, cl->conn);
    if (priv->tls != NULL) {
        vl_err_t err = {{0}};

        /* The certificates are checked (and reloaded if changed) per
         * connection; a failure here refuses only this client. */
        rc = vrpc_conn_set_tls(cl->conn, priv->tls, NULL, &err);
        if (rc != 0) {
            vl_log(priv->xl, VL_LOG_ERROR, "%s: %s",
                   vrpc_conn_peer(cl->conn), err.msg);
            vrpc_conn_unref(cl->conn); /* closes fd */
            pthread_mutex_destroy(&cl->lock);
            vl_free(cl);
            return;
        }
    }
    pthread_mutex_lock(&priv->lock);
    server_client_keepalive(cl, &priv->keepalive);
    cl->client_id = ++priv->next_client_id;
    cl->next = priv->clients;
    if (priv->clients != NULL)
        priv->clients->prev = cl;
    priv->clients = cl;
    pthread_mutex_unlock(&priv->lock);
    rc = vrpc_conn_start(cl->conn);
    if (rc != 0)
        vrpc_conn_close(cl->conn, rc);
    server_client_unref(cl);
}


static int
server_init(vl_xlator_t *xl, vl_err_t *err)
{
    const struct server_conf *conf = VL_CONF(xl, struct server_conf);
    struct server_priv *priv;
    int rc;

    priv = vl_calloc(xl, 1, sizeof(*priv), 0);
    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    vl_inode_table_set_lru_limit(xl->graph->itable, conf->inode_lru_limit);
    rc = pthread_mutex_init(&priv->lock, NULL);
    if (rc != 0) {
        vl_free(priv);
        vl_err_set(err, "mutex: %s", strerror(rc));
        return -rc;
    }
    priv->xl = xl;
    atomic_init(&priv->n_inflight, 0);
    server_keepalive_of(conf, &priv->keepalive);
    if (conf->is_ssl) {
        struct vrpc_tls_conf tc = {conf->ssl_own_cert, conf->ssl_private_key,
                                   conf->ssl_ca_list, conf->ssl_cipher_list};

        rc = vrpc_tls_new(&tc, true, &priv->tls, err);
        if (rc != 0) {
            vl_log(xl, VL_LOG_ERROR, "server.ssl: %s", err->msg);
            pthread_mutex_destroy(&priv->lock);
            vl_free(priv);
            return rc;
        }
    }
    xl->priv = priv;
    rc = vrpc_listen_limits(xl->graph->loop, conf->bind_address,
                            (uint16_t)conf->listen_port,
                            &vrpc_limits_brick_hs, server_on_accept, priv,
                            &priv->listener, err);
    if (rc != 0) {
        vl_log(xl, VL_LOG_ERROR, "%s", err->msg);
        vrpc_tls_free(priv->tls);
        pthread_mutex_destroy(&priv->lock);
        vl_free(priv);
        xl->priv = NULL;
        return rc;
    }
    vl_log(xl, VL_LOG_INFO, "listening on %s:%u%s", conf->bind_address,
           vrpc_listener_port(priv->listener),
           priv->tls != NULL ? " (TLS)" : "");
    vl_graph_set_ready(xl->graph, 0, NULL);
    return 0;
}


/* Stops serving: no new connections, every client disconnected (its fds
 * dropped), every request in flight answered. Runs at PARENT_DOWN, before
 * the graph frees its inode table, and again (doing nothing) at fini.
 * Returns false if requests are still in flight after the wait. */
static bool
server_stop(vl_xlator_t *xl, struct server_priv *priv)
{
    uint64_t deadline;

    if (priv->listener != NULL) {
        vrpc_listener_free(priv->listener);
        priv->listener = NULL;
    }
    /* Close connections one by one; on_close unlinks each. */
    for (;;) {
        vrpc_conn_t *c = NULL;

        pthread_mutex_lock(&priv->lock);
        if (priv->clients != NULL)
            c = vrpc_conn_ref(priv->clients->conn);
        pthread_mutex_unlock(&priv->lock);
        if (c == NULL)
            break;
        vrpc_conn_close(c, -ESHUTDOWN);
        vrpc_conn_unref(c);
    }
    /* Requests in flight hold inodes and reference priv through their
     * client; the child answers them (their replies are dropped). */
    deadline = vrpc_now_ms() + SERVER_FINI_WAIT_MS;
    while (atomic_load(&priv->n_inflight) > 0 && vrpc_now_ms() < deadline)
        usleep(1000);
    /* Our done callback has returned, but the core may still be freeing
     * those requests; the graph must outlive that. */
    while (vl_graph_pending(xl->graph) > 0 && vrpc_now_ms() < deadline)
        usleep(1000);
    if (atomic_load(&priv->n_inflight) > 0) {
        vl_log(xl, VL_LOG_ERROR, "%ld requests still in flight at shutdown",
               atomic_load(&priv->n_inflight));
        return false;
    }
    return true;
}


/* Tells the client up->client_id what up says (its lease on up->gfid is
 * broken, or something it looked at changed): a one-way
 * MRT_CALLBACK_PROG call on its connection (no reply comes). A client
 * gone meanwhile has lost its leases and caches anyway. */
static void
server_send_upcall(struct server_priv *priv, const struct vl_upcall *up)
{
    mrt_break_lease_args lease;
    mrt_cache_invalidate_args inval;
    struct server_client *cl;
    vrpc_conn_t *conn = NULL;
    struct iovec iov;
    char *buf = NULL;
    size_t len;
    uint32_t xid;
    int rc;

    pthread_mutex_lock(&priv->lock);
    for (cl = priv->clients; cl != NULL; cl = cl->next)
        if (cl->client_id == up->client_id)
            break;
    if (cl != NULL && server_client_is_bound(cl))
        conn = vrpc_conn_ref(cl->conn);
    xid = ++priv->next_cbk_xid;
    pthread_mutex_unlock(&priv->lock);
    if (conn == NULL)
        return;
    if (up->kind == VL_UPCALL_INVALIDATE) {
        memset(&inval, 0, sizeof(inval));
        vrpc_gfid_to_xdr(&up->gfid, inval.gfid);
        inval.flags = up->flags & VL_INVAL_MASK; /* same bits on the wire */
        vrpc_gfid_to_xdr(&up->parent, inval.parent);
        inval.name = (char *)(up->name != NULL ? up->name : "");
        rc = vrpc_encode_call(xid, MRT_CALLBACK_PROG, MRT_VERSION,
                              MRT_CBK_CACHE_INVALIDATE, NULL,
                              (xdrproc_t)xdr_mrt_cache_invalidate_args,
                              &inval, &buf, &len);
    } else {
        vrpc_gfid_to_xdr(&up->gfid, lease.gfid);
        rc = vrpc_encode_call(xid, MRT_CALLBACK_PROG, MRT_VERSION,
                              MRT_CBK_BREAK_LEASE, NULL,
                              (xdrproc_t)xdr_mrt_break_lease_args, &lease,
                              &buf, &len);
    }
    if (rc == 0) {
        iov.iov_base = buf;
        iov.iov_len = len;
        /* On failure the connection is closing: its leases and caches
         * go with it. */
        (void)vrpc_conn_send(conn, &iov, 1);
        vl_free(buf);
    }
    vrpc_conn_unref(conn);
}


static int
server_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    if (ev == VL_EV_PARENT_DOWN && xl->priv != NULL)
        (void)server_stop(xl, xl->priv);
    if (ev == VL_EV_UPCALL) {
        if (xl->priv != NULL && data != NULL)
            server_send_upcall(xl->priv, data);
        return 0; /* the top: nobody above to tell */
    }
    return vl_notify_default(xl, ev, data);
}


static void
server_fini(vl_xlator_t *xl)
{
    struct server_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    xl->priv = NULL;
    if (!server_stop(xl, priv))
        return; /* leak priv rather than free it under live requests */
    vrpc_tls_free(priv->tls);
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
}


/* The live options (the brick's SIGHUP after volume set): the inode
 * table's limit, and the keepalive of every client socket, connected
 * or to come. The core refuses a change of any other option. */
static int
server_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    const struct server_conf *nc = new_conf;
    struct server_priv *priv = xl->priv;

    (void)err;
    vl_inode_table_set_lru_limit(xl->graph->itable, nc->inode_lru_limit);
    if (priv == NULL)
        return 0;
    pthread_mutex_lock(&priv->lock);
    server_keepalive_of(nc, &priv->keepalive);
    for (struct server_client *cl = priv->clients; cl != NULL; cl = cl->next)
        server_client_keepalive(cl, &priv->keepalive);
    pthread_mutex_unlock(&priv->lock);
    return 0;
}


static void
server_dump(vl_xlator_t *xl, FILE *out)
{
    struct server_priv *priv = xl->priv;
    size_t n = 0;

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    for (struct server_client *cl = priv->clients; cl != NULL; cl = cl->next)
        n++;
    pthread_mutex_unlock(&priv->lock);
    fprintf(out, "port=%u\nclients=%zu\ninflight=%ld\n",
            priv->listener != NULL ? vrpc_listener_port(priv->listener) : 0,
            n,
            atomic_load(&priv->n_inflight));
}


/* /metrics (doc/metrics.md): the clients connected now, the connections
 * accepted since the brick started (each gets the next client id), and
 * the requests wound and not answered yet. */
static void
server_metrics(vl_xlator_t *xl, vl_metrics_sink_t *sink)
{
    struct server_priv *priv = xl->priv;
    uint64_t n = 0, accepted;

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    for (struct server_client *cl = priv->clients; cl != NULL; cl = cl->next)
        n++;
    accepted = priv->next_client_id;
    pthread_mutex_unlock(&priv->lock);
    vl_metrics_emit(sink, "mortar_server_clients", "gauge",
                    "Client connections to the brick now.", n);
    vl_metrics_emit(sink, "mortar_server_connections_total", "counter",
                    "Client connections the brick accepted since it "
                    "started.", accepted);
    vl_metrics_emit(sink, "mortar_server_requests_inflight", "gauge",
                    "Requests received and not answered yet.",
                    (uint64_t)atomic_load(&priv->n_inflight));
}


static const vl_option_t server_options[] = {
    VL_OPT_UINT("transport.socket.listen-port", struct server_conf,
                listen_port, .min = 1, .max = 65535, .def = "24010",
                .aliases = {"listen-port"},
                .doc = "TCP port the brick listens on for clients."),
    VL_OPT_ADDR("transport.socket.bind-address", struct server_conf,
                bind_address, .def = "0.0.0.0",
                .aliases = {"bind-address"},
                .doc = "Local address the brick listens on."),
    VL_OPT_ADDR_LIST("auth.addr.*.allow", struct server_conf, auth_allow,
                     .def = "*", .flags = VL_OPT_SETTABLE,
                     .aliases = {"auth.allow"},
                     .doc = "Client addresses (patterns with '*') allowed "
                            "to use the subvolume."),
    VL_OPT_ADDR_LIST("auth.addr.*.reject", struct server_conf, auth_reject,
                     .flags = VL_OPT_SETTABLE, .aliases = {"auth.reject"},
                     .doc = "Client addresses (patterns with '*') refused "
                            "even if allowed."),
    VL_OPT_BOOL("allow-insecure", struct server_conf, is_insecure_ok,
                .def = "off", .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"rpc-auth-allow-insecure"},
                .doc = "Accept clients connecting from unprivileged source "
                       "ports (>= 1024), and believe the uids and gids they "
                       "claim. Off: only root on an allowed host can "
                       "connect (doc/security.md)."),
    VL_OPT_BOOL("root-squash", struct server_conf, is_root_squash,
                .def = "off", .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .doc = "Treat uid 0 and gid 0 of every client as anonuid "
                       "and anongid (Mortar's heal and rebalance are "
                       "exempt)."),
    VL_OPT_BOOL("all-squash", struct server_conf, is_all_squash,
                .def = "off", .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .doc = "Treat every uid and gid of every client as anonuid "
                       "and anongid, with no supplementary groups "
                       "(Mortar's heal and rebalance are exempt)."),
    VL_OPT_UINT("anonuid", struct server_conf, anonuid, .min = 0,
                .max = 4294967294LL, .def = "65534",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .doc = "The uid squashed callers get."),
    VL_OPT_UINT("anongid", struct server_conf, anongid, .min = 0,
                .max = 4294967294LL, .def = "65534",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .doc = "The gid squashed callers get."),
    VL_OPT_BOOL("ssl", struct server_conf, is_ssl, .def = "off",
                .flags = VL_OPT_SETTABLE,
                .aliases = {"transport.socket.ssl-enabled"},
                .doc = "Clients must speak TLS 1.3 and present a "
                       "certificate signed by ssl.ca-list whose common "
                       "name auth.ssl-allow lists."),
    VL_OPT_PATH("ssl.own-cert", struct server_conf, ssl_own_cert,
                .def = VRPC_TLS_DEF_CERT, .flags = VL_OPT_SETTABLE,
                .aliases = {"ssl.own-cert"},
                .doc = "PEM certificate of this host, for bricks and "
                       "clients alike (volume set puts it in both); "
                       "reloaded when the file changes."),
    VL_OPT_PATH("ssl.private-key", struct server_conf, ssl_private_key,
                .def = VRPC_TLS_DEF_KEY, .flags = VL_OPT_SETTABLE,
                .aliases = {"ssl.private-key"},
                .doc = "PEM private key of ssl.own-cert."),
    VL_OPT_PATH("ssl.ca-list", struct server_conf, ssl_ca_list,
                .def = VRPC_TLS_DEF_CA, .flags = VL_OPT_SETTABLE,
                .aliases = {"ssl.ca-list"},
                .doc = "PEM certificates of the CAs a peer's certificate "
                       "must be signed by."),
    VL_OPT_STR("ssl.cipher-list", struct server_conf, ssl_cipher_list,
               .flags = VL_OPT_SETTABLE, .aliases = {"ssl.cipher-list"},
               .doc = "TLS 1.3 cipher suites, colon-separated (OpenSSL's "
                      "names; default: OpenSSL's)."),
    VL_OPT_STR("auth.ssl-allow", struct server_conf, ssl_allow, .def = "*",
               .flags = VL_OPT_SETTABLE, .aliases = {"auth.ssl-allow"},
               .doc = "With server.ssl: common names (patterns with '*', "
                      "comma-separated) of the client certificates allowed "
                      "to use the brick; '*' is any certificate the CA "
                      "signed."),
    VL_OPT_UINT("inode-lru-limit", struct server_conf, inode_lru_limit,
                .min = 0, .max = 1048576, .def = "16384",
                .flags = VL_OPT_LIVE,
                .doc = "Inodes that nothing references kept cached in "
                       "this process's inode table (the graph's, shared "
                       "by every translator), least recently used "
                       "forgotten first; mortard writes "
                       "network.inode-lru-limit here. Live."),
    /* GlusterFS's keys, defaults and bounds (the kernel takes at most
     * 32767 s and 127 probes). */
    VL_OPT_UINT("keepalive-time", struct server_conf, keepalive_time,
                .min = 0, .max = 32767, .def = "20",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"transport.socket.keepalive-time"},
                .doc = "Seconds a client connection may stay silent before "
                       "the brick probes it (TCP keepalive); 0 turns the "
                       "probes off. With keepalive-interval, "
                       "keepalive-count and tcp-user-timeout it bounds how "
                       "long a client cut off by the network keeps its "
                       "locks on the brick. Live."),
    VL_OPT_UINT("keepalive-interval", struct server_conf, keepalive_intvl,
                .min = 1, .max = 32767, .def = "2",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"transport.socket.keepalive-interval"},
                .doc = "Seconds between two keepalive probes of a silent "
                       "client connection. Live."),
    VL_OPT_UINT("keepalive-count", struct server_conf, keepalive_count,
                .min = 1, .max = 127, .def = "9",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"transport.socket.keepalive-count"},
                .doc = "Keepalive probes left unanswered before the brick "
                       "drops the connection and frees its locks and open "
                       "files. Live."),
    VL_OPT_UINT("tcp-user-timeout", struct server_conf, user_timeout,
                .min = 0, .max = 1013, .def = "42",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"transport.tcp-user-timeout"},
                .doc = "Seconds a client connection may leave sent data "
                       "or probes unacknowledged before the brick drops "
                       "it (TCP_USER_TIMEOUT); 0: the kernel's "
                       "retransmission limit (about 15 minutes). Live."),
    VL_OPT_END};


const vl_xlator_class_t xl_protocol_server = {
    .abi = VL_XLATOR_ABI,
    .type = "protocol/server",
    .prefix = "server",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD | VL_XL_TOP_ONLY,
    .conf_size = sizeof(struct server_conf),
    .options = server_options,
    .mem_types = server_mem_types,
    .doc = "Serves the brick graph below it to remote protocol/client "
           "translators over TCP (ONC-RPC, doc/wire-protocol.md).",
    .init = server_init,
    .fini = server_fini,
    .notify = server_notify,
    .reconfigure = server_reconfigure,
    .dump = server_dump,
    .metrics = server_metrics,
};
