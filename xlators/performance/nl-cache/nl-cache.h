/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nl-cache: private types of performance/nl-cache (negative lookups
 * answered from directory leases). See nl-cache.c for what the
 * translator does and nlc-table.c for the table of directories.
 */
#ifndef NL_CACHE_H
#define NL_CACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vol/vol.h"

enum nlc_mem_type {
    NLC_MT_MISC = 0,
    NLC_MT_PRIV,
    NLC_MT_DIR,     /* struct nlc_dir */
    NLC_MT_NAME,    /* struct nlc_name */
    NLC_MT_BUCKETS, /* hash bucket arrays */
};

/* Options (xl->conf). */
struct nlc_conf {
    uint64_t limit;   /* bytes of records and names in total */
    uint64_t timeout; /* ms a lease is used after it was granted */
};

enum nlc_state {
    NLC_PENDING, /* our MKDIR of the directory is in flight */
    NLC_LEASED,  /* we hold a lease: the name set is complete */
};

/* One name known to exist in a leased directory. */
struct nlc_name {
    struct nlc_name *next; /* hash chain; owned by the dir's table */
    uint32_t hash;         /* nlc_name_hash(name) */
    size_t len;            /* strlen(name) */
    char name[];           /* NUL-terminated copy */
};

/* One directory we asked (PENDING) or hold (LEASED) a lease on. Every
 * field is guarded by priv->lock. */
struct nlc_dir {
    vl_gfid_t gfid;          /* the directory; the table's key */
    uint64_t id;             /* unique per record, never reused: answers
                                find their record again by it, not by a
                                pointer that eviction may have freed */
    enum nlc_state state;    /* see above */
    bool is_broken;          /* PENDING: a break came before the mkdir's
                                answer, so it must never become LEASED */
    uint64_t epoch;          /* priv->epoch when the record was made */
    uint64_t grant_ms;       /* nlc_now_ms() when it became LEASED */
    uint32_t n_inflight;     /* entry fops in flight with it as parent */
    uint64_t n_changes;      /* entry fops started or finished in it: a
                                LOOKUP answer is checked against the set
                                only if none did while it was below */
    struct nlc_name **names; /* owned bucket array, NULL while empty */
    size_t n_buckets;        /* entries in names (a power of two) */
    size_t n_names;          /* names in the set */
    size_t charge;           /* bytes counted against limit */
    struct nlc_dir *next;    /* hash chain in priv->dirs */
    struct nlc_dir *lru_prev; /* towards the most recently used */
    struct nlc_dir *lru_next; /* towards the next to evict */
};

/* Runtime state (xl->priv). */
struct nlc_priv {
    pthread_mutex_t lock;       /* guards every record and every field
                                   below but the atomic counters */
    struct nlc_dir **dirs;      /* owned bucket array of records */
    size_t n_buckets;           /* entries in dirs (a power of two) */
    size_t n_dirs;              /* records */
    size_t n_leased;            /* of those, LEASED */
    size_t n_names;             /* names in every set */
    uint64_t bytes;             /* sum of charge over records */
    struct nlc_dir *lru_head;   /* most recently used */
    struct nlc_dir *lru_tail;   /* evicted first */
    uint64_t epoch;             /* bumped when every lease is gone */
    uint64_t next_id;           /* id of the next record */
    uint64_t limit;             /* copy of conf (reconfigure under lock) */
    uint64_t timeout_ms;        /* copy of conf */
    atomic_uint_fast64_t hits;         /* lookups answered ENOENT here */
    atomic_uint_fast64_t misses;       /* lookups in a recorded directory
                                          sent down */
    atomic_uint_fast64_t breaks;       /* upcalls received */
    atomic_uint_fast64_t inconsistent; /* records dropped because a lookup
                                          disagreed with the set */
    atomic_uint_fast64_t failures;     /* records dropped because an entry
                                          fop in them failed */
    atomic_uint_fast64_t expired;      /* leases dropped after timeout */
    atomic_uint_fast64_t evictions;    /* records dropped for space */
};

/* nlc-table.c. Every _locked function needs priv->lock held. */
uint64_t nlc_now_ms(void);
/* Test hook: a clock that reads ms from now on (0: the real one). */
void nlc_test_clock_set(uint64_t ms);
int nlc_table_init(struct nlc_priv *priv);
/* Frees every record and the bucket array. */
void nlc_table_clear(struct nlc_priv *priv);
struct nlc_dir *nlc_dir_find_locked(struct nlc_priv *priv,
                                    const vl_gfid_t *gfid);
/* The record for gfid if it is the one with this id, else NULL. */
struct nlc_dir *nlc_dir_find_id_locked(struct nlc_priv *priv,
                                       const vl_gfid_t *gfid, uint64_t id);
/* A new PENDING record for gfid (replacing any old one), or NULL on
 * ENOMEM. */
struct nlc_dir *nlc_dir_new_locked(vl_xlator_t *xl, struct nlc_priv *priv,
                                   const vl_gfid_t *gfid);
void nlc_dir_drop_locked(struct nlc_priv *priv, struct nlc_dir *dir);
void nlc_dir_set_leased_locked(struct nlc_priv *priv, struct nlc_dir *dir,
                               uint64_t now_ms);
/* Marks dir most recently used. */
void nlc_dir_touch_locked(struct nlc_priv *priv, struct nlc_dir *dir);
bool nlc_name_has_locked(const struct nlc_dir *dir, const char *name);
/* Adds name to dir's set (no-op if there); 0 or -ENOMEM. */
int nlc_name_add_locked(vl_xlator_t *xl, struct nlc_priv *priv,
                        struct nlc_dir *dir, const char *name);
void nlc_name_del_locked(struct nlc_priv *priv, struct nlc_dir *dir,
                         const char *name);
/* Drops every record (every lease is gone). */
void nlc_purge_locked(struct nlc_priv *priv);
/* Evicts least recently used records until bytes fit limit. */
void nlc_shrink_locked(struct nlc_priv *priv);

#endif /* NL_CACHE_H */
