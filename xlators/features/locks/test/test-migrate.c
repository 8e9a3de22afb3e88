/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-migrate: the migration freeze and the migrated flag of
 * features/locks, over the testlib mock without auto-answer, so the tests
 * see exactly which requests reach the child and can keep a write "in
 * flight" below locks while a freeze is asked for.
 *
 * Client 1 plays the rebalance process (it holds the freeze), client 2 a
 * FUSE client writing to the file, or unlinking, renaming and linking it
 * (locks-namespace.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "builtin.h"
#include "vl-test.h"
#include "vol/vol.h"

#define T_REBAL 1  /* client id of the rebalance process */
#define T_WRITER 2 /* client id of an ordinary client */

struct t_env {
    struct vl_test_graph *g; /* locks over the mock */
    vl_xlator_t *mock;       /* the leaf, answers by hand */
    vl_inode_t *file;        /* a regular file */
    vl_fd_t *fd;             /* open on file (the writer's) */
    char data[8];            /* write payload */
    struct iovec iov;        /* over data */
};

static const char t_volfile[] =
    "volume mock\n"
    "    type debug/mock\n"
    "end-volume\n"
    "volume locks\n"
    "    type features/locks\n"
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
    vl_registry_add(&xl_features_locks);
    e->g = vl_test_graph_new(t_volfile, &err);
    if (e->g == NULL)
        fail_msg("graph: %s", err.msg);
    e->mock = vl_test_graph_xl(e->g, "mock");
    vl_gfid_generate(&gfid);
    e->file = vl_inode_get(e->g->graph->itable, &gfid, S_IFREG);
    assert_non_null(e->file);
    e->fd = vl_fd_new(e->file, O_RDWR, 42);
    assert_non_null(e->fd);
    memcpy(e->data, "abcdefg", 8);
    e->iov.iov_base = e->data;
    e->iov.iov_len = sizeof(e->data);
    *state = e;
    return 0;
}


static int
t_teardown(void **state)
{
    struct t_env *e = *state;

    vl_fd_unref(e->fd);
    vl_inode_unref(e->file);
    vl_test_graph_free(e->g);
    free(e);
    return 0;
}


static vl_req_t *
t_req(struct t_env *e, vl_fop_t op, uint64_t client)
{
    vl_req_t *req = vl_req_new(e->g->graph->top, op);

    assert_non_null(req);
    req->caller.client_id = client;
    req->caller.lk_owner = 77;
    return req;
}


static void
t_freeze(struct t_env *e, enum vl_lock_cmd cmd, struct vl_test_result *res)
{
    vl_req_t *req = t_req(e, VL_FOP_INODELK, T_REBAL);
    struct vl_inodelk_args *a = &req->args.inodelk;

    a->domain = "mortar.dht.migrate";
    a->loc.inode = e->file;
    a->cmd = cmd;
    a->flock.type = cmd == VL_LOCK_UNLOCK ? F_UNLCK : F_WRLCK;
    a->flock.whence = SEEK_SET;
    vl_test_wind(req, res);
}


static void
t_write(struct t_env *e, uint64_t client, off_t off,
        struct vl_test_result *res)
{
    vl_req_t *req = t_req(e, VL_FOP_WRITE, client);

    req->args.write.fd = e->fd;
    req->args.write.iov = &e->iov;
    req->args.write.n_iov = 1;
    req->args.write.offset = off;
    vl_test_wind(req, res);
}


/* An fd fop of the writer without payload: read, fsync, fstat, lseek,
 * rchecksum, flush, ftruncate (SETATTR with size) or fchmod (SETATTR
 * mode). */
static void
t_fdop(struct t_env *e, vl_fop_t op, uint32_t valid,
       struct vl_test_result *res)
{
    vl_req_t *req = t_req(e, op, T_WRITER);

