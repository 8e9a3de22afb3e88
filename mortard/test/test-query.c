/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-query: the read-only commands in GlusterFS's shapes: volume status
 * of one brick (and a brick not in the volume), an offline brick's pid
 * (N/A in text, -1 in XML and JSON), volume get under the name asked for
 * and with GlusterFS's names listed by `all`, and system:: getspec.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mortard/mortard.h"
#include "xlators/builtin.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)

static char tmpdir[] = "/tmp/test-query.XXXXXX";


/* A fresh store in tmpdir/sub. */
static struct md_state *
new_state(const char *sub)
{
    struct md_state *st = calloc(1, sizeof(*st));
    vl_err_t err = {.msg = ""};

    assert_non_null(st);
    pthread_mutex_init(&st->lock, NULL);
    assert_true(asprintf(&st->state_dir, "%s/%s", tmpdir, sub) > 0);
    st->run_dir = strdup(tmpdir);
    st->log_dir = strdup(tmpdir);
    st->bind_addr = strdup("127.0.0.1");
    st->brick_base_port = 24200;
    snprintf(st->node_id, sizeof(st->node_id), "%s",
             "6d0c3c5e-7a43-4c1e-9d7e-3f2f1b7c0a01");
    assert_int_equal(md_store_load(st, &err), 0);
    return st;
}


static void
free_state(struct md_state *st)
{
    while (st->vols != NULL) {
        struct md_volume *v = st->vols;

        md_volume_unlink(st, v);
        md_volume_free(v);
    }
    free(st->state_dir);
    free(st->run_dir);
    free(st->log_dir);
    free(st->bind_addr);
    free(st);
}


/* A started two-brick distribute volume "cq" on this node, its bricks
 * not running (no pid files in the run dir). */
static struct md_volume *
add_vol(struct md_state *st)
{
    struct md_volume *v = calloc(1, sizeof(*v));
    vl_err_t err = {.msg = ""};
    vl_gfid_t g;

    assert_non_null(v);
    snprintf(v->name, sizeof(v->name), "cq");
    vl_gfid_generate(&g);
    vl_gfid_to_str(&g, v->id);
    snprintf(v->transport, sizeof(v->transport), "tcp");
    v->replica_count = 1;
    v->status = MD_VOL_STARTED;
    v->n_bricks = 2;
    v->bricks = calloc(2, sizeof(*v->bricks));
    assert_non_null(v->bricks);
    for (size_t i = 0; i < 2; i++) {
        v->bricks[i].host = strdup("127.0.0.1");
        assert_true(asprintf(&v->bricks[i].path, "/srv/cq-%zu", i) > 0);
        v->bricks[i].port = (uint16_t)(24300 + i);
        snprintf(v->bricks[i].id, sizeof(v->bricks[i].id), "brick%zu", i);
    }
    v->next_brick = 2;
    assert_int_equal(md_volume_save(st, v, &err), 0);
    md_volume_link(st, v);
    return v;
}


/* Runs argv through the dispatcher; the rendering in format (0 text, 1
 * XML, 2 JSON) is returned (malloc'd), the result's exit code in *ret.
 * Not inlined: GCC's -Wdangling-pointer then mistakes the returned
 * buffer for the address of the local it was stored through. */
static __attribute__((noinline)) char *
run(struct md_state *st, int argc, char **argv, int format, int *ret,
    char *errstr, size_t len)
{
    struct md_result r;
    char *out = NULL;

    md_result_init(&r);
    md_cmd_run(st, argc, argv, &r);
    *ret = r.ret;
    if (errstr != NULL)
        snprintf(errstr, len, "%s", r.errstr);
    assert_int_equal(md_render(&r, format, &out), 0);
    md_result_clear(&r);
    return out;
}


static void
assert_has(const char *text, const char *what)
{
    if (strstr(text, what) == NULL)
        fail_msg("'%s' not in:\n%s", what, text);
}


static void
assert_lacks(const char *text, const char *what)
{
    if (strstr(text, what) != NULL)
        fail_msg("'%s' in:\n%s", what, text);
}


/* `volume status VOL BRICK [detail]` shows that brick alone; a brick
 * not in the volume fails as GlusterFS's glusterd says it; offline
 * bricks show N/A (text) and pid -1 (XML, JSON). */
