/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * io-threads: move requests from the event-loop threads that wind them
 * onto a pool of worker threads, where the translators below (posix) may
 * block on the disk.
 *
 * Intercepts: every fop. Fast fops (iot_fop_is_fast: metadata, namespace
 *             changes, I/O up to inline-io-size) are passed on at once on
 *             the calling thread when inline-fast-fops is on (default):
 *             a hand-off to a worker (futex wake, two context switches)
 *             costs more than the fop itself. pass-through runs every fop
 *             inline. The others are queued: the request object itself
 *             (no copy of its arguments); a worker later calls vl_pass()
 *             with it, so the child's answer goes straight back to
 *             whoever wound it. The caller (protocol/server) must not
 *             serialize a connection behind an inline fop; rpc/src/conn.c
 *             re-arms input and hands other buffered records to another
 *             loop thread before delivering one.
 * Queues:     four FIFOs by priority (high, normal, low, least). A worker
 *             takes the first request of the highest-priority queue whose
 *             number of running requests is below that priority's cap.
 * Pool:       threads start on demand up to thread-count; above
 *             IOT_MIN_THREADS they exit after idle-time without work.
 *             thread-count and the caps change live (reconfigure). init
 *             fails if it cannot start the first worker; a later failed
 *             start is logged and the pool runs with the workers it has.
 * Per req:    struct iot_local (queue link) in the reserved area.
 * Threads:    iot_priv.lock guards queues and pool state; it is never held
 *             across vl_pass or vl_unwind. fini() answers queued requests
 *             with -ENOTCONN, then stops and joins the workers.
 * Events:     VL_EV_CLIENT_DISCONNECT answers that client's queued
 *             requests with -ENOTCONN (they never reach the child).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "builtin.h"
#include "io-threads.h"

enum iot_mem_type {
    IOT_MT_MISC = 0,
    IOT_MT_PRIV,
};

static const char *const iot_prio_names[IOT_PRIO_COUNT] = {
    "high", "normal", "low", "least",
};


/* Metadata reads a user waits on go first; data and namespace changes are
 * normal; bulk server-side copies and heal's block checksums (up to 4 MiB
 * read per call) are low: not least, whose one thread a busy client could
 * keep from a heal that holds the file's lock. Least is kept for
 * background traffic (heal, rebalance) that has no fop of its own yet. */
enum iot_prio
iot_fop_prio(vl_fop_t op)
{
    switch (op) {
    case VL_FOP_LOOKUP:
    case VL_FOP_STAT:
    case VL_FOP_ACCESS:
    case VL_FOP_READLINK:
    case VL_FOP_OPENDIR:
    case VL_FOP_STATFS:
    case VL_FOP_GETXATTR:
    case VL_FOP_OPEN:
    case VL_FOP_FLUSH:
    case VL_FOP_LSEEK:
        return IOT_PRIO_HIGH;
    case VL_FOP_COPY_FILE_RANGE:
    case VL_FOP_RCHECKSUM:
        return IOT_PRIO_LOW;
    default:
        return IOT_PRIO_NORMAL;
    }
}


bool
iot_fop_is_fast(const vl_req_t *req, uint64_t io_max)
{
    switch (req->op) {
    case VL_FOP_LOOKUP:
    case VL_FOP_STAT:
    case VL_FOP_ACCESS:
    case VL_FOP_READLINK:
    case VL_FOP_GETXATTR:
    case VL_FOP_STATFS:
    case VL_FOP_FLUSH:
    case VL_FOP_SETATTR:
    case VL_FOP_CREATE:
    case VL_FOP_MKNOD:
    case VL_FOP_MKDIR:
    case VL_FOP_UNLINK:
    case VL_FOP_RMDIR:
    case VL_FOP_RENAME:
    case VL_FOP_LINK:
    case VL_FOP_SYMLINK:
    case VL_FOP_SETXATTR:
    case VL_FOP_REMOVEXATTR:
    case VL_FOP_OPENDIR:
    case VL_FOP_OPEN:
    case VL_FOP_LSEEK:
    /* The lock fops never block a thread (features/locks queues a
     * request that must wait and answers it when it is granted), and an
     * XATTROP is a few xattr calls and index links (storage/posix syncs
     * none of them while it has a boot id): together they are two of a
     * replicated change's three round trips per brick (lock + pre-op,
     * post-op + unlock). */
    case VL_FOP_LK:
    case VL_FOP_INODELK:
    case VL_FOP_ENTRYLK:
    case VL_FOP_XATTROP:
        return true;
    case VL_FOP_READ:
        return VL_ARGS(req, read)->size <= io_max;
    case VL_FOP_WRITE: {
        const struct vl_write_args *w = VL_ARGS(req, write);
        uint64_t n = 0;

        for (int i = 0; i < w->n_iov; i++)
            n += w->iov[i].iov_len;
        return n <= io_max;
    }
    case VL_FOP_READDIR:
        return VL_ARGS(req, readdir)->size <= IOT_INLINE_DIR_MAX;
    default:
        /* fsync, fallocate, copy_file_range, rchecksum. */
        return false;
    }
}


