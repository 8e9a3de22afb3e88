/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metrics: mortard's GET /metrics (--metrics-port; doc/metrics.md).
 *
 * What this node's mortard knows: volumes by state, every volume's
 * bricks and whether this node's bricks are online, peers by state,
 * cluster transactions started and failed (txn.c), and the rebalance of
 * each volume as this node's state file says (files and bytes moved,
 * ETA), and the heal backlog its self-heal daemons last wrote. Served
 * by vol/metrics.h's server thread; on 127.0.0.1 unless
 * --metrics-address says otherwise; a port in use stops mortard's
 * startup with one line (main.c).
 *
 * Threads: the fill callback copies what it needs under st->lock, then
 * reads pid and rebalance files without it, so a scrape never holds the
 * lock across file I/O.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mortard.h"

/* One volume as the scrape saw it under the lock. */
struct md_mvol {
    char name[MD_VOLNAME_MAX + 1];
    enum md_vol_status status;
    size_t n_bricks;
    size_t n_local;          /* bricks of this node */
    size_t n_local_online;   /* of those, running */
};

static vl_metrics_http_t *md_metrics_srv; /* owned; NULL when off */
static atomic_uint_least64_t md_txn_started; /* md_metrics_txn_done */
static atomic_uint_least64_t md_txn_failed;


void
md_metrics_txn_done(bool is_ok)
{
    atomic_fetch_add_explicit(&md_txn_started, 1, memory_order_relaxed);
    if (!is_ok)
        atomic_fetch_add_explicit(&md_txn_failed, 1, memory_order_relaxed);
}


static void
md_metrics_head(FILE *out, const char *name, const char *type,
                const char *help)
{
    fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}


static void
md_metrics_vol_sample(FILE *out, const char *name, const char *vol,
                      long long value)
{
    fprintf(out, "%s{volume=\"", name);
    vl_metrics_write_label(out, vol);
    fprintf(out, "\"} %lld\n", value);
}


/* Copies the volumes (brick counts included) under the lock. */
static struct md_mvol *
md_metrics_vols(struct md_state *st, size_t *out_n, size_t *n_peers,
                size_t *n_connected)
{
    struct md_mvol *v = NULL;
    struct md_volume *vol;
    struct md_peer *p;
    size_t n = 0;
    size_t cap = 0;

    *n_peers = 0;
    *n_connected = 0;
    pthread_mutex_lock(&st->lock);
    for (vol = st->vols; vol != NULL; vol = vol->next) {
        struct md_mvol *m;

        if (n == cap) {
            void *q = realloc(v, (cap = cap ? cap * 2 : 8) * sizeof(*v));

            if (q == NULL)
                break; /* the volumes so far; the scrape says it below */
            v = q;
        }
        m = &v[n++];
        memset(m, 0, sizeof(*m));
        snprintf(m->name, sizeof(m->name), "%s", vol->name);
        m->status = vol->status;
        m->n_bricks = vol->n_bricks;
        for (size_t i = 0; i < vol->n_bricks; i++) {
            if (!md_brick_is_local(st, &vol->bricks[i]))
                continue;
            m->n_local++;
            if (md_brick_pid(st, vol, &vol->bricks[i]) != 0)
                m->n_local_online++;
        }
    }
    for (p = st->peers; p != NULL; p = p->next) {
        (*n_peers)++;
        if (p->is_connected)
            (*n_connected)++;
    }
    pthread_mutex_unlock(&st->lock);
    *out_n = n;
    return v;
}


/* The heal backlog, as this node's self-heal daemons last wrote it
 * (RUN/heal/VOL.state, at most a second old while a daemon runs): what
 * its bricks' indexes still list, and how fast it goes. A volume whose
 * daemon never wrote a state file here has no samples. */
