/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fop-args: the typed arguments and the reply of every file operation.
 *
 * Ownership: arguments are BORROWED from whoever wound the request and stay
 * valid until that request is unwound. A translator that keeps anything
 * past its own unwind takes a ref (inode, fd, buf) or copies it. The reply
 * is OWNED by the request and released when the request is freed; move it
 * up with vl_reply_move().
 *
 * Objects are addressed by GFID, never by path: a loc names a parent inode
 * and an entry name, and/or the object's inode. Bricks resolve GFIDs through
 * their handle tree, so path length from the volume root is unlimited.
 */
#ifndef VOL_FOP_ARGS_H
#define VOL_FOP_ARGS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "vol/common.h"

struct vl_inode;
struct vl_fd;
struct vl_buf;

/* Where an object is. Entry fops (lookup by name, create, mkdir, unlink,
 * rename...) use parent + name. Inode fops (stat, setattr, getxattr...) use
 * inode. LOOKUP always has an inode: a fresh unlinked one for a name not
 * seen yet, or the known one when revalidating; a nameless lookup (parent
 * and name NULL) resolves inode->gfid alone. */
struct vl_loc {
    struct vl_inode *parent; /* borrowed; the directory holding name */
    const char *name;        /* borrowed; one path component, no '/' */
    struct vl_inode *inode;  /* borrowed; the object itself, may be NULL */
};

/* A byte-range lock, in the shape of struct flock but with fixed widths. */
struct vl_flock {
    int16_t type;   /* F_RDLCK, F_WRLCK, F_UNLCK */
    int16_t whence; /* always SEEK_SET once it reaches a brick */
    int64_t start;  /* first byte */
    int64_t len;    /* 0 = to end of file */
    int32_t pid;    /* pid of the holder (reported by F_GETLK) */
};

/* SETATTR valid bits. */
#define VL_SET_MODE (1u << 0)
#define VL_SET_UID (1u << 1)
#define VL_SET_GID (1u << 2)
#define VL_SET_SIZE (1u << 3)
#define VL_SET_ATIME (1u << 4)     /* to attr.atime / atime_ns */
#define VL_SET_MTIME (1u << 5)     /* to attr.mtime / mtime_ns */
#define VL_SET_ATIME_NOW (1u << 6) /* to the brick's current time */
#define VL_SET_MTIME_NOW (1u << 7)
#define VL_SET_CTIME (1u << 8)
#define VL_SET_KILL_SUIDGID (1u << 9) /* clear setuid/setgid as chown does */

/* INODELK / ENTRYLK commands. */
enum vl_lock_cmd {
    VL_LOCK_TRY = 0,  /* fail with -EAGAIN if it would block */
    VL_LOCK_WAIT = 1, /* queue until granted */
    VL_LOCK_UNLOCK = 2,
};

/* LK: cmd is F_GETLK, F_SETLK or F_SETLKW. is_flock says the lock came
 * from flock(2): whole-file, owned by the open file, not the process. */
