/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-inode: link/find/get, refcounts, LRU with lru_limit, forget hooks,
 * unlink, ctx areas, and fd release hooks. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "vl-test.h"

static int n_forget;        /* forget() calls */
static int n_release;       /* release() calls */
static char release_order[8]; /* names' first letters, in call order */


static void
t_forget(vl_xlator_t *xl, vl_inode_t *inode)
{
    uint64_t *ctx = vl_inode_ctx(inode, xl);

    if (ctx != NULL && *ctx == 0xfeed)
        n_forget++;
}


static void
t_release(vl_xlator_t *xl, vl_fd_t *fd)
{
    int *ctx = vl_fd_ctx(fd, xl);

    if (ctx != NULL && *ctx == 1) {
        release_order[n_release++] = xl->name[0];
    }
}


static const vl_xlator_class_t cls_ctx_leaf = {
    .abi = VL_XLATOR_ABI, .type = "test/ctx-leaf", .flags = VL_XL_LEAF,
    .inode_ctx_size = sizeof(uint64_t), .fd_ctx_size = sizeof(int),
    .forget = t_forget, .release = t_release,
};
static const vl_xlator_class_t cls_ctx_mid = {
    .abi = VL_XLATOR_ABI, .type = "test/ctx-mid", .flags = VL_XL_ONE_CHILD,
    .inode_ctx_size = 24, .fd_ctx_size = sizeof(int),
    .release = t_release,
};


static void
gfid_n(vl_gfid_t *g, unsigned n)
{
    memset(g, 0, sizeof(*g));
    g->bytes[0] = 0xaa;
    g->bytes[15] = (uint8_t)n;
    g->bytes[14] = (uint8_t)(n >> 8);
}


static void
test_gfid_helpers(void **state)
{
    char s[VL_GFID_STR_LEN];
    vl_gfid_t a;
    vl_gfid_t b;

    assert_true(vl_gfid_is_root(&vl_gfid_root));
    assert_true(vl_gfid_is_null(&vl_gfid_null));
    assert_int_equal(vl_gfid_to_ino(&vl_gfid_root), 1);
    assert_string_equal(vl_gfid_to_str(&vl_gfid_root, s),
                        "00000000-0000-0000-0000-000000000001");
    vl_gfid_generate(&a);
    assert_false(vl_gfid_is_null(&a));
    assert_int_equal(vl_gfid_parse(vl_gfid_to_str(&a, s), &b), 0);
    assert_true(vl_gfid_equal(&a, &b));
    assert_int_equal(vl_gfid_parse("not-a-gfid", &b), -EINVAL);
    assert_int_equal(vl_gfid_parse("00000000-0000-0000-0000-0000000000011",
                                   &b), -EINVAL);
}


/* New GFIDs: RFC 4122 version 4, all distinct (also across the
 * refills of the per-thread pool), and a forked child never hands out
 * what its parent will: both drew from one pool before the fork. */
