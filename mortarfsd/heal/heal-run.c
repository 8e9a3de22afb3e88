/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-run: the self-heal daemon's rounds.
 *
 * A round reads the heal index of every brick of this server
 * (heal-index.c), orders the objects (entries first, the shallower
 * first, then the ones with the fewest good copies), and hands them to
 * the worker threads stage by stage (the directories of one depth, then
 * the rest: fsd_heal_job_stage), which
 * heal each through the replicate translator its brick belongs to: a
 * nameless LOOKUP of the GFID, then a GETXATTR of FSD_HEAL_XATTR, which
 * replicate answers with how the heal went ("healed", "clean",
 * "split-brain", "pending": a copy is down). Replicate decides what to
 * heal and from where, under its locks; the daemon only decides what to
 * visit and when.
 * The next round starts at once when this one healed something and left
 * work (a heal can make more: a directory's entries), else after the
 * interval; the index is read again each time, so an object healed
 * meanwhile by a client's access is not visited.
 * Full crawl (`volume heal VOL full`): while its request file exists
 * (heal-crawl.c), each round is followed by a crawl step: up to
 * FSD_HEAL_CRAWL_BATCH objects of the walk of one brick after the
 * other, healed by the same workers with FSD_HEAL_XATTR_FULL (which
 * also merges a directory's entries across its copies). A step ends
 * before a directory is listed, so that its heal (the names it creates
 * here) is done first; index rounds run between steps, so what the
 * index lists is not starved by a long crawl. When every brick was
 * walked the request is removed (unless rewritten meanwhile: then the
 * crawl starts again). A daemon stopped mid-crawl goes on from its last
 * checkpoint (heal-checkpoint.c: written at most once a second after a
 * step's heals all ended).
 * Signals: TERM/INT stop after the heals in flight; USR2 (`volume heal
 * VOL [full]`) starts a round now (and a crawl, if one was asked for);
 * USR1 writes a statedump (replicate's heal counters are in it).
 * Threads: the main thread serves the signals (sigtimedwait) and
 * writes the progress file once a second; one round thread (rounds and
 * crawl steps; it alone touches the walk); n_threads workers. run->lock
 * guards the job list, the counters and the state.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heal.h"
#include "mortarfsd/fsd.h"
#include "vol/sync.h"

#define HEAL_DOMAIN "heal"
/* replicate's virtual key (xlators/cluster/replicate: REP_XATTR_HEAL). */
#define FSD_HEAL_XATTR "mortar.heal"
/* The same, plus a directory's entry merge (REP_XATTR_HEAL_FULL). */
#define FSD_HEAL_XATTR_FULL "mortar.heal.full"
/* Replicate's child up/down generation (REP_XATTR_CHILD_GEN). */
#define FSD_HEAL_XATTR_CHILD_GEN "mortar.heal.child-gen"
#define HEAL_ANSWER_MAX 64
/* How often an object answering "pending" may ask whether a brick came
 * or went since the round began (heal_cut_check_locked). */
#define HEAL_CUT_CHECK_MS 100
/* How often a sleeping daemon asks whether a brick came or went
 * (heal_sleep): the wait before a returned brick's heal starts. */
#define HEAL_CHILD_POLL_MS 100

struct heal_run {
    const struct fsd_heal_conf *conf;
    vl_graph_t *graph;
    vl_xlator_t *subs[FSD_HEAL_BRICKS_MAX]; /* per brick: its replicate */
    pthread_mutex_t lock;
    pthread_cond_t cond;       /* jobs handed out, a job done, exit */
    struct fsd_heal_jobs jobs; /* this round's, sorted */
    size_t next;               /* first job not handed out */
    size_t busy;               /* jobs being healed */
    uint32_t stage;            /* of the jobs being healed (all one) */
    bool is_cut;               /* the round's state changed: no more of
                                  its jobs are handed out */
    int64_t cut_checked_ms;    /* when heal_cut_check_locked last asked
                                  (CLOCK_MONOTONIC) */
    bool is_exit;              /* workers leave */
    atomic_bool stop;          /* SIGTERM/SIGINT seen */
    bool is_kicked;            /* SIGUSR2: a round now, not after the
                                  interval */
    uint64_t round_healed;     /* healed in the running round */
    struct fsd_heal_state st;  /* under lock */
    struct fsd_heal_split splits[FSD_HEAL_BRICKS_MAX]; /* per brick, this
                                  round's split-brains; under lock */
    char split_path[FSD_HEAL_PATH_MAX + 16]; /* heal-splitlist.c's file */
    struct fsd_heal_rate rate; /* main thread only */
    /* The full crawl: round thread only (its counters are in st). */
    bool is_crawling;             /* a request is being served */
    size_t crawl_brick;           /* the brick walked now */
    struct fsd_heal_crawl *crawl; /* owned; its walk, NULL between */
    char crawl_token[FSD_HEAL_TOKEN_MAX]; /* the request served */
    uint64_t crawl_waiting;       /* objects of this crawl that waited
                                     for a copy; under lock */
    char full_path[FSD_HEAL_PATH_MAX + 16]; /* heal-crawl.c's request */
    char ckpt_path[FSD_HEAL_PATH_MAX + 32]; /* heal-checkpoint.c's file */
    char *resume_at;              /* owned; the position the walk of
                                     crawl_brick starts from, or NULL */
    int64_t ckpt_written;         /* when the checkpoint was last written
                                     (CLOCK_MONOTONIC, ms) */
    uint64_t round_gen;           /* heal_child_gen when the round began;
                                     round thread only */
};


static int64_t
heal_now(void)
{
    return (int64_t)time(NULL);
}


/* The outcome of one object, counted (run->lock held). */
static void
heal_count(struct heal_run *run, const struct fsd_heal_job *job, int rc,
           const char *answer)
{
    struct fsd_heal_state *st = &run->st;
    bool is_done = true;

    if (job->is_crawl) {
        st->crawl_visited++;
        if (rc == 0 && strcmp(answer, "healed") == 0) {
            st->healed++;
            st->crawl_healed++;
        } else if (!(rc == 0 && strcmp(answer, "clean") == 0)
                   && rc != -ENOENT && rc != -ESTALE) {
            st->crawl_failed++; /* gone since it was listed: not this */
            if ((rc == 0 && strcmp(answer, "pending") == 0)
                || rc == -ENOTCONN)
                run->crawl_waiting++;
        }
        return; /* not in the index's pending counts */
    }
    if (rc == 0 && strcmp(answer, "healed") == 0) {
        st->healed++;
        run->round_healed++;
        if (job->has_data)
            st->healed_bytes += job->bytes;
    } else if (rc == 0 && strcmp(answer, "clean") == 0) {
        st->clean++;
    } else if (rc == -ENOENT || rc == -ESTALE) {
        st->clean++; /* gone since the index was read */
    } else if (rc == 0 && strcmp(answer, "split-brain") == 0) {
        st->split_brain++;
        /* Listed under every brick whose index names it. */
        for (size_t i = 0; i < run->conf->n_bricks; i++)
            if ((job->bricks & (1ULL << i))
                && fsd_heal_split_add(&run->splits[i], &job->gfid) != 0)
                vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "split-brain list: "
                        "out of memory");
        is_done = false;
    } else if ((rc == 0 && strcmp(answer, "pending") == 0)
               || rc == -ENOTCONN) {
        st->waiting++;
        /* Listed too, so status counts it once per replica set. */
        for (size_t i = 0; i < run->conf->n_bricks; i++)
            if ((job->bricks & (1ULL << i))
                && fsd_heal_split_add_waiting(&run->splits[i], &job->gfid)
                       != 0)
                vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "waiting list: out "
                        "of memory");
        is_done = false;
    } else {
        st->failed++;
        is_done = false;
    }
    if (!is_done)
        return;
    for (size_t i = 0; i < run->conf->n_bricks; i++) {
        struct fsd_heal_brick_state *b = &st->bricks[i];

        if (!(job->bricks & (1ULL << i)))
            continue;
        if (b->pending > 0)
            b->pending--;
        if (job->has_data)
            b->bytes -= b->bytes >= job->bytes ? job->bytes : b->bytes;
    }
    if (st->pending > 0)
        st->pending--;
    if (job->has_data)
        st->pending_bytes -= st->pending_bytes >= job->bytes
                             ? job->bytes : st->pending_bytes;
}


/* Heals one object through its brick's replicate: 0 with the answer in
 * answer, or -errno. */
static int
heal_one(struct heal_run *run, const struct fsd_heal_job *job,
         char *answer /* OUT, HEAL_ANSWER_MAX */)
{
    vl_xlator_t *sub = run->subs[job->brick];
    struct vl_caller caller = {.pid = VL_CALLER_PID_INTERNAL};
    union vl_fop_args a;
    struct vl_reply r = {0};
    vl_inode_t *inode;
    int rc;

    answer[0] = '\0';
    inode = vl_inode_get(run->graph->itable, &job->gfid, 0);
    if (inode == NULL)
        return -ENOMEM;
    memset(&a, 0, sizeof(a));
    a.lookup.loc.inode = inode; /* nameless: by GFID */
    rc = vl_sync_call(sub, VL_FOP_LOOKUP, &a, &caller, &r);
    vl_reply_clear(&r);
    /* Replicate answers EIO to the lookup of a split-brain; its key
     * works by GFID and says so (and lists it: heal-splitlist.c). */
    if (rc == 0 || rc == -EIO) {
        memset(&a, 0, sizeof(a));
        a.getxattr.loc.inode = inode;
        a.getxattr.name = job->is_crawl ? FSD_HEAL_XATTR_FULL
                                        : FSD_HEAL_XATTR;
        a.getxattr.size = HEAL_ANSWER_MAX - 1;
        rc = vl_sync_call(sub, VL_FOP_GETXATTR, &a, &caller, &r);
        if (rc == 0 && r.xattr != NULL) {
            size_t n = r.count > 0 && (size_t)r.count < HEAL_ANSWER_MAX
                       ? (size_t)r.count : 0;

            memcpy(answer, r.xattr, n);
            answer[n] = '\0';
        }
        vl_reply_clear(&r);
    }
    vl_inode_unref(inode);
    return rc;
}


static int64_t
heal_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


static uint64_t heal_child_gen(struct heal_run *run);


/* An object of the index answered "pending" (a copy down, or its name
 * not yet on a copy): when a brick came up or went down since the round
 * began, the rest of the round is left to the next one, which starts at
 * once (heal_sleep) from the state now. Its objects would otherwise
 * answer "pending" too, for the state they were listed in (the
 * directories healed before the brick came back did not make their
 * names on it). Asked at most every HEAL_CUT_CHECK_MS; run->lock held,
 * dropped while asking. A crawl step is never cut (its walk has moved
 * past its objects). */
static void
heal_cut_check_locked(struct heal_run *run)
{
    int64_t now = heal_mono_ms();
    uint64_t gen;

    if (run->is_cut || now - run->cut_checked_ms < HEAL_CUT_CHECK_MS)
        return;
    run->cut_checked_ms = now;
    pthread_mutex_unlock(&run->lock);
    gen = heal_child_gen(run);
    pthread_mutex_lock(&run->lock);
    if (gen != run->round_gen && !run->is_cut) {
        run->is_cut = true;
        vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "a brick came up or went down: "
                "the rest of round %" PRIu64 " is left to the next",
                run->st.rounds);
        pthread_cond_broadcast(&run->cond);
    }
}


/* Is there a job to take now (run->lock held)? Not one of a later stage
 * while a job of the stage before is being healed (heal.h,
 * fsd_heal_job_stage). */
static bool
heal_may_take_locked(const struct heal_run *run)
{
    if (run->next >= run->jobs.n || run->is_cut)
        return false;
    return run->busy == 0
           || fsd_heal_job_stage(&run->jobs.v[run->next]) == run->stage;
}


static void *
heal_worker(void *arg)
{
    struct heal_run *run = arg;

    pthread_mutex_lock(&run->lock);
    for (;;) {
        struct fsd_heal_job job;
        char answer[HEAL_ANSWER_MAX];
        char g[VL_GFID_STR_LEN];
        int rc;

        while (!run->is_exit && !heal_may_take_locked(run))
            pthread_cond_wait(&run->cond, &run->lock);
        if (run->is_exit)
            break;
        job = run->jobs.v[run->next++];
        run->stage = fsd_heal_job_stage(&job);
        run->busy++;
        pthread_mutex_unlock(&run->lock);
        rc = atomic_load(&run->stop) ? -EINTR : heal_one(run, &job, answer);
        if (rc != 0 && rc != -EINTR && rc != -ENOENT && rc != -ESTALE
            && rc != -ENOTCONN)
            vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "heal of %s on %s: %s",
                    vl_gfid_to_str(&job.gfid, g),
                    run->conf->bricks[job.brick].subvol, strerror(-rc));
        else if (rc == 0 && strcmp(answer, "split-brain") == 0)
            vl_glog(HEAL_DOMAIN, VL_LOG_ERROR, "%s on %s is in split-brain: "
                    "see `volume heal VOL info split-brain`",
                    vl_gfid_to_str(&job.gfid, g),
                    run->conf->bricks[job.brick].subvol);
        else if (job.is_crawl && rc == 0 && strcmp(answer, "healed") != 0
                 && strcmp(answer, "clean") != 0)
            vl_glog(HEAL_DOMAIN, VL_LOG_DEBUG, "full crawl: %s on %s: %s",
                    vl_gfid_to_str(&job.gfid, g),
                    run->conf->bricks[job.brick].subvol, answer);
        pthread_mutex_lock(&run->lock);
        if (rc != -EINTR)
            heal_count(run, &job, rc, answer);
        if (rc == 0 && !job.is_crawl && strcmp(answer, "pending") == 0)
            heal_cut_check_locked(run);
        run->busy--;
        pthread_cond_broadcast(&run->cond);
    }
    pthread_mutex_unlock(&run->lock);
    return NULL;
}


