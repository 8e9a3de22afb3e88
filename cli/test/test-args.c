/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-args: the mortar command line (flags before and after the command,
 * errors, confirmation questions) and mortard address parsing.
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

#include "../cli.h"
#include "mgmt-clnt.h"
#include "mgmt.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)


static void
test_plain_command(void **state)
{
    char *argv[] = {"mortar", "volume", "info", "v0", NULL};
    struct cli_args a;
    vl_err_t err = {.msg = ""};

    (void)state;
    unsetenv("MORTAR_SOCKET");
    assert_int_equal(cli_args_parse(ARGC(argv), argv, &a, &err), 0);
    assert_int_equal(a.n_cmd, 3);
    assert_string_equal(a.cmd[0], "volume");
    assert_string_equal(a.cmd[2], "v0");
    assert_int_equal(a.format, CLI_FMT_TEXT);
    assert_false(a.is_script);
    assert_null(a.remote_host);
    assert_string_equal(a.socket_path, MGC_DEFAULT_SOCKET);
    assert_int_equal(a.timeout_s, CLI_DEFAULT_TIMEOUT_S);
    assert_null(cli_confirm_question(&a));
    cli_args_clear(&a);
}


static void
test_flags_anywhere(void **state)
{
    char *argv[] = {"mortar", "--mode=script", "--socket", "/tmp/s",
                    "volume", "stop", "v0", "--xml", "--timeout=5", NULL};
    struct cli_args a;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(cli_args_parse(ARGC(argv), argv, &a, &err), 0);
    assert_true(a.is_script);
    assert_string_equal(a.socket_path, "/tmp/s");
    assert_int_equal(a.format, CLI_FMT_XML);
    assert_int_equal(a.timeout_s, 5);
    assert_int_equal(a.n_cmd, 3);
    assert_string_equal(a.cmd[2], "v0");
    assert_non_null(strstr(cli_confirm_question(&a), "Stopping volume"));
    cli_args_clear(&a);
}


static void
test_env_socket_and_remote(void **state)
{
    char *argv[] = {"mortar", "--json", "--remote-host=h1:24200",
                    "volume", "delete", "v", NULL};
    struct cli_args a;
    vl_err_t err = {.msg = ""};

    (void)state;
    setenv("MORTAR_SOCKET", "/tmp/env.sock", 1);
    assert_int_equal(cli_args_parse(ARGC(argv), argv, &a, &err), 0);
    unsetenv("MORTAR_SOCKET");
    assert_string_equal(a.socket_path, "/tmp/env.sock");
    assert_string_equal(a.remote_host, "h1:24200");
    assert_int_equal(a.format, CLI_FMT_JSON);
    assert_non_null(strstr(cli_confirm_question(&a), "Deleting volume"));
    cli_args_clear(&a);
}


/* --remote-host over TLS: the flags, and the environment's paths when a
 * flag does not give one. */
static void
test_tls_flags(void **state)
{
    char *argv[] = {"mortar", "--remote-host=h1", "--tls",
                    "--ssl-cert=/c/admin.pem", "--ssl-key", "/c/admin.key",
                    "volume", "info", NULL};
    char *bare[] = {"mortar", "volume", "info", NULL};
    struct cli_args a;
    vl_err_t err = {.msg = ""};

    (void)state;
    setenv("MORTAR_SSL_KEY", "/env/k", 1);
    setenv("MORTAR_SSL_CA", "/env/ca", 1);
    assert_int_equal(cli_args_parse(ARGC(argv), argv, &a, &err), 0);
    assert_true(a.is_tls);
    assert_string_equal(a.ssl_cert, "/c/admin.pem");
    assert_string_equal(a.ssl_key, "/c/admin.key");
    assert_string_equal(a.ssl_ca, "/env/ca");
    assert_int_equal(a.n_cmd, 2);
    cli_args_clear(&a);
    unsetenv("MORTAR_SSL_KEY");
    unsetenv("MORTAR_SSL_CA");
    assert_int_equal(cli_args_parse(ARGC(bare), bare, &a, &err), 0);
    assert_false(a.is_tls);
    assert_null(a.ssl_cert);
    assert_null(a.ssl_key);
    assert_null(a.ssl_ca);
    cli_args_clear(&a);
}


static void
test_replica2_question(void **state)
{
    char *two[] = {"mortar", "volume", "create", "v", "replica", "2",
                   "h:/b1", "g:/b2", NULL};
    char *three[] = {"mortar", "volume", "create", "v", "replica", "3",
                     "h:/b1", "g:/b2", "f:/b3", NULL};
    char *plain[] = {"mortar", "volume", "create", "v", "h:/replica",
                     "h:/2", NULL};
    struct cli_args a;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(cli_args_parse(ARGC(two), two, &a, &err), 0);
    assert_non_null(strstr(cli_confirm_question(&a), "split-brain"));
    cli_args_clear(&a);
    assert_int_equal(cli_args_parse(ARGC(three), three, &a, &err), 0);
    assert_null(cli_confirm_question(&a));
    cli_args_clear(&a);
    assert_int_equal(cli_args_parse(ARGC(plain), plain, &a, &err), 0);
    assert_null(cli_confirm_question(&a));
    cli_args_clear(&a);
}


