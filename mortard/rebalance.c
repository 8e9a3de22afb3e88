/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebalance: the migration process of a distribute volume and
 * `volume rebalance VOL start [force] | stop | status`,
 * `volume rebalance VOL fix-layout start`.
 *
 * The work is done by `mortarfsd --rebalance` (one per volume and kind,
 * on the node where the command ran), which fetches the client volfile
 * from this mortard over TCP. mortard spawns it in the foreground (-N) in
 * its own session and does not wait for it: the worker thread that would
 * wait is the one that answers its GETSPEC. A detached thread reaps it.
 * Files, under <run-dir>/rebalance/:
 *   VOL.state / VOL.pid          rebalance
 *   VOL.remove.state / .pid      remove-brick migration
 * The state file is written by the process (key=value, crash-safe) and
 * only read here; it is kept across runs so that `start` resumes from
 * its cursor. A pid is trusted only while /proc/PID/cmdline shows that
 * pid file (as for bricks), which is how a restarted mortard finds a
 * running rebalance again and never starts a second one; a process that
 * died while its state file says running is reported as failed.
 * Threads: the worker thread with md_state.lock held; one short-lived
 * reaper thread per spawned process (waitpid only).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mortard.h"

extern char **environ;

#define MD_REBAL_STOP_WAIT_MS 60000
/* How long start waits for the process to hold the migration lock (its
 * graph waits up to 30 s for the bricks; most starts take 0.1-0.3 s). */
#define MD_REBAL_READY_WAIT_MS 35000

static void md_last_line(const char *path, char *buf, size_t len);

/* What the state file says (missing keys stay 0 / -1 / ""). */
struct md_rebal_info {
    char status[16];         /* running|completed|failed|stopped */
    long long pid;           /* the process */
    long long started;       /* unix seconds */
    long long updated;       /* unix seconds of the last write */
    long long scanned_files; /* files looked at */
    long long scanned_dirs;  /* directories crawled */
    long long moved_files;   /* files migrated */
    long long moved_bytes;   /* bytes migrated */
    long long failed_files;  /* migrations that failed */
    long long skipped_files; /* files left in place (hard links, space) */
    long long total_bytes;   /* estimate of what is to move */
    long long eta_seconds;   /* -1 unknown */
    char error[512];         /* last failure */
};


static void
md_rebal_path(const struct md_state *st, const struct md_volume *vol,
              bool is_remove, const char *ext, char *buf, size_t len)
{
    snprintf(buf, len, "%s/rebalance/%s%s.%s", st->run_dir, vol->name,
             is_remove ? ".remove" : "", ext);
}


pid_t
md_rebal_pid(const struct md_state *st, const struct md_volume *vol,
             bool is_remove)
{
    char path[4096], *text = NULL, *end;
    long pid;

    md_rebal_path(st, vol, is_remove, "pid", path, sizeof(path));
    if (md_read_file(path, &text, NULL) != 0)
        return 0;
    pid = strtol(text, &end, 10);
    if (end == text || pid <= 1 || (*end != '\n' && *end != '\0')) {
        free(text);
        return 0;
    }
    free(text);
    return md_pid_has_pidfile((pid_t)pid, path) ? (pid_t)pid : 0;
}


static int
md_rebal_kv(const char *key, const char *value, int line, void *arg,
            vl_err_t *err)
{
    struct md_rebal_info *in = arg;
    static const struct {
        const char *key;   /* state file key */
        size_t off;        /* its field */
    } nums[] = {
        {"pid", offsetof(struct md_rebal_info, pid)},
        {"started", offsetof(struct md_rebal_info, started)},
        {"updated", offsetof(struct md_rebal_info, updated)},
        {"scanned_files", offsetof(struct md_rebal_info, scanned_files)},
        {"scanned_dirs", offsetof(struct md_rebal_info, scanned_dirs)},
        {"moved_files", offsetof(struct md_rebal_info, moved_files)},
        {"moved_bytes", offsetof(struct md_rebal_info, moved_bytes)},
        {"failed_files", offsetof(struct md_rebal_info, failed_files)},
        {"skipped_files", offsetof(struct md_rebal_info, skipped_files)},
        {"total_bytes", offsetof(struct md_rebal_info, total_bytes)},
        {"eta_seconds", offsetof(struct md_rebal_info, eta_seconds)},
    };

    (void)line;
    (void)err;
    if (strcmp(key, "status") == 0) {
        snprintf(in->status, sizeof(in->status), "%s", value);
        return 0;
    }
    if (strcmp(key, "error") == 0) {
        snprintf(in->error, sizeof(in->error), "%s", value);
        return 0;
    }
    for (size_t i = 0; i < VL_ARRAY_SIZE(nums); i++)
        if (strcmp(key, nums[i].key) == 0) {
            *(long long *)((char *)in + nums[i].off) =
                strtoll(value, NULL, 10);
            return 0;
        }
    return 0; /* keys of newer versions (cursor, ...) are not shown */
}


