/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-profile: mortard's side of volume profile and top (profile-fmt.c,
 * cmd-profile.c's grammar): a brick's dump parsed (its request number,
 * incomplete and bad files), a period computed from two snapshots (calls,
 * bytes, block sizes, share of latency, min/max exact or bounded by the
 * buckets), GlusterFS's text for cumulative and interval sections, top
 * tables sorted by count and cut at list-cnt, and bad top words refused
 * before anything is asked.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mortard/profile.h"

/* 24 bucket counts: n in bucket k, zero elsewhere. */
static const char *
buckets(unsigned k, unsigned n)
{
    static char buf[8][128];
    static unsigned which;
    char *b = buf[which++ % 8];
    size_t at = 0;

    for (unsigned i = 0; i < VL_LAT_BUCKETS; i++)
        at += (size_t)snprintf(b + at, sizeof(buf[0]) - at, " %u",
                               i == k ? n : 0);
    return b;
}


/* A dump: WRITE 10 calls now (4 at start, 6 at the last info), READ 3
 * calls (all after the last info, so its extremes are exact), block
 * sizes 4 KiB writes. */
static char *
make_dump(unsigned seq, bool with_end)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    fprintf(f, "mortar-profile 1\nseq %u\nlatency-measurement on\n"
            "count-fop-hits on\ninterval 3\nduration 100 7\n", seq);
    /* WRITE: lifetime min 1000 and max 900000 ns reached before the
     * start; since the last info, 4 calls of 4..8 us (bucket 3). */
    fprintf(f, "fop now WRITE 10 0 100000 1000 900000 40960%s\n",
            buckets(3, 10));
    fprintf(f, "fop start WRITE 4 0 40000 1000 900000 16384%s\n",
            buckets(3, 4));
    fprintf(f, "fop int WRITE 6 0 76000 1000 900000 24576%s\n",
            buckets(3, 6));
    /* READ: 3 calls since the last info, min 2000 max 300000 ns. */
    fprintf(f, "fop now READ 3 0 300000 2000 300000 12288%s\n",
            buckets(8, 3));
    fprintf(f, "fop start READ 0 0 0 %llu 0 0%s\n",
            (unsigned long long)UINT64_MAX, buckets(0, 0));
    fprintf(f, "fop int READ 0 0 0 %llu 0 0%s\n",
            (unsigned long long)UINT64_MAX, buckets(0, 0));
    fprintf(f, "bs now 12 3 10\nbs start 12 0 4\nbs int 12 0 6\n");
    fprintf(f, "top read 2 /a\ntop read 9 /b\ntop read 5 /dir/c\n"
            "top open 1 <gfid:00000000-0000-0000-0000-000000000001>\n");
    if (with_end)
        fprintf(f, "end\n");
    fclose(f);
    return text;
}


static void
test_parse_seq_and_errors(void **state)
{
    struct md_prof_dump d;
    char err[128], *text = make_dump(42, true);

    (void)state;
    assert_int_equal(md_prof_parse(text, 42, &d, err, sizeof(err)), 0);
    assert_true(d.is_latency);
    assert_true(d.is_count_hits);
    assert_int_equal(d.interval, 3);
    assert_int_equal(d.n_fops, 2);
    assert_int_equal(d.n_top[IOS_TOP_READ], 3);
    assert_int_equal(d.n_top[IOS_TOP_OPEN], 1);
    md_prof_dump_clear(&d);
    /* Another request's answer, or a file without its end: not yet. */
    assert_int_equal(md_prof_parse(text, 43, &d, err, sizeof(err)), -EAGAIN);
    md_prof_dump_clear(&d);
    free(text);
    text = make_dump(42, false);
    assert_int_equal(md_prof_parse(text, 42, &d, err, sizeof(err)), -EAGAIN);
    md_prof_dump_clear(&d);
    free(text);
    /* A bad record names its line; an error record is kept. */
    assert_int_equal(md_prof_parse("mortar-profile 1\nseq 1\nfop now X 1\n"
                                   "end\n", 1, &d, err, sizeof(err)),
                     -EPROTO);
    assert_non_null(strstr(err, "line 3"));
    md_prof_dump_clear(&d);
    assert_int_equal(md_prof_parse("mortar-profile 1\nseq 1\nerror this "
                                   "brick has no io-stats\nend\n", 1, &d,
                                   err, sizeof(err)), 0);
    assert_string_equal(d.error, "this brick has no io-stats");
    md_prof_dump_clear(&d);
    assert_int_equal(md_prof_parse("mortar-profile 2\nseq 1\nend\n", 1, &d,
                                   err, sizeof(err)), -EPROTO);
    md_prof_dump_clear(&d);
}


