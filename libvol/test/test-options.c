/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-options: option tables: every type, ranges, aliases, patterns, bad
 * values, defaults, required options and formatting. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vol/vol.h"

struct t_conf {
    bool is_on;
    int64_t delta;
    uint64_t count;
    uint64_t size;
    double pct;
    double ratio;
    int mode;
    char *name;
    char *dir;
    uint64_t timeout;
    char *host;
    char *allow;
    char *sub;
    char *auth;
    char *needed;
};

static const char *const t_modes[] = {"fast", "safe", "off", NULL};

static const vl_option_t t_opts[] = {
    VL_OPT_BOOL("flag", struct t_conf, is_on, .def = "on", .doc = "d"),
    VL_OPT_INT("delta", struct t_conf, delta, .def = "-3", .min = -10,
               .max = 10, .doc = "d"),
    VL_OPT_UINT("count", struct t_conf, count, .def = "4", .min = 1,
                .max = 64, .aliases = {"performance.count", "old-count"},
                .doc = "d"),
    VL_OPT_SIZE("size", struct t_conf, size, .def = "128KiB",
                .min = 4 * 1024, .max = 64 * 1024 * 1024, .doc = "d"),
    VL_OPT_PERCENT("pct", struct t_conf, pct, .def = "10%", .doc = "d"),
    VL_OPT_DOUBLE("ratio", struct t_conf, ratio, .def = "0.5", .min = 0,
                  .max = 2, .doc = "d"),
    VL_OPT_ENUM("mode", struct t_conf, mode, .def = "safe",
                .values = t_modes, .doc = "d"),
    VL_OPT_STR("name", struct t_conf, name, .def = "hello", .doc = "d"),
    VL_OPT_PATH("dir", struct t_conf, dir, .doc = "d"),
    VL_OPT_TIME("timeout", struct t_conf, timeout, .def = "42",
                .min = 1000, .max = 3600 * 1000, .doc = "d"),
    VL_OPT_ADDR("host", struct t_conf, host, .def = "localhost", .doc = "d"),
    VL_OPT_ADDR_LIST("allow", struct t_conf, allow, .def = "*", .doc = "d"),
    VL_OPT_XLATOR("sub", struct t_conf, sub, .doc = "d"),
    VL_OPT_ADDR_LIST("auth.addr.*.allow", struct t_conf, auth, .doc = "d"),
    VL_OPT_STR("needed", struct t_conf, needed, .flags = VL_OPT_REQUIRED,
               .doc = "d"),
    VL_OPT_END,
};


static int
t_parse(struct t_conf *c, const struct vl_kv *kvs, size_t n, vl_err_t *err)
{
    memset(c, 0, sizeof(*c));
    return vl_conf_parse(t_opts, kvs, n, c, err);
}


static void
test_defaults_parse(void **state)
{
    struct vl_kv kv = {"needed", "x"};
    struct t_conf c;
    vl_err_t err = {{0}};

    assert_int_equal(t_parse(&c, &kv, 1, &err), 0);
    assert_true(c.is_on);
    assert_int_equal(c.delta, -3);
    assert_int_equal(c.count, 4);
    assert_int_equal(c.size, 128 * 1024);
    assert_true(c.pct == 10.0);
    assert_true(c.ratio == 0.5);
    assert_int_equal(c.mode, 1);
    assert_string_equal(c.name, "hello");
    assert_null(c.dir);
    assert_int_equal(c.timeout, 42000);
    assert_string_equal(c.host, "localhost");
    assert_string_equal(c.allow, "*");
    assert_string_equal(c.needed, "x");
    vl_conf_clear(t_opts, &c);
    assert_null(c.name);
    assert_null(c.needed);
}


