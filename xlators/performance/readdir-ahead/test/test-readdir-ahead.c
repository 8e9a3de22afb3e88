/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-readdir-ahead: performance/readdir-ahead over debug/mock, which
 * holds every request until the test answers it; the test answers
 * READDIRs from a directory it keeps in memory (cookie = position), so
 * it counts the READDIRs that reach the child and checks every listing.
 * Checks: a sequential listing is answered from prefetched entries, in
 * order, each name once; a seek drops them and goes down; create,
 * unlink and rename in the directory through the same client and a
 * brick's upcall drop them (the next READDIR goes down and sees the
 * change), also a prefetch that raced the change; the cache-limit bound;
 * errors from below answered once (a failed prefetch: its waiter goes
 * down); every allocation failure answers each request exactly once;
 * release frees everything.
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
#include <dirent.h>

#include <cmocka.h>

#include "builtin.h"
#include "readdir-ahead.h"
#include "vl-test.h"

#define T_MAX 20000

struct t_env {
    struct vl_test_graph *g; /* rda -> mock */
    vl_xlator_t *mock;       /* borrowed from g */
    vl_xlator_t *rda;        /* borrowed from g */
    vl_inode_t *dir;         /* owned ref; the directory */
    vl_fd_t *fd;             /* owned ref; the lister's fd */
    char *names[T_MAX];      /* owned; the directory's names, NULL: gone */
    size_t n;                /* slots used in names */
};


static struct t_env *
t_env_new(const char *opts, size_t n)
{
    struct t_env *e = calloc(1, sizeof(*e));
    char text[1024];
    vl_gfid_t gfid;
    vl_inode_t *in;
    vl_err_t err;

    assert_non_null(e);
    vl_registry_add(&xl_performance_readdir_ahead);
    snprintf(text, sizeof(text),
             "volume m\n type debug/mock\nend-volume\n"
             "volume rda\n type performance/readdir-ahead\n%s"
             " subvolumes m\nend-volume\n", opts);
    e->g = vl_test_graph_new(text, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->mock = vl_test_graph_xl(e->g, "m");
    e->rda = vl_test_graph_xl(e->g, "rda");
    vl_gfid_generate(&gfid);
    in = vl_inode_new(e->g->graph->itable);
    assert_non_null(in);
    e->dir = vl_inode_link(in, &(struct vl_iatt){.gfid = gfid,
                                                 .mode = S_IFDIR | 0755});
    vl_inode_unref(in);
    e->fd = vl_fd_new(e->dir, O_RDONLY | O_DIRECTORY, 1);
    assert_non_null(e->fd);
    for (size_t i = 0; i < n; i++) {
        char name[64];

        snprintf(name, sizeof(name), "entry-with-a-longish-name-%05zu", i);
        e->names[i] = strdup(name);
    }
    e->n = n;
    return e;
}


static void
t_env_free(struct t_env *e)
{
    if (e->fd != NULL)
        vl_fd_unref(e->fd);
    vl_inode_unref(e->dir);
    vl_test_graph_free(e->g);
    for (size_t i = 0; i < e->n; i++)
        free(e->names[i]);
    free(e);
}


static unsigned long long
t_dump_value(struct t_env *e, const char *key)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    unsigned long long v = ~0ULL;
    char pat[64];

    assert_non_null(f);
    e->rda->cls->dump(e->rda, f);
    fclose(f);
    snprintf(pat, sizeof(pat), "\n%s=", key);
    if (strncmp(text, pat + 1, strlen(pat + 1)) == 0)
        v = strtoull(text + strlen(pat + 1), NULL, 10);
    else if (strstr(text, pat) != NULL)
        v = strtoull(strstr(text, pat) + strlen(pat), NULL, 10);
    free(text);
    assert_true(v != ~0ULL);
    return v;
}


/* Answers r, a READDIR the mock holds, as a brick does: the names after
 * cookie offset (the position) that fit size, eof at the end. */
