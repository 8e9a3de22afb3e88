/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of distribute's layouts: encoding, default ranges (also with
 * decommissioned subvolumes), search, anomaly detection, the spread of
 * 10,000 names over 4 subvolumes (within +-10% of even) and over 100, and
 * of 25,600 over 256 (within +-40% of even: about 4 standard deviations),
 * the subvolume sets (dist_mask_t) up to DIST_MAX_SUBVOLS, and the refit
 * of fix-layout (each subvolume keeps as much of its old range as it can:
 * half the names stay when the bricks double). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dist.h"


static void
test_encode_decode(void **state)
{
    struct dist_range r = {.generation = 7, .start = 0x40000000,
                           .stop = 0x7fffffff,
                           .flags = DIST_FLAG_HAS_RANGE
                                    | DIST_FLAG_COMMITTED};
    static const unsigned char want[DIST_LAYOUT_SIZE] = {
        0, 0, 0, 1, 0, 0, 0, 7, 0x40, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff,
        0, 0, 0, 3};
    unsigned char buf[DIST_LAYOUT_SIZE];
    struct dist_range back;

    (void)state;
    dist_layout_encode(&r, buf);
    assert_memory_equal(buf, want, sizeof(want));
    assert_int_equal(dist_layout_decode(buf, sizeof(buf), &back), 0);
    assert_int_equal(back.generation, 7);
    assert_int_equal(back.start, 0x40000000u);
    assert_int_equal(back.stop, 0x7fffffffu);
    assert_int_equal(back.flags, 3);
    /* Wrong size, wrong format, reversed range. */
    assert_int_equal(dist_layout_decode(buf, 19, &back), -EINVAL);
    assert_int_equal(dist_layout_decode(NULL, 20, &back), -EINVAL);
    buf[3] = 2;
    assert_int_equal(dist_layout_decode(buf, sizeof(buf), &back), -EINVAL);
    r.start = 10;
    r.stop = 5;
    dist_layout_encode(&r, buf);
    assert_int_equal(dist_layout_decode(buf, sizeof(buf), &back), -EINVAL);
}


/* A layout of n subvolumes (test-owned: vl_free). */
static struct dist_layout *
tl_new(unsigned n)
{
    struct dist_layout *l = dist_layout_new(NULL, n);

    assert_non_null(l);
    return l;
}


static void
test_default_layout(void **state)
{
    struct dist_layout *l = tl_new(4);
    struct dist_anomalies an;

    (void)state;
    dist_layout_default(l, dist_mask_none(), 1, DIST_FLAG_COMMITTED);
    assert_int_equal(l->n, 4);
    assert_int_equal(l->r[0].start, 0);
    assert_int_equal(l->r[0].stop, 0x3fffffffu);
    assert_int_equal(l->r[1].start, 0x40000000u);
    assert_int_equal(l->r[3].stop, 0xffffffffu);
    for (int i = 0; i < 4; i++)
        assert_int_equal(l->r[i].flags,
                         DIST_FLAG_HAS_RANGE | DIST_FLAG_COMMITTED);
    assert_false(dist_layout_check(l, &an));
    assert_int_equal(an.n_holes + an.n_overlaps + an.n_missing, 0);
    assert_true(dist_layout_is_committed(l));
    vl_free(l);

    /* Three subvolumes: the last takes the remainder. */
    l = tl_new(3);
    dist_layout_default(l, dist_mask_none(), 1, 0);
    assert_int_equal(l->r[0].stop + 1, l->r[1].start);
    assert_int_equal(l->r[1].stop + 1, l->r[2].start);
    assert_int_equal(l->r[2].stop, 0xffffffffu);
    assert_false(dist_layout_check(l, &an));
    assert_false(dist_layout_is_committed(l));
    vl_free(l);

    /* Subvolume 1 decommissioned: no range, the others cover it all. */
    l = tl_new(4);
    dist_layout_default(l, dist_mask_one(1), 2, 0);
    assert_false(l->r[1].flags & DIST_FLAG_HAS_RANGE);
    assert_int_equal(l->r[0].start, 0);
    assert_int_equal(l->r[3].stop, 0xffffffffu);
    assert_int_equal(l->r[0].stop + 1, l->r[2].start);
    assert_false(dist_layout_check(l, &an));
    for (int i = 0; i < 100; i++) {
        char name[16];

        snprintf(name, sizeof(name), "n%d", i);
        assert_int_not_equal(dist_layout_search(l, name), 1);
    }
    vl_free(l);

    /* One subvolume. */
    l = tl_new(1);
    dist_layout_default(l, dist_mask_none(), 1, 0);
    assert_int_equal(l->r[0].start, 0);
    assert_int_equal(l->r[0].stop, 0xffffffffu);
    vl_free(l);
}


