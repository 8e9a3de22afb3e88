/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-dist-reroute: the EREMCHG reroute of distribute. Subvolume 0 is a
 * mock that answers a read with EREMCHG (the file was migrated away);
 * subvolume 1 is a posix brick holding the file: distribute must find it
 * there by GFID, reopen the fd there and retry the read once, never
 * passing EREMCHG up; a file found nowhere gives ESTALE; copy_file_range
 * between files on different subvolumes is done by distribute itself.
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
#include <unistd.h>

#include <cmocka.h>

#include "../../../builtin.h"
#include "dist.h"
#include "vl-test.h"

struct rt {
    char brick[64];              /* posix brick of subvolume 1 */
    struct vl_test_graph *g;     /* mock m0 + posix b1 under dht */
    vl_xlator_t *dht;            /* distribute */
    vl_xlator_t *mock;           /* subvolume 0 */
    vl_xlator_t *b1;             /* subvolume 1 */
};


static int
rt_setup(void **state)
{
    struct rt *t = calloc(1, sizeof(*t));
    char text[1024];
    vl_err_t err = {{0}};

    assert_non_null(t);
    vl_global_init();
    vl_log_set_level(VL_LOG_ERROR);
    vl_registry_add(&xl_storage_posix);
    vl_registry_add(&xl_cluster_distribute);
    snprintf(t->brick, sizeof(t->brick), "/tmp/dist-rr-XXXXXX");
    assert_non_null(mkdtemp(t->brick));
    snprintf(text, sizeof(text),
             "volume m0\n type debug/mock\nend-volume\n"
             "volume b1\n type storage/posix\n option directory %s\n"
             "end-volume\n"
             "volume dht\n type cluster/distribute\n"
             " option min-free-disk 0%%\n subvolumes m0 b1\nend-volume\n",
             t->brick);
    t->g = vl_test_graph_new(text, &err);
    if (t->g == NULL)
        fail_msg("graph: %s", err.msg);
    t->dht = vl_test_graph_xl(t->g, "dht");
    t->mock = vl_test_graph_xl(t->g, "m0");
    t->b1 = vl_test_graph_xl(t->g, "b1");
    *state = t;
    return 0;
}


static int
rt_teardown(void **state)
{
    struct rt *t = *state;
    char cmd[128];

    vl_test_graph_free(t->g);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", t->brick);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", t->brick);
    free(t);
    return 0;
}


/* Waits for res, answering what reaches the mock meanwhile with
 * mock_status (the worker's lookups by GFID). */
static void
rt_wait(struct rt *t, struct vl_test_result *res, int mock_status)
{
    for (int i = 0; i < 5000 && !res->is_done; i++) {
        vl_req_t *r = vl_mock_pop(t->mock);

        if (r != NULL)
            vl_unwind(r, mock_status);
        else
            usleep(1000);
    }
    assert_true(res->is_done);
    assert_int_equal(res->n_done, 1);
}


/* "f" holding "hello", created on b1 directly; *fresh is the inode it
 * was created with (a ref to drop), the linked one is returned. */
static vl_inode_t *
rt_file_on_b1(struct rt *t, vl_inode_t *root, vl_inode_t **fresh_out)
{
    vl_inode_t *fresh = vl_inode_new(t->g->graph->itable), *inode;
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct iovec iov = {.iov_base = "hello", .iov_len = 5};
    vl_fd_t *fd0;

    fd0 = vl_fd_new(fresh, O_RDWR, 1);
    a.create.loc.parent = root;
    a.create.loc.name = "f";
    a.create.loc.inode = fresh;
    a.create.flags = O_RDWR | O_CREAT;
    a.create.mode = 0644;
    a.create.fd = fd0;
    vl_gfid_generate(&a.create.gfid);
    assert_int_equal(vl_sync_call(t->b1, VL_FOP_CREATE, &a, NULL, &r), 0);
    inode = vl_inode_link(fresh, &r.iatt);
    vl_reply_clear(&r);
    memset(&a, 0, sizeof(a));
    a.write.fd = fd0;
    a.write.iov = &iov;
    a.write.n_iov = 1;
    assert_int_equal(vl_sync_call(t->b1, VL_FOP_WRITE, &a, NULL, &r), 0);
    assert_int_equal(r.count, 5);
    vl_reply_clear(&r);
    vl_fd_unref(fd0);
    *fresh_out = fresh;
    return inode;
}


