/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist.h: private types of cluster/distribute, shared by its files.
 *
 *   dist-hash.c     the name hash (MurmurHash3 x86_32, seed 0)
 *   dist-layout.c   layouts: encode/decode, default, search, anomalies
 *   dist.c          class, options, init/fini/notify, statfs, dump,
 *                   inode ctx helpers, free space (min-free-disk)
 *   dist-route.c    inode and fd fops of files, EREMCHG reroute
 *   dist-worker.c   worker threads and blocking fan-outs
 *   dist-lookup.c   lookup (named, revalidate, nameless), directory heal
 *   dist-dirlookup.c  revalidation of a known directory in one parallel
 *                   round on the callbacks (no worker when all is well)
 *   dist-entry.c    create, mknod, symlink, mkdir, rmdir, link
 *   dist-unlink.c   unlink (known inode, stale inode, name everywhere)
 *   dist-rename.c   rename of files and directories
 *   dist-exchange.c rename with RENAME_EXCHANGE
 *   dist-readdir.c  opendir, readdir(plus) with encoded cookies
 *   dist-rdcache.c  readdir: per-fd cache of the bricks' batches, reads
 *   dist-xattr.c    getxattr/setxattr/removexattr incl. virtual keys
 *
 * Subvolume i is xl->children[i]; on disk it is known by its name.
 */
#ifndef MORTAR_DIST_H
#define MORTAR_DIST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/statvfs.h>

#include "vol/vol.h"
#include "dist-hash.h"

#define DIST_XATTR_LAYOUT "trusted.mortar.dht"
#define DIST_XATTR_LINKTO "trusted.mortar.dht.linkto"
#define DIST_VX_PATHINFO "mortar.dht.pathinfo"
#define DIST_VX_FIX_LAYOUT "mortar.dht.fix-layout"
#define DIST_VX_COMMIT_LAYOUT "mortar.dht.commit-layout"
#define DIST_VX_LAYOUT "mortar.dht.layout"

#define DIST_LAYOUT_SIZE 20 /* five big-endian u32s */
#define DIST_LAYOUT_FORMAT 1
#define DIST_FLAG_HAS_RANGE (1u << 0)
#define DIST_FLAG_COMMITTED (1u << 1)

/* A readdir cookie keeps the subvolume index in bits 48..55 and the
 * brick's cookie below: the index's 8 bits bound the subvolumes. Sets of
 * subvolumes are dist_mask_t (below). */
#define DIST_MAX_SUBVOLS 256
#define DIST_COOKIE_SHIFT 48
#define DIST_COOKIE_INDEX_BITS 8
#define DIST_COOKIE_MASK ((1ULL << DIST_COOKIE_SHIFT) - 1)

_Static_assert(DIST_MAX_SUBVOLS <= (1 << DIST_COOKIE_INDEX_BITS),
               "a readdir cookie must hold every subvolume index");
_Static_assert(DIST_COOKIE_SHIFT + DIST_COOKIE_INDEX_BITS < 64,
               "a readdir cookie must stay a positive off_t");

/* Link files and migration markers (contract). */
#define DIST_LINK_MODE (S_IFREG | S_ISVTX)
#define DIST_MARKER_MODE (S_IFREG | S_ISVTX | S_ISGID)

/* How often free space is re-read for min-free-disk. */
#define DIST_STATFS_MAX_AGE_MS 5000
/* How long a directory's layout is used before it is read again (the
 * rebalance may change it under a running client). The rebalance waits
 * this long and half a second more between fixing the layouts and moving
 * files (RB_LAYOUT_SETTLE_MS in mortarfsd/rebalance/rebalance.c): that
 * wait is in every rebalance's time. 1 s as the kernel's entry timeout, after which
 * a directory's lookup reads the layout again anyway. */
#define DIST_LAYOUT_TRUST_MS 1000
/* Parent layout fetches one fop may make before it answers EIO. */
#define DIST_LAYOUT_FETCHES_MAX 4
/* Grace after PARENT_UP for children that never answer their first
 * connect (protocol/client only reports success). */
#define DIST_FIRST_CONNECT_GRACE_MS 2000

enum dist_mem_type {
    DIST_MT_MISC = 0,
    DIST_MT_PRIV,
    DIST_MT_LAYOUT,
    DIST_MT_LOCAL,
    DIST_MT_TEXT,
    DIST_MT_RDCACHE,
    DIST_MT_FAN,
};

/* ---- sets of subvolumes ----
 * Bit i % 64 of word i / 64 is subvolume i. Small enough to pass and
 * return by value; every helper takes indices below DIST_MAX_SUBVOLS
 * (dist_mask_test answers false beyond). */
