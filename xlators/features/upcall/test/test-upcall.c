/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of features/upcall: leases granted with mkdir, broken by
 * other clients' entry ops, dropped with their client, evicted at the
 * limit. A "catch" translator on top records the breaks sent up. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "builtin.h"
#include "vl-test.h"

#define T_MAX_BREAKS 64

static struct vl_upcall t_breaks[T_MAX_BREAKS];
static size_t t_n_breaks;


static int
t_catch_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    /* Cache invalidations are test-upcall-inval.c's. */
    if (ev == VL_EV_UPCALL
        && ((const struct vl_upcall *)data)->kind == VL_UPCALL_INVALIDATE)
        return 0;
    if (ev == VL_EV_UPCALL) {
        assert_true(t_n_breaks < T_MAX_BREAKS);
        t_breaks[t_n_breaks++] = *(const struct vl_upcall *)data;
        return 0;
    }
    return vl_notify_default(xl, ev, data);
}


static const vl_option_t t_catch_options[] = {VL_OPT_END};

static const vl_xlator_class_t t_catch_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/catch",
    .flags = VL_XL_ONE_CHILD,
    .options = t_catch_options,
    .doc = "Records the upcalls that reach it.",
    .notify = t_catch_notify,
};

struct t_env {
    struct vl_test_graph *g;
    vl_xlator_t *mock;
    vl_xlator_t *up;
    vl_inode_t *root;
    vl_inode_t *other;
};

static const char t_volfile[] =
    "volume mock\n"
    "    type debug/mock\n"
    "end-volume\n"
    "volume up\n"
    "    type features/upcall\n"
    "    option lease-limit 3\n"
    "    subvolumes mock\n"
    "end-volume\n"
    "volume top\n"
    "    type test/catch\n"
    "    subvolumes up\n"
    "end-volume\n";


static int
t_setup(void **state)
{
    struct t_env *e = calloc(1, sizeof(*e));
    vl_err_t err = {{0}};
    vl_gfid_t gfid;

    assert_non_null(e);
    vl_global_init();
    vl_registry_add(&xl_features_upcall);
    vl_registry_add(&t_catch_class);
    e->g = vl_test_graph_new(t_volfile, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->mock = vl_test_graph_xl(e->g, "mock");
    e->up = vl_test_graph_xl(e->g, "up");
    vl_gfid_generate(&gfid);
    e->root = vl_inode_get(e->g->graph->itable, &gfid, S_IFDIR);
    vl_gfid_generate(&gfid);
    e->other = vl_inode_get(e->g->graph->itable, &gfid, S_IFDIR);
    t_n_breaks = 0;
    *state = e;
    return 0;
}


static int
t_teardown(void **state)
{
    struct t_env *e = *state;

    vl_inode_unref(e->root);
    vl_inode_unref(e->other);
    vl_test_graph_free(e->g);
    free(e);
    return 0;
}


/* Sends fop op from client id through the graph; the mock answers it
 * with status. Returns the answer's is_leased. */
static bool
t_run(struct t_env *e, vl_req_t *req, uint64_t id, int status)
{
    struct vl_test_result res = {0};
    vl_req_t *r;
    bool leased;

    req->caller.client_id = id;
    vl_test_wind(req, &res);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    vl_unwind(r, status);
    assert_true(res.is_done);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, status);
    leased = res.reply.is_leased;
    vl_test_result_clear(&res);
    return leased;
}


static bool
t_mkdir(struct t_env *e, vl_inode_t *parent, const char *name,
        const vl_gfid_t *gfid, bool want, uint64_t id, int status)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_MKDIR);
    struct vl_mkdir_args *a = &req->args.mkdir;

    a->loc.parent = parent;
    a->loc.name = name;
    a->gfid = *gfid;
    a->mode = 0755;
    a->want_lease = want;
    return t_run(e, req, id, status);
}


static void
t_create(struct t_env *e, const vl_gfid_t *dir, const char *name,
         uint64_t id, int status)
{
    vl_inode_t *parent = vl_inode_get(e->g->graph->itable, dir, S_IFDIR);
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_CREATE);

    req->args.create.loc.parent = parent;
    req->args.create.loc.name = name;
    vl_gfid_generate(&req->args.create.gfid);
    assert_false(t_run(e, req, id, status));
    vl_inode_unref(parent);
}


