/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-access-perm: features/access's decisions (access-perm.c) alone:
 * mode bits for owner, group and others, root's overrides, the sticky
 * bit, setattr's rules (chmod, chown, chgrp, setgid drop, times,
 * truncate), the xattr namespaces, open flags, and POSIX ACLs parsed
 * from their xattr bytes (named users and groups, the mask).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "access.h"

#define R ACCESS_MAY_READ
#define W ACCESS_MAY_WRITE
#define X ACCESS_MAY_EXEC


static struct vl_caller
user(uint32_t uid, uint32_t gid)
{
    struct vl_caller c = {.uid = uid, .gid = gid};

    return c;
}


static struct access_attr
obj(uint32_t mode, uint32_t uid, uint32_t gid)
{
    struct access_attr a = {.mode = mode, .uid = uid, .gid = gid};

    return a;
}


static void
test_mode_bits(void **state)
{
    struct access_attr dir = obj(S_IFDIR | 0755, 0, 0);
    struct access_attr f = obj(S_IFREG | 0640, 100, 200);
    struct vl_caller other = user(1234, 1234);
    struct vl_caller owner = user(100, 1);
    struct vl_caller member = user(300, 1);

    (void)state;
    member.n_groups = 1;
    member.groups[0] = 200;
    /* The case: uid 1234 may search but not write root's 0755. */
    assert_int_equal(access_permission(&other, &dir, X), 0);
    assert_int_equal(access_permission(&other, &dir, W | X), -EACCES);
    assert_int_equal(access_permission(&owner, &f, R | W), 0);
    assert_int_equal(access_permission(&member, &f, R), 0);
    assert_int_equal(access_permission(&member, &f, W), -EACCES);
    assert_int_equal(access_permission(&other, &f, R), -EACCES);
    /* The owner's bits decide for the owner even when the group's
     * would grant more. */
    f = obj(S_IFREG | 0070, 100, 200);
    owner.n_groups = 1;
    owner.groups[0] = 200;
    assert_int_equal(access_permission(&owner, &f, R), -EACCES);
}


static void
test_root(void **state)
{
    struct vl_caller root = user(0, 0);
    struct access_attr secret = obj(S_IFREG | 0600, 1, 1);
    struct access_attr noexec = obj(S_IFREG | 0644, 1, 1);
    struct access_attr dir = obj(S_IFDIR | 0000, 1, 1);

    (void)state;
    assert_int_equal(access_permission(&root, &secret, R | W), 0);
    assert_int_equal(access_permission(&root, &noexec, X), -EACCES);
    assert_int_equal(access_permission(&root, &dir, R | W | X), 0);
}


static void
test_sticky(void **state)
{
    struct access_attr tmp = obj(S_IFDIR | 01777, 0, 0);
    struct access_attr mine = obj(S_IFREG | 0644, 1234, 1234);
    struct access_attr theirs = obj(S_IFREG | 0644, 99, 99);
    struct vl_caller c = user(1234, 1234);
    struct vl_caller root = user(0, 0);

    (void)state;
    assert_int_equal(access_sticky(&c, &tmp, &mine), 0);
    assert_int_equal(access_sticky(&c, &tmp, &theirs), -EPERM);
    assert_int_equal(access_sticky(&root, &tmp, &theirs), 0);
    tmp.mode &= ~(uint32_t)S_ISVTX;
    assert_int_equal(access_sticky(&c, &tmp, &theirs), 0);
    /* The directory's owner removes anything in it. */
    tmp = obj(S_IFDIR | 01777, 1234, 0);
    assert_int_equal(access_sticky(&c, &tmp, &theirs), 0);
}


