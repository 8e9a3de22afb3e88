/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mount/fuse private header: configuration, runtime state, the per-message
 * call object and the helpers shared by the bridge's files.
 *
 *   fuse.c         class, options, init/fini/notify, readiness
 *   fuse-session.c the mount that outlives graphs: find/create/adopt,
 *                  mount(2), unmount, draining an old graph
 *   fuse-table.c   the session's nodes and handles, unit-tested
 *   fuse-hint.c    name hints (parent GFID, name) -> node, unit-tested
 *   fuse-resolve.c makes a message's nodeids and fhs objects of the
 *                  call's graph (lookup by GFID, reopen)
 *   fuse-reader.c  reader threads, message buffers, dispatch, replies,
 *                  INIT/DESTROY/FORGET
 *   fuse-entry.c   name and inode operations (lookup ... xattrs)
 *   fuse-file.c    fd operations (open ... copy_file_range)
 *   fuse-pattr.c   a directory's attributes after an entry op in it
 *   fuse-notify.c  the bricks' invalidations told to the kernel by a
 *                  notifier thread; the kernel's timeouts under md-cache
 *   fuse-lru.c     the nodes the kernel holds bounded (lru-limit): the
 *                  least recently looked up are named to it to drop
 *   fuse-conv.c    pure conversions (attributes, dirents, setattr bits,
 *                  device numbers, locks), unit-tested
 *
 * Nodeids are struct vfuse_node pointers (FUSE_ROOT_ID is the graph's
 * root) and file handles are struct vfuse_handle pointers, both owned by
 * the session, so a graph switch changes nothing the kernel sees.
 */
#ifndef MORTAR_FUSE_H
#define MORTAR_FUSE_H

#include <linux/fuse.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vol/vol.h"

/* Messages up to this size are copied out of the reader's buffer; bigger
 * ones (writes, large xattr values) take the buffer with them. */
#define VFUSE_COPY_MAX (16 * 1024)
/* Room for the headers in front of a max_write payload. */
#define VFUSE_HDR_ROOM 4096
/* Big buffers kept for reuse after their call ends. */
#define VFUSE_POOL_MAX 8
/* Sent to a reader thread to interrupt its blocking read of /dev/fuse at
 * stop (a handler that does nothing, no SA_RESTART; only readers leave
 * it unblocked). Not used by anything else in mortarfsd. */
#define VFUSE_STOP_SIGNAL (SIGRTMIN + 4)
/* The file capabilities xattr the kernel probes before writes. */
#define VFUSE_XATTR_CAPS "security.capability"
/* Protocol minor we speak (the <linux/fuse.h> we build against). */
#define VFUSE_MINOR FUSE_KERNEL_MINOR_VERSION

enum vfuse_mem_type {
    VFUSE_MT_MISC = 0,
    VFUSE_MT_PRIV,
    VFUSE_MT_CALL,
    VFUSE_MT_READER,
    VFUSE_MT_REPLY,
};

struct vfuse_conf {
    char *mountpoint;          /* owned by the conf; required */
    uint64_t entry_timeout;    /* ms the kernel may cache a name */
    uint64_t attr_timeout;     /* ms the kernel may cache attributes */
    uint64_t negative_timeout; /* ms the kernel may cache ENOENT; 0 = off */
    uint64_t max_background;   /* kernel's async request limit */
    uint64_t congestion;       /* threshold; 0 = 3/4 of max_background */
    uint64_t reader_threads;   /* threads reading /dev/fuse */
    uint64_t read_ahead_kb;    /* bdi read_ahead_kb after mounting */
    uint64_t max_write;        /* bytes per WRITE/READ request */
    bool is_ro;                /* mount read-only */
    char *fsname;              /* owned by the conf; may be NULL */
    bool is_direct_io;         /* FOPEN_DIRECT_IO on every open */
    bool is_keep_cache;        /* FOPEN_KEEP_CACHE on every file open */
    bool is_acl;               /* pass system.posix_acl_* xattrs down */
    uint64_t gid_timeout;      /* ms a process's groups are cached */
    bool is_selinux;           /* pass security.selinux down */
    bool is_writeback;         /* FUSE_WRITEBACK_CACHE */
    bool is_rdplus;            /* FUSE_DO_READDIRPLUS (else plain READDIR) */
    bool is_rdplus_auto;       /* FUSE_READDIRPLUS_AUTO (else always plus) */
    bool is_capability;        /* off: no file has security.capability */
    bool is_flush_behind;      /* FLUSH without locks answered here */
    uint64_t connect_timeout;  /* ms to wait for CHILD_UP */
    uint64_t lru_limit;        /* nodes the kernel may hold (fuse-lru.c) */
};

