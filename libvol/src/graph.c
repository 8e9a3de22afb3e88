/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * graph: builds translators from a volfile, validates the shape, lays out
 * per-translator context areas, runs init/activate/fini, tracks readiness
 * and the list of live requests, and keeps the process's list of graphs
 * for statedump.
 *
 * Per graph: struct vl__graph_core (pending list, readiness).
 * Threads: build/init/free run on the caller's thread (never a loop thread
 * of the same graph for free); pend_lock guards only list insert/remove;
 * ready_lock guards readiness. Lock order: vl_graphs_lock, then pend_lock.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"

#define VL_GRAPH_LRU_LIMIT 16384

/* Graph and its core in one allocation. */
struct vl_graph_block {
    vl_graph_t graph;           /* public part */
    struct vl__graph_core core; /* private part */
};

static pthread_mutex_t vl_graphs_lock = PTHREAD_MUTEX_INITIALIZER;
static vl_graph_t *vl_graphs;          /* registered; vl_graphs_lock */
static atomic_uint_least64_t vl_graph_next_id = 1;


void
vl__graph_register(vl_graph_t *graph)
{
    pthread_mutex_lock(&vl_graphs_lock);
    vl__graph_core(graph)->reg_next = vl_graphs;
    vl_graphs = graph;
    pthread_mutex_unlock(&vl_graphs_lock);
}


void
vl__graph_unregister(vl_graph_t *graph)
{
    vl_graph_t **pp;

    pthread_mutex_lock(&vl_graphs_lock);
    for (pp = &vl_graphs; *pp != NULL; pp = &vl__graph_core(*pp)->reg_next) {
        if (*pp == graph) {
            *pp = vl__graph_core(graph)->reg_next;
            break;
        }
    }
    pthread_mutex_unlock(&vl_graphs_lock);
}


void
vl__graph_foreach(void (*fn)(vl_graph_t *graph, void *arg), void *arg)
{
    vl_graph_t *g;

    pthread_mutex_lock(&vl_graphs_lock);
    for (g = vl_graphs; g != NULL; g = vl__graph_core(g)->reg_next)
        fn(g, arg);
    pthread_mutex_unlock(&vl_graphs_lock);
}


void
vl__graph_pending_add(vl_graph_t *graph, vl_req_t *req)
{
    struct vl__graph_core *core = vl__graph_core(graph);
    struct vl__req_core *rc = vl__req_core(req);

    pthread_mutex_lock(&core->pend_lock);
    rc->prev = core->pend_tail;
    rc->next = NULL;
    if (core->pend_tail != NULL)
        vl__req_core(core->pend_tail)->next = req;
    else
        core->pend_head = req;
    core->pend_tail = req;
    core->n_pending++;
    pthread_mutex_unlock(&core->pend_lock);
}


void
vl__graph_pending_del(vl_graph_t *graph, vl_req_t *req)
{
    struct vl__graph_core *core = vl__graph_core(graph);
    struct vl__req_core *rc = vl__req_core(req);

    pthread_mutex_lock(&core->pend_lock);
    if (rc->prev != NULL)
        vl__req_core(rc->prev)->next = rc->next;
    else
        core->pend_head = rc->next;
    if (rc->next != NULL)
        vl__req_core(rc->next)->prev = rc->prev;
    else
        core->pend_tail = rc->prev;
    core->n_pending--;
    pthread_mutex_unlock(&core->pend_lock);
}


size_t
vl_graph_pending(vl_graph_t *graph)
{
    struct vl__graph_core *core = vl__graph_core(graph);
    size_t n;

    pthread_mutex_lock(&core->pend_lock);
    n = core->n_pending;
    pthread_mutex_unlock(&core->pend_lock);
    return n;
}


vl_xlator_t *
vl_graph_find(vl_graph_t *graph, const char *name)
{
    size_t i;

    for (i = 0; i < graph->n_xls; i++)
        if (strcmp(graph->xls[i]->name, name) == 0)
            return graph->xls[i];
    return NULL;
}


