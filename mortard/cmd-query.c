/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-query: commands that only read the store and the brick processes:
 * volume info/status (of a volume or one brick)/list/get (Mortar's keys
 * and GlusterFS's names), volume set help, system:: getspec, and volume
 * statedump (signals the bricks). Text output follows GlusterFS's
 * layout.
 * volume status asks each peer holding bricks of the volumes shown for
 * their state (BRICK_STATUS, answered on the peer's loop thread), one
 * thread per peer, all in parallel, each call bounded by
 * MD_STATUS_TIMEOUT_MS; a peer that does not answer has its bricks shown
 * N/A (online N) and is named after the table.
 * Threads: the worker thread with md_state.lock held; status's asking
 * threads read only their own copies and the volumes, which the worker
 * (holding the lock) keeps alive until it has joined them.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mgmt.h"
#include "mortard.h"

/* A peer asked for its bricks' state must answer within this. */
#define MD_STATUS_TIMEOUT_MS 3000


static void
md_info_one(struct md_volume *vol, struct md_result *r, struct md_node *vl)
{
    struct md_node *v = md_node_add(vl, "volume", NULL);
    unsigned rep = md_vol_replica(vol);
    struct md_node *bl, *ol;

    md_sbuf_printf(&r->text, "\nVolume Name: %s\nType: %s\n"
                   "Volume ID: %s\nStatus: %s\nSnapshot Count: 0\n",
                   vol->name, md_vol_type_str(vol), vol->id,
                   md_vol_status_name(vol->status));
    /* GlusterFS: "N" for plain distribute, "sets x copies = bricks"
     * for the replicated types. */
    if (rep > 1 && vol->arbiter_count != 0)
        md_sbuf_printf(&r->text, "Number of Bricks: %zu x (%u + %u) = "
                       "%zu\n", md_vol_n_sets(vol), rep - 1,
                       vol->arbiter_count, vol->n_bricks);
    else if (rep > 1)
        md_sbuf_printf(&r->text, "Number of Bricks: %zu x %u = %zu\n",
                       md_vol_n_sets(vol), rep, vol->n_bricks);
    else
        md_sbuf_printf(&r->text, "Number of Bricks: %zu\n",
                       vol->n_bricks);
    md_sbuf_printf(&r->text, "Transport-type: %s\nBricks:\n",
                   vol->transport);
    md_node_add(v, "name", vol->name);
    md_node_add(v, "id", vol->id);
    md_node_addf(v, "status", "%d", (int)vol->status);
    md_node_add(v, "statusStr", md_vol_status_name(vol->status));
    md_node_add(v, "snapshotCount", "0");
    md_node_addf(v, "brickCount", "%zu", vol->n_bricks);
    /* GlusterFS's distCount is the bricks per distribute child (its
     * dist_leaf_count), not the number of children. */
    md_node_addf(v, "distCount", "%u", rep);
    md_node_addf(v, "replicaCount", "%u", rep);
    md_node_addf(v, "arbiterCount", "%u", vol->arbiter_count);
    md_node_add(v, "disperseCount", "0");
    md_node_add(v, "redundancyCount", "0");
    md_node_addf(v, "type", "%d", md_vol_type_num(vol));
    md_node_add(v, "typeStr", md_vol_type_str(vol));
    md_node_add(v, "transport", "0");
    md_node_addf(v, "version", "%llu", (unsigned long long)vol->version);
    bl = md_node_add(v, "bricks", NULL);
    if (bl != NULL)
        bl->is_list = true;
    for (size_t i = 0; i < vol->n_bricks; i++) {
        struct md_brick *b = &vol->bricks[i];
        struct md_node *bn = md_node_add(bl, "brick", NULL);

        md_sbuf_printf(&r->text, "Brick%zu: %s:%s%s\n", i + 1, b->host,
                       b->path, md_brick_is_arbiter(vol, b) ? " (arbiter)"
                                                           : "");
        md_node_addf(bn, "name", "%s:%s", b->host, b->path);
        md_node_add(bn, "hostname", b->host);
        md_node_add(bn, "path", b->path);
        md_node_addf(bn, "port", "%u", b->port);
        md_node_add(bn, "isArbiter", md_brick_is_arbiter(vol, b) ? "1"
                                                              : "0");
        /* Which replica set (distribute child) the brick is in, counted
         * in brick order. */
        md_node_addf(bn, "replicaSet", "%zu", i / rep);
    }
    md_node_addf(v, "optCount", "%zu", vol->n_opts);
    ol = md_node_add(v, "options", NULL);
    if (ol != NULL)
        ol->is_list = true;
    if (vol->n_opts > 0)
        md_sbuf_printf(&r->text, "Options Reconfigured:\n");
    for (size_t i = 0; i < vol->n_opts; i++) {
        struct md_node *on = md_node_add(ol, "option", NULL);

        md_sbuf_printf(&r->text, "%s: %s\n", vol->opts[i].key,
                       vol->opts[i].value);
        md_node_add(on, "name", vol->opts[i].key);
        md_node_add(on, "value", vol->opts[i].value);
    }
}


void
md_cmd_info(struct md_state *st, int argc, char **argv, struct md_result *r)
{
    struct md_node *vi, *vl;
    const char *which = argc >= 3 ? argv[2] : "all";
    size_t n = 0;

    if (argc > 3) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: volume info "
                       "[all|<VOLNAME>]");
        return;
    }
    if (strcmp(which, "all") != 0 && md_volume_find(st, which) == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, "Volume %s does not exist",
                       which);
        return;
    }
    vi = md_node_add(r->root, "volInfo", NULL);
    vl = md_node_add(vi, "volumes", NULL);
    if (vl != NULL)
        vl->is_list = true;
    for (struct md_volume *v = st->vols; v != NULL; v = v->next)
        if (strcmp(which, "all") == 0 || strcmp(which, v->name) == 0) {
            md_info_one(v, r, vl);
            n++;
        }
    md_node_addf(vi, "count", "%zu", n);
    if (n == 0)
        md_sbuf_printf(&r->text, "No volumes present\n");
}