#define DIST_MASK_WORDS (DIST_MAX_SUBVOLS / 64)

_Static_assert(DIST_MAX_SUBVOLS % 64 == 0, "a mask is whole words");

typedef struct dist_mask {
    uint64_t w[DIST_MASK_WORDS]; /* the bits, lowest subvolumes first */
} dist_mask_t;

/* The same set changed by several threads at once (the answers of a
 * round): each word is atomic. A load reads word by word, so it is a
 * snapshot only once the writers are done (after the round's last
 * answer, which orders them). */
typedef struct dist_amask {
    _Atomic uint64_t w[DIST_MASK_WORDS]; /* as in dist_mask_t */
} dist_amask_t;


static inline dist_mask_t
dist_mask_none(void)
{
    dist_mask_t m = {{0}};

    return m;
}


static inline void
dist_mask_set(dist_mask_t *m, unsigned i)
{
    m->w[i / 64] |= 1ULL << (i % 64);
}


static inline void
dist_mask_clear(dist_mask_t *m, unsigned i)
{
    m->w[i / 64] &= ~(1ULL << (i % 64));
}


static inline bool
dist_mask_test(dist_mask_t m, unsigned i)
{
    return i < DIST_MAX_SUBVOLS && (m.w[i / 64] >> (i % 64)) & 1;
}


/* The set holding subvolume i only. */
static inline dist_mask_t
dist_mask_one(unsigned i)
{
    dist_mask_t m = {{0}};

    dist_mask_set(&m, i);
    return m;
}


/* Subvolumes 0..n-1 (n <= DIST_MAX_SUBVOLS). */
static inline dist_mask_t
dist_mask_all(unsigned n)
{
    dist_mask_t m = {{0}};

    for (unsigned k = 0; k < DIST_MASK_WORDS && n > 64 * k; k++)
        m.w[k] = n - 64 * k >= 64 ? ~0ULL : (1ULL << (n - 64 * k)) - 1;
    return m;
}


static inline bool
dist_mask_is_empty(dist_mask_t m)
{
    for (unsigned k = 0; k < DIST_MASK_WORDS; k++)
        if (m.w[k] != 0)
            return false;
    return true;
}


static inline bool
dist_mask_equal(dist_mask_t a, dist_mask_t b)
{
    for (unsigned k = 0; k < DIST_MASK_WORDS; k++)
        if (a.w[k] != b.w[k])
            return false;
    return true;
}


static inline unsigned
dist_mask_count(dist_mask_t m)
{
    unsigned n = 0;

    for (unsigned k = 0; k < DIST_MASK_WORDS; k++)
        n += (unsigned)__builtin_popcountll(m.w[k]);
    return n;
}


/* The lowest subvolume in m at or above from, or -1. */
static inline int
dist_mask_next(dist_mask_t m, unsigned from)
{
    for (unsigned k = from / 64; k < DIST_MASK_WORDS; k++) {
        uint64_t w = m.w[k];

        if (k == from / 64)
            w &= ~0ULL << (from % 64);
        if (w != 0)
            return (int)(64 * k + (unsigned)__builtin_ctzll(w));
    }
    return -1;
}


/* The lowest subvolume in m, or -1. */
static inline int
dist_mask_first(dist_mask_t m)
{
    return dist_mask_next(m, 0);
}


static inline dist_mask_t
dist_mask_and(dist_mask_t a, dist_mask_t b)
{
    for (unsigned k = 0; k < DIST_MASK_WORDS; k++)
        a.w[k] &= b.w[k];
    return a;
}


/* a without b. */
static inline dist_mask_t
dist_mask_andnot(dist_mask_t a, dist_mask_t b)
{
    for (unsigned k = 0; k < DIST_MASK_WORDS; k++)
        a.w[k] &= ~b.w[k];
    return a;
}


static inline dist_mask_t
dist_mask_or(dist_mask_t a, dist_mask_t b)
{
    for (unsigned k = 0; k < DIST_MASK_WORDS; k++)
        a.w[k] |= b.w[k];
    return a;
}


/* Sets a to m (before the writers start). */
static inline void
dist_amask_store(dist_amask_t *a, dist_mask_t m)
{
    for (unsigned k = 0; k < DIST_MASK_WORDS; k++)
        atomic_store(&a->w[k], m.w[k]);
}


static inline void
dist_amask_set(dist_amask_t *a, unsigned i)
{
    atomic_fetch_or(&a->w[i / 64], 1ULL << (i % 64));
}


static inline dist_mask_t
dist_amask_load(dist_amask_t *a)
{
    dist_mask_t m;

    for (unsigned k = 0; k < DIST_MASK_WORDS; k++)
        m.w[k] = atomic_load(&a->w[k]);
    return m;
}

