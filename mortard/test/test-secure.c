/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-secure: the admin certificate list (secure.c). Names match whole
 * and exactly, separated by commas or newlines with blanks around them
 * ignored; no pattern grants anything ("*", "admin*"); a prefix or a
 * suffix of a listed name is not that name. The list file is read again
 * when it is replaced and lists nobody once removed; with secure-access
 * off nobody is an admin whatever the file says; a missing certificate
 * file stops secure-access from starting, naming the file.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mortard/secure.h"

static char tmpdir[] = "/tmp/test-secure.XXXXXX";


static void
test_listed_exact_names(void **state)
{
    (void)state;
    assert_true(md_admin_cn_listed("admin1", "admin1"));
    assert_true(md_admin_cn_listed("a, admin1 ,b", "admin1"));
    assert_true(md_admin_cn_listed("a\nadmin1\n", "admin1"));
    assert_true(md_admin_cn_listed("\tadmin1\r\n", "admin1"));
    assert_true(md_admin_cn_listed("x,,admin1", "admin1"));
    assert_true(md_admin_cn_listed("ops team,admin1", "ops team"));
}


static void
test_not_listed(void **state)
{
    (void)state;
    assert_false(md_admin_cn_listed("admin1", "admin"));
    assert_false(md_admin_cn_listed("admin1", "admin12"));
    assert_false(md_admin_cn_listed("admin1", "Admin1"));
    assert_false(md_admin_cn_listed("*", "admin1"));
    assert_false(md_admin_cn_listed("admin*", "admin1"));
    assert_false(md_admin_cn_listed("adm?n1", "admin1"));
    assert_false(md_admin_cn_listed("", "admin1"));
    assert_false(md_admin_cn_listed(" , ,", "admin1"));
    assert_false(md_admin_cn_listed(NULL, "admin1"));
    assert_false(md_admin_cn_listed("admin1", NULL));
    assert_false(md_admin_cn_listed("admin1,", ""));
    assert_false(md_admin_cn_listed(",", ""));
}


static void
write_text(const char *name, const char *text)
{
    char path[256], tmp[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", tmpdir, name);
    f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(rename(tmp, path), 0);
}


static void
test_off_lists_nobody(void **state)
{
    struct md_secure_conf conf = {0};
    vl_err_t err = {.msg = ""};

    (void)state;
    write_text("admin-allow", "admin1\n");
    assert_int_equal(md_secure_init(tmpdir, &conf, &err), 0);
    assert_false(md_secure_is_on());
    assert_null(md_secure_server_tls());
    assert_false(md_secure_is_admin("admin1"));
    md_secure_fini();
}


static void
test_missing_cert_refused(void **state)
{
    struct md_secure_conf conf = {.is_forced = true};
    vl_err_t err = {.msg = ""};

    (void)state;
    conf.paths[0] = "/nonexistent/mortar.pem";
    assert_int_not_equal(md_secure_init(tmpdir, &conf, &err), 0);
    assert_non_null(strstr(err.msg, "secure-access: ssl.own-cert "
                                    "/nonexistent/mortar.pem: No such "
                                    "file or directory"));
    md_secure_fini();
}


static void
test_admin_file_changes(void **state)
{
    struct md_admin_list l;
    char path[256];

    (void)state;
    snprintf(path, sizeof(path), "%s/admin-allow", tmpdir);
    assert_int_equal(md_admin_list_init(&l, path), 0);
    write_text("admin-allow", "admin1, ops\n");
    assert_true(md_admin_list_has(&l, "admin1"));
    assert_true(md_admin_list_has(&l, "ops"));
    assert_false(md_admin_list_has(&l, "client1"));
    /* Replaced (write and rename): read again. */
    write_text("admin-allow", "client1\n");
    assert_true(md_admin_list_has(&l, "client1"));
    assert_false(md_admin_list_has(&l, "admin1"));
    /* Removed: nobody. */
    assert_int_equal(unlink(path), 0);
    assert_false(md_admin_list_has(&l, "client1"));
    md_admin_list_clear(&l);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listed_exact_names),
        cmocka_unit_test(test_not_listed),
        cmocka_unit_test(test_off_lists_nobody),
        cmocka_unit_test(test_missing_cert_refused),
        cmocka_unit_test(test_admin_file_changes),
    };
    int rc;

    if (mkdtemp(tmpdir) == NULL)
        return 1;
    cmocka_set_message_output(CM_OUTPUT_TAP);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    {
        char path[256];

        snprintf(path, sizeof(path), "%s/admin-allow", tmpdir);
        (void)unlink(path);
        snprintf(path, sizeof(path), "%s/secure-access", tmpdir);
        (void)unlink(path);
        (void)rmdir(tmpdir);
    }
    return rc;
}
