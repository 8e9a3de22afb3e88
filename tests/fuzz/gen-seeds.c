/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen-seeds: writes the binary seed inputs of the fuzz targets into
 * DIR/<target>/ (make fuzz-seeds; DIR is tests/fuzz/corpus), made with
 * the real encoders so each is a message Mortar sends: a call of every
 * brick procedure, a reply of every kind, every management call and
 * reply, record-marked streams. Arguments are those an all-zero body
 * decodes to (empty names, zero numbers), a few with real names. The
 * text seeds (volfiles) are committed as they are.
 * Usage: gen-seeds DIR
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mgmt.h"
#include "vrpc.h"

static const char *out_dir;
static char zeros[8192];


static void
put(const char *target, const char *name, const void *pre, size_t pre_len,
    const void *data, size_t len)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", out_dir, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/%s/%s", out_dir, target, name);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(pre, 1, pre_len, f) != pre_len
        || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}


/* res := what fn decodes from zeros (a valid value of every type). */
static void
zero_value(xdrproc_t fn, void *res, size_t size)
{
    memset(res, 0, size);
    if (vrpc_decode_body(zeros, sizeof(zeros), fn, res, NULL) != 0) {
        fprintf(stderr, "gen-seeds: a zero body does not decode\n");
        exit(1);
    }
}


static void
put_call(const char *target, const char *name, const void *pre,
         size_t pre_len, uint32_t prog, uint32_t vers, uint32_t proc,
         xdrproc_t fn, void *args)
{
    struct vl_caller caller = {.uid = 1000, .gid = 1000, .pid = 42,
                               .n_groups = 2, .groups = {1000, 24}};
    char *buf;
    size_t len;

    if (vrpc_encode_call(7, prog, vers, proc, &caller, fn, args, &buf,
                         &len) != 0) {
        fprintf(stderr, "gen-seeds: %s does not encode\n", name);
        exit(1);
    }
    put(target, name, pre, pre_len, buf, len);
    vl_free(buf);
}


static void
put_reply(const char *target, const char *name, const void *pre,
          size_t pre_len, xdrproc_t fn, void *res, const void *tail,
          size_t tail_len)
{
    char *buf, *all;
    size_t len;

    if (vrpc_encode_reply(7, VRPC_SUCCESS, fn, res, &buf, &len) != 0) {
        fprintf(stderr, "gen-seeds: %s does not encode\n", name);
        exit(1);
    }
    all = malloc(len + tail_len);
    memcpy(all, buf, len);
    memcpy(all + len, tail, tail_len);
    put(target, name, pre, pre_len, all, len + tail_len);
    free(all);
    vl_free(buf);
}


