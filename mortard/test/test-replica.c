/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-replica: replicated volumes in mortard (replica.c and what uses
 * it): the create/add-brick words, the same-server check per set, set
 * names and the store's check of them, volume types, the client volfile
 * of 1 x 3 and 2 x 3 volumes (replicate options, a set being removed),
 * the store round trip of replica-count (an older info without it is
 * plain distribute) and cluster.quorum-type as a settable key; replica
 * count changes (replica-change.c): set numbers pinned and kept through
 * the store, new sets numbered past every old one, and the checks of
 * add-brick/remove-brick replica N that refuse before anything changes;
 * reset-brick's refusals and its stored start.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
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
    assert_int_equal(md_vol_opt_set(v, "diagnostics.stat-prefetch", "off"),
                     0);
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
                                 "av-access\n"));
    assert_non_null(strstr(text, "subvolumes av-arbiter\n"));
    /* The permission checks sit right above the disk, on every brick. */
    assert_non_null(strstr(text, "volume av-access\n    type "
                                 "features/access\n    subvolumes "
                                 "av-posix\n"));
    free(text);
    text = md_volgen_brick(st, v, &v->bricks[1]);
    assert_null(strstr(text, "features/arbiter"));
    assert_non_null(strstr(text, "type features/access\n    subvolumes "
                                 "av-posix\n"));
    assert_non_null(strstr(text, "subvolumes av-access\n"));
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


/* Pinning keeps every set's name, survives a count change and the
 * store; a whole set added later takes a number never used. */
static void
test_sets_pinned(void **state)
{
    /* Sets m = 1 and 2 (set 0 was removed), replica 2, next-brick 6. */
    const unsigned ids[] = {2, 3, 4, 5};
    struct md_state *st = new_state("s3"), *st2;
    struct md_volume *v = new_vol("pv", 4, 2, ids), *l;
    struct md_brick *nb;
    char name[128], path[512], *text = NULL;
    vl_err_t err = {.msg = ""};

    (void)state;
    assert_int_equal(md_vol_set_num(v, 0), 1);
    assert_int_equal(md_vol_sets_pin(v), 3);
    assert_int_equal(v->next_set, 3);
    for (size_t i = 0; i < 4; i++) {
        assert_true(v->bricks[i].has_set_num);
        assert_int_equal(v->bricks[i].set_num, 1 + i / 2);
    }
    /* 2 -> 3: one brick per set appended (ids 6 and 7); the id rule
     * would now say 2/3 = 0 and 4/3 = 1: the pinned numbers win. */
    nb = realloc(v->bricks, 6 * sizeof(*nb));
    assert_non_null(nb);
    v->bricks = nb;
    memmove(&nb[3], &nb[2], 2 * sizeof(*nb));
    nb[5] = nb[4];
    memset(&nb[2], 0, sizeof(*nb));
    nb[2].host = strdup("h9");
    nb[2].path = strdup("/srv/pv-n0");
    nb[2].port = 24400;
    snprintf(nb[2].id, sizeof(nb[2].id), "brick6");
    nb[2].has_set_num = true;
    nb[2].set_num = 1;
    nb[5].host = strdup("h9");
    nb[5].path = strdup("/srv/pv-n1");
    nb[5].port = 24401;
    snprintf(nb[5].id, sizeof(nb[5].id), "brick7");
    nb[5].set_num = 2;
    v->n_bricks = 6;
    v->replica_count = 3;
    v->next_brick = 8;
    assert_int_equal(md_vol_sets_check(v, &err), 0);
    md_vol_set_name(v, 1, name, sizeof(name));
    assert_string_equal(name, "pv-replicate-2");
    /* A member that disagrees, or two sets with one number: refused. */
    nb[5].set_num = 1;
    assert_int_equal(md_vol_sets_check(v, &err), -EINVAL);
    nb[3].set_num = nb[4].set_num = 1;
    assert_int_equal(md_vol_sets_check(v, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "same number"));
    nb[3].set_num = nb[4].set_num = nb[5].set_num = 3;
    assert_int_equal(md_vol_sets_check(v, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "next-set"));
    nb[3].set_num = nb[4].set_num = nb[5].set_num = 2;

    /* The store keeps them. */
    assert_int_equal(md_volume_save(st, v, &err), 0);
    md_volume_link(st, v);
    snprintf(path, sizeof(path), "%s/s3/vols/pv/info", tmpdir);
    assert_int_equal(md_read_file(path, &text, NULL), 0);
    assert_non_null(strstr(text, "next-set=3\n"));
    assert_non_null(strstr(text, "brick.2.set=1\n"));
    free(text);
    st2 = new_state("s3");
    l = md_volume_find(st2, "pv");
    assert_non_null(l);
    assert_int_equal(l->next_set, 3);
    md_vol_set_name(l, 1, name, sizeof(name));
    assert_string_equal(name, "pv-replicate-2");
    free_state(st2);
    snprintf(path, sizeof(path), "%s/s3/vols/pv/client.vol", tmpdir);
    assert_int_equal(md_read_file(path, &text, NULL), 0);
    assert_non_null(strstr(text, "volume pv-replicate-1\n"));
    assert_non_null(strstr(text, "subvolumes pv-brick2 pv-brick3 "
                                 "pv-brick6\n"));
    free(text);
    /* A pinned store whose member lost its number: refused at load. */
    edit_info("s3", "pv", "brick.5.set=2\n", "");
    snprintf(path, sizeof(path), "%s/s3/vols/pv", tmpdir);
    assert_int_equal(md_volume_load(path, "pv", &l, &err), -EINVAL);
    edit_info("s3", "pv", "brick.4.set=2\n", "brick.4.set=2\n"
              "brick.5.set=2\n");
    assert_int_equal(md_volume_load(path, "pv", &l, &err), 0);
    md_volume_free(l);

    /* A whole new set of a pinned volume: number 3, next-set 4. */
    nb = calloc(3, sizeof(*nb));
    assert_non_null(nb);
    md_vol_sets_number_new(v, nb, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_true(nb[i].has_set_num);
        assert_int_equal(nb[i].set_num, 3);
    }
    assert_int_equal(v->next_set, 4);
    free(nb);
    free_state(st);
}


