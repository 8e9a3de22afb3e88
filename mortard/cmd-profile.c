/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-profile: `volume profile VOL start|stop|info [...]` and `volume top
 * VOL METRIC [brick B] [list-cnt N]` (issue 25 item 2).
 *
 * start/stop: a volume is profiled while io-stats.latency-measurement is
 * on in its options (GlusterFS's record too: its options
 * diagnostics.latency-measurement and diagnostics.count-fop-hits). start
 * sets both on, stop both off, each through `volume set` (md_cmd_run:
 * stored, a transaction when the node has peers, SIGHUP to the running
 * bricks, which apply them live); start then waits, bounded, until this
 * node's bricks say they count, so a workload run right after it is
 * profiled.
 *
 * info/top: every brick of the volume is asked for its io-stats dump.
 * A brick of this node gets IOS_PROFILE_SIGNAL with sigqueue (value:
 * request number and dump mode) and writes <run>/dumps/mortarfsd.<pid>.
 * profile crash-safely; mortard polls that file until it carries the
 * request's number, at most MD_PROF_WAIT_MS, so a brick that does not
 * answer is shown as such and never holds the command. Bricks of other
 * nodes are asked through their node's mortard (BRICK_PROFILE, answered
 * on its loop thread without md_state.lock, as BRICK_STATUS is: two
 * nodes asking each other cannot wait on each other's worker); one node
 * that fails is asked once per command. md_prof_lock serialises the
 * askers of this node (the worker and peers' calls), since a brick has
 * one dump file.
 * Threads: the worker with md_state.lock held (commands); a loop thread
 * without it (md_prof_serve).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mgmt.h"
#include "profile.h"
#include "vrpc.h"

#define MD_PROF_WAIT_MS 5000       /* a brick's answer */
#define MD_PROF_POLL_MS 10         /* between looks at its dump file */
#define MD_PROF_PEER_TIMEOUT_MS (MD_PROF_WAIT_MS + 3000)
#define MD_PROF_SEQ_MASK ((1u << (31 - IOS_PROFILE_SEQ_SHIFT)) - 1)
#define MD_PROF_LIST_MAX IOS_TOP_MAX

#define MD_USAGE_PROFILE "volume profile <VOLNAME> {start|info [peek|" \
                         "incremental [peek]|cumulative|clear]|stop}"
#define MD_USAGE_TOP "volume top <VOLNAME> {open|read|write|opendir|" \
                     "readdir|clear} [brick <brick>] [list-cnt <value>]"

/* One brick asked for its dump. */
struct md_prof_ask {
    int status;       /* 0 answered (text set); -ESRCH not running;
                       * -ETIMEDOUT no answer in time; -ENOTCONN its node
                       * could not be asked; -errno */
    char why[256];    /* when status != 0 and not -ESRCH: the reason */
    unsigned seq;     /* the request number it was asked with */
    char *text;       /* owned; its dump */
};

static pthread_mutex_t md_prof_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint md_prof_seq;


static unsigned
md_prof_next_seq(void)
{
    unsigned seq = atomic_fetch_add(&md_prof_seq, 1);

    /* A mortard restarted finds the old answers' numbers in the dump
     * files: start elsewhere than 0 so an old file is not taken for a
     * new answer. */
    if (seq == 0) {
        unsigned base = (unsigned)time(NULL) ^ ((unsigned)getpid() << 8);

        atomic_store(&md_prof_seq, base + 2);
        seq = base + 1;
    }
    return seq & MD_PROF_SEQ_MASK;
}


static long long
md_prof_now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}


/* Asks the bricks ids[0..n) of volume volname, all on this node, for a
 * dump in mode: signals every running one, then waits for all at once. */
static void
md_prof_ask_local(const struct md_state *st, const char *volname,
                  const char *const *ids, size_t n, enum ios_dump_mode mode,
                  struct md_prof_ask *asks)
{
    struct md_volume v;
    pid_t *pids = calloc(n + 1, sizeof(*pids));
    size_t left = 0;
    long long deadline;

