/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-txn: the transaction every modifying fop runs under
 * (doc/replicate.md "Transactions"):
 *
 *   1. quorum   the children it can go to (up, and for an fd fop those
 *               the fd is open on) must make quorum, else EROFS and no
 *               child is touched;
 *   2. lock     inodelk (object) or entrylk (names) in the domain of this
 *               translator's name: first a non-blocking try on every
 *               child at once (one round trip); if any child says
 *               EAGAIN (contention), what was granted is unlocked and
 *               the locks are taken with WAIT, serially in child order
 *               (and item order for rename's two names), so two clients
 *               can never hold part of each other's locks while waiting;
 *               a child whose lock fails otherwise leaves the
 *               transaction; quorum again;
 *   3. pre-op   xattrop on every locked child: dirty +1, and +1 on the
 *               pending slot of every child not in the transaction (it
 *               misses this change whatever happens next); +0 on the
 *               slots of the others, so each answer says whom that copy
 *               blames: the good copies, whose attributes the answer
 *               carries (a returned brick's stale size must not reach
 *               the kernel);
 *   4. fop      on every child whose pre-op succeeded; quorum again;
 *   5. post-op  xattrop on the children where the fop succeeded: dirty
 *               -1 and +1 on the pending slot of each child of the
 *               transaction where it failed; when it failed everywhere
 *               (nothing changed anywhere) the pre-op is undone instead;
 *               when it succeeded on fewer than quorum, none (dirty
 *               stays, nobody is blamed: rep_txn_postop);
 *   6. unlock   every lock taken, then the answer.
 *
 * A crash between any two steps leaves dirty set or a blame recorded on
 * the bricks that changed, so heal knows what to compare.
 *
 * Compound requests (issue 21): the lock try carries the pre-op (the
 * brick applies it once the lock is granted, features/locks) and the
 * post-op carries the unlock (applied whatever the post-op answers): 3
 * round trips per child instead of 5. Each marked object (target) rides
 * on one lock item (rep_cpd_target_item): the only one, or for a rename
 * across directories the item whose name is in that directory. A rename
 * within one directory has two lock items and one target: the first
 * item's try carries the pre-op (the second one's is tried in the same
 * round, so a contended one undoes it as below), and the post-op carries
 * the first one's unlock while the second one's goes out beside it, in
 * the same round, unless the post-op blames a child (then the blame is
 * in before the second name is free). A child whose answer says a part
 * was not done (an older brick, no memory on the brick) gets that part
 * as a request of its own. The carried pre-op is prepared before the locks
 * are known: a child whose lock then fails was not blamed by it, so the
 * children that took the pre-op blame it first (REP_PH_LATE_BLAME), and
 * a contended try undoes the pre-ops it applied before it unlocks (per
 * target: a child may have taken one directory's and not the other's).
 *
 * Writes with eager-lock on run steps 2-3 once per batch and 5-6 when the
 * batch ends (rep-eager.c, through the hooks marked is_eager_*).
 *
 * The post-op after the answer: an entry fop that succeeded on every
 * child that took its pre-op has nothing left to record but dirty -1.
 * It is answered at once, and a carrier request replicate winds into
 * itself (XATTROP, private op REP_TXN_DETACHED_OP, with copies of the lock
 * names and refs on the inodes) runs steps 5 and 6: one round trip less
 * for the caller (GlusterFS's AFR answers before its post-op too). A
 * client that dies before that post-op leaves dirty set on copies that
 * all made the change: heal compares them and finds them equal. Any
 * failure, blame or quorum loss keeps the order: records, unlock, then
 * the answer.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "rep.h"

enum rep_txn_phase {
    REP_PH_LOCK = 0,
    REP_PH_PREOP,
    REP_PH_FOP,
    REP_PH_POSTOP,
    REP_PH_UNLOCK,
    REP_PH_EAGER_BLAME, /* a batch write's failures recorded at once */
    REP_PH_LATE_BLAME,  /* children whose lock failed after a carried
                           pre-op left them unblamed */
};

/* Tag of transaction lock owners: never equal to a FUSE lock owner of a
 * process, so a transaction never shares a lock with an application. */
#define REP_LK_OWNER_TAG 0x7265700000000000ULL

static void rep_txn_lock_next(vl_xlator_t *xl, vl_req_t *req);
static void rep_txn_lock_try(vl_xlator_t *xl, vl_req_t *req);
static void rep_txn_preop(vl_xlator_t *xl, vl_req_t *req);
static void rep_txn_fop(vl_xlator_t *xl, vl_req_t *req);
static void rep_txn_postop(vl_xlator_t *xl, vl_req_t *req);
static void rep_txn_unlock(vl_xlator_t *xl, vl_req_t *req);
static void rep_txn_answer(vl_xlator_t *xl, vl_req_t *req);
static void rep_txn_settle(vl_xlator_t *xl, vl_req_t *req);
static void rep_txn_detached_done(vl_xlator_t *xl, vl_req_t *req);
static bool rep_txn_detach(vl_xlator_t *xl, vl_req_t *req);
static void rep_txn_begin(vl_xlator_t *xl, vl_req_t *req, vl_fd_t *fd);
static void rep_txn_begin_reopened(vl_xlator_t *xl, vl_req_t *req);
static uint32_t rep_txn_records(vl_xlator_t *xl, struct rep_local *local,
                                int dirty_delta, rep_mask_t blame,
                                int blame_delta);
static uint32_t rep_txn_probe_keys(vl_xlator_t *xl, struct rep_local *local,
                                   uint32_t n_keys);
static void rep_txn_preop_answer(vl_xlator_t *xl, vl_req_t *req,
                                 unsigned idx,
                                 const struct vl_xattrop_args *a,
                                 const struct vl_reply *reply);
static void rep_txn_preop_settle(vl_xlator_t *xl, vl_req_t *req);
static void rep_txn_preop_checks(vl_xlator_t *xl, vl_req_t *req);
static void rep_txn_xattrop_send_to(vl_xlator_t *xl, vl_req_t *req,
                                    const rep_mask_t to[REP_TXN_MAX_TARGETS],
                                    uint32_t n_keys);
static void rep_txn_xattrop_send(vl_xlator_t *xl, vl_req_t *req,
                                 rep_mask_t mask, uint32_t n_keys);
static void rep_txn_xattrop_fill(struct rep_local *local, unsigned t,
                                 struct vl_xattrop_args *a, uint32_t n_keys);


int32_t
rep_record_get(const uint8_t *rec, unsigned i)
{
    const uint8_t *p = rec + 4 * i;

    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16
                     | (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}


void
rep_record_set(uint8_t *rec, unsigned i, int32_t v)
{
    uint8_t *p = rec + 4 * i;
    uint32_t u = (uint32_t)v;

    p[0] = (uint8_t)(u >> 24);
    p[1] = (uint8_t)(u >> 16);
    p[2] = (uint8_t)(u >> 8);
    p[3] = (uint8_t)u;
}


/* ---- starting ---- */

/* The children a transaction may use: the up ones and, for an fd fop,
 * those the fd is open on. */
static rep_mask_t
rep_txn_candidates(vl_xlator_t *xl, vl_req_t *req, vl_fd_t *fd)
{
    rep_mask_t mask = rep_up_mask(xl);

    (void)req;
    if (fd != NULL)
        mask &= rep_fd_opened(xl, fd);
    return mask;
}


static void
rep_txn_begin_reopened(vl_xlator_t *xl, vl_req_t *req)
{
    rep_txn_begin(xl, req, VL_REQ_PRIV(req, struct rep_local)->reopen_fd);
}


static void
rep_txn_begin(vl_xlator_t *xl, vl_req_t *req, vl_fd_t *fd)
{
    struct rep_priv *priv = rep_priv(xl);
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t missing;

    /* A child that was down when the file was opened gets the fd now,
     * so it takes part again instead of being blamed by every write. */
    if (fd != NULL && !local->is_reopened
        && (missing = rep_fd_missing(xl, fd)) != 0) {
        rep_fd_reopen(xl, req, fd, missing, rep_txn_begin_reopened);
        return;
    }
    local->all = (rep_mask_t)((1u << priv->n) - 1);
    local->txn = rep_txn_candidates(xl, req, fd);
    local->is_fd = fd != NULL;
    if (!rep_has_quorum(xl, local->txn)) {
        atomic_fetch_add(&priv->n_quorum_fail, 1);
        vl_log(xl, VL_LOG_DEBUG, "%s refused: %u of %u children up, below "
               "quorum", vl_fop_name(req->op), rep_popcount(local->txn),
               priv->n);
        local->result = -EROFS;
        rep_txn_answer(xl, req);
        return;
    }
    if (priv->arbiter != 0 && rep_data_children(xl, local->txn) == 0) {
        /* The arbiter alone: it would hold the change without its data
         * (rep-arbiter.c). */
        atomic_fetch_add(&priv->n_arbiter_refused, 1);
        local->result = -ENOTCONN;
        rep_txn_answer(xl, req);
        return;
    }
    for (unsigned i = 0; i < priv->n; i++) {
        local->ck[i].req = req;
        local->ck[i].idx = i;
    }
    local->lk_owner = REP_LK_OWNER_TAG
                      | (atomic_fetch_add(&priv->n_lock_owner, 1)
                         & 0xffffffffffffULL);
    atomic_fetch_add(&priv->n_txn, 1);
    local->phase = REP_PH_LOCK;
    local->lk_step = 0;
    rep_txn_lock_try(xl, req);
}


/* ---- 2. locks, serially ---- */

static void
rep_txn_lock_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;
    vl_req_t *req = ck->req;
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_xlator_t *xl = req->xl;
    unsigned n = rep_priv(xl)->n;
    unsigned item = local->lk_step / n;

    if (child->status == 0) {
        local->lk_held[item] |= 1u << ck->idx;
    } else {
        /* That child leaves the transaction: it is blamed like a down
         * child (it may still hold earlier items: those are unlocked
         * with the rest). */
        vl_log(xl, VL_LOG_DEBUG, "lock on %s failed: %s",
               xl->children[ck->idx]->name, strerror(-child->status));
        local->txn &= ~(1u << ck->idx);
        if (local->first_err == 0)
            local->first_err = child->status;
    }
    local->lk_step++;
    rep_txn_lock_next(xl, req);
}


/* A lock request for item on child i (NULL on ENOMEM). */
static vl_req_t *
rep_txn_lock_req(vl_xlator_t *xl, vl_req_t *req, unsigned item, unsigned i,
                 enum vl_lock_cmd cmd)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    const struct rep_txn_target *t = &local->lk[item];
    vl_req_t *child;

    child = vl_req_new_op(req, xl->children[i],
                          local->is_entry ? VL_FOP_ENTRYLK : VL_FOP_INODELK);
    if (child == NULL)
        return NULL;
    child->caller.lk_owner = local->lk_owner;
    if (local->is_entry) {
        struct vl_entrylk_args *a = VL_ARGS(child, entrylk);

        a->domain = xl->name;
        a->loc.parent = t->lk_parent;
        a->loc.name = t->lk_name;
        a->cmd = cmd;
        a->type = F_WRLCK;
        if (local->is_cpd && cmd == VL_LOCK_TRY
            && rep_cpd_item_target(local, item) >= 0)
            a->xop = &local->cpd_xop[rep_cpd_item_target(local, item)];
    } else {
        struct vl_inodelk_args *a = VL_ARGS(child, inodelk);

        a->domain = xl->name;
        a->loc.inode = t->inode;
        a->cmd = cmd;
        a->flock.type = F_WRLCK;
        a->flock.whence = SEEK_SET;
        a->flock.start = 0;
        a->flock.len = 0;
        if (local->is_cpd && cmd == VL_LOCK_TRY && item == 0)
            a->xop = &local->cpd_xop[0];
    }
    return child;
}


