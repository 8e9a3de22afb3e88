/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep.h: private types of cluster/replicate (see rep.c and
 * doc/replicate.md). Children are numbered 0..n-1 in volfile order; a
 * set of children is a rep_mask_t bit mask.
 */
#ifndef MORTAR_REP_H
#define MORTAR_REP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vol/vol.h"

/* A transaction's xattrop carries the dirty key and one pending key per
 * other child: VL_XATTROP_MAX keys in all. */
#define REP_MAX_CHILDREN 16
#define REP_FIRST_CONNECT_GRACE_MS 2000

#define REP_KEY_PREFIX "trusted.mortar.rep."
#define REP_KEY_DIRTY REP_KEY_PREFIX "dirty"
/* Virtual keys (rep-heal.c, doc/replicate.md "Self-heal"): a GETXATTR
 * of REP_XATTR_HEAL heals the object now; REP_XATTR_HEAL_FULL also
 * merges the names of a directory whose records blame nothing; a key
 * under REP_XATTR_RESOLVE ("bigger-file", "latest-mtime",
 * "source-brick.<child>") resolves a split-brain by that rule. */
#define REP_XATTR_HEAL "mortar.heal"
#define REP_XATTR_HEAL_FULL "mortar.heal.full"
#define REP_XATTR_RESOLVE "mortar.heal.resolve."
/* Answers priv->event_gen in decimal, from this client alone (no
 * object, no network): the self-heal daemon polls it to start a round
 * as soon as a child comes back, not at its next interval. */
#define REP_XATTR_CHILD_GEN "mortar.heal.child-gen"

/* The three counters of a pending or dirty record, in this order, each a
 * big-endian int32 (12 bytes). */
enum rep_kind { REP_DATA = 0, REP_METADATA = 1, REP_ENTRY = 2 };
#define REP_N_KINDS 3
#define REP_RECORD_SIZE (REP_N_KINDS * 4)

typedef uint32_t rep_mask_t;

/* Memory types (rep.c's mem_types table). */
enum { REP_MT_MISC = 0, REP_MT_PRIV, REP_MT_KEY, REP_MT_INSPECT };

enum rep_quorum { REP_QUORUM_NONE = 0, REP_QUORUM_AUTO, REP_QUORUM_FIXED };

/* Parsed options (xl->conf). */
struct rep_conf {
    int quorum_type;         /* enum rep_quorum */
    bool is_eager_lock;      /* batch the writes of an inode (eager-lock) */
    uint64_t post_op_delay;  /* ms a batch stays open after its last
                                write */
    uint64_t quorum_count;   /* children needed with quorum-type fixed */
    char *pending_names;     /* owned by the conf: comma-separated slot
                                names, one per child; "" = child names */
    uint64_t arbiter_count;  /* 0, or 1: the last child is an arbiter */
    bool is_data_heal;       /* heal on access (rep-heal.c) */
    bool is_metadata_heal;
    bool is_entry_heal;
    uint64_t bg_heal_count;  /* background heals at once */
    int heal_algo;           /* enum rep_heal_algo */
    int fav_child_policy;    /* enum rep_heal_rule (rep-heal.h): how a
                                heal resolves a split-brain by itself */
    uint64_t heal_max_rate;  /* bytes/s heals write to stale copies, all
                                heals of this translator; 0: no limit */
};

enum rep_heal_algo { REP_HEAL_FULL = 0, REP_HEAL_DIFF };

