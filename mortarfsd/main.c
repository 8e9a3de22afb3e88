/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mortarfsd: runs the translator graph of one volfile (a brick, or with a
 * mount point a FUSE client) until a signal stops it.
 *
 * Startup, in this order, so that every thread inherits the blocked
 * signal mask and no thread exists at fork time:
 *   parse the command line; load the volfile, from the file or fetched
 *   from mortard (+ overrides, + mount/fuse);
 *   block signals; fork unless -N (the parent waits for the child's
 *   status); pid file; log; event loop; build, init, activate the graph;
 *   wait until its top says it is usable; report; start the volfile
 *   watcher (with --volfile-server); serve signals.
 * Threads: main thread only here; the loop's threads run the graph; the
 * watcher thread (fetch.c) only hands new volfiles to the main thread.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch.h"
#include "fsd.h"
#include "mgmt-clnt.h"
#include "tls.h"
#include "xlators/builtin.h"

#define FSD_DOMAIN "mortarfsd"

/* Process state of one run, kept together for the cleanup path. */
struct fsd_run {
    struct fsd_opts opts;   /* owned; the command line */
    struct fsd_daemon dmn;  /* pipe and pid file */
    vl_volfile_t *vf;       /* owned; the volfile to run */
    vl_loop_t *loop;        /* owned */
    vl_graph_t *graph;      /* owned */
    char *log_path;         /* owned; NULL = stderr */
    struct fsd_vfsrc src;   /* --volfile-server & co (borrowed strings) */
    vrpc_tls_t *mgmt_tls;   /* owned; src.tls, or NULL for clear text */
    struct fsd_spec spec;   /* owned; the volfile mortard served */
    fsd_watch_t *watch;     /* owned; follows mortard's versions */
    struct fsd_metrics *metrics; /* owned; GET /metrics, or NULL */
    char *what;             /* owned; the volfile's name for logs */
};


/* Opens the log: the given file, else stderr in the foreground, else the
 * default file (creating its directory). */
static int
fsd_log_setup(struct fsd_run *run, vl_err_t *err)
{
    vl_log_level_t level = run->opts.has_log_level ? run->opts.log_level
                                                   : vl_log_get_level();
    int rc;

    if (run->opts.log_file != NULL && strcmp(run->opts.log_file, "-") != 0) {
        run->log_path = strdup(run->opts.log_file);
        if (run->log_path == NULL)
            return -ENOMEM;
    } else if (run->opts.log_file == NULL && !run->opts.is_foreground) {
        run->log_path = fsd_log_default_path(&run->opts);
        if (run->log_path == NULL)
            return -ENOMEM;
        (void)mkdir(FSD_DEFAULT_LOG_DIR, 0755);
    }
    rc = vl_log_open(run->log_path, level);
    if (rc != 0)
        vl_err_set(err, "log file %s: %s", run->log_path, strerror(-rc));
    return rc;
}


/* At DEBUG, the volfile actually run (overrides and mount/fuse applied). */
static void
fsd_log_volfile(const vl_volfile_t *vf)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out;
    char *line;
    char *save = NULL;

    if (vl_log_get_level() < VL_LOG_DEBUG)
        return;
    out = open_memstream(&text, &len);
    if (out == NULL)
        return;
    if (vl_volfile_write(vf, out) != 0) {
        fclose(out);
        free(text);
        return;
    }
    fclose(out);
    for (line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save))
        vl_glog(FSD_DOMAIN, VL_LOG_DEBUG, "volfile: %s", line);
    free(text);
}


/* Builds and starts the graph; 0 once its top reported it is usable. */
static int
fsd_graph_start(struct fsd_run *run, vl_err_t *err)
{
    char reason[sizeof(err->msg)] = "";
    int rc;

    run->loop = vl_loop_new(run->opts.event_threads);
    if (run->loop == NULL) {
        vl_err_set(err, "event loop: %s", strerror(errno));
        return -errno;
    }
    rc = vl_loop_start(run->loop);
    if (rc != 0) {
        vl_err_set(err, "event loop threads: %s", strerror(-rc));
        return rc;
    }
    run->graph = vl_graph_build(run->vf, run->loop, err);
    if (run->graph == NULL)
        return -EINVAL;
    rc = vl_graph_init(run->graph, err);
    if (rc != 0)
        return rc;
    vl_graph_activate(run->graph);
    /* The self-heal daemon runs whatever its bricks' state: it waits for
     * them itself (a heal answers "pending" while a copy is down), and
     * after a reboot it may well start before them. */
    if (run->opts.is_heal)
        return 0;
    rc = vl_graph_wait_ready(run->graph,
                             (int)run->opts.ready_timeout_s * 1000, reason,
                             sizeof(reason));
    if (rc == -ETIMEDOUT)
        vl_err_set(err, "graph not usable after %u s%s%s",
                   run->opts.ready_timeout_s, reason[0] != '\0' ? ": " : "",
                   reason);
    else if (rc != 0)
        vl_err_set(err, "%s", reason[0] != '\0' ? reason : strerror(-rc));
    return rc;
}


