/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of features/upcall's cache invalidation (upcall-inval.c):
 * who is noted as a watcher by which answer, who is told of which change
 * and with what, expiry, the limit, disconnects, switching it off, and
 * every request answered once under allocation failures. A "catch"
 * translator on top records the invalidations sent up. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "builtin.h"
#include "vl-test.h"

#define T_MAX_INVALS 64

struct t_inval {
    struct vl_upcall up;
    char name[256]; /* up.name points here */
};

static struct t_inval t_invals[T_MAX_INVALS];
static size_t t_n_invals;

static int
t_catch_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    const struct vl_upcall *up = data;
    struct t_inval *t;

    if (ev != VL_EV_UPCALL)
        return vl_notify_default(xl, ev, data);
    if (up->kind != VL_UPCALL_INVALIDATE)
        return 0; /* lease breaks are test-upcall.c's */
    assert_true(t_n_invals < T_MAX_INVALS);
    t = &t_invals[t_n_invals++];
    t->up = *up;
    snprintf(t->name, sizeof(t->name), "%s", up->name ? up->name : "");
    t->up.name = t->name;
    return 0;
}

static const vl_option_t t_catch_options[] = {VL_OPT_END};

static const vl_xlator_class_t t_catch_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/catch",
    .flags = VL_XL_ONE_CHILD,
    .options = t_catch_options,
    .doc = "Records the invalidations that reach it.",
    .notify = t_catch_notify,
};

struct t_env {
    struct vl_test_graph *g;
    vl_xlator_t *mock;
    vl_inode_t *dir;  /* a directory */
    vl_inode_t *file; /* a regular file in it */
};

static const char t_volfile[] = "volume mock\n"
                                "    type debug/mock\n"
                                "end-volume\n"
                                "volume up\n"
                                "    type features/upcall\n"
                                "    option cache-invalidation-limit 4\n"
                                "    option cache-invalidation-timeout 1\n"
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
    vl_gfid_generate(&gfid);
    e->dir = vl_inode_get(e->g->graph->itable, &gfid, S_IFDIR);
    vl_gfid_generate(&gfid);
    e->file = vl_inode_get(e->g->graph->itable, &gfid, S_IFREG);
    t_n_invals = 0;
    *state = e;
    return 0;
}

static int
t_teardown(void **state)
{
    struct t_env *e = *state;

    vl_inode_unref(e->dir);
    vl_inode_unref(e->file);
    vl_test_graph_free(e->g);
    free(e);
    return 0;
}

/* Sends req from client id; the mock answers with status, its reply
 * carrying answer's attributes (NULL: none). */
static void
t_run(struct t_env *e, vl_req_t *req, uint64_t id, int status,
      const vl_inode_t *answer)
{
    struct vl_test_result res = {0};
    vl_req_t *r;

    req->caller.client_id = id;
    vl_test_wind(req, &res);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    if (answer != NULL) {
        r->reply.iatt.gfid = answer->gfid;
        r->reply.iatt.mode = answer->type | 0644;
    }
    vl_unwind(r, status);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, status);
    vl_test_result_clear(&res);
}

/* Client id looks up name in parent and finds in. */
static void
t_lookup(struct t_env *e, vl_inode_t *parent, const char *name, vl_inode_t *in,
         uint64_t id)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);

    req->args.lookup.loc.parent = parent;
    req->args.lookup.loc.name = name;
    t_run(e, req, id, 0, in);
}

static void
t_stat(struct t_env *e, vl_inode_t *in, uint64_t id)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_STAT);

    req->args.stat.loc.inode = in;
    t_run(e, req, id, 0, in);
}

static void
t_setattr(struct t_env *e, vl_inode_t *in, uint64_t id, int status)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_SETATTR);

    req->args.setattr.loc.inode = in;
    req->args.setattr.valid = VL_SET_MODE;
    t_run(e, req, id, status, in);
}

static void
test_lookup_then_setattr_tells_others(void **state)
{
    struct t_env *e = *state;

    t_lookup(e, e->dir, "f", e->file, 1);
    t_stat(e, e->file, 2);
    /* A failed change tells nobody. */
    t_setattr(e, e->file, 2, -EPERM);
    assert_int_equal(t_n_invals, 0);
    /* The changer is not told. */
    t_setattr(e, e->file, 1, 0);
    assert_int_equal(t_n_invals, 1);
    assert_int_equal(t_invals[0].up.client_id, 2);
    assert_true(vl_gfid_equal(&t_invals[0].up.gfid, &e->file->gfid));
    assert_int_equal(t_invals[0].up.flags, VL_INVAL_ATTR | VL_INVAL_DATA);
    /* Told watchers stay watchers until they expire; a changer becomes
     * one (it caches its answer). */
    t_setattr(e, e->file, 3, 0);
    assert_int_equal(t_n_invals, 3);
    assert_int_equal(t_invals[1].up.client_id + t_invals[2].up.client_id, 3);
    t_setattr(e, e->file, 1, 0);
    assert_int_equal(t_n_invals, 5);
}

