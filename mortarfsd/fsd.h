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
 * the mortar CLI); kv-file.c writes and reads the worker modes' progress
 * files; metrics.c serves GET /metrics (--metrics-port). The worker
 * modes have a folder each: rebalance/ (--rebalance,
 * doc/rebalance.md) and heal/ (--heal, heal/README.md).
 */
#ifndef MORTARFSD_FSD_H
#define MORTARFSD_FSD_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "vol/vol.h"
#include "mortarfsd/heal/heal.h"
#include "xlators/debug/io-stats/io-stats.h"

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
    bool is_mgmt_tls;          /* --mgmt-tls: fetch volfiles over TLS */
    bool is_mgmt_check_host;   /* --mgmt-ssl-check-host */
    char *mgmt_ssl[3];         /* owned or NULL (default): --mgmt-ssl-cert,
                                * --mgmt-ssl-key, --mgmt-ssl-ca */
    char *mountpoint;          /* owned; absolute path or NULL (no FUSE) */
    bool is_foreground;        /* -N: no fork, log to stderr by default */
    char *log_file;            /* owned; NULL = default for the mode */
    bool has_log_level;        /* --log-level given */
    vl_log_level_t log_level;  /* valid if has_log_level */
    char *pid_file;            /* owned; absolute path or NULL */
    unsigned event_threads;    /* threads of the vl_loop */
    char *dump_dir;            /* owned; absolute path */
    unsigned ready_timeout_s;  /* how long to wait for the graph */
    int ready_fd;              /* --ready-fd (with -N), or -1 */
    struct fsd_xopt *xopts;    /* owned array; --xlator-option */
    size_t n_xopts;
    struct vl_kv *fuse_opts;   /* owned array (keys and values owned) */
    size_t n_fuse_opts;
    bool is_help;              /* --help: print usage, exit 0 */
    bool is_version;           /* --version: print version, exit 0 */
    bool is_rebalance;         /* --rebalance: run the rebalance, no FUSE */
    char *rebal_state;         /* owned; --rebalance-state, absolute */
    bool is_fix_layout;        /* --fix-layout: layouts only, no moves */
    unsigned rebal_throttle;   /* --throttle: files moved in parallel */
    bool is_heal;              /* --heal: the self-heal daemon, no FUSE */
    struct fsd_heal_brick heal_bricks[FSD_HEAL_BRICKS_MAX]; /* owned
                                * strings; --heal-brick */
    size_t n_heal_bricks;
    char *heal_state;          /* owned; --heal-state, absolute */
    unsigned heal_threads;     /* --heal-threads */
    unsigned heal_interval;    /* --heal-interval, seconds */
    bool has_heal_resolve;     /* --heal-resolve: resolve and exit */
    struct fsd_heal_policy heal_policy; /* its POLICY[:CHILD] */
    char **heal_paths;         /* owned array of owned strings;
                                * --heal-path */
    size_t n_heal_paths;
    bool has_metrics;          /* --metrics-port given */
    unsigned metrics_port;     /* --metrics-port, 0 = the kernel picks */
    char *metrics_address;     /* owned or NULL (loopback);
                                * --metrics-address */
    char *metrics_port_file;   /* owned, absolute, or NULL;
                                * --metrics-port-file */
    char *metrics_volume;      /* owned or NULL; --metrics-volume */
    char *metrics_brick;       /* owned or NULL; --metrics-brick */
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
    int ready_fd;   /* write end of the startup pipe (or --ready-fd), -1
                     * when nobody waits */
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
/* Tells the waiting parent (or --ready-fd's reader) how startup ended
 * (status 0 or not, reason), once. No-op when nobody waits. */
void fsd_report_ready(struct fsd_daemon *d, int status, const char *reason);

/* metrics.c */
struct fsd_metrics;
/* With --metrics-port, serves GET /metrics (vol/metrics.h) and writes
 * the port to --metrics-port-file. Returns 0 (also without the option,
 * *out NULL), or -errno with err one line; a port in use is an error:
 * the process does not start. */
int fsd_metrics_start(const struct fsd_opts *opts,
                      struct fsd_metrics **out /* OUT */, vl_err_t *err);
/* Stops the server and removes the port file. NULL is allowed. */
void fsd_metrics_stop(struct fsd_metrics *m);

/* signals.c */
/* Blocks the signals the main thread serves; call before any thread. */
int fsd_signals_block(sigset_t *set /* OUT */);
struct fsd_watch; /* fetch.h */

