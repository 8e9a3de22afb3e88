/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-read-ahead: performance/read-ahead over debug/mock, which holds
 * every request until the test answers it; the test answers READs from
 * a file it keeps in memory and applies WRITEs to it, so it counts the
 * READs that reach the child and checks every byte read. Checks: a
 * sequential reader is served from pages (2 reads go down, the rest are
 * hits, every byte right, nothing fetched past the end); a random reader
 * sends every read down and nothing more; a write, truncate or fallocate
 * through another fd drops the pages, so the read after it returns the
 * new bytes (also when the prefetch raced the write and answered old
 * bytes); a failed prefetch keeps nothing and the read goes down itself,
 * also one that waited for it; a read waiting for a page in flight is
 * answered once from it; flush and release free the pages; an upcall
 * saying another client changed data drops them; reconfigure of
 * page-count; the cache-limit bound; O_DIRECT passes; every allocation
 * failure still answers each request exactly once.
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

#include <cmocka.h>

#include "builtin.h"
#include "read-ahead.h"
#include "vl-test.h"

#define T_FILE_SIZE (4 * 1024 * 1024)
#define T_PS RA_PAGE_SIZE

struct t_env {
    struct vl_test_graph *g; /* ra -> mock */
    vl_xlator_t *mock;       /* borrowed from g */
    vl_xlator_t *ra;         /* borrowed from g */
    vl_inode_t *inode;       /* owned ref; the file */
    vl_fd_t *fd;             /* owned ref; the reader's fd */
    vl_fd_t *wfd;            /* owned ref; a second fd that writes */
    unsigned char *file;     /* owned; what the brick holds */
    size_t size;             /* bytes in file */
};


static struct t_env *
t_env_new(const char *ra_opts)
{
    struct t_env *e = calloc(1, sizeof(*e));
    char text[1024];
    vl_gfid_t gfid;
    vl_inode_t *in;
    vl_err_t err;

    assert_non_null(e);
    vl_registry_add(&xl_performance_read_ahead);
    snprintf(text, sizeof(text),
             "volume m\n type debug/mock\nend-volume\n"
             "volume ra\n type performance/read-ahead\n%s"
             " subvolumes m\nend-volume\n", ra_opts);
    e->g = vl_test_graph_new(text, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->mock = vl_test_graph_xl(e->g, "m");
    e->ra = vl_test_graph_xl(e->g, "ra");
    vl_gfid_generate(&gfid);
    in = vl_inode_new(e->g->graph->itable);
    assert_non_null(in);
    e->inode = vl_inode_link(in, &(struct vl_iatt){.gfid = gfid,
                                                   .mode = S_IFREG | 0644});
    vl_inode_unref(in);
    e->fd = vl_fd_new(e->inode, O_RDONLY, 1);
    e->wfd = vl_fd_new(e->inode, O_RDWR, 1);
    assert_non_null(e->fd);
    assert_non_null(e->wfd);
    e->size = T_FILE_SIZE;
    e->file = malloc(T_FILE_SIZE);
    assert_non_null(e->file);
    for (size_t i = 0; i < T_FILE_SIZE; i++)
        e->file[i] = (unsigned char)(i % 251);
    return e;
}


static void
t_env_free(struct t_env *e)
{
    vl_fd_unref(e->fd);
    vl_fd_unref(e->wfd);
    vl_inode_unref(e->inode);
    vl_test_graph_free(e->g);
    free(e->file);
    free(e);
}


/* The value of key in read-ahead's dump. */
static unsigned long long
t_dump_value(struct t_env *e, const char *key)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    unsigned long long v = ~0ULL;
    char pat[64];
    const char *p;

    assert_non_null(f);
    e->ra->cls->dump(e->ra, f);
    fclose(f);
    snprintf(pat, sizeof(pat), "%s=", key);
    for (p = text; p != NULL; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (strncmp(p, pat, strlen(pat)) == 0) {
            v = strtoull(p + strlen(pat), NULL, 10);
            break;
        }
    }
    free(text);
    assert_true(v != ~0ULL);
    return v;
}


/* Answers r (a READ the mock holds) from src, a file of size bytes, as a
 * brick does: bytes up to the end, none past it. */
