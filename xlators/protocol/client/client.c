/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * protocol/client: a leaf that sends every fop to one brick over TCP.
 *
 * Connection life: PARENT_UP starts a non-blocking connect to
 * remote-host:remote-port; once connected, SETVOLUME names
 * remote-subvolume. When the brick accepts, CHILD_UP goes to the parents;
 * when the connection is lost, calls in flight fail -ENOTCONN, CHILD_DOWN
 * goes up, and a reconnect follows with backoff (100 ms doubling to 5 s).
 * VL_EV_RECONNECT (a brick may be back: the heal daemon's kick when
 * mortard starts one) cuts the wait to the next tick and resets the
 * backoff, so a heal does not sit out up to 5 s of a backoff grown while
 * the brick was down.
 * Failures are recorded with vl_graph_set_last_error so that a mount can
 * say why it failed. One periodic tick timer drives reconnects, the
 * connect timeout and the ping timeout (no reply for ping-timeout while
 * calls are pending: the brick is declared dead and the socket closed).
 *
 * Intercepts: every fop (client-fops.c), release.
 * Per fd:     struct client_fd (remote fd number, connection generation).
 * Per req:    struct client_local.
 * Threads:    priv->lock guards the connection state and priv->conf's
 *             ping-timeout (live: reconfigure); callbacks run on loop
 *             threads and read priv->conf, a copy of the options made at
 *             init; fops may come from any thread.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "client.h"
#include "tls.h"

static const char *const client_mem_types[] = {"misc", NULL};

static void client_tick(void *arg);


static struct client_priv *
client_priv_ref(struct client_priv *priv)
{
    atomic_fetch_add(&priv->refs, 1);
    return priv;
}