/* result_has: r failed with a message containing what. */
static void
result_has(struct md_result *r, const char *what)
{
    assert_int_not_equal(r->ret, 0);
    if (strstr(r->errstr, what) == NULL)
        fail_msg("'%s' not in '%s'", what, r->errstr);
    md_result_clear(r);
    md_result_init(r);
}


/* add-brick/remove-brick replica N: each bad form fails with its message
 * and the volume is unchanged (no brick is reached: every check runs
 * before the marking). */
static void
test_change_checks(void **state)
{
    const unsigned ids[] = {0, 1, 2, 3};
    struct md_state *st = new_state("s4");
    struct md_volume *v = new_vol("cv", 4, 2, ids);
    struct md_volume *d = new_vol("dv", 2, 1, ids);
    char *add3[] = {"volume", "add-brick", "cv", "replica", "3",
                    "h9:/srv/n0", NULL};
    char *adddv[] = {"volume", "add-brick", "dv", "replica", "2",
                     "h9:/srv/n0", "h9:/srv/n1", NULL};
    char *rm[] = {"h0:/srv/cv-0", "h1:/srv/cv-1", "h0:/srv/cv-9", NULL};
    struct md_brick_args ba;
    struct md_result r;
    vl_err_t err = {.msg = ""};

    (void)state;
    md_result_init(&r);
    assert_int_equal(md_volume_save(st, v, &err), 0);
    md_volume_link(st, v);
    assert_int_equal(md_volume_save(st, d, &err), 0);
    md_volume_link(st, d);

    /* 2 sets, replica 3: two new bricks needed, one given. */
    assert_int_equal(md_brick_args_parse(ARGC(add3), add3, 3, false, &ba,
                                         &err), 0);
    md_replica_grow(st, v, &ba, add3, &r);
    result_has(&r, "Incorrect number of bricks (1) supplied for replica "
                   "count (3): volume cv has 2 replica sets");
    assert_int_equal(md_brick_args_parse(ARGC(adddv), adddv, 3, false, &ba,
                                         &err), 0);
    md_replica_grow(st, d, &ba, adddv, &r);
    /* A plain distribute volume becomes replicated, once started. */
    result_has(&r, "Volume dv needs to be started");
    /* The right count, but the volume is not started. */
    {
        char *add3b[] = {"volume", "add-brick", "cv", "replica", "3",
                         "h9:/srv/n0", "h9:/srv/n1", NULL};

        assert_int_equal(md_brick_args_parse(ARGC(add3b), add3b, 3, false,
                                             &ba, &err), 0);
        md_replica_grow(st, v, &ba, add3b, &r);
        result_has(&r, "Volume cv needs to be started");
        v->arbiter_count = 1;
        v->replica_count = 3;
        v->n_bricks = 3;
        md_replica_grow(st, v, &ba, add3b, &r);
        result_has(&r, "arbiter volume");
        md_replica_shrink(st, v, 2, "force", rm, 1, &r);
        result_has(&r, "arbiter volume");
        v->arbiter_count = 0;
        v->replica_count = 2;
        v->n_bricks = 4;
    }

    md_replica_shrink(st, d, 1, "force", rm, 1, &r);
    result_has(&r, "replica count (1) option given for non replicate "
                   "volume dv");
    md_replica_shrink(st, v, 3, "force", rm, 1, &r);
    result_has(&r, "given replica count (3) option is more than volume "
                   "cv's replica count (2)");
    /* Down to replica 1 (plain distribute): one brick of each set. */
    md_replica_shrink(st, v, 1, "force", rm, 2, &r);
    result_has(&r, "every replica set must lose 1 brick for replica 1");
    assert_int_equal(v->replica_count, 2);
    assert_int_equal(v->n_bricks, 4);
    assert_false(v->bricks[0].has_set_num);

    /* Started, but no brick of the set is up to be marked as the new
     * brick's heal source: refused before any change (no directory, no
     * id, no pinned numbers). */
    {
        struct md_volume *g = new_vol("gv", 2, 2, ids);
        char nbrick[300], *addg[] = {"volume", "add-brick", "gv", "replica",
                                     "3", nbrick, "force", NULL};

        for (size_t i = 0; i < 2; i++) {
            free(g->bricks[i].host);
            free(g->bricks[i].path);
            g->bricks[i].host = strdup("127.0.0.1");
            assert_true(asprintf(&g->bricks[i].path, "%s/gv%zu", tmpdir,
                                 i) > 0);
        }
        g->status = MD_VOL_STARTED;
        assert_int_equal(md_volume_save(st, g, &err), 0);
        md_volume_link(st, g);
        snprintf(nbrick, sizeof(nbrick), "127.0.0.1:%s/gvn", tmpdir);
        assert_int_equal(md_brick_args_parse(ARGC(addg), addg, 3, false,
                                             &ba, &err), 0);
        md_replica_grow(st, g, &ba, addg, &r);
        result_has(&r, "no brick of replica set 0");
        assert_int_equal(g->n_bricks, 2);
        assert_int_equal(g->replica_count, 2);
        assert_int_equal(g->next_brick, 2);
        assert_int_equal(g->next_set, 0);
        assert_false(g->bricks[1].has_set_num);
        snprintf(nbrick, sizeof(nbrick), "%s/gvn", tmpdir);
        assert_int_not_equal(access(nbrick, F_OK), 0);
    }
    md_result_clear(&r);
    free_state(st);
}


