/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix.h: private types of storage/posix, shared by its source files.
 *
 *   posix.c         class, options, init/fini, forget/release, nosys fops
 *   posix-handle.c  GFID xattr, handle tree, GFID -> object resolution
 *   posix-entry.c   lookup and the namespace fops (create, mkdir, rename...)
 *   posix-inode.c   stat, setattr, access, readlink, xattrs, statfs
 *   posix-data.c    open, read, write, flush, fsync, fallocate,
 *                   copy_file_range, lseek
 *   posix-dir.c     opendir, readdir
 *   posix-janitor.c deleted files' handles removed after the reply; the
 *                   orphan-handle sweep after a crash
 *   posix-xattrop.c xattrop: atomic add on replication's counters
 *   posix-index.c   the heal index .mortar/index/ (xattrop, entry-changes)
 *   posix-index-boot.c  the index's boot marker; its rebuild after a
 *                   machine crash
 *
 * An object on the brick is reached as a pair (atfd, rel): a directory
 * descriptor and a relative name such that fstatat(atfd, rel,
 * AT_SYMLINK_NOFOLLOW) names exactly that object. Directories are
 * (own O_PATH fd, "."), non-directories (handles dir, "xx/yy/<gfid>") or
 * (parent O_PATH fd, name). No full path from the brick root is ever
 * built, so depth below the root is unlimited.
 */
#ifndef MORTAR_POSIX_H
#define MORTAR_POSIX_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "vol/vol.h"

#define POSIX_GFID_XATTR "trusted.mortar.gfid"
#define POSIX_XATTR_PREFIX "trusted.mortar."
/* cluster/distribute's link files and migration markers carry it (the
 * name of the subvolume holding the data); a listing without attributes
 * leaves them out (posix-dir.c). */
#define POSIX_LINKTO_XATTR "trusted.mortar.dht.linkto"
#define POSIX_META_DIR ".mortar"
#define POSIX_HANDLES_DIR "handles"
#define POSIX_UNLINK_DIR "unlink"
#define POSIX_INDEX_DIR "index"           /* posix-index.c */
#define POSIX_INDEX_XATTROP "xattrop"
#define POSIX_INDEX_ENTRY "entry-changes"
/* index/base.N: the inode every index entry is a hard link of. */
#define POSIX_INDEX_BASE "base"
/* On a record directory entry-changes/<dir>: its names are not all. */
#define POSIX_INDEX_FULL_XATTR "trusted.mortar.full"
/* The virtual GETXATTR of a directory's records (posix_index_entry_list):
 * POSIX_INDEX_LIST_NAMES then the names, each NUL-terminated, or
 * POSIX_INDEX_LIST_FULL alone (heal must list the whole directory). */
#define POSIX_INDEX_ENTRY_VKEY "trusted.mortar.index.entry-changes"
#define POSIX_INDEX_LIST_NAMES 'N'
#define POSIX_INDEX_LIST_FULL 'F'
/* Stripe locks of xattrop (posix-xattrop.c). */
#define POSIX_XATTROP_STRIPES 64
/* "xx/yy/" + 36 characters + NUL */
#define POSIX_HANDLE_REL_LEN (6 + VL_GFID_STR_LEN)
/* Free-space answers of posix_space_check are reused this long. */
#define POSIX_SPACE_CACHE_MS 1000
/* One bit per handle directory xx/yy known to exist. */
#define POSIX_HANDLE_DIRS 65536
/* "/proc/self/fd/NNNNNNNNNN/" + rel */
#define POSIX_PROC_PATH_LEN (32 + NAME_MAX + 1)
#define POSIX_XATTR_SIZE_MAX (64 * 1024) /* Linux XATTR_SIZE_MAX */
/* Handles of deleted files waiting for the janitor, at most (more: the
 * unlink removes its handle itself). */
#define POSIX_JANITOR_CAP 8192
/* The janitor collects a batch this long after its first item. */
#define POSIX_JANITOR_BATCH_MS 10
/* Removed directories' fds whose close waits for the janitor, at most
 * (more: rmdir closes its fd itself). */
#define POSIX_JANITOR_FD_CAP 256