static void
test_every_type_values(void **state)
{
    struct vl_kv kvs[] = {
        {"needed", "x"},    {"flag", "disable"},  {"delta", "10"},
        {"count", "64"},    {"size", "2MB"},      {"pct", "99.5"},
        {"ratio", "2"},     {"mode", "FAST"},     {"name", "a b c"},
        {"dir", "/data/b1"}, {"timeout", "2m"},   {"host", "::1"},
        {"allow", "10.0.0.*, 192.168.1.2,host-a"}, {"sub", "v0-posix"},
        {"auth.addr./data/brick1.allow", "127.0.0.1"},
    };
    struct t_conf c;
    vl_err_t err = {{0}};

    assert_int_equal(t_parse(&c, kvs, VL_ARRAY_SIZE(kvs), &err), 0);
    assert_false(c.is_on);
    assert_int_equal(c.delta, 10);
    assert_int_equal(c.count, 64);
    assert_int_equal(c.size, 2 * 1024 * 1024);
    assert_true(c.pct == 99.5);
    assert_true(c.ratio == 2.0);
    assert_int_equal(c.mode, 0);
    assert_string_equal(c.name, "a b c");
    assert_string_equal(c.dir, "/data/b1");
    assert_int_equal(c.timeout, 120000);
    assert_string_equal(c.host, "::1");
    assert_string_equal(c.sub, "v0-posix");
    assert_string_equal(c.auth, "127.0.0.1");
    vl_conf_clear(t_opts, &c);
}


static void
test_aliases_and_patterns(void **state)
{
    vl_err_t err = {{0}};

    assert_ptr_equal(vl_option_find(t_opts, "performance.count"), &t_opts[2]);
    assert_ptr_equal(vl_option_find(t_opts, "old-count"), &t_opts[2]);
    assert_ptr_equal(vl_option_find(t_opts, "auth.addr.x.allow"),
                     &t_opts[13]);
    assert_ptr_equal(vl_option_find(t_opts, "auth.addr./a/b.c.allow"),
                     &t_opts[13]);
    /* '*' needs non-empty text. */
    assert_null(vl_option_find(t_opts, "auth.addr..allow"));
    assert_null(vl_option_find(t_opts, "auth.addr.x.deny"));
    assert_null(vl_option_find(t_opts, "nope"));
    assert_int_equal(vl_option_validate(t_opts, "nope", "1", &err), -ENOENT);
    assert_non_null(strstr(err.msg, "nope"));
    assert_int_equal(vl_option_validate(t_opts, "old-count", "8", &err), 0);
}


static void
test_bad_values_and_ranges(void **state)
{
    static const struct {
        const char *key;
        const char *value;
    } bad[] = {
        {"flag", "maybe"},  {"delta", "11"},     {"delta", "-11"},
        {"delta", "1x"},    {"count", "0"},      {"count", "65"},
        {"count", "-1"},    {"count", ""},       {"size", "1K"},
        {"size", "65MB"},   {"size", "12XB"},    {"size", "K"},
        {"pct", "101"},     {"pct", "-1%"},      {"pct", "5%%"},
        {"ratio", "2.5"},   {"ratio", "nan"},    {"mode", "slow"},
        {"dir", "rel/dir"}, {"timeout", "999ms"}, {"timeout", "2d"},
        {"timeout", "2h"},  {"host", "a b"},     {"host", "x/y"},
        {"allow", "a,,b"},  {"sub", "a b"},
        {"count", "99999999999999999999999"},
    };
    vl_err_t err;
    size_t i;

    for (i = 0; i < VL_ARRAY_SIZE(bad); i++) {
        memset(&err, 0, sizeof(err));
        if (vl_option_validate(t_opts, bad[i].key, bad[i].value, &err)
            != -EINVAL)
            fail_msg("%s=%s accepted", bad[i].key, bad[i].value);
        assert_non_null(strstr(err.msg, bad[i].key));
    }
    assert_int_equal(vl_option_validate(t_opts, "count", "65", &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "out of range 1..64"));
}