/* Every lock is taken (or its child left the transaction). */
static void
rep_txn_locked(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    if (local->txn == 0) {
        local->result = local->first_err != 0 ? local->first_err : -EIO;
        rep_txn_unlock(xl, req);
        return;
    }
    if (!rep_has_quorum(xl, local->txn)) {
        atomic_fetch_add(&rep_priv(xl)->n_quorum_fail, 1);
        local->result = -EROFS;
        if (local->is_cpd && rep_cpd_any_done(local)) {
            /* Carried pre-ops were applied: undone with the unlock. */
            rep_cpd_undo_prepare(local);
            rep_txn_postop(xl, req);
            return;
        }
        rep_txn_unlock(xl, req);
        return;
    }
    if (local->is_cpd) {
        rep_mask_t need[REP_TXN_MAX_TARGETS] = {0};
        bool is_needed = false;

        /* Granted without the carried pre-op (a child that does not know
         * compounds): it gets the same pre-op on its own. */
        for (unsigned t = 0; t < local->n_targets; t++) {
            need[t] = local->txn & ~atomic_load(&local->cpd_done[t])
                      & ~atomic_load(&local->cpd_bad[t]);
            is_needed = is_needed || need[t] != 0;
        }
        local->phase = REP_PH_PREOP;
        if (is_needed) {
            rep_txn_xattrop_send_to(xl, req, need, local->cpd_n_keys);
            return;
        }
        atomic_store(&local->bad, 0);
        rep_txn_preop_settle(xl, req);
        return;
    }
    rep_txn_preop(xl, req);
}


