/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log: levelled logging to a file or stderr.
 *
 * Lines look like
 *   [2026-11-30 00:50:01.123456] E [posix.c:123:posix_open] v0-posix: msg
 * Level letters: C E W I D T. Messages are lowercase, give the values, and
 * do not end with a period. The translator name is added for you.
 */
#ifndef VOL_LOG_H
#define VOL_LOG_H

#include <stdarg.h>

struct vl_xlator;

typedef enum vl_log_level {
    VL_LOG_NONE = 0,
    VL_LOG_CRITICAL,
    VL_LOG_ERROR,
    VL_LOG_WARNING,
    VL_LOG_INFO,
    VL_LOG_DEBUG,
    VL_LOG_TRACE,
} vl_log_level_t;

/* Opens (appends to) path, or logs to stderr when path is NULL or "-".
 * Returns 0 or -errno. May be called again to reopen (log rotation). */
int vl_log_open(const char *path, vl_log_level_t level);
void vl_log_close(void);
void vl_log_set_level(vl_log_level_t level);
vl_log_level_t vl_log_get_level(void);
/* Parses "NONE", "CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "TRACE"
 * (any case, also GlusterFS's "WARN"). Returns 0 or -EINVAL. */
int vl_log_level_parse(const char *s, vl_log_level_t *out /* OUT */);

extern vl_log_level_t vl__log_level;

void vl__log(const char *domain, const char *file, int line, const char *func,
             vl_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Log on behalf of a translator (xl may be NULL). */
#define vl_log(xl, level, ...)                                               \
    do {                                                                     \
        if ((level) <= vl__log_level)                                        \
            vl__log((xl) != NULL ? (xl)->name : NULL, __FILE__, __LINE__,    \
                    __func__, (level), __VA_ARGS__);                         \
    } while (0)

/* Log on behalf of a named component that is not a translator. */
#define vl_glog(domain, level, ...)                                          \
    do {                                                                     \
        if ((level) <= vl__log_level)                                        \
            vl__log((domain), __FILE__, __LINE__, __func__, (level),         \
                    __VA_ARGS__);                                            \
    } while (0)

#endif /* VOL_LOG_H */
