/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mortard: private declarations of the management daemon.
 *
 * main.c      command line, detaching, pid file, signals, statedump
 * store.c     the on-disk store: atomic files, key=value parsing, volume
 *             directories swapped in with one rename
 * validate.c  volume names, bricks, option keys and values
 * volgen.c    brick and client volfiles generated from a volume
 * brick.c     brick processes: start, stop, adopt, liveness, ports
 * supervise.c starting the bricks of started volumes at startup and
 *             when they die (restart policy with back-off and limit)
 * output.c    command output as text plus a tree rendered as XML or JSON
 * cmd.c       the CLI grammar and the volume commands
 * server.c    the mgmt RPC service (unix socket and TCP), the command
 *             worker thread and volfile watchers
 * peer.c      peers: the store's peer list, the blocking client used for
 *             peer calls, hello/probe/detach, membership, liveness and
 *             catch-up of volume definitions
 * txn.c       cluster-wide transactions: lock, stage, commit, unlock
 * cmd-brick.c add-brick and remove-brick
 * rebalance.c the rebalance process of a volume: start (and its ready
 *             report), stop, status from its state file
 * rebal-peer.c every node's view of a task, stop on another node
 * rebal-handoff.c a start that goes on from a peer's unfinished run
 * replica.c   replicated volumes: create/add-brick words, replica sets,
 *             set names, volume types
 * replace-brick.c  volume replace-brick ... commit force
 * replica-change.c add-brick / remove-brick that change the replica
 *             count
 * reset-brick.c    volume reset-brick ... start | commit [force]
 * heal-mark.c a good brick's root blames a replica slot (heal fills it)
 * auth.c      the pool secret and the AUTH exchange peers prove it with
 * metrics.c   GET /metrics: volumes, bricks online, peers, transactions,
 *             rebalance (--metrics-port; doc/metrics.md)
 * profile.h   volume profile and volume top: profile-fmt.c (the bricks'
 *             io-stats dumps parsed and shown), cmd-profile.c (commands,
 *             asking the bricks, BRICK_PROFILE)
 *
 * Threads: every command, GETSPEC and WATCH runs on the one worker thread
 * under md_state.lock; loop threads only decode and queue. The main
 * thread serves signals and takes the lock for a statedump.
 */
#ifndef MORTARD_H
#define MORTARD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <rpc/xdr.h>

#include "vol/vol.h"

#define MD_DOMAIN "mortard"
#define MD_VOLNAME_MAX 64
/* Bricks of one volume: cluster/distribute takes at most this many
 * subvolumes (its DIST_MAX_SUBVOLS; volgen.c checks they agree). */
#define MD_DIST_BRICKS_MAX 256
/* Copies of a replicated volume: cluster/replicate takes at most this
 * many children (its REP_MAX_CHILDREN; volgen.c checks they agree). */
#define MD_REPLICA_MAX 16
#define MD_DEFAULT_STATE_DIR "/var/lib/mortar"
#define MD_DEFAULT_RUN_DIR "/run/mortar"
#define MD_DEFAULT_LOG_DIR "/var/log/mortar"
#define MD_DEFAULT_MGMT_PORT 24100
#define MD_DEFAULT_BRICK_BASE_PORT 24200
#define MD_BRICK_PORT_SPAN 2000       /* ports tried above the base */
#define MD_VOLID_XATTR "trusted.mortar.volume-id"

/* CLI exit codes (GlusterFS's). */
#define MD_EXIT_OK 0
#define MD_EXIT_FAIL 1
#define MD_EXIT_USAGE 2

enum md_vol_status {
    MD_VOL_CREATED = 0,
    MD_VOL_STARTED,
    MD_VOL_STOPPED,
};

struct md_brick {
    char *host;     /* owned; as given at create */
    char *path;     /* owned; absolute, normalized */
    uint16_t port;  /* TCP port the brick listens on */
    char id[16];    /* "brick<N>", names pid file and volfile */
    bool is_decommissioned; /* remove-brick start..stop/commit: no new
                             * files, migrated away (stored) */
    bool is_reset;  /* reset-brick start..commit: stopped, not started
                     * nor restarted (stored) */
    bool has_set_num; /* set_num is stored (replica.c: set names) */
    unsigned set_num; /* its replica set's number m, when has_set_num */
};

struct md_volume {
    char name[MD_VOLNAME_MAX + 1]; /* unique */
    char id[VL_GFID_STR_LEN];      /* volume UUID */
    enum md_vol_status status;
    uint64_t version;              /* bumped by every change */
    char transport[8];             /* "tcp" */
    struct md_brick *bricks;       /* owned array; with replica_count R
                                    * > 1, sets of R consecutive bricks */
    size_t n_bricks;
    unsigned replica_count;        /* copies of every file (bricks per
                                    * set); 0 or 1: plain distribute */
    unsigned arbiter_count;        /* 1: the last brick of each set (of
                                    * 3) is an arbiter (features/arbiter:
                                    * names and records, no data); 0 */
    struct vl_kv *opts;            /* owned; canonical key -> value */
    size_t n_opts;
    unsigned next_brick;           /* N of the next "brick<N>" id: ids are
                                    * never reused (linkto names them) */
    unsigned next_set;             /* once the replica count changed: the
                                    * number of the next new set (set
                                    * numbers are never reused); else 0 */
    struct md_volume *next;        /* list sorted by name */
};

/* Another mortard of the cluster. */
struct md_peer {
    char uuid[VL_GFID_STR_LEN]; /* its node id */
    char *host;                 /* owned; how this node reaches it */
    uint16_t port;              /* its mgmt TCP port */
    bool is_connected;          /* its last hello was answered */
    struct md_peer *next;       /* list in probe order */
};

/* What the originator of a transaction decided for everyone (commit). */
struct md_txn_params {
    bool is_set;                   /* a peer commit is running */
    char vol_id[VL_GFID_STR_LEN];  /* volume create: the volume's id */
    uint16_t brick_port;           /* volume create: the brick's port */
};

/* The daemon's configuration and state. Everything below `lock` is
 * guarded by it. */
