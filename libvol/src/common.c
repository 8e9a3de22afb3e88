/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * common: GFID helpers (on libuuid), human-readable errors, and the
 * process-wide initialisation vl_global_init.
 *
 * Threads: everything here is thread-safe; vl_global_init runs once.
 * New GFIDs come from a per-thread pool of kernel random bytes, refilled
 * by one getrandom(2) per 256 GFIDs: libuuid's uuid_generate makes about
 * six system calls per GFID (getrandom, getpid, getuid, ...), and every
 * create and mkdir of a client makes one.
 * The GFIDs of one refill share their first two bytes, the ones that name
 * a brick's handle directory (.mortar/handles/xx/yy/, storage/posix): a
 * young brick then makes one handle directory per 256 new files of a
 * thread instead of one per file, and an old brick finds the handles of
 * files made together in the same directory blocks. The other 106 random
 * bits keep GFIDs unique; inode tables hash bytes 8..15.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
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


/* Bumped in a forked child: a child must never hand out the GFIDs its
 * parent's pool still holds (both would create the same ones). */
static atomic_uint gfid_pool_fork_gen;


static void
gfid_pool_after_fork(void)
{
    atomic_fetch_add(&gfid_pool_fork_gen, 1);
}


static pthread_once_t gfid_pool_once = PTHREAD_ONCE_INIT;


static void
gfid_pool_register(void)
{
    pthread_atfork(NULL, NULL, gfid_pool_after_fork);
}


/* Per thread: kernel random bytes not handed out yet. */
static __thread struct {
    uint8_t bytes[4096]; /* from getrandom; used front to back */
    size_t used;         /* bytes handed out; == size means empty */
    unsigned fork_gen;   /* gfid_pool_fork_gen when filled */
    bool filled;         /* bytes were filled once */
} gfid_pool;


static bool
gfid_pool_fill(void)
{
    size_t got = 0;

    while (got < sizeof(gfid_pool.bytes)) {
        ssize_t n = getrandom(gfid_pool.bytes + got,
                              sizeof(gfid_pool.bytes) - got, 0);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        got += (size_t)n;
    }
    gfid_pool.used = 0;
    gfid_pool.filled = true;
    gfid_pool.fork_gen = atomic_load(&gfid_pool_fork_gen);
    return true;
}


void
vl_gfid_generate(vl_gfid_t *out)
{
    pthread_once(&gfid_pool_once, gfid_pool_register);
    if (!gfid_pool.filled || gfid_pool.used + 16 > sizeof(gfid_pool.bytes)
        || gfid_pool.fork_gen != atomic_load(&gfid_pool_fork_gen)) {
        if (!gfid_pool_fill()) {
            /* No getrandom (ENOSYS in an old sandbox): libuuid's own
             * sources. */
            uuid_generate(out->bytes);
            return;
        }
    }
    memcpy(out->bytes, gfid_pool.bytes + gfid_pool.used, 16);
    out->bytes[0] = gfid_pool.bytes[0]; /* this refill's handle directory */
    out->bytes[1] = gfid_pool.bytes[1];
    gfid_pool.used += 16;
    out->bytes[6] = (uint8_t)((out->bytes[6] & 0x0f) | 0x40); /* v4 */
    out->bytes[8] = (uint8_t)((out->bytes[8] & 0x3f) | 0x80); /* RFC 4122 */
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