static void
test_gfid_generate_unique_and_fork(void **state)
{
    enum { N = 2000 };
    vl_gfid_t *g = calloc(N, sizeof(*g));
    vl_gfid_t parent_next;
    vl_gfid_t child_next;
    int pipefd[2];
    int status;
    pid_t pid;

    (void)state;
    assert_non_null(g);
    for (int i = 0; i < N; i++) {
        vl_gfid_generate(&g[i]);
        assert_int_equal(g[i].bytes[6] >> 4, 4);
        assert_int_equal(g[i].bytes[8] >> 6, 2);
    }
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            assert_false(vl_gfid_equal(&g[i], &g[j]));
    free(g);

    assert_int_equal(pipe(pipefd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        vl_gfid_generate(&child_next);
        _exit(write(pipefd[1], child_next.bytes, 16) == 16 ? 0 : 1);
    }
    vl_gfid_generate(&parent_next);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(read(pipefd[0], child_next.bytes, 16), 16);
    close(pipefd[0]);
    close(pipefd[1]);
    assert_false(vl_gfid_equal(&parent_next, &child_next));
}


/* A thread's GFIDs come in runs of 256 that share their first two bytes
 * (a brick's handle directory), and the runs differ. */
static void
test_gfid_generate_handle_runs(void **state)
{
    enum { N = 1024 };
    unsigned runs = 0;
    vl_gfid_t prev = {{0}};
    vl_gfid_t g;

    (void)state;
    for (int i = 0; i < N; i++) {
        vl_gfid_generate(&g);
        if (i == 0 || g.bytes[0] != prev.bytes[0]
            || g.bytes[1] != prev.bytes[1])
            runs++;
        assert_false(vl_gfid_equal(&g, &prev));
        prev = g;
    }
    /* 4 refills, and the pool the earlier tests left; two successive
     * refills may draw the same prefix (1 in 65536). */
    assert_in_range(runs, 3, 5);
}


static void
test_link_find_lru(void **state)
{
    vl_inode_table_t *t = vl_inode_table_new(NULL, 0, 2);
    struct vl_iatt ia = {.mode = S_IFREG | 0644};
    vl_inode_t *in;
    vl_inode_t *l;
    vl_inode_t *f;
    vl_inode_t *root;
    unsigned i;

    assert_non_null(t);
    assert_int_equal(vl_inode_table_active(t), 1); /* root */
    root = vl_inode_table_root(t);
    assert_true(vl_gfid_is_root(&root->gfid));
    assert_int_equal(root->type, S_IFDIR);
    vl_inode_unref(root);

    in = vl_inode_new(t);
    assert_true(vl_gfid_is_null(&in->gfid));
    gfid_n(&ia.gfid, 1);
    assert_null(vl_inode_find(t, &ia.gfid));
    l = vl_inode_link(in, &ia);
    assert_ptr_equal(l, in);
    assert_int_equal(in->type, S_IFREG);
    f = vl_inode_find(t, &ia.gfid);
    assert_ptr_equal(f, in);

    /* A second inode linked under the same GFID yields the first. */
    {
        vl_inode_t *dup = vl_inode_new(t);
        vl_inode_t *got = vl_inode_link(dup, &ia);

        assert_ptr_equal(got, in);
        vl_inode_unref(got);
        vl_inode_unref(dup); /* unlinked: freed */
    }
    vl_inode_unref(f);
    vl_inode_unref(l);
    vl_inode_unref(in);
    assert_int_equal(vl_inode_table_active(t), 1);
    assert_int_equal(vl_inode_table_lru(t), 1);
    /* Still found from the LRU. */
    f = vl_inode_find(t, &ia.gfid);
    assert_ptr_equal(f, in);
    assert_int_equal(vl_inode_table_lru(t), 0);
    vl_inode_unref(f);

    /* More than lru_limit cached: the oldest go. */
    for (i = 2; i <= 5; i++) {
        vl_gfid_t g;

        gfid_n(&g, i);
        vl_inode_unref(vl_inode_get(t, &g, S_IFDIR));
    }
    assert_int_equal(vl_inode_table_lru(t), 2);
    assert_null(vl_inode_find(t, &ia.gfid));
    gfid_n(&ia.gfid, 5);
    f = vl_inode_find(t, &ia.gfid);
    assert_non_null(f);
    assert_int_equal(f->type, S_IFDIR);
    vl_inode_unlink(f);
    assert_null(vl_inode_find(t, &ia.gfid));
    vl_inode_unref(f);
    assert_int_equal(vl_inode_table_lru(t), 1);
    vl_inode_table_free(t);
}


/* The hash grows with the inodes it holds: 100,000 linked inodes (random
 * GFIDs, as the bricks make them) end in more than the first 16,384
 * buckets, and each is still found, also after most are dropped again. */
static void
test_hash_grows(void **state)
{
    enum { N = 100000 };
    vl_inode_table_t *t = vl_inode_table_new(NULL, 0, N);
    vl_inode_t **in = calloc(N, sizeof(*in));
    size_t first;

    (void)state;
    assert_non_null(t);
    assert_non_null(in);
    first = vl_inode_table_buckets(t);
    for (unsigned i = 0; i < N; i++) {
        vl_gfid_t g;

        vl_gfid_generate(&g);
        in[i] = vl_inode_get(t, &g, S_IFREG);
        assert_non_null(in[i]);
    }
    assert_true(vl_inode_table_buckets(t) >= 4 * first);
    assert_true(N <= 2 * vl_inode_table_buckets(t));
    for (unsigned i = 0; i < N; i++) {
        vl_inode_t *f = vl_inode_find(t, &in[i]->gfid);

        assert_ptr_equal(f, in[i]);
        vl_inode_unref(f);
    }
    /* Unlinked ones leave the hash; the others stay findable. */
    for (unsigned i = 0; i < N; i += 2)
        vl_inode_unlink(in[i]);
    for (unsigned i = 0; i < N; i++) {
        vl_inode_t *f = vl_inode_find(t, &in[i]->gfid);

        if (i % 2 == 0) {
            assert_null(f);
        } else {
            assert_ptr_equal(f, in[i]);
            vl_inode_unref(f);
        }
        vl_inode_unref(in[i]);
    }
    free(in);
    vl_inode_table_free(t);
}


static void
test_ctx_forget_release(void **state)
{
    vl_err_t err = {{0}};
    struct vl_test_graph *g;
    vl_xlator_t *leaf;
    vl_xlator_t *mid;
    vl_inode_t *in;
    vl_fd_t *fd;
    vl_fd_t *fd2;
    vl_gfid_t gf;
    uint64_t *ictx;

    assert_int_equal(vl_registry_add(&cls_ctx_leaf), 0);
    assert_int_equal(vl_registry_add(&cls_ctx_mid), 0);
    g = vl_test_graph_new("volume l\n type test/ctx-leaf\nend-volume\n"
                          "volume m\n type test/ctx-mid\n subvolumes l\n"
                          "end-volume\n", &err);
    assert_non_null(g);
    leaf = vl_test_graph_xl(g, "l");
    mid = vl_test_graph_xl(g, "m");
    assert_true(g->graph->inode_ctx_size >= 8 + 24);
    gfid_n(&gf, 9);
    in = vl_inode_get(g->graph->itable, &gf, S_IFREG);
    ictx = vl_inode_ctx(in, leaf);
    assert_non_null(ictx);
    assert_int_equal(*ictx, 0);
    assert_ptr_not_equal((void *)ictx, vl_inode_ctx(in, mid));
    *ictx = 0xfeed;
    memset(vl_inode_ctx(in, mid), 0xff, 24); /* must not touch leaf's */
    assert_int_equal(*ictx, 0xfeed);

    fd = vl_fd_new(in, 2, 77);
    assert_int_equal(fd->flags, 2);
    assert_int_equal(fd->pid, 77);
    fd2 = vl_fd_new(in, 0, 1);
    assert_int_not_equal(fd->lk_owner, fd2->lk_owner);
    *(int *)vl_fd_ctx(fd, leaf) = 1;
    *(int *)vl_fd_ctx(fd, mid) = 1;
    vl_fd_ref(fd);
    vl_fd_unref(fd);
    assert_int_equal(n_release, 0);
    vl_fd_unref(fd);
    assert_int_equal(n_release, 2);
    assert_memory_equal(release_order, "ml", 2); /* top first */
    vl_fd_unref(fd2);
    assert_int_equal(n_release, 2);

    vl_inode_unref(in);
    assert_int_equal(n_forget, 0); /* cached in the LRU */
    vl_test_graph_free(g);
    assert_int_equal(n_forget, 1);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gfid_helpers),
        cmocka_unit_test(test_gfid_generate_unique_and_fork),
        cmocka_unit_test(test_gfid_generate_handle_runs),
        cmocka_unit_test(test_link_find_lru),
        cmocka_unit_test(test_hash_grows),
        cmocka_unit_test(test_ctx_forget_release),
    };

    vl_global_init();
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