struct md_state {
    char *state_dir;          /* owned; absolute */
    char *run_dir;            /* owned; absolute */
    char *log_dir;            /* owned; absolute */
    char *mortarfsd;          /* owned; brick binary */
    char *bind_addr;          /* owned; mgmt and brick listen address */
    uint16_t mgmt_port;       /* TCP mgmt port (0 = none) */
    uint16_t brick_base_port; /* first brick port tried */
    bool is_foreground;       /* -N */
    uint16_t metrics_port;    /* --metrics-port; 0 = no metrics */
    char *metrics_addr;       /* owned or NULL (loopback);
                                 --metrics-address */
    pthread_mutex_t lock;     /* guards what follows */
    char node_id[VL_GFID_STR_LEN]; /* this node's UUID */
    uint64_t store_version;   /* store-wide, bumped by every change */
    struct md_volume *vols;   /* owned list */
    struct md_peer *peers;    /* owned list */
    struct md_txn_params txn; /* set while a transaction commits */
};

/* ---- store.c ---- */
/* Writes len bytes to dir/name through name.tmp, fsync and rename, then
 * fsyncs dir. 0 or -errno with err set. */
int md_write_atomic(const char *dir, const char *name, const char *data,
                    size_t len, vl_err_t *err);
/* Parses key=value lines ('#' comments and blank lines skipped); cb gets
 * each pair and the line number and returns 0 or -errno with err set
 * (the message is then prefixed with "src:line: "). */
typedef int md_kv_cb(const char *key, const char *value, int line,
                     void *arg, vl_err_t *err);
int md_kv_parse(const char *text, const char *src, md_kv_cb *cb, void *arg,
                vl_err_t *err);
/* Reads a whole file (NUL-terminated) into a malloc'd buffer. */
int md_read_file(const char *path, char **out, size_t *len);
/* Loads node id, store version and every volume. */
int md_store_load(struct md_state *st, vl_err_t *err);
/* Parses a volume directory into a new volume (for load and tests). */
int md_volume_load(const char *dir, const char *name,
                   struct md_volume **out, vl_err_t *err);
/* Bumps vol->version and the store version, writes the volume directory
 * (info, options, volfiles) and swaps it in atomically. */
int md_volume_save(struct md_state *st, struct md_volume *vol,
                   vl_err_t *err);
/* Removes the volume's directory atomically (rename, then delete). */
int md_volume_remove(struct md_state *st, const struct md_volume *vol,
                     vl_err_t *err);
void md_volume_free(struct md_volume *vol);
struct md_volume *md_volume_find(struct md_state *st, const char *name);
void md_volume_link(struct md_state *st, struct md_volume *vol);
void md_volume_unlink(struct md_state *st, struct md_volume *vol);
const char *md_vol_status_name(enum md_vol_status s);
const char *md_vol_opt_get(const struct md_volume *vol, const char *key);
int md_vol_opt_set(struct md_volume *vol, const char *key,
                   const char *value);
/* Returns true if the key was there. */
bool md_vol_opt_del(struct md_volume *vol, const char *key);
/* "<state>/vols/<name>" into buf. */
void md_vol_dir(const struct md_state *st, const char *name, char *buf,
                size_t len);

/* ---- validate.c ---- */
int md_check_volname(const char *name, vl_err_t *err);
/* Splits "host:/path" and normalizes the path (no trailing '/'). */
int md_parse_brick(const char *arg, char **host, char **path,
                   vl_err_t *err);
bool md_host_is_local(const char *host);
/* Checks a new brick against the store and the file system (nothing is
 * changed). */
int md_check_brick(struct md_state *st, const char *host, const char *path,
                   bool force, vl_err_t *err);
/* The classes whose options `volume set` may change (those in the
 * generated graphs); NULL-terminated. */
const vl_xlator_class_t *const *md_settable_classes(void);
/* Resolves a user key (prefix.key or a GlusterFS alias) to its class and
 * option, fills canon ("<prefix>.<key>") and checks the value (if not
 * NULL). -ENOENT unknown key, -EPERM not settable, -EINVAL bad value. */
int md_option_resolve(const char *key, const char *value,
                      const vl_xlator_class_t **cls,
                      const vl_option_t **opt, char *canon, size_t len,
                      vl_err_t *err);

/* ---- replica.c ---- */
/* The words of `volume create NAME ...` (first = 3, is_create) or
 * `volume add-brick VOL ...` (first = 3) before the bricks. */
struct md_brick_args {
    unsigned replica; /* replica N given (2..MD_REPLICA_MAX), else 0 */
    unsigned arbiter; /* arbiter 1 given (only with replica 3), else 0 */
    int first;        /* argv index of the first brick */
    int n_bricks;     /* bricks given */
    bool is_force;    /* ends with force */
    bool is_usage;    /* on failure: a grammar error (exit 2) */
};
/* 0, or -EINVAL (bad words; is_usage; err->msg empty when only the
 * usage applies), -ENOTSUP (arbiter, disperse, another transport) with
 * err set. Does not check the brick count
 * against the replica count. */
int md_brick_args_parse(int argc, char **argv, int first, bool is_create,
                        struct md_brick_args *out, vl_err_t *err);
/* Two bricks of one set (n bricks in sets of replica) on one server
 * (same host name, or both this node): -EPERM with GlusterFS's message. */
int md_replica_same_server(char *const *hosts, const bool *is_local,
                           size_t n, unsigned replica, vl_err_t *err);
/* b (an element of vol->bricks) is its set's arbiter. */
bool md_brick_is_arbiter(const struct md_volume *vol,
                         const struct md_brick *b);
/* Bricks per set (1 for a plain distribute volume). */
unsigned md_vol_replica(const struct md_volume *vol);
/* Replica sets (distribute's children). */
size_t md_vol_n_sets(const struct md_volume *vol);
/* The set's stable number m (its bricks are brick<m*R>..). */
unsigned md_vol_set_num(const struct md_volume *vol, size_t set);
/* "<vol>-replicate-<m>", the set's cluster/replicate. */
void md_vol_set_name(const struct md_volume *vol, size_t set, char *buf,
                     size_t len);
/* The bricks form whole sets with the ids or stored set numbers set
 * names rely on, each set's number its own. */
int md_vol_sets_check(const struct md_volume *vol, vl_err_t *err);
/* Before a replica count change: every brick carries its set's number
 * and next_set is past every number ever used; returns next_set. */
unsigned md_vol_sets_pin(struct md_volume *vol);
/* New whole sets nb[0..n) of a pinned volume take next_set (bumped);
 * on a volume never pinned the id rule names them: nothing to do. */
void md_vol_sets_number_new(struct md_volume *vol, struct md_brick *nb,
                            size_t n);
/* GlusterFS's type: "Distribute", "Replicate", "Distributed-Replicate"
 * and its number in XML (0, 2, 7). */