/* remove-brick VOL replica 2 of a 2 x 3 volume on this node: the forms
 * GlusterFS refuses, a brick with pending heals, then the change. */
static void
test_shrink(void **state)
{
    const unsigned ids[] = {0, 1, 2, 3, 4, 5};
    struct md_state *st = new_state("s5");
    struct md_volume *v = new_vol("tv", 6, 3, ids);
    char b[6][256], idx[512], entry[600];
    char *one[] = {b[0], NULL}, *same[] = {b[0], b[1], NULL};
    char *good[] = {b[4], b[1], NULL}, *bad[] = {b[0], "127.0.0.1:/nope",
                                                 NULL};
    struct md_result r;
    vl_err_t err = {.msg = ""};
    FILE *f;

    (void)state;
    md_result_init(&r);
    for (size_t i = 0; i < 6; i++) {
        free(v->bricks[i].host);
        free(v->bricks[i].path);
        v->bricks[i].host = strdup("127.0.0.1");
        assert_true(asprintf(&v->bricks[i].path, "%s/tv%zu", tmpdir, i) >
                    0);
        snprintf(b[i], sizeof(b[i]), "127.0.0.1:%s", v->bricks[i].path);
    }
    assert_int_equal(md_volume_save(st, v, &err), 0);
    md_volume_link(st, v);

    md_replica_shrink(st, v, 2, "start", good, 2, &r);
    result_has(&r, "Migration of data is not needed when reducing replica "
                   "count. Use the 'force' option");
    md_replica_shrink(st, v, 2, "force", one, 1, &r);
    result_has(&r, "need 2(xN) bricks for reducing replica count of the "
                   "volume from 3 to 2");
    md_replica_shrink(st, v, 2, "force", bad, 2, &r);
    result_has(&r, "Incorrect brick 127.0.0.1:/nope for volume tv");
    md_replica_shrink(st, v, 2, "force", same, 2, &r);
    result_has(&r, "every replica set must lose 1 brick for replica 2");

    /* Brick 2 (set 0, not removed) lists an object to heal. */
    snprintf(idx, sizeof(idx), "%s/tv2/.mortar/index/xattrop", tmpdir);
    snprintf(entry, sizeof(entry), "mkdir -p %s", idx);
    assert_int_equal(system(entry), 0);
    snprintf(entry, sizeof(entry), "%s/00000000-0000-0000-0000-000000000001",
             idx);
    f = fopen(entry, "w");
    assert_non_null(f);
    fclose(f);
    md_replica_shrink(st, v, 2, "force", good, 2, &r);
    result_has(&r, "has 1 pending heal (volume heal tv info lists them)");
    assert_int_equal(v->replica_count, 3);
    assert_int_equal(unlink(entry), 0);

    md_replica_shrink(st, v, 2, "force", good, 2, &r);
    assert_int_equal(r.ret, 0);
    assert_int_equal(v->replica_count, 2);
    assert_int_equal(v->n_bricks, 4);
    assert_string_equal(v->bricks[0].id, "brick0");
    assert_string_equal(v->bricks[1].id, "brick2");
    assert_string_equal(v->bricks[2].id, "brick3");
    assert_string_equal(v->bricks[3].id, "brick5");
    assert_int_equal(md_vol_set_num(v, 1), 1);
    assert_int_equal(v->next_set, 2);
    md_result_clear(&r);
    free_state(st);
}