static void
test_search_matches_hash(void **state)
{
    struct dist_layout *l = tl_new(4);

    (void)state;
    dist_layout_default(l, dist_mask_none(), 1, 0);
    for (int i = 0; i < 1000; i++) {
        char name[32];
        int len = snprintf(name, sizeof(name), "f-%d", i);
        uint32_t h = dist_hash_name(name, (size_t)len);
        int s = dist_layout_search(l, name);

        assert_in_range(s, 0, 3);
        assert_true(l->r[s].start <= h && h <= l->r[s].stop);
        assert_int_equal(s, (int)(h >> 30));
    }
    /* A subvolume whose layout could not be read holds nothing. */
    l->r[2].err = -ENOTCONN;
    assert_int_equal(dist_layout_search_hash(l, 0x80000000u), -1);
    vl_free(l);
}


/* n_names names over a default layout of n subvolumes: each gets between
 * lo and hi of them. */
static void
tl_spread(unsigned n, unsigned n_names, unsigned lo, unsigned hi)
{
    struct dist_layout *l = tl_new(n);
    unsigned count[DIST_MAX_SUBVOLS] = {0};

    dist_layout_default(l, dist_mask_none(), 1, 0);
    assert_int_equal(l->n, n);
    for (unsigned i = 0; i < n_names; i++) {
        char name[32];
        int s;

        snprintf(name, sizeof(name), "file%05u.txt", i);
        s = dist_layout_search(l, name);
        assert_in_range(s, 0, n - 1);
        count[s]++;
    }
    for (unsigned i = 0; i < n; i++) {
        if (count[i] < lo || count[i] > hi)
            fail_msg("%u names over %u subvolumes: %u on subvolume %u, "
                     "not %u..%u", n_names, n, count[i], i, lo, hi);
    }
    vl_free(l);
}


static void
test_spread_10000_over_4(void **state)
{
    (void)state;
    tl_spread(4, 10000, 2250, 2750);
}


static void
test_spread_10000_over_100(void **state)
{
    (void)state;
    tl_spread(100, 10000, 60, 140);
}


static void
test_spread_25600_over_256(void **state)
{
    (void)state;
    tl_spread(256, 25600, 60, 140);
}


/* 256 subvolumes, ranges in index order: the last one ends at 2^32 - 1,
 * each starts where the one before it stopped; a decommissioned subvolume
 * above 64 gets none and no name. */
static void
test_default_layout_256(void **state)
{
    struct dist_layout *l = tl_new(256);
    struct dist_anomalies an;
    dist_mask_t skip = dist_mask_none();

    (void)state;
    dist_layout_default(l, skip, 1, DIST_FLAG_COMMITTED);
    assert_int_equal(l->r[0].start, 0);
    for (unsigned i = 1; i < l->n; i++)
        assert_int_equal(l->r[i].start, l->r[i - 1].stop + 1);
    assert_int_equal(l->r[255].stop, 0xffffffffu);
    assert_false(dist_layout_check(l, &an));

    dist_mask_set(&skip, 70);
    dist_mask_set(&skip, 255);
    dist_layout_default(l, skip, 2, 0);
    assert_false(l->r[70].flags & DIST_FLAG_HAS_RANGE);
    assert_false(l->r[255].flags & DIST_FLAG_HAS_RANGE);
    assert_int_equal(l->r[69].stop + 1, l->r[71].start);
    assert_int_equal(l->r[254].stop, 0xffffffffu);
    assert_false(dist_layout_check(l, &an));
    for (int i = 0; i < 20000; i++) {
        char name[32];
        int s;

        snprintf(name, sizeof(name), "n%d", i);
        s = dist_layout_search(l, name);
        assert_true(s >= 0 && s != 70 && s != 255);
    }

    /* Missing on subvolume 200 (a new brick): in the set, repair wanted;
     * an overlap between 100 and 101. */
    dist_layout_default(l, dist_mask_none(), 1, 0);
    l->r[200].err = -ENODATA;
    l->r[101].start -= 5;
    assert_true(dist_layout_check(l, &an));
    assert_int_equal(an.n_missing, 1);
    assert_true(dist_mask_equal(an.missing, dist_mask_one(200)));
    assert_int_equal(an.n_overlaps, 1);
    assert_int_equal(an.n_holes, 1);
    vl_free(l);
}


