/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-xdr: every message of mortar.x survives encode -> decode -> encode
 * byte for byte inside a real RPC call and reply; every truncation of
 * each encoding is rejected; over-long names are refused; the RPC headers
 * carry the caller and reject garbage; conversions keep every field.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vrpc.h"

static char name_entry[] = "entry-name";
static char name_target[] = "../some/target";
static char name_xattr[] = "user.test";
static char name_domain[] = "v0-replicate";
static char xval[] = "xattr-value\0with-nul";
static u_int groups[3] = {10, 20, 30};

static void
fill_gfid(mrt_gfid g, int seed)
{
    for (int i = 0; i < 16; i++)
        g[i] = (char)(seed * 16 + i);
}


static void
fill_loc(mrt_loc *l, int seed)
{
    fill_gfid(l->parent, seed);
    l->name = name_entry;
    fill_gfid(l->gfid, seed + 1);
}


static void
fill_iatt(mrt_iatt *a, int seed)
{
    fill_gfid(a->gfid, seed);
    a->ino = 0x1122334455667788ULL + seed;
    a->mode = 0100644;
    a->nlink = 3;
    a->uid = 1000;
    a->gid = 1001;
    a->rdev = 77;
    a->size = 1ULL << 40;
    a->blocks = 12345;
    a->blksize = 4096;
    a->atime = -5;
    a->mtime = 1700000000;
    a->ctime = 1700000001;
    a->atime_ns = 1;
    a->mtime_ns = 999999999;
    a->ctime_ns = 42;
}


static void
fill_flock(mrt_flock *f)
{
    f->type = 1;
    f->whence = 0;
    f->start = 100;
    f->len = -1;
    f->pid = 4321;
}


struct rt {
    const char *name; /* type name for messages */
    xdrproc_t fn;     /* its filter */
    void *val;        /* a filled instance */
    size_t size;      /* sizeof the type */
};

static mrt_caller v_caller;
static mrt_setvolume_args v_setvol;
static mrt_setvolume_rsp v_setvol_rsp;
static mrt_ping_rsp v_ping;
static mrt_loc_args v_loc;
static mrt_stat_args v_stat;
static mrt_setattr_args v_setattr;
static mrt_access_args v_access;
static mrt_readlink_args v_readlink;
static mrt_mknod_args v_mknod;
static mrt_mkdir_args v_mkdir;
static mrt_unlink_args v_unlink;
static mrt_symlink_args v_symlink;
static mrt_rename_args v_rename;
static mrt_link_args v_link;
static mrt_create_args v_create;
static mrt_open_args v_open;
static mrt_read_args v_read;
static mrt_write_args v_write;
static mrt_fd_args v_fd;
static mrt_fsync_args v_fsync;
static mrt_readdir_args v_readdir;
static mrt_setxattr_args v_setxattr;
static mrt_getxattr_args v_getxattr;
static mrt_removexattr_args v_removexattr;
static mrt_lk_args v_lk;
static mrt_inodelk_args v_inodelk;
static mrt_entrylk_args v_entrylk;
static mrt_fallocate_args v_fallocate;
static mrt_copy_file_range_args v_cfr;
static mrt_lseek_args v_lseek;
static mrt_xattrop_args v_xattrop;
static mrt_xattrop_key xo_keys[2];
static char xo_val[24];
static mrt_status_rsp r_status;
static mrt_iatt_rsp r_iatt;
static mrt_fd_rsp r_fd;
static mrt_entry_rsp r_entry;
static mrt_create_rsp r_create;
static mrt_count_rsp r_count;
static mrt_readlink_rsp r_readlink;
static mrt_readdir_rsp r_readdir;
static mrt_statfs_rsp r_statfs;
static mrt_getxattr_rsp r_getxattr;
static mrt_lk_rsp r_lk;
static mrt_lseek_rsp r_lseek;
static mrt_xattrop_rsp r_xattrop;
static mrt_rchecksum_args v_rchecksum;
static mrt_rchecksum_rsp r_rchecksum;
static mrt_rchecksum_block rck_blocks[3];
static mrt_dirent dents[3];

#define RT(t, v) {#t, (xdrproc_t)xdr_##t, &(v), sizeof(t)}

