/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mem: allocation with per-owner accounting and fault injection.
 *
 * Every block starts with a struct vl_mem_hdr naming its accounting struct
 * and type, so vl_free knows whose counters to decrease. An accounting
 * struct is refcounted (its owner's ref plus one per live block), so a
 * translator that leaks does not leave dangling headers behind.
 *
 * Threads: counters are atomics; no locks on the allocation path.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define VL_MEM_MAGIC 0x4d6f7274u /* "Mort" */
#define VL_MEM_FREED 0x46726565u /* "Free" */

/* Counters of one type. */
struct vl_mem_type_stat {
    atomic_uint_least64_t bytes;   /* outstanding bytes */
    atomic_uint_least64_t objects; /* outstanding allocations */
};

struct vl_mem_acct {
    atomic_long refs;                 /* owner + live blocks */
    char *owner;                      /* owned (malloc); name for dumps */
    const char *const *type_names;    /* borrowed, static class table */
    unsigned n_types;                 /* entries in types */
    struct vl_mem_type_stat types[];  /* per type index */
};

/* Header in front of every block; 32 bytes keeps 16-byte alignment. */
struct vl_mem_hdr {
    struct vl_mem_acct *acct; /* counted ref */
    size_t size;              /* user bytes */
    uint32_t type;            /* index into acct->types */
    uint32_t magic;           /* VL_MEM_MAGIC while live */
    uint64_t pad;             /* keeps the user block 16-byte aligned */
};

_Static_assert(sizeof(struct vl_mem_hdr) % 16 == 0, "header alignment");

static const char *const vl_core_type_names[] = {
    "misc", "req", "inode", "fd", "buf", "graph", "xlator", "option",
    "volfile", "loop", "dirent", "reply", NULL,
};

/* The core's accounting; static, never freed. */
static struct {
    struct vl_mem_acct acct;
    struct vl_mem_type_stat types[VL_MT_CORE_COUNT];
} vl_core_acct = {
    .acct = {.refs = 1, .owner = NULL, .type_names = vl_core_type_names,
             .n_types = VL_MT_CORE_COUNT},
};

static atomic_long vl_alloc_count; /* attempts since vl_mem_fail_at */
static atomic_long vl_fail_at;     /* attempt number to fail, 0 = off */


struct vl_mem_acct *
vl__mem_core_acct(void)
{
    return &vl_core_acct.acct;
}


struct vl_mem_acct *
vl__mem_acct_new(const char *owner, const char *const *type_names)
{
    struct vl_mem_acct *acct;
    unsigned n = 0;

    if (type_names != NULL)
        while (type_names[n] != NULL)
            n++;
    if (n == 0)
        n = 1; /* "misc" */
    if (vl__mem_should_fail())
        return NULL;
    acct = calloc(1, sizeof(*acct) + n * sizeof(acct->types[0]));
    if (acct == NULL)
        return NULL;
    acct->owner = strdup(owner != NULL ? owner : "?");
    if (acct->owner == NULL) {
        free(acct);
        return NULL;
    }
    atomic_init(&acct->refs, 1);
    acct->type_names = type_names;
    acct->n_types = n;
    return acct;
}


static void
vl_mem_acct_unref(struct vl_mem_acct *acct)
{
    if (acct == &vl_core_acct.acct)
        return;
    if (atomic_fetch_sub(&acct->refs, 1) == 1) {
        free(acct->owner);
        free(acct);
    }
}


void
vl__mem_acct_put(struct vl_mem_acct *acct)
{
    if (acct != NULL)
        vl_mem_acct_unref(acct);
}


void
vl__mem_acct_dump(struct vl_mem_acct *acct, FILE *out)
{
    unsigned i;

    if (acct == NULL)
        acct = &vl_core_acct.acct;
    for (i = 0; i < acct->n_types; i++) {
        uint64_t bytes = atomic_load(&acct->types[i].bytes);
        uint64_t objs = atomic_load(&acct->types[i].objects);
        const char *name = "misc";

        if (objs == 0)
            continue;
        if (acct->type_names != NULL && acct->type_names[i] != NULL)
            name = acct->type_names[i];
        fprintf(out, "mem.%s.bytes=%llu\nmem.%s.objects=%llu\n", name,
                (unsigned long long)bytes, name, (unsigned long long)objs);
    }
}


bool
vl__mem_should_fail(void)
{
    long n = atomic_fetch_add(&vl_alloc_count, 1) + 1;
    long at = atomic_load(&vl_fail_at);

    if (at > 0 && n == at) {
        /* Fail once: later attempts succeed. */
        atomic_store(&vl_fail_at, 0);
        return true;
    }
    return false;
}


void
vl__mem_account_raw(unsigned type, int64_t delta)
{
    struct vl_mem_type_stat *st = &vl_core_acct.types[type];

    if (delta >= 0) {
        atomic_fetch_add(&st->bytes, (uint64_t)delta);
        atomic_fetch_add(&st->objects, 1);
    } else {
        atomic_fetch_sub(&st->bytes, (uint64_t)-delta);
        atomic_fetch_sub(&st->objects, 1);
    }
}


void
vl__mem_init_from_env(void)
{
    const char *s = getenv("VL_TEST_FAIL_ALLOC_AT");
    char *end = NULL;
    long n;

    if (s == NULL || *s == '\0')
        return;
    errno = 0;
    n = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || n <= 0) {
        fprintf(stderr, "VL_TEST_FAIL_ALLOC_AT: bad value '%s'\n", s);
        return;
    }
    vl_mem_fail_at(n);
}


