/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * access-perm: the permission decisions of features/access, made as the
 * Linux kernel makes them for a local caller:
 *   - access_permission: generic_permission() and acl_permission_check()
 *     (fs/namei.c) with posix_acl_permission() (fs/posix_acl.c);
 *   - access_sticky: may_delete()'s sticky-bit rule (check_sticky);
 *   - access_setattr: setattr_prepare() (fs/attr.c), chmod's S_ISGID
 *     rule and utimes' "owner, or write permission for now";
 *   - access_xattr: xattr_permission() (fs/xattr.c) by namespace.
 * uid 0 stands for root with CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_CHOWN and
 * CAP_FSETID. Pure functions of the caller and the objects' attributes:
 * access.c fetches those, test/test-access-perm.c checks these alone.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "access.h"

#define ACCESS_ACL_HDR_SIZE 4u
#define ACCESS_ACL_ENTRY_SIZE 8u
#define ACCESS_PREFIX_TRUSTED "trusted."
#define ACCESS_PREFIX_MORTAR "trusted.mortar."
#define ACCESS_PREFIX_SECURITY "security."
#define ACCESS_PREFIX_SYSTEM_ACL "system.posix_acl_"
#define ACCESS_PREFIX_USER "user."
#define ACCESS_XATTR_CAPS "security.capability"


static uint32_t
access_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}


static uint16_t
access_le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}


int
access_acl_parse(const void *buf, size_t len, struct access_acl **out)
{
    const unsigned char *p = buf;
    struct access_acl *acl;
    unsigned seen = 0;
    size_t n;

    *out = NULL;
    if (len < ACCESS_ACL_HDR_SIZE || len > ACCESS_ACL_XATTR_SIZE_MAX
        || (len - ACCESS_ACL_HDR_SIZE) % ACCESS_ACL_ENTRY_SIZE != 0
        || access_le32(p) != ACCESS_ACL_XATTR_VERSION)
        return -EINVAL;
    n = (len - ACCESS_ACL_HDR_SIZE) / ACCESS_ACL_ENTRY_SIZE;
    acl = malloc(sizeof(*acl) + n * sizeof(acl->e[0]));
    if (acl == NULL)
        return -ENOMEM;
    atomic_init(&acl->refs, 1);
    acl->n = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *e = p + ACCESS_ACL_HDR_SIZE
                                 + i * ACCESS_ACL_ENTRY_SIZE;
        uint16_t tag = access_le16(e);

        switch (tag) {
        case ACCESS_ACL_USER_OBJ:
        case ACCESS_ACL_USER:
        case ACCESS_ACL_GROUP_OBJ:
        case ACCESS_ACL_GROUP:
        case ACCESS_ACL_MASK:
        case ACCESS_ACL_OTHER:
            break;
        default:
            free(acl);
            return -EINVAL;
        }
        seen |= tag;
        acl->e[i].tag = tag;
        acl->e[i].perm = access_le16(e + 2) & 7u;
        acl->e[i].id = access_le32(e + 4);
    }
    /* (1) The three base entries are required; (2) named entries need a
     * mask (posix_acl_valid). */
    if ((seen & (ACCESS_ACL_USER_OBJ | ACCESS_ACL_GROUP_OBJ
                 | ACCESS_ACL_OTHER))
            != (ACCESS_ACL_USER_OBJ | ACCESS_ACL_GROUP_OBJ
                | ACCESS_ACL_OTHER)                                /* (1) */
        || ((seen & (ACCESS_ACL_USER | ACCESS_ACL_GROUP)) != 0
            && (seen & ACCESS_ACL_MASK) == 0)) {                   /* (2) */
        free(acl);
        return -EINVAL;
    }
    *out = acl;
    return 0;
}


struct access_acl *
access_acl_ref(struct access_acl *acl)
{
    if (acl != NULL)
        atomic_fetch_add_explicit(&acl->refs, 1, memory_order_relaxed);
    return acl;
}


void
access_acl_unref(struct access_acl *acl)
{
    if (acl != NULL
        && atomic_fetch_sub_explicit(&acl->refs, 1, memory_order_acq_rel)
               == 1)
        free(acl);
}


