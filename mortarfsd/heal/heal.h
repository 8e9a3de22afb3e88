/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal: the self-heal daemon, `mortarfsd --heal` (doc/self-heal.md).
 *
 * One process per server and replicated volume, started by mortard. It
 * runs the volume's client graph without FUSE and heals the objects the
 * heal index of this server's bricks lists, through the replicate
 * translator each brick belongs to (its GETXATTR of REP_XATTR_HEAL heals
 * one object and says how it went).
 *   heal-index.c  what needs healing: a brick's .mortar/index/xattrop/
 *                 read into jobs, most endangered first
 *   heal-state.c  the progress file `volume heal V status` reads, and the
 *                 rate and ETA it shows
 *   heal-crawl.c  `heal full`: the walk of a brick's whole tree, and
 *                 the request file that asks for it
 *   heal-checkpoint.c  where a full crawl is, across daemon restarts
 *   heal-run.c    rounds, crawl steps, worker threads, signals
 *   heal-splitlist.c  the objects found in split-brain in the last round
 *   heal-resolve.c    the one-shot resolver of split-brains
 *                     (--heal-resolve)
 * Threads: see heal-run.c.
 */
#ifndef FSD_HEAL_H
#define FSD_HEAL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vol/vol.h"

#define FSD_HEAL_BRICKS_MAX 64
#define FSD_HEAL_THREADS_DEFAULT 8 /* GlusterFS: 1; heals wait on I/O */
#define FSD_HEAL_THREADS_MAX 64
#define FSD_HEAL_INTERVAL_DEFAULT 10 /* seconds between index reads */
#define FSD_HEAL_INTERVAL_MAX 86400
#define FSD_HEAL_RATE_WINDOW 60 /* seconds the rate is taken over */
#define FSD_HEAL_PATH_MAX 4096
#define FSD_HEAL_CRAWL_BATCH 256 /* crawl objects between index rounds */
#define FSD_HEAL_TOKEN_MAX 512   /* a full-crawl request's contents */
#define FSD_HEAL_SPLIT_MAX 10000 /* GFIDs named per brick in the list,
                                    of split-brains and of waiting each */
#define FSD_HEAL_RESOLVE_PATHS_MAX 100000 /* --heal-path arguments */

/* A brick of this server and the replicate translator it is a child of
 * ("SUBVOL=PATH" on the command line). */
struct fsd_heal_brick {
    char *subvol; /* owned; cluster/replicate's name in the volfile */
    char *path;   /* owned; the brick directory, absolute */
};

/* One object the index names. */
struct fsd_heal_job {
    vl_gfid_t gfid;
    uint32_t brick;    /* index of the brick whose index named it */
    uint32_t n_blamed; /* replica slots its copy here blames: the copies
                          missing changes (more = fewer good copies) */
    bool is_dir;       /* entries before anything else */
    uint32_t depth;    /* a directory's: its ancestors up to the root
                          (0: the root), from the handles' chain */
    bool has_data;     /* a data counter is nonzero */
    uint64_t bytes;    /* its size here when has_data, for rates */
    bool is_crawl;     /* from a full crawl (heal-crawl.c), not the
                          index: healed with the full key, counted apart */
    uint64_t bricks;   /* every brick of this server whose index named it
                          (bit per brick): one heal heals every copy */
    uint32_t set;      /* fsd_heal_jobs_merge: its replica set */
};

struct fsd_heal_jobs {
    struct fsd_heal_job *v; /* owned */
    size_t n;
    size_t cap;
};

/* heal-index.c */
/* Appends a job for each GFID in brick_path's .mortar/index/xattrop/
 * (other names are skipped). The object's type, counters and size are
 * read from its handle on the brick; an object gone since (no handle)
 * is skipped. Returns the number appended, or -errno (-ENOENT: no
 * index directory, not a brick). */
int fsd_heal_index_scan(const char *brick_path, uint32_t brick,
                        struct fsd_heal_jobs *jobs);
/* Directories first, the shallower first; then more blamed slots first;
 * metadata-only before data; smaller first. */
int fsd_heal_job_cmp(const struct fsd_heal_job *a,
                     const struct fsd_heal_job *b);
/* The stage of a round a job belongs to: the directories of one depth,
 * then everything else (FSD_HEAL_STAGE_LAST); a crawl's jobs are one
 * stage. A worker takes no job of a later stage while one of an earlier
 * stage is being healed: a directory's heal creates the names (and the
 * directories) the next stage heals, which would otherwise answer
 * "pending" and wait for the next round. */
