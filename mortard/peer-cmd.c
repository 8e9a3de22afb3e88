/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * peer-cmd: the peer commands (peer probe/detach/status, pool list) and
 * the server side of the peer procedures (HELLO, PEER_LIST, PEER_MEMBERS,
 * PEER_VOLS, PEER_SYNC, the stage/commit phases of PEER_TXN) and
 * BRICK_STATUS.
 * Threads: the worker thread with md_state.lock held, except
 * md_peer_serve_fast (BRICK_STATUS), which runs on a loop thread without
 * it and reads only the daemon's fixed configuration (run dir, bind
 * address) and the brick pid files.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "peer-int.h"
#include "vrpc.h"


/* Sends the whole membership (this node and its peers) with its
 * generation to every peer (and extra); a failure is logged: a peer that
 * missed it catches up (PEER_SYNC carries the membership) when the
 * monitor sees it again. */
static void
md_peers_broadcast(struct md_state *st, const struct md_peer *extra)
{
    mgmt_members_req req = {.from = st->node_id};

    if (md_members_fill(st, &req.m) != 0) {
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "peer list: out of memory");
        xdr_free((xdrproc_t)xdr_mgmt_members, (char *)&req.m);
        return;
    }
    for (struct md_peer *p = st->peers; ; p = p->next) {
        const struct md_peer *to = p != NULL ? p : extra;
        mgmt_status_rsp rsp = {0};
        vl_err_t err = {.msg = ""};

        if (to == NULL)
            break;
        if (md_peer_call(to->host, to->port, MGMT_PROC_PEER_MEMBERS,
                         (xdrproc_t)xdr_mgmt_members_req, &req,
                         (xdrproc_t)xdr_mgmt_status_rsp, &rsp,
                         MD_PEER_TIMEOUT_MS, &err) != 0)
            vl_glog(MD_DOMAIN, VL_LOG_WARNING, "peer list to %s: %s",
                    to->host, err.msg);
        xdr_free((xdrproc_t)xdr_mgmt_status_rsp, (char *)&rsp);
        if (p == NULL)
            break;
    }
    xdr_free((xdrproc_t)xdr_mgmt_members, (char *)&req.m);
}


/* Splits HOST[:PORT] (an IPv6 address goes in brackets). */
static int
md_parse_hostport(const char *arg, char *host, size_t len, uint16_t *port)
{
    const char *colon = strrchr(arg, ':');
    const char *h = arg, *end = NULL;
    size_t hl;

    *port = MD_DEFAULT_MGMT_PORT;
    if (arg[0] == '[') {
        end = strchr(arg, ']');
        if (end == NULL)
            return -EINVAL;
        h = arg + 1;
        hl = (size_t)(end - h);
        colon = end[1] == ':' ? end + 1 : NULL;
    } else if (colon != NULL && strchr(arg, ':') != colon) {
        colon = NULL; /* a bare IPv6 address */
        hl = strlen(arg);
    } else {
        hl = colon != NULL ? (size_t)(colon - arg) : strlen(arg);
    }
    if (hl == 0 || hl >= len || hl >= MGMT_HOST_MAX)
        return -EINVAL;
    memcpy(host, h, hl);
    host[hl] = '\0';
    if (colon != NULL) {
        char *e;
        long p = strtol(colon + 1, &e, 10);

        if (*e != '\0' || p < 1 || p > 65535)
            return -EINVAL;
        *port = (uint16_t)p;
    }
    return 0;
}