static const struct rt rts[] = {
    RT(mrt_caller, v_caller),
    RT(mrt_setvolume_args, v_setvol),
    RT(mrt_setvolume_rsp, v_setvol_rsp),
    RT(mrt_ping_rsp, v_ping),
    RT(mrt_loc_args, v_loc),
    RT(mrt_stat_args, v_stat),
    RT(mrt_setattr_args, v_setattr),
    RT(mrt_access_args, v_access),
    RT(mrt_readlink_args, v_readlink),
    RT(mrt_mknod_args, v_mknod),
    RT(mrt_mkdir_args, v_mkdir),
    RT(mrt_unlink_args, v_unlink),
    RT(mrt_symlink_args, v_symlink),
    RT(mrt_rename_args, v_rename),
    RT(mrt_link_args, v_link),
    RT(mrt_create_args, v_create),
    RT(mrt_open_args, v_open),
    RT(mrt_read_args, v_read),
    RT(mrt_write_args, v_write),
    RT(mrt_fd_args, v_fd),
    RT(mrt_fsync_args, v_fsync),
    RT(mrt_readdir_args, v_readdir),
    RT(mrt_setxattr_args, v_setxattr),
    RT(mrt_getxattr_args, v_getxattr),
    RT(mrt_removexattr_args, v_removexattr),
    RT(mrt_lk_args, v_lk),
    RT(mrt_inodelk_args, v_inodelk),
    RT(mrt_entrylk_args, v_entrylk),
    RT(mrt_fallocate_args, v_fallocate),
    RT(mrt_copy_file_range_args, v_cfr),
    RT(mrt_lseek_args, v_lseek),
    RT(mrt_xattrop_args, v_xattrop),
    RT(mrt_rchecksum_args, v_rchecksum),
    RT(mrt_status_rsp, r_status),
    RT(mrt_iatt_rsp, r_iatt),
    RT(mrt_fd_rsp, r_fd),
    RT(mrt_entry_rsp, r_entry),
    RT(mrt_create_rsp, r_create),
    RT(mrt_count_rsp, r_count),
    RT(mrt_readlink_rsp, r_readlink),
    RT(mrt_readdir_rsp, r_readdir),
    RT(mrt_statfs_rsp, r_statfs),
    RT(mrt_getxattr_rsp, r_getxattr),
    RT(mrt_lk_rsp, r_lk),
    RT(mrt_lseek_rsp, r_lseek),
    RT(mrt_xattrop_rsp, r_xattrop),
    RT(mrt_rchecksum_rsp, r_rchecksum),
};


