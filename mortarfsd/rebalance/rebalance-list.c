/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebalance-list: lists one directory on every subvolume (readdirplus
 * through each protocol/client, or each replica set's cluster/replicate)
 * and groups the entries by name, so the
 * rebalance sees what is really where: data files, link files, markers
 * and stale copies (doc/rebalance.md, "The crawl", step 2). A name that
 * is only old link files (on some subvolumes, nothing else anywhere) is
 * removed here, before any worker runs (the file it shares an inode
 * with may be migrating in parallel): a RENAME_EXCHANGE temporary a
 * crash left, or a dangling link file. cluster/replicate gives an
 * entry's attributes only when it knows that copy good (this process
 * has not looked the object up yet): such an entry is looked up by
 * name on that subvolume.
 * Intercepts nothing; no state kept between calls.
 * Threads: the crawler thread.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rebalance-migrate.h"

#define RB_DOMAIN "rebalance"
#define RB_READDIR_SIZE (128 * 1024)
/* An entry without attributes whose lookup fails is tried again this
 * many times, this far apart, before it is counted as left behind. */
#define RB_LOOKUP_TRIES 3
#define RB_LOOKUP_RETRY_MS 200
/* RENAME_EXCHANGE's temporary link file names (dist-exchange.c). */
#define RB_XCHG_PREFIX ".mortar-xchg-"
/* Such a link file older than this (seconds, its ctime) is a leftover:
 * a live exchange renames its temporary within a round trip (and one
 * that loses it anyway only logs: the name's old link file still leads
 * to the data, doc/distribute.md). */
#define RB_XCHG_AGE_S 5
/* Any other name that is only link files, none younger than this
 * (seconds): dangling, its target holds nothing under the name. Left by
 * a client that died between a link file and the data, or by a rename
 * racing a run. Longer than any fop waits for a brick (ping-timeout),
 * so a create or rename that made the link file first has finished;
 * MORTAR_REBAL_LINK_AGE_S overrides it (tests). */
#define RB_DANGLING_AGE_S 600

/* One (name, subvolume) pair from a listing, before grouping by name. */
struct rb_seen {
    char *name;               /* owned */
    size_t sub;               /* subvolume index */
    struct fsd_rebal_ent ent; /* what it is there */
};


static int
rb_seen_cmp(const void *pa, const void *pb)
{
    const struct rb_seen *a = pa;
    const struct rb_seen *b = pb;
    int c = strcmp(a->name, b->name);

    if (c != 0)
        return c;
    return a->sub < b->sub ? -1 : a->sub > b->sub;
}


static int
rb_seen_add(struct rb_seen **arr, size_t *n, size_t *cap, const char *name,
            size_t sub, const struct vl_iatt *iatt)
{
    struct rb_seen *s;

    if (*n == *cap) {
        size_t ncap = *cap != 0 ? *cap * 2 : 256;
        struct rb_seen *na = realloc(*arr, ncap * sizeof(*na));

        if (na == NULL)
            return -ENOMEM;
        *arr = na;
        *cap = ncap;
    }
    s = &(*arr)[*n];
    s->name = strdup(name);
    if (s->name == NULL)
        return -ENOMEM;
    s->sub = sub;
    s->ent.iatt = *iatt;
    s->ent.kind = fsd_rebal_classify(iatt);
    (*n)++;
    return 0;
}


/* An entry readdirplus gave without attributes: looked up by name on
 * xl (cluster/replicate leaves them out for objects whose copies it has
 * not compared yet). 0 with out set, or -ENODATA when the object has no
 * GFID (a create in flight, a file put there by hand), or -errno. */
static int
rb_list_lookup(vl_xlator_t *xl, vl_inode_t *dir, const char *name,
               struct vl_iatt *out)
{
    vl_inode_t *inode = vl_inode_new(dir->table);
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    int rc;

    if (inode == NULL)
        return -ENOMEM;
    a.lookup.loc = (struct vl_loc){.parent = dir, .name = name,
                                   .inode = inode};
    rc = fsd_rb_call(xl, VL_FOP_LOOKUP, &a, 0, &r);
    if (rc == 0 && vl_gfid_is_null(&r.iatt.gfid))
        rc = -ENODATA;
    if (rc == 0)
        *out = r.iatt;
    vl_reply_clear(&r);
    vl_inode_unref(inode);
    return rc;
}