static void
vl_xlator_free(vl_xlator_t *xl)
{
    if (xl == NULL)
        return;
    if (xl->conf != NULL) {
        vl_conf_clear(xl->cls->options, xl->conf);
        vl_free(xl->conf);
    }
    vl_free(xl->children);
    vl_free(xl->parents);
    vl_free(xl->name);
    vl__mem_acct_put(xl->mem_acct);
    vl__fop_stats_free(xl->fop_stats);
    vl_free(xl);
}


/* Creates the translator for vol (class, conf) without links. */
static int
vl_xlator_new(vl_graph_t *graph, const vl_volfile_t *vf,
              const struct vl_volfile_vol *vol, vl_xlator_t **out,
              vl_err_t *err)
{
    const vl_xlator_class_t *cls = vl_registry_find(vol->type);
    vl_xlator_t *xl = NULL;
    vl_err_t e = {{0}};
    int rc = -ENOMEM;

    if (cls == NULL) {
        vl_err_set(err, "%s:%d: volume '%s': unknown type '%s'", vf->source,
                   vol->line, vol->name, vol->type);
        return -EINVAL;
    }
    xl = vl_calloc(NULL, 1, sizeof(*xl), VL_MT_XLATOR);
    if (xl == NULL)
        goto nomem;
    xl->cls = cls;
    xl->graph = graph;
    xl->name = vl_strdup(NULL, vol->name, VL_MT_XLATOR);
    if (xl->name == NULL)
        goto nomem;
    xl->mem_acct = vl__mem_acct_new(vol->name, cls->mem_types);
    if (xl->mem_acct == NULL)
        goto nomem;
    xl->fop_stats = vl__fop_stats_new();
    if (xl->fop_stats == NULL)
        goto nomem;
    xl->conf = vl_calloc(NULL, 1, cls->conf_size != 0 ? cls->conf_size : 1,
                         VL_MT_OPTION);
    if (xl->conf == NULL)
        goto nomem;
    rc = vl_conf_parse(cls->options, vol->opts, vol->n_opts, xl->conf, &e);
    if (rc == 0 && cls->cross_check != NULL) {
        rc = cls->cross_check(xl->conf, &e);
        if (rc > 0)
            rc = -rc;
    }
    if (rc != 0) {
        vl_err_set(err, "%s:%d: volume '%s': %s", vf->source, vol->line,
                   vol->name, e.msg);
        goto out;
    }
    *out = xl;
    return 0;
nomem:
    rc = -ENOMEM;
    vl_err_set(err, "%s:%d: volume '%s': out of memory", vf->source,
               vol->line, vol->name);
out:
    vl_xlator_free(xl);
    return rc;
}


static const char *
vl_child_rule(const vl_xlator_t *xl)
{
    unsigned f = xl->cls->flags;

    if ((f & VL_XL_LEAF) && xl->n_children != 0)
        return "takes no subvolumes";
    if ((f & VL_XL_ONE_CHILD) && xl->n_children != 1)
        return "needs exactly one subvolume";
    if ((f & VL_XL_MANY_CHILDREN) && xl->n_children == 0)
        return "needs at least one subvolume";
    return NULL;
}


/* Links xl (index i) to its children, which must come earlier. */
static int
vl_xlator_link(vl_graph_t *graph, const vl_volfile_t *vf, size_t i,
               vl_err_t *err)
{
    const struct vl_volfile_vol *vol = &vf->vols[i];
    vl_xlator_t *xl = graph->xls[i];
    const char *rule;
    size_t j;
    size_t k;

    if (vol->n_subvols > 0) {
        xl->children = vl_calloc(NULL, vol->n_subvols, sizeof(*xl->children),
                                 VL_MT_XLATOR);
        if (xl->children == NULL) {
            vl_err_set(err, "volume '%s': out of memory", vol->name);
            return -ENOMEM;
        }
    }
    for (j = 0; j < vol->n_subvols; j++) {
        for (k = 0; k < i; k++)
            if (strcmp(graph->xls[k]->name, vol->subvols[j]) == 0)
                break;
        if (k == i) {
            vl_err_set(err, "%s:%d: volume '%s': subvolume '%s' is not "
                       "defined above it", vf->source, vol->line, vol->name,
                       vol->subvols[j]);
            return -EINVAL;
        }
        xl->children[xl->n_children++] = graph->xls[k];
        graph->xls[k]->n_parents++;
    }
    rule = vl_child_rule(xl);
    if (rule != NULL) {
        vl_err_set(err, "%s:%d: volume '%s' (type %s) %s, has %zu",
                   vf->source, vol->line, vol->name, vol->type, rule,
                   xl->n_children);
        return -EINVAL;
    }
    return 0;
}


