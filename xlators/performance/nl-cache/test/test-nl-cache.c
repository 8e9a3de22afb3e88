/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-nl-cache: performance/nl-cache between debug/mock (which holds
 * every request until the test answers it, so the test sees what reaches
 * the child) and test/above (which counts the events it is sent). Checks:
 * a granted mkdir (asked with want_lease) answers lookups of unknown
 * names here; one not granted does not; names this client made, renamed
 * or removed keep the set right; a failed entry fop, a break for the
 * directory, a break of everything, CHILD_DOWN and a break that comes
 * before the mkdir's answer all end the lease (and the events go on up);
 * a lookup while an entry fop is in flight goes down; a lookup answer
 * that disagrees with the set drops the record, unless an entry fop ran
 * meanwhile; timeout and limit; the option aliases; reconfigure; the dump;
 * every request answered once under allocation failure.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "builtin.h"
#include "nl-cache.h"
#include "vl-test.h"

/* ---- test/above: a translator above nl-cache that counts events ---- */

static int t_upcalls_seen;    /* VL_EV_UPCALL that reached test/above */
static int t_child_down_seen; /* VL_EV_CHILD_DOWN that reached it */


static int
t_above_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    (void)xl;
    (void)data;
    if (ev == VL_EV_UPCALL)
        t_upcalls_seen++;
    else if (ev == VL_EV_CHILD_DOWN)
        t_child_down_seen++;
    return 0;
}


static const vl_option_t t_above_options[] = {VL_OPT_END};

static const vl_xlator_class_t t_above_class = {
    .abi = VL_XLATOR_ABI,
    .type = "test/above",
    .prefix = "above",
    .version = {0, 1, 0},
    .flags = VL_XL_ONE_CHILD,
    .options = t_above_options,
    .notify = t_above_notify,
};


/* ---- environment ---- */

struct t_env {
    struct vl_test_graph *g; /* above -> nlc -> mock */
    vl_xlator_t *mock;       /* borrowed from g */
    vl_xlator_t *nlc;        /* borrowed from g */
    vl_inode_t *root;        /* owned ref */
};


static struct t_env *
t_env_new(const char *nlc_opts)
{
    struct t_env *e = calloc(1, sizeof(*e));
    char text[1024];
    vl_err_t err;

    assert_non_null(e);
    vl_registry_add(&xl_performance_nl_cache);
    vl_registry_add(&t_above_class);
    snprintf(text, sizeof(text),
             "volume m\n type debug/mock\nend-volume\n"
             "volume nlc\n type performance/nl-cache\n%s"
             " subvolumes m\nend-volume\n"
             "volume top\n type test/above\n subvolumes nlc\nend-volume\n",
             nlc_opts);
    e->g = vl_test_graph_new(text, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->mock = vl_test_graph_xl(e->g, "m");
    e->nlc = vl_test_graph_xl(e->g, "nlc");
    e->root = vl_inode_table_root(e->g->graph->itable);
    t_upcalls_seen = 0;
    t_child_down_seen = 0;
    nlc_test_clock_set(0);
    return e;
}


static void
t_env_free(struct t_env *e)
{
    nlc_test_clock_set(0);
    vl_inode_unref(e->root);
    vl_test_graph_free(e->g);
    free(e);
}


static vl_req_t *
t_pop(struct t_env *e, vl_fop_t op)
{
    vl_req_t *r = vl_mock_pop(e->mock);

    assert_non_null(r);
    assert_int_equal(r->op, op);
    return r;
}


static void
t_done_once(struct vl_test_result *res, int status)
{
    assert_true(res->is_done);
    assert_int_equal(res->n_done, 1);
    assert_int_equal(res->status, status);
    vl_test_result_clear(res);
}


/* ---- mkdir ---- */

/* Winds MKDIR name in parent with a fresh GFID (*gfid) and pops it at the
 * mock, which must see want_lease. The test answers the returned
 * request; *res gets the caller's answer. */
static vl_req_t *
t_mkdir_start(struct t_env *e, vl_inode_t *parent, const char *name,
              vl_gfid_t *gfid /* OUT */, vl_inode_t **fresh /* OUT */,
              struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_MKDIR);
    vl_req_t *r;

    assert_non_null(req);
    vl_gfid_generate(gfid);
    *fresh = vl_inode_new(e->g->graph->itable);
    VL_ARGS(req, mkdir)->loc.parent = parent;
    VL_ARGS(req, mkdir)->loc.name = name;
    VL_ARGS(req, mkdir)->loc.inode = *fresh;
    VL_ARGS(req, mkdir)->mode = 0755;
    VL_ARGS(req, mkdir)->gfid = *gfid;
    vl_test_wind(req, res);
    assert_false(res->is_done);
    r = t_pop(e, VL_FOP_MKDIR);
    assert_true(r->args.mkdir.want_lease);
    return r;
}


