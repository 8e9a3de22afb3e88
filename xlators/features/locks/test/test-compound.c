/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-compound: features/locks's compound requests (locks-compound.c)
 * over the testlib mock with auto-answer off, so each test decides what
 * the xattrop below answers: a lock carrying a pre-op applies it only
 * once granted, answers a failed xattrop with the lock still held, and an
 * xattrop carrying an unlock releases the lock whatever the xattrop
 * answered.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "builtin.h"
#include "vl-test.h"
#include "vol/vol.h"

struct t_env {
    struct vl_test_graph *g; /* locks over the mock */
    vl_xlator_t *top;        /* locks */
    vl_xlator_t *mock;       /* the leaf, answered by the tests */
    vl_inode_t *file;        /* a regular file */
    vl_inode_t *dir;         /* a directory */
};

static const char t_volfile[] =
    "volume mock\n"
    "    type debug/mock\n"
    "end-volume\n"
    "volume locks\n"
    "    type features/locks\n"
    "    subvolumes mock\n"
    "end-volume\n";

static const char *const t_names[] = {"trusted.mortar.rep.dirty"};
static const uint8_t t_one[12] = {0, 0, 0, 1};
static const void *const t_values[] = {t_one};
static const uint32_t t_sizes[] = {12};
static const struct vl_xattrop_args t_xop = {
    .op = VL_XATTROP_ADD32, .n = 1, .names = t_names, .values = t_values,
    .sizes = t_sizes,
};


static int
t_setup(void **state)
{
    struct t_env *e = calloc(1, sizeof(*e));
    vl_err_t err = {{0}};
    vl_gfid_t gfid;

    assert_non_null(e);
    vl_global_init();
    vl_registry_add(&xl_features_locks);
    e->g = vl_test_graph_new(t_volfile, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->top = e->g->graph->top;
    e->mock = vl_test_graph_xl(e->g, "mock");
    vl_gfid_generate(&gfid);
    e->file = vl_inode_get(e->g->graph->itable, &gfid, S_IFREG);
    vl_gfid_generate(&gfid);
    e->dir = vl_inode_get(e->g->graph->itable, &gfid, S_IFDIR);
    assert_non_null(e->file);
    assert_non_null(e->dir);
    *state = e;
    return 0;
}


static int
t_teardown(void **state)
{
    struct t_env *e = *state;

    vl_inode_unref(e->file);
    vl_inode_unref(e->dir);
    vl_test_graph_free(e->g);
    free(e);
    return 0;
}


static vl_req_t *
t_req(struct t_env *e, vl_fop_t op, uint64_t client)
{
    vl_req_t *req = vl_req_new(e->top, op);

    assert_non_null(req);
    req->caller.client_id = client;
    req->caller.lk_owner = 0x77;
    return req;
}


/* A TRY inodelk (or entrylk of "f" when is_entry) of client, carrying
 * the pre-op when xop is not NULL. */
static void
t_lock(struct t_env *e, bool is_entry, uint64_t client,
       const struct vl_xattrop_args *xop, struct vl_test_result *res)
{
    vl_req_t *req = t_req(e, is_entry ? VL_FOP_ENTRYLK : VL_FOP_INODELK,
                          client);
    static struct vl_xattrop_args pre_op; /* borrowed until answered */

    if (xop != NULL) {
        pre_op = *xop;
        pre_op.loc.inode = is_entry ? e->dir : e->file;
        xop = &pre_op;
    }

    memset(res, 0, sizeof(*res));
    if (is_entry) {
        req->args.entrylk.domain = "rep";
        req->args.entrylk.loc.parent = e->dir;
        req->args.entrylk.loc.name = "f";
        req->args.entrylk.cmd = VL_LOCK_TRY;
        req->args.entrylk.type = F_WRLCK;
        req->args.entrylk.xop = xop;
    } else {
        req->args.inodelk.domain = "rep";
        req->args.inodelk.loc.inode = e->file;
        req->args.inodelk.cmd = VL_LOCK_TRY;
        req->args.inodelk.flock.type = F_WRLCK;
        req->args.inodelk.flock.whence = SEEK_SET;
        req->args.inodelk.xop = xop;
    }
    vl_test_wind(req, res);
}


/* Answers the xattrop waiting in the mock with status (values: the
 * added record when 0). */
static void
t_answer_xattrop(struct t_env *e, vl_inode_t *inode, int status)
{
    vl_req_t *x = vl_mock_pop(e->mock);

    assert_non_null(x);
    assert_int_equal(x->op, VL_FOP_XATTROP);
    assert_ptr_equal(x->args.xattrop.loc.inode, inode);
    assert_null(x->args.xattrop.unlock); /* never sent further down */
    assert_int_equal(x->args.xattrop.n, 1);
    if (status == 0) {
        x->reply.xattr = vl_malloc(NULL, 12, VL_MT_REPLY);
        assert_non_null(x->reply.xattr);
        memcpy(x->reply.xattr, t_one, 12);
        x->reply.xattr_len = 12;
    }
    vl_unwind(x, status);
}


static void
test_lock_xop_granted(void **state)
{
    struct t_env *e = *state;

    for (int is_entry = 0; is_entry < 2; is_entry++) {
        struct vl_test_result res, other;
        vl_inode_t *obj = is_entry ? e->dir : e->file;

        t_lock(e, is_entry, 1, &t_xop, &res);
        assert_false(res.is_done); /* waits for the xattrop below */
        assert_int_equal(vl_mock_pending(e->mock), 1);
        t_answer_xattrop(e, obj, 0);
        assert_int_equal(res.n_done, 1);
        assert_int_equal(res.status, 0);
        assert_true(res.reply.has_xop);
        assert_int_equal(res.reply.xop_status, 0);
        assert_int_equal(res.reply.xattr_len, 12);
        assert_memory_equal(res.reply.xattr, t_one, 12);
        /* The lock is held: another client's try is refused. */
        t_lock(e, is_entry, 2, NULL, &other);
        assert_int_equal(other.status, -EAGAIN);
        vl_test_result_clear(&other);
        vl_test_result_clear(&res);
    }
}


static void
test_lock_refused_applies_nothing(void **state)
{
    struct t_env *e = *state;

    for (int is_entry = 0; is_entry < 2; is_entry++) {
        struct vl_test_result res, held;

        t_lock(e, is_entry, 1, NULL, &held);
        assert_int_equal(held.status, 0);
        t_lock(e, is_entry, 2, &t_xop, &res);
        assert_int_equal(res.n_done, 1);
        assert_int_equal(res.status, -EAGAIN);
        assert_false(res.reply.has_xop);
        assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_XATTROP), 0);
        vl_test_result_clear(&res);
        vl_test_result_clear(&held);
    }
}