    memset(&v, 0, sizeof(v));
    snprintf(v.name, sizeof(v.name), "%s", volname);
    if (pids == NULL) {
        for (size_t i = 0; i < n; i++) {
            asks[i].status = -ENOMEM;
            snprintf(asks[i].why, sizeof(asks[i].why), "out of memory");
        }
        return;
    }
    pthread_mutex_lock(&md_prof_lock);
    for (size_t i = 0; i < n; i++) {
        struct md_brick b = {.host = (char *)""};
        union sigval sv;

        snprintf(b.id, sizeof(b.id), "%s", ids[i]);
        pids[i] = md_brick_pid(st, &v, &b);
        if (pids[i] == 0) {
            asks[i].status = -ESRCH;
            continue;
        }
        asks[i].seq = md_prof_next_seq();
        sv.sival_int = (int)(asks[i].seq << IOS_PROFILE_SEQ_SHIFT
                             | (unsigned)mode);
        if (sigqueue(pids[i], IOS_PROFILE_SIGNAL, sv) != 0) {
            asks[i].status = errno == ESRCH ? -ESRCH : -errno;
            snprintf(asks[i].why, sizeof(asks[i].why), "signal: %s",
                     strerror(errno));
            pids[i] = 0;
            continue;
        }
        asks[i].status = -ETIMEDOUT;
        left++;
    }
    deadline = md_prof_now_ms() + MD_PROF_WAIT_MS;
    while (left > 0) {
        for (size_t i = 0; i < n; i++) {
            struct md_prof_dump d;
            char path[4200], err[128];
            char *text = NULL;
            int rc;

            if (pids[i] == 0 || asks[i].status != -ETIMEDOUT)
                continue;
            snprintf(path, sizeof(path), "%s/dumps/mortarfsd.%ld.profile",
                     st->run_dir, (long)pids[i]);
            if (md_read_file(path, &text, NULL) != 0)
                continue; /* not written yet */
            rc = md_prof_parse(text, asks[i].seq, &d, err, sizeof(err));
            md_prof_dump_clear(&d);
            if (rc == -EAGAIN) {
                free(text);
                continue;
            }
            left--;
            if (rc != 0) {
                asks[i].status = rc;
                snprintf(asks[i].why, sizeof(asks[i].why), "bad dump: %s",
                         err);
                free(text);
                continue;
            }
            asks[i].status = 0;
            asks[i].text = text;
        }
        if (left == 0 || md_prof_now_ms() >= deadline)
            break;
        /* A brick that died meanwhile will not answer. */
        for (size_t i = 0; i < n; i++)
            if (pids[i] != 0 && asks[i].status == -ETIMEDOUT
                && kill(pids[i], 0) != 0 && errno == ESRCH) {
                asks[i].status = -ESRCH;
                left--;
            }
        if (left > 0)
            (void)nanosleep(&(struct timespec){0, MD_PROF_POLL_MS * 1000000L},
                            NULL);
    }
    pthread_mutex_unlock(&md_prof_lock);
    for (size_t i = 0; i < n; i++)
        if (asks[i].status == -ETIMEDOUT)
            snprintf(asks[i].why, sizeof(asks[i].why), "no answer within "
                     "%d s", MD_PROF_WAIT_MS / 1000);
    free(pids);
}


/* The nodes of one command that could not be asked: each is asked once. */
struct md_prof_down {
    char host[MGMT_HOST_MAX];  /* "" for an unused slot */
    char why[200];
};


/* Asks the bricks idx[0..n) of vol living on host (a peer) through its
 * mortard. */
static void
md_prof_ask_peer(struct md_state *st, const struct md_volume *vol,
                 const char *host, const size_t *idx, size_t n,
                 enum ios_dump_mode mode, struct md_prof_ask *asks)
{
    struct md_peer *p = md_peer_find_host(st, host);
    mgmt_brick_profile_req req;
    mgmt_brick_profile_rsp rsp;
    mgmt_brick_ref *refs = calloc(n + 1, sizeof(*refs));
    vl_err_t err = {.msg = ""};
    const char *why = NULL;

