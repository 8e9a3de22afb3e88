/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-test: the replicate unit tests' shared harness (rep-test.h).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "builtin.h"
#include "rep-test.h"


void
t_open_graph(struct t *t, int n, const char *opts)
{
    char text[2048];
    size_t len = 0;
    vl_err_t err = {{0}};

    vl_registry_add(&rep_fake_class);
    vl_registry_add(&xl_cluster_replicate);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                "volume b%d\n type test/rep-fake\n"
                                "end-volume\n", i);
    len += (size_t)snprintf(text + len, sizeof(text) - len,
                            "volume rep\n type cluster/replicate\n%s"
                            " subvolumes", opts);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, " b%d", i);
    snprintf(text + len, sizeof(text) - len, "\nend-volume\n");
    t->g = vl_test_graph_new(text, &err);
    if (t->g == NULL)
        fail_msg("graph: %s", err.msg);
    t->n = n;
    t->rep = vl_test_graph_xl(t->g, "rep");
    for (int i = 0; i < n; i++) {
        char name[16];

        snprintf(name, sizeof(name), "b%d", i);
        t->b[i] = vl_test_graph_xl(t->g, name);
        snprintf(t->key[i], sizeof(t->key[i]), REP_KEY_PREFIX "b%d", i);
    }
    t->root = vl_inode_table_root(t->g->graph->itable);
}


int
setup_n(void **state, int n, const char *opts)
{
    struct t *t = calloc(1, sizeof(*t));

    vl_global_init();
    vl_log_set_level(VL_LOG_CRITICAL);
    t_open_graph(t, n, opts);
    *state = t;
    return 0;
}


int
teardown(void **state)
{
    struct t *t = *state;

    t_settle(t);
    vl_inode_unref(t->root);
    vl_test_graph_free(t->g);
    free(t);
    return 0;
}


int
t_call(struct t *t, vl_fop_t op, union vl_fop_args *a, struct vl_reply *r)
{
    memset(r, 0, sizeof(*r));
    return vl_sync_call(t->rep, op, a, NULL, r);
}


void
t_down(struct t *t, int i)
{
    fake_set_down(t->b[i], true);
    vl_notify(t->rep, VL_EV_CHILD_DOWN, t->b[i]);
}


void
t_up(struct t *t, int i)
{
    fake_set_down(t->b[i], false);
    vl_notify(t->rep, VL_EV_CHILD_UP, t->b[i]);
}


/* Looks name up in the root through replicate; the linked inode. */
int
t_lookup(struct t *t, const char *name, vl_inode_t **out)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->g->graph->itable);
    int rc;

    a.lookup.loc.parent = t->root;
    a.lookup.loc.name = name;
    a.lookup.loc.inode = inode;
    rc = t_call(t, VL_FOP_LOOKUP, &a, &r);
    if (rc == 0 && out != NULL) {
        *out = vl_inode_link(inode, &r.iatt);
        assert_non_null(*out);
    }
    vl_inode_unref(inode);
    vl_reply_clear(&r);
    return rc;
}


void
t_settle(struct t *t)
{
    for (int i = 0; i < 5; i++)
        if (vl_loop_run_once(t->g->loop, 150) == 0)
            break;
}


/* A directory made through replicate in the root; its inode. */
vl_inode_t *
t_mkdir(struct t *t, const char *name)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    vl_inode_t *inode = vl_inode_new(t->g->graph->itable);
    vl_inode_t *linked;

    a.mkdir.loc.parent = t->root;
    a.mkdir.loc.name = name;
    a.mkdir.loc.inode = inode;
    a.mkdir.mode = 0755;
    vl_gfid_generate(&a.mkdir.gfid);
    assert_int_equal(t_call(t, VL_FOP_MKDIR, &a, &r), 0);
    linked = vl_inode_link(inode, &r.iatt);
    vl_reply_clear(&r);
    vl_inode_unref(inode);
    return linked;
}