struct vl_xattrop_args;
struct vl_lookup_args {
    struct vl_loc loc;
    /* Content wanted (quick-read): if the object is a regular file of at
     * most content_max bytes, the brick answers its whole content in
     * reply.buf/data/count, read with the attributes in reply.iatt from
     * the same open file. 0 = no content (the old behaviour). */
    uint32_t content_max;
    /* One xattr wanted with the answer (distribute's layout of a
     * directory: one round trip instead of a lookup and a getxattr);
     * borrowed, NULL = none. See reply.xattr_status. */
    const char *xattr_name;
    /* Named lookup: the directory the caller last saw under this name
     * (mount/fuse's name hints), null when none. Only a hint: the name
     * may name something else by now. distribute then asks every
     * subvolume at once instead of the hashed one first. */
    vl_gfid_t dir_hint;
    /* An XATTROP that only reads (VL_XATTROP_ADD32 of zeros, keys only:
     * no loc, no fd) to apply to the object found, under the same lock a
     * plain XATTROP takes (cluster/replicate's records with its lookup:
     * one round trip instead of two). Borrowed, NULL = none. The answer's
     * reply.has_xop says it was tried (only on a found object),
     * reply.xop_status its result and with 0 reply.xop_values/
     * xop_values_len the values; a translator that does not know it
     * answers the lookup alone (has_xop false): the caller then sends the
     * XATTROP itself. */
    const struct vl_xattrop_args *xop;
};
struct vl_stat_args { struct vl_loc loc; struct vl_fd *fd; /* fd may be NULL */ };
struct vl_setattr_args {
    struct vl_loc loc;
    struct vl_fd *fd;    /* may be NULL: then by loc.inode */
    struct vl_iatt attr; /* new values, for the fields in valid */
    uint32_t valid;      /* VL_SET_* */
};
struct vl_access_args { struct vl_loc loc; int32_t mask; };
struct vl_readlink_args { struct vl_loc loc; size_t size; };
struct vl_mknod_args {
    struct vl_loc loc; /* parent + name; inode is the fresh inode */
    uint32_t mode; uint64_t rdev; uint32_t umask;
    vl_gfid_t gfid;    /* GFID to give the new object (client-generated) */
};
struct vl_mkdir_args {
    struct vl_loc loc; uint32_t mode; uint32_t umask; vl_gfid_t gfid;
    /* Optional xattr the brick sets on the new directory before it
     * answers (distribute's layout: one round trip less). NULL: none. */
    const char *xattr_name;
    const void *xattr_value; /* borrowed; xattr_size bytes */
    size_t xattr_size;       /* at most 64 KiB on the wire */
    /* Ask for a lease on the new (empty) directory: the brick tells this
     * client when anyone else changes its entries (features/upcall;
     * reply.is_leased says whether it was granted). */
    bool want_lease;
};
struct vl_unlink_args { struct vl_loc loc; uint32_t flags; };
struct vl_rmdir_args { struct vl_loc loc; uint32_t flags; };
struct vl_symlink_args {
    struct vl_loc loc; const char *target; uint32_t umask; vl_gfid_t gfid;
};
struct vl_rename_args {
    struct vl_loc oldloc; /* parent, name and inode of the source */
    struct vl_loc newloc; /* parent and name; inode of a replaced target or NULL */
    uint32_t flags;       /* RENAME_NOREPLACE, RENAME_EXCHANGE */
};
struct vl_link_args {
    struct vl_loc oldloc; /* inode of the existing object */
    struct vl_loc newloc; /* parent + name of the new name */
};
struct vl_create_args {
    struct vl_loc loc; /* parent + name; inode is the fresh inode */
    int32_t flags;     /* open(2) flags */
    uint32_t mode; uint32_t umask;
    vl_gfid_t gfid;
    struct vl_fd *fd;  /* fresh fd on loc.inode, filled in by the graph */
};
struct vl_open_args { struct vl_loc loc; int32_t flags; struct vl_fd *fd; };
struct vl_read_args { struct vl_fd *fd; size_t size; off_t offset; uint32_t flags; };
struct vl_write_args {
    struct vl_fd *fd;
    const struct iovec *iov; /* borrowed data */
    int n_iov;
    off_t offset;
    uint32_t flags;          /* open flags in force for this write (O_APPEND...) */
    struct vl_buf *buf;      /* optional buffer backing iov; ref it to keep */
};
struct vl_flush_args { struct vl_fd *fd; };
struct vl_fsync_args { struct vl_fd *fd; bool datasync; };
/* list_size > 0 asks for the directory's first batch of entries with the
 * open, as a readdirplus of list_size bytes (and content_max, see
 * vl_readdir_args) at offset 0 would give them: the reply then has
 * has_listing and the batch in entries (and buf). A translator may ignore
 * it (storage/posix does; protocol/server answers it, so a listing costs
 * one round trip less). 0 = no listing. */