/* The volfile to run: the file, or fetched from the volfile servers. */
static int
fsd_volfile_get(struct fsd_run *run, vl_err_t *err)
{
    int rc;

    if (run->opts.volfile != NULL) {
        run->what = strdup(run->opts.volfile);
        if (run->what == NULL) {
            vl_err_set(err, "out of memory");
            return -ENOMEM;
        }
        run->vf = fsd_volfile_prepare(&run->opts, false, err);
        return run->vf != NULL ? 0 : -EINVAL;
    }
    run->src.servers = run->opts.vf_servers;
    run->src.n_servers = run->opts.n_vf_servers;
    run->src.port = (uint16_t)run->opts.vf_port;
    run->src.volume = run->opts.vf_id;
    /* GlusterFS's clients speak TLS to glusterd when the host has
     * secure-access on; --mgmt-tls asks for it anywhere. */
    if (run->opts.is_mgmt_tls || access(MGC_SECURE_ACCESS_FILE, F_OK) == 0) {
        struct vrpc_tls_conf tc = {.own_cert = run->opts.mgmt_ssl[0],
                                   .private_key = run->opts.mgmt_ssl[1],
                                   .ca_list = run->opts.mgmt_ssl[2],
                                   .check_host =
                                       run->opts.is_mgmt_check_host};
        vl_err_t terr = {.msg = ""};

        rc = vrpc_tls_new(&tc, false, &run->mgmt_tls, &terr);
        if (rc != 0) {
            vl_err_set(err, "volfile server TLS: %s", terr.msg);
            return rc;
        }
        run->src.tls = run->mgmt_tls;
    }
    rc = fsd_fetch_spec(&run->src, &run->spec, err);
    if (rc != 0)
        return rc;
    if (asprintf(&run->what, "volfile of '%s' version %llu from %s",
                 run->opts.vf_id, (unsigned long long)run->spec.version,
                 run->spec.server) < 0) {
        run->what = NULL;
        vl_err_set(err, "out of memory");
        return -ENOMEM;
    }
    run->vf = fsd_volfile_prepare_text(&run->opts, run->spec.text,
                                       run->spec.len, run->what, false, err);
    return run->vf != NULL ? 0 : -EINVAL;
}


static void
fsd_run_free(struct fsd_run *run)
{
    /* The watcher first: it may still signal us. */
    fsd_watch_stop(run->watch);
    run->watch = NULL;
    fsd_metrics_stop(run->metrics);
    run->metrics = NULL;
    if (run->graph != NULL)
        vl_graph_free(run->graph);
    if (run->loop != NULL) {
        vl_loop_stop(run->loop);
        vl_loop_free(run->loop);
    }
    if (run->vf != NULL)
        vl_volfile_free(run->vf);
    fsd_pidfile_release(&run->dmn);
    free(run->log_path);
    free(run->what);
    fsd_spec_clear(&run->spec);
    vrpc_tls_free(run->mgmt_tls);
    fsd_opts_clear(&run->opts);
}


