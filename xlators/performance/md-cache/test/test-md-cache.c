/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-md-cache: performance/md-cache between debug/mock (which holds
 * every request until the test answers it, so the test sees what reaches
 * the child) and test/above (which counts the upcalls passed on). Checks:
 * a stat answered once is answered here after; a named lookup's answer
 * serves stats; an upcall for the object, for an entry in its directory,
 * is_all and CHILD_DOWN drop it (and go on up); an invalidation while a
 * stat is in flight keeps its answer out; our own changes drop what they
 * touch; the absence of security.capability is cached and dropped;
 * timeouts (md-cache-timeout, 1 s without cache-invalidation); the dump;
 * the class; every request answered once under allocation failure.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "builtin.h"
#include "vl-test.h"

static int t_upcalls_seen; /* VL_EV_UPCALL that reached test/above */

static int
t_above_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    (void)xl;
    (void)data;
    if (ev == VL_EV_UPCALL)
        t_upcalls_seen++;
    return 0;
}

static const vl_option_t t_above_options[] = {VL_OPT_END};

static const vl_xlator_class_t t_above_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/above",
    .prefix = "above",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .options = t_above_options,
    .notify = t_above_notify,
};

struct t_env {
    struct vl_test_graph *g; /* above -> mdc -> mock */
    vl_xlator_t *mock;       /* borrowed from g */
    vl_xlator_t *mdc;        /* borrowed from g */
    vl_inode_t *dir;         /* owned ref; a linked directory */
    vl_inode_t *file;        /* owned ref; a linked file in it */
};

static struct t_env *
t_env_new(const char *opts)
{
    struct t_env *e = calloc(1, sizeof(*e));
    char text[1024];
    vl_err_t err;
    vl_gfid_t g;

    assert_non_null(e);
    vl_registry_add(&xl_performance_md_cache);
    vl_registry_add(&t_above_class);
    snprintf(text, sizeof(text),
             "volume m\n type debug/mock\nend-volume\n"
             "volume mdc\n type performance/md-cache\n%s"
             " subvolumes m\nend-volume\n"
             "volume top\n type test/above\n subvolumes mdc\nend-volume\n",
             opts);
    e->g = vl_test_graph_new(text, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->mock = vl_test_graph_xl(e->g, "m");
    e->mdc = vl_test_graph_xl(e->g, "mdc");
    vl_gfid_generate(&g);
    e->dir = vl_inode_get(e->g->graph->itable, &g, S_IFDIR);
    vl_gfid_generate(&g);
    e->file = vl_inode_get(e->g->graph->itable, &g, S_IFREG);
    t_upcalls_seen = 0;
    return e;
}

static int
t_setup(void **state)
{
    *state = t_env_new(" option md-cache-timeout 600\n");
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

/* Sends req; if it reaches the mock, answers it with status and the
 * attributes of `in` (size `size`). Returns whether it went down. */
static bool
t_run(struct t_env *e, vl_req_t *req, int status, vl_inode_t *in, uint64_t size,
      struct vl_iatt *out /* OUT, may be NULL */)
{
    struct vl_test_result res = {0};
    bool went_down = false;
    vl_req_t *r;

    vl_test_wind(req, &res);
    r = vl_mock_pop(e->mock);
    if (r != NULL) {
        went_down = true;
        if (in != NULL) {
            r->reply.iatt.gfid = in->gfid;
            r->reply.iatt.mode = in->type | 0644;
            r->reply.iatt.size = size;
        }
        vl_unwind(r, status);
    }
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, status);
    if (out != NULL)
        *out = res.reply.iatt;
    vl_test_result_clear(&res);
    return went_down;
}

/* A stat of in; whether it went down; the size answered in *size. */
static bool
t_stat(struct t_env *e, vl_inode_t *in, uint64_t size_below,
       uint64_t *size /* OUT, may be NULL */)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_STAT);
    struct vl_iatt ia;
    bool went_down;

    req->args.stat.loc.inode = in;
    went_down = t_run(e, req, 0, in, size_below, &ia);
    if (size != NULL)
        *size = ia.size;
    return went_down;
}

static void
t_upcall(struct t_env *e, const struct vl_upcall *up)
{
    assert_int_equal(vl_notify(e->mdc, VL_EV_UPCALL, (void *)up), 0);
}

