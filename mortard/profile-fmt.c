/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * profile-fmt: what `volume profile info` and `volume top` print, from a
 * brick's io-stats dump.
 *
 * A dump (xlators/debug/io-stats/README.md, "Dump format") carries
 * libvol's counters, which never reset, three times: now, at profile
 * start and at the last `profile info`. A period is the difference of
 * now and one baseline: calls, latency sums, buckets and bytes subtract.
 * Minimum and maximum do not: when the lifetime extreme moved since the
 * baseline it happened in the period and is exact; otherwise the
 * period's latency histogram bounds it (its lowest or highest non-empty
 * log2 bucket), clamped to the lifetime extremes.
 *
 * Text is GlusterFS's (cli-rpc-ops.c's profile and top output): the
 * block-size table three buckets a row, the latency table sorted by share
 * of latency rising, then duration and data; top is "Count\t\tfilename".
 * The tree is GlusterFS's --xml shape (volProfile/brick/cumulativeStats,
 * volTop/brick/file), with each repeated element inside a list element
 * (blockStats, fopStats, files) so that --json has no repeated keys.
 * Threads: any; no shared state.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"


void
md_prof_dump_clear(struct md_prof_dump *d)
{
    for (size_t m = 0; m < IOS_TOP_N; m++) {
        for (size_t i = 0; i < d->n_top[m]; i++)
            free(d->top[m][i].path);
        free(d->top[m]);
    }
    memset(d, 0, sizeof(*d));
}


static int
md_prof_snap_of(const char *s)
{
    if (strcmp(s, "now") == 0)
        return MD_PROF_NOW;
    if (strcmp(s, "start") == 0)
        return MD_PROF_START;
    if (strcmp(s, "int") == 0)
        return MD_PROF_INT;
    return -1;
}


/* Reads the next unsigned number of *p (space separated). */
static bool
md_prof_u64(const char **p, uint64_t *out)
{
    char *end;

    while (**p == ' ')
        (*p)++;
    if (**p < '0' || **p > '9')
        return false;
    errno = 0;
    *out = strtoull(*p, &end, 10);
    if (errno != 0)
        return false;
    *p = end;
    return true;
}


/* Reads the next word of *p into buf. */
static bool
md_prof_word(const char **p, char *buf, size_t len)
{
    size_t n = 0;

    while (**p == ' ')
        (*p)++;
    while (**p != ' ' && **p != '\0') {
        if (n + 1 >= len)
            return false;
        buf[n++] = *(*p)++;
    }
    buf[n] = '\0';
    return n > 0;
}


static struct md_prof_fop *
md_prof_fop_get(struct md_prof_dump *d, const char *name)
{
    for (size_t i = 0; i < d->n_fops; i++)
        if (strcmp(d->fops[i].name, name) == 0)
            return &d->fops[i];
    if (d->n_fops == MD_PROF_FOPS_MAX)
        return NULL;
    snprintf(d->fops[d->n_fops].name, sizeof(d->fops[0].name), "%s", name);
    return &d->fops[d->n_fops++];
}


/* "fop S NAME calls errors sum min max bytes b0..b23" after "fop ". */
static bool
md_prof_parse_fop(struct md_prof_dump *d, const char *p)
{
    char snap[8], name[32];
    struct md_prof_fop *f;
    vl_fop_stats_t s;
    int which;

    if (!md_prof_word(&p, snap, sizeof(snap))
        || (which = md_prof_snap_of(snap)) < 0
        || !md_prof_word(&p, name, sizeof(name))
        || !md_prof_u64(&p, &s.calls) || !md_prof_u64(&p, &s.errors)
        || !md_prof_u64(&p, &s.lat_sum_ns) || !md_prof_u64(&p, &s.lat_min_ns)
        || !md_prof_u64(&p, &s.lat_max_ns) || !md_prof_u64(&p, &s.bytes))
        return false;
    for (size_t k = 0; k < VL_LAT_BUCKETS; k++)
        if (!md_prof_u64(&p, &s.lat_bucket[k]))
            return false;
    if (*p != '\0' || (f = md_prof_fop_get(d, name)) == NULL)
        return false;
    f->s[which] = s;
    return true;
}


/* "bs S K reads writes" after "bs ". */
static bool
md_prof_parse_bs(struct md_prof_dump *d, const char *p)
{
    char snap[8];
    uint64_t k, rd, wr;
    int which;

    if (!md_prof_word(&p, snap, sizeof(snap))
        || (which = md_prof_snap_of(snap)) < 0 || !md_prof_u64(&p, &k)
        || k >= IOS_BS_N || !md_prof_u64(&p, &rd) || !md_prof_u64(&p, &wr)
        || *p != '\0')
        return false;
    d->bs[which][k][0] = rd;
    d->bs[which][k][1] = wr;
    return true;
}


