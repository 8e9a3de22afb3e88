/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * progress-bar: the live progress line of `volume heal VOL status` and
 * `volume rebalance VOL status` on a terminal, shared by heal-bar.c and
 * rebal-bar.c so both look and behave the same.
 *
 * The formatting helpers are pure functions (unit-tested in
 * test/test-progress-bar.c). cli_bar_watch is the loop: it asks the
 * caller for a frame every second and redraws one line in place. The
 * line is cut to the terminal's width because a line that wraps cannot
 * be redrawn with "\r". Ctrl-C only sets a flag (the handler is
 * installed without SA_RESTART, so the sleep or the call in flight
 * returns early); the loop then ends the line so the shell prompt
 * starts on a clean one, and exits 0: stopping the watch is not a
 * failure of the task.
 * Threads: main thread only (the SIGINT flag is process-wide).
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "progress-bar.h"


void
cli_bar_meter(int pct, char *buf, size_t len)
{
    char bar[CLI_BAR_WIDTH + 1];
    unsigned fill = 0;

    if (pct > 100)
        pct = 100;
    if (pct >= 0)
        fill = (unsigned)pct * CLI_BAR_WIDTH / 100;
    for (unsigned i = 0; i < CLI_BAR_WIDTH; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[CLI_BAR_WIDTH] = '\0';
    if (pct < 0)
        snprintf(buf, len, "[%s]   ?%%", bar);
    else
        snprintf(buf, len, "[%s] %3d%%", bar, pct);
}


void
cli_bar_size(double bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB",
                                        "PiB"};
    size_t u = 0;

    if (bytes < 0)
        bytes = 0;
    while (bytes >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
        bytes /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", bytes);
    else
        snprintf(buf, len, "%.1f %s", bytes, units[u]);
}


void
cli_bar_rate(double per_s, const char *unit, char *buf, size_t len)
{
    char size[32];

    if (per_s < 0) {
        snprintf(buf, len, "?");
        return;
    }
    if (unit != NULL) {
        snprintf(buf, len, "%.1f %s/s", per_s, unit);
        return;
    }
    cli_bar_size(per_s, size, sizeof(size));
    snprintf(buf, len, "%s/s", size);
}


void
cli_bar_eta(long long seconds, char *buf, size_t len)
{
    if (seconds < 0)
        snprintf(buf, len, "estimating");
    else if (seconds < 60)
        snprintf(buf, len, "%lld s", seconds);
    else if (seconds < 3600)
        snprintf(buf, len, "%lld min %02lld s", seconds / 60, seconds % 60);
    else
        snprintf(buf, len, "%lld h %02lld min", seconds / 3600,
                 (seconds / 60) % 60);
}


unsigned
cli_bar_columns(int fd)
{
    struct winsize ws;

    if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0)
        return CLI_BAR_DEFAULT_COLUMNS;
    return ws.ws_col;
}


static volatile sig_atomic_t cli_bar_is_interrupted;


static void
cli_bar_on_sigint(int sig)
{
    (void)sig;
    cli_bar_is_interrupted = 1;
}


/* Prints text and the newline it may lack. */
static void
cli_bar_print_final(FILE *out, const char *text)
{
    size_t len;

    if (text == NULL || text[0] == '\0')
        return;
    len = strlen(text);
    fputs(text, out);
    if (text[len - 1] != '\n')
        fputc('\n', out);
}


int
cli_bar_watch(FILE *out, cli_bar_next_fn next, void *arg)
{
    struct sigaction sa = {.sa_handler = cli_bar_on_sigint};
    struct sigaction old;
    bool is_drawn = false;
    int status = 0;

    sigemptyset(&sa.sa_mask);
    cli_bar_is_interrupted = 0;
    (void)sigaction(SIGINT, &sa, &old);
    while (!cli_bar_is_interrupted) {
        struct cli_bar_frame frame = {0};
        unsigned cols;

        next(arg, &frame);
        if (frame.is_done && !cli_bar_is_interrupted) {
            if (is_drawn)
                fputs("\r\033[K", out);
            cli_bar_print_final(out, frame.final);
            free(frame.final);
            status = frame.status;
            is_drawn = false;
            break;
        }
        free(frame.final);
        if (frame.is_done)
            break;
        /* One column short of the edge: a line that fills the last
         * column makes some terminals wrap before the next "\r". */
        cols = cli_bar_columns(fileno(out));
        fprintf(out, "\r\033[K%.*s", (int)(cols > 1 ? cols - 1 : 1),
                frame.line);
        fflush(out);
        is_drawn = true;
        sleep(1);
    }
    if (is_drawn)
        fputc('\n', out);
    fflush(out);
    (void)sigaction(SIGINT, &old, NULL);
    return status;
}
