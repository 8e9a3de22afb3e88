/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replace-brick: `volume replace-brick VOL OLD NEW commit force` (the one
 * form GlusterFS still has), for replicated volumes: NEW takes OLD's
 * place in its replica set and self-heal fills it from the other copies.
 *
 * The brick keeps its id, so its replica slot name (`<vol>-<brickid>`:
 * the protocol/client name, the child of cluster/replicate and the name
 * of the records `trusted.mortar.rep.<slot>`) stays: records on the other
 * bricks that blame the slot still mean it. Only host, path and port
 * change in the store. Steps:
 *   1. OLD's process stops (clients see that copy go down: what they
 *      change from now on is recorded against the slot);
 *   2. the node that runs the command makes each other brick of the set
 *      that answers (over TCP, wherever it is) blame the slot at its
 *      root for entry and metadata (heal-mark.c); before NEW runs, so no
 *      client ever reads the empty copy as good;
 *   3. NEW is created and stamped with the volume id, the store saved
 *      (crash-safe, version bumped: clients refetch the volfile and
 *      connect the slot's client to NEW), OLD's volume id removed (the
 *      directory may be reused; its data is left alone);
 *   4. NEW starts, and the volume's self-heal daemon gets a round: the
 *      root's entry heal makes the top-level names on NEW and marks each
 *      for its own heal, the next rounds go down the tree.
 * Nothing changes when a check fails. With peers, the checks run in the
 * transaction's stage on every node (md_replace_stage: NEW's node checks
 * its directory) and on the originator before it (md_replace_precheck:
 * it holds OLD, unless OLD's node is down, and another brick of the set
 * answers the marking XATTROP); its commit comes first, so OLD is
 * stopped and the others marked before NEW's node starts NEW. A marking
 * that fails at commit fails the command and restarts OLD without
 * peers; in a transaction the peers commit anyway, so the brick is
 * replaced with a warning.
 * Threads: the worker thread with md_state.lock held.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mortard.h"

#define MD_USAGE_REPLACE "volume replace-brick <VOLNAME> <SOURCE-BRICK> " \
                         "<NEW-BRICK> {commit force}"
#define MD_REPLACE_FAIL "volume replace-brick: failed: "


size_t
md_vol_brick_arg(struct md_state *st, const struct md_volume *vol,
                 const char *arg, vl_err_t *err)
{
    char *host = NULL, *path = NULL;
    size_t idx;

    if (md_parse_brick(arg, &host, &path, err) != 0)
        return vol->n_bricks;
    idx = md_vol_brick_find(st, vol, host, path);
    free(host);
    free(path);
    if (idx == vol->n_bricks)
        vl_err_set(err, "brick: %s does not exist in volume: %s", arg,
                   vol->name);
    return idx;
}


size_t
md_set_mark_others(struct md_state *st, const struct md_volume *vol,
                   size_t idx, const char *slot, bool is_probe,
                   vl_err_t *err)
{
    unsigned rep = md_vol_replica(vol);

    return md_heal_mark_set(st, vol, idx / rep * rep, rep, idx, slot,
                            is_probe, err);
}


int
md_set_brick_check(struct md_state *st, const struct md_volume *vol,
                   const char *arg, size_t *idx, vl_err_t *err)
{
    const char *busy;

    if (vol->status != MD_VOL_STARTED) {
        vl_err_set(err, "volume: %s is not started", vol->name);
        return -ENOTCONN;
    }
    busy = md_vol_busy(st, vol);
    if (busy != NULL) {
        vl_err_set(err, "Volume %s: %s", vol->name, busy);
        return -EBUSY;
    }
    *idx = md_vol_brick_arg(st, vol, arg, err);
    return *idx == vol->n_bricks ? -EINVAL : 0;
}


/* The checks before anything changes: 0 with *idx the brick to replace
 * and *nb the new brick (host and path malloc'd), or -errno with err
 * set. is_origin: the node that runs the command (it must hold OLD
 * unless OLD's node is down). */
