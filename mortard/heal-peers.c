/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-peers: the `volume heal VOL ...` views of other nodes' bricks and
 * daemons. The node running the command asks each brick's node:
 *   HEAL_INFO      its heal index (info, info summary, statistics
 *                  heal-count; status by bare GFIDs), as cmd-heal.c
 *                  lists its own;
 *   HEAL_SPLIT     what its self-heal daemon listed in split-brain (info
 *                  split-brain; by bare GFIDs for source-brick without
 *                  a file), as cmd-split-brain.c reads its own;
 *   HEAL_PROGRESS  its self-heal daemon's progress file (status,
 *                  heal-nodes.c sums them);
 *   HEAL_WAITING   what its self-heal daemon listed as waiting for a
 *                  copy, by bare GFIDs (status counts them once per
 *                  replica set, as the split-brains).
 * The callee answers on its loop thread without md_state.lock (as
 * BRICK_STATUS does), so two nodes asking each other at once cannot
 * wait on each other's command worker; it reads only directories
 * stamped with the volume id the caller names
 * (trusted.mortar.volume-id), so a peer cannot have it list an
 * arbitrary directory, and only the files of its own run directory
 * named after a valid volume name. A node that does not answer within
 * MD_HEAL_PEER_TIMEOUT_MS is shown "Transport endpoint is not
 * connected", as GlusterFS prints a brick it cannot reach (the reason
 * goes to the log), and is asked once per command. The nodes are asked
 * at the same time (md_heal_calls_run: a thread per node, joined before
 * the worker goes on), so the nodes that are cut off cost a command
 * MD_HEAL_PEER_TIMEOUT_MS together, not that much each in turn.
 * Threads: the worker (asking, lock held) and its short-lived callers
 * (md_peer_call only, on what the worker prepared: no lock, no
 * md_state); a loop thread (answering).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "mgmt.h"
#include "mortard.h"
#include "vrpc.h"

#define MD_HEAL_PEER_TIMEOUT_MS 5000
#define MD_HEAL_NOT_CONNECTED "Transport endpoint is not connected"


void
md_heal_peers_clear(struct md_heal_peers *hp)
{
    for (size_t i = 0; i < hp->n_down; i++) {
        free(hp->down[i]);
        free(hp->why[i]);
    }
    free(hp->down);
    free(hp->why);
    memset(hp, 0, sizeof(*hp));
}


static const char *
md_heal_peer_down(const struct md_heal_peers *hp, const char *host)
{
    for (size_t i = 0; i < hp->n_down; i++)
        if (strcmp(hp->down[i], host) == 0)
            return hp->why[i];
    return NULL;
}


static void
md_heal_peer_mark_down(struct md_heal_peers *hp, const char *host,
                       const char *why)
{
    char **d = realloc(hp->down, (hp->n_down + 1) * sizeof(*d));
    char **w;

    if (d == NULL)
        return;
    hp->down = d;
    w = realloc(hp->why, (hp->n_down + 1) * sizeof(*w));
    if (w == NULL)
        return;
    hp->why = w;
    hp->down[hp->n_down] = strdup(host);
    hp->why[hp->n_down] = strdup(why);
    if (hp->down[hp->n_down] == NULL || hp->why[hp->n_down] == NULL) {
        free(hp->down[hp->n_down]);
        free(hp->why[hp->n_down]);
        return;
    }
    hp->n_down++;
}


/* Why host's mortard is not to be asked in this command (NULL: ask it,
 * *out is its peer): a call to it already failed, it is no peer, or the
 * peer monitor sees it disconnected (a call would only wait out
 * MD_HEAL_PEER_TIMEOUT_MS, once per node that is down). */