enum posix_mem_type {
    POSIX_MT_MISC = 0,
    POSIX_MT_PRIV,
    POSIX_MT_CHAIN,
    POSIX_MT_XATTR,
    POSIX_MT_LINK,
    POSIX_MT_DIRBUF,
    POSIX_MT_JANITOR,
    POSIX_MT_RCHECKSUM,
    POSIX_MT_DIRRING,
};

/* Parsed options (xl->conf); immutable while the graph runs. */
struct posix_conf {
    char *directory;      /* owned by the conf: the brick directory */
    double reserve;       /* percent of the brick kept free */
    bool is_fsync_on_close; /* flush() fsyncs the file */
};

/* A deleted file's handle waiting for the janitor. */
struct posix_janitor_item {
    vl_gfid_t gfid; /* the file's GFID: its handle .mortar/handles/... */
    ino_t ino;      /* its inode: another inode there (GFID reused) stays;
                       0: a removed directory's handle symlink */
    int fd;         /* owned, or -1: the removed directory's last fd, whose
                       close frees its inode (ino 0 only) */
};

/* The janitor (posix-janitor.c): removes the handles of deleted files
 * after their unlink answered, and sweeps orphan handles after a crash.
 * Fields after lock are guarded by it unless said otherwise. */
struct posix_janitor {
    pthread_mutex_t lock;       /* guards the queue and the flags */
    pthread_cond_t cond;        /* to the thread: work, flush or stop */
    pthread_cond_t idle_cond;   /* from the thread: queue empty */
    pthread_mutex_t remove_lock; /* held across the check and unlink of
                                    one handle, and by posix_janitor_claim
                                    callers replacing an orphan handle */
    struct posix_janitor_item *ring; /* owned; POSIX_JANITOR_CAP items,
                                        set by start (immutable pointer) */
    unsigned head;              /* first queued item in ring */
    unsigned n;                 /* items queued */
    unsigned n_fds;             /* queued items holding an fd */
    pthread_t thread;           /* the janitor thread while is_running */
    bool is_running;            /* set by start, cleared by stop (only
                                   they write it; read by enqueue) */
    bool is_held;               /* fault point janitor-hold (immutable) */
    bool is_sweep_wanted;       /* the last stop was not clean (immutable) */
    bool is_swept;              /* the sweep completed */
    bool is_stopping;           /* stop asked: drain and exit */
    bool is_flushing;           /* posix_janitor_flush waits: no batching */
    bool is_idle;               /* the thread waits for work */
    unsigned long n_queued;     /* statistics for dump and tests */
    unsigned long n_removed;
    unsigned long n_swept;
    unsigned long n_put_back;   /* fresh directory handles a sweep's
                                   removal took aside and put back */
};

/* The heal index's crash check (posix-index-boot.c): the boot the
 * brick runs in, and the rebuild of the index after a machine crash. */
#define POSIX_BOOT_ID_MAX 64
struct posix_index_boot {
    char boot_id[POSIX_BOOT_ID_MAX]; /* this boot's id (immutable) */
    pthread_t thread;           /* the rebuild while is_running */
    bool is_running;            /* set by start, cleared by stop */
    atomic_bool is_stopping;    /* stop asked: the rebuild ends early */
    atomic_bool is_done;        /* the index is whole (no rebuild wanted,
                                   or it finished) */
    atomic_ulong n_seen;        /* objects the rebuild examined */
    atomic_ulong n_made;        /* records it made (entries, full marks) */
};

/* Runtime state (xl->priv), set up by init and immutable afterwards,
 * except the atomics at the end (caches shared by all threads). */
/* A name being made by a creating fop of this brick (posix-making.c);
 * lives on that fop's stack. */
struct posix_making {
    vl_gfid_t parent;            /* the parent directory's GFID */
    const char *name;            /* borrowed from the fop's loc */
    struct posix_making *next;   /* (making_lock) next in the list */
};

