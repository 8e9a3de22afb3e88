/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-quick-read: performance/quick-read over debug/mock, which holds
 * every request until the test answers it, so the test counts what
 * reaches the child. Checks: open+read+flush+release of a small file
 * costs the one LOOKUP (reads at and past EOF as a brick answers them);
 * a write through the client drops the content; a large file is not
 * cached; other attributes in a later lookup drop it; cache-timeout 0
 * serves nothing; a fop needing the real open opens once and the fops
 * queued behind it go down after it, or all get its error; open-behind
 * off sends every open; the cache-size bound evicts the oldest copy; an
 * OPEN of a file not cached fetches it with one nameless LOOKUP and is
 * answered here (a large one then opens below, and next time directly);
 * a readdirplus asks for readdirp-content and fills the cache of each
 * listed small file (the OPEN and READ after it send nothing; the content
 * stops here), a large entry marks its file large; readdirp-content 0
 * asks for none. An unlink or a rename over a file with lazily opened
 * fds waits for one OPEN of the file below (the keeper; a rename's
 * target learnt by a LOOKUP first), shared by concurrent removals and
 * closed once no lazy fd is left (released or opened below); nothing
 * extra without lazy fds or for other files; a keeper that fails lets
 * the removal go on and the fd's later fops get the real open's error;
 * a failed deferred open fails reads the cache could answer.
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
#include "quick-read.h"
#include "vl-test.h"

/* The pid of the process the tests' opens and listings come from. */
#define T_PID 4242

struct t_env {
    struct vl_test_graph *g; /* qr -> mock */
    vl_xlator_t *mock;       /* borrowed from g */
    vl_xlator_t *qr;         /* borrowed from g */
    vl_inode_t *root;        /* owned ref */
};


static struct t_env *
t_env_new(const char *qr_opts)
{
    struct t_env *e = calloc(1, sizeof(*e));
    char text[1024];
    vl_err_t err;

    assert_non_null(e);
    vl_registry_add(&xl_performance_quick_read);
    snprintf(text, sizeof(text),
             "volume m\n type debug/mock\nend-volume\n"
             "volume qr\n type performance/quick-read\n%s"
             " subvolumes m\nend-volume\n", qr_opts);
    e->g = vl_test_graph_new(text, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->mock = vl_test_graph_xl(e->g, "m");
    e->qr = vl_test_graph_xl(e->g, "qr");
    e->root = vl_inode_table_root(e->g->graph->itable);
    return e;
}


static void
t_env_free(struct t_env *e)
{
    vl_inode_unref(e->root);
    vl_test_graph_free(e->g);
    free(e);
}


static vl_req_t *
t_pop(struct t_env *e, vl_fop_t op)
{
    vl_req_t *r = vl_mock_pop(e->mock);

    assert_non_null(r);
    assert_int_equal(r->op, op);
    return r;
}


/* Looks up name; the mock answers a regular file of len bytes of text
 * (content sent only if asked and len fits) with mtime. Returns the
 * linked inode (a ref). *asked gets the content_max the child saw. */
static vl_inode_t *
t_lookup(struct t_env *e, vl_inode_t *known, const vl_gfid_t *gfid,
         const char *text, size_t len, int64_t mtime, uint32_t *asked)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);
    vl_inode_t *in = known != NULL ? vl_inode_ref(known)
                                   : vl_inode_new(e->g->graph->itable);
    vl_inode_t *linked;
    vl_req_t *r;

    VL_ARGS(req, lookup)->loc.parent = e->root;
    VL_ARGS(req, lookup)->loc.name = "f";
    VL_ARGS(req, lookup)->loc.inode = in;
    vl_test_wind(req, &res);
    r = t_pop(e, VL_FOP_LOOKUP);
    *asked = r->args.lookup.content_max;
    r->reply.iatt.gfid = *gfid;
    r->reply.iatt.mode = S_IFREG | 0644;
    r->reply.iatt.size = len;
    r->reply.iatt.mtime = mtime;
    r->reply.iatt.ctime = mtime;
    if (*asked > 0 && len <= *asked) {
        /* As protocol/client answers: content inside a larger record. */
        r->reply.buf = vl_buf_new(len + 64);
        assert_non_null(r->reply.buf);
        memcpy(r->reply.buf->data + 64, text, len);
        r->reply.data = r->reply.buf->data + 64;
        r->reply.count = (int64_t)len;
    }
    vl_unwind(r, 0);
    assert_true(res.is_done);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, 0);
    assert_null(res.reply.buf); /* the content stops at quick-read */
    vl_test_result_clear(&res);
    linked = vl_inode_link(in, &(struct vl_iatt){.gfid = *gfid,
                                                 .mode = S_IFREG | 0644});
    vl_inode_unref(in);
    return linked;
}


