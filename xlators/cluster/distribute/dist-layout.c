/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-layout: directory layouts of cluster/distribute, pure functions.
 *
 * A layout gives each subvolume a range [start, stop] (inclusive) of the
 * 32-bit name hash; a name lives on the subvolume whose range holds
 * dist_hash_name(name). On disk each brick's copy of the directory keeps
 * its own range in the 20-byte xattr trusted.mortar.dht: big-endian u32s
 * format (1), generation, start, stop, flags (HAS_RANGE, COMMITTED).
 *
 * Intercepts: nothing (no fops here).
 * State:      none; callers own the layouts.
 * Threads:    any.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"

#define DIST_HASH_SPACE (1ULL << 32)


static void
dist_put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}


static uint32_t
dist_get_be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16)
           | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}


void
dist_layout_encode(const struct dist_range *r,
                   unsigned char out[DIST_LAYOUT_SIZE])
{
    dist_put_be32(out, DIST_LAYOUT_FORMAT);
    dist_put_be32(out + 4, r->generation);
    dist_put_be32(out + 8, r->start);
    dist_put_be32(out + 12, r->stop);
    dist_put_be32(out + 16, r->flags);
}


/* Returns 0 or -EINVAL for a value of the wrong size, an unknown format
 * or a range that ends before it starts. */
int
dist_layout_decode(const void *buf, size_t len, struct dist_range *out)
{
    const unsigned char *p = buf;

    memset(out, 0, sizeof(*out));
    if (buf == NULL || len != DIST_LAYOUT_SIZE)
        return -EINVAL;
    if (dist_get_be32(p) != DIST_LAYOUT_FORMAT)
        return -EINVAL;
    out->generation = dist_get_be32(p + 4);
    out->start = dist_get_be32(p + 8);
    out->stop = dist_get_be32(p + 12);
    out->flags = dist_get_be32(p + 16);
    if ((out->flags & DIST_FLAG_HAS_RANGE) && out->stop < out->start)
        return -EINVAL;
    return 0;
}


/* Equal contiguous ranges in index order over the subvolumes not in
 * skip; the last one takes the remainder of 2^32. */
void
dist_layout_default(struct dist_layout *out, unsigned n, dist_mask_t skip,
                    uint32_t generation, uint32_t flags)
{
    unsigned m = 0, k = 0;
    uint64_t chunk;

    memset(out, 0, sizeof(*out));
    out->n = n > DIST_MAX_SUBVOLS ? DIST_MAX_SUBVOLS : n;
    for (unsigned i = 0; i < out->n; i++)
        if (!dist_mask_test(skip, i))
            m++;
    chunk = m > 0 ? DIST_HASH_SPACE / m : 0;
    for (unsigned i = 0; i < out->n; i++) {
        struct dist_range *r = &out->r[i];

        r->generation = generation;
        r->flags = flags & ~DIST_FLAG_HAS_RANGE;
        if (dist_mask_test(skip, i))
            continue;
        r->start = (uint32_t)(k * chunk);
        r->stop = (k + 1 == m) ? UINT32_MAX
                               : (uint32_t)((k + 1) * chunk - 1);
        r->flags |= DIST_FLAG_HAS_RANGE;
        k++;
    }
}


int
dist_layout_search_hash(const struct dist_layout *layout, uint32_t hash)
{
    for (unsigned i = 0; i < layout->n; i++) {
        const struct dist_range *r = &layout->r[i];

        if (r->err == 0 && (r->flags & DIST_FLAG_HAS_RANGE)
            && r->start <= hash && hash <= r->stop)
            return (int)i;
    }
    return -1;
}


int
dist_layout_search(const struct dist_layout *layout, const char *name)
{
    return dist_layout_search_hash(layout,
                                   dist_hash_name(name, strlen(name)));
}


static int
dist_range_cmp(const void *a, const void *b)
{
    const struct dist_range *x = *(const struct dist_range *const *)a;
    const struct dist_range *y = *(const struct dist_range *const *)b;

    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->stop < y->stop ? -1 : (x->stop > y->stop);
}


/* Holes and overlaps among the ranges that were read; missing layouts
 * (-ENODATA, -ENOENT, -EINVAL for a corrupt value) and subvolumes that
 * could not be asked. A layout needs repair when something is wrong and
 * every subvolume answered (with one down its range is unknown, and a
 * repair would take names away from it). */
bool
dist_layout_check(const struct dist_layout *layout, struct dist_anomalies *an)
{
    const struct dist_range *sorted[DIST_MAX_SUBVOLS];
    unsigned n_sorted = 0;
    uint64_t next = 0;

    memset(an, 0, sizeof(*an));
    for (unsigned i = 0; i < layout->n; i++) {
        const struct dist_range *r = &layout->r[i];

        if (r->err == -ENODATA || r->err == -ENOENT || r->err == -EINVAL) {
            an->n_missing++;
            dist_mask_set(&an->missing, i);
        } else if (r->err != 0) {
            an->n_down++;
        } else if (r->flags & DIST_FLAG_HAS_RANGE) {
            sorted[n_sorted++] = r;
        }
    }
    qsort(sorted, n_sorted, sizeof(sorted[0]), dist_range_cmp);
    for (unsigned k = 0; k < n_sorted; k++) {
        if (sorted[k]->start > next)
            an->n_holes++;
        else if (sorted[k]->start < next)
            an->n_overlaps++;
        if ((uint64_t)sorted[k]->stop + 1 > next)
            next = (uint64_t)sorted[k]->stop + 1;
    }
    if (next < DIST_HASH_SPACE)
        an->n_holes++;
    return an->n_down == 0
           && (an->n_holes > 0 || an->n_overlaps > 0 || an->n_missing > 0);
}


uint32_t
dist_layout_max_generation(const struct dist_layout *layout)
{
    uint32_t gen = 0;

    for (unsigned i = 0; i < layout->n; i++)
        if (layout->r[i].err == 0 && layout->r[i].generation > gen)
            gen = layout->r[i].generation;
    return gen;
}


bool
dist_layout_is_committed(const struct dist_layout *layout)
{
    bool has_any = false;

    for (unsigned i = 0; i < layout->n; i++) {
        const struct dist_range *r = &layout->r[i];

        if (r->err != 0)
            continue;
        has_any = true;
        if (!(r->flags & DIST_FLAG_COMMITTED))
            return false;
    }
    return has_any;
}