static void
test_layout_new_and_dup(void **state)
{
    struct dist_layout *l, *copy;

    (void)state;
    assert_null(dist_layout_new(NULL, 0));
    assert_null(dist_layout_new(NULL, DIST_MAX_SUBVOLS + 1));
    l = tl_new(DIST_MAX_SUBVOLS);
    for (unsigned i = 0; i < l->n; i++)
        assert_int_equal(l->r[i].flags | l->r[i].start | l->r[i].stop, 0);
    dist_layout_default(l, dist_mask_none(), 9, DIST_FLAG_COMMITTED);
    copy = dist_layout_dup(NULL, l);
    assert_non_null(copy);
    assert_int_equal(copy->n, DIST_MAX_SUBVOLS);
    assert_memory_equal(copy->r, l->r, l->n * sizeof(l->r[0]));
    vl_free(copy);
    vl_free(l);
}


static void
test_anomalies(void **state)
{
    struct dist_layout *l = tl_new(4);
    struct dist_anomalies an;

    (void)state;
    /* A hole: subvolume 1's range cleared. */
    dist_layout_default(l, dist_mask_none(), 1, 0);
    l->r[1].flags &= ~DIST_FLAG_HAS_RANGE;
    assert_true(dist_layout_check(l, &an));
    assert_int_equal(an.n_holes, 1);
    assert_int_equal(an.n_overlaps, 0);

    /* An overlap. */
    dist_layout_default(l, dist_mask_none(), 1, 0);
    l->r[2].start -= 10;
    assert_true(dist_layout_check(l, &an));
    assert_int_equal(an.n_overlaps, 1);

    /* Ranges out of index order are sorted first: no anomaly. */
    dist_layout_default(l, dist_mask_none(), 1, 0);
    {
        struct dist_range r0 = l->r[0];

        l->r[0] = l->r[3];
        l->r[3] = r0;
    }
    assert_false(dist_layout_check(l, &an));
    assert_int_equal(an.n_holes + an.n_overlaps, 0);

    /* Missing on one subvolume (new brick): repair wanted. */
    dist_layout_default(l, dist_mask_none(), 1, 0);
    l->r[3].err = -ENODATA;
    assert_true(dist_layout_check(l, &an));
    assert_int_equal(an.n_missing, 1);
    assert_true(dist_mask_equal(an.missing, dist_mask_one(3)));
    assert_int_equal(an.n_holes, 1);

    /* Hole at the end with a subvolume down: no repair. */
    l->r[3].err = -ENOTCONN;
    assert_false(dist_layout_check(l, &an));
    assert_int_equal(an.n_down, 1);
    vl_free(l);

    /* Nothing anywhere (made by hand on the bricks). */
    l = tl_new(2);
    l->r[0].err = -ENODATA;
    l->r[1].err = -ENODATA;
    assert_true(dist_layout_check(l, &an));
    assert_int_equal(an.n_missing, 2);
    assert_int_equal(dist_layout_max_generation(l), 0);
    vl_free(l);
}


/* The set helpers over all DIST_MAX_SUBVOLS bits, word edges included. */
/* Hash values each subvolume keeps from old to new: the names that stay
 * where they are. */
static uint64_t
tl_kept(const struct dist_layout *old, const struct dist_layout *new)
{
    uint64_t kept = 0;

    for (unsigned i = 0; i < old->n; i++) {
        const struct dist_range *a = &old->r[i], *b = &new->r[i];
        uint32_t lo, hi;

        if (!(a->flags & DIST_FLAG_HAS_RANGE)
            || !(b->flags & DIST_FLAG_HAS_RANGE))
            continue;
        lo = a->start > b->start ? a->start : b->start;
        hi = a->stop < b->stop ? a->stop : b->stop;
        if (lo <= hi)
            kept += (uint64_t)hi - lo + 1;
    }
    return kept;
}