static int
vl_graph_link_parents(vl_graph_t *graph)
{
    size_t i;
    size_t j;

    for (i = 0; i < graph->n_xls; i++) {
        vl_xlator_t *xl = graph->xls[i];

        if (xl->n_parents == 0)
            continue;
        xl->parents = vl_calloc(NULL, xl->n_parents, sizeof(*xl->parents),
                                VL_MT_XLATOR);
        if (xl->parents == NULL)
            return -ENOMEM;
        xl->n_parents = 0;
    }
    for (i = 0; i < graph->n_xls; i++) {
        vl_xlator_t *xl = graph->xls[i];

        for (j = 0; j < xl->n_children; j++) {
            vl_xlator_t *child = xl->children[j];

            child->parents[child->n_parents++] = xl;
        }
    }
    return 0;
}


static void
vl_graph_layout(vl_graph_t *graph)
{
    struct vl__graph_core *core = vl__graph_core(graph);
    size_t i;
    size_t j;

    for (i = 0; i < graph->n_xls; i++) {
        vl_xlator_t *xl = graph->xls[i];
        const vl_xlator_class_t *cls = xl->cls;
        unsigned depth = 0;

        /* Children come before their parents in xls, so theirs is known:
         * the graph's depth bounds a request's passes (req.c's hops). */
        for (j = 0; j < xl->n_children; j++)
            if (xl->children[j]->fop_stats->depth > depth)
                depth = xl->children[j]->fop_stats->depth;
        xl->fop_stats->depth = depth + 1;
        if (depth + 1 > core->max_hops)
            core->max_hops = depth + 1;

        xl->index = (unsigned)i;
        xl->inode_ctx_off = graph->inode_ctx_size;
        graph->inode_ctx_size += VL__ALIGN_UP(cls->inode_ctx_size);
        xl->fd_ctx_off = graph->fd_ctx_size;
        graph->fd_ctx_size += VL__ALIGN_UP(cls->fd_ctx_size);
        if (cls->req_priv_size > graph->req_priv_size)
            graph->req_priv_size = cls->req_priv_size;
    }
    graph->req_priv_size = VL__ALIGN_UP(graph->req_priv_size);
}


static int
vl_graph_core_init(struct vl__graph_core *core)
{
    pthread_condattr_t attr;
    int rc;

    rc = pthread_mutex_init(&core->pend_lock, NULL);
    if (rc != 0)
        return -rc;
    rc = pthread_mutex_init(&core->ready_lock, NULL);
    if (rc != 0)
        goto fail_pend;
    rc = pthread_condattr_init(&attr);
    if (rc != 0)
        goto fail_ready;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    rc = pthread_cond_init(&core->ready_cond, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0)
        goto fail_ready;
    return 0;
fail_ready:
    pthread_mutex_destroy(&core->ready_lock);
fail_pend:
    pthread_mutex_destroy(&core->pend_lock);
    return -rc;
}


/* Frees a graph that was never registered or initialised. */
static void
vl_graph_free_built(vl_graph_t *graph, bool has_core_locks)
{
    struct vl__graph_core *core = vl__graph_core(graph);
    size_t i;

    if (has_core_locks)
        vl__graph_retired_reap(graph, true); /* before the xlators go */
    if (graph->itable != NULL)
        vl_inode_table_free(graph->itable);
    for (i = 0; i < graph->n_xls; i++)
        vl_xlator_free(graph->xls[i]);
    vl_free(graph->xls);
    vl_free(core->is_inited);
    if (has_core_locks) {
        pthread_cond_destroy(&core->ready_cond);
        pthread_mutex_destroy(&core->ready_lock);
        pthread_mutex_destroy(&core->pend_lock);
    }
    vl_free(graph);
}