static void
test_remove_brick_questions(void **state)
{
    char *force[] = {"mortar", "volume", "remove-brick", "v", "h:/b",
                     "force", NULL};
    char *commit[] = {"mortar", "volume", "remove-brick", "v", "h:/b",
                      "commit", NULL};
    char *start[] = {"mortar", "volume", "remove-brick", "v", "h:/b",
                     "start", NULL};
    struct cli_args a;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(cli_args_parse(ARGC(force), force, &a, &err), 0);
    assert_non_null(strstr(cli_confirm_question(&a), "will not migrate"));
    cli_args_clear(&a);
    assert_int_equal(cli_args_parse(ARGC(commit), commit, &a, &err), 0);
    assert_non_null(strstr(cli_confirm_question(&a), "data loss"));
    cli_args_clear(&a);
    assert_int_equal(cli_args_parse(ARGC(start), start, &a, &err), 0);
    assert_null(cli_confirm_question(&a));
    cli_args_clear(&a);
}


static void
test_errors(void **state)
{
    char *unknown[] = {"mortar", "--bogus", "volume", "info", NULL};
    char *mode[] = {"mortar", "--mode=interactive", "volume", NULL};
    char *novalue[] = {"mortar", "volume", "info", "--socket", NULL};
    char *empty[] = {"mortar", "--remote-host=", "volume", NULL};
    char *timeout[] = {"mortar", "--timeout=0", "volume", NULL};
    char *nocmd[] = {"mortar", "--xml", NULL};
    struct cli_args a;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(cli_args_parse(ARGC(unknown), unknown, &a, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "--bogus"));
    assert_int_equal(cli_args_parse(ARGC(mode), mode, &a, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "interactive"));
    assert_int_equal(cli_args_parse(ARGC(novalue), novalue, &a, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "--socket"));
    assert_int_equal(cli_args_parse(ARGC(empty), empty, &a, &err), -EINVAL);
    assert_int_equal(cli_args_parse(ARGC(timeout), timeout, &a, &err),
                     -EINVAL);
    assert_int_equal(cli_args_parse(ARGC(nocmd), nocmd, &a, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "no command"));
}


/* --watch: anywhere on the line, for the three status commands with a
 * bar; refused with --xml/--json and for any other command. */
static void
test_watch(void **state)
{
    char *rebal[] = {"mortar", "volume", "rebalance", "v0", "status",
                     "--watch", NULL};
    char *remove[] = {"mortar", "--watch", "volume", "remove-brick", "v0",
                      "h:/b1", "status", NULL};
    char *heal[] = {"mortar", "--watch", "volume", "heal", "v0", "status",
                    NULL};
    char *json[] = {"mortar", "--json", "volume", "rebalance", "v0",
                    "status", "--watch", NULL};
    char *xml[] = {"mortar", "--watch", "--xml", "volume", "heal", "v0",
                   "status", NULL};
    char *info[] = {"mortar", "--watch", "volume", "info", NULL};
    struct cli_args a;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(cli_args_parse(ARGC(rebal), rebal, &a, &err), 0);
    assert_true(a.is_watch);
    assert_int_equal(a.n_cmd, 4);
    cli_args_clear(&a);
    assert_int_equal(cli_args_parse(ARGC(remove), remove, &a, &err), 0);
    assert_true(a.is_watch);
    cli_args_clear(&a);
    assert_int_equal(cli_args_parse(ARGC(heal), heal, &a, &err), 0);
    cli_args_clear(&a);
    assert_int_equal(cli_args_parse(ARGC(json), json, &a, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "--xml or --json"));
    assert_int_equal(cli_args_parse(ARGC(xml), xml, &a, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "--xml or --json"));
    assert_int_equal(cli_args_parse(ARGC(info), info, &a, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "--watch is for"));
}


static void
test_help_version(void **state)
{
    char *help[] = {"mortar", "help", NULL};
    char *version[] = {"mortar", "--version", NULL};
    char *vhelp[] = {"mortar", "volume", "help", NULL};
    struct cli_args a;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(cli_args_parse(ARGC(help), help, &a, &err), 0);
    assert_true(a.is_help);
    cli_args_clear(&a);
    assert_int_equal(cli_args_parse(ARGC(version), version, &a, &err), 0);
    assert_true(a.is_version);
    cli_args_clear(&a);
    /* "volume help" is a command for mortard, not the local help. */
    assert_int_equal(cli_args_parse(ARGC(vhelp), vhelp, &a, &err), 0);
    assert_false(a.is_help);
    assert_int_equal(a.n_cmd, 2);
    cli_args_clear(&a);
}


