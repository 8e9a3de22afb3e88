/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * write-behind: private types shared by write-behind.c (class, fops) and
 * wb-queue.c (the per-inode queue of writes and waiting fops).
 */
#ifndef MORTAR_WRITE_BEHIND_H
#define MORTAR_WRITE_BEHIND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/uio.h>

#include "vol/vol.h"

enum wb_mem_type {
    WB_MT_MISC = 0,
    WB_MT_PRIV,
    WB_MT_ENTRY,
};

/* Options (see write-behind.c for their docs). */
struct wb_conf {
    uint64_t window_size;    /* bytes answered early, not yet acknowledged
                                by the child, allowed per inode */
    bool is_flush_behind;    /* FLUSH answered without waiting for writes */
    bool is_strict_o_direct; /* O_DIRECT fds are written through */
    bool is_strict_ordering; /* no write overtakes an earlier one, even
                                when they do not overlap */
    uint64_t aggregate_size; /* largest WRITE made of several contiguous
                                small early writes; 0: no aggregation */
    bool is_setattr_behind;  /* SETATTR answered early (wb-setattr.c) */
    uint64_t total_size;     /* bytes answered early, not yet acknowledged,
                                allowed over every inode (its share of the
                                client's performance.cache-size) */
};

/* Counters for statedump; atomics, no lock. */
struct wb_priv {
    atomic_ullong n_behind;       /* writes answered before the child */
    atomic_ullong n_through;      /* writes answered by the child */
    atomic_ullong n_window_full;  /* of those, because the window was full */
    atomic_ullong n_waited;       /* fops that waited for pending writes */
    atomic_ullong n_flush_behind; /* FLUSHes answered without waiting */
    atomic_ullong n_failed;       /* early-answered writes that failed */
    atomic_ullong n_reported;     /* sticky errors returned to a caller */
    atomic_ullong n_held;         /* early writes held while an earlier
                                     write of the inode was in flight */
    atomic_ullong n_aggregated;   /* early writes appended to a held one
                                     (no WRITE of their own) */
    atomic_ullong n_setattr_behind; /* SETATTRs answered before the child */
    atomic_ullong n_setattr_failed; /* of those, failed at the child */
    atomic_ullong n_setattr_merged; /* of those, folded into the previous
                                       one before it went down */
    atomic_ullong n_stripped;     /* readdirplus entries whose attributes
                                     were dropped (pending writes) */
    atomic_ullong change_seq;     /* bumped when an entry leaves a queue */
    atomic_llong n_entries;       /* entries alive (writes + waiters) */
    atomic_ullong held_bytes;     /* early writes' bytes not yet
                                     acknowledged, over every inode */
    atomic_ullong n_total_full;   /* writes through: total-size reached */
    atomic_ullong total_limit;    /* copy of conf's total_size, for
                                     statedump (reconfigure) */
    atomic_bool is_draining;      /* PARENT_DOWN waits for n_entries 0 */
    pthread_mutex_t lock;         /* guards nothing but the wait on cond */
    pthread_cond_t cond;          /* n_entries reached 0 while draining */
};

enum wb_kind {
    WB_E_WRITE,   /* a WRITE; blocks only overlapping later writes */
    WB_E_BARRIER, /* any other fop; waits for and blocks everything */
};

/* One request in an inode's queue. Created by the fop that meets pending
 * writes (or by every WRITE), freed after the child answered it. */
struct wb_entry {
    struct wb_entry *next;     /* inode queue link; guarded by inode->lock */
    struct wb_entry *go_next;  /* link of a local "to wind" list; owned by
                                  whoever collected the entry */
    vl_xlator_t *xl;           /* borrowed: this write-behind */
    vl_inode_t *inode;         /* owned ref: whose queue holds the entry */
    vl_req_t *req;             /* borrowed: caller's request, NULL once it
                                  was answered early */
    vl_req_t *child;           /* owned until wound: the WRITE of an early
                                  answered write, built at arrival */
    vl_fd_t *fd;               /* owned ref: fd of a write, else NULL */
    vl_buf_t *buf;             /* owned ref: data of an early write */
    struct iovec iov;          /* data of an early write (in buf) */
    int64_t start;             /* first byte of a write */
    int64_t end;               /* byte after the last (INT64_MAX: append) */
    uint64_t len;              /* bytes counted in the window (early) */
    struct wb_entry *peer;     /* copy_file_range: the entry of the other
                                  inode (both point at each other) */
    atomic_int n_blocked;      /* copy_file_range primary: entries (self
                                  and peer) not yet free to go */
    bool is_primary;           /* of the pair, the one that winds */
    enum wb_kind kind;         /* write or barrier */
    bool is_wound;             /* free to go (or gone): guarded by lock */
    bool is_early;             /* the caller has been answered already (a
                                  write, or a barrier that is a SETATTR
                                  answered early, wb-setattr.c) */
    bool is_strict;            /* strict-write-ordering when it arrived */
    bool is_buf_own;           /* buf was allocated here (not the
                                  caller's), so bytes may be appended */
};

