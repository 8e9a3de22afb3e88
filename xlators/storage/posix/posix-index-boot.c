/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix-index-boot: the heal index without an fsync per entry, and its
 * rebuild after a machine crash, which makes that safe.
 *
 * The index must never miss an object whose trusted.mortar.rep.* counter
 * is nonzero on disk: posix-xattrop.c makes the entry before it writes
 * the counter. While the machine stays up, both live in one page cache:
 * a brick killed at any instant leaves them as they were written, in
 * that order. Only a crash of the machine (power, kernel) can lose an
 * entry and keep a counter written after it. An fsync of the index
 * directory per entry guarded against that, at 12-15% of a brick's CPU
 * and a synchronous disk write inside every replicated change (perf of a
 * brick in replica 3 creates and mkdirs). So entries are not fsynced, and
 * the brick tells a machine crash from its own by the kernel's boot id:
 *
 *   .mortar/index/boot   "clean" after a clean stop (syncfs, then this
 *                        written durably), else the boot id
 *                        (/proc/sys/kernel/random/boot_id) of the boot
 *                        the brick last ran in with a whole index.
 *
 * At start: "clean", missing (a new brick, or one of an older version,
 * which fsynced every entry) or this boot's id: the index is whole.
 * Another boot's id: the machine went down under a running brick, and
 * entries made since its last writeback may be gone while counters
 * written after them are not. Then a thread scans every object (the
 * handle tree, and the root): it makes the entry of each object with a
 * nonzero counter and marks full the entry records of each directory
 * whose pending entry counter is nonzero (their names may be gone: heal
 * then lists the whole directory). The brick serves meanwhile: the
 * rebuild takes each object's xattrop stripe lock, so it and an xattrop
 * of the same object do not interleave, and an entry made twice is one
 * entry. Only when the scan has finished does the marker take this
 * boot's id: a scan cut short, by a kill or another crash, runs again at
 * the next start. It costs a listxattr per object, once per machine
 * crash; GlusterFS neither fsyncs its index nor rebuilds it.
 *
 * A boot id that cannot be read (no /proc): every entry is fsynced as it
 * is made (priv->is_index_synced) and there is no rebuild.
 *
 * Test hook: MORTAR_BOOT_ID_FILE in the environment names the file the
 * boot id is read from (a test "reboots" by changing it).
 *
 * Threads: the rebuild thread; start and stop from init and fini.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix.h"

#define POSIX_INDEX_BOOT "boot"
#define POSIX_INDEX_BOOT_TMP "boot.tmp"
#define POSIX_INDEX_BOOT_CLEAN "clean"
#define POSIX_BOOT_ID_FILE "/proc/sys/kernel/random/boot_id"


/* Reads the first line of the file name in dirfd (AT_FDCWD: a path)
 * into out (size bytes, the newline dropped); 0 or -errno (-EINVAL:
 * empty or longer than out). */
static int
posix_boot_line_read(int dirfd, const char *name, char *out, size_t size)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n;

    if (fd < 0)
        return -errno;
    n = read(fd, out, size);
    close(fd);
    if (n < 0)
        return -errno;
    if (n == 0 || (size_t)n == size)
        return -EINVAL;
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return out[0] == '\0' ? -EINVAL : 0;
}


/* Replaces the marker with value, durably (write, fsync, rename, fsync
 * of index/); 0 or -errno. */
