/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-eager: eager locking. Consecutive writes to one inode from this
 * client share one transaction (doc/replicate.md "Transactions"):
 *
 *   NONE -> ACQUIRING  the first write runs lock and pre-op as usual
 *                      (rep-txn.c), then instead of its own post-op:
 *        -> HELD       it and every later write go straight to the
 *                      children of the batch (one round trip each);
 *                      a write that fails on some child is not answered
 *                      before the others' records blame that child (an
 *                      xattrop at once, not at the end: a client that dies
 *                      later must not leave the failure unrecorded); the
 *                      child leaves the batch;
 *        -> RELEASING  once no batch write is in flight and the batch
 *                      must end: post-op delay (post-op-delay) passed
 *                      since the last write, the batch is older than
 *                      REP_EAGER_MAX_MS (other clients wait for the lock
 *                      meanwhile), a flush or fsync of the inode, the
 *                      release of one of its fds (close, even when the
 *                      FLUSH never comes down), or another modifying fop
 *                      of it; a carrier request
 *                      replicate winds into itself runs the post-op
 *                      (dirty -1) and the unlock;
 *        -> NONE       and the requests that waited meanwhile run.
 *
 * Requests arriving while the batch is ACQUIRING or RELEASING wait in
 * the inode's queue (linked through their private area) and are
 * dispatched again from the beginning when it settles.
 *
 * Per inode: struct rep_eager in the inode ctx, inode->lock; a batch
 * holds a ref on its inode from ACQUIRING until back to NONE.
 * Lock order: inode->lock only; never held across a wind or an unwind.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "rep.h"

/* Longest batch: another client waiting for the inode's lock waits at
 * most this plus one write. */
#define REP_EAGER_MAX_MS 1000

static void rep_eager_release_start(vl_xlator_t *xl, vl_inode_t *inode);


static uint64_t
rep_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}


static struct rep_eager *
rep_eager_of(vl_xlator_t *xl, vl_inode_t *inode)
{
    return &rep_ictx(xl, inode)->eager;
}


static void
rep_eager_enqueue_locked(struct rep_eager *eg, vl_req_t *req)
{
    VL_REQ_PRIV(req, struct rep_local)->next = NULL;
    if (eg->wait_tail != NULL)
        VL_REQ_PRIV(eg->wait_tail, struct rep_local)->next = req;
    else
        eg->wait_head = req;
    eg->wait_tail = req;
}


/* Runs again, from the start, every request that waited. */
static void
rep_eager_dispatch(vl_xlator_t *xl, vl_req_t *head)
{
    while (head != NULL) {
        vl_req_t *req = head;
        struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);

        head = local->next;
        memset(local, 0, sizeof(*local));
        switch (req->op) {
        case VL_FOP_FLUSH:
        case VL_FOP_FSYNC:
            rep_fd_fanout(xl, req);
            break;
        case VL_FOP_OPEN:
            rep_open(xl, req);
            break;
        default:
            rep_txn_inode(xl, req);
            break;
        }
    }
}


/* Ends the batch (NONE), returns the waiters and the batch's inode ref
 * for the caller to drop. */
static vl_req_t *
rep_eager_reset_locked(struct rep_eager *eg, vl_inode_t **ref)
{
    vl_req_t *head = eg->wait_head;

    *ref = eg->self_ref;
    memset(eg, 0, sizeof(*eg));
    return head;
}


/* What the post-op delay timer carries (owned by the timer: freed by its
 * callback, or by whoever cancels it). */
struct rep_eager_tick {
    vl_xlator_t *xl;       /* borrowed: the translator */
    vl_inode_t *inode;     /* ref */
};

static void rep_eager_timer_fired(void *arg);


/* Cancels the armed timer, if any (inode->lock held). */
static void
rep_eager_disarm_locked(struct rep_eager *eg)
{
    struct rep_eager_tick *tick = eg->timer_arg;

    if (eg->timer == NULL)
        return;
    /* The callback takes inode->lock first, so it cannot be freed under
     * us; if it is already running it finds timer_arg changed and frees
     * its tick itself. */
    if (vl_timer_cancel(eg->timer)) {
        vl_inode_unref(tick->inode);
        vl_free(tick);
    }
    eg->timer = NULL;
    eg->timer_arg = NULL;
}


/* n_inflight just dropped to 0: true if the batch ends now (the caller
 * starts the release), else the post-op delay is armed. */