static int
fill_all(void **state)
{
    v_caller.uid = 1;
    v_caller.gid = 2;
    v_caller.pid = 3;
    v_caller.groups.groups_len = 3;
    v_caller.groups.groups_val = groups;
    v_caller.lk_owner = 0xdeadbeefcafeULL;
    v_setvol.subvolume = name_target;
    v_setvol.identity = name_entry;
    v_setvol.proto_version = MRT_PROTO_VERSION;
    v_setvol_rsp.status = -2;
    v_setvol_rsp.error = name_target;
    v_setvol_rsp.client_id = 99;
    v_ping.status = 0;
    fill_loc(&v_loc.loc, 1);
    fill_loc(&v_stat.loc, 2);
    v_stat.fd = 7;
    v_stat.has_fd = TRUE;
    fill_loc(&v_setattr.loc, 3);
    v_setattr.has_fd = FALSE;
    fill_iatt(&v_setattr.attr, 4);
    v_setattr.valid = 0x3ff;
    fill_loc(&v_access.loc, 5);
    v_access.mask = 7;
    fill_loc(&v_readlink.loc, 6);
    v_readlink.size = 4096;
    fill_loc(&v_mknod.loc, 7);
    v_mknod.mode = 020644;
    v_mknod.rdev = 0x0801;
    v_mknod.umask = 022;
    fill_gfid(v_mknod.gfid, 8);
    fill_loc(&v_mkdir.loc, 9);
    v_mkdir.mode = 0755;
    fill_gfid(v_mkdir.gfid, 10);
    v_mkdir.xattr_name = name_xattr; /* the layout distribute sends */
    v_mkdir.xattr_value.xattr_value_val = xval;
    v_mkdir.xattr_value.xattr_value_len = sizeof(xval);
    fill_loc(&v_unlink.loc, 11);
    v_unlink.flags = 1;
    fill_loc(&v_symlink.loc, 12);
    v_symlink.target = name_target;
    fill_gfid(v_symlink.gfid, 13);
    fill_loc(&v_rename.oldloc, 14);
    fill_loc(&v_rename.newloc, 15);
    v_rename.flags = 2;
    fill_loc(&v_link.oldloc, 16);
    fill_loc(&v_link.newloc, 17);
    fill_loc(&v_create.loc, 18);
    v_create.flags = 0102;
    v_create.mode = 0600;
    fill_gfid(v_create.gfid, 19);
    fill_loc(&v_open.loc, 20);
    v_open.flags = 2;
    v_read = (mrt_read_args){.fd = 3, .size = 131072, .offset = 1 << 30};
    v_write = (mrt_write_args){.fd = 4, .size = 65536, .offset = -1,
                               .flags = 02000};
    v_fd.fd = UINT64_MAX;
    v_fsync = (mrt_fsync_args){.fd = 5, .datasync = TRUE};
    v_readdir = (mrt_readdir_args){.fd = 6, .size = 8192, .offset = 77,
                                   .plus = TRUE};
    fill_loc(&v_setxattr.loc, 21);
    v_setxattr.name = name_xattr;
    v_setxattr.value.value_val = xval;
    v_setxattr.value.value_len = sizeof(xval);
    v_setxattr.flags = 1;
    fill_loc(&v_getxattr.loc, 22);
    v_getxattr.name = name_xattr;
    v_getxattr.has_name = TRUE;
    v_getxattr.size = 100;
    fill_loc(&v_removexattr.loc, 23);
    v_removexattr.name = name_xattr;
    v_lk.fd = 8;
    v_lk.cmd = 7;
    fill_flock(&v_lk.flock);
    v_lk.is_flock = TRUE;
    v_inodelk.domain = name_domain;
    fill_loc(&v_inodelk.loc, 24);
    v_inodelk.cmd = 1;
    fill_flock(&v_inodelk.flock);
    v_entrylk.domain = name_domain;
    fill_loc(&v_entrylk.loc, 25);
    v_entrylk.cmd = 2;
    v_entrylk.type = 1;
    v_fallocate = (mrt_fallocate_args){.fd = 9, .mode = 3, .offset = 10,
                                       .len = 20};
    v_cfr = (mrt_copy_file_range_args){.fd_in = 1, .off_in = 2, .fd_out = 3,
                                       .off_out = 4, .len = 5, .flags = 0};
    v_lseek = (mrt_lseek_args){.fd = 10, .offset = 4096, .whence = 3};
    fill_loc(&v_xattrop.loc, 45);
    v_xattrop.fd = 11;
    v_xattrop.has_fd = TRUE;
    v_xattrop.op = 1;
    for (int i = 0; i < 2; i++) {
        xo_keys[i].name = name_xattr;
        xo_keys[i].value.value_val = xo_val;
        xo_keys[i].value.value_len = 12;
    }
    for (size_t i = 0; i < sizeof(xo_val); i++)
        xo_val[i] = (char)i;
    v_xattrop.keys.keys_len = 2;
    v_xattrop.keys.keys_val = xo_keys;
    r_xattrop.values.values_val = xo_val;
    r_xattrop.values.values_len = sizeof(xo_val);
    v_rchecksum = (mrt_rchecksum_args){.fd = 13, .offset = 65536,
                                       .len = 200000, .block_size = 65536};
    for (int i = 0; i < 3; i++) {
        rck_blocks[i].flags = (unsigned)i;
        rck_blocks[i].len = i < 2 ? 65536 : 3392;
        for (int k = 0; k < MRT_RCHECKSUM_DIGEST_LEN; k++)
            rck_blocks[i].digest[k] = (char)(i * 32 + k);
    }
    r_rchecksum.status = 0;
    fill_iatt(&r_rchecksum.iatt, 46);
    r_rchecksum.blocks.blocks_len = 3;
    r_rchecksum.blocks.blocks_val = rck_blocks;
    r_status.status = -13;
    r_iatt.status = 0;
    fill_iatt(&r_iatt.iatt, 26);
    fill_iatt(&r_fd.iatt, 27);
    r_fd.fd = 12;
    fill_iatt(&r_entry.iatt, 40);
    r_entry.has_postparent = TRUE;
    fill_iatt(&r_entry.postparent, 41);
    r_entry.has_postparent2 = TRUE;
    fill_iatt(&r_entry.postparent2, 42);
    fill_iatt(&r_create.iatt, 43);
    r_create.fd = 13;
    r_create.has_postparent = TRUE;
    fill_iatt(&r_create.postparent, 44);
    fill_iatt(&r_count.iatt, 28);
    r_count.count = 65536;
    r_readlink.link = name_target;
    for (int i = 0; i < 3; i++) {
        dents[i].ino = 100 + i;
        dents[i].off = 1000 + i;
        dents[i].type = 8;
        dents[i].name = name_entry;
        dents[i].has_iatt = i != 1;
        fill_iatt(&dents[i].iatt, 30 + i);
    }
    r_readdir.eof = TRUE;
    r_readdir.ents.ents_len = 3;
    r_readdir.ents.ents_val = dents;
    r_statfs = (mrt_statfs_rsp){.bsize = 4096, .frsize = 4096, .blocks = 1,
                                .bfree = 2, .bavail = 3, .files = 4,
                                .ffree = 5, .favail = 6, .fsid = 7,
                                .flag = 8, .namemax = 255};
    r_getxattr.count = sizeof(xval);
    r_getxattr.value.value_val = xval;
    r_getxattr.value.value_len = sizeof(xval);
    fill_flock(&r_lk.flock);
    r_lseek.offset = 8192;
    return 0;
}