static const char *
md_heal_peer_skip(struct md_state *st, struct md_heal_peers *hp,
                  const char *host, struct md_peer **out)
{
    const char *why = md_heal_peer_down(hp, host);

    *out = md_peer_find_host(st, host);
    if (why != NULL)
        return why;
    if (*out == NULL)
        return "Not gathered: not a peer of this node";
    if (!(*out)->is_connected) {
        md_heal_peer_mark_down(hp, host, MD_HEAL_NOT_CONNECTED);
        return MD_HEAL_NOT_CONNECTED;
    }
    return NULL;
}


int
md_heal_names_take(struct md_heal_brick *hb, const char *buf, size_t len)
{
    size_t n = 0;

    for (size_t i = 0; i < len; i++)
        n += buf[i] == '\0';
    if (n == 0)
        return 0;
    hb->names = calloc(n, sizeof(*hb->names));
    if (hb->names == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < len && hb->n_names < n;) {
        size_t l = strnlen(buf + i, len - i);

        if (i + l >= len)
            break; /* unterminated tail */
        hb->names[hb->n_names] = strdup(buf + i);
        if (hb->names[hb->n_names] == NULL)
            return -ENOMEM;
        hb->n_names++;
        i += l + 1;
    }
    return 0;
}


/* A call to host's mortard failed with rc (why): what its bricks show,
 * into out. A node that did not answer is shown as not connected and
 * not asked again in this command; one that answered and refused (an
 * older mortard without the procedure: -EPROTO; -EPERM) is asked again
 * for the others, which it may know. */
static void
md_heal_peer_failed(struct md_heal_peers *hp, const struct md_volume *vol,
                    const char *host, int rc, const char *why, char *out,
                    size_t len)
{
    vl_glog(MD_DOMAIN, VL_LOG_WARNING, "heal of %s: node %s not asked: %s",
            vol->name, host, why);
    if (rc == -EPROTO || rc == -EPERM) {
        /* Cut to out's length: the whole reason is in the log. */
        if (snprintf(out, len, "Not gathered: %s", why) < 0)
            out[0] = '\0';
        return;
    }
    snprintf(out, len, "%s", MD_HEAL_NOT_CONNECTED);
    md_heal_peer_mark_down(hp, host, MD_HEAL_NOT_CONNECTED);
}


/* One call of a batch (md_heal_calls_run). The worker fills the
 * request before the batch and reads the answer after it; in between
 * only the batch's thread for host touches it. */
struct md_heal_call {
    char host[MGMT_HOST_MAX + 1]; /* copied: the thread reads no md_state */
    uint16_t port;
    uint32_t proc;
    xdrproc_t afn;                /* with args, borrowed */
    void *args;
    xdrproc_t rfn;                /* with res, borrowed: the answer */
    void *res;
    int rc;                       /* md_peer_call's */
    bool is_called;               /* false: its node did not answer an
                                     earlier call of the batch */
    vl_err_t err;                 /* why, when rc != 0 */
    struct md_heal_call *next;    /* the next call to the same node */
    bool is_first;                /* the first call to its node */
    pthread_t thread;             /* asking its node (is_first) */
    bool has_thread;
};


/* The calls to one node, one after another (a node that did not answer
 * is not called again: asked once per command); runs on its own thread
 * and touches nothing but its calls. */
static void *
md_heal_node_calls(void *arg)
{
    const struct md_heal_call *failed = NULL;

    for (struct md_heal_call *c = arg; c != NULL; c = c->next) {
        if (failed != NULL) {
            c->rc = failed->rc;
            continue;
        }
        c->is_called = true;
        c->rc = md_peer_call(c->host, c->port, c->proc, c->afn, c->args,
                             c->rfn, c->res, MD_HEAL_PEER_TIMEOUT_MS,
                             &c->err);
        /* -EPROTO, -EPERM: it answered, and refused (md_heal_peer_failed) */
        if (c->rc != 0 && c->rc != -EPROTO && c->rc != -EPERM)
            failed = c;
    }
    return NULL;
}