static void
md_metrics_heal(FILE *out, struct md_state *st, const struct md_mvol *v,
                size_t n)
{
    static const struct {
        const char *name, *type, *help;
    } fam[] = {
        {"mortar_heal_pending_entries", "gauge",
         "Objects the self-heal indexes of this node's bricks list."},
        {"mortar_heal_pending_bytes", "gauge",
         "Bytes of the files among them still to heal."},
        {"mortar_heal_split_brain_entries", "gauge",
         "Of the listed objects, those in split-brain."},
        {"mortar_heal_healed_total", "counter",
         "Objects healed by this node's daemon since it started."},
        {"mortar_heal_healed_bytes_total", "counter",
         "Bytes healed by this node's daemon since it started."},
        {"mortar_heal_rate_entries_per_second", "gauge",
         "Recent heal rate of this node's daemon."},
        {"mortar_heal_eta_seconds", "gauge",
         "Estimated time to heal the backlog (absent while unknown)."},
    };
    struct md_heal_progress *hp = calloc(n ? n : 1, sizeof(*hp));

    if (hp == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        md_heal_progress_read(st, v[i].name, &hp[i]);
    for (size_t f = 0; f < VL_ARRAY_SIZE(fam); f++) {
        md_metrics_head(out, fam[f].name, fam[f].type, fam[f].help);
        for (size_t i = 0; i < n; i++) {
            const struct md_heal_progress *p = &hp[i];
            double val;

            if (!p->is_read)
                continue;
            switch (f) {
            case 0: val = p->pending; break;
            case 1: val = p->pending_bytes; break;
            case 2: val = p->split_brain; break;
            case 3: val = p->healed; break;
            case 4: val = p->healed_bytes; break;
            case 5: val = p->rate; break;
            default:
                if (p->eta_seconds < 0)
                    continue;
                val = (double)p->eta_seconds;
                break;
            }
            fprintf(out, "%s{volume=\"", fam[f].name);
            vl_metrics_write_label(out, v[i].name);
            fprintf(out, "\"} %.15g\n", val);
        }
    }
    free(hp);
}


static void
md_metrics_fill(FILE *out, void *arg)
{
    static const enum md_vol_status states[] = {
        MD_VOL_CREATED, MD_VOL_STARTED, MD_VOL_STOPPED};
    /* Label values in lower case, as Prometheus's conventions have it. */
    static const char *const state_names[] = {"created", "started",
                                              "stopped"};
    struct md_state *st = arg;
    size_t n = 0, n_peers, n_conn, i, k;
    struct md_mvol *v = md_metrics_vols(st, &n, &n_peers, &n_conn);

    /* As every process's scrape starts (mortarfsd/metrics.c), so that
     * one query finds each process's role and version. */
    md_metrics_head(out, "mortar_process_info", "gauge",
                    "What this process is (always 1).");
    fprintf(out, "mortar_process_info{role=\"mortard\",version=\"%s\"} 1\n",
            PACKAGE_VERSION);
    md_metrics_head(out, "mortar_volumes", "gauge",
                    "Volumes in this node's store, by state.");
    for (k = 0; k < VL_ARRAY_SIZE(states); k++) {
        size_t c = 0;

        for (i = 0; i < n; i++)
            c += v[i].status == states[k];
        fprintf(out, "mortar_volumes{state=\"%s\"} %zu\n", state_names[k],
                c);
    }
    md_metrics_head(out, "mortar_volume_bricks", "gauge",
                    "Bricks of the volume, on every node.");
    for (i = 0; i < n; i++)
        md_metrics_vol_sample(out, "mortar_volume_bricks", v[i].name,
                              (long long)v[i].n_bricks);
    md_metrics_head(out, "mortar_volume_local_bricks", "gauge",
                    "Bricks of the volume on this node.");
    for (i = 0; i < n; i++)
        md_metrics_vol_sample(out, "mortar_volume_local_bricks", v[i].name,
                              (long long)v[i].n_local);
    md_metrics_head(out, "mortar_volume_bricks_online", "gauge",
                    "Bricks of the volume on this node whose process "
                    "runs.");
    for (i = 0; i < n; i++)
        md_metrics_vol_sample(out, "mortar_volume_bricks_online", v[i].name,
                              (long long)v[i].n_local_online);
    md_metrics_head(out, "mortar_peers", "gauge",
                    "Peers of this node, by state.");
    fprintf(out, "mortar_peers{state=\"connected\"} %zu\n", n_conn);
    fprintf(out, "mortar_peers{state=\"disconnected\"} %zu\n",
            n_peers - n_conn);
    md_metrics_head(out, "mortar_transactions_total", "counter",
                    "Cluster transactions this node drove.");
    fprintf(out, "mortar_transactions_total %" PRIu64 "\n",
            (uint64_t)atomic_load(&md_txn_started));
    md_metrics_head(out, "mortar_transactions_failed_total", "counter",
                    "Of those, the ones that failed.");
    fprintf(out, "mortar_transactions_failed_total %" PRIu64 "\n",
            (uint64_t)atomic_load(&md_txn_failed));

    /* The rebalance, as this node's state file and process say. */
    {
        struct md_rebal_view *rv = calloc(n ? n : 1, sizeof(*rv));

        if (rv != NULL)
            for (i = 0; i < n; i++)
                md_rebal_view_local(st, v[i].name, false, &rv[i]);
        md_metrics_head(out, "mortar_rebalance_running", "gauge",
                        "1 while the volume's rebalance process runs on "
                        "this node.");
        for (i = 0; rv != NULL && i < n; i++)
            md_metrics_vol_sample(out, "mortar_rebalance_running",
                                  v[i].name, rv[i].is_running);
        md_metrics_head(out, "mortar_rebalance_files_moved", "gauge",
                        "Files the latest rebalance on this node moved.");
        for (i = 0; rv != NULL && i < n; i++)
            if (rv[i].status[0] != '\0')
                md_metrics_vol_sample(out, "mortar_rebalance_files_moved",
                                      v[i].name, rv[i].moved_files);
        md_metrics_head(out, "mortar_rebalance_bytes_moved", "gauge",
                        "Bytes the latest rebalance on this node moved.");
        for (i = 0; rv != NULL && i < n; i++)
            if (rv[i].status[0] != '\0')
                md_metrics_vol_sample(out, "mortar_rebalance_bytes_moved",
                                      v[i].name, rv[i].moved_bytes);
        md_metrics_head(out, "mortar_rebalance_eta_seconds", "gauge",
                        "Estimated time left of the running rebalance "
                        "(absent while unknown).");
        for (i = 0; rv != NULL && i < n; i++)
            if (rv[i].is_running && rv[i].eta_seconds >= 0)
                md_metrics_vol_sample(out, "mortar_rebalance_eta_seconds",
                                      v[i].name, rv[i].eta_seconds);
        free(rv);
    }
    md_metrics_heal(out, st, v, n);
    free(v);
}


int
md_metrics_start(struct md_state *st, const char *address, unsigned port,
                 vl_err_t *err)
{
    int rc;

    rc = vl_metrics_http_start(address, port, md_metrics_fill, st,
                               &md_metrics_srv, err);
    if (rc != 0)
        return rc;
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "metrics at http://%s:%u/metrics",
            address != NULL ? address : VL_METRICS_DEFAULT_ADDRESS,
            vl_metrics_http_port(md_metrics_srv));
    return 0;
}


void
md_metrics_stop(void)
{
    vl_metrics_http_stop(md_metrics_srv);
    md_metrics_srv = NULL;
}
