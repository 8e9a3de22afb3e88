/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main: mortard's command line, startup and signals.
 *
 * Startup: parse options, block signals, fork (unless -N) with a pipe on
 * which the child reports readiness, take the pid file lock in run-dir
 * (a second mortard on the same run-dir fails), load the store, listen on
 * the unix socket and TCP, then tell the parent. Bricks left running by a
 * previous mortard are adopted through their pid files (brick.c), never
 * started twice; once ready, the worker starts the dead bricks of started
 * volumes and restarts bricks that die (supervise.c). Exit (SIGTERM/
 * SIGINT) leaves bricks running, as glusterd does; `volume stop` stops
 * them. SIGUSR1 writes a statedump to
 * <run-dir>/dumps; SIGHUP reopens the log.
 * Threads: the main thread serves signals; server.c runs the rest.
 */
#include "config.h"

#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mortard.h"
#include "secure.h"
#include "xlators/builtin.h"

enum {
    OPT_STATE_DIR = 256,
    OPT_RUN_DIR,
    OPT_LOG_DIR,
    OPT_MGMT_PORT,
    OPT_BRICK_BASE_PORT,
    OPT_BIND,
    OPT_MORTARFSD,
    OPT_LOG_LEVEL,
    OPT_SECURE_ACCESS,
    OPT_SSL_CERT,
    OPT_SSL_KEY,
    OPT_SSL_CA,
    OPT_METRICS_PORT,
    OPT_METRICS_ADDRESS,
    OPT_SSL_CHECK_HOST,
};

static const struct option md_longopts[] = {
    {"state-dir", required_argument, NULL, OPT_STATE_DIR},
    {"run-dir", required_argument, NULL, OPT_RUN_DIR},
    {"log-dir", required_argument, NULL, OPT_LOG_DIR},
    {"mgmt-port", required_argument, NULL, OPT_MGMT_PORT},
    {"brick-base-port", required_argument, NULL, OPT_BRICK_BASE_PORT},
    {"bind-address", required_argument, NULL, OPT_BIND},
    {"mortarfsd", required_argument, NULL, OPT_MORTARFSD},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"secure-access", no_argument, NULL, OPT_SECURE_ACCESS},
    {"ssl-cert", required_argument, NULL, OPT_SSL_CERT},
    {"ssl-key", required_argument, NULL, OPT_SSL_KEY},
    {"ssl-ca", required_argument, NULL, OPT_SSL_CA},
    {"metrics-port", required_argument, NULL, OPT_METRICS_PORT},
    {"metrics-address", required_argument, NULL, OPT_METRICS_ADDRESS},
    {"ssl-check-host", no_argument, NULL, OPT_SSL_CHECK_HOST},
    {"no-daemon", no_argument, NULL, 'N'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};


/* One option a line, in the shape of mortarfsd's and mortar's --help:
 * extras/man/help2man.awk turns this text into mortard(8)'s SYNOPSIS,
 * OPTIONS and NOTES, so the page says what the binary does. */
