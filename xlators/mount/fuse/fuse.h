/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mount/fuse private header: configuration, runtime state, the per-message
 * call object and the helpers shared by the bridge's files.
 *
 *   fuse.c        class, options, init/fini/notify, mount, readiness
 *   fuse-reader.c reader threads, message buffers, dispatch, replies,
 *                 INIT/DESTROY/FORGET
 *   fuse-entry.c  name and inode operations (lookup ... xattrs)
 *   fuse-file.c   fd operations (open ... copy_file_range)
 *   fuse-conv.c   pure conversions (attributes, dirents, setattr bits,
 *                 device numbers, locks), unit-tested
 *
 * Nodeids are vl_inode_t pointers (FUSE_ROOT_ID is the table's root) and
 * file handles are vl_fd_t pointers: the kernel hands back what we gave it.
 */
#ifndef MORTAR_FUSE_H
#define MORTAR_FUSE_H

#include <linux/fuse.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vol/vol.h"

/* Messages up to this size are copied out of the reader's buffer; bigger
 * ones (writes, large xattr values) take the buffer with them. */
#define VFUSE_COPY_MAX (16 * 1024)
/* Room for the headers in front of a max_write payload. */
#define VFUSE_HDR_ROOM 4096
/* Big buffers kept for reuse after their call ends. */
#define VFUSE_POOL_MAX 8
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
    bool is_selinux;           /* pass security.selinux down */
    bool is_writeback;         /* FUSE_WRITEBACK_CACHE */
    uint64_t connect_timeout;  /* ms to wait for CHILD_UP */
};

/* Intrusive circular list links; a head is a link pointing at itself. */
struct vfuse_link {
    struct vfuse_link *prev; /* guarded by the list owner's lock */
    struct vfuse_link *next;
};

struct vfuse_reader {
    struct vfuse_priv *priv; /* borrowed */
    pthread_t thread;        /* joined by fini */
    bool is_started;         /* thread was created */
    vl_buf_t *buf;           /* owned ref; the read(2) target */
};

struct vfuse_priv {
    vl_xlator_t *xl;            /* borrowed; this translator */
    int fuse_fd;                /* owned; /dev/fuse, -1 when closed */
    int stop_fd;                /* owned eventfd: wakes readers at stop */
    char *mountpoint;           /* owned; canonical path that we mounted */
    bool is_mounted;            /* mount(2) succeeded, not unmounted yet */
    unsigned bdi_major;         /* st_dev of the mount, for sysfs */
    unsigned bdi_minor;
    bool has_bdi;               /* bdi_major/minor are known */
    vl_inode_t *root;           /* owned ref on the table's root */
    size_t buf_size;            /* bytes of every reader buffer */
    uint32_t max_write;         /* negotiated max_write */
    struct vfuse_reader *readers; /* owned array of n_readers */
    size_t n_readers;
    atomic_bool is_stopping;    /* fini started: readers exit */
    atomic_bool is_gone;        /* the kernel said ENODEV (unmounted) */
    bool is_torn_down;          /* refs dropped at PARENT_DOWN; main
                                   thread only */

    pthread_mutex_t lock;       /* guards everything below */
    pthread_cond_t cond;        /* signalled when n_inflight or
                                   is_timer_cb_due drops */
    vl_buf_t *pool[VFUSE_POOL_MAX]; /* owned refs of spare big buffers */
    size_t n_pool;
    size_t n_inflight;          /* calls alive */
    bool is_init_done;          /* the kernel's INIT is answered */
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
    uint32_t proto_minor;       /* minor the kernel and we agreed on */
    struct vfuse_link inodes;   /* vfuse_inode.link of every inode the
                                   kernel knows (nlookup > 0) */
    struct vfuse_link fds;      /* vfuse_fd.link of every fd the kernel
                                   holds a handle to */
};

/* Lock order: inode->lock, then priv->lock. */
struct vfuse_inode {
    uint64_t nlookup;       /* kernel lookups not yet forgotten; guarded by
                               inode->lock. While > 0 we hold one ref. */
    vl_inode_t *inode;      /* borrowed back pointer, set with link */
    struct vfuse_link link; /* on priv->inodes while nlookup > 0 */
};

/* So that teardown can drop the kernel's handles when it never sends
 * RELEASE (connection aborted with files open). */
struct vfuse_fd {
    vl_fd_t *fd;            /* borrowed back pointer */
    struct vfuse_link link; /* on priv->fds while the kernel holds it */
};

struct vfuse_call;
typedef void vfuse_handler_fn(struct vfuse_call *call);

/* One kernel message and everything needed to answer it. Freed by
 * vfuse_call_end once the reply is written. */
struct vfuse_call {
    struct vfuse_priv *priv;  /* borrowed */
    vl_xlator_t *xl;          /* borrowed; the bridge */
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

/* --- fuse-reader.c --- */
int vfuse_readers_start(struct vfuse_priv *priv);
void vfuse_readers_stop(struct vfuse_priv *priv);
void vfuse_pool_clear(struct vfuse_priv *priv);
/* Each of these writes the answer and ends the call (frees it). They
 * return 0 or the -errno of writing it (-ENOENT: the kernel dropped the
 * request, e.g. interrupted, and did not see the answer). */
int vfuse_reply(struct vfuse_call *call, int status, const struct iovec *iov,
                int n_iov);
int vfuse_reply_err(struct vfuse_call *call, int status);
int vfuse_reply_buf(struct vfuse_call *call, const void *data, size_t len);
/* Ends a call without a reply (the kernel expects none). */
void vfuse_call_end(struct vfuse_call *call);
vl_inode_t *vfuse_inode_peek(struct vfuse_priv *priv, uint64_t nodeid);
uint64_t vfuse_inode_remember(struct vfuse_priv *priv, vl_inode_t *linked);
void vfuse_inode_forget(struct vfuse_priv *priv, uint64_t nodeid, uint64_t n);
const char *vfuse_arg_str(const struct vfuse_call *call, size_t off,
                          size_t *len /* OUT, may be NULL */);
void vfuse_entry_fill(struct vfuse_priv *priv, struct fuse_entry_out *out,
                      uint64_t nodeid, const struct vl_iatt *iatt);
void vfuse_attr_fill(struct vfuse_priv *priv, struct fuse_attr_out *out,
                     const struct vl_iatt *iatt);
vl_req_t *vfuse_req_new(struct vfuse_call *call, vl_fop_t op);
vl_fd_t *vfuse_fd_give(struct vfuse_priv *priv, vl_fd_t *fd);
vl_fd_t *vfuse_fd_take(struct vfuse_priv *priv, uint64_t fh);
void vfuse_drop_kernel_refs(struct vfuse_priv *priv);
void vfuse_list_init(struct vfuse_link *head);

/* --- fuse-entry.c: shared by the handlers --- */
vl_inode_t *vfuse_call_inode(struct vfuse_call *call);
void vfuse_send(struct vfuse_call *call, vl_req_t *req, int rc,
                vl_done_fn *done);
vl_done_fn vfuse_status_done;

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
