/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cluster/replicate: synchronous N-way replication (issue 21). Every
 * child holds a full copy of every object; modifying fops go to every up
 * child under a transaction that leaves pending records on the bricks
 * (rep-txn.c), reads go to one child known good (rep-read.c), quorum
 * decides whether a modification may run at all. Formats and rules:
 * doc/replicate.md.
 *
 * This file: class, options, init/fini, notify (CHILD_UP once one child
 * is up and every child answered or the first-connect grace expired;
 * CHILD_DOWN when all are down), quorum, inode and fd ctx helpers, dump.
 *
 * Intercepts: every fop (modifying fops in rep-txn.c / rep-entry.c,
 *             lookup and reads in rep-read.c, open, opendir, flush,
 *             fsync, statfs and locks in rep-fanout.c).
 * Per inode:  struct rep_inode_ctx (readable children), inode->lock.
 * Per fd:     struct rep_fd_ctx (children the fd is open on), fd->lock.
 * Per req:    struct rep_local.
 * Threads:    no threads of its own; a fop continues in the callback of
 *             the child that answered last.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "rep-heal.h"
#include "rep.h"


/* ---- helpers ---- */

rep_mask_t
rep_up_mask(vl_xlator_t *xl)
{
    struct rep_priv *priv = rep_priv(xl);
    rep_mask_t mask = 0;

    pthread_mutex_lock(&priv->lock);
    for (unsigned i = 0; i < priv->n; i++)
        if (priv->is_up[i])
            mask |= 1u << i;
    pthread_mutex_unlock(&priv->lock);
    return mask;
}


/* auto: more than half of the children, or exactly half when the first
 * child is among them (GlusterFS's rule: of two halves of an even set,
 * only the one with the first child may write, so a partition cannot
 * let both sides write). fixed: at least quorum-count. none: one. */
bool
rep_has_quorum(vl_xlator_t *xl, rep_mask_t mask)
{
    struct rep_priv *priv = rep_priv(xl);
    unsigned n_in = rep_popcount(mask);

    switch (priv->quorum_type) {
    case REP_QUORUM_FIXED:
        return n_in >= priv->quorum_count && n_in > 0;
    case REP_QUORUM_AUTO:
        return 2 * n_in > priv->n || (2 * n_in == priv->n && (mask & 1u));
    default:
        return n_in > 0;
    }
}


struct rep_inode_ctx *
rep_ictx(vl_xlator_t *xl, vl_inode_t *inode)
{
    return vl_inode_ctx(inode, xl);
}


struct rep_fd_ctx *
rep_fctx(vl_xlator_t *xl, vl_fd_t *fd)
{
    return vl_fd_ctx(fd, xl);
}


rep_mask_t
rep_fd_opened(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct rep_fd_ctx *ctx = rep_fctx(xl, fd);
    rep_mask_t mask;

    pthread_mutex_lock(&fd->lock);
    mask = ctx->is_set ? ctx->opened : (1u << rep_priv(xl)->n) - 1;
    pthread_mutex_unlock(&fd->lock);
    return mask;
}


rep_mask_t
rep_fd_missing(vl_xlator_t *xl, vl_fd_t *fd)
{
    struct rep_fd_ctx *ctx = rep_fctx(xl, fd);
    rep_mask_t up = rep_up_mask(xl), missing = 0;

    if (!S_ISREG(fd->inode->type))
        return 0;
    pthread_mutex_lock(&fd->lock);
    if (ctx->is_set)
        missing = up & ~ctx->opened;
    pthread_mutex_unlock(&fd->lock);
    return missing;
}


void
rep_fd_set_opened(vl_xlator_t *xl, vl_fd_t *fd, rep_mask_t mask)
{
    struct rep_fd_ctx *ctx = rep_fctx(xl, fd);

    pthread_mutex_lock(&fd->lock);
    ctx->opened = mask;
    ctx->is_set = true;
    ctx->has_dir_child = false;
    pthread_mutex_unlock(&fd->lock);
}


