/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-write-behind: performance/write-behind over a counting pass-through
 * (its release hook says when the child's fd is dropped) over debug/mock,
 * which holds every request until the test answers it. Checks: the early
 * answer comes before the child's; writes reach the child in order and
 * overlapping ones wait; a read after a write waits for it; a failed early
 * write is returned once by the next flush or fsync; a full window makes
 * the writer wait; O_SYNC and setuid files are written through; release
 * of an fd with writes pending waits for them; contiguous small writes
 * made while a write is in flight reach the child as one WRITE of up to
 * aggregate-size bytes (same fd only), and a read waits for them; a
 * listing drops the attributes of files with writes pending meanwhile.
 * setattr-behind: a chmod/chown/utimes of an open file is answered at
 * once with predicted attributes and reaches the child in order; every
 * case the brick could answer otherwise waits; a failure is returned by
 * the next flush, once. Errors of early writes (issue 20): the next
 * write and fsync both report one; early writes queued behind a failed
 * one are failed, not sent; a failure met after a flush-behind is
 * reported to the next fsync or flush, also across a reconnect; a
 * child's ENOSYS to fsync does not hide it, nor is one reported as ENOSYS.
 */
#include "config.h"

#include <errno.h>
#include <dirent.h>
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

/* ---- a pass-through that counts releases ---- */

static int t_n_release;

static void
t_count_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    (void)xl;
    (void)fd;
    t_n_release++;
}

static const vl_xlator_class_t t_count_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/count",
    .prefix = "count",
    .flags = VL_XL_ONE_CHILD,
    .fd_ctx_size = 8,
    .release = t_count_release,
    .doc = "Counts releases.",
};

/* ---- fixture ---- */

struct t_env {
    struct vl_test_graph *g; /* wb -> count -> mock */
    vl_xlator_t *mock;       /* borrowed from g */
    vl_xlator_t *wb;         /* borrowed from g */
    vl_inode_t *file;        /* owned ref */
    vl_fd_t *fd;             /* owned ref, O_RDWR */
    struct iovec iov[16];    /* the callers' write data (owned base), kept
                                until the end: a write answered by the
                                child borrows it until then */
    int n_iov;               /* used entries of iov */
    vl_req_t *pending_readdir; /* a READDIR held at the mock (t_readdir) */
};

static struct t_env *
t_env_new(const char *wb_opts)
{
    struct t_env *e = calloc(1, sizeof(*e));
    char text[1024];
    vl_err_t err;
    vl_gfid_t gfid;

    assert_non_null(e);
    vl_registry_add(&xl_performance_write_behind);
    vl_registry_add(&t_count_class);
    snprintf(text, sizeof(text),
             "volume m\n type debug/mock\nend-volume\n"
             "volume c\n type test/count\n subvolumes m\nend-volume\n"
             "volume wb\n type performance/write-behind\n%s"
             " subvolumes c\nend-volume\n", wb_opts);
    e->g = vl_test_graph_new(text, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->mock = vl_test_graph_xl(e->g, "m");
    e->wb = vl_test_graph_xl(e->g, "wb");
    vl_gfid_generate(&gfid);
    e->file = vl_inode_get(e->g->graph->itable, &gfid, S_IFREG);
    e->fd = vl_fd_new(e->file, O_RDWR, 1);
    assert_non_null(e->fd);
    t_n_release = 0;
    return e;
}


static void
t_env_free(struct t_env *e)
{
    vl_fd_unref(e->fd);
    vl_inode_unref(e->file);
    vl_test_graph_free(e->g);
    for (int i = 0; i < e->n_iov; i++)
        free(e->iov[i].iov_base);
    free(e);
}


/* Pops the oldest request at the mock, checks its fop. */
static vl_req_t *
t_pop(struct t_env *e, vl_fop_t op)
{
    vl_req_t *r = vl_mock_pop(e->mock);

    assert_non_null(r);
    assert_int_equal(r->op, op);
    return r;
}


/* A STAT answered with mode, so write-behind knows the file's mode. */
static void
t_stat(struct t_env *e, uint32_t mode)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_STAT);
    vl_req_t *r;

    VL_ARGS(req, stat)->loc.inode = e->file;
    vl_test_wind(req, &res);
    r = t_pop(e, VL_FOP_STAT);
    r->reply.iatt.mode = mode;
    vl_unwind(r, 0);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
}


/* Winds a WRITE of len bytes of byte c at off on fd. */
static void
t_write(struct t_env *e, vl_fd_t *fd, off_t off, size_t len, char c,
        struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_WRITE);
    struct iovec *iov;

    assert_true(e->n_iov < 16);
    iov = &e->iov[e->n_iov++];
    iov->iov_base = malloc(len);
    iov->iov_len = len;
    assert_non_null(iov->iov_base);
    memset(iov->iov_base, c, len);
    VL_ARGS(req, write)->fd = fd;
    VL_ARGS(req, write)->iov = iov;
    VL_ARGS(req, write)->n_iov = 1;
    VL_ARGS(req, write)->offset = off;
    vl_test_wind(req, res);
    /* Answered early, the caller may reuse its buffer at once. */
    if (res->is_done)
        memset(iov->iov_base, 'X', len);
}


/* Answers a WRITE at the mock in full (or with status). */
static void
t_answer_write(vl_req_t *r, int status)
{
    struct vl_write_args *a = VL_ARGS(r, write);
    size_t len = 0;

    for (int i = 0; i < a->n_iov; i++)
        len += a->iov[i].iov_len;
    r->reply.count = status == 0 ? (int64_t)len : 0;
    r->reply.iatt.mode = S_IFREG | 0644;
    vl_unwind(r, status);
}


/* Answers whatever the mock holds: a WRITE in full, others with 0. */
static void
t_answer_write_or_any(vl_req_t *r)
{
    if (r->op == VL_FOP_WRITE)
        t_answer_write(r, 0);
    else
        vl_unwind(r, 0);
}


