/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * brick: the brick processes mortard supervises, one mortarfsd per brick.
 *
 * mortarfsd detaches itself once its graph listens, so mortard spawns it,
 * waits for the short-lived parent (exit 0 = the brick serves; otherwise
 * its stderr says why) and reads the daemon's pid from the pid file
 * <run-dir>/<vol>-<brick-id>.pid. A pid is trusted only while
 * /proc/PID/cmdline shows mortarfsd with exactly that --pid-file, so a
 * stale pid file or a recycled pid is never mistaken for the brick; this
 * is also how a restarted mortard re-adopts the bricks it left running.
 * Threads: the worker thread with md_state.lock held.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mortard.h"

extern char **environ;

#define MD_STOP_WAIT_MS 10000
#define MD_START_WAIT_S 40


void
md_brick_pidfile(const struct md_state *st, const struct md_volume *vol,
                 const struct md_brick *b, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s-%s.pid", st->run_dir, vol->name, b->id);
}


void
md_brick_metrics_file(const struct md_state *st, const struct md_volume *vol,
                      const struct md_brick *b, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s-%s.metrics-port", st->run_dir, vol->name,
             b->id);
}


bool
md_brick_metrics_on(const struct md_volume *vol)
{
    const char *v = md_vol_opt_get(vol, "diagnostics.brick-metrics");
    bool is_on = false;

    return v != NULL && vl_parse_bool(v, &is_on) == 0 && is_on;
}


unsigned
md_brick_metrics_port(const struct md_state *st, const struct md_volume *vol,
                      const struct md_brick *b)
{
    char path[4200];
    unsigned port = 0;
    FILE *f;

    md_brick_metrics_file(st, vol, b, path, sizeof(path));
    f = fopen(path, "re");
    if (f == NULL)
        return 0;
    if (fscanf(f, "%u", &port) != 1 || port > 65535)
        port = 0;
    fclose(f);
    return port;
}


void
md_brick_volfile(const struct md_state *st, const struct md_volume *vol,
                 const struct md_brick *b, char *buf, size_t len)
{
    snprintf(buf, len, "%s/vols/%s/%s.vol", st->state_dir, vol->name, b->id);
}


/* True if pid is alive (not a zombie) and its command line holds
 * "--pid-file" followed by pidfile. */
static bool
md_pid_is_brick(pid_t pid, const char *pidfile)
{
    char path[64], *buf = NULL, *p;
    size_t len = 0;
    bool is_match = false;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    if (md_read_file(path, &buf, NULL) != 0)
        return false;
    p = strrchr(buf, ')');
    if (p == NULL || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X') {
        free(buf);
        return false;
    }
    free(buf);
    snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
    if (md_read_file(path, &buf, &len) != 0)
        return false;
    for (p = buf; p < buf + len; p += strlen(p) + 1)
        if (strcmp(p, "--pid-file") == 0 && p + strlen(p) + 1 < buf + len &&
            strcmp(p + strlen(p) + 1, pidfile) == 0) {
            is_match = true;
            break;
        }
    free(buf);
    return is_match;
}


pid_t
md_fsd_pid(const char *pidfile)
{
    char *text = NULL, *end;
    long pid;

    if (md_read_file(pidfile, &text, NULL) != 0)
        return 0;
    pid = strtol(text, &end, 10);
    if (end == text || pid <= 1 || (*end != '\n' && *end != '\0')) {
        free(text);
        return 0;
    }
    free(text);
    return md_pid_is_brick((pid_t)pid, pidfile) ? (pid_t)pid : 0;
}


pid_t
md_brick_pid(const struct md_state *st, const struct md_volume *vol,
             const struct md_brick *b)
{
    char path[4096];

    md_brick_pidfile(st, vol, b, path, sizeof(path));
    return md_fsd_pid(path);
}


bool
md_port_is_free(const char *addr, uint16_t port)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_PASSIVE};
    struct addrinfo *res = NULL;
    char svc[8];
    bool is_free = false;
    int fd, one = 1;

    snprintf(svc, sizeof(svc), "%u", port);
    if (getaddrinfo(addr, svc, &hints, &res) != 0)
        return false;
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        is_free = bind(fd, res->ai_addr, res->ai_addrlen) == 0;
        close(fd);
    }
    freeaddrinfo(res);
    return is_free;
}


