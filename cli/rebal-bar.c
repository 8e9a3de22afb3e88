/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rebal-bar: `volume rebalance VOL status` and `volume remove-brick VOL
 * BRICK... status` on a terminal, a live progress bar.
 *
 * mortard answers with GlusterFS's table (mortard/rebalance.c,
 * md_rebal_show): one row per node (Rebalanced-files, size, scanned,
 * failures, skipped, status, run time in h:m:s) and, per node still
 * running, "Estimated time left for ... : H:MM:SS" or "unknown (still
 * estimating)". The CLI asks again every second (progress-bar.c) and
 * draws one line from the rows summed:
 *   [#########...........]  45%  ETA 12 s  250 files (80.0 MiB) moved
 *   of 500 scanned, 12.5 files/s, 4.0 MiB/s
 * The percentage is the slowest node's run time over its run time plus
 * its time left. The rebalance process computes that time left from the
 * bytes it has scanned over the used bytes of the file systems
 * (doc/rebalance.md, "The state file"), so the percentage is the share
 * of those bytes scanned, the only total the task estimates (the number
 * of files is not known until the crawl ends). While a node has no
 * estimate yet the bar shows "?%" and "ETA estimating", with the counts
 * known so far. Rates are the averages since the task started. The watch
 * ends, printing mortard's full table, when no node is "in progress" or
 * the command fails.
 * Threads: pure functions of their arguments.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress-bar.h"


/* "80.0MB", "512Bytes" (mortard's md_human_size) back to bytes. */
static long long
cli_rebal_size(const char *text)
{
    static const char *const units[] = {"Bytes", "KB", "MB", "GB", "TB",
                                        "PB"};
    char *end = NULL;
    double v = strtod(text, &end);
    double scale = 1;

    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i]) == 0)
            return (long long)(v * scale);
        scale *= 1024;
    }
    return 0;
}


/* "H:MM:SS" to seconds; -1 if it is not one. */
static long long
cli_rebal_hms(const char *text)
{
    long long h, m, s;

    if (sscanf(text, "%lld:%lld:%lld", &h, &m, &s) != 3)
        return -1;
    return h * 3600 + m * 60 + s;
}


/* One row of the table (one line, no newline) into st's sums; false if
 * line is not a row. */
static bool
cli_rebal_row(const char *line, struct cli_rebal_status *st)
{
    char node[256], size[32], rest[128];
    long long files, scanned, failures, skipped, run_s;
    char *last;
    int used = 0;

    if (sscanf(line, "%255s %lld %31s %lld %lld %lld %n", node, &files,
               size, &scanned, &failures, &skipped, &used) != 6 ||
        used == 0)
        return false;
    /* The rest is the status (it may be two words, "in progress") and
     * the run time, the last word. */
    snprintf(rest, sizeof(rest), "%s", line + used);
    last = strrchr(rest, ' ');
    if (last == NULL || (run_s = cli_rebal_hms(last + 1)) < 0)
        return false;
    while (last > rest && last[-1] == ' ')
        last--;
    *last = '\0';
    st->n_nodes++;
    st->files += files;
    st->bytes += cli_rebal_size(size);
    st->scanned += scanned;
    st->failures += failures;
    st->skipped += skipped;
    if (run_s > st->run_s)
        st->run_s = run_s;
    if (strcmp(rest, "in progress") == 0) {
        st->n_running++;
        if (run_s > st->running_s)
            st->running_s = run_s;
    }
    return true;
}


/* An "Estimated time left" line into st: the largest time left, or
 * is_estimating when a node has none yet. */
static void
cli_rebal_eta_line(const char *line, struct cli_rebal_status *st)
{
    const char *p = strstr(line, " : ");
    long long s = p != NULL ? cli_rebal_hms(p + 3) : -1;

    if (s < 0)
        st->is_estimating = true;
    else if (s > st->eta_s)
        st->eta_s = s;
}


bool
cli_rebal_status_parse(const char *text, struct cli_rebal_status *st)
{
    static const char eta_key[] = "Estimated time left";
    const char *p;

    memset(st, 0, sizeof(*st));
    if (text == NULL || (p = strstr(text, "Rebalanced-files")) == NULL)
        return false;
    /* Past the header and its line of dashes. */
    for (int i = 0; i < 2 && p != NULL; i++) {
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    while (p != NULL && *p != '\0') {
        char line[512];
        size_t n = strcspn(p, "\n");

        /* One line at a time: sscanf's %s would read on past a
         * newline. */
        snprintf(line, sizeof(line), "%.*s", (int)n, p);
        if (strncmp(line, eta_key, sizeof(eta_key) - 1) == 0)
            cli_rebal_eta_line(line, st);
        else
            (void)cli_rebal_row(line, st);
        p = p[n] == '\n' ? p + n + 1 : NULL;
    }
    return st->n_nodes > 0;
}


int
cli_rebal_percent(const struct cli_rebal_status *st)
{
    long long pct;

    if (st->n_running == 0)
        return 100;
    if (st->is_estimating || st->running_s + st->eta_s <= 0)
        return -1;
    pct = st->running_s * 100 / (st->running_s + st->eta_s);
    /* Still running: 100% only once it says completed. */
    return pct > 99 ? 99 : (int)pct;
}


void
cli_rebal_bar(const struct cli_rebal_status *st, char *buf, size_t len)
{
    char meter[64], eta[32], size[32], frate[32], brate[32];
    double run = (double)st->run_s;
    int pct = cli_rebal_percent(st);
    int n;

    cli_bar_meter(pct, meter, sizeof(meter));
    cli_bar_eta(st->n_running == 0 ? 0 : (pct < 0 ? -1 : st->eta_s), eta,
                sizeof(eta));
    cli_bar_size((double)st->bytes, size, sizeof(size));
    cli_bar_rate(run > 0 ? (double)st->files / run : -1, "files", frate,
                 sizeof(frate));
    cli_bar_rate(run > 0 ? (double)st->bytes / run : -1, NULL, brate,
                 sizeof(brate));
    n = snprintf(buf, len, "%s  ETA %s  %lld files (%s) moved of %lld "
                 "scanned, %s, %s", meter, eta, st->files, size,
                 st->scanned, frate, brate);
    if (st->failures > 0 && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", %lld failed", st->failures);
}


bool
cli_is_rebal_status(char *const *cmd, int n_cmd)
{
    if (n_cmd < 4 || strcmp(cmd[0], "volume") != 0 ||
        strcmp(cmd[n_cmd - 1], "status") != 0)
        return false;
    if (strcmp(cmd[1], "rebalance") == 0)
        return n_cmd == 4;
    /* volume remove-brick VOL BRICK... status */
    return strcmp(cmd[1], "remove-brick") == 0 && n_cmd >= 5;
}