const char *md_vol_type_str(const struct md_volume *vol);
int md_vol_type_num(const struct md_volume *vol);
/* volume set: a replicate option the volume's sets cannot take
 * (quorum-count above the replica count): -EINVAL with err set. */
/* client-caches.c: the client performance translators and the one cap
 * over their caches (performance.cache-size). */
/* Whether volgen loads the translator named (write-behind, read-ahead,
 * readdir-ahead, quick-read, nl-cache, md-cache) into the client. */
bool md_client_xl_on(const struct md_volume *vol, const char *name);
/* The limit option (*key) of the loaded caching translator name and the
 * value volgen gives it; -ENOENT when it is off or caches no data. */
int md_client_cache_limit(const struct md_volume *vol, const char *name,
                          const char **key, uint64_t *limit);
/* 0, or -EINVAL with err set when, with canon set to value (canon NULL:
 * as stored), the caches' own limits would exceed the cap. */
int md_client_caches_check(const struct md_volume *vol, const char *canon,
                           const char *value, vl_err_t *err);
int md_replica_opt_check(const struct md_volume *vol, const char *canon,
                         const char *value, vl_err_t *err);

/* ---- volgen.c ---- */
/* Name clients ask the brick for (the volume under protocol/server). */
void md_brick_subvol(const struct md_volume *vol, const struct md_brick *b,
                     char *buf, size_t len);
char *md_volgen_brick(const struct md_state *st,
                      const struct md_volume *vol, const struct md_brick *b);
char *md_volgen_client(const struct md_volume *vol);

/* ---- brick.c ---- */
void md_brick_pidfile(const struct md_state *st, const struct md_volume *vol,
                      const struct md_brick *b, char *buf, size_t len);
void md_brick_volfile(const struct md_state *st,
                      const struct md_volume *vol, const struct md_brick *b,
                      char *buf, size_t len);
/* RUN_DIR/VOL-ID.metrics-port: the metrics port a brick listens on
 * (diagnostics.brick-metrics), written by the brick. */
void md_brick_metrics_file(const struct md_state *st,
                           const struct md_volume *vol,
                           const struct md_brick *b, char *buf, size_t len);
/* diagnostics.brick-metrics is on. */
bool md_brick_metrics_on(const struct md_volume *vol);
/* The port from the brick's metrics port file, or 0 (none). */
unsigned md_brick_metrics_port(const struct md_state *st,
                               const struct md_volume *vol,
                               const struct md_brick *b);
/* The running brick's pid (pid file + /proc cmdline check), or 0. */
pid_t md_brick_pid(const struct md_state *st, const struct md_volume *vol,
                   const struct md_brick *b);
/* The brick answers on its port. */
bool md_brick_port_answers(const struct md_state *st,
                           const struct md_brick *b);
bool md_port_is_free(const char *addr, uint16_t port);
/* Picks a free port not used by any brick in the store. 0 if none. */
uint16_t md_port_pick(struct md_state *st, const struct md_brick *self);
/* Starts mortarfsd for the brick (volfile must exist); no-op if it runs
 * or is being reset (reset-brick start). */
int md_brick_start(struct md_state *st, const struct md_volume *vol,
                   const struct md_brick *b, vl_err_t *err);
/* SIGTERM, waits; SIGKILL after a timeout. 0 if it is gone. */
int md_brick_stop(struct md_state *st, const struct md_volume *vol,
                  const struct md_brick *b, vl_err_t *err);
/* Runs st->mortarfsd with argv (it daemonizes) and waits for its parent,
 * which exits once the daemon is ready: 0, or -EIO with the daemon's
 * reason in err, or -errno. */
int md_fsd_spawn(struct md_state *st, char *const *argv, vl_err_t *err);
/* The pid in pidfile if that process runs with "--pid-file pidfile",
 * else 0. */
pid_t md_fsd_pid(const char *pidfile);
/* SIGTERM to pid, then SIGKILL after a timeout; true once it is gone
 * (what names it in the log). */
bool md_fsd_kill(pid_t pid, const char *pidfile, const char *what);

/* ---- heal.c: self-heal daemons (mortarfsd --heal) ---- */
/* shd.* options (cluster.self-heal-daemon, cluster.shd-max-threads,
 * cluster.heal-timeout): mortard's, no translator reads them. */
extern const vl_xlator_class_t md_shd_class;
/* RUN/heal/VOLNAME.EXT (vol, pid, state). */
void md_heal_path(const struct md_state *st, const char *volname,
                  const char *ext, char *buf, size_t len);
/* Writes vol's client volfile as RUN/heal/VOLNAME.EXT (write, fsync,
 * rename), making RUN/heal and LOG/heal; its path in path. */
int md_heal_volfile_write(const struct md_state *st,
                          const struct md_volume *vol, const char *ext,
                          char *path, size_t len, vl_err_t *err);
/* cluster.self-heal-daemon is not off for vol. */
bool md_heal_is_enabled(const struct md_volume *vol);
/* The running daemon of volname on this node, or 0. */
pid_t md_heal_pid(const struct md_state *st, const char *volname);
/* From md_supervise's scan: daemons started, restarted, stopped. */
void md_heal_supervise(struct md_state *st, int64_t now);
/* `volume start force`: a daemon that gave up is tried again. */
void md_heal_reset(const struct md_volume *vol);
/* Asks the daemon of volname for a round now (SIGUSR2): 0, -ESRCH. */
/* The daemon's progress file as numbers (missing keys stay 0). */
struct md_heal_progress {
    long long healed, healed_bytes, pending, pending_bytes, eta_seconds;
    long long split_brain, waiting, failed, updated;
    long long full_crawl, crawl_visited, crawl_healed, crawl_failed;
    long long crawl_done_at;
    double rate, rate_bytes;
    bool is_read;
};
/* Reads RUN/heal/VOLNAME.state; a missing or bad file leaves p zero with
 * is_read false and eta_seconds -1 (cmd-heal.c). */
void md_heal_progress_read(const struct md_state *st, const char *volname,
                           struct md_heal_progress *p);
/* The same from the file's text (path names it in errors). */
void md_heal_progress_parse(const char *text, const char *path,
                            struct md_heal_progress *p);
int md_heal_kick(const struct md_state *st, const char *volname);
/* `heal VOL` (is_full: `heal VOL full`, the crawl request written first)
 * on this node: 0 (also when no brick of vol is here), -ESRCH (the
 * daemon is not running) or -errno, with err set. */
