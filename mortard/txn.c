/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * txn: cluster-wide transactions for the commands that change the store
 * (volume create/start/stop/delete/set/reset) once a node has peers.
 *
 * The mortard the CLI talked to drives: LOCK on itself and every peer
 * (a node holds one lock at a time; a second transaction is refused with
 * "another transaction is in progress"), STAGE on every node (each
 * validates the command against its own store; the owner of a new brick
 * checks its directory and picks its port), COMMIT on every node (each
 * runs the same command with the originator's decisions: volume id and
 * brick port, so every store ends up the same; each starts or stops only
 * the bricks that live on it), UNLOCK. A peer the liveness monitor knows
 * as disconnected takes no part (as in GlusterFS): it catches up
 * (peer-vols.c: definitions, deletions, membership) when it returns; a
 * new brick may not live on it. A peer believed connected that cannot be
 * reached or refuses at lock or stage stops the transaction before
 * anything changed, and the CLI names it. A peer that dies between stage
 * and commit misses the commit; it catches up when it returns.
 * Locks expire after MD_LOCK_TTL_MS so a dead originator cannot wedge
 * the cluster.
 * The lock lives outside md_state.lock: LOCK/UNLOCK are served on the
 * loop thread, so a node busy with its own command still answers them.
 * Threads: worker (run, stage, commit), loop threads (lock, unlock).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "peer-int.h"
#include "vrpc.h"

#define MD_LOCK_TTL_MS 180000

static struct {
    pthread_mutex_t mu;                /* guards the fields below */
    char owner[VL_GFID_STR_LEN];       /* node that holds the lock */
    char txn_id[VL_GFID_STR_LEN];      /* "" when free */
    uint64_t expiry_ms;                /* the lock is void after this */
} md_tl = {.mu = PTHREAD_MUTEX_INITIALIZER};

static char md_txn_errbuf[1024]; /* worker only: errstr of served calls */


int
md_txn_lock(const char *owner, const char *txn_id, vl_err_t *err)
{
    uint64_t now = vrpc_now_ms();
    int rc = 0;

    pthread_mutex_lock(&md_tl.mu);
    if (md_tl.txn_id[0] != '\0' && now < md_tl.expiry_ms &&
        strcmp(md_tl.txn_id, txn_id) != 0) {
        vl_err_set(err, "another transaction is in progress (locked by "
                   "node %s)", md_tl.owner);
        rc = -EBUSY;
    } else {
        snprintf(md_tl.owner, sizeof(md_tl.owner), "%s", owner);
        snprintf(md_tl.txn_id, sizeof(md_tl.txn_id), "%s", txn_id);
        md_tl.expiry_ms = now + MD_LOCK_TTL_MS;
    }
    pthread_mutex_unlock(&md_tl.mu);
    return rc;
}


void
md_txn_unlock(const char *txn_id)
{
    pthread_mutex_lock(&md_tl.mu);
    if (strcmp(md_tl.txn_id, txn_id) == 0)
        md_tl.txn_id[0] = '\0';
    pthread_mutex_unlock(&md_tl.mu);
}


bool
md_txn_holds(const char *txn_id)
{
    bool is_held;

    pthread_mutex_lock(&md_tl.mu);
    is_held = txn_id[0] != '\0' && strcmp(md_tl.txn_id, txn_id) == 0 &&
              vrpc_now_ms() < md_tl.expiry_ms;
    pthread_mutex_unlock(&md_tl.mu);
    return is_held;
}


bool
md_cmd_is_txn(int argc, char **argv)
{
    static const char *const subs[] = {"create", "start", "stop", "delete",
                                       "set", "reset", "add-brick",
                                       "replace-brick", NULL};

    if (argc < 3 || strcmp(argv[0], "volume") != 0)
        return false;
    if (strcmp(argv[1], "replace-brick") == 0)
        return md_replace_is_cmd(argc, argv);
    if (strcmp(argv[1], "reset-brick") == 0)
        return md_reset_is_cmd(argc, argv);
    /* remove-brick ... status only reads. */
    if (strcmp(argv[1], "remove-brick") == 0)
        return strcmp(argv[argc - 1], "status") != 0;
    if (strcmp(argv[1], "set") == 0 && strcmp(argv[2], "help") == 0)
        return false;
    /* Changes no store, but must reach every node's self-heal daemon. */
    if (strcmp(argv[1], "heal") == 0)
        return md_heal_is_txn(argc, argv);
    for (size_t i = 0; subs[i] != NULL; i++)
        if (strcmp(argv[1], subs[i]) == 0)
            return true;
    return false;
}