static void
t_answer_readdir(struct t_env *e, vl_req_t *r, int status)
{
    struct vl_readdir_args *a = &r->args.readdir;
    struct vl_dirent_list *list = &r->reply.entries;
    size_t used = 0, i = (size_t)a->offset;

    assert_int_equal(r->op, VL_FOP_READDIR);
    for (; status == 0 && i < e->n; i++) {
        size_t cost;
        struct vl_iatt ia = {.mode = S_IFREG | 0644, .size = i};

        if (e->names[i] == NULL)
            continue;
        cost = ((24 + strlen(e->names[i]) + 7) & ~(size_t)7)
               + (a->plus ? 128 : 0);
        if (list->n > 0 && used + cost > a->size)
            break;
        used += cost;
        if (vl_dirent_list_add(list, i + 100, (int64_t)(i + 1), DT_REG,
                               e->names[i], a->plus ? &ia : NULL)
            != 0) {
            /* The brick ran out of memory (injected). */
            vl_dirent_list_clear(list);
            status = -ENOMEM;
        }
    }
    list->eof = status == 0 && i >= e->n;
    vl_unwind(r, status);
}


/* Answers every request the mock holds (and those their answers send):
 * READDIRs from the directory, the rest with 0. */
static size_t
t_answer_all(struct t_env *e)
{
    size_t n = 0;
    vl_req_t *r;

    while ((r = vl_mock_pop(e->mock)) != NULL) {
        n++;
        if (r->op == VL_FOP_READDIR)
            t_answer_readdir(e, r, 0);
        else
            vl_unwind(r, 0);
    }
    return n;
}


static bool
t_readdir_wind(struct t_env *e, int64_t off, bool plus,
               struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_READDIR);

    if (req == NULL)
        return false;
    VL_ARGS(req, readdir)->fd = e->fd;
    VL_ARGS(req, readdir)->offset = off;
    VL_ARGS(req, readdir)->size = 4096;
    VL_ARGS(req, readdir)->plus = plus;
    vl_test_wind(req, res);
    return true;
}


/* Lists the directory through e->fd from the start, one READDIR of 4 KiB
 * at a time, answering the mock as it goes; checks every present name
 * comes once and in order; returns the READDIRs the mock received. */
static size_t
t_list_all(struct t_env *e, bool plus)
{
    size_t before = vl_mock_received_op(e->mock, VL_FOP_READDIR);
    size_t want = 0;
    int64_t off = 0;

    for (;;) {
        struct vl_test_result res = {0};
        bool is_eof;

        assert_true(t_readdir_wind(e, off, plus, &res));
        t_answer_all(e);
        assert_int_equal(res.n_done, 1);
        assert_int_equal(res.status, 0);
        for (size_t i = 0; i < res.reply.entries.n; i++) {
            const struct vl_dirent *d = &res.reply.entries.ents[i];

            while (want < e->n && e->names[want] == NULL)
                want++;
            assert_true(want < e->n);
            assert_string_equal(d->name, e->names[want]);
            assert_int_equal(d->has_iatt, plus);
            if (plus)
                assert_int_equal(d->iatt.size, want);
            want++;
            off = d->off;
        }
        is_eof = res.reply.entries.eof || res.reply.entries.n == 0;
        vl_test_result_clear(&res);
        if (is_eof)
            break;
    }
    while (want < e->n && e->names[want] == NULL)
        want++;
    assert_int_equal(want, e->n);
    return vl_mock_received_op(e->mock, VL_FOP_READDIR) - before;
}


/* Lists the first READDIR's worth and answers everything: the stream is
 * warm with prefetched entries. Returns the next cookie. */
