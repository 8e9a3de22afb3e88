/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metrics: mortarfsd's GET /metrics (--metrics-port; doc/metrics.md).
 *
 * The text is libvol's families of the running graph (vol/metrics.h)
 * labelled with the volume (and, for a brick, the brick), after
 * mortar_process_info, which says what this process is. The server
 * starts before the graph, so a port in use stops the startup with one
 * line before anything is mounted or listened on; the port actually
 * listened on (the kernel's choice for 0) is written to
 * --metrics-port-file, crash-safely (kv-file.c), and removed at exit.
 *
 * Threads: the server thread of vol/metrics.h runs the fill callback;
 * struct fsd_metrics is read-only once started.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsd.h"
#include "kv-file.h"

struct fsd_metrics {
    vl_metrics_http_t *srv; /* owned */
    char *volume;           /* owned; the volume label */
    const char *brick;      /* borrowed from opts, or NULL */
    const char *role;       /* static: client, brick, heal, rebalance */
    char *port_file;        /* borrowed from opts, or NULL */
};


static void
fsd_metrics_fill(FILE *out, void *arg)
{
    struct fsd_metrics *m = arg;

    fputs("# HELP mortar_process_info What this process is (always 1).\n"
          "# TYPE mortar_process_info gauge\n"
          "mortar_process_info{volume=\"", out);
    vl_metrics_write_label(out, m->volume);
    if (m->brick != NULL) {
        fputs("\",brick=\"", out);
        vl_metrics_write_label(out, m->brick);
    }
    fprintf(out, "\",role=\"%s\",version=\"%s\"} 1\n", m->role,
            PACKAGE_VERSION);
    vl_metrics_write_graphs(out, m->volume, m->brick);
}


/* --metrics-volume, else --volfile-id, else the volfile's base name
 * without ".vol". */
static char *
fsd_metrics_volume(const struct fsd_opts *opts)
{
    const char *base;
    size_t len;

    if (opts->metrics_volume != NULL)
        return strdup(opts->metrics_volume);
    if (opts->vf_id != NULL)
        return strdup(opts->vf_id);
    base = opts->volfile != NULL ? strrchr(opts->volfile, '/') : NULL;
    base = base != NULL ? base + 1 : "-";
    len = strlen(base);
    if (len > 4 && strcmp(base + len - 4, ".vol") == 0)
        len -= 4;
    return strndup(base, len);
}


int
fsd_metrics_start(const struct fsd_opts *opts, struct fsd_metrics **out,
                  vl_err_t *err)
{
    struct fsd_metrics *m;
    char text[16];
    int rc;

    *out = NULL;
    if (!opts->has_metrics)
        return 0;
    m = calloc(1, sizeof(*m));
    if (m == NULL || (m->volume = fsd_metrics_volume(opts)) == NULL) {
        free(m);
        vl_err_set(err, "metrics: out of memory");
        return -ENOMEM;
    }
    m->brick = opts->metrics_brick;
    m->role = opts->mountpoint != NULL ? "client"
              : opts->is_rebalance     ? "rebalance"
              : opts->is_heal          ? "heal"
                                       : "brick";
    rc = vl_metrics_http_start(opts->metrics_address, opts->metrics_port,
                               fsd_metrics_fill, m, &m->srv, err);
    if (rc != 0)
        goto fail;
    if (opts->metrics_port_file != NULL) {
        int n = snprintf(text, sizeof(text), "%u\n",
                         vl_metrics_http_port(m->srv));

        rc = fsd_kv_replace(opts->metrics_port_file, text, (size_t)n);
        if (rc != 0) {
            vl_err_set(err, "metrics: writing %s: %s",
                       opts->metrics_port_file, strerror(-rc));
            goto fail;
        }
        m->port_file = opts->metrics_port_file;
    }
    vl_glog("mortarfsd", VL_LOG_INFO, "metrics at http://%s:%u/metrics",
            opts->metrics_address != NULL ? opts->metrics_address
                                          : VL_METRICS_DEFAULT_ADDRESS,
            vl_metrics_http_port(m->srv));
    *out = m;
    return 0;
fail:
    vl_metrics_http_stop(m->srv);
    free(m->volume);
    free(m);
    return rc;
}


void
fsd_metrics_stop(struct fsd_metrics *m)
{
    if (m == NULL)
        return;
    vl_metrics_http_stop(m->srv);
    if (m->port_file != NULL)
        (void)unlink(m->port_file);
    free(m->volume);
    free(m);
}