/* Reads the state file; -ENOENT if there is none. */
static int
md_rebal_read(const struct md_state *st, const struct md_volume *vol,
              bool is_remove, struct md_rebal_info *in)
{
    char path[4096], *text = NULL;
    vl_err_t err = {.msg = ""};
    int rc;

    memset(in, 0, sizeof(*in));
    in->eta_seconds = -1;
    md_rebal_path(st, vol, is_remove, "state", path, sizeof(path));
    rc = md_read_file(path, &text, NULL);
    if (rc != 0)
        return rc;
    rc = md_kv_parse(text, path, md_rebal_kv, in, &err);
    free(text);
    if (rc != 0)
        vl_glog(MD_DOMAIN, VL_LOG_WARNING, "%s", err.msg);
    return 0;
}


/* The pid of the last process mortard spawned (VOL[.remove].spawn), or
 * 0. */
static pid_t
md_rebal_spawned(const struct md_state *st, const struct md_volume *vol,
                 bool is_remove)
{
    char path[4096], *text = NULL;
    long pid;

    md_rebal_path(st, vol, is_remove, "spawn", path, sizeof(path));
    if (md_read_file(path, &text, NULL) != 0)
        return 0;
    pid = strtol(text, NULL, 10);
    free(text);
    return pid > 1 ? (pid_t)pid : 0;
}


/* The last spawned process is gone without ever writing the state file
 * (it failed at startup: bad volfile, bricks down). */
static bool
md_rebal_lost(const struct md_state *st, const struct md_volume *vol,
              bool is_remove, int read_rc, const struct md_rebal_info *in)
{
    pid_t sp = md_rebal_spawned(st, vol, is_remove);

    return sp != 0 && (read_rc != 0 || in->pid != (long long)sp);
}


/* The status the CLI shows, given the process and the state file. */
static const char *
md_rebal_eff(pid_t pid, int read_rc, const struct md_rebal_info *in,
             bool is_lost)
{
    if (pid != 0)
        return "in progress";
    if (is_lost)
        return "failed";
    if (read_rc != 0)
        return NULL;
    if (strcmp(in->status, "completed") == 0)
        return "completed";
    if (strcmp(in->status, "stopped") == 0)
        return "stopped";
    /* "failed", or "running" without a process: it died. */
    return "failed";
}


void
md_rebal_view_local(const struct md_state *st, const char *volname,
                    bool is_remove, struct md_rebal_view *out)
{
    struct md_volume v;
    struct md_rebal_info in;
    const char *eff;
    long long now = (long long)time(NULL);
    pid_t pid;
    int read_rc;

    memset(out, 0, sizeof(*out));
    snprintf(out->node, sizeof(out->node), "localhost");
    out->eta_seconds = -1;
    memset(&v, 0, sizeof(v));
    snprintf(v.name, sizeof(v.name), "%s", volname);
    pid = md_rebal_pid(st, &v, is_remove);
    read_rc = md_rebal_read(st, &v, is_remove, &in);
    out->is_running = pid != 0;
    out->is_lost = pid == 0 && md_rebal_lost(st, &v, is_remove, read_rc,
                                             &in);
    eff = md_rebal_eff(pid, read_rc, &in, out->is_lost);
    if (eff == NULL)
        return;
    snprintf(out->status, sizeof(out->status), "%s", eff);
    out->died_running = pid == 0 && read_rc == 0 &&
                        strcmp(in.status, "running") == 0;
    out->moved_files = in.moved_files;
    out->moved_bytes = in.moved_bytes;
    out->scanned_files = in.scanned_files;
    out->scanned_dirs = in.scanned_dirs;
    out->failed_files = in.failed_files;
    out->skipped_files = in.skipped_files;
    out->eta_seconds = pid != 0 ? in.eta_seconds : -1;
    out->run_seconds = in.started == 0 ? 0
        : (pid != 0 ? now : (in.updated != 0 ? in.updated : now)) -
              in.started;
    out->started = in.started;
    snprintf(out->error, sizeof(out->error), "%s", in.error);
    if (out->is_lost && out->error[0] == '\0') {
        char log[4200];

        snprintf(log, sizeof(log), "%s/rebalance/%s%s.log", st->log_dir,
                 volname, is_remove ? ".remove" : "");
        md_last_line(log, out->error, sizeof(out->error));
    }
}


