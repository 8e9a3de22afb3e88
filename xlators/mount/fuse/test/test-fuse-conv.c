/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-fuse-conv: the pure conversions of mount/fuse (fuse-conv.c):
 * attributes, device numbers, setattr bits, dirent packing within the
 * kernel's budget, lock ranges, the INIT flags we ask for, and the
 * bound on names.
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
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "fuse.h"


static void
test_attr_from_iatt(void **state)
{
    struct vl_iatt ia;
    struct fuse_attr fa;

    (void)state;
    memset(&ia, 0, sizeof(ia));
    vl_gfid_generate(&ia.gfid);
    ia.ino = 4242;
    ia.mode = S_IFREG | 0640;
    ia.nlink = 2;
    ia.uid = 1000;
    ia.gid = 100;
    ia.size = 123456789;
    ia.blocks = 241;
    ia.blksize = 131072;
    ia.atime = 1700000000;
    ia.atime_ns = 1;
    ia.mtime = 1700000001;
    ia.mtime_ns = 999999999;
    ia.ctime = 1700000002;
    ia.ctime_ns = 500;
    ia.rdev = makedev(8, 1);
    vfuse_attr_from_iatt(&fa, &ia);
    assert_int_equal(fa.ino, 4242);
    assert_int_equal(fa.mode, S_IFREG | 0640);
    assert_int_equal(fa.nlink, 2);
    assert_int_equal(fa.uid, 1000);
    assert_int_equal(fa.gid, 100);
    assert_int_equal(fa.size, 123456789);
    assert_int_equal(fa.blocks, 241);
    assert_int_equal(fa.blksize, 131072);
    assert_int_equal(fa.atime, 1700000000);
    assert_int_equal(fa.atimensec, 1);
    assert_int_equal(fa.mtime, 1700000001);
    assert_int_equal(fa.mtimensec, 999999999);
    assert_int_equal(fa.ctime, 1700000002);
    assert_int_equal(fa.ctimensec, 500);
    /* new_encode_dev(8:1) as the kernel decodes it. */
    assert_int_equal(fa.rdev, (8 << 8) | 1);

    /* Without an ino the GFID's gives it. */
    ia.ino = 0;
    vfuse_attr_from_iatt(&fa, &ia);
    assert_int_equal(fa.ino, vl_gfid_to_ino(&ia.gfid));
}


static void
test_dev_roundtrip(void **state)
{
    const uint64_t devs[] = {makedev(0, 0), makedev(1, 3), makedev(8, 17),
                             makedev(259, 0), makedev(4095, 1048575),
                             makedev(10, 229)};

    (void)state;
    for (size_t i = 0; i < VL_ARRAY_SIZE(devs); i++)
        assert_int_equal(vfuse_dev_decode(vfuse_dev_encode(devs[i])),
                         devs[i]);
    /* Large minors move above the major (new_encode_dev layout). */
    assert_int_equal(vfuse_dev_encode(makedev(1, 0x123)),
                     0x23 | (1 << 8) | (0x100 << 12));
}


static void
test_timeout(void **state)
{
    uint64_t sec;
    uint32_t nsec;

    (void)state;
    vfuse_ms_to_timeout(1500, &sec, &nsec);
    assert_int_equal(sec, 1);
    assert_int_equal(nsec, 500000000);
    vfuse_ms_to_timeout(0, &sec, &nsec);
    assert_int_equal(sec, 0);
    assert_int_equal(nsec, 0);
}


static void
test_setattr_valid(void **state)
{
    struct fuse_setattr_in in;
    struct vl_iatt attr;
    uint32_t valid;

    (void)state;
    assert_int_equal(vfuse_setattr_valid(FATTR_MODE), VL_SET_MODE);
    assert_int_equal(vfuse_setattr_valid(FATTR_UID | FATTR_GID),
                     VL_SET_UID | VL_SET_GID);
    assert_int_equal(vfuse_setattr_valid(FATTR_SIZE | FATTR_FH
                                         | FATTR_LOCKOWNER),
                     VL_SET_SIZE);
    /* "now" wins over an explicit time. */
    assert_int_equal(vfuse_setattr_valid(FATTR_ATIME | FATTR_ATIME_NOW),
                     VL_SET_ATIME_NOW);
    assert_int_equal(vfuse_setattr_valid(FATTR_MTIME), VL_SET_MTIME);
    assert_int_equal(vfuse_setattr_valid(FATTR_MTIME | FATTR_MTIME_NOW),
                     VL_SET_MTIME_NOW);
    assert_int_equal(vfuse_setattr_valid(FATTR_CTIME), VL_SET_CTIME);
    assert_int_equal(vfuse_setattr_valid(FATTR_SIZE | FATTR_KILL_SUIDGID),
                     VL_SET_SIZE | VL_SET_KILL_SUIDGID);
    assert_int_equal(vfuse_setattr_valid(FATTR_FH), 0);

    memset(&in, 0, sizeof(in));
    in.valid = FATTR_MODE | FATTR_SIZE | FATTR_MTIME;
    in.mode = 04755;
    in.size = 77;
    in.mtime = 1234;
    in.mtimensec = 5678;
    vfuse_setattr_from_in(&in, &attr, &valid);
    assert_int_equal(valid, VL_SET_MODE | VL_SET_SIZE | VL_SET_MTIME);
    assert_int_equal(attr.mode, 04755);
    assert_int_equal(attr.size, 77);
    assert_int_equal(attr.mtime, 1234);
    assert_int_equal(attr.mtime_ns, 5678);
}