/* Runtime state (xl->priv). */
struct rep_priv {
    unsigned n;                   /* children */
    int quorum_type;              /* copied from the conf at init */
    unsigned quorum_count;        /* copied from the conf at init */
    bool is_eager_lock;           /* copied from the conf at init */
    uint64_t post_op_delay;       /* copied from the conf at init */
    char *keys[REP_MAX_CHILDREN]; /* owned: trusted.mortar.rep.<slot> */
    pthread_mutex_t lock;         /* guards the fields marked (lock) */
    bool is_up[REP_MAX_CHILDREN]; /* (lock) child usable */
    bool is_up_sent;              /* (lock) CHILD_UP went to the parents */
    bool is_grace_over;           /* (lock) first-connect grace expired */
    vl_timer_t *grace_timer;      /* (lock) owned until it runs */
    atomic_bool is_parent_down;   /* the graph is being torn down: no
                                     new batch releases are wound */
    atomic_uint event_gen;        /* bumped on every child up/down: inode
                                     read masks older than it are redone */
    atomic_uint_fast64_t n_txn;        /* transactions run */
    atomic_uint_fast64_t n_txn_blamed; /* ... that recorded a pending
                                          count for a failed child */
    atomic_uint_fast64_t n_quorum_fail; /* fops refused or failed for
                                           quorum */
    atomic_uint_fast64_t n_lock_owner; /* source of transaction lock
                                          owners */
    atomic_uint_fast64_t n_eager_writes; /* writes sent inside a batch
                                            without their own lock */
    atomic_uint_fast64_t n_eager_batches; /* batches opened */
    atomic_uint_fast64_t n_lookup_carried; /* lookups whose records came
                                              with them (one round trip) */
    atomic_uint_fast64_t n_detached;  /* entry fops answered before their
                                         post-op (rep-txn.c) */
    struct rep_heal_ctl *heal;   /* owned: self-heal state (rep-heal.c) */
    rep_mask_t arbiter;          /* the arbiter child (arbiter-count 1:
                                    the last), 0 without; set at init */
    atomic_uint_fast64_t n_arbiter_refused; /* changes refused because
                                               only the arbiter's copy
                                               is good (rep-arbiter.c) */
};

/* Eager locking of one inode's writes (rep-eager.c). */
enum rep_eager_state {
    REP_EG_NONE = 0,   /* no batch */
    REP_EG_ACQUIRING,  /* the first write takes the lock and pre-op */
    REP_EG_HELD,       /* writes go straight to the children */
    REP_EG_RELEASING,  /* post-op and unlock running */
};

struct rep_eager {
    int state;             /* enum rep_eager_state */
    rep_mask_t txn;        /* children in the batch: locked, dirty +1,
                              no write of the batch failed on them */
    rep_mask_t locked;     /* children holding the batch's inodelk */
    uint64_t lk_owner;     /* owner of the batch's inodelk */
    unsigned n_inflight;   /* batch writes not answered yet */
    bool is_release_wanted; /* end the batch once n_inflight is 0 */
    uint64_t start_ms;     /* monotonic time the batch got its lock */
    vl_req_t *wait_head;   /* requests waiting for the batch to settle,
                              linked through rep_local.next */
    vl_req_t *wait_tail;
    vl_timer_t *timer;     /* post-op delay; owned until it runs */
    void *timer_arg;       /* the armed timer's argument (identifies
                              it: a timer whose arg is not this one is
                              stale when it runs) */
    vl_inode_t *self_ref;  /* ref on the inode while state != NONE */
    rep_mask_t good;       /* data children of txn no pre-op answer
                              blamed: whose answers go up, and with an
                              arbiter the copies a write must reach */
    bool is_dirty_kept;    /* a write of the batch reached fewer than
                              quorum: its end unlocks only (the copies
                              keep dirty, blaming nobody: rep-txn.c) */
};

/* Per inode (vl_inode_ctx; inode->lock). */
struct rep_inode_ctx {
    struct rep_eager eager; /* inode->lock */
    rep_mask_t readable;   /* children whose copy is known good */
    unsigned gen;          /* priv->event_gen when readable was computed */
    bool has_readable;     /* readable is set (a lookup or refresh ran) */
};

/* Per fd (vl_fd_ctx; fd->lock). */
struct rep_fd_ctx {
    rep_mask_t opened;     /* children where the open/create succeeded */
    int dir_child;         /* readdir: the child whose offsets the
                              caller holds, with has_dir_child */
    bool has_dir_child;    /* a listing started on dir_child */
    bool is_set;           /* opened is meaningful */
};

/* The attributes of one child's answer: what differs between copies in
 * the answers of a modifying fop or an open (rep_reply_pick_*). */
struct rep_attrs {
    struct vl_iatt iatt;
    struct vl_iatt postparent;
    struct vl_iatt postparent2;
    bool has_postparent;
    bool has_postparent2;
};