static void
test_period_math(void **state)
{
    struct md_prof_dump d;
    struct md_prof_period p;
    char err[128], *text = make_dump(7, true);

    (void)state;
    assert_int_equal(md_prof_parse(text, 7, &d, err, sizeof(err)), 0);
    /* Cumulative: now - start. */
    md_prof_period(&d, MD_PROF_START, &p);
    assert_int_equal(p.n_rows, 2);
    assert_int_equal(p.duration, 100);
    assert_int_equal(p.bytes_written, 40960 - 16384);
    assert_int_equal(p.bytes_read, 12288);
    assert_int_equal(p.bs[12][0], 3);
    assert_int_equal(p.bs[12][1], 6);
    /* Sorted by share rising: WRITE 60000 ns of 360000, READ the rest. */
    assert_string_equal(p.rows[0].name, "WRITE");
    assert_int_equal(p.rows[0].calls, 6);
    assert_true(p.rows[0].pct > 16.6 && p.rows[0].pct < 16.7);
    assert_string_equal(p.rows[1].name, "READ");
    assert_true(p.rows[1].pct > 83.3 && p.rows[1].pct < 83.4);
    assert_true(p.rows[1].avg_us > 99.9 && p.rows[1].avg_us < 100.1);
    /* READ had no calls at the baseline: its extremes are exact. */
    assert_true(p.rows[1].min_us == 2.0);
    assert_true(p.rows[1].max_us == 300.0);
    /* WRITE's extremes are older than the period: its bucket bounds
     * them (4..8 us), not the lifetime 1 us and 900 us. */
    assert_true(p.rows[0].min_us == 4.0);
    assert_true(p.rows[0].max_us == 8.0);
    assert_true(p.rows[0].avg_us == 10.0);
    /* Interval: now - int. */
    md_prof_period(&d, MD_PROF_INT, &p);
    assert_int_equal(p.duration, 7);
    assert_int_equal(p.bytes_written, 40960 - 24576);
    assert_int_equal(p.bs[12][1], 4);
    for (size_t i = 0; i < p.n_rows; i++)
        if (strcmp(p.rows[i].name, "WRITE") == 0)
            assert_int_equal(p.rows[i].calls, 4);
    md_prof_dump_clear(&d);
    free(text);
}


static void
test_period_text(void **state)
{
    struct md_prof_dump d;
    struct md_prof_period p;
    struct md_sbuf sb = {0};
    struct md_node root = {0};
    char err[128], *text = make_dump(7, true);

    (void)state;
    assert_int_equal(md_prof_parse(text, 7, &d, err, sizeof(err)), 0);
    md_prof_brick_head("h:/b", &sb);
    md_prof_period(&d, MD_PROF_START, &p);
    md_prof_period_show(&p, -1, &sb, md_node_add(&root, "cumulativeStats",
                                                 NULL));
    md_prof_period(&d, MD_PROF_INT, &p);
    md_prof_period_show(&p, 3, &sb, md_node_add(&root, "intervalStats",
                                                NULL));
    assert_false(sb.is_oom);
    assert_non_null(strstr(sb.data, "Brick: h:/b\n-----------\n"
                                    "Cumulative Stats:\n"));
    assert_non_null(strstr(sb.data, "   Block Size:               4096b+ \n"
                                    " No. of Reads:                    3 \n"
                                    "No. of Writes:                    6 \n"));
    assert_non_null(strstr(sb.data, " %-latency   Avg-latency   Min-Latency"
                                    "   Max-Latency   No. of calls         "
                                    "Fop\n"));
    assert_non_null(strstr(sb.data, "     16.67      10.00 us       4.00 us"
                                    "       8.00 us              6       "
                                    "WRITE\n"));
    assert_non_null(strstr(sb.data, "    Duration: 100 seconds\n"
                                    "   Data Read: 12288 bytes\n"
                                    "Data Written: 24576 bytes\n"));
    assert_non_null(strstr(sb.data, "Interval 3 Stats:\n"));
    assert_non_null(strstr(sb.data, "    Duration: 7 seconds\n"));
    /* The tree: the interval's number and the fops as a list. */
    assert_string_equal(root.kids->next->kids->name, "interval");
    assert_string_equal(root.kids->next->kids->text, "3");
    md_sbuf_clear(&sb);
    md_node_free(root.kids);
    md_prof_dump_clear(&d);
    free(text);
}