static void
t_fd_op(struct t_env *e, vl_fop_t op, struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, op);

    if (op == VL_FOP_FLUSH)
        VL_ARGS(req, flush)->fd = e->fd;
    else if (op == VL_FOP_FSYNC)
        VL_ARGS(req, fsync)->fd = e->fd;
    else if (op == VL_FOP_READ) {
        VL_ARGS(req, read)->fd = e->fd;
        VL_ARGS(req, read)->size = 4096;
    } else if (op == VL_FOP_RCHECKSUM) {
        VL_ARGS(req, rchecksum)->fd = e->fd;
        VL_ARGS(req, rchecksum)->len = 65536;
        VL_ARGS(req, rchecksum)->block_size = 4096;
    }
    vl_test_wind(req, res);
}


/* ---- tests ---- */

static void
test_class(void **state)
{
    vl_err_t err;

    (void)state;
    if (vl_test_check_class(&xl_performance_write_behind, &err) != 0)
        fail_msg("%s", err.msg);
}


/* The caller is answered before the child, with the full count, and the
 * child gets the data although the caller's buffer was overwritten. */
static void
test_early_answer(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_req_t *r;
    const char *p;

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 5000, 'a', &res);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.count, 5000);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    r = t_pop(e, VL_FOP_WRITE);
    assert_int_equal(VL_ARGS(r, write)->offset, 0);
    assert_int_equal(VL_ARGS(r, write)->iov[0].iov_len, 5000);
    p = VL_ARGS(r, write)->iov[0].iov_base;
    for (int i = 0; i < 5000; i++)
        assert_int_equal(p[i], 'a');
    t_answer_write(r, 0);
    assert_int_equal(res.n_done, 1);
    vl_test_result_clear(&res);
    t_env_free(e);
}


/* Early writes go down one at a time, in arrival order, whether they
 * overlap or not: a later one leaves only once the earlier was answered
 * (so a failure can still stop it, test_error_fails_queued). */
static void
test_order(void **state)
{
    struct t_env *e = t_env_new(" option aggregate-size 0\n");
    struct vl_test_result res[3] = {{0}};
    vl_req_t *a, *b, *c;

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 4096, 'a', &res[0]);
    t_write(e, e->fd, 4096, 4096, 'b', &res[1]);
    t_write(e, e->fd, 100, 10, 'c', &res[2]);
    for (int i = 0; i < 3; i++)
        assert_true(res[i].is_done);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    a = t_pop(e, VL_FOP_WRITE);
    assert_int_equal(VL_ARGS(a, write)->offset, 0);
    t_answer_write(a, 0);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    b = t_pop(e, VL_FOP_WRITE);
    assert_int_equal(VL_ARGS(b, write)->offset, 4096);
    t_answer_write(b, 0);
    c = t_pop(e, VL_FOP_WRITE);
    assert_int_equal(VL_ARGS(c, write)->offset, 100);
    assert_int_equal(((char *)VL_ARGS(c, write)->iov[0].iov_base)[0], 'c');
    t_answer_write(c, 0);
    for (int i = 0; i < 3; i++)
        vl_test_result_clear(&res[i]);
    t_env_free(e);
}


/* A read after a write waits until the write was acknowledged; a write
 * after the read waits for the read. */
static void
test_read_waits(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result w = {0}, rd = {0}, w2 = {0};
    vl_req_t *r;

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 100, 'a', &w);
    t_fd_op(e, VL_FOP_READ, &rd);
    t_write(e, e->fd, 1000, 100, 'b', &w2);
    assert_false(rd.is_done);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    r = t_pop(e, VL_FOP_WRITE);
    t_answer_write(r, 0);
    r = t_pop(e, VL_FOP_READ);
    assert_int_equal(vl_mock_pending(e->mock), 0); /* w2 waits too */
    vl_unwind(r, 0);
    assert_true(rd.is_done);
    r = t_pop(e, VL_FOP_WRITE);
    assert_int_equal(VL_ARGS(r, write)->offset, 1000);
    t_answer_write(r, 0);
    vl_test_result_clear(&w);
    vl_test_result_clear(&rd);
    vl_test_result_clear(&w2);
    t_env_free(e);
}


/* A listing read while a write of a file was pending (answered early,
 * not yet by the child) carries the file's attributes from before it:
 * they are dropped (so the kernel looks the file up, which waits), as
 * when the write was answered by the child only after the listing went
 * down; another file's, and the file's in a listing that went down once
 * its writes were done, are kept. */
static void
t_readdir(struct t_env *e, const vl_gfid_t *other,
          struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_READDIR);
    struct vl_iatt ia = {0};

    VL_ARGS(req, readdir)->plus = true;
    vl_test_wind(req, res);
    assert_false(res->is_done);
    e->pending_readdir = t_pop(e, VL_FOP_READDIR);
    ia.gfid = e->file->gfid;
    ia.mode = S_IFREG | 0644;
    assert_int_equal(vl_dirent_list_add(&e->pending_readdir->reply.entries,
                                        1, 1, DT_REG, "file", &ia), 0);
    e->pending_readdir->reply.entries.ents[0].has_content = true;
    ia.gfid = *other;
    assert_int_equal(vl_dirent_list_add(&e->pending_readdir->reply.entries,
                                        2, 2, DT_REG, "other", &ia), 0);
}


