/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-protocol-names: names over the wire's bounds, protocol/client and
 * protocol/server over 127.0.0.1. The brick graph is protocol/server
 * over "nm/leaf", an in-test translator that counts the fops reaching it,
 * keeps the longest name it saw and answers -ENOENT; the client graph is
 * "ph/ready" over protocol/client (proto-harness.c), wound directly (as
 * in a graph without the FUSE bridge, e.g. the rebalance process).
 *
 * Covers: the client answers -ENAMETOOLONG for an entry name over 255
 * bytes in every fop that carries one (either name of rename and link)
 * and for a symlink target over the wire's 4096, -ERANGE for an xattr
 * name over 255 (as setxattr(2)), all without sending; 255-byte names
 * reach the brick whole. The server, sent such names by a raw peer that
 * skips those checks, answers -ENAMETOOLONG / -ERANGE in the fop's
 * reply (not GARBAGE_ARGS) without reaching the leaf (lookup, either
 * name of rename and link, entrylk after its domain, symlink's target,
 * setxattr's key), and a record cut inside a name is still GARBAGE_ARGS.
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

#include <cmocka.h>

#include "builtin.h"
#include "proto-harness.h"

/* ---- nm/leaf: counts fops, keeps the longest name, answers ENOENT ---- */

static struct {
    pthread_mutex_t lock; /* guards everything here */
    int n_fops;           /* fops that reached the leaf */
    size_t longest;       /* longest loc name among them */
} leaf;


static void
leaf_saw(const struct vl_loc *loc)
{
    if (loc != NULL && loc->name != NULL && strlen(loc->name) > leaf.longest)
        leaf.longest = strlen(loc->name);
}


static void
leaf_fop(vl_xlator_t *xl, vl_req_t *req)
{
    const struct vl_loc *loc, *loc2;

    (void)xl;
    pthread_mutex_lock(&leaf.lock);
    leaf.n_fops++;
    if (req->op == VL_FOP_LOOKUP) {
        leaf_saw(&req->args.lookup.loc);
    } else if (vl_req_entry_locs(req, &loc, &loc2)) {
        leaf_saw(loc);
        leaf_saw(loc2);
    }
    pthread_mutex_unlock(&leaf.lock);
    vl_unwind(req, -ENOENT);
}


static int
leaf_fops(void)
{
    int n;

    pthread_mutex_lock(&leaf.lock);
    n = leaf.n_fops;
    pthread_mutex_unlock(&leaf.lock);
    return n;
}


struct nm_conf {
    bool dummy; /* no options */
};

static const vl_option_t nm_options[] = {VL_OPT_END};
static const char *const nm_types[] = {"misc", NULL};

static const vl_xlator_class_t leaf_class = {
    .abi = VL_XLATOR_ABI,
    .type = "nm/leaf",
    .prefix = "leaf",
    .flags = VL_XL_LEAF,
    .conf_size = sizeof(struct nm_conf),
    .options = nm_options,
    .mem_types = nm_types,
    .doc = "Counts the fops reaching it and answers ENOENT.",
    .fops = {
        [VL_FOP_LOOKUP] = leaf_fop,
        [VL_FOP_MKNOD] = leaf_fop,
        [VL_FOP_MKDIR] = leaf_fop,
        [VL_FOP_UNLINK] = leaf_fop,
        [VL_FOP_RMDIR] = leaf_fop,
        [VL_FOP_SYMLINK] = leaf_fop,
        [VL_FOP_RENAME] = leaf_fop,
        [VL_FOP_LINK] = leaf_fop,
        [VL_FOP_CREATE] = leaf_fop,
        [VL_FOP_SETXATTR] = leaf_fop,
        [VL_FOP_GETXATTR] = leaf_fop,
        [VL_FOP_REMOVEXATTR] = leaf_fop,
        [VL_FOP_ENTRYLK] = leaf_fop,
    },
};


/* ---- graphs ---- */

struct env {
    struct ph_env ph;         /* the brick and its client */
    char name255[256];        /* 255 bytes: fits */
    char name256[257];        /* 256 bytes: one over */
    char target[5000];        /* 4999 bytes: over MRT_PATH_MAX */
};


static int
nm_setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));

    ph_init();
    (void)vl_registry_add(&leaf_class);
    memset(&leaf, 0, sizeof(leaf));
    pthread_mutex_init(&leaf.lock, NULL);
    memset(e->name255, 'n', 255);
    memset(e->name256, 'n', 256);
    memset(e->target, 't', sizeof(e->target) - 1);
    ph_env_start(&e->ph);
    ph_brick_up(&e->ph, "volume nm-leaf\n type nm/leaf\nend-volume\n",
                "nm-leaf", "127.0.0.1");
    ph_client_up(&e->ph, "nm-leaf", "", "ph/ready");
    assert_int_equal(vl_graph_wait_ready(e->ph.cg, PH_WAIT_MS, NULL, 0), 0);
    *state = e;
    return 0;
}


