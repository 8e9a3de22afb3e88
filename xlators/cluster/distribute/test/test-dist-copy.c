/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-dist-copy: copy_file_range of distribute (dist-copy.c). Subvolumes
 * b0 and b1 are posix bricks, m2 a mock. A copy between b0 and b1 is done
 * by distribute with reads and writes (data checked on b1 directly, with
 * offsets, a size that is not a multiple of the chunk, 0 length, a start
 * beyond the end); on one subvolume it is passed down; errors from the
 * mock midway give the partial count and nothing past it is written; a
 * short write ends the count inside that chunk; a moved file gives
 * EXDEV; a subvolume down gives ENOTCONN; bad flags and open modes are
 * refused.
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

#define MIB (1024 * 1024)

struct ct {
    char brick[2][64];           /* posix bricks of subvolumes 0 and 1 */
    struct vl_test_graph *g;     /* b0 b1 m2 under dht */
    vl_xlator_t *dht;            /* distribute */
    vl_xlator_t *b[2];           /* subvolumes 0 and 1 */
    vl_xlator_t *mock;           /* subvolume 2 */
};


static int
ct_setup(void **state)
{
    struct ct *t = calloc(1, sizeof(*t));
    char text[2048];
    vl_err_t err = {{0}};

    assert_non_null(t);
    vl_global_init();
    vl_log_set_level(VL_LOG_ERROR);
    vl_registry_add(&xl_storage_posix);
    vl_registry_add(&xl_cluster_distribute);
    for (int i = 0; i < 2; i++) {
        snprintf(t->brick[i], sizeof(t->brick[i]), "/tmp/dist-cp-XXXXXX");
        assert_non_null(mkdtemp(t->brick[i]));
    }
    snprintf(text, sizeof(text),
             "volume b0\n type storage/posix\n option directory %s\n"
             "end-volume\n"
             "volume b1\n type storage/posix\n option directory %s\n"
             "end-volume\n"
             "volume m2\n type debug/mock\nend-volume\n"
             "volume dht\n type cluster/distribute\n"
             " option min-free-disk 0%%\n subvolumes b0 b1 m2\nend-volume\n",
             t->brick[0], t->brick[1]);
    t->g = vl_test_graph_new(text, &err);
    if (t->g == NULL)
        fail_msg("graph: %s", err.msg);
    t->dht = vl_test_graph_xl(t->g, "dht");
    t->b[0] = vl_test_graph_xl(t->g, "b0");
    t->b[1] = vl_test_graph_xl(t->g, "b1");
    t->mock = vl_test_graph_xl(t->g, "m2");
    *state = t;
    return 0;
}


static int
ct_teardown(void **state)
{
    struct ct *t = *state;
    char cmd[160];

    vl_test_graph_free(t->g);
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof(cmd), "rm -rf %s", t->brick[i]);
        if (system(cmd) != 0)
            fprintf(stderr, "# could not remove %s\n", t->brick[i]);
    }
    free(t);
    return 0;
}


/* Byte i of the test pattern (not periodic in 1 MiB). */
static char
ct_byte(size_t i)
{
    return (char)((i * 7 + i / 4099) & 0xff);
}


/* Runs the loop until res is answered (posix answers inline; the loop
 * is there in case a brick defers). */
static void
ct_wait(struct ct *t, struct vl_test_result *res)
{
    for (int i = 0; i < 2000 && !res->is_done; i++)
        vl_loop_run_once(t->g->loop, 1);
    assert_true(res->is_done);
    assert_int_equal(res->n_done, 1);
}


/* Creates name on posix subvolume i with size bytes of the pattern and
 * returns an fd opened through distribute (mode flags). */