static void
test_readdir_drops_pending_attrs(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result w = {0}, rd = {0};
    vl_inode_t *other;
    vl_gfid_t og;
    vl_req_t *r;

    (void)state;
    vl_gfid_generate(&og);
    other = vl_inode_get(e->g->graph->itable, &og, S_IFREG);
    t_stat(e, S_IFREG | 0644);

    /* Pending when the listing comes back. */
    t_write(e, e->fd, 0, 4, 'a', &w);
    assert_true(w.is_done);
    r = t_pop(e, VL_FOP_WRITE); /* held: the write is in flight */
    t_readdir(e, &og, &rd);
    vl_unwind(e->pending_readdir, 0);
    assert_true(rd.is_done);
    assert_int_equal(rd.reply.entries.n, 2);
    assert_false(rd.reply.entries.ents[0].has_iatt);
    assert_false(rd.reply.entries.ents[0].has_content);
    assert_true(rd.reply.entries.ents[1].has_iatt);
    vl_test_result_clear(&rd);

    /* Pending when it went down, done before it came back. */
    t_readdir(e, &og, &rd);
    t_answer_write(r, 0);
    vl_unwind(e->pending_readdir, 0);
    assert_false(rd.reply.entries.ents[0].has_iatt);
    assert_true(rd.reply.entries.ents[1].has_iatt);
    vl_test_result_clear(&rd);

    /* Nothing pending since it went down: kept. */
    t_readdir(e, &og, &rd);
    vl_unwind(e->pending_readdir, 0);
    assert_true(rd.reply.entries.ents[0].has_iatt);
    assert_true(rd.reply.entries.ents[0].has_content);
    assert_true(rd.reply.entries.ents[1].has_iatt);
    vl_test_result_clear(&rd);

    vl_test_result_clear(&w);
    vl_inode_unref(other);
    t_env_free(e);
}


/* Heal's block digests see this client's writes: an RCHECKSUM goes down
 * only once the early write before it was answered. */
static void
test_rchecksum_waits(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result w = {0}, rc = {0};
    vl_req_t *r;

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 100, 'a', &w);
    assert_true(w.is_done); /* answered early */
    t_fd_op(e, VL_FOP_RCHECKSUM, &rc);
    assert_false(rc.is_done);
    assert_int_equal(vl_mock_pending(e->mock), 1); /* the write alone */
    r = t_pop(e, VL_FOP_WRITE);
    t_answer_write(r, 0);
    r = t_pop(e, VL_FOP_RCHECKSUM);
    vl_unwind(r, 0);
    assert_true(rc.is_done);
    vl_test_result_clear(&w);
    vl_test_result_clear(&rc);
    t_env_free(e);
}


/* A failed early write: the next flush returns its error, once; the
 * fd's next write returns it too (its own report, once); the fd then
 * writes through. */
static void
test_error_on_flush(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result w = {0}, f1 = {0}, f2 = {0}, w2 = {0}, w3 = {0};

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 100, 'a', &w);
    assert_true(w.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), -ENOSPC);
    t_fd_op(e, VL_FOP_FLUSH, &f1);
    assert_true(f1.is_done);
    assert_int_equal(f1.status, -ENOSPC);
    t_fd_op(e, VL_FOP_FLUSH, &f2);
    assert_true(f2.is_done);
    assert_int_equal(f2.status, 0);
    t_write(e, e->fd, 0, 100, 'a', &w2);
    assert_true(w2.is_done);
    assert_int_equal(w2.status, -ENOSPC);
    assert_int_equal(vl_mock_pending(e->mock), 0);
    t_write(e, e->fd, 0, 100, 'a', &w3);
    assert_false(w3.is_done); /* no longer behind */
    t_answer_write(t_pop(e, VL_FOP_WRITE), 0);
    assert_true(w3.is_done);
    assert_int_equal(w3.reply.count, 100);
    vl_test_result_clear(&w);
    vl_test_result_clear(&f1);
    vl_test_result_clear(&f2);
    vl_test_result_clear(&w2);
    vl_test_result_clear(&w3);
    t_env_free(e);
}


/* fsync waits for the pending write and reports its failure. */
static void
test_error_on_fsync(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result w = {0}, s = {0};
    vl_req_t *r;

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 100, 'a', &w);
    t_fd_op(e, VL_FOP_FSYNC, &s);
    assert_false(s.is_done);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    t_answer_write(t_pop(e, VL_FOP_WRITE), -EIO);
    r = vl_mock_pop(e->mock);
    if (r != NULL) { /* the fsync went down after the write */
        assert_int_equal(r->op, VL_FOP_FSYNC);
        vl_unwind(r, 0);
    }
    assert_true(s.is_done);
    assert_int_equal(s.status, -EIO);
    vl_test_result_clear(&w);
    vl_test_result_clear(&s);
    t_env_free(e);
}


/* With flush-behind off, FLUSH waits for the pending writes. */
static void
test_flush_waits_when_off(void **state)
{
    struct t_env *e = t_env_new(" option flush-behind off\n");
    struct vl_test_result w = {0}, f = {0};

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 100, 'a', &w);
    t_fd_op(e, VL_FOP_FLUSH, &f);
    assert_false(f.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), 0);
    vl_unwind(t_pop(e, VL_FOP_FLUSH), 0);
    assert_true(f.is_done);
    assert_int_equal(f.status, 0);
    vl_test_result_clear(&w);
    vl_test_result_clear(&f);
    t_env_free(e);
}


/* A write that does not fit in the window waits for the child. */
static void
test_window_full(void **state)
{
    struct t_env *e = t_env_new(" option window-size 512KiB\n");
    struct vl_test_result w1 = {0}, w2 = {0}, w3 = {0};

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 300 * 1024, 'a', &w1);
    t_write(e, e->fd, 300 * 1024, 300 * 1024, 'b', &w2);
    assert_true(w1.is_done);
    assert_false(w2.is_done);
    /* w2 waits for the child, and behind the early w1. */
    assert_int_equal(vl_mock_pending(e->mock), 1);
    t_answer_write(t_pop(e, VL_FOP_WRITE), 0);
    assert_false(w2.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), 0);
    assert_true(w2.is_done);
    assert_int_equal(w2.reply.count, 300 * 1024);
    /* The window is empty again. */
    t_write(e, e->fd, 0, 300 * 1024, 'c', &w3);
    assert_true(w3.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), 0);
    vl_test_result_clear(&w1);
    vl_test_result_clear(&w2);
    vl_test_result_clear(&w3);
    t_env_free(e);
}


/* O_SYNC fds, setuid files and files of unknown mode are written
 * through: the caller gets the child's answer. */
