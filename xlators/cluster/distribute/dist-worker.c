/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-worker: distribute's worker threads and blocking child calls.
 *
 * The common file fops (lookup of a file, create, open, stat, read,
 * write, unlink...) are asynchronous: one wind, one answer. The rare
 * multi-step ones (directory lookup with heal, mkdir/rmdir/rename of
 * directories, link files beyond the first, the EREMCHG reroute, layout
 * fixing) run as a task on a worker thread of this translator, which may
 * wait: loop threads never do. A worker winds to several children in
 * parallel and sleeps until all answered (dist_fan_sync).
 *
 * Intercepts: nothing.
 * State:      struct dist_workers in priv: a FIFO of tasks (the nodes live
 *             in the requests' private areas) and up to DIST_WORKERS_MAX
 *             threads, started on demand and joined at fini.
 * Threads:    workers->lock guards the queue and counters; a fan-out's
 *             struct dist_wait has its own lock.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "dist.h"

#define DIST_WORKERS_MAX 8

struct dist_workers {
    pthread_mutex_t lock;      /* guards everything below */
    pthread_cond_t cond;       /* tasks queued or stopping */
    struct dist_task *head;    /* (lock) oldest queued task */
    struct dist_task *tail;    /* (lock) newest queued task */
    pthread_t threads[DIST_WORKERS_MAX]; /* (lock) started threads */
    unsigned n_threads;        /* (lock) entries of threads in use */
    unsigned n_idle;           /* (lock) threads waiting for work */
    bool is_stopping;          /* (lock) fini: exit when the queue is empty */
    vl_xlator_t *xl;           /* borrowed; the translator */
};

/* Completion of a blocking fan-out. */
struct dist_wait {
    pthread_mutex_t lock; /* guards pending */
    pthread_cond_t cond;  /* signalled when pending drops to 0 */
    int pending;          /* (lock) children not answered */
};

/* Cookie of one child call of a fan-out. */
struct dist_wait_slot {
    struct dist_wait *wait;  /* borrowed; the fan-out */
    struct dist_call *call;  /* borrowed; where the answer goes */
    vl_req_t *parent;        /* dist_child_sync: reply goes here */
};


static void *
dist_worker_main(void *arg)
{
    struct dist_workers *w = arg;

    pthread_mutex_lock(&w->lock);
    for (;;) {
        struct dist_task *t = w->head;

        if (t == NULL) {
            if (w->is_stopping)
                break;
            w->n_idle++;
            pthread_cond_wait(&w->cond, &w->lock);
            w->n_idle--;
            continue;
        }
        w->head = t->next;
        if (w->head == NULL)
            w->tail = NULL;
        t->next = NULL;
        pthread_mutex_unlock(&w->lock);
        t->fn(w->xl, t->req); /* t may be gone once fn answered */
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}


int
dist_workers_new(vl_xlator_t *xl)
{
    struct dist_workers *w;

    w = vl_calloc(xl, 1, sizeof(*w), DIST_MT_PRIV);
    if (w == NULL)
        return -ENOMEM;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->xl = xl;
    dist_priv(xl)->workers = w;
    return 0;
}


/* Runs what is queued, then joins the threads; later tasks are refused.
 * Called at PARENT_DOWN, while the inode table still exists. */
void
dist_workers_stop(vl_xlator_t *xl)
{
    struct dist_workers *w = dist_priv(xl)->workers;
    unsigned n;

    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    w->is_stopping = true;
    pthread_cond_broadcast(&w->cond);
    n = w->n_threads;
    pthread_mutex_unlock(&w->lock);
    /* No thread starts once is_stopping is set: n cannot grow. */
    for (unsigned i = 0; i < n; i++)
        pthread_join(w->threads[i], NULL);
    pthread_mutex_lock(&w->lock);
    w->n_threads = 0;
    pthread_mutex_unlock(&w->lock);
}


void
dist_workers_free(vl_xlator_t *xl)
{
    struct dist_workers *w = dist_priv(xl)->workers;

    if (w == NULL)
        return;
    dist_workers_stop(xl);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    vl_free(w);
    dist_priv(xl)->workers = NULL;
}


int
dist_task_run(vl_xlator_t *xl, vl_req_t *req,
              void (*fn)(vl_xlator_t *xl, vl_req_t *req))
{
    struct dist_workers *w = dist_priv(xl)->workers;
    struct dist_task *t;
    int rc = 0;

    if (req != NULL)
        t = &VL_REQ_PRIV(req, struct dist_local)->task;
    else
        t = &dist_priv(xl)->statfs_task;
    t->fn = fn;
    t->req = req;
    t->next = NULL;
    pthread_mutex_lock(&w->lock);
    if (w->is_stopping) {
        rc = -ESHUTDOWN;
        goto unlock;
    }
    if (w->n_idle == 0 && w->n_threads < DIST_WORKERS_MAX) {
        int err = pthread_create(&w->threads[w->n_threads], NULL,
                                 dist_worker_main, w);

        if (err == 0)
            w->n_threads++;
        else if (w->n_threads == 0)
            rc = -err; /* nobody would ever run it */
    }
    if (rc == 0) {
        atomic_fetch_add(&dist_priv(xl)->n_tasks, 1);
        if (w->tail != NULL)
            w->tail->next = t;
        else
            w->head = t;
        w->tail = t;
        pthread_cond_signal(&w->cond);
    }
unlock:
    pthread_mutex_unlock(&w->lock);
    return rc;
}


void
dist_task_or_unwind(vl_xlator_t *xl, vl_req_t *req,
                    void (*fn)(vl_xlator_t *xl, vl_req_t *req))
{
    int rc = dist_task_run(xl, req, fn);

    if (rc != 0)
        vl_unwind(req, rc);
}


static void
dist_wait_arrive(struct dist_wait *wait)
{
    pthread_mutex_lock(&wait->lock);
    if (--wait->pending == 0)
        pthread_cond_broadcast(&wait->cond);
    pthread_mutex_unlock(&wait->lock);
}


static void
dist_fan_done(vl_req_t *r, void *cookie)
{
    struct dist_wait_slot *slot = cookie;

    if (slot->parent != NULL) {
        vl_reply_move(slot->parent, r);
    } else {
        slot->call->reply = r->reply; /* moved: the core frees nothing */
        memset(&r->reply, 0, sizeof(r->reply));
    }
    slot->call->status = r->status;
    dist_wait_arrive(slot->wait);
}


union vl_fop_args *
dist_args_new(vl_xlator_t *xl)
{
    return vl_calloc(xl, dist_priv(xl)->n, sizeof(union vl_fop_args),
                     DIST_MT_FAN);
}


struct dist_call *
dist_calls_new(vl_xlator_t *xl)
{
    return vl_calloc(xl, dist_priv(xl)->n, sizeof(struct dist_call),
                     DIST_MT_FAN);
}


static void
dist_wait_init(struct dist_wait *wait)
{
    pthread_mutex_init(&wait->lock, NULL);
    pthread_cond_init(&wait->cond, NULL);
    wait->pending = 1; /* the winder's own, dropped by dist_fan_wait */
}


/* Winds op (or ops[i] when ops is given) with args[i] to each child in
 * mask into wait; answers go to calls (set to -ENOTCONN first, -ENOMEM
 * when no request). slots: one per child, by index. */
static void
dist_fan_wind(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask, vl_fop_t op,
              const vl_fop_t *ops, const union vl_fop_args *args,
              const uint64_t *lk_owner, struct dist_call *calls,
              struct dist_wait *wait, struct dist_wait_slot *slots)
{
    unsigned n = dist_priv(xl)->n;

    for (unsigned i = 0; i < n; i++) {
        memset(&calls[i], 0, sizeof(calls[i]));
        calls[i].status = -ENOTCONN;
    }
    for (unsigned i = 0; i < n; i++) {
        vl_req_t *r;

        if (!dist_mask_test(mask, i))
            continue;
        r = vl_req_new_op(req, xl->children[i], ops != NULL ? ops[i] : op);
        if (r == NULL) {
            calls[i].status = -ENOMEM;
            continue;
        }
        r->args = args[i];
        if (lk_owner != NULL)
            r->caller.lk_owner = *lk_owner;
        slots[i].wait = wait;
        slots[i].call = &calls[i];
        slots[i].parent = NULL;
        pthread_mutex_lock(&wait->lock);
        wait->pending++;
        pthread_mutex_unlock(&wait->lock);
        vl_wind(r, dist_fan_done, &slots[i]);
    }
}


/* Drops the winder's own count and waits for every answer. */
static void
dist_fan_wait(struct dist_wait *wait)
{
    pthread_mutex_lock(&wait->lock);
    wait->pending--;
    while (wait->pending > 0)
        pthread_cond_wait(&wait->cond, &wait->lock);
    pthread_mutex_unlock(&wait->lock);
    pthread_cond_destroy(&wait->cond);
    pthread_mutex_destroy(&wait->lock);
}


static int
dist_fan_count_ok(dist_mask_t mask, const struct dist_call *calls,
                  unsigned n)
{
    int n_ok = 0;

    for (unsigned i = 0; i < n; i++)
        if (dist_mask_test(mask, i) && calls[i].status == 0)
            n_ok++;
    return n_ok;
}


/* dist_fan_sync and dist_fan_ops_sync (ops NULL: op to every child);
 * lk_owner, when given, is the child requests' lock owner. */
static int
dist_fan_run(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask, vl_fop_t op,
             const vl_fop_t *ops, const union vl_fop_args *args,
             const uint64_t *lk_owner, struct dist_call *calls)
{
    unsigned n = dist_priv(xl)->n;
    struct dist_wait_slot *slots;
    struct dist_wait wait;

    /* The cookies of the child calls: 24 bytes a child, on the heap like
     * the caller's arrays. */
    slots = vl_calloc(xl, n, sizeof(*slots), DIST_MT_FAN);
    if (slots == NULL) {
        for (unsigned i = 0; i < n; i++) {
            memset(&calls[i], 0, sizeof(calls[i]));
            calls[i].status = dist_mask_test(mask, i) ? -ENOMEM : -ENOTCONN;
        }
        return 0;
    }
    dist_wait_init(&wait);
    dist_fan_wind(xl, req, mask, op, ops, args, lk_owner, calls, &wait,
                  slots);
    dist_fan_wait(&wait);
    vl_free(slots);
    return dist_fan_count_ok(mask, calls, n);
}


int
dist_fan_sync(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask, vl_fop_t op,
              const union vl_fop_args *args, struct dist_call *calls)
{
    return dist_fan_run(xl, req, mask, op, NULL, args, NULL, calls);
}


int
dist_fan_sync_owner(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask,
                    vl_fop_t op, const union vl_fop_args *args,
                    uint64_t lk_owner, struct dist_call *calls)
{
    return dist_fan_run(xl, req, mask, op, NULL, args, &lk_owner, calls);
}


int
dist_fan_ops_sync(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask,
                  const vl_fop_t *ops, const union vl_fop_args *args,
                  struct dist_call *calls)
{
    return dist_fan_run(xl, req, mask, VL_FOP_COUNT /* unused */, ops, args,
                        NULL, calls);
}


static int
dist_call_sync_as(vl_xlator_t *xl, vl_req_t *req, unsigned i, vl_fop_t op,
                  const union vl_fop_args *args, const uint64_t *lk_owner,
                  struct dist_call *call)
{
    struct dist_wait_slot slot;
    struct dist_wait wait;
    vl_req_t *r;

    memset(call, 0, sizeof(*call));
    r = vl_req_new_op(req, xl->children[i], op);
    if (r == NULL) {
        call->status = -ENOMEM;
        return call->status;
    }
    r->args = *args;
    if (lk_owner != NULL)
        r->caller.lk_owner = *lk_owner;
    dist_wait_init(&wait);
    wait.pending++;
    slot.wait = &wait;
    slot.call = call;
    slot.parent = NULL;
    vl_wind(r, dist_fan_done, &slot);
    dist_fan_wait(&wait);
    return call->status;
}


int
dist_call_sync(vl_xlator_t *xl, vl_req_t *req, unsigned i, vl_fop_t op,
               const union vl_fop_args *args, struct dist_call *call)
{
    return dist_call_sync_as(xl, req, i, op, args, NULL, call);
}


int
dist_call_sync_owner(vl_xlator_t *xl, vl_req_t *req, unsigned i,
                     vl_fop_t op, const union vl_fop_args *args,
                     uint64_t lk_owner, struct dist_call *call)
{
    return dist_call_sync_as(xl, req, i, op, args, &lk_owner, call);
}


int
dist_child_sync(vl_xlator_t *xl, vl_req_t *req, unsigned i)
{
    struct dist_wait_slot slot;
    struct dist_wait wait;
    struct dist_call call = {.status = 0};
    vl_req_t *r;

    r = vl_req_child(req, xl->children[i]);
    if (r == NULL)
        return -ENOMEM;
    pthread_mutex_init(&wait.lock, NULL);
    pthread_cond_init(&wait.cond, NULL);
    wait.pending = 1;
    slot.wait = &wait;
    slot.call = &call;
    slot.parent = req;
    vl_wind(r, dist_fan_done, &slot);
    pthread_mutex_lock(&wait.lock);
    while (wait.pending > 0)
        pthread_cond_wait(&wait.cond, &wait.lock);
    pthread_mutex_unlock(&wait.lock);
    pthread_cond_destroy(&wait.cond);
    pthread_mutex_destroy(&wait.lock);
    return call.status;
}


void
dist_calls_clear(struct dist_call *calls, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        vl_reply_clear(&calls[i].reply);
}


void
dist_calls_free(struct dist_call *calls, unsigned n)
{
    if (calls == NULL)
        return;
    dist_calls_clear(calls, n);
    vl_free(calls);
}