const char *
md_rebal_busy_here(const struct md_state *st, const struct md_volume *vol,
                   bool is_remove_ok)
{
    if (md_rebal_pid(st, vol, false) != 0)
        return "a rebalance is running (stop it or wait)";
    if (!is_remove_ok && md_rebal_pid(st, vol, true) != 0)
        return "a remove-brick migration is running";
    return NULL;
}


void
md_rebal_forget(const struct md_state *st, const struct md_volume *vol,
                bool is_remove)
{
    char path[4096];

    md_rebal_path(st, vol, is_remove, "state", path, sizeof(path));
    (void)unlink(path);
    md_rebal_path(st, vol, is_remove, "spawn", path, sizeof(path));
    (void)unlink(path);
}


static void *
md_rebal_reaper(void *arg)
{
    pid_t pid = (pid_t)(intptr_t)arg;
    int status;

    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return NULL;
}


/* Writes pid into the pid file (mortarfsd writes the same number), so
 * that the process is known before it got that far. */
static void
md_rebal_pid_write(const char *path, pid_t pid)
{
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%ld\n", (long)pid);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

    if (fd < 0)
        return;
    if (pwrite(fd, buf, (size_t)n, 0) == n)
        (void)ftruncate(fd, n);
    close(fd);
}


/* The last non-empty line of a file, for an early-exit reason. */
static void
md_last_line(const char *path, char *buf, size_t len)
{
    char *text = NULL, *end, *p;

    buf[0] = '\0';
    if (md_read_file(path, &text, NULL) != 0)
        return;
    end = text + strlen(text);
    while (end > text && (end[-1] == '\n' || end[-1] == ' '))
        *--end = '\0';
    p = strrchr(text, '\n');
    snprintf(buf, len, "%s", p != NULL ? p + 1 : text);
    free(text);
}


/* Waits for the process's ready report (mortarfsd --ready-fd): 0 once
 * it holds the migration lock and its state file names it, -EBUSY or
 * -EIO with err set when it cannot run, 1 when it said nothing within
 * MD_REBAL_READY_WAIT_MS (it may still be connecting to a slow brick;
 * the status will tell). */