    memset(&req, 0, sizeof(req));
    memset(&rsp, 0, sizeof(rsp));
    if (refs == NULL)
        why = "out of memory";
    else if (p == NULL)
        why = "not a peer of this node";
    else if (!p->is_connected)
        why = "its node is disconnected";
    if (why == NULL) {
        for (size_t i = 0; i < n; i++) {
            refs[i].id = (char *)vol->bricks[idx[i]].id;
            refs[i].port = vol->bricks[idx[i]].port;
        }
        req.volume = (char *)vol->name;
        req.bricks.bricks_len = (u_int)n;
        req.bricks.bricks_val = refs;
        req.mode = (int)mode;
        if (md_peer_call(p->host, p->port, MGMT_PROC_BRICK_PROFILE,
                         (xdrproc_t)xdr_mgmt_brick_profile_req, &req,
                         (xdrproc_t)xdr_mgmt_brick_profile_rsp, &rsp,
                         MD_PROF_PEER_TIMEOUT_MS, &err) != 0)
            why = err.msg;
        else if (rsp.ret != 0 || rsp.bricks.bricks_len != n)
            why = rsp.ret != 0 ? strerror(rsp.op_errno) : "bad answer";
    }
    for (size_t i = 0; i < n; i++) {
        const mgmt_brick_dump *bd;

        if (why != NULL) {
            asks[i].status = -ENOTCONN;
            snprintf(asks[i].why, sizeof(asks[i].why), "not gathered: %s",
                     why);
            continue;
        }
        bd = &rsp.bricks.bricks_val[i];
        asks[i].status = bd->status > 0 ? -EPROTO : bd->status;
        asks[i].seq = bd->seq;
        snprintf(asks[i].why, sizeof(asks[i].why), "%s", bd->why);
        if (asks[i].status == 0
            && (asks[i].text = strndup(bd->text.text_val,
                                       bd->text.text_len)) == NULL) {
            asks[i].status = -ENOMEM;
            snprintf(asks[i].why, sizeof(asks[i].why), "out of memory");
        }
    }
    xdr_free((xdrproc_t)xdr_mgmt_brick_profile_rsp, (char *)&rsp);
    free(refs);
}


/* Asks each brick idx[0..n) of vol, this node's and other nodes'. */
static void
md_prof_ask_bricks(struct md_state *st, const struct md_volume *vol,
                   const size_t *idx, size_t n, enum ios_dump_mode mode,
                   struct md_prof_ask *asks)
{
    const char **ids = calloc(n + 1, sizeof(*ids));
    size_t *sub = calloc(n + 1, sizeof(*sub));
    size_t *pos = calloc(n + 1, sizeof(*pos));
    struct md_prof_ask *tmp = calloc(n + 1, sizeof(*tmp));
    bool *is_done = calloc(n + 1, sizeof(*is_done));
    size_t k = 0;

