/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-heal.h: the self-heal of one object (rep-heal*.c; doc/replicate.md
 * "Self-heal"). A heal runs on a thread of its own and talks to the
 * children with blocking calls (vl_sync_call), so each step reads as a
 * sequence; it never runs on an event loop thread.
 */
#ifndef MORTAR_REP_HEAL_H
#define MORTAR_REP_HEAL_H

#include "rep.h"

/* Bytes copied per step of a data heal, under a lock of that range
 * (RCHECKSUM's longest range, VL_RCHECKSUM_LEN_MAX, at most). */
#define REP_HEAL_CHUNK (4 * 1024 * 1024)
/* A file up to this size is copied under the whole-file lock the heal
 * already holds, in one step (rep-heal-data.c). */
#define REP_HEAL_ONE_STEP (1024 * 1024)

/* What the records say about one kind of an object. */
enum rep_heal_verdict {
    REP_HV_CLEAN = 0, /* no blame, no dirty */
    REP_HV_NEEDED,    /* sources blame sinks */
    REP_HV_COMPARE,   /* dirty without blame: compare the copies */
    REP_HV_SPLIT,     /* every copy blamed by another: never guessed */
    REP_HV_WAIT,      /* a copy is down and the up copies' records do
                         not prove a source (all of them blamed, or
                         dirty without blame): healed once it is back */
};

/* How a heal ended (the answer of the mortar.heal key). */
enum rep_heal_result {
    REP_HR_CLEAN = 0,  /* "clean": the copies already agreed */
    REP_HR_HEALED,     /* "healed" */
    REP_HR_SPLIT,      /* "split-brain" */
    REP_HR_PENDING,    /* "pending": a copy is down or missing */
    REP_HR_FAILED,     /* an error: records left as they were */
};

/* How a split-brain is resolved (rep-heal-split.c): the values of the
 * favorite-child-policy option in its order, then the resolve keys'
 * rules that are not a policy. */
enum rep_heal_rule {
    REP_RULE_NONE = 0, /* left alone */
    REP_RULE_SIZE,     /* the largest file (data only) */
    REP_RULE_CTIME,    /* the newest ctime (data, metadata) */
    REP_RULE_MTIME,    /* the newest mtime (data, metadata) */
    REP_RULE_MAJORITY, /* the one copy most copies do not blame (data,
                          metadata) */
    REP_RULE_SOURCE,   /* a named child (every kind) */
};

/* What a heal is asked to do beyond healing, and what it did. */
struct rep_heal_opts {
    bool is_full;         /* mortar.heal.full: merge a directory whose
                             records blame nothing */
    bool is_resolve_only; /* a resolve key: touch only the kinds in
                             split-brain */
    int rule;             /* enum rep_heal_rule for split-brains; NONE:
                             the favorite-child-policy option's */
    int rule_child;       /* REP_RULE_SOURCE: that child */
    const char *name;     /* a resolve key for one name of the directory
                             ("<rule>/<name>"): that name's GFID
                             split-brain only; borrowed from the key */
    unsigned resolved;    /* OUT: kinds whose split-brain was resolved */
    unsigned ambiguous;   /* OUT: kinds the rule could not decide (a tie) */
    int err;              /* OUT: why the heal failed (-errno), 0: EIO */
};

