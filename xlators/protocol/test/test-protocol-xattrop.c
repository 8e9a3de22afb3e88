/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-protocol-xattrop: the XATTROP fop over the wire (protocol 6),
 * protocol/client and protocol/server over 127.0.0.1. The brick graph is
 * protocol/server over "xo/leaf", an in-test translator that keeps the
 * xattrs of one object in memory and adds to them as storage/posix does;
 * the client graph is "ph/ready" over protocol/client (proto-harness.c).
 *
 * Covers: by gfid and by fd, names, sizes and values arriving intact and
 * the new values coming back in reply.xattr; the leaf's errors passed
 * back; the client refusing bad arguments before sending (count, sizes,
 * names); the server refusing a size that is not a multiple of 4 sent by
 * a raw peer (the leaf never sees it); a leaf answering the wrong number
 * of bytes turned into -EIO, not a short reply; and end to end over
 * storage/posix (needs root for trusted xattrs): counters on the brick's
 * file, read back by lookup, the heal index entry made and removed, a
 * granular entry record made and cleared.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cmocka.h>

#include "builtin.h"
#include "proto-harness.h"

/* ---- xo/leaf: one object's xattrs, in memory ---- */

static struct {
    pthread_mutex_t lock;           /* guards everything here */
    struct ph_xattrs xs;            /* the object's counters */
    int n_xattrops;                 /* XATTROP calls seen */
    vl_gfid_t last_gfid;            /* object of the last one */
    bool last_by_fd;                /* it came with an fd */
    uint32_t last_op;               /* its op */
    bool is_broken;                 /* answer one byte short */
} leaf;


static void
leaf_fop(vl_xlator_t *xl, vl_req_t *req)
{
    struct vl_reply *rp = &req->reply;
    union vl_fop_args *a = &req->args;
    int status = 0;

    pthread_mutex_lock(&leaf.lock);
    switch (req->op) {
    case VL_FOP_CREATE:
        memset(&rp->iatt, 0, sizeof(rp->iatt));
        rp->iatt.gfid = a->create.gfid;
        rp->iatt.ino = vl_gfid_to_ino(&a->create.gfid);
        rp->iatt.mode = S_IFREG | 0644;
        rp->iatt.nlink = 1;
        break;
    case VL_FOP_XATTROP:
        leaf.n_xattrops++;
        leaf.last_by_fd = a->xattrop.fd != NULL;
        leaf.last_gfid = a->xattrop.fd != NULL
                             ? a->xattrop.fd->inode->gfid
                             : a->xattrop.loc.inode->gfid;
        leaf.last_op = a->xattrop.op;
        status = ph_xattrs_apply(&leaf.xs, &a->xattrop, rp,
                                 leaf.is_broken);
        break;
    case VL_FOP_FLUSH:
        break;
    default:
        status = -ENOSYS;
    }
    pthread_mutex_unlock(&leaf.lock);
    vl_unwind(req, status);
}


struct xo_conf {
    bool dummy; /* no options */
};

static const vl_option_t xo_options[] = {VL_OPT_END};
static const char *const xo_types[] = {"misc", NULL};

static const vl_xlator_class_t leaf_class = {
    .abi = VL_XLATOR_ABI,
    .type = "xo/leaf",
    .prefix = "leaf",
    .flags = VL_XL_LEAF,
    .conf_size = sizeof(struct xo_conf),
    .options = xo_options,
    .mem_types = xo_types,
    .doc = "Keeps one object's xattrs in memory for the xattrop tests.",
    .fops = {
        [VL_FOP_CREATE] = leaf_fop,
        [VL_FOP_XATTROP] = leaf_fop,
        [VL_FOP_FLUSH] = leaf_fop,
    },
};

/* ---- graphs ---- */

struct env {
    struct ph_env ph;         /* the brick and its client */
    char brick[64];           /* storage/posix's directory, or "" */
};


/* The brick: storage/posix on a fresh directory when e->brick is set,
 * else xo/leaf. */
