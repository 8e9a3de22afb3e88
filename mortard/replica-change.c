/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replica-change: changing the replica count of a replicated volume
 * (issue 21), GlusterFS's grammar:
 *
 *   volume add-brick VOL replica R+k BRICK... [force]
 *       k new bricks per replica set, given set by set (the first k go
 *       to the first set, ...); every set grows from R to R+k copies.
 *       From replica 1 (plain distribute) each brick becomes a set:
 *       distribute's children change from the bricks' clients to the
 *       sets, which take the bricks' set numbers (pinned here); the
 *       link files name the old children, which distribute never reads
 *       (a link file sends it to every child).
 *   volume add-brick VOL replica 3 arbiter 1 BRICK... [force]
 *       on a replica 2 volume: one new brick per set, each its set's
 *       arbiter (names, attributes, xattrs, no data): replica 3 arbiter 1.
 *   volume remove-brick VOL replica R-k BRICK... force
 *       k bricks of every set, in any order; every set shrinks. force is
 *       required (nothing migrates: the other copies hold the data). On
 *       an arbiter volume: replica 2, naming each set's arbiter only
 *       (the volume becomes a plain replica 2).
 *
 * Names: a brick keeps its id, so its replica slot (`<vol>-<brickid>`,
 * the name of the records `trusted.mortar.rep.<slot>`) keeps its
 * meaning; a new brick gets a new id, a slot no record names yet. A set
 * keeps its name (`<vol>-replicate-<m>`, what distribute's link files
 * hold): the set numbers are pinned into the bricks first (replica.c).
 *
 * Growing, like replace-brick (replace-brick.c, doc/self-heal.md "A
 * replaced brick"): the volume must be started; on the node that runs
 * the command, before the store changes and before any new brick runs,
 * every brick of each set that answers is made to blame each new slot
 * at its root for entry and metadata (heal-mark.c), so no client takes
 * an empty copy for a good one and the self-heal daemon fills the new
 * bricks from the root down. Then the new bricks are stamped, the store
 * saved (clients refetch the volfile: each replicate now has R+k
 * children), the local new bricks started and the daemon kicked.
 *
 * Shrinking: refused while any brick of an affected set has pending
 * heals (a non-empty heal index, what `volume heal VOL info` lists):
 * the brick to remove might then hold the only good copy of something.
 * Each node checks the bricks it holds (in the transaction's stage). The
 * removed bricks stop, lose their volume id and keep their data
 * (md_remove_drop). Going to replica 1 leaves a plain distribute
 * volume over the bricks kept (distribute's children are their clients
 * again; the self-heal daemon stops). An arbiter volume's other changes
 * (data bricks, replica 4, replica 1) are refused.
 *
 * Every check runs before anything changes; with peers they run in the
 * stage on every node (md_replica_change_stage) and the originator
 * probes every set before it (md_replica_change_precheck).
 * Threads: the worker thread with md_state.lock held.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mortard.h"

#define MD_GROW_FAIL "volume add-brick: failed: "


/* The checks of add-brick VOL replica R+k (ba parsed, ba->replica above
 * the count): 0 with hosts/paths[0..n) malloc'd, or -errno with err
 * set. */
static int
md_grow_check(struct md_state *st, const struct md_volume *vol,
              const struct md_brick_args *ba, char **argv, char **hosts,
              char **paths, vl_err_t *err)
{
    unsigned rep = md_vol_replica(vol), k = ba->replica - rep;
    size_t n_sets = md_vol_n_sets(vol), n = (size_t)ba->n_bricks;
    size_t total = vol->n_bricks + n;
    char **lh = NULL, **lp = NULL;
    const char *busy;
    int rc;

    if (vol->arbiter_count != 0) {
        vl_err_set(err, "volume %s is an arbiter volume: raising its replica "
                   "count is not supported (remove its arbiter bricks "
                   "first: remove-brick %s replica 2 ARBITER... force)",
                   vol->name, vol->name);
        return -ENOTSUP;
    }
    if (ba->arbiter != 0 && (rep != 2 || ba->replica != 3)) {
        vl_err_set(err, "volume %s: only a replica 2 volume becomes an "
                   "arbiter volume (replica 3 arbiter 1)", vol->name);
        return -ENOTSUP;
    }
    if (n != n_sets * k) {
        vl_err_set(err, "Incorrect number of bricks (%zu) supplied for "
                   "replica count (%u): volume %s has %zu replica set%s, "
                   "each needs %u new brick%s", n, ba->replica, vol->name,
                   n_sets, n_sets == 1 ? "" : "s", k, k == 1 ? "" : "s");
        return -EINVAL;
    }
    if (vol->status != MD_VOL_STARTED) {
        vl_err_set(err, "Volume %s needs to be started to raise its replica "
                   "count (its bricks are marked as the heal source of the "
                   "new ones)", vol->name);
        return -ENOTCONN;
    }
    busy = md_vol_busy(st, vol);
    if (busy != NULL) {
        vl_err_set(err, "Volume %s: %s", vol->name, busy);
        return -EBUSY;
    }
    rc = md_check_new_bricks(st, argv + ba->first, (int)n, ba->is_force,
                             hosts, paths, err);
    if (rc != 0)
        return rc;
    /* The sets as they will be: the spread rule over old and new. */
    lh = calloc(total, sizeof(*lh));
    lp = calloc(total, sizeof(*lp));
    if (lh == NULL || lp == NULL) {
        vl_err_set(err, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    for (size_t s = 0; s < n_sets; s++) {
        size_t at = s * (rep + k);

        for (unsigned j = 0; j < rep; j++) {
            lh[at + j] = vol->bricks[s * rep + j].host;
            lp[at + j] = vol->bricks[s * rep + j].path;
        }
        for (unsigned j = 0; j < k; j++) {
            lh[at + rep + j] = hosts[s * k + j];
            lp[at + rep + j] = paths[s * k + j];
        }
    }
    rc = md_check_sets_spread(st, lh, lp, total, rep + k, ba->is_force,
                              err);

out:
    free(lh);
    free(lp);
    return rc;
}


/* Marks, for every new brick nb[0..n) (k per set, set by set), every
 * brick of its set that answers: the number of sets where no brick
 * could be marked for some new brick; err says the last failure. */
static size_t
md_grow_mark(struct md_state *st, const struct md_volume *vol,
             const struct md_brick *nb, size_t n, bool is_probe,
             vl_err_t *err)
{
    unsigned rep = md_vol_replica(vol);
    size_t k = n / md_vol_n_sets(vol), n_unmarked = 0;

    for (size_t i = 0; i < n; i++) {
        size_t s = i / k;
        char slot[128];
        vl_err_t e = {.msg = ""};

        md_brick_subvol(vol, &nb[i], slot, sizeof(slot));
        if (md_heal_mark_set(st, vol, s * rep, rep, SIZE_MAX, slot,
                             is_probe, &e) == 0) {
            vl_err_set(err, "no brick of replica set %zu (%s:%s ...) could "
                       "be marked as the heal source of %s:%s (%s)", s,
                       vol->bricks[s * rep].host, vol->bricks[s * rep].path,
                       nb[i].host, nb[i].path, e.msg);
            n_unmarked++;
        }
    }
    return n_unmarked;
}


/* The new brick array: each set's bricks, then its k new ones (the set
 * numbers pinned). NULL on ENOMEM. */
static struct md_brick *
md_grow_layout(struct md_volume *vol, struct md_brick *nb, size_t n)
{
    unsigned rep = md_vol_replica(vol);
    size_t n_sets = md_vol_n_sets(vol), k = n / n_sets;
    struct md_brick *all = calloc(vol->n_bricks + n, sizeof(*all));

    if (all == NULL)
        return NULL;
    for (size_t s = 0; s < n_sets; s++) {
        struct md_brick *to = &all[s * (rep + k)];

        memcpy(to, &vol->bricks[s * rep], rep * sizeof(*to));
        memcpy(to + rep, &nb[s * k], k * sizeof(*to));
        for (size_t j = 0; j < k; j++) {
            to[rep + j].has_set_num = true;
            to[rep + j].set_num = to[0].set_num;
        }
    }
    return all;
}


void
md_replica_grow(struct md_state *st, struct md_volume *vol,
                const struct md_brick_args *ba, char **argv,
                struct md_result *r)
{
    size_t n = (size_t)ba->n_bricks, old_n = vol->n_bricks;
    unsigned old_rep = vol->replica_count, old_next = vol->next_brick;
    unsigned old_arbiter = vol->arbiter_count;
    unsigned old_next_set = vol->next_set;
    char **hosts = calloc(n + 1, sizeof(*hosts));
    char **paths = calloc(n + 1, sizeof(*paths));
    struct md_brick *nb = calloc(n + 1, sizeof(*nb)), *all = NULL;
    struct md_brick *old = vol->bricks;
    vl_err_t err = {.msg = ""};
    bool is_unmarked = false;
    vl_gfid_t id;
    int rc;

    if (hosts == NULL || paths == NULL || nb == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, MD_GROW_FAIL "out of "
                       "memory");
        goto out;
    }
    rc = md_grow_check(st, vol, ba, argv, hosts, paths, &err);
    if (rc == 0 && vl_gfid_parse(vol->id, &id) != 0) {
        vl_err_set(&err, "Volume %s has a bad id", vol->name);
        rc = -EINVAL;
    }
    if (rc != 0)
        goto fail;
    /* Before the new ids: next-set is past every set the id rule named. */
    md_vol_sets_pin(vol);
    rc = md_bricks_fill(st, vol, nb, hosts, paths, n, &err);
    if (rc != 0)
        goto fail;
    /* Before anything changes: once stamped and saved, a new brick may
     * serve, and it must never be read as a good copy. Every set is
     * probed first (in a transaction by the precheck): a set marked for
     * a brick that is then not added keeps a record nothing clears. In
     * a transaction only the originator marks; the peers commit
     * whatever happens here. */
    if (!st->txn.is_set && md_grow_mark(st, vol, nb, n, true, &err) != 0) {
        rc = -ENOTCONN;
        goto fail;
    }
    if (md_txn_is_origin(st) &&
        md_grow_mark(st, vol, nb, n, false, &err) != 0) {
        if (!st->txn.is_set) {
            rc = -ENOTCONN;
            goto fail;
        }
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "add-brick %s: %s; adding all the "
                "same (the peers commit it)", vol->name, err.msg);
        is_unmarked = true;
    }
    rc = md_bricks_stamp(st, nb, n, &id, &err);
    if (rc != 0)
        goto fail;
    all = md_grow_layout(vol, nb, n);
    if (all == NULL) {
        md_bricks_unstamp(st, nb, n);
        vl_err_set(&err, "out of memory");
        rc = -ENOMEM;
        goto fail;
    }
    vol->bricks = all;
    vol->n_bricks = old_n + n;
    vol->replica_count = ba->replica;
    /* The new bricks are last in their sets: the arbiters. */
    if (ba->arbiter != 0)
        vol->arbiter_count = 1;
    rc = md_volume_save(st, vol, &err);
    if (rc != 0) {
        vol->bricks = old;
        vol->n_bricks = old_n;
        vol->replica_count = old_rep;
        vol->arbiter_count = old_arbiter;
        free(all);
        md_bricks_unstamp(st, nb, n);
        goto fail;
    }
    free(old);
    md_server_notify();
    for (size_t i = 0; i < vol->n_bricks; i++) {
        const struct md_brick *b = &vol->bricks[i];

        if (i % vol->replica_count < old_rep || !md_brick_is_local(st, b))
            continue;
        rc = md_brick_start(st, vol, b, &err);
        if (rc != 0) {
            md_result_fail(r, MD_EXIT_FAIL, -rc, MD_GROW_FAIL "bricks "
                           "added, but %s (retry with volume start %s "
                           "force)", err.msg, vol->name);
            goto out_nb;
        }
    }
    /* The supervisor restarts this node's daemon for the new volfile,
     * which starts with a round; a running one gets a round now. */
    (void)md_heal_kick(st, vol->name);
    if (is_unmarked)
        md_sbuf_printf(&r->text, "Warning: %s: nothing tells self-heal to "
                       "fill the new bricks of that set; once its bricks "
                       "are up, reset them (volume reset-brick).\n",
                       err.msg);
    md_sbuf_printf(&r->text, "volume add-brick: success\n");
    md_node_add(r->root, "volAddBrick", NULL);
    md_node_add(r->root->last, "volname", vol->name);
    md_node_addf(r->root->last, "brickCount", "%zu", vol->n_bricks);
    md_node_addf(r->root->last, "replicaCount", "%u", vol->replica_count);
    goto out_nb;

fail:
    for (size_t i = 0; i < n; i++) {
        free(nb[i].host);
        free(nb[i].path);
    }
    vol->next_brick = old_next;
    vol->next_set = old_next_set;
    if (old_next_set == 0)
        for (size_t i = 0; i < vol->n_bricks; i++)
            vol->bricks[i].has_set_num = false;
    md_result_fail(r, MD_EXIT_FAIL, -rc, MD_GROW_FAIL "%s", err.msg);
out_nb:
    free(nb);
    nb = NULL;
out:
    for (size_t i = 0; hosts != NULL && paths != NULL && i < n; i++) {
        free(hosts[i]);
        free(paths[i]);
    }
    free(hosts);
    free(paths);
    free(nb);
}


/* Objects brick b lists in its heal index (a local brick): 0 or more,
 * or -errno with err set. */
static long
md_brick_pending(const struct md_brick *b, vl_err_t *err)
{
    char dir[4096];
    struct dirent *de;
    long n = 0;
    DIR *d;

    if (!md_heal_index_whole(b->path)) {
        vl_err_set(err, "brick %s:%s: its heal index is being rebuilt (the "
                   "machine went down while it ran; the brick rebuilds it "
                   "when it starts): retry once that is done", b->host,
                   b->path);
        return -EBUSY;
    }
    snprintf(dir, sizeof(dir), "%s/.mortar/index/xattrop", b->path);
    d = opendir(dir);
    if (d == NULL) {
        if (errno == ENOENT)
            return 0; /* nothing was ever recorded there */
        vl_err_set(err, "brick %s:%s: reading its heal index: %s", b->host,
                   b->path, strerror(errno));
        return -errno;
    }
    while ((de = readdir(d)) != NULL) {
        vl_gfid_t g;

        if (vl_gfid_parse(de->d_name, &g) == 0)
            n++;
    }
    closedir(d);
    return n;
}


int
md_replica_sets_settled(struct md_state *st, const struct md_volume *vol,
                        const size_t *idx, size_t n, vl_err_t *err)
{
    unsigned rep = md_vol_replica(vol);

    for (size_t s = 0; s < md_vol_n_sets(vol); s++) {
        bool is_touched = false;

        for (size_t i = 0; i < n; i++)
            is_touched = is_touched || idx[i] / rep == s;
        for (size_t j = s * rep; is_touched && j < s * rep + rep; j++) {
            const struct md_brick *b = &vol->bricks[j];
            struct md_peer *p;
            long pending;

            if (!md_brick_is_local(st, b)) {
                /* Its node checks it in the stage; it must take part. */
                p = md_peer_find_host(st, b->host);
                if (p == NULL || !p->is_connected) {
                    vl_err_set(err, "the node of brick %s:%s is not "
                               "connected: its pending heals cannot be "
                               "checked", b->host, b->path);
                    return -EHOSTUNREACH;
                }
                continue;
            }
            pending = md_brick_pending(b, err);
            if (pending < 0)
                return (int)pending;
            if (pending > 0) {
                vl_err_set(err, "brick %s:%s has %ld pending heal%s (volume "
                           "heal %s info lists them): a brick removed now "
                           "may hold the only good copy; retry once heal "
                           "has finished", b->host, b->path, pending,
                           pending == 1 ? "" : "s", vol->name);
                return -EBUSY;
            }
        }
    }
    return 0;
}


/* The checks of remove-brick VOL replica want BRICK... op: idx[0..n)
 * gets the bricks' indexes. is_heal_checked: the pending heals of this
 * node's bricks are checked too. 0 or -errno with err set. */
static int
md_shrink_check(struct md_state *st, struct md_volume *vol, unsigned want,
                const char *op, char *const *bricks, size_t n, size_t *idx,
                bool is_heal_checked, vl_err_t *err)
{
    unsigned rep = md_vol_replica(vol);
    size_t n_sets = md_vol_n_sets(vol);
    const char *busy;
    int rc;

    if (rep == 1) {
        vl_err_set(err, "replica count (%u) option given for non replicate "
                   "volume %s", want, vol->name);
        return -EINVAL;
    }
    if (want > rep) {
        vl_err_set(err, "given replica count (%u) option is more than "
                   "volume %s's replica count (%u)", want, vol->name, rep);
        return -EINVAL;
    }
    if (want == 0) {
        vl_err_set(err, "replica count 0 is not a replica count");
        return -EINVAL;
    }
    if (vol->arbiter_count != 0 && want != 2) {
        vl_err_set(err, "volume %s is an arbiter volume (replica 3 arbiter "
                   "1): only its arbiter bricks can be removed, to replica "
                   "2", vol->name);
        return -ENOTSUP;
    }
    if (strcmp(op, "force") != 0) {
        vl_err_set(err, "Migration of data is not needed when reducing "
                   "replica count. Use the 'force' option");
        return -EINVAL;
    }
    if (n != n_sets * (rep - want)) {
        vl_err_set(err, "need %zu(xN) bricks for reducing replica count of "
                   "the volume from %u to %u", n_sets * (rep - want), rep,
                   want);
        return -EINVAL;
    }
    rc = md_remove_find(st, vol, bricks, n, idx, err);
    if (rc != 0)
        return rc;
    /* A data brick leaves one copy of the data beside the arbiter. */
    for (size_t i = 0; i < n && vol->arbiter_count != 0; i++)
        if (!md_brick_is_arbiter(vol, &vol->bricks[idx[i]])) {
            vl_err_set(err, "brick %s:%s is a data brick of arbiter volume "
                       "%s: only the arbiter bricks (the last of each set) "
                       "can be removed, to replica 2",
                       vol->bricks[idx[i]].host, vol->bricks[idx[i]].path,
                       vol->name);
            return -EINVAL;
        }
    for (size_t s = 0; s < n_sets; s++) {
        size_t n_listed = 0;

        for (size_t i = 0; i < n; i++)
            n_listed += idx[i] / rep == s;
        if (n_listed != rep - want) {
            vl_err_set(err, "every replica set must lose %u brick%s for "
                       "replica %u: the set of %s:%s loses %zu", rep - want,
                       rep - want == 1 ? "" : "s", want,
                       vol->bricks[s * rep].host, vol->bricks[s * rep].path,
                       n_listed);
            return -EINVAL;
        }
    }
    busy = md_vol_busy(st, vol);
    if (busy != NULL) {
        vl_err_set(err, "Volume %s: %s", vol->name, busy);
        return -EBUSY;
    }
    return is_heal_checked ? md_replica_sets_settled(st, vol, idx, n, err)
                           : 0;
}


void
md_replica_shrink(struct md_state *st, struct md_volume *vol,
                  unsigned want, const char *op, char *const *bricks,
                  size_t n, struct md_result *r)
{
    size_t *idx = calloc(n + 1, sizeof(*idx));
    vl_err_t err = {.msg = ""};
    int rc;

    if (idx == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume remove-brick %s: "
                       "failed: out of memory", op);
        return;
    }
    /* In a transaction every node checked its bricks in the stage: a
     * commit never refuses what the others do. */
    rc = md_shrink_check(st, vol, want, op, bricks, n, idx, !st->txn.is_set,
                         &err);
    if (rc == 0) {
        unsigned old_arbiter = vol->arbiter_count;

        md_vol_sets_pin(vol);
        /* The arbiters go: a plain replica 2 (saved with the bricks). */
        vol->arbiter_count = 0;
        rc = md_remove_drop(st, vol, idx, n, want, &err);
        if (rc != 0)
            vol->arbiter_count = old_arbiter;
    }
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume remove-brick %s: "
                       "failed: %s", op, err.msg);
        free(idx);
        return;
    }
    md_sbuf_printf(&r->text, "volume remove-brick %s: success\n", op);
    md_node_add(r->root, "volRemoveBrick", NULL);
    md_node_add(r->root->last, "volname", vol->name);
    md_node_add(r->root->last, "op", op);
    md_node_addf(r->root->last, "replicaCount", "%u", vol->replica_count);
    free(idx);
}


