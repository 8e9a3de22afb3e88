/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heal-bar: `volume heal VOL status` on a terminal, a live progress bar.
 *
 * mortard answers the command with plain lines (mortard/cmd-heal.c);
 * on a terminal (text output) the CLI asks again every second and
 * redraws one line from them:
 *   [#########...........]  45%  120 entries left (34.5 MiB), 3.2/s, ETA 40 s
 * The bar's 100% is the most entries seen left since the command
 * started (the heal's total is not known in advance: an entry heal
 * adds the names it creates). It ends, printing mortard's full answer,
 * when nothing is left or the command fails; Ctrl-C ends it too.
 * The bar and the redraw loop are progress-bar.c's, shared with the
 * rebalance bar (rebal-bar.c).
 * Threads: pure functions of their arguments.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress-bar.h"


/* The text after "key" on its line (up to the newline), into buf. */
static bool
cli_heal_field(const char *text, const char *key, char *buf, size_t len)
{
    const char *p = strstr(text, key);
    size_t n;

    if (p == NULL)
        return false;
    p += strlen(key);
    n = strcspn(p, "\n");
    snprintf(buf, len, "%.*s", (int)n, p);
    return true;
}


bool
cli_heal_status_parse(const char *text, struct cli_heal_status *st)
{
    char left[64];

    memset(st, 0, sizeof(*st));
    if (text == NULL ||
        !cli_heal_field(text, "Total entries left: ", left, sizeof(left)))
        return false;
    st->left = strtoull(left, NULL, 10);
    (void)cli_heal_field(text, "Data left: ", st->data, sizeof(st->data));
    (void)cli_heal_field(text, "Rate (last minute): ", st->rate,
                         sizeof(st->rate));
    (void)cli_heal_field(text, "ETA: ", st->eta, sizeof(st->eta));
    return true;
}


void
cli_heal_bar(const struct cli_heal_status *st, uint64_t most,
             char *buf, size_t len)
{
    char meter[64];
    int pct = 100;

    if (most > 0 && st->left <= most)
        pct = (int)((most - st->left) * 100 / most);
    cli_bar_meter(pct, meter, sizeof(meter));
    snprintf(buf, len, "%s  %" PRIu64 " entries left (%s), %s, ETA %s",
             meter, st->left, st->data[0] != '\0' ? st->data : "?",
             st->rate[0] != '\0' ? st->rate : "?",
             st->eta[0] != '\0' ? st->eta : "unknown");
}


bool
cli_is_heal_status(char *const *cmd, int n_cmd)
{
    return n_cmd == 4 && strcmp(cmd[0], "volume") == 0 &&
           strcmp(cmd[1], "heal") == 0 && strcmp(cmd[3], "status") == 0;
}
