/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd: the CLI grammar (GlusterFS's) and the commands that change the
 * store: volume create (one brick; several: distribute; replica N:
 * replicate sets, their words and rules in replica.c) /start/stop/
 * delete/set/reset. Read-only commands are in cmd-query.c, add-brick and
 * remove-brick in cmd-brick.c, rebalance in rebalance.c, profile and
 * top in cmd-profile.c. Every command
 * validates everything first and changes nothing on failure; the result
 * carries GlusterFS's exit codes (0 ok, 1 failure, 2 usage) and one error
 * line. `volume start` clears the brick supervision's give-up state
 * (supervise.c).
 * Threads: the worker thread with md_state.lock held.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "mortard.h"
#include "profile.h"

#define MD_USAGE_CREATE "volume create <NEW-VOLNAME> [replica <COUNT>] " \
                        "[transport tcp] <NEW-BRICK> ... [force]"

/* GlusterFS's warning for replica 2 (its CLI asks before creating; ours
 * asks too on a terminal, cli/args.c, and mortard prints it). */
#define MD_REPLICA2_WARNING "Replica 2 volumes are prone to split-brain. " \
    "Use Arbiter or Replica 3 to avoid this. See: " \
    "http://docs.gluster.org/en/latest/Administrator%20Guide/" \
    "Split%20brain%20and%20ways%20to%20deal%20with%20it/."


static void
md_usage(struct md_result *r, const char *usage)
{
    md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: %s", usage);
}


/* The bricks' sets (replica > 1) each span servers, unless force. */
int
md_check_sets_spread(struct md_state *st, char **hosts, char **paths,
                     size_t n, unsigned replica, bool force, vl_err_t *err)
{
    bool *is_local;
    int rc;

    if (force || replica < 2)
        return 0;
    is_local = calloc(n + 1, sizeof(*is_local));
    if (is_local == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        struct md_brick tmp = {.host = hosts[i], .path = paths[i]};

        is_local[i] = md_brick_is_local(st, &tmp);
    }
    rc = md_replica_same_server(hosts, is_local, n, replica, err);
    free(is_local);
    return rc;
}


static void
md_cmd_create(struct md_state *st, int argc, char **argv,
              struct md_result *r)
{
    const char *name;
    struct md_brick_args ba;
    char **hosts = NULL, **paths = NULL;
    struct md_volume *vol = NULL;
    vl_gfid_t id;
    vl_err_t err = {.msg = ""};
    int n_bricks, rc;

    if (argc < 4) {
        md_usage(r, MD_USAGE_CREATE);
        return;
    }
    name = argv[2];
    rc = md_brick_args_parse(argc, argv, 3, true, &ba, &err);
    if (rc != 0 && ba.is_usage && err.msg[0] == '\0') {
        md_usage(r, MD_USAGE_CREATE);
        return;
    }
    if (rc != 0 && ba.is_usage) {
        md_result_fail(r, MD_EXIT_USAGE, -rc, "%s", err.msg);
        return;
    }
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume create: %s: failed: "
                       "%s", name, err.msg);
        return;
    }
    n_bricks = ba.n_bricks;
    if (ba.replica > 1 && n_bricks % (int)ba.replica != 0) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "number of bricks is not "
                       "a multiple of replica count");
        return;
    }
    if (n_bricks > MD_DIST_BRICKS_MAX * (int)(ba.replica > 1 ? ba.replica
                                                              : 1)) {
        md_result_fail(r, MD_EXIT_FAIL, E2BIG, "volume create: %s: failed: "
                       "%d bricks; a volume has at most %d %s", name,
                       n_bricks, MD_DIST_BRICKS_MAX,
                       ba.replica > 1 ? "replica sets" : "bricks");
        return;
    }
    if (md_check_volname(name, &err) != 0) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume create: %s: failed: "
                       "%s", name, err.msg);
        return;
    }
    if (md_volume_find(st, name) != NULL) {
        md_result_fail(r, MD_EXIT_FAIL, EEXIST, "volume create: %s: failed: "
                       "Volume %s already exists", name, name);
        return;
    }
    hosts = calloc((size_t)n_bricks, sizeof(*hosts));
    paths = calloc((size_t)n_bricks, sizeof(*paths));
    vol = calloc(1, sizeof(*vol));
    if (hosts == NULL || paths == NULL || vol == NULL ||
        (vol->bricks = calloc((size_t)n_bricks, sizeof(*vol->bricks))) ==
            NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume create: %s: failed: "
                       "out of memory", name);
        goto out;
    }
    rc = md_check_new_bricks(st, argv + ba.first, n_bricks, ba.is_force,
                             hosts, paths, &err);
    if (rc == 0)
        rc = md_check_sets_spread(st, hosts, paths, (size_t)n_bricks,
                                  ba.replica, ba.is_force, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume create: %s: failed: %s",
                       name, err.msg);
        goto out;
    }
    snprintf(vol->name, sizeof(vol->name), "%s", name);
    /* In a transaction the originator chose the id for every node. */
    if (st->txn.vol_id[0] == '\0' || vl_gfid_parse(st->txn.vol_id, &id) != 0)
        vl_gfid_generate(&id);
    vl_gfid_to_str(&id, vol->id);
    vol->status = MD_VOL_CREATED;
    snprintf(vol->transport, sizeof(vol->transport), "tcp");
    vol->n_bricks = (size_t)n_bricks;
    vol->replica_count = ba.replica > 1 ? ba.replica : 1;
    vol->arbiter_count = ba.arbiter;
    rc = md_bricks_fill(st, vol, vol->bricks, hosts, paths,
                        (size_t)n_bricks, &err);
    /* Commit: the brick directories and their volume id, then the
     * store. */
    if (rc == 0)
        rc = md_bricks_stamp(st, vol->bricks, vol->n_bricks, &id, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume create: %s: failed: %s",
                       name, err.msg);
        goto out;
    }
    rc = md_volume_save(st, vol, &err);
    if (rc != 0) {
        md_bricks_unstamp(st, vol->bricks, vol->n_bricks);
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume create: %s: failed: %s",
                       name, err.msg);
        goto out;
    }
    md_volume_link(st, vol);
    if (ba.replica == 2)
        md_sbuf_printf(&r->text, "%s\n", MD_REPLICA2_WARNING);
    md_sbuf_printf(&r->text, "volume create: %s: success: please start the "
                   "volume to access data\n", name);
    md_node_add(r->root, "volCreate", NULL);
    md_node_add(r->root->last, "volname", name);
    if (ba.replica == 2)
        md_node_add(r->root->last, "warning", MD_REPLICA2_WARNING);
    vol = NULL;