/* Answers a MKDIR popped by t_mkdir_start and returns the new directory's
 * linked inode (a ref). */
static vl_inode_t *
t_mkdir_finish(struct t_env *e, vl_req_t *r, const vl_gfid_t *gfid,
               vl_inode_t *fresh, struct vl_test_result *res, int status,
               bool is_leased)
{
    struct vl_iatt ia = {.gfid = *gfid, .mode = S_IFDIR | 0755};
    vl_inode_t *linked;

    (void)e;
    r->reply.iatt = ia;
    r->reply.is_leased = is_leased;
    vl_unwind(r, status);
    assert_int_equal(res->reply.is_leased, is_leased); /* passed up */
    t_done_once(res, status);
    linked = vl_inode_link(fresh, &ia);
    vl_inode_unref(fresh);
    return linked;
}


/* A whole MKDIR of name in parent, answered status and is_leased. */
static vl_inode_t *
t_mkdir(struct t_env *e, vl_inode_t *parent, const char *name, int status,
        bool is_leased)
{
    struct vl_test_result res = {0};
    vl_inode_t *fresh;
    vl_gfid_t gfid;
    vl_req_t *r;

    r = t_mkdir_start(e, parent, name, &gfid, &fresh, &res);
    return t_mkdir_finish(e, r, &gfid, fresh, &res, status, is_leased);
}


/* ---- lookup ---- */

/* (Without the fresh inode a mount would pass: nothing here reads it.) */
static void
t_lookup_wind(struct t_env *e, vl_inode_t *parent, const char *name,
              struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);

    assert_non_null(req);
    VL_ARGS(req, lookup)->loc.parent = parent;
    VL_ARGS(req, lookup)->loc.name = name;
    vl_test_wind(req, res);
}


/* LOOKUP name in parent must be answered -ENOENT here. */
static void
t_lookup_local(struct t_env *e, vl_inode_t *parent, const char *name)
{
    struct vl_test_result res = {0};
    size_t before = vl_mock_received(e->mock);

    t_lookup_wind(e, parent, name, &res);
    assert_int_equal(vl_mock_received(e->mock), before);
    t_done_once(&res, -ENOENT);
}


/* Winds LOOKUP name in parent, which must reach the mock; returns the
 * popped request for the test to answer. */
static vl_req_t *
t_lookup_start(struct t_env *e, vl_inode_t *parent, const char *name,
               struct vl_test_result *res)
{
    vl_req_t *r;

    t_lookup_wind(e, parent, name, res);
    assert_false(res->is_done);
    r = t_pop(e, VL_FOP_LOOKUP);
    assert_string_equal(r->args.lookup.loc.name, name);
    return r;
}


/* LOOKUP name in parent must reach the mock, which answers status. */
static void
t_lookup_down(struct t_env *e, vl_inode_t *parent, const char *name,
              int status)
{
    struct vl_test_result res = {0};
    vl_req_t *r = t_lookup_start(e, parent, name, &res);

    if (status == 0) {
        vl_gfid_generate(&r->reply.iatt.gfid);
        r->reply.iatt.mode = S_IFREG | 0644;
    }
    vl_unwind(r, status);
    t_done_once(&res, status);
}


