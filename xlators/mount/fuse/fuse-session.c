/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-session: the mount that outlives graphs.
 *
 * A session is /dev/fuse, the mount, the reader threads and the table of
 * nodes and handles. The first mount/fuse instance for a mount point
 * creates it (opens /dev/fuse, mounts, starts readers) and is its active
 * instance; the instance of a newer graph naming the same mount point
 * adopts it (no second mount) and becomes active when mortarfsd says so
 * (vfuse_switch_activate, once the new graph is ready). Readers send every
 * message to the active instance, and each call pins its instance
 * (priv->n_inflight) until answered, so an old graph is torn down only
 * after its last call: its PARENT_DOWN drains it (vfuse_session_drain).
 * The last instance to detach unmounts and frees the session.
 *
 * The pin takes no lock (fuse-reader.c): sess->active is an RCU pointer
 * (urcu-bp) and the count an atomic taken inside the read section. So a
 * drain (1) unpublishes the instance with rcu_assign_pointer, (2) waits
 * with synchronize_rcu for every reader that may have loaded it to have
 * counted itself, (3) waits on sess->cond for the count to reach 0 (the
 * last unpin signals, when is_drain_waiting says someone listens), then
 * (4) synchronize_rcu again, for that last unpin to be done reading the
 * instance. Switching (vfuse_switch_activate) is only step 1 for the old
 * instance; its graph is drained when it is freed.
 *
 * Per process: the list of sessions (vfuse_sessions, vfuse_sessions_lock).
 * Threads: attach/detach/activate/drain on the graph-managing threads
 * (never inside a read section: they may block in synchronize_rcu);
 * readers and callbacks pin and unpin without locks. Lock order:
 * vfuse_sessions_lock, then sess->lock; synchronize_rcu under neither
 * (the unpin that ends a drain takes sess->lock inside its read section).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>
#include <urcu-bp.h>

#include "builtin.h"
#include "fuse-switch.h"
#include "fuse.h"

#define VFUSE_DOMAIN "fuse"
/* How long the last teardown waits for calls its PARENT_DOWN did not
 * end (a request lost below). */
#define VFUSE_DRAIN_MS 5000

static pthread_mutex_t vfuse_sessions_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vfuse_session *vfuse_sessions; /* vfuse_sessions_lock */


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
vfuse_find_bdi(struct vfuse_session *sess)
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
            || strcmp(mp, sess->mountpoint) != 0)
            continue;
        /* The last match is the mount on top, ours. */
        sess->bdi_major = maj;
        sess->bdi_minor = min;
        sess->has_bdi = true;
    }
    free(line);
    fclose(f);
}


static int
vfuse_mount(struct vfuse_session *sess, vl_xlator_t *xl,
            const struct vfuse_conf *conf, vl_err_t *err)
{
    const char *source = conf->fsname;
    unsigned long flags = MS_NOSUID | MS_NODEV;
    char opts[256];

    if (source == NULL || source[0] == '\0')
        source = VL_FIRST_CHILD(xl)->name;
    if (conf->is_ro)
        flags |= MS_RDONLY;
    snprintf(opts, sizeof(opts),
             "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other,"
             "default_permissions,max_read=%u",
             sess->fuse_fd, (unsigned)conf->max_write);
    if (mount(source, sess->mountpoint, "fuse.mortar", flags, opts) != 0) {
        int rc = -errno;

        vl_err_set(err, "mount %s: %s", sess->mountpoint, strerror(-rc));
        return rc;
    }
    sess->is_mounted = true;
    vfuse_find_bdi(sess);
    return 0;
}


void
vfuse_session_stop(struct vfuse_session *sess)
{
    atomic_store(&sess->is_stopping, true);
    /* Unmount first: a lazy unmount never needs the daemon, and closing
     * /dev/fuse later aborts whatever the kernel still has queued. */
    if (sess->is_mounted && !atomic_load(&sess->is_gone)
        && umount2(sess->mountpoint, MNT_DETACH) != 0 && errno != EINVAL)
        vl_glog(VFUSE_DOMAIN, VL_LOG_WARNING, "umount %s: %s",
                sess->mountpoint, strerror(errno));
    sess->is_mounted = false;
    if (sess->readers != NULL)
        vfuse_readers_stop(sess);
    vfuse_notifier_stop(sess);
}


static void
vfuse_session_free(struct vfuse_session *sess)
{
    vfuse_session_stop(sess);
    if (sess->fuse_fd >= 0)
        close(sess->fuse_fd);
    vfuse_pool_clear(sess);
    vfuse_table_clear(&sess->table);
    vl_free(sess->readers);
    vl_free(sess->mountpoint);
    vl_free(sess->conf_mountpoint);
    vfuse_groups_fini(&sess->groups);
    pthread_cond_destroy(&sess->cond);
    pthread_mutex_destroy(&sess->lock);
    vl_free(sess);
}


