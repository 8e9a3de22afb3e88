/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-index: what needs healing on one brick of this server.
 *
 * storage/posix keeps <brick>/.mortar/index/xattrop/<gfid> for every
 * object with a nonzero trusted.mortar.rep.* counter (doc/replicate.md,
 * "The heal index"), so reading that directory costs O(pending), never
 * a crawl. The daemon runs on the brick's server and reads it directly,
 * with the object's handle (.mortar/handles/xx/yy/<gfid>: a hard link
 * for a file, a symlink for a directory) for its type and, for a file,
 * its counters and size, for a directory its depth (the chain of handle
 * links to the root): enough to order the work, not to decide it
 * (replicate decides what to heal from every copy's records). Bricks of
 * one replica set on this server list the same objects: their jobs are
 * merged (fsd_heal_jobs_merge), since one heal heals every copy and a
 * second one would only find it clean (a lookup, a lock and the records
 * read for nothing, twice the counts).
 * Threads: pure functions of their arguments and the brick's files.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "heal.h"

#define HEAL_REC_PREFIX "trusted.mortar.rep."
#define HEAL_REC_DIRTY HEAL_REC_PREFIX "dirty"
#define HEAL_REC_LEN 12
#define HEAL_XATTR_LIST_MAX 65536


int
fsd_heal_jobs_push(struct fsd_heal_jobs *jobs, const struct fsd_heal_job *job)
{
    if (jobs->n == jobs->cap) {
        size_t cap = jobs->cap == 0 ? 64 : jobs->cap * 2;
        struct fsd_heal_job *v = realloc(jobs->v, cap * sizeof(*v));

        if (v == NULL)
            return -ENOMEM;
        jobs->v = v;
        jobs->cap = cap;
    }
    jobs->v[jobs->n++] = *job;
    return 0;
}


void
fsd_heal_jobs_clear(struct fsd_heal_jobs *jobs)
{
    free(jobs->v);
    memset(jobs, 0, sizeof(*jobs));
}


bool
fsd_heal_record_nonzero(const unsigned char *value, size_t len,
                        bool *is_data)
{
    bool any = false;

    for (size_t i = 0; i + 4 <= len && i < HEAL_REC_LEN; i += 4) {
        bool nz = value[i] | value[i + 1] | value[i + 2] | value[i + 3];

        if (nz && i == 0)
            *is_data = true;
        any = any || nz;
    }
    return any;
}


/* Reads the counters of a file's copy through its handle: how many slots
 * it blames, whether any data count is set. Best effort: an unreadable
 * list leaves the job at its defaults. */
static void
heal_job_records(const char *handle, struct fsd_heal_job *job)
{
    char *list = malloc(HEAL_XATTR_LIST_MAX);
    ssize_t n;

    if (list == NULL)
        return;
    n = llistxattr(handle, list, HEAL_XATTR_LIST_MAX);
    for (ssize_t off = 0; off < n; off += (ssize_t)strlen(list + off) + 1) {
        const char *name = list + off;
        unsigned char value[HEAL_REC_LEN];
        bool is_data = false;
        ssize_t len;

        if (strncmp(name, HEAL_REC_PREFIX, strlen(HEAL_REC_PREFIX)) != 0)
            continue;
        len = lgetxattr(handle, name, value, sizeof(value));
        if (len < 4)
            continue;
        if (!fsd_heal_record_nonzero(value, (size_t)len, &is_data))
            continue;
        if (strcmp(name, HEAL_REC_DIRTY) != 0)
            job->n_blamed++;
        job->has_data = job->has_data || is_data;
    }
    free(list);
}


/* The parent GFID a directory handle's target names:
 * "../../xx/yy/<parent-gfid>/<name>" (storage/posix's posix-handle.c). */
static int
heal_dir_parent(const char *target, vl_gfid_t *parent)
{
    char s[VL_GFID_STR_LEN];
    const char *p = target;

    if (strncmp(p, "../../", 6) != 0 || strlen(p) < 6 + 6 + 36 + 2)
        return -EINVAL;
    p += 6 + 6; /* "../../" "xx/yy/" */
    memcpy(s, p, 36);
    s[36] = '\0';
    if (p[36] != '/')
        return -EINVAL;
    return vl_gfid_parse(s, parent);
}


/* How deep the directory gfid is on the brick: the parents its handle
 * and theirs name up to the root. Best effort: an unreadable or bad link
 * ends the count there (its heal then only waits less for its parent's). */
static uint32_t
heal_dir_depth(const char *brick_path, const vl_gfid_t *gfid)
{
    vl_gfid_t g = *gfid;
    uint32_t depth = 0;

    while (!vl_gfid_is_root(&g) && depth < FSD_HEAL_DEPTH_MAX) {
        char str[VL_GFID_STR_LEN], handle[FSD_HEAL_PATH_MAX];
        char target[FSD_HEAL_PATH_MAX];
        ssize_t n;

        vl_gfid_to_str(&g, str);
        if (snprintf(handle, sizeof(handle), "%s/.mortar/handles/%.2s/%.2s/"
                     "%s", brick_path, str, str + 2, str)
            >= (int)sizeof(handle))
            break;
        n = readlink(handle, target, sizeof(target) - 1);
        if (n <= 0)
            break;
        target[n] = '\0';
        if (heal_dir_parent(target, &g) != 0)
            break;
        depth++;
    }
    return depth;
}


int
fsd_heal_index_scan(const char *brick_path, uint32_t brick,
                    struct fsd_heal_jobs *jobs)
{
    char dir[FSD_HEAL_PATH_MAX];
    struct dirent *de;
    DIR *d;
    int n = 0, rc = 0;

    if (snprintf(dir, sizeof(dir), "%s/.mortar/index/xattrop", brick_path)
        >= (int)sizeof(dir))
        return -ENAMETOOLONG;
    d = opendir(dir);
    if (d == NULL)
        return -errno;
    while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
        char handle[FSD_HEAL_PATH_MAX];
        struct fsd_heal_job job;
        struct stat st;

        memset(&job, 0, sizeof(job));
        if (vl_gfid_parse(de->d_name, &job.gfid) != 0)
            continue; /* ".", "..", a temporary name */
        job.brick = brick;
        job.bricks = 1ULL << brick;
        if (snprintf(handle, sizeof(handle), "%s/.mortar/handles/%.2s/%.2s/"
                     "%s", brick_path, de->d_name, de->d_name + 2,
                     de->d_name) >= (int)sizeof(handle))
            continue;
        if (lstat(handle, &st) != 0)
            continue; /* gone since: posix drops its entry with it */
        job.is_dir = S_ISLNK(st.st_mode);
        if (job.is_dir)
            job.depth = heal_dir_depth(brick_path, &job.gfid);
        else {
            heal_job_records(handle, &job);
            if (job.has_data && S_ISREG(st.st_mode))
                job.bytes = (uint64_t)st.st_size;
        }
        rc = fsd_heal_jobs_push(jobs, &job);
        if (rc == 0)
            n++;
    }
    if (rc == 0 && errno != 0)
        rc = -errno;
    closedir(d);
    return rc != 0 ? rc : n;
}


