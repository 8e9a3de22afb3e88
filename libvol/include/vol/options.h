/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options: one typed table per translator, bound to the fields of its
 * configuration struct. The same table parses volfile options, validates
 * `volume set` in mortard, formats statedumps and generates doc/options.md.
 *
 *   struct iot_conf { uint64_t thread_count; bool is_prio; };
 *   static const vl_option_t iot_options[] = {
 *       VL_OPT_UINT("thread-count", struct iot_conf, thread_count,
 *                   .min = 1, .max = 64, .def = "2",
 *                   .flags = VL_OPT_SETTABLE | VL_OPT_LIVE,
 *                   .aliases = { "performance.io-thread-count" },
 *                   .doc = "Worker threads that run fops."),
 *       VL_OPT_END
 *   };
 *
 * Field types by option type:
 *   BOOL bool; INT int64_t; UINT, SIZE (bytes), TIME (milliseconds)
 *   uint64_t; PERCENT, DOUBLE double; ENUM int (index into .values);
 *   STR, PATH, ADDR, ADDR_LIST, XLATOR char * (owned by the conf).
 * Value syntax:
 *   BOOL: on/off, yes/no, true/false, enable/disable, 1/0.
 *   SIZE: integer with optional suffix B, K/KB/KiB, M/MB/MiB, G..., T...
 *         (all powers of 1024, as GlusterFS reads them).
 *   TIME: integer with optional suffix ms, s, m, h; bare means seconds.
 *   PERCENT: number with optional "%", 0..100.
 *   ADDR: host name, IPv4 or IPv6 address; ADDR_LIST: comma-separated
 *   ADDRs or patterns with '*' (auth lists).
 * Keys may contain one '*' standing for any non-empty text, for keys such
 * as "auth.addr.*.allow" (the brick's subvolume name, often a path).
 */
#ifndef VOL_OPTIONS_H
#define VOL_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "vol/common.h"

typedef enum vl_opt_type {
    VL_OT_BOOL,
    VL_OT_INT,
    VL_OT_UINT,
    VL_OT_SIZE,
    VL_OT_PERCENT,
    VL_OT_DOUBLE,
    VL_OT_ENUM,
    VL_OT_STR,
    VL_OT_PATH,
    VL_OT_TIME,
    VL_OT_ADDR,
    VL_OT_ADDR_LIST,
    VL_OT_XLATOR,
} vl_opt_type_t;

#define VL_OPT_SETTABLE (1u << 0)   /* visible to `volume set` */
#define VL_OPT_LIVE (1u << 1)       /* reconfigure() applies it in place */
#define VL_OPT_CLIENT (1u << 2)     /* clients must refetch the volfile */
#define VL_OPT_ADVANCED (1u << 3)   /* hidden from short help */
#define VL_OPT_DEPRECATED (1u << 4) /* see replaced_by */
#define VL_OPT_REQUIRED (1u << 5)   /* the volfile must give it */

#define VL_OPT_NO_MIN INT64_MIN
#define VL_OPT_NO_MAX INT64_MAX

typedef struct vl_option {
    const char *key;             /* volfile key, e.g. "thread-count" */
    vl_opt_type_t type;
    size_t offset;               /* of the field in the conf struct */
    size_t size;                 /* of the field, checked against type */
    int64_t min;                 /* inclusive, in the field's unit */
    int64_t max;                 /* inclusive */
    const char *def;             /* default as user text; NULL = none */
    const char *const *values;   /* ENUM names, NULL-terminated */
    unsigned flags;              /* VL_OPT_* */
    const char *doc;             /* one sentence, required */
    const char *aliases[4];      /* other accepted keys (GlusterFS's) */
    const char *replaced_by;     /* with VL_OPT_DEPRECATED */
    const char *since;           /* Mortar version that added it */
} vl_option_t;

/* Compile-time check that a field has the size its option type needs. */
#define VL__FIELD_SIZE(T, f, want)                                           \
    (sizeof(char[sizeof(((T *)0)->f) == (want) ? 1 : -1]) *                  \
     sizeof(((T *)0)->f))

#define VL__OPT(k, t, T, f, want, ...)                                       \
    {.key = (k), .type = (t), .offset = offsetof(T, f),                      \
     .size = VL__FIELD_SIZE(T, f, want), .min = VL_OPT_NO_MIN,               \
     .max = VL_OPT_NO_MAX, __VA_ARGS__}

#define VL_OPT_BOOL(k, T, f, ...) VL__OPT(k, VL_OT_BOOL, T, f, sizeof(bool), __VA_ARGS__)
#define VL_OPT_INT(k, T, f, ...) VL__OPT(k, VL_OT_INT, T, f, sizeof(int64_t), __VA_ARGS__)
#define VL_OPT_UINT(k, T, f, ...) VL__OPT(k, VL_OT_UINT, T, f, sizeof(uint64_t), __VA_ARGS__)
#define VL_OPT_SIZE(k, T, f, ...) VL__OPT(k, VL_OT_SIZE, T, f, sizeof(uint64_t), __VA_ARGS__)
#define VL_OPT_TIME(k, T, f, ...) VL__OPT(k, VL_OT_TIME, T, f, sizeof(uint64_t), __VA_ARGS__)
#define VL_OPT_PERCENT(k, T, f, ...) VL__OPT(k, VL_OT_PERCENT, T, f, sizeof(double), __VA_ARGS__)
#define VL_OPT_DOUBLE(k, T, f, ...) VL__OPT(k, VL_OT_DOUBLE, T, f, sizeof(double), __VA_ARGS__)
#define VL_OPT_ENUM(k, T, f, ...) VL__OPT(k, VL_OT_ENUM, T, f, sizeof(int), __VA_ARGS__)
#define VL_OPT_STR(k, T, f, ...) VL__OPT(k, VL_OT_STR, T, f, sizeof(char *), __VA_ARGS__)
#define VL_OPT_PATH(k, T, f, ...) VL__OPT(k, VL_OT_PATH, T, f, sizeof(char *), __VA_ARGS__)
#define VL_OPT_ADDR(k, T, f, ...) VL__OPT(k, VL_OT_ADDR, T, f, sizeof(char *), __VA_ARGS__)
#define VL_OPT_ADDR_LIST(k, T, f, ...) VL__OPT(k, VL_OT_ADDR_LIST, T, f, sizeof(char *), __VA_ARGS__)
#define VL_OPT_XLATOR(k, T, f, ...) VL__OPT(k, VL_OT_XLATOR, T, f, sizeof(char *), __VA_ARGS__)
#define VL_OPT_END {.key = NULL}

/* The entry for key (also by alias or '*' pattern), or NULL. */
const vl_option_t *vl_option_find(const vl_option_t *table, const char *key);

/* Checks that value is valid for key; fills err and returns -EINVAL (bad
 * value or out of range) or -ENOENT (unknown key). */
int vl_option_validate(const vl_option_t *table, const char *key,
                       const char *value, vl_err_t *err);

/* Fills conf (zeroed by the caller, table's struct) from the defaults and
 * then kvs. Unknown keys, bad values and missing required options fail
 * with a message naming the key. On failure conf holds nothing to free. */
int vl_conf_parse(const vl_option_t *table, const struct vl_kv *kvs,
                  size_t n_kvs, void *conf, vl_err_t *err);
/* Frees the strings conf owns (not conf itself). */
void vl_conf_clear(const vl_option_t *table, void *conf);
/* Writes the value of opt in conf as text, like the input syntax. Returns
 * the length that would be written (snprintf rules). */
int vl_option_format(const vl_option_t *opt, const void *conf, char *buf,
                     size_t len);
/* Type name for documentation: "bool", "size", ... */
const char *vl_opt_type_name(vl_opt_type_t type);

/* Parsers, exposed for mortard and the CLI. All return 0 or -EINVAL. */
int vl_parse_bool(const char *s, bool *out);
int vl_parse_size(const char *s, uint64_t *out);
int vl_parse_time_ms(const char *s, uint64_t *out);

#endif /* VOL_OPTIONS_H */