/* Reads every brick's index into a sorted job list and the pending
 * counts. A brick whose index cannot be read is logged and skipped. */
static int
heal_collect(struct heal_run *run, struct fsd_heal_jobs *jobs)
{
    struct fsd_heal_brick_state bs[FSD_HEAL_BRICKS_MAX];
    uint32_t set_of[FSD_HEAL_BRICKS_MAX];
    uint64_t total = 0, bytes = 0;

    memset(bs, 0, sizeof(bs));
    for (size_t i = 0; i < run->conf->n_bricks; i++) {
        size_t first = jobs->n;
        int n = fsd_heal_index_scan(run->conf->bricks[i].path, (uint32_t)i,
                                    jobs);

        if (n < 0) {
            vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "index of %s: %s",
                    run->conf->bricks[i].path, strerror(-n));
            if (n == -ENOMEM)
                return n;
            continue;
        }
        for (size_t j = first; j < jobs->n; j++)
            bs[i].bytes += jobs->v[j].bytes;
        bs[i].pending = (uint64_t)n;
    }
    /* Two bricks of a set on this server name the same objects: one
     * heal each, and the node's totals count objects, not copies. */
    for (size_t i = 0; i < run->conf->n_bricks; i++) {
        set_of[i] = (uint32_t)i;
        for (size_t k = 0; k < i; k++)
            if (strcmp(run->conf->bricks[k].subvol,
                       run->conf->bricks[i].subvol) == 0) {
                set_of[i] = set_of[k];
                break;
            }
    }
    (void)fsd_heal_jobs_merge(jobs, set_of);
    for (size_t j = 0; j < jobs->n; j++)
        bytes += jobs->v[j].bytes;
    total = jobs->n;
    fsd_heal_jobs_sort(jobs);
    pthread_mutex_lock(&run->lock);
    for (size_t i = 0; i < run->conf->n_bricks; i++) {
        run->st.bricks[i].pending = bs[i].pending;
        run->st.bricks[i].bytes = bs[i].bytes;
    }
    run->st.pending = total;
    run->st.pending_bytes = bytes;
    pthread_mutex_unlock(&run->lock);
    return 0;
}


