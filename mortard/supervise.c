/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * supervise: keeps the bricks of started volumes on this node running
 * (and, through heal.c, their self-heal daemons).
 *
 * mortarfsd detaches from mortard (brick.c), so a brick's death is seen
 * by polling md_brick_pid (pid file + /proc) on the worker thread: about
 * once a second when idle, and at once after every command, so that the
 * pid of a brick a command started is known even if it dies right away
 * (such a death then counts like any other). A brick that is down is
 * started: at mortard's startup (a reboot, or mortard killed while bricks
 * died) and whenever one dies. Bricks still running when mortard starts
 * are adopted, never started twice. A brick stopped on purpose is never
 * restarted: volume stop marks the volume stopped before it stops the
 * bricks, remove-brick commit and volume delete drop the brick from the
 * store first, and all of them run on the same worker thread as this
 * scan.
 *
 * Restart policy (md_restart_on_death, pure so unit tests drive it with
 * their own clock): every death, and every start that fails, counts; the
 * first within the window is restarted at once, the next after 1 s, then
 * 2 s, 4 s, ... up to 60 s; the limit-th death within the window gives
 * up (logged) until `volume start VOL force` (md_supervise_reset) or a
 * restart of mortard. Deaths older than the window are forgotten, so a
 * brick that runs for a while starts again with a clean slate.
 *
 * Per-brick state lives in a table keyed by volume id and brick id (the
 * volume structs are rebuilt by some commands); entries of bricks that are
 * no longer wanted (volume stopped or deleted, brick removed) are dropped
 * at the next scan, so a later start begins afresh.
 * Threads: the worker thread with md_state.lock held (unit tests call the
 * policy functions directly).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mortard.h"

/* How often md_supervise looks at the bricks. */
#define MD_SUPERVISE_PERIOD_MS 1000

const struct md_restart_policy md_restart_default = {
    .limit = MD_RESTART_LIMIT,
    .window_ms = MD_RESTART_WINDOW_MS,
    .min_ms = MD_RESTART_MIN_MS,
    .max_ms = MD_RESTART_MAX_MS,
};

/* One supervised brick. */
struct md_sv {
    char vol_id[VL_GFID_STR_LEN]; /* its volume's id */
    char brick_id[16];            /* "brick<N>" */
    pid_t pid;                    /* last pid seen running, 0 if none */
    bool is_seen;                 /* wanted in the current scan */
    struct md_restart rs;         /* restart policy state */
};

static struct {
    struct md_sv *v;        /* owned array */
    size_t n;               /* used */
    size_t cap;             /* allocated */
    int64_t next_scan_ms;   /* md_supervise: next scan due */
} md_sv_tab;


int64_t
md_restart_on_death(struct md_restart *rs, const struct md_restart_policy *p,
                    int64_t now_ms)
{
    unsigned keep = 0, n;
    int64_t delay;

    /* Forget deaths that left the window. */
    for (unsigned i = 0; i < rs->n_deaths; i++)
        if (now_ms - rs->deaths[i] < p->window_ms)
            rs->deaths[keep++] = rs->deaths[i];
    rs->n_deaths = keep;
    if (rs->n_deaths == MD_RESTART_HISTORY) {
        memmove(rs->deaths, rs->deaths + 1,
                (MD_RESTART_HISTORY - 1) * sizeof(rs->deaths[0]));
        rs->n_deaths--;
    }
    rs->deaths[rs->n_deaths++] = now_ms;
    n = rs->n_deaths;
    if (n >= p->limit) {
        rs->is_given_up = true;
        return -1;
    }
    if (n == 1) {
        delay = 0;
    } else {
        delay = p->min_ms;
        for (unsigned i = 2; i < n && delay < p->max_ms; i++)
            delay *= 2;
        if (delay > p->max_ms)
            delay = p->max_ms;
    }
    rs->next_ms = now_ms + delay;
    return delay;
}


void
md_restart_reset(struct md_restart *rs)
{
    memset(rs, 0, sizeof(*rs));
}


static int64_t
md_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


/* The entry of brick b of vol, added if new; NULL only without memory. */
static struct md_sv *
md_sv_get(const struct md_volume *vol, const struct md_brick *b)
{
    struct md_sv *e;

    for (size_t i = 0; i < md_sv_tab.n; i++) {
        e = &md_sv_tab.v[i];
        if (strcmp(e->vol_id, vol->id) == 0 &&
            strcmp(e->brick_id, b->id) == 0)
            return e;
    }
    if (md_sv_tab.n == md_sv_tab.cap) {
        size_t cap = md_sv_tab.cap != 0 ? md_sv_tab.cap * 2 : 16;
        struct md_sv *v = realloc(md_sv_tab.v, cap * sizeof(*v));

        if (v == NULL)
            return NULL;
        md_sv_tab.v = v;
        md_sv_tab.cap = cap;
    }
    e = &md_sv_tab.v[md_sv_tab.n++];
    memset(e, 0, sizeof(*e));
    snprintf(e->vol_id, sizeof(e->vol_id), "%s", vol->id);
    snprintf(e->brick_id, sizeof(e->brick_id), "%s", b->id);
    return e;
}


