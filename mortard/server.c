/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * server: the mgmt RPC service of rpc/xdr/mgmt.x on the unix socket
 * <run-dir>/mortard.sock and on TCP --mgmt-port.
 *
 * Loop threads decode each call and queue a job; one worker thread runs
 * the jobs in order with md_state.lock held (commands block: they fork
 * bricks, wait for them, fsync the store) and sends the reply. A WATCH
 * whose version is current is parked with a deadline; the worker answers
 * parked watches when md_server_notify says a volume changed, or after
 * 30 s with the unchanged spec. Between jobs and when idle (at least
 * once a second) the worker runs the brick supervision (supervise.c).
 * Who may call what (md_conn_is_trusted, doc/security.md): root (or
 * mortard's own user) on the unix socket may call everything; anyone on
 * TCP may call NULL, GETSPEC and WATCH (clients fetch volfiles) and AUTH;
 * a TCP connection that proved the pool secret through AUTH (auth.c) may
 * also call the peer procedures; with secure-access (secure.c) the TCP
 * port speaks TLS only, and a certificate whose common name admin-allow
 * lists makes an admin. Everything else is refused: CLI with a one-line
 * error the CLI prints, the others with an RPC AUTH_ERROR.
 * Per-request state: struct md_job (the conn ref, xid, decoded args).
 * Per connection: struct md_conn (how it came, its AUTH state).
 * Threads: loop threads (accept, decode), the worker, and the main thread
 * (start/stop, dump).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "mgmt.h"
#include "mortard.h"
#include "profile.h"
#include "secure.h"
#include "vrpc.h"

#define MD_WATCH_MAX_MS 30000
#define MD_WATCHERS_MAX 4096

struct md_job {
    vrpc_conn_t *conn;       /* one ref */
    uint32_t xid;            /* of the call */
    uint32_t proc;           /* MGMT_PROC_* */
    mgmt_cli_req cli;        /* decoded args (proc CLI) */
    mgmt_watch_req watch;    /* decoded args (GETSPEC uses .volume) */
    uint64_t deadline_ms;    /* parked WATCH: answer by then */
    char *body;              /* peer procs: the raw arguments (owned) */
    size_t body_len;         /* bytes in body */
    struct md_job *next;     /* queue or watcher list */
};

/* An accepted connection, listed so that shutdown can close the ones
 * still open (long-polling WATCH clients) and free them. */
struct md_conn {
    vrpc_conn_t *conn;          /* the accept's ref (dropped at close) */
    bool is_unix;               /* came through the unix socket */
    bool is_admin_uid;          /* unix: SO_PEERCRED says root or us */
    struct md_auth_conn auth;   /* TCP: the AUTH exchange (own lock) */
    struct md_conn *next;       /* md_srv.conns list */
};

#define MD_REFUSED_TCP                                                    \
    "not authenticated: mortard's TCP port runs management commands "    \
    "only for a TLS connection with an admin certificate; run mortar on " \
    "a pool node (it uses mortard's unix socket) or see doc/security.md"
#define MD_REFUSED_CN                                                     \
    "not authenticated: certificate CN '%s' is not in this mortard's "    \
    "admin list (%s); see doc/security.md"
#define MD_REFUSED_UNIX                                                   \
    "permission denied: mortard's unix socket serves root only"

static struct {
    struct md_state *st;        /* borrowed */
    vl_loop_t *loop;            /* owned */
    vrpc_listener_t *tcp;       /* owned */
    int unix_fd;                /* owned listening socket */
    vl_io_t *unix_io;           /* owned registration */
    pthread_t worker;           /* runs the jobs */
    bool has_worker;            /* worker was started */
    pthread_mutex_t qlock;      /* guards the queue fields below */
    pthread_cond_t qcond;       /* signalled on a new job or notify */
    struct md_job *head;        /* queue (qlock) */
    struct md_job *tail;        /* queue (qlock) */
    bool is_stopping;           /* (qlock) */
    bool is_ready;              /* (qlock) startup done: supervise bricks */
    bool is_changed;            /* (qlock) a volume changed: check watches */
    struct md_job *watchers;    /* worker only */
    size_t n_watchers;          /* worker only */
    uint64_t n_calls;           /* (qlock) calls received */
    pthread_mutex_t peers_mu;   /* guards peer_ids */
    char *peer_ids;             /* (peers_mu) uuids of the peers, lines */
    pthread_mutex_t conns_mu;   /* guards conns */
    struct md_conn *conns;      /* (conns_mu) accepted, not yet closed */
} md_srv = {.unix_fd = -1, .qlock = PTHREAD_MUTEX_INITIALIZER,
            .qcond = PTHREAD_COND_INITIALIZER,
            .peers_mu = PTHREAD_MUTEX_INITIALIZER,
            .conns_mu = PTHREAD_MUTEX_INITIALIZER};


static void
md_job_free(struct md_job *j)
{
    xdr_free((xdrproc_t)xdr_mgmt_cli_req, (char *)&j->cli);
    xdr_free((xdrproc_t)xdr_mgmt_watch_req, (char *)&j->watch);
    free(j->body);
    vrpc_conn_unref(j->conn);
    free(j);
}


static void
md_reply_spec(struct md_state *st, struct md_job *j)
{
    mgmt_getspec_rsp rsp = {.errstr = "", .spec = ""};
    struct md_volume *vol = md_volume_find(st, j->watch.volume);
    char *spec = NULL;

    if (vol == NULL) {
        rsp.ret = -1;
        rsp.op_errno = ENOENT;
        rsp.errstr = "volume does not exist";
    } else {
        spec = md_volgen_client(vol);
        if (spec == NULL) {
            rsp.ret = -1;
            rsp.op_errno = ENOMEM;
            rsp.errstr = "out of memory";
        } else {
            rsp.spec = spec;
            rsp.spec_version = vol->version;
        }
    }
    (void)vrpc_send_reply(j->conn, j->xid, VRPC_SUCCESS,
                          (xdrproc_t)xdr_mgmt_getspec_rsp, &rsp, NULL, 0);
    free(spec);
}


static uint64_t
md_vol_version(struct md_state *st, const char *name)
{
    struct md_volume *vol = md_volume_find(st, name);

    return vol != NULL ? vol->version : 0;
}


static void
md_run_cli(struct md_state *st, struct md_job *j)
{
    mgmt_cli_rsp rsp = {.errstr = "", .output = ""};
    struct md_result r;
    char *out = NULL;

    md_result_init(&r);
    if (r.root == NULL) {
        md_result_fail(&r, MD_EXIT_FAIL, ENOMEM, "out of memory");
    } else {
        vl_glog(MD_DOMAIN, VL_LOG_DEBUG, "cli: %u args, first '%s'",
                j->cli.argv.argv_len,
                j->cli.argv.argv_len > 0 ? j->cli.argv.argv_val[0] : "");
        md_cmd_run(st, (int)j->cli.argv.argv_len, j->cli.argv.argv_val, &r);
    }
    if (r.ret != 0)
        vl_glog(MD_DOMAIN, VL_LOG_INFO, "command failed (%d): %s", r.ret,
                r.errstr);
    if (md_render(&r, j->cli.format, &out) != 0)
        md_result_fail(&r, MD_EXIT_FAIL, ENOMEM, "out of memory");
    rsp.ret = r.ret;
    rsp.op_errno = r.op_errno;
    rsp.errstr = r.errstr;
    rsp.output = out != NULL ? out : "";
    (void)vrpc_send_reply(j->conn, j->xid, VRPC_SUCCESS,
                          (xdrproc_t)xdr_mgmt_cli_rsp, &rsp, NULL, 0);
    free(out);
    md_result_clear(&r);
}


/* Answers parked watches that changed or timed out. */
static void
md_scan_watchers(struct md_state *st)
{
    uint64_t now = vrpc_now_ms();

    for (struct md_job **pp = &md_srv.watchers; *pp != NULL;) {
        struct md_job *j = *pp;

        if (md_vol_version(st, j->watch.volume) != j->watch.spec_version ||
            now >= j->deadline_ms || vrpc_conn_is_closed(j->conn) ||
            md_srv.is_stopping) {
            *pp = j->next;
            md_srv.n_watchers--;
            md_reply_spec(st, j);
            md_job_free(j);
        } else {
            pp = &j->next;
        }
    }
}


static void
md_run_job(struct md_state *st, struct md_job *j)
{
    switch (j->proc) {
    case MGMT_PROC_CLI:
        md_run_cli(st, j);
        break;
    case MGMT_PROC_GETSPEC:
        md_reply_spec(st, j);
        break;
    case MGMT_PROC_WATCH:
        if (md_vol_version(st, j->watch.volume) != j->watch.spec_version ||
            md_srv.n_watchers >= MD_WATCHERS_MAX) {
            md_reply_spec(st, j);
            break;
        }
        j->deadline_ms = vrpc_now_ms() + MD_WATCH_MAX_MS;
        j->next = md_srv.watchers;
        md_srv.watchers = j;
        md_srv.n_watchers++;
        return;
    default:
        if (j->body != NULL)
            md_peer_serve(st, j->conn, j->xid, j->proc, j->body,
                          j->body_len);
        break;
    }
    md_job_free(j);
}


static void *
md_worker(void *arg)
{
    struct md_state *st = arg;

    pthread_mutex_lock(&md_srv.qlock);
    for (;;) {
        struct md_job *j = md_srv.head;
        bool is_supervising;

        if (j == NULL) {
            struct timespec ts;

            if (md_srv.is_stopping)
                break;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            if (!md_srv.is_changed)
                (void)pthread_cond_timedwait(&md_srv.qcond, &md_srv.qlock,
                                             &ts);
            md_srv.is_changed = false;
            is_supervising = md_srv.is_ready && !md_srv.is_stopping;
            pthread_mutex_unlock(&md_srv.qlock);
            pthread_mutex_lock(&st->lock);
            md_scan_watchers(st);
            if (is_supervising)
                md_supervise(st, false);
            pthread_mutex_unlock(&st->lock);
            pthread_mutex_lock(&md_srv.qlock);
            continue;
        }
        md_srv.head = j->next;
        if (md_srv.head == NULL)
            md_srv.tail = NULL;
        j->next = NULL;
        is_supervising = md_srv.is_ready && !md_srv.is_stopping;
        pthread_mutex_unlock(&md_srv.qlock);
        pthread_mutex_lock(&st->lock);
        md_run_job(st, j);
        md_server_peers_changed(st);
        md_scan_watchers(st);
        if (is_supervising)
            md_supervise(st, true);
        pthread_mutex_unlock(&st->lock);
        pthread_mutex_lock(&md_srv.qlock);
    }
    pthread_mutex_unlock(&md_srv.qlock);
    pthread_mutex_lock(&st->lock);
    md_scan_watchers(st); /* is_stopping: answers them all */
    pthread_mutex_unlock(&st->lock);
    return NULL;
}


void
md_server_ready(void)
{
    pthread_mutex_lock(&md_srv.qlock);
    md_srv.is_ready = true;
    md_srv.is_changed = true;
    pthread_cond_signal(&md_srv.qcond);
    pthread_mutex_unlock(&md_srv.qlock);
}


void
md_server_notify(void)
{
    pthread_mutex_lock(&md_srv.qlock);
    md_srv.is_changed = true;
    pthread_cond_signal(&md_srv.qcond);
    pthread_mutex_unlock(&md_srv.qlock);
}


/* LOCK and UNLOCK of a transaction, answered here on the loop thread so
 * that a node whose worker runs its own command still answers at once.
 * Returns true if the call was one of them (and is answered). */
static bool
md_txn_lock_phase(vrpc_conn_t *c, uint32_t xid, const char *body,
                  size_t len)
{
    mgmt_txn_req req = {0};
    mgmt_status_rsp rsp = {.errstr = "", .data = ""};
    vl_err_t err = {.msg = ""};
    bool is_known;

    if (vrpc_decode_body(body, len, (xdrproc_t)xdr_mgmt_txn_req, &req,
                         NULL) != 0)
        return false;
    if (req.phase != MGMT_TXN_LOCK && req.phase != MGMT_TXN_UNLOCK) {
        xdr_free((xdrproc_t)xdr_mgmt_txn_req, (char *)&req);
        return false;
    }
    pthread_mutex_lock(&md_srv.peers_mu);
    is_known = md_srv.peer_ids != NULL &&
               strstr(md_srv.peer_ids, req.from) != NULL;
    pthread_mutex_unlock(&md_srv.peers_mu);
    if (!is_known) {
        rsp.ret = -1;
        rsp.op_errno = EPERM;
        rsp.errstr = "the caller is not a peer of this node";
    } else if (req.phase == MGMT_TXN_UNLOCK) {
        md_txn_unlock(req.txn_id);
    } else if (md_txn_lock(req.from, req.txn_id, &err) != 0) {
        rsp.ret = -1;
        rsp.op_errno = EBUSY;
        rsp.errstr = err.msg;
    }
    (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                          (xdrproc_t)xdr_mgmt_status_rsp, &rsp, NULL, 0);
    xdr_free((xdrproc_t)xdr_mgmt_txn_req, (char *)&req);
    return true;
}


void
md_server_peers_changed(struct md_state *st)
{
    struct md_sbuf sb = {0};

    for (struct md_peer *p = st->peers; p != NULL; p = p->next)
        md_sbuf_printf(&sb, "%s\n", p->uuid);
    pthread_mutex_lock(&md_srv.peers_mu);
    free(md_srv.peer_ids);
    md_srv.peer_ids = sb.is_oom ? NULL : sb.data;
    pthread_mutex_unlock(&md_srv.peers_mu);
    if (sb.is_oom)
        md_sbuf_clear(&sb);
}


/* The one place that says who a connection is (doc/security.md): root
 * (or mortard's own user) on the unix socket is an admin, and so is a
 * TLS connection (secure-access) whose verified certificate's common
 * name admin-allow lists; a TCP connection that proved the pool secret
 * (AUTH) is a peer, anyone else a stranger. A certificate alone makes
 * no peer: the CA signs clients too, so peers still prove the secret. */
static bool
md_conn_is_trusted(struct md_conn *mc, enum md_role *role /* OUT */)
{
    *role = MD_ROLE_NONE;
    if (mc->is_unix) {
        if (mc->is_admin_uid)
            *role = MD_ROLE_ADMIN;
    } else if (vrpc_conn_is_tls(mc->conn)
               && md_secure_is_admin(vrpc_conn_tls_peer_cn(mc->conn))) {
        *role = MD_ROLE_ADMIN;
    } else if (md_auth_conn_is_peer(&mc->auth)) {
        *role = MD_ROLE_PEER;
    }
    return *role != MD_ROLE_NONE;
}


/* True if a connection of role may call proc; a procedure not named
 * here is for peers and admins only. */
static bool
md_proc_allowed(const struct md_conn *mc, uint32_t proc, enum md_role role)
{
    switch (proc) {
    case MGMT_PROC_NULL:
        return true;
    case MGMT_PROC_GETSPEC:
    case MGMT_PROC_WATCH:
    case MGMT_PROC_AUTH:
        /* Volfiles for any client over TCP, as GlusterFS serves them;
         * the unix socket is root's alone. */
        return !mc->is_unix || role == MD_ROLE_ADMIN;
    case MGMT_PROC_CLI:
        return role == MD_ROLE_ADMIN;
    default:
        return role == MD_ROLE_ADMIN || role == MD_ROLE_PEER;
    }
}


/* A denied reply (RFC 5531: MSG_DENIED, AUTH_ERROR, AUTH_TOOWEAK): the
 * caller's credentials do not reach this procedure. vrpc_decode_reply
 * gives the caller accept -1. */
static void
md_send_auth_error(vrpc_conn_t *c, uint32_t xid)
{
    uint32_t words[5] = {htonl(xid), htonl(1 /* REPLY */),
                         htonl(1 /* MSG_DENIED */), htonl(1 /* AUTH_ERROR */),
                         htonl(5 /* AUTH_TOOWEAK */)};
    struct iovec iov = {.iov_base = words, .iov_len = sizeof(words)};

    (void)vrpc_conn_send(c, &iov, 1);
}


/* Answers a call its connection may not make: CLI with an error the
 * CLI prints, every other procedure with an RPC AUTH_ERROR. */
static void
md_refuse(struct md_conn *mc, vrpc_conn_t *c, uint32_t xid, uint32_t proc)
{
    const char *cn = mc->is_unix ? NULL : vrpc_conn_tls_peer_cn(c);
    char why[512];

    /* A command needs an admin; a peer procedure needs the pool secret
     * (or an admin): say which is missing. */
    if (cn != NULL && proc == MGMT_PROC_CLI)
        snprintf(why, sizeof(why), MD_REFUSED_CN, cn,
                 md_secure_admin_path());
    else if (cn != NULL)
        snprintf(why, sizeof(why), "not authenticated: certificate CN "
                 "'%s' is not an admin and the connection did not prove "
                 "the pool secret", cn);
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "refused procedure %u from %s: %s", proc,
            mc->is_unix ? "the unix socket" : vrpc_conn_peer(c),
            mc->is_unix ? "not root"
            : cn != NULL ? why : "not authenticated");
    if (proc == MGMT_PROC_CLI) {
        mgmt_cli_rsp rsp = {.ret = MD_EXIT_FAIL, .op_errno = EACCES,
                            .output = ""};

        rsp.errstr = mc->is_unix ? MD_REFUSED_UNIX
                     : cn != NULL ? why : MD_REFUSED_TCP;
        (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                              (xdrproc_t)xdr_mgmt_cli_rsp, &rsp, NULL, 0);
        return;
    }
    md_send_auth_error(c, xid);
}