/* A create in a watched directory tells its watchers the name; an unlink
 * of a watched file tells the file's and the directory's watchers once
 * each. */
static void
test_entry_ops_tell_name(void **state)
{
    struct t_env *e = *state;
    vl_req_t *req;

    t_stat(e, e->dir, 1);
    req = vl_req_new(e->g->graph->top, VL_FOP_CREATE);
    req->args.create.loc.parent = e->dir;
    req->args.create.loc.name = "new";
    vl_gfid_generate(&req->args.create.gfid);
    t_run(e, req, 2, 0, NULL);
    assert_int_equal(t_n_invals, 1);
    assert_int_equal(t_invals[0].up.client_id, 1);
    assert_int_equal(t_invals[0].up.flags, VL_INVAL_ATTR | VL_INVAL_ENTRY);
    assert_true(vl_gfid_equal(&t_invals[0].up.parent, &e->dir->gfid));
    assert_string_equal(t_invals[0].up.name, "new");

    t_lookup(e, e->dir, "f", e->file, 3); /* watches dir and file */
    t_n_invals = 0;
    req = vl_req_new(e->g->graph->top, VL_FOP_UNLINK);
    req->args.unlink.loc.parent = e->dir;
    req->args.unlink.loc.name = "f";
    req->args.unlink.loc.inode = e->file;
    t_run(e, req, 2, 0, NULL);
    assert_int_equal(t_n_invals, 2); /* clients 1 and 3, once each */
    for (size_t i = 0; i < 2; i++) {
        assert_true(vl_gfid_equal(&t_invals[i].up.gfid, &e->file->gfid));
        assert_string_equal(t_invals[i].up.name, "f");
    }
    assert_int_equal(t_invals[0].up.client_id + t_invals[1].up.client_id, 4);
}

/* A rename tells the old name's and the new name's watchers, each of
 * its own name. */
static void
test_rename_tells_both_names(void **state)
{
    struct t_env *e = *state;
    vl_inode_t *dir2;
    vl_req_t *req;
    vl_gfid_t g;

    vl_gfid_generate(&g);
    dir2 = vl_inode_get(e->g->graph->itable, &g, S_IFDIR);
    t_stat(e, e->dir, 1);
    t_stat(e, dir2, 2);
    req = vl_req_new(e->g->graph->top, VL_FOP_RENAME);
    req->args.rename.oldloc.parent = e->dir;
    req->args.rename.oldloc.name = "a";
    req->args.rename.oldloc.inode = e->file;
    req->args.rename.newloc.parent = dir2;
    req->args.rename.newloc.name = "b";
    t_run(e, req, 3, 0, NULL);
    assert_int_equal(t_n_invals, 2);
    assert_int_equal(t_invals[0].up.client_id, 1);
    assert_string_equal(t_invals[0].up.name, "a");
    assert_true(vl_gfid_equal(&t_invals[0].up.gfid, &e->file->gfid));
    assert_int_equal(t_invals[1].up.client_id, 2);
    assert_string_equal(t_invals[1].up.name, "b");
    assert_true(vl_gfid_equal(&t_invals[1].up.parent, &dir2->gfid));
    vl_inode_unref(dir2);
}

/* readdirplus hands out the entries' attributes: their watchers are
 * noted; a write through an fd tells attributes and data. */
static void
test_readdirplus_notes_entries(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    vl_fd_t *dfd = vl_fd_new(e->dir, 0, 1);
    vl_fd_t *ffd = vl_fd_new(e->file, 0, 1);
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_READDIR);
    struct vl_iatt ia = {.gfid = e->file->gfid, .mode = S_IFREG | 0644};
    char byte = 'x';
    struct iovec iov = {&byte, 1};
    vl_req_t *r;

    req->caller.client_id = 1;
    req->args.readdir.fd = dfd;
    req->args.readdir.plus = true;
    vl_test_wind(req, &res);
    r = vl_mock_pop(e->mock);
    assert_int_equal(
        vl_dirent_list_add(&r->reply.entries, 5, 1, DT_REG, "f", &ia), 0);
    vl_unwind(r, 0);
    vl_test_result_clear(&res);

    req = vl_req_new(e->g->graph->top, VL_FOP_WRITE);
    req->args.write.fd = ffd;
    req->args.write.iov = &iov;
    req->args.write.n_iov = 1;
    t_run(e, req, 2, 0, NULL);
    assert_int_equal(t_n_invals, 1);
    assert_int_equal(t_invals[0].up.client_id, 1);
    assert_int_equal(t_invals[0].up.flags, VL_INVAL_ATTR | VL_INVAL_DATA);
    vl_fd_unref(dfd);
    vl_fd_unref(ffd);
}