bool
rep_inode_readable(vl_xlator_t *xl, vl_inode_t *inode, rep_mask_t *out)
{
    struct rep_inode_ctx *ctx = rep_ictx(xl, inode);
    unsigned gen = atomic_load(&rep_priv(xl)->event_gen);
    bool ok;

    pthread_mutex_lock(&inode->lock);
    ok = ctx->has_readable && ctx->gen == gen && ctx->readable != 0;
    if (ok)
        *out = ctx->readable;
    pthread_mutex_unlock(&inode->lock);
    return ok;
}


void
rep_inode_set_readable(vl_xlator_t *xl, vl_inode_t *inode, rep_mask_t mask,
                       unsigned gen)
{
    struct rep_inode_ctx *ctx;

    /* A caller may make an object without an inode (distribute's link
     * files): nothing to remember then. */
    if (inode == NULL)
        return;
    ctx = rep_ictx(xl, inode);
    pthread_mutex_lock(&inode->lock);
    ctx->readable = mask;
    ctx->gen = gen;
    ctx->has_readable = true;
    pthread_mutex_unlock(&inode->lock);
}


void
rep_inode_drop_readable(vl_xlator_t *xl, vl_inode_t *inode, rep_mask_t bad)
{
    struct rep_inode_ctx *ctx = rep_ictx(xl, inode);

    pthread_mutex_lock(&inode->lock);
    if (ctx->has_readable) {
        ctx->readable &= ~bad;
        /* Nothing known good left: the next read asks the bricks. */
        if (ctx->readable == 0)
            ctx->has_readable = false;
    }
    pthread_mutex_unlock(&inode->lock);
}


rep_mask_t
rep_inode_good_hint(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct rep_inode_ctx *ctx;
    rep_mask_t mask = 0;

    if (inode == NULL)
        return 0;
    ctx = rep_ictx(xl, inode);
    pthread_mutex_lock(&inode->lock);
    if (ctx->has_readable)
        mask = ctx->readable;
    pthread_mutex_unlock(&inode->lock);
    return mask;
}


/* ---- whose attributes an answer carries ---- */

void
rep_reply_pick_begin(struct rep_local *local, rep_mask_t good)
{
    /* The lowest: any good copy will do. */
    local->reply_pick = good & (0u - good);
    local->has_reply_attrs = false;
}


void
rep_reply_pick_arrive(struct rep_local *local, unsigned idx,
                      const vl_req_t *child)
{
    struct rep_attrs *at = &local->reply_attrs;

    /* Only the picked child's callback writes reply_attrs; the fan-out's
     * last answer reads them after vl_fanout_arrive. */
    if (local->reply_pick != (1u << idx) || child == NULL)
        return;
    at->iatt = child->reply.iatt;
    at->postparent = child->reply.postparent;
    at->has_postparent = child->reply.has_postparent;
    at->postparent2 = child->reply.postparent2;
    at->has_postparent2 = child->reply.has_postparent2;
    local->has_reply_attrs = true;
}


void
rep_reply_pick_apply(struct rep_local *local, vl_req_t *req)
{
    const struct rep_attrs *at = &local->reply_attrs;

    if (!local->has_reply_attrs || !atomic_load(&local->has_reply))
        return;
    req->reply.iatt = at->iatt;
    req->reply.postparent = at->postparent;
    req->reply.has_postparent = at->has_postparent;
    req->reply.postparent2 = at->postparent2;
    req->reply.has_postparent2 = at->has_postparent2;
}


/* ---- lifecycle ---- */

static bool
rep_subtree_is_local(vl_xlator_t *xl)
{
    if (strcmp(xl->cls->type, "protocol/client") == 0)
        return false;
    for (size_t i = 0; i < xl->n_children; i++)
        if (!rep_subtree_is_local(xl->children[i]))
            return false;
    return true;
}