static void
test_stat_kept(void **state)
{
    struct t_env *e = *state;
    vl_fd_t *fd = vl_fd_new(e->file, 0, 1);
    vl_req_t *req;
    uint64_t size;

    assert_true(t_stat(e, e->file, 10, &size));
    assert_false(t_stat(e, e->file, 20, &size));
    assert_int_equal(size, 10);
    /* fstat too. */
    req = vl_req_new(e->g->graph->top, VL_FOP_STAT);
    req->args.stat.fd = fd;
    assert_false(t_run(e, req, 0, NULL, 0, NULL));
    /* A failed stat keeps nothing. */
    for (int i = 0; i < 2; i++) {
        req = vl_req_new(e->g->graph->top, VL_FOP_STAT);
        req->args.stat.loc.inode = e->dir;
        assert_true(t_run(e, req, -EIO, e->dir, 0, NULL));
    }
    vl_fd_unref(fd);
}

/* A named lookup always goes down (the name may name something else
 * now); its answer serves the next stat. A lookup by GFID is answered. */
static void
test_lookup(void **state)
{
    struct t_env *e = *state;
    vl_req_t *req;

    for (int i = 0; i < 2; i++) {
        req = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);
        req->args.lookup.loc.parent = e->dir;
        req->args.lookup.loc.name = "f";
        req->args.lookup.loc.inode = e->file;
        assert_true(t_run(e, req, 0, e->file, 5, NULL));
    }
    assert_false(t_stat(e, e->file, 0, NULL));
    req = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);
    req->args.lookup.loc.inode = e->file;
    assert_false(t_run(e, req, 0, NULL, 0, NULL));
    /* With content wanted (quick-read) it goes down. */
    req = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);
    req->args.lookup.loc.inode = e->file;
    req->args.lookup.content_max = 4096;
    assert_true(t_run(e, req, 0, e->file, 5, NULL));
}

static void
test_upcalls_drop(void **state)
{
    struct t_env *e = *state;
    struct vl_upcall up = {.kind = VL_UPCALL_INVALIDATE,
                           .flags = VL_INVAL_ATTR};

    assert_true(t_stat(e, e->file, 1, NULL));
    assert_true(t_stat(e, e->dir, 1, NULL));
    up.gfid = e->file->gfid;
    t_upcall(e, &up);
    assert_int_equal(t_upcalls_seen, 1); /* passed on up (fuse) */
    assert_true(t_stat(e, e->file, 2, NULL));
    assert_false(t_stat(e, e->dir, 2, NULL));

    /* An entry change in dir drops dir. */
    up = (struct vl_upcall){.kind = VL_UPCALL_INVALIDATE,
                            .flags = VL_INVAL_ENTRY,
                            .parent = e->dir->gfid,
                            .name = "x"};
    t_upcall(e, &up);
    assert_true(t_stat(e, e->dir, 2, NULL));
    assert_false(t_stat(e, e->file, 2, NULL));

    /* A lease break is nl-cache's: nothing dropped. */
    up = (struct vl_upcall){.gfid = e->file->gfid};
    t_upcall(e, &up);
    assert_false(t_stat(e, e->file, 2, NULL));

    /* is_all and CHILD_DOWN drop everything. */
    up = (struct vl_upcall){.is_all = true};
    t_upcall(e, &up);
    assert_true(t_stat(e, e->file, 3, NULL));
    assert_true(t_stat(e, e->dir, 3, NULL));
    assert_int_equal(vl_notify(e->mdc, VL_EV_CHILD_DOWN, e->mock), 0);
    assert_true(t_stat(e, e->file, 3, NULL));
    assert_int_equal(t_upcalls_seen, 4);
}

/* The brick read the old attributes, then another client changed them
 * and the invalidation overtook the answer: the answer is not kept. */
static void
test_invalidation_overtakes_answer(void **state)
{
    struct t_env *e = *state;
    struct vl_upcall up = {.kind = VL_UPCALL_INVALIDATE,
                           .flags = VL_INVAL_ATTR,
                           .gfid = e->file->gfid};
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_STAT);
    vl_req_t *r;

    req->args.stat.loc.inode = e->file;
    vl_test_wind(req, &res);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    t_upcall(e, &up);
    r->reply.iatt.gfid = e->file->gfid;
    vl_unwind(r, 0);
    assert_int_equal(res.n_done, 1);
    vl_test_result_clear(&res);
    assert_true(t_stat(e, e->file, 1, NULL));

    /* Same with is_all. */
    req = vl_req_new(e->g->graph->top, VL_FOP_STAT);
    req->args.stat.loc.inode = e->dir;
    vl_test_wind(req, &res);
    r = vl_mock_pop(e->mock);
    up = (struct vl_upcall){.is_all = true};
    t_upcall(e, &up);
    r->reply.iatt.gfid = e->dir->gfid;
    vl_unwind(r, 0);
    vl_test_result_clear(&res);
    assert_true(t_stat(e, e->dir, 1, NULL));
}

