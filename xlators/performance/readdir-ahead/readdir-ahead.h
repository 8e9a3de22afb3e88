/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * readdir-ahead: private types of performance/readdir-ahead. See
 * readdir-ahead.c for what the translator does.
 */
#ifndef READDIR_AHEAD_H
#define READDIR_AHEAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vol/vol.h"

enum rda_mem_type {
    RDA_MT_MISC = 0,
    RDA_MT_PRIV,
};

/* Options (xl->conf). */
struct rda_conf {
    uint64_t request_size; /* reply budget of one prefetch, bytes */
    uint64_t cache_limit;  /* bytes of cached entries, all fds */
    uint64_t low_wmark;    /* an fd's cached records below this: refill */
    uint64_t high_wmark;   /* ... and keep fetching up to this */
};

/* Per directory inode (vl_inode_ctx): bumped before and after every
 * change of the directory's names through this client. Atomic. */
struct rda_inode {
    atomic_uint_fast64_t gen;
};

/* What a stream's entries were fetched under; served only while all
 * three are still current (attr_epoch only matters with plus). */
struct rda_stamp {
    uint64_t gen;        /* the directory's rda_inode.gen */
    uint64_t attr_epoch; /* priv->attr_epoch */
    uint64_t all_epoch;  /* priv->all_epoch */
};

/* Per fd (vl_fd_ctx), every field guarded by fd->lock. Zero is the state
 * of a new fd: no stream. */
struct rda_fd {
    bool has_stream;          /* a sequential listing is under way */
    bool is_plus;             /* its kind: entries carry attributes */
    uint32_t stream_id;       /* bumped when the stream is dropped: a
                                 prefetch of an older one keeps nothing */
    struct rda_stamp stamp;   /* what the stream's entries were read under */
    int64_t expected;         /* cookie the next readdir should carry */
    int64_t fetch_off;        /* cookie the next prefetch reads after */
    struct vl_dirent_list cache; /* owned entries; ents[head..n) unread */
    size_t head;              /* first unread entry of cache */
    uint64_t cached_cost;     /* FUSE record bytes of the unread entries */
    uint64_t mem;             /* bytes counted in priv->bytes */
    bool is_eof;              /* the tail of cache is the directory's end */
    bool is_busy;             /* a prefetch of stream_id is in flight */
    vl_req_t *waiter;         /* a readdir waiting for that prefetch */
};

/* Per request (VL_REQ_PRIV). */
struct rda_local {
    vl_inode_t *dir1;    /* change fops: borrowed; directory to bump */
    vl_inode_t *dir2;    /* rename: the other directory */
    bool is_ns;          /* a change of names (else attributes only) */
    uint32_t stream_id;  /* readdir sent down: its stream */
};

/* Runtime state (xl->priv). */
struct rda_priv {
    atomic_uint_fast64_t attr_epoch;  /* some object's attributes changed */
    atomic_uint_fast64_t all_epoch;   /* anything may have changed */
    atomic_uint_fast64_t bytes;       /* cached entries, all fds */
    atomic_uint_fast64_t request_size; /* copies of conf (reconfigure) */
    atomic_uint_fast64_t cache_limit;
    atomic_uint_fast64_t low_wmark;
    atomic_uint_fast64_t high_wmark;
    atomic_uint_fast64_t hits;        /* readdirs answered from the cache */
    atomic_uint_fast64_t misses;      /* readdirs sent down */
    atomic_uint_fast64_t waits;       /* readdirs that waited a prefetch */
    atomic_uint_fast64_t prefetches;  /* prefetch READDIRs sent */
    atomic_uint_fast64_t prefetch_entries; /* entries they brought */
    atomic_uint_fast64_t prefetch_errors;  /* failed ones (nothing kept) */
    atomic_uint_fast64_t inval_drops; /* streams dropped by a change */
    atomic_uint_fast64_t seek_drops;  /* streams dropped by a seek */
    atomic_uint_fast64_t cap_skips;   /* prefetches not sent: cache-limit */
};

#endif /* READDIR_AHEAD_H */