out:
    md_volume_free(vol);
    for (int i = 0; hosts != NULL && paths != NULL && i < n_bricks; i++) {
        free(hosts[i]);
        free(paths[i]);
    }
    free(hosts);
    free(paths);
}


/* Looks the volume up or fails the command "<what>: NAME: failed: ...". */
static struct md_volume *
md_vol_or_fail(struct md_state *st, const char *what, const char *name,
               struct md_result *r)
{
    struct md_volume *vol = md_volume_find(st, name);

    if (vol == NULL)
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, "%s: %s: failed: Volume %s "
                       "does not exist", what, name, name);
    return vol;
}


/* Starts every brick not running; the first failure stops the rest. */
static int
md_bricks_start(struct md_state *st, struct md_volume *vol, vl_err_t *err)
{
    for (size_t i = 0; i < vol->n_bricks; i++) {
        int rc = 0;

        if (md_brick_is_local(st, &vol->bricks[i]))
            rc = md_brick_start(st, vol, &vol->bricks[i], err);
        if (rc != 0)
            return rc;
    }
    return 0;
}


static int
md_bricks_stop(struct md_state *st, struct md_volume *vol, vl_err_t *err)
{
    int rc = 0;

    for (size_t i = 0; i < vol->n_bricks; i++) {
        int r1 = md_brick_stop(st, vol, &vol->bricks[i], err);

        if (r1 != 0 && rc == 0)
            rc = r1;
    }
    return rc;
}


/* Gives every brick that is not running and whose port someone else took
 * a new port; returns true if any changed (volfiles must be rewritten). */