static int
nm_teardown(void **state)
{
    struct env *e = *state;

    ph_env_stop(&e->ph);
    free(e);
    return 0;
}

/* ---- the client ---- */

/* Winds op with name (and name2, for rename/link's new name) through
 * the client graph; the objects are made up (the leaf looks at none). */
static int
client_call(struct env *e, vl_fop_t op, const char *name, const char *name2)
{
    union vl_fop_args a;
    struct vl_reply r;
    vl_inode_t *root = vl_inode_table_root(e->ph.cg->itable);
    vl_inode_t *fresh = vl_inode_new(e->ph.cg->itable);
    vl_fd_t *fd = vl_fd_new(fresh, O_RDWR | O_CREAT, 1);
    struct vl_loc loc = {.parent = root, .name = name, .inode = fresh};
    struct vl_loc loc2 = {.parent = root, .name = name2, .inode = NULL};
    int rc;

    memset(&a, 0, sizeof(a));
    switch (op) {
    case VL_FOP_LOOKUP:
        a.lookup.loc = loc;
        break;
    case VL_FOP_MKNOD:
        a.mknod.loc = loc;
        a.mknod.mode = S_IFIFO | 0644;
        vl_gfid_generate(&a.mknod.gfid);
        break;
    case VL_FOP_MKDIR:
        a.mkdir.loc = loc;
        a.mkdir.mode = S_IFDIR | 0755;
        vl_gfid_generate(&a.mkdir.gfid);
        break;
    case VL_FOP_UNLINK:
        a.unlink.loc = loc;
        break;
    case VL_FOP_RMDIR:
        a.rmdir.loc = loc;
        break;
    case VL_FOP_SYMLINK:
        a.symlink.loc = loc;
        a.symlink.target = name2;
        vl_gfid_generate(&a.symlink.gfid);
        break;
    case VL_FOP_RENAME:
        a.rename.oldloc = loc;
        a.rename.newloc = loc2;
        break;
    case VL_FOP_LINK:
        a.link.oldloc = loc;
        a.link.newloc = loc2;
        break;
    case VL_FOP_CREATE:
        a.create.loc = loc;
        a.create.flags = O_RDWR | O_CREAT;
        a.create.mode = 0644;
        a.create.fd = fd;
        vl_gfid_generate(&a.create.gfid);
        break;
    case VL_FOP_ENTRYLK:
        a.entrylk.domain = "nm";
        a.entrylk.loc = loc;
        a.entrylk.cmd = VL_LOCK_TRY;
        a.entrylk.type = F_WRLCK;
        break;
    case VL_FOP_SETXATTR:
        a.setxattr.loc.inode = root; /* by gfid */
        a.setxattr.name = name2;
        a.setxattr.value = "v";
        a.setxattr.size = 1;
        break;
    case VL_FOP_GETXATTR:
        a.getxattr.loc.inode = root; /* by gfid */
        a.getxattr.name = name2;
        break;
    case VL_FOP_REMOVEXATTR:
        a.removexattr.loc.inode = root; /* by gfid */
        a.removexattr.name = name2;
        break;
    default:
        fail_msg("no such fop in this test");
    }
    rc = vl_sync_call(e->ph.cg->top, op, &a, NULL, &r);
    vl_reply_clear(&r);
    vl_fd_unref(fd);
    vl_inode_unref(fresh);
    vl_inode_unref(root);
    return rc;
}