static void
brick_calls(void)
{
    mrt_setvolume_args sv = {.subvolume = "v0-posix", .identity = "fuzz",
                             .proto_version = MRT_PROTO_VERSION};
    union vrpc_fop_wargs wa;
    mrt_fd_args fa = {.fd = 3};

    put_call("fuzz-brick-call", "setvolume", "", 0, MRT_HANDSHAKE_PROG,
             MRT_VERSION, MRT_HS_SETVOLUME,
             (xdrproc_t)xdr_mrt_setvolume_args, &sv);
    put_call("fuzz-brick-call", "release", "", 0, MRT_FOPS_PROG, MRT_VERSION,
             MRT_PROC_RELEASE, (xdrproc_t)xdr_mrt_fd_args, &fa);
    for (int op = 0; op < VL_FOP_COUNT; op++) {
        const struct vrpc_fop_desc *d = vrpc_fop_desc((vl_fop_t)op);
        char name[64];
        char *saved = NULL;

        if (d == NULL)
            continue;
        zero_value(d->args, &wa, sizeof(wa));
        /* A name where the loc has one (every loc-first type). */
        if (d->args != (xdrproc_t)xdr_mrt_inodelk_args
            && d->args != (xdrproc_t)xdr_mrt_entrylk_args
            && op != VL_FOP_READ && op != VL_FOP_WRITE
            && d->args != (xdrproc_t)xdr_mrt_fd_args
            && d->args != (xdrproc_t)xdr_mrt_fsync_args
            && d->args != (xdrproc_t)xdr_mrt_readdir_args
            && d->args != (xdrproc_t)xdr_mrt_lk_args
            && d->args != (xdrproc_t)xdr_mrt_fallocate_args
            && d->args != (xdrproc_t)xdr_mrt_copy_file_range_args
            && d->args != (xdrproc_t)xdr_mrt_lseek_args
            && d->args != (xdrproc_t)xdr_mrt_rchecksum_args) {
            saved = wa.loc.loc.name;
            wa.loc.loc.name = "file.txt";
            wa.loc.loc.parent[15] = 1;
        }
        snprintf(name, sizeof(name), "fop-%s", vl_fop_name((vl_fop_t)op));
        put_call("fuzz-brick-call", name, "", 0, MRT_FOPS_PROG, MRT_VERSION,
                 VRPC_FOP_PROC(op), d->args, &wa);
        if (saved != NULL)
            wa.loc.loc.name = saved;
        xdr_free(d->args, (char *)&wa);
    }
    /* The compounds (protocol 8, LOOKUP_XOP 9), each carrying a one-key
     * xattrop. */
    for (uint32_t proc = MRT_PROC_INODELK_XOP; proc <= MRT_PROC_LOOKUP_XOP;
         proc++) {
        static const char *names[] = {"cpd-inodelk-xop", "cpd-entrylk-xop",
                                      "cpd-xattrop-unlock",
                                      "cpd-lookup-xop"};
        char dirty[12] = {0, 0, 0, 1};
        mrt_xattrop_key key = {.name = "trusted.mortar.rep.dirty",
                               .value = {.value_len = 12,
                                         .value_val = dirty}};
        mrt_xattrop_args *xop;
        vl_fop_t op;
        const struct vrpc_fop_desc *d = vrpc_cpd_desc(proc, &op);

        if (d == NULL) {
            fprintf(stderr, "gen-seeds: no compound procedure %u\n", proc);
            exit(1);
        }
        zero_value(d->args, &wa, sizeof(wa));
        xop = proc == MRT_PROC_INODELK_XOP   ? &wa.inodelk_xop.xop
              : proc == MRT_PROC_ENTRYLK_XOP ? &wa.entrylk_xop.xop
              : proc == MRT_PROC_LOOKUP_XOP  ? &wa.lookup_xop.xop
                                             : &wa.xattrop_unlock.xop;
        xdr_free((xdrproc_t)xdr_mrt_xattrop_args, (char *)xop);
        memset(xop, 0, sizeof(*xop));
        xop->loc.name = "";
        xop->loc.gfid[15] = 1;
        xop->op = VL_XATTROP_ADD32;
        xop->keys.keys_len = 1;
        xop->keys.keys_val = &key;
        put_call("fuzz-brick-call", names[proc - MRT_PROC_INODELK_XOP], "", 0,
                 MRT_FOPS_PROG, MRT_VERSION, proc, d->args, &wa);
        memset(xop, 0, sizeof(*xop)); /* borrowed: not freed below */
        xop->loc.name = NULL;
        xdr_free(d->args, (char *)&wa);
    }
}


