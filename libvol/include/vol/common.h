/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * common: small types every part of Mortar shares: GFIDs, file attributes
 * (iatt), the caller's identity, human-readable errors, size constants.
 */
#ifndef VOL_COMMON_H
#define VOL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define VL_KiB (1024ULL)
#define VL_MiB (1024ULL * VL_KiB)
#define VL_GiB (1024ULL * VL_MiB)

#define VL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A GFID is the cluster-wide identity of a file or directory: a 16-byte
 * UUID stored in the "trusted.gfid" xattr on every brick. The root
 * directory is always 00000000-0000-0000-0000-000000000001. */
typedef struct vl_gfid {
    uint8_t bytes[16];
} vl_gfid_t;

#define VL_GFID_STR_LEN 37 /* 36 characters and the NUL */

extern const vl_gfid_t vl_gfid_root;
extern const vl_gfid_t vl_gfid_null;

bool vl_gfid_is_null(const vl_gfid_t *gfid);
bool vl_gfid_is_root(const vl_gfid_t *gfid);
/* Inline: it runs in every hash chain walk (inode tables, mount/fuse's
 * node and name tables). */
static inline bool
vl_gfid_equal(const vl_gfid_t *a, const vl_gfid_t *b)
{
    return memcmp(a->bytes, b->bytes, sizeof(a->bytes)) == 0;
}
void vl_gfid_generate(vl_gfid_t *out /* OUT */);
/* Writes the canonical 36-character form into buf (VL_GFID_STR_LEN). */
char *vl_gfid_to_str(const vl_gfid_t *gfid, char *buf /* OUT */);
/* Returns 0 or -EINVAL. */
int vl_gfid_parse(const char *str, vl_gfid_t *out /* OUT */);
/* A stable 64-bit inode number derived from the GFID (its last 8 bytes),
 * so every client and brick reports the same st_ino. Root gives 1. */
uint64_t vl_gfid_to_ino(const vl_gfid_t *gfid);

/* File attributes as a brick reports them. Times are split into seconds
 * and nanoseconds like the kernel's FUSE attributes. */
struct vl_iatt {
    vl_gfid_t gfid;    /* identity of the object */
    uint64_t ino;      /* vl_gfid_to_ino(gfid) */
    uint32_t mode;     /* S_IFMT type bits and permission bits */
    uint32_t nlink;    /* hard link count */
    uint32_t uid;      /* owner */
    uint32_t gid;      /* group */
    uint64_t rdev;     /* device number for block/char devices */
    uint64_t size;     /* bytes */
    uint64_t blocks;   /* 512-byte blocks allocated */
    uint32_t blksize;  /* preferred I/O size */
    int64_t atime;     /* seconds */
    int64_t mtime;     /* seconds */
    int64_t ctime;     /* seconds */
    uint32_t atime_ns; /* nanoseconds */
    uint32_t mtime_ns; /* nanoseconds */
    uint32_t ctime_ns; /* nanoseconds */
};

/* Identity of whoever issued a request, carried down the graph and over the
 * wire. The brick uses it for ownership of new objects; lock translators
 * use lk_owner and client_id to tell lock holders apart. */
#define VL_MAX_GROUPS 32
struct vl_caller {
    uint32_t uid;                   /* fsuid of the caller */
    uint32_t gid;                   /* fsgid of the caller */
    uint32_t pid;                   /* caller's pid (client side) */
    uint32_t n_groups;              /* valid entries in groups */
    uint32_t groups[VL_MAX_GROUPS]; /* supplementary groups */
    uint64_t lk_owner;              /* POSIX lock owner (FUSE lock_owner) */
    uint64_t client_id;             /* set by protocol/server: connection id */
};

/* caller.pid of Mortar's own requests that must act as root whatever the
 * brick's squash and access rules say: replicate's heal, the self-heal
 * daemon, rebalance (GlusterFS's negative client pids; this is its
 * GF_CLIENT_PID_SELF_HEALD, -6). protocol/server honours it only from a
 * connection it trusts (doc/security.md "Brick access") and rewrites it
 * to 0 from any other, so features/access may trust it. */
#define VL_CALLER_PID_INTERNAL ((uint32_t)-6)

/* A human-readable reason for a failure that a person will read (volfile
 * errors, option errors, graph build). Data-path errors are just -errno. */
typedef struct vl_err {
    char msg[512]; /* NUL-terminated, one line, no trailing period */
} vl_err_t;

/* Sets err->msg (if err is not NULL) with printf formatting. */
void vl_err_set(vl_err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A key/value pair, as read from a volfile "option" line. */
struct vl_kv {
    char *key;   /* owned by whoever owns the array */
    char *value; /* owned by whoever owns the array */
};

#endif /* VOL_COMMON_H */