/* "top METRIC COUNT PATH" after "top "; -EPROTO or -ENOMEM. */
static int
md_prof_parse_top(struct md_prof_dump *d, const char *p)
{
    char metric[16];
    uint64_t count;
    struct md_prof_top_row *rows;
    int m;

    if (!md_prof_word(&p, metric, sizeof(metric))
        || (m = md_prof_top_metric(metric)) < 0 || !md_prof_u64(&p, &count)
        || *p != ' ' || p[1] == '\0' || d->n_top[m] >= IOS_TOP_MAX)
        return -EPROTO;
    rows = realloc(d->top[m], (d->n_top[m] + 1) * sizeof(*rows));
    if (rows == NULL)
        return -ENOMEM;
    d->top[m] = rows;
    rows[d->n_top[m]].count = count;
    rows[d->n_top[m]].path = strdup(p + 1);
    if (rows[d->n_top[m]].path == NULL)
        return -ENOMEM;
    d->n_top[m]++;
    return 0;
}


/* One record line (NUL-terminated, no newline). */
static int
md_prof_parse_line(struct md_prof_dump *d, const char *line)
{
    long long a, b;
    char tail;

    if (strncmp(line, "fop ", 4) == 0)
        return md_prof_parse_fop(d, line + 4) ? 0 : -EPROTO;
    if (strncmp(line, "bs ", 3) == 0)
        return md_prof_parse_bs(d, line + 3) ? 0 : -EPROTO;
    if (strncmp(line, "top ", 4) == 0)
        return md_prof_parse_top(d, line + 4);
    if (strncmp(line, "error ", 6) == 0) {
        snprintf(d->error, sizeof(d->error), "%.200s", line + 6);
        return 0;
    }
    if (strcmp(line, "latency-measurement on") == 0
        || strcmp(line, "latency-measurement off") == 0) {
        d->is_latency = line[20] == 'o' && line[21] == 'n';
        return 0;
    }
    if (strcmp(line, "count-fop-hits on") == 0
        || strcmp(line, "count-fop-hits off") == 0) {
        d->is_count_hits = line[15] == 'o' && line[16] == 'n';
        return 0;
    }
    if (sscanf(line, "interval %lld%c", &a, &tail) == 1 && a >= 0) {
        d->interval = (uint64_t)a;
        return 0;
    }
    if (sscanf(line, "duration %lld %lld%c", &a, &b, &tail) == 2) {
        d->dur_cum = a;
        d->dur_int = b;
        return 0;
    }
    return -EPROTO;
}


int
md_prof_parse(const char *text, unsigned seq, struct md_prof_dump *out,
              char *err, size_t err_len)
{
    const char *p = text;
    char line[8192];
    unsigned got_seq;
    int n = 0, rc;
    bool is_end = false;

    memset(out, 0, sizeof(*out));
    while (*p != '\0' && !is_end) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        char tail;

        if (nl == NULL)
            return -EAGAIN; /* not a whole file: never renamed in so */
        if (len >= sizeof(line)) {
            snprintf(err, err_len, "line %d: too long", n + 1);
            return -EPROTO;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        p = nl + 1;
        n++;
        if (n == 1) {
            if (strcmp(line, "mortar-profile 1") != 0) {
                snprintf(err, err_len, "not a version 1 profile dump");
                return -EPROTO;
            }
            continue;
        }
        if (n == 2) {
            /* Another request's answer: the caller waits for its own. */
            if (sscanf(line, "seq %u%c", &got_seq, &tail) != 1)
                return -EAGAIN;
            if (got_seq != seq)
                return -EAGAIN;
            continue;
        }
        if (strcmp(line, "end") == 0) {
            is_end = true;
            continue;
        }
        rc = md_prof_parse_line(out, line);
        if (rc == -ENOMEM) {
            snprintf(err, err_len, "out of memory");
            return rc;
        }
        if (rc != 0) {
            snprintf(err, err_len, "line %d: bad record '%.60s'", n, line);
            return rc;
        }
    }
    return is_end && n >= 2 ? 0 : -EAGAIN;
}


/* Bucket k holds latencies from its lower bound up to vl_lat_bucket_le_ns. */
static uint64_t
md_prof_bucket_lo_ns(unsigned k)
{
    return k == 0 ? 0 : vl_lat_bucket_le_ns(k - 1);
}


static void
md_prof_row_of(const struct md_prof_fop *f, enum md_prof_snap base,
               struct md_prof_row *row, uint64_t *lat_sum)
{
    const vl_fop_stats_t *now = &f->s[MD_PROF_NOW], *b = &f->s[base];
    uint64_t min = UINT64_MAX, max = 0;
    int lo = -1, hi = -1;