/* What one peer said about its bricks, asked by its own thread. */
struct md_rstat {
    struct md_peer *peer;            /* borrowed (lock held throughout) */
    const char *host;                /* borrowed; brick host as stored */
    size_t n_vols;                   /* requests below */
    mgmt_brick_status_req *reqs;     /* owned arrays; strings borrowed */
    mgmt_brick_status_rsp *rsps;     /* decoded answers (xdr_free) */
    bool *has_rsp;                   /* rsps[i] is valid */
    char err[sizeof(((vl_err_t *)NULL)->msg)]; /* why it did not answer */
    pthread_t thread;                /* the asking thread */
    bool has_thread;                 /* thread was started */
};

/* Every peer holding bricks of the volumes shown. */
struct md_rstats {
    struct md_rstat *v;              /* owned */
    size_t n;
};


static void *
md_rstat_ask(void *arg)
{
    struct md_rstat *rs = arg;

    for (size_t i = 0; i < rs->n_vols && rs->err[0] == '\0'; i++) {
        vl_err_t err = {.msg = ""};

        if (rs->reqs[i].bricks.bricks_len == 0)
            continue;
        if (md_peer_call(rs->peer->host, rs->peer->port,
                         MGMT_PROC_BRICK_STATUS,
                         (xdrproc_t)xdr_mgmt_brick_status_req, &rs->reqs[i],
                         (xdrproc_t)xdr_mgmt_brick_status_rsp,
                         &rs->rsps[i], MD_STATUS_TIMEOUT_MS, &err) != 0) {
            snprintf(rs->err, sizeof(rs->err), "%s", err.msg);
            break;
        }
        rs->has_rsp[i] = true;
        if (rs->rsps[i].ret != 0)
            snprintf(rs->err, sizeof(rs->err), "%s",
                     strerror(rs->rsps[i].op_errno));
    }
    return NULL;
}


static struct md_rstat *
md_rstat_of(struct md_rstats *all, const char *host)
{
    for (size_t i = 0; i < all->n; i++)
        if (strcmp(all->v[i].host, host) == 0)
            return &all->v[i];
    return NULL;
}