static int
xo_up(void **state, struct env *e)
{
    char text[256];

    ph_init();
    (void)vl_registry_add(&xl_storage_posix);
    (void)vl_registry_add(&leaf_class);
    memset(&leaf, 0, sizeof(leaf));
    pthread_mutex_init(&leaf.lock, NULL);
    ph_env_start(&e->ph);
    if (e->brick[0] != '\0')
        snprintf(text, sizeof(text),
                 "volume xo-leaf\n type storage/posix\n"
                 " option directory %s\nend-volume\n", e->brick);
    else
        snprintf(text, sizeof(text), "volume xo-leaf\n type xo/leaf\n"
                 "end-volume\n");
    ph_brick_up(&e->ph, text, "xo-leaf", "127.0.0.1");
    ph_client_up(&e->ph, "xo-leaf", "", "ph/ready");
    assert_int_equal(vl_graph_wait_ready(e->ph.cg, PH_WAIT_MS, NULL, 0), 0);
    *state = e;
    return 0;
}


static int
xo_setup(void **state)
{
    return xo_up(state, calloc(1, sizeof(struct env)));
}


static int
xo_setup_posix(void **state)
{
    struct env *e = calloc(1, sizeof(*e));

    snprintf(e->brick, sizeof(e->brick), "/tmp/xattrop-brick-XXXXXX");
    assert_non_null(mkdtemp(e->brick));
    return xo_up(state, e);
}


static int
xo_teardown(void **state)
{
    struct env *e = *state;

    ph_env_stop(&e->ph);
    if (e->brick[0] != '\0')
        ph_rmtree(e->brick);
    free(e);
    return 0;
}

/* ---- helpers ---- */

/* BE int32 array of 3 counters. */
static void
be3(unsigned char out[12], int32_t d, int32_t m, int32_t en)
{
    uint32_t v[3] = {htonl((uint32_t)d), htonl((uint32_t)m),
                     htonl((uint32_t)en)};

    memcpy(out, v, sizeof(v));
}


/* XATTROP of n keys (sizes[i] bytes of vals[i]) on inode or fd. */
static int
do_xattrop(struct env *e, vl_inode_t *inode, vl_fd_t *fd, uint32_t n,
           const char *const *names, const void *const *vals,
           const uint32_t *sizes, struct vl_reply *r /* OUT, cleared */)
{
    union vl_fop_args a;

    memset(&a, 0, sizeof(a));
    a.xattrop.loc.inode = inode;
    a.xattrop.fd = fd;
    a.xattrop.op = VL_XATTROP_ADD32;
    a.xattrop.n = n;
    a.xattrop.names = names;
    a.xattrop.values = vals;
    a.xattrop.sizes = sizes;
    return vl_sync_call(e->ph.cg->top, VL_FOP_XATTROP, &a, NULL, r);
}


static int
leaf_calls(void)
{
    int n;

    pthread_mutex_lock(&leaf.lock);
    n = leaf.n_xattrops;
    pthread_mutex_unlock(&leaf.lock);
    return n;
}

/* ---- tests ---- */

/* By gfid: two keys added twice; the reply has both new values in
 * order, the leaf saw the object and the op. */
static void
test_by_gfid(void **state)
{
    struct env *e = *state;
    const char *names[2] = {"trusted.mortar.rep.dirty",
                            "trusted.mortar.rep.v0-client-1"};
    unsigned char d[12], p[12], want[24];
    const void *vals[2] = {d, p};
    const uint32_t sizes[2] = {12, 12};
    struct vl_reply r;
    vl_gfid_t gfid;
    vl_inode_t *inode;

    vl_gfid_generate(&gfid);
    inode = vl_inode_get(e->ph.cg->itable, &gfid, S_IFREG);
    assert_non_null(inode);
    be3(d, 1, 0, 0);
    be3(p, 0, 1, -1);
    assert_int_equal(do_xattrop(e, inode, NULL, 2, names, vals, sizes, &r),
                     0);
    be3(want, 1, 0, 0);
    be3(want + 12, 0, 1, -1);
    assert_int_equal(r.xattr_len, 24);
    assert_memory_equal(r.xattr, want, 24);
    vl_reply_clear(&r);
    assert_int_equal(do_xattrop(e, inode, NULL, 2, names, vals, sizes, &r),
                     0);
    be3(want, 2, 0, 0);
    be3(want + 12, 0, 2, -2);
    assert_int_equal(r.xattr_len, 24);
    assert_memory_equal(r.xattr, want, 24);
    vl_reply_clear(&r);
    pthread_mutex_lock(&leaf.lock);
    assert_int_equal(leaf.n_xattrops, 2);
    assert_true(vl_gfid_equal(&leaf.last_gfid, &gfid));
    assert_false(leaf.last_by_fd);
    assert_int_equal(leaf.last_op, VL_XATTROP_ADD32);
    pthread_mutex_unlock(&leaf.lock);
    /* n = 0 is a valid no-op with an empty reply. */
    assert_int_equal(do_xattrop(e, inode, NULL, 0, NULL, NULL, NULL, &r), 0);
    assert_int_equal(r.xattr_len, 0);
    assert_null(r.xattr);
    vl_reply_clear(&r);
    /* The leaf's error comes back as is. */
    {
        const char *bad[1] = {"user.other"};

        assert_int_equal(do_xattrop(e, inode, NULL, 1, bad, vals, sizes,
                                    &r),
                         -EPERM);
        vl_reply_clear(&r);
    }
    vl_inode_unref(inode);
}