static void
md_cmd_probe(struct md_state *st, const char *arg, struct md_result *r)
{
    mgmt_hello_req req = {.is_probe = 1};
    mgmt_hello_rsp rsp = {0};
    vl_err_t err = {.msg = ""};
    char host[MGMT_HOST_MAX];
    uint16_t port;
    struct md_peer *p;
    int rc;

    if (md_parse_hostport(arg, host, sizeof(host), &port) != 0) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "peer probe: failed: bad "
                       "address '%s' (HOST or HOST:PORT)", arg);
        return;
    }
    /* "This is me" by address, as GlusterFS decides it: the listen
     * address or any address of this host (loopback included), whatever
     * the port; a mortard elsewhere on this host is not a peer. */
    if (strcmp(host, md_self_host(st)) == 0 || md_host_is_local(host)) {
        md_sbuf_printf(&r->text, "peer probe: success. Probe on localhost "
                       "not needed\n");
        return;
    }
    if ((p = md_peer_find_host(st, host)) != NULL) {
        md_sbuf_printf(&r->text, "peer probe: success. Host %s port %u "
                       "already in peer list\n", host, p->port);
        return;
    }
    req.self.uuid = st->node_id;
    req.self.host = (char *)md_self_host(st);
    req.self.port = st->mgmt_port;
    req.to_host = host;
    rc = md_peer_call(host, port, MGMT_PROC_PEER_HELLO,
                      (xdrproc_t)xdr_mgmt_hello_req, &req,
                      (xdrproc_t)xdr_mgmt_hello_rsp, &rsp,
                      MD_PEER_TIMEOUT_MS, &err);
    if (rc == -EACCES) {
        /* Nothing secret crossed: the administrator copies the file. */
        md_result_fail(r, MD_EXIT_FAIL, EACCES, "peer probe: failed: %s "
                       "does not share this pool's secret: copy %s/%s from "
                       "a pool member to %s (its state dir, mode 0600) and "
                       "probe again", host, st->state_dir,
                       MD_AUTH_SECRET_FILE, host);
        return;
    }
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, EHOSTUNREACH, "peer probe: failed: "
                       "Probe returned with %s", err.msg);
        return;
    }
    if (rsp.ret != 0) {
        md_result_fail(r, MD_EXIT_FAIL, rsp.op_errno, "peer probe: failed: "
                       "%s: %s", host, rsp.errstr);
        goto out;
    }
    if (strcmp(rsp.self.uuid, st->node_id) == 0) {
        md_sbuf_printf(&r->text, "peer probe: success. Probe on localhost "
                       "not needed\n");
        goto out;
    }
    if (md_peer_find_uuid(st, rsp.self.uuid) != NULL) {
        md_sbuf_printf(&r->text, "peer probe: success. Host %s port %u "
                       "already in peer list\n", host, port);
        goto out;
    }
    p = md_peer_add(st, rsp.self.uuid, host, port);
    md_members_gen_set(md_members_gen_get() + 1);
    if (p == NULL || md_peers_save(st, &err) != 0) {
        md_members_gen_set(md_members_gen_get() - 1);
        if (p != NULL)
            md_peer_remove(st, p);
        md_result_fail(r, MD_EXIT_FAIL, EIO, "peer probe: failed: %s",
                       p != NULL ? err.msg : "out of memory");
        goto out;
    }
    p->is_connected = true;
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "peer %s (%s) added", host, p->uuid);
    md_peers_broadcast(st, NULL);
    if (md_vols_exchange(st, host, port, true, &err) != 0)
        vl_glog(MD_DOMAIN, VL_LOG_WARNING, "sending volumes to %s: %s", host,
                err.msg);
    md_sbuf_printf(&r->text, "peer probe: success\n");
    md_node_add(r->root, "peerProbe", NULL);
    md_node_add(r->root->last, "hostname", host);
    md_node_add(r->root->last, "uuid", p->uuid);

out:
    xdr_free((xdrproc_t)xdr_mgmt_hello_rsp, (char *)&rsp);
}


static void
md_cmd_detach(struct md_state *st, const char *arg, bool force,
              struct md_result *r)
{
    mgmt_peer_list_req req = {.from = st->node_id};
    mgmt_status_rsp rsp = {0};
    vl_err_t err = {.msg = ""};
    char host[MGMT_HOST_MAX];
    uint16_t port;
    struct md_peer *p;
    int rc;