/* What the signal loop acts on besides the options. */
struct fsd_sigctx {
    const struct fsd_opts *opts; /* borrowed */
    const char *log_path;        /* borrowed; NULL = stderr */
    vl_graph_t **graph;          /* borrowed; the running graph,
                                    reconfigured on HUP/USR2 or replaced
                                    by a graph switch (switch.c) */
    struct fsd_watch *watch;     /* borrowed; new volfiles, or NULL */
};
/* Serves signals until SIGTERM/SIGINT; returns the signal that ended it.
 * HUP reopens the log and, with --volfile, applies the file again;
 * USR2 (sent by the watcher) applies a new volfile from mortard. */
int fsd_signals_serve(const sigset_t *set, const struct fsd_sigctx *ctx);
/* Applies vf (prepared) to the running graph *graph; logs the outcome.
 * A FUSE client whose new volfile changes more than live options
 * switches to a new graph (*graph replaced). */
int fsd_graph_apply(vl_graph_t **graph, const vl_volfile_t *vf,
                    const char *what, const struct fsd_opts *opts);

/* profile.c */
/* The signal mortard sends for `volume profile`/`top`, and its value:
 * request number << FSD_PROFILE_SEQ_SHIFT | io-stats dump mode. */
#define FSD_PROFILE_SIGNAL IOS_PROFILE_SIGNAL
#define FSD_PROFILE_SEQ_SHIFT IOS_PROFILE_SEQ_SHIFT
#define FSD_PROFILE_MODE_MASK IOS_PROFILE_MODE_MASK
/* Writes the profile of graph's io-stats for request value into
 * DIR/mortarfsd.<pid>.profile (its path into path), crash-safe.
 * 0 or -errno. */
int fsd_profile_dump(vl_graph_t *graph, const char *dir, int value,
                     char *path, size_t len);

/* switch.c */
/* Builds and starts a graph from vf and moves the mount of *graph to it
 * once it is ready; the old graph is freed on the reaper thread when its
 * calls are done. On failure the old graph keeps serving (one log line).
 * Returns 0 or -errno. Main thread only. */
int fsd_switch_graph(vl_graph_t **graph, const vl_volfile_t *vf,
                     const char *what, unsigned ready_timeout_s);
/* Frees the graphs still waiting for their calls (ending the waits) and
 * joins the reaper thread. Before the running graph is freed. */
void fsd_switch_shutdown(void);
/* Writes a statedump into dir; returns 0 or -errno, path in out. */
int fsd_statedump(const char *dir, char *out, size_t len);

/* ---- rebalance (rebalance/: rebalance.c, rebalance-migrate.c,
 * rebalance-state.c; see doc/rebalance.md) ---- */

#define FSD_REBAL_THROTTLE_DEFAULT 2 /* "normal" */
#define FSD_REBAL_THROTTLE_MAX 64
#define FSD_REBAL_CURSOR_MAX 4096    /* bytes of the cursor path */
#define FSD_REBAL_SUBVOLS_MAX 32     /* "N:HASH" of the subvolume set */

/* Parses --throttle: lazy 1, normal 2, aggressive 4, or a number in
 * 1..FSD_REBAL_THROTTLE_MAX; 0 or -EINVAL. */
int fsd_rebal_throttle_parse(const char *s, unsigned *out);

enum fsd_rebal_status {
    FSD_REBAL_RUNNING = 0,
    FSD_REBAL_COMPLETED,
    FSD_REBAL_FAILED,
    FSD_REBAL_STOPPED,
};

/* The state file's contents (key=value lines, see doc/rebalance.md). */
struct fsd_rebal_state {
    enum fsd_rebal_status status; /* status= */
    long pid;                     /* pid= of the rebalance process */
    int64_t started;              /* started= unix seconds */
    int64_t updated;              /* updated= unix seconds */
    uint64_t scanned_files;       /* scanned_files= names looked at */
    uint64_t scanned_dirs;        /* scanned_dirs= directories done */
    uint64_t scanned_bytes;       /* scanned_bytes= data bytes looked at */
    uint64_t moved_files;         /* moved_files= */
    uint64_t moved_bytes;         /* moved_bytes= */
    uint64_t failed_files;        /* failed_files= */
    uint64_t skipped_files;       /* skipped_files= */
    uint64_t total_bytes;         /* total_bytes= estimate, for the ETA */
    int64_t eta_seconds;          /* eta_seconds= -1 unknown */
    bool is_fix_layout;           /* mode=fix-layout (else rebalance, also
                                   * when absent): what the cursor covers */
    char subvols[FSD_REBAL_SUBVOLS_MAX]; /* subvols= the set the cursor was
                                   * reached over ("" in older files) */
    char cursor[FSD_REBAL_CURSOR_MAX]; /* cursor= last fully done dir */
    char error[512];              /* error= last failure, one line */
};

/* rebalance-state.c */
const char *fsd_rebal_status_name(enum fsd_rebal_status status);
/* Writes st to path crash-safely: path.tmp, fsync, rename, fsync of the
 * directory. 0 or -errno. */
