/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsd: private declarations of mortarfsd, the graph runner.
 *
 * main.c runs the startup sequence; opts.c parses the command line;
 * prepare.c applies --xlator-option overrides and puts mount/fuse on top;
 * daemon.c forks, reports readiness through a pipe and owns the pid file;
 * signals.c blocks signals before any thread exists and serves them with
 * sigwait in the main thread (HUP and USR2 reconfigure the graph there);
 * fetch.c gets the volfile from mortard and runs the watcher thread;
 * mgmt-clnt.c is the blocking management-protocol client (also used by
 * the mortar CLI).
 */
#ifndef MORTARFSD_FSD_H
#define MORTARFSD_FSD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "vol/vol.h"

/* Exit codes, also listed by --help. */
#define FSD_EXIT_OK 0      /* started (or stopped by a signal) cleanly */
#define FSD_EXIT_FAIL 1    /* the graph could not be loaded or started */
#define FSD_EXIT_USAGE 2   /* bad command line */

#define FSD_DEFAULT_LOG_DIR "/var/log/mortar"
#define FSD_DEFAULT_DUMP_DIR "/var/run/mortar"
#define FSD_DEFAULT_EVENT_THREADS 2
#define FSD_DEFAULT_READY_TIMEOUT_S 30
#define FSD_DEFAULT_VOLFILE_PORT 24100
#define FSD_MAX_VOLFILE_SERVERS 16

/* One "NAME.KEY=VALUE" from --xlator-option, split. */
struct fsd_xopt {
    char *arg;   /* owned; the text as given, for messages */
    char *value; /* owned */
};

/* Everything the command line says; filled by fsd_opts_parse. */
struct fsd_opts {
    char *volfile;             /* owned; absolute path, or NULL with
                                * vf_servers */
    char *vf_servers[FSD_MAX_VOLFILE_SERVERS]; /* owned host names:
                                * --volfile-server, then the backups */
    size_t n_vf_servers;
    bool has_vf_server;        /* --volfile-server given */
    unsigned vf_port;          /* --volfile-server-port */
    char *vf_id;               /* owned; --volfile-id, the volume */
    char *mountpoint;          /* owned; absolute path or NULL (no FUSE) */
    bool is_foreground;        /* -N: no fork, log to stderr by default */
    char *log_file;            /* owned; NULL = default for the mode */
    bool has_log_level;        /* --log-level given */
    vl_log_level_t log_level;  /* valid if has_log_level */
    char *pid_file;            /* owned; absolute path or NULL */
    unsigned event_threads;    /* threads of the vl_loop */
    char *dump_dir;            /* owned; absolute path */
    unsigned ready_timeout_s;  /* how long to wait for the graph */
    struct fsd_xopt *xopts;    /* owned array; --xlator-option */
    size_t n_xopts;
    struct vl_kv *fuse_opts;   /* owned array (keys and values owned) */
    size_t n_fuse_opts;
    bool is_help;              /* --help: print usage, exit 0 */
    bool is_version;           /* --version: print version, exit 0 */
};

/* opts.c */
/* Parses argv into opts (zeroed by this call). Returns 0, or -EINVAL with
 * err set to a one-line reason. Relative paths are made absolute. */
int fsd_opts_parse(int argc, char **argv, struct fsd_opts *opts /* OUT */,
                   vl_err_t *err);
void fsd_opts_clear(struct fsd_opts *opts);
void fsd_usage(FILE *out, const char *prog);

/* prepare.c */
/* Loads opts->volfile, applies the overrides and, with a mount point,
 * appends mount/fuse on top. NULL with err set on any failure. With
 * is_reload (the graph runs), the mount point is not checked. */
vl_volfile_t *fsd_volfile_prepare(const struct fsd_opts *opts,
                                  bool is_reload, vl_err_t *err);
/* The same for a volfile given as text (from mortard); source names it
 * in messages. */
vl_volfile_t *fsd_volfile_prepare_text(const struct fsd_opts *opts,
                                       const char *text, size_t len,
                                       const char *source, bool is_reload,
                                       vl_err_t *err);
/* Applies --xlator-option overrides to vf; returns the volfile to use (vf
 * itself when there are none, else a new one; vf is then freed). NULL
 * with err set on failure (vf freed too). */
vl_volfile_t *fsd_volfile_override(vl_volfile_t *vf,
                                   const struct fsd_xopt *xopts,
                                   size_t n_xopts, vl_err_t *err);
/* Appends mount/fuse named after the top volume; 0 or -errno with err. */
int fsd_volfile_add_fuse(vl_volfile_t *vf, const char *mountpoint,
                         const struct vl_kv *fuse_opts, size_t n_fuse_opts,
                         vl_err_t *err);
/* Default log name: mount point or volfile base name, '/' -> '-'. */
char *fsd_log_default_path(const struct fsd_opts *opts);

/* daemon.c */
struct fsd_daemon {
    int ready_fd;   /* write end of the startup pipe, -1 when not forked */
    int pid_fd;     /* locked pid file, -1 if none */
    char *pid_path; /* borrowed from opts; unlinked at exit */
};
/* Forks; the parent waits for the child's status and never returns. In
 * the child returns 0 after setsid. mountpoint (or NULL) is detached by
 * the parent if the child dies during startup leaving it mounted. */
int fsd_daemonize(struct fsd_daemon *d /* OUT */, const char *mountpoint,
                  vl_err_t *err);
/* Redirects stdin/stdout/stderr to /dev/null; 0 or -errno. */
int fsd_stdio_to_null(void);
/* Creates and locks the pid file and writes our pid; fails if another
 * live process holds it. */
int fsd_pidfile_take(struct fsd_daemon *d, const char *path, vl_err_t *err);
void fsd_pidfile_release(struct fsd_daemon *d);
/* Tells the waiting parent how startup ended (status 0 or not, reason).
 * No-op in the foreground. */
void fsd_report_ready(struct fsd_daemon *d, int status, const char *reason);

/* signals.c */
/* Blocks the signals the main thread serves; call before any thread. */
int fsd_signals_block(sigset_t *set /* OUT */);
struct fsd_watch; /* fetch.h */

/* What the signal loop acts on besides the options. */
struct fsd_sigctx {
    const struct fsd_opts *opts; /* borrowed */
    const char *log_path;        /* borrowed; NULL = stderr */
    vl_graph_t *graph;           /* borrowed; reconfigured on HUP/USR2 */
    struct fsd_watch *watch;     /* borrowed; new volfiles, or NULL */
};
/* Serves signals until SIGTERM/SIGINT; returns the signal that ended it.
 * HUP reopens the log and, with --volfile, applies the file again;
 * USR2 (sent by the watcher) applies a new volfile from mortard. */
int fsd_signals_serve(const sigset_t *set, const struct fsd_sigctx *ctx);
/* Applies vf (prepared) to the running graph; logs the outcome. */
int fsd_graph_apply(vl_graph_t *graph, const vl_volfile_t *vf,
                    const char *what);
/* Writes a statedump into dir; returns 0 or -errno, path in out. */
int fsd_statedump(const char *dir, char *out, size_t len);

#endif /* MORTARFSD_FSD_H */
