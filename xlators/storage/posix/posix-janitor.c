/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-janitor: removes the GFID handles of deleted regular files after
 * the unlink has answered, and sweeps the handles a crash left behind.
 *
 * Removing a file's handle frees the inode (block and inode bitmaps, the
 * handle directory's block: disk reads when caches are cold): most of
 * what an unlink cost. posix_fop_unlink (and a rename over a file)
 * removes the name, answers, and queues the handle here when the file
 * had no other name (nlink 2: the name and the handle) and is not open
 * on this brick; rmdir queues the directory's handle symlink (ino 0). A
 * queued file handle has link count 1 and no name: posix_obj_from_inode
 * treats such a handle as dead (ESTALE), so nothing reaches the file by
 * GFID again; a removed directory's symlink leads nowhere (ESTALE).
 *
 * The thread works in batches: a first item wakes it, it waits
 * POSIX_JANITOR_BATCH_MS for more (one wake-up per batch, not per
 * unlink: a thread hand-off is expensive), then removes what is queued.
 * Each removal re-checks the handle (still a regular file with link
 * count 1 and the inode that was queued: a racing link() keeps it) with
 * remove_lock held from taking the item to removing it; a create or
 * mkdir that finds an orphan handle of its own GFID takes the same lock
 * and cancels the GFID's queued items (posix_janitor_claim), so a
 * reused GFID's new handle is never removed.
 *
 * Crash safety: at start, unless the last stop was clean (the marker
 * .mortar/janitor-clean written by fini after draining), the thread
 * first sweeps .mortar/handles for regular files with link count 1 (no
 * name) and a ctime older than the sweep's start, and removes them; the
 * brick serves meanwhile. See README.md for why nothing legitimate has
 * such a handle. It also removes directory handle symlinks (older than
 * its start) whose directory is gone: the symlink names parent GFID P
 * and a name; the handle is dead if P's handle is missing, or P resolves
 * (walking the handle symlinks up, opening the names down, without the
 * itable) and the name in it is missing, no directory, or a directory
 * with another GFID. A name without GFID may be a mkdir in flight (it
 * sets the GFID after mkdirat): kept. P not resolvable (itself a dead
 * handle, or a rename half done above it) defers the decision; deferred
 * handles are retried until decided (a removed subtree: the top goes
 * first, then what was under it; a live one's chain resolves once the
 * rename changing it is done), with paused retries when a pass decides
 * nothing, POSIX_JANITOR_RETRIES of them in a row at most: then the
 * sweep is not complete (-EAGAIN) and the next start sweeps again.
 * Deferred handles an rmdir queued since are left to the queue. The
 * removal re-checks everything under remove_lock (mkdir's GFID reuse
 * takes it), and moves the symlink aside before unlinking it: a rename's
 * handle update that slipped in between is put back, never lost.
 *
 * Fault points (tests): MORTAR_POSIX_FAULT=janitor-hold in the
 * environment keeps the thread from removing anything (nor sweeping);
 * MORTAR_POSIX_FAULT=sweep-slow makes the sweep wait 1 ms before each
 * handle it examines (a sweep of a few thousand handles lasts seconds)
 * and 3 ms between reading a parent chain and opening it (a judgement
 * works from a view 3 ms old): tests/functional/posix-sweep-race.t races
 * it with live mkdir/rename/rmdir.
 *
 * Threads: the janitor thread; enqueue from io-threads workers; state in
 * struct posix_janitor (posix.h), guarded by its lock.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "posix.h"

#define POSIX_JANITOR_CLEAN POSIX_META_DIR "/janitor-clean"
/* A handle whose last name went within this margin before the sweep
 * started may be a live unlink's (timestamps are coarse). */
#define POSIX_JANITOR_SWEEP_MARGIN_NS 20000000L
void (*posix_janitor_test_before_aside)(vl_xlator_t *xl,
                                        const vl_gfid_t *gfid);

/* The sweep's waits under the fault point sweep-slow: per handle, and
 * between reading a parent chain and opening it. */
#define POSIX_JANITOR_SLOW_NS 1000000L
#define POSIX_JANITOR_SLOW_CHAIN_NS 3000000L


/* Did st's inode last change before *t? */
static bool
posix_janitor_is_older(const struct stat *st, const struct timespec *t)
{
    return st->st_ctim.tv_sec < t->tv_sec
           || (st->st_ctim.tv_sec == t->tv_sec
               && st->st_ctim.tv_nsec < t->tv_nsec);
}


