/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mount/fuse: the top of a client graph. Mounts the volume with mount(2)
 * on a /dev/fuse descriptor and turns the kernel's FUSE messages into
 * libvol requests (protocol spoken directly from <linux/fuse.h>, no
 * libfuse).
 *
 * This file: the class, its options, init/fini/notify, mount and unmount,
 * and readiness (ready once the kernel's INIT is answered and the child is
 * up; failed if the child is not up within connect-timeout).
 *
 * Intercepts: nothing (it is the top; it creates requests).
 * Per inode:  struct vfuse_inode (kernel lookup count), see fuse-reader.c.
 * Per fd:     nothing; the vl_fd_t pointer is the kernel's file handle.
 * Per req:    nothing; per message a struct vfuse_call (fuse.h).
 * Threads:    reader threads (fuse-reader.c); done callbacks write replies
 *             from whatever thread answers. priv->lock guards readiness,
 *             the buffer pool and the in-flight count.
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

/* How long fini waits for requests still down the graph. */
#define VFUSE_DRAIN_MS 5000


/* ---- mounting ---- */

/* Undoes mountinfo's octal escapes ("\040" for a space) in place. */
static void
vfuse_unescape(char *s)
{
    char *w = s;

    for (char *r = s; *r != '\0'; w++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0'
            && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else {
            *w = *r++;
        }
    }
    *w = '\0';
}


/* Finds our mount's device number in /proc/self/mountinfo. stat() of the
 * mount point would cost a FUSE GETATTR through a child that is not up
 * yet; mountinfo has the same major:minor without a round trip. */
static void
vfuse_find_bdi(struct vfuse_priv *priv)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char *line = NULL;
    size_t cap = 0;

    if (f == NULL)
        return;
    while (getline(&line, &cap, f) > 0) {
        unsigned maj;
        unsigned min;
        char mp[PATH_MAX];
        char *dash;
        char fstype[64];

        if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, mp) != 3)
            continue;
        dash = strstr(line, " - ");
        if (dash == NULL || sscanf(dash + 3, "%63s", fstype) != 1)
            continue;
        vfuse_unescape(mp);
        if (strcmp(fstype, "fuse.mortar") != 0
            || strcmp(mp, priv->mountpoint) != 0)
            continue;
        /* The last match is the mount on top, ours. */
        priv->bdi_major = maj;
        priv->bdi_minor = min;
        priv->has_bdi = true;
    }
    free(line);
    fclose(f);
}


static int
vfuse_mount(struct vfuse_priv *priv, const struct vfuse_conf *conf,
            vl_err_t *err)
{
    const char *source = conf->fsname;
    unsigned long flags = MS_NOSUID | MS_NODEV;
    char opts[256];

    if (source == NULL || source[0] == '\0')
        source = VL_FIRST_CHILD(priv->xl)->name;
    if (conf->is_ro)
        flags |= MS_RDONLY;
    snprintf(opts, sizeof(opts),
             "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other,"
             "default_permissions,max_read=%u",
             priv->fuse_fd, (unsigned)conf->max_write);
    if (mount(source, priv->mountpoint, "fuse.mortar", flags, opts) != 0) {
        int rc = -errno;

        vl_err_set(err, "mount %s: %s", priv->mountpoint, strerror(-rc));
        return rc;
    }
    priv->is_mounted = true;
    vfuse_find_bdi(priv);
    return 0;
}


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


static void
vfuse_ready_check(struct vfuse_priv *priv)
{
    bool is_ready = false;

    pthread_mutex_lock(&priv->lock);
    if (!priv->is_ready_sent && priv->is_init_done && priv->is_child_up) {
        priv->is_ready_sent = true;
        is_ready = true;
        vfuse_timer_cancel_locked(priv);
    }
    pthread_mutex_unlock(&priv->lock);
    if (!is_ready)
        return;
    vl_log(priv->xl, VL_LOG_INFO, "mounted %s", priv->mountpoint);
    vl_graph_set_ready(priv->xl->graph, 0, NULL);
}


void
vfuse_init_answered(struct vfuse_priv *priv)
{
    pthread_mutex_lock(&priv->lock);
    priv->is_init_done = true;
    pthread_mutex_unlock(&priv->lock);
    vfuse_ready_check(priv);
}