/* Replaces the split-brain list with this round's (run->lock held). */
static void
heal_split_flush_locked(struct heal_run *run)
{
    const char *paths[FSD_HEAL_BRICKS_MAX];
    int rc;

    for (size_t i = 0; i < run->conf->n_bricks; i++)
        paths[i] = run->conf->bricks[i].path;
    rc = fsd_heal_split_write(run->split_path, paths, run->splits,
                              run->conf->n_bricks);
    if (rc != 0)
        vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "split-brain list %s: %s",
                run->split_path, strerror(-rc));
}


/* Hands jobs (taken) to the workers and waits until every one is done
 * (run->lock held). */
static void
heal_dispatch_locked(struct heal_run *run, struct fsd_heal_jobs *jobs)
{
    fsd_heal_jobs_clear(&run->jobs);
    run->jobs = *jobs;
    memset(jobs, 0, sizeof(*jobs));
    run->next = 0;
    run->is_cut = false;
    pthread_cond_broadcast(&run->cond);
    while ((run->next < run->jobs.n && !run->is_cut) || run->busy > 0)
        pthread_cond_wait(&run->cond, &run->lock);
}


/* Takes up the crawl of the request being served where a daemon before
 * this one left it, if its checkpoint is for this request and these
 * bricks. Whether it did; a checkpoint of anything else is removed. */