/* Every fop naming an entry refuses a 256-byte name without sending it;
 * a 255-byte one reaches the brick whole. */
static void
test_client_entry_names(void **state)
{
    struct env *e = *state;
    const vl_fop_t ops[] = {VL_FOP_LOOKUP, VL_FOP_MKNOD, VL_FOP_MKDIR,
                            VL_FOP_UNLINK, VL_FOP_RMDIR, VL_FOP_CREATE,
                            VL_FOP_ENTRYLK};

    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        assert_int_equal(client_call(e, ops[i], e->name256, NULL),
                         -ENAMETOOLONG);
    assert_int_equal(client_call(e, VL_FOP_SYMLINK, e->name256, "t"),
                     -ENAMETOOLONG);
    /* Either name of a rename or link. */
    assert_int_equal(client_call(e, VL_FOP_RENAME, e->name256, "b"),
                     -ENAMETOOLONG);
    assert_int_equal(client_call(e, VL_FOP_RENAME, "a", e->name256),
                     -ENAMETOOLONG);
    assert_int_equal(client_call(e, VL_FOP_LINK, "a", e->name256),
                     -ENAMETOOLONG);
    assert_int_equal(leaf_fops(), 0);

    /* 255 bytes: sent, and the leaf's own answer comes back. */
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        assert_int_equal(client_call(e, ops[i], e->name255, NULL), -ENOENT);
    assert_int_equal(client_call(e, VL_FOP_RENAME, "a", e->name255),
                     -ENOENT);
    assert_int_equal(leaf_fops(), (int)(sizeof(ops) / sizeof(ops[0])) + 1);
    pthread_mutex_lock(&leaf.lock);
    assert_int_equal(leaf.longest, 255);
    pthread_mutex_unlock(&leaf.lock);
}


/* A symlink target over the wire's bound is ENAMETOOLONG; an xattr name
 * over 255 bytes is ERANGE, as setxattr(2) answers. */
static void
test_client_target_and_xattr_names(void **state)
{
    struct env *e = *state;
    char key[300];

    assert_int_equal(client_call(e, VL_FOP_SYMLINK, "s", e->target),
                     -ENAMETOOLONG);
    snprintf(key, sizeof(key), "user.%s", e->name255); /* 260 bytes */
    assert_int_equal(client_call(e, VL_FOP_SETXATTR, "f", key), -ERANGE);
    assert_int_equal(client_call(e, VL_FOP_GETXATTR, "f", key), -ERANGE);
    assert_int_equal(client_call(e, VL_FOP_REMOVEXATTR, "f", key), -ERANGE);
    assert_int_equal(leaf_fops(), 0);
    key[255] = '\0';
    assert_int_equal(client_call(e, VL_FOP_SETXATTR, "f", key), -ENOENT);
    assert_int_equal(leaf_fops(), 1);
}

/* ---- a raw peer that skips the client's checks ---- */

/* What the raw peer sends: the layout of the fop's arguments with no
 * bound on the strings (XDR strings look the same whatever the bound). */
struct raw_args {
    vl_fop_t op;
    const char *name;  /* the (first) loc's name */
    const char *name2; /* rename's new name, symlink's target, xattr key */
    bool is_cut;       /* a name length with the name missing */
};


static bool_t
raw_loc(XDR *x, const char *name)
{
    char gfid[16] = {0};
    char *p = (char *)name;

    gfid[15] = 1; /* the root, as parent */
    if (!xdr_opaque(x, gfid, 16))
        return FALSE;
    if (!xdr_string(x, &p, ~0u))
        return FALSE;
    memset(gfid, 0, sizeof(gfid));
    return xdr_opaque(x, gfid, 16);
}


