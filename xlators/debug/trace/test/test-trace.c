/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-trace: debug/trace over the testlib mock. The test answers each
 * request at the mock with a status and reply fields chosen per fop; every
 * fop of fops.def must pass through unchanged in both directions, traced
 * or not, and bad options must be refused.
 */
#include "config.h"

#include <dirent.h>
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

/* ---- environment ---- */

struct t_env {
    struct vl_test_graph *g; /* trace over the mock */
    vl_graph_t *graph;       /* g->graph */
    vl_xlator_t *mock;       /* the leaf; the test answers its requests */
    vl_inode_t *dir;         /* a directory */
    vl_inode_t *file;        /* a file in it */
    vl_fd_t *fd;             /* open on file */
};

struct t_res {
    int n_answers;         /* times done ran */
    int status;            /* its status */
    struct vl_reply reply; /* moved out of the answered request */
};


static struct vl_test_graph *
t_graph(const char *options, vl_err_t *err)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "volume mock\n"
             "    type debug/mock\n"
             "end-volume\n"
             "volume trace\n"
             "    type debug/trace\n"
             "%s"
             "    subvolumes mock\n"
             "end-volume\n",
             options);
    vl_global_init();
    vl_registry_add(&xl_debug_trace);
    return vl_test_graph_new(text, err);
}