static bool
rep_eager_idle_locked(vl_xlator_t *xl, vl_inode_t *inode,
                      struct rep_eager *eg)
{
    struct rep_eager_tick *tick;
    uint64_t delay = rep_priv(xl)->post_op_delay;

    if (eg->state != REP_EG_HELD || eg->n_inflight > 0)
        return false;
    if (eg->is_release_wanted || delay == 0
        || rep_now_ms() - eg->start_ms >= REP_EAGER_MAX_MS) {
        rep_eager_disarm_locked(eg);
        eg->state = REP_EG_RELEASING;
        return true;
    }
    if (eg->timer != NULL)
        return false;
    tick = vl_calloc(xl, 1, sizeof(*tick), REP_MT_MISC);
    if (tick != NULL) {
        tick->xl = xl;
        tick->inode = vl_inode_ref(inode);
        eg->timer = vl_timer_add(xl->graph->loop, delay,
                                 rep_eager_timer_fired, tick);
        if (eg->timer != NULL) {
            eg->timer_arg = tick;
            return false;
        }
        vl_inode_unref(tick->inode);
        vl_free(tick);
    }
    /* No timer: end the batch now rather than hold the lock forever. */
    eg->state = REP_EG_RELEASING;
    return true;
}


static void
rep_eager_timer_fired(void *arg)
{
    struct rep_eager_tick *tick = arg;
    vl_inode_t *inode = tick->inode;
    vl_xlator_t *xl = tick->xl;
    struct rep_eager *eg = rep_eager_of(xl, inode);
    bool start = false;

    pthread_mutex_lock(&inode->lock);
    if (eg->timer_arg == tick) {
        eg->timer = NULL;
        eg->timer_arg = NULL;
        eg->is_release_wanted = true;
        start = rep_eager_idle_locked(xl, inode, eg);
    }
    pthread_mutex_unlock(&inode->lock);
    if (start)
        rep_eager_release_start(xl, inode);
    vl_inode_unref(inode);
    vl_free(tick);
}


/* ---- writes ---- */

/* Sends a write inside the batch (n_inflight already counts it). */
static void
rep_eager_send(vl_xlator_t *xl, vl_req_t *req, rep_mask_t batch,
               vl_inode_t *inode)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_eager *eg = rep_eager_of(xl, inode);
    vl_fd_t *fd = req->args.write.fd;
    rep_mask_t mask = batch & rep_up_mask(xl) & rep_fd_opened(xl, fd);

    local->is_eager_member = true;
    local->kind = REP_DATA;
    local->txn = batch;
    local->n_targets = 1;
    local->t[0].inode = inode;
    atomic_fetch_add(&rep_priv(xl)->n_eager_writes, 1);
    /* The batch's good copies (its pre-op's): the write's answer comes
     * from one of them; with an arbiter it must reach one. */
    pthread_mutex_lock(&inode->lock);
    local->good = eg->good & eg->txn;
    pthread_mutex_unlock(&inode->lock);
    if (!rep_has_quorum(xl, mask)) {
        /* Nothing is sent: no child changes, nobody to blame. */
        atomic_fetch_add(&rep_priv(xl)->n_quorum_fail, 1);
        local->result = -EROFS;
        local->fop_ok = 0;
        rep_eager_member_finish(xl, req);
        return;
    }
    if (rep_priv(xl)->arbiter != 0 && (mask & local->good) == 0) {
        /* The batch's good data copies left it: this write would reach
         * stale copies and the arbiter only (rep-arbiter.c). */
        atomic_fetch_add(&rep_priv(xl)->n_arbiter_refused, 1);
        local->result = -ENOTCONN;
        local->fop_ok = 0;
        rep_eager_member_finish(xl, req);
        return;
    }
    rep_txn_fop_to(xl, req, mask);
}


bool
rep_eager_write(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode)
{
    struct rep_eager *eg = rep_eager_of(xl, inode);
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    rep_mask_t batch = 0;
    bool is_first = false, is_member = false, start = false;

    pthread_mutex_lock(&inode->lock);
    switch (eg->state) {
    case REP_EG_NONE:
        eg->state = REP_EG_ACQUIRING;
        eg->self_ref = vl_inode_ref(inode);
        is_first = true;
        break;
    case REP_EG_HELD:
        if (!eg->is_release_wanted
            && rep_now_ms() - eg->start_ms < REP_EAGER_MAX_MS) {
            rep_eager_disarm_locked(eg);
            eg->n_inflight++;
            batch = eg->txn;
            is_member = true;
            break;
        }
        /* An old batch: end it; this write opens the next one. */
        eg->is_release_wanted = true;
        rep_eager_enqueue_locked(eg, req);
        start = rep_eager_idle_locked(xl, inode, eg);
        break;
    default:
        rep_eager_enqueue_locked(eg, req);
        break;
    }
    pthread_mutex_unlock(&inode->lock);
    if (is_first) {
        atomic_fetch_add(&rep_priv(xl)->n_eager_batches, 1);
        local->is_eager_acquire = true;
        rep_txn_begin_fd(xl, req, req->args.write.fd);
    } else if (is_member) {
        rep_eager_send(xl, req, batch, inode);
    } else if (start) {
        rep_eager_release_start(xl, inode);
    }
    return true;
}


