/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-access: features/access over the mock leaf. Covers: a caller's
 * CREATE in a root-owned 0755 directory is refused with EACCES after
 * one STAT and one ACL GETXATTR of the directory (its attributes then
 * cached: the next check sends nothing); root's goes through and its
 * answer's postparent fills the cache; an OPEN of a root-only 0600 file
 * is refused, one granted by a named-user ACL passes; Mortar's internal
 * requests pass; chmod outside the group drops setgid on the way down;
 * an UNLINK in a sticky directory looks the victim up and is refused
 * when the caller owns neither; every path answers once under
 * allocation failure; the class passes the conformance check.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "access.h"
#include "builtin.h"
#include "vl-test.h"

struct t_env {
    struct vl_test_graph *g;
    vl_xlator_t *mock;
    vl_inode_t *dir;  /* a directory, attributes unknown */
    vl_inode_t *file; /* a file in it, attributes unknown */
};

static const char t_volfile[] =
    "volume mock\n"
    "    type debug/mock\n"
    "end-volume\n"
    "volume acc\n"
    "    type features/access-control\n"
    "    subvolumes mock\n"
    "end-volume\n";


static int
t_setup(void **state)
{
    struct t_env *e = calloc(1, sizeof(*e));
    vl_err_t err = {{0}};
    vl_gfid_t gfid;

    assert_non_null(e);
    vl_global_init();
    vl_registry_add(&xl_features_access);
    e->g = vl_test_graph_new(t_volfile, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->mock = vl_test_graph_xl(e->g, "mock");
    vl_gfid_generate(&gfid);
    e->dir = vl_inode_get(e->g->graph->itable, &gfid, S_IFDIR);
    vl_gfid_generate(&gfid);
    e->file = vl_inode_get(e->g->graph->itable, &gfid, S_IFREG);
    *state = e;
    return 0;
}


static int
t_teardown(void **state)
{
    struct t_env *e = *state;

    vl_inode_unref(e->dir);
    vl_inode_unref(e->file);
    vl_test_graph_free(e->g);
    free(e);
    return 0;
}


static vl_req_t *
t_req(struct t_env *e, vl_fop_t op, uint32_t uid, uint32_t gid)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, op);

    assert_non_null(req);
    req->caller.uid = uid;
    req->caller.gid = gid;
    return req;
}


/* Answers the mock's oldest request, which must be op on inode, with
 * attributes (STAT) or an ACL status (GETXATTR). */
static void
t_answer_stat(struct t_env *e, vl_inode_t *inode, uint32_t mode,
              uint32_t uid, uint32_t gid)
{
    vl_req_t *r = vl_mock_pop(e->mock);

    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_STAT);
    assert_ptr_equal(r->args.stat.loc.inode, inode);
    r->reply.iatt.gfid = inode->gfid;
    r->reply.iatt.mode = mode;
    r->reply.iatt.uid = uid;
    r->reply.iatt.gid = gid;
    vl_unwind(r, 0);
}


static void
t_answer_acl(struct t_env *e, const void *acl, size_t len, int status)
{
    vl_req_t *r = vl_mock_pop(e->mock);

    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_GETXATTR);
    assert_string_equal(r->args.getxattr.name, ACCESS_ACL_XATTR);
    if (status == 0) {
        r->reply.xattr = vl_malloc(NULL, len, 0);
        assert_non_null(r->reply.xattr);
        memcpy(r->reply.xattr, acl, len);
        r->reply.xattr_len = (uint32_t)len;
        r->reply.count = (int64_t)len;
    }
    vl_unwind(r, status);
}


static vl_req_t *
t_create(struct t_env *e, uint32_t uid, const char *name)
{
    vl_req_t *req = t_req(e, VL_FOP_CREATE, uid, uid);

    req->args.create.loc.parent = e->dir;
    req->args.create.loc.name = name;
    req->args.create.flags = O_WRONLY | O_CREAT | O_EXCL;
    req->args.create.mode = 0644;
    return req;
}


static void
test_create_refused_then_cached(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};

    vl_test_wind(t_create(e, 1234, "f"), &res);
    t_answer_stat(e, e->dir, S_IFDIR | 0755, 0, 0);
    assert_false(res.is_done);
    t_answer_acl(e, NULL, 0, -ENODATA);
    assert_true(res.is_done);
    assert_int_equal(res.n_done, 1);
    assert_int_equal(res.status, -EACCES);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_CREATE), 0);
    vl_test_result_clear(&res);
    /* Known now: refused without a round trip. */
    vl_test_wind(t_create(e, 1234, "g"), &res);
    assert_true(res.is_done);
    assert_int_equal(res.status, -EACCES);
    assert_int_equal(vl_mock_pending(e->mock), 0);
    vl_test_result_clear(&res);
}