/* Per-child cookie of a fan-out: the parent request and the index. */
struct rep_cookie {
    vl_req_t *req;         /* borrowed: the request being served */
    unsigned idx;          /* child index */
};

/* What a transaction locks or marks. An inode transaction locks the
 * object (inodelk) and marks it; an entry transaction locks the names
 * (entrylk) and marks the parent directories. */
struct rep_txn_target {
    vl_inode_t *inode;     /* borrowed from the args: marked by xattrop */
    vl_inode_t *lk_parent; /* entry txn: directory of the locked name */
    const char *lk_name;   /* entry txn: the locked name */
    const char *mark_name; /* entry txn: the one name of the fop in inode,
                              recorded when a copy is blamed (granular
                              entry records); NULL with two (a rename
                              within one directory): posix marks the
                              directory's records full then */
};

#define REP_TXN_MAX_TARGETS 2

/* Per request (VL_REQ_PRIV): transactions, fan-outs and read retries.
 * Fields written by children callbacks are atomics or per-child slots. */
struct rep_local {
    vl_fanout_t fan;                 /* the current parallel phase */
    struct rep_cookie ck[REP_MAX_CHILDREN]; /* per child cookies */
    int status[REP_MAX_CHILDREN];    /* last phase's status per child */
    atomic_uint ok;                  /* children that answered 0 */
    atomic_bool has_reply;           /* a reply was moved into req */
    int kind;                        /* enum rep_kind of a transaction */
    bool is_entry;                   /* entry (entrylk) transaction */
    bool is_fd;                      /* children limited to the fd's */
    int phase;                       /* enum rep_txn_phase (rep-txn.c) */
    rep_mask_t all;                  /* every child */
    rep_mask_t txn;                  /* children in the transaction */
    rep_mask_t preop_ok;             /* children whose pre-op succeeded */
    rep_mask_t fop_ok;               /* children where the fop succeeded */
    atomic_uint bad;                 /* children that failed this phase */
    int first_err;                   /* first lock error, for the answer */
    unsigned n_targets;              /* marked objects (rename: 2) */
    struct rep_txn_target t[REP_TXN_MAX_TARGETS];
    unsigned n_lk;                   /* lock items (rename: 2) */
    struct rep_txn_target lk[REP_TXN_MAX_TARGETS]; /* lock items: inode
                                        (inodelk) or parent and name
                                        (entrylk), in locking order */
    rep_mask_t lk_held[REP_TXN_MAX_TARGETS]; /* children holding item i */
    unsigned lk_step;                /* serial locking: next (item,
                                        child) pair, item-major */
    struct rep_cookie lk_ck[REP_TXN_MAX_TARGETS * REP_MAX_CHILDREN];
                                     /* parallel try: idx = item * n +
                                        child */
    atomic_uint try_held[REP_TXN_MAX_TARGETS]; /* parallel try: granted */
    atomic_bool is_contended;        /* parallel try: one said EAGAIN */
    bool is_lock_retry;              /* unlocking after a contended try:
                                        lock serially next */
    uint64_t lk_owner;               /* owner of this transaction's locks */
    int result;                      /* status to answer */
    /* xattrop arguments (borrowed by the children until they answer) */
    const char *x_names[REP_MAX_CHILDREN + 1];
    const void *x_values[REP_MAX_CHILDREN + 1];
    uint32_t x_sizes[REP_MAX_CHILDREN + 1];
    bool is_x_blaming;     /* the prepared xattrop raises a pending slot */
    uint8_t x_buf[REP_MAX_CHILDREN + 1][REP_RECORD_SIZE];
    /* reads */
    rep_mask_t tried;                /* read children already tried */
    int read_child;                  /* child the read went to */
    vl_req_t *next;                  /* eager: next waiting request */
    bool is_eager_acquire;           /* this write takes a batch's lock */
    bool is_eager_member;            /* this write runs inside a batch */
    bool is_eager_release;           /* this carrier ends a batch */
    bool is_reopened;                /* the fd was opened on the children
                                        that came up after its open */
    vl_fd_t *reopen_fd;              /* borrowed from the args: reopening */
    void (*reopen_cont)(vl_xlator_t *xl, vl_req_t *req); /* after it */
    atomic_uint preop_blamed;        /* children of the transaction a
                                        pre-op answer blames */
    atomic_uint preop_blamed_kind;   /* the same, for the transaction's
                                        kind only */
    bool has_probe;                  /* the pre-op asked every copy
                                        whom it blames (preop_blamed is
                                        meaningful) */
    rep_mask_t good;                 /* data children of the transaction
                                        whose copies are good: no pre-op
                                        answer blames them (set after
                                        the pre-op; an eager write: the
                                        batch's) */
    rep_mask_t reply_pick;           /* the child (one bit, 0: none)
                                        whose attributes the answer
                                        carries: a copy known good */
    bool has_reply_attrs;            /* reply_attrs holds its answer's
                                        (written by its callback only) */
    struct rep_attrs reply_attrs;    /* reply_pick's attributes */
    void *inspect;                   /* owned struct rep_inspect while a
                                        lookup or refresh runs */
    /* compound requests: per marked object (target), the lock item
     * whose try carries its pre-op and whose release its post-op
     * carries (rep_txn_target_item): */
    bool is_cpd;                     /* the lock tries carry the pre-op */
    struct vl_xattrop_args cpd_xop[REP_TXN_MAX_TARGETS]; /* per target:
                                        its pre-op (borrowed by the lock
                                        requests until they answer) */
    uint32_t cpd_n_keys;             /* their keys (x_names...) */
    struct vl_xattrop_unlock cpd_unlock[REP_TXN_MAX_TARGETS]; /* per
                                        target: what its post-op
                                        releases */
    atomic_uint cpd_done[REP_TXN_MAX_TARGETS]; /* per target: children
                                        whose carried pre-op applied */
    atomic_uint cpd_bad[REP_TXN_MAX_TARGETS];  /* ... that failed (the
                                        lock granted) */
    atomic_uint cpd_unlocked[REP_TXN_MAX_TARGETS]; /* per target:
                                        children its post-op unlocked */
    rep_mask_t undo_part[REP_TXN_MAX_TARGETS]; /* a carried pre-op
                                        undone: per target, children
                                        beyond preop_ok that took it (the
                                        other target's lock failed) */
    rep_mask_t preop_blame;          /* children the pre-op as sent
                                        raised a pending count for */
    atomic_uint moved_other;         /* rename: children that answered
                                        having moved another object than
                                        oldloc.inode (rep-entry.c) */
    char *detached_names;            /* a detached post-op's carrier:
                                        owned copies of the lock names
                                        (its inodes are refs) */
    bool is_detached;                /* this carrier runs the post-op of
                                        an entry fop already answered */
};

