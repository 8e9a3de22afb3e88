/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebal-peer: the rebalance and remove-brick tasks of the whole cluster.
 *
 * A task's process runs on the node that received its start command and
 * keeps its state file there (rebalance.c). So that status, stop, start
 * and commit give the same answer on every node, the node a command
 * comes to asks each connected peer for its view of the task (REBAL_TASK
 * QUERY) and, to stop a process running elsewhere, tells that peer to
 * send it SIGTERM (REBAL_TASK STOP), then asks again until it is gone.
 * REBAL_TASK is answered on the peer's loop thread without md_state.lock
 * (like BRICK_STATUS): it reads only the run dir's rebalance files and
 * signals only a pid that holds the task's pid file, so a peer whose
 * worker waits on this node (a transaction) still answers, and no two
 * nodes wait on each other. A peer the liveness monitor knows as
 * disconnected is not asked, as in transactions.
 * Threads: md_rebal_serve on a loop thread; the rest on the worker with
 * md_state.lock held.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mgmt.h"
#include "mortard.h"
#include "vrpc.h"

/* A query of one peer: short, so that a hung peer delays a status by a
 * few seconds at most. */
#define MD_REBAL_QUERY_TIMEOUT_MS 3000
/* How long a stop waits for the peer's process to exit (as a local stop
 * does), and how often it asks. */
#define MD_REBAL_STOP_PEER_WAIT_MS 60000
#define MD_REBAL_STOP_PEER_POLL_MS 100


static void
md_rebal_view_to_rsp(const struct md_rebal_view *w, mgmt_rebal_rsp *rsp)
{
    rsp->status = (char *)w->status;
    rsp->is_running = w->is_running;
    rsp->died_running = w->died_running;
    rsp->moved_files = w->moved_files;
    rsp->moved_bytes = w->moved_bytes;
    rsp->scanned_files = w->scanned_files;
    rsp->scanned_dirs = w->scanned_dirs;
    rsp->failed_files = w->failed_files;
    rsp->skipped_files = w->skipped_files;
    rsp->eta_seconds = w->eta_seconds;
    rsp->run_seconds = w->run_seconds;
    rsp->started = w->started;
    rsp->error = (char *)w->error;
}


static void
md_rebal_view_from_rsp(const mgmt_rebal_rsp *rsp, struct md_rebal_view *w)
{
    snprintf(w->status, sizeof(w->status), "%s",
             rsp->status != NULL ? rsp->status : "");
    w->is_running = rsp->is_running != 0;
    w->died_running = rsp->died_running != 0;
    w->moved_files = rsp->moved_files;
    w->moved_bytes = rsp->moved_bytes;
    w->scanned_files = rsp->scanned_files;
    w->scanned_dirs = rsp->scanned_dirs;
    w->failed_files = rsp->failed_files;
    w->skipped_files = rsp->skipped_files;
    w->eta_seconds = rsp->eta_seconds;
    w->run_seconds = rsp->run_seconds;
    w->started = rsp->started;
    snprintf(w->error, sizeof(w->error), "%s",
             rsp->error != NULL ? rsp->error : "");
}


void
md_rebal_serve(struct md_state *st, struct vrpc_conn *c, uint32_t xid,
               const char *body, size_t len)
{
    mgmt_rebal_req req;
    mgmt_rebal_rsp rsp;
    struct md_rebal_view w;

    memset(&req, 0, sizeof(req));
    memset(&rsp, 0, sizeof(rsp));
    memset(&w, 0, sizeof(w));
    rsp.status = "";
    rsp.error = "";
    if (vrpc_decode_body(body, len, (xdrproc_t)xdr_mgmt_rebal_req, &req,
                         NULL) != 0) {
        (void)vrpc_send_reply(c, xid, VRPC_GARBAGE_ARGS, NULL, NULL, NULL, 0);
        return;
    }
    /* The name becomes part of a path: only a valid volume name. */
    if (md_check_volname(req.volume, NULL) != 0 ||
        (req.op != MGMT_REBAL_QUERY && req.op != MGMT_REBAL_STOP)) {
        rsp.ret = -1;
        rsp.op_errno = EINVAL;
    } else {
        md_rebal_view_local(st, req.volume, req.is_remove != 0, &w);
        if (req.op == MGMT_REBAL_STOP) {
            struct md_volume v;
            pid_t pid;

            memset(&v, 0, sizeof(v));
            snprintf(v.name, sizeof(v.name), "%s", req.volume);
            pid = md_rebal_pid(st, &v, req.is_remove != 0);
            if (pid == 0) {
                rsp.ret = -1;
                rsp.op_errno = ESRCH;
            } else if (kill(pid, SIGTERM) != 0) {
                rsp.ret = -1;
                rsp.op_errno = errno;
            } else {
                vl_glog(MD_DOMAIN, VL_LOG_INFO, "%s of %s (pid %ld) told to "
                        "stop by a peer", req.is_remove ?
                        "remove-brick migration" : "rebalance", req.volume,
                        (long)pid);
            }
        }
        md_rebal_view_to_rsp(&w, &rsp);
    }
    (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                          (xdrproc_t)xdr_mgmt_rebal_rsp, &rsp, NULL, 0);
    xdr_free((xdrproc_t)xdr_mgmt_rebal_req, (char *)&req);
}