static void
test_write_through(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result w = {0};
    vl_fd_t *sync_fd;

    (void)state;
    /* Mode not known yet. */
    t_write(e, e->fd, 0, 10, 'a', &w);
    assert_false(w.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), 0);
    assert_true(w.is_done);
    vl_test_result_clear(&w);

    /* O_SYNC. */
    t_stat(e, S_IFREG | 0644);
    sync_fd = vl_fd_new(e->file, O_RDWR | O_SYNC, 1);
    t_write(e, sync_fd, 0, 10, 'a', &w);
    assert_false(w.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), 0);
    assert_true(w.is_done);
    vl_test_result_clear(&w);
    vl_fd_unref(sync_fd);

    /* setuid. */
    t_stat(e, S_IFREG | S_ISUID | 0755);
    t_write(e, e->fd, 0, 10, 'a', &w);
    assert_false(w.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), 0);
    assert_true(w.is_done);
    vl_test_result_clear(&w);
    t_env_free(e);
}


/* The caller drops its fd with a write pending: the child's fd is
 * released only after the write was answered. */
static void
test_release_waits(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result w = {0}, f = {0};
    vl_req_t *r;

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 10, 'a', &w);
    t_fd_op(e, VL_FOP_FLUSH, &f);
    assert_true(f.is_done); /* flush-behind */
    vl_fd_unref(e->fd);
    e->fd = NULL;
    assert_int_equal(t_n_release, 0);
    r = t_pop(e, VL_FOP_WRITE);
    assert_int_equal(VL_ARGS(r, write)->fd->inode, e->file);
    t_answer_write(r, 0);
    assert_int_equal(t_n_release, 1);
    vl_test_result_clear(&w);
    vl_test_result_clear(&f);
    t_env_free(e);
}


/* Winds an early WRITE of len bytes of byte c at off on fd (the data is
 * copied by write-behind: buf is reused) and checks it was answered. */
static void
t_write_early(struct t_env *e, vl_fd_t *fd, off_t off, size_t len, char c)
{
    static char buf[64 * 1024];
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_WRITE);

    assert_true(len <= sizeof(buf));
    memset(buf, c, len);
    VL_ARGS(req, write)->fd = fd;
    VL_ARGS(req, write)->iov = &iov;
    VL_ARGS(req, write)->n_iov = 1;
    VL_ARGS(req, write)->offset = off;
    vl_test_wind(req, &res);
    assert_true(res.is_done);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.count, (int64_t)len);
    memset(buf, 'X', len);
    vl_test_result_clear(&res);
}


/* Checks a WRITE at the mock: offset, length, and 4 KiB chunks filled
 * with 'A' + chunk number from first_chunk on. */
static void
t_check_agg(vl_req_t *r, off_t off, size_t len, int first_chunk)
{
    const struct vl_write_args *a = VL_ARGS(r, write);
    const char *p;

    assert_int_equal(a->n_iov, 1);
    assert_int_equal(a->offset, off);
    assert_int_equal(a->iov[0].iov_len, len);
    p = a->iov[0].iov_base;
    for (size_t i = 0; i < len; i++)
        assert_int_equal(p[i], (char)('A' + (first_chunk + i / 4096) % 50));
}


/* A writer of 4 KiB writes: the first goes at once; the next 32 arrive
 * while it is in flight and reach the child as one 128 KiB WRITE when it
 * was answered, the 34th as a second WRITE; a write elsewhere in the
 * file joins none and goes last. */
static void
test_aggregate(void **state)
{
    struct t_env *e = t_env_new("");
    vl_req_t *r, *far, *agg1, *agg2;
    char dump[4096];
    FILE *f;

    (void)state;
    t_stat(e, S_IFREG | 0644);
    for (int i = 0; i < 34; i++)
        t_write_early(e, e->fd, (off_t)i * 4096, 4096,
                      (char)('A' + i % 50));
    assert_int_equal(vl_mock_pending(e->mock), 1);
    t_write_early(e, e->fd, 1024 * 1024, 100, 'z');
    assert_int_equal(vl_mock_pending(e->mock), 1);
    r = t_pop(e, VL_FOP_WRITE);
    t_check_agg(r, 0, 4096, 0);
    t_answer_write(r, 0);
    agg1 = t_pop(e, VL_FOP_WRITE);
    t_check_agg(agg1, 4096, 128 * 1024, 1);
    assert_int_equal(vl_mock_pending(e->mock), 0);
    t_answer_write(agg1, 0);
    agg2 = t_pop(e, VL_FOP_WRITE);
    t_check_agg(agg2, 33 * 4096, 4096, 33);
    t_answer_write(agg2, 0);
    far = t_pop(e, VL_FOP_WRITE);
    assert_int_equal(VL_ARGS(far, write)->offset, 1024 * 1024);
    t_answer_write(far, 0);
    assert_int_equal(vl_mock_pending(e->mock), 0);

    f = fmemopen(dump, sizeof(dump), "w");
    assert_non_null(f);
    e->wb->cls->dump(e->wb, f);
    fclose(f);
    assert_non_null(strstr(dump, "written_behind=35\n"));
    assert_non_null(strstr(dump, "held=3\n"));
    assert_non_null(strstr(dump, "aggregated=31\n"));
    assert_non_null(strstr(dump, "pending=0\n"));
    t_env_free(e);
}


/* Held writes keep the order rules: a read after them waits until they
 * were answered; another fd's write does not join them; with
 * aggregate-size 0 each write is its own WRITE. */