    if (md_parse_hostport(arg, host, sizeof(host), &port) != 0 ||
        (p = md_peer_find_host(st, host)) == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, "peer detach: failed: %s is "
                       "not part of cluster", arg);
        return;
    }
    for (struct md_volume *v = st->vols; v != NULL; v = v->next)
        for (size_t i = 0; i < v->n_bricks; i++)
            if (strcmp(v->bricks[i].host, p->host) == 0) {
                md_result_fail(r, MD_EXIT_FAIL, EBUSY, "peer detach: failed: "
                               "Brick(s) with the peer %s exist in cluster "
                               "(volume %s)", host, v->name);
                return;
            }
    /* An empty membership tells it to forget the cluster. */
    rc = md_peer_call(p->host, p->port, MGMT_PROC_PEER_LIST,
                      (xdrproc_t)xdr_mgmt_peer_list_req, &req,
                      (xdrproc_t)xdr_mgmt_status_rsp, &rsp,
                      MD_PEER_TIMEOUT_MS, &err);
    if (rc == 0 && rsp.ret != 0)
        vl_err_set(&err, "%s", rsp.errstr);
    xdr_free((xdrproc_t)xdr_mgmt_status_rsp, (char *)&rsp);
    if ((rc != 0 || rsp.ret != 0) && !force) {
        md_result_fail(r, MD_EXIT_FAIL, EHOSTUNREACH, "peer detach: failed: "
                       "%s: %s (use 'force' to detach it anyway)", host,
                       err.msg);
        return;
    }
    md_peer_remove(st, p);
    md_members_gen_set(md_members_gen_get() + 1);
    if (md_peers_save(st, &err) != 0) {
        md_result_fail(r, MD_EXIT_FAIL, EIO, "peer detach: failed: %s",
                       err.msg);
        return;
    }
    md_peers_broadcast(st, NULL);
    md_sbuf_printf(&r->text, "peer detach: success\n");
    md_node_add(r->root, "peerDetach", NULL);
}


static void
md_cmd_status_peers(struct md_state *st, bool is_pool, struct md_result *r)
{
    struct md_node *ps = md_node_add(r->root, "peerStatus", NULL);
    size_t n = 0;

    for (struct md_peer *p = st->peers; p != NULL; p = p->next)
        n++;
    if (is_pool)
        md_sbuf_printf(&r->text, "UUID\t\t\t\t\tHostname \tState\n");
    else
        md_sbuf_printf(&r->text, "Number of Peers: %zu\n", n);
    for (struct md_peer *p = st->peers; p != NULL; p = p->next) {
        struct md_node *pn = md_node_add(ps, "peer", NULL);

        if (is_pool)
            md_sbuf_printf(&r->text, "%s\t%s\t%s \n", p->uuid, p->host,
                           p->is_connected ? "Connected" : "Disconnected");
        else
            md_sbuf_printf(&r->text, "\nHostname: %s\nUuid: %s\nState: "
                           "Peer in Cluster (%s)\n", p->host, p->uuid,
                           p->is_connected ? "Connected" : "Disconnected");
        md_node_add(pn, "uuid", p->uuid);
        md_node_add(pn, "hostname", p->host);
        md_node_addf(pn, "port", "%u", p->port);
        md_node_add(pn, "connected", p->is_connected ? "1" : "0");
    }
    if (is_pool) {
        struct md_node *pn = md_node_add(ps, "peer", NULL);

        md_sbuf_printf(&r->text, "%s\tlocalhost\tConnected \n",
                       st->node_id);
        md_node_add(pn, "uuid", st->node_id);
        md_node_add(pn, "hostname", "localhost");
        md_node_add(pn, "connected", "1");
    }
}


void
md_cmd_peer(struct md_state *st, int argc, char **argv, struct md_result *r)
{
    if (strcmp(argv[0], "pool") == 0 && argc == 2 &&
        strcmp(argv[1], "list") == 0) {
        md_cmd_status_peers(st, true, r);
        return;
    }
    if (strcmp(argv[0], "peer") == 0 && argc == 2 &&
        strcmp(argv[1], "status") == 0) {
        md_cmd_status_peers(st, false, r);
        return;
    }
    if (strcmp(argv[0], "peer") == 0 && argc == 3 &&
        strcmp(argv[1], "probe") == 0) {
        md_cmd_probe(st, argv[2], r);
        return;
    }
    if (strcmp(argv[0], "peer") == 0 && (argc == 3 || argc == 4) &&
        strcmp(argv[1], "detach") == 0 &&
        (argc == 3 || strcmp(argv[3], "force") == 0)) {
        md_cmd_detach(st, argv[2], argc == 4, r);
        return;
    }
    md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: peer status | pool "
                   "list | peer probe <HOST[:PORT]> | peer detach <HOST> "
                   "[force]");
}