static void
test_disconnect_and_expiry(void **state)
{
    struct t_env *e = *state;
    uint64_t id = 1;

    t_stat(e, e->file, 1);
    vl_notify(e->g->graph->top, VL_EV_CLIENT_DISCONNECT, &id);
    t_setattr(e, e->file, 2, 0);
    assert_int_equal(t_n_invals, 0);
    /* cache-invalidation-timeout 1: two seconds later client 3 is still
     * told (the grace for replies in flight), six seconds later no longer
     * (it caches nothing that long). */
    t_stat(e, e->file, 3);
    sleep(2);
    t_setattr(e, e->file, 2, 0);
    assert_int_equal(t_n_invals, 1);
    assert_int_equal(t_invals[0].up.client_id, 3);
    sleep(4);
    t_setattr(e, e->file, 2, 0);
    assert_int_equal(t_n_invals, 1);
}

/* cache-invalidation-limit 4: noting a fifth GFID tells the watchers of
 * the least recently noted one at once, which then tells nobody more. */
static void
test_limit_evicts_oldest(void **state)
{
    struct t_env *e = *state;
    vl_inode_t *in[5];

    for (int i = 0; i < 5; i++) {
        vl_gfid_t g;

        vl_gfid_generate(&g);
        in[i] = vl_inode_get(e->g->graph->itable, &g, S_IFREG);
        t_stat(e, in[i], 1);
    }
    assert_int_equal(t_n_invals, 1);
    assert_true(vl_gfid_equal(&t_invals[0].up.gfid, &in[0]->gfid));
    /* in[0] has no watcher left; the changer noted on it evicts in[1]. */
    t_setattr(e, in[0], 2, 0);
    assert_int_equal(t_n_invals, 2);
    assert_true(vl_gfid_equal(&t_invals[1].up.gfid, &in[1]->gfid));
    assert_int_equal(t_invals[1].up.client_id, 1);
    t_setattr(e, in[4], 2, 0);
    assert_int_equal(t_n_invals, 3);
    assert_true(vl_gfid_equal(&t_invals[2].up.gfid, &in[4]->gfid));
    for (int i = 0; i < 5; i++)
        vl_inode_unref(in[i]);
}

/* Reconfigures the graph with the volfile's upcall options plus
 * `option cache-invalidation value`. */
static void
t_switch(struct t_env *e, const char *value)
{
    char text[sizeof(t_volfile) + 64];
    const char *at = strstr(t_volfile, "    subvolumes mock");
    vl_err_t err = {{0}};
    vl_volfile_t *vf;

    snprintf(text, sizeof(text), "%.*s    option cache-invalidation %s\n%s",
             (int)(at - t_volfile), t_volfile, value, at);
    vf = vl_volfile_parse(text, strlen(text), "test", &err);
    assert_non_null(vf);
    assert_int_equal(vl_graph_reconfigure(e->g->graph, vf, &err), 0);
    vl_volfile_free(vf);
}

static void
test_off_tells_nobody(void **state)
{
    struct t_env *e = *state;

    t_stat(e, e->file, 1);
    t_switch(e, "off");
    t_setattr(e, e->file, 2, 0);
    t_stat(e, e->file, 1);
    t_switch(e, "on");
    /* Switched back on, the watchers of before are forgotten. */
    t_setattr(e, e->file, 2, 0);
    assert_int_equal(t_n_invals, 0);
}

/* Every request is answered once whichever allocation fails. */
static void
test_enomem_answers_once(void **state)
{
    struct t_env *e = *state;

    for (long n = 1; n < 200; n++) {
        struct vl_test_result res = {0}, res2 = {0};
        vl_req_t *st = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);
        vl_req_t *sa = vl_req_new(e->g->graph->top, VL_FOP_SETATTR);
        vl_inode_t *in;
        vl_gfid_t g;
        long used;

        vl_gfid_generate(&g);
        in = vl_inode_get(e->g->graph->itable, &g, S_IFREG);
        st->caller.client_id = 1;
        st->args.lookup.loc.parent = e->dir;
        st->args.lookup.loc.name = "x";
        st->args.lookup.loc.inode = in;
        sa->caller.client_id = 2;
        sa->args.setattr.loc.inode = in;
        vl_mem_fail_at(n);
        vl_test_wind(st, &res);
        vl_mock_reply_all(e->mock, 0);
        vl_test_wind(sa, &res2);
        vl_mock_reply_all(e->mock, 0);
        used = vl_mem_alloc_count();
        vl_mem_fail_at(0);
        assert_int_equal(res.n_done, 1);
        assert_int_equal(res2.n_done, 1);
        vl_test_result_clear(&res);
        vl_test_result_clear(&res2);
        vl_inode_unref(in);
        if (used < n)
            return; /* this run never reached the failure: all covered */
    }
    fail_msg("allocation failure loop did not converge");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lookup_then_setattr_tells_others,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_entry_ops_tell_name, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_rename_tells_both_names, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_readdirplus_notes_entries, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_disconnect_and_expiry, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_limit_evicts_oldest, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_off_tells_nobody, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_enomem_answers_once, t_setup,
                                        t_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