static int
md_replace_check(struct md_state *st, struct md_volume *vol, char **argv,
                 bool is_origin, size_t *idx, struct md_brick *nb,
                 vl_err_t *err)
{
    const struct md_brick *old;
    char *hosts[1] = {NULL}, *paths[1] = {NULL};
    int rc;

    if (md_vol_replica(vol) < 2) {
        vl_err_set(err, "replace-brick is not permitted on distribute only "
                   "volumes. Please use add-brick and remove-brick "
                   "operations instead.");
        return -ENOTSUP;
    }
    rc = md_set_brick_check(st, vol, argv[3], idx, err);
    if (rc != 0)
        return rc;
    old = &vol->bricks[*idx];
    if (is_origin && !md_brick_is_local(st, old)) {
        struct md_peer *p = md_peer_find_host(st, old->host);

        if (p != NULL && p->is_connected) {
            vl_err_set(err, "run the command on %s, the node of brick %s:%s "
                       "(it stops that brick before the new one is "
                       "filled)", old->host, old->host, old->path);
            return -EXDEV;
        }
    }
    /* force is part of the grammar: whatever add-brick allows with it. */
    rc = md_check_new_bricks(st, &argv[4], 1, true, hosts, paths, err);
    if (rc != 0) {
        free(hosts[0]);
        free(paths[0]);
        return rc;
    }
    *nb = *old;
    nb->host = hosts[0];
    nb->path = paths[0];
    nb->port = md_port_pick_excl(st, NULL, 0);
    if (nb->port == 0) {
        free(nb->host);
        free(nb->path);
        vl_err_set(err, "no free brick port from %u", st->brick_base_port);
        return -EADDRINUSE;
    }
    return 0;
}


bool
md_replace_is_cmd(int argc, char **argv)
{
    return argc == 7 && strcmp(argv[5], "commit") == 0 &&
           strcmp(argv[6], "force") == 0;
}


int
md_replace_stage(struct md_state *st, int argc, char **argv, vl_err_t *err)
{
    struct md_volume *vol = md_volume_find(st, argv[2]);
    struct md_brick nb = {0};
    size_t idx;
    int rc;

    if (!md_replace_is_cmd(argc, argv)) {
        vl_err_set(err, "Usage: %s", MD_USAGE_REPLACE);
        return -EINVAL;
    }
    if (vol == NULL) {
        vl_err_set(err, "Volume %s does not exist", argv[2]);
        return -ENOENT;
    }
    rc = md_replace_check(st, vol, argv, false, &idx, &nb, err);
    if (rc == 0) {
        free(nb.host);
        free(nb.path);
    }
    return rc;
}


int
md_replace_precheck(struct md_state *st, int argc, char **argv,
                    struct md_result *r)
{
    struct md_volume *vol = md_volume_find(st, argv[2]);
    struct md_brick nb = {0};
    char slot[128];
    vl_err_t err = {.msg = ""};
    size_t idx;
    int rc;

    if (vol == NULL || !md_replace_is_cmd(argc, argv))
        return 0; /* the stage said why */
    rc = md_replace_check(st, vol, argv, true, &idx, &nb, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, MD_REPLACE_FAIL "%s", err.msg);
        return rc;
    }
    free(nb.host);
    free(nb.path);
    /* Once the peers committed, nothing can be undone: the marking must
     * succeed then, so some other brick of the set must answer now. */
    md_brick_subvol(vol, &vol->bricks[idx], slot, sizeof(slot));
    if (md_set_mark_others(st, vol, idx, slot, true, &err) == 0) {
        md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, MD_REPLACE_FAIL "no other "
                       "brick of the replica set of %s:%s is up to heal the "
                       "new brick from (%s)", vol->bricks[idx].host,
                       vol->bricks[idx].path, err.msg);
        return -ENOTCONN;
    }
    return 0;
}


/* Steps 2 and 3 (OLD already stopped): 0, or -errno with err set, the
 * store unchanged and NEW without the volume id (a directory made for
 * it stays when only the save failed). In a transaction the peers
 * commit whatever happens here, so a marking that fails (every other
 * brick went down since the precheck) is logged and the brick replaced
 * all the same; *is_unmarked says so. */
static int
md_replace_swap(struct md_state *st, struct md_volume *vol, size_t idx,
                struct md_brick *nb, bool *is_unmarked, vl_err_t *err)
{
    struct md_brick old = vol->bricks[idx];
    char slot[128];
    vl_gfid_t id;
    int rc;