struct posix_priv {
    int root_fd;     /* owned; O_RDONLY|O_DIRECTORY fd of the brick root */
    int handles_fd;  /* owned; O_PATH fd of .mortar/handles */
    int unlink_fd;   /* owned; O_PATH fd of .mortar/unlink, where handles
                        of unlinked but still open files wait */
    dev_t dev;       /* device of the brick root: objects never leave it */
    long max_cached; /* cap on cached directory fds (half of NOFILE) */
    atomic_long n_cached; /* directory fds cached in inode ctxs now */
    mode_t proc_umask; /* the process's umask (from /proc at init): what
                          the kernel strips from a create's mode */
    uid_t euid;        /* the process's ids: a new object's owner... */
    gid_t egid;        /* ...and group outside setgid directories */
    /* Free-space check cache: result and when (CLOCK_MONOTONIC ms + 1,
     * 0 = never) it was taken. */
    atomic_int space_rc;
    _Atomic uint64_t space_at_ms;
    /* Handle directories .mortar/handles/xx/yy that exist (bit xx*256+yy),
     * so creates skip two mkdirat(EEXIST). Bits are only a hint: a
     * handle link failing with ENOENT clears its bit and mkdirs again. */
    atomic_ulong handle_dirs[POSIX_HANDLE_DIRS / (8 * sizeof(unsigned long))];
    /* Same for the first level .mortar/handles/xx (bit xx). */
    atomic_ulong handle_dirs1[256 / (8 * sizeof(unsigned long))];
    struct posix_janitor janitor; /* its own locks; see above */
    /* Listing counters (statedump): entries listed, the stats listings
     * made for them (readdirplus: one per name; names only: only for a
     * DT_UNKNOWN type) and link files left out of names-only listings. */
    atomic_ulong n_rd_entries;
    atomic_ulong n_rd_stats;
    atomic_ulong n_rd_linkfiles;
    /* Names being made right now (posix-making.c). */
    pthread_mutex_t making_lock;  /* guards the three below */
    pthread_cond_t making_cond;   /* a making fop ended (waiters only) */
    struct posix_making *making;  /* (making_lock) list, newest first */
    unsigned n_making_waiters;    /* (making_lock) lookups waiting */
    /* The heal index (posix-index.c): O_RDONLY fds (fsync-able) of
     * .mortar/index, .mortar/index/xattrop and
     * .mortar/index/entry-changes; the number N of the base file
     * index/base.N entries are linked to now (the next one once its link
     * count is full). */
    int index_fd;
    int index_xattrop_fd;
    int index_entry_fd;
    atomic_uint index_base;
    /* Entries are fsynced as they are made: only when the boot id, which
     * tells a machine crash from a brick's (posix-index-boot.c), cannot
     * be read (set by init, immutable). */
    bool is_index_synced;
    struct posix_index_boot index_boot; /* posix-index-boot.c */
    /* xattrop's locks: one object's xattrops take the stripe of its
     * GFID, so they never interleave (posix-xattrop.c). */
    pthread_mutex_t xattrop_locks[POSIX_XATTROP_STRIPES];
};

/* Per inode (vl_inode_ctx), guarded by inode->lock. Only directories
 * cache a descriptor; it follows the directory across renames because it
 * names the directory itself, not a path. */
struct posix_inode_ctx {
    int dirfd;       /* owned O_PATH fd of the directory when has_dirfd
                        or is_dirfd_dropping */
    bool has_dirfd;  /* dirfd is valid; closed by forget() */
    unsigned n_open; /* open non-directory fds (open/create - release) */
    bool is_parked;  /* handle parked in .mortar/unlink while open: the
                        release that ends n_open removes it */
    unsigned n_dirfd_users; /* fops using dirfd itself (leased, no dup) */
    bool is_dirfd_dropping; /* uncached while leased: the last user
                               closes dirfd */
};

/* Per fd (vl_fd_ctx). Set once by open/create/opendir under fd->lock and
 * immutable until release(), which runs when no request holds the fd. */
struct posix_fd_ctx {
    int os_fd;            /* owned; the brick's open file or directory */
    bool is_open;         /* os_fd is valid */
    bool is_dir;          /* opened by opendir */
    pthread_mutex_t dir_lock; /* serialises lseek+getdents on a directory */
    uint64_t dir_pos;     /* directories, under dir_lock: the cookie
                             the stream stands after (posix-dir.c) */
    off_t dir_kpos;       /* under dir_lock: the kernel's offset matching
                             dir_pos */
    uint64_t dir_next;    /* under dir_lock: the cookie the next entry
                             read gets (never one given before); 0 until
                             the first readdir */
    off_t *dir_ring;      /* owned, under dir_lock, or NULL: the kernel's
                             offsets of the last cookies given, indexed
                             by cookie & (dir_ring_n - 1) */
    uint32_t dir_ring_n;  /* under dir_lock: entries of dir_ring (0 or a
                             power of 2) */
    uint64_t dir_ring_lo; /* under dir_lock: lowest cookie dir_ring may
                             hold; it holds [lo, dir_next - 1] but at
                             most dir_ring_n of them */
};