/* ---- served procedures ------------------------------------------------ */

static void
md_serve_hello(struct md_state *st, const mgmt_hello_req *req,
               mgmt_hello_rsp *rsp)
{
    struct md_peer *p = md_peer_find_uuid(st, req->self.uuid);
    vl_err_t err = {.msg = ""};
    vl_gfid_t g;

    rsp->self.uuid = st->node_id;
    rsp->self.host = req->to_host;
    rsp->self.port = st->mgmt_port;
    rsp->store_version = st->store_version;
    if (vl_gfid_parse(req->self.uuid, &g) != 0 || req->self.port == 0 ||
        req->self.port > 65535 || req->self.host[0] == '\0') {
        rsp->ret = -1;
        rsp->op_errno = EINVAL;
        rsp->errstr = "bad hello";
        return;
    }
    if (!req->is_probe || p != NULL ||
        strcmp(req->self.uuid, st->node_id) == 0) {
        if (p == NULL && strcmp(req->self.uuid, st->node_id) != 0) {
            rsp->ret = -1;
            rsp->op_errno = ENOENT;
            rsp->errstr = "not a peer of this node";
        }
        return;
    }
    if (st->peers != NULL) {
        rsp->ret = -1;
        rsp->op_errno = EBUSY;
        rsp->errstr = "is already part of another cluster";
        return;
    }
    if (st->vols != NULL) {
        rsp->ret = -1;
        rsp->op_errno = EEXIST;
        rsp->errstr = "has volumes of its own; only a node without volumes "
                      "can join a cluster";
        return;
    }
    p = md_peer_add(st, req->self.uuid, req->self.host,
                    (uint16_t)req->self.port);
    if (p == NULL || md_peers_save(st, &err) != 0) {
        if (p != NULL)
            md_peer_remove(st, p);
        rsp->ret = -1;
        rsp->op_errno = EIO;
        rsp->errstr = "storing the peer failed";
        return;
    }
    p->is_connected = true;
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "probed by %s (%s): now a peer",
            p->host, p->uuid);
}


static void
md_serve_list(struct md_state *st, const mgmt_peer_list_req *req,
              mgmt_status_rsp *rsp)
{
    struct md_peer *old = st->peers;
    vl_err_t err = {.msg = ""};

    if (md_peer_find_uuid(st, req->from) == NULL) {
        rsp->ret = -1;
        rsp->op_errno = EPERM;
        rsp->errstr = "the sender is not a peer of this node";
        return;
    }
    st->peers = NULL;
    if (req->members.members_len == 0)
        md_members_gen_set(0); /* detached: a new cluster starts over */
    for (u_int i = 0; i < req->members.members_len; i++) {
        const mgmt_peer_info *m = &req->members.members_val[i];
        struct md_peer *was = NULL;
        vl_gfid_t g;

        if (strcmp(m->uuid, st->node_id) == 0 ||
            vl_gfid_parse(m->uuid, &g) != 0 || m->port == 0 ||
            m->port > 65535 || m->host[0] == '\0')
            continue;
        for (struct md_peer *o = old; o != NULL; o = o->next)
            if (strcmp(o->uuid, m->uuid) == 0)
                was = o;
        struct md_peer *p = md_peer_add(st, m->uuid, m->host,
                                        (uint16_t)m->port);
        if (p != NULL && was != NULL)
            p->is_connected = was->is_connected;
    }
    if (md_peers_save(st, &err) != 0) {
        md_peers_free(st);
        st->peers = old;
        rsp->ret = -1;
        rsp->op_errno = EIO;
        rsp->errstr = "storing the peers failed";
        return;
    }
    while (old != NULL) {
        struct md_peer *n = old->next;

        free(old->host);
        free(old);
        old = n;
    }
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "membership from %s: %u member(s)",
            req->from, req->members.members_len);
}