/* Winds an OPEN; returns the request's result (answered or not yet). */
static void
t_open(struct t_env *e, vl_fd_t *fd, int flags, struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_OPEN);

    req->caller.pid = T_PID;
    VL_ARGS(req, open)->loc.inode = fd->inode;
    VL_ARGS(req, open)->flags = flags;
    VL_ARGS(req, open)->fd = fd;
    vl_test_wind(req, res);
}


/* An open that is not answered here: first (if lookup) the nameless
 * LOOKUP that tries to fetch the content, answered with attributes of
 * size bytes and no content, then the OPEN itself, answered 0. */
static void
t_open_goes_down(struct t_env *e, vl_fd_t *fd, int flags, bool lookup,
                 uint64_t size)
{
    struct vl_test_result res = {0};

    t_open(e, fd, flags, &res);
    assert_false(res.is_done);
    if (lookup) {
        vl_req_t *l = t_pop(e, VL_FOP_LOOKUP);

        assert_true(l->args.lookup.content_max > 0);
        assert_ptr_equal(l->args.lookup.loc.inode, fd->inode);
        assert_null(l->args.lookup.loc.name);
        l->reply.iatt.gfid = fd->inode->gfid;
        l->reply.iatt.mode = S_IFREG | 0644;
        l->reply.iatt.size = size;
        l->reply.iatt.mtime = l->reply.iatt.ctime = 200;
        vl_unwind(l, 0);
        assert_false(res.is_done);
    }
    vl_unwind(t_pop(e, VL_FOP_OPEN), 0);
    assert_true(res.is_done);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
}


static void
t_read(struct t_env *e, vl_fd_t *fd, size_t size, off_t off,
       struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_READ);

    VL_ARGS(req, read)->fd = fd;
    VL_ARGS(req, read)->size = size;
    VL_ARGS(req, read)->offset = off;
    vl_test_wind(req, res);
}


/* Reads and checks the answer came from the cache with want. */
static void
t_read_cached(struct t_env *e, vl_fd_t *fd, size_t size, off_t off,
              const char *want)
{
    struct vl_test_result res = {0};
    size_t before = vl_mock_received(e->mock);

    t_read(e, fd, size, off, &res);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.count, strlen(want));
    assert_memory_equal(res.reply.data, want, strlen(want));
    assert_int_equal(vl_mock_received(e->mock), before);
    vl_test_result_clear(&res);
}


static void
test_class(void **state)
{
    vl_err_t err;

    (void)state;
    assert_int_equal(vl_test_check_class(&xl_performance_quick_read, &err),
                     0);
}


/* open + reads + flush + release of a small file: one LOOKUP. */
static void
test_one_lookup(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;
    vl_req_t *req;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    assert_int_equal(asked, 64 * 1024);
    fd = vl_fd_new(in, O_RDONLY, 1);
    t_open(e, fd, O_RDONLY, &res);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    t_read_cached(e, fd, 4096, 0, "hello");
    t_read_cached(e, fd, 2, 1, "el");
    t_read_cached(e, fd, 4096, 3, "lo");
    t_read_cached(e, fd, 4096, 5, ""); /* at EOF */
    t_read_cached(e, fd, 4096, 99, ""); /* past EOF */
    req = vl_req_new(e->g->graph->top, VL_FOP_FLUSH);
    VL_ARGS(req, flush)->fd = fd;
    vl_test_wind(req, &res);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    vl_fd_unref(fd); /* release */
    assert_int_equal(vl_mock_received(e->mock), 1);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_LOOKUP), 1);
    vl_inode_unref(in);
    t_env_free(e);
}


/* A 0-byte file is cached too: reads answer EOF at once. */
static void
test_empty_file(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "", 0, 100, &asked);
    fd = vl_fd_new(in, O_RDONLY, 1);
    t_open(e, fd, O_RDONLY, &res);
    assert_true(res.is_done);
    vl_test_result_clear(&res);
    t_read_cached(e, fd, 4096, 0, "");
    assert_int_equal(vl_mock_received(e->mock), 1);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    t_env_free(e);
}


