/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-protocol-rchecksum: the RCHECKSUM fop over the wire (procedure
 * 32), protocol/client and protocol/server over 127.0.0.1. The brick
 * graph is protocol/server over "rck/leaf", an in-test translator that
 * answers RCHECKSUM with records it makes up (right ones, or one of
 * several wrong shapes), or over storage/posix; the client graph is
 * "ph/ready" over protocol/client (proto-harness.c).
 *
 * Covers: the arguments arriving intact and the records and attributes
 * coming back (flags, lens, digests); a range past EOF (no records);
 * the client refusing bad bounds before sending; the server refusing
 * bad bounds from a raw peer with -EINVAL (the leaf never sees them);
 * a leaf answering more records than blocks turned into -EIO by the
 * server; records of a wrong length, unknown flags or HOLE without ZERO
 * refused by the client with -EPROTO; and end to end over storage/posix:
 * digests of a file with data, a hole and a short tail equal SHA-256 of
 * the bytes written.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "builtin.h"
#include "proto-harness.h"

/* What the leaf answers. */
enum leaf_mode {
    LEAF_RIGHT = 0,   /* one record per block, as a brick would */
    LEAF_TOO_MANY,    /* one record more than the range has blocks */
    LEAF_LONG,        /* the first record longer than its block */
    LEAF_SHORT_FIRST, /* the first of several records shorter */
    LEAF_UNKNOWN,     /* a flag nobody knows */
    LEAF_HOLE_ONLY,   /* HOLE without ZERO */
};

/* ---- rck/leaf ---- */

static struct {
    pthread_mutex_t lock;    /* guards everything here */
    enum leaf_mode mode;     /* what to answer */
    int n_calls;             /* RCHECKSUMs seen */
    struct vl_rchecksum_args last; /* the last one's arguments (fd kept
                                    * only as a pointer, never used) */
    uint64_t size;           /* the size answered in iatt */
} leaf;


/* Digest of block i made up by the leaf: bytes i, i + 1, ... */
static void
leaf_digest(uint32_t i, uint8_t *out)
{
    for (uint32_t k = 0; k < VL_RCHECKSUM_DIGEST_LEN; k++)
        out[k] = (uint8_t)(i + k);
}


static int
leaf_rchecksum(const struct vl_rchecksum_args *a, struct vl_reply *rp)
{
    uint32_t n = 0;

    while (vl_rchecksum_block_len(a->offset, a->len, a->block_size,
                                  leaf.size, n) > 0)
        n++;
    rp->iatt.size = leaf.size;
    rp->iatt.mode = S_IFREG | 0644;
    if (leaf.mode == LEAF_TOO_MANY)
        n++;
    if (n == 0)
        return 0;
    rp->sums = vl_calloc(NULL, n, sizeof(*rp->sums), VL_MT_REPLY);
    if (rp->sums == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        rp->sums[i].len = vl_rchecksum_block_len(a->offset, a->len,
                                                 a->block_size, leaf.size,
                                                 i);
        if (rp->sums[i].len == 0)
            rp->sums[i].len = a->block_size;
        rp->sums[i].flags = i % 3 == 2 ? VL_RCHECKSUM_ZERO : 0;
        if (rp->sums[i].flags == 0)
            leaf_digest(i, rp->sums[i].digest);
    }
    if (leaf.mode == LEAF_LONG)
        rp->sums[0].len = a->block_size + 1;
    if (leaf.mode == LEAF_SHORT_FIRST)
        rp->sums[0].len = a->block_size - 1;
    if (leaf.mode == LEAF_UNKNOWN)
        rp->sums[0].flags = 1u << 7;
    if (leaf.mode == LEAF_HOLE_ONLY)
        rp->sums[0].flags = VL_RCHECKSUM_HOLE;
    rp->n_sums = n;
    return 0;
}


static void
leaf_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_reply *rp = &req->reply;
    union vl_fop_args *a = &req->args;
    int status = 0;

    pthread_mutex_lock(&leaf.lock);
    switch (req->op) {
    case VL_FOP_CREATE:
        memset(&rp->iatt, 0, sizeof(rp->iatt));
        rp->iatt.gfid = a->create.gfid;
        rp->iatt.ino = vl_gfid_to_ino(&a->create.gfid);
        rp->iatt.mode = S_IFREG | 0644;
        rp->iatt.nlink = 1;
        break;
    case VL_FOP_RCHECKSUM:
        leaf.n_calls++;
        leaf.last = a->rchecksum;
        status = leaf_rchecksum(&a->rchecksum, rp);
        break;
    case VL_FOP_FLUSH:
        break;
    default:
        status = -ENOSYS;
    }
    pthread_mutex_unlock(&leaf.lock);
    vl_unwind(req, status);
}