static int64_t
t_warm(struct t_env *e, bool plus)
{
    struct vl_test_result res = {0};
    int64_t off;

    assert_true(t_readdir_wind(e, 0, plus, &res));
    t_answer_all(e);
    assert_int_equal(res.n_done, 1);
    assert_true(res.reply.entries.n > 0);
    off = res.reply.entries.ents[res.reply.entries.n - 1].off;
    vl_test_result_clear(&res);
    assert_true(t_dump_value(e, "bytes") > 0);
    return off;
}


/* An entry fop through the graph on the directory, answered. */
static void
t_entry_fop(struct t_env *e, vl_fop_t op, const char *name)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, op);

    assert_non_null(req);
    if (op == VL_FOP_RENAME) {
        req->args.rename.oldloc.parent = e->dir;
        req->args.rename.oldloc.name = name;
        req->args.rename.newloc.parent = e->dir;
        req->args.rename.newloc.name = "renamed";
    } else if (op == VL_FOP_CREATE) {
        req->args.create.loc.parent = e->dir;
        req->args.create.loc.name = name;
    } else {
        req->args.unlink.loc.parent = e->dir;
        req->args.unlink.loc.name = name;
    }
    vl_test_wind(req, &res);
    t_answer_all(e);
    assert_int_equal(res.n_done, 1);
    vl_test_result_clear(&res);
}


/* ---- tests ---- */

static void
test_class(void **state)
{
    vl_err_t err;

    (void)state;
    assert_int_equal(
        vl_test_check_class(&xl_performance_readdir_ahead, &err), 0);
}


static void
test_sequential_hits(void **state)
{
    struct t_env *e = t_env_new("", 5000);
    size_t n_down;

    (void)state;
    /* Names only: 5000 x 56 bytes = 280 KiB: the first READDIR and
     * three prefetches of 128 KiB go down, the rest are hits. */
    n_down = t_list_all(e, false);
    assert_true(n_down <= 5);
    assert_true(t_dump_value(e, "hits") >= 60);
    assert_int_equal(t_dump_value(e, "misses"), 1);
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    /* With attributes, the same: again from 0 starts a new stream. */
    n_down = t_list_all(e, true);
    assert_true(n_down <= 12);
    assert_int_equal(t_dump_value(e, "misses"), 2);
    t_env_free(e);
}


static void
test_seek_drops(void **state)
{
    struct t_env *e = t_env_new("", 3000);
    struct vl_test_result res = {0};

    (void)state;
    t_warm(e, false);
    assert_true(t_readdir_wind(e, 7, false, &res));
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    assert_int_equal(t_dump_value(e, "seek_drops"), 1);
    /* It went down as it came. */
    assert_int_equal(vl_mock_pending(e->mock), 1);
    assert_int_equal(vl_mock_peek(e->mock)->args.readdir.offset, 7);
    t_answer_all(e);
    assert_int_equal(res.n_done, 1);
    assert_string_equal(res.reply.entries.ents[0].name, e->names[7]);
    vl_test_result_clear(&res);
    t_env_free(e);
}


/* Warm with plus, change the directory by op through the same client,
 * list on from where the stream is: the READDIR goes down and the
 * listing is the directory's state after the change. */
static void
t_inval_by(vl_fop_t op)
{
    struct t_env *e = t_env_new("", 3000);
    struct vl_test_result res = {0};
    size_t before;
    int64_t off;

    off = t_warm(e, true);
    /* The name the next READDIR would have been answered with. */
    t_entry_fop(e, op, e->names[off]);
    free(e->names[off]);
    e->names[off] = NULL;
    assert_true(t_dump_value(e, "bytes") > 0); /* dropped lazily */
    before = vl_mock_received_op(e->mock, VL_FOP_READDIR);
    assert_true(t_readdir_wind(e, off, true, &res));
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_READDIR),
                     before + 1);
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    assert_int_equal(t_dump_value(e, "inval_drops"), 1);
    t_answer_all(e);
    assert_int_equal(res.n_done, 1);
    assert_string_equal(res.reply.entries.ents[0].name,
                        e->names[off + 1]);
    vl_test_result_clear(&res);
    t_env_free(e);
}


