/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-state: the self-heal daemon's progress file and its rate.
 *
 * key=value lines (doc/self-heal.md), replaced crash-safely through
 * kv-file.c about once a second by the daemon and read by mortard for
 * `volume heal V status`. Per brick: brickN.path, brickN.pending,
 * brickN.bytes for N in 0..bricks-1. Unknown keys are ignored (newer
 * writers).
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
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    int rc;

    if (out == NULL)
        return -errno;
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
    fprintf(out, "bricks=%zu\n", st->n_bricks);
    for (size_t i = 0; i < st->n_bricks; i++) {
        char key[32];

        snprintf(key, sizeof(key), "brick%zu.path", i);
        fsd_kv_put_escaped(out, key, st->bricks[i].path);
        fprintf(out, "brick%zu.pending=%" PRIu64 "\n", i,
                st->bricks[i].pending);
        fprintf(out, "brick%zu.bytes=%" PRIu64 "\n", i, st->bricks[i].bytes);
    }
    if (fclose(out) != 0) {
        free(text);
        return -ENOMEM;
    }
    rc = fsd_kv_replace(path, text, len);
    free(text);
    return rc;
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
    static const struct {
        const char *key;
        size_t off;
    } u64s[] = {
        {"rounds", offsetof(struct fsd_heal_state, rounds)},
        {"healed", offsetof(struct fsd_heal_state, healed)},
        {"healed_bytes", offsetof(struct fsd_heal_state, healed_bytes)},
        {"clean", offsetof(struct fsd_heal_state, clean)},
        {"split_brain", offsetof(struct fsd_heal_state, split_brain)},
        {"waiting", offsetof(struct fsd_heal_state, waiting)},
        {"failed", offsetof(struct fsd_heal_state, failed)},
        {"pending", offsetof(struct fsd_heal_state, pending)},
        {"pending_bytes", offsetof(struct fsd_heal_state, pending_bytes)},
    };
    struct heal_reading *r = arg;
    struct fsd_heal_state *st = r->st;
    int64_t i64;
    char *end = NULL;

    if (strcmp(key, "format") == 0) {
        if (strcmp(v, HEAL_STATE_MAGIC " 1") != 0)
            return -EINVAL;
        r->has_format = true;
        return 0;
    }
    for (size_t i = 0; i < VL_ARRAY_SIZE(u64s); i++)
        if (strcmp(key, u64s[i].key) == 0)
            return fsd_kv_u64(v, (uint64_t *)(void *)((char *)st
                                                      + u64s[i].off));
    if (strcmp(key, "pid") == 0) {
        if (fsd_kv_i64(v, &i64) != 0)
            return -EINVAL;
        st->pid = (long)i64;
        return 0;
    }
    if (strcmp(key, "started") == 0)
        return fsd_kv_i64(v, &st->started);
    if (strcmp(key, "updated") == 0)
        return fsd_kv_i64(v, &st->updated);
    if (strcmp(key, "eta_seconds") == 0)
        return fsd_kv_i64(v, &st->eta_seconds);
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
