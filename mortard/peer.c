/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * peer: the other mortards of the cluster.
 *
 * Store: <state>/peers, key=value lines generation= and
 * peer.N.uuid/host/port, written atomically (md_write_atomic) on every
 * membership change. The generation is bumped by the node that probes or
 * detaches and travels with the membership (PEER_MEMBERS, PEER_SYNC): a
 * node adopts a membership only if its generation is newer than its own,
 * so a node that was down during a probe or detach catches up on return.
 * Calls between mortards are short blocking connections (connect, the
 * two AUTH calls that prove the pool secret both ways (auth.c), one
 * call, one reply, close) with a deadline, made by the worker thread (a
 * probe, a transaction) or by the monitor thread; a mortard never calls
 * a peer while that peer could be blocked calling it back, except that
 * two commands racing on two nodes both hold a node lock: the deadline
 * then fails one of them.
 * Membership: a probe is a HELLO with is_probe set; the probed node
 * accepts only if it has no peers and no volumes (or already knows the
 * caller). The prober then sends the whole membership (PEER_LIST) to every
 * peer, so all nodes list the same cluster, and pushes its volumes.
 * Liveness and catch-up: the monitor thread says HELLO to every peer
 * every MD_MONITOR_MS; when a peer answers after having not answered (or
 * for the first time since start), both sides exchange their state
 * (PEER_SYNC: volume definitions, tombstones of deleted volumes, the
 * membership) and each applies what is newer than its own, starting,
 * stopping or removing the bricks that live on it (peer-vols.c). Only
 * then is the peer marked connected.
 * Threads: worker (commands, served calls; md_state.lock held), monitor
 * (calls without the lock, takes it to record results).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "mgmt.h"
#include "mortard.h"
#include "peer-int.h"
#include "secure.h"
#include "vrpc.h"

#define MD_MONITOR_MS 2000
#define MD_HELLO_TIMEOUT_MS 3000

/* Generation of the membership (md_state.lock). */
static uint64_t md_members_gen;

static struct {
    pthread_t thread;       /* the monitor */
    bool has_thread;        /* started */
    pthread_mutex_t mu;     /* guards is_stopping */
    pthread_cond_t cond;    /* wakes the monitor to stop */
    bool is_stopping;       /* (mu) */
} md_mon = {.mu = PTHREAD_MUTEX_INITIALIZER,
            .cond = PTHREAD_COND_INITIALIZER};


const char *
md_self_host(const struct md_state *st)
{
    static char hn[256];

    if (strcmp(st->bind_addr, "0.0.0.0") != 0 &&
        strcmp(st->bind_addr, "::") != 0)
        return st->bind_addr;
    if (hn[0] == '\0' && gethostname(hn, sizeof(hn) - 1) != 0)
        snprintf(hn, sizeof(hn), "localhost");
    return hn;
}


bool
md_brick_is_local(const struct md_state *st, const struct md_brick *b)
{
    if (strcmp(b->host, md_self_host(st)) == 0)
        return true;
    for (struct md_peer *p = st->peers; p != NULL; p = p->next)
        if (strcmp(p->host, b->host) == 0)
            return false;
    return md_host_is_local(b->host);
}


struct md_peer *
md_peer_find_host(struct md_state *st, const char *host)
{
    for (struct md_peer *p = st->peers; p != NULL; p = p->next)
        if (strcmp(p->host, host) == 0)
            return p;
    return NULL;
}


struct md_peer *
md_peer_find_uuid(struct md_state *st, const char *uuid)
{
    for (struct md_peer *p = st->peers; p != NULL; p = p->next)
        if (strcmp(p->uuid, uuid) == 0)
            return p;
    return NULL;
}


static void
md_peer_free(struct md_peer *p)
{
    if (p != NULL)
        free(p->host);
    free(p);
}


void
md_peers_free(struct md_state *st)
{
    while (st->peers != NULL) {
        struct md_peer *p = st->peers;

        st->peers = p->next;
        md_peer_free(p);
    }
}


/* Appends a new peer (copies its fields). */
struct md_peer *
md_peer_add(struct md_state *st, const char *uuid, const char *host,
            uint16_t port)
{
    struct md_peer *p = calloc(1, sizeof(*p)), **pp;

    if (p == NULL || (p->host = strdup(host)) == NULL) {
        free(p);
        return NULL;
    }
    snprintf(p->uuid, sizeof(p->uuid), "%s", uuid);
    p->port = port;
    for (pp = &st->peers; *pp != NULL; pp = &(*pp)->next)
        ;
    *pp = p;
    return p;
}


