/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-graph: build validation errors, init order and failure, notify,
 * readiness, reconfigure (live, -EXDEV, rollback) and statedump. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "vl-test.h"

struct t_conf {
    uint64_t count;  /* live */
    bool is_fail;    /* init fails when on */
    char *label;     /* not live */
    bool is_refuse;  /* reconfigure refuses when new conf has it */
};

static const vl_option_t t_opts[] = {
    VL_OPT_UINT("count", struct t_conf, count, .def = "4", .min = 1,
                .max = 16, .flags = VL_OPT_LIVE, .doc = "d"),
    VL_OPT_BOOL("fail-init", struct t_conf, is_fail, .def = "off",
                .doc = "d"),
    VL_OPT_STR("label", struct t_conf, label, .def = "x", .doc = "d"),
    VL_OPT_BOOL("refuse", struct t_conf, is_refuse, .def = "off",
                .flags = VL_OPT_LIVE, .doc = "d"),
    VL_OPT_END,
};

static char init_log[64];   /* first letters of names, in init order */
static char fini_log[64];   /* same for fini */
static int n_reconf;        /* successful reconfigure() calls */
static uint64_t applied[8]; /* count seen by reconfigure, per name */


static int
t_init(vl_xlator_t *xl, vl_err_t *err)
{
    if (VL_CONF(xl, struct t_conf)->is_fail) {
        vl_err_set(err, "told to fail");
        return -EINVAL;
    }
    strncat(init_log, xl->name, 1);
    return 0;
}


static void
t_fini(vl_xlator_t *xl)
{
    strncat(fini_log, xl->name, 1);
}


static int
t_reconfigure(vl_xlator_t *xl, const void *new_conf, vl_err_t *err)
{
    const struct t_conf *c = new_conf;

    if (c->is_refuse) {
        vl_err_set(err, "refused");
        return -EINVAL;
    }
    applied[xl->name[0] - 'a'] = c->count;
    n_reconf++;
    return 0;
}


static const vl_xlator_class_t cls_node = {
    .abi = VL_XLATOR_ABI, .type = "test/node",
    .conf_size = sizeof(struct t_conf), .options = t_opts,
    .init = t_init, .fini = t_fini, .reconfigure = t_reconfigure,
};
static const vl_xlator_class_t cls_leaf = {
    .abi = VL_XLATOR_ABI, .type = "test/gleaf", .flags = VL_XL_LEAF,
    .conf_size = sizeof(struct t_conf), .options = t_opts,
    .init = t_init, .fini = t_fini, .reconfigure = t_reconfigure,
};
static const vl_xlator_class_t cls_one = {
    .abi = VL_XLATOR_ABI, .type = "test/one", .flags = VL_XL_ONE_CHILD,
    .conf_size = sizeof(struct t_conf), .options = t_opts,
    .init = t_init, .fini = t_fini,
};
static const vl_xlator_class_t cls_many = {
    .abi = VL_XLATOR_ABI, .type = "test/many",
    .flags = VL_XL_MANY_CHILDREN,
};
static const vl_xlator_class_t cls_top = {
    .abi = VL_XLATOR_ABI, .type = "test/top",
    .flags = VL_XL_ONE_CHILD | VL_XL_TOP_ONLY,
};


static int
setup(void **state)
{
    vl_global_init();
    vl_log_set_level(VL_LOG_CRITICAL);
    vl_test_register_mock();
    assert_int_equal(vl_registry_add(&cls_node), 0);
    assert_int_equal(vl_registry_add(&cls_leaf), 0);
    assert_int_equal(vl_registry_add(&cls_one), 0);
    assert_int_equal(vl_registry_add(&cls_many), 0);
    assert_int_equal(vl_registry_add(&cls_top), 0);
    return 0;
}


static void
test_registry(void **state)
{
    static const vl_xlator_class_t clash = {
        .abi = VL_XLATOR_ABI, .type = "test/node",
    };
    static const vl_xlator_class_t old_abi = {.abi = 99, .type = "t/x"};

    assert_int_equal(vl_registry_add(&cls_node), 0); /* idempotent */
    assert_int_equal(vl_registry_add(&clash), -EEXIST);
    assert_int_equal(vl_registry_add(&old_abi), -EINVAL);
    assert_ptr_equal(vl_registry_find("test/node"), &cls_node);
    assert_null(vl_registry_find("test/none"));
}


