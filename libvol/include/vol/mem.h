/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mem: allocation with per-translator accounting and fault injection.
 *
 * Every allocation names its owner (a translator, or NULL for the core) and
 * a memory type (an index into the owner class's mem_types table; 0 is
 * always "misc"). A statedump lists, per translator and type, the bytes and
 * objects outstanding, so a leak says whose it is.
 *
 * Fault injection: vl_mem_fail_at(n) makes the n-th following allocation
 * (counted across the process, 1-based) return NULL once. The environment
 * variable VL_TEST_FAIL_ALLOC_AT=n does the same at process start. Unit
 * tests loop n = 1, 2, ... until a run passes without reaching n.
 */
#ifndef VOL_MEM_H
#define VOL_MEM_H

#include <stddef.h>
#include <stdint.h>

struct vl_xlator;

/* Memory types the core itself uses (owner NULL). */
enum vl_core_mem_type {
    VL_MT_MISC = 0,
    VL_MT_REQ,
    VL_MT_INODE,
    VL_MT_FD,
    VL_MT_BUF,
    VL_MT_GRAPH,
    VL_MT_XLATOR,
    VL_MT_OPTION,
    VL_MT_VOLFILE,
    VL_MT_LOOP,
    VL_MT_DIRENT,
    VL_MT_REPLY,
    VL_MT_CORE_COUNT
};

void *vl_malloc(struct vl_xlator *xl, size_t size, unsigned type);
void *vl_calloc(struct vl_xlator *xl, size_t n, size_t size, unsigned type);
/* Keeps the owner and type of ptr; ptr may be NULL (then owner is core). */
void *vl_realloc(void *ptr, size_t size);
char *vl_strdup(struct vl_xlator *xl, const char *s, unsigned type);
char *vl_strndup(struct vl_xlator *xl, const char *s, size_t n, unsigned type);
/* NULL is allowed. Only for memory from the functions above. */
void vl_free(void *ptr);

/* Fault injection; n <= 0 disables it. */
void vl_mem_fail_at(long n);
/* How many allocations were attempted since the last vl_mem_fail_at(). */
long vl_mem_alloc_count(void);

/* Outstanding allocations of the core (xl NULL) or of one translator. */
struct vl_mem_stat {
    uint64_t bytes;   /* bytes outstanding */
    uint64_t objects; /* allocations outstanding */
};
void vl_mem_stat_total(struct vl_xlator *xl, struct vl_mem_stat *out /* OUT */);

#endif /* VOL_MEM_H */