static vl_fd_t *
ct_file(struct ct *t, int i, const char *name, size_t size, int32_t flags)
{
    vl_inode_t *root = vl_inode_table_root(t->g->graph->itable);
    vl_inode_t *fresh = vl_inode_new(t->g->graph->itable), *inode;
    union vl_fop_args a = {0};
    struct vl_reply r;
    struct vl_test_result res = {0};
    vl_fd_t *fd0, *fd;
    vl_req_t *req;
    char *data = malloc(size + 1);

    assert_non_null(data);
    for (size_t j = 0; j < size; j++)
        data[j] = ct_byte(j);
    fd0 = vl_fd_new(fresh, O_RDWR, 1);
    a.create.loc.parent = root;
    a.create.loc.name = name;
    a.create.loc.inode = fresh;
    a.create.flags = O_RDWR | O_CREAT;
    a.create.mode = 0644;
    a.create.fd = fd0;
    vl_gfid_generate(&a.create.gfid);
    assert_int_equal(vl_sync_call(t->b[i], VL_FOP_CREATE, &a, NULL, &r), 0);
    inode = vl_inode_link(fresh, &r.iatt);
    vl_reply_clear(&r);
    if (size > 0) {
        struct iovec iov = {.iov_base = data, .iov_len = size};

        memset(&a, 0, sizeof(a));
        a.write.fd = fd0;
        a.write.iov = &iov;
        a.write.n_iov = 1;
        assert_int_equal(vl_sync_call(t->b[i], VL_FOP_WRITE, &a, NULL, &r),
                         0);
        assert_int_equal(r.count, (int64_t)size);
        vl_reply_clear(&r);
    }
    vl_fd_unref(fd0);
    free(data);

    dist_ictx_set_file(t->dht, inode, i, i, false);
    fd = vl_fd_new(inode, flags, 1);
    req = vl_req_new(t->dht, VL_FOP_OPEN);
    VL_ARGS(req, open)->loc.inode = inode;
    VL_ARGS(req, open)->flags = flags;
    VL_ARGS(req, open)->fd = fd;
    vl_test_wind(req, &res);
    ct_wait(t, &res);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    vl_inode_unref(inode);
    vl_inode_unref(fresh);
    vl_inode_unref(root);
    return fd;
}


/* An fd distribute believes open on the mock (subvolume 2). */
static vl_fd_t *
ct_mock_fd(struct ct *t, int32_t flags)
{
    vl_gfid_t g;
    vl_inode_t *inode;
    vl_fd_t *fd;
    struct dist_fd_ctx *c;

    vl_gfid_generate(&g);
    inode = vl_inode_get(t->g->graph->itable, &g, S_IFREG);
    dist_ictx_set_file(t->dht, inode, 2, 2, false);
    fd = vl_fd_new(inode, flags, 1);
    vl_inode_unref(inode);
    c = vl_fd_ctx(fd, t->dht);
    c->has_subvol = true;
    c->subvol = 2;
    c->flags = flags;
    return fd;
}


static int
ct_copy(struct ct *t, vl_fd_t *in, off_t off_in, vl_fd_t *out,
        off_t off_out, size_t len, uint32_t flags, int64_t *count)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_COPY_FILE_RANGE);
    int status;

    VL_ARGS(req, copy_file_range)->fd_in = in;
    VL_ARGS(req, copy_file_range)->off_in = off_in;
    VL_ARGS(req, copy_file_range)->fd_out = out;
    VL_ARGS(req, copy_file_range)->off_out = off_out;
    VL_ARGS(req, copy_file_range)->len = len;
    VL_ARGS(req, copy_file_range)->flags = flags;
    vl_test_wind(req, &res);
    ct_wait(t, &res);
    status = res.status;
    *count = res.reply.count;
    vl_test_result_clear(&res);
    return status;
}


/* Size of name on brick i, or -1. */
static off_t
ct_size(struct ct *t, int i, const char *name)
{
    char path[160];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", t->brick[i], name);
    return stat(path, &st) == 0 ? st.st_size : -1;
}


/* Checks that name on brick i holds the pattern's bytes [src, src + n)
 * at offset dst. */
static void
ct_check(struct ct *t, int i, const char *name, off_t dst, size_t src,
         size_t n)
{
    char path[160];
    char *buf = malloc(n + 1);
    int fd;

    assert_non_null(buf);
    snprintf(path, sizeof(path), "%s/%s", t->brick[i], name);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, buf, n, dst), (ssize_t)n);
    close(fd);
    for (size_t j = 0; j < n; j++)
        if (buf[j] != ct_byte(src + j))
            fail_msg("byte %zu of %s differs", j, name);
    free(buf);
}