static void
test_aggregate_order(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result rd = {0};
    vl_fd_t *fd2;
    vl_req_t *r;

    (void)state;
    t_stat(e, S_IFREG | 0644);
    fd2 = vl_fd_new(e->file, O_RDWR, 1);
    assert_non_null(fd2);
    t_write_early(e, e->fd, 0, 4096, 'A');
    t_write_early(e, e->fd, 4096, 4096, 'B');
    t_write_early(e, fd2, 8192, 4096, 'C'); /* queued on its own */
    t_fd_op(e, VL_FOP_READ, &rd);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    t_answer_write(t_pop(e, VL_FOP_WRITE), 0);
    assert_false(rd.is_done);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    r = t_pop(e, VL_FOP_WRITE);
    t_check_agg(r, 4096, 4096, 1);
    t_answer_write(r, 0);
    r = t_pop(e, VL_FOP_WRITE);
    assert_ptr_equal(VL_ARGS(r, write)->fd, fd2);
    t_check_agg(r, 8192, 4096, 2);
    assert_int_equal(vl_mock_pending(e->mock), 0); /* the read waits */
    t_answer_write(r, 0);
    r = t_pop(e, VL_FOP_READ);
    vl_unwind(r, 0);
    assert_true(rd.is_done);
    vl_test_result_clear(&rd);
    vl_fd_unref(fd2);
    t_env_free(e);

    e = t_env_new(" option aggregate-size 0\n");
    t_stat(e, S_IFREG | 0644);
    for (int i = 0; i < 4; i++)
        t_write_early(e, e->fd, (off_t)i * 4096, 4096, 'A');
    for (int i = 0; i < 4; i++) {
        assert_int_equal(vl_mock_pending(e->mock), 1);
        r = t_pop(e, VL_FOP_WRITE);
        assert_int_equal(VL_ARGS(r, write)->offset, (off_t)i * 4096);
        assert_int_equal(VL_ARGS(r, write)->iov[0].iov_len, 4096);
        t_answer_write(r, 0);
    }
    assert_int_equal(vl_mock_pending(e->mock), 0);
    t_env_free(e);
}


/* Every request is answered exactly once when allocations fail: a
 * write, a read waiting for it and a flush, failing the n-th allocation
 * made by write-behind for n = 1, 2, ... */
static void
test_enomem(void **state)
{
    static char data[100];
    struct iovec iov = {.iov_base = data, .iov_len = sizeof(data)};

    (void)state;
    for (long n = 1; n < 200; n++) {
        struct t_env *e = t_env_new("");
        struct vl_test_result res[3] = {{0}};
        vl_req_t *req[3];
        long used;

        t_stat(e, S_IFREG | 0644);
        req[0] = vl_req_new(e->g->graph->top, VL_FOP_WRITE);
        req[1] = vl_req_new(e->g->graph->top, VL_FOP_READ);
        req[2] = vl_req_new(e->g->graph->top, VL_FOP_FLUSH);
        VL_ARGS(req[0], write)->fd = e->fd;
        VL_ARGS(req[0], write)->iov = &iov;
        VL_ARGS(req[0], write)->n_iov = 1;
        VL_ARGS(req[1], read)->fd = e->fd;
        VL_ARGS(req[1], read)->size = 100;
        VL_ARGS(req[2], flush)->fd = e->fd;
        vl_mem_fail_at(n);
        for (int i = 0; i < 3; i++)
            vl_test_wind(req[i], &res[i]);
        used = vl_mem_alloc_count();
        vl_mem_fail_at(0);
        while (vl_mock_pending(e->mock) > 0)
            t_answer_write_or_any(vl_mock_pop(e->mock));
        for (int i = 0; i < 3; i++) {
            assert_true(res[i].is_done);
            assert_int_equal(res[i].n_done, 1);
            vl_test_result_clear(&res[i]);
        }
        t_env_free(e);
        if (used < n)
            break;
    }
}


/* ---- setattr-behind ---- */

/* The option lines that turn it on (the default) and off. */
#define T_SA_ON " option setattr-behind on\n"
#define T_SA_OFF " option setattr-behind off\n"

/* Opens fd through write-behind; the child answers with these attrs. */
static void
t_open(struct t_env *e, vl_fd_t *fd, uint32_t mode, uint32_t uid)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_OPEN);
    vl_req_t *r;

    VL_ARGS(req, open)->loc.inode = e->file;
    VL_ARGS(req, open)->fd = fd;
    VL_ARGS(req, open)->flags = O_RDWR;
    vl_test_wind(req, &res);
    r = t_pop(e, VL_FOP_OPEN);
    r->reply.iatt.mode = mode;
    r->reply.iatt.uid = uid;
    r->reply.iatt.gid = uid;
    r->reply.iatt.nlink = 1;
    vl_unwind(r, 0);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
}


/* Winds a SETATTR by inode from caller uid: mode (VL_SET_MODE), owner
 * (VL_SET_UID) or size (VL_SET_SIZE) set to val. */
static void
t_setattr(struct t_env *e, uint32_t valid, uint64_t val, uint32_t uid,
          struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_SETATTR);
    struct vl_setattr_args *a = VL_ARGS(req, setattr);

    req->caller.uid = uid;
    req->caller.gid = uid;
    a->loc.inode = e->file;
    a->valid = valid;
    a->attr.mode = (uint32_t)val;
    a->attr.uid = (uint32_t)val;
    a->attr.size = val;
    a->attr.mtime = (int64_t)val;
    vl_test_wind(req, res);
}


/* The caller is answered at once with the predicted attributes (chained:
 * the second setattr starts from the first's, the size covers a pending
 * write); the SETATTRs reach the child after the write, by GFID, the
 * second folded into the first while that one still waited (one
 * SETATTR with both changes), a third one after the first went down on
 * its own; a stat waits for them. A reply older than the prediction does
 * not undo it. */