void
md_peer_serve(struct md_state *st, struct vrpc_conn *c, uint32_t xid,
              uint32_t proc, const char *body, size_t len)
{
    union {
        mgmt_hello_req hello;
        mgmt_peer_list_req list;
        mgmt_vols_msg vols;
        mgmt_txn_req txn;
        mgmt_members_req members;
        mgmt_sync_msg sync;
    } a;
    xdrproc_t afn;

    memset(&a, 0, sizeof(a));
    switch (proc) {
    case MGMT_PROC_PEER_HELLO:
        afn = (xdrproc_t)xdr_mgmt_hello_req;
        break;
    case MGMT_PROC_PEER_LIST:
        afn = (xdrproc_t)xdr_mgmt_peer_list_req;
        break;
    case MGMT_PROC_PEER_VOLS:
        afn = (xdrproc_t)xdr_mgmt_vols_msg;
        break;
    case MGMT_PROC_PEER_TXN:
        afn = (xdrproc_t)xdr_mgmt_txn_req;
        break;
    case MGMT_PROC_PEER_MEMBERS:
        afn = (xdrproc_t)xdr_mgmt_members_req;
        break;
    case MGMT_PROC_PEER_SYNC:
        afn = (xdrproc_t)xdr_mgmt_sync_msg;
        break;
    default:
        (void)vrpc_send_reply(c, xid, VRPC_PROC_UNAVAIL, NULL, NULL, NULL, 0);
        return;
    }
    if (vrpc_decode_body(body, len, afn, &a, NULL) != 0) {
        (void)vrpc_send_reply(c, xid, VRPC_GARBAGE_ARGS, NULL, NULL, NULL, 0);
        return;
    }
    if (proc == MGMT_PROC_PEER_HELLO) {
        mgmt_hello_rsp rsp = {.errstr = ""};

        md_serve_hello(st, &a.hello, &rsp);
        (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                              (xdrproc_t)xdr_mgmt_hello_rsp, &rsp, NULL, 0);
    } else if (proc == MGMT_PROC_PEER_LIST) {
        mgmt_status_rsp rsp = {.errstr = "", .data = ""};

        md_serve_list(st, &a.list, &rsp);
        (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                              (xdrproc_t)xdr_mgmt_status_rsp, &rsp, NULL, 0);
    } else if (proc == MGMT_PROC_PEER_MEMBERS) {
        mgmt_status_rsp rsp = {.errstr = "", .data = ""};

        if (md_peer_find_uuid(st, a.members.from) == NULL) {
            rsp.ret = -1;
            rsp.op_errno = EPERM;
            rsp.errstr = "the sender is not a peer of this node";
        } else if (md_members_adopt(st, a.members.from, &a.members.m) != 0) {
            rsp.ret = -1;
            rsp.op_errno = EIO;
            rsp.errstr = "storing the peers failed";
        }
        (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                              (xdrproc_t)xdr_mgmt_status_rsp, &rsp, NULL, 0);
    } else if (proc == MGMT_PROC_PEER_SYNC) {
        mgmt_sync_msg rsp;

        memset(&rsp, 0, sizeof(rsp));
        if (md_peer_find_uuid(st, a.sync.from) == NULL) {
            rsp.ret = -1;
            rsp.op_errno = EPERM;
        } else {
            md_sync_apply(st, &a.sync);
            if (md_sync_msg_fill(st, &rsp) != 0) {
                xdr_free((xdrproc_t)xdr_mgmt_sync_msg, (char *)&rsp);
                memset(&rsp, 0, sizeof(rsp));
                rsp.ret = -1;
                rsp.op_errno = ENOMEM;
            }
        }
        if (rsp.from == NULL)
            rsp.from = st->node_id; /* borrowed: not freed below */
        (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                              (xdrproc_t)xdr_mgmt_sync_msg, &rsp, NULL, 0);
        if (rsp.from == st->node_id)
            rsp.from = NULL;
        xdr_free((xdrproc_t)xdr_mgmt_sync_msg, (char *)&rsp);
    } else if (proc == MGMT_PROC_PEER_VOLS) {
        mgmt_vols_msg rsp = {.from = ""};

        if (md_peer_find_uuid(st, a.vols.from) == NULL) {
            rsp.ret = -1;
            rsp.op_errno = EPERM;
        } else {
            md_vols_install(st, &a.vols);
            if (md_vols_msg_fill(st, &rsp) != 0) {
                rsp.ret = -1;
                rsp.op_errno = ENOMEM;
                rsp.from = st->node_id;
            }
        }
        (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                              (xdrproc_t)xdr_mgmt_vols_msg, &rsp, NULL, 0);
        md_vols_msg_clear(&rsp);
    } else {
        mgmt_status_rsp rsp = {.errstr = "", .data = ""};
        struct md_sbuf data = {0};

        md_txn_serve(st, &a.txn, &rsp, &data);
        (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                              (xdrproc_t)xdr_mgmt_status_rsp, &rsp, NULL, 0);
        md_sbuf_clear(&data);
    }
    xdr_free(afn, (char *)&a);
}