    switch (op) {
    case VL_FOP_READ:
        req->args.read.fd = e->fd;
        req->args.read.size = 4096;
        break;
    case VL_FOP_FSYNC:
        req->args.fsync.fd = e->fd;
        break;
    case VL_FOP_STAT:
        req->args.stat.fd = e->fd;
        break;
    case VL_FOP_LSEEK:
        req->args.lseek.fd = e->fd;
        req->args.lseek.whence = SEEK_DATA;
        break;
    case VL_FOP_RCHECKSUM:
        req->args.rchecksum.fd = e->fd;
        req->args.rchecksum.len = 65536;
        req->args.rchecksum.block_size = 4096;
        break;
    case VL_FOP_FLUSH:
        req->args.flush.fd = e->fd;
        break;
    case VL_FOP_FALLOCATE:
        req->args.fallocate.fd = e->fd;
        req->args.fallocate.len = 4096;
        break;
    case VL_FOP_LK:
        req->args.lk.fd = e->fd;
        req->args.lk.cmd = F_SETLK;
        req->args.lk.flock.type = F_WRLCK;
        break;
    case VL_FOP_SETATTR:
        req->args.setattr.fd = e->fd;
        req->args.setattr.valid = valid;
        req->args.setattr.attr.mode = 0600;
        break;
    default:
        fail_msg("t_fdop: fop %d", (int)op);
    }
    vl_test_wind(req, res);
}


static void
t_migrated(struct t_env *e, struct vl_test_result *res)
{
    vl_req_t *req = t_req(e, VL_FOP_SETXATTR, T_REBAL);

    req->args.setxattr.loc.inode = e->file;
    req->args.setxattr.name = "mortar.dht.migrated";
    req->args.setxattr.value = "vol-b2";
    req->args.setxattr.size = 6;
    vl_test_wind(req, res);
}


/* Answers every request waiting in the mock with 0; returns how many. */
static size_t
t_mock_ok(struct t_env *e)
{
    return vl_mock_reply_all(e->mock, 0);
}

/* ---- tests ---- */

/* A write from another client waits while the freeze is held and runs
 * at unlock; reads, the holder's own writes and chmod are not held. */
static void
test_freeze_queues_write(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result lk = {0};
    struct vl_test_result w1 = {0};
    struct vl_test_result w2 = {0};
    struct vl_test_result tr = {0};
    struct vl_test_result rd = {0};
    struct vl_test_result own = {0};
    struct vl_test_result ch = {0};
    struct vl_test_result un = {0};

    t_freeze(e, VL_LOCK_WAIT, &lk);
    assert_true(lk.is_done);
    assert_int_equal(lk.status, 0);
    assert_int_equal(vl_mock_received(e->mock), 0);

    t_write(e, T_WRITER, 0, &w1);
    t_write(e, T_WRITER, 8, &w2);
    t_fdop(e, VL_FOP_SETATTR, VL_SET_SIZE, &tr);
    assert_false(w1.is_done);
    assert_false(w2.is_done);
    assert_false(tr.is_done);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_WRITE), 0);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_SETATTR), 0);

    /* Not frozen: reads, chmod, and the freeze holder's own writes. */
    t_fdop(e, VL_FOP_READ, 0, &rd);
    t_fdop(e, VL_FOP_SETATTR, VL_SET_MODE, &ch);
    t_write(e, T_REBAL, 100, &own);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_READ), 1);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_SETATTR), 1);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_WRITE), 1);
    assert_int_equal(t_mock_ok(e), 3);
    assert_true(rd.is_done && ch.is_done && own.is_done);

    /* Unlock: the held fops reach the child in their order. */
    t_freeze(e, VL_LOCK_UNLOCK, &un);
    assert_true(un.is_done);
    assert_int_equal(un.status, 0);
    assert_int_equal(vl_mock_pending(e->mock), 3);
    {
        vl_req_t *r = vl_mock_pop(e->mock);

        assert_int_equal(r->op, VL_FOP_WRITE);
        assert_int_equal(r->args.write.offset, 0);
        r->reply.count = 8;
        vl_unwind(r, 0);
        r = vl_mock_pop(e->mock);
        assert_int_equal(r->op, VL_FOP_WRITE);
        assert_int_equal(r->args.write.offset, 8);
        vl_unwind(r, 0);
        r = vl_mock_pop(e->mock);
        assert_int_equal(r->op, VL_FOP_SETATTR);
        vl_unwind(r, 0);
    }
    assert_true(w1.is_done && w2.is_done && tr.is_done);
    assert_int_equal(w1.n_done, 1);
    assert_int_equal(w1.status, 0);
    assert_int_equal(w1.reply.count, 8);
    assert_int_equal(w2.status, 0);
    assert_int_equal(tr.status, 0);

    /* Without a freeze, writes pass straight through. */
    vl_test_result_clear(&w1);
    t_write(e, T_WRITER, 0, &w1);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    t_mock_ok(e);
    assert_int_equal(w1.status, 0);
    vl_test_result_clear(&w1);
    vl_test_result_clear(&w2);
    vl_test_result_clear(&tr);
    vl_test_result_clear(&rd);
    vl_test_result_clear(&own);
    vl_test_result_clear(&ch);
    vl_test_result_clear(&lk);
    vl_test_result_clear(&un);
}