/* Checks only the originator makes, before anything is staged: they ask
 * the peers (remove-brick commit: the migration completed wherever it
 * ran) or other nodes' bricks (replace-brick: another brick of the set
 * answers). Fails r. */
static int
md_txn_precheck(struct md_state *st, int argc, char **argv,
                struct md_result *r)
{
    struct md_volume *vol;

    if (strcmp(argv[1], "replace-brick") == 0)
        return md_replace_precheck(st, argc, argv, r);
    if (strcmp(argv[1], "heal") == 0)
        return md_heal_precheck(st, argc, argv, r);
    if (strcmp(argv[1], "add-brick") == 0)
        return md_replica_change_precheck(st, argc, argv, r);
    if (strcmp(argv[1], "reset-brick") == 0)
        return md_reset_precheck(st, argc, argv, r);
    if (strcmp(argv[1], "remove-brick") != 0 ||
        strcmp(argv[argc - 1], "commit") != 0)
        return 0;
    vol = md_volume_find(st, argv[2]);
    return vol != NULL ? md_remove_commit_check(st, vol, r) : 0;
}


/* A replicated create: the sets are whole and, unless force, spread
 * over servers as this node sees them (two names of one node are only
 * known as one there: every node checks). */
static int
md_stage_replica(struct md_state *st, int argc, char **argv, vl_err_t *err)
{
    struct md_brick_args ba;
    char **hosts = NULL, **paths = NULL;
    int rc = md_brick_args_parse(argc, argv, 3, true, &ba, err);

    if (rc != 0 && err->msg[0] == '\0')
        vl_err_set(err, "Usage: volume create <NEW-VOLNAME> [replica "
                   "<COUNT>] [transport tcp] <NEW-BRICK> ... [force]");
    if (rc != 0 || ba.replica < 2)
        return rc;
    if (ba.n_bricks % (int)ba.replica != 0) {
        vl_err_set(err, "number of bricks is not a multiple of replica "
                   "count");
        return -EINVAL;
    }
    hosts = calloc((size_t)ba.n_bricks, sizeof(*hosts));
    paths = calloc((size_t)ba.n_bricks, sizeof(*paths));
    if (hosts == NULL || paths == NULL) {
        vl_err_set(err, "out of memory");
        rc = -ENOMEM;
    }
    for (int i = 0; rc == 0 && i < ba.n_bricks; i++)
        rc = md_parse_brick(argv[ba.first + i], &hosts[i], &paths[i], err);
    if (rc == 0)
        rc = md_check_sets_spread(st, hosts, paths, (size_t)ba.n_bricks,
                                  ba.replica, ba.is_force, err);
    for (int i = 0; hosts != NULL && paths != NULL && i < ba.n_bricks; i++) {
        free(hosts[i]);
        free(paths[i]);
    }
    free(hosts);
    free(paths);
    return rc;
}


static int
md_stage_create(struct md_state *st, int argc, char **argv,
                struct md_sbuf *data, vl_err_t *err)
{
    bool force = strcmp(argv[argc - 1], "force") == 0;
    const char *arg = argv[force ? argc - 2 : argc - 1];
    struct md_brick b = {0};
    int rc;

