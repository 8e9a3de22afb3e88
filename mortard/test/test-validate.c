/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-validate: volume names, brick syntax and checks, option key
 * resolution (prefix keys, GlusterFS aliases, values), volfile generation
 * with options, and the output renderers.
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
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "mortard/mortard.h"
#include "xlators/builtin.h"

static char tmpdir[] = "/tmp/test-validate.XXXXXX";


static void
test_volname(void **state)
{
    vl_err_t err = {.msg = ""};
    char longname[80];

    (void)state;
    assert_int_equal(md_check_volname("vol_1-a", &err), 0);
    assert_int_equal(md_check_volname("-v", &err), -EINVAL);
    assert_int_equal(md_check_volname("a b", &err), -EINVAL);
    assert_int_equal(md_check_volname("a/b", &err), -EINVAL);
    assert_int_equal(md_check_volname("", &err), -EINVAL);
    assert_int_equal(md_check_volname("all", &err), -EINVAL);
    memset(longname, 'a', 65);
    longname[65] = '\0';
    assert_int_equal(md_check_volname(longname, &err), -EINVAL);
    longname[64] = '\0';
    assert_int_equal(md_check_volname(longname, &err), 0);
}


static void
test_parse_brick(void **state)
{
    vl_err_t err = {.msg = ""};
    char *h, *p;

    (void)state;
    assert_int_equal(md_parse_brick("h1:/data/b1/", &h, &p, &err), 0);
    assert_string_equal(h, "h1");
    assert_string_equal(p, "/data/b1");
    free(h);
    free(p);
    assert_int_equal(md_parse_brick("[::1]:/d", &h, &p, &err), 0);
    assert_string_equal(h, "::1");
    free(h);
    free(p);
    assert_int_equal(md_parse_brick("/data/b1", &h, &p, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "wrong brick type"));
    assert_int_equal(md_parse_brick("h:rel/path", &h, &p, &err), -EINVAL);
    assert_int_equal(md_parse_brick("h:/a/../b", &h, &p, &err), -EINVAL);
    assert_int_equal(md_parse_brick("h:/", &h, &p, &err), -EINVAL);
    assert_int_equal(md_parse_brick(":/x", &h, &p, &err), -EINVAL);
}


static void
test_host_local(void **state)
{
    (void)state;
    assert_true(md_host_is_local("localhost"));
    assert_true(md_host_is_local("127.0.0.1"));
    assert_true(md_host_is_local("127.0.0.2"));
    assert_false(md_host_is_local("192.0.2.77")); /* TEST-NET-1 */
}