static int
md_rebal_wait_ready(int rfd, pid_t child, const char *log, vl_err_t *err)
{
    char buf[1024], msg[512];
    size_t got = 0;
    int waited = 0, status;

    while (got < sizeof(buf) - 1) {
        struct pollfd pfd = {.fd = rfd, .events = POLLIN};
        int left = MD_REBAL_READY_WAIT_MS - waited;
        struct timespec t0, t1;
        ssize_t n;
        int pr;

        if (left <= 0)
            return 1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pr = poll(&pfd, 1, left);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        waited += (int)((t1.tv_sec - t0.tv_sec) * 1000
                        + (t1.tv_nsec - t0.tv_nsec) / 1000000);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return pr == 0 ? 1 : -errno;
        n = read(rfd, buf + got, sizeof(buf) - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* closed: the report is complete (or never came) */
        got += (size_t)n;
    }
    buf[got] = '\0';
    if (got > 0 && buf[0] == '0')
        return 0;
    if (got > 1 && buf[0] == '1') {
        vl_err_set(err, "%s", buf + 1);
        return strstr(buf + 1, "migration lock") != NULL ? -EBUSY : -EIO;
    }
    /* Closed without a word: it died before it could say. */
    for (int ms = 0; ms < 1000; ms += 20) {
        if (waitpid(child, &status, WNOHANG) == child)
            break;
        usleep(20 * 1000);
    }
    md_last_line(log, msg, sizeof(msg));
    vl_err_set(err, "the rebalance process exited at once: %s (log %s)",
               msg[0] != '\0' ? msg : "no reason given", log);
    return -EIO;
}


int
md_rebal_start(struct md_state *st, const struct md_volume *vol,
               bool is_remove, bool is_fix_layout, vl_err_t *err)
{
    char dir[4096], state[4200], pidf[4200], logdir[4096], log[4200];
    char volf[4200], vfarg[4300], statearg[4300], thr[300], vfname[300];
    const char *throttle = md_vol_opt_get(vol, "cluster.rebal-throttle");
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    pthread_t reaper;
    pthread_attr_t ta;
    char *argv[24];
    char portf[4200];
    char *spec;
    int argc = 0, rc, status, ready[2], wfd;
    pid_t child;

    snprintf(dir, sizeof(dir), "%s/rebalance", st->run_dir);
    snprintf(logdir, sizeof(logdir), "%s/rebalance", st->log_dir);
    (void)mkdir(st->run_dir, 0755);
    (void)mkdir(dir, 0755);
    (void)mkdir(st->log_dir, 0755);
    (void)mkdir(logdir, 0755);
    md_rebal_path(st, vol, is_remove, "state", state, sizeof(state));
    md_rebal_path(st, vol, is_remove, "pid", pidf, sizeof(pidf));
    md_rebal_path(st, vol, is_remove, "vol", volf, sizeof(volf));
    snprintf(log, sizeof(log), "%s/%s%s.log", logdir, vol->name,
             is_remove ? ".remove" : "");
    /* The client volfile GETSPEC would give, as a file: the process must
     * not need this mortard's worker, which waits for it below. */
    spec = md_volgen_client(vol);
    if (spec == NULL) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    snprintf(vfname, sizeof(vfname), "%s%s.vol", vol->name,
             is_remove ? ".remove" : "");
    rc = md_write_atomic(dir, vfname, spec, strlen(spec), err);
    free(spec);
    if (rc != 0)
        return rc;
    if (pipe2(ready, O_CLOEXEC) != 0) {
        vl_err_set(err, "pipe: %s", strerror(errno));
        return -errno;
    }
    /* Above the descriptors the child is given (0-3). */
    wfd = fcntl(ready[1], F_DUPFD_CLOEXEC, 10);
    close(ready[1]);
    if (wfd < 0) {
        rc = -errno;
        close(ready[0]);
        vl_err_set(err, "fcntl: %s", strerror(-rc));
        return rc;
    }
    snprintf(vfarg, sizeof(vfarg), "--volfile=%s", volf);
    snprintf(statearg, sizeof(statearg), "--rebalance-state=%s", state);
    argv[argc++] = st->mortarfsd;
    argv[argc++] = "--rebalance";
    argv[argc++] = vfarg;
    argv[argc++] = statearg;
    if (is_fix_layout)
        argv[argc++] = "--fix-layout";
    if (throttle != NULL) {
        snprintf(thr, sizeof(thr), "--throttle=%s", throttle);
        argv[argc++] = thr;
    }
    argv[argc++] = "-N";
    argv[argc++] = "--ready-fd=3";
    /* Separate words: the /proc cmdline check looks for them. */
    argv[argc++] = "--pid-file";
    argv[argc++] = pidf;
    argv[argc++] = "--log-file";
    argv[argc++] = log;
    /* diagnostics.brick-metrics covers the volume's daemons too: a port
     * of the kernel's choice, in RUN/rebalance/VOL[.remove].metrics-port. */
    md_rebal_path(st, vol, is_remove, "metrics-port", portf, sizeof(portf));
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
    argv[argc] = NULL;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_APPEND |
                                     O_CREAT, 0644);
    posix_spawn_file_actions_adddup2(&fa, wfd, 3);
    posix_spawnattr_init(&attr);
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    /* Its own session: it outlives a mortard restart. */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETSID);
    rc = -posix_spawnp(&child, st->mortarfsd, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(wfd); /* the child's copy is the only writer now */
    if (rc != 0) {
        close(ready[0]);
        vl_err_set(err, "starting %s: %s", st->mortarfsd, strerror(-rc));
        return rc;
    }
    md_rebal_pid_write(pidf, child);
    /* Remembered so that a process that dies before it writes the state
     * file shows as failed, not as the previous run's result. */
    {
        char sp[4200], line[32];
        vl_err_t e2 = {.msg = ""};
        int n = snprintf(line, sizeof(line), "%ld\n", (long)child);

        snprintf(sp, sizeof(sp), "%s%s.spawn", vol->name,
                 is_remove ? ".remove" : "");
        if (md_write_atomic(dir, sp, line, (size_t)n, &e2) != 0)
            vl_glog(MD_DOMAIN, VL_LOG_WARNING, "%s", e2.msg);
    }
    /* Until it holds the migration lock, so that a start refused there
     * (another node's migration that this mortard cannot see) fails
     * here, and a bad volfile or brick says why. */
    rc = md_rebal_wait_ready(ready[0], child, log, err);
    close(ready[0]);
    if (rc < 0) {
        char sp[4200];

        /* Refused before it touched the state file: the last task's
         * result stays what status shows. */
        md_rebal_path(st, vol, is_remove, "spawn", sp, sizeof(sp));
        if (md_rebal_spawned(st, vol, is_remove) == child)
            (void)unlink(sp);
    } else if (rc == 1) {
        vl_glog(MD_DOMAIN, VL_LOG_WARNING, "the rebalance process of %s "
                "(pid %ld) has not reported within %d s; status will tell "
                "how it goes", vol->name, (long)child,
                MD_REBAL_READY_WAIT_MS / 1000);
    }
    if (waitpid(child, &status, WNOHANG) == 0) {
        pthread_attr_init(&ta);
        pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&reaper, &ta, md_rebal_reaper,
                           (void *)(intptr_t)child) != 0)
            vl_glog(MD_DOMAIN, VL_LOG_WARNING, "no reaper thread for the "
                    "rebalance process %ld: it stays a zombie when it "
                    "exits", (long)child);
        pthread_attr_destroy(&ta);
    }
    if (rc < 0)
        return rc;
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "%s of %s started (pid %ld, state %s)",
            is_remove ? "remove-brick migration" : "rebalance", vol->name,
            (long)child, state);
    return 0;
}