static void
test_top_sort_and_list_cnt(void **state)
{
    struct md_prof_dump d;
    struct md_sbuf sb = {0};
    struct md_node root = {0};
    char err[128], *text = make_dump(7, true);

    (void)state;
    assert_int_equal(md_prof_parse(text, 7, &d, err, sizeof(err)), 0);
    md_prof_top_show(&d, IOS_TOP_READ, 100, &sb, &root);
    assert_string_equal(sb.data, "Count\t\tfilename\n"
                                 "=======================\n"
                                 "9\t\t/b\n5\t\t/dir/c\n2\t\t/a\n");
    md_sbuf_clear(&sb);
    md_prof_top_show(&d, IOS_TOP_READ, 1, &sb, &root);
    assert_string_equal(sb.data, "Count\t\tfilename\n"
                                 "=======================\n9\t\t/b\n");
    md_sbuf_clear(&sb);
    md_prof_top_show(&d, IOS_TOP_WRITE, 100, &sb, &root);
    assert_string_equal(sb.data, "Count\t\tfilename\n"
                                 "=======================\n");
    md_sbuf_clear(&sb);
    assert_int_equal(md_prof_top_metric("opendir"), IOS_TOP_OPENDIR);
    assert_int_equal(md_prof_top_metric("bogus"), -1);
    md_node_free(root.kids);
    md_prof_dump_clear(&d);
    free(text);
}


static void
test_top_bad_words(void **state)
{
    struct md_state st = {0};
    struct md_result r;
    char *unknown[] = {"volume", "top", "v", "bogus", NULL};
    char *perf[] = {"volume", "top", "v", "read-perf", NULL};
    char *cnt[] = {"volume", "top", "v", "read", "list-cnt", "101", NULL};
    char *odd[] = {"volume", "top", "v", "read", "brick", NULL};
    char *prof[] = {"volume", "profile", "v", "info", "sideways", NULL};

    (void)state;
    md_result_init(&r);
    md_cmd_top(&st, 4, unknown, &r);
    assert_int_equal(r.ret, MD_EXIT_FAIL);
    assert_non_null(strstr(r.errstr, "unknown metric 'bogus'"));
    md_result_clear(&r);
    md_result_init(&r);
    md_cmd_top(&st, 4, perf, &r);
    assert_non_null(strstr(r.errstr, "not supported"));
    md_result_clear(&r);
    md_result_init(&r);
    md_cmd_top(&st, 6, cnt, &r);
    assert_non_null(strstr(r.errstr, "list-cnt"));
    md_result_clear(&r);
    md_result_init(&r);
    md_cmd_top(&st, 5, odd, &r);
    assert_int_equal(r.ret, MD_EXIT_USAGE);
    md_result_clear(&r);
    md_result_init(&r);
    md_cmd_profile(&st, 5, prof, &r);
    assert_int_equal(r.ret, MD_EXIT_USAGE);
    md_result_clear(&r);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_seq_and_errors),
        cmocka_unit_test(test_period_math),
        cmocka_unit_test(test_period_text),
        cmocka_unit_test(test_top_sort_and_list_cnt),
        cmocka_unit_test(test_top_bad_words),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