static int
posix_index_boot_write(struct posix_priv *priv, const char *value)
{
    size_t len = strlen(value);
    char line[POSIX_BOOT_ID_MAX + 1];
    int fd, rc = 0;

    snprintf(line, sizeof(line), "%s\n", value);
    fd = openat(priv->index_fd, POSIX_INDEX_BOOT_TMP,
                O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    if (write(fd, line, len + 1) != (ssize_t)(len + 1))
        rc = errno != 0 ? -errno : -EIO;
    else if (fsync(fd) < 0)
        rc = -errno;
    close(fd);
    if (rc == 0
        && (renameat(priv->index_fd, POSIX_INDEX_BOOT_TMP, priv->index_fd,
                     POSIX_INDEX_BOOT)
                < 0
            || fsync(priv->index_fd) < 0))
        rc = -errno;
    return rc;
}


/* The rebuild of one object: its handle hrel (in handles_fd), or for a
 * directory its path through its resolved fd. */
static void
posix_index_boot_one(vl_xlator_t *xl, const vl_gfid_t *gfid, bool is_dir)
{
    struct posix_priv *priv = posix_priv(xl);
    struct posix_index_boot *b = &priv->index_boot;
    char hrel[POSIX_HANDLE_REL_LEN], path[POSIX_PROC_PATH_LEN];
    char str[VL_GFID_STR_LEN];
    int fd = -1, rc;

    if (is_dir) {
        /* The handle is a symlink by parent and name; "." ends the path
         * in the directory itself (lgetxattr follows no last link). */
        if (vl_gfid_is_root(gfid))
            fd = openat(priv->root_fd, ".", O_PATH | O_CLOEXEC);
        else if (posix_dir_resolve(xl, gfid, &fd) != 0)
            fd = -1;
        if (fd < 0)
            return; /* gone since the listing, or not resolvable: no
                       counter is readable, nor healable, through it */
        posix_proc_path(fd, ".", path);
    } else {
        posix_handle_rel(gfid, hrel);
        posix_proc_path(priv->handles_fd, hrel, path);
    }
    atomic_fetch_add(&b->n_seen, 1);
    rc = posix_xattrop_reindex(xl, gfid, path, is_dir);
    if (fd >= 0)
        close(fd);
    if (rc > 0) {
        atomic_fetch_add(&b->n_made, (unsigned long)rc);
    } else if (rc < 0 && rc != -ENOENT && rc != -ESTALE) {
        vl_log(xl, VL_LOG_WARNING, "heal index rebuild: %s: %s",
               vl_gfid_to_str(gfid, str), strerror(-rc));
    }
}


/* posix_handle_walk_dirs callback: every handle in xx/yy. */
static void
posix_index_boot_dir(vl_xlator_t *xl, unsigned index, int parent_fd,
                     const char *name, void *arg)
{
    struct posix_index_boot *b = &posix_priv(xl)->index_boot;
    struct dirent *d;
    vl_gfid_t gfid;
    DIR *dir;
    int fd;

    (void)index;
    (void)arg;
    if (atomic_load(&b->is_stopping))
        return;
    fd = openat(parent_fd, name,
                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    dir = fdopendir(fd);
    if (dir == NULL) {
        close(fd);
        return;
    }
    while ((d = readdir(dir)) != NULL && !atomic_load(&b->is_stopping)) {
        bool is_dir = false;

        /* Temporaries have longer names. */
        if (strlen(d->d_name) != VL_GFID_STR_LEN - 1
            || vl_gfid_parse(d->d_name, &gfid) != 0)
            continue;
        if ((d->d_type == DT_LNK || d->d_type == DT_UNKNOWN)
            && posix_handle_is_dir(xl, &gfid, &is_dir) != 0)
            continue;
        posix_index_boot_one(xl, &gfid, is_dir);
    }
    closedir(dir);
}


static void *
posix_index_boot_main(void *arg)
{
    vl_xlator_t *xl = arg;
    struct posix_priv *priv = posix_priv(xl);
    struct posix_index_boot *b = &priv->index_boot;
    int rc;

    posix_index_boot_one(xl, &vl_gfid_root, true);
    rc = posix_handle_walk_dirs(xl, posix_index_boot_dir, NULL);
    if (rc == 0 && !atomic_load(&b->is_stopping))
        rc = posix_index_boot_write(priv, b->boot_id);
    if (atomic_load(&b->is_stopping)) {
        vl_log(xl, VL_LOG_WARNING, "heal index rebuild stopped after %lu "
               "objects: the next start scans again",
               atomic_load(&b->n_seen));
        return NULL;
    }
    if (rc != 0) {
        vl_log(xl, VL_LOG_ERROR, "heal index rebuild: %s: the next start "
               "scans again", strerror(-rc));
        return NULL;
    }
    atomic_store(&b->is_done, true);
    vl_log(xl, VL_LOG_INFO, "heal index rebuild done: %lu objects "
           "examined, %lu records made", atomic_load(&b->n_seen),
           atomic_load(&b->n_made));
    return NULL;
}


void
posix_index_boot_start(vl_xlator_t *xl)
{
    struct posix_priv *priv = posix_priv(xl);
    struct posix_index_boot *b = &priv->index_boot;
    const char *id_file = getenv("MORTAR_BOOT_ID_FILE");
    char marker[POSIX_BOOT_ID_MAX];
    int rc;

    rc = posix_boot_line_read(AT_FDCWD, id_file != NULL ? id_file
                                                        : POSIX_BOOT_ID_FILE,
                              b->boot_id, sizeof(b->boot_id));
    if (rc != 0 || strcmp(b->boot_id, POSIX_INDEX_BOOT_CLEAN) == 0) {
        vl_log(xl, VL_LOG_WARNING, "no boot id (%s): heal index entries "
               "are fsynced as they are made",
               rc != 0 ? strerror(-rc) : "reads \"clean\"");
        priv->is_index_synced = true;
        atomic_store(&b->is_done, true);
        return;
    }
    rc = posix_boot_line_read(priv->index_fd, POSIX_INDEX_BOOT, marker,
                              sizeof(marker));
    if (rc == -ENOENT || (rc == 0 && strcmp(marker, b->boot_id) == 0)
        || (rc == 0 && strcmp(marker, POSIX_INDEX_BOOT_CLEAN) == 0)) {
        atomic_store(&b->is_done, true);
        if (rc == 0 && strcmp(marker, b->boot_id) == 0)
            return;
        /* From here on entries are not synced: the marker must say so
         * before the first one is made. */
        rc = posix_index_boot_write(priv, b->boot_id);
        if (rc != 0) {
            vl_log(xl, VL_LOG_WARNING, "heal index marker: %s: entries "
                   "are fsynced as they are made", strerror(-rc));
            priv->is_index_synced = true;
        }
        return;
    }
    /* Another boot's id (or a marker that cannot be read): the machine
     * went down under the brick. */
    vl_log(xl, VL_LOG_WARNING, "the machine went down while this brick "
           "ran (boot %s, now %s): rebuilding the heal index from every "
           "object's records, while serving", rc == 0 ? marker : "unknown",
           b->boot_id);
    rc = -pthread_create(&b->thread, NULL, posix_index_boot_main, xl);
    if (rc != 0) {
        /* Synchronously then: serving from an index that may miss
         * records would hide copies that need healing. */
        vl_log(xl, VL_LOG_WARNING, "heal index rebuild thread: %s: "
               "rebuilding before serving", strerror(-rc));
        posix_index_boot_main(xl);
        return;
    }
    b->is_running = true;
}


void
posix_index_boot_stop(vl_xlator_t *xl)
{
    struct posix_priv *priv = posix_priv(xl);
    struct posix_index_boot *b = &priv->index_boot;
    int rc;

    if (b->is_running) {
        atomic_store(&b->is_stopping, true);
        pthread_join(b->thread, NULL);
        b->is_running = false;
    }
    /* A cut rebuild leaves the old boot's id: the next start scans. */
    if (!atomic_load(&b->is_done) || priv->index_fd < 0)
        return;
    rc = syncfs(priv->index_fd) < 0 ? -errno : 0;
    if (rc == 0)
        rc = posix_index_boot_write(priv, POSIX_INDEX_BOOT_CLEAN);
    if (rc != 0)
        vl_log(xl, VL_LOG_WARNING, "heal index not marked clean (%s): a "
               "start after a reboot rebuilds it", strerror(-rc));
}


void
posix_index_boot_dump(vl_xlator_t *xl, FILE *out)
{
    struct posix_priv *priv = posix_priv(xl);
    struct posix_index_boot *b = &priv->index_boot;

    fprintf(out, "index_synced=%d\n", priv->is_index_synced);
    fprintf(out, "index_whole=%d\n", atomic_load(&b->is_done));
    fprintf(out, "index_rebuild_seen=%lu\n", atomic_load(&b->n_seen));
    fprintf(out, "index_rebuild_made=%lu\n", atomic_load(&b->n_made));
}
