/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-rounds: the round-by-round mock harness of dist-rounds.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../builtin.h"
#include "dist-rounds.h"


static void
rd_fresh_layout(struct rd *t)
{
    struct dist_layout *l = dist_layout_new(t->dht, RD_N);

    assert_non_null(l);
    dist_layout_default(l, dist_mask_none(), 1, DIST_FLAG_COMMITTED);
    dist_ictx_set_layout(t->dht, t->root, l);
}


int
rd_setup(void **state)
{
    struct rd *t = calloc(1, sizeof(*t));
    char text[1024], name[8];
    vl_err_t err = {{0}};

    assert_non_null(t);
    vl_global_init();
    vl_log_set_level(VL_LOG_ERROR);
    vl_registry_add(&xl_cluster_distribute);
    snprintf(text, sizeof(text),
             "volume m0\n type debug/mock\nend-volume\n"
             "volume m1\n type debug/mock\nend-volume\n"
             "volume m2\n type debug/mock\nend-volume\n"
             "volume m3\n type debug/mock\nend-volume\n"
             "volume dht\n type cluster/distribute\n"
             " option min-free-disk 0%%\n subvolumes m0 m1 m2 m3\n"
             "end-volume\n");
    t->g = vl_test_graph_new(text, &err);
    if (t->g == NULL)
        fail_msg("graph: %s", err.msg);
    t->dht = vl_test_graph_xl(t->g, "dht");
    for (int i = 0; i < RD_N; i++) {
        snprintf(name, sizeof(name), "m%d", i);
        t->m[i] = vl_test_graph_xl(t->g, name);
    }
    t->root = vl_inode_table_root(t->g->graph->itable);
    rd_fresh_layout(t);
    *state = t;
    return 0;
}


int
rd_teardown(void **state)
{
    struct rd *t = *state;

    vl_inode_unref(t->root);
    vl_test_graph_free(t->g);
    free(t);
    return 0;
}


/* A name in the root that hashes to subvolume want. */
void
rd_name_on(struct rd *t, int want, const char *prefix, char *buf,
           size_t len)
{
    struct dist_layout *l = dist_layout_new(t->dht, RD_N);

    assert_non_null(l);
    dist_layout_default(l, dist_mask_none(), 1, DIST_FLAG_COMMITTED);
    for (int k = 0; k < 100000; k++) {
        snprintf(buf, len, "%s%d", prefix, k);
        if (dist_layout_search(l, buf) == want) {
            vl_free(l);
            return;
        }
    }
    fail_msg("no name for %d", want);
}


size_t
rd_pending(struct rd *t)
{
    size_t n = 0;

    for (int i = 0; i < RD_N; i++)
        n += vl_mock_pending(t->m[i]);
    return n;
}


/* Waits for the next round (or the end of the request), notes what is
 * waiting and answers it with fn. false when res finished first. */
bool
rd_round(struct rd *t, struct vl_test_result *res, rd_answer_fn *fn,
         struct rd_round *out)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < 5000 && rd_pending(t) == 0 && !res->is_done; i++)
        usleep(1000);
    if (rd_pending(t) == 0) {
        assert_true(res->is_done);
        return false;
    }
    /* The rest of the round is wound by the same thread in a loop. */
    usleep(50000);
    for (int i = 0; i < RD_N; i++) {
        vl_req_t *r = vl_mock_peek(t->m[i]);

        if (r == NULL)
            continue;
        out->mask |= 1ULL << i;
        out->op[i] = r->op;
        out->n[i] = (unsigned)vl_mock_pending(t->m[i]);
    }
    /* Only what was there: answers may wind the next round at once. */
    for (int i = 0; i < RD_N; i++) {
        for (unsigned k = 0; k < out->n[i]; k++) {
            vl_req_t *r = vl_mock_pop(t->m[i]);
            struct vl_iatt ia;
            int st;

            memset(&ia, 0, sizeof(ia));
            st = fn(i, r, &ia);
            r->reply.iatt = ia;
            vl_unwind(r, st);
        }
    }
    return true;
}


void
rd_wait_done(struct rd *t, struct vl_test_result *res)
{
    for (int i = 0; i < 5000 && !res->is_done; i++)
        usleep(1000);
    assert_true(res->is_done);
    assert_int_equal(res->n_done, 1);
    assert_int_equal(rd_pending(t), 0);
}



int
rd_ok(int mock, vl_req_t *r, struct vl_iatt *ia)
{
    (void)mock;
    (void)r;
    (void)ia;
    return 0;
}


vl_inode_t *
rd_file(struct rd *t, int cached, int hashed)
{
    vl_gfid_t g;
    vl_inode_t *inode;

    vl_gfid_generate(&g);
    inode = vl_inode_get(t->g->graph->itable, &g, S_IFREG);
    assert_non_null(inode);
    dist_ictx_set_file(t->dht, inode, cached, hashed, cached != hashed);
    return inode;
}


void
rd_reply_layout(int mock, vl_req_t *r)
{
    struct dist_layout *l = dist_layout_new(NULL, RD_N);

    assert_non_null(l);
    dist_layout_default(l, dist_mask_none(), 1, DIST_FLAG_COMMITTED);
    r->reply.xattr = vl_malloc(NULL, DIST_LAYOUT_SIZE, VL_MT_REPLY);
    assert_non_null(r->reply.xattr);
    dist_layout_encode(&l->r[mock], (unsigned char *)r->reply.xattr);
    r->reply.xattr_len = DIST_LAYOUT_SIZE;
    vl_free(l);
}


int
rd_answer_dir_read(int mock, vl_req_t *r, struct vl_iatt *ia,
                   const vl_gfid_t *gfid, unsigned *reads)
{
    if (mock == 0)
        (*reads)++;
    ia->gfid = *gfid;
    ia->mode = S_IFDIR | 0755;
    ia->nlink = 2;
    if (VL_ARGS(r, lookup)->xattr_name != NULL)
        rd_reply_layout(mock, r);
    return 0;
}
