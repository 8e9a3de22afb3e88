/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of features/arbiter: data fops are answered from a stat of
 * the file and never reach the brick below, a truncate keeps the size
 * away from it, reads are refused, small files' content is not asked for,
 * and everything else passes through unchanged. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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

struct t_env {
    struct vl_test_graph *g;
    vl_xlator_t *mock;
    vl_inode_t *file;
    vl_fd_t *fd;
};

static const char t_volfile[] =
    "volume mock\n"
    "    type debug/mock\n"
    "end-volume\n"
    "volume arb\n"
    "    type features/arbiter\n"
    "    subvolumes mock\n"
    "end-volume\n";


static int
t_setup(void **state)
{
    struct t_env *e = calloc(1, sizeof(*e));
    vl_err_t err = {{0}};
    vl_gfid_t gfid;

    assert_non_null(e);
    vl_global_init();
    vl_registry_add(&xl_features_arbiter);
    e->g = vl_test_graph_new(t_volfile, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->mock = vl_test_graph_xl(e->g, "mock");
    vl_gfid_generate(&gfid);
    e->file = vl_inode_get(e->g->graph->itable, &gfid, S_IFREG);
    e->fd = vl_fd_new(e->file, O_RDWR, 1);
    assert_non_null(e->fd);
    *state = e;
    return 0;
}


static int
t_teardown(void **state)
{
    struct t_env *e = *state;

    vl_fd_unref(e->fd);
    vl_inode_unref(e->file);
    vl_test_graph_free(e->g);
    free(e);
    return 0;
}


/* The STAT the arbiter sends for a data fop: answered with the empty
 * copy's attributes. */
static void
t_answer_stat(struct t_env *e, vl_fd_t *fd, int status)
{
    vl_req_t *r = vl_mock_pop(e->mock);

    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_STAT);
    assert_ptr_equal(r->args.stat.fd, fd);
    assert_ptr_equal(r->args.stat.loc.inode, e->file);
    if (status == 0) {
        r->reply.iatt.gfid = e->file->gfid;
        r->reply.iatt.mode = S_IFREG | 0640;
        r->reply.iatt.uid = 7;
        r->reply.iatt.size = 0;
    }
    vl_unwind(r, status);
}


static void
test_write_answered_without_data(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_WRITE);
    char a[100] = {0}, b[23] = {0};
    struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};

    req->args.write.fd = e->fd;
    req->args.write.iov = iov;
    req->args.write.n_iov = 2;
    req->args.write.offset = 4096;
    vl_test_wind(req, &res);
    assert_false(res.is_done);
    t_answer_stat(e, e->fd, 0);
    assert_true(res.is_done);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.count, 123);
    assert_int_equal(res.reply.iatt.size, 0);
    assert_int_equal(res.reply.iatt.uid, 7);
    assert_true(vl_gfid_equal(&res.reply.iatt.gfid, &e->file->gfid));
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_WRITE), 0);
    vl_test_result_clear(&res);
}


static void
test_write_stat_error_is_answered(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_WRITE);
    char a[10] = {0};
    struct iovec iov = {a, sizeof(a)};

    req->args.write.fd = e->fd;
    req->args.write.iov = &iov;
    req->args.write.n_iov = 1;
    vl_test_wind(req, &res);
    t_answer_stat(e, e->fd, -ESTALE);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, -ESTALE);
    vl_test_result_clear(&res);
}


static void
test_fallocate_and_copy_not_stored(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_FALLOCATE);
    vl_fd_t *in = vl_fd_new(e->file, O_RDONLY, 1);

    req->args.fallocate.fd = e->fd;
    req->args.fallocate.offset = 0;
    req->args.fallocate.len = 1 << 20;
    vl_test_wind(req, &res);
    t_answer_stat(e, e->fd, 0);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.iatt.size, 0);
    vl_test_result_clear(&res);

    /* A bad range is refused as the brick below would. */
    req = vl_req_new(e->g->graph->top, VL_FOP_FALLOCATE);
    req->args.fallocate.fd = e->fd;
    req->args.fallocate.len = 0;
    vl_test_wind(req, &res);
    assert_int_equal(res.status, -EINVAL);
    vl_test_result_clear(&res);

    req = vl_req_new(e->g->graph->top, VL_FOP_COPY_FILE_RANGE);
    req->args.copy_file_range.fd_in = in;
    req->args.copy_file_range.fd_out = e->fd;
    req->args.copy_file_range.len = 5000;
    vl_test_wind(req, &res);
    t_answer_stat(e, e->fd, 0);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.count, 5000);
    vl_test_result_clear(&res);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_FALLOCATE), 0);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_COPY_FILE_RANGE),
                     0);
    vl_fd_unref(in);
}


