/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metrics: Prometheus text exposition (format 0.0.4) of a process's
 * translators, and the small HTTP/1.1 server that answers GET /metrics
 * (issue 25 item 1). doc/metrics.md lists every metric.
 *
 * vl_metrics_write_graphs writes the families libvol keeps for the newest
 * activated graph of the process (a client switching graphs briefly runs two; the
 * counters of the new one start at zero, which Prometheus's rate()
 * treats as a reset): per translator and fop, answered requests, errors,
 * bytes and a latency histogram (vol/fop-stats.h); memory per translator
 * (vol/mem.h); requests in flight; and each translator's own counters
 * (vl_xlator_class.metrics, e.g. cache hits).
 *
 * The server: one thread, poll(2) over a listening socket, a wake-up pipe
 * and at most VL_METRICS_MAX_CONNS connections; a request is read up to
 * VL_METRICS_MAX_REQUEST bytes and must be complete within
 * VL_METRICS_DEADLINE_MS of the accept, or the connection is closed. GET
 * (and HEAD) /metrics is answered 200 with the text, any other path 404,
 * any other method 405, a malformed or oversized request 400; every
 * answer closes the connection. The body is built by the server thread
 * (fill callback) when the request is complete.
 */
#ifndef VOL_METRICS_H
#define VOL_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "vol/common.h"

#define VL_METRICS_MAX_CONNS 16
#define VL_METRICS_MAX_REQUEST 8192
#define VL_METRICS_DEADLINE_MS 5000
#define VL_METRICS_DEFAULT_ADDRESS "127.0.0.1"

/* Writes a label value with Prometheus's escapes (\\, \", \n). */
void vl_metrics_write_label(FILE *out, const char *value);

/* Writes the libvol families of the newest activated graph (nothing of a
 * graph still being initialised), every series labelled
 * volume="volume" (the volume the process serves) and, when brick is not
 * NULL, brick="brick" (HOST:PATH of a brick process). */
void vl_metrics_write_graphs(FILE *out, const char *volume,
                             const char *brick);

/* A translator's own counters (vl_xlator_class.metrics). The callback
 * calls vl_metrics_emit once per value; samples of one name from every
 * translator are written together as one family, labelled volume and
 * xlator. name, type ("counter" or "gauge") and help must be static
 * strings and the same for every sample of a name; a counter's name ends
 * in _total. */
typedef struct vl_metrics_sink vl_metrics_sink_t;
void vl_metrics_emit(vl_metrics_sink_t *sink, const char *name,
                     const char *type, const char *help, uint64_t value);

/* The families every cache translator reports (md-cache, quick-read,
 * read-ahead, nl-cache), with one name and help whoever reports them:
 * mortar_cache_hits_total (requests the cache answered itself) and
 * mortar_cache_misses_total (requests it could have answered but sent
 * down; hit ratio = hits / (hits + misses)), and mortar_cache_bytes
 * (what it holds) for caches of data. */
void vl_metrics_emit_cache(vl_metrics_sink_t *sink, uint64_t hits,
                           uint64_t misses);
void vl_metrics_emit_cache_bytes(vl_metrics_sink_t *sink, uint64_t bytes);

/* Fills a response body; out is an open_memstream. */
typedef void vl_metrics_fill_fn(FILE *out, void *arg);

typedef struct vl_metrics_http vl_metrics_http_t;

/* Listens on address:port (address NULL: VL_METRICS_DEFAULT_ADDRESS; port
 * 0: one the kernel picks) and starts the server thread. Returns 0, or
 * -errno with err holding one line such as "metrics: cannot listen on
 * 127.0.0.1:9100: Address already in use". */
int vl_metrics_http_start(const char *address, unsigned port,
                          vl_metrics_fill_fn *fill, void *arg,
                          vl_metrics_http_t **out /* OUT */, vl_err_t *err);
/* The port it listens on (the chosen one for port 0). */
unsigned vl_metrics_http_port(const vl_metrics_http_t *srv);
/* Stops the thread, closes every socket, frees. NULL is allowed. */
void vl_metrics_http_stop(vl_metrics_http_t *srv);

#endif /* VOL_METRICS_H */
