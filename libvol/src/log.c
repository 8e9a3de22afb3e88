/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log: levelled log lines to a file or stderr.
 *
 * Threads: one mutex serialises writes and reopening; the level is read
 * without it (a racy read only delays a level change by one message).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>

#include "core.h"

vl_log_level_t vl__log_level = VL_LOG_INFO;

static pthread_mutex_t vl_log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *vl_log_file; /* owned unless stderr; guarded by vl_log_lock */

static const char vl_log_letters[] = "NCEWIDT";
static const char *const vl_log_names[] = {
    "NONE", "CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "TRACE",
};


int
vl_log_open(const char *path, vl_log_level_t level)
{
    FILE *f = stderr;
    int rc = 0;

    if (path != NULL && strcmp(path, "-") != 0) {
        f = fopen(path, "ae");
        if (f == NULL)
            return -errno;
        setvbuf(f, NULL, _IOLBF, 0);
    }
    pthread_mutex_lock(&vl_log_lock);
    if (vl_log_file != NULL && vl_log_file != stderr)
        fclose(vl_log_file);
    vl_log_file = f;
    vl__log_level = level;
    pthread_mutex_unlock(&vl_log_lock);
    return rc;
}


void
vl_log_close(void)
{
    pthread_mutex_lock(&vl_log_lock);
    if (vl_log_file != NULL && vl_log_file != stderr)
        fclose(vl_log_file);
    vl_log_file = NULL;
    pthread_mutex_unlock(&vl_log_lock);
}


void
vl_log_set_level(vl_log_level_t level)
{
    vl__log_level = level;
}


vl_log_level_t
vl_log_get_level(void)
{
    return vl__log_level;
}


int
vl_log_level_parse(const char *s, vl_log_level_t *out)
{
    size_t i;

    if (s == NULL)
        return -EINVAL;
    if (strcasecmp(s, "WARN") == 0) {
        *out = VL_LOG_WARNING;
        return 0;
    }
    for (i = 0; i < VL_ARRAY_SIZE(vl_log_names); i++) {
        if (strcasecmp(s, vl_log_names[i]) == 0) {
            *out = (vl_log_level_t)i;
            return 0;
        }
    }
    return -EINVAL;
}


void
vl__log(const char *domain, const char *file, int line, const char *func,
        vl_log_level_t level, const char *fmt, ...)
{
    char msg[1024];
    char stamp[64];
    struct timeval tv;
    struct tm tm;
    const char *base = strrchr(file, '/');
    va_list ap;
    FILE *f;

    if (level <= VL_LOG_NONE || level > VL_LOG_TRACE)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);

    pthread_mutex_lock(&vl_log_lock);
    f = vl_log_file != NULL ? vl_log_file : stderr;
    fprintf(f, "[%s.%06ld] %c [%s:%d:%s] %s: %s\n", stamp, (long)tv.tv_usec,
            vl_log_letters[level], base != NULL ? base + 1 : file, line, func,
            domain != NULL ? domain : "vol", msg);
    pthread_mutex_unlock(&vl_log_lock);
}