/* After the migrated setxattr, the held write and every later fd fop
 * answer -EREMCHG without reaching the child; the mark is not stored. */
static void
test_migrated_eremchg(void **state)
{
    struct t_env *e = *state;
    static const vl_fop_t fd_ops[] = {
        VL_FOP_READ, VL_FOP_FSYNC, VL_FOP_STAT, VL_FOP_LSEEK,
        VL_FOP_RCHECKSUM, VL_FOP_FLUSH, VL_FOP_FALLOCATE, VL_FOP_LK,
    };
    struct vl_test_result lk = {0};
    struct vl_test_result w = {0};
    struct vl_test_result mig = {0};
    struct vl_test_result un = {0};
    struct vl_test_result r = {0};

    t_freeze(e, VL_LOCK_WAIT, &lk);
    assert_int_equal(lk.status, 0);
    t_write(e, T_WRITER, 0, &w);
    assert_false(w.is_done);
    t_migrated(e, &mig);
    assert_true(mig.is_done);
    assert_int_equal(mig.status, 0);
    assert_int_equal(vl_mock_received(e->mock), 0);
    t_freeze(e, VL_LOCK_UNLOCK, &un);
    assert_int_equal(un.status, 0);
    assert_true(w.is_done);
    assert_int_equal(w.n_done, 1);
    assert_int_equal(w.status, -EREMCHG);
    assert_int_equal(vl_mock_received(e->mock), 0);

    for (size_t i = 0; i < VL_ARRAY_SIZE(fd_ops); i++) {
        t_fdop(e, fd_ops[i], 0, &r);
        assert_true(r.is_done);
        assert_int_equal(r.status, -EREMCHG);
        vl_test_result_clear(&r);
    }
    t_fdop(e, VL_FOP_SETATTR, VL_SET_SIZE, &r);
    assert_int_equal(r.status, -EREMCHG);
    vl_test_result_clear(&r);
    t_fdop(e, VL_FOP_SETATTR, VL_SET_MODE, &r);
    assert_int_equal(r.status, -EREMCHG);
    vl_test_result_clear(&r);
    vl_test_result_clear(&w);
    t_write(e, T_WRITER, 0, &w);
    assert_int_equal(w.status, -EREMCHG);
    assert_int_equal(vl_mock_received(e->mock), 0);

    /* Fops by name still reach the brick (stat, lookup...). */
    {
        vl_req_t *req = t_req(e, VL_FOP_STAT, T_WRITER);

        req->args.stat.loc.inode = e->file;
        vl_test_wind(req, &r);
        assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_STAT), 1);
        t_mock_ok(e);
        assert_int_equal(r.status, 0);
    }
    vl_test_result_clear(&r);
    vl_test_result_clear(&w);
    vl_test_result_clear(&lk);
    vl_test_result_clear(&mig);
    vl_test_result_clear(&un);
}


