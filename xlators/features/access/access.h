/* SPDX-License-Identifier: GPL-2.0-or-later */
/* access: private types of features/access (access.c, access-perm.c). */
#ifndef MORTAR_FEATURES_ACCESS_H
#define MORTAR_FEATURES_ACCESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vol/vol.h"

/* What a check wants of an object (the kernel's MAY_* bits). */
#define ACCESS_MAY_EXEC 1u
#define ACCESS_MAY_WRITE 2u
#define ACCESS_MAY_READ 4u

/* POSIX ACL entry tags, as in system.posix_acl_access (linux/posix_acl.h
 * and posix_acl_xattr.h). */
#define ACCESS_ACL_USER_OBJ 0x01u
#define ACCESS_ACL_USER 0x02u
#define ACCESS_ACL_GROUP_OBJ 0x04u
#define ACCESS_ACL_GROUP 0x08u
#define ACCESS_ACL_MASK 0x10u
#define ACCESS_ACL_OTHER 0x20u
#define ACCESS_ACL_XATTR_VERSION 2u
#define ACCESS_ACL_XATTR "system.posix_acl_access"
/* The most entries an ACL can have: what the largest xattr value the
 * kernel takes (XATTR_SIZE_MAX, 64 KiB) holds after its 4-byte header. */
#define ACCESS_ACL_XATTR_SIZE_MAX 65536u
#define ACCESS_ACL_MAX ((ACCESS_ACL_XATTR_SIZE_MAX - 4u) / 8u)

struct access_acl_entry {
    uint16_t tag;  /* ACCESS_ACL_* */
    uint16_t perm; /* ACCESS_MAY_* bits */
    uint32_t id;   /* uid or gid for USER and GROUP; else unused */
};

/* A parsed ACL: immutable once made, shared by counted references (the
 * inode ctx holds one, each check in flight its own), so a check reads
 * it without the inode's lock and an ACL of any size costs one
 * allocation per change of the xattr, none per check. */
struct access_acl {
    atomic_uint refs;
    uint32_t n;                        /* entries */
    struct access_acl_entry e[];       /* in the xattr's order */
};

/* What a check needs of an object. */
struct access_attr {
    uint32_t mode;       /* S_IFMT and permission bits */
    uint32_t uid;        /* owner */
    uint32_t gid;        /* group */
    bool is_acl_bad;     /* its system.posix_acl_access is malformed: only
                            its owner (and root) pass */
    struct access_acl *acl; /* a reference to its ACL, or NULL: none */
};

/* access-perm.c: the kernel's decisions, pure functions (no I/O). Each
 * returns 0 or the errno the kernel would give (negative). uid 0 is
 * root with CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_CHOWN and CAP_FSETID. */

/* Parses a system.posix_acl_access value into *out (one reference):
 * 0, -EINVAL (malformed: bad version, length, tag or a required entry
 * missing) or -ENOMEM; *out is NULL unless 0. */
int access_acl_parse(const void *buf, size_t len, struct access_acl **out);
/* Another reference to acl (NULL stays NULL). */
struct access_acl *access_acl_ref(struct access_acl *acl);
/* Drops a reference (NULL is ignored); the last frees it. */
void access_acl_unref(struct access_acl *acl);
bool access_caller_in_group(const struct vl_caller *c, uint32_t gid);
/* want (ACCESS_MAY_*) on the object: 0 or -EACCES. */
int access_permission(const struct vl_caller *c, const struct access_attr *a,
                      unsigned want);
/* Removing or replacing victim in directory dir: -EPERM when dir is
 * sticky and the caller owns neither. */
int access_sticky(const struct vl_caller *c, const struct access_attr *dir,
                  const struct access_attr *victim);
/* SETATTR of valid (VL_SET_*) to new values *na on the object a. *mode
 * (IN: the mode asked for with VL_SET_MODE) comes back without S_ISGID
 * when a non-root caller outside the file's group sets it, as chmod(2)
 * does. has_write_fd: a SIZE change comes with an fd open for writing
 * (ftruncate), so no write permission is needed. */
int access_setattr(const struct vl_caller *c, const struct access_attr *a,
                   uint32_t valid, const struct vl_iatt *na,
                   bool has_write_fd, uint32_t *mode /* IN/OUT */);
/* Reading (is_write false) or setting/removing an xattr name. */
int access_xattr(const struct vl_caller *c, const struct access_attr *a,
                 const char *name, bool is_write);
/* Removing an xattr: as setting it, except security.capability, which
 * anyone who may write the file removes (the kernel drops it on such a
 * write, file_remove_privs(), and over FUSE that arrives as the
 * writer's REMOVEXATTR). */
int access_xattr_remove(const struct vl_caller *c,
                        const struct access_attr *a, const char *name);
/* ACCESS_MAY_* an open(2) with these flags needs. */
unsigned access_open_want(int32_t flags);

#endif