    if (ids == NULL || sub == NULL || pos == NULL || tmp == NULL
        || is_done == NULL) {
        for (size_t i = 0; i < n; i++) {
            asks[i].status = -ENOMEM;
            snprintf(asks[i].why, sizeof(asks[i].why), "out of memory");
        }
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (md_brick_is_local(st, &vol->bricks[idx[i]])) {
            ids[k] = vol->bricks[idx[i]].id;
            pos[k++] = i;
            is_done[i] = true;
        }
    if (k > 0)
        md_prof_ask_local(st, vol->name, ids, k, mode, tmp);
    for (size_t j = 0; j < k; j++)
        asks[pos[j]] = tmp[j];
    /* Each other node once, with all its bricks. */
    for (size_t i = 0; i < n; i++) {
        const char *host = vol->bricks[idx[i]].host;

        if (is_done[i])
            continue;
        k = 0;
        for (size_t j = i; j < n; j++)
            if (!is_done[j]
                && strcmp(vol->bricks[idx[j]].host, host) == 0) {
                sub[k] = idx[j];
                pos[k++] = j;
                is_done[j] = true;
            }
        memset(tmp, 0, (n + 1) * sizeof(*tmp));
        md_prof_ask_peer(st, vol, host, sub, k, mode, tmp);
        for (size_t j = 0; j < k; j++)
            asks[pos[j]] = tmp[j];
    }
out:
    free(ids);
    free(sub);
    free(pos);
    free(tmp);
    free(is_done);
}


static void
md_prof_asks_free(struct md_prof_ask *asks, size_t n)
{
    for (size_t i = 0; asks != NULL && i < n; i++)
        free(asks[i].text);
    free(asks);
}


/* Parses a brick's answer a into d (allocated by the caller, NULL when
 * that failed): NULL when d has what to show, else why not, one line.
 * needs: the option the brick must have on ("latency-measurement" for
 * profile info, "count-fop-hits" for top; NULL: none, top clear). */
static const char *
md_prof_answer(const struct md_prof_ask *a, struct md_prof_dump *d,
               const char *needs, char *buf, size_t len)
{
    char err[128];
    bool is_on;

    if (a->status == -ESRCH)
        return "Brick is not running";
    if (a->status != 0) {
        snprintf(buf, len, "Brick is not answering: %s", a->why);
        return buf;
    }
    if (d == NULL)
        return "out of memory";
    if (md_prof_parse(a->text, a->seq, d, err, sizeof(err)) != 0) {
        snprintf(buf, len, "Brick answered a bad dump: %s", err);
        return buf;
    }
    if (d->error[0] != '\0') {
        snprintf(buf, len, "Brick failed: %s", d->error);
        return buf;
    }
    is_on = needs == NULL
            || (strcmp(needs, "count-fop-hits") == 0 ? d->is_count_hits
                                                     : d->is_latency);
    if (!is_on) {
        snprintf(buf, len, "%s is not running on this brick (%s is off "
                 "there)", strcmp(needs, "count-fop-hits") == 0 ? "Top"
                                                                : "Profile",
                 needs);
        return buf;
    }
    return NULL;
}


/* ---- volume profile -------------------------------------------------- */

static bool
md_prof_opt_on(const struct md_volume *vol, const char *canon)
{
    const char *v = md_vol_opt_get(vol, canon);
    bool is_on = false;

    return v != NULL && vl_parse_bool(v, &is_on) == 0 && is_on;
}


/* `volume set VOL KEY VALUE` as if typed: stored, every node, bricks. */
static int
md_prof_set(struct md_state *st, const char *volname, const char *key,
            const char *value, char *errstr, size_t len)
{
    char *argv[] = {"volume", "set", (char *)volname, (char *)key,
                    (char *)value, NULL};
    struct md_result sub;
    int ret;

    md_result_init(&sub);
    md_cmd_run(st, 5, argv, &sub);
    ret = sub.ret;
    if (ret != 0)
        snprintf(errstr, len, "%s", sub.errstr);
    md_result_clear(&sub);
    return ret;
}


/* After start: this node's running bricks count (their dump says both
 * options are on), or MD_PROF_WAIT_MS passed. */
static void
md_prof_wait_applied(struct md_state *st, const struct md_volume *vol)
{
    long long deadline = md_prof_now_ms() + MD_PROF_WAIT_MS;
    size_t *idx = calloc(vol->n_bricks + 1, sizeof(*idx));
    size_t n = 0;

    for (size_t i = 0; idx != NULL && i < vol->n_bricks; i++)
        if (md_brick_is_local(st, &vol->bricks[i]))
            idx[n++] = i;
    while (n > 0 && md_prof_now_ms() < deadline) {
        struct md_prof_ask *asks = calloc(n, sizeof(*asks));
        bool is_all = asks != NULL;

        if (asks != NULL)
            md_prof_ask_bricks(st, vol, idx, n, IOS_DUMP_PEEK, asks);
        for (size_t i = 0; asks != NULL && i < n; i++) {
            struct md_prof_dump d;
            char err[64];

            if (asks[i].status != 0)
                continue; /* not running: nothing to wait for */
            if (md_prof_parse(asks[i].text, asks[i].seq, &d, err,
                              sizeof(err)) != 0
                || !d.is_latency || !d.is_count_hits)
                is_all = false;
            md_prof_dump_clear(&d);
        }
        md_prof_asks_free(asks, n);
        if (is_all)
            break;
        (void)nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    }
    free(idx);
}


static void
md_prof_start_stop(struct md_state *st, struct md_volume *vol, bool is_start,
                   struct md_result *r)
{
    const char *value = is_start ? "on" : "off";
    char name[MD_VOLNAME_MAX + 1], errstr[1024];
    bool was_hits = md_prof_opt_on(vol, "io-stats.count-fop-hits");