static bool
heal_crawl_resume(struct heal_run *run)
{
    struct fsd_heal_checkpoint cp;
    int rc = fsd_heal_checkpoint_read(run->ckpt_path, &cp);

    if (rc == -ENOENT)
        return false;
    if (rc != 0 || strcmp(cp.token, run->crawl_token) != 0
        || cp.brick >= run->conf->n_bricks
        || strcmp(cp.brick_path, run->conf->bricks[cp.brick].path) != 0) {
        if (rc != 0)
            vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "full crawl checkpoint "
                    "%s: %s (crawling from the start)", run->ckpt_path,
                    strerror(-rc));
        fsd_heal_checkpoint_clear(&cp);
        (void)fsd_heal_checkpoint_remove(run->ckpt_path);
        return false;
    }
    pthread_mutex_lock(&run->lock);
    run->st.crawl_visited = cp.visited;
    run->st.crawl_healed = cp.healed;
    run->st.crawl_failed = cp.failed;
    run->crawl_waiting = cp.waiting;
    pthread_mutex_unlock(&run->lock);
    run->crawl_brick = (size_t)cp.brick;
    run->resume_at = cp.position; /* taken */
    cp.position = NULL;
    vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "full crawl resumed: brick %s at "
            "'%s', %" PRIu64 " objects visited before", cp.brick_path,
            run->resume_at != NULL ? run->resume_at : "(not begun)",
            cp.visited);
    fsd_heal_checkpoint_clear(&cp);
    return true;
}


/* Writes where the crawl is, at most once a second; only after a step
 * whose heals all ended (so everything before the position is done). */
static void
heal_crawl_checkpoint(struct heal_run *run)
{
    struct fsd_heal_checkpoint cp;
    struct timespec ts;
    int64_t now;
    int rc;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (!run->is_crawling || atomic_load(&run->stop)
        || run->crawl_brick >= run->conf->n_bricks
        || now - run->ckpt_written < 1000)
        return;
    memset(&cp, 0, sizeof(cp));
    if (run->crawl != NULL) {
        cp.position = fsd_heal_crawl_position(run->crawl);
        if (cp.position == NULL)
            return; /* nowhere to go on from (yet): keep the last one */
    } else if (run->resume_at != NULL) {
        return; /* the walk to resume is not made yet */
    }
    snprintf(cp.token, sizeof(cp.token), "%s", run->crawl_token);
    cp.brick = run->crawl_brick;
    snprintf(cp.brick_path, sizeof(cp.brick_path), "%s",
             run->conf->bricks[run->crawl_brick].path);
    pthread_mutex_lock(&run->lock);
    cp.visited = run->st.crawl_visited;
    cp.healed = run->st.crawl_healed;
    cp.failed = run->st.crawl_failed;
    cp.waiting = run->crawl_waiting;
    pthread_mutex_unlock(&run->lock);
    rc = fsd_heal_checkpoint_write(run->ckpt_path, &cp);
    if (rc != 0)
        vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "full crawl checkpoint %s: %s",
                run->ckpt_path, strerror(-rc));
    run->ckpt_written = now;
    fsd_heal_checkpoint_clear(&cp);
}