/* The first write has the lock and the pre-op: the batch is open. */
void
rep_eager_acquired(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_inode_t *inode = local->t[0].inode;
    struct rep_eager *eg = rep_eager_of(xl, inode);
    vl_req_t *waiters;
    rep_mask_t batch;

    pthread_mutex_lock(&inode->lock);
    eg->state = REP_EG_HELD;
    /* Children whose pre-op failed stay in: this write misses them and
     * blames them like any batch write that fails somewhere. */
    eg->txn = local->txn;
    eg->good = local->good;
    eg->locked = local->lk_held[0];
    eg->lk_owner = local->lk_owner;
    eg->start_ms = rep_now_ms();
    eg->n_inflight = 1;
    batch = eg->txn;
    waiters = eg->wait_head;
    eg->wait_head = NULL;
    eg->wait_tail = NULL;
    pthread_mutex_unlock(&inode->lock);
    local->is_eager_acquire = false;
    rep_eager_send(xl, req, batch, inode);
    rep_eager_dispatch(xl, waiters);
}


void
rep_eager_acquire_failed(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct rep_eager *eg = rep_eager_of(xl, inode);
    vl_inode_t *ref;
    vl_req_t *waiters;

    pthread_mutex_lock(&inode->lock);
    waiters = rep_eager_reset_locked(eg, &ref);
    pthread_mutex_unlock(&inode->lock);
    rep_eager_dispatch(xl, waiters);
    vl_inode_unref(ref);
}


/* A batch write answered by its children: record its failures first. */
void
rep_eager_member_done(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_inode_t *inode = local->t[0].inode;
    struct rep_eager *eg = rep_eager_of(xl, inode);
    rep_mask_t missed = local->txn & ~local->fop_ok;
    uint32_t n_keys;

    if (local->fop_ok == 0 || missed == 0) {
        rep_eager_member_finish(xl, req);
        return;
    }
    if (!rep_has_quorum(xl, local->fop_ok)) {
        /* Quorum lost under the write (EROFS already): no blame from
         * the few copies it reached (rep_txn_postop says why); they keep
         * the batch's dirty, and later writes of the batch are refused
         * before they are sent. */
        pthread_mutex_lock(&inode->lock);
        eg->txn &= ~missed;
        eg->is_dirty_kept = true;
        pthread_mutex_unlock(&inode->lock);
        rep_eager_member_finish(xl, req);
        return;
    }
    pthread_mutex_lock(&inode->lock);
    eg->txn &= ~missed;
    pthread_mutex_unlock(&inode->lock);
    atomic_fetch_add(&rep_priv(xl)->n_txn_blamed, 1);
    vl_log(xl, VL_LOG_INFO, "write failed on %u of %u children of the "
           "batch: recorded pending on the others", rep_popcount(missed),
           rep_popcount(local->txn));
    n_keys = rep_txn_records_fill(xl, local, 0, missed, 1);
    rep_txn_xattrop_to(xl, req, local->fop_ok, n_keys);
}


/* Answers a batch write and lets the batch end if it was the last. */
void
rep_eager_member_finish(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    vl_inode_t *inode = local->t[0].inode;
    struct rep_eager *eg = rep_eager_of(xl, inode);
    rep_mask_t missed = local->txn & ~local->fop_ok;
    int result = local->result;
    bool start;

    if (local->fop_ok != 0 && missed != 0)
        rep_inode_drop_readable(xl, inode, missed);
    if (result != 0)
        vl_reply_clear(&req->reply);
    /* The batch's own ref keeps inode valid after the answer. */
    vl_unwind(req, result);
    pthread_mutex_lock(&inode->lock);
    eg->n_inflight--;
    start = rep_eager_idle_locked(xl, inode, eg);
    pthread_mutex_unlock(&inode->lock);
    if (start)
        rep_eager_release_start(xl, inode);
}