    snprintf(name, sizeof(name), "%s", vol->name);
    if (is_start == md_prof_opt_on(vol, "io-stats.latency-measurement")) {
        md_result_fail(r, MD_EXIT_FAIL, is_start ? EALREADY : EINVAL,
                       "volume profile: %s: failed: Profile on Volume %s is "
                       "%s", name, name,
                       is_start ? "already started" : "not started");
        return;
    }
    /* count-fop-hits first: if latency-measurement then fails, the
     * volume is not profiled and count-fop-hits goes back. */
    if (md_prof_set(st, name, "diagnostics.count-fop-hits", value, errstr,
                    sizeof(errstr)) != 0
        || md_prof_set(st, name, "diagnostics.latency-measurement", value,
                       errstr, sizeof(errstr)) != 0) {
        char ignored[1024];

        if ((vol = md_volume_find(st, name)) != NULL
            && md_prof_opt_on(vol, "io-stats.count-fop-hits") != was_hits)
            (void)md_prof_set(st, name, "diagnostics.count-fop-hits",
                              was_hits ? "on" : "off", ignored,
                              sizeof(ignored));
        md_result_fail(r, MD_EXIT_FAIL, EIO, "volume profile: %s: failed: "
                       "%s", name, errstr);
        return;
    }
    vol = md_volume_find(st, name);
    if (is_start && vol != NULL && vol->status == MD_VOL_STARTED)
        md_prof_wait_applied(st, vol);
    md_sbuf_printf(&r->text, "%s volume profile on %s has been successful \n",
                   is_start ? "Starting" : "Stopping", name);
    md_node_add(r->root, "volProfile", NULL);
    md_node_add(r->root->last, "volname", name);
    md_node_addf(r->root->last, "profileOp", "%d", is_start ? 1 : 2);
}


/* What `profile info [WORDS]` shows and does. */
struct md_prof_view {
    enum ios_dump_mode mode;  /* what the bricks do after dumping */
    bool is_cum;              /* show Cumulative Stats */
    bool is_int;              /* show Interval N Stats */
    bool is_clear;            /* the stats are cleared, nothing shown */
};


static int
md_prof_view_parse(int argc, char **argv, struct md_prof_view *v)
{
    *v = (struct md_prof_view){.mode = IOS_DUMP_INFO, .is_cum = true,
                               .is_int = true};
    if (argc == 4)
        return 0;
    if (strcmp(argv[4], "peek") == 0 && argc == 5) {
        v->mode = IOS_DUMP_PEEK;
    } else if (strcmp(argv[4], "incremental") == 0
               && (argc == 5 || (argc == 6 && strcmp(argv[5], "peek") == 0))) {
        v->is_cum = false;
        v->mode = argc == 6 ? IOS_DUMP_PEEK : IOS_DUMP_INFO;
    } else if (strcmp(argv[4], "cumulative") == 0 && argc == 5) {
        v->is_int = false;
        v->mode = IOS_DUMP_PEEK;
    } else if (strcmp(argv[4], "clear") == 0 && argc == 5) {
        v->is_clear = true;
        v->mode = IOS_DUMP_CLEAR;
    } else {
        return -EINVAL;
    }
    return 0;
}


/* One brick's profile info (text and tree). */
static void
md_prof_brick_show(const char *brick, const struct md_prof_ask *a,
                   const struct md_prof_view *v, struct md_sbuf *text,
                   struct md_node *bn)
{
    struct md_prof_dump *d = calloc(1, sizeof(*d));
    struct md_prof_period *p = calloc(1, sizeof(*p));
    char buf[320];
    const char *why;