int fsd_rebal_state_write(const char *path, const struct fsd_rebal_state *st);
/* Reads path (a torn path.tmp is never looked at). 0, -ENOENT, -EINVAL
 * (not a state file) or -errno. */
int fsd_rebal_state_read(const char *path, struct fsd_rebal_state *st);
/* "N:HASH" of the subvolume names, in order (out: FSD_REBAL_SUBVOLS_MAX
 * bytes): a layout is refitted over exactly that list. */
void fsd_rebal_subvols_id(const char *const *names, size_t n, char *out);
/* Whether a run (a fix-layout one if is_fix_layout) over the subvolume
 * set subvols (NULL: not checked) may go on after st's cursor: st says
 * running or stopped, its run did at least the work this one would (a
 * fix-layout's cursor says nothing of files moved, so a rebalance after
 * one starts afresh), over the same subvolumes (after an add-brick the
 * directories before the cursor need the new brick in their layouts). A
 * file without subvols= (older writers) passes that test. */
bool fsd_rebal_may_resume(const struct fsd_rebal_state *st,
                          bool is_fix_layout, const char *subvols);
/* Crawl order of directory paths ("/", "/a", "/a/b", "/b"): depth-first,
 * names in strcmp order; <0, 0, >0 like strcmp. */
int fsd_rebal_path_cmp(const char *a, const char *b);
/* True when a resumed crawl skips dir's own work: it is at or before
 * cursor in crawl order (its subdirectories are still visited). */
bool fsd_rebal_cursor_skip(const char *dir, const char *cursor);
/* Updates st->eta_seconds from the bytes scanned so far at now. */
void fsd_rebal_eta_update(struct fsd_rebal_state *st, int64_t now);

/* rebalance-migrate.c */
/* What one subvolume holds under a name. */
enum fsd_rebal_kind {
    FSD_RK_NONE = 0, /* nothing */
    FSD_RK_DIR,      /* a directory */
    FSD_RK_DATA,     /* a regular file with data */
    FSD_RK_LINK,     /* a link file (mode S_ISVTX, size 0) */
    FSD_RK_MARKER,   /* a migration in progress (S_ISVTX|S_ISGID) */
    FSD_RK_OTHER,    /* symlink, device, fifo, socket */
};
struct fsd_rebal_ent {
    enum fsd_rebal_kind kind; /* FSD_RK_NONE: the subvolume has no entry */
    struct vl_iatt iatt;      /* as its readdirplus gave it */
};
/* What the per-name work needs of the run. */
struct fsd_rebal_io {
    vl_xlator_t *top;          /* borrowed; cluster/distribute */
    vl_xlator_t *const *subs;  /* borrowed; top->children */
    size_t n_subs;
    const atomic_bool *stop;   /* borrowed; set by SIGTERM */
    bool is_strict;            /* listings count an entry without a GFID
                                * as left behind too (the check of the
                                * bricks being removed) */
};
enum fsd_rebal_outcome {
    FSD_RO_IN_PLACE = 0, /* nothing to move (maybe cleaned up) */
    FSD_RO_MOVED,        /* migrated; *bytes says how much */
    FSD_RO_SKIPPED,      /* left where it is (hard link, not regular) */
    FSD_RO_FAILED,       /* why says what */
    FSD_RO_STOPPED,      /* abandoned cleanly for SIGTERM */
};
enum fsd_rebal_kind fsd_rebal_classify(const struct vl_iatt *iatt);
/* Puts the name (one entry per subvolume in ents) on its hashed
 * subvolume, cleaning up markers, stale link files and stale sources.
 * *bytes gets the bytes moved (with FSD_RO_MOVED), else 0. */
enum fsd_rebal_outcome fsd_rebal_file(const struct fsd_rebal_io *io,
                                      vl_inode_t *dir, const char *name,
                                      const struct fsd_rebal_ent *ents,
                                      uint64_t *bytes, char *why,
                                      size_t why_len);

/* rebalance.c */
struct fsd_rebal_conf {
    const char *state_path; /* borrowed; --rebalance-state */
    bool is_fix_layout;     /* --fix-layout */
    unsigned n_workers;     /* --throttle */
    struct fsd_daemon *ready; /* told once the migration lock is held or
                               * the run cannot start */
};
/* Runs the rebalance on graph (cluster/distribute on top, ready) until
 * done or SIGTERM/SIGINT (from sigs, blocked in every thread). Returns
 * the process exit status: FSD_EXIT_OK when completed or stopped,
 * FSD_EXIT_FAIL on failure. */
int fsd_rebalance_run(vl_graph_t *graph, const struct fsd_rebal_conf *conf,
                      const sigset_t *sigs);

#endif /* MORTARFSD_FSD_H */