static void
t_answer_read_from(vl_req_t *r, const unsigned char *src, size_t size,
                   int status)
{
    struct vl_read_args *a = &r->args.read;
    size_t n = 0;

    assert_int_equal(r->op, VL_FOP_READ);
    if (status == 0 && (size_t)a->offset < size) {
        n = size - (size_t)a->offset < a->size ? size - (size_t)a->offset
                                               : a->size;
        r->reply.buf = vl_buf_new(n);
        assert_non_null(r->reply.buf);
        memcpy(r->reply.buf->data, src + a->offset, n);
        r->reply.data = r->reply.buf->data;
    }
    r->reply.count = (int64_t)n;
    vl_unwind(r, status);
}


/* Answers every request the mock holds, and those their answers send:
 * READs from the file, WRITEs applied to it, SETATTR of the size and
 * FALLOCATE (punch hole: zeros) applied too. Returns how many. */
static size_t
t_answer_all(struct t_env *e)
{
    size_t n = 0;
    vl_req_t *r;

    while ((r = vl_mock_pop(e->mock)) != NULL) {
        n++;
        if (r->op == VL_FOP_READ) {
            t_answer_read_from(r, e->file, e->size, 0);
            continue;
        }
        if (r->op == VL_FOP_WRITE) {
            struct vl_write_args *w = &r->args.write;
            size_t off = (size_t)w->offset;

            for (int i = 0; i < w->n_iov; i++) {
                assert_true(off + w->iov[i].iov_len <= T_FILE_SIZE);
                memcpy(e->file + off, w->iov[i].iov_base,
                       w->iov[i].iov_len);
                off += w->iov[i].iov_len;
            }
            if (off > e->size)
                e->size = off;
        } else if (r->op == VL_FOP_SETATTR) {
            e->size = (size_t)r->args.setattr.attr.size;
        } else if (r->op == VL_FOP_FALLOCATE) {
            memset(e->file + r->args.fallocate.offset, 0,
                   (size_t)r->args.fallocate.len);
        }
        vl_unwind(r, 0);
    }
    return n;
}


/* Winds a READ of size at offset through fd; false if no request could
 * be made (allocation failure injected). */
static bool
t_read_wind(struct t_env *e, vl_fd_t *fd, off_t offset, size_t size,
            struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_READ);

    if (req == NULL)
        return false;
    VL_ARGS(req, read)->fd = fd;
    VL_ARGS(req, read)->offset = offset;
    VL_ARGS(req, read)->size = size;
    vl_test_wind(req, res);
    return true;
}


/* res answered once with exactly the file's bytes at offset. */
static void
t_check_bytes(struct t_env *e, struct vl_test_result *res, off_t offset,
              size_t size)
{
    size_t want = (size_t)offset >= e->size ? 0
                  : e->size - (size_t)offset < size
                      ? e->size - (size_t)offset
                      : size;

    assert_true(res->is_done);
    assert_int_equal(res->n_done, 1);
    assert_int_equal(res->status, 0);
    assert_int_equal(res->reply.count, (int64_t)want);
    if (want > 0)
        assert_memory_equal(res->reply.data, e->file + offset, want);
    vl_test_result_clear(res);
}


/* A read through the reader's fd, answered (the mock too), checked. */
static void
t_read(struct t_env *e, off_t offset, size_t size)
{
    struct vl_test_result res = {0};

    assert_true(t_read_wind(e, e->fd, offset, size, &res));
    t_answer_all(e);
    t_check_bytes(e, &res, offset, size);
}


/* A write of len bytes of byte c at offset through the second fd. */
static void
t_write(struct t_env *e, off_t offset, size_t len, unsigned char c)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_WRITE);
    unsigned char *data = malloc(len);
    struct iovec iov = {.iov_base = data, .iov_len = len};

    assert_non_null(data);
    memset(data, c, len);
    VL_ARGS(req, write)->fd = e->wfd;
    VL_ARGS(req, write)->iov = &iov;
    VL_ARGS(req, write)->n_iov = 1;
    VL_ARGS(req, write)->offset = offset;
    vl_test_wind(req, &res);
    t_answer_all(e);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    free(data);
}