static void
test_check_brick(void **state)
{
    struct md_state st = {.brick_base_port = 24200};
    struct md_volume v = {.name = "v"};
    struct md_brick b = {.host = "127.0.0.1", .port = 24200, .id = "brick0"};
    vl_err_t err = {.msg = ""};
    char path[256], other[256];

    (void)state;
    snprintf(path, sizeof(path), "%s/b1", tmpdir);
    b.path = path;
    v.bricks = &b;
    v.n_bricks = 1;
    st.vols = &v;
    snprintf(other, sizeof(other), "%s/b1/sub", tmpdir);
    assert_int_equal(md_check_brick(&st, "127.0.0.1", other, true, &err),
                     -EEXIST);
    assert_non_null(strstr(err.msg, "is inside brick"));
    assert_null(strstr(err.msg, "is contains"));
    assert_int_equal(md_check_brick(&st, "127.0.0.1", tmpdir, true, &err),
                     -EEXIST);
    assert_non_null(strstr(err.msg, " contains brick"));
    assert_null(strstr(err.msg, "is contains"));
    assert_int_equal(md_check_brick(&st, "127.0.0.1", path, true, &err),
                     -EEXIST);
    st.vols = NULL;
    assert_int_equal(md_check_brick(&st, "192.0.2.77", path, true, &err),
                     -EHOSTUNREACH);
    /* Missing: fine (created at commit). A file: refused. */
    assert_int_equal(md_check_brick(&st, "127.0.0.1", path, true, &err), 0);
    snprintf(other, sizeof(other), "%s/file", tmpdir);
    assert_int_equal(md_write_atomic(tmpdir, "file", "x", 1, &err), 0);
    assert_int_equal(md_check_brick(&st, "localhost", other, true, &err),
                     -ENOTDIR);
    /* Only the brick directory is made: a missing parent (a typo) or a
     * parent that is a file is refused, with or without force, and
     * nothing is created. */
    snprintf(other, sizeof(other), "%s/no/such/b", tmpdir);
    assert_int_equal(md_check_brick(&st, "127.0.0.1", other, true, &err),
                     -ENOENT);
    assert_non_null(strstr(err.msg, "Failed to create brick directory for "
                           "brick 127.0.0.1:"));
    assert_non_null(strstr(err.msg, "No such file or directory"));
    assert_int_equal(md_check_brick(&st, "127.0.0.1", other, false, &err),
                     -ENOENT);
    snprintf(other, sizeof(other), "%s/no", tmpdir);
    assert_int_equal(access(other, F_OK), -1);
    snprintf(other, sizeof(other), "%s/file/b", tmpdir);
    assert_int_equal(md_check_brick(&st, "127.0.0.1", other, true, &err),
                     -ENOTDIR);
    /* A directory with a volume id is taken. */
    assert_int_equal(mkdir(path, 0755), 0);
    if (setxattr(path, MD_VOLID_XATTR, "0123456789abcdef", 16, 0) == 0) {
        assert_int_equal(md_check_brick(&st, "127.0.0.1", path, true,
                                        &err), -EEXIST);
        assert_non_null(strstr(err.msg, "already part of a volume"));
        removexattr(path, MD_VOLID_XATTR);
    }
    assert_int_equal(md_check_brick(&st, "127.0.0.1", path, true, &err), 0);
}


static void
test_option_resolve(void **state)
{
    const vl_xlator_class_t *cls;
    const vl_option_t *opt;
    vl_err_t err = {.msg = ""};
    char canon[256];

    (void)state;
    assert_int_equal(md_option_resolve("io-threads.thread-count", "4", &cls,
                                       &opt, canon, sizeof(canon), &err), 0);
    assert_string_equal(canon, "io-threads.thread-count");
    assert_int_equal(md_option_resolve("performance.io-thread-count", "4",
                                       &cls, &opt, canon, sizeof(canon),
                                       &err), 0);
    assert_string_equal(canon, "io-threads.thread-count");
    assert_int_equal(md_option_resolve("auth.allow", "127.0.0.1,10.*", &cls,
                                       &opt, canon, sizeof(canon), &err), 0);
    assert_string_equal(canon, "server.auth.addr.*.allow");
    assert_string_equal(cls->prefix, "server");
    assert_int_equal(md_option_resolve("storage.reserve", "5", &cls, &opt,
                                       canon, sizeof(canon), &err), 0);
    assert_string_equal(canon, "posix.reserve");
    assert_int_equal(md_option_resolve("io-threads.thread-count", "0", &cls,
                                       &opt, canon, sizeof(canon), &err),
                     -EINVAL);
    assert_int_equal(md_option_resolve("io-threads.thread-count", "many",
                                       &cls, &opt, canon, sizeof(canon),
                                       &err), -EINVAL);
    assert_int_equal(md_option_resolve("io-threads.thread-count", "4\n5",
                                       &cls, &opt, canon, sizeof(canon),
                                       &err), -EINVAL);
    assert_int_equal(md_option_resolve("no.such.key", "1", &cls, &opt, canon,
                                       sizeof(canon), &err), -ENOENT);
    assert_string_equal(err.msg, "option no.such.key does not exist");
    /* Known but not settable: the brick directory. */
    assert_int_equal(md_option_resolve("posix.directory", "/x", &cls, &opt,
                                       canon, sizeof(canon), &err), -EPERM);
    assert_int_equal(md_option_resolve("thread-count", "4", &cls, &opt,
                                       canon, sizeof(canon), &err), -ENOENT);
}


