/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ios: debug/io-stats's private types, shared by io-stats.c (class and
 * fops), ios-top.c (the per-file tables) and ios-dump.c (the profile
 * snapshot and its baselines).
 *
 * Lock order: priv->base_lock before priv->top_lock (the dump takes
 * both); inode->lock is never taken (the ctx is guarded by top_lock).
 */
#ifndef XL_IOS_H
#define XL_IOS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "vol/vol.h"

#include "io-stats.h"

enum ios_mem_type {
    IOS_MT_MISC = 0,
    IOS_MT_PRIV,
    IOS_MT_PATH,
    IOS_MT_SNAP,
};

struct ios_conf {
    bool is_latency;    /* latency-measurement: profile info is served */
    bool is_count_hits; /* count-fop-hits: per-file tables are kept */
};

/* Counters of a moment, all cumulative since the translator was made. */
struct ios_snap {
    vl_fop_stats_t fop[VL_FOP_COUNT]; /* vl_fop_stats_read of this xl */
    uint64_t bs_read[IOS_BS_N];  /* READs by size asked, log2 buckets */
    uint64_t bs_write[IOS_BS_N]; /* WRITEs by size written */
};

/* One file of a top table. */
struct ios_top_ent {
    vl_gfid_t gfid; /* the file */
    char *path;     /* owned; path on the brick, NULL while unknown */
    uint64_t count; /* requests of the table's metric on it */
};

/* The IOS_TOP_MAX files with the highest counts of one metric. */
struct ios_top {
    struct ios_top_ent ent[IOS_TOP_MAX]; /* n_ent used, unsorted */
    size_t n_ent;
};

/* Per inode (vl_inode_ctx), guarded by priv->top_lock. */
struct ios_ictx {
    char *path;                   /* owned; NULL while unknown */
    uint64_t gen;                 /* priv->top_gen the counts belong to */
    uint64_t count[IOS_TOP_N];    /* requests per metric since then */
};

struct ios_priv {
    _Atomic uint64_t bs_read[IOS_BS_N];  /* see struct ios_snap */
    _Atomic uint64_t bs_write[IOS_BS_N];
    atomic_bool is_count_hits;    /* copy of the conf for the fops */
    pthread_mutex_t base_lock;    /* guards the fields down to top_lock */
    bool is_profiling;            /* latency-measurement is on */
    struct ios_snap *base_start;  /* owned; counters at profile start */
    struct ios_snap *base_int;    /* owned; counters at the last info */
    struct timespec t_start;      /* CLOCK_MONOTONIC of base_start */
    struct timespec t_int;        /* CLOCK_MONOTONIC of base_int */
    uint64_t int_index;           /* number of the current interval */
    pthread_mutex_t top_lock;     /* guards top, top_gen and every ictx */
    struct ios_top top[IOS_TOP_N];
    uint64_t top_gen;             /* bumped by a clear: old counts void */
};

/* ios-top.c */
void ios_top_hit(vl_xlator_t *xl, vl_inode_t *inode, enum ios_top_metric m);
void ios_top_name(vl_xlator_t *xl, vl_inode_t *parent, const char *name,
                  vl_inode_t *inode);
void ios_top_clear(struct ios_priv *priv);
void ios_top_forget(vl_xlator_t *xl, vl_inode_t *inode);
void ios_top_write(struct ios_priv *priv, FILE *out);

/* ios-dump.c */
void ios_snap_take(vl_xlator_t *xl, struct ios_snap *out /* OUT */);
void ios_base_reset_locked(vl_xlator_t *xl, struct ios_snap *now);
void ios_escape(FILE *out, const char *s);

#endif /* XL_IOS_H */