#define VFUSE_CONTAINER(ptr, type, member)                                   \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Intrusive circular list links; a head is a link pointing at itself. */
struct vfuse_link {
    struct vfuse_link *prev; /* guarded by the list owner's lock */
    struct vfuse_link *next;
};

struct vfuse_session;

/* vfuse_node flags (fuse-table.c). */
/* A lock request (POSIX or flock, GETLK too) was sent for the node; never
 * cleared while the node lives. Without it FLUSH has nothing to release. */
#define VFUSE_NODE_HAS_LK 0x1u
/* This session created the object (CREATE/MKNOD reply with our GFID) and
 * no SETXATTR/REMOVEXATTR went through for it since: it has no
 * security.capability. */
#define VFUSE_NODE_NO_CAP 0x2u
/* Over lru-limit, the kernel was asked to drop the node's names
 * (fuse-lru.c); cleared when it is looked up again. */
#define VFUSE_NODE_EVICTING 0x4u

/* A directory's attributes as an entry op in it left them (the reply's
 * postparent), kept to answer the kernel's next GETATTR of the directory
 * (it drops its cached attributes after every such op) without a round
 * trip. One use, and only until the attribute timeout the kernel would
 * have applied (fuse-table.c). */
struct vfuse_pattr {
    struct vl_iatt iatt;       /* the directory after the op */
    uint64_t until_ns;         /* CLOCK_MONOTONIC deadline; 0 = none */
};

/* One nodeid the kernel knows (nodeids are pointers to these). It outlives
 * graphs: inode is a ref into the graph of generation gen (graph->id), or
 * NULL after that graph was retired; a call in a newer graph looks the
 * GFID up there (fuse-resolve.c) and moves the node. */
struct vfuse_node {
    vl_gfid_t gfid;            /* immutable */
    uint32_t type;             /* S_IFMT bits, for vl_inode_get */
    uint64_t nlookup;          /* kernel lookups not yet forgotten */
    vl_inode_t *inode;         /* owned ref or NULL */
    uint64_t gen;              /* graph id of inode, 0 when NULL */
    uint32_t flags;            /* VFUSE_NODE_* */
    struct vfuse_node *hnext;  /* hash chain by gfid */
    struct vfuse_link link;    /* on table->nodes, most recently looked
                                  up first */
    struct vfuse_link hints;   /* head: name hints naming this node */
    struct vfuse_pattr pattr;  /* stored attributes (directories) */
};

/* A name hint (fuse-hint.c): the entry (parent GFID, name) was last seen
 * naming node. Freed with the node, on UNLINK/RMDIR/RENAME of the name, or
 * when the oldest of too many. */
struct vfuse_hint {
    vl_gfid_t parent;          /* the directory's GFID */
    struct vfuse_node *node;   /* borrowed: the hint dies with the node */
    struct vfuse_hint *hnext;  /* hash chain by (parent, name) */
    struct vfuse_link age;     /* on table->hint_age, newest first */
    struct vfuse_link by_node; /* on node->hints */
    size_t name_len;           /* strlen(name) */
    char name[];               /* NUL-terminated */
};

/* One file handle the kernel holds (fhs are pointers to these). */
struct vfuse_handle {
    vl_gfid_t gfid;            /* the open object */
    uint32_t type;             /* S_IFMT bits */
    int32_t flags;             /* open flags, reused to reopen */
    uint32_t pid;              /* pid that opened it */
    bool is_dir;               /* OPENDIR handle */
    vl_fd_t *fd;               /* owned ref or NULL (graph retired) */
    uint64_t gen;              /* graph id of fd, 0 when NULL */
    struct vfuse_link link;    /* on table->handles */
};

/* The session's nodes and handles (fuse-table.c). All fields and every
 * node's and handle's inode/fd/gen/nlookup are guarded by lock. Refs into
 * a graph are dropped under lock, and a graph drops every ref into it
 * under lock before its inode table goes, so holding lock keeps the graph
 * of any node's inode or handle's fd alive. */