struct vl_opendir_args {
    struct vl_loc loc;
    struct vl_fd *fd;
    uint32_t list_size;
    uint32_t content_max;
};
struct vl_readdir_args {
    struct vl_fd *fd;
    size_t size;   /* reply budget in bytes, as FUSE asks */
    off_t offset;  /* 0 or a d_off cookie from an earlier entry */
    bool plus;     /* readdirplus: fill iatt of each entry */
    /* Content wanted (quick-read; with plus only): each regular file of
     * at most content_max bytes comes with its whole content (see struct
     * vl_dirent has_content), read from the same open file as the entry's
     * attributes; the records still fill size, records and content
     * together stay within max(size, 256 KiB) (storage/posix), so a reply
     * stays bounded. 0 = no content (the old behaviour). */
    uint32_t content_max;
};
struct vl_statfs_args { struct vl_loc loc; };
struct vl_setxattr_args {
    struct vl_loc loc; const char *name; const void *value; size_t size; int32_t flags;
};
struct vl_getxattr_args {
    struct vl_loc loc;
    const char *name; /* NULL = list names */
    size_t size;      /* caller's buffer; 0 = only ask for the length */
};
struct vl_removexattr_args { struct vl_loc loc; const char *name; };
struct vl_lk_args {
    struct vl_fd *fd; int32_t cmd; struct vl_flock flock; bool is_flock;
};
/* Compound lock + xattrop (cluster/replicate's lock and pre-op in one
 * round trip, doc/replicate.md "Transactions"): an INODELK or ENTRYLK
 * (TRY or WAIT) whose xop is not NULL asks the brick to apply that
 * XATTROP once the lock is granted, winding it down the brick graph. The
 * answer's status is the lock's; reply.has_xop says the xattrop was
 * tried (only after a grant), reply.xop_status its result, and with 0
 * reply.xattr/xattr_len hold its new values as an XATTROP's answer. A
 * translator that does not know xop answers the lock alone (has_xop
 * false): the caller then sends the xattrop itself. */
struct vl_xattrop_args;
struct vl_inodelk_args {
    const char *domain; /* lock namespace, e.g. the translator's name */
    struct vl_loc loc;  /* inode */
    enum vl_lock_cmd cmd;
    struct vl_flock flock;
    const struct vl_xattrop_args *xop; /* borrowed; NULL: none */
};
struct vl_entrylk_args {
    const char *domain;
    struct vl_loc loc; /* parent inode + name; name NULL = the whole directory */
    enum vl_lock_cmd cmd;
    int16_t type;      /* F_RDLCK or F_WRLCK */
    const struct vl_xattrop_args *xop; /* borrowed; NULL: none (above) */
};
struct vl_fallocate_args {
    struct vl_fd *fd; int32_t mode; /* FALLOC_FL_* */ off_t offset; off_t len;
};
struct vl_copy_file_range_args {
    struct vl_fd *fd_in; off_t off_in;
    struct vl_fd *fd_out; off_t off_out;
    size_t len; uint32_t flags;
};
struct vl_lseek_args { struct vl_fd *fd; off_t offset; int32_t whence; };

/* XATTROP: atomic arithmetic on xattrs (cluster/replicate's pending
 * counters, doc/replicate.md "On-disk records"). The brick, under a lock
 * of the object, reads each named xattr (missing = zeros), adds the given
 * array element-wise, writes the result back, or removes the xattr when
 * the result is all zeros, and answers the new values of all n keys:
 * reply.xattr holds them concatenated in the order of names, sizes[i]
 * bytes each, reply.xattr_len the total. Addressed by fd when fd is not
 * NULL, by loc.inode otherwise. Errors: -EINVAL for an unknown op, n >
 * VL_XATTROP_MAX, a size not a multiple of 4 or over
 * VL_XATTROP_VALUE_MAX, a NULL name or a name longer than
 * VL_XATTROP_NAME_MAX; -EPERM for a name outside VL_XATTROP_PREFIX. */
#define VL_XATTROP_ADD32 1u /* add arrays of big-endian int32 */
#define VL_XATTROP_OP_MASK 0xffu /* op; the bits above are flags: */
/* Granular entry records (loc.inode a directory, loc.parent the same
 * inode, loc.name a name in it): MARK records the name before the
 * counters change, CLEAR removes the record after. */
#define VL_XATTROP_F_ENTRY_MARK (1u << 8)
#define VL_XATTROP_F_ENTRY_CLEAR (1u << 9)
#define VL_XATTROP_MAX 16u
#define VL_XATTROP_VALUE_MAX 64u
#define VL_XATTROP_NAME_MAX 255u
#define VL_XATTROP_PREFIX "trusted.mortar.rep."
/* Compound xattrop + unlock (replicate's post-op and unlock in one round
 * trip): an XATTROP whose unlock is not NULL asks the brick to release
 * that lock of the caller's lk_owner once the xattrop was applied,
 * whatever its result. The answer's status is the xattrop's;
 * reply.has_unlock says the unlock was done, reply.unlock_status its
 * result. A translator that does not know unlock ignores it (has_unlock
 * false): the caller then unlocks itself. */
