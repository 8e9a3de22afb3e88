/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-brick: `volume add-brick VOL BRICK... [force]` and
 * `volume remove-brick VOL BRICK... start|status|stop|commit|force`.
 * Replicated volumes gain and lose whole replica sets here (`replica N`,
 * if given, is the volume's count); a remove-brick must list every
 * brick of each set it touches. A `replica N` that changes the count
 * goes to replica-change.c.
 *
 * add-brick validates like create, appends the bricks (new ids, never
 * reused), saves (the client volfile gains the subvolumes; watching
 * clients refetch it) and starts the new bricks of a started volume;
 * nothing else is touched. Data moves only with `rebalance`.
 * remove-brick start marks the bricks decommissioned in the store (the
 * client volfile names them in `decommissioned-bricks` of distribute:
 * no new files land there) and runs the migration (rebalance.c, state
 * file VOL.remove.state). stop ends it and clears the marks. commit,
 * once the migration completed without leaving a file behind (skipped or
 * failed: its state file counts them), drops the bricks: store first,
 * then their processes are stopped and their volume id removed. force
 * (also spelt `commit force`) drops them without migrating or checking
 * (their files are no longer in the volume).
 * Also the brick helpers create shares: stamping new brick directories
 * with the volume id, ids and ports for new bricks.
 * Every command checks everything first and changes nothing on failure.
 * Threads: the worker thread with md_state.lock held.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "mortard.h"

#define MD_USAGE_ADD "volume add-brick <VOLNAME> [replica <COUNT>] " \
                     "<NEW-BRICK> ... [force]"
#define MD_USAGE_REMOVE "volume remove-brick <VOLNAME> [replica <COUNT>] " \
                        "<BRICK> ... <start|stop|status|commit|force>"


void
md_bricks_unstamp(struct md_state *st, struct md_brick *bricks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (md_brick_is_local(st, &bricks[i]))
            (void)removexattr(bricks[i].path, MD_VOLID_XATTR);
}


/* Creates the brick directories (the directory only: validation made sure
 * its parent exists, md_check_brick) and stamps them with the volume id;
 * on failure the ones already stamped are unstamped and the directories
 * made here are removed again. */
int
md_bricks_stamp(struct md_state *st, struct md_brick *bricks, size_t n,
                const vl_gfid_t *id, vl_err_t *err)
{
    bool *is_made = calloc(n + 1, sizeof(*is_made));
    size_t i;
    int rc = 0;

    if (is_made == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    for (i = 0; i < n && rc == 0; i++) {
        if (!md_brick_is_local(st, &bricks[i]))
            continue;
        if (mkdir(bricks[i].path, 0755) == 0) {
            is_made[i] = true;
        } else if (errno != EEXIST) {
            rc = -errno;
            vl_err_set(err, "Failed to create brick directory for brick "
                       "%s:%s. Reason : %s", bricks[i].host, bricks[i].path,
                       strerror(-rc));
            break;
        }
        if (setxattr(bricks[i].path, MD_VOLID_XATTR, id->bytes,
                     sizeof(id->bytes), XATTR_CREATE) != 0) {
            rc = -errno;
            vl_err_set(err, "brick %s:%s: setting %s: %s", bricks[i].host,
                       bricks[i].path, MD_VOLID_XATTR, strerror(-rc));
            break;
        }
    }
    if (rc != 0) {
        md_bricks_unstamp(st, bricks, i);
        for (size_t j = 0; j <= i && j < n; j++)
            if (is_made[j])
                (void)rmdir(bricks[j].path);
    }
    free(is_made);
    return rc;
}


int
md_bricks_fill(struct md_state *st, struct md_volume *vol,
               struct md_brick *nb, char **hosts, char **paths, size_t n,
               vl_err_t *err)
{
    uint16_t *taken = calloc(n + 1, sizeof(*taken));
    int rc = 0;

    if (taken == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        nb[i].host = hosts[i];
        nb[i].path = paths[i];
        hosts[i] = paths[i] = NULL;
        snprintf(nb[i].id, sizeof(nb[i].id), "brick%u", vol->next_brick++);
        /* A one-brick create in a transaction: the owner chose. */
        if (n == 1 && st->txn.brick_port != 0)
            nb[i].port = st->txn.brick_port;
        else
            nb[i].port = md_port_pick_excl(st, taken, i);
        if (nb[i].port == 0) {
            vl_err_set(err, "no free brick port from %u",
                       st->brick_base_port);
            rc = -EADDRINUSE;
        }
        taken[i] = nb[i].port;
    }
    free(taken);
    return rc;
}


const char *
md_vol_busy(const struct md_state *st, const struct md_volume *vol)
{
    const char *busy = md_rebal_busy_here(st, vol, false);

    if (busy != NULL)
        return busy;
    for (size_t i = 0; i < vol->n_bricks; i++)
        if (vol->bricks[i].is_decommissioned)
            return "a remove-brick task is not committed (commit or stop "
                   "it first)";
    return NULL;
}


void
md_cmd_add_brick(struct md_state *st, int argc, char **argv,
                 struct md_result *r)
{
    struct md_volume *vol;
    struct md_brick *nb;
    struct md_brick_args ba;
    char **hosts = NULL, **paths = NULL;
    const char *busy;
    bool force = false;
    unsigned old_next, old_next_set, rep;
    size_t old_n, n;
    vl_gfid_t id;
    vl_err_t err = {.msg = ""};
    int rc;

    if (argc < 4) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: %s", MD_USAGE_ADD);
        return;
    }
    rc = md_brick_args_parse(argc, argv, 3, false, &ba, &err);
    if (rc != 0 && ba.is_usage && err.msg[0] == '\0') {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: %s", MD_USAGE_ADD);
        return;
    }
    if (rc != 0) {
        md_result_fail(r, ba.is_usage ? MD_EXIT_USAGE : MD_EXIT_FAIL, -rc,
                       "volume add-brick: failed: %s", err.msg);
        return;
    }
    force = ba.is_force;
    vol = md_volume_find(st, argv[2]);
    if (vol == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, "volume add-brick: failed: "
                       "Volume %s does not exist", argv[2]);
        return;
    }
    rep = md_vol_replica(vol);
    if (ba.replica != 0 && ba.replica < rep) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume add-brick: failed: "
                       "Incorrect replica count (%u) supplied. Volume "
                       "already has (%u)", ba.replica, rep);
        return;
    }
    if (ba.arbiter != 0 && vol->arbiter_count == 0
        && !(rep == 2 && ba.replica == 3)) {
        md_result_fail(r, MD_EXIT_FAIL, ENOTSUP, "volume add-brick: failed: "
                       "volume %s has no arbiter bricks: only a replica 2 "
                       "volume becomes an arbiter volume (add-brick %s "
                       "replica 3 arbiter 1, one new brick per replica set)",
                       vol->name, vol->name);
        return;
    }
    if (ba.replica > rep) {
        md_replica_grow(st, vol, &ba, argv, r);
        return;
    }
    if (ba.n_bricks % (int)rep != 0) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume add-brick: failed: "
                       "Incorrect number of bricks supplied %d with count "
                       "%u", ba.n_bricks, rep);
        return;
    }
    busy = md_vol_busy(st, vol);
    if (busy != NULL) {
        md_result_fail(r, MD_EXIT_FAIL, EBUSY, "volume add-brick: failed: "
                       "Volume %s: %s", vol->name, busy);
        return;
    }
    if (vl_gfid_parse(vol->id, &id) != 0) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume add-brick: failed: "
                       "Volume %s has a bad id", vol->name);
        return;
    }
    n = (size_t)ba.n_bricks;
    if ((vol->n_bricks + n) / rep > MD_DIST_BRICKS_MAX) {
        md_result_fail(r, MD_EXIT_FAIL, E2BIG, "volume add-brick: failed: "
                       "Volume %s has %zu bricks; %zu more would pass the "
                       "limit of %d %s", vol->name, vol->n_bricks, n,
                       MD_DIST_BRICKS_MAX, rep > 1 ? "replica sets" :
                       "bricks");
        return;
    }
    hosts = calloc(n, sizeof(*hosts));
    paths = calloc(n, sizeof(*paths));
    nb = realloc(vol->bricks, (vol->n_bricks + n) * sizeof(*nb));
    if (nb != NULL)
        vol->bricks = nb;
    if (hosts == NULL || paths == NULL || nb == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume add-brick: failed: "
                       "out of memory");
        goto out;
    }
    rc = md_check_new_bricks(st, argv + ba.first, (int)n, force, hosts,
                             paths, &err);
    if (rc == 0)
        rc = md_check_sets_spread(st, hosts, paths, n, rep, force, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume add-brick: failed: %s",
                       err.msg);
        goto out;
    }
    old_n = vol->n_bricks;
    old_next = vol->next_brick;
    /* A new set's ids start at a multiple of the count: its name
     * (replica.c) is derived from them. */
    vol->next_brick += (rep - vol->next_brick % rep) % rep;
    nb = &vol->bricks[old_n];
    memset(nb, 0, n * sizeof(*nb));
    old_next_set = vol->next_set;
    rc = md_bricks_fill(st, vol, nb, hosts, paths, n, &err);
    if (rc == 0) {
        md_vol_sets_number_new(vol, nb, n);
        rc = md_bricks_stamp(st, nb, n, &id, &err);
    }
    if (rc == 0) {
        vol->n_bricks = old_n + n;
        rc = md_volume_save(st, vol, &err);
        if (rc != 0) {
            vol->n_bricks = old_n;
            md_bricks_unstamp(st, nb, n);
        }
    }
    if (rc != 0) {
        for (size_t i = 0; i < n; i++) {
            free(nb[i].host);
            free(nb[i].path);
        }
        vol->next_brick = old_next;
        vol->next_set = old_next_set;
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume add-brick: failed: %s",
                       err.msg);
        goto out;
    }
    md_server_notify();
    for (size_t i = 0; vol->status == MD_VOL_STARTED && i < n; i++) {
        struct md_brick *b = &vol->bricks[old_n + i];

        if (!md_brick_is_local(st, b))
            continue;
        rc = md_brick_start(st, vol, b, &err);
        if (rc != 0) {
            md_result_fail(r, MD_EXIT_FAIL, -rc, "volume add-brick: failed: "
                           "bricks added, but %s (retry with volume start "
                           "%s force)", err.msg, vol->name);
            goto out;
        }
    }
    md_sbuf_printf(&r->text, "volume add-brick: success\n");
    md_node_add(r->root, "volAddBrick", NULL);
    md_node_add(r->root->last, "volname", vol->name);
    md_node_addf(r->root->last, "brickCount", "%zu", vol->n_bricks);