struct vfuse_table {
    pthread_mutex_t lock;      /* guards everything here */
    struct vfuse_node **hash;  /* owned array of n_buckets chains */
    size_t n_buckets;          /* a power of two; grows with n_nodes */
    size_t n_nodes;            /* nodes alive */
    size_t n_handles;          /* handles alive */
    struct vfuse_link nodes;   /* every node */
    struct vfuse_link handles; /* every handle */
    struct vfuse_hint **hint_hash; /* owned array of n_hint_buckets */
    size_t n_hint_buckets;
    size_t n_hints;            /* hints alive */
    size_t max_hints;          /* evict the oldest beyond this */
    struct vfuse_link hint_age; /* every hint, newest first */
    struct vfuse_pattr root_pattr; /* the root's (it has no node) */
    size_t max_nodes;          /* lru-limit: 0 = no limit (fuse-lru.c) */
    size_t n_evicting;         /* nodes whose names the kernel was asked
                                  to drop, not forgotten or seen since */
    uint64_t n_evicted;        /* such nodes, in all (statedump) */
    uint64_t n_unnamed;        /* least recently used nodes that had no
                                  name hint to drop (statedump) */
};

/* Notifications waiting for the kernel beyond this many are dropped
 * (counted: notify_dropped); a notifier that keeps up never has more
 * than a burst. */
#define VFUSE_NOTIFY_QUEUE_MAX (64 * 1024)

/* The notifier thread and its queue (fuse-notify.c). */
struct vfuse_notifier {
    pthread_t thread;        /* joined by vfuse_notifier_stop */
    bool is_initialized;     /* lock, cond and thread exist */
    pthread_mutex_t lock;    /* guards the fields below */
    pthread_cond_t cond;     /* signalled when queued or stopping */
    bool is_started;         /* accepting notifications */
    bool is_stopping;        /* the thread exits */
    struct vfuse_link queue; /* struct vfuse_notice, oldest first (owned) */
    size_t n_queued;
    /* Counters for statedumps: */
    atomic_uint_fast64_t n_upcalls; /* invalidations received */
    atomic_uint_fast64_t n_all;     /* is_all received */
    atomic_uint_fast64_t n_sent;    /* notifications the kernel took */
    atomic_uint_fast64_t n_unknown; /* ENOENT: it cached nothing of it */
    atomic_uint_fast64_t n_dropped; /* queue full or ENOMEM */
};

struct vfuse_reader {
    struct vfuse_session *sess; /* borrowed */
    pthread_t thread;        /* joined by vfuse_readers_stop */
    bool is_started;         /* thread was created */
    vl_buf_t *buf;           /* owned ref; the read(2) target */
    /* Requests this reader read (written by it alone; statedump and the
     * reader test sum them). */
    atomic_uint_fast64_t n_requests;
};

/* The mount: /dev/fuse, readers and the tables. Outlives graphs: the
 * first mount/fuse instance creates it, an instance of a newer graph on
 * the same mount point adopts it (fuse-session.c). */
/* Supplementary groups per pid (fuse-groups.c). */
#define VFUSE_GROUPS_SLOTS 256
struct vfuse_groups_slot {
    uint32_t pid;                   /* 0: empty */
    uint32_t uid;                   /* ids the groups were read with */
    uint32_t gid;
    uint32_t n;
    uint32_t groups[VL_MAX_GROUPS];
    uint64_t expires_ms;            /* CLOCK_MONOTONIC */
};
struct vfuse_groups {
    pthread_mutex_t lock;           /* guards slot */
    struct vfuse_groups_slot slot[VFUSE_GROUPS_SLOTS]; /* by pid */
    atomic_uint_fast64_t n_reads;   /* /proc reads, for statedumps */
    atomic_uint_fast64_t n_hits;    /* answered from a slot */
};

