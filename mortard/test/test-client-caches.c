/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of client-caches.c: performance.cache-size shared out among
 * the loaded caching translators of the client volfile (the limits add up
 * to the cap, none for a translator that is off), limits set with their
 * own keys taken as set and the rest shared, `volume set` refusals that
 * would pass the cap, a store over the cap scaled down, the GlusterFS
 * keys performance.cache-size and network.inode-lru-limit, and every
 * generated option valid for its translator.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mortard/mortard.h"
#include "xlators/builtin.h"

#define MiB (1024ULL * 1024)


static void
free_opts(struct md_volume *v)
{
    for (size_t i = 0; i < v->n_opts; i++) {
        free(v->opts[i].key);
        free(v->opts[i].value);
    }
    free(v->opts);
    v->opts = NULL;
    v->n_opts = 0;
}


/* Every option of every volume of text is valid for its class (the
 * client would refuse the volfile otherwise). */
static void
assert_volfile_valid(const char *text)
{
    vl_err_t err = {.msg = ""};
    vl_volfile_t *vf = vl_volfile_parse(text, strlen(text), "client", &err);

    assert_non_null(vf);
    for (size_t i = 0; i < vf->n_vols; i++) {
        const vl_xlator_class_t *cls = vl_registry_find(vf->vols[i].type);

        assert_non_null(cls);
        for (size_t j = 0; j < vf->vols[i].n_opts; j++) {
            int rc = vl_option_validate(cls->options,
                                        vf->vols[i].opts[j].key,
                                        vf->vols[i].opts[j].value, &err);

            if (rc != 0)
                fail_msg("%s: option %s %s: %s", vf->vols[i].name,
                         vf->vols[i].opts[j].key,
                         vf->vols[i].opts[j].value, err.msg);
        }
    }
    vl_volfile_free(vf);
}


/* The value of option key in volume vv-name of text; -1 if absent (no
 * such volume or option), and fails if it is given twice. */
static long long
opt_of(const char *text, const char *name, const char *key)
{
    char head[128], pat[128];
    const char *vol, *end, *at;
    long long v;

    snprintf(head, sizeof(head), "volume vv-%s\n", name);
    vol = strstr(text, head);
    if (vol == NULL)
        return -1;
    end = strstr(vol, "end-volume\n");
    assert_non_null(end);
    snprintf(pat, sizeof(pat), "    option %s ", key);
    at = strstr(vol, pat);
    if (at == NULL || at > end)
        return -1;
    v = strtoll(at + strlen(pat), NULL, 10);
    at = strstr(at + 1, pat);
    assert_true(at == NULL || at > end);
    return v;
}


/* The limits volgen gave the caches of v's client volfile, summed; each
 * is stored in out[] (-1: that translator is not loaded). */
static uint64_t
limits_of(struct md_volume *v, long long out[5])
{
    static const char *const names[5] = {"write-behind", "read-ahead",
                                         "readdir-ahead", "quick-read",
                                         "nl-cache"};
    static const char *const keys[5] = {"total-size", "cache-limit",
                                        "cache-limit", "cache-size",
                                        "limit"};
    char *text = md_volgen_client(v);
    uint64_t sum = 0;

    assert_non_null(text);
    assert_volfile_valid(text);
    for (int i = 0; i < 5; i++) {
        out[i] = opt_of(text, names[i], keys[i]);
        if (out[i] > 0)
            sum += (uint64_t)out[i];
    }
    free(text);
    return sum;
}


/* A stored key as volume set stores it (GlusterFS's name resolved). */
static void
set(struct md_volume *v, const char *key, const char *value)
{
    char canon[256];
    vl_err_t err = {.msg = ""};

    assert_int_equal(md_option_resolve(key, value, NULL, NULL, canon,
                                       sizeof(canon), &err), 0);
    assert_int_equal(md_client_caches_check(v, canon, value, &err), 0);
    assert_int_equal(md_vol_opt_set(v, canon, value), 0);
}


static void
test_default_share(void **state)
{
    struct md_brick b[2] = {
        {.host = "h1", .path = "/d/b0", .port = 24200, .id = "brick0"},
        {.host = "h1", .path = "/d/b1", .port = 24201, .id = "brick1"},
    };
    struct md_volume v = {.name = "vv", .bricks = b, .n_bricks = 2};
    long long l[5];
    uint64_t sum;

    (void)state;
    /* Defaults: write-behind, quick-read and nl-cache are loaded and
     * share 32 MiB 4:8:1; read-ahead and readdir-ahead are off. */
    sum = limits_of(&v, l);
    assert_true(sum <= 32 * MiB);
    assert_true(sum > 32 * MiB - 13);
    assert_int_equal(l[1], -1);
    assert_int_equal(l[2], -1);
    assert_int_equal(l[3], 2 * l[0]);
    assert_int_equal(l[0], 4 * l[4]);

    /* GlusterFS's key; read-ahead on takes its part of the same cap. */
    set(&v, "performance.cache-size", "64MB");
    set(&v, "performance.read-ahead", "on");
    sum = limits_of(&v, l);
    assert_true(sum <= 64 * MiB);
    assert_true(sum > 64 * MiB - 15);
    assert_int_equal(l[1], 2 * l[4]);
    assert_int_equal(l[3], 8 * l[4]);

    /* Off: no share, the others grow. */
    set(&v, "performance.quick-read", "off");
    sum = limits_of(&v, l);
    assert_int_equal(l[3], -1);
    assert_true(sum <= 64 * MiB);
    assert_int_equal(l[0], 2 * l[1]);
    free_opts(&v);
}