int md_heal_round(const struct md_state *st, const struct md_volume *vol,
                  bool is_full, vl_err_t *err);
void md_heal_free(void);

/* ---- heal-mark.c ---- */
/* The root of brick good of vol blames replica slot `slot` for entry and
 * metadata (XATTROP through a graph of its own, waiting at most
 * timeout_ms for the brick); is_probe: only checks that the brick
 * answers that XATTROP (adds zeros). 0 or -errno with err set. */
int md_heal_mark_slot(const struct md_volume *vol, const struct md_brick *good,
                      const char *slot, bool is_probe, int timeout_ms,
                      vl_err_t *err);
/* Every brick of vol->bricks[first .. first+n) but skip that answers
 * (a local brick that is down is not asked) blames slot as above: the
 * number marked (is_probe: that answer); err gets the last failure. */
size_t md_heal_mark_set(struct md_state *st, const struct md_volume *vol,
                        size_t first, size_t n, size_t skip,
                        const char *slot, bool is_probe, vl_err_t *err);

/* ---- replace-brick.c ---- */
struct md_result;
/* volume replace-brick VOL OLD NEW commit force */
void md_cmd_replace_brick(struct md_state *st, int argc, char **argv,
                          struct md_result *r);
/* The command is well formed (else it fails locally with the usage). */
bool md_replace_is_cmd(int argc, char **argv);
/* Transaction stage on every node: the checks of the command against
 * this node's store and file system. 0 or -errno with err set. */
int md_replace_stage(struct md_state *st, int argc, char **argv,
                     vl_err_t *err);
/* The originator, before the stage: it holds OLD (unless OLD's node is
 * down) and some other brick of the set answers. 0, or r failed. */
int md_replace_precheck(struct md_state *st, int argc, char **argv,
                        struct md_result *r);
/* What replace-brick and reset-brick check first (replace-brick.c): vol
 * started, no migration running, arg (HOST:PATH) one of its bricks, its
 * index in *idx; 0 or -errno with err set. */
int md_set_brick_check(struct md_state *st, const struct md_volume *vol,
                       const char *arg, size_t *idx, vl_err_t *err);
/* The index of the brick the argument HOST:PATH names in vol, or
 * vol->n_bricks with err set (GlusterFS's "brick: ... does not exist in
 * volume: ..."). */
size_t md_vol_brick_arg(struct md_state *st, const struct md_volume *vol,
                        const char *arg, vl_err_t *err);
/* Every other brick of the set of brick idx that answers blames slot
 * (heal-mark.c; is_probe: only answers): the number marked. */
size_t md_set_mark_others(struct md_state *st, const struct md_volume *vol,
                          size_t idx, const char *slot, bool is_probe,
                          vl_err_t *err);

/* ---- reset-brick.c ---- */
/* volume reset-brick VOL BRICK start | VOL BRICK BRICK commit [force] */
void md_cmd_reset_brick(struct md_state *st, int argc, char **argv,
                        struct md_result *r);
/* The command is well formed. */
bool md_reset_is_cmd(int argc, char **argv);
/* Transaction stage: its checks on this node. 0 or -errno, err set. */
int md_reset_stage(struct md_state *st, int argc, char **argv,
                   vl_err_t *err);
/* The originator before the stage: a commit probes the set. 0, or r
 * failed. */
int md_reset_precheck(struct md_state *st, int argc, char **argv,
                      struct md_result *r);

/* ---- replica-change.c ---- */
/* add-brick VOL replica R+k BRICK... (ba parsed, above the count). */
void md_replica_grow(struct md_state *st, struct md_volume *vol,
                     const struct md_brick_args *ba, char **argv,
                     struct md_result *r);
/* remove-brick VOL replica want BRICK... op (want is not the count). */
void md_replica_shrink(struct md_state *st, struct md_volume *vol,
                       unsigned want, const char *op, char *const *bricks,
                       size_t n, struct md_result *r);
/* No brick of this node in a set that one of idx[0..n) is in has
 * pending heals, and every other brick's node is connected: 0, or
 * -errno with err set. */
int md_replica_sets_settled(struct md_state *st,
                            const struct md_volume *vol, const size_t *idx,
                            size_t n, vl_err_t *err);
/* Transaction stage of add-brick / remove-brick: when the command
 * changes the replica count, its checks on this node. 0 or -errno. */
int md_replica_change_stage(struct md_state *st, int argc, char **argv,
                            vl_err_t *err);
/* The originator before the stage: add-brick replica R+k probes that
 * every set has a brick to mark. 0, or r failed. */
int md_replica_change_precheck(struct md_state *st, int argc, char **argv,
                               struct md_result *r);

/* ---- cmd-heal.c ---- */
struct md_result;
/* Bytes of entry names one `heal info` (or `info split-brain`) reply
 * holds, shared evenly by the volume's bricks: with the XML form's tags
 * this stays well under MGMT_OUTPUT_MAX (4 MiB; 100,000 GFIDs alone are
 * 4.4 MB). Beyond it the counts stay exact. */
#define MD_HEAL_INFO_NAME_BYTES (2 * 1024 * 1024)
/* What one brick's heal index lists. */
struct md_heal_brick {
    int status;       /* 0, or -errno reading its index (-EBUSY: its
                         names are some of those it lists, the index
                         being rebuilt: MD_HEAL_INDEX_REBUILDING) */
    uint64_t n;       /* entries in the index */
    char **names;     /* owned; the entries shown (name budget) */
    size_t n_names;
    char remote_err[160]; /* another node's brick: why it was not read */
};
/* Reads brick's heal index (a path of this node); names only when
 * is_names (is_gfids: the bare GFIDs, else as `heal info` shows them),
 * while *budget (bytes of names left) lasts. */
void md_heal_brick_read(const char *brick, bool is_names, bool is_gfids,
                        size_t *budget, struct md_heal_brick *hb);
/* Is the heal index of brick (a path of this node) known whole? Its
 * marker (storage/posix, .mortar/index/boot) names another boot than
 * this one when the machine went down under the running brick: until
 * the brick, started, has rebuilt the index from its objects' records,
 * the index may miss some. */
bool md_heal_index_whole(const char *brick);
/* The status `heal info` shows for such a brick; its count is "-". */
#define MD_HEAL_INDEX_REBUILDING                                          \
    "Heal index being rebuilt (its server went down while the brick "     \
    "ran): entries may be missing"
