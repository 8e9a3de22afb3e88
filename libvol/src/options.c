/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options: lookup of option table entries (by key, alias or '*' pattern)
 * and parsing of a whole configuration struct from defaults plus the
 * key/value pairs of a volfile volume. The per-type work is in
 * option-types.c.
 *
 * Threads: pure functions on caller-owned data.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "core.h"


/* pattern may contain one '*' standing for any non-empty text. */
bool
vl__key_match(const char *pattern, const char *key)
{
    const char *star = strchr(pattern, '*');
    size_t pre;
    size_t suf;
    size_t klen;

    if (star == NULL)
        return strcmp(pattern, key) == 0;
    pre = (size_t)(star - pattern);
    suf = strlen(star + 1);
    klen = strlen(key);
    if (klen < pre + suf + 1)
        return false;
    return strncmp(pattern, key, pre) == 0
           && strcmp(key + klen - suf, star + 1) == 0;
}


static bool
vl_opt_names_match(const vl_option_t *opt, const char *key, bool is_pattern)
{
    size_t i;

    if ((strchr(opt->key, '*') != NULL) == is_pattern
        && vl__key_match(opt->key, key))
        return true;
    for (i = 0; i < VL_ARRAY_SIZE(opt->aliases) && opt->aliases[i] != NULL;
         i++)
        if ((strchr(opt->aliases[i], '*') != NULL) == is_pattern
            && vl__key_match(opt->aliases[i], key))
            return true;
    return false;
}


const vl_option_t *
vl_option_find(const vl_option_t *table, const char *key)
{
    const vl_option_t *opt;
    int pass;

    if (table == NULL || key == NULL)
        return NULL;
    /* Exact keys and aliases win over '*' patterns. */
    for (pass = 0; pass < 2; pass++)
        for (opt = table; opt->key != NULL; opt++)
            if (vl_opt_names_match(opt, key, pass == 1))
                return opt;
    return NULL;
}


int
vl_option_validate(const vl_option_t *table, const char *key,
                   const char *value, vl_err_t *err)
{
    const vl_option_t *opt = vl_option_find(table, key);

    if (opt == NULL) {
        vl_err_set(err, "unknown option '%s'", key);
        return -ENOENT;
    }
    if (value == NULL) {
        vl_err_set(err, "option '%s': missing value", key);
        return -EINVAL;
    }
    return vl__opt_parse_value(opt, value, NULL, err);
}


void
vl_conf_clear(const vl_option_t *table, void *conf)
{
    const vl_option_t *opt;

    if (table == NULL || conf == NULL)
        return;
    for (opt = table; opt->key != NULL; opt++) {
        char **field;

        switch (opt->type) {
        case VL_OT_STR:
        case VL_OT_PATH:
        case VL_OT_ADDR:
        case VL_OT_ADDR_LIST:
        case VL_OT_XLATOR:
            field = (char **)(void *)((char *)conf + opt->offset);
            vl_free(*field);
            *field = NULL;
            break;
        default:
            break;
        }
    }
}


int
vl_conf_parse(const vl_option_t *table, const struct vl_kv *kvs,
              size_t n_kvs, void *conf, vl_err_t *err)
{
    const vl_option_t *opt;
    bool *is_given = NULL;
    size_t n_opts = 0;
    size_t i;
    int rc = 0;

    if (table == NULL) {
        if (n_kvs > 0) {
            vl_err_set(err, "unknown option '%s'", kvs[0].key);
            return -ENOENT;
        }
        return 0;
    }
    for (opt = table; opt->key != NULL; opt++)
        n_opts++;
    if (n_opts > 0) {
        is_given = vl_calloc(NULL, n_opts, sizeof(*is_given), VL_MT_OPTION);
        if (is_given == NULL) {
            vl_err_set(err, "out of memory parsing options");
            return -ENOMEM;
        }
    }

    for (opt = table; opt->key != NULL; opt++) {
        if (opt->def == NULL)
            continue;
        rc = vl__opt_parse_value(opt, opt->def, conf, err);
        if (rc != 0) {
            if (rc != -ENOMEM)
                vl_err_set(err, "option '%s': bad default '%s'", opt->key,
                           opt->def);
            goto out;
        }
    }

    for (i = 0; i < n_kvs; i++) {
        opt = vl_option_find(table, kvs[i].key);
        if (opt == NULL) {
            vl_err_set(err, "unknown option '%s'", kvs[i].key);
            rc = -ENOENT;
            goto out;
        }
        if (kvs[i].value == NULL) {
            vl_err_set(err, "option '%s': missing value", kvs[i].key);
            rc = -EINVAL;
            goto out;
        }
        rc = vl__opt_parse_value(opt, kvs[i].value, conf, err);
        if (rc != 0)
            goto out;
        if (opt->flags & VL_OPT_DEPRECATED)
            vl_glog("options", VL_LOG_WARNING,
                    "option '%s' is deprecated; use '%s'", kvs[i].key,
                    opt->replaced_by != NULL ? opt->replaced_by : "-");
        is_given[opt - table] = true;
    }

    for (opt = table; opt->key != NULL; opt++) {
        if ((opt->flags & VL_OPT_REQUIRED) && !is_given[opt - table]) {
            vl_err_set(err, "option '%s' is required", opt->key);
            rc = -EINVAL;
            goto out;
        }
    }
out:
    if (rc != 0)
        vl_conf_clear(table, conf);
    vl_free(is_given);
    return rc;
}