/* Slot i's name: the i-th of pending-names, or the child's name. */
static int
rep_keys_init(vl_xlator_t *xl, struct rep_priv *priv, vl_err_t *err)
{
    const struct rep_conf *conf = VL_CONF(xl, struct rep_conf);
    const char *p = conf->pending_names;
    unsigned i = 0;

    if (p != NULL && *p != '\0') {
        while (i < priv->n) {
            const char *end = strchr(p, ',');
            size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

            if (len == 0 || (len == 5 && strncmp(p, "dirty", 5) == 0)) {
                vl_err_set(err, "pending-names: empty or reserved name "
                                "(\"dirty\") at position %u", i + 1);
                return -EINVAL;
            }
            priv->keys[i] = vl_malloc(xl, sizeof(REP_KEY_PREFIX) + len,
                                      REP_MT_KEY);
            if (priv->keys[i] == NULL)
                return -ENOMEM;
            snprintf(priv->keys[i], sizeof(REP_KEY_PREFIX) + len, "%s%.*s",
                     REP_KEY_PREFIX, (int)len, p);
            i++;
            if (end == NULL)
                break;
            p = end + 1;
        }
        if (i != priv->n || strchr(p, ',') != NULL) {
            vl_err_set(err, "pending-names: %u children need %u names",
                       priv->n, priv->n);
            return -EINVAL;
        }
        return 0;
    }
    for (i = 0; i < priv->n; i++) {
        size_t len = sizeof(REP_KEY_PREFIX) + strlen(xl->children[i]->name);

        if (strcmp(xl->children[i]->name, "dirty") == 0) {
            vl_err_set(err, "a child named \"dirty\" needs pending-names");
            return -EINVAL;
        }
        priv->keys[i] = vl_malloc(xl, len, REP_MT_KEY);
        if (priv->keys[i] == NULL)
            return -ENOMEM;
        snprintf(priv->keys[i], len, "%s%s", REP_KEY_PREFIX,
                 xl->children[i]->name);
    }
    return 0;
}


static void rep_fini(vl_xlator_t *xl);


static int
rep_init(vl_xlator_t *xl, vl_err_t *err)
{
    const struct rep_conf *conf = VL_CONF(xl, struct rep_conf);
    struct rep_priv *priv;
    int rc;

    if (xl->n_children < 2 || xl->n_children > REP_MAX_CHILDREN) {
        vl_err_set(err, "replicate needs 2 to %d subvolumes, got %zu",
                   REP_MAX_CHILDREN, xl->n_children);
        return -EINVAL;
    }
    if (conf->arbiter_count == 1 && xl->n_children != 3) {
        vl_err_set(err, "arbiter-count 1 needs 3 subvolumes (two data "
                        "bricks, then the arbiter), got %zu",
                   xl->n_children);
        return -EINVAL;
    }
    if (conf->quorum_type == REP_QUORUM_FIXED
        && conf->quorum_count > xl->n_children) {
        vl_err_set(err, "quorum-count %" PRIu64 " is more than the %zu "
                        "subvolumes", conf->quorum_count, xl->n_children);
        return -EINVAL;
    }
    priv = vl_calloc(xl, 1, sizeof(*priv), REP_MT_PRIV);
    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    rc = pthread_mutex_init(&priv->lock, NULL);
    if (rc != 0) {
        vl_free(priv);
        vl_err_set(err, "mutex: %s", strerror(rc));
        return -rc;
    }
    priv->n = (unsigned)xl->n_children;
    priv->quorum_type = conf->quorum_type;
    priv->quorum_count = (unsigned)conf->quorum_count;
    priv->is_eager_lock = conf->is_eager_lock;
    priv->post_op_delay = conf->post_op_delay;
    if (conf->arbiter_count == 1)
        priv->arbiter = 1u << (priv->n - 1);
    /* Children without a network below them never report CHILD_UP:
     * they are up from the start. */
    for (unsigned i = 0; i < priv->n; i++)
        priv->is_up[i] = rep_subtree_is_local(xl->children[i]);
    xl->priv = priv;
    rc = rep_keys_init(xl, priv, err);
    if (rc == 0)
        rc = rep_heal_init(xl);
    if (rc != 0) {
        if (rc == -ENOMEM)
            vl_err_set(err, "out of memory");
        rep_fini(xl);
        return rc;
    }
    return 0;
}