static void
iot_queue_push(struct iot_queue *q, vl_req_t *req)
{
    VL_REQ_PRIV(req, struct iot_local)->next = NULL;
    if (q->tail != NULL)
        VL_REQ_PRIV(q->tail, struct iot_local)->next = req;
    else
        q->head = req;
    q->tail = req;
    q->len++;
}


static vl_req_t *
iot_queue_pop(struct iot_queue *q)
{
    vl_req_t *req = q->head;

    if (req == NULL)
        return NULL;
    q->head = VL_REQ_PRIV(req, struct iot_local)->next;
    if (q->head == NULL)
        q->tail = NULL;
    q->len--;
    return req;
}


/* The highest priority with a queued request and a free running slot, or
 * -1 if none can run now. */
static int
iot_runnable_prio_locked(struct iot_priv *priv)
{
    for (int p = 0; p < IOT_PRIO_COUNT; p++) {
        if (priv->queues[p].len > 0 && priv->running[p] < priv->prio_cap[p])
            return p;
    }
    return -1;
}


static void *iot_worker(void *arg);

iot_thread_create_fn *iot_thread_create = pthread_create;


/* Starts one worker in a free slot. A slot whose thread has exited is
 * joined first; that thread no longer takes the lock, so joining under it
 * cannot deadlock. Returns 0 or -errno. */
static int
iot_spawn_locked(struct iot_priv *priv)
{
    struct iot_slot *slot = NULL;
    int rc;

    for (size_t i = 0; i < IOT_MAX_THREADS; i++) {
        if (priv->slots[i].state != IOT_SLOT_RUNNING) {
            slot = &priv->slots[i];
            break;
        }
    }
    if (slot == NULL)
        return -EAGAIN;
    if (slot->state == IOT_SLOT_EXITED) {
        pthread_join(slot->tid, NULL);
        slot->state = IOT_SLOT_FREE;
    }
    slot->priv = priv;
    rc = iot_thread_create(&slot->tid, NULL, iot_worker, slot);
    if (rc != 0) {
        /* Once per run of failures: under memory or thread pressure
         * every queued request would try again. */
        if (!priv->is_spawn_failing && priv->n_threads > 0)
            vl_log(priv->xl, VL_LOG_WARNING,
                   "cannot start a worker thread: %s; running with %zu "
                   "of %llu", strerror(rc), priv->n_threads,
                   (unsigned long long)priv->max_threads);
        priv->is_spawn_failing = true;
        return -rc;
    }
    if (priv->is_spawn_failing)
        vl_log(priv->xl, VL_LOG_INFO, "worker threads start again");
    priv->is_spawn_failing = false;
    slot->state = IOT_SLOT_RUNNING;
    priv->n_threads++;
    priv->n_started++;
    return 0;
}


/* Gets an idle worker to look at the queues, or starts a new one if none
 * is idle and the pool may grow. Returns whether some worker will look at
 * the queues: an idle one woken, a new one, or a busy one (each looks
 * again after its request). A failed thread start leaves the pool as it
 * is: it runs with the workers it has (at least the one init started,
 * which never idles out); with none, nobody would ever run the request. */
static bool
iot_kick_locked(struct iot_priv *priv)
{
    if (priv->n_idle > priv->n_wakeups) {
        priv->n_wakeups++;
        pthread_cond_signal(&priv->work_cond);
        return true;
    }
    if (priv->n_threads < priv->max_threads
        && iot_spawn_locked(priv) == 0)
        return true;
    return priv->n_threads > 0;
}


static void
iot_deadline(struct timespec *ts, uint64_t ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}