/* A freeze asked for while a write is in flight below locks is answered
 * only when that write is done. */
static void
test_freeze_waits_inflight(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result w = {0};
    struct vl_test_result lk = {0};
    struct vl_test_result un = {0};

    t_write(e, T_WRITER, 0, &w);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    t_freeze(e, VL_LOCK_WAIT, &lk);
    assert_false(lk.is_done);
    assert_int_equal(t_mock_ok(e), 1);
    assert_true(w.is_done);
    assert_int_equal(w.status, 0);
    assert_true(lk.is_done);
    assert_int_equal(lk.n_done, 1);
    assert_int_equal(lk.status, 0);
    t_freeze(e, VL_LOCK_UNLOCK, &un);
    assert_int_equal(un.status, 0);
    vl_test_result_clear(&w);
    vl_test_result_clear(&lk);
    vl_test_result_clear(&un);
}


/* The rebalance process dies holding the freeze: its disconnect
 * releases the held write, which then runs normally. */
static void
test_freeze_owner_disconnect(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result lk = {0};
    struct vl_test_result w = {0};
    uint64_t client = T_REBAL;

    t_freeze(e, VL_LOCK_WAIT, &lk);
    assert_int_equal(lk.status, 0);
    t_write(e, T_WRITER, 0, &w);
    assert_false(w.is_done);
    assert_int_equal(
        vl_notify(e->g->graph->top, VL_EV_CLIENT_DISCONNECT, &client), 0);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_WRITE), 1);
    t_mock_ok(e);
    assert_true(w.is_done);
    assert_int_equal(w.status, 0);
    vl_test_result_clear(&lk);
    vl_test_result_clear(&w);
}


/* Teardown with a frozen write answers it (-ENOTCONN), exactly once. */
static void
test_freeze_teardown(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result lk = {0};
    struct vl_test_result w = {0};

    t_freeze(e, VL_LOCK_WAIT, &lk);
    t_write(e, T_WRITER, 0, &w);
    assert_false(w.is_done);
    vl_fd_unref(e->fd);
    e->fd = NULL;
    vl_inode_unref(e->file);
    e->file = NULL;
    vl_test_graph_free(e->g);
    e->g = NULL;
    assert_true(w.is_done);
    assert_int_equal(w.n_done, 1);
    assert_int_equal(w.status, -ENOTCONN);
    vl_test_result_clear(&lk);
    vl_test_result_clear(&w);
}


/* Bad input: the migrated mark without a value. */
static void
test_migrated_bad_input(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result r = {0};
    vl_req_t *req = t_req(e, VL_FOP_SETXATTR, T_REBAL);

    req->args.setxattr.loc.inode = e->file;
    req->args.setxattr.name = "mortar.dht.migrated";
    vl_test_wind(req, &r);
    assert_int_equal(r.status, -EINVAL);
    vl_test_result_clear(&r);
    /* Not migrated: writes still go through. */
    t_write(e, T_WRITER, 0, &r);
    assert_int_equal(t_mock_ok(e), 1);
    assert_int_equal(r.status, 0);
    vl_test_result_clear(&r);
}


/* The file comes back to this brick (a later rebalance creates the
 * GFID here again): fds opened before the migration still answer
 * -EREMCHG, the new copy's fds work; open by GFID answers -EREMCHG only
 * until then. */