static void
test_volgen(void **state)
{
    struct md_state st = {.bind_addr = "127.0.0.1"};
    struct md_brick b = {.host = "h1", .path = "/d/b", .port = 24222,
                         .id = "brick0"};
    struct md_volume v = {.name = "vv", .bricks = &b, .n_bricks = 1};
    vl_err_t err = {.msg = ""};
    vl_volfile_t *vf;
    char *text;

    (void)state;
    assert_int_equal(md_vol_opt_set(&v, "server.auth.addr.*.allow", "10.*"),
                     0);
    assert_int_equal(md_vol_opt_set(&v, "client.ping-timeout", "7"), 0);
    text = md_volgen_brick(&st, &v, &b);
    assert_non_null(text);
    assert_non_null(strstr(text, "option auth.addr.vv-brick0.allow 10.*"));
    assert_non_null(strstr(text, "option transport.socket.listen-port "
                                 "24222"));
    /* The lease registry right under io-threads, over locks. */
    assert_non_null(strstr(text, "volume vv-upcall\n    type "
                                 "features/upcall\n    subvolumes "
                                 "vv-locks\n"));
    assert_non_null(strstr(text, "type performance/io-threads\n    "
                                 "subvolumes vv-upcall\n"));
    vf = vl_volfile_parse(text, strlen(text), "brick", &err);
    assert_non_null(vf);
    assert_non_null(vl_volfile_top(vf, &err));
    assert_string_equal(vl_volfile_top(vf, &err)->type, "protocol/server");
    vl_volfile_free(vf);
    free(text);
    text = md_volgen_client(&v);
    assert_non_null(strstr(text, "option remote-subvolume vv-brick0"));
    assert_non_null(strstr(text, "option ping-timeout 7"));
    assert_null(strstr(text, "auth"));
    vf = vl_volfile_parse(text, strlen(text), "client", &err);
    assert_non_null(vf);
    vl_volfile_free(vf);
    free(text);
    for (size_t i = 0; i < v.n_opts; i++) {
        free(v.opts[i].key);
        free(v.opts[i].value);
    }
    free(v.opts);
}


static void
test_render(void **state)
{
    struct md_result r;
    struct md_node *l;
    char *out;

    (void)state;
    md_result_init(&r);
    md_sbuf_printf(&r.text, "plain %d\n", 1);
    l = md_node_add(r.root, "vols", NULL);
    l->is_list = true;
    md_node_add(l, "v", "a<b");
    md_node_add(l, "v", "q\"");
    assert_int_equal(md_render(&r, 0, &out), 0);
    assert_string_equal(out, "plain 1\n");
    free(out);
    assert_int_equal(md_render(&r, 1, &out), 0);
    assert_non_null(strstr(out, "<opRet>0</opRet>"));
    assert_non_null(strstr(out, "<v>a&lt;b</v>"));
    free(out);
    assert_int_equal(md_render(&r, 2, &out), 0);
    assert_string_equal(out, "{\"opRet\":0,\"opErrno\":0,\"opErrstr\":\"\","
                             "\"vols\":[\"a<b\",\"q\\\"\"]}\n");
    free(out);
    md_result_fail(&r, 1, 2, "bad %s", "thing");
    assert_int_equal(md_render(&r, 1, &out), 0);
    assert_non_null(strstr(out, "<opRet>-1</opRet>"));
    assert_non_null(strstr(out, "<opErrstr>bad thing</opErrstr>"));
    assert_null(strstr(out, "<vols>"));
    free(out);
    md_result_clear(&r);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_volname),
        cmocka_unit_test(test_parse_brick),
        cmocka_unit_test(test_host_local),
        cmocka_unit_test(test_check_brick),
        cmocka_unit_test(test_option_resolve),
        cmocka_unit_test(test_volgen),
        cmocka_unit_test(test_render),
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