static void *
iot_worker(void *arg)
{
    struct iot_slot *slot = arg;
    struct iot_priv *priv = slot->priv;
    vl_xlator_t *xl = priv->xl;

    pthread_mutex_lock(&priv->lock);
    for (;;) {
        struct timespec deadline;
        bool may_idle_out;
        int p;
        int rc = 0;

        /* Leave when (1) fini asked, or (2) the pool was shrunk below the
         * number of live threads. */
        if (priv->is_stopping                          /* (1) */
            || priv->n_threads > priv->max_threads)    /* (2) */
            break;

        p = iot_runnable_prio_locked(priv);
        if (p >= 0) {
            vl_req_t *req = iot_queue_pop(&priv->queues[p]);

            priv->running[p]++;
            pthread_mutex_unlock(&priv->lock);
            vl_pass(req, VL_FIRST_CHILD(xl));
            pthread_mutex_lock(&priv->lock);
            priv->running[p]--;
            priv->n_done++;
            /* This worker looks at the queues again itself; every queued
             * request already got its own kick when it arrived. */
            continue;
        }

        may_idle_out = priv->n_threads > IOT_MIN_THREADS;
        priv->n_idle++;
        if (may_idle_out) {
            iot_deadline(&deadline, priv->idle_ms);
            rc = pthread_cond_timedwait(&priv->work_cond, &priv->lock,
                                        &deadline);
        } else {
            pthread_cond_wait(&priv->work_cond, &priv->lock);
        }
        priv->n_idle--;
        if (priv->n_wakeups > 0)
            priv->n_wakeups--;
        if (rc == ETIMEDOUT && priv->n_threads > IOT_MIN_THREADS
            && iot_runnable_prio_locked(priv) < 0)
            break;
    }
    slot->state = IOT_SLOT_EXITED;
    priv->n_threads--;
    pthread_cond_broadcast(&priv->exit_cond);
    pthread_mutex_unlock(&priv->lock);
    return NULL;
}


static void
iot_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct iot_priv *priv = xl->priv;

    if (atomic_load_explicit(&priv->is_pass_through, memory_order_relaxed)
        || (atomic_load_explicit(&priv->is_inline_fast, memory_order_relaxed)
            && iot_fop_is_fast(req, atomic_load_explicit(
                                        &priv->inline_io_max,
                                        memory_order_relaxed)))) {
        /* fini runs only once the graph has drained, so no stop check is
         * needed here: the child is alive while requests are wound. */
        atomic_fetch_add_explicit(&priv->n_inline, 1, memory_order_relaxed);
        vl_pass(req, VL_FIRST_CHILD(xl));
        return;
    }
    pthread_mutex_lock(&priv->lock);
    if (priv->is_stopping) {
        pthread_mutex_unlock(&priv->lock);
        vl_unwind(req, -ENOTCONN);
        return;
    }
    if (!iot_kick_locked(priv)) {
        pthread_mutex_unlock(&priv->lock);
        vl_unwind(req, -EAGAIN); /* queued, it would wait forever */
        return;
    }
    iot_queue_push(&priv->queues[iot_fop_prio(req->op)], req);
    pthread_mutex_unlock(&priv->lock);
}


/* A client's connection closed (protocol/server, before it tells the
 * translators below): its requests still queued here never start. Their
 * answers go nowhere (the peer is gone), and a WRITE the client already
 * failed with ENOTCONN (ping-timeout) must not land after that; locks
 * below drop the client's locks on the same event. Requests already
 * running, or run inline, finish: see doc/wire-protocol.md. */
static void
iot_drop_client(struct iot_priv *priv, uint64_t client_id)
{
    vl_req_t *dropped = NULL;
    vl_req_t *req;
    size_t n = 0;

    pthread_mutex_lock(&priv->lock);
    for (int p = 0; p < IOT_PRIO_COUNT; p++) {
        struct iot_queue *q = &priv->queues[p];
        struct iot_queue keep = {0};

        while ((req = iot_queue_pop(q)) != NULL) {
            if (req->caller.client_id != client_id) {
                iot_queue_push(&keep, req);
                continue;
            }
            VL_REQ_PRIV(req, struct iot_local)->next = dropped;
            dropped = req;
            n++;
        }
        *q = keep;
    }
    priv->n_dropped += n;
    pthread_mutex_unlock(&priv->lock);
    if (n > 0)
        vl_log(priv->xl, VL_LOG_INFO,
               "client id %llu gone: %zu queued requests dropped",
               (unsigned long long)client_id, n);
    while (dropped != NULL) {
        req = dropped;
        dropped = VL_REQ_PRIV(req, struct iot_local)->next;
        vl_unwind(req, -ENOTCONN);
    }
}


static int
iot_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    /* A client id of 0 is no connection (internal requests). */
    if (ev == VL_EV_CLIENT_DISCONNECT && data != NULL && xl->priv != NULL
        && *(const uint64_t *)data != 0)
        iot_drop_client(xl->priv, *(const uint64_t *)data);
    return vl_notify_default(xl, ev, data);
}