/* Starts serving the full-crawl request, if there is one. */
static bool
heal_crawl_begin(struct heal_run *run)
{
    int rc = fsd_heal_full_request_read(run->full_path,
                                        run->crawl_token);

    if (rc < 0)
        vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "full crawl request %s: %s",
                run->full_path, strerror(-rc));
    if (rc <= 0)
        return false;
    pthread_mutex_lock(&run->lock);
    run->st.full_crawl = 1;
    run->st.crawl_started = heal_now();
    run->st.crawl_visited = 0;
    run->st.crawl_healed = 0;
    run->st.crawl_failed = 0;
    run->crawl_waiting = 0;
    pthread_mutex_unlock(&run->lock);
    run->is_crawling = true;
    run->crawl_brick = 0;
    free(run->resume_at);
    run->resume_at = NULL;
    if (heal_crawl_resume(run))
        return true;
    vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "full crawl of %zu bricks started",
            run->conf->n_bricks);
    return true;
}


/* Every brick walked: the request served, unless objects waited for a
 * copy that was down (a brick not back yet): then the request stays and
 * the crawl runs again after the interval. */
static void
heal_crawl_finish(struct heal_run *run)
{
    uint64_t waiting;
    int rc;

    /* First: a request served and its checkpoint left would have a
     * crash's restart go on from that checkpoint (the request stays when
     * the checkpoint is gone first: a whole crawl again, nothing
     * skipped). */
    rc = fsd_heal_checkpoint_remove(run->ckpt_path);
    if (rc != 0)
        vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "full crawl checkpoint %s: %s",
                run->ckpt_path, strerror(-rc));
    pthread_mutex_lock(&run->lock);
    waiting = run->crawl_waiting;
    if (waiting > 0)
        run->st.full_crawl = 0;
    pthread_mutex_unlock(&run->lock);
    if (waiting > 0) {
        vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "full crawl incomplete: %"
                PRIu64 " objects waited for a copy that is down; crawling "
                "again in %u s", waiting, run->conf->interval_s);
        run->is_crawling = false;
        return;
    }
    rc = fsd_heal_full_request_done(run->full_path, run->crawl_token);
    pthread_mutex_lock(&run->lock);
    run->st.full_crawl = 0;
    run->st.crawl_done_at = heal_now();
    vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "full crawl done: %" PRIu64 " objects "
            "visited, %" PRIu64 " healed, %" PRIu64 " failed",
            run->st.crawl_visited, run->st.crawl_healed,
            run->st.crawl_failed);
    pthread_mutex_unlock(&run->lock);
    run->is_crawling = false;
    if (rc < 0)
        vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "full crawl request %s: %s",
                run->full_path, strerror(-rc));
    else if (rc == 1 && heal_crawl_begin(run))
        vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "full crawl asked for again "
                "meanwhile: crawling again");
}


/* One item of the walk of the current brick: a job pushed, or counted.
 * Returns whether the step must end here (a directory is listed next,
 * and heals are pending). */
static bool
heal_crawl_item(struct heal_run *run, int kind,
                const struct fsd_heal_crawl_item *item,
                struct fsd_heal_jobs *jobs)
{
    const struct fsd_heal_brick *b = &run->conf->bricks[run->crawl_brick];
    struct fsd_heal_job job;

    if (kind == FSD_HEAL_CRAWL_ENTER)
        return jobs->n > 0;
    if (kind == FSD_HEAL_CRAWL_ERROR) {
        if (item->error == -ENOENT)
            return false; /* removed since it was listed */
        vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "full crawl of %s: '%s': %s "
                "(skipped)", b->path, item->path, strerror(-item->error));
        pthread_mutex_lock(&run->lock);
        run->st.crawl_failed++;
        pthread_mutex_unlock(&run->lock);
        return false;
    }
    if (!item->has_gfid) {
        vl_glog(HEAL_DOMAIN, VL_LOG_DEBUG, "full crawl of %s: '%s' has no "
                "GFID (not made through the volume): skipped", b->path,
                item->name);
        pthread_mutex_lock(&run->lock);
        run->st.crawl_visited++;
        pthread_mutex_unlock(&run->lock);
        return false;
    }
    memset(&job, 0, sizeof(job));
    job.gfid = item->gfid;
    job.brick = (uint32_t)run->crawl_brick;
    job.bricks = 1ULL << job.brick;
    job.is_dir = item->is_dir;
    job.is_crawl = true;
    /* No memory: heal what is there; the object is not healed by this
     * crawl (the index still lists it if it needs healing). */
    return fsd_heal_jobs_push(jobs, &job) != 0;
}