    row->name = f->name;
    row->calls = now->calls - b->calls;
    *lat_sum = now->lat_sum_ns - b->lat_sum_ns;
    for (int k = 0; k < VL_LAT_BUCKETS; k++)
        if (now->lat_bucket[k] > b->lat_bucket[k]) {
            if (lo < 0)
                lo = k;
            hi = k;
        }
    /* (1) A lifetime extreme that moved since the baseline belongs to the
     * period; (2) else the period's buckets bound it, within the lifetime
     * extremes. */
    if (b->calls == 0 || now->lat_min_ns < b->lat_min_ns)  /* (1) */
        min = now->lat_min_ns;
    else if (lo >= 0)                                      /* (2) */
        min = md_prof_bucket_lo_ns((unsigned)lo) > now->lat_min_ns
                  ? md_prof_bucket_lo_ns((unsigned)lo)
                  : now->lat_min_ns;
    if (now->lat_max_ns > b->lat_max_ns)                   /* (1) */
        max = now->lat_max_ns;
    else if (hi >= 0)                                      /* (2) */
        max = vl_lat_bucket_le_ns((unsigned)hi) < now->lat_max_ns
                  ? vl_lat_bucket_le_ns((unsigned)hi)
                  : now->lat_max_ns;
    if (min == UINT64_MAX || min > max)
        min = max;
    row->avg_us = row->calls > 0 ? (double)*lat_sum / row->calls / 1000.0
                                 : 0.0;
    row->min_us = (double)min / 1000.0;
    row->max_us = (double)max / 1000.0;
}


static int
md_prof_row_cmp(const void *a, const void *b)
{
    const struct md_prof_row *x = a, *y = b;

    if (x->pct != y->pct)
        return x->pct < y->pct ? -1 : 1;
    return strcmp(x->name, y->name);
}


void
md_prof_period(const struct md_prof_dump *d, enum md_prof_snap base,
               struct md_prof_period *out)
{
    uint64_t sums[MD_PROF_FOPS_MAX], total = 0;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < d->n_fops; i++) {
        struct md_prof_row *row = &out->rows[out->n_rows];
        const struct md_prof_fop *f = &d->fops[i];

        md_prof_row_of(f, base, row, &sums[out->n_rows]);
        if (row->calls == 0)
            continue;
        total += sums[out->n_rows];
        if (strcmp(f->name, "READ") == 0)
            out->bytes_read = f->s[MD_PROF_NOW].bytes - f->s[base].bytes;
        else if (strcmp(f->name, "WRITE") == 0)
            out->bytes_written = f->s[MD_PROF_NOW].bytes - f->s[base].bytes;
        out->n_rows++;
    }
    for (size_t i = 0; i < out->n_rows; i++)
        out->rows[i].pct = total > 0 ? 100.0 * (double)sums[i] / total : 0.0;
    qsort(out->rows, out->n_rows, sizeof(out->rows[0]), md_prof_row_cmp);
    for (size_t k = 0; k < IOS_BS_N; k++)
        for (size_t w = 0; w < 2; w++)
            out->bs[k][w] = d->bs[MD_PROF_NOW][k][w] - d->bs[base][k][w];
    out->duration = base == MD_PROF_START ? d->dur_cum : d->dur_int;
}


void
md_prof_brick_head(const char *brick, struct md_sbuf *text)
{
    size_t n = strlen("Brick: ") + strlen(brick);

    md_sbuf_printf(text, "Brick: %s\n", brick);
    for (size_t i = 0; i < n; i++)
        md_sbuf_printf(text, "-");
    md_sbuf_printf(text, "\n");
}


/* GlusterFS's block-size table: three buckets a row, each row the sizes,
 * then reads and writes. */
static void
md_prof_bs_show(const struct md_prof_period *p, struct md_sbuf *text,
                struct md_node *node)
{
    char sz[256], rd[256], wr[256];
    size_t at = 0;
    unsigned per_line = 0;
    struct md_node *bl = md_node_add(node, "blockStats", NULL);

    if (bl != NULL)
        bl->is_list = true;
    for (size_t k = 0; k <= IOS_BS_N; k++) {
        bool is_flush = k == IOS_BS_N ? per_line > 0 : per_line == 3;

        if (is_flush) {
            md_sbuf_printf(text, "%14s%s\n%14s%s\n%14s%s\n \n",
                           "Block Size:", sz, "No. of Reads:", rd,
                           "No. of Writes:", wr);
            per_line = 0;
            at = 0;
        }
        if (k == IOS_BS_N)
            break;
        if (p->bs[k][0] == 0 && p->bs[k][1] == 0)
            continue;
        snprintf(sz + at, sizeof(sz) - at, "%19" PRIu64 "b+ ",
                 (uint64_t)1 << k);
        snprintf(rd + at, sizeof(rd) - at, "%21" PRIu64 " ", p->bs[k][0]);
        snprintf(wr + at, sizeof(wr) - at, "%21" PRIu64 " ", p->bs[k][1]);
        at += 22;
        per_line++;
        struct md_node *b = md_node_add(bl, "block", NULL);

        md_node_addf(b, "size", "%" PRIu64, (uint64_t)1 << k);
        md_node_addf(b, "reads", "%" PRIu64, p->bs[k][0]);
        md_node_addf(b, "writes", "%" PRIu64, p->bs[k][1]);
    }
}


