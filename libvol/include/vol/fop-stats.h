/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fop-stats: per-translator, per-fop counters, always on (issue 25).
 *
 * Every translator of a graph counts, for each fop, the requests it
 * handled: how many were answered, how many with an error, their
 * latencies (sum, min, max and a log2 histogram) and, for READ and WRITE,
 * the bytes. `volume profile`, `volume top` and the /metrics endpoint read
 * them; nothing resets them (a reader that wants an interval subtracts two
 * snapshots).
 *
 * Which translators a request credits. A request is credited, once, to
 * every translator it reached, when it is answered (vl_unwind):
 *   - vl_wind(req) reaches req->xl;
 *   - vl_pass(req, child), and an empty fop slot (which passes to the
 *     first child), reach child as well: the request is the same object,
 *     so the passing translator and every translator below it that the
 *     request was passed to are all credited with the one answer;
 *   - a child request (vl_req_child, vl_req_new_op) is a request of its
 *     own: it credits the translators it reaches, and the parent is
 *     credited when the parent is answered.
 * So a translator's count is the number of answered requests of that fop
 * that it handled, whether it answered them, passed them on or made child
 * requests for them. A request never answered (vl_req_free_unwound, or
 * pending at teardown) is not counted.
 *
 * Latency: from the moment the request reached that translator (the
 * vl_wind or vl_pass call, CLOCK_MONOTONIC) to the vl_unwind call. For a
 * passing translator this includes the time below it. The latency of a
 * translator that holds a request and answers later (a queue, a lock, a
 * cache refresh) includes the wait.
 *
 * Bytes: READ counts reply.count of successful answers (the bytes
 * answered); WRITE counts the bytes of args.iov (the bytes asked, whatever
 * the answer); other fops count 0.
 *
 * Cost: counting is lock-free, relaxed atomic adds on the translator's
 * own counters; each request takes one clock reading per translator it
 * reaches and one at its answer. Measured in test-fop-stats's
 * microbenchmark (doc/architecture.md, "Fop counters").
 */
#ifndef VOL_FOP_STATS_H
#define VOL_FOP_STATS_H

#include <stdint.h>

#include "vol/req.h"

struct vl_xlator;

/* Bucket k (0..22) counts answers faster than 2^k microseconds and not in
 * a lower bucket; bucket 23 the rest (4.19 s and slower). */
#define VL_LAT_BUCKETS 24

typedef struct vl_fop_stats {
    uint64_t calls;      /* requests of this fop that this translator
                            handled and that were answered */
    uint64_t errors;     /* of those, answered with status < 0 */
    uint64_t lat_sum_ns; /* sum of their latencies (from reaching this
                            translator to the answer) */
    uint64_t lat_min_ns; /* UINT64_MAX when calls == 0 */
    uint64_t lat_max_ns; /* 0 when calls == 0 */
    uint64_t bytes;      /* READ: bytes answered; WRITE: bytes asked; 0
                            for other fops */
    uint64_t lat_bucket[VL_LAT_BUCKETS]; /* see VL_LAT_BUCKETS */
} vl_fop_stats_t;

/* A snapshot of xl's counters for op since the translator was created
 * (cumulative; never reset). Safe from any thread while xl exists. The
 * fields are read one by one while other threads may be counting, so a
 * snapshot taken during traffic may be off by the requests answered
 * meanwhile (calls may differ from the sum of lat_bucket by those); each
 * field on its own never goes backwards. An op out of range reads as
 * zeroes. */
void vl_fop_stats_read(const struct vl_xlator *xl, vl_fop_t op,
                       vl_fop_stats_t *out /* OUT */);

/* Translators a request reached that could not be recorded, because it
 * was passed more times than its graph is deep (only a translator passing
 * to something that is not its child can do that); they were not
 * credited. 0 in a correct graph. */
uint64_t vl_fop_stats_unrecorded(void);

/* The bucket a latency of ns nanoseconds falls in (0..VL_LAT_BUCKETS-1). */
unsigned vl_lat_bucket(uint64_t ns);

/* The upper bound of bucket k in nanoseconds (2^k microseconds), or
 * UINT64_MAX for the last bucket. */
uint64_t vl_lat_bucket_le_ns(unsigned k);

#endif /* VOL_FOP_STATS_H */
