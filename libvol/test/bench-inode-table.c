/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-inode-table: ops/s of the inode table's GFID path (a find or get
 * followed by the matching unref), from 1 and 2 threads.
 *
 *   bench-inode-table [n_gfids [n_ops_per_thread]]
 *
 * Two workloads, each over n_gfids linked inodes picked at random:
 *   held: the bench keeps a ref on every inode (a FUSE client whose
 *         kernel holds the tree), so vl_inode_find and vl_inode_unref
 *         never move an inode between the active and LRU lists;
 *   lru:  no one else holds a ref (a brick between requests), so every
 *         vl_inode_get revives an inode from the LRU and every unref puts
 *         it back.
 * Prints one line per workload and thread count: ops per second of wall
 * time, and ops per second of the process's CPU time (steadier on a
 * machine shared with other work). Built by `make`, not run by
 * `make check`.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "vol/vol.h"

struct bench {
    vl_inode_table_t *table; /* owned */
    vl_gfid_t *gfids;        /* owned; n_gfids */
    size_t n_gfids;          /* GFIDs in the table */
    size_t n_ops;            /* find/get + unref pairs per thread */
    bool is_held;            /* "held" workload: find, not get */
};

struct bench_thread {
    struct bench *b;   /* borrowed */
    uint64_t seed;     /* xorshift state, per thread */
    pthread_t tid;     /* the thread */
};


static uint64_t
bench_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}


static void *
bench_run(void *arg)
{
    struct bench_thread *bt = arg;
    struct bench *b = bt->b;

    for (size_t i = 0; i < b->n_ops; i++) {
        const vl_gfid_t *g = &b->gfids[bench_rand(&bt->seed) % b->n_gfids];
        vl_inode_t *inode;

        if (b->is_held)
            inode = vl_inode_find(b->table, g);
        else
            inode = vl_inode_get(b->table, g, S_IFREG);
        if (inode == NULL) {
            fprintf(stderr, "bench-inode-table: lookup failed\n");
            abort();
        }
        vl_inode_unref(inode);
    }
    return NULL;
}


static double
bench_now(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}


static void
bench_one(struct bench *b, unsigned n_threads)
{
    struct bench_thread bt[2];
    double t0;
    double cpu0;
    double secs;
    double cpu_secs;

    t0 = bench_now(CLOCK_MONOTONIC);
    cpu0 = bench_now(CLOCK_PROCESS_CPUTIME_ID);
    for (unsigned i = 0; i < n_threads; i++) {
        bt[i].b = b;
        bt[i].seed = 0x9e3779b97f4a7c15ULL * (i + 1);
        if (pthread_create(&bt[i].tid, NULL, bench_run, &bt[i]) != 0) {
            fprintf(stderr, "bench-inode-table: pthread_create failed\n");
            exit(1);
        }
    }
    for (unsigned i = 0; i < n_threads; i++)
        pthread_join(bt[i].tid, NULL);
    secs = bench_now(CLOCK_MONOTONIC) - t0;
    cpu_secs = bench_now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    printf("%s threads=%u ops=%zu ops_per_s=%.0f ops_per_cpu_s=%.0f\n",
           b->is_held ? "held" : "lru", n_threads, b->n_ops * n_threads,
           (double)(b->n_ops * n_threads) / secs,
           (double)(b->n_ops * n_threads) / cpu_secs);
}


int
main(int argc, char **argv)
{
    struct bench b = {.n_gfids = 65536, .n_ops = 2000000};
    vl_inode_t **held;

    if (argc > 1)
        b.n_gfids = strtoull(argv[1], NULL, 0);
    if (argc > 2)
        b.n_ops = strtoull(argv[2], NULL, 0);
    if (b.n_gfids == 0)
        b.n_gfids = 1;
    vl_global_init();
    b.table = vl_inode_table_new(NULL, 0, b.n_gfids);
    b.gfids = calloc(b.n_gfids, sizeof(*b.gfids));
    held = calloc(b.n_gfids, sizeof(*held));
    if (b.table == NULL || b.gfids == NULL || held == NULL) {
        fprintf(stderr, "bench-inode-table: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < b.n_gfids; i++) {
        vl_gfid_generate(&b.gfids[i]);
        held[i] = vl_inode_get(b.table, &b.gfids[i], S_IFREG);
    }

    b.is_held = true;
    bench_one(&b, 1);
    bench_one(&b, 2);

    for (size_t i = 0; i < b.n_gfids; i++)
        vl_inode_unref(held[i]);
    b.is_held = false;
    bench_one(&b, 1);
    bench_one(&b, 2);

    vl_inode_table_free(b.table);
    free(held);
    free(b.gfids);
    return 0;
}
