/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal: the self-heal daemons of this node (mortarfsd --heal, see
 * mortarfsd/heal/README.md) and the options that shape them.
 *
 * One daemon per started replicated volume with bricks on this node
 * (GlusterFS runs one glustershd for all volumes; one per volume keeps a
 * volume's heal from stalling another's and lets a graph change restart
 * only its own), unless `cluster.self-heal-daemon off`. It gets the
 * volume's client volfile as a file (RUN/heal/VOL.vol, written here, so
 * the daemon never waits on this mortard's worker), one --heal-brick per
 * local brick naming the brick's cluster/replicate, and writes its
 * progress to RUN/heal/VOL.state, which `volume heal VOL status` reads.
 *
 * `volume heal VOL full` asks for a crawl of everything: md_heal_round
 * writes RUN/heal/VOL.full (write, fsync, rename) and signals the
 * daemon, which walks its bricks and removes the file when done
 * (mortarfsd/heal/heal-crawl.c); a daemon restarted meanwhile finds the
 * file and crawls again. A node without bricks of the volume has nothing
 * to crawl or heal: the command succeeds there and the nodes with
 * bricks do the work (with peers, `heal VOL [full]` runs on every node
 * through a transaction: txn.c).
 *
 * md_heal_supervise runs with the brick supervisor's scan: it starts the
 * daemons that should run and are not (adopting running ones by their
 * pid files), restarts one that died with the bricks' back-off policy,
 * restarts one whose volume changed since it started (bricks, options:
 * the volume's version), and stops the ones no longer wanted (volume
 * stopped or deleted, heal disabled, no local brick left).
 * Threads: the worker thread with md_state.lock held.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "mortard.h"

/* mortard's own options for the daemons; no translator reads them. */
struct md_shd_conf {
    bool is_enabled;      /* shd.enable */
    uint64_t max_threads; /* shd.max-threads */
    uint64_t interval;    /* shd.interval, seconds */
};

static const vl_option_t md_shd_options[] = {
    VL_OPT_BOOL("enable", struct md_shd_conf, is_enabled, .def = "on",
                .flags = VL_OPT_SETTABLE,
                .aliases = {"cluster.self-heal-daemon"},
                .doc = "Run the self-heal daemon of a replicated volume on "
                       "every node with bricks of it (`volume heal VOL "
                       "enable|disable` sets this). Applied within a "
                       "second, no restart of bricks or clients."),
    VL_OPT_UINT("max-threads", struct md_shd_conf, max_threads, .min = 1,
                .max = 64, .def = "8", .flags = VL_OPT_SETTABLE,
                .aliases = {"cluster.shd-max-threads"},
                .doc = "Objects each self-heal daemon heals at once "
                       "(GlusterFS's default is 1). The daemon restarts "
                       "with the new value."),
    VL_OPT_UINT("interval", struct md_shd_conf, interval, .min = 1,
                .max = 86400, .def = "10", .flags = VL_OPT_SETTABLE,
                .aliases = {"cluster.heal-timeout"},
                .doc = "Seconds between the daemon's reads of its bricks' "
                       "heal indexes when a round healed nothing "
                       "(GlusterFS: 600; a round that healed something is "
                       "followed at once by the next)."),
    VL_OPT_END,
};

const vl_xlator_class_t md_shd_class = {
    .abi = VL_XLATOR_ABI,
    .type = "mortard/self-heal-daemon",
    .prefix = "shd",
    .options = md_shd_options,
    .doc = "The self-heal daemons mortard runs for replicated volumes.",
};

/* One daemon this node runs or ran. */
struct md_shd {
    char vol_id[VL_GFID_STR_LEN];
    char vol_name[MD_VOLNAME_MAX + 1];
    uint64_t version;     /* the volume's version it was started with */
    pid_t pid;            /* last seen running, 0 if none */
    bool is_seen;         /* wanted in the current scan */
    struct md_restart rs; /* restart policy state */
};

static struct {
    struct md_shd *v;
    size_t n;
    size_t cap;
} md_shd_tab;


void
md_heal_path(const struct md_state *st, const char *volname,
             const char *ext, char *buf, size_t len)
{
    snprintf(buf, len, "%s/heal/%s.%s", st->run_dir, volname, ext);
}


/* The value of one of this file's options for vol (default if unset). */
static const char *
md_shd_opt(const struct md_volume *vol, const char *key)
{
    char canon[64];
    const char *v;

    snprintf(canon, sizeof(canon), "shd.%s", key);
    v = md_vol_opt_get(vol, canon);
    if (v != NULL)
        return v;
    for (const vl_option_t *o = md_shd_options; o->key != NULL; o++)
        if (strcmp(o->key, key) == 0)
            return o->def;
    return "";
}