/* ---- entry fops ---- */

/* Winds op (create, mknod, symlink, unlink, rmdir) of name in parent; it
 * must reach the mock. Returns the popped request to answer. */
static vl_req_t *
t_entry_start(struct t_env *e, vl_fop_t op, vl_inode_t *parent,
              const char *name, struct vl_test_result *res)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, op);
    struct vl_loc *loc = NULL;

    assert_non_null(req);
    switch (op) {
    case VL_FOP_CREATE:
        loc = &VL_ARGS(req, create)->loc;
        VL_ARGS(req, create)->flags = O_CREAT | O_WRONLY;
        vl_gfid_generate(&VL_ARGS(req, create)->gfid);
        break;
    case VL_FOP_MKNOD:
        loc = &VL_ARGS(req, mknod)->loc;
        vl_gfid_generate(&VL_ARGS(req, mknod)->gfid);
        break;
    case VL_FOP_SYMLINK:
        loc = &VL_ARGS(req, symlink)->loc;
        VL_ARGS(req, symlink)->target = "x";
        vl_gfid_generate(&VL_ARGS(req, symlink)->gfid);
        break;
    case VL_FOP_UNLINK:
        loc = &VL_ARGS(req, unlink)->loc;
        break;
    case VL_FOP_RMDIR:
        loc = &VL_ARGS(req, rmdir)->loc;
        break;
    default:
        fail_msg("no such entry fop in the test");
    }
    loc->parent = parent;
    loc->name = name;
    vl_test_wind(req, res);
    assert_false(res->is_done);
    return t_pop(e, op);
}


static void
t_entry(struct t_env *e, vl_fop_t op, vl_inode_t *parent, const char *name,
        int status)
{
    struct vl_test_result res = {0};

    vl_unwind(t_entry_start(e, op, parent, name, &res), status);
    t_done_once(&res, status);
}


static void
t_rename(struct t_env *e, vl_inode_t *p1, const char *n1, vl_inode_t *p2,
         const char *n2, uint32_t flags, int status)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_RENAME);

    assert_non_null(req);
    VL_ARGS(req, rename)->oldloc.parent = p1;
    VL_ARGS(req, rename)->oldloc.name = n1;
    VL_ARGS(req, rename)->newloc.parent = p2;
    VL_ARGS(req, rename)->newloc.name = n2;
    VL_ARGS(req, rename)->flags = flags;
    vl_test_wind(req, &res);
    assert_false(res.is_done);
    vl_unwind(t_pop(e, VL_FOP_RENAME), status);
    t_done_once(&res, status);
}


static void
t_link(struct t_env *e, vl_inode_t *p2, const char *n2, int status)
{
    struct vl_test_result res = {0};
    vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_LINK);

    assert_non_null(req);
    VL_ARGS(req, link)->oldloc.inode = e->root;
    VL_ARGS(req, link)->newloc.parent = p2;
    VL_ARGS(req, link)->newloc.name = n2;
    vl_test_wind(req, &res);
    assert_false(res.is_done);
    vl_unwind(t_pop(e, VL_FOP_LINK), status);
    t_done_once(&res, status);
}


static void
t_upcall(struct t_env *e, const vl_gfid_t *gfid, bool is_all)
{
    struct vl_upcall up = {.is_all = is_all};

    if (gfid != NULL)
        up.gfid = *gfid;
    assert_int_equal(vl_notify(e->nlc, VL_EV_UPCALL, &up), 0);
}


/* The value of key in nl-cache's dump. */
static unsigned long long
t_dump_value(struct t_env *e, const char *key)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    unsigned long long v = ~0ULL;
    char pat[64];
    const char *p;

    assert_non_null(f);
    e->nlc->cls->dump(e->nlc, f);
    fclose(f);
    snprintf(pat, sizeof(pat), "%s=", key);
    for (p = text; p != NULL; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (strncmp(p, pat, strlen(pat)) == 0) {
            v = strtoull(p + strlen(pat), NULL, 10);
            break;
        }
    }
    free(text);
    assert_true(v != ~0ULL);
    return v;
}