static void
test_setattr_behind(void **state)
{
    struct t_env *e = t_env_new(T_SA_ON);
    struct vl_test_result w = {0}, s1 = {0}, s2 = {0}, s3 = {0}, st = {0};
    vl_req_t *r;

    (void)state;
    t_open(e, e->fd, S_IFREG | 0644, 1000);
    t_write(e, e->fd, 0, 100, 'a', &w);
    assert_true(w.is_done);
    t_setattr(e, VL_SET_MODE, 0600, 0, &s1);
    assert_true(s1.is_done);
    assert_int_equal(s1.status, 0);
    assert_int_equal(s1.reply.iatt.mode, S_IFREG | 0600);
    assert_int_equal(s1.reply.iatt.uid, 1000);
    assert_int_equal(s1.reply.iatt.size, 100);
    t_setattr(e, VL_SET_UID | VL_SET_MTIME, 42, 0, &s2);
    assert_true(s2.is_done);
    assert_int_equal(s2.reply.iatt.mode, S_IFREG | 0600);
    assert_int_equal(s2.reply.iatt.uid, 42);
    assert_int_equal(s2.reply.iatt.mtime, 42);
    assert_int_equal(vl_mock_pending(e->mock), 1); /* the write only */
    r = t_pop(e, VL_FOP_WRITE);
    t_answer_write(r, 0); /* mode 0644 uid 0: older than the prediction */
    r = t_pop(e, VL_FOP_SETATTR);
    assert_int_equal(VL_ARGS(r, setattr)->valid,
                     VL_SET_MODE | VL_SET_UID | VL_SET_MTIME);
    assert_int_equal(VL_ARGS(r, setattr)->attr.mode, 0600);
    assert_int_equal(VL_ARGS(r, setattr)->attr.uid, 42);
    assert_int_equal(VL_ARGS(r, setattr)->attr.mtime, 42);
    assert_ptr_equal(VL_ARGS(r, setattr)->loc.inode, e->file);
    assert_null(VL_ARGS(r, setattr)->loc.name);
    assert_int_equal(r->caller.uid, 0);
    assert_int_equal(vl_mock_pending(e->mock), 0); /* one at a time */
    /* Gone down: the next one cannot join it, and waits for it. */
    t_setattr(e, VL_SET_MODE, 0640, 0, &s3);
    assert_true(s3.is_done);
    assert_int_equal(s3.reply.iatt.mode, S_IFREG | 0640);
    assert_int_equal(s3.reply.iatt.uid, 42);
    assert_int_equal(vl_mock_pending(e->mock), 0);
    {
        vl_req_t *sr = vl_req_new(e->g->graph->top, VL_FOP_STAT);

        VL_ARGS(sr, stat)->loc.inode = e->file;
        vl_test_wind(sr, &st);
        assert_false(st.is_done);
    }
    r->reply.iatt.mode = S_IFREG | 0600;
    r->reply.iatt.uid = 42;
    vl_unwind(r, 0);
    assert_false(st.is_done);
    r = t_pop(e, VL_FOP_SETATTR);
    assert_int_equal(VL_ARGS(r, setattr)->valid, VL_SET_MODE);
    assert_int_equal(VL_ARGS(r, setattr)->attr.mode, 0640);
    r->reply.iatt.mode = S_IFREG | 0640;
    r->reply.iatt.uid = 42;
    vl_unwind(r, 0);
    vl_unwind(t_pop(e, VL_FOP_STAT), 0);
    assert_true(st.is_done);
    vl_test_result_clear(&s3);
    vl_test_result_clear(&w);
    vl_test_result_clear(&s1);
    vl_test_result_clear(&s2);
    vl_test_result_clear(&st);
    t_env_free(e);
}


/* Waits for the child (goes down at once) in every case the brick might
 * answer otherwise than predicted, or with the option off. */
static void
test_setattr_through(void **state)
{
    static const struct {
        const char *opts;
        bool is_open;
        uint32_t file_mode;
        uint32_t valid;
        uint64_t val;
        uint32_t uid;
    } cases[] = {
        /* not open; truncate; setuid asked; was setgid; not the owner; a
         * user's chown; a directory; the option off */
        {T_SA_ON, false, S_IFREG | 0644, VL_SET_MODE, 0600, 0},
        {T_SA_ON, true, S_IFREG | 0644, VL_SET_SIZE, 10, 0},
        {T_SA_ON, true, S_IFREG | 0644, VL_SET_MODE, 04755, 0},
        {T_SA_ON, true, S_IFREG | 02755, VL_SET_MODE, 0755, 0},
        {T_SA_ON, true, S_IFREG | 0644, VL_SET_MODE, 0600, 7},
        {T_SA_ON, true, S_IFREG | 0644, VL_SET_UID, 1000, 1000},
        {T_SA_ON, true, S_IFDIR | 0755, VL_SET_MODE, 0700, 0},
        {T_SA_OFF, true, S_IFREG | 0644, VL_SET_MODE, 0600, 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct t_env *e = t_env_new(cases[i].opts);
        struct vl_test_result s = {0};
        vl_req_t *r;

        if (cases[i].is_open)
            t_open(e, e->fd, cases[i].file_mode, 1000);
        else
            t_stat(e, cases[i].file_mode);
        t_setattr(e, cases[i].valid, cases[i].val, cases[i].uid, &s);
        if (s.is_done)
            fail_msg("case %zu answered early", i);
        r = t_pop(e, VL_FOP_SETATTR);
        vl_unwind(r, -EPERM);
        assert_true(s.is_done);
        assert_int_equal(s.status, -EPERM);
        vl_test_result_clear(&s);
        t_env_free(e);
    }
}


/* A failed SETATTR answered early: the next flush returns it once, a
 * setattr meanwhile waits for the child, and afterwards they are early
 * again. A file removed meanwhile (ENOENT) is no error. Once the only
 * fd is released, setattrs wait for the child. */
static void
test_setattr_behind_error(void **state)
{
    struct t_env *e = t_env_new(T_SA_ON);
    struct vl_test_result s1 = {0}, s2 = {0}, s3 = {0}, f1 = {0}, f2 = {0};
    struct vl_test_result s4 = {0}, f3 = {0};
    vl_fd_t *fd2;
    vl_req_t *r;

    (void)state;
    fd2 = vl_fd_new(e->file, O_RDWR, 1);
    assert_non_null(fd2);
    t_open(e, fd2, S_IFREG | 0644, 1000);
    t_setattr(e, VL_SET_MODE, 0600, 0, &s1);
    assert_true(s1.is_done);
    vl_unwind(t_pop(e, VL_FOP_SETATTR), -EROFS);
    t_setattr(e, VL_SET_MODE, 0640, 0, &s2);
    assert_false(s2.is_done); /* an error is unreported */
    r = t_pop(e, VL_FOP_SETATTR);
    r->reply.iatt.mode = S_IFREG | 0640;
    vl_unwind(r, 0);
    assert_true(s2.is_done);
    t_fd_op(e, VL_FOP_FLUSH, &f1);
    assert_true(f1.is_done);
    assert_int_equal(f1.status, -EROFS);
    t_fd_op(e, VL_FOP_FLUSH, &f2);
    assert_int_equal(f2.status, 0);
    t_setattr(e, VL_SET_MODE, 0600, 0, &s3);
    assert_true(s3.is_done);
    vl_unwind(t_pop(e, VL_FOP_SETATTR), -ENOENT);
    t_fd_op(e, VL_FOP_FSYNC, &f3);
    vl_unwind(t_pop(e, VL_FOP_FSYNC), 0);
    assert_true(f3.is_done);
    assert_int_equal(f3.status, 0); /* ENOENT was not kept */
    vl_fd_unref(fd2); /* release: no fd of the file is open any more */
    t_stat(e, S_IFREG | 0644);
    t_setattr(e, VL_SET_MODE, 0600, 0, &s4);
    assert_false(s4.is_done);
    vl_unwind(t_pop(e, VL_FOP_SETATTR), 0);
    vl_test_result_clear(&s1);
    vl_test_result_clear(&s2);
    vl_test_result_clear(&s3);
    vl_test_result_clear(&s4);
    vl_test_result_clear(&f1);
    vl_test_result_clear(&f2);
    vl_test_result_clear(&f3);
    t_env_free(e);
}


/* A truncate queued behind a write (its caller waits): a chmod after it
 * is not answered early, since the size it would predict is not known. */
static void
test_setattr_behind_barrier(void **state)
{
    struct t_env *e = t_env_new(T_SA_ON);
    struct vl_test_result w = {0}, tr = {0}, s = {0};

    (void)state;
    t_open(e, e->fd, S_IFREG | 0644, 1000);
    t_write(e, e->fd, 0, 100, 'a', &w);
    t_setattr(e, VL_SET_SIZE, 10, 0, &tr);
    t_setattr(e, VL_SET_MODE, 0600, 0, &s);
    assert_false(tr.is_done);
    assert_false(s.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), 0);
    vl_unwind(t_pop(e, VL_FOP_SETATTR), 0);
    assert_true(tr.is_done);
    vl_unwind(t_pop(e, VL_FOP_SETATTR), 0);
    assert_true(s.is_done);
    vl_test_result_clear(&w);
    vl_test_result_clear(&tr);
    vl_test_result_clear(&s);
    t_env_free(e);
}


