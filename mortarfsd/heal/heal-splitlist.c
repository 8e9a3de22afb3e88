/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-splitlist: the objects the self-heal daemon found in split-brain
 * in its last round, per brick, for `volume heal V info split-brain`
 * and `heal V split-brain source-brick B` (doc/self-heal.md), and those
 * that waited for a copy (a brick down), so that `heal V status` counts
 * each object once per replica set however many daemons saw it.
 *
 * A sibling of the progress file (VOL.state -> VOL.split-brain),
 * key=value lines replaced whole and crash-safely through ../kv-file.c
 * at the end of every round:
 *
 *   format=mortar-heal-split-brain 1
 *   brick=/d/b1            (escaped; starts a brick's section)
 *   count=2                (found in split-brain in the last round)
 *   gfid=<uuid>            (one per object, at most FSD_HEAL_SPLIT_MAX)
 *   waiting=1              (waited for a copy in the last round)
 *   waiting_gfid=<uuid>    (one per object, at most FSD_HEAL_SPLIT_MAX)
 *
 * The counts stay exact past the bound (a reader then has a count and
 * not every GFID: mortard counts that replica set by its largest
 * count). Only GFIDs are kept: mortard
 * shows a directory by its path from the brick's handle chain, as
 * `heal info` does, and checks that the object is still in the heal
 * index (one resolved since is not shown).
 * Threads: pure functions; the daemon's round thread writes the file.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal.h"
#include "mortarfsd/kv-file.h"

#define HEAL_SPLIT_MAGIC "mortar-heal-split-brain 1"


void
fsd_heal_split_path(const char *state_path, char *buf, size_t len)
{
    size_t n = strlen(state_path);
    const char *ext = ".state";

    if (n > strlen(ext) && strcmp(state_path + n - strlen(ext), ext) == 0)
        n -= strlen(ext);
    snprintf(buf, len, "%.*s.split-brain", (int)n, state_path);
}


/* Counts gfid in *count and keeps it in *v if fewer than
 * FSD_HEAL_SPLIT_MAX are kept. 0 or -ENOMEM. */
static int
heal_gfids_add(vl_gfid_t **v, size_t *n, size_t *cap, uint64_t *count,
               const vl_gfid_t *gfid)
{
    (*count)++;
    if (*n >= FSD_HEAL_SPLIT_MAX)
        return 0; /* counted, not named */
    if (*n == *cap) {
        size_t c = *cap != 0 ? *cap * 2 : 16;
        vl_gfid_t *nv = realloc(*v, c * sizeof(*nv));

        if (nv == NULL)
            return -ENOMEM;
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = *gfid;
    return 0;
}


int
fsd_heal_split_add(struct fsd_heal_split *s, const vl_gfid_t *gfid)
{
    return heal_gfids_add(&s->gfids, &s->n, &s->cap, &s->count, gfid);
}


int
fsd_heal_split_add_waiting(struct fsd_heal_split *s, const vl_gfid_t *gfid)
{
    return heal_gfids_add(&s->waiting_gfids, &s->n_waiting,
                          &s->cap_waiting, &s->waiting, gfid);
}


void
fsd_heal_split_clear(struct fsd_heal_split *s)
{
    free(s->gfids);
    free(s->waiting_gfids);
    memset(s, 0, sizeof(*s));
}


int
fsd_heal_split_write(const char *path, const char *const *brick_paths,
                     const struct fsd_heal_split *splits, size_t n)
{
    struct fsd_kv_text t;
    FILE *out;
    int rc = fsd_kv_text_open(&t);

    if (rc != 0)
        return rc;
    out = t.out;
    fprintf(out, "format=%s\n", HEAL_SPLIT_MAGIC);
    for (size_t i = 0; i < n; i++) {
        fsd_kv_put_escaped(out, "brick", brick_paths[i]);
        fprintf(out, "count=%" PRIu64 "\n", splits[i].count);
        for (size_t j = 0; j < splits[i].n; j++) {
            char g[VL_GFID_STR_LEN];

            fprintf(out, "gfid=%s\n", vl_gfid_to_str(&splits[i].gfids[j], g));
        }
        fprintf(out, "waiting=%" PRIu64 "\n", splits[i].waiting);
        for (size_t j = 0; j < splits[i].n_waiting; j++) {
            char g[VL_GFID_STR_LEN];

            fprintf(out, "waiting_gfid=%s\n",
                    vl_gfid_to_str(&splits[i].waiting_gfids[j], g));
        }
    }
    return fsd_kv_text_commit(&t, path);
}


struct heal_split_reading {
    const char *brick;          /* the brick asked for */
    struct fsd_heal_split *out; /* its section */
    bool has_format;
    bool is_in;                 /* inside brick's section */
    bool is_found;
};


static int
heal_split_line(void *arg, const char *key, const char *v)
{
    struct heal_split_reading *r = arg;
    char path[FSD_HEAL_PATH_MAX];
    vl_gfid_t g;

    if (strcmp(key, "format") == 0) {
        if (strcmp(v, HEAL_SPLIT_MAGIC) != 0)
            return -EINVAL;
        r->has_format = true;
        return 0;
    }
    if (!r->has_format)
        return -EINVAL;
    if (strcmp(key, "brick") == 0) {
        if (fsd_kv_get_escaped(v, path, sizeof(path)) != 0)
            return -EINVAL;
        r->is_in = strcmp(path, r->brick) == 0;
        r->is_found |= r->is_in;
        return 0;
    }
    if (!r->is_in)
        return 0;
    if (strcmp(key, "count") == 0)
        return fsd_kv_u64(v, &r->out->count);
    if (strcmp(key, "gfid") == 0) {
        uint64_t count = r->out->count;
        int rc;

        if (vl_gfid_parse(v, &g) != 0)
            return -EINVAL;
        rc = fsd_heal_split_add(r->out, &g);
        r->out->count = count; /* the file's count is the exact one */
        return rc;
    }
    if (strcmp(key, "waiting") == 0) {
        r->out->has_waiting = true;
        return fsd_kv_u64(v, &r->out->waiting);
    }
    if (strcmp(key, "waiting_gfid") == 0) {
        uint64_t count = r->out->waiting;
        int rc;

        if (vl_gfid_parse(v, &g) != 0)
            return -EINVAL;
        rc = fsd_heal_split_add_waiting(r->out, &g);
        r->out->waiting = count;
        return rc;
    }
    return 0; /* newer keys */
}


int
fsd_heal_split_read(const char *path, const char *brick_path,
                    struct fsd_heal_split *out)
{
    struct heal_split_reading r = {.brick = brick_path, .out = out};
    int rc;

    memset(out, 0, sizeof(*out));
    rc = fsd_kv_read(path, heal_split_line, &r);
    if (rc == 0 && !r.has_format)
        rc = -EINVAL;
    if (rc == 0 && !r.is_found)
        rc = -ENOENT;
    if (rc != 0)
        fsd_heal_split_clear(out);
    return rc;
}
