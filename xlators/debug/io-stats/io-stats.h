/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * io-stats: what the brick process (mortarfsd's signal loop) calls to
 * answer mortard's `volume profile` and `volume top` (README.md, "The
 * channel"), and the constants the dump format shares with mortard's
 * parser (mortard/profile-fmt.c).
 */
#ifndef XL_IO_STATS_H
#define XL_IO_STATS_H

#include <signal.h>
#include <stdio.h>

#include "vol/vol.h"

/* Block sizes: bucket k counts requests of 2^k bytes up to 2^(k+1) - 1
 * (0 bytes in bucket 0; the last bucket takes everything larger). */
#define IOS_BS_N 32

/* Files kept per top table (GlusterFS keeps 100 too). */
#define IOS_TOP_MAX 100

/* The metrics of `volume top`, in the dump's order. */
enum ios_top_metric {
    IOS_TOP_OPEN = 0,
    IOS_TOP_READ,
    IOS_TOP_WRITE,
    IOS_TOP_OPENDIR,
    IOS_TOP_READDIR,
    IOS_TOP_N,
};

extern const char *const ios_top_names[IOS_TOP_N];

/* What a dump does besides writing the counters. */
enum ios_dump_mode {
    IOS_DUMP_PEEK = 0,  /* nothing */
    IOS_DUMP_INFO = 1,  /* a new interval starts after this one */
    IOS_DUMP_CLEAR = 2, /* cumulative and interval restart at zero */
    IOS_DUMP_TOP_CLEAR = 3, /* the top tables are emptied */
    IOS_DUMP_MODE_N,
};

/* How mortard asks a brick for a dump (README.md, "The channel"): this
 * signal, sent with sigqueue, whose value is the request number shifted
 * by IOS_PROFILE_SEQ_SHIFT, or'd with an enum ios_dump_mode. Shared by
 * the brick (mortarfsd/profile.c) and the asker (mortard/cmd-profile.c). */
#define IOS_PROFILE_SIGNAL (SIGRTMIN + 1)
#define IOS_PROFILE_SEQ_SHIFT 4
#define IOS_PROFILE_MODE_MASK 0xfu

/* The dump format's version, its first line ("mortar-profile 1"). */
#define IOS_DUMP_VERSION 1

/* Writes the profile dump of io-stats translator xl (its counters and
 * both baselines, then the top tables) to out and applies mode. The
 * format is line-based text, one record a line (README.md, "Dump
 * format"); the caller adds the header and the "end" line. */
void ios_dump_profile(vl_xlator_t *xl, FILE *out, enum ios_dump_mode mode);

/* The io-stats translator of graph (the brick's, right under
 * protocol/server), or NULL. */
vl_xlator_t *ios_find(vl_graph_t *graph);

#endif /* XL_IO_STATS_H */