/* Subvolumes [from, n) as a set. */
static dist_mask_t
tl_mask_from(unsigned from, unsigned n)
{
    dist_mask_t m = dist_mask_none();

    for (unsigned i = from; i < n; i++)
        dist_mask_set(&m, i);
    return m;
}

/* The layout of a volume of m subvolumes grown to n: the default over the
 * first m, the new ones without a range (as a lookup reads it). */
static struct dist_layout *
tl_grown(unsigned m, unsigned n)
{
    struct dist_layout *l = tl_new(n);

    dist_layout_default(l, tl_mask_from(m, n), 1, DIST_FLAG_COMMITTED);
    for (unsigned i = m; i < n; i++)
        l->r[i].err = -ENODATA;
    return l;
}

/* Every subvolume not in skip has a range, the others none, no hole and
 * no overlap, all with generation gen. */
static void
tl_assert_full(const struct dist_layout *l, dist_mask_t skip, uint32_t gen)
{
    struct dist_anomalies an;

    assert_false(dist_layout_check(l, &an));
    for (unsigned i = 0; i < l->n; i++) {
        assert_int_equal(l->r[i].generation, gen);
        assert_int_equal(l->r[i].err, 0);
        assert_int_equal((l->r[i].flags & DIST_FLAG_HAS_RANGE) != 0,
                         !dist_mask_test(skip, i));
    }
}

/* Adding bricks: the refit keeps what the default keeps or more, exactly
 * half when the bricks double (the most equal chunks allow), 2/3 from 3
 * to 4, and about 3/4 from 100 to 101 where the default keeps half. */
static void
test_refit_after_add_brick(void **state)
{
    static const struct {
        unsigned m, n;
        double kept_min; /* fraction of 2^32 */
    } cases[] = {
        { 1, 2, 0.5 },      { 2, 4, 0.5 },     { 4, 8, 0.5 },
        { 4, 6, 0.5 },      { 3, 4, 0.6666 },  { 100, 101, 0.74 },
        { 128, 256, 0.5 },  { 255, 256, 0.74 },
    };

    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        unsigned m = cases[c].m, n = cases[c].n;
        struct dist_layout *old = tl_grown(m, n);
        struct dist_layout *fit = dist_layout_dup(NULL, old);
        struct dist_layout *def = tl_new(n);
        uint64_t kept, kept_def;

        assert_non_null(fit);
        dist_layout_refit(NULL, fit, dist_mask_none(), 2, 0);
        tl_assert_full(fit, dist_mask_none(), 2);
        dist_layout_default(def, dist_mask_none(), 2, 0);
        kept = tl_kept(old, fit);
        kept_def = tl_kept(old, def);
        assert_true(kept >= kept_def);
        assert_true((double)kept >= cases[c].kept_min * 4294967296.0);
        /* Not more than a subvolume's old range allows either. */
        assert_true(kept <= (1ULL << 32));
        vl_free(old);
        vl_free(fit);
        vl_free(def);
    }
    /* 1 -> 3: every chunk keeps a third; the first one stays (the last
     * chunk's remainder of one hash value does not decide). */
    {
        struct dist_layout *l = tl_grown(1, 3), *def = tl_new(3);

        dist_layout_refit(NULL, l, dist_mask_none(), 2, 0);
        dist_layout_default(def, dist_mask_none(), 2, 0);
        assert_memory_equal(l->r, def->r, 3 * sizeof(l->r[0]));
        vl_free(l);
        vl_free(def);
    }
    /* 2 -> 4 exactly: subvolumes 0 and 1 keep the first half of their
     * old ranges; 2 and 3 take the second halves. */
    {
        struct dist_layout *l = tl_grown(2, 4);

        dist_layout_refit(NULL, l, dist_mask_none(), 2, 0);
        assert_int_equal(l->r[0].start, 0);
        assert_int_equal(l->r[0].stop, 0x3fffffffu);
        assert_int_equal(l->r[1].start, 0x80000000u);
        assert_int_equal(l->r[1].stop, 0xbfffffffu);
        assert_int_equal(l->r[2].start, 0x40000000u);
        assert_int_equal(l->r[3].start, 0xc0000000u);
        assert_int_equal(l->r[3].stop, UINT32_MAX);
        vl_free(l);
    }
}