    md_prof_brick_head(brick, text);
    md_node_add(bn, "brickName", brick);
    why = md_prof_answer(a, d, "latency-measurement", buf, sizeof(buf));
    if (why == NULL && p == NULL)
        why = "out of memory";
    if (why != NULL) {
        md_sbuf_printf(text, "%s\n \n", why);
        md_node_add(bn, "error", why);
        goto out;
    }
    if (v->is_clear) {
        md_sbuf_printf(text, "Cleared stats.\n \n");
        md_node_add(bn, "clearStats", "Cleared stats.");
        goto out;
    }
    if (v->is_cum) {
        md_prof_period(d, MD_PROF_START, p);
        md_prof_period_show(p, -1, text,
                            md_node_add(bn, "cumulativeStats", NULL));
    }
    if (v->is_int) {
        md_prof_period(d, MD_PROF_INT, p);
        md_prof_period_show(p, (long long)d->interval, text,
                            md_node_add(bn, "intervalStats", NULL));
    }
out:
    if (d != NULL)
        md_prof_dump_clear(d);
    free(d);
    free(p);
}


static void
md_prof_info(struct md_state *st, struct md_volume *vol,
             const struct md_prof_view *v, struct md_result *r)
{
    size_t n = vol->n_bricks, n_ok = 0;
    size_t *idx = calloc(n + 1, sizeof(*idx));
    struct md_prof_ask *asks = calloc(n + 1, sizeof(*asks));
    struct md_node *top, *bl;

    if (idx == NULL || asks == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume profile: %s: failed: "
                       "out of memory", vol->name);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    md_prof_ask_bricks(st, vol, idx, n, v->mode, asks);
    top = md_node_add(r->root, "volProfile", NULL);
    md_node_add(top, "volname", vol->name);
    md_node_addf(top, "profileOp", "%d", 3);
    md_node_addf(top, "brickCount", "%zu", n);
    bl = md_node_add(top, "bricks", NULL);
    if (bl != NULL)
        bl->is_list = true;
    for (size_t i = 0; i < n; i++) {
        char brick[4400];

        snprintf(brick, sizeof(brick), "%s:%s", vol->bricks[i].host,
                 vol->bricks[i].path);
        md_prof_brick_show(brick, &asks[i], v, &r->text,
                           md_node_add(bl, "brick", NULL));
        n_ok += asks[i].status == 0;
    }
    if (n_ok == 0)
        md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, "volume profile: %s: "
                       "failed: no brick of the volume answered",
                       vol->name);
out:
    free(idx);
    md_prof_asks_free(asks, n);
}


/* The volume exists and is started: else r fails with what's name. */
static struct md_volume *
md_prof_vol(struct md_state *st, const char *what, const char *name,
            bool must_run, struct md_result *r)
{
    struct md_volume *vol = md_volume_find(st, name);

    if (vol == NULL)
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, "%s: %s: failed: Volume %s "
                       "does not exist", what, name, name);
    else if (must_run && vol->status != MD_VOL_STARTED)
        md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, "%s: %s: failed: Volume %s "
                       "is not started", what, name, name);
    else
        return vol;
    return NULL;
}


void
md_cmd_profile(struct md_state *st, int argc, char **argv,
               struct md_result *r)
{
    struct md_prof_view view;
    struct md_volume *vol;
    const char *op = argc >= 4 ? argv[3] : "";
    bool is_info = strcmp(op, "info") == 0;

    if (argc >= 4 && strcmp(argv[argc - 1], "nfs") == 0) {
        md_result_fail(r, MD_EXIT_FAIL, ENOTSUP, "volume profile: failed: "
                       "nfs is not supported (Mortar has no NFS server)");
        return;
    }
    if (argc < 4 || (!is_info && argc != 4)
        || (!is_info && strcmp(op, "start") != 0 && strcmp(op, "stop") != 0)
        || (is_info && md_prof_view_parse(argc, argv, &view) != 0)) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: %s",
                       MD_USAGE_PROFILE);
        return;
    }
    vol = md_prof_vol(st, "volume profile", argv[2], is_info, r);
    if (vol == NULL)
        return;
    if (!is_info) {
        md_prof_start_stop(st, vol, strcmp(op, "start") == 0, r);
        return;
    }
    if (!md_prof_opt_on(vol, "io-stats.latency-measurement")) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume profile: %s: failed: "
                       "Profile on Volume %s is not started", vol->name,
                       vol->name);
        return;
    }
    md_prof_info(st, vol, &view, r);
}


