/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * buf: refcounted byte buffers for bulk data (read replies, write payloads,
 * RPC records). Data is page-aligned so it can go straight to O_DIRECT I/O.
 * Data blocks of 64 KiB and more are recycled through per-size-class free
 * lists, so bulk I/O does not pay for fresh (unfaulted) pages on every
 * request.
 */
#ifndef VOL_BUF_H
#define VOL_BUF_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct vl_buf {
    atomic_int refs; /* the buffer is freed when this drops to 0 */
    size_t size;     /* bytes usable at data */
    char *data;      /* page-aligned, owned */
    int pool_class;  /* core's: size class data came from, or -1 */
} vl_buf_t;

/* Returns a buffer with one ref, or NULL on ENOMEM. */
vl_buf_t *vl_buf_new(size_t size);
vl_buf_t *vl_buf_ref(vl_buf_t *buf);
void vl_buf_unref(vl_buf_t *buf); /* NULL is allowed */

#endif /* VOL_BUF_H */