/* By fd: the brick resolves the client's fd to its own, on its object. */
static void
test_by_fd(void **state)
{
    struct env *e = *state;
    const char *names[1] = {"trusted.mortar.rep.dirty"};
    unsigned char d[12];
    const void *vals[1] = {d};
    const uint32_t sizes[1] = {12};
    vl_inode_t *inode = vl_inode_new(e->ph.cg->itable);
    vl_fd_t *fd = vl_fd_new(inode, O_RDWR | O_CREAT, 1);
    union vl_fop_args a;
    struct vl_reply r;

    memset(&a, 0, sizeof(a));
    a.create.loc.parent = vl_inode_table_root(e->ph.cg->itable);
    a.create.loc.name = "f";
    a.create.loc.inode = inode;
    a.create.flags = O_RDWR | O_CREAT;
    a.create.mode = 0644;
    vl_gfid_generate(&a.create.gfid);
    a.create.fd = fd;
    assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_CREATE, &a, NULL, &r),
                     0);
    vl_inode_unref(vl_inode_link(inode, &r.iatt));
    vl_reply_clear(&r);
    be3(d, 0, 0, 7);
    assert_int_equal(do_xattrop(e, NULL, fd, 1, names, vals, sizes, &r), 0);
    assert_int_equal(r.xattr_len, 12);
    assert_memory_equal(r.xattr, d, 12);
    vl_reply_clear(&r);
    pthread_mutex_lock(&leaf.lock);
    assert_true(leaf.last_by_fd);
    assert_true(vl_gfid_equal(&leaf.last_gfid, &a.create.gfid));
    pthread_mutex_unlock(&leaf.lock);
    vl_inode_unref(a.create.loc.parent);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


/* Bad arguments never reach the brick: more than VL_XATTROP_MAX keys,
 * a size not a multiple of 4, over 64 bytes, a NULL or empty name. */
static void
test_client_refuses(void **state)
{
    struct env *e = *state;
    const char *names[VL_XATTROP_MAX + 1];
    const void *vals[VL_XATTROP_MAX + 1];
    uint32_t sizes[VL_XATTROP_MAX + 1];
    unsigned char v[VL_XATTROP_VALUE_MAX + 4];
    struct vl_reply r;
    vl_gfid_t gfid;
    vl_inode_t *inode;

    memset(v, 0, sizeof(v));
    for (uint32_t i = 0; i <= VL_XATTROP_MAX; i++) {
        names[i] = "trusted.mortar.rep.dirty";
        vals[i] = v;
        sizes[i] = 12;
    }
    vl_gfid_generate(&gfid);
    inode = vl_inode_get(e->ph.cg->itable, &gfid, S_IFREG);
    assert_int_equal(do_xattrop(e, inode, NULL, VL_XATTROP_MAX + 1, names,
                                vals, sizes, &r),
                     -EINVAL);
    vl_reply_clear(&r);
    sizes[0] = 6;
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EINVAL);
    vl_reply_clear(&r);
    sizes[0] = VL_XATTROP_VALUE_MAX + 4;
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EINVAL);
    vl_reply_clear(&r);
    sizes[0] = 12;
    names[0] = "";
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EINVAL);
    vl_reply_clear(&r);
    names[0] = NULL;
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EINVAL);
    vl_reply_clear(&r);
    assert_int_equal(leaf_calls(), 0);
    /* The largest legal request goes through: 16 keys of 64 bytes. */
    for (uint32_t i = 0; i < VL_XATTROP_MAX; i++) {
        names[i] = "trusted.mortar.rep.dirty";
        sizes[i] = VL_XATTROP_VALUE_MAX;
    }
    assert_int_equal(do_xattrop(e, inode, NULL, VL_XATTROP_MAX, names, vals,
                                sizes, &r),
                     0);
    assert_int_equal(r.xattr_len, VL_XATTROP_MAX * VL_XATTROP_VALUE_MAX);
    vl_reply_clear(&r);
    assert_int_equal(leaf_calls(), 1);
    vl_inode_unref(inode);
}