/* AUTH, answered on the loop thread (no store access). */
static void
md_auth_call(struct md_conn *mc, vrpc_conn_t *c, uint32_t xid,
             const char *body, size_t len)
{
    mgmt_auth_req req = {0};
    struct md_auth_answer ans;

    if (vrpc_decode_body(body, len, (xdrproc_t)xdr_mgmt_auth_req, &req,
                         NULL) != 0) {
        (void)vrpc_send_reply(c, xid, VRPC_GARBAGE_ARGS, NULL, NULL, NULL,
                              0);
        return;
    }
    md_auth_serve(&mc->auth, &req, vrpc_conn_peer(c), &ans);
    (void)vrpc_send_reply(c, xid, VRPC_SUCCESS, (xdrproc_t)xdr_mgmt_auth_rsp,
                          &ans.rsp, NULL, 0);
    xdr_free((xdrproc_t)xdr_mgmt_auth_req, (char *)&req);
}


static void
md_on_record(vrpc_conn_t *c, vl_buf_t *rec, size_t len, void *arg)
{
    struct md_conn *mc = arg;
    enum md_role role;
    struct vrpc_call_hdr hdr;
    struct md_job *j;
    size_t off;
    bool xid_ok = false;
    int rc;

    if (vrpc_decode_call(rec->data, len, &hdr, &off, &xid_ok) != 0) {
        vrpc_conn_close(c, EPROTO);
        return;
    }
    if (hdr.prog != MGMT_PROG || hdr.vers != MGMT_VERSION) {
        (void)vrpc_send_reply(c, hdr.xid, hdr.prog != MGMT_PROG ?
                              VRPC_PROG_UNAVAIL : VRPC_PROG_MISMATCH,
                              NULL, NULL, NULL, 0);
        return;
    }
    if (hdr.proc == MGMT_PROC_NULL) {
        (void)vrpc_send_reply(c, hdr.xid, VRPC_SUCCESS, NULL, NULL, NULL, 0);
        return;
    }
    (void)md_conn_is_trusted(mc, &role);
    /* Every procedure, known or not: one added later is a peer's until
     * md_proc_allowed says otherwise. */
    if (!md_proc_allowed(mc, hdr.proc, role)) {
        md_refuse(mc, c, hdr.xid, hdr.proc);
        return;
    }
    if (hdr.proc == MGMT_PROC_AUTH) {
        md_auth_call(mc, c, hdr.xid, rec->data + off, len - off);
        return;
    }
    j = calloc(1, sizeof(*j));
    if (j == NULL) {
        (void)vrpc_send_reply(c, hdr.xid, VRPC_SYSTEM_ERR, NULL, NULL,
                              NULL, 0);
        return;
    }
    j->xid = hdr.xid;
    j->proc = hdr.proc;
    switch (hdr.proc) {
    case MGMT_PROC_CLI:
        rc = vrpc_decode_body(rec->data + off, len - off,
                              (xdrproc_t)xdr_mgmt_cli_req, &j->cli, NULL);
        if (rc == 0 && (j->cli.format < 0 || j->cli.format > 2))
            j->cli.format = 0;
        break;
    case MGMT_PROC_GETSPEC:
        rc = vrpc_decode_body(rec->data + off, len - off,
                              (xdrproc_t)xdr_mgmt_getspec_req, &j->watch,
                              NULL);
        break;
    case MGMT_PROC_WATCH:
        rc = vrpc_decode_body(rec->data + off, len - off,
                              (xdrproc_t)xdr_mgmt_watch_req, &j->watch,
                              NULL);
        break;
    case MGMT_PROC_BRICK_STATUS:
        (void)md_peer_serve_fast(md_srv.st, c, hdr.xid, hdr.proc,
                                 rec->data + off, len - off);
        free(j);
        return;
    case MGMT_PROC_HEAL_INFO:
    case MGMT_PROC_HEAL_SPLIT:
    case MGMT_PROC_HEAL_WAITING:
        md_heal_bricks_serve(md_srv.st, c, hdr.xid, hdr.proc,
                             rec->data + off, len - off);
        free(j);
        return;
    case MGMT_PROC_HEAL_PROGRESS:
        md_heal_progress_serve(md_srv.st, c, hdr.xid, rec->data + off,
                               len - off);
        free(j);
        return;
    case MGMT_PROC_BRICK_PROFILE:
        md_prof_serve(md_srv.st, c, hdr.xid, rec->data + off, len - off);
        free(j);
        return;
    case MGMT_PROC_REBAL_TASK:
        md_rebal_serve(md_srv.st, c, hdr.xid, rec->data + off, len - off);
        free(j);
        return;
    case MGMT_PROC_REBAL_STATE:
        md_rebal_state_serve(md_srv.st, c, hdr.xid, rec->data + off,
                             len - off);
        free(j);
        return;
    case MGMT_PROC_PEER_TXN:
        if (md_txn_lock_phase(c, hdr.xid, rec->data + off, len - off)) {
            free(j);
            return;
        }
        /* stage and commit run on the worker */
        __attribute__((fallthrough));
    case MGMT_PROC_PEER_HELLO:
    case MGMT_PROC_PEER_LIST:
    case MGMT_PROC_PEER_VOLS:
    case MGMT_PROC_PEER_SYNC:
    case MGMT_PROC_PEER_MEMBERS:
        j->body_len = len - off;
        j->body = malloc(j->body_len + 1);
        rc = j->body != NULL ? 0 : -ENOMEM;
        if (rc == 0)
            memcpy(j->body, rec->data + off, j->body_len);
        break;
    default:
        free(j);
        (void)vrpc_send_reply(c, hdr.xid, VRPC_PROC_UNAVAIL, NULL, NULL,
                              NULL, 0);
        return;
    }
    if (rc != 0) {
        free(j->body);
        free(j);
        (void)vrpc_send_reply(c, hdr.xid, VRPC_GARBAGE_ARGS, NULL, NULL,
                              NULL, 0);
        return;
    }
    j->conn = vrpc_conn_ref(c);
    pthread_mutex_lock(&md_srv.qlock);
    md_srv.n_calls++;
    if (md_srv.tail != NULL)
        md_srv.tail->next = j;
    else
        md_srv.head = j;
    md_srv.tail = j;
    pthread_cond_signal(&md_srv.qcond);
    pthread_mutex_unlock(&md_srv.qlock);
}