bool
md_heal_is_enabled(const struct md_volume *vol)
{
    const char *v = md_shd_opt(vol, "enable");

    return strcmp(v, "off") != 0 && strcmp(v, "no") != 0 &&
           strcmp(v, "false") != 0 && strcmp(v, "0") != 0 &&
           strcmp(v, "disable") != 0;
}


/* Whether this node should run vol's daemon. */
static bool
md_shd_wanted(const struct md_state *st, const struct md_volume *vol)
{
    if (vol->status != MD_VOL_STARTED || md_vol_replica(vol) < 2 ||
        !md_heal_is_enabled(vol))
        return false;
    for (size_t i = 0; i < vol->n_bricks; i++)
        if (md_brick_is_local(st, &vol->bricks[i]))
            return true;
    return false;
}


pid_t
md_heal_pid(const struct md_state *st, const char *volname)
{
    char path[4096];

    md_heal_path(st, volname, "pid", path, sizeof(path));
    return md_fsd_pid(path);
}


int
md_heal_volfile_write(const struct md_state *st, const struct md_volume *vol,
                      const char *ext, char *path, size_t len, vl_err_t *err)
{
    char dir[4096], logdir[4096], name[MD_VOLNAME_MAX + 32];
    char *spec;
    int rc;

    snprintf(dir, sizeof(dir), "%s/heal", st->run_dir);
    snprintf(logdir, sizeof(logdir), "%s/heal", st->log_dir);
    (void)mkdir(st->run_dir, 0755);
    (void)mkdir(dir, 0755);
    (void)mkdir(st->log_dir, 0755);
    (void)mkdir(logdir, 0755);
    md_heal_path(st, vol->name, ext, path, len);
    spec = md_volgen_client(vol);
    if (spec == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    snprintf(name, sizeof(name), "%s.%s", vol->name, ext);
    rc = md_write_atomic(dir, name, spec, strlen(spec), err);
    free(spec);
    return rc;
}


/* Starts vol's daemon: writes its volfile, spawns mortarfsd, which
 * returns once the daemon runs (or says why it cannot). */
static int
md_shd_start(struct md_state *st, const struct md_volume *vol,
             vl_err_t *err)
{
    char volf[4200], pidf[4200], statef[4200], logf[4400], dumpdir[4096];
    char portf[4200], threads[32], interval[32];
    char (*bricks)[4400] = NULL;
    char (*xopts)[300] = NULL;
    char **argv = NULL;
    size_t n_sets = md_vol_n_sets(vol);
    int argc = 0, rc;
    size_t nb = 0;

    rc = md_heal_volfile_write(st, vol, "vol", volf, sizeof(volf), err);
    if (rc != 0)
        return rc;
    md_heal_path(st, vol->name, "pid", pidf, sizeof(pidf));
    md_heal_path(st, vol->name, "state", statef, sizeof(statef));
    snprintf(logf, sizeof(logf), "%s/heal/%s.log", st->log_dir, vol->name);
    snprintf(dumpdir, sizeof(dumpdir), "%s/dumps", st->run_dir);
    bricks = calloc(vol->n_bricks, sizeof(*bricks));
    xopts = calloc(n_sets, sizeof(*xopts));
    argv = calloc(22 + 2 * (vol->n_bricks + n_sets) + 1, sizeof(*argv));
    if (bricks == NULL || xopts == NULL || argv == NULL) {
        free(bricks);
        free(xopts);
        free(argv);
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    snprintf(threads, sizeof(threads), "%s", md_shd_opt(vol, "max-threads"));
    snprintf(interval, sizeof(interval), "%s", md_shd_opt(vol, "interval"));
    argv[argc++] = st->mortarfsd;
    argv[argc++] = "--heal";
    argv[argc++] = "--volfile";
    argv[argc++] = volf;
    /* Separate words: md_pid_has_pidfile looks for them. */
    argv[argc++] = "--pid-file";
    argv[argc++] = pidf;
    argv[argc++] = "--log-file";
    argv[argc++] = logf;
    argv[argc++] = "--dump-dir";
    argv[argc++] = dumpdir;
    argv[argc++] = "--heal-state";
    argv[argc++] = statef;
    argv[argc++] = "--heal-threads";
    argv[argc++] = threads;
    argv[argc++] = "--heal-interval";
    argv[argc++] = interval;
    /* diagnostics.brick-metrics covers the volume's daemons too: a port
     * of the kernel's choice, in RUN/heal/VOL.metrics-port. */
    md_heal_path(st, vol->name, "metrics-port", portf, sizeof(portf));
    if (md_brick_metrics_on(vol)) {
        argv[argc++] = "--metrics-port";
        argv[argc++] = "0";
        argv[argc++] = "--metrics-port-file";
        argv[argc++] = portf;
        argv[argc++] = "--metrics-volume";
        argv[argc++] = (char *)vol->name;
    } else {
        (void)unlink(portf); /* from a run with metrics */
    }
    for (size_t i = 0; i < vol->n_bricks; i++) {
        char set[256];

        if (!md_brick_is_local(st, &vol->bricks[i]))
            continue;
        md_vol_set_name(vol, i / md_vol_replica(vol), set, sizeof(set));
        snprintf(bricks[nb], sizeof(bricks[nb]), "%s=%s", set,
                 vol->bricks[i].path);
        argv[argc++] = "--heal-brick";
        argv[argc++] = bricks[nb++];
    }
    /* The daemon's own lookups must not start background heals beside
     * the ones it asks for (a key heal would then wait for one and
     * answer "clean", and its counts would be off). */
    for (size_t i = 0; i < n_sets; i++) {
        char set[256];

        md_vol_set_name(vol, i, set, sizeof(set));
        snprintf(xopts[i], sizeof(xopts[i]),
                 "%s.background-self-heal-count=0", set);
        argv[argc++] = "--xlator-option";
        argv[argc++] = xopts[i];
    }
    argv[argc] = NULL;
    rc = md_fsd_spawn(st, argv, err);
    free(bricks);
    free(xopts);
    free(argv);
    if (rc == -EIO) {
        vl_err_t why = *err;

        vl_err_set(err, "self-heal daemon of %s failed to start: %s",
                   vol->name, why.msg);
    }
    return rc;
}


/* Stops the daemon of volname (TERM, then KILL). */
static void
md_shd_stop(const struct md_state *st, const char *volname)
{
    char pidf[4200], what[MD_VOLNAME_MAX + 32];
    pid_t pid = md_heal_pid(st, volname);

    if (pid == 0)
        return;
    md_heal_path(st, volname, "pid", pidf, sizeof(pidf));
    snprintf(what, sizeof(what), "self-heal daemon of %s", volname);
    if (!md_fsd_kill(pid, pidf, what))
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "%s (pid %ld) does not die", what,
                (long)pid);
}


static struct md_shd *
md_shd_get(const struct md_volume *vol)
{
    struct md_shd *e;

    for (size_t i = 0; i < md_shd_tab.n; i++)
        if (strcmp(md_shd_tab.v[i].vol_id, vol->id) == 0)
            return &md_shd_tab.v[i];
    if (md_shd_tab.n == md_shd_tab.cap) {
        size_t cap = md_shd_tab.cap != 0 ? md_shd_tab.cap * 2 : 8;
        struct md_shd *v = realloc(md_shd_tab.v, cap * sizeof(*v));

        if (v == NULL)
            return NULL;
        md_shd_tab.v = v;
        md_shd_tab.cap = cap;
    }
    e = &md_shd_tab.v[md_shd_tab.n++];
    memset(e, 0, sizeof(*e));
    snprintf(e->vol_id, sizeof(e->vol_id), "%s", vol->id);
    snprintf(e->vol_name, sizeof(e->vol_name), "%s", vol->name);
    return e;
}


/* One volume whose daemon should run here. */
static void
md_shd_keep(struct md_state *st, const struct md_volume *vol, int64_t now)
{
    struct md_shd *e = md_shd_get(vol);
    pid_t pid = md_heal_pid(st, vol->name);
    vl_err_t err = {.msg = ""};
    int64_t delay;

    if (e == NULL)
        return;
    e->is_seen = true;
    if (pid != 0 && e->pid == pid && e->version != vol->version) {
        vl_glog(MD_DOMAIN, VL_LOG_INFO, "volume %s changed: restarting its "
                "self-heal daemon", vol->name);
        md_shd_stop(st, vol->name);
        pid = 0;
        e->pid = 0;
    } else if (pid != 0) {
        if (e->pid != pid)
            e->version = vol->version; /* adopted (mortard restarted) */
        e->pid = pid;
        return;
    }
    if (e->pid != 0) {
        vl_glog(MD_DOMAIN, VL_LOG_WARNING, "self-heal daemon of %s (pid "
                "%ld) died", vol->name, (long)e->pid);
        e->pid = 0;
        delay = md_restart_on_death(&e->rs, &md_restart_default, now);
        if (delay < 0)
            vl_glog(MD_DOMAIN, VL_LOG_ERROR, "self-heal daemon of %s keeps "
                    "dying: giving up until 'volume start %s force' (see "
                    "its log)", vol->name, vol->name);
    }
    if (e->rs.is_given_up || now < e->rs.next_ms)
        return;
    if (md_shd_start(st, vol, &err) != 0) {
        vl_glog(MD_DOMAIN, VL_LOG_WARNING, "%s", err.msg);
        (void)md_restart_on_death(&e->rs, &md_restart_default, now);
        return;
    }
    e->pid = md_heal_pid(st, vol->name);
    e->version = vol->version;
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "self-heal daemon of %s started (pid "
            "%ld)", vol->name, (long)e->pid);
}