static void
test_truncate_keeps_size(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_SETATTR);
    vl_req_t *r;

    /* A truncate alone: answered from a stat by loc. */
    req->args.setattr.loc.inode = e->file;
    req->args.setattr.attr.size = 999;
    req->args.setattr.valid = VL_SET_SIZE;
    vl_test_wind(req, &res);
    t_answer_stat(e, NULL, 0);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.iatt.size, 0);
    vl_test_result_clear(&res);

    /* With a mode change: the mode goes down, the size does not. */
    req = vl_req_new(e->g->graph->top, VL_FOP_SETATTR);
    req->args.setattr.fd = e->fd;
    req->args.setattr.attr.size = 5;
    req->args.setattr.attr.mode = 0600;
    req->args.setattr.valid = VL_SET_SIZE | VL_SET_MODE;
    vl_test_wind(req, &res);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_SETATTR);
    assert_int_equal(r->args.setattr.valid, VL_SET_MODE);
    assert_ptr_equal(r->args.setattr.fd, e->fd);
    r->reply.iatt.mode = S_IFREG | 0600;
    vl_unwind(r, 0);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.iatt.mode, S_IFREG | 0600);
    vl_test_result_clear(&res);

    /* No size: passed unchanged, errors included. */
    req = vl_req_new(e->g->graph->top, VL_FOP_SETATTR);
    req->args.setattr.loc.inode = e->file;
    req->args.setattr.valid = VL_SET_UID;
    vl_test_wind(req, &res);
    r = vl_mock_pop(e->mock);
    assert_int_equal(r->args.setattr.valid, VL_SET_UID);
    vl_unwind(r, -EPERM);
    assert_int_equal(res.status, -EPERM);
    vl_test_result_clear(&res);
}


static void
test_reads_refused(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_READ);

    req->args.read.fd = e->fd;
    req->args.read.size = 4096;
    vl_test_wind(req, &res);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, -ENOTCONN);
    assert_null(res.reply.data);
    vl_test_result_clear(&res);

    req = vl_req_new(e->g->graph->top, VL_FOP_LSEEK);
    req->args.lseek.fd = e->fd;
    req->args.lseek.whence = SEEK_DATA;
    vl_test_wind(req, &res);
    assert_int_equal(res.status, -ENOTCONN);
    vl_test_result_clear(&res);

    req = vl_req_new(e->g->graph->top, VL_FOP_RCHECKSUM);
    req->args.rchecksum.fd = e->fd;
    vl_test_wind(req, &res);
    assert_int_equal(res.status, -ENOTCONN);
    vl_test_result_clear(&res);
    assert_int_equal(vl_mock_received(e->mock), 0);
}


static void
test_lookup_without_content(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);
    vl_req_t *r;

    req->args.lookup.loc.inode = e->file;
    req->args.lookup.content_max = 65536;
    req->args.lookup.xattr_name = "trusted.mortar.rep.dirty";
    vl_test_wind(req, &res);
    r = vl_mock_pop(e->mock);
    assert_int_equal(r->op, VL_FOP_LOOKUP);
    assert_int_equal(r->args.lookup.content_max, 0);
    assert_string_equal(r->args.lookup.xattr_name,
                        "trusted.mortar.rep.dirty");
    r->reply.iatt.gfid = e->file->gfid;
    r->reply.iatt.mode = S_IFREG | 0644;
    vl_unwind(r, 0);
    assert_int_equal(res.status, 0);
    assert_true(vl_gfid_equal(&res.reply.iatt.gfid, &e->file->gfid));
    assert_null(res.reply.buf);
    vl_test_result_clear(&res);

    req = vl_req_new(e->g->graph->top, VL_FOP_READDIR);
    req->args.readdir.fd = e->fd;
    req->args.readdir.plus = true;
    req->args.readdir.content_max = 4096;
    vl_test_wind(req, &res);
    r = vl_mock_pop(e->mock);
    assert_int_equal(r->args.readdir.content_max, 0);
    assert_true(r->args.readdir.plus);
    vl_unwind(r, -ENOENT);
    assert_int_equal(res.status, -ENOENT);
    vl_test_result_clear(&res);
}


/* Names, attributes, xattrs, records and locks reach the brick as they
 * came. */
static void
test_metadata_passes(void **state)
{
    struct t_env *e = *state;
    static const vl_fop_t ops[] = {
        VL_FOP_SETXATTR, VL_FOP_REMOVEXATTR, VL_FOP_GETXATTR,
        VL_FOP_XATTROP, VL_FOP_INODELK, VL_FOP_STAT, VL_FOP_OPEN,
        VL_FOP_FSYNC, VL_FOP_FLUSH, VL_FOP_STATFS,
    };

    for (size_t i = 0; i < VL_ARRAY_SIZE(ops); i++) {
        struct vl_test_result res = {0};
        vl_req_t *req = vl_req_new(e->g->graph->top, ops[i]);
        vl_req_t *r;

        vl_test_wind(req, &res);
        r = vl_mock_pop(e->mock);
        assert_non_null(r);
        assert_int_equal(r->op, ops[i]);
        assert_ptr_equal(r, req);
        vl_unwind(r, 0);
        assert_int_equal(res.n_done, 1);
        vl_test_result_clear(&res);
    }
}


static void
test_class_conforms(void **state)
{
    vl_err_t err = {{0}};

    (void)state;
    if (vl_test_check_class(&xl_features_arbiter, &err) != 0)
        fail_msg("%s", err.msg);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_answered_without_data,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_write_stat_error_is_answered,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_fallocate_and_copy_not_stored,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_truncate_keeps_size, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_reads_refused, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_lookup_without_content,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_metadata_passes, t_setup,
                                        t_teardown),
        cmocka_unit_test(test_class_conforms),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