static char *
encode(xdrproc_t fn, void *val, size_t *len)
{
    unsigned long n = xdr_sizeof(fn, val);
    char *buf = malloc(n + 1);
    XDR x;

    assert_non_null(buf);
    xdrmem_create(&x, buf, (u_int)n, XDR_ENCODE);
    assert_true(fn(&x, val));
    assert_int_equal(xdr_getpos(&x), n);
    xdr_destroy(&x);
    *len = n;
    return buf;
}


/* Every type inside a call: decode and re-encode to the same bytes. */
static void
test_round_trip_calls(void **state)
{
    struct vl_caller caller = {.uid = 5, .gid = 6, .pid = 7, .n_groups = 2,
                               .groups = {100, 200}, .lk_owner = 77};

    for (size_t i = 0; i < VL_ARRAY_SIZE(rts); i++) {
        const struct rt *t = &rts[i];
        struct vrpc_call_hdr h;
        char *rec = NULL, *want, *again;
        size_t len, off, used, wlen, alen;
        bool xid_ok;
        void *dec = calloc(1, t->size);

        assert_int_equal(vrpc_encode_call(1000 + (uint32_t)i, MRT_FOPS_PROG,
                                          MRT_VERSION, (uint32_t)i, &caller,
                                          t->fn, t->val, &rec, &len),
                         0);
        assert_int_equal(vrpc_decode_call(rec, len, &h, &off, &xid_ok), 0);
        assert_int_equal(h.xid, 1000 + i);
        assert_int_equal(h.prog, MRT_FOPS_PROG);
        assert_int_equal(h.proc, i);
        assert_true(h.has_caller);
        assert_int_equal(h.caller.uid, 5);
        assert_int_equal(h.caller.n_groups, 2);
        assert_int_equal(h.caller.groups[1], 200);
        assert_int_equal(h.caller.lk_owner, 77);
        assert_int_equal(vrpc_decode_body(rec + off, len - off, t->fn, dec,
                                          &used),
                         0);
        assert_int_equal(off + used, len);
        want = encode(t->fn, t->val, &wlen);
        again = encode(t->fn, dec, &alen);
        if (wlen != alen || memcmp(want, again, wlen) != 0)
            fail_msg("%s does not round-trip", t->name);
        xdr_free(t->fn, dec);
        free(dec);
        free(want);
        free(again);
        vl_free(rec);
    }
}


