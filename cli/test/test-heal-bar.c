/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-heal-bar: the heal status bar (cli/heal-bar.c): mortard's status
 * text read back, the bar's percentage against the most entries seen,
 * and which commands get the bar.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"

static const char status_text[] =
    "Self-heal daemon on this node: running\n\n"
    "Brick h:/d/b0\nEntries left: 30\n\n"
    "Total entries left: 30\n"
    "Data left: 34.5 MiB\n"
    "Healed: 10 entries, 1.0 MiB\n"
    "Rate (last minute): 3.2 entries/s, 1.1 MiB/s\n"
    "In split-brain: 0\nWaiting for a brick: 0\n"
    "ETA: 31 s\n";


static void
test_parse(void **state)
{
    struct cli_heal_status st;

    (void)state;
    assert_true(cli_heal_status_parse(status_text, &st));
    assert_int_equal(st.left, 30);
    assert_string_equal(st.data, "34.5 MiB");
    assert_string_equal(st.rate, "3.2 entries/s, 1.1 MiB/s");
    assert_string_equal(st.eta, "31 s");
    assert_false(cli_heal_status_parse("Volume v is not started.", &st));
    assert_false(cli_heal_status_parse(NULL, &st));
}


static void
test_bar(void **state)
{
    struct cli_heal_status st;
    char line[256];

    (void)state;
    assert_true(cli_heal_status_parse(status_text, &st));
    cli_heal_bar(&st, 120, line, sizeof(line));
    /* 90 of 120 done: 75%, 15 of 20 marks. */
    assert_non_null(strstr(line, "[###############.....]  75%"));
    assert_non_null(strstr(line, "30 entries left (34.5 MiB)"));
    assert_non_null(strstr(line, "ETA 31 s"));
    cli_heal_bar(&st, 30, line, sizeof(line));
    assert_non_null(strstr(line, "[....................]   0%"));
    st.left = 0;
    cli_heal_bar(&st, 30, line, sizeof(line));
    assert_non_null(strstr(line, "[####################] 100%"));
}


static void
test_which_commands(void **state)
{
    char *yes[] = {"volume", "heal", "v0", "status"};
    char *info[] = {"volume", "heal", "v0", "info"};
    char *rebal[] = {"volume", "rebalance", "v0", "status"};

    (void)state;
    assert_true(cli_is_heal_status(yes, 4));
    assert_false(cli_is_heal_status(info, 4));
    assert_false(cli_is_heal_status(rebal, 4));
    assert_false(cli_is_heal_status(yes, 3));
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_bar),
        cmocka_unit_test(test_which_commands),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("heal-bar", tests, NULL, NULL);
}