/* ---- errors of early writes (issue 20) ---- */

/* Value of key in write-behind's statedump, or -1. */
static long long
t_dump_num(struct t_env *e, const char *key)
{
    char dump[4096];
    char want[64];
    const char *p;
    FILE *f = fmemopen(dump, sizeof(dump), "w");

    assert_non_null(f);
    e->wb->cls->dump(e->wb, f);
    fclose(f);
    snprintf(want, sizeof(want), "\n%s=", key);
    p = strstr(dump, want);
    return p != NULL ? strtoll(p + strlen(want), NULL, 10) : -1;
}


/* Winds an FSYNC (or FLUSH) of fd; a request that reaches the mock is
 * answered with child_status. Returns the caller's status. */
static int
t_sync_op_answer(struct t_env *e, vl_fd_t *fd, vl_fop_t op, int child_status)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, op);
    vl_req_t *r;
    int status;

    if (op == VL_FOP_FSYNC)
        VL_ARGS(req, fsync)->fd = fd;
    else
        VL_ARGS(req, flush)->fd = fd;
    vl_test_wind(req, &res);
    while ((r = vl_mock_pop(e->mock)) != NULL) {
        assert_int_equal(r->op, op);
        vl_unwind(r, child_status);
    }
    assert_true(res.is_done);
    assert_int_equal(res.n_done, 1);
    status = res.status;
    vl_test_result_clear(&res);
    return status;
}


static int
t_sync_op(struct t_env *e, vl_fd_t *fd, vl_fop_t op)
{
    return t_sync_op_answer(e, fd, op, 0);
}


/* The next write reports the failure of an early write, and fsync still
 * does after that (a write's report does not make fsync say 0); fsync
 * reports it once per fd; close after that fsync has nothing to add. */
static void
test_error_write_then_fsync(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result w = {0}, w2 = {0};

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 4096, 'a', &w);
    assert_true(w.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), -ENOSPC);
    t_write(e, e->fd, 4096, 4096, 'b', &w2);
    assert_true(w2.is_done);
    assert_int_equal(w2.status, -ENOSPC);
    assert_int_equal(vl_mock_pending(e->mock), 0); /* not sent */
    assert_int_equal(t_sync_op(e, e->fd, VL_FOP_FSYNC), -ENOSPC);
    assert_int_equal(t_sync_op(e, e->fd, VL_FOP_FSYNC), 0);
    assert_int_equal(t_sync_op(e, e->fd, VL_FOP_FLUSH), 0);
    vl_test_result_clear(&w);
    vl_test_result_clear(&w2);
    t_env_free(e);
}


/* Early writes queued behind one that fails are failed, never sent (so
 * nothing the caller was told is written lands beyond the hole), and so
 * is a write whose caller waits (it gets the error: the fd's write
 * report). fsync reports the failure; the fd writes through after. */