/* reset-brick: the forms it refuses, start (stored, survives a reload),
 * and a commit that finds no other brick of the set up: refused with
 * nothing changed. */
static void
test_reset(void **state)
{
    const unsigned ids[] = {0, 1, 2};
    struct md_state *st = new_state("s6"), *st2;
    struct md_volume *v = new_vol("xv", 3, 3, ids);
    struct md_volume *d = new_vol("xd", 1, 1, ids);
    char b[3][256], *usage[] = {"volume", "reset-brick", "xv", b[2], NULL};
    char *start[] = {"volume", "reset-brick", "xv", b[2], "start", NULL};
    char *commit[] = {"volume", "reset-brick", "xv", b[2], b[2], "commit",
                      NULL};
    char *force[] = {"volume", "reset-brick", "xv", b[2], b[2], "commit",
                     "force", NULL};
    char *other[] = {"volume", "reset-brick", "xv", b[2], b[1], "commit",
                     NULL};
    char *nobrick[] = {"volume", "reset-brick", "xv", "127.0.0.1:/nope",
                       "start", NULL};
    char *dist[] = {"volume", "reset-brick", "xd", "h0:/srv/xd-0", "start",
                    NULL};
    struct md_result r;
    vl_err_t err = {.msg = ""};
    char mk[600];

    (void)state;
    md_result_init(&r);
    for (size_t i = 0; i < 3; i++) {
        free(v->bricks[i].host);
        free(v->bricks[i].path);
        v->bricks[i].host = strdup("127.0.0.1");
        assert_true(asprintf(&v->bricks[i].path, "%s/xv%zu", tmpdir, i) >
                    0);
        snprintf(b[i], sizeof(b[i]), "127.0.0.1:%s", v->bricks[i].path);
    }
    assert_int_equal(md_volume_save(st, v, &err), 0);
    md_volume_link(st, v);
    assert_int_equal(md_volume_save(st, d, &err), 0);
    md_volume_link(st, d);

    md_cmd_reset_brick(st, ARGC(usage), usage, &r);
    assert_int_equal(r.ret, MD_EXIT_USAGE);
    result_has(&r, "Usage: volume reset-brick");
    md_cmd_reset_brick(st, ARGC(start), start, &r);
    result_has(&r, "volume: xv is not started");
    v->status = MD_VOL_STARTED;
    d->status = MD_VOL_STARTED;
    md_cmd_reset_brick(st, ARGC(dist), dist, &r);
    result_has(&r, "not permitted on distribute only volumes");
    md_cmd_reset_brick(st, ARGC(nobrick), nobrick, &r);
    result_has(&r, "brick: 127.0.0.1:/nope does not exist in volume: xv");
    md_cmd_reset_brick(st, ARGC(commit), commit, &r);
    result_has(&r, "was not stopped for a reset");
    md_cmd_reset_brick(st, ARGC(other), other, &r);
    result_has(&r, "When destination brick is new, please use volume "
                   "replace-brick");
    assert_false(v->bricks[2].is_reset);

    md_cmd_reset_brick(st, ARGC(start), start, &r);
    assert_int_equal(r.ret, 0);
    assert_non_null(strstr(r.text.data, "reset-brick start operation "
                                        "successful"));
    md_result_clear(&r);
    md_result_init(&r);
    assert_true(v->bricks[2].is_reset);
    st2 = new_state("s6");
    assert_true(md_volume_find(st2, "xv")->bricks[2].is_reset);
    free_state(st2);
    md_cmd_reset_brick(st, ARGC(start), start, &r);
    result_has(&r, "already stopped by reset-brick start");

    /* The directory with this volume's id: commit needs force. */
    snprintf(mk, sizeof(mk), "mkdir -p %s", v->bricks[2].path);
    assert_int_equal(system(mk), 0);
    {
        vl_gfid_t id;

        assert_int_equal(vl_gfid_parse(v->id, &id), 0);
        if (setxattr(v->bricks[2].path, MD_VOLID_XATTR, id.bytes,
                     sizeof(id.bytes), 0) == 0) {
            md_cmd_reset_brick(st, ARGC(commit), commit, &r);
            result_has(&r, "still has the volume id of xv");
        }
    }
    /* No other brick of the set is up: nothing could refill it. */
    md_cmd_reset_brick(st, ARGC(force), force, &r);
    result_has(&r, "no other brick of the replica set");
    assert_true(v->bricks[2].is_reset);
    md_result_clear(&r);
    free_state(st);
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
        cmocka_unit_test(test_sets_pinned),
        cmocka_unit_test(test_change_checks),
        cmocka_unit_test(test_shrink),
        cmocka_unit_test(test_reset),
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