struct vl_xattrop_unlock {
    bool is_entry;         /* an entrylk, else an inodelk */
    const char *domain;    /* borrowed; the lock's domain */
    struct vl_loc loc;     /* inodelk: inode; entrylk: parent + name */
    struct vl_flock flock; /* inodelk: the range held */
    int16_t type;          /* entrylk: the type held */
};
struct vl_xattrop_args {
    struct vl_loc loc;
    struct vl_fd *fd;          /* may be NULL: then by loc.inode */
    uint32_t op;               /* VL_XATTROP_ADD32 | VL_XATTROP_F_* */
    uint32_t n;                /* keys, at most VL_XATTROP_MAX */
    const char *const *names;  /* borrowed; n xattr names */
    const void *const *values; /* borrowed; n arrays to add */
    const uint32_t *sizes;     /* bytes of each value, multiple of 4 */
    const struct vl_xattrop_unlock *unlock; /* borrowed; NULL: none */
};

/* RCHECKSUM: one SHA-256 digest per block of a range of an open regular
 * file, so that self-heal copies only the blocks that differ (issue 22).
 * The range [offset, offset + len) is cut into blocks of block_size
 * bytes, the last one shorter when len is not a multiple. The brick
 * answers in reply.iatt the file's attributes (iatt.size: where the data
 * ends) and in reply.sums one record per block that starts before the
 * end of the file, in order (reply.n_sums of them; none for a range at
 * or beyond EOF): a block that reaches past EOF is digested as far as
 * the data goes (its len says how far). A block whose bytes are all
 * zero carries VL_RCHECKSUM_ZERO and no digest (all zeros), whether it
 * is a hole or written zeros, so two copies compare the same either
 * way; VL_RCHECKSUM_HOLE adds that the brick stores no data there (it
 * was not read). Two blocks are equal when their flags' ZERO bits and
 * lens are equal and, without ZERO, their digests.
 * Errors: -EINVAL for an offset < 0 or not a multiple of block_size,
 * len 0 or over VL_RCHECKSUM_LEN_MAX, a block_size that is not a power
 * of two in [VL_RCHECKSUM_BLOCK_MIN, VL_RCHECKSUM_BLOCK_MAX]; -EISDIR
 * and friends as a read would answer. Reads only: not ordered with
 * writes in flight on other fds (the caller holds the locks it needs). */
#define VL_RCHECKSUM_LEN_MAX (4u * 1024 * 1024)
#define VL_RCHECKSUM_BLOCK_MIN 4096u
#define VL_RCHECKSUM_BLOCK_MAX (1024u * 1024)
#define VL_RCHECKSUM_BLOCKS_MAX \
    (VL_RCHECKSUM_LEN_MAX / VL_RCHECKSUM_BLOCK_MIN) /* 1024 */
#define VL_RCHECKSUM_DIGEST_LEN 32u /* SHA-256, full */
#define VL_RCHECKSUM_ZERO (1u << 0) /* every byte zero; no digest */
#define VL_RCHECKSUM_HOLE (1u << 1) /* no data stored (implies ZERO) */
struct vl_rchecksum_args {
    struct vl_fd *fd;
    off_t offset;        /* first byte; a multiple of block_size */
    uint32_t len;        /* bytes, 1 .. VL_RCHECKSUM_LEN_MAX */
    uint32_t block_size; /* a power of two, BLOCK_MIN .. BLOCK_MAX */
};

/* One block of an RCHECKSUM reply. */
struct vl_block_sum {
    uint32_t flags; /* VL_RCHECKSUM_ZERO, VL_RCHECKSUM_HOLE */
    uint32_t len;   /* bytes digested: block_size, less at EOF or range end */
    uint8_t digest[VL_RCHECKSUM_DIGEST_LEN]; /* SHA-256; zeros with ZERO */
};

/* RCHECKSUM's argument bounds, the same at the client, the server and the
 * brick: 0 or -EINVAL. */