int
md_rebal_stop(struct md_state *st, const struct md_volume *vol,
              bool is_remove, vl_err_t *err)
{
    char pidf[4200];
    pid_t pid = md_rebal_pid(st, vol, is_remove);

    if (pid == 0)
        return 0;
    md_rebal_path(st, vol, is_remove, "pid", pidf, sizeof(pidf));
    (void)kill(pid, SIGTERM);
    /* It finishes or abandons the file in flight, then exits. */
    for (int ms = 0; ms < MD_REBAL_STOP_WAIT_MS; ms += 50) {
        if (!md_pid_has_pidfile(pid, pidf))
            return 0;
        usleep(50 * 1000);
    }
    vl_err_set(err, "the rebalance process of %s (pid %ld) did not stop "
               "within %d s", vol->name, (long)pid,
               MD_REBAL_STOP_WAIT_MS / 1000);
    return -EBUSY;
}


/* "1.5MB" style, GlusterFS's units. */
static void
md_human_size(long long n, char *buf, size_t len)
{
    static const char *const units[] = {"Bytes", "KB", "MB", "GB", "TB",
                                        "PB"};
    double v = (double)(n < 0 ? 0 : n);
    size_t u = 0;

    while (v >= 1024.0 && u + 1 < VL_ARRAY_SIZE(units)) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%lld%s", n < 0 ? 0 : n, units[0]);
    else
        snprintf(buf, len, "%.1f%s", v, units[u]);
}


static void
md_hms(long long s, char *buf, size_t len)
{
    if (s < 0)
        s = 0;
    snprintf(buf, len, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60,
             s % 60);
}


/* One row of the status table, and its node in the tree. */
static void
md_rebal_row(struct md_result *r, struct md_node *t,
             const struct md_rebal_view *w, const char *node_id)
{
    char size[32], rt[32];
    struct md_node *n;

    md_human_size(w->moved_bytes, size, sizeof(size));
    md_hms(w->run_seconds, rt, sizeof(rt));
    md_sbuf_printf(&r->text, "%40s %16lld %13s %13lld %13lld %13lld %20s "
                   "%18s\n", w->node, w->moved_files, size,
                   w->scanned_files, w->failed_files, w->skipped_files,
                   w->status, rt);
    n = md_node_add(t, "node", NULL);
    md_node_add(n, "nodeName", w->node);
    if (node_id != NULL)
        md_node_add(n, "id", node_id);
    md_node_addf(n, "files", "%lld", w->moved_files);
    md_node_addf(n, "size", "%lld", w->moved_bytes);
    md_node_addf(n, "lookups", "%lld", w->scanned_files);
    md_node_addf(n, "dirs", "%lld", w->scanned_dirs);
    md_node_addf(n, "failures", "%lld", w->failed_files);
    md_node_addf(n, "skipped", "%lld", w->skipped_files);
    md_node_add(n, "statusStr", w->status);
    md_node_addf(n, "runtime", "%lld", w->run_seconds);
    md_node_addf(n, "eta", "%lld", w->is_running ? w->eta_seconds : 0);
    if (w->error[0] != '\0')
        md_node_add(n, "error", w->error);
}


/* What follows the table for one node's task: its time left while it
 * runs, why it failed. */