static void
rep_fini(vl_xlator_t *xl)
{
    struct rep_priv *priv = rep_priv(xl);

    if (priv == NULL)
        return;
    rep_heal_fini(xl);
    for (unsigned i = 0; i < priv->n; i++)
        vl_free(priv->keys[i]);
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
    xl->priv = NULL;
}


static int
rep_index(vl_xlator_t *xl, vl_xlator_t *child)
{
    for (size_t i = 0; i < xl->n_children; i++)
        if (xl->children[i] == child)
            return (int)i;
    return -1;
}


/* Sends CHILD_UP / CHILD_DOWN upward as the set of up children changes. */
static void
rep_up_check(vl_xlator_t *xl)
{
    struct rep_priv *priv = rep_priv(xl);
    bool send_up = false, send_down = false;
    unsigned n_up = 0;

    pthread_mutex_lock(&priv->lock);
    for (unsigned i = 0; i < priv->n; i++)
        if (priv->is_up[i])
            n_up++;
    if (!priv->is_up_sent && n_up > 0
        && (n_up == priv->n || priv->is_grace_over)) {
        priv->is_up_sent = true;
        send_up = true;
    } else if (priv->is_up_sent && n_up == 0) {
        priv->is_up_sent = false;
        send_down = true;
    }
    pthread_mutex_unlock(&priv->lock);
    if (send_up)
        vl_notify_parents(xl, VL_EV_CHILD_UP);
    if (send_down)
        vl_notify_parents(xl, VL_EV_CHILD_DOWN);
}


static void
rep_grace_over(void *arg)
{
    vl_xlator_t *xl = arg;
    struct rep_priv *priv = rep_priv(xl);

    pthread_mutex_lock(&priv->lock);
    priv->grace_timer = NULL;
    priv->is_grace_over = true;
    pthread_mutex_unlock(&priv->lock);
    rep_up_check(xl);
}


static int
rep_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    struct rep_priv *priv = rep_priv(xl);
    vl_timer_t *timer;
    int idx;
    bool was_up;

    switch (ev) {
    case VL_EV_PARENT_UP:
        pthread_mutex_lock(&priv->lock);
        if (priv->grace_timer == NULL && !priv->is_grace_over)
            priv->grace_timer = vl_timer_add(xl->graph->loop,
                                             REP_FIRST_CONNECT_GRACE_MS,
                                             rep_grace_over, xl);
        pthread_mutex_unlock(&priv->lock);
        vl_notify_default(xl, ev, data);
        rep_up_check(xl);
        return 0;
    case VL_EV_PARENT_DOWN:
        atomic_store(&priv->is_parent_down, true);
        pthread_mutex_lock(&priv->lock);
        timer = priv->grace_timer;
        priv->grace_timer = NULL;
        priv->is_grace_over = true;
        /* Under the lock, which the callback takes first. */
        if (timer != NULL)
            vl_timer_cancel(timer);
        pthread_mutex_unlock(&priv->lock);
        rep_heal_stop(xl); /* heals hold inodes of the table */
        return vl_notify_default(xl, ev, data);
    case VL_EV_CHILD_UP:
    case VL_EV_CHILD_DOWN:
        idx = rep_index(xl, data);
        if (idx < 0)
            return 0;
        pthread_mutex_lock(&priv->lock);
        was_up = priv->is_up[idx];
        priv->is_up[idx] = ev == VL_EV_CHILD_UP;
        pthread_mutex_unlock(&priv->lock);
        /* A child that comes back may have missed changes made by other
         * clients: every inode's readable set is recomputed before its
         * next read. */
        if (was_up != (ev == VL_EV_CHILD_UP))
            atomic_fetch_add(&priv->event_gen, 1);
        vl_log(xl, VL_LOG_INFO, "subvolume %s %s", xl->children[idx]->name,
               ev == VL_EV_CHILD_UP ? "up" : "down");
        rep_up_check(xl);
        return 0;
    default:
        return vl_notify_default(xl, ev, data);
    }
}