/* ---- volume top ------------------------------------------------------ */

/* GlusterFS's numbers of the top operations (its topOp in XML). */
static int
md_top_op_num(int metric)
{
    static const int nums[IOS_TOP_N] = {1, 2, 3, 4, 5};

    return metric < 0 ? 6 /* clear */ : nums[metric];
}


void
md_cmd_top(struct md_state *st, int argc, char **argv, struct md_result *r)
{
    struct md_volume *vol;
    const char *brick_arg = NULL;
    unsigned list_cnt = MD_PROF_LIST_MAX;
    int metric = -1;
    size_t idx_one = 0, n, n_ok = 0, *idx = NULL;
    struct md_prof_ask *asks = NULL;
    struct md_node *top, *bl;
    vl_err_t err = {.msg = ""};
    bool is_clear;

    if (argc < 4 || argc % 2 != 0) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: %s", MD_USAGE_TOP);
        return;
    }
    if (strcmp(argv[3], "read-perf") == 0
        || strcmp(argv[3], "write-perf") == 0) {
        md_result_fail(r, MD_EXIT_FAIL, ENOTSUP, "volume top: failed: %s is "
                       "not supported (Mortar's bricks do not run I/O "
                       "benchmarks)", argv[3]);
        return;
    }
    is_clear = strcmp(argv[3], "clear") == 0;
    if (!is_clear && (metric = md_prof_top_metric(argv[3])) < 0) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume top: failed: unknown "
                       "metric '%s' (open, read, write, opendir, readdir or "
                       "clear)", argv[3]);
        return;
    }
    for (int i = 4; i + 1 < argc; i += 2) {
        char *end;
        unsigned long v;

        if (strcmp(argv[i], "brick") == 0 && brick_arg == NULL) {
            brick_arg = argv[i + 1];
        } else if (strcmp(argv[i], "list-cnt") == 0 && !is_clear) {
            errno = 0;
            v = strtoul(argv[i + 1], &end, 10);
            if (argv[i + 1][0] < '0' || argv[i + 1][0] > '9' || *end != '\0'
                || errno != 0 || v > MD_PROF_LIST_MAX) {
                md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume top: failed: "
                               "list-cnt value should be between 0 to %d",
                               MD_PROF_LIST_MAX);
                return;
            }
            list_cnt = (unsigned)v;
        } else {
            md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: %s",
                           MD_USAGE_TOP);
            return;
        }
    }
    vol = md_prof_vol(st, "volume top", argv[2], true, r);
    if (vol == NULL)
        return;
    if (!md_prof_opt_on(vol, "io-stats.count-fop-hits")) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume top: %s: failed: "
                       "Top on Volume %s is not enabled: start its profile "
                       "(volume profile %s start) or set "
                       "diagnostics.count-fop-hits on", vol->name, vol->name,
                       vol->name);
        return;
    }
    if (brick_arg != NULL) {
        idx_one = md_vol_brick_arg(st, vol, brick_arg, &err);
        if (idx_one == vol->n_bricks) {
            md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume top: %s: failed: "
                           "%s", vol->name, err.msg);
            return;
        }
    }
    n = brick_arg != NULL ? 1 : vol->n_bricks;
    idx = calloc(n + 1, sizeof(*idx));
    asks = calloc(n + 1, sizeof(*asks));
    if (idx == NULL || asks == NULL) {
        md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume top: %s: failed: out "
                       "of memory", vol->name);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = brick_arg != NULL ? idx_one : i;
    md_prof_ask_bricks(st, vol, idx, n,
                       is_clear ? IOS_DUMP_TOP_CLEAR : IOS_DUMP_PEEK, asks);
    top = md_node_add(r->root, "volTop", NULL);
    md_node_add(top, "volname", vol->name);
    md_node_addf(top, "topOp", "%d", md_top_op_num(metric));
    md_node_addf(top, "brickCount", "%zu", n);
    bl = md_node_add(top, "bricks", NULL);
    if (bl != NULL)
        bl->is_list = true;
    for (size_t i = 0; i < n; i++) {
        const struct md_brick *b = &vol->bricks[idx[i]];
        struct md_node *bn = md_node_add(bl, "brick", NULL);
        struct md_prof_dump *d = calloc(1, sizeof(*d));
        char brick[4400], buf[320];
        const char *why;

        snprintf(brick, sizeof(brick), "%s:%s", b->host, b->path);
        md_sbuf_printf(&r->text, "Brick: %s\n", brick);
        md_node_add(bn, "name", brick);
        why = md_prof_answer(&asks[i], d, is_clear ? NULL : "count-fop-hits",
                             buf, sizeof(buf));
        if (why != NULL) {
            md_sbuf_printf(&r->text, "%s\n", why);
            md_node_add(bn, "error", why);
        } else if (is_clear) {
            md_sbuf_printf(&r->text, "Cleared the top tables.\n");
            n_ok++;
        } else {
            md_prof_top_show(d, metric, list_cnt, &r->text, bn);
            n_ok++;
        }
        if (d != NULL)
            md_prof_dump_clear(d);
        free(d);
    }
    if (n_ok == 0)
        md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, "volume top: %s: failed: "
                       "no brick of the volume answered", vol->name);