static void
test_inval_create_unlink_rename(void **state)
{
    (void)state;
    t_inval_by(VL_FOP_CREATE);
    t_inval_by(VL_FOP_UNLINK);
    t_inval_by(VL_FOP_RENAME);
}


static void
test_inval_upcall(void **state)
{
    struct t_env *e = t_env_new("", 3000);
    struct vl_upcall up = {.kind = VL_UPCALL_INVALIDATE,
                           .flags = VL_INVAL_ENTRY};
    struct vl_test_result res = {0};
    size_t before;
    int64_t off;

    (void)state;
    off = t_warm(e, false);
    assert_int_equal(vl_notify(e->rda, VL_EV_UPCALL, &up), 0);
    before = vl_mock_received_op(e->mock, VL_FOP_READDIR);
    assert_true(t_readdir_wind(e, off, false, &res));
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_READDIR),
                     before + 1);
    t_answer_all(e);
    assert_int_equal(res.n_done, 1);
    vl_test_result_clear(&res);
    assert_int_equal(t_dump_value(e, "inval_drops"), 1);
    t_env_free(e);
}


static void
test_prefetch_racing_change_not_kept(void **state)
{
    struct t_env *e = t_env_new("", 3000);
    struct vl_test_result res = {0}, w = {0};
    vl_req_t *pre;
    int64_t off;

    (void)state;
    assert_true(t_readdir_wind(e, 0, false, &res));
    t_answer_readdir(e, vl_mock_pop(e->mock), 0);
    off = res.reply.entries.ents[res.reply.entries.n - 1].off;
    vl_test_result_clear(&res);
    /* The prefetch is in flight; the next READDIR waits for it. */
    pre = vl_mock_pop(e->mock);
    assert_non_null(pre);
    assert_true(t_readdir_wind(e, off, false, &w));
    assert_false(w.is_done);
    assert_int_equal(t_dump_value(e, "waits"), 1);
    /* An unlink of the next name answers before the prefetch, which
     * the brick read before it (the old names). */
    t_entry_fop(e, VL_FOP_UNLINK, e->names[off]);
    t_answer_readdir(e, pre, 0);
    free(e->names[off]);
    e->names[off] = NULL;
    /* Nothing kept: the waiter went down and sees the name gone. */
    assert_false(w.is_done);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    t_answer_all(e);
    assert_int_equal(w.n_done, 1);
    assert_int_equal(w.status, 0);
    assert_string_equal(w.reply.entries.ents[0].name, e->names[off + 1]);
    vl_test_result_clear(&w);
    t_env_free(e);
}


static void
test_cache_limit(void **state)
{
    struct t_env *e = t_env_new("option cache-limit 1MiB\n"
                                "option high-wmark 100MiB\n", T_MAX);
    vl_fd_t *fd2;

    (void)state;
    t_warm(e, true);
    /* Fetching went on until the limit stopped it. */
    assert_true(t_dump_value(e, "cap_skips") >= 1);
    assert_true(t_dump_value(e, "bytes") >= 1024 * 1024);
    assert_true(t_dump_value(e, "bytes") < 2 * 1024 * 1024);
    /* A second fd gets no prefetch while the first holds the limit. */
    fd2 = vl_fd_new(e->dir, O_RDONLY | O_DIRECTORY, 1);
    vl_fd_unref(e->fd);
    e->fd = fd2;
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    t_list_all(e, true);
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    t_env_free(e);
}


