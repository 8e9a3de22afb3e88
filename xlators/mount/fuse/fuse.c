/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mount/fuse: the top of a client graph. Mounts the volume with mount(2)
 * on a /dev/fuse descriptor and turns the kernel's FUSE messages into
 * libvol requests (protocol spoken directly from <linux/fuse.h>, no
 * libfuse).
 *
 * This file: the class, its options, init/fini/notify and readiness
 * (ready once the kernel's INIT is answered and the child is up; failed
 * if the child is not up within connect-timeout). One instance per graph;
 * the mount itself is a session shared by the instances of successive
 * graphs (fuse-session.c), so a graph switch needs no remount.
 *
 * Intercepts: nothing (it is the top; it creates requests).
 * Per inode:  nothing; nodeids are session objects (fuse-table.c).
 * Per fd:     nothing; file handles are session objects too.
 * Per req:    nothing; per message a struct vfuse_call (fuse.h).
 * Threads:    reader threads (fuse-reader.c); done callbacks write replies
 *             from whatever thread answers. priv->lock guards readiness;
 *             the active instance is an RCU pointer and the in-flight
 *             counts atomics, so a request takes no lock to pin its
 *             graph (fuse-session.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "fuse.h"

/* ---- readiness ---- */

/* Cancels the connect-timeout watchdog. Called with priv->lock held: the
 * watchdog's callback takes that lock first, so while we hold it the timer
 * cannot finish firing and be freed under vl_timer_cancel. If it already
 * fired, its callback is on its way and clears is_timer_cb_due itself. */
static void
vfuse_timer_cancel_locked(struct vfuse_priv *priv)
{
    vl_timer_t *timer = priv->connect_timer;

    priv->connect_timer = NULL;
    if (timer != NULL && vl_timer_cancel(timer))
        priv->is_timer_cb_due = false;
}


/* The watchdog's callback is done with priv and the graph. */
static void
vfuse_timer_cb_done(struct vfuse_priv *priv)
{
    pthread_mutex_lock(&priv->lock);
    priv->is_timer_cb_due = false;
    pthread_cond_broadcast(&priv->cond);
    pthread_mutex_unlock(&priv->lock);
}


static bool
vfuse_is_init_done(struct vfuse_priv *priv)
{
    return atomic_load(&priv->sess->is_init_done);
}


/* Ready once the kernel's INIT is answered (for an adopted mount, long
 * ago) and the child is up. */
static void
vfuse_ready_check(struct vfuse_priv *priv)
{
    bool is_init_done = vfuse_is_init_done(priv);
    bool is_ready = false;

    pthread_mutex_lock(&priv->lock);
    if (!priv->is_ready_sent && is_init_done && priv->is_child_up) {
        priv->is_ready_sent = true;
        is_ready = true;
        vfuse_timer_cancel_locked(priv);
    }
    pthread_mutex_unlock(&priv->lock);
    if (!is_ready)
        return;
    vl_log(priv->xl, VL_LOG_INFO, "graph %llu ready on %s",
           (unsigned long long)priv->gen, priv->sess->mountpoint);
    vl_graph_set_ready(priv->xl->graph, 0, NULL);
}


void
vfuse_init_answered(struct vfuse_priv *priv)
{
    atomic_store(&priv->sess->is_init_done, true);
    vfuse_ready_check(priv);
}


static void
vfuse_connect_timeout(void *arg)
{
    struct vfuse_priv *priv = arg;
    const struct vfuse_conf *conf = VL_CONF(priv->xl, struct vfuse_conf);
    bool is_init_done = vfuse_is_init_done(priv);
    char reason[512] = "";
    char last[400] = "";

    pthread_mutex_lock(&priv->lock);
    priv->connect_timer = NULL; /* the loop frees it when we return */
    if (priv->is_ready_sent || priv->is_draining) {
        priv->is_timer_cb_due = false;
        pthread_cond_broadcast(&priv->cond);
        pthread_mutex_unlock(&priv->lock);
        return;
    }
    priv->is_ready_sent = true;
    pthread_mutex_unlock(&priv->lock);

    /* With a zero timeout this only copies the last error a translator
     * recorded (e.g. protocol/client's "host:port: Connection refused"). */
    if (vl_graph_wait_ready(priv->xl->graph, 0, last, sizeof(last))
            == -ETIMEDOUT
        && last[0] != '\0')
        snprintf(reason, sizeof(reason), "%s", last);
    else if (!is_init_done)
        snprintf(reason, sizeof(reason),
                 "mount %s: no FUSE INIT from the kernel within %llu ms",
                 priv->sess->mountpoint,
                 (unsigned long long)conf->connect_timeout);
    else
        snprintf(reason, sizeof(reason), "%s not up within %llu ms",
                 VL_FIRST_CHILD(priv->xl)->name,
                 (unsigned long long)conf->connect_timeout);
    vl_log(priv->xl, VL_LOG_ERROR, "%s", reason);
    vl_graph_set_ready(priv->xl->graph, -ENOTCONN, reason);
    vfuse_timer_cb_done(priv);
}


/* ---- teardown ---- */

/* The watchdog must be gone, or finished, before the graph is. */
static void
vfuse_timer_stop(struct vfuse_priv *priv)
{
    pthread_mutex_lock(&priv->lock);
    priv->is_draining = true;
    vfuse_timer_cancel_locked(priv);
    while (priv->is_timer_cb_due)
        pthread_cond_wait(&priv->cond, &priv->lock);
    pthread_mutex_unlock(&priv->lock);
}


/* PARENT_DOWN. The core frees the inode table right after it, before
 * fini(), so every ref into this graph goes now. The last instance of the
 * mount unmounts first and passes PARENT_DOWN down at once (pending calls
 * fail); an old graph after a switch first waits for its calls to finish
 * normally, and leaves the mount alone. */
static void
vfuse_teardown(vl_xlator_t *xl, struct vfuse_priv *priv)
{
    if (vfuse_session_is_sole(priv)) {
        vfuse_session_stop(priv->sess);
    } else {
        vfuse_session_drain(priv, false);
        /* While the children are still connected, so that the release
         * hooks of the old fds reach the bricks. */
        vfuse_table_drop_gen(&priv->sess->table, priv->gen);
    }
    vl_notify_default(xl, VL_EV_PARENT_DOWN, NULL);
    vfuse_session_drain(priv, true);
    vfuse_timer_stop(priv);
    /* (Again: calls cut short at exit may have made new refs.) */
    vfuse_table_drop_gen(&priv->sess->table, priv->gen);
    vl_inode_unref(priv->root);
    priv->root = NULL;
    priv->is_torn_down = true;
}


static int
fuse_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    struct vfuse_priv *priv = xl->priv;
    const struct vfuse_conf *conf = VL_CONF(xl, struct vfuse_conf);
    vl_timer_t *timer;
    bool is_unarmed = false;

    switch (ev) {
    case VL_EV_PARENT_UP:
        /* Armed under priv->lock, which the callback takes first, so the
         * callback cannot run before the state says it is due. */
        pthread_mutex_lock(&priv->lock);
        timer = NULL;
        if (!priv->is_ready_sent && !priv->is_draining
            && priv->connect_timer == NULL) {
            timer = vl_timer_add(xl->graph->loop, conf->connect_timeout,
                                 vfuse_connect_timeout, priv);
            priv->connect_timer = timer;
            priv->is_timer_cb_due = timer != NULL;
            is_unarmed = timer == NULL;
        }
        pthread_mutex_unlock(&priv->lock);
        if (is_unarmed)
            vl_log(xl, VL_LOG_WARNING, "no connect-timeout timer: ENOMEM");
        return vl_notify_default(xl, ev, data);
    case VL_EV_CHILD_UP:
        pthread_mutex_lock(&priv->lock);
        priv->is_child_up = true;
        pthread_mutex_unlock(&priv->lock);
        vfuse_ready_check(priv);
        return 0;
    case VL_EV_PARENT_DOWN:
        vfuse_teardown(xl, priv);
        return 0;
    case VL_EV_CHILD_DOWN:
        pthread_mutex_lock(&priv->lock);
        priv->is_child_up = false;
        pthread_mutex_unlock(&priv->lock);
        vl_log(xl, VL_LOG_INFO, "child %s down",
               VL_FIRST_CHILD(xl)->name);
        return 0;
    case VL_EV_UPCALL:
        if (data != NULL)
            vfuse_notify_upcall(priv, data);
        return 0; /* the top: nobody above to tell */
    default:
        return vl_notify_default(xl, ev, data);
    }
}