/* An object resolved for one fop. */
struct posix_obj {
    int atfd;              /* see the file comment; owned if owns_atfd */
    bool owns_atfd;        /* close atfd in posix_obj_put */
    vl_inode_t *lease;     /* borrowed (the fop holds a ref): atfd is its
                              cached dirfd, leased until posix_obj_put */
    vl_xlator_t *lease_xl; /* whose inode ctx holds the lease */
    char rel[NAME_MAX + 1]; /* name relative to atfd */
    struct stat st;        /* lstat of the object when resolved */
    vl_gfid_t gfid;        /* its GFID (null if it has none yet) */
};

static inline struct posix_priv *
posix_priv(vl_xlator_t *xl)
{
    return xl->priv;
}


/* posix-handle.c */
void posix_handle_rel(const vl_gfid_t *gfid, char *buf /* OUT */);
void posix_proc_path(int atfd, const char *rel, char *buf /* OUT */);
int posix_gfid_get(int atfd, const char *rel, vl_gfid_t *out /* OUT */);
int posix_gfid_set(int atfd, const char *rel, const vl_gfid_t *gfid);
/* getxattr of (atfd, rel) itself, not following a symlink: getxattrat(2)
 * where the kernel has it, else through /proc/self/fd. size 0 asks for the
 * value's size. Bytes read, or -errno. */
ssize_t posix_xattr_get_at(int atfd, const char *rel, const char *name,
                           void *buf, size_t size);
/* setxattr, removexattr and listxattr of (atfd, rel) itself, likewise
 * (setxattrat(2)... where the kernel has them); 0 / bytes, or -errno. */
int posix_xattr_set_at(int atfd, const char *rel, const char *name,
                       const void *value, size_t size, int flags);
int posix_xattr_remove_at(int atfd, const char *rel, const char *name);
ssize_t posix_xattr_list_at(int atfd, const char *rel, char *buf,
                            size_t size);
/* Sets the GFID xattr through an open fd (XATTR_CREATE); 0 or -errno. */
int posix_gfid_fset(int fd, const vl_gfid_t *gfid);
/* True if gfid's handle directory xx/yy is known to exist. */
bool posix_handle_dir_known(vl_xlator_t *xl, const vl_gfid_t *gfid);
/* Marks the handle directories that exist on the disk as known (two
 * levels of getdents; run by the janitor thread at start). */
void posix_handle_dirs_prime(vl_xlator_t *xl);
/* Called for each handle directory xx/yy: index = xx << 8 | yy, name
 * "yy" inside parent_fd (the xx directory, open for the call only). */
typedef void (*posix_handle_dir_fn)(vl_xlator_t *xl, unsigned index,
                                    int parent_fd, const char *name,
                                    void *arg);
/* Walks the handle tree's xx/yy directories (the prime of the known-dir
 * bitmaps and the janitor's sweep); 0 or -errno if the tree cannot be
 * opened. */
int posix_handle_walk_dirs(vl_xlator_t *xl, posix_handle_dir_fn fn,
                           void *arg);
int posix_handle_create(vl_xlator_t *xl, int atfd, const char *rel,
                        const struct stat *st, const vl_gfid_t *gfid,
                        const vl_gfid_t *parent, const char *name);
int posix_handle_dir_update(vl_xlator_t *xl, const vl_gfid_t *gfid,
                            const vl_gfid_t *parent, const char *name);
void posix_handle_unlink_if_last(vl_xlator_t *xl, const vl_gfid_t *gfid);
void posix_handle_drop(vl_xlator_t *xl, const vl_gfid_t *gfid);
unsigned posix_inode_open_count(vl_xlator_t *xl, const vl_gfid_t *gfid,
                                bool is_parking);