static void
md_on_close(vrpc_conn_t *c, int reason, void *arg)
{
    struct md_conn *mc = arg;

    (void)reason;
    if (mc != NULL) {
        pthread_mutex_lock(&md_srv.conns_mu);
        for (struct md_conn **pp = &md_srv.conns; *pp != NULL;
             pp = &(*pp)->next)
            if (*pp == mc) {
                *pp = mc->next;
                break;
            }
        pthread_mutex_unlock(&md_srv.conns_mu);
        md_auth_conn_clear(&mc->auth);
        free(mc);
    }
    vrpc_conn_unref(c); /* the accept's ref */
}


static const struct vrpc_conn_ops md_conn_ops = {
    .on_record = md_on_record,
    .on_close = md_on_close,
};


static void
md_conn_add(int fd, bool is_unix)
{
    vrpc_conn_t *c;
    struct md_conn *mc = calloc(1, sizeof(*mc));

    if (mc == NULL) {
        close(fd);
        return;
    }
    mc->is_unix = is_unix;
    md_auth_conn_init(&mc->auth);
    if (is_unix) {
        struct ucred cred;
        socklen_t cl = sizeof(cred);

        /* The socket file is 0600, but who connected is what counts
         * (a socket bound before its chmod, a descriptor handed on). */
        mc->is_admin_uid = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred,
                                      &cl) == 0 &&
                           (cred.uid == 0 || cred.uid == geteuid());
    }
    if (vrpc_conn_new(md_srv.loop, fd, false, &md_conn_ops, mc, &c) != 0) {
        md_auth_conn_clear(&mc->auth);
        free(mc);
        return;
    }
    mc->conn = c;
    /* secure-access: TLS only on TCP; a clear caller fails the handshake
     * (logged by conn-tls.c with the cause), never falls back. */
    if (!is_unix && md_secure_server_tls() != NULL) {
        vl_err_t terr = {.msg = ""};

        if (vrpc_conn_set_tls(c, md_secure_server_tls(), NULL, &terr) != 0) {
            vl_glog(MD_DOMAIN, VL_LOG_ERROR, "%s: %s", vrpc_conn_peer(c),
                    terr.msg);
            md_auth_conn_clear(&mc->auth);
            free(mc);
            vrpc_conn_unref(c);
            return;
        }
    }
    /* Bounded input (issue 23): 1 MiB calls, deadlines; TCP connections
     * also count against the port's cap. */
    if (is_unix)
        vrpc_conn_set_limits(c, &vrpc_limits_mgmt);
    else
        vrpc_listener_adopt(md_srv.tcp, c);
    pthread_mutex_lock(&md_srv.conns_mu);
    mc->next = md_srv.conns;
    md_srv.conns = mc;
    pthread_mutex_unlock(&md_srv.conns_mu);
    if (vrpc_conn_start(c) != 0)
        vrpc_conn_close(c, ENOTCONN);
}