static void
test_migrated_file_returns(void **state)
{
    struct t_env *e = *state;
    struct vl_test_result r = {0};
    vl_fd_t *fd2 = vl_fd_new(e->file, O_RDWR, 43);
    vl_fd_t *fd3 = vl_fd_new(e->file, O_RDWR, 44);
    vl_req_t *req;

    assert_non_null(fd2);
    assert_non_null(fd3);
    t_migrated(e, &r);
    assert_int_equal(r.status, 0);
    vl_test_result_clear(&r);

    req = t_req(e, VL_FOP_OPEN, T_WRITER);
    req->args.open.loc.inode = e->file;
    req->args.open.fd = fd3;
    vl_test_wind(req, &r);
    assert_int_equal(r.status, -EREMCHG);
    assert_int_equal(vl_mock_received(e->mock), 0);
    vl_test_result_clear(&r);

    /* The rebalance creates it again with the same GFID. */
    req = t_req(e, VL_FOP_CREATE, T_REBAL);
    req->args.create.loc.inode = e->file;
    req->args.create.loc.name = "f";
    req->args.create.gfid = e->file->gfid;
    req->args.create.fd = fd2;
    vl_test_wind(req, &r);
    assert_int_equal(t_mock_ok(e), 1);
    assert_int_equal(r.status, 0);
    vl_test_result_clear(&r);

    req = t_req(e, VL_FOP_WRITE, T_REBAL);
    req->args.write.fd = fd2;
    req->args.write.iov = &e->iov;
    req->args.write.n_iov = 1;
    vl_test_wind(req, &r);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_WRITE), 1);
    assert_int_equal(t_mock_ok(e), 1);
    assert_int_equal(r.status, 0);
    vl_test_result_clear(&r);

    /* The old fd stays moved. */
    t_write(e, T_WRITER, 0, &r);
    assert_int_equal(r.status, -EREMCHG);
    vl_test_result_clear(&r);

    /* Opens work again and their fds too. */
    req = t_req(e, VL_FOP_OPEN, T_WRITER);
    req->args.open.loc.inode = e->file;
    req->args.open.fd = fd3;
    vl_test_wind(req, &r);
    assert_int_equal(t_mock_ok(e), 1);
    assert_int_equal(r.status, 0);
    vl_test_result_clear(&r);
    req = t_req(e, VL_FOP_READ, T_WRITER);
    req->args.read.fd = fd3;
    req->args.read.size = 10;
    vl_test_wind(req, &r);
    assert_int_equal(t_mock_ok(e), 1);
    assert_int_equal(r.status, 0);
    vl_test_result_clear(&r);
    vl_fd_unref(fd2);
    vl_fd_unref(fd3);
}


/* ---- unlink, rename and link under a freeze (locks-namespace.c) ---- */

/* A namespace fop of client on the name "f" in a fresh directory (the
 * directory inode is kept in *dir; unref it after). */
static void
t_nsop(struct t_env *e, vl_fop_t op, uint64_t client, vl_inode_t *dir,
       struct vl_test_result *res)
{
    vl_req_t *req = t_req(e, op, client);

    switch (op) {
    case VL_FOP_UNLINK:
        req->args.unlink.loc.parent = dir;
        req->args.unlink.loc.name = "f";
        break;
    case VL_FOP_RENAME: /* "g" over "f" */
        req->args.rename.oldloc.parent = dir;
        req->args.rename.oldloc.name = "g";
        req->args.rename.newloc.parent = dir;
        req->args.rename.newloc.name = "f";
        break;
    case VL_FOP_LINK:
        req->args.link.oldloc.inode = e->file;
        req->args.link.newloc.parent = dir;
        req->args.link.newloc.name = "h";
        break;
    default:
        fail_msg("t_nsop: fop %d", (int)op);
    }
    vl_test_wind(req, res);
}


static vl_inode_t *
t_dir(struct t_env *e)
{
    vl_gfid_t gfid;
    vl_inode_t *dir;

    vl_gfid_generate(&gfid);
    dir = vl_inode_get(e->g->graph->itable, &gfid, S_IFDIR);
    assert_non_null(dir);
    return dir;
}


/* Answers the LOOKUP at the head of the mock: the name holds gfid (a
 * regular file), or status when gfid is NULL. */