void posix_handle_remove_dir(vl_xlator_t *xl, const vl_gfid_t *gfid);
int posix_handle_ensure(vl_xlator_t *xl, int atfd, const char *rel,
                        const struct stat *st, const vl_gfid_t *gfid,
                        const vl_gfid_t *parent, const char *name);
/* Parses a directory handle's target into parent GFID and name (posix-
 * handle.c); 0 or -EINVAL. */
int posix_dir_target_parse(const char *target, vl_gfid_t *parent /* OUT */,
                           char *name /* OUT, NAME_MAX + 1 */);

/* posix-resolve.c */
/* A new O_PATH fd of the directory with this GFID (its handle chain);
 * 0 or -errno (-ESTALE: GFID unknown). */
int posix_dir_resolve(vl_xlator_t *xl, const vl_gfid_t *gfid, int *out);
/* *out: whether gfid's handle is a directory's (a symlink). */
int posix_handle_is_dir(vl_xlator_t *xl, const vl_gfid_t *gfid, bool *out);
int posix_dirfd_get(vl_xlator_t *xl, vl_inode_t *inode,
                    struct posix_obj *obj /* OUT: atfd and its owner */);
void posix_dirfd_uncache(vl_xlator_t *xl, const vl_gfid_t *gfid);
/* Takes the cached fd of gfid's directory out of the cache and gives it
 * to the caller (-1 if none, or if fops still use it: the last closes). */
int posix_dirfd_take(vl_xlator_t *xl, const vl_gfid_t *gfid);
void posix_dirfd_drop_locked(vl_xlator_t *xl, struct posix_inode_ctx *ctx);
int posix_obj_from_inode(vl_xlator_t *xl, vl_inode_t *inode,
                         struct posix_obj *obj /* OUT */);
int posix_obj_parent(vl_xlator_t *xl, vl_inode_t *parent, const char *name,
                     bool is_create, struct posix_obj *obj /* OUT */);
int posix_obj_stat(struct posix_obj *obj);
int posix_obj_from_entry(vl_xlator_t *xl, vl_inode_t *parent,
                         const char *name, struct posix_obj *obj /* OUT */);
int posix_obj_from_loc(vl_xlator_t *xl, const struct vl_loc *loc,
                       struct posix_obj *obj /* OUT */);
void posix_obj_put(struct posix_obj *obj);
int posix_name_check(vl_inode_t *parent, const char *name, bool is_create);
void posix_iatt_fill(const struct stat *st, const vl_gfid_t *gfid,
                     struct vl_iatt *out /* OUT */);
void posix_iatt_fill_open(vl_xlator_t *xl, const struct stat *st,
                          const vl_gfid_t *gfid, struct vl_iatt *out /* OUT */);
int posix_fd_os(vl_xlator_t *xl, vl_fd_t *fd, int *out /* OUT */);
int posix_space_check(vl_xlator_t *xl);