/* ---- init / fini ---- */

static void
vfuse_priv_free(struct vfuse_priv *priv)
{
    if (priv->sess != NULL && !priv->is_torn_down) {
        /* Freed without PARENT_DOWN: the inode table may be gone already,
         * so the refs into it cannot be dropped safely. */
        vl_log(priv->xl, VL_LOG_WARNING, "fini without PARENT_DOWN: "
               "leaving this graph's inode and fd refs");
        vfuse_timer_stop(priv);
    }
    vfuse_session_detach(priv);
    pthread_cond_destroy(&priv->cond);
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
}


/* FLUSH is where a translator holding writes back (write-behind) reports
 * a deferred write error to close(); Mortar's client graphs have none,
 * but a hand-written volfile may. With one below, every FLUSH of a
 * handle opened for writing goes down (fuse-file.c). */
static bool
fuse_has_write_behind(const vl_graph_t *graph)
{
    for (size_t i = 0; i < graph->n_xls; i++) {
        const char *type = graph->xls[i]->cls->type;

        if (type != NULL && strstr(type, "write-behind") != NULL)
            return true;
    }
    return false;
}


static int
fuse_init(vl_xlator_t *xl, vl_err_t *err)
{
    const struct vfuse_conf *conf = VL_CONF(xl, struct vfuse_conf);
    struct vfuse_priv *priv;
    int rc;

    if (geteuid() != 0) {
        vl_err_set(err, "mount %s: %s (mount/fuse needs root)",
                   conf->mountpoint, strerror(EPERM));
        return -EPERM;
    }
    priv = vl_calloc(xl, 1, sizeof(*priv), VFUSE_MT_PRIV);
    if (priv == NULL) {
        vl_err_set(err, "mount/fuse: out of memory");
        return -ENOMEM;
    }
    priv->xl = xl;
    priv->gen = xl->graph->id;
    priv->has_write_behind = fuse_has_write_behind(xl->graph);
    priv->md_cache = vfuse_find_md_cache(xl->graph);
    pthread_mutex_init(&priv->lock, NULL);
    pthread_cond_init(&priv->cond, NULL);
    /* Before attaching: a new session's readers may pass the kernel's
     * first message to priv at once. */
    priv->root = vl_inode_table_root(xl->graph->itable);
    if (priv->root == NULL) {
        vl_err_set(err, "mount/fuse: out of memory");
        rc = -ENOMEM;
        goto out;
    }
    rc = vfuse_session_attach(priv, conf, err);
    if (rc != 0)
        goto out;
    xl->priv = priv;
    return 0;
out:
    vl_inode_unref(priv->root);
    pthread_cond_destroy(&priv->cond);
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
    return rc;
}