static void
rep_txn_lock_next(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    unsigned n = rep_priv(xl)->n;

    /* The next (item, child) pair still in the transaction. */
    while (local->lk_step < local->n_lk * n
           && !(local->txn & (1u << (local->lk_step % n))))
        local->lk_step++;
    if (local->lk_step < local->n_lk * n) {
        unsigned item = local->lk_step / n, i = local->lk_step % n;
        vl_req_t *child = rep_txn_lock_req(xl, req, item, i, VL_LOCK_WAIT);

        if (child == NULL) {
            local->txn &= ~(1u << i);
            if (local->first_err == 0)
                local->first_err = -ENOMEM;
            local->lk_step++;
            rep_txn_lock_next(xl, req);
            return;
        }
        vl_wind(child, rep_txn_lock_done, &local->ck[i]);
        return;
    }
    rep_txn_locked(xl, req);
}


/* ---- 2. locks, first all at once without waiting ---- */

static void
rep_txn_try_arrive(vl_req_t *req, unsigned item, unsigned i, int status,
                   const vl_req_t *child)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_xlator_t *xl = req->xl;

    if (status == 0) {
        int t = local->is_cpd ? rep_cpd_item_target(local, item) : -1;

        atomic_fetch_or(&local->try_held[item], 1u << i);
        if (t >= 0 && child != NULL && child->reply.has_xop) {
            if (child->reply.xop_status == 0) {
                atomic_fetch_or(&local->cpd_done[t], 1u << i);
                rep_txn_preop_answer(xl, req, i, &local->cpd_xop[t],
                                     &child->reply);
            } else {
                atomic_fetch_or(&local->cpd_bad[t], 1u << i);
                vl_log(xl, VL_LOG_WARNING, "pre-op xattrop on %s failed: "
                       "%s", xl->children[i]->name,
                       strerror(-child->reply.xop_status));
            }
        }
    } else if (status == -EAGAIN) {
        atomic_store(&local->is_contended, true);
    } else {
        atomic_fetch_or(&local->bad, 1u << i);
        vl_log(xl, VL_LOG_DEBUG, "lock on %s failed: %s",
               xl->children[i]->name, strerror(-status));
        /* Any child's error will do for the answer if all fail. */
        if (local->first_err == 0)
            local->first_err = status;
    }
    if (!vl_fanout_arrive(&local->fan, status))
        return;
    for (unsigned k = 0; k < local->n_lk; k++)
        local->lk_held[k] = atomic_load(&local->try_held[k]);
    local->txn &= ~atomic_load(&local->bad);
    if (atomic_load(&local->is_contended)) {
        /* Someone else holds one of the locks: give back what was
         * granted, then wait for the locks in the global order. */
        local->is_lock_retry = true;
        if (local->is_cpd && rep_cpd_any_done(local)) {
            /* Pre-ops carried by granted locks: undone (with the
             * unlock) before the serial retry takes the locks again. */
            rep_cpd_undo_prepare(local);
            rep_txn_postop(xl, req);
            return;
        }
        rep_txn_unlock(xl, req);
        return;
    }
    rep_txn_locked(xl, req);
}


static void
rep_txn_try_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;
    unsigned n = rep_priv(ck->req->xl)->n;

    rep_txn_try_arrive(ck->req, ck->idx / n, ck->idx % n, child->status,
                       child);
}


static void
rep_txn_lock_try(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    unsigned n = rep_priv(xl)->n, n_lk = local->n_lk;
    rep_mask_t mask = local->txn;

    atomic_store(&local->bad, 0);
    atomic_store(&local->is_contended, false);
    for (unsigned t = 0; t < REP_TXN_MAX_TARGETS; t++) {
        atomic_store(&local->cpd_done[t], 0);
        atomic_store(&local->cpd_bad[t], 0);
        local->undo_part[t] = 0;
    }
    for (unsigned k = 0; k < n_lk; k++)
        atomic_store(&local->try_held[k], 0);
    /* A child granted the first item (and its pre-op) whose second lock
     * then fails leaves the transaction with its dirty count raised, as
     * if it went down between the parts: the others blame it (late), and
     * its heal clears that count. */
    local->is_cpd = rep_cpd_can_carry(local);
    if (local->is_cpd) {
        /* The pre-op rep_txn_preop would send once every lock is in. */
        uint32_t n_keys = rep_txn_records(xl, local, 1,
                                          local->all & ~local->txn, 1);

        local->preop_blame = local->all & ~local->txn;
        local->cpd_n_keys = rep_txn_probe_keys(xl, local, n_keys);
        for (unsigned t = 0; t < local->n_targets; t++)
            rep_txn_xattrop_fill(local, t, &local->cpd_xop[t],
                                 local->cpd_n_keys);
    }
    for (unsigned k = 0; k < n_lk * n; k++) {
        local->lk_ck[k].req = req;
        local->lk_ck[k].idx = k;
    }
    vl_fanout_begin(&local->fan, (int)(rep_popcount(mask) * n_lk));
    /* Nothing of local is read after the last wind. */
    for (unsigned k = 0; k < n_lk; k++) {
        for (unsigned i = 0; i < n; i++) {
            vl_req_t *child;

            if (!(mask & (1u << i)))
                continue;
            child = rep_txn_lock_req(xl, req, k, i, VL_LOCK_TRY);
            if (child == NULL) {
                rep_txn_try_arrive(req, k, i, -ENOMEM, NULL);
                continue;
            }
            vl_wind(child, rep_txn_try_done, &local->lk_ck[k * n + i]);
        }
    }
}


/* ---- 3. and 5. pre-op and post-op ---- */

/* Fills the xattrop arguments: dirty gets dirty_delta on counter kind,
 * each child of blame gets blame_delta. Returns the number of keys. */