static bool
md_bricks_fix_ports(struct md_state *st, struct md_volume *vol)
{
    bool is_changed = false;

    /* In a transaction every node must store the same port: left alone. */
    for (size_t i = 0; i < vol->n_bricks && !st->txn.is_set; i++) {
        struct md_brick *b = &vol->bricks[i];

        if (!md_brick_is_local(st, b) || md_brick_pid(st, vol, b) != 0 ||
            md_port_is_free(st->bind_addr, b->port))
            continue;
        uint16_t p = md_port_pick(st, b);

        if (p != 0) {
            b->port = p;
            is_changed = true;
        }
    }
    return is_changed;
}


static void
md_cmd_start(struct md_state *st, int argc, char **argv, struct md_result *r)
{
    struct md_volume *vol;
    enum md_vol_status old;
    bool force = argc == 4 && strcmp(argv[3], "force") == 0;
    vl_err_t err = {.msg = ""};
    int rc = 0;

    if (argc < 3 || argc > 4 || (argc == 4 && !force)) {
        md_usage(r, "volume start <VOLNAME> [force]");
        return;
    }
    vol = md_vol_or_fail(st, "volume start", argv[2], r);
    if (vol == NULL)
        return;
    if (vol->status == MD_VOL_STARTED && !force) {
        md_result_fail(r, MD_EXIT_FAIL, EALREADY, "volume start: %s: failed: "
                       "Volume %s already started", vol->name, vol->name);
        return;
    }
    old = vol->status;
    if (md_bricks_fix_ports(st, vol) || old != MD_VOL_STARTED) {
        vol->status = MD_VOL_STARTED;
        rc = md_volume_save(st, vol, &err);
        if (rc != 0) {
            vol->status = old;
            md_result_fail(r, MD_EXIT_FAIL, -rc, "volume start: %s: failed: "
                           "%s", vol->name, err.msg);
            return;
        }
        md_server_notify();
    }
    /* A brick the supervision gave up on is tried again. */
    md_supervise_reset(vol);
    rc = md_bricks_start(st, vol, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume start: %s: failed: %s",
                       vol->name, err.msg);
        return;
    }
    md_sbuf_printf(&r->text, "volume start: %s: success\n", vol->name);
    md_node_add(r->root, "volStart", NULL);
    md_node_add(r->root->last, "volname", vol->name);
}


static void
md_cmd_stop(struct md_state *st, int argc, char **argv, struct md_result *r)
{
    struct md_volume *vol;
    bool force = argc == 4 && strcmp(argv[3], "force") == 0;
    vl_err_t err = {.msg = ""};
    int rc;

    if (argc < 3 || argc > 4 || (argc == 4 && !force)) {
        md_usage(r, "volume stop <VOLNAME> [force]");
        return;
    }
    vol = md_vol_or_fail(st, "volume stop", argv[2], r);
    if (vol == NULL)
        return;
    if (vol->status != MD_VOL_STARTED && !force) {
        md_result_fail(r, MD_EXIT_FAIL, EALREADY, "volume stop: %s: failed: "
                       "Volume %s is not in the started state", vol->name,
                       vol->name);
        return;
    }
    /* Store first: a crash after this leaves a stopped volume whose
     * bricks the next `stop force` or start cleans up. */
    if (vol->status == MD_VOL_STARTED) {
        vol->status = MD_VOL_STOPPED;
        rc = md_volume_save(st, vol, &err);
        if (rc != 0) {
            vol->status = MD_VOL_STARTED;
            md_result_fail(r, MD_EXIT_FAIL, -rc, "volume stop: %s: failed: "
                           "%s", vol->name, err.msg);
            return;
        }
        md_server_notify();
    }
    /* The next start begins with a clean restart count. */
    md_supervise_reset(vol);
    /* A migration cannot go on without bricks: it stops cleanly and
     * `rebalance start` resumes it after the next volume start. */
    rc = md_rebal_stop(st, vol, false, &err);
    if (rc == 0)
        rc = md_rebal_stop(st, vol, true, &err);
    if (rc == 0)
        rc = md_bricks_stop(st, vol, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume stop: %s: failed: %s",
                       vol->name, err.msg);
        return;
    }
    md_sbuf_printf(&r->text, "volume stop: %s: success\n", vol->name);
    md_node_add(r->root, "volStop", NULL);
    md_node_add(r->root->last, "volname", vol->name);
}


