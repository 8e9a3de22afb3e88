/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-switch: what mortarfsd needs to move a mounted FUSE client to a
 * new graph without a remount (the graph switch, doc/architecture.md).
 *
 *   new = build + init + activate the new graph (its mount/fuse adopts
 *         the mount of the running one instead of mounting again);
 *   vl_graph_wait_ready(new): ready once its child is up;
 *   vfuse_switch_activate(new): kernel messages now go to new;
 *   vl_graph_free(old) (on another thread): waits until no call runs in
 *         old any more, then tears old down, leaving the mount alone.
 *
 * Threads: any thread but a loop thread.
 */
#ifndef MORTAR_FUSE_SWITCH_H
#define MORTAR_FUSE_SWITCH_H

#include "vol/vol.h"

/* True if graph's top is a mount/fuse. */
bool vfuse_switch_is_fuse(const vl_graph_t *graph);
/* Makes graph's mount/fuse the one its mount's messages go to. 0, or
 * -EINVAL with err set (top not mount/fuse, not attached to a mount). */
int vfuse_switch_activate(vl_graph_t *graph, vl_err_t *err);
/* Process shutdown: graphs being freed stop waiting for their calls to
 * finish (the calls are failed by the teardown instead). */
void vfuse_switch_abort_waits(void);

#endif /* MORTAR_FUSE_SWITCH_H */