static void
brick_replies(void)
{
    union vrpc_fop_rsp r;
    mrt_setvolume_rsp sv = {.status = 0, .error = "", .client_id = 5};
    mrt_dirent ents[2];
    mrt_rchecksum_block blocks[2];
    mrt_break_lease_args bl = {{0}};
    unsigned char pre[2];
    static const char content[] = "hello, mortar\n";

    for (int k = 0; k <= VRPC_RSP_RCHECKSUM; k++) {
        xdrproc_t fn = vrpc_rsp_xdr((enum vrpc_rsp_kind)k);
        char name[32];

        zero_value(fn, &r, sizeof(r));
        pre[0] = (unsigned char)k;
        pre[1] = 16;
        snprintf(name, sizeof(name), "kind-%d", k);
        put_reply("fuzz-brick-reply", name, pre, 2, fn, &r, "", 0);
        xdr_free(fn, (char *)&r);
    }
    /* A readdirplus answer with one file's content after the XDR. */
    memset(&r, 0, sizeof(r));
    memset(ents, 0, sizeof(ents));
    ents[0].ino = 1;
    ents[0].off = 1;
    ents[0].type = 4;
    ents[0].name = "dir";
    ents[1].ino = 2;
    ents[1].off = 2;
    ents[1].type = 8;
    ents[1].name = "hello";
    ents[1].has_iatt = 1;
    ents[1].iatt.mode = 0100644;
    ents[1].iatt.size = sizeof(content) - 1;
    ents[1].has_content = 1;
    ents[1].content_len = sizeof(content) - 1;
    r.readdir.eof = 1;
    r.readdir.ents.ents_len = 2;
    r.readdir.ents.ents_val = ents;
    pre[0] = VRPC_RSP_READDIR;
    pre[1] = 1;
    put_reply("fuzz-brick-reply", "readdirplus-content", pre, 2,
              vrpc_rsp_xdr(VRPC_RSP_READDIR), &r, content,
              sizeof(content) - 1);
    /* RCHECKSUM: two 4 KiB blocks, the second a hole. */
    memset(&r, 0, sizeof(r));
    memset(blocks, 0, sizeof(blocks));
    blocks[0].len = 4096;
    memset(blocks[0].digest, 0xab, sizeof(blocks[0].digest));
    blocks[1].flags = MRT_RCHECKSUM_ZERO | MRT_RCHECKSUM_HOLE;
    blocks[1].len = 4096;
    r.rchecksum.blocks.blocks_len = 2;
    r.rchecksum.blocks.blocks_val = blocks;
    pre[0] = VRPC_RSP_RCHECKSUM;
    pre[1] = 0x10;
    put_reply("fuzz-brick-reply", "rchecksum-blocks", pre, 2,
              vrpc_rsp_xdr(VRPC_RSP_RCHECKSUM), &r, "", 0);
    pre[0] = 16;
    put_reply("fuzz-brick-reply", "setvolume", pre, 2,
              (xdrproc_t)xdr_mrt_setvolume_rsp, &sv, "", 0);
    bl.gfid[15] = 9;
    put_call("fuzz-brick-reply", "break-lease", pre, 2, MRT_CALLBACK_PROG,
             MRT_VERSION, MRT_CBK_BREAK_LEASE,
             (xdrproc_t)xdr_mrt_break_lease_args, &bl);
}