/* A write through this client drops the content before it is wound. */
static void
test_write_invalidates(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    struct iovec iov = {.iov_base = "xy", .iov_len = 2};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *wfd, *rfd;
    vl_req_t *req, *r;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    wfd = vl_fd_new(in, O_RDWR, 1);
    t_open(e, wfd, O_RDWR, &res); /* writable: goes down */
    vl_unwind(t_pop(e, VL_FOP_OPEN), 0);
    assert_true(res.is_done);
    vl_test_result_clear(&res);
    req = vl_req_new(e->g->graph->top, VL_FOP_WRITE);
    VL_ARGS(req, write)->fd = wfd;
    VL_ARGS(req, write)->iov = &iov;
    VL_ARGS(req, write)->n_iov = 1;
    vl_test_wind(req, &res);
    r = t_pop(e, VL_FOP_WRITE);
    /* Dropped already while the write is in flight: a read goes down. */
    rfd = vl_fd_new(in, O_RDONLY, 1);
    t_open_goes_down(e, rfd, O_RDONLY, true, 7);
    r->reply.count = 2;
    vl_unwind(r, 0);
    assert_true(res.is_done);
    vl_test_result_clear(&res);
    t_read(e, rfd, 4096, 0, &res);
    assert_false(res.is_done);
    vl_unwind(t_pop(e, VL_FOP_READ), 0);
    assert_true(res.is_done);
    vl_test_result_clear(&res);
    vl_fd_unref(rfd);
    vl_fd_unref(wfd);
    vl_inode_unref(in);
    t_env_free(e);
}


/* A file larger than max-file-size: no content asked, opens go down. */
static void
test_large_not_cached(void **state)
{
    struct t_env *e = t_env_new(" option max-file-size 4KiB\n");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "", 5000, 100, &asked);
    assert_int_equal(asked, 4096);
    fd = vl_fd_new(in, O_RDONLY, 1);
    /* Known to be large: no lookup for content first. */
    t_open_goes_down(e, fd, O_RDONLY, false, 0);
    vl_fd_unref(fd);
    (void)res;
    vl_inode_unref(in);
    t_env_free(e);
}


/* A later lookup with another mtime drops the content. */
static void
test_attr_change_drops(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in, *in2;
    vl_fd_t *fd;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    in2 = t_lookup(e, in, &gfid, "hello", 5, 100, &asked);
    assert_int_equal(asked, 0); /* cached: attributes revalidate it */
    vl_inode_unref(in2);
    in2 = t_lookup(e, in, &gfid, "hullo", 5, 101, &asked);
    vl_inode_unref(in2);
    fd = vl_fd_new(in, O_RDONLY, 1);
    t_open_goes_down(e, fd, O_RDONLY, true, 5);
    vl_fd_unref(fd);
    (void)res;
    vl_inode_unref(in);
    t_env_free(e);
}


/* Another client's change (a cache invalidation from the bricks) drops
 * the copy at once: the next lookup asks for the content again; is_all
 * drops every copy. */
static void
test_upcall_drops(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_upcall up = {.kind = VL_UPCALL_INVALIDATE,
                           .flags = VL_INVAL_ATTR | VL_INVAL_DATA};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in, *in2;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    in2 = t_lookup(e, in, &gfid, "hello", 5, 100, &asked);
    assert_int_equal(asked, 0); /* cached */
    vl_inode_unref(in2);
    up.gfid = gfid;
    assert_int_equal(vl_notify(e->qr, VL_EV_UPCALL, &up), 0);
    in2 = t_lookup(e, in, &gfid, "hello", 5, 100, &asked);
    assert_true(asked > 0); /* dropped: fetched again */
    vl_inode_unref(in2);
    up = (struct vl_upcall){.is_all = true};
    assert_int_equal(vl_notify(e->qr, VL_EV_UPCALL, &up), 0);
    in2 = t_lookup(e, in, &gfid, "hello", 5, 100, &asked);
    assert_true(asked > 0);
    vl_inode_unref(in2);
    vl_inode_unref(in);
    t_env_free(e);
}


/* cache-timeout 0: nothing is ever fresh enough to serve. */
static void
test_timeout(void **state)
{
    struct t_env *e = t_env_new(" option cache-timeout 0\n");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    fd = vl_fd_new(in, O_RDONLY, 1);
    t_open_goes_down(e, fd, O_RDONLY, true, 5);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    t_env_free(e);
    (void)res;
}