static void
test_mkdir_grants_only_when_asked(void **state)
{
    struct t_env *e = *state;
    vl_gfid_t d1, d2;

    vl_gfid_generate(&d1);
    vl_gfid_generate(&d2);
    assert_true(t_mkdir(e, e->root, "d1", &d1, true, 1, 0));
    assert_false(t_mkdir(e, e->root, "d2", &d2, false, 1, 0));
    /* A failed mkdir leaves no lease behind. */
    vl_gfid_generate(&d2);
    assert_false(t_mkdir(e, e->root, "d3", &d2, true, 1, -EEXIST));
    t_create(e, &d2, "f", 2, 0);
    assert_int_equal(t_n_breaks, 0);
}


static void
test_other_client_breaks_lease(void **state)
{
    struct t_env *e = *state;
    vl_gfid_t d;

    vl_gfid_generate(&d);
    assert_true(t_mkdir(e, e->root, "d", &d, true, 1, 0));
    /* The holder's own creates break nothing. */
    t_create(e, &d, "mine", 1, 0);
    assert_int_equal(t_n_breaks, 0);
    /* A failed create changed nothing. */
    t_create(e, &d, "fails", 2, -ENOSPC);
    assert_int_equal(t_n_breaks, 0);
    t_create(e, &d, "theirs", 2, 0);
    assert_int_equal(t_n_breaks, 1);
    assert_true(vl_gfid_equal(&t_breaks[0].gfid, &d));
    assert_int_equal(t_breaks[0].client_id, 1);
    /* Broken once: the next change tells nobody. */
    t_create(e, &d, "again", 2, 0);
    assert_int_equal(t_n_breaks, 1);
}


/* Every entry op of another client in the leased directory breaks it. */
static void
test_each_entry_op_breaks(void **state)
{
    struct t_env *e = *state;
    const vl_fop_t ops[] = {VL_FOP_MKNOD,  VL_FOP_SYMLINK, VL_FOP_LINK,
                            VL_FOP_UNLINK, VL_FOP_RMDIR,   VL_FOP_RENAME,
                            VL_FOP_RENAME, VL_FOP_MKDIR};

    for (size_t i = 0; i < VL_ARRAY_SIZE(ops); i++) {
        vl_gfid_t d;
        vl_inode_t *dir;
        vl_req_t *req;
        union vl_fop_args *a;

        vl_gfid_generate(&d);
        assert_true(t_mkdir(e, e->root, "d", &d, true, 1, 0));
        dir = vl_inode_get(e->g->graph->itable, &d, S_IFDIR);
        req = vl_req_new(e->g->graph->top, ops[i]);
        a = &req->args;
        switch (ops[i]) {
        case VL_FOP_MKNOD:
            a->mknod.loc.parent = dir;
            a->mknod.loc.name = "n";
            break;
        case VL_FOP_SYMLINK:
            a->symlink.loc.parent = dir;
            a->symlink.loc.name = "s";
            a->symlink.target = "x";
            break;
        case VL_FOP_LINK:
            a->link.oldloc.inode = e->other;
            a->link.newloc.parent = dir;
            a->link.newloc.name = "l";
            break;
        case VL_FOP_UNLINK:
            a->unlink.loc.parent = dir;
            a->unlink.loc.name = "u";
            break;
        case VL_FOP_RMDIR:
            a->rmdir.loc.parent = dir;
            a->rmdir.loc.name = "r";
            break;
        case VL_FOP_RENAME:
            /* Once out of the directory, once into it. */
            a->rename.oldloc.parent = i == 5 ? dir : e->other;
            a->rename.oldloc.name = "a";
            a->rename.newloc.parent = i == 5 ? e->other : dir;
            a->rename.newloc.name = "b";
            break;
        default:
            a->mkdir.loc.parent = dir;
            a->mkdir.loc.name = "sub";
            vl_gfid_generate(&a->mkdir.gfid);
            break;
        }
        t_run(e, req, 7, 0);
        assert_int_equal(t_n_breaks, i + 1);
        assert_true(vl_gfid_equal(&t_breaks[i].gfid, &d));
        assert_int_equal(t_breaks[i].client_id, 1);
        vl_inode_unref(dir);
    }
}


static void
test_two_holders(void **state)
{
    struct t_env *e = *state;
    vl_gfid_t d;

    vl_gfid_generate(&d);
    /* Two clients made the same directory (distribute's heal can). */
    assert_true(t_mkdir(e, e->root, "d", &d, true, 1, 0));
    assert_true(t_mkdir(e, e->root, "d", &d, true, 2, 0));
    /* Client 1's create tells client 2 only... */
    t_create(e, &d, "f", 1, 0);
    assert_int_equal(t_n_breaks, 1);
    assert_int_equal(t_breaks[0].client_id, 2);
    /* ...and client 1 still holds its lease until a third one writes. */
    t_create(e, &d, "g", 3, 0);
    assert_int_equal(t_n_breaks, 2);
    assert_int_equal(t_breaks[1].client_id, 1);
}