static void
mgmt_seeds(void)
{
    static char *create[] = {"volume", "create", "v0", "replica", "3",
                             "h1:/b/1", "h2:/b/1", "[::1]:/b/1", "force"};
    static char *set[] = {"volume", "set", "v0",
                          "performance.io-thread-count", "32",
                          "auth.allow", "10.0.0.*"};
    mgmt_cli_req cli = {.format = MGMT_FMT_TEXT};
    mgmt_txn_req txn = {.txn_id = "t1", .from = "uuid-a",
                        .phase = MGMT_TXN_COMMIT,
                        .params = "volume-id=1234\nbricks=2\n"};
    mgmt_getspec_req gs = {.volume = "v0"};
    mgmt_hello_req hello = {.self = {.uuid = "uuid-a", .host = "h1",
                                     .port = 24007},
                            .to_host = "h2", .is_probe = 1};
    mgmt_vol_def def = {.name = "v0", .vol_version = 3,
                        .info = "type=replicate\nreplica=3\nbrick.0=h1:/b\n",
                        .options = "performance.io-thread-count=32\n"};
    mgmt_vols_msg vols = {.from = "uuid-a"};
    static const struct {
        const char *name;
        uint32_t proc;
        xdrproc_t fn;
    } zero_calls[] = {
        {"watch", MGMT_PROC_WATCH, (xdrproc_t)xdr_mgmt_watch_req},
        {"brick-status", MGMT_PROC_BRICK_STATUS,
         (xdrproc_t)xdr_mgmt_brick_status_req},
        {"rebal-task", MGMT_PROC_REBAL_TASK, (xdrproc_t)xdr_mgmt_rebal_req},
        {"rebal-state", MGMT_PROC_REBAL_STATE,
         (xdrproc_t)xdr_mgmt_rebal_req},
        {"peer-list", MGMT_PROC_PEER_LIST,
         (xdrproc_t)xdr_mgmt_peer_list_req},
        {"peer-members", MGMT_PROC_PEER_MEMBERS,
         (xdrproc_t)xdr_mgmt_members_req},
        {"peer-sync", MGMT_PROC_PEER_SYNC, (xdrproc_t)xdr_mgmt_sync_msg},
    };
    static char nonce[MGMT_AUTH_NONCE_LEN], proof[MGMT_AUTH_PROOF_LEN];
    mgmt_auth_req auth_hello = {.step = MGMT_AUTH_HELLO, .uuid = "uuid-a",
                                .nonce = {sizeof(nonce), nonce}};
    mgmt_auth_req auth_prove = {.step = MGMT_AUTH_PROVE, .uuid = "uuid-a",
                                .proof = {sizeof(proof), proof}};
    static const xdrproc_t replies[] = {
        (xdrproc_t)xdr_mgmt_cli_rsp, (xdrproc_t)xdr_mgmt_getspec_rsp,
        (xdrproc_t)xdr_mgmt_hello_rsp, (xdrproc_t)xdr_mgmt_status_rsp,
        (xdrproc_t)xdr_mgmt_vols_msg, (xdrproc_t)xdr_mgmt_sync_msg,
        (xdrproc_t)xdr_mgmt_brick_status_rsp, (xdrproc_t)xdr_mgmt_rebal_rsp,
        (xdrproc_t)xdr_mgmt_rebal_state_rsp, (xdrproc_t)xdr_mgmt_auth_rsp,
    };
    /* HEAL_INFO (mortard/heal-peers.c): a call naming two bricks, and an
     * answer with entry names (the last one unterminated, as a short
     * read would leave it). The reply's role picks the type that
     * fuzz-mgmt's reply_types lists it at: after the ten above. */
    static char *heal_paths[] = {"/d/b1", "/d/b2"};
    static char heal_names[] = "/a\0<gfid:0a1b2c3d-0000-4000-8000-"
                               "000000000001>\0/d/e\0/cut";
    mgmt_heal_info_req heal_req = {.volume = "v0", .names = 1,
                                   .name_bytes = 1 << 20,
                                   .paths = {2, heal_paths}};
    mgmt_heal_brick_info heal_bricks[] = {
        {.status = 0, .count = 3,
         .names = {sizeof(heal_names) - 1, heal_names}},
        {.status = -2, .count = 0, .names = {0, NULL}},
    };
    mgmt_heal_info_rsp heal_rsp = {.bricks = {2, heal_bricks}};
    unsigned char role = 0;
    char any[4096];

    cli.argv.argv_len = VL_ARRAY_SIZE(create);
    cli.argv.argv_val = create;
    put_call("fuzz-mgmt", "cli-create", &role, 1, MGMT_PROG, MGMT_VERSION,
             MGMT_PROC_CLI, (xdrproc_t)xdr_mgmt_cli_req, &cli);
    cli.argv.argv_len = VL_ARRAY_SIZE(set);
    cli.argv.argv_val = set;
    put_call("fuzz-mgmt", "cli-set", &role, 1, MGMT_PROG, MGMT_VERSION,
             MGMT_PROC_CLI, (xdrproc_t)xdr_mgmt_cli_req, &cli);
    txn.argv.argv_len = cli.argv.argv_len;
    txn.argv.argv_val = cli.argv.argv_val;
    put_call("fuzz-mgmt", "txn-commit", &role, 1, MGMT_PROG, MGMT_VERSION,
             MGMT_PROC_PEER_TXN, (xdrproc_t)xdr_mgmt_txn_req, &txn);
    put_call("fuzz-mgmt", "getspec", &role, 1, MGMT_PROG, MGMT_VERSION,
             MGMT_PROC_GETSPEC, (xdrproc_t)xdr_mgmt_getspec_req, &gs);
    put_call("fuzz-mgmt", "hello", &role, 1, MGMT_PROG, MGMT_VERSION,
             MGMT_PROC_PEER_HELLO, (xdrproc_t)xdr_mgmt_hello_req, &hello);
    vols.vols.vols_len = 1;
    vols.vols.vols_val = &def;
    put_call("fuzz-mgmt", "peer-vols", &role, 1, MGMT_PROG, MGMT_VERSION,
             MGMT_PROC_PEER_VOLS, (xdrproc_t)xdr_mgmt_vols_msg, &vols);
    put_call("fuzz-mgmt", "auth-hello", &role, 1, MGMT_PROG, MGMT_VERSION,
             MGMT_PROC_AUTH, (xdrproc_t)xdr_mgmt_auth_req, &auth_hello);
    put_call("fuzz-mgmt", "auth-prove", &role, 1, MGMT_PROG, MGMT_VERSION,
             MGMT_PROC_AUTH, (xdrproc_t)xdr_mgmt_auth_req, &auth_prove);
    put_call("fuzz-mgmt", "heal-info", &role, 1, MGMT_PROG, MGMT_VERSION,
             MGMT_PROC_HEAL_INFO, (xdrproc_t)xdr_mgmt_heal_info_req,
             &heal_req);
    for (size_t i = 0; i < VL_ARRAY_SIZE(zero_calls); i++) {
        zero_value(zero_calls[i].fn, any, sizeof(any));
        put_call("fuzz-mgmt", zero_calls[i].name, &role, 1, MGMT_PROG,
                 MGMT_VERSION, zero_calls[i].proc, zero_calls[i].fn, any);
        xdr_free(zero_calls[i].fn, any);
    }
    for (size_t i = 0; i < VL_ARRAY_SIZE(replies); i++) {
        char name[32];

        role = (unsigned char)(2 * i + 1);
        zero_value(replies[i], any, sizeof(any));
        snprintf(name, sizeof(name), "reply-%zu", i);
        put_reply("fuzz-mgmt", name, &role, 1, replies[i], any, "", 0);
        xdr_free(replies[i], any);
    }
    role = (unsigned char)(2 * VL_ARRAY_SIZE(replies) + 1);
    put_reply("fuzz-mgmt", "heal-info-rsp", &role, 1,
              (xdrproc_t)xdr_mgmt_heal_info_rsp, &heal_rsp, "", 0);
}