/* Makes the n calls of v, every node's at once, so that nodes cut off
 * cost one MD_HEAL_PEER_TIMEOUT_MS together, not one each in turn; a
 * node's own calls are made in the order of v. The worker waits here
 * with md_state.lock held: the threads take no lock and read no
 * md_state (a callee answers on its loop thread without its lock, so no
 * call can wait on this worker). A thread that cannot be started has
 * its node asked here, after the others started. */
static void
md_heal_calls_run(struct md_heal_call **v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        v[i]->next = NULL;
        v[i]->is_first = true;
        v[i]->is_called = false;
        v[i]->has_thread = false;
        for (size_t j = 0; j < i && v[i]->is_first; j++) {
            struct md_heal_call *c = v[j];

            if (!c->is_first || strcmp(c->host, v[i]->host) != 0)
                continue;
            while (c->next != NULL)
                c = c->next;
            c->next = v[i];
            v[i]->is_first = false;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (v[i]->is_first)
            v[i]->has_thread = pthread_create(&v[i]->thread, NULL,
                                              md_heal_node_calls, v[i])
                               == 0;
    for (size_t i = 0; i < n; i++)
        if (v[i]->is_first && !v[i]->has_thread)
            (void)md_heal_node_calls(v[i]);
    for (size_t i = 0; i < n; i++)
        if (v[i]->has_thread)
            (void)pthread_join(v[i]->thread, NULL);
}


/* The call c to host p, before its batch. */
static void
md_heal_call_set(struct md_heal_call *c, const struct md_peer *p,
                 uint32_t proc, xdrproc_t afn, void *args, xdrproc_t rfn,
                 void *res)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->host, sizeof(c->host), "%s", p->host);
    c->port = p->port;
    c->proc = proc;
    c->afn = afn;
    c->args = args;
    c->rfn = rfn;
    c->res = res;
    c->err.msg[0] = '\0';
}


/* Whether call c, made in a batch, brought no answer (false: it did);
 * if so why into out, its node marked down in hp as
 * md_heal_peer_failed does. */
static bool
md_heal_call_failed(struct md_heal_peers *hp, const struct md_volume *vol,
                    const char *host, const struct md_heal_call *c,
                    char *out, size_t len)
{
    const char *why;

    if (c->is_called && c->rc == 0)
        return false;
    if (c->is_called) {
        md_heal_peer_failed(hp, vol, host, c->rc, c->err.msg, out, len);
        return true;
    }
    /* An earlier call of the batch to host did not answer. */
    why = md_heal_peer_down(hp, host);
    snprintf(out, len, "%s", why != NULL ? why : MD_HEAL_NOT_CONNECTED);
    return true;
}


/* One brick's HEAL_INFO, HEAL_SPLIT or HEAL_WAITING in a batch. */
struct md_heal_ask {
    mgmt_heal_info_req req;  /* its strings borrowed from the volume */
    mgmt_heal_info_rsp rsp;
    mgmt_arg path;
    struct md_heal_call call;
    bool is_asked;
};


/* The answer to a brick's call into hb, as it took its names. */
static void
md_heal_ask_take(struct md_heal_ask *a, struct md_heal_brick *hb)
{
    if (a->rsp.ret != 0 || a->rsp.bricks.bricks_len != 1) {
        hb->status = a->rsp.ret != 0 ? -a->rsp.op_errno : -EPROTO;
        snprintf(hb->remote_err, sizeof(hb->remote_err), "Not gathered: %s",
                 strerror(-hb->status));
    } else {
        const mgmt_heal_brick_info *bi = &a->rsp.bricks.bricks_val[0];

        /* A positive status is no errno: a bad answer. */
        hb->status = bi->status > 0 ? -EPROTO : bi->status;
        hb->n = bi->count;
        /* -EBUSY: the names of an index being rebuilt, shown too. */
        if ((hb->status == 0 || hb->status == -EBUSY) && a->req.names
            && md_heal_names_take(hb, bi->names.names_val,
                                  bi->names.names_len) != 0)
            hb->status = -ENOMEM;
    }
}