/* Every type inside a reply, and every truncation of it rejected. */
static void
test_round_trip_replies_and_truncation(void **state)
{
    for (size_t i = 0; i < VL_ARRAY_SIZE(rts); i++) {
        const struct rt *t = &rts[i];
        char *rec = NULL, *want, *again;
        size_t len, off, wlen, alen;
        uint32_t xid;
        int accept;
        void *dec = calloc(1, t->size);

        assert_int_equal(vrpc_encode_reply(7, VRPC_SUCCESS, t->fn, t->val,
                                           &rec, &len),
                         0);
        assert_int_equal(vrpc_decode_reply(rec, len, &xid, &accept, &off), 0);
        assert_int_equal(xid, 7);
        assert_int_equal(accept, VRPC_SUCCESS);
        assert_int_equal(vrpc_decode_body(rec + off, len - off, t->fn, dec,
                                          NULL),
                         0);
        want = encode(t->fn, t->val, &wlen);
        again = encode(t->fn, dec, &alen);
        if (wlen != alen || memcmp(want, again, wlen) != 0)
            fail_msg("%s reply does not round-trip", t->name);
        xdr_free(t->fn, dec);
        for (size_t cut = 0; cut < wlen; cut++) {
            memset(dec, 0, t->size);
            if (vrpc_decode_body(want, cut, t->fn, dec, NULL) != -EPROTO)
                fail_msg("%s truncated to %zu decoded", t->name, cut);
        }
        free(dec);
        free(want);
        free(again);
        vl_free(rec);
    }
}


/* XATTROP's bounds hold against a hostile peer: more than
 * MRT_XATTROP_MAX keys, or a value over MRT_XATTROP_VALUE_MAX bytes, do
 * not decode (nothing of their size is allocated). */
static void
test_xattrop_bounds(void **state)
{
    mrt_xattrop_key keys[MRT_XATTROP_MAX + 1];
    char val[MRT_XATTROP_VALUE_MAX + 4];
    mrt_xattrop_args a, dec;
    size_t len;
    char *enc;
    unsigned long n;
    XDR x;

    memset(val, 1, sizeof(val));
    for (int i = 0; i <= MRT_XATTROP_MAX; i++) {
        keys[i].name = "trusted.mortar.rep.dirty";
        keys[i].value.value_val = val;
        keys[i].value.value_len = 12;
    }
    memset(&a, 0, sizeof(a));
    a.loc.name = "";
    a.op = 1;
    /* MRT_XATTROP_MAX keys go both ways. */
    a.keys.keys_len = MRT_XATTROP_MAX;
    a.keys.keys_val = keys;
    enc = encode((xdrproc_t)xdr_mrt_xattrop_args, &a, &len);
    memset(&dec, 0, sizeof(dec));
    assert_int_equal(vrpc_decode_body(enc, len,
                                      (xdrproc_t)xdr_mrt_xattrop_args, &dec,
                                      NULL),
                     0);
    assert_int_equal(dec.keys.keys_len, MRT_XATTROP_MAX);
    xdr_free((xdrproc_t)xdr_mrt_xattrop_args, (char *)&dec);
    free(enc);
    /* One more key: the count is patched into the encoding of 16 keys
     * plus one, as a hostile peer would send it. */
    a.keys.keys_len = MRT_XATTROP_MAX + 1;
    n = xdr_sizeof((xdrproc_t)xdr_mrt_xattrop_args, &a);
    enc = calloc(1, n);
    assert_non_null(enc);
    xdrmem_create(&x, enc, (u_int)n, XDR_ENCODE);
    /* The encoder refuses it too. */
    assert_false(xdr_mrt_xattrop_args(&x, &a));
    xdr_destroy(&x);
    a.keys.keys_len = MRT_XATTROP_MAX;
    free(enc);
    enc = encode((xdrproc_t)xdr_mrt_xattrop_args, &a, &len);
    {
        /* loc (16 + 4 + 0 + 16) fd 8 has_fd 4 op 4: the count at 52;
         * the keys are last, so one more key's bytes go at the end. */
        size_t at = 16 + 4 + 16 + 8 + 4 + 4;
        size_t klen;
        char *k = encode((xdrproc_t)xdr_mrt_xattrop_key, &keys[0], &klen);
        char *big = calloc(1, len + klen);

        assert_non_null(big);
        memcpy(big, enc, len);
        memcpy(big + len, k, klen);
        assert_int_equal((unsigned char)big[at + 3], MRT_XATTROP_MAX);
        big[at + 3] = MRT_XATTROP_MAX + 1;
        memset(&dec, 0, sizeof(dec));
        assert_int_equal(vrpc_decode_body(big, len + klen,
                                          (xdrproc_t)xdr_mrt_xattrop_args,
                                          &dec, NULL),
                         -EPROTO);
        free(big);
        free(k);
    }
    free(enc);
    /* A value of MRT_XATTROP_VALUE_MAX + 4 bytes does not decode. */
    a.keys.keys_len = 1;
    keys[0].value.value_len = MRT_XATTROP_VALUE_MAX;
    enc = encode((xdrproc_t)xdr_mrt_xattrop_args, &a, &len);
    {
        /* name: length 4 + 24 bytes, then the value's length. */
        size_t at = 16 + 4 + 16 + 8 + 4 + 4 + 4 + 4 + 24;
        char *big = calloc(1, len + 4);

        assert_non_null(big);
        assert_int_equal((unsigned char)enc[at + 3], MRT_XATTROP_VALUE_MAX);
        memcpy(big, enc, len);
        big[at + 3] = MRT_XATTROP_VALUE_MAX + 4;
        memset(&dec, 0, sizeof(dec));
        assert_int_equal(vrpc_decode_body(big, len + 4,
                                          (xdrproc_t)xdr_mrt_xattrop_args,
                                          &dec, NULL),
                         -EPROTO);
        free(big);
    }
    free(enc);
}


