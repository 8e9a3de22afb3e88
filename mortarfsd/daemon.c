/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon: detaching from the terminal, the startup pipe, the pid file.
 *
 * The parent forks before any thread exists and blocks on a pipe. The
 * child builds the graph and writes one status byte ('0' ready, '1'
 * failed) followed by a one-line reason; the parent prints the reason to
 * stderr and exits 1, or exits 0 once the graph is usable. If the child
 * dies without writing, the parent reports how it died (and detaches the
 * mount it may have left).
 * The pid file is opened with O_CREAT and locked with an open-file-
 * description lock (F_OFD_SETLK, so closing another fd of the file does
 * not drop it, as it would a classic POSIX lock): a
 * second process on the same pid file fails while the first runs, and a
 * stale file left by a crash does not block a restart.
 * Threads: fsd_daemonize runs before any thread; the rest in main.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsd.h"


static void
fsd_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}


/* If the top mount on mnt is ours (fuse.mortar), detaches it: a client
 * that died during startup must not leave a dead mount behind ("Transport
 * endpoint is not connected" for whoever touches the path next). */
static void
fsd_mount_cleanup(const char *mnt)
{
    char line[4096];
    bool is_ours = false;
    FILE *f;

    f = fopen("/proc/self/mounts", "re");
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        char *save = NULL;
        char *src = strtok_r(line, " ", &save);
        char *dir = strtok_r(NULL, " ", &save);
        char *type = strtok_r(NULL, " ", &save);

        if (src != NULL && dir != NULL && type != NULL &&
            strcmp(dir, mnt) == 0)
            is_ours = strcmp(type, "fuse.mortar") == 0; /* last one wins */
    }
    fclose(f);
    if (is_ours && umount2(mnt, MNT_DETACH) == 0)
        fprintf(stderr, "mortarfsd: detached the dead mount on %s\n", mnt);
}


/* The parent side: never returns. */
static void __attribute__((noreturn))
fsd_parent_wait(pid_t child, int fd, const char *mountpoint)
{
    char buf[1024];
    size_t used = 0;
    int status = 0;
    ssize_t n;

    for (;;) {
        n = read(fd, buf + used, sizeof(buf) - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
        if (used == sizeof(buf) - 1)
            break;
    }
    buf[used] = '\0';
    if (used > 0 && buf[0] == '0')
        _exit(FSD_EXIT_OK);
    if (used > 0 && buf[0] == '1') {
        fprintf(stderr, "mortarfsd: %s\n",
                buf[1] != '\0' ? buf + 1 : "startup failed");
        /* Reap it if it already went; a failed child exits promptly. */
        (void)waitpid(child, &status, 0);
        _exit(FSD_EXIT_FAIL);
    }
    /* No status: the child died during startup. */
    if (waitpid(child, &status, 0) == child && WIFSIGNALED(status))
        fprintf(stderr, "mortarfsd: startup failed: killed by signal %d "
                "(%s)\n", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        fprintf(stderr, "mortarfsd: startup failed: exited with status "
                "%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (mountpoint != NULL)
        fsd_mount_cleanup(mountpoint);
    _exit(FSD_EXIT_FAIL);
}


int
fsd_daemonize(struct fsd_daemon *d, const char *mountpoint, vl_err_t *err)
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
        close(fds[0]);
        close(fds[1]);
        return -errno;
    }
    if (pid > 0) {
        close(fds[1]);
        fsd_parent_wait(pid, fds[0], mountpoint);
    }
    close(fds[0]);
    d->ready_fd = fds[1];
    if (setsid() < 0) {
        vl_err_set(err, "setsid: %s", strerror(errno));
        return -errno;
    }
    if (chdir("/") != 0) {
        vl_err_set(err, "chdir /: %s", strerror(errno));
        return -errno;
    }
    return 0;
}


int
fsd_stdio_to_null(void)
{
    int fd = open("/dev/null", O_RDWR);

    if (fd < 0)
        return -errno;
    for (int i = 0; i < 3; i++) {
        if (fd != i && dup2(fd, i) < 0) {
            int rc = -errno;

            close(fd);
            return rc;
        }
    }
    if (fd > 2)
        close(fd);
    return 0;
}


int
fsd_pidfile_take(struct fsd_daemon *d, const char *path, vl_err_t *err)
{
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    char buf[32];
    ssize_t n;
    int fd;
    int rc;
    int len;

    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = -errno;
        vl_err_set(err, "pid file %s: %s", path, strerror(errno));
        return rc;
    }
    if (fcntl(fd, F_OFD_SETLK, &lk) != 0) {
        rc = -errno;
        n = pread(fd, buf, sizeof(buf) - 1, 0);

        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        if (rc == -EAGAIN || rc == -EACCES)
            vl_err_set(err, "pid file %s is held by running process %s",
                       path, buf[0] != '\0' ? buf : "(unknown)");
        else
            vl_err_set(err, "pid file %s: lock: %s", path, strerror(-rc));
        close(fd);
        return rc == -EACCES ? -EAGAIN : rc;
    }
    len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)len, 0) != len) {
        rc = -errno;
        vl_err_set(err, "pid file %s: write: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    d->pid_fd = fd;
    d->pid_path = (char *)path;
    return 0;
}


void
fsd_pidfile_release(struct fsd_daemon *d)
{
    if (d->pid_fd < 0)
        return;
    /* Unlink while still holding the lock so no newcomer's file goes. */
    (void)unlink(d->pid_path);
    close(d->pid_fd);
    d->pid_fd = -1;
}


void
fsd_report_ready(struct fsd_daemon *d, int status, const char *reason)
{
    char buf[1024];
    int len;

    if (d == NULL || d->ready_fd < 0)
        return;
    len = snprintf(buf, sizeof(buf), "%c%s", status == 0 ? '0' : '1',
                   reason != NULL ? reason : "");
    if (len >= (int)sizeof(buf))
        len = (int)sizeof(buf) - 1;
    fsd_write_all(d->ready_fd, buf, (size_t)len);
    close(d->ready_fd);
    d->ready_fd = -1;
}
