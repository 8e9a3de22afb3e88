/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-state: the self-heal daemon's progress file and its rate.
 *
 * key=value lines (doc/self-heal.md), replaced crash-safely through
 * kv-file.c about once a second by the daemon and read by mortard for
 * `volume heal V status`. Per brick: brickN.path, brickN.pending,
 * brickN.bytes for N in 0..bricks-1; the full crawl's full_crawl,
 * crawl_started, crawl_done_at, crawl_visited, crawl_healed,
 * crawl_failed and crawl_brick. Unknown keys are ignored (newer writers).
 * The rate is taken over the last minute of samples, so a heal that
 * stalls (a brick down again) shows its rate falling to zero and its
 * ETA unknown, rather than the average since the start.
 * Threads: pure functions; the daemon's main thread owns its state.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal.h"
#include "mortarfsd/kv-file.h"

#define HEAL_STATE_MAGIC "mortar-heal-state"


int
fsd_heal_state_write(const char *path, const struct fsd_heal_state *st)
{
    struct fsd_kv_text t;
    FILE *out;
    int rc = fsd_kv_text_open(&t);

    if (rc != 0)
        return rc;
    out = t.out;
    fprintf(out, "format=%s 1\n", HEAL_STATE_MAGIC);
    fprintf(out, "pid=%ld\n", st->pid);
    fprintf(out, "started=%" PRId64 "\n", st->started);
    fprintf(out, "updated=%" PRId64 "\n", st->updated);
    fprintf(out, "rounds=%" PRIu64 "\n", st->rounds);
    fprintf(out, "healed=%" PRIu64 "\n", st->healed);
    fprintf(out, "healed_bytes=%" PRIu64 "\n", st->healed_bytes);
    fprintf(out, "clean=%" PRIu64 "\n", st->clean);
    fprintf(out, "split_brain=%" PRIu64 "\n", st->split_brain);
    fprintf(out, "waiting=%" PRIu64 "\n", st->waiting);
    fprintf(out, "failed=%" PRIu64 "\n", st->failed);
    fprintf(out, "pending=%" PRIu64 "\n", st->pending);
    fprintf(out, "pending_bytes=%" PRIu64 "\n", st->pending_bytes);
    fprintf(out, "rate=%.3f\n", st->rate);
    fprintf(out, "rate_bytes=%.0f\n", st->rate_bytes);
    fprintf(out, "eta_seconds=%" PRId64 "\n", st->eta_seconds);
    fprintf(out, "full_crawl=%" PRIu64 "\n", st->full_crawl);
    fprintf(out, "crawl_started=%" PRId64 "\n", st->crawl_started);
    fprintf(out, "crawl_done_at=%" PRId64 "\n", st->crawl_done_at);
    fprintf(out, "crawl_visited=%" PRIu64 "\n", st->crawl_visited);
    fprintf(out, "crawl_healed=%" PRIu64 "\n", st->crawl_healed);
    fprintf(out, "crawl_failed=%" PRIu64 "\n", st->crawl_failed);
    fprintf(out, "crawl_brick=%" PRIu64 "\n", st->crawl_brick);
    fprintf(out, "bricks=%zu\n", st->n_bricks);
    for (size_t i = 0; i < st->n_bricks; i++) {
        char key[32];

        snprintf(key, sizeof(key), "brick%zu.path", i);
        fsd_kv_put_escaped(out, key, st->bricks[i].path);
        fprintf(out, "brick%zu.pending=%" PRIu64 "\n", i,
                st->bricks[i].pending);
        fprintf(out, "brick%zu.bytes=%" PRIu64 "\n", i, st->bricks[i].bytes);
    }
    return fsd_kv_text_commit(&t, path);
}


struct heal_reading {
    struct fsd_heal_state *st;
    bool has_format;
};


/* brickN.KEY: the brick's field, or -EINVAL for N out of range. */
static int
heal_state_brick_line(struct fsd_heal_state *st, const char *key,
                      const char *v)
{
    char *end = NULL;
    unsigned long i;

    errno = 0;
    i = strtoul(key + 5, &end, 10);
    if (end == key + 5 || *end != '.' || errno != 0
        || i >= FSD_HEAL_BRICKS_MAX)
        return -EINVAL;
    if (i >= st->n_bricks)
        st->n_bricks = i + 1;
    if (strcmp(end, ".path") == 0)
        return fsd_kv_get_escaped(v, st->bricks[i].path,
                                  sizeof(st->bricks[i].path));
    if (strcmp(end, ".pending") == 0)
        return fsd_kv_u64(v, &st->bricks[i].pending);
    if (strcmp(end, ".bytes") == 0)
        return fsd_kv_u64(v, &st->bricks[i].bytes);
    return 0;
}