static inline int
vl_rchecksum_check(off_t offset, uint32_t len, uint32_t block_size)
{
    if (block_size < VL_RCHECKSUM_BLOCK_MIN
        || block_size > VL_RCHECKSUM_BLOCK_MAX
        || (block_size & (block_size - 1)) != 0)
        return -EINVAL;
    if (len == 0 || len > VL_RCHECKSUM_LEN_MAX)
        return -EINVAL;
    /* (1) no negative offset and (2) blocks aligned to their size, so
     * every caller names the same blocks; (3) the range's end fits. */
    if (offset < 0                                /* (1) */
        || offset % block_size != 0               /* (2) */
        || offset > INT64_MAX - (off_t)len)       /* (3) */
        return -EINVAL;
    return 0;
}


/* The bytes of block number index of an RCHECKSUM of [range_off,
 * range_off + len) in block_size blocks, over a file of file_size bytes:
 * block_size, less for the block the range or the file ends in, 0 for a
 * block at or past either end. The brick and its callers agree on lens
 * through it. */
static inline uint32_t
vl_rchecksum_block_len(off_t range_off, uint32_t len, uint32_t block_size,
                       uint64_t file_size, uint32_t index)
{
    uint64_t start = (uint64_t)range_off + (uint64_t)index * block_size;
    uint64_t end = start + block_size;

    if ((uint64_t)index * block_size >= len || start >= file_size)
        return 0;
    if (end > (uint64_t)range_off + len)
        end = (uint64_t)range_off + len;
    if (end > file_size)
        end = file_size;
    return (uint32_t)(end - start);
}

union vl_fop_args {
    struct vl_lookup_args lookup;
    struct vl_stat_args stat;
    struct vl_setattr_args setattr;
    struct vl_access_args access;
    struct vl_readlink_args readlink;
    struct vl_mknod_args mknod;
    struct vl_mkdir_args mkdir;
    struct vl_unlink_args unlink;
    struct vl_rmdir_args rmdir;
    struct vl_symlink_args symlink;
    struct vl_rename_args rename;
    struct vl_link_args link;
    struct vl_create_args create;
    struct vl_open_args open;
    struct vl_read_args read;
    struct vl_write_args write;
    struct vl_flush_args flush;
    struct vl_fsync_args fsync;
    struct vl_opendir_args opendir;
    struct vl_readdir_args readdir;
    struct vl_statfs_args statfs;
    struct vl_setxattr_args setxattr;
    struct vl_getxattr_args getxattr;
    struct vl_removexattr_args removexattr;
    struct vl_lk_args lk;
    struct vl_inodelk_args inodelk;
    struct vl_entrylk_args entrylk;
    struct vl_fallocate_args fallocate;
    struct vl_copy_file_range_args copy_file_range;
    struct vl_lseek_args lseek;
    struct vl_xattrop_args xattrop;
    struct vl_rchecksum_args rchecksum;
};

/* One directory entry of a READDIR reply. */
struct vl_dirent {
    uint64_t ino;        /* d_ino as the client should see it */
    int64_t off;         /* cookie to continue after this entry */
    uint32_t type;       /* DT_* */
    char *name;          /* owned */
    bool has_iatt;       /* readdirplus filled iatt */
    /* has_iatt is false, yet iatt holds one copy's attributes: a layer
     * below (cluster/replicate) could not vouch for them, so they must
     * not answer anyone, but they still tell what the entry is (a link
     * file of cluster/distribute, which must not be listed). */
    bool is_iatt_unsure;
    struct vl_iatt iatt; /* with plus: attributes incl. gfid */
    /* With args.content_max: the file's whole content (content_len ==
     * iatt.size) is content_len bytes at content_off in buf->data of the
     * reply holding this list (reply.buf; whoever moves the list keeps
     * that buffer with it). false: none sent. */
    bool has_content;
    uint32_t content_len;  /* bytes, with has_content */
    size_t content_off;    /* offset in the reply's buf->data */
};

struct vl_dirent_list {
    struct vl_dirent *ents; /* owned array */
    size_t n;               /* used */
    size_t cap;             /* allocated */
    bool eof;               /* no entries after these */
};

