/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * quick-read: private types of performance/quick-read (content cache and
 * open-behind). See quick-read.c for what the translator does.
 */
#ifndef QUICK_READ_H
#define QUICK_READ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vol/vol.h"

/* readdirplus content (qr_rdp_wanted): asked for only on behalf of a
 * process that lately (QR_RDP_READER_MS) opened a small file from a copy
 * here; QR_RDP_READERS such processes are remembered. A process that
 * only lists (ls -lR, find) never makes the bricks read file contents;
 * one that lists and reads (a script, grep -r, a build) gets them from
 * its second directory on. */
#define QR_RDP_READERS 32
#define QR_RDP_READER_MS 5000

enum qr_mem_type {
    QR_MT_MISC = 0,
    QR_MT_PRIV,
};

/* Options (xl->conf). */
struct qr_conf {
    bool is_open_behind;     /* answer read-only opens of cached files */
    uint64_t cache_timeout;  /* ms a copy is served after its validation */
    uint64_t max_file_size;  /* bytes; larger files are not cached */
    uint64_t cache_size;     /* bytes of content cached in total */
    uint64_t readdirp_content; /* bytes; readdirplus fetches the content
                                  of files up to this size (and up to
                                  max_file_size); 0: none */
};

/* Per inode (vl_inode_ctx). Every field is guarded by priv->lock, not
 * inode->lock: the LRU list crosses inodes. */
struct qr_inode {
    vl_buf_t *buf;           /* owned ref backing data; NULL: none cached */
    const char *data;        /* the content, len bytes, inside buf */
    size_t len;              /* content bytes */
    size_t charge;           /* bytes counted against cache-size */
    struct vl_iatt iatt;     /* attributes the content came with */
    uint64_t validated_ms;   /* last lookup/stat that confirmed iatt */
    bool is_large;           /* the last attributes seen said the file is
                                larger than max-file-size */
    bool is_rdp_unread;      /* the copy came with a readdirplus and no
                                open has used it yet */
    /* Open-behind and the file's last name (qr-unlink.c). */
    uint32_t n_lazy;         /* fds answered here and not opened below
                                yet (struct qr_fd.is_counted) */
    vl_fd_t *keeper;         /* owned; opened below so that the brick
                                keeps the file after an unlink or rename
                                over it, while n_lazy > 0; else NULL */
    bool is_keeper_opening;  /* the keeper's OPEN is in flight */
    vl_req_t *keeper_wait;   /* unlinks and renames waiting for it;
                                linked through struct qr_local.next */
    struct qr_inode *prev;   /* LRU neighbours while buf != NULL */
    struct qr_inode *next;
};

/* Open-behind state of an fd (vl_fd_ctx), guarded by fd->lock. Zero (an
 * fd opened by the children, or not a file of ours) passes through. */
enum qr_fd_state {
    QR_FD_REAL = 0, /* opened below (or never ours): pass fops down */
    QR_FD_LAZY,     /* OPEN answered here; nothing opened below */
    QR_FD_OPENING,  /* the real OPEN is in flight; fops wait in queue */
    QR_FD_FAILED,   /* the real OPEN failed with status */
};

struct qr_fd {
    enum qr_fd_state state;  /* see above */
    bool is_counted;         /* in its inode's n_lazy (and priv's) */
    int status;              /* with QR_FD_FAILED: the open's error */
    vl_req_t *queue;         /* requests waiting for the real open; linked
                                through struct qr_local.next */
    vl_req_t **tail;         /* where the next waiting request goes */
};

/* Per request (VL_REQ_PRIV). */
struct qr_local {
    vl_req_t *next; /* next request waiting on the same fd */
};

/* Runtime state (xl->priv). */
struct qr_priv {
    pthread_mutex_t lock;       /* guards every qr_inode, the LRU, bytes
                                   and the limits below */
    struct qr_inode *lru_head;  /* most recently validated */
    struct qr_inode *lru_tail;  /* evicted first */
    uint64_t bytes;             /* sum of charge over cached inodes */
    uint64_t n_files;           /* inodes with content */
    uint64_t cache_size;        /* copy of conf (reconfigure under lock) */
    uint64_t max_file_size;     /* copy of conf */
    uint64_t timeout_ms;        /* copy of conf */
    atomic_uint_fast64_t hits;        /* reads answered from the cache */
    atomic_uint_fast64_t misses;      /* reads of small files sent down */
    atomic_uint_fast64_t local_opens; /* opens answered here */
    atomic_uint_fast64_t real_opens;  /* deferred opens sent down */
    atomic_uint_fast64_t open_fails;  /* of those, failed */
    atomic_uint_fast64_t fills;       /* contents stored */
    atomic_uint_fast64_t rdp_fills;   /* of those, from readdirplus */
    atomic_uint_fast64_t drops;       /* contents dropped (change seen) */
    atomic_uint_fast64_t rdp_used;    /* readdirplus copies opened */
    atomic_uint_fast64_t rdp_skipped; /* readdirplus sent without asking
                                         for content (little was used) */
    /* Processes that lately opened a small file from a copy
     * (qr_rdp_wanted), under lock; pid 0 = free slot. */
    struct qr_rdp_reader {
        uint32_t pid; /* caller's pid */
        uint64_t ms;  /* qr_now_ms() of its last such open */
    } rdp_readers[QR_RDP_READERS];
    atomic_uint_fast64_t evictions;   /* contents dropped for space */
    atomic_uint_fast64_t n_lazy;      /* fds with is_counted, all inodes */
    atomic_uint_fast64_t keeper_opens;   /* keepers opened below */
    atomic_uint_fast64_t keeper_fails;   /* of those, failed */
    atomic_uint_fast64_t keeper_lookups; /* names looked up to learn
                                            what an unlink/rename removes */
};