#define FSD_HEAL_STAGE_LAST UINT32_MAX
uint32_t fsd_heal_job_stage(const struct fsd_heal_job *job);
/* How many handle links a directory's depth follows at most. */
#define FSD_HEAL_DEPTH_MAX 4096
void fsd_heal_jobs_sort(struct fsd_heal_jobs *jobs);
/* One job per object and replica set: jobs of the same GFID from bricks
 * of one set (set_of[brick], the set of each brick) become one, naming
 * all their bricks (the most blamed slots, data if any had it, the
 * largest size). Returns how many jobs went; the order is lost (sort
 * after). */
size_t fsd_heal_jobs_merge(struct fsd_heal_jobs *jobs,
                           const uint32_t *set_of);
int fsd_heal_jobs_push(struct fsd_heal_jobs *jobs,
                       const struct fsd_heal_job *job);
void fsd_heal_jobs_clear(struct fsd_heal_jobs *jobs);
/* Counts a replication record value (12 bytes: data, metadata, entry as
 * big-endian int32): sets *is_data when the data count is nonzero;
 * returns whether any count is. */
bool fsd_heal_record_nonzero(const unsigned char *value, size_t len,
                             bool *is_data);

/* heal-crawl.c */
enum fsd_heal_crawl_kind {
    FSD_HEAL_CRAWL_END = 1, /* nothing left */
    FSD_HEAL_CRAWL_OBJECT,  /* an object of the tree, to heal */
    FSD_HEAL_CRAWL_ENTER,   /* the directory yielded earlier as an OBJECT
                               is listed next: finish its heal first */
    FSD_HEAL_CRAWL_ERROR,   /* a directory could not be opened or listed:
                               its subtree is skipped */
};

struct fsd_heal_crawl_item {
    vl_gfid_t gfid;          /* OBJECT: as the brick stores it */
    bool has_gfid;           /* OBJECT: false when the brick holds none
                                (not made through Mortar): not healable */
    bool is_dir;             /* OBJECT, ENTER */
    size_t depth;            /* OBJECT, ENTER: 0 for the brick root */
    char name[256];          /* OBJECT, ENTER: the name in its parent
                                ("" for the root) */
    int error;               /* ERROR: -errno */
    const char *path;        /* ERROR: the directory, relative to the
                                brick; valid until the next call */
};

struct fsd_heal_crawl;

/* A walk of brick_path's tree, not started. 0 or -ENOMEM. */
int fsd_heal_crawl_new(const char *brick_path, struct fsd_heal_crawl **out);
/* The next step of the walk: an FSD_HEAL_CRAWL_ kind with item filled,
 * or -errno (the brick root cannot be opened, or no memory: the walk
 * cannot go on). The root comes first, then a directory's whole
 * listing, then each of its subdirectories (ENTER, then its listing,
 * and so on down). */
int fsd_heal_crawl_next(struct fsd_heal_crawl *c,
                        struct fsd_heal_crawl_item *item /* OUT */);
void fsd_heal_crawl_free(struct fsd_heal_crawl *c);
/* Where the walk is, for a walk started later to go on from there
 * (fsd_heal_crawl_seek): the names from the brick root to the directory
 * being listed, '/'-separated ("" for the root); everything the walk
 * yielded before that directory's listing lies before it. NULL when the
 * walk has no such place (not started, or done) or without memory. */
char *fsd_heal_crawl_position(const struct fsd_heal_crawl *c);
/* Takes a walk not started to position: the next item is the first of
 * that directory's listing (or, if a name of it is gone, what follows
 * it in the walk). 0, -EINVAL (a malformed position or a walk already
 * started) or -errno (a directory on the way cannot be read: start the
 * walk from the root instead). */
int fsd_heal_crawl_seek(struct fsd_heal_crawl *c, const char *position);
/* The request file beside the progress file: VOL.state -> VOL.full. */
void fsd_heal_full_path(const char *state_path, char *buf, size_t len);
/* The request file: 1 with its contents in token when there is one, 0
 * when not, or -errno. */
int fsd_heal_full_request_read(const char *path,
                               char *token /* OUT, FSD_HEAL_TOKEN_MAX */);
/* A crawl that served the request token finished: removes the request
 * if it still holds token (0); 1 when it was rewritten meanwhile (it
 * stays: crawl again); -errno. */
