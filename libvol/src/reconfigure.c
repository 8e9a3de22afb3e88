/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reconfigure: applies a volfile of the same shape to a running graph.
 *
 * Transaction: parse every volume into a fresh conf (and cross_check);
 * find the translators whose options changed; refuse with -EXDEV if the
 * shape differs or a changed option is not VL_OPT_LIVE; then call
 * reconfigure() on each changed translator and swap its conf. If one
 * fails, the ones already applied get their old conf back (reconfigure()
 * with the old values, then swap back).
 *
 * Threads: run by the thread that manages the graph; translators' fops may
 * run meanwhile and read xl->conf: the old conf is retired, not freed, and
 * reaped once every request that was alive at the swap has finished.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "core.h"

/* Per-translator state of one reconfigure. */
struct vl_reconf {
    void *new_conf;   /* owned until swapped in */
    void *old_conf;   /* owned after swapping */
    bool has_changed; /* an option differs */
    bool is_applied;  /* reconfigure() succeeded and conf swapped */
};


static bool
vl_opt_is_string(const vl_option_t *opt)
{
    switch (opt->type) {
    case VL_OT_STR:
    case VL_OT_PATH:
    case VL_OT_ADDR:
    case VL_OT_ADDR_LIST:
    case VL_OT_XLATOR:
        return true;
    default:
        return false;
    }
}


static bool
vl_opt_differs(const vl_option_t *opt, const void *a, const void *b)
{
    const char *fa = (const char *)a + opt->offset;
    const char *fb = (const char *)b + opt->offset;

    if (vl_opt_is_string(opt)) {
        const char *sa = *(char *const *)(const void *)fa;
        const char *sb = *(char *const *)(const void *)fb;

        if (sa == NULL || sb == NULL)
            return sa != sb;
        return strcmp(sa, sb) != 0;
    }
    return memcmp(fa, fb, opt->size) != 0;
}


static int
vl_shape_check(vl_graph_t *graph, const vl_volfile_t *vf, vl_err_t *err)
{
    size_t i;
    size_t j;

    if (vf->n_vols != graph->n_xls) {
        vl_err_set(err, "graph has %zu volumes, new volfile %zu",
                   graph->n_xls, vf->n_vols);
        return -EXDEV;
    }
    for (i = 0; i < vf->n_vols; i++) {
        const struct vl_volfile_vol *vol = &vf->vols[i];
        vl_xlator_t *xl = graph->xls[i];

        if (strcmp(vol->name, xl->name) != 0
            || strcmp(vol->type, xl->cls->type) != 0
            || vol->n_subvols != xl->n_children) {
            vl_err_set(err, "volume '%s' differs in name, type or "
                       "subvolumes", vol->name);
            return -EXDEV;
        }
        for (j = 0; j < vol->n_subvols; j++) {
            if (strcmp(vol->subvols[j], xl->children[j]->name) != 0) {
                vl_err_set(err, "volume '%s': subvolumes differ", vol->name);
                return -EXDEV;
            }
        }
    }
    return 0;
}


/* Parses vol into r->new_conf and notes whether it changed. */
static int
vl_reconf_prepare(vl_xlator_t *xl, const struct vl_volfile_vol *vol,
                  struct vl_reconf *r, vl_err_t *err)
{
    const vl_xlator_class_t *cls = xl->cls;
    const vl_option_t *opt;
    vl_err_t e = {{0}};
    int rc;

    r->new_conf = vl_calloc(NULL, 1, cls->conf_size != 0 ? cls->conf_size
                                                         : 1, VL_MT_OPTION);
    if (r->new_conf == NULL) {
        vl_err_set(err, "volume '%s': out of memory", xl->name);
        return -ENOMEM;
    }
    rc = vl_conf_parse(cls->options, vol->opts, vol->n_opts, r->new_conf,
                       &e);
    if (rc == 0 && cls->cross_check != NULL) {
        rc = cls->cross_check(r->new_conf, &e);
        if (rc > 0)
            rc = -rc;
    }
    if (rc != 0) {
        vl_err_set(err, "volume '%s': %s", xl->name, e.msg);
        return rc == -ENOENT ? -EINVAL : rc;
    }
    for (opt = cls->options; opt != NULL && opt->key != NULL; opt++) {
        if (!vl_opt_differs(opt, xl->conf, r->new_conf))
            continue;
        if (!(opt->flags & VL_OPT_LIVE)) {
            vl_err_set(err, "volume '%s': option '%s' cannot change while "
                       "running", xl->name, opt->key);
            return -EXDEV;
        }
        r->has_changed = true;
    }
    return 0;
}