/* One subvolume's share of a directory (decoded xattr). */
struct dist_range {
    uint32_t generation; /* layout generation written with it */
    uint32_t start;      /* first hash value, inclusive */
    uint32_t stop;       /* last hash value, inclusive */
    uint32_t flags;      /* DIST_FLAG_* */
    int err;             /* 0, or why it is missing (-ENODATA, -ENOTCONN,
                            -ENOENT for a missing directory...) */
};

/* A directory's layout: one range per subvolume, by index; sized by the
 * subvolumes (dist_layout_new), so never on the stack nor copied by
 * value (dist_layout_dup). Immutable once published in an inode ctx
 * (replaced as a whole). */
struct dist_layout {
    unsigned n;              /* subvolumes: entries of r */
    struct dist_range r[];   /* by subvolume index */
};

/* Problems dist_layout_check finds. */
struct dist_anomalies {
    unsigned n_holes;    /* hash values no range covers (counted as gaps) */
    unsigned n_overlaps; /* pairs of ranges that intersect */
    unsigned n_missing;  /* up subvolumes without a layout xattr */
    unsigned n_down;     /* subvolumes that could not be asked */
    dist_mask_t missing; /* those missing */
};

/* A unit of work for distribute's worker threads (dist-worker.c): the
 * slow paths run there with blocking calls to the children. Lives in the
 * request's private area (or in priv for background work). */
struct dist_task {
    struct dist_task *next;  /* queue link, (workers lock) */
    void (*fn)(vl_xlator_t *xl, vl_req_t *req); /* the work */
    vl_req_t *req;           /* borrowed; the request it serves, or NULL */
};

struct dist_workers;

/* One child's answer in a blocking fan-out. */
struct dist_call {
    int status;            /* 0 or -errno; -ENOTCONN when not asked */
    struct vl_reply reply; /* owned; cleared with dist_calls_clear */
};

/* Copies an entry reply's parent attributes (postparent, postparent2)
 * from src into dst; nothing else moves. */
static inline void
dist_postparent_take(struct vl_reply *dst, const struct vl_reply *src)
{
    dst->postparent = src->postparent;
    dst->has_postparent = src->has_postparent;
    dst->postparent2 = src->postparent2;
    dst->has_postparent2 = src->has_postparent2;
}

/* Per request (VL_REQ_PRIV), owned by the translator handling it. */
struct dist_local {
    struct dist_task task;  /* queue node when handed to a worker */
    int subvol;             /* where the request went */
    int subvol2;            /* second target (unlink's link file...) */
    bool is_retry;          /* the EREMCHG reroute was done */
    vl_fanout_t fan;        /* async fan-outs */
    int status2;            /* second target's status */
    uint8_t n_layout_fetches; /* parent layouts fetched for this fop
                               * (dist_with_parent_layout) */
    vl_inode_t *parent;     /* borrowed from the args: layout to fetch */
    vl_fop_fn *redo;        /* fop to run again once it is known */
    atomic_int hard_err;    /* fan-outs: first error that is not ENOENT
                               nor ENOTCONN */
    atomic_int n_down;      /* fan-outs: children that were not reached */
    atomic_bool has_reply;  /* fan-outs: a reply was moved up already */
    dist_amask_t mask_ok;   /* async mkdir/rmdir round: children that
                               made / removed their copy */
    dist_amask_t mask_more; /* same round: EEXIST (mkdir: stale copy)
                               or ENOTEMPTY (rmdir) */
    atomic_int err_subvol;  /* child that gave hard_err */
    atomic_bool is_name_gone; /* unlink: the first round removed the name
                               on the hashed subvolume (a link file, or
                               the data a rebalance moved there) */
    void *mk;               /* async mkdir: owned struct dist_mkdir_state;
                               async directory lookup: owned struct
                               dist_dirlk (dist-dirlookup.c) */
};

/* Parsed options (xl->conf). */
struct dist_conf {
    char *min_free_disk;   /* owned by the conf: "10%" or a size */
    double min_free_inodes; /* percent of the brick's inodes */
    char *decommissioned;  /* owned by the conf: comma-separated names */
    bool is_lookup_optimize; /* trust COMMITTED layouts for ENOENT */
    uint64_t connect_timeout; /* ms; top-of-graph readiness */
    char *rebal_throttle;  /* owned by the conf: read by the rebalancer */
};