/* ---- tests ---- */

static void
test_class(void **state)
{
    vl_err_t err;

    (void)state;
    assert_int_equal(vl_test_check_class(&xl_performance_nl_cache, &err), 0);
}


static void
test_options(void **state)
{
    const vl_option_t *opts = xl_performance_nl_cache.options;
    struct t_env *e;
    const struct nlc_conf *conf;

    (void)state;
    assert_string_equal(vl_option_find(opts, "performance.nl-cache-limit")
                            ->key, "limit");
    assert_string_equal(vl_option_find(opts, "performance.nl-cache-timeout")
                            ->key, "timeout");
    e = t_env_new("");
    conf = VL_CONF(e->nlc, struct nlc_conf);
    assert_int_equal(conf->limit, 2 * 1024 * 1024);
    assert_int_equal(conf->timeout, 60 * 1000);
    t_env_free(e);
    e = t_env_new(" option performance.nl-cache-limit 1MiB\n"
                  " option performance.nl-cache-timeout 5s\n");
    conf = VL_CONF(e->nlc, struct nlc_conf);
    assert_int_equal(conf->limit, 1024 * 1024);
    assert_int_equal(conf->timeout, 5000);
    t_env_free(e);
}


static void
test_mkdir_granted(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *d = t_mkdir(e, e->root, "d", 0, true);
    vl_inode_t *sub;
    struct vl_test_result res = {0};
    vl_req_t *req;

    (void)state;
    t_lookup_local(e, d, "new-file");
    t_lookup_local(e, d, "other");
    assert_int_equal(t_dump_value(e, "hits"), 2);
    assert_int_equal(t_dump_value(e, "leased"), 1);
    /* "." and ".." always exist. */
    t_lookup_down(e, d, "..", 0);
    /* A nameless lookup (by GFID) is not ours to answer. */
    req = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);
    VL_ARGS(req, lookup)->loc.inode = d;
    vl_test_wind(req, &res);
    vl_unwind(t_pop(e, VL_FOP_LOOKUP), 0);
    t_done_once(&res, 0);
    /* A directory made inside is a name in the set, and leased too. */
    sub = t_mkdir(e, d, "sub", 0, true);
    t_lookup_down(e, d, "sub", 0);
    t_lookup_local(e, sub, "x");
    /* Lookups elsewhere (no record) go down. */
    t_lookup_down(e, e->root, "x", -ENOENT);
    vl_inode_unref(sub);
    vl_inode_unref(d);
    t_env_free(e);
}


static void
test_mkdir_not_granted(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *d = t_mkdir(e, e->root, "d", 0, false);
    vl_inode_t *d2;

    (void)state;
    t_lookup_down(e, d, "x", -ENOENT);
    assert_int_equal(t_dump_value(e, "records"), 0);
    /* A failed mkdir leases nothing either, whatever the reply says. */
    d2 = t_mkdir(e, e->root, "d2", -EEXIST, true);
    t_lookup_down(e, d2, "x", -ENOENT);
    vl_inode_unref(d2);
    vl_inode_unref(d);
    t_env_free(e);
}


static void
test_create_name_in_set(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *d = t_mkdir(e, e->root, "d", 0, true);

    (void)state;
    t_entry(e, VL_FOP_CREATE, d, "a", 0);
    t_lookup_down(e, d, "a", 0);
    t_lookup_local(e, d, "b");
    t_entry(e, VL_FOP_MKNOD, d, "n", 0);
    t_entry(e, VL_FOP_SYMLINK, d, "s", 0);
    t_link(e, d, "l", 0);
    t_lookup_down(e, d, "n", 0);
    t_lookup_down(e, d, "s", 0);
    t_lookup_down(e, d, "l", 0);
    t_lookup_local(e, d, "b");
    assert_int_equal(t_dump_value(e, "names"), 4);
    vl_inode_unref(d);
    t_env_free(e);
}


