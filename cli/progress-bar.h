/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * progress-bar: the live one-line progress display the CLI draws on a
 * terminal for long tasks (heal-bar.c, rebal-bar.c), and the loop that
 * asks mortard again every second and redraws it.
 */
#ifndef MORTAR_CLI_PROGRESS_BAR_H
#define MORTAR_CLI_PROGRESS_BAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Marks between the brackets: short enough that the numbers after it
 * fit an 80-column terminal. */
#define CLI_BAR_WIDTH 20
/* Columns assumed when the terminal does not say (TIOCGWINSZ). */
#define CLI_BAR_DEFAULT_COLUMNS 80

/* "[#########...........]  45%": pct (0..100, clamped) filled of
 * CLI_BAR_WIDTH marks, or with pct < 0 (the total is not known yet)
 * an empty bar and "  ?%". */
void cli_bar_meter(int pct, char *buf, size_t len);
/* A rate: "12.5 files/s" for a count (unit given), "4.0 MiB/s" for
 * bytes (unit NULL); "?" with per_s < 0. */
void cli_bar_rate(double per_s, const char *unit, char *buf, size_t len);
/* A size in binary units: "512 B", "80.0 MiB". */
void cli_bar_size(double bytes, char *buf, size_t len);
/* Time left: "42 s", "3 min 05 s", "2 h 04 min"; "estimating" with
 * seconds < 0. */
void cli_bar_eta(long long seconds, char *buf, size_t len);
/* The terminal's width in columns (TIOCGWINSZ on fd), or
 * CLI_BAR_DEFAULT_COLUMNS when fd is no terminal or does not say. */
unsigned cli_bar_columns(int fd);

/* One look at the task, filled by a cli_bar_next_fn. */
struct cli_bar_frame {
    bool is_done;  /* the task ended or the command failed: stop */
    int status;    /* exit status when is_done */
    char *final;   /* owned (malloc'd), may be NULL: printed when done */
    char line[512]; /* the bar's line while not done */
};
/* Asks mortard once and fills frame (zeroed by the caller). */
typedef void (*cli_bar_next_fn)(void *arg, struct cli_bar_frame *frame);

/* Redraws next's line on out every second, in place ("\r", erase to the
 * end of the line, cut to the terminal's width so it never wraps),
 * until a frame is done (its final text printed, its status returned)
 * or Ctrl-C (the line ended with a newline, status 0). SIGINT's action
 * is restored before returning. */
int cli_bar_watch(FILE *out, cli_bar_next_fn next, void *arg);

#endif /* MORTAR_CLI_PROGRESS_BAR_H */
