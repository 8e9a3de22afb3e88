/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-dist-rounds: which children a namespace fop of distribute is
 * wound to, and in how many sequential rounds. Four debug/mock children
 * under distribute; the test answers each round itself (a round is the
 * set of requests waiting in the mocks before any is answered):
 *   unlink with a known inode: one round to the cached (+ hashed) brick;
 *     a stale inode (ENOENT there) falls back to the name everywhere;
 *   lookup of a directory: the hashed brick, then lookup and layout
 *     (by the GFID the hashed brick gave) on every brick in one round;
 *   readdir: one call fills the buffer from brick after brick, the
 *     last entry of a finished brick pointing at the next one's start;
 *   mkdir: the hashed brick alone, then the others, then the layout;
 *     EEXIST on the hashed brick touches no other brick;
 *   rename on one brick with a known inode: one RENAME_NOREPLACE request;
 *     across bricks: the new name's link file, then the rename and the
 *     link file's xattr in parallel; a stale inode falls back to finding
 *     the name everywhere.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../../builtin.h"
#include "dist.h"
#include "vl-test.h"

#define RD_N 4

struct rd {
    struct vl_test_graph *g;  /* four mocks under dht */
    vl_xlator_t *dht;         /* distribute */
    vl_xlator_t *m[RD_N];     /* subvolume i */
    vl_inode_t *root;         /* ref on the root inode */
};

/* One round: what each mock received (fop of its first request, count). */
struct rd_round {
    uint64_t mask;            /* mocks with a request waiting */
    vl_fop_t op[RD_N];        /* fop of the first request per mock */
    unsigned n[RD_N];         /* requests per mock */
};

/* How the test answers a request: status, and the iatt to reply. */
typedef int rd_answer_fn(int mock, vl_req_t *r, struct vl_iatt *ia);


static void
rd_fresh_layout(struct rd *t)
{
    struct dist_layout *l = vl_malloc(t->dht, sizeof(*l), DIST_MT_LAYOUT);

    assert_non_null(l);
    dist_layout_default(l, RD_N, 0, 1, DIST_FLAG_COMMITTED);
    dist_ictx_set_layout(t->dht, t->root, l);
}


static int
rd_setup(void **state)
{
    struct rd *t = calloc(1, sizeof(*t));
    char text[1024], name[8];
    vl_err_t err = {{0}};

    assert_non_null(t);
    vl_global_init();
    vl_log_set_level(VL_LOG_ERROR);
    vl_registry_add(&xl_cluster_distribute);
    snprintf(text, sizeof(text),
             "volume m0\n type debug/mock\nend-volume\n"
             "volume m1\n type debug/mock\nend-volume\n"
             "volume m2\n type debug/mock\nend-volume\n"
             "volume m3\n type debug/mock\nend-volume\n"
             "volume dht\n type cluster/distribute\n"
             " option min-free-disk 0%%\n subvolumes m0 m1 m2 m3\n"
             "end-volume\n");
    t->g = vl_test_graph_new(text, &err);
    if (t->g == NULL)
        fail_msg("graph: %s", err.msg);
    t->dht = vl_test_graph_xl(t->g, "dht");
    for (int i = 0; i < RD_N; i++) {
        snprintf(name, sizeof(name), "m%d", i);
        t->m[i] = vl_test_graph_xl(t->g, name);
    }
    t->root = vl_inode_table_root(t->g->graph->itable);
    rd_fresh_layout(t);
    *state = t;
    return 0;
}


static int
rd_teardown(void **state)
{
    struct rd *t = *state;

    vl_inode_unref(t->root);
    vl_test_graph_free(t->g);
    free(t);
    return 0;
}


/* A name in the root that hashes to subvolume want. */
static void
rd_name_on(struct rd *t, int want, const char *prefix, char *buf,
           size_t len)
{
    struct dist_layout l;

    (void)t;
    dist_layout_default(&l, RD_N, 0, 1, DIST_FLAG_COMMITTED);
    for (int k = 0; k < 100000; k++) {
        snprintf(buf, len, "%s%d", prefix, k);
        if (dist_layout_search(&l, buf) == want)
            return;
    }
    fail_msg("no name for %d", want);
}