static void
md_usage_print(FILE *out)
{
    fprintf(out,
"Usage: mortard [OPTION]...\n"
"Run Mortar's management daemon: the volume store, volfiles for bricks\n"
"and clients, one mortarfsd per brick of this node, the mortar CLI.\n"
"\n"
"  -N, --no-daemon             stay in the foreground, logging to stderr\n"
"      --state-dir DIR         the store (default %s)\n"
"      --run-dir DIR           pid files, the CLI's unix socket, dumps\n"
"                              (default %s)\n"
"      --log-dir DIR           mortard.log and the bricks' logs\n"
"                              (default %s)\n"
"      --mgmt-port N           TCP port for volfiles and peers (default %d)\n"
"      --brick-base-port N     first brick port; ports in use are skipped\n"
"                              (default %d)\n"
"      --bind-address ADDR     address of the mgmt port and of the bricks\n"
"                              (default 0.0.0.0)\n"
"      --mortarfsd PATH        the brick binary (default: the one next to\n"
"                              mortard, else mortarfsd from PATH)\n"
"      --log-level LEVEL       NONE CRITICAL ERROR WARNING INFO DEBUG TRACE\n"
"                              (default INFO)\n"
"      --secure-access         the mgmt port and calls to peers speak TLS\n"
"                              1.3 (also when STATE/secure-access exists\n"
"                              at start)\n"
"      --ssl-cert PEM          its certificate (default %s)\n"
"      --ssl-key KEY           its key (default %s)\n"
"      --ssl-ca PEM            its CA list (default %s)\n"
"      --ssl-check-host        a peer's certificate must name the host it\n"
"                              is called by (subjectAltName or CN)\n"
"                              (STATE/admin-allow lists the certificate\n"
"                              names allowed to run commands)\n"
"      --metrics-port N        serve Prometheus metrics on\n"
"                              http://ADDR:N/metrics (doc/metrics.md); a\n"
"                              port in use stops the startup\n"
"      --metrics-address ADDR  listen there (default 127.0.0.1; another\n"
"                              address only when given here)\n"
"  -h, --help                  print this help and exit\n"
"\n"
"Without -N the command returns once mortard listens, or prints why it\n"
"could not start. A second mortard on the same run dir is refused.\n"
"Signals: TERM/INT stop mortard and leave the bricks running (the next\n"
"mortard adopts them through their pid files), USR1 writes a statedump\n"
"to RUN/dumps, HUP reopens the log and reloads the TLS files.\n"
"\n"
"Exit status: 0 ok, 1 startup failed, 2 bad command line.\n",
            MD_DEFAULT_STATE_DIR, MD_DEFAULT_RUN_DIR, MD_DEFAULT_LOG_DIR,
            MD_DEFAULT_MGMT_PORT, MD_DEFAULT_BRICK_BASE_PORT,
            VRPC_TLS_DEF_CERT, VRPC_TLS_DEF_KEY, VRPC_TLS_DEF_CA);
}


static int
md_set_path(char **dst, const char *arg)
{
    char cwd[PATH_MAX];

    free(*dst);
    if (arg[0] == '/') {
        *dst = strdup(arg);
    } else {
        if (getcwd(cwd, sizeof(cwd)) == NULL)
            return -errno;
        if (asprintf(dst, "%s/%s", cwd, arg) < 0)
            *dst = NULL;
    }
    return *dst != NULL ? 0 : -ENOMEM;
}


static int
md_parse_port(const char *arg, uint16_t *out)
{
    char *end;
    long v = strtol(arg, &end, 10);

    if (end == arg || *end != '\0' || v < 1 || v > 65535)
        return -EINVAL;
    *out = (uint16_t)v;
    return 0;
}


/* The mortarfsd next to our own binary, else "mortarfsd" from PATH. */
static char *
md_default_fsd(void)
{
    char self[PATH_MAX], *slash, *p = NULL;
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n > 0) {
        self[n] = '\0';
        slash = strrchr(self, '/');
        if (slash != NULL) {
            *slash = '\0';
            /* A libtool build runs us from .libs/ behind a wrapper. */
            slash = strrchr(self, '/');
            if (slash != NULL && strcmp(slash, "/.libs") == 0)
                *slash = '\0';
            if (asprintf(&p, "%s/mortarfsd", self) >= 0 &&
                access(p, X_OK) == 0)
                return p;
            free(p);
            p = NULL;
            /* Build tree: mortard/mortard next to mortarfsd/mortarfsd. */
            if (asprintf(&p, "%s/../mortarfsd/mortarfsd", self) >= 0 &&
                access(p, X_OK) == 0)
                return p;
            free(p);
        }
    }
    return strdup("mortarfsd");
}