bool
md_brick_port_answers(const struct md_state *st, const struct md_brick *b)
{
    const char *addr = st->bind_addr;
    struct sockaddr_storage ss = {0};
    socklen_t sl;
    bool is_up = false;
    int fd;

    if (strcmp(addr, "0.0.0.0") == 0)
        addr = "127.0.0.1";
    else if (strcmp(addr, "::") == 0)
        addr = "::1";
    if (strchr(addr, ':') != NULL) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;

        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(b->port);
        if (inet_pton(AF_INET6, addr, &a6->sin6_addr) != 1)
            return false;
        sl = sizeof(*a6);
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;

        a4->sin_family = AF_INET;
        a4->sin_port = htons(b->port);
        if (inet_pton(AF_INET, addr, &a4->sin_addr) != 1)
            return false;
        sl = sizeof(*a4);
    }
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return false;
    if (connect(fd, (struct sockaddr *)&ss, sl) == 0) {
        is_up = true;
    } else if (errno == EINPROGRESS) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int soerr = 0;
        socklen_t el = sizeof(soerr);

        if (poll(&pfd, 1, 1000) == 1 &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el) == 0 &&
            soerr == 0)
            is_up = true;
    }
    close(fd);
    return is_up;
}


uint16_t
md_port_pick(struct md_state *st, const struct md_brick *self)
{
    for (unsigned p = st->brick_base_port;
         p < (unsigned)st->brick_base_port + MD_BRICK_PORT_SPAN && p < 65536;
         p++) {
        bool is_taken = false;

        for (struct md_volume *v = st->vols; v != NULL && !is_taken;
             v = v->next)
            for (size_t i = 0; i < v->n_bricks; i++)
                if (&v->bricks[i] != self && v->bricks[i].port == p)
                    is_taken = true;
        if (!is_taken && md_port_is_free(st->bind_addr, (uint16_t)p))
            return (uint16_t)p;
    }
    return 0;
}


bool
md_pid_has_pidfile(pid_t pid, const char *pidfile)
{
    return md_pid_is_brick(pid, pidfile);
}


uint16_t
md_port_pick_excl(struct md_state *st, const uint16_t *taken,
                  size_t n_taken)
{
    for (unsigned p = st->brick_base_port;
         p < (unsigned)st->brick_base_port + MD_BRICK_PORT_SPAN && p < 65536;
         p++) {
        bool is_taken = false;

        for (size_t i = 0; i < n_taken && !is_taken; i++)
            is_taken = taken[i] == p;
        for (struct md_volume *v = st->vols; v != NULL && !is_taken;
             v = v->next)
            for (size_t i = 0; i < v->n_bricks; i++)
                if (v->bricks[i].port == p)
                    is_taken = true;
        if (is_taken)
            continue;
        /* Every node of a transaction must choose the same port, so only
         * the store decides there. */
        if (st->txn.is_set || md_port_is_free(st->bind_addr, (uint16_t)p))
            return (uint16_t)p;
    }
    return 0;
}


/* Reads up to len-1 bytes of fd until EOF into buf, trimmed to one line. */
static void
md_read_msg(int fd, char *buf, size_t len)
{
    size_t used = 0;

    for (;;) {
        ssize_t n = read(fd, buf + used, len - 1 - used);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
        if (used == len - 1)
            break;
    }
    buf[used] = '\0';
    while (used > 0 && (buf[used - 1] == '\n' || buf[used - 1] == ' '))
        buf[--used] = '\0';
    for (char *p = buf; *p != '\0'; p++)
        if (*p == '\n')
            *p = ' ';
}


int
md_fsd_spawn(struct md_state *st, char *const *argv, vl_err_t *err)
{
    char msg[1024];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    int fds[2], status = 0, rc;
    pid_t child;

    if (pipe2(fds, O_CLOEXEC) != 0) {
        vl_err_set(err, "pipe: %s", strerror(errno));
        return -errno;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawnattr_init(&attr);
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    rc = -posix_spawnp(&child, st->mortarfsd, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        vl_err_set(err, "starting %s: %s", st->mortarfsd, strerror(-rc));
        return rc;
    }
    /* mortarfsd's parent exits when the daemon is ready or failed; the
     * daemon's stdio goes to /dev/null so the pipe then reaches EOF. */
    md_read_msg(fds[0], msg, sizeof(msg));
    close(fds[0]);
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        vl_err_set(err, "%s", msg[0] != '\0' ? msg
                                             : "mortarfsd exited with an "
                                               "error");
        return -EIO;
    }
    return 0;
}