static void
test_setattr(void **state)
{
    struct access_attr f = obj(S_IFREG | 0664, 100, 200);
    struct vl_caller owner = user(100, 100);
    struct vl_caller other = user(300, 200);
    struct vl_caller root = user(0, 0);
    struct vl_iatt na = {0};
    uint32_t mode;

    (void)state;
    owner.n_groups = 1;
    owner.groups[0] = 50;
    /* chmod: the owner; setgid dropped outside the file's group. */
    mode = 02755;
    assert_int_equal(access_setattr(&owner, &f, VL_SET_MODE, &na, false,
                                     &mode), 0);
    assert_int_equal(mode, 0755);
    mode = 02755;
    assert_int_equal(access_setattr(&root, &f, VL_SET_MODE, &na, false,
                                     &mode), 0);
    assert_int_equal(mode, 02755);
    assert_int_equal(access_setattr(&other, &f, VL_SET_MODE, &na, false,
                                     &mode), -EPERM);
    /* chown: root only (the owner to itself is a no-op). */
    na.uid = 300;
    assert_int_equal(access_setattr(&owner, &f, VL_SET_UID, &na, false,
                                     &mode), -EPERM);
    assert_int_equal(access_setattr(&root, &f, VL_SET_UID, &na, false,
                                     &mode), 0);
    na.uid = 100;
    assert_int_equal(access_setattr(&owner, &f, VL_SET_UID, &na, false,
                                     &mode), 0);
    /* chgrp: the owner, to a group it is in. */
    na.gid = 50;
    assert_int_equal(access_setattr(&owner, &f, VL_SET_GID, &na, false,
                                     &mode), 0);
    na.gid = 51;
    assert_int_equal(access_setattr(&owner, &f, VL_SET_GID, &na, false,
                                     &mode), -EPERM);
    na.gid = 50;
    assert_int_equal(access_setattr(&other, &f, VL_SET_GID, &na, false,
                                     &mode), -EPERM);
    /* Times: given values by the owner; now by whoever may write. */
    assert_int_equal(access_setattr(&other, &f, VL_SET_MTIME, &na, false,
                                     &mode), -EPERM);
    assert_int_equal(access_setattr(&other, &f, VL_SET_MTIME_NOW, &na,
                                     false, &mode), 0);
    f.mode = S_IFREG | 0644;
    assert_int_equal(access_setattr(&other, &f, VL_SET_MTIME_NOW, &na,
                                     false, &mode), -EACCES);
    /* Truncate: write permission, or an fd open for writing. */
    assert_int_equal(access_setattr(&other, &f, VL_SET_SIZE, &na, false,
                                     &mode), -EACCES);
    assert_int_equal(access_setattr(&other, &f, VL_SET_SIZE, &na, true,
                                     &mode), 0);
}


static void
test_xattr(void **state)
{
    struct access_attr f = obj(S_IFREG | 0644, 100, 100);
    struct access_attr lnk = obj(S_IFLNK | 0777, 100, 100);
    struct access_attr tmp = obj(S_IFDIR | 01777, 0, 0);
    struct vl_caller owner = user(100, 100);
    struct vl_caller other = user(300, 300);
    struct vl_caller root = user(0, 0);

    (void)state;
    assert_int_equal(access_xattr(&owner, &f, "trusted.x", true), -EPERM);
    assert_int_equal(access_xattr(&owner, &f, "trusted.x", false), -ENODATA);
    assert_int_equal(access_xattr(&root, &f, "trusted.x", true), 0);
    assert_int_equal(access_xattr(&owner, &f, "security.selinux", true),
                     -EPERM);
    assert_int_equal(access_xattr(&owner, &f, "security.selinux", false),
                     0);
    assert_int_equal(access_xattr(&owner, &f, "user.a", true), 0);
    assert_int_equal(access_xattr(&other, &f, "user.a", true), -EACCES);
    assert_int_equal(access_xattr(&other, &f, "user.a", false), 0);
    assert_int_equal(access_xattr(&owner, &lnk, "user.a", true), -EPERM);
    assert_int_equal(access_xattr(&other, &tmp, "user.a", true), -EPERM);
    assert_int_equal(access_xattr(&other, &f, "system.posix_acl_access",
                                  true), -EPERM);
    assert_int_equal(access_xattr(&owner, &f, "system.posix_acl_access",
                                  true), 0);
    /* A writer drops file capabilities, as the kernel does on write;
     * nobody else removes them, and nobody but root sets them. */
    assert_int_equal(access_xattr_remove(&other, &f, "security.capability"),
                     -EACCES);
    f.mode = S_IFREG | 0666;
    assert_int_equal(access_xattr_remove(&other, &f, "security.capability"),
                     0);
    assert_int_equal(access_xattr(&other, &f, "security.capability", true),
                     -EPERM);
    assert_int_equal(access_xattr_remove(&other, &f, "security.selinux"),
                     -EPERM);
    f.mode = S_IFREG | 0644;
    /* Distribute's keys, set with its callers' identities. */
    assert_int_equal(access_xattr(&other, &f, "trusted.mortar.dht", true),
                     0);
    assert_int_equal(access_xattr(&other, &f, NULL, false), 0);
}