static void
test_lock_xop_fails_lock_held(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res, other;

    t_lock(e, false, 1, &t_xop, &res);
    t_answer_xattrop(e, e->file, -ENOSPC);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, 0); /* granted */
    assert_true(res.reply.has_xop);
    assert_int_equal(res.reply.xop_status, -ENOSPC);
    assert_null(res.reply.xattr);
    /* Still held: the caller must unlock it. */
    t_lock(e, false, 2, NULL, &other);
    assert_int_equal(other.status, -EAGAIN);
    vl_test_result_clear(&other);
    vl_test_result_clear(&res);
}


static void
test_unlock_cmd_with_xop_refused(void **state)
{
    struct t_env *e = *state;
    vl_req_t *req = t_req(e, VL_FOP_INODELK, 1);
    struct vl_test_result res = {0};

    req->args.inodelk.domain = "rep";
    req->args.inodelk.loc.inode = e->file;
    req->args.inodelk.cmd = VL_LOCK_UNLOCK;
    req->args.inodelk.xop = &t_xop;
    vl_test_wind(req, &res);
    assert_int_equal(res.status, -EINVAL);
    assert_int_equal(vl_mock_received(e->mock), 0);
    vl_test_result_clear(&res);
}


/* An xattrop carrying the unlock of client 1's lock. */
static void
t_postop(struct t_env *e, bool is_entry, struct vl_xattrop_unlock *ul,
         struct vl_test_result *res)
{
    vl_req_t *req = t_req(e, VL_FOP_XATTROP, 1);

    memset(ul, 0, sizeof(*ul));
    ul->is_entry = is_entry;
    ul->domain = "rep";
    if (is_entry) {
        ul->loc.parent = e->dir;
        ul->loc.name = "f";
        ul->type = F_WRLCK;
    } else {
        ul->loc.inode = e->file;
        ul->flock.whence = SEEK_SET;
    }
    req->args.xattrop = t_xop;
    req->args.xattrop.loc.inode = is_entry ? e->dir : e->file;
    req->args.xattrop.unlock = ul;
    memset(res, 0, sizeof(*res));
    vl_test_wind(req, res);
}


