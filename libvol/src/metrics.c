/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metrics: the Prometheus text of libvol's counters (vol/metrics.h).
 *
 * Families written, every series labelled volume and xlator (the
 * translator's volfile name), in this order:
 *   mortar_fop_total, mortar_fop_errors_total, mortar_fop_bytes_total,
 *   mortar_fop_latency_seconds (histogram), with a fop label; only the
 *   fops a translator has answered at least once;
 *   mortar_xlator_memory_bytes, mortar_xlator_memory_objects;
 *   mortar_requests_pending (no xlator label);
 *   mortar_fop_unrecorded_total (no labels but volume);
 *   then the translators' own families (vl_metrics_emit), grouped.
 * The text format wants every sample of a family together, so each
 * family is one pass over the translators.
 *
 * Threads: runs on the metrics server's thread with the graph registry
 * lock held (vl__graph_foreach), so the graph cannot be freed meanwhile;
 * the counters themselves are atomics.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "vol/metrics.h"

/* One value a translator reported through vl_metrics_emit. */
struct vl_metrics_sample {
    const char *name;  /* static */
    const char *type;  /* static */
    const char *help;  /* static */
    const char *xlator;/* borrowed; the translator's name */
    uint64_t value;
    size_t seq;        /* emission order, for a stable sort */
};

struct vl_metrics_sink {
    struct vl_metrics_sample *samples; /* owned (malloc) */
    size_t n;
    size_t cap;
    const char *xlator;                /* borrowed; the one reporting */
    bool is_oom;                       /* a sample was dropped */
};

/* What vl_metrics_write_graphs looks for in the registry. */
struct vl_metrics_pick {
    vl_graph_t *newest; /* highest id */
    FILE *out;
    const char *volume; /* borrowed; the volume label */
};


void
vl_metrics_write_label(FILE *out, const char *value)
{
    const char *p;

    for (p = value; *p != '\0'; p++) {
        if (*p == '\\')
            fputs("\\\\", out);
        else if (*p == '"')
            fputs("\\\"", out);
        else if (*p == '\n')
            fputs("\\n", out);
        else
            fputc(*p, out);
    }
}


/* The brick label of the scrape running on this thread (the metrics
 * server has one thread; a test may call vl_metrics_write_graphs from
 * several). */
static _Thread_local const char *vl_metrics_brick;


static void
vl_metrics_labels(FILE *out, const char *volume, const vl_xlator_t *xl,
                  const char *fop)
{
    fputs("{volume=\"", out);
    vl_metrics_write_label(out, volume);
    fputs("\"", out);
    if (vl_metrics_brick != NULL) {
        fputs(",brick=\"", out);
        vl_metrics_write_label(out, vl_metrics_brick);
        fputs("\"", out);
    }
    if (xl != NULL) {
        fputs(",xlator=\"", out);
        vl_metrics_write_label(out, xl->name);
        fputs("\"", out);
    }
    if (fop != NULL)
        fprintf(out, ",fop=\"%s\"", fop);
}


static void
vl_metrics_head(FILE *out, const char *name, const char *type,
                const char *help)
{
    fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}


/* Which scalar of vl_fop_stats_t a family shows. */
enum vl_metrics_field { VL_MF_CALLS, VL_MF_ERRORS, VL_MF_BYTES };


static void
vl_metrics_fop_family(FILE *out, vl_graph_t *graph, const char *volume,
                      const char *name, const char *help,
                      enum vl_metrics_field field)
{
    size_t i;
    int op;

    vl_metrics_head(out, name, "counter", help);
    for (i = 0; i < graph->n_xls; i++) {
        vl_xlator_t *xl = graph->xls[i];

        for (op = 0; op < VL_FOP_COUNT; op++) {
            vl_fop_stats_t st;
            uint64_t v;

            if (field == VL_MF_BYTES && op != VL_FOP_READ
                && op != VL_FOP_WRITE)
                continue;
            vl_fop_stats_read(xl, (vl_fop_t)op, &st);
            if (st.calls == 0)
                continue;
            v = field == VL_MF_CALLS    ? st.calls
                : field == VL_MF_ERRORS ? st.errors
                                        : st.bytes;
            fputs(name, out);
            vl_metrics_labels(out, volume, xl, vl_fop_name((vl_fop_t)op));
            fprintf(out, "} %" PRIu64 "\n", v);
        }
    }
}


static void
vl_metrics_latency(FILE *out, vl_graph_t *graph, const char *volume)
{
    const char *name = "mortar_fop_latency_seconds";
    size_t i;
    int op;

    vl_metrics_head(out, name, "histogram",
                    "Time from a request reaching the translator to its "
                    "answer.");
    for (i = 0; i < graph->n_xls; i++) {
        vl_xlator_t *xl = graph->xls[i];

        for (op = 0; op < VL_FOP_COUNT; op++) {
            const char *fop = vl_fop_name((vl_fop_t)op);
            vl_fop_stats_t st;
            uint64_t cum = 0;
            unsigned k;

            vl_fop_stats_read(xl, (vl_fop_t)op, &st);
            if (st.calls == 0)
                continue;
            /* _count is the +Inf bucket, as the format requires, even
             * if calls moved on while the buckets were read. */
            for (k = 0; k < VL_LAT_BUCKETS; k++) {
                cum += st.lat_bucket[k];
                fprintf(out, "%s_bucket", name);
                vl_metrics_labels(out, volume, xl, fop);
                if (k + 1 < VL_LAT_BUCKETS)
                    fprintf(out, ",le=\"%g\"} %" PRIu64 "\n",
                            (double)vl_lat_bucket_le_ns(k) / 1e9, cum);
                else
                    fprintf(out, ",le=\"+Inf\"} %" PRIu64 "\n", cum);
            }
            fprintf(out, "%s_sum", name);
            vl_metrics_labels(out, volume, xl, fop);
            fprintf(out, "} %.9f\n", (double)st.lat_sum_ns / 1e9);
            fprintf(out, "%s_count", name);
            vl_metrics_labels(out, volume, xl, fop);
            fprintf(out, "} %" PRIu64 "\n", cum);
        }
    }
}


static void
vl_metrics_memory(FILE *out, vl_graph_t *graph, const char *volume)
{
    size_t i;
    int pass;

    for (pass = 0; pass < 2; pass++) {
        const char *name = pass == 0 ? "mortar_xlator_memory_bytes"
                                     : "mortar_xlator_memory_objects";

        vl_metrics_head(out, name, "gauge",
                        pass == 0 ? "Bytes the translator has allocated "
                                    "and not freed."
                                  : "Allocations of the translator not "
                                    "freed.");
        for (i = 0; i < graph->n_xls; i++) {
            struct vl_mem_stat ms;

            vl_mem_stat_total(graph->xls[i], &ms);
            fputs(name, out);
            vl_metrics_labels(out, volume, graph->xls[i], NULL);
            fprintf(out, "} %" PRIu64 "\n", pass == 0 ? ms.bytes
                                                      : ms.objects);
        }
    }
}


void
vl_metrics_emit(vl_metrics_sink_t *sink, const char *name, const char *type,
                const char *help, uint64_t value)
{
    struct vl_metrics_sample *s;

    if (sink->n == sink->cap) {
        size_t cap = sink->cap != 0 ? sink->cap * 2 : 32;
        void *p = realloc(sink->samples, cap * sizeof(*sink->samples));

        if (p == NULL) {
            sink->is_oom = true;
            return;
        }
        sink->samples = p;
        sink->cap = cap;
    }
    s = &sink->samples[sink->n];
    s->name = name;
    s->type = type;
    s->help = help;
    s->xlator = sink->xlator;
    s->value = value;
    s->seq = sink->n++;
}


void
vl_metrics_emit_cache(vl_metrics_sink_t *sink, uint64_t hits,
                      uint64_t misses)
{
    vl_metrics_emit(sink, "mortar_cache_hits_total", "counter",
                    "Requests the cache answered itself.", hits);
    vl_metrics_emit(sink, "mortar_cache_misses_total", "counter",
                    "Requests the cache could have answered but sent down.",
                    misses);
}


void
vl_metrics_emit_cache_bytes(vl_metrics_sink_t *sink, uint64_t bytes)
{
    vl_metrics_emit(sink, "mortar_cache_bytes", "gauge",
                    "Bytes the cache holds.", bytes);
}


static int
vl_metrics_sample_cmp(const void *a, const void *b)
{
    const struct vl_metrics_sample *x = a;
    const struct vl_metrics_sample *y = b;
    int c = strcmp(x->name, y->name);

    if (c != 0)
        return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}


/* The translators' own families, grouped by name. */
static void
vl_metrics_classes(FILE *out, vl_graph_t *graph, const char *volume)
{
    vl_metrics_sink_t sink = {0};
    size_t i;

    for (i = 0; i < graph->n_xls; i++) {
        vl_xlator_t *xl = graph->xls[i];

        if (xl->cls->metrics == NULL)
            continue;
        sink.xlator = xl->name;
        xl->cls->metrics(xl, &sink);
    }
    qsort(sink.samples, sink.n, sizeof(*sink.samples), vl_metrics_sample_cmp);
    for (i = 0; i < sink.n; i++) {
        const struct vl_metrics_sample *s = &sink.samples[i];

        if (i == 0 || strcmp(s->name, sink.samples[i - 1].name) != 0)
            vl_metrics_head(out, s->name, s->type, s->help);
        fputs(s->name, out);
        vl_metrics_labels(out, volume, NULL, NULL);
        fputs(",xlator=\"", out);
        vl_metrics_write_label(out, s->xlator);
        fprintf(out, "\"} %" PRIu64 "\n", s->value);
    }
    if (sink.is_oom)
        vl_glog("metrics", VL_LOG_WARNING, "out of memory: some translator "
                "metrics left out");
    free(sink.samples);
}


/* The newest graph whose translators are all initialised: a graph is
 * registered when built, before init(), and its classes' metrics
 * callbacks read private state that init() makes. */
static void
vl_metrics_pick_newest(vl_graph_t *graph, void *arg)
{
    struct vl_metrics_pick *pick = arg;

    if (!atomic_load_explicit(&vl__graph_core(graph)->is_serving,
                              memory_order_acquire))
        return;
    if (pick->newest == NULL || graph->id > pick->newest->id)
        pick->newest = graph;
}


/* Runs with the registry lock held: writes pick->newest's families. */
static void
vl_metrics_write_newest(vl_graph_t *graph, void *arg)
{
    struct vl_metrics_pick *pick = arg;
    FILE *out = pick->out;
    const char *volume = pick->volume;

    if (graph != pick->newest)
        return;
    vl_metrics_fop_family(out, graph, volume, "mortar_fop_total",
                          "Requests of the fop the translator handled and "
                          "that were answered.", VL_MF_CALLS);
    vl_metrics_fop_family(out, graph, volume, "mortar_fop_errors_total",
                          "Of those, the ones answered with an error.",
                          VL_MF_ERRORS);
    vl_metrics_fop_family(out, graph, volume, "mortar_fop_bytes_total",
                          "Bytes of reads answered and of writes asked.",
                          VL_MF_BYTES);
    vl_metrics_latency(out, graph, volume);
    vl_metrics_memory(out, graph, volume);
    vl_metrics_head(out, "mortar_requests_pending", "gauge",
                    "Requests in the graph not answered yet (on a client, "
                    "the FUSE requests in flight and what they wound).");
    fputs("mortar_requests_pending", out);
    vl_metrics_labels(out, volume, NULL, NULL);
    fprintf(out, "} %zu\n", vl_graph_pending(graph));
    vl_metrics_classes(out, graph, volume);
}


void
vl_metrics_write_graphs(FILE *out, const char *volume, const char *brick)
{
    struct vl_metrics_pick pick = {.out = out, .volume = volume};

    vl_metrics_brick = brick;
    /* Two passes under two lockings: a graph registered in between is
     * newer than the one picked and is simply shown at the next scrape;
     * one freed in between is not found by the second pass. */
    vl__graph_foreach(vl_metrics_pick_newest, &pick);
    if (pick.newest != NULL)
        vl__graph_foreach(vl_metrics_write_newest, &pick);
    vl_metrics_head(out, "mortar_fop_unrecorded_total", "counter",
                    "Translators a request reached that its hop list had "
                    "no room for (0 in a correct graph).");
    fputs("mortar_fop_unrecorded_total", out);
    vl_metrics_labels(out, volume, NULL, NULL);
    fprintf(out, "} %" PRIu64 "\n", vl_fop_stats_unrecorded());
    vl_metrics_brick = NULL;
}