/* qr-cache.c */
uint64_t qr_now_ms(void);
/* The inode whose ctx holds the content for gfid: the linked one if
 * any, else fallback. New ref, or NULL. */
vl_inode_t *qr_inode_for(vl_inode_t *fallback, const vl_gfid_t *gfid);
/* A lookup (or stat) answered iatt and maybe content (buf != NULL):
 * store it, revalidate what is cached, or drop it. */
void qr_cache_update(vl_xlator_t *xl, vl_inode_t *inode,
                     const struct vl_iatt *iatt, vl_buf_t *buf,
                     const char *data, size_t len);
/* Drops the content of inode (NULL allowed) because it changes. */
void qr_cache_drop(vl_xlator_t *xl, vl_inode_t *inode);
/* True if inode has content; with fresh, also validated within the
 * timeout. */
bool qr_cache_has(vl_xlator_t *xl, vl_inode_t *inode, bool fresh,
                  struct vl_iatt *iatt /* OUT, may be NULL */);
/* True if the last attributes seen for inode were of a file larger
 * than max-file-size (an OPEN then does not try to fetch content). */
bool qr_cache_is_large(vl_xlator_t *xl, vl_inode_t *inode);
/* Answers a read from fresh content into reply; false if none. */
bool qr_cache_read(vl_xlator_t *xl, vl_inode_t *inode, size_t size,
                   off_t offset, struct vl_reply *reply /* OUT */);
/* inode's copy (if any) just came from a readdirplus: counted as filled
 * and unread. */
void qr_cache_note_rdp_fill(vl_xlator_t *xl, vl_inode_t *inode);
/* An open is answered from inode's copy: a readdirplus copy counts as
 * used. */
void qr_cache_note_use(vl_xlator_t *xl, vl_inode_t *inode);
/* Whether a readdirplus should ask for content now: yes while listings'
 * content is mostly used, or too few were filled to tell, and one
 * listing in 16 anyway (to notice when reading starts again). */
bool qr_rdp_wanted(vl_xlator_t *xl, uint32_t pid);
void qr_rdp_note_reader(vl_xlator_t *xl, uint32_t pid);
/* Evicts until the cache fits cache-size (after reconfigure). */
void qr_cache_shrink(vl_xlator_t *xl);
/* Drops everything (fini). */
void qr_cache_clear(vl_xlator_t *xl);

/* quick-read.c: a readdirplus reply (entries, buf backing their content)
 * fills or revalidates the cache of each listed file. */
void qr_readdir_fill(vl_xlator_t *xl, const struct vl_reply *reply);

/* qr-open.c */
void qr_open(vl_xlator_t *xl, vl_req_t *req);
/* True if req may go on with fd now; otherwise req was queued behind the
 * real open (started here if needed) or answered. */
bool qr_fd_ready(vl_xlator_t *xl, vl_req_t *req, vl_fd_t *fd);
bool qr_fd_is_lazy(vl_xlator_t *xl, vl_fd_t *fd);
/* fd failed its deferred open: true and *status set. */
bool qr_fd_failed(vl_xlator_t *xl, vl_fd_t *fd, int *status /* OUT */);
void qr_release(vl_xlator_t *xl, vl_fd_t *fd);

/* qr-unlink.c: the brick must keep a file whose last name goes while
 * fds of it were answered here (nothing open there). */
/* fd (of inode) was just answered here: counted until it is opened
 * below or released. */
void qr_lazy_get(vl_xlator_t *xl, vl_fd_t *fd);
/* fd stops counting (opened below, failed, or released); the last one
 * of its inode closes the keeper. */
void qr_lazy_put(vl_xlator_t *xl, vl_fd_t *fd);
/* An UNLINK or RENAME (its cache drops done): wound once the file it
 * removes, if it has lazy fds, is held open below. */
void qr_unlink_guard(vl_xlator_t *xl, vl_req_t *req);

#endif /* QUICK_READ_H */