/* RCHECKSUM's reply holds at most MRT_RCHECKSUM_BLOCKS_MAX records: a
 * count of one more does not decode (nothing of its size allocated). */
static void
test_rchecksum_bounds(void **state)
{
    mrt_rchecksum_rsp r, dec;
    mrt_rchecksum_block *blocks;
    size_t len;
    char *enc;

    (void)state;
    blocks = calloc(MRT_RCHECKSUM_BLOCKS_MAX, sizeof(*blocks));
    assert_non_null(blocks);
    memset(&r, 0, sizeof(r));
    r.blocks.blocks_len = MRT_RCHECKSUM_BLOCKS_MAX;
    r.blocks.blocks_val = blocks;
    enc = encode((xdrproc_t)xdr_mrt_rchecksum_rsp, &r, &len);
    memset(&dec, 0, sizeof(dec));
    assert_int_equal(vrpc_decode_body(enc, len,
                                      (xdrproc_t)xdr_mrt_rchecksum_rsp, &dec,
                                      NULL),
                     0);
    assert_int_equal(dec.blocks.blocks_len, MRT_RCHECKSUM_BLOCKS_MAX);
    xdr_free((xdrproc_t)xdr_mrt_rchecksum_rsp, (char *)&dec);
    {
        /* status 4, iatt, then the count; one more record appended. */
        size_t at = 4 + xdr_sizeof((xdrproc_t)xdr_mrt_iatt, &r.iatt);
        size_t rec = 4 + 4 + MRT_RCHECKSUM_DIGEST_LEN;
        char *big = calloc(1, len + rec);

        assert_non_null(big);
        memcpy(big, enc, len);
        assert_int_equal(((unsigned char)big[at + 2] << 8)
                             | (unsigned char)big[at + 3],
                         MRT_RCHECKSUM_BLOCKS_MAX);
        big[at + 3] = 1; /* 1024 = 0x400 -> 0x401 */
        memset(&dec, 0, sizeof(dec));
        assert_int_equal(vrpc_decode_body(big, len + rec,
                                          (xdrproc_t)xdr_mrt_rchecksum_rsp,
                                          &dec, NULL),
                         -EPROTO);
        free(big);
    }
    free(enc);
    free(blocks);
}