static uint32_t
rep_txn_records(vl_xlator_t *xl, struct rep_local *local, int dirty_delta,
                rep_mask_t blame, int blame_delta)
{
    struct rep_priv *priv = rep_priv(xl);
    uint32_t k = 0;

    memset(local->x_buf, 0, sizeof(local->x_buf));
    local->x_names[k] = REP_KEY_DIRTY;
    rep_record_set(local->x_buf[k], (unsigned)local->kind, dirty_delta);
    k++;
    for (unsigned j = 0; j < priv->n; j++) {
        if (!(blame & (1u << j)))
            continue;
        local->x_names[k] = priv->keys[j];
        rep_record_set(local->x_buf[k], (unsigned)local->kind, blame_delta);
        k++;
    }
    for (uint32_t i = 0; i < k; i++) {
        local->x_values[i] = local->x_buf[i];
        local->x_sizes[i] = REP_RECORD_SIZE;
    }
    local->is_x_blaming = blame != 0 && blame_delta > 0;
    return k;
}


/* The pre-op also adds zero to the slot of every child of the
 * transaction, so that each answer says, under the transaction's lock,
 * whom that copy blames (rep_txn_preop_answer). It fits beside dirty and
 * the down children's keys unless there are 16 children: then nothing
 * is probed and the copies' last known state stands in. */
static uint32_t
rep_txn_probe_keys(vl_xlator_t *xl, struct rep_local *local,
                   uint32_t n_keys)
{
    struct rep_priv *priv = rep_priv(xl);

    atomic_store(&local->preop_blamed, 0);
    atomic_store(&local->preop_blamed_kind, 0);
    local->has_probe = n_keys + rep_popcount(local->txn) <= VL_XATTROP_MAX;
    if (!local->has_probe)
        return n_keys;
    for (unsigned j = 0; j < priv->n; j++) {
        if (!(local->txn & (1u << j)))
            continue;
        /* x_buf rows past n_keys are zeroed by rep_txn_records. */
        local->x_names[n_keys] = priv->keys[j];
        local->x_values[n_keys] = local->x_buf[n_keys];
        local->x_sizes[n_keys] = REP_RECORD_SIZE;
        n_keys++;
    }
    return n_keys;
}


/* Notes the children of the transaction child idx's pre-op answer
 * blames, for any kind and for the transaction's. */
static void
rep_txn_preop_answer(vl_xlator_t *xl, vl_req_t *req, unsigned idx,
                     const struct vl_xattrop_args *a,
                     const struct vl_reply *reply)
{
    struct rep_priv *priv = rep_priv(xl);
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    const uint8_t *v = (const uint8_t *)reply->xattr;
    rep_mask_t blamed = 0, blamed_kind = 0;

    if (!local->has_probe)
        return;
    if (v == NULL || reply->xattr_len != a->n * REP_RECORD_SIZE) {
        vl_log(xl, VL_LOG_WARNING, "pre-op answer of %s: %u bytes, "
               "expected %u", xl->children[idx]->name,
               reply->xattr_len, a->n * REP_RECORD_SIZE);
        /* Whom it blames is unknown: trust no copy but its own. */
        atomic_fetch_or(&local->preop_blamed, local->txn & ~(1u << idx));
        atomic_fetch_or(&local->preop_blamed_kind,
                        local->txn & ~(1u << idx));
        return;
    }
    for (uint32_t k = 0; k < a->n; k++, v += REP_RECORD_SIZE) {
        for (unsigned j = 0; j < priv->n; j++) {
            /* Only the zero-added keys of children in the transaction:
             * the others carry this pre-op's own +1. */
            if (a->names[k] != priv->keys[j] || j == idx
                || !(local->txn & (1u << j)))
                continue;
            for (unsigned kind = 0; kind < REP_N_KINDS; kind++)
                if (rep_record_get(v, kind) > 0) {
                    blamed |= 1u << j;
                    if (kind == (unsigned)local->kind)
                        blamed_kind |= 1u << j;
                }
        }
    }
    if (blamed != 0)
        atomic_fetch_or(&local->preop_blamed, blamed);
    if (blamed_kind != 0)
        atomic_fetch_or(&local->preop_blamed_kind, blamed_kind);
}


/* After the pre-op: the data children whose copies are good (no answer
 * blames them for anything: a copy with stale data has the wrong size
 * for a metadata change's answer too). The object's readable set loses
 * the blamed ones at once. Without a probe, the last known good set. */
static void
rep_txn_preop_good(vl_xlator_t *xl, struct rep_local *local)
{
    rep_mask_t blamed = atomic_load(&local->preop_blamed), hint;

    if (local->has_probe) {
        local->good = rep_data_children(xl, local->preop_ok & ~blamed);
        /* Two marked objects (a rename's directories) share the bits. */
        if (blamed != 0 && local->n_targets == 1)
            rep_inode_drop_readable(xl, local->t[0].inode, blamed);
        return;
    }
    local->good = rep_data_children(xl, local->preop_ok);
    hint = rep_inode_good_hint(xl, local->t[0].inode) & local->good;
    if (hint != 0)
        local->good = hint;
}


/* Whether every copy of the object that took part in the pre-op is
 * blamed by another for the transaction's kind (data copies only, for
 * data): a split-brain, which a change must not go into. Known only from
 * a probe of one object (a rename's two directories share the bits). */
static bool
rep_txn_is_split_brain(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t with = local->preop_ok, good;

    if (!local->has_probe || local->n_targets != 1)
        return false;
    if (local->kind == REP_DATA)
        with = rep_data_children(xl, with);
    good = with & ~(rep_mask_t)atomic_load(&local->preop_blamed_kind);
    if (with == 0 || good != 0)
        return false;
    vl_log(xl, VL_LOG_ERROR, "%s refused: every copy is blamed by another "
           "(split-brain)", vl_fop_name(req->op));
    return true;
}


/* Bookkeeping of one xattrop answer (status of child idx); the last
 * one moves the transaction on. */
static void
rep_txn_xattrop_arrive(vl_req_t *req, unsigned idx, int status)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_xlator_t *xl = req->xl;

    if (status != 0) {
        atomic_fetch_or(&local->bad, 1u << idx);
        vl_log(xl, VL_LOG_WARNING, "%s xattrop on %s failed: %s",
               local->phase == REP_PH_PREOP ? "pre-op" : "post-op",
               xl->children[idx]->name, strerror(-status));
    }
    if (!vl_fanout_arrive(&local->fan, status))
        return;
    if (local->phase == REP_PH_PREOP) {
        rep_txn_preop_settle(xl, req);
    } else if (local->phase == REP_PH_LATE_BLAME) {
        local->preop_ok &= ~atomic_load(&local->bad);
        rep_txn_preop_checks(xl, req);
    } else if (local->phase == REP_PH_EAGER_BLAME) {
        rep_eager_member_finish(xl, req);
    } else {
        /* Post-op: the locks it released need no unlock of their own. */
        for (unsigned t = 0; t < local->n_targets; t++) {
            int k = rep_cpd_target_item(local, t);

            if (k >= 0)
                local->lk_held[k] &= ~(rep_mask_t)atomic_load(
                    &local->cpd_unlocked[t]);
        }
        rep_txn_unlock(xl, req);
    }
}