/* Lists dir on subvolume sub into the flat array. */
static int
rb_list_sub(const struct fsd_rebal_io *io, vl_inode_t *dir, size_t sub,
            struct rb_seen **arr, size_t *n, size_t *cap, size_t *n_left,
            char *left_why, size_t left_why_len, char *why, size_t why_len)
{
    vl_xlator_t *xl = io->subs[sub];
    vl_fd_t *fd = vl_fd_new(dir, O_RDONLY | O_DIRECTORY, (uint32_t)getpid());
    union vl_fop_args a = {0};
    int64_t off = 0;
    int rc;

    if (fd == NULL)
        return -ENOMEM;
    a.opendir.loc.inode = dir;
    a.opendir.fd = fd;
    rc = fsd_rb_call(xl, VL_FOP_OPENDIR, &a, 0, NULL);
    while (rc == 0) {
        struct vl_reply r = {0};

        memset(&a, 0, sizeof(a));
        a.readdir.fd = fd;
        a.readdir.size = RB_READDIR_SIZE;
        a.readdir.offset = (off_t)off;
        a.readdir.plus = true;
        rc = fsd_rb_call(xl, VL_FOP_READDIR, &a, 0, &r);
        vl_glog(RB_DOMAIN, VL_LOG_DEBUG, "%s: readdir at %" PRId64 ": %d, "
                "%zu entries%s", xl->name, off, rc, r.entries.n,
                r.entries.eof ? ", eof" : "");
        for (size_t i = 0; rc == 0 && i < r.entries.n; i++) {
            const struct vl_dirent *d = &r.entries.ents[i];

            off = d->off;
            if (strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0)
                continue;
            /* No attributes: replicate has not compared the copies yet
             * (looked up here), or the brick has no GFID for it (a
             * create in flight sets it just after making the name, or
             * a file put there by hand). A new file is where its name
             * hashes; a hand-made one gets its GFID at its first lookup
             * through a mount. */
            if (!d->has_iatt) {
                struct vl_iatt ia;
                int lrc = rb_list_lookup(xl, dir, d->name, &ia);

                /* A failure may be passing (a brick reconnecting, a
                 * create finishing): a few tries before giving up. */
                for (int t = 0; lrc != 0 && lrc != -ENODATA
                                && t < RB_LOOKUP_TRIES; t++) {
                    usleep(RB_LOOKUP_RETRY_MS * 1000);
                    lrc = rb_list_lookup(xl, dir, d->name, &ia);
                }
                if (lrc == 0) {
                    rc = rb_seen_add(arr, n, cap, d->name, sub, &ia);
                    continue;
                }
                if (lrc == -ENODATA && !io->is_strict) {
                    /* No GFID: a create in flight (made where its name
                     * hashes now) or a file put there by hand, which
                     * gets its GFID at its first lookup through a
                     * mount. */
                    vl_glog(RB_DOMAIN, VL_LOG_DEBUG, "%s: '%s': no GFID "
                            "yet: left alone", xl->name, d->name);
                    continue;
                }
                /* Counted, never silent: on a brick being removed this
                 * entry would be lost by the commit, which refuses while
                 * any file was left behind (mortard/cmd-brick.c). */
                (*n_left)++;
                if (lrc == -ENODATA)
                    snprintf(left_why, left_why_len, "'%s' on %s has no "
                             "GFID (not made through a mount): left where "
                             "it is", d->name, xl->name);
                else
                    snprintf(left_why, left_why_len, "'%s' on %s could not "
                             "be looked up (%s): left where it is", d->name,
                             xl->name, strerror(-lrc));
                vl_glog(RB_DOMAIN, VL_LOG_WARNING, "%s", left_why);
                continue;
            }
            rc = rb_seen_add(arr, n, cap, d->name, sub, &d->iatt);
        }
        if (rc == 0 && (r.entries.n == 0 || r.entries.eof)) {
            vl_reply_clear(&r);
            break;
        }
        vl_reply_clear(&r);
    }
    vl_fd_unref(fd);
    if (rc == -ENOENT || rc == -ESTALE)
        return 0; /* removed meanwhile: nothing in it */
    if (rc != 0)
        snprintf(why, why_len, "listing a directory on %s: %s", xl->name,
                 strerror(-rc));
    return rc;
}


/* Unlinks the leftover name on xl if it still is a link file. By name
 * with a fresh inode: the inode of its GFID in this process's table is
 * the live file's too (the leftover is a hard link of its link file),
 * and must not be taken for unlinked. */
static void
rb_link_remove(vl_xlator_t *xl, vl_inode_t *dir, const char *name)
{
    vl_inode_t *inode = vl_inode_new(dir->table);
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    int rc;

    if (inode == NULL)
        return;
    a.lookup.loc = (struct vl_loc){.parent = dir, .name = name,
                                   .inode = inode};
    rc = fsd_rb_call(xl, VL_FOP_LOOKUP, &a, 0, &r);
    if (rc == 0 && fsd_rebal_classify(&r.iatt) != FSD_RK_LINK)
        rc = -EEXIST; /* something else now: not ours */
    vl_reply_clear(&r);
    if (rc == 0) {
        memset(&a, 0, sizeof(a));
        a.unlink.loc = (struct vl_loc){.parent = dir, .name = name};
        rc = fsd_rb_call(xl, VL_FOP_UNLINK, &a, 0, NULL);
    }
    vl_inode_unref(inode);
    vl_glog(RB_DOMAIN, rc == 0 ? VL_LOG_INFO : VL_LOG_WARNING,
            "%s: removing '%s' (%s): %s", xl->name, name,
            strncmp(name, RB_XCHG_PREFIX, sizeof(RB_XCHG_PREFIX) - 1) == 0
                ? "RENAME_EXCHANGE leftover"
                : "dangling link file",
            rc == 0 ? "done" : strerror(-rc));
}