/* A lazily opened fd: fstat and fsync wait behind one real OPEN. */
static void
t_real_open(int open_status)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0}, sres = {0}, fres = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;
    vl_req_t *req, *o;

    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    fd = vl_fd_new(in, O_RDONLY, 1);
    t_open(e, fd, O_RDONLY, &res);
    assert_true(res.is_done);
    vl_test_result_clear(&res);
    req = vl_req_new(e->g->graph->top, VL_FOP_STAT);
    VL_ARGS(req, stat)->fd = fd;
    VL_ARGS(req, stat)->loc.inode = in;
    vl_test_wind(req, &sres);
    req = vl_req_new(e->g->graph->top, VL_FOP_FSYNC);
    VL_ARGS(req, fsync)->fd = fd;
    vl_test_wind(req, &fres);
    assert_int_equal(vl_mock_pending(e->mock), 1); /* only the OPEN */
    o = t_pop(e, VL_FOP_OPEN);
    assert_ptr_equal(o->args.open.fd, fd);
    assert_int_equal(o->args.open.flags & O_ACCMODE, O_RDONLY);
    assert_false(sres.is_done);
    assert_false(fres.is_done);
    vl_unwind(o, open_status);
    if (open_status != 0) {
        assert_true(sres.is_done);
        assert_int_equal(sres.n_done, 1);
        assert_int_equal(sres.status, open_status);
        assert_true(fres.is_done);
        assert_int_equal(fres.n_done, 1);
        assert_int_equal(fres.status, open_status);
        assert_int_equal(vl_mock_pending(e->mock), 0);
    } else {
        vl_req_t *s = t_pop(e, VL_FOP_STAT);

        s->reply.iatt.gfid = gfid;
        s->reply.iatt.mode = S_IFREG | 0644;
        s->reply.iatt.size = 5;
        s->reply.iatt.mtime = s->reply.iatt.ctime = 100;
        vl_unwind(s, 0);
        vl_unwind(t_pop(e, VL_FOP_FSYNC), 0);
        assert_true(sres.is_done);
        assert_int_equal(sres.status, 0);
        assert_true(fres.is_done);
        assert_int_equal(fres.status, 0);
        /* Open for real now: reads are still served from the cache. */
        t_read_cached(e, fd, 10, 0, "hello");
    }
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_OPEN), 1);
    vl_test_result_clear(&sres);
    vl_test_result_clear(&fres);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    t_env_free(e);
}


static void
test_real_open_fails(void **state)
{
    (void)state;
    t_real_open(-ENOENT);
}


static void
test_real_open_ok(void **state)
{
    (void)state;
    t_real_open(0);
}


/* open-behind off: the open goes down even when content is cached, and
 * reads are still served from the cache. */
static void
test_open_behind_off(void **state)
{
    struct t_env *e = t_env_new(" option open-behind off\n");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    fd = vl_fd_new(in, O_RDONLY, 1);
    t_open(e, fd, O_RDONLY, &res);
    assert_false(res.is_done);
    vl_unwind(t_pop(e, VL_FOP_OPEN), 0);
    vl_test_result_clear(&res);
    t_read_cached(e, fd, 10, 0, "hello");
    vl_fd_unref(fd);
    vl_inode_unref(in);
    t_env_free(e);
}


/* cache-size fits one 4 KiB buffer: the second file evicts the first. */
static void
test_eviction(void **state)
{
    struct t_env *e = t_env_new(" option cache-size 6KiB\n");
    struct vl_test_result res = {0};
    vl_gfid_t g1, g2;
    uint32_t asked;
    vl_inode_t *a, *b;
    vl_fd_t *fd;

    (void)state;
    vl_gfid_generate(&g1);
    vl_gfid_generate(&g2);
    a = t_lookup(e, NULL, &g1, "aaaa", 4, 100, &asked);
    b = t_lookup(e, NULL, &g2, "bbbb", 4, 100, &asked);
    fd = vl_fd_new(a, O_RDONLY, 1);
    t_open_goes_down(e, fd, O_RDONLY, true, 40000); /* evicted */
    vl_fd_unref(fd);
    fd = vl_fd_new(b, O_RDONLY, 1);
    t_open(e, fd, O_RDONLY, &res);
    assert_true(res.is_done); /* the newer one stays */
    vl_test_result_clear(&res);
    vl_fd_unref(fd);
    vl_inode_unref(a);
    vl_inode_unref(b);
    t_env_free(e);
}


/* The kernel knew the name from readdirplus (no LOOKUP came through
 * us): the OPEN fetches content with one nameless LOOKUP and is answered
 * here; the read comes from the cache. No OPEN or READ goes down. */
static void
test_open_fetches(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    vl_inode_t *in;
    vl_fd_t *fd;
    vl_req_t *l;

    (void)state;
    vl_gfid_generate(&gfid);
    in = vl_inode_get(e->g->graph->itable, &gfid, S_IFREG);
    fd = vl_fd_new(in, O_RDONLY, 1);
    t_open(e, fd, O_RDONLY, &res);
    assert_false(res.is_done);
    l = t_pop(e, VL_FOP_LOOKUP);
    assert_int_equal(l->args.lookup.content_max, 64 * 1024);
    l->reply.iatt.gfid = gfid;
    l->reply.iatt.mode = S_IFREG | 0644;
    l->reply.iatt.size = 3;
    l->reply.buf = vl_buf_new(3);
    memcpy(l->reply.buf->data, "abc", 3);
    l->reply.data = l->reply.buf->data;
    l->reply.count = 3;
    vl_unwind(l, 0);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    t_read_cached(e, fd, 4096, 0, "abc");
    vl_fd_unref(fd);
    assert_int_equal(vl_mock_received(e->mock), 1);
    /* A large one: the LOOKUP brings attributes only, the OPEN follows;
     * the next open of it goes down at once. */
    vl_gfid_generate(&gfid);
    vl_inode_unref(in);
    in = vl_inode_get(e->g->graph->itable, &gfid, S_IFREG);
    fd = vl_fd_new(in, O_RDONLY, 1);
    t_open_goes_down(e, fd, O_RDONLY, true, 1 << 20);
    vl_fd_unref(fd);
    fd = vl_fd_new(in, O_RDONLY, 1);
    t_open_goes_down(e, fd, O_RDONLY, false, 0);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    t_env_free(e);
}