static void
fuse_fini(vl_xlator_t *xl)
{
    struct vfuse_priv *priv = xl->priv;

    if (priv == NULL)
        return;
    vfuse_priv_free(priv);
    xl->priv = NULL;
}


static void
fuse_dump(vl_xlator_t *xl, FILE *out)
{
    struct vfuse_priv *priv = xl->priv;
    struct vfuse_session *sess;
    size_t n_nodes;
    size_t n_handles;
    size_t n_here;
    uint64_t n_read = 0;

    if (priv == NULL || priv->sess == NULL)
        return;
    sess = priv->sess;
    vfuse_table_counts(&sess->table, &n_nodes, &n_handles, &n_here,
                       priv->gen);
    pthread_mutex_lock(&sess->lock);
    fprintf(out, "mountpoint=%s\n", sess->mountpoint);
    fprintf(out, "graph=%llu\n", (unsigned long long)priv->gen);
    fprintf(out, "active=%d\n", sess->active == priv);
    fprintf(out, "graphs_attached=%zu\n", sess->n_attached);
    fprintf(out, "proto_minor=%u\n", sess->proto_minor);
    fprintf(out, "max_write=%u\n", sess->max_write);
    fprintf(out, "inflight=%zu\n", atomic_load(&priv->n_inflight));
    fprintf(out, "pool=%zu\n", sess->n_pool);
    fprintf(out, "nodes=%zu\nhandles=%zu\nobjects_in_graph=%zu\n", n_nodes,
            n_handles, n_here);
    fprintf(out, "init_done=%d\n", atomic_load(&sess->is_init_done));
    fprintf(out, "hints=%zu\n", vfuse_hint_count(&sess->table));
    vfuse_lru_dump(&sess->table, out);
    fprintf(out, "flush_local=%llu\ncaps_local=%llu\nhinted=%llu\n",
            (unsigned long long)atomic_load(&sess->n_flush_local),
            (unsigned long long)atomic_load(&sess->n_caps_local),
            (unsigned long long)atomic_load(&sess->n_hinted));
    fprintf(out, "getattr_local=%llu\n",
            (unsigned long long)atomic_load(&sess->n_getattr_local));
    fprintf(out, "sync_nosys=%llu\n",
            (unsigned long long)atomic_load(&sess->n_sync_nosys));
    fprintf(out, "groups_read=%llu\ngroups_cached=%llu\n",
            (unsigned long long)atomic_load(&sess->groups.n_reads),
            (unsigned long long)atomic_load(&sess->groups.n_hits));
    fprintf(out, "notify_upcalls=%llu\nnotify_all=%llu\n",
            (unsigned long long)atomic_load(&sess->notifier.n_upcalls),
            (unsigned long long)atomic_load(&sess->notifier.n_all));
    fprintf(out, "notify_sent=%llu\nnotify_unknown=%llu\n",
            (unsigned long long)atomic_load(&sess->notifier.n_sent),
            (unsigned long long)atomic_load(&sess->notifier.n_unknown));
    fprintf(out, "notify_dropped=%llu\n",
            (unsigned long long)atomic_load(&sess->notifier.n_dropped));
    fprintf(out, "cache_timeout_ms=%llu\n",
            (unsigned long long)vfuse_cache_timeout_ms(
                priv, VL_CONF(xl, struct vfuse_conf)->attr_timeout));
    for (size_t i = 0; i < sess->n_readers; i++)
        n_read += atomic_load_explicit(&sess->readers[i].n_requests,
                                       memory_order_relaxed);
    fprintf(out, "requests_read=%llu\n", (unsigned long long)n_read);
    pthread_mutex_unlock(&sess->lock);
    pthread_mutex_lock(&priv->lock);
    fprintf(out, "child_up=%d\n", priv->is_child_up);
    pthread_mutex_unlock(&priv->lock);
}