static void
vfuse_connect_timeout(void *arg)
{
    struct vfuse_priv *priv = arg;
    const struct vfuse_conf *conf = VL_CONF(priv->xl, struct vfuse_conf);
    char reason[512] = "";
    char last[400] = "";
    bool is_init_done;

    pthread_mutex_lock(&priv->lock);
    priv->connect_timer = NULL; /* the loop frees it when we return */
    if (priv->is_ready_sent || priv->is_draining) {
        priv->is_timer_cb_due = false;
        pthread_cond_broadcast(&priv->cond);
        pthread_mutex_unlock(&priv->lock);
        return;
    }
    priv->is_ready_sent = true;
    is_init_done = priv->is_init_done;
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
                 priv->mountpoint,
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

/* Stops taking kernel requests: unmount, then join the readers. */
static void
vfuse_stop(struct vfuse_priv *priv)
{
    atomic_store(&priv->is_stopping, true);
    /* Unmount first: a lazy unmount never needs the daemon, and closing
     * /dev/fuse below aborts whatever the kernel still has queued. */
    if (priv->is_mounted && !atomic_load(&priv->is_gone)
        && umount2(priv->mountpoint, MNT_DETACH) != 0 && errno != EINVAL)
        vl_log(priv->xl, VL_LOG_WARNING, "umount %s: %s", priv->mountpoint,
               strerror(errno));
    priv->is_mounted = false;
    if (priv->readers != NULL)
        vfuse_readers_stop(priv);
}


/* Waits (bounded) for the calls still down the graph. */
static void
vfuse_drain(struct vfuse_priv *priv)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += VFUSE_DRAIN_MS / 1000;
    pthread_mutex_lock(&priv->lock);
    while (priv->n_inflight > 0
           && pthread_cond_timedwait(&priv->cond, &priv->lock, &until) == 0)
        ;
    if (priv->n_inflight > 0)
        vl_log(priv->xl, VL_LOG_WARNING, "%zu fuse requests still pending",
               priv->n_inflight);
    /* The watchdog must be gone, or finished, before the graph is. */
    priv->is_draining = true;
    vfuse_timer_cancel_locked(priv);
    while (priv->is_timer_cb_due)
        pthread_cond_wait(&priv->cond, &priv->lock);
    pthread_mutex_unlock(&priv->lock);
}


/* PARENT_DOWN: the core frees the inode table right after it, before
 * fini(), so every ref the bridge holds for the kernel goes now. */
static void
vfuse_release_refs(struct vfuse_priv *priv)
{
    vfuse_drain(priv);
    vfuse_drop_kernel_refs(priv);
    vl_inode_unref(priv->root);
    priv->root = NULL;
    priv->is_torn_down = true;
}


static void
vfuse_teardown(vl_xlator_t *xl, struct vfuse_priv *priv)
{
    vfuse_stop(priv);
    vl_notify_default(xl, VL_EV_PARENT_DOWN, NULL);
    vfuse_release_refs(priv);
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
    default:
        return vl_notify_default(xl, ev, data);
    }
}


/* ---- init / fini ---- */

static void
vfuse_priv_free(struct vfuse_priv *priv)
{
    vfuse_stop(priv);
    vfuse_drain(priv);
    if (!priv->is_torn_down)
        /* Freed without PARENT_DOWN: the inode table may be gone already,
         * so the refs held for the kernel cannot be dropped safely. */
        vl_log(priv->xl, VL_LOG_WARNING, "fini without PARENT_DOWN: "
               "leaving kernel-held inode and fd refs");
    if (priv->fuse_fd >= 0)
        close(priv->fuse_fd);
    if (priv->stop_fd >= 0)
        close(priv->stop_fd);
    vfuse_pool_clear(priv);
    vl_free(priv->readers);
    vl_free(priv->mountpoint);
    pthread_cond_destroy(&priv->cond);
    pthread_mutex_destroy(&priv->lock);
    vl_free(priv);
}