void
md_peer_remove(struct md_state *st, struct md_peer *victim)
{
    for (struct md_peer **pp = &st->peers; *pp != NULL; pp = &(*pp)->next)
        if (*pp == victim) {
            *pp = victim->next;
            md_peer_free(victim);
            return;
        }
}


int
md_peers_save(struct md_state *st, vl_err_t *err)
{
    struct md_sbuf sb = {0};
    size_t i = 0;
    int rc;

    md_sbuf_printf(&sb, "# mortard peers: do not edit while mortard runs\n"
                   "generation=%llu\n", (unsigned long long)md_members_gen);
    for (struct md_peer *p = st->peers; p != NULL; p = p->next, i++)
        md_sbuf_printf(&sb, "peer.%zu.uuid=%s\npeer.%zu.host=%s\n"
                       "peer.%zu.port=%u\n", i, p->uuid, i, p->host, i,
                       p->port);
    if (sb.is_oom) {
        md_sbuf_clear(&sb);
        vl_err_set(err, "peers: out of memory");
        return -ENOMEM;
    }
    rc = md_write_atomic(st->state_dir, "peers", sb.data, sb.len, err);
    md_sbuf_clear(&sb);
    return rc;
}


/* Parse state of the peers file: the peer being filled. */
struct md_peers_parse {
    struct md_state *st;  /* borrowed */
    struct md_peer *cur;  /* last peer added */
    long idx;             /* its index in the file */
};


static int
md_peers_cb(const char *key, const char *value, int line, void *arg,
            vl_err_t *err)
{
    struct md_peers_parse *pp = arg;
    char *end;
    long idx;
    vl_gfid_t g;

    (void)line;
    if (strcmp(key, "generation") == 0) {
        unsigned long long gen = strtoull(value, &end, 10);

        if (end == value || *end != '\0')
            goto bad;
        md_members_gen = gen;
        return 0;
    }
    if (strncmp(key, "peer.", 5) != 0)
        goto bad;
    idx = strtol(key + 5, &end, 10);
    if (end == key + 5 || *end != '.' || idx < 0)
        goto bad;
    end++;
    if (idx != pp->idx) {
        if (idx != pp->idx + 1 || strcmp(end, "uuid") != 0 ||
            vl_gfid_parse(value, &g) != 0)
            goto bad;
        pp->cur = md_peer_add(pp->st, value, "", 0);
        if (pp->cur == NULL)
            return -ENOMEM;
        pp->idx = idx;
        return 0;
    }
    if (pp->cur != NULL && strcmp(end, "host") == 0 && value[0] != '\0') {
        free(pp->cur->host);
        pp->cur->host = strdup(value);
        return pp->cur->host != NULL ? 0 : -ENOMEM;
    }
    if (pp->cur != NULL && strcmp(end, "port") == 0) {
        long port = strtol(value, &end, 10);

        if (*end != '\0' || port < 1 || port > 65535)
            goto bad;
        pp->cur->port = (uint16_t)port;
        return 0;
    }
bad:
    vl_err_set(err, "bad line '%s=%s'", key, value);
    return -EINVAL;
}


int
md_peers_load(struct md_state *st, vl_err_t *err)
{
    struct md_peers_parse pp = {.st = st, .idx = -1};
    char path[4200], *text = NULL;
    int rc;

    snprintf(path, sizeof(path), "%s/peers", st->state_dir);
    rc = md_read_file(path, &text, NULL);
    if (rc == -ENOENT)
        return 0;
    if (rc != 0) {
        vl_err_set(err, "%s: %s", path, strerror(-rc));
        return rc;
    }
    rc = md_kv_parse(text, path, md_peers_cb, &pp, err);
    free(text);
    for (struct md_peer *p = st->peers; rc == 0 && p != NULL; p = p->next)
        if (p->host[0] == '\0' || p->port == 0) {
            vl_err_set(err, "%s: peer %s has no host or port", path,
                       p->uuid);
            rc = -EINVAL;
        }
    if (rc != 0)
        md_peers_free(st);
    return rc;
}


uint64_t
md_members_gen_get(void)
{
    return md_members_gen;
}


void
md_members_gen_set(uint64_t gen)
{
    md_members_gen = gen;
}