/* One heal of one object; lives on the heal thread's stack. */
struct rep_heal {
    vl_xlator_t *xl;
    vl_inode_t *inode;     /* borrowed from the heal job */
    uint64_t lk_owner;     /* owner of this heal's locks */
    unsigned n;            /* children */
    rep_mask_t up;         /* the children taking part: those up when
                              the heal began (at least two) */
    rep_mask_t down;       /* the others: their records are unknown and
                              stay; the up copies' blame of them too */
    rep_mask_t sources;    /* of the kind being healed */
    rep_mask_t sinks;
    int src;               /* the source copies are read from */
    struct vl_iatt ia[REP_MAX_CHILDREN]; /* attributes per copy */
    /* records per copy: n slots then dirty, REP_RECORD_SIZE each */
    uint8_t rec[REP_MAX_CHILDREN][(REP_MAX_CHILDREN + 1) * REP_RECORD_SIZE];
    bool is_rec_fresh;     /* rec is what the up copies hold now: read
                              under the lock of the kind being healed,
                              which was held since, and this heal's own
                              writes of the object's records followed in
                              rec; rep_heal_records_clear then reads
                              nothing again (the data and metadata
                              heals set it, records_read resets it) */
    uint64_t bytes;        /* data copied */
    uint64_t entries;      /* names created or removed */
    uint64_t granular;     /* names visited from granular records (an
                              entry heal that did not list the directory) */
    bool is_listed;        /* an entry heal listed the whole directory */
    struct rep_heal_opts *opts; /* borrowed from the job: never NULL */
    int rule;              /* the rule split-brains meet in this heal */
    bool is_partial;       /* a resolve key left a blamed kind unhealed:
                              the copies are not all good afterwards */
    struct vl_iatt name_keep; /* a name's resolve key: the object its
                                 check chose (rep-heal-entry.c) */
};

/* ---- rep-heal.c ---- */
/* Sources and sinks of kind from the records of the copies in present
 * (records[i]: n slot records then dirty, as rep_compute_readable). */
enum rep_heal_verdict rep_heal_pick(unsigned n, rep_mask_t present,
                                    const uint8_t *const *records,
                                    unsigned kind,
                                    rep_mask_t *sources /* OUT */,
                                    rep_mask_t *sinks /* OUT */);
/* Lookup saw these records (rep-read.c): a background heal of inode if
 * some copy blames another for an enabled kind and the bound allows. */
void rep_heal_on_lookup(vl_xlator_t *xl, vl_inode_t *inode,
                        rep_mask_t answered, const uint8_t *const *records);
/* A named lookup found some up copies of its parent directory not good
 * (blamed): a background heal of the directory, bounded the same way
 * (the directory itself may never be looked up again: the root). */
void rep_heal_parent_hint(vl_xlator_t *xl, vl_inode_t *dir);
/* GETXATTR: the mortar.heal key heals now; others are reads. */
void rep_heal_getxattr(vl_xlator_t *xl, vl_req_t *req);
int rep_heal_init(vl_xlator_t *xl);
void rep_heal_stop(vl_xlator_t *xl);   /* waits for running heals */
void rep_heal_fini(vl_xlator_t *xl);
void rep_heal_dump(vl_xlator_t *xl, FILE *out);

/* Steps the kinds share (rep-heal.c). */
int rep_heal_call(struct rep_heal *h, unsigned child, vl_fop_t op,
                  const union vl_fop_args *args, struct vl_reply *reply);
/* The same as the caller uid/gid (the owner of a new object). */
int rep_heal_call_as(struct rep_heal *h, unsigned child, vl_fop_t op,
                     const union vl_fop_args *args, struct vl_reply *reply,
                     uint32_t uid, uint32_t gid);
/* inodelk of [start, start + len) (len 0: to the end) on every child, in
 * child order, waiting; all or none (then -errno). unlock: give back. */
int rep_heal_inodelk(struct rep_heal *h, int64_t start, int64_t len);
void rep_heal_inodeunlk(struct rep_heal *h, int64_t start, int64_t len);
int rep_heal_entrylk(struct rep_heal *h);
void rep_heal_entryunlk(struct rep_heal *h);
/* rep_heal_inodelk of the whole file, each lock carrying the read of
 * that copy's records into h->rec (one round trip a copy; a brick
 * without the compound gets an xattrop of its own); all or none. Sets
 * h->is_rec_fresh. */
int rep_heal_inodelk_records(struct rep_heal *h);
/* Reads every copy's records into h->rec (xattrop of zeros). */
int rep_heal_records_read(struct rep_heal *h, vl_inode_t *inode);
/* The throttle of heal writes (cluster.heal-max-rate): a write of n
 * bytes at now_ns, with the earliest start the throttle allows next in
 * *next_ns, may start after the returned ns (0: at once); *next_ns moves
 * on by n bytes at rate bytes/s. rate 0: no limit. */