static void
iot_conf_apply_locked(struct iot_priv *priv, const struct iot_conf *conf)
{
    priv->max_threads = conf->thread_count;
    for (int p = 0; p < IOT_PRIO_COUNT; p++)
        priv->prio_cap[p] = conf->prio_threads[p];
    priv->idle_ms = conf->idle_time;
    atomic_store(&priv->is_pass_through, conf->is_pass_through);
    atomic_store(&priv->is_inline_fast, conf->is_inline_fast);
    atomic_store(&priv->inline_io_max, conf->inline_io_max);
}


static int
iot_init(vl_xlator_t *xl, vl_err_t *err)
{
    struct iot_priv *priv;
    pthread_condattr_t cattr;
    int rc;

    priv = vl_calloc(xl, 1, sizeof(*priv), IOT_MT_PRIV);
    if (priv == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    priv->xl = xl;
    iot_conf_apply_locked(priv, VL_CONF(xl, struct iot_conf));
    pthread_mutex_init(&priv->lock, NULL);
    pthread_condattr_init(&cattr);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
    pthread_cond_init(&priv->work_cond, &cattr);
    pthread_condattr_destroy(&cattr);
    pthread_cond_init(&priv->exit_cond, NULL);

    pthread_mutex_lock(&priv->lock);
    rc = iot_spawn_locked(priv);
    pthread_mutex_unlock(&priv->lock);
    if (rc != 0) {
        /* Not even one: nothing could ever run a queued request. */
        vl_err_set(err, "cannot start a worker thread: %s", strerror(-rc));
        pthread_cond_destroy(&priv->exit_cond);
        pthread_cond_destroy(&priv->work_cond);
        pthread_mutex_destroy(&priv->lock);
        vl_free(priv);
        return rc;
    }
    xl->priv = priv;
    return 0;
}


static void
iot_fini(vl_xlator_t *xl)
{
    struct iot_priv *priv = xl->priv;
    vl_req_t *drained = NULL;
    vl_req_t *req;

    if (priv == NULL)
        return;

    /* Take the queued requests out under the lock, answer them outside. */
    pthread_mutex_lock(&priv->lock);
    priv->is_stopping = true;
    for (int p = 0; p < IOT_PRIO_COUNT; p++) {
        while ((req = iot_queue_pop(&priv->queues[p])) != NULL) {
            VL_REQ_PRIV(req, struct iot_local)->next = drained;
            drained = req;
        }
    }
    pthread_cond_broadcast(&priv->work_cond);
    pthread_mutex_unlock(&priv->lock);

    while (drained != NULL) {
        req = drained;
        drained = VL_REQ_PRIV(req, struct iot_local)->next;
        vl_unwind(req, -ENOTCONN);
    }

    pthread_mutex_lock(&priv->lock);
    while (priv->n_threads > 0)
        pthread_cond_wait(&priv->exit_cond, &priv->lock);
    pthread_mutex_unlock(&priv->lock);
    for (size_t i = 0; i < IOT_MAX_THREADS; i++) {
        if (priv->slots[i].state != IOT_SLOT_FREE)
            pthread_join(priv->slots[i].tid, NULL);
    }

    pthread_cond_destroy(&priv->exit_cond);
    pthread_cond_destroy(&priv->work_cond);
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
    xl->priv = NULL;
}


static int
iot_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    struct iot_priv *priv = xl->priv;
    size_t queued = 0;

    pthread_mutex_lock(&priv->lock);
    iot_conf_apply_locked(priv, new_conf);
    for (int p = 0; p < IOT_PRIO_COUNT; p++)
        queued += priv->queues[p].len;
    /* Grow at once if work is waiting; otherwise threads start on demand.
     * Surplus threads notice the smaller limit when woken. */
    while (queued > priv->n_idle && priv->n_threads < priv->max_threads) {
        if (iot_spawn_locked(priv) != 0)
            break;
        queued--;
    }
    pthread_cond_broadcast(&priv->work_cond);
    pthread_mutex_unlock(&priv->lock);
    return 0;
}


