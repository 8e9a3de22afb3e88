/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-volfile: volfile parsing (good files, every error with its line),
 * top, append, write and load. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vol/vol.h"

static const char good[] =
    "# a client graph\n"
    "volume v0-client-0\n"
    "    type protocol/client\n"
    "    option remote-host h1\n"
    "    option remote-subvolume /data/b1  \n"
    "end-volume\n"
    "\n"
    "   # indented comment\n"
    "volume v0-client-1\n"
    "\ttype protocol/client\n"
    "    option remote-host h2\n"
    "end-volume\n"
    "volume v0-dht\n"
    "    type cluster/distribute\n"
    "    option lookup-unhashed   on  and more words \n"
    "    subvolumes v0-client-0\n"
    "    subvolumes v0-client-1\n"
    "end-volume";


static vl_volfile_t *
parse(const char *text, vl_err_t *err)
{
    return vl_volfile_parse(text, strlen(text), "t.vol", err);
}


static void
test_good(void **state)
{
    vl_err_t err = {{0}};
    vl_volfile_t *vf = parse(good, &err);
    const struct vl_volfile_vol *top;

    assert_non_null(vf);
    assert_int_equal(vf->n_vols, 3);
    assert_string_equal(vf->vols[0].name, "v0-client-0");
    assert_string_equal(vf->vols[0].type, "protocol/client");
    assert_int_equal(vf->vols[0].line, 2);
    assert_int_equal(vf->vols[0].n_opts, 2);
    assert_string_equal(vf->vols[0].opts[1].key, "remote-subvolume");
    assert_string_equal(vf->vols[0].opts[1].value, "/data/b1");
    assert_string_equal(vf->vols[1].type, "protocol/client");
    assert_string_equal(vf->vols[2].opts[0].value, "on  and more words");
    assert_int_equal(vf->vols[2].n_subvols, 2);
    assert_string_equal(vf->vols[2].subvols[1], "v0-client-1");
    top = vl_volfile_top(vf, &err);
    assert_non_null(top);
    assert_string_equal(top->name, "v0-dht");
    vl_volfile_free(vf);
}


static void
test_errors(void **state)
{
    static const struct {
        const char *text;
        const char *want; /* must appear in the message */
    } cases[] = {
        {"", "t.vol: no volumes"},
        {"# only a comment\n", "t.vol: no volumes"},
        {"volume a\n type x/y\n optoin k v\nend-volume\n",
         "t.vol:3: unknown keyword 'optoin'"},
        {"type x/y\n", "t.vol:1: outside of a volume"},
        {"volume a\n type x/y\n", "t.vol:1: missing end-volume"},
        {"volume a\n type x/y\nvolume b\n", "t.vol:3: missing end-volume "
                                            "for volume 'a'"},
        {"volume\n", "t.vol:1: 'volume' needs a name"},
        {"volume a b\n", "t.vol:1: extra text"},
        {"volume a\nend-volume\n", "t.vol:2: no type given for volume 'a'"},
        {"volume a\n type x/y\n type x/z\nend-volume\n",
         "t.vol:3: second type"},
        {"volume a\n type\nend-volume\n", "t.vol:2: 'type' needs a value"},
        {"volume a\n type x/y\n option k\nend-volume\n",
         "t.vol:3: missing value for option 'k'"},
        {"volume a\n type x/y\n option\nend-volume\n", "t.vol:3: 'option'"},
        {"volume a\n type x/y\n option k 1\n option k 2\nend-volume\n",
         "t.vol:4: duplicate option 'k'"},
        {"volume a\n type x/y\n subvolumes b\nend-volume\n",
         "t.vol:3: unknown subvolume 'b'"},
        {"volume a\n type x/y\n subvolumes a\nend-volume\n",
         "t.vol:3: volume names itself"},
        {"volume a\n type x/y\nend-volume\nvolume b\n type x/y\n"
         " subvolumes a a\nend-volume\n", "t.vol:6: subvolume named twice"},
        {"volume a\n type x/y\n subvolumes\nend-volume\n",
         "t.vol:3: 'subvolumes' needs"},
        {"volume a\n type x/y\nend-volume\nvolume a\n type x/y\n"
         "end-volume\n", "t.vol:4: duplicate volume 'a'"},
        {"volume a\n type x/y\nend-volume extra\n", "t.vol:3: extra text"},
        {"end-volume\n", "t.vol:1: outside of a volume"},
    };
    size_t i;

    for (i = 0; i < VL_ARRAY_SIZE(cases); i++) {
        vl_err_t err = {{0}};
        vl_volfile_t *vf = parse(cases[i].text, &err);

        if (vf != NULL)
            fail_msg("case %zu parsed", i);
        if (strstr(err.msg, cases[i].want) == NULL)
            fail_msg("case %zu: got '%s', want '%s'", i, err.msg,
                     cases[i].want);
    }
}