/* A leaf that answers fewer bytes than asked: the server says -EIO. */
static void
test_short_answer_is_eio(void **state)
{
    struct env *e = *state;
    const char *names[1] = {"trusted.mortar.rep.dirty"};
    unsigned char d[12];
    const void *vals[1] = {d};
    const uint32_t sizes[1] = {12};
    struct vl_reply r;
    vl_gfid_t gfid;
    vl_inode_t *inode;

    vl_gfid_generate(&gfid);
    inode = vl_inode_get(e->ph.cg->itable, &gfid, S_IFREG);
    be3(d, 1, 1, 1);
    pthread_mutex_lock(&leaf.lock);
    leaf.is_broken = true;
    pthread_mutex_unlock(&leaf.lock);
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EIO);
    assert_null(r.xattr);
    vl_reply_clear(&r);
    vl_inode_unref(inode);
}

/* A peer that skips the client's checks: a 6-byte value is refused by
 * the server with -EINVAL and never reaches the leaf. */
static void
test_server_refuses_odd_size(void **state)
{
    struct env *e = *state;
    char val[6] = {0, 0, 0, 1, 0, 0};
    mrt_xattrop_key key = {.name = "trusted.mortar.rep.dirty",
                           .value = {.value_len = 6, .value_val = val}};
    mrt_xattrop_args xa;
    static struct ph_raw raw;
    vl_gfid_t gfid;

    memset(&xa, 0, sizeof(xa));
    vl_gfid_generate(&gfid);
    vrpc_gfid_to_xdr(&gfid, xa.loc.gfid);
    xa.loc.name = "";
    xa.op = VL_XATTROP_ADD32;
    xa.keys.keys_len = 1;
    xa.keys.keys_val = &key;
    ph_raw_open(&raw, &e->ph, "xo-leaf", MRT_PROTO_VERSION);
    ph_raw_call(&raw, VRPC_FOP_PROC(VL_FOP_XATTROP),
                (xdrproc_t)xdr_mrt_xattrop_args, &xa, 1);
    assert_int_equal(raw.status[1], -EINVAL);
    assert_int_equal(leaf_calls(), 0);
    ph_raw_close(&raw);
}


/* End to end over storage/posix: the counters land on the brick's file,
 * come back in the reply and through a lookup, the index entry comes and
 * goes with them, and posix's refusals cross the wire. */