static void
test_build_errors(void **state)
{
    static const struct {
        const char *text;
        const char *want;
    } cases[] = {
        {"volume a\n type test/nope\nend-volume\n",
         "test.vol:1: volume 'a': unknown type 'test/nope'"},
        {"volume a\n type test/gleaf\n option bogus 1\nend-volume\n",
         "test.vol:1: volume 'a': unknown option 'bogus'"},
        {"volume a\n type test/gleaf\n option count 17\nend-volume\n",
         "volume 'a': option 'count': 17 is out of range 1..16"},
        {"volume a\n type test/gleaf\n option count many\nend-volume\n",
         "option 'count': 'many' is not a valid uint"},
        {"volume a\n type test/gleaf\nend-volume\n"
         "volume b\n type test/gleaf\n subvolumes a\nend-volume\n",
         "test.vol:4: volume 'b' (type test/gleaf) takes no subvolumes"},
        {"volume a\n type test/gleaf\nend-volume\n"
         "volume b\n type test/gleaf\nend-volume\n"
         "volume c\n type test/one\n subvolumes a b\nend-volume\n",
         "volume 'c' (type test/one) needs exactly one subvolume, has 2"},
        {"volume c\n type test/one\nend-volume\n",
         "needs exactly one subvolume, has 0"},
        {"volume c\n type test/many\nend-volume\n",
         "needs at least one subvolume"},
        {"volume a\n type test/gleaf\nend-volume\n"
         "volume b\n type test/gleaf\nend-volume\n",
         "several top volumes: 'a' (line 1) and 'b' (line 4)"},
        {"volume a\n type test/gleaf\nend-volume\n"
         "volume t\n type test/top\n subvolumes a\nend-volume\n"
         "volume u\n type test/one\n subvolumes t\nend-volume\n",
         "volume 't' (type test/top) must be the top of the graph"},
    };
    size_t i;

    for (i = 0; i < VL_ARRAY_SIZE(cases); i++) {
        vl_err_t err = {{0}};
        struct vl_test_graph *g = vl_test_graph_new(cases[i].text, &err);

        if (g != NULL)
            fail_msg("case %zu built", i);
        if (strstr(err.msg, cases[i].want) == NULL)
            fail_msg("case %zu: got '%s', want '%s'", i, err.msg,
                     cases[i].want);
    }
}


static void
test_init_order_and_failure(void **state)
{
    static const char ok[] =
        "volume a\n type test/gleaf\nend-volume\n"
        "volume b\n type test/gleaf\nend-volume\n"
        "volume c\n type test/node\n subvolumes a b\nend-volume\n"
        "volume d\n type test/one\n subvolumes c\nend-volume\n";
    static const char bad[] =
        "volume a\n type test/gleaf\nend-volume\n"
        "volume b\n type test/gleaf\n option fail-init on\nend-volume\n"
        "volume c\n type test/node\n subvolumes a b\nend-volume\n";
    vl_err_t err = {{0}};
    struct vl_test_graph *g;

    init_log[0] = fini_log[0] = '\0';
    g = vl_test_graph_new(ok, &err);
    assert_non_null(g);
    assert_string_equal(init_log, "abcd"); /* bottom-up */
    assert_ptr_equal(g->graph->top, vl_test_graph_xl(g, "d"));
    assert_int_equal(vl_test_graph_xl(g, "a")->n_parents, 1);
    assert_ptr_equal(vl_test_graph_xl(g, "a")->parents[0],
                     vl_test_graph_xl(g, "c"));
    vl_test_graph_free(g);
    assert_string_equal(fini_log, "dcba"); /* top-down */

    init_log[0] = fini_log[0] = '\0';
    g = vl_test_graph_new(bad, &err);
    assert_null(g);
    assert_string_equal(err.msg, "volume 'b' (type test/gleaf): init "
                                 "failed: told to fail");
    assert_string_equal(init_log, "a");
    assert_string_equal(fini_log, "a");
}