static void
test_dirent_pack_budget(void **state)
{
    struct vl_dirent ent = {.ino = 7, .off = 99, .type = 8,
                            .name = (char *)"abcde"};
    char buf[256];
    size_t rec = vfuse_dirent_size(5, false);
    const struct fuse_dirent *d = (const void *)buf;
    size_t n;

    (void)state;
    /* 24 bytes of header + 5 of name, rounded up to 8. */
    assert_int_equal(rec, 32);
    memset(buf, 0xee, sizeof(buf));
    assert_int_equal(vfuse_dirent_pack(buf, rec - 1, &ent), 0);
    n = vfuse_dirent_pack(buf, rec, &ent);
    assert_int_equal(n, rec);
    assert_int_equal(d->ino, 7);
    assert_int_equal(d->off, 99);
    assert_int_equal(d->namelen, 5);
    assert_int_equal(d->type, 8);
    assert_memory_equal(d->name, "abcde", 5);
    /* Padding is zeroed, and nothing past the record is touched. */
    for (size_t i = FUSE_NAME_OFFSET + 5; i < rec; i++)
        assert_int_equal(buf[i], 0);
    assert_int_equal((unsigned char)buf[rec], 0xee);
}


static void
test_dirent_pack_many(void **state)
{
    struct vl_dirent ents[3] = {
        {.ino = 1, .off = 1, .type = 4, .name = (char *)"."},
        {.ino = 1, .off = 2, .type = 4, .name = (char *)".."},
        {.ino = 9, .off = 3, .type = 8, .name = (char *)"a-longer-name"},
    };
    char buf[64];
    size_t used = 0;
    size_t n_packed = 0;

    (void)state;
    /* 32 + 32 bytes fit in 64; the third (24 + 13 -> 40) does not. */
    for (size_t i = 0; i < 3; i++) {
        size_t n = vfuse_dirent_pack(buf + used, sizeof(buf) - used,
                                     &ents[i]);

        if (n == 0)
            break;
        used += n;
        n_packed++;
    }
    assert_int_equal(n_packed, 2);
    assert_int_equal(used, 64);
    assert_true(vfuse_is_dot_or_dotdot("."));
    assert_true(vfuse_is_dot_or_dotdot(".."));
    assert_false(vfuse_is_dot_or_dotdot("..."));
    assert_false(vfuse_is_dot_or_dotdot(".a"));
}


static void
test_direntplus_pack(void **state)
{
    struct vl_dirent ent = {.ino = 5, .off = 17, .type = 8,
                            .name = (char *)"file"};
    struct fuse_entry_out eo;
    char buf[512];
    const struct fuse_direntplus *dp = (const void *)buf;
    size_t rec = vfuse_dirent_size(4, true);

    (void)state;
    assert_int_equal(rec, FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET_DIRENTPLUS + 4));
    memset(&eo, 0, sizeof(eo));
    eo.nodeid = 0x1234;
    eo.attr.ino = 5;
    eo.attr.mode = S_IFREG | 0644;
    assert_int_equal(vfuse_direntplus_pack(buf, rec - 1, &ent, &eo), 0);
    assert_int_equal(vfuse_direntplus_pack(buf, sizeof(buf), &ent, &eo),
                     rec);
    assert_int_equal(dp->entry_out.nodeid, 0x1234);
    assert_int_equal(dp->entry_out.attr.mode, S_IFREG | 0644);
    assert_int_equal(dp->dirent.ino, 5);
    assert_int_equal(dp->dirent.off, 17);
    assert_int_equal(dp->dirent.namelen, 4);
    assert_memory_equal(dp->dirent.name, "file", 4);
}