static void
md_cmd_delete(struct md_state *st, int argc, char **argv,
              struct md_result *r)
{
    struct md_volume *vol;
    vl_err_t err = {.msg = ""};
    int rc;

    if (argc != 3) {
        md_usage(r, "volume delete <VOLNAME>");
        return;
    }
    vol = md_vol_or_fail(st, "volume delete", argv[2], r);
    if (vol == NULL)
        return;
    if (vol->status == MD_VOL_STARTED) {
        md_result_fail(r, MD_EXIT_FAIL, EBUSY, "volume delete: %s: failed: "
                       "Volume %s has been started. Volume needs to be "
                       "stopped before deletion.", vol->name, vol->name);
        return;
    }
    for (size_t i = 0; i < vol->n_bricks; i++)
        if (md_brick_pid(st, vol, &vol->bricks[i]) != 0) {
            md_result_fail(r, MD_EXIT_FAIL, EBUSY, "volume delete: %s: "
                           "failed: brick %s still runs; run volume stop "
                           "%s force", vol->name, vol->bricks[i].path,
                           vol->name);
            return;
        }
    rc = md_volume_remove(st, vol, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume delete: %s: failed: %s",
                       vol->name, err.msg);
        return;
    }
    /* The brick keeps its data; dropping the id lets it be used again. */
    for (size_t i = 0; i < vol->n_bricks; i++)
        if (md_brick_is_local(st, &vol->bricks[i]))
            (void)removexattr(vol->bricks[i].path, MD_VOLID_XATTR);
    md_rebal_forget(st, vol, false);
    md_rebal_forget(st, vol, true);
    md_volume_unlink(st, vol);
    md_sbuf_printf(&r->text, "volume delete: %s: success\n", vol->name);
    md_node_add(r->root, "volDelete", NULL);
    md_node_add(r->root->last, "volname", vol->name);
    md_server_notify();
    md_volume_free(vol);
}


/* Which processes an option change reaches. */
enum md_change {
    MD_CHANGE_CLIENT = 0, /* client.* only: watchers fetch the new volfile */
    MD_CHANGE_LIVE,       /* brick options, all VL_OPT_LIVE: SIGHUP */
    MD_CHANGE_RESTART,    /* a brick option that is not live: restart */
};


/* How a change of the option canonically named key reaches the bricks. */
static enum md_change
md_change_of(const vl_xlator_class_t *cls, const vl_option_t *opt)
{
    /* client.*, cluster.* (distribute), replicate.* and diagnostics.*
     * live in the client volfile only. */
    /* network.inode-lru-limit: clients' and bricks' (live) alike. */
    if (strcmp(cls->prefix, "diagnostics") == 0 &&
        strcmp(opt->key, "inode-lru-limit") == 0)
        return MD_CHANGE_LIVE;
    if (strcmp(cls->prefix, "client") == 0 ||
        strcmp(cls->prefix, "cluster") == 0 ||
        strcmp(cls->prefix, "replicate") == 0 ||
        strcmp(cls->prefix, "diagnostics") == 0 ||
        strcmp(cls->prefix, "shd") == 0)
        return MD_CHANGE_CLIENT; /* (shd.*: heal.c restarts the daemon) */
    return (opt->flags & VL_OPT_LIVE) ? MD_CHANGE_LIVE : MD_CHANGE_RESTART;
}


/* The strongest of two changes. */
static enum md_change
md_change_max(enum md_change a, enum md_change b)
{
    return a > b ? a : b;
}


/* Sends SIGHUP to the running bricks: mortarfsd re-reads its --volfile
 * (already swapped in by md_volume_save) and applies the live options
 * with vl_graph_reconfigure, keeping its connections. */