/* The replica count the words of add-brick (is_add) or remove-brick ask
 * for, 0 if none; *first the argv index of the first brick. */
static unsigned
md_replica_change_want(int argc, char **argv, bool is_add, int *first)
{
    struct md_brick_args ba;
    vl_err_t err = {.msg = ""};

    if (!is_add) {
        unsigned long want;

        *first = 5;
        if (argc <= 6 || strcmp(argv[3], "replica") != 0)
            return 0;
        /* Above any count: refused as "more than" the volume's. */
        want = strtoul(argv[4], NULL, 10);
        return want > MD_REPLICA_MAX ? MD_REPLICA_MAX + 1 : (unsigned)want;
    }
    if (md_brick_args_parse(argc, argv, 3, false, &ba, &err) != 0)
        return 0;
    *first = ba.first;
    return ba.replica;
}


int
md_replica_change_stage(struct md_state *st, int argc, char **argv,
                        vl_err_t *err)
{
    bool is_add = strcmp(argv[1], "add-brick") == 0;
    struct md_volume *vol = md_volume_find(st, argv[2]);
    struct md_brick_args ba;
    char **hosts = NULL, **paths = NULL;
    size_t *idx = NULL;
    unsigned want;
    int first = 0, rc = 0;

    want = md_replica_change_want(argc, argv, is_add, &first);
    if (vol == NULL || want == 0 ||
        (want == md_vol_replica(vol) && want > 1))
        return 0; /* the command's own checks */
    if (!is_add) {
        bool is_force = strcmp(argv[argc - 1], "force") == 0;
        int last = argc - 1 - (is_force && argc > 7 &&
                               strcmp(argv[argc - 2], "commit") == 0);

        if (last <= first)
            return 0;
        idx = calloc((size_t)(last - first) + 1, sizeof(*idx));
        if (idx == NULL) {
            vl_err_set(err, "out of memory");
            return -ENOMEM;
        }
        rc = md_shrink_check(st, vol, want, is_force ? "force" :
                             argv[argc - 1], argv + first,
                             (size_t)(last - first), idx, true, err);
        free(idx);
        return rc;
    }
    if (want < md_vol_replica(vol) ||
        md_brick_args_parse(argc, argv, 3, false, &ba, err) != 0)
        return 0;
    hosts = calloc((size_t)ba.n_bricks + 1, sizeof(*hosts));
    paths = calloc((size_t)ba.n_bricks + 1, sizeof(*paths));
    if (hosts == NULL || paths == NULL) {
        vl_err_set(err, "out of memory");
        rc = -ENOMEM;
    } else {
        rc = md_grow_check(st, vol, &ba, argv, hosts, paths, err);
    }
    for (int i = 0; hosts != NULL && paths != NULL && i < ba.n_bricks; i++) {
        free(hosts[i]);
        free(paths[i]);
    }
    free(hosts);
    free(paths);
    return rc;
}