bool
md_brick_id_ok(const char *id)
{
    /* "brick" and at most ten digits (a uint32_t). */
    if (strncmp(id, "brick", 5) != 0 || id[5] == '\0' || strlen(id) >= 16)
        return false;
    for (const char *p = id + 5; *p != '\0'; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}


bool
md_peer_serve_fast(struct md_state *st, struct vrpc_conn *c, uint32_t xid,
                   uint32_t proc, const char *body, size_t len)
{
    mgmt_brick_status_req req;
    mgmt_brick_status_rsp rsp;
    struct md_volume v;

    if (proc != MGMT_PROC_BRICK_STATUS)
        return false;
    memset(&req, 0, sizeof(req));
    memset(&rsp, 0, sizeof(rsp));
    if (vrpc_decode_body(body, len, (xdrproc_t)xdr_mgmt_brick_status_req,
                         &req, NULL) != 0) {
        (void)vrpc_send_reply(c, xid, VRPC_GARBAGE_ARGS, NULL, NULL, NULL, 0);
        return true;
    }
    memset(&v, 0, sizeof(v));
    rsp.bricks.bricks_val = calloc(req.bricks.bricks_len + 1,
                                   sizeof(*rsp.bricks.bricks_val));
    if (rsp.bricks.bricks_val == NULL) {
        rsp.ret = -1;
        rsp.op_errno = ENOMEM;
    } else if (md_check_volname(req.volume, NULL) != 0) {
        rsp.ret = -1;
        rsp.op_errno = EINVAL;
    } else {
        snprintf(v.name, sizeof(v.name), "%s", req.volume);
    }
    for (u_int i = 0; rsp.ret == 0 && i < req.bricks.bricks_len; i++) {
        const mgmt_brick_ref *ref = &req.bricks.bricks_val[i];
        mgmt_brick_state *bs = &rsp.bricks.bricks_val[i];
        struct md_brick b = {.host = (char *)"", .port = (uint16_t)ref->port};
        pid_t pid = 0;

        bs->id = ref->id;
        bs->port = ref->port;
        if (md_brick_id_ok(ref->id) && ref->port > 0 && ref->port < 65536 &&
            strlen(ref->id) < sizeof(b.id)) {
            snprintf(b.id, sizeof(b.id), "%s", ref->id);
            pid = md_brick_pid(st, &v, &b);
        }
        bs->pid = pid != 0 ? (int64_t)pid : -1;
        bs->online = pid != 0 && md_brick_port_answers(st, &b);
        rsp.bricks.bricks_len++;
    }
    (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                          (xdrproc_t)xdr_mgmt_brick_status_rsp, &rsp, NULL,
                          0);
    free(rsp.bricks.bricks_val);
    xdr_free((xdrproc_t)xdr_mgmt_brick_status_req, (char *)&req);
    return true;
}