void
md_heal_bricks_remote(struct md_state *st, const struct md_volume *vol,
                      size_t first, size_t n, const bool *is_asked,
                      uint32_t proc, int names, size_t budget,
                      struct md_heal_peers *hp, struct md_heal_brick *hbs)
{
    struct md_heal_ask *asks = calloc(n + 1, sizeof(*asks));
    struct md_heal_call **calls = calloc(n + 1, sizeof(*calls));
    size_t n_calls = 0;
    vl_gfid_t id;
    bool is_id_ok = vl_gfid_parse(vol->id, &id) == 0;

    for (size_t i = 0; i < n; i++) {
        const struct md_brick *b = &vol->bricks[first + i];
        struct md_heal_brick *hb = &hbs[i];
        struct md_peer *p = NULL;
        struct md_heal_ask *a;
        const char *why;

        memset(hb, 0, sizeof(*hb));
        if (md_brick_is_local(st, b) || (is_asked != NULL && !is_asked[i]))
            continue;
        hb->status = -ENOTCONN;
        why = md_heal_peer_skip(st, hp, b->host, &p);
        if (why == NULL && !is_id_ok)
            why = "Not gathered: the volume has a bad id";
        if (why == NULL && (asks == NULL || calls == NULL))
            why = "Not gathered: out of memory";
        if (why != NULL) {
            snprintf(hb->remote_err, sizeof(hb->remote_err), "%s", why);
            continue;
        }
        a = &asks[i];
        a->is_asked = true;
        a->path = b->path;
        a->req.volume = (char *)vol->name;
        memcpy(a->req.volume_id, id.bytes, sizeof(a->req.volume_id));
        a->req.paths.paths_len = 1;
        a->req.paths.paths_val = &a->path;
        a->req.names = budget > 0 ? names : 0;
        a->req.name_bytes = (u_int)(budget < MGMT_OUTPUT_MAX / 2
                                        ? budget
                                        : MGMT_OUTPUT_MAX / 2);
        md_heal_call_set(&a->call, p, proc,
                         (xdrproc_t)xdr_mgmt_heal_info_req, &a->req,
                         (xdrproc_t)xdr_mgmt_heal_info_rsp, &a->rsp);
        calls[n_calls++] = &a->call;
    }
    md_heal_calls_run(calls, n_calls);
    /* In brick order, as the bricks are shown: a node's first call
     * marks it down before its others are looked at. */
    for (size_t i = 0; asks != NULL && i < n; i++) {
        struct md_heal_ask *a = &asks[i];
        struct md_heal_brick *hb = &hbs[i];

        if (!a->is_asked)
            continue;
        if (!md_heal_call_failed(hp, vol, vol->bricks[first + i].host,
                                 &a->call, hb->remote_err,
                                 sizeof(hb->remote_err)))
            md_heal_ask_take(a, hb);
        if (a->call.is_called && a->call.rc == 0)
            xdr_free((xdrproc_t)xdr_mgmt_heal_info_rsp, (char *)&a->rsp);
    }
    free(calls);
    free(asks);
}


/* One node's HEAL_PROGRESS answer into hn. */
static void
md_heal_node_take(const struct md_volume *vol,
                  const mgmt_heal_progress_rsp *rsp, struct md_heal_node *hn)
{
    char name[MGMT_HOST_MAX + 32];

    if (rsp->ret != 0) {
        snprintf(hn->why, sizeof(hn->why), "Not gathered: %s",
                 strerror(rsp->op_errno > 0 ? rsp->op_errno : EPROTO));
        return;
    }
    hn->status = 0;
    hn->pid = rsp->pid > 0 && rsp->pid <= INT32_MAX ? (pid_t)rsp->pid : 0;
    hn->is_full_asked = rsp->is_full_asked != 0;
    snprintf(name, sizeof(name), "%s:heal/%s.state", hn->host, vol->name);
    if (rsp->state[0] != '\0') {
        md_heal_progress_parse(rsp->state, name, &hn->p);
        (void)md_heal_node_bricks_parse(hn, rsp->state, name);
    }
}


