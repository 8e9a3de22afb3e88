/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dist-layout: directory layouts of cluster/distribute: constructors and
 * pure functions.
 *
 * A layout gives each subvolume a range [start, stop] (inclusive) of the
 * 32-bit name hash; a name lives on the subvolume whose range holds
 * dist_hash_name(name). On disk each brick's copy of the directory keeps
 * its own range in the 20-byte xattr trusted.mortar.dht: big-endian u32s
 * format (1), generation, start, stop, flags (HAS_RANGE, COMMITTED).
 *
 * A struct dist_layout holds one range per subvolume in a flexible array
 * sized by the subvolumes (20 bytes each; sized by DIST_MAX_SUBVOLS every
 * cached directory would pay for them all: 5 KiB at 256), so it is only
 * ever made by dist_layout_new or dist_layout_dup.
 *
 * Intercepts: nothing (no fops here).
 * State:      none; callers own the layouts.
 * Threads:    any.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "dist.h"

#define DIST_HASH_SPACE (1ULL << 32)


struct dist_layout *
dist_layout_new(vl_xlator_t *xl, unsigned n)
{
    struct dist_layout *l;

    if (n == 0 || n > DIST_MAX_SUBVOLS)
        return NULL;
    l = vl_calloc(xl, 1, sizeof(*l) + n * sizeof(l->r[0]), DIST_MT_LAYOUT);
    if (l != NULL)
        l->n = n;
    return l;
}


struct dist_layout *
dist_layout_dup(vl_xlator_t *xl, const struct dist_layout *l)
{
    struct dist_layout *copy = dist_layout_new(xl, l->n);

    if (copy != NULL)
        memcpy(copy->r, l->r, l->n * sizeof(l->r[0]));
    return copy;
}


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
dist_layout_default(struct dist_layout *l, dist_mask_t skip,
                    uint32_t generation, uint32_t flags)
{
    unsigned m = 0, k = 0;
    uint64_t chunk;

    memset(l->r, 0, l->n * sizeof(l->r[0]));
    for (unsigned i = 0; i < l->n; i++)
        if (!dist_mask_test(skip, i))
            m++;
    chunk = m > 0 ? DIST_HASH_SPACE / m : 0;
    for (unsigned i = 0; i < l->n; i++) {
        struct dist_range *r = &l->r[i];

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


/* Whether range x sorts before range y (by start, then stop). */
static bool
dist_range_before(const struct dist_range *x, const struct dist_range *y)
{
    if (x->start != y->start)
        return x->start < y->start;
    return x->stop < y->stop;
}


/* Holes and overlaps among the ranges that were read; missing layouts
 * (-ENODATA, -ENOENT, -EINVAL for a corrupt value) and subvolumes that
 * could not be asked. A layout needs repair when something is wrong and
 * every subvolume answered (with one down its range is unknown, and a
 * repair would take names away from it). */
bool
dist_layout_check(const struct dist_layout *layout, struct dist_anomalies *an)
{
    /* Indices, not pointers: 2 bytes of stack per subvolume. Ranges are
     * usually in index order already (default layouts are), where an
     * insertion sort is one pass. */
    uint16_t sorted[DIST_MAX_SUBVOLS];
    unsigned n_sorted = 0, n = layout->n;
    uint64_t next = 0;

    memset(an, 0, sizeof(*an));
    if (n > DIST_MAX_SUBVOLS)
        n = DIST_MAX_SUBVOLS; /* dist_layout_new makes none larger */
    for (unsigned i = 0; i < n; i++) {
        const struct dist_range *r = &layout->r[i];

        if (r->err == -ENODATA || r->err == -ENOENT || r->err == -EINVAL) {
            an->n_missing++;
            dist_mask_set(&an->missing, i);
        } else if (r->err != 0) {
            an->n_down++;
        } else if (r->flags & DIST_FLAG_HAS_RANGE) {
            unsigned k = n_sorted++;

            while (k > 0 && dist_range_before(r, &layout->r[sorted[k - 1]])) {
                sorted[k] = sorted[k - 1];
                k--;
            }
            sorted[k] = (uint16_t)i;
        }
    }
    for (unsigned k = 0; k < n_sorted; k++) {
        const struct dist_range *r = &layout->r[sorted[k]];

        if (r->start > next)
            an->n_holes++;
        else if (r->start < next)
            an->n_overlaps++;
        if ((uint64_t)r->stop + 1 > next)
            next = (uint64_t)r->stop + 1;
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