struct vfuse_session {
    char *conf_mountpoint;      /* owned; as the option said (match key) */
    char *mountpoint;           /* owned; canonical path we mounted */
    int fuse_fd;                /* owned; /dev/fuse, -1 when closed */
    bool is_mounted;            /* mount(2) done, not unmounted yet */
    unsigned bdi_major;         /* st_dev of the mount, for sysfs */
    unsigned bdi_minor;
    bool has_bdi;               /* bdi_major/minor are known */
    uint64_t read_ahead_kb;     /* from the creating instance's conf */
    size_t buf_size;            /* bytes of every reader buffer */
    struct vfuse_reader *readers; /* owned array of n_readers */
    size_t n_readers;
    atomic_bool is_stopping;    /* readers exit */
    atomic_bool is_gone;        /* the kernel said ENODEV (unmounted) */
    /* Round trips saved, for statedumps: */
    atomic_uint_fast64_t n_flush_local; /* FLUSHes answered here */
    atomic_uint_fast64_t n_caps_local;  /* capability probes answered */
    atomic_uint_fast64_t n_hinted;      /* UNLINK/RMDIR/RENAME given an
                                           inode from a name hint */
    atomic_uint_fast64_t n_getattr_local; /* GETATTRs answered from an
                                             entry op's postparent */
    atomic_uint_fast64_t n_sync_nosys;  /* FLUSH/FSYNC/FSYNCDIR that the
                                           graph answered ENOSYS (never
                                           passed on: fuse-file.c) */
    struct vfuse_table table;   /* nodes and handles */
    struct vfuse_notifier notifier; /* kernel notifications */
    struct vfuse_groups groups; /* callers' supplementary groups */
    struct vfuse_session *next; /* on the process's session list */
    /* Borrowed; the instance serving new calls, or NULL. RCU (urcu-bp):
     * a call reads it with rcu_dereference in a read section and pins
     * what it got there (vfuse_priv_pin); it is changed only with
     * rcu_assign_pointer holding lock, and a drain waits out the read
     * sections (synchronize_rcu) before it trusts n_inflight. */
    struct vfuse_priv *active;
    atomic_bool is_init_done;   /* the kernel's INIT is answered */

    pthread_mutex_t lock;       /* guards everything below, and the
                                   writers of active */
    pthread_cond_t cond;        /* signalled by the unpin that drops a
                                   draining instance's n_inflight to 0,
                                   and when is_abort is set */
    vl_buf_t *pool[VFUSE_POOL_MAX]; /* owned refs of spare big buffers */
    size_t n_pool;
    size_t n_attached;          /* instances using the session */
    bool is_abort;              /* stop waiting for old graphs to drain */
    uint32_t proto_minor;       /* minor the kernel and we agreed on */
    uint32_t max_write;         /* negotiated max_write */
};

/* One mount/fuse instance: the top of one graph. */
struct vfuse_priv {
    vl_xlator_t *xl;            /* borrowed; this translator */
    struct vfuse_session *sess; /* borrowed; attached until fini */
    vl_inode_t *root;           /* owned ref on this graph's root */
    uint64_t gen;               /* xl->graph->id */
    bool has_write_behind;      /* a translator below may hold writes
                                   back until FLUSH (set at init) */
    vl_xlator_t *md_cache;      /* borrowed; performance/md-cache below,
                                   or NULL (set at init) */
    bool is_torn_down;          /* refs dropped at PARENT_DOWN; main
                                   thread only */
    /* Calls pinned to this graph: taken by a reader inside its RCU read
     * section, dropped when the call ends (on any thread, long after
     * that section). What keeps the graph alive for a call's whole
     * life; atomic, so neither needs sess->lock. */
    atomic_size_t n_inflight;
    /* A drain waits on sess->cond for n_inflight to reach 0: the unpin
     * that brings it there takes sess->lock and signals. Never cleared
     * (the instance is going away). */
    atomic_bool is_drain_waiting;

    pthread_mutex_t lock;       /* guards everything below */
    pthread_cond_t cond;        /* signalled when is_timer_cb_due drops */
    bool is_child_up;           /* CHILD_UP reached us */
    bool is_ready_sent;         /* vl_graph_set_ready was called */
    vl_timer_t *connect_timer;  /* owned; connect-timeout watchdog, NULL
                                   once cancelled or its callback ran.
                                   vl_timer_cancel is only called holding
                                   lock, so the callback (which takes lock
                                   first) cannot finish and free it under
                                   the cancel */
    bool is_timer_cb_due;       /* the watchdog's callback may still run
                                   (armed, or fired and not finished) */
    bool is_draining;           /* teardown started: the callback must not
                                   touch the graph */
};

struct vfuse_call;
typedef void vfuse_handler_fn(struct vfuse_call *call);

/* One kernel message and everything needed to answer it. Freed by
 * vfuse_call_end once the reply is written. */