vl_graph_t *
vl_graph_build(const vl_volfile_t *vf, vl_loop_t *loop, vl_err_t *err)
{
    const struct vl_volfile_vol *topvol;
    struct vl_graph_block *blk;
    vl_graph_t *graph;
    size_t i;
    int rc;

    topvol = vl_volfile_top(vf, err);
    if (topvol == NULL)
        return NULL;
    blk = vl_calloc(NULL, 1, sizeof(*blk), VL_MT_GRAPH);
    if (blk == NULL) {
        vl_err_set(err, "%s: out of memory", vf->source);
        return NULL;
    }
    graph = &blk->graph;
    graph->core = &blk->core;
    graph->loop = loop;
    graph->xls = vl_calloc(NULL, vf->n_vols, sizeof(*graph->xls),
                           VL_MT_GRAPH);
    blk->core.is_inited = vl_calloc(NULL, vf->n_vols, sizeof(bool),
                                    VL_MT_GRAPH);
    if (graph->xls == NULL || blk->core.is_inited == NULL) {
        vl_err_set(err, "%s: out of memory", vf->source);
        goto fail;
    }
    for (i = 0; i < vf->n_vols; i++) {
        rc = vl_xlator_new(graph, vf, &vf->vols[i], &graph->xls[i], err);
        if (rc != 0)
            goto fail;
        graph->n_xls++;
        if (&vf->vols[i] == topvol)
            graph->top = graph->xls[i];
    }
    for (i = 0; i < vf->n_vols; i++)
        if (vl_xlator_link(graph, vf, i, err) != 0)
            goto fail;
    for (i = 0; i < graph->n_xls; i++) {
        vl_xlator_t *xl = graph->xls[i];

        if ((xl->cls->flags & VL_XL_TOP_ONLY) && xl != graph->top) {
            vl_err_set(err, "%s:%d: volume '%s' (type %s) must be the top "
                       "of the graph", vf->source, vf->vols[i].line,
                       xl->name, xl->cls->type);
            goto fail;
        }
    }
    if (vl_graph_link_parents(graph) != 0) {
        vl_err_set(err, "%s: out of memory", vf->source);
        goto fail;
    }
    vl_graph_layout(graph);
    graph->itable = vl_inode_table_new(graph, graph->inode_ctx_size,
                                       VL_GRAPH_LRU_LIMIT);
    if (graph->itable == NULL) {
        vl_err_set(err, "%s: out of memory", vf->source);
        goto fail;
    }
    rc = vl_graph_core_init(&blk->core);
    if (rc != 0) {
        vl_err_set(err, "%s: %s", vf->source, strerror(-rc));
        goto fail;
    }
    graph->id = atomic_fetch_add(&vl_graph_next_id, 1);
    vl__graph_register(graph);
    return graph;
fail:
    vl_graph_free_built(graph, false);
    return NULL;
}


int
vl_graph_init(vl_graph_t *graph, vl_err_t *err)
{
    struct vl__graph_core *core = vl__graph_core(graph);
    size_t i;
    int rc = 0;

    /* xls is in volfile order, where children come before parents. */
    for (i = 0; i < graph->n_xls; i++) {
        vl_xlator_t *xl = graph->xls[i];
        vl_err_t e = {{0}};

        if (core->is_inited[i] || xl->cls->init == NULL) {
            core->is_inited[i] = true;
            continue;
        }
        rc = xl->cls->init(xl, &e);
        if (rc != 0) {
            if (rc > 0)
                rc = -rc;
            vl_err_set(err, "volume '%s' (type %s): init failed: %s",
                       xl->name, xl->cls->type,
                       e.msg[0] != '\0' ? e.msg : strerror(-rc));
            goto fail;
        }
        core->is_inited[i] = true;
    }
    return 0;
fail:
    while (i-- > 0) {
        vl_xlator_t *xl = graph->xls[i];

        if (core->is_inited[i] && xl->cls->fini != NULL)
            xl->cls->fini(xl);
        core->is_inited[i] = false;
    }
    return rc;
}


