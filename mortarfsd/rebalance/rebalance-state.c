/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebalance-state: the rebalance's progress file and the crawl order it
 * resumes by.
 *
 * The file is key=value lines (doc/rebalance.md), replaced whole and
 * crash-safely by kv-file.c, so a reader (mortard's status, the next
 * run) sees the old or the new contents, never a mix. Unknown keys are
 * ignored when reading (newer writers), missing ones keep their zero
 * value. The cursor and error values are escaped (%25, %0A, %0D) so
 * that any path fits on one line.
 * Threads: pure functions; the caller serialises access to one state.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mortarfsd/fsd.h"
#include "mortarfsd/kv-file.h"

static const char *const fsd_rebal_status_names[] = {
    [FSD_REBAL_RUNNING] = "running",
    [FSD_REBAL_COMPLETED] = "completed",
    [FSD_REBAL_FAILED] = "failed",
    [FSD_REBAL_STOPPED] = "stopped",
};


const char *
fsd_rebal_status_name(enum fsd_rebal_status status)
{
    if ((size_t)status >= VL_ARRAY_SIZE(fsd_rebal_status_names))
        return "unknown";
    return fsd_rebal_status_names[status];
}


int
fsd_rebal_throttle_parse(const char *s, unsigned *out)
{
    char *end = NULL;
    unsigned long v;

    if (strcmp(s, "lazy") == 0)
        v = 1;
    else if (strcmp(s, "normal") == 0)
        v = 2;
    else if (strcmp(s, "aggressive") == 0)
        v = 4;
    else {
        errno = 0;
        v = strtoul(s, &end, 10);
        if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v < 1
            || v > FSD_REBAL_THROTTLE_MAX)
            return -EINVAL;
    }
    *out = (unsigned)v;
    return 0;
}


int
fsd_rebal_state_write(const char *path, const struct fsd_rebal_state *st)
{
    struct fsd_kv_text t;
    FILE *out;
    int rc = fsd_kv_text_open(&t);

    if (rc != 0)
        return rc;
    out = t.out;
    fprintf(out, "status=%s\n", fsd_rebal_status_name(st->status));
    fprintf(out, "pid=%ld\n", st->pid);
    fprintf(out, "started=%" PRId64 "\n", st->started);
    fprintf(out, "updated=%" PRId64 "\n", st->updated);
    fprintf(out, "scanned_files=%" PRIu64 "\n", st->scanned_files);
    fprintf(out, "scanned_dirs=%" PRIu64 "\n", st->scanned_dirs);
    fprintf(out, "scanned_bytes=%" PRIu64 "\n", st->scanned_bytes);
    fprintf(out, "moved_files=%" PRIu64 "\n", st->moved_files);
    fprintf(out, "moved_bytes=%" PRIu64 "\n", st->moved_bytes);
    fprintf(out, "failed_files=%" PRIu64 "\n", st->failed_files);
    fprintf(out, "skipped_files=%" PRIu64 "\n", st->skipped_files);
    fprintf(out, "total_bytes=%" PRIu64 "\n", st->total_bytes);
    fprintf(out, "eta_seconds=%" PRId64 "\n", st->eta_seconds);
    fprintf(out, "mode=%s\n", st->is_fix_layout ? "fix-layout" : "rebalance");
    if (st->subvols[0] != '\0')
        fprintf(out, "subvols=%s\n", st->subvols);
    fsd_kv_put_escaped(out, "cursor", st->cursor);
    fsd_kv_put_escaped(out, "error", st->error);
    return fsd_kv_text_commit(&t, path);
}