out:
    for (size_t i = 0; hosts != NULL && paths != NULL && i < n; i++) {
        free(hosts[i]);
        free(paths[i]);
    }
    free(hosts);
    free(paths);
}


size_t
md_vol_brick_find(struct md_state *st, const struct md_volume *vol,
                  const char *host, const char *path)
{
    struct md_brick tmp = {.host = (char *)host, .path = (char *)path};

    for (size_t j = 0; j < vol->n_bricks; j++) {
        const struct md_brick *b = &vol->bricks[j];

        if (strcmp(b->path, path) == 0 &&
            (strcmp(b->host, host) == 0 ||
             (md_brick_is_local(st, b) && md_brick_is_local(st, &tmp))))
            return j;
    }
    return vol->n_bricks;
}


int
md_remove_find(struct md_state *st, struct md_volume *vol,
               char *const *args, size_t n, size_t *idx, vl_err_t *err)
{
    for (size_t i = 0; i < n; i++) {
        char *host = NULL, *path = NULL;
        int rc = md_parse_brick(args[i], &host, &path, err);

        if (rc != 0)
            return rc;
        idx[i] = md_vol_brick_find(st, vol, host, path);
        free(host);
        free(path);
        if (idx[i] == vol->n_bricks) {
            vl_err_set(err, "Incorrect brick %s for volume %s", args[i],
                       vol->name);
            return -ENOENT;
        }
        for (size_t j = 0; j < i; j++)
            if (idx[j] == idx[i]) {
                vl_err_set(err, "brick %s is given more than once",
                           args[i]);
                return -EINVAL;
            }
    }
    if (n >= vol->n_bricks) {
        vl_err_set(err, "Deleting all the bricks of the volume is not "
                   "allowed (use volume delete)");
        return -EINVAL;
    }
    return 0;
}