static void
md_rebal_notes(struct md_state *st, const struct md_volume *vol,
               bool is_remove, const struct md_rebal_view *w, bool is_local,
               struct md_result *r)
{
    const char *what = is_remove ? "remove-brick" : "rebalance";
    const char *on = is_local ? "" : " on node ";
    const char *node = is_local ? "" : w->node;
    char eta[32], log[4200];

    if (w->is_running) {
        if (w->eta_seconds >= 0) {
            md_hms(w->eta_seconds, eta, sizeof(eta));
            md_sbuf_printf(&r->text, "Estimated time left for %s to "
                           "complete%s%s : %s\n", what, on, node, eta);
        } else {
            md_sbuf_printf(&r->text, "Estimated time left for %s to "
                           "complete%s%s : unknown (still estimating)\n",
                           what, on, node);
        }
    }
    snprintf(log, sizeof(log), "%s/rebalance/%s%s.log", st->log_dir,
             vol->name, is_remove ? ".remove" : "");
    if (w->is_lost)
        md_sbuf_printf(&r->text, "The %s process%s%s exited before it "
                       "started working: %s (see %s%s%s)\n", what, on, node,
                       w->error, is_local ? "" : "the log ", log,
                       is_local ? "" : " there");
    else if (w->died_running)
        md_sbuf_printf(&r->text, "The %s process%s%s died while running "
                       "(see %s%s); run 'volume %s %s start'%s to resume "
                       "where it stopped.\n", what, on, node, log,
                       is_local ? "" : " there", what,
                       is_remove ? "VOL BRICK..." : vol->name,
                       is_local ? "" : " on that node");
    if (w->error[0] != '\0')
        md_sbuf_printf(&r->text, "Last error%s%s: %s\n", on, node,
                       w->error);
}


int
md_rebal_show(struct md_state *st, const struct md_volume *vol,
              bool is_remove, struct md_result *r, vl_err_t *err)
{
    struct md_rebal_views views = {0};
    struct md_node *t;
    size_t rows = 0;

    if (md_rebal_gather(st, vol->name, is_remove, &views) != 0) {
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < views.n; i++)
        if (views.v[i].status[0] != '\0')
            rows++;
    if (rows == 0) {
        for (size_t i = 1; i < views.n; i++)
            if (views.v[i].err[0] != '\0')
                md_sbuf_printf(&r->text, "Node %s did not answer: %s\n",
                               views.v[i].node, views.v[i].err);
        vl_err_set(err, "%s not started for volume %s",
                   is_remove ? "remove-brick" : "Rebalance", vol->name);
        md_rebal_views_free(&views);
        return -ENOENT;
    }
    md_sbuf_printf(&r->text, "%40s %16s %13s %13s %13s %13s %20s %18s\n",
                   "Node", "Rebalanced-files", "size", "scanned",
                   "failures", "skipped", "status", "run time in h:m:s");
    md_sbuf_printf(&r->text, "%40s %16s %13s %13s %13s %13s %20s %18s\n",
                   "---------", "-----------", "-----------",
                   "-----------", "-----------", "-----------",
                   "------------", "--------------");
    t = md_node_add(r->root, "volRebalance", NULL);
    md_node_add(t, "volname", vol->name);
    md_node_add(t, "op", is_remove ? "remove-brick" : "rebalance");
    md_node_addf(t, "nodeCount", "%zu", rows);
    for (size_t i = 0; i < views.n; i++)
        if (views.v[i].status[0] != '\0')
            md_rebal_row(r, t, &views.v[i], i == 0 ? st->node_id : NULL);
    for (size_t i = 0; i < views.n; i++) {
        if (views.v[i].status[0] != '\0')
            md_rebal_notes(st, vol, is_remove, &views.v[i], i == 0, r);
        else if (views.v[i].err[0] != '\0')
            md_sbuf_printf(&r->text, "Node %s did not answer: %s\n",
                           views.v[i].node, views.v[i].err);
    }
    md_rebal_views_free(&views);
    return 0;
}


void
md_rebal_task_status(struct md_state *st, const struct md_volume *vol,
                     struct md_result *r, struct md_node *v)
{
    struct md_rebal_views views = {0};
    const struct md_rebal_view *w = NULL;
    bool is_remove = false;
    struct md_node *tl, *t;