/* /metrics: the FUSE queue (doc/metrics.md, mortar_fuse_*): requests
 * read from the kernel, and those of this graph not answered yet. */
static void
fuse_metrics(vl_xlator_t *xl, vl_metrics_sink_t *sink)
{
    struct vfuse_priv *priv = xl->priv;
    struct vfuse_session *sess;
    uint64_t n_read = 0;
    uint64_t n_inflight;

    if (priv == NULL || priv->sess == NULL)
        return;
    sess = priv->sess;
    n_inflight = atomic_load(&priv->n_inflight);
    for (size_t i = 0; i < sess->n_readers; i++)
        n_read += atomic_load_explicit(&sess->readers[i].n_requests,
                                       memory_order_relaxed);
    vl_metrics_emit(sink, "mortar_fuse_requests_total", "counter",
                    "Requests read from the kernel (every graph of the "
                    "mount).", n_read);
    vl_metrics_emit(sink, "mortar_fuse_requests_inflight", "gauge",
                    "FUSE requests in this graph not answered yet.",
                    n_inflight);
}


static int
fuse_cross_check(const void *data, vl_err_t *err)
{
    const struct vfuse_conf *conf = data;

    if (conf->congestion > conf->max_background) {
        vl_err_set(err, "congestion-threshold %llu above max-background "
                   "%llu", (unsigned long long)conf->congestion,
                   (unsigned long long)conf->max_background);
        return -EINVAL;
    }
    return 0;
}


/* ---- tables ---- */

