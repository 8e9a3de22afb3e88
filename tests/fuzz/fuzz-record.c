/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-record: the ONC-RPC record marking parser (rpc/src/record.c), as
 * a connection's reader drives it: arbitrary bytes cut at arbitrary
 * points.
 *
 * Input: byte 0 picks the largest record accepted (byte * 64), byte 1
 * seeds the cut points and, with its top bit, sets a process cap on
 * bytes held in incomplete records of (its low bits * 64) for the input
 * (vrpc_set_buffered_max); the rest is the stream. It is fed twice: once
 * through vrpc_rm_feed alone in chunks, once the way conn.c reads large
 * fragment bodies (vrpc_rm_direct, vrpc_rm_direct_done between marks fed
 * a byte at a time). Both must yield the same records and the same
 * error, every record within the bound, the process total within its
 * cap and back at 0 once the parser is cleared; every record and the
 * parser's partial record are freed (LeakSanitizer checks).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "vrpc.h"

#define REC_MAX_KEPT 64 /* records of the first pass compared */

struct rec_log {
    size_t n;                     /* records seen */
    size_t len[REC_MAX_KEPT];     /* their lengths */
    uint32_t sum[REC_MAX_KEPT];   /* and a checksum of their bytes */
};


static uint32_t
rec_sum(const char *p, size_t n)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 16777619u;
    return h;
}


/* xorshift32: the cut points, reproducible from the seed byte. */
static uint32_t
next_cut(uint32_t *state, size_t left)
{
    uint32_t x = *state;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return (uint32_t)(1 + x % (left < 97 ? left : 97));
}


static void
rec_seen(struct rec_log *log, const struct rec_log *want, vl_buf_t *rec,
         size_t len, size_t max)
{
    FUZZ_CHECK(len <= max);
    FUZZ_CHECK(vrpc_buffered_bytes() <= vrpc_buffered_max());
    FUZZ_CHECK(rec != NULL && rec->size >= len);
    if (log->n < REC_MAX_KEPT) {
        log->len[log->n] = len;
        log->sum[log->n] = rec_sum(rec->data, len);
        if (want != NULL) {
            FUZZ_CHECK(log->n < want->n);
            FUZZ_CHECK(want->len[log->n] == len);
            FUZZ_CHECK(want->sum[log->n] == log->sum[log->n]);
        }
    }
    log->n++;
    vl_buf_unref(rec);
}


/* Pass 1: vrpc_rm_feed over chunks. Returns the parser's last result. */
static int
pass_feed(const char *s, size_t n, size_t max, uint32_t seed,
          struct rec_log *log)
{
    struct vrpc_rm rm;
    size_t pos = 0;
    int rc = 0;

    vrpc_rm_init(&rm, max);
    while (pos < n && rc >= 0) {
        size_t chunk = next_cut(&seed, n - pos), off = 0;

        while (off < chunk) {
            vl_buf_t *rec = NULL;
            size_t used = 0, len = 0;

            rc = vrpc_rm_feed(&rm, s + pos + off, chunk - off, &used, &rec,
                              &len);
            FUZZ_CHECK(used <= chunk - off);
            off += used;
            if (rc < 0)
                break;
            if (rc == 1)
                rec_seen(log, NULL, rec, len, max);
            else
                FUZZ_CHECK(off == chunk);
        }
        pos += off;
    }
    vrpc_rm_clear(&rm);
    FUZZ_CHECK(vrpc_buffered_bytes() == 0);
    return rc < 0 ? rc : 0;
}


/* Pass 2: marks a byte at a time, bodies read "directly". */
static int
pass_direct(const char *s, size_t n, size_t max, uint32_t seed,
            struct rec_log *log, const struct rec_log *want)
{
    struct vrpc_rm rm;
    size_t pos = 0;
    int rc = 0;

    vrpc_rm_init(&rm, max);
    while (pos < n) {
        vl_buf_t *rec = NULL;
        size_t len = 0, room;
        char *at = NULL;

        room = vrpc_rm_direct(&rm, &at);
        if (room > 0) {
            size_t k = next_cut(&seed, n - pos);

            if (k > room)
                k = room;
            memcpy(at, s + pos, k);
            pos += k;
            rc = vrpc_rm_direct_done(&rm, k, &rec, &len);
        } else {
            size_t used = 0;

            rc = vrpc_rm_feed(&rm, s + pos, 1, &used, &rec, &len);
            pos += used;
        }
        if (rc < 0)
            break;
        if (rc == 1)
            rec_seen(log, want, rec, len, max);
    }
    vrpc_rm_clear(&rm);
    FUZZ_CHECK(vrpc_buffered_bytes() == 0);
    return rc < 0 ? rc : 0;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    size_t max = (size_t)fuzz_take_u8(&in) * 64;
    uint8_t seed_byte = fuzz_take_u8(&in);
    uint32_t seed = 0x9e3779b9u ^ seed_byte;
    size_t cap_was = vrpc_buffered_max();
    struct rec_log a, b;
    int rc_a, rc_b;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    if (seed_byte & 0x80)
        vrpc_set_buffered_max((size_t)(seed_byte & 0x7f) * 64);
    rc_a = pass_feed((const char *)in.p, in.len, max, seed, &a);
    rc_b = pass_direct((const char *)in.p, in.len, max, seed * 7 + 1, &b, &a);
    vrpc_set_buffered_max(cap_was);
    FUZZ_CHECK(rc_a == 0 || rc_a == -EMSGSIZE || rc_a == -ENOBUFS);
    FUZZ_CHECK(rc_a == rc_b);
    FUZZ_CHECK(a.n == b.n);
    return 0;
}