struct rck_conf {
    bool dummy; /* no options */
};

static const vl_option_t rck_options[] = {VL_OPT_END};
static const char *const rck_types[] = {"misc", NULL};

static const vl_xlator_class_t leaf_class = {
    .abi = VL_XLATOR_ABI,
    .type = "rck/leaf",
    .prefix = "leaf",
    .flags = VL_XL_LEAF,
    .conf_size = sizeof(struct rck_conf),
    .options = rck_options,
    .mem_types = rck_types,
    .doc = "Answers RCHECKSUM with made-up records for the wire tests.",
    .fops = {
        [VL_FOP_CREATE] = leaf_fop,
        [VL_FOP_RCHECKSUM] = leaf_fop,
        [VL_FOP_FLUSH] = leaf_fop,
    },
};

/* ---- graphs ---- */

struct env {
    struct ph_env ph;         /* the brick and its client */
    char brick[64];           /* storage/posix's directory, or "" */
    vl_inode_t *inode;        /* ref: the file made by rck_create */
    vl_fd_t *fd;              /* ref: its fd */
};


/* Creates "f" through the client: e->inode and e->fd. */
static void
rck_create(struct env *e)
{
    union vl_fop_args a;
    struct vl_reply r;

    e->inode = vl_inode_new(e->ph.cg->itable);
    e->fd = vl_fd_new(e->inode, O_RDWR | O_CREAT, 1);
    memset(&a, 0, sizeof(a));
    a.create.loc.parent = vl_inode_table_root(e->ph.cg->itable);
    a.create.loc.name = "f";
    a.create.loc.inode = e->inode;
    a.create.flags = O_RDWR | O_CREAT;
    a.create.mode = 0644;
    vl_gfid_generate(&a.create.gfid);
    a.create.fd = e->fd;
    assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_CREATE, &a, NULL, &r),
                     0);
    vl_inode_unref(vl_inode_link(e->inode, &r.iatt));
    vl_reply_clear(&r);
    vl_inode_unref(a.create.loc.parent);
}


/* The brick: storage/posix on a fresh directory when e->brick is set,
 * else rck/leaf. */
static int
rck_up(void **state, struct env *e)
{
    char text[256];

    ph_init();
    vl_log_set_level(VL_LOG_CRITICAL);
    (void)vl_registry_add(&xl_storage_posix);
    (void)vl_registry_add(&leaf_class);
    memset(&leaf, 0, sizeof(leaf));
    pthread_mutex_init(&leaf.lock, NULL);
    leaf.size = 10 * 65536 + 100;
    ph_env_start(&e->ph);
    if (e->brick[0] != '\0')
        snprintf(text, sizeof(text),
                 "volume rck-leaf\n type storage/posix\n"
                 " option directory %s\nend-volume\n", e->brick);
    else
        snprintf(text, sizeof(text), "volume rck-leaf\n type rck/leaf\n"
                 "end-volume\n");
    ph_brick_up(&e->ph, text, "rck-leaf", "127.0.0.1");
    ph_client_up(&e->ph, "rck-leaf", "", "ph/ready");
    assert_int_equal(vl_graph_wait_ready(e->ph.cg, PH_WAIT_MS, NULL, 0), 0);
    rck_create(e);
    *state = e;
    return 0;
}


static int
rck_setup(void **state)
{
    return rck_up(state, calloc(1, sizeof(struct env)));
}


static int
rck_setup_posix(void **state)
{
    struct env *e = calloc(1, sizeof(*e));

    snprintf(e->brick, sizeof(e->brick), "/tmp/rchecksum-brick-XXXXXX");
    assert_non_null(mkdtemp(e->brick));
    return rck_up(state, e);
}


static int
rck_teardown(void **state)
{
    struct env *e = *state;

    vl_fd_unref(e->fd);
    vl_inode_unref(e->inode);
    ph_env_stop(&e->ph);
    if (e->brick[0] != '\0')
        ph_rmtree(e->brick);
    free(e);
    return 0;
}

/* ---- helpers ---- */

static int
do_rchecksum(struct env *e, off_t off, uint32_t len, uint32_t bs,
             struct vl_reply *r /* OUT, cleared by the caller */)
{
    union vl_fop_args a;

    memset(&a, 0, sizeof(a));
    a.rchecksum.fd = e->fd;
    a.rchecksum.offset = off;
    a.rchecksum.len = len;
    a.rchecksum.block_size = bs;
    return vl_sync_call(e->ph.cg->top, VL_FOP_RCHECKSUM, &a, NULL, r);
}


static int
leaf_calls(void)
{
    int n;

    pthread_mutex_lock(&leaf.lock);
    n = leaf.n_calls;
    pthread_mutex_unlock(&leaf.lock);
    return n;
}


