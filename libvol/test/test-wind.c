/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-wind: pass (empty slots), child requests, fan-out, ENOSYS in a
 * leaf, private areas, the exactly-once abort, vl_sync_call, and an
 * allocation-failure loop over a whole wind/unwind scenario. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "vl-test.h"

/* ---- test translators ---- */

struct fan_local {
    vl_fanout_t fan; /* children outstanding */
};


/* test/child: winds a child request and answers with its reply. */
static void
child_done(vl_req_t *c, void *cookie)
{
    vl_req_t *parent = cookie;

    vl_reply_move(parent, c);
    vl_unwind(parent, c->status);
}


static void
child_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    vl_req_t *c = vl_req_child(req, VL_FIRST_CHILD(xl));

    if (c == NULL) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_wind(c, child_done, req);
}


/* test/fan: sends the request to every child. */
static void
fan_done(vl_req_t *c, void *cookie)
{
    vl_req_t *parent = cookie;
    struct fan_local *l = VL_REQ_PRIV(parent, struct fan_local);

    if (c->status == 0 && c->reply.count != 0)
        parent->reply.count += c->reply.count; /* plain value, no move */
    if (vl_fanout_arrive(&l->fan, c->status))
        vl_unwind(parent, vl_fanout_status(&l->fan));
}


static void
fan_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    struct fan_local *l = VL_REQ_PRIV(req, struct fan_local);
    size_t n = xl->n_children;
    size_t i;

    vl_fanout_begin(&l->fan, (int)n);
    for (i = 0; i < n; i++) {
        vl_req_t *c = vl_req_child(req, xl->children[i]);

        if (c == NULL) {
            if (vl_fanout_arrive(&l->fan, -ENOMEM))
                vl_unwind(req, vl_fanout_status(&l->fan));
            continue;
        }
        vl_wind(c, fan_done, req);
    }
}


/* test/double: answers twice (a bug the core must catch). */
static void
double_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    vl_unwind(req, 0);
    vl_unwind(req, 0);
}


/* test/priv: checks its private area is zeroed, scribbles, passes. */
static void
priv_lookup(vl_xlator_t *xl, vl_req_t *req)
{
    unsigned char *p = req->priv;
    size_t i;

    for (i = 0; i < 32; i++)
        if (p[i] != 0) {
            vl_unwind(req, -EBADMSG);
            return;
        }
    memset(p, 0xa5, 32);
    vl_pass(req, VL_FIRST_CHILD(xl));
}


static const vl_xlator_class_t cls_pass = {
    .abi = VL_XLATOR_ABI, .type = "test/pass", .flags = VL_XL_ONE_CHILD,
};
static const vl_xlator_class_t cls_child = {
    .abi = VL_XLATOR_ABI, .type = "test/child", .flags = VL_XL_ONE_CHILD,
    .fops = {[VL_FOP_LOOKUP] = child_lookup},
};
static const vl_xlator_class_t cls_fan = {
    .abi = VL_XLATOR_ABI, .type = "test/fan", .flags = VL_XL_MANY_CHILDREN,
    .req_priv_size = sizeof(struct fan_local),
    .fops = {[VL_FOP_LOOKUP] = fan_lookup},
};
static const vl_xlator_class_t cls_double = {
    .abi = VL_XLATOR_ABI, .type = "test/double", .flags = VL_XL_LEAF,
    .fops = {[VL_FOP_LOOKUP] = double_lookup},
};
static const vl_xlator_class_t cls_leaf = {
    .abi = VL_XLATOR_ABI, .type = "test/leaf", .flags = VL_XL_LEAF,
};
static const vl_xlator_class_t cls_priv = {
    .abi = VL_XLATOR_ABI, .type = "test/priv", .flags = VL_XL_ONE_CHILD,
    .req_priv_size = 32,
    .fops = {[VL_FOP_LOOKUP] = priv_lookup},
};


static int
setup(void **state)
{
    vl_global_init();
    vl_log_set_level(VL_LOG_CRITICAL);
    assert_int_equal(vl_registry_add(&cls_pass), 0);
    assert_int_equal(vl_registry_add(&cls_child), 0);
    assert_int_equal(vl_registry_add(&cls_fan), 0);
    assert_int_equal(vl_registry_add(&cls_double), 0);
    assert_int_equal(vl_registry_add(&cls_leaf), 0);
    assert_int_equal(vl_registry_add(&cls_priv), 0);
    return 0;
}