/* The answer to a request. Which fields are meaningful depends on the fop:
 *   iatt:     lookup, stat, setattr (post), mknod, mkdir, symlink, rename
 *             (the moved object), link, create, open (may be zero), write and
 *             fallocate (post), copy_file_range (post of fd_out),
 *             rchecksum (the file's, before its blocks were read)
 *   data:     read (data points into buf; count bytes); lookup with
 *             args.content_max: the file's whole content when buf is not
 *             NULL (count bytes, possibly 0); buf NULL means none was sent
 *   count:    read, write, copy_file_range: bytes; getxattr: value length;
 *             lookup: content bytes when buf is not NULL
 *   entries:  readdir (with args.content_max, buf holds the entries'
 *             content: struct vl_dirent content_off)
 *   link:     readlink
 *   xattr:    getxattr (value, or NUL-separated names when listing);
 *             lookup with args.xattr_name: that xattr's value, xattr_len
 *             bytes, when xattr_status is 0 (-errno otherwise, -ENODATA:
 *             not set; answered only by a successful lookup)
 *             xattrop: the new values of the n keys, concatenated in
 *             the order of args.names (args.sizes[i] bytes each; all
 *             zeros for a key whose xattr is now removed), xattr_len
 *             bytes in all
 *   statvfs:  statfs
 *   flock:    lk F_GETLK
 *   offset:   lseek
 *   sums:     rchecksum: n_sums block records in range order; iatt is
 *             the file's attributes when they were taken
 *   postparent: mknod, mkdir, symlink, link, create, unlink, rmdir, rename:
 *             the attributes of the directory holding the name right after
 *             the op (rename: the old name's), when has_postparent; a
 *             translator that cannot vouch for them clears has_postparent.
 *             On a distributed volume they are one brick's copy of the
 *             directory: mode, uid and gid are exact, times and nlink are
 *             that copy's. mount/fuse answers the kernel's next GETATTR of
 *             the parent from them.
 *   postparent2: rename: the new name's directory, when has_postparent2.
 *   has_listing: opendir with args.list_size: entries (and buf) hold the
 *             first batch of the directory, as a readdirplus at offset 0
 *             with that size would answer; false: no listing came, read
 *             the directory as usual.
 *   is_leased: mkdir with args.want_lease: this client holds a lease on
 *             the new directory (on a distributed volume: from every
 *             brick), broken by a VL_EV_UPCALL when anyone else changes
 *             its entries.
 */
struct vl_reply {
    struct vl_iatt iatt;
    struct vl_iatt postparent;   /* see above; valid if has_postparent */
    bool has_postparent;
    struct vl_iatt postparent2;  /* rename's new parent; if has_postparent2 */
    bool has_postparent2;
    bool is_leased;              /* mkdir with want_lease: lease granted */
    bool has_listing;            /* opendir: entries is its first batch */
    struct vl_buf *buf;          /* owned ref; backs data */
    const char *data;            /* points into buf */
    int64_t count;
    struct vl_dirent_list entries; /* owned */
    char *link;                  /* owned, NUL-terminated */
    char *xattr;                 /* owned */
    uint32_t xattr_len;          /* lookup, xattrop: bytes of xattr */
    int32_t xattr_status;        /* lookup: 0 or -errno, see above */
    bool has_xop;                /* inodelk/entrylk/lookup with args.xop:
                                    the xattrop was tried (lock granted,
                                    object found) */
    int32_t xop_status;          /* ... its result, 0 or -errno */
    char *xop_values;            /* owned; lookup with args.xop: the
                                    values read (xop_values_len bytes) */
    uint32_t xop_values_len;
    bool has_unlock;             /* xattrop with args.unlock: the unlock
                                    was done */
    int32_t unlock_status;       /* ... its result, 0 or -errno */
    struct statvfs statvfs;
    struct vl_flock flock;
    off_t offset;
    struct vl_block_sum *sums;   /* owned (vl_malloc'd); rchecksum */
    uint32_t n_sums;             /* rchecksum: records in sums */
};

/* Frees what the reply owns and zeroes it. */
void vl_reply_clear(struct vl_reply *reply);

/* Appends an entry (name copied); returns 0 or -ENOMEM. */
int vl_dirent_list_add(struct vl_dirent_list *list, uint64_t ino, int64_t off,
                       uint32_t type, const char *name,
                       const struct vl_iatt *iatt /* NULL without plus */);
void vl_dirent_list_clear(struct vl_dirent_list *list);

#endif /* VOL_FOP_ARGS_H */