static void
md_bricks_hup(struct md_state *st, struct md_volume *vol)
{
    for (size_t i = 0; i < vol->n_bricks; i++) {
        const struct md_brick *b = &vol->bricks[i];
        pid_t pid = md_brick_pid(st, vol, b);

        if (pid == 0)
            continue;
        if (kill(pid, SIGHUP) == 0)
            vl_glog(MD_DOMAIN, VL_LOG_INFO, "brick %s:%s of %s (pid %ld) "
                    "told to reload its volfile (live options)", b->host,
                    b->path, vol->name, (long)pid);
        else
            vl_glog(MD_DOMAIN, VL_LOG_WARNING, "SIGHUP to brick %s:%s "
                    "(pid %ld): %s", b->host, b->path, (long)pid,
                    strerror(errno));
    }
}


/* After an option change: save, tell watchers, then reload (live) or
 * restart the running bricks if a brick-side option changed. */
static int
md_apply_change(struct md_state *st, struct md_volume *vol,
                enum md_change change, bool *is_saved, vl_err_t *err)
{
    int rc = md_volume_save(st, vol, err);

    *is_saved = rc == 0;
    if (rc != 0)
        return rc;
    md_server_notify();
    if (vol->status != MD_VOL_STARTED || change == MD_CHANGE_CLIENT)
        return 0;
    if (change == MD_CHANGE_LIVE) {
        md_bricks_hup(st, vol);
        return 0;
    }
    rc = md_bricks_stop(st, vol, err);
    if (rc == 0)
        rc = md_bricks_start(st, vol, err);
    if (rc != 0) {
        vl_err_t inner = *err;

        vl_err_set(err, "option stored, but restarting the bricks failed: "
                   "%s", inner.msg);
    }
    return rc;
}


static void
md_cmd_set(struct md_state *st, int argc, char **argv, struct md_result *r)
{
    const vl_xlator_class_t *cls;
    const vl_option_t *opt;
    struct md_volume *vol;
    char canon[256], *old = NULL;
    const char *prev;
    bool is_saved = false;
    vl_err_t err = {.msg = ""};
    int rc;

    if (argc == 3 && strcmp(argv[2], "help") == 0) {
        md_cmd_set_help(r);
        return;
    }
    if (argc != 5) {
        md_usage(r, "volume set <VOLNAME> <KEY> <VALUE>");
        return;
    }
    vol = md_vol_or_fail(st, "volume set", argv[2], r);
    if (vol == NULL)
        return;
    rc = md_option_resolve(argv[3], argv[4], &cls, &opt, canon,
                           sizeof(canon), &err);
    if (rc == 0)
        rc = md_replica_opt_check(vol, canon, argv[4], &err);
    if (rc == 0)
        rc = md_client_caches_check(vol, canon, argv[4], &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume set: failed: %s",
                       err.msg);
        return;
    }
    prev = md_vol_opt_get(vol, canon);
    if (prev != NULL && (old = strdup(prev)) == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume set: failed: out of "
                       "memory");
        return;
    }
    rc = md_vol_opt_set(vol, canon, argv[4]);
    if (rc != 0)
        vl_err_set(&err, "out of memory");
    else
        rc = md_apply_change(st, vol, md_change_of(cls, opt), &is_saved,
                             &err);
    if (rc != 0 && !is_saved) {
        if (old != NULL)
            (void)md_vol_opt_set(vol, canon, old);
        else
            (void)md_vol_opt_del(vol, canon);
    }
    free(old);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume set: failed: %s",
                       err.msg);
        return;
    }
    md_sbuf_printf(&r->text, "volume set: success\n");
    md_node_add(r->root, "volSet", NULL);
    md_node_add(r->root->last, "volname", vol->name);
    md_node_add(r->root->last, "key", canon);
    md_node_add(r->root->last, "value", argv[4]);
}


static void
md_opts_free(struct vl_kv *opts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(opts[i].key);
        free(opts[i].value);
    }
    free(opts);
}


static int
md_opts_copy(const struct md_volume *vol, struct vl_kv **out, size_t *n)
{
    struct vl_kv *c = calloc(vol->n_opts + 1, sizeof(*c));

    if (c == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < vol->n_opts; i++) {
        c[i].key = strdup(vol->opts[i].key);
        c[i].value = strdup(vol->opts[i].value);
        if (c[i].key == NULL || c[i].value == NULL) {
            md_opts_free(c, i + 1);
            return -ENOMEM;
        }
    }
    *out = c;
    *n = vol->n_opts;
    return 0;
}