static void
rep_dump(vl_xlator_t *xl, FILE *out)
{
    struct rep_priv *priv = rep_priv(xl);

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    fprintf(out, "children=%u\n", priv->n);
    for (unsigned i = 0; i < priv->n; i++) {
        fprintf(out, "child.%u.name=%s\n", i, xl->children[i]->name);
        fprintf(out, "child.%u.up=%d\n", i, priv->is_up[i] ? 1 : 0);
        fprintf(out, "child.%u.key=%s\n", i, priv->keys[i]);
    }
    fprintf(out, "child_up_sent=%d\n", priv->is_up_sent ? 1 : 0);
    pthread_mutex_unlock(&priv->lock);
    fprintf(out, "event_gen=%u\n", atomic_load(&priv->event_gen));
    fprintf(out, "transactions=%" PRIu64 "\n",
            (uint64_t)atomic_load(&priv->n_txn));
    fprintf(out, "transactions_blamed=%" PRIu64 "\n",
            (uint64_t)atomic_load(&priv->n_txn_blamed));
    fprintf(out, "quorum_failures=%" PRIu64 "\n",
            (uint64_t)atomic_load(&priv->n_quorum_fail));
    fprintf(out, "eager_batches=%" PRIu64 "\n",
            (uint64_t)atomic_load(&priv->n_eager_batches));
    fprintf(out, "lookups_records_carried=%" PRIu64 "\n",
            (uint64_t)atomic_load(&priv->n_lookup_carried));
    fprintf(out, "postops_after_answer=%" PRIu64 "\n",
            (uint64_t)atomic_load(&priv->n_detached));
    fprintf(out, "eager_writes=%" PRIu64 "\n",
            (uint64_t)atomic_load(&priv->n_eager_writes));
    fprintf(out, "arbiter=%s\n",
            priv->arbiter != 0 ? xl->children[priv->n - 1]->name : "none");
    fprintf(out, "arbiter_refused=%" PRIu64 "\n",
            (uint64_t)atomic_load(&priv->n_arbiter_refused));
    rep_heal_dump(xl, out);
}


/* close(2) ends the file's write batch even when FLUSH never comes down
 * (mount/fuse answers it itself when nothing below needs it). */
static void
rep_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    if (!atomic_load(&rep_priv(xl)->is_parent_down))
        rep_eager_fd_closed(xl, fd->inode);
}


static void
rep_inode_fop(vl_xlator_t *xl, vl_req_t *req)
{
    rep_txn_inode(xl, req);
}


static const char *const rep_heal_algo_values[] = {"full", "diff", NULL};
/* In enum rep_heal_rule's order (rep-heal.h). */
static const char *const rep_fav_child_values[] = {"none", "size", "ctime",
                                                   "mtime", "majority",
                                                   NULL};
static const char *const rep_quorum_values[] = {"none", "auto", "fixed",
                                                NULL};

