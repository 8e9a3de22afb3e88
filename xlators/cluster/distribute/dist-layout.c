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


/* Chunk k of m equal contiguous chunks of the hash space (chunk c each),
 * as dist_layout_default cuts them: the last one takes the remainder. */
static uint32_t
dist_chunk_start(unsigned k, uint64_t c)
{
    return (uint32_t)(k * c);
}

static uint32_t
dist_chunk_stop(unsigned k, unsigned m, uint64_t c)
{
    return k + 1 == m ? UINT32_MAX : (uint32_t)((k + 1) * c - 1);
}

/* Whether r is a range read from a brick that can be kept. */
static bool
dist_range_is_old(const struct dist_range *r)
{
    return r->err == 0 && (r->flags & DIST_FLAG_HAS_RANGE)
           && r->start <= r->stop;
}

/* Hash values of r inside chunk k, in units of 2^16 (a chunk is at least
 * 2^24 at 256 subvolumes): the last chunk's remainder (fewer than m
 * values) must not break ties, or a volume grown from one brick would
 * keep the last chunk on it rather than the first. */
static int64_t
dist_chunk_overlap(const struct dist_range *r, unsigned k, unsigned m,
                   uint64_t c)
{
    uint32_t k_start = dist_chunk_start(k, c);
    uint32_t k_stop = dist_chunk_stop(k, m, c);
    uint32_t lo = r->start > k_start ? r->start : k_start;
    uint32_t hi = r->stop < k_stop ? r->stop : k_stop;

    return lo <= hi ? ((int64_t)hi - lo + 1) >> 16 : 0;
}

/* The subvolumes not in skip with an old range, by old start (ties by
 * index); returns how many. An insertion sort: at most 256, and qsort
 * would need the layout in a global. */
static unsigned
dist_refit_sorted_old(const struct dist_layout *l, dist_mask_t skip,
                      unsigned *out)
{
    unsigned p = 0;

    for (unsigned i = 0; i < l->n; i++) {
        unsigned j = p;

        if (dist_mask_test(skip, i) || !dist_range_is_old(&l->r[i]))
            continue;
        while (j > 0 && l->r[out[j - 1]].start > l->r[i].start) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = i;
        p++;
    }
    return p;
}

/* Chooses chunk[j] for each old[j] (j < p), strictly increasing, that
 * maximises the hash values kept: a dynamic programme over (old
 * subvolumes, chunks), rows rolled, choices kept as bits. Ties go to the
 * earlier chunk. Returns false on ENOMEM. */
static bool
dist_refit_match(vl_xlator_t *xl, const struct dist_layout *l,
                 const unsigned *old, unsigned p, unsigned m, uint64_t c,
                 unsigned *chunk)
{
    size_t row = (size_t)m + 1;
    int64_t *prev = vl_calloc(xl, 2 * row, sizeof(int64_t), DIST_MT_LAYOUT);
    unsigned char *took = vl_calloc(xl, ((size_t)p * row + 7) / 8, 1,
                                    DIST_MT_LAYOUT);
    int64_t *cur;

    if (prev == NULL || took == NULL) {
        vl_free(prev);
        vl_free(took);
        return false;
    }
    cur = prev + row;
    /* prev[k]: best for the first j old subvolumes within chunks < k;
     * -1 where j > k (each needs a chunk of its own). */
    for (unsigned j = 1; j <= p; j++) {
        const struct dist_range *r = &l->r[old[j - 1]];

        for (unsigned k = 0; k < row; k++) {
            int64_t skip = k > 0 ? cur[k - 1] : -1, take = -1;

            if (k > 0 && prev[k - 1] >= 0)
                take = prev[k - 1] + dist_chunk_overlap(r, k - 1, m, c);
            if (take > skip) {
                size_t bit = (size_t)(j - 1) * row + k;

                took[bit / 8] |= (unsigned char)(1u << (bit % 8));
                cur[k] = take;
            } else {
                cur[k] = skip;
            }
        }
        memcpy(prev, cur, row * sizeof(int64_t));
    }
    for (unsigned j = p, k = m; j > 0; k--) {
        size_t bit = (size_t)(j - 1) * row + k;

        if (took[bit / 8] & (1u << (bit % 8))) {
            chunk[j - 1] = k - 1;
            j--;
        }
    }
    vl_free(prev);
    vl_free(took);
    return true;
}

/* The default's chunks, but dealt so that each subvolume keeps as much of
 * its old range (l's ranges as read) as it can. Adding bricks to an
 * index-ordered layout would otherwise shift every range after the first
 * and move most names (3/4 of them going from 2 bricks to 4, where half
 * must move). The old subvolumes keep their order around the hash space
 * and get the placement that keeps the most (dist_refit_match); the
 * others take the chunks left, both in index order. The result depends
 * on the old layout only, so every client refitting it writes the same.
 * With no usable old range, or out of memory, it is dist_layout_default
 * (more moves, still a full layout). */
void
dist_layout_refit(vl_xlator_t *xl, struct dist_layout *l, dist_mask_t skip,
                  uint32_t generation, uint32_t flags)
{
    unsigned m = 0, p = 0, next = 0;
    uint64_t c;
    /* Four arrays of n: old subvolumes by start, their chunks, chunk ->
     * subvolume and subvolume -> chunk (-1: none); on the heap, as 4 KiB
     * at 256 subvolumes is too much for a translator's frame. */
    unsigned *old = vl_calloc(xl, 4 * (size_t)l->n, sizeof(unsigned),
                              DIST_MT_LAYOUT);
    unsigned *chunk = old != NULL ? old + l->n : NULL;
    int *owner = old != NULL ? (int *)(chunk + l->n) : NULL;
    int *got = owner != NULL ? owner + l->n : NULL;

    for (unsigned i = 0; i < l->n; i++)
        if (!dist_mask_test(skip, i))
            m++;
    if (old != NULL)
        p = dist_refit_sorted_old(l, skip, old);
    c = m > 0 ? DIST_HASH_SPACE / m : 0;
    if (m == 0 || p == 0 || !dist_refit_match(xl, l, old, p, m, c, chunk)) {
        vl_free(old);
        dist_layout_default(l, skip, generation, flags);
        return;
    }
    for (unsigned i = 0; i < l->n; i++)
        owner[i] = got[i] = -1;
    for (unsigned j = 0; j < p; j++) {
        owner[chunk[j]] = (int)old[j];
        got[old[j]] = (int)chunk[j];
    }
    for (unsigned i = 0; i < l->n; i++) {
        struct dist_range *r = &l->r[i];

        if (!dist_mask_test(skip, i) && got[i] < 0) {
            while (owner[next] >= 0)
                next++;
            owner[next] = (int)i;
            got[i] = (int)next;
        }
        memset(r, 0, sizeof(*r));
        r->generation = generation;
        r->flags = flags & ~DIST_FLAG_HAS_RANGE;
        if (got[i] < 0)
            continue;
        r->start = dist_chunk_start((unsigned)got[i], c);
        r->stop = dist_chunk_stop((unsigned)got[i], m, c);
        r->flags |= DIST_FLAG_HAS_RANGE;
    }
    vl_free(old);
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
    return dist_layout_search_hash(layout, dist_hash_placement(name));
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
