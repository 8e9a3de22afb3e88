/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ios-dump: the profile snapshot io-stats writes for mortard, and its
 * baselines.
 *
 * libvol's fop counters never reset; a profile is their difference from
 * a baseline. io-stats keeps two: base_start (taken when the profile
 * starts, i.e. latency-measurement turns on, or when it is cleared) for
 * GlusterFS's "Cumulative Stats", and base_int (taken at each `profile
 * info`) for "Interval N Stats". The dump writes the counters of now and
 * both baselines whole; mortard subtracts (mortard/profile-fmt.c), so the
 * arithmetic is in one place and tested there. Block sizes are io-stats's
 * own counters, treated the same way.
 *
 * Dump records (one a line, README.md "Dump format"):
 *   latency-measurement on|off
 *   count-fop-hits on|off
 *   interval N            number of the interval this dump closes
 *   duration C I          seconds since base_start and since base_int
 *   fop S NAME calls errors lat_sum_ns lat_min_ns lat_max_ns bytes b0..b23
 *                         S is now, start or int; for every fop with calls
 *   bs S K reads writes   block-size bucket K (2^K bytes and up)
 *   top METRIC COUNT PATH path escaped: \\, and \xHH for control bytes
 * Threads: the caller's (mortarfsd's main thread); priv->base_lock.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "ios.h"


void
ios_snap_take(vl_xlator_t *xl, struct ios_snap *out)
{
    struct ios_priv *priv = xl->priv;

    for (int op = 0; op < VL_FOP_COUNT; op++)
        vl_fop_stats_read(xl, (vl_fop_t)op, &out->fop[op]);
    for (size_t k = 0; k < IOS_BS_N; k++) {
        out->bs_read[k] = atomic_load_explicit(&priv->bs_read[k],
                                               memory_order_relaxed);
        out->bs_write[k] = atomic_load_explicit(&priv->bs_write[k],
                                                memory_order_relaxed);
    }
}


/* Both baselines become now: a new profile (or a cleared one). */
void
ios_base_reset_locked(vl_xlator_t *xl, struct ios_snap *now)
{
    struct ios_priv *priv = xl->priv;

    *priv->base_start = *now;
    *priv->base_int = *now;
    clock_gettime(CLOCK_MONOTONIC, &priv->t_start);
    priv->t_int = priv->t_start;
    priv->int_index = 0;
}


void
ios_escape(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
        if (*p == '\\')
            fputs("\\\\", out);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\x%02x", *p);
        else
            fputc(*p, out);
}


static void
ios_write_fop(FILE *out, const char *which, int op, const vl_fop_stats_t *s)
{
    char name[32];
    const char *lower = vl_fop_name((vl_fop_t)op);
    size_t i;

    /* GlusterFS's profile names fops in capitals (WRITE, LOOKUP). */
    for (i = 0; lower[i] != '\0' && i + 1 < sizeof(name); i++)
        name[i] = (char)toupper((unsigned char)lower[i]);
    name[i] = '\0';
    fprintf(out, "fop %s %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
            " %" PRIu64 " %" PRIu64, which, name,
            s->calls, s->errors, s->lat_sum_ns, s->lat_min_ns,
            s->lat_max_ns, s->bytes);
    for (size_t k = 0; k < VL_LAT_BUCKETS; k++)
        fprintf(out, " %" PRIu64, s->lat_bucket[k]);
    fputc('\n', out);
}


static void
ios_write_snaps(FILE *out, const struct ios_snap *now,
                const struct ios_snap *start, const struct ios_snap *intv)
{
    const struct ios_snap *snaps[] = {now, start, intv};
    static const char *const names[] = {"now", "start", "int"};

    for (int op = 0; op < VL_FOP_COUNT; op++) {
        if (now->fop[op].calls == 0)
            continue;
        for (size_t s = 0; s < 3; s++)
            ios_write_fop(out, names[s], op, &snaps[s]->fop[op]);
    }
    for (size_t k = 0; k < IOS_BS_N; k++) {
        if (now->bs_read[k] == 0 && now->bs_write[k] == 0)
            continue;
        for (size_t s = 0; s < 3; s++)
            fprintf(out, "bs %s %zu %" PRIu64 " %" PRIu64 "\n", names[s], k,
                    snaps[s]->bs_read[k], snaps[s]->bs_write[k]);
    }
}


static long long
ios_secs_since(const struct timespec *t, const struct timespec *now)
{
    return (long long)(now->tv_sec - t->tv_sec)
           - (now->tv_nsec < t->tv_nsec ? 1 : 0);
}


void
ios_dump_profile(vl_xlator_t *xl, FILE *out, enum ios_dump_mode mode)
{
    struct ios_priv *priv = xl->priv;
    struct ios_snap *now = vl_malloc(xl, sizeof(*now), IOS_MT_SNAP);
    struct timespec t;

    pthread_mutex_lock(&priv->base_lock);
    fprintf(out, "latency-measurement %s\ncount-fop-hits %s\n",
            priv->is_profiling ? "on" : "off",
            atomic_load(&priv->is_count_hits) ? "on" : "off");
    if (now == NULL) {
        /* The reader sees no counters and says the brick failed. */
        fprintf(out, "error out of memory\n");
        pthread_mutex_unlock(&priv->base_lock);
        return;
    }
    if (priv->is_profiling) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        ios_snap_take(xl, now);
        fprintf(out, "interval %" PRIu64 "\nduration %lld %lld\n",
                priv->int_index, ios_secs_since(&priv->t_start, &t),
                ios_secs_since(&priv->t_int, &t));
        ios_write_snaps(out, now, priv->base_start, priv->base_int);
        if (mode == IOS_DUMP_INFO) {
            *priv->base_int = *now;
            priv->t_int = t;
            priv->int_index++;
        } else if (mode == IOS_DUMP_CLEAR) {
            ios_base_reset_locked(xl, now);
        }
    }
    pthread_mutex_unlock(&priv->base_lock);
    vl_free(now);
    if (mode == IOS_DUMP_TOP_CLEAR)
        ios_top_clear(priv);
    else
        ios_top_write(priv, out);
}
