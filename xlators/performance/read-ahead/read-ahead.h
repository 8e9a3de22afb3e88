/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * read-ahead: private types of performance/read-ahead. See read-ahead.c
 * for what the translator does and ra-page.c for the pages.
 */
#ifndef READ_AHEAD_H
#define READ_AHEAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vol/vol.h"

/* GlusterFS's page size; a kernel READ of 128 KiB (FUSE's default
 * max_readahead) is one page. */
#define RA_PAGE_SIZE (128 * 1024)
/* Most pages read ahead of one fd (GlusterFS's page-count range). */
#define RA_MAX_PAGE_COUNT 16
/* Reads in a row that continued the last one before pages are fetched:
 * a file read once from its start prefetches from its second read. */
#define RA_SEQ_READS 2

enum ra_mem_type {
    RA_MT_MISC = 0,
    RA_MT_PRIV,
    RA_MT_PAGE,
};

/* Options (xl->conf). */
struct ra_conf {
    uint64_t page_count;  /* pages fetched ahead of a sequential reader */
    uint64_t cache_limit; /* bytes of pages (held or in flight), all fds */
};

/* Per inode (vl_inode_ctx): the data's generation. Every change of the
 * file through this client (any fd or none) bumps it before it is wound
 * and again once it is answered; a page is served only while gen is the
 * one it was fetched under, so no page fetched before or during a change
 * is served after it. Atomic: read without any lock. */
struct ra_inode {
    atomic_uint_fast64_t gen;
};

enum ra_page_state {
    RA_PAGE_BUSY = 0, /* its READ is in flight */
    RA_PAGE_READY,    /* data holds len bytes from offset */
};

/* One page of one fd. In its file's list (guarded by fd->lock) unless
 * is_orphan. */
struct ra_page {
    struct ra_page *next;     /* next page of the file's list */
    struct ra_page *plan_next; /* prefetches to wind (ra_read only) */
    off_t offset;             /* multiple of RA_PAGE_SIZE */
    enum ra_page_state state; /* see above */
    bool is_orphan;           /* dropped while busy: its READ's answer
                                 frees it and serves nobody from it */
    uint64_t gen;             /* inode gen when its READ was issued */
    uint64_t epoch;           /* priv->epoch when its READ was issued */
    vl_buf_t *buf;            /* owned ref once ready; backs data */
    const char *data;         /* len bytes at offset, inside buf */
    size_t len;               /* bytes valid; < RA_PAGE_SIZE: file ends */
    struct vl_iatt iatt;      /* attributes the READ answered with */
    vl_req_t *waiters;        /* reads waiting for it (busy only);
                                 linked through struct ra_local.next */
    vl_fd_t *fd;              /* owned ref while busy, else NULL */
    vl_xlator_t *xl;          /* borrowed; this translator */
};

/* Per fd (vl_fd_ctx), every field guarded by fd->lock. Zero is the state
 * of a new fd: nothing read yet, a read from 0 continues it. */
struct ra_file {
    struct ra_page *pages; /* owned list, any order */
    uint32_t n_pages;      /* pages in the list */
    off_t expected;        /* where the current run of reads ends */
    uint32_t n_seq;        /* reads in the current run */
    bool has_eof;          /* a page ended short: eof_offset is the end */
    off_t eof_offset;      /* nothing is fetched at or past it */
};

/* Per request (VL_REQ_PRIV). */
struct ra_local {
    vl_req_t *next;      /* next read waiting on the same page */
    vl_inode_t *inode;   /* change fops: borrowed; the inode to bump */
};

/* Runtime state (xl->priv). */
struct ra_priv {
    atomic_uint_fast64_t epoch;       /* bumped when a brick says another
                                         client changed data */
    atomic_uint_fast64_t bytes;       /* RA_PAGE_SIZE per page alive */
    atomic_uint_fast64_t page_count;  /* copy of conf (reconfigure) */
    atomic_uint_fast64_t cache_limit; /* copy of conf (reconfigure) */
    atomic_uint_fast64_t hits;        /* reads answered from pages */
    atomic_uint_fast64_t waits;       /* of those and the misses: reads
                                         that waited for a page in flight */
    atomic_uint_fast64_t misses;      /* reads sent down */
    atomic_uint_fast64_t prefetches;  /* page READs sent */
    atomic_uint_fast64_t prefetch_bytes;  /* bytes they brought */
    atomic_uint_fast64_t prefetch_errors; /* of those, failed (not kept) */
    atomic_uint_fast64_t write_drops; /* pages dropped by a change */
    atomic_uint_fast64_t random_drops;/* pages dropped by a random read,
                                         flush or release unused */
    atomic_uint_fast64_t cap_skips;   /* prefetches not sent: cache-limit */
};

/* ra-page.c */

/* What ra_file_serve_locked did with a read. */
enum ra_serve {
    RA_SERVED, /* reply filled; answer the read with 0 */
    RA_WAIT,   /* queued on a page in flight; its answer resumes it */
    RA_MISS,   /* pages cannot answer it; send it down */
};

/* Drops every page of file fetched under another gen or epoch than now;
 * returns how many. Freed pages go to *dead (ra_pages_free after
 * unlock). */
uint32_t ra_file_check_locked(struct ra_file *file, uint64_t gen,
                              uint64_t epoch, struct ra_page **dead);
/* Drops the ready pages of file that end at or before `before`, or
 * every page with before < 0. */
uint32_t ra_file_drop_locked(struct ra_file *file, off_t before,
                             struct ra_page **dead);
/* Tries to answer req (a READ) from file's pages. */
enum ra_serve ra_file_serve_locked(struct ra_file *file, vl_req_t *req);
/* Pages the reader at file->expected wants fetched now: new busy pages,
 * in file's list and linked through plan_next, each with a ref on fd. */
struct ra_page *ra_file_plan_locked(vl_xlator_t *xl, struct ra_file *file,
                                    vl_fd_t *fd, uint64_t gen,
                                    uint64_t epoch);
/* Frees pages dropped by the calls above (linked through next). */
void ra_pages_free(vl_xlator_t *xl, struct ra_page *dead);
/* Winds the READ of every planned page; caller as the reader's. */
void ra_pages_fetch(vl_xlator_t *xl, struct ra_page *plan,
                    const struct vl_caller *caller);

/* read-ahead.c: a read that waited on a page goes on (served, waits on
 * the next page, or goes down). */
void ra_read_resume(vl_xlator_t *xl, vl_req_t *req);
/* The stamps pages of fd are checked against. */
uint64_t ra_gen_now(vl_xlator_t *xl, vl_fd_t *fd);

#endif /* READ_AHEAD_H */