static void
test_across_subvolumes_copies(void **state)
{
    struct ct *t = *state;
    size_t size = 5 * MIB / 2 + 123; /* not a multiple of the chunk */
    vl_fd_t *in = ct_file(t, 0, "src", size, O_RDONLY);
    vl_fd_t *out = ct_file(t, 1, "dst", 0, O_WRONLY);
    int64_t n = -1;

    /* Everything from offset 100 to offset 7, asking for more than is
     * there: a short copy at the end of the source. */
    assert_int_equal(ct_copy(t, in, 100, out, 7, 10 * MIB, 0, &n), 0);
    assert_int_equal(n, (int64_t)(size - 100));
    assert_int_equal(ct_size(t, 1, "dst"), (off_t)(7 + size - 100));
    ct_check(t, 1, "dst", 7, 100, size - 100);

    /* A middle piece, exactly two chunks and one byte. */
    assert_int_equal(ct_copy(t, in, 3, out, 5000, 2 * MIB + 1, 0, &n), 0);
    assert_int_equal(n, 2 * MIB + 1);
    ct_check(t, 1, "dst", 5000, 3, 2 * MIB + 1);

    /* 0 bytes, and a start beyond the end: 0, nothing written. */
    assert_int_equal(ct_copy(t, in, 0, out, 0, 0, 0, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(ct_copy(t, in, (off_t)size + 10, out, 50 * MIB, MIB, 0,
                             &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(ct_size(t, 1, "dst"), (off_t)(7 + size - 100));

    /* Nothing reached the mock, and no brick got a copy_file_range. */
    assert_int_equal(vl_mock_received(t->mock), 0);
    vl_fd_unref(out);
    vl_fd_unref(in);
}


static void
test_one_subvolume_passes_down(void **state)
{
    struct ct *t = *state;
    vl_fd_t *in = ct_mock_fd(t, O_RDONLY);
    vl_fd_t *out = ct_mock_fd(t, O_WRONLY);
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_COPY_FILE_RANGE), *r;

    VL_ARGS(req, copy_file_range)->fd_in = in;
    VL_ARGS(req, copy_file_range)->fd_out = out;
    VL_ARGS(req, copy_file_range)->len = 10;
    vl_test_wind(req, &res);
    assert_int_equal(vl_mock_pending(t->mock), 1);
    r = vl_mock_pop(t->mock);
    assert_int_equal(r->op, VL_FOP_COPY_FILE_RANGE);
    r->reply.count = 10;
    vl_unwind(r, 0);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.count, 10);
    vl_test_result_clear(&res);
    vl_fd_unref(out);
    vl_fd_unref(in);
}


/* Answers a read from the mock with n bytes of the pattern at its
 * offset, or with status when n is 0. */
static void
ct_answer_read(vl_req_t *r, size_t n, int status)
{
    struct vl_read_args *a = VL_ARGS(r, read);

    if (n > 0) {
        r->reply.buf = vl_buf_new(n);
        assert_non_null(r->reply.buf);
        for (size_t j = 0; j < n; j++)
            r->reply.buf->data[j] = ct_byte((size_t)a->offset + j);
        r->reply.data = r->reply.buf->data;
        r->reply.count = (int64_t)n;
    }
    vl_unwind(r, status);
}


static vl_req_t *
ct_pop_read(struct ct *t, off_t offset)
{
    vl_req_t *r = vl_mock_pop(t->mock);

    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_READ);
    assert_int_equal(VL_ARGS(r, read)->offset, offset);
    return r;
}


static void
test_error_midway_gives_partial_count(void **state)
{
    struct ct *t = *state;
    vl_fd_t *in = ct_mock_fd(t, O_RDONLY);
    vl_fd_t *out = ct_file(t, 1, "dst", 0, O_WRONLY);
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_COPY_FILE_RANGE);
    vl_req_t *r0, *r1, *r2;

    VL_ARGS(req, copy_file_range)->fd_in = in;
    VL_ARGS(req, copy_file_range)->fd_out = out;
    VL_ARGS(req, copy_file_range)->len = 3 * MIB;
    vl_test_wind(req, &res);
    /* All three chunks are read at once. */
    assert_int_equal(vl_mock_pending(t->mock), 3);
    r0 = ct_pop_read(t, 0);
    r1 = ct_pop_read(t, MIB);
    r2 = ct_pop_read(t, 2 * MIB);
    /* The third arrives first: it must wait for the earlier ones. */
    ct_answer_read(r2, MIB, 0);
    assert_int_equal(ct_size(t, 1, "dst"), 0);
    ct_answer_read(r0, MIB, 0);
    assert_false(res.is_done);
    ct_answer_read(r1, 0, -EIO);
    ct_wait(t, &res);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.count, MIB);
    vl_test_result_clear(&res);
    /* Nothing past the failed chunk was written. */
    assert_int_equal(ct_size(t, 1, "dst"), MIB);
    ct_check(t, 1, "dst", 0, 0, MIB);

    /* The first chunk failing: the error itself. */
    req = vl_req_new(t->dht, VL_FOP_COPY_FILE_RANGE);
    VL_ARGS(req, copy_file_range)->fd_in = in;
    VL_ARGS(req, copy_file_range)->fd_out = out;
    VL_ARGS(req, copy_file_range)->len = 100;
    vl_test_wind(req, &res);
    ct_answer_read(ct_pop_read(t, 0), 0, -EIO);
    ct_wait(t, &res);
    assert_int_equal(res.status, -EIO);
    vl_test_result_clear(&res);

    /* A moved source before any byte: EXDEV (the caller copies). */
    req = vl_req_new(t->dht, VL_FOP_COPY_FILE_RANGE);
    VL_ARGS(req, copy_file_range)->fd_in = in;
    VL_ARGS(req, copy_file_range)->fd_out = out;
    VL_ARGS(req, copy_file_range)->len = 100;
    vl_test_wind(req, &res);
    ct_answer_read(ct_pop_read(t, 0), 0, -EREMCHG);
    ct_wait(t, &res);
    assert_int_equal(res.status, -EXDEV);
    vl_test_result_clear(&res);
    vl_fd_unref(out);
    vl_fd_unref(in);
}