static void
test_status_brick(void **state)
{
    struct md_state *st = new_state("s1");
    char *all[] = {"volume", "status", "cq", NULL};
    char *one[] = {"volume", "status", "cq", "127.0.0.1:/srv/cq-1", NULL};
    char *det[] = {"volume", "status", "cq", "127.0.0.1:/srv/cq-1",
                   "detail", NULL};
    char *bad[] = {"volume", "status", "cq", "127.0.0.1:/srv/nope", NULL};
    char *allb[] = {"volume", "status", "all", "127.0.0.1:/srv/cq-1",
                    NULL};
    char errstr[1024];
    char *out;
    int ret;

    (void)state;
    add_vol(st);
    out = run(st, ARGC(all), all, 0, &ret, NULL, 0);
    assert_int_equal(ret, 0);
    assert_has(out, "Brick 127.0.0.1:/srv/cq-0");
    assert_has(out, "Brick 127.0.0.1:/srv/cq-1");
    assert_has(out, "N/A       N      N/A\n");
    assert_lacks(out, " -1\n");
    assert_has(out, "Task Status of Volume cq");
    free(out);

    out = run(st, ARGC(one), one, 0, &ret, NULL, 0);
    assert_int_equal(ret, 0);
    assert_lacks(out, "cq-0");
    assert_has(out, "Brick 127.0.0.1:/srv/cq-1");
    assert_lacks(out, "Task Status");
    free(out);
    out = run(st, ARGC(one), one, 1, &ret, NULL, 0);
    assert_has(out, "<nodeCount>1</nodeCount>");
    assert_has(out, "<path>/srv/cq-1</path>");
    assert_lacks(out, "/srv/cq-0");
    assert_has(out, "<port>N/A</port>");
    assert_has(out, "<pid>-1</pid>");
    free(out);
    out = run(st, ARGC(one), one, 2, &ret, NULL, 0);
    assert_has(out, "\"pid\":\"-1\"");
    free(out);
    out = run(st, ARGC(det), det, 0, &ret, NULL, 0);
    assert_int_equal(ret, 0);
    assert_has(out, "Brick                : 127.0.0.1:/srv/cq-1\n");
    assert_has(out, "TCP Port             : N/A\n");
    assert_has(out, "Pid                  : N/A\n");
    assert_lacks(out, "cq-0");
    free(out);

    out = run(st, ARGC(bad), bad, 0, &ret, errstr, sizeof(errstr));
    assert_int_equal(ret, MD_EXIT_FAIL);
    assert_string_equal(errstr, "No brick 127.0.0.1:/srv/nope in volume cq");
    free(out);
    out = run(st, ARGC(allb), allb, 0, &ret, errstr, sizeof(errstr));
    assert_int_equal(ret, MD_EXIT_USAGE);
    assert_has(errstr, "Usage: volume status");
    free(out);
    free_state(st);
}


/* The value of key in `volume get` text: the row's second column. */
static char *
get_value(const char *text, const char *key)
{
    size_t n = strlen(key);

    for (const char *p = text; p != NULL && *p != '\0';
         p = strchr(p, '\n'), p = p != NULL ? p + 1 : NULL)
        if (strncmp(p, key, n) == 0 && p[n] == ' ') {
            const char *v = p + n + strspn(p + n, " ");

            return strndup(v, strcspn(v, "\n"));
        }
    return NULL;
}


/* True if the line after the one starting with row starts with next. */
static bool
row_follows(const char *text, const char *row, const char *next)
{
    const char *at = strstr(text, row);
    const char *eol = at != NULL ? strchr(at + 1, '\n') : NULL;

    return eol != NULL && strncmp(eol + 1, next, strlen(next)) == 0;
}


static size_t
count_of(const char *text, const char *what)
{
    size_t n = 0;

    for (const char *at = strstr(text, what); at != NULL;
         at = strstr(at + 1, what))
        n++;
    return n;
}