/* Copies one member into the next slot of m (strings duplicated). */
static int
md_member_put(mgmt_members *m, const char *uuid, const char *host,
              uint16_t port)
{
    mgmt_peer_info *i = &m->members.members_val[m->members.members_len++];

    i->uuid = strdup(uuid);
    i->host = strdup(host);
    i->port = port;
    return i->uuid != NULL && i->host != NULL ? 0 : -ENOMEM;
}


int
md_members_fill(struct md_state *st, mgmt_members *m)
{
    u_int n = 1;
    int rc;

    for (struct md_peer *p = st->peers; p != NULL; p = p->next)
        n++;
    if (n > MGMT_PEERS_MAX)
        n = MGMT_PEERS_MAX;
    m->generation = md_members_gen;
    m->members.members_len = 0;
    m->members.members_val = calloc(n, sizeof(*m->members.members_val));
    if (m->members.members_val == NULL)
        return -ENOMEM;
    rc = md_member_put(m, st->node_id, md_self_host(st), st->mgmt_port);
    for (struct md_peer *p = st->peers;
         rc == 0 && p != NULL && m->members.members_len < n; p = p->next)
        rc = md_member_put(m, p->uuid, p->host, p->port);
    return rc; /* on failure the caller xdr_frees what was filled */
}


int
md_members_adopt(struct md_state *st, const char *from,
                 const mgmt_members *m)
{
    struct md_peer *old = st->peers;
    vl_err_t err = {.msg = ""};
    bool has_self = false;
    int rc;

    if (m->generation <= md_members_gen)
        return 0;
    for (u_int i = 0; i < m->members.members_len; i++)
        if (strcmp(m->members.members_val[i].uuid, st->node_id) == 0)
            has_self = true;
    if (!has_self) {
        /* Detached while away: the detach itself tells a node to leave
         * (an empty PEER_LIST); a catch-up never makes it forget. */
        vl_glog(MD_DOMAIN, VL_LOG_WARNING, "membership %llu from %s does "
                "not list this node: ignored",
                (unsigned long long)m->generation, from);
        return 0;
    }
    st->peers = NULL;
    for (u_int i = 0; i < m->members.members_len; i++) {
        const mgmt_peer_info *mi = &m->members.members_val[i];
        struct md_peer *was = NULL, *p;
        vl_gfid_t g;

        if (strcmp(mi->uuid, st->node_id) == 0 ||
            vl_gfid_parse(mi->uuid, &g) != 0 || mi->port == 0 ||
            mi->port > 65535 || mi->host[0] == '\0' ||
            md_peer_find_uuid(st, mi->uuid) != NULL)
            continue;
        for (struct md_peer *o = old; o != NULL; o = o->next)
            if (strcmp(o->uuid, mi->uuid) == 0)
                was = o;
        p = md_peer_add(st, mi->uuid, mi->host, (uint16_t)mi->port);
        if (p != NULL && was != NULL)
            p->is_connected = was->is_connected;
    }
    md_members_gen = m->generation;
    rc = md_peers_save(st, &err);
    if (rc != 0) {
        md_peers_free(st);
        st->peers = old;
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "membership from %s: %s", from,
                err.msg);
        return rc;
    }
    while (old != NULL) {
        struct md_peer *n = old->next;

        md_peer_free(old);
        old = n;
    }
    md_server_peers_changed(st);
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "membership generation %llu from %s: "
            "%u member(s)", (unsigned long long)m->generation, from,
            m->members.members_len);
    return 0;
}


/* ---- the blocking client ---------------------------------------------- */