static void
test_flock_conv(void **state)
{
    struct fuse_file_lock lk = {.start = 10, .end = 19, .type = F_WRLCK,
                                .pid = 33};
    struct fuse_file_lock back;
    struct vl_flock fl;

    (void)state;
    assert_int_equal(vfuse_flock_from_fuse(&lk, &fl), 0);
    assert_int_equal(fl.start, 10);
    assert_int_equal(fl.len, 10);
    assert_int_equal(fl.type, F_WRLCK);
    assert_int_equal(fl.pid, 33);
    vfuse_flock_to_fuse(&fl, &back);
    assert_int_equal(back.start, 10);
    assert_int_equal(back.end, 19);

    /* To end of file both ways. */
    lk.end = INT64_MAX;
    assert_int_equal(vfuse_flock_from_fuse(&lk, &fl), 0);
    assert_int_equal(fl.len, 0);
    vfuse_flock_to_fuse(&fl, &back);
    assert_int_equal(back.end, INT64_MAX);

    /* Bad input is refused, not converted. */
    lk.end = 5;
    assert_int_equal(vfuse_flock_from_fuse(&lk, &fl), -EINVAL);
    lk.end = 20;
    lk.type = 77;
    assert_int_equal(vfuse_flock_from_fuse(&lk, &fl), -EINVAL);
}


static void
test_init_want(void **state)
{
    struct vfuse_conf conf;
    uint64_t want;

    (void)state;
    memset(&conf, 0, sizeof(conf));
    conf.is_rdplus = true; /* the default */
    want = vfuse_init_want(&conf);
    assert_true(want & FUSE_PARALLEL_DIROPS);
    assert_true(want & FUSE_HANDLE_KILLPRIV_V2);
    assert_true(want & FUSE_MAX_PAGES);
    assert_true(want & FUSE_DO_READDIRPLUS);
    /* Every listing is READDIRPLUS unless readdirplus-auto is on. */
    assert_false(want & FUSE_READDIRPLUS_AUTO);
    assert_true(want & FUSE_POSIX_LOCKS);
    assert_true(want & FUSE_FLOCK_LOCKS);
    assert_true(want & FUSE_INIT_EXT);
    assert_false(want & FUSE_WRITEBACK_CACHE);
    assert_false(want & (FUSE_SPLICE_READ | FUSE_SPLICE_WRITE
                         | FUSE_SPLICE_MOVE));
    conf.is_writeback = true;
    assert_true(vfuse_init_want(&conf) & FUSE_WRITEBACK_CACHE);
    conf.is_rdplus_auto = true;
    assert_true(vfuse_init_want(&conf) & FUSE_READDIRPLUS_AUTO);
    /* readdirplus off: plain READDIR only, AUTO or not. */
    conf.is_rdplus = false;
    want = vfuse_init_want(&conf);
    assert_false(want & FUSE_DO_READDIRPLUS);
    assert_false(want & FUSE_READDIRPLUS_AUTO);
}


/* The name bound of every entry op (fuse-entry.c): bytes, not
 * characters; a missing name or one with a '/' is EINVAL. */
static void
test_name_check(void **state)
{
    char name[VFUSE_NAME_MAX + 2];

    (void)state;
    memset(name, 'a', sizeof(name));
    name[VFUSE_NAME_MAX] = '\0';
    assert_int_equal(vfuse_name_check(name), 0);
    name[VFUSE_NAME_MAX] = 'a';
    name[VFUSE_NAME_MAX + 1] = '\0';
    assert_int_equal(vfuse_name_check(name), -ENAMETOOLONG);
    /* 85 three-byte characters are 255 bytes; one more is 258. */
    for (int i = 0; i < 85; i++)
        memcpy(name + 3 * i, "\xe2\x82\xac", 3);
    name[255] = '\0';
    assert_int_equal(vfuse_name_check(name), 0);
    memcpy(name + 253, "\xe2\x82\xac", 3);
    name[256] = '\0';
    assert_int_equal(vfuse_name_check(name), -ENAMETOOLONG);
    assert_int_equal(vfuse_name_check(NULL), -EINVAL);
    assert_int_equal(vfuse_name_check("a/b"), -EINVAL);
    assert_int_equal(vfuse_name_check("a"), 0);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attr_from_iatt),
        cmocka_unit_test(test_dev_roundtrip),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_setattr_valid),
        cmocka_unit_test(test_dirent_pack_budget),
        cmocka_unit_test(test_dirent_pack_many),
        cmocka_unit_test(test_direntplus_pack),
        cmocka_unit_test(test_flock_conv),
        cmocka_unit_test(test_init_want),
        cmocka_unit_test(test_name_check),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
