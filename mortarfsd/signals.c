/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * signals: the main thread's sigwait loop.
 *
 * TERM, INT, USR1 and HUP are blocked before the first thread is created,
 * so every thread inherits the mask and only the main thread receives them
 * through sigwait: handlers never run on an event thread, and the actions
 * (statedump, log reopen, teardown) run in normal thread context.
 * SIGPIPE is ignored: a peer closing a socket is an error return, not a
 * process kill. mount/fuse sends SIGTERM to the process when the kernel
 * says the mount is gone (umount), which ends the loop the same way.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsd.h"

#define FSD_DOMAIN "mortarfsd"


int
fsd_signals_block(sigset_t *set)
{
    int rc;

    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        return -errno;
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGUSR1);
    sigaddset(set, SIGHUP);
    rc = pthread_sigmask(SIG_BLOCK, set, NULL);
    return -rc;
}


int
fsd_statedump(const char *dir, char *out, size_t len)
{
    FILE *f;
    int rc;

    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return -errno;
    snprintf(out, len, "%s/mortarfsd.%ld.dump.%lld", dir, (long)getpid(),
             (long long)time(NULL));
    f = fopen(out, "we");
    if (f == NULL)
        return -errno;
    vl_statedump_write(f);
    rc = fclose(f) == 0 ? 0 : -errno;
    return rc;
}


int
fsd_signals_serve(const sigset_t *set, const struct fsd_opts *opts,
                  const char *log_path)
{
    char path[4096];
    int sig;
    int rc;

    for (;;) {
        rc = sigwait(set, &sig);
        if (rc != 0)
            continue;
        switch (sig) {
        case SIGTERM:
        case SIGINT:
            vl_glog(FSD_DOMAIN, VL_LOG_INFO, "received %s, shutting down",
                    sig == SIGTERM ? "SIGTERM" : "SIGINT");
            return sig;
        case SIGUSR1:
            rc = fsd_statedump(opts->dump_dir, path, sizeof(path));
            if (rc == 0)
                vl_glog(FSD_DOMAIN, VL_LOG_INFO, "statedump written to %s",
                        path);
            else
                vl_glog(FSD_DOMAIN, VL_LOG_ERROR, "statedump to %s: %s",
                        path, strerror(-rc));
            break;
        case SIGHUP:
            rc = vl_log_open(log_path, vl_log_get_level());
            if (rc == 0)
                vl_glog(FSD_DOMAIN, VL_LOG_INFO, "log reopened");
            break;
        default:
            break;
        }
    }
}