static void
test_open_want(void **state)
{
    (void)state;
    assert_int_equal(access_open_want(O_RDONLY), R);
    assert_int_equal(access_open_want(O_WRONLY), W);
    assert_int_equal(access_open_want(O_RDWR), R | W);
    assert_int_equal(access_open_want(O_RDONLY | O_TRUNC), R | W);
}


/* Appends one ACL entry in the xattr's little-endian layout. */
static size_t
put_entry(unsigned char *b, size_t off, uint16_t tag, uint16_t perm,
          uint32_t id)
{
    b[off] = (unsigned char)tag;
    b[off + 1] = (unsigned char)(tag >> 8);
    b[off + 2] = (unsigned char)perm;
    b[off + 3] = 0;
    for (int i = 0; i < 4; i++)
        b[off + 4 + i] = (unsigned char)(id >> (8 * i));
    return off + 8;
}


static void
test_acl(void **state)
{
    unsigned char b[256] = {2, 0, 0, 0};
    size_t n = 4;
    struct access_attr f = obj(S_IFREG | 0660, 100, 200);
    struct vl_caller named = user(1234, 1234);
    struct vl_caller grp = user(555, 555);
    struct vl_caller other = user(999, 999);

    (void)state;
    /* user::rw- user:1234:rw- group::r-- group:777:rwx mask::r--
     * other::--- */
    n = put_entry(b, n, ACCESS_ACL_USER_OBJ, 6, UINT32_MAX);
    n = put_entry(b, n, ACCESS_ACL_USER, 6, 1234);
    n = put_entry(b, n, ACCESS_ACL_GROUP_OBJ, 4, UINT32_MAX);
    n = put_entry(b, n, ACCESS_ACL_GROUP, 7, 777);
    n = put_entry(b, n, ACCESS_ACL_MASK, 4, UINT32_MAX);
    n = put_entry(b, n, ACCESS_ACL_OTHER, 0, UINT32_MAX);
    assert_int_equal(access_acl_parse(b, n, &f.acl), 0);
    assert_int_equal(f.acl->n, 6);
    f.mode = S_IFREG | 0640; /* group bits = the mask */
    /* The named user: rw- masked to r--. */
    assert_int_equal(access_permission(&named, &f, R), 0);
    assert_int_equal(access_permission(&named, &f, W), -EACCES);
    /* A member of group 777: rwx masked to r--. */
    grp.n_groups = 1;
    grp.groups[0] = 777;
    assert_int_equal(access_permission(&grp, &f, R), 0);
    assert_int_equal(access_permission(&grp, &f, W), -EACCES);
    /* Nobody named: other::---, although the mode's other bits would
     * say the same; the owner goes by the mode. */
    assert_int_equal(access_permission(&other, &f, R), -EACCES);
    assert_int_equal(access_permission(&(struct vl_caller){.uid = 100},
                                       &f, R | W), 0);
    /* Without the ACL the named user would be "other". */
    access_acl_unref(f.acl);
    f.acl = NULL;
    assert_int_equal(access_permission(&named, &f, R), -EACCES);
}