void
md_heal_nodes_remote(struct md_state *st, const struct md_volume *vol,
                     struct md_heal_peers *hp, struct md_heal_node *v,
                     size_t n)
{
    mgmt_heal_progress_req req = {.volume = (char *)vol->name};
    mgmt_heal_progress_rsp *rsps = calloc(n + 1, sizeof(*rsps));
    struct md_heal_call *calls = calloc(n + 1, sizeof(*calls));
    struct md_heal_call **run = calloc(n + 1, sizeof(*run));
    bool *is_asked = calloc(n + 1, sizeof(*is_asked));
    size_t n_run = 0;

    for (size_t i = 0; i < n; i++) {
        struct md_heal_node *hn = &v[i];
        struct md_peer *p = NULL;
        const char *why;

        if (hn->is_local)
            continue;
        memset(&hn->p, 0, sizeof(hn->p));
        hn->p.eta_seconds = -1;
        hn->status = -ENOTCONN;
        why = md_heal_peer_skip(st, hp, hn->host, &p);
        if (why == NULL
            && (rsps == NULL || calls == NULL || run == NULL
                || is_asked == NULL))
            why = "Not gathered: out of memory";
        if (why != NULL) {
            snprintf(hn->why, sizeof(hn->why), "%s", why);
            continue;
        }
        is_asked[i] = true;
        md_heal_call_set(&calls[i], p, MGMT_PROC_HEAL_PROGRESS,
                         (xdrproc_t)xdr_mgmt_heal_progress_req, &req,
                         (xdrproc_t)xdr_mgmt_heal_progress_rsp, &rsps[i]);
        run[n_run++] = &calls[i];
    }
    md_heal_calls_run(run, n_run);
    for (size_t i = 0; is_asked != NULL && i < n; i++) {
        if (!is_asked[i])
            continue;
        if (!md_heal_call_failed(hp, vol, v[i].host, &calls[i], v[i].why,
                                 sizeof(v[i].why)))
            md_heal_node_take(vol, &rsps[i], &v[i]);
        if (calls[i].is_called && calls[i].rc == 0)
            xdr_free((xdrproc_t)xdr_mgmt_heal_progress_rsp,
                     (char *)&rsps[i]);
    }
    free(is_asked);
    free(run);
    free(calls);
    free(rsps);
}


/* Is path a brick directory of the volume with this id? */
static bool
md_heal_path_ok(const char *path, const char id[16])
{
    uint8_t got[16];

    return path[0] == '/'
           && getxattr(path, MD_VOLID_XATTR, got, sizeof(got))
                  == (ssize_t)sizeof(got)
           && memcmp(got, id, sizeof(got)) == 0;
}