    rc = md_check_volname(argv[2], err);
    if (rc != 0)
        return rc;
    rc = md_stage_replica(st, argc, argv, err);
    if (rc != 0)
        return rc;
    if (md_volume_find(st, argv[2]) != NULL) {
        vl_err_set(err, "Volume %s already exists", argv[2]);
        return -EEXIST;
    }
    rc = md_parse_brick(arg, &b.host, &b.path, err);
    if (rc != 0)
        return rc;
    if (md_brick_is_local(st, &b)) {
        rc = md_check_brick(st, b.host, b.path, force, err);
        if (rc == 0) {
            uint16_t port = md_port_pick(st, NULL);

            if (port == 0) {
                vl_err_set(err, "no free brick port from %u",
                           st->brick_base_port);
                rc = -EADDRINUSE;
            } else {
                md_sbuf_printf(data, "brick-port=%u\n", port);
            }
        }
    } else if (md_peer_find_host(st, b.host) == NULL) {
        vl_err_set(err, "Host %s is not in 'Peer in Cluster' state",
                   b.host);
        rc = -EHOSTUNREACH;
    } else if (!md_peer_find_host(st, b.host)->is_connected) {
        vl_err_set(err, "Host %s is not connected", b.host);
        rc = -EHOSTUNREACH;
    }
    free(b.host);
    free(b.path);
    return rc;
}


int
md_txn_stage(struct md_state *st, int argc, char **argv,
             struct md_sbuf *data, vl_err_t *err)
{
    const char *sub = argv[1];
    bool force = strcmp(argv[argc - 1], "force") == 0;
    struct md_volume *vol;

    if (strcmp(sub, "create") == 0)
        return argc >= 4 ? md_stage_create(st, argc, argv, data, err)
                         : -EINVAL;
    if (strcmp(sub, "replace-brick") == 0)
        return md_replace_stage(st, argc, argv, err);
    if (strcmp(sub, "reset-brick") == 0)
        return md_reset_stage(st, argc, argv, err);
    if (strcmp(sub, "heal") == 0)
        return 0; /* md_heal_precheck checked it, in GlusterFS's words */
    vol = md_volume_find(st, argv[2]);
    if (vol == NULL) {
        vl_err_set(err, "Volume %s does not exist", argv[2]);
        return -ENOENT;
    }
    if (strcmp(sub, "start") == 0 && vol->status == MD_VOL_STARTED &&
        !force) {
        vl_err_set(err, "Volume %s already started", vol->name);
        return -EALREADY;
    }
    if (strcmp(sub, "stop") == 0 && vol->status != MD_VOL_STARTED &&
        !force) {
        vl_err_set(err, "Volume %s is not in the started state", vol->name);
        return -EALREADY;
    }
    if (strcmp(sub, "delete") == 0 && vol->status == MD_VOL_STARTED) {
        vl_err_set(err, "Volume %s has been started. Volume needs to be "
                   "stopped before deletion.", vol->name);
        return -EBUSY;
    }
    if (strcmp(sub, "add-brick") == 0 ||
        (strcmp(sub, "remove-brick") == 0 &&
         strcmp(argv[argc - 1], "status") != 0 &&
         strcmp(argv[argc - 1], "stop") != 0)) {
        /* Each node checks the task processes it runs itself, so that
         * no node refuses at commit what the others did. A remove-brick
         * commit or force ends the migration itself. */
        bool is_remove_ok = strcmp(sub, "remove-brick") == 0 &&
                            strcmp(argv[argc - 1], "start") != 0;
        const char *busy = md_rebal_busy_here(st, vol, is_remove_ok);

        if (busy != NULL) {
            vl_err_set(err, "Volume %s: %s on node %s", vol->name, busy,
                       md_self_host(st));
            return -EBUSY;
        }
        return md_replica_change_stage(st, argc, argv, err);
    }
    if (strcmp(sub, "set") == 0 && argc == 5) {
        char canon[256];
        int rc = md_option_resolve(argv[3], argv[4], NULL, NULL, canon,
                                   sizeof(canon), err);

        return rc != 0 ? rc
                       : md_client_caches_check(vol, canon, argv[4], err);
    }
    return 0;
}


