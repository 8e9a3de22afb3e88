/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-query: commands that only read the store and the brick processes:
 * volume info/status/list/get, volume set help, peer status, pool list,
 * peer probe (refused until peers exist) and volume statedump (signals
 * the bricks). Text output follows GlusterFS's layout.
 * Threads: the worker thread with md_state.lock held.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mortard.h"


static void
md_info_one(struct md_volume *vol, struct md_result *r, struct md_node *vl)
{
    struct md_node *v = md_node_add(vl, "volume", NULL);
    struct md_node *bl, *ol;

    md_sbuf_printf(&r->text, "\nVolume Name: %s\nType: Distribute\n"
                   "Volume ID: %s\nStatus: %s\nSnapshot Count: 0\n"
                   "Number of Bricks: %zu\nTransport-type: %s\nBricks:\n",
                   vol->name, vol->id, md_vol_status_name(vol->status),
                   vol->n_bricks, vol->transport);
    md_node_add(v, "name", vol->name);
    md_node_add(v, "id", vol->id);
    md_node_addf(v, "status", "%d", (int)vol->status);
    md_node_add(v, "statusStr", md_vol_status_name(vol->status));
    md_node_add(v, "typeStr", "Distribute");
    md_node_addf(v, "brickCount", "%zu", vol->n_bricks);
    md_node_add(v, "transport", "0");
    md_node_addf(v, "version", "%llu", (unsigned long long)vol->version);
    bl = md_node_add(v, "bricks", NULL);
    if (bl != NULL)
        bl->is_list = true;
    for (size_t i = 0; i < vol->n_bricks; i++) {
        struct md_brick *b = &vol->bricks[i];
        struct md_node *bn = md_node_add(bl, "brick", NULL);

        md_sbuf_printf(&r->text, "Brick%zu: %s:%s\n", i + 1, b->host,
                       b->path);
        md_node_addf(bn, "name", "%s:%s", b->host, b->path);
        md_node_add(bn, "hostname", b->host);
        md_node_add(bn, "path", b->path);
        md_node_addf(bn, "port", "%u", b->port);
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


static void
md_status_one(struct md_state *st, struct md_volume *vol, bool is_detail,
              struct md_result *r, struct md_node *vl)
{
    struct md_node *v = md_node_add(vl, "volume", NULL);

    md_sbuf_printf(&r->text, "Status of volume: %s\n", vol->name);
    md_node_add(v, "volName", vol->name);
    md_node_addf(v, "nodeCount", "%zu", vol->n_bricks);
    if (!is_detail)
        md_sbuf_printf(&r->text, "%-50s %-9s %-6s %s\n%s\n",
                       "Mortar process", "TCP Port", "Online", "Pid",
                       "------------------------------------------------"
                       "------------------------------");
    for (size_t i = 0; i < vol->n_bricks; i++) {
        struct md_brick *b = &vol->bricks[i];
        pid_t pid = md_brick_pid(st, vol, b);
        bool is_online = pid != 0 && md_brick_port_answers(st, b);
        struct md_node *n = md_node_add(v, "node", NULL);
        char name[4200];

        snprintf(name, sizeof(name), "Brick %s:%s", b->host, b->path);
        if (is_detail)
            md_sbuf_printf(&r->text, "----------------------------------"
                           "--------------------------------------------\n"
                           "Brick                : %s\nTCP Port             "
                           ": %u\nOnline               : %s\nPid            "
                           "      : %ld\nVolfile Version      : %llu\n",
                           name + 6, b->port, is_online ? "Y" : "N",
                           pid != 0 ? (long)pid : -1L,
                           (unsigned long long)vol->version);
        else
            md_sbuf_printf(&r->text, "%-50s %-9u %-6s %ld\n", name, b->port,
                           is_online ? "Y" : "N",
                           pid != 0 ? (long)pid : -1L);
        md_node_add(n, "hostname", b->host);
        md_node_add(n, "path", b->path);
        md_node_add(n, "peerid", st->node_id);
        md_node_addf(n, "status", "%d", is_online ? 1 : 0);
        md_node_addf(n, "port", "%u", b->port);
        md_node_addf(n, "pid", "%ld", pid != 0 ? (long)pid : -1L);
    }
    md_sbuf_printf(&r->text, "\n");
}


void
md_cmd_status(struct md_state *st, int argc, char **argv,
              struct md_result *r)
{
    const char *which = "all";
    bool is_detail = false;
    struct md_node *vs, *vl;
    size_t n = 0;

    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "detail") == 0 && i == argc - 1)
            is_detail = true;
        else if (i == 2)
            which = argv[i];
        else {
            md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: volume status "
                           "[all | <VOLNAME>] [detail]");
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
    }
    vs = md_node_add(r->root, "volStatus", NULL);
    vl = md_node_add(vs, "volumes", NULL);
    if (vl != NULL)
        vl->is_list = true;
    for (struct md_volume *v = st->vols; v != NULL; v = v->next)
        if (v->status == MD_VOL_STARTED &&
            (strcmp(which, "all") == 0 || strcmp(which, v->name) == 0)) {
            md_status_one(st, v, is_detail, r, vl);
            n++;
        }
    if (n == 0 && strcmp(which, "all") == 0)
        md_sbuf_printf(&r->text, "No volumes present\n");
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


/* The value of one option for `volume get`: set, or the default. */
static void
md_get_one(struct md_volume *vol, const vl_xlator_class_t *cls,
           const vl_option_t *o, struct md_result *r, struct md_node *ol)
{
    char canon[256];
    const char *val;
    struct md_node *on;

    snprintf(canon, sizeof(canon), "%s.%s", cls->prefix, o->key);
    val = md_vol_opt_get(vol, canon);
    if (val == NULL)
        val = o->def != NULL ? o->def : "(null)";
    md_sbuf_printf(&r->text, "%-40s %s\n", canon, val);
    on = md_node_add(ol, "Opt", NULL);
    md_node_add(on, "Option", canon);
    md_node_add(on, "Value", val);
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
        md_get_one(vol, cls, opt, r, ol);
        return;
    }
    md_sbuf_printf(&r->text, "%-40s %s\n", "Option", "Value");
    md_sbuf_printf(&r->text, "%-40s %s\n", "------", "-----");
    for (size_t i = 0; classes[i] != NULL; i++)
        for (opt = classes[i]->options; opt != NULL && opt->key != NULL;
             opt++)
            if (opt->flags & VL_OPT_SETTABLE)
                md_get_one(vol, classes[i], opt, r, ol);
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