int
md_brick_start(struct md_state *st, const struct md_volume *vol,
               const struct md_brick *b, vl_err_t *err)
{
    char volfile[4096], pidfile[4096], logfile[4400], dumpdir[4096];
    char logdir[4096], portfile[4200], label[4200];
    vl_err_t why = {.msg = ""};
    int rc;

    if (md_brick_pid(st, vol, b) != 0)
        return 0;
    if (b->is_reset) {
        /* reset-brick start stopped it; only its commit starts it. */
        vl_glog(MD_DOMAIN, VL_LOG_INFO, "brick %s:%s of %s is being reset "
                "(reset-brick start): not started", b->host, b->path,
                vol->name);
        return 0;
    }
    md_brick_volfile(st, vol, b, volfile, sizeof(volfile));
    md_brick_pidfile(st, vol, b, pidfile, sizeof(pidfile));
    snprintf(logdir, sizeof(logdir), "%s/bricks", st->log_dir);
    (void)mkdir(st->log_dir, 0755);
    (void)mkdir(logdir, 0755);
    snprintf(logfile, sizeof(logfile), "%s/%s-%s.log", logdir, vol->name,
             b->id);
    snprintf(dumpdir, sizeof(dumpdir), "%s/dumps", st->run_dir);
    md_brick_metrics_file(st, vol, b, portfile, sizeof(portfile));
    snprintf(label, sizeof(label), "%s:%s", b->host, b->path);
    char *argv[] = {st->mortarfsd, "--volfile", volfile, "--pid-file",
                    pidfile, "--log-file", logfile, "--dump-dir", dumpdir,
                    /* diagnostics.brick-metrics: a port of the kernel's
                     * choice, as one port cannot serve every brick (the
                     * cast: execv does not write its arguments). */
                    "--metrics-port", "0", "--metrics-port-file", portfile,
                    "--metrics-volume", (char *)vol->name,
                    "--metrics-brick", label, NULL};

    if (!md_brick_metrics_on(vol)) {
        argv[9] = NULL;
        (void)unlink(portfile); /* from a run with metrics */
    }

    rc = md_fsd_spawn(st, argv, &why);
    if (rc == -EIO) {
        vl_err_set(err, "brick %s:%s failed to start: %s", b->host, b->path,
                   why.msg);
        return rc;
    }
    if (rc != 0) {
        *err = why;
        return rc;
    }
    for (int i = 0; i < MD_START_WAIT_S * 10; i++) {
        if (md_brick_pid(st, vol, b) != 0) {
            vl_glog(MD_DOMAIN, VL_LOG_INFO, "brick %s:%s of %s started "
                    "(pid %ld, port %u)", b->host, b->path, vol->name,
                    (long)md_brick_pid(st, vol, b), b->port);
            /* The heal daemon's clients of this brick connect now, not
             * after a backoff grown while it was down (none: ESRCH). */
            (void)md_heal_kick(st, vol->name);
            return 0;
        }
        usleep(100 * 1000);
    }
    vl_err_set(err, "brick %s:%s started but wrote no pid file %s",
               b->host, b->path, pidfile);
    return -EIO;
}


bool
md_fsd_kill(pid_t pid, const char *pidfile, const char *what)
{
    (void)kill(pid, SIGTERM);
    for (int ms = 0; ms < MD_STOP_WAIT_MS; ms += 50) {
        if (!md_pid_has_pidfile(pid, pidfile))
            return true;
        usleep(50 * 1000);
    }
    vl_glog(MD_DOMAIN, VL_LOG_WARNING, "%s (pid %ld) ignored SIGTERM for "
            "%d ms: killing it", what, (long)pid, MD_STOP_WAIT_MS);
    (void)kill(pid, SIGKILL);
    for (int ms = 0; ms < 5000; ms += 50) {
        if (!md_pid_has_pidfile(pid, pidfile))
            return true;
        usleep(50 * 1000);
    }
    return false;
}


int
md_brick_stop(struct md_state *st, const struct md_volume *vol,
              const struct md_brick *b, vl_err_t *err)
{
    char pidfile[4096], what[4200];
    pid_t pid = md_brick_pid(st, vol, b);

    if (pid == 0)
        return 0;
    md_brick_pidfile(st, vol, b, pidfile, sizeof(pidfile));
    snprintf(what, sizeof(what), "brick %s:%s", b->host, b->path);
    if (md_fsd_kill(pid, pidfile, what))
        return 0;
    vl_err_set(err, "brick %s:%s (pid %ld) does not die", b->host, b->path,
               (long)pid);
    return -EBUSY;
}