struct vfuse_call {
    struct vfuse_priv *priv;  /* borrowed; pinned (priv->n_inflight)
                                 until vfuse_call_end */
    struct vfuse_session *sess; /* borrowed */
    vl_xlator_t *xl;          /* borrowed; the bridge of the call's graph */
    struct fuse_in_header hdr; /* copy of the header */
    const char *arg;          /* the opcode's payload (after the header) */
    uint32_t arg_len;         /* bytes at arg */
    vl_buf_t *buf;            /* owned ref when the message stayed in a big
                                 buffer, else NULL (then inline below) */
    struct vl_caller caller;  /* from the header */
    vl_inode_t *inode;        /* owned ref: a fresh inode for entry ops */
    vl_fd_t *fd;              /* owned ref: a new fd for open/create, or
                                 the kernel's ref at release */
    struct iovec iov;         /* WRITE payload; args point here */
    int64_t count;            /* bytes written, kept across a follow-up */
    /* Resolution (fuse-resolve.c): the nodeids and fhs the message names,
     * made objects of the call's graph before the handler runs. */
    uint64_t want_node[2];    /* nodeids to resolve, 0 = none */
    vl_inode_t *node_inode[2]; /* owned refs, in the call's graph */
    uint64_t want_fh[2];      /* fhs to resolve, 0 = none */
    vl_fd_t *fh_fd[2];        /* owned refs, in the call's graph */
    unsigned res_step;        /* next item: nodes 0-1, then fhs 2-3 */
    vfuse_handler_fn *then;   /* handler to run once resolved */
    vl_inode_t *res_inode;    /* owned; inode being looked up */
    vl_fd_t *res_fd;          /* owned; fd being reopened */
    _Alignas(16) char inline_msg[]; /* the message when it was copied */
};

/* --- fuse-conv.c: pure helpers --- */
void vfuse_attr_from_iatt(struct fuse_attr *out /* OUT */,
                          const struct vl_iatt *iatt);
void vfuse_ms_to_timeout(uint64_t ms, uint64_t *sec /* OUT */,
                         uint32_t *nsec /* OUT */);
uint32_t vfuse_setattr_valid(uint32_t fattr);
void vfuse_setattr_from_in(const struct fuse_setattr_in *in,
                           struct vl_iatt *attr /* OUT */,
                           uint32_t *valid /* OUT */);
uint32_t vfuse_dev_encode(uint64_t rdev);
uint64_t vfuse_dev_decode(uint32_t dev);
size_t vfuse_dirent_size(size_t namelen, bool plus);
size_t vfuse_dirent_pack(char *buf, size_t room, const struct vl_dirent *ent);
size_t vfuse_direntplus_pack(char *buf, size_t room,
                             const struct vl_dirent *ent,
                             const struct fuse_entry_out *entry);
int vfuse_flock_from_fuse(const struct fuse_file_lock *lk,
                          struct vl_flock *out /* OUT */);
void vfuse_flock_to_fuse(const struct vl_flock *fl,
                         struct fuse_file_lock *out /* OUT */);
uint64_t vfuse_init_want(const struct vfuse_conf *conf);
bool vfuse_is_dot_or_dotdot(const char *name);

/* --- fuse-table.c: nodes and handles (unit-tested) --- */
int vfuse_table_init(struct vfuse_table *t);
/* Drops every ref and frees every node and handle. */
void vfuse_table_clear(struct vfuse_table *t);
/* Counts one kernel lookup of linked (caller's ref taken), found in graph
 * gen; returns the nodeid, or 0 on ENOMEM (ref dropped). */
uint64_t vfuse_node_remember(struct vfuse_table *t, vl_inode_t *linked,
                             uint64_t gen);
/* Subtracts n lookups; frees the node at 0. */
void vfuse_node_forget(struct vfuse_table *t, uint64_t nodeid, uint64_t n);
/* The node's inode with a new ref if it is in graph gen, else NULL with
 * its gfid and type in the outputs. */
vl_inode_t *vfuse_node_get(struct vfuse_table *t, uint64_t nodeid,
                           uint64_t gen, vl_gfid_t *gfid /* OUT */,
                           uint32_t *type /* OUT */);
/* Moves the node to inode (a ref is taken) if gen is newer than its. */
void vfuse_node_update(struct vfuse_table *t, uint64_t nodeid,
                       vl_inode_t *inode, uint64_t gen);
/* A new handle for fd (a ref is taken) opened in graph gen; 0 on ENOMEM.
 * gfid and type describe the open object. */
uint64_t vfuse_handle_new(struct vfuse_table *t, vl_fd_t *fd, uint64_t gen,
                          const vl_gfid_t *gfid, uint32_t type,
                          bool is_dir);