static void
md_accept(int fd, const struct sockaddr_storage *peer, void *arg)
{
    (void)peer;
    (void)arg;
    md_conn_add(fd, false);
}


/* Closes every connection still open (on_close unlists and frees it). */
static void
md_close_conns(void)
{
    for (;;) {
        vrpc_conn_t *c = NULL;

        pthread_mutex_lock(&md_srv.conns_mu);
        if (md_srv.conns != NULL)
            c = vrpc_conn_ref(md_srv.conns->conn);
        pthread_mutex_unlock(&md_srv.conns_mu);
        if (c == NULL)
            break;
        vrpc_conn_close(c, ESHUTDOWN); /* returns after on_close ran */
        vrpc_conn_unref(c);
    }
}


static void
md_unix_io(vl_io_t *io, int fd, uint32_t events, void *arg)
{
    (void)events;
    (void)arg;
    for (int i = 0; i < 32; i++) {
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (cfd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            break;
        }
        md_conn_add(cfd, true);
    }
    (void)vl_io_modify(io, EPOLLIN);
}


static int
md_unix_listen(struct md_state *st, vl_err_t *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd, rc;

    if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/mortard.sock",
                         st->run_dir) >= sizeof(sa.sun_path)) {
        vl_err_set(err, "%s/mortard.sock: path too long", st->run_dir);
        return -ENAMETOOLONG;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        vl_err_set(err, "socket: %s", strerror(errno));
        return -errno;
    }
    /* The pid file lock proves no other mortard uses this run dir. */
    (void)unlink(sa.sun_path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        chmod(sa.sun_path, 0600) != 0 || listen(fd, 128) != 0) {
        rc = -errno;
        vl_err_set(err, "%s: %s", sa.sun_path, strerror(-rc));
        close(fd);
        return rc;
    }
    md_srv.unix_fd = fd;
    return vl_io_add(md_srv.loop, fd, EPOLLIN, md_unix_io, NULL,
                     &md_srv.unix_io);
}


