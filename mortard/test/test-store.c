/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-store: the store's atomic writes, key=value parsing with file:line
 * errors, and a volume saved, reloaded and rejected when hand-corrupted.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mortard/mortard.h"
#include "xlators/builtin.h"

static char tmpdir[] = "/tmp/test-store.XXXXXX";


static int
kv_count(const char *key, const char *value, int line, void *arg,
         vl_err_t *err)
{
    int *n = arg;

    (void)line;
    if (strcmp(key, "bad") == 0) {
        vl_err_set(err, "bad key with value %s", value);
        return -EINVAL;
    }
    (*n)++;
    return 0;
}


static void
test_kv_parse(void **state)
{
    vl_err_t err = {.msg = ""};
    int n = 0;

    (void)state;
    assert_int_equal(md_kv_parse("# c\na=1\n\nb=x=y\n", "f", kv_count, &n,
                                 &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(md_kv_parse("a=1\nnoequals\n", "f", kv_count, &n,
                                 &err), -EINVAL);
    assert_string_equal(err.msg, "f:2: expected key=value");
    assert_int_equal(md_kv_parse("a=1\nb=2\nbad=3\n", "g", kv_count, &n,
                                 &err), -EINVAL);
    assert_string_equal(err.msg, "g:3: bad key with value 3");
    assert_int_equal(md_kv_parse("=3\n", "h", kv_count, &n, &err), -EINVAL);
    assert_string_equal(err.msg, "h:1: expected key=value");
}


static void
test_write_atomic(void **state)
{
    vl_err_t err = {.msg = ""};
    char path[256], *text = NULL;
    size_t len;

    (void)state;
    assert_int_equal(md_write_atomic(tmpdir, "f", "one\n", 4, &err), 0);
    assert_int_equal(md_write_atomic(tmpdir, "f", "two!\n", 5, &err), 0);
    snprintf(path, sizeof(path), "%s/f", tmpdir);
    assert_int_equal(md_read_file(path, &text, &len), 0);
    assert_int_equal(len, 5);
    assert_string_equal(text, "two!\n");
    free(text);
    /* No temp file left behind. */
    snprintf(path, sizeof(path), "%s/.f.tmp", tmpdir);
    assert_int_not_equal(access(path, F_OK), 0);
    /* A missing directory fails with a message. */
    assert_int_equal(md_write_atomic("/nonexistent-dir-x", "f", "a", 1,
                                     &err), -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent-dir-x/.f.tmp"));
}


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


static struct md_volume *
new_vol(const char *name)
{
    struct md_volume *v = calloc(1, sizeof(*v));

    assert_non_null(v);
    snprintf(v->name, sizeof(v->name), "%s", name);
    snprintf(v->id, sizeof(v->id), "6a0e0b7e-3c0c-4f7e-9a55-2b1c0d9e8f10");
    snprintf(v->transport, sizeof(v->transport), "tcp");
    v->bricks = calloc(1, sizeof(*v->bricks));
    v->n_bricks = 1;
    v->bricks[0].host = strdup("127.0.0.1");
    v->bricks[0].path = strdup("/srv/b0");
    v->bricks[0].port = 24201;
    snprintf(v->bricks[0].id, sizeof(v->bricks[0].id), "brick0");
    return v;
}


static void
test_volume_roundtrip(void **state)
{
    struct md_state *st = new_state("s1"), *st2;
    struct md_volume *v = new_vol("v1"), *l;
    vl_err_t err = {.msg = ""};
    char node[VL_GFID_STR_LEN];

    (void)state;
    assert_int_equal(md_vol_opt_set(v, "io-threads.thread-count", "4"), 0);
    assert_int_equal(md_volume_save(st, v, &err), 0);
    assert_int_equal(v->version, 1);
    v->status = MD_VOL_STARTED;
    assert_int_equal(md_volume_save(st, v, &err), 0);
    md_volume_link(st, v);
    snprintf(node, sizeof(node), "%s", st->node_id);

    st2 = new_state("s1");
    assert_string_equal(st2->node_id, node);
    l = md_volume_find(st2, "v1");
    assert_non_null(l);
    assert_int_equal(l->version, 2);
    assert_int_equal(l->status, MD_VOL_STARTED);
    assert_int_equal(l->bricks[0].port, 24201);
    assert_string_equal(l->bricks[0].path, "/srv/b0");
    assert_string_equal(md_vol_opt_get(l, "io-threads.thread-count"), "4");
    assert_true(st2->store_version >= 3);

    /* Removal leaves nothing to load. */
    assert_int_equal(md_volume_remove(st2, l, &err), 0);
    free_state(st2);
    st2 = new_state("s1");
    assert_null(md_volume_find(st2, "v1"));
    free_state(st2);
    free_state(st);
}


static void
corrupt_and_load(const char *file, const char *text, const char *want)
{
    struct md_state *st = new_state("s2");
    struct md_state *st2 = calloc(1, sizeof(*st2));
    struct md_volume *v = new_vol("v2");
    vl_err_t err = {.msg = ""};
    char dir[512];

    assert_int_equal(md_volume_save(st, v, &err), 0);
    md_volume_free(v);
    snprintf(dir, sizeof(dir), "%s/s2/vols/v2", tmpdir);
    assert_int_equal(md_write_atomic(dir, file, text, strlen(text), &err),
                     0);
    st2->state_dir = strdup(st->state_dir);
    assert_int_not_equal(md_store_load(st2, &err), 0);
    assert_non_null(strstr(err.msg, want));
    free_state(st2);
    md_volume_remove(st, &(struct md_volume){.name = "v2"}, &err);
    free_state(st);
}


static void
test_corrupt(void **state)
{
    (void)state;
    corrupt_and_load("info", "id=6a0e0b7e-3c0c-4f7e-9a55-2b1c0d9e8f10\n"
                     "garbage line\n", "vols/v2/info:2: expected key=value");
    corrupt_and_load("info", "id=nope\n", "vols/v2/info:1: bad value 'nope'");
    corrupt_and_load("info", "version=1\nbrick.0.host=x\n",
                     "vols/v2/info:2: bad brick key");
    corrupt_and_load("options", "io-threads.thread-count=0\n",
                     "vols/v2/options:1:");
    corrupt_and_load("options", "no.such.key=1\n",
                     "vols/v2/options:1: option no.such.key does not exist");
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kv_parse),
        cmocka_unit_test(test_write_atomic),
        cmocka_unit_test(test_volume_roundtrip),
        cmocka_unit_test(test_corrupt),
    };
    int rc;

    cmocka_set_message_output(CM_OUTPUT_TAP);
    vl_global_init();
    vl_xlators_register_builtin();
    if (mkdtemp(tmpdir) == NULL)
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            rc = rc != 0 ? rc : 1;
    }
    return rc;
}