static int
md_call_on(struct vrpc_stream *s, uint32_t proc, xdrproc_t afn, void *args,
           xdrproc_t rfn, void *res, uint64_t deadline)
{
    char *call = NULL, *rec = NULL;
    size_t clen, rlen = 0, off;
    uint32_t mark, xid;
    int accept, rc;
    bool is_last = false;

    rc = vrpc_encode_call(1, MGMT_PROG, MGMT_VERSION, proc, NULL, afn, args,
                          &call, &clen);
    if (rc != 0)
        return rc;
    mark = htonl(VRPC_LAST_FRAG | (uint32_t)clen);
    rc = vrpc_stream_io(s, (char *)&mark, 4, true, deadline);
    if (rc == 0)
        rc = vrpc_stream_io(s, call, clen, true, deadline);
    vl_free(call);
    while (rc == 0 && !is_last) {
        uint32_t n;
        char *nr;

        rc = vrpc_stream_io(s, (char *)&mark, 4, false, deadline);
        if (rc != 0)
            break;
        mark = ntohl(mark);
        is_last = (mark & VRPC_LAST_FRAG) != 0;
        n = mark & ~VRPC_LAST_FRAG;
        if (rlen + n > VRPC_MAX_RECORD) {
            rc = -EPROTO;
            break;
        }
        nr = realloc(rec, rlen + n + 1);
        if (nr == NULL) {
            rc = -ENOMEM;
            break;
        }
        rec = nr;
        rc = vrpc_stream_io(s, rec + rlen, n, false, deadline);
        rlen += n;
    }
    if (rc == 0 && vrpc_decode_reply(rec, rlen, &xid, &accept, &off) != 0)
        rc = -EPROTO;
    else if (rc == 0 && accept == -1)
        rc = -EPERM; /* denied: this connection is not authenticated */
    else if (rc == 0 && (accept != VRPC_SUCCESS ||
                         vrpc_decode_body(rec + off, rlen - off, rfn, res,
                                          NULL) != 0))
        rc = -EPROTO;
    free(rec);
    return rc;
}


/* The connection of one md_peer_call, for md_auth_prove. */
struct md_auth_link {
    struct vrpc_stream *s;  /* connected (TLS with secure-access) */
    uint64_t deadline;      /* of the whole md_peer_call */
};


static int
md_auth_link_call(void *arg, mgmt_auth_req *req, mgmt_auth_rsp *rsp)
{
    struct md_auth_link *l = arg;

    return md_call_on(l->s, MGMT_PROC_AUTH, (xdrproc_t)xdr_mgmt_auth_req,
                      req, (xdrproc_t)xdr_mgmt_auth_rsp, rsp, l->deadline);
}


int
md_peer_call(const char *host, uint16_t port, uint32_t proc, xdrproc_t afn,
             void *args, xdrproc_t rfn, void *res, int timeout_ms,
             vl_err_t *err)
{
    uint64_t deadline = vrpc_now_ms() + (uint64_t)timeout_ms;
    struct vrpc_stream s = {.fd = -1};
    struct pollfd pfd;
    int rc, soerr = 0;
    socklen_t sl = sizeof(soerr);

    rc = vrpc_connect_start(host, port, &s.fd, err);
    if (rc != 0)
        return rc;
    pfd.fd = s.fd;
    pfd.events = POLLOUT;
    do {
        rc = poll(&pfd, 1, timeout_ms);
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) {
        rc = -ETIMEDOUT;
    } else if (rc < 0) {
        rc = -errno;
    } else if (getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0) {
        rc = -errno;
    } else {
        rc = -soerr;
    }
    /* secure-access: TLS first; the pool secret is still proven inside
     * it (the CA signs clients too, so a certificate makes no peer). */
    if (rc == 0 && md_secure_client_tls() != NULL) {
        vl_err_t terr = {.msg = ""};

        rc = vrpc_stream_tls_start(&s, md_secure_client_tls(), host, deadline,
                                   &terr);
        if (rc != 0) {
            vrpc_stream_close(&s);
            vl_err_set(err, "%s:%u: %s", host, port, terr.msg);
            return rc;
        }
    }
    if (rc == 0) {
        struct md_auth_link link = {.s = &s, .deadline = deadline};
        vl_err_t aerr = {.msg = ""};

        rc = md_auth_prove(md_auth_link_call, &link, &aerr);
        if (rc != 0) {
            vrpc_stream_close(&s);
            if (rc == -ECONNRESET && md_secure_client_tls() == NULL)
                vl_err_set(err, "%s:%u: the peer closed the connection "
                           "(if it has secure-access on, this node needs "
                           "it too)", host, port);
            else
                vl_err_set(err, "%s:%u: %s", host, port, aerr.msg);
            return rc;
        }
        rc = md_call_on(&s, proc, afn, args, rfn, res, deadline);
    }
    if (rc != 0)
        vl_err_set(err, "%s:%u: %s", host, port,
                   s.why[0] != '\0' ? s.why
                   : rc == -EPROTO ? "bad reply"
                   : rc == -EPERM ? "not authenticated" : strerror(-rc));
    vrpc_stream_close(&s);
    return rc;
}


/* ---- monitor ------------------------------------------------------------ */

