/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * option-types: one parser and one formatter per option type. Parsers
 * check syntax and the entry's range and store into the conf field;
 * formatters write the field back in the input syntax.
 *
 * Threads: pure functions.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core.h"

static const char *const vl_type_names[] = {
    [VL_OT_BOOL] = "bool",       [VL_OT_INT] = "int",
    [VL_OT_UINT] = "uint",       [VL_OT_SIZE] = "size",
    [VL_OT_PERCENT] = "percent", [VL_OT_DOUBLE] = "double",
    [VL_OT_ENUM] = "enum",       [VL_OT_STR] = "string",
    [VL_OT_PATH] = "path",       [VL_OT_TIME] = "time",
    [VL_OT_ADDR] = "address",    [VL_OT_ADDR_LIST] = "address-list",
    [VL_OT_XLATOR] = "xlator",
};


const char *
vl_opt_type_name(vl_opt_type_t type)
{
    if ((unsigned)type >= VL_ARRAY_SIZE(vl_type_names))
        return "?";
    return vl_type_names[type];
}


int
vl_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"on", "yes", "true", "enable", "1"};
    static const char *const no[] = {"off", "no", "false", "disable", "0"};
    size_t i;

    if (s == NULL)
        return -EINVAL;
    for (i = 0; i < VL_ARRAY_SIZE(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -EINVAL;
}


/* Parses the leading unsigned decimal integer of s; *end gets the rest. */
static int
vl_parse_u64_prefix(const char *s, uint64_t *out, const char **end)
{
    char *e = NULL;
    unsigned long long v;

    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    v = strtoull(s, &e, 10);
    if (errno != 0)
        return -EINVAL;
    while (isspace((unsigned char)*e))
        e++;
    *out = v;
    *end = e;
    return 0;
}


static int
vl_mul_check(uint64_t v, uint64_t mul, uint64_t *out)
{
    if (mul != 0 && v > UINT64_MAX / mul)
        return -EINVAL;
    *out = v * mul;
    return 0;
}


int
vl_parse_size(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t mul;
    } units[] = {
        {"", 1},          {"b", 1},
        {"k", VL_KiB},    {"kb", VL_KiB},     {"kib", VL_KiB},
        {"m", VL_MiB},    {"mb", VL_MiB},     {"mib", VL_MiB},
        {"g", VL_GiB},    {"gb", VL_GiB},     {"gib", VL_GiB},
        {"t", 1024 * VL_GiB}, {"tb", 1024 * VL_GiB}, {"tib", 1024 * VL_GiB},
    };
    const char *rest;
    uint64_t v;
    size_t i;

    if (s == NULL || vl_parse_u64_prefix(s, &v, &rest) != 0)
        return -EINVAL;
    for (i = 0; i < VL_ARRAY_SIZE(units); i++) {
        size_t n = strlen(units[i].suffix);

        if (strncasecmp(rest, units[i].suffix, n) != 0)
            continue;
        if (rest[n] != '\0' && !isspace((unsigned char)rest[n]))
            continue;
        while (isspace((unsigned char)rest[n]))
            n++;
        if (rest[n] != '\0')
            continue;
        return vl_mul_check(v, units[i].mul, out);
    }
    return -EINVAL;
}


int
vl_parse_time_ms(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t mul;
    } units[] = {
        {"", 1000}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000},
    };
    const char *rest;
    uint64_t v;
    size_t i;

    if (s == NULL || vl_parse_u64_prefix(s, &v, &rest) != 0)
        return -EINVAL;
    for (i = 0; i < VL_ARRAY_SIZE(units); i++) {
        if (strcasecmp(rest, units[i].suffix) == 0)
            return vl_mul_check(v, units[i].mul, out);
    }
    return -EINVAL;
}


static int
vl_parse_int(const char *s, int64_t *out)
{
    char *end = NULL;
    long long v;

    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return -EINVAL;
    errno = 0;
    v = strtoll(s, &end, 0);
    if (errno != 0)
        return -EINVAL;
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0')
        return -EINVAL;
    *out = v;
    return 0;
}


static int
vl_parse_double(const char *s, bool is_percent, double *out)
{
    char *end = NULL;
    double v;

    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return -EINVAL;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || !isfinite(v))
        return -EINVAL;
    if (is_percent && *end == '%')
        end++;
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0')
        return -EINVAL;
    *out = v;
    return 0;
}


/* Host name (RFC 1123 letters, digits, '-', '.', '_'), IPv4 or IPv6. With
 * is_pattern, '*' and '?' are also accepted (auth lists). */
static bool
vl_addr_ok(const char *s, size_t len, bool is_pattern)
{
    char tmp[256];
    unsigned char bin[16];
    size_t i;

    if (len == 0 || len >= sizeof(tmp))
        return false;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    if (strchr(tmp, ':') != NULL) {
        if (inet_pton(AF_INET6, tmp, bin) == 1)
            return true;
        if (!is_pattern)
            return false;
        for (i = 0; i < len; i++)
            if (!isxdigit((unsigned char)tmp[i]) && tmp[i] != ':'
                && tmp[i] != '*')
                return false;
        return true;
    }
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)tmp[i];

        if (isalnum(c) || c == '-' || c == '.' || c == '_')
            continue;
        if (is_pattern && (c == '*' || c == '?'))
            continue;
        return false;
    }
    return true;
}