/* A new session, mounted, readers running; priv is its active instance. */
static int
vfuse_session_new(struct vfuse_priv *priv, const struct vfuse_conf *conf,
                  struct vfuse_session **out, vl_err_t *err)
{
    struct vfuse_session *sess;
    char path[PATH_MAX];
    size_t room;
    int rc = -ENOMEM;

    sess = vl_calloc(NULL, 1, sizeof(*sess), VL_MT_MISC);
    if (sess == NULL) {
        vl_err_set(err, "mount/fuse: out of memory");
        return -ENOMEM;
    }
    sess->fuse_fd = -1;
    pthread_mutex_init(&sess->lock, NULL);
    pthread_cond_init(&sess->cond, NULL);
    vfuse_groups_init(&sess->groups);
    rcu_assign_pointer(sess->active, priv);
    sess->n_attached = 1;
    sess->read_ahead_kb = conf->read_ahead_kb;
    if (vfuse_table_init(&sess->table) != 0) {
        vl_err_set(err, "mount/fuse: out of memory");
        goto out;
    }
    vfuse_lru_set_limit(&sess->table, conf->lru_limit);
    if (realpath(conf->mountpoint, path) == NULL) {
        rc = -errno;
        vl_err_set(err, "mount %s: %s", conf->mountpoint, strerror(-rc));
        goto out;
    }
    sess->mountpoint = vl_strdup(NULL, path, VL_MT_MISC);
    sess->conf_mountpoint = vl_strdup(NULL, conf->mountpoint, VL_MT_MISC);
    sess->n_readers = conf->reader_threads;
    sess->readers = vl_calloc(NULL, sess->n_readers, sizeof(*sess->readers),
                              VL_MT_MISC);
    if (sess->mountpoint == NULL || sess->conf_mountpoint == NULL
        || sess->readers == NULL) {
        vl_err_set(err, "mount/fuse: out of memory");
        rc = -ENOMEM;
        goto out;
    }
    /* The kernel wants a read buffer of at least max_write + headers, and
     * SETXATTR may carry 64 KiB values whatever max_write is. */
    room = conf->max_write > 128 * VL_KiB ? conf->max_write : 128 * VL_KiB;
    sess->buf_size = room + VFUSE_HDR_ROOM;
    /* Blocking: each reader sleeps in read(2), woken alone by the kernel
     * for one request (fuse-reader.c). */
    sess->fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (sess->fuse_fd < 0) {
        rc = -errno;
        vl_err_set(err, "mount %s: open /dev/fuse: %s", sess->mountpoint,
                   strerror(-rc));
        goto out;
    }
    rc = vfuse_mount(sess, priv->xl, conf, err);
    if (rc != 0)
        goto out;
    /* The readers may hand the kernel's INIT to priv at once. */
    priv->sess = sess;
    rc = vfuse_notifier_start(sess);
    if (rc == 0)
        rc = vfuse_readers_start(sess);
    if (rc != 0) {
        vl_err_set(err, "mount %s: starting readers: %s", sess->mountpoint,
                   strerror(-rc));
        goto out;
    }
    *out = sess;
    sess = NULL;
    rc = 0;
out:
    if (sess != NULL) {
        priv->sess = NULL;
        vfuse_session_free(sess);
    }
    return rc;
}


int
vfuse_session_attach(struct vfuse_priv *priv, const struct vfuse_conf *conf,
                     vl_err_t *err)
{
    struct vfuse_session *sess;
    int rc = 0;

    pthread_mutex_lock(&vfuse_sessions_lock);
    for (sess = vfuse_sessions; sess != NULL; sess = sess->next)
        if (strcmp(sess->conf_mountpoint, conf->mountpoint) == 0
            && sess->is_mounted && !atomic_load(&sess->is_gone))
            break;
    if (sess != NULL) {
        /* A newer graph on our mount: share it, do not mount again. */
        pthread_mutex_lock(&sess->lock);
        sess->n_attached++;
        pthread_mutex_unlock(&sess->lock);
        vl_log(priv->xl, VL_LOG_INFO, "graph %llu adopts the mount of %s",
               (unsigned long long)priv->gen, sess->mountpoint);
    } else {
        rc = vfuse_session_new(priv, conf, &sess, err);
        if (rc == 0) {
            sess->next = vfuse_sessions;
            vfuse_sessions = sess;
        }
    }
    pthread_mutex_unlock(&vfuse_sessions_lock);
    if (rc == 0)
        priv->sess = sess;
    return rc;
}


