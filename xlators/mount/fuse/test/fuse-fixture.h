/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-fixture: what the session-table tests share: a vfuse_table under
 * test and two inode tables standing for two graphs (generations 1 and
 * 2), with cmocka setup/teardown and a GFID maker.
 */
#ifndef FUSE_TEST_FIXTURE_H
#define FUSE_TEST_FIXTURE_H

#include <stdint.h>

#include "fuse.h"

struct fixture {
    struct vfuse_table t;   /* under test */
    vl_inode_table_t *g1;   /* "graph" 1's inodes */
    vl_inode_table_t *g2;   /* "graph" 2's inodes */
};

int fixture_setup(void **state);
int fixture_teardown(void **state);
/* A GFID that is n in its last byte (and not the root's). */
vl_gfid_t fixture_gfid(uint8_t n);

#endif /* FUSE_TEST_FIXTURE_H */