static int
md_opts(int argc, char **argv, struct md_state *st, vl_log_level_t *lvl,
        struct md_secure_conf *sec /* OUT, paths owned */,
        bool *is_help)
{
    int c, rc = 0;

    st->mgmt_port = MD_DEFAULT_MGMT_PORT;
    st->brick_base_port = MD_DEFAULT_BRICK_BASE_PORT;
    while (rc == 0 &&
           (c = getopt_long(argc, argv, "Nh", md_longopts, NULL)) != -1) {
        switch (c) {
        case 'N':
            st->is_foreground = true;
            break;
        case 'h':
            *is_help = true;
            break;
        case OPT_STATE_DIR:
            rc = md_set_path(&st->state_dir, optarg);
            break;
        case OPT_RUN_DIR:
            rc = md_set_path(&st->run_dir, optarg);
            break;
        case OPT_LOG_DIR:
            rc = md_set_path(&st->log_dir, optarg);
            break;
        case OPT_MGMT_PORT:
            rc = md_parse_port(optarg, &st->mgmt_port);
            break;
        case OPT_BRICK_BASE_PORT:
            rc = md_parse_port(optarg, &st->brick_base_port);
            break;
        case OPT_BIND:
            free(st->bind_addr);
            st->bind_addr = strdup(optarg);
            rc = st->bind_addr != NULL ? 0 : -ENOMEM;
            break;
        case OPT_MORTARFSD:
            rc = md_set_path(&st->mortarfsd, optarg);
            break;
        case OPT_LOG_LEVEL:
            rc = vl_log_level_parse(optarg, lvl);
            break;
        case OPT_SECURE_ACCESS:
            sec->is_forced = true;
            break;
        case OPT_SSL_CHECK_HOST:
            sec->is_check_host = true;
            break;
        case OPT_SSL_CERT:
            rc = md_set_path(&sec->paths[0], optarg);
            break;
        case OPT_SSL_KEY:
            rc = md_set_path(&sec->paths[1], optarg);
            break;
        case OPT_SSL_CA:
            rc = md_set_path(&sec->paths[2], optarg);
            break;
        case OPT_METRICS_PORT:
            rc = md_parse_port(optarg, &st->metrics_port);
            break;
        case OPT_METRICS_ADDRESS: {
            unsigned char a[sizeof(struct in6_addr)];

            /* Numeric only: no name lookup decides where we listen. */
            if (inet_pton(AF_INET, optarg, a) != 1
                && inet_pton(AF_INET6, optarg, a) != 1) {
                rc = -EINVAL;
                break;
            }
            free(st->metrics_addr);
            st->metrics_addr = strdup(optarg);
            rc = st->metrics_addr != NULL ? 0 : -ENOMEM;
            break;
        }
        default:
            rc = -EINVAL;
        }
    }
    if (rc == 0 && optind != argc)
        rc = -EINVAL;
    if (rc == 0 && st->state_dir == NULL)
        rc = md_set_path(&st->state_dir, MD_DEFAULT_STATE_DIR);
    if (rc == 0 && st->run_dir == NULL)
        rc = md_set_path(&st->run_dir, MD_DEFAULT_RUN_DIR);
    if (rc == 0 && st->log_dir == NULL)
        rc = md_set_path(&st->log_dir, MD_DEFAULT_LOG_DIR);
    if (rc == 0 && st->bind_addr == NULL)
        rc = (st->bind_addr = strdup("0.0.0.0")) != NULL ? 0 : -ENOMEM;
    if (rc == 0 && st->mortarfsd == NULL)
        rc = (st->mortarfsd = md_default_fsd()) != NULL ? 0 : -ENOMEM;
    return rc;
}


/* Parent side of the startup pipe: never returns. */
static void __attribute__((noreturn))
md_parent_wait(pid_t child, int fd)
{
    char buf[1024];
    size_t used = 0;
    int status = 0;
    ssize_t n;

    while (used < sizeof(buf) - 1) {
        n = read(fd, buf + used, sizeof(buf) - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
    }
    buf[used] = '\0';
    if (used > 0 && buf[0] == '0')
        _exit(0);
    if (used > 0)
        fprintf(stderr, "mortard: %s\n", buf + 1);
    else if (waitpid(child, &status, 0) == child && WIFSIGNALED(status))
        fprintf(stderr, "mortard: startup failed: killed by signal %d\n",
                WTERMSIG(status));
    else
        fprintf(stderr, "mortard: startup failed\n");
    _exit(1);
}


static int
md_daemonize(int *ready_fd, vl_err_t *err)
{
    int fds[2];
    pid_t pid;

    if (pipe2(fds, O_CLOEXEC) != 0) {
        vl_err_set(err, "pipe: %s", strerror(errno));
        return -errno;
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        vl_err_set(err, "fork: %s", strerror(errno));
        return -errno;
    }
    if (pid > 0) {
        close(fds[1]);
        md_parent_wait(pid, fds[0]);
    }
    close(fds[0]);
    *ready_fd = fds[1];
    if (setsid() < 0 || chdir("/") != 0) {
        vl_err_set(err, "setsid/chdir: %s", strerror(errno));
        return -errno;
    }
    return 0;
}


static void
md_report(int fd, int status, const char *msg)
{
    char buf[1100];
    int n;

    if (fd < 0)
        return;
    n = snprintf(buf, sizeof(buf), "%c%s", status == 0 ? '0' : '1',
                 msg != NULL ? msg : "");
    if (write(fd, buf, (size_t)n) < 0) {
        /* The parent is gone; nothing to tell. */
    }
    close(fd);
}


static int
md_pidfile_take(struct md_state *st, int *fd_out, vl_err_t *err)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    char path[4096], buf[32];
    int fd, n;

    snprintf(path, sizeof(path), "%s/mortard.pid", st->run_dir);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        vl_err_set(err, "%s: %s", path, strerror(errno));
        return -errno;
    }
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        vl_err_set(err, "another mortard is running (%s is locked)", path);
        close(fd);
        return -EBUSY;
    }
    n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
        vl_err_set(err, "%s: %s", path, strerror(errno));
        close(fd);
        return -EIO;
    }
    *fd_out = fd;
    return 0;
}