/* Winds a readdirplus of the root and pops it at the mock; *res gets the
 * caller's answer once the test unwinds the returned child request. */
static vl_req_t *
t_readdirp(struct t_env *e, vl_fd_t *dfd, struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_READDIR);

    req->caller.pid = T_PID;
    VL_ARGS(req, readdir)->fd = dfd;
    VL_ARGS(req, readdir)->size = 4096;
    VL_ARGS(req, readdir)->plus = true;
    vl_test_wind(req, res);
    assert_false(res->is_done);
    return t_pop(e, VL_FOP_READDIR);
}


/* Appends a file entry of size bytes to r's reply, with content if
 * text is not NULL (placed at off in r's reply buffer). */
static void
t_dirent(vl_req_t *r, const char *name, const vl_gfid_t *gfid,
         uint64_t size, const char *text, size_t off)
{
    struct vl_iatt ia = {.gfid = *gfid, .mode = S_IFREG | 0644,
                         .size = size, .mtime = 100, .ctime = 100};
    struct vl_dirent_list *l = &r->reply.entries;

    assert_int_equal(vl_dirent_list_add(l, vl_gfid_to_ino(gfid),
                                        (int64_t)l->n + 1, DT_REG, name,
                                        &ia),
                     0);
    if (text == NULL)
        return;
    memcpy(r->reply.buf->data + off, text, size);
    l->ents[l->n - 1].has_content = true;
    l->ents[l->n - 1].content_len = (uint32_t)size;
    l->ents[l->n - 1].content_off = off;
}


static void
test_readdirp_fills(void **state)
{
    struct t_env *e = t_env_new(" option readdirp-content 16KiB\n");
    struct vl_test_result res = {0};
    vl_fd_t *dfd = vl_fd_new(e->root, O_RDONLY, 1);
    vl_gfid_t g0, g1, g2;
    vl_inode_t *in, *big;
    uint32_t asked;
    vl_fd_t *fd;
    vl_req_t *r;

    (void)state;
    vl_gfid_generate(&g1);
    vl_gfid_generate(&g2);
    /* The large file's inode exists (distribute made it noting where the
     * entry lives); the small one's does not yet. */
    big = vl_inode_get(e->g->graph->itable, &g2, S_IFREG);
    /* A process that has not opened a small file from a copy lately
     * gets no content in its listings (ls -lR, find). */
    r = t_readdirp(e, dfd, &res);
    assert_int_equal(r->args.readdir.content_max, 0);
    vl_unwind(r, 0);
    assert_true(res.is_done);
    vl_test_result_clear(&res);
    /* Once it has, its listings ask for content. */
    vl_gfid_generate(&g0);
    in = t_lookup(e, NULL, &g0, "hello", 5, 100, &asked);
    fd = vl_fd_new(in, O_RDONLY, T_PID);
    t_open(e, fd, O_RDONLY, &res);
    assert_true(res.is_done);
    vl_test_result_clear(&res);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    r = t_readdirp(e, dfd, &res);
    assert_int_equal(r->args.readdir.content_max, 16 * 1024);
    r->reply.buf = vl_buf_new(64);
    t_dirent(r, "a", &g1, 3, "xyz", 10);
    t_dirent(r, "big", &g2, 1 << 20, NULL, 0);
    vl_unwind(r, 0);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.entries.n, 2);
    /* The caller did not ask: no content reaches it. */
    assert_false(res.reply.entries.ents[0].has_content);
    assert_null(res.reply.buf);
    vl_test_result_clear(&res);

    /* The inode the mount links for g1 holds the copy: open and read
     * are answered here. */
    in = vl_inode_find(e->g->graph->itable, &g1);
    assert_non_null(in);
    fd = vl_fd_new(in, O_RDONLY, 1);
    t_open(e, fd, O_RDONLY, &res);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    assert_int_equal(res.reply.iatt.size, 3);
    vl_test_result_clear(&res);
    t_read_cached(e, fd, 4096, 0, "xyz");
    vl_fd_unref(fd);
    /* Below: the first readdir, the lookup, the second readdir. */
    assert_int_equal(vl_mock_received(e->mock), 3);
    /* The large one opens below at once: no LOOKUP for content. */
    fd = vl_fd_new(big, O_RDONLY, 1);
    t_open_goes_down(e, fd, O_RDONLY, false, 0);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    vl_inode_unref(big);
    vl_fd_unref(dfd);
    t_env_free(e);
}