static const vl_option_t fuse_options[] = {
    VL_OPT_PATH("mountpoint", struct vfuse_conf, mountpoint,
                .flags = VL_OPT_REQUIRED,
                .doc = "Directory to mount the volume on."),
    VL_OPT_TIME("entry-timeout", struct vfuse_conf, entry_timeout,
                .min = 0, .max = 3600 * 1000, .def = "1",
                .doc = "How long the kernel may cache a name lookup, "
                       "unless performance/md-cache below relies on the "
                       "bricks' cache invalidation: then its "
                       "md-cache-timeout (the bricks' changes reach the "
                       "kernel as invalidations)."),
    VL_OPT_TIME("attribute-timeout", struct vfuse_conf, attr_timeout,
                .min = 0, .max = 3600 * 1000, .def = "1",
                .aliases = {"attr-timeout"},
                .doc = "How long the kernel may cache file attributes; "
                       "md-cache's timeout instead, as for "
                       "entry-timeout."),
    VL_OPT_TIME("negative-timeout", struct vfuse_conf, negative_timeout,
                .min = 0, .max = 3600 * 1000, .def = "0",
                .doc = "How long the kernel may cache a missing name; "
                       "0 disables negative caching."),
    VL_OPT_UINT("max-background", struct vfuse_conf, max_background,
                .min = 1, .max = 65535, .def = "64",
                .aliases = {"background-qlen"},
                .doc = "Asynchronous requests (read-ahead, writeback) the "
                       "kernel may have outstanding."),
    VL_OPT_UINT("congestion-threshold", struct vfuse_conf, congestion,
                .min = 0, .max = 65535, .def = "0",
                .doc = "Outstanding background requests at which the "
                       "kernel reports congestion; 0 means 3/4 of "
                       "max-background."),
    VL_OPT_UINT("reader-threads", struct vfuse_conf, reader_threads,
                .min = 1, .max = 64, .def = "2",
                .aliases = {"reader-thread-count"},
                .doc = "Threads reading requests from /dev/fuse."),
    VL_OPT_UINT("read-ahead-kb", struct vfuse_conf, read_ahead_kb,
                .min = 0, .max = 1024 * 1024, .def = "4096",
                .doc = "Kernel read-ahead of the mount (its bdi's "
                       "read_ahead_kb) in KiB; 0 leaves the kernel's. "
                       "4 MiB keeps several 1 MiB reads in flight."),
    VL_OPT_SIZE("max-write", struct vfuse_conf, max_write,
                .min = 4096, .max = 1024 * 1024, .def = "1MiB",
                .doc = "Largest READ or WRITE request the kernel sends."),
    VL_OPT_BOOL("ro", struct vfuse_conf, is_ro, .def = "off",
                .aliases = {"read-only"},
                .doc = "Mount read-only."),
    VL_OPT_STR("fsname", struct vfuse_conf, fsname,
               .doc = "Source shown for the mount (mount(8), df); default "
                      "the name of the graph below the bridge."),
    VL_OPT_BOOL("direct-io-mode", struct vfuse_conf, is_direct_io,
                .def = "off",
                .doc = "Bypass the kernel page cache for file data."),
    VL_OPT_BOOL("keep-cache", struct vfuse_conf, is_keep_cache,
                .def = "on", .aliases = {"fopen-keep-cache"},
                .doc = "Keep a file's cached pages across opens; the "
                       "kernel drops them when it sees the file's size or "
                       "mtime change (FUSE_AUTO_INVAL_DATA)."),
    VL_OPT_BOOL("acl", struct vfuse_conf, is_acl, .def = "off",
                .doc = "POSIX ACLs: pass their xattrs (system.posix_acl_*) "
                       "to the bricks, which enforce them, and have the "
                       "kernel evaluate them too (FUSE_POSIX_ACL, asked "
                       "at mount time: turning it on later only passes "
                       "the xattrs); off answers EOPNOTSUPP, as a file "
                       "system without ACLs does."),
    VL_OPT_TIME("gid-timeout", struct vfuse_conf, gid_timeout,
                .min = 0, .max = 3600 * 1000, .def = "2",
                .doc = "How long a process's supplementary groups, read "
                       "from /proc/PID/status and sent with its requests "
                       "for the bricks' permission checks, are reused "
                       "(GlusterFS's key; a process's setgroups() is seen "
                       "within it; 0 reads them for every request)."),
    VL_OPT_BOOL("selinux", struct vfuse_conf, is_selinux, .def = "off",
                .doc = "Pass security.selinux labels to the bricks; off "
                       "answers EOPNOTSUPP without a brick round trip."),
    VL_OPT_BOOL("writeback-cache", struct vfuse_conf, is_writeback,
                .def = "off", .aliases = {"kernel-writeback-cache"},
                .doc = "Let the kernel cache writes and send them later "
                       "(unsafe when several clients share files)."),
    VL_OPT_BOOL("readdirplus", struct vfuse_conf, is_rdplus, .def = "on",
                .aliases = {"use-readdirp"},
                .doc = "Let the kernel list with READDIRPLUS (names with "
                       "attributes, so the listed names need no LOOKUP). "
                       "Off: every listing is a plain READDIR of names and "
                       "types, which the bricks answer without a stat per "
                       "entry, and each name costs a LOOKUP when used."),
    VL_OPT_BOOL("readdirplus-auto", struct vfuse_conf, is_rdplus_auto,
                .def = "off",
                .doc = "Let the kernel choose per listing between READDIR "
                       "and READDIRPLUS (FUSE_READDIRPLUS_AUTO: plus for "
                       "a directory's first batch and after a lookup in "
                       "it). Off: every listing is READDIRPLUS, so the "
                       "names of all batches come with their attributes "
                       "(no LOOKUP per later name)."),
    VL_OPT_BOOL("flush-behind", struct vfuse_conf, is_flush_behind,
                .def = "on", .aliases = {"performance.flush-behind"},
                .doc = "Answer close(2)'s FLUSH at once when this mount "
                       "never asked for a lock on the file (FLUSH then has "
                       "nothing to release). Off: every FLUSH goes to the "
                       "bricks and close waits for it (needed for the "
                       "brick option fsync-on-close to sync on close)."),
    VL_OPT_BOOL("capability", struct vfuse_conf, is_capability,
                .def = "on",
                .doc = "Files may carry capabilities (security.capability). "
                       "Off: none do; the probe the kernel makes before "
                       "the first write to each file is answered ENODATA "
                       "without a brick round trip, and setting one is "
                       "refused with EOPNOTSUPP. On, the probe is still "
                       "answered locally for files this mount created."),
    VL_OPT_TIME("connect-timeout", struct vfuse_conf, connect_timeout,
                .min = 1, .max = 3600 * 1000, .def = "10",
                .doc = "How long to wait for the graph below to come up "
                       "before the mount is declared failed."),
    VL_OPT_UINT("lru-limit", struct vfuse_conf, lru_limit, .min = 0,
                .max = 1 << 24, .def = "32768",
                .doc = "Inodes the kernel may hold looked up (GlusterFS's "
                       "mount option of the same name): past it, the "
                       "least recently looked-up names are asked to be "
                       "dropped, so the kernel forgets inodes nothing "
                       "else holds, and the client frees them (about 700 "
                       "bytes each with the graph's inode). 0: no limit "
                       "(the kernel forgets under its own memory "
                       "pressure only). Set at mount; a new graph keeps "
                       "the mount's."),
    VL_OPT_END,
};

static const char *const fuse_mem_types[] = {
    [VFUSE_MT_MISC] = "misc",     [VFUSE_MT_PRIV] = "fuse_priv",
    [VFUSE_MT_CALL] = "fuse_call", [VFUSE_MT_READER] = "fuse_reader",
    [VFUSE_MT_REPLY] = "fuse_reply", NULL,
};

const vl_xlator_class_t xl_mount_fuse = {
    .abi = VL_XLATOR_ABI,
    .type = "mount/fuse",
    .prefix = "fuse",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD | VL_XL_TOP_ONLY,
    .conf_size = sizeof(struct vfuse_conf),
    .options = fuse_options,
    .mem_types = fuse_mem_types,
    .doc = "FUSE bridge: mounts the volume through /dev/fuse (kernel "
           "protocol spoken directly) and turns kernel requests into "
           "requests of the graph below.",
    .init = fuse_init,
    .fini = fuse_fini,
    .cross_check = fuse_cross_check,
    .notify = fuse_notify,
    .dump = fuse_dump,
    .metrics = fuse_metrics,
};