/* Parses the commit parameters into st->txn. */
static void
md_txn_params_set(struct md_state *st, const char *params)
{
    const char *p;

    memset(&st->txn, 0, sizeof(st->txn));
    st->txn.is_set = true;
    p = strstr(params, "volume-id=");
    if (p != NULL) {
        size_t n = strcspn(p + 10, "\n");

        if (n < sizeof(st->txn.vol_id))
            snprintf(st->txn.vol_id, n + 1, "%s", p + 10);
    }
    p = strstr(params, "brick-port=");
    if (p != NULL) {
        long port = strtol(p + 11, NULL, 10);

        if (port > 0 && port < 65536)
            st->txn.brick_port = (uint16_t)port;
    }
}


/* Commits on this node; r gets the command's result. */
static void
md_txn_commit_local(struct md_state *st, int argc, char **argv,
                    const char *params, struct md_result *r)
{
    md_txn_params_set(st, params);
    md_cmd_run(st, argc, argv, r);
    memset(&st->txn, 0, sizeof(st->txn));
}


void
md_txn_serve(struct md_state *st, const mgmt_txn_req *req,
             mgmt_status_rsp *rsp, struct md_sbuf *data)
{
    int argc = (int)req->argv.argv_len;
    char **argv = req->argv.argv_val;
    vl_err_t err = {.msg = ""};
    int rc;

    md_txn_errbuf[0] = '\0';
    rsp->errstr = md_txn_errbuf;
    if (!md_txn_holds(req->txn_id)) {
        snprintf(md_txn_errbuf, sizeof(md_txn_errbuf), "no lock is held "
                 "for this transaction (expired?)");
        rc = -ENOLCK;
    } else if (!md_cmd_is_txn(argc, argv)) {
        snprintf(md_txn_errbuf, sizeof(md_txn_errbuf), "not a "
                 "transaction command");
        rc = -EINVAL;
    } else if (req->phase == MGMT_TXN_STAGE) {
        rc = md_txn_stage(st, argc, argv, data, &err);
        snprintf(md_txn_errbuf, sizeof(md_txn_errbuf), "%s", err.msg);
        rsp->data = data->data != NULL ? data->data : "";
    } else if (req->phase == MGMT_TXN_COMMIT) {
        struct md_result r;

        md_result_init(&r);
        if (r.root == NULL) {
            rc = -ENOMEM;
        } else {
            md_txn_commit_local(st, argc, argv, req->params, &r);
            rc = r.ret != 0 ? -(r.op_errno != 0 ? r.op_errno : EIO) : 0;
            snprintf(md_txn_errbuf, sizeof(md_txn_errbuf), "%s", r.errstr);
        }
        md_result_clear(&r);
    } else {
        snprintf(md_txn_errbuf, sizeof(md_txn_errbuf), "bad phase %d",
                 req->phase);
        rc = -EINVAL;
    }
    rsp->ret = rc != 0 ? -1 : 0;
    rsp->op_errno = -rc;
}


/* One phase on one peer. 0, or -errno with why (transport or refusal). */
static int
md_txn_call(struct md_peer *p, mgmt_txn_req *req, int timeout_ms,
            char *data, size_t dlen, vl_err_t *why)
{
    mgmt_status_rsp rsp = {0};
    int rc;

    rc = md_peer_call(p->host, p->port, MGMT_PROC_PEER_TXN,
                      (xdrproc_t)xdr_mgmt_txn_req, req,
                      (xdrproc_t)xdr_mgmt_status_rsp, &rsp, timeout_ms,
                      why);
    if (rc == 0 && rsp.ret != 0) {
        vl_err_set(why, "%s", rsp.errstr[0] != '\0' ? rsp.errstr
                                                    : strerror(rsp.op_errno));
        rc = rsp.op_errno != 0 ? -rsp.op_errno : -EIO;
    }
    if (rc == 0 && data != NULL)
        snprintf(data, dlen, "%s", rsp.data);
    xdr_free((xdrproc_t)xdr_mgmt_status_rsp, (char *)&rsp);
    return rc;
}