static void
test_notify_and_ready(void **state)
{
    vl_err_t err = {{0}};
    struct vl_test_graph *g = vl_test_graph_new(
        "volume m\n type debug/mock\nend-volume\n"
        "volume o\n type test/one\n subvolumes m\nend-volume\n", &err);
    char reason[64];

    assert_non_null(g);
    /* The mock answers PARENT_UP with CHILD_UP, which reaches the top. */
    assert_true(vl_test_graph_xl(g, "m")->is_up);
    assert_true(vl_test_graph_xl(g, "o")->is_up);
    vl_notify_parents(vl_test_graph_xl(g, "m"), VL_EV_CHILD_DOWN);
    assert_false(vl_test_graph_xl(g, "o")->is_up);

    vl_graph_set_last_error(g->graph, "127.0.0.1:1: Connection refused");
    assert_int_equal(vl_graph_wait_ready(g->graph, 10, reason,
                                         sizeof(reason)), -ETIMEDOUT);
    assert_string_equal(reason, "127.0.0.1:1: Connection refused");
    vl_graph_set_ready(g->graph, 0, "mounted");
    assert_int_equal(vl_graph_wait_ready(g->graph, -1, reason,
                                         sizeof(reason)), 0);
    assert_string_equal(reason, "mounted");
    vl_test_graph_free(g);
}


static vl_volfile_t *
vf(const char *text)
{
    vl_err_t err = {{0}};
    vl_volfile_t *v = vl_volfile_parse(text, strlen(text), "new.vol", &err);

    if (v == NULL)
        fail_msg("%s", err.msg);
    return v;
}


static void
test_reconfigure(void **state)
{
    static const char base[] =
        "volume a\n type test/gleaf\n option label L\nend-volume\n"
        "volume b\n type test/node\n subvolumes a\nend-volume\n";
    vl_err_t err = {{0}};
    struct vl_test_graph *g = vl_test_graph_new(base, &err);
    vl_xlator_t *a;
    vl_xlator_t *b;
    vl_volfile_t *v;

    assert_non_null(g);
    a = vl_test_graph_xl(g, "a");
    b = vl_test_graph_xl(g, "b");
    n_reconf = 0;

    /* Same options: nothing to do. */
    v = vf(base);
    assert_int_equal(vl_graph_reconfigure(g->graph, v, &err), 0);
    assert_int_equal(n_reconf, 0);
    vl_volfile_free(v);

    /* A live option changes in place. */
    v = vf("volume a\n type test/gleaf\n option label L\n option count 9\n"
           "end-volume\n"
           "volume b\n type test/node\n subvolumes a\nend-volume\n");
    assert_int_equal(vl_graph_reconfigure(g->graph, v, &err), 0);
    vl_volfile_free(v);
    assert_int_equal(n_reconf, 1);
    assert_int_equal(applied[0], 9);
    assert_int_equal(VL_CONF(a, struct t_conf)->count, 9);
    assert_int_equal(VL_CONF(b, struct t_conf)->count, 4);

    /* A non-live option needs a new graph. */
    v = vf("volume a\n type test/gleaf\n option label M\n option count 9\n"
           "end-volume\n"
           "volume b\n type test/node\n subvolumes a\nend-volume\n");
    assert_int_equal(vl_graph_reconfigure(g->graph, v, &err), -EXDEV);
    assert_non_null(strstr(err.msg, "'label'"));
    vl_volfile_free(v);

    /* A different shape too. */
    v = vf("volume a\n type test/gleaf\nend-volume\n");
    assert_int_equal(vl_graph_reconfigure(g->graph, v, &err), -EXDEV);
    vl_volfile_free(v);

    /* A bad value is -EINVAL. */
    v = vf("volume a\n type test/gleaf\n option count 99\nend-volume\n"
           "volume b\n type test/node\n subvolumes a\nend-volume\n");
    assert_int_equal(vl_graph_reconfigure(g->graph, v, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "out of range"));
    vl_volfile_free(v);

    /* b refuses: a's change is rolled back. */
    n_reconf = 0;
    v = vf("volume a\n type test/gleaf\n option label L\n option count 2\n"
           "end-volume\n"
           "volume b\n type test/node\n option refuse on\n subvolumes a\n"
           "end-volume\n");
    assert_int_equal(vl_graph_reconfigure(g->graph, v, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "refused"));
    vl_volfile_free(v);
    assert_int_equal(VL_CONF(a, struct t_conf)->count, 9);
    assert_int_equal(applied[0], 9); /* reconfigured back */
    assert_false(VL_CONF(b, struct t_conf)->is_refuse);
    vl_test_graph_free(g);
}