static bool_t
raw_xdr(XDR *x, void *arg)
{
    struct raw_args *ra = arg;
    char gfid[16] = {0};
    char *empty = "", *p = (char *)ra->name2;
    u_int zero = 0, cut_len = 300;
    int flags = 0;

    if (ra->is_cut) {
        /* parent, then a name of 300 bytes of which 8 are there. */
        return xdr_opaque(x, gfid, 16) && xdr_u_int(x, &cut_len)
               && xdr_opaque(x, gfid, 8);
    }
    if (ra->op == VL_FOP_ENTRYLK) { /* domain, loc, cmd, type */
        p = "nm";
        return xdr_string(x, &p, ~0u) && raw_loc(x, ra->name)
               && xdr_int(x, &flags) && xdr_int(x, &flags);
    }
    if (!raw_loc(x, ra->name))
        return FALSE;
    switch (ra->op) {
    case VL_FOP_LOOKUP: /* content_max, xattr_name */
        return xdr_u_int(x, &zero) && xdr_string(x, &empty, ~0u);
    case VL_FOP_RENAME: /* newloc, flags */
        return raw_loc(x, ra->name2) && xdr_u_int(x, &zero);
    case VL_FOP_LINK: /* newloc */
        return raw_loc(x, ra->name2);
    case VL_FOP_SYMLINK: /* target, umask, gfid */
        return xdr_string(x, &p, ~0u) && xdr_u_int(x, &zero)
               && xdr_opaque(x, gfid, 16);
    case VL_FOP_SETXATTR: /* name, value, flags */
        return xdr_string(x, &p, ~0u) && xdr_bytes(x, &empty, &zero, ~0u)
               && xdr_int(x, &flags);
    default:
        return FALSE;
    }
}


/* Sends ra as op from a fresh raw connection; the reply's status. */
static int
raw_call(struct env *e, struct raw_args *ra)
{
    static struct ph_raw raw;
    int status;

    ph_raw_open(&raw, &e->ph, "nm-leaf", MRT_PROTO_VERSION);
    ph_raw_call(&raw, VRPC_FOP_PROC(ra->op), (xdrproc_t)raw_xdr, ra, 1);
    status = raw.status[1];
    ph_raw_close(&raw);
    return status;
}


/* The server answers a name over the bound with the file system's errno
 * in the fop's reply, and the leaf never sees it. */
static void
test_server_names_over_bound(void **state)
{
    struct env *e = *state;
    char name300[301], key[300];
    struct raw_args ra;

    memset(name300, 'n', 300);
    name300[300] = '\0';
    snprintf(key, sizeof(key), "user.%s", e->name255);
    ra = (struct raw_args){.op = VL_FOP_LOOKUP, .name = name300};
    assert_int_equal(raw_call(e, &ra), -ENAMETOOLONG);
    ra = (struct raw_args){.op = VL_FOP_RENAME, .name = "a",
                           .name2 = e->name256};
    assert_int_equal(raw_call(e, &ra), -ENAMETOOLONG);
    ra = (struct raw_args){.op = VL_FOP_LINK, .name = "",
                           .name2 = e->name256};
    assert_int_equal(raw_call(e, &ra), -ENAMETOOLONG);
    /* The lock domain comes first, then the loc. */
    ra = (struct raw_args){.op = VL_FOP_ENTRYLK, .name = name300};
    assert_int_equal(raw_call(e, &ra), -ENAMETOOLONG);
    ra = (struct raw_args){.op = VL_FOP_SYMLINK, .name = "s",
                           .name2 = e->target};
    assert_int_equal(raw_call(e, &ra), -ENAMETOOLONG);
    ra = (struct raw_args){.op = VL_FOP_SETXATTR, .name = "",
                           .name2 = key};
    assert_int_equal(raw_call(e, &ra), -ERANGE);
    assert_int_equal(leaf_fops(), 0);
    /* A record cut inside the name is garbage, not a long name. */
    ra = (struct raw_args){.op = VL_FOP_LOOKUP, .is_cut = true};
    assert_int_equal(raw_call(e, &ra), -EPROTO);
    assert_int_equal(leaf_fops(), 0);
    /* The same peer's 255-byte name reaches the leaf. */
    ra = (struct raw_args){.op = VL_FOP_LOOKUP, .name = e->name255};
    assert_int_equal(raw_call(e, &ra), -ENOENT);
    assert_int_equal(leaf_fops(), 1);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_client_entry_names, nm_setup,
                                        nm_teardown),
        cmocka_unit_test_setup_teardown(test_client_target_and_xattr_names,
                                        nm_setup, nm_teardown),
        cmocka_unit_test_setup_teardown(test_server_names_over_bound,
                                        nm_setup, nm_teardown),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