static void
set_mode(enum leaf_mode mode)
{
    pthread_mutex_lock(&leaf.lock);
    leaf.mode = mode;
    pthread_mutex_unlock(&leaf.lock);
}

/* ---- tests over the leaf ---- */

/* The arguments arrive as sent; the records come back as answered. */
static void
test_round_trip(void **state)
{
    struct env *e = *state;
    uint8_t want[VL_RCHECKSUM_DIGEST_LEN];
    static const uint8_t zero[VL_RCHECKSUM_DIGEST_LEN];
    struct vl_reply r;

    /* 8 blocks of 64 KiB from 192 KiB; the file ends 100 bytes into the
     * last of them. */
    assert_int_equal(do_rchecksum(e, 196608, 8 * 65536, 65536, &r), 0);
    pthread_mutex_lock(&leaf.lock);
    assert_int_equal(leaf.last.offset, 196608);
    assert_int_equal(leaf.last.len, 8 * 65536);
    assert_int_equal(leaf.last.block_size, 65536);
    assert_non_null(leaf.last.fd);
    pthread_mutex_unlock(&leaf.lock);
    assert_int_equal(r.iatt.size, 10 * 65536 + 100);
    assert_int_equal(r.n_sums, 8);
    for (uint32_t i = 0; i < r.n_sums; i++) {
        assert_int_equal(r.sums[i].len, i < 7 ? 65536 : 100);
        if (i % 3 == 2) {
            assert_int_equal(r.sums[i].flags, VL_RCHECKSUM_ZERO);
            assert_memory_equal(r.sums[i].digest, zero, sizeof(zero));
        } else {
            assert_int_equal(r.sums[i].flags, 0);
            leaf_digest(i, want);
            assert_memory_equal(r.sums[i].digest, want, sizeof(want));
        }
    }
    vl_reply_clear(&r);
    /* Past EOF: success, no records, the size. */
    assert_int_equal(do_rchecksum(e, 1048576, 65536, 65536, &r), 0);
    assert_int_equal(r.n_sums, 0);
    assert_null(r.sums);
    assert_int_equal(r.iatt.size, 10 * 65536 + 100);
    vl_reply_clear(&r);
    /* The largest call: 1024 records of 4 KiB. */
    pthread_mutex_lock(&leaf.lock);
    leaf.size = 64ull << 20;
    pthread_mutex_unlock(&leaf.lock);
    assert_int_equal(do_rchecksum(e, 0, VL_RCHECKSUM_LEN_MAX, 4096, &r), 0);
    assert_int_equal(r.n_sums, VL_RCHECKSUM_BLOCKS_MAX);
    leaf_digest(1000, want);
    assert_memory_equal(r.sums[1000].digest, want, sizeof(want));
    vl_reply_clear(&r);
    assert_int_equal(leaf_calls(), 3);
}


/* Bad bounds never leave the client. */
static void
test_client_refuses(void **state)
{
    struct env *e = *state;
    static const struct {
        off_t off;
        uint32_t len;
        uint32_t bs;
    } bad[] = {
        {0, 65536, 3000},    {0, 65536, 2048}, {0, 65536, 2 << 20},
        {0, 0, 4096},        {0, (4 << 20) + 1, 4096},
        {4096, 65536, 8192}, {-4096, 65536, 4096},
    };
    struct vl_reply r;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(do_rchecksum(e, bad[i].off, bad[i].len, bad[i].bs,
                                      &r),
                         -EINVAL);
        vl_reply_clear(&r);
    }
    assert_int_equal(leaf_calls(), 0);
}


/* A broken leaf: too many records is -EIO from the server; records of a
 * wrong shape are -EPROTO at the client; the next good answer is fine. */
static void
test_broken_answers(void **state)
{
    struct env *e = *state;
    static const struct {
        enum leaf_mode mode;
        int status;
    } cases[] = {
        {LEAF_TOO_MANY, -EIO},       {LEAF_LONG, -EPROTO},
        {LEAF_SHORT_FIRST, -EPROTO}, {LEAF_UNKNOWN, -EPROTO},
        {LEAF_HOLE_ONLY, -EPROTO},
    };
    struct vl_reply r;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        set_mode(cases[i].mode);
        assert_int_equal(do_rchecksum(e, 0, 4 * 65536, 65536, &r),
                         cases[i].status);
        assert_int_equal(r.n_sums, 0);
        assert_null(r.sums);
        vl_reply_clear(&r);
    }
    set_mode(LEAF_RIGHT);
    assert_int_equal(do_rchecksum(e, 0, 4 * 65536, 65536, &r), 0);
    assert_int_equal(r.n_sums, 4);
    vl_reply_clear(&r);
}

