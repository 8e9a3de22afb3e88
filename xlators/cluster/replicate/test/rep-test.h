/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rep-test: the harness the replicate unit tests share: a graph of
 * cluster/replicate "rep" over n in-memory bricks b0.. (rep-fake.c), and
 * the calls every test makes through it.
 */
#ifndef REP_TEST_H
#define REP_TEST_H

#include "rep-fake.h"
#include "rep.h"
#include "vl-test.h"

struct t {
    struct vl_test_graph *g;
    vl_xlator_t *rep;
    vl_xlator_t *b[3];
    int n;
    vl_inode_t *root;
    char key[3][64]; /* trusted.mortar.rep.bN */
};

/* The graph of n bricks (2 or 3) with replicate's option lines opts. */
void t_open_graph(struct t *t, int n, const char *opts);
/* cmocka setup: a new struct t in *state; teardown frees it. */
int setup_n(void **state, int n, const char *opts);
int teardown(void **state);
/* Runs the loop until the timers of open write batches have fired: a
 * wait longer than post-op-delay (100 ms) that ran nothing ends it. */
void t_settle(struct t *t);
/* A synchronous fop through replicate; r cleared first. */
int t_call(struct t *t, vl_fop_t op, union vl_fop_args *a,
           struct vl_reply *r);
/* Takes child i down (its brick answers ENOTCONN and replicate hears),
 * or back up. */
void t_down(struct t *t, int i);
void t_up(struct t *t, int i);
/* Looks name up in the root through replicate; the linked inode. */
int t_lookup(struct t *t, const char *name, vl_inode_t **out);
/* A directory made through replicate in the root; its inode (a ref). */
vl_inode_t *t_mkdir(struct t *t, const char *name);

#endif /* REP_TEST_H */