/* mortard's own sections of its statedump, after the core's. */
static void
md_statedump_sections(FILE *f, void *arg)
{
    struct md_state *st = arg;

    pthread_mutex_lock(&st->lock);
    fprintf(f, "[mortard]\nnode-id=%s\nstore-version=%llu\nstate-dir=%s\n"
            "run-dir=%s\nmgmt-port=%u\nbrick-base-port=%u\n", st->node_id,
            (unsigned long long)st->store_version, st->state_dir,
            st->run_dir, st->mgmt_port, st->brick_base_port);
    fprintf(f, "secure-access=%s\n", md_secure_is_on() ? "on" : "off");
    md_server_dump(f);
    md_supervise_dump(f);
    for (struct md_peer *p = st->peers; p != NULL; p = p->next)
        fprintf(f, "peer=%s host=%s port=%u connected=%d\n", p->uuid,
                p->host, p->port, p->is_connected);
    for (struct md_volume *v = st->vols; v != NULL; v = v->next) {
        fprintf(f, "\n[mortard.volume.%s]\nid=%s\nstatus=%s\nversion=%llu\n"
                "options=%zu\n", v->name, v->id,
                md_vol_status_name(v->status),
                (unsigned long long)v->version, v->n_opts);
        for (size_t i = 0; i < v->n_bricks; i++)
            fprintf(f, "brick.%zu=%s:%s port=%u pid=%ld\n", i,
                    v->bricks[i].host, v->bricks[i].path, v->bricks[i].port,
                    (long)md_brick_pid(st, v, &v->bricks[i]));
    }
    pthread_mutex_unlock(&st->lock);
    /* A blank line ends the section (before DUMP-END-TIME). */
    fprintf(f, "\n");
}


static void
md_statedump(struct md_state *st)
{
    char dir[4096], path[4200];
    int rc;

    snprintf(dir, sizeof(dir), "%s/dumps", st->run_dir);
    rc = vl_statedump_file(dir, "mortard", md_statedump_sections, st, path,
                           sizeof(path));
    if (rc != 0) {
        vl_glog(MD_DOMAIN, VL_LOG_ERROR, "statedump %s: %s", path,
                strerror(-rc));
        return;
    }
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "statedump written to %s", path);
}


/* Logs the bricks found running (adopted: supervise.c never starts them
 * twice); the dead bricks of started volumes are started by the first
 * supervision scan once mortard is ready. */
static void
md_adopt(struct md_state *st)
{
    for (struct md_volume *v = st->vols; v != NULL; v = v->next)
        for (size_t i = 0; i < v->n_bricks; i++) {
            pid_t pid = md_brick_pid(st, v, &v->bricks[i]);

            if (pid != 0)
                vl_glog(MD_DOMAIN, VL_LOG_INFO, "adopted brick %s:%s of %s "
                        "(pid %ld)", v->bricks[i].host, v->bricks[i].path,
                        v->name, (long)pid);
            else if (v->status == MD_VOL_STARTED &&
                     md_brick_is_local(st, &v->bricks[i]))
                vl_glog(MD_DOMAIN, VL_LOG_INFO, "brick %s:%s of started "
                        "volume %s is not running: it will be started",
                        v->bricks[i].host, v->bricks[i].path, v->name);
        }
}



/* What md_opts allocated. */
static void
md_opts_free(struct md_state *st, struct md_secure_conf *sec)
{
    free(st->state_dir);
    free(st->run_dir);
    free(st->log_dir);
    free(st->mortarfsd);
    free(st->bind_addr);
    free(st->metrics_addr);
    for (size_t i = 0; i < 3; i++)
        free(sec->paths[i]);
}

