/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * signals: the main thread's sigwait loop.
 *
 * TERM, INT, USR1 and HUP are blocked before the first thread is created,
 * so every thread inherits the mask and only the main thread receives them
 * through sigwait: handlers never run on an event thread, and the actions
 * (statedump, log reopen, teardown) run in normal thread context.
 * SIGPIPE is ignored: a peer closing a socket is an error return, not a
 * process kill. HUP also re-reads --volfile (and the TLS certificates,
 * for the connections that follow) and USR2 (sent by the volfile
 * watcher thread, fetch.c) brings a new volfile from mortard: both are
 * applied here because the main thread is the one that manages the graph
 * (vl_graph_reconfigure's rule). A FUSE client's volfile that changes
 * more than live options switches the mount to a new graph (switch.c);
 * the old graphs are freed before this loop returns. mount/fuse sends
 * SIGTERM to the process when the kernel says the mount is gone (umount),
 * which ends the loop the same way. FSD_PROFILE_SIGNAL (SIGRTMIN+1,
 * sent by mortard with a value) writes the brick's profile (profile.c).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fetch.h"
#include "fsd.h"
#include "tls.h"
#include "xlators/mount/fuse/fuse-switch.h"

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
    sigaddset(set, SIGUSR2);
    sigaddset(set, FSD_PROFILE_SIGNAL);
    rc = pthread_sigmask(SIG_BLOCK, set, NULL);
    return -rc;
}


int
fsd_statedump(const char *dir, char *out, size_t len)
{
    return vl_statedump_file(dir, "mortarfsd", NULL, NULL, out, len);
}


int
fsd_graph_apply(vl_graph_t **graph, const vl_volfile_t *vf, const char *what,
                const struct fsd_opts *opts)
{
    vl_err_t err = {.msg = ""};
    int rc;

    rc = vl_graph_reconfigure(*graph, vf, &err);
    if (rc == 0)
        vl_glog(FSD_DOMAIN, VL_LOG_INFO, "applied %s to the running graph",
                what);
    else if (rc == -EXDEV && opts->mountpoint != NULL
             && vfuse_switch_is_fuse(*graph))
        rc = fsd_switch_graph(graph, vf, what, opts->ready_timeout_s);
    else if (rc == -EXDEV)
        /* A brick's port and state cannot move to a second graph. */
        vl_glog(FSD_DOMAIN, VL_LOG_WARNING, "%s changes more than live "
                "options (%s): it needs a remount (a restart of this "
                "process); the old graph keeps running", what,
                err.msg[0] != '\0' ? err.msg : "graph shape");
    else
        vl_glog(FSD_DOMAIN, VL_LOG_ERROR, "%s not applied: %s", what,
                err.msg[0] != '\0' ? err.msg : strerror(-rc));
    return rc;
}


/* HUP: the --volfile file again. */
static void
fsd_reload_file(const struct fsd_sigctx *ctx)
{
    vl_err_t err = {.msg = ""};
    vl_volfile_t *vf;

    if (ctx->opts->volfile == NULL || ctx->graph == NULL
        || *ctx->graph == NULL)
        return;
    vf = fsd_volfile_prepare(ctx->opts, true, &err);
    if (vf == NULL) {
        vl_glog(FSD_DOMAIN, VL_LOG_ERROR, "reloading %s: %s",
                ctx->opts->volfile, err.msg);
        return;
    }
    (void)fsd_graph_apply(ctx->graph, vf, ctx->opts->volfile, ctx->opts);
    vl_volfile_free(vf);
}


/* USR2: the newest volfile the watcher got from mortard. */
static void
fsd_reload_spec(const struct fsd_sigctx *ctx)
{
    struct fsd_spec spec;
    vl_err_t err = {.msg = ""};
    vl_volfile_t *vf;
    char what[512];

    if (ctx->watch == NULL || ctx->graph == NULL || *ctx->graph == NULL ||
        !fsd_watch_take(ctx->watch, &spec))
        return;
    snprintf(what, sizeof(what), "volfile of '%s' version %llu from %s",
             ctx->opts->vf_id, (unsigned long long)spec.version,
             spec.server);
    vf = fsd_volfile_prepare_text(ctx->opts, spec.text, spec.len, what,
                                  true, &err);
    if (vf == NULL) {
        vl_glog(FSD_DOMAIN, VL_LOG_ERROR, "%s: %s", what, err.msg);
    } else {
        (void)fsd_graph_apply(ctx->graph, vf, what, ctx->opts);
        vl_volfile_free(vf);
    }
    fsd_spec_clear(&spec);
}


int
fsd_signals_serve(const sigset_t *set, const struct fsd_sigctx *ctx)
{
    char path[4096];
    siginfo_t info;
    int sig;
    int rc;

    for (;;) {
        /* sigwaitinfo: the profile request's value comes with it. */
        sig = sigwaitinfo(set, &info);
        if (sig < 0)
            continue;
        if (sig == FSD_PROFILE_SIGNAL) {
            rc = fsd_profile_dump(ctx->graph != NULL ? *ctx->graph : NULL,
                                  ctx->opts->dump_dir,
                                  info.si_value.sival_int, path,
                                  sizeof(path));
            if (rc != 0)
                vl_glog(FSD_DOMAIN, VL_LOG_ERROR, "profile to %s: %s", path,
                        strerror(-rc));
            continue;
        }
        switch (sig) {
        case SIGTERM:
        case SIGINT:
            vl_glog(FSD_DOMAIN, VL_LOG_INFO, "received %s, shutting down",
                    sig == SIGTERM ? "SIGTERM" : "SIGINT");
            fsd_switch_shutdown();
            return sig;
        case SIGUSR1:
            rc = fsd_statedump(ctx->opts->dump_dir, path, sizeof(path));
            if (rc == 0)
                vl_glog(FSD_DOMAIN, VL_LOG_INFO, "statedump written to %s",
                        path);
            else
                vl_glog(FSD_DOMAIN, VL_LOG_ERROR, "statedump to %s: %s",
                        path, strerror(-rc));
            break;
        case SIGHUP:
            rc = vl_log_open(ctx->log_path, vl_log_get_level());
            if (rc == 0)
                vl_glog(FSD_DOMAIN, VL_LOG_INFO, "log reopened");
            fsd_reload_file(ctx);
            /* TLS certificates too, changed or not (new connections). */
            vrpc_tls_reload_all();
            break;
        case SIGUSR2:
            fsd_reload_spec(ctx);
            break;
        default:
            break;
        }
    }
}