/* Puts back the options saved by md_opts_copy (takes them). */
static void
md_opts_restore(struct md_volume *vol, struct vl_kv *opts, size_t n)
{
    md_opts_free(vol->opts, vol->n_opts);
    vol->opts = opts;
    vol->n_opts = n;
}


static void
md_cmd_reset(struct md_state *st, int argc, char **argv, struct md_result *r)
{
    struct md_volume *vol;
    const vl_xlator_class_t *cls = NULL;
    const vl_option_t *opt = NULL;
    enum md_change change = MD_CHANGE_CLIENT;
    bool is_saved = false;
    struct vl_kv *saved_opts = NULL;
    size_t n_saved = 0;
    char canon[256];
    vl_err_t err = {.msg = ""};
    int rc;

    if (argc > 3 && strcmp(argv[argc - 1], "force") == 0)
        argc--;
    if (argc < 3 || argc > 4) {
        md_usage(r, "volume reset <VOLNAME> [option] [force]");
        return;
    }
    vol = md_vol_or_fail(st, "volume reset", argv[2], r);
    if (vol == NULL)
        return;
    rc = md_opts_copy(vol, &saved_opts, &n_saved);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume reset: failed: out "
                       "of memory");
        return;
    }
    if (argc == 3 || strcmp(argv[3], "all") == 0) {
        for (size_t i = 0; i < vol->n_opts; i++) {
            /* Stored keys are canonical and were resolved at load. */
            if (md_option_resolve(vol->opts[i].key, NULL, &cls, &opt,
                                  canon, sizeof(canon), &err) != 0)
                change = MD_CHANGE_RESTART;
            else
                change = md_change_max(change, md_change_of(cls, opt));
        }
        while (vol->n_opts > 0)
            (void)md_vol_opt_del(vol, vol->opts[0].key);
    } else {
        rc = md_option_resolve(argv[3], NULL, &cls, &opt, canon,
                               sizeof(canon), &err);
        if (rc != 0) {
            md_result_fail(r, MD_EXIT_FAIL, -rc, "volume reset: failed: %s",
                           err.msg);
            md_opts_free(saved_opts, n_saved);
            return;
        }
        if (md_vol_opt_get(vol, canon) == NULL) {
            /* Nothing to do; GlusterFS also succeeds here. */
            md_opts_free(saved_opts, n_saved);
            md_sbuf_printf(&r->text, "volume reset: success: reset volume "
                           "successful\n");
            return;
        }
        (void)md_vol_opt_del(vol, canon);
        change = md_change_of(cls, opt);
    }
    rc = md_apply_change(st, vol, change, &is_saved, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume reset: failed: %s",
                       err.msg);
        if (!is_saved)
            md_opts_restore(vol, saved_opts, n_saved);
        else
            md_opts_free(saved_opts, n_saved);
        return;
    }
    md_opts_free(saved_opts, n_saved);
    md_sbuf_printf(&r->text, "volume reset: success: reset volume "
                   "successful\n");
    md_node_add(r->root, "volReset", NULL);
    md_node_add(r->root->last, "volname", vol->name);
}


/* The text node named name among parent's children. */
static struct md_node *
md_node_child(struct md_node *parent, const char *name)
{
    for (struct md_node *n = parent != NULL ? parent->kids : NULL; n != NULL;
         n = n->next)
        if (strcmp(n->name, name) == 0)
            return n;
    return NULL;
}


/* volume status, plus for one volume its rebalance/remove-brick task
 * (GlusterFS's "Task Status of Volume"). */
static void
md_cmd_status_tasks(struct md_state *st, int argc, char **argv,
                    struct md_result *r)
{
    struct md_volume *vol;
    struct md_node *vl, *v;