static void
test_root_passes_and_teaches(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    vl_req_t *r;

    vl_test_wind(t_create(e, 0, "f"), &res);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_CREATE);
    r->reply.has_postparent = true;
    r->reply.postparent.gfid = e->dir->gfid;
    r->reply.postparent.mode = S_IFDIR | 0777;
    vl_unwind(r, 0);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    /* The postparent said 0777: the user's create needs only the ACL. */
    vl_test_wind(t_create(e, 1234, "g"), &res);
    t_answer_acl(e, NULL, 0, -ENODATA);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_CREATE);
    vl_unwind(r, 0);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
}


static vl_req_t *
t_open(struct t_env *e, uint32_t uid, int32_t flags)
{
    vl_req_t *req = t_req(e, VL_FOP_OPEN, uid, uid);

    req->args.open.loc.inode = e->file;
    req->args.open.flags = flags;
    return req;
}


static void
test_open_by_mode_and_acl(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    unsigned char acl[4 + 5 * 8] = {2, 0, 0, 0};
    /* user::rw- user:1234:r-- group::--- mask::r-- other::--- */
    const uint16_t tags[5] = {ACCESS_ACL_USER_OBJ, ACCESS_ACL_USER,
                              ACCESS_ACL_GROUP_OBJ, ACCESS_ACL_MASK,
                              ACCESS_ACL_OTHER};
    const uint16_t perms[5] = {6, 4, 0, 4, 0};
    vl_req_t *r;

    vl_test_wind(t_open(e, 1234, O_RDONLY), &res);
    t_answer_stat(e, e->file, S_IFREG | 0600, 0, 0);
    t_answer_acl(e, NULL, 0, -ENODATA);
    assert_int_equal(res.status, -EACCES);
    vl_test_result_clear(&res);
    /* chmod by root forgets the ACL state; then one appears. */
    r = t_req(e, VL_FOP_SETATTR, 0, 0);
    r->args.setattr.loc.inode = e->file;
    r->args.setattr.valid = VL_SET_MODE;
    r->args.setattr.attr.mode = 0640;
    vl_test_wind(r, &res);
    r = vl_mock_pop(e->mock);
    r->reply.iatt.gfid = e->file->gfid;
    r->reply.iatt.mode = S_IFREG | 0640;
    vl_unwind(r, 0);
    vl_test_result_clear(&res);
    for (int i = 0; i < 5; i++) {
        acl[4 + i * 8] = (unsigned char)tags[i];
        acl[4 + i * 8 + 2] = (unsigned char)perms[i];
        acl[4 + i * 8 + 4] = i == 1 ? 0xd2 : 0xff; /* 1234 = 0x4d2 */
        acl[4 + i * 8 + 5] = i == 1 ? 0x04 : 0xff;
        acl[4 + i * 8 + 6] = i == 1 ? 0 : 0xff;
        acl[4 + i * 8 + 7] = i == 1 ? 0 : 0xff;
    }
    vl_test_wind(t_open(e, 1234, O_RDONLY), &res);
    t_answer_acl(e, acl, sizeof(acl), 0);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_OPEN);
    vl_unwind(r, 0);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    /* The ACL grants reading only. */
    vl_test_wind(t_open(e, 1234, O_RDWR), &res);
    assert_int_equal(res.status, -EACCES);
    vl_test_result_clear(&res);
    /* Internal requests pass whatever the uid. */
    r = t_open(e, 1234, O_RDWR);
    r->caller.pid = VL_CALLER_PID_INTERNAL;
    vl_test_wind(r, &res);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    vl_unwind(r, 0);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
}


static void
test_chmod_drops_setgid(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    vl_req_t *req = t_req(e, VL_FOP_SETATTR, 100, 100);
    vl_req_t *r;

    req->args.setattr.loc.inode = e->file;
    req->args.setattr.valid = VL_SET_MODE;
    req->args.setattr.attr.mode = 02755;
    vl_test_wind(req, &res);
    t_answer_stat(e, e->file, S_IFREG | 0644, 100, 200);
    t_answer_acl(e, NULL, 0, -EOPNOTSUPP);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_SETATTR);
    assert_int_equal(r->args.setattr.attr.mode, 0755);
    vl_unwind(r, 0);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
}