/* Our own changes drop the object (write, setattr) and, for an entry op,
 * its directory; a stat answered during the change is not kept. */
static void
test_own_changes_drop(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0}, sres = {0};
    vl_fd_t *fd = vl_fd_new(e->file, 0, 1);
    char byte = 'x';
    struct iovec iov = {&byte, 1};
    vl_req_t *req, *w, *s;

    assert_true(t_stat(e, e->file, 1, NULL));
    req = vl_req_new(e->g->graph->top, VL_FOP_WRITE);
    req->args.write.fd = fd;
    req->args.write.iov = &iov;
    req->args.write.n_iov = 1;
    vl_test_wind(req, &res);
    w = vl_mock_pop(e->mock);
    assert_non_null(w);
    /* A stat while the write is in flight goes down; its answer (maybe
     * from before the write) is not kept. */
    req = vl_req_new(e->g->graph->top, VL_FOP_STAT);
    req->args.stat.loc.inode = e->file;
    vl_test_wind(req, &sres);
    s = vl_mock_pop(e->mock);
    assert_non_null(s);
    s->reply.iatt.gfid = e->file->gfid;
    vl_unwind(s, 0);
    vl_unwind(w, 0);
    assert_int_equal(res.n_done, 1);
    vl_test_result_clear(&res);
    vl_test_result_clear(&sres);
    assert_true(t_stat(e, e->file, 2, NULL));

    assert_true(t_stat(e, e->dir, 1, NULL));
    req = vl_req_new(e->g->graph->top, VL_FOP_UNLINK);
    req->args.unlink.loc.parent = e->dir;
    req->args.unlink.loc.name = "f";
    req->args.unlink.loc.inode = e->file;
    assert_true(t_run(e, req, 0, NULL, 0, NULL));
    assert_true(t_stat(e, e->dir, 1, NULL));
    assert_true(t_stat(e, e->file, 1, NULL));
    vl_fd_unref(fd);
}

static bool
t_getxattr(struct t_env *e, const char *name, int status)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_GETXATTR);

    req->args.getxattr.loc.inode = e->file;
    req->args.getxattr.name = name;
    return t_run(e, req, status, NULL, 0, NULL);
}

static void
test_absent_xattrs(void **state)
{
    struct t_env *e = *state;
    vl_req_t *req;

    assert_true(t_getxattr(e, "security.capability", -ENODATA));
    assert_false(t_getxattr(e, "security.capability", -ENODATA));
    assert_true(t_getxattr(e, "system.posix_acl_access", -ENODATA));
    assert_false(t_getxattr(e, "security.capability", -ENODATA));
    assert_false(t_getxattr(e, "system.posix_acl_access", -ENODATA));
    /* Other names always go down, absent or not. */
    assert_true(t_getxattr(e, "user.x", -ENODATA));
    assert_true(t_getxattr(e, "user.x", -ENODATA));
    /* A setxattr drops them. */
    req = vl_req_new(e->g->graph->top, VL_FOP_SETXATTR);
    req->args.setxattr.loc.inode = e->file;
    req->args.setxattr.name = "security.capability";
    assert_true(t_run(e, req, 0, NULL, 0, NULL));
    assert_true(t_getxattr(e, "security.capability", 0));
    assert_true(t_getxattr(e, "security.capability", 0));
}

static void
test_timeouts(void **state)
{
    struct t_env *e;
    char *dump = NULL;
    size_t len = 0;
    FILE *f;

    (void)state;
    /* 0: nothing kept. */
    e = t_env_new(" option md-cache-timeout 0\n");
    assert_true(t_stat(e, e->file, 1, NULL));
    assert_true(t_stat(e, e->file, 1, NULL));
    t_teardown((void **)&e);

    /* Without the bricks' invalidations: 1 s at most. */
    e = t_env_new(" option md-cache-timeout 600\n"
                  " option cache-invalidation off\n");
    f = open_memstream(&dump, &len);
    e->mdc->cls->dump(e->mdc, f);
    fclose(f);
    assert_non_null(strstr(dump, "timeout_ms=1000\n"));
    free(dump);
    assert_true(t_stat(e, e->file, 1, NULL));
    assert_false(t_stat(e, e->file, 1, NULL));
    usleep(1100 * 1000);
    assert_true(t_stat(e, e->file, 1, NULL));
    t_teardown((void **)&e);
}

