/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * locks private definitions: lock records, per-inode lock state and the
 * engines shared by locks.c (fops, events), locks-range.c (byte-range
 * locks: POSIX, flock, inodelk), locks-entry.c (entrylk) and
 * locks-migrate.c (the rebalance's migration freeze and the "migrated"
 * flag, see doc/rebalance.md).
 *
 * All lock state of one translator instance is guarded by one mutex,
 * locks_priv.lock (not by inode->lock): lock traffic is light next to data
 * traffic, and one lock keeps client disconnect, which walks every inode,
 * simple and deadlock-free.
 */
#ifndef MORTAR_LOCKS_H
#define MORTAR_LOCKS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vol/vol.h"

enum locks_mem_type {
    LOCKS_MT_MISC = 0,
    LOCKS_MT_PRIV,
    LOCKS_MT_INODE,
    LOCKS_MT_LOCK,
    LOCKS_MT_STRING,
};

/* A circular doubly linked list with a sentinel head. */
struct locks_list {
    struct locks_list *next; /* next node, or the head */
    struct locks_list *prev; /* previous node, or the head */
};

#define locks_container(ptr, type, member)                                   \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

static inline void
locks_list_init(struct locks_list *head)
{
    head->next = head;
    head->prev = head;
}


static inline bool
locks_list_empty(const struct locks_list *head)
{
    return head->next == head;
}


/* Inserts node before pos (at the tail when pos is the head). */
static inline void
locks_list_insert_before(struct locks_list *pos, struct locks_list *node)
{
    node->prev = pos->prev;
    node->next = pos;
    pos->prev->next = node;
    pos->prev = node;
}


static inline void
locks_list_del(struct locks_list *node)
{
    node->prev->next = node->next;
    node->next->prev = node->prev;
    node->next = node;
    node->prev = node;
}


/* Which namespace a byte-range lock belongs to; locks of different kinds
 * (or inodelk domains) never conflict. */
enum locks_kind {
    LOCKS_POSIX = 0, /* fcntl record locks, owner (client, lk_owner) */
    LOCKS_FLOCK,     /* flock(2), whole file, owner is the open fd */
    LOCKS_INODELK,   /* internal range locks of cluster translators */
};

/* Who holds a lock. */
struct locks_owner {
    uint64_t client_id; /* connection (caller.client_id) */
    uint64_t lk_owner;  /* caller.lk_owner, or the fd's identity (flock) */
};

/* One byte-range lock, held or waiting. */
struct locks_range {
    struct locks_list link;   /* in locks_inode.held or .waiting */
    enum locks_kind kind;     /* namespace */
    char *domain;             /* owned; inodelk domain, else NULL */
    struct locks_owner owner; /* holder or requester */
    int16_t type;             /* F_RDLCK or F_WRLCK */
    int64_t start;            /* first byte */
    int64_t end;              /* last byte, inclusive; INT64_MAX = EOF */
    int32_t pid;              /* reported by F_GETLK */
    const vl_fd_t *fd;        /* identity only, never dereferenced: the fd
                               * the lock came through (release() drops
                               * locks by it); NULL for inodelk */
    vl_req_t *req;            /* waiting only: the request to answer */
    int status;               /* waiting only: answer once dequeued */
};

/* One entry lock, held or waiting. */
struct locks_entry {
    struct locks_list link;   /* in locks_inode.entry_held/.entry_waiting */
    char *domain;             /* owned */
    char *name;               /* owned; NULL = the whole directory */
    struct locks_owner owner; /* holder or requester */
    int16_t type;             /* F_RDLCK shared or F_WRLCK exclusive */
    vl_req_t *req;            /* waiting only: the request to answer */
    int status;               /* waiting only: answer once dequeued */
};

/* Lock state of one inode, in the inode's ctx area through a pointer.
 * Exists only while it holds a lock, a waiter or a request held by the
 * migration freeze; while it exists it holds a ref on the inode and sits
 * on locks_priv.inodes. */
struct locks_inode {
    struct locks_list link;          /* in locks_priv.inodes */
    vl_inode_t *inode;               /* owned ref */
    struct locks_list held;          /* struct locks_range, granted */
    struct locks_list waiting;       /* struct locks_range, FIFO */
    struct locks_list entry_held;    /* struct locks_entry, granted */
    struct locks_list entry_waiting; /* struct locks_entry, FIFO */
    struct locks_list frozen;        /* struct locks_held: modifying fops
                                      * queued by the freeze, FIFO */
    struct locks_list parked;        /* struct locks_held: granted freeze
                                      * INODELKs answered once the
                                      * modifying fops in flight drain */
    bool has_freeze;                 /* a freeze is among held; counted
                                      * in locks_priv.n_frozen_inodes */
};