/* Opens inode through distribute, which believes it is on subvolume 0
 * (the mock opens it). */
static vl_fd_t *
rt_open_on_mock(struct rt *t, vl_inode_t *inode)
{
    struct vl_test_result res = {0};
    vl_fd_t *fd;
    vl_req_t *req;

    dist_ictx_set_file(t->dht, inode, 0, 0, false);
    fd = vl_fd_new(inode, O_RDONLY, 1);
    req = vl_req_new(t->dht, VL_FOP_OPEN);
    VL_ARGS(req, open)->loc.inode = inode;
    VL_ARGS(req, open)->flags = O_RDONLY;
    VL_ARGS(req, open)->fd = fd;
    vl_test_wind(req, &res);
    rt_wait(t, &res, 0);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    return fd;
}


static void
test_eremchg_read_follows_the_file(void **state)
{
    struct rt *t = *state;
    vl_inode_t *root = vl_inode_table_root(t->g->graph->itable);
    vl_inode_t *fresh, *inode = rt_file_on_b1(t, root, &fresh);
    struct vl_test_result res = {0};
    vl_fd_t *fd;
    vl_req_t *req;

    /* Distribute believes it is on subvolume 0 (before a migration). */
    fd = rt_open_on_mock(t, inode);
    assert_int_equal(vl_mock_received_op(t->mock, VL_FOP_OPEN), 1);

    /* The read meets EREMCHG on subvolume 0 and is retried on b1. */
    req = vl_req_new(t->dht, VL_FOP_READ);
    VL_ARGS(req, read)->fd = fd;
    VL_ARGS(req, read)->size = 64;
    vl_test_wind(req, &res);
    assert_int_equal(vl_mock_pending(t->mock), 1);
    vl_unwind(vl_mock_pop(t->mock), -EREMCHG);
    rt_wait(t, &res, -ENOENT);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.count, 5);
    assert_memory_equal(res.reply.data, "hello", 5);
    vl_test_result_clear(&res);
    assert_int_equal(vl_mock_received_op(t->mock, VL_FOP_READ), 1);

    /* The fd now lives on b1: the next read goes there directly. */
    req = vl_req_new(t->dht, VL_FOP_READ);
    VL_ARGS(req, read)->fd = fd;
    VL_ARGS(req, read)->size = 64;
    VL_ARGS(req, read)->offset = 1;
    vl_test_wind(req, &res);
    rt_wait(t, &res, -EIO);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.count, 4);
    vl_test_result_clear(&res);
    assert_int_equal(vl_mock_received_op(t->mock, VL_FOP_READ), 1);

    vl_fd_unref(fd);
    vl_inode_unref(inode);
    vl_inode_unref(fresh);
    vl_inode_unref(root);
}


/* Between the rebalance's mark of the source (EREMCHG from then on) and
 * its unlink, the source still answers a lookup as a regular file: the
 * reroute must take the copy elsewhere, not retry where EREMCHG came
 * from (that retry failed with ESTALE up to the application). */
static void
test_eremchg_source_still_listed(void **state)
{
    struct rt *t = *state;
    vl_inode_t *root = vl_inode_table_root(t->g->graph->itable);
    vl_inode_t *fresh, *inode = rt_file_on_b1(t, root, &fresh);
    struct vl_test_result res = {0};
    vl_fd_t *fd = rt_open_on_mock(t, inode);
    vl_req_t *req;

    req = vl_req_new(t->dht, VL_FOP_READ);
    VL_ARGS(req, read)->fd = fd;
    VL_ARGS(req, read)->size = 64;
    vl_test_wind(req, &res);
    vl_unwind(vl_mock_pop(t->mock), -EREMCHG);
    for (int i = 0; i < 5000 && !res.is_done; i++) {
        vl_req_t *r = vl_mock_pop(t->mock);

        if (r == NULL) {
            usleep(1000);
            continue;
        }
        if (r->op == VL_FOP_LOOKUP) {
            /* The source, marked but not unlinked yet. */
            r->reply.iatt.gfid = inode->gfid;
            r->reply.iatt.mode = S_IFREG | 0644;
            r->reply.iatt.size = 5;
            vl_unwind(r, 0);
        } else {
            vl_unwind(r, -EREMCHG);
        }
    }
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.count, 5);
    assert_memory_equal(res.reply.data, "hello", 5);
    vl_test_result_clear(&res);
    assert_int_equal(vl_mock_received_op(t->mock, VL_FOP_READ), 1);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
    vl_inode_unref(fresh);
    vl_inode_unref(root);
}