/* ---- rep.c ---- */
static inline struct rep_priv *
rep_priv(vl_xlator_t *xl)
{
    return xl->priv;
}

static inline unsigned
rep_popcount(rep_mask_t m)
{
    return (unsigned)__builtin_popcount(m);
}

rep_mask_t rep_up_mask(vl_xlator_t *xl);

/* Is child i the arbiter (features/arbiter on its brick: names,
 * attributes, xattrs and records, no data)? Never a source of data, for
 * reads or for heal (doc/replicate.md "Arbiter"). */
static inline bool
rep_child_is_arbiter(vl_xlator_t *xl, unsigned i)
{
    return (rep_priv(xl)->arbiter & (1u << i)) != 0;
}

/* The children of mask that hold data (all of them without an arbiter). */
static inline rep_mask_t
rep_data_children(vl_xlator_t *xl, rep_mask_t mask)
{
    return mask & ~rep_priv(xl)->arbiter;
}
/* Does this set of children satisfy the configured quorum? */
bool rep_has_quorum(vl_xlator_t *xl, rep_mask_t mask);
struct rep_inode_ctx *rep_ictx(vl_xlator_t *xl, vl_inode_t *inode);
struct rep_fd_ctx *rep_fctx(vl_xlator_t *xl, vl_fd_t *fd);
/* The children an fd was opened on (all children for an fd not opened
 * through replicate, e.g. before a graph switch). */