    for (size_t i = 0; i < vol->n_bricks; i++)
        if (vol->bricks[i].is_decommissioned)
            is_remove = true;
    if (md_rebal_gather(st, vol->name, is_remove, &views) == 0)
        w = md_rebal_views_pick(&views);
    tl = md_node_add(v, "tasks", NULL);
    if (tl != NULL)
        tl->is_list = true;
    md_sbuf_printf(&r->text, "Task Status of Volume %s\n-------------------"
                   "-----------------------------------------------------"
                   "-------\n", vol->name);
    if (w == NULL) {
        md_sbuf_printf(&r->text, "There are no active volume tasks\n");
        md_rebal_views_free(&views);
        return;
    }
    md_sbuf_printf(&r->text, "Task                 : %s\n",
                   is_remove ? "Remove brick" : "Rebalance");
    t = md_node_add(tl, "task", NULL);
    md_node_add(t, "type", is_remove ? "Remove brick" : "Rebalance");
    if (is_remove) {
        md_sbuf_printf(&r->text, "Removed bricks:\n");
        for (size_t i = 0; i < vol->n_bricks; i++)
            if (vol->bricks[i].is_decommissioned) {
                md_sbuf_printf(&r->text, "%s:%s\n", vol->bricks[i].host,
                               vol->bricks[i].path);
                md_node_addf(t, "brick", "%s:%s", vol->bricks[i].host,
                             vol->bricks[i].path);
            }
    }
    md_sbuf_printf(&r->text, "Status               : %s\n", w->status);
    md_node_add(t, "statusStr", w->status);
    if (w != &views.v[0]) {
        md_sbuf_printf(&r->text, "Node                 : %s\n", w->node);
        md_node_add(t, "nodeName", w->node);
    }
    md_rebal_views_free(&views);
}


/* Fails unless vol exists and is started; NULL then. */
static struct md_volume *
md_rebal_vol(struct md_state *st, const char *name, struct md_result *r)
{
    struct md_volume *vol = md_volume_find(st, name);

    if (vol == NULL)
        md_result_fail(r, MD_EXIT_FAIL, ENOENT, "volume rebalance: %s: "
                       "failed: Volume %s does not exist", name, name);
    return vol;
}


/* `volume rebalance VOL stop`: where the process runs, this node or a
 * peer. */
static void
md_cmd_rebal_stop(struct md_state *st, const struct md_volume *vol,
                  struct md_result *r)
{
    struct md_rebal_views views = {0};
    const struct md_rebal_view *w = NULL;
    vl_err_t err = {.msg = ""};
    char node[256] = "";
    int rc;

    if (md_rebal_pid(st, vol, false) != 0) {
        rc = md_rebal_stop(st, vol, false, &err);
    } else {
        if (md_rebal_gather(st, vol->name, false, &views) != 0) {
            md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume rebalance: %s: "
                           "failed: out of memory", vol->name);
            return;
        }
        w = md_rebal_views_pick(&views);
        if (w == NULL || !w->is_running) {
            md_rebal_views_free(&views);
            md_result_fail(r, MD_EXIT_FAIL, ESRCH, "volume rebalance: %s: "
                           "failed: Rebalance not started for volume %s",
                           vol->name, vol->name);
            return;
        }
        snprintf(node, sizeof(node), "%s", w->node);
        md_rebal_views_free(&views);
        rc = md_rebal_stop_peer(st, vol->name, false, node, &err);
    }
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume rebalance: %s: "
                       "failed: %s", vol->name, err.msg);
        return;
    }
    (void)md_rebal_show(st, vol, false, r, &err);
    md_sbuf_printf(&r->text, "volume rebalance: %s: success: rebalance "
                   "stopped%s%s; the file in flight was finished or left "
                   "untouched. 'start' resumes.\n", vol->name,
                   node[0] != '\0' ? " on node " : "", node);
}


/* A rebalance or remove-brick migration of vol runs on a peer (or a
 * connected peer could not say): fails r and returns true. */
static bool
md_rebal_running_elsewhere(struct md_state *st, const struct md_volume *vol,
                           struct md_result *r)
{
    for (int k = 0; k < 2; k++) {
        struct md_rebal_views views = {0};
        bool is_remove = k == 1;

        if (md_rebal_gather(st, vol->name, is_remove, &views) != 0) {
            md_result_fail(r, MD_EXIT_FAIL, ENOMEM, "volume rebalance: %s: "
                           "failed: out of memory", vol->name);
            return true;
        }
        for (size_t i = 1; i < views.n; i++) {
            const struct md_rebal_view *w = &views.v[i];

            if (w->is_running)
                md_result_fail(r, MD_EXIT_FAIL, EALREADY, "volume "
                               "rebalance: %s: failed: %s on %s is "
                               "already started on node %s", vol->name,
                               is_remove ? "A remove-brick migration"
                                         : "Rebalance", vol->name, w->node);
            else if (w->err[0] != '\0' &&
                     strcmp(w->err, MD_REBAL_DISCONNECTED) != 0)
                md_result_fail(r, MD_EXIT_FAIL, EHOSTUNREACH, "volume "
                               "rebalance: %s: failed: cannot tell whether "
                               "a %s runs on node %s: %s", vol->name,
                               is_remove ? "remove-brick migration"
                                         : "rebalance", w->node, w->err);
            else
                continue;
            md_rebal_views_free(&views);
            return true;
        }
        md_rebal_views_free(&views);
    }
    return false;
}