/* Takes the new walk of brick b to the checkpoint's position; if it
 * cannot get there, the brick is walked from its root. False when there
 * is no walk left (no memory: the next step tries again). */
static bool
heal_crawl_seek(struct heal_run *run, const struct fsd_heal_brick *b)
{
    int rc = fsd_heal_crawl_seek(run->crawl, run->resume_at);

    if (rc != 0) {
        vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "full crawl of %s: cannot go "
                "on from '%s': %s (walking it from its root)", b->path,
                run->resume_at, strerror(-rc));
        fsd_heal_crawl_free(run->crawl);
        run->crawl = NULL;
        if (fsd_heal_crawl_new(b->path, &run->crawl) != 0) {
            run->crawl = NULL;
            vl_glog(HEAL_DOMAIN, VL_LOG_ERROR, "full crawl: out of memory");
        }
    }
    free(run->resume_at);
    run->resume_at = NULL;
    return run->crawl != NULL;
}


/* A crawl step: starts a crawl if one was asked for, then heals the next
 * batch of its objects. */
static void
heal_crawl_step(struct heal_run *run)
{
    struct fsd_heal_jobs jobs = {0};

    if (!run->is_crawling && !heal_crawl_begin(run))
        return;
    while (run->is_crawling && jobs.n < FSD_HEAL_CRAWL_BATCH
           && !atomic_load(&run->stop)) {
        const struct fsd_heal_brick *b;
        struct fsd_heal_crawl_item item;
        int kind;

        if (run->crawl_brick == run->conf->n_bricks) {
            heal_crawl_finish(run);
            break;
        }
        b = &run->conf->bricks[run->crawl_brick];
        if (run->crawl == NULL) {
            if (fsd_heal_crawl_new(b->path, &run->crawl) != 0) {
                vl_glog(HEAL_DOMAIN, VL_LOG_ERROR, "full crawl: out of "
                        "memory");
                break;
            }
            if (run->resume_at != NULL && !heal_crawl_seek(run, b))
                break;
            pthread_mutex_lock(&run->lock);
            run->st.crawl_brick = run->crawl_brick;
            pthread_mutex_unlock(&run->lock);
        }
        kind = fsd_heal_crawl_next(run->crawl, &item);
        if (kind == FSD_HEAL_CRAWL_OBJECT || kind == FSD_HEAL_CRAWL_ENTER
            || kind == FSD_HEAL_CRAWL_ERROR) {
            if (heal_crawl_item(run, kind, &item, &jobs))
                break;
            continue;
        }
        if (kind < 0) {
            vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "full crawl of %s: %s",
                    b->path, strerror(-kind));
            pthread_mutex_lock(&run->lock);
            run->st.crawl_failed++;
            pthread_mutex_unlock(&run->lock);
        } else {
            vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "full crawl of %s walked",
                    b->path);
        }
        fsd_heal_crawl_free(run->crawl);
        run->crawl = NULL;
        run->crawl_brick++;
    }
    if (jobs.n > 0) {
        pthread_mutex_lock(&run->lock);
        heal_dispatch_locked(run, &jobs);
        pthread_mutex_unlock(&run->lock);
    }
    fsd_heal_jobs_clear(&jobs);
    heal_crawl_checkpoint(run);
}


/* The sum of the child up/down generations of the bricks' replicates
 * (each only grows, so any change changes the sum); asked locally, no
 * network. A replicate that does not answer counts 0. */
static uint64_t
heal_child_gen(struct heal_run *run)
{
    struct vl_caller caller = {.pid = VL_CALLER_PID_INTERNAL};
    uint64_t sum = 0;

    for (size_t i = 0; i < run->conf->n_bricks; i++) {
        union vl_fop_args a;
        struct vl_reply r = {0};
        vl_inode_t *root = vl_inode_get(run->graph->itable, &vl_gfid_root,
                                        0);

        if (root == NULL)
            break;
        memset(&a, 0, sizeof(a));
        a.getxattr.loc.inode = root;
        a.getxattr.name = FSD_HEAL_XATTR_CHILD_GEN;
        a.getxattr.size = HEAL_ANSWER_MAX - 1;
        if (vl_sync_call(run->subs[i], VL_FOP_GETXATTR, &a, &caller, &r) == 0
            && r.xattr != NULL && r.count > 0 && r.count < HEAL_ANSWER_MAX) {
            char v[HEAL_ANSWER_MAX];

            memcpy(v, r.xattr, (size_t)r.count);
            v[r.count] = '\0';
            sum += strtoull(v, NULL, 10);
        }
        vl_reply_clear(&r);
        vl_inode_unref(root);
    }
    return sum;
}


/* Waits up to seconds, or until stop, a kick, or a change of a child's
 * up/down state since the round began: a brick that comes back is healed
 * at once (GlusterFS's daemon does the same on its child-up event), not
 * at the next interval. The state is asked every HEAL_CHILD_POLL_MS: a
 * local xattr read on the graph, cheap beside the heal it starts. */