/* ---- ending a batch ---- */

bool
rep_eager_intercept(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode)
{
    struct rep_eager *eg = rep_eager_of(xl, inode);
    bool queued = false, start = false;

    pthread_mutex_lock(&inode->lock);
    if (eg->state != REP_EG_NONE) {
        eg->is_release_wanted = true;
        rep_eager_enqueue_locked(eg, req);
        queued = true;
        start = rep_eager_idle_locked(xl, inode, eg);
    }
    pthread_mutex_unlock(&inode->lock);
    if (start)
        rep_eager_release_start(xl, inode);
    return queued;
}


void
rep_eager_fd_closed(vl_xlator_t *xl, vl_inode_t *inode)
{
    struct rep_eager *eg = rep_eager_of(xl, inode);
    bool start = false;

    pthread_mutex_lock(&inode->lock);
    if (eg->state != REP_EG_NONE) {
        eg->is_release_wanted = true;
        start = rep_eager_idle_locked(xl, inode, eg);
    }
    pthread_mutex_unlock(&inode->lock);
    if (start)
        rep_eager_release_start(xl, inode);
}


static void
rep_eager_carrier_done(vl_req_t *carrier, void *cookie)
{
    (void)carrier;
    (void)cookie;
}


/* state is RELEASING: winds the carrier that runs post-op and unlock. */
static void
rep_eager_release_start(vl_xlator_t *xl, vl_inode_t *inode)
{
    vl_req_t *carrier = vl_req_new(xl, VL_FOP_XATTROP);
    struct vl_xattrop_args *a;

    if (carrier == NULL) {
        /* Without memory the batch cannot end cleanly: its records stay
         * dirty (heal compares the copies) and the lock goes when this
         * client disconnects. The waiters run outside any batch. */
        vl_log(xl, VL_LOG_ERROR, "eager batch: no memory to end it");
        rep_eager_acquire_failed(xl, inode);
        return;
    }
    a = VL_ARGS(carrier, xattrop);
    a->op = REP_EAGER_RELEASE_OP;
    a->loc.inode = inode;
    vl_wind(carrier, rep_eager_carrier_done, NULL);
}


void
rep_eager_release_run(vl_xlator_t *xl, vl_req_t *req)
{
    struct rep_local *local = VL_REQ_PRIV(req, struct rep_local);
    struct rep_priv *priv = rep_priv(xl);
    vl_inode_t *inode = req->args.xattrop.loc.inode;
    struct rep_eager *eg = rep_eager_of(xl, inode);
    bool eg_dirty_kept;

    pthread_mutex_lock(&inode->lock);
    local->txn = eg->txn;
    local->lk_held[0] = eg->locked;
    local->lk_owner = eg->lk_owner;
    eg_dirty_kept = eg->is_dirty_kept;
    pthread_mutex_unlock(&inode->lock);
    local->is_eager_release = true;
    local->all = (rep_mask_t)((1u << priv->n) - 1);
    local->kind = REP_DATA;
    local->is_entry = false;
    local->n_targets = 1;
    local->t[0].inode = inode;
    local->n_lk = 1;
    local->lk[0].inode = inode;
    local->preop_ok = local->txn;
    local->fop_ok = local->txn; /* failures were blamed as they came */
    /* So that the post-op blames nobody: the children out of the batch
     * were blamed by its pre-op or when they left it. */
    local->preop_blame = local->all & ~local->txn;
    for (unsigned i = 0; i < priv->n; i++) {
        local->ck[i].req = req;
        local->ck[i].idx = i;
    }
    if (local->fop_ok == 0 || eg_dirty_kept) {
        /* Every child left the batch, or a write lost quorum (its
         * copies keep dirty): nothing to close but the locks; an empty
         * post-op goes straight on to the unlock. */
        local->fop_ok = 0;
        local->preop_ok = 0;
    }
    rep_txn_postop_run(xl, req);
}


/* Post-op and unlock done: the batch is over. */
void
rep_eager_release_done(vl_xlator_t *xl, vl_req_t *req)
{
    vl_inode_t *inode = req->args.xattrop.loc.inode;
    struct rep_eager *eg = rep_eager_of(xl, inode);
    vl_inode_t *ref;
    vl_req_t *waiters;

    pthread_mutex_lock(&inode->lock);
    waiters = rep_eager_reset_locked(eg, &ref);
    pthread_mutex_unlock(&inode->lock);
    vl_unwind(req, 0);
    rep_eager_dispatch(xl, waiters);
    vl_inode_unref(ref);
}