/* Record-marked streams: [max / 64][cut seed] then marks and bodies. */
static void
record_seeds(void)
{
    static const unsigned char one[] = {255, 1, 0x80, 0, 0, 4, 'a', 'b',
                                        'c', 'd'};
    static const unsigned char frags[] = {16, 2, 0, 0, 0, 2, 'h', 'e',
                                          0x80, 0, 0, 3, 'l', 'l', 'o',
                                          0x80, 0, 0, 0};
    static const unsigned char big[] = {1, 3, 0x80, 0, 4, 0, 'x'};
    static const unsigned char empty[] = {8, 4, 0, 0, 0, 0, 0x80, 0, 0, 0,
                                          0x80, 0, 0, 1, 'z'};

    put("fuzz-record", "one", "", 0, one, sizeof(one));
    put("fuzz-record", "fragments", "", 0, frags, sizeof(frags));
    put("fuzz-record", "over-max", "", 0, big, sizeof(big));
    put("fuzz-record", "empty-fragments", "", 0, empty, sizeof(empty));
}


/* fuzz-fuse: messages as fuzz-fuse.c reads them, [u16 length][opcode]
 * [nodeid selector][selector 2][selector 3][payload]. */
struct fuse_seed {
    char buf[4096];
    size_t len;
};


/* The payload: a_len bytes of a, then tail_len bytes of tail. */
static void
fuse_msg_tail(struct fuse_seed *fs, uint32_t op, uint8_t s1, uint8_t s2,
              uint8_t s3, const void *a, size_t a_len, const char *tail,
              size_t tail_len)
{
    size_t n = a_len + tail_len;
    char *p = fs->buf + fs->len;

    p[0] = (char)(n & 0xff);
    p[1] = (char)(n >> 8);
    p[2] = (char)op;
    p[3] = (char)s1;
    p[4] = (char)s2;
    p[5] = (char)s3;
    memcpy(p + 6, a, a_len);
    memcpy(p + 6 + a_len, tail, tail_len);
    fs->len += 6 + n;
}


