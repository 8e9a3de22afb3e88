/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuse-fixture: see fuse-fixture.h. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fuse-fixture.h"


int
fixture_setup(void **state)
{
    struct fixture *f = test_calloc(1, sizeof(*f));

    assert_non_null(f);
    assert_int_equal(vfuse_table_init(&f->t), 0);
    f->g1 = vl_inode_table_new(NULL, 0, 16);
    f->g2 = vl_inode_table_new(NULL, 0, 16);
    assert_non_null(f->g1);
    assert_non_null(f->g2);
    *state = f;
    return 0;
}


int
fixture_teardown(void **state)
{
    struct fixture *f = *state;

    vfuse_table_clear(&f->t);
    vl_inode_table_free(f->g1);
    vl_inode_table_free(f->g2);
    test_free(f);
    return 0;
}


vl_gfid_t
fixture_gfid(uint8_t n)
{
    vl_gfid_t g;

    memset(&g, 0, sizeof(g));
    g.bytes[0] = 0xab;
    g.bytes[15] = n;
    return g;
}