static void
md_rstats_free(struct md_rstats *all)
{
    for (size_t i = 0; i < all->n; i++) {
        struct md_rstat *rs = &all->v[i];

        for (size_t k = 0; k < rs->n_vols; k++) {
            free(rs->reqs[k].bricks.bricks_val);
            if (rs->has_rsp[k])
                xdr_free((xdrproc_t)xdr_mgmt_brick_status_rsp,
                         (char *)&rs->rsps[k]);
        }
        free(rs->reqs);
        free(rs->rsps);
        free(rs->has_rsp);
    }
    free(all->v);
    all->v = NULL;
    all->n = 0;
}


/* Asks, in parallel (one thread per peer), every peer holding bricks of
 * vols[0..n_vols) for their state. A peer that cannot be asked gets err
 * set. -ENOMEM only. */
static int
md_rstats_gather(struct md_state *st, struct md_volume **vols,
                 size_t n_vols, struct md_rstats *all)
{
    for (size_t k = 0; k < n_vols; k++)
        for (size_t i = 0; i < vols[k]->n_bricks; i++) {
            struct md_brick *b = &vols[k]->bricks[i];
            struct md_rstat *rs, *nv;

            if (md_brick_is_local(st, b) || md_rstat_of(all, b->host))
                continue;
            nv = realloc(all->v, (all->n + 1) * sizeof(*nv));
            if (nv == NULL)
                return -ENOMEM;
            all->v = nv;
            rs = &all->v[all->n];
            memset(rs, 0, sizeof(*rs));
            rs->host = b->host;
            rs->peer = md_peer_find_host(st, b->host);
            rs->reqs = calloc(n_vols, sizeof(*rs->reqs));
            rs->rsps = calloc(n_vols, sizeof(*rs->rsps));
            rs->has_rsp = calloc(n_vols, sizeof(*rs->has_rsp));
            all->n++;
            if (rs->reqs == NULL || rs->rsps == NULL || rs->has_rsp == NULL)
                return -ENOMEM;
            rs->n_vols = n_vols;
            if (rs->peer == NULL)
                snprintf(rs->err, sizeof(rs->err), "not a peer of this "
                         "node");
        }
    for (size_t r = 0; r < all->n; r++) {
        struct md_rstat *rs = &all->v[r];

        for (size_t k = 0; k < n_vols; k++) {
            mgmt_brick_status_req *q = &rs->reqs[k];

            q->volume = vols[k]->name;
            q->bricks.bricks_val = calloc(vols[k]->n_bricks + 1,
                                          sizeof(*q->bricks.bricks_val));
            if (q->bricks.bricks_val == NULL)
                return -ENOMEM;
            for (size_t i = 0; i < vols[k]->n_bricks; i++) {
                struct md_brick *b = &vols[k]->bricks[i];
                mgmt_brick_ref *ref;

                if (strcmp(b->host, rs->host) != 0)
                    continue;
                ref = &q->bricks.bricks_val[q->bricks.bricks_len++];
                ref->id = b->id;
                ref->port = b->port;
            }
        }
    }
    for (size_t r = 0; r < all->n; r++) {
        struct md_rstat *rs = &all->v[r];

        if (rs->err[0] != '\0')
            continue;
        rs->has_thread = pthread_create(&rs->thread, NULL, md_rstat_ask,
                                        rs) == 0;
        if (!rs->has_thread)
            md_rstat_ask(rs);
    }
    for (size_t r = 0; r < all->n; r++)
        if (all->v[r].has_thread)
            pthread_join(all->v[r].thread, NULL);
    return 0;
}


/* The state of brick i of vols[k]: local, or as its node answered. */
static void
md_brick_state(struct md_state *st, struct md_rstats *all,
               struct md_volume *vol, size_t k, const struct md_brick *b,
               long *pid, bool *is_online, bool *is_known,
               const char **peerid)
{
    struct md_rstat *rs;

    *pid = -1;
    *is_online = false;
    *is_known = true;
    *peerid = st->node_id;
    if (md_brick_is_local(st, b)) {
        pid_t p = md_brick_pid(st, vol, b);

        *pid = p != 0 ? (long)p : -1L;
        *is_online = p != 0 && md_brick_port_answers(st, b);
        return;
    }
    rs = md_rstat_of(all, b->host);
    *is_known = false;
    *peerid = rs != NULL && rs->peer != NULL ? rs->peer->uuid : "";
    if (rs == NULL || rs->err[0] != '\0' || !rs->has_rsp[k])
        return;
    for (u_int i = 0; i < rs->rsps[k].bricks.bricks_len; i++) {
        const mgmt_brick_state *bs = &rs->rsps[k].bricks.bricks_val[i];

        if (strcmp(bs->id, b->id) == 0) {
            *pid = (long)bs->pid;
            *is_online = bs->online != 0;
            *is_known = true;
        }
    }
}