/* As vfuse_node_get for handles; flags, is_dir and pid are outputs too. */
vl_fd_t *vfuse_handle_get(struct vfuse_table *t, uint64_t fh, uint64_t gen,
                          struct vfuse_handle *copy /* OUT */);
void vfuse_handle_update(struct vfuse_table *t, uint64_t fh, vl_fd_t *fd,
                         uint64_t gen);
/* RELEASE: frees the handle. Returns its fd ref (the caller owns it) if it
 * is in graph gen; an fd of another graph is dropped here. */
vl_fd_t *vfuse_handle_free(struct vfuse_table *t, uint64_t fh, uint64_t gen);
/* A graph is going: drops every ref into it (nodes and handles stay). */
void vfuse_table_drop_gen(struct vfuse_table *t, uint64_t gen);
/* Counts for statedump and tests. */
void vfuse_table_counts(struct vfuse_table *t, size_t *n_nodes /* OUT */,
                        size_t *n_handles /* OUT */,
                        size_t *n_in_gen /* OUT */, uint64_t gen);
/* The node hash's shape, for tests: buckets, non-empty ones, longest
 * chain. */
void vfuse_table_hash_stats(struct vfuse_table *t,
                            size_t *n_buckets /* OUT */,
                            size_t *n_used /* OUT */,
                            size_t *max_chain /* OUT */);
/* The node of gfid or NULL; t->lock held. */
struct vfuse_node *vfuse_node_find_locked(struct vfuse_table *t,
                                          const vl_gfid_t *gfid);
/* Flags of a node (0 for the root or nodeid 0); set, then clear. */
uint32_t vfuse_node_flags(struct vfuse_table *t, uint64_t nodeid);
void vfuse_node_set_flags(struct vfuse_table *t, uint64_t nodeid,
                          uint32_t set, uint32_t clear);
/* Stores iatt for the directory dir (a node, or the root) until
 * until_ns, unless a stored one has a later ctime; iatt NULL drops it. */
void vfuse_pattr_store(struct vfuse_table *t, const vl_gfid_t *dir,
                       const struct vl_iatt *iatt, uint64_t until_ns);
/* Takes nodeid's stored attributes (one use) if still valid at now_ns;
 * true when out (and until_ns, when not NULL: the end of their validity)
 * was filled. */
bool vfuse_pattr_take(struct vfuse_table *t, uint64_t nodeid,
                      uint64_t now_ns, struct vl_iatt *out /* OUT */,
                      uint64_t *until_ns /* OUT, may be NULL */);
/* Drops nodeid's stored attributes (a SETATTR or xattr call for it). */
void vfuse_pattr_drop(struct vfuse_table *t, uint64_t nodeid);
void vfuse_list_init(struct vfuse_link *head);
void vfuse_list_add(struct vfuse_link *head, struct vfuse_link *l);
void vfuse_list_del(struct vfuse_link *l);

/* --- fuse-hint.c: name hints (unit-tested) --- */
/* Hint tables are sized here; max 0 = VFUSE_HINT_MAX. */
#define VFUSE_HINT_MAX (64 * 1024)
int vfuse_hint_init(struct vfuse_table *t, size_t max);
void vfuse_hint_fini(struct vfuse_table *t);
/* (parent, name) names nodeid now (replaces an older hint). */
void vfuse_hint_add(struct vfuse_table *t, const vl_gfid_t *parent,
                    const char *name, uint64_t nodeid);
/* As vfuse_hint_add for the node of gfid, if the session has one. */
void vfuse_hint_add_gfid(struct vfuse_table *t, const vl_gfid_t *parent,
                         const char *name, const vl_gfid_t *gfid);
/* Drops the hint for (parent, name) and returns a new ref on its node's
 * inode when that is in graph gen, else NULL. */
vl_inode_t *vfuse_hint_take(struct vfuse_table *t, const vl_gfid_t *parent,
                            const char *name, uint64_t gen);
/* Whether (parent, name) was last seen naming a directory; its GFID in
 * *out. The hint stays. */
bool vfuse_hint_peek_dir(struct vfuse_table *t, const vl_gfid_t *parent,
                         const char *name, vl_gfid_t *out /* OUT */);
/* The node is being freed: its hints go with it. */
void vfuse_hint_drop_node_locked(struct vfuse_table *t,
                                 struct vfuse_node *node);
size_t vfuse_hint_count(struct vfuse_table *t);

/* --- fuse-session.c --- */
/* Finds the session of conf's mount point or creates it (mounts); the
 * instance is attached (sess->n_attached). */