/* Reconfigure retires the old conf until the requests alive at the swap
 * are gone, and toggling an option many times does not grow memory. */
static void
test_reconfigure_retires_conf(void **state)
{
    static const char fmt[] =
        "volume mk\n type debug/mock\nend-volume\n"
        "volume b\n type test/node\n option count %d\n subvolumes mk\n"
        "end-volume\n";
    char text[sizeof(fmt) + 16];
    vl_err_t err = {{0}};
    struct vl_test_graph *g;
    struct vl_test_result res = {0};
    struct vl_mem_stat base, now;
    vl_volfile_t *v;
    vl_xlator_t *up;
    vl_req_t *req;
    int i;

    snprintf(text, sizeof(text), fmt, 1);
    g = vl_test_graph_new(text, &err);
    assert_non_null(g);
    up = vl_test_graph_xl(g, "b");
    vl_mem_stat_total(NULL, &base);

    for (i = 0; i < 1000; i++) {
        snprintf(text, sizeof(text), fmt, 2 + i % 2);
        v = vf(text);
        assert_int_equal(vl_graph_reconfigure(g->graph, v, &err), 0);
        vl_volfile_free(v);
    }
    vl_mem_stat_total(NULL, &now);
    assert_int_equal(now.objects, base.objects);

    /* A request in flight keeps the old confs alive... */
    req = vl_req_new(g->graph->top, VL_FOP_STAT);
    vl_test_wind(req, &res);
    for (i = 0; i < 3; i++) {
        snprintf(text, sizeof(text), fmt, 5 + i);
        v = vf(text);
        assert_int_equal(vl_graph_reconfigure(g->graph, v, &err), 0);
        vl_volfile_free(v);
    }
    assert_int_equal(VL_CONF(up, struct t_conf)->count, 7);
    vl_mem_stat_total(NULL, &now);
    assert_true(now.objects > base.objects);

    /* ...until it is answered; the next reconfigure reaps them. */
    vl_mock_reply_all(vl_test_graph_xl(g, "mk"), 0);
    assert_int_equal(res.n_done, 1);
    v = vf(text);
    assert_int_equal(vl_graph_reconfigure(g->graph, v, &err), 0);
    vl_volfile_free(v);
    vl_mem_stat_total(NULL, &now);
    assert_int_equal(now.objects, base.objects);
    vl_test_result_clear(&res);
    vl_test_graph_free(g);
}


static void
test_statedump_pending(void **state)
{
    vl_err_t err = {{0}};
    struct vl_test_graph *g = vl_test_graph_new(
        "volume mk\n type debug/mock\nend-volume\n"
        "volume up\n type test/one\n subvolumes mk\nend-volume\n", &err);
    struct vl_test_result res = {0};
    vl_req_t *req;
    char *text = NULL;
    size_t len = 0;
    char want[128];
    FILE *f;

    assert_non_null(g);
    req = vl_req_new(g->graph->top, VL_FOP_OPENDIR);
    vl_test_wind(req, &res);
    f = open_memstream(&text, &len);
    vl_statedump_write(f);
    fclose(f);
    snprintf(want, sizeof(want), "id=%llu fop=opendir age_ms=",
             (unsigned long long)req->id);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, " wound_from=up wound_to=mk\n"));
    assert_non_null(strstr(text, "[xlator up]\ngraph="));
    assert_non_null(strstr(text, "type=test/one\n"));
    assert_non_null(strstr(text, "[xlator mk]\n"));
    assert_non_null(strstr(text, "option.auto-answer=off\n"));
    assert_non_null(strstr(text, "children=mk\n"));
    assert_non_null(strstr(text, "[dump mk]\npending=1\nreceived=1\n"));
    free(text);
    vl_mock_reply_all(vl_test_graph_xl(g, "mk"), 0);
    assert_int_equal(res.n_done, 1);
    vl_test_graph_free(g);
}


static void
dump_extra(FILE *out, void *arg)
{
    fprintf(out, "[extra]\nword=%s\n\n", (const char *)arg);
}


