/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-replica: replicated volumes in mortard (replica.c and what uses
 * it): the create/add-brick words, the same-server check per set, set
 * names and the store's check of them, volume types, the client volfile
 * of 1 x 3 and 2 x 3 volumes (replicate options, a set being removed),
 * the store round trip of replica-count (an older info without it is
 * plain distribute) and cluster.quorum-type as a settable key.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mortard/mortard.h"
#include "xlators/builtin.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)

static char tmpdir[] = "/tmp/test-replica.XXXXXX";


static void
test_args(void **state)
{
    char *plain[] = {"volume", "create", "v", "h:/a", "h:/b", "force", NULL};
    char *rep[] = {"volume", "create", "v", "replica", "3", "transport",
                   "tcp", "a:/1", "b:/2", "c:/3", NULL};
    char *one[] = {"volume", "create", "v", "replica", "1", "a:/1", NULL};
    char *big[] = {"volume", "create", "v", "replica", "17", "a:/1", NULL};
    char *word[] = {"volume", "create", "v", "replica", "x", "a:/1", NULL};
    char *arb[] = {"volume", "create", "v", "replica", "3", "arbiter", "1",
                   "a:/1", "b:/2", "c:/3", NULL};
    char *arb2[] = {"volume", "create", "v", "replica", "2", "arbiter",
                    "1", "a:/1", "b:/2", NULL};
    char *arbn[] = {"volume", "create", "v", "replica", "3", "arbiter",
                    "2", "a:/1", "b:/2", "c:/3", NULL};
    char *thin[] = {"volume", "create", "v", "replica", "2",
                    "thin-arbiter", "1", "a:/1", "b:/2", "c:/3", NULL};
    char *junk[] = {"volume", "create", "v", "stripy", "a:/1", NULL};
    char *none[] = {"volume", "create", "v", "replica", "2", "force", NULL};
    char *add[] = {"volume", "add-brick", "v", "replica", "2", "a:/1",
                   "b:/2", NULL};
    char *addt[] = {"volume", "add-brick", "v", "transport", "tcp", "a:/1",
                    NULL};
    struct md_brick_args ba;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(md_brick_args_parse(ARGC(plain), plain, 3, true, &ba,
                                         &err), 0);
    assert_int_equal(ba.replica, 0);
    assert_int_equal(ba.first, 3);
    assert_int_equal(ba.n_bricks, 2);
    assert_true(ba.is_force);
    assert_int_equal(md_brick_args_parse(ARGC(rep), rep, 3, true, &ba,
                                         &err), 0);
    assert_int_equal(ba.replica, 3);
    assert_int_equal(ba.first, 7);
    assert_int_equal(ba.n_bricks, 3);
    assert_false(ba.is_force);
    assert_int_equal(md_brick_args_parse(ARGC(one), one, 3, true, &ba,
                                         &err), -EINVAL);
    assert_true(ba.is_usage);
    assert_string_equal(err.msg, "replica count should be greater than 1");
    assert_int_equal(md_brick_args_parse(ARGC(big), big, 3, true, &ba,
                                         &err), -EINVAL);
    assert_non_null(strstr(err.msg, "more than 16"));
    assert_int_equal(md_brick_args_parse(ARGC(word), word, 3, true, &ba,
                                         &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'x'"));
    assert_int_equal(md_brick_args_parse(ARGC(arb), arb, 3, true, &ba,
                                         &err), 0);
    assert_int_equal(ba.replica, 3);
    assert_int_equal(ba.arbiter, 1);
    assert_int_equal(ba.first, 7);
    assert_int_equal(md_brick_args_parse(ARGC(arb2), arb2, 3, true, &ba,
                                         &err), -EINVAL);
    assert_false(ba.is_usage);
    assert_non_null(strstr(err.msg, "replica count must be 3 and arbiter "
                                    "count must be 1"));
    assert_int_equal(md_brick_args_parse(ARGC(arbn), arbn, 3, true, &ba,
                                         &err), -EINVAL);
    assert_non_null(strstr(err.msg, "replica count must be 3 and arbiter "
                                    "count must be 1"));
    assert_int_equal(md_brick_args_parse(ARGC(thin), thin, 3, true, &ba,
                                         &err), -ENOTSUP);
    assert_non_null(strstr(err.msg, "thin-arbiter"));
    /* Only the usage applies: the message is empty. */
    assert_int_equal(md_brick_args_parse(ARGC(junk), junk, 3, true, &ba,
                                         &err), -EINVAL);
    assert_true(ba.is_usage);
    assert_string_equal(err.msg, "");
    assert_int_equal(md_brick_args_parse(ARGC(none), none, 3, true, &ba,
                                         &err), -EINVAL);
    assert_string_equal(err.msg, "");
    assert_int_equal(md_brick_args_parse(ARGC(add), add, 3, false, &ba,
                                         &err), 0);
    assert_int_equal(ba.replica, 2);
    assert_int_equal(ba.first, 5);
    /* add-brick takes no transport. */
    assert_int_equal(md_brick_args_parse(ARGC(addt), addt, 3, false, &ba,
                                         &err), -EINVAL);
}


static void
test_same_server(void **state)
{
    char *hosts[] = {"h1", "h2", "h3", "h1", "h2", "h3"};
    bool local[6] = {false};
    vl_err_t err = {.msg = ""};

    (void)state;
    /* 2 x 3, each set over three servers. */
    assert_int_equal(md_replica_same_server(hosts, local, 6, 3, &err), 0);
    /* 3 x 2: set 1 is h3 and h1, set 2 h2 and h3. */
    assert_int_equal(md_replica_same_server(hosts, local, 6, 2, &err), 0);
    /* Plain distribute: never. */
    assert_int_equal(md_replica_same_server(hosts, local, 6, 1, &err), 0);
    hosts[4] = "h1";
    assert_int_equal(md_replica_same_server(hosts, local, 6, 3, &err),
                     -EPERM);
    assert_non_null(strstr(err.msg, "Multiple bricks of a replicate volume "
                                    "are present on the same server. This "
                                    "setup is not optimal."));
    assert_non_null(strstr(err.msg, "Use 'force' at the end of the command "
                                    "if you want to override this "
                                    "behavior. "));
    /* Two names of this node count as one server. */
    hosts[4] = "h2";
    hosts[0] = "localhost";
    hosts[1] = "127.0.0.1";
    local[0] = local[1] = true;
    assert_int_equal(md_replica_same_server(hosts, local, 6, 3, &err),
                     -EPERM);
}


/* A volume named name of n bricks with ids brick<ids[i]>. */
static struct md_volume *
new_vol(const char *name, size_t n, unsigned rep, const unsigned *ids)
{
    struct md_volume *v = calloc(1, sizeof(*v));
    vl_gfid_t g;

    assert_non_null(v);
    snprintf(v->name, sizeof(v->name), "%s", name);
    vl_gfid_generate(&g);
    vl_gfid_to_str(&g, v->id);
    snprintf(v->transport, sizeof(v->transport), "tcp");
    v->replica_count = rep;
    v->bricks = calloc(n, sizeof(*v->bricks));
    assert_non_null(v->bricks);
    v->n_bricks = n;
    for (size_t i = 0; i < n; i++) {
        assert_true(asprintf(&v->bricks[i].host, "h%zu", i % 3) > 0);
        assert_true(asprintf(&v->bricks[i].path, "/srv/%s-%zu", name, i) >
                    0);
        v->bricks[i].port = (uint16_t)(24300 + i);
        snprintf(v->bricks[i].id, sizeof(v->bricks[i].id), "brick%u",
                 ids[i]);
        if (ids[i] >= v->next_brick)
            v->next_brick = ids[i] + 1;
    }
    return v;
}


static void
test_sets(void **state)
{
    /* Set 0 was removed: the sets left are m = 1 and 2. */
    const unsigned ids[] = {3, 4, 5, 6, 7, 8};
    const unsigned bad[] = {3, 4, 5, 7, 6, 8};
    struct md_volume *v = new_vol("rv", 6, 3, ids);
    char name[128];
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(md_vol_replica(v), 3);
    assert_int_equal(md_vol_n_sets(v), 2);
    assert_int_equal(md_vol_set_num(v, 0), 1);
    md_vol_set_name(v, 1, name, sizeof(name));
    assert_string_equal(name, "rv-replicate-2");
    assert_int_equal(md_vol_sets_check(v, &err), 0);
    assert_string_equal(md_vol_type_str(v), "Distributed-Replicate");
    assert_int_equal(md_vol_type_num(v), 7);
    v->n_bricks = 3;
    assert_string_equal(md_vol_type_str(v), "Replicate");
    assert_int_equal(md_vol_type_num(v), 2);
    v->n_bricks = 5;
    assert_int_equal(md_vol_sets_check(v, &err), -EINVAL);
    v->n_bricks = 6;
    v->replica_count = 1;
    assert_string_equal(md_vol_type_str(v), "Distribute");
    assert_int_equal(md_vol_type_num(v), 0);
    assert_int_equal(md_vol_sets_check(v, &err), 0);
    md_volume_free(v);

    /* Set members out of order, or a set not starting at a multiple. */
    v = new_vol("rv", 6, 3, bad);
    assert_int_equal(md_vol_sets_check(v, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "brick.3"));
    md_volume_free(v);
    v = new_vol("rv", 3, 3, ids + 1);
    assert_int_equal(md_vol_sets_check(v, &err), -EINVAL);
    md_volume_free(v);
}


static void
test_volgen(void **state)
{
    const unsigned ids[] = {0, 1, 2, 3, 4, 5};
    struct md_volume *v = new_vol("rv", 6, 3, ids);
    char *text;

    (void)state;
    assert_int_equal(md_vol_opt_set(v, "replicate.quorum-type", "fixed"), 0);
    assert_int_equal(md_vol_opt_set(v, "replicate.quorum-count", "3"), 0);
    assert_int_equal(md_vol_opt_set(v, "diagnostics.write-behind", "off"),
                     0);
    assert_int_equal(md_vol_opt_set(v, "diagnostics.quick-read", "off"), 0);
    assert_int_equal(md_vol_opt_set(v, "diagnostics.nl-cache", "off"), 0);
    /* 1 x 3: replicate on top over <vol>-<brickid> clients. */
    v->n_bricks = 3;
    text = md_volgen_client(v);
    assert_non_null(text);
    assert_non_null(strstr(text, "volume rv-brick0\n    type "
                                 "protocol/client\n"));
    assert_non_null(strstr(text, "volume rv-replicate-0\n    type "
                                 "cluster/replicate\n    option quorum-type "
                                 "fixed\n    option quorum-count 3\n"
                                 "    subvolumes rv-brick0 rv-brick1 "
                                 "rv-brick2\n"));
    assert_null(strstr(text, "cluster/distribute"));
    assert_null(strstr(text, "client-0"));
    free(text);

    /* 2 x 3: distribute over the two replicates. */
    v->n_bricks = 6;
    text = md_volgen_client(v);
    assert_non_null(strstr(text, "volume rv-replicate-1\n    type "
                                 "cluster/replicate\n    option quorum-type "
                                 "fixed\n    option quorum-count 3\n"
                                 "    subvolumes rv-brick3 rv-brick4 "
                                 "rv-brick5\n"));
    assert_non_null(strstr(text, "volume rv-dht\n    type "
                                 "cluster/distribute\n    subvolumes "
                                 "rv-replicate-0 rv-replicate-1\n"));
    free(text);

    /* remove-brick start of set 1: that replicate is decommissioned. */
    for (size_t i = 3; i < 6; i++)
        v->bricks[i].is_decommissioned = true;
    text = md_volgen_client(v);
    assert_non_null(strstr(text, "    option decommissioned-bricks "
                                 "rv-replicate-1\n"));
    free(text);
    md_volume_free(v);
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


/* Replaces the first from in the info file of volume name by to. */
static void
edit_info(const char *sub, const char *name, const char *from,
          const char *to)
{
    char path[512], *text = NULL, *p, *out;
    vl_err_t err = {.msg = ""};

    snprintf(path, sizeof(path), "%s/%s/vols/%s/info", tmpdir, sub, name);
    assert_int_equal(md_read_file(path, &text, NULL), 0);
    p = strstr(text, from);
    assert_non_null(p);
    *p = '\0';
    assert_true(asprintf(&out, "%s%s%s", text, to, p + strlen(from)) > 0);
    snprintf(path, sizeof(path), "%s/%s/vols/%s", tmpdir, sub, name);
    assert_int_equal(md_write_atomic(path, "info", out, strlen(out), &err),
                     0);
    free(out);
    free(text);
}


static void
test_store(void **state)
{
    const unsigned ids[] = {0, 1, 2, 3, 4, 5};
    struct md_state *st = new_state("s1"), *st2;
    struct md_volume *v = new_vol("rv", 6, 3, ids), *l;
    char path[512], *text = NULL;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(md_volume_save(st, v, &err), 0);
    md_volume_link(st, v);
    snprintf(path, sizeof(path), "%s/s1/vols/rv/info", tmpdir);
    assert_int_equal(md_read_file(path, &text, NULL), 0);
    assert_non_null(strstr(text, "type=replicate\n"));
    assert_non_null(strstr(text, "replica-count=3\n"));
    free(text);
    st2 = new_state("s1");
    l = md_volume_find(st2, "rv");
    assert_non_null(l);
    assert_int_equal(l->replica_count, 3);
    assert_int_equal(md_vol_n_sets(l), 2);
    free_state(st2);
    /* The client volfile saved with it has the replicate sets. */
    snprintf(path, sizeof(path), "%s/s1/vols/rv/client.vol", tmpdir);
    assert_int_equal(md_read_file(path, &text, NULL), 0);
    assert_non_null(strstr(text, "subvolumes rv-replicate-0 "
                                 "rv-replicate-1\n"));
    free(text);

    /* A type that disagrees with the count, a count out of range, or
     * sets whose ids do not line up: refused, naming the file. */
    snprintf(path, sizeof(path), "%s/s1/vols/rv", tmpdir);
    edit_info("s1", "rv", "type=replicate", "type=distribute");
    assert_int_equal(md_volume_load(path, "rv", &l, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "replica-count"));
    edit_info("s1", "rv", "type=distribute", "type=replicate");
    edit_info("s1", "rv", "replica-count=3", "replica-count=17");
    assert_int_equal(md_volume_load(path, "rv", &l, &err), -EINVAL);
    edit_info("s1", "rv", "replica-count=17", "replica-count=4");
    assert_int_equal(md_volume_load(path, "rv", &l, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "sets"));
    edit_info("s1", "rv", "replica-count=4", "replica-count=3");
    assert_int_equal(md_volume_load(path, "rv", &l, &err), 0);
    md_volume_free(l);

    /* An older store: no replica-count, type distribute: replica 1. */
    edit_info("s1", "rv", "replica-count=3\n", "");
    edit_info("s1", "rv", "type=replicate", "type=distribute");
    assert_int_equal(md_volume_load(path, "rv", &l, &err), 0);
    assert_int_equal(l->replica_count, 1);
    assert_string_equal(md_vol_type_str(l), "Distribute");
    md_volume_free(l);
    free_state(st);
}


/* replica 3 arbiter 1: the third brick of each set gets features/arbiter
 * under locks, replicate gets arbiter-count 1, the store keeps it. */
static void
test_arbiter(void **state)
{
    const unsigned ids[] = {0, 1, 2, 3, 4, 5};
    struct md_state *st = new_state("s2"), *st2;
    struct md_volume *v = new_vol("av", 6, 3, ids), *l;
    vl_err_t err = {.msg = ""};
    char path[512], *text;

    (void)state;
    v->arbiter_count = 1;
    assert_false(md_brick_is_arbiter(v, &v->bricks[0]));
    assert_false(md_brick_is_arbiter(v, &v->bricks[1]));
    assert_true(md_brick_is_arbiter(v, &v->bricks[2]));
    assert_true(md_brick_is_arbiter(v, &v->bricks[5]));
    text = md_volgen_brick(st, v, &v->bricks[2]);
    assert_non_null(text);
    assert_non_null(strstr(text, "volume av-arbiter\n    type "
                                 "features/arbiter\n    subvolumes "
                                 "av-posix\n"));
    assert_non_null(strstr(text, "subvolumes av-arbiter\n"));
    free(text);
    text = md_volgen_brick(st, v, &v->bricks[1]);
    assert_null(strstr(text, "features/arbiter"));
    free(text);
    text = md_volgen_client(v);
    assert_non_null(strstr(text, "    option arbiter-count 1\n"
                                 "    subvolumes av-brick3 av-brick4 "
                                 "av-brick5\n"));
    free(text);
    assert_int_equal(md_volume_save(st, v, &err), 0);
    md_volume_link(st, v);
    st2 = new_state("s2");
    l = md_volume_find(st2, "av");
    assert_non_null(l);
    assert_int_equal(l->arbiter_count, 1);
    free_state(st2);
    /* arbiter-count without replica 3 is refused at load. */
    edit_info("s2", "av", "replica-count=3", "replica-count=2");
    snprintf(path, sizeof(path), "%s/s2/vols/av", tmpdir);
    assert_int_equal(md_volume_load(path, "av", &l, &err), -EINVAL);
    free_state(st);
}


static void
test_option_keys(void **state)
{
    const vl_xlator_class_t *cls;
    const vl_option_t *opt;
    char canon[256];
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(md_option_resolve("cluster.quorum-type", "fixed", &cls,
                                       &opt, canon, sizeof(canon), &err), 0);
    assert_string_equal(canon, "replicate.quorum-type");
    assert_string_equal(cls->type, "cluster/replicate");
    assert_int_equal(md_option_resolve("cluster.quorum-count", "3", &cls,
                                       &opt, canon, sizeof(canon), &err), 0);
    assert_string_equal(canon, "replicate.quorum-count");
    assert_int_equal(md_option_resolve("cluster.post-op-delay-secs", "1",
                                       &cls, &opt, canon, sizeof(canon),
                                       &err), 0);
    assert_string_equal(canon, "replicate.post-op-delay");
    assert_int_equal(md_option_resolve("replicate.eager-lock", "off", &cls,
                                       &opt, canon, sizeof(canon), &err), 0);
    assert_int_equal(md_option_resolve("cluster.quorum-type", "most",
                                       &cls, &opt, canon, sizeof(canon),
                                       &err), -EINVAL);
    assert_int_equal(md_option_resolve("cluster.quorum-count", "17", &cls,
                                       &opt, canon, sizeof(canon), &err),
                     -EINVAL);
    /* Split-brain policy (issue 22): GlusterFS's key and values. */
    assert_int_equal(md_option_resolve("cluster.favorite-child-policy",
                                       "mtime", &cls, &opt, canon,
                                       sizeof(canon), &err), 0);
    assert_string_equal(canon, "replicate.favorite-child-policy");
    assert_int_equal(md_option_resolve("cluster.favorite-child-policy",
                                       "oldest", &cls, &opt, canon,
                                       sizeof(canon), &err), -EINVAL);
    /* The slot names follow the bricks: not for volume set. */
    assert_int_equal(md_option_resolve("replicate.pending-names", "a,b",
                                       &cls, &opt, canon, sizeof(canon),
                                       &err), -EPERM);
    /* quorum-count above the replica count: replicate would not start. */
    {
        const unsigned ids[] = {0, 1, 2};
        struct md_volume *v = new_vol("rv", 3, 3, ids);

        assert_int_equal(md_replica_opt_check(v, "replicate.quorum-count",
                                              "3", &err), 0);
        assert_int_equal(md_replica_opt_check(v, "replicate.quorum-count",
                                              "4", &err), -EINVAL);
        assert_non_null(strstr(err.msg, "replica count 3"));
        assert_int_equal(md_replica_opt_check(v, "replicate.quorum-type",
                                              "fixed", &err), 0);
        v->replica_count = 1;
        assert_int_equal(md_replica_opt_check(v, "replicate.quorum-count",
                                              "4", &err), 0);
        md_volume_free(v);
    }
    /* distribute's cluster.* keys still resolve to distribute. */
    assert_int_equal(md_option_resolve("cluster.min-free-disk", "5%", &cls,
                                       &opt, canon, sizeof(canon), &err), 0);
    assert_string_equal(canon, "cluster.min-free-disk");
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_same_server),
        cmocka_unit_test(test_sets),
        cmocka_unit_test(test_volgen),
        cmocka_unit_test(test_store),
        cmocka_unit_test(test_arbiter),
        cmocka_unit_test(test_option_keys),
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