void
md_heal_supervise(struct md_state *st, int64_t now)
{
    size_t keep = 0;

    for (size_t i = 0; i < md_shd_tab.n; i++)
        md_shd_tab.v[i].is_seen = false;
    for (struct md_volume *v = st->vols; v != NULL; v = v->next)
        if (md_shd_wanted(st, v))
            md_shd_keep(st, v, now);
    for (size_t i = 0; i < md_shd_tab.n; i++) {
        struct md_shd *e = &md_shd_tab.v[i];

        if (e->is_seen) {
            md_shd_tab.v[keep++] = *e;
            continue;
        }
        if (md_heal_pid(st, e->vol_name) != 0) {
            vl_glog(MD_DOMAIN, VL_LOG_INFO, "stopping the self-heal daemon "
                    "of %s (no longer wanted on this node)", e->vol_name);
            md_shd_stop(st, e->vol_name);
        }
    }
    md_shd_tab.n = keep;
}


void
md_heal_reset(const struct md_volume *vol)
{
    for (size_t i = 0; i < md_shd_tab.n; i++)
        if (strcmp(md_shd_tab.v[i].vol_id, vol->id) == 0)
            md_restart_reset(&md_shd_tab.v[i].rs);
}


int
md_heal_kick(const struct md_state *st, const char *volname)
{
    pid_t pid = md_heal_pid(st, volname);

    if (pid == 0)
        return -ESRCH;
    return kill(pid, SIGUSR2) == 0 ? 0 : -errno;
}