/* Reads 0, T_PS, 2 T_PS: the third and later are served from pages. */
static void
t_warm(struct t_env *e)
{
    for (int i = 0; i < 3; i++)
        t_read(e, (off_t)i * T_PS, T_PS);
    assert_int_equal(t_dump_value(e, "misses"), 2);
    assert_int_equal(t_dump_value(e, "hits"), 1);
}


/* ---- tests ---- */

static void
test_class(void **state)
{
    vl_err_t err;

    (void)state;
    assert_int_equal(vl_test_check_class(&xl_performance_read_ahead, &err),
                     0);
}


static void
test_sequential_served_from_pages(void **state)
{
    struct t_env *e = t_env_new("");
    size_t n_reads = T_FILE_SIZE / T_PS + 2; /* two reads at the end */

    (void)state;
    for (size_t i = 0; i < n_reads; i++)
        t_read(e, (off_t)(i * T_PS), T_PS);
    /* The first two go down; then every read is a hit. */
    assert_int_equal(t_dump_value(e, "misses"), 2);
    assert_int_equal(t_dump_value(e, "hits"), n_reads - 2);
    /* Each page fetched once: the reads down plus at most the pages of
     * the file and one window past its end (an empty page says EOF). */
    assert_true(vl_mock_received_op(e->mock, VL_FOP_READ)
                <= 2 + T_FILE_SIZE / T_PS + 4);
    assert_true(t_dump_value(e, "prefetches") >= T_FILE_SIZE / T_PS - 2);
    t_env_free(e);
}


static void
test_unaligned_reads_span_pages(void **state)
{
    struct t_env *e = t_env_new("option page-count 8\n");

    (void)state;
    t_warm(e);
    /* Reads of 100 KiB: most cross a page boundary (copied). */
    for (off_t off = 3 * T_PS; off < 12 * T_PS; off += 100 * 1024)
        t_read(e, off, 100 * 1024);
    assert_int_equal(t_dump_value(e, "misses"), 2);
    t_env_free(e);
}


static void
test_random_reader_unchanged(void **state)
{
    struct t_env *e = t_env_new("");
    static const off_t offs[] = {3 * 1024 * 1024, 0, 2 * 1024 * 1024,
                                 1024 * 1024, 3 * 1024 * 1024 + 8192,
                                 512 * 1024};

    (void)state;
    for (size_t i = 0; i < VL_ARRAY_SIZE(offs); i++)
        t_read(e, offs[i], 4096);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_READ),
                     VL_ARRAY_SIZE(offs));
    assert_int_equal(t_dump_value(e, "prefetches"), 0);
    assert_int_equal(t_dump_value(e, "hits"), 0);
    t_env_free(e);
}


static void
test_random_read_drops_pages(void **state)
{
    struct t_env *e = t_env_new("");

    (void)state;
    t_warm(e);
    assert_true(t_dump_value(e, "bytes") > 0);
    t_read(e, 3 * 1024 * 1024, 4096);
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    assert_true(t_dump_value(e, "random_drops") > 0);
    t_env_free(e);
}


static void
test_write_other_fd_drops_pages(void **state)
{
    struct t_env *e = t_env_new("");
    size_t before;

    (void)state;
    t_warm(e);
    t_write(e, 3 * T_PS + 100, 5000, 'W');
    before = vl_mock_received_op(e->mock, VL_FOP_READ);
    t_read(e, 3 * T_PS, T_PS); /* the new bytes, from the child */
    assert_true(vl_mock_received_op(e->mock, VL_FOP_READ) > before);
    assert_true(t_dump_value(e, "write_drops") > 0);
    assert_int_equal(e->file[3 * T_PS + 100], 'W');
    t_env_free(e);
}


