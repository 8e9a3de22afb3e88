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


static void
test_bytes_left_per_set(void **state)
{
    /* A 2 x 3 volume over nodes x, y, z; each node has one brick of each
     * set. A brick of each set is down: its node's figure is 0. */
    struct md_brick bricks[6] = {
        {.host = "x", .path = "/b0"}, {.host = "y", .path = "/b1"},
        {.host = "z", .path = "/b2"}, {.host = "x", .path = "/b3"},
        {.host = "y", .path = "/b4"}, {.host = "z", .path = "/b5"},
    };
    struct md_volume vol = {.bricks = bricks, .n_bricks = 6,
                            .replica_count = 3};
    struct md_heal_node v[3];
    static const char *const texts[3] = {
        "format=mortar-heal-state 1\npending_bytes=1300\nbricks=2\n"
        "brick0.path=/b0\nbrick0.bytes=1000\nbrick1.path=/b3\n"
        "brick1.bytes=300\n",
        "format=mortar-heal-state 1\npending_bytes=300\nbricks=2\n"
        "brick0.path=/b1\nbrick0.bytes=0\nbrick1.path=/b4\n"
        "brick1.bytes=300\n",
        "format=mortar-heal-state 1\npending_bytes=1000\nbricks=2\n"
        "brick0.path=/b2\nbrick0.bytes=1000\nbrick1.path=/b5\n"
        "brick1.bytes=0\n",
    };

    (void)state;
    memset(v, 0, sizeof(v));
    for (size_t i = 0; i < 3; i++) {
        v[i].host = bricks[i].host;
        md_heal_progress_parse(texts[i], "t", &v[i].p);
        assert_int_equal(md_heal_node_bricks_parse(&v[i], texts[i], "t"), 0);
        assert_int_equal(v[i].n_bricks, 2);
    }
    assert_string_equal(v[0].bricks[1].path, "/b3");
    /* Sets: max(1000, 0, 1000) + max(300, 300, 0), not 2600. */
    assert_int_equal(md_heal_nodes_bytes_left(&vol, v, 3), 1300);

    /* Node x down: its bricks say nothing; the others still count. */
    v[0].status = -ENOTCONN;
    assert_int_equal(md_heal_nodes_bytes_left(&vol, v, 3), 1300);

    /* An older daemon without per-brick lines: its total, once. */
    v[0].status = 0;
    for (size_t j = 0; j < v[2].n_bricks; j++)
        free(v[2].bricks[j].path);
    free(v[2].bricks);
    v[2].bricks = NULL;
    v[2].n_bricks = 0;
    assert_int_equal(md_heal_nodes_bytes_left(&vol, v, 3), 1000 + 300 + 1000);
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < v[i].n_bricks; j++)
            free(v[i].bricks[j].path);
        free(v[i].bricks);
    }
}


static void
test_bricks_parse_escaped_and_bad_lines(void **state)
{
    struct md_heal_node hn;

    (void)state;
    memset(&hn, 0, sizeof(hn));
    assert_int_equal(md_heal_node_bricks_parse(
                         &hn, "format=mortar-heal-state 1\n"
                         "brick0.path=/a%25b\nbrick0.bytes=5\n"
                         "brick1.bytes=9\nbrickX.path=/z\n"
                         "brick9999.path=/far\n", "t"), 0);
    assert_int_equal(hn.n_bricks, 1); /* brick1 has no path */
    assert_string_equal(hn.bricks[0].path, "/a%b");
    assert_int_equal(hn.bricks[0].bytes, 5);
    md_heal_nodes_free(NULL, 0);
    free(hn.bricks[0].path);
    free(hn.bricks);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum_adds_and_takes_longest_eta),
        cmocka_unit_test(test_sum_down_or_unknown_makes_eta_unknown),
        cmocka_unit_test(test_crawl_most_advanced_wins),
        cmocka_unit_test(test_progress_parse),
        cmocka_unit_test(test_bytes_left_per_set),
        cmocka_unit_test(test_bricks_parse_escaped_and_bad_lines),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("heal-nodes", tests, NULL, NULL);
}