void
vl_graph_activate(vl_graph_t *graph)
{
    vl__graph_core(graph)->is_activated = true;
    atomic_store_explicit(&vl__graph_core(graph)->is_serving, true,
                          memory_order_release);
    vl_notify(graph->top, VL_EV_PARENT_UP, NULL);
}


void
vl_graph_set_ready(vl_graph_t *graph, int status, const char *reason)
{
    struct vl__graph_core *core = vl__graph_core(graph);

    pthread_mutex_lock(&core->ready_lock);
    core->is_ready = true;
    core->ready_status = status;
    snprintf(core->ready_reason, sizeof(core->ready_reason), "%s",
             reason != NULL ? reason : "");
    pthread_cond_broadcast(&core->ready_cond);
    pthread_mutex_unlock(&core->ready_lock);
}


void
vl_graph_set_last_error(vl_graph_t *graph, const char *reason)
{
    struct vl__graph_core *core = vl__graph_core(graph);

    pthread_mutex_lock(&core->ready_lock);
    snprintf(core->last_error, sizeof(core->last_error), "%s",
             reason != NULL ? reason : "");
    pthread_mutex_unlock(&core->ready_lock);
}


int
vl_graph_wait_ready(vl_graph_t *graph, int timeout_ms, char *reason,
                    size_t len)
{
    struct vl__graph_core *core = vl__graph_core(graph);
    struct timespec deadline;
    int rc = 0;

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    if (timeout_ms >= 0) {
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&core->ready_lock);
    while (!core->is_ready && rc == 0) {
        if (timeout_ms < 0)
            rc = pthread_cond_wait(&core->ready_cond, &core->ready_lock);
        else
            rc = pthread_cond_timedwait(&core->ready_cond, &core->ready_lock,
                                        &deadline);
    }
    if (core->is_ready) {
        rc = core->ready_status;
        if (reason != NULL && len > 0)
            snprintf(reason, len, "%s", core->ready_reason);
    } else {
        rc = -ETIMEDOUT;
        if (reason != NULL && len > 0)
            snprintf(reason, len, "%s", core->last_error);
    }
    pthread_mutex_unlock(&core->ready_lock);
    return rc;
}


static void
vl_graph_log_pending(vl_graph_t *graph)
{
    struct vl__graph_core *core = vl__graph_core(graph);
    vl_req_t *req;
    vl_req_t *next;

    pthread_mutex_lock(&core->pend_lock);
    for (req = core->pend_head; req != NULL; req = next) {
        next = vl__req_core(req)->next;
        vl_glog("graph", VL_LOG_ERROR,
                "graph %llu freed with request %llu (%s) pending: "
                "wound_from=%s wound_to=%s",
                (unsigned long long)graph->id, (unsigned long long)req->id,
                vl_fop_name(req->op),
                req->wound_from != NULL ? req->wound_from->name : "-",
                req->xl != NULL ? req->xl->name : "-");
        /* Detach it so that freeing it later does not touch the graph. */
        req->graph = NULL;
    }
    core->pend_head = core->pend_tail = NULL;
    core->n_pending = 0;
    pthread_mutex_unlock(&core->pend_lock);
}


void
vl_graph_free(vl_graph_t *graph)
{
    struct vl__graph_core *core;
    size_t i;

    if (graph == NULL)
        return;
    core = vl__graph_core(graph);
    vl__graph_unregister(graph);
    if (core->is_activated && graph->top != NULL)
        vl_notify(graph->top, VL_EV_PARENT_DOWN, NULL);
    vl_graph_log_pending(graph);
    /* Forget cached inodes while the translators' forget() still works. */
    if (graph->itable != NULL) {
        vl_inode_table_free(graph->itable);
        graph->itable = NULL;
    }
    for (i = graph->n_xls; i-- > 0;) {
        vl_xlator_t *xl = graph->xls[i];

        if (core->is_inited[i] && xl->cls->fini != NULL)
            xl->cls->fini(xl);
        core->is_inited[i] = false;
    }
    vl_graph_free_built(graph, true);
}