void md_heal_brick_clear(struct md_heal_brick *hb);

/* ---- heal-union.c ---- */
/* The objects the lists hbs[0..n-1] (one per brick of a volume, in
 * brick order, sets of replica bricks) name, counted once per replica
 * set: the union by GFID of each set's lists; a set with a brick not
 * all named (or named otherwise than by bare GFID) counts its largest
 * list. Bricks with status != 0 are left out. */
uint64_t md_heal_union_count(const struct md_heal_brick *hbs, size_t n,
                             unsigned replica);

/* ---- heal-peers.c ---- */
/* The nodes asked in one command: one that did not answer is not asked
 * again for its other bricks. */
struct md_heal_peers {
    char **down;      /* owned: hosts that failed, with why */
    char **why;
    size_t n_down;
};
/* The bricks first..first+n-1 of vol that are on other nodes (and, if
 * is_asked is not NULL, have is_asked[i]), through their nodes'
 * mortards, into hbs[0..n-1] (this node's bricks left zeroed, for the
 * caller to read): proc MGMT_PROC_HEAL_INFO (its heal index),
 * MGMT_PROC_HEAL_SPLIT (its split-brain list) or MGMT_PROC_HEAL_WAITING
 * (its list of objects waiting for a copy); names: 0 none, 1 as
 * shown, MGMT_HEAL_NAMES_GFID bare GFIDs, up to budget bytes of them
 * per brick. Every node is asked at the same time (one thread each),
 * so the nodes that do not answer cost MD_HEAL_PEER_TIMEOUT_MS in all.
 * hb->status -ENOTCONN and remote_err set when a brick cannot be asked
 * ("Transport endpoint is not connected" when its node does not
 * answer). */
void md_heal_bricks_remote(struct md_state *st, const struct md_volume *vol,
                           size_t first, size_t n, const bool *is_asked,
                           uint32_t proc, int names, size_t budget,
                           struct md_heal_peers *hp,
                           struct md_heal_brick *hbs);
void md_heal_peers_clear(struct md_heal_peers *hp);
/* One brick's line of a self-heal daemon's progress file. */
struct md_heal_brick_left {
    char *path;           /* owned; brickN.path, unescaped */
    long long bytes;      /* brickN.bytes: data bytes of its entries */
};
/* The self-heal daemon of a volume on one node. */
struct md_heal_node {
    const char *host;     /* borrowed from the volume's bricks */
    bool is_local;        /* this node */
    int status;           /* 0 read or asked; -ENOTCONN (why) */
    char why[160];        /* when status != 0 */
    pid_t pid;            /* its daemon, 0: not running */
    bool is_full_asked;   /* a full crawl is requested (RUN/heal/VOL.full) */
    struct md_heal_progress p;
    struct md_heal_brick_left *bricks; /* owned; its per-brick figures
                                          (none from an older daemon) */
    size_t n_bricks;
};
/* The daemons of vol on the nodes of v[0..n-1] that are not this one,
 * through their mortards (HEAL_PROGRESS), all at once as
 * md_heal_bricks_remote asks (host and is_local set by the caller); a
 * node hp knows down is not asked again. */
void md_heal_nodes_remote(struct md_state *st, const struct md_volume *vol,
                          struct md_heal_peers *hp, struct md_heal_node *v,
                          size_t n);
/* Takes the entry names of another node's HEAL_INFO answer (len bytes,
 * NUL-terminated names back to back; an unterminated tail is dropped)
 * into hb. 0 or -ENOMEM. */
int md_heal_names_take(struct md_heal_brick *hb, const char *buf,
                       size_t len);
/* HEAL_INFO, HEAL_SPLIT and HEAL_WAITING (proc), answered on the loop
 * thread without md_state.lock (st: only its run directory): each path
 * must carry the volume id the caller gives. */
struct vrpc_conn;
void md_heal_bricks_serve(const struct md_state *st, struct vrpc_conn *c,
                          uint32_t xid, uint32_t proc, const char *body,
                          size_t len);
/* HEAL_PROGRESS, the same way. */
void md_heal_progress_serve(const struct md_state *st, struct vrpc_conn *c,
                            uint32_t xid, const char *body, size_t len);

/* ---- heal-nodes.c ---- */
/* How far the full crawls are, in the order one outranks another when
 * several nodes are summed. */
enum md_heal_crawl {
    MD_HEAL_CRAWL_NEVER,      /* never run */
    MD_HEAL_CRAWL_FINISHED,   /* the last one finished (crawl_done_at) */
    MD_HEAL_CRAWL_REQUESTED,  /* asked for, not picked up yet */
    MD_HEAL_CRAWL_RUNNING,
};
/* The daemons of vol's nodes summed. */
struct md_heal_sum {
    struct md_heal_progress p; /* sums; eta_seconds the longest, -1 when
                                  a node's is unknown or it did not
                                  answer; is_read: every node's file;
                                  pending_bytes counts each copy (status
                                  shows md_heal_nodes_bytes_left),
                                  split_brain and waiting once per node
                                  that found an object (status shows
                                  the union of their lists, cmd-heal.c) */
    enum md_heal_crawl crawl;  /* the most advanced state of any node */
    size_t n_down;             /* nodes that did not answer */
};
/* Every node with bricks of vol, in brick order, this node's read here
 * and the others asked (md_heal_nodes_remote): *out (free) and *n_out.
 * 0 or -ENOMEM. */
int md_heal_nodes_gather(struct md_state *st, const struct md_volume *vol,
                         struct md_heal_peers *hp, struct md_heal_node **out,
                         size_t *n_out);
/* The per-brick lines of a daemon's progress file text into hn->bricks
 * (a line it cannot read is skipped). 0 or -ENOMEM. */
int md_heal_node_bricks_parse(struct md_heal_node *hn, const char *text,
                              const char *path);
/* Frees v[0..n)'s per-brick figures and v. */
void md_heal_nodes_free(struct md_heal_node *v, size_t n);
/* Data bytes left to heal in vol: per replica set the largest figure of
 * its bricks (every good copy's index lists the object, and its node's
 * daemon counts its bytes), the sets added; a node that answered
 * without per-brick figures adds its whole pending_bytes, a node that
 * did not answer nothing. */
long long md_heal_nodes_bytes_left(const struct md_volume *vol,
                                   const struct md_heal_node *v, size_t n);