rep_mask_t rep_fd_opened(vl_xlator_t *xl, vl_fd_t *fd);
void rep_fd_set_opened(vl_xlator_t *xl, vl_fd_t *fd, rep_mask_t mask);
/* Up children a file's fd is not open on (down at its open, up now). */
rep_mask_t rep_fd_missing(vl_xlator_t *xl, vl_fd_t *fd);
/* Opens fd (a file's or a directory's) on the children of mask, adds
 * those that succeed to its opened set, then runs cont (never answers
 * req itself). */
void rep_fd_reopen(vl_xlator_t *xl, vl_req_t *req, vl_fd_t *fd,
                   rep_mask_t mask,
                   void (*cont)(vl_xlator_t *xl, vl_req_t *req));
/* The readable mask of an inode if it is current, else false. */
bool rep_inode_readable(vl_xlator_t *xl, vl_inode_t *inode,
                        rep_mask_t *out /* OUT */);
void rep_inode_set_readable(vl_xlator_t *xl, vl_inode_t *inode,
                            rep_mask_t mask, unsigned gen);
/* Drops the children of bad from an inode's readable mask (a fop failed
 * on them). */
void rep_inode_drop_readable(vl_xlator_t *xl, vl_inode_t *inode,
                             rep_mask_t bad);
/* The children last known good for inode, however old (0: never
 * known): a hint of whose answer to pass up, never a reason to read. */
rep_mask_t rep_inode_good_hint(vl_xlator_t *xl, vl_inode_t *inode);
/* The attributes an answer carries come from a copy known good (a stale
 * copy's size reaching the kernel cuts its reads short): a fan-out picks
 * one child of good (none if good is empty) before it winds, each
 * successful child's callback calls _arrive, and once all answered,
 * _apply puts the picked child's attributes in req's reply (if it
 * succeeded and req has a reply). */
void rep_reply_pick_begin(struct rep_local *local, rep_mask_t good);
void rep_reply_pick_arrive(struct rep_local *local, unsigned idx,
                           const vl_req_t *child);
void rep_reply_pick_apply(struct rep_local *local, vl_req_t *req);

/* ---- rep-txn.c ---- */
void rep_txn_inode(vl_xlator_t *xl, vl_req_t *req); /* rep-inode.c */
void rep_txn_entry(vl_xlator_t *xl, vl_req_t *req); /* entry fops */
/* Runs the transaction once rep-entry.c filled the lock and mark
 * targets. */
void rep_txn_entry_begin(vl_xlator_t *xl, vl_req_t *req);
/* rep-entry.c: a rename's success on child idx (before its reply is
 * moved); once all answered, _settle takes the children that moved
 * another object than the one meant (a stale copy of the old name's
 * directory) out of fop_ok, so the post-op blames them. */
void rep_entry_fop_arrive(vl_req_t *req, unsigned idx,
                          const vl_req_t *child);
void rep_entry_fop_settle(vl_xlator_t *xl, vl_req_t *req);
/* Big-endian int32 at i of a record. */
int32_t rep_record_get(const uint8_t *rec, unsigned i);
void rep_record_set(uint8_t *rec, unsigned i, int32_t v);

/* Starts an inode transaction on inode (local->kind set), through fd
 * when it is an fd fop (NULL otherwise). */
void rep_txn_inode_begin(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode,
                         vl_fd_t *fd);

/* ---- rep-cpd.c ---- */
/* The lock item whose try carries target t's pre-op and whose release
 * t's post-op carries, or -1; the target item k carries, or -1. */
int rep_cpd_target_item(const struct rep_local *local, unsigned t);
int rep_cpd_item_target(const struct rep_local *local, unsigned k);
/* Every target's pre-op can ride on a lock item of its own. */
bool rep_cpd_can_carry(const struct rep_local *local);
/* A try whose carried pre-ops must be undone: preop_ok, fop_ok and
 * undo_part set for the post-op that undoes them. */
void rep_cpd_undo_prepare(struct rep_local *local);
bool rep_cpd_any_done(struct rep_local *local);
rep_mask_t rep_cpd_any_bad(struct rep_local *local);
/* Per target: whether its post-op (is_postop) carries an unlock, and to
 * which children (cpd_unlock[t] filled). */
void rep_cpd_postop_unlocks(vl_xlator_t *xl, struct rep_local *local,
                            bool is_postop,
                            bool is_unlocking[REP_TXN_MAX_TARGETS],
                            rep_mask_t held[REP_TXN_MAX_TARGETS]);