static struct vl_test_graph *
graph_new(const char *text)
{
    vl_err_t err = {{0}};
    struct vl_test_graph *g = vl_test_graph_new(text, &err);

    if (g == NULL)
        fail_msg("graph: %s", err.msg);
    return g;
}


static void
test_pass_empty_slots(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\nend-volume\n"
        "volume p1\n type test/pass\n subvolumes m\nend-volume\n"
        "volume p2\n type test/pass\n subvolumes p1\nend-volume\n");
    vl_xlator_t *m = vl_test_graph_xl(g, "m");
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(g->graph->top, VL_FOP_STAT);
    vl_req_t *got;

    assert_non_null(req);
    vl_test_wind(req, &res);
    assert_false(res.is_done);
    assert_int_equal(vl_mock_pending(m), 1);
    assert_int_equal(vl_graph_pending(g->graph), 1);
    got = vl_mock_pop(m);
    /* Passed: the same request, now handled by m, wound from p1. */
    assert_ptr_equal(got, req);
    assert_ptr_equal(got->xl, m);
    assert_ptr_equal(got->wound_from, vl_test_graph_xl(g, "p1"));
    got->reply.iatt.size = 99;
    vl_unwind(got, 0);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.iatt.size, 99);
    assert_int_equal(vl_graph_pending(g->graph), 0);
    vl_test_result_clear(&res);
    vl_test_graph_free(g);
}


static void
test_leaf_enosys(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume l\n type test/leaf\nend-volume\n"
        "volume p\n type test/pass\n subvolumes l\nend-volume\n");
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(g->graph->top, VL_FOP_READ);

    vl_test_wind(req, &res);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, -ENOSYS);
    vl_test_graph_free(g);
}


static void
test_child_and_reply_move(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\nend-volume\n"
        "volume c\n type test/child\n subvolumes m\nend-volume\n");
    vl_xlator_t *m = vl_test_graph_xl(g, "m");
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(g->graph->top, VL_FOP_LOOKUP);
    vl_req_t *c;

    req->caller.uid = 1234;
    VL_ARGS(req, lookup)->loc.name = "file";
    vl_test_wind(req, &res);
    assert_int_equal(vl_graph_pending(g->graph), 2);
    c = vl_mock_pop(m);
    assert_ptr_not_equal(c, req);
    assert_ptr_equal(c->parent, req);
    assert_int_equal(c->caller.uid, 1234);
    assert_string_equal(VL_ARGS(c, lookup)->loc.name, "file");
    assert_ptr_equal(c->wound_from, vl_test_graph_xl(g, "c"));
    c->reply.link = vl_strdup(NULL, "target", VL_MT_REPLY);
    assert_int_equal(vl_dirent_list_add(&c->reply.entries, 1, 2, 4, "e",
                                        NULL), 0);
    vl_unwind(c, -ESTALE);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, -ESTALE);
    assert_string_equal(res.reply.link, "target");
    assert_int_equal(res.reply.entries.n, 1);
    assert_string_equal(res.reply.entries.ents[0].name, "e");
    assert_int_equal(vl_graph_pending(g->graph), 0);
    vl_test_result_clear(&res);
    vl_test_graph_free(g);
}


static void
test_fanout(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m1\n type debug/mock\nend-volume\n"
        "volume m2\n type debug/mock\nend-volume\n"
        "volume m3\n type debug/mock\nend-volume\n"
        "volume f\n type test/fan\n subvolumes m1 m2 m3\nend-volume\n");
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(g->graph->top, VL_FOP_LOOKUP);
    vl_req_t *r;

    vl_test_wind(req, &res);
    assert_int_equal(vl_graph_pending(g->graph), 4);
    r = vl_mock_pop(vl_test_graph_xl(g, "m2"));
    vl_unwind(r, -EIO);
    r = vl_mock_pop(vl_test_graph_xl(g, "m1"));
    r->reply.count = 5;
    vl_unwind(r, 0);
    assert_false(res.is_done);
    r = vl_mock_pop(vl_test_graph_xl(g, "m3"));
    vl_unwind(r, -ENOENT);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, -EIO); /* the first error */
    assert_int_equal(res.reply.count, 5);
    vl_test_result_clear(&res);
    vl_test_graph_free(g);
}


static void
test_private_area_zeroed_on_pass(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\nend-volume\n"
        "volume a\n type test/priv\n subvolumes m\nend-volume\n"
        "volume b\n type test/priv\n subvolumes a\nend-volume\n");
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(g->graph->top, VL_FOP_LOOKUP);

    assert_true(req->priv_size >= 32);
    vl_test_wind(req, &res);
    /* b scribbled, a still saw zeroes, so it reached the mock. */
    assert_int_equal(vl_mock_reply_all(vl_test_graph_xl(g, "m"), 0), 1);
    assert_int_equal(res.status, 0);
    vl_test_graph_free(g);
}