/* One key=value line; unknown keys are accepted and ignored. */
static int
fsd_rebal_state_line(struct fsd_rebal_state *st, const char *key,
                     const char *v, bool *has_status)
{
#define RB_U64(k) {#k, offsetof(struct fsd_rebal_state, k), 0}
#define RB_I64(k) {#k, offsetof(struct fsd_rebal_state, k), 1}
    static const struct fsd_kv_field fields[] = {
        RB_U64(scanned_files), RB_U64(scanned_dirs), RB_U64(scanned_bytes),
        RB_U64(moved_files), RB_U64(moved_bytes), RB_U64(failed_files),
        RB_U64(skipped_files), RB_U64(total_bytes), RB_I64(started),
        RB_I64(updated), RB_I64(eta_seconds),
    };
#undef RB_U64
#undef RB_I64
    int64_t i64;
    int rc;

    if (strcmp(key, "status") == 0) {
        for (size_t i = 0; i < VL_ARRAY_SIZE(fsd_rebal_status_names); i++) {
            if (strcmp(v, fsd_rebal_status_names[i]) == 0) {
                st->status = (enum fsd_rebal_status)i;
                *has_status = true;
                return 0;
            }
        }
        return -EINVAL;
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
    if (strcmp(key, "mode") == 0) {
        if (strcmp(v, "fix-layout") != 0 && strcmp(v, "rebalance") != 0)
            return -EINVAL;
        st->is_fix_layout = strcmp(v, "fix-layout") == 0;
        return 0;
    }
    if (strcmp(key, "subvols") == 0) {
        if (strlen(v) >= sizeof(st->subvols)
            || strspn(v, "0123456789abcdef:") != strlen(v))
            return -EINVAL;
        snprintf(st->subvols, sizeof(st->subvols), "%s", v);
        return 0;
    }
    if (strcmp(key, "cursor") == 0)
        return fsd_kv_get_escaped(v, st->cursor, sizeof(st->cursor));
    if (strcmp(key, "error") == 0)
        return fsd_kv_get_escaped(v, st->error, sizeof(st->error));
    return 0;
}


struct fsd_rebal_reading {
    struct fsd_rebal_state *st;
    bool has_status;
};


static int
fsd_rebal_state_kv(void *arg, const char *key, const char *value)
{
    struct fsd_rebal_reading *r = arg;

    return fsd_rebal_state_line(r->st, key, value, &r->has_status);
}


int
fsd_rebal_state_read(const char *path, struct fsd_rebal_state *st)
{
    struct fsd_rebal_reading r = {.st = st};
    int rc;

    memset(st, 0, sizeof(*st));
    st->eta_seconds = -1;
    rc = fsd_kv_read(path, fsd_rebal_state_kv, &r);
    if (rc == 0 && !r.has_status)
        rc = -EINVAL;
    return rc;
}


void
fsd_rebal_subvols_id(const char *const *names, size_t n, char *out)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 */

    for (size_t i = 0; i < n; i++) {
        for (const char *c = names[i]; ; c++) {
            /* Each name with its terminating NUL: "ab","c" != "a","bc". */
            h ^= (unsigned char)*c;
            h *= 0x100000001b3ull;
            if (*c == '\0')
                break;
        }
    }
    snprintf(out, FSD_REBAL_SUBVOLS_MAX, "%zu:%016" PRIx64, n, h);
}


bool
fsd_rebal_may_resume(const struct fsd_rebal_state *st, bool is_fix_layout,
                     const char *subvols)
{
    if (st->status != FSD_REBAL_RUNNING && st->status != FSD_REBAL_STOPPED)
        return false;
    if (subvols != NULL && st->subvols[0] != '\0'
        && strcmp(subvols, st->subvols) != 0)
        return false;
    return is_fix_layout || !st->is_fix_layout;
}


/* Length of the first component of p (p has no leading '/'). */
static size_t
fsd_rebal_comp_len(const char *p)
{
    return strcspn(p, "/");
}


int
fsd_rebal_path_cmp(const char *a, const char *b)
{
    /* Walk both paths component by component: a parent comes before its
     * children (preorder), siblings in strcmp order of their names. */
    for (;;) {
        size_t la;
        size_t lb;
        int c;

        while (*a == '/')
            a++;
        while (*b == '/')
            b++;
        if (*a == '\0' || *b == '\0')
            return (*a != '\0') - (*b != '\0');
        la = fsd_rebal_comp_len(a);
        lb = fsd_rebal_comp_len(b);
        c = memcmp(a, b, la < lb ? la : lb);
        if (c != 0)
            return c;
        if (la != lb)
            return la < lb ? -1 : 1;
        a += la;
        b += lb;
    }
}


bool
fsd_rebal_cursor_skip(const char *dir, const char *cursor)
{
    if (cursor == NULL || cursor[0] == '\0')
        return false;
    return fsd_rebal_path_cmp(dir, cursor) <= 0;
}


void
fsd_rebal_eta_update(struct fsd_rebal_state *st, int64_t now)
{
    int64_t elapsed = now - st->started;

    if (st->status != FSD_REBAL_RUNNING) {
        st->eta_seconds = st->status == FSD_REBAL_COMPLETED ? 0 : -1;
        return;
    }
    if (st->scanned_bytes == 0 || st->total_bytes == 0 || elapsed <= 0) {
        st->eta_seconds = -1;
        return;
    }
    if (st->scanned_bytes >= st->total_bytes) {
        st->eta_seconds = 0;
        return;
    }
    /* The rate of scanning so far over the bytes still to look at. */
    st->eta_seconds = (int64_t)((double)elapsed
                                * (double)(st->total_bytes - st->scanned_bytes)
                                / (double)st->scanned_bytes);
}