    md_cmd_status(st, argc, argv, r);
    /* GlusterFS lists the tasks for a whole volume, not for one brick. */
    if (r->ret != 0 || argc < 3 || strcmp(argv[2], "all") == 0 ||
        strcmp(argv[2], "detail") == 0 ||
        (argc >= 4 && strcmp(argv[3], "detail") != 0) ||
        (vol = md_volume_find(st, argv[2])) == NULL)
        return;
    vl = md_node_child(md_node_child(r->root, "volStatus"), "volumes");
    v = vl != NULL ? vl->last : NULL;
    if (v != NULL)
        md_rebal_task_status(st, vol, r, v);
}


/* Set while md_txn_run runs for a command this node received. */
static bool md_is_txn_origin;


bool
md_txn_is_origin(const struct md_state *st)
{
    return !st->txn.is_set || md_is_txn_origin;
}


void
md_cmd_run(struct md_state *st, int argc, char **argv, struct md_result *r)
{
    const char *sub = argc > 1 ? argv[1] : "";

    if (!st->txn.is_set && st->peers != NULL && md_cmd_is_txn(argc, argv)) {
        md_is_txn_origin = true;
        md_txn_run(st, argc, argv, r);
        md_is_txn_origin = false;
        return;
    }
    if (argc >= 1 && strcmp(argv[0], "volume") == 0) {
        if (strcmp(sub, "create") == 0)
            md_cmd_create(st, argc, argv, r);
        else if (strcmp(sub, "start") == 0)
            md_cmd_start(st, argc, argv, r);
        else if (strcmp(sub, "stop") == 0)
            md_cmd_stop(st, argc, argv, r);
        else if (strcmp(sub, "delete") == 0)
            md_cmd_delete(st, argc, argv, r);
        else if (strcmp(sub, "info") == 0)
            md_cmd_info(st, argc, argv, r);
        else if (strcmp(sub, "status") == 0)
            md_cmd_status_tasks(st, argc, argv, r);
        else if (strcmp(sub, "list") == 0 && argc == 2)
            md_cmd_list(st, r);
        else if (strcmp(sub, "set") == 0)
            md_cmd_set(st, argc, argv, r);
        else if (strcmp(sub, "get") == 0)
            md_cmd_get(st, argc, argv, r);
        else if (strcmp(sub, "reset") == 0)
            md_cmd_reset(st, argc, argv, r);
        else if (strcmp(sub, "statedump") == 0)
            md_cmd_statedump(st, argc, argv, r);
        else if (strcmp(sub, "add-brick") == 0)
            md_cmd_add_brick(st, argc, argv, r);
        else if (strcmp(sub, "remove-brick") == 0)
            md_cmd_remove_brick(st, argc, argv, r);
        else if (strcmp(sub, "rebalance") == 0)
            md_cmd_rebalance(st, argc, argv, r);
        else if (strcmp(sub, "heal") == 0)
            md_cmd_heal(st, argc, argv, r);
        else if (strcmp(sub, "replace-brick") == 0)
            md_cmd_replace_brick(st, argc, argv, r);
        else if (strcmp(sub, "reset-brick") == 0)
            md_cmd_reset_brick(st, argc, argv, r);
        else if (strcmp(sub, "profile") == 0)
            md_cmd_profile(st, argc, argv, r);
        else if (strcmp(sub, "top") == 0)
            md_cmd_top(st, argc, argv, r);
        else
            md_result_fail(r, MD_EXIT_USAGE, EINVAL, "unrecognized command: "
                           "volume %s", sub);
        return;
    }
    /* GlusterFS spells it "system::"; "system" is accepted too. */
    if (argc >= 2 && (strcmp(argv[0], "system::") == 0 ||
                      strcmp(argv[0], "system") == 0) &&
        strcmp(argv[1], "getspec") == 0) {
        md_cmd_getspec(st, argc, argv, r);
        return;
    }
    if (argc >= 1 && (strcmp(argv[0], "peer") == 0 ||
                      strcmp(argv[0], "pool") == 0)) {
        md_cmd_peer(st, argc, argv, r);
        return;
    }
    md_result_fail(r, MD_EXIT_USAGE, EINVAL, "unrecognized command: %s",
                   argc >= 1 ? argv[0] : "(empty)");
}