static void
test_write_racing_prefetch_not_kept(void **state)
{
    struct t_env *e = t_env_new("");
    unsigned char *old = malloc(T_FILE_SIZE);
    vl_req_t *held[16];
    size_t n_held = 0;
    struct vl_test_result res = {0};
    vl_req_t *r;

    (void)state;
    assert_non_null(old);
    t_read(e, 0, T_PS);
    assert_true(t_read_wind(e, e->fd, T_PS, T_PS, &res));
    /* The reader's READ first, then the prefetches: hold those. */
    r = vl_mock_pop(e->mock);
    assert_int_equal(r->args.read.offset, T_PS);
    t_answer_read_from(r, e->file, e->size, 0);
    t_check_bytes(e, &res, T_PS, T_PS);
    while ((r = vl_mock_pop(e->mock)) != NULL) {
        assert_true(n_held < VL_ARRAY_SIZE(held));
        held[n_held++] = r;
    }
    assert_int_equal(n_held, 4);
    /* The brick read the pages before the write reached it. */
    memcpy(old, e->file, T_FILE_SIZE);
    t_write(e, 2 * T_PS, 3 * T_PS, 'N');
    for (size_t i = 0; i < n_held; i++)
        t_answer_read_from(held[i], old, e->size, 0);
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    t_read(e, 2 * T_PS, T_PS); /* 'N's, not the old bytes */
    assert_int_equal(e->file[2 * T_PS], 'N');
    free(old);
    t_env_free(e);
}


static void
test_truncate_and_fallocate_drop_pages(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_req_t *req;

    (void)state;
    t_warm(e);
    /* Truncate by path (no fd) into the pages. */
    req = vl_req_new(e->g->graph->top, VL_FOP_SETATTR);
    VL_ARGS(req, setattr)->loc.inode = e->inode;
    VL_ARGS(req, setattr)->valid = VL_SET_SIZE;
    VL_ARGS(req, setattr)->attr.size = 3 * T_PS + 10;
    vl_test_wind(req, &res);
    t_answer_all(e);
    assert_int_equal(res.n_done, 1);
    vl_test_result_clear(&res);
    t_read(e, 3 * T_PS, T_PS); /* 10 bytes, then EOF */

    t_env_free(e);
    e = t_env_new("");
    t_warm(e);
    req = vl_req_new(e->g->graph->top, VL_FOP_FALLOCATE);
    VL_ARGS(req, fallocate)->fd = e->wfd;
    VL_ARGS(req, fallocate)->mode = 3; /* PUNCH_HOLE | KEEP_SIZE */
    VL_ARGS(req, fallocate)->offset = 3 * T_PS;
    VL_ARGS(req, fallocate)->len = 4096;
    vl_test_wind(req, &res);
    t_answer_all(e);
    assert_int_equal(res.n_done, 1);
    vl_test_result_clear(&res);
    t_read(e, 3 * T_PS, T_PS); /* zeros first */
    assert_true(t_dump_value(e, "write_drops") > 0);
    t_env_free(e);
}


static void
test_prefetch_error_not_cached(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_req_t *r;

    (void)state;
    t_read(e, 0, T_PS);
    assert_true(t_read_wind(e, e->fd, T_PS, T_PS, &res));
    r = vl_mock_pop(e->mock);
    t_answer_read_from(r, e->file, e->size, 0);
    t_check_bytes(e, &res, T_PS, T_PS);
    /* Every prefetch fails. */
    while ((r = vl_mock_pop(e->mock)) != NULL)
        t_answer_read_from(r, e->file, e->size, -EIO);
    assert_int_equal(t_dump_value(e, "prefetch_errors"), 4);
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    t_read(e, 2 * T_PS, T_PS); /* goes down and succeeds */
    assert_int_equal(t_dump_value(e, "hits"), 0);
    t_env_free(e);
}