/* A peer that skips the client's checks: bad bounds are refused by the
 * server with -EINVAL whatever the fd, and never reach the leaf; a good
 * call with an fd the connection never opened is -EBADF. */
static void
test_server_refuses(void **state)
{
    struct env *e = *state;
    static const mrt_rchecksum_args calls[] = {
        {.fd = 0, .offset = 0, .len = 65536, .block_size = 3000},
        {.fd = 0, .offset = 0, .len = 0, .block_size = 4096},
        {.fd = 0, .offset = 0, .len = 8 << 20, .block_size = 65536},
        {.fd = 0, .offset = 4096, .len = 65536, .block_size = 65536},
        {.fd = 0, .offset = 0, .len = 65536, .block_size = 4 << 20},
        {.fd = 77, .offset = 0, .len = 65536, .block_size = 65536},
    };
    const int n = (int)(sizeof(calls) / sizeof(calls[0]));
    static struct ph_raw raw;

    ph_raw_open(&raw, &e->ph, "rck-leaf", MRT_PROTO_VERSION);
    for (int i = 0; i < n; i++)
        ph_raw_call(&raw, VRPC_FOP_PROC(VL_FOP_RCHECKSUM),
                    (xdrproc_t)xdr_mrt_rchecksum_args, (void *)&calls[i],
                    i + 1);
    for (int i = 0; i < n - 1; i++)
        assert_int_equal(raw.status[i + 1], -EINVAL);
    assert_int_equal(raw.status[n], -EBADF);
    assert_int_equal(leaf_calls(), 0);
    ph_raw_close(&raw);
}

/* ---- end to end over storage/posix ---- */

static void
sha256(const void *data, size_t len, uint8_t out[VL_RCHECKSUM_DIGEST_LEN])
{
    unsigned int n = 0;

    assert_int_equal(EVP_Digest(data, len, out, &n, EVP_sha256(), NULL), 1);
}


/* 16 KiB of data, a hole to 64 KiB, a 100-byte tail: digests of the
 * bytes written, the hole's blocks HOLE | ZERO, the tail as long as it
 * is, nothing after. */
static void
test_posix_end_to_end(void **state)
{
    struct env *e = *state;
    static const uint8_t zero[VL_RCHECKSUM_DIGEST_LEN];
    uint8_t data[16384], tail[100], want[VL_RCHECKSUM_DIGEST_LEN];
    struct iovec iov;
    union vl_fop_args a;
    struct vl_reply r;

    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 17 + 5);
    memset(tail, 0xab, sizeof(tail));
    memset(&a, 0, sizeof(a));
    a.write.fd = e->fd;
    a.write.iov = &iov;
    a.write.n_iov = 1;
    iov = (struct iovec){.iov_base = data, .iov_len = sizeof(data)};
    assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_WRITE, &a, NULL, &r),
                     0);
    vl_reply_clear(&r);
    a.write.offset = 65536;
    iov = (struct iovec){.iov_base = tail, .iov_len = sizeof(tail)};
    assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_WRITE, &a, NULL, &r),
                     0);
    vl_reply_clear(&r);
    assert_int_equal(do_rchecksum(e, 0, 1 << 20, 8192, &r), 0);
    assert_int_equal(r.iatt.size, 65536 + 100);
    assert_int_equal(r.n_sums, 9);
    for (uint32_t i = 0; i < 2; i++) {
        sha256(data + i * 8192, 8192, want);
        assert_int_equal(r.sums[i].flags, 0);
        assert_int_equal(r.sums[i].len, 8192);
        assert_memory_equal(r.sums[i].digest, want, sizeof(want));
    }
    for (uint32_t i = 2; i < 8; i++) {
        assert_int_equal(r.sums[i].flags,
                         VL_RCHECKSUM_ZERO | VL_RCHECKSUM_HOLE);
        assert_int_equal(r.sums[i].len, 8192);
        assert_memory_equal(r.sums[i].digest, zero, sizeof(zero));
    }
    sha256(tail, sizeof(tail), want);
    assert_int_equal(r.sums[8].flags, 0);
    assert_int_equal(r.sums[8].len, 100);
    assert_memory_equal(r.sums[8].digest, want, sizeof(want));
    vl_reply_clear(&r);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, rck_setup,
                                        rck_teardown),
        cmocka_unit_test_setup_teardown(test_client_refuses, rck_setup,
                                        rck_teardown),
        cmocka_unit_test_setup_teardown(test_broken_answers, rck_setup,
                                        rck_teardown),
        cmocka_unit_test_setup_teardown(test_server_refuses, rck_setup,
                                        rck_teardown),
        cmocka_unit_test_setup_teardown(test_posix_end_to_end,
                                        rck_setup_posix, rck_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