static void
test_unlink_removes(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *d = t_mkdir(e, e->root, "d", 0, true);
    vl_inode_t *sub;

    (void)state;
    t_entry(e, VL_FOP_CREATE, d, "a", 0);
    t_entry(e, VL_FOP_UNLINK, d, "a", 0);
    t_lookup_local(e, d, "a");
    sub = t_mkdir(e, d, "sub", 0, true);
    t_entry(e, VL_FOP_RMDIR, d, "sub", 0);
    t_lookup_local(e, d, "sub");
    vl_inode_unref(sub);
    vl_inode_unref(d);
    t_env_free(e);
}


static void
test_rename_two_dirs(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *d1 = t_mkdir(e, e->root, "d1", 0, true);
    vl_inode_t *d2 = t_mkdir(e, e->root, "d2", 0, true);

    (void)state;
    t_entry(e, VL_FOP_CREATE, d1, "a", 0);
    t_rename(e, d1, "a", d2, "b", 0, 0);
    t_lookup_local(e, d1, "a");
    t_lookup_down(e, d2, "b", 0);
    t_lookup_local(e, d2, "a");
    /* Within one directory. */
    t_rename(e, d2, "b", d2, "c", 0, 0);
    t_lookup_local(e, d2, "b");
    t_lookup_down(e, d2, "c", 0);
    /* An exchange keeps both names. */
    t_entry(e, VL_FOP_CREATE, d1, "x", 0);
    t_rename(e, d1, "x", d2, "c", RENAME_EXCHANGE, 0);
    t_lookup_down(e, d1, "x", 0);
    t_lookup_down(e, d2, "c", 0);
    /* A failed rename drops both records. */
    t_rename(e, d1, "x", d2, "c", 0, -EIO);
    t_lookup_down(e, d1, "zz", -ENOENT);
    t_lookup_down(e, d2, "zz", -ENOENT);
    vl_inode_unref(d1);
    vl_inode_unref(d2);
    t_env_free(e);
}


static void
test_failure_drops(void **state)
{
    static const int codes[] = {-EEXIST, -ENOTCONN};

    (void)state;
    for (size_t i = 0; i < VL_ARRAY_SIZE(codes); i++) {
        struct t_env *e = t_env_new("");
        vl_inode_t *d = t_mkdir(e, e->root, "d", 0, true);

        t_lookup_local(e, d, "z");
        t_entry(e, VL_FOP_CREATE, d, "a", codes[i]);
        t_lookup_down(e, d, "z", -ENOENT);
        assert_int_equal(t_dump_value(e, "failures"), 1);
        vl_inode_unref(d);
        t_env_free(e);
    }
}


static void
test_upcall_gfid(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *d1 = t_mkdir(e, e->root, "d1", 0, true);
    vl_inode_t *d2 = t_mkdir(e, e->root, "d2", 0, true);

    (void)state;
    t_upcall(e, &d1->gfid, false);
    assert_int_equal(t_upcalls_seen, 1); /* forwarded up */
    t_lookup_down(e, d1, "x", -ENOENT);
    t_lookup_local(e, d2, "x");
    assert_int_equal(t_dump_value(e, "breaks"), 1);
    vl_inode_unref(d1);
    vl_inode_unref(d2);
    t_env_free(e);
}


static void
test_upcall_all_and_child_down(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *d1 = t_mkdir(e, e->root, "d1", 0, true);
    vl_inode_t *d2 = t_mkdir(e, e->root, "d2", 0, true);

    (void)state;
    t_upcall(e, NULL, true);
    assert_int_equal(t_upcalls_seen, 1);
    t_lookup_down(e, d1, "x", -ENOENT);
    t_lookup_down(e, d2, "x", -ENOENT);
    vl_inode_unref(d1);
    vl_inode_unref(d2);

    d1 = t_mkdir(e, e->root, "d3", 0, true);
    t_lookup_local(e, d1, "x");
    assert_int_equal(vl_notify(e->nlc, VL_EV_CHILD_DOWN, e->mock), 0);
    assert_int_equal(t_child_down_seen, 1);
    t_lookup_down(e, d1, "x", -ENOENT);
    vl_inode_unref(d1);
    t_env_free(e);
}