static void
test_sticky_unlink(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    vl_req_t *req = t_req(e, VL_FOP_UNLINK, 1234, 1234);
    vl_req_t *r;

    req->args.unlink.loc.parent = e->dir;
    req->args.unlink.loc.name = "theirs";
    vl_test_wind(req, &res);
    t_answer_stat(e, e->dir, S_IFDIR | 01777, 0, 0);
    t_answer_acl(e, NULL, 0, -ENODATA);
    /* The victim is looked up by name for its owner. */
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_LOOKUP);
    assert_string_equal(r->args.lookup.loc.name, "theirs");
    r->reply.iatt.mode = S_IFREG | 0644;
    r->reply.iatt.uid = 99;
    vl_unwind(r, 0);
    assert_true(res.is_done);
    assert_int_equal(res.status, -EPERM);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_UNLINK), 0);
    vl_test_result_clear(&res);
}


/* Every allocation failing in turn: the request is answered once. */
static void
test_enomem_answers_once(void **state)
{
    struct t_env *e = *state;

    for (long n = 1; n < 20; n++) {
        struct vl_test_result res = {0};
        vl_req_t *req = t_create(e, 1234, "f");

        vl_mem_fail_at(n);
        vl_test_wind(req, &res);
        vl_mock_reply_all(e->mock, -ENODATA);
        vl_mem_fail_at(0);
        assert_true(res.is_done);
        assert_int_equal(res.n_done, 1);
        vl_test_result_clear(&res);
    }
}


static void
test_class(void **state)
{
    vl_err_t err = {{0}};

    (void)state;
    if (vl_test_check_class(&xl_features_access, &err) != 0)
        fail_msg("%s", err.msg);
}


/* An ACL larger than the first fetch's buffer: the brick answers
 * ERANGE, the ACL is fetched again with room for the largest, and its
 * entries (a named user at the end of 100) decide. */
static void
test_open_large_acl(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result res = {0};
    enum { N = 100 };
    static unsigned char acl[4 + 8 * (N + 4)];
    size_t len = 0;
    vl_req_t *r;

    acl[len] = 2; /* version */
    len = 4;
    for (int i = 0; i < N + 4; i++) {
        uint16_t tag = i == 0       ? ACCESS_ACL_USER_OBJ
                       : i <= N     ? ACCESS_ACL_USER
                       : i == N + 1 ? ACCESS_ACL_GROUP_OBJ
                       : i == N + 2 ? ACCESS_ACL_MASK
                                    : ACCESS_ACL_OTHER;
        uint32_t id = tag == ACCESS_ACL_USER ? 3000u + (uint32_t)i : 0;

        acl[len] = (unsigned char)tag;
        acl[len + 2] = (unsigned char)(i == N || tag == ACCESS_ACL_MASK
                                               || i == 0 ? 6 : 0);
        for (int k = 0; k < 4; k++)
            acl[len + 4 + k] = (unsigned char)(id >> (8 * k));
        len += 8;
    }
    vl_test_wind(t_open(e, 3000 + N, O_RDWR), &res);
    t_answer_stat(e, e->file, S_IFREG | 0660, 0, 0);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_GETXATTR);
    assert_true(r->args.getxattr.size < len);
    vl_unwind(r, -ERANGE);
    r = vl_mock_peek(e->mock);
    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_GETXATTR);
    assert_int_equal(r->args.getxattr.size, ACCESS_ACL_XATTR_SIZE_MAX);
    t_answer_acl(e, acl, len, 0);
    r = vl_mock_pop(e->mock);
    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_OPEN);
    vl_unwind(r, 0);
    assert_int_equal(res.status, 0);
    vl_test_result_clear(&res);
    /* Cached: the next user named (with ---) is refused without a fetch. */
    vl_test_wind(t_open(e, 3001, O_RDONLY), &res);
    assert_int_equal(res.status, -EACCES);
    vl_test_result_clear(&res);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_refused_then_cached,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_root_passes_and_teaches,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_open_large_acl, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_open_by_mode_and_acl, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_chmod_drops_setgid, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_sticky_unlink, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_enomem_answers_once, t_setup,
                                        t_teardown),
        cmocka_unit_test(test_class),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
