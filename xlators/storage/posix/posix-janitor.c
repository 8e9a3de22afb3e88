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
 * such a handle. Directory symlinks left by a crash are not swept.
 *
 * Fault point (tests): MORTAR_POSIX_FAULT=janitor-hold in the
 * environment keeps the thread from removing anything (nor sweeping).
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
    return unlinkat(priv->handles_fd, hrel, 0) == 0;
}


int
posix_janitor_enqueue(vl_xlator_t *xl, const vl_gfid_t *gfid, ino_t ino)
{
    struct posix_janitor *j = &posix_priv(xl)->janitor;
    int rc = 0;

    if (!j->is_running)
        return -ENOTCONN;
    /* Open here: the handle must be parked at once (synchronous path). */
    if (ino != 0 && posix_inode_open_count(xl, gfid, false) > 0)
        return -EBUSY;
    pthread_mutex_lock(&j->lock);
    if (j->n >= POSIX_JANITOR_CAP || j->is_stopping) {
        rc = -EAGAIN; /* full: the caller removes it itself */
    } else {
        struct posix_janitor_item *it =
            &j->ring[(j->head + j->n) % POSIX_JANITOR_CAP];

        it->gfid = *gfid;
        it->ino = ino;
        /* Wake the thread for the first item of a batch, and when the
         * queue fills up; otherwise it is already collecting. */
        if (j->n++ == 0 || j->n == POSIX_JANITOR_CAP / 2)
            pthread_cond_signal(&j->cond);
        j->n_queued++;
    }
    pthread_mutex_unlock(&j->lock);
    return rc;
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

        if (!vl_gfid_equal(&it->gfid, gfid))
            j->ring[(j->head + keep++) % POSIX_JANITOR_CAP] = *it;
    }
    j->n = keep;
    pthread_mutex_unlock(&j->lock);
}


void
posix_janitor_unclaim(vl_xlator_t *xl)
{
    pthread_mutex_unlock(&posix_priv(xl)->janitor.remove_lock);
}


/* Sweeps one handle directory xx/yy (fd owned, closed here). */
static void
posix_janitor_sweep_dir(vl_xlator_t *xl, int fd, const struct timespec *before)
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
        /* Directory handles are symlinks, temporaries have longer
         * names: only regular files named by a GFID. */
        if ((d->d_type != DT_REG && d->d_type != DT_UNKNOWN)
            || strlen(d->d_name) != VL_GFID_STR_LEN - 1
            || vl_gfid_parse(d->d_name, &gfid) != 0)
            continue;
        if (fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
            || !S_ISREG(st.st_mode) || st.st_nlink != 1
            || !posix_janitor_is_older(&st, before))
            continue;
        pthread_mutex_lock(&j->remove_lock);
        if (posix_janitor_remove_locked(xl, &gfid, st.st_ino, before)) {
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
    struct timespec before;

    /* Handles whose last name went after this (live unlinks, an open
     * file's handle on its way to .mortar/unlink) are not the sweep's. */
    clock_gettime(CLOCK_REALTIME, &before);
    if (before.tv_nsec >= POSIX_JANITOR_SWEEP_MARGIN_NS) {
        before.tv_nsec -= POSIX_JANITOR_SWEEP_MARGIN_NS;
    } else {
        before.tv_sec--;
        before.tv_nsec += 1000000000L - POSIX_JANITOR_SWEEP_MARGIN_NS;
    }
    return posix_handle_walk_dirs(xl, posix_janitor_sweep_one, &before);
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
                   j->n_swept, rc == 0 ? "" : ", failed: ",
                   rc == 0 ? "" : strerror(-rc));
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
            posix_janitor_remove_locked(xl, &it.gfid, it.ino, NULL);
            pthread_mutex_unlock(&j->remove_lock);
            pthread_mutex_lock(&j->lock);
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
    fprintf(out, "janitor_queued=%lu\n", j->n_queued);
    fprintf(out, "janitor_removed=%lu\n", j->n_removed);
    fprintf(out, "janitor_swept=%lu\n", j->n_swept);
    fprintf(out, "janitor_held=%d\n", j->is_held);
    pthread_mutex_unlock(&j->lock);
}