/* remove-brick (a subvolume decommissioned): it gets no range, the
 * others keep at least what the default keeps them. */
static void
test_refit_after_remove_brick(void **state)
{
    (void)state;
    for (unsigned n = 2; n <= 12; n++)
        for (unsigned gone = 0; gone < n; gone++) {
            struct dist_layout *old = tl_grown(n, n);
            struct dist_layout *fit = dist_layout_dup(NULL, old);
            struct dist_layout *def = tl_new(n);
            dist_mask_t skip = dist_mask_none();

            assert_non_null(fit);
            dist_mask_set(&skip, gone);
            dist_layout_refit(NULL, fit, skip, 2, 0);
            tl_assert_full(fit, skip, 2);
            dist_layout_default(def, skip, 2, 0);
            assert_true(tl_kept(old, fit) >= tl_kept(old, def));
            vl_free(old);
            vl_free(fit);
            vl_free(def);
        }
}

/* A refit of a layout that already has the chunks in any order changes
 * nothing (a second fix-layout moves no file); without any old range it
 * is the default. */
static void
test_refit_stable_and_default(void **state)
{
    struct dist_layout *l = tl_new(8), *def = tl_new(8), *again;

    (void)state;
    dist_layout_default(l, dist_mask_none(), 1, 0);
    for (unsigned i = 0; i < 4; i++) { /* reverse the ranges */
        struct dist_range t = l->r[i];

        l->r[i] = l->r[7 - i];
        l->r[7 - i] = t;
    }
    again = dist_layout_dup(NULL, l);
    assert_non_null(again);
    dist_layout_refit(NULL, again, dist_mask_none(), 2, 0);
    tl_assert_full(again, dist_mask_none(), 2);
    for (unsigned i = 0; i < 8; i++) {
        assert_int_equal(again->r[i].start, l->r[i].start);
        assert_int_equal(again->r[i].stop, l->r[i].stop);
    }
    assert_int_equal(tl_kept(l, again), 1ULL << 32);

    /* Nothing readable (no layout anywhere, or every copy unreadable). */
    for (unsigned i = 0; i < 8; i++)
        l->r[i].err = (i % 2) ? -ENODATA : -ENOTCONN;
    dist_layout_refit(NULL, l, dist_mask_none(), 3, DIST_FLAG_COMMITTED);
    dist_layout_default(def, dist_mask_none(), 3, DIST_FLAG_COMMITTED);
    assert_memory_equal(l->r, def->r, 8 * sizeof(l->r[0]));
    vl_free(l);
    vl_free(def);
    vl_free(again);
}

/* Random old layouts (chunks of another size, shuffled, some copies
 * unreadable, overlapping junk): always a full layout, the same one from
 * the same input. */
static void
test_refit_random(void **state)
{
    unsigned seed = 12345;

    (void)state;
    for (int t = 0; t < 300; t++) {
        unsigned n = 1 + (unsigned)(rand_r(&seed) % DIST_MAX_SUBVOLS);
        unsigned m_old = 1 + (unsigned)(rand_r(&seed) % n);
        struct dist_layout *old = tl_grown(m_old, n);
        struct dist_layout *a, *b;
        dist_mask_t skip = dist_mask_none();

        for (unsigned i = 0; i < n; i++) {
            unsigned j = (unsigned)(rand_r(&seed) % n);
            struct dist_range tmp = old->r[i];

            old->r[i] = old->r[j];
            old->r[j] = tmp;
            if (rand_r(&seed) % 16 == 0)
                old->r[i].err = -ENOTCONN;
            if (rand_r(&seed) % 32 == 0) {
                old->r[i].start = (uint32_t)rand_r(&seed);
                old->r[i].stop = old->r[i].start
                                 + (uint32_t)(rand_r(&seed) % 100000);
            }
            if (rand_r(&seed) % 8 == 0)
                dist_mask_set(&skip, i);
        }
        if (dist_mask_equal(skip, dist_mask_all(n)))
            skip = dist_mask_none();
        a = dist_layout_dup(NULL, old);
        b = dist_layout_dup(NULL, old);
        assert_non_null(a);
        assert_non_null(b);
        dist_layout_refit(NULL, a, skip, 7, 0);
        dist_layout_refit(NULL, b, skip, 7, 0);
        tl_assert_full(a, skip, 7);
        assert_memory_equal(a->r, b->r, n * sizeof(a->r[0]));
        vl_free(old);
        vl_free(a);
        vl_free(b);
    }
}