uint64_t rep_heal_rate_wait(uint64_t *next_ns, uint64_t now_ns, uint64_t n,
                            uint64_t rate);
/* Waits as rep_heal_rate_wait says for a write of n bytes by h. */
void rep_heal_throttle(struct rep_heal *h, uint64_t n);
/* Picks for kind from h->rec into h->sources/sinks/src. */
enum rep_heal_verdict rep_heal_decide(struct rep_heal *h, unsigned kind);
/* Dirty without blame, copies differ: src is the source, the others
 * are marked blamed by it for kind (on disk and in h->rec). */
int rep_heal_mark_sinks(struct rep_heal *h, vl_inode_t *inode,
                        unsigned kind);
/* Subtracts what h->rec holds for kind: the sinks' slots on every copy,
 * every slot on the sinks, and dirty everywhere. */
int rep_heal_records_clear(struct rep_heal *h, vl_inode_t *inode,
                           unsigned kind);
/* rep_heal_records_clear of h->inode, then the whole-file inodelk given
 * back on every up copy, carried by the clearing xattrops where there
 * are some (one round trip for both); the lock is released whatever the
 * result. */
int rep_heal_records_clear_unlock(struct rep_heal *h, unsigned kind);
/* Adds vals (n slot records then dirty; NULL: zeros) to the records of
 * inode's copy on child; out (NULL: not wanted) gets the new values. */
int rep_heal_records_add(struct rep_heal *h, unsigned child,
                         vl_inode_t *inode,
                         const uint8_t (*vals)[REP_RECORD_SIZE],
                         uint8_t *out);
/* source blames every slot of blame for the kinds (a new entry). */
int rep_heal_blame(struct rep_heal *h, unsigned source, vl_inode_t *inode,
                   rep_mask_t blame, unsigned kinds);
bool rep_heal_is_stopping(vl_xlator_t *xl);
/* Attributes of inode's copy on child (a nameless lookup). */
int rep_heal_stat(struct rep_heal *h, unsigned child, vl_inode_t *inode,
                  struct vl_iatt *out);

/* ---- rep-heal-split.c ---- */
/* Called by each kind's heal right after rep_heal_decide, under the
 * kind's lock: a split-brain meets h->rule (resolved: *v is the new
 * verdict, the chosen copy the source). Returns 0 to go on with *v, 1
 * when a resolve key has nothing to do for this kind (answer clean),
 * or -errno. */
int rep_heal_split(struct rep_heal *h, unsigned kind,
                   enum rep_heal_verdict *v /* IN/OUT */);
/* A name of h->inode with another GFID or type on some copies of cand
 * (ia[i]: the attributes of copy i's object of that name): the copy
 * whose object rule keeps (*chosen), REP_NAME_TIE when the rule finds no
 * single one, REP_NAME_UNCOVERED when it does not apply (a directory
 * among them: source-brick only; size: regular files only). Logs the
 * choice. 0, or -EINVAL (source-brick names the arbiter). */
#define REP_NAME_TIE (-1)
#define REP_NAME_UNCOVERED (-2)
int rep_heal_split_name(struct rep_heal *h, const char *name,
                        const struct vl_iatt *const *ia, rep_mask_t cand,
                        int rule, int rule_child, int *chosen /* OUT */);
/* The rule of a resolve key's name after REP_XATTR_RESOLVE ("bigger-file",
 * "latest-mtime", "source-brick.<child>"), with "/<name>" for one name
 * of a directory (out->name points into key): 0, or -EINVAL. */
int rep_heal_rule_parse(vl_xlator_t *xl, const char *name,
                        struct rep_heal_opts *out /* OUT */);

/* ---- rep-heal-meta.c, rep-heal-data.c, rep-heal-entry.c ---- */
enum rep_heal_result rep_heal_metadata(struct rep_heal *h);
enum rep_heal_result rep_heal_data(struct rep_heal *h);
enum rep_heal_result rep_heal_entry(struct rep_heal *h);

#endif /* MORTAR_REP_HEAL_H */