void
md_heal_bricks_serve(const struct md_state *st, struct vrpc_conn *c,
                     uint32_t xid, uint32_t proc, const char *body,
                     size_t len)
{
    mgmt_heal_info_req req;
    mgmt_heal_info_rsp rsp;
    mgmt_heal_brick_info *out;
    char **bufs;

    memset(&req, 0, sizeof(req));
    memset(&rsp, 0, sizeof(rsp));
    if (vrpc_decode_body(body, len, (xdrproc_t)xdr_mgmt_heal_info_req, &req,
                         NULL) != 0) {
        (void)vrpc_send_reply(c, xid, VRPC_GARBAGE_ARGS, NULL, NULL, NULL, 0);
        return;
    }
    out = calloc(req.paths.paths_len + 1, sizeof(*out));
    bufs = calloc(req.paths.paths_len + 1, sizeof(*bufs));
    if (out == NULL || bufs == NULL
        || md_check_volname(req.volume, NULL) != 0) {
        rsp.ret = -1;
        rsp.op_errno = out == NULL || bufs == NULL ? ENOMEM : EINVAL;
    } else {
        rsp.bricks.bricks_val = out;
    }
    for (u_int i = 0; rsp.ret == 0 && i < req.paths.paths_len; i++) {
        struct md_heal_brick hb = {0};
        size_t budget = req.names ? req.name_bytes : 0, at = 0, total = 0;

        rsp.bricks.bricks_len++;
        if (!md_heal_path_ok(req.paths.paths_val[i], req.volume_id)) {
            out[i].status = -ENOENT;
            continue;
        }
        if (proc == MGMT_PROC_HEAL_SPLIT)
            md_heal_split_read(st, req.volume, req.paths.paths_val[i],
                               req.names == MGMT_HEAL_NAMES_GFID, &budget,
                               &hb);
        else if (proc == MGMT_PROC_HEAL_WAITING)
            md_heal_waiting_read(st, req.volume, req.paths.paths_val[i],
                                 &budget, &hb);
        else
            md_heal_brick_read(req.paths.paths_val[i], req.names != 0,
                               req.names == MGMT_HEAL_NAMES_GFID,
                               &budget, &hb);
        out[i].status = hb.status;
        out[i].count = hb.n;
        for (size_t k = 0; k < hb.n_names; k++)
            total += strlen(hb.names[k]) + 1;
        bufs[i] = total > 0 ? malloc(total) : NULL;
        for (size_t k = 0; bufs[i] != NULL && k < hb.n_names; k++) {
            size_t l = strlen(hb.names[k]) + 1;

            memcpy(bufs[i] + at, hb.names[k], l);
            at += l;
        }
        out[i].names.names_val = bufs[i];
        out[i].names.names_len = (u_int)at;
        md_heal_brick_clear(&hb);
    }
    (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                          (xdrproc_t)xdr_mgmt_heal_info_rsp, &rsp, NULL, 0);
    for (u_int i = 0; bufs != NULL && i < req.paths.paths_len; i++)
        free(bufs[i]);
    free(bufs);
    free(out);
    xdr_free((xdrproc_t)xdr_mgmt_heal_info_req, (char *)&req);
}


void
md_heal_progress_serve(const struct md_state *st, struct vrpc_conn *c,
                       uint32_t xid, const char *body, size_t len)
{
    mgmt_heal_progress_req req;
    mgmt_heal_progress_rsp rsp;
    char path[4200], *text = NULL;
    size_t n = 0;
    int rc;

    memset(&req, 0, sizeof(req));
    memset(&rsp, 0, sizeof(rsp));
    rsp.state = "";
    if (vrpc_decode_body(body, len, (xdrproc_t)xdr_mgmt_heal_progress_req,
                         &req, NULL) != 0) {
        (void)vrpc_send_reply(c, xid, VRPC_GARBAGE_ARGS, NULL, NULL, NULL, 0);
        return;
    }
    /* The name becomes a file name of the run directory: checked first. */
    if (md_check_volname(req.volume, NULL) != 0) {
        rsp.ret = -1;
        rsp.op_errno = EINVAL;
        goto reply;
    }
    rsp.pid = md_heal_pid(st, req.volume);
    md_heal_path(st, req.volume, "full", path, sizeof(path));
    rsp.is_full_asked = access(path, F_OK) == 0;
    md_heal_path(st, req.volume, "state", path, sizeof(path));
    rc = md_read_file(path, &text, &n);
    if (rc != 0 && rc != -ENOENT) {
        rsp.ret = -1;
        rsp.op_errno = -rc;
    } else if (text != NULL && n < MGMT_HEAL_STATE_MAX
               && strlen(text) == n) {
        rsp.state = text;
    }
    /* A file too long or with a NUL is no progress file: sent as none. */
reply:
    (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                          (xdrproc_t)xdr_mgmt_heal_progress_rsp, &rsp, NULL,
                          0);
    free(text);
    xdr_free((xdrproc_t)xdr_mgmt_heal_progress_req, (char *)&req);
}