static void
test_eremchg_nowhere_is_estale(void **state)
{
    struct rt *t = *state;
    vl_gfid_t g;
    vl_inode_t *inode;
    struct vl_test_result res = {0};
    vl_req_t *req;

    vl_gfid_generate(&g);
    inode = vl_inode_get(t->g->graph->itable, &g, S_IFREG);
    dist_ictx_set_file(t->dht, inode, 0, 0, false);
    req = vl_req_new(t->dht, VL_FOP_STAT);
    VL_ARGS(req, stat)->loc.inode = inode;
    vl_test_wind(req, &res);
    vl_unwind(vl_mock_pop(t->mock), -EREMCHG);
    rt_wait(t, &res, -ENOENT);
    /* Gone everywhere: ESTALE, never EREMCHG. */
    assert_int_equal(res.status, -ESTALE);
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
}


static vl_fd_t *
rt_open_on(struct rt *t, int subvol)
{
    struct vl_test_result res = {0};
    vl_gfid_t g;
    vl_inode_t *inode;
    vl_fd_t *fd;
    vl_req_t *req;

    vl_gfid_generate(&g);
    inode = vl_inode_get(t->g->graph->itable, &g, S_IFREG);
    dist_ictx_set_file(t->dht, inode, subvol, subvol, false);
    fd = vl_fd_new(inode, O_RDWR, 1);
    vl_inode_unref(inode);
    req = vl_req_new(t->dht, VL_FOP_OPEN);
    VL_ARGS(req, open)->loc.inode = fd->inode;
    VL_ARGS(req, open)->flags = O_RDWR;
    VL_ARGS(req, open)->fd = fd;
    vl_test_wind(req, &res);
    if (subvol == 0) {
        assert_int_equal(vl_mock_pending(t->mock), 1);
        vl_unwind(vl_mock_pop(t->mock), 0);
    }
    assert_true(res.is_done);
    vl_test_result_clear(&res);
    return fd;
}


static void
test_copy_file_range_across_is_copied(void **state)
{
    struct rt *t = *state;
    struct vl_test_result res = {0};
    vl_fd_t *in, *out;
    vl_req_t *req;

    in = rt_open_on(t, 0);
    out = rt_open_on(t, 0);
    /* Same subvolume: passed down (the mock gets it). */
    req = vl_req_new(t->dht, VL_FOP_COPY_FILE_RANGE);
    VL_ARGS(req, copy_file_range)->fd_in = in;
    VL_ARGS(req, copy_file_range)->fd_out = out;
    VL_ARGS(req, copy_file_range)->len = 10;
    vl_test_wind(req, &res);
    assert_int_equal(vl_mock_received_op(t->mock, VL_FOP_COPY_FILE_RANGE), 1);
    vl_unwind(vl_mock_pop(t->mock), 0);
    assert_true(res.is_done);
    vl_test_result_clear(&res);
    vl_fd_unref(out);

    /* Different subvolumes: distribute copies itself (dist-copy.c),
     * reading from subvolume 0; nobody gets a copy_file_range. */
    out = vl_fd_new(in->inode, O_RDWR, 1);
    {
        struct dist_fd_ctx *c = vl_fd_ctx(out, t->dht);

        c->has_subvol = true;
        c->subvol = 1;
    }
    req = vl_req_new(t->dht, VL_FOP_COPY_FILE_RANGE);
    VL_ARGS(req, copy_file_range)->fd_in = in;
    VL_ARGS(req, copy_file_range)->fd_out = out;
    VL_ARGS(req, copy_file_range)->len = 10;
    vl_test_wind(req, &res);
    assert_false(res.is_done);
    assert_int_equal(vl_mock_received_op(t->mock, VL_FOP_READ), 1);
    vl_unwind(vl_mock_pop(t->mock), -EIO);
    assert_true(res.is_done);
    assert_int_equal(res.status, -EIO);
    assert_int_equal(vl_mock_received_op(t->mock, VL_FOP_COPY_FILE_RANGE), 1);
    vl_test_result_clear(&res);
    vl_fd_unref(out);
    vl_fd_unref(in);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_eremchg_read_follows_the_file,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_eremchg_source_still_listed,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_eremchg_nowhere_is_estale,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_copy_file_range_across_is_copied,
                                        rt_setup, rt_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("dist-reroute", tests, NULL, NULL);
}