static void
test_parse_errors(void **state)
{
    struct vl_kv unknown[] = {{"needed", "x"}, {"bogus", "1"}};
    struct vl_kv badval[] = {{"name", "n"}, {"needed", "x"},
                             {"count", "100"}};
    struct t_conf c;
    vl_err_t err = {{0}};

    assert_int_equal(t_parse(&c, unknown, 2, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "bogus"));
    assert_null(c.name); /* nothing left to free */
    assert_int_equal(t_parse(&c, badval, 3, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "count"));
    assert_null(c.name);
    assert_null(c.needed);
    assert_int_equal(t_parse(&c, NULL, 0, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "needed"));
}


static void
test_format_roundtrip(void **state)
{
    struct vl_kv kvs[] = {{"needed", "x"}, {"size", "3MiB"},
                          {"timeout", "1500ms"}, {"pct", "12.5"}};
    struct t_conf c;
    struct t_conf c2;
    vl_err_t err = {{0}};
    char buf[64];
    const vl_option_t *opt;

    assert_int_equal(t_parse(&c, kvs, VL_ARRAY_SIZE(kvs), &err), 0);
    vl_option_format(&t_opts[3], &c, buf, sizeof(buf));
    assert_string_equal(buf, "3MB");
    vl_option_format(&t_opts[9], &c, buf, sizeof(buf));
    assert_string_equal(buf, "1500ms");
    vl_option_format(&t_opts[4], &c, buf, sizeof(buf));
    assert_string_equal(buf, "12.5%");
    vl_option_format(&t_opts[6], &c, buf, sizeof(buf));
    assert_string_equal(buf, "safe");
    vl_option_format(&t_opts[0], &c, buf, sizeof(buf));
    assert_string_equal(buf, "on");
    assert_int_equal(vl_option_format(&t_opts[7], &c, buf, 2), 5);
    assert_string_equal(buf, "h");

    /* Every formatted value parses back to the same field. */
    memset(&c2, 0, sizeof(c2));
    assert_int_equal(vl_conf_parse(t_opts, kvs, 1, &c2, &err), 0);
    for (opt = t_opts; opt->key != NULL; opt++) {
        if (strchr(opt->key, '*') != NULL || opt == &t_opts[8]
            || opt == &t_opts[12])
            continue;
        vl_option_format(opt, &c, buf, sizeof(buf));
        assert_int_equal(vl_option_validate(t_opts, opt->key, buf, &err), 0);
    }
    vl_conf_clear(t_opts, &c2);
    vl_conf_clear(t_opts, &c);
}


static void
test_parsers(void **state)
{
    uint64_t v;
    bool b;

    assert_int_equal(vl_parse_size("1TB", &v), 0);
    assert_int_equal(v, 1024ULL * 1024 * 1024 * 1024);
    assert_int_equal(vl_parse_size("7 b", &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(vl_parse_size("1k", &v), 0);
    assert_int_equal(v, 1024);
    assert_int_equal(vl_parse_size("99999999999T", &v), -EINVAL);
    assert_int_equal(vl_parse_time_ms("3", &v), 0);
    assert_int_equal(v, 3000);
    assert_int_equal(vl_parse_time_ms("1h", &v), 0);
    assert_int_equal(v, 3600000);
    assert_int_equal(vl_parse_time_ms("-1s", &v), -EINVAL);
    assert_int_equal(vl_parse_bool("Yes", &b), 0);
    assert_true(b);
    assert_int_equal(vl_parse_bool("0", &b), 0);
    assert_false(b);
    assert_int_equal(vl_parse_bool("", &b), -EINVAL);
    assert_string_equal(vl_opt_type_name(VL_OT_SIZE), "size");
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_parse),
        cmocka_unit_test(test_every_type_values),
        cmocka_unit_test(test_aliases_and_patterns),
        cmocka_unit_test(test_bad_values_and_ranges),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_format_roundtrip),
        cmocka_unit_test(test_parsers),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