void
md_cmd_rebalance(struct md_state *st, int argc, char **argv,
                 struct md_result *r)
{
    struct md_volume *vol;
    bool is_fix = argc == 5 && strcmp(argv[3], "fix-layout") == 0 &&
                  strcmp(argv[4], "start") == 0;
    bool is_start = (argc == 4 || (argc == 5 &&
                                   strcmp(argv[4], "force") == 0)) &&
                    strcmp(argv[3], "start") == 0;
    vl_err_t err = {.msg = ""};
    const char *op = argc >= 4 ? argv[3] : "";
    int rc;

    if (!is_fix && !is_start &&
        !(argc == 4 && (strcmp(op, "stop") == 0 ||
                        strcmp(op, "status") == 0))) {
        md_result_fail(r, MD_EXIT_USAGE, EINVAL, "Usage: volume rebalance "
                       "<VOLNAME> {{fix-layout start} | {start [force]|stop|"
                       "status}}");
        return;
    }
    vol = md_rebal_vol(st, argv[2], r);
    if (vol == NULL)
        return;
    if (strcmp(op, "status") == 0) {
        rc = md_rebal_show(st, vol, false, r, &err);
        if (rc != 0)
            md_result_fail(r, MD_EXIT_FAIL, -rc, "volume rebalance: %s: "
                           "failed: %s", vol->name, err.msg);
        else
            md_sbuf_printf(&r->text, "volume rebalance: %s: success\n",
                           vol->name);
        return;
    }
    if (strcmp(op, "stop") == 0) {
        md_cmd_rebal_stop(st, vol, r);
        return;
    }
    /* start / fix-layout start */
    if (vol->status != MD_VOL_STARTED) {
        md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, "volume rebalance: %s: "
                       "failed: Volume %s needs to be started to perform "
                       "rebalance", vol->name, vol->name);
        return;
    }
    if (md_vol_n_sets(vol) < 2) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume rebalance: %s: "
                       "failed: Volume %s is not a distribute volume (one "
                       "%s)", vol->name, vol->name,
                       md_vol_replica(vol) > 1 ? "replica set" : "brick");
        return;
    }
    if (md_rebal_pid(st, vol, false) != 0) {
        md_result_fail(r, MD_EXIT_FAIL, EALREADY, "volume rebalance: %s: "
                       "failed: Rebalance on %s is already started",
                       vol->name, vol->name);
        return;
    }
    if (md_rebal_running_elsewhere(st, vol, r))
        return;
    for (size_t i = 0; i < vol->n_bricks; i++)
        if (vol->bricks[i].is_decommissioned ||
            md_rebal_pid(st, vol, true) != 0) {
            md_result_fail(r, MD_EXIT_FAIL, EBUSY, "volume rebalance: %s: "
                           "failed: A remove-brick task on volume %s is "
                           "not yet committed; commit or stop it first",
                           vol->name, vol->name);
            return;
        }
    /* A peer's unfinished run goes on here (rebal-handoff.c). */
    md_rebal_take_over(st, vol);
    rc = md_rebal_start(st, vol, false, is_fix, &err);
    if (rc != 0) {
        md_result_fail(r, MD_EXIT_FAIL, -rc, "volume rebalance: %s: "
                       "failed: %s", vol->name, err.msg);
        return;
    }
    md_sbuf_printf(&r->text, "volume rebalance: %s: success: Rebalance on "
                   "%s has been started successfully%s. Use rebalance "
                   "status command to check status of the rebalance "
                   "process.\n", vol->name, vol->name,
                   is_fix ? " (fix-layout only)" : "");
    md_node_add(r->root, "volRebalance", NULL);
    md_node_add(r->root->last, "volname", vol->name);
    md_node_add(r->root->last, "op", is_fix ? "fix-layout" : "start");
}