/* Writes RUN/heal/VOL.full, a request for a full crawl (its contents
 * differ each time: a crawl that served an older one leaves it). */
static int
md_heal_full_request(const struct md_state *st, const char *volname,
                     vl_err_t *err)
{
    char dir[4096], name[MD_VOLNAME_MAX + 8], id[VL_GFID_STR_LEN];
    char text[128];
    vl_gfid_t g;
    int n;

    vl_gfid_generate(&g);
    vl_gfid_to_str(&g, id);
    snprintf(dir, sizeof(dir), "%s/heal", st->run_dir);
    snprintf(name, sizeof(name), "%s.full", volname);
    n = snprintf(text, sizeof(text), "requested=%lld\nid=%s\n",
                 (long long)time(NULL), id);
    return md_write_atomic(dir, name, text, (size_t)n, err);
}


int
md_heal_round(const struct md_state *st, const struct md_volume *vol,
              bool is_full, vl_err_t *err)
{
    bool has_local = false;
    int rc;

    for (size_t i = 0; i < vol->n_bricks; i++)
        has_local = has_local || md_brick_is_local(st, &vol->bricks[i]);
    if (!has_local)
        return 0; /* nothing here: the nodes with bricks heal */
    if (md_heal_pid(st, vol->name) == 0) {
        vl_err_set(err, "Self-heal daemon is not running. Check self-heal "
                   "daemon log file.");
        return -ESRCH;
    }
    if (is_full) {
        rc = md_heal_full_request(st, vol->name, err);
        if (rc != 0)
            return rc;
    }
    rc = md_heal_kick(st, vol->name);
    if (rc == -ESRCH && is_full)
        return 0; /* died since: restarted, it finds the request */
    if (rc != 0)
        vl_err_set(err, "Self-heal daemon is not running. Check self-heal "
                   "daemon log file.");
    return rc;
}


void
md_heal_free(void)
{
    free(md_shd_tab.v);
    memset(&md_shd_tab, 0, sizeof(md_shd_tab));
}