static int
t_setup_opts(void **state, const char *options)
{
    struct t_env *e = calloc(1, sizeof(*e));
    vl_err_t err = {{0}};
    vl_gfid_t gfid;

    assert_non_null(e);
    e->g = t_graph(options, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    vl_log_set_level(VL_LOG_TRACE); /* make trace really format lines */
    e->graph = e->g->graph;
    e->mock = vl_test_graph_xl(e->g, "mock");
    assert_non_null(e->mock);
    vl_gfid_generate(&gfid);
    e->dir = vl_inode_get(e->graph->itable, &gfid, S_IFDIR);
    vl_gfid_generate(&gfid);
    e->file = vl_inode_get(e->graph->itable, &gfid, S_IFREG);
    assert_non_null(e->dir);
    assert_non_null(e->file);
    e->fd = vl_fd_new(e->file, O_RDWR, 1);
    assert_non_null(e->fd);
    *state = e;
    return 0;
}


static int
t_setup(void **state)
{
    return t_setup_opts(state, "    option log-level DEBUG\n");
}


static int
t_setup_only_lookup(void **state)
{
    return t_setup_opts(state, "    option fops lookup, write\n");
}


static int
t_teardown(void **state)
{
    struct t_env *e = *state;

    vl_fd_unref(e->fd);
    vl_inode_unref(e->file);
    vl_inode_unref(e->dir);
    vl_test_graph_free(e->g);
    vl_log_set_level(VL_LOG_INFO);
    free(e);
    return 0;
}


/* Answers a request that reached the mock with status and a reply whose
 * every field is set from the fop, so the test can recognise it above. */
static void
t_answer(vl_req_t *req, int status)
{
    struct vl_reply *r = &req->reply;

    r->iatt.size = 1000 + (uint64_t)req->op;
    r->iatt.mode = S_IFREG | 0640;
    r->count = req->op;
    r->offset = 3 * (off_t)req->op;
    r->flock.type = F_WRLCK;
    r->flock.start = req->op;
    r->statvfs.f_bavail = 77;
    r->link = vl_strdup(NULL, "link-target", VL_MT_REPLY);
    assert_non_null(r->link);
    assert_int_equal(
        vl_dirent_list_add(&r->entries, 5, 1, DT_REG, "entry", NULL), 0);
    vl_unwind(req, status);
}


static void
t_done(vl_req_t *req, void *cookie)
{
    struct t_res *r = cookie;

    r->n_answers++;
    r->status = req->status;
    /* Take the reply: the core frees the request after done returns. */
    r->reply = req->reply;
    memset(&req->reply, 0, sizeof(req->reply));
}


/* Arguments for op: zero, except for valid objects where a fop names
 * them, so trace has something to print and the mock something to see. */
static void
t_fill_args(struct t_env *e, vl_fop_t op, union vl_fop_args *a,
            struct iovec *iov)
{
    memset(a, 0, sizeof(*a));
    switch (op) {
    case VL_FOP_LOOKUP:
        a->lookup.loc.parent = e->dir;
        a->lookup.loc.name = "name";
        a->lookup.loc.inode = e->file;
        break;
    case VL_FOP_READ:
        a->read.fd = e->fd;
        a->read.offset = 4096;
        a->read.size = 512;
        break;
    case VL_FOP_WRITE:
        a->write.fd = e->fd;
        a->write.iov = iov;
        a->write.n_iov = 1;
        a->write.offset = 8192;
        break;
    case VL_FOP_RENAME:
        a->rename.oldloc.parent = e->dir;
        a->rename.oldloc.name = "a";
        a->rename.oldloc.inode = e->file;
        a->rename.newloc.parent = e->dir;
        a->rename.newloc.name = "b";
        break;
    case VL_FOP_LK:
        a->lk.fd = e->fd;
        a->lk.cmd = F_SETLK;
        a->lk.flock.type = F_WRLCK;
        a->lk.flock.len = 10;
        break;
    case VL_FOP_INODELK:
        a->inodelk.domain = "afr";
        a->inodelk.loc.inode = e->file;
        break;
    case VL_FOP_COPY_FILE_RANGE:
        a->copy_file_range.fd_in = e->fd;
        a->copy_file_range.fd_out = e->fd;
        a->copy_file_range.len = 100;
        break;
    case VL_FOP_XATTROP: {
        static const char *const names[] = {"trusted.mortar.rep.dirty"};
        static const char value[12] = {0, 0, 0, 1};
        static const void *const values[] = {value};
        static const uint32_t sizes[] = {sizeof(value)};

        a->xattrop.loc.inode = e->file;
        a->xattrop.op = VL_XATTROP_ADD32;
        a->xattrop.n = 1;
        a->xattrop.names = names;
        a->xattrop.values = values;
        a->xattrop.sizes = sizes;
        break;
    }
    case VL_FOP_RCHECKSUM:
        a->rchecksum.fd = e->fd;
        a->rchecksum.len = 8192;
        a->rchecksum.block_size = 4096;
        break;
    default:
        break;
    }
}


/* Winds op through trace, answers it at the mock, and checks that both
 * directions came through unchanged. */
static void
t_check_fop(struct t_env *e, vl_fop_t op, int status)
{
    static char data[] = "payload";
    struct iovec iov = {.iov_base = data, .iov_len = sizeof(data)};
    union vl_fop_args args;
    struct t_res res = {0};
    vl_req_t *req;
    vl_req_t *seen;

    t_fill_args(e, op, &args, &iov);
    req = vl_req_new(e->graph->top, op);
    assert_non_null(req);
    req->args = args;
    req->caller.uid = 1234;
    req->caller.lk_owner = 0xabcdef;
    req->caller.client_id = 9;
    vl_wind(req, t_done, &res);

    assert_int_equal(res.n_answers, 0);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    seen = vl_mock_pop(e->mock);
    assert_int_equal(seen->op, op);
    assert_memory_equal(&seen->args, &args, sizeof(args));
    assert_int_equal(seen->caller.uid, 1234);
    assert_int_equal(seen->caller.lk_owner, 0xabcdef);
    assert_int_equal(seen->caller.client_id, 9);
    t_answer(seen, status);

    assert_int_equal(res.n_answers, 1);
    assert_int_equal(res.status, status);
    assert_int_equal(res.reply.iatt.size, 1000 + (uint64_t)op);
    assert_int_equal(res.reply.count, op);
    assert_int_equal(res.reply.offset, 3 * (off_t)op);
    assert_int_equal(res.reply.flock.start, op);
    assert_int_equal(res.reply.statvfs.f_bavail, 77);
    assert_non_null(res.reply.link);
    assert_string_equal(res.reply.link, "link-target");
    assert_int_equal(res.reply.entries.n, 1);
    assert_string_equal(res.reply.entries.ents[0].name, "entry");
    vl_reply_clear(&res.reply);
}


/* ---- tests ---- */

static void
test_every_fop_passes_unchanged(void **state)
{
    struct t_env *e = *state;

    for (int op = 0; op < VL_FOP_COUNT; op++) {
        t_check_fop(e, (vl_fop_t)op, 0);
        t_check_fop(e, (vl_fop_t)op, -EIO);
        t_check_fop(e, (vl_fop_t)op, -ENOENT);
    }
}


static void
test_filtered_fops_pass_unchanged(void **state)
{
    struct t_env *e = *state;
    char *text = NULL;
    size_t len = 0;
    FILE *out;

    /* Only lookup and write are traced; the others take vl_pass. */
    for (int op = 0; op < VL_FOP_COUNT; op++)
        t_check_fop(e, (vl_fop_t)op, -EPERM);
    out = open_memstream(&text, &len);
    assert_non_null(out);
    e->graph->top->cls->dump(e->graph->top, out);
    fclose(out);
    assert_non_null(strstr(text, "level=INFO\n"));
    assert_non_null(strstr(text, "fop_mask=0x8001\n")); /* bits 0, 15 */
    free(text);
}


static void
test_enomem_answers_once(void **state)
{
    struct t_env *e = *state;

    for (long n = 1; n < 100; n++) {
        struct t_res res = {0};
        vl_req_t *req = vl_req_new(e->graph->top, VL_FOP_STAT);
        long used;

        assert_non_null(req);
        req->args.stat.loc.inode = e->file;
        vl_mem_fail_at(n);
        vl_wind(req, t_done, &res);
        used = vl_mem_alloc_count();
        vl_mem_fail_at(0);
        if (res.n_answers == 0) {
            /* It got through to the mock: answer it there. */
            assert_int_equal(vl_mock_pending(e->mock), 1);
            t_answer(vl_mock_pop(e->mock), 0);
        }
        assert_int_equal(res.n_answers, 1);
        assert_true(res.status == 0 || res.status == -ENOMEM);
        vl_reply_clear(&res.reply);
        if (used < n)
            return; /* this run never reached the failure: all covered */
    }
    fail_msg("allocation failure loop did not converge");
}


static void
test_bad_options_refused(void **state)
{
    vl_err_t err = {{0}};

    assert_null(t_graph("    option fops lookup,frobnicate\n", &err));
    assert_non_null(strstr(err.msg, "frobnicate"));
    memset(&err, 0, sizeof(err));
    assert_null(t_graph("    option log-level LOUD\n", &err));
    assert_true(err.msg[0] != '\0');
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_fop_passes_unchanged,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_filtered_fops_pass_unchanged,
                                        t_setup_only_lookup, t_teardown),
        cmocka_unit_test_setup_teardown(test_enomem_answers_once, t_setup,
                                        t_teardown),
        cmocka_unit_test(test_bad_options_refused),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
