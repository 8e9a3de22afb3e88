/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rebal-bar: the rebalance status bar (cli/rebal-bar.c): mortard's
 * table read back (rows summed, "in progress" as two words, sizes in its
 * units, the time left per node), the percentage from run time and time
 * left, the line while estimating and with failures, and which commands
 * get the bar. The tables are made with mortard's own formats
 * (mortard/rebalance.c, md_rebal_show).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"

#define ROW "%40s %16lld %13s %13lld %13lld %13lld %20s %18s\n"


/* A table of up to two rows and the notes after it, as mortard prints. */
static void
table(char *buf, size_t len, const char *row1, const char *row2,
      const char *notes)
{
    int n = snprintf(buf, len, "%40s %16s %13s %13s %13s %13s %20s %18s\n",
                     "Node", "Rebalanced-files", "size", "scanned",
                     "failures", "skipped", "status", "run time in h:m:s");

    n += snprintf(buf + n, len - (size_t)n,
                  "%40s %16s %13s %13s %13s %13s %20s %18s\n", "---------",
                  "-----------", "-----------", "-----------",
                  "-----------", "-----------", "------------",
                  "--------------");
    snprintf(buf + n, len - (size_t)n, "%s%s%s", row1, row2, notes);
}


static void
test_parse_running(void **state)
{
    struct cli_rebal_status st;
    char row[256], text[2048];

    (void)state;
    snprintf(row, sizeof(row), ROW, "localhost", 250LL, "80.0MB", 500LL,
             0LL, 3LL, "in progress", "0:00:10");
    table(text, sizeof(text), row, "",
          "Estimated time left for rebalance to complete : 0:00:30\n");
    assert_true(cli_rebal_status_parse(text, &st));
    assert_int_equal(st.n_nodes, 1);
    assert_int_equal(st.n_running, 1);
    assert_int_equal(st.files, 250);
    assert_int_equal(st.bytes, 80LL * 1024 * 1024);
    assert_int_equal(st.scanned, 500);
    assert_int_equal(st.skipped, 3);
    assert_int_equal(st.run_s, 10);
    assert_int_equal(st.eta_s, 30);
    assert_false(st.is_estimating);
    /* 10 s run, 30 s left: a quarter. */
    assert_int_equal(cli_rebal_percent(&st), 25);
}


static void
test_parse_two_nodes(void **state)
{
    struct cli_rebal_status st;
    char r1[256], r2[256], text[2048];

    (void)state;
    snprintf(r1, sizeof(r1), ROW, "localhost", 10LL, "512Bytes", 20LL, 0LL,
             0LL, "completed", "0:00:40");
    snprintf(r2, sizeof(r2), ROW, "10.0.0.2", 30LL, "1.5KB", 60LL, 2LL,
             0LL, "in progress", "0:01:00");
    table(text, sizeof(text), r1, r2,
          "Estimated time left for rebalance to complete on node 10.0.0.2 "
          ": 0:01:00\nLast error on node 10.0.0.2: disk full\n");
    assert_true(cli_rebal_status_parse(text, &st));
    assert_int_equal(st.n_nodes, 2);
    assert_int_equal(st.n_running, 1);
    assert_int_equal(st.files, 40);
    assert_int_equal(st.bytes, 512 + 1536);
    assert_int_equal(st.failures, 2);
    assert_int_equal(st.run_s, 60);
    assert_int_equal(cli_rebal_percent(&st), 50);
}


static void
test_parse_not_a_table(void **state)
{
    struct cli_rebal_status st;

    (void)state;
    assert_false(cli_rebal_status_parse(NULL, &st));
    assert_false(cli_rebal_status_parse("", &st));
    assert_false(cli_rebal_status_parse("Rebalance not started for volume "
                                        "v0", &st));
}


static void
test_bar_line(void **state)
{
    struct cli_rebal_status st;
    char row[256], text[2048], line[512];

    (void)state;
    snprintf(row, sizeof(row), ROW, "localhost", 250LL, "40.0MB", 500LL,
             0LL, 0LL, "in progress", "0:00:20");
    table(text, sizeof(text), row, "",
          "Estimated time left for rebalance to complete : 0:00:20\n");
    assert_true(cli_rebal_status_parse(text, &st));
    cli_rebal_bar(&st, line, sizeof(line));
    assert_string_equal(line, "[##########..........]  50%  ETA 20 s  250 "
                              "files (40.0 MiB) moved of 500 scanned, "
                              "12.5 files/s, 2.0 MiB/s");
    st.failures = 4;
    cli_rebal_bar(&st, line, sizeof(line));
    assert_non_null(strstr(line, "2.0 MiB/s, 4 failed"));
}


static void
test_bar_estimating(void **state)
{
    struct cli_rebal_status st;
    char row[256], text[2048], line[512];

    (void)state;
    snprintf(row, sizeof(row), ROW, "localhost", 0LL, "0Bytes", 3LL, 0LL,
             0LL, "in progress", "0:00:00");
    table(text, sizeof(text), row, "",
          "Estimated time left for remove-brick to complete : unknown "
          "(still estimating)\n");
    assert_true(cli_rebal_status_parse(text, &st));
    assert_true(st.is_estimating);
    assert_int_equal(cli_rebal_percent(&st), -1);
    cli_rebal_bar(&st, line, sizeof(line));
    /* What is known (3 scanned), and no rate before a second has run. */
    assert_string_equal(line, "[....................]   ?%  ETA estimating"
                              "  0 files (0 B) moved of 3 scanned, ?, ?");
}


static void
test_percent_edges(void **state)
{
    struct cli_rebal_status st = {.n_nodes = 1, .n_running = 1,
                                  .running_s = 100, .eta_s = 0};

    (void)state;
    /* No time left but still in progress: not 100% until it says so. */
    assert_int_equal(cli_rebal_percent(&st), 99);
    st.n_running = 0;
    assert_int_equal(cli_rebal_percent(&st), 100);
    st.n_running = 1;
    st.running_s = 0;
    assert_int_equal(cli_rebal_percent(&st), -1);
}


static void
test_which_commands(void **state)
{
    char *rebal[] = {"volume", "rebalance", "v0", "status"};
    char *rstart[] = {"volume", "rebalance", "v0", "start"};
    char *rm[] = {"volume", "remove-brick", "v0", "h:/b1", "h:/b2",
                  "status"};
    char *rmstart[] = {"volume", "remove-brick", "v0", "h:/b1", "start"};
    char *heal[] = {"volume", "heal", "v0", "status"};

    (void)state;
    assert_true(cli_is_rebal_status(rebal, 4));
    assert_false(cli_is_rebal_status(rstart, 4));
    assert_true(cli_is_rebal_status(rm, 6));
    assert_false(cli_is_rebal_status(rmstart, 5));
    assert_false(cli_is_rebal_status(heal, 4));
    assert_false(cli_is_rebal_status(rebal, 3));
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_running),
        cmocka_unit_test(test_parse_two_nodes),
        cmocka_unit_test(test_parse_not_a_table),
        cmocka_unit_test(test_bar_line),
        cmocka_unit_test(test_bar_estimating),
        cmocka_unit_test(test_percent_edges),
        cmocka_unit_test(test_which_commands),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("rebal-bar", tests, NULL, NULL);
}