static void
test_mask_ops(void **state)
{
    const unsigned idx[] = {0, 1, 63, 64, 65, 127, 128, 191, 192, 200, 255};
    dist_mask_t m = dist_mask_none(), all, odd = dist_mask_none();
    dist_amask_t am;

    (void)state;
    assert_true(dist_mask_is_empty(m));
    assert_int_equal(dist_mask_first(m), -1);
    for (size_t k = 0; k < sizeof(idx) / sizeof(idx[0]); k++) {
        assert_false(dist_mask_test(m, idx[k]));
        dist_mask_set(&m, idx[k]);
        assert_true(dist_mask_test(m, idx[k]));
    }
    assert_false(dist_mask_test(m, 2));
    assert_false(dist_mask_test(m, 254));
    assert_false(dist_mask_test(m, DIST_MAX_SUBVOLS)); /* out of range */
    assert_int_equal(dist_mask_count(m), 11);
    assert_int_equal(dist_mask_first(m), 0);
    /* next walks the set in order across words. */
    {
        int i = dist_mask_first(m);

        for (size_t k = 0; k < sizeof(idx) / sizeof(idx[0]); k++) {
            assert_int_equal(i, (int)idx[k]);
            i = dist_mask_next(m, (unsigned)i + 1);
        }
        assert_int_equal(i, -1);
    }
    assert_int_equal(dist_mask_next(m, 66), 127);
    assert_int_equal(dist_mask_next(m, 256), -1);
    dist_mask_clear(&m, 0);
    dist_mask_clear(&m, 64);
    assert_int_equal(dist_mask_first(m), 1);
    assert_int_equal(dist_mask_next(m, 64), 65);
    assert_int_equal(dist_mask_count(m), 9);

    /* all(n) for n at and around the word edges. */
    assert_true(dist_mask_is_empty(dist_mask_all(0)));
    for (unsigned n = 1; n <= DIST_MAX_SUBVOLS; n++) {
        all = dist_mask_all(n);
        assert_int_equal(dist_mask_count(all), n);
        assert_true(dist_mask_test(all, n - 1));
        assert_false(dist_mask_test(all, n));
    }
    all = dist_mask_all(100);
    for (unsigned i = 1; i < 100; i += 2)
        dist_mask_set(&odd, i);
    assert_int_equal(dist_mask_count(dist_mask_and(all, odd)), 50);
    assert_int_equal(dist_mask_count(dist_mask_andnot(all, odd)), 50);
    assert_false(dist_mask_test(dist_mask_andnot(all, odd), 99));
    assert_true(dist_mask_test(dist_mask_andnot(all, odd), 98));
    assert_true(dist_mask_equal(dist_mask_or(dist_mask_andnot(all, odd),
                                             odd),
                                all));
    assert_false(dist_mask_equal(all, dist_mask_all(101)));
    assert_true(dist_mask_equal(dist_mask_one(99),
                                dist_mask_andnot(dist_mask_all(100),
                                                 dist_mask_all(99))));

    /* The atomic form. */
    dist_amask_store(&am, dist_mask_one(3));
    dist_amask_set(&am, 70);
    dist_amask_set(&am, 255);
    m = dist_amask_load(&am);
    assert_int_equal(dist_mask_count(m), 3);
    assert_true(dist_mask_test(m, 3) && dist_mask_test(m, 70)
                && dist_mask_test(m, 255));
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_decode),
        cmocka_unit_test(test_default_layout),
        cmocka_unit_test(test_search_matches_hash),
        cmocka_unit_test(test_spread_10000_over_4),
        cmocka_unit_test(test_spread_10000_over_100),
        cmocka_unit_test(test_spread_25600_over_256),
        cmocka_unit_test(test_default_layout_256),
        cmocka_unit_test(test_layout_new_and_dup),
        cmocka_unit_test(test_anomalies),
        cmocka_unit_test(test_mask_ops),
        cmocka_unit_test(test_refit_after_add_brick),
        cmocka_unit_test(test_refit_after_remove_brick),
        cmocka_unit_test(test_refit_stable_and_default),
        cmocka_unit_test(test_refit_random),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