static void
t_answer_lookup(struct t_env *e, const char *name, const vl_gfid_t *gfid,
                int status)
{
    vl_req_t *r = vl_mock_pop(e->mock);

    assert_non_null(r);
    assert_int_equal(r->op, VL_FOP_LOOKUP);
    assert_string_equal(r->args.lookup.loc.name, name);
    if (gfid != NULL) {
        r->reply.iatt.gfid = *gfid;
        r->reply.iatt.mode = S_IFREG | 0644;
    }
    vl_unwind(r, gfid != NULL ? 0 : status);
}


/* Another client's unlink of the frozen file's name waits for the freeze
 * (after a look at what the name holds) and starts over at unlock; the
 * freeze holder's own unlink passes. */
static void
test_ns_unlink_waits_for_freeze(void **state)
{
    struct t_env *e = *state;
    vl_inode_t *dir = t_dir(e);
    struct vl_test_result lk = {0};
    struct vl_test_result ul = {0};
    struct vl_test_result own = {0};
    struct vl_test_result un = {0};

    t_freeze(e, VL_LOCK_WAIT, &lk);
    assert_int_equal(lk.status, 0);
    t_nsop(e, VL_FOP_UNLINK, T_WRITER, dir, &ul);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    t_answer_lookup(e, "f", &e->file->gfid, 0);
    assert_false(ul.is_done);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_UNLINK), 0);

    /* The rebalance's own unlink of the name is not held. */
    t_nsop(e, VL_FOP_UNLINK, T_REBAL, dir, &own);
    t_answer_lookup(e, "f", &e->file->gfid, 0);
    assert_int_equal(vl_mock_received_op(e->mock, VL_FOP_UNLINK), 1);
    assert_int_equal(t_mock_ok(e), 1);
    assert_true(own.is_done);
    assert_int_equal(own.status, 0);

    /* Unlock: the held unlink starts over (no freeze left: no look); the
     * name is gone now, and the child says so. */
    t_freeze(e, VL_LOCK_UNLOCK, &un);
    assert_int_equal(un.status, 0);
    assert_false(ul.is_done);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    assert_int_equal(vl_mock_peek(e->mock)->op, VL_FOP_UNLINK);
    assert_int_equal(vl_mock_reply_all(e->mock, -ENOENT), 1);
    assert_true(ul.is_done);
    assert_int_equal(ul.n_done, 1);
    assert_int_equal(ul.status, -ENOENT);

    /* No freeze left: an unlink passes without a look. */
    vl_test_result_clear(&ul);
    t_nsop(e, VL_FOP_UNLINK, T_WRITER, dir, &ul);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    assert_int_equal(vl_mock_peek(e->mock)->op, VL_FOP_UNLINK);
    assert_int_equal(t_mock_ok(e), 1);
    assert_int_equal(ul.status, 0);
    vl_test_result_clear(&ul);
    vl_test_result_clear(&own);
    vl_test_result_clear(&lk);
    vl_test_result_clear(&un);
    vl_inode_unref(dir);
}


/* A rename over the frozen file's name waits too (the second look, at
 * the target), and runs at unlock; one whose names hold other files
 * passes meanwhile. */