/* Per inode (inode ctx), guarded by inode->lock. */
struct wb_inode {
    struct wb_entry *head;  /* oldest entry; NULL when nothing pending */
    struct wb_entry *tail;  /* newest entry */
    uint64_t window;        /* bytes of early writes not yet acknowledged */
    uint32_t mode;          /* last mode seen in a reply, if has_mode */
    bool has_mode;          /* mode is known */
    bool has_lk;            /* an LK was seen: FLUSH must reach the locks */
    struct vl_iatt iatt;    /* last attributes seen in a reply, or the
                               ones predicted by a SETATTR answered early;
                               valid if has_iatt */
    bool has_iatt;
    uint32_t n_open;        /* fds of this client opened through here */
    uint32_t n_setattr_behind; /* SETATTRs answered early, not yet by the
                                  child */
    int err;                /* -errno of a SETATTR answered early, not
                               reported yet, or 0 */
    /* Failed early writes, as the kernel's errseq: every fd keeps the
     * wb_seq its fsync and its flush last reported (struct wb_fd), so
     * each sees each failure once, whichever fd wrote the data. */
    int wb_err;             /* -errno of the latest failed early write */
    uint32_t wb_seq;        /* failures recorded so far */
    bool is_wb_seen;        /* the latest was reported by an fsync or a
                               flush (a new fd then does not report it) */
    uint64_t change_seq;    /* priv->change_seq when an entry last left
                               the queue (readdirplus staleness) */
};

/* Per fd (fd ctx). err, is_failed, is_counted: guarded by fd->lock;
 * the cursors into the inode's wb_seq: by inode->lock. */
struct wb_fd {
    int err;         /* -errno of an early write of this fd not reported
                        to a write of this fd yet, or 0 */
    bool is_failed;  /* an early write failed: write through from now on */
    bool is_counted; /* counted in its inode's n_open */
    bool is_sampled; /* the cursors were set (at open or first write) */
    uint32_t seq_fsync; /* inode wb_seq last reported by this fd's fsync */
    uint32_t seq_flush; /* inode wb_seq last reported by this fd's flush */
};

/* Which caller a recorded failure is reported to. */
enum wb_path {
    WB_PATH_WRITE, /* the next write of the fd that failed, once */
    WB_PATH_FSYNC, /* every fd's next fsync, once per failure */
    WB_PATH_FLUSH, /* every fd's next flush, unless its fsync reported it */
};

/* wb-queue.c */
struct wb_inode *wb_inode_peek(vl_xlator_t *xl, vl_inode_t *inode);
struct wb_entry *wb_entry_new(vl_xlator_t *xl, vl_inode_t *inode,
                              enum wb_kind kind);
void wb_entry_free(struct wb_entry *e);
/* Appends e to its inode's queue (lock held) and says whether it may go
 * now (then it is marked wound and the caller winds it). */
bool wb_queue_add_locked(struct wb_inode *wi, struct wb_entry *e);
/* Removes e (lock held) and prepends the entries now free to go to *go. */
void wb_queue_del_locked(struct wb_inode *wi, struct wb_entry *e,
                         struct wb_entry **go /* OUT */);
/* Appends the data of the early write e (not queued) to the early write
 * at the tail when that one has not gone down yet, they are contiguous,
 * of one fd and caller, and fit in aggregate_size (lock held); then e is
 * done with. False: queue e. */
bool wb_queue_join_locked(struct wb_inode *wi, struct wb_entry *e,
                          uint64_t aggregate_size);
/* Removes from the queue every write of fd that has not gone down (lock
 * held) and prepends them to *cut (go_next links). */
void wb_queue_cut_fd_locked(struct wb_inode *wi, vl_fd_t *fd,
                            struct wb_entry **cut /* OUT */);
/* Winds every entry of the list go (no lock held). */
void wb_queue_wind(struct wb_entry *go);
/* Sets the cursors of a new fd (inode->lock held): it reports a failure
 * recorded before it was opened only if nobody reported that yet. */
void wb_fd_sample_locked(struct wb_inode *wi, struct wb_fd *wf);
/* Records err, the failure of an early write of fd (inode->lock held):
 * for the fd's next write and for every fd's fsync and flush. Returns
 * whether it is worth a log line (the first failure not yet reported). */
bool wb_fd_set_err_locked(vl_xlator_t *xl, vl_fd_t *fd, int err);
/* Takes the error to report to a fop of fd on path: a failure of an
 * early write not yet reported there (write: the fd's own, once; fsync
 * and flush: any fd's, once per failure and fd), or else the failure of
 * a SETATTR of the inode answered early (once); 0 if none. */
int wb_fd_take_err(vl_xlator_t *xl, vl_fd_t *fd, enum wb_path path);
/* Remembers the mode and attributes of a reply (lock held). While
 * SETATTRs answered early are pending, only the size may grow. */
void wb_inode_seen_locked(struct wb_inode *wi, const struct vl_iatt *iatt);

/* wb-setattr.c: SETATTR answered early (setattr-behind). */
void wb_fop_setattr(vl_xlator_t *xl, vl_req_t *req);
/* Winds the child of a SETATTR answered early that is free to go. */
void wb_setattr_go(struct wb_entry *e);
/* An OPEN or CREATE of fd succeeded through here: count it open. */
void wb_fd_opened(vl_xlator_t *xl, vl_fd_t *fd);
/* The class's release hook: the fd no longer counts as open. */
void wb_release(vl_xlator_t *xl, vl_fd_t *fd);

/* write-behind.c: winds a barrier entry that is free to go. */
void wb_barrier_go(struct wb_entry *e);
/* write-behind.c: winds a write entry that is free to go. */
void wb_write_go(struct wb_entry *e);
/* write-behind.c: waits for pending writes, or winds with a done that
 * remembers the reply's attributes. */
void wb_fop_observed(vl_xlator_t *xl, vl_req_t *req);

#endif /* MORTAR_WRITE_BEHIND_H */