static void
test_postop_unlock_always(void **state)
{
    struct t_env *e = *state;

    /* Each kind of lock, with the xattrop succeeding then failing: the
     * lock goes either way. */
    for (int k = 0; k < 4; k++) {
        bool is_entry = k % 2 == 1;
        int xst = k < 2 ? 0 : -EIO;
        struct vl_test_result held, res, other;
        struct vl_xattrop_unlock ul;

        t_lock(e, is_entry, 1, NULL, &held);
        assert_int_equal(held.status, 0);
        t_postop(e, is_entry, &ul, &res);
        assert_false(res.is_done);
        t_answer_xattrop(e, is_entry ? e->dir : e->file, xst);
        assert_int_equal(res.n_done, 1);
        assert_int_equal(res.status, xst);
        assert_true(res.reply.has_unlock);
        assert_int_equal(res.reply.unlock_status, 0);
        if (xst == 0)
            assert_int_equal(res.reply.xattr_len, 12);
        /* Released: another client gets it at once. */
        t_lock(e, is_entry, 2, NULL, &other);
        assert_int_equal(other.status, 0);
        vl_test_result_clear(&other);
        /* client 2's lock: released by a plain unlock. */
        {
            vl_req_t *u = t_req(e, is_entry ? VL_FOP_ENTRYLK
                                            : VL_FOP_INODELK, 2);

            if (is_entry) {
                u->args.entrylk.domain = "rep";
                u->args.entrylk.loc.parent = e->dir;
                u->args.entrylk.loc.name = "f";
                u->args.entrylk.cmd = VL_LOCK_UNLOCK;
                u->args.entrylk.type = F_WRLCK;
            } else {
                u->args.inodelk.domain = "rep";
                u->args.inodelk.loc.inode = e->file;
                u->args.inodelk.cmd = VL_LOCK_UNLOCK;
                u->args.inodelk.flock.type = F_UNLCK;
            }
            vl_test_wind(u, &other);
            assert_int_equal(other.status, 0);
            vl_test_result_clear(&other);
        }
        vl_test_result_clear(&res);
        vl_test_result_clear(&held);
    }
}


static void
test_plain_xattrop_passes(void **state)
{
    struct t_env *e = *state;
    vl_req_t *req = t_req(e, VL_FOP_XATTROP, 1);
    struct vl_test_result res = {0};

    req->args.xattrop = t_xop;
    req->args.xattrop.loc.inode = e->file;
    vl_test_wind(req, &res);
    t_answer_xattrop(e, e->file, 0);
    assert_int_equal(res.status, 0);
    assert_false(res.reply.has_unlock);
    vl_test_result_clear(&res);
}


/* A waiting lock with a pre-op: applied only when granted. */
static void
test_wait_lock_xop_after_grant(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result held, res, un;
    struct vl_xattrop_args xop;
    vl_req_t *req;

    t_lock(e, false, 1, NULL, &held);
    req = t_req(e, VL_FOP_INODELK, 2);
    req->args.inodelk.domain = "rep";
    req->args.inodelk.loc.inode = e->file;
    req->args.inodelk.cmd = VL_LOCK_WAIT;
    req->args.inodelk.flock.type = F_WRLCK;
    xop = t_xop;
    xop.loc.inode = e->file;
    req->args.inodelk.xop = &xop;
    memset(&res, 0, sizeof(res));
    vl_test_wind(req, &res);
    assert_false(res.is_done);
    assert_int_equal(vl_mock_received(e->mock), 0);
    req = t_req(e, VL_FOP_INODELK, 1);
    req->args.inodelk.domain = "rep";
    req->args.inodelk.loc.inode = e->file;
    req->args.inodelk.cmd = VL_LOCK_UNLOCK;
    req->args.inodelk.flock.type = F_UNLCK;
    memset(&un, 0, sizeof(un));
    vl_test_wind(req, &un);
    assert_int_equal(un.status, 0);
    assert_false(res.is_done);
    t_answer_xattrop(e, e->file, 0);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, 0);
    assert_true(res.reply.has_xop);
    vl_test_result_clear(&un);
    vl_test_result_clear(&res);
    vl_test_result_clear(&held);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lock_xop_granted, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_lock_refused_applies_nothing,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_lock_xop_fails_lock_held,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_unlock_cmd_with_xop_refused,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_postop_unlock_always, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_plain_xattrop_passes, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_wait_lock_xop_after_grant,
                                        t_setup, t_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