/* The migration freeze (locks-migrate.c): an INODELK in this domain makes
 * modifying fops of other clients wait; this setxattr marks the inode
 * migrated, after which its fd fops answer -EREMCHG. */
#define LOCKS_MIGRATE_DOMAIN "mortar.dht.migrate"
#define LOCKS_MIGRATED_XATTR "mortar.dht.migrated"

/* The per-inode ctx area of this translator. It lives as long as the
 * brick's inode, so the migrated state does too (no ref is held for it).
 * A file can come back to this brick later with the same GFID (another
 * rebalance): fds opened before a migration stay moved (their epoch is
 * older), while the new copy is usable. */
struct locks_ictx {
    struct locks_inode *li;  /* priv->lock; lock state, or NULL */
    atomic_uint mig_epoch;   /* migrated setxattrs seen; fds opened
                              * before the last one answer -EREMCHG */
    atomic_bool is_migrated; /* migrated away and not created here again:
                              * open and truncate by name answer -EREMCHG */
    uint32_t n_inflight;     /* priv->lock; modifying fops passed down
                              * and not answered yet */
};

/* The per-fd ctx area: the inode's mig_epoch when the fd was opened. */
struct locks_fctx {
    atomic_uint epoch; /* set at open/create, before winding */
};

/* In the request's private area (VL_REQ_PRIV) while locks keeps a request
 * outside the range engine: frozen, parked, or collected for an answer. */
struct locks_held {
    struct locks_list link; /* in locks_inode.frozen/.parked or
                             * locks_answers.released/.replies */
    vl_req_t *req;          /* the request this area belongs to */
    int status;             /* answer, in locks_answers.replies */
    /* unlink, rename, link (locks-namespace.c): */
    int ns_step;            /* which name is being looked up */
    bool is_ns_blind;       /* passed uncounted (priv->n_ns_blind) */
    vl_inode_t *ns_inodes[2]; /* owned refs: the inodes the names hold,
                               * counted in their n_inflight once wound */    int cpd_status;         /* locks-compound.c: an xattrop's status
                             * while its unlock runs */
};

/* Runtime state of one locks instance (xl->priv). */
struct locks_priv {
    pthread_mutex_t lock;    /* guards every locks_inode and lock record */
    struct locks_list inodes; /* struct locks_inode with any lock */
    vl_xlator_t *xl;         /* borrowed; this translator */
    bool is_down;            /* lock; PARENT_DOWN seen: frozen fops are
                              * answered -ENOTCONN instead of released */
    uint32_t n_frozen_inodes; /* lock; inodes with has_freeze */
    uint32_t n_ns_blind;     /* lock; unlinks, renames and links passed
                              * without a look (no freeze was held) and
                              * not answered yet: freezes wait for them */
};

/* Requests answered after the mutex is dropped: waiters that were granted
 * (status 0) or cancelled (-errno), and inodes that became empty. */
struct locks_answers {
    struct locks_list ranges;  /* struct locks_range with req and status */
    struct locks_list entries; /* struct locks_entry with req and status */
    struct locks_list inodes;  /* struct locks_inode to free */
    struct locks_list released; /* struct locks_held: frozen fops to run */
    struct locks_list replies;  /* struct locks_held: answer with status */
};

/* locks.c */
void locks_answers_init(struct locks_answers *ans);
/* Answers and frees everything collected; call without priv->lock. */
void locks_answers_flush(struct locks_answers *ans);
/* The lock state of inode, created (and inode ref'd) if create is true;
 * NULL if absent or on ENOMEM. */
struct locks_inode *locks_inode_get_locked(struct locks_priv *priv,
                                           vl_xlator_t *xl,
                                           vl_inode_t *inode, bool create);
/* Moves li to ans->inodes if it has no lock or waiter left. */
void locks_inode_maybe_drop_locked(struct locks_priv *priv,
                                   struct locks_inode *li,
                                   struct locks_answers *ans);
bool locks_owner_equal(const struct locks_owner *a,
                       const struct locks_owner *b);

/* locks-range.c */
void locks_range_free(struct locks_range *lk);
/* Converts a wire flock to [*start, *end]; 0 or -EINVAL/-EOVERFLOW. */
int locks_range_from_flock(const struct vl_flock *fl, int64_t *start,
                           int64_t *end);
