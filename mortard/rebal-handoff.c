/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebal-handoff: a rebalance stopped (or whose process died) on one node
 * and started again on another resumes where the first one stopped.
 *
 * A task's state file, with its cursor and counters, lives on the node
 * that ran it (rebalance.c). Before a start, this node finds the latest
 * task of the volume in the cluster (REBAL_TASK QUERY of every peer:
 * rebal-peer.c). When that task is a peer's and unfinished (state
 * running without a process, or stopped), the peer's state file is
 * fetched (REBAL_STATE) and written over this node's: the process
 * started next resumes after its cursor, with its counters. When it is a
 * peer's finished task (completed or failed), this node's own unfinished
 * state, older, is dropped: resuming it would skip directories that work
 * after that task may have changed. Whether a state may be resumed at
 * all (same subvolumes, a fix-layout's cursor for a rebalance) is the
 * process's decision (mortarfsd/rebalance/rebalance-state.c), made
 * again there.
 * Every failure (a peer that does not answer, a bad state text) is
 * logged, and the run then starts afresh, which is always safe.
 * Threads: md_rebal_take_over on the worker with md_state.lock held;
 *          md_rebal_state_serve on a loop thread, without it (it reads
 *          one file of the run dir).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mgmt.h"
#include "mortard.h"
#include "vrpc.h"

#define MD_HANDOFF_TIMEOUT_MS 3000


/* The state file of volname's rebalance on this node. */
static void
md_handoff_path(const struct md_state *st, const char *volname, char *buf,
                size_t len)
{
    snprintf(buf, len, "%s/rebalance/%s.state", st->run_dir, volname);
}


void
md_rebal_state_serve(struct md_state *st, struct vrpc_conn *c, uint32_t xid,
                     const char *body, size_t len)
{
    mgmt_rebal_req req;
    mgmt_rebal_state_rsp rsp = {.state = ""};
    char path[4200], *text = NULL;
    size_t n = 0;

    memset(&req, 0, sizeof(req));
    if (vrpc_decode_body(body, len, (xdrproc_t)xdr_mgmt_rebal_req, &req,
                         NULL) != 0) {
        (void)vrpc_send_reply(c, xid, VRPC_GARBAGE_ARGS, NULL, NULL, NULL, 0);
        return;
    }
    /* The name becomes part of a path: only a valid volume name. Only the
     * rebalance's state moves between nodes (a remove-brick start drops
     * every node's migration state). */
    if (md_check_volname(req.volume, NULL) != 0 || req.is_remove != 0 ||
        req.op != MGMT_REBAL_QUERY) {
        rsp.ret = -1;
        rsp.op_errno = EINVAL;
    } else {
        struct md_volume v;

        memset(&v, 0, sizeof(v));
        snprintf(v.name, sizeof(v.name), "%s", req.volume);
        md_handoff_path(st, req.volume, path, sizeof(path));
        if (md_rebal_pid(st, &v, false) != 0) {
            rsp.ret = -1;
            rsp.op_errno = EBUSY; /* its process would write it on */
        } else if (md_read_file(path, &text, &n) != 0) {
            rsp.ret = -1;
            rsp.op_errno = ENOENT;
        } else if (n >= MGMT_REBAL_STATE_MAX || strlen(text) != n) {
            rsp.ret = -1;
            rsp.op_errno = EFBIG;
        } else {
            rsp.state = text;
        }
    }
    (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                          (xdrproc_t)xdr_mgmt_rebal_state_rsp, &rsp, NULL, 0);
    free(text);
    xdr_free((xdrproc_t)xdr_mgmt_rebal_req, (char *)&req);
}


/* When the view's state file was last written (0 unknown): for a task
 * that does not run, its run time ends there. */
static long long
md_handoff_updated(const struct md_rebal_view *w)
{
    return w->started != 0 ? w->started + w->run_seconds : 0;
}


/* A state its process would resume from: stopped, or running when the
 * process is gone. */
static bool
md_handoff_is_unfinished(const struct md_rebal_view *w)
{
    return !w->is_running &&
           (strcmp(w->status, "stopped") == 0 || w->died_running);
}


struct md_handoff_check {
    bool has_status;  /* status=running|stopped seen */
    bool has_cursor;  /* cursor= seen */
};


static int
md_handoff_kv(const char *key, const char *value, int line, void *arg,
              vl_err_t *err)
{
    struct md_handoff_check *chk = arg;

    (void)line;
    if (strcmp(key, "status") == 0) {
        if (strcmp(value, "running") != 0 && strcmp(value, "stopped") != 0) {
            vl_err_set(err, "status %s is not an unfinished run", value);
            return -EINVAL;
        }
        chk->has_status = true;
    } else if (strcmp(key, "cursor") == 0) {
        chk->has_cursor = true;
    }
    return 0;
}


int
md_rebal_state_check(const char *text, vl_err_t *err)
{
    struct md_handoff_check chk = {false, false};
    int rc = md_kv_parse(text, "peer state", md_handoff_kv, &chk, err);

    if (rc == 0 && (!chk.has_status || !chk.has_cursor)) {
        vl_err_set(err, "a state without status or cursor");
        rc = -EINVAL;
    }
    return rc;
}


/* Fetches node's state text of volname and writes it as ours. */
static int
md_handoff_fetch(struct md_state *st, const char *volname, const char *node,
                 vl_err_t *err)
{
    struct md_peer *p = md_peer_find_host(st, node);
    mgmt_rebal_req req = {.volume = (char *)volname, .op = MGMT_REBAL_QUERY};
    mgmt_rebal_state_rsp rsp;
    char dir[4200], name[300];
    int rc;

    if (p == NULL) {
        vl_err_set(err, "%s is not a peer", node);
        return -ENOENT;
    }
    memset(&rsp, 0, sizeof(rsp));
    rc = md_peer_call(p->host, p->port, MGMT_PROC_REBAL_STATE,
                      (xdrproc_t)xdr_mgmt_rebal_req, &req,
                      (xdrproc_t)xdr_mgmt_rebal_state_rsp, &rsp,
                      MD_HANDOFF_TIMEOUT_MS, err);
    if (rc != 0)
        return rc;
    if (rsp.ret != 0) {
        rc = -(rsp.op_errno != 0 ? rsp.op_errno : EIO);
        vl_err_set(err, "node %s: %s", node, strerror(-rc));
        goto out;
    }
    rc = md_rebal_state_check(rsp.state != NULL ? rsp.state : "", err);
    if (rc != 0)
        goto out;
    snprintf(dir, sizeof(dir), "%s/rebalance", st->run_dir);
    (void)mkdir(st->run_dir, 0755);
    (void)mkdir(dir, 0755);
    snprintf(name, sizeof(name), "%s.state", volname);
    rc = md_write_atomic(dir, name, rsp.state, strlen(rsp.state), err);
out:
    xdr_free((xdrproc_t)xdr_mgmt_rebal_state_rsp, (char *)&rsp);
    return rc;
}


void
md_rebal_take_over(struct md_state *st, const struct md_volume *vol)
{
    struct md_rebal_views views = {0};
    const struct md_rebal_view *latest = NULL, *local;
    vl_err_t err = {.msg = ""};

    if (st->peers == NULL)
        return;
    if (md_rebal_gather(st, vol->name, false, &views) != 0)
        return;
    local = &views.v[0];
    for (size_t i = 1; i < views.n; i++) {
        const struct md_rebal_view *w = &views.v[i];

        if (w->err[0] != '\0' || w->status[0] == '\0')
            continue;
        if (latest == NULL ||
            md_handoff_updated(w) > md_handoff_updated(latest))
            latest = w;
    }
    /* Ours is the latest (or the only one): the process decides. */
    if (latest == NULL ||
        (local->status[0] != '\0' &&
         md_handoff_updated(local) >= md_handoff_updated(latest)))
        goto out;
    if (md_handoff_is_unfinished(latest)) {
        if (md_handoff_fetch(st, vol->name, latest->node, &err) == 0) {
            vl_glog(MD_DOMAIN, VL_LOG_INFO, "rebalance of %s: resuming the "
                    "unfinished run of node %s", vol->name, latest->node);
            goto out;
        }
        vl_glog(MD_DOMAIN, VL_LOG_WARNING, "rebalance of %s: the unfinished "
                "run of node %s cannot be resumed here (%s); starting "
                "afresh", vol->name, latest->node, err.msg);
        /* Ours, older still, must not be resumed instead. */
        md_rebal_forget(st, vol, false);
        goto out;
    }
    /* The latest task is a peer's finished one. */
    if (md_handoff_is_unfinished(local)) {
        vl_glog(MD_DOMAIN, VL_LOG_INFO, "rebalance of %s: node %s ran one "
                "after this node's unfinished run: that one is not resumed",
                vol->name, latest->node);
        md_rebal_forget(st, vol, false);
    }
out:
    md_rebal_views_free(&views);
}