static size_t
rd_pending(struct rd *t)
{
    size_t n = 0;

    for (int i = 0; i < RD_N; i++)
        n += vl_mock_pending(t->m[i]);
    return n;
}


/* Waits for the next round (or the end of the request), notes what is
 * waiting and answers it with fn. false when res finished first. */
static bool
rd_round(struct rd *t, struct vl_test_result *res, rd_answer_fn *fn,
         struct rd_round *out)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < 5000 && rd_pending(t) == 0 && !res->is_done; i++)
        usleep(1000);
    if (rd_pending(t) == 0) {
        assert_true(res->is_done);
        return false;
    }
    /* The rest of the round is wound by the same thread in a loop. */
    usleep(50000);
    for (int i = 0; i < RD_N; i++) {
        vl_req_t *r = vl_mock_peek(t->m[i]);

        if (r == NULL)
            continue;
        out->mask |= 1ULL << i;
        out->op[i] = r->op;
        out->n[i] = (unsigned)vl_mock_pending(t->m[i]);
    }
    /* Only what was there: answers may wind the next round at once. */
    for (int i = 0; i < RD_N; i++) {
        for (unsigned k = 0; k < out->n[i]; k++) {
            vl_req_t *r = vl_mock_pop(t->m[i]);
            struct vl_iatt ia;
            int st;

            memset(&ia, 0, sizeof(ia));
            st = fn(i, r, &ia);
            r->reply.iatt = ia;
            vl_unwind(r, st);
        }
    }
    return true;
}


static void
rd_wait_done(struct rd *t, struct vl_test_result *res)
{
    for (int i = 0; i < 5000 && !res->is_done; i++)
        usleep(1000);
    assert_true(res->is_done);
    assert_int_equal(res->n_done, 1);
    assert_int_equal(rd_pending(t), 0);
}


/* ---- unlink ---- */

static int
rd_ok(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)mock;
    (void)r;
    (void)ia;
    return 0;
}


static vl_inode_t *
rd_file(struct rd *t, int cached, int hashed)
{
    vl_gfid_t g;
    vl_inode_t *inode;

    vl_gfid_generate(&g);
    inode = vl_inode_get(t->g->graph->itable, &g, S_IFREG);
    assert_non_null(inode);
    dist_ictx_set_file(t->dht, inode, cached, hashed, cached != hashed);
    return inode;
}


static void
rd_unlink_start(struct rd *t, vl_inode_t *inode, const char *name,
                struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_UNLINK);

    assert_non_null(req);
    VL_ARGS(req, unlink)->loc.parent = t->root;
    VL_ARGS(req, unlink)->loc.name = name;
    VL_ARGS(req, unlink)->loc.inode = inode;
    vl_test_wind(req, res);
}


