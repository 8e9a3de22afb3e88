/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the distribute name hash: published MurmurHash3 x86_32
 * vectors (seed 0), the spread of many names over 4 equal ranges, and
 * the placement key of rsync's temporary names. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dist-hash.h"


static void
test_known_vectors(void **state)
{
    (void)state;
    assert_int_equal(dist_hash_name("", 0), 0u);
    assert_int_equal(dist_hash_name("a", 1), 0x3c2569b2u);
    assert_int_equal(dist_hash_name("abc", 3), 0xb3dd93fau);
    assert_int_equal(dist_hash_name("abcd", 4), 0x43ed676au);
    assert_int_equal(dist_hash_name("Hello, world!", 13), 0xc0363e43u);
    assert_int_equal(dist_hash_name("The quick brown fox jumps over the "
                                    "lazy dog", 43), 0x2e4ff723u);
}


static void
test_spread_over_four(void **state)
{
    unsigned count[4] = {0};
    char name[32];

    (void)state;
    for (int i = 0; i < 10000; i++) {
        int len = snprintf(name, sizeof(name), "file-%d", i);

        count[dist_hash_name(name, (size_t)len) >> 30]++;
    }
    for (int i = 0; i < 4; i++) {
        assert_in_range(count[i], 2250, 2750); /* +-10% of 2500 */
    }
}


/* key NAME: the placement key of NAME as a string. */
static const char *
key_of(const char *name)
{
    static char out[64];
    size_t off;
    size_t len = dist_hash_key(name, strlen(name), &off);

    snprintf(out, sizeof(out), "%.*s", (int)len, name + off);
    return out;
}


static void
test_rsync_key(void **state)
{
    (void)state;
    /* rsync's ".NAME.XXXXXX" hashes as NAME (^\.(.+)\.[^.]+$). */
    assert_string_equal(key_of(".report.pdf.Xa81Zq"), "report.pdf");
    assert_string_equal(key_of(".a.b"), "a");
    assert_string_equal(key_of(".eslintrc.json"), "eslintrc");
    assert_string_equal(key_of("..x.y"), ".x");
    /* Everything else is its own key. */
    assert_string_equal(key_of("report.pdf"), "report.pdf");
    assert_string_equal(key_of(".bashrc"), ".bashrc");
    assert_string_equal(key_of(".x."), ".x.");
    assert_string_equal(key_of("..x"), "..x");
    assert_string_equal(key_of(".."), "..");
    assert_string_equal(key_of("."), ".");
    assert_string_equal(key_of(""), "");
    assert_int_equal(dist_hash_placement(".report.pdf.Xa81Zq"),
                     dist_hash_name("report.pdf", 10));
    assert_int_equal(dist_hash_placement("report.pdf"),
                     dist_hash_name("report.pdf", 10));
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_vectors),
        cmocka_unit_test(test_spread_over_four),
        cmocka_unit_test(test_rsync_key),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
