/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-readdir.h: private interface between dist-readdir.c (opendir, the
 * fill of a readdir reply) and dist-rdcache.c (the per-fd cache of brick
 * answers and the readdirs that fill it).
 */
#ifndef MORTAR_DIST_READDIR_H
#define MORTAR_DIST_READDIR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dist.h"

/* What a brick is asked for at least per readdir (its budget, bytes of
 * FUSE records): enough for a typical directory in one round. */
#define DIST_RD_BATCH (32 * 1024)
/* ... and at most, whatever the caller's buffer: the cache keeps up to
 * two batches per brick per open directory. */
#define DIST_RD_BATCH_MAX (128 * 1024)
/* With content asked for (quick-read), which counts in a brick's budget:
 * what a brick is asked for at least, so that a typical directory of
 * small files still comes in one round. */
#define DIST_RD_BATCH_CONTENT (256 * 1024)

/* One brick's answer to one readdir: immutable once made, shared by the
 * cache slot and the fills reading it. */
struct dist_rd_batch {
    atomic_int refs;            /* freed when it drops to 0 */
    int64_t from;               /* brick cookie it was read after */
    struct vl_dirent_list list; /* owned; as the brick gave it (eof too) */
    vl_buf_t *buf;              /* owned ref, or NULL: backs the entries'
                                   content (content_off) */
};

/* The state of one readdir being answered. On the caller's stack while it
 * runs; copied to the heap when it must wait for a brick. */
struct dist_rd_fill {
    struct dist_rd_fill *next;  /* (fd->lock) link in a slot's waiters */
    vl_xlator_t *xl;            /* borrowed; distribute */
    vl_req_t *req;              /* borrowed; the readdir it answers */
    dist_mask_t opened;         /* subvolumes the opendir opened */
    int first;                  /* lowest opened: lists directories */
    unsigned idx;               /* subvolume being read */
    int64_t boff;               /* its cookie to continue after */
    size_t used;                /* bytes of the caller's buffer filled */
    size_t content_used;        /* bytes of req->reply.buf holding the
                                   entries' content (copied from batches) */
    bool is_heap;               /* allocated: freed once answered */
};

struct dist_rd_cache;

/* The fd's cache, made on first use; NULL on ENOMEM. */
struct dist_rd_cache *dist_rd_cache_get(vl_xlator_t *xl, vl_fd_t *fd);
/* A listing starts again (readdir at offset 0 after an answer): drops the
 * batches not being read. The first readdir after opendir keeps them,
 * unless is_forced (they were read without the content now asked for). */
void dist_rd_cache_rewind(struct dist_rd_cache *cache, bool is_forced);
/* A ref on a batch of subvolume idx holding what follows cookie boff, and
 * in *pos the index of its first entry after boff; NULL if none. */
struct dist_rd_batch *dist_rd_cache_find(struct dist_rd_cache *cache,
                                         unsigned idx, int64_t boff,
                                         size_t *pos /* OUT */);
/* Whether batch holds what follows boff; *pos as above. */
bool dist_rd_batch_match(const struct dist_rd_batch *batch, int64_t boff,
                         size_t *pos /* OUT */);
void dist_rd_batch_unref(struct dist_rd_batch *batch);
/* Forgets subvolume idx's batch (the listing moved past it). */
void dist_rd_cache_drop(struct dist_rd_cache *cache, unsigned idx);
/* The kind of listing the fd's readdirs now ask for: the reads that
 * follow ask the bricks for attributes or names only alike. is_start: a
 * readdir at offset 0, whose kind the next opendirs follow. */
void dist_rd_cache_mode_set(struct dist_rd_cache *cache, bool is_plus,
                            bool is_start);
/* Whether the fd's reads ask for names only now. */
bool dist_rd_cache_is_names_only(struct dist_rd_cache *cache);
/* Whether the last listing from offset 0 asked for names only. */
bool dist_rd_names_only_hint(vl_xlator_t *xl);
/* Notes that a readdir was answered from this fd. */
void dist_rd_cache_answered(struct dist_rd_cache *cache);
/* Reads subvolume idx after cookie from (size: budget) in the background
 * unless a read of it is in flight; on behalf of caller. */
/* Puts the first batch of subvolume idx that came with its opendir
 * (r->reply.has_listing; entries and buf are moved out of r) into the
 * cache, as a read at cookie 0 would: no read of it is needed. */
void dist_rd_seed(struct dist_rd_cache *cache, unsigned idx, vl_req_t *r);
void dist_rd_prefetch(struct dist_rd_cache *cache, unsigned idx,
                      int64_t from, size_t size,
                      const struct vl_caller *caller);
/* Makes f (on the heap) wait for subvolume f->idx after f->boff: reads it
 * unless a read is in flight, and also the opened subvolumes after it
 * that have nothing cached (from their start). f is resumed with
 * dist_rd_fill_resume once the read lands. */
void dist_rd_wait(struct dist_rd_cache *cache, struct dist_rd_fill *f,
                  size_t size);

/* Makes f (on the heap) wait for the read of subvolume f->idx after
 * f->boff if one is in flight (true); false, and nothing done, if not. */
bool dist_rd_wait_busy(struct dist_rd_cache *cache, struct dist_rd_fill *f);

/* The content_max the last readdirplus through xl's graph asked for (the
 * reads opendir starts ask for it too); _set: notes it. */
uint32_t dist_rd_content_hint(vl_xlator_t *xl);
void dist_rd_content_hint_set(vl_xlator_t *xl, uint32_t content_max);

/* dist-readdir.c: continues a waiting fill once a read of its subvolume
 * from cookie from landed: batch (may be NULL) is what it read, status
 * its result. */
void dist_rd_fill_resume(struct dist_rd_fill *f, struct dist_rd_batch *batch,
                         int64_t from, int status);

#endif /* MORTAR_DIST_READDIR_H */