/* The held lock conflicting with want, or NULL. */
struct locks_range *locks_range_conflict_locked(struct locks_inode *li,
                                                const struct locks_range *want);
/* Sets the owner's locks of want's kind/domain on [start, end] to
 * want->type (F_UNLCK removes), splitting and merging. want is only read.
 * 0 or -ENOMEM (then nothing changed). */
int locks_range_apply_locked(struct locks_priv *priv, struct locks_inode *li,
                             const struct locks_range *want);
/* Grants every waiter that no longer conflicts, in FIFO order. */
void locks_range_grant_locked(struct locks_priv *priv, struct locks_inode *li,
                              struct locks_answers *ans);
/* Drops held locks and cancels waiters (unless ans is NULL) matching the
 * filter; see the definition. Returns the number of records removed. */
size_t locks_range_purge_locked(struct locks_inode *li, int kind,
                                const struct locks_owner *owner,
                                const uint64_t *client_id, const vl_fd_t *fd,
                                int waiter_status, struct locks_answers *ans);
void locks_range_dump_locked(struct locks_inode *li, FILE *out,
                             const char *prefix);

/* locks-entry.c */
void locks_entry_free(struct locks_entry *en);
void locks_entrylk(vl_xlator_t *xl, vl_req_t *req);
/* Drops held entry locks of client_id, answers its waiters with
 * waiter_status, grants what no longer conflicts. */
void locks_entry_purge_client_locked(struct locks_priv *priv,
                                     struct locks_inode *li,
                                     const uint64_t *client_id,
                                     int waiter_status,
                                     struct locks_answers *ans);
void locks_entry_dump_locked(struct locks_inode *li, FILE *out,
                             const char *prefix);

/* locks-migrate.c */
/* The ctx area of inode (never NULL: the class reserves it). */
struct locks_ictx *locks_ictx(vl_xlator_t *xl, vl_inode_t *inode);
/* After any change of li's held locks (end of locks_range_grant_locked):
 * parks freeze INODELKs just granted while modifying fops are in flight,
 * and releases the frozen fops once no freeze is held. */
void locks_mig_after_change_locked(struct locks_priv *priv,
                                   struct locks_inode *li,
                                   struct locks_answers *ans);
/* For an INODELK granted at once: parks req (true) when want is a freeze
 * and modifying fops are still in flight on li's inode. */
bool locks_mig_park_locked(struct locks_priv *priv, struct locks_inode *li,
                           const struct locks_range *want, vl_req_t *req);
/* Runs a frozen fop again after the freeze went away. */
void locks_mig_redispatch(vl_req_t *req);
/* Is a freeze held on li by a client other than client_id (NULL: by
 * anyone)? */
bool locks_mig_frozen_locked(struct locks_inode *li,
                             const uint64_t *client_id);
/* Queues req on list (frozen or parked) with status. */
void locks_mig_hold(struct locks_list *list, vl_req_t *req, int status);
/* One modifying fop less in flight on inode; answers parked freezes that
 * have nothing left to wait for. */
void locks_mig_inflight_done(vl_xlator_t *xl, vl_inode_t *inode);
/* Answers the parked freezes of li once nothing is in flight for them
 * (its inode's modifying fops, the brick's blind namespace fops). */
void locks_mig_unpark_locked(struct locks_priv *priv, struct locks_inode *li,
                             struct locks_answers *ans);
/* The fops of locks-migrate.c. */
void locks_mig_write(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_fallocate(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_setattr(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_copy_file_range(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_read(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_fsync(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_stat(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_lseek(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_rchecksum(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_setxattr(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_open(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_create(vl_xlator_t *xl, vl_req_t *req);
void locks_mig_mknod(vl_xlator_t *xl, vl_req_t *req);
/* True (and req answered -EREMCHG) if fd's inode was migrated since fd
 * was opened. */
bool locks_mig_moved(vl_xlator_t *xl, vl_req_t *req, const vl_fd_t *fd);

/* locks-compound.c: an INODELK/ENTRYLK with args.xop (true: handled,
 * req answered or wound; false: a plain lock), and XATTROP (with
 * args.unlock: applied, then unlocked; else passed down). */
bool locks_cpd_lock(vl_xlator_t *xl, vl_req_t *req);
void locks_xattrop(vl_xlator_t *xl, vl_req_t *req);

/* locks-namespace.c: unlink, rename and link under a freeze. */
void locks_ns_fop(vl_xlator_t *xl, vl_req_t *req);

#endif /* MORTAR_LOCKS_H */