/* fuse-groups.c */
void vfuse_groups_init(struct vfuse_groups *g);
void vfuse_groups_fini(struct vfuse_groups *g);
/* Fills c->groups for c->pid (with c->uid, c->gid set), from the cache
 * or /proc; none when the process is gone or pid is 0. */
void vfuse_groups_fill(struct vfuse_groups *g, uint64_t timeout_ms,
                       struct vl_caller *c);
/* The numbers of a /proc/PID/status text's Groups line, at most max:
 * the count, or -ENOENT (no such line) / -EINVAL. */
int vfuse_groups_parse(const char *status, uint32_t *groups, uint32_t max);

int vfuse_session_attach(struct vfuse_priv *priv,
                         const struct vfuse_conf *conf, vl_err_t *err);
/* Detaches; the last instance unmounts, stops readers and frees it. */
void vfuse_session_detach(struct vfuse_priv *priv);
/* True if priv is the only instance using its session. */
bool vfuse_session_is_sole(struct vfuse_priv *priv);
/* Unmounts and joins the readers (the last instance's teardown). */
void vfuse_session_stop(struct vfuse_session *sess);
/* Stops new calls from picking priv and waits until no call runs in its
 * graph (or the wait is aborted, or bounded and timed out). Blocks in
 * synchronize_rcu: never call it inside an RCU read section or holding
 * sess->lock. */
void vfuse_session_drain(struct vfuse_priv *priv, bool is_bounded);

/* --- fuse-reader.c --- */
int vfuse_readers_start(struct vfuse_session *sess);
void vfuse_readers_stop(struct vfuse_session *sess);
void vfuse_pool_clear(struct vfuse_session *sess);
/* Takes apart and dispatches the n-byte message a reader read into
 * r->buf (a reader thread's step; tests/fuzz/fuzz-fuse.c calls it on
 * made-up messages, with no mount). */
void vfuse_process(struct vfuse_reader *r, size_t n);
/* Each of these writes the answer and ends the call (frees it). They
 * return 0 or the -errno of writing it (-ENOENT: the kernel dropped the
 * request, e.g. interrupted, and did not see the answer). */
int vfuse_reply(struct vfuse_call *call, int status, const struct iovec *iov,
                int n_iov);
int vfuse_reply_err(struct vfuse_call *call, int status);
int vfuse_reply_buf(struct vfuse_call *call, const void *data, size_t len);
/* Ends a call without a reply (the kernel expects none). */
void vfuse_call_end(struct vfuse_call *call);
/* Counts a kernel lookup of linked (ref taken) and returns the nodeid. */
uint64_t vfuse_inode_remember(struct vfuse_call *call, vl_inode_t *linked);
void vfuse_inode_forget(struct vfuse_session *sess, uint64_t nodeid,
                        uint64_t n);
const char *vfuse_arg_str(const struct vfuse_call *call, size_t off,
                          size_t *len /* OUT, may be NULL */);
void vfuse_entry_fill(struct vfuse_priv *priv, struct fuse_entry_out *out,
                      uint64_t nodeid, const struct vl_iatt *iatt);
void vfuse_attr_fill(struct vfuse_priv *priv, struct fuse_attr_out *out,
                     const struct vl_iatt *iatt);
vl_req_t *vfuse_req_new(struct vfuse_call *call, vl_fop_t op);

/* --- fuse-resolve.c --- */
/* Makes the nodeids and fhs of the message objects of the call's graph
 * (lookup by GFID, reopen), then runs fn; answers the call on failure. */
void vfuse_resolve_run(struct vfuse_call *call, vfuse_handler_fn *fn);
/* The resolved inode of want_node[i] / fd of want_fh[i] (borrowed). */
vl_inode_t *vfuse_call_node(struct vfuse_call *call, int i);
vl_fd_t *vfuse_call_fh(struct vfuse_call *call, int i);

/* --- fuse-entry.c: shared by the handlers --- */
/* Longest name one directory entry takes, in bytes (Linux's NAME_MAX);
 * the kernel passes names up to FUSE_NAME_MAX (1024) to us. */
#define VFUSE_NAME_MAX 255
/* Longest symlink target, in bytes without its NUL (PATH_MAX - 1). */
#define VFUSE_TARGET_MAX 4095
/* May name be a new or existing entry's name? 0, -EINVAL (missing, or
 * with a '/') or -ENAMETOOLONG (over VFUSE_NAME_MAX bytes), as a local
 * file system answers; checked before winding, so every layer below
 * (and the wire's name bound) sees only names that fit. */