bool
access_caller_in_group(const struct vl_caller *c, uint32_t gid)
{
    uint32_t n = c->n_groups < VL_MAX_GROUPS ? c->n_groups : VL_MAX_GROUPS;

    if (c->gid == gid)
        return true;
    for (uint32_t i = 0; i < n; i++)
        if (c->groups[i] == gid)
            return true;
    return false;
}


/* An entry that matched grants want only if the mask (when there is
 * one) grants it too. */
static int
access_acl_masked(const struct access_acl *acl, unsigned perm, unsigned want)
{
    if ((perm & want) != want)
        return -EACCES;
    for (uint32_t i = 0; i < acl->n; i++)
        if (acl->e[i].tag == ACCESS_ACL_MASK)
            return (acl->e[i].perm & want) == want ? 0 : -EACCES;
    return 0;
}


/* posix_acl_permission() for a caller who is not the owner. */
static int
access_acl_check(const struct vl_caller *c, const struct access_attr *a,
                 unsigned want)
{
    const struct access_acl *acl = a->acl;
    bool is_group_found = false;

    for (uint32_t i = 0; i < acl->n; i++) {
        const struct access_acl_entry *e = &acl->e[i];

        if (e->tag == ACCESS_ACL_USER && e->id == c->uid)
            return access_acl_masked(acl, e->perm, want);
    }
    /* Every group entry the caller is in counts; one granting is
     * enough, and finding any but none granting denies. */
    for (uint32_t i = 0; i < acl->n; i++) {
        const struct access_acl_entry *e = &acl->e[i];
        uint32_t gid = e->tag == ACCESS_ACL_GROUP_OBJ ? a->gid : e->id;

        if (e->tag != ACCESS_ACL_GROUP_OBJ && e->tag != ACCESS_ACL_GROUP)
            continue;
        if (!access_caller_in_group(c, gid))
            continue;
        is_group_found = true;
        if ((e->perm & want) == want)
            return access_acl_masked(acl, e->perm, want);
    }
    if (is_group_found)
        return -EACCES;
    for (uint32_t i = 0; i < acl->n; i++)
        if (acl->e[i].tag == ACCESS_ACL_OTHER)
            return (acl->e[i].perm & want) == want ? 0 : -EACCES;
    return -EACCES;
}


int
access_permission(const struct vl_caller *c, const struct access_attr *a,
                  unsigned want)
{
    unsigned bits;

    want &= ACCESS_MAY_READ | ACCESS_MAY_WRITE | ACCESS_MAY_EXEC;
    if (c->uid == 0) {
        /* CAP_DAC_OVERRIDE: all but executing a file no one may. */
        if ((want & ACCESS_MAY_EXEC) && !S_ISDIR(a->mode)
            && (a->mode & (S_IXUSR | S_IXGRP | S_IXOTH)) == 0)
            return -EACCES;
        return 0;
    }
    if (c->uid == a->uid)
        bits = (a->mode >> 6) & 7u;
    else if (a->is_acl_bad)
        return -EACCES;
    else if (a->acl != NULL && (a->mode & S_IRWXG) != 0)
        return access_acl_check(c, a, want);
    else if (access_caller_in_group(c, a->gid))
        bits = (a->mode >> 3) & 7u;
    else
        bits = a->mode & 7u;
    return (want & ~bits) != 0 ? -EACCES : 0;
}


int
access_sticky(const struct vl_caller *c, const struct access_attr *dir,
              const struct access_attr *victim)
{
    if (!(dir->mode & S_ISVTX) || c->uid == 0)
        return 0;
    if (c->uid == dir->uid || (victim != NULL && c->uid == victim->uid))
        return 0;
    return -EPERM;
}


