/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-dist-many: cluster/distribute over 100 and over 256 storage/posix
 * bricks (dist-test.h), with subvolume indices far past 64 (sets of
 * subvolumes were 64-bit masks, and 64 the limit):
 *   - a file for each subvolume lands on its hashed brick, every brick
 *     (a fresh graph finds it there again);
 *   - mkdir makes the directory on every brick, each with its range of
 *     the default layout (mortar.dht.layout lists them all); rmdir
 *     removes every copy;
 *   - readdir of a directory whose files are on subvolumes 64 and up, with
 *     a small buffer: every name once; cookies carry indices of 64 and
 *     more, and a new fd resumes from one of them (seekdir);
 *   - a subvolume above 64 down is handled like subvolume 1 down: lookup
 *     of a name hashed there is ENOTCONN (not ENOENT), rmdir and mkdir
 *     there are refused, pathinfo of a directory leaves it out;
 *   - decommissioned-bricks naming subvolumes above 64: no range in new
 *     layouts, no new files there (a name hashed there in an old layout
 *     leaves a link file only), the statedump says so;
 *   - 257 children are refused at init with a clear error, 256 are not.
 * With min-free-disk 0% every file goes to its hashed brick.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../../builtin.h"
#include "dist.h"
#include "dist-test.h"
#include "vl-test.h"

#define TM_OPTS " option min-free-disk 0%\n"


static int
tm_setup_100(void **state)
{
    return dt_setup_bricks(state, 100, TM_OPTS);
}


static int
tm_setup_256(void **state)
{
    return dt_setup_bricks(state, 256, TM_OPTS);
}


/* The default layout of t's subvolumes without those in skip (test-owned:
 * vl_free). */
static struct dist_layout *
tm_layout(struct dt *t, dist_mask_t skip)
{
    struct dist_layout *l = dist_layout_new(NULL, (unsigned)t->n_bricks);

    assert_non_null(l);
    dist_layout_default(l, skip, 1, DIST_FLAG_COMMITTED);
    return l;
}


/* A name (prefix + counter) that hashes to subvolume want in a default
 * layout of t's subvolumes. */
static void
tm_name_on(struct dt *t, int want, const char *prefix, char *buf,
           size_t len)
{
    struct dist_layout *l = tm_layout(t, dist_mask_none());

    for (int k = 0; k < 1000000; k++) {
        snprintf(buf, len, "%s%d", prefix, k);
        if (dist_layout_search(l, buf) == want) {
            vl_free(l);
            return;
        }
    }
    fail_msg("no name for subvolume %d", want);
}


/* Virtual xattr key of inode through distribute into buf; 0 or -errno. */
static int
tm_vxattr(struct dt *t, vl_inode_t *inode, const char *key, char *buf,
          size_t len)
{
    union vl_fop_args a = {0};
    struct vl_reply r;
    int rc;

    a.getxattr.loc.inode = inode;
    a.getxattr.name = key;
    a.getxattr.size = len - 1;
    rc = dt_call(t, VL_FOP_GETXATTR, &a, &r);
    if (rc == 0) {
        assert_non_null(r.xattr);
        assert_true((size_t)r.count < len);
        memcpy(buf, r.xattr, (size_t)r.count);
        buf[r.count] = '\0';
    }
    vl_reply_clear(&r);
    return rc;
}


