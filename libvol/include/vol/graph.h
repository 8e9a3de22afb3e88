/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * graph: translators built from a volfile and run on an event loop.
 *
 *   vf = vl_volfile_load(path, &err);
 *   g = vl_graph_build(vf, loop, &err);     // classes, options, links
 *   vl_graph_init(g, &err);                 // init() bottom-up
 *   vl_graph_activate(g);                   // PARENT_UP from the top
 *   vl_graph_wait_ready(g, timeout_ms);     // top said it is usable
 *   ...
 *   vl_graph_free(g);                       // PARENT_DOWN, fini(), free
 *
 * Build validates: every type is registered, every option known and in
 * range (through the class tables), child counts match the class flags,
 * exactly one top, no cycles, TOP_ONLY classes only at the top.
 */
#ifndef VOL_GRAPH_H
#define VOL_GRAPH_H

#include <pthread.h>
#include <stdio.h>

#include "vol/inode.h"
#include "vol/loop.h"
#include "vol/volfile.h"
#include "vol/xlator.h"

typedef struct vl_graph {
    vl_xlator_t **xls;        /* owned; in volfile order (children first) */
    size_t n_xls;
    vl_xlator_t *top;         /* borrowed from xls */
    vl_loop_t *loop;          /* borrowed; runs the graph's callbacks */
    vl_inode_table_t *itable; /* owned */
    size_t req_priv_size;     /* largest cls->req_priv_size */
    size_t inode_ctx_size;    /* sum of aligned cls->inode_ctx_size */
    size_t fd_ctx_size;       /* sum of aligned cls->fd_ctx_size */
    uint64_t id;              /* graph generation, for logs */
    /* Core's private state (pending requests, readiness) follows. */
    void *core;
} vl_graph_t;

vl_graph_t *vl_graph_build(const vl_volfile_t *vf, vl_loop_t *loop,
                           vl_err_t *err);
int vl_graph_init(vl_graph_t *graph, vl_err_t *err);
void vl_graph_activate(vl_graph_t *graph);
/* The top translator calls this once it is usable (status 0: FUSE
 * mounted, server listening) or failed (-errno, reason). */
void vl_graph_set_ready(vl_graph_t *graph, int status, const char *reason);
/* Any translator may record why the graph is not usable yet (e.g.
 * protocol/client: "127.0.0.1:24010: Connection refused"); the last one is
 * the reason vl_graph_wait_ready gives on timeout. */
void vl_graph_set_last_error(vl_graph_t *graph, const char *reason);
/* Waits for vl_graph_set_ready; returns its status, or -ETIMEDOUT. If
 * reason is not NULL it receives a copy of the reason (max len bytes):
 * the ready reason, or on timeout the last error recorded. */
int vl_graph_wait_ready(vl_graph_t *graph, int timeout_ms, char *reason,
                        size_t len);
/* Tears down: PARENT_DOWN, fini() top-down, frees everything. Pending
 * requests are logged with wound_from/wound_to. */
void vl_graph_free(vl_graph_t *graph);
vl_xlator_t *vl_graph_find(vl_graph_t *graph, const char *name);
/* Number of requests alive in the graph. */
size_t vl_graph_pending(vl_graph_t *graph);

/* Applies a new volfile of the same shape (same names, types and links;
 * only option values differ): parses every conf, calls reconfigure() on the
 * translators whose options changed, rolls back on failure. Returns 0,
 * -EINVAL with err set, or -EXDEV when the shape differs or a changed
 * option is not VL_OPT_LIVE (a new graph is needed). */
int vl_graph_reconfigure(vl_graph_t *graph, const vl_volfile_t *vf,
                         vl_err_t *err);

/* Statedump: writes every registered graph's translators (type, effective
 * options, children, memory by type, pending requests, dump() output) to
 * out in the documented text format (doc/statedump.md). */
void vl_statedump_write(FILE *out);
/* A whole dump file, DIR/NAME.PID.dump.TIME (its path into path; dir is
 * made if missing): "DUMP-START-TIME: T", a blank line,
 * vl_statedump_write, then extra(out, arg) if not NULL (the process's
 * own sections), then "DUMP-END-TIME: T" (GlusterFS's markers; T is
 * "YYYY-MM-DD HH:MM:SS.uuuuuu" UTC). Written under a hidden temporary
 * name, fsync'd, then renamed: a file by the final name is complete.
 * 0 or -errno (nothing is left behind). */
int vl_statedump_file(const char *dir, const char *name,
                      void (*extra)(FILE *out, void *arg), void *arg,
                      char *path, size_t len);
/* Graphs register themselves at build; these are for the process. */
void vl__graph_register(vl_graph_t *graph);
void vl__graph_unregister(vl_graph_t *graph);

#endif /* VOL_GRAPH_H */