int
access_setattr(const struct vl_caller *c, const struct access_attr *a,
               uint32_t valid, const struct vl_iatt *na, bool has_write_fd,
               uint32_t *mode)
{
    bool is_owner = c->uid == 0 || c->uid == a->uid;
    uint32_t gid = (valid & VL_SET_GID) ? na->gid : a->gid;
    int rc;

    /* chown: root only, or the owner "changing" it to itself. */
    if ((valid & VL_SET_UID) && c->uid != 0
        && !(c->uid == a->uid && na->uid == a->uid))
        return -EPERM;
    /* chgrp: root, or the owner to a group it is in (or the same). */
    if ((valid & VL_SET_GID) && c->uid != 0
        && !(c->uid == a->uid
             && (na->gid == a->gid || access_caller_in_group(c, na->gid))))
        return -EPERM;
    if ((valid & VL_SET_MODE) && !is_owner)
        return -EPERM;
    /* Times to given values (and ctime): the owner only; to now: the
     * owner or anyone who may write. */
    if ((valid & (VL_SET_ATIME | VL_SET_MTIME | VL_SET_CTIME)) && !is_owner)
        return -EPERM;
    if ((valid & (VL_SET_ATIME_NOW | VL_SET_MTIME_NOW)) && !is_owner) {
        rc = access_permission(c, a, ACCESS_MAY_WRITE);
        if (rc != 0)
            return rc;
    }
    if ((valid & VL_SET_SIZE) && !has_write_fd) {
        rc = access_permission(c, a, ACCESS_MAY_WRITE);
        if (rc != 0)
            return rc;
    }
    /* chmod by someone outside the file's (new) group cannot set the
     * setgid bit: it is dropped, not refused. */
    if ((valid & VL_SET_MODE) && c->uid != 0
        && !access_caller_in_group(c, gid))
        *mode &= ~(uint32_t)S_ISGID;
    return 0;
}


static bool
access_has_prefix(const char *name, const char *prefix)
{
    return strncmp(name, prefix, strlen(prefix)) == 0;
}


int
access_xattr(const struct vl_caller *c, const struct access_attr *a,
             const char *name, bool is_write)
{
    if (name == NULL) /* listing: the names are not the values */
        return 0;
    /* Mortar's own keys (distribute's layouts and links) are set by
     * client-side translators with their caller's identity; storage/posix
     * decides which of them may be set at all. */
    if (access_has_prefix(name, ACCESS_PREFIX_MORTAR))
        return 0;
    if (access_has_prefix(name, ACCESS_PREFIX_TRUSTED)) {
        if (c->uid == 0)
            return 0;
        return is_write ? -EPERM : -ENODATA;
    }
    if (access_has_prefix(name, ACCESS_PREFIX_SECURITY))
        return is_write && c->uid != 0 ? -EPERM : 0;
    if (access_has_prefix(name, ACCESS_PREFIX_SYSTEM_ACL))
        return is_write && c->uid != 0 && c->uid != a->uid ? -EPERM : 0;
    if (!access_has_prefix(name, ACCESS_PREFIX_USER))
        return 0; /* another namespace: the backend answers */
    /* user.*: on regular files and directories only; in a sticky
     * directory only its owner writes them. */
    if (!S_ISREG(a->mode) && !S_ISDIR(a->mode))
        return is_write ? -EPERM : -ENODATA;
    if (is_write && S_ISDIR(a->mode) && (a->mode & S_ISVTX) && c->uid != 0
        && c->uid != a->uid)
        return -EPERM;
    return access_permission(c, a, is_write ? ACCESS_MAY_WRITE
                                            : ACCESS_MAY_READ);
}


int
access_xattr_remove(const struct vl_caller *c, const struct access_attr *a,
                    const char *name)
{
    if (name != NULL && strcmp(name, ACCESS_XATTR_CAPS) == 0 && c->uid != 0)
        return access_permission(c, a, ACCESS_MAY_WRITE);
    return access_xattr(c, a, name, true);
}


unsigned
access_open_want(int32_t flags)
{
    unsigned want = 0;

    switch (flags & O_ACCMODE) {
    case O_RDONLY:
        want = ACCESS_MAY_READ;
        break;
    case O_WRONLY:
        want = ACCESS_MAY_WRITE;
        break;
    default:
        want = ACCESS_MAY_READ | ACCESS_MAY_WRITE;
    }
    if (flags & O_TRUNC)
        want |= ACCESS_MAY_WRITE;
    return want;
}