/* Whether word is one of the space-separated words of text. */
static bool
tm_has_word(const char *text, const char *word)
{
    size_t len = strlen(word);

    for (const char *p = strstr(text, word); p != NULL;
         p = strstr(p + 1, word))
        if ((p == text || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return true;
    return false;
}


/* Words in text (space-separated). */
static int
tm_count_words(const char *text)
{
    int n = 0;

    for (const char *p = text; *p != '\0'; p++)
        if (*p != ' ' && (p == text || p[-1] == ' '))
            n++;
    return n;
}


/* Marks subvolume i down (is_up false, and not local) or up again, as a
 * protocol/client child's CHILD_DOWN / CHILD_UP would. */
static void
tm_set_up(struct dt *t, int i, bool is_up)
{
    struct dist_priv *priv = dist_priv(t->dist);

    pthread_mutex_lock(&priv->lock);
    priv->is_local[i] = is_up;
    priv->is_up[i] = is_up;
    pthread_mutex_unlock(&priv->lock);
}


static void
test_file_per_subvolume(void **state)
{
    struct dt *t = *state;
    vl_inode_t *d = NULL, *f = NULL;
    char name[32], rel[64], text[256];
    const int probe[] = {0, 63, 64, 65, 99, t->n_bricks - 1};
    mode_t mode;

    assert_int_equal(dt_mkdir(t, t->root, "files", &d), 0);
    for (int i = 0; i < t->n_bricks; i++) {
        tm_name_on(t, i, "f", name, sizeof(name));
        assert_int_equal(dt_create(t, d, name, &f, NULL), 0);
        vl_inode_unref(f);
        snprintf(rel, sizeof(rel), "files/%s", name);
        if (!dt_exists(t, i, rel, &mode))
            fail_msg("%s is not on brick %d", name, i);
        assert_true(S_ISREG(mode));
        assert_int_not_equal(mode & 07777, S_ISVTX); /* data, no link */
    }
    vl_inode_unref(d);

    /* A fresh graph looks them up where they are. */
    dt_restart(t);
    assert_int_equal(dt_lookup(t, t->root, "files", NULL, &d), 0);
    for (size_t k = 0; k < VL_ARRAY_SIZE(probe); k++) {
        char want[16];

        tm_name_on(t, probe[k], "f", name, sizeof(name));
        assert_int_equal(dt_lookup(t, d, name, NULL, &f), 0);
        assert_int_equal(tm_vxattr(t, f, DIST_VX_PATHINFO, text,
                                   sizeof(text)), 0);
        snprintf(want, sizeof(want), "b%d", probe[k]);
        assert_string_equal(text, want);
        vl_inode_unref(f);
    }
    vl_inode_unref(d);
}


static void
test_mkdir_everywhere(void **state)
{
    struct dt *t = *state;
    struct dist_layout *want = tm_layout(t, dist_mask_none());
    size_t size = (size_t)t->n_bricks * 64, len = 0;
    char *text = malloc(size), *expect = malloc(size);
    char path[PATH_MAX];
    unsigned char val[64];
    uint64_t covered = 0;
    vl_inode_t *d = NULL;
    mode_t mode;

    assert_non_null(text);
    assert_non_null(expect);
    assert_int_equal(dt_mkdir(t, t->root, "d", &d), 0);
    for (int i = 0; i < t->n_bricks; i++) {
        uint32_t start, stop;

        if (!dt_exists(t, i, "d", &mode))
            fail_msg("d is not on brick %d", i);
        assert_true(S_ISDIR(mode));
        dt_path(t, i, "d", path, sizeof(path));
        assert_int_equal(getxattr(path, DIST_XATTR_LAYOUT, val, sizeof(val)),
                         DIST_LAYOUT_SIZE);
        assert_int_equal(val[19], DIST_FLAG_HAS_RANGE | DIST_FLAG_COMMITTED);
        start = (uint32_t)val[8] << 24 | (uint32_t)val[9] << 16
                | (uint32_t)val[10] << 8 | val[11];
        stop = (uint32_t)val[12] << 24 | (uint32_t)val[13] << 16
               | (uint32_t)val[14] << 8 | val[15];
        assert_int_equal(start, want->r[i].start);
        assert_int_equal(stop, want->r[i].stop);
        covered += (uint64_t)stop - start + 1;
        len += (size_t)snprintf(expect + len, size - len,
                                "b%d %08x %08x 1 3\n", i, start, stop);
    }
    assert_int_equal(covered, 1ULL << 32);
    assert_int_equal(want->r[t->n_bricks - 1].stop, 0xffffffffu);
    /* The layout as distribute gives it: a line per subvolume. */
    assert_int_equal(tm_vxattr(t, d, DIST_VX_LAYOUT, text, size), 0);
    assert_string_equal(text, expect);
    /* A directory's pathinfo: every subvolume. */
    assert_int_equal(tm_vxattr(t, d, DIST_VX_PATHINFO, text, size), 0);
    assert_int_equal(tm_count_words(text), t->n_bricks);
    assert_true(tm_has_word(text, "b0"));
    assert_true(tm_has_word(text, "b99"));
    vl_inode_unref(d);

    /* rmdir: every copy goes. */
    assert_int_equal(dt_rmdir(t, t->root, "d"), 0);
    for (int i = 0; i < t->n_bricks; i++)
        assert_false(dt_exists(t, i, "d", NULL));
    free(text);
    free(expect);
    vl_free(want);
}


/* A listing through distribute on a new fd from cookie off on, budget
 * bytes a call: names (strdup'ed into names, up to max) and their
 * cookies; the count (without . and ..). */
static size_t
tm_list(struct dt *t, vl_inode_t *dir, off_t off, size_t budget,
        char **names, off_t *offs, size_t max)
{
    ssize_t n = dt_readdir_from(t, dir, off, budget, false, names, offs,
                                max);

    assert_true(n >= 0);
    assert_true((size_t)n <= max);
    return (size_t)n;
}


static void
test_readdir_high_subvolumes(void **state)
{
    struct dt *t = *state;
    enum { PER = 2 };
    size_t max = (size_t)t->n_bricks * PER + 8, n_want = 0, n, n2, k;
    char **want = calloc(max, sizeof(*want));
    char **got = calloc(max, sizeof(*got)), **rest = calloc(max,
                                                              sizeof(*rest));
    off_t *offs = calloc(max, sizeof(*offs)), *offs2 = calloc(max,
                                                              sizeof(*offs2));
    vl_inode_t *d = NULL, *f = NULL;
    char name[32];
    bool has_high = false;

    assert_true(want && got && rest && offs && offs2);
    assert_int_equal(dt_mkdir(t, t->root, "r", &d), 0);
    assert_int_equal(dt_mkdir(t, d, "sub", NULL), 0);
    want[n_want++] = strdup("sub");
    /* One file on subvolume 0, PER on each of 64 and up. */
    for (int i = 0; i < t->n_bricks; i++) {
        for (int j = 0; j < (i == 0 ? 1 : i >= 64 ? PER : 0); j++) {
            char prefix[16];

            snprintf(prefix, sizeof(prefix), "s%d-%d-", i, j);
            tm_name_on(t, i, prefix, name, sizeof(name));
            assert_int_equal(dt_create(t, d, name, &f, NULL), 0);
            vl_inode_unref(f);
            want[n_want++] = strdup(name);
        }
    }

    /* A small buffer: many readdirs, each resuming from a cookie. */
    n = tm_list(t, d, 0, 512, got, offs, max);
    assert_int_equal(n, n_want);
    for (size_t i = 0; i < n_want; i++) {
        int seen = 0;

        for (size_t j = 0; j < n; j++)
            seen += strcmp(want[i], got[j]) == 0;
        if (seen != 1)
            fail_msg("%s listed %d times", want[i], seen);
    }
    /* Cookies: index in bits 48..55, at or after the subvolume the name
     * is on (the last entry of a subvolume points at the next one). */
    for (size_t j = 0; j < n; j++) {
        unsigned idx = (unsigned)((uint64_t)offs[j] >> DIST_COOKIE_SHIFT);

        assert_true(offs[j] > 0);
        assert_true(idx < (unsigned)t->n_bricks);
        if (idx > 64)
            has_high = true;
    }
    assert_true(has_high);

    /* A new fd from a cookie of a subvolume above 64 (seekdir): exactly
     * what followed it. */
    for (k = 0; k < n; k++)
        if ((uint64_t)offs[k] >> DIST_COOKIE_SHIFT >= 70)
            break;
    assert_true(k + 1 < n);
    n2 = tm_list(t, d, offs[k], 512, rest, offs2, max);
    assert_int_equal(n2, n - k - 1);
    /* (The cookies themselves may differ where a subvolume ends: the
     * last entry of one points at the next one only when the same reply
     * reached it.) */
    for (size_t j = 0; j < n2; j++)
        assert_string_equal(rest[j], got[k + 1 + j]);

    for (size_t i = 0; i < max; i++) {
        free(want[i]);
        free(got[i]);
        free(rest[i]);
    }
    free(want);
    free(got);
    free(rest);
    free(offs);
    free(offs2);
    vl_inode_unref(d);
}


/* Subvolume s down: what a caller sees. */
static void
tm_check_down(struct dt *t, int s)
{
    char name[32], dname[32], fresh[32], text[8192], word[16];
    vl_inode_t *f = NULL;

    tm_name_on(t, s, "x", name, sizeof(name));
    tm_name_on(t, s, "dd", dname, sizeof(dname));
    tm_name_on(t, s, "new", fresh, sizeof(fresh));
    assert_int_equal(dt_create(t, t->root, name, &f, NULL), 0);
    vl_inode_unref(f);
    assert_int_equal(dt_mkdir(t, t->root, dname, NULL), 0);

    tm_set_up(t, s, false);
    /* Its names: may be there, cannot say. */
    assert_int_equal(dt_lookup(t, t->root, name, NULL, NULL), -ENOTCONN);
    /* Every copy of a directory must go: refused. */
    assert_int_equal(dt_rmdir(t, t->root, dname), -ENOTCONN);
    /* A new name hashed there: refused. */
    assert_int_equal(dt_mkdir(t, t->root, fresh, NULL), -ENOTCONN);
    assert_false(dt_exists(t, 0, fresh, NULL));
    /* A directory's pathinfo leaves it out. */
    assert_int_equal(tm_vxattr(t, t->root, DIST_VX_PATHINFO, text,
                               sizeof(text)), 0);
    snprintf(word, sizeof(word), "b%d", s);
    assert_false(tm_has_word(text, word));
    assert_int_equal(tm_count_words(text), t->n_bricks - 1);

    tm_set_up(t, s, true);
    assert_int_equal(dt_lookup(t, t->root, name, NULL, NULL), 0);
    assert_int_equal(dt_rmdir(t, t->root, dname), 0);
    assert_int_equal(dt_unlink(t, t->root, name), 0);
}


static void
test_down_high_like_low(void **state)
{
    struct dt *t = *state;

    tm_check_down(t, 1);
    tm_check_down(t, 80);
    tm_check_down(t, t->n_bricks - 1);
}


static void
test_decommissioned_high(void **state)
{
    struct dt *t = *state;
    int hi = t->n_bricks - 1;
    dist_mask_t skip = dist_mask_one(70);
    struct dist_layout *want;
    union vl_fop_args a = {0};
    struct vl_reply r;
    char opts[128], name[32], rel[64], path[PATH_MAX], line[64];
    char *text = malloc((size_t)t->n_bricks * 64);
    unsigned char val[64];
    vl_inode_t *d = NULL, *f = NULL;
    char *dump = NULL;
    size_t dump_len = 0;
    FILE *out;
    mode_t mode;

    assert_non_null(text);
    dist_mask_set(&skip, (unsigned)hi);
    want = tm_layout(t, skip);
    snprintf(opts, sizeof(opts),
             "%s option decommissioned-bricks b70,b%d\n", TM_OPTS, hi);
    dt_reopen(t, opts);
    /* Free space known: the data of a name hashed to a decommissioned
     * subvolume goes to the one with most of it. */
    a.statfs.loc.inode = t->root;
    assert_int_equal(dt_call(t, VL_FOP_STATFS, &a, &r), 0);
    vl_reply_clear(&r);

    /* A new directory: no range for them. */
    assert_int_equal(dt_mkdir(t, t->root, "dc", &d), 0);
    assert_int_equal(tm_vxattr(t, d, DIST_VX_LAYOUT, text,
                               (size_t)t->n_bricks * 64), 0);
    assert_non_null(strstr(text, "\nb70 00000000 00000000 1 2\n"));
    snprintf(line, sizeof(line), "\nb%d 00000000 00000000 1 2\n", hi);
    assert_non_null(strstr(text, line));
    snprintf(line, sizeof(line), "\nb71 %08x %08x 1 3\n", want->r[71].start,
             want->r[71].stop);
    assert_non_null(strstr(text, line));
    dt_path(t, 70, "dc", path, sizeof(path));
    assert_int_equal(getxattr(path, DIST_XATTR_LAYOUT, val, sizeof(val)),
                     DIST_LAYOUT_SIZE);
    assert_int_equal(val[19], DIST_FLAG_COMMITTED); /* no HAS_RANGE */

    /* Files in it: none there. */
    for (int i = 0; i < 4 * t->n_bricks; i++) {
        int s;

        snprintf(name, sizeof(name), "g%d", i);
        s = dist_layout_search(want, name);
        assert_true(s >= 0 && s != 70 && s != hi);
        assert_int_equal(dt_create(t, d, name, &f, NULL), 0);
        vl_inode_unref(f);
        snprintf(rel, sizeof(rel), "dc/%s", name);
        assert_true(dt_exists(t, s, rel, NULL));
        assert_false(dt_exists(t, 70, rel, NULL));
        assert_false(dt_exists(t, hi, rel, NULL));
    }
    vl_inode_unref(d);

    /* The root's layout predates it: a name hashed to 70 leaves a link
     * file there, the data goes elsewhere. */
    tm_name_on(t, 70, "old", name, sizeof(name));
    assert_int_equal(dt_create(t, t->root, name, &f, NULL), 0);
    vl_inode_unref(f);
    assert_true(dt_exists(t, 70, name, &mode));
    assert_int_equal(mode & 07777, S_ISVTX);
    {
        int data = -1;

        for (int b = 0; b < t->n_bricks; b++)
            if (dt_exists(t, b, name, &mode) && (mode & 07777) != S_ISVTX)
                data = b;
        assert_true(data >= 0 && data != 70 && data != hi);
    }

    /* The statedump lists every subvolume. */
    out = open_memstream(&dump, &dump_len);
    assert_non_null(out);
    xl_cluster_distribute.dump(t->dist, out);
    fclose(out);
    snprintf(line, sizeof(line), "subvolumes=%d\n", t->n_bricks);
    assert_non_null(strstr(dump, line));
    assert_non_null(strstr(dump, "subvol.70.decommissioned=1\n"));
    assert_non_null(strstr(dump, "subvol.71.decommissioned=0\n"));
    snprintf(line, sizeof(line), "subvol.%d.decommissioned=1\n", hi);
    assert_non_null(strstr(dump, line));
    snprintf(line, sizeof(line), "subvol.%d.up=1\n", hi);
    assert_non_null(strstr(dump, line));
    free(dump);
    free(text);
    vl_free(want);
}


/* A volfile of n debug/mock children under distribute. */
static char *
tm_mock_volfile(int n)
{
    size_t size = (size_t)n * 64 + 256, len = 0;
    char *text = malloc(size);

    assert_non_null(text);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, size - len,
                                "volume m%d\n type debug/mock\nend-volume\n",
                                i);
    len += (size_t)snprintf(text + len, size - len,
                            "volume dht\n type cluster/distribute\n"
                            " subvolumes");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, size - len, " m%d", i);
    snprintf(text + len, size - len, "\nend-volume\n");
    return text;
}


