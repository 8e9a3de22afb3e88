/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-trace: debug/trace over a leaf that records the arguments it was
 * given and answers with a status and reply fields chosen per fop; every
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
#include "vol/vol.h"

/* ---- the leaf ---- */

static int leaf_status;                /* status to answer with */
static int leaf_n_calls;               /* requests seen */
static union vl_fop_args leaf_args;    /* args of the last request */
static struct vl_caller leaf_caller;   /* caller of the last request */

static void
leaf_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_reply *r = &req->reply;
    int rc;

    leaf_n_calls++;
    memcpy(&leaf_args, &req->args, sizeof(leaf_args));
    leaf_caller = req->caller;
    r->iatt.size = 1000 + (uint64_t)req->op;
    r->iatt.mode = S_IFREG | 0640;
    r->count = req->op;
    r->offset = 3 * (off_t)req->op;
    r->flock.type = F_WRLCK;
    r->flock.start = req->op;
    r->statvfs.f_bavail = 77;
    r->link = vl_strdup(xl, "link-target", 0);
    rc = vl_dirent_list_add(&r->entries, 5, 1, DT_REG, "entry", NULL);
    if (r->link == NULL || rc != 0) {
        vl_unwind(req, -ENOMEM);
        return;
    }
    vl_unwind(req, leaf_status);
}

static const vl_option_t leaf_options[] = {VL_OPT_END};

static const vl_xlator_class_t leaf_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/trace-leaf",
    .prefix = "trace-leaf",
    .version = {0, 1, 0},
    .flags = VL_XL_LEAF,
    .options = leaf_options,
    .doc = "Answers every fop with a chosen status and fixed reply.",
    .fops = {
#define VL_FOP(UPPER, lower, flags) [VL_FOP_##UPPER] = leaf_fop,
#include "vol/fops.def"
#undef VL_FOP
    },
};

/* ---- environment ---- */

struct t_env {
    vl_loop_t *loop;   /* needed by the graph */
    vl_graph_t *graph; /* trace over the leaf */
    vl_inode_t *dir;   /* a directory */
    vl_inode_t *file;  /* a file in it */
    vl_fd_t *fd;       /* open on file */
};

struct t_res {
    int n_answers;         /* times done ran */
    int status;            /* its status */
    struct vl_reply reply; /* moved out of the answered request */
};


static vl_graph_t *
t_graph(vl_loop_t *loop, const char *options, vl_err_t *err)
{
    char text[1024];
    vl_volfile_t *vf;
    vl_graph_t *g;

    snprintf(text, sizeof(text),
             "volume leaf\n"
             "    type test/trace-leaf\n"
             "end-volume\n"
             "volume trace\n"
             "    type debug/trace\n"
             "%s"
             "    subvolumes leaf\n"
             "end-volume\n",
             options);
    vf = vl_volfile_parse(text, strlen(text), "test", err);
    assert_non_null(vf);
    g = vl_graph_build(vf, loop, err);
    vl_volfile_free(vf);
    if (g != NULL && vl_graph_init(g, err) != 0) {
        vl_graph_free(g);
        g = NULL;
    }
    return g;
}


static int
t_setup_opts(void **state, const char *options)
{
    struct t_env *e = calloc(1, sizeof(*e));
    vl_err_t err = {{0}};
    vl_gfid_t gfid;

    assert_non_null(e);
    vl_global_init();
    vl_log_set_level(VL_LOG_TRACE); /* make trace really format lines */
    vl_registry_add(&leaf_class);
    vl_registry_add(&xl_debug_trace);
    e->loop = vl_loop_new(1);
    assert_non_null(e->loop);
    e->graph = t_graph(e->loop, options, &err);
    assert_non_null(e->graph);
    vl_gfid_generate(&gfid);
    e->dir = vl_inode_get(e->graph->itable, &gfid, S_IFDIR);
    vl_gfid_generate(&gfid);
    e->file = vl_inode_get(e->graph->itable, &gfid, S_IFREG);
    assert_non_null(e->dir);
    assert_non_null(e->file);
    e->fd = vl_fd_new(e->file, O_RDWR, 1);
    assert_non_null(e->fd);
    leaf_n_calls = 0;
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
    vl_graph_free(e->graph);
    vl_loop_free(e->loop);
    vl_log_set_level(VL_LOG_INFO);
    free(e);
    return 0;
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
 * them, so trace has something to print and the leaf something to see. */
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
    default:
        break;
    }
}


/* Winds op through trace and checks it came back unchanged. */
static void
t_check_fop(struct t_env *e, vl_fop_t op, int status)
{
    static char data[] = "payload";
    struct iovec iov = {.iov_base = data, .iov_len = sizeof(data)};
    union vl_fop_args args;
    struct t_res res = {0};
    vl_req_t *req;
    int n_before = leaf_n_calls;

    t_fill_args(e, op, &args, &iov);
    req = vl_req_new(e->graph->top, op);
    assert_non_null(req);
    req->args = args;
    req->caller.uid = 1234;
    req->caller.lk_owner = 0xabcdef;
    req->caller.client_id = 9;
    leaf_status = status;
    vl_wind(req, t_done, &res);

    assert_int_equal(res.n_answers, 1);
    assert_int_equal(res.status, status);
    assert_int_equal(leaf_n_calls, n_before + 1);
    assert_memory_equal(&leaf_args, &args, sizeof(args));
    assert_int_equal(leaf_caller.uid, 1234);
    assert_int_equal(leaf_caller.lk_owner, 0xabcdef);
    assert_int_equal(leaf_caller.client_id, 9);
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
        leaf_status = 0;
        vl_mem_fail_at(n);
        vl_wind(req, t_done, &res);
        used = vl_mem_alloc_count();
        vl_mem_fail_at(0);
        assert_int_equal(res.n_answers, 1);
        assert_true(res.status == 0 || res.status == -ENOMEM);
        vl_reply_clear(&res.reply);
        if (used < n)
            return;
    }
    fail_msg("allocation failure loop did not converge");
}


static void
test_bad_options_refused(void **state)
{
    vl_loop_t *loop;
    vl_err_t err = {{0}};

    vl_global_init();
    vl_registry_add(&leaf_class);
    vl_registry_add(&xl_debug_trace);
    loop = vl_loop_new(1);
    assert_non_null(loop);
    assert_null(t_graph(loop, "    option fops lookup,frobnicate\n", &err));
    assert_non_null(strstr(err.msg, "frobnicate"));
    memset(&err, 0, sizeof(err));
    assert_null(t_graph(loop, "    option log-level LOUD\n", &err));
    assert_true(err.msg[0] != '\0');
    vl_loop_free(loop);
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