int
main(int argc, char **argv)
{
    struct md_state st = {.lock = PTHREAD_MUTEX_INITIALIZER};
    vl_log_level_t lvl = VL_LOG_INFO;
    vl_err_t err = {.msg = ""};
    bool is_help = false;
    struct md_secure_conf sec = {0};
    char logpath[4200];
    int ready_fd = -1, pid_fd = -1, sig, rc;
    sigset_t set;

    if (md_opts(argc, argv, &st, &lvl, &sec, &is_help) != 0) {
        fprintf(stderr, "mortard: bad command line (see --help)\n");
        md_opts_free(&st, &sec);
        return 2;
    }
    if (is_help) {
        /* Freed: the man page is made from this output, by a build that
         * may run it under LeakSanitizer. */
        md_usage_print(stdout);
        md_opts_free(&st, &sec);
        return 0;
    }
    vl_global_init();
    rc = vl_xlators_register_builtin();
    if (rc != 0) {
        fprintf(stderr, "mortard: registering translators: %s\n",
                strerror(-rc));
        return 1;
    }
    (void)signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (!st.is_foreground && md_daemonize(&ready_fd, &err) != 0)
        goto fail;
    if (mkdir(st.run_dir, 0755) != 0 && errno != EEXIST) {
        vl_err_set(&err, "%s: %s", st.run_dir, strerror(errno));
        goto fail;
    }
    if (mkdir(st.log_dir, 0755) != 0 && errno != EEXIST) {
        vl_err_set(&err, "%s: %s", st.log_dir, strerror(errno));
        goto fail;
    }
    if (md_pidfile_take(&st, &pid_fd, &err) != 0)
        goto fail;
    snprintf(logpath, sizeof(logpath), "%s/mortard.log", st.log_dir);
    rc = vl_log_open(st.is_foreground ? NULL : logpath, lvl);
    if (rc != 0) {
        vl_err_set(&err, "%s: %s", logpath, strerror(-rc));
        goto fail;
    }
    if (md_store_load(&st, &err) != 0 || md_peers_load(&st, &err) != 0)
        goto fail;
    /* After the load (which takes no lock), before bricks are adopted or
     * anything listens: a port in use stops mortard with one line and
     * nothing done. */
    if (st.metrics_port != 0
        && md_metrics_start(&st, st.metrics_addr, st.metrics_port,
                            &err) != 0)
        goto fail;
    md_adopt(&st);
    md_server_peers_changed(&st);
    if (md_secure_init(st.state_dir, &sec, &err) != 0 ||
        md_server_start(&st, &err) != 0 ||
        md_peer_monitor_start(&st, &err) != 0)
        goto fail;
    if (!st.is_foreground) {
        int nfd = open("/dev/null", O_RDWR | O_CLOEXEC);

        if (nfd >= 0) {
            dup2(nfd, 0);
            dup2(nfd, 1);
            dup2(nfd, 2);
            close(nfd);
        }
    }
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "mortard %s ready (pid %ld, node %s, "
            "state %s, mgmt port %u)", PACKAGE_VERSION, (long)getpid(),
            st.node_id, st.state_dir, st.mgmt_port);
    md_report(ready_fd, 0, NULL);
    ready_fd = -1;
    md_server_ready();

    for (;;) {
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGTERM || sig == SIGINT)
            break;
        if (sig == SIGUSR1)
            md_statedump(&st);
        else if (sig == SIGHUP) {
            (void)vl_log_open(st.is_foreground ? NULL : logpath, lvl);
            vrpc_tls_reload_all(); /* management TLS: new files */
        }
    }
    vl_glog(MD_DOMAIN, VL_LOG_INFO, "received signal %d, exiting (bricks "
            "keep running)", sig);
    md_peer_monitor_stop();
    md_server_stop();
    md_metrics_stop();
    rc = 0;
    goto out;

fail:
    vl_glog(MD_DOMAIN, VL_LOG_ERROR, "startup failed: %s", err.msg);
    if (ready_fd >= 0)
        md_report(ready_fd, 1, err.msg);
    else
        fprintf(stderr, "mortard: %s\n", err.msg);
    md_peer_monitor_stop();
    md_server_stop();
    md_metrics_stop();
    rc = 1;

out:
    md_supervise_free();
    md_peers_free(&st);
    while (st.vols != NULL) {
        struct md_volume *v = st.vols;

        md_volume_unlink(&st, v);
        md_volume_free(v);
    }
    if (pid_fd >= 0) {
        char path[4200];

        snprintf(path, sizeof(path), "%s/mortard.pid", st.run_dir);
        (void)unlink(path);
        close(pid_fd);
    }
    md_opts_free(&st, &sec);
    md_secure_fini();
    return rc;
}