static void
test_acl_malformed(void **state)
{
    unsigned char b[256] = {2, 0, 0, 0};
    struct access_acl *acl;
    size_t n = 4;

    (void)state;
    assert_int_equal(access_acl_parse(b, 3, &acl), -EINVAL);
    b[0] = 1; /* version */
    assert_int_equal(access_acl_parse(b, 4, &acl), -EINVAL);
    b[0] = 2;
    /* No OTHER entry. */
    n = put_entry(b, n, ACCESS_ACL_USER_OBJ, 6, 0);
    n = put_entry(b, n, ACCESS_ACL_GROUP_OBJ, 4, 0);
    assert_int_equal(access_acl_parse(b, n, &acl), -EINVAL);
    /* A named user without a mask. */
    n = put_entry(b, n, ACCESS_ACL_USER, 6, 5);
    n = put_entry(b, n, ACCESS_ACL_OTHER, 0, 0);
    assert_int_equal(access_acl_parse(b, n, &acl), -EINVAL);
    /* An unknown tag; a length that is not whole entries. */
    b[4] = 0x40;
    assert_int_equal(access_acl_parse(b, n, &acl), -EINVAL);
    b[4] = ACCESS_ACL_USER_OBJ;
    assert_int_equal(access_acl_parse(b, n - 1, &acl), -EINVAL);
}


/* An ACL of many entries (far over the 16 once kept inline) is
 * evaluated whole: a named user or group near its end decides. */
static void
test_acl_large(void **state)
{
    enum { N_NAMED = 600 };
    static unsigned char b[4 + 8 * (N_NAMED * 2 + 4)] = {2, 0, 0, 0};
    struct access_attr f = obj(S_IFREG | 0670, 100, 100);
    struct vl_caller last = user(2000 + N_NAMED - 1, 9);
    struct vl_caller grp = user(77, 77);
    struct vl_caller other = user(999, 999);
    struct access_acl *extra;
    size_t n = 4;

    (void)state;
    n = put_entry(b, n, ACCESS_ACL_USER_OBJ, 6, 0);
    for (uint32_t i = 0; i < N_NAMED; i++)
        n = put_entry(b, n, ACCESS_ACL_USER, i == N_NAMED - 1 ? 6 : 0,
                      2000 + i);
    n = put_entry(b, n, ACCESS_ACL_GROUP_OBJ, 0, 0);
    for (uint32_t i = 0; i < N_NAMED; i++)
        n = put_entry(b, n, ACCESS_ACL_GROUP, i == N_NAMED - 1 ? 4 : 0,
                      5000 + i);
    n = put_entry(b, n, ACCESS_ACL_MASK, 7, 0);
    n = put_entry(b, n, ACCESS_ACL_OTHER, 0, 0);
    assert_int_equal(access_acl_parse(b, n, &f.acl), 0);
    assert_int_equal(f.acl->n, 2 * N_NAMED + 4);
    assert_int_equal(access_permission(&last, &f, R | W), 0);
    assert_int_equal(access_permission(&last, &f, ACCESS_MAY_EXEC), -EACCES);
    grp.n_groups = 1;
    grp.groups[0] = 5000 + N_NAMED - 1;
    assert_int_equal(access_permission(&grp, &f, R), 0);
    assert_int_equal(access_permission(&grp, &f, W), -EACCES);
    assert_int_equal(access_permission(&other, &f, R), -EACCES);
    /* References: the last unref frees (LeakSanitizer checks). */
    extra = access_acl_ref(f.acl);
    assert_ptr_equal(extra, f.acl);
    access_acl_unref(f.acl);
    assert_int_equal(access_permission(&last, &f, R), 0);
    access_acl_unref(extra);
    /* Over the kernel's 64 KiB xattr limit: malformed. */
    assert_int_equal(access_acl_parse(b, ACCESS_ACL_XATTR_SIZE_MAX + 8,
                                      &extra), -EINVAL);
    assert_null(extra);
}


/* A malformed ACL is not evaluated: only the owner passes. */
static void
test_acl_bad(void **state)
{
    struct access_attr f = obj(S_IFREG | 0644, 100, 100);
    struct vl_caller other = user(999, 999);

    (void)state;
    f.is_acl_bad = true;
    assert_int_equal(access_permission(&other, &f, R), -EACCES);
    assert_int_equal(access_permission(&(struct vl_caller){.uid = 100},
                                       &f, R), 0);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mode_bits),
        cmocka_unit_test(test_root),
        cmocka_unit_test(test_sticky),
        cmocka_unit_test(test_setattr),
        cmocka_unit_test(test_xattr),
        cmocka_unit_test(test_open_want),
        cmocka_unit_test(test_acl),
        cmocka_unit_test(test_acl_malformed),
        cmocka_unit_test(test_acl_large),
        cmocka_unit_test(test_acl_bad),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