/* A dump file: GlusterFS's start and end markers around the graphs and
 * the caller's sections, published complete (no temporary file left),
 * readable; a directory that cannot be made fails with nothing left. */
static void
test_statedump_file(void **state)
{
    vl_err_t err = {{0}};
    struct vl_test_graph *g = vl_test_graph_new(
        "volume mk\n type debug/mock\nend-volume\n", &err);
    char dir[] = "/tmp/test-graph-dump.XXXXXX", path[4096], bad[4200];
    char want[64], *text = NULL, *last;
    size_t len = 0;
    struct stat sb;
    FILE *f;
    DIR *d;
    struct dirent *e;
    int n = 0;

    (void)state;
    assert_non_null(g);
    assert_non_null(mkdtemp(dir));
    assert_int_equal(vl_statedump_file(dir, "unit", dump_extra, "w1", path,
                                       sizeof(path)), 0);
    snprintf(want, sizeof(want), "/unit.%ld.dump.", (long)getpid());
    assert_non_null(strstr(path, want));
    f = fopen(path, "r");
    assert_non_null(f);
    assert_int_equal(getdelim(&text, &len, '\0', f) > 0, 1);
    fclose(f);
    assert_int_equal(strncmp(text, "DUMP-START-TIME: ", 17), 0);
    /* "YYYY-MM-DD HH:MM:SS.uuuuuu" */
    assert_int_equal(strcspn(text + 17, "\n"), 26);
    assert_int_equal(strncmp(text + 17 + 26, "\n\n[core]\n", 9), 0);
    assert_non_null(strstr(text, "\n[xlator mk]\n"));
    assert_non_null(strstr(text, "\n\n[extra]\nword=w1\n\nDUMP-END-TIME: "));
    last = strstr(text, "DUMP-END-TIME: ");
    assert_int_equal(strlen(last), 15 + 26 + 1);
    assert_int_equal(last[15 + 26], '\n');
    free(text);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0644);
    d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    assert_int_equal(n, 1);
    assert_int_equal(unlink(path), 0);

    /* A file where the directory should be. */
    snprintf(bad, sizeof(bad), "%s/file", dir);
    f = fopen(bad, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(bad, sizeof(bad), "%s/file/sub", dir);
    assert_int_equal(vl_statedump_file(bad, "unit", NULL, NULL, path,
                                       sizeof(path)), -ENOTDIR);
    snprintf(bad, sizeof(bad), "%s/file", dir);
    assert_int_equal(unlink(bad), 0);
    assert_int_equal(rmdir(dir), 0);
    vl_test_graph_free(g);
}


static void
test_check_class(void **state)
{
    static const char *const no_values[] = {NULL};
    static const vl_option_t bad_def[] = {
        VL_OPT_UINT("count", struct t_conf, count, .def = "99", .max = 16,
                    .doc = "d"),
        VL_OPT_END,
    };
    static const vl_option_t no_doc[] = {
        VL_OPT_UINT("count", struct t_conf, count), VL_OPT_END,
    };
    static const vl_option_t bad_enum[] = {
        VL_OPT_ENUM("m", struct { int m; }, m, .values = no_values,
                    .doc = "d"),
        VL_OPT_END,
    };
    vl_xlator_class_t c = cls_node;
    vl_err_t err = {{0}};

    assert_int_equal(vl_test_check_class(&vl_test_mock_class, &err), 0);
    assert_int_equal(vl_test_check_class(&cls_node, &err), 0);
    c.options = bad_def;
    assert_int_equal(vl_test_check_class(&c, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "default of option 'count'"));
    c.options = no_doc;
    assert_int_equal(vl_test_check_class(&c, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "has no doc"));
    c.options = bad_enum;
    c.conf_size = sizeof(int);
    assert_int_equal(vl_test_check_class(&c, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "enum without values"));
    c.options = t_opts;
    c.conf_size = 4; /* too small for the fields */
    assert_int_equal(vl_test_check_class(&c, &err), -EINVAL);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_reconfigure_retires_conf),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_init_order_and_failure),
        cmocka_unit_test(test_notify_and_ready),
        cmocka_unit_test(test_reconfigure),
        cmocka_unit_test(test_statedump_pending),
        cmocka_unit_test(test_statedump_file),
        cmocka_unit_test(test_check_class),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, setup, NULL);
}
