/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * common: GFID helpers (on libuuid), human-readable errors, and the
 * process-wide initialisation vl_global_init.
 *
 * Threads: everything here is thread-safe; vl_global_init runs once.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <uuid/uuid.h>

#include "core.h"

const vl_gfid_t vl_gfid_root = {.bytes = {0, 0, 0, 0, 0, 0, 0, 0,
                                          0, 0, 0, 0, 0, 0, 0, 1}};
const vl_gfid_t vl_gfid_null = {.bytes = {0}};


bool
vl_gfid_is_null(const vl_gfid_t *gfid)
{
    return memcmp(gfid->bytes, vl_gfid_null.bytes, 16) == 0;
}


bool
vl_gfid_is_root(const vl_gfid_t *gfid)
{
    return memcmp(gfid->bytes, vl_gfid_root.bytes, 16) == 0;
}


bool
vl_gfid_equal(const vl_gfid_t *a, const vl_gfid_t *b)
{
    return memcmp(a->bytes, b->bytes, 16) == 0;
}


void
vl_gfid_generate(vl_gfid_t *out)
{
    uuid_generate(out->bytes);
}


char *
vl_gfid_to_str(const vl_gfid_t *gfid, char *buf)
{
    uuid_unparse_lower(gfid->bytes, buf);
    return buf;
}


int
vl_gfid_parse(const char *str, vl_gfid_t *out)
{
    /* uuid_parse accepts exactly the 36-character form. */
    if (str == NULL || strlen(str) != 36)
        return -EINVAL;
    if (uuid_parse(str, out->bytes) != 0)
        return -EINVAL;
    return 0;
}


uint64_t
vl_gfid_to_ino(const vl_gfid_t *gfid)
{
    uint64_t ino = 0;
    int i;

    for (i = 8; i < 16; i++)
        ino = (ino << 8) | gfid->bytes[i];
    /* 0 is not a valid inode number for the kernel; the null GFID never
     * reaches a client, but do not hand out 0 anyway. */
    return ino == 0 ? 1 : ino;
}


void
vl_err_set(vl_err_t *err, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
}


static pthread_once_t vl_global_once = PTHREAD_ONCE_INIT;


static void
vl_global_init_once(void)
{
    vl__mem_init_from_env();
    /* Logging already goes to stderr at INFO by default; do not undo a
     * vl_log_open or level a program set before calling us. */
}


void
vl_global_init(void)
{
    pthread_once(&vl_global_once, vl_global_init_once);
}