static void
test_readdirp_content_off(void **state)
{
    struct t_env *e = t_env_new(" option readdirp-content 0\n");
    struct vl_test_result res = {0};
    vl_fd_t *dfd = vl_fd_new(e->root, O_RDONLY, 1);
    vl_req_t *r;

    (void)state;
    r = t_readdirp(e, dfd, &res);
    assert_int_equal(r->args.readdir.content_max, 0);
    vl_unwind(r, 0);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    vl_fd_unref(dfd);
    t_env_free(e);
}


/* ---- open-behind and the file's last name (qr-unlink.c) ---- */

static struct qr_inode *
t_qi(struct t_env *e, vl_inode_t *in)
{
    return vl_inode_ctx(in, e->qr);
}


/* A read-only fd of in answered here (in's content is cached). */
static vl_fd_t *
t_lazy_fd(struct t_env *e, vl_inode_t *in)
{
    struct vl_test_result res = {0};
    size_t before = vl_mock_received(e->mock);
    vl_fd_t *fd = vl_fd_new(in, O_RDONLY, 1);

    t_open(e, fd, O_RDONLY, &res);
    assert_true(res.is_done);
    assert_int_equal(res.status, 0);
    assert_int_equal(vl_mock_received(e->mock), before);
    vl_test_result_clear(&res);
    return fd;
}


/* Winds UNLINK of name in the root; hint is the mount's loc.inode. */
static void
t_unlink(struct t_env *e, vl_inode_t *hint, const char *name,
         struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_UNLINK);

    VL_ARGS(req, unlink)->loc.parent = e->root;
    VL_ARGS(req, unlink)->loc.name = name;
    VL_ARGS(req, unlink)->loc.inode = hint;
    vl_test_wind(req, res);
}


/* Winds RENAME from -> to in the root, as mount/fuse does: the target's
 * inode is not given. */
static void
t_rename(struct t_env *e, const char *from, const char *to, uint32_t flags,
         struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_RENAME);

    VL_ARGS(req, rename)->oldloc.parent = e->root;
    VL_ARGS(req, rename)->oldloc.name = from;
    VL_ARGS(req, rename)->newloc.parent = e->root;
    VL_ARGS(req, rename)->newloc.name = to;
    VL_ARGS(req, rename)->flags = flags;
    vl_test_wind(req, res);
}


/* Pops the keeper's OPEN of in: not the lazy fd, read-only. */
static vl_req_t *
t_pop_keeper(struct t_env *e, vl_inode_t *in, vl_fd_t *lazy)
{
    vl_req_t *o = t_pop(e, VL_FOP_OPEN);

    assert_ptr_equal(o->args.open.loc.inode, in);
    assert_ptr_not_equal(o->args.open.fd, lazy);
    assert_ptr_equal(o->args.open.fd->inode, in);
    assert_int_equal(o->args.open.flags & O_ACCMODE, O_RDONLY);
    return o;
}


/* Pops the fop op, answers it status, and checks res got status. */
static void
t_answer(struct t_env *e, vl_fop_t op, int status, struct vl_test_result *res)
{
    vl_unwind(t_pop(e, op), status);
    assert_true(res->is_done);
    assert_int_equal(res->n_done, 1);
    assert_int_equal(res->status, status);
    vl_test_result_clear(res);
}


/* Winds an fstat of fd. */
static void
t_fstat(struct t_env *e, vl_fd_t *fd, struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_STAT);

    VL_ARGS(req, stat)->fd = fd;
    VL_ARGS(req, stat)->loc.inode = fd->inode;
    vl_test_wind(req, res);
}


/* Issue 20: `exec 8<g; rm g; cat <&8`. The UNLINK of a file with a lazy
 * fd waits for one OPEN of the file below (the keeper), so the brick
 * keeps the unlinked file; the fd's fstat then opens it for real (by
 * GFID) and goes down; once no lazy fd is left the keeper is closed. */
static void
test_unlink_keeps_lazy_file(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result ures = {0}, sres = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;
    vl_req_t *o;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    fd = t_lazy_fd(e, in);
    assert_int_equal(t_qi(e, in)->n_lazy, 1);
    t_unlink(e, in, "f", &ures);
    assert_false(ures.is_done);
    o = t_pop_keeper(e, in, fd);
    assert_int_equal(vl_mock_pending(e->mock), 0); /* the UNLINK waits */
    vl_unwind(o, 0);
    assert_non_null(t_qi(e, in)->keeper);
    t_answer(e, VL_FOP_UNLINK, 0, &ures);
    /* The content went with the name: fstat and reads go down. */
    t_fstat(e, fd, &sres);
    o = t_pop(e, VL_FOP_OPEN);
    assert_ptr_equal(o->args.open.fd, fd);
    vl_unwind(o, 0);
    assert_false(sres.is_done);
    t_answer(e, VL_FOP_STAT, 0, &sres);
    /* fd is open below now: it holds the file itself. */
    assert_int_equal(t_qi(e, in)->n_lazy, 0);
    assert_null(t_qi(e, in)->keeper);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    t_env_free(e);
}