/* A replicated volume loses whole sets only: every brick of each set
 * that one of idx[0..n) is in is listed (GlusterFS's messages). */
static int
md_remove_whole_sets(const struct md_volume *vol, const size_t *idx,
                     size_t n, vl_err_t *err)
{
    unsigned rep = md_vol_replica(vol);

    if (rep == 1)
        return 0;
    if (n % rep != 0) {
        vl_err_set(err, "Remove brick incorrect brick count of %zu for "
                   "replica %u", n, rep);
        return -EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        size_t set = idx[i] / rep, n_listed = 0;

        for (size_t j = 0; j < n; j++)
            n_listed += idx[j] / rep == set;
        if (n_listed != rep) {
            vl_err_set(err, "Bricks not from same subvol for replica");
            return -EINVAL;
        }
    }
    return 0;
}


/* The given bricks are exactly the decommissioned ones. */
static bool
md_remove_matches(const struct md_volume *vol, const size_t *idx, size_t n)
{
    size_t n_dec = 0;

    for (size_t j = 0; j < vol->n_bricks; j++)
        if (vol->bricks[j].is_decommissioned)
            n_dec++;
    for (size_t i = 0; i < n; i++)
        if (!vol->bricks[idx[i]].is_decommissioned)
            return false;
    return n_dec == n;
}