static void
test_upcall_while_pending(void **state)
{
    struct t_env *e = t_env_new("");
    struct vl_test_result res = {0};
    vl_inode_t *fresh, *d;
    vl_gfid_t gfid;
    vl_req_t *r;

    (void)state;
    /* The break for the directory overtakes the mkdir's answer. */
    r = t_mkdir_start(e, e->root, "d", &gfid, &fresh, &res);
    t_upcall(e, &gfid, false);
    d = t_mkdir_finish(e, r, &gfid, fresh, &res, 0, true);
    t_lookup_down(e, d, "x", -ENOENT);
    vl_inode_unref(d);
    /* So does a break of everything. */
    r = t_mkdir_start(e, e->root, "d2", &gfid, &fresh, &res);
    t_upcall(e, NULL, true);
    d = t_mkdir_finish(e, r, &gfid, fresh, &res, 0, true);
    t_lookup_down(e, d, "x", -ENOENT);
    vl_inode_unref(d);
    assert_int_equal(t_dump_value(e, "records"), 0);
    t_env_free(e);
}


static void
test_lookup_during_create(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *d = t_mkdir(e, e->root, "d", 0, true);
    struct vl_test_result res = {0};
    vl_req_t *c;

    (void)state;
    c = t_entry_start(e, VL_FOP_CREATE, d, "a", &res);
    /* The brick may have made "a" already: every lookup goes down. */
    t_lookup_down(e, d, "a", 0);
    t_lookup_down(e, d, "b", -ENOENT);
    vl_unwind(c, 0);
    t_done_once(&res, 0);
    t_lookup_local(e, d, "b");
    t_lookup_down(e, d, "a", 0);
    vl_inode_unref(d);
    t_env_free(e);
}


static void
test_inconsistent_drops(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *d = t_mkdir(e, e->root, "d", 0, true);
    struct vl_test_result res = {0};
    vl_inode_t *fresh;
    vl_gfid_t gfid;
    vl_req_t *r;

    (void)state;
    t_entry(e, VL_FOP_CREATE, d, "a", 0);
    t_lookup_down(e, d, "a", -ENOENT); /* "a" is in the set */
    assert_int_equal(t_dump_value(e, "inconsistent"), 1);
    t_lookup_down(e, d, "b", -ENOENT);
    vl_inode_unref(d);

    /* A name found in a directory whose mkdir is still in flight: it
     * was not empty, so it is not leased. */
    r = t_mkdir_start(e, e->root, "d2", &gfid, &fresh, &res);
    {
        struct vl_test_result lres = {0};
        vl_inode_t *pd = vl_inode_get(e->g->graph->itable, &gfid, S_IFDIR);
        vl_req_t *l = t_lookup_start(e, pd, "x", &lres);

        vl_unwind(l, 0);
        t_done_once(&lres, 0);
        vl_inode_unref(pd);
    }
    d = t_mkdir_finish(e, r, &gfid, fresh, &res, 0, true);
    t_lookup_down(e, d, "y", -ENOENT);
    assert_int_equal(t_dump_value(e, "inconsistent"), 2);
    vl_inode_unref(d);
    t_env_free(e);
}


static void
test_lookup_raced_by_own_fops(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *d = t_mkdir(e, e->root, "d", 0, true);
    struct vl_test_result res = {0};
    vl_req_t *l;

    (void)state;
    t_entry(e, VL_FOP_CREATE, d, "a", 0);
    /* The lookup of "a" runs at the brick between our unlink and our
     * create of "a" again: its -ENOENT is old news, not a stranger. */
    l = t_lookup_start(e, d, "a", &res);
    t_entry(e, VL_FOP_UNLINK, d, "a", 0);
    t_entry(e, VL_FOP_CREATE, d, "a", 0);
    vl_unwind(l, -ENOENT);
    t_done_once(&res, -ENOENT);
    t_lookup_local(e, d, "b");
    assert_int_equal(t_dump_value(e, "inconsistent"), 0);
    vl_inode_unref(d);
    t_env_free(e);
}