void
client_priv_unref(struct client_priv *priv)
{
    if (atomic_fetch_sub(&priv->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&priv->lock);
    pthread_cond_destroy(&priv->tick_cond);
    vrpc_tls_free(priv->tls);
    free(priv->conf.remote_host);
    free(priv->conf.remote_subvolume);
    vl_free(priv);
}


vrpc_clnt_t *
client_get_conn_proto(struct client_priv *priv, uint64_t *gen,
                      uint32_t *proto)
{
    vrpc_clnt_t *clnt = NULL;

    pthread_mutex_lock(&priv->lock);
    if (priv->is_connected && priv->clnt != NULL) {
        clnt = vrpc_clnt_ref(priv->clnt);
        *gen = priv->generation;
        *proto = priv->proto_version;
    }
    pthread_mutex_unlock(&priv->lock);
    return clnt;
}


vrpc_clnt_t *
client_get_conn(struct client_priv *priv, uint64_t *gen)
{
    uint32_t proto;

    return client_get_conn_proto(priv, gen, &proto);
}


uint32_t
client_proto_fallback(uint32_t sent, const char *err)
{
    const char *p = err != NULL ? strstr(err, "(brick speaks ") : NULL;
    char *end = NULL;
    unsigned long n;

    if (p == NULL)
        return 0;
    p += strlen("(brick speaks ");
    if (*p < '0' || *p > '9')
        return 0;
    n = strtoul(p, &end, 10);
    if (end == NULL || *end != ')' || n < MRT_PROTO_MIN || n >= sent)
        return 0;
    return (uint32_t)n;
}


static void client_setvolume_done(void *cookie, int status, vl_buf_t *rec,
                                  size_t body_off, size_t len);


/* Sends SETVOLUME offering version proto on clnt (priv->proto_sent). */
static int
client_send_setvolume(struct client_priv *priv, vrpc_clnt_t *clnt,
                      uint32_t proto)
{
    vl_xlator_t *xl = priv->xl;
    mrt_setvolume_args a;
    char ident[MRT_IDENT_MAX];

    pthread_mutex_lock(&priv->lock);
    priv->proto_sent = proto;
    pthread_mutex_unlock(&priv->lock);
    snprintf(ident, sizeof(ident), "mortar-client %s pid %d", xl->name,
             (int)getpid());
    a.subvolume = priv->conf.remote_subvolume;
    a.identity = ident;
    a.proto_version = proto;
    return vrpc_clnt_call(clnt, MRT_HANDSHAKE_PROG, MRT_VERSION,
                          MRT_HS_SETVOLUME, NULL,
                          (xdrproc_t)xdr_mrt_setvolume_args, &a, NULL, 0,
                          client_setvolume_done, priv);
}


/* A connection callback counted in n_notifying is done with xl. */
static void
client_notify_end(struct client_priv *priv)
{
    pthread_mutex_lock(&priv->lock);
    priv->n_notifying--;
    pthread_cond_broadcast(&priv->tick_cond);
    pthread_mutex_unlock(&priv->lock);
}


/* Records why the brick is not usable, for logs and for mortarfsd. */
static void
client_fail_reason(struct client_priv *priv, const char *msg)
{
    vl_graph_set_last_error(priv->xl->graph, msg);
}


static uint64_t
client_tick_ms(const struct client_conf *conf, bool connected)
{
    uint64_t t = conf->ping_timeout_ms / 4;

    if (!connected)
        return CLIENT_BACKOFF_START_MS;
    if (t < 100)
        t = 100;
    return t > 1000 ? 1000 : t;
}


static void
client_setvolume_done(void *cookie, int status, vl_buf_t *rec,
                      size_t body_off, size_t len)
{
    struct client_priv *priv = cookie;
    vl_xlator_t *xl = priv->xl;
    const struct client_conf *conf = &priv->conf;
    mrt_setvolume_rsp r;
    vrpc_clnt_t *clnt = NULL;
    char msg[700];
    bool up = false;
    bool is_counted = false;
    uint32_t sent, fallback = 0;

    if (status != 0)
        return; /* the connection is gone; on_close follows */
    pthread_mutex_lock(&priv->lock);
    sent = priv->proto_sent;
    pthread_mutex_unlock(&priv->lock);
    memset(&r, 0, sizeof(r));
    if (vrpc_decode_body(rec->data + body_off, len - body_off,
                         (xdrproc_t)xdr_mrt_setvolume_rsp, &r, NULL) != 0) {
        snprintf(msg, sizeof(msg), "subvolume '%s' refused: bad reply",
                 conf->remote_subvolume);
        r.status = -EPROTO;
    } else if (r.status == -EPROTONOSUPPORT
               && (fallback = client_proto_fallback(sent, r.error)) != 0) {
        /* An older brick we still speak to: offered again in its
         * version on the same connection (and no compound on it). */
        snprintf(msg, sizeof(msg), "subvolume '%s' speaks protocol %u: "
                 "offering %u", conf->remote_subvolume, fallback, fallback);
    } else if (r.status == -EPROTONOSUPPORT) {
        /* Another Mortar version on the brick: it keeps being refused
         * until one side is upgraded (retried with the usual backoff). */
        snprintf(msg, sizeof(msg), "subvolume '%s' refused: %s; this client "
                 "speaks protocol version %u", conf->remote_subvolume,
                 r.error != NULL && r.error[0] != '\0' ? r.error
                                                       : strerror(-r.status),
                 MRT_PROTO_VERSION);
    } else if (r.status != 0) {
        snprintf(msg, sizeof(msg), "subvolume '%s' refused: %s",
                 conf->remote_subvolume,
                 r.error != NULL && r.error[0] != '\0' ? r.error
                                                       : strerror(-r.status));
    }
    pthread_mutex_lock(&priv->lock);
    if (r.status == 0 && !priv->is_stopping && priv->clnt != NULL) {
        priv->is_connected = true;
        priv->proto_version = sent;
        priv->generation++;
        priv->backoff_ms = CLIENT_BACKOFF_START_MS;
        up = !priv->is_up;
        priv->is_up = true;
        priv->n_notifying++; /* client_stop waits: we use xl below */
        is_counted = true;
    } else if (priv->clnt != NULL) {
        clnt = vrpc_clnt_ref(priv->clnt);
    }
    pthread_mutex_unlock(&priv->lock);
    xdr_free((xdrproc_t)xdr_mrt_setvolume_rsp, (char *)&r);

    if (clnt != NULL && fallback != 0) {
        vl_log(xl, VL_LOG_INFO, "%s", msg);
        if (client_send_setvolume(priv, clnt, fallback) != 0)
            vrpc_clnt_close(clnt);
        vrpc_clnt_unref(clnt);
        return;
    }
    if (clnt != NULL) {
        if (r.status != 0) { /* else stopping: msg was not written */
            vl_log(xl, VL_LOG_ERROR, "%s", msg);
            client_fail_reason(priv, msg);
        }
        vrpc_clnt_close(clnt);
        vrpc_clnt_unref(clnt);
        return;
    }
    if (!is_counted)
        return; /* closed meanwhile (or stopping): on_close said it */
    vl_log(xl, VL_LOG_INFO, "connected to %s:%llu, subvolume '%s', "
           "protocol %u", conf->remote_host,
           (unsigned long long)conf->remote_port, conf->remote_subvolume,
           sent);
    if (up)
        vl_notify_parents(xl, VL_EV_CHILD_UP);
    client_notify_end(priv);
}


static void
client_on_connect(vrpc_clnt_t *clnt, int status, void *arg)
{
    struct client_priv *priv = arg;
    vl_xlator_t *xl = priv->xl;
    const struct client_conf *conf = &priv->conf;
    int rc;

    if (status != 0) {
        char msg[600];

        /* A refused TLS handshake has a better reason than errno's; the
         * rpc layer logged it already. */
        vrpc_conn_tls_error(vrpc_clnt_conn(clnt), msg, sizeof(msg));
        if (msg[0] == '\0')
            snprintf(msg, sizeof(msg), "%s:%llu: %s", conf->remote_host,
                     (unsigned long long)conf->remote_port,
                     strerror(-status));
        vl_log(xl, VL_LOG_DEBUG, "%s", msg);
        client_fail_reason(priv, msg);
        return; /* on_close follows */
    }
    pthread_mutex_lock(&priv->lock);
    if (priv->clnt == clnt)
        priv->is_link_up = true;
    pthread_mutex_unlock(&priv->lock);
    /* Each connection starts from our newest version: the brick may
     * have been upgraded meanwhile. */
    rc = client_send_setvolume(priv, clnt, MRT_PROTO_VERSION);
    if (rc != 0)
        vrpc_clnt_close(clnt);
}


static void
client_on_close(vrpc_clnt_t *clnt, int reason, void *arg)
{
    struct client_priv *priv = arg;
    vl_xlator_t *xl = priv->xl;
    const struct client_conf *conf = &priv->conf;
    bool down = false, mine = false, was_linked = false;

    pthread_mutex_lock(&priv->lock);
    if (priv->clnt == clnt) {
        mine = true;
        was_linked = priv->is_link_up;
        priv->is_link_up = false;
        priv->clnt = NULL;
        priv->is_connected = false;
        priv->next_connect_ms = vrpc_now_ms() + priv->backoff_ms;
        priv->backoff_ms *= 2;
        if (priv->backoff_ms > CLIENT_BACKOFF_MAX_MS)
            priv->backoff_ms = CLIENT_BACKOFF_MAX_MS;
        /* During teardown the parents may already be gone. */
        if (priv->is_up && !priv->is_stopping) {
            priv->is_up = false;
            down = true;
            priv->n_notifying++; /* client_stop waits for the notify */
        }
    }
    pthread_mutex_unlock(&priv->lock);
    if (down) {
        char msg[600];

        snprintf(msg, sizeof(msg), "%s:%llu: disconnected (%s)",
                 conf->remote_host, (unsigned long long)conf->remote_port,
                 strerror(-reason));
        vl_log(xl, VL_LOG_WARNING, "%s", msg);
        /* -ENOTCONN: we closed it ourselves and recorded why already. */
        if (reason != -ENOTCONN)
            client_fail_reason(priv, msg);
        /* The brick forgets the leases and watches of a closed
         * connection: nothing it vouched for holds any more. */
        vl_notify_parents_data(xl, VL_EV_UPCALL,
                               &(struct vl_upcall){.is_all = true});
        vl_notify_parents(xl, VL_EV_CHILD_DOWN);
        client_notify_end(priv);
    }
    /* (A refused connect or TLS handshake said why in on_connect.) */
    if (mine && !down && was_linked && reason != -ENOTCONN) {
        char msg[600];

        /* Closed before SETVOLUME was answered. With TLS: the brick
         * refused the certificate after our side of the handshake had
         * finished (TLS 1.3 verifies the client last), and its alert is
         * the reason. Without: a brick speaking TLS drops a clear client
         * without a word (no TLS alert is sent before a version is
         * agreed), so say what the likely cause is. */
        if (priv->tls != NULL)
            vrpc_conn_tls_error(vrpc_clnt_conn(clnt), msg, sizeof(msg));
        else
            snprintf(msg, sizeof(msg), "%s:%llu: closed by the brick "
                     "before the handshake (%s); does it have server.ssl "
                     "on while this client has client.ssl off?",
                     conf->remote_host,
                     (unsigned long long)conf->remote_port,
                     strerror(-reason));
        if (msg[0] != '\0')
            client_fail_reason(priv, msg);
    }
    if (mine)
        vrpc_clnt_unref(clnt); /* priv's ref */
    client_priv_unref(priv);   /* the connection's ref on priv */
}


/* Decodes a call from the brick into up; 0, or -EINVAL when malformed.
 * up->name points into *inval, which the caller frees. */
static int
client_decode_upcall(const struct vrpc_call_hdr *hdr, vl_buf_t *rec,
                     size_t body_off, size_t len, struct vl_upcall *up,
                     mrt_cache_invalidate_args *inval /* OUT */)
{
    mrt_break_lease_args lease;

    if (hdr->proc == MRT_CBK_BREAK_LEASE) {
        memset(&lease, 0, sizeof(lease));
        if (vrpc_decode_body(rec->data + body_off, len - body_off,
                             (xdrproc_t)xdr_mrt_break_lease_args, &lease,
                             NULL)
            != 0)
            return -EINVAL;
        vrpc_gfid_from_xdr(lease.gfid, &up->gfid);
        up->kind = VL_UPCALL_BREAK_LEASE;
        xdr_free((xdrproc_t)xdr_mrt_break_lease_args, (char *)&lease);
        return 0;
    }
    if (vrpc_decode_body(rec->data + body_off, len - body_off,
                         (xdrproc_t)xdr_mrt_cache_invalidate_args, inval,
                         NULL)
        != 0)
        return -EINVAL;
    up->kind = VL_UPCALL_INVALIDATE;
    up->flags = inval->flags & VL_INVAL_MASK;
    vrpc_gfid_from_xdr(inval->gfid, &up->gfid);
    if (up->flags & VL_INVAL_ENTRY) {
        vrpc_gfid_from_xdr(inval->parent, &up->parent);
        up->name = inval->name;
        if (vl_gfid_is_null(&up->parent) || inval->name == NULL
            || !vrpc_name_ok(inval->name))
            return -EINVAL;
    }
    return 0;
}


/* A call from the brick: BREAK_LEASE and CACHE_INVALIDATE go up as
 * VL_EV_UPCALL. The connection holds a ref on priv, so priv outlives
 * this callback. */
static void
client_on_server_call(vrpc_clnt_t *clnt, const struct vrpc_call_hdr *hdr,
                      vl_buf_t *rec, size_t body_off, size_t len, void *arg)
{
    struct client_priv *priv = arg;
    mrt_cache_invalidate_args inval;
    struct vl_upcall up = {0};
    bool is_current;
    int rc;

    if (hdr->prog != MRT_CALLBACK_PROG || hdr->vers != MRT_VERSION
        || (hdr->proc != MRT_CBK_BREAK_LEASE
            && hdr->proc != MRT_CBK_CACHE_INVALIDATE)) {
        vl_log(priv->xl, VL_LOG_WARNING,
               "ignoring unknown call %#x/%u/%u from the brick", hdr->prog,
               hdr->vers, hdr->proc);
        return;
    }
    memset(&inval, 0, sizeof(inval));
    rc = client_decode_upcall(hdr, rec, body_off, len, &up, &inval);
    if (rc != 0) {
        xdr_free((xdrproc_t)xdr_mrt_cache_invalidate_args, (char *)&inval);
        vl_log(priv->xl, VL_LOG_WARNING,
               "malformed upcall %u from the brick, disconnecting",
               hdr->proc);
        vrpc_clnt_close(clnt);
        return;
    }
    /* An upcall on a connection already replaced is moot: its close said
     * every lease and cache of it is gone. */
    pthread_mutex_lock(&priv->lock);
    is_current = priv->clnt == clnt && priv->is_up && !priv->is_stopping;
    if (is_current)
        priv->n_notifying++;
    pthread_mutex_unlock(&priv->lock);
    if (is_current) {
        vl_notify_parents_data(priv->xl, VL_EV_UPCALL, &up);
        client_notify_end(priv);
    }
    xdr_free((xdrproc_t)xdr_mrt_cache_invalidate_args, (char *)&inval);
}


/* The connection's TCP keepalive from the live options (priv->lock
 * held). A failure costs only the early notice of a silent brick, which
 * ping-timeout gives anyway: logged. */
static void
client_keepalive_locked(struct client_priv *priv)
{
    struct vrpc_keepalive ka = {
        .idle_s = (unsigned)priv->conf.keepalive_time,
        .intvl_s = (unsigned)priv->conf.keepalive_intvl,
        .count = (unsigned)priv->conf.keepalive_count,
        .user_timeout_s = (unsigned)priv->conf.user_timeout,
    };
    int rc;

    if (priv->clnt == NULL)
        return;
    rc = vrpc_conn_set_keepalive(vrpc_clnt_conn(priv->clnt), &ka);
    if (rc != 0)
        vl_log(priv->xl, VL_LOG_WARNING, "keepalive: %s", strerror(-rc));
}


/* Starts a connection attempt; called from the tick or PARENT_UP. */
static void
client_connect(struct client_priv *priv)
{
    vl_xlator_t *xl = priv->xl;
    const struct client_conf *conf = &priv->conf;
    vrpc_clnt_t *clnt = NULL;
    vl_err_t err = {{0}};
    int fd = -1, rc;

    rc = client_connect_start(priv, &fd, &err);
    if (rc == 0)
        rc = vrpc_clnt_new(xl->graph->loop, fd, true, client_on_connect,
                           client_on_close, client_priv_ref(priv), &clnt);
    if (rc != 0) {
        if (err.msg[0] == '\0')
            vl_err_set(&err, "%s:%llu: %s", conf->remote_host,
                       (unsigned long long)conf->remote_port, strerror(-rc));
        if (fd >= 0) /* vrpc_clnt_new failed: its priv ref is ours */
            client_priv_unref(priv);
        client_fail_reason(priv, err.msg);
        pthread_mutex_lock(&priv->lock);
        priv->next_connect_ms = vrpc_now_ms() + priv->backoff_ms;
        priv->backoff_ms = priv->backoff_ms * 2 > CLIENT_BACKOFF_MAX_MS
                               ? CLIENT_BACKOFF_MAX_MS
                               : priv->backoff_ms * 2;
        pthread_mutex_unlock(&priv->lock);
        return;
    }
    pthread_mutex_lock(&priv->lock);
    if (priv->is_stopping || priv->clnt != NULL) {
        pthread_mutex_unlock(&priv->lock);
        vrpc_clnt_close(clnt); /* on_close drops the priv ref */
        vrpc_clnt_unref(clnt);
        return;
    }
    priv->clnt = clnt; /* our ref moves to priv */
    priv->connect_start_ms = vrpc_now_ms();
    priv->is_link_up = false;
    client_keepalive_locked(priv);
    pthread_mutex_unlock(&priv->lock);
    vrpc_clnt_set_call_handler(clnt, client_on_server_call, priv);
    if (priv->tls != NULL
        && vrpc_conn_set_tls(vrpc_clnt_conn(clnt), priv->tls,
                             priv->conf.remote_host, &err) != 0) {
        vl_log(xl, VL_LOG_ERROR, "client.ssl: %s", err.msg);
        client_fail_reason(priv, err.msg);
        vrpc_clnt_close(clnt); /* on_close drops the refs */
        return;
    }
    if (vrpc_clnt_start(clnt) != 0)
        vrpc_clnt_close(clnt);
}


static void
client_ping_done(void *cookie, int status, vl_buf_t *rec, size_t body_off,
                 size_t len)
{
    /* Any reply refreshed the connection's last-received time. */
}


static void
client_tick(void *arg)
{
    struct client_priv *priv = arg;
    vl_xlator_t *xl = priv->xl; /* not touched before is_stopping is seen */
    const struct client_conf *conf;
    vrpc_clnt_t *to_close = NULL, *to_ping = NULL;
    bool do_connect = false, is_armed;
    uint64_t now = vrpc_now_ms(), interval;
    char msg[600] = "";

    /* The timer's ref may move to the re-armed timer, which can run
     * before this one returns: hold our own for the rest of the tick. */
    client_priv_ref(priv);
    pthread_mutex_lock(&priv->lock);
    if (priv->is_stopping) {
        priv->tick = NULL;
        pthread_mutex_unlock(&priv->lock);
        client_priv_unref(priv); /* the timer's ref */
        client_priv_unref(priv); /* ours */
        return;
    }
    priv->n_ticking++;
    conf = &priv->conf;
    interval = client_tick_ms(conf, priv->is_connected);
    if (priv->clnt == NULL) {
        do_connect = now >= priv->next_connect_ms;
    } else if (!priv->is_connected) {
        if (conf->connect_timeout_ms > 0
            && now - priv->connect_start_ms > conf->connect_timeout_ms) {
            to_close = vrpc_clnt_ref(priv->clnt);
            snprintf(msg, sizeof(msg), "%s:%llu: connection timed out",
                     conf->remote_host,
                     (unsigned long long)conf->remote_port);
        }
    } else if (vrpc_clnt_pending(priv->clnt) > 0) {
        uint64_t idle = now - vrpc_clnt_last_rx_ms(priv->clnt);

        if (conf->ping_timeout_ms > 0 && idle > conf->ping_timeout_ms) {
            to_close = vrpc_clnt_ref(priv->clnt);
            snprintf(msg, sizeof(msg),
                     "%s:%llu: no reply for %llu ms (ping-timeout), "
                     "disconnecting",
                     conf->remote_host, (unsigned long long)conf->remote_port,
                     (unsigned long long)idle);
        } else if (idle >= interval) {
            to_ping = vrpc_clnt_ref(priv->clnt);
        }
    }
    priv->tick = vl_timer_add(xl->graph->loop, interval, client_tick, priv);
    is_armed = priv->tick != NULL;
    pthread_mutex_unlock(&priv->lock);
    if (!is_armed)
        vl_log(xl, VL_LOG_ERROR, "cannot re-arm timer: reconnects stop");

    if (to_close != NULL) {
        vl_log(xl, VL_LOG_WARNING, "%s", msg);
        client_fail_reason(priv, msg);
        vrpc_clnt_close(to_close);
        vrpc_clnt_unref(to_close);
    }
    if (to_ping != NULL) {
        (void)vrpc_clnt_call(to_ping, MRT_HANDSHAKE_PROG, MRT_VERSION,
                             MRT_HS_PING, NULL, NULL, NULL, NULL, 0,
                             client_ping_done, NULL);
        vrpc_clnt_unref(to_ping);
    }
    if (do_connect)
        client_connect(priv);
    /* From here on xl may be freed by fini (client_stop waits for this). */
    pthread_mutex_lock(&priv->lock);
    priv->n_ticking--;
    pthread_cond_broadcast(&priv->tick_cond);
    pthread_mutex_unlock(&priv->lock);
    if (!is_armed)
        client_priv_unref(priv); /* the timer's ref, not re-armed */
    client_priv_unref(priv);     /* ours */
}


static void
client_start(struct client_priv *priv)
{
    vl_xlator_t *xl = priv->xl;

    pthread_mutex_lock(&priv->lock);
    if (priv->is_started || priv->is_stopping) {
        pthread_mutex_unlock(&priv->lock);
        return;
    }
    priv->is_started = true;
    priv->next_connect_ms = 0;
    /* The first tick connects at once. */
    priv->tick = vl_timer_add(xl->graph->loop, 0, client_tick,
                              client_priv_ref(priv));
    if (priv->tick == NULL) {
        pthread_mutex_unlock(&priv->lock);
        client_priv_unref(priv);
        vl_log(xl, VL_LOG_ERROR, "cannot start: out of memory");
        return;
    }
    pthread_mutex_unlock(&priv->lock);
}


/* VL_EV_RECONNECT: a disconnected client tries at its next tick (at most
 * CLIENT_BACKOFF_START_MS away while it has no connection) with the
 * backoff reset; a connected or connecting one is left alone. */
static void
client_reconnect_now(struct client_priv *priv)
{
    pthread_mutex_lock(&priv->lock);
    if (priv->is_started && !priv->is_stopping && priv->clnt == NULL) {
        priv->backoff_ms = CLIENT_BACKOFF_START_MS;
        priv->next_connect_ms = 0;
    }
    pthread_mutex_unlock(&priv->lock);
}


static void
client_stop(struct client_priv *priv)
{
    vrpc_clnt_t *clnt = NULL;
    vl_timer_t *tick;

    bool is_cancelled = false;

    pthread_mutex_lock(&priv->lock);
    priv->is_stopping = true;
    tick = priv->tick;
    priv->tick = NULL;
    if (priv->clnt != NULL)
        clnt = vrpc_clnt_ref(priv->clnt);
    /* Under the lock: a tick that is firing waits for it at its start
     * (and only then can the loop free its timer), so tick is still
     * valid here. Outside it, a tick could run to its end and have its
     * timer freed under vl_timer_cancel (ASan caught that). A tick
     * already running sees is_stopping and drops its ref; one that is
     * half-way through is waited for, since it uses xl. */
    if (tick != NULL)
        is_cancelled = vl_timer_cancel(tick);
    pthread_mutex_unlock(&priv->lock);
    if (is_cancelled)
        client_priv_unref(priv);
    /* A connection callback that saw !is_stopping may still be telling
     * the parents (a close on a loop thread racing with this): the graph
     * is freed once we return, so wait for it too. */
    pthread_mutex_lock(&priv->lock);
    while (priv->n_ticking > 0 || priv->n_notifying > 0)
        pthread_cond_wait(&priv->tick_cond, &priv->lock);
    pthread_mutex_unlock(&priv->lock);
    if (clnt != NULL) {
        vrpc_clnt_close(clnt);
        vrpc_clnt_unref(clnt);
    }
}


static int
client_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    struct client_priv *priv = xl->priv;

    switch (ev) {
    case VL_EV_PARENT_UP:
        client_start(priv);
        return 0;
    case VL_EV_PARENT_DOWN:
        client_stop(priv);
        return 0;
    case VL_EV_RECONNECT:
        client_reconnect_now(priv);
        return 0;
    default:
        return vl_notify_default(xl, ev, data);
    }
}