int
md_server_start(struct md_state *st, vl_err_t *err)
{
    int rc;

    md_srv.st = st;
    rc = md_auth_init(st->state_dir, st->node_id, err);
    if (rc != 0)
        return rc;
    md_srv.loop = vl_loop_new(2);
    if (md_srv.loop == NULL) {
        vl_err_set(err, "event loop: %s", strerror(errno));
        return -errno;
    }
    rc = vl_loop_start(md_srv.loop);
    if (rc != 0) {
        vl_err_set(err, "event loop: %s", strerror(-rc));
        return rc;
    }
    rc = pthread_create(&md_srv.worker, NULL, md_worker, st);
    if (rc != 0) {
        vl_err_set(err, "worker thread: %s", strerror(rc));
        return -rc;
    }
    md_srv.has_worker = true;
    rc = md_unix_listen(st, err);
    if (rc != 0)
        return rc;
    vrpc_set_buffered_max(VRPC_MGMT_BUFFERED_MAX);
    if (st->mgmt_port != 0) {
        rc = vrpc_listen_limits(md_srv.loop, st->bind_addr, st->mgmt_port,
                                &vrpc_limits_mgmt, md_accept, NULL,
                                &md_srv.tcp, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}


void
md_server_stop(void)
{
    if (md_srv.tcp != NULL)
        vrpc_listener_free(md_srv.tcp);
    md_srv.tcp = NULL;
    if (md_srv.unix_io != NULL)
        vl_io_del(md_srv.unix_io);
    md_srv.unix_io = NULL;
    if (md_srv.unix_fd >= 0) {
        char path[4096];

        snprintf(path, sizeof(path), "%s/mortard.sock", md_srv.st->run_dir);
        (void)unlink(path);
        close(md_srv.unix_fd);
        md_srv.unix_fd = -1;
    }
    /* No new connection can come: close the open ones (their records
     * already queued still run below; the replies go nowhere). */
    md_close_conns();
    if (md_srv.has_worker) {
        pthread_mutex_lock(&md_srv.qlock);
        md_srv.is_stopping = true;
        pthread_cond_signal(&md_srv.qcond);
        pthread_mutex_unlock(&md_srv.qlock);
        pthread_join(md_srv.worker, NULL);
        md_srv.has_worker = false;
    }
    if (md_srv.loop != NULL) {
        vl_loop_stop(md_srv.loop);
        vl_loop_free(md_srv.loop);
        md_srv.loop = NULL;
    }
    pthread_mutex_lock(&md_srv.peers_mu);
    free(md_srv.peer_ids);
    md_srv.peer_ids = NULL;
    pthread_mutex_unlock(&md_srv.peers_mu);
}


void
md_server_dump(FILE *out)
{
    pthread_mutex_lock(&md_srv.qlock);
    fprintf(out, "calls=%llu\nqueued=%s\nwatchers=%zu\n",
            (unsigned long long)md_srv.n_calls,
            md_srv.head != NULL ? "yes" : "no", md_srv.n_watchers);
    pthread_mutex_unlock(&md_srv.qlock);
}