static bool
vl_addr_list_ok(const char *s)
{
    const char *p = s;

    for (;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma != NULL ? comma : p + strlen(p);
        const char *b = p;
        const char *e = end;

        while (b < e && isspace((unsigned char)*b))
            b++;
        while (e > b && isspace((unsigned char)e[-1]))
            e--;
        if (!vl_addr_ok(b, (size_t)(e - b), true))
            return false;
        if (comma == NULL)
            return true;
        p = comma + 1;
    }
}


/* Formats a range bound; NO_MIN / NO_MAX print as nothing. */
static void
vl_bound_str(int64_t v, int64_t none, char *buf, size_t len)
{
    if (v == none)
        buf[0] = '\0';
    else
        snprintf(buf, len, "%" PRId64, v);
}


static int
vl_range_fail(const vl_option_t *opt, const char *v, vl_err_t *err)
{
    char lo[32];
    char hi[32];

    vl_bound_str(opt->min, VL_OPT_NO_MIN, lo, sizeof(lo));
    vl_bound_str(opt->max, VL_OPT_NO_MAX, hi, sizeof(hi));
    vl_err_set(err, "option '%s': %s is out of range %s..%s", opt->key, v,
               lo, hi);
    return -EINVAL;
}


static int
vl_range_u64(const vl_option_t *opt, uint64_t v, vl_err_t *err)
{
    char num[32];
    bool is_low = opt->min != VL_OPT_NO_MIN && opt->min > 0
                  && v < (uint64_t)opt->min;
    bool is_high = opt->max != VL_OPT_NO_MAX
                   && (opt->max < 0 || v > (uint64_t)opt->max);

    if (!is_low && !is_high)
        return 0;
    snprintf(num, sizeof(num), "%" PRIu64, v);
    return vl_range_fail(opt, num, err);
}


static int
vl_range_i64(const vl_option_t *opt, int64_t v, vl_err_t *err)
{
    char num[32];

    if ((opt->min != VL_OPT_NO_MIN && v < opt->min)
        || (opt->max != VL_OPT_NO_MAX && v > opt->max)) {
        snprintf(num, sizeof(num), "%" PRId64, v);
        return vl_range_fail(opt, num, err);
    }
    return 0;
}


static int
vl_range_double(const vl_option_t *opt, double v, vl_err_t *err)
{
    char num[32];

    if ((opt->min != VL_OPT_NO_MIN && v < (double)opt->min)
        || (opt->max != VL_OPT_NO_MAX && v > (double)opt->max)) {
        snprintf(num, sizeof(num), "%g", v);
        return vl_range_fail(opt, num, err);
    }
    return 0;
}


static int
vl_bad_value(const vl_option_t *opt, const char *value, vl_err_t *err)
{
    vl_err_set(err, "option '%s': '%s' is not a valid %s", opt->key, value,
               vl_opt_type_name(opt->type));
    return -EINVAL;
}


/* Parses value for opt; stores into conf if conf is not NULL (strings are
 * duplicated, replacing any previous one). */