/* Fops, one file per concern. */
void posix_fop_lookup(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_mknod(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_mkdir(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_symlink(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_create(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_unlink(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_rmdir(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_rename(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_link(vl_xlator_t *xl, vl_req_t *req);

void posix_fop_stat(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_setattr(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_access(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_readlink(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_statfs(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_setxattr(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_getxattr(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_removexattr(vl_xlator_t *xl, vl_req_t *req);

void posix_fop_open(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_read(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_write(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_flush(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_fsync(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_fallocate(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_copy_file_range(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_lseek(vl_xlator_t *xl, vl_req_t *req);

void posix_fop_opendir(vl_xlator_t *xl, vl_req_t *req);
void posix_fop_readdir(vl_xlator_t *xl, vl_req_t *req);

void posix_fop_xattrop(vl_xlator_t *xl, vl_req_t *req);
/* A lookup's carried read of the records (vl_lookup_args.xop: ADD32 of
 * zeros, keys only) of obj, the object it found (borrowed, GFID known),
 * under the stripe lock XATTROP takes and with its index upkeep; sets
 * reply->has_xop, xop_status and xop_values. */
void posix_xattrop_lookup_read(vl_xlator_t *xl,
                               const struct vl_xattrop_args *a,
                               const struct posix_obj *obj,
                               struct vl_reply *reply);
void posix_fop_rchecksum(vl_xlator_t *xl, vl_req_t *req);
/* RCHECKSUM's block loop (posix-rchecksum.c), visible for the unit
 * tests: the digests of the blocks of [offset, offset + len) of os_fd, a
 * file of file_size bytes, into out (room for ceil(len / block_size)
 * records) with buf (block_size bytes) to read into; *n_out gets the
 * records filled. 0 or -errno. */
int posix_rchecksum_blocks(int os_fd, off_t offset, uint32_t len,
                           uint32_t block_size, uint64_t file_size,
                           unsigned char *buf, struct vl_block_sum *out,
                           uint32_t *n_out /* OUT */);
/* Tests only (NULL otherwise): called by xattrop under the object's lock
 * after the index entry is made and before the xattrs are written, and
 * after they are written and before the entry is removed; and, in a
 * lookup's carried read, after the values were read and before the
 * object's GFID is checked again (a test replaces the name there). */
extern void (*posix_xattrop_test_before_writes)(vl_xlator_t *xl,
                                                const vl_gfid_t *gfid);
extern void (*posix_xattrop_test_after_reads)(vl_xlator_t *xl,
                                              const vl_gfid_t *gfid);
extern void (*posix_xattrop_test_after_writes)(vl_xlator_t *xl,
                                               const vl_gfid_t *gfid);

/* posix-index.c: the heal index under .mortar/index/. */
/* Makes the directories and opens their fds in priv; 0 or -errno. */
int posix_index_setup(vl_xlator_t *xl);
void posix_index_teardown(struct posix_priv *priv);
/* posix-index-boot.c: at init, after posix_index_setup and the handle
 * tree; the rebuild starts when the machine crashed under the brick (no
 * error: without a boot id or a marker, entries are fsynced). stop: at
 * fini; marks the index clean when it is whole. */
void posix_index_boot_start(vl_xlator_t *xl);
void posix_index_boot_stop(vl_xlator_t *xl);
void posix_index_boot_dump(vl_xlator_t *xl, FILE *out);
/* posix-xattrop.c, for the rebuild: under gfid's stripe lock, the
 * object at path (lgetxattr-able) gets its index entry when one of its
 * trusted.mortar.rep.* counters is nonzero, and a directory whose
 * pending entry counter is nonzero has its entry records marked full;
 * how many records were made, or -errno. */
int posix_xattrop_reindex(vl_xlator_t *xl, const vl_gfid_t *gfid,
                          const char *path, bool is_dir);
/* xattrop/<gfid>: made durably (the directory fsynced when it is new),
 * removed (not fsynced); 0 or -errno. */
int posix_index_add(vl_xlator_t *xl, const vl_gfid_t *gfid);
int posix_index_del(vl_xlator_t *xl, const vl_gfid_t *gfid);
bool posix_index_has(vl_xlator_t *xl, const vl_gfid_t *gfid);
/* entry-changes/<dir>/<name>; 0 or -errno (-EINVAL: not a name). */
int posix_index_entry_add(vl_xlator_t *xl, const vl_gfid_t *dir,
                          const char *name);
int posix_index_entry_del(vl_xlator_t *xl, const vl_gfid_t *dir,
                          const char *name);
/* Marks dir's records full (durably): a change without its name. */
int posix_index_entry_full(vl_xlator_t *xl, const vl_gfid_t *dir);
/* Has dir a record directory (names or the full mark)? */
bool posix_index_entry_has(vl_xlator_t *xl, const vl_gfid_t *dir);
/* Drops every record of dir, names and full mark; 0 or -errno. */
int posix_index_entry_drop(vl_xlator_t *xl, const vl_gfid_t *dir);
/* dir's records as POSIX_INDEX_ENTRY_VKEY's value in buf (size bytes at
 * most; more names than that answer full); 0 or -errno. */
int posix_index_entry_list(vl_xlator_t *xl, const vl_gfid_t *dir, char *buf,
                           size_t size, size_t *len);
/* The object gfid is gone from the brick: drops its records (a failure
 * is logged). */
void posix_index_forget(vl_xlator_t *xl, const vl_gfid_t *gfid);
/* After an unclean stop: drops the records of objects that are gone (a
 * crash between a deletion and its posix_index_forget); how many. */
unsigned long posix_index_sweep(vl_xlator_t *xl);
/* Entries in xattrop/, directories in entry-changes/; -errno. */
long posix_index_count(vl_xlator_t *xl);
long posix_index_entry_dirs(vl_xlator_t *xl);

/* posix-janitor.c */
/* Starts the janitor thread (sweep first after an unclean stop). */
int posix_janitor_start(vl_xlator_t *xl);
/* Drains the queue (unless held), stops the thread, leaves the clean
 * marker when nothing is left to sweep. */
void posix_janitor_stop(vl_xlator_t *xl);
/* Queues the handle of a deleted regular file (no name left, inode ino)
 * or, with ino 0, of a removed directory, for removal; -EBUSY if the
 * file is open here, -EAGAIN if the queue is full, -ENOTCONN without a
 * janitor: the caller removes it itself. */
int posix_janitor_enqueue(vl_xlator_t *xl, const vl_gfid_t *gfid, ino_t ino);
/* Queues a removed directory's handle symlink like enqueue with ino 0,
 * and *fd (its last fd, or -1) to be closed first: the close frees the
 * inode, about 100 us on ext4, which the rmdir's reply need not wait
 * for. On success *fd belongs to the janitor and is set to -1; on
 * failure (as enqueue) it stays the caller's. Beyond POSIX_JANITOR_FD_CAP
 * fds queued, or under the fault point janitor-hold, the fd is closed
 * here and the handle still queued. */
int posix_janitor_enqueue_rmdir(vl_xlator_t *xl, const vl_gfid_t *gfid,
                                int *fd /* IN/OUT */);
/* Before replacing an orphan handle of gfid: takes remove_lock and
 * drops gfid's queued items; posix_janitor_unclaim releases the lock. */
void posix_janitor_claim(vl_xlator_t *xl, const vl_gfid_t *gfid);
void posix_janitor_unclaim(vl_xlator_t *xl);
/* Waits until every queued handle is removed (tests; no-op if held). */
void posix_janitor_flush(vl_xlator_t *xl);
/* Removes orphan regular-file handles (link count 1, unchanged since
 * the call began) and the symlinks of directories that are gone; 0,
 * -EAGAIN when some directory handles stayed undecided (parents kept
 * moving: no clean marker then, the next start sweeps again), or
 * another -errno. */
int posix_janitor_sweep(vl_xlator_t *xl);
/* Tests only (NULL otherwise): called by the sweep between judging a
 * directory handle dead and moving it aside, where a rename's handle
 * update can slip in. */
extern void (*posix_janitor_test_before_aside)(vl_xlator_t *xl,
                                               const vl_gfid_t *gfid);
void posix_janitor_dump(vl_xlator_t *xl, FILE *out);

/* posix-making.c */
/* Tests only (NULL otherwise): called by a lookup after it waited for a
 * fop making the name and before it reads the name again, where another
 * fop may remove and make it again. */
extern void (*posix_lookup_test_after_wait)(vl_xlator_t *xl);
void posix_making_init(struct posix_priv *priv);
void posix_making_fini(struct posix_priv *priv);
/* Registers parent/name as being made by the calling fop (node on its
 * stack) until posix_making_end(node). */
void posix_making_begin(vl_xlator_t *xl, struct posix_making *node,
                        const vl_gfid_t *parent, const char *name);
void posix_making_end(vl_xlator_t *xl, struct posix_making *node);
/* Waits while parent/name is being made; true if it had to wait (then
 * the caller reads the object again). */
bool posix_making_wait(vl_xlator_t *xl, const vl_gfid_t *parent,
                       const char *name);

/* posix-inode.c: may clients use xattr key name? 0 or -errno. */
int posix_xattr_name_check(const char *name);
/* May clients read key name? As above, and replication's counters
 * (trusted.mortar.rep.*), which only xattrop changes. */
int posix_xattr_name_check_read(const char *name);

/* posix-entry.c: open(2) flags the brick passes on for open/create. */
int posix_open_flags(int32_t flags);

/* Stores os_fd in fd's ctx; 0 or -errno (then os_fd is not taken). */
int posix_fd_ctx_set(vl_xlator_t *xl, vl_fd_t *fd, int os_fd, bool is_dir);

#endif /* MORTAR_POSIX_H */