static void
test_bounds(void **state)
{
    char longname[MRT_NAME_MAX + 2];
    mrt_loc_args a;
    char *rec = NULL;
    size_t len, off;
    char *enc;
    mrt_loc_args dec;
    struct vrpc_call_hdr h;
    bool xid_ok;

    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    memset(&a, 0, sizeof(a));
    a.loc.name = longname;
    /* The encoder refuses a name over MRT_NAME_MAX... */
    assert_int_equal(vrpc_encode_call(1, MRT_FOPS_PROG, 1, 1, NULL,
                                      (xdrproc_t)xdr_mrt_loc_args, &a, &rec,
                                      &len),
                     -EINVAL);
    /* ...and the decoder refuses one that a hostile peer sends. */
    enc = calloc(1, 64 + sizeof(longname));
    memcpy(enc + 16, "\0\0\x01\x00", 4); /* length 256 */
    memset(enc + 20, 'n', 256);
    memset(&dec, 0, sizeof(dec));
    assert_int_equal(vrpc_decode_body(enc, 16 + 4 + 256 + 16,
                                      (xdrproc_t)xdr_mrt_loc_args, &dec,
                                      NULL),
                     -EPROTO);
    /* A readdir reply claiming 2^31 entries is refused, not allocated. */
    {
        char big[12] = {0, 0, 0, 0, 0, 0, 0, 1, (char)0x80, 0, 0, 0};
        mrt_readdir_rsp rd;

        memset(&rd, 0, sizeof(rd));
        assert_int_equal(vrpc_decode_body(big, sizeof(big),
                                          (xdrproc_t)xdr_mrt_readdir_rsp,
                                          &rd, NULL),
                         -EPROTO);
    }
    free(enc);
    /* Headers: garbage, a reply where a call is due, wrong RPC version. */
    assert_int_equal(vrpc_decode_call("abc", 3, &h, &off, &xid_ok), -EPROTO);
    assert_false(xid_ok);
    assert_int_equal(vrpc_encode_reply(5, VRPC_SUCCESS, NULL, NULL, &rec,
                                       &len),
                     0);
    assert_int_equal(vrpc_decode_call(rec, len, &h, &off, &xid_ok), -EPROTO);
    assert_true(xid_ok);
    vl_free(rec);
    assert_int_equal(vrpc_encode_call(9, 1, 1, 1, NULL, NULL, NULL, &rec,
                                      &len),
                     0);
    rec[11] = 3; /* rpcvers 3 */
    assert_int_equal(vrpc_decode_call(rec, len, &h, &off, &xid_ok), -EPROTO);
    rec[11] = 2;
    rec[31] = 0x7f; /* credential length over 400 */
    rec[30] = 0x7f;
    assert_int_equal(vrpc_decode_call(rec, len, &h, &off, &xid_ok), -EPROTO);
    vl_free(rec);
}


static void
test_conversions(void **state)
{
    struct vl_iatt in, out;
    mrt_iatt w;
    struct vl_flock fin = {.type = 1, .whence = 0, .start = 5, .len = 6,
                           .pid = 7},
                    fout;
    mrt_flock fw;
    struct statvfs sin, sout;
    mrt_statfs_rsp sw;

    memset(&in, 0, sizeof(in));
    memset(&out, 0, sizeof(out));
    vl_gfid_generate(&in.gfid);
    in.ino = 1;
    in.mode = 2;
    in.nlink = 3;
    in.uid = 4;
    in.gid = 5;
    in.rdev = 6;
    in.size = 7;
    in.blocks = 8;
    in.blksize = 9;
    in.atime = 10;
    in.mtime = 11;
    in.ctime = 12;
    in.atime_ns = 13;
    in.mtime_ns = 14;
    in.ctime_ns = 15;
    vrpc_iatt_to_xdr(&in, &w);
    vrpc_iatt_from_xdr(&w, &out);
    assert_memory_equal(&in, &out, sizeof(in));
    vrpc_flock_to_xdr(&fin, &fw);
    vrpc_flock_from_xdr(&fw, &fout);
    assert_int_equal(fout.type, fin.type);
    assert_int_equal(fout.whence, fin.whence);
    assert_int_equal(fout.start, fin.start);
    assert_int_equal(fout.len, fin.len);
    assert_int_equal(fout.pid, fin.pid);
    memset(&sin, 0, sizeof(sin));
    sin.f_bsize = 1;
    sin.f_blocks = 2;
    sin.f_bavail = 3;
    sin.f_namemax = 255;
    vrpc_statvfs_to_xdr(&sin, &sw);
    vrpc_statvfs_from_xdr(&sw, &sout);
    assert_memory_equal(&sin, &sout, sizeof(sin));
    assert_true(vrpc_name_ok("a"));
    assert_false(vrpc_name_ok(""));
    assert_false(vrpc_name_ok("a/b"));
    assert_false(vrpc_name_ok(".."));
    assert_int_equal(vrpc_proc_to_fop(VRPC_FOP_PROC(VL_FOP_LSEEK)),
                     VL_FOP_LSEEK);
    assert_int_equal(vrpc_proc_to_fop(0), -1);
    assert_int_equal(vrpc_proc_to_fop(VL_FOP_COUNT + 1), -1);
    for (int op = 0; op < VL_FOP_COUNT; op++)
        assert_non_null(vrpc_fop_desc((vl_fop_t)op));
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_calls),
        cmocka_unit_test(test_round_trip_replies_and_truncation),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_xattrop_bounds),
        cmocka_unit_test(test_rchecksum_bounds),
        cmocka_unit_test(test_conversions),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, fill_all, NULL);
}
