/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-checkpoint: where a full crawl is, kept across a daemon restart
 * (RUN/heal/VOL.full.pos beside the request file), so that a daemon
 * killed or restarted in the middle of `volume heal VOL full` goes on
 * from there instead of walking every brick again.
 *
 * It names the request it serves (the request file's contents), the
 * brick walked (its number and path: a daemon restarted with other
 * bricks starts over), the crawl's counters so far, and the walk's
 * position in that brick (heal-crawl.c: fsd_heal_crawl_position), or
 * none when the brick's walk had not begun. The daemon writes it at most
 * once a second and only after a crawl step's heals all finished, so
 * that everything before the position is healed; a checkpoint lost or
 * stale costs a walk again, never a skipped object. key=value lines,
 * replaced crash-safely (kv-file.c); values escaped.
 * Threads: pure functions; the round thread alone writes.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heal.h"
#include "mortarfsd/kv-file.h"

#define HEAL_CHECKPOINT_MAGIC "mortar-heal-checkpoint 1"


void
fsd_heal_checkpoint_path(const char *full_path, char *buf, size_t len)
{
    snprintf(buf, len, "%s.pos", full_path);
}


int
fsd_heal_checkpoint_write(const char *path,
                          const struct fsd_heal_checkpoint *cp)
{
    struct fsd_kv_text t;
    FILE *out;
    int rc = fsd_kv_text_open(&t);

    if (rc != 0)
        return rc;
    out = t.out;
    fprintf(out, "format=%s\n", HEAL_CHECKPOINT_MAGIC);
    fsd_kv_put_escaped(out, "token", cp->token);
    fprintf(out, "brick=%" PRIu64 "\n", cp->brick);
    fsd_kv_put_escaped(out, "brick_path", cp->brick_path);
    fprintf(out, "visited=%" PRIu64 "\n", cp->visited);
    fprintf(out, "healed=%" PRIu64 "\n", cp->healed);
    fprintf(out, "failed=%" PRIu64 "\n", cp->failed);
    fprintf(out, "waiting=%" PRIu64 "\n", cp->waiting);
    if (cp->position != NULL)
        fsd_kv_put_escaped(out, "position", cp->position);
    return fsd_kv_text_commit(&t, path);
}


struct heal_checkpoint_reading {
    struct fsd_heal_checkpoint *cp;
    bool has_format;
};


static int
heal_checkpoint_line(void *arg, const char *key, const char *v)
{
    static const struct fsd_kv_field fields[] = {
        {"brick", offsetof(struct fsd_heal_checkpoint, brick), 0},
        {"visited", offsetof(struct fsd_heal_checkpoint, visited), 0},
        {"healed", offsetof(struct fsd_heal_checkpoint, healed), 0},
        {"failed", offsetof(struct fsd_heal_checkpoint, failed), 0},
        {"waiting", offsetof(struct fsd_heal_checkpoint, waiting), 0},
    };
    struct heal_checkpoint_reading *r = arg;
    struct fsd_heal_checkpoint *cp = r->cp;
    int rc;

    if (strcmp(key, "format") == 0) {
        r->has_format = strcmp(v, HEAL_CHECKPOINT_MAGIC) == 0;
        return r->has_format ? 0 : -EINVAL;
    }
    if (strcmp(key, "token") == 0)
        return fsd_kv_get_escaped(v, cp->token, sizeof(cp->token));
    if (strcmp(key, "brick_path") == 0)
        return fsd_kv_get_escaped(v, cp->brick_path,
                                  sizeof(cp->brick_path));
    if (strcmp(key, "position") == 0) {
        /* Unescaped it is no longer than escaped. */
        size_t n = strlen(v) + 1;

        free(cp->position);
        cp->position = malloc(n);
        if (cp->position == NULL)
            return -ENOMEM;
        return fsd_kv_get_escaped(v, cp->position, n);
    }
    rc = fsd_kv_field_set(fields, sizeof(fields) / sizeof(fields[0]), cp,
                          key, v);
    return rc == -ENOENT ? 0 : rc; /* a newer writer's key */
}


int
fsd_heal_checkpoint_read(const char *path,
                         struct fsd_heal_checkpoint *cp /* OUT */)
{
    struct heal_checkpoint_reading r = {.cp = cp};
    int rc;

    memset(cp, 0, sizeof(*cp));
    rc = fsd_kv_read(path, heal_checkpoint_line, &r);
    if (rc == 0 && !r.has_format)
        rc = -EINVAL;
    if (rc != 0)
        fsd_heal_checkpoint_clear(cp);
    return rc;
}


void
fsd_heal_checkpoint_clear(struct fsd_heal_checkpoint *cp)
{
    free(cp->position);
    memset(cp, 0, sizeof(*cp));
}


int
fsd_heal_checkpoint_remove(const char *path)
{
    char tmp[FSD_HEAL_PATH_MAX + 32];

    /* kv-file's torn FILE.tmp too, so nothing of it is left. */
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    (void)unlink(tmp);
    if (unlink(path) != 0 && errno != ENOENT)
        return -errno;
    return 0;
}
