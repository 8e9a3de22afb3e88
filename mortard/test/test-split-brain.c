/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-split-brain: cmd-split-brain.c's pure parts: the FILE rules of
 * `volume heal VOL split-brain ...` (absolute, no "." or "..", or
 * gfid:UUID) and the resolver's answer lines as GlusterFS's messages.
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


static void
test_file_check(void **state)
{
    (void)state;
    assert_null(md_split_file_check("/f"));
    assert_null(md_split_file_check("/d/e/f"));
    assert_null(md_split_file_check("/"));
    assert_null(md_split_file_check("/a..b/.c"));
    assert_null(md_split_file_check(
        "gfid:0a1b2c3d-0000-4000-8000-000000000001"));
    assert_non_null(strstr(md_split_file_check("f"),
                           "must be absolute path"));
    assert_non_null(strstr(md_split_file_check("/d/../../x"), "'..'"));
    assert_non_null(md_split_file_check("/.."));
    assert_non_null(md_split_file_check("/d/./f"));
    assert_non_null(md_split_file_check("gfid:xyz"));
    assert_non_null(md_split_file_check("/a\nb"));
}


static void
test_messages(void **state)
{
    char msg[512];

    (void)state;
    assert_true(md_split_message("answer healed", "/f", "bigger-file", msg,
                                 sizeof(msg)));
    assert_string_equal(msg, "Healed /f.");
    assert_false(md_split_message("answer not-split-brain", "/f",
                                  "latest-mtime", msg, sizeof(msg)));
    assert_string_equal(msg, "Healing /f failed: File not in split-brain.");
    assert_false(md_split_message("lookup -2", "/f", "bigger-file", msg,
                                  sizeof(msg)));
    assert_string_equal(msg, "Lookup failed on /f:No such file or "
                             "directory");
    assert_false(md_split_message("lookup -2", "gfid:x", "bigger-file",
                                  msg, sizeof(msg)));
    assert_string_equal(msg, "Lookup failed on gfid:x:No such file or "
                             "directory.");
    assert_false(md_split_message("isdir 0", "/d", "bigger-file", msg,
                                  sizeof(msg)));
    assert_string_equal(msg, "'bigger-file' not a valid option for "
                             "directories.");
    assert_false(md_split_message("answer ambiguous", "/f", "bigger-file",
                                  msg, sizeof(msg)));
    assert_string_equal(msg, "Healing /f failed: The copies have the same "
                             "size.");
    assert_false(md_split_message("answer -22", "/f", "source-brick", msg,
                                  sizeof(msg)));
    assert_string_equal(msg, "Healing /f failed:Invalid argument.");
    assert_false(md_split_message("answer pending", "/f", "bigger-file",
                                  msg, sizeof(msg)));
    assert_string_equal(msg, "Healing /f failed:Transport endpoint is not "
                             "connected.");
    assert_false(md_split_message("", "/f", "bigger-file", msg,
                                  sizeof(msg)));
    assert_string_equal(msg, "Healing /f failed: no answer.");
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_check),
        cmocka_unit_test(test_messages),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("split-brain", tests, NULL, NULL);
}