    *is_unmarked = false;
    if (vl_gfid_parse(vol->id, &id) != 0) {
        vl_err_set(err, "Volume %s has a bad id", vol->name);
        return -EINVAL;
    }
    md_brick_subvol(vol, &old, slot, sizeof(slot));
    if (md_txn_is_origin(st) &&
        md_set_mark_others(st, vol, idx, slot, false, err) == 0) {
        vl_err_t why = *err;

        vl_err_set(err, "no other brick of the replica set of %s:%s could "
                   "be marked as the source of a heal of %s:%s (%s)",
                   old.host, old.path, nb->host, nb->path, why.msg);
        if (!st->txn.is_set)
            return -ENOTCONN;
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "replace-brick %s: %s; replacing "
                "all the same (the peers commit it)", vol->name, err->msg);
        *is_unmarked = true;
    }
    rc = md_bricks_stamp(st, nb, 1, &id, err);
    if (rc != 0)
        return rc;
    vol->bricks[idx] = *nb;
    rc = md_volume_save(st, vol, err);
    if (rc != 0) {
        vol->bricks[idx] = old;
        md_bricks_unstamp(st, nb, 1);
        return rc;
    }
    md_server_notify();
    md_bricks_unstamp(st, &old, 1);
    free(old.host);
    free(old.path);
    return 0;
}


void
md_cmd_replace_brick(struct md_state *st, int argc, char **argv,
                     struct md_result *r)
{
    struct md_volume *vol;
    struct md_brick nb = {0};
    const struct md_brick *b;
    vl_err_t err = {.msg = ""};
    bool is_old_local, is_unmarked = false;
    size_t idx;
    int rc;

    if (!md_replace_is_cmd(argc, argv)) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: %s",
                       MD_USAGE_REPLACE);
        return;
    }
    vol = md_volume_find(st, argv[2]);
    if (vol == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, MD_REPLACE_FAIL "Volume %s "
                       "does not exist", argv[2]);
        return;
    }
    rc = md_replace_check(st, vol, argv, md_txn_is_origin(st), &idx, &nb,
                          &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, MD_REPLACE_FAIL "%s", err.msg);
        return;
    }
    is_old_local = md_brick_is_local(st, &vol->bricks[idx]);
    if (is_old_local) {
        rc = md_brick_stop(st, vol, &vol->bricks[idx], &err);
        if (rc != 0)
            goto fail;
    }
    rc = md_replace_swap(st, vol, idx, &nb, &is_unmarked, &err);
    if (rc != 0) {
        vl_err_t e2 = {.msg = ""};

        if (is_old_local &&
            md_brick_start(st, vol, &vol->bricks[idx], &e2) != 0)
            vl_glog(MD_DOMAIN, VL_LOG_ERROR, "replace-brick %s: restarting "
                    "%s:%s: %s", vol->name, vol->bricks[idx].host,
                    vol->bricks[idx].path, e2.msg);
        goto fail;
    }
    b = &vol->bricks[idx];
    if (md_brick_is_local(st, b)) {
        rc = md_brick_start(st, vol, b, &err);
        if (rc != 0) {
            md_result_fail(r, MD_EXIT_FAIL, -rc, MD_REPLACE_FAIL "brick "
                           "replaced, but %s (retry with volume start %s "
                           "force)", err.msg, vol->name);
            return;
        }
    }
    /* The supervisor restarts this node's daemon for the new version,
     * which starts with a round; meanwhile a running one gets one now. */
    (void)md_heal_kick(st, vol->name);
    if (is_unmarked)
        md_sbuf_printf(&r->text, "Warning: %s: nothing tells self-heal to "
                       "fill the new brick; once the other bricks are up, "
                       "replace it again with an empty directory.\n",
                       err.msg);
    md_sbuf_printf(&r->text, "volume replace-brick: success: replace-brick "
                   "commit force operation successful\n");
    md_node_add(r->root, "volReplaceBrick", NULL);
    md_node_add(r->root->last, "volname", vol->name);
    md_node_add(r->root->last, "sourceBrick", argv[3]);
    md_node_addf(r->root->last, "newBrick", "%s:%s", b->host, b->path);
    return;

fail:
    free(nb.host);
    free(nb.path);
    md_result_fail(r, MD_EXIT_FAIL, -rc, MD_REPLACE_FAIL "%s", err.msg);
}