static void
test_waiter_served_or_sent_down(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0}, res2 = {0};
    vl_req_t *held[16];
    size_t n_held = 0;
    vl_req_t *r;

    (void)state;
    t_read(e, 0, T_PS);
    assert_true(t_read_wind(e, e->fd, T_PS, T_PS, &res));
    t_answer_read_from(vl_mock_pop(e->mock), e->file, e->size, 0);
    t_check_bytes(e, &res, T_PS, T_PS);
    while ((r = vl_mock_pop(e->mock)) != NULL)
        held[n_held++] = r;
    assert_int_equal(n_held, 4);
    /* Two reads wait for pages in flight: nothing new goes down. */
    assert_true(t_read_wind(e, e->fd, 2 * T_PS, T_PS, &res));
    assert_true(t_read_wind(e, e->fd, 3 * T_PS, T_PS, &res2));
    assert_false(res.is_done);
    assert_false(res2.is_done);
    assert_int_equal(t_dump_value(e, "waits"), 2);
    /* The reader passed half the window: the next pages, nothing else. */
    assert_int_equal(vl_mock_pending(e->mock), 2);
    while ((r = vl_mock_pop(e->mock)) != NULL) {
        assert_true(r->args.read.offset >= 6 * T_PS);
        held[n_held++] = r;
    }
    /* The first page arrives: served from it, once. The second fails:
     * its waiter goes down by itself. */
    for (size_t i = 0; i < n_held; i++) {
        off_t off = held[i]->args.read.offset;

        t_answer_read_from(held[i], e->file, e->size,
                           off == 3 * T_PS ? -EIO : 0);
    }
    t_check_bytes(e, &res, 2 * T_PS, T_PS);
    assert_false(res2.is_done);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    assert_int_equal(vl_mock_peek(e->mock)->args.read.offset, 3 * T_PS);
    t_answer_all(e);
    t_check_bytes(e, &res2, 3 * T_PS, T_PS);
    t_env_free(e);
}


static void
test_flush_and_release_free_pages(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_req_t *req;

    (void)state;
    t_warm(e);
    assert_true(t_dump_value(e, "bytes") > 0);
    req = vl_req_new(e->g->graph->top, VL_FOP_FLUSH);
    VL_ARGS(req, flush)->fd = e->fd;
    vl_test_wind(req, &res);
    t_answer_all(e);
    assert_int_equal(res.n_done, 1);
    vl_test_result_clear(&res);
    assert_int_equal(t_dump_value(e, "bytes"), 0);

    for (int i = 0; i < 3; i++)
        t_read(e, (off_t)i * T_PS, T_PS);
    assert_true(t_dump_value(e, "bytes") > 0);
    vl_fd_unref(e->fd); /* release */
    e->fd = NULL;
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    t_env_free(e);
}


static void
test_release_waits_for_prefetch(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};

    (void)state;
    t_read(e, 0, T_PS);
    assert_true(t_read_wind(e, e->fd, T_PS, T_PS, &res));
    t_answer_read_from(vl_mock_pop(e->mock), e->file, e->size, 0);
    t_check_bytes(e, &res, T_PS, T_PS);
    assert_int_equal(vl_mock_pending(e->mock), 4);
    /* The kernel closes the file with prefetches in flight: the pages
     * keep the fd until their READs answer, then all is freed. */
    vl_fd_unref(e->fd);
    e->fd = NULL;
    assert_int_equal(t_dump_value(e, "bytes"), 4 * T_PS);
    t_answer_all(e);
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    t_env_free(e);
}


static void
test_upcall_drops_pages(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_upcall up = {.kind = VL_UPCALL_INVALIDATE,
                           .flags = VL_INVAL_DATA};
    size_t before;

    (void)state;
    t_warm(e);
    up.gfid = e->inode->gfid;
    assert_int_equal(vl_notify(e->ra, VL_EV_UPCALL, &up), 0);
    memset(e->file + 3 * T_PS, 'X', 10); /* another client wrote */
    before = vl_mock_received_op(e->mock, VL_FOP_READ);
    t_read(e, 3 * T_PS, T_PS);
    assert_true(vl_mock_received_op(e->mock, VL_FOP_READ) > before);
    t_env_free(e);
}


static void
test_reconfigure_and_cache_limit(void **state)
{
    struct t_env *e = t_env_new("");
    struct ra_conf conf = *VL_CONF(e->ra, struct ra_conf);
    vl_err_t err;
    size_t before;

    (void)state;
    conf.page_count = 16;
    assert_int_equal(e->ra->cls->reconfigure(e->ra, &conf, &err), 0);
    assert_int_equal(t_dump_value(e, "page_count"), 16);
    t_read(e, 0, T_PS);
    before = vl_mock_received_op(e->mock, VL_FOP_READ);
    t_read(e, T_PS, T_PS);
    /* The reader's READ and 16 pages. */
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_READ) - before,
                     17);
    t_env_free(e);

    /* 1 MiB: 8 pages at most, whatever page-count says. */
    e = t_env_new("option page-count 16\noption cache-limit 1MiB\n");
    t_read(e, 0, T_PS);
    before = vl_mock_received_op(e->mock, VL_FOP_READ);
    t_read(e, T_PS, T_PS);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_READ) - before, 9);
    assert_true(t_dump_value(e, "cap_skips") > 0);
    assert_true(t_dump_value(e, "bytes") <= 1024 * 1024);
    t_env_free(e);
}


