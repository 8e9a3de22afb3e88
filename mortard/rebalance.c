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


const char *
md_rebal_status(const struct md_state *st, const struct md_volume *vol,
                bool is_remove)
{
    struct md_rebal_info in;
    pid_t pid = md_rebal_pid(st, vol, is_remove);
    int read_rc = md_rebal_read(st, vol, is_remove, &in);

    return md_rebal_eff(pid, read_rc, &in,
                        md_rebal_lost(st, vol, is_remove, read_rc, &in));
}


int
md_rebal_left(const struct md_state *st, const struct md_volume *vol,
              bool is_remove, long long *skipped, long long *failed)
{
    struct md_rebal_info in;
    int rc = md_rebal_read(st, vol, is_remove, &in);

    *skipped = rc == 0 ? in.skipped_files : 0;
    *failed = rc == 0 ? in.failed_files : 0;
    return rc;
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


/* The address the rebalance process reaches this mortard on. */
static const char *
md_rebal_mgmt_addr(const struct md_state *st)
{
    if (strcmp(st->bind_addr, "0.0.0.0") == 0)
        return "127.0.0.1";
    if (strcmp(st->bind_addr, "::") == 0)
        return "::1";
    return st->bind_addr;
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


int
md_rebal_start(struct md_state *st, const struct md_volume *vol,
               bool is_remove, bool is_fix_layout, vl_err_t *err)
{
    char dir[4096], state[4200], pidf[4200], logdir[4096], log[4200];
    char server[300], port[64], id[128], statearg[4300], thr[300];
    char msg[512];
    const char *throttle = md_vol_opt_get(vol, "cluster.rebal-throttle");
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    pthread_t reaper;
    pthread_attr_t ta;
    char *argv[16];
    int argc = 0, rc, status;
    pid_t child;

    if (st->mgmt_port == 0) {
        vl_err_set(err, "mortard serves no TCP mgmt port (--mgmt-port 0): "
                   "the rebalance process could not fetch the volfile");
        return -ENOTSUP;
    }
    snprintf(dir, sizeof(dir), "%s/rebalance", st->run_dir);
    snprintf(logdir, sizeof(logdir), "%s/rebalance", st->log_dir);
    (void)mkdir(st->run_dir, 0755);
    (void)mkdir(dir, 0755);
    (void)mkdir(st->log_dir, 0755);
    (void)mkdir(logdir, 0755);
    md_rebal_path(st, vol, is_remove, "state", state, sizeof(state));
    md_rebal_path(st, vol, is_remove, "pid", pidf, sizeof(pidf));
    snprintf(log, sizeof(log), "%s/%s%s.log", logdir, vol->name,
             is_remove ? ".remove" : "");
    snprintf(server, sizeof(server), "--volfile-server=%s",
             md_rebal_mgmt_addr(st));
    snprintf(port, sizeof(port), "--volfile-server-port=%u", st->mgmt_port);
    snprintf(id, sizeof(id), "--volfile-id=%s", vol->name);
    snprintf(statearg, sizeof(statearg), "--rebalance-state=%s", state);
    argv[argc++] = st->mortarfsd;
    argv[argc++] = "--rebalance";
    argv[argc++] = server;
    argv[argc++] = port;
    argv[argc++] = id;
    argv[argc++] = statearg;
    if (is_fix_layout)
        argv[argc++] = "--fix-layout";
    if (throttle != NULL) {
        snprintf(thr, sizeof(thr), "--throttle=%s", throttle);
        argv[argc++] = thr;
    }
    argv[argc++] = "-N";
    /* Separate words: the /proc cmdline check looks for them. */
    argv[argc++] = "--pid-file";
    argv[argc++] = pidf;
    argv[argc++] = "--log-file";
    argv[argc++] = log;
    argv[argc] = NULL;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_APPEND |
                                     O_CREAT, 0644);
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
    if (rc != 0) {
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
    /* A bad command line or volfile id fails at once: say why. */
    for (int ms = 0; ms < 500; ms += 50) {
        pid_t w = waitpid(child, &status, WNOHANG);

        if (w == child) {
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                break; /* already done (nothing to do) */
            md_last_line(log, msg, sizeof(msg));
            vl_err_set(err, "the rebalance process exited at once: %s "
                       "(log %s)", msg[0] != '\0' ? msg : "no reason given",
                       log);
            return -EIO;
        }
        usleep(50 * 1000);
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


int
md_rebal_show(struct md_state *st, const struct md_volume *vol,
              bool is_remove, struct md_result *r, vl_err_t *err)
{
    struct md_rebal_info in;
    pid_t pid = md_rebal_pid(st, vol, is_remove);
    int read_rc = md_rebal_read(st, vol, is_remove, &in);
    bool is_lost = pid == 0 && md_rebal_lost(st, vol, is_remove, read_rc,
                                             &in);
    const char *eff = md_rebal_eff(pid, read_rc, &in, is_lost);
    char size[32], rt[32], eta[32], log[4200];
    long long now = (long long)time(NULL), run;
    struct md_node *t, *n;

    if (eff == NULL) {
        vl_err_set(err, "%s not started for volume %s",
                   is_remove ? "remove-brick" : "Rebalance", vol->name);
        return -ENOENT;
    }
    run = in.started == 0 ? 0
          : (pid != 0 ? now : (in.updated != 0 ? in.updated : now)) -
                in.started;
    md_human_size(in.moved_bytes, size, sizeof(size));
    md_hms(run, rt, sizeof(rt));
    md_sbuf_printf(&r->text, "%40s %16s %13s %13s %13s %13s %20s %18s\n",
                   "Node", "Rebalanced-files", "size", "scanned",
                   "failures", "skipped", "status", "run time in h:m:s");
    md_sbuf_printf(&r->text, "%40s %16s %13s %13s %13s %13s %20s %18s\n",
                   "---------", "-----------", "-----------",
                   "-----------", "-----------", "-----------",
                   "------------", "--------------");
    md_sbuf_printf(&r->text, "%40s %16lld %13s %13lld %13lld %13lld %20s "
                   "%18s\n", "localhost", in.moved_files, size,
                   in.scanned_files, in.failed_files, in.skipped_files, eff,
                   rt);
    if (pid != 0) {
        if (in.eta_seconds >= 0) {
            md_hms(in.eta_seconds, eta, sizeof(eta));
            md_sbuf_printf(&r->text, "Estimated time left for %s to "
                           "complete : %s\n", is_remove ? "remove-brick"
                           : "rebalance", eta);
        } else {
            md_sbuf_printf(&r->text, "Estimated time left for %s to "
                           "complete : unknown (still estimating)\n",
                           is_remove ? "remove-brick" : "rebalance");
        }
    }
    snprintf(log, sizeof(log), "%s/rebalance/%s%s.log", st->log_dir,
             vol->name, is_remove ? ".remove" : "");
    if (is_lost) {
        char msg[512];

        md_last_line(log, msg, sizeof(msg));
        md_sbuf_printf(&r->text, "The %s process exited before it "
                       "started working: %s (see %s)\n", is_remove ?
                       "remove-brick" : "rebalance", msg, log);
        if (in.error[0] == '\0')
            snprintf(in.error, sizeof(in.error), "%s", msg);
    } else if (pid == 0 && read_rc == 0 &&
               strcmp(in.status, "running") == 0)
        md_sbuf_printf(&r->text, "The %s process died while running (see "
                       "%s); run 'volume %s %s start' to resume where it "
                       "stopped.\n", is_remove ? "remove-brick" :
                       "rebalance", log, is_remove ? "remove-brick" :
                       "rebalance", is_remove ? "VOL BRICK..." : vol->name);
    if (in.error[0] != '\0')
        md_sbuf_printf(&r->text, "Last error: %s\n", in.error);

    t = md_node_add(r->root, "volRebalance", NULL);
    md_node_add(t, "volname", vol->name);
    md_node_add(t, "op", is_remove ? "remove-brick" : "rebalance");
    md_node_add(t, "nodeCount", "1");
    n = md_node_add(t, "node", NULL);
    md_node_add(n, "nodeName", "localhost");
    md_node_add(n, "id", st->node_id);
    md_node_addf(n, "files", "%lld", in.moved_files);
    md_node_addf(n, "size", "%lld", in.moved_bytes);
    md_node_addf(n, "lookups", "%lld", in.scanned_files);
    md_node_addf(n, "dirs", "%lld", in.scanned_dirs);
    md_node_addf(n, "failures", "%lld", in.failed_files);
    md_node_addf(n, "skipped", "%lld", in.skipped_files);
    md_node_add(n, "statusStr", eff);
    md_node_addf(n, "runtime", "%lld", run);
    md_node_addf(n, "eta", "%lld", pid != 0 ? in.eta_seconds : 0);
    if (in.error[0] != '\0')
        md_node_add(n, "error", in.error);
    return 0;
}


void
md_rebal_task_status(struct md_state *st, const struct md_volume *vol,
                     struct md_result *r, struct md_node *v)
{
    bool is_remove = false;
    const char *eff;
    struct md_node *tl, *t;

    for (size_t i = 0; i < vol->n_bricks; i++)
        if (vol->bricks[i].is_decommissioned)
            is_remove = true;
    eff = md_rebal_status(st, vol, is_remove);
    tl = md_node_add(v, "tasks", NULL);
    if (tl != NULL)
        tl->is_list = true;
    md_sbuf_printf(&r->text, "Task Status of Volume %s\n-------------------"
                   "-----------------------------------------------------"
                   "-------\n", vol->name);
    if (eff == NULL) {
        md_sbuf_printf(&r->text, "There are no active volume tasks\n");
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
    md_sbuf_printf(&r->text, "Status               : %s\n", eff);
    md_node_add(t, "statusStr", eff);
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
        if (md_rebal_pid(st, vol, false) == 0) {
            md_result_fail(r, MD_EXIT_FAIL, ESRCH, "volume rebalance: %s: "
                           "failed: Rebalance not started for volume %s",
                           vol->name, vol->name);
            return;
        }
        rc = md_rebal_stop(st, vol, false, &err);
        if (rc != 0) {
            md_result_fail(r, MD_EXIT_FAIL, -rc, "volume rebalance: %s: "
                           "failed: %s", vol->name, err.msg);
            return;
        }
        (void)md_rebal_show(st, vol, false, r, &err);
        md_sbuf_printf(&r->text, "volume rebalance: %s: success: rebalance "
                       "stopped; the file in flight was finished or left "
                       "untouched. 'start' resumes.\n", vol->name);
        return;
    }
    /* start / fix-layout start */
    if (vol->status != MD_VOL_STARTED) {
        md_result_fail(r, MD_EXIT_FAIL, ENOTCONN, "volume rebalance: %s: "
                       "failed: Volume %s needs to be started to perform "
                       "rebalance", vol->name, vol->name);
        return;
    }
    if (vol->n_bricks < 2) {
        md_result_fail(r, MD_EXIT_FAIL, EINVAL, "volume rebalance: %s: "
                       "failed: Volume %s is not a distribute volume (one "
                       "brick)", vol->name, vol->name);
        return;
    }
    if (md_rebal_pid(st, vol, false) != 0) {
        md_result_fail(r, MD_EXIT_FAIL, EALREADY, "volume rebalance: %s: "
                       "failed: Rebalance on %s is already started",
                       vol->name, vol->name);
        return;
    }
    for (size_t i = 0; i < vol->n_bricks; i++)
        if (vol->bricks[i].is_decommissioned ||
            md_rebal_pid(st, vol, true) != 0) {
            md_result_fail(r, MD_EXIT_FAIL, EBUSY, "volume rebalance: %s: "
                           "failed: A remove-brick task on volume %s is "
                           "not yet committed; commit or stop it first",
                           vol->name, vol->name);
            return;
        }
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