static int
client_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct client_priv *priv;
    int rc;

    priv = vl_calloc(xl, 1, sizeof(*priv), 0);
    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    /* The table is the graph's; every protocol/client of it is given
     * the same limit. */
    vl_inode_table_set_lru_limit(
        xl->graph->itable, VL_CONF(xl, struct client_conf)->inode_lru_limit);
    rc = pthread_mutex_init(&priv->lock, NULL);
    if (rc != 0) {
        vl_free(priv);
        vl_err_set(err, "mutex: %s", strerror(rc));
        return -rc;
    }
    rc = pthread_cond_init(&priv->tick_cond, NULL);
    if (rc != 0) {
        pthread_mutex_destroy(&priv->lock);
        vl_free(priv);
        vl_err_set(err, "cond: %s", strerror(rc));
        return -rc;
    }
    atomic_init(&priv->refs, 1);
    priv->xl = xl;
    /* Loop threads and timers read this copy, never xl->conf (which
     * reconfigure swaps and frees). */
    priv->conf = *VL_CONF(xl, struct client_conf);
    priv->conf.remote_host = strdup(priv->conf.remote_host);
    priv->conf.remote_subvolume = strdup(priv->conf.remote_subvolume);
    if (priv->conf.remote_host == NULL ||
        priv->conf.remote_subvolume == NULL) {
        free(priv->conf.remote_host);
        free(priv->conf.remote_subvolume);
        pthread_cond_destroy(&priv->tick_cond);
        pthread_mutex_destroy(&priv->lock);
        vl_free(priv);
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    priv->backoff_ms = CLIENT_BACKOFF_START_MS;
    if (priv->conf.is_ssl) {
        struct vrpc_tls_conf tc = {
            .own_cert = priv->conf.ssl_own_cert,
            .private_key = priv->conf.ssl_private_key,
            .ca_list = priv->conf.ssl_ca_list,
            .cipher_list = priv->conf.ssl_cipher_list,
            .check_host = priv->conf.is_ssl_check_host};

        /* A missing or bad certificate fails the graph with the file
         * and the reason (the mount prints it). */
        rc = vrpc_tls_new(&tc, false, &priv->tls, err);
        if (rc != 0) {
            vl_log(xl, VL_LOG_ERROR, "client.ssl: %s", err->msg);
            client_priv_unref(priv);
            return rc;
        }
    }
    priv->conf.ssl_own_cert = NULL; /* xl->conf's, freed by reconfigure */
    priv->conf.ssl_private_key = NULL;
    priv->conf.ssl_ca_list = NULL;
    priv->conf.ssl_cipher_list = NULL;
    xl->priv = priv;
    return 0;
}