int
main(int argc, char **argv)
{
    struct fsd_run run = {.dmn = {.ready_fd = -1, .pid_fd = -1}};
    struct fsd_sigctx sigctx = {0};
    vl_err_t err = {.msg = ""};
    sigset_t sigs;
    int status = FSD_EXIT_FAIL;
    int rc;

    if (fsd_opts_parse(argc, argv, &run.opts, &err) != 0) {
        fprintf(stderr, "mortarfsd: %s\n", err.msg);
        return FSD_EXIT_USAGE;
    }
    if (run.opts.is_help || run.opts.is_version) {
        if (run.opts.is_help)
            fsd_usage(stdout, "mortarfsd");
        else
            printf("mortarfsd %s (translator ABI %d)\n", PACKAGE_VERSION,
                   VL_XLATOR_ABI);
        fsd_opts_clear(&run.opts);
        return FSD_EXIT_OK;
    }

    if (run.opts.is_foreground)
        run.dmn.ready_fd = run.opts.ready_fd; /* -1 without --ready-fd */
    vl_global_init();
    if (run.opts.has_log_level)
        vl_log_set_level(run.opts.log_level);
    rc = vl_xlators_register_builtin();
    if (rc != 0) {
        vl_err_set(&err, "registering translators: %s", strerror(-rc));
        goto fail_early;
    }
    if (fsd_volfile_get(&run, &err) != 0)
        goto fail_early;
    rc = fsd_signals_block(&sigs);
    if (rc != 0) {
        vl_err_set(&err, "blocking signals: %s", strerror(-rc));
        goto fail_early;
    }
    if (!run.opts.is_foreground &&
        fsd_daemonize(&run.dmn, run.opts.mountpoint, &err) != 0)
        goto fail;

    /* From here on, in the daemon child (or the foreground process). */
    if (run.opts.pid_file != NULL &&
        fsd_pidfile_take(&run.dmn, run.opts.pid_file, &err) != 0)
        goto fail;
    if (fsd_log_setup(&run, &err) != 0)
        goto fail;
    if (!run.opts.is_foreground && fsd_stdio_to_null() != 0) {
        vl_err_set(&err, "redirecting stdio: %s", strerror(errno));
        goto fail;
    }
    vl_glog(FSD_DOMAIN, VL_LOG_INFO, "starting %s (pid %ld, %u event "
            "threads)%s%s", run.what, (long)getpid(),
            run.opts.event_threads, run.opts.mountpoint != NULL ? " on " : "",
            run.opts.mountpoint != NULL ? run.opts.mountpoint : "");
    fsd_log_volfile(run.vf);
    /* Before the graph: a port in use stops us before we mount or
     * listen. */
    if (fsd_metrics_start(&run.opts, &run.metrics, &err) != 0)
        goto fail;
    if (fsd_graph_start(&run, &err) != 0)
        goto fail;
    vl_glog(FSD_DOMAIN, VL_LOG_INFO, "graph ready");
    if (run.opts.is_rebalance) {
        /* rebalance.c: crawl and move files, then exit. */
        struct fsd_rebal_conf rconf = {
            .state_path = run.opts.rebal_state,
            .is_fix_layout = run.opts.is_fix_layout,
            .n_workers = run.opts.rebal_throttle,
            .ready = &run.dmn,
        };

        /* Ready once it holds the migration lock (rebalance.c). */
        status = fsd_rebalance_run(run.graph, &rconf, &sigs);
        if (run.dmn.ready_fd >= 0)
            fsd_report_ready(&run.dmn, -1, "the rebalance did not start");
        fsd_run_free(&run);
        return status;
    }
    if (run.opts.has_heal_resolve) {
        /* heal/heal-resolve.c: resolve the split-brains asked, exit. */
        struct fsd_heal_resolve_conf rconf = {
            .policy = run.opts.heal_policy,
            .paths = run.opts.heal_paths,
            .n_paths = run.opts.n_heal_paths,
            .timeout_s = run.opts.ready_timeout_s,
            .out = stdout,
        };

        fsd_report_ready(&run.dmn, 0, NULL);
        status = fsd_heal_resolve_run(run.graph, &rconf);
        fsd_run_free(&run);
        return status;
    }
    if (run.opts.is_heal) {
        /* heal/: heal what the bricks' indexes list until TERM. */
        struct fsd_heal_conf hconf = {
            .state_path = run.opts.heal_state,
            .bricks = run.opts.heal_bricks,
            .n_bricks = run.opts.n_heal_bricks,
            .n_threads = run.opts.heal_threads,
            .interval_s = run.opts.heal_interval,
            .dump_dir = run.opts.dump_dir,
            .ready = &run.dmn,
        };

        status = fsd_heal_run(run.graph, &hconf, &sigs);
        fsd_run_free(&run);
        vl_glog(FSD_DOMAIN, VL_LOG_INFO, "stopped");
        return status;
    }
    if (run.opts.has_vf_server) {
        rc = fsd_watch_start(&run.src, run.spec.version,
                             run.spec.server_index, pthread_self(),
                             &run.watch);
        if (rc != 0) {
            vl_err_set(&err, "volfile watcher thread: %s", strerror(-rc));
            goto fail;
        }
    }
    fsd_report_ready(&run.dmn, 0, NULL);

    sigctx.opts = &run.opts;
    sigctx.log_path = run.log_path;
    sigctx.graph = &run.graph;
    sigctx.watch = run.watch;
    (void)fsd_signals_serve(&sigs, &sigctx);
    fsd_run_free(&run);
    vl_glog(FSD_DOMAIN, VL_LOG_INFO, "stopped");
    return FSD_EXIT_OK;

fail:
    vl_glog(FSD_DOMAIN, VL_LOG_ERROR, "startup failed: %s", err.msg);
    if (run.dmn.ready_fd >= 0)
        fsd_report_ready(&run.dmn, -1, err.msg);
    else
        fprintf(stderr, "mortarfsd: %s\n", err.msg);
    fsd_run_free(&run);
    return status;

fail_early:
    fprintf(stderr, "mortarfsd: %s\n", err.msg);
    fsd_report_ready(&run.dmn, -1, err.msg);
    fsd_run_free(&run);
    return status;
}