int vfuse_name_check(const char *name);
vl_inode_t *vfuse_call_inode(struct vfuse_call *call);
void vfuse_send(struct vfuse_call *call, vl_req_t *req, int rc,
                vl_done_fn *done);
vl_done_fn vfuse_status_done;
/* Records an entry reply's name hint and, when the reply carries
 * new_gfid (the object was created by this request), VFUSE_NODE_NO_CAP. */
void vfuse_entry_learn(struct vfuse_call *call, vl_req_t *req,
                       uint64_t nodeid, const struct vl_loc *loc,
                       const vl_gfid_t *new_gfid);


/* --- fuse-pattr.c: parent attributes after namespace ops --- */
uint64_t vfuse_now_ns(void); /* CLOCK_MONOTONIC */
/* After a successful namespace op (create ... rename): keeps the reply's
 * postparent for the parent's next GETATTR, or drops what was kept when
 * the reply has none. */
void vfuse_postparent_learn(struct vfuse_call *call, vl_req_t *req);
/* GETATTR answered from kept attributes (the call is ended): true. */
bool vfuse_getattr_local(struct vfuse_call *call,
                         const struct fuse_getattr_in *in);

/* --- fuse-lru.c: the kernel's nodes bounded (unit-tested) --- */
/* Over t->max_nodes nodes not already asked for: calls name_fn with
 * each name (parent nodeid, name) of the least recently looked-up ones
 * for the kernel to drop; returns how many nodes were named. */
size_t vfuse_lru_pick_locked(struct vfuse_table *t,
                             void (*name_fn)(void *arg, uint64_t parent,
                                             const char *name),
                             void *arg);
/* The same, queueing FUSE_NOTIFY_INVAL_ENTRY for each name. */
void vfuse_lru_trim(struct vfuse_session *sess);
/* lru-limit (0: none); the name hints grow to keep up with it. */
void vfuse_lru_set_limit(struct vfuse_table *t, size_t max_nodes);
/* Statedump lines: lru_limit, lru_evicting, lru_evicted, lru_unnamed. */
void vfuse_lru_dump(struct vfuse_table *t, FILE *out);

/* --- fuse-notify.c --- */
int vfuse_notifier_start(struct vfuse_session *sess);
/* Queues FUSE_NOTIFY_INVAL_ENTRY of name in directory parent; callable
 * with the table's lock held (arg: the session). */
void vfuse_notify_entry_locked(void *sess, uint64_t parent,
                               const char *name);
/* Joins the thread and drops what is still queued; idempotent. */
void vfuse_notifier_stop(struct vfuse_session *sess);
/* A VL_EV_UPCALL that reached mount/fuse: drops the bridge's own caches
 * of it now and queues the kernel's notifications. */
void vfuse_notify_upcall(struct vfuse_priv *priv, const struct vl_upcall *up);
/* The kernel's entry or attribute timeout: md-cache's while it relies on
 * the bricks' invalidations, else conf_ms (the option). */
uint64_t vfuse_cache_timeout_ms(const struct vfuse_priv *priv,
                                uint64_t conf_ms);
vl_xlator_t *vfuse_find_md_cache(const vl_graph_t *graph);

/* --- fuse.c --- */
void vfuse_init_answered(struct vfuse_priv *priv);

/* --- handlers, by opcode --- */
vfuse_handler_fn vfuse_lookup, vfuse_getattr, vfuse_setattr, vfuse_readlink,
    vfuse_symlink, vfuse_mknod, vfuse_mkdir, vfuse_unlink, vfuse_rmdir,
    vfuse_rename, vfuse_rename2, vfuse_link, vfuse_statfs, vfuse_setxattr,
    vfuse_getxattr, vfuse_listxattr, vfuse_removexattr, vfuse_access;
vfuse_handler_fn vfuse_open, vfuse_create, vfuse_read, vfuse_write,
    vfuse_release, vfuse_flush, vfuse_fsync, vfuse_opendir, vfuse_readdir,
    vfuse_readdirplus, vfuse_releasedir, vfuse_fsyncdir, vfuse_getlk,
    vfuse_setlk, vfuse_setlkw, vfuse_fallocate, vfuse_lseek,
    vfuse_copy_file_range;

#endif /* MORTAR_FUSE_H */