static void
test_timeout(void **state)
{
    struct t_env *e = t_env_new(" option timeout 10s\n");
    vl_inode_t *d;

    (void)state;
    nlc_test_clock_set(1000000);
    d = t_mkdir(e, e->root, "d", 0, true);
    nlc_test_clock_set(1000000 + 9999);
    t_lookup_local(e, d, "x");
    nlc_test_clock_set(1000000 + 10000);
    t_lookup_down(e, d, "x", -ENOENT);
    assert_int_equal(t_dump_value(e, "expired"), 1);
    vl_inode_unref(d);
    t_env_free(e);

    /* 0: a lease is never used. */
    e = t_env_new(" option timeout 0\n");
    d = t_mkdir(e, e->root, "d", 0, true);
    t_lookup_down(e, d, "x", -ENOENT);
    vl_inode_unref(d);
    t_env_free(e);
}


static void
test_limit(void **state)
{
    char opts[64];
    struct t_env *e;
    vl_inode_t *d[3];

    (void)state;
    /* Room for two empty records. */
    snprintf(opts, sizeof(opts), " option limit %zu\n",
             2 * sizeof(struct nlc_dir));
    e = t_env_new(opts);
    d[0] = t_mkdir(e, e->root, "d0", 0, true);
    d[1] = t_mkdir(e, e->root, "d1", 0, true);
    t_lookup_local(e, d[0], "x"); /* d0 is now the most recently used */
    d[2] = t_mkdir(e, e->root, "d2", 0, true);
    t_lookup_down(e, d[1], "x", -ENOENT);
    t_lookup_local(e, d[0], "x");
    t_lookup_local(e, d[2], "x");
    assert_int_equal(t_dump_value(e, "evictions"), 1);
    /* A name makes d2 too big to share the room: d0 goes. */
    t_entry(e, VL_FOP_CREATE, d[2], "a", 0);
    t_lookup_down(e, d[0], "x", -ENOENT);
    assert_true(t_dump_value(e, "bytes") <= 2 * sizeof(struct nlc_dir));
    for (int i = 0; i < 3; i++)
        vl_inode_unref(d[i]);
    t_env_free(e);

    /* limit 0: no lease asked for at all. */
    e = t_env_new(" option limit 0\n");
    {
        struct vl_test_result res = {0};
        vl_req_t *req = vl_req_new(e->g->graph->top, VL_FOP_MKDIR);
        vl_inode_t *fresh = vl_inode_new(e->g->graph->itable);

        VL_ARGS(req, mkdir)->loc.parent = e->root;
        VL_ARGS(req, mkdir)->loc.name = "d";
        VL_ARGS(req, mkdir)->loc.inode = fresh;
        vl_gfid_generate(&VL_ARGS(req, mkdir)->gfid);
        vl_test_wind(req, &res);
        req = t_pop(e, VL_FOP_MKDIR);
        assert_false(req->args.mkdir.want_lease);
        vl_unwind(req, 0);
        t_done_once(&res, 0);
        vl_inode_unref(fresh);
        t_env_free(e);
    }
}


static void
test_reconfigure(void **state)
{
    struct t_env *e = t_env_new("");
    vl_inode_t *d = t_mkdir(e, e->root, "d", 0, true);
    struct nlc_conf conf = *VL_CONF(e->nlc, struct nlc_conf);
    vl_err_t err;

    (void)state;
    t_lookup_local(e, d, "x");
    conf.limit = 0;
    assert_int_equal(e->nlc->cls->reconfigure(e->nlc, &conf, &err), 0);
    t_lookup_down(e, d, "x", -ENOENT);
    assert_int_equal(t_dump_value(e, "evictions"), 1);
    vl_inode_unref(d);
    t_env_free(e);
}