/* The same with a NUL-terminated name (if any) after a. */
static void
fuse_msg(struct fuse_seed *fs, uint32_t op, uint8_t s1, uint8_t s2,
         uint8_t s3, const void *a, size_t a_len, const char *name)
{
    fuse_msg_tail(fs, op, s1, s2, s3, a, a_len, name != NULL ? name : "",
                  name != NULL ? strlen(name) + 1 : 0);
}


static void
fuse_seeds(void)
{
    struct fuse_seed fs;
    struct fuse_open_in open_in = {.flags = O_RDONLY};
    struct fuse_read_in read_in = {.size = 4096};
    struct fuse_release_in rel = {0};
    struct fuse_flush_in flush = {0};
    struct fuse_getattr_in ga = {0};
    struct fuse_forget_in forget = {.nlookup = 1};
    struct fuse_create_in create = {.flags = O_CREAT | O_WRONLY,
                                    .mode = 0100644, .umask = 022};
    struct fuse_write_in write_in = {.size = 5};
    struct fuse_setattr_in sa = {.valid = FATTR_SIZE | FATTR_FH,
                                 .size = 2};
    struct fuse_fsync_in fsync_in = {0};
    struct fuse_mkdir_in mkdir_in = {.mode = 040755, .umask = 022};
    struct fuse_rename2_in ren = {0};
    struct fuse_link_in link_in = {0};
    struct fuse_getxattr_in gx = {.size = 256};
    struct fuse_setxattr_in sx = {.size = 3};
    struct fuse_access_in acc = {.mask = 4};
    struct fuse_lseek_in ls = {.whence = 3};
    struct fuse_lk_in lk = {.lk = {.type = 1, .end = 100}};
    struct fuse_fallocate_in fa = {.length = 4096};
    struct fuse_copy_file_range_in cfr = {.len = 4};
    struct fuse_init_in init = {.major = 7, .minor = 31,
                                .max_readahead = 131072,
                                .flags = 0xffffffffu};
    struct {
        struct fuse_batch_forget_in b;
        struct fuse_forget_one one[2];
    } bf = {.b = {.count = 2}, .one = {{0, 1}, {0, 1}}};
    struct fuse_interrupt_in intr = {.unique = 1};

    /* A file looked up, read, released and forgotten. */
    fs.len = 0;
    fuse_msg(&fs, FUSE_LOOKUP, 0, 0, 0, "", 0, "hello");
    fuse_msg(&fs, FUSE_GETATTR, 1, 0, 0, &ga, sizeof(ga), NULL);
    fuse_msg(&fs, FUSE_OPEN, 1, 0, 0, &open_in, sizeof(open_in), NULL);
    fuse_msg(&fs, FUSE_READ, 1, 0, 0, &read_in, sizeof(read_in), NULL);
    fuse_msg(&fs, FUSE_LSEEK, 1, 0, 0, &ls, sizeof(ls), NULL);
    fuse_msg(&fs, FUSE_GETLK, 1, 0, 0, &lk, sizeof(lk), NULL);
    fuse_msg(&fs, FUSE_FLUSH, 1, 0, 0, &flush, sizeof(flush), NULL);
    fuse_msg(&fs, FUSE_RELEASE, 1, 0, 0, &rel, sizeof(rel), NULL);
    fuse_msg(&fs, FUSE_FORGET, 1, 0, 0, &forget, sizeof(forget), NULL);
    put("fuzz-fuse", "lookup-read", "", 0, fs.buf, fs.len);

    /* A file created, written, truncated through its handle, synced. */
    fs.len = 0;
    fuse_msg(&fs, FUSE_CREATE, 0, 0, 0, &create, sizeof(create), "new");
    fuse_msg(&fs, FUSE_WRITE, 1, 0, 0, &write_in, sizeof(write_in),
             "data");
    fuse_msg(&fs, FUSE_SETATTR, 1, 0, 0, &sa, sizeof(sa), NULL);
    fuse_msg(&fs, FUSE_FSYNC, 1, 0, 0, &fsync_in, sizeof(fsync_in), NULL);
    fuse_msg(&fs, FUSE_FALLOCATE, 1, 0, 0, &fa, sizeof(fa), NULL);
    fuse_msg(&fs, FUSE_COPY_FILE_RANGE, 1, 0, 0, &cfr, sizeof(cfr), NULL);
    fuse_msg(&fs, FUSE_RELEASE, 1, 0, 0, &rel, sizeof(rel), NULL);
    put("fuzz-fuse", "create-write", "", 0, fs.buf, fs.len);

    /* The root listed; names made, renamed, linked, removed; xattrs. */
    fs.len = 0;
    fuse_msg(&fs, FUSE_INIT, 0, 0, 0, &init, sizeof(init), NULL);
    fuse_msg(&fs, FUSE_OPENDIR, 0, 0, 0, &open_in, sizeof(open_in), NULL);
    fuse_msg(&fs, FUSE_READDIRPLUS, 0, 0, 0, &read_in, sizeof(read_in),
             NULL);
    fuse_msg(&fs, FUSE_READDIR, 0, 0, 0, &read_in, sizeof(read_in), NULL);
    fuse_msg(&fs, FUSE_RELEASEDIR, 0, 0, 0, &rel, sizeof(rel), NULL);
    fuse_msg(&fs, FUSE_STATFS, 0, 0, 0, "", 0, NULL);
    fuse_msg(&fs, FUSE_MKDIR, 0, 0, 0, &mkdir_in, sizeof(mkdir_in), "d");
    fuse_msg(&fs, FUSE_LOOKUP, 0, 0, 0, "", 0, "hello");
    fuse_msg(&fs, FUSE_LINK, 0, 0, 1, &link_in, sizeof(link_in), "h2");
    fuse_msg_tail(&fs, FUSE_RENAME2, 0, 0, 0, &ren, sizeof(ren), "h2\0h3", 6);
    fuse_msg(&fs, FUSE_SYMLINK, 0, 0, 0, "hello", 6, "sl");
    fuse_msg(&fs, FUSE_ACCESS, 1, 0, 0, &acc, sizeof(acc), NULL);
    fuse_msg(&fs, FUSE_GETXATTR, 1, 0, 0, &gx, sizeof(gx), "user.a");
    fuse_msg_tail(&fs, FUSE_SETXATTR, 1, 0, 0, &sx, sizeof(sx),
                  "user.a\0abc", 10);
    fuse_msg(&fs, FUSE_LISTXATTR, 1, 0, 0, &gx, sizeof(gx), NULL);
    fuse_msg(&fs, FUSE_REMOVEXATTR, 1, 0, 0, "", 0, "user.a");
    fuse_msg(&fs, FUSE_READLINK, 1, 0, 0, "", 0, NULL);
    fuse_msg(&fs, FUSE_UNLINK, 0, 0, 0, "", 0, "hello");
    fuse_msg(&fs, FUSE_RMDIR, 0, 0, 0, "", 0, "d");
    fuse_msg(&fs, FUSE_INTERRUPT, 0, 0, 0, &intr, sizeof(intr), NULL);
    fuse_msg(&fs, FUSE_BATCH_FORGET, 0, 0, 0, &bf, sizeof(bf), NULL);
    fuse_msg(&fs, FUSE_DESTROY, 0, 0, 0, "", 0, NULL);
    put("fuzz-fuse", "namespace", "", 0, fs.buf, fs.len);
}


int
main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen-seeds DIR\n");
        return 2;
    }
    out_dir = argv[1];
    vl_global_init();
    brick_calls();
    brick_replies();
    mgmt_seeds();
    record_seeds();
    fuse_seeds();
    return 0;
}