static void
test_nul_and_length(void **state)
{
    static const char text[] = "volume a\n type x/y\nend-volume\nGARBAGE";
    vl_err_t err = {{0}};
    vl_volfile_t *vf;

    /* len excludes the trailing garbage: it must not be read. */
    vf = vl_volfile_parse(text, strlen(text) - 7, "t.vol", &err);
    assert_non_null(vf);
    vl_volfile_free(vf);
    vf = vl_volfile_parse("volume a\n ty\0pe x\nend-volume\n", 28, "t.vol",
                          &err);
    assert_null(vf);
    assert_non_null(strstr(err.msg, "t.vol:2:"));
}


/* A growable text for the generated volfiles of test_limits. */
struct t_text {
    char *buf;    /* owned */
    size_t len;   /* bytes used */
    size_t cap;   /* bytes allocated */
};


static void __attribute__((format(printf, 2, 3)))
t_add(struct t_text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    while (t->len + (size_t)n + 1 > t->cap) {
        t->cap = t->cap == 0 ? 4096 : 2 * t->cap;
        t->buf = realloc(t->buf, t->cap);
        assert_non_null(t->buf);
    }
    va_start(ap, fmt);
    vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}


/* n volumes; with is_chain each names the one before it, else none. */
static void
t_gen(struct t_text *t, size_t n, bool is_chain)
{
    t->len = 0;
    for (size_t i = 0; i < n; i++) {
        t_add(t, "volume v%zu\n type debug/trace\n", i);
        if (is_chain && i > 0)
            t_add(t, " subvolumes v%zu\n", i - 1);
        t_add(t, "end-volume\n");
    }
}


/* Expects text to be refused with a message containing want. */
static void
t_refused(const struct t_text *t, const char *want)
{
    vl_err_t err = {{0}};
    vl_volfile_t *vf = vl_volfile_parse(t->buf, t->len, "t.vol", &err);

    if (vf != NULL)
        fail_msg("parsed; want '%s'", want);
    if (strstr(err.msg, want) == NULL)
        fail_msg("got '%s', want '%s'", err.msg, want);
}


/* Every cap of volfile.h: the largest allowed input parses, one more is
 * refused with a message naming the limit and the line. */