void
vfuse_session_detach(struct vfuse_priv *priv)
{
    struct vfuse_session *sess = priv->sess;
    struct vfuse_session **pp;
    bool was_active = false;
    bool is_last;

    if (sess == NULL)
        return;
    pthread_mutex_lock(&vfuse_sessions_lock);
    pthread_mutex_lock(&sess->lock);
    if (sess->active == priv) {
        rcu_assign_pointer(sess->active, NULL);
        was_active = true;
    }
    is_last = --sess->n_attached == 0;
    pthread_mutex_unlock(&sess->lock);
    if (is_last) {
        for (pp = &vfuse_sessions; *pp != NULL; pp = &(*pp)->next) {
            if (*pp == sess) {
                *pp = sess->next;
                break;
            }
        }
    }
    pthread_mutex_unlock(&vfuse_sessions_lock);
    /* Still active here means no drain ran (fini without PARENT_DOWN):
     * at least let no reader be between loading priv and counting into
     * it when priv is freed. */
    if (was_active)
        synchronize_rcu();
    priv->sess = NULL;
    if (is_last)
        vfuse_session_free(sess);
}


bool
vfuse_session_is_sole(struct vfuse_priv *priv)
{
    bool is_sole;

    pthread_mutex_lock(&priv->sess->lock);
    is_sole = priv->sess->n_attached == 1;
    pthread_mutex_unlock(&priv->sess->lock);
    return is_sole;
}


/* The steps are numbered as in the header comment. */
void
vfuse_session_drain(struct vfuse_priv *priv, bool is_bounded)
{
    struct vfuse_session *sess = priv->sess;
    struct timespec until;
    size_t n_left;
    int rc = 0;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += VFUSE_DRAIN_MS / 1000;
    /* (1) No new call may pick a graph that is going away. */
    pthread_mutex_lock(&sess->lock);
    if (sess->active == priv)
        rcu_assign_pointer(sess->active, NULL);
    pthread_mutex_unlock(&sess->lock);
    /* (2) A reader that loaded priv before that has counted itself by the
     * end of its read section: from here on n_inflight only falls. */
    synchronize_rcu();
    /* (3) The flag before the count (both sequentially consistent, as in
     * vfuse_priv_unpin): an unpin to 0 either sees the flag and signals
     * under the lock, or happened before the test below sees 0. */
    atomic_store(&priv->is_drain_waiting, true);
    pthread_mutex_lock(&sess->lock);
    while (atomic_load(&priv->n_inflight) > 0 && rc == 0) {
        if (is_bounded)
            rc = pthread_cond_timedwait(&sess->cond, &sess->lock, &until);
        else if (sess->is_abort)
            break;
        else
            pthread_cond_wait(&sess->cond, &sess->lock);
    }
    n_left = atomic_load(&priv->n_inflight);
    pthread_mutex_unlock(&sess->lock);
    if (n_left > 0 && is_bounded)
        vl_log(priv->xl, VL_LOG_WARNING, "%zu fuse requests still pending",
               n_left);
    /* (4) The unpin that brought the count to 0 may still be reading
     * priv (is_drain_waiting) or signalling: it does so in a read
     * section, which this waits out before the caller tears down. */
    synchronize_rcu();
}


/* ---- the switch API (fuse-switch.h) ---- */

bool
vfuse_switch_is_fuse(const vl_graph_t *graph)
{
    return graph != NULL && graph->top != NULL
           && graph->top->cls == &xl_mount_fuse;
}


int
vfuse_switch_activate(vl_graph_t *graph, vl_err_t *err)
{
    struct vfuse_priv *priv;
    struct vfuse_priv *old;
    uint64_t old_gen = 0;

    if (!vfuse_switch_is_fuse(graph) || graph->top->priv == NULL) {
        vl_err_set(err, "graph %llu: its top is not a mounted mount/fuse",
                   graph != NULL ? (unsigned long long)graph->id : 0ULL);
        return -EINVAL;
    }
    priv = graph->top->priv;
    /* New calls go to priv at once; calls of the old instance finish
     * there, and its graph's teardown drains them (vfuse_session_drain
     * waits out the readers that still load old). */
    pthread_mutex_lock(&priv->sess->lock);
    old = priv->sess->active;
    if (old != NULL)
        old_gen = old->gen;
    rcu_assign_pointer(priv->sess->active, priv);
    pthread_mutex_unlock(&priv->sess->lock);
    vl_log(priv->xl, VL_LOG_INFO, "%s: graph %llu serves the mount "
           "(was graph %llu)", priv->sess->mountpoint,
           (unsigned long long)priv->gen, (unsigned long long)old_gen);
    /* The bricks noted the old graph's connections as the watchers of
     * what the kernel keeps; the new graph's watch nothing yet, so
     * nobody would tell of a change: drop it all, as when a brick is
     * lost (fuse-notify.c). */
    if (old != NULL && old != priv)
        vfuse_notify_upcall(priv, &(struct vl_upcall){.is_all = true});
    return 0;
}


void
vfuse_switch_abort_waits(void)
{
    pthread_mutex_lock(&vfuse_sessions_lock);
    for (struct vfuse_session *s = vfuse_sessions; s != NULL; s = s->next) {
        pthread_mutex_lock(&s->lock);
        s->is_abort = true;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&vfuse_sessions_lock);
}