static int
fuse_init(vl_xlator_t *xl, vl_err_t *err)
{
    const struct vfuse_conf *conf = VL_CONF(xl, struct vfuse_conf);
    struct vfuse_priv *priv;
    char path[PATH_MAX];
    size_t room;
    int rc = -ENOMEM;

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
    priv->fuse_fd = -1;
    priv->stop_fd = -1;
    pthread_mutex_init(&priv->lock, NULL);
    pthread_cond_init(&priv->cond, NULL);
    vfuse_list_init(&priv->inodes);
    vfuse_list_init(&priv->fds);

    if (realpath(conf->mountpoint, path) == NULL) {
        rc = -errno;
        vl_err_set(err, "mount %s: %s", conf->mountpoint, strerror(-rc));
        goto out;
    }
    priv->mountpoint = vl_strdup(xl, path, VFUSE_MT_PRIV);
    priv->n_readers = conf->reader_threads;
    priv->readers = vl_calloc(xl, priv->n_readers, sizeof(*priv->readers),
                              VFUSE_MT_READER);
    priv->root = vl_inode_table_root(xl->graph->itable);
    if (priv->mountpoint == NULL || priv->readers == NULL
        || priv->root == NULL) {
        vl_err_set(err, "mount/fuse: out of memory");
        rc = -ENOMEM;
        goto out;
    }
    /* The kernel wants a read buffer of at least max_write + headers, and
     * SETXATTR may carry 64 KiB values whatever max_write is. */
    room = conf->max_write > 128 * VL_KiB ? conf->max_write : 128 * VL_KiB;
    priv->buf_size = room + VFUSE_HDR_ROOM;

    priv->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    /* Non-blocking so that readers sleep in poll() next to stop_fd. */
    priv->fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC | O_NONBLOCK);
    if (priv->stop_fd < 0 || priv->fuse_fd < 0) {
        rc = -errno;
        vl_err_set(err, "mount %s: open /dev/fuse: %s", priv->mountpoint,
                   strerror(-rc));
        goto out;
    }
    rc = vfuse_mount(priv, conf, err);
    if (rc != 0)
        goto out;
    rc = vfuse_readers_start(priv);
    if (rc != 0) {
        vl_err_set(err, "mount %s: starting readers: %s", priv->mountpoint,
                   strerror(-rc));
        goto out;
    }
    xl->priv = priv;
    priv = NULL;
    rc = 0;
out:
    if (priv != NULL) {
        vfuse_stop(priv);
        vfuse_release_refs(priv);
        vfuse_priv_free(priv);
    }
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

    if (priv == NULL)
        return;
    pthread_mutex_lock(&priv->lock);
    fprintf(out, "mountpoint=%s\n", priv->mountpoint);
    fprintf(out, "proto_minor=%u\n", priv->proto_minor);
    fprintf(out, "max_write=%u\n", priv->max_write);
    fprintf(out, "inflight=%zu\n", priv->n_inflight);
    fprintf(out, "pool=%zu\n", priv->n_pool);
    fprintf(out, "init_done=%d\nchild_up=%d\n", priv->is_init_done,
            priv->is_child_up);
    pthread_mutex_unlock(&priv->lock);
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
                .doc = "How long the kernel may cache a name lookup "
                       "(no upcall invalidation yet)."),
    VL_OPT_TIME("attribute-timeout", struct vfuse_conf, attr_timeout,
                .min = 0, .max = 3600 * 1000, .def = "1",
                .aliases = {"attr-timeout"},
                .doc = "How long the kernel may cache file attributes."),
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
                .doc = "Pass POSIX ACL xattrs (system.posix_acl_*) to the "
                       "bricks; off answers EOPNOTSUPP, as a file system "
                       "without ACLs does (Mortar does not enforce ACLs)."),
    VL_OPT_BOOL("selinux", struct vfuse_conf, is_selinux, .def = "off",
                .doc = "Pass security.selinux labels to the bricks; off "
                       "answers EOPNOTSUPP without a brick round trip."),
    VL_OPT_BOOL("writeback-cache", struct vfuse_conf, is_writeback,
                .def = "off", .aliases = {"kernel-writeback-cache"},
                .doc = "Let the kernel cache writes and send them later "
                       "(unsafe when several clients share files)."),
    VL_OPT_TIME("connect-timeout", struct vfuse_conf, connect_timeout,
                .min = 1, .max = 3600 * 1000, .def = "10",
                .doc = "How long to wait for the graph below to come up "
                       "before the mount is declared failed."),
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
    .inode_ctx_size = sizeof(struct vfuse_inode),
    .fd_ctx_size = sizeof(struct vfuse_fd),
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
};