/* Runtime state (xl->priv). lock guards everything marked so. */
struct dist_priv {
    vl_xlator_t *xl;          /* borrowed; the translator */
    unsigned n;               /* children */
    pthread_mutex_t lock;     /* guards the fields below marked (lock) */
    bool is_up[DIST_MAX_SUBVOLS];     /* (lock) child reported up */
    bool is_local[DIST_MAX_SUBVOLS];  /* no network below: always up */
    dist_mask_t decommissioned; /* immutable after init */
    double min_free_pct;      /* from min-free-disk, 0 if a size */
    uint64_t min_free_bytes;  /* from min-free-disk, 0 if a percent */
    uint64_t avail[DIST_MAX_SUBVOLS]; /* (lock) bytes free, statfs cache */
    uint64_t total[DIST_MAX_SUBVOLS]; /* (lock) bytes total */
    uint64_t ifree[DIST_MAX_SUBVOLS]; /* (lock) inodes free, statfs cache */
    uint64_t itotal[DIST_MAX_SUBVOLS]; /* (lock) inodes in all; 0: the
                                          file system has no fixed count */
    bool has_space[DIST_MAX_SUBVOLS]; /* (lock) avail/total are known */
    uint64_t statfs_ms;       /* (lock) when the cache was filled */
    bool is_statfs_busy;      /* (lock) a refresh is in flight */
    bool is_up_sent;          /* (lock) CHILD_UP went to the parents */
    bool is_grace_over;       /* (lock) first-connect grace expired */
    bool is_ready_set;        /* (lock) top of graph: set_ready called */
    vl_timer_t *grace_timer;  /* (lock) owned until it runs */
    vl_timer_t *ready_timer;  /* (lock) owned until it runs */
    atomic_uint_fast64_t n_reroutes; /* EREMCHG reroutes done (dump) */
    atomic_uint_fast64_t n_heals;    /* directory heals done (dump) */
    atomic_uint_fast64_t n_rd_reads; /* readdirs sent to children (dump) */
    atomic_uint_fast64_t n_rd_names_only; /* of those, without plus */
    atomic_bool is_rd_names_only; /* the last listing from offset 0 asked
                                     for names only (dist-rdcache.c) */
    atomic_uint_fast64_t n_rd_seeded; /* first batches that came with an
                                         opendir (dump) */
    atomic_uint_fast64_t n_rd_waits; /* readdirs that waited for one */
    atomic_uint_fast64_t n_tasks;    /* requests handed to a worker
                                        thread (dump, tests) */
    atomic_uint_fast64_t n_dir_lookups_fast; /* directory lookups
                                        answered on the callbacks */
    atomic_uint_fast64_t n_layout_rereads; /* layouts a task read again,
                                        past their trust (dump, tests) */
    struct dist_workers *workers;    /* owned; dist-worker.c */
    struct dist_task statfs_task;    /* (lock: is_statfs_busy) background
                                        statfs refresh */
};

/* The times a directory was last answered with (dist_dir_times_settle). */
struct dist_dir_times {
    int64_t atime, mtime, ctime;       /* seconds */
    uint32_t atime_ns, mtime_ns, ctime_ns; /* nanoseconds */
    bool is_known;                     /* the fields above are set */
};

/* Per inode (vl_inode_ctx), guarded by inode->lock. */
struct dist_inode_ctx {
    struct dist_layout *layout; /* directories: owned, NULL until known */
    uint64_t layout_ms;         /* when the layout was fetched */
    struct dist_dir_times times; /* directories: last answered times */
    int cached;                 /* files: subvolume with the data, -1 */
    int hashed;                 /* files: subvolume of the name, -1 */
    bool has_cached;            /* cached is valid */
    bool has_linkfile;          /* a link file on hashed is known */
};

/* Per fd (vl_fd_ctx), guarded by fd->lock. Directories keep one child fd
 * per up subvolume (opendir); files the subvolume they are open on. */
struct dist_fd_ctx {
    bool has_subvol;            /* files: subvol is valid */
    int subvol;                 /* files: where the fd is open */
    int32_t flags;              /* files: the open flags, for reopen */
    dist_mask_t dir_open;       /* directories: the opened children */
    struct dist_rd_cache *rd_cache; /* directories: owned, readdir cache
                                       (dist-rdcache.c), freed at release */
};

/* Shorthands. */
static inline struct dist_priv *
dist_priv(vl_xlator_t *xl)
{
    return xl->priv;
}


/* dist-layout.c: constructors and pure functions. */
/* A layout of n subvolumes (1..DIST_MAX_SUBVOLS), every range zeroed;
 * NULL on ENOMEM or a bad n. Freed with vl_free. */
struct dist_layout *dist_layout_new(vl_xlator_t *xl, unsigned n);
/* A copy of l (same n); NULL on ENOMEM. */
struct dist_layout *dist_layout_dup(vl_xlator_t *xl,
                                    const struct dist_layout *l);