/* A break during the mkdir itself (another client created in it between
 * the brick's mkdir and its answer) leaves no lease granted. */
static void
test_break_while_mkdir_in_flight(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_MKDIR);
    vl_req_t *r;
    vl_gfid_t d;

    vl_gfid_generate(&d);
    req->caller.client_id = 1;
    req->args.mkdir.loc.parent = e->root;
    req->args.mkdir.loc.name = "d";
    req->args.mkdir.gfid = d;
    req->args.mkdir.want_lease = true;
    vl_test_wind(req, &res);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    assert_true(r->args.mkdir.want_lease);
    t_create(e, &d, "f", 2, 0);
    assert_int_equal(t_n_breaks, 1);
    vl_unwind(r, 0);
    assert_true(res.is_done);
    assert_false(res.reply.is_leased);
    vl_test_result_clear(&res);
}


static void
test_disconnect_drops_leases(void **state)
{
    struct t_env *e = *state;
    uint64_t id = 1;
    vl_gfid_t d;

    vl_gfid_generate(&d);
    assert_true(t_mkdir(e, e->root, "d", &d, true, 1, 0));
    vl_notify(e->g->graph->top, VL_EV_CLIENT_DISCONNECT, &id);
    t_create(e, &d, "f", 2, 0);
    assert_int_equal(t_n_breaks, 0);
}


static void
test_limit_evicts_oldest(void **state)
{
    struct t_env *e = *state;
    vl_gfid_t d[4];

    for (int i = 0; i < 4; i++) {
        vl_gfid_generate(&d[i]);
        assert_true(t_mkdir(e, e->root, "d", &d[i], true, 1, 0));
    }
    /* lease-limit 3: the fourth grant broke the first. */
    assert_int_equal(t_n_breaks, 1);
    assert_true(vl_gfid_equal(&t_breaks[0].gfid, &d[0]));
    t_create(e, &d[0], "f", 2, 0);
    assert_int_equal(t_n_breaks, 1);
    t_create(e, &d[3], "f", 2, 0);
    assert_int_equal(t_n_breaks, 2);
}


/* Every request is answered once whichever allocation fails, and a lease
 * the mkdir's answer reports is one the brick keeps (the create breaks
 * it). */
static void
test_enomem_answers_once(void **state)
{
    struct t_env *e = *state;

    for (long n = 1; n < 200; n++) {
        struct vl_test_result res = {0}, res2 = {0};
        vl_req_t *mk = vl_req_new(e->g->graph->top, VL_FOP_MKDIR);
        vl_req_t *cr = vl_req_new(e->g->graph->top, VL_FOP_CREATE);
        vl_inode_t *dir;
        vl_gfid_t d;
        long used;

        vl_gfid_generate(&d);
        dir = vl_inode_get(e->g->graph->itable, &d, S_IFDIR);
        mk->caller.client_id = 1;
        mk->args.mkdir.loc.parent = e->root;
        mk->args.mkdir.loc.name = "d";
        mk->args.mkdir.gfid = d;
        mk->args.mkdir.want_lease = true;
        cr->caller.client_id = 2;
        cr->args.create.loc.parent = dir;
        cr->args.create.loc.name = "f";
        t_n_breaks = 0;
        vl_mem_fail_at(n);
        vl_test_wind(mk, &res);
        vl_mock_reply_all(e->mock, 0);
        vl_test_wind(cr, &res2);
        vl_mock_reply_all(e->mock, 0);
        used = vl_mem_alloc_count();
        vl_mem_fail_at(0);
        assert_int_equal(res.n_done, 1);
        assert_int_equal(res2.n_done, 1);
        if (res.status == 0 && res.reply.is_leased && res2.status == 0)
            assert_int_equal(t_n_breaks, 1);
        vl_test_result_clear(&res);
        vl_test_result_clear(&res2);
        vl_inode_unref(dir);
        if (used < n)
            return; /* this run never reached the failure: all covered */
    }
    fail_msg("allocation failure loop did not converge");
}


static void
test_class(void **state)
{
    vl_err_t err = {{0}};

    (void)state;
    if (vl_test_check_class(&xl_features_upcall, &err) != 0)
        fail_msg("%s", err.msg);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mkdir_grants_only_when_asked,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_other_client_breaks_lease,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_each_entry_op_breaks, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_two_holders, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_break_while_mkdir_in_flight,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_disconnect_drops_leases,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_limit_evicts_oldest, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_enomem_answers_once, t_setup,
                                        t_teardown),
        cmocka_unit_test(test_class),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