int
md_replica_change_precheck(struct md_state *st, int argc, char **argv,
                           struct md_result *r)
{
    struct md_volume *vol = md_volume_find(st, argv[2]);
    struct md_brick_args ba;
    struct md_brick *nb;
    vl_err_t err = {.msg = ""};
    size_t n, n_sets;
    unsigned rep;
    int rc = 0;

    if (vol == NULL || strcmp(argv[1], "add-brick") != 0 ||
        md_brick_args_parse(argc, argv, 3, false, &ba, &err) != 0)
        return 0;
    rep = md_vol_replica(vol);
    n_sets = md_vol_n_sets(vol);
    n = (size_t)ba.n_bricks;
    if (ba.replica <= rep || n != n_sets * (ba.replica - rep))
        return 0; /* nothing to probe, or the stage said why */
    /* Once the peers committed nothing can be undone: every set must
     * have a brick that answers the marking now. */
    nb = calloc(n, sizeof(*nb));
    if (nb == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, MD_GROW_FAIL "out of "
                       "memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        nb[i].host = (char *)"";
        nb[i].path = (char *)"";
        snprintf(nb[i].id, sizeof(nb[i].id), "brick%u",
                 vol->next_brick + (unsigned)i);
    }
    if (md_grow_mark(st, vol, nb, n, true, &err) != 0) {
        md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, MD_GROW_FAIL "%s",
                       err.msg);
        rc = -ENOTCONN;
    }
    free(nb);
    return rc;
}
