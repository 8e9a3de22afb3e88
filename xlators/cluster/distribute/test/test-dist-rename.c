/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-dist-rename: which children a rename through cluster/distribute
 * reaches, round by round (four debug/mock children, dist-rounds.h):
 *   on one brick with a known inode: one RENAME_NOREPLACE request;
 *   across bricks: the new name's link file, then the rename and the link
 *     file's xattr in parallel; EEXIST there goes the full path;
 *   a stale inode (the name renamed away, replaced by another file or by
 *     a directory) falls back to finding the name everywhere;
 *   no inode at all: found everywhere, then the short path;
 *   a layout that aged while the task ran is read again.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist-rounds.h"


static vl_gfid_t rd_dir_gfid;


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


/* A rename whose task outlives the parent's layout trust (a busy worker,
 * a slow brick): the layout is read again, not taken for none. */
static unsigned rd_layout_reads;

static int
rd_rename_aged(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    struct vl_lookup_args *a;

    if (r->op != VL_FOP_LOOKUP)
        return rd_rename_found(mock, r, ia);
    a = VL_ARGS(r, lookup);
    if (a->loc.name != NULL)
        return rd_rename_found(mock, r, ia);
    /* The parent (the root) read again, with its layout. */
    return rd_answer_dir_read(mock, r, ia, &rd_dir_gfid, &rd_layout_reads);
}


static void
test_rename_layout_aged_in_the_task(void **state)
{
    struct rd *t = *state;
    struct vl_test_result res = {0};
    struct dist_inode_ctx *ctx = dist_ictx(t->dht, t->root);
    struct rd_round rd;
    char on[32], nn[32];
    int rounds = 0;
    bool is_renamed = false;

    rd_name_on(t, 1, "o", on, sizeof(on));
    rd_name_on(t, 1, "n", nn, sizeof(nn));
    rd_old_name = on;
    rd_dir_gfid = t->root->gfid;
    rd_layout_reads = 0;
    vl_gfid_generate(&rd_file_gfid);
    rd_rename_start(t, NULL, on, nn, &res);
    /* The task's first round (finding the name) is in the mocks: the
     * layout the fop checked grows old meanwhile. */
    for (int i = 0; i < 5000 && rd_pending(t) < RD_N; i++)
        usleep(1000);
    assert_int_equal(rd_pending(t), RD_N);
    pthread_mutex_lock(&t->root->lock);
    ctx->layout_ms -= 10 * DIST_LAYOUT_TRUST_MS;
    pthread_mutex_unlock(&t->root->lock);
    while (rd_round(t, &res, rd_rename_aged, &rd)) {
        if ((rd.mask & (1ULL << 1)) && rd.op[1] == VL_FOP_RENAME)
            is_renamed = true;
        assert_true(++rounds < 20);
    }
    rd_wait_done(t, &res);
    /* Before: ENOTCONN, nothing renamed. */
    assert_int_equal(res.status, 0);
    assert_true(is_renamed);
    assert_int_equal(rd_layout_reads, 1);
    assert_int_equal(dist_priv(t->dht)->n_layout_rereads, 1);
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
        cmocka_unit_test_setup_teardown(
            test_rename_layout_aged_in_the_task, rd_setup, rd_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("dist-rename", tests, NULL, NULL);
}