static void
test_257_children_refused(void **state)
{
    struct vl_test_graph *g;
    vl_err_t err = {{0}};
    char *text;

    (void)state;
    vl_global_init();
    vl_log_set_level(VL_LOG_ERROR);
    vl_registry_add(&xl_cluster_distribute);

    text = tm_mock_volfile(257);
    g = vl_test_graph_new(text, &err);
    free(text);
    assert_null(g);
    assert_non_null(strstr(err.msg, "distribute takes 1 to 256 subvolumes, "
                                    "not 257"));

    memset(&err, 0, sizeof(err));
    text = tm_mock_volfile(256);
    g = vl_test_graph_new(text, &err);
    free(text);
    if (g == NULL)
        fail_msg("256 children: %s", err.msg);
    assert_int_equal(dist_priv(vl_test_graph_xl(g, "dht"))->n, 256);
    vl_test_graph_free(g);
}


/* Each test twice: over 100 bricks, over 256. */
#define TM_TESTS(fn) \
    {.name = #fn "_100", .test_func = fn, .setup_func = tm_setup_100, \
     .teardown_func = dt_teardown}, \
    {.name = #fn "_256", .test_func = fn, .setup_func = tm_setup_256, \
     .teardown_func = dt_teardown}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        TM_TESTS(test_file_per_subvolume),
        TM_TESTS(test_mkdir_everywhere),
        TM_TESTS(test_readdir_high_subvolumes),
        TM_TESTS(test_down_high_like_low),
        TM_TESTS(test_decommissioned_high),
        cmocka_unit_test(test_257_children_refused),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests_name("dist-many", tests, NULL, NULL);
}