static void
client_fini(vl_xlator_t *xl)
{
    struct client_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    client_stop(priv);
    xl->priv = NULL;
    client_priv_unref(priv);
}


/* The live options: ping-timeout (the tick reads it under priv->lock,
 * so the next tick uses the new value) and the keepalive, set on the
 * current connection now and on each later one. */
static int
client_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    const struct client_conf *nc = new_conf;
    struct client_priv *priv = xl->priv;

    (void)err;
    pthread_mutex_lock(&priv->lock);
    priv->conf.ping_timeout_ms = nc->ping_timeout_ms;
    priv->conf.keepalive_time = nc->keepalive_time;
    priv->conf.keepalive_intvl = nc->keepalive_intvl;
    priv->conf.keepalive_count = nc->keepalive_count;
    priv->conf.user_timeout = nc->user_timeout;
    client_keepalive_locked(priv);
    pthread_mutex_unlock(&priv->lock);
    vl_inode_table_set_lru_limit(xl->graph->itable, nc->inode_lru_limit);
    vl_log(xl, VL_LOG_INFO, "ping-timeout now %llu ms",
           (unsigned long long)nc->ping_timeout_ms);
    return 0;
}


static void
client_dump(vl_xlator_t *xl, FILE *out)
{
    struct client_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    fprintf(out, "connected=%d\ngeneration=%llu\npending=%zu\n"
            "ping_timeout_ms=%llu\n",
            priv->is_connected, (unsigned long long)priv->generation,
            priv->clnt != NULL ? vrpc_clnt_pending(priv->clnt) : 0,
            (unsigned long long)priv->conf.ping_timeout_ms);
    pthread_mutex_unlock(&priv->lock);
}