static void
heal_sleep(struct heal_run *run, unsigned seconds)
{
    uint64_t gen = run->round_gen;
    struct timespec now, until;
    int64_t end_ms;

    /* A brick that came or went while the round ran: a round now, not
     * after the first poll's wait. */
    if (heal_child_gen(run) != gen) {
        vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "a brick came up or went down "
                "during the round: a round now");
        pthread_mutex_lock(&run->lock);
        run->is_kicked = false;
        pthread_mutex_unlock(&run->lock);
        return;
    }
    clock_gettime(CLOCK_REALTIME, &now);
    end_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000
             + (int64_t)seconds * 1000;
    pthread_mutex_lock(&run->lock);
    while (!atomic_load(&run->stop) && !run->is_kicked) {
        int64_t now_ms, wait_ms;

        clock_gettime(CLOCK_REALTIME, &now);
        now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
        if (now_ms >= end_ms)
            break;
        wait_ms = end_ms - now_ms;
        if (wait_ms > HEAL_CHILD_POLL_MS)
            wait_ms = HEAL_CHILD_POLL_MS;
        until = now;
        until.tv_sec += wait_ms / 1000;
        until.tv_nsec += (wait_ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        if (pthread_cond_timedwait(&run->cond, &run->lock, &until)
            != ETIMEDOUT)
            continue;
        pthread_mutex_unlock(&run->lock);
        bool is_changed = heal_child_gen(run) != gen;
        pthread_mutex_lock(&run->lock);
        if (is_changed) {
            vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "a brick came up or went "
                    "down: a round now");
            break;
        }
    }
    run->is_kicked = false;
    pthread_mutex_unlock(&run->lock);
}


static void *
heal_rounds(void *arg)
{
    struct heal_run *run = arg;

    while (!atomic_load(&run->stop)) {
        struct fsd_heal_jobs jobs = {0};
        bool is_again;

        /* Before the index is read: a brick that comes back while the
         * round runs (its objects answered "pending") ends the sleep
         * after it at once. */
        run->round_gen = heal_child_gen(run);

        if (heal_collect(run, &jobs) != 0) {
            fsd_heal_jobs_clear(&jobs);
            heal_sleep(run, run->conf->interval_s);
            continue;
        }
        pthread_mutex_lock(&run->lock);
        run->st.rounds++;
        run->st.split_brain = 0;
        run->st.waiting = 0;
        run->round_healed = 0;
        for (size_t i = 0; i < run->conf->n_bricks; i++)
            fsd_heal_split_clear(&run->splits[i]);
        heal_dispatch_locked(run, &jobs);
        is_again = run->round_healed > 0 && run->jobs.n > 0;
        if (!atomic_load(&run->stop))
            heal_split_flush_locked(run); /* a stopped round is partial */
        if (run->jobs.n > 0)
            vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "round %" PRIu64 ": %zu "
                    "listed, %" PRIu64 " healed, %" PRIu64 " waiting for "
                    "a copy, %" PRIu64 " in split-brain", run->st.rounds,
                    run->jobs.n, run->round_healed, run->st.waiting,
                    run->st.split_brain);
        pthread_mutex_unlock(&run->lock);
        heal_crawl_step(run);
        if (!is_again && !run->is_crawling)
            heal_sleep(run, run->conf->interval_s);
    }
    return NULL;
}


static void
heal_state_flush(struct heal_run *run)
{
    struct fsd_heal_state st;
    int rc;

    pthread_mutex_lock(&run->lock);
    run->st.updated = heal_now();
    fsd_heal_rate_update(&run->rate, run->st.updated, &run->st);
    st = run->st;
    pthread_mutex_unlock(&run->lock);
    rc = fsd_heal_state_write(run->conf->state_path, &st);
    if (rc != 0)
        vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "progress file %s: %s",
                run->conf->state_path, strerror(-rc));
}


/* Resolves each brick's replicate translator; logs and reports the
 * first that is not one. */
static int
heal_resolve(struct heal_run *run)
{
    for (size_t i = 0; i < run->conf->n_bricks; i++) {
        const char *name = run->conf->bricks[i].subvol;
        vl_xlator_t *xl = vl_graph_find(run->graph, name);
        char msg[512];

        if (xl == NULL || strcmp(xl->cls->type, "cluster/replicate") != 0) {
            snprintf(msg, sizeof(msg), "--heal-brick %s=%s: the volfile "
                     "has no cluster/replicate named %s", name,
                     run->conf->bricks[i].path, name);
            vl_glog(HEAL_DOMAIN, VL_LOG_ERROR, "%s", msg);
            fsd_report_ready(run->conf->ready, -1, msg);
            return -EINVAL;
        }
        run->subs[i] = xl;
        snprintf(run->st.bricks[i].path, sizeof(run->st.bricks[i].path),
                 "%s", run->conf->bricks[i].path);
    }
    run->st.n_bricks = run->conf->n_bricks;
    return 0;
}


/* The last finished crawl, from the progress file of the daemon this one
 * replaces, so that `heal status` still shows it. */