static void
test_posix_end_to_end(void **state)
{
    struct env *e = *state;
    const char *names[2] = {"trusted.mortar.rep.dirty",
                            "trusted.mortar.rep.xo-1"};
    unsigned char d[12], p[12], want[24], disk[12];
    const void *vals[2] = {d, p};
    const uint32_t sizes[2] = {12, 12};
    char path[256], str[VL_GFID_STR_LEN];
    vl_inode_t *inode = vl_inode_new(e->ph.cg->itable);
    vl_fd_t *fd = vl_fd_new(inode, O_RDWR | O_CREAT, 1);
    union vl_fop_args a;
    struct vl_reply r;
    struct stat st;

    memset(&a, 0, sizeof(a));
    a.create.loc.parent = vl_inode_table_root(e->ph.cg->itable);
    a.create.loc.name = "f";
    a.create.loc.inode = inode;
    a.create.flags = O_RDWR | O_CREAT;
    a.create.mode = 0644;
    vl_gfid_generate(&a.create.gfid);
    a.create.fd = fd;
    assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_CREATE, &a, NULL, &r),
                     0);
    vl_inode_unref(vl_inode_link(inode, &r.iatt));
    vl_reply_clear(&r);
    vl_inode_unref(a.create.loc.parent);
    snprintf(path, sizeof(path), "%s/.mortar/index/xattrop/%s", e->brick,
             vl_gfid_to_str(&inode->gfid, str));

    be3(d, 1, 0, 0);
    be3(p, 0, 1, 0);
    assert_int_equal(do_xattrop(e, inode, NULL, 2, names, vals, sizes, &r),
                     0);
    vl_reply_clear(&r);
    assert_int_equal(do_xattrop(e, NULL, fd, 2, names, vals, sizes, &r), 0);
    be3(want, 2, 0, 0);
    be3(want + 12, 0, 2, 0);
    assert_int_equal(r.xattr_len, 24);
    assert_memory_equal(r.xattr, want, 24);
    vl_reply_clear(&r);
    snprintf(path, sizeof(path), "%s/f", e->brick);
    assert_int_equal(lgetxattr(path, names[1], disk, sizeof(disk)), 12);
    assert_memory_equal(disk, want + 12, 12);
    snprintf(path, sizeof(path), "%s/.mortar/index/xattrop/%s", e->brick,
             str);
    assert_int_equal(lstat(path, &st), 0);
    /* Read back by a lookup that asks for the key. */
    memset(&a, 0, sizeof(a));
    a.lookup.loc.parent = vl_inode_table_root(e->ph.cg->itable);
    a.lookup.loc.name = "f";
    a.lookup.loc.inode = vl_inode_new(e->ph.cg->itable);
    a.lookup.xattr_name = names[0];
    assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_LOOKUP, &a, NULL, &r),
                     0);
    assert_int_equal(r.xattr_status, 0);
    assert_int_equal(r.xattr_len, 12);
    assert_memory_equal(r.xattr, want, 12);
    vl_reply_clear(&r);
    vl_inode_unref(a.lookup.loc.parent);
    vl_inode_unref(a.lookup.loc.inode);
    /* Back to zero: no xattr, no index entry. */
    be3(d, -2, 0, 0);
    be3(p, 0, -2, 0);
    assert_int_equal(do_xattrop(e, inode, NULL, 2, names, vals, sizes, &r),
                     0);
    memset(want, 0, sizeof(want));
    assert_memory_equal(r.xattr, want, 24);
    vl_reply_clear(&r);
    assert_int_equal(lstat(path, &st), -1);
    snprintf(path, sizeof(path), "%s/f", e->brick);
    assert_int_equal(lgetxattr(path, names[0], disk, sizeof(disk)), -1);
    assert_int_equal(errno, ENODATA);
    /* A granular entry record asked over the wire (the root directory,
     * name "f"), then cleared. */
    {
        vl_inode_t *root = vl_inode_table_root(e->ph.cg->itable);
        const char *en[1] = {names[1]};

        memset(&a, 0, sizeof(a));
        be3(p, 0, 0, 1);
        a.xattrop.loc.parent = root;
        a.xattrop.loc.name = "f";
        a.xattrop.loc.inode = root;
        a.xattrop.op = VL_XATTROP_ADD32 | VL_XATTROP_F_ENTRY_MARK;
        a.xattrop.n = 1;
        a.xattrop.names = en;
        a.xattrop.values = (const void *const *)&vals[1];
        a.xattrop.sizes = sizes;
        assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_XATTROP, &a, NULL,
                                      &r),
                         0);
        vl_reply_clear(&r);
        snprintf(path, sizeof(path),
                 "%s/.mortar/index/entry-changes/%s/f", e->brick,
                 vl_gfid_to_str(&root->gfid, str));
        assert_int_equal(lstat(path, &st), 0);
        be3(p, 0, 0, -1);
        a.xattrop.op = VL_XATTROP_ADD32 | VL_XATTROP_F_ENTRY_CLEAR;
        assert_int_equal(vl_sync_call(e->ph.cg->top, VL_FOP_XATTROP, &a, NULL,
                                      &r),
                         0);
        vl_reply_clear(&r);
        assert_int_equal(lstat(path, &st), -1);
        vl_inode_unref(root);
    }
    /* posix's refusal crosses the wire. */
    names[0] = "trusted.mortar.gfid";
    assert_int_equal(do_xattrop(e, inode, NULL, 1, names, vals, sizes, &r),
                     -EPERM);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(inode);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_by_gfid, xo_setup, xo_teardown),
        cmocka_unit_test_setup_teardown(test_by_fd, xo_setup, xo_teardown),
        cmocka_unit_test_setup_teardown(test_client_refuses, xo_setup,
                                        xo_teardown),
        cmocka_unit_test_setup_teardown(test_short_answer_is_eio, xo_setup,
                                        xo_teardown),
        cmocka_unit_test_setup_teardown(test_server_refuses_odd_size,
                                        xo_setup, xo_teardown),
        cmocka_unit_test_setup_teardown(test_posix_end_to_end,
                                        xo_setup_posix, xo_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