/* /metrics: the connection to the brick (doc/metrics.md, mortar_client_*):
 * whether it is up, how many handshakes were accepted (every one after
 * the first is a reconnect) and the calls waiting for an answer. */
static void
client_metrics(vl_xlator_t *xl, vl_metrics_sink_t *sink)
{
    struct client_priv *priv = xl->priv;
    uint64_t is_connected;
    uint64_t generation;
    uint64_t pending;

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    is_connected = priv->is_connected;
    generation = priv->generation;
    pending = priv->clnt != NULL ? vrpc_clnt_pending(priv->clnt) : 0;
    pthread_mutex_unlock(&priv->lock);
    vl_metrics_emit(sink, "mortar_client_connected", "gauge",
                    "1 while the connection to the brick is up.",
                    is_connected);
    vl_metrics_emit(sink, "mortar_client_connections_total", "counter",
                    "Connections to the brick established (handshakes "
                    "accepted); each after the first is a reconnect.",
                    generation);
    vl_metrics_emit(sink, "mortar_client_rpc_pending", "gauge",
                    "Calls sent to the brick and not answered yet.",
                    pending);
}


static const vl_option_t client_options[] = {
    VL_OPT_ADDR("remote-host", struct client_conf, remote_host,
                .flags = VL_OPT_REQUIRED,
                .doc = "Host name or address of the brick."),
    VL_OPT_UINT("remote-port", struct client_conf, remote_port, .min = 1,
                .max = 65535, .flags = VL_OPT_REQUIRED,
                .doc = "TCP port of the brick."),
    VL_OPT_STR("remote-subvolume", struct client_conf, remote_subvolume,
               .flags = VL_OPT_REQUIRED,
               .doc = "Name of the brick's volume to attach to (its "
                      "protocol/server child)."),
    VL_OPT_TIME("ping-timeout", struct client_conf, ping_timeout_ms,
                .min = 0, .max = 3600 * 1000, .def = "42",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT | VL_OPT_LIVE,
                .aliases = {"network.ping-timeout"},
                .doc = "Time without any reply, while calls are pending, "
                       "after which the brick is declared dead (0: never)."),
    /* GlusterFS's client.* keys and defaults; its volfile names are the
     * bricks' aliases (protocol/server). */
    VL_OPT_UINT("keepalive-time", struct client_conf, keepalive_time,
                .min = 0, .max = 32767, .def = "20",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT | VL_OPT_LIVE,
                .doc = "Seconds the connection to the brick may stay "
                       "silent before the client probes it (TCP "
                       "keepalive); 0 turns the probes off. ping-timeout "
                       "finds a silent brick while calls are pending; "
                       "this, one that dies while none is. Live."),
    VL_OPT_UINT("keepalive-interval", struct client_conf, keepalive_intvl,
                .min = 1, .max = 32767, .def = "2",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT | VL_OPT_LIVE,
                .doc = "Seconds between two keepalive probes of a silent "
                       "brick connection. Live."),
    VL_OPT_UINT("keepalive-count", struct client_conf, keepalive_count,
                .min = 1, .max = 127, .def = "9",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT | VL_OPT_LIVE,
                .doc = "Keepalive probes left unanswered before the client "
                       "drops the connection (and reconnects). Live."),
    VL_OPT_UINT("tcp-user-timeout", struct client_conf, user_timeout,
                .min = 0, .max = 1013, .def = "0",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT | VL_OPT_LIVE,
                .doc = "Seconds the connection may leave sent data or "
                       "probes unacknowledged before the client drops it "
                       "(TCP_USER_TIMEOUT); 0: the kernel's limit. Live."),
    VL_OPT_TIME("transport.socket.connect-timeout", struct client_conf,
                connect_timeout_ms, .min = 0, .max = 3600 * 1000,
                .def = "10", .flags = VL_OPT_ADVANCED,
                .aliases = {"connect-timeout"},
                .doc = "Time allowed for connecting and the handshake "
                       "(0: no limit)."),
    VL_OPT_BOOL("ssl", struct client_conf, is_ssl, .def = "off",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"transport.socket.ssl-enabled"},
                .doc = "Speak TLS 1.3 to the bricks, presenting "
                       "ssl.own-cert and checking theirs against "
                       "ssl.ca-list. Clients switch graphs live."),
    /* Set with volume set through protocol/server's aliases: volgen
     * copies them into both volfiles. */
    VL_OPT_PATH("ssl.own-cert", struct client_conf, ssl_own_cert,
                .def = VRPC_TLS_DEF_CERT,
                .doc = "PEM certificate of this host."),
    VL_OPT_PATH("ssl.private-key", struct client_conf, ssl_private_key,
                .def = VRPC_TLS_DEF_KEY,
                .doc = "PEM private key of ssl.own-cert."),
    VL_OPT_PATH("ssl.ca-list", struct client_conf, ssl_ca_list,
                .def = VRPC_TLS_DEF_CA,
                .doc = "PEM certificates of the CAs a brick's certificate "
                       "must be signed by."),
    VL_OPT_STR("ssl.cipher-list", struct client_conf, ssl_cipher_list,
               .doc = "TLS 1.3 cipher suites, colon-separated (OpenSSL's "
                      "names; default: OpenSSL's)."),
    VL_OPT_BOOL("ssl.check-host", struct client_conf, is_ssl_check_host,
                .def = "off", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .doc = "Refuse a brick whose certificate does not name "
                       "remote-host (its subjectAltName DNS or IP "
                       "entries; with no DNS entry, its common name for "
                       "a host name): a certificate of another member "
                       "or client of the pool cannot then stand in for "
                       "the brick. Off by default, as in GlusterFS, "
                       "whose pools name certificates after hosts they "
                       "dial by address; extras/mortar-certs puts each "
                       "host's name or address in subjectAltName. "
                       "Clients switch graphs live."),
    VL_OPT_UINT("inode-lru-limit", struct client_conf, inode_lru_limit,
                .min = 0, .max = 1048576, .def = "16384",
                .flags = VL_OPT_LIVE,
                .doc = "Inodes that nothing references kept cached in "
                       "this process's inode table (the graph's, shared "
                       "by every translator), least recently used "
                       "forgotten first; mortard writes "
                       "network.inode-lru-limit here. Live."),
    VL_OPT_END};


const vl_xlator_class_t xl_protocol_client = {
    .abi = VL_XLATOR_ABI,
    .type = "protocol/client",
    .prefix = "client",
    .version = {0, 1, 0},
    .flags = VL_XL_LEAF,
    .conf_size = sizeof(struct client_conf),
    .req_priv_size = sizeof(struct client_local),
    .fd_ctx_size = sizeof(struct client_fd),
    .options = client_options,
    .mem_types = client_mem_types,
    .doc = "Sends every file operation to one brick's protocol/server "
           "over TCP; reconnects with backoff and re-opens files.",
    .init = client_init,
    .fini = client_fini,
    .reconfigure = client_reconfigure,
    .notify = client_notify,
    .release = client_release,
    .dump = client_dump,
    .metrics = client_metrics,
    .fops = {
#define VL_FOP(UPPER, lower, flags) [VL_FOP_##UPPER] = client_fop,
#include "vol/fops.def"
#undef VL_FOP
    },
};