/* One volume's table; only < n_bricks shows that brick alone (`volume
 * status VOL BRICK`). As GlusterFS's: a brick that is not online has
 * port and pid N/A in text; XML and JSON keep its pid -1 (an int in
 * GlusterFS's XML) and its port N/A. */
static void
md_status_one(struct md_state *st, struct md_rstats *all,
              struct md_volume *vol, size_t k, size_t only, bool is_detail,
              struct md_result *r, struct md_node *vl)
{
    struct md_node *v = md_node_add(vl, "volume", NULL);

    md_sbuf_printf(&r->text, "Status of volume: %s\n", vol->name);
    md_node_add(v, "volName", vol->name);
    md_node_addf(v, "nodeCount", "%zu", only < vol->n_bricks
                                            ? (size_t)1 : vol->n_bricks);
    if (!is_detail)
        md_sbuf_printf(&r->text, "%-50s %-9s %-6s %s\n%s\n",
                       "Mortar process", "TCP Port", "Online", "Pid",
                       "------------------------------------------------"
                       "------------------------------");
    for (size_t i = 0; i < vol->n_bricks; i++) {
        struct md_brick *b = &vol->bricks[i];
        struct md_node *n;
        const char *peerid;
        char name[4200], port[16], pidstr[24], xpid[24];
        bool is_online, is_known;
        long pid;

        if (only < vol->n_bricks && i != only)
            continue;
        n = md_node_add(v, "node", NULL);
        md_brick_state(st, all, vol, k, b, &pid, &is_online, &is_known,
                       &peerid);
        snprintf(port, sizeof(port), "%u", b->port);
        snprintf(pidstr, sizeof(pidstr), "%ld", pid);
        snprintf(xpid, sizeof(xpid), "%ld", pid);
        if (!is_online)
            snprintf(port, sizeof(port), "N/A");
        if (pid < 0)
            snprintf(pidstr, sizeof(pidstr), "N/A");
        if (!is_known) {
            snprintf(pidstr, sizeof(pidstr), "N/A");
            snprintf(xpid, sizeof(xpid), "N/A");
        }
        snprintf(name, sizeof(name), "Brick %s:%s", b->host, b->path);
        if (is_detail)
            md_sbuf_printf(&r->text, "----------------------------------"
                           "--------------------------------------------\n"
                           "Brick                : %s\nTCP Port             "
                           ": %s\nOnline               : %s\nPid            "
                           "      : %s\nVolfile Version      : %llu\n",
                           name + 6, port, is_online ? "Y" : "N", pidstr,
                           (unsigned long long)vol->version);
        else
            md_sbuf_printf(&r->text, "%-50s %-9s %-6s %s\n", name, port,
                           is_online ? "Y" : "N", pidstr);
        if (md_brick_metrics_on(vol)) {
            /* diagnostics.brick-metrics: the port the brick picked, known
             * for this node's bricks only. */
            unsigned mport = is_online && md_brick_is_local(st, b)
                                 ? md_brick_metrics_port(st, vol, b)
                                 : 0;
            char mstr[16] = "N/A";

            if (mport != 0)
                snprintf(mstr, sizeof(mstr), "%u", mport);
            if (is_detail)
                md_sbuf_printf(&r->text, "Metrics Port         : %s\n",
                               mstr);
            md_node_add(n, "metricsPort", mstr);
        }
        md_node_add(n, "hostname", b->host);
        md_node_add(n, "path", b->path);
        md_node_add(n, "peerid", peerid);
        md_node_addf(n, "status", "%d", is_online ? 1 : 0);
        md_node_add(n, "port", port);
        md_node_add(n, "pid", xpid);
    }
    md_sbuf_printf(&r->text, "\n");
}


/* Names the peers that did not answer, in text and structured output. */
static void
md_status_unreachable(struct md_rstats *all, struct md_result *r,
                      struct md_node *vs)
{
    struct md_node *ul = NULL;

