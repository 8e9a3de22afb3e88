/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-server-squash: protocol/server's identity rules (server-squash.c):
 * which source ports are trusted, root-squash, all-squash, and the
 * exemption of VL_CALLER_PID_INTERNAL from trusted connections only.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/server.h"


static struct vl_caller
caller_of(uint32_t uid, uint32_t gid, uint32_t pid)
{
    struct vl_caller c = {.uid = uid, .gid = gid, .pid = pid,
                          .n_groups = 3, .groups = {0, 10, 20}};

    return c;
}


static void
test_privileged_ports(void **state)
{
    (void)state;
    assert_true(server_port_is_privileged(1023));
    assert_true(server_port_is_privileged(1));
    assert_false(server_port_is_privileged(0));
    assert_false(server_port_is_privileged(1024));
    assert_false(server_port_is_privileged(40000));
}


static void
test_no_squash_by_default(void **state)
{
    struct server_conf conf = {.anonuid = 65534, .anongid = 65534};
    struct vl_caller c = caller_of(0, 0, 42);

    (void)state;
    server_caller_squash(&conf, true, &c);
    assert_int_equal(c.uid, 0);
    assert_int_equal(c.gid, 0);
    assert_int_equal(c.groups[0], 0);
    assert_int_equal(c.pid, 42);
}


static void
test_root_squash(void **state)
{
    struct server_conf conf = {.is_root_squash = true, .anonuid = 65534,
                               .anongid = 65533};
    struct vl_caller c = caller_of(0, 0, 42);
    struct vl_caller u = caller_of(1234, 1234, 42);

    (void)state;
    server_caller_squash(&conf, true, &c);
    assert_int_equal(c.uid, 65534);
    assert_int_equal(c.gid, 65533);
    assert_int_equal(c.n_groups, 3);
    assert_int_equal(c.groups[0], 65533);
    assert_int_equal(c.groups[1], 10);
    /* Others keep their identity. */
    server_caller_squash(&conf, true, &u);
    assert_int_equal(u.uid, 1234);
    assert_int_equal(u.gid, 1234);
}


static void
test_all_squash(void **state)
{
    struct server_conf conf = {.is_all_squash = true, .anonuid = 7,
                               .anongid = 8};
    struct vl_caller u = caller_of(1234, 1234, 42);

    (void)state;
    server_caller_squash(&conf, true, &u);
    assert_int_equal(u.uid, 7);
    assert_int_equal(u.gid, 8);
    assert_int_equal(u.n_groups, 0);
}


static void
test_internal_exempt_only_when_trusted(void **state)
{
    struct server_conf conf = {.is_root_squash = true, .anonuid = 65534,
                               .anongid = 65534};
    struct vl_caller heal = caller_of(0, 0, VL_CALLER_PID_INTERNAL);
    struct vl_caller fake = caller_of(0, 0, VL_CALLER_PID_INTERNAL);

    (void)state;
    server_caller_squash(&conf, true, &heal);
    assert_int_equal(heal.uid, 0);
    assert_int_equal(heal.pid, VL_CALLER_PID_INTERNAL);
    /* From an unprivileged port (allow-insecure on) the claim is lost. */
    server_caller_squash(&conf, false, &fake);
    assert_int_equal(fake.uid, 65534);
    assert_int_equal(fake.pid, 0);
    /* Even without squashing, the pid does not survive. */
    conf.is_root_squash = false;
    fake = caller_of(0, 0, VL_CALLER_PID_INTERNAL);
    server_caller_squash(&conf, false, &fake);
    assert_int_equal(fake.pid, 0);
}


static void
test_groups_bounded(void **state)
{
    struct server_conf conf = {.is_root_squash = true, .anonuid = 1,
                               .anongid = 1};
    struct vl_caller c = caller_of(5, 5, 1);

    (void)state;
    c.n_groups = 1000; /* a decoder never gives this; bounded anyway */
    server_caller_squash(&conf, true, &c);
    assert_int_equal(c.n_groups, VL_MAX_GROUPS);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_privileged_ports),
        cmocka_unit_test(test_no_squash_by_default),
        cmocka_unit_test(test_root_squash),
        cmocka_unit_test(test_all_squash),
        cmocka_unit_test(test_internal_exempt_only_when_trusted),
        cmocka_unit_test(test_groups_bounded),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