static const vl_option_t rep_options[] = {
    VL_OPT_ENUM("quorum-type", struct rep_conf, quorum_type,
                .values = rep_quorum_values, .def = "auto",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.quorum-type"},
                .doc = "Which up children a modification needs: auto (more "
                       "than half, or exactly half including the first "
                       "child), fixed (quorum-count children) or none "
                       "(one; can split-brain). Below it modifications "
                       "fail with EROFS."),
    VL_OPT_UINT("quorum-count", struct rep_conf, quorum_count, .min = 1,
                .max = REP_MAX_CHILDREN, .def = "1",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.quorum-count"},
                .doc = "Children that must be up for a modification with "
                       "quorum-type fixed."),
    VL_OPT_BOOL("eager-lock", struct rep_conf, is_eager_lock, .def = "on",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.eager-lock"},
                .doc = "Let consecutive writes to a file share one lock and "
                       "one pre-op and post-op (ended by flush, fsync, "
                       "another change of the file, post-op-delay without "
                       "writes, or after one second)."),
    VL_OPT_TIME("post-op-delay", struct rep_conf, post_op_delay, .min = 0,
                .max = 10000, .def = "100ms",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.post-op-delay-secs"},
                .doc = "How long an eager-lock batch stays open after its "
                       "last write for the next one (0: end it at once)."),
    VL_OPT_STR("pending-names", struct rep_conf, pending_names, .def = "",
               .flags = VL_OPT_ADVANCED,
               .doc = "Comma-separated names of the replica slots, one per "
                      "child in order, naming the pending xattrs "
                      "trusted.mortar.rep.<name> (empty: the children's "
                      "names). Kept stable when a brick is replaced."),
    VL_OPT_UINT("arbiter-count", struct rep_conf, arbiter_count, .min = 0,
                .max = 1, .def = "0", .flags = VL_OPT_ADVANCED,
                .aliases = {"cluster.arbiter-count"},
                .doc = "1: the last of the 3 children is an arbiter (its "
                       "brick runs features/arbiter: names, attributes "
                       "and records, no data); it is never read from and "
                       "a change it alone would hold is refused with "
                       "ENOTCONN. 0: every child holds data."),
    VL_OPT_BOOL("data-self-heal", struct rep_conf, is_data_heal,
                .def = "on", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.data-self-heal"},
                .doc = "Heal a file's content in the background when a "
                       "lookup finds a copy blamed for it."),
    VL_OPT_BOOL("metadata-self-heal", struct rep_conf, is_metadata_heal,
                .def = "on", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.metadata-self-heal"},
                .doc = "Heal mode, owner, times and xattrs in the "
                       "background when a lookup finds a copy blamed for "
                       "them."),
    VL_OPT_BOOL("entry-self-heal", struct rep_conf, is_entry_heal,
                .def = "on", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.entry-self-heal"},
                .doc = "Heal a directory's names in the background when a "
                       "lookup finds a copy blamed for them."),
    VL_OPT_UINT("background-self-heal-count", struct rep_conf,
                bg_heal_count, .min = 0, .max = 256, .def = "8",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.background-self-heal-count"},
                .doc = "Heals started by lookups that run at once; over "
                       "it none starts (the next lookup tries again). 0: "
                       "no heal on access."),
    VL_OPT_ENUM("data-self-heal-algorithm", struct rep_conf, heal_algo,
                .values = rep_heal_algo_values, .def = "diff",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.data-self-heal-algorithm"},
                .doc = "How a file's content is healed: diff (where the "
                       "stale copy has data, compare 64 KiB blocks by "
                       "SHA-256 on the bricks and copy only those that "
                       "differ) or full (copy every data range). Holes "
                       "stay holes either way."),
    VL_OPT_ENUM("favorite-child-policy", struct rep_conf, fav_child_policy,
                .values = rep_fav_child_values, .def = "none",
                .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.favorite-child-policy"},
                .doc = "How a heal resolves a split-brain by itself: size "
                       "(the largest copy of a file's data), ctime or "
                       "mtime (the newest copy, data and metadata), "
                       "majority (the copies that more than half of the "
                       "copies do not blame, if they agree; data and "
                       "metadata) or none (left alone for the resolve "
                       "keys). A name held as different objects (a GFID "
                       "split-brain) keeps the object the rule picks "
                       "(majority: the one more than half of the copies "
                       "hold; no directory is removed by size or times), "
                       "and a directory in entry split-brain is merged. "
                       "A tie resolves nothing."),
    VL_OPT_SIZE("heal-max-rate", struct rep_conf, heal_max_rate, .min = 0,
                .def = "0", .flags = VL_OPT_SETTABLE | VL_OPT_CLIENT,
                .aliases = {"cluster.heal-max-rate"},
                .doc = "Bytes per second that the heals of this replica set "
                       "in one process (the self-heal daemon's threads "
                       "together, or a client's heals on access) write to "
                       "stale copies; 0: no limit. A throttle for the "
                       "bricks' disks while a returned brick is filled."),
    VL_OPT_END,
};