    for (size_t i = 0; i < all->n; i++) {
        struct md_rstat *rs = &all->v[i];
        struct md_node *pn;

        if (rs->err[0] == '\0')
            continue;
        md_sbuf_printf(&r->text, "Peer %s did not answer (%s): the state "
                       "of its bricks is not known\n", rs->host, rs->err);
        if (ul == NULL) {
            ul = md_node_add(vs, "unreachablePeers", NULL);
            if (ul != NULL)
                ul->is_list = true;
        }
        pn = md_node_add(ul, "peer", NULL);
        md_node_add(pn, "hostname", rs->host);
        md_node_add(pn, "uuid", rs->peer != NULL ? rs->peer->uuid : "");
        md_node_add(pn, "error", rs->err);
    }
}


/* The index of HOST:PATH in vol (GlusterFS's glusterd matches a brick
 * of `volume status VOL BRICK` the same way), or vol->n_bricks. */
static size_t
md_status_brick_find(struct md_state *st, const struct md_volume *vol,
                     const char *arg)
{
    char *host = NULL, *path = NULL;
    vl_err_t err = {.msg = ""};
    size_t idx;

    if (md_parse_brick(arg, &host, &path, &err) != 0)
        return vol->n_bricks;
    idx = md_vol_brick_find(st, vol, host, path);
    free(host);
    free(path);
    return idx;
}


void
md_cmd_status(struct md_state *st, int argc, char **argv,
              struct md_result *r)
{
    const char *which = "all", *brick = NULL;
    bool is_detail = false;
    struct md_node *vs, *vl;
    struct md_rstats all = {0};
    struct md_volume **vols;
    size_t n = 0, n_vols = 0, only = SIZE_MAX;

    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "detail") == 0 && i == argc - 1)
            is_detail = true;
        else if (i == 2)
            which = argv[i];
        else if (i == 3 && strcmp(which, "all") != 0 &&
                 strchr(argv[i], ':') != NULL)
            brick = argv[i];
        else {
            md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: volume status "
                           "[all | <VOLNAME> [<BRICK>]] [detail]");
            return;
        }
    }
    if (strcmp(which, "all") != 0) {
        struct md_volume *vol = md_volume_find(st, which);

        if (vol == NULL) {
            md_result_fail(r, MD_EXIT_FAIL, ENOENT, "Volume %s does not "
                           "exist", which);
            return;
        }
        if (vol->status != MD_VOL_STARTED) {
            md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, "Volume %s is not "
                           "started", which);
            return;
        }
        if (brick != NULL) {
            only = md_status_brick_find(st, vol, brick);
            if (only == vol->n_bricks) {
                md_result_fail(r, MD_EXIT_FAIL, ENOENT, "No brick %s in "
                               "volume %s", brick, vol->name);
                return;
            }
        }
    }
    for (struct md_volume *v = st->vols; v != NULL; v = v->next)
        n_vols++;
    vols = calloc(n_vols + 1, sizeof(*vols));
    if (vols == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "out of memory");
        return;
    }
    n_vols = 0;
    for (struct md_volume *v = st->vols; v != NULL; v = v->next)
        if (v->status == MD_VOL_STARTED &&
            (strcmp(which, "all") == 0 || strcmp(which, v->name) == 0))
            vols[n_vols++] = v;
    if (md_rstats_gather(st, vols, n_vols, &all) != 0) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "out of memory");
        goto out;
    }
    vs = md_node_add(r->root, "volStatus", NULL);
    vl = md_node_add(vs, "volumes", NULL);
    if (vl != NULL)
        vl->is_list = true;
    for (size_t k = 0; k < n_vols; k++) {
        md_status_one(st, &all, vols[k], k, only, is_detail, r, vl);
        n++;
    }
    md_status_unreachable(&all, r, vs);
    if (n == 0 && strcmp(which, "all") == 0)
        md_sbuf_printf(&r->text, "No volumes present\n");

out:
    md_rstats_free(&all);
    free(vols);
}


