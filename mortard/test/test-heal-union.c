/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-heal-union: heal-union.c's count once per replica set of what
 * the bricks' lists name (`volume heal VOL status`: entries left, in
 * split-brain, waiting for a brick): the union by GFID per set, sets
 * added, the largest list of a set not all named, bricks not read left
 * out.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mortard/mortard.h"


/* GFID number k as a bare GFID string. */
static char *
t_gfid(unsigned k)
{
    char *s = malloc(VL_GFID_STR_LEN);

    assert_non_null(s);
    snprintf(s, VL_GFID_STR_LEN, "0a000000-0000-4000-8000-%012x", k);
    return s;
}


/* hb names the GFIDs ks[0..n-1] (of count entries in all). */
static void
t_list(struct md_heal_brick *hb, uint64_t count, const unsigned *ks,
       size_t n)
{
    memset(hb, 0, sizeof(*hb));
    hb->n = count;
    hb->names = calloc(n + 1, sizeof(*hb->names));
    assert_non_null(hb->names);
    for (size_t i = 0; i < n; i++)
        hb->names[hb->n_names++] = t_gfid(ks[i]);
}


static void
t_clear(struct md_heal_brick *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        md_heal_brick_clear(&v[i]);
}


/* Two daemons (or two copies) naming the same objects count them once;
 * the sets are added. */
static void
test_union_per_set(void **state)
{
    static const unsigned a[] = {1, 2, 3}, b[] = {3, 2, 4}, c[] = {1},
                          d[] = {1, 5};
    struct md_heal_brick v[4];

    (void)state;
    /* replica 2: {1,2,3} u {2,3,4} = 4; {1} u {1,5} = 2 (the same GFID
     * in two sets is two objects' copies: counted in each). */
    t_list(&v[0], 3, a, 3);
    t_list(&v[1], 3, b, 3);
    t_list(&v[2], 1, c, 1);
    t_list(&v[3], 2, d, 2);
    assert_int_equal(md_heal_union_count(v, 4, 2), 6);
    /* replica 4: one set, {1,2,3,4,5}. */
    assert_int_equal(md_heal_union_count(v, 4, 4), 5);
    /* replica 1: a sum. */
    assert_int_equal(md_heal_union_count(v, 4, 1), 9);
    t_clear(v, 4);
}


/* A brick not read (its node not answering, its daemon not listing it)
 * is left out of its set; empty lists count nothing. */
static void
test_union_not_read(void **state)
{
    static const unsigned a[] = {1, 2}, b[] = {2, 3, 4};
    struct md_heal_brick v[3];

    (void)state;
    t_list(&v[0], 2, a, 2);
    t_list(&v[1], 3, b, 3);
    t_list(&v[2], 0, NULL, 0);
    v[1].status = -107;
    assert_int_equal(md_heal_union_count(v, 3, 3), 2);
    v[1].status = 0;
    assert_int_equal(md_heal_union_count(v, 3, 3), 4);
    v[0].status = v[1].status = -61;
    assert_int_equal(md_heal_union_count(v, 3, 3), 0);
    t_clear(v, 3);
}


/* A set with a brick whose GFIDs were not all named (over a bound) or
 * named otherwise (an older node's shown names) counts its largest list:
 * a lower bound, never a double count. The other sets stay unions. */
static void
test_union_partial(void **state)
{
    static const unsigned a[] = {1, 2}, b[] = {2, 3}, c[] = {7}, d[] = {7};
    struct md_heal_brick v[4];

    (void)state;
    t_list(&v[0], 5, a, 2); /* 5 listed, 2 named */
    t_list(&v[1], 2, b, 2);
    t_list(&v[2], 1, c, 1);
    t_list(&v[3], 1, d, 1);
    assert_int_equal(md_heal_union_count(v, 4, 2), 5 + 1);
    v[0].n = 2;
    assert_int_equal(md_heal_union_count(v, 4, 2), 3 + 1);
    free(v[3].names[0]);
    v[3].names[0] = strdup("/dir");
    assert_non_null(v[3].names[0]);
    assert_int_equal(md_heal_union_count(v, 4, 2), 3 + 1);
    free(v[2].names[0]);
    v[2].names[0] = strdup("<gfid:0a000000-0000-4000-8000-000000000007>");
    v[2].n = 4;
    assert_int_equal(md_heal_union_count(v, 4, 2), 3 + 4);
    t_clear(v, 4);
}


/* A last set shorter than replica (a volume being changed) is a set. */
static void
test_union_short_set(void **state)
{
    static const unsigned a[] = {1}, b[] = {1}, c[] = {1, 2};
    struct md_heal_brick v[3];

    (void)state;
    t_list(&v[0], 1, a, 1);
    t_list(&v[1], 1, b, 1);
    t_list(&v[2], 2, c, 2);
    assert_int_equal(md_heal_union_count(v, 3, 2), 1 + 2);
    assert_int_equal(md_heal_union_count(v, 0, 2), 0);
    t_clear(v, 3);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_union_per_set),
        cmocka_unit_test(test_union_not_read),
        cmocka_unit_test(test_union_partial),
        cmocka_unit_test(test_union_short_set),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("heal-union", tests, NULL, NULL);
}