void dist_layout_encode(const struct dist_range *r,
                        unsigned char out[DIST_LAYOUT_SIZE]);
int dist_layout_decode(const void *buf, size_t len,
                       struct dist_range *out /* OUT */);
/* Sets l's ranges (all l->n of them) to the default, skipping the
 * subvolumes in skip. */
void dist_layout_default(struct dist_layout *l, dist_mask_t skip,
                         uint32_t generation, uint32_t flags);
/* Sets l's ranges to the default's chunks dealt so that each subvolume
 * keeps as much of its old range (l's, as read) as it can: the fewest
 * names move. Deterministic in the old layout; the default when there is
 * no usable old range. */
void dist_layout_refit(vl_xlator_t *xl, struct dist_layout *l,
                       dist_mask_t skip, uint32_t generation,
                       uint32_t flags);
/* The subvolume whose range holds hash, or -1. */
int dist_layout_search_hash(const struct dist_layout *layout, uint32_t hash);
int dist_layout_search(const struct dist_layout *layout, const char *name);
/* Fills an; returns true when the layout needs repair. */
bool dist_layout_check(const struct dist_layout *layout,
                       struct dist_anomalies *an /* OUT */);
/* Highest generation in the layout. */
uint32_t dist_layout_max_generation(const struct dist_layout *layout);
/* True if every range with a layout is COMMITTED. */
bool dist_layout_is_committed(const struct dist_layout *layout);

/* dist-worker.c: worker threads and blocking calls (workers only). */
int dist_workers_new(vl_xlator_t *xl);
void dist_workers_stop(vl_xlator_t *xl);
void dist_workers_free(vl_xlator_t *xl);
/* Queues fn(xl, req) on a worker; 0 or -errno (then nothing runs). */
int dist_task_run(vl_xlator_t *xl, vl_req_t *req,
                  void (*fn)(vl_xlator_t *xl, vl_req_t *req));
/* dist_task_run for a request: if it cannot be queued, req is answered
 * with that error. */
void dist_task_or_unwind(vl_xlator_t *xl, vl_req_t *req,
                         void (*fn)(vl_xlator_t *xl, vl_req_t *req));
/* The per-child arrays of a blocking fan-out, priv->n entries each
 * (744 bytes a child: by DIST_MAX_SUBVOLS they would be far too large for
 * a thread's stack): zeroed; NULL on ENOMEM. args are freed with vl_free,
 * calls with dist_calls_free (both take NULL). */
union vl_fop_args *dist_args_new(vl_xlator_t *xl);
struct dist_call *dist_calls_new(vl_xlator_t *xl);
/* Winds op to every child in mask in parallel (args by child index) on
 * behalf of req (its caller), waits, fills calls (n entries; -ENOMEM for
 * children in mask when no request could be made). Returns how many
 * answered 0. */
int dist_fan_sync(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask,
                  vl_fop_t op, const union vl_fop_args *args,
                  struct dist_call *calls /* OUT */);
/* Same with a fop per child (ops by child index). */
int dist_fan_ops_sync(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask,
                      const vl_fop_t *ops, const union vl_fop_args *args,
                      struct dist_call *calls /* OUT */);
/* Same for one child; returns the status, reply in *call. */
int dist_call_sync(vl_xlator_t *xl, vl_req_t *req, unsigned i, vl_fop_t op,
                   const union vl_fop_args *args,
                   struct dist_call *call /* OUT */);
/* dist_fan_sync with the child requests' lock owner set to lk_owner. */
int dist_fan_sync_owner(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask,
                        vl_fop_t op, const union vl_fop_args *args,
                        uint64_t lk_owner, struct dist_call *calls);
/* dist_call_sync with the child request's lock owner set to lk_owner
 * (its caller is req's otherwise). */
int dist_call_sync_owner(vl_xlator_t *xl, vl_req_t *req, unsigned i,
                         vl_fop_t op, const union vl_fop_args *args,
                         uint64_t lk_owner, struct dist_call *call);
/* The layout lock of a directory: an exclusive inodelk in domain
 * DIST_LAYOUT_LOCK_DOMAIN on every up subvolume, tried on all at once
 * (one round when nobody else holds it) and, if another holder is met,
 * let go and taken again waiting in index order (two holders never wait
 * on each other crosswise); held across the read,
 * refit and write of the directory's layout, so that two clients (or two
 * tasks of one: the owner is the lock object's address) fixing the same
 * directory do not interleave their writes into a layout with two
 * generations, holes or overlaps. A subvolume that is down, lacks the
 * directory or has no features/locks (ENOSYS) is skipped: the lock is
 * advisory and never fails a fop. Worker threads only. */