/* Every line of text is a name, spaces, and one word. */
static void
assert_two_columns(const char *text)
{
    char *copy = strdup(text), *save = NULL;

    assert_non_null(copy);
    for (char *line = strtok_r(copy, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');

        if (sp == NULL)
            fail_msg("one column: '%s'", line);
        sp += strspn(sp, " ");
        if (*sp == '\0' || strchr(sp, ' ') != NULL)
            fail_msg("not two columns: '%s'", line);
    }
    free(copy);
}


static void
test_get_aliases(void **state)
{
    struct md_state *st = new_state("s2");
    char *set[] = {"volume", "set", "cq", "performance.io-thread-count",
                   "7", NULL};
    char *alias[] = {"volume", "get", "cq", "performance.io-thread-count",
                     NULL};
    char *wb[] = {"volume", "get", "cq", "performance.write-behind", NULL};
    char *canon[] = {"volume", "get", "cq", "io-threads.thread-count",
                     NULL};
    char *all[] = {"volume", "get", "cq", "all", NULL};
    char *out, *lst, *v1, *v2, *v3;
    int ret;

    (void)state;
    add_vol(st);
    st->vols->status = MD_VOL_CREATED; /* no brick to restart */
    free(run(st, ARGC(set), set, 0, &ret, NULL, 0));
    assert_int_equal(ret, 0);

    out = run(st, ARGC(alias), alias, 0, &ret, NULL, 0);
    assert_int_equal(ret, 0);
    assert_has(out, "\nperformance.io-thread-count              7\n");
    assert_lacks(out, "io-threads.thread-count");
    free(out);
    out = run(st, ARGC(alias), alias, 1, &ret, NULL, 0);
    assert_has(out, "<Option>performance.io-thread-count</Option>");
    assert_has(out, "<AliasOf>io-threads.thread-count</AliasOf>");
    free(out);
    out = run(st, ARGC(wb), wb, 0, &ret, NULL, 0);
    assert_has(out, "\nperformance.write-behind ");
    assert_lacks(out, "diagnostics.write-behind");
    free(out);
    out = run(st, ARGC(canon), canon, 1, &ret, NULL, 0);
    assert_has(out, "<Option>io-threads.thread-count</Option>");
    assert_lacks(out, "AliasOf");
    free(out);

    /* all: both names, the same value, the alias right after its key. */
    lst = run(st, ARGC(all), all, 0, &ret, NULL, 0);
    assert_int_equal(ret, 0);
    v1 = get_value(lst, "io-threads.thread-count");
    v2 = get_value(lst, "performance.io-thread-count");
    v3 = get_value(lst, "diagnostics.write-behind");
    assert_non_null(v1);
    assert_non_null(v2);
    assert_string_equal(v1, "7");
    assert_string_equal(v2, "7");
    assert_non_null(v3);
    assert_true(row_follows(lst, "\nio-threads.thread-count ",
                            "performance.io-thread-count "));
    /* A name two options share is one row (transport.socket.ssl-enabled
     * is both server's and client's), as `volume get` of it shows. */
    assert_int_equal(count_of(lst, "\ntransport.socket.ssl-enabled "), 1);
    /* Every row keeps two columns. */
    assert_two_columns(lst);
    free(v1);
    free(v2);
    free(v3);
    free(lst);
    out = run(st, ARGC(all), all, 2, &ret, NULL, 0);
    assert_has(out, "{\"Option\":\"performance.io-thread-count\","
                    "\"Value\":\"7\",\"AliasOf\":\"io-threads.thread-count\"}");
    free(out);
    free_state(st);
}


static void
test_getspec(void **state)
{
    struct md_state *st = new_state("s3");
    char *colon[] = {"system::", "getspec", "cq", NULL};
    char *plain[] = {"system", "getspec", "cq", NULL};
    char *none[] = {"system::", "getspec", "nope", NULL};
    char *usage[] = {"system::", "getspec", NULL};
    struct md_volume *v;
    char errstr[1024];
    char *out, *spec;
    int ret;

    (void)state;
    v = add_vol(st);
    spec = md_volgen_client(v);
    assert_non_null(spec);
    out = run(st, ARGC(colon), colon, 0, &ret, NULL, 0);
    assert_int_equal(ret, 0);
    assert_string_equal(out, spec);
    free(out);
    out = run(st, ARGC(plain), plain, 0, &ret, NULL, 0);
    assert_int_equal(ret, 0);
    assert_string_equal(out, spec);
    free(out);
    out = run(st, ARGC(plain), plain, 1, &ret, NULL, 0);
    assert_has(out, "<volname>cq</volname>");
    free(out);
    free(spec);
    out = run(st, ARGC(none), none, 0, &ret, errstr, sizeof(errstr));
    assert_int_equal(ret, MD_EXIT_FAIL);
    assert_string_equal(errstr, "getspec: failed: Volume nope does not "
                                "exist");
    free(out);
    out = run(st, ARGC(usage), usage, 0, &ret, errstr, sizeof(errstr));
    assert_int_equal(ret, MD_EXIT_USAGE);
    free(out);
    free_state(st);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_brick),
        cmocka_unit_test(test_get_aliases),
        cmocka_unit_test(test_getspec),
    };
    char cmd[128];
    int rc;

    cmocka_set_message_output(CM_OUTPUT_TAP);
    vl_global_init();
    vl_xlators_register_builtin();
    if (mkdtemp(tmpdir) == NULL)
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        rc = rc != 0 ? rc : 1;
    return rc;
}