void
md_prof_period_show(const struct md_prof_period *p, long long interval,
                    struct md_sbuf *text, struct md_node *node)
{
    struct md_node *fl;

    if (interval < 0)
        md_sbuf_printf(text, "Cumulative Stats:\n");
    else
        md_sbuf_printf(text, "Interval %lld Stats:\n", interval);
    if (interval >= 0)
        md_node_addf(node, "interval", "%lld", interval);
    md_prof_bs_show(p, text, node);
    md_sbuf_printf(text, "%10s %13s %13s %13s %14s %11s\n", "%-latency",
                   "Avg-latency", "Min-Latency", "Max-Latency",
                   "No. of calls", "Fop");
    md_sbuf_printf(text, "%10s %13s %13s %13s %14s %11s\n", "---------",
                   "-----------", "-----------", "-----------",
                   "------------", "----");
    fl = md_node_add(node, "fopStats", NULL);
    if (fl != NULL)
        fl->is_list = true;
    for (size_t i = 0; i < p->n_rows; i++) {
        const struct md_prof_row *row = &p->rows[i];
        struct md_node *f = md_node_add(fl, "fop", NULL);

        md_sbuf_printf(text, "%10.2f %10.2f us %10.2f us %10.2f us %14"
                       PRIu64 " %11s\n", row->pct, row->avg_us, row->min_us,
                       row->max_us, row->calls, row->name);
        md_node_add(f, "name", row->name);
        md_node_addf(f, "hits", "%" PRIu64, row->calls);
        md_node_addf(f, "avgLatency", "%.2f", row->avg_us);
        md_node_addf(f, "minLatency", "%.2f", row->min_us);
        md_node_addf(f, "maxLatency", "%.2f", row->max_us);
    }
    md_sbuf_printf(text, " \n%12s: %lld seconds\n%12s: %" PRIu64 " bytes\n"
                   "%12s: %" PRIu64 " bytes\n \n", "Duration", p->duration,
                   "Data Read", p->bytes_read, "Data Written",
                   p->bytes_written);
    md_node_addf(node, "duration", "%lld", p->duration);
    md_node_addf(node, "totalRead", "%" PRIu64, p->bytes_read);
    md_node_addf(node, "totalWrite", "%" PRIu64, p->bytes_written);
}


int
md_prof_top_metric(const char *name)
{
    for (int m = 0; m < IOS_TOP_N; m++)
        if (strcmp(ios_top_names[m], name) == 0)
            return m;
    return -1;
}


static int
md_prof_top_cmp(const void *a, const void *b)
{
    const struct md_prof_top_row *x = a, *y = b;

    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->path, y->path);
}


void
md_prof_top_show(const struct md_prof_dump *d, int metric,
                 unsigned list_cnt, struct md_sbuf *text,
                 struct md_node *node)
{
    size_t n = d->n_top[metric];
    struct md_prof_top_row *rows = NULL;
    struct md_node *fl;

    /* The brick sorts its table, but the order shown must not depend on
     * it: a copy is sorted here (count falling, then path). */
    if (n > 0 && (rows = malloc(n * sizeof(*rows))) == NULL) {
        text->is_oom = true;
        return;
    }
    if (n > 0)
        memcpy(rows, d->top[metric], n * sizeof(*rows));
    if (n > 0)
        qsort(rows, n, sizeof(*rows), md_prof_top_cmp);
    if (n > list_cnt)
        n = list_cnt;
    md_sbuf_printf(text, "Count\t\tfilename\n=======================\n");
    md_node_addf(node, "members", "%zu", n);
    fl = md_node_add(node, "files", NULL);
    if (fl != NULL)
        fl->is_list = true;
    for (size_t i = 0; i < n; i++) {
        struct md_node *f = md_node_add(fl, "file", NULL);

        md_sbuf_printf(text, "%" PRIu64 "\t\t%s\n", rows[i].count,
                       rows[i].path);
        md_node_addf(f, "count", "%" PRIu64, rows[i].count);
        md_node_add(f, "filename", rows[i].path);
    }
    free(rows);
}