static void
test_errors_answered_once(void **state)
{
    struct t_env *e = t_env_new("", 3000);
    struct vl_test_result res = {0}, w = {0};
    int64_t off;

    (void)state;
    /* A READDIR that fails below: its error, once. */
    assert_true(t_readdir_wind(e, 0, false, &res));
    t_answer_readdir(e, vl_mock_pop(e->mock), -EIO);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, -EIO);
    assert_int_equal(vl_mock_pending(e->mock), 0);
    vl_test_result_clear(&res);
    /* A failed prefetch: the READDIR that waited for it goes down and
     * gets the brick's answer, once. */
    assert_true(t_readdir_wind(e, 0, false, &res));
    t_answer_readdir(e, vl_mock_pop(e->mock), 0);
    off = res.reply.entries.ents[res.reply.entries.n - 1].off;
    vl_test_result_clear(&res);
    assert_true(t_readdir_wind(e, off, false, &w));
    t_answer_readdir(e, vl_mock_pop(e->mock), -EIO);
    assert_int_equal(t_dump_value(e, "prefetch_errors"), 1);
    assert_false(w.is_done);
    t_answer_readdir(e, vl_mock_pop(e->mock), -ENOENT);
    assert_int_equal(w.n_done, 1);
    assert_int_equal(w.status, -ENOENT);
    vl_test_result_clear(&w);
    t_answer_all(e);
    t_env_free(e);
}


static void
test_release_frees(void **state)
{
    struct t_env *e = t_env_new("", 3000);
    struct vl_test_result res = {0};

    (void)state;
    t_warm(e, true);
    vl_fd_unref(e->fd);
    e->fd = NULL;
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    t_env_free(e);

    /* Closed with a prefetch in flight: freed once it answers. */
    e = t_env_new("", 3000);
    assert_true(t_readdir_wind(e, 0, true, &res));
    t_answer_readdir(e, vl_mock_pop(e->mock), 0);
    vl_test_result_clear(&res);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    vl_fd_unref(e->fd);
    e->fd = NULL;
    t_answer_all(e);
    assert_int_equal(t_dump_value(e, "bytes"), 0);
    t_env_free(e);
}


/* Every allocation failure along a listing with a create in it: each
 * request is answered once; a listing that succeeds is right. */
static void
test_enomem_answers_once(void **state)
{
    (void)state;
    for (long n = 1;; n++) {
        struct t_env *e = t_env_new("", 1500);
        struct vl_test_result res[4] = {{0}};
        bool is_wound[4] = {false};
        int64_t off = 0;
        long used;

        vl_mem_fail_at(n);
        for (int i = 0; i < 4; i++) {
            if (i == 2) {
                vl_req_t *req = vl_req_new(e->g->graph->top,
                                           VL_FOP_CREATE);

                if (req == NULL)
                    continue;
                req->args.create.loc.parent = e->dir;
                req->args.create.loc.name = "new";
                vl_test_wind(req, &res[i]);
                is_wound[i] = true;
                t_answer_all(e);
                continue;
            }
            is_wound[i] = t_readdir_wind(e, off, false, &res[i]);
            t_answer_all(e);
            if (is_wound[i] && res[i].n_done == 1 && res[i].status == 0
                && res[i].reply.entries.n > 0)
                off = res[i].reply.entries.ents[res[i].reply.entries.n - 1]
                          .off;
        }
        used = vl_mem_alloc_count();
        vl_mem_fail_at(0);
        t_answer_all(e);
        for (int i = 0; i < 4; i++) {
            assert_int_equal(res[i].n_done, is_wound[i] ? 1 : 0);
            if (i != 2 && res[i].n_done == 1 && res[i].status == 0
                && res[i].reply.entries.n > 0) {
                const struct vl_dirent *d = &res[i].reply.entries.ents[0];

                assert_string_equal(d->name, e->names[d->off - 1]);
            }
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
        cmocka_unit_test(test_sequential_hits),
        cmocka_unit_test(test_seek_drops),
        cmocka_unit_test(test_inval_create_unlink_rename),
        cmocka_unit_test(test_inval_upcall),
        cmocka_unit_test(test_prefetch_racing_change_not_kept),
        cmocka_unit_test(test_cache_limit),
        cmocka_unit_test(test_errors_answered_once),
        cmocka_unit_test(test_release_frees),
        cmocka_unit_test(test_enomem_answers_once),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
