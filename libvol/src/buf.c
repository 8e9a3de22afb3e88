/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * buf: refcounted, page-aligned byte buffers.
 *
 * The struct comes from vl_calloc; the data from posix_memalign (so it can
 * be used for O_DIRECT), counted in the core's "buf" type by hand.
 *
 * Pool: blocks of VL_BUF_POOL_MIN bytes and more are rounded up to a power
 * of two and, when freed, kept on their class's free list (up to
 * VL_BUF_POOL_BYTES per class) for the next buffer of that class. A fresh
 * 1 MiB block costs 256 page faults when first written, which dominated
 * a 1 MiB read through the brick (perf: _copy_to_iter faulting).
 * Threads: refs are atomic; a buffer is immutable once shared; each class
 * has its own mutex.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "core.h"

#define VL_BUF_POOL_MIN_SHIFT 16  /* 64 KiB */
#define VL_BUF_POOL_CLASSES 10    /* 64 KiB .. 32 MiB */
#define VL_BUF_POOL_BYTES (32 * VL_MiB)

/* A free block, stored in the block itself. */
struct vl_buf_free {
    struct vl_buf_free *next; /* next free block of the class */
};

static struct vl_buf_class {
    pthread_mutex_t lock;      /* guards head and n_free */
    struct vl_buf_free *head;  /* owned free blocks */
    size_t n_free;             /* blocks on head */
} vl_buf_classes[VL_BUF_POOL_CLASSES] = {
    [0 ... VL_BUF_POOL_CLASSES - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER},
};

static size_t vl_page_size;


/* The class for alloc bytes, or -1 for blocks too small or too big. */
static int
vl_buf_class_of(size_t alloc)
{
    int c = 0;

#ifdef __SANITIZE_ADDRESS__
    /* Recycled blocks would hide use-after-free from ASan. */
    (void)alloc;
    return -1;
#endif
    if (alloc < ((size_t)1 << VL_BUF_POOL_MIN_SHIFT))
        return -1;
    while (((size_t)1 << (VL_BUF_POOL_MIN_SHIFT + c)) < alloc) {
        if (++c == VL_BUF_POOL_CLASSES)
            return -1;
    }
    return c;
}


static void *
vl_buf_block_get(int c, size_t alloc)
{
    struct vl_buf_class *cl;
    struct vl_buf_free *f = NULL;
    void *data = NULL;

    if (c < 0)
        return posix_memalign(&data, vl_page_size, alloc) == 0 ? data : NULL;
    cl = &vl_buf_classes[c];
    pthread_mutex_lock(&cl->lock);
    if (cl->head != NULL) {
        f = cl->head;
        cl->head = f->next;
        cl->n_free--;
    }
    pthread_mutex_unlock(&cl->lock);
    if (f != NULL)
        return f;
    alloc = (size_t)1 << (VL_BUF_POOL_MIN_SHIFT + c);
    return posix_memalign(&data, vl_page_size, alloc) == 0 ? data : NULL;
}


static void
vl_buf_block_put(int c, void *data)
{
    struct vl_buf_class *cl;
    size_t max_free;

    if (c < 0) {
        free(data);
        return;
    }
    cl = &vl_buf_classes[c];
    max_free = VL_BUF_POOL_BYTES >> (VL_BUF_POOL_MIN_SHIFT + c);
    if (max_free < 2)
        max_free = 2;
    pthread_mutex_lock(&cl->lock);
    if (cl->n_free < max_free) {
        struct vl_buf_free *f = data;

        f->next = cl->head;
        cl->head = f;
        cl->n_free++;
        data = NULL;
    }
    pthread_mutex_unlock(&cl->lock);
    free(data);
}


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
    buf->pool_class = vl_buf_class_of(alloc);
    if (vl__mem_should_fail()
        || (data = vl_buf_block_get(buf->pool_class, alloc)) == NULL) {
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
    vl_buf_block_put(buf->pool_class, buf->data);
    vl_free(buf);
}