/* Sets is_decommissioned of the bricks in idx to on and saves; restored
 * on failure. */
static int
md_remove_mark(struct md_state *st, struct md_volume *vol, const size_t *idx,
               size_t n, bool on, vl_err_t *err)
{
    int rc;

    for (size_t j = 0; j < vol->n_bricks; j++)
        if (!on)
            vol->bricks[j].is_decommissioned = false;
    for (size_t i = 0; i < n && on; i++)
        vol->bricks[idx[i]].is_decommissioned = true;
    rc = md_volume_save(st, vol, err);
    if (rc != 0)
        for (size_t i = 0; i < n; i++)
            vol->bricks[idx[i]].is_decommissioned = !on;
    else
        md_server_notify();
    return rc;
}


int
md_remove_drop(struct md_state *st, struct md_volume *vol, const size_t *idx,
               size_t n, unsigned new_replica, vl_err_t *err)
{
    unsigned old_replica = vol->replica_count;
    struct md_brick *keep, *gone;
    struct md_brick *old = vol->bricks;
    size_t old_n = vol->n_bricks, nk = 0, ng = 0;
    int rc;

    keep = calloc(old_n, sizeof(*keep));
    gone = calloc(n, sizeof(*gone));
    if (keep == NULL || gone == NULL) {
        free(keep);
        free(gone);
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    for (size_t j = 0; j < old_n; j++) {
        bool is_gone = false;

        for (size_t i = 0; i < n; i++)
            is_gone = is_gone || idx[i] == j;
        if (is_gone)
            gone[ng++] = old[j];
        else
            keep[nk++] = old[j];
    }
    for (size_t j = 0; j < nk; j++)
        keep[j].is_decommissioned = false;
    vol->bricks = keep;
    vol->n_bricks = nk;
    if (new_replica != 0)
        vol->replica_count = new_replica;
    rc = md_volume_save(st, vol, err);
    if (rc != 0) {
        vol->bricks = old;
        vol->n_bricks = old_n;
        vol->replica_count = old_replica;
        free(keep);
        free(gone);
        return rc;
    }
    free(old);
    md_server_notify();
    for (size_t i = 0; i < ng; i++) {
        vl_err_t e2 = {.msg = ""};

        if (md_brick_stop(st, vol, &gone[i], &e2) != 0)
            vl_glog(MD_DOMAIN, VL_LOG_WARNING, "removed brick %s:%s: %s",
                    gone[i].host, gone[i].path, e2.msg);
    }
    md_bricks_unstamp(st, gone, ng);
    for (size_t i = 0; i < ng; i++) {
        free(gone[i].host);
        free(gone[i].path);
    }
    free(gone);
    md_rebal_forget(st, vol, true);
    return 0;
}


int
md_remove_commit_check(struct md_state *st, const struct md_volume *vol,
                       struct md_result *r)
{
    struct md_rebal_views views = {0};
    const struct md_rebal_view *w;
    long long left;

    if (md_rebal_gather(st, vol->name, true, &views) != 0) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume remove-brick "
                       "commit: failed: out of memory");
        return -ENOMEM;
    }
    w = md_rebal_views_pick(&views);
    for (size_t i = 1; w == NULL && i < views.n; i++)
        if (views.v[i].err[0] != '\0' &&
            strcmp(views.v[i].err, MD_REBAL_DISCONNECTED) != 0) {
            md_result_fail(r, MD_EXIT_FAIL, EHOSTUNREACH, "volume "
                           "remove-brick commit: failed: node %s, which "
                           "may have run the migration, did not answer: "
                           "%s", views.v[i].node, views.v[i].err);
            md_rebal_views_free(&views);
            return -EHOSTUNREACH;
        }
    if (w == NULL || strcmp(w->status, "completed") != 0) {
        md_result_fail(r, MD_EXIT_FAIL, EBUSY, "volume remove-brick "
                       "commit: failed: the migration of data off the "
                       "bricks is %s%s%s; commit once it completed (or use "
                       "force: data on them is lost)",
                       w != NULL ? w->status : "not started",
                       w != NULL && w != &views.v[0] ? " on node " : "",
                       w != NULL && w != &views.v[0] ? w->node : "");
        md_rebal_views_free(&views);
        return -EBUSY;
    }
    left = w->skipped_files + w->failed_files;
    if (left > 0) {
        /* Those files are still on the bricks: a commit would take
         * them out of the volume. */
        md_result_fail(r, MD_EXIT_FAIL, EBUSY, "volume remove-brick "
                       "commit: failed: the migration left %lld "
                       "file%s on the bricks being removed (%lld "
                       "skipped: hard links or no space on the "
                       "destination, %lld failed; the remove-brick "
                       "log says which); move them through a mount "
                       "and run 'remove-brick ... start' again, or "
                       "use 'commit force' to remove the bricks with "
                       "them (data loss)", left, left == 1 ? "" : "s",
                       w->skipped_files, w->failed_files);
        md_rebal_views_free(&views);
        return -EBUSY;
    }
    md_rebal_views_free(&views);
    return 0;
}