/* Every pre-op answered (carried by the locks or on its own). */
static void
rep_txn_preop_settle(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t late;
    uint32_t n_keys;

    local->preop_ok = local->txn & ~atomic_load(&local->bad)
                      & ~rep_cpd_any_bad(local);
    /* A carried pre-op did not blame the children whose lock then
     * failed: the others record it now, before anything changes, as the
     * pre-op would have (heal must know they miss this change). */
    late = local->all & ~local->txn & ~local->preop_blame;
    if (late != 0 && local->preop_ok != 0) {
        local->phase = REP_PH_LATE_BLAME;
        local->preop_blame |= late;
        n_keys = rep_txn_records(xl, local, 0, late, 1);
        rep_txn_xattrop_send(xl, req, local->preop_ok, n_keys);
        return;
    }
    rep_txn_preop_checks(xl, req);
}


/* The pre-op is in: quorum, arbiter and split-brain, then the fop. */
static void
rep_txn_preop_checks(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    rep_txn_preop_good(xl, local);
    if (!rep_has_quorum(xl, local->preop_ok)) {
        /* Nothing was changed: the post-op undoes the pre-op. */
        atomic_fetch_add(&rep_priv(xl)->n_quorum_fail, 1);
        local->result = -EROFS;
        local->fop_ok = 0;
        rep_txn_postop(xl, req);
        return;
    }
    if (rep_priv(xl)->arbiter != 0 && !rep_arb_preop_allows(xl, req)) {
        local->result = -ENOTCONN;
        local->fop_ok = 0;
        rep_txn_postop(xl, req);
        return;
    }
    if (rep_txn_is_split_brain(xl, req)) {
        /* GlusterFS's answer too: no copy to build on, and a change on
         * all of them would leave them as divided as before. */
        local->result = -EIO;
        local->fop_ok = 0;
        rep_txn_postop(xl, req);
        return;
    }
    if (local->is_eager_acquire) {
        rep_eager_acquired(xl, req);
        return;
    }
    rep_txn_fop(xl, req);
}


static void
rep_txn_xattrop_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;
    vl_xlator_t *xl = ck->req->xl;

    struct rep_local *local = VL_REQ_PRIV(ck->req, struct rep_local);

    if (child->status == 0 && local->phase == REP_PH_PREOP)
        rep_txn_preop_answer(xl, ck->req, ck->idx, VL_ARGS(child, xattrop),
                             &child->reply);
    if (local->phase == REP_PH_POSTOP && child->reply.has_unlock) {
        for (unsigned t = 0; t < local->n_targets; t++)
            if (child->args.xattrop.unlock == &local->cpd_unlock[t])
                atomic_fetch_or(&local->cpd_unlocked[t], 1u << ck->idx);
        if (child->reply.unlock_status != 0)
            vl_log(xl, VL_LOG_WARNING, "unlock on %s failed: %s",
                   xl->children[ck->idx]->name,
                   strerror(-child->reply.unlock_status));
    }
    rep_txn_xattrop_arrive(ck->req, ck->idx, child->status);
}


/* The prepared xattrop for target t into a. An entry change some copy
 * misses: its name is the directory's granular record (posix-xattrop.c),
 * so its heal visits that name instead of listing the whole directory. */
static void
rep_txn_xattrop_fill(struct rep_local *local, unsigned t,
                     struct vl_xattrop_args *a, uint32_t n_keys)
{
    const char *mark = local->kind == REP_ENTRY && local->is_x_blaming
                           ? local->t[t].mark_name
                           : NULL;

    memset(a, 0, sizeof(*a));
    a->loc.inode = local->t[t].inode;
    a->op = VL_XATTROP_ADD32;
    if (mark != NULL) {
        a->loc.parent = local->t[t].inode;
        a->loc.name = mark;
        a->op |= VL_XATTROP_F_ENTRY_MARK;
    }
    a->n = n_keys;
    a->names = local->x_names;
    a->values = local->x_values;
    a->sizes = local->x_sizes;
}


static void
rep_txn_unlock_beside_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;
    vl_xlator_t *xl = ck->req->xl;
    unsigned i = ck->idx % rep_priv(xl)->n;

    if (child->status != 0)
        vl_log(xl, VL_LOG_WARNING, "unlock on %s failed: %s",
               xl->children[i]->name, strerror(-child->status));
    /* Not the post-op's failure: the brick drops the lock when this
     * client goes, and its records are the post-op's answer's. */
    rep_txn_xattrop_arrive(ck->req, i, 0);
}


/* The second lock item's release on child i beside a post-op carrying
 * the first one's (a rename within one directory). */
static void
rep_txn_unlock_beside(vl_xlator_t *xl, vl_req_t *req, unsigned i,
                      const struct rep_txn_target *lk, uint64_t owner,
                      struct rep_cookie *ck)
{
    vl_req_t *child = vl_req_new_op(req, xl->children[i], VL_FOP_ENTRYLK);
    struct vl_entrylk_args *a;

    if (child == NULL) {
        vl_log(xl, VL_LOG_WARNING, "unlock on %s failed: %s",
               xl->children[i]->name, strerror(ENOMEM));
        rep_txn_xattrop_arrive(req, i, 0);
        return;
    }
    child->caller.lk_owner = owner;
    a = VL_ARGS(child, entrylk);
    a->domain = xl->name;
    a->loc.parent = lk->lk_parent;
    a->loc.name = lk->lk_name;
    a->cmd = VL_LOCK_UNLOCK;
    a->type = F_WRLCK;
    vl_wind(child, rep_txn_unlock_beside_done, ck);
}


/* Sends the prepared xattrop for each target t to the children of
 * to[t]. */