out:
    free(idx);
    md_prof_asks_free(asks, n);
}


/* ---- BRICK_PROFILE (served) ------------------------------------------ */

void
md_prof_serve(struct md_state *st, struct vrpc_conn *c, uint32_t xid,
              const char *body, size_t len)
{
    mgmt_brick_profile_req req;
    mgmt_brick_profile_rsp rsp;
    struct md_prof_ask *asks = NULL;
    const char **ids = NULL;
    size_t n;

    memset(&req, 0, sizeof(req));
    memset(&rsp, 0, sizeof(rsp));
    if (vrpc_decode_body(body, len, (xdrproc_t)xdr_mgmt_brick_profile_req,
                         &req, NULL) != 0) {
        (void)vrpc_send_reply(c, xid, VRPC_GARBAGE_ARGS, NULL, NULL, NULL, 0);
        return;
    }
    n = req.bricks.bricks_len;
    asks = calloc(n + 1, sizeof(*asks));
    ids = calloc(n + 1, sizeof(*ids));
    rsp.bricks.bricks_val = calloc(n + 1, sizeof(*rsp.bricks.bricks_val));
    if (asks == NULL || ids == NULL || rsp.bricks.bricks_val == NULL) {
        rsp.ret = -1;
        rsp.op_errno = ENOMEM;
    } else if (md_check_volname(req.volume, NULL) != 0 || req.mode < 0
               || req.mode >= IOS_DUMP_MODE_N) {
        rsp.ret = -1;
        rsp.op_errno = EINVAL;
    }
    for (size_t i = 0; rsp.ret == 0 && i < n; i++) {
        if (!md_brick_id_ok(req.bricks.bricks_val[i].id)) {
            rsp.ret = -1;
            rsp.op_errno = EINVAL;
        }
        ids[i] = req.bricks.bricks_val[i].id;
    }
    if (rsp.ret == 0) {
        md_prof_ask_local(st, req.volume, ids, n,
                          (enum ios_dump_mode)req.mode, asks);
        rsp.bricks.bricks_len = (u_int)n;
        for (size_t i = 0; i < n; i++) {
            mgmt_brick_dump *bd = &rsp.bricks.bricks_val[i];

            bd->status = asks[i].status;
            bd->seq = asks[i].seq;
            bd->why = asks[i].why;
            bd->text.text_val = asks[i].text;
            bd->text.text_len = asks[i].text != NULL
                                    ? (u_int)strlen(asks[i].text) : 0;
        }
    }
    (void)vrpc_send_reply(c, xid, VRPC_SUCCESS,
                          (xdrproc_t)xdr_mgmt_brick_profile_rsp, &rsp, NULL,
                          0);
    free(rsp.bricks.bricks_val);
    free(ids);
    md_prof_asks_free(asks, n);
    xdr_free((xdrproc_t)xdr_mgmt_brick_profile_req, (char *)&req);
}