/* The lazy fd is closed without ever needing the file: its release
 * closes the keeper. A second unlink of the file (another name) finds
 * the keeper and goes straight down. */
static void
test_keeper_closed_at_release(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    fd = t_lazy_fd(e, in);
    t_unlink(e, in, "f", &res);
    vl_unwind(t_pop_keeper(e, in, fd), 0);
    t_answer(e, VL_FOP_UNLINK, 0, &res);
    t_unlink(e, in, "g", &res);
    t_answer(e, VL_FOP_UNLINK, 0, &res); /* no second OPEN */
    assert_non_null(t_qi(e, in)->keeper);
    vl_fd_unref(fd); /* release */
    assert_null(t_qi(e, in)->keeper);
    assert_int_equal(t_qi(e, in)->n_lazy, 0);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_OPEN), 1);
    vl_inode_unref(in);
    t_env_free(e);
}


/* `exec 8<b; mv a b`: the mount gives no inode for a rename's target, so
 * a LOOKUP of the name learns it; its lazy fd gets a keeper before the
 * RENAME goes down. An exchange removes nothing: straight down. */
static void
test_rename_over_lazy(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;
    vl_req_t *l;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "old", 3, 100, &asked);
    fd = t_lazy_fd(e, in);
    t_rename(e, "a", "f", RENAME_EXCHANGE, &res);
    t_answer(e, VL_FOP_RENAME, 0, &res);
    t_rename(e, "a", "f", 0, &res);
    l = t_pop(e, VL_FOP_LOOKUP);
    assert_ptr_equal(l->args.lookup.loc.parent, e->root);
    assert_string_equal(l->args.lookup.loc.name, "f");
    assert_non_null(l->args.lookup.loc.inode);
    assert_int_equal(l->args.lookup.content_max, 0);
    l->reply.iatt.gfid = gfid;
    l->reply.iatt.mode = S_IFREG | 0644;
    vl_unwind(l, 0);
    assert_false(res.is_done);
    vl_unwind(t_pop_keeper(e, in, fd), 0);
    t_answer(e, VL_FOP_RENAME, 0, &res);
    vl_fd_unref(fd);
    assert_null(t_qi(e, in)->keeper);
    vl_inode_unref(in);
    t_env_free(e);
}


/* Without lazy fds an unlink or rename costs nothing more; with one on
 * another file, an unlink hinted to a file without lazy fds goes down at
 * once, and a rename whose target is another file (or none) after its
 * LOOKUP. */
static void
test_unlink_other_files(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_gfid_t g1, g2;
    uint32_t asked;
    vl_inode_t *a, *b;
    vl_fd_t *fd;
    vl_req_t *l;

    (void)state;
    vl_gfid_generate(&g1);
    vl_gfid_generate(&g2);
    a = t_lookup(e, NULL, &g1, "aaaa", 4, 100, &asked);
    b = t_lookup(e, NULL, &g2, "bbbb", 4, 100, &asked);
    t_unlink(e, NULL, "x", &res);
    t_answer(e, VL_FOP_UNLINK, 0, &res);
    t_rename(e, "x", "y", 0, &res);
    t_answer(e, VL_FOP_RENAME, 0, &res);
    fd = t_lazy_fd(e, a);
    t_unlink(e, b, "b", &res);
    t_answer(e, VL_FOP_UNLINK, 0, &res);
    t_rename(e, "x", "b", 0, &res);
    l = t_pop(e, VL_FOP_LOOKUP);
    l->reply.iatt.gfid = g2;
    l->reply.iatt.mode = S_IFREG | 0644;
    vl_unwind(l, 0);
    t_answer(e, VL_FOP_RENAME, 0, &res);
    t_rename(e, "x", "none", 0, &res);
    vl_unwind(t_pop(e, VL_FOP_LOOKUP), -ENOENT);
    t_answer(e, VL_FOP_RENAME, 0, &res);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_OPEN), 0);
    vl_fd_unref(fd);
    vl_inode_unref(a);
    vl_inode_unref(b);
    t_env_free(e);
}


/* An unlink and a rename over the same file while its keeper's OPEN is
 * in flight: one OPEN, both go down after it. */