static void
test_double_unwind_aborts(void **state)
{
    int fds[2];
    pid_t pid;
    int status;
    char buf[2048];
    ssize_t n;
    size_t len = 0;

    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct vl_test_result res = {0};
        struct vl_test_graph *g;

        dup2(fds[1], 2);
        close(fds[0]);
        g = graph_new("volume d\n type test/double\nend-volume\n");
        vl_test_wind(vl_req_new(g->graph->top, VL_FOP_LOOKUP), &res);
        _exit(0); /* not reached */
    }
    close(fds[1]);
    while ((n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    if (strstr(buf, "answered twice") == NULL
        || strstr(buf, "first answered by d at") == NULL
        || strstr(buf, "again by d at") == NULL)
        fail_msg("unexpected message: %s", buf);
}


struct sync_arg {
    vl_xlator_t *to; /* where to wind */
    int status;      /* vl_sync_call's result */
    struct vl_reply reply; /* its reply */
};


static void *
sync_thread(void *p)
{
    struct sync_arg *a = p;
    union vl_fop_args args;
    struct vl_caller caller = {.uid = 7};

    memset(&args, 0, sizeof(args));
    args.readlink.size = 100;
    a->status = vl_sync_call(a->to, VL_FOP_READLINK, &args, &caller,
                             &a->reply);
    return NULL;
}


static void
test_sync_call(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\nend-volume\n");
    vl_xlator_t *m = vl_test_graph_xl(g, "m");
    struct sync_arg a = {.to = m};
    pthread_t t;
    vl_req_t *r;

    assert_int_equal(pthread_create(&t, NULL, sync_thread, &a), 0);
    while ((r = vl_mock_pop(m)) == NULL)
        usleep(1000);
    assert_int_equal(VL_ARGS(r, readlink)->size, 100);
    assert_int_equal(r->caller.uid, 7);
    r->reply.link = vl_strdup(NULL, "/x", VL_MT_REPLY);
    vl_unwind(r, 0);
    pthread_join(t, NULL);
    assert_int_equal(a.status, 0);
    assert_string_equal(a.reply.link, "/x");
    vl_reply_clear(&a.reply);
    vl_test_graph_free(g);
}


#define MT_THREADS 4
#define MT_REQS 2000

static atomic_int mt_done; /* answers seen by mt_done_cb */


static void
mt_done_cb(vl_req_t *req, void *cookie)
{
    if (req->status == -EROFS)
        atomic_fetch_add(&mt_done, 1);
}


static void *
mt_winder(void *arg)
{
    vl_xlator_t *top = arg;
    int i;

    for (i = 0; i < MT_REQS; i++) {
        vl_req_t *req = vl_req_new(top, VL_FOP_WRITE);

        if (req != NULL)
            vl_wind(req, mt_done_cb, NULL);
    }
    return NULL;
}


static void
test_threads_wind(void **state)
{
    struct vl_test_graph *g = graph_new(
        "volume m\n type debug/mock\n option auto-answer on\n"
        " option auto-status -30\nend-volume\n"
        "volume p\n type test/pass\n subvolumes m\nend-volume\n"
        "volume c\n type test/child\n subvolumes p\nend-volume\n");
    pthread_t t[MT_THREADS];
    int i;

    atomic_store(&mt_done, 0);
    /* WRITE has empty slots in c and p: both pass it to the mock. */
    for (i = 0; i < MT_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, mt_winder,
                                        g->graph->top), 0);
    for (i = 0; i < MT_THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&mt_done), MT_THREADS * MT_REQS);
    assert_int_equal(vl_mock_received(vl_test_graph_xl(g, "m")),
                     MT_THREADS * MT_REQS);
    assert_int_equal(vl_graph_pending(g->graph), 0);
    vl_test_graph_free(g);
}