static void
test_direct_io_passes(void **state)
{
    struct t_env *e = t_env_new("");
    vl_fd_t *dfd;
    struct vl_test_result res = {0};

    (void)state;
    dfd = vl_fd_new(e->inode, O_RDONLY | O_DIRECT, 1);
    assert_non_null(dfd);
    for (int i = 0; i < 4; i++) {
        assert_true(t_read_wind(e, dfd, (off_t)i * T_PS, T_PS, &res));
        t_answer_all(e);
        t_check_bytes(e, &res, (off_t)i * T_PS, T_PS);
    }
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_READ), 4);
    vl_fd_unref(dfd);
    t_env_free(e);
}


/* Every allocation failure along two reads that start a run, two that
 * wait for its pages, a write through the other fd and a read after it:
 * each request is answered once, and a read that succeeds has the
 * file's bytes. */
static void
test_enomem_answers_once(void **state)
{
    static const off_t offs[] = {0, T_PS, 2 * T_PS, 3 * T_PS, 0,
                                 4 * T_PS};
    static char w[16] = "0123456789abcdef";

    (void)state;
    for (long n = 1;; n++) {
        struct t_env *e = t_env_new("");
        struct vl_test_result res[6] = {{0}};
        struct iovec iov = {.iov_base = w, .iov_len = sizeof(w)};
        bool is_wound[6] = {false};
        vl_req_t *req;
        long used;

        vl_mem_fail_at(n);
        for (size_t i = 0; i < VL_ARRAY_SIZE(offs); i++) {
            if (i != 4) {
                is_wound[i] = t_read_wind(e, e->fd, offs[i], T_PS, &res[i]);
                continue;
            }
            req = vl_req_new(e->g->graph->top, VL_FOP_WRITE);
            if (req == NULL)
                continue;
            VL_ARGS(req, write)->fd = e->wfd;
            VL_ARGS(req, write)->iov = &iov;
            VL_ARGS(req, write)->n_iov = 1;
            VL_ARGS(req, write)->offset = 3 * T_PS;
            vl_test_wind(req, &res[i]);
            is_wound[i] = true;
        }
        used = vl_mem_alloc_count();
        vl_mem_fail_at(0);
        t_answer_all(e);
        for (size_t i = 0; i < VL_ARRAY_SIZE(offs); i++) {
            if (!is_wound[i]) {
                assert_int_equal(res[i].n_done, 0);
                continue;
            }
            assert_int_equal(res[i].n_done, 1);
            if (i != 4 && res[i].status == 0)
                t_check_bytes(e, &res[i], offs[i], T_PS);
            else
                vl_test_result_clear(&res[i]);
        }
        t_env_free(e);
        if (used < n)
            break;
    }
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class),
        cmocka_unit_test(test_sequential_served_from_pages),
        cmocka_unit_test(test_unaligned_reads_span_pages),
        cmocka_unit_test(test_random_reader_unchanged),
        cmocka_unit_test(test_random_read_drops_pages),
        cmocka_unit_test(test_write_other_fd_drops_pages),
        cmocka_unit_test(test_write_racing_prefetch_not_kept),
        cmocka_unit_test(test_truncate_and_fallocate_drop_pages),
        cmocka_unit_test(test_prefetch_error_not_cached),
        cmocka_unit_test(test_waiter_served_or_sent_down),
        cmocka_unit_test(test_flush_and_release_free_pages),
        cmocka_unit_test(test_release_waits_for_prefetch),
        cmocka_unit_test(test_upcall_drops_pages),
        cmocka_unit_test(test_reconfigure_and_cache_limit),
        cmocka_unit_test(test_direct_io_passes),
        cmocka_unit_test(test_enomem_answers_once),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