void
md_cmd_list(struct md_state *st, struct md_result *r)
{
    struct md_node *l = md_node_add(r->root, "volList", NULL);
    struct md_node *vl = md_node_add(l, "volumes", NULL);
    size_t n = 0;

    if (vl != NULL)
        vl->is_list = true;
    for (struct md_volume *v = st->vols; v != NULL; v = v->next) {
        md_sbuf_printf(&r->text, "%s\n", v->name);
        md_node_add(vl, "volume", v->name);
        n++;
    }
    md_node_addf(l, "count", "%zu", n);
    if (n == 0)
        md_sbuf_printf(&r->text, "No volumes present in cluster\n");
}


/* One row of `volume get`: the value of o (set, or its default) under
 * the name shown, which is its Mortar key or, with alias_of set (its
 * Mortar key), a GlusterFS name of it; structured output says which. */
static void
md_get_one(struct md_volume *vol, const vl_xlator_class_t *cls,
           const vl_option_t *o, const char *shown, bool is_alias,
           struct md_result *r, struct md_node *ol)
{
    char canon[256];
    const char *val;
    struct md_node *on;

    snprintf(canon, sizeof(canon), "%s.%s", cls->prefix, o->key);
    val = md_vol_opt_get(vol, canon);
    if (val == NULL)
        val = o->def != NULL ? o->def : "(null)";
    if (shown == NULL)
        shown = canon;
    md_sbuf_printf(&r->text, "%-40s %s\n", shown, val);
    on = md_node_add(ol, "Opt", NULL);
    md_node_add(on, "Option", shown);
    md_node_add(on, "Value", val);
    if (is_alias)
        md_node_add(on, "AliasOf", canon);
}


/* True if alias is a GlusterFS `volume set` name of o: a dotted name
 * (the undotted aliases are volfile spellings) that resolves to o, so
 * a name two options share is listed once, under the option that
 * `volume get VOL NAME` shows. */
static bool
md_get_is_listed_alias(const vl_option_t *o, const char *alias)
{
    const vl_option_t *opt = NULL;
    char canon[256];
    vl_err_t err = {.msg = ""};

    return alias != NULL && strchr(alias, '.') != NULL &&
           md_option_resolve(alias, NULL, NULL, &opt, canon, sizeof(canon),
                             &err) == 0 && opt == o;
}


void
md_cmd_get(struct md_state *st, int argc, char **argv, struct md_result *r)
{
    const vl_xlator_class_t *const *classes = md_settable_classes();
    const vl_xlator_class_t *cls;
    const vl_option_t *opt;
    struct md_volume *vol;
    struct md_node *g, *ol;
    char canon[256];
    vl_err_t err = {.msg = ""};
    int rc;

    if (argc != 4) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: volume get "
                       "<VOLNAME> <key|all>");
        return;
    }
    vol = md_volume_find(st, argv[2]);
    if (vol == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, "volume get option: failed: "
                       "Volume %s does not exist", argv[2]);
        return;
    }
    g = md_node_add(r->root, "volGetopts", NULL);
    ol = md_node_add(g, "Opts", NULL);
    if (ol != NULL)
        ol->is_list = true;
    if (strcmp(argv[3], "all") != 0) {
        rc = md_option_resolve(argv[3], NULL, &cls, &opt, canon,
                               sizeof(canon), &err);
        if (rc != 0) {
            md_result_fail(r, MD_EXIT_FAIL, -rc, "volume get option: "
                           "failed: %s", err.msg);
            return;
        }
        md_sbuf_printf(&r->text, "%-40s %s\n", "Option", "Value");
        md_sbuf_printf(&r->text, "%-40s %s\n", "------", "-----");
        /* Under the name asked for: a GlusterFS script looks for it. */
        md_get_one(vol, cls, opt, argv[3], strcmp(argv[3], canon) != 0, r,
                   ol);
        return;
    }
    md_sbuf_printf(&r->text, "%-40s %s\n", "Option", "Value");
    md_sbuf_printf(&r->text, "%-40s %s\n", "------", "-----");
    /* Each Mortar key, then its GlusterFS names as rows of their own
     * (same value), so both spellings are found in two columns. */
    for (size_t i = 0; classes[i] != NULL; i++)
        for (opt = classes[i]->options; opt != NULL && opt->key != NULL;
             opt++) {
            if (!(opt->flags & VL_OPT_SETTABLE))
                continue;
            md_get_one(vol, classes[i], opt, NULL, false, r, ol);
            for (size_t a = 0; a < VL_ARRAY_SIZE(opt->aliases); a++)
                if (md_get_is_listed_alias(opt, opt->aliases[a]))
                    md_get_one(vol, classes[i], opt, opt->aliases[a], true,
                               r, ol);
        }
}