/* Words over mortard's limits are refused before connecting, naming
 * the size and the limit; a word at the limit goes. */
static void
test_sizes(void **state)
{
    char *big = malloc(10001), *edge = malloc(MGMT_ARG_MAX + 1);
    char *one[] = {"mortar", "volume", "get", big, "all", NULL};
    char *ok[] = {"mortar", "volume", "get", edge, "all", NULL};
    char **many = calloc(MGMT_ARGV_MAX + 3, sizeof(*many));
    char **heavy = calloc(400, sizeof(*heavy));
    struct cli_args a;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_non_null(big);
    assert_non_null(edge);
    assert_non_null(many);
    assert_non_null(heavy);
    memset(big, 'x', 10000);
    big[10000] = '\0';
    memset(edge, 'y', MGMT_ARG_MAX);
    edge[MGMT_ARG_MAX] = '\0';
    assert_int_equal(cli_args_parse(ARGC(one), one, &a, &err), -E2BIG);
    assert_non_null(strstr(err.msg, "word 3 of the command"));
    assert_non_null(strstr(err.msg, "is 10000 bytes, longer than 4096 "
                                    "bytes"));
    assert_int_equal(cli_args_parse(ARGC(ok), ok, &a, &err), 0);
    cli_args_clear(&a);
    many[0] = "mortar";
    for (int i = 1; i <= MGMT_ARGV_MAX + 1; i++)
        many[i] = "w";
    assert_int_equal(cli_args_parse(MGMT_ARGV_MAX + 2, many, &a, &err),
                     -E2BIG);
    assert_non_null(strstr(err.msg, "1025 words, more than 1024"));
    /* 300 words of 4096 bytes: each fits, the request does not. */
    heavy[0] = "mortar";
    for (int i = 1; i <= 300; i++)
        heavy[i] = edge;
    assert_int_equal(cli_args_parse(301, heavy, &a, &err), -E2BIG);
    assert_non_null(strstr(err.msg, "the command is 1230000 bytes, longer "
                                    "than"));
    free(heavy);
    free(many);
    free(edge);
    free(big);
}


static void
test_addr_parse(void **state)
{
    struct mgc_addr addr;
    vl_err_t err = {.msg = ""};
    char buf[128];

    (void)state;
    assert_int_equal(mgc_addr_parse("127.0.0.1", 24100, &addr, &err), 0);
    assert_string_equal(addr.host, "127.0.0.1");
    assert_int_equal(addr.port, 24100);
    mgc_addr_clear(&addr);
    assert_int_equal(mgc_addr_parse("host:7", 24100, &addr, &err), 0);
    assert_string_equal(addr.host, "host");
    assert_int_equal(addr.port, 7);
    assert_string_equal(mgc_addr_str(&addr, buf, sizeof(buf)), "host:7");
    mgc_addr_clear(&addr);
    assert_int_equal(mgc_addr_parse("[::1]:900", 1, &addr, &err), 0);
    assert_string_equal(addr.host, "::1");
    assert_int_equal(addr.port, 900);
    assert_string_equal(mgc_addr_str(&addr, buf, sizeof(buf)), "[::1]:900");
    mgc_addr_clear(&addr);
    assert_int_equal(mgc_addr_parse("::1", 5, &addr, &err), 0);
    assert_string_equal(addr.host, "::1");
    assert_int_equal(addr.port, 5);
    mgc_addr_clear(&addr);
    assert_int_equal(mgc_addr_parse("h:0", 1, &addr, &err), -EINVAL);
    assert_int_equal(mgc_addr_parse("h:70000", 1, &addr, &err), -EINVAL);
    assert_int_equal(mgc_addr_parse("h:x", 1, &addr, &err), -EINVAL);
    assert_int_equal(mgc_addr_parse(":80", 1, &addr, &err), -EINVAL);
    assert_int_equal(mgc_addr_parse("[::1", 1, &addr, &err), -EINVAL);
}


static void
test_connect_refused(void **state)
{
    struct mgc_addr addr;
    vl_err_t err = {.msg = ""};
    struct vrpc_stream s = {.fd = -1};

    (void)state;
    assert_int_equal(mgc_addr_unix("/nonexistent/mortard.sock", &addr), 0);
    assert_int_equal(mgc_connect(&addr, NULL, 1000, &s, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/mortard.sock"));
    assert_int_equal(s.fd, -1);
    mgc_addr_clear(&addr);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_command),
        cmocka_unit_test(test_flags_anywhere),
        cmocka_unit_test(test_env_socket_and_remote),
        cmocka_unit_test(test_tls_flags),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_remove_brick_questions),
        cmocka_unit_test(test_replica2_question),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_help_version),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_addr_parse),
        cmocka_unit_test(test_connect_refused),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