/* The crawl state of one node. */
enum md_heal_crawl md_heal_node_crawl(const struct md_heal_node *hn);
/* Sums v[0..n) into sum (nodes that did not answer are counted down). */
void md_heal_nodes_sum(const struct md_heal_node *v, size_t n,
                       struct md_heal_sum *sum);
/* volume heal VOL [info [summary|split-brain]|statistics heal-count|
 * status|enable|disable|full|split-brain ...] */
void md_cmd_heal(struct md_state *st, int argc, char **argv,
                 struct md_result *r);
/* heal VOL and heal VOL full: run on every node (a transaction) when
 * there are peers. */
bool md_heal_is_txn(int argc, char **argv);
/* Their checks, on the node the command came to, with GlusterFS's
 * messages: 0, or -errno with r failed. */
int md_heal_precheck(struct md_state *st, int argc, char **argv,
                     struct md_result *r);
/* The path of the directory with this GFID on brick (its handle chain),
 * malloc'd, or NULL (not a directory). */
char *md_heal_dir_path(const char *brick, const char *gfid);

/* ---- cmd-split-brain.c ---- */
/* Undoes the %XX escaping of the daemons' key=value files
 * (mortarfsd/kv-file.c) from src into dst (len bytes); false if
 * malformed or too long. */
bool md_kv_unescape(const char *src, char *dst, size_t len);
/* heal VOL info split-brain. */
void md_heal_split_info(struct md_state *st, const struct md_volume *vol,
                        struct md_result *r);
/* What the self-heal daemon of this node listed in split-brain for
 * brick (a path of this node) of volname and is still in its heal index,
 * into hb: n the count, names (is_gfids: the bare GFIDs; else a
 * directory by its path, anything else as <gfid:UUID>) while *budget
 * (bytes) lasts; status 0, -ENODATA (not listed yet) or -errno. */
void md_heal_split_read(const struct md_state *st, const char *volname,
                        const char *brick, bool is_gfids, size_t *budget,
                        struct md_heal_brick *hb);
/* The same for the objects that waited for a copy (a brick down) in the
 * daemon's last round, by bare GFIDs; -ENODATA also when the daemon is
 * an older one that does not list them. */
void md_heal_waiting_read(const struct md_state *st, const char *volname,
                          const char *brick, size_t *budget,
                          struct md_heal_brick *hb);
/* Objects of local brick b in split-brain: 0, -ENOENT (not listed by
 * the self-heal daemon yet) or -errno. */
int md_heal_split_count(const struct md_state *st,
                        const struct md_volume *vol,
                        const struct md_brick *b, uint64_t *out);
/* heal VOL split-brain POLICY ... (vol replicated and started). */
void md_cmd_split_brain(struct md_state *st, const struct md_volume *vol,
                        int argc, char **argv, struct md_result *r);
/* FILE of those commands: NULL when fine, else why not. */
const char *md_split_file_check(const char *file);
/* A resolver's answer line for file as GlusterFS's message in msg;
 * whether it was healed. */
bool md_split_message(const char *line, const char *file,
                      const char *policy, char *msg, size_t len);

/* ---- supervise.c ---- */
/* Restart policy of a brick that dies: the first death within the window
 * restarts at once, the next ones after min_ms, doubling up to max_ms;
 * the limit-th death within window_ms gives up. */
#define MD_RESTART_LIMIT 5
#define MD_RESTART_WINDOW_MS (5 * 60 * 1000)
#define MD_RESTART_MIN_MS 1000
#define MD_RESTART_MAX_MS 60000
#define MD_RESTART_HISTORY 64 /* deaths remembered (limit is at most this) */
struct md_restart_policy {
    unsigned limit;     /* deaths within the window that give up, >= 1 */
    int64_t window_ms;  /* how long a death counts */
    int64_t min_ms;     /* first back-off */
    int64_t max_ms;     /* back-off cap */
};
extern const struct md_restart_policy md_restart_default;
struct md_restart {
    int64_t deaths[MD_RESTART_HISTORY]; /* times of deaths in the window */
    unsigned n_deaths;                  /* entries in deaths */
    int64_t next_ms;                    /* no start before this time */
    bool is_given_up;                   /* no start until reset */
};
/* Records a death (or failed start) at now_ms: the delay before the next
 * start (0 = at once), or -1 when this death gives up (is_given_up). */
int64_t md_restart_on_death(struct md_restart *rs,
                            const struct md_restart_policy *p,
                            int64_t now_ms);
void md_restart_reset(struct md_restart *rs);
/* Worker thread, lock held: starts the local bricks of started volumes
 * that are down (adopting those that run) under the restart policy.
 * After each job is_now (a scan at once); when idle at most once a
 * second. */
void md_supervise(struct md_state *st, bool is_now);
/* `volume start` / `volume stop`: the bricks of vol start afresh (the
 * give-up state and death count are cleared). */
void md_supervise_reset(const struct md_volume *vol);
void md_supervise_dump(FILE *out);
void md_supervise_free(void);