static void
test_unlink_known_inode_one_brick(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *inode;

    rd_name_on(t, 2, "u", name, sizeof(name));
    inode = rd_file(t, 2, 2);
    rd_unlink_start(t, inode, name, &res);
    assert_true(rd_round(t, &res, rd_ok, &rd));
    assert_int_equal(rd.mask, 1ULL << 2);
    assert_int_equal(rd.op[2], VL_FOP_UNLINK);
    assert_int_equal(rd.n[2], 1);
    assert_false(rd_round(t, &res, rd_ok, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


static void
test_unlink_known_inode_with_linkfile(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *inode;

    rd_name_on(t, 1, "u", name, sizeof(name));
    inode = rd_file(t, 3, 1);
    rd_unlink_start(t, inode, name, &res);
    assert_true(rd_round(t, &res, rd_ok, &rd));
    assert_int_equal(rd.mask, (1ULL << 1) | (1ULL << 3));
    assert_false(rd_round(t, &res, rd_ok, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


/* The name was renamed/replaced by another client: the file it names
 * now lives on subvolume 0, not where the kernel's inode said. */
static int
rd_stale_unlink(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)r;
    (void)ia;
    return mock == 0 ? 0 : -ENOENT;
}


static int
rd_gone(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)mock;
    (void)r;
    (void)ia;
    return -ENOENT;
}


static void
test_unlink_stale_inode_falls_back(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *inode;

    rd_name_on(t, 2, "u", name, sizeof(name));
    inode = rd_file(t, 2, 2);
    rd_unlink_start(t, inode, name, &res);
    assert_true(rd_round(t, &res, rd_stale_unlink, &rd));
    assert_int_equal(rd.mask, 1ULL << 2);
    /* Second round: the name everywhere. */
    assert_true(rd_round(t, &res, rd_stale_unlink, &rd));
    assert_int_equal(rd.mask, 0xf);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(rd.op[i], VL_FOP_UNLINK);
    assert_false(rd_round(t, &res, rd_stale_unlink, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);

    /* Gone everywhere: ENOENT after the fallback round. */
    rd_unlink_start(t, inode, name, &res);
    assert_true(rd_round(t, &res, rd_gone, &rd));
    assert_true(rd_round(t, &res, rd_gone, &rd));
    assert_int_equal(rd.mask, 0xf);
    assert_false(rd_round(t, &res, rd_gone, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, -ENOENT);
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


/* ---- mkdir ---- */

static vl_gfid_t rd_dir_gfid;


static int
rd_mkdir_ok(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)mock;
    if (r->op == VL_FOP_MKDIR) {
        ia->gfid = rd_dir_gfid;
        ia->mode = S_IFDIR | 0755;
        ia->nlink = 2;
    }
    return 0;
}


static void
rd_mkdir_start(struct rd *t, const char *name, vl_inode_t **fresh,
               struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_MKDIR);

    assert_non_null(req);
    *fresh = vl_inode_new(t->g->graph->itable);
    vl_gfid_generate(&rd_dir_gfid);
    VL_ARGS(req, mkdir)->loc.parent = t->root;
    VL_ARGS(req, mkdir)->loc.name = name;
    VL_ARGS(req, mkdir)->loc.inode = *fresh;
    VL_ARGS(req, mkdir)->mode = 0755;
    VL_ARGS(req, mkdir)->gfid = rd_dir_gfid;
    vl_test_wind(req, res);
}


static void
test_mkdir_hashed_first(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *fresh;

    rd_name_on(t, 1, "d", name, sizeof(name));
    rd_mkdir_start(t, name, &fresh, &res);
    /* Round 1: the hashed brick alone. */
    assert_true(rd_round(t, &res, rd_mkdir_ok, &rd));
    assert_int_equal(rd.mask, 1ULL << 1);
    assert_int_equal(rd.op[1], VL_FOP_MKDIR);
    /* Round 2: every other brick in parallel. */
    assert_true(rd_round(t, &res, rd_mkdir_ok, &rd));
    assert_int_equal(rd.mask, 0xdULL);
    for (int i = 0; i < RD_N; i++)
        if (i != 1)
            assert_int_equal(rd.op[i], VL_FOP_MKDIR);
    /* Round 3: the layout on all four. */
    assert_true(rd_round(t, &res, rd_mkdir_ok, &rd));
    assert_int_equal(rd.mask, 0xfULL);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(rd.op[i], VL_FOP_SETXATTR);
    assert_false(rd_round(t, &res, rd_mkdir_ok, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_true(S_ISDIR(res.reply.iatt.mode));
    vl_test_result_clear(&res);
    vl_inode_unref(fresh);
}


static int
rd_mkdir_lost(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)mock;
    (void)r;
    (void)ia;
    return -EEXIST;
}


static void
test_mkdir_exists_on_hashed_touches_nothing_else(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32];
    vl_inode_t *fresh;

    rd_name_on(t, 3, "d", name, sizeof(name));
    rd_mkdir_start(t, name, &fresh, &res);
    assert_true(rd_round(t, &res, rd_mkdir_lost, &rd));
    assert_int_equal(rd.mask, 1ULL << 3);
    assert_false(rd_round(t, &res, rd_mkdir_lost, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, -EEXIST);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(vl_mock_received(t->m[i]), i == 3 ? 1 : 0);
    vl_test_result_clear(&res);
    vl_inode_unref(fresh);
}


/* ---- lookup of a directory ---- */

static vl_xlator_t *rd_dht;


static int
rd_dir_answer(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    if (r->op == VL_FOP_LOOKUP) {
        ia->gfid = rd_dir_gfid;
        ia->mode = S_IFDIR | 0755;
        ia->nlink = 2;
        return 0;
    }
    if (r->op == VL_FOP_GETXATTR) {
        struct dist_layout l;
        unsigned char *v = vl_malloc(rd_dht, DIST_LAYOUT_SIZE, 0);

        assert_non_null(v);
        assert_true(vl_gfid_equal(&r->args.getxattr.loc.inode->gfid,
                                  &rd_dir_gfid));
        dist_layout_default(&l, RD_N, 0, 1, DIST_FLAG_COMMITTED);
        dist_layout_encode(&l.r[mock], v);
        r->reply.xattr = (char *)v;
        r->reply.count = DIST_LAYOUT_SIZE;
        return 0;
    }
    return -ENOTSUP;
}


static void
test_dir_lookup_layout_in_lookup_round(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char name[32], text[512];
    vl_inode_t *fresh = vl_inode_new(t->g->graph->itable);
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_LOOKUP);

    rd_dht = t->dht;
    vl_gfid_generate(&rd_dir_gfid);
    rd_name_on(t, 1, "x", name, sizeof(name));
    VL_ARGS(req, lookup)->loc.parent = t->root;
    VL_ARGS(req, lookup)->loc.name = name;
    VL_ARGS(req, lookup)->loc.inode = fresh;
    vl_test_wind(req, &res);
    /* Round 1: the hashed brick says "directory". */
    assert_true(rd_round(t, &res, rd_dir_answer, &rd));
    assert_int_equal(rd.mask, 1ULL << 1);
    /* Round 2: lookup and layout on every brick at once. */
    assert_true(rd_round(t, &res, rd_dir_answer, &rd));
    assert_int_equal(rd.mask, 0xf);
    for (int i = 0; i < RD_N; i++)
        assert_int_equal(rd.n[i], 2);
    assert_false(rd_round(t, &res, rd_dir_answer, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_true(vl_gfid_equal(&res.reply.iatt.gfid, &rd_dir_gfid));
    vl_test_result_clear(&res);

    /* The layout read that way is the one stored (no repair was sent). */
    {
        vl_inode_t *dir = vl_inode_find(t->g->graph->itable, &rd_dir_gfid);
        struct dist_inode_ctx *ctx;

        if (dir == NULL) /* the test does not link: the fresh one holds it */
            dir = vl_inode_ref(fresh);
        ctx = dist_ictx(t->dht, dir);
        assert_non_null(ctx->layout);
        snprintf(text, sizeof(text), "%u", ctx->layout->r[3].stop);
        assert_string_equal(text, "4294967295");
        assert_true(dist_layout_is_committed(ctx->layout));
        vl_inode_unref(dir);
    }
    vl_inode_unref(fresh);
}


/* ---- readdir ---- */

/* Each brick holds two files (the first also . and ..), all in one
 * batch, with the end seen (eof). */
static int
rd_readdir_answer(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    struct vl_dirent_list *l = &r->reply.entries;
    struct vl_iatt fa;
    char name[16];
    int64_t off = 1;

    (void)ia;
    if (r->op != VL_FOP_READDIR)
        return 0;
    memset(&fa, 0, sizeof(fa));
    if (mock == 0) {
        fa.mode = S_IFDIR | 0755;
        vl_gfid_generate(&fa.gfid);
        assert_int_equal(vl_dirent_list_add(l, 1, off++, DT_DIR, ".", &fa),
                         0);
        assert_int_equal(vl_dirent_list_add(l, 2, off++, DT_DIR, "..", &fa),
                         0);
    }
    for (int k = 0; k < 2; k++) {
        fa.mode = S_IFREG | 0644;
        vl_gfid_generate(&fa.gfid);
        snprintf(name, sizeof(name), "f%d-%d", mock, k);
        assert_int_equal(vl_dirent_list_add(l, 10 + (uint64_t)k, off++,
                                            DT_REG, name, &fa), 0);
    }
    l->eof = true;
    return 0;
}


static void
test_readdir_fills_from_every_brick(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    vl_fd_t *fd = vl_fd_new(t->root, O_RDONLY, 1);
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_OPENDIR);
    int rounds = 0;

    VL_ARGS(req, opendir)->loc.inode = t->root;
    VL_ARGS(req, opendir)->fd = fd;
    vl_test_wind(req, &res);
    assert_true(rd_round(t, &res, rd_readdir_answer, &rd));
    assert_int_equal(rd.mask, 0xf);
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);

    /* One readdir of 4 KiB: every brick once, in order, all entries. */
    req = vl_req_new(t->dht, VL_FOP_READDIR);
    VL_ARGS(req, readdir)->fd = fd;
    VL_ARGS(req, readdir)->size = 4096;
    VL_ARGS(req, readdir)->plus = true;
    vl_test_wind(req, &res);
    while (rd_round(t, &res, rd_readdir_answer, &rd)) {
        assert_int_equal(rd.mask, 1ULL << rounds);
        assert_int_equal(rd.n[rounds], 1);
        rounds++;
    }
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_int_equal(rounds, RD_N);
    assert_int_equal(res.reply.entries.n, 2 + 2 * RD_N);
    assert_true(res.reply.entries.eof);
    /* The last entry of brick 0 continues at the start of brick 1. */
    assert_string_equal(res.reply.entries.ents[3].name, "f0-1");
    assert_int_equal(res.reply.entries.ents[3].off,
                     (int64_t)(1ULL << DIST_COOKIE_SHIFT));
    vl_test_result_clear(&res);
    vl_fd_unref(fd);
}


/* ---- rename ---- */

static vl_gfid_t rd_file_gfid;
static const char *rd_old_name;


static int
rd_rename_ok(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)mock;
    if (r->op == VL_FOP_RENAME) {
        ia->gfid = rd_file_gfid;
        ia->mode = S_IFREG | 0644;
        ia->nlink = 1;
    }
    return 0;
}


static void
rd_rename_flags(struct rd *t, vl_inode_t *inode, const char *on,
                const char *nn, uint32_t flags, struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_RENAME);

    assert_non_null(req);
    VL_ARGS(req, rename)->oldloc.parent = t->root;
    VL_ARGS(req, rename)->oldloc.name = on;
    VL_ARGS(req, rename)->oldloc.inode = inode;
    VL_ARGS(req, rename)->newloc.parent = t->root;
    VL_ARGS(req, rename)->newloc.name = nn;
    VL_ARGS(req, rename)->flags = flags;
    vl_test_wind(req, res);
}


static void
rd_rename_start(struct rd *t, vl_inode_t *inode, const char *on,
                const char *nn, struct vl_test_result *res)
{
    rd_rename_flags(t, inode, on, nn, 0, res);
}


static void
test_rename_same_brick_one_request(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char on[32], nn[32];
    vl_inode_t *inode;
    vl_req_t *r;

    rd_name_on(t, 2, "o", on, sizeof(on));
    rd_name_on(t, 2, "n", nn, sizeof(nn));
    inode = rd_file(t, 2, 2);
    rd_file_gfid = inode->gfid;
    rd_rename_start(t, inode, on, nn, &res);
    for (int i = 0; i < 5000 && rd_pending(t) == 0; i++)
        usleep(1000);
    usleep(50000);
    assert_int_equal(rd_pending(t), 1);
    r = vl_mock_peek(t->m[2]);
    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_RENAME);
    /* Never over an existing target blindly (it may be a link file). */
    assert_true(VL_ARGS(r, rename)->flags & RENAME_NOREPLACE);
    assert_true(rd_round(t, &res, rd_rename_ok, &rd));
    assert_false(rd_round(t, &res, rd_rename_ok, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_true(vl_gfid_equal(&res.reply.iatt.gfid, &inode->gfid));
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


static void
test_rename_across_bricks_two_rounds(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char on[32], nn[32];
    vl_inode_t *inode;

    rd_name_on(t, 0, "o", on, sizeof(on));
    rd_name_on(t, 3, "n", nn, sizeof(nn));
    inode = rd_file(t, 0, 0);
    rd_file_gfid = inode->gfid;
    rd_rename_start(t, inode, on, nn, &res);
    /* Round 1: the new name's link file on its hashed brick. */
    assert_true(rd_round(t, &res, rd_rename_ok, &rd));
    assert_int_equal(rd.mask, 1ULL << 3);
    assert_int_equal(rd.op[3], VL_FOP_MKNOD);
    /* Round 2: the rename where the data is, the link file's xattr. */
    assert_true(rd_round(t, &res, rd_rename_ok, &rd));
    assert_int_equal(rd.mask, (1ULL << 0) | (1ULL << 3));
    assert_int_equal(rd.op[0], VL_FOP_RENAME);
    assert_int_equal(rd.op[3], VL_FOP_SETXATTR);
    assert_false(rd_round(t, &res, rd_rename_ok, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_true(vl_gfid_equal(&res.reply.iatt.gfid, &inode->gfid));
    assert_int_equal(dist_ictx_cached(t->dht, inode), 0);
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


/* The target exists on its hashed brick: EEXIST for the link file. */
static int
rd_target_exists(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)mock;
    if (r->op == VL_FOP_MKNOD)
        return -EEXIST;
    return rd_rename_ok(mock, r, ia);
}


static void
test_rename_across_bricks_noreplace_target(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char on[32], nn[32];
    vl_inode_t *inode;

    rd_name_on(t, 1, "o", on, sizeof(on));
    rd_name_on(t, 2, "n", nn, sizeof(nn));
    inode = rd_file(t, 1, 1);
    rd_file_gfid = inode->gfid;
    rd_rename_flags(t, inode, on, nn, RENAME_NOREPLACE, &res);
    assert_true(rd_round(t, &res, rd_target_exists, &rd));
    assert_int_equal(rd.mask, 1ULL << 2);
    assert_int_equal(rd.op[2], VL_FOP_MKNOD);
    /* EEXIST may also mean the GFID is there under another name: the
     * full path looks the target up; it exists: EEXIST, nothing moved. */
    while (rd_round(t, &res, rd_target_exists, &rd))
        for (int i = 0; i < RD_N; i++)
            if (rd.mask & (1ULL << i))
                assert_int_not_equal(rd.op[i], VL_FOP_RENAME);
    rd_wait_done(t, &res);
    assert_int_equal(res.status, -EEXIST);
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


/* The old name now holds another file whose data is on subvolume 0 (its
 * link file is on the hashed subvolume 2): the kernel's inode is stale. */
static vl_gfid_t rd_other_gfid;


static int
rd_rename_stale(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    if (r->op == VL_FOP_RENAME) {
        if (mock == 2 && strcmp(VL_ARGS(r, rename)->oldloc.name,
                                rd_old_name) == 0) {
            ia->gfid = rd_other_gfid;
            ia->mode = DIST_LINK_MODE; /* the link file moved */
            return 0;
        }
        ia->gfid = rd_other_gfid;
        ia->mode = S_IFREG | 0644;
        return 0;
    }
    if (r->op == VL_FOP_LOOKUP) {
        const char *name = VL_ARGS(r, lookup)->loc.name;

        if (name == NULL || strcmp(name, rd_old_name) != 0)
            return -ENOENT;
        if (mock == 0) {
            ia->gfid = rd_other_gfid;
            ia->mode = S_IFREG | 0644;
            return 0;
        }
        if (mock == 2) {
            ia->gfid = rd_other_gfid;
            ia->mode = DIST_LINK_MODE;
            return 0;
        }
        return -ENOENT;
    }
    if (r->op == VL_FOP_MKNOD) {
        ia->gfid = rd_other_gfid;
        ia->mode = DIST_LINK_MODE;
    }
    return 0;
}


static void
test_rename_stale_inode_finds_the_name(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char on[32], nn[32];
    vl_inode_t *inode;
    bool is_data_renamed = false;
    int rounds = 0;

    rd_name_on(t, 2, "o", on, sizeof(on));
    rd_name_on(t, 2, "n", nn, sizeof(nn));
    rd_old_name = on;
    inode = rd_file(t, 2, 2);
    vl_gfid_generate(&rd_other_gfid);
    rd_rename_start(t, inode, on, nn, &res);
    while (rd_round(t, &res, rd_rename_stale, &rd)) {
        if ((rd.mask & 1) && rd.op[0] == VL_FOP_RENAME)
            is_data_renamed = true;
        assert_true(++rounds < 20);
    }
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    /* The data of what the name holds now was renamed where it is. */
    assert_true(is_data_renamed);
    assert_true(vl_gfid_equal(&res.reply.iatt.gfid, &rd_other_gfid));
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


/* argv[1]: optional cmocka test filter (e.g. "test_mkdir*"). */
/* No inode from the caller: the file is found (on brick 1), then the
 * short path renames it there. */
static int
rd_rename_found(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    if (r->op == VL_FOP_LOOKUP) {
        if (mock != 1 || strcmp(VL_ARGS(r, lookup)->loc.name,
                                rd_old_name) != 0)
            return -ENOENT;
        ia->gfid = rd_file_gfid;
        ia->mode = S_IFREG | 0644;
        ia->nlink = 1;
        return 0;
    }
    return rd_rename_ok(mock, r, ia);
}


static void
test_rename_without_inode(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char on[32], nn[32];

    rd_name_on(t, 1, "o", on, sizeof(on));
    rd_name_on(t, 1, "n", nn, sizeof(nn));
    rd_old_name = on;
    vl_gfid_generate(&rd_file_gfid);
    rd_rename_start(t, NULL, on, nn, &res);
    assert_true(rd_round(t, &res, rd_rename_found, &rd));
    assert_int_equal(rd.mask, 0xf);
    assert_int_equal(rd.op[0], VL_FOP_LOOKUP);
    assert_true(rd_round(t, &res, rd_rename_found, &rd));
    assert_int_equal(rd.mask, 1ULL << 1);
    assert_int_equal(rd.op[1], VL_FOP_RENAME);
    assert_false(rd_round(t, &res, rd_rename_found, &rd));
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    assert_true(vl_gfid_equal(&res.reply.iatt.gfid, &rd_file_gfid));
    vl_test_result_clear(&res);
}


/* The old name is a directory now (replaced by another client). */
static int
rd_rename_dir_now(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)mock;
    if (r->op == VL_FOP_RENAME || r->op == VL_FOP_LOOKUP) {
        if (r->op == VL_FOP_LOOKUP
            && strcmp(VL_ARGS(r, lookup)->loc.name, rd_old_name) != 0)
            return -ENOENT;
        ia->gfid = rd_dir_gfid;
        ia->mode = S_IFDIR | 0755;
        ia->nlink = 2;
    }
    return 0;
}


static void
test_rename_stale_inode_now_a_directory(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct rd_round rd;
    char on[32], nn[32];
    vl_inode_t *inode;
    unsigned n_renames[RD_N] = {0};
    int rounds = 0;

    rd_name_on(t, 2, "o", on, sizeof(on));
    rd_name_on(t, 2, "n", nn, sizeof(nn));
    rd_old_name = on;
    vl_gfid_generate(&rd_dir_gfid);
    inode = rd_file(t, 2, 2);
    rd_rename_start(t, inode, on, nn, &res);
    while (rd_round(t, &res, rd_rename_dir_now, &rd)) {
        for (int i = 0; i < RD_N; i++)
            if ((rd.mask & (1ULL << i)) && rd.op[i] == VL_FOP_RENAME)
                n_renames[i]++;
        assert_true(++rounds < 20);
    }
    rd_wait_done(t, &res);
    assert_int_equal(res.status, 0);
    /* Brick 2: the short path's rename, its undo, the directory rename;
     * every other brick renamed the directory too. */
    assert_int_equal(n_renames[2], 3);
    for (int i = 0; i < RD_N; i++)
        if (i != 2)
            assert_int_equal(n_renames[i], 1);
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unlink_known_inode_one_brick,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(
            test_unlink_known_inode_with_linkfile, rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_unlink_stale_inode_falls_back,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_mkdir_hashed_first, rd_setup,
                                        rd_teardown),
        cmocka_unit_test_setup_teardown(
            test_mkdir_exists_on_hashed_touches_nothing_else, rd_setup,
            rd_teardown),
        cmocka_unit_test_setup_teardown(
            test_dir_lookup_layout_in_lookup_round, rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_readdir_fills_from_every_brick,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_rename_same_brick_one_request,
                                        rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(
            test_rename_across_bricks_two_rounds, rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(
            test_rename_across_bricks_noreplace_target, rd_setup,
            rd_teardown),
        cmocka_unit_test_setup_teardown(
            test_rename_stale_inode_finds_the_name, rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(
            test_rename_stale_inode_now_a_directory, rd_setup, rd_teardown),
        cmocka_unit_test_setup_teardown(test_rename_without_inode, rd_setup,
                                        rd_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("dist-rounds", tests, NULL, NULL);
}
