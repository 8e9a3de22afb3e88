/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-progress-bar: the shared progress line (cli/progress-bar.c): the
 * bar's marks for a percentage and for an unknown total, rates of files
 * and bytes, sizes, the ETA's text, the terminal width's fallback, and
 * the watch loop's redraw and end (frames from a script, stdout a
 * temporary file).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "progress-bar.h"


static void
test_meter(void **state)
{
    char buf[64];

    (void)state;
    cli_bar_meter(0, buf, sizeof(buf));
    assert_string_equal(buf, "[....................]   0%");
    cli_bar_meter(45, buf, sizeof(buf));
    /* 45% of 20 marks: 9. */
    assert_string_equal(buf, "[#########...........]  45%");
    cli_bar_meter(100, buf, sizeof(buf));
    assert_string_equal(buf, "[####################] 100%");
    cli_bar_meter(250, buf, sizeof(buf));
    assert_string_equal(buf, "[####################] 100%");
    cli_bar_meter(-1, buf, sizeof(buf));
    assert_string_equal(buf, "[....................]   ?%");
    assert_int_equal(strlen(buf), CLI_BAR_WIDTH + 2 + 5);
}


static void
test_rate_and_size(void **state)
{
    char buf[64];

    (void)state;
    cli_bar_rate(12.5, "files", buf, sizeof(buf));
    assert_string_equal(buf, "12.5 files/s");
    cli_bar_rate(4.0 * 1024 * 1024, NULL, buf, sizeof(buf));
    assert_string_equal(buf, "4.0 MiB/s");
    cli_bar_rate(512, NULL, buf, sizeof(buf));
    assert_string_equal(buf, "512 B/s");
    cli_bar_rate(-1, "files", buf, sizeof(buf));
    assert_string_equal(buf, "?");
    cli_bar_size(80.0 * 1024 * 1024, buf, sizeof(buf));
    assert_string_equal(buf, "80.0 MiB");
    cli_bar_size(1536, buf, sizeof(buf));
    assert_string_equal(buf, "1.5 KiB");
    cli_bar_size(0, buf, sizeof(buf));
    assert_string_equal(buf, "0 B");
}


static void
test_eta(void **state)
{
    char buf[64];

    (void)state;
    cli_bar_eta(0, buf, sizeof(buf));
    assert_string_equal(buf, "0 s");
    cli_bar_eta(42, buf, sizeof(buf));
    assert_string_equal(buf, "42 s");
    cli_bar_eta(185, buf, sizeof(buf));
    assert_string_equal(buf, "3 min 05 s");
    cli_bar_eta(2 * 3600 + 4 * 60 + 59, buf, sizeof(buf));
    assert_string_equal(buf, "2 h 04 min");
    cli_bar_eta(-1, buf, sizeof(buf));
    assert_string_equal(buf, "estimating");
}


static void
test_columns_without_terminal(void **state)
{
    int fds[2];

    (void)state;
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(cli_bar_columns(fds[1]), CLI_BAR_DEFAULT_COLUMNS);
    close(fds[0]);
    close(fds[1]);
}


/* The watch loop's frames: two lines, then done with a final text. */
struct script {
    int n_calls; /* frames asked for */
};


static void
script_next(void *arg, struct cli_bar_frame *frame)
{
    struct script *s = arg;

    s->n_calls++;
    if (s->n_calls < 3) {
        snprintf(frame->line, sizeof(frame->line), "line %d", s->n_calls);
        return;
    }
    frame->is_done = true;
    frame->status = 7;
    frame->final = strdup("final table");
}


static void
test_watch_redraws_then_prints_final(void **state)
{
    struct script s = {0};
    char text[256];
    FILE *out = tmpfile();
    size_t n;

    (void)state;
    assert_non_null(out);
    assert_int_equal(cli_bar_watch(out, script_next, &s), 7);
    assert_int_equal(s.n_calls, 3);
    rewind(out);
    n = fread(text, 1, sizeof(text) - 1, out);
    text[n] = '\0';
    /* Each line redrawn in place, the last erased before the final
     * text, which ends with its newline. */
    assert_string_equal(text, "\r\033[Kline 1\r\033[Kline 2\r\033[K"
                              "final table\n");
    fclose(out);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_meter),
        cmocka_unit_test(test_rate_and_size),
        cmocka_unit_test(test_eta),
        cmocka_unit_test(test_columns_without_terminal),
        cmocka_unit_test(test_watch_redraws_then_prints_final),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("progress-bar", tests, NULL, NULL);
}