void
md_txn_run(struct md_state *st, int argc, char **argv, struct md_result *r)
{
    char txn_id[VL_GFID_STR_LEN], vol_id[VL_GFID_STR_LEN];
    char params[256], data[256], port_data[256] = "";
    struct md_sbuf sdata = {0};
    mgmt_txn_req req = {.from = st->node_id, .params = ""};
    struct md_peer *p, *locked_end = NULL;
    vl_err_t err = {.msg = ""};
    vl_gfid_t g;
    int rc;

    vl_gfid_generate(&g);
    vl_gfid_to_str(&g, txn_id);
    req.txn_id = txn_id;
    req.argv.argv_len = (u_int)argc;
    req.argv.argv_val = argv;
    if (md_txn_lock(st->node_id, txn_id, &err) != 0) {
        md_result_fail(r, MD_EXIT_FAIL, EBUSY, "%s %s: failed: %s", argv[0],
                       argv[1], err.msg);
        md_metrics_txn_done(false);
        return;
    }
    req.phase = MGMT_TXN_LOCK;
    for (p = st->peers; p != NULL; p = p->next) {
        if (!p->is_connected)
            continue; /* catches up when it returns (peer-vols.c) */
        rc = md_txn_call(p, &req, MD_PEER_TIMEOUT_MS, NULL, 0, &err);
        if (rc != 0) {
            md_result_fail(r, MD_EXIT_FAIL, -rc, "%s %s: failed: Locking "
                           "failed on %s: %s", argv[0], argv[1], p->host,
                           err.msg);
            locked_end = p;
            goto unlock;
        }
    }
    rc = md_txn_stage(st, argc, argv, &sdata, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "%s %s: %s: failed: %s",
                       argv[0], argv[1], argv[2], err.msg);
        goto unlock;
    }
    if (md_txn_precheck(st, argc, argv, r) != 0)
        goto unlock;
    if (sdata.data != NULL)
        snprintf(port_data, sizeof(port_data), "%s", sdata.data);
    req.phase = MGMT_TXN_STAGE;
    for (p = st->peers; p != NULL; p = p->next) {
        if (!p->is_connected)
            continue; /* catches up when it returns (peer-vols.c) */
        rc = md_txn_call(p, &req, MD_PEER_TIMEOUT_MS, data, sizeof(data),
                         &err);
        if (rc != 0) {
            md_result_fail(r, MD_EXIT_FAIL, -rc, "%s %s: %s: failed: "
                           "Staging failed on %s: %s", argv[0], argv[1],
                           argv[2], p->host, err.msg);
            goto unlock;
        }
        if (strstr(data, "brick-port=") != NULL)
            snprintf(port_data, sizeof(port_data), "%s", data);
    }
    vl_gfid_generate(&g);
    vl_gfid_to_str(&g, vol_id);
    snprintf(params, sizeof(params), "volume-id=%s\n%s", vol_id, port_data);
    req.params = params;
    md_txn_commit_local(st, argc, argv, params, r);
    req.phase = MGMT_TXN_COMMIT;
    for (p = st->peers; p != NULL; p = p->next) {
        if (!p->is_connected)
            continue; /* catches up when it returns (peer-vols.c) */
        rc = md_txn_call(p, &req, MD_COMMIT_TIMEOUT_MS, NULL, 0, &err);
        if (rc != 0) {
            vl_glog(MD_DOMAIN, VL_LOG_ERROR, "commit of '%s %s %s' failed "
                    "on %s: %s", argv[0], argv[1], argv[2], p->host,
                    err.msg);
            if (r->ret == 0)
                md_result_fail(r, MD_EXIT_FAIL, -rc, "%s %s: %s: failed: "
                               "Commit failed on %s: %s", argv[0], argv[1],
                               argv[2], p->host, err.msg);
        }
    }

unlock:
    req.phase = MGMT_TXN_UNLOCK;
    for (p = st->peers; p != NULL && p != locked_end; p = p->next)
        if (p->is_connected)
            (void)md_txn_call(p, &req, MD_PEER_TIMEOUT_MS, NULL, 0, &err);
    md_txn_unlock(txn_id);
    md_sbuf_clear(&sdata);
    md_metrics_txn_done(r->ret == 0);
}