#define DIST_LAYOUT_LOCK_DOMAIN "mortar.dht.layout"
/* Test only: called (when set) right before a repaired or refitted
 * layout is written, with the layout lock held. */
extern void (*dist_test_before_layout_write)(vl_xlator_t *xl,
                                             const struct vl_loc *loc);
struct dist_layout_lock {
    dist_mask_t held;    /* subvolumes where it is held */
    vl_inode_t *dir;     /* owned ref; NULL when not taken */
};
void dist_layout_lock(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *dir,
                      struct dist_layout_lock *lk /* OUT */);
void dist_layout_unlock(vl_xlator_t *xl, vl_req_t *req,
                        struct dist_layout_lock *lk);
/* Unlinks parent/name on child at (a link file, a stale copy, a replaced
 * target) on behalf of req; waits; returns the status (dist-entry.c). */
int dist_unlink_at(vl_xlator_t *xl, vl_req_t *req, int at, vl_inode_t *parent,
                   const char *name);
/* Lists subvolume i's copy of directory dir (dist-mkdir.c): 0 when it
 * holds nothing but link files (their names in *names, *n_names of them;
 * free with dist_names_free), -ENOTEMPTY when it holds anything else, or
 * the listing's error. */
int dist_dir_links_only(vl_xlator_t *xl, vl_req_t *req, unsigned i,
                        vl_inode_t *dir, char ***names /* OUT */,
                        size_t *n_names /* OUT */);
void dist_names_free(char **names, size_t n);
/* After a directory's setattr failed on some copies (calls: the
 * fan-out's answers), the copies done get their old attributes back
 * (dist-xattr.c). */
void dist_dir_setattr_undo(vl_xlator_t *xl, vl_req_t *req,
                           const struct dist_call *calls);
/* The entry locks of a directory rename (dist-rename.c): the old and
 * the new name of req (a rename), each on its hashed subvolume. lock: 0
 * with both held (a brick without features/locks: skipped), or the error
 * with nothing held; unlock releases what is held. */
struct dist_rename_lock {
    int at[2];            /* subvolume of each name's lock, -1: not held */
    struct vl_loc loc[2]; /* parent + name (borrowed from req) */
};
int dist_rename_lock(vl_xlator_t *xl, vl_req_t *req,
                     struct dist_rename_lock *lk /* OUT */);
void dist_rename_unlock(vl_xlator_t *xl, vl_req_t *req,
                        struct dist_rename_lock *lk);
/* Sends req's own fop (args copied) to child i, waits, moves the reply
 * into req; returns the status. */
int dist_child_sync(vl_xlator_t *xl, vl_req_t *req, unsigned i);
void dist_calls_clear(struct dist_call *calls, unsigned n);
/* dist_calls_clear, then frees calls (from dist_calls_new; NULL is fine). */
void dist_calls_free(struct dist_call *calls, unsigned n);

/* dist.c */
int dist_subvol_index(vl_xlator_t *xl, vl_xlator_t *child);
/* The subvolume whose graph below holds x (x itself, or a translator
 * under it that answered a child request passed down to it), or -1. */
int dist_subvol_below(vl_xlator_t *xl, vl_xlator_t *x);
int dist_subvol_by_name(vl_xlator_t *xl, const char *name, size_t len);
bool dist_is_up(vl_xlator_t *xl, unsigned i);
dist_mask_t dist_up_mask(vl_xlator_t *xl);
uint64_t dist_now_ms(void);
/* Layout helpers on inode ctx (inode->lock taken inside). */
struct dist_inode_ctx *dist_ictx(vl_xlator_t *xl, vl_inode_t *inode);
void dist_ictx_set_layout(vl_xlator_t *xl, vl_inode_t *inode,
                          struct dist_layout *layout /* taken */);
/* Directory times. Each brick keeps its own copy's times; the merge of
 * the copies (newest of each) is the directory's. A view that is whole
 * (every subvolume's copy merged) and not older than the last answer
 * (ctime not below it) is answered as it is and remembered (so a utimes
 * to the past shows); any other view (a subvolume down, one brick's copy
 * in a readdirplus entry, an answer overtaken by a newer one) has each
 * time raised to the last answered one. So the times a client answers
 * for a directory never go backwards but by an explicit utimes. inode
 * NULL: nothing. */
void dist_dir_times_settle(vl_xlator_t *xl, vl_inode_t *inode,
                           struct vl_iatt *iatt, bool is_whole);