int fsd_heal_full_request_done(const char *path, const char *token);

/* heal-checkpoint.c */
struct fsd_heal_checkpoint {
    char token[FSD_HEAL_TOKEN_MAX];     /* the request served */
    uint64_t brick;                     /* the brick walked: its number */
    char brick_path[FSD_HEAL_PATH_MAX]; /* and path */
    uint64_t visited, healed, failed;   /* the crawl's counters so far */
    uint64_t waiting;                   /* objects that waited for a copy */
    char *position;                     /* owned; in the brick's walk, or
                                           NULL: its walk not begun */
};

/* The checkpoint file beside the request file: VOL.full -> VOL.full.pos. */
void fsd_heal_checkpoint_path(const char *full_path, char *buf, size_t len);
/* Replaces the file crash-safely. 0 or -errno. */
int fsd_heal_checkpoint_write(const char *path,
                              const struct fsd_heal_checkpoint *cp);
/* 0 with cp filled (fsd_heal_checkpoint_clear it), -ENOENT when there
 * is none, -EINVAL when it is not one, or -errno. */
int fsd_heal_checkpoint_read(const char *path,
                             struct fsd_heal_checkpoint *cp /* OUT */);
void fsd_heal_checkpoint_clear(struct fsd_heal_checkpoint *cp);
/* Removes the file (none is not an error). 0 or -errno. */
int fsd_heal_checkpoint_remove(const char *path);

/* heal-state.c */
struct fsd_heal_brick_state {
    char path[FSD_HEAL_PATH_MAX]; /* brickN.path= */
    uint64_t pending;             /* brickN.pending= entries listed */
    uint64_t bytes;               /* brickN.bytes= their data bytes */
};

/* The progress file: key=value lines, replaced crash-safely. */
struct fsd_heal_state {
    long pid;                 /* pid= */
    int64_t started;          /* started= unix seconds */
    int64_t updated;          /* updated= */
    uint64_t rounds;          /* rounds= index reads done */
    uint64_t healed;          /* healed= objects healed */
    uint64_t healed_bytes;    /* healed_bytes= their data bytes */
    uint64_t clean;           /* clean= listed but already in agreement */
    uint64_t split_brain;     /* split_brain= in the last round */
    uint64_t waiting;         /* waiting= a copy down, in the last round */
    uint64_t failed;          /* failed= errors */
    uint64_t pending;         /* pending= left to do now, all bricks */
    uint64_t pending_bytes;   /* pending_bytes= */
    double rate;              /* rate= objects a second, last minute */
    double rate_bytes;        /* rate_bytes= */
    int64_t eta_seconds;      /* eta_seconds= -1 unknown, 0 nothing left */
    uint64_t full_crawl;      /* full_crawl= 1 while `heal full` crawls */
    int64_t crawl_started;    /* crawl_started= the running or last one */
    int64_t crawl_done_at;    /* crawl_done_at= last finished, 0 never */
    uint64_t crawl_visited;   /* crawl_visited= objects it reached */
    uint64_t crawl_healed;    /* crawl_healed= of them, healed */
    uint64_t crawl_failed;    /* crawl_failed= unreadable directories,
                                 failed heals, split-brain, a copy down */
    uint64_t crawl_brick;     /* crawl_brick= N of the brickN walked */
    size_t n_bricks;          /* bricks= */
    struct fsd_heal_brick_state bricks[FSD_HEAL_BRICKS_MAX];
};

/* Samples of (time, healed, healed_bytes), one a second, for the rate. */
struct fsd_heal_rate {
    int64_t t[FSD_HEAL_RATE_WINDOW + 1];
    uint64_t n[FSD_HEAL_RATE_WINDOW + 1];
    uint64_t b[FSD_HEAL_RATE_WINDOW + 1];
    size_t head;  /* next slot */
    size_t count; /* samples held */
};

/* Writes st to path: path.tmp, fsync, rename, fsync of the directory.
 * 0 or -errno. */
int fsd_heal_state_write(const char *path, const struct fsd_heal_state *st);
/* 0, -ENOENT, -EINVAL (not a heal state file) or -errno. */
int fsd_heal_state_read(const char *path, struct fsd_heal_state *st);
/* Adds a sample at now and sets st's rate, rate_bytes and eta_seconds
 * from the samples of the last FSD_HEAL_RATE_WINDOW seconds and its
 * pending counts. */
