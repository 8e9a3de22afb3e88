/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * switch: the live graph switch of a FUSE client (no remount).
 *
 * When a new volfile changes more than live options (vl_graph_reconfigure
 * says -EXDEV), the main thread builds, inits and activates a new graph on
 * the same event loop; its mount/fuse adopts the running mount. Once the
 * new graph is ready (children up, bounded by --ready-timeout) the mount
 * is handed to it in one step (vfuse_switch_activate); if it does not get
 * ready, it is freed and the old graph keeps serving, with one log line
 * saying why. Switches run on the main thread, one at a time; a volfile
 * arriving meanwhile waits in the signal queue and is applied after.
 *
 * The old graph goes to the reaper thread, whose vl_graph_free blocks in
 * mount/fuse's PARENT_DOWN until the last call still running in that
 * graph is answered (a condition variable, no polling), then tears it
 * down. At exit fsd_switch_shutdown stops those waits (the calls are then
 * failed by the teardown) and joins the reaper, so that no old graph
 * outlives the event loop.
 *
 * Per process: fsd_reaper (its lock guards the queue and the stop flag).
 * Threads: fsd_switch_graph on the main thread; the reaper thread only
 * frees graphs.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fsd.h"
#include "xlators/mount/fuse/fuse-switch.h"

#define FSD_DOMAIN "mortarfsd"

/* One graph waiting to be freed. */
struct fsd_dead_graph {
    vl_graph_t *graph;           /* owned */
    struct fsd_dead_graph *next; /* queue order */
};

struct fsd_reaper {
    pthread_mutex_t lock;          /* guards the fields below */
    pthread_cond_t cond;           /* signalled on a new graph or stop */
    struct fsd_dead_graph *head;   /* owned queue */
    struct fsd_dead_graph **tail;  /* where the next one goes */
    bool is_started;               /* thread exists */
    bool is_stopping;              /* exit once the queue is empty */
    pthread_t thread;              /* joined by fsd_switch_shutdown */
};

static struct fsd_reaper fsd_reaper = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
};


static void
fsd_graph_free_logged(vl_graph_t *graph)
{
    unsigned long long id = (unsigned long long)graph->id;

    vl_graph_free(graph);
    vl_glog(FSD_DOMAIN, VL_LOG_INFO, "old graph %llu freed", id);
}


static void *
fsd_reaper_main(void *arg)
{
    struct fsd_reaper *r = arg;
    struct fsd_dead_graph *d;

    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (r->head == NULL && !r->is_stopping)
            pthread_cond_wait(&r->cond, &r->lock);
        d = r->head;
        if (d == NULL)
            break; /* stopping, nothing left */
        r->head = d->next;
        if (r->head == NULL)
            r->tail = &r->head;
        pthread_mutex_unlock(&r->lock);
        /* Blocks until the graph's last FUSE call is answered. */
        fsd_graph_free_logged(d->graph);
        free(d);
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}


/* Hands graph to the reaper; frees it here if that is not possible. */
static void
fsd_reaper_add(vl_graph_t *graph)
{
    struct fsd_reaper *r = &fsd_reaper;
    struct fsd_dead_graph *d = calloc(1, sizeof(*d));
    int rc = 0;

    pthread_mutex_lock(&r->lock);
    if (d != NULL && !r->is_started) {
        r->tail = &r->head;
        /* Signals stay blocked in it: it inherits main's mask. */
        rc = pthread_create(&r->thread, NULL, fsd_reaper_main, r);
        r->is_started = rc == 0;
    }
    if (d != NULL && r->is_started && !r->is_stopping) {
        d->graph = graph;
        *r->tail = d;
        r->tail = &d->next;
        pthread_cond_signal(&r->cond);
        d = NULL;
        graph = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    if (graph != NULL) {
        vl_glog(FSD_DOMAIN, VL_LOG_WARNING, "no reaper thread (%s): freeing "
                "old graph %llu on the main thread",
                strerror(rc != 0 ? rc : ENOMEM),
                (unsigned long long)graph->id);
        fsd_graph_free_logged(graph);
    }
    free(d);
}


void
fsd_switch_shutdown(void)
{
    struct fsd_reaper *r = &fsd_reaper;
    bool is_started;

    vfuse_switch_abort_waits();
    pthread_mutex_lock(&r->lock);
    r->is_stopping = true;
    is_started = r->is_started;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    if (is_started)
        pthread_join(r->thread, NULL);
    pthread_mutex_lock(&r->lock);
    r->is_started = false;
    pthread_mutex_unlock(&r->lock);
}


int
fsd_switch_graph(vl_graph_t **graph, const vl_volfile_t *vf, const char *what,
                 unsigned ready_timeout_s)
{
    vl_err_t err = {.msg = ""};
    char reason[sizeof(err.msg)] = "";
    unsigned long long old_id = (unsigned long long)(*graph)->id;
    vl_graph_t *ng;
    int rc;

    ng = vl_graph_build(vf, (*graph)->loop, &err);
    if (ng == NULL) {
        vl_glog(FSD_DOMAIN, VL_LOG_ERROR, "%s: graph switch failed: %s; "
                "graph %llu keeps serving", what, err.msg, old_id);
        return -EINVAL;
    }
    rc = vl_graph_init(ng, &err);
    if (rc != 0) {
        vl_glog(FSD_DOMAIN, VL_LOG_ERROR, "%s: graph switch failed: %s; "
                "graph %llu keeps serving", what, err.msg, old_id);
        vl_graph_free(ng);
        return rc;
    }
    vl_graph_activate(ng);
    rc = vl_graph_wait_ready(ng, (int)ready_timeout_s * 1000, reason,
                             sizeof(reason));
    if (rc == 0)
        rc = vfuse_switch_activate(ng, &err);
    else if (reason[0] != '\0')
        snprintf(err.msg, sizeof(err.msg), "%s", reason);
    else
        snprintf(err.msg, sizeof(err.msg), "%s", strerror(-rc));
    if (rc != 0) {
        vl_glog(FSD_DOMAIN, VL_LOG_ERROR, "%s: graph switch failed: new "
                "graph %llu not ready: %s; graph %llu keeps serving", what,
                (unsigned long long)ng->id, err.msg, old_id);
        vl_graph_free(ng);
        return rc;
    }
    vl_glog(FSD_DOMAIN, VL_LOG_INFO, "%s: switched from graph %llu to graph "
            "%llu without a remount", what, old_id,
            (unsigned long long)ng->id);
    fsd_reaper_add(*graph);
    *graph = ng;
    return 0;
}