void
md_cmd_remove_brick(struct md_state *st, int argc, char **argv,
                    struct md_result *r)
{
    static const char *const ops[] = {"start", "status", "stop", "commit",
                                      "force", NULL};
    struct md_volume *vol;
    const char *op = argc > 0 ? argv[argc - 1] : "", *busy;
    bool is_commit_force = false;
    unsigned rep;
    int first = 3;
    size_t n, *idx = NULL;
    vl_err_t err = {.msg = ""};
    bool is_op = false;
    int rc;

    for (size_t i = 0; ops[i] != NULL; i++)
        is_op = is_op || strcmp(op, ops[i]) == 0;
    if (strcmp(op, "force") == 0 && argc > 5 &&
        strcmp(argv[argc - 2], "commit") == 0) {
        is_commit_force = true;
        argc--;
    }
    if (argc < 5 || !is_op) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: %s",
                       MD_USAGE_REMOVE);
        return;
    }
    vol = md_volume_find(st, argv[2]);
    if (vol == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, "volume remove-brick %s: "
                       "failed: Volume %s does not exist", op, argv[2]);
        return;
    }
    if (is_commit_force)
        op = "force";
    rep = md_vol_replica(vol);
    if (strcmp(argv[3], "replica") == 0) {
        char *end;
        unsigned long want = strtoul(argv[4], &end, 10);

        if (argc < 7 || *end != '\0' || end == argv[4]) {
            md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: %s",
                           MD_USAGE_REMOVE);
            return;
        }
        if (want != rep || rep == 1) {
            if (want > MD_REPLICA_MAX) { /* and would not fit unsigned */
                md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume "
                               "remove-brick %s: failed: given replica "
                               "count (%s) option is more than volume %s's "
                               "replica count (%u)", op, argv[4],
                               vol->name, rep);
                return;
            }
            md_replica_shrink(st, vol, (unsigned)want, op, argv + 5,
                              (size_t)(argc - 6), r);
            return;
        }
        first = 5;
    }
    n = (size_t)(argc - 1 - first);
    idx = calloc(n, sizeof(*idx));
    if (idx == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume remove-brick %s: "
                       "failed: out of memory", op);
        return;
    }
    rc = md_remove_find(st, vol, argv + first, n, idx, &err);
    if (rc == 0)
        rc = md_remove_whole_sets(vol, idx, n, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume remove-brick %s: "
                       "failed: %s", op, err.msg);
        goto out;
    }
    if (strcmp(op, "start") == 0) {
        busy = md_vol_busy(st, vol);
        if (vol->status != MD_VOL_STARTED) {
            md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, "volume remove-brick "
                           "start: failed: Volume %s needs to be started "
                           "before remove-brick (or use force)", vol->name);
        } else if (busy != NULL) {
            md_result_fail(r, MD_EXIT_FAIL, EBUSY, "volume remove-brick "
                           "start: failed: Volume %s: %s", vol->name, busy);
        } else if ((rc = md_remove_mark(st, vol, idx, n, true, &err)) != 0) {
            md_result_fail(r, MD_EXIT_FAIL, -rc, "volume remove-brick "
                           "start: failed: %s", err.msg);
        } else {
            /* The migration runs on the node the command came to; an
             * older run's state goes on every node, so that status and
             * commit see only this one. */
            md_rebal_forget(st, vol, true);
            if (md_txn_is_origin(st))
                rc = md_rebal_start(st, vol, true, false, &err);
            if (rc != 0) {
                vl_err_t e2 = {.msg = ""};

                (void)md_remove_mark(st, vol, idx, n, false, &e2);
                md_result_fail(r, MD_EXIT_FAIL, -rc, "volume remove-brick "
                               "start: failed: %s", err.msg);
            } else {
                md_sbuf_printf(&r->text, "volume remove-brick start: "
                               "success\n");
                md_node_add(r->root, "volRemoveBrick", NULL);
                md_node_add(r->root->last, "volname", vol->name);
                md_node_add(r->root->last, "op", "start");
            }
        }
        goto out;
    }
    if (strcmp(op, "force") != 0 && !md_remove_matches(vol, idx, n)) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume remove-brick %s: "
                       "failed: no remove-brick was started for exactly "
                       "these bricks of %s", op, vol->name);
        goto out;
    }
    if (strcmp(op, "status") == 0) {
        rc = md_rebal_show(st, vol, true, r, &err);
        if (rc != 0)
            md_result_fail(r, MD_EXIT_FAIL, -rc, "volume remove-brick "
                           "status: failed: %s", err.msg);
        goto out;
    }
    if (strcmp(op, "stop") == 0) {
        /* Every node stops its own process: the one that ran the start
         * has it. */
        rc = md_rebal_stop(st, vol, true, &err);
        if (rc == 0)
            rc = md_remove_mark(st, vol, idx, n, false, &err);
        if (rc != 0)
            md_result_fail(r, MD_EXIT_FAIL, -rc, "volume remove-brick stop: "
                           "failed: %s", err.msg);
        else
            md_sbuf_printf(&r->text, "volume remove-brick stop: success\n"
                           "Files already migrated stay where they are "
                           "now; the bricks stay in the volume.\n");
        goto out;
    }
    if (strcmp(op, "commit") == 0 && md_txn_is_origin(st) &&
        md_remove_commit_check(st, vol, r) != 0)
        goto out;
    /* commit, or force: end a migration still running, then drop. */
    busy = md_rebal_pid(st, vol, false) != 0 ? "a rebalance is running"
                                             : NULL;
    if (busy != NULL) {
        md_result_fail(r, MD_EXIT_FAIL, EBUSY, "volume remove-brick %s: "
                       "failed: Volume %s: %s", op, vol->name, busy);
        goto out;
    }
    rc = md_rebal_stop(st, vol, true, &err);
    if (rc == 0)
        rc = md_remove_drop(st, vol, idx, n, 0, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume remove-brick %s: "
                       "failed: %s", op, err.msg);
        goto out;
    }
    if (strcmp(op, "force") == 0)
        md_sbuf_printf(&r->text, "Warning: remove-brick force did not "
                       "migrate data: files that were on the removed "
                       "bricks are no longer in the volume (data loss).\n");
    md_sbuf_printf(&r->text, "volume remove-brick %s: success\n", op);
    if (strcmp(op, "commit") == 0)
        md_sbuf_printf(&r->text, "Check the removed bricks to ensure all "
                       "files were migrated; copy any file left there back "
                       "through a mount before reusing the brick.\n");
    md_node_add(r->root, "volRemoveBrick", NULL);
    md_node_add(r->root->last, "volname", vol->name);
    md_node_add(r->root->last, "op", op);

out:
    free(idx);
}