/* One REBAL_TASK call; the peer's answer (ret, op_errno) in *ret_errno.
 * 0, or -errno of the call with err set. */
static int
md_rebal_ask(const struct md_peer *p, const char *volname, bool is_remove,
             int op, struct md_rebal_view *w, int *ret_errno, vl_err_t *err)
{
    mgmt_rebal_req req = {.volume = (char *)volname,
                          .is_remove = is_remove, .op = op};
    mgmt_rebal_rsp rsp;
    int rc;

    memset(&rsp, 0, sizeof(rsp));
    rc = md_peer_call(p->host, p->port, MGMT_PROC_REBAL_TASK,
                      (xdrproc_t)xdr_mgmt_rebal_req, &req,
                      (xdrproc_t)xdr_mgmt_rebal_rsp, &rsp,
                      MD_REBAL_QUERY_TIMEOUT_MS, err);
    if (rc != 0)
        return rc;
    *ret_errno = rsp.ret != 0 ? (rsp.op_errno != 0 ? rsp.op_errno : EIO) : 0;
    if (rsp.ret == 0 || op == MGMT_REBAL_STOP)
        md_rebal_view_from_rsp(&rsp, w);
    xdr_free((xdrproc_t)xdr_mgmt_rebal_rsp, (char *)&rsp);
    return 0;
}


int
md_rebal_gather(struct md_state *st, const char *volname, bool is_remove,
                struct md_rebal_views *out)
{
    size_t n = 1;

    out->v = NULL;
    out->n = 0;
    for (const struct md_peer *p = st->peers; p != NULL; p = p->next)
        n++;
    out->v = calloc(n, sizeof(*out->v));
    if (out->v == NULL)
        return -ENOMEM;
    md_rebal_view_local(st, volname, is_remove, &out->v[0]);
    out->n = 1;
    for (const struct md_peer *p = st->peers; p != NULL; p = p->next) {
        struct md_rebal_view *w = &out->v[out->n++];
        vl_err_t err = {.msg = ""};
        int peer_errno = 0;

        snprintf(w->node, sizeof(w->node), "%s", p->host);
        w->eta_seconds = -1;
        if (!p->is_connected) {
            snprintf(w->err, sizeof(w->err), "%s", MD_REBAL_DISCONNECTED);
            continue;
        }
        if (md_rebal_ask(p, volname, is_remove, MGMT_REBAL_QUERY, w,
                         &peer_errno, &err) != 0)
            snprintf(w->err, sizeof(w->err), "%s", err.msg);
        else if (peer_errno != 0)
            snprintf(w->err, sizeof(w->err), "%s", strerror(peer_errno));
        if (w->err[0] != '\0')
            vl_glog(MD_DOMAIN, VL_LOG_WARNING, "rebalance task of %s on "
                    "%s: %s", volname, p->host, w->err);
    }
    return 0;
}


void
md_rebal_views_free(struct md_rebal_views *views)
{
    free(views->v);
    views->v = NULL;
    views->n = 0;
}


const struct md_rebal_view *
md_rebal_views_pick(const struct md_rebal_views *views)
{
    const struct md_rebal_view *best = NULL;

    for (size_t i = 0; i < views->n; i++)
        if (views->v[i].is_running)
            return &views->v[i];
    /* Older runs on other nodes keep their state files: the latest run
     * is the one that tells. */
    for (size_t i = 0; i < views->n; i++)
        if (views->v[i].status[0] != '\0' &&
            (best == NULL || views->v[i].started > best->started))
            best = &views->v[i];
    return best;
}


int
md_rebal_stop_peer(struct md_state *st, const char *volname, bool is_remove,
                   const char *node, vl_err_t *err)
{
    struct md_peer *p = md_peer_find_host(st, node);
    struct md_rebal_view w;
    int peer_errno = 0, rc;

    if (p == NULL) {
        vl_err_set(err, "%s is not a peer", node);
        return -ENOENT;
    }
    memset(&w, 0, sizeof(w));
    rc = md_rebal_ask(p, volname, is_remove, MGMT_REBAL_STOP, &w,
                      &peer_errno, err);
    if (rc != 0)
        return rc;
    if (peer_errno == ESRCH)
        return 0; /* it ended meanwhile */
    if (peer_errno != 0) {
        vl_err_set(err, "node %s could not stop it: %s", node,
                   strerror(peer_errno));
        return -peer_errno;
    }
    /* It finishes or abandons the file in flight, then exits. */
    for (int ms = 0; ms < MD_REBAL_STOP_PEER_WAIT_MS;
         ms += MD_REBAL_STOP_PEER_POLL_MS) {
        usleep(MD_REBAL_STOP_PEER_POLL_MS * 1000);
        memset(&w, 0, sizeof(w));
        rc = md_rebal_ask(p, volname, is_remove, MGMT_REBAL_QUERY, &w,
                          &peer_errno, err);
        if (rc == 0 && peer_errno == 0 && !w.is_running)
            return 0;
    }
    vl_err_set(err, "the %s process of %s on node %s did not stop within "
               "%d s", is_remove ? "remove-brick" : "rebalance", volname,
               node, MD_REBAL_STOP_PEER_WAIT_MS / 1000);
    return -EBUSY;
}