/* Counts a death (or failed start) of b and logs what follows. */
static void
md_sv_death(const struct md_volume *vol, const struct md_brick *b,
            struct md_sv *e, int64_t now)
{
    const struct md_restart_policy *p = &md_restart_default;
    int64_t delay = md_restart_on_death(&e->rs, p, now);

    if (delay < 0)
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "brick %s:%s of %s died or failed "
                "to start %u times within %lld s: giving up; fix the cause "
                "(see its log) and run 'volume start %s force'", b->host,
                b->path, vol->name, e->rs.n_deaths,
                (long long)(p->window_ms / 1000), vol->name);
    else if (delay > 0)
        vl_glog(MD_DOMAIN, VL_LOG_WARNING, "brick %s:%s of %s: next start "
                "in %lld ms (%u of %u tries within %lld s)", b->host,
                b->path, vol->name, (long long)delay, e->rs.n_deaths,
                p->limit, (long long)(p->window_ms / 1000));
}


/* One local brick of a started volume. */
static void
md_sv_brick(struct md_state *st, const struct md_volume *vol,
            const struct md_brick *b, int64_t now)
{
    struct md_sv *e = md_sv_get(vol, b);
    vl_err_t err = {.msg = ""};
    pid_t pid = md_brick_pid(st, vol, b);

    if (e == NULL) {
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "supervising brick %s:%s of %s: "
                "out of memory", b->host, b->path, vol->name);
        return;
    }
    e->is_seen = true;
    if (pid != 0) {
        /* Running again (started by hand after a give-up, say): watched
         * again; its recent deaths still count. */
        e->pid = pid;
        e->rs.is_given_up = false;
        return;
    }
    if (e->rs.is_given_up)
        return;
    if (e->pid != 0) {
        vl_glog(MD_DOMAIN, VL_LOG_WARNING, "brick %s:%s of %s (pid %ld, "
                "port %u) died", b->host, b->path, vol->name, (long)e->pid,
                b->port);
        e->pid = 0;
        md_sv_death(vol, b, e, now);
        if (e->rs.is_given_up)
            return;
    }
    if (now < e->rs.next_ms)
        return;
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "brick %s:%s of started volume %s is "
            "not running: starting it", b->host, b->path, vol->name);
    if (md_brick_start(st, vol, b, &err) == 0) {
        e->pid = md_brick_pid(st, vol, b);
        return;
    }
    vl_glog(MD_DOMAIN, VL_LOG_WARNING, "%s", err.msg);
    md_sv_death(vol, b, e, md_now_ms());
}


void
md_supervise(struct md_state *st, bool is_now)
{
    int64_t now = md_now_ms();
    size_t keep = 0;

    if (!is_now && now < md_sv_tab.next_scan_ms)
        return;
    for (size_t i = 0; i < md_sv_tab.n; i++)
        md_sv_tab.v[i].is_seen = false;
    for (struct md_volume *v = st->vols; v != NULL; v = v->next) {
        if (v->status != MD_VOL_STARTED)
            continue;
        for (size_t i = 0; i < v->n_bricks; i++)
            if (md_brick_is_local(st, &v->bricks[i]) &&
                !v->bricks[i].is_reset) /* stays down until its commit */
                md_sv_brick(st, v, &v->bricks[i], now);
    }
    for (size_t i = 0; i < md_sv_tab.n; i++)
        if (md_sv_tab.v[i].is_seen)
            md_sv_tab.v[keep++] = md_sv_tab.v[i];
    md_sv_tab.n = keep;
    /* The self-heal daemons (heal.c) ride on the same scan. */
    md_heal_supervise(st, now);
    /* A start can take a while: the period counts from the scan's end. */
    md_sv_tab.next_scan_ms = md_now_ms() + MD_SUPERVISE_PERIOD_MS;
}


void
md_supervise_reset(const struct md_volume *vol)
{
    for (size_t i = 0; i < md_sv_tab.n; i++)
        if (strcmp(md_sv_tab.v[i].vol_id, vol->id) == 0) {
            md_restart_reset(&md_sv_tab.v[i].rs);
            md_sv_tab.v[i].pid = 0;
        }
    md_heal_reset(vol);
}


void
md_supervise_dump(FILE *out)
{
    for (size_t i = 0; i < md_sv_tab.n; i++) {
        const struct md_sv *e = &md_sv_tab.v[i];

        fprintf(out, "supervised=%s/%s pid=%ld deaths=%u given-up=%d\n",
                e->vol_id, e->brick_id, (long)e->pid, e->rs.n_deaths,
                e->rs.is_given_up);
    }
}


void
md_supervise_free(void)
{
    md_heal_free();
    free(md_sv_tab.v);
    memset(&md_sv_tab, 0, sizeof(md_sv_tab));
}