/* A leased directory, then a create and a mkdir in it, then lookups of
 * the created name and another, failing the n-th allocation of each
 * phase for n = 1, 2, ...: each request is answered once, and what went
 * wrong never makes a lookup answer ENOENT here for a name made. */
static void
test_enomem(void **state)
{
    (void)state;
    for (long n = 1; n < 200; n++) {
        struct t_env *e = t_env_new("");
        vl_inode_t *d = t_mkdir(e, e->root, "d", 0, true);
        vl_inode_t *in[4];
        struct vl_test_result res[4] = {{0}};
        vl_req_t *req[4];
        long used1, used2;

        for (int i = 0; i < 4; i++)
            in[i] = vl_inode_new(e->g->graph->itable);
        req[0] = vl_req_new(e->g->graph->top, VL_FOP_CREATE);
        VL_ARGS(req[0], create)->loc =
            (struct vl_loc){.parent = d, .name = "a", .inode = in[0]};
        req[1] = vl_req_new(e->g->graph->top, VL_FOP_MKDIR);
        VL_ARGS(req[1], mkdir)->loc =
            (struct vl_loc){.parent = d, .name = "m", .inode = in[1]};
        vl_gfid_generate(&VL_ARGS(req[1], mkdir)->gfid);
        req[2] = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);
        VL_ARGS(req[2], lookup)->loc =
            (struct vl_loc){.parent = d, .name = "a", .inode = in[2]};
        req[3] = vl_req_new(e->g->graph->top, VL_FOP_LOOKUP);
        VL_ARGS(req[3], lookup)->loc =
            (struct vl_loc){.parent = d, .name = "c", .inode = in[3]};
        vl_mem_fail_at(n);
        vl_test_wind(req[0], &res[0]);
        vl_test_wind(req[1], &res[1]);
        used1 = vl_mem_alloc_count();
        vl_mem_fail_at(0);
        /* What reaches the mock succeeds; then "a" exists if its create
         * did, and "c" does not. */
        while (vl_mock_pending(e->mock) > 0) {
            vl_req_t *r = vl_mock_pop(e->mock);

            r->reply.is_leased = r->op == VL_FOP_MKDIR;
            vl_unwind(r, 0);
        }
        vl_mem_fail_at(n);
        vl_test_wind(req[2], &res[2]);
        vl_test_wind(req[3], &res[3]);
        used2 = vl_mem_alloc_count();
        vl_mem_fail_at(0);
        while (vl_mock_pending(e->mock) > 0) {
            vl_req_t *r = vl_mock_pop(e->mock);

            vl_unwind(r, strcmp(r->args.lookup.loc.name, "a") == 0
                                 && res[0].status == 0
                             ? 0
                             : -ENOENT);
        }
        if (res[0].status == 0)
            assert_int_not_equal(res[2].status, -ENOENT);
        for (int i = 0; i < 4; i++) {
            assert_true(res[i].is_done);
            assert_int_equal(res[i].n_done, 1);
            vl_test_result_clear(&res[i]);
            vl_inode_unref(in[i]);
        }
        vl_inode_unref(d);
        t_env_free(e);
        if (used1 < n && used2 < n)
            break;
    }
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_mkdir_granted),
        cmocka_unit_test(test_mkdir_not_granted),
        cmocka_unit_test(test_create_name_in_set),
        cmocka_unit_test(test_unlink_removes),
        cmocka_unit_test(test_rename_two_dirs),
        cmocka_unit_test(test_failure_drops),
        cmocka_unit_test(test_upcall_gfid),
        cmocka_unit_test(test_upcall_all_and_child_down),
        cmocka_unit_test(test_upcall_while_pending),
        cmocka_unit_test(test_lookup_during_create),
        cmocka_unit_test(test_inconsistent_drops),
        cmocka_unit_test(test_lookup_raced_by_own_fops),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_reconfigure),
        cmocka_unit_test(test_enomem),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