/* Answers a write from the mock, checking where it goes. */
static void
ct_answer_write(struct ct *t, off_t offset, size_t size, int64_t count)
{
    vl_req_t *r = vl_mock_pop(t->mock);

    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_WRITE);
    assert_int_equal(VL_ARGS(r, write)->offset, offset);
    assert_int_equal(VL_ARGS(r, write)->n_iov, 1);
    assert_int_equal(VL_ARGS(r, write)->iov[0].iov_len, size);
    assert_int_equal(((char *)VL_ARGS(r, write)->iov[0].iov_base)[0],
                     ct_byte((size_t)offset - 10));
    r->reply.count = count;
    vl_unwind(r, 0);
}


static void
test_short_write_ends_the_count(void **state)
{
    struct ct *t = *state;
    vl_fd_t *in = ct_file(t, 0, "src", 2 * MIB + 10, O_RDONLY);
    vl_fd_t *out = ct_mock_fd(t, O_WRONLY);
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(t->dht, VL_FOP_COPY_FILE_RANGE);

    VL_ARGS(req, copy_file_range)->fd_in = in;
    VL_ARGS(req, copy_file_range)->fd_out = out;
    VL_ARGS(req, copy_file_range)->off_out = 10;
    VL_ARGS(req, copy_file_range)->len = 3 * MIB;
    vl_test_wind(req, &res);
    /* posix read the three chunks at once: three writes, in order. */
    assert_int_equal(vl_mock_pending(t->mock), 3);
    assert_int_equal(vl_mock_received_op(t->mock, VL_FOP_WRITE), 3);
    ct_answer_write(t, 10, MIB, MIB);
    /* The second is short: the count ends inside it, whatever the
     * third does. */
    ct_answer_write(t, 10 + MIB, MIB, 100);
    assert_false(res.is_done);
    ct_answer_write(t, 10 + 2 * MIB, 10, 10);
    ct_wait(t, &res);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.count, MIB + 100);
    vl_test_result_clear(&res);
    assert_int_equal(vl_mock_received_op(t->mock, VL_FOP_READ), 0);
    vl_fd_unref(out);
    vl_fd_unref(in);
}


static void
test_refused_before_asking(void **state)
{
    struct ct *t = *state;
    vl_fd_t *in = ct_file(t, 0, "src", 100, O_RDONLY);
    vl_fd_t *out = ct_file(t, 1, "dst", 0, O_WRONLY);
    vl_fd_t *app = ct_file(t, 1, "app", 0, O_WRONLY | O_APPEND);
    vl_fd_t *down = ct_mock_fd(t, O_WRONLY);
    struct dist_priv *priv = dist_priv(t->dht);
    int64_t n;

    assert_int_equal(ct_copy(t, in, 0, out, 0, 10, 1, &n), -EINVAL);
    assert_int_equal(ct_copy(t, in, -1, out, 0, 10, 0, &n), -EINVAL);
    assert_int_equal(ct_copy(t, in, 0, app, 0, 10, 0, &n), -EBADF);
    assert_int_equal(ct_copy(t, out, 0, in, 0, 10, 0, &n), -EBADF);
    /* The mock's subvolume down: ENOTCONN, nobody asked. */
    pthread_mutex_lock(&priv->lock);
    priv->is_local[2] = false;
    priv->is_up[2] = false;
    pthread_mutex_unlock(&priv->lock);
    assert_int_equal(ct_copy(t, in, 0, down, 0, 10, 0, &n), -ENOTCONN);
    assert_int_equal(vl_mock_received(t->mock), 0);
    assert_int_equal(ct_size(t, 1, "dst"), 0);
    assert_int_equal(ct_size(t, 1, "app"), 0);
    vl_fd_unref(down);
    vl_fd_unref(app);
    vl_fd_unref(out);
    vl_fd_unref(in);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_across_subvolumes_copies,
                                        ct_setup, ct_teardown),
        cmocka_unit_test_setup_teardown(test_one_subvolume_passes_down,
                                        ct_setup, ct_teardown),
        cmocka_unit_test_setup_teardown(
            test_error_midway_gives_partial_count, ct_setup, ct_teardown),
        cmocka_unit_test_setup_teardown(test_short_write_ends_the_count,
                                        ct_setup, ct_teardown),
        cmocka_unit_test_setup_teardown(test_refused_before_asking,
                                        ct_setup, ct_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("dist-copy", tests, NULL, NULL);
}
