/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-supervise: the brick restart policy (md_restart_on_death) driven
 * by a fake clock: restart at once, back-off doubling from the minimum to
 * the cap, give up at the limit within the window, deaths leaving the
 * window forgotten, reset.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mortard/mortard.h"


static void
test_default_sequence(void **state)
{
    const struct md_restart_policy *p = &md_restart_default;
    struct md_restart rs;
    int64_t now = 1000000;

    (void)state;
    md_restart_reset(&rs);
    assert_int_equal(p->limit, 5);
    assert_int_equal(p->window_ms, 300000);
    /* At once, then 1 s, 2 s, 4 s; the 5th death gives up. */
    assert_int_equal(md_restart_on_death(&rs, p, now), 0);
    assert_int_equal(rs.next_ms, now);
    now += 100;
    assert_int_equal(md_restart_on_death(&rs, p, now), 1000);
    assert_int_equal(rs.next_ms, now + 1000);
    now += 1100;
    assert_int_equal(md_restart_on_death(&rs, p, now), 2000);
    now += 2100;
    assert_int_equal(md_restart_on_death(&rs, p, now), 4000);
    assert_false(rs.is_given_up);
    now += 4100;
    assert_int_equal(md_restart_on_death(&rs, p, now), -1);
    assert_true(rs.is_given_up);
    /* Reset (volume start force): a clean slate. */
    md_restart_reset(&rs);
    assert_false(rs.is_given_up);
    assert_int_equal(rs.n_deaths, 0);
    assert_int_equal(md_restart_on_death(&rs, p, now), 0);
}


static void
test_window(void **state)
{
    const struct md_restart_policy *p = &md_restart_default;
    struct md_restart rs;
    int64_t now = 5000;

    (void)state;
    md_restart_reset(&rs);
    /* Four deaths, then a long quiet run: the old ones age out. */
    for (int i = 0; i < 4; i++)
        assert_true(md_restart_on_death(&rs, p, now + i) >= 0);
    assert_int_equal(rs.n_deaths, 4);
    now += p->window_ms + 10;
    assert_int_equal(md_restart_on_death(&rs, p, now), 0);
    assert_int_equal(rs.n_deaths, 1);
    assert_false(rs.is_given_up);
    /* Deaths spread out so that never 5 fall within 5 min: never gives
     * up. */
    md_restart_reset(&rs);
    for (int i = 0; i < 50; i++)
        assert_true(md_restart_on_death(&rs, p,
                                        now + (int64_t)i * 80000) >= 0);
    assert_false(rs.is_given_up);
    assert_int_equal(rs.n_deaths, 4);
}


static void
test_cap(void **state)
{
    const struct md_restart_policy p = {.limit = 12, .window_ms = 3600000,
                                        .min_ms = 1000, .max_ms = 60000};
    const int64_t want[] = {0, 1000, 2000, 4000, 8000, 16000, 32000,
                            60000, 60000, 60000, 60000, -1};
    struct md_restart rs;
    int64_t now = 0;

    (void)state;
    md_restart_reset(&rs);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        int64_t d = md_restart_on_death(&rs, &p, now);

        assert_int_equal(d, want[i]);
        now += d > 0 ? d : 1;
    }
    assert_true(rs.is_given_up);
}


static void
test_history_bound(void **state)
{
    const struct md_restart_policy p = {.limit = MD_RESTART_HISTORY + 10,
                                        .window_ms = 1000000000,
                                        .min_ms = 1, .max_ms = 2};
    struct md_restart rs;

    (void)state;
    /* A limit above the history: the history never overflows. */
    md_restart_reset(&rs);
    for (int i = 0; i < MD_RESTART_HISTORY * 2; i++)
        (void)md_restart_on_death(&rs, &p, i);
    assert_true(rs.n_deaths <= MD_RESTART_HISTORY);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_sequence),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_history_bound),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
