/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fop-stats: the per-translator fop counters (vol/fop-stats.h says what
 * they count and which translators a request credits).
 *
 * Storage: each translator owns one struct vl__xl_stats (made with the
 * translator, freed with it), an array of counters indexed by fop. The
 * request records the translators it reached and when (req.c, the hops
 * in its core trailer); vl_unwind calls vl__fop_stats_credit once per hop.
 *
 * Threads: every counter is an atomic updated with relaxed order; nothing
 * needs ordering with anything else, a reader only wants each value to be
 * one that was true at some point. min and max use a compare-and-swap
 * loop that runs only when the value improves on the stored one.
 */
#include "config.h"

#include <string.h>
#include <time.h>

#include "core.h"
#include "vol/fop-stats.h"

static atomic_uint_least64_t vl_fop_stats_n_unrecorded; /* see fop-stats.h */


unsigned
vl_lat_bucket(uint64_t ns)
{
    uint64_t us = ns / 1000;
    unsigned k;

    if (us == 0)
        return 0;
    /* us in [2^(k-1), 2^k) for k = floor(log2(us)) + 1. */
    k = 64u - (unsigned)__builtin_clzll(us);
    return k < VL_LAT_BUCKETS - 1 ? k : VL_LAT_BUCKETS - 1;
}


uint64_t
vl_lat_bucket_le_ns(unsigned k)
{
    if (k >= VL_LAT_BUCKETS - 1)
        return UINT64_MAX;
    return (1ULL << k) * 1000ULL;
}


struct vl__xl_stats *
vl__fop_stats_new(void)
{
    struct vl__xl_stats *st;
    size_t i;

    st = vl_calloc(NULL, 1, sizeof(*st), VL_MT_XLATOR);
    if (st == NULL)
        return NULL;
    for (i = 0; i < VL_FOP_COUNT; i++)
        atomic_init(&st->fops[i].lat_min_ns, UINT64_MAX);
    return st;
}


void
vl__fop_stats_free(struct vl__xl_stats *st)
{
    vl_free(st);
}


uint64_t
vl__now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}


void
vl__fop_stats_credit(vl_xlator_t *xl, vl_fop_t op, int status, uint64_t ns,
                     uint64_t bytes)
{
    struct vl__fop_counter *c;
    uint64_t old;

    if (xl->fop_stats == NULL || (unsigned)op >= VL_FOP_COUNT)
        return;
    c = &xl->fop_stats->fops[op];
    atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
    if (status < 0)
        atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->lat_sum_ns, ns, memory_order_relaxed);
    if (bytes != 0)
        atomic_fetch_add_explicit(&c->bytes, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->lat_bucket[vl_lat_bucket(ns)], 1,
                              memory_order_relaxed);
    old = atomic_load_explicit(&c->lat_min_ns, memory_order_relaxed);
    while (ns < old
           && !atomic_compare_exchange_weak_explicit(
               &c->lat_min_ns, &old, ns, memory_order_relaxed,
               memory_order_relaxed))
        ;
    old = atomic_load_explicit(&c->lat_max_ns, memory_order_relaxed);
    while (ns > old
           && !atomic_compare_exchange_weak_explicit(
               &c->lat_max_ns, &old, ns, memory_order_relaxed,
               memory_order_relaxed))
        ;
}


void
vl__fop_stats_unrecorded_add(void)
{
    atomic_fetch_add_explicit(&vl_fop_stats_n_unrecorded, 1,
                              memory_order_relaxed);
}


uint64_t
vl_fop_stats_unrecorded(void)
{
    return atomic_load_explicit(&vl_fop_stats_n_unrecorded,
                                memory_order_relaxed);
}


void
vl_fop_stats_read(const struct vl_xlator *xl, vl_fop_t op,
                  vl_fop_stats_t *out)
{
    const struct vl__fop_counter *c;
    size_t k;

    memset(out, 0, sizeof(*out));
    out->lat_min_ns = UINT64_MAX;
    if (xl == NULL || xl->fop_stats == NULL || (unsigned)op >= VL_FOP_COUNT)
        return;
    c = &xl->fop_stats->fops[op];
    out->calls = atomic_load_explicit(&c->calls, memory_order_relaxed);
    out->errors = atomic_load_explicit(&c->errors, memory_order_relaxed);
    out->lat_sum_ns = atomic_load_explicit(&c->lat_sum_ns,
                                           memory_order_relaxed);
    out->lat_min_ns = atomic_load_explicit(&c->lat_min_ns,
                                           memory_order_relaxed);
    out->lat_max_ns = atomic_load_explicit(&c->lat_max_ns,
                                           memory_order_relaxed);
    out->bytes = atomic_load_explicit(&c->bytes, memory_order_relaxed);
    for (k = 0; k < VL_LAT_BUCKETS; k++)
        out->lat_bucket[k] = atomic_load_explicit(&c->lat_bucket[k],
                                                  memory_order_relaxed);
}
