/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-heal-nodes: heal-nodes.c's sum of the self-heal daemons of a
 * volume's nodes (`volume heal VOL status`) and the progress file parser
 * it reads another node's answer with (cmd-heal.c).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mortard/mortard.h"


/* A node that answered with a progress file of these figures. */
static struct md_heal_node
node_up(long long healed, double rate, long long eta)
{
    struct md_heal_node hn;

    memset(&hn, 0, sizeof(hn));
    hn.host = "h";
    hn.p.is_read = true;
    hn.p.healed = healed;
    hn.p.healed_bytes = healed * 10;
    hn.p.pending_bytes = 100;
    hn.p.split_brain = 1;
    hn.p.waiting = 2;
    hn.p.rate = rate;
    hn.p.rate_bytes = rate * 10;
    hn.p.eta_seconds = eta;
    return hn;
}


static void
test_sum_adds_and_takes_longest_eta(void **state)
{
    struct md_heal_node v[3] = {node_up(5, 1.5, 10), node_up(7, 2.5, 30),
                                node_up(0, 0, 0)};
    struct md_heal_sum sum;

    (void)state;
    md_heal_nodes_sum(v, 3, &sum);
    assert_int_equal(sum.n_down, 0);
    assert_true(sum.p.is_read);
    assert_int_equal(sum.p.healed, 12);
    assert_int_equal(sum.p.healed_bytes, 120);
    assert_int_equal(sum.p.pending_bytes, 300);
    assert_int_equal(sum.p.split_brain, 3);
    assert_int_equal(sum.p.waiting, 6);
    assert_true(sum.p.rate > 3.99 && sum.p.rate < 4.01);
    assert_int_equal(sum.p.eta_seconds, 30);
    assert_int_equal(sum.crawl, MD_HEAL_CRAWL_NEVER);
}


static void
test_sum_down_or_unknown_makes_eta_unknown(void **state)
{
    struct md_heal_node v[2] = {node_up(5, 1.5, 10), node_up(7, 2.5, 30)};
    struct md_heal_sum sum;

    (void)state;
    v[1].status = -ENOTCONN;
    md_heal_nodes_sum(v, 2, &sum);
    assert_int_equal(sum.n_down, 1);
    assert_int_equal(sum.p.healed, 5); /* the node down is not counted */
    assert_int_equal(sum.p.eta_seconds, -1);

    v[1] = node_up(7, 2.5, -1); /* its daemon has no estimate */
    md_heal_nodes_sum(v, 2, &sum);
    assert_int_equal(sum.n_down, 0);
    assert_int_equal(sum.p.eta_seconds, -1);

    v[1] = node_up(7, 2.5, 30);
    v[1].p.is_read = false; /* no progress file */
    md_heal_nodes_sum(v, 2, &sum);
    assert_false(sum.p.is_read);
    assert_int_equal(sum.p.eta_seconds, -1);

    md_heal_nodes_sum(v, 0, &sum);
    assert_int_equal(sum.p.eta_seconds, 0);
    assert_int_equal(sum.n_down, 0);
}


static void
test_crawl_most_advanced_wins(void **state)
{
    struct md_heal_node v[3] = {node_up(0, 0, 0), node_up(0, 0, 0),
                                node_up(0, 0, 0)};
    struct md_heal_sum sum;

    (void)state;
    v[0].p.crawl_done_at = 1000;
    v[0].p.crawl_visited = 100;
    v[1].p.crawl_done_at = 2000;
    v[1].p.crawl_visited = 20;
    assert_int_equal(md_heal_node_crawl(&v[2]), MD_HEAL_CRAWL_NEVER);
    md_heal_nodes_sum(v, 3, &sum);
    assert_int_equal(sum.crawl, MD_HEAL_CRAWL_FINISHED);
    assert_int_equal(sum.p.crawl_done_at, 2000);
    assert_int_equal(sum.p.crawl_visited, 120);

    v[2].is_full_asked = true;
    assert_int_equal(md_heal_node_crawl(&v[2]), MD_HEAL_CRAWL_REQUESTED);
    md_heal_nodes_sum(v, 3, &sum);
    assert_int_equal(sum.crawl, MD_HEAL_CRAWL_REQUESTED);

    v[0].p.full_crawl = 1;
    md_heal_nodes_sum(v, 3, &sum);
    assert_int_equal(sum.crawl, MD_HEAL_CRAWL_RUNNING);

    /* A node down says nothing of its crawl. */
    v[0].status = -ENOTCONN;
    v[2].is_full_asked = false;
    md_heal_nodes_sum(v, 3, &sum);
    assert_int_equal(sum.crawl, MD_HEAL_CRAWL_FINISHED);
}


static void
test_progress_parse(void **state)
{
    struct md_heal_progress p;

    (void)state;
    md_heal_progress_parse("format=mortar-heal-state 1\nhealed=7\n"
                           "rate=2.500\neta_seconds=30\nfull_crawl=1\n"
                           "brick0.pending=3\n", "n2:heal/v.state", &p);
    assert_true(p.is_read);
    assert_int_equal(p.healed, 7);
    assert_int_equal(p.eta_seconds, 30);
    assert_int_equal(p.full_crawl, 1);
    assert_true(p.rate > 2.49 && p.rate < 2.51);

    /* Not key=value lines: not read, no estimate. */
    md_heal_progress_parse("garbage\n", "n2:heal/v.state", &p);
    assert_false(p.is_read);
    assert_int_equal(p.eta_seconds, -1);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum_adds_and_takes_longest_eta),
        cmocka_unit_test(test_sum_down_or_unknown_makes_eta_unknown),
        cmocka_unit_test(test_crawl_most_advanced_wins),
        cmocka_unit_test(test_progress_parse),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("heal-nodes", tests, NULL, NULL);
}