static void
test_error_fails_queued(void **state)
{
    struct t_env *e = t_env_new(" option window-size 512KiB\n"
                                " option aggregate-size 0\n");
    struct vl_test_result w[4] = {{0}}, w5 = {0};
    vl_req_t *a;

    (void)state;
    t_stat(e, S_IFREG | 0644);
    for (int i = 0; i < 3; i++) {
        t_write(e, e->fd, (off_t)i * 100 * 1024, 100 * 1024, 'a', &w[i]);
        assert_true(w[i].is_done);
        assert_int_equal(w[i].status, 0);
    }
    /* Does not fit the window: its caller waits. */
    t_write(e, e->fd, 300 * 1024, 300 * 1024, 'd', &w[3]);
    assert_false(w[3].is_done);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    a = t_pop(e, VL_FOP_WRITE);
    assert_int_equal(VL_ARGS(a, write)->offset, 0);
    /* Short: the file system filled up. */
    a->reply.count = 1000;
    a->reply.iatt.mode = S_IFREG | 0644;
    vl_unwind(a, 0);
    assert_int_equal(vl_mock_pending(e->mock), 0);
    assert_true(w[3].is_done);
    assert_int_equal(w[3].status, -ENOSPC);
    assert_int_equal(t_dump_num(e, "failed_behind"), 3);
    assert_int_equal(t_dump_num(e, "pending"), 0);
    assert_int_equal(t_sync_op(e, e->fd, VL_FOP_FSYNC), -ENOSPC);
    t_write(e, e->fd, 0, 100, 'e', &w5);
    assert_false(w5.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), 0);
    assert_true(w5.is_done);
    assert_int_equal(w5.status, 0);
    for (int i = 0; i < 4; i++)
        vl_test_result_clear(&w[i]);
    vl_test_result_clear(&w5);
    t_env_free(e);
}


/* flush-behind: close() answered 0 before a pending write failed; the
 * failure is not lost: the next fsync of an fd opened after reports it
 * (nobody had seen it), once; a later closer of the first fd (a dup) too;
 * an fd opened once it was seen does not. With flush-behind off, FLUSH
 * waits for the write and returns its failure. A reconnect of the child
 * (CHILD_DOWN, CHILD_UP) does not forget it. */
static void
test_error_across_flush(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result w = {0};
    vl_fd_t *fd2, *fd3;
    vl_req_t *r;

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 4096, 'a', &w);
    assert_true(w.is_done);
    r = t_pop(e, VL_FOP_WRITE);
    assert_int_equal(t_sync_op(e, e->fd, VL_FOP_FLUSH), 0); /* behind */
    t_answer_write(r, -EIO);
    e->wb->cls->notify(e->wb, VL_EV_CHILD_DOWN, e->mock);
    e->wb->cls->notify(e->wb, VL_EV_CHILD_UP, e->mock);
    fd2 = vl_fd_new(e->file, O_RDWR, 1);
    assert_non_null(fd2);
    assert_int_equal(t_sync_op(e, fd2, VL_FOP_FSYNC), -EIO);
    assert_int_equal(t_sync_op(e, fd2, VL_FOP_FSYNC), 0);
    assert_int_equal(t_sync_op(e, fd2, VL_FOP_FLUSH), 0);
    assert_int_equal(t_sync_op(e, e->fd, VL_FOP_FLUSH), -EIO);
    fd3 = vl_fd_new(e->file, O_RDWR, 1);
    assert_non_null(fd3);
    assert_int_equal(t_sync_op(e, fd3, VL_FOP_FSYNC), 0);
    vl_fd_unref(fd3);
    vl_fd_unref(fd2);
    vl_test_result_clear(&w);
    t_env_free(e);

    e = t_env_new(" option flush-behind off\n");
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 4096, 'a', &w);
    assert_true(w.is_done);
    {
        struct vl_test_result f = {0};
        vl_req_t *fl = vl_req_new(e->g->graph->top, VL_FOP_FLUSH);

        VL_ARGS(fl, flush)->fd = e->fd;
        vl_test_wind(fl, &f);
        assert_false(f.is_done);
        t_answer_write(t_pop(e, VL_FOP_WRITE), -ENOTCONN);
        vl_unwind(t_pop(e, VL_FOP_FLUSH), 0);
        assert_true(f.is_done);
        assert_int_equal(f.status, -ENOTCONN);
        vl_test_result_clear(&f);
    }
    vl_test_result_clear(&w);
    t_env_free(e);
}


/* ENOSYS never carries or hides a failure to FLUSH or FSYNC (the kernel
 * would stop sending them and answer 0): an fsync whose child has no
 * fsync (ENOSYS) still reports the failed early write; an early write
 * that failed with ENOSYS is reported as EIO. */
static void
test_error_over_enosys(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result w = {0}, w2 = {0};

    (void)state;
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 4096, 'a', &w);
    assert_true(w.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), -EIO);
    assert_int_equal(t_sync_op_answer(e, e->fd, VL_FOP_FSYNC, -ENOSYS),
                     -EIO);
    /* Nothing left to report: the child's answer as it is. */
    assert_int_equal(t_sync_op_answer(e, e->fd, VL_FOP_FSYNC, -ENOSYS),
                     -ENOSYS);
    vl_test_result_clear(&w);
    t_env_free(e);

    e = t_env_new("");
    t_stat(e, S_IFREG | 0644);
    t_write(e, e->fd, 0, 4096, 'b', &w2);
    assert_true(w2.is_done);
    t_answer_write(t_pop(e, VL_FOP_WRITE), -ENOSYS);
    assert_int_equal(t_sync_op(e, e->fd, VL_FOP_FLUSH), -EIO); /* behind */
    vl_test_result_clear(&w2);
    t_env_free(e);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class),
        cmocka_unit_test(test_early_answer),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_read_waits),
        cmocka_unit_test(test_readdir_drops_pending_attrs),
        cmocka_unit_test(test_rchecksum_waits),
        cmocka_unit_test(test_error_on_flush),
        cmocka_unit_test(test_error_on_fsync),
        cmocka_unit_test(test_flush_waits_when_off),
        cmocka_unit_test(test_window_full),
        cmocka_unit_test(test_write_through),
        cmocka_unit_test(test_release_waits),
        cmocka_unit_test(test_enomem),
        cmocka_unit_test(test_aggregate),
        cmocka_unit_test(test_aggregate_order),
        cmocka_unit_test(test_setattr_behind),
        cmocka_unit_test(test_setattr_through),
        cmocka_unit_test(test_setattr_behind_error),
        cmocka_unit_test(test_setattr_behind_barrier),
        cmocka_unit_test(test_error_write_then_fsync),
        cmocka_unit_test(test_error_fails_queued),
        cmocka_unit_test(test_error_across_flush),
        cmocka_unit_test(test_error_over_enosys),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