static void
test_ns_rename_over_frozen(void **state)
{
    struct t_env *e = *state;
    vl_inode_t *dir = t_dir(e);
    struct vl_test_result lk = {0};
    struct vl_test_result rn = {0};
    struct vl_test_result un = {0};
    vl_gfid_t other;

    vl_gfid_generate(&other);
    t_freeze(e, VL_LOCK_WAIT, &lk);
    assert_int_equal(lk.status, 0);
    t_nsop(e, VL_FOP_RENAME, T_WRITER, dir, &rn);
    t_answer_lookup(e, "g", &other, 0);
    t_answer_lookup(e, "f", &e->file->gfid, 0);
    assert_false(rn.is_done);
    assert_int_equal(vl_mock_pending(e->mock), 0);

    /* While the freeze is held, a rename whose names hold other files
     * (the target now gone) passes after the looks. */
    {
        struct vl_test_result rn2 = {0};

        t_nsop(e, VL_FOP_RENAME, T_WRITER, dir, &rn2);
        t_answer_lookup(e, "g", &other, 0);
        t_answer_lookup(e, "f", NULL, -ENOENT);
        assert_int_equal(vl_mock_pending(e->mock), 1);
        assert_int_equal(vl_mock_peek(e->mock)->op, VL_FOP_RENAME);
        assert_int_equal(t_mock_ok(e), 1);
        assert_true(rn2.is_done);
        assert_int_equal(rn2.status, 0);
        vl_test_result_clear(&rn2);
    }
    assert_false(rn.is_done);
    t_freeze(e, VL_LOCK_UNLOCK, &un);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    assert_int_equal(vl_mock_peek(e->mock)->op, VL_FOP_RENAME);
    assert_int_equal(t_mock_ok(e), 1);
    assert_true(rn.is_done);
    assert_int_equal(rn.status, 0);
    vl_test_result_clear(&rn);
    vl_test_result_clear(&lk);
    vl_test_result_clear(&un);
    vl_inode_unref(dir);
}


/* A freeze asked for while an unlink passed without a look is still on
 * its way down is answered only once that unlink is. */
static void
test_ns_freeze_waits_blind_unlink(void **state)
{
    struct t_env *e = *state;
    vl_inode_t *dir = t_dir(e);
    struct vl_test_result ul = {0};
    struct vl_test_result lk = {0};
    struct vl_test_result un = {0};

    t_nsop(e, VL_FOP_UNLINK, T_WRITER, dir, &ul);
    assert_int_equal(vl_mock_pending(e->mock), 1);
    t_freeze(e, VL_LOCK_WAIT, &lk);
    assert_false(lk.is_done);
    assert_int_equal(t_mock_ok(e), 1);
    assert_true(ul.is_done);
    assert_true(lk.is_done);
    assert_int_equal(lk.status, 0);
    t_freeze(e, VL_LOCK_UNLOCK, &un);
    vl_test_result_clear(&ul);
    vl_test_result_clear(&lk);
    vl_test_result_clear(&un);
    vl_inode_unref(dir);
}


/* A link of the frozen inode waits (no look: the inode is the server's,
 * by GFID); once the inode is marked migrated it answers -ESTALE. */
static void
test_ns_link_of_migrated(void **state)
{
    struct t_env *e = *state;
    vl_inode_t *dir = t_dir(e);
    struct vl_test_result lk = {0};
    struct vl_test_result ln = {0};
    struct vl_test_result mig = {0};
    struct vl_test_result un = {0};

    t_freeze(e, VL_LOCK_WAIT, &lk);
    t_nsop(e, VL_FOP_LINK, T_WRITER, dir, &ln);
    assert_false(ln.is_done);
    assert_int_equal(vl_mock_pending(e->mock), 0);
    t_migrated(e, &mig);
    t_freeze(e, VL_LOCK_UNLOCK, &un);
    assert_true(ln.is_done);
    assert_int_equal(ln.status, -ESTALE);
    assert_int_equal(vl_mock_received(e->mock), 0);
    vl_test_result_clear(&lk);
    vl_test_result_clear(&ln);
    vl_test_result_clear(&mig);
    vl_test_result_clear(&un);
    vl_inode_unref(dir);
}


static int
t_teardown_maybe(void **state)
{
    struct t_env *e = *state;

    if (e->g == NULL) {
        free(e);
        return 0;
    }
    return t_teardown(state);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_freeze_queues_write, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_migrated_eremchg, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_freeze_waits_inflight, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_freeze_owner_disconnect,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_freeze_teardown, t_setup,
                                        t_teardown_maybe),
        cmocka_unit_test_setup_teardown(test_migrated_bad_input, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_migrated_file_returns, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_ns_unlink_waits_for_freeze,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_ns_rename_over_frozen, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_ns_freeze_waits_blind_unlink,
                                        t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_ns_link_of_migrated, t_setup,
                                        t_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