int
vl__opt_parse_value(const vl_option_t *opt, const char *value, void *conf,
                    vl_err_t *err)
{
    char *field = conf != NULL ? (char *)conf + opt->offset : NULL;
    uint64_t u = 0;
    int64_t i = 0;
    double d = 0;
    bool b = false;
    int idx;
    char *s;
    int rc;

    switch (opt->type) {
    case VL_OT_BOOL:
        if (vl_parse_bool(value, &b) != 0)
            return vl_bad_value(opt, value, err);
        if (field != NULL)
            *(bool *)(void *)field = b;
        return 0;
    case VL_OT_INT:
        if (vl_parse_int(value, &i) != 0)
            return vl_bad_value(opt, value, err);
        rc = vl_range_i64(opt, i, err);
        if (rc == 0 && field != NULL)
            *(int64_t *)(void *)field = i;
        return rc;
    case VL_OT_UINT:
    case VL_OT_SIZE:
    case VL_OT_TIME:
        if (opt->type == VL_OT_UINT) {
            const char *rest;

            rc = vl_parse_u64_prefix(value, &u, &rest);
            if (rc == 0 && *rest != '\0')
                rc = -EINVAL;
        } else if (opt->type == VL_OT_SIZE) {
            rc = vl_parse_size(value, &u);
        } else {
            rc = vl_parse_time_ms(value, &u);
        }
        if (rc != 0)
            return vl_bad_value(opt, value, err);
        rc = vl_range_u64(opt, u, err);
        if (rc == 0 && field != NULL)
            *(uint64_t *)(void *)field = u;
        return rc;
    case VL_OT_PERCENT:
    case VL_OT_DOUBLE:
        if (vl_parse_double(value, opt->type == VL_OT_PERCENT, &d) != 0)
            return vl_bad_value(opt, value, err);
        if (opt->type == VL_OT_PERCENT && (d < 0 || d > 100)) {
            vl_err_set(err, "option '%s': %g is out of range 0..100%%",
                       opt->key, d);
            return -EINVAL;
        }
        rc = vl_range_double(opt, d, err);
        if (rc == 0 && field != NULL)
            *(double *)(void *)field = d;
        return rc;
    case VL_OT_ENUM:
        for (idx = 0; opt->values != NULL && opt->values[idx] != NULL; idx++)
            if (strcasecmp(value, opt->values[idx]) == 0)
                break;
        if (opt->values == NULL || opt->values[idx] == NULL) {
            vl_err_set(err, "option '%s': '%s' is not one of the allowed "
                       "values", opt->key, value);
            return -EINVAL;
        }
        if (field != NULL)
            *(int *)(void *)field = idx;
        return 0;
    case VL_OT_PATH:
        if (value[0] != '/')
            return vl_bad_value(opt, value, err);
        break;
    case VL_OT_ADDR:
        if (!vl_addr_ok(value, strlen(value), false))
            return vl_bad_value(opt, value, err);
        break;
    case VL_OT_ADDR_LIST:
        if (!vl_addr_list_ok(value))
            return vl_bad_value(opt, value, err);
        break;
    case VL_OT_XLATOR:
        if (value[0] == '\0' || strpbrk(value, " \t") != NULL)
            return vl_bad_value(opt, value, err);
        break;
    case VL_OT_STR:
        break;
    default:
        vl_err_set(err, "option '%s': unknown type %d", opt->key,
                   (int)opt->type);
        return -EINVAL;
    }
    /* String types. */
    if (field == NULL)
        return 0;
    s = vl_strdup(NULL, value, VL_MT_OPTION);
    if (s == NULL) {
        vl_err_set(err, "option '%s': out of memory", opt->key);
        return -ENOMEM;
    }
    vl_free(*(char **)(void *)field);
    *(char **)(void *)field = s;
    return 0;
}


static int
vl_format_size(uint64_t v, char *buf, size_t len)
{
    static const char *const sfx[] = {"TB", "GB", "MB", "KB"};
    static const uint64_t mul[] = {1024 * VL_GiB, VL_GiB, VL_MiB, VL_KiB};
    size_t i;

    for (i = 0; v != 0 && i < VL_ARRAY_SIZE(mul); i++)
        if (v % mul[i] == 0)
            return snprintf(buf, len, "%" PRIu64 "%s", v / mul[i], sfx[i]);
    return snprintf(buf, len, "%" PRIu64, v);
}


static int
vl_format_time(uint64_t ms, char *buf, size_t len)
{
    if (ms != 0 && ms % 3600000 == 0)
        return snprintf(buf, len, "%" PRIu64 "h", ms / 3600000);
    if (ms != 0 && ms % 60000 == 0)
        return snprintf(buf, len, "%" PRIu64 "m", ms / 60000);
    if (ms % 1000 == 0)
        return snprintf(buf, len, "%" PRIu64 "s", ms / 1000);
    return snprintf(buf, len, "%" PRIu64 "ms", ms);
}


int
vl_option_format(const vl_option_t *opt, const void *conf, char *buf,
                 size_t len)
{
    const char *field = (const char *)conf + opt->offset;
    const char *s;
    int idx;

    switch (opt->type) {
    case VL_OT_BOOL:
        return snprintf(buf, len, "%s",
                        *(const bool *)(const void *)field ? "on" : "off");
    case VL_OT_INT:
        return snprintf(buf, len, "%" PRId64,
                        *(const int64_t *)(const void *)field);
    case VL_OT_UINT:
        return snprintf(buf, len, "%" PRIu64,
                        *(const uint64_t *)(const void *)field);
    case VL_OT_SIZE:
        return vl_format_size(*(const uint64_t *)(const void *)field, buf,
                              len);
    case VL_OT_TIME:
        return vl_format_time(*(const uint64_t *)(const void *)field, buf,
                              len);
    case VL_OT_PERCENT:
        return snprintf(buf, len, "%g%%",
                        *(const double *)(const void *)field);
    case VL_OT_DOUBLE:
        return snprintf(buf, len, "%g", *(const double *)(const void *)field);
    case VL_OT_ENUM:
        idx = *(const int *)(const void *)field;
        s = "";
        if (opt->values != NULL && idx >= 0) {
            int n = 0;

            while (opt->values[n] != NULL)
                n++;
            if (idx < n)
                s = opt->values[idx];
        }
        return snprintf(buf, len, "%s", s);
    default:
        s = *(char *const *)(const void *)field;
        return snprintf(buf, len, "%s", s != NULL ? s : "");
    }
}