static int64_t
rb_dangling_age(void)
{
    const char *env = getenv("MORTAR_REBAL_LINK_AGE_S");
    char *end = NULL;
    long v;

    if (env == NULL || env[0] == '\0')
        return RB_DANGLING_AGE_S;
    v = strtol(env, &end, 10);
    return end != NULL && *end == '\0' && v >= 0 ? v : RB_DANGLING_AGE_S;
}


/* Removes name if it is only old link files (nothing else under it on
 * any subvolume): a RENAME_EXCHANGE leftover under a temporary name, or
 * a dangling link file. True if it was (the job is dropped, removed or
 * not: a failure is logged). */
static bool
rb_link_leftover(const struct fsd_rebal_io *io, vl_inode_t *dir,
                 const char *name, const struct fsd_rebal_ent *ents)
{
    int64_t now;
    int64_t age;
    bool is_any = false;

    /* Every listed name comes here: the kinds first, the clock and the
     * environment only for a name that is nothing but link files. */
    for (size_t i = 0; i < io->n_subs; i++) {
        if (ents[i].kind == FSD_RK_NONE)
            continue;
        if (ents[i].kind != FSD_RK_LINK)
            return false;
        is_any = true;
    }
    if (!is_any)
        return false;
    now = (int64_t)time(NULL);
    age = strncmp(name, RB_XCHG_PREFIX, sizeof(RB_XCHG_PREFIX) - 1) == 0
              ? RB_XCHG_AGE_S
              : rb_dangling_age();
    for (size_t i = 0; i < io->n_subs; i++)
        if (ents[i].kind == FSD_RK_LINK && ents[i].iatt.ctime + age >= now)
            return false;
    for (size_t i = 0; i < io->n_subs; i++)
        if (ents[i].kind == FSD_RK_LINK)
            rb_link_remove(io->subs[i], dir, name);
    return true;
}


void
fsd_rb_jobs_free(struct fsd_rb_job *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(jobs[i].name);
        free(jobs[i].ents);
    }
    free(jobs);
}


int
fsd_rb_list(const struct fsd_rebal_io *io, vl_inode_t *dir,
            struct fsd_rb_job **jobs, size_t *n_jobs, char ***subdirs,
            size_t *n_subdirs, size_t *n_left, char *left_why,
            size_t left_why_len, char *why, size_t why_len)
{
    struct rb_seen *seen = NULL;
    size_t n_seen = 0;
    size_t cap = 0;
    int rc = 0;

    *jobs = NULL;
    *n_jobs = 0;
    *subdirs = NULL;
    *n_subdirs = 0;
    *n_left = 0;
    for (size_t s = 0; rc == 0 && s < io->n_subs; s++)
        rc = rb_list_sub(io, dir, s, &seen, &n_seen, &cap, n_left, left_why,
                         left_why_len, why, why_len);
    if (rc == 0 && n_seen > 0) {
        qsort(seen, n_seen, sizeof(*seen), rb_seen_cmp);
        *jobs = calloc(n_seen, sizeof(**jobs));
        *subdirs = calloc(n_seen + 1, sizeof(**subdirs));
        if (*jobs == NULL || *subdirs == NULL)
            rc = -ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < n_seen;) {
        size_t j = i;
        bool is_dir = false;
        struct fsd_rebal_ent *ents = calloc(io->n_subs, sizeof(*ents));

        if (ents == NULL) {
            rc = -ENOMEM;
            break;
        }
        for (; j < n_seen && strcmp(seen[j].name, seen[i].name) == 0; j++) {
            ents[seen[j].sub] = seen[j].ent;
            is_dir |= seen[j].ent.kind == FSD_RK_DIR;
        }
        if (is_dir) {
            free(ents);
            (*subdirs)[(*n_subdirs)++] = seen[i].name;
            seen[i].name = NULL;
        } else if (rb_link_leftover(io, dir, seen[i].name, ents)) {
            free(ents);
        } else {
            (*jobs)[*n_jobs].name = seen[i].name;
            (*jobs)[(*n_jobs)++].ents = ents;
            seen[i].name = NULL;
        }
        i = j;
    }
    for (size_t i = 0; i < n_seen; i++)
        free(seen[i].name);
    free(seen);
    if (rc != 0) {
        fsd_rb_jobs_free(*jobs, *n_jobs);
        for (size_t i = 0; i < *n_subdirs; i++)
            free((*subdirs)[i]);
        free(*subdirs);
        *jobs = NULL;
        *subdirs = NULL;
        *n_jobs = *n_subdirs = 0;
    }
    return rc;
}