static void
rep_txn_xattrop_send_to(vl_xlator_t *xl, vl_req_t *req,
                        const rep_mask_t to[REP_TXN_MAX_TARGETS],
                        uint32_t n_keys)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    unsigned n = rep_priv(xl)->n, n_targets = local->n_targets;
    struct vl_xattrop_args xa[REP_TXN_MAX_TARGETS];
    rep_mask_t mask[REP_TXN_MAX_TARGETS], held[REP_TXN_MAX_TARGETS];
    bool is_unlocking[REP_TXN_MAX_TARGETS];
    rep_mask_t beside = 0;
    struct rep_txn_target lk1;
    uint64_t owner = local->lk_owner;
    int count = 0;

    rep_cpd_postop_unlocks(xl, local, local->phase == REP_PH_POSTOP,
                           is_unlocking, held);
    for (unsigned t = 0; t < n_targets; t++) {
        mask[t] = to[t];
        count += (int)rep_popcount(mask[t]);
    }
    if (is_unlocking[0] && n_targets == 1 && local->n_lk == 2
        && !local->is_x_blaming) {
        /* The second name's unlock in the same round: nobody is blamed,
         * so what another client locking it next reads is only dirty,
         * which concurrent transactions of the directory share. */
        beside = local->lk_held[1];
        local->lk_held[1] = 0;
        count += (int)rep_popcount(beside);
        lk1 = local->lk[1];
    } else {
        memset(&lk1, 0, sizeof(lk1));
    }
    for (unsigned t = 0; t < n_targets; t++) {
        rep_txn_xattrop_fill(local, t, &xa[t], n_keys);
        atomic_store(&local->cpd_unlocked[t], 0);
    }
    atomic_store(&local->bad, 0);
    vl_fanout_begin(&local->fan, count);
    for (unsigned i = 0; i < n; i++) {
        if (!(beside & (1u << i)))
            continue;
        /* A carrier's lk_ck were never set: its tries were req's. */
        local->lk_ck[n + i].req = req;
        local->lk_ck[n + i].idx = n + i;
        rep_txn_unlock_beside(xl, req, i, &lk1, owner,
                              &local->lk_ck[n + i]);
    }
    /* The last answer may free req: nothing of local is read after the
     * last wind (mask, n, n_targets, held and xa are copies). */
    for (unsigned i = 0; i < n; i++) {
        for (unsigned t = 0; t < n_targets; t++) {
            vl_req_t *child;

            if (!(mask[t] & (1u << i)))
                continue;
            child = vl_req_new_op(req, xl->children[i], VL_FOP_XATTROP);
            if (child == NULL) {
                rep_txn_xattrop_arrive(req, i, -ENOMEM);
                continue;
            }
            child->args.xattrop = xa[t];
            if (is_unlocking[t] && (held[t] & (1u << i))) {
                child->args.xattrop.unlock = &local->cpd_unlock[t];
                child->caller.lk_owner = owner;
            }
            vl_wind(child, rep_txn_xattrop_done, &local->ck[i]);
        }
    }
}


/* Sends the prepared xattrop to every child of mask, once per target. */
static void
rep_txn_xattrop_send(vl_xlator_t *xl, vl_req_t *req, rep_mask_t mask,
                     uint32_t n_keys)
{
    rep_mask_t to[REP_TXN_MAX_TARGETS];

    for (unsigned t = 0; t < REP_TXN_MAX_TARGETS; t++)
        to[t] = mask;
    rep_txn_xattrop_send_to(xl, req, to, n_keys);
}


static void
rep_txn_preop(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    uint32_t n_keys;

    local->phase = REP_PH_PREOP;
    local->preop_blame = local->all & ~local->txn;
    n_keys = rep_txn_records(xl, local, 1, local->all & ~local->txn, 1);
    n_keys = rep_txn_probe_keys(xl, local, n_keys);
    rep_txn_xattrop_send(xl, req, local->txn, n_keys);
}


static void
rep_txn_postop(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_priv *priv = rep_priv(xl);
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t to, blame;
    uint32_t n_keys;

    local->phase = REP_PH_POSTOP;
    if (local->fop_ok != 0 && !rep_has_quorum(xl, local->fop_ok)) {
        /* Quorum lost under the fop (answered EROFS): the copies it
         * changed are the minority. Their blame of the others would be
         * a source's claim against the copies that make quorum, which a
         * partition lets go on without them (another client, once the
         * bricks there dropped this one and its locks): each side would
         * blame the other, a split-brain. So no post-op: the changed
         * copies keep dirty, blaming nobody, and heal takes what the
         * others' records say, or compares (GlusterFS marks dirty only
         * in this case too). */
        vl_log(xl, VL_LOG_WARNING, "%s reached %u of %u children, below "
               "quorum: left dirty on them, nobody blamed",
               vl_fop_name(req->op), rep_popcount(local->fop_ok),
               rep_popcount(local->txn));
        rep_txn_unlock(xl, req);
        return;
    }
    if (local->fop_ok != 0) {
        /* Blame the children that missed the change and that the
         * pre-op did not blame already (the down ones). */
        to = local->fop_ok;
        blame = local->all & ~local->preop_blame & ~local->fop_ok;
        if (blame == 0 && rep_txn_detach(xl, req))
            return;
        n_keys = rep_txn_records(xl, local, -1, blame, 1);
        if (blame != 0) {
            atomic_fetch_add(&priv->n_txn_blamed, 1);
            vl_log(xl, VL_LOG_INFO, "%s failed on %u of %u children: "
                   "recorded pending on the others", vl_fop_name(req->op),
                   rep_popcount(blame), rep_popcount(local->txn));
        }
    } else {
        /* Nothing changed anywhere: no child missed anything. A carried
         * pre-op undone: also the children that took only some. */
        rep_mask_t undo[REP_TXN_MAX_TARGETS] = {0};
        bool is_any = false;

        n_keys = rep_txn_records(xl, local, -1, local->preop_blame, -1);
        for (unsigned t = 0; t < local->n_targets; t++) {
            undo[t] = local->preop_ok | local->undo_part[t];
            local->undo_part[t] = 0;
            is_any = is_any || undo[t] != 0;
        }
        if (!is_any) {
            rep_txn_unlock(xl, req);
            return;
        }
        rep_txn_xattrop_send_to(xl, req, undo, n_keys);
        return;
    }
    if (to == 0) {
        rep_txn_unlock(xl, req);
        return;
    }
    rep_txn_xattrop_send(xl, req, to, n_keys);
}


/* ---- 4. the fop ---- */