void fsd_heal_rate_update(struct fsd_heal_rate *r, int64_t now,
                          struct fsd_heal_state *st);

/* heal-splitlist.c */
/* One brick's objects in split-brain, and those that waited for a copy
 * (a brick down), in the last round. */
struct fsd_heal_split {
    vl_gfid_t *gfids; /* owned; the first FSD_HEAL_SPLIT_MAX */
    size_t n;
    size_t cap;
    uint64_t count;   /* all of them */
    vl_gfid_t *waiting_gfids; /* owned; the first FSD_HEAL_SPLIT_MAX */
    size_t n_waiting;
    size_t cap_waiting;
    uint64_t waiting;  /* all of them */
    bool has_waiting;  /* read: the brick's section has waiting= (an
                          older daemon's has not) */
};

/* The list file beside the progress file: state_path without its
 * ".state" suffix, plus ".split-brain". */
void fsd_heal_split_path(const char *state_path, char *buf, size_t len);
/* Counts gfid and keeps it if fewer than FSD_HEAL_SPLIT_MAX are kept.
 * 0 or -ENOMEM. */
int fsd_heal_split_add(struct fsd_heal_split *s, const vl_gfid_t *gfid);
/* The same for an object that waited for a copy. */
int fsd_heal_split_add_waiting(struct fsd_heal_split *s,
                               const vl_gfid_t *gfid);
void fsd_heal_split_clear(struct fsd_heal_split *s);
/* Replaces path with the n bricks' lists (crash-safe). 0 or -errno. */
int fsd_heal_split_write(const char *path, const char *const *brick_paths,
                         const struct fsd_heal_split *splits, size_t n);
/* Reads brick_path's list from path into out (zeroed first). 0,
 * -ENOENT (no file, or no such brick in it), -EINVAL or -errno. */
int fsd_heal_split_read(const char *path, const char *brick_path,
                        struct fsd_heal_split *out);

/* heal-resolve.c */
/* How a split-brain is resolved: replicate's key
 * mortar.heal.resolve.<policy>[.<child>]. */
struct fsd_heal_policy {
    char key[256]; /* the whole GETXATTR key */
    char child[200]; /* source-brick's client translator, else "" */
    bool is_bigger_file;
};

/* Parses --heal-resolve's "bigger-file", "latest-mtime" or
 * "source-brick:CHILD". 0 or -EINVAL with err set. */
int fsd_heal_policy_parse(const char *arg, struct fsd_heal_policy *out,
                          vl_err_t *err);
/* Checks a --heal-path: "gfid:UUID" (*gfid set, *is_gfid true) or an
 * absolute path inside the volume without "." or ".." components.
 * 0 or -EINVAL with err set. */
int fsd_heal_path_check(const char *path, bool *is_gfid, vl_gfid_t *gfid,
                        vl_err_t *err);

struct fsd_heal_resolve_conf {
    struct fsd_heal_policy policy;
    char *const *paths; /* borrowed; checked by fsd_heal_path_check */
    size_t n_paths;
    unsigned timeout_s; /* per object, for the copies to connect */
    FILE *out;          /* one line per path, in order */
};

/* Resolves each path through graph and writes "KIND VALUE" for it:
 * "answer healed|not-split-brain|ambiguous|pending", "answer -ERRNO"
 * (the key failed), "lookup -ERRNO" (no such object), or "isdir 0"
 * (bigger-file on a directory: nothing sent). Returns FSD_EXIT_OK once
 * every path is answered. */
int fsd_heal_resolve_run(vl_graph_t *graph,
                         const struct fsd_heal_resolve_conf *conf);

/* heal-run.c */
struct fsd_daemon;

struct fsd_heal_conf {
    const char *state_path;                 /* progress file */
    const struct fsd_heal_brick *bricks;    /* borrowed */
    size_t n_bricks;
    unsigned n_threads;                     /* objects healed at once */
    unsigned interval_s;                    /* between index reads */
    const char *dump_dir;                   /* statedumps (USR1), or NULL */
    struct fsd_daemon *ready;               /* told once running */
};

/* Heals until SIGTERM/SIGINT (sigs blocked, served here: USR2 starts a
 * round now and looks for a full-crawl request, USR1 writes a
 * statedump). Returns an FSD_EXIT_ status. */
int fsd_heal_run(vl_graph_t *graph, const struct fsd_heal_conf *conf,
                 const sigset_t *sigs);

#endif /* FSD_HEAL_H */