static void
iot_dump(vl_xlator_t *xl, FILE *out)
{
    struct iot_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    fprintf(out, "threads=%zu\n", priv->n_threads);
    fprintf(out, "idle_threads=%zu\n", priv->n_idle);
    fprintf(out, "max_threads=%llu\n",
            (unsigned long long)priv->max_threads);
    fprintf(out, "threads_started=%zu\n", priv->n_started);
    fprintf(out, "requests_done=%llu\n", (unsigned long long)priv->n_done);
    fprintf(out, "requests_dropped=%llu\n",
            (unsigned long long)priv->n_dropped);
    fprintf(out, "requests_inline=%llu\n",
            (unsigned long long)atomic_load(&priv->n_inline));
    fprintf(out, "pass_through=%d\n", (int)atomic_load(&priv->is_pass_through));
    fprintf(out, "inline_fast_fops=%d\n",
            (int)atomic_load(&priv->is_inline_fast));
    for (int p = 0; p < IOT_PRIO_COUNT; p++) {
        fprintf(out, "%s.queued=%zu\n", iot_prio_names[p],
                priv->queues[p].len);
        fprintf(out, "%s.running=%zu\n", iot_prio_names[p],
                priv->running[p]);
        fprintf(out, "%s.cap=%llu\n", iot_prio_names[p],
                (unsigned long long)priv->prio_cap[p]);
    }
    pthread_mutex_unlock(&priv->lock);
}


static const vl_option_t iot_options[] = {
    VL_OPT_UINT("thread-count", struct iot_conf, thread_count, .min = 1,
                .max = IOT_MAX_THREADS, .def = "8",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"performance.io-thread-count"},
                .doc = "Maximum number of worker threads that run fops; "
                       "the pool grows on demand up to it."),
    VL_OPT_UINT("high-prio-threads", struct iot_conf,
                prio_threads[IOT_PRIO_HIGH], .min = 1,
                .max = IOT_MAX_THREADS, .def = "8",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"performance.high-prio-threads"},
                .doc = "Maximum workers running high-priority fops "
                       "(lookup, stat, open...) at once."),
    VL_OPT_UINT("normal-prio-threads", struct iot_conf,
                prio_threads[IOT_PRIO_NORMAL], .min = 1,
                .max = IOT_MAX_THREADS, .def = "8",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"performance.normal-prio-threads"},
                .doc = "Maximum workers running normal-priority fops "
                       "(read, write, create...) at once."),
    VL_OPT_UINT("low-prio-threads", struct iot_conf,
                prio_threads[IOT_PRIO_LOW], .min = 1,
                .max = IOT_MAX_THREADS, .def = "8",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"performance.low-prio-threads"},
                .doc = "Maximum workers running low-priority fops "
                       "(copy_file_range) at once."),
    VL_OPT_UINT("least-prio-threads", struct iot_conf,
                prio_threads[IOT_PRIO_LEAST], .min = 1,
                .max = IOT_MAX_THREADS, .def = "1",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"performance.least-prio-threads"},
                .doc = "Maximum workers running least-priority "
                       "(background) fops at once."),
    VL_OPT_TIME("idle-time", struct iot_conf, idle_time, .min = 1,
                .max = 24 * 3600 * 1000LL, .def = "120s",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_ADVANCED,
                .doc = "Time without work after which a worker above the "
                       "minimum of one exits."),
    VL_OPT_BOOL("pass-through", struct iot_conf, is_pass_through,
                .def = "off", .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .aliases = {"performance.iot-pass-through"},
                .doc = "Run every fop on the thread that winds it (the "
                       "event thread), slow ones included; the pool "
                       "stays idle."),
    VL_OPT_BOOL("inline-fast-fops", struct iot_conf, is_inline_fast,
                .def = "on", .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
                .doc = "Run fops that do not block for long (metadata, "
                       "namespace changes, small reads and writes) on the "
                       "calling thread instead of handing them to a "
                       "worker."),
    VL_OPT_SIZE("inline-io-size", struct iot_conf, inline_io_max,
                .min = 0, .max = 16 * 1024 * 1024, .def = "64KiB",
                .flags = VL_OPT_SETTABLE | VL_OPT_LIVE | VL_OPT_ADVANCED,
                .doc = "Largest read or write run inline by "
                       "inline-fast-fops; bigger ones go to the workers."),
    VL_OPT_END,
};

static const char *const iot_mem_types[] = {"misc", "priv", NULL};

const vl_xlator_class_t xl_performance_io_threads = {
    .abi = VL_XLATOR_ABI,
    .type = "performance/io-threads",
    .prefix = "io-threads",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct iot_conf),
    .req_priv_size = sizeof(struct iot_local),
    .options = iot_options,
    .mem_types = iot_mem_types,
    .doc = "Runs fops on a pool of worker threads with four priority "
           "queues, so that event-loop threads never wait for the disk.",
    .init = iot_init,
    .fini = iot_fini,
    .reconfigure = iot_reconfigure,
    .notify = iot_notify,
    .dump = iot_dump,
    .fops = {
#define VL_FOP(UPPER, lower, flags) [VL_FOP_##UPPER] = iot_fop,
#include "vol/fops.def"
#undef VL_FOP
    },
};