/* One whole scenario; returns false if the graph could not be built. */
static bool
scenario(void)
{
    static const char text[] =
        "volume m1\n type debug/mock\nend-volume\n"
        "volume m2\n type debug/mock\n option auto-answer on\nend-volume\n"
        "volume c1\n type test/child\n subvolumes m1\nend-volume\n"
        "volume p2\n type test/pass\n subvolumes m2\nend-volume\n"
        "volume top\n type test/fan\n subvolumes c1 p2\nend-volume\n";
    vl_err_t err = {{0}};
    struct vl_test_graph *g = vl_test_graph_new(text, &err);
    struct vl_test_result res = {0};
    vl_req_t *req;
    vl_req_t *r;

    if (g == NULL) {
        if (strstr(err.msg, "out of memory") == NULL
            && strstr(err.msg, "Cannot allocate memory") == NULL)
            fail_msg("unexpected build error: %s", err.msg);
        return false;
    }
    req = vl_req_new(g->graph->top, VL_FOP_LOOKUP);
    if (req != NULL) {
        vl_test_wind(req, &res);
        while ((r = vl_mock_pop(vl_test_graph_xl(g, "m1"))) != NULL) {
            r->reply.xattr = vl_strdup(NULL, "v", VL_MT_REPLY);
            vl_unwind(r, 0);
        }
        assert_int_equal(res.n_done, 1);
        if (res.status != 0 && res.status != -ENOMEM)
            fail_msg("status %d", res.status);
        assert_int_equal(vl_graph_pending(g->graph), 0);
    }
    vl_test_result_clear(&res);
    vl_test_graph_free(g);
    return req != NULL;
}


static void
test_alloc_failure_loop(void **state)
{
    struct vl_mem_stat before;
    struct vl_mem_stat after;
    long n;
    bool is_ok = false;

    scenario(); /* warm up one-time allocations */
    for (n = 1; n < 100000 && !is_ok; n++) {
        vl_mem_stat_total(NULL, &before);
        vl_mem_fail_at(n);
        is_ok = scenario() && vl_mem_alloc_count() < n;
        vl_mem_fail_at(0);
        vl_mem_stat_total(NULL, &after);
        if (before.objects != after.objects || before.bytes != after.bytes)
            fail_msg("n=%ld: leaked %lld objects %lld bytes", n,
                     (long long)(after.objects - before.objects),
                     (long long)(after.bytes - before.bytes));
    }
    assert_true(is_ok);
    assert_true(n > 20); /* the scenario really allocates */
}


/* vl_req_entry_locs names the locs whose directories an entry fop
 * changes, and nothing for other fops. */
static void
test_entry_locs(void **state)
{
    const vl_fop_t ops[] = {VL_FOP_MKDIR,   VL_FOP_MKNOD,  VL_FOP_CREATE,
                            VL_FOP_SYMLINK, VL_FOP_LINK,   VL_FOP_UNLINK,
                            VL_FOP_RMDIR,   VL_FOP_RENAME, VL_FOP_LOOKUP,
                            VL_FOP_SETATTR};
    struct vl_test_graph *g;
    vl_err_t err;

    (void)state;
    g = vl_test_graph_new("volume m\n type debug/mock\nend-volume\n", &err);
    assert_non_null(g);
    for (size_t i = 0; i < VL_ARRAY_SIZE(ops); i++) {
        vl_req_t *req = vl_req_new(g->graph->top, ops[i]);
        const struct vl_loc *loc = (void *)1, *loc2 = (void *)1;
        bool is_entry = vl_req_entry_locs(req, &loc, &loc2);

        assert_int_equal(is_entry, i < 8);
        switch (ops[i]) {
        case VL_FOP_LINK:
            assert_ptr_equal(loc, &req->args.link.newloc);
            assert_null(loc2);
            break;
        case VL_FOP_RENAME:
            assert_ptr_equal(loc, &req->args.rename.oldloc);
            assert_ptr_equal(loc2, &req->args.rename.newloc);
            break;
        case VL_FOP_CREATE:
            assert_ptr_equal(loc, &req->args.create.loc);
            assert_null(loc2);
            break;
        case VL_FOP_LOOKUP:
        case VL_FOP_SETATTR:
            assert_null(loc);
            assert_null(loc2);
            break;
        default:
            assert_non_null(loc);
            assert_null(loc2);
            break;
        }
        vl_req_free_unwound(req);
    }
    vl_test_graph_free(g);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pass_empty_slots),
        cmocka_unit_test(test_leaf_enosys),
        cmocka_unit_test(test_child_and_reply_move),
        cmocka_unit_test(test_fanout),
        cmocka_unit_test(test_private_area_zeroed_on_pass),
        cmocka_unit_test(test_double_unwind_aborts),
        cmocka_unit_test(test_sync_call),
        cmocka_unit_test(test_threads_wind),
        cmocka_unit_test(test_alloc_failure_loop),
        cmocka_unit_test(test_entry_locs),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, setup, NULL);
}