static void
test_keeper_shared(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result ures = {0}, rres = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;
    vl_req_t *o, *l;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    fd = t_lazy_fd(e, in);
    t_unlink(e, in, "f2", &ures);
    o = t_pop_keeper(e, in, fd);
    t_rename(e, "a", "f", 0, &rres);
    l = t_pop(e, VL_FOP_LOOKUP);
    l->reply.iatt.gfid = gfid;
    l->reply.iatt.mode = S_IFREG | 0644;
    vl_unwind(l, 0);
    assert_int_equal(vl_mock_pending(e->mock), 0);
    vl_unwind(o, 0);
    assert_int_equal(vl_mock_pending(e->mock), 2);
    t_answer(e, VL_FOP_UNLINK, 0, &ures);
    t_answer(e, VL_FOP_RENAME, 0, &rres);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_OPEN), 1);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    t_env_free(e);
}


/* The lazy fd goes while its keeper opens: the keeper is closed when it
 * answers (nothing left to keep), and the UNLINK still goes down. */
static void
test_release_while_keeper_opens(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;
    vl_req_t *o;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    fd = t_lazy_fd(e, in);
    t_unlink(e, in, "f", &res);
    o = t_pop_keeper(e, in, fd);
    vl_fd_unref(fd);
    vl_unwind(o, 0);
    assert_null(t_qi(e, in)->keeper);
    assert_false(t_qi(e, in)->is_keeper_opening);
    t_answer(e, VL_FOP_UNLINK, 0, &res);
    vl_inode_unref(in);
    t_env_free(e);
}


/* The keeper cannot be opened (another client removed the file): the
 * UNLINK still goes down and answers for itself; the lazy fd's next fops
 * get the real open's error, each once, and never the cached bytes. */
static void
test_keeper_fails(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;
    vl_req_t *req;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    fd = t_lazy_fd(e, in);
    t_unlink(e, in, "f", &res);
    vl_unwind(t_pop_keeper(e, in, fd), -ESTALE);
    assert_null(t_qi(e, in)->keeper);
    t_answer(e, VL_FOP_UNLINK, -ENOENT, &res);
    t_read(e, fd, 4096, 0, &res);
    t_answer(e, VL_FOP_OPEN, -ESTALE, &res);
    t_read(e, fd, 4096, 0, &res);
    assert_true(res.is_done);
    assert_int_equal(res.status, -ESTALE);
    vl_test_result_clear(&res);
    req = vl_req_new(e->g->graph->top, VL_FOP_FLUSH);
    VL_ARGS(req, flush)->fd = fd;
    vl_test_wind(req, &res);
    assert_true(res.is_done);
    assert_int_equal(res.status, -ESTALE);
    vl_test_result_clear(&res);
    assert_int_equal(t_qi(e, in)->n_lazy, 0);
    assert_int_equal(vl_mock_pending(e->mock), 0);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    t_env_free(e);
}


/* A deferred open that failed (here for fstat) fails the fd's reads
 * too, though the content is still cached and fresh: the error is not
 * covered by the copy. */
static void
test_failed_fd_no_cached_read(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_gfid_t gfid;
    uint32_t asked;
    vl_inode_t *in;
    vl_fd_t *fd;

    (void)state;
    vl_gfid_generate(&gfid);
    in = t_lookup(e, NULL, &gfid, "hello", 5, 100, &asked);
    fd = t_lazy_fd(e, in);
    t_fstat(e, fd, &res);
    t_answer(e, VL_FOP_OPEN, -EIO, &res);
    t_read(e, fd, 4096, 0, &res);
    assert_true(res.is_done);
    assert_int_equal(res.status, -EIO);
    vl_test_result_clear(&res);
    assert_int_equal(vl_mock_pending(e->mock), 0);
    vl_fd_unref(fd);
    vl_inode_unref(in);
    t_env_free(e);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class),
        cmocka_unit_test(test_one_lookup),
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_write_invalidates),
        cmocka_unit_test(test_large_not_cached),
        cmocka_unit_test(test_attr_change_drops),
        cmocka_unit_test(test_upcall_drops),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_real_open_fails),
        cmocka_unit_test(test_real_open_ok),
        cmocka_unit_test(test_open_behind_off),
        cmocka_unit_test(test_eviction),
        cmocka_unit_test(test_open_fetches),
        cmocka_unit_test(test_readdirp_fills),
        cmocka_unit_test(test_readdirp_content_off),
        cmocka_unit_test(test_unlink_keeps_lazy_file),
        cmocka_unit_test(test_keeper_closed_at_release),
        cmocka_unit_test(test_rename_over_lazy),
        cmocka_unit_test(test_unlink_other_files),
        cmocka_unit_test(test_keeper_shared),
        cmocka_unit_test(test_release_while_keeper_opens),
        cmocka_unit_test(test_keeper_fails),
        cmocka_unit_test(test_failed_fd_no_cached_read),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
