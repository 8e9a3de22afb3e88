/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * buf: refcounted, page-aligned byte buffers.
 *
 * The struct comes from vl_calloc; the data from posix_memalign (so it can
 * be used for O_DIRECT), counted in the core's "buf" type by hand.
 * Threads: refs are atomic; a buffer is immutable once shared.
 */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "core.h"

static size_t vl_page_size;


vl_buf_t *
vl_buf_new(size_t size)
{
    vl_buf_t *buf;
    void *data = NULL;
    size_t alloc = size != 0 ? size : 1;

    if (vl_page_size == 0) {
        long ps = sysconf(_SC_PAGESIZE);
        vl_page_size = ps > 0 ? (size_t)ps : 4096;
    }
    buf = vl_calloc(NULL, 1, sizeof(*buf), VL_MT_BUF);
    if (buf == NULL)
        return NULL;
    if (vl__mem_should_fail()
        || posix_memalign(&data, vl_page_size, alloc) != 0) {
        vl_free(buf);
        return NULL;
    }
    vl__mem_account_raw(VL_MT_BUF, (int64_t)alloc);
    atomic_init(&buf->refs, 1);
    buf->size = size;
    buf->data = data;
    return buf;
}


vl_buf_t *
vl_buf_ref(vl_buf_t *buf)
{
    atomic_fetch_add(&buf->refs, 1);
    return buf;
}


void
vl_buf_unref(vl_buf_t *buf)
{
    if (buf == NULL)
        return;
    if (atomic_fetch_sub(&buf->refs, 1) != 1)
        return;
    vl__mem_account_raw(VL_MT_BUF, -(int64_t)(buf->size != 0 ? buf->size : 1));
    free(buf->data);
    vl_free(buf);
}