static void
heal_crawl_carry(struct heal_run *run)
{
    struct fsd_heal_state *old = malloc(sizeof(*old));

    if (old == NULL)
        return;
    if (fsd_heal_state_read(run->conf->state_path, old) == 0) {
        run->st.crawl_done_at = old->crawl_done_at;
        if (old->full_crawl == 0) {
            run->st.crawl_started = old->crawl_started;
            run->st.crawl_visited = old->crawl_visited;
            run->st.crawl_healed = old->crawl_healed;
            run->st.crawl_failed = old->crawl_failed;
        }
    }
    free(old);
}


int
fsd_heal_run(vl_graph_t *graph, const struct fsd_heal_conf *conf,
             const sigset_t *sigs)
{
    struct heal_run *run = calloc(1, sizeof(*run));
    struct timespec tick = {.tv_sec = 1};
    pthread_t *workers = NULL;
    size_t n_workers = 0;
    pthread_t rounds;
    bool has_rounds = false;
    int status = FSD_EXIT_FAIL;

    if (run == NULL)
        return FSD_EXIT_FAIL;
    run->conf = conf;
    run->graph = graph;
    pthread_mutex_init(&run->lock, NULL);
    pthread_cond_init(&run->cond, NULL);
    run->st.pid = (long)getpid();
    run->st.started = heal_now();
    run->st.eta_seconds = -1;
    fsd_heal_split_path(conf->state_path, run->split_path,
                        sizeof(run->split_path));
    fsd_heal_full_path(conf->state_path, run->full_path,
                       sizeof(run->full_path));
    fsd_heal_checkpoint_path(run->full_path, run->ckpt_path,
                             sizeof(run->ckpt_path));
    heal_crawl_carry(run);
    if (heal_resolve(run) != 0)
        goto out;
    workers = calloc(conf->n_threads, sizeof(*workers));
    if (workers == NULL) {
        fsd_report_ready(conf->ready, -1, "out of memory");
        goto out;
    }
    for (; n_workers < conf->n_threads; n_workers++)
        if (pthread_create(&workers[n_workers], NULL, heal_worker, run)
            != 0)
            break;
    if (n_workers == 0
        || pthread_create(&rounds, NULL, heal_rounds, run) != 0) {
        fsd_report_ready(conf->ready, -1, "cannot start threads");
        goto finish;
    }
    has_rounds = true;
    if (n_workers < conf->n_threads)
        vl_glog(HEAL_DOMAIN, VL_LOG_WARNING, "%zu of %u heal threads "
                "started", n_workers, conf->n_threads);
    heal_state_flush(run);
    fsd_report_ready(conf->ready, 0, NULL);
    vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "healing %zu bricks, %zu objects at "
            "once, index read every %u s", conf->n_bricks, n_workers,
            conf->interval_s);
    while (!atomic_load(&run->stop)) {
        int sig = sigtimedwait(sigs, NULL, &tick);

        if (sig == SIGTERM || sig == SIGINT) {
            vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "signal %d: stopping after "
                    "the heals in flight", sig);
            pthread_mutex_lock(&run->lock);
            atomic_store(&run->stop, true);
            pthread_cond_broadcast(&run->cond);
            pthread_mutex_unlock(&run->lock);
        } else if (sig == SIGUSR2) {
            /* The kick (mortard sends it when it starts a brick): a
             * client of a brick that is back connects now, not after a
             * backoff grown to seconds while the brick was down; its
             * CHILD_UP then ends the sleep, and the round heals it. */
            for (size_t i = 0; i < conf->n_bricks; i++)
                if (run->subs[i] != NULL)
                    vl_notify(run->subs[i], VL_EV_RECONNECT, NULL);
            pthread_mutex_lock(&run->lock);
            run->is_kicked = true;
            pthread_cond_broadcast(&run->cond);
            pthread_mutex_unlock(&run->lock);
        } else if (sig == SIGUSR1 && conf->dump_dir != NULL) {
            char path[4096];
            int rc = fsd_statedump(conf->dump_dir, path, sizeof(path));

            if (rc == 0)
                vl_glog(HEAL_DOMAIN, VL_LOG_INFO, "statedump written to "
                        "%s", path);
            else
                vl_glog(HEAL_DOMAIN, VL_LOG_ERROR, "statedump to %s: %s",
                        path, strerror(-rc));
        }
        heal_state_flush(run);
    }
    status = FSD_EXIT_OK;

finish:
    if (has_rounds)
        pthread_join(rounds, NULL);
    pthread_mutex_lock(&run->lock);
    run->is_exit = true;
    pthread_cond_broadcast(&run->cond);
    pthread_mutex_unlock(&run->lock);
    for (size_t i = 0; i < n_workers; i++)
        pthread_join(workers[i], NULL);
    if (status == FSD_EXIT_OK)
        heal_state_flush(run);
out:
    free(workers);
    fsd_heal_crawl_free(run->crawl);
    free(run->resume_at);
    fsd_heal_jobs_clear(&run->jobs);
    for (size_t i = 0; i < FSD_HEAL_BRICKS_MAX; i++)
        fsd_heal_split_clear(&run->splits[i]);
    pthread_cond_destroy(&run->cond);
    pthread_mutex_destroy(&run->lock);
    free(run);
    return status;
}