/* Reconfigures mdc with opts (option lines). */
static void
t_reconfigure(struct t_env *e, const char *opts)
{
    char text[1024];
    vl_err_t err = {{0}};
    vl_volfile_t *vf;

    snprintf(text, sizeof(text),
             "volume m\n type debug/mock\nend-volume\n"
             "volume mdc\n type performance/md-cache\n%s"
             " subvolumes m\nend-volume\n"
             "volume top\n type test/above\n subvolumes mdc\nend-volume\n",
             opts);
    vf = vl_volfile_parse(text, strlen(text), "test", &err);
    assert_non_null(vf);
    assert_int_equal(vl_graph_reconfigure(e->g->graph, vf, &err), 0);
    vl_volfile_free(vf);
}


/* A live change drops what was kept; one that breaks the promise the
 * kernel's timeouts were given under (invalidation off, a shorter
 * timeout) tells the translators above that everything is stale. */
static void
test_reconfigure(void **state)
{
    struct t_env *e = *state;

    assert_true(t_stat(e, e->file, 1, NULL));
    assert_false(t_stat(e, e->file, 1, NULL));
    t_reconfigure(e, " option md-cache-timeout 600\n"
                     " option cache-invalidation on\n");
    assert_int_equal(t_upcalls_seen, 0); /* the same promise */
    assert_int_equal(vl_md_cache_inval_timeout_ms(e->mdc), 600000);
    t_reconfigure(e, " option md-cache-timeout 60\n");
    assert_int_equal(t_upcalls_seen, 1);
    assert_true(t_stat(e, e->file, 1, NULL)); /* dropped */
    assert_int_equal(vl_md_cache_inval_timeout_ms(e->mdc), 60000);
    t_reconfigure(e, " option md-cache-timeout 60\n"
                     " option cache-invalidation off\n");
    assert_int_equal(t_upcalls_seen, 2);
    assert_int_equal(vl_md_cache_inval_timeout_ms(e->mdc), -1);
}


static void
test_dump(void **state)
{
    struct t_env *e = *state;
    struct vl_upcall up = {.kind = VL_UPCALL_INVALIDATE,
                           .flags = VL_INVAL_ATTR,
                           .gfid = e->file->gfid};
    char *dump = NULL;
    size_t len = 0;
    FILE *f;

    assert_true(t_stat(e, e->file, 1, NULL));
    assert_false(t_stat(e, e->file, 1, NULL));
    t_upcall(e, &up);
    assert_true(t_getxattr(e, "security.capability", -ENODATA));
    assert_false(t_getxattr(e, "security.capability", -ENODATA));
    f = open_memstream(&dump, &len);
    e->mdc->cls->dump(e->mdc, f);
    fclose(f);
    assert_non_null(strstr(dump, "timeout_ms=600000\n"));
    assert_non_null(strstr(dump, "hits=1\n"));
    assert_non_null(strstr(dump, "misses=1\n"));
    assert_non_null(strstr(dump, "xattr_hits=1\n"));
    assert_non_null(strstr(dump, "xattr_misses=1\n"));
    assert_non_null(strstr(dump, "invalidations=1\n"));
    free(dump);
}

static void
test_enomem_answers_once(void **state)
{
    struct t_env *e = *state;

    for (long n = 1; n < 200; n++) {
        struct vl_test_result res = {0};
        vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_SETATTR);
        long used;

        req->args.setattr.loc.inode = e->file;
        vl_mem_fail_at(n);
        vl_test_wind(req, &res);
        vl_mock_reply_all(e->mock, 0);
        req = vl_req_new(e->g->graph->top, VL_FOP_STAT);
        if (req != NULL) {
            struct vl_test_result sres = {0};

            req->args.stat.loc.inode = e->file;
            vl_test_wind(req, &sres);
            vl_mock_reply_all(e->mock, 0);
            assert_int_equal(sres.n_done, 1);
            vl_test_result_clear(&sres);
        }
        used = vl_mem_alloc_count();
        vl_mem_fail_at(0);
        assert_int_equal(res.n_done, 1);
        vl_test_result_clear(&res);
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
    if (vl_test_check_class(&xl_performance_md_cache, &err) != 0)
        fail_msg("%s", err.msg);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stat_kept, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_lookup, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_upcalls_drop, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_invalidation_overtakes_answer,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_own_changes_drop, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_absent_xattrs, t_setup,
                                        t_teardown),
        cmocka_unit_test(test_timeouts),
        cmocka_unit_test_setup_teardown(test_reconfigure, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_dump, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_enomem_answers_once, t_setup,
                                        t_teardown),
        cmocka_unit_test(test_class),
    };

    vl_global_init();
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
