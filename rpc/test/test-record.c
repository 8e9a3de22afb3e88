/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-record: the record marking parser, fed byte by byte, in chunks,
 * through the direct-read path, and with malformed or oversized marks. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vrpc.h"

/* Appends a fragment (mark + body) to out; returns new length. */
static size_t
put_frag(char *out, size_t pos, const char *body, uint32_t len, bool last)
{
    uint32_t m = len | (last ? VRPC_LAST_FRAG : 0);

    out[pos++] = (char)(m >> 24);
    out[pos++] = (char)(m >> 16);
    out[pos++] = (char)(m >> 8);
    out[pos++] = (char)m;
    memcpy(out + pos, body, len);
    return pos + len;
}


/* Feeds stream in chunks of step bytes; collects records into recs. */
static int
feed_all(struct vrpc_rm *rm, const char *s, size_t len, size_t step,
         vl_buf_t **recs, size_t *lens, int max)
{
    int n = 0;
    size_t pos = 0;

    while (pos < len) {
        size_t chunk = len - pos < step ? len - pos : step;
        size_t used = 0;
        vl_buf_t *rec = NULL;
        size_t rl = 0;
        int rc = vrpc_rm_feed(rm, s + pos, chunk, &used, &rec, &rl);

        if (rc < 0)
            return rc;
        assert_true(used <= chunk);
        pos += used;
        if (rc == 1) {
            assert_true(n < max);
            recs[n] = rec;
            lens[n++] = rl;
        } else {
            assert_int_equal(used, chunk);
        }
    }
    return n;
}


static void
check_stream(size_t step)
{
    char s[512];
    size_t len = 0;
    vl_buf_t *recs[8];
    size_t lens[8];
    struct vrpc_rm rm;
    int n;

    len = put_frag(s, len, "hello", 5, true);
    len = put_frag(s, len, "ab", 2, false);     /* a two-fragment record */
    len = put_frag(s, len, "", 0, false);       /* empty fragment inside */
    len = put_frag(s, len, "cdef", 4, true);
    len = put_frag(s, len, "", 0, true);        /* an empty record */
    len = put_frag(s, len, "xyz", 3, true);
    vrpc_rm_init(&rm, 1024);
    n = feed_all(&rm, s, len, step, recs, lens, 8);
    assert_int_equal(n, 4);
    assert_int_equal(lens[0], 5);
    assert_memory_equal(recs[0]->data, "hello", 5);
    assert_int_equal(lens[1], 6);
    assert_memory_equal(recs[1]->data, "abcdef", 6);
    assert_int_equal(lens[2], 0);
    assert_int_equal(lens[3], 3);
    assert_memory_equal(recs[3]->data, "xyz", 3);
    for (int i = 0; i < n; i++)
        vl_buf_unref(recs[i]);
    vrpc_rm_clear(&rm);
}


static void
test_byte_by_byte(void **state)
{
    check_stream(1);
}


static void
test_chunks(void **state)
{
    for (size_t step = 2; step < 40; step++)
        check_stream(step);
    check_stream(4096);
}


static void
test_oversized_mark(void **state)
{
    struct vrpc_rm rm;
    const char big[4] = {(char)0x80, 0x10, 0, 0}; /* 1 MiB, last */
    const char huge[4] = {(char)0xff, (char)0xff, (char)0xff, (char)0xff};
    vl_buf_t *rec = NULL;
    size_t used, rl;

    vrpc_rm_init(&rm, 64 * 1024);
    assert_int_equal(vrpc_rm_feed(&rm, big, 4, &used, &rec, &rl), -EMSGSIZE);
    assert_null(rec);
    vrpc_rm_clear(&rm);
    vrpc_rm_init(&rm, VRPC_MAX_RECORD);
    assert_int_equal(vrpc_rm_feed(&rm, huge, 4, &used, &rec, &rl),
                     -EMSGSIZE);
    vrpc_rm_clear(&rm);
}


/* Many small fragments must not add up past the limit. */
static void
test_fragments_add_up(void **state)
{
    char s[64 * 40];
    size_t len = 0;
    char body[32];
    struct vrpc_rm rm;
    vl_buf_t *recs[1];
    size_t lens[1];

    memset(body, 'q', sizeof(body));
    for (int i = 0; i < 40; i++)
        len = put_frag(s, len, body, 32, false);
    vrpc_rm_init(&rm, 1000);
    assert_int_equal(feed_all(&rm, s, len, 7, recs, lens, 1), -EMSGSIZE);
    vrpc_rm_clear(&rm);
}


/* The direct path: the body is read straight into the record buffer. */
static void
test_direct(void **state)
{
    struct vrpc_rm rm;
    const char mark[4] = {(char)0x80, 0, 0x01, 0}; /* 256 bytes, last */
    vl_buf_t *rec = NULL;
    size_t used, rl = 0;
    char *p = NULL;
    size_t want;

    vrpc_rm_init(&rm, 4096);
    assert_int_equal(vrpc_rm_direct(&rm, &p), 0);
    assert_int_equal(vrpc_rm_feed(&rm, mark, 4, &used, &rec, &rl), 0);
    assert_int_equal(used, 4);
    want = vrpc_rm_direct(&rm, &p);
    assert_int_equal(want, 256);
    memset(p, 'a', 100);
    assert_int_equal(vrpc_rm_direct_done(&rm, 100, &rec, &rl), 0);
    want = vrpc_rm_direct(&rm, &p);
    assert_int_equal(want, 156);
    memset(p, 'b', 156);
    assert_int_equal(vrpc_rm_direct_done(&rm, 156, &rec, &rl), 1);
    assert_int_equal(rl, 256);
    assert_int_equal(rec->data[99], 'a');
    assert_int_equal(rec->data[100], 'b');
    assert_int_equal(rec->data[255], 'b');
    vl_buf_unref(rec);
    assert_int_equal(vrpc_rm_direct(&rm, &p), 0);
    vrpc_rm_clear(&rm);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_byte_by_byte),
        cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_oversized_mark),
        cmocka_unit_test(test_fragments_add_up),
        cmocka_unit_test(test_direct),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