static void
test_limits(void **state)
{
    struct t_text t = {0};
    vl_err_t err = {{0}};
    vl_volfile_t *vf;

    /* Depth: a chain of VL_VOLFILE_MAX_DEPTH volumes is fine. */
    t_gen(&t, VL_VOLFILE_MAX_DEPTH, true);
    vf = vl_volfile_parse(t.buf, t.len, "t.vol", &err);
    assert_non_null(vf);
    assert_string_equal(vl_volfile_top(vf, &err)->name, "v63");
    vl_volfile_free(vf);
    t_gen(&t, VL_VOLFILE_MAX_DEPTH + 1, true);
    t_refused(&t, "t.vol:258: graph deeper than 64 volumes at 'v64'");

    /* Volumes: the 100,000-volume chain is refused at once (by
     * depth), and as many volumes side by side by their number. */
    t_gen(&t, 100000, true);
    t_refused(&t, "graph deeper than 64");
    t_gen(&t, VL_VOLFILE_MAX_VOLS, false);
    vf = vl_volfile_parse(t.buf, t.len, "t.vol", &err);
    assert_non_null(vf);
    vl_volfile_free(vf);
    t_gen(&t, 100000, false);
    t_refused(&t, "t.vol:12289: more than 4096 volumes");

    /* Wide: the last volume names all 4095 others (top found in linear
     * time too). */
    t_gen(&t, VL_VOLFILE_MAX_VOLS - 1, false);
    t_add(&t, "volume top\n type cluster/distribute\n subvolumes");
    for (size_t i = 0; i < VL_VOLFILE_MAX_VOLS - 1; i++)
        t_add(&t, " v%zu", i);
    t_add(&t, "\nend-volume\n");
    vf = vl_volfile_parse(t.buf, t.len, "t.vol", &err);
    assert_non_null(vf);
    assert_string_equal(vl_volfile_top(vf, &err)->name, "top");
    vl_volfile_free(vf);

    /* Options of one volume. */
    t.len = 0;
    t_add(&t, "volume a\n type x/y\n");
    for (int i = 0; i <= VL_VOLFILE_MAX_OPTS; i++)
        t_add(&t, " option k%d v\n", i);
    t_add(&t, "end-volume\n");
    t_refused(&t, "t.vol:1027: more than 1024 options in volume 'a'");

    /* Line, name, type and key lengths. */
    t.len = 0;
    t_add(&t, "volume a\n type x/y\n option k %0*d\nend-volume\n",
          VL_VOLFILE_MAX_LINE, 7);
    t_refused(&t, "t.vol:3: line longer than 1048576 bytes");
    t.len = 0;
    t_add(&t, "volume %0*d\n", VL_VOLFILE_MAX_NAME + 1, 7);
    t_refused(&t, "t.vol:1: volume name longer than 255 bytes");
    t.len = 0;
    t_add(&t, "volume a\n type %0*d\n", VL_VOLFILE_MAX_NAME + 1, 7);
    t_refused(&t, "t.vol:2: type longer than 255 bytes");
    t.len = 0;
    t_add(&t, "volume a\n type x/y\n option %0*d v\n",
          VL_VOLFILE_MAX_NAME + 1, 7);
    t_refused(&t, "t.vol:3: option key longer than 255 bytes");

    /* The whole file: refused before its first line is read. */
    t.len = 0;
    while (t.len <= VL_VOLFILE_MAX_BYTES)
        t_add(&t, "# %01000d\n", 0);
    t_refused(&t, "more than the limit of 16777216");
    free(t.buf);
}


static void
test_top_errors(void **state)
{
    vl_err_t err = {{0}};
    vl_volfile_t *vf = parse("volume a\n type x/y\nend-volume\n"
                             "volume b\n type x/y\nend-volume\n", &err);

    assert_non_null(vf);
    assert_null(vl_volfile_top(vf, &err));
    assert_non_null(strstr(err.msg, "several top volumes"));
    assert_non_null(strstr(err.msg, "'a' (line 1)"));
    vl_volfile_free(vf);
}


static void
test_append_write_load(void **state)
{
    vl_err_t err = {{0}};
    vl_volfile_t *vf = parse(good, &err);
    vl_volfile_t *vf2;
    struct vl_kv opts[] = {{"mountpoint", "/mnt/x y"}};
    const char *subs[] = {"v0-dht"};
    const char *bad_subs[] = {"nope"};
    char path[] = "/tmp/test-volfile-XXXXXX";
    int fd;
    FILE *f;

    assert_non_null(vf);
    assert_int_equal(vl_volfile_append(vf, "fuse", "mount/fuse", opts, 1,
                                       subs, 1), 0);
    assert_int_equal(vl_volfile_append(vf, "fuse", "mount/fuse", NULL, 0,
                                       NULL, 0), -EEXIST);
    assert_int_equal(vl_volfile_append(vf, "z", "x/y", NULL, 0, bad_subs, 1),
                     -ENOENT);
    assert_string_equal(vl_volfile_top(vf, &err)->name, "fuse");

    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(vl_volfile_write(vf, f), 0);
    fclose(f);
    vf2 = vl_volfile_load(path, &err);
    assert_non_null(vf2);
    assert_int_equal(vf2->n_vols, 4);
    assert_string_equal(vf2->vols[3].opts[0].value, "/mnt/x y");
    assert_string_equal(vf2->vols[2].subvols[1], "v0-client-1");
    assert_string_equal(vf2->source, path);
    unlink(path);
    vl_volfile_free(vf2);
    vl_volfile_free(vf);

    assert_null(vl_volfile_load("/nonexistent/x.vol", &err));
    assert_string_equal(err.msg,
                        "/nonexistent/x.vol: No such file or directory");
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_nul_and_length),
        cmocka_unit_test(test_top_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_append_write_load),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