/* A copy of a peer, taken under the lock. */
struct md_peer_ref {
    char uuid[VL_GFID_STR_LEN];  /* its id */
    char host[MGMT_HOST_MAX];    /* its address */
    uint16_t port;               /* its mgmt port */
    bool was_connected;          /* before this round */
};


static void
md_monitor_round(struct md_state *st, bool *is_first)
{
    struct md_peer_ref refs[64];
    size_t n = 0;
    mgmt_hello_req req = {.to_host = ""};

    pthread_mutex_lock(&st->lock);
    md_sync_track(st);
    for (struct md_peer *p = st->peers; p != NULL && n < 64; p = p->next) {
        snprintf(refs[n].uuid, sizeof(refs[n].uuid), "%s", p->uuid);
        snprintf(refs[n].host, sizeof(refs[n].host), "%s", p->host);
        refs[n].port = p->port;
        refs[n].was_connected = p->is_connected && !*is_first;
        n++;
    }
    pthread_mutex_unlock(&st->lock);
    *is_first = false;
    req.self.uuid = st->node_id;
    req.self.host = (char *)md_self_host(st);
    req.self.port = st->mgmt_port;
    for (size_t i = 0; i < n; i++) {
        mgmt_hello_rsp rsp = {0};
        vl_err_t err = {.msg = ""};
        bool is_up;
        struct md_peer *p;

        req.to_host = refs[i].host;
        is_up = md_peer_call(refs[i].host, refs[i].port,
                             MGMT_PROC_PEER_HELLO,
                             (xdrproc_t)xdr_mgmt_hello_req, &req,
                             (xdrproc_t)xdr_mgmt_hello_rsp, &rsp,
                             MD_HELLO_TIMEOUT_MS, &err) == 0 &&
                rsp.ret == 0 && strcmp(rsp.self.uuid, refs[i].uuid) == 0;
        xdr_free((xdrproc_t)xdr_mgmt_hello_rsp, (char *)&rsp);
        /* A returning peer counts as connected (and takes part in
         * transactions again) only once both sides caught up. */
        if (is_up && !refs[i].was_connected &&
            md_vols_exchange(st, refs[i].host, refs[i].port, false,
                             &err) != 0) {
            vl_glog(MD_DOMAIN, VL_LOG_WARNING, "catch-up with %s: %s",
                    refs[i].host, err.msg);
            is_up = false;
        }
        pthread_mutex_lock(&st->lock);
        p = md_peer_find_uuid(st, refs[i].uuid);
        if (p != NULL && p->is_connected != is_up)
            vl_glog(MD_DOMAIN, is_up ? VL_LOG_INFO : VL_LOG_WARNING,
                    "peer %s (%s) is %s%s%s", p->host, p->uuid,
                    is_up ? "connected" : "disconnected",
                    !is_up && err.msg[0] != '\0' ? ": " : "",
                    !is_up ? err.msg : "");
        if (p != NULL)
            p->is_connected = is_up;
        pthread_mutex_unlock(&st->lock);
    }
}


static void *
md_monitor(void *arg)
{
    struct md_state *st = arg;
    bool is_first = true;

    pthread_mutex_lock(&md_mon.mu);
    while (!md_mon.is_stopping) {
        struct timespec ts;

        pthread_mutex_unlock(&md_mon.mu);
        md_monitor_round(st, &is_first);
        pthread_mutex_lock(&md_mon.mu);
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += MD_MONITOR_MS / 1000;
        if (!md_mon.is_stopping)
            (void)pthread_cond_timedwait(&md_mon.cond, &md_mon.mu, &ts);
    }
    pthread_mutex_unlock(&md_mon.mu);
    return NULL;
}


int
md_peer_monitor_start(struct md_state *st, vl_err_t *err)
{
    int rc = pthread_create(&md_mon.thread, NULL, md_monitor, st);

    if (rc != 0) {
        vl_err_set(err, "peer monitor thread: %s", strerror(rc));
        return -rc;
    }
    md_mon.has_thread = true;
    return 0;
}


void
md_peer_monitor_stop(void)
{
    if (!md_mon.has_thread)
        return;
    pthread_mutex_lock(&md_mon.mu);
    md_mon.is_stopping = true;
    pthread_cond_signal(&md_mon.cond);
    pthread_mutex_unlock(&md_mon.mu);
    pthread_join(md_mon.thread, NULL);
    md_mon.has_thread = false;
}