static void
vl_reconf_free_conf(vl_xlator_t *xl, void *conf)
{
    if (conf == NULL)
        return;
    vl_conf_clear(xl->cls->options, conf);
    vl_free(conf);
}


/* Puts conf on the graph's retired list; 0 or -ENOMEM (then conf is
 * simply not freed: a leak, never a use after free). */
static int
vl_reconf_retire(vl_graph_t *graph, vl_xlator_t *xl, void *conf)
{
    struct vl__graph_core *core = vl__graph_core(graph);
    struct vl__retired_conf *r = vl_calloc(NULL, 1, sizeof(*r), VL_MT_GRAPH);

    if (r == NULL)
        return -ENOMEM;
    r->xl = xl;
    r->conf = conf;
    r->next_id = vl__req_next_id();
    pthread_mutex_lock(&core->pend_lock);
    r->next = core->retired;
    core->retired = r;
    pthread_mutex_unlock(&core->pend_lock);
    return 0;
}


int
vl_graph_reconfigure(vl_graph_t *graph, const vl_volfile_t *vf,
                     vl_err_t *err)
{
    struct vl_reconf *rs;
    size_t i;
    int rc;

    rc = vl_shape_check(graph, vf, err);
    if (rc != 0)
        return rc;
    rs = vl_calloc(NULL, graph->n_xls, sizeof(*rs), VL_MT_GRAPH);
    if (rs == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    for (i = 0; i < graph->n_xls; i++) {
        rc = vl_reconf_prepare(graph->xls[i], &vf->vols[i], &rs[i], err);
        if (rc != 0)
            goto out;
    }
    for (i = 0; i < graph->n_xls; i++) {
        vl_xlator_t *xl = graph->xls[i];
        vl_err_t e = {{0}};

        if (!rs[i].has_changed)
            continue;
        if (xl->cls->reconfigure != NULL) {
            rc = xl->cls->reconfigure(xl, rs[i].new_conf, &e);
            if (rc > 0)
                rc = -rc;
            if (rc != 0) {
                vl_err_set(err, "volume '%s': reconfigure failed: %s",
                           xl->name, e.msg[0] != '\0' ? e.msg
                                                      : strerror(-rc));
                goto rollback;
            }
        }
        rs[i].old_conf = xl->conf;
        xl->conf = rs[i].new_conf;
        rs[i].new_conf = NULL;
        rs[i].is_applied = true;
    }
    rc = 0;
    goto out;
rollback:
    while (i-- > 0) {
        vl_xlator_t *xl = graph->xls[i];
        vl_err_t e = {{0}};

        if (!rs[i].is_applied)
            continue;
        if (xl->cls->reconfigure != NULL
            && xl->cls->reconfigure(xl, rs[i].old_conf, &e) != 0)
            vl_log(xl, VL_LOG_ERROR, "rollback of reconfigure failed: %s",
                   e.msg);
        rs[i].new_conf = xl->conf;
        xl->conf = rs[i].old_conf;
        rs[i].old_conf = NULL;
    }
    rc = rc == -ENOMEM ? rc : -EINVAL;
out:
    for (i = 0; i < graph->n_xls; i++) {
        vl_reconf_free_conf(graph->xls[i], rs[i].new_conf);
        if (rs[i].old_conf != NULL
            && vl_reconf_retire(graph, graph->xls[i], rs[i].old_conf) != 0)
            vl_log(graph->xls[i], VL_LOG_WARNING,
                   "no memory to retire the old configuration; kept it");
    }
    vl_free(rs);
    vl__graph_retired_reap(graph, false);
    return rc;
}


void
vl__graph_retired_reap(vl_graph_t *graph, bool is_final)
{
    struct vl__graph_core *core = vl__graph_core(graph);
    struct vl__retired_conf **pp, *dead = NULL, *r;
    uint64_t oldest;

    pthread_mutex_lock(&core->pend_lock);
    oldest = core->pend_head != NULL ? core->pend_head->id : UINT64_MAX;
    for (pp = &core->retired; (r = *pp) != NULL;) {
        if (is_final || oldest >= r->next_id) {
            *pp = r->next;
            r->next = dead;
            dead = r;
        } else {
            pp = &r->next;
        }
    }
    pthread_mutex_unlock(&core->pend_lock);
    while ((r = dead) != NULL) {
        dead = r->next;
        vl_reconf_free_conf(r->xl, r->conf);
        vl_free(r);
    }
}