/* ---- output.c ---- */
struct md_sbuf {
    char *data;  /* owned, NUL-terminated (NULL when empty) */
    size_t len;  /* bytes used */
    size_t cap;  /* bytes allocated */
    bool is_oom; /* an append failed */
};
void md_sbuf_printf(struct md_sbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void md_sbuf_clear(struct md_sbuf *sb);

/* A node of the structured output: an element with text or children. */
struct md_node {
    char *name;             /* owned; element / JSON key */
    char *text;             /* owned; NULL for a container */
    bool is_list;           /* JSON: children form an array */
    struct md_node *kids;   /* owned first child */
    struct md_node *last;   /* borrowed last child */
    struct md_node *next;   /* owned next sibling */
};
struct md_node *md_node_add(struct md_node *parent, const char *name,
                            const char *text);
struct md_node *md_node_addf(struct md_node *parent, const char *name,
                             const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void md_node_free(struct md_node *n);

/* The result of one command. */
struct md_result {
    int ret;               /* exit code */
    int op_errno;          /* errno of the failure, 0 */
    char errstr[1024];     /* one line on failure */
    struct md_sbuf text;   /* text output */
    struct md_node *root;  /* structured output ("cliOutput" children) */
};
void md_result_init(struct md_result *r);
void md_result_clear(struct md_result *r);
void md_result_fail(struct md_result *r, int ret, int op_errno,
                    const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Renders r for format 0/1/2 into out (malloc'd). */
int md_render(const struct md_result *r, int format, char **out);

/* ---- cmd.c / cmd-query.c ---- */
void md_cmd_run(struct md_state *st, int argc, char **argv,
                struct md_result *r);
void md_cmd_info(struct md_state *st, int argc, char **argv,
                 struct md_result *r);
void md_cmd_status(struct md_state *st, int argc, char **argv,
                   struct md_result *r);
void md_cmd_list(struct md_state *st, struct md_result *r);
void md_cmd_get(struct md_state *st, int argc, char **argv,
                struct md_result *r);
/* `system:: getspec VOL` (and `system getspec VOL`): the client volfile,
 * as GlusterFS's CLI prints it. */
void md_cmd_getspec(struct md_state *st, int argc, char **argv,
                    struct md_result *r);
void md_cmd_set_help(struct md_result *r);
void md_cmd_statedump(struct md_state *st, int argc, char **argv,
                      struct md_result *r);

/* ---- peer.c ---- */
/* How peers reach this node: --bind-address unless it is a wildcard,
 * else the host name. */
const char *md_self_host(const struct md_state *st);
/* A brick lives on this node. */
bool md_brick_is_local(const struct md_state *st, const struct md_brick *b);
struct md_peer *md_peer_find_host(struct md_state *st, const char *host);
int md_peers_load(struct md_state *st, vl_err_t *err);
void md_peers_free(struct md_state *st);
/* One blocking call to HOST:PORT (connect, prove the pool secret both
 * ways, call, read the reply, close) within timeout_ms. 0, or -errno
 * with err set: -EACCES the callee does not share this pool's secret,
 * -EPERM it refused the call as not authenticated. */
int md_peer_call(const char *host, uint16_t port, uint32_t proc,
                 xdrproc_t afn, void *args, xdrproc_t rfn, void *res,
                 int timeout_ms, vl_err_t *err);
/* peer probe/detach/status, pool list. */
void md_cmd_peer(struct md_state *st, int argc, char **argv,
                 struct md_result *r);
/* Starts/stops the liveness and catch-up thread. */
int md_peer_monitor_start(struct md_state *st, vl_err_t *err);
void md_peer_monitor_stop(void);
/* Server side of the peer procedures (worker thread, lock held): each
 * decodes its arguments from body and sends the reply on c. */
struct vrpc_conn;
void md_peer_serve(struct md_state *st, struct vrpc_conn *c, uint32_t xid,
                   uint32_t proc, const char *body, size_t len);

/* Procedures answered on the loop thread without md_state.lock
 * (BRICK_STATUS: reads pid files and probes local ports only, so a node
 * whose worker waits on a peer still answers). Returns false if proc is
 * not one of them. */
bool md_peer_serve_fast(struct md_state *st, struct vrpc_conn *c,
                        uint32_t xid, uint32_t proc, const char *body,
                        size_t len);
/* A brick id as the store writes it ("brick" and digits), as a peer's
 * request must name one. */
bool md_brick_id_ok(const char *id);

/* ---- metrics.c ---- */
/* Serves GET /metrics on address (NULL: 127.0.0.1) and port. 0, or
 * -errno with err one line (a port in use). */
int md_metrics_start(struct md_state *st, const char *address,
                     unsigned port, vl_err_t *err);
/* Stops it (no-op when not started). */
void md_metrics_stop(void);
/* Counts a cluster transaction this node drove (txn.c). */
void md_metrics_txn_done(bool is_ok);

/* ---- txn.c ---- */
/* A command that changes the store (volume create/start/...). */
bool md_cmd_is_txn(int argc, char **argv);
/* Runs such a command on every node: lock, stage, commit, unlock. */
void md_txn_run(struct md_state *st, int argc, char **argv,
                struct md_result *r);
/* Validates a command against this node's store without changing it;
 * data gets "key=value" lines for the commit (the brick port). */
int md_txn_stage(struct md_state *st, int argc, char **argv,
                 struct md_sbuf *data, vl_err_t *err);
/* The loop-thread side of the lock: lock/unlock phases never wait for
 * the worker. Returns 0 or -EBUSY. */
int md_txn_lock(const char *owner, const char *txn_id, vl_err_t *err);
void md_txn_unlock(const char *txn_id);
bool md_txn_holds(const char *txn_id);

/* ---- server.c ---- */
int md_server_start(struct md_state *st, vl_err_t *err);
void md_server_stop(void);
/* Startup is complete: the worker starts supervising bricks. */
void md_server_ready(void);
/* Wakes watchers after a volume's version changed. */
void md_server_notify(void);
void md_server_dump(FILE *out);
/* Refreshes the loop threads' copy of the peer ids (lock held). */
void md_server_peers_changed(struct md_state *st);

/* ---- distribute volumes (mgmtdist: validate.c, brick.c, cmd-brick.c,
 * rebalance.c, cmd.c) ---- */
/* Checks the n bricks of a create/add-brick command: syntax, duplicates
 * and nesting within the command, the store, the local file system or
 * peer membership. On success hosts[i]/paths[i] are malloc'd. */
int md_check_new_bricks(struct md_state *st, char *const *args, int n,
                        bool force, char **hosts, char **paths,
                        vl_err_t *err);
/* A free brick port used by no brick of the store nor in taken[]; in a
 * transaction (every node must agree) the local bind test is skipped. */
uint16_t md_port_pick_excl(struct md_state *st, const uint16_t *taken,
                           size_t n_taken);
/* pid is alive and was started with "--pid-file pidfile". */
bool md_pid_has_pidfile(pid_t pid, const char *pidfile);
/* True while this node originates the running transaction (processes
 * that run on one node only, like the rebalance, start there). */
bool md_txn_is_origin(const struct md_state *st);
/* cmd.c: creates the local brick directories and sets the volume id on
 * them (undone on failure); unstamp removes the id again. */
int md_bricks_stamp(struct md_state *st, struct md_brick *bricks, size_t n,
                    const vl_gfid_t *id, vl_err_t *err);
void md_bricks_unstamp(struct md_state *st, struct md_brick *bricks,
                       size_t n);
/* cmd.c: unless force, no two of the n new bricks (in sets of replica)
 * share a server (GlusterFS's message). */
int md_check_sets_spread(struct md_state *st, char **hosts, char **paths,
                         size_t n, unsigned replica, bool force,
                         vl_err_t *err);
/* Moves hosts/paths (checked) into nb[0..n) with new ids and ports. */
int md_bricks_fill(struct md_state *st, struct md_volume *vol,
                   struct md_brick *nb, char **hosts, char **paths,
                   size_t n, vl_err_t *err);
/* A rebalance or remove-brick of vol runs (on this node: a transaction
 * stages this on every node, md_txn_stage) or is not committed: why, or
 * NULL (add-brick, remove-brick start, replace-brick). */
const char *md_vol_busy(const struct md_state *st,
                        const struct md_volume *vol);
/* The index of the brick host:path in vol (two names of this node are
 * one host), or vol->n_bricks. */
size_t md_vol_brick_find(struct md_state *st, const struct md_volume *vol,
                         const char *host, const char *path);
/* volume add-brick / remove-brick. */
void md_cmd_add_brick(struct md_state *st, int argc, char **argv,
                      struct md_result *r);
void md_cmd_remove_brick(struct md_state *st, int argc, char **argv,
                         struct md_result *r);
/* Finds the bricks named in args[0..n) in vol: idx[i] gets each index.
 * Unknown, repeated or all bricks: -errno with err set. */
int md_remove_find(struct md_state *st, struct md_volume *vol,
                   char *const *args, size_t n, size_t *idx, vl_err_t *err);
/* Drops the bricks in idx (new_replica: the volume's count from now, 0
 * unchanged): store first, then their processes stop and their volume
 * id goes (the directory can be reused; its data stays). */
int md_remove_drop(struct md_state *st, struct md_volume *vol,
                   const size_t *idx, size_t n, unsigned new_replica,
                   vl_err_t *err);
/* remove-brick commit may go ahead: the migration (on whichever node
 * ran it) completed and left no file behind; else fails r. */
int md_remove_commit_check(struct md_state *st, const struct md_volume *vol,
                           struct md_result *r);
/* volume rebalance. */
void md_cmd_rebalance(struct md_state *st, int argc, char **argv,
                      struct md_result *r);
/* The rebalance (is_remove: remove-brick migration) of vol runs here. */
pid_t md_rebal_pid(const struct md_state *st, const struct md_volume *vol,
                   bool is_remove);
/* Starts mortarfsd --rebalance; keeps an existing state file (resume). */
int md_rebal_start(struct md_state *st, const struct md_volume *vol,
                   bool is_remove, bool is_fix_layout, vl_err_t *err);
/* SIGTERM and wait; 0 if none runs any more. */
int md_rebal_stop(struct md_state *st, const struct md_volume *vol,
                  bool is_remove, vl_err_t *err);
/* One node's view of the rebalance (or remove-brick migration) of a
 * volume: what its state file and process say. */
struct md_rebal_view {
    char node[256];          /* "localhost", or the peer's host */
    char err[256];           /* why the peer did not answer; "" if it did */
    char status[16];         /* in progress|completed|failed|stopped, or
                              * "" when that node never ran one */
    bool is_running;         /* its process lives */
    bool is_lost;            /* its process exited before writing state */
    bool died_running;       /* the state says running, no process */
    long long moved_files, moved_bytes, scanned_files, scanned_dirs;
    long long failed_files, skipped_files;
    long long eta_seconds;   /* -1 unknown */
    long long run_seconds;
    long long started;       /* unix seconds it started, 0 unknown */
    char error[512];         /* last failure, "" if none */
};
/* err of a peer the liveness monitor knows as disconnected (not asked). */
#define MD_REBAL_DISCONNECTED "disconnected"
/* Every node's view: [0] is this node, then one per peer in probe
 * order (a disconnected peer or one that did not answer has err set). */
struct md_rebal_views {
    struct md_rebal_view *v; /* owned */
    size_t n;
};
/* This node's view of the task of the volume named volname. */
void md_rebal_view_local(const struct md_state *st, const char *volname,
                         bool is_remove, struct md_rebal_view *out);
/* Asks every connected peer (REBAL_TASK QUERY, a few seconds each at
 * most) besides this node. -ENOMEM only; free with md_rebal_views_free. */
int md_rebal_gather(struct md_state *st, const char *volname,
                    bool is_remove, struct md_rebal_views *out);
void md_rebal_views_free(struct md_rebal_views *views);
/* The node whose task counts: the one whose process runs, else the one
 * whose task started last (this node first among equals); NULL if no
 * node that answered has one. */
const struct md_rebal_view *md_rebal_views_pick(
    const struct md_rebal_views *views);
/* Stops the task process running on peer node (SIGTERM there, then waits
 * until it no longer runs). */
int md_rebal_stop_peer(struct md_state *st, const char *volname,
                       bool is_remove, const char *node, vl_err_t *err);
/* REBAL_TASK, answered on the loop thread without md_state.lock (reads
 * the run dir's rebalance files, signals the local process only). */
struct vrpc_conn;
void md_rebal_serve(struct md_state *st, struct vrpc_conn *c, uint32_t xid,
                    const char *body, size_t len);

/* ---- rebal-handoff.c ---- */
/* Before a rebalance start on this node: when the latest unfinished run
 * of vol in the cluster (state running or stopped, no process) is a
 * peer's, its state file becomes this node's, so the new process
 * resumes it; when a peer's task is newer than this node's unfinished
 * one, this node's is dropped (the process then starts afresh). Best
 * effort: whatever fails is logged and the run starts afresh. */
void md_rebal_take_over(struct md_state *st, const struct md_volume *vol);
/* A state text a peer sent is an unfinished run's: key=value lines with
 * status running or stopped, and a cursor. 0 or -EINVAL with err set. */
int md_rebal_state_check(const char *text, vl_err_t *err);
/* REBAL_STATE, answered on the loop thread without md_state.lock. */
void md_rebal_state_serve(struct md_state *st, struct vrpc_conn *c,
                          uint32_t xid, const char *body, size_t len);
/* A task process of vol runs on this node and forbids changing its
 * bricks (is_remove_ok: a remove-brick migration does not count): why,
 * or NULL. */
const char *md_rebal_busy_here(const struct md_state *st,
                               const struct md_volume *vol,
                               bool is_remove_ok);
/* Renders the GlusterFS-like status table into r. */
int md_rebal_show(struct md_state *st, const struct md_volume *vol,
                  bool is_remove, struct md_result *r, vl_err_t *err);
/* Removes the state file (a fresh remove-brick start). */
void md_rebal_forget(const struct md_state *st, const struct md_volume *vol,
                     bool is_remove);
/* `volume status VOL` task section (text and tree under v). */
void md_rebal_task_status(struct md_state *st, const struct md_volume *vol,
                          struct md_result *r, struct md_node *v);

#endif /* MORTARD_H */