int
fsd_heal_job_cmp(const struct fsd_heal_job *a, const struct fsd_heal_job *b)
{
    if (a->is_dir != b->is_dir)
        return a->is_dir ? -1 : 1;
    if (a->is_dir && a->depth != b->depth)
        return a->depth < b->depth ? -1 : 1;
    if (a->n_blamed != b->n_blamed)
        return a->n_blamed > b->n_blamed ? -1 : 1;
    if (a->has_data != b->has_data)
        return a->has_data ? 1 : -1;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? -1 : 1;
    return memcmp(a->gfid.bytes, b->gfid.bytes, sizeof(a->gfid.bytes));
}


uint32_t
fsd_heal_job_stage(const struct fsd_heal_job *job)
{
    if (job->is_crawl)
        return 0; /* a crawl step ends before a directory is listed */
    return job->is_dir ? job->depth : FSD_HEAL_STAGE_LAST;
}


static int
heal_job_qcmp(const void *a, const void *b)
{
    return fsd_heal_job_cmp(a, b);
}


void
fsd_heal_jobs_sort(struct fsd_heal_jobs *jobs)
{
    if (jobs->n > 1)
        qsort(jobs->v, jobs->n, sizeof(jobs->v[0]), heal_job_qcmp);
}


static int
heal_job_set_qcmp(const void *pa, const void *pb)
{
    const struct fsd_heal_job *a = pa, *b = pb;

    if (a->set != b->set)
        return a->set < b->set ? -1 : 1;
    return memcmp(a->gfid.bytes, b->gfid.bytes, sizeof(a->gfid.bytes));
}


size_t
fsd_heal_jobs_merge(struct fsd_heal_jobs *jobs, const uint32_t *set_of)
{
    size_t out = 0;

    if (jobs->n < 2)
        return 0;
    for (size_t i = 0; i < jobs->n; i++)
        jobs->v[i].set = set_of[jobs->v[i].brick];
    qsort(jobs->v, jobs->n, sizeof(jobs->v[0]), heal_job_set_qcmp);
    for (size_t i = 0; i < jobs->n; i++) {
        struct fsd_heal_job *k = out > 0 ? &jobs->v[out - 1] : NULL;
        const struct fsd_heal_job *j = &jobs->v[i];

        if (k != NULL && k->set == j->set && !k->is_crawl && !j->is_crawl
            && vl_gfid_equal(&k->gfid, &j->gfid)) {
            k->bricks |= j->bricks;
            k->is_dir |= j->is_dir;
            if (j->depth > k->depth)
                k->depth = j->depth;
            k->has_data |= j->has_data;
            if (j->n_blamed > k->n_blamed)
                k->n_blamed = j->n_blamed;
            if (j->bytes > k->bytes)
                k->bytes = j->bytes;
            continue;
        }
        jobs->v[out++] = *j;
    }
    out = jobs->n - out;
    jobs->n -= out;
    return out;
}