/* ---- rep-eager.c ---- */
/* A private XATTROP op: the request replicate winds into itself to end a
 * batch (never sent to a child). */
#define REP_EAGER_RELEASE_OP 0x72657001u
/* Another: the carrier of an entry fop's post-op and unlock after its
 * answer (rep-txn.c, "the post-op after the answer"). */
#define REP_TXN_DETACHED_OP 0x72657002u
/* write with eager-lock on: joins or opens a batch; true if handled. */
bool rep_eager_write(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode);
/* A request that must not run inside a batch (flush, fsync, another
 * modifying fop of the inode): true if it was queued until the batch
 * ends (which it asks for). */
bool rep_eager_intercept(vl_xlator_t *xl, vl_req_t *req, vl_inode_t *inode);
/* The last ref of an fd of inode is gone (close): its batch ends. */
void rep_eager_fd_closed(vl_xlator_t *xl, vl_inode_t *inode);
/* Hooks of rep-txn.c. */
void rep_eager_acquired(vl_xlator_t *xl, vl_req_t *req);
void rep_eager_acquire_failed(vl_xlator_t *xl, vl_inode_t *inode);
void rep_eager_member_done(vl_xlator_t *xl, vl_req_t *req);
void rep_eager_member_finish(vl_xlator_t *xl, vl_req_t *req);
void rep_eager_release_run(vl_xlator_t *xl, vl_req_t *req);
void rep_eager_release_done(vl_xlator_t *xl, vl_req_t *req);
/* Phases of rep-txn.c the batch reuses. */
void rep_txn_postop_run(vl_xlator_t *xl, vl_req_t *req);
uint32_t rep_txn_records_fill(vl_xlator_t *xl, struct rep_local *local,
                              int dirty_delta, rep_mask_t blame,
                              int blame_delta);
void rep_txn_xattrop_to(vl_xlator_t *xl, vl_req_t *req, rep_mask_t mask,
                        uint32_t n_keys);
void rep_txn_fop_to(vl_xlator_t *xl, vl_req_t *req, rep_mask_t mask);
void rep_txn_begin_fd(vl_xlator_t *xl, vl_req_t *req, vl_fd_t *fd);

/* ---- rep-read.c ---- */
void rep_lookup(vl_xlator_t *xl, vl_req_t *req);
void rep_read_fop(vl_xlator_t *xl, vl_req_t *req); /* one good child */
void rep_readdir(vl_xlator_t *xl, vl_req_t *req);
/* Clears the attributes of readdirplus entries whose copy on child is not
 * known good. */
void rep_readdir_strip(vl_xlator_t *xl, vl_req_t *req, int child);
/* Which children of the answered set are good, from their records:
 * records[i] holds child i's n pending records (REP_RECORD_SIZE each, in
 * child order) followed by its dirty record. kinds is a mask of
 * (1 << enum rep_kind) counters that matter. Returns 0 (all blamed: a
 * split-brain) or the good children. */
rep_mask_t rep_compute_readable(unsigned n, rep_mask_t answered,
                                const uint8_t *const *records,
                                unsigned kinds);

/* ---- rep-arbiter.c ---- */
/* After the pre-op: false when no data child of it holds the good data
 * (local->good is empty: the change would be the arbiter's alone). */
bool rep_arb_preop_allows(vl_xlator_t *xl, vl_req_t *req);
/* After the fop: the answer, given that a success on the arbiter alone
 * (or on stale data copies only) is not one; may clear local->fop_ok. */
void rep_arb_fop_settle(vl_xlator_t *xl, struct rep_local *local);

/* ---- rep-fanout.c ---- */
void rep_open(vl_xlator_t *xl, vl_req_t *req);
void rep_opendir(vl_xlator_t *xl, vl_req_t *req);
/* flush, fsync: to every child the fd is open on */
void rep_fd_fanout(vl_xlator_t *xl, vl_req_t *req);
void rep_statfs(vl_xlator_t *xl, vl_req_t *req);
/* lk, inodelk, entrylk from above: serially on every up child */
void rep_lock_fop(vl_xlator_t *xl, vl_req_t *req);

#endif /* MORTAR_REP_H */
