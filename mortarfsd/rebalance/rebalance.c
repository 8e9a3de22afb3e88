/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebalance: mortarfsd --rebalance. Crawls the volume through the graph's
 * cluster/distribute and puts every file on its hashed subvolume
 * (doc/rebalance.md).
 *
 * Crawl: depth-first from the root, subdirectories in strcmp order of
 * their names (fsd_rebal_path_cmp's order, which the cursor relies on).
 * For each directory: setxattr mortar.dht.fix-layout through distribute;
 * list it on every subvolume (readdirplus on each protocol/client), so
 * that link files, markers and stale copies are seen where they are;
 * unless --fix-layout, hand every name to the worker pool (--throttle
 * workers, each running fsd_rebal_file) and wait for all of them; if
 * none failed or was abandoned, setxattr mortar.dht.commit-layout; then
 * the directory is the new cursor. A resumed run (state file running or
 * stopped) skips the work of directories at or before its cursor but
 * still walks into them.
 * Hard links: the fix-layout pass also records the names of hard-linked
 * inodes by GFID (rebalance-hlgroup.c); the per-name pass leaves those
 * names to the group pass after the crawl (rebalance-hardlink.c), which
 * moves each inode with all its names, listing the tree again (up to
 * RB_HL_ROUNDS rounds) for groups whose source had names not seen;
 * up to --throttle groups move at once (threads of the pass).
 * Threads: the main thread serves SIGTERM/SIGINT (sigtimedwait) and
 * writes the state file every second; one crawler thread; the workers.
 * run.lock guards the state counters and the job queue of the current
 * directory; stop is atomic.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rebalance-migrate.h"
#include "xlators/cluster/distribute/dist.h"

#define RB_DOMAIN "rebalance"
#define RB_FIX_LAYOUT "mortar.dht.fix-layout"
#define RB_COMMIT_LAYOUT "mortar.dht.commit-layout"

struct rb_run {
    const struct fsd_rebal_conf *conf; /* borrowed */
    vl_graph_t *graph;                 /* borrowed */
    struct fsd_rebal_io io;            /* the subvolumes, stop */
    atomic_bool stop;                  /* SIGTERM/SIGINT seen */
    atomic_bool is_crawl_done;         /* the crawler has finished */
    pthread_mutex_t lock;              /* guards the fields below */
    pthread_cond_t cond;               /* jobs queued / all jobs done */
    struct fsd_rebal_state st;         /* counters, cursor, error */
    char resume[FSD_REBAL_CURSOR_MAX]; /* cursor this run started from */
    vl_inode_t *qdir;                  /* directory of the queued jobs */
    struct fsd_rb_job *jobs;               /* borrowed from the crawler */
    size_t n_jobs;
    size_t next_job;                   /* first job not taken */
    size_t n_jobs_done;
    bool is_dir_incomplete;            /* a job failed or was abandoned */
    bool is_exit;                      /* workers must return */
    bool has_failed;                   /* this run had a failure */
    size_t n_verify_left;              /* crawler only: files the final
                                          check found on bricks being
                                          removed */
    char verify_first[256];            /* the first of them */
    bool is_prepass;                   /* crawler only: fixing layouts
                                          before any file moves */
    bool is_collect;                   /* crawler only: listing again for
                                          names of hard-linked inodes */
    const char *qpath;                 /* path of qdir (logs) */
    struct fsd_rb_hl_table *hl;        /* owned; hard-linked inodes */
    struct fsd_rb_hl_table *hl_want;   /* owned; the groups a rescan looks
                                          for (NULL: all) */
    size_t hl_rescan;                  /* crawler only: groups of this
                                          round needing a rescan */
    pthread_t main_thread;             /* woken (SIGUSR2) when done */
    useconds_t test_delay_us;          /* MORTAR_REBAL_DELAY_MS: tests */
};


static int64_t
rb_now(void)
{
    return (int64_t)time(NULL);
}


/* Records a failure (why) in the state; with is_file, counts it. */
static void
rb_fail(struct rb_run *run, bool is_file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
rb_fail(struct rb_run *run, bool is_file, const char *fmt, ...)
{
    char msg[sizeof(run->st.error)];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    vl_glog(RB_DOMAIN, VL_LOG_ERROR, "%s", msg);
    pthread_mutex_lock(&run->lock);
    snprintf(run->st.error, sizeof(run->st.error), "%s", msg);
    if (is_file)
        run->st.failed_files++;
    run->has_failed = true;
    pthread_mutex_unlock(&run->lock);
}


/* Is the job a name of a hard-linked inode? Those move with all their
 * names after the crawl (rebalance-hardlink.c); until then the name's
 * hashed subvolume must lead to the data. A hard link the fix-layout
 * pass did not see joins the table here. */
static bool
rb_is_hardlinked(struct rb_run *run, vl_inode_t *dir, struct fsd_rb_job *job)
{
    bool is_group = false;
    bool is_new = false;

    for (size_t i = 0; run->hl != NULL && i < run->io.n_subs; i++) {
        const struct fsd_rebal_ent *e = &job->ents[i];

        if (e->kind != FSD_RK_DATA && e->kind != FSD_RK_MARKER)
            continue;
        if (fsd_rb_hl_has(run->hl, &e->iatt.gfid))
            is_group = true;
        else if (e->kind == FSD_RK_DATA && e->iatt.nlink > 1)
            is_new = true;
    }
    if (is_new && !is_group
        && fsd_rb_hl_collect(run->hl, NULL, dir, run->qpath, job->name,
                             job->ents) == 0)
        is_group = true;
    if (is_group)
        fsd_rb_hl_reach(&run->io, dir, job->name, job->ents);
    return is_group;
}


/* A special file with more than one name (doc/rebalance.md, "Hard
 * links": never moved)? Its names hash apart while distribute's pathinfo
 * answers for the inode, so the per-name pass must not judge it (it
 * would take the data's subvolume for the name's and remove the name's
 * link file): only its link file on the name's hashed subvolume. *out:
 * FSD_RO_SKIPPED when the name's hashed subvolume is not the object's,
 * else FSD_RO_IN_PLACE. */
static bool
rb_is_hl_special(struct rb_run *run, vl_inode_t *dir, struct fsd_rb_job *job,
                 enum fsd_rebal_outcome *out, char *why, size_t why_len)
{
    for (size_t i = 0; i < run->io.n_subs; i++) {
        const struct fsd_rebal_ent *e = &job->ents[i];

        if (e->kind == FSD_RK_OTHER && e->iatt.nlink > 1) {
            *out = FSD_RO_IN_PLACE;
            if (fsd_rb_hl_reach(&run->io, dir, job->name, job->ents)) {
                snprintf(why, why_len, "'%s' on %s: skipped, hard-linked",
                         job->name, run->io.subs[i]->name);
                *out = FSD_RO_SKIPPED;
            }
            return true;
        }
    }
    return false;
}


/* Tests only: MORTAR_REBAL_DELAY_MS=N (1-10000) makes each worker wait N
 * ms before each name, and a --fix-layout run (no names) before each
 * directory, so that a test can catch a run in the middle whatever the
 * machine's speed (the state file is written once a second). */
static useconds_t
rb_test_delay_us(void)
{
    const char *s = getenv("MORTAR_REBAL_DELAY_MS");
    char *end = NULL;
    long ms;

    if (s == NULL || *s == '\0')
        return 0;
    ms = strtol(s, &end, 10);
    if (*end != '\0' || ms < 1 || ms > 10000) {
        vl_glog(RB_DOMAIN, VL_LOG_WARNING, "MORTAR_REBAL_DELAY_MS=%s "
                "ignored (1-10000)", s);
        return 0;
    }
    return (useconds_t)ms * 1000;
}


/* Has the job data on a subvolume being removed? */
static bool
rb_job_is_removed(struct rb_run *run, const struct fsd_rb_job *job)
{
    for (size_t i = 0; i < run->io.n_subs; i++)
        if ((job->ents[i].kind == FSD_RK_DATA
             || job->ents[i].kind == FSD_RK_OTHER)
            && dist_is_decommissioned(run->io.top, (unsigned)i))
            return true;
    return false;
}


static void *
rb_worker(void *arg)
{
    struct rb_run *run = arg;

    pthread_mutex_lock(&run->lock);
    for (;;) {
        struct fsd_rb_job *job;
        vl_inode_t *dir;
        enum fsd_rebal_outcome out;
        uint64_t bytes = 0;
        uint64_t seen = 0;
        char why[sizeof(run->st.error)] = "";

        while (!run->is_exit && run->next_job >= run->n_jobs)
            pthread_cond_wait(&run->cond, &run->lock);
        if (run->is_exit)
            break;
        job = &run->jobs[run->next_job++];
        dir = run->qdir;
        pthread_mutex_unlock(&run->lock);

        for (size_t i = 0; i < run->io.n_subs; i++)
            if (job->ents[i].kind == FSD_RK_DATA)
                seen = job->ents[i].iatt.size;
        if (run->test_delay_us > 0 && !atomic_load(&run->stop))
            usleep(run->test_delay_us);
        if (atomic_load(&run->stop))
            out = FSD_RO_STOPPED;
        else if (rb_is_hl_special(run, dir, job, &out, why, sizeof(why)))
            ; /* never moved */
        else if (rb_is_hardlinked(run, dir, job)) {
            out = FSD_RO_IN_PLACE; /* moved by the group pass */
            snprintf(why, sizeof(why), "'%s' is hard-linked: it moves with "
                     "its other names after the crawl", job->name);
        }
        else
            out = fsd_rebal_file(&run->io, dir, job->name, job->ents,
                                 &bytes, why, sizeof(why));
        if (out == FSD_RO_IN_PLACE && rb_job_is_removed(run, job))
            vl_glog(RB_DOMAIN, VL_LOG_INFO, "'%s' stays on a brick being "
                    "removed: %s", job->name, why[0] != '\0' ? why
                    : "it is where it hashes");
        if (out == FSD_RO_FAILED)
            rb_fail(run, true, "%s", why[0] != '\0' ? why : job->name);
        else if (out == FSD_RO_SKIPPED)
            vl_glog(RB_DOMAIN, VL_LOG_INFO, "%s", why[0] != '\0' ? why
                                                                 : job->name);

        pthread_mutex_lock(&run->lock);
        if (out != FSD_RO_STOPPED) {
            run->st.scanned_files++;
            run->st.scanned_bytes += seen;
        }
        if (out == FSD_RO_MOVED) {
            run->st.moved_files++;
            run->st.moved_bytes += bytes;
        } else if (out == FSD_RO_SKIPPED) {
            run->st.skipped_files++;
        } else if (out == FSD_RO_FAILED || out == FSD_RO_STOPPED) {
            run->is_dir_incomplete = true;
        }
        if (++run->n_jobs_done == run->n_jobs)
            pthread_cond_broadcast(&run->cond);
    }
    pthread_mutex_unlock(&run->lock);
    return NULL;
}


static int
rb_call(vl_xlator_t *xl, vl_fop_t op, const union vl_fop_args *args,
        struct vl_reply *reply)
{
    struct vl_caller caller = {.pid = VL_CALLER_PID_INTERNAL};
    struct vl_reply tmp = {0};
    int rc;

    rc = vl_sync_call(xl, op, args, &caller, reply != NULL ? reply : &tmp);
    vl_reply_clear(&tmp);
    return rc;
}


static int
rb_dir_setxattr(struct rb_run *run, vl_inode_t *dir, const char *key)
{
    union vl_fop_args a = {0};

    a.setxattr.loc.inode = dir;
    a.setxattr.name = key;
    a.setxattr.value = "1";
    a.setxattr.size = 1;
    return rb_call(run->io.top, VL_FOP_SETXATTR, &a, NULL);
}


/* Lists dir everywhere (rebalance-list.c); a failure is recorded. */
static int
rb_list(struct rb_run *run, vl_inode_t *dir, struct fsd_rb_job **jobs,
        size_t *n_jobs, char ***subdirs, size_t *n_subdirs)
{
    char why[sizeof(run->st.error)] = "";
    char left_why[sizeof(run->st.error)] = "";
    size_t n_left = 0;
    int rc = fsd_rb_list(&run->io, dir, jobs, n_jobs, subdirs, n_subdirs,
                         &n_left, left_why, sizeof(left_why), why,
                         sizeof(why));

    /* Each entry left unexamined is a failed file: the run ends
     * "completed" with failures, which a remove-brick commit refuses. */
    for (size_t i = 0; i < n_left; i++)
        rb_fail(run, true, "%s", left_why);
    if (rc != 0)
        rb_fail(run, false, "%s", why[0] != '\0' ? why : strerror(-rc));
    return rc;
}


/* Hands the jobs of dir to the workers and waits until all are done;
 * true if every one succeeded (nothing failed or abandoned). */
static bool
rb_run_jobs(struct rb_run *run, vl_inode_t *dir, const char *path,
            struct fsd_rb_job *jobs, size_t n_jobs)
{
    bool is_complete;

    pthread_mutex_lock(&run->lock);
    run->qdir = dir;
    run->qpath = path;
    run->jobs = jobs;
    run->n_jobs = n_jobs;
    run->next_job = 0;
    run->n_jobs_done = 0;
    run->is_dir_incomplete = false;
    pthread_cond_broadcast(&run->cond);
    while (run->n_jobs_done < run->n_jobs)
        pthread_cond_wait(&run->cond, &run->lock);
    is_complete = !run->is_dir_incomplete;
    run->qdir = NULL;
    run->jobs = NULL;
    run->n_jobs = run->next_job = run->n_jobs_done = 0;
    pthread_mutex_unlock(&run->lock);
    return is_complete;
}


/* The linked inode of name in dir through distribute; NULL on error. */
static vl_inode_t *
rb_lookup_dir(struct rb_run *run, vl_inode_t *dir, const char *name,
              const char *path)
{
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    vl_inode_t *fresh = vl_inode_new(dir->table);
    vl_inode_t *linked = NULL;
    int rc;

    if (fresh == NULL) {
        rb_fail(run, false, "%s: out of memory", path);
        return NULL;
    }
    a.lookup.loc.parent = dir;
    a.lookup.loc.name = name;
    a.lookup.loc.inode = fresh;
    rc = rb_call(run->io.top, VL_FOP_LOOKUP, &a, &r);
    if (rc == 0 && !S_ISDIR(r.iatt.mode))
        rc = -ENOTDIR;
    if (rc == 0) {
        linked = vl_inode_link(fresh, &r.iatt);
        if (linked == NULL)
            rc = -ENOMEM;
    }
    if (rc == -ENOENT)
        vl_glog(RB_DOMAIN, VL_LOG_INFO, "%s: removed meanwhile", path);
    else if (rc != 0)
        rb_fail(run, false, "lookup of directory %s: %s", path,
                strerror(-rc));
    vl_reply_clear(&r);
    vl_inode_unref(fresh);
    return linked;
}


static bool
rb_is_fix_only(const struct rb_run *run)
{
    return run->conf->is_fix_layout || run->is_prepass || run->is_collect;
}


/* Clients trust a cached layout for a while (doc/distribute.md: 1 s,
 * DIST_LAYOUT_TRUST_MS): one fetched before our fix-layout may still be
 * COMMITTED, so a miss on its old hashed subvolume would be final for
 * them, and they still create names where it says. Files therefore move
 * only once every directory's new (uncommitted) layout is older than
 * that: a first pass fixes every layout, then we wait this long (the
 * trust, and half a second for a reply that was on its way when the fix
 * landed). A directory whose ranges the second pass changes again (made
 * by a client after the first pass) waits as long on its own before it
 * is listed: a name created after the listing by the old layout would be
 * unreachable once the layout is committed. */
#define RB_LAYOUT_SETTLE_MS 1500


static void
rb_settle(struct rb_run *run)
{
    for (int ms = 0; ms < RB_LAYOUT_SETTLE_MS && !atomic_load(&run->stop);
         ms += 100)
        usleep(100 * 1000);
}


/* The ranges of dir's layout through distribute (fsd_rb_layout_ranges),
 * malloc'd, or NULL when it cannot be read. */
static char *
rb_layout_ranges(struct rb_run *run, vl_inode_t *dir)
{
    struct vl_reply r = {0};
    char *out = NULL;
    size_t need;

    if (fsd_rb_getxattr(run->io.top, dir, "mortar.dht.layout", &r) == 0
        && r.xattr != NULL && r.count > 0) {
        need = fsd_rb_layout_ranges(r.xattr, (size_t)r.count, NULL, 0);
        out = malloc(need + 1);
        if (out != NULL)
            fsd_rb_layout_ranges(r.xattr, (size_t)r.count, out, need + 1);
    }
    vl_reply_clear(&r);
    return out;
}


/* fix-layout of dir; in the pass that moves files, waits for clients'
 * cached layouts to age when it changed the ranges. */
static int
rb_fix_layout(struct rb_run *run, vl_inode_t *dir, const char *path)
{
    bool is_moving = !rb_is_fix_only(run);
    char *before = is_moving ? rb_layout_ranges(run, dir) : NULL;
    char *after = NULL;
    int rc;

    rc = rb_dir_setxattr(run, dir, RB_FIX_LAYOUT);
    if (rc == 0 && is_moving) {
        after = rb_layout_ranges(run, dir);
        if (before == NULL || after == NULL || strcmp(before, after) != 0) {
            vl_glog("rebalance", VL_LOG_INFO, "%s: layout refitted during "
                    "the run, waiting %d ms for clients to see it", path,
                    RB_LAYOUT_SETTLE_MS);
            rb_settle(run);
        }
    }
    free(before);
    free(after);
    return rc;
}


/* One directory, then its subdirectories. */
static void
rb_dir(struct rb_run *run, vl_inode_t *dir, const char *path)
{
    bool is_skipped = fsd_rebal_cursor_skip(path, run->resume);
    bool is_complete = true;
    struct fsd_rb_job *jobs = NULL;
    char **subdirs = NULL;
    char **paths = NULL;
    vl_inode_t **inodes = NULL;
    size_t n_jobs = 0;
    size_t n_subdirs = 0;
    int rc;

    if (run->conf->is_fix_layout && !is_skipped && run->test_delay_us > 0)
        usleep(run->test_delay_us);
    if (atomic_load(&run->stop))
        return;
    if (!is_skipped && !run->is_collect) {
        rc = rb_fix_layout(run, dir, path);
        if (rc == -ESTALE || rc == -ENOENT)
            return; /* removed by a client since its parent's listing */
        if (rc != 0) {
            rb_fail(run, false, "fix-layout of %s: %s", path, strerror(-rc));
            is_complete = false;
        }
    }
    if (rb_list(run, dir, &jobs, &n_jobs, &subdirs, &n_subdirs) != 0)
        return;
    for (size_t i = 0; run->hl != NULL && (run->is_prepass || run->is_collect)
                       && i < n_jobs; i++)
        if (fsd_rb_hl_collect(run->hl, run->hl_want, dir, path, jobs[i].name,
                              jobs[i].ents) != 0)
            rb_fail(run, false, "%s: out of memory", path);
    if (!is_skipped && is_complete && !rb_is_fix_only(run))
        is_complete = rb_run_jobs(run, dir, path, jobs, n_jobs);
    fsd_rb_jobs_free(jobs, n_jobs);

    /* The subdirectories are looked up (so distribute creates them on
     * new subvolumes) before the layout is committed: with a committed
     * layout a miss on the hashed subvolume is final. */
    paths = calloc(n_subdirs + 1, sizeof(*paths));
    inodes = calloc(n_subdirs + 1, sizeof(*inodes));
    if (paths == NULL || inodes == NULL) {
        rb_fail(run, false, "%s: out of memory", path);
        is_complete = false;
        n_subdirs = 0;
    }
    for (size_t i = 0; i < n_subdirs && !atomic_load(&run->stop); i++) {
        if (asprintf(&paths[i], "%s/%s", strcmp(path, "/") == 0 ? ""
                                                                 : path,
                     subdirs[i]) < 0) {
            paths[i] = NULL;
            is_complete = false;
            continue;
        }
        if (strlen(paths[i]) >= FSD_REBAL_CURSOR_MAX) {
            rb_fail(run, false, "%s: path too long for the cursor",
                    paths[i]);
            is_complete = false;
            continue;
        }
        inodes[i] = rb_lookup_dir(run, dir, subdirs[i], paths[i]);
        if (inodes[i] == NULL)
            is_complete = false;
    }
    if (!is_skipped && is_complete && !rb_is_fix_only(run)
        && !atomic_load(&run->stop)) {
        rc = rb_dir_setxattr(run, dir, RB_COMMIT_LAYOUT);
        if (rc != 0) {
            rb_fail(run, false, "commit-layout of %s: %s", path,
                    strerror(-rc));
            is_complete = false;
        }
    }
    if (!is_skipped && !run->is_prepass && !run->is_collect
        && !atomic_load(&run->stop)) {
        pthread_mutex_lock(&run->lock);
        run->st.scanned_dirs++;
        /* A directory with failures is not redone by a resumed run
         * either: the error and counters report it. */
        snprintf(run->st.cursor, sizeof(run->st.cursor), "%s", path);
        pthread_mutex_unlock(&run->lock);
    }

    for (size_t i = 0; i < n_subdirs; i++) {
        if (inodes[i] != NULL && !atomic_load(&run->stop))
            rb_dir(run, inodes[i], paths[i]);
        vl_inode_unref(inodes[i]);
        free(paths[i]);
    }
    for (size_t i = 0; subdirs != NULL && subdirs[i] != NULL; i++)
        free(subdirs[i]);
    free(subdirs);
    free(paths);
    free(inodes);
}


/* Rounds of the group pass: a round whose groups had names on their
 * source the listing missed (a client's new hard link) lists the volume
 * again for them. */
#define RB_HL_ROUNDS 3


/* One group of the pass (only the wanted ones in a rescan round). */
static int
rb_hl_one(struct fsd_rb_hl_group *g, void *arg)
{
    struct rb_run *run = arg;
    enum fsd_rebal_outcome out;
    uint64_t bytes = 0;
    char why[sizeof(run->st.error)] = "";

    if (atomic_load(&run->stop))
        return -EINTR;
    if (run->hl_want != NULL && !fsd_rb_hl_wants(run->hl_want, &g->gfid))
        return 0;
    out = fsd_rb_hl_group(&run->io, g, &bytes, why, sizeof(why));
    if (out == FSD_RO_FAILED)
        rb_fail(run, true, "%s", why[0] != '\0' ? why : "a hard link");
    else if (out == FSD_RO_SKIPPED)
        vl_glog(RB_DOMAIN, VL_LOG_INFO, "%s", why);
    pthread_mutex_lock(&run->lock);
    if (out == FSD_RO_MOVED) {
        run->st.moved_files++;
        run->st.moved_bytes += bytes;
    } else if (out == FSD_RO_SKIPPED) {
        run->st.skipped_files++;
    }
    if (g->needs_rescan && out != FSD_RO_FAILED && out != FSD_RO_SKIPPED)
        run->hl_rescan++;
    pthread_mutex_unlock(&run->lock);
    return 0;
}


/* After the last round: a group still missing names stays put. */
static int
rb_hl_left(struct fsd_rb_hl_group *g, void *arg)
{
    struct rb_run *run = arg;

    if (!g->needs_rescan
        || (run->hl_want != NULL && !fsd_rb_hl_wants(run->hl_want, &g->gfid)))
        return 0;
    vl_glog(RB_DOMAIN, VL_LOG_INFO, "'%s/%s': skipped, hard-linked with "
            "names that were not found", g->names[0].path, g->names[0].name);
    pthread_mutex_lock(&run->lock);
    run->st.skipped_files++;
    pthread_mutex_unlock(&run->lock);
    return 0;
}


/* Moves the hard-linked inodes found by the listings, with all names. */
static void
rb_hl_pass(struct rb_run *run, vl_inode_t *root)
{
    for (int round = 0; !atomic_load(&run->stop); round++) {
        struct fsd_rb_hl_table *next;
        unsigned n;

        run->hl_rescan = 0;
        vl_glog(RB_DOMAIN, VL_LOG_INFO, "hard links: %zu inodes (round %d)",
                run->hl->n_groups, round + 1);
        /* As many groups at once as --throttle says, as the per-name
         * pass's workers. Groups are disjoint (one GFID, its names), each
         * keeps its own census; counters and failures go under run.lock. */
        n = fsd_rb_hl_each_par(run->hl, run->conf->n_workers, rb_hl_one,
                               run);
        vl_glog(RB_DOMAIN, VL_LOG_INFO, "hard links: %zu inodes, %u at "
                "once", run->hl->n_groups, n);
        if (run->hl_rescan == 0 || atomic_load(&run->stop))
            break;
        if (round == RB_HL_ROUNDS - 1) {
            fsd_rb_hl_each(run->hl, rb_hl_left, run);
            break;
        }
        next = fsd_rb_hl_new(run->io.n_subs);
        if (next == NULL) {
            rb_fail(run, false, "out of memory");
            break;
        }
        fsd_rb_hl_free(run->hl_want);
        run->hl_want = run->hl; /* its needs_rescan say what to look for */
        run->hl = next;
        run->is_collect = true;
        rb_dir(run, root, "/");
        run->is_collect = false;
        fsd_rb_hl_finish_collect(run->hl, run->hl_want);
    }
}


/* A remove-brick run's last check: what is still on a subvolume being
 * removed would be lost by the commit, whatever the crawl decided for it
 * (a lookup that failed on the way, a name it never saw). Lists every
 * directory on those subvolumes only; each file still there (data, a
 * symlink or a device; not a link file or a marker) is a failed file, so
 * the run ends with failures and the commit refuses. */
static void
rb_verify_removed_dir(struct rb_run *run, const struct fsd_rebal_io *vio,
                      vl_inode_t *dir, const char *path)
{
    char why[sizeof(run->st.error)] = "";
    char left_why[sizeof(run->st.error)] = "";
    struct fsd_rb_job *jobs = NULL;
    char **subdirs = NULL;
    size_t n_jobs = 0, n_subdirs = 0, n_left = 0;
    const char *sep = strcmp(path, "/") == 0 ? "" : "/";
    int rc;

    if (atomic_load(&run->stop))
        return;
    rc = fsd_rb_list(vio, dir, &jobs, &n_jobs, &subdirs, &n_subdirs,
                     &n_left, left_why, sizeof(left_why), why, sizeof(why));
    if (rc != 0) {
        rb_fail(run, false, "check of %s on the bricks being removed: %s",
                path, why[0] != '\0' ? why : strerror(-rc));
        return;
    }
    for (size_t i = 0; i < n_left; i++)
        rb_fail(run, true, "%s", left_why);
    for (size_t i = 0; i < n_jobs; i++)
        for (size_t k = 0; k < vio->n_subs; k++)
            if (jobs[i].ents[k].kind == FSD_RK_DATA
                || jobs[i].ents[k].kind == FSD_RK_OTHER) {
                if (run->n_verify_left++ == 0)
                    snprintf(run->verify_first, sizeof(run->verify_first),
                             "%s%s%s is still on %s", path, sep,
                             jobs[i].name, vio->subs[k]->name);
            }
    fsd_rb_jobs_free(jobs, n_jobs);
    for (size_t i = 0; i < n_subdirs && !atomic_load(&run->stop); i++) {
        char *sub = NULL;
        vl_inode_t *inode;

        if (asprintf(&sub, "%s%s%s", path, sep, subdirs[i]) < 0) {
            rb_fail(run, false, "%s: out of memory", path);
            break;
        }
        inode = rb_lookup_dir(run, dir, subdirs[i], sub);
        if (inode != NULL) {
            rb_verify_removed_dir(run, vio, inode, sub);
            vl_inode_unref(inode);
        }
        free(sub);
    }
    for (size_t i = 0; subdirs != NULL && subdirs[i] != NULL; i++)
        free(subdirs[i]);
    free(subdirs);
}


static void
rb_verify_removed(struct rb_run *run, vl_inode_t *root)
{
    vl_xlator_t **subs = calloc(run->io.n_subs, sizeof(*subs));
    struct fsd_rebal_io vio = run->io;
    uint64_t known = 0;
    size_t n = 0;

    if (subs == NULL) {
        rb_fail(run, false, "check of the bricks being removed: %s",
                strerror(ENOMEM));
        return;
    }
    for (size_t i = 0; i < run->io.n_subs; i++)
        if (dist_is_decommissioned(run->io.top, (unsigned)i))
            subs[n++] = run->io.subs[i];
    if (n > 0) {
        vio.subs = subs;
        vio.n_subs = n;
        vio.is_strict = true;
        pthread_mutex_lock(&run->lock);
        known = run->st.skipped_files + run->st.failed_files;
        pthread_mutex_unlock(&run->lock);
        rb_verify_removed_dir(run, &vio, root, "/");
    }
    free(subs);
    /* A file the run skipped (no room, hard links) or failed to move is
     * still there by design and already counted; the commit refuses
     * while any is. The check counts only what is there beyond them:
     * a file the crawl never decided on. */
    if (run->n_verify_left > known) {
        size_t extra = run->n_verify_left - known;

        if (known == 0 && extra == 1)
            rb_fail(run, true, "%s, which is being removed",
                    run->verify_first);
        else
            rb_fail(run, true, "%zu files are still on the bricks being "
                    "removed, %zu more than the run skipped or failed "
                    "(one: %s)", run->n_verify_left, extra,
                    run->verify_first);
        pthread_mutex_lock(&run->lock);
        run->st.failed_files += extra - 1;
        pthread_mutex_unlock(&run->lock);
    }
}


static void *
rb_crawler(void *arg)
{
    struct rb_run *run = arg;
    vl_inode_t *root = vl_inode_table_root(run->graph->itable);
    union vl_fop_args a = {0};
    struct vl_reply r = {0};
    int rc;

    a.lookup.loc.inode = root;
    rc = rb_call(run->io.top, VL_FOP_LOOKUP, &a, &r);
    vl_reply_clear(&r);
    if (rc != 0) {
        rb_fail(run, false, "lookup of the root: %s", strerror(-rc));
    } else if (run->conf->is_fix_layout) {
        rb_dir(run, root, "/");
    } else {
        run->is_prepass = true;
        rb_dir(run, root, "/");
        run->is_prepass = false;
        /* Before any name is handed to the workers: a marker-only
         * "group" (a one-name file's crashed migration) is theirs. */
        if (run->hl != NULL)
            fsd_rb_hl_finish_collect(run->hl, NULL);
        rb_settle(run);
        rb_dir(run, root, "/");
        if (run->hl != NULL && !atomic_load(&run->stop))
            rb_hl_pass(run, root);
        if (!atomic_load(&run->stop)) {
            /* Test hook (MORTAR_REBAL_FREEZE_PAUSE="/@verify:MS"): a
             * test puts a file on a brick being removed meanwhile. */
            fsd_rb_test_pause("/", "verify");
            rb_verify_removed(run, root);
        }
    }
    vl_inode_unref(root);
    atomic_store(&run->is_crawl_done, true);
    /* Wakes the main thread's sigtimedwait (the signal is blocked
     * everywhere and only ever taken there). */
    pthread_kill(run->main_thread, SIGUSR2);
    return NULL;
}


/* Sum of used bytes of the subvolumes' file systems (each counted once),
 * the estimate of what the crawl will look at. */
static uint64_t
rb_total_bytes(struct rb_run *run)
{
    /* One per subvolume (distribute takes up to 256): a fixed array
     * would stop remembering file systems and count later ones twice. */
    unsigned long *fsids = calloc(run->io.n_subs, sizeof(*fsids));
    size_t n_fsids = 0;
    uint64_t total = 0;
    vl_inode_t *root;

    if (fsids == NULL)
        return 0; /* only an estimate: none */
    root = vl_inode_table_root(run->graph->itable);

    for (size_t i = 0; i < run->io.n_subs; i++) {
        union vl_fop_args a = {0};
        struct vl_reply r = {0};
        bool is_dup = false;

        a.statfs.loc.inode = root;
        if (rb_call(run->io.subs[i], VL_FOP_STATFS, &a, &r) == 0) {
            for (size_t j = 0; j < n_fsids; j++)
                is_dup |= fsids[j] == r.statvfs.f_fsid;
            if (!is_dup)
                fsids[n_fsids++] = r.statvfs.f_fsid;
            if (!is_dup)
                total += (uint64_t)(r.statvfs.f_blocks - r.statvfs.f_bfree)
                         * r.statvfs.f_frsize;
        }
        vl_reply_clear(&r);
    }
    vl_inode_unref(root);
    free(fsids);
    return total;
}


/* Writes the state file from a snapshot of the counters. */
static void
rb_state_flush(struct rb_run *run)
{
    struct fsd_rebal_state *snap = malloc(sizeof(*snap));
    int rc;

    if (snap == NULL)
        return;
    pthread_mutex_lock(&run->lock);
    run->st.updated = rb_now();
    fsd_rebal_eta_update(&run->st, run->st.updated);
    *snap = run->st;
    pthread_mutex_unlock(&run->lock);
    rc = fsd_rebal_state_write(run->conf->state_path, snap);
    if (rc != 0)
        vl_glog(RB_DOMAIN, VL_LOG_WARNING, "writing %s: %s",
                run->conf->state_path, strerror(-rc));
    free(snap);
}


/* Starts from the state file when it says running or stopped. */
static void
rb_state_init(struct rb_run *run)
{
    int rc = fsd_rebal_state_read(run->conf->state_path, &run->st);
    const char **names = calloc(run->io.n_subs + 1, sizeof(*names));
    char subvols[FSD_REBAL_SUBVOLS_MAX] = "";

    for (size_t i = 0; names != NULL && i < run->io.n_subs; i++)
        names[i] = run->io.subs[i]->name;
    if (names != NULL)
        fsd_rebal_subvols_id(names, run->io.n_subs, subvols);
    free(names);
    /* Without memory for the id, resuming is not safe: start afresh. */
    if (rc == 0 && subvols[0] != '\0'
        && fsd_rebal_may_resume(&run->st, run->conf->is_fix_layout,
                                subvols)) {
        vl_glog(RB_DOMAIN, VL_LOG_INFO, "resuming after '%s' (%" PRIu64
                " files moved so far)", run->st.cursor, run->st.moved_files);
        snprintf(run->resume, sizeof(run->resume), "%s", run->st.cursor);
    } else {
        if (rc != 0 && rc != -ENOENT)
            vl_glog(RB_DOMAIN, VL_LOG_WARNING, "%s: %s; starting afresh",
                    run->conf->state_path, strerror(-rc));
        else if (rc == 0 && fsd_rebal_may_resume(&run->st, true, NULL)
                 && !fsd_rebal_may_resume(&run->st, true, subvols))
            vl_glog(RB_DOMAIN, VL_LOG_INFO, "the unfinished run before "
                    "this one was over other subvolumes (a brick was added "
                    "or removed since): starting afresh");
        else if (rc == 0 && fsd_rebal_may_resume(&run->st, true, NULL))
            vl_glog(RB_DOMAIN, VL_LOG_INFO, "the unfinished run before "
                    "this one was a fix-layout (it moved no file): "
                    "starting afresh");
        memset(&run->st, 0, sizeof(run->st));
        run->st.started = rb_now();
        run->st.total_bytes = rb_total_bytes(run);
    }
    run->st.status = FSD_REBAL_RUNNING;
    /* What this run's cursor will cover from now on. */
    run->st.is_fix_layout = run->conf->is_fix_layout;
    snprintf(run->st.subvols, sizeof(run->st.subvols), "%s", subvols);
    run->st.pid = (long)getpid();
    run->st.error[0] = '\0';
}


/* Waits for the crawler, serving signals and flushing the state. */
static void
rb_serve(struct rb_run *run, const sigset_t *sigs)
{
    struct timespec tick = {.tv_sec = 1};

    while (!atomic_load(&run->is_crawl_done)) {
        int sig = sigtimedwait(sigs, NULL, &tick);

        if ((sig == SIGTERM || sig == SIGINT) && !atomic_load(&run->stop)) {
            vl_glog(RB_DOMAIN, VL_LOG_INFO, "signal %d: stopping after the "
                    "files in flight", sig);
            atomic_store(&run->stop, true);
        }
        rb_state_flush(run);
    }
}


/* Logs why the run cannot start and tells whoever waits for it. */
static void __attribute__((format(printf, 2, 3)))
rb_refuse(const struct fsd_rebal_conf *conf, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    vl_glog(RB_DOMAIN, VL_LOG_ERROR, "%s", msg);
    if (conf->ready != NULL)
        fsd_report_ready(conf->ready, -1, msg);
}


int
fsd_rebalance_run(vl_graph_t *graph, const struct fsd_rebal_conf *conf,
                  const sigset_t *sigs)
{
    struct rb_run *run = calloc(1, sizeof(*run));
    pthread_t *workers = NULL;
    size_t n_workers = 0;
    pthread_t crawler;
    bool has_crawler = false;
    bool *held = NULL;          /* where the migration lock is held */
    uint64_t lock_owner = 0;
    vl_inode_t *root = NULL;
    size_t busy = 0;
    int status = FSD_EXIT_FAIL;

    if (run == NULL)
        return FSD_EXIT_FAIL;
    run->conf = conf;
    run->graph = graph;
    run->main_thread = pthread_self();
    run->io.top = graph->top;
    /* Client-side performance translators (write-behind) sit above
     * distribute in the volfile clients get; migrate below them. */
    while (strcmp(run->io.top->cls->type, "cluster/distribute") != 0
           && run->io.top->n_children == 1
           && strncmp(run->io.top->cls->type, "performance/", 12) == 0)
        run->io.top = run->io.top->children[0];
    run->io.subs = run->io.top->children;
    run->io.n_subs = run->io.top->n_children;
    run->io.stop = &run->stop;
    run->test_delay_us = rb_test_delay_us();
    run->hl = fsd_rb_hl_new(run->io.n_subs);
    pthread_mutex_init(&run->lock, NULL);
    pthread_cond_init(&run->cond, NULL);
    if (strcmp(run->io.top->cls->type, "cluster/distribute") != 0) {
        rb_refuse(conf, "the volfile's top is %s, not cluster/distribute: "
                  "nothing to rebalance", run->io.top->cls->type);
        goto out;
    }
    /* Before the state file is touched: a process that may not run
     * leaves the running one's state alone. */
    held = calloc(run->io.n_subs, sizeof(*held));
    root = vl_inode_table_root(graph->itable);
    if (held == NULL) {
        rb_refuse(conf, "out of memory");
        goto out;
    }
    lock_owner = fsd_rb_owner();
    if (fsd_rb_volume_lock(&run->io, root, lock_owner, held, &busy) != 0) {
        rb_refuse(conf, "another rebalance or remove-brick migration of "
                  "this volume is running (it holds the migration lock on "
                  "%s); not starting a second one", run->io.subs[busy]->name);
        goto out;
    }
    rb_state_init(run);
    rb_state_flush(run);
    /* The state file names us now: whoever started us may say so. */
    fsd_report_ready(conf->ready, 0, NULL);
    vl_glog(RB_DOMAIN, VL_LOG_INFO, "%s over %zu subvolumes, %u in "
            "parallel", conf->is_fix_layout ? "fix-layout" : "rebalance",
            run->io.n_subs, conf->n_workers);

    workers = calloc(conf->n_workers, sizeof(*workers));
    if (workers == NULL) {
        rb_fail(run, false, "out of memory");
        goto finish;
    }
    for (; n_workers < conf->n_workers; n_workers++)
        if (pthread_create(&workers[n_workers], NULL, rb_worker, run) != 0)
            break;
    if (n_workers == 0
        || pthread_create(&crawler, NULL, rb_crawler, run) != 0) {
        rb_fail(run, false, "cannot start threads");
        goto finish;
    }
    has_crawler = true;
    rb_serve(run, sigs);

finish:
    if (has_crawler)
        pthread_join(crawler, NULL);
    pthread_mutex_lock(&run->lock);
    run->is_exit = true;
    pthread_cond_broadcast(&run->cond);
    pthread_mutex_unlock(&run->lock);
    for (size_t i = 0; i < n_workers; i++)
        pthread_join(workers[i], NULL);
    free(workers);
    if (atomic_load(&run->stop))
        run->st.status = FSD_REBAL_STOPPED;
    else if (run->has_failed)
        run->st.status = FSD_REBAL_FAILED;
    else
        run->st.status = FSD_REBAL_COMPLETED;
    rb_state_flush(run);
    vl_glog(RB_DOMAIN, VL_LOG_INFO, "%s: %" PRIu64 " files moved (%" PRIu64
            " bytes), %" PRIu64 " scanned, %" PRIu64 " failed, %" PRIu64
            " skipped", fsd_rebal_status_name(run->st.status),
            run->st.moved_files, run->st.moved_bytes, run->st.scanned_files,
            run->st.failed_files, run->st.skipped_files);
    status = run->st.status == FSD_REBAL_FAILED ? FSD_EXIT_FAIL
                                                : FSD_EXIT_OK;
    fsd_rb_volume_unlock(&run->io, root, lock_owner, held);
out:
    vl_inode_unref(root);
    free(held);
    fsd_rb_hl_free(run->hl);
    fsd_rb_hl_free(run->hl_want);
    pthread_cond_destroy(&run->cond);
    pthread_mutex_destroy(&run->lock);
    free(run);
    return status;
}