static void
test_explicit_limits(void **state)
{
    struct md_brick b[1] = {
        {.host = "h1", .path = "/d/b0", .port = 24200, .id = "brick0"},
    };
    struct md_volume v = {.name = "vv", .bricks = b, .n_bricks = 1};
    vl_err_t err = {.msg = ""};
    long long l[5];

    (void)state;
    /* With the cap set, a cache's own limit is taken as set; the rest
     * of the cap is shared by the others. */
    set(&v, "performance.cache-size", "32MB");
    set(&v, "performance.quick-read-cache-size", "20MB");
    assert_true(limits_of(&v, l) <= 32 * MiB);
    assert_int_equal(l[3], 20 * MiB);
    assert_int_equal(l[0], 4 * l[4]);
    assert_true((uint64_t)(l[0] + l[4]) > 12 * MiB - 5);

    /* Past the cap: refused, naming both keys' meaning. */
    assert_int_equal(md_client_caches_check(&v, "nl-cache.limit", "13MB",
                                            &err), -EINVAL);
    assert_non_null(strstr(err.msg, "performance.cache-size"));
    assert_int_equal(md_client_caches_check(&v, "diagnostics.cache-size",
                                            "16MB", &err), -EINVAL);
    /* Exactly the cap: accepted, the others get nothing. */
    set(&v, "performance.nl-cache-limit", "12MB");
    assert_int_equal(limits_of(&v, l), 32 * MiB);
    assert_int_equal(l[0], 0);
    /* A translator that is off does not count. */
    set(&v, "performance.nl-cache", "off");
    set(&v, "performance.cache-size", "24MB");
    assert_int_equal(limits_of(&v, l), 24 * MiB);
    assert_int_equal(l[4], -1);

    /* A store over the cap anyway (a hand edit, an older node): scaled
     * down alike, never more than the cap. */
    assert_int_equal(md_vol_opt_set(&v, "diagnostics.cache-size", "10MB"),
                     0);
    assert_true(limits_of(&v, l) <= 10 * MiB);
    assert_int_equal(l[3], 10 * MiB);
    free_opts(&v);
}


/* performance.cache-size not set: a cache's own limit comes on top of
 * the others' default shares (as before the cap existed: an older
 * store's quick-read cache-size of 256 MiB starves nothing), and nothing
 * is refused; setting the cap then binds them all. */
static void
test_unset_cap_own_limits(void **state)
{
    struct md_brick b[1] = {
        {.host = "h1", .path = "/d/b0", .port = 24200, .id = "brick0"},
    };
    struct md_volume v = {.name = "vv", .bricks = b, .n_bricks = 1};
    vl_err_t err = {.msg = ""};
    long long l[5], wb, nlc;

    (void)state;
    limits_of(&v, l);
    wb = l[0];
    nlc = l[4];
    assert_int_equal(md_vol_opt_set(&v, "quick-read.cache-size", "256MB"),
                     0);
    assert_int_equal(md_client_caches_check(&v, NULL, NULL, &err), 0);
    assert_true(limits_of(&v, l) <= 256 * MiB + 32 * MiB);
    assert_int_equal(l[3], 256 * MiB);
    assert_int_equal(l[0], wb);
    assert_int_equal(l[4], nlc);
    /* Set, the cap binds: the same own limit is refused. */
    assert_int_equal(md_client_caches_check(&v, "diagnostics.cache-size",
                                            "64MB", &err), -EINVAL);
    free_opts(&v);
}


static void
test_inode_lru_limit(void **state)
{
    struct md_brick b[2] = {
        {.host = "h1", .path = "/d/b0", .port = 24200, .id = "brick0"},
        {.host = "h1", .path = "/d/b1", .port = 24201, .id = "brick1"},
    };
    struct md_volume v = {.name = "vv", .bricks = b, .n_bricks = 2};
    struct md_state st = {.bind_addr = (char *)"127.0.0.1"};
    char *text;

    (void)state;
    text = md_volgen_client(&v);
    assert_null(strstr(text, "inode-lru-limit"));
    free(text);
    set(&v, "network.inode-lru-limit", "5000");
    assert_non_null(md_vol_opt_get(&v, "diagnostics.inode-lru-limit"));
    /* Every protocol/client, and the brick's protocol/server. */
    text = md_volgen_client(&v);
    assert_int_equal(opt_of(text, "brick0", "inode-lru-limit"), 5000);
    assert_int_equal(opt_of(text, "brick1", "inode-lru-limit"), 5000);
    assert_volfile_valid(text);
    free(text);
    text = md_volgen_brick(&st, &v, &b[0]);
    assert_non_null(text);
    assert_int_equal(opt_of(text, "server", "inode-lru-limit"), 5000);
    assert_volfile_valid(text);
    free(text);
    free_opts(&v);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_share),
        cmocka_unit_test(test_explicit_limits),
        cmocka_unit_test(test_unset_cap_own_limits),
        cmocka_unit_test(test_inode_lru_limit),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    vl_global_init();
    vl_xlators_register_builtin();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
