/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * profile: mortard's side of `volume profile` and `volume top`.
 *
 * profile-fmt.c  a brick's io-stats dump (xlators/debug/io-stats/README.md,
 *                "Dump format") parsed, the profile of a period computed
 *                from two snapshots, and GlusterFS's text and the tree
 *                (--xml/--json) of profile info and top
 * cmd-profile.c  the commands: grammar, start/stop through `volume set`,
 *                asking the bricks (sigqueue and the dump file here,
 *                BRICK_PROFILE for the bricks of other nodes)
 */
#ifndef MORTARD_PROFILE_H
#define MORTARD_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "mortard.h"
#include "vol/fop-stats.h"
#include "xlators/debug/io-stats/io-stats.h"

/* Fop names a dump may carry (libvol's fops, with room to spare). */
#define MD_PROF_FOPS_MAX 96

/* The three snapshots of a dump: now, profile start, last info. */
enum md_prof_snap { MD_PROF_NOW = 0, MD_PROF_START, MD_PROF_INT, MD_PROF_N };

/* One fop's counters in the three snapshots. */
struct md_prof_fop {
    char name[32];                    /* "WRITE" (capitals, as dumped) */
    vl_fop_stats_t s[MD_PROF_N];      /* per snapshot */
};

/* One row of a top table. */
struct md_prof_top_row {
    uint64_t count;  /* requests of the metric on this file */
    char *path;      /* owned; escaped as in the dump */
};

/* A brick's dump, parsed. */
struct md_prof_dump {
    char error[256];          /* the brick's "error" record, "" if none */
    bool is_latency;          /* latency-measurement on */
    bool is_count_hits;       /* count-fop-hits on */
    uint64_t interval;        /* the interval this dump closes */
    long long dur_cum;        /* seconds since profile start */
    long long dur_int;        /* seconds since the last info */
    struct md_prof_fop fops[MD_PROF_FOPS_MAX]; /* fops with calls */
    size_t n_fops;
    uint64_t bs[MD_PROF_N][IOS_BS_N][2]; /* block sizes: [snap][k]
                                          * {reads, writes} */
    struct md_prof_top_row *top[IOS_TOP_N]; /* owned arrays, dump order */
    size_t n_top[IOS_TOP_N];
};

/* Parses text (a whole dump file) whose request number must be seq:
 * 0; -EAGAIN when it is another request's (or incomplete: no "end");
 * -EPROTO (a bad record, err says which line) or -ENOMEM. out is
 * cleared first; free it with md_prof_dump_clear either way. */
int md_prof_parse(const char *text, unsigned seq, struct md_prof_dump *out,
                  char *err, size_t err_len);
void md_prof_dump_clear(struct md_prof_dump *d);

/* One fop's row of a period. */
struct md_prof_row {
    const char *name;  /* borrowed from the dump */
    uint64_t calls;
    double pct;        /* share of the period's summed latency, 0..100 */
    double avg_us, min_us, max_us;
};

/* A period (cumulative: now - start; interval: now - int). */
struct md_prof_period {
    struct md_prof_row rows[MD_PROF_FOPS_MAX]; /* fops with calls in the
                                                * period, sorted by pct
                                                * rising (GlusterFS's
                                                * order), then name */
    size_t n_rows;
    uint64_t bs[IOS_BS_N][2]; /* block sizes {reads, writes} */
    uint64_t bytes_read, bytes_written;
    long long duration;       /* seconds */
};

/* The period of d since snapshot base (MD_PROF_START or MD_PROF_INT).
 * Min and max of a period are exact when the lifetime extreme moved in
 * it, else the bounds of its lowest/highest latency bucket, clamped to
 * the lifetime extremes. */
void md_prof_period(const struct md_prof_dump *d, enum md_prof_snap base,
                    struct md_prof_period *out);

/* Appends GlusterFS's "Cumulative Stats:" (interval < 0) or "Interval N
 * Stats:" section of p to text, and its tree to node (NULL: none). */
void md_prof_period_show(const struct md_prof_period *p, long long interval,
                         struct md_sbuf *text, struct md_node *node);

/* "Brick: HOST:PATH" and its underline. */
void md_prof_brick_head(const char *brick, struct md_sbuf *text);

/* A top metric's name ("open", ...) to its index, or -1. */
int md_prof_top_metric(const char *name);

/* Appends the top table of metric (at most list_cnt rows, sorted by count
 * falling) to text and its rows to node. */
void md_prof_top_show(const struct md_prof_dump *d, int metric,
                      unsigned list_cnt, struct md_sbuf *text,
                      struct md_node *node);

/* ---- cmd-profile.c ---- */
/* volume profile VOL start|stop|info [peek|incremental [peek]|
 * cumulative|clear] */
void md_cmd_profile(struct md_state *st, int argc, char **argv,
                    struct md_result *r);
/* volume top VOL {open|read|write|opendir|readdir|clear} [brick B]
 * [list-cnt N] */
void md_cmd_top(struct md_state *st, int argc, char **argv,
                struct md_result *r);

/* BRICK_PROFILE, answered on a loop thread without md_state.lock: asks
 * the callee's bricks named by id (reads only the run dir's pid and dump
 * files). */
struct vrpc_conn;
void md_prof_serve(struct md_state *st, struct vrpc_conn *c, uint32_t xid,
                   const char *body, size_t len);

#endif /* MORTARD_PROFILE_H */