static void
rep_txn_fop_arrive(vl_req_t *req, unsigned idx, vl_req_t *child, int status)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_xlator_t *xl = req->xl;

    local->status[idx] = status;
    if (status == 0) {
        atomic_fetch_or(&local->ok, 1u << idx);
        rep_entry_fop_arrive(req, idx, child);
        rep_reply_pick_arrive(local, idx, child);
        /* The arbiter's attributes say size 0: never the answer. */
        if (!rep_child_is_arbiter(xl, idx)
            && !atomic_exchange(&local->has_reply, true))
            vl_reply_move(req, child);
    }
    if (!vl_fanout_arrive(&local->fan, status))
        return;
    rep_reply_pick_apply(local, req);
    local->fop_ok = atomic_load(&local->ok);
    rep_entry_fop_settle(xl, req);
    if (rep_priv(xl)->arbiter != 0)
        rep_arb_fop_settle(xl, local);
    if (local->fop_ok == 0) {
        for (unsigned i = 0; i < rep_priv(xl)->n; i++)
            if ((local->preop_ok & (1u << i)) && local->status[i] != 0) {
                local->result = local->status[i];
                break;
            }
        if (local->result == 0)
            local->result = -EIO;
    } else if (!rep_has_quorum(xl, local->fop_ok)) {
        atomic_fetch_add(&rep_priv(xl)->n_quorum_fail, 1);
        local->result = -EROFS;
    }
    if (local->is_eager_member) {
        rep_eager_member_done(xl, req);
        return;
    }
    rep_txn_postop(xl, req);
}


static void
rep_txn_fop_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;

    rep_txn_fop_arrive(ck->req, ck->idx, child, child->status);
}


/* The children of mask whose answer may go up: copies the pre-op found
 * good; a link's answer is the attributes of the linked object, not of
 * the directory the pre-op looked at: its copies last known good. */
static rep_mask_t
rep_txn_reply_good(vl_xlator_t *xl, vl_req_t *req, rep_mask_t mask)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t good = local->good & mask, hint;

    if (req->op == VL_FOP_LINK) {
        hint = rep_inode_good_hint(xl, req->args.link.oldloc.inode);
        good = (hint & good) != 0 ? hint & good : hint & mask;
    }
    return good;
}


static void
rep_txn_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t mask = local->preop_ok;
    unsigned n = rep_priv(xl)->n;

    local->phase = REP_PH_FOP;
    atomic_store(&local->ok, 0);
    rep_reply_pick_begin(local, rep_txn_reply_good(xl, req, mask));
    vl_fanout_begin(&local->fan, (int)rep_popcount(mask));
    for (unsigned i = 0; i < n; i++) {
        vl_req_t *child;

        if (!(mask & (1u << i)))
            continue;
        child = vl_req_child(req, xl->children[i]);
        if (child == NULL) {
            rep_txn_fop_arrive(req, i, NULL, -ENOMEM);
            continue;
        }
        vl_wind(child, rep_txn_fop_done, &local->ck[i]);
    }
}


/* ---- 6. unlock and answer ---- */

/* What the fop's success changes in the inode and fd contexts. */
static void
rep_txn_settle(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t missed = local->all & ~local->fop_ok;
    unsigned gen = atomic_load(&rep_priv(xl)->event_gen);

    if (local->fop_ok == 0)
        return;
    for (unsigned t = 0; t < local->n_targets; t++)
        if (missed != 0)
            rep_inode_drop_readable(xl, local->t[t].inode, missed);
    if (local->result != 0)
        return;
    switch (req->op) {
    case VL_FOP_CREATE:
        rep_fd_set_opened(xl, req->args.create.fd, local->fop_ok);
        rep_inode_set_readable(xl, req->args.create.loc.inode,
                               local->fop_ok, gen);
        break;
    case VL_FOP_MKNOD:
        rep_inode_set_readable(xl, req->args.mknod.loc.inode,
                               local->fop_ok, gen);
        break;
    case VL_FOP_MKDIR:
        rep_inode_set_readable(xl, req->args.mkdir.loc.inode,
                               local->fop_ok, gen);
        break;
    case VL_FOP_SYMLINK:
        rep_inode_set_readable(xl, req->args.symlink.loc.inode,
                               local->fop_ok, gen);
        break;
    case VL_FOP_OPEN:
        rep_fd_set_opened(xl, req->args.open.fd, local->fop_ok);
        break;
    default:
        break;
    }
}


static void
rep_txn_answer(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    int result = local->result;
    vl_inode_t *inode = local->t[0].inode;

    if (local->is_eager_release) {
        rep_eager_release_done(xl, req);
        return;
    }
    if (local->is_detached) {
        rep_txn_detached_done(xl, req);
        return;
    }
    rep_txn_settle(xl, req);
    if (result != 0)
        vl_reply_clear(&req->reply);
    if (local->is_eager_acquire) {
        /* The batch never opened: its waiters try again. The inode is
         * held by the batch's own ref until then. */
        vl_unwind(req, result);
        rep_eager_acquire_failed(xl, inode);
        return;
    }
    vl_unwind(req, result);
}


static void
rep_txn_unlock_arrive(vl_req_t *req, unsigned idx, int status)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    if (status != 0)
        vl_log(req->xl, VL_LOG_WARNING, "unlock on %s failed: %s",
               req->xl->children[idx]->name, strerror(-status));
    if (!vl_fanout_arrive(&local->fan, status))
        return;
    if (local->is_lock_retry) {
        local->is_lock_retry = false;
        local->is_cpd = false; /* the serial locks carry nothing */
        for (unsigned k = 0; k < REP_TXN_MAX_TARGETS; k++)
            local->lk_held[k] = 0;
        local->lk_step = 0;
        rep_txn_lock_next(req->xl, req);
        return;
    }
    rep_txn_answer(req->xl, req);
}


static void
rep_txn_unlock_done(vl_req_t *child, void *cookie)
{
    struct rep_cookie *ck = cookie;

    rep_txn_unlock_arrive(ck->req, ck->idx, child->status);
}


static void
rep_txn_unlock(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    unsigned n = rep_priv(xl)->n, n_lk = local->n_lk;
    rep_mask_t held[REP_TXN_MAX_TARGETS];
    struct rep_txn_target lk[REP_TXN_MAX_TARGETS];
    bool is_entry = local->is_entry;
    uint64_t owner = local->lk_owner;
    int count = 0;

    local->phase = REP_PH_UNLOCK;
    for (unsigned k = 0; k < n_lk; k++) {
        held[k] = local->lk_held[k];
        lk[k] = local->lk[k];
        count += (int)rep_popcount(held[k]);
    }
    if (count == 0) {
        if (local->is_lock_retry) {
            local->is_lock_retry = false;
            local->is_cpd = false;
            local->lk_step = 0;
            rep_txn_lock_next(xl, req);
            return;
        }
        rep_txn_answer(xl, req);
        return;
    }
    vl_fanout_begin(&local->fan, count);
    /* Nothing of local is read after the last wind. */
    for (unsigned k = 0; k < n_lk; k++) {
        for (unsigned i = 0; i < n; i++) {
            vl_req_t *child;

            if (!(held[k] & (1u << i)))
                continue;
            child = vl_req_new_op(req, xl->children[i],
                                  is_entry ? VL_FOP_ENTRYLK
                                           : VL_FOP_INODELK);
            if (child == NULL) {
                /* The brick drops the lock when this client goes; until
                 * then others wait on it. */
                rep_txn_unlock_arrive(req, i, -ENOMEM);
                continue;
            }
            child->caller.lk_owner = owner;
            if (is_entry) {
                struct vl_entrylk_args *a = VL_ARGS(child, entrylk);

                a->domain = xl->name;
                a->loc.parent = lk[k].lk_parent;
                a->loc.name = lk[k].lk_name;
                a->cmd = VL_LOCK_UNLOCK;
                a->type = F_WRLCK;
            } else {
                struct vl_inodelk_args *a = VL_ARGS(child, inodelk);

                a->domain = xl->name;
                a->loc.inode = lk[k].inode;
                a->cmd = VL_LOCK_UNLOCK;
                a->flock.type = F_UNLCK;
                a->flock.whence = SEEK_SET;
            }
            vl_wind(child, rep_txn_unlock_done, &local->ck[i]);
        }
    }
}