/* The same for loc's inode and the table's inode of iatt's GFID. */
void dist_dir_times_settle_loc(vl_xlator_t *xl, const struct vl_loc *loc,
                               struct vl_iatt *iatt, bool is_whole);
/* Answers an entry op (create, mknod, mkdir, symlink, link, unlink,
 * rmdir, rename) with status: on success its parent attributes (one
 * brick's copy) are settled as a partial view of the parent directory,
 * so what the kernel keeps for it after the op is not older than a stat
 * answered. Any other req: vl_unwind as it is. */
void dist_entry_unwind(vl_req_t *req, int status);
/* Raises each of to's atime, mtime and ctime to from's when later. */
void dist_iatt_max_times(struct vl_iatt *to, const struct vl_iatt *from);
/* A copy of inode's layout for the caller to own: 0, -ENODATA when none
 * is known, or -ENOMEM. */
int dist_ictx_layout_copy(vl_xlator_t *xl, vl_inode_t *inode,
                          struct dist_layout **out /* OUT */);
/* The hashed subvolume of name in parent, or -errno (-ESTALE: no layout
 * known or older than DIST_LAYOUT_TRUST_MS, -EDOM: no range holds it).
 * committed (may be NULL) tells whether the hashed range is COMMITTED;
 * never for a name placed by another key than itself (rsync's temporary
 * names, dist-hash.h): versions before that key placed such names by the
 * whole name, so a miss on the hashed subvolume is not trusted for them
 * and a lookup asks every subvolume, finding a file placed the old way. */
int dist_hashed_subvol(vl_xlator_t *xl, vl_inode_t *parent,
                       const char *name, bool *committed);
/* The same in a task (worker threads only: may block). A task runs after
 * its fop checked the parent's layout and may outlast the layout's trust
 * (a busy worker, a slow brick): the layout is then read again from the
 * bricks instead of being taken for none (a rename failing ENOTCONN, a
 * link file not made). -ESTALE only when that read fails. */
int dist_hashed_subvol_sync(vl_xlator_t *xl, vl_req_t *req,
                            vl_inode_t *parent, const char *name);
void dist_ictx_set_file(vl_xlator_t *xl, vl_inode_t *inode, int cached,
                        int hashed, bool has_linkfile);
/* Cached subvolume of a file, or -1. */
int dist_ictx_cached(vl_xlator_t *xl, vl_inode_t *inode);
/* The subvolume fd is open on (dist-route.c), or -1 before it is known. */
int dist_fd_subvol(vl_xlator_t *xl, vl_fd_t *fd);
bool dist_iatt_is_linkfile(const struct vl_iatt *iatt);
/* An inode carrying gfid for inode fops on the children (the wire names
 * objects by GFID): the linked one if any, else a private inode that is
 * never linked and goes away at its unref. New ref or NULL. */
vl_inode_t *dist_inode_for_gfid(vl_xlator_t *xl, const vl_gfid_t *gfid,
                                uint32_t type);
/* Subvolume for a new file: hashed unless it is short of space or
 * decommissioned. */
int dist_pick_data_subvol(vl_xlator_t *xl, int hashed);
bool dist_inode_is_dir(vl_inode_t *inode);
/* First up subvolume, or -1. */
int dist_first_up(vl_xlator_t *xl);
/* Subvolume i is listed in decommissioned-bricks (being removed). */
bool dist_is_decommissioned(vl_xlator_t *xl, unsigned i);

/* dist-route.c */
void dist_fop_route(vl_xlator_t *xl, vl_req_t *req);
void dist_entrylk(vl_xlator_t *xl, vl_req_t *req);
/* Routes an inode fop (file xattrs...) like stat: to the cached
 * subvolume of a file, with the EREMCHG reroute. */
void dist_fop_route_xattr(vl_xlator_t *xl, vl_req_t *req);

/* dist-copy.c: copy_file_range, also between subvolumes. */
void dist_copy_file_range(vl_xlator_t *xl, vl_req_t *req);

/* dist-lookup.c */
void dist_lookup(vl_xlator_t *xl, vl_req_t *req);
/* Directory lookup on every up subvolume by loc (named: parent + name,
 * or nameless: inode), merging attributes into *out, healing missing
 * copies (named only), fetching (with the lookups: protocol 3), checking
 * and repairing the layout
 * (fix: always rewrite a refitted layout without COMMITTED) and storing it
 * in the inode ctx. Worker threads only. 0 or -errno. */
int dist_dir_sync(vl_xlator_t *xl, vl_req_t *req, const struct vl_loc *loc,
                  bool fix, struct vl_iatt *out /* OUT */);
/* Merges the directory copies of lookups lk (copy base first: mode,
 * owner, GFID; the newest times of the copies with its GFID) into *out;
 * returns the up subvolumes where the copy is missing. */