static const char *const rep_mem_types[] = {"misc", "priv", "key",
                                            "inspect", NULL};

const vl_xlator_class_t xl_cluster_replicate = {
    .abi = VL_XLATOR_ABI,
    .type = "cluster/replicate",
    .prefix = "replicate",
    .version = {0, 1, 0},
    .flags = VL_XL_MANY_CHILDREN,
    .conf_size = sizeof(struct rep_conf),
    .req_priv_size = sizeof(struct rep_local),
    .inode_ctx_size = sizeof(struct rep_inode_ctx),
    .fd_ctx_size = sizeof(struct rep_fd_ctx),
    .options = rep_options,
    .mem_types = rep_mem_types,
    .doc = "Keeps a full copy of every object on each subvolume: "
           "modifications go to all of them under a transaction that "
           "records on the bricks which copies missed a change; reads come "
           "from a copy known good.",
    .init = rep_init,
    .fini = rep_fini,
    .notify = rep_notify,
    .release = rep_release,
    .dump = rep_dump,
    .fops = {
        [VL_FOP_LOOKUP] = rep_lookup,
        [VL_FOP_STAT] = rep_read_fop,
        [VL_FOP_SETATTR] = rep_inode_fop,
        [VL_FOP_ACCESS] = rep_read_fop,
        [VL_FOP_READLINK] = rep_read_fop,
        [VL_FOP_MKNOD] = rep_txn_entry,
        [VL_FOP_MKDIR] = rep_txn_entry,
        [VL_FOP_UNLINK] = rep_txn_entry,
        [VL_FOP_RMDIR] = rep_txn_entry,
        [VL_FOP_SYMLINK] = rep_txn_entry,
        [VL_FOP_RENAME] = rep_txn_entry,
        [VL_FOP_LINK] = rep_txn_entry,
        [VL_FOP_CREATE] = rep_txn_entry,
        [VL_FOP_OPEN] = rep_open,
        [VL_FOP_READ] = rep_read_fop,
        [VL_FOP_WRITE] = rep_inode_fop,
        [VL_FOP_FLUSH] = rep_fd_fanout,
        [VL_FOP_FSYNC] = rep_fd_fanout,
        [VL_FOP_OPENDIR] = rep_opendir,
        [VL_FOP_READDIR] = rep_readdir,
        [VL_FOP_STATFS] = rep_statfs,
        [VL_FOP_SETXATTR] = rep_inode_fop,
        [VL_FOP_GETXATTR] = rep_heal_getxattr,
        [VL_FOP_REMOVEXATTR] = rep_inode_fop,
        [VL_FOP_LK] = rep_lock_fop,
        [VL_FOP_INODELK] = rep_lock_fop,
        [VL_FOP_ENTRYLK] = rep_lock_fop,
        [VL_FOP_FALLOCATE] = rep_inode_fop,
        [VL_FOP_COPY_FILE_RANGE] = rep_inode_fop,
        [VL_FOP_LSEEK] = rep_read_fop,
        [VL_FOP_RCHECKSUM] = rep_read_fop,
        [VL_FOP_XATTROP] = rep_inode_fop,
    },
};