void
vl_mem_fail_at(long n)
{
    atomic_store(&vl_alloc_count, 0);
    atomic_store(&vl_fail_at, n > 0 ? n : 0);
}


long
vl_mem_alloc_count(void)
{
    return atomic_load(&vl_alloc_count);
}


static struct vl_mem_acct *
vl_mem_owner_acct(struct vl_xlator *xl)
{
    if (xl == NULL || xl->mem_acct == NULL)
        return &vl_core_acct.acct;
    return xl->mem_acct;
}


static void
vl_mem_count(struct vl_mem_hdr *hdr, bool is_add)
{
    struct vl_mem_type_stat *st = &hdr->acct->types[hdr->type];

    if (is_add) {
        atomic_fetch_add(&st->bytes, hdr->size);
        atomic_fetch_add(&st->objects, 1);
    } else {
        atomic_fetch_sub(&st->bytes, hdr->size);
        atomic_fetch_sub(&st->objects, 1);
    }
}


static void *
vl_mem_alloc(struct vl_xlator *xl, size_t size, unsigned type, bool is_zero)
{
    struct vl_mem_acct *acct = vl_mem_owner_acct(xl);
    struct vl_mem_hdr *hdr;

    if (vl__mem_should_fail())
        return NULL;
    if (size > SIZE_MAX - sizeof(*hdr))
        return NULL;
    if (is_zero)
        hdr = calloc(1, sizeof(*hdr) + size);
    else
        hdr = malloc(sizeof(*hdr) + size);
    if (hdr == NULL)
        return NULL;
    if (type >= acct->n_types)
        type = 0;
    if (acct != &vl_core_acct.acct)
        atomic_fetch_add(&acct->refs, 1);
    hdr->acct = acct;
    hdr->size = size;
    hdr->type = type;
    hdr->magic = VL_MEM_MAGIC;
    vl_mem_count(hdr, true);
    return hdr + 1;
}


void *
vl_malloc(struct vl_xlator *xl, size_t size, unsigned type)
{
    return vl_mem_alloc(xl, size, type, false);
}


void *
vl_calloc(struct vl_xlator *xl, size_t n, size_t size, unsigned type)
{
    if (size != 0 && n > SIZE_MAX / size) {
        (void)vl__mem_should_fail(); /* still an attempt */
        return NULL;
    }
    return vl_mem_alloc(xl, n * size, type, true);
}


static struct vl_mem_hdr *
vl_mem_hdr_of(void *ptr)
{
    struct vl_mem_hdr *hdr = (struct vl_mem_hdr *)ptr - 1;

    if (hdr->magic != VL_MEM_MAGIC) {
        fprintf(stderr, "libvol: vl_free/vl_realloc of %p: %s\n", ptr,
                hdr->magic == VL_MEM_FREED ? "double free"
                                           : "not from vl_malloc");
        abort();
    }
    return hdr;
}


void *
vl_realloc(void *ptr, size_t size)
{
    struct vl_mem_hdr *hdr;
    struct vl_mem_hdr *nhdr;

    if (ptr == NULL)
        return vl_malloc(NULL, size, VL_MT_MISC);
    hdr = vl_mem_hdr_of(ptr);
    if (vl__mem_should_fail())
        return NULL;
    if (size > SIZE_MAX - sizeof(*hdr))
        return NULL;
    /* Uncount first: after a successful realloc hdr may be gone. */
    vl_mem_count(hdr, false);
    nhdr = realloc(hdr, sizeof(*hdr) + size);
    if (nhdr == NULL) {
        vl_mem_count(hdr, true);
        return NULL;
    }
    nhdr->size = size;
    vl_mem_count(nhdr, true);
    return nhdr + 1;
}


char *
vl_strdup(struct vl_xlator *xl, const char *s, unsigned type)
{
    return vl_strndup(xl, s, strlen(s), type);
}


char *
vl_strndup(struct vl_xlator *xl, const char *s, size_t n, unsigned type)
{
    size_t len = strnlen(s, n);
    char *p = vl_malloc(xl, len + 1, type);

    if (p == NULL)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}


void
vl_free(void *ptr)
{
    struct vl_mem_hdr *hdr;
    struct vl_mem_acct *acct;

    if (ptr == NULL)
        return;
    hdr = vl_mem_hdr_of(ptr);
    acct = hdr->acct;
    vl_mem_count(hdr, false);
    hdr->magic = VL_MEM_FREED;
    free(hdr);
    vl_mem_acct_unref(acct);
}


void
vl_mem_stat_total(struct vl_xlator *xl, struct vl_mem_stat *out)
{
    struct vl_mem_acct *acct = vl_mem_owner_acct(xl);
    unsigned i;

    out->bytes = 0;
    out->objects = 0;
    for (i = 0; i < acct->n_types; i++) {
        out->bytes += atomic_load(&acct->types[i].bytes);
        out->objects += atomic_load(&acct->types[i].objects);
    }
}