dist_mask_t dist_dir_merge(const struct dist_call *lk, unsigned n,
                           dist_mask_t up, int base,
                           struct vl_iatt *out /* OUT */);
/* Fills l from the layout xattrs that came with directory lookups lk
 * (each range's err: its lookup's or xattr's error); returns the
 * subvolumes whose lookup found the directory but brought no xattr. */
dist_mask_t dist_layout_from_lookups(const struct dist_call *lk, unsigned n,
                                     struct dist_layout *l);
/* Keeps a copy of l in the inode ctx of loc's inode and of gfid's. */
void dist_layout_store(vl_xlator_t *xl, const struct vl_loc *loc,
                       const vl_gfid_t *gfid, const struct dist_layout *l);
/* dist-mkdir.c: one child request per subvolume in mask, in index
 * order, into *out (heap; the caller frees it); how many, or -ENOMEM. */
int dist_round_reqs(vl_xlator_t *xl, vl_req_t *req, dist_mask_t mask,
                    vl_req_t ***out /* OUT */);
/* dist-dirlookup.c: lookup of a directory whose GFID is known (the
 * inode's, or the copy a named lookup found on the hashed subvolume):
 * every up subvolume in one parallel round from the callbacks, each copy
 * checked to be gfid; anything unusual
 * (a copy missing, a subvolume down, a layout to repair, not a
 * directory) goes to a worker's dist_dir_sync. */
void dist_lookup_dir(vl_xlator_t *xl, vl_req_t *req, const vl_gfid_t *gfid);
/* The worker path of a directory lookup (dist-lookup.c). */
void dist_lookup_dir_task(vl_xlator_t *xl, vl_req_t *req);
/* Writes l's ranges to the subvolumes in mask (worker only); each
 * range's err becomes the write's status. */
void dist_layout_write(vl_xlator_t *xl, vl_req_t *req,
                       const struct vl_loc *loc, struct dist_layout *l,
                       dist_mask_t mask);
/* Runs redo(xl, req) on a worker once parent's layout is known (fetched
 * once); answers req with the error otherwise. */
void dist_with_parent_layout(vl_xlator_t *xl, vl_req_t *req,
                             vl_inode_t *parent, vl_fop_fn *redo);
/* Finds the data of a named file on every up subvolume (worker only):
 * 0 with *data (and *iatt), -ENOENT, or another error. */
int dist_find_file_sync(vl_xlator_t *xl, vl_req_t *req,
                        const struct vl_loc *loc, int *data,
                        struct vl_iatt *iatt /* OUT */);

/* dist-unlink.c */
void dist_unlink(vl_xlator_t *xl, vl_req_t *req);

/* dist-entry.c */
void dist_create(vl_xlator_t *xl, vl_req_t *req);
void dist_mknod(vl_xlator_t *xl, vl_req_t *req);
void dist_symlink(vl_xlator_t *xl, vl_req_t *req);
void dist_mkdir(vl_xlator_t *xl, vl_req_t *req);
void dist_rmdir(vl_xlator_t *xl, vl_req_t *req);
void dist_link(vl_xlator_t *xl, vl_req_t *req);
/* Creates a link file for gfid at parent/name on subvolume at, pointing
 * to subvolume to (worker only); an existing link file of that GFID is
 * updated. When another name of the file already holds the GFID on that
 * subvolume (its link file, a marker or the data), the name becomes a
 * hard link of it (a marker's linkto is left alone). 0 or -errno. */
int dist_linkfile_create(vl_xlator_t *xl, vl_req_t *req, int at, int to,
                         vl_inode_t *parent, const char *name,
                         const vl_gfid_t *gfid);

/* dist-rename.c */
void dist_rename(vl_xlator_t *xl, vl_req_t *req);
/* dist-exchange.c: rename with RENAME_EXCHANGE (worker task; both
 * parents' layouts known). */
void dist_exchange_task(vl_xlator_t *xl, vl_req_t *req);

/* dist-readdir.c */
void dist_opendir(vl_xlator_t *xl, vl_req_t *req);
void dist_readdir(vl_xlator_t *xl, vl_req_t *req);
/* dist-rdcache.c: frees the fd's readdir cache (release). */
void dist_readdir_release(vl_xlator_t *xl, vl_fd_t *fd);

/* dist-xattr.c */
void dist_getxattr(vl_xlator_t *xl, vl_req_t *req);
void dist_setxattr(vl_xlator_t *xl, vl_req_t *req);
void dist_removexattr(vl_xlator_t *xl, vl_req_t *req);

#endif /* MORTAR_DIST_H */