/* Removes one handle if it is still a dead file's: a regular file with
 * link count 1 and the inode seen by the unlink (or the sweep), and for
 * the sweep (before != NULL) unchanged since before the brick started.
 * ino 0: a removed directory's handle symlink (a directory re-created
 * with this GFID cancels the item first, posix_janitor_claim). The
 * caller holds remove_lock. The itable is not used here: fini frees it
 * while this thread may still run. */
static bool
posix_janitor_remove_locked(vl_xlator_t *xl, const vl_gfid_t *gfid,
                            ino_t ino, const struct timespec *before)
{
    struct posix_priv *priv = posix_priv(xl);
    char hrel[POSIX_HANDLE_REL_LEN];
    struct stat st;

    posix_handle_rel(gfid, hrel);
    if (fstatat(priv->handles_fd, hrel, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return false;
    if (ino == 0 ? !S_ISLNK(st.st_mode)
                 : !S_ISREG(st.st_mode) || st.st_nlink != 1
                       || st.st_ino != ino
                       || (before != NULL
                           && !posix_janitor_is_older(&st, before)))
        return false;
    if (unlinkat(priv->handles_fd, hrel, 0) != 0)
        return false;
    posix_index_forget(xl, gfid); /* its heal records go with it */
    return true;
}


/* Queues an item (see posix_janitor_item); fd is taken only on success. */
static int
posix_janitor_push(vl_xlator_t *xl, const vl_gfid_t *gfid, ino_t ino, int fd)
{
    struct posix_janitor *j = &posix_priv(xl)->janitor;
    int rc = 0;

    if (!j->is_running)
        return -ENOTCONN;
    /* Open here: the handle must be parked at once (synchronous path). */
    if (ino != 0 && posix_inode_open_count(xl, gfid, false) > 0)
        return -EBUSY;
    pthread_mutex_lock(&j->lock);
    if (j->n >= POSIX_JANITOR_CAP || j->is_stopping
        || (fd >= 0 && j->n_fds >= POSIX_JANITOR_FD_CAP)) {
        rc = -EAGAIN; /* full: the caller removes it itself */
    } else {
        struct posix_janitor_item *it =
            &j->ring[(j->head + j->n) % POSIX_JANITOR_CAP];

        it->gfid = *gfid;
        it->ino = ino;
        it->fd = fd;
        if (fd >= 0)
            j->n_fds++;
        /* Wake the thread for the first item of a batch, and when the
         * queue fills up; otherwise it is already collecting. */
        if (j->n++ == 0 || j->n == POSIX_JANITOR_CAP / 2)
            pthread_cond_signal(&j->cond);
        j->n_queued++;
    }
    pthread_mutex_unlock(&j->lock);
    return rc;
}


int
posix_janitor_enqueue(vl_xlator_t *xl, const vl_gfid_t *gfid, ino_t ino)
{
    return posix_janitor_push(xl, gfid, ino, -1);
}


int
posix_janitor_enqueue_rmdir(vl_xlator_t *xl, const vl_gfid_t *gfid,
                            int *fd /* IN/OUT */)
{
    struct posix_janitor *j = &posix_priv(xl)->janitor;
    int rc;

    /* Held: nothing queued would be closed before stop. */
    if (*fd >= 0 && !j->is_held) {
        rc = posix_janitor_push(xl, gfid, 0, *fd);
        if (rc == 0) {
            *fd = -1;
            return 0;
        }
        if (rc != -EAGAIN)
            return rc;
    }
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    return posix_janitor_push(xl, gfid, 0, -1);
}


void
posix_janitor_claim(vl_xlator_t *xl, const vl_gfid_t *gfid)
{
    struct posix_janitor *j = &posix_priv(xl)->janitor;
    unsigned keep = 0;

    pthread_mutex_lock(&j->remove_lock);
    pthread_mutex_lock(&j->lock);
    /* Compact the ring without this GFID's items (rare: a GFID reused
     * while its old handle waits). */
    for (unsigned i = 0; i < j->n; i++) {
        struct posix_janitor_item *it =
            &j->ring[(j->head + i) % POSIX_JANITOR_CAP];

        if (!vl_gfid_equal(&it->gfid, gfid)) {
            j->ring[(j->head + keep++) % POSIX_JANITOR_CAP] = *it;
        } else if (it->fd >= 0) {
            close(it->fd);
            j->n_fds--;
        }
    }
    j->n = keep;
    pthread_mutex_unlock(&j->lock);
}


void
posix_janitor_unclaim(vl_xlator_t *xl)
{
    pthread_mutex_unlock(&posix_priv(xl)->janitor.remove_lock);
}


/* What the sweep knows of a directory handle symlink. */
enum posix_janitor_verdict {
    POSIX_JANITOR_LIVE,   /* leads to its directory (or not ours) */
    POSIX_JANITOR_DEAD,   /* its directory is gone: remove it */
    POSIX_JANITOR_UNSURE, /* the parent does not resolve now: retry */
};

/* The sweep's state (one call of posix_janitor_sweep, its thread). */
struct posix_janitor_sweep {
    struct timespec before; /* handles changed after this are not ours */
    vl_gfid_t *deferred;    /* owned; directory handles to retry */
    size_t n_deferred;      /* used entries of deferred */
    size_t cap_deferred;    /* allocated entries of deferred */
    bool is_slow;           /* fault point sweep-slow */
    unsigned long n_seen;   /* handles examined (older than before) */
    unsigned long n_put_back; /* fresh handles a removal put back */
    unsigned long n_deferrals; /* directory handles judged UNSURE */
    unsigned long n_dropped; /* deferrals lost (list full, ENOMEM) */
};

/* Deferred directory handles kept at most (16 bytes each). */
#define POSIX_JANITOR_DEFER_MAX 65536
/* Passes over the deferred handles that decide nothing before the sweep
 * gives up on them (the next start sweeps again), and the pause before
 * each such pass. */
#define POSIX_JANITOR_RETRIES 50
#define POSIX_JANITOR_RETRY_NS 10000000L
/* Most GFID comparisons (queue x deferred) posix_janitor_drop_queued
 * makes under the janitor's lock (a few milliseconds). */
#define POSIX_JANITOR_DROP_MAX (1UL << 20)
/* Deepest parent chain the sweep resolves. */
#define POSIX_JANITOR_MAX_DEPTH 4096


/* Reads gfid's directory handle: 0 (parent and name filled), -ENOENT
 * (no handle), -EINVAL (not a directory handle) or -errno. */
static int
posix_janitor_read_dir_handle(vl_xlator_t *xl, const vl_gfid_t *gfid,
                              vl_gfid_t *parent, char *name)
{
    char hrel[POSIX_HANDLE_REL_LEN];
    char target[PATH_MAX];
    ssize_t len;

    posix_handle_rel(gfid, hrel);
    len = readlinkat(posix_priv(xl)->handles_fd, hrel, target,
                     sizeof(target) - 1);
    if (len < 0)
        return -errno;
    target[len] = '\0';
    return posix_dir_target_parse(target, parent, name);
}


/* Opens directory gfid (O_PATH, *out owned by the caller) through the
 * handle symlinks alone (no itable: fini frees it while this thread may
 * run). -ENOENT: gfid's own handle is missing; -ESTALE: the chain does
 * not lead to a directory with this GFID now. */
static int
posix_janitor_dir_open(vl_xlator_t *xl, const vl_gfid_t *gfid, bool is_slow,
                       int *out)
{
    struct posix_priv *priv = posix_priv(xl);
    char (*names)[NAME_MAX + 1] = NULL;
    vl_gfid_t cur = *gfid, check;
    size_t n = 0;
    int base = -1, fd, rc;

    names = vl_malloc(xl, 16 * sizeof(*names), POSIX_MT_JANITOR);
    if (names == NULL)
        return -ENOMEM;
    for (size_t cap = 16; !vl_gfid_is_root(&cur); n++) {
        if (n == POSIX_JANITOR_MAX_DEPTH) {
            rc = -ELOOP;
            goto out;
        }
        if (n == cap) {
            void *p = vl_realloc(names, 2 * cap * sizeof(*names));

            if (p == NULL) {
                rc = -ENOMEM;
                goto out;
            }
            names = p;
            cap *= 2;
        }
        rc = posix_janitor_read_dir_handle(xl, &cur, &cur, names[n]);
        if (rc != 0) {
            if (n > 0 || rc != -ENOENT)
                rc = -ESTALE;
            goto out;
        }
    }
    if (is_slow) { /* fault point sweep-slow: the chain read may go stale */
        struct timespec ts = {.tv_nsec = POSIX_JANITOR_SLOW_CHAIN_NS};

        nanosleep(&ts, NULL);
    }
    base = fcntl(priv->root_fd, F_DUPFD_CLOEXEC, 0);
    if (base < 0) {
        rc = -errno;
        goto out;
    }
    while (n > 0) {
        fd = openat(base, names[--n],
                    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(base);
        base = fd;
        if (base < 0) {
            rc = -ESTALE;
            goto out;
        }
    }
    if (posix_gfid_get(base, ".", &check) != 0
        || !vl_gfid_equal(&check, gfid)) {
        rc = -ESTALE;
        goto out;
    }
    *out = base;
    base = -1;
    rc = 0;
out:
    if (base >= 0)
        close(base);
    vl_free(names);
    return rc;
}


/* Judges directory gfid's handle symlink (see the file comment). */
static enum posix_janitor_verdict
posix_janitor_dir_verdict(vl_xlator_t *xl, const vl_gfid_t *gfid,
                          bool is_slow)
{
    enum posix_janitor_verdict v = POSIX_JANITOR_LIVE;
    char name[NAME_MAX + 1];
    vl_gfid_t parent, g;
    struct stat st;
    int pfd = -1;
    int rc;

    /* The root's handle and anything else not shaped like a directory
     * handle are not the sweep's. */
    if (vl_gfid_is_root(gfid)
        || posix_janitor_read_dir_handle(xl, gfid, &parent, name) != 0)
        return POSIX_JANITOR_LIVE;
    rc = posix_janitor_dir_open(xl, &parent, is_slow, &pfd);
    if (rc == -ENOENT) /* the parent's handle went: the parent is gone */
        return POSIX_JANITOR_DEAD;
    if (rc != 0)
        return POSIX_JANITOR_UNSURE;
    if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        v = errno == ENOENT ? POSIX_JANITOR_DEAD : POSIX_JANITOR_LIVE;
    else if (!S_ISDIR(st.st_mode))
        v = POSIX_JANITOR_DEAD;
    else if (posix_gfid_get(pfd, name, &g) != 0)
        v = POSIX_JANITOR_LIVE; /* no GFID yet: a mkdir in flight? */
    else if (!vl_gfid_equal(&g, gfid))
        v = POSIX_JANITOR_DEAD;
    close(pfd);
    return v;
}


/* Removes gfid's directory handle symlink if it is still inode ino,
 * older than the sweep and dead; returns the verdict. Holds remove_lock
 * (a mkdir reusing the GFID waits). The symlink is renamed aside first:
 * if a rename's handle update replaced it after the check, what was
 * taken is the new one, and it goes back. */
static enum posix_janitor_verdict
posix_janitor_remove_dir(vl_xlator_t *xl, struct posix_janitor_sweep *sw,
                         const vl_gfid_t *gfid, ino_t ino)
{
    struct posix_priv *priv = posix_priv(xl);
    struct posix_janitor *j = &priv->janitor;
    enum posix_janitor_verdict v = POSIX_JANITOR_LIVE;
    char hrel[POSIX_HANDLE_REL_LEN];
    char aside[POSIX_HANDLE_REL_LEN + 32];
    struct stat st;

    posix_handle_rel(gfid, hrel);
    snprintf(aside, sizeof(aside), "%.6s.sweep-%d", hrel, (int)getpid());
    pthread_mutex_lock(&j->remove_lock);
    if (fstatat(priv->handles_fd, hrel, &st, AT_SYMLINK_NOFOLLOW) < 0
        || !S_ISLNK(st.st_mode) || st.st_ino != ino
        || !posix_janitor_is_older(&st, &sw->before))
        goto out;
    v = posix_janitor_dir_verdict(xl, gfid, sw->is_slow);
    if (v != POSIX_JANITOR_DEAD)
        goto out;
    if (posix_janitor_test_before_aside != NULL)
        posix_janitor_test_before_aside(xl, gfid);
    if (renameat(priv->handles_fd, hrel, priv->handles_fd, aside) < 0) {
        v = POSIX_JANITOR_LIVE;
        goto out;
    }
    if (fstatat(priv->handles_fd, aside, &st, AT_SYMLINK_NOFOLLOW) == 0
        && st.st_ino != ino) {
        /* A fresh handle: back, unless an even newer one is there. */
        sw->n_put_back++;
        pthread_mutex_lock(&j->lock);
        j->n_put_back++;
        pthread_mutex_unlock(&j->lock);
        if (renameat2(priv->handles_fd, aside, priv->handles_fd, hrel,
                      RENAME_NOREPLACE) == 0)
            goto out_live;
    }
    unlinkat(priv->handles_fd, aside, 0);
    if (st.st_ino != ino)
        goto out_live;
    posix_index_forget(xl, gfid);
    pthread_mutex_lock(&j->lock);
    j->n_swept++;
    pthread_mutex_unlock(&j->lock);
    goto out;
out_live:
    v = POSIX_JANITOR_LIVE;
out:
    pthread_mutex_unlock(&j->remove_lock);
    return v;
}


/* Notes a directory handle to judge again later (dropped when full). */
static void
posix_janitor_defer(vl_xlator_t *xl, struct posix_janitor_sweep *sw,
                    const vl_gfid_t *gfid)
{
    sw->n_deferrals++;
    if (sw->n_deferred == sw->cap_deferred) {
        size_t cap = sw->cap_deferred == 0 ? 64 : 2 * sw->cap_deferred;
        void *p;

        if (cap > POSIX_JANITOR_DEFER_MAX) {
            sw->n_dropped++;
            return;
        }
        p = sw->deferred == NULL
                ? vl_malloc(xl, cap * sizeof(*sw->deferred),
                            POSIX_MT_JANITOR)
                : vl_realloc(sw->deferred, cap * sizeof(*sw->deferred));
        if (p == NULL) {
            sw->n_dropped++;
            return;
        }
        sw->deferred = p;
        sw->cap_deferred = cap;
    }
    sw->deferred[sw->n_deferred++] = *gfid;
}


/* Sweeps one directory handle symlink (name in dirfd, st its lstat). */
static void
posix_janitor_sweep_link(vl_xlator_t *xl, struct posix_janitor_sweep *sw,
                         const vl_gfid_t *gfid, const struct stat *st)
{
    /* Unlocked first: most symlinks are live, and judging one resolves
     * its parent chain; the removal judges again under the lock. */
    switch (posix_janitor_dir_verdict(xl, gfid, sw->is_slow)) {
    case POSIX_JANITOR_DEAD:
        if (posix_janitor_remove_dir(xl, sw, gfid, st->st_ino)
            == POSIX_JANITOR_UNSURE)
            posix_janitor_defer(xl, sw, gfid);
        break;
    case POSIX_JANITOR_UNSURE:
        posix_janitor_defer(xl, sw, gfid);
        break;
    case POSIX_JANITOR_LIVE:
        break;
    }
}


/* Drops the deferred handles that are queued for the janitor (an rmdir
 * since the start: the queue removes them after the sweep; their
 * children wait on a parent that no longer resolves). Skipped when the
 * lists are too long to compare (the handles stay undecided). */
static void
posix_janitor_drop_queued(vl_xlator_t *xl, struct posix_janitor_sweep *sw)
{
    struct posix_janitor *j = &posix_priv(xl)->janitor;
    size_t keep = 0;

    pthread_mutex_lock(&j->lock);
    if ((size_t)j->n * sw->n_deferred > POSIX_JANITOR_DROP_MAX) {
        pthread_mutex_unlock(&j->lock);
        return;
    }
    for (size_t i = 0; i < sw->n_deferred; i++) {
        bool is_queued = false;

        for (unsigned k = 0; k < j->n && !is_queued; k++) {
            const struct posix_janitor_item *it =
                &j->ring[(j->head + k) % POSIX_JANITOR_CAP];

            is_queued = it->ino == 0
                        && vl_gfid_equal(&it->gfid, &sw->deferred[i]);
        }
        if (!is_queued)
            sw->deferred[keep++] = sw->deferred[i];
    }
    sw->n_deferred = keep;
    pthread_mutex_unlock(&j->lock);
}


/* Retries the deferred directory handles until they are decided. */
static void
posix_janitor_sweep_deferred(vl_xlator_t *xl, struct posix_janitor_sweep *sw)
{
    const struct timespec pause = {.tv_nsec = POSIX_JANITOR_RETRY_NS};
    char hrel[POSIX_HANDLE_REL_LEN];
    unsigned n_idle = 0;
    struct stat st;

    /* A pass that decides nothing does not end it: a parent chain is
     * mostly unresolvable because a rename is changing it right now (the
     * brick serves meanwhile), and stopping there left dead handles under
     * busy directories for good (tests/functional/posix-sweep-race.t).
     * Paused retries until POSIX_JANITOR_RETRIES passes in a row decided
     * nothing; the caller learns if some are still undecided. Those an
     * rmdir queued since are the queue's (a parent removed and queued
     * after a rename made its handle too new for the sweep never
     * resolves, and its queued children wait for it). */
    while (sw->n_deferred > 0 && n_idle <= POSIX_JANITOR_RETRIES) {
        size_t keep = 0;

        if (n_idle > 0) {
            posix_janitor_drop_queued(xl, sw);
            nanosleep(&pause, NULL);
        }
        for (size_t i = 0; i < sw->n_deferred; i++) {
            const vl_gfid_t *g = &sw->deferred[i];

            posix_handle_rel(g, hrel);
            if (fstatat(posix_priv(xl)->handles_fd, hrel, &st,
                        AT_SYMLINK_NOFOLLOW) < 0
                || !S_ISLNK(st.st_mode))
                continue;
            if (posix_janitor_remove_dir(xl, sw, g, st.st_ino)
                == POSIX_JANITOR_UNSURE)
                sw->deferred[keep++] = *g;
        }
        /* Decided: removed, or found live (its chain resolved). */
        n_idle = keep < sw->n_deferred ? 0 : n_idle + 1;
        sw->n_deferred = keep;
    }
}


/* Sweeps one handle directory xx/yy (fd owned, closed here). */
static void
posix_janitor_sweep_dir(vl_xlator_t *xl, int fd,
                        struct posix_janitor_sweep *sw)
{
    struct posix_janitor *j = &posix_priv(xl)->janitor;
    struct dirent *d;
    DIR *dir = fdopendir(fd);
    vl_gfid_t gfid;
    struct stat st;

    if (dir == NULL) {
        close(fd);
        return;
    }
    while ((d = readdir(dir)) != NULL) {
        /* Temporaries have longer names: only handles named by a GFID,
         * regular files (files) and symlinks (directories). */
        if ((d->d_type != DT_REG && d->d_type != DT_LNK
             && d->d_type != DT_UNKNOWN)
            || strlen(d->d_name) != VL_GFID_STR_LEN - 1
            || vl_gfid_parse(d->d_name, &gfid) != 0)
            continue;
        if (fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
            || !posix_janitor_is_older(&st, &sw->before))
            continue;
        sw->n_seen++;
        if (sw->is_slow) {
            struct timespec ts = {.tv_nsec = POSIX_JANITOR_SLOW_NS};

            nanosleep(&ts, NULL);
        }
        if (S_ISLNK(st.st_mode)) {
            posix_janitor_sweep_link(xl, sw, &gfid, &st);
            continue;
        }
        if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
            continue;
        pthread_mutex_lock(&j->remove_lock);
        if (posix_janitor_remove_locked(xl, &gfid, st.st_ino, &sw->before)) {
            pthread_mutex_lock(&j->lock);
            j->n_swept++;
            pthread_mutex_unlock(&j->lock);
        }
        pthread_mutex_unlock(&j->remove_lock);
    }
    closedir(dir);
}


/* posix_handle_walk_dirs callback: sweeps xx/yy (name in parent_fd). */
static void
posix_janitor_sweep_one(vl_xlator_t *xl, unsigned index, int parent_fd,
                        const char *name, void *arg)
{
    int fd = openat(parent_fd, name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    (void)index;
    if (fd >= 0)
        posix_janitor_sweep_dir(xl, fd, arg);
}


int
posix_janitor_sweep(vl_xlator_t *xl)
{
    const char *fault = getenv("MORTAR_POSIX_FAULT");
    struct posix_janitor_sweep sw = {0};
    int rc;

    sw.is_slow = fault != NULL && strcmp(fault, "sweep-slow") == 0;

    /* Handles whose last name went after this (live unlinks, an open
     * file's handle on its way to .mortar/unlink) are not the sweep's. */
    clock_gettime(CLOCK_REALTIME, &sw.before);
    if (sw.before.tv_nsec >= POSIX_JANITOR_SWEEP_MARGIN_NS) {
        sw.before.tv_nsec -= POSIX_JANITOR_SWEEP_MARGIN_NS;
    } else {
        sw.before.tv_sec--;
        sw.before.tv_nsec += 1000000000L - POSIX_JANITOR_SWEEP_MARGIN_NS;
    }
    rc = posix_handle_walk_dirs(xl, posix_janitor_sweep_one, &sw);
    if (rc == 0)
        posix_janitor_sweep_deferred(xl, &sw);
    /* Directory handles left undecided may be dead: not a complete
     * sweep (no clean marker at stop: the next start sweeps again). */
    if (rc == 0 && (sw.n_deferred > 0 || sw.n_dropped > 0))
        rc = -EAGAIN;
    /* Removals are counted in n_swept (statedump); this says how the
     * judging went (posix-sweep-race.t reads it). */
    vl_log(xl, VL_LOG_INFO, "handle sweep done: %lu handles examined, "
           "%lu judged again later (parent not resolvable), %lu fresh "
           "handles put back, %zu left undecided%s", sw.n_seen,
           sw.n_deferrals, sw.n_put_back, sw.n_deferred + sw.n_dropped,
           sw.is_slow ? " (fault point sweep-slow)" : "");
    vl_free(sw.deferred);
    return rc;
}


/* Removes the queued handles, a batch at a time; before that, the sweep
 * if the last stop was not clean. Held by the fault point. */
static void *
posix_janitor_main(void *arg)
{
    vl_xlator_t *xl = arg;
    struct posix_janitor *j = &posix_priv(xl)->janitor;
    struct posix_janitor_item it;
    struct timespec ts;

    if (j->is_held) {
        pthread_mutex_lock(&j->lock);
        while (!j->is_stopping)
            pthread_cond_wait(&j->cond, &j->lock);
        pthread_mutex_unlock(&j->lock);
        return NULL;
    }
    /* Creates skip mkdirat of the handle directories known to exist. */
    posix_handle_dirs_prime(xl);
    if (j->is_sweep_wanted) {
        int rc = posix_janitor_sweep(xl);

        pthread_mutex_lock(&j->lock);
        j->is_swept = rc == 0;
        pthread_mutex_unlock(&j->lock);
        if (j->n_swept > 0 || rc != 0)
            vl_log(xl, rc == 0 ? VL_LOG_INFO : VL_LOG_WARNING,
                   "handle sweep: %lu orphan handles removed%s%s",
                   j->n_swept,
                   rc == 0          ? ""
                   : rc == -EAGAIN ? ", some directory handles left "
                                     "undecided: the next start sweeps "
                                     "again"
                                   : ", failed: ",
                   rc == 0 || rc == -EAGAIN ? "" : strerror(-rc));
        /* Heal records of objects deleted just before the stop. */
        unsigned long n_index = posix_index_sweep(xl);

        if (n_index > 0)
            vl_log(xl, VL_LOG_INFO, "heal index sweep: %lu records of "
                   "objects that are gone removed", n_index);
    }
    pthread_mutex_lock(&j->lock);
    for (;;) {
        while (j->n == 0 && !j->is_stopping) {
            j->is_idle = true;
            pthread_cond_broadcast(&j->idle_cond);
            pthread_cond_wait(&j->cond, &j->lock);
        }
        j->is_idle = false;
        if (j->n == 0)
            break; /* stopping, drained */
        if (!j->is_stopping && j->n < POSIX_JANITOR_CAP / 2
            && !j->is_flushing) {
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += POSIX_JANITOR_BATCH_MS * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&j->cond, &j->lock, &ts);
        }
        /* remove_lock before lock (the order of posix_janitor_claim),
         * held from taking an item to its removal: a claim either drops
         * the item or waits until it is done. */
        while (j->n > 0) {
            pthread_mutex_unlock(&j->lock);
            pthread_mutex_lock(&j->remove_lock);
            pthread_mutex_lock(&j->lock);
            if (j->n == 0) { /* a claim took the last one */
                pthread_mutex_unlock(&j->remove_lock);
                break;
            }
            it = j->ring[j->head];
            j->head = (j->head + 1) % POSIX_JANITOR_CAP;
            j->n--;
            pthread_mutex_unlock(&j->lock);
            if (it.fd >= 0)
                close(it.fd); /* frees the removed directory's inode */
            posix_janitor_remove_locked(xl, &it.gfid, it.ino, NULL);
            pthread_mutex_unlock(&j->remove_lock);
            pthread_mutex_lock(&j->lock);
            if (it.fd >= 0)
                j->n_fds--;
            j->n_removed++;
        }
    }
    j->is_idle = true;
    pthread_cond_broadcast(&j->idle_cond);
    pthread_mutex_unlock(&j->lock);
    return NULL;
}


void
posix_janitor_flush(vl_xlator_t *xl)
{
    struct posix_janitor *j = &posix_priv(xl)->janitor;

    if (!j->is_running || j->is_held)
        return;
    pthread_mutex_lock(&j->lock);
    j->is_flushing = true;
    pthread_cond_signal(&j->cond);
    while (!(j->is_idle && j->n == 0))
        pthread_cond_wait(&j->idle_cond, &j->lock);
    j->is_flushing = false;
    pthread_mutex_unlock(&j->lock);
}


int
posix_janitor_start(vl_xlator_t *xl)
{
    struct posix_priv *priv = posix_priv(xl);
    struct posix_janitor *j = &priv->janitor;
    const char *fault = getenv("MORTAR_POSIX_FAULT");
    int rc;

    j->ring = vl_calloc(xl, POSIX_JANITOR_CAP, sizeof(*j->ring),
                        POSIX_MT_JANITOR);
    if (j->ring == NULL)
        return -ENOMEM;
    pthread_mutex_init(&j->lock, NULL);
    pthread_mutex_init(&j->remove_lock, NULL);
    pthread_cond_init(&j->cond, NULL);
    pthread_cond_init(&j->idle_cond, NULL);
    j->is_held = fault != NULL && strcmp(fault, "janitor-hold") == 0;
    if (j->is_held)
        vl_log(xl, VL_LOG_WARNING, "fault point janitor-hold: deleted "
               "files' handles are not removed");
    if (fault != NULL && strcmp(fault, "sweep-slow") == 0)
        vl_log(xl, VL_LOG_WARNING, "fault point sweep-slow: the sweep "
               "waits 1 ms per handle and 3 ms per parent chain");
    /* A clean stop drained the queue and left the marker: no sweep. */
    j->is_sweep_wanted = unlinkat(priv->root_fd, POSIX_JANITOR_CLEAN, 0) != 0;
    rc = -pthread_create(&j->thread, NULL, posix_janitor_main, xl);
    if (rc != 0) {
        vl_log(xl, VL_LOG_WARNING, "janitor thread: %s: handles are "
               "removed by unlink itself", strerror(-rc));
        return 0;
    }
    j->is_running = true;
    return 0;
}


void
posix_janitor_stop(vl_xlator_t *xl)
{
    struct posix_priv *priv = posix_priv(xl);
    struct posix_janitor *j = &priv->janitor;
    bool is_clean;
    int fd;

    if (j->ring == NULL)
        return;
    if (j->is_running) {
        pthread_mutex_lock(&j->lock);
        j->is_stopping = true;
        pthread_cond_signal(&j->cond);
        pthread_mutex_unlock(&j->lock);
        pthread_join(j->thread, NULL);
        j->is_running = false;
    }
    /* Drained, and no orphans of an earlier crash left unswept: the next
     * start may skip the sweep. */
    is_clean = !j->is_held && j->n == 0
               && (!j->is_sweep_wanted || j->is_swept);
    if (is_clean) {
        fd = openat(priv->root_fd, POSIX_JANITOR_CLEAN,
                    O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0)
            close(fd);
    }
    pthread_cond_destroy(&j->idle_cond);
    pthread_cond_destroy(&j->cond);
    pthread_mutex_destroy(&j->remove_lock);
    pthread_mutex_destroy(&j->lock);
    vl_free(j->ring);
    j->ring = NULL;
}


void
posix_janitor_dump(vl_xlator_t *xl, FILE *out)
{
    struct posix_janitor *j = &posix_priv(xl)->janitor;

    if (j->ring == NULL)
        return;
    pthread_mutex_lock(&j->lock);
    fprintf(out, "janitor_queued_now=%u\n", j->n);
    fprintf(out, "janitor_fds_now=%u\n", j->n_fds);
    fprintf(out, "janitor_queued=%lu\n", j->n_queued);
    fprintf(out, "janitor_removed=%lu\n", j->n_removed);
    fprintf(out, "janitor_swept=%lu\n", j->n_swept);
    fprintf(out, "janitor_put_back=%lu\n", j->n_put_back);
    fprintf(out, "janitor_held=%d\n", j->is_held);
    pthread_mutex_unlock(&j->lock);
}