/* ---- 5b. the post-op after the answer (entry fops) ---- */

static void
rep_txn_carrier_done(vl_req_t *carrier, void *cookie)
{
    (void)carrier;
    (void)cookie;
}


/* req's post-op (dirty -1 on fop_ok, nobody blamed) and unlock go to a
 * carrier, and req is answered now. false: req goes on itself (not an
 * entry fop, or no memory for the carrier). The carrier's private area
 * is filled before it is wound (vl_wind keeps it; only vl_pass clears). */
static bool
rep_txn_detach(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_local *cl;
    vl_req_t *carrier;
    size_t len = 0, at = 0;
    char *names;

    if (!local->is_entry || local->result != 0 || local->is_eager_release
        || local->is_detached
        || atomic_load(&rep_priv(xl)->is_parent_down))
        return false;
    for (unsigned k = 0; k < local->n_lk; k++)
        len += strlen(local->lk[k].lk_name) + 1;
    carrier = vl_req_new(xl, VL_FOP_XATTROP);
    names = vl_malloc(xl, len, REP_MT_MISC);
    if (carrier == NULL || names == NULL) {
        vl_req_free_unwound(carrier);
        vl_free(names);
        return false;
    }
    carrier->args.xattrop.op = REP_TXN_DETACHED_OP;
    carrier->caller = req->caller; /* its requests are req's */
    cl = VL_REQ_PRIV(carrier, struct rep_local);
    cl->is_detached = true;
    cl->detached_names = names;
    cl->kind = local->kind;
    cl->is_entry = true;
    cl->all = local->all;
    cl->txn = local->txn;
    cl->preop_ok = local->preop_ok;
    cl->fop_ok = local->fop_ok;
    cl->preop_blame = local->preop_blame;
    cl->lk_owner = local->lk_owner;
    cl->n_targets = local->n_targets;
    for (unsigned t = 0; t < local->n_targets; t++)
        cl->t[t].inode = vl_inode_ref(local->t[t].inode);
    cl->n_lk = local->n_lk;
    for (unsigned k = 0; k < local->n_lk; k++) {
        size_t l = strlen(local->lk[k].lk_name) + 1;

        memcpy(names + at, local->lk[k].lk_name, l);
        cl->lk[k].lk_parent = vl_inode_ref(local->lk[k].lk_parent);
        cl->lk[k].lk_name = names + at;
        cl->lk_held[k] = local->lk_held[k];
        at += l;
    }
    atomic_fetch_add(&rep_priv(xl)->n_detached, 1);
    rep_txn_settle(xl, req);
    vl_unwind(req, 0);
    /* Microseconds after the answer: the caller's next request on the
     * same name usually comes after the unlock; one that comes before
     * finds the lock held and takes the contended path (waits). */
    vl_wind(carrier, rep_txn_carrier_done, NULL);
    return true;
}


/* The carrier's post-op and unlock are done (their failures logged: the
 * fop was answered, and dirty left set only makes heal compare). */
static void
rep_txn_detached_done(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    (void)xl;
    for (unsigned t = 0; t < local->n_targets; t++)
        vl_inode_unref(local->t[t].inode);
    for (unsigned k = 0; k < local->n_lk; k++)
        vl_inode_unref(local->lk[k].lk_parent);
    vl_free(local->detached_names);
    vl_unwind(req, 0);
}


/* ---- for rep-eager.c ---- */

void
rep_txn_postop_run(vl_xlator_t *xl, vl_req_t *req)
{
    rep_txn_postop(xl, req);
}


uint32_t
rep_txn_records_fill(vl_xlator_t *xl, struct rep_local *local,
                     int dirty_delta, rep_mask_t blame, int blame_delta)
{
    return rep_txn_records(xl, local, dirty_delta, blame, blame_delta);
}


void
rep_txn_xattrop_to(vl_xlator_t *xl, vl_req_t *req, rep_mask_t mask,
                   uint32_t n_keys)
{
    VL_REQ_PRIV(req, struct rep_local)->phase = REP_PH_EAGER_BLAME;
    rep_txn_xattrop_send(xl, req, mask, n_keys);
}


/* Sends the fop to mask (a batch write: the lock and pre-op are the
 * batch's). */
void
rep_txn_fop_to(vl_xlator_t *xl, vl_req_t *req, rep_mask_t mask)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_priv *priv = rep_priv(xl);

    local->all = (rep_mask_t)((1u << priv->n) - 1);
    for (unsigned i = 0; i < priv->n; i++) {
        local->ck[i].req = req;
        local->ck[i].idx = i;
    }
    local->preop_ok = mask;
    rep_txn_fop(xl, req);
}


void
rep_txn_begin_fd(vl_xlator_t *xl, vl_req_t *req, vl_fd_t *fd)
{
    VL_REQ_PRIV(req, struct rep_local)->kind = REP_DATA;
    rep_txn_inode_begin(xl, req, fd->inode, fd);
}


/* An inode transaction (rep-inode.c, kind set): inode locked and marked,
 * fd (or NULL) the fd it writes through. */
void
rep_txn_inode_begin(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode,
                    vl_fd_t *fd)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    local->is_entry = false;
    local->n_targets = 1;
    local->t[0].inode = inode;
    local->n_lk = 1;
    local->lk[0].inode = inode;
    rep_txn_begin(xl, req, fd);
}


/* Entry fops (rep-entry.c fills the targets). */
void
rep_txn_entry_begin(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

    local->kind = REP_ENTRY;
    local->is_entry = true;
    rep_txn_begin(xl, req, NULL);
}