static int
heal_state_line(void *arg, const char *key, const char *v)
{
#define HS_U64(k) {#k, offsetof(struct fsd_heal_state, k), 0}
#define HS_I64(k) {#k, offsetof(struct fsd_heal_state, k), 1}
    static const struct fsd_kv_field fields[] = {
        HS_U64(rounds), HS_U64(healed), HS_U64(healed_bytes), HS_U64(clean),
        HS_U64(split_brain), HS_U64(waiting), HS_U64(failed),
        HS_U64(pending), HS_U64(pending_bytes), HS_I64(started),
        HS_I64(updated), HS_I64(eta_seconds), HS_U64(full_crawl),
        HS_I64(crawl_started), HS_I64(crawl_done_at), HS_U64(crawl_visited),
        HS_U64(crawl_healed), HS_U64(crawl_failed), HS_U64(crawl_brick),
    };
#undef HS_U64
#undef HS_I64
    struct heal_reading *r = arg;
    struct fsd_heal_state *st = r->st;
    int64_t i64;
    char *end = NULL;
    int rc;

    if (strcmp(key, "format") == 0) {
        if (strcmp(v, HEAL_STATE_MAGIC " 1") != 0)
            return -EINVAL;
        r->has_format = true;
        return 0;
    }
    rc = fsd_kv_field_set(fields, VL_ARRAY_SIZE(fields), st, key, v);
    if (rc != -ENOENT)
        return rc;
    if (strcmp(key, "pid") == 0) {
        if (fsd_kv_i64(v, &i64) != 0)
            return -EINVAL;
        st->pid = (long)i64;
        return 0;
    }
    if (strcmp(key, "rate") == 0 || strcmp(key, "rate_bytes") == 0) {
        double d = strtod(v, &end);

        if (end == v || *end != '\0' || d < 0)
            return -EINVAL;
        *(key[4] == '\0' ? &st->rate : &st->rate_bytes) = d;
        return 0;
    }
    if (strncmp(key, "brick", 5) == 0 && key[5] >= '0' && key[5] <= '9')
        return heal_state_brick_line(st, key, v);
    return 0;
}


int
fsd_heal_state_read(const char *path, struct fsd_heal_state *st)
{
    struct heal_reading r = {.st = st};
    int rc;

    memset(st, 0, sizeof(*st));
    st->eta_seconds = -1;
    rc = fsd_kv_read(path, heal_state_line, &r);
    if (rc == 0 && !r.has_format)
        rc = -EINVAL;
    return rc;
}


void
fsd_heal_rate_update(struct fsd_heal_rate *r, int64_t now,
                     struct fsd_heal_state *st)
{
    const size_t slots = FSD_HEAL_RATE_WINDOW + 1;
    size_t oldest;
    int64_t dt;

    r->t[r->head] = now;
    r->n[r->head] = st->healed;
    r->b[r->head] = st->healed_bytes;
    r->head = (r->head + 1) % slots;
    if (r->count < slots)
        r->count++;
    /* The oldest sample still inside the window. */
    oldest = (r->head + slots - r->count) % slots;
    while (r->count > 1 && now - r->t[oldest] > FSD_HEAL_RATE_WINDOW) {
        oldest = (oldest + 1) % slots;
        r->count--;
    }
    dt = now - r->t[oldest];
    if (dt <= 0) {
        st->rate = 0;
        st->rate_bytes = 0;
    } else {
        st->rate = (double)(st->healed - r->n[oldest]) / (double)dt;
        st->rate_bytes = (double)(st->healed_bytes - r->b[oldest])
                         / (double)dt;
    }
    if (st->pending == 0)
        st->eta_seconds = 0;
    else if (st->pending_bytes > 0 && st->rate_bytes > 0)
        st->eta_seconds = (int64_t)((double)st->pending_bytes
                                    / st->rate_bytes + 0.5);
    else if (st->rate > 0)
        st->eta_seconds = (int64_t)((double)st->pending / st->rate + 0.5);
    else
        st->eta_seconds = -1;
}