void
md_cmd_getspec(struct md_state *st, int argc, char **argv,
               struct md_result *r)
{
    struct md_volume *vol;
    struct md_node *g;
    char *spec;

    if (argc != 3) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: system:: getspec "
                       "<VOLNAME>");
        return;
    }
    vol = md_volume_find(st, argv[2]);
    if (vol == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, "getspec: failed: Volume %s "
                       "does not exist", argv[2]);
        return;
    }
    spec = md_volgen_client(vol);
    if (spec == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "getspec: failed: out of "
                       "memory");
        return;
    }
    md_sbuf_printf(&r->text, "%s", spec);
    g = md_node_add(r->root, "getspec", NULL);
    md_node_add(g, "volname", vol->name);
    md_node_addf(g, "version", "%llu", (unsigned long long)vol->version);
    md_node_add(g, "volfile", spec);
    free(spec);
}


void
md_cmd_set_help(struct md_result *r)
{
    const vl_xlator_class_t *const *classes = md_settable_classes();
    struct md_node *h = md_node_add(r->root, "volSetHelp", NULL);

    if (h != NULL)
        h->is_list = true;
    for (size_t i = 0; classes[i] != NULL; i++)
        for (const vl_option_t *o = classes[i]->options;
             o != NULL && o->key != NULL; o++) {
            struct md_node *on;

            if (!(o->flags & VL_OPT_SETTABLE))
                continue;
            md_sbuf_printf(&r->text, "Option: %s.%s\n", classes[i]->prefix,
                           o->key);
            for (size_t a = 0; a < VL_ARRAY_SIZE(o->aliases); a++)
                if (o->aliases[a] != NULL)
                    md_sbuf_printf(&r->text, "Alias: %s\n", o->aliases[a]);
            md_sbuf_printf(&r->text, "Type: %s%s\nDefault Value: %s\n"
                           "Description: %s\n\n", vl_opt_type_name(o->type),
                           (o->flags & VL_OPT_LIVE) ? " (applied live)" : "",
                           o->def != NULL ? o->def : "(null)",
                           o->doc != NULL ? o->doc : "");
            on = md_node_add(h, "option", NULL);
            md_node_addf(on, "name", "%s.%s", classes[i]->prefix, o->key);
            md_node_add(on, "type", vl_opt_type_name(o->type));
            md_node_add(on, "defaultValue", o->def != NULL ? o->def : "");
            md_node_add(on, "description", o->doc != NULL ? o->doc : "");
        }
}


void
md_cmd_statedump(struct md_state *st, int argc, char **argv,
                 struct md_result *r)
{
    struct md_volume *vol;
    struct md_node *d;
    size_t n = 0;

    if (argc != 3) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: volume statedump "
                       "<VOLNAME>");
        return;
    }
    vol = md_volume_find(st, argv[2]);
    if (vol == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, "volume statedump: failed: "
                       "Volume %s does not exist", argv[2]);
        return;
    }
    if (vol->status != MD_VOL_STARTED) {
        md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, "volume statedump: failed: "
                       "Volume %s is not in the started state", vol->name);
        return;
    }
    d = md_node_add(r->root, "volStatedump", NULL);
    md_node_addf(d, "dir", "%s/dumps", st->run_dir);
    for (size_t i = 0; i < vol->n_bricks; i++) {
        pid_t pid = md_brick_pid(st, vol, &vol->bricks[i]);

        if (pid != 0 && kill(pid, SIGUSR1) == 0) {
            md_node_addf(d, "pid", "%ld", (long)pid);
            n++;
        }
    }
    if (n == 0) {
        md_result_fail(r, MD_EXIT_FAIL, ESRCH, "volume statedump: failed: no "
                       "brick of %s is running", vol->name);
        return;
    }
    md_sbuf_printf(&r->text, "volume statedump: success: %zu brick(s) write "
                   "their dumps to %s/dumps (mortarfsd.<pid>.dump.<time>)\n",
                   n, st->run_dir);
}
